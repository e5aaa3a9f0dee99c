/* Absorption of any number of fixed-effect dimensions: r = M_D x, the
 * residual of x after (weighted) projection on the fixed-effect dummies.
 * One dimension: subtract group means. Two or more: conjugate gradients
 * accelerate the symmetric alternating-projection sweep (see dd_demean_col).
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

/* v <- M_q v: subtract the weighted mean of v within each level of dimension q */
static void demean_dim(const dd_fe *F, int q, double *v, double *acc) {
  const int n = F->n, L = F->nlev[q];
  const int *f = F->fe + (R_xlen_t) q * n;
  const double *swq = F->sw + F->off[q];
  memset(acc, 0, sizeof(double) * L);
  if (F->w) for (int i = 0; i < n; i++) acc[f[i]] += F->w[i] * v[i];
  else for (int i = 0; i < n; i++) acc[f[i]] += v[i];
  for (int l = 0; l < L; l++) acc[l] /= swq[l];
  for (int i = 0; i < n; i++) v[i] -= acc[f[i]];
}

/* symmetric sweep T = M_1 M_2 ... M_Q ... M_2 M_1 (symmetric in the W metric) */
static void sym_sweep(const dd_fe *F, double *v, double *acc) {
  for (int q = 0; q < F->Q; q++) demean_dim(F, q, v, acc);
  for (int q = F->Q - 2; q >= 0; q--) demean_dim(F, q, v, acc);
}

static double wdot(const dd_fe *F, const double *a, const double *b) {
  double s = 0.0;
  if (F->w) for (int i = 0; i < F->n; i++) s += F->w[i] * a[i] * b[i];
  else for (int i = 0; i < F->n; i++) s += a[i] * b[i];
  return s;
}

/* r = M_D x. With one dimension, one pass of group means. Otherwise conjugate
 * gradients on (I - T) s = (I - T) x, T the symmetric sweep ("symmetric
 * Kaczmarz" transform accelerated by CG, as reghdfe does): M_D x is the part
 * of x that T leaves unchanged, s the rest. Stops when the CG residual
 * ||(I - T)(x - s)||_W falls below tol times its starting value.
 * scratch: 4 n + max(nlev) doubles. Returns 1 when converged. */
int dd_demean_col(const dd_fe *F, const double *x, double *r, double *scratch,
                  double tol, int maxit, int *iter) {
  const int n = F->n;
  double *s = scratch, *res = scratch + n, *p = scratch + 2 * (size_t) n,
    *Ap = scratch + 3 * (size_t) n, *acc = scratch + 4 * (size_t) n;
  memcpy(r, x, sizeof(double) * n);
  if (F->Q == 1) { demean_dim(F, 0, r, acc); *iter = 1; return 1; }
  /* Warm start: one forward sweep r = M_Q ... M_1 x leaves M_D x unchanged
   * (M_D M_q = M_D). When the dimensions are orthogonal (balanced panels) r
   * is already the answer: every level mean of r is zero up to rounding. */
  for (int q = 0; q < F->Q; q++) demean_dim(F, q, r, acc);
  {
    double ss = wdot(F, r, r), sw = 0.0, worst = 0.0;
    for (int l = 0; l < F->nlev[0]; l++) sw += F->sw[l];
    for (int q = 0; q < F->Q - 1; q++) {  /* the last dimension was just demeaned */
      const int L = F->nlev[q]; const int *f = F->fe + (R_xlen_t) q * n;
      const double *swq = F->sw + F->off[q];
      memset(acc, 0, sizeof(double) * L);
      if (F->w) for (int i = 0; i < n; i++) acc[f[i]] += F->w[i] * r[i];
      else for (int i = 0; i < n; i++) acc[f[i]] += r[i];
      for (int l = 0; l < L; l++) { double m = fabs(acc[l] / swq[l]); if (m > worst) worst = m; }
    }
    if (worst <= tol * 1e-3 * sqrt(ss / sw) || ss == 0.0) { *iter = 1; return 1; }
  }
  x = r;  /* solve from the warm start, held in r (r = x - s at the end, in place) */
  /* res = b = x - T x */
  memcpy(Ap, x, sizeof(double) * n);
  sym_sweep(F, Ap, acc);
  for (int i = 0; i < n; i++) { res[i] = x[i] - Ap[i]; p[i] = res[i]; s[i] = 0.0; }
  double rr = wdot(F, res, res);
  const double stop = tol * tol * rr;
  int it = 0, conv = rr <= 0.0;
  while (!conv && it < maxit) {
    memcpy(Ap, p, sizeof(double) * n);
    sym_sweep(F, Ap, acc);
    for (int i = 0; i < n; i++) Ap[i] = p[i] - Ap[i];
    double pAp = wdot(F, p, Ap);
    it++;
    if (!(pAp > 0.0)) { conv = 1; break; }   /* exact solution reached */
    double a = rr / pAp;
    for (int i = 0; i < n; i++) { s[i] += a * p[i]; res[i] -= a * Ap[i]; }
    double rr_new = wdot(F, res, res);
    if (rr_new <= stop) { conv = 1; break; }
    double beta = rr_new / rr;
    for (int i = 0; i < n; i++) p[i] = res[i] + beta * p[i];
    rr = rr_new;
  }
  for (int i = 0; i < n; i++) r[i] = x[i] - s[i];
  *iter = it;
  return conv;
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
  const size_t per = (size_t) 4 * n + maxL + 1;

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
