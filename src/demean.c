/* Absorption of any number of fixed-effect dimensions.
 *
 * For one column x the fixed-effect coefficients alpha solve the normal
 * equations of x on the FE dummies (weighted when weights are given). One
 * sweep of block Gauss-Seidel updates each dimension in turn to the weighted
 * mean, by level, of x minus the other dimensions' effects. Sweeps are
 * accelerated by Irons and Tuck (1969) extrapolation on the coefficient
 * vector, the scheme fixest uses: from X, GX = F(X), GGX = F(GX),
 * X' = GGX - c (GGX - GX) with c = <dGX, d2X> / <d2X, d2X>.
 * Convergence: every coefficient changes by at most tol between two sweeps,
 * absolutely or relative to 0.1 + |alpha| (fixest's rule).
 * Columns are independent and run in parallel; each column is computed by one
 * thread from start to end, so results do not depend on the thread count. */
#include "diffdiff.h"
#include <math.h>
#include <string.h>

double *dd_fe_levelsums(int n, int Q, const int *fe, const int *nlev, const double *w,
                        int *off, int *sumL) {
  int s = 0;
  for (int q = 0; q < Q; q++) { off[q] = s; s += nlev[q]; }
  *sumL = s;
  double *sw = (double *) R_alloc(s > 0 ? s : 1, sizeof(double));
  memset(sw, 0, sizeof(double) * (s > 0 ? s : 1));
  for (int q = 0; q < Q; q++) {
    const int *f = fe + (R_xlen_t) q * n; double *swq = sw + off[q];
    if (w) for (int i = 0; i < n; i++) swq[f[i]] += w[i];
    else for (int i = 0; i < n; i++) swq[f[i]] += 1.0;
  }
  return sw;
}

/* one Gauss-Seidel sweep: updates alpha and keeps r = x - D alpha */
static void gs_sweep(const dd_fe *F, double *alpha, double *r, double *acc) {
  const int n = F->n;
  for (int q = 0; q < F->Q; q++) {
    const int *f = F->fe + (R_xlen_t) q * n;
    const int L = F->nlev[q];
    double *aq = alpha + F->off[q];
    const double *swq = F->sw + F->off[q];
    memset(acc, 0, sizeof(double) * L);
    if (F->w) for (int i = 0; i < n; i++) acc[f[i]] += F->w[i] * r[i];
    else for (int i = 0; i < n; i++) acc[f[i]] += r[i];
    for (int l = 0; l < L; l++) { acc[l] /= swq[l]; aq[l] += acc[l]; }
    for (int i = 0; i < n; i++) r[i] -= acc[f[i]];
  }
}

static void resid_from_alpha(const dd_fe *F, const double *x, const double *alpha, double *r) {
  const int n = F->n;
  memcpy(r, x, sizeof(double) * n);
  for (int q = 0; q < F->Q; q++) {
    const int *f = F->fe + (R_xlen_t) q * n; const double *aq = alpha + F->off[q];
    for (int i = 0; i < n; i++) r[i] -= aq[f[i]];
  }
}

static int converged(const double *a, const double *b, int m, double tol) {
  for (int j = 0; j < m; j++) {
    double d = fabs(a[j] - b[j]);
    if (d > tol && d / (0.1 + fabs(a[j])) > tol) return 0;
  }
  return 1;
}

/* scratch: 4 * sumL + max(nlev) doubles. Returns 1 when converged. */
int dd_demean_col(const dd_fe *F, const double *x, double *r, double *scratch,
                  double tol, int maxit, int *iter) {
  const int m = F->sumL;
  double *alpha = scratch, *X0 = scratch + m, *GX = scratch + 2 * m, *acc = scratch + 3 * m;
  memset(alpha, 0, sizeof(double) * m);
  memcpy(r, x, sizeof(double) * F->n);
  if (F->Q == 1) { gs_sweep(F, alpha, r, acc); *iter = 1; return 1; }
  int it = 0;
  while (it < maxit) {
    memcpy(X0, alpha, sizeof(double) * m);
    gs_sweep(F, alpha, r, acc); it++;
    if (converged(X0, alpha, m, tol)) { *iter = it; return 1; }
    memcpy(GX, alpha, sizeof(double) * m);
    gs_sweep(F, alpha, r, acc); it++;
    if (converged(GX, alpha, m, tol)) { *iter = it; return 1; }
    /* Irons-Tuck: alpha holds GGX */
    double vprod = 0.0, ssq = 0.0;
    for (int j = 0; j < m; j++) {
      double dG = alpha[j] - GX[j], d2 = dG - GX[j] + X0[j];
      vprod += dG * d2; ssq += d2 * d2;
    }
    if (ssq > 0.0 && R_FINITE(vprod / ssq)) {
      double c = vprod / ssq;
      for (int j = 0; j < m; j++) alpha[j] -= c * (alpha[j] - GX[j]);
      resid_from_alpha(F, x, alpha, r);
    }
  }
  *iter = it;
  return 0;
}

SEXP C_demean(SEXP X_, SEXP fe_, SEXP nlev_, SEXP w_, SEXP tol_, SEXP maxit_) {
  const int n = nrows(X_), m = ncols(X_), Q = ncols(fe_);
  if (nrows(fe_) != n || LENGTH(nlev_) != Q || (!isNull(w_) && XLENGTH(w_) != n))
    error("internal error in demean.c: length mismatch; please report");
  const double tol = asReal(tol_);
  const int maxit = asInteger(maxit_);
  dd_fe F;
  int *off = (int *) R_alloc(Q, sizeof(int));
  F.n = n; F.Q = Q; F.fe = INTEGER(fe_); F.nlev = INTEGER(nlev_);
  F.w = isNull(w_) ? NULL : REAL(w_);
  F.sw = dd_fe_levelsums(n, Q, F.fe, F.nlev, F.w, off, &F.sumL);
  F.off = off;
  int maxL = 0;
  for (int q = 0; q < Q; q++) if (F.nlev[q] > maxL) maxL = F.nlev[q];
  const size_t per = (size_t) 3 * F.sumL + maxL + 1;

  SEXP out = PROTECT(allocMatrix(REALSXP, n, m));
  SEXP iters = PROTECT(allocVector(INTSXP, m));
  SEXP conv = PROTECT(allocVector(LGLSXP, m));
  const double *X = REAL(X_); double *R = REAL(out);
  int *it = INTEGER(iters), *cv = LOGICAL(conv);
  const int nth = dd_nthreads(m, (double) n * m * Q);
  double *scratch = (double *) R_alloc(per * nth, sizeof(double));
#ifdef _OPENMP
#pragma omp parallel for num_threads(nth) schedule(dynamic, 1)
#endif
  for (int j = 0; j < m; j++) {
#ifdef _OPENMP
    int tid = omp_get_thread_num();
#else
    int tid = 0;
#endif
    cv[j] = dd_demean_col(&F, X + (R_xlen_t) j * n, R + (R_xlen_t) j * n,
                          scratch + per * tid, tol, maxit, it + j);
  }
  SEXP res = PROTECT(allocVector(VECSXP, 3));
  SEXP nms = PROTECT(allocVector(STRSXP, 3));
  SET_VECTOR_ELT(res, 0, out); SET_STRING_ELT(nms, 0, mkChar("X"));
  SET_VECTOR_ELT(res, 1, iters); SET_STRING_ELT(nms, 1, mkChar("iter"));
  SET_VECTOR_ELT(res, 2, conv); SET_STRING_ELT(nms, 2, mkChar("converged"));
  setAttrib(res, R_NamesSymbol, nms);
  UNPROTECT(5);
  return res;
}
