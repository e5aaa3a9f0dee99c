/* Panel indexing: 0-based group codes, nesting of one grouping in another,
 * duplicated (unit, period) pairs, treatment timing, and the panel object's
 * long-to-wide reshape. Integer-valued inputs with a compact range
 * are coded by direct addressing in O(n); anything else returns NULL and R
 * falls back to hashing (match/unique). */
#include "diffdiff.h"
#include <math.h>
#include <string.h>
#include <limits.h>

/* The range [lo, hi] of a vector that C can code by a table: integers
 * without NA, or whole finite doubles, spanning at most 4n + 1024 (and 2e9)
 * values. 0 when it cannot (R hashes instead). */
static int compact_range(SEXP x, double *lo_, double *hi_) {
  if (TYPEOF(x) != INTSXP && TYPEOF(x) != REALSXP) return 0;
  const R_xlen_t n = XLENGTH(x);
  if (n == 0) return 0;
  double lo = R_PosInf, hi = R_NegInf;
  if (TYPEOF(x) == INTSXP) {
    const int *v = INTEGER(x);
    for (R_xlen_t i = 0; i < n; i++) {
      if (v[i] == NA_INTEGER) return 0;
      if (v[i] < lo) lo = v[i];
      if (v[i] > hi) hi = v[i];
    }
  } else {
    const double *v = REAL(x);
    for (R_xlen_t i = 0; i < n; i++) {
      if (!R_FINITE(v[i]) || v[i] != floor(v[i])) return 0;
      if (v[i] < lo) lo = v[i];
      if (v[i] > hi) hi = v[i];
    }
  }
  const double range = hi - lo + 1.0;
  if (range > 4.0 * (double) n + 1024.0 || range > 2e9) return 0;
  *lo_ = lo; *hi_ = hi;
  return 1;
}

/* codes in order of first appearance (attributes nlev and first); NULL when
 * compact_range() fails */
SEXP C_group_codes(SEXP x) {
  double lo, hi;
  if (!compact_range(x, &lo, &hi)) return R_NilValue;   /* R hashes the rest */
  const R_xlen_t n = XLENGTH(x);
  const double range = hi - lo + 1.0;
  const int R = (int) range;
  int *map = (int *) R_alloc(R, sizeof(int));
  for (int j = 0; j < R; j++) map[j] = -1;
  /* the first row of each level (1-based), recorded as levels appear */
  int *first = (int *) R_alloc(R < n ? R : (size_t) n, sizeof(int));
  SEXP out = PROTECT(allocVector(INTSXP, n));
  int *o = INTEGER(out), next = 0;
  if (TYPEOF(x) == INTSXP) {
    const int *v = INTEGER(x); const int ilo = (int) lo;
    for (R_xlen_t i = 0; i < n; i++) {
      int k = v[i] - ilo;
      if (map[k] < 0) { first[next] = (int) (i + 1); map[k] = next++; }
      o[i] = map[k];
    }
  } else {
    const double *v = REAL(x);
    for (R_xlen_t i = 0; i < n; i++) {
      int k = (int) (v[i] - lo);
      if (map[k] < 0) { first[next] = (int) (i + 1); map[k] = next++; }
      o[i] = map[k];
    }
  }
  SEXP nlev = PROTECT(ScalarInteger(next));   /* protected: install() may allocate */
  setAttrib(out, install("nlev"), nlev);
  SEXP fr = PROTECT(allocVector(INTSXP, next));
  memcpy(INTEGER(fr), first, sizeof(int) * (size_t) next);
  setAttrib(out, install("first"), fr);
  UNPROTECT(3);
  return out;
}

/* 0-based codes numbered in sorted order of the values (dd_sorted_codes),
 * for the vectors C_group_codes codes (integers, or whole finite doubles, in
 * a range of at most 4n + 1024 values; NULL otherwise): the values present
 * are marked in a table over the range and ranked in its order. Attribute
 * nlev. */
SEXP C_sorted_codes(SEXP x) {
  double lo, hi;
  if (!compact_range(x, &lo, &hi)) return R_NilValue;
  const R_xlen_t n = XLENGTH(x);
  const double range = hi - lo + 1.0;
  const int R = (int) range;
  int *rank = (int *) R_alloc(R, sizeof(int));
  memset(rank, 0, sizeof(int) * (size_t) R);
  SEXP out = PROTECT(allocVector(INTSXP, n));
  int *o = INTEGER(out);
  if (TYPEOF(x) == INTSXP) {
    const int *v = INTEGER(x); const int ilo = (int) lo;
    for (R_xlen_t i = 0; i < n; i++) rank[v[i] - ilo] = 1;
    int k = 0;
    for (int j = 0; j < R; j++) rank[j] = rank[j] ? k++ : -1;
    for (R_xlen_t i = 0; i < n; i++) o[i] = rank[v[i] - ilo];
  } else {
    const double *v = REAL(x);
    for (R_xlen_t i = 0; i < n; i++) rank[(int) (v[i] - lo)] = 1;
    int k = 0;
    for (int j = 0; j < R; j++) rank[j] = rank[j] ? k++ : -1;
    for (R_xlen_t i = 0; i < n; i++) o[i] = rank[(int) (v[i] - lo)];
  }
  int nl = 0;
  for (int j = 0; j < R; j++) if (rank[j] >= 0) nl++;
  SEXP nlev = PROTECT(ScalarInteger(nl));
  setAttrib(out, install("nlev"), nlev);
  UNPROTECT(2);
  return out;
}

/* One pass over a double vector: the number of NA/NaN values, the minimum
 * and maximum of the others, and the sum (long double accumulator, as R's
 * sum()) and the sum of squares (double, in row order, as crossprod()) of
 * all values. */
SEXP C_vec_stats(SEXP x) {
  if (TYPEOF(x) != REALSXP) dd_bad("C_vec_stats", "x", "must be a double vector");
  const R_xlen_t n = XLENGTH(x);
  const double *v = REAL(x);
  double lo = R_PosInf, hi = R_NegInf, ss = 0.0;
  long double s = 0.0;
  R_xlen_t nna = 0;
  for (R_xlen_t i = 0; i < n; i++) {
    const double a = v[i];
    s += a; ss += a * a;
    if (ISNAN(a)) { nna++; continue; }
    if (a < lo) lo = a;
    if (a > hi) hi = a;
  }
  SEXP out = PROTECT(allocVector(REALSXP, 5));
  double *o = REAL(out);
  o[0] = (double) nna; o[1] = lo; o[2] = hi; o[3] = (double) s; o[4] = ss;
  UNPROTECT(1);
  return out;
}

