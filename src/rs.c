/* did_rs's Fisher randomisation test: the cohort moments one permutation
 * needs, in two passes over the units (means, then centred products), so
 * that a permutation allocates only its small results. */
#include "diffdiff.h"

/* th, a0: n x G projections of every unit's outcomes on each cohort's row
 * of A_theta and A_0; k: the permuted cohort (0-based) of each unit; Y: n x
 * T outcomes, of which the first m periods enter the refinement. Returns,
 * per cohort (divisor N_k - 1 for the covariances): count n, means mt, m0
 * of the unit's projections on its own cohort's rows, covariances vtt, v00,
 * v0t, and for the refinement S (m x m x G: covariance of the first m
 * periods) and c (m x G: their covariance with the A_theta projection). */
SEXP C_rs_perm(SEXP th_, SEXP a0_, SEXP k_, SEXP Y_, SEXP m_) {
  const char *fn = "C_rs_perm";
  dd_chk_mat(th_, REALSXP, -1, -1, 0, fn, "th");
  const int n = nrows(th_), G = ncols(th_);
  dd_chk_mat(a0_, REALSXP, n, G, 0, fn, "a0");
  dd_chk_codes(k_, n, G, fn, "k");
  dd_chk_mat(Y_, REALSXP, n, -1, 0, fn, "Y");
  const int T = ncols(Y_);
  const int m = dd_chk_int(m_, 0, T, fn, "m");
  const double *th = REAL(th_), *a0 = REAL(a0_), *Y = REAL(Y_);
  const int *k = INTEGER(k_);
  SEXP cnt_ = PROTECT(allocVector(INTSXP, G)), mt_ = PROTECT(allocVector(REALSXP, G)),
       m0_ = PROTECT(allocVector(REALSXP, G)), vtt_ = PROTECT(allocVector(REALSXP, G)),
       v00_ = PROTECT(allocVector(REALSXP, G)), v0t_ = PROTECT(allocVector(REALSXP, G)),
       S_ = PROTECT(alloc3DArray(REALSXP, m > 0 ? m : 1, m > 0 ? m : 1, G)),
       c_ = PROTECT(allocMatrix(REALSXP, m > 0 ? m : 1, G));
  int *cnt = INTEGER(cnt_);
  double *mt = REAL(mt_), *m0 = REAL(m0_), *vtt = REAL(vtt_), *v00 = REAL(v00_), *v0t = REAL(v0t_),
         *S = REAL(S_), *c = REAL(c_);
  const int mm = m > 0 ? m : 1;
  memset(cnt, 0, sizeof(int) * G);
  memset(mt, 0, sizeof(double) * G); memset(m0, 0, sizeof(double) * G);
  memset(vtt, 0, sizeof(double) * G); memset(v00, 0, sizeof(double) * G); memset(v0t, 0, sizeof(double) * G);
  memset(S, 0, sizeof(double) * (size_t) mm * mm * G); memset(c, 0, sizeof(double) * (size_t) mm * G);
  double *my = (double *) R_alloc((size_t) mm * G, sizeof(double));
  memset(my, 0, sizeof(double) * (size_t) mm * G);
  for (int i = 0; i < n; i++) {
    const int g = k[i];
    cnt[g]++;
    mt[g] += th[i + (R_xlen_t) n * g];
    m0[g] += a0[i + (R_xlen_t) n * g];
    for (int a = 0; a < m; a++) my[a + (R_xlen_t) mm * g] += Y[i + (R_xlen_t) n * a];
  }
  for (int g = 0; g < G; g++) {
    if (cnt[g] == 0) continue;
    mt[g] /= cnt[g]; m0[g] /= cnt[g];
    for (int a = 0; a < m; a++) my[a + (R_xlen_t) mm * g] /= cnt[g];
  }
  double *d = (double *) R_alloc(mm, sizeof(double));
  for (int i = 0; i < n; i++) {
    const int g = k[i];
    const double dt = th[i + (R_xlen_t) n * g] - mt[g], d0 = a0[i + (R_xlen_t) n * g] - m0[g];
    vtt[g] += dt * dt; v00[g] += d0 * d0; v0t[g] += d0 * dt;
    if (m > 0) {
      double *Sg = S + (R_xlen_t) mm * mm * g, *cg = c + (R_xlen_t) mm * g;
      for (int a = 0; a < m; a++) d[a] = Y[i + (R_xlen_t) n * a] - my[a + (R_xlen_t) mm * g];
      for (int b = 0; b < m; b++) {
        cg[b] += d[b] * dt;
        for (int a = 0; a <= b; a++) Sg[a + (R_xlen_t) mm * b] += d[a] * d[b];
      }
    }
  }
  for (int g = 0; g < G; g++) {
    const double den = cnt[g] > 1 ? cnt[g] - 1.0 : NA_REAL;
    vtt[g] /= den; v00[g] /= den; v0t[g] /= den;
    double *Sg = S + (R_xlen_t) mm * mm * g, *cg = c + (R_xlen_t) mm * g;
    for (int b = 0; b < m; b++) {
      cg[b] /= den;
      for (int a = 0; a <= b; a++) {
        Sg[a + (R_xlen_t) mm * b] /= den;
        Sg[b + (R_xlen_t) mm * a] = Sg[a + (R_xlen_t) mm * b];
      }
    }
  }
  const char *nm[8] = {"n", "mt", "m0", "vtt", "v00", "v0t", "S", "c"};
  SEXP v[8] = {cnt_, mt_, m0_, vtt_, v00_, v0t_, S_, c_};
  SEXP out = dd_named_list(8, nm, v);
  UNPROTECT(8);
  return out;
}

/* A random permutation of the cohort codes `base` (0-based), drawn from R's
 * generator exactly as sample.int(n) draws its permutation (R_unif_index,
 * swap-with-last), so that set.seed() reproduces it: out[i] = base[perm[i]].
 * `out` and `work` (integer, length n) are buffers that dd_rs_fisher()
 * allocates once for all permutations and nothing else references: they
 * are filled in place, so that a permutation allocates nothing (the test's
 * memory does not grow with the number of permutations). */
SEXP C_rs_shuffle(SEXP base_, SEXP out_, SEXP work_) {
  const char *fn = "C_rs_shuffle";
  dd_chk_type(base_, INTSXP, 0, fn, "base");
  const int n = LENGTH(base_);
  dd_chk_vec(out_, INTSXP, n, 0, fn, "out");
  dd_chk_vec(work_, INTSXP, n, 0, fn, "work");
  const int *base = INTEGER(base_);
  int *out = INTEGER(out_), *x = INTEGER(work_);
  for (int i = 0; i < n; i++) x[i] = i;
  GetRNGstate();
  int m = n;
  for (int i = 0; i < n; i++) {
    const int j = (int) R_unif_index((double) m);
    out[i] = base[x[j]];
    x[j] = x[--m];
  }
  PutRNGstate();
  return R_NilValue;
}
