# equivalence_test(): TOST on pre-period event-study coefficients,
# intersection-union over the coefficients. Checked against the textbook
# TOST identities computed by hand here: each coefficient's p-value is
# max(P(T > (b + margin)/se), P(T < (b - margin)/se)), and equivalence at
# alpha holds exactly when every 1 - 2 alpha interval lies inside
# (-margin, margin) (so the bound is the largest outer end of those
# intervals).

test_that("equivalence_test: TOST p-values, intersection-union and the equivalence bound", {
  b <- c(0.05, -0.12, 0.02, 0.8, 1.1); V <- diag(c(0.04, 0.05, 0.03, 0.04, 0.05)^2); V[1, 2] <- V[2, 1] <- 0.0004
  e <- equivalence_test(betahat = b, sigma = V, num_pre = 3, margin = 0.2)
  se <- sqrt(diag(V))[1:3]
  pl <- stats::pnorm((b[1:3] + 0.2) / se, lower.tail = FALSE); pu <- stats::pnorm((b[1:3] - 0.2) / se)
  expect_equal(e$table$p.value, pmax(pl, pu), tolerance = 1e-14)
  expect_equal(e$p.value, max(pmax(pl, pu)), tolerance = 1e-14)
  expect_identical(e$table$event, c(-4, -3, -2))
  expect_equal(e$bound, max(abs(b[1:3]) + stats::qnorm(0.95) * se), tolerance = 1e-14)
  # equivalence exactly when the margin exceeds the bound
  expect_true(equivalence_test(betahat = b, sigma = V, num_pre = 3, margin = e$bound * (1 + 1e-9))$equivalent)
  expect_false(equivalence_test(betahat = b, sigma = V, num_pre = 3, margin = e$bound * (1 - 1e-9))$equivalent)
  expect_output(print(e), "Equivalence test of 3 pre-period coefficients")
  e0 <- equivalence_test(betahat = b, sigma = V, num_pre = 3)
  expect_true(is.na(e0$p.value) && is.na(e0$equivalent))
  expect_equal(e0$bound, e$bound)
})

test_that("equivalence_test on fits: the event study's coefficients, t quantiles for clustered regressions", {
  d <- read.csv(system.file("extdata", "sim_panel.csv", package = "diffdiff"))
  es <- did_event(d, "y", "id", "year", "first_treat")
  e <- equivalence_test(es, margin = 0.6)
  pre <- es$event_study$event < 0
  b <- es$event_study$estimate[pre]; se <- es$event_study$std.error[pre]
  df <- es$df
  expect_true(is.finite(df))
  expect_equal(e$table$p.value, pmax(stats::pt((b + 0.6) / se, df, lower.tail = FALSE), stats::pt((b - 0.6) / se, df)),
               tolerance = 1e-13)
  expect_equal(e$bound, max(abs(b) + stats::qt(0.95, df) * se), tolerance = 1e-13)
  # CR2: each coefficient with its own degrees of freedom
  e2 <- equivalence_test(did_event(d, "y", "id", "year", "first_treat", vcov = "CR2"), margin = 0.6)
  expect_true(length(unique(e2$table$df)) > 1L)
  # did_cs's event study (normal quantiles)
  cs <- aggregate(did_cs(d, "y", "id", "year", "first_treat", base_period = "universal"), type = "dynamic")
  ec <- equivalence_test(cs, margin = 0.6)
  expect_true(all(is.infinite(ec$table$df)))
})

test_that("equivalence_test: bad input gets errors naming the argument and value", {
  b <- c(0.05, -0.12, 0.8); V <- diag(3) * 0.01
  expect_error(equivalence_test(betahat = b, sigma = V, num_pre = 2, margin = 0), "`margin` = 0 must be one positive number")
  expect_error(equivalence_test(betahat = b, sigma = V, num_pre = 2, margin = -1), "`margin` = -1")
  expect_error(equivalence_test(betahat = b, sigma = V, num_pre = 2, margin = 1, alpha = 0.6), "`alpha`")
  expect_error(equivalence_test(betahat = b, sigma = V, num_pre = 3, margin = 1), "`num_pre`")
  d <- read.csv(system.file("extdata", "sim_panel.csv", package = "diffdiff"))
  f <- aggregate(did_etwfe(d, "y", "id", "year", "first_treat"), type = "dynamic")
  expect_error(equivalence_test(f, margin = 1), "no pre-period coefficients")
  expect_error(equivalence_test(lm(y ~ year, d), margin = 1), "`fit` must be an event-study fit")
})
