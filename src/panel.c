/* Panel indexing: 0-based group codes, nesting of one grouping in another,
 * duplicated (unit, period) pairs. Integer-valued inputs with a compact range
 * are coded by direct addressing in O(n); anything else returns NULL and R
 * falls back to hashing (match/unique). */
#include "diffdiff.h"
#include <math.h>
#include <string.h>

/* codes in order of first appearance; NULL when the range is too wide */
SEXP C_group_codes(SEXP x) {
  const R_xlen_t n = XLENGTH(x);
  if (n == 0) return R_NilValue;
  double lo = R_PosInf, hi = R_NegInf;
  if (TYPEOF(x) == INTSXP) {
    const int *v = INTEGER(x);
    for (R_xlen_t i = 0; i < n; i++) {
      if (v[i] == NA_INTEGER) return R_NilValue;
      if (v[i] < lo) lo = v[i];
      if (v[i] > hi) hi = v[i];
    }
  } else if (TYPEOF(x) == REALSXP) {
    const double *v = REAL(x);
    for (R_xlen_t i = 0; i < n; i++) {
      if (!R_FINITE(v[i]) || v[i] != floor(v[i])) return R_NilValue;
      if (v[i] < lo) lo = v[i];
      if (v[i] > hi) hi = v[i];
    }
  } else {
    return R_NilValue;
  }
  const double range = hi - lo + 1.0;
  if (range > 4.0 * (double) n + 1024.0 || range > 2e9) return R_NilValue;
  const int R = (int) range;
  int *map = (int *) R_alloc(R, sizeof(int));
  for (int j = 0; j < R; j++) map[j] = -1;
  SEXP out = PROTECT(allocVector(INTSXP, n));
  int *o = INTEGER(out), next = 0;
  if (TYPEOF(x) == INTSXP) {
    const int *v = INTEGER(x); const int ilo = (int) lo;
    for (R_xlen_t i = 0; i < n; i++) {
      int k = v[i] - ilo;
      if (map[k] < 0) map[k] = next++;
      o[i] = map[k];
    }
  } else {
    const double *v = REAL(x);
    for (R_xlen_t i = 0; i < n; i++) {
      int k = (int) (v[i] - lo);
      if (map[k] < 0) map[k] = next++;
      o[i] = map[k];
    }
  }
  setAttrib(out, install("nlev"), ScalarInteger(next));
  UNPROTECT(1);
  return out;
}

/* TRUE when every level of f (codes 0..nf-1) lies in a single cluster */
SEXP C_nested(SEXP f_, SEXP nf_, SEXP cl_) {
  const R_xlen_t n = XLENGTH(f_);
  const int nf = asInteger(nf_);
  if (XLENGTH(cl_) != n) error("internal error in panel.c: length mismatch; please report");
  const int *f = INTEGER(f_), *cl = INTEGER(cl_);
  int *first = (int *) R_alloc(nf, sizeof(int));
  for (int l = 0; l < nf; l++) first[l] = -1;
  for (R_xlen_t i = 0; i < n; i++) {
    if (first[f[i]] < 0) first[f[i]] = cl[i];
    else if (first[f[i]] != cl[i]) return ScalarLogical(0);
  }
  return ScalarLogical(1);
}

/* 1-based index of the first repeated (a, b) pair, 0 if none; NA when the
 * table would be too large (R then hashes) */
SEXP C_first_dup(SEXP a_, SEXP na_, SEXP b_, SEXP nb_) {
  const R_xlen_t n = XLENGTH(a_);
  const double cells = (double) asInteger(na_) * asInteger(nb_);
  if (cells > 5e8) return ScalarInteger(NA_INTEGER);
  const int *a = INTEGER(a_), *b = INTEGER(b_), nb = asInteger(nb_);
  unsigned char *seen = (unsigned char *) R_alloc((size_t) cells + 1, 1);
  memset(seen, 0, (size_t) cells + 1);
  for (R_xlen_t i = 0; i < n; i++) {
    size_t k = (size_t) a[i] * nb + b[i];
    if (seen[k]) return ScalarInteger((int) (i + 1));
    seen[k] = 1;
  }
  return ScalarInteger(0);
}
