/* trop.c: the matrix layer of TROP (Athey, Imbens, Qu and Viviano 2025),
 * the triply robust panel estimator, as diff-diff 3.3.2 computes it.
 *
 * Panels are wide: Y is T x N (periods x units, column-major: cell (t, j)
 * at t + T*j), D the 0/1 treatment of each cell. A cell enters a fit when
 * it is untreated (D = 0) and observed (finite Y). Each fit minimises
 *   sum W (Y - alpha_j - beta_t - L)^2 + lambda_nn ||L||_*
 * by alternating a two-way fixed-effect step with proximal (FISTA) steps
 * on L whose proximal map soft-thresholds the singular values (SVT).
 *
 * Local method: one fit per target cell (t*, i*), weights
 *   W[s, j] = exp(-lambda_time |s - t*|) * omega_j,
 *   omega_j = exp(-lambda_unit * RMSE of Y[., i*] - Y[., j] over the periods
 *   other than t* where both are untreated and observed), omega_i* = 1;
 * the fixed-effect step is one Gauss-Seidel sweep (alpha, then beta), and
 * up to 10 FISTA steps follow. tau = Y - alpha - beta - L at the target.
 * Global method (simultaneous adoption): one weight matrix, time weights
 * centred at T - P/2 (P treated periods), unit weights from the RMSE to the
 * treated units' mean over the pre-periods; an exact weighted two-way
 * least-squares step with an intercept and up to 20 FISTA steps.
 * Leave-one-out (cross-validation): the target is an untreated cell taken
 * out of the fit.
 *
 * Everything runs on the calling thread: the eigen-decompositions are
 * LAPACK's (dsyevr).
 * Workspace comes from R_alloc; interrupts are checked between fits. */
#include "diffdiff.h"
#include <math.h>
#include <string.h>

typedef struct {
  int T, N, k;                 /* k = min(T, N) */
  double *W, *Wn, *L, *Lout, *Lp, *R, *Rm, *A;   /* T x N */
  double *al, *alo, *cu, *be, *beo, *ct;
  double *s, *U, *P, *work;     /* eigen-decomposition of the k x k Gram matrix */
  int *iwork, *isupp, lwork, liwork;
  double *S, *rhs;             /* global: (T-1) x (T-1) Schur complement, right-hand side */
  int nsvd;                    /* SVDs computed (reported) */
} trop_ws;

static double *trop_alloc(size_t n) { return (double *) R_alloc(n > 0 ? n : 1, sizeof(double)); }

static void trop_ws_init(trop_ws *w, int T, int N) {
  size_t TN = (size_t) T * N;
  w->T = T; w->N = N; w->k = T < N ? T : N;
  w->W = trop_alloc(TN); w->Wn = trop_alloc(TN); w->L = trop_alloc(TN); w->Lout = trop_alloc(TN);
  w->Lp = trop_alloc(TN); w->R = trop_alloc(TN);
  w->Rm = trop_alloc(TN); w->A = trop_alloc(TN);
  w->al = trop_alloc(N); w->alo = trop_alloc(N); w->cu = trop_alloc(N);
  w->be = trop_alloc(T); w->beo = trop_alloc(T); w->ct = trop_alloc(T);
  const int k = w->k;
  w->s = trop_alloc(k); w->U = trop_alloc((size_t) k * k); w->P = trop_alloc((size_t) k * k);
  w->isupp = (int *) R_alloc(2 * (size_t) k, sizeof(int));
  w->S = trop_alloc((size_t) (T > k ? T : k) * (T > k ? T : k)); w->rhs = trop_alloc(T);
  /* workspace query for the symmetric eigen-decomposition */
  int kk = k, info = 0, lw = -1, liw = -1, qi = 0;
  double q = 0;
  F77_CALL(dsyevd)("V", "L", &kk, w->S, &kk, w->s, &q, &lw, &qi, &liw, &info FCONE FCONE);
  w->lwork = (int) q + 1; w->liwork = qi + 1;
  w->work = trop_alloc(w->lwork);
  w->iwork = (int *) R_alloc(w->liwork, sizeof(int));
  w->nsvd = 0;
}

