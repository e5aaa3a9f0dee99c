/* Synthetic difference-in-differences (Arkhangelsky, Athey, Hirshberg,
 * Imbens and Wager 2021), as synthdid 0.0.9 defines it.
 *
 * Unit weights omega and time weights lambda solve penalised least-squares
 * problems on the simplex by Frank-Wolfe with exact line search: for
 * min_x ||A x - b||^2 + eta ||x||^2 over the simplex, a step moves x towards
 * the vertex with the smallest half-gradient A'(Ax - b) + eta x, by the
 * minimising step clamped to [0, 1]. The stopping rule is synthdid's: stop
 * after max_iter iterations or when the penalised objective
 * zeta^2 ||x||^2 + ||Ax - b||^2 / nrow fell by no more than min_decrease^2.
 * Both problems are set up on the collapsed panel (controls and the treated
 * average; pre-periods and the post-period average), with column centring
 * for the intercepts; by default a first round of at most 100 iterations is
 * sparsified (weights <= max / 4 set to zero, renormalised) and restarted.
 * With covariates, weights and the coefficient vector beta are updated
 * together: a Frank-Wolfe step for each weight vector and a gradient step of
 * size 1/t for beta (synthdid's sc.weight.fw.covariates).
 *
 * The arithmetic follows synthdid's R code operation by operation (sums of
 * squares and means in long double as R's sum() and mean(), matrix products
 * accumulated in BLAS order), so weights and estimates agree with synthdid's
 * to rounding.
 *
 * Replications (placebo, bootstrap, jackknife) run in parallel, one
 * replication per task with its own workspace; their row draws come from R,
 * so the results do not depend on the thread count. */
#include "diffdiff.h"
#include <math.h>
#include <string.h>
#include <stdlib.h>

typedef struct {
  double zeta_l, zeta_o, min_dec;
  int max_iter, max_iter_pre, l_int, o_int, sparsify, upd_l, upd_o;
} sdid_opts;

/* R's mean(): long double sum, then one refinement pass */
static double r_mean(const double *x, R_xlen_t n, R_xlen_t stride) {
  long double s = 0.0;
  for (R_xlen_t i = 0; i < n; i++) s += x[i * stride];
  s /= n;
  if (R_FINITE((double) s)) {
    long double t = 0.0;
    for (R_xlen_t i = 0; i < n; i++) t += (x[i * stride] - s);
    s += t / n;
  }
  return (double) s;
}

/* R's sum() of squares */
static double r_sumsq(const double *x, int n) {
  long double s = 0.0;
  for (int i = 0; i < n; i++) s += x[i] * x[i];
  return (double) s;
}

/* sum of squares in four interleaved double accumulators (the fast path;
 * within a few ulps of R's long double sum) */
static inline double sumsq4(const double *x, int n) {
  double a0 = 0.0, a1 = 0.0, a2 = 0.0, a3 = 0.0;
  int i = 0;
  for (; i + 4 <= n; i += 4) { a0 += x[i] * x[i]; a1 += x[i + 1] * x[i + 1]; a2 += x[i + 2] * x[i + 2]; a3 += x[i + 3] * x[i + 3]; }
  for (; i < n; i++) a0 += x[i] * x[i];
  return (a0 + a1) + (a2 + a3);
}

/* centre each column of the nr x nc matrix M (R's apply(M, 2, function(c) c - mean(c))) */
static void center_cols(double *M, int nr, int nc) {
  for (int j = 0; j < nc; j++) {
    double *c = M + (R_xlen_t) j * nr;
    const double m = r_mean(c, nr, 1);
    for (int i = 0; i < nr; i++) c[i] -= m;
  }
}

/* out[j] = sum_i r[i] A[i, j], each sum in row order (as BLAS dgemv "T"),
 * four columns at a time so that the four dependency chains overlap */
static void atr(const double *A, int lda, int nr, int nc, const double *r, double *out) {
  int j = 0;
  for (; j + 4 <= nc; j += 4) {
    const double *a0 = A + (R_xlen_t) j * lda, *a1 = a0 + lda, *a2 = a1 + lda, *a3 = a2 + lda;
    double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
    for (int i = 0; i < nr; i++) {
      const double ri = r[i];
      s0 += ri * a0[i]; s1 += ri * a1[i]; s2 += ri * a2[i]; s3 += ri * a3[i];
    }
    out[j] = s0; out[j + 1] = s1; out[j + 2] = s2; out[j + 3] = s3;
  }
  for (; j < nc; j++) {
    const double *a = A + (R_xlen_t) j * lda;
    double s = 0.0;
    for (int i = 0; i < nr; i++) s += r[i] * a[i];
    out[j] = s;
  }
}

/* y = A x for A nr x nc (column-major, lda), in BLAS column order; zero
 * entries of x add nothing and are skipped */
static void matvec(const double *A, int lda, int nr, int nc, const double *x, double *y) {
  memset(y, 0, sizeof(double) * nr);
  for (int j = 0; j < nc; j++) {
    const double xj = x[j];
    if (xj == 0.0) continue;
    const double *a = A + (R_xlen_t) j * lda;
    for (int i = 0; i < nr; i++) y[i] += xj * a[i];
  }
}

/* One Frank-Wolfe step for ||Ax - b||^2 + eta ||x||^2 on the simplex (synthdid's
 * fw.step with exact line search). Ax holds A x on entry and on exit; r, g
 * are scratch (nr, nc). */