/* The distinct values of a numeric vector that has few of them (at most
 * `max`): the values in order of first appearance (doubles; NA and NaN are
 * two values, 0 and -0 one, as unique() has it) and how often each occurs.
 * NULL when there are more than `max` (R then hashes). A linear scan of a
 * small table, the last value found tried first. */
SEXP C_few_levels(SEXP x, SEXP max_) {
  const char *fn = "C_few_levels";
  if (TYPEOF(x) != INTSXP && TYPEOF(x) != REALSXP && TYPEOF(x) != LGLSXP) dd_bad(fn, "x", "must be numeric");
  const int mx = dd_chk_int(max_, 1, 4096, fn, "max");
  const R_xlen_t n = XLENGTH(x);
  double *val = (double *) R_alloc(mx, sizeof(double));
  R_xlen_t *cnt = (R_xlen_t *) R_alloc(mx, sizeof(R_xlen_t));
  int kind[4096];                      /* 0: a number, 1: NA, 2: NaN */
  int nv = 0, last = -1;
  const int isreal = TYPEOF(x) == REALSXP;
  const double *xr = isreal ? REAL(x) : NULL;
  const int *xi = isreal ? NULL : (TYPEOF(x) == INTSXP ? INTEGER(x) : LOGICAL(x));
  for (R_xlen_t i = 0; i < n; i++) {
    double v; int kd;
    if (isreal) { v = xr[i]; kd = ISNAN(v) ? (R_IsNA(v) ? 1 : 2) : 0; }
    else { kd = xi[i] == NA_INTEGER; v = kd ? NA_REAL : (double) xi[i]; }
    if (last >= 0 && kind[last] == kd && (kd || val[last] == v)) { cnt[last]++; continue; }
    int j = 0;
    for (; j < nv; j++) if (kind[j] == kd && (kd || val[j] == v)) break;
    if (j == nv) {
      if (nv == mx) return R_NilValue;
      val[nv] = kd == 1 ? NA_REAL : v; kind[nv] = kd; cnt[nv] = 0; nv++;
    }
    cnt[j]++; last = j;
  }
  SEXP values = PROTECT(allocVector(REALSXP, nv)), counts = PROTECT(allocVector(REALSXP, nv));
  for (int j = 0; j < nv; j++) { REAL(values)[j] = val[j]; REAL(counts)[j] = (double) cnt[j]; }
  const char *nm[] = {"values", "counts"};
  SEXP vals[] = {values, counts};
  SEXP out = dd_named_list(2, nm, vals);
  UNPROTECT(2);
  return out;
}

/* Never-treated flags per row from flags per unit (never_u[code[i]]), and
 * the first-treated periods g with the never-treated rows set to 0 (a new
 * double vector; g itself when no row is never treated, or when g is double
 * and those rows are +0 already). */
SEXP C_never_rows(SEXP code_, SEXP never_u_, SEXP g_) {
  const char *fn = "C_never_rows";
  dd_chk_type(code_, INTSXP, 0, fn, "code");
  dd_chk_type(never_u_, LGLSXP, 0, fn, "never_u");
  const R_xlen_t n = XLENGTH(code_);
  if (TYPEOF(g_) != INTSXP && TYPEOF(g_) != REALSXP) dd_bad(fn, "g", "must be numeric");
  if (XLENGTH(g_) != n) dd_bad(fn, "g", "must have one value per row");
  const int nu = LENGTH(never_u_);
  const int *code = INTEGER(code_), *nv = LOGICAL(never_u_);
  SEXP never = PROTECT(allocVector(LGLSXP, n));
  int *o = LOGICAL(never), any = 0;
  for (R_xlen_t i = 0; i < n; i++) {
    const unsigned int c = (unsigned int) code[i];     /* the code check folded in (NA is negative) */
    if (c >= (unsigned int) nu) dd_bad(fn, "code", "has a value outside 0..nlev-1");
    o[i] = nv[c] == 1; any |= o[i];
  }
  SEXP g = g_;
  if (any && TYPEOF(g_) == REALSXP) {
    /* a double g whose never-treated rows hold +0 already (the usual coding)
     * is returned as it is: setting them to 0 would change nothing */
    const double *src = REAL(g_);
    int need = 0;
    for (R_xlen_t i = 0; i < n && !need; i++) need = o[i] && !(src[i] == 0.0 && !signbit(src[i]));
    any = need;
  }
  if (any) {
    g = PROTECT(allocVector(REALSXP, n));
    double *gg = REAL(g);
    if (TYPEOF(g_) == REALSXP) {
      const double *src = REAL(g_);
      for (R_xlen_t i = 0; i < n; i++) gg[i] = o[i] ? 0.0 : src[i];
    } else {
      const int *src = INTEGER(g_);
      for (R_xlen_t i = 0; i < n; i++) gg[i] = o[i] ? 0.0 : (src[i] == NA_INTEGER ? NA_REAL : (double) src[i]);
    }
  } else PROTECT(g);
  const char *nm[] = {"never", "g"};
  SEXP vals[] = {never, g};
  SEXP out = dd_named_list(2, nm, vals);
  UNPROTECT(2);
  return out;
}

/* TRUE when every level of f (codes 0..nf-1) lies in a single cluster */
SEXP C_nested(SEXP f_, SEXP nf_, SEXP cl_) {
  const char *fn = "C_nested";
  dd_chk_type(f_, INTSXP, 0, fn, "f");
  const R_xlen_t n = XLENGTH(f_);
  const int nf = dd_chk_int(nf_, 0, n > 0 ? (int) n : 1, fn, "nf");
  dd_chk_codes(f_, n, nf, fn, "f");
  dd_chk_vec(cl_, INTSXP, n, 0, fn, "cl");
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
  const char *fn = "C_first_dup";
  dd_chk_type(a_, INTSXP, 0, fn, "a");
  const R_xlen_t n = XLENGTH(a_);
  const int nmax = n > 0 ? (int) n : 1;
  const int na = dd_chk_int(na_, 0, nmax, fn, "na"), nb = dd_chk_int(nb_, 0, nmax, fn, "nb");
  const double cells = (double) na * nb;
  if (cells > 5e8) return ScalarInteger(NA_INTEGER);
  dd_chk_codes(a_, n, na, fn, "a");
  dd_chk_codes(b_, n, nb, fn, "b");
  const int *a = INTEGER(a_), *b = INTEGER(b_);
  unsigned char *seen = (unsigned char *) R_alloc((size_t) cells + 1, 1);
  memset(seen, 0, (size_t) cells + 1);
  for (R_xlen_t i = 0; i < n; i++) {
    size_t k = (size_t) a[i] * nb + b[i];
    if (seen[k]) return ScalarInteger((int) (i + 1));
    seen[k] = 1;
  }
  return ScalarInteger(0);
}

