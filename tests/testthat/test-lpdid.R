# did_lpdid(): pre-mean differencing over all earlier periods by hand,
# invariants (row order, gname = dname, never-treated controls) and bad
# input. Parity with the fixest recipe is in test-parity-lpdid.R.

test_that("pmd = \"max\": the base is the mean of every observed earlier period (fixest by hand)", {
  need_peer("fixest")
  d <- utils::read.csv(system.file("extdata", "sim_panel.csv", package = "diffdiff"))
  set.seed(8); d <- d[-sample(nrow(d), 200), ]
  d <- d[order(d$id, d$year), ]
  base <- stats::ave(d$y, d$id, FUN = function(v) c(NA, cumsum(v)[-length(v)] / seq_along(v)[-length(v)]))
  key <- paste(d$id, d$year); at <- function(k) d$y[match(paste(d$id, d$year + k), key)]
  G <- ifelse(d$first_treat == 0, Inf, d$first_treat)
  fit <- did_lpdid(d, "y", "id", "year", gname = "first_treat", pre_window = 2, post_window = 2, pmd = "max")
  for (h in c(-2, 0, 2)) {
    s <- data.frame(dy = at(h) - base, D = as.integer(d$year == G), tt = d$year, id = d$id)
    s <- s[!is.na(s$dy) & (s$D == 1 | (d$year < G & (if (h >= 0) d$year + h < G else TRUE))), ]
    m <- fixest::feols(dy ~ D | tt, s, vcov = ~id)
    r <- fit$coeftable[fit$coeftable$term == paste0("event::", h), ]
    expect_equal(r$estimate, unname(stats::coef(m)["D"]), tolerance = 1e-8)
    expect_equal(r$std.error, unname(fixest::se(m)["D"]), tolerance = 1e-6)
  }
})

test_that("did_lpdid: row order, gname and dname, never-treated controls", {
  d <- utils::read.csv(system.file("extdata", "sim_panel.csv", package = "diffdiff"))
  f <- function(dd, ...) did_lpdid(dd, "y", "id", "year", gname = "first_treat", pre_window = 3, post_window = 2, ...)
  a <- f(d)
  set.seed(3)
  b <- f(d[sample(nrow(d)), ])
  expect_equal(a$coeftable, b$coeftable, tolerance = 1e-12)
  expect_equal(a$vcov, b$vcov, tolerance = 1e-12)
  c1 <- did_lpdid(d, "y", "id", "year", dname = "treat", pre_window = 3, post_window = 2)
  expect_equal(c1$coeftable, a$coeftable, tolerance = 1e-12)
  nv <- f(d, control_group = "never_treated")
  # balanced, 2001-2010: a never-treated unit is a control at horizon -k in
  # the 10 - k years with t - k observed, at h >= 0 in the 9 - h years with
  # t - 1 and t + h observed; pooled pre (-3..-2) and post (0..2): 7 years
  nn <- length(unique(d$id[d$first_treat == 0]))
  expect_identical(nv$horizons$n_control, as.integer(nn * c(7, 8, 9, 8, 7, 7, 7)))
  expect_false(isTRUE(all.equal(nv$coeftable$estimate, a$coeftable$estimate)))
})

test_that("did_lpdid's bad input: clear errors", {
  d <- utils::read.csv(system.file("extdata", "sim_panel.csv", package = "diffdiff"))
  f <- function(...) did_lpdid(d, "y", "id", "year", ...)
  expect_error(f(gname = "first_treat", post_window = 2), "`pre_window`")
  expect_error(f(gname = "first_treat", pre_window = 2), "`post_window`")
  expect_error(f(pre_window = 2, post_window = 2), "exactly one of `gname`")
  expect_error(f(gname = "first_treat", pre_window = 2, post_window = 2, pmd = 0), "`pmd` must be NULL")
  expect_error(f(gname = "first_treat", pre_window = 2, post_window = 2, pmd = "min"), "got \"min\"")
  expect_error(f(gname = "first_treat", pre_window = 0, post_window = 2), "pre_window")
  expect_error(f(gname = "first_treat", pre_window = 2, post_window = 2, reweight = NA), "reweight")
  d2 <- d[d$year != 2005, ]
  expect_error(did_lpdid(d2, "y", "id", "year", gname = "first_treat", pre_window = 2, post_window = 2),
               "equally spaced")
  d3 <- d; d3$treat[d3$id == d3$id[d3$treat == 1][1] & d3$year == 2010] <- 0
  expect_error(did_lpdid(d3, "y", "id", "year", dname = "treat", pre_window = 2, post_window = 2), "switches off again")
  d4 <- d; d4$first_treat <- 0
  expect_error(did_lpdid(d4, "y", "id", "year", gname = "first_treat", pre_window = 2, post_window = 2))
  before <- d
  invisible(f(gname = "first_treat", pre_window = 2, post_window = 1))
  expect_identical(d, before)
})

