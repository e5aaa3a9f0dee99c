# summary(fit, style = "plain") (issue 44): the plain-language summary of
# diff-diff's BusinessReport (tools/notes/practitioner-spec.md, section 3).
# The numbers in the text are the fit's own (checked against coef/confint and
# the diagnostics they come from), the wording follows the p-value and the
# options, and bad options are named.

pl_data <- function() {
  d <- read.csv(system.file("extdata", "sim_panel.csv", package = "diffdiff"))
  d$D <- as.integer(d$first_treat > 0 & d$year >= d$first_treat)
  d
}

test_that("the plain summary states the fit's estimate, interval and checks", {
  d <- pl_data()
  f <- did_twfe(d, "y", "id", "year", "D")
  s <- summary(f, style = "plain", outcome_label = "weekly sales", outcome_unit = "$",
               treatment_label = "The loyalty programme", direction = "higher_is_better")
  expect_s3_class(s, "dd_plain")
  ci <- confint(f)[1, ]
  expect_identical(s$estimate, unname(coef(f)[1]))
  expect_equal(c(s$conf.low, s$conf.high), unname(ci), tolerance = 1e-12)
  # the numbers printed are the fit's, rounded to cents
  expect_identical(unname(s$sentences["headline"]),
                   sprintf("The loyalty programme lifted weekly sales by $%s (95%% CI: $%s to $%s).",
                           formatC(coef(f)[[1]], format = "f", digits = 2), formatC(ci[[1]], format = "f", digits = 2),
                           formatC(ci[[2]], format = "f", digits = 2)))
  reg <- dd_estimators()
  expect_match(s$sentences[["target"]], reg$estimand[reg$name == "did_twfe"], fixed = TRUE)
  expect_match(s$sentences[["significance"]], "strongly support")
  expect_match(s$sentences[["sample"]], "3,000 observations on 300 units")
  # the Bacon check of dd_diagnose(): a TWFE fit with 15% forbidden weight
  dg <- dd_diagnose(f)
  expect_true(dg$bacon$forbidden_weight > 0.10)
  expect_identical(s$caveats$severity[s$caveats$topic == "bacon"], "warning")
  expect_match(s$sentences[["caveat"]], sprintf("%.0f%% of the TWFE weight", 100 * dg$bacon$forbidden_weight))
  expect_output(print(s), "Plain-language summary \\(did_twfe\\)")
  # a robust estimator on the same rollout: information, not a warning
  fc <- did_cs(d, "y", "id", "year", "first_treat", nboot = 0, base_period = "universal")
  sc <- summary(fc, style = "plain")
  expect_identical(sc$caveats$severity[sc$caveats$topic == "bacon"], "info")
  expect_false("caveat" %in% names(sc$sentences))
  expect_equal(sc$estimate, aggregate(fc, "simple")$coeftable$estimate, tolerance = 1e-12)
  h <- honest_did(aggregate(fc, "dynamic"), type = "RM", Mbar = c(0.5, 1, 1.5, 2))
  expect_match(sc$sentences[["sensitivity"]], sprintf("up to %s times", format(signif(h$breakdown, 2))), fixed = TRUE)
  pt <- dd_diagnose(fc)$parallel_trends
  expect_match(sc$sentences[["pre_trends"]], sprintf("p = %s", format(signif(pt$p.value, 2))), fixed = TRUE)
  # without diagnostics: no pre-trend or sensitivity sentence
  s0 <- summary(fc, style = "plain", diagnose = FALSE)
  expect_false(any(c("pre_trends", "sensitivity") %in% names(s0$sentences)))
})

