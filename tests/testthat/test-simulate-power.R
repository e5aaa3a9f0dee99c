# dd_sim_*() generators and dd_simulate_power(). References: dd_power()'s
# analytic power (itself checked against diff-diff 3.3.2 and closed forms in
# test-power.R) must agree with the simulated rejection rate of did_twfe on
# dd_sim_basic() panels within Monte Carlo error (the design where the
# formula holds: unit effects, AR(1) errors, balanced block assignment;
# did_twfe's clustered t test).

test_that("dd_sim generators: shapes, effects, reproducibility", {
  set.seed(3); a <- dd_sim_basic(n_units = 40, n_pre = 2, n_post = 3, effect = 2, sd = 0, sd_unit = 0)
  set.seed(3); b <- dd_sim_basic(n_units = 40, n_pre = 2, n_post = 3, effect = 2, sd = 0, sd_unit = 0)
  expect_identical(a, b)
  expect_identical(nrow(a), 200L)
  expect_equal(a$y, 2 * a$D)                                  # no noise: the effect only
  expect_identical(sort(unique(a$first_treat)), c(0, 3))
  s <- dd_sim_staggered(n_units = 100, n_periods = 8, cohorts = c(3, 5), never_share = 0.2, effect = 1,
                        dynamic = 0.5, sd = 0, sd_unit = 0)
  expect_equal(s$y, ifelse(s$D == 1, 1 + 0.5 * (s$time - s$first_treat), 0))
  expect_identical(as.vector(table(s$first_treat[s$time == 1])), c(20L, 40L, 40L))
  expect_error(dd_sim_basic(treated_share = 1), "`treated_share`")
  expect_error(dd_sim_basic(rho = 1), "`rho` must be one number in \\(-1, 1\\)")
  expect_error(dd_sim_staggered(n_periods = 5, cohorts = 7), "`cohorts` must be whole periods")
})

test_that("dd_simulate_power agrees with dd_power and is reproducible whatever the cores", {
  J <- 120; m <- 2; r <- 2; rho <- 0.5
  est <- function(d) did_twfe(d, "y", "id", "time", "D")
  args <- list(n_units = J, n_pre = m, n_post = r, rho = rho, sd = 1, sd_unit = 1)
  set.seed(42)
  ps <- dd_simulate_power(est, dd_sim_basic, effect_sizes = c(0, 0.25, 0.45), nsim = 600, dgp_args = args)
  an <- dd_power(effect = c(0.25, 0.45), n = J, n_pre = m, n_post = r, rho = rho, correlation = "ar1")
  # the size, and the power at two effects, within 4 Monte Carlo SEs (plus
  # the t test's small-sample difference, a fraction of a point here)
  expect_true(abs(ps$power[1] - 0.05) < 4 * sqrt(0.05 * 0.95 / 600), label = paste("size", ps$power[1]))
  d <- ps$power[2:3] - an$power
  expect_true(all(abs(d) < 4 * ps$mc_se[2:3] + 0.01), label = paste(round(ps$power[2:3], 3), "vs", round(an$power, 3)))
  # the sampling SD is the analytic SE
  expect_true(all(abs(ps$sd_estimate[2:3] / an$se - 1) < 4 * sqrt(1 / (2 * 600))))
  expect_true(is.finite(attr(ps, "mde")) || max(ps$power) < 0.8)
  # the same draws with two processes
  skip_on_os("windows")
  set.seed(42)
  p2 <- dd_simulate_power(est, dd_sim_basic, effect_sizes = c(0, 0.25, 0.45), nsim = 600, dgp_args = args, cores = 2)
  expect_identical(p2$power, ps$power)
  expect_identical(p2$mean_estimate, ps$mean_estimate)
})

test_that("dd_simulate_power: output, plot, warnings and bad input", {
  est <- function(d) did_twfe(d, "y", "id", "time", "D")
  set.seed(1)
  expect_warning(ps <- dd_simulate_power(est, dd_sim_basic, effect_sizes = c(0, 0.5, 1), nsim = 40,
                                         dgp_args = list(n_units = 60)),
                 "`nsim` = 40 draws give power estimates with a Monte Carlo standard error up to 0.079")
  expect_s3_class(ps, "dd_power_sim")
  expect_output(print(ps), "Simulated power \\(40 draws per effect")
  f <- tempfile(fileext = ".png"); grDevices::png(f); plot(ps); grDevices::dev.off()
  expect_true(file.size(f) > 0)
  expect_error(dd_simulate_power(est, dd_sim_basic, effect_sizes = -1, nsim = 10), "`effect_sizes`")
  expect_error(dd_simulate_power("did_twfe", dd_sim_basic, effect_sizes = 1, nsim = 10), "`estimator` must be a function")
  expect_error(dd_simulate_power(est, dd_sim_basic, effect_sizes = 1, nsim = 1), "`nsim`")
  expect_warning(pf <- dd_simulate_power(function(d) stop("no"), dd_sim_basic, effect_sizes = 1, nsim = 5,
                                         mc_se = 0.5),
                 "5 draws failed")
  expect_identical(pf$failed, 5L)
  skip_if_not_installed("ggplot2")
  g <- ggplot2::autoplot(ps)
  expect_s3_class(g, "ggplot")
  grDevices::png(f); print(g); grDevices::dev.off()
  expect_true(file.size(f) > 0)
})

