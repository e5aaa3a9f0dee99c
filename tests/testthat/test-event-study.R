# The typed event-study component (fit$event_study): every event-study fit
# carries its event times, terms, estimates, covariance block, reference
# period(s) and base-period type; the diagnostics and plots read it, not the
# term names.

check_es <- function(fit, reference, base_period) {
  es <- fit$event_study
  expect_s3_class(es, "dd_event_study")
  expect_false(is.unsorted(es$event, strictly = TRUE))
  i <- match(es$term, fit$coeftable$term)
  expect_false(anyNA(i))
  expect_equal(es$estimate, fit$coeftable$estimate[i])
  expect_equal(es$std.error, fit$coeftable$std.error[i])
  expect_equal(es$event, fit$coeftable$event[i])
  expect_equal(unname(es$vcov), unname(vcov(fit)[es$term, es$term]), tolerance = 1e-12)
  expect_equal(sqrt(diag(es$vcov)), es$std.error, ignore_attr = TRUE, tolerance = 1e-12)
  expect_identical(es$reference, as.double(reference))
  expect_identical(es$base_period, base_period)
  expect_false(any(es$event %in% es$reference))
  # every row of the table with an event time is in the component or a reference
  ev_rows <- fit$coeftable$event[!is.na(fit$coeftable$event)]
  expect_setequal(ev_rows, c(es$event, intersect(ev_rows, es$reference)))
  invisible(es)
}

test_that("each event-study estimator states its event study; static fits have none", {
  d <- sim_panel()
  check_es(did_event(d, "y", "id", "year", "first_treat"), -1, "reference")
  check_es(did_event(d, "y", "id", "year", "first_treat", ref = c(-1, -5)), c(-5, -1), "reference")
  check_es(did_sa(d, "y", "id", "year", "first_treat"), -1, "reference")
  check_es(did_stacked(d, "y", "id", "year", "first_treat", kappa_pre = 3, kappa_post = 2), -1, "reference")
  check_es(suppressWarnings(did_bjs(d, "y", "id", "year", "first_treat", horizon = TRUE)), -1, "imputation")
  check_es(did_gardner(d, "y", "id", "year", "first_treat", horizon = TRUE), -1, "reference")
  cu <- did_cs(d, "y", "id", "year", "first_treat", base_period = "universal", nboot = 0)
  es <- check_es(aggregate(cu, type = "dynamic"), -1, "reference")
  # the universal base period's reference row is in the table (estimate 0) but not estimated
  ag <- aggregate(cu, type = "dynamic")
  expect_equal(ag$coeftable$estimate[ag$coeftable$term == "event::-1"], 0)
  cv <- did_cs(d, "y", "id", "year", "first_treat", nboot = 0)
  check_es(aggregate(cv, type = "dynamic"), numeric(), "varying")
  ca <- did_cs(d, "y", "id", "year", "first_treat", base_period = "universal", anticipation = 1, nboot = 0)
  check_es(aggregate(ca, type = "dynamic"), -2, "reference")
  expect_null(aggregate(cv, type = "group")$event_study)
  expect_null(did_twfe(d, "y", "id", "year", "treat")$event_study)
  # post-period horizons only: an event study without pre-periods or reference
  eb <- check_es(did_bjs(d, "y", "id", "year", "first_treat", pretrends = FALSE), numeric(), "imputation")
  expect_true(all(eb$event >= 0))
  expect_output(print(es), "reference -1")
})

test_that("the bootstrap covariance of a did_cs event study matches its bootstrap standard errors", {
  d <- sim_panel()
  set.seed(1)
  cu <- did_cs(d, "y", "id", "year", "first_treat", base_period = "universal", nboot = 199)
  ag <- aggregate(cu, type = "dynamic")
  es <- ag$event_study
  expect_equal(sqrt(diag(es$vcov)), es$std.error, ignore_attr = TRUE, tolerance = 1e-12)
  expect_equal(es$crit, ag$crit)
})

test_that("the diagnostics and plots read the component, not the term names", {
  d <- sim_panel()
  fit <- did_event(d, "y", "id", "year", "first_treat")
  h0 <- honest_did(fit, type = "SD", M = c(0, 0.01), grid_points = 200, breakdown = FALSE)
  # rename every event term: nothing parses names, so the answer is the same
  f2 <- fit
  old <- f2$event_study$term
  new <- sprintf("lead_or_lag_%d", seq_along(old))
  f2$coeftable$term[match(old, f2$coeftable$term)] <- new
  rn <- rownames(f2$vcov); rn[match(old, rn)] <- new
  dimnames(f2$vcov) <- list(rn, rn)
  f2$event_study$term <- new
  dimnames(f2$event_study$vcov) <- list(new, new)
  h2 <- honest_did(f2, type = "SD", M = c(0, 0.01), grid_points = 200, breakdown = FALSE)
  expect_equal(h2$results, h0$results)
  expect_equal(h2$original, h0$original)
  p0 <- pretrends_power(fit, slope = 0.05)
  p2 <- pretrends_power(f2, slope = 0.05)
  expect_equal(p2$power, p0$power)
  # a fit without the component is not an event study
  f3 <- fit; f3$event_study <- NULL
  expect_error(honest_did(f3, type = "SD", M = 0), "not an event study")
  expect_error(plot_event_studies(list(a = f3)), "not an event-study fit")
  # the reference period drawn is the stated one
  pdf(NULL); on.exit(grDevices::dev.off())
  r1 <- plot_event_studies(list(a = fit))
  expect_equal(r1$estimate[r1$event == -1], 0)
  f4 <- fit; f4$event_study$reference <- numeric()
  r4 <- plot_event_studies(list(a = f4))
  expect_false(-1 %in% r4$event)
  # pretrends_power's linear trend is anchored at the stated reference
  f5 <- fit; f5$event_study$reference <- -7
  expect_false(isTRUE(all.equal(pretrends_power(f5, slope = 0.05)$power, p0$power)))
})
