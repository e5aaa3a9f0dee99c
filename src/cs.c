/* Callaway and Sant'Anna (2021) group-time average treatment effects.
 *
 * Each ATT(g,t) is a 2x2 DiD on a cell sample (units first treated in g and
 * the comparison units) between a base period and t, estimated by one of the
 * three panel estimators of Sant'Anna and Zhao (2020) that did calls through
 * DRDID: outcome regression ("reg"), standardised inverse probability
 * weighting ("ipw") or doubly robust ("dr"), with the propensity score from a
 * weighted logit and the outcome model from weighted least squares on the
 * comparison units. Each returns the estimate and its influence function.
 *
 * The logit is fitted by IRLS exactly as fastglm (DRDID's fitter) does: the
 * binomial starting values (w y + 1/2) / (w + 1), the same working response
 * and weights, step halving when the deviance rises, and the stopping rule
 * |dev - dev_old| / (0.1 + |dev|) < 1e-8 (at most 100 iterations), so that the
 * fitted scores equal DRDID's to rounding.
 *
 * The engine gathers each cell from the wide outcome matrix and computes the
 * cells in parallel, each cell by one thread with its own workspace; problems
 * are recorded per cell and reported in R afterwards. */
#include "diffdiff.h"
#include <math.h>
#include <float.h>
#include <string.h>
#include <stdlib.h>

#define CS_TOL 1e-8
#define CS_MAXIT 100
#define LOGIT_THRESH 30.0

enum { CS_OK = 0, CS_PS_NOCONV = 1, CS_SINGULAR_OR = 2, CS_SINGULAR_PS = 3, CS_EMPTY = 4, CS_OVERLAP = 5 };

typedef struct {            /* one thread's scratch, sized for the largest cell */
  double *dy, *D, *X, *w, *ps, *eta, *mu, *z, *wt, *od, *inf, *trim;
  double *A, *L, *beta, *bprev, *v1, *v2, *v3;
  double *Lor, *Lps, *Mor, *wtr, *wco, mt, mc;    /* a panel task's shared quantities */
  int *idx;
} cs_work;

static void cs_work_carve(cs_work *W, double *mem, int *imem, int n, int k) {
  double *p = mem;
  W->dy = p; p += n; W->D = p; p += n; W->X = p; p += (size_t) n * k; W->w = p; p += n;
  W->ps = p; p += n; W->eta = p; p += n; W->mu = p; p += n; W->z = p; p += n;
  W->wt = p; p += n; W->od = p; p += n; W->inf = p; p += n; W->trim = p; p += n;
  W->A = p; p += (size_t) k * k; W->L = p; p += (size_t) k * k;
  W->beta = p; p += k; W->bprev = p; p += k; W->v1 = p; p += k; W->v2 = p; p += k; W->v3 = p; p += k;
  W->Lor = p; p += (size_t) k * k; W->Lps = p; p += (size_t) k * k; W->Mor = p; p += k;
  W->wtr = p; p += n; W->wco = p; p += n;
  W->idx = imem;
}
static size_t cs_work_doubles(int n, int k) { return (size_t) n * (14 + k) + 4 * (size_t) k * k + 6 * (size_t) k; }

/* R's logit link (src/library/stats/src/family.c), clamped at |eta| > 30 */
static inline double logit_linkinv(double eta) {
  double t = eta < -LOGIT_THRESH ? DBL_EPSILON : (eta > LOGIT_THRESH ? 1.0 / DBL_EPSILON : exp(eta));
  return t / (1.0 + t);
}
static inline double ylogy(double y, double mu) { return y != 0.0 ? y * log(y / mu) : 0.0; }
static double binom_dev(int n, const double *y, const double *mu, const double *w) {
  double d = 0.0;
  for (int i = 0; i < n; i++) d += 2.0 * w[i] * (ylogy(y[i], mu[i]) + ylogy(1.0 - y[i], 1.0 - mu[i]));
  return d;
}

/* A = X' diag(wt) X (k x k, full), b = X' (wt * y) (when y given); for
 * small k in one pass over the rows */
static void crossprod_w(int n, int k, const double *X, const double *wt, const double *y,
                        double *A, double *b) {
  memset(A, 0, sizeof(double) * k * k);
  if (b) memset(b, 0, sizeof(double) * k);
  if (k <= 8) {
    double xi[8];
    for (int i = 0; i < n; i++) {
      const double wi = wt[i];
      if (wi == 0.0) continue;
      for (int a = 0; a < k; a++) xi[a] = X[i + (R_xlen_t) a * n];
      for (int a = 0; a < k; a++) {
        const double wxa = wi * xi[a];
        if (b) b[a] += wxa * y[i];
        for (int c = 0; c <= a; c++) A[a + c * k] += wxa * xi[c];
      }
    }
  } else {
    for (int a = 0; a < k; a++) {
      const double *xa = X + (R_xlen_t) a * n;
      if (b) { double s = 0.0; for (int i = 0; i < n; i++) s += xa[i] * wt[i] * y[i]; b[a] = s; }
      for (int c = 0; c <= a; c++) {
        const double *xc = X + (R_xlen_t) c * n; double s = 0.0;
        for (int i = 0; i < n; i++) s += xa[i] * wt[i] * xc[i];
        A[a + c * k] = s;
      }
    }
  }
  for (int a = 0; a < k; a++) for (int c = a + 1; c < k; c++) A[a + c * k] = A[c + a * k];
}

static void xbeta(int n, int k, const double *X, const double *beta, double *out) {
  for (int i = 0; i < n; i++) out[i] = 0.0;
  for (int a = 0; a < k; a++) { const double *xa = X + (R_xlen_t) a * n; double b = beta[a]; for (int i = 0; i < n; i++) out[i] += b * xa[i]; }
}

/* weighted logit of y on X by fastglm's IRLS; fills W->ps (fitted), returns 1 if converged */
static int logit_fit(int n, int k, const double *X, const double *y, const double *pw, cs_work *W,
                     int *ok) {
  double *mu = W->mu, *eta = W->eta, *z = W->z, *wt = W->wt, *beta = W->beta, *bprev = W->bprev;
  for (int i = 0; i < n; i++) { mu[i] = (pw[i] * y[i] + 0.5) / (pw[i] + 1.0); eta[i] = log(mu[i] / (1.0 - mu[i])); }
  memset(beta, 0, sizeof(double) * k);
  double dev = binom_dev(n, y, mu, pw), devold;
  int conv = 0;
  *ok = 1;
  for (int it = 0; it < CS_MAXIT; it++) {
    for (int i = 0; i < n; i++) {
      /* dmu/deta = mu (1 - mu) for the logit (R's clamp kept for |eta| > 30) */
      double var = mu[i] * (1.0 - mu[i]);
      double me = (eta[i] > LOGIT_THRESH || eta[i] < -LOGIT_THRESH) ? DBL_EPSILON : var;
      z[i] = eta[i] + (y[i] - mu[i]) / me;
      wt[i] = pw[i] * me * me / var;
    }
    memcpy(bprev, beta, sizeof(double) * k);
    crossprod_w(n, k, X, wt, z, W->A, beta);
    memcpy(W->L, W->A, sizeof(double) * k * k);
    if (!dd_chol_lower(k, W->L)) { *ok = 0; return 0; }
    dd_chol_solve(k, W->L, beta);
    xbeta(n, k, X, beta, eta);
    for (int i = 0; i < n; i++) mu[i] = logit_linkinv(eta[i]);
    devold = dev;
    dev = binom_dev(n, y, mu, pw);
    if (!R_FINITE(dev) || (it > 0 && (dev - devold) / (0.1 + fabs(dev)) >= CS_TOL)) {
      for (int h = 0; h < CS_MAXIT; h++) {
        for (int a = 0; a < k; a++) beta[a] = 0.5 * (beta[a] + bprev[a]);
        xbeta(n, k, X, beta, eta);
        for (int i = 0; i < n; i++) mu[i] = logit_linkinv(eta[i]);
        dev = binom_dev(n, y, mu, pw);
        if (R_FINITE(dev) && (dev - devold) / (0.1 + fabs(dev)) < CS_TOL) break;
      }
    }
    if (fabs(dev - devold) / (0.1 + fabs(dev)) < CS_TOL) { conv = 1; break; }
  }
  for (int i = 0; i < n; i++) W->ps[i] = mu[i];
  return conv;
}

