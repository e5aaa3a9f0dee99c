/* Absorption of any number of fixed-effect dimensions: r = M_D x, the
 * residual of x after (weighted) projection on the fixed-effect dummies.
 * One dimension: subtract group means. Two or more: a forward sweep of
 * alternating projections (exact when the dimensions are orthogonal, as in
 * balanced panels), then, if needed, preconditioned conjugate gradients on the
 * fixed-effect normal equations (see dd_demean_pcg).
 * Columns are independent and run in parallel; each column is computed by one
 * thread from start to end, so results do not depend on the thread count. */
#include "diffdiff.h"
#include <float.h>
#include <math.h>
#include <string.h>

/* the fixed-effect codes an entry point relies on: a list of 1 to 32
 * integer vectors of length n with codes in [0, nlev[q]), nlev integer of
 * length Q with positive counts whose total fits an int */
void dd_fe_check(SEXP fe, SEXP nlev, R_xlen_t n, const char *fn) {
  dd_chk_list(fe, -1, fn, "fe");
  const int Q = LENGTH(fe);
  if (Q < 1 || Q > DD_FE_MAX)
    error("internal error in %s: `fe` must have 1 to %d dimensions; please report", fn, DD_FE_MAX);
  dd_chk_vec(nlev, INTSXP, Q, 0, fn, "nlev");
  double tot = 0.0;
  for (int q = 0; q < Q; q++) {
    const int L = INTEGER(nlev)[q];
    if (L < 1 || L > n) error("internal error in %s: `nlev` must be positive and at most the rows; please report", fn);
    tot += L;
    dd_chk_codes(VECTOR_ELT(fe, q), n, L, fn, "fe");
  }
  if (tot > 1e9) error("internal error in %s: too many fixed-effect levels; please report", fn);
}

/* pointers to the code vectors of a list of Q integer vectors of length n */
const int **dd_fe_pointers(SEXP fe, R_xlen_t n) {
  const int Q = LENGTH(fe);
  const int **p = (const int **) R_alloc(Q > 0 ? Q : 1, sizeof(int *));
  for (int q = 0; q < Q; q++) {
    SEXP f = VECTOR_ELT(fe, q);
    if (TYPEOF(f) != INTSXP || XLENGTH(f) != n)
      error("internal error in demean.c: fixed-effect codes must be integer of length n; please report");
    p[q] = INTEGER(f);
  }
  return p;
}

/* Every dd_fe is built here (on the main thread, before any parallel
 * region), so this is where the kernels' bound on Q is enforced: sweeps keep
 * the order of the dimensions in an int[DD_FE_MAX]. */
double *dd_fe_levelsums(int n, int Q, const int **fe, const int *nlev, const double *w,
                        int *off, int *sumL) {
  if (Q < 1 || Q > DD_FE_MAX)
    error("internal error in demean.c: %d fixed-effect dimensions, but at most %d are supported; please report",
          Q, DD_FE_MAX);
  int s = 0;
  for (int q = 0; q < Q; q++) { off[q] = s; s += nlev[q]; }
  *sumL = s;
  double *sw = (double *) R_alloc(s > 0 ? s : 1, sizeof(double));
  memset(sw, 0, sizeof(double) * (s > 0 ? s : 1));
  for (int q = 0; q < Q; q++) {
    const int *f = fe[q]; double *swq = sw + off[q];
    if (w) for (int i = 0; i < n; i++) swq[f[i]] += w[i];
    else for (int i = 0; i < n; i++) swq[f[i]] += 1.0;
  }
  return sw;
}

/* v <- M_q v: subtract the weighted mean of v within each level of dimension q */
static void demean_dim(const dd_fe *F, int q, double *v, double *acc) {
  const int n = F->n, L = F->nlev[q];
  const int *f = F->fe[q];
  const double *swq = F->sw + F->off[q];
  memset(acc, 0, sizeof(double) * L);
  if (F->w) for (int i = 0; i < n; i++) acc[f[i]] += F->w[i] * v[i];
  else for (int i = 0; i < n; i++) acc[f[i]] += v[i];
  for (int l = 0; l < L; l++) acc[l] /= swq[l];
  for (int i = 0; i < n; i++) v[i] -= acc[f[i]];
}

