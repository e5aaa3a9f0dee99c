# dd_next_steps() (issue 44): diff-diff's practitioner_next_steps() rules
# (tools/notes/practitioner-spec.md, section 1): steps 1-2 always, the
# estimator's own steps, a step dropped only when its tag is completed,
# warnings for an all-NA fit and a contaminated Bacon decomposition. Every
# registry estimator's default conformance fit gets its steps.

test_that("every estimator in the registry gets the recipe's steps", {
  P <- cf_panel()
  for (e in dd_estimators()$name) {
    set.seed(1)
    f <- suppressWarnings(suppressMessages(cf_estimators[[e]]$fit(P, list())))
    ns <- dd_next_steps(f)
    expect_s3_class(ns, "dd_next_steps")
    expect_identical(ns$estimator, class(f)[1], label = e)
    expect_true(all(c(1, 2) %in% ns$steps$step), label = e)
    expect_gte(nrow(ns$steps), 3L)
    expect_true(all(ns$steps$priority %in% c("high", "medium", "low")), label = e)
    expect_false("estimation" %in% ns$steps$tag)
    expect_output(print(ns), "Step 1: Define the target parameter")
  }
})

test_that("completed steps are dropped (only theirs); the warnings", {
  d <- read.csv(system.file("extdata", "sim_panel.csv", package = "diffdiff"))
  f <- did_cs(d, "y", "id", "year", "first_treat", nboot = 0)
  a <- dd_next_steps(f)
  b <- dd_next_steps(f, completed = c("parallel_trends", "sensitivity", "target_parameter"))
  expect_setequal(b$steps$tag, setdiff(a$steps$tag, c("parallel_trends", "sensitivity", "target_parameter")))
  expect_identical(nrow(a$steps) - nrow(b$steps), sum(a$steps$tag %in% c("parallel_trends", "sensitivity", "target_parameter")))
  expect_true(all(c("estimation", "sensitivity") %in% b$completed))
  all_done <- dd_next_steps(f, completed = c("target_parameter", "assumptions", "parallel_trends", "sensitivity",
                                             "heterogeneity", "robustness"))
  expect_identical(nrow(all_done$steps), 0L)
  expect_output(print(all_done), "Every step of the recipe is marked done")
  # the comparison group is named in the assumptions
  expect_match(a$steps$why[a$steps$tag == "assumptions"], "never-treated units")
  # a did_dml fit: the learner and omitted-variable steps
  d$x <- rnorm(300)[match(d$id, unique(d$id))]
  m <- dd_next_steps(did_dml(d, "y", "id", "year", "first_treat", ~ x, nboot = 0, seed = 1, folds = 2))
  expect_true(all(c("learner_sensitivity") %in% m$steps$tag))
  expect_true(any(grepl("ovb_sensitivity", m$steps$code)))
  # a contaminated Bacon decomposition
  d$D <- as.integer(d$first_treat > 0 & d$year >= d$first_treat)
  bd <- bacon_decomp(d, "y", "id", "year", dname = "D")
  w <- sum(bd$two_by_twos$weight[grepl("Later vs Earlier", bd$two_by_twos$type)])
  nb <- dd_next_steps(bd)
  expect_identical(length(nb$warnings) > 0, w > 0.01)
  expect_identical(nb$steps$tag, "estimator_selection")
  # an all-NA fit
  f2 <- f; f2$coefficients[] <- NA
  expect_match(dd_next_steps(f2)$warnings, "Every estimate is NA")
  expect_error(dd_next_steps(f, completed = "pretrends"), "`completed` has \"pretrends\", not a step tag")
  expect_error(dd_next_steps(lm(y ~ year, d)), "`fit` must be a diffdiff fit")
})