/* Gram matrix of the rows of A (T x N, wide: k = T) or of its columns
 * (tall: k = N), lower triangle of S (k x k) */
static void trop_gram(const double *restrict A, int T, int N, int wide, double *restrict S) {
  const int k = wide ? T : N;
  for (int b = 0; b < k; b++) {
    double *restrict s = S + (size_t) k * b;
    for (int a = b; a < k; a++) s[a] = 0;
    if (wide) {
      /* four columns of A per pass over s (fewer loads and stores of s) */
      int j = 0;
      for (; j + 4 <= N; j += 4) {
        const double *restrict c0 = A + (size_t) T * j, *restrict c1 = c0 + T, *restrict c2 = c1 + T,
                     *restrict c3 = c2 + T;
        const double b0 = c0[b], b1 = c1[b], b2 = c2[b], b3 = c3[b];
        int a = b;
        for (; a + 2 <= k; a += 2) {
          s[a] += c0[a] * b0 + c1[a] * b1 + c2[a] * b2 + c3[a] * b3;
          s[a + 1] += c0[a + 1] * b0 + c1[a + 1] * b1 + c2[a + 1] * b2 + c3[a + 1] * b3;
        }
        for (; a < k; a++) s[a] += c0[a] * b0 + c1[a] * b1 + c2[a] * b2 + c3[a] * b3;
      }
      for (; j < N; j++) {
        const double *restrict col = A + (size_t) T * j;
        const double cb = col[b];
        for (int a = b; a < k; a++) s[a] += col[a] * cb;
      }
    } else {
      const double *restrict cbv = A + (size_t) T * b;
      for (int a = b; a < k; a++) {
        const double *restrict ca = A + (size_t) T * a;
        double z = 0;
        for (int t = 0; t < T; t++) z += ca[t] * cbv[t];
        s[a] = z;
      }
    }
  }
}

/* Singular value soft-thresholding: out = U diag(max(s - thr, 0)) V',
 * keeping components with s - thr > 1e-10 (none: zero); thr <= 0: out = G.
 * When thr >= ||G||_F every singular value is below it: zero. Otherwise,
 * with the singular vectors u_r of the shorter side (G G' = U diag(s^2) U'
 * for T <= N), out = P G with P = sum_r (1 - thr / s_r) u_r u_r' over the
 * kept components (G' G and out = G P for T > N): the eigen-decomposition
 * of the small Gram matrix (LAPACK dsyevr, on the calling thread) replaces
 * the SVD of G. */