test_that("dd_sim_factor, dd_sim_ddd and dd_sim_survey: layouts and the effects they plant", {
  set.seed(5)
  f <- dd_sim_factor(n_units = 20, n_periods = 12, n_treated = 4, effect = 3, sd = 0, sd_unit = 0, n_factors = 0)
  expect_equal(f$y, 3 * f$D)
  expect_identical(sort(unique(f$first_treat)), c(0, 10))
  expect_identical(sum(f$D), 12)
  f2 <- dd_sim_factor(n_units = 20, n_periods = 12, n_treated = 4, loading_shift = 1)
  expect_identical(dim(f2), c(240L, 5L))
  # DDD: without noise the triple difference of cell means is the effect,
  # while the cohort x period shocks bias the eligible-only DiD
  g <- dd_sim_ddd(n_units = 400, n_periods = 6, cohorts = 4, never_share = 0.5, effect = 2, sd = 0, sd_unit = 0,
                  sd_shock = 1)
  m <- function(gg, el, post) mean(g$y[g$first_treat == gg & g$eligible == el & (g$time >= 4) == post])
  ddd <- (m(4, 1, TRUE) - m(4, 1, FALSE) - m(0, 1, TRUE) + m(0, 1, FALSE)) -
         (m(4, 0, TRUE) - m(4, 0, FALSE) - m(0, 0, TRUE) + m(0, 0, FALSE))
  expect_equal(ddd, 2, tolerance = 1e-12)
  expect_identical(sort(unique(g$eligible)), c(0, 1))
  expect_true(all(g$D[g$eligible == 0] == 0))
  s <- dd_sim_survey(n_strata = 4, n_psu = 6, units_per_psu = 5, effect = 1)
  expect_identical(length(unique(s$psu)), 24L)
  expect_true(all(tapply(s$treat, s$stratum, mean) == 0.5))
  expect_true(all(tapply(s$treat, s$psu, function(x) length(unique(x))) == 1))
  expect_identical(sort(unique(s$weight)), c(10, 20, 40, 80))
  expect_error(dd_sim_factor(n_units = 5, n_treated = 5), "`n_treated` = 5 leaves no control unit")
  expect_error(dd_sim_ddd(eligible_share = 1), "`eligible_share`")
  expect_error(dd_sim_survey(n_psu = 1), "`n_psu`")
})

test_that("dd_simulate_sample_size: agrees with dd_power's sample size, reproducible, bad input", {
  m <- 2; r <- 2; rho <- 0.5
  est <- function(d) did_twfe(d, "y", "id", "time", "D")
  args <- list(n_pre = m, n_post = r, rho = rho, sd = 1, sd_unit = 1)
  n_an <- dd_power(effect = 0.35, power = 0.8, n_pre = m, n_post = r, rho = rho, correlation = "ar1")$n
  cand <- 2 * round(n_an * c(0.5, 0.75, 1, 1.25, 1.5) / 2)
  set.seed(7)
  ss <- dd_simulate_sample_size(est, dd_sim_basic, effect = 0.35, n_units = cand, nsim = 300, mc_se = 0.03,
                                dgp_args = args)
  expect_s3_class(ss, "dd_power_sim_n")
  expect_identical(ss$n_units, cand)
  # the simulated requirement within 20% of the analytic one (about three
  # Monte Carlo SEs of the interpolated crossing at 300 draws)
  expect_true(abs(attr(ss, "n_required") / n_an - 1) < 0.2,
              label = paste(attr(ss, "n_required"), "vs", n_an))
  # the rows are dd_simulate_power() calls in sequence on the same stream
  set.seed(7)
  p1 <- dd_simulate_power(est, dd_sim_basic, 0.35, nsim = 300, mc_se = 0.03, dgp_args = c(args, list(n_units = cand[1])))
  expect_identical(ss$power[1], p1$power)
  # interpolation between the bracketing candidates
  j <- which(ss$power >= 0.8)[1]
  if (!is.na(j) && j > 1) {
    x0 <- ss$n_units[j - 1] + (0.8 - ss$power[j - 1]) * diff(ss$n_units[j - 1:0]) / diff(ss$power[j - 1:0])
    expect_identical(attr(ss, "n_required"), ceiling(x0))
  }
  expect_output(print(ss), "Units needed for power 0.8")
  f <- tempfile(fileext = ".png"); png(f); plot(ss); dev.off(); expect_true(file.size(f) > 0)
  if (requireNamespace("ggplot2", quietly = TRUE)) expect_s3_class(ggplot2::autoplot(ss), "ggplot")
  expect_error(dd_simulate_sample_size(est, effect = 0, n_units = c(10, 20)), "`effect` must be one positive")
  expect_error(dd_simulate_sample_size(est, effect = 0.3, n_units = 20), "`n_units` must be at least two")
  expect_error(dd_simulate_sample_size(est, effect = 0.3, n_units = c(10, 20), dgp_args = list(n_units = 5)),
               "without `n_units`")
  expect_error(dd_simulate_sample_size(est, effect = 0.3, n_units = c(10, 20), power = 0.01), "`power`")
})

