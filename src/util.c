/* Small helpers shared by the entry points. */
#include "diffdiff.h"

/* a named list from n values (n small). The caller must have every value
 * protected (or R_NilValue) when it calls: two values allocated in the call's
 * own argument list, unprotected, may already be lost when this function
 * starts. Here every value is protected again until the list holds it, so
 * that allocating the list, the names and their CHARSXPs cannot collect one. */
SEXP dd_named_list(int n, const char **names, SEXP *values) {
  for (int i = 0; i < n; i++) PROTECT(values[i]);
  SEXP out = PROTECT(allocVector(VECSXP, n));
  SEXP nms = PROTECT(allocVector(STRSXP, n));
  for (int i = 0; i < n; i++) {
    SET_VECTOR_ELT(out, i, values[i]);
    SET_STRING_ELT(nms, i, mkChar(names[i]));
  }
  setAttrib(out, R_NamesSymbol, nms);
  UNPROTECT(n + 2);
  return out;
}

/* ---- entry-point checks ---------------------------------------------------
 * The .Call routines are internal: the package's R code coerces and checks
 * before calling. These cheap checks make every routine fail cleanly rather
 * than read or write out of bounds when that contract is broken; a failure
 * is an internal error. fn names the routine, arg the argument. */
void dd_bad(const char *fn, const char *arg, const char *what) {
  error("internal error in %s: `%s` %s; please report", fn, arg, what);
}

static const char *dd_type_name(SEXPTYPE t) {
  switch (t) {
  case REALSXP: return "a double vector";
  case INTSXP: return "an integer vector";
  case LGLSXP: return "a logical vector";
  case VECSXP: return "a list";
  case STRSXP: return "a character vector";
  default: return "of another type";
  }
}

void dd_chk_type(SEXP x, SEXPTYPE t, int null_ok, const char *fn, const char *arg) {
  if (null_ok && isNull(x)) return;
  if (TYPEOF(x) != t) {
    char msg[96];
    snprintf(msg, sizeof msg, "must be %s%s", dd_type_name(t), null_ok ? " or NULL" : "");
    dd_bad(fn, arg, msg);
  }
}

/* x of type t with exactly n elements (NULL allowed when null_ok) */
void dd_chk_vec(SEXP x, SEXPTYPE t, R_xlen_t n, int null_ok, const char *fn, const char *arg) {
  dd_chk_type(x, t, null_ok, fn, arg);
  if (!isNull(x) && XLENGTH(x) != n) dd_bad(fn, arg, "has the wrong length");
}

/* x a matrix of type t; nr / nc < 0: any. Returns nothing; use nrows/ncols */
void dd_chk_mat(SEXP x, SEXPTYPE t, int nr, int nc, int null_ok, const char *fn, const char *arg) {
  dd_chk_type(x, t, null_ok, fn, arg);
  if (isNull(x)) return;
  if (!isMatrix(x)) dd_bad(fn, arg, "must be a matrix");
  if ((nr >= 0 && nrows(x) != nr) || (nc >= 0 && ncols(x) != nc)) dd_bad(fn, arg, "has the wrong dimensions");
}

/* a whole number v in [lo, hi] (an element of a double options vector, say);
 * returns it as an int (lo, hi within int range) */
int dd_chk_whole(double v, double lo, double hi, const char *fn, const char *arg) {
  if (ISNAN(v) || v != floor(v) || v < lo || v > hi) {
    char msg[96];
    snprintf(msg, sizeof msg, "must be a whole number in [%.0f, %.0f]", lo, hi);
    dd_bad(fn, arg, msg);
  }
  return (int) v;
}

/* a scalar whole number in [lo, hi] (integer, double or logical) */
int dd_chk_int(SEXP x, int lo, int hi, const char *fn, const char *arg) {
  if ((TYPEOF(x) != INTSXP && TYPEOF(x) != REALSXP && TYPEOF(x) != LGLSXP) || XLENGTH(x) != 1)
    dd_bad(fn, arg, "must be a single number");
  return dd_chk_whole(asReal(x), lo, hi, fn, arg);
}

