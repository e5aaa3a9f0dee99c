# The cells path (dd_regress_cells(): cohort x period indicators as cell-level
# sufficient statistics) against the dense path (explicit indicator columns)
# in did_sa(), did_bjs() and did_gardner(). The cells path is valid without
# weights and with weights constant within units; `fit$path` records which
# path ran, and the internal option diffdiff.cells = FALSE forces the dense
# one. Both paths solve the same least-squares problems, so estimates and
# standard errors agree to rounding: 1e-10 relative (as did's fast-vs-slow
# test for the ATT).
dense <- function(expr) {
  op <- options(diffdiff.cells = FALSE)
  on.exit(options(op))
  expr
}

cells_vs_dense <- function(a, b) {
  expect_identical(a$path, "cells")
  expect_identical(b$path, "dense")
  expect_identical(a$coeftable$term, b$coeftable$term)
  expect_lt(rel_diff(a$coeftable$estimate, b$coeftable$estimate), 1e-10)
  expect_lt(rel_diff(a$coeftable$std.error, b$coeftable$std.error), 1e-10)
}

# unbalanced, with weights constant within units (sim_panel's w) and, for the
# dense path without forcing, weights varying within units. wv is not a
# product of a unit and a period factor: for such weights the cells path
# would be exact too, but for wv it is not (forced, it moves did_sa's
# estimates by 12% here), so wv must take the dense path.
cells_data <- function() {
  d <- sim_panel()
  set.seed(5)
  d <- d[-sample(nrow(d), 400), ]
  d$wv <- d$w * (1 + ((d$year + d$id) %% 3) / 4)
  d
}

test_that("regression: weights constant within units take the cells path (the is.na() test never held)", {
  d <- cells_data()
  expect_true(all(tapply(d$w, d$id, function(z) length(unique(z)) == 1L)))
  # the first stage of did_bjs()/did_gardner() directly: before the fix its
  # weighted fit never had cell-structured regressors
  idc <- diffdiff:::dd_codes(d$id); tc <- diffdiff:::dd_codes(d$year)
  D <- d$first_treat > 0 & d$year >= d$first_treat
  fs <- diffdiff:::dd_impute_fit(d$y, cbind(x1 = d$x1), idc, tc, D, d$w, diffdiff:::dd_fe_opts())
  expect_false(is.null(fs$reg$cells))
  fs <- diffdiff:::dd_impute_fit(d$y, cbind(x1 = d$x1), idc, tc, D, d$wv, diffdiff:::dd_fe_opts())
  expect_null(fs$reg$cells)
  expect_identical(did_sa(d, "y", "id", "year", "first_treat", weightsname = "w")$path, "cells")
  expect_identical(did_bjs(d, "y", "id", "year", "first_treat", weightsname = "w")$path, "cells")
  expect_identical(did_gardner(d, "y", "id", "year", "first_treat", weightsname = "w")$path, "cells")
})

test_that("the path: cells without weights, dense with weights varying within units or when forced", {
  d <- cells_data()
  for (f in list(did_sa, did_bjs, did_gardner)) {
    expect_identical(f(d, "y", "id", "year", "first_treat")$path, "cells")
    expect_identical(f(d, "y", "id", "year", "first_treat", weightsname = "wv")$path, "dense")
    expect_identical(dense(f(d, "y", "id", "year", "first_treat"))$path, "dense")
  }
  # the option is restored
  expect_null(getOption("diffdiff.cells"))
})

test_that("did_sa: cells and dense paths agree (weights constant within units, covariate, clustered by state)", {
  d <- cells_data()
  run <- function() did_sa(d, "y", "id", "year", "first_treat", xformla = ~ x1, weightsname = "w", cluster = "state")
  a <- run(); b <- dense(run())
  cells_vs_dense(a, b)
  expect_lt(rel_diff(a$cohort_coefs$estimate, b$cohort_coefs$estimate), 1e-10)
  expect_lt(rel_diff(a$cohort_coefs$std.error, b$cohort_coefs$std.error), 1e-10)
  run <- function() did_sa(d, "y", "id", "year", "first_treat", weightsname = "w", vcov = "hetero")
  cells_vs_dense(run(), dense(run()))
  run <- function() did_sa(d, "y", "id", "year", "first_treat", vcov = "iid")
  cells_vs_dense(run(), dense(run()))
})

