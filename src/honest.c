/* Rambachan-Roth sensitivity analysis (honest_did): the linear programs of the
 * Andrews-Roth-Pakes conditional test, solved by a dense revised simplex, and
 * the box-constrained quadratic program behind the optimal FLCI's worst-case
 * bias. Problem sizes are small (tens of rows); everything is serial.
 *
 * LP form used throughout:   max  c' lambda   s.t.  W' lambda = b,  lambda >= 0
 * with W m x n (column-major). For the ARP statistic W = [sd, X], b = e1, and
 * the optimal value is eta = min_{eta, delta} eta s.t. y - X delta <= eta sd.
 */
#include "diffdiff.h"
#include <float.h>
#include <string.h>
#include <math.h>
#include <Rmath.h>

typedef struct {
  int m, n;
  const double *W, *b;
  double *sgn;     /* n: sign making the artificial start feasible */
  int *basis;      /* n: 0..m-1 real, m+j artificial j */
  int *isbasic;    /* m + n */
  double *Binv;    /* n x n, column-major */
  double *xB;      /* n */
  double *col, *u, *pi, *Bmat; /* scratch */
  int *ipiv;
  double *lwork;
  int status;      /* 0 ok, 1 infeasible, 2 unbounded, 3 singular basis */
  int fresh;       /* Binv and xB are those lp_refactor computes for the current basis */
} dd_lp;

static void lp_col(const dd_lp *lp, int i, double *out) {
  int n = lp->n, m = lp->m;
  if (i < m) { for (int j = 0; j < n; j++) out[j] = lp->W[i + (size_t) j * m]; }
  else { for (int j = 0; j < n; j++) out[j] = 0.0; out[i - m] = lp->sgn[i - m]; }
}

static int lp_refactor(dd_lp *lp) {
  int n = lp->n, info = 0;
  for (int k = 0; k < n; k++) lp_col(lp, lp->basis[k], lp->Bmat + (size_t) k * n);
  /* Binv = B^{-1}: solve B X = I */
  for (int i = 0; i < n * n; i++) lp->Binv[i] = 0.0;
  for (int i = 0; i < n; i++) lp->Binv[i + (size_t) i * n] = 1.0;
  lp->fresh = 0;
  F77_CALL(dgesv)(&n, &n, lp->Bmat, &n, lp->ipiv, lp->Binv, &n, &info);
  if (info != 0) return 3;
  for (int i = 0; i < n; i++) {
    double s = 0.0;
    for (int j = 0; j < n; j++) s += lp->Binv[i + (size_t) j * n] * lp->b[j];
    lp->xB[i] = s;
  }
  lp->fresh = 1;
  return 0;
}

static void lp_init(dd_lp *lp, int m, int n, const double *W, const double *b) {
  lp->m = m; lp->n = n; lp->W = W; lp->b = b; lp->fresh = 0;
  lp->sgn = (double *) R_alloc(n, sizeof(double));
  lp->basis = (int *) R_alloc(n, sizeof(int));
  lp->isbasic = (int *) R_alloc(m + n, sizeof(int));
  lp->Binv = (double *) R_alloc((size_t) n * n, sizeof(double));
  lp->Bmat = (double *) R_alloc((size_t) n * n, sizeof(double));
  lp->xB = (double *) R_alloc(n, sizeof(double));
  lp->col = (double *) R_alloc(n, sizeof(double));
  lp->u = (double *) R_alloc(n, sizeof(double));
  lp->pi = (double *) R_alloc(n, sizeof(double));
  lp->ipiv = (int *) R_alloc(n, sizeof(int));
  for (int j = 0; j < n; j++) lp->sgn[j] = b[j] < 0 ? -1.0 : 1.0;
  for (int i = 0; i < m + n; i++) lp->isbasic[i] = 0;
  for (int j = 0; j < n; j++) { lp->basis[j] = m + j; lp->isbasic[m + j] = 1; }
  lp->status = lp_refactor(lp);
}

/* Simplex iterations for cost vector c (length m + n; artificials may enter
 * only when allow_art). Dantzig pricing, Bland's rule after a run of
 * degenerate pivots. Returns 0 optimal, 2 unbounded, 3 numerical failure. */