static void fw_step(const double *A, int lda, int nr, int nc, const double *b, double eta,
                    double *x, double *Ax, double *r, double *g) {
  for (int i = 0; i < nr; i++) r[i] = Ax[i] - b[i];
  atr(A, lda, nr, nc, r, g);
  for (int j = 0; j < nc; j++) g[j] += eta * x[j];
  int im = 0;
  for (int j = 1; j < nc; j++) if (g[j] < g[im]) im = j;
  /* d.x = -x, d.x[im] = 1 - x[im] */
  int allzero = 1;
  for (int j = 0; j < nc && allzero; j++) allzero = (j == im) ? (1.0 - x[j] == 0.0) : (x[j] == 0.0);
  if (allzero) return;
  const double *ai = A + (R_xlen_t) im * lda;
  long double de = 0.0, dx = 0.0;
  for (int i = 0; i < nr; i++) { const double e = ai[i] - Ax[i]; de += e * e; }
  double num = 0.0;
  for (int j = 0; j < nc; j++) {
    const double d = (j == im) ? 1.0 - x[j] : -x[j];
    num += g[j] * d;
    dx += d * d;
  }
  const double step = -num / ((double) de + eta * (double) dx);
  const double c = step < 0.0 ? 0.0 : (step > 1.0 ? 1.0 : step);
  for (int j = 0; j < nc; j++) {
    const double d = (j == im) ? 1.0 - x[j] : -x[j];
    x[j] = x[j] + c * d;
  }
  matvec(A, lda, nr, nc, x, Ax);
}

/* synthdid's sc.weight.fw: Y is nr x (nc + 1) (targets in the last column),
 * copied and centred into work when intercept. x: start (in) and solution
 * (out). Returns the iterations.
 *
 * After a step x' = (1 - c) x + c e_i, Ax becomes Ax + c (A_i - Ax). Small
 * problems (nc <= FW_GRAM_MAX) also update the half-gradient's data part
 * q = A'(Ax - b) through the Gram matrix G = A'A, as (1 - c) q +
 * c (G_i - A'b), so that an iteration costs O(nr + nc) instead of O(nr nc);
 * larger ones recompute q each iteration. Ax and q are recomputed exactly
 * every FW_REFRESH iterations, so rounding drift stays at a few ulps. */
#define FW_GRAM_MAX 1024
#define FW_REFRESH 64

static size_t fw_work(int nr, int nc) {
  size_t w = (size_t) nr * (nc + 1) + 4 * (size_t) nr + 3 * (size_t) nc;
  if (nc <= FW_GRAM_MAX) w += (size_t) nc * nc + (size_t) nc;
  return w;
}

/* The Frank-Wolfe iterations of a small problem (nc <= FW_GRAM_MAX) in
 * scaled form: x = sx * xt and q = sq * qt, so that a step
 * x' = (1 - c) x + c e_im costs O(1) for x (sx' = (1 - c) sx,
 * xt_im += c / sx') and one fused pass over the nc weights for q
 * (q' = (1 - c) q + c h with h = G_im - A'b: sq' = (1 - c) sq,
 * qt += (c / sq') h, applied in the next iteration's pass that also forms the
 * half-gradient, its minimum and g'x). |x|^2 is updated exactly as
 * (1 - c)^2 |x|^2 + 2 c (1 - c) x_im + c^2. Every FW_REFRESH iterations x is
 * materialised and Ax, q, |x|^2 are recomputed from scratch. */