test_that("did_bjs: cells and dense paths agree (first stage and pre-trend regression)", {
  d <- cells_data()
  run <- function() did_bjs(d, "y", "id", "year", "first_treat", xformla = ~ x1, weightsname = "w")
  a <- run(); b <- dense(run())
  cells_vs_dense(a, b)
  expect_gt(sum(grepl("^event::-", a$coeftable$term)), 0)         # the pre-trend regression ran
  expect_lt(abs(a$pretest$statistic / b$pretest$statistic - 1), 1e-10)
  run <- function() did_bjs(d, "y", "id", "year", "first_treat", cluster = "state")
  cells_vs_dense(run(), dense(run()))
})

test_that("did_gardner: cells and dense paths agree", {
  d <- cells_data()
  run <- function() did_gardner(d, "y", "id", "year", "first_treat", xformla = ~ x1, weightsname = "w")
  cells_vs_dense(run(), dense(run()))
  run <- function() did_gardner(d, "y", "id", "year", "first_treat", cluster = "state")
  cells_vs_dense(run(), dense(run()))
})

test_that("did_event: cells without extra fixed effects (and unweighted or unit-constant weights), dense otherwise", {
  d <- cells_data()
  for (args in list(list(), list(xformla = ~ x1), list(weightsname = "w"), list(cluster = "state"))) {
    a <- do.call(did_event, c(list(d, "y", "id", "year", "first_treat"), args))
    b <- dense(do.call(did_event, c(list(d, "y", "id", "year", "first_treat"), args)))
    cells_vs_dense(a, b)
    expect_equal(names(a$coefficients), names(b$coefficients))
    expect_equal(dimnames(vcov(a)), dimnames(vcov(b)))
  }
  expect_identical(did_event(d, "y", "id", "year", "first_treat", weightsname = "wv")$path, "dense")
  expect_identical(did_event(d, "y", "id", "year", "first_treat", fe = "state")$path, "dense")
  # the wild bootstrap densifies the cells: same numbers as the dense path, same seed
  set.seed(1); a <- did_event(d, "y", "id", "year", "first_treat", cluster = "state", nboot = 99)
  set.seed(1); b <- dense(did_event(d, "y", "id", "year", "first_treat", cluster = "state", nboot = 99))
  expect_equal(a$coeftable$boot.p.value, b$coeftable$boot.p.value)
})

test_that("a rank decision the cells' Gram matrix cannot make falls back to the dense QR path", {
  d <- cells_data()
  # a covariate within 1e-9 of a cohort x period indicator: its residual is
  # below the Gram matrix's resolution, so the cells path must not decide
  set.seed(8)
  d$xn <- as.numeric(d$first_treat == 2006 & d$year == 2007) + 1e-9 * rnorm(nrow(d))
  # a covariate constant within units: absorbed by the unit effects (exactly collinear)
  d$xu <- d$id %% 7
  for (xf in list(~ xn, ~ xu, ~ x1 + xn)) {
    a <- suppressMessages(did_sa(d, "y", "id", "year", "first_treat", xformla = xf))
    b <- suppressMessages(dense(did_sa(d, "y", "id", "year", "first_treat", xformla = xf)))
    expect_identical(a$path, "dense")
    expect_identical(a$coeftable$term, b$coeftable$term)
    expect_equal(a$coeftable$estimate, b$coeftable$estimate, tolerance = 1e-12)
    expect_equal(a$coeftable$std.error, b$coeftable$std.error, tolerance = 1e-12)
    a2 <- suppressMessages(did_bjs(d, "y", "id", "year", "first_treat", xformla = xf))
    b2 <- suppressMessages(dense(did_bjs(d, "y", "id", "year", "first_treat", xformla = xf)))
    # (did_bjs's first stage sees the untreated rows only, where xn is pure
    # noise, well conditioned: it keeps the cells path there)
    expect_identical(a2$path, if (identical(xf, ~ xu)) "dense" else "cells")
    expect_equal(a2$coeftable$estimate, b2$coeftable$estimate, tolerance = 1e-10)
  }
  # a well-conditioned covariate keeps the cells path
  expect_identical(did_sa(d, "y", "id", "year", "first_treat", xformla = ~ x1)$path, "cells")
  g <- diffdiff:::dd_gram_ols(diag(c(4, 1)), c(1, 1), c(2, 1), 1e-7)
  expect_equal(g$coef, c(0.25, 1))
  expect_null(diffdiff:::dd_gram_ols(matrix(c(1, 1, 1, 1 + 1e-12), 2), c(1, 1), c(1, 1), 1e-7))
})
