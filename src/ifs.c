/* Block-sparse influence functions. An estimator with K estimates on N units
 * stores the N x K matrix of influence functions by blocks of rows (units):
 * block b holds rows start[b] .. start[b+1]-1 and the columns cols[[b]]
 * (0-based, increasing) as a dense n_b x |cols[[b]]| matrix vals[[b]];
 * every other entry is zero. Callaway-Sant'Anna cells are zero outside their
 * cohorts, so a block per cohort stores only the non-zero part (a dense
 * matrix is one block with all columns). R list: n, K, start, cols, vals,
 * rows. rows is NULL (stored row i is row i: blocks are contiguous row
 * ranges) or a permutation of 0..N-1: stored row i (block-major) is row
 * rows[i] of the N x K matrix. The repeated cross-section engine uses it to
 * group rows into blocks by cohort and period while the rows keep their
 * order: every result is that of the N x K matrix in its row order, and the
 * bootstrap gives row r the r-th weight of each stream whatever the block
 * it is stored in.
 *
 * Operations: column sums of squares, cross-products of selected columns,
 * products with a K x m matrix, cluster sums, densification, and the
 * multiplier bootstrap. Each result is computed in a fixed order, so it does
 * not depend on the number of threads. */
#include "diffdiff.h"
#include <math.h>
#include <string.h>

typedef struct {
  int n, K, nb;
  const int *start;
  const int **cols;
  int *ncol;
  const double **vals;
  const int *rows;    /* NULL: stored row i is row i */
} dd_ifs;

#define IFS_ROW(f, i) ((f)->rows ? (f)->rows[i] : (i))

static void ifs_get(SEXP s, dd_ifs *f) {
  const char *fn = "ifs.c";
  dd_chk_list(s, -1, fn, "s");
  if (LENGTH(s) != 5 && LENGTH(s) != 6) error("internal error in ifs.c: malformed influence functions; please report");
  SEXP start = VECTOR_ELT(s, 2), cols = VECTOR_ELT(s, 3), vals = VECTOR_ELT(s, 4);
  f->n = dd_chk_int(VECTOR_ELT(s, 0), 0, DD_INT_MAX, fn, "s$n");
  f->K = dd_chk_int(VECTOR_ELT(s, 1), 0, DD_INT_MAX, fn, "s$K");
  dd_chk_list(cols, -1, fn, "s$cols");
  dd_chk_list(vals, LENGTH(cols), fn, "s$vals");
  f->nb = LENGTH(cols);
  dd_chk_vec(start, INTSXP, (R_xlen_t) f->nb + 1, 0, fn, "s$start");
  f->start = INTEGER(start);
  if (f->start[0] != 0 || f->start[f->nb] != f->n)
    error("internal error in ifs.c: malformed influence functions; please report");
  for (int b = 0; b < f->nb; b++)
    if (f->start[b + 1] < f->start[b]) error("internal error in ifs.c: malformed influence functions; please report");
  for (int b = 0; b < f->nb; b++) {
    dd_chk_type(VECTOR_ELT(cols, b), INTSXP, 0, fn, "s$cols[[b]]");
    dd_chk_type(VECTOR_ELT(vals, b), REALSXP, 0, fn, "s$vals[[b]]");
  }
  f->cols = (const int **) R_alloc(f->nb > 0 ? f->nb : 1, sizeof(int *));
  f->ncol = (int *) R_alloc(f->nb > 0 ? f->nb : 1, sizeof(int));
  f->vals = (const double **) R_alloc(f->nb > 0 ? f->nb : 1, sizeof(double *));
  for (int b = 0; b < f->nb; b++) {
    SEXP cb = VECTOR_ELT(cols, b), vb = VECTOR_ELT(vals, b);
    f->cols[b] = INTEGER(cb);
    f->ncol[b] = LENGTH(cb);
    f->vals[b] = REAL(vb);
    if (XLENGTH(vb) != (R_xlen_t) (f->start[b + 1] - f->start[b]) * f->ncol[b])
      error("internal error in ifs.c: block %d has the wrong size; please report", b + 1);
    for (int j = 0; j < f->ncol[b]; j++)
      if (f->cols[b][j] < 0 || f->cols[b][j] >= f->K || (j > 0 && f->cols[b][j] <= f->cols[b][j - 1]))
        error("internal error in ifs.c: column out of range or not increasing; please report");
  }
  f->rows = NULL;
  if (LENGTH(s) == 6 && !isNull(VECTOR_ELT(s, 5))) {
    SEXP rows = VECTOR_ELT(s, 5);
    dd_chk_vec(rows, INTSXP, f->n, 0, fn, "s$rows");
    const int *r = INTEGER(rows);
    char *seen = (char *) R_alloc(f->n > 0 ? f->n : 1, 1);
    memset(seen, 0, f->n > 0 ? f->n : 1);
    for (int i = 0; i < f->n; i++) {
      if (r[i] < 0 || r[i] >= f->n || seen[r[i]])
        error("internal error in ifs.c: `rows` is not a permutation; please report");
      seen[r[i]] = 1;
    }
    f->rows = r;
  }
}