/* For each element of a list (vectors or matrices): the number of NA/NaN/Inf
 * (numeric) or NA (other) entries. Lets R skip building masks when clean. */
SEXP C_count_bad(SEXP lst) {
  dd_chk_list(lst, -1, "C_count_bad", "lst");
  const int m = LENGTH(lst);
  SEXP out = PROTECT(allocVector(INTSXP, m));
  for (int j = 0; j < m; j++) {
    SEXP x = VECTOR_ELT(lst, j);
    const R_xlen_t n = isNull(x) ? 0 : XLENGTH(x);
    R_xlen_t k = 0;
    switch (TYPEOF(x)) {
    case REALSXP: { const double *v = REAL(x); for (R_xlen_t i = 0; i < n; i++) k += !R_FINITE(v[i]); break; }
    case INTSXP: { const int *v = INTEGER(x); for (R_xlen_t i = 0; i < n; i++) k += v[i] == NA_INTEGER; break; }
    case LGLSXP: { const int *v = LOGICAL(x); for (R_xlen_t i = 0; i < n; i++) k += v[i] == NA_LOGICAL; break; }
    case STRSXP: { for (R_xlen_t i = 0; i < n; i++) k += STRING_ELT(x, i) == NA_STRING; break; }
    default: k = 0;
    }
    INTEGER(out)[j] = k > INT_MAX ? INT_MAX : (int) k;
  }
  UNPROTECT(1);
  return out;
}

/* The regressor matrix from a list of k columns (double, integer or
 * logical, each of the same length n): an n x k double matrix, integer and
 * logical NA as NA_real_. One write per cell (matrix(0, n, k) then filling
 * it column by column writes every cell twice). */
SEXP C_col_matrix(SEXP cols) {
  const char *fn = "C_col_matrix";
  dd_chk_list(cols, -1, fn, "cols");
  const int k = LENGTH(cols);
  const R_xlen_t n = k ? XLENGTH(VECTOR_ELT(cols, 0)) : 0;
  for (int j = 0; j < k; j++) {
    SEXP x = VECTOR_ELT(cols, j);
    if (TYPEOF(x) != REALSXP && TYPEOF(x) != INTSXP && TYPEOF(x) != LGLSXP)
      dd_bad(fn, "cols", "must hold double, integer or logical vectors");
    if (XLENGTH(x) != n) dd_bad(fn, "cols", "has columns of different lengths");
  }
  if (n > INT_MAX) dd_bad(fn, "cols", "has columns longer than a matrix can hold");
  SEXP out = PROTECT(allocMatrix(REALSXP, (int) n, k));
  double *o = REAL(out);
  for (int j = 0; j < k; j++) {
    SEXP x = VECTOR_ELT(cols, j);
    double *oj = o + (R_xlen_t) j * n;
    if (TYPEOF(x) == REALSXP) memcpy(oj, REAL(x), (size_t) n * sizeof(double));
    else {
      const int *v = TYPEOF(x) == INTSXP ? INTEGER(x) : LOGICAL(x);
      for (R_xlen_t i = 0; i < n; i++) oj[i] = v[i] == NA_INTEGER ? NA_REAL : (double) v[i];
    }
  }
  UNPROTECT(1);
  return out;
}

/* Largest absolute value of each column of a double matrix, or of each
 * element of a list of numeric vectors (NaN and NA ignored; 0 for an empty
 * column): max(abs(x)) without the copy abs() makes. */
SEXP C_col_maxabs(SEXP x) {
  const char *fn = "C_col_maxabs";
  const int is_list = TYPEOF(x) == VECSXP;
  if (!is_list && !(TYPEOF(x) == REALSXP && isMatrix(x))) dd_bad(fn, "x", "must be a double matrix or a list");
  const int k = is_list ? LENGTH(x) : ncols(x);
  const R_xlen_t nr = is_list ? 0 : (R_xlen_t) nrows(x);
  SEXP out = PROTECT(allocVector(REALSXP, k));
  for (int j = 0; j < k; j++) {
    SEXP v = is_list ? VECTOR_ELT(x, j) : x;
    const R_xlen_t n = is_list ? XLENGTH(v) : nr;
    double m = 0.0;
    switch (TYPEOF(v)) {
    case REALSXP: {
      const double *p = REAL(v) + (is_list ? 0 : (R_xlen_t) j * nr);
      for (R_xlen_t i = 0; i < n; i++) { const double a = fabs(p[i]); if (a > m) m = a; }
      break;
    }
    case INTSXP: case LGLSXP: {
      const int *p = TYPEOF(v) == INTSXP ? INTEGER(v) : LOGICAL(v);
      for (R_xlen_t i = 0; i < n; i++)
        if (p[i] != NA_INTEGER) { const double a = fabs((double) p[i]); if (a > m) m = a; }
      break;
    }
    default: dd_bad(fn, "x", "must hold numeric vectors");
    }
    REAL(out)[j] = m;
  }
  UNPROTECT(1);
  return out;
}

/* 1-based index of the first value other than 0 and 1 (NA ignored), 0 if none */
SEXP C_first_not01(SEXP x) {
  dd_chk_type(x, REALSXP, 0, "C_first_not01", "x");
  const R_xlen_t n = XLENGTH(x);
  const double *v = REAL(x);
  for (R_xlen_t i = 0; i < n; i++)
    if (!ISNAN(v[i]) && v[i] != 0.0 && v[i] != 1.0) return ScalarReal((double) (i + 1));
  return ScalarReal(0.0);
}

/* Fixed-effect singletons, removed recursively: observations alone in a level
 * of some dimension, until none is left. fe: list of 0-based code vectors with
 * their level counts nlev. Returns a logical vector (TRUE = singleton) or
 * NULL when there is none. */