static int fw_gram_loop(const double *M, int nr, int nc, const double *b, const double *G, const double *Ab,
                        double eta, double z2, double md2, int max_iter, double *x, double *Ax, double *r,
                        double *qt, double *de) {
  double vprev = 0.0, vcur = 0.0, sx = 1.0, sq = 1.0, sx2 = 0.0, pend = 0.0;
  int t = 0, pim = -1;
  while (t < max_iter && (t < 2 || vprev - vcur > md2)) {
    t++;
    if ((t - 1) % FW_REFRESH == 0 || sx < 1e-150 || sq < 1e-150) {
      for (int j = 0; j < nc; j++) x[j] *= sx;
      sx = 1.0;
      matvec(M, nr, nr, nc, x, Ax);
      for (int i = 0; i < nr; i++) r[i] = Ax[i] - b[i];
      atr(M, nr, nr, nc, r, qt);
      sq = 1.0; pim = -1; pend = 0.0;
      sx2 = sumsq4(x, nc);
    }
    /* fused pass: pending q update, half-gradient, minimum, g'x */
    int im = 0;
    double gmin = 0.0, gx0 = 0.0, gx1 = 0.0;
    /* the pending update is a no-op (pend = 0, column 0) without a step */
    const double *Gp = G + (size_t) (pim >= 0 ? pim : 0) * nc;
    if (pim < 0) pend = 0.0;
    if (pend != 0.0) qt[0] += pend * (Gp[0] - Ab[0]);
    gmin = sq * qt[0] + eta * (sx * x[0]);
    gx0 = gmin * (sx * x[0]);
    int j = 1;
    for (; j + 1 < nc; j += 2) {
      const double q0 = qt[j] + pend * (Gp[j] - Ab[j]), q1 = qt[j + 1] + pend * (Gp[j + 1] - Ab[j + 1]);
      qt[j] = q0; qt[j + 1] = q1;
      const double x0 = sx * x[j], x1 = sx * x[j + 1];
      const double g0 = sq * q0 + eta * x0, g1 = sq * q1 + eta * x1;
      gx1 += g0 * x0; gx0 += g1 * x1;
      if (g0 < gmin) { gmin = g0; im = j; }
      if (g1 < gmin) { gmin = g1; im = j + 1; }
    }
    for (; j < nc; j++) {
      const double q0 = qt[j] + pend * (Gp[j] - Ab[j]);
      qt[j] = q0;
      const double x0 = sx * x[j], g0 = sq * q0 + eta * x0;
      gx1 += g0 * x0;
      if (g0 < gmin) { gmin = g0; im = j; }
    }
    pim = -1;
    double stepc = 0.0;                  /* Ax += stepc * de below */
    const double xi = sx * x[im];
    int allzero = xi == 1.0;
    for (int k = 0; k < nc && allzero; k++) if (k != im && x[k] != 0.0) allzero = 0;
    if (!allzero) {
      const double num = gmin - (gx0 + gx1);
      const double sdx = (sx2 - xi * xi) + (1.0 - xi) * (1.0 - xi);
      const double *ai = M + (size_t) im * nr;
      double d0 = 0.0, d1 = 0.0;
      int i = 0;
      for (; i + 1 < nr; i += 2) {
        const double u0 = ai[i] - Ax[i], u1 = ai[i + 1] - Ax[i + 1];
        de[i] = u0; de[i + 1] = u1; d0 += u0 * u0; d1 += u1 * u1;
      }
      for (; i < nr; i++) { const double u0 = ai[i] - Ax[i]; de[i] = u0; d0 += u0 * u0; }
      const double step = -num / ((d0 + d1) + eta * sdx);
      const double c = step < 0.0 ? 0.0 : (step > 1.0 ? 1.0 : step);
      if (c >= 1.0) {                      /* x = e_im, q = G_im - A'b exactly */
        for (int j = 0; j < nc; j++) { x[j] = 0.0; qt[j] = G[j + (size_t) im * nc] - Ab[j]; }
        x[im] = 1.0; sx = 1.0; sq = 1.0; sx2 = 1.0;
        for (int i = 0; i < nr; i++) Ax[i] = ai[i];
      } else if (c > 0.0) {
        sx2 = (1.0 - c) * (1.0 - c) * sx2 + 2.0 * c * (1.0 - c) * xi + c * c;
        sx *= (1.0 - c);
        x[im] += c / sx;
        sq *= (1.0 - c);
        pim = im; pend = c / sq;
        stepc = c;
      }
    }
    /* the step on Ax fused with the residual sum of squares */
    double e0 = 0.0, e1 = 0.0;
    int i = 0;
    for (; i + 1 < nr; i += 2) {
      const double a0 = Ax[i] + stepc * de[i], a1 = Ax[i + 1] + stepc * de[i + 1];
      Ax[i] = a0; Ax[i + 1] = a1;
      const double u0 = a0 - b[i], u1 = a1 - b[i + 1];
      e0 += u0 * u0; e1 += u1 * u1;
    }
    for (; i < nr; i++) { const double a0 = Ax[i] + stepc * de[i]; Ax[i] = a0; const double u0 = a0 - b[i]; e0 += u0 * u0; }
    vprev = vcur;
    vcur = z2 * sx2 + (e0 + e1) / nr;
  }
  for (int j = 0; j < nc; j++) x[j] *= sx;
  return t;
}

static int fw_solve(const double *Y, int ldy, int nr, int nc, double zeta, int intercept, double *x,
                    double min_dec, int max_iter, double *work, int prepared) {
  /* prepared: work already holds the centred copy and the Gram matrix of
   * the same Y (the second, sparsified round) */
  double *M = work, *Ax = M + (size_t) nr * (nc + 1), *r = Ax + nr, *err = r + nr, *g = err + nr;
  if (!prepared) {
    for (int j = 0; j <= nc; j++) memcpy(M + (size_t) j * nr, Y + (R_xlen_t) j * ldy, sizeof(double) * nr);
    if (intercept) center_cols(M, nr, nc + 1);
  }
  const double *b = M + (size_t) nr * nc;
  const double z2 = zeta * zeta, eta = nr * z2, md2 = min_dec * min_dec;
  const int gram = nc <= FW_GRAM_MAX;
  double *G = NULL, *q = g + nc, *Ab = NULL, *d = q + nc, *de = d + nc;
  if (gram) {
    G = de + nr; Ab = G + (size_t) nc * nc;
    if (!prepared) {
      /* G[, k] = A' A_k, four columns of A at a time */
      for (int k = 0; k < nc; k++) atr(M, nr, nr, k + 1, M + (size_t) k * nr, G + (size_t) k * nc);
      for (int k = 0; k < nc; k++) for (int j = k + 1; j < nc; j++) G[j + (size_t) k * nc] = G[k + (size_t) j * nc];
      atr(M, nr, nr, nc, b, Ab);
    }
  }
  double vprev = 0.0, vcur = 0.0;
  int t = 0;
  if (gram) {
    t = fw_gram_loop(M, nr, nc, b, G, Ab, eta, z2, md2, max_iter, x, Ax, r, q, de);
    return t;
  }
  while (t < max_iter && (t < 2 || vprev - vcur > md2)) {
    t++;
    if ((t - 1) % FW_REFRESH == 0) matvec(M, nr, nr, nc, x, Ax);   /* exact Ax */
    for (int i = 0; i < nr; i++) r[i] = Ax[i] - b[i];
    atr(M, nr, nr, nc, r, q);                                        /* q = A'(Ax - b) */
    int im = 0;
    double gmin = q[0] + eta * x[0], gx = gmin * x[0], sx2 = x[0] * x[0];
    for (int j = 1; j < nc; j++) {
      const double gj = q[j] + eta * x[j];
      gx += gj * x[j]; sx2 += x[j] * x[j];
      if (gj < gmin) { gmin = gj; im = j; }
    }
    int allzero = x[im] == 1.0;
    for (int k = 0; k < nc && allzero; k++) if (k != im && x[k] != 0.0) allzero = 0;
    if (!allzero) {
      const double xi = x[im], num = gmin - gx;
      const double sdx = (sx2 - xi * xi) + (1.0 - xi) * (1.0 - xi);
      const double *ai = M + (size_t) im * nr;
      for (int i = 0; i < nr; i++) de[i] = ai[i] - Ax[i];
      const double step = -num / (sumsq4(de, nr) + eta * sdx);
      const double c = step < 0.0 ? 0.0 : (step > 1.0 ? 1.0 : step);
      for (int i = 0; i < nr; i++) Ax[i] += c * de[i];
      for (int k = 0; k < nc; k++) x[k] -= c * x[k];
      x[im] += c;
    }
    for (int i = 0; i < nr; i++) err[i] = Ax[i] - b[i];
    vprev = vcur;
    vcur = z2 * sumsq4(x, nc) + sumsq4(err, nr) / nr;
  }
  return t;
}