/* column sums of squares (NA when a column has NA) */
SEXP C_ifs_colss(SEXP s) {
  dd_ifs f;
  ifs_get(s, &f);
  SEXP out = PROTECT(allocVector(REALSXP, f.K));
  double *o = REAL(out);
  memset(o, 0, sizeof(double) * f.K);
  for (int b = 0; b < f.nb; b++) {
    const int nr = f.start[b + 1] - f.start[b];
    for (int j = 0; j < f.ncol[b]; j++) {
      const double *x = f.vals[b] + (R_xlen_t) j * nr;
      double t = 0.0;
      for (int i = 0; i < nr; i++) t += x[i] * x[i];
      o[f.cols[b][j]] += t;
    }
  }
  UNPROTECT(1);
  return out;
}

/* position of each column in sel (0-based), -1 when not selected */
static int *ifs_selmap(const dd_ifs *f, SEXP sel_) {
  dd_chk_type(sel_, INTSXP, 0, "ifs.c", "sel");
  const int m = LENGTH(sel_), *sel = INTEGER(sel_);
  int *map = (int *) R_alloc(f->K > 0 ? f->K : 1, sizeof(int));
  for (int j = 0; j < f->K; j++) map[j] = -1;
  for (int p = 0; p < m; p++) {
    if (sel[p] < 0 || sel[p] >= f->K) error("internal error in ifs.c: selected column out of range; please report");
    if (map[sel[p]] >= 0) error("internal error in ifs.c: a column selected twice; please report");
    map[sel[p]] = p;
  }
  return map;
}

/* Psi[, sel]' Psi[, sel] (m x m) */
SEXP C_ifs_crossprod(SEXP s, SEXP sel_) {
  dd_ifs f;
  ifs_get(s, &f);
  const int m = LENGTH(sel_);
  int *map = ifs_selmap(&f, sel_);
  SEXP out = PROTECT(allocMatrix(REALSXP, m, m));
  double *V = REAL(out);
  memset(V, 0, sizeof(double) * (size_t) m * m);
  int *jj = (int *) R_alloc(m > 0 ? m : 1, sizeof(int));
  for (int b = 0; b < f.nb; b++) {
    const int nr = f.start[b + 1] - f.start[b];
    int q = 0;
    for (int j = 0; j < f.ncol[b]; j++) if (map[f.cols[b][j]] >= 0) jj[q++] = j;
    for (int u = 0; u < q; u++) {
      const double *xu = f.vals[b] + (R_xlen_t) jj[u] * nr;
      const int pu = map[f.cols[b][jj[u]]];
      int v = 0;
      /* four dot products at a time (independent accumulators, each summed
       * over i in order: the same numbers as the single loop) */
      for (; v + 3 <= u; v += 4) {
        const double *x0 = f.vals[b] + (R_xlen_t) jj[v] * nr, *x1 = f.vals[b] + (R_xlen_t) jj[v + 1] * nr,
                     *x2 = f.vals[b] + (R_xlen_t) jj[v + 2] * nr, *x3 = f.vals[b] + (R_xlen_t) jj[v + 3] * nr;
        double t0 = 0.0, t1 = 0.0, t2 = 0.0, t3 = 0.0;
        for (int i = 0; i < nr; i++) {
          const double a = xu[i];
          t0 += a * x0[i]; t1 += a * x1[i]; t2 += a * x2[i]; t3 += a * x3[i];
        }
        const double t[4] = {t0, t1, t2, t3};
        for (int j = 0; j < 4; j++) {
          const int pv = map[f.cols[b][jj[v + j]]];
          V[pu + (R_xlen_t) pv * m] += t[j];
          if (pu != pv) V[pv + (R_xlen_t) pu * m] += t[j];
        }
      }
      for (; v <= u; v++) {
        const double *xv = f.vals[b] + (R_xlen_t) jj[v] * nr;
        const int pv = map[f.cols[b][jj[v]]];
        double t = 0.0;
        for (int i = 0; i < nr; i++) t += xu[i] * xv[i];
        V[pu + (R_xlen_t) pv * m] += t;
        if (pu != pv) V[pv + (R_xlen_t) pu * m] += t;
      }
    }
  }
  UNPROTECT(1);
  return out;
}

/* Psi A for A (K x m): dense N x m, zero entries of A skipped; one output
 * column per task */
