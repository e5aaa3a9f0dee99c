# Count arguments (replicates, iterations, periods, threads) beyond
# .Machine$integer.max. Guards against the regression where as.integer() turned
# them into NA, so that a call failed far from the argument with "missing value
# where TRUE/FALSE needed" or reached C as "internal error ... please report".
# Every count goes through dd_check_count(), whose error names the argument,
# the accepted range and the value.
big <- function(arg, min = 0) {
  sprintf("^`%s` must be a whole number between %s and 2147483647; got 1e\\+10\\.$", arg, min)
}

test_that("nboot above the integer range is an error naming nboot in every estimator", {
  d <- sim_panel()
  expect_error(did_2x2(sim_2x2(), "y", "treated", "post", nboot = 1e10), big("nboot"))
  expect_error(did_twfe(d, "y", "id", "year", "treat", nboot = 1e10), big("nboot"))
  expect_error(did_event(d, "y", "id", "year", "first_treat", nboot = 1e10), big("nboot"))
  dc <- sim_cs_panel(n = 200)
  expect_error(did_cs(dc, "y", "id", "t", "g", nboot = 1e10), big("nboot"))
  expect_error(did_cs(dc, "y", "id", "t", "g", biters = 1e10), big("nboot"))
  ds <- sim_sdid_panel(N0 = 8, N1 = 2, T0 = 5, T1 = 3)
  expect_error(did_sdid(ds, "y", "unit", "time", "treat", nboot = 1e10), big("nboot", 2))
  # Inf and 2^31 are just outside as well
  expect_error(did_twfe(d, "y", "id", "year", "treat", nboot = Inf),
               "`nboot` must be a whole number between 0 and 2147483647; got Inf")
  expect_error(did_twfe(d, "y", "id", "year", "treat", nboot = 2^31),
               "`nboot` must be a whole number between 0 and 2147483647; got 2147483648")
})

test_that("nboot and biters of aggregate() above the integer range name nboot", {
  fit <- did_cs(sim_cs_panel(n = 200), "y", "id", "t", "g", nboot = 0)
  expect_error(aggregate(fit, "simple", nboot = 1e10), big("nboot"))
  expect_error(aggregate(fit, "simple", bstrap = TRUE, biters = 1e10), big("nboot"))
})

test_that("fe_maxit above the integer range is an error naming fe_maxit, not an internal error", {
  d <- sim_panel()
  for (f in list(function(...) did_twfe(d, "y", "id", "year", "treat", ...),
                 function(...) did_event(d, "y", "id", "year", "first_treat", ...),
                 function(...) did_sa(d, "y", "id", "year", "first_treat", ...),
                 function(...) did_bjs(d, "y", "id", "year", "first_treat", ...),
                 function(...) did_gardner(d, "y", "id", "year", "first_treat", ...),
                 function(...) did_stacked(d, "y", "id", "year", "first_treat", kappa_pre = 1, kappa_post = 1, ...)))
    expect_error(f(fe_maxit = 1e10), big("fe_maxit", 1))
})

test_that("the other counts above the integer range name their argument", {
  d <- sim_panel()
  dc <- sim_cs_panel(n = 200)
  expect_error(did_cs(dc, "y", "id", "t", "g", nboot = 0, anticipation = 1e10), big("anticipation"))
  expect_error(did_stacked(d, "y", "id", "year", "first_treat", kappa_pre = 1e10, kappa_post = 1),
               big("kappa_pre", 1))
  expect_error(did_stacked(d, "y", "id", "year", "first_treat", kappa_pre = 1, kappa_post = 1e10),
               big("kappa_post"))
  ds <- sim_sdid_panel(N0 = 8, N1 = 2, T0 = 5, T1 = 3)
  expect_error(did_sdid(ds, "y", "unit", "time", "treat", max_iter = 1e10), big("max_iter", 1))
  expect_error(did_sdid(ds, "y", "unit", "time", "treat", max_iter_pre_sparsify = 1e10),
               big("max_iter_pre_sparsify", 1))
  fit <- did_sdid(ds, "y", "unit", "time", "treat", se = "none")
  pdf(NULL); on.exit(grDevices::dev.off(), add = TRUE)
  expect_error(plot(fit, type = "weights", n_units = 1e10), big("n_units", 1))
  # honest_did ran on with NA grid points and only a warning
  expect_error(honest_did(betahat = c(0.1, 0.2, 0.3), sigma = diag(3) * 0.01, num_pre = 2, M = 0.1,
                          grid_points = 1e10), big("grid_points", 2))
})

test_that("dd_threads(1e10) is an error naming n, not an internal error", {
  old <- dd_threads()
  on.exit(dd_threads(old))
  expect_error(dd_threads(1e10), big("n", 1))
  expect_identical(dd_threads(), old)   # the setting is unchanged by the failed call
  expect_error(dd_threads(Inf), "`n` must be a whole number between 1 and 2147483647; got Inf")
})
