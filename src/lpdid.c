/* Local-projections DiD (Dube, Girardi, Jorda and Taylor 2025): one
 * horizon's regression of the long difference on the treatment switch with
 * period fixed effects, on its clean-control sample, in two passes over the
 * units x periods grid.
 *
 * Within a period the weights (1, or N_t / N^C_t when reweighting) are
 * constant, so the period-demeaned switch and outcome come from the
 * period's counts and sums: pass 1 collects, per period t, the rows n_t,
 * the newly treated rows n1_t, sum y and sum y over the treated; then
 * beta = sum_t w_t sum_i Dt_i y_i / sum_t w_t sum_i Dt_i^2 with
 * sum_i Dt_i y_i = Sy1 - n1 Sy / n and sum_i Dt_i^2 = n1 - n1^2 / n. Pass 2
 * adds each row's score w_t Dt_i e_i (e the residual) to its cluster.
 *
 * Entry point: C_lpdid_horizon. */
#include "diffdiff.h"
#include <math.h>
#include <string.h>

/* the row (i, t): its long difference in *dy and whether it is in the
 * sample (1 newly treated, 0 clean control, -1 out) */
static int lp_row(const double *Y, const double *B, const int *CL, const double *G, int N, int T, int i, int t,
                  const int *win, int nwin, int hc, int never_only, double *dy) {
  R_xlen_t c = i + (R_xlen_t) t * N;
  if (CL[c] == NA_INTEGER) return -1;
  double b = B[c];
  if (ISNAN(b)) return -1;
  double g = G[i], tt = (double) (t + 1);     /* 1-based period index */
  int entry = tt == g;
  int ctrl = tt < g && (hc < 0 || tt + hc < g) && (!never_only || !R_FINITE(g));
  if (!entry && !ctrl) return -1;
  double s = 0.0;
  for (int k = 0; k < nwin; k++) {
    int u = t + win[k];
    if (u < 0 || u >= T) return -1;
    double v = Y[i + (R_xlen_t) u * N];
    if (ISNAN(v)) return -1;
    s += v;
  }
  *dy = s / nwin - b;
  return entry;
}

/* C_lpdid_horizon(Y, B, CL, G, win, hc, never_only, reweight, nclus):
 * Y, B (N x T) the outcome and the base of each row (NA: none); CL (N x T,
 * integer) the 1-based cluster of each row, NA where the unit is not
 * observed; G (N) each unit's first treated period as a 1-based period
 * index (Inf: never); win the offsets h averaged in the outcome; hc the
 * horizon of the clean-control rule (< 0: not yet treated at t). Returns
 * list(b, score (nclus: the unscaled cluster sums of w Dt e / sum w Dt^2),
 * n, n_treated, n_control, n_periods, n_clusters, sdd). */
