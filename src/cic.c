/* Changes-in-changes (Athey and Imbens 2006) and quantile DiD on the 2x2
 * cells of did_cic(). A cell is four samples, each sorted ascending: the
 * control group in the base and the later period (00, 01) and the treated
 * cohort in the same two periods (10, 11). Every value carries its
 * resampling unit (a unit, a row of a repeated cross-section, or a
 * cluster); a bootstrap draw is a count per resampling unit, so the sorted
 * resampled samples are the sorted samples with each value repeated as
 * often as its unit was drawn: nothing is re-sorted, each cell costs one
 * merge pass per draw. The point estimate is the draw with every count 1.
 *
 * Quantiles are R's (stats::quantile) on the weighted samples, computed
 * with the same floating-point operations:
 *   type 1 at p, n values: j = floor(n p), position j + (n p > j), kept in
 *     [1, n];
 *   type 7: index 1 + (n - 1) p, the values at floor and ceiling, and
 *     (1 - h) x_lo + h x_hi with h = index - floor(index) when they differ;
 *   ecdf F(v) = (number of values <= v) / n.
 * CiC: the counterfactual of a treated base-period value v is
 *   Q1_01(F_00(v)) (type 1), nondecreasing in v, so the counterfactual
 *   values come out sorted in the order of the 10 sample;
 *   ATT = mean(11) - mean(counterfactual);
 *   QTT(p) = Q1_11(p) - Q1_cf(p).
 * QDiD: QTT(p) = Q7_11(p) - ((Q7_10(p) + Q7_01(p)) - Q7_00(p));
 *   ATT = mean(11) - ((mean(10) + mean(Q7_01(r))) - mean(Q7_00(r))), r the
 *   ranks F_10(v) of the treated base-period values v; the counterfactual
 *   values are v + Q7_01(r) - Q7_00(r).
 *
 * Entry point: C_cic. */
#include "diffdiff.h"
#include <math.h>

typedef struct {
  const double *y;   /* values, ascending */
  const int *u;      /* resampling unit of each value */
  int n;
} cic_sample;

/* a cursor over a weighted sorted sample: i the current element, cum the
 * total weight of elements 0..i */
typedef struct {
  const double *y;
  const int *u, *cnt;
  int n, i;
  int64_t cum;
} cic_cur;

static void cur_init(cic_cur *c, const double *y, const int *u, const int *cnt, int n) {
  c->y = y; c->u = u; c->cnt = cnt; c->n = n; c->i = -1; c->cum = 0;
}

/* the value at position pos (1 <= pos <= total weight); pos must not
 * decrease between calls on one cursor. Stops only on an element of
 * positive weight. */
static double cur_at(cic_cur *c, int64_t pos) {
  while (c->cum < pos && c->i + 1 < c->n) {
    c->i++;
    c->cum += c->cnt[c->u[c->i]];
  }
  return c->y[c->i < 0 ? 0 : c->i];
}

/* the value at position cum + 1: the next element of positive weight */
static double cur_next(const cic_cur *c) {
  int j = c->i + 1;
  while (j < c->n - 1 && c->cnt[c->u[j]] == 0) j++;
  return c->y[j < c->n ? j : c->n - 1];
}

/* type 1 quantile of a cursor's sample of total weight W */
static double cic_q1(cic_cur *c, int64_t W, double p) {
  const double nppm = (double) W * p;
  const double j = floor(nppm);
  int64_t pos = (int64_t) j + (nppm > j ? 1 : 0);
  if (pos < 1) pos = 1;
  if (pos > W) pos = W;
  return cur_at(c, pos);
}

/* type 7 quantile */
static double cic_q7(cic_cur *c, int64_t W, double p) {
  const double index = 1.0 + (double) (W - 1) * p;
  const double lo = floor(index);
  double qs = cur_at(c, (int64_t) lo);
  if (index > lo) {
    const double hi = ceil(index);
    const double xh = ((int64_t) hi <= c->cum) ? c->y[c->i] : cur_next(c);
    if (xh != qs) {
      const double h = index - lo;
      qs = (1 - h) * qs + h * xh;
    }
  }
  return qs;
}

/* weight of values <= v, v not decreasing between calls */
typedef struct {
  const double *y;
  const int *u, *cnt;
  int n, i;
  int64_t k;
} cic_le;

static int64_t le_count(cic_le *c, double v) {
  while (c->i < c->n && c->y[c->i] <= v) {
    c->k += c->cnt[c->u[c->i]];
    c->i++;
  }
  return c->k;
}