SEXP C_ifs_combine(SEXP s, SEXP A_) {
  dd_ifs f;
  ifs_get(s, &f);
  dd_chk_mat(A_, REALSXP, f.K, -1, 0, "C_ifs_combine", "A");
  const int m = ncols(A_);
  const double *A = REAL(A_);
  SEXP out = PROTECT(allocMatrix(REALSXP, f.n, m));
  double *O = REAL(out);
  memset(O, 0, sizeof(double) * (size_t) f.n * m);
  const int nth = dd_nthreads(m, (double) f.n * f.K);
  dd_chunks ch_l;
  dd_chunks_init(&ch_l, m, nth);
  while (dd_chunks_next(&ch_l)) {
  const int l_lo = ch_l.lo, l_hi = ch_l.hi;   /* locals: the compiler keeps them out of memory */
#ifdef _OPENMP
#pragma omp parallel for num_threads(nth) schedule(dynamic, 1)
#endif
  for (int l = l_lo; l < l_hi; l++) {
    double *ol = O + (R_xlen_t) l * f.n;
    for (int b = 0; b < f.nb; b++) {
      const int nr = f.start[b + 1] - f.start[b];
      double *ob = ol + f.start[b];
      const int *rb = f.rows ? f.rows + f.start[b] : NULL;
      for (int j = 0; j < f.ncol[b]; j++) {
        const double a = A[f.cols[b][j] + (R_xlen_t) l * f.K];
        if (a == 0.0) continue;
        const double *x = f.vals[b] + (R_xlen_t) j * nr;
        if (rb) for (int i = 0; i < nr; i++) ol[rb[i]] += a * x[i];
        else for (int i = 0; i < nr; i++) ob[i] += a * x[i];
      }
    }
  }
  }
  UNPROTECT(1);
  return out;
}

/* (Psi A)' (Psi A) for A (K x m) without forming Psi A (n x m): block by
 * block, T_b = Psi_b A[cols_b, ] then T_b' T_b. diag_only: the m column
 * sums of squares only (one output column per task). */
static void comb_block(const dd_ifs *f, int b, const double *A, int l, double *t) {
  const int nr = f->start[b + 1] - f->start[b];
  memset(t, 0, sizeof(double) * nr);
  for (int j = 0; j < f->ncol[b]; j++) {
    const double a = A[f->cols[b][j] + (R_xlen_t) l * f->K];
    if (a == 0.0) continue;
    const double *x = f->vals[b] + (R_xlen_t) j * nr;
    for (int i = 0; i < nr; i++) t[i] += a * x[i];
  }
}

SEXP C_ifs_comb_cross(SEXP s, SEXP A_, SEXP diag_) {
  dd_ifs f;
  ifs_get(s, &f);
  dd_chk_mat(A_, REALSXP, f.K, -1, 0, "C_ifs_comb_cross", "A");
  const int m = ncols(A_), diag = dd_chk_int(diag_, 0, 1, "C_ifs_comb_cross", "diag");
  if (nrows(A_) != f.K) error("internal error in ifs.c: combination matrix has the wrong size; please report");
  const double *A = REAL(A_);
  int nrmax = 1;
  for (int b = 0; b < f.nb; b++) if (f.start[b + 1] - f.start[b] > nrmax) nrmax = f.start[b + 1] - f.start[b];
  SEXP out = PROTECT(diag ? allocVector(REALSXP, m) : allocMatrix(REALSXP, m, m));
  double *O = REAL(out);
  memset(O, 0, sizeof(double) * (size_t) (diag ? m : m * m));
  if (diag) {
    const int nth = dd_nthreads(m, (double) f.n * f.K);
    double *tmp = (double *) R_alloc((size_t) nrmax * nth, sizeof(double));
    dd_chunks ch_l;
    dd_chunks_init(&ch_l, m, nth);
    while (dd_chunks_next(&ch_l)) {
    const int l_lo = ch_l.lo, l_hi = ch_l.hi;   /* locals: the compiler keeps them out of memory */
#ifdef _OPENMP
#pragma omp parallel for num_threads(nth) schedule(dynamic, 1)
#endif
    for (int l = l_lo; l < l_hi; l++) {
      double *t = tmp + (size_t) nrmax * dd_tid(), ss = 0.0;
      for (int b = 0; b < f.nb; b++) {
        const int nr = f.start[b + 1] - f.start[b];
        comb_block(&f, b, A, l, t);
        double sb = 0.0;
        for (int i = 0; i < nr; i++) sb += t[i] * t[i];
        ss += sb;
      }
      O[l] = ss;
    }
    }
  } else {
    /* rows in chunks of CH that stay in cache: T_c = Psi_c A (CH x m), then
     * the m(m+1)/2 dot products carried over the chunks in acc; each dot
     * is still summed over the block's rows in order from 0.0 (and each
     * T entry over the columns in order), so the numbers are those of the
     * one-pass loop over whole blocks */
    enum { CH = 256 };
    double *T = (double *) R_alloc((size_t) CH * (m > 0 ? m : 1), sizeof(double));
    double *acc = (double *) R_alloc((size_t) (m > 0 ? m : 1) * (m > 0 ? m : 1), sizeof(double));
    for (int b = 0; b < f.nb; b++) {
      const int nr = f.start[b + 1] - f.start[b];
      memset(acc, 0, sizeof(double) * (size_t) m * m);
      for (int r0 = 0; r0 < nr; r0 += CH) {
        const int nc = nr - r0 < CH ? nr - r0 : CH;
        for (int l = 0; l < m; l++) {
          double *t = T + (size_t) l * nc;
          memset(t, 0, sizeof(double) * nc);
          for (int j = 0; j < f.ncol[b]; j++) {
            const double a = A[f.cols[b][j] + (R_xlen_t) l * f.K];
            if (a == 0.0) continue;
            const double *x = f.vals[b] + (R_xlen_t) j * nr + r0;
            for (int i = 0; i < nc; i++) t[i] += a * x[i];
          }
        }
        for (int l = 0; l < m; l++) {
          const double *tl = T + (size_t) l * nc;
          double *al = acc + (size_t) l * m;
          int q = 0;
          /* four dot products at a time (independent accumulators) */
          for (; q + 3 <= l; q += 4) {
            const double *t0 = T + (size_t) q * nc, *t1 = t0 + nc, *t2 = t1 + nc, *t3 = t2 + nc;
            double v0 = al[q], v1 = al[q + 1], v2 = al[q + 2], v3 = al[q + 3];
            for (int i = 0; i < nc; i++) {
              const double a = tl[i];
              v0 += a * t0[i]; v1 += a * t1[i]; v2 += a * t2[i]; v3 += a * t3[i];
            }
            al[q] = v0; al[q + 1] = v1; al[q + 2] = v2; al[q + 3] = v3;
          }
          for (; q <= l; q++) {
            const double *tq = T + (size_t) q * nc;
            double v = al[q];
            for (int i = 0; i < nc; i++) v += tl[i] * tq[i];
            al[q] = v;
          }
        }
      }
      for (int l = 0; l < m; l++)
        for (int q = 0; q <= l; q++) {
          const double v = acc[(size_t) l * m + q];
          O[l + (R_xlen_t) q * m] += v;
          if (q != l) O[q + (R_xlen_t) l * m] += v;
        }
    }
  }
  UNPROTECT(1);
  return out;
}

