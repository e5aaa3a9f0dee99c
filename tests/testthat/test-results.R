# new_dd_fit() validates what a result holds: the required fields, no
# unknown or duplicated ones (a misspelt field name is an internal error,
# not a silent extra element), and one name per meaning.

test_that("new_dd_fit rejects missing, unknown and duplicated fields", {
  fit <- did_twfe(sim_panel(), "y", "id", "year", "treat")
  info <- unclass(fit)[diffdiff:::dd_fit_required]
  args <- list("did_twfe", fit$coeftable, fit$coefficients, fit$vcov, info, quote(f()))
  expect_s3_class(do.call(diffdiff:::new_dd_fit, args, quote = TRUE), "dd_fit")
  expect_error(do.call(diffdiff:::new_dd_fit, c(args[1:4], list(info[-1]), args[6]), quote = TRUE),
               "internal error: a did_twfe fit lacks estimator")
  expect_error(do.call(diffdiff:::new_dd_fit, c(args, list(extra = list(pretset = 1))), quote = TRUE),
               "unknown or duplicated fields pretset")
  # a field of another estimator is unknown here
  expect_error(do.call(diffdiff:::new_dd_fit, c(args, list(extra = list(boot_draws = 1))), quote = TRUE), "boot_draws")
  expect_error(do.call(diffdiff:::new_dd_fit, c(args, list(extra = list(alpha = 0.1))), quote = TRUE), "duplicated fields alpha")
})

test_that("the wild bootstrap settings and did_cs's draws have different names", {
  d <- sim_panel()
  set.seed(1)
  f <- did_twfe(d, "y", "id", "year", "treat", cluster = "state", nboot = 99)
  expect_identical(f$wild_boot$nboot, 99L)
  expect_null(f$boot)
  set.seed(1)
  cs <- did_cs(d, "y", "id", "year", "first_treat", nboot = 99)
  expect_identical(dim(cs$boot_draws$draws)[1], 99L)
  expect_null(cs$boot)
  # the reference period has one name: event_study$reference (no `ref` field)
  e <- did_event(d, "y", "id", "year", "first_treat")
  expect_null(e$ref)
  expect_identical(e$event_study$reference, -1)
})
