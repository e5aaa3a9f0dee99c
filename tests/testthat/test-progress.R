# Progress through progressr: the SDiD replication loops report between
# batches, and the batching leaves every number unchanged.

# progressr signals only when enabled (its default: interactive sessions)
progress_count <- function(expr) {
  op <- options(progressr.enable = TRUE); on.exit(options(op))
  n <- 0L
  val <- withCallingHandlers(expr, progression = function(c) n <<- n + 1L)
  list(value = val, n = n)
}

test_that("did_sdid placebo replications report progress and give the same numbers without it", {
  skip_if_not_installed("progressr")
  p <- read.csv(system.file("extdata", "california_prop99.csv", package = "diffdiff"), sep = ";")
  names(p) <- c("state", "year", "packs", "treated")
  for (se in "placebo") {
    set.seed(3)
    a <- progress_count(did_sdid(p, "packs", "state", "year", "treated", se = se, nboot = 60))
    op <- options(diffdiff.progress = FALSE)
    set.seed(3)
    b <- progress_count(did_sdid(p, "packs", "state", "year", "treated", se = se, nboot = 60))
    options(op)
    expect_gt(a$n, 5L)                       # the batched path ran and reported
    expect_identical(b$n, 0L)                # one batch: no progress
    expect_identical(a$value$replicates, b$value$replicates)
    expect_identical(a$value$coeftable, b$value$coeftable)
  }
})

test_that("staggered did_sdid bootstrap reports per cohort, same numbers", {
  skip_if_not_installed("progressr")
  d <- sim_panel()
  d$d <- as.integer(d$first_treat > 0 & d$year >= d$first_treat)
  set.seed(4)
  a <- progress_count(suppressWarnings(did_sdid(d, "y", "id", "year", "d", staggered = TRUE, se = "bootstrap",
                                                nboot = 50)))
  op <- options(diffdiff.progress = FALSE)
  set.seed(4)
  b <- progress_count(suppressWarnings(did_sdid(d, "y", "id", "year", "d", staggered = TRUE, se = "bootstrap",
                                                nboot = 50)))
  options(op)
  expect_gt(a$n, 5L); expect_identical(b$n, 0L)
  expect_identical(a$value$coeftable, b$value$coeftable)
})

test_that("did_sdid bootstrap (one cohort) reports progress, same numbers", {
  skip_if_not_installed("progressr")
  d <- sim_panel()
  d <- d[d$first_treat %in% c(0, 2006), ]
  d$d <- as.integer(d$first_treat > 0 & d$year >= d$first_treat)
  set.seed(5)
  a <- progress_count(did_sdid(d, "y", "id", "year", "d", se = "bootstrap", nboot = 45))
  op <- options(diffdiff.progress = FALSE)
  set.seed(5)
  b <- progress_count(did_sdid(d, "y", "id", "year", "d", se = "bootstrap", nboot = 45))
  options(op)
  expect_gt(a$n, 5L); expect_identical(b$n, 0L)
  expect_identical(a$value$replicates, b$value$replicates)
})

test_that("honest_did reports one progress step per M value, same intervals", {
  skip_if_not_installed("progressr")
  d <- sim_panel()
  e <- did_event(d, "y", "id", "year", "first_treat")
  a <- progress_count(honest_did(e, type = "SD", M = c(0, 0.02, 0.05), breakdown = FALSE))
  op <- options(diffdiff.progress = FALSE)
  b <- progress_count(honest_did(e, type = "SD", M = c(0, 0.02, 0.05), breakdown = FALSE))
  options(op)
  expect_gte(a$n, 3L); expect_identical(b$n, 0L)
  expect_identical(a$value$results, b$value$results)
})
