# did_sa() against fixest::feols(y ~ x + sunab(g, t) | id + t) (live fixest):
# cohort x period coefficients, the period aggregation (coeftable) and the
# ATT (summary(agg = "ATT")) to 1e-8, standard errors to 1e-6, same vcov.
sa_check <- function(res, f) {
  ct <- fixest::coeftable(res)
  k <- grep("::", rownames(ct), fixed = TRUE)
  m <- match(paste0("event::", sub("^.*::", "", rownames(ct)[k])), f$coeftable$term)
  expect_false(anyNA(m))
  expect_lt(max(abs(ct[k, 1] - f$coeftable$estimate[m]) / abs(ct[k, 1])), 1e-8)
  expect_lt(max(abs(ct[k, 2] - f$coeftable$std.error[m]) / ct[k, 2]), 1e-6)
  a <- summary(res, agg = "ATT")$coeftable
  i <- nrow(f$coeftable)
  expect_lt(abs(a["ATT", 1] - f$coeftable$estimate[i]) / abs(a["ATT", 1]), 1e-8)
  expect_lt(abs(a["ATT", 2] - f$coeftable$std.error[i]) / a["ATT", 2], 1e-6)
  full <- summary(res, agg = FALSE)$coeftable
  mm <- match(rownames(full), f$cohort_coefs$term)
  expect_false(anyNA(mm))
  expect_lt(max(abs(full[, 1] - f$cohort_coefs$estimate[mm]) / abs(full[, 1])), 1e-8)
  expect_lt(max(abs(full[, 2] - f$cohort_coefs$std.error[mm]) / full[, 2]), 1e-6)
}

test_that("base_stagg: coefficients, period aggregates and ATT equal fixest's sunab", {
  need_peer("fixest")
  data("base_stagg", package = "fixest", envir = environment())
  sa_check(fixest::feols(y ~ x1 + sunab(year_treated, year) | id + year, base_stagg, cluster = ~id),
           did_sa(base_stagg, "y", "id", "year", "year_treated", xformla = ~ x1))
  sa_check(fixest::feols(y ~ x1 + sunab(year_treated, year) | id + year, base_stagg, vcov = "iid"),
           did_sa(base_stagg, "y", "id", "year", "year_treated", xformla = ~ x1, vcov = "iid"))
  sa_check(fixest::feols(y ~ sunab(year_treated, year) | id + year, base_stagg, vcov = "hetero"),
           did_sa(base_stagg, "y", "id", "year", "year_treated", vcov = "hetero"))
})

test_that("simulated panel with covariates and weights, never-treated coded 0", {
  need_peer("fixest")
  d <- read.csv(system.file("extdata", "sim_panel.csv", package = "diffdiff"))
  d0 <- d
  f <- did_sa(d, "y", "id", "year", "first_treat", xformla = ~ x1, weightsname = "w")
  expect_identical(d, d0)
  res <- fixest::feols(y ~ x1 + sunab(first_treat, year) | id + year, d, weights = ~w, cluster = ~id)
  sa_check(res, f)
  # event-time weights are the cohorts' observation shares at each relative period
  expect_equal(sum(f$coeftable$term == "ATT"), 1L)
  expect_true(all(is.finite(f$coeftable$std.error)))
})

test_that("unbalanced panel (cells by cohort and observed periods) and weights varying within units (dense path)", {
  need_peer("fixest")
  d <- sim_panel()
  set.seed(5)
  u <- d[-sample(nrow(d), 400), ]
  # did_sa handles the indicators as cohort x period cells when the weights are
  # constant within units; unbalanced units form several cells per cohort x period
  sa_check(fixest::feols(y ~ x1 + sunab(first_treat, year) | id + year, u, cluster = ~id),
           did_sa(u, "y", "id", "year", "first_treat", xformla = ~ x1))
  f <- did_sa(u, "y", "id", "year", "first_treat", weightsname = "w", vcov = "hetero")
  expect_identical(f$path, "cells")
  sa_check(fixest::feols(y ~ sunab(first_treat, year) | id + year, u, weights = ~w, vcov = "hetero"), f)
  # weights varying within units: dense indicator columns
  u$wv <- u$w * (1 + (u$year %% 3) / 4)
  f <- did_sa(u, "y", "id", "year", "first_treat", xformla = ~ x1, weightsname = "wv", cluster = "state")
  expect_identical(f$path, "dense")
  sa_check(fixest::feols(y ~ x1 + sunab(first_treat, year) | id + year, u, weights = ~wv, cluster = ~state), f)
  # both paths give the same answer on the same data: weights constant within
  # units (cells) against the dense path forced by the internal option
  # diffdiff.cells = FALSE (more cases in test-cells-path.R); 1e-9 relative
  a <- did_sa(u, "y", "id", "year", "first_treat", weightsname = "w")
  op <- options(diffdiff.cells = FALSE)
  b <- did_sa(u, "y", "id", "year", "first_treat", weightsname = "w")
  options(op)
  expect_identical(a$path, "cells")
  expect_identical(b$path, "dense")
  expect_equal(a$cohort_coefs$estimate, b$cohort_coefs$estimate, tolerance = 1e-9)
  expect_equal(a$cohort_coefs$std.error, b$cohort_coefs$std.error, tolerance = 1e-9)
  expect_equal(a$coeftable$estimate, b$coeftable$estimate, tolerance = 1e-9)
  expect_equal(a$coeftable$std.error, b$coeftable$std.error, tolerance = 1e-9)
})