static int lp_iterate(dd_lp *lp, const double *c, int allow_art) {
  int m = lp->m, n = lp->n, ntot = m + n, degen = 0, since = 0;
  double cmax = 0.0;
  for (int i = 0; i < ntot; i++) if (fabs(c[i]) > cmax) cmax = fabs(c[i]);
  double tol_d = 1e-11 * (1.0 + cmax);
  for (int it = 0; it < 50 * (ntot + 10); it++) {
    if (since >= 25) { if (lp_refactor(lp)) return 3; since = 0; }
    for (int j = 0; j < n; j++) {
      double s = 0.0;
      for (int k = 0; k < n; k++) s += c[lp->basis[k]] * lp->Binv[k + (size_t) j * n];
      lp->pi[j] = s;
    }
    int enter = -1; double best = tol_d;
    int bland = degen > 30;
    int lim = allow_art ? ntot : m;
    for (int i = 0; i < lim; i++) {
      if (lp->isbasic[i]) continue;
      double d = c[i];
      if (i < m) { for (int j = 0; j < n; j++) d -= lp->pi[j] * lp->W[i + (size_t) j * m]; }
      else d -= lp->pi[i - m] * lp->sgn[i - m];
      if (d > best) { enter = i; if (bland) break; best = d; }
    }
    if (enter < 0) return 0;
    lp_col(lp, enter, lp->col);
    for (int k = 0; k < n; k++) {
      double s = 0.0;
      for (int j = 0; j < n; j++) s += lp->Binv[k + (size_t) j * n] * lp->col[j];
      lp->u[k] = s;
    }
    int leave = -1; double tmin = R_PosInf, ubest = 0.0;
    for (int k = 0; k < n; k++) {
      if (lp->u[k] <= 1e-11) continue;
      double t = lp->xB[k] > 0 ? lp->xB[k] / lp->u[k] : 0.0;
      if (t < tmin - 1e-13) { tmin = t; leave = k; ubest = lp->u[k]; }
      else if (t <= tmin + 1e-13) {
        if (bland ? lp->basis[k] < lp->basis[leave] : lp->u[k] > ubest) { leave = k; ubest = lp->u[k]; }
        if (t < tmin) tmin = t;
      }
    }
    if (leave < 0) return 2;
    degen = tmin <= 1e-13 ? degen + 1 : 0;
    /* pivot */
    lp->fresh = 0;
    double piv = lp->u[leave];
    for (int j = 0; j < n; j++) lp->Binv[leave + (size_t) j * n] /= piv;
    lp->xB[leave] /= piv;
    if (lp->xB[leave] < 0) lp->xB[leave] = 0.0;
    for (int k = 0; k < n; k++) {
      if (k == leave || lp->u[k] == 0.0) continue;
      double f = lp->u[k];
      for (int j = 0; j < n; j++) lp->Binv[k + (size_t) j * n] -= f * lp->Binv[leave + (size_t) j * n];
      lp->xB[k] -= f * lp->xB[leave];
      if (lp->xB[k] < 0 && lp->xB[k] > -1e-12) lp->xB[k] = 0.0;
    }
    lp->isbasic[lp->basis[leave]] = 0;
    lp->basis[leave] = enter;
    lp->isbasic[enter] = 1;
    since++;
  }
  return 3;
}

/* Phase 1: find a feasible basis. Returns the status. */
static int lp_phase1(dd_lp *lp) {
  if (lp->status) return lp->status;
  int m = lp->m, n = lp->n;
  double *c = (double *) R_alloc(m + n, sizeof(double));
  for (int i = 0; i < m; i++) c[i] = 0.0;
  for (int j = 0; j < n; j++) c[m + j] = -1.0;
  int st = lp_iterate(lp, c, 1);
  if (st) return lp->status = st;
  if ((st = lp_refactor(lp))) return lp->status = st;
  double bmax = 0.0, infeas = 0.0;
  for (int j = 0; j < n; j++) if (fabs(lp->b[j]) > bmax) bmax = fabs(lp->b[j]);
  for (int k = 0; k < n; k++) if (lp->basis[k] >= m) infeas += lp->xB[k];
  if (infeas > 1e-9 * (1.0 + bmax)) return lp->status = 1;
  /* drive zero-level artificials out of the basis where a real column can replace them */
  for (int k = 0; k < n; k++) {
    if (lp->basis[k] < m) continue;
    int best = -1; double bv = 1e-9;
    for (int i = 0; i < m; i++) {
      if (lp->isbasic[i]) continue;
      double s = 0.0;
      for (int j = 0; j < n; j++) s += lp->Binv[k + (size_t) j * n] * lp->W[i + (size_t) j * m];
      if (fabs(s) > bv) { bv = fabs(s); best = i; }
    }
    if (best < 0) continue;
    lp->isbasic[lp->basis[k]] = 0;
    lp->basis[k] = best;
    lp->isbasic[best] = 1;
    if ((st = lp_refactor(lp))) return lp->status = st;
  }
  return 0;
}

/* Solve max c'lambda from the current (feasible) basis. c has length m. On
 * return lam (length m) holds the solution and *val its value. */
static int lp_solve(dd_lp *lp, const double *cm, double *cfull, double *lam, double *val) {
  int m = lp->m, n = lp->n;
  if (lp->status) return lp->status;
  for (int i = 0; i < m; i++) cfull[i] = cm[i];
  for (int j = 0; j < n; j++) cfull[m + j] = 0.0;
  /* the feasible set does not change between calls: start from the last
   * basis, refactoring only when pivots have changed it since the last
   * refactorisation (a refactorisation of an unchanged basis gives the
   * same Binv and xB bit for bit) */
  int st = lp->fresh ? 0 : lp_refactor(lp);
  if (!st) st = lp_iterate(lp, cfull, 0);
  if (!st && !lp->fresh) st = lp_refactor(lp);
  if (st) return st;
  for (int i = 0; i < m; i++) lam[i] = 0.0;
  double v = 0.0;
  for (int k = 0; k < n; k++) {
    int i = lp->basis[k];
    if (i < m) { lam[i] = lp->xB[k] > 0 ? lp->xB[k] : 0.0; v += cm[i] * lam[i]; }
  }
  *val = v;
  return 0;
}

/* ---------- truncated normal quantile: x with P(Z <= x | l <= Z <= u) = p ---------- */
static double tn_quantile(double p, double l, double u) {
  if (p >= 1.0) return u;
  if (p <= 0.0) return l;
  int flip = 0;
  if (u < 0) { double t = l; l = -u; u = -t; p = 1.0 - p; flip = 1; }
  /* upper tails on the log scale: Q(x) = P(Z > x) */
  double lql = pnorm(l, 0.0, 1.0, 0, 1), lqu = pnorm(u, 0.0, 1.0, 0, 1);
  double x;
  if (l < 35) {
    double ql = exp(lql), qu = exp(lqu);
    x = qnorm(ql + (qu - ql) * p, 0.0, 1.0, 0, 0);
  } else {
    /* log(Q(l) + (Q(u) - Q(l)) p) = lql + log1p((exp(lqu - lql) - 1) p) */
    double lt = lql + log1p(expm1(lqu - lql) * p);
    x = qnorm(lt, 0.0, 1.0, 0, 1);
  }
  return flip ? -x : x;
}