/* v <- M_{seq[len-1]} ... M_{seq[0]} v, with the subtraction pass of one
 * dimension fused with the accumulation pass of the next: len + 1 passes over
 * the data instead of 2 len. acc: 2 (max(nlev) + 1) doubles. */
static void sweep_seq(const dd_fe *F, const int *seq, int len, double *v, double *acc, int maxL) {
  const int n = F->n;
  const double *w = F->w;
  double *A = acc, *B = acc + maxL + 1;
  {
    const int q = seq[0]; const int *f = F->fe[q];
    memset(A, 0, sizeof(double) * F->nlev[q]);
    if (w) for (int i = 0; i < n; i++) A[f[i]] += w[i] * v[i];
    else for (int i = 0; i < n; i++) A[f[i]] += v[i];
  }
  for (int k = 0; k < len; k++) {
    const int q = seq[k]; const int *f = F->fe[q];
    const double *swq = F->sw + F->off[q];
    for (int l = 0; l < F->nlev[q]; l++) A[l] /= swq[l];
    if (k + 1 < len) {
      const int q2 = seq[k + 1]; const int *f2 = F->fe[q2];
      memset(B, 0, sizeof(double) * F->nlev[q2]);
      if (w) for (int i = 0; i < n; i++) { v[i] -= A[f[i]]; B[f2[i]] += w[i] * v[i]; }
      else for (int i = 0; i < n; i++) { v[i] -= A[f[i]]; B[f2[i]] += v[i]; }
      double *t = A; A = B; B = t;
    } else {
      for (int i = 0; i < n; i++) v[i] -= A[f[i]];
    }
  }
}

static int dd_maxlev(const dd_fe *F) {
  int m = 0;
  for (int q = 0; q < F->Q; q++) if (F->nlev[q] > m) m = F->nlev[q];
  return m;
}

static double wdot(const dd_fe *F, const double *a, const double *b) {
  double s = 0.0;
  if (F->w) for (int i = 0; i < F->n; i++) s += F->w[i] * a[i] * b[i];
  else for (int i = 0; i < F->n; i++) s += a[i] * b[i];
  return s;
}

/* Warm start: r = M_Q ... M_1 x, one forward sweep, which leaves M_D x
 * unchanged (M_D M_q = M_D). With one dimension that is the answer; when the
 * dimensions are orthogonal (balanced panels) every level mean of r is zero up
 * to rounding and r is the answer too. Returns 1 when r = M_D x.
 * acc: 2 (max(nlev) + 1) doubles. */
int dd_demean_warm(const dd_fe *F, const double *x, double *r, double *acc, double tol) {
  const int n = F->n;
  memcpy(r, x, sizeof(double) * n);
  if (F->Q == 1) { demean_dim(F, 0, r, acc); return 1; }
  {
    int seq[DD_FE_MAX];   /* Q <= DD_FE_MAX: checked in dd_fe_levelsums */
    for (int q = 0; q < F->Q; q++) seq[q] = q;
    sweep_seq(F, seq, F->Q, r, acc, dd_maxlev(F));
  }
  double ss = wdot(F, r, r), sw = 0.0, worst = 0.0;
  for (int l = 0; l < F->nlev[0]; l++) sw += F->sw[l];
  for (int q = 0; q < F->Q - 1; q++) {  /* the last dimension was just demeaned */
    const int L = F->nlev[q]; const int *f = F->fe[q];
    const double *swq = F->sw + F->off[q];
    memset(acc, 0, sizeof(double) * L);
    if (F->w) for (int i = 0; i < n; i++) acc[f[i]] += F->w[i] * r[i];
    else for (int i = 0; i < n; i++) acc[f[i]] += r[i];
    for (int l = 0; l < L; l++) { double m = fabs(acc[l] / swq[l]); if (m > worst) worst = m; }
  }
  return ss == 0.0 || worst <= tol * 1e-3 * sqrt(ss / sw);
}

/* In place r <- M_D r by preconditioned conjugate gradients in the space of
 * fixed-effect coefficients: solve D'WD alpha = D'W r (singular but
 * consistent) with the diagonal (level weight) preconditioner, then
 * r <- r - D alpha. One pass over the data per iteration (gather the Q
 * coefficients of each observation, scatter its weighted sum back).
 * scratch: 5 sumL doubles. Stops when the preconditioned residual norm falls
 * below tol times its starting value. */
