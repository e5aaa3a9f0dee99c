# Scenario 5: a reversible treatment under a survey design (diff-diff's
# "reversible_dcdh"): did_dcdh with 3 effects and 3 placebos, design-based
# standard errors (8 strata, 24 PSUs, group weights), HonestDiD on the
# placebos, and a heterogeneity refit (predict_het on a group covariate).
# 120 groups x 10 periods; every group switches once (30% switch off).
source(file.path(Sys.getenv("SCENARIO_DIR", dirname(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE)[1]))), "harness.R"), local = TRUE)

reversible_dcdh_scales <- list(small = list(n_groups = 120))

reversible_dcdh_data <- function(scale, seed = 42) {
  set.seed(seed)
  G <- reversible_dcdh_scales[[scale]]$n_groups
  d <- diffdiff::dd_sim_reversible(n_units = G, n_periods = 10, treated_share = 0.3, effect = 2, effect_sd = 0.5,
                                   sd = 0.5, sd_unit = 2, trend = 0.1)
  names(d)[match(c("id", "time", "D", "y"), names(d))] <- c("group", "period", "treatment", "outcome")
  i <- d$group - 1L
  d$stratum <- i %% 8L
  d$psu <- d$stratum * 3L + (i %/% 8L) %% 3L
  d$pw <- stats::rlnorm(G, 0, 0.3)[d$group]
  d$size <- stats::rnorm(G)[d$group]                   # a group-level covariate for the heterogeneity refit
  d
}

reversible_dcdh_phases <- function() list(
  dcdh_fit_3_effects_survey_tsl = function(res) {
    res$des <- survey_design(res$data, weights = ~pw, strata = ~stratum, ids = ~psu)
    res$dcdh <- did_dcdh(res$data, "outcome", "group", "period", "treatment", effects = 3, placebo = 3, survey = res$des)
  },
  inspect_placebo_and_summary = function(res) {
    ct <- res$dcdh$coeftable
    res$placebos <- ct[grepl("^placebo", ct$term), ]
  },
  honest_did_on_placebo = function(res)
    res$honest <- honest_did(res$dcdh, type = "RM", Mbar = c(0.5, 1, 1.5), breakdown = FALSE),
  heterogeneity_refit = function(res) {
    res$het <- did_dcdh(res$data, "outcome", "group", "period", "treatment", effects = 3, placebo = 3,
                        survey = res$des, predict_het = "size")
    ct <- res$dcdh$coeftable
    res$headline <- list(effect_1 = ct$estimate[ct$term == ct$term[1]], se_1 = ct$std.error[1], term_1 = ct$term[1])
  })

scenario_main("reversible_dcdh")
