/* diffdiff: prototypes of the C backend, grouped by file. */
#ifndef DIFFDIFF_H
#define DIFFDIFF_H

#define USE_FC_LEN_T
#include <R.h>
#include <Rinternals.h>
#include <R_ext/Lapack.h>
#include <R_ext/BLAS.h>
#include <stdint.h>
#include <string.h>
#ifndef FCONE
#define FCONE
#endif
#ifdef _OPENMP
#include <omp.h>
#endif

/* thread number inside a parallel region (0 when serial) */
static inline int dd_tid(void) {
#ifdef _OPENMP
  return omp_get_thread_num();
#else
  return 0;
#endif
}

/* util.c */
SEXP dd_named_list(int n, const char **names, SEXP *values);
/* entry-point checks: fn the routine, arg the argument; error on violation */
void dd_bad(const char *fn, const char *arg, const char *what);
void dd_chk_type(SEXP x, SEXPTYPE t, int null_ok, const char *fn, const char *arg);
void dd_chk_vec(SEXP x, SEXPTYPE t, R_xlen_t n, int null_ok, const char *fn, const char *arg);
void dd_chk_mat(SEXP x, SEXPTYPE t, int nr, int nc, int null_ok, const char *fn, const char *arg);
int dd_chk_whole(double v, double lo, double hi, const char *fn, const char *arg);
int dd_chk_int(SEXP x, int lo, int hi, const char *fn, const char *arg);
double dd_chk_num(SEXP x, int inf_ok, const char *fn, const char *arg);
double dd_chk_pos(SEXP x, const char *fn, const char *arg);
void dd_chk_finite(SEXP x, int inf_ok, const char *fn, const char *arg);
void dd_chk_range(SEXP x, R_xlen_t n, int lo, int hi, const char *fn, const char *arg);
void dd_chk_codes(SEXP x, R_xlen_t n, int nlev, const char *fn, const char *arg);
void dd_chk_list(SEXP x, int len, const char *fn, const char *arg);
/* scratch of n long doubles from R_alloc, aligned to 16 bytes (R_alloc's
 * blocks are aligned to 8 only: a long double store there is undefined) */
long double *dd_alloc_ld(R_xlen_t n);
#define DD_INT_MAX 2147483647

/* threads.c */
int dd_nthreads(int ntasks, double work);
void dd_threads_init(void);
typedef struct { int n, lo, hi, step, unit; double t0; } dd_chunks;
void dd_chunks_init(dd_chunks *c, int n, int nth);
int dd_chunks_next(dd_chunks *c);
void dd_check_interrupt(double *t_last);
SEXP C_set_threads(SEXP n, SEXP throttle);
SEXP C_get_threads(void);
SEXP C_num_procs(void);

/* rng.c: counter-based generator; every (seed, stream) pair is its own stream */
typedef struct { uint64_t s; } dd_rng;
/* splitmix64, inline for the bootstrap kernels (dd_rng_next is the same) */
static inline uint64_t dd_mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}
static inline uint64_t dd_rng_step(dd_rng *g) {
  g->s += 0x9E3779B97F4A7C15ULL;
  return dd_mix64(g->s);
}
/* the k-th output (k >= 1) of dd_rng_step from state g, without stepping */
static inline uint64_t dd_rng_at(const dd_rng *g, uint64_t k) {
  return dd_mix64(g->s + k * 0x9E3779B97F4A7C15ULL);
}
/* The bootstrap weights (mean 0, variance 1) from raw 64-bit draws: the one
 * definition that dd_wstream_next (rng.c) and ifs.c's multiplier bootstrap
 * share, so that both give the same weights bit for bit.
 * dd_u01: uniform on [0, 1) from the top 53 bits. */
static inline double dd_u01(uint64_t x) { return (double) (x >> 11) * 0x1.0p-53; }
/* Rademacher: bit sh of x, 1 -> +1, 0 -> -1 (built without a branch on the
 * random bit: 1.0 with the sign bit set for 0) */
static inline double dd_rademacher_bit(uint64_t x, int sh) {
  const uint64_t u = 0x3FF0000000000000ULL | (((~x >> sh) & 1ULL) << 63);
  double v;
  memcpy(&v, &u, sizeof v);
  return v;
}
/* Mammen: -(sqrt5 - 1) / 2 with probability (sqrt5 + 1) / (2 sqrt5), else
 * (sqrt5 + 1) / 2 */
static inline double dd_mammen_draw(uint64_t x) {
  const double s5 = 2.23606797749979;
  return dd_u01(x) < (s5 + 1.0) / (2.0 * s5) ? -(s5 - 1.0) / 2.0 : (s5 + 1.0) / 2.0;
}
/* Webb: +-sqrt(3/2), +-1, +-sqrt(1/2), each with probability 1/6 (the table
 * in increasing order, index floor(6 u)) */
