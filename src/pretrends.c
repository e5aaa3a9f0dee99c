/* Power of the pre-test for parallel trends, and event-study means after
 * pre-testing (Roth 2022, "Pretest with Caution").
 *
 * X ~ N(mu, S) in K dimensions (the pre-period coefficients). The pre-test is
 * passed when lower <= X <= upper componentwise. We need
 *   P(pass)            a multivariate-normal rectangle probability, and
 *   E[X 1{pass}]       the first moments of the truncated normal.
 *
 * Rectangle probabilities: Genz's (1992) separation-of-variables transform.
 * With S = L L' (L lower triangular, variables ordered as in Genz and
 * Bretz 2009, section 4.1.3, see pt_setup) and
 * X - mu = L y, the y_i are drawn one after the other from their truncated
 * conditional ranges, which turns P into an integral over [0,1]^(K-1) of
 *   f(w) = prod_i (e_i - d_i),  d_i = Phi(alpha_i(y_<i)), e_i = Phi(beta_i(y_<i)),
 * the last factor needing no draw.
 *
 * Moments: by Stein's identity E[Y h(Y)] = S E[grad h(Y)] for Y = X - mu ~
 * N(0, S) and h the indicator of the rectangle (Tallis 1961; the formula of
 * tmvtnorm::mtmvnorm, which pretrends uses),
 *   E[(X - mu) 1{pass}] = S g,  g_k = phi_k(a_k) P_k(a_k) - phi_k(b_k) P_k(b_k),
 * where a, b are the centred limits, phi_k the N(0, S_kk) density, and P_k(t)
 * the probability that the other K-1 coordinates are in the rectangle given
 * Y_k = t: again a rectangle probability, in K-1 dimensions, with mean
 * S_{-k,k} t / S_kk and covariance S_{-k,-k} - S_{-k,k} S_{k,-k} / S_kk. So
 * every integrand is a smooth probability integrand (sampling the moments
 * directly converges far more slowly). For further variables Z with
 * A = Cov(Z, X): E[(Z - m_Z) 1{pass}] = A S^{-1} E[(X - mu) 1{pass}] = A g.
 *
 * All 1 + 2K integrals use the same points: Korobov rank-1 lattice rules
 * frac(k z / N + shift) (N prime, see below) with the baker's (tent)
 * transform, and NSHIFT random shifts drawn from a fixed internal seed (R's
 * RNG is not touched). Each estimate is the mean over shifts; its error is 3
 * standard errors across shifts. The lattice size roughly doubles until the
 * error of P, and separately the errors of the moments, are below the
 * tolerance or the largest size is reached; the error of a conditional mean
 * E[. | pass] = E[. 1{pass}] / P combines both.
 *
 * For K = 1 there is nothing to integrate: the result is the closed form. */
#include "diffdiff.h"
#include <math.h>
#include <float.h>

#define NSHIFT 12
#define PT_SEED 0x70726574726e6473ULL /* fixed: results do not depend on set.seed() */

static const double pt_sqrt2pi = 2.506628274631000502415765;

static double pt_pnorm(double x) { return 0.5 * erfc(-x * M_SQRT1_2); }
static double pt_dnorm(double x) { return isfinite(x) ? exp(-0.5 * x * x) / pt_sqrt2pi : 0.0; }

/* standard normal quantile: the Abramowitz-Stegun 26.2.23 start (error below
 * 4.5e-4), then two Halley steps (cubic convergence: below 1e-15) on the tail probability. Pure C, thread safe. */
static double pt_qnorm(double p) {
  if (!(p > 0.0)) return -INFINITY;
  if (!(p < 1.0)) return INFINITY;
  double q = p < 0.5 ? p : 1.0 - p; /* exact for p >= 0.5 */
  if (q < 1e-300) q = 1e-300;
  double t = sqrt(-2.0 * log(q));
  double x = -(t - (2.515517 + t * (0.802853 + t * 0.010328)) /
                   (1.0 + t * (1.432788 + t * (0.189269 + t * 0.001308))));
  for (int it = 0; it < 2; it++) {
    double e = pt_pnorm(x) - q;
    double u = e * pt_sqrt2pi * exp(0.5 * x * x);
    x -= u / (1.0 + 0.5 * x * u);
  }
  return p < 0.5 ? x : -x;
}