SEXP C_singletons(SEXP fe, SEXP nlev_) {
  const char *fn = "C_singletons";
  dd_chk_list(fe, -1, fn, "fe");
  const int Q = LENGTH(fe);
  if (Q == 0) return R_NilValue;
  dd_chk_vec(nlev_, INTSXP, Q, 0, fn, "nlev");
  const R_xlen_t n = XLENGTH(VECTOR_ELT(fe, 0));
  const int *nlev = INTEGER(nlev_);
  for (int q = 0; q < Q; q++) {
    if (nlev[q] < 0 || nlev[q] > n) error("internal error in %s: `nlev` is negative, NA or above the rows; please report", fn);
    dd_chk_codes(VECTOR_ELT(fe, q), n, nlev[q], fn, "fe");
  }
  int maxL = 0;
  for (int q = 0; q < Q; q++) if (nlev[q] > maxL) maxL = nlev[q];
  int *cnt = (int *) R_alloc((size_t) maxL, sizeof(int));
  unsigned char *drop = (unsigned char *) R_alloc(n, 1);
  memset(drop, 0, n);
  R_xlen_t ndrop = 0;
  int changed = 1;
  while (changed) {
    changed = 0;
    for (int q = 0; q < Q; q++) {
      const int *f = INTEGER(VECTOR_ELT(fe, q));
      memset(cnt, 0, sizeof(int) * nlev[q]);
      for (R_xlen_t i = 0; i < n; i++) if (!drop[i]) cnt[f[i]]++;
      for (R_xlen_t i = 0; i < n; i++)
        if (!drop[i] && cnt[f[i]] == 1) { drop[i] = 1; ndrop++; changed = 1; }
    }
  }
  if (ndrop == 0) return R_NilValue;
  SEXP out = PROTECT(allocVector(LGLSXP, n));
  for (R_xlen_t i = 0; i < n; i++) LOGICAL(out)[i] = drop[i];
  UNPROTECT(1);
  return out;
}

/* 1-based index of the first row whose value differs from the first value of
 * its group (codes 0..ng-1), 0 if values are constant within groups; NA
 * values compare equal only to NA. */
SEXP C_first_varying(SEXP code_, SEXP ng_, SEXP x_) {
  const char *fn = "C_first_varying";
  dd_chk_type(code_, INTSXP, 0, fn, "code");
  const R_xlen_t n = XLENGTH(code_);
  const int ng = dd_chk_int(ng_, 0, n > 0 ? (int) n : 1, fn, "ng");
  dd_chk_codes(code_, n, ng, fn, "code");
  const int *code = INTEGER(code_);
  if (TYPEOF(x_) != INTSXP) dd_chk_type(x_, REALSXP, 0, fn, "x");
  if (XLENGTH(x_) != n) error("internal error in panel.c: length mismatch; please report");
  int *first = (int *) R_alloc(ng, sizeof(int));
  for (int g = 0; g < ng; g++) first[g] = -1;
  if (TYPEOF(x_) == INTSXP) {          /* integer values (NA_integer_ equals only itself) */
    const int *x = INTEGER(x_);
    for (R_xlen_t i = 0; i < n; i++) {
      int g = code[i];
      if (first[g] < 0) { first[g] = (int) i; continue; }
      if (x[first[g]] != x[i]) return ScalarReal((double) (i + 1));
    }
    return ScalarReal(0.0);
  }
  const double *x = REAL(x_);
  for (R_xlen_t i = 0; i < n; i++) {
    int g = code[i];
    if (first[g] < 0) { first[g] = (int) i; continue; }
    double a = x[first[g]], b = x[i];
    if (ISNAN(a) ? !ISNAN(b) : (ISNAN(b) || a != b)) return ScalarReal((double) (i + 1));
  }
  return ScalarReal(0.0);
}

/* 1-based row of the first occurrence of each code 0..ng-1 */
SEXP C_first_rows(SEXP code_, SEXP ng_) {
  const char *fn = "C_first_rows";
  dd_chk_type(code_, INTSXP, 0, fn, "code");
  const R_xlen_t n = XLENGTH(code_);
  const int ng = dd_chk_int(ng_, 0, n > 0 ? (int) n : 1, fn, "ng");
  dd_chk_codes(code_, n, ng, fn, "code");
  const int *code = INTEGER(code_);
  SEXP out = PROTECT(allocVector(INTSXP, ng));
  int *o = INTEGER(out);
  for (int g = 0; g < ng; g++) o[g] = NA_INTEGER;
  for (R_xlen_t i = 0; i < n; i++) if (o[code[i]] == NA_INTEGER) o[code[i]] = (int) (i + 1);
  UNPROTECT(1);
  return out;
}

/* Rows per level: out[l] = number of rows i with code[i] == l and mask[i]
 * TRUE (mask NULL: every row; an NA mask counts as FALSE). One pass, the
 * code check folded into it. */
SEXP C_level_count(SEXP code_, SEXP nlev_, SEXP mask_) {
  const char *fn = "C_level_count";
  dd_chk_type(code_, INTSXP, 0, fn, "code");
  const R_xlen_t n = XLENGTH(code_);
  const int nl = dd_chk_int(nlev_, 0, DD_INT_MAX, fn, "nlev");
  dd_chk_vec(mask_, LGLSXP, n, 1, fn, "mask");
  const int *code = INTEGER(code_);
  const int *mask = isNull(mask_) ? NULL : LOGICAL(mask_);
  SEXP out = PROTECT(allocVector(INTSXP, nl));
  int *o = INTEGER(out);
  memset(o, 0, (size_t) nl * sizeof(int));
  for (R_xlen_t i = 0; i < n; i++) {
    const int c = code[i];
    if (c < 0 || c >= nl) dd_bad(fn, "code", "has a code out of range or NA");
    if (!mask || mask[i] == 1) o[c]++;
  }
  UNPROTECT(1);
  return out;
}

/* Number of distinct levels of code among the rows of a set: row i is in
 * the set when mask[i] (mcode NULL) or mask[mcode[i]] (mcode: codes of
 * another grouping, e.g. units, with mask one flag per level of it) is
 * TRUE. Counting stops once `stop` levels are found (stop <= 0: never), so
 * that "at least m clusters" is answered without a full pass when it holds. */
