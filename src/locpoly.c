/* locpoly.c: local-polynomial regression at a point with robust
 * bias-corrected inference and the MSE-optimal (direct plug-in) bandwidth,
 * as nprobust's lprobust() and lpbwselect(bwselect = "mse-dpi") with
 * nearest-neighbour residuals (vce = "nn"), for did_had() and later
 * estimators. Design matrices hold raw powers of (x - c); Gram matrices are
 * inverted through their Cholesky factors. x is sorted (ascending) by the
 * caller, with dups[i] (size of x[i]'s tie run) and dupsid[i] (1-based place
 * within it). Nothing here knows R except C_lp_fit at the bottom. */
#include "diffdiff.h"

/* kernels: 0 Epanechnikov, 1 triangular, 2 uniform, 3 Gaussian (shared
 * with rd.c) */
double lp_K(double u, int kern) {
  double a = fabs(u);
  switch (kern) {
  case 0: return a <= 1 ? 0.75 * (1 - u * u) : 0;
  case 1: return a <= 1 ? 1 - a : 0;
  case 2: return a <= 1 ? 0.5 : 0;
  default: return exp(-0.5 * u * u) / sqrt(2 * M_PI);
  }
}

/* G <- G^{-1} (k x k, symmetric positive definite) through its Cholesky
 * factor; work: k * k + k doubles. Returns 0 if G is not positive definite. */
int lp_inv(int k, double *G, double *work) {
  double *L = work, *e = work + k * k;
  memcpy(L, G, sizeof(double) * k * k);
  if (!dd_chol_lower(k, L)) return 0;
  for (int c = 0; c < k; c++) {
    for (int a = 0; a < k; a++) e[a] = a == c ? 1.0 : 0.0;
    dd_chol_solve(k, L, e);
    for (int a = 0; a < k; a++) G[a + c * k] = e[a];
  }
  return 1;
}

/* nearest-neighbour residuals over the window idx[0..n-1] (increasing
 * positions in the sorted sample): each point against the mean of its
 * `matches` nearest neighbours, whole tie runs included, scaled by
 * sqrt(J / (J + 1)). tolf: distances to the next run on the left and on the
 * right within tolf * (the larger) count as equal (both runs join): 0 for
 * nprobust's rule, sqrt(DBL_EPSILON) for rdrobust 4.1's (shared with rd.c) */
void lp_nnres(const double *x, const double *y, const int *dups, const int *dupsid, const int *idx, int n,
              int matches, double tolf, double *res) {
  for (int pos = 1; pos <= n; pos++) {          /* 1-based, as the rule is stated */
#define X_(p) x[idx[(p) - 1]]
#define D_(p) dups[idx[(p) - 1]]
    int rpos = D_(pos) - dupsid[idx[pos - 1]], lpos = dupsid[idx[pos - 1]] - 1;
    int need = matches < n - 1 ? matches : n - 1;
    while (lpos + rpos < need) {
      if (pos - lpos - 1 <= 0) rpos += D_(pos + rpos + 1);
      else if (pos + rpos + 1 > n) lpos += D_(pos - lpos - 1);
      else {
        double dl = X_(pos) - X_(pos - lpos - 1), dr = X_(pos + rpos + 1) - X_(pos);
        double tol = (dl > dr ? dl : dr) * tolf;
        if (dl - dr > tol) rpos += D_(pos + rpos + 1);
        else if (dr - dl > tol) lpos += D_(pos - lpos - 1);
        else { rpos += D_(pos + rpos + 1); lpos += D_(pos - lpos - 1); }
      }
    }
    int lo = pos - lpos, hi = pos + rpos < n ? pos + rpos : n;
    double s = 0;
    for (int j = lo; j <= hi; j++) s += y[idx[j - 1]];
    int Ji = hi - lo;
    double yp = y[idx[pos - 1]];
    res[pos - 1] = sqrt((double) Ji / (Ji + 1)) * (yp - (s - yp) / Ji);
#undef X_
#undef D_
  }
}

typedef struct {
  int N, kern, matches;
  double c;
  const double *x, *y;
  const int *dups, *dupsid;
  int *idx;                    /* N ints of scratch: the window */
  double *res;                 /* N doubles of scratch */
  double *work;                /* scratch for the small matrices */
} lp_data;

