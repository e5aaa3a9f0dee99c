# Scenario 4: synthetic DiD with few treated markets (diff-diff's
# "geo_few_markets"): did_sdid with jackknife standard errors, again with
# 200 bootstrap draws (weights re-estimated on every draw, as synthdid), and
# the diagnostics: in-time placebo, leave-one-out estimates, sensitivity to
# zeta_omega and the concentration of the unit weights (sdid_diagnostics()).
# As diff-diff's phases: the leave-one-out estimates are the jackknife's
# (weights fixed: its get_loo_effects_df() reads them from the jackknife
# pass), and the in-time placebo is refitted at every feasible fake adoption
# period (2 to 5 of the 6 pre-periods; sdid_diagnostics() does synthdid's
# one, the others are did_sdid() fits on the pre-periods).
# 12 periods (6 after adoption); 80 / 200 / 500 markets, 5 / 15 / 30 treated.
source(file.path(Sys.getenv("SCENARIO_DIR", dirname(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE)[1]))), "harness.R"), local = TRUE)

geo_few_markets_scales <- list(small = list(n_units = 80, n_treated = 5), medium = list(n_units = 200, n_treated = 15),
                               large = list(n_units = 500, n_treated = 30))

# diff-diff's factor model (its generate_factor_data, the same formulas):
# two factors, loadings and unit effects shifted for the treated markets,
# effect 2 from period 6 (periods 0-11)
geo_few_markets_data <- function(scale, seed = 42) {
  cfg <- geo_few_markets_scales[[scale]]
  set.seed(seed)
  N <- cfg$n_units; N1 <- cfg$n_treated; T <- 12
  Fm <- matrix(stats::rnorm(T * 2), T, 2)
  L <- matrix(stats::rnorm(2 * N), 2, N); L[, seq_len(N1)] <- L[, seq_len(N1)] + 0.5
  a <- stats::rnorm(N); a[seq_len(N1)] <- a[seq_len(N1)] + 1
  bt <- seq(0, 2, length.out = T)
  d <- data.frame(unit = rep(seq_len(N) - 1L, each = T), period = rep(seq_len(T) - 1L, N))
  d$treated <- as.integer(d$unit < N1 & d$period >= 6)
  d$outcome <- 10 + a[d$unit + 1] + bt[d$period + 1] + colSums(L[, d$unit + 1] * t(Fm[d$period + 1, ])) +
    2 * d$treated + stats::rnorm(nrow(d), 0, 0.5)
  d
}

geo_few_markets_phases <- function() list(
  sdid_jackknife_variance = function(res)
    res$jk <- did_sdid(res$data, "outcome", "unit", "period", "treated", se = "jackknife"),
  sdid_bootstrap_variance_200 = function(res)
    res$bs <- did_sdid(res$data, "outcome", "unit", "period", "treated", se = "bootstrap", nboot = 200),
  diagnostics_placebo_loo_zeta_weights = function(res) {
    res$diag <- sdid_diagnostics(res$jk, loo = "jackknife")
    pre <- res$data[res$data$period < 6, ]
    tr <- unique(res$data$unit[res$data$treated == 1])
    res$placebos <- vapply(c(2, 4, 5), function(p) {
      pre$fake <- as.integer(pre$unit %in% tr & pre$period >= p)
      coef(did_sdid(pre, "outcome", "unit", "period", "fake", se = "none"))[[1]]
    }, numeric(1))
    w <- sdid_weights(res$jk)$omega$weight
    res$concentration <- c(effective_n = 1 / sum(w^2), herfindahl = sum(w^2), top5 = sum(utils::head(sort(w, TRUE), 5)))
    res$headline <- list(att = coef(res$jk)[[1]], se_jackknife = res$jk$coeftable$std.error[1],
                         se_bootstrap = res$bs$coeftable$std.error[1])
  })

scenario_main("geo_few_markets")
