# The multiplier bootstrap of regression event studies (did_sa, did_stacked:
# nboot, boot_weights, cband) from the coefficients' influence functions
# (dd_reg_ifs, influence.R). The influence functions reproduce the analytic
# standard errors exactly; bootstrap standard errors converge to them (up to
# the interquartile-range rule with a finite number of clusters); the band
# contains the pointwise intervals; the same seed gives the same numbers for
# any row order.

test_that("regression influence functions give the analytic (CR1 / HC1) standard errors exactly", {
  d <- sim_panel()
  for (vc in list(NULL, "hetero")) {
    f <- did_sa(d, "y", "id", "year", "first_treat", vcov = vc)
    # the bootstrap path refits the cohort regression on dense columns
    set.seed(1)
    fb <- did_sa(d, "y", "id", "year", "first_treat", vcov = vc, nboot = 9)
    expect_identical(fb$vcov_type, "bootstrap")
    expect_equal(fb$coeftable$estimate, f$coeftable$estimate, tolerance = 1e-12)
  }
  # the scaling itself, on a plain clustered regression
  fit <- did_twfe(d, "y", "id", "year", "treat", cluster = "state")
  est <- diffdiff:::dd_estimate(d$y, cbind(ATT = d$treat), list(id = d$id, year = d$year), NULL,
                                list(state = d$state),
                                diffdiff:::dd_spec_vcov(diffdiff:::dd_spec(nboot = 9), "cluster"), character(),
                                wild_available = FALSE)
  expect_equal(unname(sqrt(colSums(est$ifs^2)) / est$reg$n), fit$coeftable$std.error, tolerance = 1e-12)
  expect_equal(nrow(est$ifs), length(unique(d$state)))
})

test_that("did_sa and did_stacked bootstrap SEs approach the analytic ones; bands contain the pointwise intervals", {
  d <- sim_panel()
  fits <- list(sa = function(...) did_sa(d, "y", "id", "year", "first_treat", ...),
               stacked = function(...) did_stacked(d, "y", "id", "year", "first_treat", kappa_pre = 3, kappa_post = 2, ...))
  for (nm in names(fits)) {
    a <- fits[[nm]]()
    for (bw in c("rademacher", "webb")) {
      set.seed(2)
      b <- fits[[nm]](nboot = 20000, boot_weights = bw, cband = TRUE)
      r <- b$coeftable$std.error / a$coeftable$std.error
      expect_lt(max(abs(r - 1)), 0.03)
      ev <- !is.na(b$coeftable$event)
      expect_true(all(b$coeftable$cband.low[ev] <= b$coeftable$conf.low[ev]))
      expect_true(all(b$coeftable$cband.high[ev] >= b$coeftable$conf.high[ev]))
      expect_true(is.na(b$coeftable$cband.low[!ev]))
      expect_gt(b$crit, stats::qnorm(0.975))
      expect_lt(b$crit, stats::qnorm(1 - 0.025 / sum(ev)))
      expect_equal(b$event_study$crit, b$crit)
      expect_equal(unname(sqrt(diag(vcov(b)))), b$coeftable$std.error, tolerance = 1e-12)
      expect_match(b$vcov_label, sprintf("Clustered (id); multiplier bootstrap of the influence functions (20000 draws, %s)", bw),
                   fixed = TRUE)
    }
  }
})

test_that("the regression bootstrap: same seed, same numbers for any row order; bad input", {
  d <- sim_panel()
  ds <- d[sample(nrow(d)), ]
  for (vc in list(NULL, "hetero")) {
    set.seed(5); a <- did_sa(d, "y", "id", "year", "first_treat", vcov = vc, nboot = 199, cband = TRUE)
    set.seed(5); b <- did_sa(ds, "y", "id", "year", "first_treat", vcov = vc, nboot = 199, cband = TRUE)
    expect_equal(b$coeftable$std.error, a$coeftable$std.error, tolerance = 1e-12)
    expect_equal(b$crit, a$crit, tolerance = 1e-12)
  }
  expect_error(did_sa(d, "y", "id", "year", "first_treat", vcov = "iid", nboot = 99),
               "needs heteroskedasticity-robust or clustered standard errors; got vcov = \"iid\"")
  expect_error(did_sa(d, "y", "id", "year", "first_treat", nboot = 1e10), "`nboot` must be a whole number")
  expect_error(did_sa(d, "y", "id", "year", "first_treat", nboot = 9, boot_weights = "normal"), "boot_weights")
  rep <- survey::as.svrepdesign(survey::svydesign(ids = ~ id, weights = ~ w, data = d), type = "JK1")
  expect_error(did_sa(d, "y", "id", "year", "first_treat", survey = rep, nboot = 9), "replicate-weight `survey` design")
})