/* cluster sums: G x K dense, cl 0-based codes of the N rows */
SEXP C_ifs_rowsum(SEXP s, SEXP cl_, SEXP G_) {
  dd_ifs f;
  ifs_get(s, &f);
  const int G = dd_chk_int(G_, 0, f.n > 0 ? f.n : 1, "C_ifs_rowsum", "G");
  dd_chk_codes(cl_, f.n, G, "C_ifs_rowsum", "cl");
  const int *cl = INTEGER(cl_);
  SEXP out = PROTECT(allocMatrix(REALSXP, G, f.K));
  double *O = REAL(out);
  memset(O, 0, sizeof(double) * (size_t) G * f.K);
  for (int b = 0; b < f.nb; b++) {
    const int nr = f.start[b + 1] - f.start[b];
    const int *cb = cl + f.start[b], *rb = f.rows ? f.rows + f.start[b] : NULL;
    for (int j = 0; j < f.ncol[b]; j++) {
      const double *x = f.vals[b] + (R_xlen_t) j * nr;
      double *oj = O + (R_xlen_t) f.cols[b][j] * G;
      if (rb) for (int i = 0; i < nr; i++) oj[cl[rb[i]]] += x[i];
      else for (int i = 0; i < nr; i++) oj[cb[i]] += x[i];
    }
  }
  UNPROTECT(1);
  return out;
}

/* the dense N x K matrix */
SEXP C_ifs_dense(SEXP s) {
  dd_ifs f;
  ifs_get(s, &f);
  SEXP out = PROTECT(allocMatrix(REALSXP, f.n, f.K));
  double *O = REAL(out);
  memset(O, 0, sizeof(double) * (size_t) f.n * f.K);
  for (int b = 0; b < f.nb; b++) {
    const int nr = f.start[b + 1] - f.start[b];
    for (int j = 0; j < f.ncol[b]; j++) {
      double *oj = O + (R_xlen_t) f.cols[b][j] * f.n;
      const double *x = f.vals[b] + (R_xlen_t) j * nr;
      if (f.rows) for (int i = 0; i < nr; i++) oj[f.rows[f.start[b] + i]] = x[i];
      else memcpy(oj + f.start[b], x, sizeof(double) * nr);
    }
  }
  UNPROTECT(1);
  return out;
}

/* ---- multiplier bootstrap ------------------------------------------------ */

#define BOOT_NB 32   /* replicates per task */