/* w->A holds G (finite) and fro its sum of squares; thr > 0 */
static void trop_svt(trop_ws *w, double fro, double thr, double *out) {
  const int T = w->T, N = w->N, k = w->k;
  const size_t TN = (size_t) T * N;
  if (sqrt(fro) - thr <= 1e-10) { memset(out, 0, TN * sizeof(double)); return; }
  const int wide = T <= N;        /* Gram of the rows (k = T) or of the columns (k = N) */
  int kk = k;
  trop_gram(w->A, T, N, wide, w->S);
  /* all eigenpairs (MRRR; ascending), then the kept components: s - thr >
   * 1e-10, each scaled by f = 1 - thr/s */
  int m = kk, info = 0;
  F77_CALL(dsyevd)("V", "L", &kk, w->S, &kk, w->s, w->work, &w->lwork, w->iwork, &w->liwork, &info FCONE FCONE);
  memcpy(w->U, w->S, (size_t) k * k * sizeof(double));
  w->nsvd++;
  if (info != 0) { memset(out, 0, TN * sizeof(double)); return; }
  /* P = U_m diag(f) U_m' (k x k) */
  double *restrict P = w->P;
  memset(P, 0, (size_t) k * k * sizeof(double));
  int kept = 0;
  for (int r = m - 1; r >= 0; r--) {
    double sv = w->s[r] > 0 ? sqrt(w->s[r]) : 0.0;
    if (!(sv - thr > 1e-10)) break;
    const double f = 1.0 - thr / sv;
    const double *restrict u = w->U + (size_t) k * r;
    for (int b = 0; b < k; b++) {
      const double fb = f * u[b];
      double *restrict pb = P + (size_t) k * b;
      for (int a = 0; a < k; a++) pb[a] += u[a] * fb;
    }
    kept++;
  }
  if (kept == 0) { memset(out, 0, TN * sizeof(double)); return; }
  const double *restrict A = w->A;
  if (wide) {
    /* out[, j] = P A[, j] */
    for (int j = 0; j < N; j++) {
      const double *restrict a = A + (size_t) T * j;
      double *restrict o = out + (size_t) T * j;
      for (int t = 0; t < T; t++) o[t] = 0;
      int b = 0;
      for (; b + 4 <= T; b += 4) {
        const double a0 = a[b], a1 = a[b + 1], a2 = a[b + 2], a3 = a[b + 3];
        const double *restrict p0 = P + (size_t) T * b, *restrict p1 = p0 + T, *restrict p2 = p1 + T,
                     *restrict p3 = p2 + T;
        int t = 0;
        for (; t + 2 <= T; t += 2) {   /* pairs: packed SSE2 arithmetic (SLP) */
          o[t] += p0[t] * a0 + p1[t] * a1 + p2[t] * a2 + p3[t] * a3;
          o[t + 1] += p0[t + 1] * a0 + p1[t + 1] * a1 + p2[t + 1] * a2 + p3[t + 1] * a3;
        }
        for (; t < T; t++) o[t] += p0[t] * a0 + p1[t] * a1 + p2[t] * a2 + p3[t] * a3;
      }
      for (; b < T; b++) {
        const double ab = a[b];
        const double *restrict pb = P + (size_t) T * b;
        for (int t = 0; t < T; t++) o[t] += pb[t] * ab;
      }
    }
  } else {
    /* out[, j] = A P[, j] */
    for (int j = 0; j < N; j++) {
      const double *restrict pj = P + (size_t) N * j;
      double *restrict o = out + (size_t) T * j;
      for (int t = 0; t < T; t++) o[t] = 0;
      for (int b = 0; b < N; b++) {
        const double pbj = pj[b];
        const double *restrict ab = A + (size_t) T * b;
        for (int t = 0; t < T; t++) o[t] += ab[t] * pbj;
      }
    }
  }
}

static double trop_maxdiff(const double *a, const double *b, size_t n) {
  double m = 0;
  for (size_t c = 0; c < n; c++) { double d = fabs(a[c] - b[c]); if (d > m) m = d; }
  return m;
}

/* FISTA on L: weights w->Wn (normalised), targets w->Rm, threshold thr
 * (<= 0: no thresholding), from L = w->L (updated in place), at most
 * `inner` steps, stopping when a step changes L by less than tol */
static void trop_fista(trop_ws *w, double thr, int inner, double tol) {
  const size_t TN = (size_t) w->T * w->N;
  double *restrict L = w->L, *restrict Lp = w->Lp, *restrict A = w->A;
  const double *restrict Wn = w->Wn, *restrict Rm = w->Rm;
  memcpy(Lp, L, TN * sizeof(double));
  double tf = 1.0;
  for (int k = 0; k < inner; k++) {
    double tfn = (1.0 + sqrt(1.0 + 4.0 * tf * tf)) / 2.0, mom = (tf - 1.0) / tfn;
    /* one pass: the extrapolated point Lm, the gradient step G (into A,
     * with its sum of squares), and Lp <- L (the previous iterate, also the
     * reference of the convergence check) */
    double fro = 0;
    for (size_t c = 0; c < TN; c++) {
      const double lm = L[c] + mom * (L[c] - Lp[c]);
      double g = lm + Wn[c] * (Rm[c] - lm);
      if (thr > 0 && !isfinite(g)) g = 0.0;
      A[c] = g; fro += g * g;
      Lp[c] = L[c];
    }
    if (thr > 0) trop_svt(w, fro, thr, L);
    else memcpy(L, A, TN * sizeof(double));
    tf = tfn;
    if (trop_maxdiff(L, Lp, TN) < tol) break;
  }
}