static int64_t cic_total(const cic_sample *s, const int *cnt, long double *sum) {
  int64_t W = 0;
  long double m = 0.0L;
  for (int i = 0; i < s->n; i++) {
    const int w = cnt[s->u[i]];
    W += w;
    m += (long double) w * s->y[i];
  }
  if (sum) *sum = m;
  return W;
}

/* One cell under the counts cnt: est[0] the ATT, est[1 + k] the QTT at
 * probs[k]; NA when a sample has no weight. cf (n of the 10 sample): the
 * counterfactual values (entries of zero weight are not set). */
static void cic_cell(const cic_sample *s, const int *cnt, const double *probs, int np, int method, double *est,
                     double *cf) {
  long double s10, s11;
  const int64_t W00 = cic_total(s + 0, cnt, NULL), W01 = cic_total(s + 1, cnt, NULL);
  const int64_t W10 = cic_total(s + 2, cnt, &s10), W11 = cic_total(s + 3, cnt, &s11);
  if (W00 == 0 || W01 == 0 || W10 == 0 || W11 == 0) {
    for (int k = 0; k <= np; k++) est[k] = NA_REAL;
    return;
  }
  const cic_sample *a = s + 2;
  const double m11 = (double) (s11 / (long double) W11);
  if (method == 1) {
    cic_le c00 = {s[0].y, s[0].u, cnt, s[0].n, 0, 0};
    cic_cur c01;
    cur_init(&c01, s[1].y, s[1].u, cnt, s[1].n);
    long double scf = 0.0L;
    for (int i = 0; i < a->n; i++) {
      const int w = cnt[a->u[i]];
      if (w == 0) continue;
      const double p = (double) le_count(&c00, a->y[i]) / (double) W00;
      const double nppm = (double) W01 * p;
      const double j = floor(nppm);
      int64_t pos = (int64_t) j + (nppm > j ? 1 : 0);
      if (pos < 1) pos = 1;
      if (pos > W01) pos = W01;
      cf[i] = cur_at(&c01, pos);
      scf += (long double) w * cf[i];
    }
    est[0] = m11 - (double) (scf / (long double) W10);
    cic_cur c11, ccf;
    cur_init(&c11, s[3].y, s[3].u, cnt, s[3].n);
    cur_init(&ccf, cf, a->u, cnt, a->n);
    for (int k = 0; k < np; k++) est[1 + k] = cic_q1(&c11, W11, probs[k]) - cic_q1(&ccf, W10, probs[k]);
    return;
  }
  /* quantile DiD */
  cic_cur c[4];
  for (int q = 0; q < 4; q++) cur_init(c + q, s[q].y, s[q].u, cnt, s[q].n);
  const int64_t W[4] = {W00, W01, W10, W11};
  for (int k = 0; k < np; k++) {
    const double q11 = cic_q7(c + 3, W[3], probs[k]), q10 = cic_q7(c + 2, W[2], probs[k]);
    const double q01 = cic_q7(c + 1, W[1], probs[k]), q00 = cic_q7(c + 0, W[0], probs[k]);
    est[1 + k] = q11 - ((q10 + q01) - q00);
  }
  cic_le c10 = {a->y, a->u, cnt, a->n, 0, 0};
  cic_cur d01, d00;
  cur_init(&d01, s[1].y, s[1].u, cnt, s[1].n);
  cur_init(&d00, s[0].y, s[0].u, cnt, s[0].n);
  long double m01 = 0.0L, m00 = 0.0L;
  for (int i = 0; i < a->n; i++) {
    const int w = cnt[a->u[i]];
    if (w == 0) continue;
    const double r = (double) le_count(&c10, a->y[i]) / (double) W10;
    const double v01 = cic_q7(&d01, W01, r), v00 = cic_q7(&d00, W00, r);
    m01 += (long double) w * v01;
    m00 += (long double) w * v00;
    cf[i] = a->y[i] + v01 - v00;
  }
  const double mean10 = (double) (s10 / (long double) W10);
  const double mean01 = (double) (m01 / (long double) W10), mean00 = (double) (m00 / (long double) W10);
  est[0] = m11 - ((mean10 + mean01) - mean00);
}

/* one draw: counts per resampling unit, n_s draws with replacement within
 * each stratum s (members smem[soff[s] .. soff[s+1]-1]) */
