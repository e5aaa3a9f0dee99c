test_that("dd_fit methods agree with each other", {
  d <- sim_panel()
  fit <- did_twfe(d, "y", "id", "year", "treat", xformla = ~ x1)
  expect_s3_class(fit, c("did_twfe", "dd_fit"))
  tab <- tidy(fit)
  expect_named(tab, c("term", "estimate", "std.error", "statistic", "p.value", "conf.low", "conf.high"))
  expect_equal(unname(coef(fit)), tab$estimate)
  expect_equal(unname(sqrt(diag(vcov(fit)))), tab$std.error)
  expect_equal(unname(confint(fit)[, 1]), tab$conf.low)
  ci90 <- confint(fit, "ATT", level = 0.9)
  expect_true(ci90[1] > tab$conf.low[1] && ci90[2] < tab$conf.high[1])
  expect_equal(unname(ci90[1, ]), unname(unlist(tidy(fit, conf.level = 0.9)[1, c("conf.low", "conf.high")])))
  expect_equal(nobs(fit), 3000L)
  expect_equal(as.data.frame(fit), tab)
  g <- glance(fit)
  expect_equal(g$nobs, 3000L); expect_equal(g$n.clusters, 300L); expect_equal(g$n.units, 300L)
  expect_named(g, c("estimator", "nobs", "n.units", "n.periods", "n.clusters", "vcov.type", "df", "r.squared",
                    "r.squared.within"))
  expect_output(print(fit), "ATT")
  expect_output(print(summary(fit)), "x1")
  expect_error(confint(fit, "nope"), "`parm`")
  expect_error(confint(fit, level = 2), "`level`")
})

test_that("plots draw for event studies and static fits", {
  d <- sim_panel()
  es <- did_event(d, "y", "id", "year", "first_treat")
  f <- tempfile(fileext = ".png")
  grDevices::png(f, width = 700, height = 450)
  expect_invisible(plot(es))
  plot(did_twfe(d, "y", "id", "year", "treat"))
  grDevices::dev.off()
  expect_gt(file.size(f), 1000)
  expect_equal(es$event_study$reference, -1)
  expect_true(all(es$coeftable$event != -1))
})

test_that("summary prints the bootstrap results when run", {
  d <- sim_panel()
  set.seed(1)
  fit <- did_twfe(d, "y", "id", "year", "treat", nboot = 99, boot_weights = "webb")
  expect_output(print(summary(fit)), "Wild cluster bootstrap .*webb")
  expect_true(all(c("boot.p.value", "boot.conf.low", "boot.conf.high") %in% names(tidy(fit))))
})

test_that("print shows negative interval bounds as numbers (p-value column last)", {
  d <- sim_panel()
  d$yneg <- -d$y - 10 * (d$treat == 1)
  fit <- did_twfe(d, yname = "yneg", idname = "id", tname = "year", dname = "treat")
  out <- capture.output(print(fit))
  expect_lt(fit$coeftable$conf.high[fit$coeftable$term == "ATT"], 0)
  tok <- strsplit(trimws(grep("^ATT ", out, value = TRUE)), " +")[[1]]
  # term, estimate, se, t, lower, upper, p: both bounds print as negative numbers
  expect_true(all(as.numeric(tok[5:6]) < 0))
  expect_match(out[grep("Estimate", out)], "Pr\\(>\\|t\\|\\) *$")
})

test_that("tidy(ref = TRUE) adds the reference period(s) as rows, in event order", {
  d <- sim_panel()
  e <- did_event(d, "y", "id", "year", "first_treat", ref = c(-1, -3))
  a <- tidy(e); b <- tidy(e, ref = TRUE)
  expect_false(any(a$event %in% c(-1, -3)))                     # not by default
  expect_equal(nrow(b), nrow(a) + 2L)
  r <- b[b$event %in% c(-1, -3), ]
  expect_equal(r$estimate, c(0, 0)); expect_true(all(is.na(r$std.error))); expect_equal(r$term, c("event::-3", "event::-1"))
  expect_false(is.unsorted(b$event[!is.na(b$event)]))
  expect_equal(b[!(b$event %in% c(-1, -3)), names(a)], a[order(a$event), ], ignore_attr = TRUE)
  s <- did_sa(d, "y", "id", "year", "first_treat")
  t <- tidy(s, ref = TRUE)
  expect_identical(t$term[nrow(t)], "ATT (SA, cohort shares, e >= 0)")   # the overall row stays last
  expect_identical(tidy(did_twfe(d, "y", "id", "year", "treat"), ref = TRUE)$term, "ATT (TWFE)")   # nothing to add
  expect_error(tidy(e, ref = NA), "`ref` must be TRUE or FALSE")
  # did_cs's dynamic aggregation with a universal base period already has its reference row
  cs <- aggregate(did_cs(d, "y", "id", "year", "first_treat", nboot = 0, base_period = "universal"), type = "dynamic")
  tc <- tidy(cs, ref = TRUE)
  expect_identical(sum(tc$event == -1, na.rm = TRUE), 1L)
  expect_equal(tc$estimate[which(tc$event == -1)], 0)
  expect_identical(nrow(tc), nrow(tidy(cs)))
})

test_that("summary() shows what print() shows; z headers under normal inference; no scientific interval columns", {
  d <- sim_panel()
  cs <- did_cs(d, "y", "id", "year", "first_treat", nboot = 199)
  p <- capture.output(print(cs)); s <- capture.output(print(summary(cs)))
  for (rx in c("Uniform band critical value", "Pre-test of parallel trends", "Control group: nevertreated"))
    expect_true(any(grepl(rx, p)) && any(grepl(rx, s)), info = rx)
  b <- capture.output(print(did_bjs(d, "y", "id", "year", "first_treat")))
  expect_true(any(grepl("z value", b)) && any(grepl("Pr(>|z|)", b, fixed = TRUE)))
  t <- capture.output(print(did_twfe(d, "y", "id", "year", "treat")))
  expect_true(any(grepl("t value", t)) && any(grepl("Pr(>|t|)", t, fixed = TRUE)))
  # an interval end near zero is formatted with the estimates (fixed
  # notation here), not on its own in scientific notation
  tab <- data.frame(term = c("a", "b"), estimate = c(0.5, 1.25), std.error = c(0.2551, 0.3),
                    statistic = c(1.96, 4.17), conf.low = c(1.2e-05, 0.66), conf.high = c(0.99999, 1.84),
                    p.value = c(0.04999, 3e-05))
  out <- capture.output(diffdiff:::dd_print_table(tab, 0.05, 4, Inf))
  expect_false(any(grepl("1.2e-05", out, fixed = TRUE)))
  expect_true(any(grepl("0.00001", out, fixed = TRUE)))
})