/* one rectangle probability, ready for integration */
typedef struct {
  int K;           /* dimension (0: the probability is 1) */
  double *L;       /* K x K Cholesky factor of the (ordered) covariance */
  double *a, *b;   /* centred, ordered limits */
  int empty;       /* the rectangle has probability 0 (a limit pair crossed) */
} pt_prob;

/* Variable ordering of Genz and Bretz (2009, section 4.1.3): step by step,
 * take the remaining variable whose interval has the smallest probability
 * given the earlier ones at their truncated conditional means (a partial
 * Cholesky factorisation, used only to choose the order; ties go to the
 * earlier variable). Then factor the reordered covariance with LAPACK.
 * Returns 0 on success. */
static int pt_setup(pt_prob *pp, int K, const double *S, int ldS, const double *a, const double *b) {
  pp->K = K; pp->empty = 0;
  if (K == 0) return 0;
  int *ord = (int *) R_alloc(K, sizeof(int));
  double *G = (double *) R_alloc((size_t) K * K, sizeof(double)); /* partial factor, rows by variable */
  double *ym = (double *) R_alloc(K, sizeof(double));
  pp->L = (double *) R_alloc((size_t) K * K, sizeof(double));
  pp->a = (double *) R_alloc(K, sizeof(double));
  pp->b = (double *) R_alloc(K, sizeof(double));
  for (int i = 0; i < K; i++) {
    ord[i] = i;
    if (!(b[i] > a[i])) pp->empty = 1;
  }
  for (R_xlen_t i = 0; i < (R_xlen_t) K * K; i++) G[i] = 0.0;
  for (int i = 0; i < K; i++) {
    int best = i;
    double bestp = INFINITY, bal = 0.0, bbe = 0.0, bsd = 1.0;
    for (int j = i; j < K; j++) {
      int v = ord[j];
      double s = 0.0, ss = 0.0;
      for (int k = 0; k < i; k++) { s += G[v + (R_xlen_t) k * K] * ym[k]; ss += G[v + (R_xlen_t) k * K] * G[v + (R_xlen_t) k * K]; }
      double var = S[v + (R_xlen_t) v * ldS] - ss;
      double sd = var > 0.0 ? sqrt(var) : 0.0;
      if (!(sd > 0.0)) return 1;
      double al = (a[v] - s) / sd, be = (b[v] - s) / sd;
      double p = pt_pnorm(be) - pt_pnorm(al);
      if (p < bestp) { bestp = p; best = j; bal = al; bbe = be; bsd = sd; }
    }
    int t = ord[i]; ord[i] = ord[best]; ord[best] = t;
    int v = ord[i];
    /* column i of the partial factor for the remaining variables */
    G[v + (R_xlen_t) i * K] = bsd;
    for (int j = i + 1; j < K; j++) {
      int u = ord[j];
      double s = S[u + (R_xlen_t) v * ldS];
      for (int k = 0; k < i; k++) s -= G[u + (R_xlen_t) k * K] * G[v + (R_xlen_t) k * K];
      G[u + (R_xlen_t) i * K] = s / bsd;
    }
    ym[i] = bestp > 0.0 ? (pt_dnorm(bal) - pt_dnorm(bbe)) / bestp : 0.0;
  }
  for (int i = 0; i < K; i++) {
    pp->a[i] = a[ord[i]];
    pp->b[i] = b[ord[i]];
    for (int j = 0; j < K; j++)
      pp->L[i + (R_xlen_t) j * K] = j <= i ? S[ord[i] + (R_xlen_t) ord[j] * ldS] : 0.0;
  }
  int info = 0;
  F77_CALL(dpotrf)("L", &K, pp->L, &K, &info FCONE);
  return info;
}