test_that("dd_sim_continuous and dd_sim_reversible: layouts and the effects they plant", {
  set.seed(11)
  d <- dd_sim_continuous(n_units = 400, n_periods = 5, cohorts = 3, never_share = 0.25, effect = 1, slope = 2,
                         sd = 0, sd_unit = 0, trend = 0)
  expect_identical(nrow(d), 2000L)
  # the dose is constant within unit, 0 exactly for the never treated
  expect_true(all(tapply(d$dose, d$id, function(v) length(unique(v))) == 1L))
  expect_true(all(d$dose[d$first_treat == 0] == 0) && all(d$dose[d$first_treat > 0] > 0))
  expect_equal(mean(d$first_treat[d$time == 1] == 0), 0.25)
  # without noise the outcome is the planted effect 1 + 2 * dose after adoption
  expect_equal(d$y, d$D * (1 + 2 * d$dose))
  expect_equal(median(d$dose[d$first_treat > 0 & d$time == 1]), exp(0.5), tolerance = 0.15)
  # did_dose recovers the linear dose response (noise added)
  set.seed(12)
  e <- dd_sim_continuous(n_units = 600, n_periods = 4, cohorts = 3, slope = 2)
  f <- did_dose(e, "y", "id", "time", "first_treat", "dose", degree = 1, num_knots = 0, nboot = 0)
  acrt <- f$coeftable$estimate[f$coeftable$term == "ACRT"]
  expect_lt(abs(acrt - 2), 4 * f$coeftable$std.error[f$coeftable$term == "ACRT"])
  # reversible: one switch per unit, in either direction
  set.seed(13)
  r <- dd_sim_reversible(n_units = 300, n_periods = 8, treated_share = 0.3, effect = 2, effect_sd = 0, sd = 0,
                         sd_unit = 0, trend = 0)
  sw <- tapply(r$D[order(r$id, r$time)], r$id[order(r$id, r$time)], function(v) sum(diff(v) != 0))
  expect_true(all(sw == 1L))
  first <- r$D[r$time == 1]
  expect_equal(mean(first), 0.3, tolerance = 0.1)
  expect_equal(r$y, 2 * r$D)
  x <- did_check(r, "y", "id", "time", dname = "D")
  expect_true("TREATMENT_REVERSIBLE" %in% x$findings$code)
  expect_error(dd_sim_continuous(dose_sdlog = -1), "`dose_sdlog`")
  expect_error(dd_sim_reversible(treated_share = 2), "`treated_share`")
  expect_error(dd_sim_reversible(effect_sd = NA), "`effect_sd`")
})

test_that("dd_simulate_power: mc_se, power and term are checked up front, naming the argument and value", {
  # before the fix mc_se = 1e-9 failed inside sprintf ("invalid format '%d'")
  # and power = 2 returned a table with an unbracketed MDE without a word
  est <- function(d) did_twfe(d, "y", "id", "time", "D")
  run <- function(...) dd_simulate_power(est, dd_sim_basic, effect_sizes = 0, nsim = 2, dgp_args = list(n_units = 20), ...)
  expect_error(run(mc_se = 1e-9), "`mc_se` = 1e-09 would need 2.5e\\+17 draws per effect size .*largest `nsim` \\(2147483647\\); `mc_se` must be at least 1.08e-05")
  expect_error(run(mc_se = Inf), "`mc_se` must be one positive finite number; got Inf")
  expect_error(run(mc_se = 0), "`mc_se` must be one positive finite number; got 0")
  expect_error(run(power = 2), "`power` must be one number in \\(0, 1\\) .*got 2")
  expect_error(run(power = NA), "`power` must be one number in \\(0, 1\\)")
  expect_error(run(term = 3), "`term` must be NULL .*got 3")
  expect_error(run(term = c("a", "b")), "`term` must be NULL")
  # the smallest reachable mc_se: a warning with the draws it needs, not an error
  set.seed(1)
  expect_warning(run(mc_se = 1.1e-5), "use nsim >= 2066115703")
  expect_error(dd_simulate_sample_size(est, dd_sim_basic, effect = 0.3, n_units = c(20, 40), nsim = 2, mc_se = 1e-9),
               "`mc_se` = 1e-09 would need")
})
