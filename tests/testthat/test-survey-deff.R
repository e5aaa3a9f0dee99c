# Design effects (issue 44): aggregate_survey(deff = TRUE) against
# survey::svyby(svymean, deff = TRUE); dd_deff() on a did_cs survey fit
# against survey::svymean(deff = TRUE) of the estimate's linearised
# variable, written out by hand for a 2x2 cell (the treated and comparison
# units' weighted mean changes), on a unit-level design with the same
# strata, PSUs and weights. 1e-10.

deff_data <- function(seed = 5) {
  set.seed(seed)
  n <- 240
  u <- data.frame(id = seq_len(n), str = rep(1:4, n / 4), w = runif(n, 5, 40))
  u$psu <- u$str * 100 + sample(1:10, n, TRUE)
  u$g <- sample(c(0, 3), n, TRUE)
  d <- expand.grid(t = 1:3, id = u$id)[, c("id", "t")]
  d <- merge(d, u, by = "id")
  d$y <- rnorm(n)[d$id] + 0.2 * d$t + (d$g > 0 & d$t >= 3) * (1 + (d$psu %% 3)) + rnorm(nrow(d))
  list(d = d[order(d$id, d$t), ], u = u)
}

test_that("aggregate_survey(deff = TRUE) equals survey::svyby(svymean, deff = TRUE)", {
  need_peer("survey")
  x <- deff_data()
  d <- x$d
  des <- survey::svydesign(ids = ~psu, strata = ~str, weights = ~w, data = d)
  ref <- survey::svyby(~y, ~t, des, survey::svymean, deff = TRUE)
  a <- aggregate_survey(d, "y", by = "t", design = survey_design(d, weights = "w", strata = "str", ids = "psu"),
                        deff = TRUE)
  expect_equal(a$y, unname(ref$y), tolerance = 1e-10)
  expect_equal(a$y_deff, unname(ref$DEff.y), tolerance = 1e-10)
  b <- aggregate_survey(d, "y", by = "t", design = survey_design(d, weights = "w", strata = "str", ids = "psu"))
  expect_false("y_deff" %in% names(b))
})

test_that("dd_deff of a did_cs ATT(g,t) equals survey's deff of its linearised variable", {
  need_peer("survey")
  x <- deff_data(6)
  d <- x$d; u <- x$u
  fit <- did_cs(d, "y", "id", "t", "g", nboot = 0, control_group = "nevertreated",
                survey = survey_design(d, weights = "w", strata = "str", ids = "psu"))
  de <- dd_deff(fit)
  # the cell (3,3): base period 2; by hand
  dy <- d$y[d$t == 3] - d$y[d$t == 2]
  D <- as.numeric(u$g == 3)
  W <- sum(u$w)
  p1 <- sum(u$w * D) / W; p0 <- 1 - p1
  m1 <- sum(u$w * D * dy) / sum(u$w * D); m0 <- sum(u$w * (1 - D) * dy) / sum(u$w * (1 - D))
  u$psi <- D * (dy - m1) / p1 - (1 - D) * (dy - m0) / p0
  udes <- survey::svydesign(ids = ~psu, strata = ~str, weights = ~w, data = u)
  ref <- survey::svymean(~psi, udes, deff = TRUE)
  k <- de$term == "ATT(3,3)"
  expect_equal(de$estimate[k], m1 - m0, tolerance = 1e-10)
  expect_equal(de$std.error[k], unname(drop(survey::SE(ref))), tolerance = 1e-10)
  expect_equal(de$deff[k], unname(survey::deff(ref)), tolerance = 1e-10)
  expect_equal(de$n_eff, nrow(u) / de$deff, tolerance = 1e-12)
  refr <- survey::svymean(~psi, udes, deff = "replace")
  expect_equal(dd_deff(fit, replace = TRUE)$deff[k], unname(survey::deff(refr)), tolerance = 1e-10)
  # aggregates, and the fit's own standard errors
  expect_equal(de$std.error, fit$coeftable$std.error, tolerance = 1e-12)
  ag <- dd_deff(fit, type = "simple")
  expect_equal(ag$std.error, aggregate(fit, "simple")$coeftable$std.error, tolerance = 1e-12)
  expect_true(all(ag$deff > 0))
})

test_that("dd_deff: bad input", {
  x <- deff_data(7)
  f0 <- did_cs(x$d, "y", "id", "t", "g", nboot = 0)
  expect_error(dd_deff(f0), "no Taylor-linearisation survey design")
  expect_error(dd_deff(lm(y ~ t, x$d)), "`fit` must be a fit with influence functions")
  d <- x$d; d$w <- d$w / 100
  f1 <- did_cs(d, "y", "id", "t", "g", nboot = 0, survey = survey_design(d, weights = "w", ids = "psu"))
  expect_error(dd_deff(f1), "do not look like sampling weights")
  expect_true(all(is.finite(dd_deff(f1, replace = TRUE)$deff)))
  expect_error(dd_deff(f1, replace = NA), "replace")
})
