/* rd_plot.c: the passes over the data of rd_plot() (regression-discontinuity
 * plots with data-driven bins, Calonico, Cattaneo and Titiunik 2015). The
 * running variable arrives sorted (stable order, ties in input order) and
 * split into one side: x, y (and fixed weights fw or NULL) of length n.
 *
 * rp_sums(): one pass giving
 *   - the moments of the global degree-4 fit of y and y^2 on powers of
 *     u = (x - a) / s (a, s centre and half-width of the side: the fit is
 *     the one on raw x, in coordinates where its Gram matrix is well
 *     conditioned): sum u^j (j = 0..8), sum u^j y, sum u^j y^2 (j = 0..4);
 *   - the moments of the order-p kernel-weighted fit drawn on the plot, on
 *     powers of v = (x - c) / h with weights K(v) * fw: sum w v^j
 *     (j = 0..2p), sum w v^j y (j = 0..p), and the count with K(v) > 0;
 *   - the spacings sums sum dx dy^2 and sum dy^2 over consecutive sorted x.
 * rp_spread(): with the degree-k fits of y (g1) and y^2 (g2) in u, the sums
 *   sum mu1(x_i)^2, sum dx sigma2(xbar_i), sum dx^2 mu1(xbar_i)^2 and
 *   sum sigma2(x_i), sigma2 = mu2 - mu0^2 (negative values replaced by the
 *   side's variance of y), xbar_i the midpoints of consecutive sorted x.
 * rp_bins(): the count, means of x and y and the sd of y of each run of
 *   equal bin codes (the data being sorted, a bin is one run).
 * Sums are accumulated in double within blocks and in long double across them. Nothing here knows R except the C_*
 * entry points at the bottom. */
#include "diffdiff.h"

/* kernel weights without the constant 1/h (it cancels in the fits):
 * 0 Epanechnikov, 1 triangular, 2 uniform; |v| <= 1 is inside */
static double rp_K(double v, int kern) {
  double a = fabs(v);
  if (a > 1) return 0.0;
  switch (kern) {
  case 0: return 0.75 * (1 - v * v);
  case 1: return 1 - a;
  default: return 0.5;
  }
}

#define RP_NS(p) (3 * (p) + 24)

/* sums in double over blocks of RP_BLOCK observations, the blocks added in
 * long double (as accurate as long double throughout here, and faster) */
#define RP_BLOCK 512
#define RP_NA 84               /* 3p + 23 sums for p <= 20 */

static void rp_sums(const double *x, const double *y, const double *fw, R_xlen_t n, double a, double s,
                    double c, double h, int kern, int p, double *out) {
  /* acc: S[0..8], T1[9..13], T2[14..18], G[19..19+2p], g[20+2p..20+3p], dxy, dyy */
  long double tot[RP_NA] = {0};
  double acc[RP_NA];
  const int iG = 19, ig = 20 + 2 * p, ix = 21 + 3 * p, na = 23 + 3 * p;
  R_xlen_t nh = 0;
  for (R_xlen_t i0 = 0; i0 < n; i0 += RP_BLOCK) {
    const R_xlen_t i1 = i0 + RP_BLOCK < n ? i0 + RP_BLOCK : n;
    memset(acc, 0, sizeof acc);
    for (R_xlen_t i = i0; i < i1; i++) {
      const double yi = y[i], y2 = yi * yi, u = (x[i] - a) / s;
      double pw = 1.0;
      for (int j = 0; j <= 4; j++) { acc[j] += pw; acc[9 + j] += pw * yi; acc[14 + j] += pw * y2; pw *= u; }
      for (int j = 5; j <= 8; j++) { acc[j] += pw; pw *= u; }
      const double v = (x[i] - c) / h, k = rp_K(v, kern);
      if (k > 0) {
        nh++;
        const double w = fw ? k * fw[i] : k;
        if (w != 0) {
          double q = w;
          for (int j = 0; j <= 2 * p; j++) {
            acc[iG + j] += q;
            if (j <= p) acc[ig + j] += q * yi;
            q *= v;
          }
        }
      }
      if (i + 1 < n) {
        const double dx = x[i + 1] - x[i], dy = y[i + 1] - yi;
        acc[ix] += dx * dy * dy;
        acc[ix + 1] += dy * dy;
      }
    }
    for (int j = 0; j < na; j++) tot[j] += acc[j];
  }
  long double *S = tot, *T1 = tot + 9, *T2 = tot + 14, *G = tot + iG, *g = tot + ig, dxy = tot[ix],
              dyy = tot[ix + 1];
  double *o = out;
  for (int j = 0; j <= 8; j++) *o++ = (double) S[j];
  for (int j = 0; j <= 4; j++) *o++ = (double) T1[j];
  for (int j = 0; j <= 4; j++) *o++ = (double) T2[j];
  for (int j = 0; j <= 2 * p; j++) *o++ = (double) G[j];
  for (int j = 0; j <= p; j++) *o++ = (double) g[j];
  *o++ = (double) nh;
  *o++ = (double) dxy;
  *o++ = (double) dyy;
}

