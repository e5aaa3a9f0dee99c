# Scenario 6: a pricing dose-response (diff-diff's "dose_response"):
# did_dose with a cubic B-spline (one interior knot) and 199 bootstrap
# draws, the dose-response and group-time tables, the event study, a
# binarised 2x2 comparison, and the spline's sensitivity (linear; two
# knots). 500 units x 6 periods, one cohort adopting in period 3, 30% never
# treated, log-normal doses, ATT(d) = 1 + 2d.
source(file.path(Sys.getenv("SCENARIO_DIR", dirname(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE)[1]))), "harness.R"), local = TRUE)

dose_response_scales <- list(small = list(n_units = 500))

dose_response_data <- function(scale, seed = 42) {
  set.seed(seed)
  d <- diffdiff::dd_sim_continuous(n_units = dose_response_scales[[scale]]$n_units, n_periods = 6, cohorts = 3,
                                   never_share = 0.3, effect = 1, slope = 2, dose_meanlog = 0.5, dose_sdlog = 0.5,
                                   sd = 1, sd_unit = 2, trend = 0.5)
  names(d)[match(c("id", "time", "y"), names(d))] <- c("unit", "period", "outcome")
  d
}

dose_response_phases <- function() {
  fit <- function(res, degree, knots, nboot)
    did_dose(res$data, "outcome", "unit", "period", "first_treat", "dose", degree = degree, num_knots = knots,
             nboot = nboot, control_group = "nevertreated")
  list(
    cdid_cubic_spline_bootstrap199 = function(res) res$cubic <- fit(res, 3, 1, 199),
    extract_dose_response_tables = function(res) {
      res$curve <- tidy(res$cubic)
      res$gt <- tidy(aggregate(res$cubic, "group"))
    },
    cdid_event_study_pretrend = function(res) res$es <- aggregate(fit(res, 3, 1, 0), "dynamic"),
    binarized_did_comparison = function(res) {
      b <- res$data
      b$treated_any <- as.integer(b$dose > 0); b$post <- as.integer(b$period >= 3)
      res$bin <- did_2x2(b, "outcome", "treated_any", "post", vcov = "HC1")
    },
    spline_sensitivity_degree1 = function(res) res$linear <- fit(res, 1, 0, 199),
    spline_sensitivity_num_knots2 = function(res) {
      res$knots2 <- fit(res, 3, 2, 199)
      ct <- res$cubic$coeftable
      res$headline <- list(att_o = ct$estimate[ct$term == "ATT"], acrt_o = ct$estimate[ct$term == "ACRT"],
                           binarized = coef(res$bin)[["ATT"]])
    })
}

scenario_main("dose_response")
