/* rd_density.c: the local-polynomial density fit of Cattaneo, Jansson and Ma
 * (2020) on one window of a sorted sample, for rd_density(). The outcome is
 * the empirical distribution function; the regressors are powers of
 * u = (x - t) / h, scaled by the bandwidth of x's side of t. One pass gives
 * the weighted Gram matrix S = B'WB and B'Wy; a second, backward pass gives
 * the jackknife-type middle matrix M = sum_i L_i L_i' with
 * L_i = (sum of w_j B_j over the later rows j) / (N - 1), where, with mass
 * points, every member of a run of equal x takes the L of the run's first
 * member. The coefficients, their rescaling and the variances are computed
 * in R from these small matrices. Nothing here knows R except
 * C_rd_density_fit at the bottom. */
#include "diffdiff.h"

/* designs: 0 separate polynomials left and right of t, interleaved
 * (left 1, right 1, left u, right u, ...); 1 a common intercept, separate
 * slopes (left u, right u) and common higher powers; 2 one polynomial */
static int rdd_ncol(int design, int P) {
  return design == 0 ? 2 * P + 2 : design == 1 ? P + 2 : P + 1;
}

/* kernel weight of x - t = v (0 Epanechnikov, 1 triangular, 2 uniform, the
 * codes of the R layer), and the row's regressors into b[0..k-1] */
static double rdd_row(double v, double hl, double hr, int P, int kern, int design, double *b) {
  const int left = v < 0;
  const double h = left ? hl : hr, u = v / h;
  double w;
  switch (kern) {
  case 0: w = 0.75 * (1 - u * u) / h; break;
  case 1: w = (left ? 1 + u : 1 - u) / h; break;
  default: w = 0.5 / h;
  }
  if (design == 0) {
    double pw = 1;
    for (int j = 0; j <= P; j++, pw *= u) {
      b[2 * j] = left ? pw : 0;
      b[2 * j + 1] = left ? 0 : pw;
    }
  } else if (design == 1) {
    b[0] = 1;
    b[1] = left ? u : 0;
    b[2] = left ? 0 : u;
    double pw = u;
    for (int j = 2; j <= P; j++) { pw *= u; b[j + 1] = pw; }
  } else {
    double pw = 1;
    for (int j = 0; j <= P; j++, pw *= u) b[j] = pw;
  }
  return w;
}

/* column c of the design: its power of u (exp) and the sides it lives on
 * (side: 1 left only, 2 right only, 3 both) */
static void rdd_col(int design, int c, int *exp, int *side) {
  if (design == 0) { *exp = c / 2; *side = c % 2 ? 2 : 1; }
  else if (design == 1) {
    if (c == 0) { *exp = 0; *side = 3; }
    else if (c <= 2) { *exp = 1; *side = c; }
    else { *exp = c - 1; *side = 3; }
  } else { *exp = c; *side = 3; }
}

/* The jackknife middle matrix of the unrestricted design (separate
 * polynomials left and right of t), by blocks: at a row right of t, L has
 * right-hand components only; at a row left of t, its right-hand components
 * are the totals Tr over the right-hand rows. So M's left-left block sums
 * Ll Ll', its left-right block is (sum of Ll) Tr', and its right-right block
 * sums Lr Lr' plus (left rows) Tr Tr'. work: 2 (P + 1)^2 + 4 (P + 1) doubles. */