/* ---------- the ARP test over a grid of theta ---------- */
typedef struct {
  int m, k;
  const double *Sig;   /* m x m */
  double *sd, *W;      /* m, m x (k+1) */
  double *eb;          /* e1 */
  dd_lp lp;
  double *cfull, *lam, *lam2, *gam, *bvec, *sT, *yc;
} arp_t;

static int arp_setup(arp_t *A, int m, int k, const double *X, const double *Sig) {
  A->m = m; A->k = k; A->Sig = Sig;
  int n = k + 1;
  A->sd = (double *) R_alloc(m, sizeof(double));
  A->W = (double *) R_alloc((size_t) m * n, sizeof(double));
  A->eb = (double *) R_alloc(n, sizeof(double));
  for (int i = 0; i < m; i++) {
    A->sd[i] = sqrt(fmax(Sig[i + (size_t) i * m], 0.0));
    A->W[i] = A->sd[i];
  }
  for (int j = 0; j < k; j++) for (int i = 0; i < m; i++) A->W[i + (size_t) (j + 1) * m] = X[i + (size_t) j * m];
  for (int j = 0; j < n; j++) A->eb[j] = j == 0 ? 1.0 : 0.0;
  A->cfull = (double *) R_alloc(m + n, sizeof(double));
  A->lam = (double *) R_alloc(m, sizeof(double));
  A->lam2 = (double *) R_alloc(m, sizeof(double));
  A->gam = (double *) R_alloc(m, sizeof(double));
  A->bvec = (double *) R_alloc(m, sizeof(double));
  A->sT = (double *) R_alloc(m, sizeof(double));
  A->yc = (double *) R_alloc(m, sizeof(double));
  lp_init(&A->lp, m, n, A->W, A->eb);
  return lp_phase1(&A->lp);
}

/* one side of the conditioning interval {c : max_lambda lambda'(sT + b c) = c} by
 * Newton steps on the convex function g(c) - c, starting at c0 (dir = +1 upper). */
static double arp_side(arp_t *A, double c0, double eta, int dir) {
  int m = A->m;
  double c = c0, val;
  for (int it = 0; it < 500; it++) {
    for (int i = 0; i < m; i++) A->yc[i] = A->sT[i] + A->bvec[i] * c;
    if (lp_solve(&A->lp, A->yc, A->cfull, A->lam2, &val)) return dir > 0 ? R_PosInf : R_NegInf;
    if (val - c <= 1e-9 * (1.0 + fabs(c))) return it == 0 ? (dir > 0 ? R_PosInf : R_NegInf) : c;
    double a = 0.0, bb = 0.0;
    for (int i = 0; i < m; i++) { a += A->lam2[i] * A->sT[i]; bb += A->lam2[i] * A->bvec[i]; }
    if (fabs(a) < 1.1102230246251565e-16 * 1.0) a = 0.0;
    double cn = a / (1.0 - bb);
    if (!R_FINITE(cn) || (dir > 0 ? cn >= c : cn <= c)) return c;
    if (dir > 0 ? cn < eta : cn > eta) return eta;
    c = cn;
  }
  return c;
}

/* hybrid: 0 conditional (ARP), 1 least favourable (LF), 2 FLCI */
/* dnorm: NULL for the test with nuisance parameters; with one post period
 * (no nuisance) the normalised d_j / sd_j of each moment, and HonestDiD's
 * no-nuisance conventions apply: the statistic gamma'y has mean dnorm_j, the
 * critical value max(0, .) is taken on that scale (reject iff
 * eta > max(-dnorm_j, q)), and the LF hybrid does not cap the conditioning
 * interval at lf_cv. */
static int arp_test(arp_t *A, const double *y, double alpha, int hybrid, double lf_cv,
                    double flci_e, double flci_half, const double *flci_g, const double *dnorm) {
  int m = A->m;
  double eta;
  int st = lp_solve(&A->lp, y, A->cfull, A->lam, &eta);
  if (st == 2) return 0;       /* eta = -Inf: not rejected */
  if (st) return -1;
  double size = alpha;
  if (hybrid == 1) {
    if (eta > lf_cv) return 1;
  } else if (hybrid == 2) {
    if (fabs(flci_e) >= flci_half * (1 - 1e-12)) return 1;   /* the FLCI's boundary points count as outside */
  }
  if (hybrid) { double kap = alpha / 10.0; size = (alpha - kap) / (1.0 - kap); }
  /* the critical value is >= 0: eta <= 0 is never rejected (whatever the conditioning interval) */
  if (!dnorm && eta <= 0) return 0;
  for (int i = 0; i < m; i++) A->gam[i] = A->lam[i];
  double s2 = 0.0;
  for (int i = 0; i < m; i++) {
    double s = 0.0;
    for (int j = 0; j < m; j++) s += A->Sig[i + (size_t) j * m] * A->gam[j];
    A->bvec[i] = s; s2 += A->gam[i] * s;
  }
  if (fabs(s2) < DBL_EPSILON) return 1;   /* eta > 0 here */
  for (int i = 0; i < m; i++) { A->bvec[i] /= s2; A->sT[i] = y[i] - A->bvec[i] * eta; }
  double sB = sqrt(s2);
  double hi = fmax(100.0, eta + 20 * sB), lo = fmin(-100.0, eta - 20 * sB);
  double vup = arp_side(A, hi, eta, 1);
  double vlo = arp_side(A, lo, eta, -1);
  if (hybrid == 1) { if (!dnorm && lf_cv < vup) vup = lf_cv; }
  else if (hybrid == 2) {
    double uu = 0.0;
    for (int i = 0; i < m; i++) uu += flci_g[i] * A->gam[i];
    uu /= s2;
    if (uu != 0.0) {
      double r1 = eta + (flci_half - flci_e) / uu, r2 = eta - (flci_half + flci_e) / uu;
      double fu = uu > 0 ? r1 : r2, fl = uu > 0 ? r2 : r1;
      if (fu < vup) vup = fu;
      if (fl > vlo) vlo = fl;
    }
  }
  double ms = eta / sB, zlo = vlo / sB, zup = vup / sB;
  if (dnorm) {
    int jm = 0;
    for (int i = 1; i < m; i++) if (A->gam[i] > A->gam[jm]) jm = i;
    double q = tn_quantile(1.0 - size, zlo, zup);
    return ms > fmax(-dnorm[jm], q);
  }
  if (!(zlo <= ms && ms <= zup)) return 0;
  double cv = tn_quantile(1.0 - size, zlo, zup);
  if (!(cv > 0)) cv = 0.0;
  return ms > cv;
}

