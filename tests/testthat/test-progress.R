# Progress through progressr: the SDiD replication loops report between
# batches and honest_did() per value of M, and reporting leaves every number
# unchanged.

# progress counted whatever the loop's expected run time
# (diffdiff.progress_after = 0), with progressr enabled
progress_count <- function(expr) {
  loadNamespace("progressr")                 # what asking for progress does
  op <- options(progressr.enable = TRUE, diffdiff.progress_after = 0); on.exit(options(op))
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

# the never treated and the 2006 cohort of sim_panel(), with a 0/1 treatment
one_cohort <- function() {
  d <- sim_panel()
  d <- d[d$first_treat %in% c(0, 2006), ]
  d$d <- as.integer(d$first_treat > 0 & d$year >= d$first_treat)
  d
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
  d <- one_cohort()
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

test_that("the multiplier bootstrap of did_cs reports progress in batches, same draws", {
  skip_if_not_installed("progressr")
  d <- sim_panel()
  for (cb in c("sup-t", "bootstrap-t")) {
    r <- with_and_without(function() {
      f <- did_cs(d, "y", "id", "year", "first_treat", nboot = 199, cband_method = cb)
      list(f = f, a = aggregate(f, type = "dynamic"))
    }, 6)
    expect_gte(r$a$n, 20L)                   # 20 batches (the batched path); the aggregation reuses the
                                             # fit's draws (sup-t) or runs its own bootstrap-t
    expect_identical(r$b$n, 0L)
    expect_identical(r$a$value$f$coeftable, r$b$value$f$coeftable)
    expect_identical(r$a$value$a$coeftable, r$b$value$a$coeftable)
    expect_true(all(is.finite(head(r$a$value$a$coeftable$cband.low, -1))))   # no band for the overall ATT
  }
})

test_that("the wild cluster bootstrap reports progress per coefficient, same intervals", {
  skip_if_not_installed("progressr")
  d <- sim_panel()
  r <- with_and_without(function() did_twfe(d, "y", "id", "year", "treat", xformla = ~ x1, cluster = "state",
                                            nboot = 99), 7)
  expect_gte(r$a$n, 20L); expect_identical(r$b$n, 0L)
  expect_true(is.finite(r$a$value$coeftable$boot.p.value[1]))
  expect_identical(r$a$value$coeftable, r$b$value$coeftable)
})

test_that("the SDiD jackknife with covariates reports progress, same estimates", {
  skip_if_not_installed("progressr")
  d <- one_cohort()
  r <- with_and_without(function() did_sdid(d, "y", "id", "year", "d", se = "jackknife", xformla = ~ x1), 8)
  expect_gte(r$a$n, 20L); expect_identical(r$b$n, 0L)
  expect_identical(r$a$value$replicates, r$b$value$replicates)
  expect_length(r$a$value$replicates, length(unique(d$id)))
  # without covariates the jackknife has closed forms: one call, no progress
  r0 <- with_and_without(function() did_sdid(d, "y", "id", "year", "d", se = "jackknife"), 8)
  expect_identical(r0$a$n, 0L)
})

test_that("replicate-weight refits with fixed effects report progress, same SEs", {
  skip_if_not_installed("progressr")
  need_peer("survey")
  d <- sim_panel()
  d <- d[d$id <= 60, ]
  j <- survey::as.svrepdesign(survey::svydesign(ids = ~id, weights = ~w, data = d), type = "JK1")
  r <- with_and_without(function() did_twfe(d, "y", "id", "year", "treat", survey = j))
  expect_gte(r$a$n, 60L); expect_identical(r$b$n, 0L)   # one step per replicate (60 PSUs)
  expect_identical(r$a$value$coeftable, r$b$value$coeftable)
})

test_that("C_sdid_reps leaves out the listed units only (the jackknife's batches)", {
  ns <- asNamespace("diffdiff")
  d <- one_cohort()
  for (xf in list(NULL, ~ x1)) {
    f <- did_sdid(d, "y", "id", "year", "d", se = "none", xformla = xf)
    p <- f$fits[[1]]
    jk <- function(units) .Call(ns$C_sdid_reps, p$Y, p$N0, p$T0, p$X, p$opts, unname(p$lambda),
                                unname(p$omega), 3L, units, NULL, NULL)
    all <- jk(NULL)
    expect_length(all, nrow(p$Y))
    expect_false(anyNA(all))
    u <- c(nrow(p$Y), 1L, 7L, p$N0 + 1L)
    expect_identical(jk(u), all[u])
    expect_error(jk(c(1L, nrow(p$Y) + 1L)), "`idx` out of range")
  }
})

test_that("a loop expected to be short reports nothing and runs in two calls, same numbers", {
  skip_if_not_installed("progressr")
  d <- sim_panel()
  fit <- function() did_cs(d, "y", "id", "year", "first_treat", nboot = 199)
  op <- options(progressr.enable = TRUE); on.exit(options(op))
  cnt <- new.env()
  count <- function(after) {
    options(diffdiff.progress_after = after)
    cnt$calls <- 0L; n <- 0L
    set.seed(2)
    # count the combinations of batches (the batched path)
    suppressMessages(trace("dd_rbind_batches", bquote(assign("calls", get("calls", .(cnt)) + 1L, envir = .(cnt))),
          print = FALSE, where = asNamespace("diffdiff")))
    on.exit(suppressMessages(untrace("dd_rbind_batches", where = asNamespace("diffdiff"))))
    v <- withCallingHandlers(fit(), progression = function(c) n <<- n + 1L)
    list(v = v, n = n, calls = cnt$calls)
  }
  short <- count(3600)              # an hour: never worth reporting
  long <- count(0)
  expect_identical(short$n, 0L)
  expect_gte(long$n, 20L)
  expect_identical(short$calls, 1L) # the batch path ran (combining two calls), silently
  expect_identical(short$v$coeftable, long$v$coeftable)
})

test_that("without progressr loaded the loops run in one call and do not load it", {
  skip_if_not_installed("callr")
  lib <- dirname(find.package("diffdiff"))
  r <- callr::r(function(lib) {
    .libPaths(c(lib, .libPaths()))
    suppressMessages(library(diffdiff))
    d <- read.csv(system.file("extdata", "sim_panel.csv", package = "diffdiff"))
    options(diffdiff.progress_after = 0)
    f <- did_cs(d, "y", "id", "year", "first_treat", nboot = 99)
    isNamespaceLoaded("progressr")
  }, args = list(lib = lib))
  expect_false(r)
})