/* A panel task: the cells that share one sample (the treated cohort and the
 * same comparison units) and the covariates and weights of one period. Its
 * n units are gathered in W (D, X with the intercept first, raw weights w).
 * cs_task_setup does what does not depend on the outcome: the weights
 * normalised to mean one (DRDID's i.weights / mean(i.weights)), the
 * propensity score with did's overlap guard and trimming, the Cholesky factor
 * of the comparison units' X'WX, the estimation-effect moments of the outcome
 * regression and the propensity-score Hessian. cs_cell_compute then
 * estimates one cell from its outcome changes W->dy. method 0 reg, 1 ipw,
 * 2 dr. Each cell's numbers equal a separate fit of the cell: the shared
 * quantities are computed from the same inputs in the same order. */
static int cs_task_setup(int method, int n, int k, cs_work *W, double trim_level, int *n_trim,
                         double *work4k, int *iwork, int overlap_in_fit) {
  const double *D = W->D, *X = W->X;
  double *w = W->w, *ps = W->ps, *tr = W->trim;
  int status = CS_OK;
  double sw = 0.0;
  for (int i = 0; i < n; i++) sw += w[i];
  sw /= n;
  for (int i = 0; i < n; i++) w[i] /= sw;
  *n_trim = 0;
  if (method >= 1) {
    if (k == 1) {
      /* intercept only: the MLE is the weighted share treated. The estimate
       * and influence function do not depend on this constant (it cancels in
       * the normalised weights, and its estimation effect is zero), so the
       * closed form equals fastglm's iterate to rounding. */
      double s1 = 0.0, s0 = 0.0;
      for (int i = 0; i < n; i++) { s1 += w[i] * D[i]; s0 += w[i]; }
      for (int i = 0; i < n; i++) ps[i] = s1 / s0;
    } else {
      int ok = 1;
      if (!logit_fit(n, k, X, D, w, W, &ok)) status = CS_PS_NOCONV;
      if (!ok) return CS_SINGULAR_PS;
    }
    if (overlap_in_fit) {       /* uniform weights: this is did's unweighted guard fit */
      double mx = 0.0;
      for (int i = 0; i < n; i++) if (ps[i] > mx) mx = ps[i];
      if (mx >= 0.999) return CS_OVERLAP;
    }
    for (int i = 0; i < n; i++) {
      if (ps[i] > 1.0 - 1e-6) ps[i] = 1.0 - 1e-6;
      tr[i] = D[i] == 1.0 ? (ps[i] < 1.01) : (ps[i] < trim_level);
      if (!tr[i]) (*n_trim)++;
    }
  }
  /* outcome regression on the comparison units: Cholesky of X'W0X */
  if (method == 0 || method == 2) {
    double *wc = W->wt;
    for (int i = 0; i < n; i++) wc[i] = w[i] * (1.0 - D[i]);
    crossprod_w(n, k, X, wc, NULL, W->A, NULL);
    if (!dd_chol_ok(k, W->A, W->Lor, work4k, iwork)) return CS_SINGULAR_OR;
  }
  double mt = 0.0, mc = 0.0;
  double *wtr = W->wtr, *wco = W->wco;
  for (int i = 0; i < n; i++) {
    if (method == 0) { wtr[i] = w[i] * D[i]; wco[i] = wtr[i]; }
    else {
      wtr[i] = tr[i] * w[i] * D[i];
      wco[i] = tr[i] * w[i] * ps[i] * (1.0 - D[i]) / (1.0 - ps[i]);
    }
    mt += wtr[i]; mc += wco[i];
  }
  mt /= n; mc /= n;
  if (!(mt > 0.0) || !(mc > 0.0)) return CS_EMPTY;
  W->mt = mt; W->mc = mc;
  /* the outcome regression's estimation effect enters as
   * asy.lin.rep.ols %*% M with asy.lin.rep.ols_i = w_i (1 - D_i) e_i x_i'
   * (X'W0X / n)^{-1}; reg: M = -M1(w.cont)/mc, dr: -M1(w.treat)/mt + M3(w.cont)/mc */
  if (method == 0 || method == 2) {
    double *M = W->Mor;
    for (int a = 0; a < k; a++) {
      const double *xa = X + (R_xlen_t) a * n; double s1 = 0.0, s2 = 0.0;
      for (int i = 0; i < n; i++) { s1 += wtr[i] * xa[i]; s2 += wco[i] * xa[i]; }
      if (method == 0) M[a] = -(s2 / n) / mc;
      else M[a] = -(s1 / n) / mt + (s2 / n) / mc;
    }
    dd_chol_solve(k, W->Lor, M);               /* (X'W0X)^{-1} M */
    for (int a = 0; a < k; a++) M[a] *= n;  /* (X'W0X / n)^{-1} M */
  }
  /* the propensity score's Hessian X' diag(ps (1 - ps) w) X */
  if (method >= 1) {
    double *Wps = W->wt;
    for (int i = 0; i < n; i++) Wps[i] = ps[i] * (1.0 - ps[i]) * w[i];
    crossprod_w(n, k, X, Wps, NULL, W->A, NULL);
    if (!dd_chol_ok(k, W->A, W->Lps, work4k, iwork)) return CS_SINGULAR_PS;
  }
  return status;
}

/* One cell of a task: the ATT and its influence function (DRDID's scale: the
 * ATT error is the mean of inf) in W->inf, from the outcome changes W->dy. */
static void cs_cell_compute(int method, int n, int k, cs_work *W, double *att) {
  const double *dy = W->dy, *D = W->D, *X = W->X, *w = W->w, *ps = W->ps;
  const double *wtr = W->wtr, *wco = W->wco;
  double *inf = W->inf, *od = W->od;
  const double mt = W->mt, mc = W->mc;
  const int use_or = method == 0 || method == 2;
  if (use_or) {
    double *b = W->beta;
    memset(b, 0, sizeof(double) * k);
    for (int i = 0; i < n; i++) {
      const double wi = w[i] * (1.0 - D[i]);
      if (wi == 0.0) continue;
      for (int a = 0; a < k; a++) b[a] += (wi * X[i + (R_xlen_t) a * n]) * dy[i];
    }
    dd_chol_solve(k, W->Lor, b);
    xbeta(n, k, X, b, od);
  }
  double et = 0.0, ec = 0.0;
  for (int i = 0; i < n; i++) {
    if (method == 0) { et += wtr[i] * dy[i]; ec += wco[i] * od[i]; }
    else if (method == 1) { et += wtr[i] * dy[i]; ec += wco[i] * dy[i]; }
    else { et += wtr[i] * (dy[i] - od[i]); ec += wco[i] * (dy[i] - od[i]); }
  }
  et = et / n / mt; ec = ec / n / mc;
  *att = et - ec;
  for (int i = 0; i < n; i++) {
    double rt, rc;
    if (method == 0) { rt = wtr[i] * dy[i]; rc = wco[i] * od[i]; }
    else if (method == 1) { rt = wtr[i] * dy[i]; rc = wco[i] * dy[i]; }
    else { rt = wtr[i] * (dy[i] - od[i]); rc = wco[i] * (dy[i] - od[i]); }
    inf[i] = (rt - wtr[i] * et) / mt - (rc - wco[i] * ec) / mc;
  }
  if (use_or) {
    const double *M = W->Mor;
    for (int i = 0; i < n; i++) {
      if (D[i] == 1.0) continue;
      double xm = 0.0;
      for (int a = 0; a < k; a++) xm += X[i + (R_xlen_t) a * n] * M[a];
      inf[i] += w[i] * (dy[i] - od[i]) * xm;
    }
  }
  /* the propensity score's estimation effect: asy.lin.rep.ps %*% M2,
   * asy.lin.rep.ps_i = w_i (D_i - ps_i) x_i' (X' diag(ps(1-ps)w) X / n)^{-1} */
  if (method >= 1) {
    double *M2 = W->v2;
    for (int a = 0; a < k; a++) {
      const double *xa = X + (R_xlen_t) a * n; double s = 0.0;
      for (int i = 0; i < n; i++) {
        double r = method == 1 ? dy[i] - ec : dy[i] - od[i] - ec;
        s += wco[i] * r * xa[i];
      }
      M2[a] = -(s / n) / mc;                 /* enters inf.control with + sign */
    }
    dd_chol_solve(k, W->Lps, M2);
    for (int a = 0; a < k; a++) M2[a] *= n;
    for (int i = 0; i < n; i++) {
      double xm = 0.0;
      for (int a = 0; a < k; a++) xm += X[i + (R_xlen_t) a * n] * M2[a];
      inf[i] += w[i] * (D[i] - ps[i]) * xm;
    }
  }
}
/* cs_cell_compute without covariates (k = 1, the intercept only), with the
 * outcome changes gathered from Y in its first pass: the same operations on
 * each unit in the same order, so the same numbers (a product with the
 * intercept's 1.0 is exact and is left out; xbeta's 0.0 + b is kept), in
 * four passes over the cell's units instead of ten. */