extern const double dd_webb_values[6];
static inline double dd_webb_draw(uint64_t x) {
  const int k = (int) (dd_u01(x) * 6.0);
  return dd_webb_values[k > 5 ? 5 : k];
}
void dd_rng_init(dd_rng *g, uint64_t seed, uint64_t stream);
uint64_t dd_rng_next(dd_rng *g);
double dd_rng_unif(dd_rng *g);
uint64_t dd_seed_from_R(void);
uint64_t dd_seed_arg(SEXP seed_, const char *fn);
void dd_boot_weights(dd_rng *g, int type, double *v, int G);
typedef struct { dd_rng g; uint64_t bits; int type; long pos; } dd_wstream;
void dd_wstream_init(dd_wstream *s, uint64_t seed, uint64_t stream, int type);
double dd_wstream_next(dd_wstream *s);
SEXP C_boot_weights(SEXP G, SEXP B, SEXP type);

/* cs.c */
SEXP C_cs_panel(SEXP Y, SEXP bstart, SEXP bval, SEXP bnever, SEXP w, SEXP X, SEXP cells,
                SEXP gcell, SEXP pos, SEXP task, SEXP bncol, SEXP bextra, SEXP method, SEXP trim);
SEXP C_cs_rc(SEXP y, SEXP tcol, SEXP gval, SEXP never, SEXP w, SEXP X, SEXP cells, SEXP gcell,
             SEXP thr, SEXP method, SEXP trim, SEXP unit, SEXP nunit, SEXP lay, SEXP uw);

/* ifs.c: block-sparse influence functions */
SEXP C_ifs_colss(SEXP s);
SEXP C_ifs_crossprod(SEXP s, SEXP sel);
SEXP C_ifs_combine(SEXP s, SEXP A);
SEXP C_ifs_comb_cross(SEXP s, SEXP A, SEXP diag);
SEXP C_ifs_rowsum(SEXP s, SEXP cl, SEXP G);
SEXP C_ifs_dense(SEXP s);
SEXP C_ifs_boot(SEXP s, SEXP sel, SEXP B, SEXP type, SEXP grp, SEXP H, SEXP seed, SEXP first, SEXP rowinfo);
SEXP C_draws_summary(SEXP draws, SEXP band, SEXP alpha, SEXP tol);

/* survey.c */
SEXP C_svy_onestage(SEXP x, SEXP strata, SEXP clus, SEXP nc, SEXP npsu, SEXP popsize, SEXP mult, SEXP group,
                    SEXP ng, SEXP lonely, SEXP rows);
SEXP C_svy_rep_crossprod(SEXP W, SEXP M, SEXP cols, SEXP rows, SEXP mult);
SEXP C_svy_rep_solve(SEXP G, SEXP B, SEXP ij);
SEXP C_rows_equal(SEXP W, SEXP idx);
SEXP C_domain_lin(SEXP w, SEXP y, SEXP dom, SEXP m, SEXP W);
SEXP C_svy_domain(SEXP x, SEXP dom, SEXP nd, SEXP strata, SEXP clus, SEXP nc, SEXP npsu, SEXP popsize,
                  SEXP mult, SEXP lonely);

/* dcdh.c */
SEXP C_dcdh_horizon(SEXP dy, SEXP dist, SEXP never, SEXP N, SEXP kv, SEXP Fg, SEXP Tg, SEXP bi, SEXP coh,
                    SEXP clg, SEXP ord, SEXP horizon, SEXP G, SEXP nb, SEXP nc, SEXP ncl, SEXP ms, SEXP ds);

/* locpoly.c */
SEXP C_lp_fit(SEXP x, SEXP y, SEXP dups, SEXP dupsid, SEXP c, SEXP kernel, SEXP matches, SEXP h, SEXP cbw,
              SEXP bwmin, SEXP bwmax, SEXP range, SEXP stop);
SEXP C_lp_poly(SEXP x, SEXP y, SEXP c, SEXP kernel, SEXP h, SEXP order);
double lp_K(double u, int kern);
int lp_inv(int k, double *G, double *work);
void lp_nnres(const double *x, const double *y, const int *dups, const int *dupsid, const int *idx, int n,
              int matches, double tolf, double *res);
/* rd.c */
SEXP C_rd_lp(SEXP d, SEXP D, SEXP fw, SEXP h, SEXP b, SEXP ord, SEXP kern, SEXP s, SEXP vce, SEXP matches);

/* rd_density.c */
SEXP C_rd_density_fit(SEXP x, SEXP y, SEXP win, SEXP h, SEXP t, SEXP spec, SEXP N);
SEXP C_rd_density_below(SEXP v, SEXP t, SEXP or_equal);
SEXP C_rd_density_cdf(SEXP xs, SEXP mass, SEXP c);

