/* The package's dense linear algebra: least squares with the one rank rule
 * (C_ols, below; the Gram-matrix path of regress.R applies the same rule and
 * falls back to C_ols near its tolerance), and the small Cholesky kernels of
 * did_cs's cell regressions (dd_chol_*, at the end).
 *
 * Weighted least squares through LAPACK's pivoted QR (dgeqp3).
 *
 * Rank deficiency is resolved the way lm() resolves it: columns are visited in
 * their original order and a column whose residual norm, after projection on
 * the columns kept before it, is below tol times its reference norm is dropped
 * (reported NA). The reference norm is that of the column before fixed effects
 * were absorbed, so a covariate that the fixed effects explain is caught.
 * The order-preserving pass runs on the p x p triangular factor R P' of the
 * single n x p factorisation, so the data are factorised only once. */
#include "diffdiff.h"
#include <math.h>
#include <float.h>
#include <string.h>

static int lwork_query_geqp3(int n, int p, double *A, int *jpvt, double *tau) {
  double wq; int lw = -1, info = 0;
  F77_CALL(dgeqp3)(&n, &p, A, &n, jpvt, tau, &wq, &lw, &info);
  return (int) wq;
}

SEXP C_ols(SEXP X_, SEXP y_, SEXP w_, SEXP refnorm_, SEXP tol_) {
  const char *fn = "C_ols";
  dd_chk_mat(X_, REALSXP, -1, -1, 0, fn, "X");
  dd_chk_vec(y_, REALSXP, nrows(X_), 0, fn, "y");
  dd_chk_vec(w_, REALSXP, nrows(X_), 1, fn, "w");
  dd_chk_vec(refnorm_, REALSXP, ncols(X_), 0, fn, "refnorm");
  int n = nrows(X_), p = ncols(X_), info = 0, one = 1;
  double tol = dd_chk_num(tol_, 0, fn, "tol");
  const double *X = REAL(X_), *y = REAL(y_), *w = isNull(w_) ? NULL : REAL(w_);
  const double *refnorm = REAL(refnorm_);
  if (XLENGTH(y_) != n || (w && XLENGTH(w_) != n) || XLENGTH(refnorm_) != p)
    error("internal error in linalg.c: length mismatch; please report");
  if (p < 1 || n < p) error("internal error in linalg.c: need 1 <= p <= n; please report");

  double *A = (double *) R_alloc((size_t) n * p, sizeof(double));
  double *ys = (double *) R_alloc(n, sizeof(double));
  double *sq = w ? (double *) R_alloc(n, sizeof(double)) : NULL;
  if (w) for (int i = 0; i < n; i++) sq[i] = sqrt(w[i]);
  for (int j = 0; j < p; j++) {
    const double *xj = X + (R_xlen_t) j * n; double *aj = A + (R_xlen_t) j * n;
    if (w) for (int i = 0; i < n; i++) aj[i] = xj[i] * sq[i];
    else memcpy(aj, xj, sizeof(double) * n);
  }
  for (int i = 0; i < n; i++) ys[i] = w ? y[i] * sq[i] : y[i];

  int *jpvt = (int *) R_alloc(p, sizeof(int));
  double *tau = (double *) R_alloc(p, sizeof(double));
  memset(jpvt, 0, sizeof(int) * p);
  int lw = lwork_query_geqp3(n, p, A, jpvt, tau);
  { /* dormqr work size */
    double wq; int lw2 = -1;
    F77_CALL(dormqr)("L", "T", &n, &one, &p, A, &n, tau, ys, &n, &wq, &lw2, &info FCONE FCONE);
    if ((int) wq > lw) lw = (int) wq;
  }
  if (lw < 4 * p + 64) lw = 4 * p + 64;
  double *work = (double *) R_alloc(lw, sizeof(double));
  F77_CALL(dgeqp3)(&n, &p, A, &n, jpvt, tau, work, &lw, &info);
  if (info != 0) error("internal error in linalg.c: dgeqp3 info %d; please report", info);
  F77_CALL(dormqr)("L", "T", &n, &one, &p, A, &n, tau, ys, &n, work, &lw, &info FCONE FCONE);
  if (info != 0) error("internal error in linalg.c: dormqr info %d; please report", info);

  /* M = R P' (p x p): X = Q M with columns in the original order */
  double *M = (double *) R_alloc((size_t) p * p, sizeof(double));
  memset(M, 0, sizeof(double) * p * p);
  for (int j = 0; j < p; j++) {
    int orig = jpvt[j] - 1;
    for (int i = 0; i <= j; i++) M[i + (R_xlen_t) orig * p] = A[i + (R_xlen_t) j * n];
  }

  /* order-preserving rank detection on M */
  int *keep = (int *) R_alloc(p, sizeof(int));
  int k = p;
  for (int j = 0; j < p; j++) keep[j] = j;
  double *Mk = (double *) R_alloc((size_t) p * p, sizeof(double));
  double *tau2 = (double *) R_alloc(p, sizeof(double));
  for (;;) {
    for (int j = 0; j < k; j++) memcpy(Mk + (R_xlen_t) j * p, M + (R_xlen_t) keep[j] * p, sizeof(double) * p);
    if (k == 0) break;
    F77_CALL(dgeqrf)(&p, &k, Mk, &p, tau2, work, &lw, &info);
    if (info != 0) error("internal error in linalg.c: dgeqrf info %d; please report", info);
    int drop = -1;
    for (int j = 0; j < k; j++) {
      if (fabs(Mk[j + (R_xlen_t) j * p]) <= tol * refnorm[keep[j]]) { drop = j; break; }
    }
    if (drop < 0) break;
    for (int j = drop; j < k - 1; j++) keep[j] = keep[j + 1];
    k--;
  }

  SEXP coef = PROTECT(allocVector(REALSXP, p));
  SEXP keepv = PROTECT(allocVector(LGLSXP, p));
  SEXP bread = PROTECT(allocMatrix(REALSXP, k, k));
  SEXP resid = PROTECT(allocVector(REALSXP, n));
  for (int j = 0; j < p; j++) { REAL(coef)[j] = NA_REAL; LOGICAL(keepv)[j] = 0; }
  double *e = REAL(resid);
  memcpy(e, y, sizeof(double) * n);
  if (k > 0) {
    double *c = (double *) R_alloc(p, sizeof(double));
    memcpy(c, ys, sizeof(double) * p);
    F77_CALL(dormqr)("L", "T", &p, &one, &k, Mk, &p, tau2, c, &p, work, &lw, &info FCONE FCONE);
    if (info != 0) error("internal error in linalg.c: dormqr info %d; please report", info);
    double *R2 = REAL(bread);
    for (int j = 0; j < k; j++)
      for (int i = 0; i < k; i++) R2[i + (R_xlen_t) j * k] = i <= j ? Mk[i + (R_xlen_t) j * p] : 0.0;
    F77_CALL(dtrtrs)("U", "N", "N", &k, &one, R2, &k, c, &k, &info FCONE FCONE FCONE);
    if (info != 0) error("internal error in linalg.c: dtrtrs info %d; please report", info);
    for (int j = 0; j < k; j++) {
      REAL(coef)[keep[j]] = c[j];
      LOGICAL(keepv)[keep[j]] = 1;
      const double *xj = X + (R_xlen_t) keep[j] * n; double b = c[j];
      for (int i = 0; i < n; i++) e[i] -= b * xj[i];
    }
    /* (X'WX)^{-1} = R2^{-1} R2^{-T} from the triangular factor */
    F77_CALL(dpotri)("U", &k, R2, &k, &info FCONE);
    if (info != 0) error("internal error in linalg.c: dpotri info %d; please report", info);
    for (int j = 0; j < k; j++)
      for (int i = j + 1; i < k; i++) R2[i + (R_xlen_t) j * k] = R2[j + (R_xlen_t) i * k];
  }
  const char *nm[5] = {"coef", "keep", "bread", "resid", "rank"};
  SEXP vals[5] = {coef, keepv, bread, resid, PROTECT(ScalarInteger(k))};
  SEXP out = dd_named_list(5, nm, vals);
  UNPROTECT(5);
  return out;
}

