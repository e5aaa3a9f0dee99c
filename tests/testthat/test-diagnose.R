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
  expect_identical(x$checks$status, c("ran", "ran", "ran", "ran", "skipped", "ran"))
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
  expect_identical(x$checks$status, c(rep("skipped", 5), "ran"))
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

test_that("dd_diagnose's Bacon check is bacon_decomp() on the fit's panel", {
  d <- read.csv(system.file("extdata", "sim_panel.csv", package = "diffdiff"))
  b <- bacon_decomp(d, "y", "id", "year", gname = "first_treat")
  w_late <- sum(b$two_by_twos$weight[b$two_by_twos$type == "Later vs Earlier Treated"])
  d$D <- as.integer(d$first_treat > 0 & d$year >= d$first_treat)
  ft <- did_twfe(d, "y", "id", "year", "D")
  x <- dd_diagnose(ft)
  expect_identical(x$bacon$status, "ran")
  # the decomposition's TWFE coefficient is the fit's own
  expect_equal(x$bacon$beta_twfe, unname(coef(ft)[[1]]), tolerance = 1e-10)
  expect_equal(x$bacon$forbidden_weight, w_late, tolerance = 1e-12)
  expect_identical(x$bacon$verdict, if (w_late > 0.10) "material_forbidden_weight" else if (w_late > 0.01)
                   "some_forbidden_weight" else "negligible_forbidden_weight")
  expect_identical(x$bacon$about, "estimate")
  expect_match(x$interpretation, "TWFE coefficient's weight")
  # a robust estimator: the same rollout, described as such
  fc <- did_cs(d, "y", "id", "year", "first_treat", nboot = 0, base_period = "universal")
  xc <- dd_diagnose(fc)
  expect_equal(xc$bacon$forbidden_weight, w_late, tolerance = 1e-12)
  expect_identical(xc$bacon$about, "rollout")
  expect_match(xc$interpretation, "this estimator avoids them")
  # the rows the estimator dropped are not in the decomposition: outcome NA
  # for a whole unit (the estimator drops the unit; balanced again)
  dn <- d; dn$y[dn$id == dn$id[1]] <- NA
  xn <- suppressWarnings(dd_diagnose(suppressMessages(suppressWarnings(did_twfe(dn, "y", "id", "year", "D")))))
  bn <- bacon_decomp(dn[dn$id != dn$id[1], ], "y", "id", "year", gname = "first_treat")
  expect_equal(xn$bacon$beta_twfe, bn$beta_twfe, tolerance = 1e-10)
  # data not reachable from the call: skipped, then given through `data`
  mk <- function() { dat <- d; did_twfe(dat, "y", "id", "year", "D") }
  fm <- mk()
  xm <- dd_diagnose(fm)
  expect_identical(xm$bacon$status, "skipped")
  expect_match(xm$bacon$reason, "pass `data`")
  expect_equal(dd_diagnose(fm, data = d)$bacon$forbidden_weight, w_late, tolerance = 1e-12)
  # unbalanced, one cohort, not requested
  du <- d[-(1:2), ]
  expect_match(dd_diagnose(did_twfe(du, "y", "id", "year", "D"))$bacon$reason, "unbalanced")
  d1 <- d[d$first_treat %in% c(0, 2006), ]
  expect_match(dd_diagnose(did_twfe(d1, "y", "id", "year", "D"))$bacon$reason, "fewer than two")
  expect_identical(dd_diagnose(ft, bacon = FALSE)$bacon$status, "skipped")
  # bad input
  expect_error(dd_diagnose(ft, bacon = NA), "`bacon`")
  expect_error(dd_diagnose(ft, data = 1:3), "`data`")
  expect_error(dd_diagnose(ft, envir = list()), "`envir` must be an environment")
})

test_that("plot.dd_diagnosis draws the panels whose checks ran", {
  d <- read.csv(system.file("extdata", "sim_panel.csv", package = "diffdiff"))
  x <- dd_diagnose(did_cs(d, "y", "id", "year", "first_treat", nboot = 0, base_period = "universal"))
  # the number of figures drawn: plot.new() calls in the display list
  n_new <- function(expr) {
    grDevices::pdf(NULL); on.exit(grDevices::dev.off()); grDevices::dev.control("enable")
    force(expr)
    r <- grDevices::recordPlot()
    sum(vapply(r[[1]], function(e) identical(e[[2]][[1]]$name, "C_plot_new"), NA))
  }
  expect_identical(n_new(expect_identical(plot(x), x)), 3L)
  expect_identical(n_new(plot(x, which = "bacon")), 1L)
  expect_identical(n_new(plot(x, which = c("event_study", "bacon"))), 2L)
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off())
  plot(x)
  expect_identical(graphics::par("mfrow"), c(1L, 1L))
  d$D <- as.integer(d$first_treat > 0 & d$year >= d$first_treat)
  x2 <- dd_diagnose(did_twfe(d, "y", "id", "year", "D"), bacon = FALSE)
  expect_error(plot(x2), "none of the panels")
  expect_error(plot(x, which = "forest"), "`which` must be some of")
  expect_error(plot(x, col = 2), "plot\\(\\)")
})