/* Genz's integrand at w in [0,1]^(K-1); y is scratch of length K */
static double pt_integrand(const pt_prob *pp, const double *w, double *y) {
  int K = pp->K;
  if (K == 0) return 1.0;
  if (pp->empty) return 0.0;
  const double *L = pp->L, *a = pp->a, *b = pp->b;
  double f = 1.0;
  for (int i = 0; i < K; i++) {
    double s = 0.0;
    for (int j = 0; j < i; j++) s += L[i + (R_xlen_t) j * K] * y[j];
    double lii = L[i + (R_xlen_t) i * K];
    double al = (a[i] - s) / lii, be = (b[i] - s) / lii;
    double pr;
    if (al > 0.0) { /* both limits in the upper tail: work with upper tails */
      double du = pt_pnorm(-be), eu = pt_pnorm(-al);
      pr = eu - du;
      if (!(pr > 0.0)) return 0.0;
      if (i < K - 1) y[i] = -pt_qnorm(eu - w[i] * pr);
    } else {
      double d = pt_pnorm(al), e = pt_pnorm(be);
      pr = e - d;
      if (!(pr > 0.0)) return 0.0;
      if (i < K - 1) y[i] = pt_qnorm(d + w[i] * pr);
    }
    f *= pr;
  }
  return f;
}

/* Rank-1 lattice rules of Korobov type: N prime, generator (1, a, a^2, ...)
 * mod N. Sizes roughly double from level to level; a is chosen, among a fixed
 * deterministic set of candidates, to minimise the classical P_2 criterion
 * sum_k prod_j (1 + 2 pi^2 B2({k z_j / N})), B2(x) = x^2 - x + 1/6, which
 * governs the error of lattice rules for smooth periodic integrands (the
 * baker's transform makes ours periodic). Generators are cached per (level,
 * dimension) for the session; the cache is filled on the main thread only. */
#define PT_NLEV 11
static const int pt_levels[PT_NLEV] = {1021, 2039, 4093, 8191, 16381, 32749, 65521, 131071,
                                       262139, 524287, 1048573};
#define PT_CACHED_D 40
static int pt_gen_cache[PT_NLEV][PT_CACHED_D + 1];

static void pt_korobov_z(int N, int a, int d, int64_t *z) {
  int64_t v = 1;
  for (int j = 0; j < d; j++) { z[j] = v; v = (v * a) % N; }
}

/* P_2 criterion of generator a; stops early once above `best` */
static double pt_p2(int N, int a, int d, int64_t *z, double best) {
  const double c = 2.0 * M_PI * M_PI;
  pt_korobov_z(N, a, d, z);
  double e = 0.0;
  for (int64_t k = 0; k < N; k++) {
    double pr = 1.0;
    for (int j = 0; j < d; j++) {
      double x = (double) ((k * z[j]) % N) / N;
      pr *= 1.0 + c * (x * x - x + 1.0 / 6.0);
    }
    e += pr;
    if (e > best) return e;
  }
  return e;
}

static int pt_generator(int lev, int d) {
  if (d <= PT_CACHED_D && pt_gen_cache[lev][d] > 0) return pt_gen_cache[lev][d];
  int N = pt_levels[lev];
  int64_t *z = (int64_t *) R_alloc(d, sizeof(int64_t));
  int best_a = 1;
  if (d > 1) {
    int ncand = N <= 70000 ? 128 : 32;
    double best = INFINITY;
    const double phi = 0.6180339887498948482;
    for (int m = 1; m <= ncand; m++) {
      double fr = m * phi; fr -= floor(fr);
      int a = 2 + (int) (fr * (N - 3));
      double e = pt_p2(N, a, d, z, best);
      if (e < best) { best = e; best_a = a; }
    }
  }
  if (d <= PT_CACHED_D) pt_gen_cache[lev][d] = best_a;
  return best_a;
}

typedef struct {
  double prob, prob_err;
  long npts;   /* points per shift */
  int level;   /* lattice level used */
  int status;  /* 0 ok, 1 tolerance not reached, 2 covariance not positive definite */
} pt_result;

/* The kernel. mu, lower, upper: K; S: K x K; A: Q x K (covariances of Q
 * further variables with X, Q may be 0), mZ: Q (their means). tol: on P
 * (absolute) and on the conditional means (absolute, times tol_scale).
 * With moments = 0 only P is computed (mean and mean_err are left NaN).
 * Outputs mean[K + Q] (conditional means E[. | pass]) and mean_err[K + Q].
 * Scratch from R_alloc; no R API inside the parallel region. */