/* Small dense kernels in plain C: the cells run inside parallel regions,
 * where no BLAS/LAPACK routine is called (an OpenMP-threaded or
 * non-reentrant BLAS could oversubscribe or deadlock there). They solve
 * systems the peer (DRDID) solves, with its rule: a singular system makes the
 * cell not estimable (dd_chol_ok's rcond test) instead of dropping columns,
 * so they do not apply C_ols's rank rule by design.
 * The one Cholesky: keep == NULL, A = L L' in place (lower triangle,
 * column-major k x k), returning 0 when a pivot is not positive (as dpotrf's
 * info > 0); keep != NULL, columns aliased in order where the remaining
 * pivot is at most tol times the column's diagonal (their column of L set
 * to 0, keep[j] = 0: the regressors collinear with the earlier ones, as
 * lm's order of aliasing), returning the number kept. */
static int chol_core(int k, double *L, int *keep, double tol) {
  int nk = 0;
  for (int j = 0; j < k; j++) {
    double a0 = L[j + (size_t) j * k], d = a0;
    for (int p = 0; p < j; p++) d -= L[j + (size_t) p * k] * L[j + (size_t) p * k];
    if (keep) {
      keep[j] = a0 > 0.0 && d > tol * a0;
      if (!keep[j]) {
        for (int i = j; i < k; i++) L[i + (size_t) j * k] = 0.0;
        continue;
      }
    } else if (!(d > 0.0)) return 0;
    nk++;
    d = sqrt(d);
    L[j + (size_t) j * k] = d;
    for (int i = j + 1; i < k; i++) {
      double s = L[i + (size_t) j * k];
      for (int p = 0; p < j; p++) s -= L[i + (size_t) p * k] * L[j + (size_t) p * k];
      L[i + (size_t) j * k] = s / d;
    }
  }
  return keep ? nk : 1;
}