/* accept (1) / reject (0) at each theta of the grid; NA when the LP failed.
 * y(theta) = Y - a1 theta; X m x k; Sig m x m. Points with skip == 1 are not
 * tested (returned as accepted). dnorm: length m for the no-nuisance test
 * (one post period), length 0 otherwise. */
SEXP C_arp_grid(SEXP Y, SEXP a1, SEXP X, SEXP Sig, SEXP grid, SEXP opts, SEXP flci_g, SEXP skip,
                SEXP dnorm) {
  const char *fn = "C_arp_grid";
  dd_chk_type(Y, REALSXP, 0, fn, "Y");
  {
    const int m0 = LENGTH(Y);
    if (m0 < 1) error("internal error in %s: `Y` is empty; please report", fn);
    dd_chk_vec(a1, REALSXP, m0, 0, fn, "a1");
    dd_chk_mat(X, REALSXP, m0, -1, 0, fn, "X");
    dd_chk_mat(Sig, REALSXP, m0, m0, 0, fn, "Sig");
    dd_chk_type(grid, REALSXP, 0, fn, "grid");
    if (TYPEOF(opts) != REALSXP || (LENGTH(opts) != 5 && LENGTH(opts) != 6))
      error("internal error in %s: `opts` must be a numeric vector of length 5 or 6; please report", fn);
    const double hy = REAL(opts)[1];
    if (!(hy == 0.0 || hy == 1.0 || hy == 2.0)) error("internal error in %s: `opts[2]` (hybrid) must be 0, 1 or 2; please report", fn);
    dd_chk_vec(flci_g, REALSXP, m0, 0, fn, "flci_g");
    dd_chk_vec(skip, INTSXP, LENGTH(grid), 0, fn, "skip");
    dd_chk_type(dnorm, REALSXP, 0, fn, "dnorm");
  }
  int m = LENGTH(Y), k = ncols(X), ng = LENGTH(grid);
  const double *o = REAL(opts);
  double alpha = o[0], lf_cv = o[2], fc = o[3], fh = o[4];
  int hybrid = (int) o[1];
  const int no_scan = LENGTH(opts) >= 6 && o[5] != 0.0;
  const double *dn = LENGTH(dnorm) == m && k == 0 ? REAL(dnorm) : NULL;
  arp_t A;
  SEXP out = PROTECT(allocVector(INTSXP, ng));
  int *acc = INTEGER(out);
  int st = arp_setup(&A, m, k, REAL(X), REAL(Sig));
  double *y = (double *) R_alloc(m, sizeof(double));
  double tlast = -1.0;
  /* The least-favourable hybrid rejects wherever eta(theta) > lf_cv, its
   * first stage. eta(theta) = min_delta max_i (y_i - a1_i theta - X_i
   * delta) / sd_i is convex in theta (a partial minimum of a jointly convex
   * function), so the points that pass the first stage form an interval of
   * the grid. It is found from eta alone (one LP a point) at every STRIDE-th
   * point and point by point near its ends (around the smallest eta when no
   * coarse point passes); only the points within it, MARGIN points either
   * side included, are tested in full, the others are rejected as the first
   * stage would reject them. Any LP failure in the scan: every point is
   * tested. tst: 1 test, 0 reject. */
  enum { STRIDE = 16, MARGIN = 2 };
  char *tst = NULL;
  int ntested = 0;
  if (!st && hybrid == 1 && !dn && !no_scan && ng > 4 * STRIDE) {
    double *eg = (double *) R_alloc(ng, sizeof(double));
    char *have = (char *) R_alloc(ng, 1);
    memset(have, 0, ng);
    int fail = 0;
#define ETA_AT(gi) do { \
      if (!have[gi] && !fail) { \
        double th_ = REAL(grid)[gi], v_; \
        for (int i_ = 0; i_ < m; i_++) y[i_] = REAL(Y)[i_] - REAL(a1)[i_] * th_; \
        if (lp_solve(&A.lp, y, A.cfull, A.lam, &v_) || !R_FINITE(v_)) fail = 1; \
        else { eg[gi] = v_; have[gi] = 1; } \
      } } while (0)
    int lo = -1, hi = -1, jmin = -1, jmin2 = -1;
    for (int g = 0; !fail; g = g + STRIDE < ng - 1 ? g + STRIDE : (g == ng - 1 ? ng : ng - 1)) {
      if (g >= ng) break;
      dd_check_interrupt(&tlast);
      ETA_AT(g);
      if (fail) break;
      if (eg[g] <= lf_cv) { if (lo < 0) lo = g; hi = g; }
      if (jmin < 0 || eg[g] < eg[jmin]) { jmin = g; jmin2 = g; }
      else if (eg[g] == eg[jmin]) jmin2 = g;
    }
    if (!fail && lo < 0) {
      /* no coarse point passes: the interval, if any, lies strictly between
       * the coarse neighbours of the smallest coarse eta */
      int a = jmin - STRIDE < 0 ? 0 : jmin - STRIDE, b = jmin2 + STRIDE > ng - 1 ? ng - 1 : jmin2 + STRIDE;
      for (int g = a; g <= b && !fail; g++) {
        ETA_AT(g);
        if (!fail && eg[g] <= lf_cv) { if (lo < 0) lo = g; hi = g; }
      }
    } else if (!fail) {
      /* extend the coarse ends point by point (at most STRIDE - 1 each way) */
      while (lo > 0 && !fail) { ETA_AT(lo - 1); if (fail || eg[lo - 1] > lf_cv) break; lo--; }
      while (hi < ng - 1 && !fail) { ETA_AT(hi + 1); if (fail || eg[hi + 1] > lf_cv) break; hi++; }
    }
#undef ETA_AT
    if (!fail) {
      tst = (char *) R_alloc(ng, 1);
      memset(tst, 0, ng);
      if (lo >= 0) {
        int a = lo - MARGIN < 0 ? 0 : lo - MARGIN, b = hi + MARGIN > ng - 1 ? ng - 1 : hi + MARGIN;
        memset(tst + a, 1, (size_t) (b - a + 1));
      }
    }
  }
  for (int g = 0; g < ng; g++) {
    dd_check_interrupt(&tlast);   /* serial loop: Ctrl-C between grid points */
    if (INTEGER(skip)[g] == 1) { acc[g] = 1; continue; }   /* already accepted (union over sub-problems) */
    if (st) { acc[g] = NA_INTEGER; continue; }
    if (tst && !tst[g]) { acc[g] = 0; continue; }        /* outside the first stage's interval */
    double th = REAL(grid)[g];
    for (int i = 0; i < m; i++) y[i] = REAL(Y)[i] - REAL(a1)[i] * th;
    int r = arp_test(&A, y, alpha, hybrid, lf_cv, fc - th, fh, REAL(flci_g), dn);
    ntested++;
    acc[g] = r < 0 ? NA_INTEGER : 1 - r;
  }
  /* how many points were tested in full (the tests read it) */
  SEXP nt = PROTECT(ScalarInteger(ntested));
  setAttrib(out, install("tested"), nt);
  UNPROTECT(2);
  return out;
}