static void sparsify(double *v, int n) {
  double mx = v[0];
  for (int i = 1; i < n; i++) if (v[i] > mx) mx = v[i];
  for (int i = 0; i < n; i++) if (v[i] <= mx / 4) v[i] = 0.0;
  long double s = 0.0;
  for (int i = 0; i < n; i++) s += v[i];
  const double sd = (double) s;
  for (int i = 0; i < n; i++) v[i] /= sd;
}

/* collapsed form of Y (n x T, rows 0..N0-1 controls): (N0+1) x (T0+1) */
static void collapse(const double *Y, int n, int T, int N0, int T0, double *Yc) {
  const int N1 = n - N0, T1 = T - T0, ld = N0 + 1;
  for (int t = 0; t < T0; t++) {
    for (int i = 0; i < N0; i++) Yc[i + (R_xlen_t) t * ld] = Y[i + (R_xlen_t) t * n];
    long double s = 0.0;                       /* colMeans of the treated rows */
    for (int i = N0; i < n; i++) s += Y[i + (R_xlen_t) t * n];
    Yc[N0 + (R_xlen_t) t * ld] = (double) (s / N1);
  }
  for (int i = 0; i < N0; i++) {               /* rowMeans of the post periods */
    long double s = 0.0;
    for (int t = T0; t < T; t++) s += Y[i + (R_xlen_t) t * n];
    Yc[i + (R_xlen_t) T0 * ld] = (double) (s / T1);
  }
  /* mean of the treated post block, column-major order */
  long double s = 0.0;
  for (int t = T0; t < T; t++) for (int i = N0; i < n; i++) s += Y[i + (R_xlen_t) t * n];
  s /= (long double) N1 * T1;
  if (R_FINITE((double) s)) {
    long double u = 0.0;
    for (int t = T0; t < T; t++) for (int i = N0; i < n; i++) u += (Y[i + (R_xlen_t) t * n] - s);
    s += u / ((long double) N1 * T1);
  }
  Yc[N0 + (R_xlen_t) T0 * ld] = (double) s;
}

/* the estimate (-omega, 1/N1)' Y (-lambda, 1/T1), products in BLAS order */
static double sdid_tau(const double *Y, int n, int T, int N0, int T0, const double *omega,
                       const double *lambda, double *row) {
  const int N1 = n - N0, T1 = T - T0;
  for (int t = 0; t < T; t++) {
    double s = 0.0;
    for (int i = 0; i < n; i++) s += (i < N0 ? -omega[i] : 1.0 / N1) * Y[i + (R_xlen_t) t * n];
    row[t] = s;
  }
  double s = 0.0;
  for (int t = 0; t < T; t++) s += row[t] * (t < T0 ? -lambda[t] : 1.0 / T1);
  return s;
}

/* workspace (doubles) of one fit on an n x T panel with nx covariates */
static size_t sdid_work(int n, int T, int N0, int T0, int nx) {
  const size_t nc = (size_t) (N0 + 1) * (T0 + 1);
  size_t w = (size_t) n * T + nc + (size_t) T0 * (N0 + 1) + (size_t) T;
  size_t f1 = fw_work(N0, T0), f2 = fw_work(T0, N0);
  w += f1 > f2 ? f1 : f2;
  if (nx > 0) w += (size_t) n * T * (nx + 1) + nc * (nx + 3) + (size_t) T0 * (N0 + 1) + 4 * (size_t) (N0 + T0 + 2) + (size_t) nx;
  return w;
}

/* Workspace bound for any fit on at most n rows with any number of controls
 * N0 <= n. sdid_work grows with N0 except at the Gram threshold: fw_work(T0,
 * N0) keeps the N0 x N0 Gram matrix only while N0 <= FW_GRAM_MAX, so a
 * replicate with fewer controls than n can need more than N0 = n. Every
 * other term grows with N0, so the maximum over N0 is at N0 = n or at
 * N0 = min(n, FW_GRAM_MAX). */
static size_t sdid_work_bound(int n, int T, int T0, int nx) {
  const size_t a = sdid_work(n, T, n, T0, nx);
  const size_t b = sdid_work(n, T, n < FW_GRAM_MAX ? n : FW_GRAM_MAX, T0, nx);
  return a > b ? a : b;
}

/* synthdid's sc.weight.fw.covariates on the collapsed Yc, Xc ((N0+1) x (T0+1)
 * x nx); lambda, omega, beta in/out. */
