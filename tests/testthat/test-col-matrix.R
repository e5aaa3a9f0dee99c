# The regressor matrix built in C (C_col_matrix), the column scales
# (C_col_maxabs) and the copies the regression layer no longer makes: each
# against base R, and tracemem() showing that dd_regress() and dd_double()
# leave a double matrix where it is.

test_that("C_col_matrix equals cbind of the columns, NA kept", {
  set.seed(3)
  n <- 1025L
  cols <- list(rnorm(n), sample.int(5L, n, replace = TRUE), sample(c(TRUE, FALSE), n, replace = TRUE))
  cols[[2]][7] <- NA_integer_; cols[[3]][9] <- NA; cols[[1]][11] <- NaN
  M <- .Call(diffdiff:::C_col_matrix, cols)
  ref <- cbind(cols[[1]], as.double(cols[[2]]), as.double(cols[[3]]))
  expect_identical(M, ref)
  expect_identical(dim(.Call(diffdiff:::C_col_matrix, list())), c(0L, 0L))
  expect_error(.Call(diffdiff:::C_col_matrix, list(1:3, 1:2)), "C_col_matrix: `cols` has columns of different lengths")
  expect_error(.Call(diffdiff:::C_col_matrix, list(letters)), "`cols` must hold double, integer or logical")
})

test_that("C_col_maxabs equals max(abs()) per column, NA ignored", {
  set.seed(4)
  X <- matrix(rnorm(3000) * 10^(0:2), 1000, 3, byrow = TRUE)
  expect_identical(.Call(diffdiff:::C_col_maxabs, X), apply(abs(X), 2, max))
  cols <- list(a = c(-5L, 2L, NA), b = c(0.5, NaN, -7), c = c(TRUE, NA))
  expect_identical(.Call(diffdiff:::C_col_maxabs, unname(cols)), c(5, 7, 1))
  expect_identical(.Call(diffdiff:::C_col_maxabs, list(numeric())), 0)
  expect_error(.Call(diffdiff:::C_col_maxabs, 1:3), "C_col_maxabs: `x` must be a double matrix or a list")
})

test_that("an overflowing covariate is named, from a matrix and from columns", {
  d <- expand.grid(t = 1:4, id = 1:30)
  d$d <- as.integer(d$id <= 10 & d$t >= 3)
  d$y <- rnorm(nrow(d)); d$x1 <- rnorm(nrow(d)); d$x2 <- rnorm(nrow(d)); d$x2[5] <- 1e200
  expect_error(did_twfe(d, "y", "id", "t", "d", xformla = ~ x1 + x2), "`xformla` variable \"x2\" has values as large as 1e\\+200")
  d$f <- factor(d$id %% 3)
  expect_error(did_twfe(d, "y", "id", "t", "d", xformla = ~ x1 + x2 + f), "`xformla` variable \"x2\" has values as large as 1e\\+200")
})

test_that("dd_double and dd_regress do not copy a double matrix", {
  skip_if_not(capabilities("profmem"))
  set.seed(5)
  n <- 2000L
  X <- cbind(a = rnorm(n), b = rnorm(n))
  y <- rnorm(n)
  fe <- list(u = diffdiff:::dd_codes(rep(1:200, each = 10)), t = diffdiff:::dd_codes(rep(1:10, 200)))
  copies <- function(expr) {
    tracemem(X)
    on.exit(untracemem(X))
    sum(grepl("^tracemem\\[", capture.output(force(expr))))
  }
  # a copy is counted (so that a count of 0 means something); the build
  # before dd_double() and the in-place dimnames counted 1 in dd_regress()
  n_old <- copies({ Z <- X; Z[1, 1] <- 0 })
  n_double <- copies(diffdiff:::dd_double(X))
  n_regress <- copies(diffdiff:::dd_regress(y, X, fe))
  expect_gt(n_old, 0L)
  expect_identical(n_double, 0L)
  expect_identical(n_regress, 0L)
  Xi <- matrix(1:6, 3)
  expect_identical(diffdiff:::dd_double(Xi), matrix(as.double(1:6), 3))
})