/* normalised weights and threshold for the L step (weights w->W) */
static double trop_norm_weights(trop_ws *w, double lnn) {
  const size_t TN = (size_t) w->T * w->N;
  double wmax = 0;
  for (size_t c = 0; c < TN; c++) if (w->W[c] > wmax) wmax = w->W[c];
  if (wmax > 0) {
    for (size_t c = 0; c < TN; c++) w->Wn[c] = w->W[c] / wmax;
    return lnn / (2.0 * wmax);
  }
  memcpy(w->Wn, w->W, TN * sizeof(double));
  return lnn / 2.0;
}

/* Local fit with weights w->W (zero off the estimation cells): alpha, beta,
 * L in w->al, w->be, w->L. Returns 1 when max_iter was reached. */
static int trop_local_solve(trop_ws *w, const double *Y0, double lnn, int max_iter, double tol) {
  const int T = w->T, N = w->N;
  const size_t TN = (size_t) T * N;
  const double *W = w->W;
  double *L = w->L, *al = w->al, *be = w->be;
  memset(al, 0, N * sizeof(double)); memset(be, 0, T * sizeof(double)); memset(L, 0, TN * sizeof(double));
  for (int t = 0; t < T; t++) w->ct[t] = 0;
  for (int j = 0; j < N; j++) {
    double c = 0;
    for (int t = 0; t < T; t++) { double x = W[t + (size_t) T * j]; c += x; w->ct[t] += x; }
    w->cu[j] = c;
  }
  const double thr = lnn > 0 ? trop_norm_weights(w, lnn) : 0.0;
  int lzero = 1;                  /* L is zero (as initialised) */
  for (int it = 1; it <= max_iter; it++) {
    memcpy(w->alo, al, N * sizeof(double)); memcpy(w->beo, be, T * sizeof(double));
    memcpy(w->Lout, L, TN * sizeof(double));
    /* alpha from the old beta, then beta from the new alpha */
    for (int j = 0; j < N; j++) {
      const double *Wj = W + (size_t) T * j, *Yj = Y0 + (size_t) T * j, *Lj = L + (size_t) T * j;
      double num = 0;
      for (int t = 0; t < T; t++) num += Wj[t] * (Yj[t] - Lj[t] - w->beo[t]);
      al[j] = w->cu[j] > 0 ? num / w->cu[j] : 0.0;
    }
    for (int t = 0; t < T; t++) be[t] = 0;
    for (int j = 0; j < N; j++) {
      const double *Wj = W + (size_t) T * j, *Yj = Y0 + (size_t) T * j, *Lj = L + (size_t) T * j;
      for (int t = 0; t < T; t++) be[t] += Wj[t] * (Yj[t] - Lj[t] - al[j]);
    }
    for (int t = 0; t < T; t++) be[t] = w->ct[t] > 0 ? be[t] / w->ct[t] : 0.0;
    /* L step: residuals on the estimation cells, L kept elsewhere */
    double rss = 0;
    for (int j = 0; j < N; j++)
      for (int t = 0; t < T; t++) {
        size_t c = t + (size_t) T * j;
        double e = Y0[c] - al[j] - be[t];
        if (!isfinite(e)) e = 0;
        w->Rm[c] = W[c] > 0 ? e : L[c];
        rss += w->Rm[c] * w->Rm[c];
      }
    if (lnn <= 0) { memcpy(L, w->Rm, TN * sizeof(double)); lzero = 0; }
    else if (lzero && sqrt(rss) - thr <= 1e-10) {
      /* L = 0 and the first proximal step's input Wn (.) Rm has Frobenius
       * norm <= ||Rm|| <= thr: it thresholds to 0 again, and the FISTA loop
       * stops there (no change): L stays 0 (lambda_nn = Inf) */
    } else { trop_fista(w, thr, 10, tol); lzero = 0; }
    double d = trop_maxdiff(al, w->alo, N), d2 = trop_maxdiff(be, w->beo, T), d3 = trop_maxdiff(L, w->Lout, TN);
    if (d2 > d) d = d2;
    if (d3 > d) d = d3;
    if (d < tol) return 0;
  }
  return 1;
}

/* Local weights for target (ts, is) into w->W; `loo`: the target cell is
 * left out of the estimation cells. obs: finite outcome. */
