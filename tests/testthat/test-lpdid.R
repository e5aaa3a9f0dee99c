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
