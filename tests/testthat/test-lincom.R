# dd_lincom(): the one place where regression estimators aggregate their
# coefficients (did_sa's interaction weights, did_stacked's ATT): S b and
# S V S'. Checked against an explicit computation, and the estimators'
# aggregates against their own coefficient vectors.

test_that("dd_lincom gives S b and S V S' with names, and refuses non-conformable input", {
  set.seed(3)
  b <- rnorm(4); A <- matrix(rnorm(16), 4); V <- crossprod(A)
  S <- rbind(c(0.5, 0.5, 0, 0), c(0, 0, 1, 0), c(0.25, 0.25, 0.25, 0.25))
  lc <- diffdiff:::dd_lincom(b, V, S, c("a", "b", "c"))
  expect_equal(unname(lc$estimate), c(mean(b[1:2]), b[3], mean(b)))
  expect_equal(lc$vcov[1, 1], sum(V[1:2, 1:2]) / 4)
  expect_equal(lc$vcov["c", "b"], sum(V[, 3]) / 4)
  expect_identical(dimnames(lc$vcov), list(c("a", "b", "c"), c("a", "b", "c")))
  expect_error(diffdiff:::dd_lincom(b[-1], V, S), "non-conformable")
  # with influence-function rows: psi S', whose crossproduct is S (psi'psi) S'
  psi <- matrix(rnorm(40), 10, 4)
  li <- diffdiff:::dd_lincom(b, crossprod(psi), S, c("a", "b", "c"), ifs = psi)
  expect_equal(li$ifs, psi %*% t(S))
  expect_equal(unname(crossprod(li$ifs)), unname(li$vcov))
  expect_error(diffdiff:::dd_lincom(b, V, S, ifs = psi[, -1]), "non-conformable")
})

test_that("did_sa's event-time estimates are the share-weighted cohort coefficients", {
  d <- sim_panel()
  f <- did_sa(d, "y", "id", "year", "first_treat")
  cc <- f$cohort_coefs
  # event time 0: cohorts' e = 0 coefficients weighted by their observation shares
  e0 <- grepl("::0:cohort::", cc$term, fixed = TRUE)     # terms "year::0:cohort::2004"
  expect_equal(sum(e0), 3)
  w <- f$shares[cc$term[e0]]
  expect_equal(f$coeftable$estimate[f$coeftable$term == "event::0"], sum(w * cc$estimate[e0]) / sum(w),
               tolerance = 1e-12)
})