static void cic_draw(dd_rng *g, int *cnt, int nunits, const int *smem, const int *soff, int nstrata) {
  memset(cnt, 0, (size_t) nunits * sizeof(int));
  for (int s = 0; s < nstrata; s++) {
    const int m = soff[s + 1] - soff[s];
    for (int r = 0; r < m; r++) {
      int k = (int) (dd_rng_unif(g) * m);
      if (k >= m) k = m - 1;
      cnt[smem[soff[s] + k]]++;
    }
  }
}

/* C_cic(y, u, off, probs, opts, smem, soff, nboot, seed, first)
 *   y, u    the values and their resampling units (0-based), sample after
 *           sample: cell c's samples 00, 01, 10, 11 are off[4c + q] ..
 *           off[4c + q + 1] - 1, each ascending
 *   probs   the quantile levels, increasing, in [0, 1]
 *   opts    c(method (1 CiC, 2 QDiD), number of resampling units)
 *   smem, soff  the strata of the resampling: members (units) and offsets
 *   nboot   0: list(est, cf) of the point estimates (est: cell after cell,
 *           ATT then the QTTs; cf: the counterfactual values of every 10
 *           sample, in its order); > 0: the draws first .. first + nboot -
 *           1 of the bootstrap (streams of seed), an nboot x (cells x (1 +
 *           length(probs))) matrix, NA where a draw leaves a sample empty */
