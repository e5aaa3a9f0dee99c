# The estimator registry: one row per estimator, the one place that lists
# them. Everything that used to keep its own list reads it: the fields a
# result may carry (new_dd_fit(), results.R), the estimators placebo_test()
# re-runs and the effect it tests (placebo.R), the estimators did_check()
# reports as supported (did_check.R), and the conformance suite
# (tests/testthat/helper-conformance.R, test-conformance.R, test-registry.R).
#
# The lists derived from it are built when the package is built: results.R
# (collated after this file) builds dd_fit_fields from it, and placebo_test()'s
# lists are built at the end of this file.
#
# One entry per estimator, in the order did_check() lists supported
# estimators:
#   name         the function
#   class        the class of its result, c(class, "dd_fit")
#   treatment    the argument that carries the treatment: "gname" (first
#                treated period), "dname" (a 0/1 treatment column), "dose" (a
#                continuous dose: did_dose's `dose`, did_had's `dname`),
#                "treatname" (did_2x2: a treated-group indicator with `postname`),
#                "running" (rd_robust: a running variable `xname` and a cutoff)
#   fields       the fields its results may carry besides the required ones
#                (dd_fit_required) and the shared ones (dd_fit_fields$common,
#                $mboot); new_dd_fit() rejects any other
#   aggregate    the class aggregate() returns for its fits (NA: no method)
#   placebo      placebo_test() re-runs its fits
#   placebo_statistic  the effect placebo_test() tests on its default fit (its
#                label): "ATT (simple aggregate)" means aggregate(fit,
#                "simple"); otherwise the fit's ATT row, else the mean of its
#                event-time effects at e >= 0. NA when placebo is FALSE
#   check_rule   the rule under which did_check() reports it as supported (a
#                name in dd_check_rules, did_check.R); NA: not reported
#   peer         the R package it is checked against, live or through
#                reference numbers that package produced; NA if none
#   parity_test  the tests/testthat file holding that comparison (or, without
#                a peer, the comparison with published or independently
#                computed reference numbers); NA if none
#   estimand     the headline number of its default fit in plain words
#                (summary(style = "plain"), dd_report())
#   assumption   its identifying assumption in plain words; NA: parallel
#                trends (worded with the fit's comparison group and
#                anticipation)
dd_registry_entries <- list(
  list(name = "did_2x2", class = "did_2x2", treatment = "treatname", fields = character(),
       check_rule = NA, peer = "fixest", parity_test = "test-parity-2x2.R",
       estimand = "the average effect on the treated group in the post-treatment period (the ATT)"),
  list(name = "did_twfe", class = "did_twfe", treatment = "dname", fields = character(),
       placebo_statistic = "ATT", check_rule = "absorbing", peer = "fixest", parity_test = "test-parity-twfe.R",
       estimand = "the two-way fixed-effects coefficient: a weighted average of the treated units' effects (with staggered timing and effects that change over time some weights can be negative)"),
  list(name = "did_event", class = "did_event", treatment = "gname", fields = "window",
       placebo_statistic = "mean of event-time effects, e >= 0", check_rule = "absorbing", peer = "fixest",
       parity_test = "test-parity-event.R",
       estimand = "the effects by time since treatment, relative to the reference period; the headline is their mean over the post-treatment event times"),
  list(name = "did_cs", class = "did_cs", treatment = "gname",
       fields = c("inf", "n", "units", "survey_label", "unit_group", "unit_weight", "unit_cluster", "periods", "crit",
                  "pretest", "boot_draws", "nboot", "boot_weights", "cband", "cband_method", "control_group",
                  "anticipation", "base_period", "est_method", "cluster", "n_cell", "cell_status", "tname", "cohort_n"),
       aggregate = "did_cs_agg", placebo_statistic = "ATT (simple aggregate)", check_rule = "absorbing",
       peer = "did", parity_test = "test-parity-cs.R",
       estimand = "the average effect on the treated units over all their treated periods: the group-time effects ATT(g,t) averaged with weights proportional to cohort size"),
  # did_cs's cells with cross-fitted nuisances; with folds = 1 and the linear
  # learners it is did_cs(est_method = "dr"), compared with did::att_gt
  list(name = "did_dml", class = "did_dml", treatment = "gname",
       fields = c("inf", "n", "units", "survey_label", "unit_group", "unit_weight", "unit_cluster", "periods", "crit",
                  "pretest", "boot_draws", "nboot", "boot_weights", "cband", "cband_method", "control_group",
                  "anticipation", "base_period", "est_method", "cluster", "n_cell", "cell_status", "tname", "cohort_n",
                  "learners", "folds", "normalize", "trim", "seed", "repeats", "splits", "ovb"),
       aggregate = "did_cs_agg", check_rule = "absorbing", peer = "did", parity_test = "test-parity-dml.R",
       estimand = "the average effect on the treated units over all their treated periods: the group-time effects ATT(g,t), with covariates through machine-learned nuisances, averaged with weights proportional to cohort size",
       assumption = "Parallel trends conditional on the covariates, no anticipation, overlap, and learners that estimate the nuisance functions accurately enough (rate conditions)."),
  # did_cs's cells with a bad control (a covariate the treatment moves):
  # imputation or doubly robust, compared with badcontrols::didbc
  list(name = "did_bc", class = "did_bc", treatment = "gname",
       fields = c("inf", "n", "units", "survey_label", "unit_group", "unit_weight", "unit_cluster", "periods", "crit",
                  "pretest", "boot_draws", "nboot", "boot_weights", "cband", "cband_method", "control_group",
                  "anticipation", "base_period", "est_method", "cluster", "n_cell", "cell_status", "tname", "cohort_n",
                  "bad_control", "bc_binary", "bc_strategy", "learners", "folds", "seed", "fallbacks"),
       aggregate = "did_cs_agg", check_rule = "absorbing", peer = "badcontrols", parity_test = "test-parity-bc.R",
       estimand = "the average effect on the treated units over all their treated periods, comparing units with the same untreated value of the bad control: the group-time effects ATT(g,t) averaged with weights proportional to cohort size"),
  list(name = "did_sa", class = "did_sa", treatment = "gname",
       fields = c("cohort_coefs", "vcov_full", "shares", "cohort_ref", "control_group"),
       placebo_statistic = "ATT", check_rule = "absorbing", peer = "fixest", parity_test = "test-parity-sa.R",
       estimand = "the average effect on the treated units over the post-treatment event times: each cohort's event-time effects weighted by cohort shares (interaction-weighted)"),
  list(name = "did_bjs", class = "did_bjs", treatment = "gname",
       fields = c("pretest", "n_treated", "n_untreated", "first_stage"),
       placebo_statistic = "ATT", check_rule = "absorbing", peer = "didimputation", parity_test = "test-parity-bjs.R",
       estimand = "the average effect on all treated unit-periods, with their untreated outcomes imputed from the untreated observations"),
  list(name = "did_gardner", class = "did_gardner", treatment = "gname",
       fields = c("n_treated", "n_untreated", "first_stage"),
       placebo_statistic = "ATT", check_rule = "absorbing", peer = "did2s", parity_test = "test-parity-gardner.R",
       estimand = "the average effect on all treated unit-periods, with the fixed effects estimated on the untreated observations (two-stage DiD)"),
  # no package implements stacked DiD: the test follows the authors' recipe by hand
  list(name = "did_stacked", class = "did_stacked", treatment = "gname",
       fields = c("cohorts", "stacked_nobs", "kappa", "coef_full", "control_group", "balance", "balance_covariates",
                  "balance_tol", "balance_maxit", "balance_weights", "balance_diagnostics"),
       placebo_statistic = "ATT", check_rule = "absorbing", peer = NA, parity_test = "test-parity-stacked.R",
       estimand = "the average effect on the treated across the stacked sub-experiments, each cohort compared with its clean controls"),
  list(name = "did_lpdid", class = "did_lpdid", treatment = "gname",
       fields = c("horizons", "reweight", "pmd", "control_group", "windows", "non_absorbing", "stabilization_window",
                  "covariates", "method"),
       placebo_statistic = "ATT", check_rule = "absorbing", peer = "fixest", parity_test = "test-parity-lpdid.R",
       estimand = "the average effect over the post-treatment horizons, each horizon a local projection on clean controls"),
  # no R package: the authors' Stata lwdid (goldens via diff-diff) and the paper's tables
  list(name = "did_lwdid", class = "did_lwdid", treatment = "gname",
       fields = c("cells", "transformation", "est_method", "control_group", "cohorts", "common_timing", "ri"),
       placebo_statistic = "ATT", check_rule = "absorbing", peer = NA, parity_test = "test-parity-lwdid.R",
       estimand = "the average effect on the treated after removing each unit's pre-treatment mean (or trend)"),
  # did2s with the clean rows as its untreated sample (the two stages by hand with lm besides)
  list(name = "did_spillover", class = "did_spillover", treatment = "gname",
       fields = c("rings", "ring_rows", "n_clean", "distance", "exposure", "anticipation", "n_treated", "n_untreated",
                  "first_stage"),
       check_rule = NA, peer = "did2s", parity_test = "test-parity-spillover.R",
       estimand = "the effect on the treated units, with the units near them (exposed to spillovers) kept out of the comparison"),
  # qte's legacy CiC() and QDiD() on each cohort-period 2x2 (qte in a private library: tools/install-qte.sh)
  list(name = "did_cic", class = "did_cic", treatment = "gname",
       fields = c("method", "probs", "control_group", "panel", "cells", "distributions", "cluster", "tname",
                  "xformla", "covariates", "taus"),
       check_rule = "absorbing", peer = "qte", parity_test = "test-parity-cic.R",
       estimand = "the effect on the treated units' outcome distribution (average and quantile effects, changes-in-changes)",
       assumption = "Changes-in-changes: untreated outcomes are monotone in one unobservable whose distribution is the same over time within a group, with common support (a break in mean trends is not evidence against it)."),
  list(name = "did_etwfe", class = "did_etwfe", treatment = "gname",
       fields = c("family", "control_group", "fe", "tname", "etwfe", "ifs", "boot"),
       aggregate = "did_etwfe_agg", placebo_statistic = "ATT (simple aggregate)", check_rule = "absorbing",
       peer = "etwfe", parity_test = "test-parity-etwfe.R",
       estimand = "the average effect on the treated units over their treated periods: extended TWFE cohort-by-period effects averaged"),
  list(name = "did_rs", class = "did_rs", treatment = "gname",
       fields = c("vcov_neyman", "beta", "estimand", "comparison", "cohorts", "tname", "nperm"),
       placebo_statistic = "ATT", check_rule = "absorbing", peer = "staggered", parity_test = "test-parity-rs.R",
       estimand = "the average effect on the treated under random timing of adoption",
       assumption = "The timing of adoption is as good as random (stronger than parallel trends); no anticipation."),
  # no R package: the paper's published numbers and an independent implementation
  list(name = "did_edid", class = "did_edid", treatment = "gname",
       fields = c("inf", "n", "units", "unit_group", "unit_weight", "unit_cluster", "periods", "pt_assumption",
                  "covariates", "engine", "anticipation", "tname", "cluster", "survey_label", "weights"),
       aggregate = "did_cs_agg", placebo_statistic = "ATT (simple aggregate)", check_rule = "absorbing_never",
       peer = NA, parity_test = "test-edid.R",
       estimand = "the average effect on the treated units over all their treated periods: efficient group-time effects averaged with weights proportional to cohort size"),
  list(name = "did_sdid", class = "did_sdid", treatment = "dname",
       fields = c("method", "se_method", "nboot", "Y", "X", "N0", "T0", "omega", "lambda", "weights", "cohorts",
                  "cohort_of", "fits", "replicates", "settings", "tname"),
       placebo_statistic = "ATT", check_rule = "balanced_never_staggered", peer = "synthdid",
       parity_test = "test-parity-sdid.R",
       estimand = "the average effect on the treated units over the post-treatment periods, against a weighted synthetic control (unit and time weights)",
       assumption = "A factor structure (or a weighted combination of controls) reproduces the treated units' untreated path; no anticipation; no spillovers to the donors."),
  # no R package: the reference numbers come from diff-diff (Python)
  list(name = "did_trop", class = "did_trop", treatment = "dname",
       fields = c("method", "lambda", "loocv", "cell_effects", "unit_effects", "period_effects", "factor",
                  "replicates", "nboot", "tname", "settings", "n_treated", "n_control", "non_absorbing"),
       placebo_statistic = "ATT", check_rule = "balanced_never_pre2", peer = NA, parity_test = "test-trop.R",
       estimand = "the average effect on the treated unit-periods, against a weighted factor-model counterfactual",
       assumption = "A factor structure (or a weighted combination of controls) reproduces the treated units' untreated path; no anticipation; no spillovers to the donors."),
  list(name = "did_synth", class = "did_synth", treatment = "dname",
       fields = c("tname", "fits", "placebos", "periods", "Y0", "settings", "placebo_mspe_cut", "synth_data",
                  "weights", "loss_w", "vmat", "weight_table", "predictor_weights", "balance", "gaps",
                  "average_gaps"),
       check_rule = "balanced_never2", peer = "Synth", parity_test = "test-parity-synth.R",
       estimand = "the effect on the treated unit over the post-treatment periods, against its synthetic control (a weighted average of donors)",
       assumption = "A factor structure (or a weighted combination of controls) reproduces the treated units' untreated path; no anticipation; no spillovers to the donors."),
  list(name = "did_ddd", class = "did_ddd", treatment = "gname",
       fields = c("inf", "n", "units", "unit_group", "unit_partition", "unit_weight", "unit_cluster", "periods",
                  "control_group", "anticipation", "base_period", "est_method", "tname", "panel", "cluster",
                  "survey_label", "comparisons"),
       aggregate = "did_cs_agg", placebo_statistic = "ATT (simple aggregate)", check_rule = NA,
       peer = "triplediff", parity_test = "test-parity-ddd.R",
       estimand = "the average triple-difference effect on the treated units over all their treated periods: group-time effects averaged with weights proportional to cohort size",
       assumption = "The outcome gap between the eligible and the ineligible units would have trended the same way in treated and untreated groups (triple-difference parallel trends); no anticipation."),
  list(name = "did_dose", class = "did_dose", treatment = "dose",
       fields = c("dose", "cells", "knots", "degree", "tname", "dose_crit", "inf", "cell_inf", "curve_inf", "cck",
                  "control_group"),
       aggregate = "did_cs_agg", check_rule = "dose", peer = "contdid", parity_test = "test-parity-dose.R",
       estimand = "the average effect of the dose on the treated units, and its slope in the dose (ACRT)",
       assumption = "Parallel trends at every dose (strong parallel trends when the slope in the dose is read causally); no anticipation."),
  list(name = "did_had", class = "did_had", treatment = "dose",
       fields = c("tname", "inf", "adoption", "n_stayers", "kernel", "bwselect", "tests", "stute_joint",
                  "stute_nboot", "settings"),
       check_rule = "dose", peer = "DIDHAD", parity_test = "test-parity-had.R",
       estimand = "the average slope of the effect in the dose among the treated, without an untreated group (heterogeneous adoption design)",
       assumption = "Parallel trends between units with small and large doses, and a dose density positive near zero; no anticipation."),
  list(name = "did_dcdh", class = "did_dcdh", treatment = "dname",
       fields = c("tname", "joint", "delta_D_avg_total", "inf", "estimand", "predict_het"),
       check_rule = "reversible", peer = "DIDmultiplegtDYN", parity_test = "test-parity-dcdh.R",
       estimand = "the average effect of a change in treatment on the units that switch, over the periods after the switch",
       assumption = "Parallel trends among units whose treatment has not yet changed, and no anticipation of the switch."),
  # no R package: the paper's equations by hand, numerical derivatives, a bootstrap of individuals
  list(name = "did_duration", class = "did_duration", treatment = "gname",
       fields = c("inf", "n", "units", "unit_group", "unit_weight", "unit_cluster", "periods", "tname", "cluster",
                  "method", "first_treat", "last_pre", "fit_periods", "fit_weights", "c_hat", "survival", "pretest",
                  "control_group"),
       check_rule = NA, peer = NA, parity_test = "test-duration.R",
       estimand = "the effect on the share of treated units that have experienced the event (an absorbing binary outcome) by each post-treatment period, averaged over those periods",
       assumption = "The treated group's untreated hazard of the event would have evolved like the never-treated group's (common dynamics of the integrated hazard, or proportional hazards, by `method`); no anticipation."),
  # regression discontinuity: a running variable and a cutoff, not a panel
  list(name = "rd_robust", class = "rd_robust", treatment = "running",
       fields = c("inf", "curve", "bins", "xname", "cutoff", "fuzzy", "bandwidths", "c_bw", "bwselect", "counts", "sides", "coef_covs",
                  "covariates", "settings", "first_stage", "reduced_form"),
       check_rule = NA, peer = "rdrobust", parity_test = "test-parity-rd.R",
       estimand = "the effect at the cutoff of the running variable, for units near it",
       assumption = "Continuity at the cutoff: the expected potential outcomes are continuous in the running variable there, and units cannot sort precisely around it (check the density: rd_density()).")
)

