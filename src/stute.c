/* Wild bootstrap of Stute's (1997) Cramer-von Mises test of a polynomial
 * regression (did_had(stute = TRUE), dd_stute(); StuteTest 1.0.2's
 * stute_test()). For each of H horizons the R side hands over the residuals
 * e of the polynomial fit in the sorted order of the data, a thin Q (n x p)
 * spanning the design and, for each sorted observation, the row of the
 * bootstrap uniforms it reads. Draw b gives observation j the Mammen weight
 * w = (1 + sqrt 5) / 2 if U[pos[j], b] > (sqrt 5 + 1) / (2 sqrt 5) and
 * (1 - sqrt 5) / 2 otherwise; the bootstrap residuals are those of
 * w * e on the design, r = v - Q Q'v, and the statistic is
 * sum_k (sum_{j <= k} r_j)^2 / n^2.
 *
 * The uniforms are either given (an nG x B matrix) or drawn here from R's
 * generator exactly as matrix(runif(nG * B), nG, B) draws them: column by
 * column, nG values each, through Rmath's runif(0, 1) (the function behind
 * stats::runif), so that set.seed() gives the same draws as the R code it
 * replaces. They are drawn in blocks of columns on the main thread, so that
 * memory is O(nG x block + B x H), never O(nG x B); every column is
 * computed on its own (any thread, same bits), and Ctrl-C is seen between
 * chunks of columns (dd_chunks_next). */
#include "diffdiff.h"
#include <Rmath.h>

/* one draw, one horizon: the bootstrap statistic (v: scratch of n) */
static double stute_one(const double *e, const int *pos, const double *Q, int n, int p, const double *u,
                        double *v, double *coef) {
  const double s5 = sqrt(5.0);
  const double thr = (s5 + 1.0) / (2.0 * s5);
  const double w[2] = {(1.0 - s5) / 2.0, (1.0 + s5) / 2.0};   /* indexed: no branch to mispredict */
  for (int j = 0; j < n; j++) v[j] = w[u[pos[j]] > thr] * e[j];
  for (int c = 0; c < p; c++) {
    const double *q = Q + (R_xlen_t) c * n;
    double s = 0.0;
    for (int j = 0; j < n; j++) s += q[j] * v[j];
    coef[c] = s;
  }
  /* cumulated residuals (in double: long double, as R's cumsum() and
   * colSums(), took twice the time and changed nothing at the 1e-14 level
   * where this projection and qr.resid()'s Householder steps differ) */
  double cum = 0.0, ss = 0.0;
  for (int j = 0; j < n; j++) {
    double r = v[j];
    for (int c = 0; c < p; c++) r -= Q[j + (R_xlen_t) c * n] * coef[c];
    cum += r;
    ss += cum * cum;
  }
  return ss / ((double) n * (double) n);
}

/* e, pos, q: the H horizons' residuals, uniform rows (0-based, < nG) and thin
 * Q matrices, concatenated; n, p: their sizes; U: NULL (draw) or nG x B.
 * Returns the B x H matrix of bootstrap statistics. */
