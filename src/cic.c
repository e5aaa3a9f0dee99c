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