SEXP C_lpdid_horizon(SEXP Y_, SEXP B_, SEXP CL_, SEXP G_, SEXP win_, SEXP hc_, SEXP never_, SEXP rw_,
                     SEXP nclus_) {
  const char *fn = "C_lpdid_horizon";
  dd_chk_mat(Y_, REALSXP, -1, -1, 0, fn, "Y");
  int N = nrows(Y_), T = ncols(Y_);
  dd_chk_mat(B_, REALSXP, N, T, 0, fn, "B");
  dd_chk_mat(CL_, INTSXP, N, T, 0, fn, "CL");
  dd_chk_vec(G_, REALSXP, N, 0, fn, "G");
  if (TYPEOF(win_) != INTSXP || LENGTH(win_) < 1) error("internal error in lpdid.c: bad win; please report");
  int nclus = asInteger(nclus_), hc = asInteger(hc_), never_only = asLogical(never_), rw = asLogical(rw_);
  if (nclus == NA_INTEGER || nclus < 1) error("internal error in lpdid.c: bad nclus; please report");
  const double *Y = REAL(Y_), *B = REAL(B_), *G = REAL(G_);
  const int *CL = INTEGER(CL_), *win = INTEGER(win_);
  int nwin = LENGTH(win_);
  double *n = (double *) R_alloc(T, sizeof(double)), *n1 = (double *) R_alloc(T, sizeof(double));
  double *sy = (double *) R_alloc(T, sizeof(double)), *sy1 = (double *) R_alloc(T, sizeof(double));
  double *w = (double *) R_alloc(T, sizeof(double));
  memset(n, 0, T * sizeof(double)); memset(n1, 0, T * sizeof(double));
  memset(sy, 0, T * sizeof(double)); memset(sy1, 0, T * sizeof(double));
  for (int t = 0; t < T; t++) {
    R_CheckUserInterrupt();
    for (int i = 0; i < N; i++) {
      double dy;
      int r = lp_row(Y, B, CL, G, N, T, i, t, win, nwin, hc, never_only, &dy);
      if (r < 0) continue;
      n[t] += 1.0; sy[t] += dy;
      if (r) { n1[t] += 1.0; sy1[t] += dy; }
    }
  }
  /* the periods in the regression (with reweighting, only those with both
   * treated rows and controls), their weights, beta */
  double num = 0.0, sdd = 0.0, nn = 0.0, nt1 = 0.0;
  int np = 0;
  for (int t = 0; t < T; t++) {
    w[t] = 0.0;
    if (n[t] == 0.0) continue;
    if (rw) {
      if (n1[t] == 0.0 || n1[t] == n[t]) continue;
      w[t] = n[t] / (n[t] - n1[t]);
    } else w[t] = 1.0;
    np++; nn += n[t]; nt1 += n1[t];
    num += w[t] * (sy1[t] - n1[t] * sy[t] / n[t]);
    sdd += w[t] * (n1[t] - n1[t] * n1[t] / n[t]);
  }
  SEXP Sc = PROTECT(allocVector(REALSXP, nclus));
  double *sc = REAL(Sc);
  memset(sc, 0, nclus * sizeof(double));
  int *seen = (int *) R_alloc(nclus, sizeof(int));
  memset(seen, 0, nclus * sizeof(int));
  double b = NA_REAL;
  int ncl = 0;
  if (sdd > 1e-12 * (nn > 1 ? nn : 1)) {
    b = num / sdd;
    for (int t = 0; t < T; t++) {
      if (w[t] == 0.0) continue;
      R_CheckUserInterrupt();
      double db = n1[t] / n[t], yb = sy[t] / n[t];
      for (int i = 0; i < N; i++) {
        double dy;
        int r = lp_row(Y, B, CL, G, N, T, i, t, win, nwin, hc, never_only, &dy);
        if (r < 0) continue;
        double dt = (double) r - db, e = (dy - yb) - b * dt;
        int g = CL[i + (R_xlen_t) t * N] - 1;
        if (g < 0 || g >= nclus) error("internal error in lpdid.c: bad cluster; please report");
        sc[g] += w[t] * dt * e / sdd;
        if (!seen[g]) { seen[g] = 1; ncl++; }
      }
    }
  }
  SEXP Bv = PROTECT(ScalarReal(b)), Nn = PROTECT(ScalarReal(nn)), N1 = PROTECT(ScalarReal(nt1));
  SEXP N0 = PROTECT(ScalarReal(nn - nt1)), Np = PROTECT(ScalarInteger(np)), Nc = PROTECT(ScalarInteger(ncl));
  SEXP Sd = PROTECT(ScalarReal(sdd));
  const char *nm[8] = {"b", "score", "n", "n_treated", "n_control", "n_periods", "n_clusters", "sdd"};
  SEXP vals[8] = {Bv, Sc, Nn, N1, N0, Np, Nc, Sd};
  SEXP out = dd_named_list(8, nm, vals);
  UNPROTECT(8);
  return out;
}