/* acc[p][0..nb) += sum_u x_u[p] v_u[0..nb) for four rows u at once: one
 * pass over the accumulators per four rows. On x86-64 Linux with gcc an
 * AVX2 clone is chosen at load time; AVX2 alone does not fuse multiply and
 * add, so both clones round every operation the same way. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
__attribute__((target_clones("avx2", "default")))
#endif
static void boot_rows4(int q, const int *pp, const double *const *xs, int r, int nr, const double *v,
                       double *acc) {
  /* xs[j]: column j of the block (nr rows); rows r..r+3; v: 4 x BOOT_NB */
  const double *v0 = v, *v1 = v + BOOT_NB, *v2 = v + 2 * BOOT_NB, *v3 = v + 3 * BOOT_NB;
  (void) nr;
  for (int j = 0; j < q; j++) {
    const double *x = xs[j] + r;
    const double x0 = x[0], x1 = x[1], x2 = x[2], x3 = x[3];
    double *restrict a = acc + (size_t) pp[j] * BOOT_NB;
#ifdef _OPENMP
#pragma omp simd
#endif
    for (int b = 0; b < BOOT_NB; b++) a[b] += (x0 * v0[b] + x1 * v1[b]) + (x2 * v2[b] + x3 * v3[b]);
  }
}

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
__attribute__((target_clones("avx2", "default")))
#endif
static void boot_row1(int q, const int *pp, const double *const *xs, int r, const double *v, double *acc) {
  for (int j = 0; j < q; j++) {
    const double x0 = xs[j][r];
    double *restrict a = acc + (size_t) pp[j] * BOOT_NB;
#ifdef _OPENMP
#pragma omp simd
#endif
    for (int b = 0; b < BOOT_NB; b++) a[b] += x0 * v[b];
  }
}

/* the weights of row r for BOOT_NB replicate streams (unused lanes: 0), the
 * same values as dd_wstream_next gives (the shared draws of diffdiff.h) */
static inline void boot_weights_row(dd_wstream *ws, int nb, int type, uint64_t *bits, long r, double *v) {
  if (type == 1) {                 /* Rademacher: 64 signs per draw */
    const int sh = (int) (r & 63);
    if (sh == 0) for (int b = 0; b < nb; b++) bits[b] = dd_rng_step(&ws[b].g);
    for (int b = 0; b < nb; b++) v[b] = dd_rademacher_bit(bits[b], sh);
  } else if (type == 2) {          /* Mammen */
    for (int b = 0; b < nb; b++) v[b] = dd_mammen_draw(dd_rng_step(&ws[b].g));
  } else {                         /* Webb */
    for (int b = 0; b < nb; b++) v[b] = dd_webb_draw(dd_rng_step(&ws[b].g));
  }
  for (int b = nb; b < BOOT_NB; b++) v[b] = 0.0;
}

/* the same weights for row r directly, for rows visited out of order (a
 * permuted layout): splitmix64's k-th output is mix(s0 + k gamma), so the
 * weight of row r is found without the r - 1 before it. g0: the streams'
 * initial states; *word caches the 64-sign draw of the last Rademacher row. */
static inline void boot_weights_at(const dd_rng *g0, int nb, int type, uint64_t *bits, long *word, long r,
                                   double *v) {
  if (type == 1) {
    const long wd = r >> 6;
    const int sh = (int) (r & 63);
    if (wd != *word) {
      for (int b = 0; b < nb; b++) bits[b] = dd_rng_at(g0 + b, (uint64_t) wd + 1);
      *word = wd;
    }
    for (int b = 0; b < nb; b++) v[b] = dd_rademacher_bit(bits[b], sh);
  } else if (type == 2) {
    for (int b = 0; b < nb; b++) v[b] = dd_mammen_draw(dd_rng_at(g0 + b, (uint64_t) r + 1));
  } else {
    for (int b = 0; b < nb; b++) v[b] = dd_webb_draw(dd_rng_at(g0 + b, (uint64_t) r + 1));
  }
  for (int b = nb; b < BOOT_NB; b++) v[b] = 0.0;
}

/* Multiplier bootstrap of the selected columns (0-based sel): replicate b
 * draws one weight per row (unit, or cluster when the rows are cluster
 * sums) from its own stream (seed, b) and returns
 *   draws[b, p] = (1 / sqrt(N)) sum_r v_r Psi[r, sel[p]]   (did's scale).
 * Rows are visited in order, so row r always gets the r-th weight of each
 * stream; zero blocks are skipped. With a permuted layout (rows) the stored
 * rows are visited block by block and row r's weights are computed directly
 * (boot_weights_at): the same weights. Each task computes BOOT_NB replicates.
 *
 * With row groups grp (0-based codes 0..H-1, or NULL) the result is the list
 * (draws, ss) where ss[b, p] is the sum of squares of the multiplied
 * influence functions recentred within each group,
 *   ss[b, p] = sum_r v_r^2 Psi[r, p]^2 - sum_h (sum_{r in h} v_r Psi[r, p])^2 / n_h,
 * the squared standard error (times N^2) that replicate b would report: the
 * studentisation of the wild bootstrap-t. The multipliers are the same as
 * without groups; the draws differ from them by rounding only (the group
 * sums are added up at the end). With seed (two numbers, see dd_seed_arg)
 * and first, the rows are replicates first, ..., first + B - 1 of that seed:
 * batches of calls reproduce one call.
 *
 * rowinfo: NULL, or c(offset, N) for a chunk of the rows of a larger
 * matrix (the database back end streams units in chunks): row i of s is
 * row offset + i of the N rows, gets that row's weights, and the scale is
 * 1 / sqrt(N), so the chunks' results add up to the whole matrix's draws
 * (up to the order of the additions). Not with groups or a permuted layout. */
