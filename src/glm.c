/* The GLM kernel's normal equations for sparse designs (did_etwfe's cell
 * indicators, interactions and slopes: a few nonzeros per row). The design
 * is converted once to compressed rows (C_csr), then every IRLS step forms
 * X'WX and X'Wz from the rows' nonzeros (C_xtwx): n nnz^2 operations
 * instead of n p^2. */
#include "diffdiff.h"

/* X (n x p, column-major) to compressed sparse rows: rowptr (n + 1), col
 * (0-based), val. Columns are read in order (cache-friendly). */
SEXP C_csr(SEXP X_) {
  const char *fn = "C_csr";
  dd_chk_mat(X_, REALSXP, -1, -1, 0, fn, "X");
  const int n = nrows(X_), p = ncols(X_);
  const double *X = REAL(X_);
  SEXP rp_ = PROTECT(allocVector(INTSXP, (R_xlen_t) n + 1));
  int *rp = INTEGER(rp_);
  memset(rp, 0, sizeof(int) * ((size_t) n + 1));
  double nnz = 0;
  for (int j = 0; j < p; j++) {
    const double *xj = X + (R_xlen_t) n * j;
    for (int i = 0; i < n; i++) if (xj[i] != 0.0) { rp[i + 1]++; nnz++; }
  }
  if (nnz > DD_INT_MAX) error("internal error in %s: too many nonzeros; please report", fn);
  for (int i = 0; i < n; i++) rp[i + 1] += rp[i];
  SEXP col_ = PROTECT(allocVector(INTSXP, (R_xlen_t) nnz)), val_ = PROTECT(allocVector(REALSXP, (R_xlen_t) nnz));
  int *col = INTEGER(col_);
  double *val = REAL(val_);
  int *fill = (int *) R_alloc(n > 0 ? n : 1, sizeof(int));
  memcpy(fill, rp, sizeof(int) * (size_t) n);
  for (int j = 0; j < p; j++) {
    const double *xj = X + (R_xlen_t) n * j;
    for (int i = 0; i < n; i++) if (xj[i] != 0.0) { col[fill[i]] = j; val[fill[i]] = xj[i]; fill[i]++; }
  }
  SEXP p_ = PROTECT(ScalarInteger(p));
  const char *nm[4] = {"rowptr", "col", "val", "p"};
  SEXP v[4] = {rp_, col_, val_, p_};
  SEXP out = dd_named_list(4, nm, v);
  UNPROTECT(4);
  return out;
}

/* A = X'WX (p x p) and r = X'Wz from the compressed rows; w, z of length n. */
SEXP C_xtwx(SEXP csr_, SEXP w_, SEXP z_) {
  const char *fn = "C_xtwx";
  dd_chk_list(csr_, 4, fn, "csr");
  SEXP rp_ = VECTOR_ELT(csr_, 0), col_ = VECTOR_ELT(csr_, 1), val_ = VECTOR_ELT(csr_, 2);
  dd_chk_type(rp_, INTSXP, 0, fn, "rowptr");
  dd_chk_type(col_, INTSXP, 0, fn, "col");
  const int n = LENGTH(rp_) - 1;
  const int p = dd_chk_int(VECTOR_ELT(csr_, 3), 1, 100000, fn, "p");
  dd_chk_vec(w_, REALSXP, n, 0, fn, "w");
  dd_chk_vec(z_, REALSXP, n, 0, fn, "z");
  const int *rp = INTEGER(rp_), *col = INTEGER(col_);
  const double *val = REAL(val_), *w = REAL(w_), *z = REAL(z_);
  const R_xlen_t nnz = XLENGTH(col_);
  dd_chk_vec(val_, REALSXP, nnz, 0, fn, "val");
  if (rp[0] != 0 || rp[n] != nnz) error("internal error in %s: rowptr; please report", fn);
  for (int i = 0; i < n; i++) if (rp[i + 1] < rp[i]) error("internal error in %s: rowptr; please report", fn);
  for (R_xlen_t q = 0; q < nnz; q++) if (col[q] < 0 || col[q] >= p) error("internal error in %s: col; please report", fn);
  SEXP A_ = PROTECT(allocMatrix(REALSXP, p, p)), r_ = PROTECT(allocVector(REALSXP, p));
  double *A = REAL(A_), *r = REAL(r_);
  memset(A, 0, sizeof(double) * (size_t) p * p);
  memset(r, 0, sizeof(double) * (size_t) p);
  double t_last = 0;
  for (int i = 0; i < n; i++) {
    if ((i & 65535) == 0) dd_check_interrupt(&t_last);
    const double wi = w[i];
    for (int a = rp[i]; a < rp[i + 1]; a++) {
      const double va = wi * val[a];
      const int ca = col[a];
      r[ca] += va * z[i];
      for (int b = rp[i]; b <= a; b++) {
        const int cb = col[b];
        /* lower or upper: store in (max, min) then symmetrise */
        if (ca >= cb) A[ca + (R_xlen_t) p * cb] += va * val[b];
        else A[cb + (R_xlen_t) p * ca] += va * val[b];
      }
    }
  }
  for (int j = 0; j < p; j++) for (int k = j + 1; k < p; k++) A[j + (R_xlen_t) p * k] = A[k + (R_xlen_t) p * j];
  const char *nm[2] = {"A", "r"};
  SEXP v[2] = {A_, r_};
  SEXP out = dd_named_list(2, nm, v);
  UNPROTECT(2);
  return out;
}
