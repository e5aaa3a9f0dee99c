# Scenario 3: survey microdata to a state-year panel (diff-diff's
# "brfss_panel"): design-based cell means of BRFSS-shaped microdata
# (aggregate_survey(): domain estimation over strata and PSUs), then
# Callaway-Sant'Anna (outcome regression, 199 bootstrap draws, all
# aggregations) on the 500 cells weighted by each state's estimated
# population, pre-trend inspection, a HonestDiD grid and a Sun-Abraham
# refit. 50 states x 10 years; 50,000 / 250,000 / 1,000,000 respondents.
source(file.path(Sys.getenv("SCENARIO_DIR", dirname(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE)[1]))), "harness.R"), local = TRUE)

brfss_panel_scales <- list(small = list(n_per_cell = 100, n_strata = 10, n_psu = 200),
                           medium = list(n_per_cell = 500, n_strata = 15, n_psu = 600),
                           large = list(n_per_cell = 2000, n_strata = 20, n_psu = 1000))

# diff-diff's microdata (the same formulas; R's generator): strata and PSUs
# drawn per respondent, log-normal weights, 40% never-treated states and
# five adoption years, effect 3, noise whose SD grows with the state index
brfss_panel_data <- function(scale, seed = 42) {
  cfg <- brfss_panel_scales[[scale]]
  set.seed(seed)
  ns <- 50; ny <- 10; m <- cfg$n_per_cell; n <- ns * ny * m
  state <- rep(seq_len(ns) - 1L, each = ny * m)
  year <- rep(rep(2010L + seq_len(ny) - 1L, each = m), ns)
  strata <- sample.int(cfg$n_strata, n, TRUE) - 1L
  k <- cfg$n_psu %/% cfg$n_strata
  psu <- strata * k + sample.int(k, n, TRUE) - 1L
  w <- stats::rlnorm(n, 0, 0.4) * 50
  coh <- sample(c(0, 2013:2017), ns, TRUE, prob = c(0.4, rep(0.12, 5)))
  ft <- coh[state + 1L]
  y <- stats::rnorm(n) + 0.5 * (year - 2010) + 3 * (ft > 0 & year >= ft) + stats::rnorm(n, 0, 0.2) * state
  data.frame(state, year, strata, psu, finalwt = w, y, first_treat = ft)
}

brfss_panel_phases <- function() list(
  aggregate_survey_microdata_to_panel = function(res) {
    m <- res$data
    des <- survey_design(m, weights = ~finalwt, strata = ~strata, ids = ~psu)
    cells <- aggregate_survey(m, "y", by = c("state", "year"), design = des)
    cells$first_treat <- m$first_treat[match(cells$state, m$state)]
    cells$w2 <- stats::ave(cells$weight_sum, cells$state)     # the state's mean estimated population
    res$cells <- cells
  },
  cs_fit_with_stage2_weights = function(res) {
    res$cs <- did_cs(res$cells, "y", "state", "year", "first_treat", est_method = "reg", weightsname = "w2",
                     nboot = 199, base_period = "universal")
    res$cs_agg <- scenario_aggregates(res$cs)
  },
  inspect_pretrends = function(res) res$pretrends <- scenario_pretrends(res$cs_agg$dynamic),
  honest_did_grid = function(res)
    res$honest <- honest_did(res$cs_agg$dynamic, type = "RM", Mbar = c(0.5, 1, 1.5), breakdown = FALSE),
  sun_abraham_robustness = function(res)
    res$sa <- did_sa(res$cells, "y", "state", "year", "first_treat", weightsname = "w2", control_group = "never"),
  report = function(res) {
    fits <- list(cs = res$cs_agg$simple, sa = res$sa)
    res$report <- scenario_report(fits)
    res$headline <- list(cells = nrow(res$cells), cs_att = coef(res$cs_agg$simple)[["ATT"]],
                         cs_se = res$cs_agg$simple$coeftable$std.error[1])
  })

scenario_main("brfss_panel")