SEXP C_ifs_boot(SEXP s, SEXP sel_, SEXP B_, SEXP type_, SEXP grp_, SEXP H_, SEXP seed_, SEXP first_,
                SEXP rowinfo_) {
  dd_ifs f;
  ifs_get(s, &f);
  long off = 0;
  double nscale = (double) f.n;
  if (!isNull(rowinfo_)) {
    dd_chk_vec(rowinfo_, REALSXP, 2, 0, "C_ifs_boot", "rowinfo");
    const double o = REAL(rowinfo_)[0], N = REAL(rowinfo_)[1];
    if (!(o >= 0 && o <= 9e15 && o == floor(o) && N >= o + f.n && N <= 9e15) || !isNull(grp_) || f.rows)
      error("internal error in C_ifs_boot: bad `rowinfo`; please report");
    off = (long) o;
    nscale = N;
  }
  int *map = ifs_selmap(&f, sel_);
  const int m = LENGTH(sel_), B = dd_chk_int(B_, 0, DD_INT_MAX, "C_ifs_boot", "B");
  const int type = dd_chk_int(type_, 1, 3, "C_ifs_boot", "type");
  const int first = dd_chk_int(first_, 0, DD_INT_MAX - B, "C_ifs_boot", "first");
  if ((double) B * m > 2e9) error("internal error in C_ifs_boot: `B` x columns too large; please report");
  const int grouped = !isNull(grp_);
  int H = 1;
  const int *grp = NULL;
  double *inv_nh = NULL, *colss = NULL;
  if (grouped) {
    H = dd_chk_int(H_, 1, f.n > 0 ? f.n : 1, "C_ifs_boot", "H");
    dd_chk_codes(grp_, f.n, H, "C_ifs_boot", "grp");
    grp = INTEGER(grp_);
    if ((double) H * m * BOOT_NB > 5e8) error("internal error in C_ifs_boot: groups x columns too large; please report");
    inv_nh = (double *) R_alloc(H, sizeof(double));
    for (int h = 0; h < H; h++) inv_nh[h] = 0.0;
    for (int i = 0; i < f.n; i++) inv_nh[grp[i]] += 1.0;
    for (int h = 0; h < H; h++) inv_nh[h] = inv_nh[h] > 0 ? 1.0 / inv_nh[h] : 0.0;
    /* Rademacher weights square to one: sum v^2 Psi^2 = sum Psi^2 */
    colss = (double *) R_alloc(m > 0 ? m : 1, sizeof(double));
    for (int p = 0; p < m; p++) colss[p] = 0.0;
    for (int b = 0; b < f.nb; b++) {
      const int nr = f.start[b + 1] - f.start[b];
      for (int j = 0; j < f.ncol[b]; j++) {
        const int p = map[f.cols[b][j]];
        if (p < 0) continue;
        const double *x = f.vals[b] + (R_xlen_t) j * nr;
        double t = 0.0;
        for (int i = 0; i < nr; i++) t += x[i] * x[i];
        colss[p] += t;
      }
    }
  }
  /* per block: the selected columns and their output positions */
  int maxq = 1;
  for (int b = 0; b < f.nb; b++) if (f.ncol[b] > maxq) maxq = f.ncol[b];
  const int ntask = (B + BOOT_NB - 1) / BOOT_NB;
  const int nth = dd_nthreads(ntask, (double) B * f.n * (m > 0 ? m : 1) / 16.0);
  /* accumulators: one set per group (one without groups), the sums of
   * v^2 Psi^2 (grouped, non-Rademacher weights) and 4 rows of weights */
  const size_t nacc = (size_t) m * BOOT_NB * H;
  const size_t per = nacc + (grouped ? (size_t) m * BOOT_NB : 0) + 8 * BOOT_NB;
  double *scratch = (double *) R_alloc(per * nth + 1, sizeof(double));
  dd_wstream *wsall = (dd_wstream *) R_alloc((size_t) BOOT_NB * nth, sizeof(dd_wstream));
  dd_rng *g0all = (dd_rng *) R_alloc((size_t) BOOT_NB * nth, sizeof(dd_rng));
  const int *rows = f.rows;
  uint64_t *bitsall = (uint64_t *) R_alloc((size_t) BOOT_NB * nth, sizeof(uint64_t));
  int *ppall = (int *) R_alloc((size_t) maxq * nth, sizeof(int));
  const double **xsall = (const double **) R_alloc((size_t) maxq * nth, sizeof(double *));
  const uint64_t seed = dd_seed_arg(seed_, "C_ifs_boot");
  SEXP out = PROTECT(allocMatrix(REALSXP, B, m));
  SEXP ssout = PROTECT(grouped ? allocMatrix(REALSXP, B, m) : allocVector(REALSXP, 0));
  double *O = REAL(out), *SS = REAL(ssout);
  const double scale = 1.0 / sqrt(nscale);
  dd_chunks ch_task;
  dd_chunks_init(&ch_task, ntask, nth);
  while (dd_chunks_next(&ch_task)) {
  const int task_lo = ch_task.lo, task_hi = ch_task.hi;   /* locals: the compiler keeps them out of memory */
#ifdef _OPENMP
#pragma omp parallel for num_threads(nth) schedule(dynamic, 1)
#endif
  for (int task = task_lo; task < task_hi; task++) {
    const int tid = dd_tid();
    double *acc = scratch + per * tid;
    double *sq = acc + nacc;                                   /* grouped only */
    double *v = sq + (grouped ? (size_t) m * BOOT_NB : 0), *v2 = v + 4 * BOOT_NB;
    dd_wstream *ws = wsall + (size_t) BOOT_NB * tid;
    uint64_t *bits = bitsall + (size_t) BOOT_NB * tid;
    int *pp = ppall + (size_t) maxq * tid;
    const double **xs = xsall + (size_t) maxq * tid;
    const int b0 = task * BOOT_NB, nb = (b0 + BOOT_NB <= B) ? BOOT_NB : B - b0;
    dd_rng *g0 = g0all + (size_t) BOOT_NB * tid;
    long word = -1;
    for (int b = 0; b < nb; b++) { dd_wstream_init(ws + b, seed, (uint64_t) first + (uint64_t) (b0 + b), type); g0[b] = ws[b].g; }
    memset(acc, 0, sizeof(double) * (per - 8 * BOOT_NB));
    for (int blk = 0; blk < f.nb; blk++) {
      const int r0 = f.start[blk], nr = f.start[blk + 1] - r0;
      int q = 0;
      for (int j = 0; j < f.ncol[blk]; j++) {
        const int p = map[f.cols[blk][j]];
        if (p < 0) continue;
        pp[q] = p; xs[q] = f.vals[blk] + (R_xlen_t) j * nr; q++;
      }
      int r = 0;
      /* a permuted layout: no weights are needed for the rows of a block
       * with no selected column (they are computed by row, not in turn) */
      if ((rows || off) && !q) continue;
#define BOOT_W(i, vv) ((rows || off) ? boot_weights_at(g0, nb, type, bits, &word, (long) (rows ? rows[i] : (i)) + off, vv) \
                                     : boot_weights_row(ws, nb, type, bits, (long) (i), vv))
      if (!grouped) {
        for (; r + 4 <= nr; r += 4) {
          for (int u = 0; u < 4; u++) BOOT_W(r0 + r + u, v + u * BOOT_NB);
          if (q) boot_rows4(q, pp, xs, r, nr, v, acc);
        }
      }
      if (!grouped) {
        for (; r < nr; r++) {
          BOOT_W(r0 + r, v);
          if (q) boot_row1(q, pp, xs, r, v, acc);
        }
        continue;
      }
      while (r < nr) {
        const int h = grp[IFS_ROW(&f, r0 + r)];
        const int nu = (r + 4 <= nr && grp[IFS_ROW(&f, r0 + r + 1)] == h && grp[IFS_ROW(&f, r0 + r + 2)] == h &&
                        grp[IFS_ROW(&f, r0 + r + 3)] == h) ? 4 : 1;
        for (int u = 0; u < nu; u++) BOOT_W(r0 + r + u, v + u * BOOT_NB);
        if (q) {
          double *ah = acc + (size_t) h * m * BOOT_NB;
          if (nu == 4) boot_rows4(q, pp, xs, r, nr, v, ah); else boot_row1(q, pp, xs, r, v, ah);
          if (type != 1)
            for (int u = 0; u < nu; u++) {
              const double *vu = v + u * BOOT_NB;
              for (int b = 0; b < BOOT_NB; b++) v2[b] = vu[b] * vu[b];
              for (int j = 0; j < q; j++) {
                const double x2 = xs[j][r + u] * xs[j][r + u];
                double *a = sq + (size_t) pp[j] * BOOT_NB;
                for (int b = 0; b < BOOT_NB; b++) a[b] += x2 * v2[b];
              }
            }
        }
        r += nu;
      }
#undef BOOT_W
    }
    for (int p = 0; p < m; p++)
      for (int b = 0; b < nb; b++) {
        if (!grouped) { O[(b0 + b) + (R_xlen_t) p * B] = acc[(size_t) p * BOOT_NB + b] * scale; continue; }
        double tot = 0.0, between = 0.0;
        for (int h = 0; h < H; h++) {
          const double a = acc[((size_t) h * m + p) * BOOT_NB + b];
          tot += a;
          between += a * a * inv_nh[h];
        }
        O[(b0 + b) + (R_xlen_t) p * B] = tot * scale;
        SS[(b0 + b) + (R_xlen_t) p * B] = (type == 1 ? colss[p] : sq[(size_t) p * BOOT_NB + b]) - between;
      }
  }
  }
  if (!grouped) { UNPROTECT(2); return out; }
  SEXP res = PROTECT(allocVector(VECSXP, 2)), nm = PROTECT(allocVector(STRSXP, 2));
  SET_VECTOR_ELT(res, 0, out); SET_VECTOR_ELT(res, 1, ssout);
  SET_STRING_ELT(nm, 0, mkChar("draws")); SET_STRING_ELT(nm, 1, mkChar("ss"));
  setAttrib(res, R_NamesSymbol, nm);
  UNPROTECT(4);
  return res;
}