# The fields of the results aggregate() returns (the `aggregate` classes above)
dd_aggregate_fields <- list(
  did_cs_agg = c("type", "crit", "nboot", "boot_weights", "cband", "cband_method", "inf", "comb", "n",
                 "unit_cluster", "base_period", "units", "source_call", "cluster", "survey_label", "control_group"),
  did_etwfe_agg = c("type", "jacobian", "control_group"))

# The registry as a data frame (built once, when the package is built)
dd_registry_build <- function(entries) {
  cols <- c("name", "class", "treatment", "fields", "aggregate", "placebo", "placebo_statistic", "check_rule",
            "peer", "parity_test", "estimand", "assumption")
  chr <- function(k) vapply(entries, function(e) if (is.null(e[[k]])) NA_character_ else as.character(e[[k]]),
                            character(1))
  reg <- data.frame(name = chr("name"), class = chr("class"), treatment = chr("treatment"), stringsAsFactors = FALSE)
  reg$fields <- lapply(entries, function(e) as.character(e$fields))
  reg$aggregate <- chr("aggregate")
  reg$placebo_statistic <- chr("placebo_statistic")
  reg$placebo <- !is.na(reg$placebo_statistic)
  for (k in c("check_rule", "peer", "parity_test", "estimand", "assumption")) reg[[k]] <- chr(k)
  reg <- reg[cols]
  stopifnot(!anyNA(reg$name), !anyNA(reg$estimand), !anyDuplicated(reg$name), !anyNA(reg$class), !anyDuplicated(reg$class),
            reg$treatment %in% c("gname", "dname", "dose", "treatname", "running"),
            reg$aggregate[!is.na(reg$aggregate)] %in% names(dd_aggregate_fields))
  reg
}
dd_registry <- dd_registry_build(dd_registry_entries)