static void cs_cell_k1(int method, int n, cs_work *W, const double *Y, R_xlen_t N, int tcol, int bcol,
                       const int *idx, double *att) {
  double *dy = W->dy, *inf = W->inf;
  const double *D = W->D, *w = W->w, *ps = W->ps, *wtr = W->wtr, *wco = W->wco;
  const double mt = W->mt, mc = W->mc;
  const int use_or = method == 0 || method == 2;
  const double *Yt = Y + (R_xlen_t) tcol * N, *Yb = Y + (R_xlen_t) bcol * N;
  double b = 0.0;
  for (int i = 0; i < n; i++) {
    const int r = idx[i];
    dy[i] = Yt[r] - Yb[r];
    if (use_or) {
      const double wi = w[i] * (1.0 - D[i]);
      if (wi != 0.0) b += wi * dy[i];
    }
  }
  double od = 0.0;
  if (use_or) { dd_chol_solve(1, W->Lor, &b); od = 0.0 + b; }
  double et = 0.0, ec = 0.0;
  if (method == 0) for (int i = 0; i < n; i++) { et += wtr[i] * dy[i]; ec += wco[i] * od; }
  else if (method == 1) for (int i = 0; i < n; i++) { et += wtr[i] * dy[i]; ec += wco[i] * dy[i]; }
  else for (int i = 0; i < n; i++) { et += wtr[i] * (dy[i] - od); ec += wco[i] * (dy[i] - od); }
  et = et / n / mt; ec = ec / n / mc;
  *att = et - ec;
  const double xm = use_or ? 0.0 + W->Mor[0] : 0.0;
  double s = 0.0;
  for (int i = 0; i < n; i++) {
    double rt, rc;
    if (method == 0) { rt = wtr[i] * dy[i]; rc = wco[i] * od; }
    else if (method == 1) { rt = wtr[i] * dy[i]; rc = wco[i] * dy[i]; }
    else { rt = wtr[i] * (dy[i] - od); rc = wco[i] * (dy[i] - od); }
    double v = (rt - wtr[i] * et) / mt - (rc - wco[i] * ec) / mc;
    if (use_or && D[i] != 1.0) v += w[i] * (dy[i] - od) * xm;
    inf[i] = v;
    if (method >= 1) s += wco[i] * (method == 1 ? dy[i] - ec : dy[i] - od - ec);
  }
  if (method >= 1) {
    double M2 = -(s / n) / mc;
    dd_chol_solve(1, W->Lps, &M2);
    M2 *= n;
    const double xm2 = 0.0 + M2;
    for (int i = 0; i < n; i++) inf[i] += w[i] * (D[i] - ps[i]) * xm2;
  }
}

/* the engines' results: att, influence functions (nrow x K), status and counts */
/* did's cell guards, before any estimation: (c) overlap, for ipw and dr: an
 * unweighted logit of D on X whose largest fitted score reaches 0.999 (without
 * covariates: mean(D) >= 0.999); (d) for reg and dr, a singular unweighted
 * X'X of the comparison units. Uses W->ps, W->wt, W->A, W->L as scratch.
 * skip_ps: the overlap check is done on the main fit instead (possible when
 * the cell's weights are all equal, so that the weighted fit is did's
 * unweighted one). */
static int cs_guards(int method, int n, int k, cs_work *W, double *work4k, int *iwork, int skip_ps) {
  if (method >= 1 && !skip_ps) {
    double mx = 0.0;
    if (k == 1) {
      for (int i = 0; i < n; i++) mx += W->D[i];
      mx /= n;
    } else {
      double *one = W->od;
      for (int i = 0; i < n; i++) one[i] = 1.0;
      int ok = 1;
      logit_fit(n, k, W->X, W->D, one, W, &ok);
      if (!ok) return CS_SINGULAR_PS;
      for (int i = 0; i < n; i++) if (W->ps[i] > mx) mx = W->ps[i];
    }
    if (mx >= 0.999) return CS_OVERLAP;
  }
  if (method == 0 || method == 2) {
    double *wc = W->wt;
    int nc = 0;
    for (int i = 0; i < n; i++) { wc[i] = 1.0 - W->D[i]; nc += W->D[i] == 0.0; }
    if (nc == 0) return CS_SINGULAR_OR;
    if (k > 1) {
      crossprod_w(n, k, W->X, wc, NULL, W->A, NULL);
      if (!dd_chol_ok(k, W->A, W->L, work4k, iwork)) return CS_SINGULAR_OR;
    }
  }
  return CS_OK;
}

/* The panel engine. Units (rows of Y, N x T outcomes) are sorted into blocks
 * of one cohort each: block b holds rows bstart[b] .. bstart[b+1]-1, its
 * first treated period bval[b] (never-treated blocks have bnever[b] = 1).
 * w: NULL (equal weights) or N x Tw weights; X: NULL or N x kx x Tx
 * covariates (no intercept); Tw, Tx are T, or 1 when the values do not vary
 * over time. A cell takes covariates and weights from the earlier of its two
 * periods, as did does. cells: K x 3 integer (unused, 0-based t column,
 * 0-based base column); gcell: each cell's treated cohort; pos: nb x K, the
 * column of cell c in block b's influence-function matrix, or -1 when block
 * b is not in the cell's sample (a sample is the treated block and the
 * comparison blocks); task: the cells sharing a sample and a covariate
 * period have the same task number (computed once), -1 for the reference
 * cells of a universal base period. bncol: columns of each block's matrix;
 * bextra: the column that receives the unit weights (the cohort-share
 * column of the aggregations), or -1.
 * Returns att (K), status, cell sizes, trimmed counts and, per block, the
 * n_b x bncol[b] influence-function matrix (did's scale: the estimate's
 * error is the mean over the N units). */
/* The results of both cell engines: per cell the ATT, status, cell size,
 * trimmed and treated counts, and the influence-function blocks (nb zeroed
 * matrices of (bstart[b+1] - bstart[b]) x bncol[b]). PROTECTs its six
 * vectors (the caller unprotects them) and returns the blocks' pointers. */
static double **cs_results(int K, int nb, const int *bstart, const int *bncol, SEXP *att, SEXP *st, SEXP *nc,
                           SEXP *ntr, SEXP *nt, SEXP *vals) {
  *att = PROTECT(allocVector(REALSXP, K)); *st = PROTECT(allocVector(INTSXP, K));
  *nc = PROTECT(allocVector(INTSXP, K)); *ntr = PROTECT(allocVector(INTSXP, K));
  *nt = PROTECT(allocVector(INTSXP, K)); *vals = PROTECT(allocVector(VECSXP, nb));
  double **V = (double **) R_alloc(nb > 0 ? nb : 1, sizeof(double *));
  for (int b = 0; b < nb; b++) {
    SEXP m = allocMatrix(REALSXP, bstart[b + 1] - bstart[b], bncol[b]);
    SET_VECTOR_ELT(*vals, b, m);
    V[b] = REAL(m);
    memset(V[b], 0, sizeof(double) * (size_t) XLENGTH(m));
  }
  return V;
}

/* checks shared by the cell engines: cells (K x 3 integer: cohort row,
 * period column, base column), method 0..2, trim in (0, 1] */
static void cs_check_cells(SEXP cells_, SEXP method_, SEXP trim_, const char *fn) {
  dd_chk_mat(cells_, INTSXP, -1, 3, 0, fn, "cells");
  dd_chk_int(method_, 0, 2, fn, "method");
  const double tr = dd_chk_num(trim_, 0, fn, "trim");
  if (!(tr > 0.0 && tr <= 1.0)) error("internal error in %s: `trim` must be in (0, 1]; please report", fn);
}