/* The PCG in three parts so that a long solve can pause between chunks of
 * iterations (Ctrl-C) without changing a bit of its result: the whole state
 * lives in scratch (5 sumL doubles) and st. */
typedef struct { double rz, stop; int it, conv; } pcg_state;

/* The stop: the preconditioned residual r'z below tol^2 times its starting
 * value, or below the rounding floor of the column, whichever is larger.
 * The floor: r'z = sum_l res_l^2 / sw_l where res_l sums w r over level l;
 * rounding leaves |res_l| up to about eps sum_l w |x| (x the column before
 * demeaning), so r'z up to Q eps^2 x'Wx (Cauchy-Schwarz). Iterating below it
 * runs on rounding noise, whose component along the null space of D'WD
 * (the constant moved between dimensions) the iterations cannot reduce: the
 * coefficients then drift far along it and r - D alpha loses its digits
 * (did_twfe(fe_tol = 1e-12) on a balanced panel gave coefficients 1% off).
 * ssx = x'Wx of the column before demeaning. */
#define DD_PCG_FLOOR (10.0 * DBL_EPSILON)
static void pcg_start(const dd_fe *F, const double *r, double *scratch, double tol, double ssx, pcg_state *st) {
  const int n = F->n, Q = F->Q, m = F->sumL;
  const double *w = F->w;
  double *alpha = scratch, *res = scratch + m, *z = scratch + 2 * (size_t) m, *p = scratch + 3 * (size_t) m;
  memset(alpha, 0, sizeof(double) * m);
  memset(res, 0, sizeof(double) * m);
  for (int k = 0; k < Q; k++) {
    const int *f = F->fe[k]; double *rk = res + F->off[k];
    if (w) for (int i = 0; i < n; i++) rk[f[i]] += w[i] * r[i];
    else for (int i = 0; i < n; i++) rk[f[i]] += r[i];
  }
  double rz = 0.0;
  for (int j = 0; j < m; j++) { z[j] = res[j] / F->sw[j]; p[j] = z[j]; rz += res[j] * z[j]; }
  double floor = DD_PCG_FLOOR * DD_PCG_FLOOR * Q * ssx, stop = tol * tol * rz;
  st->rz = rz; st->stop = stop > floor ? stop : floor; st->it = 0; st->conv = rz <= st->stop;
}

/* at most nsteps more iterations (and never past maxit in all) */
static void pcg_steps(const dd_fe *F, double *scratch, int maxit, int nsteps, pcg_state *st) {
  const int n = F->n, Q = F->Q, m = F->sumL;
  const double *w = F->w;
  double *alpha = scratch, *res = scratch + m, *z = scratch + 2 * (size_t) m,
    *p = scratch + 3 * (size_t) m, *q = scratch + 4 * (size_t) m;
  double rz = st->rz;
  const double stop = st->stop;
  int it = st->it, conv = st->conv, done = 0;
  while (!conv && it < maxit && done < nsteps) {
    done++;
    memset(q, 0, sizeof(double) * m);
    if (Q == 2) {
      const int *f0 = F->fe[0], *f1 = F->fe[1];
      const double *p0 = p, *p1 = p + F->off[1];
      double *q0 = q, *q1 = q + F->off[1];
      for (int i = 0; i < n; i++) {
        double sv = p0[f0[i]] + p1[f1[i]];
        if (w) sv *= w[i];
        q0[f0[i]] += sv; q1[f1[i]] += sv;
      }
    } else if (Q == 3) {
      const int *f0 = F->fe[0], *f1 = F->fe[1], *f2 = F->fe[2];
      const double *p0 = p, *p1 = p + F->off[1], *p2 = p + F->off[2];
      double *q0 = q, *q1 = q + F->off[1], *q2 = q + F->off[2];
      for (int i = 0; i < n; i++) {
        double sv = p0[f0[i]] + p1[f1[i]] + p2[f2[i]];
        if (w) sv *= w[i];
        q0[f0[i]] += sv; q1[f1[i]] += sv; q2[f2[i]] += sv;
      }
    } else {
      for (int i = 0; i < n; i++) {
        double sv = 0.0;
        for (int k = 0; k < Q; k++) sv += p[F->off[k] + F->fe[k][i]];
        if (w) sv *= w[i];
        for (int k = 0; k < Q; k++) q[F->off[k] + F->fe[k][i]] += sv;
      }
    }
    double pq = 0.0;
    for (int j = 0; j < m; j++) pq += p[j] * q[j];
    it++;
    if (!(pq > 0.0)) { conv = 1; break; }
    double a = rz / pq, rz_new = 0.0;
    for (int j = 0; j < m; j++) {
      alpha[j] += a * p[j]; res[j] -= a * q[j];
      z[j] = res[j] / F->sw[j]; rz_new += res[j] * z[j];
    }
    if (rz_new <= stop) { conv = 1; break; }
    double beta = rz_new / rz;
    for (int j = 0; j < m; j++) p[j] = z[j] + beta * p[j];
    rz = rz_new;
  }
  st->rz = rz; st->it = it; st->conv = conv;
}

