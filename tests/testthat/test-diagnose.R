# dd_diagnose() (issue 44): diff-diff's DiagnosticReport checks
# (tools/notes/practitioner-spec.md, section 2) from diffdiff's own
# diagnostics: each section against the function it wraps or by hand, the
# verdict thresholds, skipped and failing checks, every registry
# estimator's default fit.

test_that("dd_diagnose's sections equal the diagnostics they run", {
  d <- read.csv(system.file("extdata", "sim_panel.csv", package = "diffdiff"))
  f <- did_cs(d, "y", "id", "year", "first_treat", nboot = 0, base_period = "universal")
  x <- dd_diagnose(f)
  expect_s3_class(x, "dd_diagnosis")
  expect_identical(x$checks$status, c("ran", "ran", "ran", "ran", "skipped"))
  es <- aggregate(f, "dynamic")
  pre <- es$event_study$term[es$event_study$event < 0]
  b <- es$coeftable$estimate[match(pre, es$coeftable$term)]
  V <- vcov(es)[pre, pre]
  W <- drop(t(b) %*% solve(V) %*% b)
  expect_equal(x$parallel_trends$statistic, W, tolerance = 1e-10)
  expect_equal(x$parallel_trends$p.value, pchisq(W, length(b), lower.tail = FALSE), tolerance = 1e-10)
  expect_identical(x$parallel_trends$verdict, "no_detected_violation")
  h <- honest_did(es, type = "RM", Mbar = c(0.5, 1, 1.5, 2))
  expect_equal(x$sensitivity$breakdown, h$breakdown)
  expect_identical(x$sensitivity$verdict, if (h$breakdown >= 1) "robust_to_M_x" else "fragile")
  p <- pretrends_power(es, power = 0.8)
  ov <- aggregate(f, "simple")$coeftable$estimate
  expect_equal(x$pretrends_power$ratio, abs(p$slope) / abs(ov), tolerance = 1e-10)
  post <- f$coeftable[f$coeftable$time >= f$coeftable$group, ]
  expect_equal(c(x$heterogeneity$min, x$heterogeneity$max, x$heterogeneity$sd),
               c(min(post$estimate), max(post$estimate), sd(post$estimate)), tolerance = 1e-12)
  expect_identical(x$overall$estimate, ov)
  expect_match(x$interpretation, "The estimate \\(ATT\\) is")
  expect_output(print(x), "parallel_trends  ran")
  expect_identical(tidy(x), x$checks)
  expect_true(nrow(x$next_steps) <= 5L && !any(x$next_steps$tag %in% c("parallel_trends", "sensitivity", "heterogeneity")))
  # the varying base period: honest_did's warning is kept with its check
  xv <- dd_diagnose(did_cs(d, "y", "id", "year", "first_treat", nboot = 0))
  expect_match(xv$sensitivity$warnings, "base_period", all = FALSE)
  expect_output(print(xv), "Warning: .*base_period")
})

test_that("dd_diagnose: fits without an event study, survey designs, every registry estimator", {
  d <- read.csv(system.file("extdata", "sim_panel.csv", package = "diffdiff"))
  d$D <- as.integer(d$first_treat > 0 & d$year >= d$first_treat)
  x <- dd_diagnose(did_twfe(d, "y", "id", "year", "D"))
  expect_identical(x$checks$status, rep("skipped", 5))
  expect_match(x$checks$reason[1], "no event study")
  d$psu <- d$id %% 30; d$wt <- 10 + (d$id %% 7)
  des <- survey_design(d, weights = "wt", ids = "psu")
  xs <- dd_diagnose(did_cs(d, "y", "id", "year", "first_treat", nboot = 0, survey = des, base_period = "universal"))
  expect_identical(xs$checks$status[5], "ran")
  expect_equal(max(xs$design_effect$table$deff), max(dd_deff(did_cs(d, "y", "id", "year", "first_treat", nboot = 0, survey = des,
                                                                       base_period = "universal"))$deff))
  P <- cf_panel()
  for (e in dd_estimators()$name) {
    set.seed(1)
    f <- suppressWarnings(suppressMessages(cf_estimators[[e]]$fit(P, list())))
    xx <- dd_diagnose(f)
    expect_s3_class(xx, "dd_diagnosis")
    expect_true(all(xx$checks$status %in% c("ran", "skipped", "error")), label = e)
  }
  expect_error(dd_diagnose(lm(y ~ year, d)), "`fit` must be a diffdiff fit")
})
