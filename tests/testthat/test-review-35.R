# Regression tests for what the read of issue 35's whole diff found (each
# failed before its fix, on the build of 5db62a8 / ab4aca0):
# - a unit first treated in period 0 (or earlier) was coded 0 = never
#   treated by placebo_test() and dd_gname();
# - did_cs(panel = FALSE) stopped checking that the cluster is constant
#   within each identifier (the shared prologue checked it for panels only);
# - did_check() reported no error when every outcome is missing;
# - aggregate() of a did_dose fit dropped the fit's peer rules.

test_that("a first treated period <= 0 is an error where 0 codes never treated", {
  d <- expand.grid(id = 1:30, t = 0:5)
  d$D <- as.integer(d$id <= 6 | (d$id <= 15 & d$t >= 3))
  d$y <- stats::rnorm(nrow(d)) + d$D
  msg <- "`dname` = \"D\" is first 1 in period 0 for unit 1; a first treated period must be positive"
  expect_error(dd_gname(d, "id", "t", "D"), msg, fixed = TRUE)
  f <- did_twfe(d, "y", "id", "t", "D")
  expect_error(placebo_test(f, nperm = 19), msg, fixed = TRUE)
  # periods from 1: fine, and the early units are a cohort, not never treated
  d1 <- transform(d, t = t + 1)
  g <- dd_gname(d1, "id", "t", "D")
  expect_identical(sort(unique(g)), c(0, 1, 4))
  expect_identical(sum(g[d1$t == 1] == 0), 15L)
})

test_that("did_cs(panel = FALSE) checks that the cluster is constant within each identifier", {
  set.seed(4)
  d <- expand.grid(id = 1:80, t = 1:4)
  gu <- sample(c(0, 3, 4), 80, TRUE)
  d$g <- gu[d$id]
  d$y <- stats::rnorm(nrow(d)) + (d$g > 0 & d$t >= d$g)
  d$cl <- (d$id %% 10) + 100 * (d$t == 4 & d$id == 7)
  expect_error(did_cs(d, "y", "id", "t", "g", panel = FALSE, cluster = "cl"),
               "`cluster` = \"cl\" must be constant within each unit", fixed = TRUE)
  expect_error(did_cs(d, "y", "id", "t", "g", cluster = "cl"),
               "`cluster` = \"cl\" must be constant within each unit", fixed = TRUE)
  d$cl <- d$id %% 10
  expect_no_error(did_cs(d, "y", "id", "t", "g", panel = FALSE, cluster = "cl"))
})

test_that("did_check reports an error when no outcome is usable", {
  d <- expand.grid(id = 1:20, t = 1:4)
  d$g <- ifelse(d$id <= 10, 3, 0)
  d$y <- NA_real_
  ck <- did_check(d, "y", "id", "t", "g")
  f <- ck$findings
  expect_true(any(f$code == "OUTCOME_CONSTANT" & f$severity == "error"))
  expect_false(any(f$code == "OUTCOME_BINARY"))
})

test_that("aggregate() of a did_dose fit keeps its peer rules", {
  set.seed(2)
  n <- 200
  d <- expand.grid(id = seq_len(n), t = 1:4)
  gu <- sample(c(0, 3, 4), n, TRUE)
  du <- ifelse(gu > 0, stats::runif(n), 0)
  d$g <- gu[d$id]; d$dose <- du[d$id]
  d$y <- stats::rnorm(nrow(d)) + (d$g > 0 & d$t >= d$g) * d$dose
  f <- did_dose(d, "y", "id", "t", "g", "dose", rules = "contdid-0.1.1", nboot = 0)
  a <- aggregate(f)
  expect_identical(a$rules, "contdid-0.1.1")
  expect_true(any(grepl("^Peer rules: contdid-0.1.1", capture.output(print(a)))))
  expect_identical(aggregate(did_dose(d, "y", "id", "t", "g", "dose", nboot = 0))$rules, "default")
})
