/* Design-based (Taylor-series) variance of survey totals, as the survey
 * package's svyrecvar() computes it (onestage()/onestrat()).
 *
 * For one sampling stage: x (n x k) holds each observation's contribution to
 * k totals (weighted values, or influence functions); the contributions are
 * summed to PSU totals z_c, and each stratum h with n_h sampled PSUs and N_h
 * population PSUs adds
 *   f_h n_h / (n_h - 1) sum_c (z_c - zbar_h)(z_c - zbar_h)',  f_h = 1 - n_h / N_h
 * (f_h = 1 without a finite population correction). A stratum with one PSU
 * ("lonely") follows survey's options: "fail" (error, reported by the
 * caller), "remove" and "certainty" (no contribution), "adjust" (the PSU
 * total centred at zero, the population mean of the contributions, with
 * f_h as scale), "average" (the stratum is left out and the sum scaled by
 * strata / strata with variance, within each group of strata that share a
 * parent cluster; at stage 1 all strata form one group).
 * mult (per stratum) multiplies each stratum's term: later stages are
 * weighted by the sampling fractions of the stages above (svyrecvar's
 * nPSU / fpc factor). */
#include "diffdiff.h"
#include <math.h>
#include <string.h>
#include <float.h>

enum { LONELY_FAIL = 0, LONELY_REMOVE = 1, LONELY_CERTAINTY = 2, LONELY_ADJUST = 3, LONELY_AVERAGE = 4 };

/* strata: 0-based stratum of each observation (ns strata); clus: 0-based
 * cluster (nc clusters, each inside one stratum); npsu, popsize (NA or Inf:
 * no fpc), mult, group (0-based, ng groups): per stratum. Returns the k x k
 * variance, with attribute "lonely" = first 1-based stratum with one PSU
 * (0 if none). With rows = TRUE it returns instead the nc x k matrix R of
 * the PSU totals centred within strata and scaled by the square roots of
 * the stratum factors (the fpc, n_h / (n_h - 1), the lonely-PSU rule and the
 * group's rescaling), so that R'R is that variance: the rows on which the
 * multiplier bootstrap of survey designs draws one multiplier per PSU. */
