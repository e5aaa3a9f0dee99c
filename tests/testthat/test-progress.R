# Progress through progressr: the SDiD replication loops report between
# batches and honest_did() per value of M, and reporting leaves every number
# unchanged.

# progressr signals only when enabled (its default: interactive sessions)
progress_count <- function(expr) {
  op <- options(progressr.enable = TRUE); on.exit(options(op))
  n <- 0L
  val <- withCallingHandlers(expr, progression = function(c) n <<- n + 1L)
  list(value = val, n = n)
}

# fit() run with progress (a) and with diffdiff.progress = FALSE (b), each
# after the same seed
with_and_without <- function(fit, seed = 1) {
  set.seed(seed)
  a <- progress_count(fit())
  op <- options(diffdiff.progress = FALSE); on.exit(options(op))
  set.seed(seed)
  b <- progress_count(fit())
  list(a = a, b = b)
}

test_that("did_sdid placebo replications report progress and give the same numbers without it", {
  skip_if_not_installed("progressr")
  p <- read.csv(system.file("extdata", "california_prop99.csv", package = "diffdiff"), sep = ";")
  names(p) <- c("state", "year", "packs", "treated")
  r <- with_and_without(function() did_sdid(p, "packs", "state", "year", "treated", se = "placebo", nboot = 60), 3)
  expect_gt(r$a$n, 5L)                       # the batched path ran and reported
  expect_identical(r$b$n, 0L)                # one batch: no progress
  expect_identical(r$a$value$replicates, r$b$value$replicates)
  expect_identical(r$a$value$coeftable, r$b$value$coeftable)
})

test_that("staggered did_sdid bootstrap reports per cohort, same numbers", {
  skip_if_not_installed("progressr")
  d <- sim_panel()
  d$d <- as.integer(d$first_treat > 0 & d$year >= d$first_treat)
  r <- with_and_without(function() suppressWarnings(did_sdid(d, "y", "id", "year", "d", staggered = TRUE,
                                                             se = "bootstrap", nboot = 50)), 4)
  expect_gt(r$a$n, 5L); expect_identical(r$b$n, 0L)
  expect_identical(r$a$value$coeftable, r$b$value$coeftable)
})

test_that("did_sdid bootstrap (one cohort) reports progress, same numbers", {
  skip_if_not_installed("progressr")
  d <- sim_panel()
  d <- d[d$first_treat %in% c(0, 2006), ]
  d$d <- as.integer(d$first_treat > 0 & d$year >= d$first_treat)
  r <- with_and_without(function() did_sdid(d, "y", "id", "year", "d", se = "bootstrap", nboot = 45), 5)
  expect_gt(r$a$n, 5L); expect_identical(r$b$n, 0L)
  expect_identical(r$a$value$replicates, r$b$value$replicates)
})

test_that("honest_did reports one progress step per M value, same intervals", {
  skip_if_not_installed("progressr")
  d <- sim_panel()
  e <- did_event(d, "y", "id", "year", "first_treat")
  r <- with_and_without(function() honest_did(e, type = "SD", M = c(0, 0.02, 0.05), breakdown = FALSE))
  expect_gte(r$a$n, 3L); expect_identical(r$b$n, 0L)
  expect_identical(r$a$value$results, r$b$value$results)
})
