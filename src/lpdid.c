/* Local-projections DiD (Dube, Girardi, Jorda and Taylor 2025): one
 * horizon's regression of the long difference on the treatment switch with
 * period fixed effects, on its clean-control sample, in passes over the
 * units x periods grid.
 *
 * Regression (variance-weighted, or reweighted by W_t / W^C_t): each row's
 * weight is w_it (sampling weight, 1 without) times the period's factor
 * f_t, so the period-demeaned regressors and outcome come from the period's
 * weighted sums (pass 1). Without covariates the normal equation is
 * sum_t f_t (W1_t - W1_t^2 / W_t) beta = sum_t f_t (Sy1_t - W1_t Sy_t / W_t);
 * with covariates, pass 2 accumulates the demeaned cross-products and the
 * system is solved (linalg.c's Cholesky) with covariates aliased in order
 * where they are collinear with the switch, the period effects and the
 * earlier covariates.
 * The last pass adds each row's score f w (a' z~) e to its cluster, a the
 * switch's row of the inverse.
 *
 * Regression adjustment (ra): the outcome regression on the clean controls
 * only (period effects and covariates, pass 2), the treated rows' mean
 * residual as the effect, and its influence function (treated: w (r - tau)
 * / W1; controls: -w (pi_t / W0_t + a' x~) r, pi_t = W1_t / W1, a = M^{-1}
 * d, d = sum_t pi_t (xbar1_t - xbar0_t)); treated rows in periods without
 * a control are dropped.
 *
 * The sample: absorbing (G, the first treated period) or, for a
 * non-absorbing treatment, per-cell state from C_lpdid_state (the change
 * in D, the runs of unchanged / untreated periods before and of unchanged
 * periods after each cell).
 *
 * Entry points: C_lpdid_state, C_lpdid_horizon. */
#include "diffdiff.h"
#include <math.h>
#include <string.h>

#define LP_BIG 1000000000

typedef struct {
  const double *Y, *B, *G, *W, *X;
  const int *CL, *ST, *win;
  int N, T, p, nwin, hc, never_only, mode, L;
  R_xlen_t NT;
} lp_ctx;

/* the row (i, t): its long difference in *dy and whether it is in the
 * sample (1 clean treated, 0 clean control, -1 out) */
static int lp_row(const lp_ctx *x, int i, int t, double *dy) {
  R_xlen_t c = i + (R_xlen_t) t * x->N;
  if (x->CL[c] == NA_INTEGER) return -1;
  double b = x->B[c];
  if (ISNAN(b)) return -1;
  if (x->W && !(x->W[c] > 0.0)) return -1;
  int hc = x->hc, entry, ctrl;
  if (x->mode < 2) {
    /* absorbing (0) or first entry (1): G the first treated period (1-based) */
    double g = x->G[i], tt = (double) (t + 1);
    entry = tt == g && (x->mode == 0 || hc < 0 || x->ST[c + 3 * x->NT] >= hc);
    ctrl = tt < g && (hc < 0 || tt + hc < g) && (!x->never_only || !R_FINITE(g));
  } else {
    /* effect stabilisation after L periods */
    int dch = x->ST[c], ncb = x->ST[c + x->NT], r0b = x->ST[c + 2 * x->NT], nca = x->ST[c + 3 * x->NT];
    int m = hc < 0 ? (x->L > -hc ? x->L : -hc) : x->L;
    entry = dch == 1 && r0b >= m && (hc < 0 || nca >= hc);
    ctrl = hc >= 0 ? (dch == 0 && ncb >= m && nca >= hc) : (!entry && ncb >= m);
  }
  if (!entry && !ctrl) return -1;
  for (int j = 0; j < x->p; j++) if (ISNAN(x->X[c + (R_xlen_t) j * x->NT])) return -1;
  double s = 0.0;
  for (int k = 0; k < x->nwin; k++) {
    int u = t + x->win[k];
    if (u < 0 || u >= x->T) return -1;
    double v = x->Y[i + (R_xlen_t) u * x->N];
    if (ISNAN(v)) return -1;
    s += v;
  }
  *dy = s / x->nwin - b;
  return entry;
}