static pt_result pt_rect(int K, const double *mu, const double *S, const double *lower,
                         const double *upper, int Q, const double *A, const double *mZ,
                         double tol, double tol_scale, int minlev, int maxlev, int moments,
                         double *mean, double *mean_err) {
  pt_result res = {0.0, 0.0, 0, 0, 0};
  int KQ = K + Q, J = moments ? 1 + 2 * K : 1, Km = K - 1;
  double *a = (double *) R_alloc(K, sizeof(double)), *b = (double *) R_alloc(K, sizeof(double));
  for (int i = 0; i < K; i++) { a[i] = lower[i] - mu[i]; b[i] = upper[i] - mu[i]; }
  /* problem 0: P(pass); problems 1 + 2k (lower limit) and 2 + 2k (upper limit):
   * the other coordinates given Y_k at that limit; weight c[j] = phi_k(limit) */
  pt_prob *pr = (pt_prob *) R_alloc(J, sizeof(pt_prob));
  double *c = (double *) R_alloc(J, sizeof(double));
  c[0] = 1.0;
  if (pt_setup(&pr[0], K, S, K, a, b) != 0) { res.status = 2; return res; }
  double *C = (double *) R_alloc((size_t) (Km > 0 ? Km * Km : 1), sizeof(double));
  double *ca = (double *) R_alloc(Km > 0 ? Km : 1, sizeof(double));
  double *cb = (double *) R_alloc(Km > 0 ? Km : 1, sizeof(double));
  for (int k = 0; k < K && moments; k++) {
    double skk = S[k + (R_xlen_t) k * K], sd = sqrt(skk);
    for (int side = 0; side < 2; side++) {
      int j = 1 + 2 * k + side;
      double t = side == 0 ? a[k] : b[k];
      c[j] = isfinite(t) ? pt_dnorm(t / sd) / sd : 0.0;
      if (c[j] == 0.0) { pr[j].K = 0; pr[j].empty = 1; continue; }
      int r = 0;
      for (int i = 0; i < K; i++) {
        if (i == k) continue;
        double sik = S[i + (R_xlen_t) k * K], m = sik * t / skk;
        ca[r] = a[i] - m; cb[r] = b[i] - m;
        int q = 0;
        for (int l = 0; l < K; l++) {
          if (l == k) continue;
          C[r + (R_xlen_t) q * Km] = S[i + (R_xlen_t) l * K] - sik * S[l + (R_xlen_t) k * K] / skk;
          q++;
        }
        r++;
      }
      if (pt_setup(&pr[j], Km, C, Km, ca, cb) != 0) {
        /* a degenerate conditional covariance (e.g. perfectly correlated
         * pre periods) cannot arise for a positive definite S */
        res.status = 2; return res;
      }
    }
  }
  int D = K - 1, Dz = D > 0 ? D : 1;
  int64_t *zi = (int64_t *) R_alloc(Dz, sizeof(int64_t));
  double *shift = (double *) R_alloc((size_t) NSHIFT * Dz, sizeof(double));
  for (int m = 0; m < NSHIFT; m++) {
    dd_rng g;
    dd_rng_init(&g, PT_SEED, (uint64_t) m);
    for (int i = 0; i < D; i++) shift[i + (R_xlen_t) m * D] = dd_rng_unif(&g);
  }
  int ns = D > 0 ? NSHIFT : 1;
  double *sums = (double *) R_alloc((size_t) ns * J, sizeof(double));  /* per shift, per problem */
  double *scr = (double *) R_alloc((size_t) ns * (2 * K), sizeof(double));
  double *est = (double *) R_alloc((size_t) ns * (KQ > 0 ? KQ : 1), sizeof(double)); /* per-shift moments */
  double *g = (double *) R_alloc(K, sizeof(double));
  if (minlev < 0) minlev = 0;
  if (maxlev > PT_NLEV - 1) maxlev = PT_NLEV - 1;
  if (maxlev < minlev) maxlev = minlev;
  /* P and the moments are refined separately: each group of integrals stops
   * at the first lattice level where its own error is small enough (the
   * moment integrals usually need far fewer points than P). */
  int doneP = 0, doneM = !moments, levP = minlev, levM = moments ? minlev : -1;
  double Pbar = NAN, errP = NAN;
  double *Mbar = (double *) R_alloc(KQ, sizeof(double)), *errM = (double *) R_alloc(KQ, sizeof(double));
  for (int i = 0; i < KQ; i++) { Mbar[i] = NAN; errM[i] = NAN; }
  double tlast = -1.0;
  for (int lev = minlev;; lev++) {
    dd_check_interrupt(&tlast);   /* Ctrl-C between lattice levels */
    long N = D > 0 ? pt_levels[lev] : 1;
    if (D > 0) pt_korobov_z((int) N, pt_generator(lev, D), D, zi);
    int j0 = doneP ? 1 : 0, j1 = doneM ? 1 : J; /* active problems j0 <= j < j1 */
    int nth = dd_nthreads(ns, (double) N * ns * (j1 - j0) * K * (K + 20));
#ifdef _OPENMP
#pragma omp parallel for num_threads(nth) schedule(static, 1)
#endif
    for (int m = 0; m < ns; m++) {
      double *y = scr + (R_xlen_t) m * (2 * K), *w = y + K;
      double *sm = sums + (R_xlen_t) m * J;
      for (int j = j0; j < j1; j++) sm[j] = 0.0;
      for (long k = 0; k < N; k++) {
        for (int i = 0; i < D; i++) {
          double x = (double) ((k * zi[i]) % N) / (double) N + shift[i + (R_xlen_t) m * D];
          if (x >= 1.0) x -= 1.0;
          w[i] = 1.0 - fabs(2.0 * x - 1.0);
        }
        for (int j = j0; j < j1; j++) if (c[j] != 0.0) sm[j] += pt_integrand(&pr[j], w, y);
      }
    }
    (void) nth;
    if (!doneP) { /* P: mean and 3 standard errors over shifts */
      double sP = 0.0;
      Pbar = 0.0;
      for (int m = 0; m < ns; m++) Pbar += sums[(R_xlen_t) m * J] / (double) N;
      Pbar /= ns;
      for (int m = 0; m < ns; m++) { double d = sums[(R_xlen_t) m * J] / (double) N - Pbar; sP += d * d; }
      errP = ns > 1 ? 3.0 * sqrt(sP / (ns - 1) / ns) : 0.0;
      levP = lev;
    }
    if (!doneM) { /* E[(X - mu) 1{pass}] = S g and E[(Z - mZ) 1{pass}] = A g, per shift */
      for (int m = 0; m < ns; m++) {
        double *sm = sums + (R_xlen_t) m * J, *e = est + (R_xlen_t) m * KQ;
        for (int k = 0; k < K; k++)
          g[k] = (c[1 + 2 * k] * sm[1 + 2 * k] - c[2 + 2 * k] * sm[2 + 2 * k]) / (double) N;
        for (int i = 0; i < K; i++) {
          double s = 0.0;
          for (int k = 0; k < K; k++) s += S[i + (R_xlen_t) k * K] * g[k];
          e[i] = s;
        }
        for (int q = 0; q < Q; q++) {
          double s = 0.0;
          for (int k = 0; k < K; k++) s += A[q + (R_xlen_t) k * Q] * g[k];
          e[K + q] = s;
        }
      }
      for (int i = 0; i < KQ; i++) {
        double mb = 0.0, sv = 0.0;
        for (int m = 0; m < ns; m++) mb += est[(R_xlen_t) m * KQ + i];
        mb /= ns;
        for (int m = 0; m < ns; m++) { double d = est[(R_xlen_t) m * KQ + i] - mb; sv += d * d; }
        Mbar[i] = mb;
        errM[i] = ns > 1 ? 3.0 * sqrt(sv / (ns - 1) / ns) : 0.0;
      }
      levM = lev;
    }
    double worst = 0.0;
    for (int i = 0; i < KQ && moments; i++) {
      double e = Pbar > 0.0 ? errM[i] / Pbar : INFINITY;
      if (e > worst || ISNAN(e)) worst = e;
    }
    if (ns == 1 || errP <= tol) doneP = 1;
    if (ns == 1 || worst <= tol * tol_scale) doneM = 1;
    if (doneP && doneM) break;
    if (lev >= maxlev) { res.status = 1; break; }
    R_CheckUserInterrupt();
  }
  res.prob = Pbar;
  res.prob_err = errP;
  for (int i = 0; i < KQ; i++) {
    /* E[. | pass] = E[. 1{pass}] / P; the two estimates are independent
     * (different points unless at the same level), errors combined in quadrature */
    double r = moments && Pbar > 0.0 ? Mbar[i] / Pbar : NAN;
    mean[i] = (i < K ? mu[i] : mZ[i - K]) + r;
    mean_err[i] = moments && Pbar > 0.0 ? sqrt(errM[i] * errM[i] + r * r * errP * errP) / Pbar : NAN;
  }
  res.level = levP > levM ? levP : levM;
  res.npts = D > 0 ? pt_levels[levP] : 1;
  return res;
}