static void rdd_jack_sides(const double *x, int n, double t, double hl, double hr, int P, int kern, int mass,
                           double N, double *M, double *work) {
  const int q = P + 1, k = 2 * q;
  double *R = work, *L = R + q, *MLL = L + q, *MRR = MLL + q * q, *sumL = MRR + q * q, *Tr = sumL + q;
  memset(R, 0, sizeof(double) * q);
  memset(MLL, 0, sizeof(double) * q * q);
  memset(MRR, 0, sizeof(double) * q * q);
  memset(sumL, 0, sizeof(double) * q);
  double cnt = 0;
  int right = 1;
  for (int i = n - 1; i >= 0; ) {
    const int sd = x[i] - t >= 0;
    if (right && !sd) {                      /* the first row left of t: R holds the right-hand totals */
      right = 0;
      memcpy(Tr, R, sizeof(double) * q);
      memset(R, 0, sizeof(double) * q);
    }
    int a = i;
    if (mass) while (a > 0 && x[a - 1] == x[i]) a--;
    memcpy(L, R, sizeof(double) * q);
    for (int j = i; j >= a; j--) {
      const double v = x[j] - t, h = sd ? hr : hl, u = v / h;
      double w;
      switch (kern) {
      case 0: w = 0.75 * (1 - u * u) / h; break;
      case 1: w = (sd ? 1 - u : 1 + u) / h; break;
      default: w = 0.5 / h;
      }
      double pw = w;
      for (int e = 0; e < q; e++, pw *= u) {
        if (j > a) L[e] += pw;
        R[e] += pw;
      }
    }
    const double m = (double) (i - a + 1);
    double *B = sd ? MRR : MLL;
    for (int c = 0; c < q; c++) {
      const double lc = m * L[c];
      for (int r = c; r < q; r++) B[r + c * q] += lc * L[r];
    }
    if (!sd) { for (int c = 0; c < q; c++) sumL[c] += m * L[c]; cnt += m; }
    i = a - 1;
  }
  if (right) memcpy(Tr, R, sizeof(double) * q);   /* (no row left of t) */
  const double d2 = (N - 1) * (N - 1);
  for (int c = 0; c < q; c++)
    for (int r = c; r < q; r++) {
      const double ll = MLL[r + c * q] / d2, rr = (MRR[r + c * q] + cnt * Tr[c] * Tr[r]) / d2;
      M[2 * r + 2 * c * k] = M[2 * c + 2 * r * k] = ll;
      M[2 * r + 1 + (2 * c + 1) * k] = M[2 * c + 1 + (2 * r + 1) * k] = rr;
    }
  for (int c = 0; c < q; c++)
    for (int r = 0; r < q; r++)
      M[2 * c + (2 * r + 1) * k] = M[2 * r + 1 + 2 * c * k] = sumL[c] * Tr[r] / d2;
}

/* rows x[0..n-1] (sorted ascending) with outcome y: S (k x k, full), By
 * (k), and, if M != NULL, the jackknife middle matrix M (k x k, full). work:
 * 3k + 8P + 4 doubles. Every entry of S and By is a sum of w u^e (y) over
 * one side or both, so the pass over the rows accumulates those power sums
 * (2P + 1 per side) and the matrices are assembled from them. */
static void rdd_fit(const double *x, const double *y, int n, double t, double hl, double hr, int P, int kern,
                    int design, int mass, double N, double *S, double *By, double *M, double *work) {
  const int k = rdd_ncol(design, P), ne = 2 * P + 1;
  double *b = work, *R = work + k, *L = work + 2 * k;
  double *mw = work + 3 * k, *my = mw + 2 * ne;    /* [side][e]: sums of w u^e and of w u^e y */
  memset(mw, 0, sizeof(double) * 2 * ne);
  memset(my, 0, sizeof(double) * 2 * (P + 1));
  for (int i = 0; i < n; i++) {
    const double v = x[i] - t;
    const int sd = v < 0 ? 0 : 1;
    const double h = sd ? hr : hl, u = v / h;
    double w;
    switch (kern) {
    case 0: w = 0.75 * (1 - u * u) / h; break;
    case 1: w = (sd ? 1 - u : 1 + u) / h; break;
    default: w = 0.5 / h;
    }
    double *a = mw + sd * ne, *ay = my + sd * (P + 1), pw = w;
    const double yi = y[i];
    for (int e = 0; e <= P; e++, pw *= u) { a[e] += pw; ay[e] += pw * yi; }
    for (int e = P + 1; e < ne; e++, pw *= u) a[e] += pw;
  }
  for (int c = 0; c < k; c++) {
    int ec, sc;
    rdd_col(design, c, &ec, &sc);
    By[c] = (sc & 1 ? my[ec] : 0) + (sc & 2 ? my[P + 1 + ec] : 0);
    for (int r = c; r < k; r++) {
      int er, sr;
      rdd_col(design, r, &er, &sr);
      const int both = sc & sr;
      S[r + c * k] = S[c + r * k] = (both & 1 ? mw[ec + er] : 0) + (both & 2 ? mw[ne + ec + er] : 0);
    }
  }
  if (!M) return;
  if (design == 0) { rdd_jack_sides(x, n, t, hl, hr, P, kern, mass, N, M, work); return; }
  memset(M, 0, sizeof(double) * k * k);
  memset(R, 0, sizeof(double) * k);          /* sum of w B over the rows after the current run */
  const double den = N - 1;
  int i = n - 1;
  while (i >= 0) {
    int a = i;                               /* the run of rows with x equal to x[i] (one row without mass points) */
    if (mass) while (a > 0 && x[a - 1] == x[i]) a--;
    /* L of the run's first row: R plus the run's rows after it */
    for (int c = 0; c < k; c++) L[c] = R[c];
    for (int j = i; j >= a; j--) {
      const double w = rdd_row(x[j] - t, hl, hr, P, kern, design, b);
      for (int c = 0; c < k; c++) {
        if (j > a) L[c] += w * b[c];
        R[c] += w * b[c];
      }
    }
    const double m = (double) (i - a + 1);
    for (int c = 0; c < k; c++) {
      const double lc = m * L[c] / den / den;
      for (int r = c; r < k; r++) M[r + c * k] += lc * L[r];
    }
    i = a - 1;
  }
  for (int c = 0; c < k; c++)
    for (int a = c + 1; a < k; a++) M[c + a * k] = M[a + c * k];
}