SEXP C_levels_hit(SEXP code_, SEXP nlev_, SEXP mask_, SEXP mcode_, SEXP stop_) {
  const char *fn = "C_levels_hit";
  dd_chk_type(code_, INTSXP, 0, fn, "code");
  const R_xlen_t n = XLENGTH(code_);
  const int nl = dd_chk_int(nlev_, 0, DD_INT_MAX, fn, "nlev");
  dd_chk_type(mask_, LGLSXP, 0, fn, "mask");
  const R_xlen_t nm = XLENGTH(mask_);
  dd_chk_vec(mcode_, INTSXP, n, 1, fn, "mcode");
  if (isNull(mcode_) && nm != n) dd_bad(fn, "mask", "has the wrong length");
  const int stop = dd_chk_int(stop_, INT_MIN + 1, DD_INT_MAX, fn, "stop");
  const int *code = INTEGER(code_), *mask = LOGICAL(mask_);
  const int *mc = isNull(mcode_) ? NULL : INTEGER(mcode_);
  char *seen = (char *) R_alloc(nl > 0 ? (size_t) nl : 1, 1);
  memset(seen, 0, nl > 0 ? (size_t) nl : 1);
  int hit = 0;
  for (R_xlen_t i = 0; i < n; i++) {
    const int c = code[i];
    if (c < 0 || c >= nl) dd_bad(fn, "code", "has a code out of range or NA");
    R_xlen_t k = i;
    if (mc) {
      k = mc[i];
      if (k < 0 || k >= nm) dd_bad(fn, "mcode", "has a code out of range or NA");
    }
    if (mask[k] == 1 && !seen[c]) {
      seen[c] = 1;
      if (++hit == stop) break;
    }
  }
  return ScalarInteger(hit);
}

/* Treatment timing of each row for the staggered estimators: never treated
 * (g NA, 0 or +-Inf), treated (t >= g), event time t - g (NA if never). */
SEXP C_stagger(SEXP g_, SEXP t_) {
  const R_xlen_t n = XLENGTH(g_);
  if (XLENGTH(t_) != n || TYPEOF(g_) != REALSXP || (TYPEOF(t_) != INTSXP && TYPEOF(t_) != REALSXP))
    error("internal error in panel.c: stagger inputs; please report");
  const double *g = REAL(g_);
  const int ti = TYPEOF(t_) == INTSXP;
  const int *tI = ti ? INTEGER(t_) : NULL;
  const double *tD = ti ? NULL : REAL(t_);
  SEXP never = PROTECT(allocVector(LGLSXP, n)), D = PROTECT(allocVector(LGLSXP, n)), ev = PROTECT(allocVector(REALSXP, n));
  int *nv = LOGICAL(never), *d = LOGICAL(D);
  double *e = REAL(ev);
  for (R_xlen_t i = 0; i < n; i++) {
    double t = ti ? (double) tI[i] : tD[i];
    int nev = ISNAN(g[i]) || g[i] == 0.0 || !R_FINITE(g[i]);
    nv[i] = nev;
    d[i] = !nev && t >= g[i];
    e[i] = nev ? NA_REAL : t - g[i];
  }
  const char *nm[3] = {"never", "D", "ev"};
  SEXP vals[3] = {never, D, ev};
  SEXP out = dd_named_list(3, nm, vals);
  UNPROTECT(3);
  return out;
}

/* The stack of sub-experiments of did_stacked(), as row indices. Row i
 * enters sub-experiment k when its unit is selected (umask[unit, k]: treated
 * cohort or clean control) and its period is in the window (pmask[period,
 * k]). Event time e0 = period value - cohort + kpre (0..nE-1); treated D =
 * the unit belongs to cohort k (gu[unit] == kc[k], not never treated).
 * Corrective weights Q: 1 for treated rows; for controls
 * (nT_ke / nT_e) / (nC_ke / nC_e), row counts, 0 when undefined.
 * Returns list(row (1-based), e0, D, Q, cnt = 2 x (K nE)
 * counts: control, treated), ordered by k, then row. */
SEXP C_stack_rows(SEXP idc_, SEXP tc_, SEXP umask_, SEXP pmask_, SEXP tv_, SEXP kc_, SEXP gu_, SEXP nu_,
                  SEXP kpre_, SEXP nE_) {
  const char *fn = "C_stack_rows";
  dd_chk_type(idc_, INTSXP, 0, fn, "idc");
  const R_xlen_t n = XLENGTH(idc_);
  dd_chk_mat(umask_, LGLSXP, -1, -1, 0, fn, "umask");
  dd_chk_mat(pmask_, LGLSXP, -1, ncols(umask_), 0, fn, "pmask");
  const int N = nrows(umask_), T = nrows(pmask_), K = ncols(umask_);
  const int kpre = dd_chk_int(kpre_, 0, 1000000, fn, "kpre"), nE = dd_chk_int(nE_, 1, 1000000, fn, "nE");
  if ((double) K * nE > 1e8) error("internal error in %s: `nE` too large; please report", fn);
  dd_chk_codes(idc_, n, N, fn, "idc");
  dd_chk_codes(tc_, n, T, fn, "tc");
  dd_chk_vec(tv_, REALSXP, T, 0, fn, "tv");
  dd_chk_vec(kc_, REALSXP, K, 0, fn, "kc");
  dd_chk_vec(gu_, REALSXP, N, 0, fn, "gu");
  dd_chk_vec(nu_, LGLSXP, N, 0, fn, "nu");
  const int *id = INTEGER(idc_), *tc = INTEGER(tc_), *um = LOGICAL(umask_), *pm = LOGICAL(pmask_), *nu = LOGICAL(nu_);
  const double *tv = REAL(tv_), *kc = REAL(kc_), *gu = REAL(gu_);
  R_xlen_t tot = 0;
  for (int k = 0; k < K; k++)
    for (R_xlen_t i = 0; i < n; i++)
      tot += um[id[i] + (R_xlen_t) k * N] && pm[tc[i] + (R_xlen_t) k * T];
  if (tot > INT_MAX) error("the stacked data would have more than %d rows.", INT_MAX);
  SEXP row = PROTECT(allocVector(INTSXP, tot)), sub = PROTECT(allocVector(INTSXP, tot));
  SEXP e0_ = PROTECT(allocVector(INTSXP, tot)), D_ = PROTECT(allocVector(INTSXP, tot));
  SEXP Q_ = PROTECT(allocVector(REALSXP, tot)), cnt_ = PROTECT(allocMatrix(INTSXP, 2, K * nE));
  int *r = INTEGER(row), *s = INTEGER(sub), *e0 = INTEGER(e0_), *D = INTEGER(D_), *cnt = INTEGER(cnt_);
  double *Q = REAL(Q_);
  memset(cnt, 0, sizeof(int) * 2 * (size_t) K * nE);
  R_xlen_t m = 0;
  for (int k = 0; k < K; k++)
    for (R_xlen_t i = 0; i < n; i++)
      if (um[id[i] + (R_xlen_t) k * N] && pm[tc[i] + (R_xlen_t) k * T]) {
        const double ed = tv[tc[i]] - kc[k] + kpre;
        if (!(ed >= 0.0 && ed < nE)) error("internal error in panel.c: event time outside the window; please report");
        int e = (int) llround(tv[tc[i]] - kc[k]) + kpre;
        if (e < 0 || e >= nE) error("internal error in panel.c: event time outside the window; please report");
        int d = !nu[id[i]] && gu[id[i]] == kc[k];
        r[m] = (int) (i + 1); s[m] = k + 1; e0[m] = e; D[m] = d;
        cnt[2 * (k * nE + e) + d]++;
        m++;
      }
  /* totals by event time over the sub-experiments, then the weights */
  double *nC = (double *) R_alloc(nE, sizeof(double)), *nT = (double *) R_alloc(nE, sizeof(double));
  for (int e = 0; e < nE; e++) { nC[e] = 0; nT[e] = 0; }
  for (int k = 0; k < K; k++)
    for (int e = 0; e < nE; e++) { nC[e] += cnt[2 * (k * nE + e)]; nT[e] += cnt[2 * (k * nE + e) + 1]; }
  double *qc = (double *) R_alloc((size_t) K * nE, sizeof(double));
  for (int k = 0; k < K; k++)
    for (int e = 0; e < nE; e++) {
      double c = cnt[2 * (k * nE + e)], t = cnt[2 * (k * nE + e) + 1];
      double q = (t / nT[e]) / (c / nC[e]);
      qc[k * nE + e] = R_FINITE(q) ? q : 0.0;
    }
  for (R_xlen_t j = 0; j < tot; j++) Q[j] = D[j] ? 1.0 : qc[(s[j] - 1) * nE + e0[j]];
  const char *nm[5] = {"row", "e0", "D", "Q", "cnt"};
  SEXP vals[5] = {row, e0_, D_, Q_, cnt_};
  SEXP out = dd_named_list(5, nm, vals);
  UNPROTECT(6);
  return out;
}