/* C_lpdid_state(D): D (N x T) the 0/1 treatment on the calendar grid (NA
 * where the unit is not observed; no gaps inside a unit's span). Returns
 * list(ST, first): ST (N x T x 4 integer) per cell the change in D (D at a
 * unit's first period counts as a change from 0), the run of periods just
 * before with no change and with D = 0 (periods before the unit's first
 * count as both, without end: LP_BIG), the run just after with no change
 * (to the unit's last period); first (N) the first period with D = 1 as a
 * 1-based index (Inf: never). */
SEXP C_lpdid_state(SEXP D_) {
  const char *fn = "C_lpdid_state";
  dd_chk_mat(D_, REALSXP, -1, -1, 0, fn, "D");
  int N = nrows(D_), T = ncols(D_);
  R_xlen_t NT = (R_xlen_t) N * T;
  const double *D = REAL(D_);
  SEXP ST_ = PROTECT(allocVector(INTSXP, 4 * NT)), F_ = PROTECT(allocVector(REALSXP, N));
  int *ST = INTEGER(ST_);
  double *F = REAL(F_);
  for (R_xlen_t c = 0; c < 4 * NT; c++) ST[c] = NA_INTEGER;
  for (int i = 0; i < N; i++) {
    if (i % 4096 == 0) R_CheckUserInterrupt();
    F[i] = R_PosInf;
    double prev = 0.0;
    int ncb = LP_BIG, r0b = LP_BIG;
    for (int t = 0; t < T; t++) {
      R_xlen_t c = i + (R_xlen_t) t * N;
      double d = D[c];
      if (ISNAN(d)) continue;
      int dch = (int) (d - prev);
      ST[c] = dch; ST[c + NT] = ncb; ST[c + 2 * NT] = r0b;
      if (d == 1.0 && !R_FINITE(F[i])) F[i] = t + 1;
      ncb = dch == 0 ? (ncb >= LP_BIG ? LP_BIG : ncb + 1) : 0;
      r0b = d == 0.0 ? (r0b >= LP_BIG ? LP_BIG : r0b + 1) : 0;
      prev = d;
    }
    int nca = 0;
    for (int t = T - 1; t >= 0; t--) {
      R_xlen_t c = i + (R_xlen_t) t * N;
      if (ST[c] == NA_INTEGER) continue;
      ST[c + 3 * NT] = nca;
      nca = ST[c] == 0 ? nca + 1 : 0;
    }
  }
  SEXP dim = PROTECT(allocVector(INTSXP, 3));
  INTEGER(dim)[0] = N; INTEGER(dim)[1] = T; INTEGER(dim)[2] = 4;
  setAttrib(ST_, R_DimSymbol, dim);
  const char *nm[2] = {"ST", "first"};
  SEXP vals[2] = {ST_, F_};
  SEXP out = dd_named_list(2, nm, vals);
  UNPROTECT(3);
  return out;
}

/* C_lpdid_horizon(Y, B, CL, G, W, X, ST, win, opts): Y, B (N x T) the
 * outcome and the base of each row (NA: none); CL (N x T, integer) the
 * 1-based cluster of each row, NA where the unit is not observed; G (N)
 * each unit's first treated period as a 1-based period index (Inf: never;
 * modes 0 and 1); W (N x T) sampling weights or NULL; X (N x T x p) the
 * covariates or NULL; ST (N x T x 4, C_lpdid_state) or NULL (mode 0); win
 * the offsets h averaged in the outcome; opts (integer): hc (the horizon
 * of the clean-sample rule), never_only, reweight, nclus, mode (0
 * absorbing, 1 first entry, 2 effect stabilisation), L, ra. Returns
 * list(b, score (nclus: the cluster sums of the influence function, not
 * scaled), n, n_treated, n_control, n_periods, n_clusters, k (the
 * regression's kept regressors incl. the switch), aliased (p), dropped (ra:
 * treated rows without a control in their period)). */
