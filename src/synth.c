/* Synthetic control weights (Abadie, Diamond and Hainmueller 2010): the
 * least-squares problem on the simplex
 *
 *   min_w ||A w - b||^2   subject to   w >= 0, sum(w) = 1,
 *
 * with A the k x J matrix of the donors' (scaled, V-weighted) predictors and
 * b the treated unit's, solved exactly by a primal active-set method in the
 * manner of Lawson and Hanson's NNLS: the free set F starts at the best
 * single donor; each outer step adds the donor whose KKT condition is most
 * violated (the smallest gradient entry A'(Aw - b) relative to the common
 * value on F); each inner step solves the equality-constrained problem on F
 * (the constraint eliminated through one reference donor, the least squares
 * by LAPACK's pivoted QR, dgelsy, which also gives the minimum-norm solution
 * when the predictors do not pin the weights down) and, when that solution
 * leaves the simplex, moves to the boundary and drops the donors that reach
 * zero. At the end every donor outside F has a gradient entry no smaller
 * than those in F, up to a relative tolerance: the KKT conditions of the
 * convex problem, so the solution is the minimum (unique when A has full
 * column rank on the support).
 *
 * Synth solves the same problem by an interior-point method (kernlab's ipop,
 * five significant digits by default); the active set gives the weights to
 * rounding, with the inactive donors at exactly zero.
 *
 * Entry points: C_synth_w (one or several right-hand sides b, the columns of
 * B, against one A) and C_synth_vloss (Synth's fn.V: for a vector v of
 * predictor weights, the weights of the scaled predictors and the
 * outcome's mean squared error over the optimisation periods). */
#include "diffdiff.h"
#include <math.h>
#include <string.h>
#include <float.h>

typedef struct {
  int k, J;
  double *r, *z, *Bm, *rhs, *work, *wtry;
  int *F, *inF, *jpvt;
  int lwork;
} sc_ws;

static void sc_ws_init(sc_ws *ws, int k, int J) {
  ws->k = k; ws->J = J;
  int m = k > J ? k : J;
  ws->r = (double *) R_alloc(J, sizeof(double));
  ws->z = (double *) R_alloc(J, sizeof(double));
  ws->wtry = (double *) R_alloc(J, sizeof(double));
  ws->Bm = (double *) R_alloc((size_t) k * J, sizeof(double));
  ws->rhs = (double *) R_alloc(m, sizeof(double));
  ws->F = (int *) R_alloc(J, sizeof(int));
  ws->inF = (int *) R_alloc(J, sizeof(int));
  ws->jpvt = (int *) R_alloc(J, sizeof(int));
  /* dgelsy's workspace: max(mn + 3n + 1, 2mn + nrhs) with mn = min(m, n) */
  ws->lwork = 4 * (k + J) + 64;
  ws->work = (double *) R_alloc(ws->lwork, sizeof(double));
}

/* r = A'(A w - b), the half-gradient */
static void sc_grad(const double *A, int k, int J, const double *b, const double *w, double *res, double *r) {
  for (int i = 0; i < k; i++) res[i] = -b[i];
  for (int j = 0; j < J; j++) {
    if (w[j] == 0.0) continue;
    const double *aj = A + (R_xlen_t) j * k;
    for (int i = 0; i < k; i++) res[i] += aj[i] * w[j];
  }
  for (int j = 0; j < J; j++) {
    const double *aj = A + (R_xlen_t) j * k;
    double s = 0.0;
    for (int i = 0; i < k; i++) s += aj[i] * res[i];
    r[j] = s;
  }
}

/* the equality-constrained least squares on the free set F (m donors):
 * z_F minimises ||A_F z - b|| subject to sum(z) = 1 (z is J long, zero off F) */
static int sc_subproblem(const double *A, const double *b, sc_ws *ws, int m, double *z) {
  int k = ws->k, J = ws->J;
  for (int j = 0; j < J; j++) z[j] = 0.0;
  if (m == 1) { z[ws->F[0]] = 1.0; return 0; }
  int l = ws->F[0], n = m - 1, nrhs = 1, rank = 0, info = 0, ldb = k > n ? k : n;
  const double *al = A + (R_xlen_t) l * k;
  for (int c = 0; c < n; c++) {
    const double *ac = A + (R_xlen_t) ws->F[c + 1] * k;
    double *bc = ws->Bm + (R_xlen_t) c * k;
    for (int i = 0; i < k; i++) bc[i] = ac[i] - al[i];
  }
  for (int i = 0; i < ldb; i++) ws->rhs[i] = i < k ? b[i] - al[i] : 0.0;
  for (int c = 0; c < n; c++) ws->jpvt[c] = 0;
  double rcond = 1e-12;
  F77_CALL(dgelsy)(&k, &n, &nrhs, ws->Bm, &k, ws->rhs, &ldb, ws->jpvt, &rcond, &rank, ws->work, &ws->lwork, &info);
  if (info != 0) return -1;
  double s = 0.0;
  for (int c = 0; c < n; c++) { z[ws->F[c + 1]] = ws->rhs[c]; s += ws->rhs[c]; }
  z[l] = 1.0 - s;
  return 0;
}