SEXP C_svy_onestage(SEXP x_, SEXP strata_, SEXP clus_, SEXP nc_, SEXP npsu_, SEXP popsize_,
                    SEXP mult_, SEXP group_, SEXP ng_, SEXP lonely_, SEXP rows_) {
  const char *fn = "C_svy_onestage";
  dd_chk_mat(x_, REALSXP, -1, -1, 0, fn, "x");
  dd_chk_type(npsu_, INTSXP, 0, fn, "npsu");
  {
    const int ns0 = LENGTH(npsu_), nc0 = dd_chk_int(nc_, 0, nrows(x_) > 0 ? nrows(x_) : 1, fn, "nc");
    const int ng0 = dd_chk_int(ng_, 1, ns0 > 0 ? ns0 : 1, fn, "ng");
    dd_chk_codes(strata_, nrows(x_), ns0, fn, "strata");
    dd_chk_codes(clus_, nrows(x_), nc0, fn, "clus");
    dd_chk_codes(group_, ns0, ng0, fn, "group");
    dd_chk_vec(popsize_, REALSXP, ns0, 0, fn, "popsize");
    dd_chk_vec(mult_, REALSXP, ns0, 0, fn, "mult");
    dd_chk_int(lonely_, 0, 4, fn, "lonely");
    dd_chk_int(rows_, 0, 1, fn, "rows");
    if ((double) ng0 * ncols(x_) * ncols(x_) > 1e9) error("internal error in %s: `ng` too large; please report", fn);
  }
  const int want_rows = asInteger(rows_);
  const int n = nrows(x_), k = ncols(x_), ns = LENGTH(npsu_), nc = asInteger(nc_), ng = asInteger(ng_);
  const int lonely = asInteger(lonely_);
  const double *x = REAL(x_), *popsize = REAL(popsize_), *mult = REAL(mult_);
  const int *strata = INTEGER(strata_), *clus = INTEGER(clus_), *npsu = INTEGER(npsu_), *group = INTEGER(group_);
  if (LENGTH(strata_) != n || LENGTH(clus_) != n || LENGTH(popsize_) != ns || LENGTH(mult_) != ns ||
      LENGTH(group_) != ns)
    error("internal error in survey.c: length mismatch; please report");
  /* PSU totals and each PSU's stratum */
  double *z = (double *) R_alloc((size_t) nc * k + 1, sizeof(double));
  int *cs = (int *) R_alloc(nc + 1, sizeof(int));
  memset(z, 0, sizeof(double) * ((size_t) nc * k + 1));
  for (int c = 0; c < nc; c++) cs[c] = -1;
  for (int i = 0; i < n; i++) {
    const int c = clus[i];
    if (c < 0 || c >= nc || strata[i] < 0 || strata[i] >= ns) error("internal error in survey.c: code out of range; please report");
    cs[c] = strata[i];
    for (int a = 0; a < k; a++) z[c + (size_t) nc * a] += x[i + (R_xlen_t) a * n];
  }
  /* per stratum: mean of the PSU totals */
  double *mean = (double *) R_alloc((size_t) ns * k + 1, sizeof(double));
  int *cnt = (int *) R_alloc(ns + 1, sizeof(int));
  memset(mean, 0, sizeof(double) * ((size_t) ns * k + 1));
  memset(cnt, 0, sizeof(int) * (ns + 1));
  for (int c = 0; c < nc; c++) {
    const int h = cs[c];
    if (h < 0) continue;
    cnt[h]++;
    for (int a = 0; a < k; a++) mean[h + (size_t) ns * a] += z[c + (size_t) nc * a];
  }
  for (int h = 0; h < ns; h++) for (int a = 0; a < k; a++) if (cnt[h] > 0) mean[h + (size_t) ns * a] /= cnt[h];
  /* per stratum variance terms, accumulated by group */
  double *Vg = (double *) R_alloc((size_t) ng * k * k + 1, sizeof(double));
  int *nstr = (int *) R_alloc(ng + 1, sizeof(int)), *nok = (int *) R_alloc(ng + 1, sizeof(int));
  memset(Vg, 0, sizeof(double) * ((size_t) ng * k * k + 1));
  memset(nstr, 0, sizeof(int) * (ng + 1)); memset(nok, 0, sizeof(int) * (ng + 1));
  int first_lonely = 0;
  double *scale = (double *) R_alloc(ns + 1, sizeof(double));
  char *use = (char *) R_alloc(ns + 1, 1), *center = (char *) R_alloc(ns + 1, 1);
  for (int h = 0; h < ns; h++) {
    const int g = group[h];
    if (cnt[h] == 0) { use[h] = 0; continue; }
    nstr[g]++;
    const double N = popsize[h];
    const double f = (ISNAN(N) || !R_FINITE(N)) ? 1.0 : (N - npsu[h]) / N;
    use[h] = 1; center[h] = 1;
    scale[h] = (npsu[h] > 1 ? f * npsu[h] / (npsu[h] - 1.0) : f) * mult[h];
    if (f < 1e-7) { use[h] = 0; nok[g]++; continue; }     /* census stratum: no variance */
    if (npsu[h] == 1) {
      if (!first_lonely) first_lonely = h + 1;
      if (lonely == LONELY_AVERAGE) { use[h] = 0; continue; }
      if (lonely == LONELY_ADJUST) center[h] = 0;
      if (lonely == LONELY_REMOVE || lonely == LONELY_CERTAINTY || lonely == LONELY_FAIL) { use[h] = 0; nok[g]++; continue; }
    }
    nok[g]++;
  }
  if (want_rows) {
    SEXP out = PROTECT(allocMatrix(REALSXP, nc, k));
    double *O = REAL(out);
    memset(O, 0, sizeof(double) * (size_t) nc * k);
    for (int c = 0; c < nc; c++) {
      const int h = cs[c];
      if (h < 0 || !use[h] || nok[group[h]] == 0) continue;
      const double sq = sqrt(scale[h] * (double) nstr[group[h]] / nok[group[h]]);
      for (int a = 0; a < k; a++)
        O[c + (size_t) nc * a] = sq * (z[c + (size_t) nc * a] - (center[h] ? mean[h + (size_t) ns * a] : 0.0));
    }
    SEXP lonely_s = PROTECT(ScalarInteger(first_lonely));   /* protected: install() may allocate */
    setAttrib(out, install("lonely"), lonely_s);
    UNPROTECT(2);
    return out;
  }
  for (int c = 0; c < nc; c++) {
    const int h = cs[c];
    if (h < 0 || !use[h]) continue;
    double *V = Vg + (size_t) group[h] * k * k;
    for (int a = 0; a < k; a++) {
      const double da = z[c + (size_t) nc * a] - (center[h] ? mean[h + (size_t) ns * a] : 0.0);
      for (int b = 0; b <= a; b++) {
        const double db = z[c + (size_t) nc * b] - (center[h] ? mean[h + (size_t) ns * b] : 0.0);
        V[a + (size_t) k * b] += scale[h] * da * db;
      }
    }
  }
  SEXP out = PROTECT(allocMatrix(REALSXP, k, k));
  double *O = REAL(out);
  memset(O, 0, sizeof(double) * (size_t) k * k);
  for (int g = 0; g < ng; g++) {
    if (nok[g] == 0) continue;
    const double r = (double) nstr[g] / nok[g];
    for (int a = 0; a < k; a++) for (int b = 0; b <= a; b++) O[a + (size_t) k * b] += Vg[(size_t) g * k * k + a + (size_t) k * b] * r;
  }
  for (int a = 0; a < k; a++) for (int b = a + 1; b < k; b++) O[a + (size_t) k * b] = O[b + (size_t) k * a];
  SEXP lonely_s = PROTECT(ScalarInteger(first_lonely));   /* protected: install() may allocate */
  setAttrib(out, install("lonely"), lonely_s);
  UNPROTECT(2);
  return out;
}