/* the polynomial sum_j b[j] u^j (value) and its derivative in u (*d) */
static double rp_poly(const double *b, int k, double u, double *d) {
  double f = b[k], df = 0.0;
  for (int j = k - 1; j >= 0; j--) { df = df * u + f; f = f * u + b[j]; }
  if (d) *d = df;
  return f;
}

static void rp_spread(const double *x, R_xlen_t n, double a, double s, int k, const double *g1,
                      const double *g2, double vary, double *out) {
  long double m1 = 0, dvs = 0, dm1 = 0, vs = 0;
  for (R_xlen_t i = 0; i < n; i++) {
    double d, u = (x[i] - a) / s;
    double mu0 = rp_poly(g1, k, u, &d), mu2 = rp_poly(g2, k, u, NULL), mu1 = d / s;
    double s2 = mu2 - mu0 * mu0;
    m1 += mu1 * mu1;
    vs += s2 < 0 ? vary : s2;
    if (i + 1 < n) {
      const double dx = x[i + 1] - x[i], xb = (x[i + 1] + x[i]) / 2;
      u = (xb - a) / s;
      mu0 = rp_poly(g1, k, u, &d); mu2 = rp_poly(g2, k, u, NULL); mu1 = d / s;
      s2 = mu2 - mu0 * mu0;
      dvs += dx * (s2 < 0 ? vary : s2);
      dm1 += dx * dx * mu1 * mu1;
    }
  }
  out[0] = (double) m1; out[1] = (double) dvs; out[2] = (double) dm1; out[3] = (double) vs;
}

/* runs of equal codes in bin[0..n): returns the number of runs, filling
 * code, count, mean x, mean y, sd y (0 for a single observation); means as
 * R's mean() (a long double sum, then the mean of the deviations added) */
static R_xlen_t rp_bins(const double *x, const double *y, const int *bin, R_xlen_t n, int *code, int *cnt,
                        double *mx, double *my, double *sd) {
  R_xlen_t nb = 0, i = 0;
  while (i < n) {
    R_xlen_t e = i;
    while (e < n && bin[e] == bin[i]) e++;
    const R_xlen_t m = e - i;
    long double sx = 0, sy = 0;
    for (R_xlen_t t = i; t < e; t++) { sx += x[t]; sy += y[t]; }
    double ax = (double) (sx / m), ay = (double) (sy / m);
    long double cx = 0, cy = 0;
    for (R_xlen_t t = i; t < e; t++) { cx += x[t] - ax; cy += y[t] - ay; }
    ax += (double) (cx / m); ay += (double) (cy / m);
    long double ss = 0;
    for (R_xlen_t t = i; t < e; t++) { const double r = y[t] - ay; ss += r * r; }
    code[nb] = bin[i]; cnt[nb] = (int) m; mx[nb] = ax; my[nb] = ay;
    sd[nb] = m > 1 ? sqrt((double) (ss / (m - 1))) : 0.0;
    nb++;
    i = e;
  }
  return nb;
}

/* x, y sorted, the left side first (nl values); fw NULL or weights;
 * par = c(c, h_l, h_r, a_l, s_l, a_r, s_r); kernel code; p order in [0, 20].
 * Returns a 3p + 24 by 2 matrix of sums (left, right), layout as rp_sums() */
SEXP C_rd_plot_sums(SEXP x, SEXP y, SEXP fw, SEXP nl_, SEXP par_, SEXP kernel_, SEXP p_) {
  const char *fn = "C_rd_plot_sums";
  dd_chk_type(x, REALSXP, 0, fn, "x");
  const R_xlen_t N = XLENGTH(x);
  dd_chk_vec(y, REALSXP, N, 0, fn, "y");
  dd_chk_vec(fw, REALSXP, N, 1, fn, "fw");
  dd_chk_vec(par_, REALSXP, 7, 0, fn, "par");
  const int kern = dd_chk_int(kernel_, 0, 2, fn, "kernel");
  const int p = dd_chk_int(p_, 0, 20, fn, "p");
  const double nld = dd_chk_num(nl_, 0, fn, "nl");
  if (nld < 1 || nld > (double) N - 1 || nld != floor(nld)) dd_bad(fn, "nl", "must be in [1, length(x) - 1]");
  const R_xlen_t nl = (R_xlen_t) nld;
  const double *par = REAL(par_), *w = isNull(fw) ? NULL : REAL(fw);
  SEXP ans = PROTECT(allocMatrix(REALSXP, RP_NS(p), 2));
  double *o = REAL(ans);
  rp_sums(REAL(x), REAL(y), w, nl, par[3], par[4], par[0], par[1], kern, p, o);
  rp_sums(REAL(x) + nl, REAL(y) + nl, w ? w + nl : NULL, N - nl, par[5], par[6], par[0], par[2], kern, p,
          o + RP_NS(p));
  UNPROTECT(1);
  return ans;
}