/* sum of w (v - c)^2 (w NULL: 1), without temporaries */
SEXP C_wss(SEXP v_, SEXP w_, SEXP c_) {
  dd_chk_type(v_, REALSXP, 0, "C_wss", "v");
  const R_xlen_t n = XLENGTH(v_);
  dd_chk_vec(w_, REALSXP, n, 1, "C_wss", "w");
  const double *v = REAL(v_), *w = isNull(w_) ? NULL : REAL(w_), c = asReal(c_);
  double s = 0.0;
  for (R_xlen_t i = 0; i < n; i++) { double d = v[i] - c; s += (w ? w[i] : 1.0) * d * d; }
  return ScalarReal(s);
}

/* Per-row linear combinations of the imputation estimators, one output
 * matrix and no temporaries: out[i, h] = y0[i] + s[i] * (sum_j X[i, j] B[j, h]
 * + C[cidx[i], h] + A[aidx[i], h]) (y0, s optional), where X (n x k, may have 0 columns) are
 * dense regressors, C (cells x H, optional) the cell part already multiplied
 * by its coefficients, A (units x H, optional) a unit part. */
SEXP C_lin_rows(SEXP X_, SEXP B_, SEXP C_, SEXP cidx_, SEXP A_, SEXP aidx_, SEXP s_, SEXP y0_) {
  const char *fn = "C_lin_rows";
  dd_chk_mat(X_, REALSXP, -1, -1, 0, fn, "X");
  dd_chk_mat(B_, REALSXP, ncols(X_), -1, 0, fn, "B");
  dd_chk_mat(C_, REALSXP, -1, ncols(B_), 1, fn, "C");
  dd_chk_mat(A_, REALSXP, -1, ncols(B_), 1, fn, "A");
  dd_chk_type(s_, REALSXP, 1, fn, "s");
  dd_chk_type(y0_, REALSXP, 1, fn, "y0");
  if (!isNull(C_)) dd_chk_codes(cidx_, nrows(X_), nrows(C_), fn, "cidx");
  if (!isNull(A_)) dd_chk_codes(aidx_, nrows(X_), nrows(A_), fn, "aidx");
  const int n = nrows(X_), k = ncols(X_), H = ncols(B_);
  if (nrows(B_) != k || (!isNull(s_) && XLENGTH(s_) != n) || (!isNull(y0_) && XLENGTH(y0_) != n) ||
      (!isNull(C_) && (ncols(C_) != H || XLENGTH(cidx_) != n)) ||
      (!isNull(A_) && (ncols(A_) != H || XLENGTH(aidx_) != n)))
    error("internal error in panel.c: lin_rows dimensions; please report");
  const double *X = REAL(X_), *B = REAL(B_), *s = isNull(s_) ? NULL : REAL(s_), *y0 = isNull(y0_) ? NULL : REAL(y0_);
  const double *C = isNull(C_) ? NULL : REAL(C_), *A = isNull(A_) ? NULL : REAL(A_);
  const int *ci = isNull(C_) ? NULL : INTEGER(cidx_), *ai = isNull(A_) ? NULL : INTEGER(aidx_);
  const int nc = isNull(C_) ? 0 : nrows(C_), na = isNull(A_) ? 0 : nrows(A_);
  SEXP out = PROTECT(allocMatrix(REALSXP, n, H));
  double *o = REAL(out);
  for (int h = 0; h < H; h++) {
    double *oh = o + (R_xlen_t) h * n;
    for (int i = 0; i < n; i++) oh[i] = 0.0;
    for (int j = 0; j < k; j++) {
      const double b = B[j + (R_xlen_t) h * k], *xj = X + (R_xlen_t) j * n;
      if (b != 0.0) for (int i = 0; i < n; i++) oh[i] += xj[i] * b;
    }
    if (C) { const double *ch = C + (R_xlen_t) h * nc; for (int i = 0; i < n; i++) oh[i] += ch[ci[i]]; }
    if (A) { const double *ah = A + (R_xlen_t) h * na; for (int i = 0; i < n; i++) oh[i] += ah[ai[i]]; }
    if (s) for (int i = 0; i < n; i++) oh[i] *= s[i];
    if (y0) for (int i = 0; i < n; i++) oh[i] += y0[i];
  }
  UNPROTECT(1);
  return out;
}