SEXP C_cic(SEXP y_, SEXP u_, SEXP off_, SEXP probs_, SEXP opts_, SEXP smem_, SEXP soff_, SEXP nboot_, SEXP seed_,
           SEXP first_) {
  const char *fn = "C_cic";
  dd_chk_type(y_, REALSXP, 0, fn, "y");
  dd_chk_finite(y_, 0, fn, "y");
  const R_xlen_t ny = XLENGTH(y_);
  if (ny > DD_INT_MAX) dd_bad(fn, "y", "too long");
  dd_chk_vec(opts_, INTSXP, 2, 0, fn, "opts");
  const int method = INTEGER(opts_)[0], nunits = INTEGER(opts_)[1];
  if (method != 1 && method != 2) dd_bad(fn, "opts", "method must be 1 or 2");
  if (nunits < 1 || nunits == NA_INTEGER) dd_bad(fn, "opts", "the number of units must be positive");
  dd_chk_vec(u_, INTSXP, ny, 0, fn, "u");
  dd_chk_range(u_, ny, 0, nunits - 1, fn, "u");
  dd_chk_type(off_, INTSXP, 0, fn, "off");
  const R_xlen_t noff = XLENGTH(off_);
  if (noff < 5 || (noff - 1) % 4 != 0) dd_bad(fn, "off", "must have 4 * cells + 1 entries");
  const int ncell = (int) ((noff - 1) / 4);
  const int *off = INTEGER(off_);
  if (off[0] != 0 || off[noff - 1] != (int) ny) dd_bad(fn, "off", "must run from 0 to length(y)");
  for (R_xlen_t k = 0; k + 1 < noff; k++)
    if (off[k + 1] < off[k]) dd_bad(fn, "off", "must not decrease");
  const double *y = REAL(y_);
  for (R_xlen_t k = 0; k + 1 < noff; k++)
    for (int i = off[k] + 1; i < off[k + 1]; i++)
      if (y[i] < y[i - 1]) dd_bad(fn, "y", "each sample must be sorted ascending");
  dd_chk_type(probs_, REALSXP, 0, fn, "probs");
  dd_chk_finite(probs_, 0, fn, "probs");
  const int np = (int) XLENGTH(probs_);
  const double *probs = REAL(probs_);
  for (int k = 0; k < np; k++) {
    if (probs[k] < 0 || probs[k] > 1) dd_bad(fn, "probs", "must lie in [0, 1]");
    if (k > 0 && probs[k] < probs[k - 1]) dd_bad(fn, "probs", "must not decrease");
  }
  dd_chk_type(smem_, INTSXP, 0, fn, "smem");
  const R_xlen_t nm = XLENGTH(smem_);
  dd_chk_range(smem_, nm, 0, nunits - 1, fn, "smem");
  dd_chk_type(soff_, INTSXP, 0, fn, "soff");
  const R_xlen_t ns1 = XLENGTH(soff_);
  if (ns1 < 1) dd_bad(fn, "soff", "must have at least one entry");
  const int *soff = INTEGER(soff_);
  if (soff[0] != 0 || soff[ns1 - 1] != (int) nm) dd_bad(fn, "soff", "must run from 0 to length(smem)");
  for (R_xlen_t k = 0; k + 1 < ns1; k++)
    if (soff[k + 1] < soff[k]) dd_bad(fn, "soff", "must not decrease");
  const int nstrata = (int) ns1 - 1;
  const int B = dd_chk_int(nboot_, 0, DD_INT_MAX, fn, "nboot");
  const int first = dd_chk_int(first_, 0, DD_INT_MAX, fn, "first");
  const int *u = INTEGER(u_), *smem = INTEGER(smem_);
  const int K = 1 + np;
  if ((double) ncell * K > DD_INT_MAX) dd_bad(fn, "probs", "too many estimates");

  cic_sample *S = (cic_sample *) R_alloc((size_t) ncell * 4, sizeof(cic_sample));
  int n10max = 1;
  for (int c = 0; c < ncell; c++)
    for (int q = 0; q < 4; q++) {
      const int k = 4 * c + q;
      S[k].y = y + off[k]; S[k].u = u + off[k]; S[k].n = off[k + 1] - off[k];
      if (q == 2 && S[k].n > n10max) n10max = S[k].n;
    }

  if (B == 0) {
    int *ones = (int *) R_alloc((size_t) nunits, sizeof(int));
    for (int i = 0; i < nunits; i++) ones[i] = 1;
    R_xlen_t ncf = 0;
    for (int c = 0; c < ncell; c++) ncf += S[4 * c + 2].n;
    SEXP est = PROTECT(allocVector(REALSXP, (R_xlen_t) ncell * K));
    SEXP cf = PROTECT(allocVector(REALSXP, ncf));
    double *pc = REAL(cf);
    for (R_xlen_t i = 0; i < ncf; i++) pc[i] = NA_REAL;
    double t_last = -1.0;
    for (int c = 0; c < ncell; c++) {
      dd_check_interrupt(&t_last);
      cic_cell(S + 4 * c, ones, probs, np, method, REAL(est) + (R_xlen_t) c * K, pc);
      pc += S[4 * c + 2].n;
    }
    const char *nms[2] = {"est", "cf"};
    SEXP vals[2] = {est, cf};
    SEXP out = dd_named_list(2, nms, vals);
    UNPROTECT(2);
    return out;
  }

  const uint64_t seed = dd_seed_arg(seed_, fn);
  const int ncol = ncell * K;
  SEXP out = PROTECT(allocMatrix(REALSXP, B, ncol));
  double *po = REAL(out);
  const int nth = dd_nthreads(B, (double) B * ((double) ny + nunits));
  int *cnts = (int *) R_alloc((size_t) nunits * nth, sizeof(int));
  double *cfs = (double *) R_alloc((size_t) n10max * nth, sizeof(double));
  double *ests = (double *) R_alloc((size_t) K * nth, sizeof(double));
  dd_chunks ch;
  dd_chunks_init(&ch, B, nth);
  while (dd_chunks_next(&ch)) {
    const int lo = ch.lo, hi = ch.hi;
#ifdef _OPENMP
#pragma omp parallel for num_threads(nth) schedule(dynamic, 1)
#endif
    for (int b = lo; b < hi; b++) {
      const int tid = dd_tid();
      int *cnt = cnts + (size_t) nunits * tid;
      double *cf = cfs + (size_t) n10max * tid, *e = ests + (size_t) K * tid;
      dd_rng g;
      dd_rng_init(&g, seed, (uint64_t) first + (uint64_t) b);
      cic_draw(&g, cnt, nunits, smem, soff, nstrata);
      for (int c = 0; c < ncell; c++) {
        cic_cell(S + 4 * c, cnt, probs, np, method, e, cf);
        for (int k = 0; k < K; k++) po[b + (R_xlen_t) B * ((R_xlen_t) c * K + k)] = e[k];
      }
    }
  }
  UNPROTECT(1);
  return out;
}