/* Domain (cell) variances of totals for one sampling stage: x (n) holds each
 * observation's contribution to the total of its domain dom[i] (0-based, nd
 * domains; the contribution is zero in every other domain, as survey's
 * domain estimation has it). PSU-by-domain totals z_cd are formed by
 * sorting the observations by (domain, PSU); a stratum h then adds
 *   scale_h (sum_c z_cd^2 - (sum_c z_cd)^2 / n_h)
 * to domain d, which is scale_h sum_c (z_cd - zbar_hd)^2 over all n_h PSUs
 * of the stratum (PSUs without members of d have z_cd = 0). Strata, PSUs,
 * fpc, multipliers and lonely-PSU rules as C_svy_onestage (the "average"
 * rescaling over all strata of the stage). Returns nd variances; attribute
 * "lonely" as C_svy_onestage. */
SEXP C_svy_domain(SEXP x_, SEXP dom_, SEXP nd_, SEXP strata_, SEXP clus_, SEXP nc_, SEXP npsu_,
                  SEXP popsize_, SEXP mult_, SEXP lonely_) {
  const char *fn = "C_svy_domain";
  dd_chk_type(x_, REALSXP, 0, fn, "x");
  dd_chk_type(npsu_, INTSXP, 0, fn, "npsu");
  {
    const int n0 = LENGTH(x_), ns0 = LENGTH(npsu_), nc0 = dd_chk_int(nc_, 0, n0 > 0 ? n0 : 1, fn, "nc");
    const int nd0 = dd_chk_int(nd_, 0, n0 > 0 ? n0 : 1, fn, "nd");
    dd_chk_codes(dom_, n0, nd0, fn, "dom");
    dd_chk_codes(strata_, n0, ns0, fn, "strata");
    dd_chk_codes(clus_, n0, nc0, fn, "clus");
    dd_chk_vec(popsize_, REALSXP, ns0, 0, fn, "popsize");
    dd_chk_vec(mult_, REALSXP, ns0, 0, fn, "mult");
    dd_chk_int(lonely_, 0, 4, fn, "lonely");
  }
  const int n = LENGTH(x_), nd = asInteger(nd_), ns = LENGTH(npsu_), nc = asInteger(nc_), lonely = asInteger(lonely_);
  const double *x = REAL(x_), *popsize = REAL(popsize_), *mult = REAL(mult_);
  const int *dom = INTEGER(dom_), *strata = INTEGER(strata_), *clus = INTEGER(clus_), *npsu = INTEGER(npsu_);
  if (LENGTH(dom_) != n || LENGTH(strata_) != n || LENGTH(clus_) != n || LENGTH(popsize_) != ns || LENGTH(mult_) != ns)
    error("internal error in survey.c: length mismatch; please report");
  /* stratum of each PSU; scale and use per stratum */
  int *cs = (int *) R_alloc(nc + 1, sizeof(int));
  for (int c = 0; c < nc; c++) cs[c] = -1;
  for (int i = 0; i < n; i++) {
    if (clus[i] < 0 || clus[i] >= nc || strata[i] < 0 || strata[i] >= ns || dom[i] < 0 || dom[i] >= nd)
      error("internal error in survey.c: code out of range; please report");
    cs[clus[i]] = strata[i];
  }
  double *scale = (double *) R_alloc(ns + 1, sizeof(double));
  char *use = (char *) R_alloc(ns + 1, 1), *center = (char *) R_alloc(ns + 1, 1);
  int nstr = 0, nok = 0, first_lonely = 0;
  int *seen = (int *) R_alloc(ns + 1, sizeof(int));
  memset(seen, 0, sizeof(int) * (ns + 1));
  for (int c = 0; c < nc; c++) if (cs[c] >= 0) seen[cs[c]] = 1;
  for (int h = 0; h < ns; h++) {
    use[h] = 0; center[h] = 1; scale[h] = 0.0;
    if (!seen[h]) continue;
    nstr++;
    const double N = popsize[h];
    const double f = (ISNAN(N) || !R_FINITE(N)) ? 1.0 : (N - npsu[h]) / N;
    scale[h] = (npsu[h] > 1 ? f * npsu[h] / (npsu[h] - 1.0) : f) * mult[h];
    if (f < 1e-7) { nok++; continue; }
    if (npsu[h] == 1) {
      if (!first_lonely) first_lonely = h + 1;
      if (lonely == LONELY_AVERAGE) continue;
      if (lonely != LONELY_ADJUST) { nok++; continue; }
      center[h] = 0;
    }
    use[h] = 1; nok++;
  }
  /* counting sort of the observations by domain, then PSU totals within domain */
  int *start = (int *) R_alloc(nd + 1, sizeof(int)), *ord = (int *) R_alloc(n + 1, sizeof(int));
  memset(start, 0, sizeof(int) * (nd + 1));
  for (int i = 0; i < n; i++) start[dom[i] + 1]++;
  for (int d = 0; d < nd; d++) start[d + 1] += start[d];
  {
    int *fill = (int *) R_alloc(nd + 1, sizeof(int));
    memcpy(fill, start, sizeof(int) * (nd + 1));
    for (int i = 0; i < n; i++) ord[fill[dom[i]]++] = i;
  }
  SEXP out = PROTECT(allocVector(REALSXP, nd));
  double *V = REAL(out);
  const int nth = dd_nthreads(nd, (double) n * 4.0);
  /* per thread: PSU totals (nc), touched PSU list, stratum sums */
  double *zall = (double *) R_alloc((size_t) (nc + 1) * nth, sizeof(double));
  double *s1all = (double *) R_alloc((size_t) (ns + 1) * nth, sizeof(double));
  double *s2all = (double *) R_alloc((size_t) (ns + 1) * nth, sizeof(double));
  int *touch = (int *) R_alloc((size_t) (nc + 1) * nth, sizeof(int)), *htouch = (int *) R_alloc((size_t) (ns + 1) * nth, sizeof(int));
  char *hmark = (char *) R_alloc((size_t) (ns + 1) * nth, 1);
  int *mark = (int *) R_alloc((size_t) (nc + 1) * nth, sizeof(int));
  memset(mark, 0, sizeof(int) * (size_t) (nc + 1) * nth);
  memset(zall, 0, sizeof(double) * (size_t) (nc + 1) * nth);
  memset(s1all, 0, sizeof(double) * (size_t) (ns + 1) * nth);
  memset(s2all, 0, sizeof(double) * (size_t) (ns + 1) * nth);
  memset(hmark, 0, (size_t) (ns + 1) * nth);
  const double rat = nok > 0 ? (double) nstr / nok : 0.0;
  dd_chunks ch_d;
  dd_chunks_init(&ch_d, nd, nth);
  while (dd_chunks_next(&ch_d)) {
  const int d_lo = ch_d.lo, d_hi = ch_d.hi;   /* locals: the compiler keeps them out of memory */
#ifdef _OPENMP
#pragma omp parallel for num_threads(nth) schedule(dynamic, 8)
#endif
  for (int d = d_lo; d < d_hi; d++) {
    const int tid = dd_tid();
    double *z = zall + (size_t) (nc + 1) * tid, *s1 = s1all + (size_t) (ns + 1) * tid, *s2 = s2all + (size_t) (ns + 1) * tid;
    int *tc = touch + (size_t) (nc + 1) * tid, *th = htouch + (size_t) (ns + 1) * tid;
    char *hm = hmark + (size_t) (ns + 1) * tid;
    int ntc = 0, nth2 = 0;
    int *mk = mark + (size_t) (nc + 1) * tid;
    for (int q = start[d]; q < start[d + 1]; q++) {
      const int i = ord[q], c = clus[i];
      if (mk[c] != d + 1) { mk[c] = d + 1; tc[ntc++] = c; }
      z[c] += x[i];
    }
    for (int u = 0; u < ntc; u++) {
      const int c = tc[u];
      const double zc = z[c];
      z[c] = 0.0;
      const int h = cs[c];
      if (!use[h]) continue;
      if (!hm[h]) { hm[h] = 1; th[nth2++] = h; }
      s1[h] += zc; s2[h] += zc * zc;
    }
    double v = 0.0;
    for (int u = 0; u < nth2; u++) {
      const int h = th[u];
      const double ss = center[h] ? s2[h] - s1[h] * s1[h] / npsu[h] : s2[h];
      v += scale[h] * ss;
      s1[h] = s2[h] = 0.0; hm[h] = 0;
    }
    V[d] = v * rat;
  }
  }
  SEXP lonely_s = PROTECT(ScalarInteger(first_lonely));   /* protected: install() may allocate */
  setAttrib(out, install("lonely"), lonely_s);
  UNPROTECT(2);
  return out;
}