/* x sorted, left side first (nl values); fits: list(left, right), each
 * list(a, s, g1, g2, vary) with g1, g2 of length k + 1 (k in [1, 4]).
 * Returns a 4 by 2 matrix (rows as rp_spread's out) */
SEXP C_rd_plot_spread(SEXP x, SEXP nl_, SEXP fits) {
  const char *fn = "C_rd_plot_spread";
  dd_chk_type(x, REALSXP, 0, fn, "x");
  const R_xlen_t N = XLENGTH(x);
  const double nld = dd_chk_num(nl_, 0, fn, "nl");
  if (nld < 1 || nld > (double) N - 1 || nld != floor(nld)) dd_bad(fn, "nl", "must be in [1, length(x) - 1]");
  const R_xlen_t nl = (R_xlen_t) nld;
  dd_chk_list(fits, 2, fn, "fits");
  SEXP ans = PROTECT(allocMatrix(REALSXP, 4, 2));
  for (int side = 0; side < 2; side++) {
    SEXP f = VECTOR_ELT(fits, side);
    dd_chk_list(f, 5, fn, "fits[[side]]");
    SEXP g1 = VECTOR_ELT(f, 2), g2 = VECTOR_ELT(f, 3);
    dd_chk_type(g1, REALSXP, 0, fn, "g1");
    const int k = LENGTH(g1) - 1;
    if (k < 1 || k > 4) dd_bad(fn, "g1", "must have 2 to 5 coefficients");
    dd_chk_vec(g2, REALSXP, k + 1, 0, fn, "g2");
    const double a = dd_chk_num(VECTOR_ELT(f, 0), 0, fn, "a"), s = dd_chk_pos(VECTOR_ELT(f, 1), fn, "s");
    const double vary = dd_chk_num(VECTOR_ELT(f, 4), 0, fn, "vary");
    rp_spread(REAL(x) + (side ? nl : 0), side ? N - nl : nl, a, s, k, REAL(g1), REAL(g2), vary,
              REAL(ans) + 4 * side);
  }
  UNPROTECT(1);
  return ans;
}

/* x, y sorted, bin their codes (nondecreasing). Returns
 * list(bin, n, mean_x, mean_y, sd_y), one element per bin */
SEXP C_rd_plot_bins(SEXP x, SEXP y, SEXP bin) {
  const char *fn = "C_rd_plot_bins";
  dd_chk_type(x, REALSXP, 0, fn, "x");
  const R_xlen_t N = XLENGTH(x);
  dd_chk_vec(y, REALSXP, N, 0, fn, "y");
  dd_chk_vec(bin, INTSXP, N, 0, fn, "bin");
  const int *b = INTEGER(bin);
  R_xlen_t nb = N > 0;
  for (R_xlen_t i = 1; i < N; i++) {
    if (b[i] < b[i - 1] || b[i] == NA_INTEGER) dd_bad(fn, "bin", "must be nondecreasing and not NA");
    nb += b[i] != b[i - 1];
  }
  if (N > 0 && b[0] == NA_INTEGER) dd_bad(fn, "bin", "must be nondecreasing and not NA");
  SEXP v[5];
  v[0] = PROTECT(allocVector(INTSXP, nb)); v[1] = PROTECT(allocVector(INTSXP, nb));
  v[2] = PROTECT(allocVector(REALSXP, nb)); v[3] = PROTECT(allocVector(REALSXP, nb));
  v[4] = PROTECT(allocVector(REALSXP, nb));
  rp_bins(REAL(x), REAL(y), b, N, INTEGER(v[0]), INTEGER(v[1]), REAL(v[2]), REAL(v[3]), REAL(v[4]));
  const char *names[] = {"bin", "n", "mean_x", "mean_y", "sd_y"};
  SEXP ans = dd_named_list(5, names, v);
  UNPROTECT(5);
  return ans;
}