static void trop_local_weights(trop_ws *w, const double *Y, const int *D, const int *obs, int ts, int is,
                               double lt, double lu, int loo) {
  const int T = w->T, N = w->N;
  double *th = w->beo, *om = w->alo;      /* scratch: time and unit weights */
  for (int s = 0; s < T; s++) th[s] = exp(-lt * fabs((double) (s - ts)));
  const int *Di = D + (size_t) T * is, *oi = obs + (size_t) T * is;
  const double *Yi = Y + (size_t) T * is;
  for (int j = 0; j < N; j++) {
    if (j == is || lu == 0) { om[j] = 1.0; continue; }
    const int *Dj = D + (size_t) T * j, *oj = obs + (size_t) T * j;
    const double *Yj = Y + (size_t) T * j;
    double ss = 0; int n = 0;
    for (int s = 0; s < T; s++) {
      if (s == ts || Di[s] != 0 || Dj[s] != 0 || !oi[s] || !oj[s]) continue;
      double d = Yi[s] - Yj[s];
      ss += d * d; n++;
    }
    om[j] = n > 0 ? exp(-lu * sqrt(ss / n)) : 0.0;
  }
  for (int j = 0; j < N; j++) {
    const int *Dj = D + (size_t) T * j, *oj = obs + (size_t) T * j;
    double *Wj = w->W + (size_t) T * j;
    for (int s = 0; s < T; s++) Wj[s] = (Dj[s] == 0 && oj[s]) ? th[s] * om[j] : 0.0;
  }
  if (loo) w->W[ts + (size_t) T * is] = 0.0;
}

/* Estimability of a target cell (period ts, unit is) under the weights
 * w->W (TROP's identification guard): alpha_is + beta_ts is identified by the
 * two-way fit on the cells with W > 0 if and only if the unit and the period
 * lie in one connected component of the bipartite graph whose nodes are the
 * periods (0..T-1) and the units (T..T+N-1) and whose edges are those cells.
 * Breadth-first search from the period; mark and queue hold T + N ints.
 * Returns 1 when the unit is reached. */
static int trop_connected(const double *W, int T, int N, int ts, int is, int *mark, int *queue) {
  memset(mark, 0, ((size_t) T + N) * sizeof(int));
  int head = 0, tail = 0;
  mark[ts] = 1; queue[tail++] = ts;
  while (head < tail) {
    const int v = queue[head++];
    if (v < T) {
      for (int j = 0; j < N; j++) {
        if (mark[T + j] || !(W[v + (size_t) T * j] > 0)) continue;
        if (j == is) return 1;
        mark[T + j] = 1; queue[tail++] = T + j;
      }
    } else {
      const double *Wj = W + (size_t) T * (v - T);
      for (int s = 0; s < T; s++) {
        if (mark[s] || !(Wj[s] > 0)) continue;
        mark[s] = 1; queue[tail++] = s;
      }
    }
  }
  return 0;
}

/* Weighted two-way least squares of R (T x N) on an intercept, unit and
 * period effects with weights Wt: fitted value gam[j] + be[t] (be[0] = 0),
 * solved through the (T-1) x (T-1) Schur complement of the unit block.
 * Units with no weight get gam = NaN. Returns 0, or 1 when the system is
 * singular (a disconnected design). */
static int trop_wls(trop_ws *w, const double *R, const double *Wt, double *gam, double *be) {
  const int T = w->T, N = w->N, m = T - 1;
  double *S = w->S, *b = w->rhs;
  memset(S, 0, (size_t) m * m * sizeof(double));
  for (int t = 0; t < T; t++) w->ct[t] = 0;
  for (int t = 0; t < m; t++) b[t] = 0;
  for (int j = 0; j < N; j++) {
    const double *Wj = Wt + (size_t) T * j, *Rj = R + (size_t) T * j;
    double cu = 0, sy = 0;
    for (int t = 0; t < T; t++) { cu += Wj[t]; sy += Wj[t] * Rj[t]; w->ct[t] += Wj[t]; }
    w->cu[j] = cu; w->al[j] = sy;                           /* al: sum_t W y */
    if (cu <= 0) continue;
    for (int t = 1; t < T; t++) {
      if (Wj[t] == 0) continue;
      double a = Wj[t] / cu;
      b[t - 1] += Wj[t] * Rj[t] - a * sy;
      for (int s = 1; s <= t; s++) S[(t - 1) + (size_t) m * (s - 1)] -= a * Wj[s];
    }
  }
  for (int t = 1; t < T; t++) S[(t - 1) + (size_t) m * (t - 1)] += w->ct[t];
  be[0] = 0;
  if (m > 0) {
    int info = 0, one = 1;
    F77_CALL(dpotrf)("L", &m, S, &m, &info FCONE);
    if (info != 0) return 1;
    F77_CALL(dpotrs)("L", &m, &one, S, &m, b, &m, &info FCONE);
    for (int t = 1; t < T; t++) be[t] = b[t - 1];
  }
  for (int j = 0; j < N; j++) {
    if (w->cu[j] <= 0) { gam[j] = NA_REAL; continue; }
    const double *Wj = Wt + (size_t) T * j;
    double sb = 0;
    for (int t = 1; t < T; t++) sb += Wj[t] * be[t];
    gam[j] = (w->al[j] - sb) / w->cu[j];
  }
  return 0;
}