static void fw_covariates(const double *Yc, const double *Xc, int N0, int T0, int nx, const sdid_opts *o,
                          double *lambda, double *omega, double *beta, double *work) {
  const int ld = N0 + 1, nc = (N0 + 1) * (T0 + 1);
  double *Yb = work, *Yl = Yb + nc, *Yo = Yl + (size_t) N0 * (T0 + 1), *el = Yo + (size_t) T0 * (N0 + 1);
  double *eo = el + N0, *Ax = eo + T0, *r = Ax + (N0 > T0 ? N0 : T0), *g = r + (N0 > T0 ? N0 : T0);
  const double zl2 = o->zeta_l * o->zeta_l, zo2 = o->zeta_o * o->zeta_o, md2 = o->min_dec * o->min_dec;
  /* one update of the weights at Y - X beta; returns the objective */
  #define UPDATE_WEIGHTS(VAL) do {                                                         \
    for (int q = 0; q < nc; q++) { double s = 0.0;                                        \
      for (int c = 0; c < nx; c++) s += beta[c] * Xc[q + (R_xlen_t) c * nc];              \
      Yb[q] = Yc[q] - s; }                                                                \
    for (int t = 0; t <= T0; t++) memcpy(Yl + (size_t) t * N0, Yb + (size_t) t * ld, sizeof(double) * N0); \
    if (o->l_int) center_cols(Yl, N0, T0 + 1);                                            \
    if (o->upd_l) { matvec(Yl, N0, N0, T0, lambda, Ax);                                   \
      fw_step(Yl, N0, N0, T0, Yl + (size_t) T0 * N0, N0 * zl2, lambda, Ax, r, g); }       \
    matvec(Yl, N0, N0, T0, lambda, el);                                                   \
    for (int i = 0; i < N0; i++) el[i] -= Yl[i + (size_t) T0 * N0];                       \
    for (int i = 0; i <= N0; i++) for (int t = 0; t < T0; t++) Yo[t + (size_t) i * T0] = Yb[i + (size_t) t * ld]; \
    if (o->o_int) center_cols(Yo, T0, N0 + 1);                                            \
    if (o->upd_o) { matvec(Yo, T0, T0, N0, omega, Ax);                                    \
      fw_step(Yo, T0, T0, N0, Yo + (size_t) N0 * T0, T0 * zo2, omega, Ax, r, g); }        \
    matvec(Yo, T0, T0, N0, omega, eo);                                                    \
    for (int t = 0; t < T0; t++) eo[t] -= Yo[t + (size_t) N0 * T0];                       \
    VAL = zo2 * r_sumsq(omega, N0) + zl2 * r_sumsq(lambda, T0) + r_sumsq(eo, T0) / T0 + r_sumsq(el, N0) / N0; \
  } while (0)
  double vprev = 0.0, vcur = 0.0, v0;
  UPDATE_WEIGHTS(v0);
  (void) v0;
  int t = 0;
  while (t < o->max_iter && (t < 2 || fabs(vprev - vcur) > md2)) {
    t++;
    for (int c = 0; c < nx; c++) {
      const double *Xi = Xc + (R_xlen_t) c * nc;
      /* t(err.lambda) %*% Xi[1:N0, ] %*% c(lambda, -1) / N0 */
      double s1 = 0.0;
      {
        double acc = 0.0;
        for (int tt = 0; tt <= T0; tt++) {
          double u = 0.0;
          for (int i = 0; i < N0; i++) u += el[i] * Xi[i + (size_t) tt * ld];
          acc += u * (tt < T0 ? lambda[tt] : -1.0);
        }
        s1 = acc / N0;
      }
      /* t(err.omega) %*% t(Xi[, 1:T0]) %*% c(omega, -1) / T0 */
      double s2 = 0.0;
      {
        double acc = 0.0;
        for (int i = 0; i <= N0; i++) {
          double u = 0.0;
          for (int tt = 0; tt < T0; tt++) u += eo[tt] * Xi[i + (size_t) tt * ld];
          acc += u * (i < N0 ? omega[i] : -1.0);
        }
        s2 = acc / T0;
      }
      const double grad = -(s1 + s2);
      beta[c] = beta[c] - (1.0 / t) * grad;
    }
    vprev = vcur;
    UPDATE_WEIGHTS(vcur);
  }
  #undef UPDATE_WEIGHTS
}

/* One synthdid_estimate on rows[0..n-1] of Y (N x T; rows 0..N0-1 of the
 * selection are controls) with nx covariates X (N x T x nx). lambda (T0),
 * omega (N0): starts (NaN in [0]: synthdid's uniform default) or fixed
 * values; beta (nx) out. Returns the estimate. */