/* The active-set solve. w (J) on exit: the weights; returns the number of
 * outer iterations, or -1 (LAPACK failure), -2 (no convergence). */
static int sc_solve(const double *A, int k, int J, const double *b, sc_ws *ws, double *w, double *loss,
                    const int *init, int ninit) {
  double *res = ws->rhs;   /* k long; reused before the subproblem overwrites it */
  double *r = ws->r, *z = ws->z;
  /* scale for the tolerance: the largest squared column norm and ||b||^2 */
  double scale = 0.0, bb = 0.0;
  for (int i = 0; i < k; i++) bb += b[i] * b[i];
  int best = 0; double bestv = R_PosInf;
  for (int j = 0; j < J; j++) {
    const double *aj = A + (R_xlen_t) j * k;
    double s = 0.0, e = 0.0;
    for (int i = 0; i < k; i++) { s += aj[i] * aj[i]; e += (aj[i] - b[i]) * (aj[i] - b[i]); }
    if (s > scale) scale = s;
    if (e < bestv) { bestv = e; best = j; }
  }
  if (bb > scale) scale = bb;
  double tol = 1e-11 * (scale > 0 ? scale : 1.0);
  for (int j = 0; j < J; j++) { w[j] = 0.0; ws->inF[j] = 0; }
  w[best] = 1.0; ws->F[0] = best; ws->inF[best] = 1;
  int m = 1, iter = 0, maxiter = 5 * J + 100, last_added = -1;
  /* warm start: the support of an earlier solution (a nearby V), kept when
   * the subproblem's solution on it lies inside the simplex */
  if (ninit > 1) {
    int mi = 0;
    for (int c = 0; c < ninit; c++) {
      int j = init[c];
      if (j >= 0 && j < J && !ws->inF[j]) { ws->F[mi++] = j; ws->inF[j] = 1; }
    }
    for (int j = 0; j < J; j++) ws->inF[j] = 0;
    for (int c = 0; c < mi; c++) ws->inF[ws->F[c]] = 1;
    int ok = mi > 0 && sc_subproblem(A, b, ws, mi, z) == 0;
    for (int c = 0; ok && c < mi; c++) if (z[ws->F[c]] <= 0.0) ok = 0;
    if (ok) {
      for (int j = 0; j < J; j++) w[j] = z[j];
      m = mi;
    } else {
      for (int j = 0; j < J; j++) { w[j] = 0.0; ws->inF[j] = 0; }
      w[best] = 1.0; ws->F[0] = best; ws->inF[best] = 1;
    }
  }
  for (;;) {
    if (++iter > maxiter) return -2;
    sc_grad(A, k, J, b, w, res, r);
    double mu = 0.0;
    for (int c = 0; c < m; c++) mu += r[ws->F[c]];
    mu /= m;
    int add = -1; double dmin = -tol;
    for (int j = 0; j < J; j++) {
      if (ws->inF[j] || j == last_added) continue;
      double d = r[j] - mu;
      if (d < dmin) { dmin = d; add = j; }
    }
    if (add < 0) break;
    ws->F[m++] = add; ws->inF[add] = 1;
    last_added = -1;
    /* inner loop: feasible steps towards the subproblem's solution */
    for (int inner = 0;; inner++) {
      if (inner > J + 10) return -2;
      if (sc_subproblem(A, b, ws, m, z) != 0) return -1;
      int ok = 1;
      for (int c = 0; c < m; c++) if (z[ws->F[c]] <= 0.0) { ok = 0; break; }
      if (ok) { for (int j = 0; j < J; j++) w[j] = z[j]; break; }
      double alpha = 1.0;
      for (int c = 0; c < m; c++) {
        int j = ws->F[c];
        if (z[j] <= 0.0) {
          double a = w[j] / (w[j] - z[j]);
          if (a < alpha) alpha = a;
        }
      }
      for (int c = 0; c < m; c++) { int j = ws->F[c]; w[j] += alpha * (z[j] - w[j]); }
      /* drop the donors at (or numerically below) zero, keep the sum at one */
      int m2 = 0; double s = 0.0;
      for (int c = 0; c < m; c++) {
        int j = ws->F[c];
        if (w[j] <= 1e-14) {
          w[j] = 0.0; ws->inF[j] = 0;
          if (j == add) last_added = j;
        } else { ws->F[m2++] = j; s += w[j]; }
      }
      if (m2 == m) {
        /* the step hit no bound exactly (rounding): drop the smallest z */
        int cmin = 0;
        for (int c = 1; c < m; c++) if (z[ws->F[c]] < z[ws->F[cmin]]) cmin = c;
        int j = ws->F[cmin];
        w[j] = 0.0; ws->inF[j] = 0;
        for (int c = cmin; c < m - 1; c++) ws->F[c] = ws->F[c + 1];
        m2 = m - 1;
        s = 0.0;
        for (int c = 0; c < m2; c++) s += w[ws->F[c]];
      }
      m = m2;
      if (m == 0) return -2;
      for (int c = 0; c < m; c++) w[ws->F[c]] /= s;
    }
  }
  double e = 0.0;
  sc_grad(A, k, J, b, w, res, r);
  for (int i = 0; i < k; i++) e += res[i] * res[i];
  *loss = e;
  return iter;
}

