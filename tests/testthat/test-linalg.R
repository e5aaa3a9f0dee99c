# dd_pinv() (R/linalg.R): the one pseudo-inverse of did_dose, did_rs and
# did_edid. Checked against the definition (the four Moore-Penrose
# conditions, the inverse and the least-squares solution where they exist),
# against MASS::ginv (the rule it states to follow), and for its tolerance.

pinv <- diffdiff:::dd_pinv

# the four Penrose conditions, relative to the size of the matrices
penrose <- function(A, X, tol = 1e-10) {
  sc <- max(1, max(abs(A)) * max(abs(X)))
  expect_lt(max(abs(A %*% X %*% A - A)) / max(1, max(abs(A))), tol)   # A X A = A
  expect_lt(max(abs(X %*% A %*% X - X)) / max(1, max(abs(X))), tol)   # X A X = X
  expect_lt(max(abs(t(A %*% X) - A %*% X)) / sc, tol)                # (A X)' = A X
  expect_lt(max(abs(t(X %*% A) - X %*% A)) / sc, tol)                # (X A)' = X A
}

test_that("dd_pinv satisfies the Moore-Penrose conditions, full rank and rank deficient", {
  set.seed(1)
  X <- matrix(rnorm(40), 10, 4)
  cases <- list(
    tall = X, wide = t(X), square = matrix(rnorm(25), 5),
    gram_deficient = crossprod(cbind(X, X[, 1] - 2 * X[, 3])),       # 5 x 5 of rank 4
    tall_deficient = cbind(X, X[, 2] + X[, 4], 0),                    # 10 x 6 of rank 4
    rank_one = tcrossprod(1:4, c(2, -1, 3)))
  for (nm in names(cases)) {
    A <- cases[[nm]]
    P <- pinv(A)
    expect_identical(dim(P), rev(dim(A)), label = nm)
    penrose(A, P)
  }
  expect_identical(pinv(cases$tall_deficient, details = TRUE)$rank, 4L)
  expect_identical(pinv(cases$gram_deficient, details = TRUE)$rank, 4L)
  expect_identical(pinv(cases$rank_one, details = TRUE)$rank, 1L)
})

test_that("dd_pinv is the inverse of a nonsingular matrix and the least-squares solution of full column rank", {
  set.seed(2)
  A <- matrix(rnorm(16), 4) + diag(4)
  expect_equal(pinv(A), solve(A), tolerance = 1e-12)
  X <- matrix(rnorm(60), 20, 3); y <- rnorm(20)
  expect_equal(drop(pinv(X) %*% y), unname(stats::lm.fit(X, y)$coefficients), tolerance = 1e-12)
  # with rhs: the same solution without forming the inverse
  expect_equal(drop(pinv(X, rhs = y)), drop(pinv(X) %*% y), tolerance = 1e-12)
  Y <- matrix(rnorm(40), 20, 2)
  expect_equal(pinv(X, rhs = Y), pinv(X) %*% Y, tolerance = 1e-12)
})

test_that("dd_pinv gives MASS::ginv's numbers, bit for bit, at its tolerance", {
  need_peer("MASS")
  set.seed(3)
  X <- matrix(rnorm(30), 10, 3)
  for (A in list(X, t(X), crossprod(cbind(X, X[, 1])), diag(c(3, 1e-9, 0)), matrix(0, 2, 3)))
    expect_identical(pinv(A), MASS::ginv(A))
  expect_identical(pinv(X, tol = 1e-3), MASS::ginv(X, tol = 1e-3))
})

test_that("dd_pinv of a zero or empty matrix is the zero matrix of the transposed shape", {
  expect_identical(pinv(matrix(0, 3, 2)), matrix(0, 2, 3))
  expect_identical(pinv(matrix(0, 2, 2), rhs = c(1, 2)), matrix(0, 2, 1))
  z <- pinv(matrix(0, 3, 3), details = TRUE)
  expect_identical(z$rank, 0L)
  expect_identical(z$d, c(0, 0, 0))
  expect_identical(pinv(matrix(0, 0, 3)), matrix(0, 3, 0))
  expect_identical(pinv(matrix(0, 0, 0), rhs = numeric()), matrix(0, 0, 1))
})