test_that("did_event: a uniform band from the multiplier bootstrap next to the wild bootstrap's pointwise intervals", {
  d <- sim_panel()
  set.seed(3)
  f <- did_event(d, "y", "id", "year", "first_treat", cluster = "state", nboot = 999, cband = TRUE)
  ev <- !is.na(f$coeftable$event)
  a <- did_event(d, "y", "id", "year", "first_treat", cluster = "state")
  expect_equal(f$coeftable$std.error, a$coeftable$std.error)       # analytic SEs unchanged
  expect_true(all(!is.na(f$coeftable$boot.conf.low[ev])))          # the wild bootstrap still runs
  expect_true(all(f$coeftable$cband.low[ev] <= f$coeftable$conf.low[ev]))
  expect_true(all(f$coeftable$cband.high[ev] >= f$coeftable$conf.high[ev]))
  expect_equal(f$coeftable$cband.high[ev] - f$coeftable$estimate[ev], f$crit * f$coeftable$std.error[ev])
  expect_gt(f$crit, stats::qnorm(0.975))
  expect_lt(f$crit, stats::qnorm(1 - 0.025 / sum(ev)) + 0.3)
  expect_equal(f$event_study$crit, f$crit)
  expect_error(did_event(d, "y", "id", "year", "first_treat", cband = TRUE), "`cband` = TRUE needs bootstrap draws")
})

test_that("did_bjs and did_gardner: multiplier bootstrap of their influence functions, bands, row order", {
  d <- sim_panel()
  fits <- list(bjs = function(dd, ...) did_bjs(dd, "y", "id", "year", "first_treat", ...),
               gardner = function(dd, ...) did_gardner(dd, "y", "id", "year", "first_treat", ...))
  ds <- d[sample(nrow(d)), ]
  for (nm in names(fits)) {
    a <- suppressWarnings(fits[[nm]](d))
    set.seed(4)
    b <- suppressWarnings(fits[[nm]](d, nboot = 20000, cband = TRUE))
    expect_identical(b$coeftable$estimate, a$coeftable$estimate)
    r <- b$coeftable$std.error / a$coeftable$std.error
    expect_lt(max(abs(r - 1)), 0.03)                  # leads included: scaled to their analytic variance
    ev <- !is.na(b$coeftable$event)
    expect_true(all(b$coeftable$cband.low[ev] <= b$coeftable$conf.low[ev]))
    expect_true(all(b$coeftable$cband.high[ev] >= b$coeftable$conf.high[ev]))
    expect_gt(b$crit, stats::qnorm(0.975))
    expect_equal(b$event_study$crit, b$crit)
    expect_identical(b$vcov_type, "bootstrap")
    set.seed(6); b1 <- suppressWarnings(fits[[nm]](d, nboot = 199, cband = TRUE))
    set.seed(6); b2 <- suppressWarnings(fits[[nm]](ds, nboot = 199, cband = TRUE))
    expect_equal(b2$coeftable$std.error, b1$coeftable$std.error, tolerance = 1e-12)
    expect_equal(b2$crit, b1$crit, tolerance = 1e-12)
  }
})

test_that("survey designs: one multiplier per PSU on the PSU rows; SEs approach the Taylor ones; row order", {
  need_peer("survey")
  d <- sim_panel()
  ds <- d[sample(nrow(d)), ]
  des <- function(dd) survey_design(dd, weights = ~ w, strata = ~ state, ids = ~ id, nest = TRUE, lonely_psu = "adjust")
  fits <- list(sa = function(dd, ...) did_sa(dd, "y", "id", "year", "first_treat", survey = des(dd), ...),
               bjs = function(dd, ...) did_bjs(dd, "y", "id", "year", "first_treat", survey = des(dd), ...),
               gardner = function(dd, ...) did_gardner(dd, "y", "id", "year", "first_treat", survey = des(dd), ...),
               # stacked data: a unit's copies in several sub-experiments add up in its PSU
               stacked = function(dd, ...) did_stacked(dd, "y", "id", "year", "first_treat", kappa_pre = 2,
                                                       kappa_post = 1, survey = des(dd), ...))
  for (nm in names(fits)) {
    a <- suppressWarnings(fits[[nm]](d))
    set.seed(7)
    b <- suppressWarnings(fits[[nm]](d, nboot = 20000, cband = TRUE))
    expect_lt(max(abs(b$coeftable$std.error / a$coeftable$std.error - 1)), 0.03)
    expect_match(b$vcov_label, "multiplier bootstrap of the influence functions (20000 draws, rademacher, one per PSU)",
                 fixed = TRUE)
    set.seed(8); b1 <- suppressWarnings(fits[[nm]](d, nboot = 199, cband = TRUE))
    set.seed(8); b2 <- suppressWarnings(fits[[nm]](ds, nboot = 199, cband = TRUE))
    expect_equal(b2$coeftable$std.error, b1$coeftable$std.error, tolerance = 1e-12)
    expect_equal(b2$crit, b1$crit, tolerance = 1e-12)
  }
})
