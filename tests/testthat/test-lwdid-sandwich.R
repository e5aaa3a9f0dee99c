# did_lwdid()'s ipw and dr standard errors are the sandwich variance of the
# stacked estimating equations (logit score, weighted control mean or
# control outcome regression with odds weights, treated mean), computed
# here independently of the package: the moments written out, their
# Jacobian by central finite differences, J^{-1} S J^{-T} / n (1e-6: the
# finite differences' accuracy).

lw_num_jacobian <- function(f, th, h = 1e-5) {
  vapply(seq_along(th), function(j) {
    e <- replace(numeric(length(th)), j, h * max(1, abs(th[j])))
    (f(th + e) - f(th - e)) / (2 * e[j])
  }, numeric(length(f(th))))
}

lw_sandwich_se <- function(mom, th, n, a) {
  J <- lw_num_jacobian(function(t) colMeans(mom(t)), th)
  Ji <- solve(J)
  V <- Ji %*% (crossprod(mom(th)) / n) %*% t(Ji) / n
  sqrt(drop(t(a) %*% V %*% a))
}

test_that("ipw and dr cells: the sandwich of the stacked estimating equations (finite differences)", {
  set.seed(11)
  n <- 300; x1 <- rnorm(n); x2 <- runif(n)
  D <- rbinom(n, 1, plogis(-0.5 + 0.8 * x1 - x2))
  y <- 1 + x1 + 2 * x2 + D * (1 + 0.5 * x1) + rnorm(n)
  X <- cbind(1, x1, x2); k <- ncol(X)
  # a two-period panel: the period-2 cell of cohort 2 against never-treated units
  d <- data.frame(id = rep(1:n, 2), t = rep(1:2, each = n), x1 = rep(x1, 2), x2 = rep(x2, 2),
                  y = c(rep(0, n), y), g = rep(ifelse(D == 1, 2, 0), 2))
  g0 <- stats::coef(stats::glm(D ~ x1 + x2, family = stats::binomial()))
  w <- exp(drop(X %*% g0))
  # dr: logit, control outcome regression with odds weights, treated mean of the residual
  mdr <- function(th) {
    g <- th[1:k]; b <- th[k + 1:k]; tau <- th[2 * k + 1]
    pp <- stats::plogis(drop(X %*% g)); r <- y - drop(X %*% b)
    cbind(X * (D - pp), X * ((1 - D) * exp(drop(X %*% g)) * r), D * (r - tau))
  }
  b0 <- stats::coef(stats::lm(y ~ x1 + x2, weights = w, subset = D == 0))
  th <- c(g0, b0, mean((y - drop(X %*% b0))[D == 1]))
  expect_lt(max(abs(colMeans(mdr(th)))), 1e-8)
  fd <- did_lwdid(d, "y", "id", "t", "g", ~ x1 + x2, est_method = "dr", control_group = "never_treated")
  expect_equal(fd$cells$estimate, unname(th[2 * k + 1]), tolerance = 1e-10)
  expect_equal(fd$cells$std.error, lw_sandwich_se(mdr, th, n, c(rep(0, 2 * k), 1)), tolerance = 1e-6)
  # ipw: logit, weighted control mean, treated mean
  mip <- function(th) {
    g <- th[1:k]; mu <- th[k + 1]; m1 <- th[k + 2]
    cbind(X * (D - stats::plogis(drop(X %*% g))), (1 - D) * exp(drop(X %*% g)) * (y - mu), D * (y - m1))
  }
  th <- c(g0, sum(((1 - D) * w * y)) / sum((1 - D) * w), mean(y[D == 1]))
  fi <- did_lwdid(d, "y", "id", "t", "g", ~ x1 + x2, est_method = "ipw", control_group = "never_treated")
  expect_equal(fi$cells$estimate, unname(th[k + 2] - th[k + 1]), tolerance = 1e-10)
  expect_equal(fi$cells$std.error, lw_sandwich_se(mip, th, n, c(rep(0, k), -1, 1)), tolerance = 1e-6)
})
