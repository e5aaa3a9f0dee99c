# The fixed-effect absorption (src/demean.c) at tight tolerances. Regression
# test: on a balanced panel the warm start is exact up to rounding, and with
# fe_tol <= 1e-12 the conjugate-gradient stage then ran on rounding noise,
# whose component along the null space of D'WD (a constant moved from one
# fixed effect to the other) it cannot reduce: the coefficients drifted along
# it and the demeaned columns lost their digits. did_twfe(fe_tol = 1e-12) on
# the castle panel gave a coefficient of 0.0889416 for lm()'s 0.0892591, and
# the demeaned unemployment rate was off by 0.054. The iterations now stop
# at the column's rounding floor. The reference is lm() with factors.

castle_twfe <- function() {
  d <- read.csv(system.file("extdata", "castle.csv", package = "diffdiff"))
  d$D <- as.integer(d$effyear > 0 & d$year >= d$effyear)
  d$D[is.na(d$D)] <- 0L
  d
}

test_that("did_twfe equals lm() at every fe_tol on a balanced panel", {
  d <- castle_twfe()
  ref <- coef(lm(l_homicide ~ D + l_income + unemployrt + factor(sid) + factor(year), d))[c("D", "l_income", "unemployrt")]
  for (tol in c(1e-6, 1e-8, 1e-10, 1e-12, 1e-14, 1e-16)) {
    f <- did_twfe(d, "l_homicide", "sid", "year", "D", xformla = ~ l_income + unemployrt, fe_tol = tol)
    expect_equal(unname(coef(f)[1:3]), unname(ref), tolerance = 1e-10, label = sprintf("fe_tol = %g", tol))
  }
})

test_that("the demeaned columns equal lm()'s residuals at tight tolerances, balanced and not", {
  ns <- asNamespace("diffdiff")
  d <- castle_twfe()
  fm <- ns$dd_fe_matrix(list(ns$dd_codes(d$sid), ns$dd_codes(d$year)))
  X <- as.matrix(d[c("l_income", "unemployrt", "l_homicide")])
  ref <- apply(X, 2, function(v) resid(lm(v ~ factor(d$sid) + factor(d$year))))
  for (tol in c(1e-8, 1e-12, 1e-15)) {
    r <- .Call(ns$C_demean, NULL, X, fm$codes, fm$nlev, NULL, tol, 10000L)
    expect_true(all(r$converged))
    expect_lt(max(abs(r$X - ref)), 1e-11)
  }
  # an unbalanced design with weights and three dimensions: the iterations
  # run, and a tight tolerance is at least as accurate as the default
  set.seed(3)
  n <- 4000
  u <- data.frame(id = sample(300, n, TRUE), t = sample(20, n, TRUE), g = sample(15, n, TRUE), w = runif(n))
  u$x <- 50 + rnorm(n) + u$id / 100 + u$t / 10
  for (Q in 2:3) {
    fe <- list(ns$dd_codes(u$id), ns$dd_codes(u$t), ns$dd_codes(u$g))[1:Q]
    fm <- ns$dd_fe_matrix(fe)
    rf <- resid(lm(if (Q == 2) x ~ factor(id) + factor(t) else x ~ factor(id) + factor(t) + factor(g), u, weights = w))
    e <- vapply(c(1e-8, 1e-12, 1e-15), function(tol) {
      r <- .Call(ns$C_demean, NULL, as.matrix(u$x), fm$codes, fm$nlev, u$w, tol, 100000L)
      expect_true(r$converged)
      expect_gt(r$iter, 0L)
      max(abs(r$X - rf))
    }, numeric(1))
    expect_lt(e[1], 1e-7)
    expect_lt(max(e[2:3]), 1e-10)
  }
})