/* eta (the LP value) for each column of Xi (m x nsim); NA on failure */
SEXP C_arp_eta(SEXP X, SEXP Sig, SEXP Xi) {
  const char *fn = "C_arp_eta";
  dd_chk_mat(Xi, REALSXP, -1, -1, 0, fn, "Xi");
  if (nrows(Xi) < 1) error("internal error in %s: `Xi` is empty; please report", fn);
  dd_chk_mat(X, REALSXP, nrows(Xi), -1, 0, fn, "X");
  dd_chk_mat(Sig, REALSXP, nrows(Xi), nrows(Xi), 0, fn, "Sig");
  int m = nrows(Xi), k = ncols(X), ns = ncols(Xi), n = k + 1;
  arp_t A;
  SEXP out = PROTECT(allocVector(REALSXP, ns));
  int st = arp_setup(&A, m, k, REAL(X), REAL(Sig));
  /* The feasible set is the same for every draw, only the objective changes:
   * the optimal bases found so far (with their refactorised Binv and xB) are
   * kept, and each draw starts from the one whose vertex has the largest
   * objective value, so that few pivots remain. */
  enum { NCACHE = 64 };
  int *cb = (int *) R_alloc((size_t) NCACHE * n, sizeof(int));
  double *cBinv = (double *) R_alloc((size_t) NCACHE * n * n, sizeof(double));
  double *cxB = (double *) R_alloc((size_t) NCACHE * n, sizeof(double));
  int ncache = 0, nextc = 0, cur = -1;
  dd_lp *lp = &A.lp;
  for (int s = 0; s < ns; s++) {
    double v = NA_REAL;
    const double *xi = REAL(Xi) + (size_t) s * m;
    if (!st) {
      if (ncache > 1) {
        int best = -1; double bv = R_NegInf;
        for (int c = 0; c < ncache; c++) {
          double val = 0.0;
          for (int j = 0; j < n; j++) {
            int i = cb[(size_t) c * n + j];
            if (i < m) val += cxB[(size_t) c * n + j] * xi[i];
          }
          if (val > bv) { bv = val; best = c; }
        }
        if (best >= 0 && best != cur) {
          for (int j = 0; j < n; j++) lp->isbasic[lp->basis[j]] = 0;
          for (int j = 0; j < n; j++) { lp->basis[j] = cb[(size_t) best * n + j]; lp->isbasic[lp->basis[j]] = 1; }
          memcpy(lp->Binv, cBinv + (size_t) best * n * n, sizeof(double) * (size_t) n * n);
          memcpy(lp->xB, cxB + (size_t) best * n, sizeof(double) * (size_t) n);
          lp->fresh = 1;
          cur = best;
        }
      }
      int r = lp_solve(lp, xi, A.cfull, A.lam, &v);
      if (r == 2) v = R_NegInf; else if (r) v = NA_REAL;
      if (r == 0 && lp->fresh) {
        /* the optimal basis: the cached one it started from, or a new one */
        int same = cur >= 0;
        for (int j = 0; same && j < n; j++) same = cb[(size_t) cur * n + j] == lp->basis[j];
        if (!same) {
          int c = ncache < NCACHE ? ncache++ : nextc;
          if (c == nextc && ncache == NCACHE) nextc = (nextc + 1) % NCACHE;
          memcpy(cb + (size_t) c * n, lp->basis, sizeof(int) * (size_t) n);
          memcpy(cBinv + (size_t) c * n * n, lp->Binv, sizeof(double) * (size_t) n * n);
          memcpy(cxB + (size_t) c * n, lp->xB, sizeof(double) * (size_t) n);
          cur = c;
        }
      } else cur = -1;
    }
    REAL(out)[s] = v;
  }
  UNPROTECT(1);
  return out;
}