/* x: the sorted sample (centred as the caller wants, double), y: its
 * empirical distribution function, win: c(first row (0-based), rows), h:
 * c(h_left, h_right), t: the point of estimation, spec: c(order, kernel,
 * design, jackknife, mass points), N: the sample size of the 1 / (N - 1).
 * Returns list(S, By, M) (M NULL without the jackknife). */
SEXP C_rd_density_fit(SEXP x, SEXP y, SEXP win, SEXP h, SEXP t, SEXP spec, SEXP N) {
  const char *fn = "C_rd_density_fit";
  dd_chk_type(x, REALSXP, 0, fn, "x");
  const R_xlen_t nx = XLENGTH(x);
  dd_chk_vec(y, REALSXP, nx, 0, fn, "y");
  dd_chk_vec(win, INTSXP, 2, 0, fn, "win");
  dd_chk_vec(h, REALSXP, 2, 0, fn, "h");
  dd_chk_vec(spec, INTSXP, 5, 0, fn, "spec");
  const double tt = dd_chk_num(t, 0, fn, "t");
  const double NN = dd_chk_num(N, 0, fn, "N");
  const int lo = INTEGER(win)[0], n = INTEGER(win)[1];
  if (lo < 0 || n < 0 || (R_xlen_t) lo + n > nx) dd_bad(fn, "win", "is outside x");
  const double hl = REAL(h)[0], hr = REAL(h)[1];
  if (!(hl > 0) || !(hr > 0) || !R_FINITE(hl) || !R_FINITE(hr)) dd_bad(fn, "h", "must be positive and finite");
  const int *sp = INTEGER(spec);
  const int P = sp[0], kern = sp[1], design = sp[2], jack = sp[3], mass = sp[4];
  if (P < 0 || P > 12) dd_bad(fn, "spec", "has an order outside 0..12");
  if (kern < 0 || kern > 2 || design < 0 || design > 2) dd_bad(fn, "spec", "has a kernel or design code out of range");
  if (jack && !(NN > 1)) dd_bad(fn, "N", "must exceed 1");
  const int k = rdd_ncol(design, P);
  SEXP S = PROTECT(allocMatrix(REALSXP, k, k));
  SEXP By = PROTECT(allocVector(REALSXP, k));
  SEXP M = PROTECT(jack ? allocMatrix(REALSXP, k, k) : R_NilValue);
  double *work = (double *) R_alloc(2 * k * k + 3 * k + 8 * P + 8, sizeof(double));
  rdd_fit(REAL(x) + lo, REAL(y) + lo, n, tt, hl, hr, P, kern, design, mass, NN, REAL(S), REAL(By),
          jack ? REAL(M) : NULL, work);
  const char *nms[] = {"S", "By", "M"};
  SEXP vals[] = {S, By, M};
  SEXP out = dd_named_list(3, nms, vals);
  UNPROTECT(3);
  return out;
}