SEXP C_cs_panel(SEXP Y_, SEXP bstart_, SEXP bval_, SEXP bnever_, SEXP w_, SEXP X_, SEXP cells_,
                SEXP gcell_, SEXP pos_, SEXP task_, SEXP bncol_, SEXP bextra_, SEXP method_, SEXP trim_) {
  const char *fn = "C_cs_panel";
  dd_chk_mat(Y_, REALSXP, -1, -1, 0, fn, "Y");
  cs_check_cells(cells_, method_, trim_, fn);
  dd_chk_type(bval_, REALSXP, 0, fn, "bval");
  {
    const int nb0 = LENGTH(bval_), K0 = nrows(cells_), T0 = ncols(Y_);
    dd_chk_vec(bstart_, INTSXP, (R_xlen_t) nb0 + 1, 0, fn, "bstart");
    dd_chk_vec(bnever_, LGLSXP, nb0, 0, fn, "bnever");
    dd_chk_vec(gcell_, REALSXP, K0, 0, fn, "gcell");
    dd_chk_vec(task_, INTSXP, K0, 0, fn, "task");
    dd_chk_vec(pos_, INTSXP, (R_xlen_t) nb0 * K0, 0, fn, "pos");
    dd_chk_vec(bncol_, INTSXP, nb0, 0, fn, "bncol");
    dd_chk_vec(bextra_, INTSXP, nb0, 0, fn, "bextra");
    dd_chk_type(w_, REALSXP, 1, fn, "w");
    dd_chk_type(X_, REALSXP, 1, fn, "X");
    if (!isNull(X_) && isArray(X_) && LENGTH(getAttrib(X_, R_DimSymbol)) < 2)
      error("internal error in %s: `X` must be a matrix or 3-d array; please report", fn);
    const int *bs = INTEGER(bstart_), *bn = INTEGER(bncol_), *be = INTEGER(bextra_), *ps = INTEGER(pos_);
    const int *tk = INTEGER(task_), *ce = INTEGER(cells_);
    if (bs[0] != 0 || bs[nb0] != nrows(Y_)) error("internal error in %s: `bstart`; please report", fn);
    for (int b = 0; b < nb0; b++) {
      if (bs[b + 1] < bs[b] || bn[b] < 0 || be[b] < -1 || be[b] >= bn[b])
        error("internal error in %s: block layout; please report", fn);
      for (int c = 0; c < K0; c++) {
        const int p = ps[b + (R_xlen_t) nb0 * c];
        if (p < -1 || p >= bn[b]) error("internal error in %s: `pos` out of range; please report", fn);
      }
    }
    for (int c = 0; c < K0; c++) {
      if (tk[c] < -1 || tk[c] >= K0) error("internal error in %s: `task` out of range; please report", fn);
      if (tk[c] >= 0 && (ce[c + K0] < 0 || ce[c + K0] >= T0 || ce[c + 2 * K0] < 0 || ce[c + 2 * K0] >= T0))
        error("internal error in %s: cell periods out of range; please report", fn);
    }
  }
  const int N = nrows(Y_), T = ncols(Y_), K = nrows(cells_), nb = LENGTH(bval_);
  const double *Y = REAL(Y_), *bval = REAL(bval_), *gcell = REAL(gcell_);
  const int *bstart = INTEGER(bstart_), *bnever = LOGICAL(bnever_), *cells = INTEGER(cells_);
  const int *pos = INTEGER(pos_), *task = INTEGER(task_), *bncol = INTEGER(bncol_), *bextra = INTEGER(bextra_);
  const int method = asInteger(method_);
  const double trim = asReal(trim_);
  const double *w = isNull(w_) ? NULL : REAL(w_), *X = isNull(X_) ? NULL : REAL(X_);
  const int Tw = w ? (int) (XLENGTH(w_) / (N > 0 ? N : 1)) : 1;
  const int kx = X ? (isArray(X_) ? INTEGER(getAttrib(X_, R_DimSymbol))[1] : 0) : 0;
  const int Tx = X ? (int) (XLENGTH(X_) / ((R_xlen_t) (N > 0 ? N : 1) * (kx > 0 ? kx : 1))) : 1;
  const int k = 1 + kx;
  if (LENGTH(bstart_) != nb + 1 || bstart[nb] != N || LENGTH(bnever_) != nb || ncols(cells_) != 3 ||
      XLENGTH(gcell_) != K || XLENGTH(task_) != K || XLENGTH(pos_) != (R_xlen_t) nb * K ||
      LENGTH(bncol_) != nb || LENGTH(bextra_) != nb || (Tw != 1 && Tw != T) || (Tx != 1 && Tx != T) ||
      (w && XLENGTH(w_) != (R_xlen_t) N * Tw) || (X && XLENGTH(X_) != (R_xlen_t) N * kx * Tx))
    error("internal error in cs.c: length mismatch; please report");
  SEXP att_, st_, nc_, ntr_, nt_, vals_;
  double **V = cs_results(K, nb, bstart, bncol, &att_, &st_, &nc_, &ntr_, &nt_, &vals_);   /* 6 PROTECTs */
  double *att = REAL(att_);
  int *status = INTEGER(st_), *ncell = INTEGER(nc_), *ntrim = INTEGER(ntr_), *ntreat = INTEGER(nt_);
  for (int b = 0; b < nb; b++) {
    if (bextra[b] >= 0) {
      double *col = V[b] + (R_xlen_t) bextra[b] * (bstart[b + 1] - bstart[b]);
      for (int i = bstart[b]; i < bstart[b + 1]; i++) col[i - bstart[b]] = w ? w[i] : 1.0;
    }
  }
  /* the tasks: cells grouped by task number, in cell order */
  int ntask = 0;
  for (int c = 0; c < K; c++) if (task[c] + 1 > ntask) ntask = task[c] + 1;
  int *tstart = (int *) R_alloc((size_t) ntask + 1, sizeof(int)), *tcells = (int *) R_alloc(K > 0 ? K : 1, sizeof(int));
  memset(tstart, 0, sizeof(int) * ((size_t) ntask + 1));
  for (int c = 0; c < K; c++) {
    if (task[c] >= 0) tstart[task[c] + 1]++;
    else { status[c] = CS_OK; att[c] = 0.0; ncell[c] = ntreat[c] = ntrim[c] = 0; }  /* reference cell */
  }
  for (int t = 0; t < ntask; t++) tstart[t + 1] += tstart[t];
  {
    int *fill = (int *) R_alloc((size_t) ntask + 1, sizeof(int));
    memcpy(fill, tstart, sizeof(int) * ((size_t) ntask + 1));
    for (int c = 0; c < K; c++) if (task[c] >= 0) tcells[fill[task[c]]++] = c;
  }
  /* per-thread workspace for the largest task sample, from R_alloc: the
   * chunk loop below checks for Ctrl-C, whose longjmp would leak malloc'd
   * memory (R_alloc's is reclaimed when the .Call ends, by error or not) */
  int nmax = 1;
  for (int t = 0; t < ntask; t++) {
    const int c0 = tcells[tstart[t]];
    int n = 0;
    for (int b = 0; b < nb; b++) if (pos[b + (R_xlen_t) nb * c0] >= 0) n += bstart[b + 1] - bstart[b];
    if (n > nmax) nmax = n;
  }
  const int nth = dd_nthreads(ntask, (double) N * K * (k + 4));
  const size_t per = cs_work_doubles(nmax, k) + 4 * (size_t) k;
  double *mem = (double *) R_alloc(per * nth, sizeof(double));
  int *imem = (int *) R_alloc(((size_t) nmax + (size_t) k) * nth, sizeof(int));
  dd_chunks ch_t;
  dd_chunks_init(&ch_t, ntask, nth);
  while (dd_chunks_next(&ch_t)) {
  const int t_lo = ch_t.lo, t_hi = ch_t.hi;   /* locals: the compiler keeps them out of memory */
#ifdef _OPENMP
#pragma omp parallel for num_threads(nth) schedule(dynamic, 1)
#endif
  for (int t = t_lo; t < t_hi; t++) {
    const int tid = dd_tid();
    const int c0 = tcells[tstart[t]], nct = tstart[t + 1] - tstart[t];
    double *m0 = mem + per * tid;
    int *i0 = imem + ((size_t) nmax + k) * tid;
    /* gather the sample: the member blocks, in order */
    int n = 0, n1 = 0;
    for (int b = 0; b < nb; b++) {
      if (pos[b + (R_xlen_t) nb * c0] < 0) continue;
      const int d = !bnever[b] && bval[b] == gcell[c0];
      for (int i = bstart[b]; i < bstart[b + 1]; i++) i0[n++] = i;
      if (d) n1 += bstart[b + 1] - bstart[b];
    }
    for (int q = 0; q < nct; q++) { int c = tcells[tstart[t] + q]; ncell[c] = n; ntreat[c] = n1; ntrim[c] = 0; }
    int st = CS_OK, nt = 0;
    cs_work W;
    cs_work_carve(&W, m0, i0, n, k);
    double *work4k = m0 + cs_work_doubles(nmax, k);
    int *iwork = i0 + nmax;
    const int tc0 = cells[c0 + K], bc0 = cells[c0 + 2 * K];
    if (n1 == 0 || n1 == n || tc0 < 0 || bc0 < 0 || tc0 >= T || bc0 >= T) st = CS_EMPTY;
    else {
      const int pcol = tc0 < bc0 ? tc0 : bc0;   /* covariates and weights: earlier period */
      const double *Xp = X ? X + (R_xlen_t) N * kx * (Tx == 1 ? 0 : pcol) : NULL;
      const double *wp = w ? w + (R_xlen_t) N * (Tw == 1 ? 0 : pcol) : NULL;
      int j = 0;
      for (int b = 0; b < nb; b++) {
        if (pos[b + (R_xlen_t) nb * c0] < 0) continue;
        const double d = (!bnever[b] && bval[b] == gcell[c0]) ? 1.0 : 0.0;
        for (int i = bstart[b]; i < bstart[b + 1]; i++, j++) {
          W.D[j] = d;
          W.w[j] = wp ? wp[i] : 1.0;
          W.X[j] = 1.0;
          for (int a = 1; a < k; a++) W.X[j + (R_xlen_t) a * n] = Xp[i + (R_xlen_t) (a - 1) * N];
        }
      }
      int uniform = 1;
      for (int q = 1; q < n && uniform; q++) uniform = W.w[q] == W.w[0];
      const int in_fit = uniform && k > 1;
      st = cs_guards(method, n, k, &W, work4k, iwork, in_fit);
      if (st == CS_OK) st = cs_task_setup(method, n, k, &W, trim, &nt, work4k, iwork, in_fit);
    }
    const int ok = st == CS_OK || st == CS_PS_NOCONV;
    const double sc = (double) N / (double) n;
    for (int q = 0; q < nct; q++) {
      const int c = tcells[tstart[t] + q];
      const int tcol = cells[c + K], bcol = cells[c + 2 * K];
      double a_hat = NA_REAL;
      status[c] = st; ntrim[c] = nt;
      if (ok && k == 1) cs_cell_k1(method, n, &W, Y, N, tcol, bcol, i0, &a_hat);
      else if (ok) {
        for (int jj = 0; jj < n; jj++) {
          const int i = i0[jj];
          W.dy[jj] = Y[i + (R_xlen_t) tcol * N] - Y[i + (R_xlen_t) bcol * N];
        }
        cs_cell_compute(method, n, k, &W, &a_hat);
      }
      const int good = ok && !ISNAN(a_hat);
      att[c] = good ? a_hat : NA_REAL;
      int jj = 0;
      for (int b = 0; b < nb; b++) {
        const int p = pos[b + (R_xlen_t) nb * c];
        if (p < 0) continue;
        const int nbk = bstart[b + 1] - bstart[b];
        double *col = V[b] + (R_xlen_t) p * nbk;
        if (good) for (int i = 0; i < nbk; i++, jj++) col[i] = sc * W.inf[jj];
        else for (int i = 0; i < nbk; i++) col[i] = NA_REAL;
      }
    }
  }
  }
  const char *nm[6] = {"att", "status", "n_cell", "n_trim", "n_treat", "vals"};
  SEXP v[6] = {att_, st_, nc_, ntr_, nt_, vals_};
  SEXP out = dd_named_list(6, nm, v);
  UNPROTECT(6);
  return out;
}
/* ---- repeated cross-sections (and unbalanced panels) ---------------------- */