/* ---- covariates: qte's quantile-regression versions -------------------
 * (in Fhat, values within 1e-10 (1 + |v|) of one another, or of v, are
 * taken as equal: in QDiD the cohort's own fit passes through p of its
 * observations at every tau, and with discrete covariates fitted quantiles
 * of different tau coincide; qte leaves those ties to quantreg's rounding;
 * see did_cic's help, "Covariates") 
 * In a cell, linear quantile regressions of the outcome on the covariates
 * (with an intercept) at every tau of a grid (taus, seq(0.01, 0.99, 0.01)
 * in did_cic) are fitted to the control group in the base period (00) and
 * in period t (01), and, for QDiD, to the cohort in the base period (10).
 * At the covariates x of a cohort member observed in the base period with
 * outcome v, the fitted quantiles q_k = x'b(tau_k), k = 1..K, give, as
 * quantreg's predict(..., stepfun = TRUE) does (which qte calls):
 *   Qhat(r) = q_1 for r < tau_1, else q_k with k the largest index with
 *     tau_k <= r (no rearrangement: the q_k need not be monotone);
 *   Fhat(v) = tau_1 when no q_k <= v; else, with k the index of the last
 *     of the q_k <= v in the stable ascending order of the q_k (the largest
 *     value, the last index among its ties), tau_{k-1} (tau_1 for k = 1):
 *     the value is shifted one place along the grid, as in quantreg 6.1.
 * CiC: the counterfactual of the member is Qhat_01(Fhat_00(v)); QDiD:
 *   v + Qhat_01(r) - Qhat_00(r), r = Fhat_10(v). ATT = mean(11) - mean of
 *   the counterfactuals; QTT(p) = Q_11(p) - Q1_cf(p), Q_11 of type 1 (CiC)
 *   or 7 (QDiD), the counterfactuals' always of type 1, as qte. */

typedef struct { double v; int u; } cicx_pair;

static int cicx_cmp(const void *a, const void *b) {
  const double x = ((const cicx_pair *) a)->v, y = ((const cicx_pair *) b)->v;
  return (x > y) - (x < y);
}

static double cicx_qhat(const double *q, const double *taus, int nt, double r) {
  int k = 0;
  while (k < nt && taus[k] <= r) k++;
  return q[k == 0 ? 0 : k - 1];
}

static double cicx_fhat(const double *q, const double *taus, int nt, double v) {
  /* values within tol of one another are taken as equal (rounding: fitted
   * quantiles that are equal in exact arithmetic, because the fit passes
   * through this observation or through one with its covariates, or two
   * vertices of adjacent tau agree at these covariates); a fitted quantile
   * within tol of v is v */
  const double tol = 1e-10 * (1.0 + fabs(v));
  double M = 0;
  int any = 0;
  for (int k = 0; k < nt; k++) {
    const double qk = fabs(q[k] - v) <= tol ? v : q[k];
    if (qk <= v && (!any || qk > M)) { M = qk; any = 1; }
  }
  if (!any) return taus[0];
  int best = 0;
  for (int k = 0; k < nt; k++) {
    const double qk = fabs(q[k] - v) <= tol ? v : q[k];
    if (qk <= v && qk >= M - tol) best = k;
  }
  return best == 0 ? taus[0] : taus[best - 1];
}

typedef struct {
  dd_rq_work W;
  double *w, *coef, *pred, *ys;
  int *h, *us;
  cicx_pair *pr;
} cicx_scratch;

static void cicx_scratch_init(cicx_scratch *s, int nmax, int p, int nt) {
  dd_rq_work_init(&s->W, nmax, p);
  s->w = (double *) R_alloc((size_t) nmax, sizeof(double));
  s->coef = (double *) R_alloc((size_t) 3 * p * nt, sizeof(double));
  s->pred = (double *) R_alloc((size_t) 3 * nt, sizeof(double));
  s->ys = (double *) R_alloc((size_t) nmax, sizeof(double));
  s->h = (int *) R_alloc((size_t) p, sizeof(int));
  s->us = (int *) R_alloc((size_t) nmax, sizeof(int));
  s->pr = (cicx_pair *) R_alloc((size_t) nmax, sizeof(cicx_pair));
}

/* One cell under the counts cnt. S: its four samples; Xs[q]: the rows of
 * sample q's covariates in X (leading dimension ldx). hb: the bases of the
 * fits (3 samples x nt x p); with warm = 0 they are computed from a fresh
 * start and stored; with warm = 1 (a draw) the first tau starts from the
 * stored basis of the first tau (they stay unchanged).
 * est and cf as cic_cell's. Returns 0, 1 when a sample has no weight or
 * the fitted rows of a sample have rank < p (est NA), 2 when a fit fails. */