static double sdid_one(const double *Y, int N, int T, const int *rows, int n, int N0, int T0,
                       const double *X, int nx, const sdid_opts *o, double *lambda, double *omega,
                       double *beta, double *work) {
  double *Ys = work, *Yc = Ys + (size_t) n * T, *Yo = Yc + (size_t) (N0 + 1) * (T0 + 1);
  double *row = Yo + (size_t) T0 * (N0 + 1), *fw = row + T;
  for (int t = 0; t < T; t++)
    for (int i = 0; i < n; i++) Ys[i + (R_xlen_t) t * n] = Y[rows[i] + (R_xlen_t) t * N];
  if (ISNAN(lambda[0])) for (int t = 0; t < T0; t++) lambda[t] = 1.0 / T0;
  if (ISNAN(omega[0])) for (int i = 0; i < N0; i++) omega[i] = 1.0 / N0;
  collapse(Ys, n, T, N0, T0, Yc);
  if (nx == 0) {
    const int it1 = o->sparsify ? o->max_iter_pre : o->max_iter;
    if (o->upd_l) {
      fw_solve(Yc, N0 + 1, N0, T0, o->zeta_l, o->l_int, lambda, o->min_dec, it1, fw, 0);
      if (o->sparsify) {
        sparsify(lambda, T0);
        fw_solve(Yc, N0 + 1, N0, T0, o->zeta_l, o->l_int, lambda, o->min_dec, o->max_iter, fw, 1);
      }
    }
    if (o->upd_o) {
      for (int i = 0; i <= N0; i++) for (int t = 0; t < T0; t++) Yo[t + (size_t) i * T0] = Yc[i + (size_t) t * (N0 + 1)];
      fw_solve(Yo, T0, T0, N0, o->zeta_o, o->o_int, omega, o->min_dec, it1, fw, 0);
      if (o->sparsify) {
        sparsify(omega, N0);
        fw_solve(Yo, T0, T0, N0, o->zeta_o, o->o_int, omega, o->min_dec, o->max_iter, fw, 1);
      }
    }
    return sdid_tau(Ys, n, T, N0, T0, omega, lambda, row);
  }
  /* covariates: collapse each, solve jointly, then the estimate on Y - X beta */
  const size_t nc = (size_t) (N0 + 1) * (T0 + 1);
  double *Xs = fw + (fw_work(N0, T0) > fw_work(T0, N0) ? fw_work(N0, T0) : fw_work(T0, N0));
  double *Xc = Xs + (size_t) n * T, *cw = Xc + nc * nx;
  for (int c = 0; c < nx; c++) {
    const double *Xi = X + (R_xlen_t) c * N * T;
    for (int t = 0; t < T; t++)
      for (int i = 0; i < n; i++) Xs[i + (R_xlen_t) t * n] = Xi[rows[i] + (R_xlen_t) t * N];
    collapse(Xs, n, T, N0, T0, Xc + nc * c);
  }
  for (int c = 0; c < nx; c++) beta[c] = 0.0;
  fw_covariates(Yc, Xc, N0, T0, nx, o, lambda, omega, beta, cw);
  /* Y - contract3(X, beta): out = 0; out += beta[c] X[, , c] in order */
  double *Yb = Xs;
  for (R_xlen_t q = 0; q < (R_xlen_t) n * T; q++) Yb[q] = 0.0;
  for (int c = 0; c < nx; c++) {
    const double *Xi = X + (R_xlen_t) c * N * T;
    for (int t = 0; t < T; t++)
      for (int i = 0; i < n; i++) Yb[i + (R_xlen_t) t * n] += beta[c] * Xi[rows[i] + (R_xlen_t) t * N];
  }
  for (R_xlen_t q = 0; q < (R_xlen_t) n * T; q++) Yb[q] = Ys[q] - Yb[q];
  return sdid_tau(Yb, n, T, N0, T0, omega, lambda, row);
}

static void opts_get(SEXP o_, sdid_opts *o) {
  dd_chk_vec(o_, REALSXP, 10, 0, "sdid.c", "opts");
  const double *v = REAL(o_);
  for (int j = 0; j < 10; j++) if (!R_FINITE(v[j])) error("internal error in sdid.c: `opts` not finite; please report");
  if (v[0] < 0 || v[1] < 0 || v[2] < 0 || v[3] < 0 || v[3] > 1e9 || v[4] < 0 || v[4] > 1e9)
    error("internal error in sdid.c: `opts` out of range; please report");
  o->zeta_l = v[0]; o->zeta_o = v[1]; o->min_dec = v[2];
  o->max_iter = (int) v[3]; o->max_iter_pre = (int) v[4];
  o->l_int = (int) v[5]; o->o_int = (int) v[6]; o->sparsify = (int) v[7];
  o->upd_l = (int) v[8]; o->upd_o = (int) v[9];
}

static int x_dims(SEXP X_, int N, int T) {
  if (isNull(X_)) return 0;
  dd_chk_type(X_, REALSXP, 0, "sdid.c", "X");
  if (N < 1 || T < 1) error("internal error in sdid.c: covariates; please report");
  if (XLENGTH(X_) % ((R_xlen_t) N * T) != 0) error("internal error in sdid.c: covariates; please report");
  return (int) (XLENGTH(X_) / ((R_xlen_t) N * T));
}

/* sd of the first differences of the control pre-period rows
 * (synthdid's default noise.level; R's var algorithm) */
/* the panel an SDiD routine relies on: Y an N x T double matrix, 1 <= N0 < N
 * controls (N0 <= N when ctrl_only), 1 <= T0 < T pre-periods */
static void sdid_check(SEXP Y_, SEXP N0_, SEXP T0_, int ctrl_only, const char *fn) {
  dd_chk_mat(Y_, REALSXP, -1, -1, 0, fn, "Y");
  const int N = nrows(Y_), T = ncols(Y_);
  if (N < 2 - ctrl_only || T < 2 - ctrl_only) error("internal error in %s: `Y` too small; please report", fn);
  dd_chk_int(N0_, 1, ctrl_only ? N : N - 1, fn, "N0");
  dd_chk_int(T0_, 1, ctrl_only ? T : T - 1, fn, "T0");
}

SEXP C_sdid_noise(SEXP Y_, SEXP N0_, SEXP T0_) {
  sdid_check(Y_, N0_, T0_, 1, "C_sdid_noise");
  const int N = nrows(Y_), N0 = asInteger(N0_), T0 = asInteger(T0_);
  const double *Y = REAL(Y_);
  const R_xlen_t m = (R_xlen_t) N0 * (T0 - 1);
  if (m < 2) return ScalarReal(NA_REAL);
  double *d = (double *) R_alloc(m, sizeof(double));
  R_xlen_t k = 0;
  for (int i = 0; i < N0; i++)
    for (int t = 0; t + 1 < T0; t++) d[k++] = Y[i + (R_xlen_t) (t + 1) * N] - Y[i + (R_xlen_t) t * N];
  const double mu = r_mean(d, m, 1);
  long double ss = 0.0;
  for (R_xlen_t q = 0; q < m; q++) ss += (d[q] - mu) * (d[q] - mu);
  return ScalarReal(sqrt((double) (ss / (m - 1))));
}

/* One fit on the whole panel (rows 0..N-1, controls first). lambda0/omega0:
 * starts or fixed weights (NULL: uniform). Returns estimate, lambda, omega, beta. */