/* the window of kernel weight > 0 at bandwidth h; returns its size */
static int lp_window(lp_data *d, double h) {
  int n = 0;
  for (int i = 0; i < d->N; i++) if (lp_K((d->x[i] - d->c) / h, d->kern) > 0) d->idx[n++] = i;
  return n;
}

/* sum_i w_i r_i r_i' (r = powers 0..o of x - c) over the window; w from
 * kernel weights at h, divided by h when `scaled` */
static void lp_gram(lp_data *d, int n, int o, double h, int scaled, double *G) {
  int k = o + 1;
  for (int a = 0; a < k * k; a++) G[a] = 0;
  for (int r = 0; r < n; r++) {
    int i = d->idx[r];
    double z = d->x[i] - d->c, w = lp_K(z / h, d->kern) / (scaled ? h : 1);
    double pa = 1;
    for (int a = 0; a < k; a++, pa *= z) {
      double pb = 1;
      for (int b = 0; b < k; b++, pb *= z) G[a + b * k] += w * pa * pb;
    }
  }
}

/* beta = G^{-1} sum_i w_i r_i y_i (G^{-1} given) */
static void lp_beta(lp_data *d, int n, int o, double h, int scaled, const double *Ginv, double *beta) {
  int k = o + 1;
  double t[16];
  for (int a = 0; a < k; a++) t[a] = 0;
  for (int r = 0; r < n; r++) {
    int i = d->idx[r];
    double z = d->x[i] - d->c, w = lp_K(z / h, d->kern) / (scaled ? h : 1), pa = 1;
    for (int a = 0; a < k; a++, pa *= z) t[a] += w * pa * d->y[i];
  }
  for (int a = 0; a < k; a++) { double s = 0; for (int b = 0; b < k; b++) s += Ginv[a + b * k] * t[b]; beta[a] = s; }
}

/* [Ginv (sum_i res_i^2 w_i^2 r_i r_i') Ginv]_{j,j} */
static double lp_sandwich(lp_data *d, int n, int o, double h, int scaled, const double *Ginv, int j) {
  int k = o + 1;
  double g[16];
  /* (Ginv r_i)_j = sum_b Ginv[j, b] r_ib: the quadratic form's element is sum_i res^2 w^2 (g' r_i)^2 */
  for (int b = 0; b < k; b++) g[b] = Ginv[j + b * k];
  double s = 0;
  for (int r = 0; r < n; r++) {
    int i = d->idx[r];
    double z = d->x[i] - d->c, w = lp_K(z / h, d->kern) / (scaled ? h : 1), pa = 1, gr = 0;
    for (int a = 0; a < k; a++, pa *= z) gr += g[a] * pa;
    s += d->res[r] * d->res[r] * w * w * gr * gr;
  }
  return s;
}

/* nprobust's pilot step lprobust.bw: the variance and bias constants of an
 * order-o fit for derivative nu at h.V, the bias from fits of orders o.B
 * (at h.B1) and o.B + 1 (at h.B2), the regularisation (scale), and the
 * implied bandwidth; out: V, B1, bw */
