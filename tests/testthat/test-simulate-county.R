# dd_sim_county() and inst/extdata/sim_county.csv (issue 44, item 5): a
# simulated panel with the layout of did's mpdta (not its data: mpdta is
# GPL-2). Checked: the layout and cohort sizes stated in the docs (mpdta's:
# 309 never treated, 20/40/131 first treated in 2004/2006/2007), the
# shipped file being the generator's output under the seed of
# tools/make-county-data.R, the model written in ?dd_sim_county (without
# noise the outcome is its formula), conditional parallel trends: did_cs
# with xformla = ~lpop recovers the planted ATT(g,t) within 4 SEs, and
# without covariates it is off by the bias the model implies.

test_that("dd_sim_county: mpdta's layout, reproducible", {
  set.seed(41); a <- dd_sim_county()
  set.seed(41); b <- dd_sim_county()
  expect_identical(a, b)
  expect_identical(names(a), c("year", "countyreal", "lpop", "lemp", "first.treat", "treat", "effect_true"))
  expect_identical(dim(a), c(2500L, 7L))
  expect_identical(a$year, rep(2003:2007, 500)); expect_identical(a$countyreal, rep(1:500, each = 5))
  g <- a$first.treat[a$year == 2003]
  expect_identical(as.vector(table(g)), c(309L, 20L, 40L, 131L))
  expect_identical(sort(unique(g)), c(0, 2004, 2006, 2007))
  expect_identical(a$treat, as.integer(a$first.treat > 0))
  expect_true(all(tapply(a$lpop, a$countyreal, function(v) length(unique(v))) == 1L))
  expect_equal(a$effect_true, ifelse(a$first.treat > 0 & a$year >= a$first.treat,
                                     -0.02 - 0.03 * (a$year - a$first.treat), 0))
  # other layouts
  set.seed(42)
  c2 <- dd_sim_county(n_units = 60, years = 1:6, cohorts = c(3, 5), cohort_shares = c(0.25, 0.25))
  expect_identical(as.vector(table(c2$first.treat[c2$year == 1])), c(30L, 15L, 15L))
  expect_identical(nrow(c2), 360L)
})

test_that("dd_sim_county without noise is the model of its help page", {
  set.seed(43)
  d <- dd_sim_county(n_units = 200, sd = 0, sd_unit = 0, x_trend = 0.2, effect = 1, dynamic = 0.5)
  # lemp - 2.6 - lpop - x_trend * (lpop - 3.2) * (t - 1) - effect: the year effect only
  r <- d$lemp - 2.6 - d$lpop - 0.2 * (d$lpop - 3.2) * (d$year - 2003) - d$effect_true
  expect_true(all(tapply(r, d$year, function(v) diff(range(v))) < 1e-12))
  expect_equal(d$effect_true[d$first.treat == 2004 & d$year == 2007], rep(2.5, 8))                 # round(200 * 20 / 500) counties
})

test_that("selection on lpop: small counties treated more often when selection > 0", {
  set.seed(44)
  d <- dd_sim_county(n_units = 4000, selection = 1)
  u <- d[d$year == 2003, ]
  gap <- mean(u$lpop[u$treat == 1]) - mean(u$lpop[u$treat == 0])
  se <- sqrt(var(u$lpop[u$treat == 1]) / sum(u$treat) + var(u$lpop[u$treat == 0]) / sum(!u$treat))
  expect_lt(gap / se, -4)
  d0 <- dd_sim_county(n_units = 4000, selection = 0)
  u <- d0[d0$year == 2003, ]
  gap0 <- mean(u$lpop[u$treat == 1]) - mean(u$lpop[u$treat == 0])
  se0 <- sqrt(var(u$lpop[u$treat == 1]) / sum(u$treat) + var(u$lpop[u$treat == 0]) / sum(!u$treat))
  expect_lt(abs(gap0 / se0), 4)
})