SEXP C_stute_boot(SEXP e_, SEXP pos_, SEXP q_, SEXP n_, SEXP p_, SEXP nG_, SEXP B_, SEXP U_) {
  const char *fn = "C_stute_boot";
  const int nG = dd_chk_int(nG_, 1, DD_INT_MAX, fn, "nG");
  const int B = dd_chk_int(B_, 1, DD_INT_MAX, fn, "B");
  dd_chk_type(n_, INTSXP, 0, fn, "n");
  const int H = LENGTH(n_);
  if (H < 1) error("internal error in %s: `n` must have at least one horizon; please report", fn);
  dd_chk_vec(p_, INTSXP, H, 0, fn, "p");
  const int *nk = INTEGER(n_), *pk = INTEGER(p_);
  R_xlen_t N = 0, NQ = 0;
  int pmax = 1;
  for (int k = 0; k < H; k++) {
    if (nk[k] == NA_INTEGER || nk[k] < 1 || pk[k] == NA_INTEGER || pk[k] < 1 || pk[k] > nk[k])
      error("internal error in %s: `n`, `p` must satisfy 1 <= p <= n; please report", fn);
    N += nk[k];
    NQ += (R_xlen_t) nk[k] * pk[k];
    if (pk[k] > pmax) pmax = pk[k];
  }
  dd_chk_vec(e_, REALSXP, N, 0, fn, "e");
  dd_chk_codes(pos_, N, nG, fn, "pos");
  dd_chk_vec(q_, REALSXP, NQ, 0, fn, "q");
  dd_chk_mat(U_, REALSXP, nG, B, 1, fn, "U");
  const double *e = REAL(e_), *Q = REAL(q_);
  const int *pos = INTEGER(pos_);
  const int draw = isNull(U_);
  /* offsets of each horizon in e / pos and in q */
  R_xlen_t *oe = (R_xlen_t *) R_alloc(H, sizeof(R_xlen_t)), *oq = (R_xlen_t *) R_alloc(H, sizeof(R_xlen_t));
  oe[0] = 0; oq[0] = 0;
  for (int k = 1; k < H; k++) {
    oe[k] = oe[k - 1] + nk[k - 1];
    oq[k] = oq[k - 1] + (R_xlen_t) nk[k - 1] * pk[k - 1];
  }
  SEXP out = PROTECT(allocMatrix(REALSXP, B, H));
  double *st = REAL(out);
  /* the work per draw: a comparison, a product and p multiply-adds twice
   * per observation */
  const double per = (double) N * (4.0 + 4.0 * pmax);
  const int nth = dd_nthreads(B, per * B);
  int nmax = 1;
  for (int k = 0; k < H; k++) if (nk[k] > nmax) nmax = nk[k];
  double *coef = (double *) R_alloc((size_t) pmax * nth, sizeof(double));
  double *vs = (double *) R_alloc((size_t) nmax * nth, sizeof(double));
  /* draws: blocks of `cap` columns (about 2^20 doubles, 8 MB, or one column
   * per thread) */
  int cap = B;
  if (draw) {
    cap = nG >= (1 << 20) ? 1 : (1 << 20) / nG;
    if (cap < nth) cap = nth;                  /* every thread has a column */
    if (cap > B) cap = B;
  }
  double *buf = draw ? (double *) R_alloc((size_t) nG * cap, sizeof(double)) : NULL;
  const double *U = draw ? NULL : REAL(U_);
  if (draw) GetRNGstate();
  dd_chunks ch;
  dd_chunks_init(&ch, B, nth);
  while (dd_chunks_next(&ch)) {
    for (int lo = ch.lo; lo < ch.hi; lo += cap) {
      const int hi = ch.hi - lo > cap ? lo + cap : ch.hi;
      const double *u0;
      if (draw) {
        const R_xlen_t m = (R_xlen_t) (hi - lo) * nG;
        for (R_xlen_t i = 0; i < m; i++) buf[i] = runif(0.0, 1.0);
        u0 = buf;
      } else {
        u0 = U + (R_xlen_t) lo * nG;
      }
#ifdef _OPENMP
#pragma omp parallel for num_threads(nth) schedule(dynamic, 1)
#endif
      for (int b = lo; b < hi; b++) {
        const double *u = u0 + (R_xlen_t) (b - lo) * nG;
        double *cf = coef + (size_t) pmax * dd_tid(), *v = vs + (size_t) nmax * dd_tid();
        for (int k = 0; k < H; k++)
          st[b + (R_xlen_t) k * B] = stute_one(e + oe[k], pos + oe[k], Q + oq[k], nk[k], pk[k], u, v, cf);
      }
    }
  }
  if (draw) PutRNGstate();
  UNPROTECT(1);
  return out;
}
