# dd_report() (issue 44): the one-call report. Its sections are the package's
# own functions (checked against direct calls), missing sections say why,
# the rendered HTML is self-contained and holds the numbers, and bad input
# is named. Rendering needs rmarkdown and pandoc (installed by
# tools/install-deps.sh); PDF needs LaTeX and is tested for its error when
# LaTeX is absent.

rp_data <- function() {
  d <- read.csv(system.file("extdata", "sim_panel.csv", package = "diffdiff"))
  d$D <- as.integer(d$first_treat > 0 & d$year >= d$first_treat)
  d
}

test_that("the report's sections are the package's diagnostics on the fit", {
  d <- rp_data()
  d0 <- d
  f <- did_cs(d, "y", "id", "year", "first_treat", nboot = 0, base_period = "universal")
  r <- dd_report(f, render = FALSE, outcome_label = "sales", outcome_unit = "$", seed = 5)
  expect_s3_class(r, "dd_report")
  expect_true(is.na(r$file))
  S <- r$sections
  expect_identical(S$plain$sentences, summary(f, style = "plain", outcome_label = "sales", outcome_unit = "$")$sentences)
  # the data profile is did_check() on the data the estimator used
  ck <- did_check(d, "y", "id", "year", gname = "first_treat")
  expect_identical(S$check$check$findings, ck$findings)
  expect_identical(S$timing$timing$cohorts, dd_timing(d, "id", "year", gname = "first_treat")$cohorts)
  expect_identical(S$diagnosis$checks, dd_diagnose(f)$checks)
  # (the band columns come from simulated draws)
  cols <- c("term", "estimate", "std.error", "p.value", "conf.low", "conf.high")
  expect_equal(S$aggregates$group$coeftable[cols], aggregate(f, "group")$coeftable[cols], tolerance = 1e-12)
  expect_identical(S$estimates$table, f$coeftable)
  set.seed(5)
  pt <- placebo_test(f, "timing")
  expect_equal(S$placebo$timing$test$estimate, pt$estimate, tolerance = 1e-12)
  expect_identical(S$stamp$stamp, f$stamp)
  expect_false("placebo" %in% S$next_steps$steps$tag)
  expect_output(print(r), "placebo:timing ran")
  expect_identical(d, d0)
  # a fit without cells: no aggregation; an estimator placebo_test() does not re-run
  f2 <- did_2x2(transform(d[d$year %in% c(2005, 2006) & d$first_treat %in% c(0, 2006), ], post = year == 2006,
                          tr = first_treat > 0), "y", "tr", "post")
  r2 <- dd_report(f2, render = FALSE)
  expect_identical(r2$sections$aggregates$status, "skipped")
  expect_match(r2$sections$placebo$reason, "does not re-run did_2x2")
  expect_match(r2$sections$check$reason, "cannot be rebuilt")
  expect_identical(dd_report(f, render = FALSE, placebo = NULL)$sections$placebo$status, "skipped")
})

test_that("dd_report() renders one self-contained HTML file with the numbers", {
  skip_if_not_installed("rmarkdown")
  skip_if_not_installed("knitr")
  skip_if_not(rmarkdown::pandoc_available(), "pandoc is not installed")
  d <- rp_data()
  f <- did_twfe(d, "y", "id", "year", "D")
  out <- file.path(tempdir(), "dd-report-test.html")
  on.exit(unlink(out))
  r <- dd_report(f, file = out, outcome_label = "sales", outcome_unit = "$")
  expect_identical(r$file, normalizePath(out))
  html <- paste(readLines(out, warn = FALSE), collapse = "\n")
  # self-contained: figures embedded, no external image or script files
  expect_match(html, "data:image/png;base64,")
  expect_false(grepl("<img src=\"[^d][^a]", html))
  expect_false(grepl("<script src=\"(?!data:)", html, perl = TRUE))
  # the sections and the fit's numbers
  for (h in c("Summary in plain language", "Data profile", "Estimates", "Pre-trends", "Placebo tests",
              "Goodman-Bacon check", "Next steps", "Reproducibility"))
    expect_match(html, h, fixed = TRUE)
  expect_match(html, sprintf("$%s", formatC(coef(f)[[1]], format = "f", digits = 2)), fixed = TRUE)
  expect_match(html, format(coef(f)[[1]], digits = 4), fixed = TRUE)
  expect_match(html, f$stamp$data$outcome, fixed = TRUE)
  # the figures: timing and the Bacon plot (did_twfe has no event study)
  expect_identical(lengths(regmatches(html, gregexpr("data:image/png;base64,", html))), 2L)
  expect_match(html, "Not available: the fit has no event study", fixed = TRUE)
})

test_that("bad input to dd_report() is named", {
  d <- rp_data()
  f <- did_twfe(d, "y", "id", "year", "D")
  expect_error(dd_report(lm(y ~ D, d)), "`fit` must be a diffdiff fit")
  expect_error(dd_report(f, format = "docx"), "`format`")
  expect_error(dd_report(f, file = "a.pdf"), "`file` = \"a.pdf\" does not end in .html")
  expect_error(dd_report(f, file = NA_character_), "`file` must be one file name")
  expect_error(dd_report(f, placebo = "forest"), "`placebo` must be placebo_test\\(\\) types")
  expect_error(dd_report(f, render = NA), "`render`")
  expect_error(dd_report(f, title = 3, render = FALSE), "`title` must be one string")
  expect_error(dd_report(f, outcome_unit = 3, render = FALSE), "`outcome_unit`")
  expect_error(dd_report(f, seed = -1, render = FALSE), "`seed`")
  expect_error(dd_report(f, data = 1:3, render = FALSE), "`data`")
  expect_error(dd_report(f, file = file.path(tempdir(), "no-such-dir", "r.html"), placebo = NULL),
               "does not exist")
  if (!nzchar(Sys.which("pdflatex")) && !nzchar(Sys.which("xelatex")))
    expect_error(dd_report(f, file = "r.pdf", format = "pdf"), "needs LaTeX")
})

test_that("every registry estimator's default fit gets a report (each section ran or says why not)", {
  P <- cf_panel()
  for (e in dd_estimators()$name) {
    set.seed(1)
    f <- suppressWarnings(suppressMessages(cf_estimators[[e]]$fit(P, list())))
    r <- dd_report(f, render = FALSE, placebo = NULL)
    st <- vapply(r$sections, function(s) s$status %||% "ran", "")
    expect_true(all(st %in% c("ran", "skipped")), label = e)
    sk <- r$sections[st == "skipped"]
    expect_true(all(vapply(sk, function(s) is.character(s$reason) && nzchar(s$reason), NA)), label = e)
  }
})