/* out (R x q) = W' M for the replicate weights W[rows, cols] (x mult, by
 * row; rows NULL: all) and columns M (length(rows) x q): the replicate
 * totals of q products, one replicate per task (zero weights skipped; each
 * entry summed in row order, so thread-count independent). Indices 1-based;
 * the design's weight matrix is read in place, not copied per batch. */
SEXP C_svy_rep_crossprod(SEXP W_, SEXP M_, SEXP cols_, SEXP rows_, SEXP mult_) {
  const char *fn = "C_svy_rep_crossprod";
  dd_chk_mat(W_, REALSXP, -1, -1, 0, fn, "W");
  const int nW = nrows(W_), RW = ncols(W_);
  const int n = isNull(rows_) ? nW : LENGTH(rows_);
  dd_chk_mat(M_, REALSXP, n, -1, 0, fn, "M");
  dd_chk_type(cols_, INTSXP, 0, fn, "cols");
  if (!isNull(rows_)) dd_chk_type(rows_, INTSXP, 0, fn, "rows");
  if (!isNull(mult_)) dd_chk_vec(mult_, REALSXP, n, 0, fn, "mult");
  const int R = LENGTH(cols_), q = ncols(M_);
  const int *cols = INTEGER(cols_), *rows = isNull(rows_) ? NULL : INTEGER(rows_);
  const double *mult = isNull(mult_) ? NULL : REAL(mult_);
  for (int r = 0; r < R; r++)
    if (cols[r] < 1 || cols[r] > RW) error("internal error in %s: column %d out of range; please report", fn, cols[r]);
  if (rows) for (int i = 0; i < n; i++)
    if (rows[i] < 1 || rows[i] > nW) error("internal error in %s: row %d out of range; please report", fn, rows[i]);
  const double *W = REAL(W_), *M = REAL(M_);
  double *Mt = (double *) R_alloc((size_t) n * q + 1, sizeof(double));   /* row-major copy */
  for (int k = 0; k < q; k++) for (int i = 0; i < n; i++) Mt[(size_t) i * q + k] = M[i + (R_xlen_t) k * n];
  SEXP out = PROTECT(allocMatrix(REALSXP, R, q));
  double *O = REAL(out);
  /* replicates in blocks of four sharing each row's loads; every
   * accumulator still adds its rows in row order and skips the rows whose
   * weight is zero, so each entry is the same sum as one replicate at a time */
  const int nblk = (R + 3) / 4;
  const int nth = dd_nthreads(nblk, (double) n * q * R);
  double *acc = (double *) R_alloc((size_t) 4 * q * nth + 1, sizeof(double));
  dd_chunks ch_r;
  dd_chunks_init(&ch_r, nblk, nth);
  while (dd_chunks_next(&ch_r)) {
  const int b_lo = ch_r.lo, b_hi = ch_r.hi;   /* locals: the compiler keeps them out of memory */
#ifdef _OPENMP
#pragma omp parallel for num_threads(nth) schedule(static)
#endif
  for (int b = b_lo; b < b_hi; b++) {
    const int r0 = 4 * b, nr = R - r0 < 4 ? R - r0 : 4;
    double *a = acc + (size_t) 4 * q * dd_tid();
    memset(a, 0, sizeof(double) * 4 * q);
    double *a0 = a, *a1 = a + q, *a2 = a + 2 * q, *a3 = a + 3 * q;
    const double *w[4];
    for (int j = 0; j < 4; j++) w[j] = W + (R_xlen_t) (cols[r0 + (j < nr ? j : 0)] - 1) * nW;
    for (int i = 0; i < n; i++) {
      /* the analysis weight of row i in replicate r: W[rows[i], cols[r]] (x mult[i]) */
      const int ri = rows ? rows[i] - 1 : i;
      double wi[4];
      for (int j = 0; j < 4; j++) { wi[j] = w[j][ri]; if (mult) wi[j] *= mult[i]; }
      const double *m = Mt + (size_t) i * q;
      if (nr == 4 && wi[0] != 0.0 && wi[1] != 0.0 && wi[2] != 0.0 && wi[3] != 0.0) {
        const double u0 = wi[0], u1 = wi[1], u2 = wi[2], u3 = wi[3];
        for (int k = 0; k < q; k++) {
          const double mk = m[k];
          a0[k] += u0 * mk; a1[k] += u1 * mk; a2[k] += u2 * mk; a3[k] += u3 * mk;
        }
      } else {
        for (int j = 0; j < nr; j++) {
          if (wi[j] == 0.0) continue;
          double *aj = a + (size_t) j * q;
          const double u = wi[j];
          for (int k = 0; k < q; k++) aj[k] += u * m[k];
        }
      }
    }
    for (int j = 0; j < nr; j++)
      for (int k = 0; k < q; k++) O[r0 + j + (R_xlen_t) k * R] = a[(size_t) j * q + k];
  }
  }
  UNPROTECT(1);
  return out;
}