/* weighted OLS of y on X over rows with sel = 1: fills mu (all rows) and the
 * Cholesky factor L of sum w sel x x'. Returns 0 when singular. */
static int rc_ols(int n, int k, const double *X, const double *y, const double *w, const double *sel,
                  double *wtmp, double *A, double *L, double *gam, double *mu, double *work4k, int *iwork) {
  for (int i = 0; i < n; i++) wtmp[i] = w[i] * sel[i];
  crossprod_w(n, k, X, wtmp, y, A, gam);
  if (!dd_chol_ok(k, A, L, work4k, iwork)) return 0;
  dd_chol_solve(k, L, gam);
  xbeta(n, k, X, gam, mu);
  return 1;
}

/* inf += psi^c v where psi^c_i = w_i sel_i (y_i - mu_i) x_i' Q_c^{-1},
 * Q_c = (1/n) sum w sel x x' (L its unscaled Cholesky), for a k-vector M */
static void rc_add_psi(int n, int k, const double *X, const double *y, const double *w, const double *sel,
                       const double *mu, const double *L, const double *M, double coef, double *v, double *inf) {
  memcpy(v, M, sizeof(double) * k);
  dd_chol_solve(k, L, v);
  for (int a = 0; a < k; a++) v[a] *= n * coef;
  for (int i = 0; i < n; i++) {
    if (sel[i] == 0.0) continue;
    double xm = 0.0;
    for (int a = 0; a < k; a++) xm += X[i + (R_xlen_t) a * n] * v[a];
    inf[i] += w[i] * sel[i] * (y[i] - mu[i]) * xm;
  }
}

/* M = (1/n) sum_i f_i x_i */
static void rc_mom(int n, int k, const double *X, const double *f, double scale, double *M) {
  for (int a = 0; a < k; a++) {
    const double *xa = X + (R_xlen_t) a * n; double s = 0.0;
    for (int i = 0; i < n; i++) s += f[i] * xa[i];
    M[a] = s / n * scale;
  }
}

typedef struct {
  double *y, *D, *post, *X, *w, *ps, *tr, *inf, *sel[4], *mu[4], *f, *wa[4], *wd, *tmp, *eta, *muw, *z, *wt;
  double *A, *L[4], *Lps, *gam, *M, *M2, *v, *beta, *bprev, *work4k;
} rc_work;

static size_t rc_work_doubles(int n, int k) { return (size_t) n * (24 + k) + 7 * (size_t) k * k + 10 * (size_t) k; }

static void rc_carve(rc_work *R, double *p, int n, int k) {
  R->y = p; p += n; R->D = p; p += n; R->post = p; p += n; R->X = p; p += (size_t) n * k;
  R->w = p; p += n; R->ps = p; p += n; R->tr = p; p += n; R->inf = p; p += n;
  for (int c = 0; c < 4; c++) { R->sel[c] = p; p += n; R->mu[c] = p; p += n; R->wa[c] = p; p += n; }
  R->f = p; p += n; R->wd = p; p += n; R->tmp = p; p += n; R->eta = p; p += n; R->muw = p; p += n;
  R->z = p; p += n; R->wt = p; p += n;
  R->A = p; p += (size_t) k * k;
  for (int c = 0; c < 4; c++) { R->L[c] = p; p += (size_t) k * k; }
  R->Lps = p; p += (size_t) k * k;
  R->gam = p; p += k; R->M = p; p += k; R->M2 = p; p += k; R->v = p; p += k;
  R->beta = p; p += k; R->bprev = p; p += k; R->work4k = p; p += 4 * (size_t) k;
}