test_that("did_cs recovers the planted effects given lpop; without it the bias is the model's", {
  set.seed(45)
  d <- dd_sim_county(n_units = 10000, x_trend = 0.05, selection = 1)
  fit <- did_cs(d, "lemp", "countyreal", "year", "first.treat", xformla = ~lpop, est_method = "reg", nboot = 0)
  tab <- fit$coeftable
  truth <- ifelse(tab$time >= tab$group, -0.02 - 0.03 * (tab$time - tab$group), 0)
  z <- (tab$estimate - truth) / tab$std.error
  expect_true(all(abs(z) < 4), label = paste(round(z, 2), collapse = " "))
  s <- aggregate(fit, "simple")$coeftable
  att <- mean(d$effect_true[d$first.treat > 0 & d$year >= d$first.treat])
  expect_lt(abs(s$estimate - att) / s$std.error, 4)
  # without lpop: ATT(g,t) (varying base: t - 1 before g, g - 1 after) is off
  # by x_trend * (mean lpop of g - mean lpop of the never treated) * (t - base)
  f0 <- did_cs(d, "lemp", "countyreal", "year", "first.treat", nboot = 0)
  t0 <- f0$coeftable
  u <- d[d$year == 2003, ]
  gap <- tapply(u$lpop, u$first.treat, mean)
  base <- ifelse(t0$time >= t0$group, t0$group - 1, t0$time - 1)
  bias <- 0.05 * (gap[as.character(t0$group)] - gap[["0"]]) * (t0$time - base)
  truth0 <- ifelse(t0$time >= t0$group, -0.02 - 0.03 * (t0$time - t0$group), 0)
  z0 <- (t0$estimate - truth0 - bias) / t0$std.error
  expect_true(all(abs(z0) < 4), label = paste(round(z0, 2), collapse = " "))
  expect_true(all(abs(bias) / t0$std.error > 4))                 # and the bias is large enough to matter
})

test_that("sim_county.csv is dd_sim_county()'s output under tools/make-county-data.R's seed", {
  f <- system.file("extdata", "sim_county.csv", package = "diffdiff")
  cty <- utils::read.csv(f)
  set.seed(20030507)
  d <- dd_sim_county()
  expect_identical(names(cty), names(d))
  expect_identical(cty$year, d$year); expect_identical(cty$countyreal, d$countyreal)
  expect_identical(cty$first.treat, as.integer(d$first.treat)); expect_identical(cty$treat, d$treat)
  for (v in c("lpop", "lemp", "effect_true"))                       # rounded to six decimals in the file
    expect_lt(max(abs(cty[[v]] - d[[v]])), 5e-7 + 1e-12)
  expect_identical(as.vector(table(cty$first.treat[cty$year == 2003])), c(309L, 20L, 40L, 131L))
  # the tutorial call of ?diffdiff_data runs and finds a negative effect
  a <- aggregate(did_cs(cty, "lemp", "countyreal", "year", "first.treat", xformla = ~lpop, nboot = 0), "simple")
  expect_lt(a$coeftable$estimate, 0)
})

test_that("dd_sim_county: bad input names the argument and the value", {
  expect_error(dd_sim_county(years = c(2003, 2005)), "`years` must be at least two consecutive.*got c\\(2003, 2005\\)")
  expect_error(dd_sim_county(years = 2003), "`years` must be at least two")
  expect_error(dd_sim_county(cohorts = 2003, cohort_shares = 0.1), "`cohorts` must be distinct years of `years` after the first \\(2003\\); got 2003")
  expect_error(dd_sim_county(cohorts = c(2004, 2004), cohort_shares = c(0.1, 0.1)), "`cohorts` must be distinct")
  expect_error(dd_sim_county(cohort_shares = 0.1), "`cohort_shares` must be 3 numbers in \\[0, 1\\]")
  expect_error(dd_sim_county(cohort_shares = c(0.5, 0.3, 0.2)), "leaves no never-treated county among `n_units` = 500")
  expect_error(dd_sim_county(n_units = 1), "`n_units` must be a whole number between 2")
  expect_error(dd_sim_county(sd = -0.1), "`sd` must be one finite number >= 0; got -0.1")
  expect_error(dd_sim_county(effect = Inf), "`effect` must be one finite number; got Inf")
  expect_error(dd_sim_county(selection = "a"), "`selection` must be one finite number; got \"a\"")
})

test_that("sim_county.csv: did's att_gt() call runs on it renamed to did_cs() and gives did's numbers", {
  need_peer("did")
  cty <- utils::read.csv(system.file("extdata", "sim_county.csv", package = "diffdiff"))
  ref <- did::att_gt(yname = "lemp", tname = "year", idname = "countyreal", gname = "first.treat",
                     xformla = ~lpop, data = cty, bstrap = FALSE, cband = FALSE)
  fit <- did_cs(yname = "lemp", tname = "year", idname = "countyreal", gname = "first.treat",
                xformla = ~lpop, data = cty, bstrap = FALSE, cband = FALSE)
  tab <- fit$coeftable
  expect_identical(tab$group, ref$group); expect_identical(tab$time, ref$t)
  expect_equal(tab$estimate, ref$att, tolerance = 1e-8)            # the house tolerances: estimates 1e-8,
  expect_equal(tab$std.error, ref$se, tolerance = 1e-6)            # analytic SEs 1e-6 (relative)
})
