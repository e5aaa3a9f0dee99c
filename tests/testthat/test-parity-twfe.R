# did_twfe against fixest::feols(y ~ d + x | id + t (+ fe)) with the matching vcov.
# Tolerances: coefficients 1e-8 relative, standard errors 1e-6 relative (issue #2).
twfe_check <- function(fit, m) {
  ct <- fixest::coeftable(m)
  expect_lt(rel_diff(coef(fit), coef(m)), 1e-8)
  expect_lt(rel_diff(fit$coeftable$std.error, ct[, 2]), 1e-6)
  expect_lt(rel_diff(fit$coeftable$p.value, ct[, 4]), 1e-6)
  expect_equal(nobs(fit), nobs(m))
}

# each vcov in turn, ours against fixest's, on one data set
twfe_each_vcov <- function(data, tname, fml) {
  for (v in list("iid", "hetero", ~id, stats::as.formula(paste("~ id +", tname)))) {
    fit <- did_twfe(data, "y", "id", tname, "d", xformla = ~ x1,
                    vcov = if (is.character(v)) v else NULL,
                    cluster = if (is.character(v)) NULL else v)
    twfe_check(fit, fixest::feols(fml, data, vcov = v))
  }
}

test_that("did_twfe equals feols on fixest's base_did", {
  need_peer("fixest")
  data("base_did", package = "fixest", envir = environment())
  base_did$d <- base_did$treat * base_did$post
  twfe_each_vcov(base_did, "period", y ~ d + x1 | id + period)
})

test_that("did_twfe equals feols on fixest's base_stagg (unbalanced)", {
  need_peer("fixest")
  data("base_stagg", package = "fixest", envir = environment())
  b <- base_stagg
  b$d <- as.integer(b$treated == 1 & b$year >= b$year_treated)
  twfe_each_vcov(b, "year", y ~ d + x1 | id + year)
})

test_that("did_twfe equals feols on an unbalanced panel with three FE dimensions and weights", {
  need_peer("fixest")
  d <- sim_unbalanced()
  # both sides converge far below the 1e-8 target: fixest's smallest allowed
  # fixef.tol is 2.2e-12, ours is given the same order
  for (v in list("iid", "hetero", ~id, ~state, ~state + t)) {
    fit <- did_twfe(d, "y", "id", "t", "d", xformla = ~ x1 + x2, weightsname = "w",
                    fe = "firm", vcov = if (is.character(v)) v else NULL,
                    cluster = if (is.character(v)) NULL else v, fe_tol = 1e-11)
    m <- fixest::feols(y ~ d + x1 + x2 | id + t + firm, d, weights = ~w, vcov = v,
                       fixef.tol = 1e-11)
    twfe_check(fit, m)
  }
})

test_that("default tolerances agree with fixest's defaults to its own accuracy", {
  need_peer("fixest")
  d <- sim_unbalanced(seed = 7)
  fit <- did_twfe(d, "y", "id", "t", "d", fe = "firm", weightsname = "w")
  m <- fixest::feols(y ~ d | id + t + firm, d, weights = ~w, vcov = ~id, fixef.tol = 1e-11)
  # our default fe_tol = 1e-8 on FE coefficients: the slope is far more accurate
  expect_lt(rel_diff(coef(fit), coef(m)), 1e-8)
})

test_that("singletons are removed recursively as fixest removes them", {
  need_peer("fixest")
  d <- sim_unbalanced(seed = 3)
  d <- d[-which(d$id %in% 1:20)[-(1:20)], ]      # units 1..20 keep one or few rows
  expect_message(fit <- did_twfe(d, "y", "id", "t", "d", xformla = ~ x1, fe = "firm", fe_tol = 1e-11),
                 "singleton")
  m <- fixest::feols(y ~ d + x1 | id + t + firm, d, vcov = ~id, fixef.tol = 1e-11, notes = FALSE)
  expect_equal(nobs(fit), nobs(m))
  expect_lt(rel_diff(coef(fit), coef(m)), 1e-8)
  expect_lt(rel_diff(fit$coeftable$std.error, fixest::se(m)), 1e-6)
  # kept, they change n and K but not the slopes
  keep <- suppressMessages(did_twfe(d, "y", "id", "t", "d", xformla = ~ x1, fe = "firm",
                                    fe_tol = 1e-11, drop_singletons = FALSE))
  expect_gt(nobs(keep), nobs(fit))
  expect_lt(rel_diff(coef(keep), coef(fit)), 1e-7)
})

test_that("a warning says when the absorption did not converge", {
  d <- sim_unbalanced(seed = 5)
  expect_warning(did_twfe(d, "y", "id", "t", "d", fe = "firm", fe_maxit = 1, fe_tol = 1e-14),
                 "did not converge .* raise `fe_maxit`")
})