#' The estimators of diffdiff
#'
#' One row per estimator: what it returns, how it takes the treatment, the
#' fields its results may carry, whether [placebo_test()] and [did_check()]
#' cover it, and the peer package it is checked against. The table is the
#' package's own list: the result constructor, [placebo_test()],
#' [did_check()] and the conformance tests read it.
#'
#' @return A data frame with one row per estimator and the columns
#' \describe{
#'   \item{`name`}{the function, e.g. `"did_cs"`.}
#'   \item{`class`}{the class of its result, which also has class
#'     `dd_fit`.}
#'   \item{`treatment`}{the argument that carries the treatment: `"gname"`
#'     (first treated period), `"dname"` (a 0/1 treatment column), `"dose"`
#'     (a continuous dose: `dose` in `did_dose()`, `dname` in `did_had()`),
#'     `"treatname"` (`did_2x2()`: a treated-group indicator, with
#'     `postname`) or `"running"` (`rd_robust()`: a running variable and a
#'     cutoff).}
#'   \item{`fields`}{a list: the fields a result may carry besides those of
#'     every fit (`coeftable`, `coefficients`, `vcov`, `call`, `estimator`,
#'     `title`, `yname`, `nobs`, `n_units`, `n_periods`, `n_clusters`,
#'     `vcov_type`, `vcov_label`, `df`, `alpha`, `main_terms`, `fe_names`,
#'     `dropped`, `notes`) and the optional shared ones (`stamp`, `path`,
#'     `event_study`, the fixed-effect and bootstrap settings, ...); not
#'     every fit has all of them (some depend on the arguments).}
#'   \item{`aggregate`}{the class that `aggregate()` returns for its fits;
#'     `NA` if it has no `aggregate()` method.}
#'   \item{`placebo`}{`TRUE` if [placebo_test()] re-runs its fits.}
#'   \item{`placebo_statistic`}{the effect [placebo_test()] tests on a
#'     default fit: `"ATT (simple aggregate)"` (`aggregate(fit, "simple")`),
#'     `"ATT"` (the fit's `ATT` row) or `"mean of event-time effects, e >=
#'     0"`; `NA` when `placebo` is `FALSE`.}
#'   \item{`check_rule`}{when [did_check()] lists it as supported:
#'     `"absorbing"` (an absorbing binary treatment), `"absorbing_never"`
#'     (and never-treated units), `"balanced_never_staggered"` (and a
#'     balanced panel; with several cohorts listed with `staggered = TRUE`),
#'     `"balanced_never_pre2"` (and at least two periods before the first
#'     adoption), `"balanced_never2"` (a balanced panel with at least two
#'     never-treated units and a period before the first adoption),
#'     `"reversible"` (a 0/1 treatment that switches off),
#'     `"dose"` (a continuous dose); `NA`: not listed.}
#'   \item{`peer`}{the R package its numbers are checked against (live, or
#'     through reference numbers that package produced); `NA` if none.}
#'   \item{`parity_test`}{the file of `tests/testthat` in the package
#'     sources that holds the comparison; `NA` if none.}
#'   \item{`estimand`}{the headline number of its default fit in plain
#'     words (used by `summary(fit, style = "plain")` and [dd_report()]).}
#'   \item{`assumption`}{its identifying assumption in plain words; `NA`
#'     means parallel trends, worded with the fit's comparison group and
#'     anticipation.}
#' }
#' @examples
#' est <- dd_estimators()
#' est[, c("name", "class", "treatment", "placebo", "peer")]
#' est$fields[[match("did_sa", est$name)]]
#' @export
dd_estimators <- function() {
  reg <- dd_registry
  rownames(reg) <- NULL
  reg
}

# placebo_test()'s lists (placebo.R): the estimators whose fits it re-runs
# (panel estimators with a staggered or block treatment), and the classes of
# those whose effect is their simple aggregate
dd_placebo_estimators <- dd_registry$name[dd_registry$placebo]
dd_placebo_aggregated <- dd_registry$class[dd_registry$placebo_statistic %in% "ATT (simple aggregate)"]

# the fields of every result class: the registry's classes and the aggregates
dd_registry_fields <- function() {
  c(stats::setNames(dd_registry$fields, dd_registry$class), dd_aggregate_fields)
}