static int lp_bw_step(lp_data *d, int o, int nu, int oB, double hV, double hB1, double hB2, double scale,
                      double *out) {
  int N = d->N;
  double *G = d->work, *W = d->work + 256;
  /* variance at h.V */
  int n = lp_window(d, hV);
  if (n < o + 1) return 0;
  int k = o + 1;
  lp_gram(d, n, o, hV, 1, G);
  if (!lp_inv(k, G, W)) return 0;
  lp_nnres(d->x, d->y, d->dups, d->dupsid, d->idx, n, d->matches, 0, d->res);
  double VV = lp_sandwich(d, n, o, hV, 1, G, nu);
  double v1[16];
  for (int a = 0; a < k; a++) v1[a] = 0;
  for (int r = 0; r < n; r++) {
    int i = d->idx[r];
    double z = d->x[i] - d->c, u = z / hV, w = lp_K(u, d->kern) / hV, pa = 1;
    double u1 = pow(u, o + 1);
    for (int a = 0; a < k; a++, pa *= z) v1[a] += w * pa * u1;
  }
  double bc1 = 0;
  for (int b = 0; b < k; b++) bc1 += G[nu + b * k] * v1[b];
  bc1 *= pow(hV, nu);
  /* bias fit 1 at h.B1 (weights not divided by h) */
  int n1 = lp_window(d, hB1), k1 = oB + 1;
  if (n1 < k1) return 0;
  lp_gram(d, n1, oB, hB1, 0, G);
  if (!lp_inv(k1, G, W)) return 0;
  double b1[16];
  lp_beta(d, n1, oB, hB1, 0, G, b1);
  double Reg = 0;
  if (scale > 0) {
    lp_nnres(d->x, d->y, d->dups, d->dupsid, d->idx, n1, d->matches, 0, d->res);
    double VB = lp_sandwich(d, n1, oB, hB1, 0, G, o + 1);
    Reg = 3 * bc1 * bc1 * VB;
  }
  double B1 = bc1 * b1[o + 1];
  double V = N * pow(hV, 2 * nu + 1) * VV;
  double rB = 2 * (o + 1 - nu), rV = 2 * nu + 1;
  out[0] = V; out[1] = B1;
  out[2] = pow(rV * V / (N * rB * (B1 * B1 + scale * Reg)), 1.0 / (2 * o + 3));
  out[3] = rV * V; out[4] = rB * B1 * B1;          /* the imse selectors' V.h and B.h */
  (void) hB2;   /* the second bias fit enters only the even-order case */
  return 1;
}

static double lp_clamp(double v, double lo, double hi) { return v > hi ? hi : (v < lo ? lo : v); }

/* lpbwselect.mse.dpi for p = 1, deriv = 0, q = 2 (the odd case): h and b.
 * cbw: the rule-of-thumb pilot; bwmin, bwmax, range as nprobust */
static int lp_mse_dpi(lp_data *d, double cbw, double bwmin, double bwmax, double range, double *h, double *b,
                      double *VB) {
  double s[5];
  if (!lp_bw_step(d, 3, 3, 4, cbw, range, range, 0, s)) return 0;
  double mp2 = lp_clamp(s[2], bwmin, bwmax);
  if (!lp_bw_step(d, 2, 2, 3, cbw, mp2, mp2, 1, s)) return 0;
  *b = lp_clamp(s[2], bwmin, bwmax);
  if (!lp_bw_step(d, 1, 0, 2, cbw, *b, mp2, 1, s)) return 0;
  *h = lp_clamp(s[2], bwmin, bwmax);
  VB[0] = s[3]; VB[1] = s[4];
  return 1;
}

/* the final fit (p = 1, q = 2, deriv 0, h = b): tau.us, tau.bc, se.us,
 * se.rb and the window size */
/* psi (length N, NULL: not wanted): each observation's term of the robust
 * bias-corrected intercept's variance, (e1' invG.p Q_i) res_i, so that
 * se.rb^2 = sum psi^2 (0 outside the window): the influence function of
 * tau.bc given x, used for covariances across fits on the same units */