/* Sums within cells 0..nc-1 of w[i] * X[i, j] (X a vector or matrix; NULL:
 * of w alone; w NULL: 1), without temporaries. Returns nc x k (k = 1 for a
 * vector or NULL X). */
SEXP C_cell_sums(SEXP X_, SEXP w_, SEXP idx_, SEXP nc_) {
  const char *fn = "C_cell_sums";
  dd_chk_type(idx_, INTSXP, 0, fn, "idx");
  dd_chk_type(X_, REALSXP, 1, fn, "X");
  dd_chk_type(w_, REALSXP, 1, fn, "w");
  const R_xlen_t n = XLENGTH(idx_);
  /* cells (present or not) are few next to the rows: a bound keeps a bad
   * count from a giant allocation */
  const double ncmax = (double) n + 1e7;
  const int nc = dd_chk_int(nc_, 0, ncmax < DD_INT_MAX ? (int) ncmax : DD_INT_MAX, fn, "nc"),
    k = isNull(X_) ? 1 : (isMatrix(X_) ? ncols(X_) : 1);
  dd_chk_codes(idx_, n, nc, fn, "idx");
  if ((!isNull(X_) && (isMatrix(X_) ? nrows(X_) : XLENGTH(X_)) != n) || (!isNull(w_) && XLENGTH(w_) != n))
    error("internal error in panel.c: cell_sums lengths; please report");
  const double *X = isNull(X_) ? NULL : REAL(X_), *w = isNull(w_) ? NULL : REAL(w_);
  const int *idx = INTEGER(idx_);
  SEXP out = PROTECT(allocMatrix(REALSXP, nc, k));
  double *o = REAL(out);
  memset(o, 0, sizeof(double) * (size_t) nc * k);
  for (int j = 0; j < k; j++) {
    double *oj = o + (R_xlen_t) j * nc;
    const double *xj = X ? X + (R_xlen_t) j * n : NULL;
    for (R_xlen_t i = 0; i < n; i++) {
      int c = idx[i];
      if (c < 0 || c >= nc) error("internal error in panel.c: cell index out of range; please report");
      oj[c] += (w ? w[i] : 1.0) * (xj ? xj[i] : 1.0);
    }
  }
  UNPROTECT(1);
  return out;
}

/* The panel object's long-to-wide reshape (dd_panel_wide; did_cs and
 * did_sdid). One pass from long to wide. Row i goes to unit umap[idc[i]] and column
 * tmap[tc[i]] (0-based; -1 drops the row): Y (N x T, NA where a unit misses a
 * period); the weights w (NULL for equal weights) divided by their mean over
 * the kept rows (R's two-pass mean, as w / mean(w)); covariates X (rows x kx
 * matrix or NULL). Weights and covariates that do not vary within unit come
 * back as N x 1 and N x kx x 1 (what the engine needs, without T copies);
 * otherwise N x T and N x kx x T with NA for missing periods. */
