/* rd.c: one side of a regression discontinuity, as rdrobust 4.1: the
 * order-p local-polynomial fit at bandwidth h, the order-q fit at b, the
 * bias-corrected coefficients, and each observation's term of the
 * conventional and robust variances (its influence on the nu-th
 * coefficient), with nearest-neighbour or HC0-HC3 residuals. Built on the
 * kernel, inverse and neighbour rules of locpoly.c. The running variable is
 * sorted (ascending) and centred at the cutoff by the caller; design rows are
 * raw powers of it; weights are fw_i K(d_i / h) / h. Nothing here knows R
 * except C_rd_lp at the bottom. */
#include "diffdiff.h"
#include <float.h>
#include <Rmath.h>

#define RD_MAXK 12            /* orders up to 10, plus one for the bias term */
/* Ctrl-C between chunks of 2^20 rows (main thread: nothing here is parallel) */
#define RD_INTERRUPT(t) if ((((t) + 1) & 0xFFFFF) == 0) R_CheckUserInterrupt()

typedef struct {
  int n, m;                   /* window size, columns of D */
  const double *d, *D, *fw;   /* the side's data (N rows) */
  int N, kern;
  const int *idx;             /* the window: positions in 0..N-1 */
  double *wh, *wb;            /* the weights at h and at b over the window */
} rd_side;

static double rd_w(const rd_side *S, int i, double h) {
  double w = lp_K(S->d[i] / h, S->kern) / h;
  return S->fw ? w * S->fw[i] : w;
}

/* G = sum w r r' and U = sum w r D' (k x m) over the window, with the
 * window's weights W, order o */
static void rd_gram(const rd_side *S, int o, const double *W, double *G, double *U) {
  int k = o + 1;
  for (int a = 0; a < k * k; a++) G[a] = 0;
  for (int a = 0; a < k * S->m; a++) U[a] = 0;
  double r[RD_MAXK];
  for (int t = 0; t < S->n; t++) {
    RD_INTERRUPT(t);
    int i = S->idx[t];
    double w = W[t];
    if (w == 0) continue;
    r[0] = 1;
    for (int a = 1; a < k; a++) r[a] = r[a - 1] * S->d[i];
    for (int b = 0; b < k; b++) for (int a = b; a < k; a++) G[a + b * k] += w * r[a] * r[b];
    for (int j = 0; j < S->m; j++) {
      double y = S->D[i + (R_xlen_t) j * S->N];
      for (int a = 0; a < k; a++) U[a + j * k] += w * r[a] * y;
    }
  }
  for (int b = 0; b < k; b++) for (int a = 0; a < b; a++) G[a + b * k] = G[b + a * k];
}

/* B = Ginv U (k x m) */
static void rd_solve(int k, int m, const double *Ginv, const double *U, double *B) {
  for (int j = 0; j < m; j++)
    for (int a = 0; a < k; a++) {
      double s = 0;
      for (int b = 0; b < k; b++) s += Ginv[a + b * k] * U[b + j * k];
      B[a + j * k] = s;
    }
}

/* r' Ginv r (the leverage without the weight) */
static double rd_quad(int k, const double *Ginv, const double *r) {
  double s = 0;
  for (int a = 0; a < k; a++) {
    double t = 0;
    for (int b = 0; b < k; b++) t += Ginv[a + b * k] * r[b];
    s += r[a] * t;
  }
  return s;
}

/* d (side, sorted, centred at the cutoff), D (N x m), fw (NULL or N
 * weights), h, b, ord = c(p, q, nu) (q = -1: no order-q fit, no bias
 * correction), kernel code, s (NULL, or m numbers combining D's columns
 * into the outcome whose variance terms are wanted), vce (0 nn, 1 hc0, 2
 * hc1, 3 hc2, 4 hc3), matches (nn). The window is the rows with weight > 0
 * at the larger of h and b (at h if h > b, else at b: rdrobust's sample).
 * Returns list(ok, idx (1-based window rows), counts c(n_h, n_b, distinct x
 * with weight > 0 at h, at b), beta_p, beta_q, beta_bc (coefficients x
 * m), GinvL (Gamma_p^{-1} l, l = sum w_h r_p (d/h)^(p+1)), U (R_p' W_h D),
 * DWD (D' W_h D), psi_cl, psi_rb (window length: the nu-th element of
 * Gamma_p^{-1} w_h r_p e_h and of Gamma_p^{-1} Q e_b)). ok = 0: a Gram
 * matrix is singular (nothing else is filled). */