/* .Call entry: mu, lower, upper (K), S (K x K), A (Q x K), mZ (Q),
 * ctrl = c(tol, tol_scale, first level, last level, moments) (levels 0-based).
 * Returns list(prob, prob_error, mean, mean_error, points, converged, level). */
SEXP C_pretrends_mvn(SEXP mu, SEXP S, SEXP lower, SEXP upper, SEXP A, SEXP mZ, SEXP ctrl) {
  const char *fn = "C_pretrends_mvn";
  /* a NaN in the means, covariances or limits makes every error estimate
   * NaN, so that the lattice refinement would run to its last level (about
   * two minutes for K = 4): refused, as any other broken contract */
  dd_chk_finite(mu, 0, fn, "mu");
  dd_chk_finite(mZ, 0, fn, "mZ");
  if (XLENGTH(mu) > 1000 || XLENGTH(mZ) > 1000) error("internal error in %s: too many dimensions; please report", fn);
  dd_chk_finite(S, 0, fn, "S");
  dd_chk_finite(lower, 1, fn, "lower");
  dd_chk_finite(upper, 1, fn, "upper");
  dd_chk_finite(A, 0, fn, "A");
  dd_chk_vec(ctrl, REALSXP, 5, 0, fn, "ctrl");
  for (int j = 0; j < 5; j++) if (!R_FINITE(REAL(ctrl)[j])) error("internal error in %s: `ctrl` not finite; please report", fn);
  if (REAL(ctrl)[2] < 0 || REAL(ctrl)[2] > PT_NLEV - 1 || REAL(ctrl)[3] < 0 || REAL(ctrl)[3] > PT_NLEV - 1)
    error("internal error in %s: lattice levels out of range; please report", fn);
  int K = LENGTH(mu), Q = LENGTH(mZ);
  if (K < 1 || LENGTH(S) != K * K || LENGTH(lower) != K || LENGTH(upper) != K ||
      LENGTH(A) != Q * K || LENGTH(ctrl) != 5)
    error("internal error in pretrends.c: argument lengths do not match; please report");
  const double *ct = REAL(ctrl);
  int nprot = 0;
  SEXP mean = PROTECT(allocVector(REALSXP, K + Q)); nprot++;
  SEXP merr = PROTECT(allocVector(REALSXP, K + Q)); nprot++;
  pt_result r = pt_rect(K, REAL(mu), REAL(S), REAL(lower), REAL(upper), Q, REAL(A), REAL(mZ),
                        ct[0], ct[1], (int) ct[2], (int) ct[3], ct[4] != 0.0, REAL(mean), REAL(merr));
  if (r.status == 2)
    error("internal error in pretrends.c: the pre-period covariance is not positive definite; please report");
  SEXP prob = PROTECT(ScalarReal(r.prob)); nprot++;
  SEXP perr = PROTECT(ScalarReal(r.prob_err)); nprot++;
  SEXP npts = PROTECT(ScalarReal((double) r.npts * (K > 1 ? NSHIFT : 1))); nprot++;
  SEXP conv = PROTECT(ScalarLogical(r.status == 0)); nprot++;
  SEXP lev = PROTECT(ScalarInteger(r.level)); nprot++;
  const char *nm[] = {"prob", "prob_error", "mean", "mean_error", "points", "converged", "level"};
  SEXP vals[] = {prob, perr, mean, merr, npts, conv, lev};
  SEXP out = dd_named_list(7, nm, vals);
  UNPROTECT(nprot);
  return out;
}
