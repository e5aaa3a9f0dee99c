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

enum { LONELY_FAIL = 0, LONELY_REMOVE = 1, LONELY_CERTAINTY = 2, LONELY_ADJUST = 3, LONELY_AVERAGE = 4 };

/* strata: 0-based stratum of each observation (ns strata); clus: 0-based
 * cluster (nc clusters, each inside one stratum); npsu, popsize (NA or Inf:
 * no fpc), mult, group (0-based, ng groups): per stratum. Returns the k x k
 * variance, with attribute "lonely" = first 1-based stratum with one PSU
 * (0 if none). */
SEXP C_svy_onestage(SEXP x_, SEXP strata_, SEXP clus_, SEXP nc_, SEXP npsu_, SEXP popsize_,
                    SEXP mult_, SEXP group_, SEXP ng_, SEXP lonely_) {
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
  setAttrib(out, install("lonely"), ScalarInteger(first_lonely));
  UNPROTECT(1);
  return out;
}