/* synth.c */
SEXP C_synth_w(SEXP A, SEXP B);
SEXP C_synth_vloss(SEXP X0, SEXP X1, SEXP Z0, SEXP Z1, SEXP v, SEXP init);
SEXP C_synth_nm(SEXP X0, SEXP X1, SEXP Z0, SEXP Z1, SEXP par, SEXP init, SEXP maxit, SEXP bfgs);
/* conley.c */
SEXP C_conley_meat(SEXP S, SEXP y, SEXP x, SEXP opts, SEXP grp, SEXP cl, SEXP unit, SEXP tt);
SEXP C_spill_nearest(SEXP y, SEXP x, SEXP lab, SEXP opts);

/* lpdid.c */
SEXP C_lpdid_state(SEXP D);
SEXP C_lpdid_horizon(SEXP Y, SEXP B, SEXP CL, SEXP G, SEXP W, SEXP X, SEXP ST, SEXP win, SEXP opts);

/* sdid.c */
SEXP C_sdid_noise(SEXP Y, SEXP N0, SEXP T0);
SEXP C_sdid_fit(SEXP Y, SEXP N0, SEXP T0, SEXP X, SEXP opts, SEXP lambda0, SEXP omega0);
SEXP C_sdid_reps(SEXP Y, SEXP N0, SEXP T0, SEXP X, SEXP opts, SEXP lambda, SEXP omega, SEXP type, SEXP idx,
                 SEXP lens, SEXP n0s);

/* linalg.c */
SEXP C_ols(SEXP X, SEXP y, SEXP w, SEXP refnorm, SEXP tol);
int dd_chol_lower(int k, double *L);
int dd_chol_alias(int k, double *L, int *keep, double tol);
void dd_chol_solve(int k, const double *L, double *b);
void dd_chol_solve_keep(int k, const double *L, const int *keep, double *b);
int dd_chol_ok(int k, const double *A, double *L, double *work4k, int *iwork);

/* demean.c */
#define DD_FE_MAX 32   /* fixed-effect dimensions at most (the kernels keep fixed arrays of this size) */
const int **dd_fe_pointers(SEXP fe, R_xlen_t n);
void dd_fe_check(SEXP fe, SEXP nlev, R_xlen_t n, const char *fn);
typedef struct {
  int n, Q, sumL;
  const int **fe;    /* Q pointers to n 0-based level codes */
  const int *off;    /* offset of each dimension's coefficients, length Q */
  const int *nlev;   /* levels per dimension */
  const double *w;   /* weights or NULL */
  const double *sw;  /* per-level sum of weights (or counts), length sumL */
} dd_fe;
double *dd_fe_levelsums(int n, int Q, const int **fe, const int *nlev, const double *w,
                        int *off, int *sumL);
int dd_demean_warm(const dd_fe *F, const double *x, double *r, double *acc, double tol);
int dd_demean_pcg(const dd_fe *F, double *r, double *scratch, double tol, double ssx, int maxit, int *iter);
size_t dd_demean_scratch(const dd_fe *F);
int dd_demean_col(const dd_fe *F, const double *x, double *r, double *scratch,
                  double tol, int maxit, int *iter);
SEXP C_demean(SEXP y, SEXP X, SEXP fe, SEXP nlev, SEXP w, SEXP tol, SEXP maxit);

/* panel.c */
SEXP C_group_codes(SEXP x);
SEXP C_sorted_codes(SEXP x);
SEXP C_nested(SEXP f, SEXP nf, SEXP cl);
SEXP C_first_dup(SEXP a, SEXP na, SEXP b, SEXP nb);
SEXP C_count_bad(SEXP lst);
SEXP C_col_matrix(SEXP cols);
SEXP C_col_maxabs(SEXP x);
SEXP C_vec_stats(SEXP x);
SEXP C_few_levels(SEXP x, SEXP max);
SEXP C_never_rows(SEXP code, SEXP never_u, SEXP g);
SEXP C_first_not01(SEXP x);
SEXP C_singletons(SEXP fe, SEXP nlev);
SEXP C_first_varying(SEXP code, SEXP ng, SEXP x);
SEXP C_first_rows(SEXP code, SEXP ng);
SEXP C_level_count(SEXP code, SEXP nlev, SEXP mask);
SEXP C_levels_hit(SEXP code, SEXP nlev, SEXP mask, SEXP mcode, SEXP stop);
SEXP C_stack_rows(SEXP idc, SEXP tc, SEXP umask, SEXP pmask, SEXP tv, SEXP kc, SEXP gu, SEXP nu,
                  SEXP kpre, SEXP nE);