/* Global weights into w->W: time weights centred at T - P/2, unit weights
 * from the RMSE to the treated units' mean over the first T - P periods */
static void trop_global_weights(trop_ws *w, const double *Y, const int *D, const int *obs, int P,
                                double lt, double lu) {
  const int T = w->T, N = w->N, npre = T - P;
  double *th = w->beo, *om = w->alo, *ybar = w->rhs;   /* rhs: T doubles, free here */
  const double center = T - P / 2.0;
  for (int t = 0; t < T; t++) th[t] = exp(-lt * fabs(t - center));
  int *ever = (int *) R_alloc(N, sizeof(int));
  for (int j = 0; j < N; j++) {
    ever[j] = 0;
    for (int t = 0; t < T; t++) if (D[t + (size_t) T * j]) { ever[j] = 1; break; }
  }
  for (int t = 0; t < T; t++) {
    double sy = 0; int n = 0;
    for (int j = 0; j < N; j++)
      if (ever[j] && obs[t + (size_t) T * j]) { sy += Y[t + (size_t) T * j]; n++; }
    ybar[t] = n > 0 ? sy / n : NA_REAL;
  }
  for (int j = 0; j < N; j++) {
    double ss = 0; int n = 0;
    for (int t = 0; t < npre; t++) {
      size_t c = t + (size_t) T * j;
      if (!obs[c] || !R_FINITE(ybar[t])) continue;
      double d = ybar[t] - Y[c];
      ss += d * d; n++;
    }
    om[j] = n > 0 ? exp(-lu * sqrt(ss / n)) : 0.0;
  }
  for (int j = 0; j < N; j++)
    for (int t = 0; t < T; t++) {
      size_t c = t + (size_t) T * j;
      w->W[c] = (D[c] == 0 && obs[c]) ? th[t] * om[j] : 0.0;
    }
}

/* Global fit with weights w->W: gam (N), be (T), L in w->L. Returns 0,
 * 1 (max_iter reached) or 2 (singular least squares). */
static int trop_global_solve(trop_ws *w, const double *Y0, double lnn, int max_iter, double tol, double *gam,
                             double *be) {
  const int T = w->T, N = w->N;
  const size_t TN = (size_t) T * N;
  double *L = w->L, *R = w->R;
  memset(L, 0, TN * sizeof(double));
  if (lnn >= 1e10) return trop_wls(w, Y0, w->W, gam, be) ? 2 : 0;
  const double thr = trop_norm_weights(w, lnn);
  int status = 1;
  for (int it = 1; it <= max_iter; it++) {
    memcpy(w->Lout, L, TN * sizeof(double));
    for (size_t c = 0; c < TN; c++) R[c] = Y0[c] - L[c];
    if (trop_wls(w, R, w->W, gam, be)) return 2;
    for (int j = 0; j < N; j++)
      for (int t = 0; t < T; t++) {
        size_t c = t + (size_t) T * j;
        double e = Y0[c] - gam[j] - be[t];
        if (!isfinite(e)) e = 0;
        w->Rm[c] = w->W[c] > 0 ? e : L[c];
      }
    trop_fista(w, thr, 20, tol);
    if (trop_maxdiff(L, w->Lout, TN) < tol) { status = 0; break; }
  }
  for (size_t c = 0; c < TN; c++) R[c] = Y0[c] - L[c];
  if (trop_wls(w, R, w->W, gam, be)) return 2;
  return status;
}