static void pcg_finish(const dd_fe *F, double *r, const double *scratch) {
  const int n = F->n;
  const double *alpha = scratch;
  for (int k = 0; k < F->Q; k++) {
    const int *f = F->fe[k]; const double *ak = alpha + F->off[k];
    for (int i = 0; i < n; i++) r[i] -= ak[f[i]];
  }
}

int dd_demean_pcg(const dd_fe *F, double *r, double *scratch, double tol, double ssx, int maxit, int *iter) {
  pcg_state st;
  pcg_start(F, r, scratch, tol, ssx, &st);
  pcg_steps(F, scratch, maxit, maxit, &st);
  pcg_finish(F, r, scratch);
  *iter = st.it;
  return st.conv;
}

/* r = M_D x for one column: warm start, then PCG if needed.
 * scratch: dd_demean_scratch(F) doubles. Returns 1 when converged. */
size_t dd_demean_scratch(const dd_fe *F) {
  return (size_t) 5 * F->sumL + 2 * ((size_t) dd_maxlev(F) + 1);
}

int dd_demean_col(const dd_fe *F, const double *x, double *r, double *scratch,
                  double tol, int maxit, int *iter) {
  *iter = 0;
  if (dd_demean_warm(F, x, r, scratch + 5 * (size_t) F->sumL, tol)) return 1;
  return dd_demean_pcg(F, r, scratch, tol, wdot(F, x, x), maxit, iter);
}

/* Demeans y (optional) and the columns of X. Phase 1, parallel over columns:
 * the warm start. Phase 2, only for columns that need it: PCG, with its
 * scratch allocated then. Also returns the weighted norms of the input X
 * columns (the reference for collinearity checks). */