/* the number of elements of the sorted (ascending) v below t, or at most t
 * if or_equal, for each t */
SEXP C_rd_density_below(SEXP v, SEXP t, SEXP or_equal) {
  const char *fn = "C_rd_density_below";
  dd_chk_type(v, REALSXP, 0, fn, "v");
  dd_chk_type(t, REALSXP, 0, fn, "t");
  dd_chk_vec(or_equal, LGLSXP, 1, 0, fn, "or_equal");
  const int le = LOGICAL(or_equal)[0] == TRUE;
  const double *a = REAL(v);
  const R_xlen_t n = XLENGTH(v), m = XLENGTH(t);
  SEXP out = PROTECT(allocVector(INTSXP, m));
  for (R_xlen_t j = 0; j < m; j++) {
    const double tj = REAL(t)[j];
    R_xlen_t lo = 0, hi = n;                 /* the count is in [lo, hi] */
    while (lo < hi) {
      const R_xlen_t mid = lo + (hi - lo) / 2;
      if (le ? a[mid] <= tj : a[mid] < tj) lo = mid + 1; else hi = mid;
    }
    INTEGER(out)[j] = (int) lo;
  }
  UNPROTECT(1);
  return out;
}

/* The empirical distribution function of the sorted sample xs at each
 * row, (i - 1) / (N - 1), with mass points (mass) the value of the last row
 * of each run of equal values, the distinct values (NULL when there are no
 * repeated values), and the mean and standard deviation of xs - c (two
 * passes in long double, as R's mean() and sd()). Returns list(Y, unique,
 * mean, sd). */
SEXP C_rd_density_cdf(SEXP xs, SEXP mass, SEXP c_) {
  const char *fn = "C_rd_density_cdf";
  dd_chk_type(xs, REALSXP, 0, fn, "xs");
  dd_chk_vec(mass, LGLSXP, 1, 0, fn, "mass");
  const R_xlen_t n = XLENGTH(xs);
  if (n < 2) dd_bad(fn, "xs", "must have at least 2 values");
  const double *a = REAL(xs), c = dd_chk_num(c_, 0, fn, "c");
  long double s = 0;
  for (R_xlen_t i = 0; i < n; i++) s += a[i] - c;
  long double mu = s / n, t = 0;
  for (R_xlen_t i = 0; i < n; i++) t += (a[i] - c) - mu;
  mu += t / n;
  long double ss = 0;
  for (R_xlen_t i = 0; i < n; i++) { const long double d = (a[i] - c) - mu; ss += d * d; }
  R_xlen_t nu = 1;
  for (R_xlen_t i = 1; i < n; i++) nu += a[i] != a[i - 1];
  const int rep = nu < n, m = rep && LOGICAL(mass)[0] == TRUE;
  SEXP Y = PROTECT(allocVector(REALSXP, n));
  SEXP U = PROTECT(rep ? allocVector(REALSXP, nu) : R_NilValue);
  double *yy = REAL(Y);
  const double den = (double) (n - 1);
  R_xlen_t j = 0;
  for (R_xlen_t i = 0; i < n; ) {
    R_xlen_t e = i;                          /* the run i..e of equal values */
    while (e + 1 < n && a[e + 1] == a[i]) e++;
    for (R_xlen_t r = i; r <= e; r++) yy[r] = (double) (m ? e : r) / den;
    if (rep) REAL(U)[j++] = a[i];
    i = e + 1;
  }
  SEXP mn = PROTECT(ScalarReal((double) mu)), sdv = PROTECT(ScalarReal(sqrt((double) (ss / (n - 1)))));
  const char *nms[] = {"Y", "unique", "mean", "sd"};
  SEXP vals[] = {Y, U, mn, sdv};
  SEXP out = dd_named_list(4, nms, vals);
  UNPROTECT(4);
  return out;
}