/* general LP: max c'lambda s.t. W'lambda = b, lambda >= 0. Returns the value
 * (NA infeasible, +Inf unbounded). */
SEXP C_lp_max(SEXP W, SEXP b, SEXP c) {
  const char *fn = "C_lp_max";
  dd_chk_mat(W, REALSXP, -1, -1, 0, fn, "W");
  if (nrows(W) < 1 || ncols(W) < 1) error("internal error in %s: `W` is empty; please report", fn);
  dd_chk_vec(b, REALSXP, ncols(W), 0, fn, "b");
  dd_chk_vec(c, REALSXP, nrows(W), 0, fn, "c");
  int m = nrows(W), n = ncols(W);
  dd_lp lp;
  lp_init(&lp, m, n, REAL(W), REAL(b));
  int st = lp_phase1(&lp);
  double v = NA_REAL;
  if (!st) {
    double *cf = (double *) R_alloc(m + n, sizeof(double));
    double *lam = (double *) R_alloc(m, sizeof(double));
    st = lp_solve(&lp, REAL(c), cf, lam, &v);
    if (st == 2) v = R_PosInf; else if (st) v = NA_REAL;
  }
  return ScalarReal(v);
}

/* ---------- truncated normal quantile, vectorised (for tests) ---------- */
SEXP C_tn_quantile(SEXP p, SEXP l, SEXP u) {
  dd_chk_type(p, REALSXP, 0, "C_tn_quantile", "p");
  dd_chk_vec(l, REALSXP, XLENGTH(p), 0, "C_tn_quantile", "l");
  dd_chk_vec(u, REALSXP, XLENGTH(p), 0, "C_tn_quantile", "u");
  int n = LENGTH(p);
  SEXP out = PROTECT(allocVector(REALSXP, n));
  for (int i = 0; i < n; i++) REAL(out)[i] = tn_quantile(REAL(p)[i], REAL(l)[i], REAL(u)[i]);
  UNPROTECT(1);
  return out;
}

/* ---------- simulated folded-normal quantile ----------
 * zs: sorted draws. Type-7 sample quantile of |z + mu| at probability p, using
 * order statistics of the union of the two sorted runs (z >= -mu ascending and
 * z < -mu descending), found by binary search: O(log n) per call. */
static double kth_abs(const double *zs, R_xlen_t n, double mu, R_xlen_t k /* 0-based */) {
  /* split: j0 = first index with zs[j] + mu >= 0 */
  R_xlen_t lo = 0, hi = n;
  while (lo < hi) { R_xlen_t mid = lo + (hi - lo) / 2; if (zs[mid] + mu >= 0) hi = mid; else lo = mid + 1; }
  R_xlen_t j0 = lo, na = n - j0, nb = j0;   /* A_i = zs[j0+i]+mu ; B_i = -(zs[j0-1-i]+mu) */
  /* k-th smallest (0-based) of the merged runs: number taken from A is t in [max(0,k+1-nb), min(k+1,na)] */
  R_xlen_t tlo = k + 1 - nb > 0 ? k + 1 - nb : 0, thi = k + 1 < na ? k + 1 : na;
  while (tlo < thi) {
    R_xlen_t t = tlo + (thi - tlo) / 2;   /* take t from A, k+1-t from B */
    R_xlen_t s = k + 1 - t;
    /* if A[t] < B[s-1], need more from A */
    double At = t < na ? zs[j0 + t] + mu : R_PosInf;
    double Bs1 = s >= 1 ? -(zs[j0 - s] + mu) : R_NegInf;
    if (At < Bs1) tlo = t + 1; else thi = t;
  }
  R_xlen_t t = tlo, s = k + 1 - t;
  double a = t >= 1 ? zs[j0 + t - 1] + mu : R_NegInf;
  double b = s >= 1 ? -(zs[j0 - s] + mu) : R_NegInf;
  return a > b ? a : b;
}

SEXP C_qfold(SEXP zs, SEXP p, SEXP mu) {
  dd_chk_type(zs, REALSXP, 0, "C_qfold", "zs");
  dd_chk_type(mu, REALSXP, 0, "C_qfold", "mu");
  if (XLENGTH(zs) < 1) error("internal error in C_qfold: `zs` is empty; please report");
  R_xlen_t n = XLENGTH(zs);
  int nm = LENGTH(mu);
  double pp = dd_chk_num(p, 0, "C_qfold", "p");
  if (pp < 0.0 || pp > 1.0) error("internal error in C_qfold: `p` must be in [0, 1]; please report");
  SEXP out = PROTECT(allocVector(REALSXP, nm));
  double index = 1 + (double) (n - 1) * pp;
  double lo = floor(index), hi = ceil(index), h = index - lo;
  for (int i = 0; i < nm; i++) {
    double m = REAL(mu)[i];
    double xl = kth_abs(REAL(zs), n, m, (R_xlen_t) lo - 1);
    double q = xl;
    if (index > lo) {
      double xh = kth_abs(REAL(zs), n, m, (R_xlen_t) hi - 1);
      if (xh != xl) q = (1 - h) * xl + h * xh;
    }
    REAL(out)[i] = q;
  }
  UNPROTECT(1);
  return out;
}