SEXP C_demean(SEXP y_, SEXP X_, SEXP fe_, SEXP nlev_, SEXP w_, SEXP tol_, SEXP maxit_) {
  const char *fn = "C_demean";
  dd_chk_mat(X_, REALSXP, -1, -1, 0, fn, "X");
  dd_chk_vec(y_, REALSXP, nrows(X_), 1, fn, "y");
  dd_chk_vec(w_, REALSXP, nrows(X_), 1, fn, "w");
  dd_fe_check(fe_, nlev_, nrows(X_), fn);
  dd_chk_num(tol_, 0, fn, "tol");
  dd_chk_int(maxit_, 0, DD_INT_MAX, fn, "maxit");
  const int n = nrows(X_), mx = ncols(X_), Q = LENGTH(fe_);
  const int hasy = !isNull(y_), m = mx + hasy;
  if (LENGTH(nlev_) != Q || (!isNull(w_) && XLENGTH(w_) != n) ||
      (hasy && XLENGTH(y_) != n))
    error("internal error in demean.c: length mismatch; please report");
  const double tol = asReal(tol_);
  const int maxit = asInteger(maxit_);
  dd_fe F;
  int *off = (int *) R_alloc(Q, sizeof(int));
  F.n = n; F.Q = Q; F.fe = dd_fe_pointers(fe_, n); F.nlev = INTEGER(nlev_);
  F.w = isNull(w_) ? NULL : REAL(w_);
  F.sw = dd_fe_levelsums(n, Q, F.fe, F.nlev, F.w, off, &F.sumL);
  F.off = off;
  int maxL = 0;
  for (int q = 0; q < Q; q++) if (F.nlev[q] > maxL) maxL = F.nlev[q];

  SEXP yd = PROTECT(hasy ? allocVector(REALSXP, n) : R_NilValue);
  SEXP Xd = PROTECT(allocMatrix(REALSXP, n, mx));
  SEXP iters = PROTECT(allocVector(INTSXP, m));
  SEXP conv = PROTECT(allocVector(LGLSXP, m));
  SEXP norms = PROTECT(allocVector(REALSXP, mx));
  const double *X = REAL(X_);
  int *it = INTEGER(iters), *cv = LOGICAL(conv);
  /* column j of the work list: y first (when given), then X */
  const double **src = (const double **) R_alloc(m, sizeof(double *));
  double **dst = (double **) R_alloc(m, sizeof(double *));
  for (int j = 0; j < m; j++) {
    int jx = j - hasy;
    src[j] = jx < 0 ? REAL(y_) : X + (R_xlen_t) jx * n;
    dst[j] = jx < 0 ? REAL(yd) : REAL(Xd) + (R_xlen_t) jx * n;
  }
  const int nth = dd_nthreads(m, (double) n * m * Q);
  double *acc = (double *) R_alloc((size_t) 2 * (maxL + 1) * nth, sizeof(double));
  int *done = (int *) R_alloc(m, sizeof(int));
  dd_chunks ch_j;
  dd_chunks_init(&ch_j, m, nth);
  while (dd_chunks_next(&ch_j)) {
  const int j_lo = ch_j.lo, j_hi = ch_j.hi;   /* locals: the compiler keeps them out of memory */
#ifdef _OPENMP
#pragma omp parallel for num_threads(nth) schedule(dynamic, 1)
#endif
  for (int j = j_lo; j < j_hi; j++) {
    int tid = dd_tid();
    done[j] = dd_demean_warm(&F, src[j], dst[j], acc + (size_t) 2 * (maxL + 1) * tid, tol);
    it[j] = 0;
  }
  }
  for (int j = hasy; j < m; j++) REAL(norms)[j - hasy] = sqrt(wdot(&F, src[j], src[j]));
  int todo = 0;
  for (int j = 0; j < m; j++) { cv[j] = done[j]; todo += !done[j]; }
  if (todo) {
    int *list = (int *) R_alloc(todo, sizeof(int)), k = 0;
    for (int j = 0; j < m; j++) if (!done[j]) list[k++] = j;
    /* PCG on the columns that need it, nth2 columns at a time (each with
     * its own scratch and state), a few iterations of every open column per
     * chunk, Ctrl-C checked between chunks: pausing changes no bit */
    const int nth2 = dd_nthreads(todo, (double) n * todo * Q);
    const size_t per = (size_t) 5 * F.sumL;
    double *scratch = (double *) R_alloc(per * nth2, sizeof(double));
    pcg_state *st = (pcg_state *) R_alloc(nth2, sizeof(pcg_state));
    int nsteps = (int) (2e7 / ((double) n * (Q + 1) + 1.0));   /* about 0.02 s per chunk */
    if (nsteps < 1) nsteps = 1;
    double tlast = -1.0;
    for (int b0 = 0; b0 < todo; b0 += nth2) {
      const int nbat = todo - b0 < nth2 ? todo - b0 : nth2;
      for (int q = 0; q < nbat; q++)
        pcg_start(&F, dst[list[b0 + q]], scratch + per * q, tol, wdot(&F, src[list[b0 + q]], src[list[b0 + q]]), st + q);
      int open = nbat;
      while (open > 0) {
#ifdef _OPENMP
#pragma omp parallel for num_threads(nth2) schedule(static, 1)
#endif
        for (int q = 0; q < nbat; q++)
          if (!st[q].conv && st[q].it < maxit) pcg_steps(&F, scratch + per * q, maxit, nsteps, st + q);
        open = 0;
        for (int q = 0; q < nbat; q++) open += !st[q].conv && st[q].it < maxit;
        if (open) dd_check_interrupt(&tlast);
      }
      for (int q = 0; q < nbat; q++) {
        const int j = list[b0 + q];
        pcg_finish(&F, dst[j], scratch + per * q);
        cv[j] = st[q].conv; it[j] = st[q].it;
      }
    }
  }
  const char *nm[5] = {"y", "X", "iter", "converged", "norms"};
  SEXP vals[5] = {yd, Xd, iters, conv, norms};
  SEXP res = dd_named_list(5, nm, vals);
  UNPROTECT(5);
  return res;
}