/* One repeated cross-section 2x2 cell. c index: 0 = 0pre, 1 = 0post, 2 = 1pre, 3 = 1post. */
static int cs_rc_cell(int method, int n, int k, rc_work *R, double trim, double *att, int *n_trim, int *iwork) {
  const double *y = R->y, *D = R->D, *post = R->post, *X = R->X;
  double *w = R->w, *inf = R->inf, *ps = R->ps, *tr = R->tr;
  int status = CS_OK;
  double sw = 0.0;
  for (int i = 0; i < n; i++) sw += w[i];
  sw /= n;
  for (int i = 0; i < n; i++) w[i] /= sw;
  for (int i = 0; i < n; i++) {
    R->sel[0][i] = (1.0 - D[i]) * (1.0 - post[i]); R->sel[1][i] = (1.0 - D[i]) * post[i];
    R->sel[2][i] = D[i] * (1.0 - post[i]);         R->sel[3][i] = D[i] * post[i];
    tr[i] = 1.0;
  }
  *n_trim = 0;
  /* propensity score (pooled periods) */
  if (method >= 1) {
    if (k == 1) {            /* intercept only: closed form (see cs_panel_cell) */
      double s1 = 0.0, s0 = 0.0;
      for (int i = 0; i < n; i++) { s1 += w[i] * D[i]; s0 += w[i]; }
      for (int i = 0; i < n; i++) ps[i] = s1 / s0;
    } else {
      cs_work W; memset(&W, 0, sizeof W);
      W.mu = R->muw; W.eta = R->eta; W.z = R->z; W.wt = R->wt; W.beta = R->beta; W.bprev = R->bprev;
      W.A = R->A; W.L = R->Lps; W.ps = ps;
      int ok = 1;
      if (!logit_fit(n, k, X, D, w, &W, &ok)) status = CS_PS_NOCONV;
      if (!ok) return CS_SINGULAR_PS;
    }
    for (int i = 0; i < n; i++) {
      if (ps[i] > 1.0 - 1e-6) ps[i] = 1.0 - 1e-6;
      tr[i] = D[i] == 1.0 ? (ps[i] < 1.01) : (ps[i] < trim);
      if (!tr[i]) (*n_trim)++;
    }
    for (int i = 0; i < n; i++) R->wt[i] = ps[i] * (1.0 - ps[i]) * w[i];
    crossprod_w(n, k, X, R->wt, NULL, R->A, NULL);
    if (!dd_chol_ok(k, R->A, R->Lps, R->work4k, iwork)) return CS_SINGULAR_PS;
  }
  /* outcome regressions: reg needs 0pre, 0post; dr all four */
  int nreg = method == 0 ? 2 : (method == 2 ? 4 : 0);
  for (int c = 0; c < nreg; c++)
    if (!rc_ols(n, k, X, y, w, R->sel[c], R->tmp, R->A, R->L[c], R->gam, R->mu[c], R->work4k, iwork))
      return CS_SINGULAR_OR;
  double m[4], at[4];
  if (method == 0) {
    double *w1pre = R->wa[2], *w1post = R->wa[3], *wc = R->wd;
    double m1pre = 0, m1post = 0, mcc = 0, e1pre = 0, e1post = 0, ec = 0;
    for (int i = 0; i < n; i++) {
      w1pre[i] = w[i] * R->sel[2][i]; w1post[i] = w[i] * R->sel[3][i]; wc[i] = w[i] * D[i];
      m1pre += w1pre[i]; m1post += w1post[i]; mcc += wc[i];
      e1pre += w1pre[i] * y[i]; e1post += w1post[i] * y[i]; ec += wc[i] * (R->mu[1][i] - R->mu[0][i]);
    }
    if (!(m1pre > 0) || !(m1post > 0) || !(mcc > 0)) return CS_EMPTY;
    e1pre /= m1pre; e1post /= m1post; ec /= mcc;
    m1pre /= n; m1post /= n; mcc /= n;
    *att = (e1post - e1pre) - ec;
    for (int i = 0; i < n; i++)
      inf[i] = w1post[i] * (y[i] - e1post) / m1post - w1pre[i] * (y[i] - e1pre) / m1pre
             - wc[i] * (R->mu[1][i] - R->mu[0][i] - ec) / mcc;
    rc_mom(n, k, X, wc, 1.0, R->M);
    rc_add_psi(n, k, X, y, w, R->sel[1], R->mu[1], R->L[1], R->M, -1.0 / mcc, R->v, inf);
    rc_add_psi(n, k, X, y, w, R->sel[0], R->mu[0], R->L[0], R->M, 1.0 / mcc, R->v, inf);
    return status;
  }
  /* ipw and dr weights */
  for (int i = 0; i < n; i++) {
    double odds = ps[i] / (1.0 - ps[i]);
    R->wa[2][i] = tr[i] * w[i] * R->sel[2][i];
    R->wa[3][i] = tr[i] * w[i] * R->sel[3][i];
    R->wa[0][i] = tr[i] * w[i] * odds * R->sel[0][i];
    R->wa[1][i] = tr[i] * w[i] * odds * R->sel[1][i];
  }
  double *r = R->f;
  for (int i = 0; i < n; i++)
    r[i] = method == 1 ? y[i] : y[i] - (post[i] * R->mu[1][i] + (1.0 - post[i]) * R->mu[0][i]);
  for (int c = 0; c < 4; c++) {
    double s = 0.0, e = 0.0;
    for (int i = 0; i < n; i++) { s += R->wa[c][i]; e += R->wa[c][i] * r[i]; }
    if (!(s > 0)) return CS_EMPTY;
    at[c] = e / s; m[c] = s / n;
  }
  double A_ = (at[3] - at[2]) - (at[1] - at[0]);
  for (int i = 0; i < n; i++) {
    double l[4];
    for (int c = 0; c < 4; c++) l[c] = R->wa[c][i] * (r[i] - at[c]) / m[c];
    inf[i] = (l[3] - l[2]) - (l[1] - l[0]);
  }
  /* propensity-score estimation effect: - psi^ps (M2post - M2pre) */
  {
    double *M = R->M2;
    for (int a = 0; a < k; a++) {
      const double *xa = X + (R_xlen_t) a * n; double sp = 0.0, sq = 0.0;
      for (int i = 0; i < n; i++) {
        sq += R->wa[0][i] * (r[i] - at[0]) * xa[i];
        sp += R->wa[1][i] * (r[i] - at[1]) * xa[i];
      }
      M[a] = -((sp / n) / m[1] - (sq / n) / m[0]);
    }
    dd_chol_solve(k, R->Lps, M);
    for (int a = 0; a < k; a++) M[a] *= n;
    for (int i = 0; i < n; i++) {
      double xm = 0.0;
      for (int a = 0; a < k; a++) xm += X[i + (R_xlen_t) a * n] * M[a];
      inf[i] += w[i] * (D[i] - ps[i]) * xm;
    }
  }
  if (method == 2) {
    /* treated and control outcome-regression effects */
    rc_mom(n, k, X, R->wa[3], -1.0 / m[3], R->M);            /* M1post */
    rc_add_psi(n, k, X, y, w, R->sel[1], R->mu[1], R->L[1], R->M, 1.0, R->v, inf);
    rc_mom(n, k, X, R->wa[2], -1.0 / m[2], R->M);            /* M1pre */
    rc_add_psi(n, k, X, y, w, R->sel[0], R->mu[0], R->L[0], R->M, -1.0, R->v, inf);
    rc_mom(n, k, X, R->wa[1], -1.0 / m[1], R->M);            /* M3post, enters -inf_cont */
    rc_add_psi(n, k, X, y, w, R->sel[1], R->mu[1], R->L[1], R->M, -1.0, R->v, inf);
    rc_mom(n, k, X, R->wa[0], -1.0 / m[0], R->M);            /* M3pre */
    rc_add_psi(n, k, X, y, w, R->sel[0], R->mu[0], R->L[0], R->M, 1.0, R->v, inf);
    /* efficiency terms */
    double *wd = R->wd, md = 0.0, adpost = 0, adt1 = 0, adpre = 0, adt0 = 0;
    for (int i = 0; i < n; i++) { wd[i] = tr[i] * w[i] * D[i]; md += wd[i]; }
    md /= n;
    for (int i = 0; i < n; i++) {
      double dpost = R->mu[3][i] - R->mu[1][i], dpre = R->mu[2][i] - R->mu[0][i];
      adpost += wd[i] * dpost; adt1 += R->wa[3][i] * dpost;
      adpre += wd[i] * dpre; adt0 += R->wa[2][i] * dpre;
    }
    adpost = adpost / n / md; adt1 = adt1 / n / m[3]; adpre = adpre / n / md; adt0 = adt0 / n / m[2];
    A_ += (adpost - adt1) - (adpre - adt0);
    for (int i = 0; i < n; i++) {
      double dpost = R->mu[3][i] - R->mu[1][i], dpre = R->mu[2][i] - R->mu[0][i];
      inf[i] += (wd[i] * (dpost - adpost) / md - R->wa[3][i] * (dpost - adt1) / m[3])
              - (wd[i] * (dpre - adpre) / md - R->wa[2][i] * (dpre - adt0) / m[2]);
    }
    /* inf_or = (psi1post - psi0post) mom_post - (psi1pre - psi0pre) mom_pre */
    double *f = R->tmp;
    for (int i = 0; i < n; i++) f[i] = wd[i] / md - R->wa[3][i] / m[3];
    rc_mom(n, k, X, f, 1.0, R->M);
    rc_add_psi(n, k, X, y, w, R->sel[3], R->mu[3], R->L[3], R->M, 1.0, R->v, inf);
    rc_add_psi(n, k, X, y, w, R->sel[1], R->mu[1], R->L[1], R->M, -1.0, R->v, inf);
    for (int i = 0; i < n; i++) f[i] = wd[i] / md - R->wa[2][i] / m[2];
    rc_mom(n, k, X, f, 1.0, R->M);
    rc_add_psi(n, k, X, y, w, R->sel[2], R->mu[2], R->L[2], R->M, -1.0, R->v, inf);
    rc_add_psi(n, k, X, y, w, R->sel[0], R->mu[0], R->L[0], R->M, 1.0, R->v, inf);
  }
  *att = A_;
  return status;
}

