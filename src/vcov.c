/* The "meat" of sandwich variances: sum over clusters g of s_g s_g', where
 * s_g = sum_{i in g} w_i e_i x_i. With no cluster codes every observation is
 * its own cluster (heteroskedasticity-robust). The score sums are built one
 * column per task (each column by one thread, summed in row order), so the
 * result does not depend on the thread count. */
#include "diffdiff.h"
#include <string.h>

SEXP C_cluster_meat(SEXP X_, SEXP e_, SEXP w_, SEXP cl_, SEXP G_) {
  const int n = nrows(X_), k = ncols(X_);
  const int hetero = isNull(cl_);
  const int G = hetero ? n : asInteger(G_);
  if (XLENGTH(e_) != n || (!isNull(w_) && XLENGTH(w_) != n) || (!hetero && XLENGTH(cl_) != n))
    error("internal error in vcov.c: length mismatch; please report");
  const double *X = REAL(X_), *e = REAL(e_), *w = isNull(w_) ? NULL : REAL(w_);
  const int *cl = hetero ? NULL : INTEGER(cl_);
  double *we = (double *) R_alloc(n, sizeof(double));
  for (int i = 0; i < n; i++) we[i] = w ? w[i] * e[i] : e[i];
  double *S = (double *) R_alloc((size_t) G * k, sizeof(double));
  const int nth = dd_nthreads(k, (double) n * k);
#ifdef _OPENMP
#pragma omp parallel for num_threads(nth) schedule(static, 1)
#endif
  for (int j = 0; j < k; j++) {
    double *Sj = S + (R_xlen_t) j * G; const double *xj = X + (R_xlen_t) j * n;
    if (hetero) {
      for (int i = 0; i < n; i++) Sj[i] = we[i] * xj[i];
    } else {
      memset(Sj, 0, sizeof(double) * G);
      for (int i = 0; i < n; i++) Sj[cl[i]] += we[i] * xj[i];
    }
  }
  SEXP out = PROTECT(allocMatrix(REALSXP, k, k));
  double *M = REAL(out), one = 1.0, zero = 0.0;
  F77_CALL(dsyrk)("U", "T", &k, &G, &one, S, &G, &zero, M, &k FCONE FCONE);
  for (int j = 0; j < k; j++)
    for (int i = j + 1; i < k; i++) M[i + (R_xlen_t) j * k] = M[j + (R_xlen_t) i * k];
  UNPROTECT(1);
  return out;
}

/* psi = Psi A for a sparse A (k x m): only the non-zero entries of A are
 * visited, column by column (each output column by one thread). */
SEXP C_if_combine(SEXP Psi_, SEXP A_) {
  const int n = nrows(Psi_), k = ncols(Psi_), m = ncols(A_);
  if (nrows(A_) != k) error("internal error in vcov.c: dimension mismatch; please report");
  const double *Psi = REAL(Psi_), *A = REAL(A_);
  SEXP out = PROTECT(allocMatrix(REALSXP, n, m));
  double *O = REAL(out);
  const int nth = dd_nthreads(m, (double) n * k);
#ifdef _OPENMP
#pragma omp parallel for num_threads(nth) schedule(static, 1)
#endif
  for (int j = 0; j < m; j++) {
    double *oj = O + (R_xlen_t) j * n;
    memset(oj, 0, sizeof(double) * n);
    for (int l = 0; l < k; l++) {
      const double a = A[l + (R_xlen_t) j * k];
      if (a == 0.0) continue;
      const double *pl = Psi + (R_xlen_t) l * n;
      for (int i = 0; i < n; i++) oj[i] += a * pl[i];
    }
  }
  UNPROTECT(1);
  return out;
}

/* column sums of squares (NA when a column has NA), one column per task */
SEXP C_colss(SEXP X_) {
  const int n = nrows(X_), m = ncols(X_);
  const double *X = REAL(X_);
  SEXP out = PROTECT(allocVector(REALSXP, m));
  double *o = REAL(out);
  const int nth = dd_nthreads(m, (double) n * m);
#ifdef _OPENMP
#pragma omp parallel for num_threads(nth) schedule(static)
#endif
  for (int j = 0; j < m; j++) {
    const double *x = X + (R_xlen_t) j * n; double s = 0.0;
    for (int i = 0; i < n; i++) s += x[i] * x[i];
    o[j] = s;
  }
  UNPROTECT(1);
  return out;
}

/* X[, cols]' X[, cols] skipping zero entries row by row (influence
 * functions are zero outside each cell's sample) */
SEXP C_if_crossprod(SEXP X_, SEXP cols_) {
  const int n = nrows(X_), m = LENGTH(cols_);
  const double *X = REAL(X_);
  const int *cols = INTEGER(cols_);
  SEXP out = PROTECT(allocMatrix(REALSXP, m, m));
  double *V = REAL(out);
  memset(V, 0, sizeof(double) * m * m);
  double *val = (double *) R_alloc(m > 0 ? m : 1, sizeof(double));
  int *idx = (int *) R_alloc(m > 0 ? m : 1, sizeof(int));
  for (int i = 0; i < n; i++) {
    int nz = 0;
    for (int a = 0; a < m; a++) {
      double x = X[i + (R_xlen_t) (cols[a] - 1) * n];
      if (x != 0.0) { val[nz] = x; idx[nz++] = a; }
    }
    for (int p = 0; p < nz; p++)
      for (int q = 0; q <= p; q++) V[idx[p] + (R_xlen_t) idx[q] * m] += val[p] * val[q];
  }
  for (int a = 0; a < m; a++)
    for (int b = a + 1; b < m; b++) V[a + (R_xlen_t) b * m] = V[b + (R_xlen_t) a * m];
  UNPROTECT(1);
  return out;
}