/* ---------- FLCI worst-case bias: max_{mu in [-1,1]^n} mu'a - r sqrt(mu'H mu) ----------
 * Through the Lagrangian: for t > 0 the box QP  min 1/2 mu'H mu - t a'mu  has
 * solution mu(t), and the optimum has sqrt(mu'H mu) = t r. The box QP is solved
 * by a primal active-set method; t by bisection, finished exactly on the final
 * active set (a quadratic in t). H is positive definite. */
typedef struct { int n; const double *H, *a; double *mu, *work, *sub, *rhs, *z; int *fix; } boxqp;
/* All scratch (z: n doubles for bq_solve) is allocated once by the caller:
 * the solvers run inside bisection loops, and R_alloc there would grow memory
 * with every iteration until the .Call returns. */

/* solve the equality problem on the free set: mu_F = H_FF^{-1}(t a_F - H_FB mu_B) */
static int bq_free_solve(boxqp *B, double t, const double *mu, double *z) {
  int n = B->n, nf = 0, info = 0, one = 1;
  int *idx = (int *) B->work;  /* reuse as int scratch of size n */
  for (int i = 0; i < n; i++) if (!B->fix[i]) idx[nf++] = i;
  for (int i = 0; i < n; i++) z[i] = mu[i];
  if (!nf) return 0;
  for (int p = 0; p < nf; p++) {
    int i = idx[p];
    double r = t * B->a[i];
    for (int j = 0; j < n; j++) if (B->fix[j]) r -= B->H[i + (size_t) j * n] * mu[j];
    B->rhs[p] = r;
    for (int q = 0; q < nf; q++) B->sub[p + (size_t) q * nf] = B->H[i + (size_t) idx[q] * n];
  }
  F77_CALL(dpotrf)("L", &nf, B->sub, &nf, &info FCONE);
  if (info) return 1;
  F77_CALL(dpotrs)("L", &nf, &one, B->sub, &nf, B->rhs, &nf, &info FCONE);
  if (info) return 1;
  for (int p = 0; p < nf; p++) z[idx[p]] = B->rhs[p];
  return 0;
}

static int bq_solve(boxqp *B, double t) {
  int n = B->n;
  double *z = B->z;
  /* start from the current mu (feasible), with the current fixed set */
  for (int it = 0; it < 50 * n + 100; it++) {
    if (bq_free_solve(B, t, B->mu, z)) return 1;
    double step = 1.0; int block = -1;
    for (int i = 0; i < n; i++) {
      if (B->fix[i]) continue;
      double d = z[i] - B->mu[i];
      if (z[i] > 1.0 && d > 0) { double s = (1.0 - B->mu[i]) / d; if (s < step) { step = s; block = i; } }
      if (z[i] < -1.0 && d < 0) { double s = (-1.0 - B->mu[i]) / d; if (s < step) { step = s; block = i; } }
    }
    for (int i = 0; i < n; i++) if (!B->fix[i]) B->mu[i] += step * (z[i] - B->mu[i]);
    if (block >= 0) {
      B->mu[block] = z[block] > 1.0 ? 1.0 : -1.0;
      B->fix[block] = z[block] > 1.0 ? 1 : -1;
      for (int i = 0; i < n; i++) if (!B->fix[i] && fabs(B->mu[i]) >= 1.0) {
        B->mu[i] = B->mu[i] > 0 ? 1.0 : -1.0; B->fix[i] = B->mu[i] > 0 ? 1 : -1;
      }
      continue;
    }
    /* optimal on this face: check the multipliers of the fixed variables */
    int rel = -1; double worst = 1e-12 * (1.0 + t);
    for (int i = 0; i < n; i++) {
      if (!B->fix[i]) continue;
      double g = -t * B->a[i];
      for (int j = 0; j < n; j++) g += B->H[i + (size_t) j * n] * B->mu[j];
      double viol = B->fix[i] > 0 ? g : -g;
      if (viol > worst) { worst = viol; rel = i; }
    }
    if (rel < 0) return 0;
    B->fix[rel] = 0;
  }
  return 1;
}

static double bq_quad(const boxqp *B, const double *v, const double *w) {
  int n = B->n; double s = 0.0;
  for (int i = 0; i < n; i++) { double r = 0.0; for (int j = 0; j < n; j++) r += B->H[i + (size_t) j * n] * w[j]; s += v[i] * r; }
  return s;
}