SEXP C_lpdid_horizon(SEXP Y_, SEXP B_, SEXP CL_, SEXP G_, SEXP W_, SEXP X_, SEXP ST_, SEXP win_, SEXP opts_) {
  const char *fn = "C_lpdid_horizon";
  dd_chk_mat(Y_, REALSXP, -1, -1, 0, fn, "Y");
  int N = nrows(Y_), T = ncols(Y_);
  R_xlen_t NT = (R_xlen_t) N * T;
  dd_chk_mat(B_, REALSXP, N, T, 0, fn, "B");
  dd_chk_mat(CL_, INTSXP, N, T, 0, fn, "CL");
  dd_chk_vec(G_, REALSXP, N, 0, fn, "G");
  dd_chk_mat(W_, REALSXP, N, T, 1, fn, "W");
  dd_chk_type(X_, REALSXP, 1, fn, "X");
  if (!isNull(X_) && (XLENGTH(X_) % (NT > 0 ? NT : 1) != 0 || NT == 0))
    error("internal error in lpdid.c: bad X; please report");
  dd_chk_vec(ST_, INTSXP, 4 * NT, 1, fn, "ST");
  if (TYPEOF(win_) != INTSXP || LENGTH(win_) < 1) error("internal error in lpdid.c: bad win; please report");
  dd_chk_vec(opts_, INTSXP, 7, 0, fn, "opts");
  const int *o = INTEGER(opts_);
  for (int k = 0; k < 7; k++) if (o[k] == NA_INTEGER) error("internal error in lpdid.c: bad opts; please report");
  lp_ctx x;
  x.Y = REAL(Y_); x.B = REAL(B_); x.G = REAL(G_); x.CL = INTEGER(CL_);
  x.W = isNull(W_) ? NULL : REAL(W_);
  x.X = isNull(X_) ? NULL : REAL(X_);
  x.p = isNull(X_) ? 0 : (int) (XLENGTH(X_) / NT);
  x.ST = isNull(ST_) ? NULL : INTEGER(ST_);
  x.win = INTEGER(win_); x.nwin = LENGTH(win_);
  x.N = N; x.T = T; x.NT = NT;
  x.hc = o[0]; x.never_only = o[1];
  int rw = o[2], nclus = o[3], ra = o[6];
  x.mode = o[4]; x.L = o[5];
  if (nclus < 1 || x.mode < 0 || x.mode > 2 || (x.mode > 0 && !x.ST))
    error("internal error in lpdid.c: bad nclus or mode; please report");
  int p = x.p, q = 1 + p;
  /* pass 1: per period the rows, treated rows, weights, weighted sums of
   * y and of each covariate (all rows; with ra: controls), and over the
   * treated rows */
  double *n = (double *) R_alloc(T, sizeof(double)), *n1 = (double *) R_alloc(T, sizeof(double));
  double *sw = (double *) R_alloc(T, sizeof(double)), *sw1 = (double *) R_alloc(T, sizeof(double));
  double *sy = (double *) R_alloc(T, sizeof(double)), *sy1 = (double *) R_alloc(T, sizeof(double));
  double *sx = (double *) R_alloc((size_t) T * (p + 1), sizeof(double));
  double *sx1 = (double *) R_alloc((size_t) T * (p + 1), sizeof(double));
  double *f = (double *) R_alloc(T, sizeof(double));
  memset(n, 0, T * sizeof(double)); memset(n1, 0, T * sizeof(double));
  memset(sw, 0, T * sizeof(double)); memset(sw1, 0, T * sizeof(double));
  memset(sy, 0, T * sizeof(double)); memset(sy1, 0, T * sizeof(double));
  memset(sx, 0, (size_t) T * (p + 1) * sizeof(double)); memset(sx1, 0, (size_t) T * (p + 1) * sizeof(double));
  /* each cell's sample status and long difference, kept for the later passes */
  signed char *st = (signed char *) R_alloc(NT > 0 ? NT : 1, sizeof(signed char));
  double *dyv = (double *) R_alloc(NT > 0 ? NT : 1, sizeof(double));
  for (int t = 0; t < T; t++) {
    R_CheckUserInterrupt();
    for (int i = 0; i < N; i++) {
      double dy = 0.0;
      int r = lp_row(&x, i, t, &dy);
      R_xlen_t c = i + (R_xlen_t) t * N;
      st[c] = (signed char) r; dyv[c] = dy;
      if (r < 0) continue;
      double w = x.W ? x.W[c] : 1.0;
      n[t] += 1.0;
      if (r) { n1[t] += 1.0; sw1[t] += w; sy1[t] += w * dy; }
      if (!ra || !r) { sw[t] += w; sy[t] += w * dy; }
      for (int j = 0; j < p; j++) {
        double v = w * x.X[c + (R_xlen_t) j * NT];
        if (r) sx1[t * p + j] += v;
        if (!ra || !r) sx[t * p + j] += v;
      }
    }
  }
  /* the periods in the regression: with reweighting (or ra) only those with
   * controls; with reweighting only those with treated rows too */
  double nn = 0.0, nt1 = 0.0, dropped = 0.0;
  int np = 0;
  for (int t = 0; t < T; t++) {
    f[t] = 0.0;
    if (n[t] == 0.0) continue;
    if (ra) {
      if (n1[t] == n[t]) { dropped += n1[t]; continue; }     /* no control */
      f[t] = 1.0;
    } else if (rw) {
      if (n1[t] == 0.0 || n1[t] == n[t]) continue;
      f[t] = sw[t] / (sw[t] - sw1[t]);
    } else f[t] = 1.0;
    np++; nn += n[t]; nt1 += n1[t];
  }
  /* pass 2: the normal equations (regression: the switch and covariates,
   * demeaned within period; ra: the covariates on the controls) */
  int qq = ra ? p : q;
  double *A = (double *) R_alloc((size_t) (qq > 0 ? qq : 1) * (qq > 0 ? qq : 1), sizeof(double));
  double *cv = (double *) R_alloc(qq > 0 ? qq : 1, sizeof(double));
  double *zt = (double *) R_alloc(q, sizeof(double));
  int *keep = (int *) R_alloc(q, sizeof(int));
  memset(A, 0, sizeof(double) * (qq > 0 ? qq * qq : 1)); memset(cv, 0, sizeof(double) * (qq > 0 ? qq : 1));
  double W1 = 0.0;
  for (int t = 0; t < T; t++) if (f[t] > 0.0) W1 += sw1[t];
  if (!ra && p == 0) {
    for (int t = 0; t < T; t++) {
      if (f[t] == 0.0) continue;
      A[0] += f[t] * (sw1[t] - sw1[t] * sw1[t] / sw[t]);
      cv[0] += f[t] * (sy1[t] - sw1[t] * sy[t] / sw[t]);
    }
  } else if (qq > 0) {
    for (int t = 0; t < T; t++) {
      if (f[t] == 0.0) continue;
      R_CheckUserInterrupt();
      double yb = sy[t] / sw[t], db = sw1[t] / sw[t];
      for (int i = 0; i < N; i++) {
        R_xlen_t c = i + (R_xlen_t) t * N;
        int r = st[c];
        if (r < 0 || (ra && r)) continue;
        double dy = dyv[c];
        double w = f[t] * (x.W ? x.W[c] : 1.0);
        int off = 0;
        if (!ra) { zt[0] = (double) r - db; off = 1; }
        for (int j = 0; j < p; j++) zt[off + j] = x.X[c + (R_xlen_t) j * NT] - sx[t * p + j] / sw[t];
        double yt = dy - yb;
        for (int a = 0; a < qq; a++) {
          cv[a] += w * zt[a] * yt;
          for (int b = a; b < qq; b++) A[b + (size_t) a * qq] += w * zt[a] * zt[b];
        }
      }
    }
  }
  SEXP Sc = PROTECT(allocVector(REALSXP, nclus));
  SEXP Al = PROTECT(allocVector(LGLSXP, p));
  double *sc = REAL(Sc);
  memset(sc, 0, nclus * sizeof(double));
  for (int j = 0; j < p; j++) LOGICAL(Al)[j] = 0;
  int *seen = (int *) R_alloc(nclus, sizeof(int));
  memset(seen, 0, nclus * sizeof(int));
  double b = NA_REAL;
  int ncl = 0, kept = 0;
  double *beta = (double *) R_alloc(q, sizeof(double)), *av = (double *) R_alloc(q, sizeof(double));
  int ok = np > 0 && nt1 > 0.0;
  if (ok && p > 0) {
    kept = dd_chol_alias(qq, A, keep, 1e-9);
    for (int j = 0; j < p; j++) LOGICAL(Al)[j] = !keep[(ra ? 0 : 1) + j];
    if (!ra && !keep[0]) ok = 0;       /* the switch has no variation left */
  }
  if (ok && ra) {
    /* the control regression's covariate coefficients, the effect and a */
    for (int a = 0; a < p; a++) beta[a] = cv[a];
    if (p > 0) dd_chol_solve_keep(p, A, keep, beta);
    double tau = 0.0;
    for (int a = 0; a < p; a++) av[a] = 0.0;
    for (int t = 0; t < T; t++) {
      if (f[t] == 0.0 || sw1[t] == 0.0) continue;
      double pi = sw1[t] / W1, g = sy1[t] / sw1[t] - sy[t] / sw[t];
      for (int a = 0; a < p; a++) {
        double dx = sx1[t * p + a] / sw1[t] - sx[t * p + a] / sw[t];
        g -= dx * beta[a];
        av[a] += pi * dx;
      }
      tau += pi * g;
    }
    if (p > 0) dd_chol_solve_keep(p, A, keep, av);
    b = tau;
    for (int t = 0; t < T; t++) {
      if (f[t] == 0.0) continue;
      R_CheckUserInterrupt();
      double yb = sy[t] / sw[t], pi = sw1[t] / W1;
      for (int i = 0; i < N; i++) {
        R_xlen_t c = i + (R_xlen_t) t * N;
        int r = st[c];
        if (r < 0) continue;
        double dy = dyv[c];
        double w = x.W ? x.W[c] : 1.0, e = dy - yb, h = pi / sw[t];
        for (int a = 0; a < p; a++) {
          double xt = x.X[c + (R_xlen_t) a * NT] - sx[t * p + a] / sw[t];
          e -= xt * beta[a];
          h += av[a] * xt;
        }
        int g = x.CL[c] - 1;
        if (g < 0 || g >= nclus) error("internal error in lpdid.c: bad cluster; please report");
        sc[g] += r ? w * (e - tau) / W1 : -w * h * e;
        if (!seen[g]) { seen[g] = 1; ncl++; }
      }
    }
  } else if (ok) {
    for (int a = 0; a < q; a++) beta[a] = cv[a];
    if (p == 0) {
      if (!(A[0] > 1e-12 * (nn > 1 ? nn : 1))) ok = 0;
      else { beta[0] = cv[0] / A[0]; av[0] = 1.0 / A[0]; kept = 1; }
    } else {
      dd_chol_solve_keep(q, A, keep, beta);
      for (int a = 0; a < q; a++) av[a] = a == 0 ? 1.0 : 0.0;
      dd_chol_solve_keep(q, A, keep, av);
    }
    if (ok) {
      b = beta[0];
      for (int t = 0; t < T; t++) {
        if (f[t] == 0.0) continue;
        R_CheckUserInterrupt();
        double db = sw1[t] / sw[t], yb = sy[t] / sw[t];
        for (int i = 0; i < N; i++) {
          R_xlen_t c = i + (R_xlen_t) t * N;
          int r = st[c];
          if (r < 0) continue;
          double dy = dyv[c];
          double w = f[t] * (x.W ? x.W[c] : 1.0), dt = (double) r - db;
          double e = (dy - yb) - beta[0] * dt, h = av[0] * dt;
          for (int a = 0; a < p; a++) {
            if (!keep[1 + a]) continue;
            double xt = x.X[c + (R_xlen_t) a * NT] - sx[t * p + a] / sw[t];
            e -= beta[1 + a] * xt;
            h += av[1 + a] * xt;
          }
          int g = x.CL[c] - 1;
          if (g < 0 || g >= nclus) error("internal error in lpdid.c: bad cluster; please report");
          sc[g] += w * h * e;
          if (!seen[g]) { seen[g] = 1; ncl++; }
        }
      }
    }
  }
  if (!ok) { b = NA_REAL; memset(sc, 0, nclus * sizeof(double)); ncl = 0; }
  SEXP Bv = PROTECT(ScalarReal(b)), Nn = PROTECT(ScalarReal(nn)), N1 = PROTECT(ScalarReal(nt1));
  SEXP N0 = PROTECT(ScalarReal(nn - nt1)), Np = PROTECT(ScalarInteger(np)), Nc = PROTECT(ScalarInteger(ncl));
  SEXP Kk = PROTECT(ScalarInteger(kept)), Dr = PROTECT(ScalarReal(dropped));
  const char *nm[10] = {"b", "score", "n", "n_treated", "n_control", "n_periods", "n_clusters", "k", "aliased",
                        "dropped"};
  SEXP vals[10] = {Bv, Sc, Nn, N1, N0, Np, Nc, Kk, Al, Dr};
  SEXP out = dd_named_list(10, nm, vals);
  UNPROTECT(10);
  return out;
}
