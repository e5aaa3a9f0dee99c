/* Wild cluster bootstrap with the null imposed (WCR) for one coefficient k.
 *
 * Notation (weighted metric W = diag(w)): D the fixed-effect dummies, X the
 * regressors after absorbing D, z = M_{D,X_-k} x_k (the FWL residual of x_k)
 * and a = M_{D,X_-k} y. Under H0: beta_k = r the restricted residuals are
 * u(r) = a - r z. A bootstrap sample is y* = fitted_r + v_g u(r), v_g drawn per
 * cluster; the refit on y* (with the fixed effects) gives
 *   beta*_k - r      = z'W(v u(r)) / z'Wz,
 *   residuals e*(r)  = M_X M_D (v u(r)),
 *   cluster scores s*_g(r) = z_g' W_g e*_g(r),
 * all linear in r. So each replicate is summarised by five numbers
 *   na = z'W(v a), nz = z'W(v z), Saa = sum s_a,g^2, Saz, Szz,
 * and its t statistic at any r is (na - r nz) / sqrt(c (Saa - 2 r Saz + r^2 Szz))
 * for the small-sample factor c. Test inversion over r then costs O(B) per r.
 * M_D is applied by re-absorbing the fixed effects (demean.c), unless every FE dimension
 * is nested in the clusters, where v u is already orthogonal to D.
 * Replicates run in parallel; each is computed by one thread from its own
 * random stream, so the output does not depend on the thread count. With
 * seed (two numbers, see dd_seed_arg) and first, the call computes replicates
 * first, ..., first + B - 1 of that seed: a bootstrap run in batches gives
 * the same replicates as one call. */
#include "diffdiff.h"
#include <math.h>
#include <string.h>