SEXP C_flci_bias(SEXP H, SEXP a, SEXP r_) {
  dd_chk_type(a, REALSXP, 0, "C_flci_bias", "a");
  dd_chk_mat(H, REALSXP, LENGTH(a), LENGTH(a), 0, "C_flci_bias", "H");
  int n = LENGTH(a);
  double r = dd_chk_num(r_, 1, "C_flci_bias", "r");
  boxqp B; B.n = n; B.H = REAL(H); B.a = REAL(a);
  B.mu = (double *) R_alloc(n, sizeof(double));
  B.work = (double *) R_alloc(n + 1, sizeof(double) > sizeof(int) ? sizeof(double) : sizeof(int));
  B.sub = (double *) R_alloc((size_t) n * n + 1, sizeof(double));
  B.rhs = (double *) R_alloc(n + 1, sizeof(double));
  B.fix = (int *) R_alloc(n + 1, sizeof(int));
  B.z = (double *) R_alloc(n + 1, sizeof(double));
  SEXP out = PROTECT(allocVector(REALSXP, n + 2));   /* mu, value, status */
  double *res = REAL(out);
  int status = 0;
  for (int i = 0; i < n; i++) { B.mu[i] = 0.0; B.fix[i] = 0; }
  /* unconstrained direction: H^{-1} a, and sqrt(a'H^{-1}a) */
  if (bq_free_solve(&B, 1.0, B.mu, res)) status = 1;
  double s0 = 0.0, zmax = 0.0;
  for (int i = 0; i < n && !status; i++) { s0 += REAL(a)[i] * res[i]; if (fabs(res[i]) > zmax) zmax = fabs(res[i]); }
  double root = sqrt(fmax(s0, 0.0));
  double *mu = B.mu;
  if (status || r >= root || zmax == 0.0) {
    for (int i = 0; i < n; i++) mu[i] = 0.0;
  } else if (r <= 0.0) {
    for (int i = 0; i < n; i++) mu[i] = REAL(a)[i] > 0 ? 1.0 : (REAL(a)[i] < 0 ? -1.0 : 0.0);
  } else {
    double tlo = 0.5 / zmax, thi = 2.0 / zmax;
    /* g(t) = sqrt(mu'H mu)/t is non-increasing; find g(thi) < r */
    for (int i = 0; i < n; i++) { mu[i] = 0.0; B.fix[i] = 0; }
    int found = 0;
    double *P = (double *) R_alloc(n, sizeof(double)), *Qv = (double *) R_alloc(n, sizeof(double));
    double *m2 = (double *) R_alloc(n, sizeof(double));
    int *fx2 = (int *) R_alloc(n, sizeof(int));
    /* scratch of the exact step, allocated once for all iterations */
    double *z = (double *) R_alloc(n, sizeof(double)), *z0 = (double *) R_alloc(n, sizeof(double));
    double *zero = (double *) R_alloc(n, sizeof(double));
    for (int i = 0; i < n; i++) zero[i] = 0.0;   /* read only (as B.a) */
    for (int it = 0; it < 200; it++) {
      if (bq_solve(&B, thi)) { status = 1; break; }
      if (sqrt(fmax(bq_quad(&B, mu, mu), 0.0)) / thi < r) break;
      tlo = thi; thi *= 4.0;
    }
    double t = thi;
    for (int it = 0; it < 300 && !status && !found; it++) {
      t = 0.5 * (tlo + thi);
      if (bq_solve(&B, t)) { status = 1; break; }
      /* exact t on this active set: mu(t) = t P + Qv */
      for (int i = 0; i < n; i++) { P[i] = 0.0; Qv[i] = B.fix[i] ? (double) B.fix[i] : 0.0; }
      {
        if (bq_free_solve(&B, 1.0, Qv, z)) { status = 1; break; }   /* free part: H_FF^{-1}(a_F - H_FB s_B) */
        /* z0 = H_FF^{-1}(0 - H_FB s_B) */
        const double *asave = B.a;
        B.a = zero; int e2 = bq_free_solve(&B, 1.0, Qv, z0); B.a = asave;
        if (e2) { status = 1; break; }
        for (int i = 0; i < n; i++) if (!B.fix[i]) { P[i] = z[i] - z0[i]; Qv[i] = z0[i]; }
      }
      double A2 = bq_quad(&B, P, P) - r * r, B2 = 2 * bq_quad(&B, P, Qv), C2 = bq_quad(&B, Qv, Qv);
      double cand[2]; int nc = 0;
      if (fabs(A2) > 1e-300) {
        double disc = B2 * B2 - 4 * A2 * C2;
        if (disc >= 0) {
          double sq = sqrt(disc), qq = -0.5 * (B2 + (B2 >= 0 ? sq : -sq));
          if (qq != 0) { cand[nc++] = qq / A2; cand[nc++] = C2 / qq; }
          else cand[nc++] = 0.0;
        }
      } else if (B2 != 0) cand[nc++] = -C2 / B2;
      for (int c = 0; c < nc && !found; c++) {
        double ts = cand[c];
        if (!(ts > 0) || ts < tlo * (1 - 1e-12) || ts > thi * (1 + 1e-12)) continue;
        /* check that the face is optimal at ts: mu feasible, multipliers signed */
        int ok = 1;
        for (int i = 0; i < n; i++) { m2[i] = ts * P[i] + Qv[i]; fx2[i] = B.fix[i]; if (!B.fix[i] && fabs(m2[i]) > 1 + 1e-10) ok = 0; }
        for (int i = 0; i < n && ok; i++) {
          if (!B.fix[i]) continue;
          double g = -ts * REAL(a)[i];
          for (int j = 0; j < n; j++) g += REAL(H)[i + (size_t) j * n] * m2[j];
          if ((B.fix[i] > 0 ? g : -g) > 1e-9 * (1.0 + ts)) ok = 0;
        }
        if (ok) {
          for (int i = 0; i < n; i++) { mu[i] = m2[i]; if (!fx2[i] && mu[i] > 1) mu[i] = 1; if (!fx2[i] && mu[i] < -1) mu[i] = -1; }
          found = 1; t = ts;
        }
      }
      if (found) break;
      double g = sqrt(fmax(bq_quad(&B, mu, mu), 0.0)) / t;
      if (g > r) tlo = t; else thi = t;
      if (thi - tlo <= 1e-15 * thi) break;
    }
  }
  double val = 0.0;
  for (int i = 0; i < n; i++) { res[i] = mu[i]; val += mu[i] * REAL(a)[i]; }
  val -= r * sqrt(fmax(bq_quad(&B, mu, mu), 0.0));
  res[n] = val;
  res[n + 1] = status;
  UNPROTECT(1);
  return out;
}