/* ---- bootstrap summaries ------------------------------------------------- */

/* the k-th smallest (0-based) of x[0..n), reordering x (quickselect) */
static double select_kth(double *x, int n, int k) {
  int lo = 0, hi = n - 1;
  while (lo < hi) {
    const double piv = x[lo + (hi - lo) / 2];
    int i = lo, j = hi;
    while (i <= j) {
      while (x[i] < piv) i++;
      while (x[j] > piv) j--;
      if (i <= j) { double t = x[i]; x[i] = x[j]; x[j] = t; i++; j--; }
    }
    if (k <= j) hi = j; else if (k >= i) lo = i; else return x[k];
  }
  return x[k];
}

/* did's type-1 quantile of the non-NA values: the ceiling(n p)-th smallest */
static double q_type1(double *x, int n, double p) {
  int m = 0;
  for (int i = 0; i < n; i++) if (!ISNAN(x[i])) x[m++] = x[i];
  if (m == 0) return NA_REAL;
  int k = (int) ceil((double) m * p);
  if (k < 1) k = 1;
  if (k > m) k = m;
  return select_kth(x, m, k - 1);
}

/* From bootstrap draws (B x m): sig[j] = IQR / (qnorm(.75) - qnorm(.25)) of
 * column j (NA when not positive), and the 1 - alpha quantile over
 * replicates of max over the band columns (0-based) of |draw| / sig. */