SEXP C_panel_wide(SEXP idc_, SEXP tc_, SEXP umap_, SEXP tmap_, SEXP N_, SEXP T_, SEXP y_, SEXP w_, SEXP X_) {
  const char *fn = "C_panel_wide";
  dd_chk_type(y_, REALSXP, 0, fn, "y");
  const R_xlen_t n = XLENGTH(y_);
  const int nmax = n > 0 ? (int) n : 1;
  const int N = dd_chk_int(N_, 0, nmax, fn, "N"), T = dd_chk_int(T_, 0, nmax, fn, "T");
  if ((double) N * T > 4e9) error("internal error in %s: `N` x `T` too large; please report", fn);
  dd_chk_vec(idc_, INTSXP, n, 0, fn, "idc");
  dd_chk_vec(tc_, INTSXP, n, 0, fn, "tc");
  dd_chk_type(umap_, INTSXP, 0, fn, "umap");
  dd_chk_type(tmap_, INTSXP, 0, fn, "tmap");
  dd_chk_vec(w_, REALSXP, n, 1, fn, "w");
  if (!isNull(X_) && TYPEOF(X_) != VECSXP) dd_chk_mat(X_, REALSXP, (int) n, -1, 0, fn, "X");
  for (int u = 0; u < LENGTH(umap_); u++)
    if (INTEGER(umap_)[u] < -1 || INTEGER(umap_)[u] >= N) error("internal error in %s: `umap` out of range; please report", fn);
  for (int u = 0; u < LENGTH(tmap_); u++)
    if (INTEGER(tmap_)[u] < -1 || INTEGER(tmap_)[u] >= T) error("internal error in %s: `tmap` out of range; please report", fn);
  /* X: a rows x kx matrix or a list of kx columns */
  const int xlist = TYPEOF(X_) == VECSXP;
  const int kx = isNull(X_) ? 0 : (xlist ? LENGTH(X_) : ncols(X_));
  if (XLENGTH(idc_) != n || XLENGTH(tc_) != n || (!isNull(w_) && XLENGTH(w_) != n) ||
      (!isNull(X_) && !xlist && nrows(X_) != n))
    error("internal error in panel.c: length mismatch; please report");
  /* columns: double, or integer/logical (read without a copy) */
  const double **xc = (const double **) R_alloc(kx > 0 ? kx : 1, sizeof(double *));
  const int **xi = (const int **) R_alloc(kx > 0 ? kx : 1, sizeof(int *));
  for (int a = 0; a < kx; a++) {
    xc[a] = NULL; xi[a] = NULL;
    if (xlist) {
      SEXP col = VECTOR_ELT(X_, a);
      if (XLENGTH(col) != n) error("internal error in panel.c: covariate column; please report");
      if (TYPEOF(col) == REALSXP) xc[a] = REAL(col);
      else if (TYPEOF(col) == INTSXP || TYPEOF(col) == LGLSXP) xi[a] = INTEGER(col);
      else error("internal error in panel.c: covariate column type; please report");
    } else xc[a] = REAL(X_) + (R_xlen_t) a * n;
  }
#define XVAL(a, i) (xc[a] ? xc[a][i] : (double) xi[a][i])
  const int *idc = INTEGER(idc_), *tc = INTEGER(tc_), *umap = INTEGER(umap_), *tmap = INTEGER(tmap_);
  const int nu = LENGTH(umap_), nt = LENGTH(tmap_);
  const double *y = REAL(y_), *w = isNull(w_) ? NULL : REAL(w_);
  const int X = kx > 0;
  const R_xlen_t NT = (R_xlen_t) N * T;
  SEXP Y = PROTECT(allocMatrix(REALSXP, N, T));
  double *py = REAL(Y);
  for (R_xlen_t j = 0; j < NT; j++) py[j] = NA_REAL;
  char *seen = (char *) R_alloc(N > 0 ? N : 1, 1);
  memset(seen, 0, N);
  double *w1 = w ? (double *) R_alloc(N > 0 ? N : 1, sizeof(double)) : NULL;
  SEXP Xc = R_NilValue;
  double *x1 = NULL;
  if (X) {
    Xc = PROTECT(alloc3DArray(REALSXP, N, kx, 1));
    x1 = REAL(Xc);
    for (R_xlen_t j = 0; j < (R_xlen_t) N * kx; j++) x1[j] = NA_REAL;
  } else PROTECT(Xc);
  int winv = 1, xinv = 1;
  long double ws = 0.0;
  R_xlen_t nkept = 0;
  for (R_xlen_t i = 0; i < n; i++) {
    const int ui = idc[i], ti = tc[i];
    if (ui < 0 || ui >= nu || ti < 0 || ti >= nt) error("internal error in panel.c: code out of range; please report");
    const int u = umap[ui], col = tmap[ti];
    if (u < 0 || col < 0) continue;
    py[u + (R_xlen_t) N * col] = y[i];
    nkept++;
    if (w) {
      ws += w[i];
      if (!seen[u]) w1[u] = w[i]; else if (w[i] != w1[u]) winv = 0;
    }
    if (X) {
      for (int a = 0; a < kx; a++) {
        const double v = XVAL(a, i);
        if (!seen[u]) x1[u + (R_xlen_t) a * N] = v; else if (v != x1[u + (R_xlen_t) a * N]) xinv = 0;
      }
    }
    seen[u] = 1;
  }
  SEXP W = R_NilValue;
  if (w) {
    /* R's mean: long double sum, then one refinement pass */
    long double m = nkept > 0 ? ws / nkept : 1.0, t = 0.0;
    if (R_FINITE((double) m)) {
      for (R_xlen_t i = 0; i < n; i++) {
        const int u = umap[idc[i]], col = tmap[tc[i]];
        if (u >= 0 && col >= 0) t += (w[i] - m);
      }
      m += t / nkept;
    }
    const double mean = (double) m;
    if (winv) {
      W = PROTECT(allocMatrix(REALSXP, N, 1));
      double *pw = REAL(W);
      for (int u = 0; u < N; u++) pw[u] = w1[u] / mean;
    } else {
      W = PROTECT(allocMatrix(REALSXP, N, T));
      double *pw = REAL(W);
      for (R_xlen_t j = 0; j < NT; j++) pw[j] = NA_REAL;
      for (R_xlen_t i = 0; i < n; i++) {
        const int u = umap[idc[i]], col = tmap[tc[i]];
        if (u >= 0 && col >= 0) pw[u + (R_xlen_t) N * col] = w[i] / mean;
      }
    }
  } else PROTECT(W);
  if (X && !xinv) {
    Xc = PROTECT(alloc3DArray(REALSXP, N, kx, T));
    double *px = REAL(Xc);
    for (R_xlen_t j = 0; j < NT * kx; j++) px[j] = NA_REAL;
    for (R_xlen_t i = 0; i < n; i++) {
      const int u = umap[idc[i]], col = tmap[tc[i]];
      if (u < 0 || col < 0) continue;
      for (int a = 0; a < kx; a++) px[u + (R_xlen_t) a * N + (R_xlen_t) N * kx * col] = XVAL(a, i);
    }
  } else PROTECT(Xc);
  const char *nm[3] = {"Y", "W", "X"};
  SEXP vals[3] = {Y, W, Xc};
  SEXP out = dd_named_list(3, nm, vals);
  UNPROTECT(4);
  return out;
}
#undef XVAL

/* The cells of several code vectors (codes[[j]] 0-based with nlev[j] levels)
 * numbered 0, 1, ... in sorted order of the combinations (the first vector
 * most significant), counting only the combinations present: the mixed-radix
 * key comb = (...(c1 * k2 + c2) * k3 + ...) of each row, a table of the
 * prod(k) possible keys marking those present, their ranks. For a product
 * of levels small enough to table (the caller checks); attribute "nlev" is
 * the number of cells. */
SEXP C_cell_codes(SEXP codes_, SEXP nlev_) {
  const char *fn = "C_cell_codes";
  dd_chk_list(codes_, -1, fn, "codes");
  const int J = LENGTH(codes_);
  dd_chk_vec(nlev_, INTSXP, J, 0, fn, "nlev");
  if (J < 1) error("internal error in %s: no code vectors; please report", fn);
  const R_xlen_t n = XLENGTH(VECTOR_ELT(codes_, 0));
  const int *k = INTEGER(nlev_);
  double tot = 1.0;
  for (int j = 0; j < J; j++) {
    if (k[j] < 1) error("internal error in %s: `nlev` must be positive; please report", fn);
    dd_chk_codes(VECTOR_ELT(codes_, j), n, k[j], fn, "codes");
    tot *= k[j];
  }
  if (tot > (double) INT_MAX - 1) error("internal error in %s: too many possible cells to table; please report", fn);
  const int K = (int) tot;
  const int **cv = (const int **) R_alloc(J, sizeof(int *));
  for (int j = 0; j < J; j++) cv[j] = INTEGER(VECTOR_ELT(codes_, j));
  int *rank = (int *) R_alloc((size_t) K + 1, sizeof(int));
  memset(rank, 0, sizeof(int) * ((size_t) K + 1));
#define CELL_KEY(i, out) do { size_t c_ = 0; for (int j_ = 0; j_ < J; j_++) c_ = c_ * (size_t) k[j_] + (size_t) cv[j_][i]; (out) = c_; } while (0)
  for (R_xlen_t i = 0; i < n; i++) { size_t c; CELL_KEY(i, c); rank[c] = 1; }
  int nd = 0;
  for (int c = 0; c < K; c++) rank[c] = rank[c] ? nd++ : -1;
  SEXP out = PROTECT(allocVector(INTSXP, n));
  int *o = INTEGER(out);
  for (R_xlen_t i = 0; i < n; i++) { size_t c; CELL_KEY(i, c); o[i] = rank[c]; }
#undef CELL_KEY
  SEXP nl = PROTECT(ScalarInteger(nd));
  setAttrib(out, install("nlev"), nl);
  UNPROTECT(2);
  return out;
}