/* The repeated cross-section engine (also unbalanced panels). Rows: y, tcol
 * (0-based period), gval/never of the row's unit, w, X (rows x k, intercept
 * first), unit (0-based; each row its own unit for true cross-sections),
 * n = number of units (rows of the influence function).
 *
 * The influence functions come back block-sparse (ifs.c) with the units
 * grouped into blocks by the R side (dd_cs_rc_layout): lay = list(start,
 * pos, ncol, extra, blk, loc). Block b holds start[b+1] - start[b] units;
 * unit u is row loc[u] of block blk[u]; pos (nb x K) is the column of cell c
 * in block b's matrix, or -1 when no unit of the block can be in the cell's
 * sample; ncol the columns of each block; extra the column that receives the
 * unit weights uw (the cohort-share column of the aggregations), or -1.
 * A cell's value for a unit sums the unit's rows in the cell, as before.
 *
 * Memory: each thread's workspace is sized for the largest cell (the rows of
 * its two periods in its comparison), not for all rows; a cell finds its
 * rows through a by-period index of the rows. */
/* A row's role in cell c: 1 treated, 0 comparison, -1 not in the cell.
 * Without block values, by cohort: the cell's cohort is treated, the never
 * treated and cohorts not yet treated by the cell's threshold compare; with
 * block values (bval), the row's block must be stored for the cell and is
 * treated when its value is the cell's cohort. */
static inline int rc_role(int i, int c, const double *gval, const int *never, const double *gcell,
                          const double *thr, const double *bval, const int *ublk, const int *unit,
                          const int *pos, int nb) {
  if (bval) {
    const int b = ublk[unit[i]];
    if (pos[b + (R_xlen_t) nb * c] < 0) return -1;
    return bval[b] == gcell[c] ? 1 : 0;
  }
  if (!never[i] && gval[i] == gcell[c]) return 1;
  if (never[i] || gval[i] > thr[c]) return 0;
  return -1;
}