test_that("last-treated cohort as control equals fixest on the periods before it is treated", {
  need_peer("fixest")
  d <- sim_panel()
  s <- d[d$first_treat != 0, ]                          # no never-treated units
  expect_message(f <- did_sa(s, "y", "id", "year", "first_treat", xformla = ~ x1),
                 "last-treated cohort is the control")
  h <- s[s$year < 2008, ]
  h$g2 <- ifelse(h$first_treat == 2008, 0, h$first_treat)
  sa_check(fixest::feols(y ~ x1 + sunab(g2, year) | id + year, h, cluster = ~id), f)
  # with never-treated units present, control = "last" drops them from nothing but
  # still uses the last cohort as a control alongside them
  g <- did_sa(d, "y", "id", "year", "first_treat", control = "last")
  h <- d[d$year < 2008, ]
  h$g2 <- ifelse(h$first_treat == 2008, 0, h$first_treat)
  sa_check(fixest::feols(y ~ sunab(g2, year) | id + year, h, cluster = ~id), g)
})

test_that("did_sa bad input", {
  d <- read.csv(system.file("extdata", "sim_panel.csv", package = "diffdiff"))
  s <- d[d$first_treat != 0, ]
  expect_error(did_sa(s, "y", "id", "year", "first_treat", control_group = "never"), "no never-treated units.*`control_group`")
  expect_error(did_sa(d, "y", "id", "year", "first_treat", control_group = "first"), "`control_group`.*first")
  s1 <- d[d$first_treat %in% c(0, 2006), ]
  expect_error(did_sa(s1, "y", "id", "year", "first_treat", control_group = "last"), "at least two treated cohorts")
  expect_error(did_sa(d, "y", "id", "year", "first_treat", ref = 0.5), "`ref` must be one whole number \\(a relative period\\); got 0.5")
  s <- d; s$first_treat[s$id == 1] <- 2001     # treated in the first period: always treated
  expect_message(did_sa(s, "y", "id", "year", "first_treat"), "always-treated cohort\\(s\\) 2001 removed")
  s <- d; s$first_treat[s$id == 2 & s$year == 2005] <- 2003
  expect_error(did_sa(s, "y", "id", "year", "first_treat"), "`gname` = \"first_treat\" must be constant within each unit")
})

test_that("did_sa(survey = ) equals svyglm with the sunab indicators and factor fixed effects", {
  need_peer("fixest"); need_peer("survey")
  d <- read.csv(system.file("extdata", "sim_panel.csv", package = "diffdiff"))
  d <- d[d$id <= 150, ]
  d$s3 <- d$state %% 3
  # the cohort x relative-period indicators, built by hand (never treated: 0)
  rel <- ifelse(d$first_treat == 0, NA, d$year - d$first_treat)
  cells <- unique(data.frame(e = rel, g = d$first_treat)[!is.na(rel) & rel != -1, ])
  X <- vapply(seq_len(nrow(cells)), function(k) as.numeric(!is.na(rel) & rel == cells$e[k] & d$first_treat == cells$g[k]),
              numeric(nrow(d)))
  colnames(X) <- sprintf("e%s_g%s", sub("-", "m", cells$e), cells$g)
  dd <- cbind(d, as.data.frame(X))
  des <- survey::svydesign(ids = ~id, strata = ~s3, weights = ~w, data = dd)
  f <- did_sa(dd, "y", "id", "year", "first_treat", survey = des)
  g <- survey::svyglm(stats::as.formula(paste("y ~", paste(colnames(X), collapse = "+"), "+ factor(id) + factor(year)")),
                      design = des)
  ours <- f$cohort_coefs
  m <- match(sub("^year::(-?[0-9]+):cohort::([0-9]+)$", "\\1_\\2", ours$term), paste0(cells$e, "_", cells$g))
  expect_false(anyNA(m))
  nm <- colnames(X)[m]
  expect_lt(max(abs(coef(g)[nm] - ours$estimate) / abs(coef(g)[nm])), 1e-8)
  expect_lt(max(abs(survey::SE(g)[nm] - ours$std.error) / survey::SE(g)[nm]), 1e-6)
})

test_that("Conley's spatial variance equals fixest's sunab with vcov = conley()", {
  need_peer("fixest")
  data("base_stagg", package = "fixest", envir = environment())
  set.seed(6)
  u <- sort(unique(base_stagg$id))
  base_stagg$lat <- stats::runif(length(u), 35, 45)[match(base_stagg$id, u)]
  base_stagg$lon <- stats::runif(length(u), -100, -85)[match(base_stagg$id, u)]
  # (the uniform kernel's covariance is not positive definite here: both
  # repair it the same way, setting its eigenvalues below 1e-16 to 1e-16, with a warning)
  for (dist in c("spherical", "triangular")) {
    expect_warning(f <- did_sa(base_stagg, "y", "id", "year", "year_treated", xformla = ~ x1,
                               vcov = dd_conley(200, distance = dist)), "not positive semi-definite")
    sa_check(suppressWarnings(fixest::feols(y ~ x1 + sunab(year_treated, year) | id + year, base_stagg,
                                            vcov = fixest::conley(200, distance = dist))), f)
  }
})
