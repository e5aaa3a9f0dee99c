/* Registration of the .Call entry points. */
#include "diffdiff.h"
#include <R_ext/Rdynload.h>

/* registered without the C_ prefix; useDynLib(.fixes = "C_") adds it back in R */
#define CALLDEF(name, n) {#name, (DL_FUNC) &C_##name, n}

static const R_CallMethodDef CallEntries[] = {
  CALLDEF(set_threads, 2),
  CALLDEF(get_threads, 0),
  CALLDEF(num_procs, 0),
  CALLDEF(boot_weights, 3),
  CALLDEF(ols, 5),
  CALLDEF(demean, 7),
  CALLDEF(cluster_meat, 7),
  CALLDEF(group_codes, 1),
  CALLDEF(sorted_codes, 1),
  CALLDEF(nested, 3),
  CALLDEF(first_dup, 4),
  CALLDEF(count_bad, 1),
  CALLDEF(col_matrix, 1),
  CALLDEF(col_maxabs, 1),
  CALLDEF(vec_stats, 1),
  CALLDEF(few_levels, 2),
  CALLDEF(never_rows, 3),
  CALLDEF(first_not01, 1),
  CALLDEF(singletons, 2),
  CALLDEF(first_varying, 3),
  CALLDEF(first_rows, 2),
  CALLDEF(level_count, 3),
  CALLDEF(levels_hit, 5),
  CALLDEF(stack_rows, 10),
  CALLDEF(stagger, 2),
  CALLDEF(panel_wide, 9),
  CALLDEF(wss, 3),
  CALLDEF(lin_rows, 8),
  CALLDEF(cell_sums, 4),
  CALLDEF(rs_perm, 5),
  CALLDEF(rs_shuffle, 3),
  CALLDEF(csr, 1),
  CALLDEF(xtwx, 3),
  CALLDEF(wild_boot, 14),
  CALLDEF(cs_panel, 14),
  CALLDEF(cs_rc, 15),
  CALLDEF(ifs_colss, 1),
  CALLDEF(ifs_crossprod, 2),
  CALLDEF(ifs_combine, 2),
  CALLDEF(ifs_comb_cross, 3),
  CALLDEF(ifs_rowsum, 3),
  CALLDEF(ifs_dense, 1),
  CALLDEF(ifs_boot, 9),
  CALLDEF(draws_summary, 4),
  CALLDEF(sdid_noise, 3),
  CALLDEF(sdid_fit, 7),
  CALLDEF(sdid_reps, 11),
  CALLDEF(synth_w, 2),
  CALLDEF(synth_vloss, 6),
  CALLDEF(synth_nm, 8),
  CALLDEF(conley_meat, 8),
  CALLDEF(lpdid_state, 1),
  CALLDEF(lpdid_horizon, 9),
  CALLDEF(dcdh_horizon, 18),
  CALLDEF(lp_fit, 13),
  CALLDEF(lp_poly, 6),
  CALLDEF(svy_onestage, 11),
  CALLDEF(svy_domain, 10),
  CALLDEF(svy_rep_crossprod, 5),
  CALLDEF(svy_rep_solve, 3),
  CALLDEF(rows_equal, 2),
  CALLDEF(cell_codes, 2),
  CALLDEF(domain_lin, 5),
  CALLDEF(arp_grid, 9),
  CALLDEF(arp_eta, 3),
  CALLDEF(lp_max, 3),
  CALLDEF(tn_quantile, 3),
  CALLDEF(qfold, 3),
  CALLDEF(flci_bias, 3),
  CALLDEF(pretrends_mvn, 7),
  CALLDEF(trop_fit, 8),
  CALLDEF(stute_boot, 8),
  {NULL, NULL, 0}
};

void R_init_diffdiff(DllInfo *dll) {
  R_registerRoutines(dll, NULL, CallEntries, NULL, NULL);
  R_useDynamicSymbols(dll, FALSE);
  R_forceSymbols(dll, TRUE);
  dd_threads_init();
}