static int lp_final(lp_data *d, double h, double *out, double *psi) {
  const int p = 1, q = 2, kp = 2, kq = 3;
  int n = lp_window(d, h);
  if (n < kq) return 0;
  double *Gq = d->work, *Gp = d->work + 16, *W = d->work + 256;
  lp_gram(d, n, q, h, 1, Gq);
  lp_gram(d, n, p, h, 1, Gp);
  if (!lp_inv(kq, Gq, W) || !lp_inv(kp, Gp, W)) return 0;
  double L[2] = {0, 0};
  for (int r = 0; r < n; r++) {
    int i = d->idx[r];
    double z = d->x[i] - d->c, u = z / h, w = lp_K(u, d->kern) / h, up = u * u;
    L[0] += w * up; L[1] += w * z * up;
  }
  lp_nnres(d->x, d->y, d->dups, d->dupsid, d->idx, n, d->matches, 0, d->res);
  double tp[2] = {0, 0}, tb[2] = {0, 0}, Mp[4] = {0, 0, 0, 0}, Mb[4] = {0, 0, 0, 0};
  double hp = pow(h, p + 1);
  if (psi) for (int i = 0; i < d->N; i++) psi[i] = 0;
  for (int r = 0; r < n; r++) {
    int i = d->idx[r];
    double z = d->x[i] - d->c, w = lp_K(z / h, d->kern) / h;
    double rq[3] = {1, z, z * z};
    double e = 0;                                   /* r_q' invG.q e_{p+2} */
    for (int a = 0; a < kq; a++) e += rq[a] * Gq[a + (p + 1) * kq];
    double Qi[2] = {w * 1 - hp * w * e * L[0], w * z - hp * w * e * L[1]};
    double rp[2] = {w * 1, w * z}, y = d->y[i], r2 = d->res[r] * d->res[r];
    for (int a = 0; a < kp; a++) {
      tp[a] += rp[a] * y; tb[a] += Qi[a] * y;
      for (int c = 0; c < kp; c++) { Mp[a + c * kp] += r2 * rp[a] * rp[c]; Mb[a + c * kp] += r2 * Qi[a] * Qi[c]; }
    }
    if (psi) psi[i] = (Gp[0] * Qi[0] + Gp[2] * Qi[1]) * d->res[r];
  }
  double bp0 = Gp[0] * tp[0] + Gp[2] * tp[1], bb0 = Gp[0] * tb[0] + Gp[2] * tb[1];
  /* [Gp M Gp]_{11} = g' M g with g the first row of Gp */
  double g0 = Gp[0], g1 = Gp[2];
  double vp = g0 * g0 * Mp[0] + 2 * g0 * g1 * Mp[2] + g1 * g1 * Mp[3];
  double vb = g0 * g0 * Mb[0] + 2 * g0 * g1 * Mb[2] + g1 * g1 * Mb[3];
  out[0] = bp0; out[1] = bb0; out[2] = sqrt(vp); out[3] = sqrt(vb); out[4] = n;
  return 1;
}

/* x sorted ascending (no NaN), and dups, dupsid describing its tie runs:
 * lp_nnres walks the window by whole runs using them as offsets */
static void lp_chk_sorted(SEXP x, SEXP dups, SEXP dupsid, const char *fn) {
  const int N = LENGTH(x);
  const double *xv = REAL(x);
  const int *du = INTEGER(dups), *di = INTEGER(dupsid);
  for (int i = 0; i < N; i++) {
    if (ISNAN(xv[i])) error("internal error in %s: `x` has NaN at position %d; please report", fn, i + 1);
    if (i > 0 && xv[i] < xv[i - 1]) error("internal error in %s: `x` is not sorted at position %d; please report", fn, i + 1);
  }
  for (int s = 0, e; s < N; s = e) {
    for (e = s + 1; e < N && xv[e] == xv[s]; e++) ;
    for (int j = s; j < e; j++)
      if (du[j] != e - s || di[j] != j - s + 1)
        error("internal error in %s: `dups` / `dupsid` do not describe the ties of `x` at position %d; please report",
              fn, j + 1);
  }
}

/* x sorted ascending, y along; dups, dupsid (integer); c the evaluation
 * point, kernel its code (0 epa, 1 tri, 2 uni, 3 gau), matches, h (<= 0:
 * mse-dpi), cbw, bwmin, bwmax, range (the selector's bounds), and stop: 1
 * to stop after the bandwidth (2: also return psi of lp_final, in the sorted
 * order, after the 9 numbers). Returns c(h, b, N, tau.us, tau.bc, se.us,
 * se.rb, V.h, B.h) (NA when a Gram matrix is singular; V.h, B.h: the
 * mse-dpi selector's variance and squared-bias constants at c, for the imse
 * selector). The doubles are checked for type and length only: the kernel
 * answers NA where a bound is NA, as it always has. */
