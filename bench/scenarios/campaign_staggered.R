# Scenario 1: a staggered marketing campaign (diff-diff's speed-review
# scenario "campaign_staggered"): Bacon decomposition, Callaway-Sant'Anna
# with two covariates and 999 bootstrap draws, all aggregations, pre-trend
# inspection, a HonestDiD relative-magnitudes grid, Sun-Abraham and
# imputation (BJS) robustness refits, Callaway-Sant'Anna without
# covariates, and a short report. 26 periods; 150 / 500 / 1,500 units.
# Callaway-Sant'Anna uses the universal base period (the pre-period
# estimates HonestDiD needs; the post-period ATT(g,t) and the overall ATT
# are those of the varying base period). HonestDiD: the relative-magnitudes
# robust confidence set (ARP conditional-least-favourable hybrid, as the
# HonestDiD package) for the effect on impact, 4 values of Mbar.
source(file.path(Sys.getenv("SCENARIO_DIR", dirname(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE)[1]))), "harness.R"), local = TRUE)

campaign_staggered_scales <- list(small = list(n_units = 150, cohorts = c(9, 14)),
                                  medium = list(n_units = 500, cohorts = c(9, 14, 19)),
                                  large = list(n_units = 1500, cohorts = c(9, 14, 19)))

# diff-diff's shape: 30% never treated, effect 3 growing 10% per period
# since adoption, a unit-level covariate (log population) and a row-level
# one (baseline spend)
campaign_staggered_data <- function(scale, seed = 42) {
  cfg <- campaign_staggered_scales[[scale]]
  set.seed(seed)
  d <- diffdiff::dd_sim_staggered(n_units = cfg$n_units, n_periods = 26, cohorts = cfg$cohorts, never_share = 0.3,
                                  effect = 3, dynamic = 0.3)
  names(d)[match(c("id", "time", "y"), names(d))] <- c("unit", "period", "outcome")
  d$log_pop <- stats::rnorm(cfg$n_units)[d$unit]
  d$baseline_spend <- stats::rnorm(nrow(d))
  d
}

campaign_staggered_phases <- function() list(
  bacon_decomposition = function(res)
    res$bacon <- bacon_decomp(res$data, "outcome", "unit", "period", "first_treat"),
  cs_fit_with_covariates_bootstrap999 = function(res) {
    res$cs <- did_cs(res$data, "outcome", "unit", "period", "first_treat", xformla = ~ log_pop + baseline_spend,
                     est_method = "dr", nboot = 999, base_period = "universal")
    res$cs_agg <- scenario_aggregates(res$cs)
  },
  inspect_pretrends = function(res) res$pretrends <- scenario_pretrends(res$cs_agg$dynamic),
  honest_did_M_grid = function(res)
    res$honest <- honest_did(res$cs_agg$dynamic, type = "RM", Mbar = c(0.5, 1, 1.5, 2), breakdown = FALSE),
  sun_abraham_robustness = function(res)
    res$sa <- did_sa(res$data, "outcome", "unit", "period", "first_treat", control_group = "never"),
  imputation_did_robustness = function(res)
    res$bjs <- did_bjs(res$data, "outcome", "unit", "period", "first_treat"),
  cs_without_covariates = function(res) {
    res$cs_nocov <- did_cs(res$data, "outcome", "unit", "period", "first_treat", est_method = "dr", nboot = 999,
                           base_period = "universal")
    res$cs_nocov_agg <- scenario_aggregates(res$cs_nocov)
  },
  report = function(res) {
    fits <- list(cs = res$cs_agg$simple, cs_nocov = res$cs_nocov_agg$simple, sa = res$sa, bjs = res$bjs)
    res$report <- scenario_report(fits)
    res$headline <- list(cs_att = coef(res$cs_agg$simple)[["ATT"]], cs_se = res$cs_agg$simple$coeftable$std.error[1],
                         cs_nocov_att = coef(res$cs_nocov_agg$simple)[["ATT"]])
  })

scenario_main("campaign_staggered")
