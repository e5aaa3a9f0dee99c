# Generators of issue 44, item 5 beyond dd_sim_synth / dd_sim_county:
# dd_sim_ddd() is already the staggered triple-difference DGP (diff-diff's
# generate_staggered_ddd_data): here did_ddd recovers its planted ATT(g,t)
# within 4 SEs; and dd_sim_basic()/dd_sim_staggered()'s `trend_treated` (a
# parallel-trends violation, diff-diff's generate_panel_data(parallel_trends
# = FALSE)) moves the treated units' outcomes by the documented trend, so the
# DiD is off by trend_treated x (mean post period - mean pre period). The
# truths come from the DGPs' definitions, not from the estimators.

test_that("dd_sim_ddd is staggered; did_ddd recovers its planted ATT(g,t)", {
  set.seed(51)
  g <- dd_sim_ddd(n_units = 4000, n_periods = 6, cohorts = c(3, 5), never_share = 0.3, effect = 1, dynamic = 0.5)
  u <- g[g$time == 1, ]
  expect_identical(as.vector(table(u$first_treat)), c(1200L, 1400L, 1400L))
  expect_equal(as.vector(tapply(u$eligible, u$first_treat, mean)), c(0.5, 0.5, 0.5))
  fit <- did_ddd(g, "y", "id", "time", "first_treat", "eligible")
  tab <- fit$coeftable
  truth <- ifelse(tab$time >= tab$group, 1 + 0.5 * (tab$time - tab$group), 0)
  z <- (tab$estimate - truth) / tab$std.error
  expect_true(all(abs(z) < 4), label = paste(round(z, 2), collapse = " "))
  s <- aggregate(fit, "simple")$coeftable
  att <- mean(ifelse(g$D == 1, 1 + 0.5 * (g$time - g$first_treat), NA), na.rm = TRUE)
  expect_lt(abs(s$estimate - att) / s$std.error, 4)
})

test_that("trend_treated: the treated units' extra trend, and the DiD bias it implies", {
  set.seed(52); a <- dd_sim_basic(n_units = 40, n_pre = 3, n_post = 2, effect = 1, sd = 0, sd_unit = 0,
                                  trend_treated = 0.5)
  expect_equal(a$y, a$D * 1 + a$treat * 0.5 * a$time)
  set.seed(52); b <- dd_sim_basic(n_units = 40, n_pre = 3, n_post = 2)
  set.seed(52); b0 <- dd_sim_basic(n_units = 40, n_pre = 3, n_post = 2, trend_treated = 0)
  expect_identical(b, b0)                                          # the default draws and returns the same panel
  s <- dd_sim_staggered(n_units = 100, n_periods = 6, cohorts = c(3, 5), never_share = 0.2, sd = 0, sd_unit = 0,
                        trend_treated = -0.25)
  expect_equal(s$y, -0.25 * s$time * (s$first_treat > 0))
  # with noise: TWFE's DiD is off by trend_treated * (mean post - mean pre period)
  set.seed(53)
  d <- dd_sim_basic(n_units = 2000, n_pre = 4, n_post = 2, effect = 1, trend_treated = 0.2)
  fit <- did_twfe(d, "y", "id", "time", "D")
  bias <- 0.2 * (mean(5:6) - mean(1:4))
  expect_lt(abs(coef(fit)[["ATT"]] - (1 + bias)) / fit$coeftable$std.error[1], 4)
  expect_gt(bias / fit$coeftable$std.error[1], 4)
  expect_error(dd_sim_basic(trend_treated = NA), "`trend_treated` must be one finite number; got NA")
  expect_error(dd_sim_staggered(trend_treated = c(1, 2)), "`trend_treated` must be one finite number; got c\\(1, 2\\)")
})

test_that("dd_sim_staggered(panel = FALSE): repeated cross-sections; did_cs(panel = FALSE) recovers the effects", {
  set.seed(54)
  r <- dd_sim_staggered(n_units = 50, n_periods = 4, cohorts = 3, never_share = 0.4, panel = FALSE)
  expect_identical(r$id, 1:200)                                     # every row its own unit
  expect_identical(as.vector(table(r$time)), rep(50L, 4))
  expect_identical(as.vector(table(r$first_treat, r$time)[, 1]), c(20L, 30L))   # the same shares each period
  set.seed(54); p <- dd_sim_staggered(n_units = 50, n_periods = 4, cohorts = 3, never_share = 0.4)
  set.seed(54); p1 <- dd_sim_staggered(n_units = 50, n_periods = 4, cohorts = 3, never_share = 0.4, panel = TRUE)
  expect_identical(p, p1)                                           # the panel default draws as before
  expect_identical(p$id, rep(1:50, 4))
  set.seed(55)
  d <- dd_sim_staggered(n_units = 6000, n_periods = 5, cohorts = c(3, 4), effect = 1, dynamic = 0.5, panel = FALSE)
  fit <- did_cs(d, "y", "id", "time", "first_treat", panel = FALSE, nboot = 0)
  tab <- fit$coeftable
  truth <- ifelse(tab$time >= tab$group, 1 + 0.5 * (tab$time - tab$group), 0)
  z <- (tab$estimate - truth) / tab$std.error
  expect_true(all(abs(z) < 4), label = paste(round(z, 2), collapse = " "))
  expect_error(dd_sim_staggered(panel = NA), "`panel` must be TRUE or FALSE; got NA")
})