SEXP C_sdid_fit(SEXP Y_, SEXP N0_, SEXP T0_, SEXP X_, SEXP opts_, SEXP lambda0_, SEXP omega0_) {
  const char *fn = "C_sdid_fit";
  sdid_check(Y_, N0_, T0_, 0, fn);
  dd_chk_vec(lambda0_, REALSXP, asInteger(T0_), 1, fn, "lambda0");
  dd_chk_vec(omega0_, REALSXP, asInteger(N0_), 1, fn, "omega0");
  const int N = nrows(Y_), T = ncols(Y_), N0 = asInteger(N0_), T0 = asInteger(T0_);
  const int nx = x_dims(X_, N, T);
  sdid_opts o;
  opts_get(opts_, &o);
  SEXP lam = PROTECT(allocVector(REALSXP, T0)), om = PROTECT(allocVector(REALSXP, N0));
  SEXP be = PROTECT(allocVector(REALSXP, nx));
  if (isNull(lambda0_)) REAL(lam)[0] = NA_REAL; else memcpy(REAL(lam), REAL(lambda0_), sizeof(double) * T0);
  if (isNull(omega0_)) REAL(om)[0] = NA_REAL; else memcpy(REAL(om), REAL(omega0_), sizeof(double) * N0);
  int *rows = (int *) R_alloc(N, sizeof(int));
  for (int i = 0; i < N; i++) rows[i] = i;
  double *work = (double *) R_alloc(sdid_work(N, T, N0, T0, nx), sizeof(double));
  const double est = sdid_one(REAL(Y_), N, T, rows, N, N0, T0, isNull(X_) ? NULL : REAL(X_), nx, &o,
                              REAL(lam), REAL(om), REAL(be), work);
  SEXP e = PROTECT(ScalarReal(est));
  const char *nm[4] = {"estimate", "lambda", "omega", "beta"};
  SEXP v[4] = {e, lam, om, be};
  SEXP out = dd_named_list(4, nm, v);
  UNPROTECT(4);
  return out;
}

/* Replications. type 1 placebo: each column of idx (N0 x B, 1-based) is a
 * permutation of the controls; the first N0 - N1 stay controls, the last N1
 * are placebo-treated; weights re-solved from the fitted ones (omega
 * renormalised on the kept controls). type 2 bootstrap: each column of idx
 * (N x B) is a sorted resample of all units; controls are those <= N0.
 * type 3 jackknife: unit i left out, weights fixed at the fitted ones (omega
 * renormalised), re-solved only for beta with covariates; for every unit
 * (idx NULL) or for the units in idx (an integer vector, 1-based), so that
 * the jackknife can run in batches. Returns the B (or N) estimates. */