/* a scalar double, finite unless inf_ok (NaN never) */
double dd_chk_num(SEXP x, int inf_ok, const char *fn, const char *arg) {
  if ((TYPEOF(x) != INTSXP && TYPEOF(x) != REALSXP && TYPEOF(x) != LGLSXP) || XLENGTH(x) != 1)
    dd_bad(fn, arg, "must be a single number");
  double v = asReal(x);
  if (ISNAN(v) || (!inf_ok && !R_FINITE(v))) dd_bad(fn, arg, "must be a finite number");
  return v;
}

/* a scalar finite number > 0 (a count or scale that divides) */
double dd_chk_pos(SEXP x, const char *fn, const char *arg) {
  double v = dd_chk_num(x, 0, fn, arg);
  if (!(v > 0)) dd_bad(fn, arg, "must be positive");
  return v;
}

/* a double vector with no NaN (NA), and finite unless inf_ok: values that
 * decide a kernel's stopping rule (a NaN error estimate never converges) */
void dd_chk_finite(SEXP x, int inf_ok, const char *fn, const char *arg) {
  dd_chk_type(x, REALSXP, 0, fn, arg);
  const double *v = REAL(x);
  for (R_xlen_t i = 0, n = XLENGTH(x); i < n; i++)
    if (ISNAN(v[i]) || (!inf_ok && !R_FINITE(v[i]))) {
      char msg[96];
      snprintf(msg, sizeof msg, "has %s at position %.0f", ISNAN(v[i]) ? "NA/NaN" : "an infinite value", (double) i + 1);
      dd_bad(fn, arg, msg);
    }
}

/* an integer vector with n elements, each in [lo, hi] (no NA): codes and
 * indices used as subscripts */
void dd_chk_range(SEXP x, R_xlen_t n, int lo, int hi, const char *fn, const char *arg) {
  dd_chk_vec(x, INTSXP, n, 0, fn, arg);
  const int *v = INTEGER(x);
  for (R_xlen_t i = 0; i < n; i++)
    if (v[i] == NA_INTEGER || v[i] < lo || v[i] > hi) {
      char msg[128];
      if (v[i] == NA_INTEGER) snprintf(msg, sizeof msg, "has NA at position %.0f", (double) i + 1);
      else snprintf(msg, sizeof msg, "has %d at position %.0f, outside [%d, %d]", v[i], (double) i + 1, lo, hi);
      dd_bad(fn, arg, msg);
    }
}

/* integer codes with n elements, each in [0, nlev) (no NA) */
void dd_chk_codes(SEXP x, R_xlen_t n, int nlev, const char *fn, const char *arg) {
  dd_chk_vec(x, INTSXP, n, 0, fn, arg);
  const int *v = INTEGER(x);
  for (R_xlen_t i = 0; i < n; i++)
    if (v[i] < 0 || v[i] >= nlev) dd_bad(fn, arg, "has a code out of range or NA");
}

/* a list of len elements (len < 0: any) */
void dd_chk_list(SEXP x, int len, const char *fn, const char *arg) {
  if (TYPEOF(x) != VECSXP) dd_bad(fn, arg, "must be a list");
  if (len >= 0 && LENGTH(x) != len) dd_bad(fn, arg, "has the wrong length");
}

/* n long doubles from R_alloc, aligned to 16 bytes (alignof(long double) on
 * x86-64); R_alloc's blocks are aligned to 8 only */
long double *dd_alloc_ld(R_xlen_t n) {
  char *raw = R_alloc((size_t) (n > 0 ? n : 1) * sizeof(long double) + 16, 1);
  return (long double *) (((uintptr_t) raw + 15) & ~(uintptr_t) 15);
}