SEXP C_rd_lp(SEXP d_, SEXP D_, SEXP fw_, SEXP h_, SEXP b_, SEXP ord_, SEXP kern_, SEXP s_, SEXP vce_,
             SEXP matches_) {
  const char *fn = "C_rd_lp";
  dd_chk_type(d_, REALSXP, 0, fn, "d");
  const int N = LENGTH(d_);
  dd_chk_mat(D_, REALSXP, N, -1, 0, fn, "D");
  dd_chk_vec(fw_, REALSXP, N, 1, fn, "fw");
  const double h = dd_chk_pos(h_, fn, "h"), b = dd_chk_pos(b_, fn, "b");
  dd_chk_vec(ord_, INTSXP, 3, 0, fn, "ord");
  const int p = INTEGER(ord_)[0], q = INTEGER(ord_)[1], nu = INTEGER(ord_)[2];
  if (p < 0 || p > 10 || (q != -1 && (q <= p || q > 10)) || nu < 0 || nu > p)
    error("internal error in %s: `ord` = (%d, %d, %d) is out of range; please report", fn, p, q, nu);
  const int kern = dd_chk_int(kern_, 0, 2, fn, "kernel");
  const int m = ncols(D_);
  if (m < 1 || m > 64) error("internal error in %s: `D` has %d columns; please report", fn, m);
  dd_chk_vec(s_, REALSXP, m, 1, fn, "s");
  const int vce = dd_chk_int(vce_, 0, 4, fn, "vce");
  const int matches = dd_chk_int(matches_, 1, DD_INT_MAX, fn, "matches");
  const double *d = REAL(d_);
  for (int i = 1; i < N; i++) {
    RD_INTERRUPT(i);
    if (!(d[i] >= d[i - 1])) error("internal error in %s: `d` is not sorted at position %d; please report", fn, i + 1);
  }
  const double *fw = isNull(fw_) ? NULL : REAL(fw_);

  /* the window */
  const double hw = h > b ? h : b;
  int cnt[4] = {0, 0, 0, 0};
  double lasth = R_NegInf, lastb = R_NegInf;
  /* the rows with |d| <= max(h, b), by bisection (d is sorted), with a
   * margin for d / h rounding to 1: weights outside are 0 */
  const double hb = hw * (1 + 1e-12);
  int lo = 0, hi = N, n = 0;
  { int a = 0, z = N; while (a < z) { int mid = a + (z - a) / 2; if (d[mid] < -hb) a = mid + 1; else z = mid; } lo = a; }
  { int a = lo, z = N; while (a < z) { int mid = a + (z - a) / 2; if (d[mid] <= hb) a = mid + 1; else z = mid; } hi = a; }
  int *idx = (int *) R_alloc(hi - lo > 0 ? hi - lo : 1, sizeof(int));
  for (int i = lo; i < hi; i++) {
    RD_INTERRUPT(i);
    double fwi = fw ? fw[i] : 1;
    double wh = lp_K(d[i] / h, kern) * fwi, wb = lp_K(d[i] / b, kern) * fwi;
    if (wh > 0) { cnt[0]++; if (d[i] != lasth) { cnt[2]++; lasth = d[i]; } }
    if (wb > 0) { cnt[1]++; if (d[i] != lastb) { cnt[3]++; lastb = d[i]; } }
    if ((hw == h ? wh : wb) > 0) idx[n++] = i;
  }
  double *wh = (double *) R_alloc(n > 0 ? n : 1, sizeof(double)), *wb = (double *) R_alloc(n > 0 ? n : 1, sizeof(double));
  rd_side S = { n, m, d, REAL(D_), fw, N, kern, idx, wh, wb };
  for (int t = 0; t < n; t++) { RD_INTERRUPT(t); wh[t] = rd_w(&S, idx[t], h); wb[t] = rd_w(&S, idx[t], b); }
  const int kp = p + 1, kq = q + 1, want = !isNull(s_);
  const char *nm[] = {"ok", "idx", "counts", "beta_p", "beta_q", "beta_bc", "GinvL", "U", "DWD", "psi_cl", "psi_rb",
                      ""};
  SEXP ans = PROTECT(mkNamed(VECSXP, nm));
  int nprot = 1;
  SEXP cn = allocVector(INTSXP, 4);
  SET_VECTOR_ELT(ans, 2, cn);
  for (int a = 0; a < 4; a++) INTEGER(cn)[a] = cnt[a];
  SET_VECTOR_ELT(ans, 0, ScalarLogical(0));
  if (cnt[2] < kp || (q >= 0 && cnt[3] < kq)) { UNPROTECT(nprot); return ans; }

  double *work = (double *) R_alloc(RD_MAXK * RD_MAXK + RD_MAXK, sizeof(double));
  double *Gp = (double *) R_alloc(RD_MAXK * RD_MAXK, sizeof(double)), *Gq = (double *) R_alloc(RD_MAXK * RD_MAXK, sizeof(double));
  double *Up = (double *) R_alloc((size_t) RD_MAXK * m, sizeof(double)), *Uq = (double *) R_alloc((size_t) RD_MAXK * m, sizeof(double));
  rd_gram(&S, p, wh, Gp, Up);
  if (!lp_inv(kp, Gp, work)) { UNPROTECT(nprot); return ans; }
  if (q >= 0) {
    rd_gram(&S, q, wb, Gq, Uq);
    if (!lp_inv(kq, Gq, work)) { UNPROTECT(nprot); return ans; }
  }
  SEXP bp = PROTECT(allocMatrix(REALSXP, kp, m)), bq = PROTECT(allocMatrix(REALSXP, q >= 0 ? kq : 0, m)),
       bbc = PROTECT(allocMatrix(REALSXP, kp, m)), gl = PROTECT(allocVector(REALSXP, kp)),
       U = PROTECT(allocMatrix(REALSXP, kp, m)), DWD = PROTECT(allocMatrix(REALSXP, m, m));
  nprot += 6;
  rd_solve(kp, m, Gp, Up, REAL(bp));
  memcpy(REAL(U), Up, sizeof(double) * kp * m);
  /* l = sum w_h r_p u^(p+1), and D' W_h D */
  double l[RD_MAXK], r[RD_MAXK];
  for (int a = 0; a < kp; a++) l[a] = 0;
  double *dwd = REAL(DWD);
  for (int a = 0; a < m * m; a++) dwd[a] = 0;
  for (int t = 0; t < n; t++) {
    RD_INTERRUPT(t);
    int i = idx[t];
    double w = wh[t];
    if (w == 0) continue;
    double up = R_pow_di(d[i] / h, p + 1), pa = 1;
    for (int a = 0; a < kp; a++, pa *= d[i]) l[a] += w * pa * up;
    for (int j = 0; j < m; j++)
      for (int j2 = 0; j2 <= j; j2++) dwd[j + j2 * m] += w * S.D[i + (R_xlen_t) j * N] * S.D[i + (R_xlen_t) j2 * N];
  }
  for (int j = 0; j < m; j++) for (int j2 = 0; j2 < j; j2++) dwd[j2 + j * m] = dwd[j + j2 * m];
  rd_solve(kp, 1, Gp, l, REAL(gl));
  const double *GL = REAL(gl), hp1 = R_pow_di(h, p + 1);
  double *Bbc = REAL(bbc), *Bp = REAL(bp);
  if (q >= 0) {
    rd_solve(kq, m, Gq, Uq, REAL(bq));
    for (int j = 0; j < m; j++)
      for (int a = 0; a < kp; a++) Bbc[a + j * kp] = Bp[a + j * kp] - hp1 * GL[a] * REAL(bq)[p + 1 + j * kq];
  } else for (int a = 0; a < kp * m; a++) Bbc[a] = NA_REAL;
  SET_VECTOR_ELT(ans, 3, bp); SET_VECTOR_ELT(ans, 4, bq); SET_VECTOR_ELT(ans, 5, bbc);
  SET_VECTOR_ELT(ans, 6, gl); SET_VECTOR_ELT(ans, 7, U); SET_VECTOR_ELT(ans, 8, DWD);
  SEXP ix = PROTECT(allocVector(INTSXP, n));
  nprot++;
  for (int t = 0; t < n; t++) INTEGER(ix)[t] = idx[t] + 1;
  SET_VECTOR_ELT(ans, 1, ix);

  if (want) {
    const double *s = REAL(s_);
    double bps[RD_MAXK], bqs[RD_MAXK];          /* the fits of the combined outcome */
    for (int a = 0; a < kp; a++) { bps[a] = 0; for (int j = 0; j < m; j++) bps[a] += Bp[a + j * kp] * s[j]; }
    if (q >= 0) for (int a = 0; a < kq; a++) { bqs[a] = 0; for (int j = 0; j < m; j++) bqs[a] += REAL(bq)[a + j * kq] * s[j]; }
    double *ys = (double *) R_alloc(n > 0 ? n : 1, sizeof(double)), *eh = (double *) R_alloc(n > 0 ? n : 1, sizeof(double));
    double *eb = (double *) R_alloc(n > 0 ? n : 1, sizeof(double));
    for (int t = 0; t < n; t++) {
      RD_INTERRUPT(t);
      double v = 0;
      for (int j = 0; j < m; j++) v += S.D[idx[t] + (R_xlen_t) j * N] * s[j];
      ys[t] = v;
    }
    if (vce == 0) {
      /* neighbours within the window, its tie runs counted afresh */
      double *xw = (double *) R_alloc(n > 0 ? n : 1, sizeof(double));
      int *du = (int *) R_alloc(n > 0 ? n : 1, sizeof(int)), *di = (int *) R_alloc(n > 0 ? n : 1, sizeof(int));
      int *id = (int *) R_alloc(n > 0 ? n : 1, sizeof(int));
      for (int t = 0; t < n; t++) { xw[t] = d[idx[t]]; id[t] = t; }
      for (int st = 0, en; st < n; st = en) {
        for (en = st + 1; en < n && xw[en] == xw[st]; en++) ;
        for (int t = st; t < en; t++) { du[t] = en - st; di[t] = t - st + 1; }
      }
      lp_nnres(xw, ys, du, di, id, n, matches, sqrt(DBL_EPSILON), eh);
      memcpy(eb, eh, sizeof(double) * n);
    } else {
      double fh = vce == 2 ? sqrt((double) n / (n - kp)) : 1, fb = vce == 2 ? sqrt((double) n / (n - kq)) : 1;
      for (int t = 0; t < n; t++) {
        RD_INTERRUPT(t);
        int i = idx[t];
        r[0] = 1;
        int kk = q >= 0 ? kq : kp;
        for (int a = 1; a < kk; a++) r[a] = r[a - 1] * d[i];
        double fp = 0, fq = 0;
        for (int a = 0; a < kp; a++) fp += r[a] * bps[a];
        if (q >= 0) for (int a = 0; a < kq; a++) fq += r[a] * bqs[a];
        double e1 = ys[t] - fp, e2 = ys[t] - fq;
        if (vce >= 3) {
          double lh = wh[t] * rd_quad(kp, Gp, r), lb = q >= 0 ? wb[t] * rd_quad(kq, Gq, r) : 0;
          double ah = 1 - lh, ab = 1 - lb;
          ah = ah > 1e-8 ? ah : 1e-8; ab = ab > 1e-8 ? ab : 1e-8;
          e1 = vce == 3 ? e1 / sqrt(ah) : e1 / ah;
          e2 = vce == 3 ? e2 / sqrt(ab) : e2 / ab;
        }
        eh[t] = e1 * fh; eb[t] = e2 * fb;
      }
    }
    SEXP pc = PROTECT(allocVector(REALSXP, n)), pr = PROTECT(allocVector(REALSXP, q >= 0 ? n : 0));
    nprot += 2;
    double g[RD_MAXK], gq[RD_MAXK];
    for (int a = 0; a < kp; a++) g[a] = Gp[nu + a * kp];   /* the nu-th row of Gamma_p^{-1} */
    if (q >= 0) for (int a = 0; a < kq; a++) gq[a] = Gq[p + 1 + a * kq];
    double gl_nu = GL[nu];
    for (int t = 0; t < n; t++) {
      RD_INTERRUPT(t);
      int i = idx[t];
      double whi = wh[t], gr = 0;
      int kk = q >= 0 ? kq : kp;
      r[0] = 1;
      for (int a = 1; a < kk; a++) r[a] = r[a - 1] * d[i];
      for (int a = 0; a < kp; a++) gr += g[a] * r[a];
      REAL(pc)[t] = gr * whi * eh[t];
      if (q >= 0) {
        /* Q_i = w_h r_p - h^(p+1) l [Gamma_q^{-1} r_q]_{p+1} w_b: its nu-th
         * element after Gamma_p^{-1} is gr w_h - h^(p+1) GinvL_nu (gq' r) w_b */
        double wbi = wb[t], e = 0;
        for (int a = 0; a < kq; a++) e += gq[a] * r[a];
        REAL(pr)[t] = (gr * whi - hp1 * gl_nu * e * wbi) * eb[t];
      }
    }
    SET_VECTOR_ELT(ans, 9, pc); SET_VECTOR_ELT(ans, 10, pr);
  }
  SET_VECTOR_ELT(ans, 0, ScalarLogical(1));
  UNPROTECT(nprot);
  return ans;
}