test_that("dd_pinv's tolerance is relative to the largest singular value", {
  # the default sqrt(eps) (1.5e-8): a relative 1e-9 is dropped, 1e-7 kept
  expect_identical(pinv(diag(c(1, 1e-9)), details = TRUE)$rank, 1L)
  expect_equal(pinv(diag(c(1, 1e-9))), diag(c(1, 0)), tolerance = 1e-15)
  expect_identical(pinv(diag(c(1, 1e-7)), details = TRUE)$rank, 2L)
  expect_equal(pinv(diag(c(1, 1e-7))), diag(c(1, 1e7)), tolerance = 1e-12)
  # the rule is scale free: the same ranks after scaling by 1e8 or 1e-8
  # (an absolute threshold would keep 1e-1 and drop 1e-15)
  for (s in c(1e8, 1e-8)) {
    expect_identical(pinv(s * diag(c(1, 1e-9)), details = TRUE)$rank, 1L)
    expect_identical(pinv(s * diag(c(1, 1e-7)), details = TRUE)$rank, 2L)
  }
  # a given tolerance: did_edid's max(dim) eps keeps what sqrt(eps) drops
  A <- diag(c(1, 1e-12, 1e-17))
  expect_identical(pinv(A, tol = 3 * .Machine$double.eps, details = TRUE)$rank, 2L)
  expect_identical(pinv(A, details = TRUE)$rank, 1L)
  expect_identical(pinv(A, tol = 0, details = TRUE)$rank, 3L)
  # details: the singular values are svd()'s
  set.seed(4)
  B <- matrix(rnorm(12), 4)
  expect_identical(pinv(B, details = TRUE)$d, svd(B)$d)
  expect_identical(pinv(B, details = TRUE)$x, pinv(B))
  expect_error(pinv(B, tol = -1), "internal error: dd_pinv")
  expect_error(pinv(B, rhs = 1:3), "internal error: dd_pinv")
})

# Every pseudo-inverse goes through dd_pinv(): no R file but R/linalg.R calls
# svd() / La.svd(). R/cr2.R keeps its one svd(): the thin decomposition of
# R_j L whose singular values give the eigenvalues of the cluster block of the
# hat matrix (I - H_jj = I - (R_j L)(R_j L)'), from which CR2 builds G_j^(-1/2)
# with clubSandwich's eigenvalue rule; it inverts nothing itself.
test_that("no R file outside R/linalg.R calls svd() for an inverse", {
  rdir <- file.path(source_root("R/linalg.R"), "R")
  calls <- list()
  for (f in list.files(rdir, "[.]R$", full.names = TRUE)) {
    pd <- utils::getParseData(parse(f, keep.source = TRUE))
    hit <- pd$token == "SYMBOL_FUNCTION_CALL" & pd$text %in% c("svd", "La.svd")
    if (any(hit)) calls[[basename(f)]] <- sum(hit)
  }
  expect_identical(setdiff(names(calls), c("linalg.R", "cr2.R")), character())
  expect_identical(calls[["cr2.R"]], 1L)
  expect_identical(calls[["linalg.R"]], 1L)
})

test_that("dd_pinv(divide = TRUE) divides by the singular values (did_dose's arithmetic) and agrees otherwise", {
  set.seed(3)
  A <- crossprod(matrix(rnorm(60), 12, 5))
  s <- svd(A)
  expect_identical(diffdiff:::dd_pinv(A, divide = TRUE), s$v %*% (t(s$u) / s$d))
  expect_identical(diffdiff:::dd_pinv(A), s$v %*% ((1 / s$d) * t(s$u)))
  expect_lt(max(abs(diffdiff:::dd_pinv(A, divide = TRUE) - diffdiff:::dd_pinv(A))), 1e-12 * max(abs(diffdiff:::dd_pinv(A))))
})
