# did_sdid replicates at the Frank-Wolfe Gram threshold (FW_GRAM_MAX = 1024
# controls in src/sdid.c). A replicate with more than 1,024 rows but at most
# 1,024 controls keeps an N0 x N0 Gram matrix that the workspace, sized for all
# rows of the replicate, did not count: a heap overflow on valid data (issue
# 13). Each case puts the replicates' control count at 1,023, 1,024 and 1,025
# with more than 1,024 rows in the replicate, for every variance method, with
# and without a covariate, and staggered. Under `make sanitize` (ASan) and
# `make valgrind` an overflow is reported; in a plain build the kernel checks
# each replicate's workspace against the bound and errors instead of writing.

sdid_big <- function(N0, N1, T0 = 3, T1 = 2, seed = 1, covariate = FALSE, cohorts = 1) {
  set.seed(seed)
  N <- N0 + N1; T <- T0 + T1
  a <- rnorm(N); b <- rnorm(T)
  y <- outer(a, rep(1, T)) + outer(rep(1, N), b) + matrix(rnorm(N * T, sd = 0.3), N, T)
  # treated units: one block (cohorts = 1) or two adoption dates
  start <- rep(Inf, N)
  tr <- N0 + seq_len(N1)
  start[tr] <- if (cohorts == 1) T0 + 1 else ifelse(seq_len(N1) %% 2 == 0, T0 + 1, T0 + 2)
  D <- outer(start, seq_len(T), function(s, t) as.numeric(t >= s))
  y <- y + D
  d <- data.frame(unit = rep(seq_len(N), times = T), time = rep(seq_len(T), each = N),
                  y = as.vector(y), treat = as.vector(D))
  if (covariate) {
    d$x <- rnorm(N * T)
    d$y <- d$y + 0.5 * d$x
  }
  d
}

# max_iter is kept small: the workspace does not depend on the iterations
fit_big <- function(d, se, nboot = 2, covariate = FALSE, staggered = FALSE, max_iter = 200) {
  set.seed(7)
  did_sdid(d, "y", "unit", "time", "treat", se = se, nboot = nboot,
           xformla = if (covariate) ~ x else NULL, staggered = staggered, max_iter = max_iter)
}

expect_finite_reps <- function(fit) {
  expect_true(is.finite(coef(fit)[["ATT"]]))
  expect_true(all(is.finite(fit$replicates)))
  expect_true(is.finite(fit$coeftable$std.error[fit$coeftable$term == "ATT"]))
}

test_that("placebo replicates with 1,023 / 1,024 / 1,025 controls and > 1,024 rows", {
  for (m in 1023:1025) for (cv in c(FALSE, TRUE)) {
    # placebo replicate: n = N0 rows, of which N0 - N1 = m stay controls
    d <- sdid_big(N0 = m + 3, N1 = 3, covariate = cv)
    expect_finite_reps(fit_big(d, "placebo", covariate = cv))
  }
})

test_that("bootstrap replicates straddling 1,024 controls with > 1,024 rows", {
  for (m in 1023:1025) for (cv in c(FALSE, TRUE)) {
    # bootstrap replicate: N = m + 40 rows, about m controls (more or fewer)
    d <- sdid_big(N0 = m, N1 = 40, covariate = cv)
    expect_finite_reps(fit_big(d, "bootstrap", nboot = 3, covariate = cv))
  }
})

test_that("jackknife replicates with 1,023 / 1,024 / 1,025 controls and > 1,024 rows", {
  # jackknife replicate: N - 1 rows; m (a treated unit left out) or m - 1
  # controls. Without covariates the replicates have a closed form (no
  # workspace); with a covariate each one re-solves beta (N fits: few
  # iterations keep it fast, N0 = 1024 and 1025 cover 1,023 to 1,025).
  for (m in 1023:1025) expect_finite_reps(fit_big(sdid_big(N0 = m, N1 = 10), "jackknife"))
  for (m in 1024:1025)
    expect_finite_reps(fit_big(sdid_big(N0 = m, N1 = 2, T0 = 2, T1 = 1, covariate = TRUE), "jackknife",
                               covariate = TRUE, max_iter = 5))
})

test_that("staggered bootstrap and placebo across the threshold", {
  for (m in c(1023, 1025)) {
    d <- sdid_big(N0 = m, N1 = 40, cohorts = 2)
    for (se in c("bootstrap", "placebo")) {
      fit <- fit_big(d, se, nboot = 2, staggered = TRUE)
      expect_true(all(is.finite(coef(fit))))
      expect_true(all(is.finite(fit$coeftable$std.error)))
    }
  }
})

test_that("replicates near the threshold do not depend on the thread count", {
  d <- sdid_big(N0 = 1025, N1 = 3)
  old <- dd_threads()
  on.exit(dd_threads(old))
  dd_threads(1)
  a <- fit_big(d, "placebo", nboot = 4)
  need_threads(2)
  dd_threads(2, throttle = 1)
  b <- fit_big(d, "placebo", nboot = 4)
  dd_threads(old, throttle = 65536)
  expect_identical(a$replicates, b$replicates)
})
