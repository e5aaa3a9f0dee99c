/* dcdh.c: one horizon of the de Chaisemartin-D'Haultfoeuille event-study
 * estimator on group x period matrices (column-major, nG x nK), for
 * did_dcdh(): the switchers' cells `dist` (0/1, NaN where the outcome change
 * dy is missing) against the not-yet-switched controls `never` (0/1/NaN)
 * with the same baseline key `bi` (baseline treatment, and trends_nonparam).
 * Returns the estimate's group influence functions U, the variance's Uv
 * (recentred on the cohort means, with the degrees-of-freedom factor
 * sqrt(n / (n - 1))), the counted cells and the cell totals. The R code in
 * R/did_dcdh.R (dd_dcdh_engine) says what each quantity is; NaN follows R's
 * NA rules there (a product with a missing value is missing, sums skip
 * missing values). */
#include "diffdiff.h"

typedef struct {
  int nG, nK, nb, nc, ncl, i;
  double G;
  const double *dy, *dist, *never, *N, *kv, *Fg, *Tg;
  const int *bi, *coh, *clg, *ordb, *ordc;   /* bi, coh, clg 1-based; ordb, ordc 0-based orders */
  const double *ms, *ds;                      /* NULL, or each group's switcher-cohort mean and count */
} dcdh_in;

typedef struct {
  double Ni, Ndw;
  double *U, *Uv, *cnt, *Nc, *Ntg;          /* nG, nG, nG x nK, nb x nK, nb x nK */
} dcdh_out;

/* distinct clusters among the flagged groups, per (key, period): groups
 * visited in the order `ord` (sorted by key), so each (key, period) is one
 * contiguous run and a stamp per cluster counts each cluster once */
static void dcdh_cluster_counts(const dcdh_in *in, const unsigned char *flag, const int *key, int nkey,
                                const int *ord, double *out, R_xlen_t *stamp) {
  int nG = in->nG, nK = in->nK;
  for (int c = 0; c < in->ncl; c++) stamp[c] = -1;
  for (int k = 0; k < nK; k++) {
    for (int r = 0; r < nG; r++) {
      int g = ord[r];
      R_xlen_t gk = (R_xlen_t) k * nG + g;
      if (!flag[gk]) continue;
      int b = key[g] - 1, c = in->clg[g] - 1;
      R_xlen_t s = (R_xlen_t) k * nkey + b;
      if (stamp[c] != s) { stamp[c] = s; out[(R_xlen_t) k * nkey + b] += 1; }
    }
  }
}