SEXP C_draws_summary(SEXP draws_, SEXP band_, SEXP alpha_, SEXP tol_) {
  const char *fn = "C_draws_summary";
  dd_chk_mat(draws_, REALSXP, -1, -1, 0, fn, "draws");
  dd_chk_type(band_, INTSXP, 0, fn, "band");
  const int B = nrows(draws_), m = ncols(draws_), nband = LENGTH(band_);
  const double *D = REAL(draws_), alpha = dd_chk_num(alpha_, 0, fn, "alpha"), tol = dd_chk_num(tol_, 1, fn, "tol");
  const int *band = INTEGER(band_);
  SEXP sig_ = PROTECT(allocVector(REALSXP, m));
  double *sig = REAL(sig_);
  double *x = (double *) R_alloc(B > 0 ? B : 1, sizeof(double));
  const double iqr_norm = 1.3489795003921634;   /* qnorm(0.75) - qnorm(0.25) */
  for (int j = 0; j < m; j++) {
    memcpy(x, D + (R_xlen_t) j * B, sizeof(double) * B);
    double q3 = q_type1(x, B, 0.75);
    memcpy(x, D + (R_xlen_t) j * B, sizeof(double) * B);
    double q1 = q_type1(x, B, 0.25);
    double s = (q3 - q1) / iqr_norm;
    sig[j] = (R_FINITE(s) && s > tol) ? s : NA_REAL;
  }
  double crit = NA_REAL;
  if (nband > 0) {
    int nt = 0;
    for (int b = 0; b < B; b++) {
      double mx = R_NegInf;
      int any = 0;
      for (int p = 0; p < nband; p++) {
        const int j = band[p];
        if (j < 0 || j >= m) error("internal error in ifs.c: band column out of range; please report");
        const double z = fabs(D[b + (R_xlen_t) j * B]) / sig[j];
        if (ISNAN(z)) continue;
        if (!any || z > mx) mx = z;
        any = 1;
      }
      if (any && R_FINITE(mx)) x[nt++] = mx;
    }
    if (nt > 0) crit = q_type1(x, nt, 1.0 - alpha);
  }
  SEXP crit_ = PROTECT(ScalarReal(crit));
  const char *nm[2] = {"sig", "crit"};
  SEXP v[2] = {sig_, crit_};
  SEXP out = dd_named_list(2, nm, v);
  UNPROTECT(2);
  return out;
}
