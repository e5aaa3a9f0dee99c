# did_etwfe(): survey designs and the multiplier bootstrap. References:
#  * survey 4.x (live, in Suggests): svyglm() of the same regression (cell
#    indicators, cohort and period indicators) on the same design gives the
#    cell coefficients and their standard errors (Taylor linearisation with
#    strata and PSUs; JKn replicate weights; Poisson: quasipoisson with
#    glm.control(epsilon = 1e-15, maxit = 100): glm.fit's weights are those
#    of the iteration before the last step, so its SEs carry that step);
#  * the multiplier bootstrap converges to the analytic standard errors
#    (checked within the Monte Carlo error of the draws).

etwfe_svy_data <- function() {
  d <- read.csv(system.file("extdata", "sim_panel.csv", package = "diffdiff"))
  u <- unique(d$id)
  set.seed(3)
  d$psu <- (match(d$id, u) - 1) %/% 6
  d$st <- d$psu %% 4
  d$pw <- d$w * 10
  d$yc <- rpois(nrow(d), exp(0.3 + 0.2 * d$x2 + 0.1 * (d$year >= d$first_treat & d$first_treat > 0)))
  d
}
etwfe_cells <- function(d, terms) {
  gt <- do.call(rbind, regmatches(terms, regexec("ATT\\(([0-9]+),([0-9]+)\\)", terms)))
  for (k in seq_along(terms))
    d[[paste0("c", k)]] <- as.numeric(d$first_treat == as.numeric(gt[k, 2]) & d$year == as.numeric(gt[k, 3]))
  d
}

test_that("did_etwfe with a survey design equals survey::svyglm (linear, Poisson, replicate weights)", {
  need_peer("survey")
  d <- etwfe_svy_data()
  d0 <- d
  des <- survey::svydesign(ids = ~psu, strata = ~st, weights = ~pw, data = d, nest = TRUE)
  f <- did_etwfe(d, "y", "id", "year", "first_treat", survey = des)
  expect_identical(d, d0)
  cells <- f$coeftable$term
  cn <- paste0("c", seq_along(cells))
  dc <- etwfe_cells(d, cells)
  desc <- survey::svydesign(ids = ~psu, strata = ~st, weights = ~pw, data = dc, nest = TRUE)
  fm <- stats::as.formula(paste("y ~", paste(cn, collapse = " + "), "+ factor(first_treat) + factor(year)"))
  m <- survey::svyglm(fm, desc)
  expect_equal(f$coeftable$estimate, unname(coef(m)[cn]), tolerance = 1e-10)
  expect_equal(f$coeftable$std.error, unname(sqrt(diag(vcov(m)))[cn]), tolerance = 1e-10)
  expect_identical(f$df, m$df.residual)
  expect_match(f$vcov_label, "Survey design")
  # unit fixed effects: the same cells and standard errors (balanced panel,
  # time-invariant weights)
  fu <- did_etwfe(d, "y", "id", "year", "first_treat", fe = "unit", survey = des)
  expect_equal(fu$coeftable$std.error, f$coeftable$std.error, tolerance = 1e-10)
  # the averages: the delta method with the design's covariance
  a <- aggregate(f, type = "dynamic")
  expect_equal(unname(a$coeftable$std.error), unname(sqrt(diag(a$jacobian %*% vcov(f) %*% t(a$jacobian)))),
               tolerance = 1e-12)
  # Poisson
  fp <- did_etwfe(d, "yc", "id", "year", "first_treat", family = "poisson", survey = des, glm_tol = 1e-15)
  k <- match(cells, fp$coeftable$term)
  expect_false(anyNA(k))
  fmp <- stats::as.formula(paste("yc ~", paste(cn, collapse = " + "), "+ factor(first_treat) + factor(year)"))
  mp <- survey::svyglm(fmp, desc, family = stats::quasipoisson(), control = stats::glm.control(epsilon = 1e-15, maxit = 100))
  expect_equal(fp$coeftable$estimate[k], unname(coef(mp)[cn]), tolerance = 1e-9)
  expect_equal(fp$coeftable$std.error[k], unname(sqrt(diag(vcov(mp)))[cn]), tolerance = 1e-8)
  # replicate weights (JKn)
  rdes <- survey::as.svrepdesign(des, type = "JKn")
  fr <- did_etwfe(d, "y", "id", "year", "first_treat", survey = rdes)
  mr <- survey::svyglm(fm, survey::as.svrepdesign(desc, type = "JKn"))
  expect_equal(fr$coeftable$std.error, unname(sqrt(diag(vcov(mr)))[cn]), tolerance = 1e-10)
  expect_error(did_etwfe(d, "yc", "id", "year", "first_treat", family = "poisson", survey = rdes),
               "`survey`: a replicate-weight design with `family` = \"poisson\" is not supported")
})