int dd_chol_lower(int k, double *L) { return chol_core(k, L, NULL, 0.0); }

int dd_chol_alias(int k, double *L, int *keep, double tol) { return chol_core(k, L, keep, tol); }

/* b <- (L L')^{-1} b; with keep (from dd_chol_alias), on the kept columns
 * (0 on the aliased ones) */
void dd_chol_solve_keep(int k, const double *L, const int *keep, double *b) {
  for (int i = 0; i < k; i++) {
    if (keep && !keep[i]) { b[i] = 0.0; continue; }
    double s = b[i];
    for (int p = 0; p < i; p++) if (!keep || keep[p]) s -= L[i + (size_t) p * k] * b[p];
    b[i] = s / L[i + (size_t) i * k];
  }
  for (int i = k - 1; i >= 0; i--) {
    if (keep && !keep[i]) continue;
    double s = b[i];
    for (int p = i + 1; p < k; p++) if (!keep || keep[p]) s -= L[p + (size_t) i * k] * b[p];
    b[i] = s / L[i + (size_t) i * k];
  }
}

void dd_chol_solve(int k, const double *L, double *b) { dd_chol_solve_keep(k, L, NULL, b); }

/* Cholesky of A into L; returns 0 when A is not (numerically) positive
 * definite, judged like DRDID's rcond(A) < eps check: the reciprocal
 * 1-norm condition number, here exact (k solves; LAPACK's dpocon estimates
 * the same quantity from below). work4k: 4k doubles. */
int dd_chol_ok(int k, const double *A, double *L, double *work4k, int *iwork) {
  (void) iwork;
  memcpy(L, A, sizeof(double) * k * k);
  if (!dd_chol_lower(k, L)) return 0;
  double anorm = 0.0, ainv = 0.0;
  for (int c = 0; c < k; c++) { double s = 0.0; for (int a = 0; a < k; a++) s += fabs(A[a + c * k]); if (s > anorm) anorm = s; }
  double *e = work4k;
  for (int c = 0; c < k; c++) {
    for (int a = 0; a < k; a++) e[a] = a == c ? 1.0 : 0.0;
    dd_chol_solve(k, L, e);
    double s = 0.0;
    for (int a = 0; a < k; a++) s += fabs(e[a]);
    if (s > ainv) ainv = s;
  }
  const double rcond = (anorm > 0.0 && ainv > 0.0 && R_FINITE(ainv)) ? 1.0 / anorm / ainv : 0.0;
  return rcond >= DBL_EPSILON;
}