# deterministic panels of diff-diff's tests/test_lpdid.py (exact answers)
lp_long <- function(Y, D = NULL) {
  n <- nrow(Y); T <- ncol(Y)
  d <- data.frame(id = rep(seq_len(n), T), t = rep(seq_len(T) - 1L, each = n), y = c(Y))
  if (!is.null(D)) d$d <- c(D)
  d
}

test_that("ylags and dylags: calendar lags of the outcome remove the confounding they carry", {
  Y <- rbind(c(8, 4, 2, 1), c(6, 3, 1.5, .75), c(4, 2, 1, .5), c(2, 1, .5, .25))
  d <- lp_long(Y); d$g <- ifelse(d$id <= 2, 2, 0)
  f <- function(...) did_lpdid(d, "y", "id", "t", gname = "g", pre_window = 1, post_window = 0, ...)
  expect_lt(coef(f())[["event::0"]], -0.5)
  expect_equal(coef(f(ylags = 1))[["event::0"]], 0, tolerance = 1e-10)
  expect_identical(f(ylags = 1)$covariates, "ylag1")
  Y <- rbind(c(0, 0, 4, 8), c(0, 0, 3, 6), c(0, 0, 2, 4), c(0, 0, 1, 2))
  d <- lp_long(Y); d$g <- ifelse(d$id <= 2, 3, 0)
  expect_gt(coef(f())[["event::0"]], 1.5)
  expect_equal(coef(f(dylags = 1))[["event::0"]], 0, tolerance = 1e-10)
})

test_that("non-absorbing treatments: effect stabilisation recovers the effect, first entry where it can", {
  mk <- function(paths, tau = 2) {
    D <- do.call(rbind, paths); T <- ncol(D)
    lp_long(outer(10 * seq_len(nrow(D)), 0.5 * (seq_len(T) - 1), `+`) + tau * D, D)
  }
  on_off <- c(0, 0, 1, 0, 1, 1, 1, 1, 0, 0)
  d <- mk(c(rep(list(on_off), 6), rep(list(rep(0, 10)), 6), rep(list(rep(1, 10)), 4)))
  es <- did_lpdid(d, "y", "id", "t", dname = "d", pre_window = 1, post_window = 2,
                  non_absorbing = "effect_stabilization", stabilization_window = 1)
  expect_equal(coef(es)[["event::2"]], 2, tolerance = 1e-10)
  fe <- did_lpdid(d, "y", "id", "t", dname = "d", pre_window = 1, post_window = 2, non_absorbing = "first_entry")
  expect_false("event::2" %in% names(coef(fe)))            # the first entries switch off at t + 1
  expect_false(fe$horizons$estimated[fe$horizons$term == "event::2"])
  expect_error(did_lpdid(d, "y", "id", "t", dname = "d", pre_window = 1, post_window = 2), "switches off again")
  # stably treated units are controls under effect stabilisation, never under first entry
  d <- mk(c(rep(list(rep(1, 10)), 8), rep(list(c(0, 0, 0, 0, 1, 1, 1, 1, 1, 1)), 6)))
  es <- did_lpdid(d, "y", "id", "t", dname = "d", pre_window = 1, post_window = 0,
                  non_absorbing = "effect_stabilization", stabilization_window = 2)
  expect_equal(coef(es)[["event::0"]], 2, tolerance = 1e-10)
  expect_error(did_lpdid(d, "y", "id", "t", dname = "d", pre_window = 1, post_window = 0,
                         non_absorbing = "first_entry"), "no post-treatment horizon")
  # on an absorbing panel, first entry is the absorbing estimator
  s <- utils::read.csv(system.file("extdata", "sim_panel.csv", package = "diffdiff"))
  a <- did_lpdid(s, "y", "id", "year", dname = "treat", pre_window = 3, post_window = 2)
  b <- did_lpdid(s, "y", "id", "year", dname = "treat", pre_window = 3, post_window = 2, non_absorbing = "first_entry")
  expect_equal(b$coeftable, a$coeftable, tolerance = 1e-12)
})