test_that("did_etwfe: the multiplier bootstrap of the cells and the averages", {
  d <- read.csv(system.file("extdata", "sim_panel.csv", package = "diffdiff"))
  f <- did_etwfe(d, "y", "id", "year", "first_treat")
  set.seed(11)
  fb <- did_etwfe(d, "y", "id", "year", "first_treat", nboot = 1999, cband = TRUE)
  expect_identical(fb$coefficients, f$coefficients)
  expect_match(fb$vcov_label, "multiplier bootstrap of the influence functions \\(1999 draws, rademacher\\)")
  # IQR-based bootstrap SEs: Monte Carlo error about 1.17 / sqrt(1999) = 2.6%
  r <- fb$coeftable$std.error / f$coeftable$std.error
  expect_true(all(abs(r - 1) < 0.12) && abs(mean(r) - 1) < 0.03, label = paste(round(r, 3), collapse = " "))
  expect_true(all(fb$coeftable$cband.high - fb$coeftable$cband.low > fb$coeftable$conf.high - fb$coeftable$conf.low))
  a <- aggregate(f, type = "dynamic"); ab <- aggregate(fb, type = "dynamic")
  ra <- ab$coeftable$std.error / a$coeftable$std.error
  expect_true(all(abs(ra - 1) < 0.12), label = paste(round(ra, 3), collapse = " "))
  expect_true(all(is.finite(ab$coeftable$cband.low)))
  expect_identical(ab$coeftable$estimate, a$coeftable$estimate)
  # the same seed gives the same draws whatever the row order
  set.seed(11)
  fs <- did_etwfe(d[rev(seq_len(nrow(d))), ], "y", "id", "year", "first_treat", nboot = 1999, cband = TRUE)
  expect_equal(fs$coeftable$std.error, fb$coeftable$std.error, tolerance = 1e-12)
  # Poisson and a survey design (one multiplier per PSU)
  need_peer("survey")
  ds <- etwfe_svy_data()
  des <- survey::svydesign(ids = ~psu, strata = ~st, weights = ~pw, data = ds, nest = TRUE)
  fs0 <- did_etwfe(ds, "yc", "id", "year", "first_treat", family = "poisson", survey = des)
  set.seed(12)
  fsb <- did_etwfe(ds, "yc", "id", "year", "first_treat", family = "poisson", survey = des, nboot = 1999)
  expect_match(fsb$vcov_label, "one per PSU")
  rs <- fsb$coeftable$std.error / fs0$coeftable$std.error
  expect_true(all(abs(rs - 1) < 0.2) && abs(mean(rs) - 1) < 0.05, label = paste(round(rs, 3), collapse = " "))
})

test_that("did_etwfe: bad inference settings get errors naming the argument", {
  d <- read.csv(system.file("extdata", "sim_panel.csv", package = "diffdiff"))
  expect_error(did_etwfe(d, "y", "id", "year", "first_treat", nboot = 99, vcov = "iid"),
               "needs heteroskedasticity-robust or clustered standard errors; got vcov = \"iid\"")
  expect_error(did_etwfe(d, "y", "id", "year", "first_treat", nboot = -1), "`nboot`")
  expect_error(did_etwfe(d, "y", "id", "year", "first_treat", cband = TRUE), "`cband`")
  expect_error(did_etwfe(d, "y", "id", "year", "first_treat", boot_weights = "normal"), "`boot_weights`")
  need_peer("survey")
  ds <- etwfe_svy_data()
  rdes <- survey::as.svrepdesign(survey::svydesign(ids = ~psu, strata = ~st, weights = ~pw, data = ds, nest = TRUE),
                                 type = "JKn")
  expect_error(did_etwfe(ds, "y", "id", "year", "first_treat", survey = rdes, nboot = 99),
               "not available with a replicate-weight `survey` design")
})

test_that("did_etwfe without never-treated units: periods without not-yet-treated observations", {
  d <- read.csv(system.file("extdata", "sim_panel.csv", package = "diffdiff"))
  d1 <- d[d$first_treat != 0, ]
  expect_message(f <- did_etwfe(d1, "y", "id", "year", "first_treat"),
                 "cohort 2008 \\(the last treated\\) is the comparison group; 540 observations of periods from 2008 on")
  expect_true(all(f$coeftable$time < 2008))
  expect_false(any(f$coeftable$group == 2008))
  expect_identical(nobs(f), sum(d1$year < 2008))
  expect_output(print(summary(f)), "Note: no never-treated units: cohort 2008")
  # one cohort and no never treated: nothing to compare
  d2 <- d1; d2$first_treat <- 2004
  expect_error(suppressMessages(did_etwfe(d2, "y", "id", "year", "first_treat")),
               "`gname` = \"first_treat\": there are no never-treated units and one cohort \\(2004\\)")
  expect_error(did_etwfe(d1, "y", "id", "year", "first_treat", control_group = "nevertreated"),
               "no never-treated units")
  expect_error(did_edid(d1, "y", "id", "year", "first_treat"), "no never-treated units")
})