static int cicx_cell(const cic_sample *S, const double *const *Xs, int ldx, int p, const int *cnt,
                     const double *probs, int np, const double *taus, int nt, int method, int *hb, int warm,
                     cicx_scratch *sc, double *est, double *cf, double *t_last) {
  long double s11;
  int64_t Wq[4];
  for (int q = 0; q < 4; q++) Wq[q] = cic_total(S + q, cnt, q == 3 ? &s11 : NULL);
  const int nfit = method == 1 ? 2 : 3;
  for (int k = 0; k <= np; k++) est[k] = NA_REAL;
  for (int q = 0; q < 4; q++) if (Wq[q] == 0) return 1;
  for (int q = 0; q < nfit; q++) {
    const cic_sample *s = S + q;
    sc->W.n = s->n;
    for (int i = 0; i < s->n; i++) sc->w[i] = (double) cnt[s->u[i]];
    if (dd_rq_start(&sc->W, Xs[q], ldx, sc->w, sc->h)) return 1;
    for (int k = 0; k < nt; k++) {
      dd_check_interrupt(t_last);                 /* (the main thread: the draws run serially) */
      int *hk = hb + ((size_t) q * nt + k) * p;
      /* the first tau from the point estimate's basis (a draw) or the
       * fresh start; each next tau from the previous one's */
      if (k == 0 && warm) memcpy(sc->h, hk, (size_t) p * sizeof(int));
      if (dd_rq_fit(&sc->W, Xs[q], ldx, s->y, sc->w, taus[k], sc->h, sc->coef + ((size_t) q * nt + k) * p) < 0)
        return 2;
      if (!warm) memcpy(hk, sc->h, (size_t) p * sizeof(int));
    }
  }
  /* the counterfactuals of the cohort's base-period members */
  const cic_sample *a = S + 2;
  const double *Xa = Xs[2];
  long double scf = 0.0L;
  int m = 0;
  for (int i = 0; i < a->n; i++) {
    const int w = cnt[a->u[i]];
    if (w == 0) continue;
    for (int q = 0; q < nfit; q++)
      for (int k = 0; k < nt; k++) {
        const double *bq = sc->coef + ((size_t) q * nt + k) * p;
        double f = 0;
        for (int l = 0; l < p; l++) f += Xa[i + (size_t) ldx * l] * bq[l];
        sc->pred[(size_t) q * nt + k] = f;
      }
    double c;
    if (method == 1) {
      const double F = cicx_fhat(sc->pred, taus, nt, a->y[i]);
      c = cicx_qhat(sc->pred + nt, taus, nt, F);
    } else {
      const double r = cicx_fhat(sc->pred + 2 * (size_t) nt, taus, nt, a->y[i]);
      c = (a->y[i] + cicx_qhat(sc->pred + nt, taus, nt, r)) - cicx_qhat(sc->pred, taus, nt, r);
    }
    cf[i] = c;
    scf += (long double) w * c;
    sc->pr[m].v = c; sc->pr[m].u = a->u[i]; m++;
  }
  const double m11 = (double) (s11 / (long double) Wq[3]);
  est[0] = m11 - (double) (scf / (long double) Wq[2]);
  qsort(sc->pr, (size_t) m, sizeof(cicx_pair), cicx_cmp);
  for (int i = 0; i < m; i++) { sc->ys[i] = sc->pr[i].v; sc->us[i] = sc->pr[i].u; }
  cic_cur c11, ccf;
  cur_init(&c11, S[3].y, S[3].u, cnt, S[3].n);
  cur_init(&ccf, sc->ys, sc->us, cnt, m);
  for (int k = 0; k < np; k++) {
    const double q11 = method == 1 ? cic_q1(&c11, Wq[3], probs[k]) : cic_q7(&c11, Wq[3], probs[k]);
    est[1 + k] = q11 - cic_q1(&ccf, Wq[2], probs[k]);
  }
  return 0;
}

/* C_cic_rq(y, u, X, off, probs, taus, opts, smem, soff, nboot, seed, first)
 *   as C_cic, with X the covariates (a length(y) x p matrix, its first
 *   column the intercept), taus the grid of the quantile regressions
 *   (strictly increasing in (0, 1)), opts c(method, number of resampling
 *   units). nboot 0: list(est, cf, status) (status per cell: 0, or 1 when
 *   a fitted sample's covariates have rank < p, 2 when a fit fails);
 *   > 0: the draws as C_cic's (NA where a draw leaves a sample empty or
 *   rank deficient). The draws run serially (LAPACK in every pivot); in a
 *   draw, each sample's fit at the first tau starts from the point
 *   estimate's basis, each next tau from the previous tau's. */
