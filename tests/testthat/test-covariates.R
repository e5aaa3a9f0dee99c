# dd_covariates(): the covariate matrix from `xformla`. Its general path
# (factors, character columns, expressions such as I(x^2)) builds the model
# frame from the formula's columns only: it must not copy the rest of the
# data set (as.data.frame() deep-copies every column of a data.table) and
# must not modify the caller's object.

ns <- asNamespace("diffdiff")

cov_data <- function(n = 200, seed = 1) {
  set.seed(seed)
  data.frame(x = rnorm(n), f = sample(c("a", "b", "c"), n, TRUE), k = factor(sample(1:4, n, TRUE)),
             unused = rnorm(n))
}

# bytes allocated by R while evaluating expr (Rprofmem: every large vector
# allocation, plus one line per page of small ones), or NA when R was built
# without memory profiling
alloc_bytes <- function(expr) {
  f <- tempfile()
  on.exit(unlink(f))
  utils::Rprofmem(f, threshold = 0)
  force(expr)
  utils::Rprofmem(NULL)
  x <- readLines(f, warn = FALSE)
  sum(as.numeric(sub("^([0-9]+) :.*", "\\1", grep("^[0-9]+ :", x, value = TRUE))))
}

test_that("the general covariate path equals model.matrix on a data.frame", {
  d <- cov_data()
  X <- ns$dd_covariates(~ x + f + k + I(x^2), d)
  ref <- model.matrix(~ x + f + k + I(x^2), d)[, -1]
  expect_equal(X, ref, tolerance = 0)
  d2 <- d[seq(2, nrow(d), by = 2), ]                  # row names kept, as model.matrix keeps them
  expect_identical(rownames(ns$dd_covariates(~ x + f, d2)), rownames(model.matrix(~ x + f, d2)))
})

test_that("data.table input: the same covariates, the caller's table untouched", {
  skip_if_not_installed("data.table")
  d <- cov_data()
  dt <- data.table::as.data.table(d)
  before <- data.table::copy(dt)
  addr <- vapply(dt, data.table::address, "")
  X <- ns$dd_covariates(~ x + f + k + I(x^2), dt)
  expect_equal(X, ns$dd_covariates(~ x + f + k + I(x^2), d), tolerance = 0, ignore_attr = "dimnames")
  expect_identical(dt, before)
  expect_identical(vapply(dt, data.table::address, ""), addr)
  expect_identical(names(dt), names(d))
})

test_that("tibble input: the same covariates, the caller's tibble untouched", {
  skip_if_not_installed("tibble")
  d <- cov_data()
  tb <- tibble::as_tibble(d)
  before <- tb
  X <- ns$dd_covariates(~ x + f + k, tb)
  expect_equal(X, ns$dd_covariates(~ x + f + k, d), tolerance = 0, ignore_attr = "dimnames")
  expect_identical(tb, before)
})

test_that("did_cs with a factor covariate: data.frame, data.table and tibble give the same fit", {
  d <- sim_cs_panel(n = 200)
  d$xf <- ifelse(d$x2 == 1, "yes", "no")             # character: the general path
  ref <- did_cs(d, "y", "id", "t", "g", xformla = ~ x1 + xf, nboot = 0)
  dt <- data.table::as.data.table(d)                 # data.table: an Import
  f <- did_cs(dt, "y", "id", "t", "g", xformla = ~ x1 + xf, nboot = 0)
  expect_identical(f$coeftable, ref$coeftable)
  expect_identical(names(dt), names(d))
  skip_if_not_installed("tibble")
  f <- did_cs(tibble::as_tibble(d), "y", "id", "t", "g", xformla = ~ x1 + xf, nboot = 0)
  expect_identical(f$coeftable, ref$coeftable)
})

test_that("the general covariate path does not copy the columns it does not use", {
  skip_if_not(capabilities("profmem"), "R built without memory profiling")
  n <- 20000
  d <- cov_data(n)
  for (j in 1:100) d[[paste0("w", j)]] <- rnorm(n)   # 101 unused numeric columns: 16 MB
  unused <- 101 * n * 8
  inputs <- list(data.frame = d)
  if (requireNamespace("data.table", quietly = TRUE)) inputs$data.table <- data.table::as.data.table(d)
  if (requireNamespace("tibble", quietly = TRUE)) inputs$tibble <- tibble::as_tibble(d)
  for (nm in names(inputs)) {
    X <- NULL
    used <- alloc_bytes(X <- ns$dd_covariates(~ x + f, inputs[[nm]]))
    expect_equal(dim(X), c(n, 3L))
    # the model frame and matrix of x and f take a few columns' worth (about
    # 2 MB); a copy of the data set takes more than 16 MB (the data.table
    # input before the fix: 19.0 MB, R 4.2.2, data.table 1.18.6.1)
    expect_lt(used, unused / 2, label = sprintf("bytes allocated (%s input)", nm))
  }
})
