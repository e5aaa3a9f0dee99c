/* Small helpers shared by the entry points. */
#include "diffdiff.h"

/* a named list from n values; the values must be protected by the caller or
 * fresh (they are protected here while the list is built) */
SEXP dd_named_list(int n, const char **names, SEXP *values) {
  SEXP out = PROTECT(allocVector(VECSXP, n));
  SEXP nms = PROTECT(allocVector(STRSXP, n));
  for (int i = 0; i < n; i++) {
    SET_VECTOR_ELT(out, i, values[i]);
    SET_STRING_ELT(nms, i, mkChar(names[i]));
  }
  setAttrib(out, R_NamesSymbol, nms);
  UNPROTECT(2);
  return out;
}
