# trend_tests() (issue 44): diff-diff's check_parallel_trends,
# check_parallel_trends_robust and equivalence_test_trends. Reference
# numbers: diff-diff v2.2.0 (diff_diff/utils.py, commit 3f8e9cb5) run on
# the 8-unit example below with numpy 1.24.2 / scipy 1.10.1
# (tools/notes/pt-tests-spec.md, section 5); 1e-10. The slope test against
# lm(); the Kolmogorov-Smirnov p-value against full enumeration of the
# relabellings (no ties) and R's exact ks.test; the permutation p-value
# against the exact permutation distribution within Monte Carlo error (R's
# generator cannot reproduce numpy's draws).

tt_example <- function() {
  Y <- rbind(c(10.0, 11.2, 12.1, 13.5), c(8.5, 9.9, 10.4, 12.0), c(12.3, 13.0, 14.6, 15.1), c(9.1, 10.8, 11.5, 12.9),
             c(10.2, 10.9, 11.8, 12.2), c(7.9, 8.8, 9.3, 10.4), c(11.5, 12.1, 13.2, 13.6), c(9.4, 9.8, 10.9, 11.3))
  data.frame(id = rep(1:8, each = 4), t = rep(1:4, 8), y = as.vector(t(Y)), tr = rep(c(1, 0), each = 16))
}

test_that("trend_tests equals diff-diff's three tests on its worked example", {
  d <- tt_example()
  r <- trend_tests(d, "y", "t", "tr", idname = "id", pre_periods = 1:4, nperm = 0)
  s <- r$slope
  expect_equal(c(s$treated, s$treated_se, s$control, s$control_se), c(1.1125, 0.31685536357867045, 0.7275, 0.30792653344588533),
               tolerance = 1e-10)
  expect_equal(c(s$difference, s$se, s$z, s$p.value), c(0.385, 0.4418326282978334, 0.8713706850560542, 0.3835517867761431),
               tolerance = 1e-10)
  w <- r$wasserstein
  expect_equal(c(w$distance, w$normalized, w$ks_statistic, w$ks_p.value, w$mean_difference, w$variance_ratio),
               c(0.425, 0.9875731832785952, 7 / 12, 0.031436056203858066, 0.42499999999999993, 2.2768701633705963),
               tolerance = 1e-10)
  expect_identical(c(w$n_treated, w$n_control), c(12L, 12L))
  e <- r$equivalence
  expect_equal(c(e$difference, e$se, e$margin, e$df, e$lower_t, e$upper_t, e$lower_p, e$upper_p, e$p.value),
               c(0.42499999999999993, 0.15511074570881103, 0.21517392695347579, 19.099939828845155, 4.127205526787115,
                 1.3527500760033095, 0.0002837978516293291, 0.9040332025682278, 0.9040332025682278), tolerance = 1e-10)
  expect_false(e$equivalent)
  e3 <- trend_tests(d, "y", "t", "tr", idname = "id", pre_periods = 1:4, nperm = 0, margin = 0.3)$equivalence
  expect_equal(c(e3$lower_t, e3$lower_p, e3$upper_t, e3$p.value),
               c(4.674079778850657, 8.160563108208332e-05, 0.8058758239397681, 0.7848829392736654), tolerance = 1e-10)
  # without units: the changes of the group means
  r0 <- trend_tests(d, "y", "t", "tr", pre_periods = 1:4, nperm = 0)
  expect_equal(c(r0$wasserstein$distance, r0$wasserstein$normalized, r0$wasserstein$ks_statistic, r0$wasserstein$ks_p.value,
                 r0$wasserstein$variance_ratio), c(0.42500000000000016, 1.5134797229770263, 1, 0.1, 1.1294964028776862),
               tolerance = 1e-10)
  expect_equal(c(r0$equivalence$se, r0$equivalence$margin, r0$equivalence$df, r0$equivalence$p.value),
               c(0.14337208778404373, 0.14040492037911875, 3.9852626790993884, 0.9408080870974699), tolerance = 1e-10)
  # the default pre-periods: the first half, {1, 2}
  rd <- expect_message(trend_tests(d, "y", "t", "tr", idname = "id", nperm = 0), NA)
  expect_identical(rd$pre_periods, 1:2)
  expect_equal(c(rd$slope$treated, rd$slope$treated_se, rd$slope$difference, rd$slope$z, rd$slope$p.value),
               c(1.25, 1.058103649617245, 0.5999999999999996, 0.4052497170962795, 0.6852939633090975), tolerance = 1e-10)
  expect_output(print(rd), "default: the first half of the periods")
})