static void sc_fail(int st) {
  if (st == -1) error("internal error in synth.c: dgelsy failed; please report");
  if (st == -2) error("internal error in synth.c: the active-set method did not converge; please report");
}

/* C_synth_w(A, B): A k x J, B k x nb (one right-hand side per column).
 * Returns list(w = J x nb, loss = nb, iter = nb). */
SEXP C_synth_w(SEXP A_, SEXP B_) {
  const char *fn = "C_synth_w";
  dd_chk_mat(A_, REALSXP, -1, -1, 0, fn, "A");
  dd_chk_mat(B_, REALSXP, nrows(A_), -1, 0, fn, "B");
  int k = nrows(A_), J = ncols(A_), nb = ncols(B_);
  if (k < 1 || J < 1) error("internal error in synth.c: empty problem; please report");
  sc_ws ws; sc_ws_init(&ws, k, J);
  SEXP W = PROTECT(allocMatrix(REALSXP, J, nb));
  SEXP L = PROTECT(allocVector(REALSXP, nb));
  SEXP It = PROTECT(allocVector(INTSXP, nb));
  for (int c = 0; c < nb; c++) {
    double loss = 0.0;
    int st = sc_solve(REAL(A_), k, J, REAL(B_) + (R_xlen_t) c * k, &ws, REAL(W) + (R_xlen_t) c * J, &loss, NULL, 0);
    sc_fail(st);
    REAL(L)[c] = loss; INTEGER(It)[c] = st;
    if (c % 64 == 63) R_CheckUserInterrupt();
  }
  const char *nm[3] = {"w", "loss", "iter"};
  SEXP vals[3] = {W, L, It};
  SEXP out = dd_named_list(3, nm, vals);
  UNPROTECT(3);
  return out;
}

/* C_synth_vloss(X0, X1, Z0, Z1, v, init): Synth's fn.V. X0 k x J and X1 (k) the
 * scaled predictors, Z0 T x J and Z1 (T) the outcomes over the optimisation
 * periods, v (k) the predictor weights (|v| / sum |v| is used). Returns the
 * mean squared error of Z1 - Z0 w, with w the weights under V = diag(v);
 * attribute "w" holds them. init: NULL, or the 0-based donors of a warm
 * start (the support of the weights at a nearby v). */
SEXP C_synth_vloss(SEXP X0_, SEXP X1_, SEXP Z0_, SEXP Z1_, SEXP v_, SEXP init_) {
  const char *fn = "C_synth_vloss";
  dd_chk_mat(X0_, REALSXP, -1, -1, 0, fn, "X0");
  int k = nrows(X0_), J = ncols(X0_);
  dd_chk_vec(X1_, REALSXP, k, 0, fn, "X1");
  dd_chk_mat(Z0_, REALSXP, -1, J, 0, fn, "Z0");
  int T = nrows(Z0_);
  dd_chk_vec(Z1_, REALSXP, T, 0, fn, "Z1");
  dd_chk_vec(v_, REALSXP, k, 0, fn, "v");
  if (!isNull(init_) && TYPEOF(init_) != INTSXP) error("internal error in synth.c: init is not integer; please report");
  const double *X0 = REAL(X0_), *X1 = REAL(X1_), *Z0 = REAL(Z0_), *Z1 = REAL(Z1_), *v = REAL(v_);
  double sv = 0.0;
  for (int i = 0; i < k; i++) sv += fabs(v[i]);
  if (!(sv > 0.0) || !R_FINITE(sv)) return ScalarReal(R_PosInf);
  double *A = (double *) R_alloc((size_t) k * J, sizeof(double));
  double *b = (double *) R_alloc(k, sizeof(double));
  for (int i = 0; i < k; i++) {
    double s = sqrt(fabs(v[i]) / sv);
    b[i] = s * X1[i];
    for (int j = 0; j < J; j++) A[i + (R_xlen_t) j * k] = s * X0[i + (R_xlen_t) j * k];
  }
  sc_ws ws; sc_ws_init(&ws, k, J);
  SEXP W = PROTECT(allocVector(REALSXP, J));
  double loss = 0.0;
  sc_fail(sc_solve(A, k, J, b, &ws, REAL(W), &loss, isNull(init_) ? NULL : INTEGER(init_),
                   isNull(init_) ? 0 : LENGTH(init_)));
  long double e = 0.0;
  for (int t = 0; t < T; t++) {
    double s = Z1[t];
    for (int j = 0; j < J; j++) s -= Z0[t + (R_xlen_t) j * T] * REAL(W)[j];
    e += (long double) s * s;
  }
  SEXP out = PROTECT(ScalarReal((double) (e / T)));
  setAttrib(out, install("w"), W);
  UNPROTECT(2);
  return out;
}