/* The replicates' coefficients from their normal equations, one solve each,
 * as solve(A, b) in R: A (p x p, symmetric) holds row r of G at the
 * positions ij (1-based, nij x 2) and their transposes, b is row r of B;
 * LAPACK's dgesv on a copy, then the reciprocal condition number (dgecon,
 * 1-norm of A); a replicate whose system is exactly or computationally
 * singular (rcond < machine epsilon, solve()'s default tolerance) gets a
 * row of NA, as the R code's tryCatch gave. Returns nrep x p. */
SEXP C_svy_rep_solve(SEXP G_, SEXP B_, SEXP ij_) {
  const char *fn = "C_svy_rep_solve";
  dd_chk_mat(G_, REALSXP, -1, -1, 0, fn, "G");
  const int nrep = nrows(G_), nij = ncols(G_);
  dd_chk_mat(B_, REALSXP, nrep, -1, 0, fn, "B");
  const int p = ncols(B_);
  dd_chk_mat(ij_, INTSXP, nij, 2, 0, fn, "ij");
  const int *ij = INTEGER(ij_);
  for (int k = 0; k < 2 * nij; k++)
    if (ij[k] < 1 || ij[k] > p) error("internal error in %s: index %d out of range; please report", fn, ij[k]);
  const double *G = REAL(G_), *B = REAL(B_);
  SEXP out = PROTECT(allocMatrix(REALSXP, nrep, p));
  double *O = REAL(out);
  double *A = (double *) R_alloc((size_t) p * p, sizeof(double));
  double *LU = (double *) R_alloc((size_t) p * p, sizeof(double));
  double *b = (double *) R_alloc((size_t) p, sizeof(double));
  double *work = (double *) R_alloc((size_t) 4 * p, sizeof(double));
  int *ipiv = (int *) R_alloc((size_t) p, sizeof(int));
  int *iwork = (int *) R_alloc((size_t) p, sizeof(int));
  const int one = 1;
  for (int r = 0; r < nrep; r++) {
    memset(A, 0, sizeof(double) * (size_t) p * p);
    for (int k = 0; k < nij; k++) A[(ij[k] - 1) + (size_t) (ij[k + nij] - 1) * p] = G[r + (R_xlen_t) k * nrep];
    for (int k = 0; k < nij; k++) A[(ij[k + nij] - 1) + (size_t) (ij[k] - 1) * p] = G[r + (R_xlen_t) k * nrep];
    memcpy(LU, A, sizeof(double) * (size_t) p * p);
    for (int k = 0; k < p; k++) b[k] = B[r + (R_xlen_t) k * nrep];
    int info = 0;
    F77_CALL(dgesv)(&p, &one, LU, &p, ipiv, b, &p, &info);
    int ok = info == 0;
    if (ok) {
      const double anorm = F77_CALL(dlange)("1", &p, &p, A, &p, work FCONE);
      /* (a non-finite A: NA, as the replicate is discarded either way) */
      double rcond = 0.0;
      if (R_FINITE(anorm)) F77_CALL(dgecon)("1", &p, LU, &p, &anorm, &rcond, work, iwork, &info FCONE);
      if (!R_FINITE(anorm) || rcond < DBL_EPSILON) ok = 0;
    }
    for (int k = 0; k < p; k++) O[r + (R_xlen_t) k * nrep] = ok ? b[k] : NA_REAL;
  }
  UNPROTECT(1);
  return out;
}