test_that("the slope test is lm()'s time trend in each group; the KS p-value is the no-ties exact one", {
  set.seed(3)
  d <- data.frame(id = rep(1:30, each = 5), t = rep(1:5, 30), tr = rep(rbinom(30, 1, 0.5), each = 5))
  d$y <- rnorm(150) + 0.3 * d$t * (1 + d$tr)
  r <- trend_tests(d, "y", "t", "tr", idname = "id", pre_periods = 1:5, nperm = 0)
  ft <- summary(lm(y ~ t, d[d$tr == 1, ]))$coefficients; fc <- summary(lm(y ~ t, d[d$tr == 0, ]))$coefficients
  expect_equal(c(r$slope$treated, r$slope$treated_se), unname(ft["t", 1:2]), tolerance = 1e-10)
  expect_equal(r$slope$se, sqrt(ft["t", 2]^2 + fc["t", 2]^2), tolerance = 1e-10)
  # continuous changes (no ties): R's exact ks.test
  u <- r$changes$u; v <- r$changes$v
  expect_equal(r$wasserstein$ks_p.value, suppressWarnings(stats::ks.test(u, v, exact = TRUE))$p.value, tolerance = 1e-8)
  # full enumeration on small samples: P(D >= d) over all relabellings
  for (mn in list(c(4, 5), c(6, 6), c(3, 7))) {
    x <- c(0.3, 1.7, 2.2, 2.9, 4.1, 5.5, 6.2, 7.7, 8.1, 9.4, 10.6, 11.2)[seq_len(sum(mn))]
    uu <- x[c(1, 4, 5, 9, 10, 12)[seq_len(mn[1])]]; vv <- setdiff(x, uu)
    Dstat <- function(a, b) max(abs(stats::ecdf(a)(x) - stats::ecdf(b)(x)))
    d0 <- Dstat(uu, vv)
    cmb <- utils::combn(length(x), mn[1])
    all_d <- apply(cmb, 2, function(k) Dstat(x[k], x[-k]))
    expect_equal(diffdiff:::dd_ks_exact(d0, mn[1], mn[2]), mean(all_d >= d0 - 1e-12), tolerance = 1e-10,
                 label = paste(mn, collapse = "x"))
  }
})

test_that("the permutation p-value estimates the exact permutation distribution; seeds; bad input", {
  set.seed(9)
  d <- data.frame(id = rep(1:10, each = 3), t = rep(1:3, 10), tr = rep(rep(0:1, 5), each = 3))
  d$y <- round(rnorm(30) + d$tr * d$t * 0.4, 2)
  r <- trend_tests(d, "y", "t", "tr", idname = "id", pre_periods = 1:3, nperm = 20000, seed = 1)
  u <- r$changes$u; v <- r$changes$v; z <- c(u, v); m <- length(u)
  W <- diffdiff:::dd_w1(u, v)
  cmb <- utils::combn(length(z), m)
  Wall <- apply(cmb, 2, function(k) diffdiff:::dd_w1(z[k], z[-k]))
  pex <- mean(Wall >= W - 1e-9 * W)
  expect_lt(abs(r$wasserstein$p.value - pex), 4 * sqrt(pex * (1 - pex) / 20000))
  r2 <- trend_tests(d, "y", "t", "tr", idname = "id", pre_periods = 1:3, nperm = 20000, seed = 1)
  expect_identical(r2$wasserstein$p.value, r$wasserstein$p.value)
  set.seed(5); a <- stats::runif(1)
  set.seed(5); invisible(trend_tests(d, "y", "t", "tr", idname = "id", pre_periods = 1:3, nperm = 50, seed = 2)); b <- stats::runif(1)
  expect_identical(a, b)
  expect_s3_class(tidy(r), "data.frame"); expect_equal(nrow(glance(r)), 1L)
  expect_error(trend_tests(d, "y", "t", "nope"), "treatname")
  d$tr2 <- d$tr * 2
  expect_error(trend_tests(d, "y", "t", "tr2"), "treatname")
  expect_error(trend_tests(d, "y", "t", "tr", pre_periods = 7), "not a period")
  expect_error(trend_tests(d, "y", "t", "tr", pre_periods = 1), "fewer than 2 pre-treatment periods")
  expect_error(trend_tests(d, "y", "t", "tr", nperm = -1), "nperm")
  expect_error(trend_tests(d, "y", "t", "tr", margin = 0), "margin")
  expect_error(trend_tests(d, "y", "t", "tr", pre_periods = 1:2), "fewer than 2 outcome changes")
  d$y[3] <- NA
  expect_message(trend_tests(d, "y", "t", "tr", idname = "id", pre_periods = 1:3, nperm = 0), "dropped")
})