SEXP C_stagger(SEXP g, SEXP t);
SEXP C_wss(SEXP v, SEXP w, SEXP c);
SEXP C_lin_rows(SEXP X, SEXP B, SEXP C, SEXP cidx, SEXP A, SEXP aidx, SEXP s, SEXP y0);
SEXP C_cell_sums(SEXP X, SEXP w, SEXP idx, SEXP nc);
SEXP C_panel_wide(SEXP idc, SEXP tc, SEXP umap, SEXP tmap, SEXP N, SEXP T, SEXP y, SEXP w, SEXP X);
SEXP C_cell_codes(SEXP codes, SEXP nlev);

/* vcov.c */
SEXP C_cluster_meat(SEXP X, SEXP e, SEXP w, SEXP cl, SEXP G, SEXP cidx, SEXP cM);

/* bootstrap.c */
SEXP C_wild_boot(SEXP z, SEXP a, SEXP X, SEXP bread, SEXP w, SEXP cl, SEXP G,
                 SEXP fe, SEXP nlev, SEXP feopt, SEXP B, SEXP type, SEXP seed, SEXP first);

/* honest.c: Rambachan-Roth sensitivity (LP, box QP, critical values) */
SEXP C_arp_grid(SEXP Y, SEXP a1, SEXP X, SEXP Sig, SEXP grid, SEXP opts, SEXP flci_g, SEXP skip,
                SEXP dnorm);
SEXP C_arp_eta(SEXP X, SEXP Sig, SEXP Xi);
SEXP C_lp_max(SEXP W, SEXP b, SEXP c);
SEXP C_tn_quantile(SEXP p, SEXP l, SEXP u);
SEXP C_qfold(SEXP zs, SEXP p, SEXP mu);
SEXP C_flci_bias(SEXP H, SEXP a, SEXP r_);

/* pretrends.c: Gaussian rectangle probabilities and truncated moments (Genz) */
SEXP C_pretrends_mvn(SEXP mu, SEXP S, SEXP lower, SEXP upper, SEXP A, SEXP mZ, SEXP ctrl);

/* rs.c */
SEXP C_rs_perm(SEXP th, SEXP a0, SEXP k, SEXP Y, SEXP m);
SEXP C_rs_shuffle(SEXP base, SEXP out, SEXP work);

/* glm.c */
SEXP C_csr(SEXP X);
SEXP C_xtwx(SEXP csr, SEXP w, SEXP z);

/* trop.c: TROP's matrix layer (weights, two-way fits, singular value thresholding) */
SEXP C_trop_fit(SEXP Y, SEXP D, SEXP method, SEXP lam, SEXP ctrl, SEXP cells, SEXP loo, SEXP P,
                SEXP guard);

/* stute.c: wild bootstrap of Stute's test (did_had), uniforms from R's RNG in blocks */
SEXP C_stute_boot(SEXP e, SEXP pos, SEXP q, SEXP n, SEXP p, SEXP nG, SEXP B, SEXP U);

/* cic.c: changes-in-changes and quantile DiD cells (did_cic), point estimates and the resampling bootstrap */
SEXP C_cic(SEXP y, SEXP u, SEXP off, SEXP probs, SEXP opts, SEXP smem, SEXP soff, SEXP nboot, SEXP seed,
           SEXP first);
SEXP C_cic_rq(SEXP y, SEXP u, SEXP X, SEXP off, SEXP probs, SEXP taus, SEXP opts, SEXP smem, SEXP soff,
              SEXP nboot, SEXP seed, SEXP first);

/* rq.c: linear quantile regression (an exact vertex, as quantreg's rq(method = "br")) */
typedef struct {
  int n, p;
  double *r, *xd, *kt, *lu, *v, *a, *q, *dx, *yp;
  int *ki, *fl, *deg, *inb, *ipiv;
  char *act;
} dd_rq_work;
void dd_rq_work_init(dd_rq_work *W, int n, int p);
int dd_rq_start(dd_rq_work *W, const double *X, int ldx, const double *w, int *h);
int dd_rq_fit(dd_rq_work *W, const double *X, int ldx, const double *y, const double *w, double tau, int *h,
              double *b);
SEXP C_rq(SEXP X, SEXP y, SEXP w, SEXP taus);

/* rd_plot.c: the passes of rd_plot() over the sorted running variable (fit moments, spacings, bins) */
SEXP C_rd_plot_sums(SEXP x, SEXP y, SEXP fw, SEXP nl, SEXP par, SEXP kernel, SEXP p);
SEXP C_rd_plot_spread(SEXP x, SEXP nl, SEXP fits);
SEXP C_rd_plot_bins(SEXP x, SEXP y, SEXP bin);

#endif
