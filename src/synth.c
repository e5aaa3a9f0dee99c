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
 * outcome's mean squared error over the optimisation periods) and
 * C_synth_nm (the Nelder-Mead search of V over that function, in C). */
#include "diffdiff.h"
#include <math.h>
#include <string.h>
#include <float.h>
#include <R_ext/Applic.h>

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

/* Synth's fn.V on plain arrays: the problem (scaled predictors X0, k x J,
 * and X1; outcomes Z0, T x J, and Z1 over the optimisation periods), the
 * workspace, and the warm start (the support of the weights at the previous
 * v, 0-based; nwarm < 0: none), which each evaluation with a valid v
 * replaces by the support of its own weights. */
typedef struct {
  const double *X0, *X1, *Z0, *Z1;
  int k, J, T;
  double *A, *b, *w;
  int *warm, nwarm;
  sc_ws ws;
  int neval;
} sc_vprob;

static void sc_vprob_init(sc_vprob *P, SEXP X0_, SEXP X1_, SEXP Z0_, SEXP Z1_, SEXP init_, const char *fn) {
  dd_chk_mat(X0_, REALSXP, -1, -1, 0, fn, "X0");
  int k = nrows(X0_), J = ncols(X0_);
  dd_chk_vec(X1_, REALSXP, k, 0, fn, "X1");
  dd_chk_mat(Z0_, REALSXP, -1, J, 0, fn, "Z0");
  int T = nrows(Z0_);
  dd_chk_vec(Z1_, REALSXP, T, 0, fn, "Z1");
  if (!isNull(init_) && TYPEOF(init_) != INTSXP) error("internal error in synth.c: init is not integer; please report");
  P->X0 = REAL(X0_); P->X1 = REAL(X1_); P->Z0 = REAL(Z0_); P->Z1 = REAL(Z1_);
  P->k = k; P->J = J; P->T = T; P->neval = 0;
  P->A = (double *) R_alloc((size_t) k * J, sizeof(double));
  P->b = (double *) R_alloc(k, sizeof(double));
  P->w = (double *) R_alloc(J, sizeof(double));
  P->warm = (int *) R_alloc(J, sizeof(int));
  P->nwarm = -1;
  if (!isNull(init_)) {
    int n = LENGTH(init_);
    if (n > J) error("internal error in synth.c: init is longer than the donors; please report");
    for (int i = 0; i < n; i++) P->warm[i] = INTEGER(init_)[i];
    P->nwarm = n;
  }
  sc_ws_init(&P->ws, k, J);
}

/* the MSPE at v (Inf when sum |v| is 0 or not finite; the weights and the
 * warm start are then left as they were) */
static double sc_vloss(sc_vprob *P, const double *v) {
  int k = P->k, J = P->J, T = P->T;
  double sv = 0.0;
  for (int i = 0; i < k; i++) sv += fabs(v[i]);
  if (!(sv > 0.0) || !R_FINITE(sv)) return R_PosInf;
  for (int i = 0; i < k; i++) {
    double s = sqrt(fabs(v[i]) / sv);
    P->b[i] = s * P->X1[i];
    for (int j = 0; j < J; j++) P->A[i + (R_xlen_t) j * k] = s * P->X0[i + (R_xlen_t) j * k];
  }
  double loss = 0.0;
  sc_fail(sc_solve(P->A, k, J, P->b, &P->ws, P->w, &loss, P->nwarm >= 0 ? P->warm : NULL,
                   P->nwarm >= 0 ? P->nwarm : 0));
  long double e = 0.0;
  for (int t = 0; t < T; t++) {
    double s = P->Z1[t];
    for (int j = 0; j < J; j++) s -= P->Z0[t + (R_xlen_t) j * T] * P->w[j];
    e += (long double) s * s;
  }
  int n = 0;
  for (int j = 0; j < J; j++) if (P->w[j] > 0.0) P->warm[n++] = j;
  P->nwarm = n;
  return (double) (e / T);
}

/* the support of the current warm start as an R integer vector (NULL: none) */
static SEXP sc_warm_sexp(const sc_vprob *P) {
  if (P->nwarm < 0) return R_NilValue;
  SEXP out = allocVector(INTSXP, P->nwarm);
  for (int i = 0; i < P->nwarm; i++) INTEGER(out)[i] = P->warm[i];
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
  sc_vprob P;
  sc_vprob_init(&P, X0_, X1_, Z0_, Z1_, init_, fn);
  dd_chk_vec(v_, REALSXP, P.k, 0, fn, "v");
  double e = sc_vloss(&P, REAL(v_));
  if (!R_FINITE(e)) return ScalarReal(e);
  SEXP W = PROTECT(allocVector(REALSXP, P.J));
  memcpy(REAL(W), P.w, (size_t) P.J * sizeof(double));
  SEXP out = PROTECT(ScalarReal(e));
  setAttrib(out, install("w"), W);
  UNPROTECT(2);
  return out;
}