SEXP C_cic_rq(SEXP y_, SEXP u_, SEXP X_, SEXP off_, SEXP probs_, SEXP taus_, SEXP opts_, SEXP smem_, SEXP soff_,
              SEXP nboot_, SEXP seed_, SEXP first_) {
  const char *fn = "C_cic_rq";
  dd_chk_type(y_, REALSXP, 0, fn, "y");
  dd_chk_finite(y_, 0, fn, "y");
  const R_xlen_t ny = XLENGTH(y_);
  if (ny > DD_INT_MAX) dd_bad(fn, "y", "too long");
  dd_chk_vec(opts_, INTSXP, 2, 0, fn, "opts");
  const int method = INTEGER(opts_)[0], nunits = INTEGER(opts_)[1];
  if (method != 1 && method != 2) dd_bad(fn, "opts", "method must be 1 or 2");
  if (nunits < 1 || nunits == NA_INTEGER) dd_bad(fn, "opts", "the number of units must be positive");
  dd_chk_vec(u_, INTSXP, ny, 0, fn, "u");
  dd_chk_range(u_, ny, 0, nunits - 1, fn, "u");
  dd_chk_type(X_, REALSXP, 0, fn, "X");
  SEXP dim = getAttrib(X_, R_DimSymbol);
  if (TYPEOF(dim) != INTSXP || XLENGTH(dim) != 2 || INTEGER(dim)[0] != (int) ny)
    dd_bad(fn, "X", "must be a matrix with length(y) rows");
  const int p = INTEGER(dim)[1];
  if (p < 1) dd_bad(fn, "X", "must have a column");
  dd_chk_finite(X_, 0, fn, "X");
  dd_chk_type(off_, INTSXP, 0, fn, "off");
  const R_xlen_t noff = XLENGTH(off_);
  if (noff < 5 || (noff - 1) % 4 != 0) dd_bad(fn, "off", "must have 4 * cells + 1 entries");
  const int ncell = (int) ((noff - 1) / 4);
  const int *off = INTEGER(off_);
  if (off[0] != 0 || off[noff - 1] != (int) ny) dd_bad(fn, "off", "must run from 0 to length(y)");
  for (R_xlen_t k = 0; k + 1 < noff; k++)
    if (off[k + 1] < off[k]) dd_bad(fn, "off", "must not decrease");
  const double *y = REAL(y_);
  for (int c = 0; c < ncell; c++)        /* the treated in t: sorted (their quantiles) */
    for (int i = off[4 * c + 3] + 1; i < off[4 * c + 4]; i++)
      if (y[i] < y[i - 1]) dd_bad(fn, "y", "each cell's sample 11 must be sorted ascending");
  dd_chk_type(probs_, REALSXP, 0, fn, "probs");
  dd_chk_finite(probs_, 0, fn, "probs");
  const int np = (int) XLENGTH(probs_);
  const double *probs = REAL(probs_);
  for (int k = 0; k < np; k++) {
    if (probs[k] < 0 || probs[k] > 1) dd_bad(fn, "probs", "must lie in [0, 1]");
    if (k > 0 && probs[k] < probs[k - 1]) dd_bad(fn, "probs", "must not decrease");
  }
  dd_chk_type(taus_, REALSXP, 0, fn, "taus");
  dd_chk_finite(taus_, 0, fn, "taus");
  const int nt = (int) XLENGTH(taus_);
  const double *taus = REAL(taus_);
  if (nt < 1) dd_bad(fn, "taus", "must not be empty");
  for (int k = 0; k < nt; k++) {
    if (!(taus[k] > 0 && taus[k] < 1)) dd_bad(fn, "taus", "must lie strictly between 0 and 1");
    if (k > 0 && taus[k] <= taus[k - 1]) dd_bad(fn, "taus", "must be strictly increasing");
  }
  dd_chk_type(smem_, INTSXP, 0, fn, "smem");
  const R_xlen_t nm = XLENGTH(smem_);
  dd_chk_range(smem_, nm, 0, nunits - 1, fn, "smem");
  dd_chk_type(soff_, INTSXP, 0, fn, "soff");
  const R_xlen_t ns1 = XLENGTH(soff_);
  if (ns1 < 1) dd_bad(fn, "soff", "must have at least one entry");
  const int *soff = INTEGER(soff_);
  if (soff[0] != 0 || soff[ns1 - 1] != (int) nm) dd_bad(fn, "soff", "must run from 0 to length(smem)");
  for (R_xlen_t k = 0; k + 1 < ns1; k++)
    if (soff[k + 1] < soff[k]) dd_bad(fn, "soff", "must not decrease");
  const int nstrata = (int) ns1 - 1;
  const int B = dd_chk_int(nboot_, 0, DD_INT_MAX, fn, "nboot");
  const int first = dd_chk_int(first_, 0, DD_INT_MAX, fn, "first");
  const int *u = INTEGER(u_), *smem = INTEGER(smem_);
  const int K = 1 + np;
  if ((double) ncell * K > DD_INT_MAX) dd_bad(fn, "probs", "too many estimates");
  if ((double) ncell * 3 * nt * p > DD_INT_MAX) dd_bad(fn, "taus", "too many fits");
  const double *X = REAL(X_);
  const int ldx = (int) ny;

  cic_sample *S = (cic_sample *) R_alloc((size_t) ncell * 4, sizeof(cic_sample));
  const double **Xs = (const double **) R_alloc((size_t) ncell * 4, sizeof(double *));
  int nmax = 1;
  for (int c = 0; c < ncell; c++)
    for (int q = 0; q < 4; q++) {
      const int k = 4 * c + q;
      S[k].y = y + off[k]; S[k].u = u + off[k]; S[k].n = off[k + 1] - off[k];
      Xs[k] = X + off[k];
      if (S[k].n > nmax) nmax = S[k].n;
    }
  cicx_scratch sc;
  cicx_scratch_init(&sc, nmax, p, nt);
  int *hb = (int *) R_alloc((size_t) ncell * 3 * nt * p, sizeof(int));
  int *ones = (int *) R_alloc((size_t) nunits, sizeof(int));
  for (int i = 0; i < nunits; i++) ones[i] = 1;
  R_xlen_t ncf = 0;
  for (int c = 0; c < ncell; c++) ncf += S[4 * c + 2].n;
  SEXP est = PROTECT(allocVector(REALSXP, (R_xlen_t) ncell * K));
  SEXP cf = PROTECT(allocVector(REALSXP, ncf));
  SEXP status = PROTECT(allocVector(INTSXP, ncell));
  double *pc = REAL(cf);
  for (R_xlen_t i = 0; i < ncf; i++) pc[i] = NA_REAL;
  double t_last = -1.0;
  for (int c = 0; c < ncell; c++) {
    dd_check_interrupt(&t_last);
    INTEGER(status)[c] = cicx_cell(S + 4 * c, Xs + 4 * c, ldx, p, ones, probs, np, taus, nt, method,
                                   hb + (size_t) c * 3 * nt * p, 0, &sc, REAL(est) + (R_xlen_t) c * K, pc,
                                   &t_last);
    pc += S[4 * c + 2].n;
  }
  if (B == 0) {
    const char *nms[3] = {"est", "cf", "status"};
    SEXP vals[3] = {est, cf, status};
    SEXP out = dd_named_list(3, nms, vals);
    UNPROTECT(3);
    return out;
  }
  for (int c = 0; c < ncell; c++)
    if (INTEGER(status)[c] != 0) dd_bad(fn, "X", "a cell's point estimate failed: no bootstrap");
  const uint64_t seed = dd_seed_arg(seed_, fn);
  const int ncol = ncell * K;
  SEXP out = PROTECT(allocMatrix(REALSXP, B, ncol));
  double *po = REAL(out);
  int *cnt = (int *) R_alloc((size_t) nunits, sizeof(int));
  double *cfb = (double *) R_alloc((size_t) nmax, sizeof(double));
  double *e = (double *) R_alloc((size_t) K, sizeof(double));
  for (int b = 0; b < B; b++) {
    dd_check_interrupt(&t_last);
    dd_rng g;
    dd_rng_init(&g, seed, (uint64_t) first + (uint64_t) b);
    cic_draw(&g, cnt, nunits, smem, soff, nstrata);
    for (int c = 0; c < ncell; c++) {
      cicx_cell(S + 4 * c, Xs + 4 * c, ldx, p, cnt, probs, np, taus, nt, method, hb + (size_t) c * 3 * nt * p, 1,
                &sc, e, cfb, &t_last);
      for (int k = 0; k < K; k++) po[b + (R_xlen_t) B * ((R_xlen_t) c * K + k)] = e[k];
    }
  }
  UNPROTECT(4);
  return out;
}