SEXP C_cs_rc(SEXP y_, SEXP tcol_, SEXP gval_, SEXP never_, SEXP w_, SEXP X_, SEXP cells_,
             SEXP gcell_, SEXP thr_, SEXP method_, SEXP trim_, SEXP unit_, SEXP nunit_, SEXP lay_, SEXP uw_) {
  const char *fn = "C_cs_rc";
  dd_chk_type(y_, REALSXP, 0, fn, "y");
  cs_check_cells(cells_, method_, trim_, fn);
  if (TYPEOF(lay_) != VECSXP || (LENGTH(lay_) != 6 && LENGTH(lay_) != 7))
    error("internal error in %s: `lay` must be a list of 6 or 7; please report", fn);
  SEXP bstart_ = VECTOR_ELT(lay_, 0), pos_ = VECTOR_ELT(lay_, 1), bncol_ = VECTOR_ELT(lay_, 2),
       bextra_ = VECTOR_ELT(lay_, 3), ublk_ = VECTOR_ELT(lay_, 4), uloc_ = VECTOR_ELT(lay_, 5);
  /* optional seventh element: block values; a row then belongs to cell c when
   * its block is stored for c (pos >= 0) and is treated when its block value
   * is the cell's cohort (the triple difference's blocks of cohort and
   * eligibility) instead of the cohort rule */
  SEXP bval_ = LENGTH(lay_) == 7 ? VECTOR_ELT(lay_, 6) : R_NilValue;
  {
    const R_xlen_t n0 = XLENGTH(y_);
    const int K0 = nrows(cells_);
    dd_chk_vec(tcol_, INTSXP, n0, 0, fn, "tcol");
    dd_chk_vec(gval_, REALSXP, n0, 0, fn, "gval");
    dd_chk_vec(never_, LGLSXP, n0, 0, fn, "never");
    dd_chk_vec(w_, REALSXP, n0, 0, fn, "w");
    dd_chk_mat(X_, REALSXP, (int) n0, -1, 0, fn, "X");
    if (ncols(X_) < 1) error("internal error in %s: `X` needs the intercept column; please report", fn);
    dd_chk_vec(gcell_, REALSXP, K0, 0, fn, "gcell");
    dd_chk_vec(thr_, REALSXP, K0, 0, fn, "thr");
    const int nu0 = dd_chk_int(nunit_, 1, DD_INT_MAX, fn, "nunit");
    dd_chk_codes(unit_, n0, nu0, fn, "unit");
    dd_chk_vec(uw_, REALSXP, nu0, 0, fn, "uw");
    /* the block layout */
    dd_chk_type(bncol_, INTSXP, 0, fn, "lay$ncol");
    const int nb0 = LENGTH(bncol_);
    dd_chk_vec(bstart_, INTSXP, (R_xlen_t) nb0 + 1, 0, fn, "lay$start");
    dd_chk_vec(pos_, INTSXP, (R_xlen_t) nb0 * K0, 0, fn, "lay$pos");
    dd_chk_vec(bextra_, INTSXP, nb0, 0, fn, "lay$extra");
    dd_chk_codes(ublk_, nu0, nb0, fn, "lay$blk");
    dd_chk_vec(uloc_, INTSXP, nu0, 0, fn, "lay$loc");
    if (bval_ != R_NilValue) dd_chk_vec(bval_, REALSXP, nb0, 0, fn, "lay$bval");
    const int *bs = INTEGER(bstart_), *bn = INTEGER(bncol_), *be = INTEGER(bextra_), *ps = INTEGER(pos_);
    const int *ub = INTEGER(ublk_), *ul = INTEGER(uloc_);
    if (bs[0] != 0 || bs[nb0] != nu0) error("internal error in %s: `lay$start`; please report", fn);
    for (int b = 0; b < nb0; b++) {
      if (bs[b + 1] < bs[b] || bn[b] < 0 || be[b] < -1 || be[b] >= bn[b])
        error("internal error in %s: block layout; please report", fn);
      for (int c = 0; c < K0; c++) {
        const int p = ps[b + (R_xlen_t) nb0 * c];
        if (p < -1 || p >= bn[b]) error("internal error in %s: `lay$pos` out of range; please report", fn);
      }
    }
    /* every unit in its own slot of its block */
    char *seen = (char *) R_alloc(nu0, 1);
    memset(seen, 0, nu0);
    for (int u = 0; u < nu0; u++) {
      const int b = ub[u], nbk = bs[b + 1] - bs[b];
      if (ul[u] < 0 || ul[u] >= nbk || seen[bs[b] + ul[u]])
        error("internal error in %s: `lay$loc`; please report", fn);
      seen[bs[b] + ul[u]] = 1;
    }
  }
  const int NR = LENGTH(y_), k = ncols(X_), K = nrows(cells_), nu = asInteger(nunit_), nb = LENGTH(bncol_);
  const double *y = REAL(y_), *gval = REAL(gval_), *w = REAL(w_), *X = REAL(X_), *uw = REAL(uw_);
  const int *tcol = INTEGER(tcol_), *never = LOGICAL(never_), *cells = INTEGER(cells_), *unit = INTEGER(unit_);
  const int *bstart = INTEGER(bstart_), *pos = INTEGER(pos_), *bncol = INTEGER(bncol_), *bextra = INTEGER(bextra_);
  const int *ublk = INTEGER(ublk_), *uloc = INTEGER(uloc_);
  const double *gcell = REAL(gcell_), *thr = REAL(thr_);
  const double *bval = bval_ == R_NilValue ? NULL : REAL(bval_);
  const int method = asInteger(method_);
  const double trim = asReal(trim_);
  if (LENGTH(tcol_) != NR || LENGTH(gval_) != NR || LENGTH(never_) != NR || LENGTH(w_) != NR ||
      nrows(X_) != NR || LENGTH(unit_) != NR || XLENGTH(gcell_) != K || XLENGTH(thr_) != K)
    error("internal error in cs.c: length mismatch; please report");
  /* rows by period (counting sort, rows in order within a period) */
  int T = 0;
  /* period codes index the kept periods, which are periods of the rows:
   * fewer than the rows (this also keeps T + 1 from overflowing) */
  for (int i = 0; i < NR; i++) {
    if (tcol[i] < 0 || tcol[i] >= NR) error("internal error in %s: `tcol` out of range; please report", fn);
    if (tcol[i] + 1 > T) T = tcol[i] + 1;
  }
  for (int c = 0; c < K; c++) {
    if (cells[c + K] < 0 || cells[c + 2 * K] < 0 || cells[c + K] >= NR || cells[c + 2 * K] >= NR)
      error("internal error in %s: cell periods out of range; please report", fn);
    if (cells[c + K] + 1 > T) T = cells[c + K] + 1;
    if (cells[c + 2 * K] + 1 > T) T = cells[c + 2 * K] + 1;
  }
  int *pstart = (int *) R_alloc((size_t) T + 1, sizeof(int)), *prow = (int *) R_alloc(NR > 0 ? NR : 1, sizeof(int));
  memset(pstart, 0, sizeof(int) * ((size_t) T + 1));
  for (int i = 0; i < NR; i++) pstart[tcol[i] + 1]++;
  for (int t = 0; t < T; t++) pstart[t + 1] += pstart[t];
  {
    int *fill = (int *) R_alloc((size_t) T + 1, sizeof(int));
    memcpy(fill, pstart, sizeof(int) * ((size_t) T + 1));
    for (int i = 0; i < NR; i++) prow[fill[tcol[i]]++] = i;
  }
  SEXP att_, st_, nc_, ntr_, nt_, vals_;
  double **V = cs_results(K, nb, bstart, bncol, &att_, &st_, &nc_, &ntr_, &nt_, &vals_);   /* 6 PROTECTs */
  double *att = REAL(att_);
  int *status = INTEGER(st_), *ncell = INTEGER(nc_), *ntrim = INTEGER(ntr_), *ntreat = INTEGER(nt_);
  for (int u = 0; u < nu; u++) {
    const int b = ublk[u];
    if (bextra[b] >= 0) V[b][(R_xlen_t) bextra[b] * (bstart[b + 1] - bstart[b]) + uloc[u]] = uw[u];
  }
  /* cell sizes (serially), for the workspace: the largest cell */
  int nmax = 1;
  for (int c = 0; c < K; c++) {
    const int tc = cells[c + K], bc = cells[c + 2 * K];
    int n = 0;
    for (int pp = 0; pp < (tc == bc ? 1 : 2); pp++) {
      const int per = pp ? bc : tc;
      for (int q = pstart[per]; q < pstart[per + 1]; q++) {
        if (rc_role(prow[q], c, gval, never, gcell, thr, bval, ublk, unit, pos, nb) >= 0) n++;
      }
    }
    ncell[c] = n;
    if (n > nmax) nmax = n;
  }
  const int nth = dd_nthreads(K, (double) NR * K * (k + 4));
  const size_t per = rc_work_doubles(nmax, k) + cs_work_doubles(nmax, k);
  double *mem = (double *) R_alloc(per * nth, sizeof(double));
  int *imem = (int *) R_alloc(((size_t) nmax + k) * nth, sizeof(int));
  int *bad = (int *) R_alloc(K > 0 ? K : 1, sizeof(int));   /* a row outside the layout (internal error) */
  memset(bad, 0, sizeof(int) * (K > 0 ? K : 1));
  dd_chunks ch_c;
  dd_chunks_init(&ch_c, K, nth);
  while (dd_chunks_next(&ch_c)) {
  const int c_lo = ch_c.lo, c_hi = ch_c.hi;   /* locals: the compiler keeps them out of memory */
#ifdef _OPENMP
#pragma omp parallel for num_threads(nth) schedule(dynamic, 1)
#endif
  for (int c = c_lo; c < c_hi; c++) {
    const int tid = dd_tid();
    double *m0 = mem + per * tid;
    int *i0 = imem + ((size_t) nmax + k) * tid;
    const int tc = cells[c + K], bc = cells[c + 2 * K];
    /* the cell's rows in row order: merge the rows of its two periods */
    int n = 0, n1t = 0, n1b = 0, n0t = 0, n0b = 0;
    int qa = pstart[tc], qb = tc == bc ? pstart[bc + 1] : pstart[bc];
    const int ea = pstart[tc + 1], eb = pstart[bc + 1];
    while (qa < ea || qb < eb) {
      const int i = (qb >= eb || (qa < ea && prow[qa] < prow[qb])) ? prow[qa++] : prow[qb++];
      const int d = rc_role(i, c, gval, never, gcell, thr, bval, ublk, unit, pos, nb);
      if (d < 0) continue;
      if (n >= nmax) { bad[c] = 1; break; }
      i0[n++] = i;
      if (d) { if (tcol[i] == tc) n1t++; else n1b++; } else { if (tcol[i] == tc) n0t++; else n0b++; }
    }
    if (bad[c]) continue;
    ncell[c] = n; ntreat[c] = n1t + n1b; ntrim[c] = 0;
    if (tc == bc) { status[c] = CS_OK; att[c] = 0.0; continue; }
    for (int j = 0; j < n; j++) if (pos[ublk[unit[i0[j]]] + (R_xlen_t) nb * c] < 0) bad[c] = 1;
    if (bad[c]) continue;
    int st = CS_EMPTY;
    double a_hat = NA_REAL;
    int nt = 0;
    rc_work R;
    if (!(n1t == 0 || n1b == 0 || n0t == 0 || n0b == 0)) {
      rc_carve(&R, m0, n, k);
      for (int j = 0; j < n; j++) {
        int i = i0[j];
        R.y[j] = y[i]; R.post[j] = tcol[i] == tc ? 1.0 : 0.0;
        R.D[j] = rc_role(i, c, gval, never, gcell, thr, bval, ublk, unit, pos, nb) == 1 ? 1.0 : 0.0; R.w[j] = w[i];
        for (int a = 0; a < k; a++) R.X[j + (R_xlen_t) a * n] = X[i + (R_xlen_t) a * NR];
      }
      /* guards on the pooled cell sample, as for panels */
      cs_work G;
      double *gmem = m0 + rc_work_doubles(nmax, k);
      cs_work_carve(&G, gmem, i0, n, k);
      memcpy(G.D, R.D, sizeof(double) * n);
      memcpy(G.X, R.X, sizeof(double) * (size_t) n * k);
      st = cs_guards(method, n, k, &G, R.work4k, i0 + nmax, 0);
      if (st == CS_OK) st = cs_rc_cell(method, n, k, &R, trim, &a_hat, &nt, i0 + nmax);
    }
    status[c] = st; ntrim[c] = nt;
    if ((st == CS_OK || st == CS_PS_NOCONV) && !ISNAN(a_hat)) {
      att[c] = a_hat;
      const double sc = (double) nu / (double) n;
      for (int j = 0; j < n; j++) {
        const int u = unit[i0[j]], b = ublk[u];
        V[b][(R_xlen_t) pos[b + (R_xlen_t) nb * c] * (bstart[b + 1] - bstart[b]) + uloc[u]] += sc * R.inf[j];
      }
    } else {
      /* a cell without an estimate: NA wherever the cell is stored */
      att[c] = NA_REAL;
      for (int b = 0; b < nb; b++) {
        const int p = pos[b + (R_xlen_t) nb * c];
        if (p < 0) continue;
        const int nbk = bstart[b + 1] - bstart[b];
        for (int i = 0; i < nbk; i++) V[b][(R_xlen_t) p * nbk + i] = NA_REAL;
      }
    }
  }
  }
  for (int c = 0; c < K; c++)
    if (bad[c]) error("internal error in %s: a row of cell %d lies outside the block layout; please report", fn, c + 1);
  const char *nm[6] = {"att", "status", "n_cell", "n_trim", "n_treat", "vals"};
  SEXP v[6] = {att_, st_, nc_, ntr_, nt_, vals_};
  SEXP out = dd_named_list(6, nm, v);
  UNPROTECT(6);
  return out;
}