static void dcdh_horizon(const dcdh_in *in, dcdh_out *out) {
  int nG = in->nG, nK = in->nK, nb = in->nb, nc = in->nc, i = in->i;
  R_xlen_t nGK = (R_xlen_t) nG * nK, nbK = (R_xlen_t) nb * nK;
  const double *dy = in->dy, *dist = in->dist, *never = in->never, *N = in->N;
  double *Nt = (double *) R_alloc(nK, sizeof(double));
  for (int k = 0; k < nK; k++) Nt[k] = 0;
  for (R_xlen_t j = 0; j < nbK; j++) out->Nc[j] = out->Ntg[j] = 0;
  for (int g = 0; g < nG; g++) out->U[g] = out->Uv[g] = 0;
  long double Ndw = 0;
  /* pass 1: switchers' and controls' weights per period and per cell */
  for (int k = 0; k < nK; k++) {
    long double s = 0;
    for (int g = 0; g < nG; g++) {
      R_xlen_t gk = (R_xlen_t) k * nG + g, bk = (R_xlen_t) k * nb + in->bi[g] - 1;
      if (!ISNAN(dist[gk])) { s += dist[gk] * N[gk]; Ndw += dist[gk]; out->Ntg[bk] += dist[gk] * N[gk]; }
      if (!ISNAN(never[gk])) out->Nc[bk] += never[gk] * N[gk];
    }
    Nt[k] = (double) s;
  }
  long double Ni = 0;
  for (int k = 0; k < nK; k++) Ni += Nt[k];
  out->Ni = (double) Ni; out->Ndw = (double) Ndw;
  if (out->Ni == 0) return;
  double GN = in->G / out->Ni;
  /* pass 2: the estimate's influence functions and counted cells; the
   * controls' (nsf) and switchers' (sf) cells for the variance */
  unsigned char *nsf = (unsigned char *) R_alloc(nGK, 1), *sf = (unsigned char *) R_alloc(nGK, 1);
  double *cw = (double *) R_alloc(nGK, sizeof(double));
  double *cell = (double *) R_alloc(6 * nbK, sizeof(double));
  double *cnt_ns = cell, *tot_ns = cell + nbK, *dof_ns = cell + 2 * nbK;
  double *cnt_u = cell + 3 * nbK, *tot_u = cell + 4 * nbK, *dof_u = cell + 5 * nbK;
  for (R_xlen_t j = 0; j < 6 * nbK; j++) cell[j] = 0;
  double *grp = (double *) R_alloc(3 * (R_xlen_t) nG, sizeof(double));
  double *scnt = grp, *stot = grp + nG, *sg = grp + 2 * nG;
  for (R_xlen_t j = 0; j < 3 * (R_xlen_t) nG; j++) grp[j] = 0;
  long double *Ul = dd_alloc_ld(nG);
  for (int g = 0; g < nG; g++) Ul[g] = 0;
  int clustered = in->ncl > 0;
  for (int k = 0; k < nK; k++) {
    double t = in->kv[k];
    for (int g = 0; g < nG; g++) {
      R_xlen_t gk = (R_xlen_t) k * nG + g, bk = (R_xlen_t) k * nb + in->bi[g] - 1;
      double ratio = out->Nc[bk] == 0 ? 0 : out->Ntg[bk] / out->Nc[bk];
      double Tg = in->Tg[g];
      double c = NA_REAL;
      if (!ISNAN(dist[gk]) && !ISNAN(never[gk]) && !ISNAN(Tg)) {
        double win = (i <= Tg - 1) && (t >= i + 1) && (t <= Tg);
        c = win * N[gk] * (dist[gk] - ratio * never[gk]);
      }
      cw[gk] = c;
      double ut = GN * c * dy[gk];
      double w = 0;
      if (!ISNAN(ut)) {
        Ul[g] += ut;
        if (ut != 0 || (dy[gk] == 0 && (dist[gk] != 0 || (out->Ntg[bk] != 0 && never[gk] != 0)))) w = N[gk];
      }
      out->cnt[gk] = w;
      int fn = N[gk] != 0 && !ISNAN(dy[gk]) && !ISNAN(never[gk]) && never[gk] == 1 && Nt[k] > 0;
      int fs = N[gk] != 0 && !ISNAN(dist[gk]) && dist[gk] == 1;
      nsf[gk] = (unsigned char) fn; sf[gk] = (unsigned char) fs;
      double ny = N[gk] * dy[gk];
      if (fn) { cnt_ns[bk] += N[gk]; if (!ISNAN(ny)) tot_ns[bk] += ny; if (!clustered) dof_ns[bk] += 1; }
      if (fn || fs) { cnt_u[bk] += N[gk]; if (!ISNAN(ny)) tot_u[bk] += ny; if (!clustered) dof_u[bk] += 1; }
      if (fs) { sg[g] = 1; scnt[g] += N[gk]; stot[g] += ny; }
    }
  }
  for (int g = 0; g < nG; g++) out->U[g] = (double) Ul[g];
  /* switcher cohorts: totals and (clusters of) groups */
  double *coh = (double *) R_alloc(3 * (R_xlen_t) nc, sizeof(double));
  double *c_cnt = coh, *c_tot = coh + nc, *c_dof = coh + 2 * nc;
  for (R_xlen_t j = 0; j < 3 * (R_xlen_t) nc; j++) coh[j] = 0;
  for (int g = 0; g < nG; g++) {
    int h = in->coh[g] - 1;
    c_cnt[h] += scnt[g]; c_tot[h] += stot[g];
    if (!clustered) c_dof[h] += sg[g];
  }
  if (clustered) {
    R_xlen_t *stamp = (R_xlen_t *) R_alloc(in->ncl, sizeof(R_xlen_t));
    unsigned char *uf = (unsigned char *) R_alloc(nGK, 1);
    for (R_xlen_t j = 0; j < nGK; j++) uf[j] = nsf[j] | sf[j];
    dcdh_cluster_counts(in, nsf, in->bi, nb, in->ordb, dof_ns, stamp);
    dcdh_cluster_counts(in, uf, in->bi, nb, in->ordb, dof_u, stamp);
    for (int c = 0; c < in->ncl; c++) stamp[c] = -1;
    for (int r = 0; r < nG; r++) {
      int g = in->ordc[r];
      if (!sg[g]) continue;
      int h = in->coh[g] - 1, c = in->clg[g] - 1;
      if (stamp[c] != h) { stamp[c] = h; c_dof[h] += 1; }
    }
  }
  /* pass 3: E-hat and the degrees-of-freedom factor; the variance's
   * influence functions */
  for (int g = 0; g < nG; g++) {
    int h = in->coh[g] - 1;
    double ds0 = c_dof[h], mean_s = c_tot[h] / c_cnt[h];
    if (in->ms) { ds0 = in->ds[g]; mean_s = in->ms[g]; }
    long double s = 0;
    for (int k = 0; k < nK; k++) {
      R_xlen_t gk = (R_xlen_t) k * nG + g, bk = (R_xlen_t) k * nb + in->bi[g] - 1;
      double t = in->kv[k];
      int isC = t < in->Fg[g], isS = t == in->Fg[g] - 1 + i;
      if (!isC && !isS) continue;
      int fn = nsf[gk], fs = sf[gk], fu = fn || fs;
      double dns = dof_ns[bk], dnss = dof_u[bk];
      double E = 0, DOF = 1;
      if (isC && fn && dns >= 2) E = tot_ns[bk] / cnt_ns[bk];
      if (isS && fs && ds0 >= 2) E = mean_s;
      if (isS && fs && ds0 > 1) DOF = sqrt(ds0 / (ds0 - 1));
      if (isC && fn && dns > 1) DOF = sqrt(dns / (dns - 1));
      if (fu && dnss >= 2 && ((isS && fs && ds0 == 1) || (isC && fn && dns == 1))) {
        E = tot_u[bk] / cnt_u[bk];
        DOF = sqrt(dnss / (dnss - 1));
      }
      double term = cw[gk] * DOF * (dy[gk] - E);
      if (!ISNAN(term)) s += term;
    }
    out->Uv[g] = GN * (double) s;
  }
}