/* TRUE when every row i of W (n x R) equals row idx[i] (1-based), entry by
 * entry (==, as R's W == W[idx, ]): the check that rows with the same key
 * are the same row, without materialising W[idx, ]. */
SEXP C_rows_equal(SEXP W_, SEXP idx_) {
  const char *fn = "C_rows_equal";
  dd_chk_mat(W_, REALSXP, -1, -1, 0, fn, "W");
  const int n = nrows(W_), R = ncols(W_);
  dd_chk_vec(idx_, INTSXP, n, 0, fn, "idx");
  const int *idx = INTEGER(idx_);
  for (int i = 0; i < n; i++)
    if (idx[i] < 1 || idx[i] > n) error("internal error in %s: row %d out of range; please report", fn, idx[i]);
  const double *W = REAL(W_);
  for (int r = 0; r < R; r++) {
    const double *w = W + (R_xlen_t) r * n;
    for (int i = 0; i < n; i++) if (!(w[i] == w[idx[i] - 1])) return ScalarLogical(FALSE);
  }
  return ScalarLogical(TRUE);
}

/* Domain-mean linearisation: x_i = w_i (y_i - m[dom_i]) / W[dom_i]
 * (dom 0-based), one pass without the n-long temporaries. */
SEXP C_domain_lin(SEXP w_, SEXP y_, SEXP dom_, SEXP m_, SEXP W_) {
  const char *fn = "C_domain_lin";
  dd_chk_type(w_, REALSXP, 0, fn, "w");
  const R_xlen_t n = XLENGTH(w_);
  dd_chk_vec(y_, REALSXP, n, 0, fn, "y");
  dd_chk_type(m_, REALSXP, 0, fn, "m");
  const int nd = LENGTH(m_);
  dd_chk_vec(W_, REALSXP, nd, 0, fn, "W");
  dd_chk_codes(dom_, n, nd, fn, "dom");
  const double *w = REAL(w_), *y = REAL(y_), *m = REAL(m_), *W = REAL(W_);
  const int *dom = INTEGER(dom_);
  SEXP out = PROTECT(allocVector(REALSXP, n));
  double *x = REAL(out);
  for (R_xlen_t i = 0; i < n; i++) x[i] = w[i] * (y[i] - m[dom[i]]) / W[dom[i]];
  UNPROTECT(1);
  return out;
}
