# The QR least-squares kernel against lm(): coefficients, aliased terms (NA for
# the later of a collinear set), and the bread (X'WX)^-1.
test_that("C_ols equals lm, including rank deficiency and weights", {
  set.seed(1)
  n <- 200
  X <- cbind(1, rnorm(n), rnorm(n))
  X <- cbind(X, X[, 2] + 2 * X[, 3], rnorm(n))      # column 4 is collinear
  y <- drop(X %*% c(1, 2, -1, 0, 0.5)) + rnorm(n)
  w <- runif(n, 0.5, 2)
  for (ww in list(NULL, w)) {
    rn <- sqrt(colSums((if (is.null(ww)) 1 else ww) * X^2))
    f <- .Call(diffdiff:::C_ols, X, y, ww, rn, 1e-7)
    m <- lm(y ~ X - 1, weights = ww)
    expect_equal(is.na(f$coef), is.na(unname(coef(m))))
    expect_lt(rel_diff(f$coef[!is.na(f$coef)], coef(m)[!is.na(coef(m))]), 1e-10)
    expect_lt(max(abs(f$resid - resid(m))), 1e-10)
    Xk <- X[, !is.na(f$coef)]
    Wk <- if (is.null(ww)) rep(1, n) else ww
    expect_lt(rel_diff(f$bread, solve(crossprod(Xk, Wk * Xk))), 1e-10)
  }
})

test_that("covariates collinear with the fixed effects are dropped with a message", {
  d <- sim_panel()
  d$x_unit <- d$x2 * 2     # x2 is constant within unit: collinear with the unit FE
  expect_message(fit <- did_twfe(d, "y", "id", "year", "treat", xformla = ~ x1 + x_unit),
                 "'x_unit' removed because of collinearity")
  expect_true(is.na(coef(fit)["x_unit"]))
  expect_false(anyNA(coef(fit)[c("ATT", "x1")]))
  expect_equal(fit$dropped, "x_unit")
  expect_false("x_unit" %in% fit$coeftable$term)
})
