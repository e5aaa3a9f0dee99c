/* The "meat" of sandwich variances: sum over clusters g of s_g s_g', where
 * s_g = sum_{i in g} w_i e_i x_i. With no cluster codes every observation is
 * its own cluster (heteroskedasticity-robust). The score sums are built one
 * column per task (each column by one thread, summed in row order), so the
 * result does not depend on the thread count. */
#include "diffdiff.h"
#include <string.h>

/* M (k x k, upper triangle) = S' S for S (m x k, leading dimension ld), in
 * plain C with reference dsyrk's summation order (row index innermost and
 * ascending): usable inside a parallel region, where no BLAS is called. */
static void syrk_upper(int k, int m, const double *S, int ld, double *M) {
  for (int c = 0; c < k; c++)
    for (int a = 0; a <= c; a++) {
      const double *sa = S + (R_xlen_t) a * ld, *sc = S + (R_xlen_t) c * ld;
      double t = 0.0;
      for (int i = 0; i < m; i++) t += sa[i] * sc[i];
      M[a + (R_xlen_t) c * k] = t;
    }
}

SEXP C_cluster_meat(SEXP X_, SEXP e_, SEXP w_, SEXP cl_, SEXP G_, SEXP cidx_, SEXP cM_) {
  /* columns: the dense X, then (optional) cell-structured columns whose value
   * in row i is cM[cidx[i], j] (regressors constant within cells) */
  const char *fn = "C_cluster_meat";
  dd_chk_mat(X_, REALSXP, -1, -1, 0, fn, "X");
  dd_chk_mat(cM_, REALSXP, -1, -1, 1, fn, "cM");
  const int n = nrows(X_), kx = ncols(X_);
  const int nc = isNull(cM_) ? 0 : nrows(cM_), kc = isNull(cM_) ? 0 : ncols(cM_), k = kx + kc;
  const int hetero = isNull(cl_);
  dd_chk_vec(e_, REALSXP, n, 0, fn, "e");
  dd_chk_vec(w_, REALSXP, n, 1, fn, "w");
  const int G = hetero ? n : dd_chk_int(G_, 1, n > 0 ? n : 1, fn, "G");
  if (!hetero) dd_chk_codes(cl_, n, G, fn, "cl");
  if (kc) dd_chk_codes(cidx_, n, nc, fn, "cidx");
  if (XLENGTH(e_) != n || (!isNull(w_) && XLENGTH(w_) != n) || (!hetero && XLENGTH(cl_) != n) ||
      (kc && XLENGTH(cidx_) != n))
    error("internal error in vcov.c: length mismatch; please report");
  const double *X = REAL(X_), *e = REAL(e_), *w = isNull(w_) ? NULL : REAL(w_);
  const double *cM = kc ? REAL(cM_) : NULL;
  const int *cl = hetero ? NULL : INTEGER(cl_), *cidx = kc ? INTEGER(cidx_) : NULL;
#define WE(i) (w ? w[i] * e[i] : e[i])
  double *S = (double *) R_alloc((size_t) G * k, sizeof(double));
  const int nth = dd_nthreads(k, (double) n * k);
  dd_chunks ch_j;
  dd_chunks_init(&ch_j, k, nth);
  while (dd_chunks_next(&ch_j)) {
  const int j_lo = ch_j.lo, j_hi = ch_j.hi;   /* locals: the compiler keeps them out of memory */
#ifdef _OPENMP
#pragma omp parallel for num_threads(nth) schedule(static, 1)
#endif
  for (int j = j_lo; j < j_hi; j++) {
    double *Sj = S + (R_xlen_t) j * G;
    if (j < kx) {
      const double *xj = X + (R_xlen_t) j * n;
      if (hetero) {
        for (int i = 0; i < n; i++) Sj[i] = WE(i) * xj[i];
      } else {
        memset(Sj, 0, sizeof(double) * G);
        for (int i = 0; i < n; i++) Sj[cl[i]] += WE(i) * xj[i];
      }
    } else {
      const double *mj = cM + (R_xlen_t) (j - kx) * nc;
      if (hetero) {
        for (int i = 0; i < n; i++) Sj[i] = WE(i) * mj[cidx[i]];
      } else {
        memset(Sj, 0, sizeof(double) * G);
        for (int i = 0; i < n; i++) Sj[cl[i]] += WE(i) * mj[cidx[i]];
      }
    }
  }
  }
  SEXP out = PROTECT(allocMatrix(REALSXP, k, k));
  double *M = REAL(out), one = 1.0, zero = 0.0;
  /* M = S'S: for large problems in 4 blocks of rows of S (a fixed split, so
   * the result does not depend on the number of threads), the blocks in
   * parallel (reference BLAS is serial) */
  const int nb = ((double) G * k * k > 1e7 && G >= 64) ? 4 : 1;
  const int nthb = dd_nthreads(nb, (double) G * k * k);
  if (nb <= 1) {
    F77_CALL(dsyrk)("U", "T", &k, &G, &one, S, &G, &zero, M, &k FCONE FCONE);
  } else {
    double *Mb = (double *) R_alloc((size_t) nb * k * k, sizeof(double));
#ifdef _OPENMP
#pragma omp parallel for num_threads(nthb) schedule(static, 1)
#endif
    for (int b = 0; b < nb; b++) {
      int lo = (int) ((double) G * b / nb), hi = (int) ((double) G * (b + 1) / nb), m = hi - lo;
      syrk_upper(k, m, S + lo, G, Mb + (size_t) b * k * k);
    }
    for (size_t q = 0; q < (size_t) k * k; q++) {
      double acc = 0.0;
      for (int b = 0; b < nb; b++) acc += Mb[(size_t) b * k * k + q];
      M[q] = acc;
    }
  }
  for (int j = 0; j < k; j++)
    for (int i = j + 1; i < k; i++) M[i + (R_xlen_t) j * k] = M[j + (R_xlen_t) i * k];
  UNPROTECT(1);
  return out;
}