/* .Call entry: TROP fits on a wide panel.
 * Y: T x N outcomes (NA: missing); D: T x N 0/1 integer; method 0 local,
 * 1 global; lam: (lambda_time, lambda_unit, lambda_nn); ctrl: (max_iter,
 * tol); cells: k x 2 integer (period, unit; 0-based) targets; loo: the
 * targets are untreated cells left out one at a time (cross-validation)
 * and only the sum of squared tau is needed; P: treated periods (global).
 * Returns list(tau, alpha, beta, L, nonconverged, nsvd): for the local
 * method alpha, beta and L are sums over the targets' fits (not with
 * loo; the caller averages them over its chunks of cells); for the
 * global method alpha is gam (intercept + unit effect) and beta the period
 * effects with beta[0] = 0, from the one fit (not with loo).
 * guard (every local fit but loo's, as diff-diff's; what makes
 * did_trop(non_absorbing = TRUE) safe, and a fit whose weights all underflow
 * stop instead of returning Y - alpha as an effect): a target
 * whose unit and period are not connected through the cells of positive
 * weight (trop_connected) is not fitted: its tau is NA and it adds nothing
 * to alpha, beta and L. */
SEXP C_trop_fit(SEXP Y_, SEXP D_, SEXP method_, SEXP lam_, SEXP ctrl_, SEXP cells_, SEXP loo_, SEXP P_,
                SEXP guard_) {
  const char *fn = "C_trop_fit";
  dd_chk_type(Y_, REALSXP, 0, fn, "Y");
  SEXP dim = getAttrib(Y_, R_DimSymbol);
  if (isNull(dim) || LENGTH(dim) != 2) error("%s: `Y` must be a matrix", fn);
  const int T = INTEGER(dim)[0], N = INTEGER(dim)[1];
  if (T < 2 || N < 2) error("%s: `Y` must have at least 2 rows and 2 columns", fn);
  dd_chk_mat(D_, INTSXP, T, N, 0, fn, "D");
  const int method = dd_chk_int(method_, 0, 1, fn, "method");
  dd_chk_vec(lam_, REALSXP, 3, 0, fn, "lam");
  dd_chk_vec(ctrl_, REALSXP, 2, 0, fn, "ctrl");
  dd_chk_type(cells_, INTSXP, 0, fn, "cells");
  const int loo = dd_chk_int(loo_, 0, 1, fn, "loo");
  const int P = dd_chk_int(P_, 0, T - 1, fn, "P");
  const int guard = dd_chk_int(guard_, 0, 1, fn, "guard");
  if (guard && (method != 0 || loo)) dd_bad(fn, "guard", "applies to the local method's fits only (not loo)");
  const R_xlen_t K = XLENGTH(cells_) / 2;
  const int *cell = INTEGER(cells_);
  for (R_xlen_t q = 0; q < K; q++)
    if (cell[q] < 0 || cell[q] >= T || cell[q + K] < 0 || cell[q + K] >= N) error("%s: `cells` out of range", fn);
  const double lt = REAL(lam_)[0], lu = REAL(lam_)[1], lnn = REAL(lam_)[2];
  const int max_iter = dd_chk_whole(REAL(ctrl_)[0], 1, DD_INT_MAX, fn, "ctrl[1] (max_iter)");
  const double tol = REAL(ctrl_)[1];
  if (!(lt >= 0) || !(lu >= 0) || !(lnn >= 0) || !R_FINITE(lt) || !R_FINITE(lu) || !R_FINITE(lnn))
    error("%s: `lam` must be finite and >= 0", fn);
  if (!(tol > 0)) error("%s: bad `ctrl`", fn);
  const size_t TN = (size_t) T * N;
  const double *Y = REAL(Y_);
  const int *D = INTEGER(D_);
  trop_ws w;
  trop_ws_init(&w, T, N);
  int *obs = (int *) R_alloc(TN, sizeof(int));
  double *Y0 = trop_alloc(TN);
  for (size_t c = 0; c < TN; c++) { obs[c] = R_FINITE(Y[c]); Y0[c] = obs[c] ? Y[c] : 0.0; }

  int np = 0;
  SEXP tau = PROTECT(allocVector(REALSXP, K)); np++;
  SEXP A = PROTECT(allocVector(REALSXP, N)); np++;
  SEXP B = PROTECT(allocVector(REALSXP, T)); np++;
  SEXP Lr = PROTECT(allocMatrix(REALSXP, T, N)); np++;
  double *ta = REAL(tau), *aa = REAL(A), *ba = REAL(B), *La = REAL(Lr);
  memset(aa, 0, N * sizeof(double)); memset(ba, 0, T * sizeof(double)); memset(La, 0, TN * sizeof(double));
  int nonconv = 0;
  double tl = -1;
  if (method == 0) {
    int nfit = 0;
    int *mark = NULL, *queue = NULL;
    if (guard) {
      mark = (int *) R_alloc((size_t) T + N, sizeof(int));
      queue = (int *) R_alloc((size_t) T + N, sizeof(int));
    }
    for (R_xlen_t q = 0; q < K; q++) {
      dd_check_interrupt(&tl);
      const int ts = cell[q], is = cell[q + K];
      size_t c = ts + (size_t) T * is;
      if (!obs[c]) { ta[q] = NA_REAL; continue; }
      trop_local_weights(&w, Y, D, obs, ts, is, lt, lu, loo);
      if (guard && !trop_connected(w.W, T, N, ts, is, mark, queue)) { ta[q] = NA_REAL; continue; }
      nonconv += trop_local_solve(&w, Y0, lnn, max_iter, tol);
      ta[q] = Y[c] - w.al[is] - w.be[ts] - w.L[c];
      if (!loo) {
        nfit++;
        for (int j = 0; j < N; j++) aa[j] += w.al[j];
        for (int t = 0; t < T; t++) ba[t] += w.be[t];
        for (size_t d = 0; d < TN; d++) La[d] += w.L[d];
      }
    }
  } else {
    double *gam = trop_alloc(N), *be = trop_alloc(T);
    trop_global_weights(&w, Y, D, obs, P, lt, lu);
    if (loo) {
      double *Wfull = trop_alloc(TN);
      memcpy(Wfull, w.W, TN * sizeof(double));
      for (R_xlen_t q = 0; q < K; q++) {
        dd_check_interrupt(&tl);
        const int ts = cell[q], is = cell[q + K];
        size_t c = ts + (size_t) T * is;
        memcpy(w.W, Wfull, TN * sizeof(double));
        w.W[c] = 0.0;
        if (!obs[c]) { ta[q] = NA_REAL; continue; }
        int st = trop_global_solve(&w, Y0, lnn, max_iter, tol, gam, be);
        if (st == 2) { ta[q] = NA_REAL; continue; }
        nonconv += st;
        ta[q] = Y[c] - gam[is] - be[ts] - w.L[c];
      }
    } else {
      int st = trop_global_solve(&w, Y0, lnn, max_iter, tol, gam, be);
      if (st == 2) {
        for (R_xlen_t q = 0; q < K; q++) ta[q] = NA_REAL;
      } else {
        nonconv += st;
        for (R_xlen_t q = 0; q < K; q++) {
          size_t c = cell[q] + (size_t) T * cell[q + K];
          ta[q] = obs[c] ? Y[c] - gam[cell[q + K]] - be[cell[q]] - w.L[c] : NA_REAL;
        }
        memcpy(aa, gam, N * sizeof(double)); memcpy(ba, be, T * sizeof(double));
        memcpy(La, w.L, TN * sizeof(double));
      }
    }
  }
  SEXP nc = PROTECT(ScalarInteger(nonconv)); np++;
  SEXP ns = PROTECT(ScalarInteger(w.nsvd)); np++;
  const char *nms[] = {"tau", "alpha", "beta", "L", "nonconverged", "nsvd"};
  SEXP vals[] = {tau, A, B, Lr, nc, ns};
  SEXP out = PROTECT(dd_named_list(6, nms, vals)); np++;
  UNPROTECT(np);
  return out;
}