test_that("did_lpdid's extensions: row order, constant weights, bad input", {
  d <- lp_panel_na()
  f <- function(dd, ...) did_lpdid(dd, "y", "unit", "time", dname = "treat", pre_window = 2, post_window = 2,
                                   non_absorbing = "effect_stabilization", stabilization_window = 2, ...)
  a <- f(d)
  set.seed(9)
  expect_equal(f(d[sample(nrow(d)), ])$coeftable, a$coeftable, tolerance = 1e-12)
  d$w <- 3
  expect_equal(f(d, weightsname = "w")$coeftable, a$coeftable, tolerance = 1e-12)
  x <- lp_panel60()
  before <- x
  g <- function(...) did_lpdid(x, "y", "unit", "time", gname = "g", pre_window = 2, post_window = 1, ...)
  invisible(g(xformla = ~ x, reweight = TRUE))
  expect_identical(x, before)
  expect_error(did_lpdid(d, "y", "unit", "time", dname = "treat", pre_window = 2, post_window = 2,
                         stabilization_window = 2), "`stabilization_window` = 2 applies")
  expect_error(did_lpdid(d, "y", "unit", "time", dname = "treat", pre_window = 2, post_window = 2,
                         non_absorbing = "effect_stabilization"), "needs `stabilization_window`")
  expect_error(f(d, stabilization_window = 0), "stabilization_window")
  expect_error(g(non_absorbing = "first_entry"), "needs the treatment as a 0/1 column `dname`")
  expect_error(g(non_absorbing = "sometimes"), "non_absorbing")
  expect_error(did_lpdid(d, "y", "unit", "time", dname = "treat", pre_window = 2, post_window = 2,
                         non_absorbing = "first_entry", control_group = "never_treated"), "for absorbing treatments")
  expect_error(g(ylags = -1), "ylags")
  expect_error(g(dylags = 1.5), "dylags")
  expect_error(g(xformla = ~ nosuch), "nosuch")
  expect_error(g(weightsname = "nosuch"), "nosuch")
  d2 <- d[!(d$unit == 5 & d$time == 7), ]
  expect_error(f(d2), "unit 5 has a gap")
  s <- lp_panel_svy()
  des <- survey_design(s, ids = ~psu, strata = ~stratum, weights = ~weight)
  expect_error(did_lpdid(s, "y", "unit", "time", gname = "g", pre_window = 2, post_window = 1, survey = des,
                         cluster = "psu"), "`cluster`")
  expect_error(did_lpdid(s, "y", "unit", "time", gname = "g", pre_window = 2, post_window = 1, survey = des,
                         weightsname = "weight"), "`weightsname`")
  s$psu2 <- s$psu; s$psu2[s$unit == 1 & s$time > 6] <- 99
  expect_error(did_lpdid(s, "y", "unit", "time", gname = "g", pre_window = 2, post_window = 1,
                         survey = survey_design(s, ids = ~psu2, weights = ~weight)), "within one PSU")
  # a covariate constant within every period is aliased with the period effects, and said so
  x$k <- x$time
  fk <- g(xformla = ~ x + k)
  expect_equal(fk$coeftable, g(xformla = ~ x)$coeftable, tolerance = 1e-10)
  expect_match(paste(fk$notes, collapse = " "), "collinear.*k")
})

test_that("a survey design of unit PSUs with equal weights: the clustered estimates; for RA the SEs times sqrt(G / (G - 1))", {
  x <- lp_panel60(); x$w <- 2
  for (rw in c(FALSE, TRUE)) {
    a <- did_lpdid(x, "y", "unit", "time", gname = "g", xformla = ~ x, pre_window = 2, post_window = 2, reweight = rw)
    b <- did_lpdid(x, "y", "unit", "time", gname = "g", xformla = ~ x, pre_window = 2, post_window = 2, reweight = rw,
                   survey = survey_design(x, ids = ~unit, weights = ~w))
    expect_equal(b$coeftable$estimate, a$coeftable$estimate, tolerance = 1e-12)
    expect_identical(b$vcov_type, "survey")
  }
  # regression adjustment has no small-sample factor; the design's variance has n_h / (n_h - 1), 60 PSUs
  expect_equal(b$coeftable$std.error / a$coeftable$std.error, rep(sqrt(60 / 59), nrow(a$coeftable)), tolerance = 1e-10)
})