/* ord (0-based, clustered only): a permutation of the groups whose keys
 * key[ord[r]] do not decrease (the runs dcdh_cluster_counts relies on) */
static void dcdh_chk_order(const int *ord, const int *key, int nG, const char *fn, const char *arg) {
  unsigned char *seen = (unsigned char *) R_alloc(nG > 0 ? nG : 1, 1);
  memset(seen, 0, nG > 0 ? nG : 1);
  for (int r = 0; r < nG; r++) {
    if (seen[ord[r]]) error("internal error in %s: `%s` repeats group %d; please report", fn, arg, ord[r] + 1);
    seen[ord[r]] = 1;
    if (r > 0 && key[ord[r]] < key[ord[r - 1]])
      error("internal error in %s: `%s` is not in key order at position %d; please report", fn, arg, r + 1);
  }
}

SEXP C_dcdh_horizon(SEXP dy, SEXP dist, SEXP never, SEXP N, SEXP kv, SEXP Fg, SEXP Tg, SEXP bi, SEXP coh,
                    SEXP clg, SEXP ord, SEXP horizon, SEXP G, SEXP nb_, SEXP nc_, SEXP ncl_, SEXP ms, SEXP ds) {
  /* horizon: the effect or placebo number i; G: the groups' total (the
   * normalisation G / N_i); nb, nc, ncl: the numbers of baseline keys,
   * cohorts and clusters (ncl 0: one cluster per group); ms, ds: empty, or
   * the switchers' cohort means and counts per group (less_conservative_se).
   * The codes bi, coh, clg (1-based) and the orders (0-based) are
   * subscripts: each is checked to be in range. */
  const char *fn = "C_dcdh_horizon";
  dd_chk_type(Fg, REALSXP, 0, fn, "Fg");
  dd_chk_type(kv, REALSXP, 0, fn, "kv");
  const int nG = LENGTH(Fg), nK = LENGTH(kv);
  const R_xlen_t nGK = (R_xlen_t) nG * nK;
  dd_chk_vec(dy, REALSXP, nGK, 0, fn, "dy");
  dd_chk_vec(dist, REALSXP, nGK, 0, fn, "dist");
  dd_chk_vec(never, REALSXP, nGK, 0, fn, "never");
  dd_chk_vec(N, REALSXP, nGK, 0, fn, "N");
  dd_chk_vec(Tg, REALSXP, nG, 0, fn, "Tg");
  /* the horizon, and at most one baseline key, cohort and cluster per group */
  const int i = dd_chk_int(horizon, 1, DD_INT_MAX - 1, fn, "horizon");
  const double Gtot = dd_chk_pos(G, fn, "G");
  const int nb = dd_chk_int(nb_, nG > 0, nG, fn, "nb");
  const int nc = dd_chk_int(nc_, nG > 0, nG, fn, "nc");
  const int ncl = dd_chk_int(ncl_, 0, nG, fn, "ncl");
  dd_chk_range(bi, nG, 1, nb, fn, "bi");
  dd_chk_range(coh, nG, 1, nc, fn, "coh");
  dd_chk_type(ms, REALSXP, 0, fn, "ms");
  dd_chk_type(ds, REALSXP, 0, fn, "ds");
  dcdh_in in = { nG, nK, nb, nc, ncl, i, Gtot, REAL(dy), REAL(dist), REAL(never),
                 REAL(N), REAL(kv), REAL(Fg), REAL(Tg), INTEGER(bi), INTEGER(coh), NULL, NULL, NULL, NULL, NULL };
  if (XLENGTH(ms) > 0) {
    dd_chk_vec(ms, REALSXP, nG, 0, fn, "ms");
    dd_chk_vec(ds, REALSXP, nG, 0, fn, "ds");
    in.ms = REAL(ms); in.ds = REAL(ds);
  }
  if (ncl > 0) {
    dd_chk_range(clg, nG, 1, ncl, fn, "clg");
    dd_chk_range(ord, 2 * (R_xlen_t) nG, 0, nG - 1, fn, "ord");
    in.clg = INTEGER(clg); in.ordb = INTEGER(ord); in.ordc = INTEGER(ord) + nG;
    dcdh_chk_order(in.ordb, in.bi, nG, fn, "ord (baseline order)");
    dcdh_chk_order(in.ordc, in.coh, nG, fn, "ord (cohort order)");
  }
  int nprot = 0;
  SEXP res = PROTECT(allocVector(VECSXP, 7)); nprot++;
  SEXP U = allocVector(REALSXP, nG); SET_VECTOR_ELT(res, 2, U);
  SEXP Uv = allocVector(REALSXP, nG); SET_VECTOR_ELT(res, 3, Uv);
  SEXP cnt = allocMatrix(REALSXP, nG, nK); SET_VECTOR_ELT(res, 4, cnt);
  SEXP Nc = allocMatrix(REALSXP, in.nb, nK); SET_VECTOR_ELT(res, 5, Nc);
  SEXP Ntg = allocMatrix(REALSXP, in.nb, nK); SET_VECTOR_ELT(res, 6, Ntg);
  dcdh_out out = { 0, 0, REAL(U), REAL(Uv), REAL(cnt), REAL(Nc), REAL(Ntg) };
  dcdh_horizon(&in, &out);
  SET_VECTOR_ELT(res, 0, ScalarReal(out.Ni));
  SET_VECTOR_ELT(res, 1, ScalarReal(out.Ndw));
  if (out.Ni == 0) SET_VECTOR_ELT(res, 4, R_NilValue);
  SEXP nm = PROTECT(allocVector(STRSXP, 7)); nprot++;
  const char *names[] = {"N", "Ndw", "U", "Uv", "cnt", "Nc", "Ntg"};
  for (int j = 0; j < 7; j++) SET_STRING_ELT(nm, j, mkChar(names[j]));
  setAttrib(res, R_NamesSymbol, nm);
  UNPROTECT(nprot);
  return res;
}