SEXP C_sdid_reps(SEXP Y_, SEXP N0_, SEXP T0_, SEXP X_, SEXP opts_, SEXP lambda_, SEXP omega_,
                 SEXP type_, SEXP idx_, SEXP lens_, SEXP n0s_) {
  const char *fn = "C_sdid_reps";
  sdid_check(Y_, N0_, T0_, 0, fn);
  {
    const int N_ = nrows(Y_), N0c = asInteger(N0_), tp = dd_chk_int(type_, 1, 4, fn, "type");
    dd_chk_vec(lambda_, REALSXP, asInteger(T0_), 0, fn, "lambda");
    dd_chk_vec(omega_, REALSXP, N0c, 0, fn, "omega");
    if (tp == 1 && N0c - (N_ - N0c) < 1) error("internal error in %s: placebo needs more controls than treated; please report", fn);
    if (tp == 3 && !isNull(idx_)) {
      dd_chk_type(idx_, INTSXP, 0, fn, "idx");
      const int *ix = INTEGER(idx_);
      for (R_xlen_t b = 0; b < XLENGTH(idx_); b++)
        if (ix[b] < 1 || ix[b] > N_) error("internal error in %s: `idx` out of range; please report", fn);
    }
    if (tp != 3) {
      dd_chk_mat(idx_, INTSXP, -1, -1, 0, fn, "idx");
      const int nr = nrows(idx_), nb = ncols(idx_), *ix = INTEGER(idx_);
      if (tp == 4) { dd_chk_vec(lens_, INTSXP, nb, 0, fn, "lens"); dd_chk_vec(n0s_, INTSXP, nb, 0, fn, "n0s"); }
      for (int b = 0; b < nb; b++) {
        const int *col = ix + (R_xlen_t) b * nr;
        /* rows used and how many of the first must be controls (omega's index) */
        int nuse = nr, nctl = 0;
        if (tp == 1) nctl = nr;
        if (tp == 4) {
          nuse = INTEGER(lens_)[b]; nctl = INTEGER(n0s_)[b];
          if (nuse < 0 || nuse > nr || nctl < 0 || nctl > nuse) error("internal error in %s: `lens`/`n0s`; please report", fn);
        }
        for (int i = 0; i < nuse; i++) {
          if (col[i] < 1 || col[i] > (i < nctl ? N0c : N_)) error("internal error in %s: `idx` out of range; please report", fn);
          if (tp == 2 && i > 0 && col[i] < col[i - 1]) error("internal error in %s: `idx` not sorted; please report", fn);
        }
      }
    }
  }
  const int N = nrows(Y_), T = ncols(Y_), N0 = asInteger(N0_), T0 = asInteger(T0_), type = asInteger(type_);
  const int nx = x_dims(X_, N, T), N1 = N - N0;
  const double *Y = REAL(Y_), *X = isNull(X_) ? NULL : REAL(X_);
  const double *lam = REAL(lambda_), *om = REAL(omega_);
  sdid_opts o;
  opts_get(opts_, &o);
  if (type == 3) o.upd_l = o.upd_o = 0;
  /* type 4: column b of idx (padded) lists lens[b] rows, the first n0s[b]
   * of them controls */
  const int len = type == 1 ? N0 : (type == 2 ? N : (type == 3 ? N - 1 : nrows(idx_)));
  const int B = type == 3 ? (isNull(idx_) ? N : LENGTH(idx_)) : ncols(idx_);
  if (type != 3 && nrows(idx_) != len) error("internal error in sdid.c: replication indices; please report");
  if (type == 4 && (LENGTH(lens_) != B || LENGTH(n0s_) != B)) error("internal error in sdid.c: replication sizes; please report");
  const int *lens = type == 4 ? INTEGER(lens_) : NULL, *n0s = type == 4 ? INTEGER(n0s_) : NULL;
  const int *idx = isNull(idx_) ? NULL : INTEGER(idx_);
  /* type 3: the unit left out by replicate b (0-based) */
#define JK_UNIT(b) (idx ? idx[b] - 1 : (b))
  SEXP out = PROTECT(allocVector(REALSXP, B));
  double *est = REAL(out);
  /* jackknife without covariates: fixed weights give closed forms */
  if (type == 3 && nx == 0) {
    double *c = (double *) R_alloc(N, sizeof(double));
    /* c_i = Y_i (-lambda, 1/T1): each unit's contrast */
    for (int i = 0; i < N; i++) {
      double s = 0.0;
      for (int t = 0; t < T; t++) s += Y[i + (R_xlen_t) t * N] * (t < T0 ? -lam[t] : 1.0 / (T - T0));
      c[i] = s;
    }
    long double S = 0.0, Ct = 0.0, W = 0.0;
    for (int i = 0; i < N0; i++) { S += om[i] * c[i]; W += om[i]; }
    for (int i = N0; i < N; i++) Ct += c[i];
    for (int b = 0; b < B; b++) {
      const int i = JK_UNIT(b);
      if (i < N0) {
        const long double w = W - om[i];
        est[b] = (double) (Ct / N1 - (w != 0.0 ? (S - om[i] * c[i]) / w : 0.0));
        if (w == 0.0) {        /* sum_normalize of zeros: uniform over the other controls */
          long double u = 0.0;
          for (int j = 0; j < N0; j++) if (j != i) u += c[j];
          est[b] = (double) (Ct / N1 - u / (N0 - 1));
        }
      } else {
        est[b] = (double) ((Ct - c[i]) / (N1 - 1) - S / W);
      }
    }
    UNPROTECT(1);
    return out;
  }
  const int nmax = (type == 2 || type == 4) ? (len > N ? len : N) : len;
  const size_t per = sdid_work_bound(nmax, T, T0, nx) + (size_t) T0 + (size_t) nmax + (size_t) nx + 8;
  const int nth = dd_nthreads(B, (double) B * N * T * 50.0);
  const size_t avail = per - ((size_t) T0 + (size_t) nmax + (size_t) nx + 8);
  double *mem = (double *) R_alloc(per * nth, sizeof(double));
  int *imem = (int *) R_alloc((size_t) (nmax + 1) * nth, sizeof(int));
  int short_work = 0;
  dd_chunks ch;
  dd_chunks_init(&ch, B, nth);
  while (dd_chunks_next(&ch)) {
  const int b_lo = ch.lo, b_hi = ch.hi;   /* locals: the compiler keeps them out of memory */
#ifdef _OPENMP
#pragma omp parallel for num_threads(nth) schedule(dynamic, 1)
#endif
  for (int b = b_lo; b < b_hi; b++) {
    double *w = mem + per * dd_tid();
    int *rows = imem + (size_t) (nmax + 1) * dd_tid();
    double *l = w, *om2 = l + T0, *be = om2 + nmax, *work = be + nx + 8;
    int n, n0;
    if (type == 1) {
      n = N0; n0 = N0 - N1;
      for (int i = 0; i < n; i++) rows[i] = idx[i + (R_xlen_t) b * len] - 1;
    } else if (type == 2) {
      n = N; n0 = 0;
      for (int i = 0; i < n; i++) { rows[i] = idx[i + (R_xlen_t) b * len] - 1; n0 += rows[i] < N0; }
    } else if (type == 3) {
      n = N - 1; n0 = 0;
      const int left = JK_UNIT(b);
      for (int i = 0, q = 0; i < N; i++) if (i != left) { rows[q++] = i; n0 += i < N0; }
    } else {
      n = lens[b]; n0 = n0s[b];
      for (int i = 0; i < n; i++) rows[i] = idx[i + (R_xlen_t) b * len] - 1;
    }
    if (n0 == 0 || n0 == n) { est[b] = NA_REAL; continue; }
    if (n > nmax || sdid_work(n, T, n0, T0, nx) > avail) {   /* never: sdid_work_bound */
#ifdef _OPENMP
#pragma omp atomic write
#endif
      short_work = 1;
      est[b] = NA_REAL;
      continue;
    }
    /* omega restricted to the kept controls, renormalised (sum_normalize) */
    long double s = 0.0;
    for (int i = 0; i < n0; i++) { om2[i] = om[rows[i]]; s += om2[i]; }
    if ((double) s != 0.0) { const double sd = (double) s; for (int i = 0; i < n0; i++) om2[i] /= sd; }
    else for (int i = 0; i < n0; i++) om2[i] = 1.0 / n0;
    memcpy(l, lam, sizeof(double) * T0);
    est[b] = sdid_one(Y, N, T, rows, n, n0, T0, X, nx, &o, l, om2, be, work);
  }
  }
  if (short_work) error("internal error in sdid.c: replicate workspace too small; please report");
  UNPROTECT(1);
  return out;
#undef JK_UNIT
}