/* nmmin's objective: optim()'s for Nelder-Mead with parscale and fnscale 1
 * (it refuses a non-finite parameter in the same words); Ctrl-C is checked
 * every 256 evaluations */
static double sc_nm_fn(int n, double *par, void *ex) {
  sc_vprob *P = (sc_vprob *) ex;
  for (int i = 0; i < n; i++)
    if (!R_FINITE(par[i])) error("non-finite value supplied by optim");
  if ((++P->neval & 255) == 0) R_CheckUserInterrupt();
  return sc_vloss(P, par);
}

/* vmmin's gradient: optim()'s finite differences without bounds (ndeps
 * 1e-3, central, +eps evaluated before -eps) */
static void sc_bfgs_gr(int n, double *par, double *df, void *ex) {
  const void *vmax = vmaxget();
  double *x = (double *) R_alloc(n, sizeof(double));
  const double eps = 1e-3;
  memcpy(x, par, (size_t) n * sizeof(double));
  for (int i = 0; i < n; i++) {
    x[i] = par[i] + eps;
    double v1 = sc_nm_fn(n, x, ex);
    x[i] = par[i] - eps;
    double v2 = sc_nm_fn(n, x, ex);
    df[i] = (v1 - v2) / (2 * eps);
    if (!R_FINITE(df[i])) error("non-finite finite-difference value [%d]", i + 1);
    x[i] = par[i];
  }
  vmaxset(vmax);
}

/* C_synth_nm(X0, X1, Z0, Z1, par, init, maxit, bfgs): stats::optim(par,
 * fn.V, method = "Nelder-Mead") with its defaults (abstol -Inf, reltol
 * sqrt(eps), alpha 1, beta 0.5, gamma 2) run by the same routine, R's
 * nmmin, without a call into R per evaluation; bfgs = TRUE:
 * optim(method = "BFGS") likewise (R's vmmin, optim's finite-difference
 * gradient, nREPORT 10). The warm start carries from `init` through the
 * evaluations as C_synth_vloss's calls in turn would carry it. Returns
 * list(par, value, counts (function, gradient), convergence, warm). */
SEXP C_synth_nm(SEXP X0_, SEXP X1_, SEXP Z0_, SEXP Z1_, SEXP par_, SEXP init_, SEXP maxit_, SEXP bfgs_) {
  const char *fn = "C_synth_nm";
  sc_vprob P;
  sc_vprob_init(&P, X0_, X1_, Z0_, Z1_, init_, fn);
  dd_chk_vec(par_, REALSXP, P.k, 0, fn, "par");
  int maxit = asInteger(maxit_);
  if (maxit == NA_INTEGER || maxit < 0) error("internal error in synth.c: bad maxit; please report");
  int k = P.k;
  double *b = (double *) R_alloc(k, sizeof(double)), *x = (double *) R_alloc(k, sizeof(double));
  memcpy(b, REAL(par_), (size_t) k * sizeof(double));
  double fmin = 0.0;
  int fail = 0, fncount = 0;
  int grcount = NA_INTEGER;
  if (asLogical(bfgs_)) {
    /* optim(method = "BFGS"): vmmin on the parameters in place */
    int *mask = (int *) R_alloc(k, sizeof(int));
    for (int i = 0; i < k; i++) mask[i] = 1;
    fmin = sc_nm_fn(k, b, (void *) &P);
    if (!R_FINITE(fmin)) error("initial value in 'vmmin' is not finite");
    vmmin(k, b, &fmin, sc_nm_fn, sc_bfgs_gr, maxit, 0, mask, R_NegInf, sqrt(DBL_EPSILON), 10, (void *) &P,
          &fncount, &grcount, &fail);
    memcpy(x, b, (size_t) k * sizeof(double));
  } else {
    nmmin(k, b, x, &fmin, sc_nm_fn, &fail, R_NegInf, sqrt(DBL_EPSILON), (void *) &P, 1.0, 0.5, 2.0, 0, &fncount,
          maxit);
  }
  SEXP Par = PROTECT(allocVector(REALSXP, k));
  memcpy(REAL(Par), x, (size_t) k * sizeof(double));
  SEXP Val = PROTECT(ScalarReal(fmin));
  SEXP Cnt = PROTECT(allocVector(INTSXP, 2));
  INTEGER(Cnt)[0] = fncount; INTEGER(Cnt)[1] = grcount;
  SEXP Cv = PROTECT(ScalarInteger(fail));
  SEXP Wm = PROTECT(sc_warm_sexp(&P));
  const char *nm[5] = {"par", "value", "counts", "convergence", "warm"};
  SEXP vals[5] = {Par, Val, Cnt, Cv, Wm};
  SEXP out = dd_named_list(5, nm, vals);
  UNPROTECT(5);
  return out;
}