SEXP C_wild_boot(SEXP z_, SEXP a_, SEXP X_, SEXP bread_, SEXP w_, SEXP cl_, SEXP G_,
                 SEXP fe_, SEXP nlev_, SEXP feopt_, SEXP B_, SEXP type_, SEXP seed_, SEXP first_) {
  const char *fn = "C_wild_boot";
  dd_chk_mat(X_, REALSXP, -1, -1, 0, fn, "X");
  const int n = nrows(X_), k = ncols(X_);
  dd_chk_vec(z_, REALSXP, n, 0, fn, "z");
  dd_chk_vec(a_, REALSXP, n, 0, fn, "a");
  dd_chk_mat(bread_, REALSXP, k, k, 0, fn, "bread");
  dd_chk_vec(w_, REALSXP, n, 1, fn, "w");
  const int G = dd_chk_int(G_, 1, n > 0 ? n : 1, fn, "G"), B = dd_chk_int(B_, 0, DD_INT_MAX, fn, "B");
  const int type = dd_chk_int(type_, 1, 3, fn, "type");
  const int first = dd_chk_int(first_, 0, DD_INT_MAX - B, fn, "first");
  dd_chk_codes(cl_, n, G, fn, "cl");
  if (!isNull(fe_)) dd_fe_check(fe_, nlev_, n, fn);
  dd_chk_vec(feopt_, REALSXP, 2, 0, fn, "feopt");
  if (XLENGTH(z_) != n || XLENGTH(a_) != n || XLENGTH(cl_) != n ||
      nrows(bread_) != k || ncols(bread_) != k || (!isNull(w_) && XLENGTH(w_) != n))
    error("internal error in bootstrap.c: length mismatch; please report");
  const double *z = REAL(z_), *a = REAL(a_), *X = REAL(X_), *bread = REAL(bread_);
  const double *w = isNull(w_) ? NULL : REAL(w_);
  const int *cl = INTEGER(cl_);
  const int demean = !isNull(fe_);
  const double fetol = REAL(feopt_)[0];
  const int femaxit = (int) REAL(feopt_)[1];

  dd_fe F; memset(&F, 0, sizeof F);
  if (demean) {
    int Q = LENGTH(fe_);
    int *off = (int *) R_alloc(Q, sizeof(int));
    F.n = n; F.Q = Q; F.fe = dd_fe_pointers(fe_, n); F.nlev = INTEGER(nlev_); F.w = w;
    F.sw = dd_fe_levelsums(n, Q, F.fe, F.nlev, w, off, &F.sumL);
    F.off = off;
  }
  const size_t fescr = demean ? dd_demean_scratch(&F) : 0;
  const size_t per = (size_t) 4 * n + 3 * (size_t) G + 2 * (size_t) k + fescr;
  const int nth = dd_nthreads(B, (double) B * n * (demean ? 8 : 1));
  double *scratch = (double *) R_alloc(per * nth, sizeof(double));

  const uint64_t seed = dd_seed_arg(seed_, fn);

  SEXP out = PROTECT(allocMatrix(REALSXP, B, 5));
  double *O = REAL(out);
  int *nconv = (int *) R_alloc(nth, sizeof(int));
  memset(nconv, 0, sizeof(int) * nth);

  dd_chunks ch_b;
  dd_chunks_init(&ch_b, B, nth);
  while (dd_chunks_next(&ch_b)) {
  const int b_lo = ch_b.lo, b_hi = ch_b.hi;   /* locals: the compiler keeps them out of memory */
#ifdef _OPENMP
#pragma omp parallel for num_threads(nth) schedule(dynamic, 1)
#endif
  for (int b = b_lo; b < b_hi; b++) {
    int tid = dd_tid();
    double *s = scratch + per * tid;
    double *va = s, *vz = s + n, *ea = s + 2 * (size_t) n, *ez = s + 3 * (size_t) n;
    double *v = s + 4 * (size_t) n, *sa = v + G, *sz = sa + G;
    double *ta = sz + G, *tz = ta + k, *fs = tz + k;
    dd_rng g;
    dd_rng_init(&g, seed, (uint64_t) first + (uint64_t) b);
    dd_boot_weights(&g, type, v, G);
    double na = 0.0, nz = 0.0;
    for (int i = 0; i < n; i++) {
      double vi = v[cl[i]], wi = w ? w[i] : 1.0;
      va[i] = vi * a[i]; vz[i] = vi * z[i];
      na += wi * z[i] * va[i]; nz += wi * z[i] * vz[i];
    }
    /* X'W(v u): X is W-orthogonal to D, so the raw products suffice */
    for (int j = 0; j < k; j++) {
      const double *xj = X + (R_xlen_t) j * n; double s1 = 0.0, s2 = 0.0;
      for (int i = 0; i < n; i++) { double wx = (w ? w[i] : 1.0) * xj[i]; s1 += wx * va[i]; s2 += wx * vz[i]; }
      ta[j] = s1; tz[j] = s2;
    }
    if (demean) {
      int it;
      if (!dd_demean_col(&F, va, ea, fs, fetol, femaxit, &it)) nconv[tid]++;
      if (!dd_demean_col(&F, vz, ez, fs, fetol, femaxit, &it)) nconv[tid]++;
    } else {
      memcpy(ea, va, sizeof(double) * n); memcpy(ez, vz, sizeof(double) * n);
    }
    /* e = M_D(v u) - X bread X'W(v u) */
    for (int j = 0; j < k; j++) {
      double ca = 0.0, cz = 0.0;
      for (int l = 0; l < k; l++) { ca += bread[j + (R_xlen_t) l * k] * ta[l]; cz += bread[j + (R_xlen_t) l * k] * tz[l]; }
      const double *xj = X + (R_xlen_t) j * n;
      for (int i = 0; i < n; i++) { ea[i] -= ca * xj[i]; ez[i] -= cz * xj[i]; }
    }
    memset(sa, 0, sizeof(double) * G); memset(sz, 0, sizeof(double) * G);
    for (int i = 0; i < n; i++) {
      double wz = (w ? w[i] : 1.0) * z[i];
      sa[cl[i]] += wz * ea[i]; sz[cl[i]] += wz * ez[i];
    }
    double Saa = 0.0, Saz = 0.0, Szz = 0.0;
    for (int h = 0; h < G; h++) { Saa += sa[h] * sa[h]; Saz += sa[h] * sz[h]; Szz += sz[h] * sz[h]; }
    O[b] = na; O[b + B] = nz; O[b + 2 * (R_xlen_t) B] = Saa;
    O[b + 3 * (R_xlen_t) B] = Saz; O[b + 4 * (R_xlen_t) B] = Szz;
  }
  }
  int nc = 0;
  for (int t = 0; t < nth; t++) nc += nconv[t];
  SEXP nc_ = PROTECT(ScalarInteger(nc));   /* protected: install() may allocate */
  setAttrib(out, install("not_converged"), nc_);
  UNPROTECT(2);
  return out;
}