SEXP C_lp_fit(SEXP x, SEXP y, SEXP dups, SEXP dupsid, SEXP c_, SEXP kernel_, SEXP matches_, SEXP h_, SEXP cbw_,
              SEXP bwmin_, SEXP bwmax_, SEXP range_, SEXP stop_) {
  const char *fn = "C_lp_fit";
  dd_chk_type(x, REALSXP, 0, fn, "x");
  const int N = LENGTH(x);
  dd_chk_vec(y, REALSXP, N, 0, fn, "y");
  dd_chk_vec(dups, INTSXP, N, 0, fn, "dups");
  dd_chk_vec(dupsid, INTSXP, N, 0, fn, "dupsid");
  dd_chk_vec(c_, REALSXP, 1, 0, fn, "c");
  dd_chk_vec(h_, REALSXP, 1, 0, fn, "h");
  dd_chk_vec(cbw_, REALSXP, 1, 0, fn, "cbw");
  dd_chk_vec(bwmin_, REALSXP, 1, 0, fn, "bwmin");
  dd_chk_vec(bwmax_, REALSXP, 1, 0, fn, "bwmax");
  dd_chk_vec(range_, REALSXP, 1, 0, fn, "range");
  lp_chk_sorted(x, dups, dupsid, fn);
  const int kernel = dd_chk_int(kernel_, 0, 3, fn, "kernel");
  const int matches = dd_chk_int(matches_, 1, DD_INT_MAX, fn, "matches");
  const int stop = dd_chk_int(stop_, 0, 2, fn, "stop");
  const double c = REAL(c_)[0], bwmin = REAL(bwmin_)[0];
  lp_data d = { N, kernel, matches, c, REAL(x), REAL(y), INTEGER(dups), INTEGER(dupsid),
                (int *) R_alloc(N, sizeof(int)), (double *) R_alloc(N, sizeof(double)),
                (double *) R_alloc(512, sizeof(double)) };
  int want_psi = stop == 2;
  SEXP ans = PROTECT(allocVector(REALSXP, 9 + (want_psi ? N : 0)));
  double *a = REAL(ans);
  for (int j = 0; j < 9 + (want_psi ? N : 0); j++) a[j] = NA_REAL;
  double h = REAL(h_)[0], b = h, VB[2] = {NA_REAL, NA_REAL};
  int ok = 1;
  if (!(h > 0)) ok = lp_mse_dpi(&d, REAL(cbw_)[0], bwmin, REAL(bwmax_)[0], REAL(range_)[0], &h, &b, VB);
  a[7] = VB[0]; a[8] = VB[1];
  if (ok && stop == 1) { a[0] = h; a[1] = b; }
  else if (ok) {
    /* lprobust: b = h (rho = 1), both at least the bwcheck-th distance */
    h = h > bwmin ? h : bwmin;
    double f[5];
    a[0] = h; a[1] = h;
    if (lp_final(&d, h, f, want_psi ? a + 9 : NULL)) { a[2] = f[4]; a[3] = f[0]; a[4] = f[1]; a[5] = f[2]; a[6] = f[3]; }
  }
  UNPROTECT(1);
  return ans;
}

/* the coefficients of an order-o local polynomial at c with bandwidth h
 * (weights K((x - c) / h) / h over the window), as nprobust's fits; kernel
 * its code, order o in [0, 10]. NA if the Gram matrix is singular. */
SEXP C_lp_poly(SEXP x, SEXP y, SEXP c_, SEXP kernel_, SEXP h_, SEXP order_) {
  const char *fn = "C_lp_poly";
  dd_chk_type(x, REALSXP, 0, fn, "x");
  const int N = LENGTH(x);
  dd_chk_vec(y, REALSXP, N, 0, fn, "y");
  dd_chk_vec(c_, REALSXP, 1, 0, fn, "c");
  dd_chk_vec(h_, REALSXP, 1, 0, fn, "h");
  const int kernel = dd_chk_int(kernel_, 0, 3, fn, "kernel");
  const int o = dd_chk_int(order_, 0, 10, fn, "order"), k = o + 1;
  const double h = REAL(h_)[0];
  lp_data d = { N, kernel, 3, REAL(c_)[0], REAL(x), REAL(y), NULL, NULL,
                (int *) R_alloc(N, sizeof(int)), NULL, (double *) R_alloc(512, sizeof(double)) };
  SEXP ans = PROTECT(allocVector(REALSXP, k));
  double *b = REAL(ans);
  for (int j = 0; j < k; j++) b[j] = NA_REAL;
  int n = lp_window(&d, h);
  double *G = d.work, *W = d.work + 256;
  if (n >= k) {
    lp_gram(&d, n, o, h, 1, G);
    if (lp_inv(k, G, W)) lp_beta(&d, n, o, h, 1, G, b);
  }
  UNPROTECT(1);
  return ans;
}