test_that("wording: verbs by direction, units, significance bands, alpha, anticipation", {
  d <- pl_data()
  f <- did_twfe(d, "y", "id", "year", "D")
  sv <- function(...) summary(f, style = "plain", diagnose = FALSE, ...)$sentences[["headline"]]
  expect_match(sv(), "^The treatment increased y by 1.66 \\(")
  expect_match(sv(direction = "lower_is_better"), "worsened")
  expect_match(sv(outcome_unit = "%"), "by 1.66% \\(95% CI: 1.49% to 1.84%\\)")
  expect_match(sv(outcome_unit = "pp"), "by 1.66 pp")
  expect_match(sv(outcome_unit = "hours"), "by 1.66 hours")
  expect_match(sv(outcome_unit = "log_points"), "1.66 log points")
  expect_match(sv(outcome_unit = "count"), "by 1.7 \\(")
  fn <- did_twfe(transform(d, y = -y), "y", "id", "year", "D")
  expect_match(summary(fn, style = "plain", diagnose = FALSE, direction = "higher_is_better")$sentences[["headline"]],
               "reduced y by 1.66")
  expect_match(summary(fn, style = "plain", diagnose = FALSE, direction = "lower_is_better")$sentences[["headline"]],
               "improved y by 1.66")
  # the significance bands follow the p-value
  band <- function(p) {
    ff <- f; ff$coeftable$p.value[1] <- p
    summary(ff, style = "plain", diagnose = FALSE)$sentences[["significance"]]
  }
  expect_match(band(0.0005), "strongly")
  expect_match(band(0.005), "well supported")
  expect_match(band(0.03), "significant at the 95% level")
  expect_match(band(0.07), "suggestive")
  expect_match(band(0.5), "consistent with no effect")
  expect_match(band(0.045), "close to the 0.05 threshold")
  # alpha: only the wording; the interval stays, and a caveat says so
  ff <- f; ff$coeftable$p.value[1] <- 0.07
  s10 <- summary(ff, style = "plain", diagnose = FALSE, alpha = 0.1)
  expect_match(s10$sentences[["significance"]], "significant at the 90% level")
  expect_match(s10$sentences[["headline"]], "95% CI")
  expect_true("alpha" %in% s10$caveats$topic)
  # a non-finite estimate
  fi <- f; fi$coeftable$estimate[1] <- NA
  si <- summary(fi, style = "plain", diagnose = FALSE)
  expect_match(si$sentences[["headline"]], "unable to produce a finite estimate")
  expect_identical(si$caveats$severity[1], "warning")
  # anticipation in the assumption
  fa <- did_cs(d, "y", "id", "year", "first_treat", nboot = 0, anticipation = 1)
  expect_match(summary(fa, style = "plain", diagnose = FALSE)$sentences[["assumption"]],
               "no effects earlier than 1 period before treatment")
  # estimators with their own summary method take the plain style too
  P <- cf_panel()
  fs <- suppressWarnings(cf_estimators$did_sdid$fit(P, list()))
  ss <- summary(fs, style = "plain", diagnose = FALSE)
  expect_s3_class(ss, "dd_plain")
  expect_match(ss$sentences[["assumption"]], "factor structure")
  expect_s3_class(summary(fs, style = "table"), "summary.did_sdid")
})

test_that("every registry estimator's default fit has a plain summary", {
  P <- cf_panel()
  for (e in dd_estimators()$name) {
    set.seed(1)
    f <- suppressWarnings(suppressMessages(cf_estimators[[e]]$fit(P, list())))
    s <- summary(f, style = "plain", diagnose = FALSE)
    expect_s3_class(s, "dd_plain")
    expect_true(all(c("headline", "target", "assumption", "sample") %in% names(s$sentences)), label = e)
    expect_identical(s$estimator, class(f)[1])
  }
})

test_that("bad options of the plain summary are named", {
  f <- did_twfe(pl_data(), "y", "id", "year", "D")
  expect_error(summary(f, style = "words"), "`style`")
  expect_error(summary(f, outcome_unit = "$"), "`outcome_unit` applies to style = \"plain\" only")
  expect_error(summary(f, style = "plain", outcome_label = 3), "`outcome_label` must be one non-empty string; got 3")
  expect_error(summary(f, style = "plain", treatment_label = c("a", "b")), "`treatment_label`")
  expect_error(summary(f, style = "plain", outcome_unit = ""), "`outcome_unit`")
  expect_error(summary(f, style = "plain", direction = "up"), "`direction`")
  expect_error(summary(f, style = "plain", alpha = 2), "`alpha`")
  expect_error(summary(f, style = "plain", diagnose = "yes"), "`diagnose`")
  expect_error(summary(f, style = "plain", colour = 1), "summary\\(\\)")
})
