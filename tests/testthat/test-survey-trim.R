# trim_weights() (issue 44) against survey::trimWeights(): the trimmed
# weights (one step and strict) to 1e-12, and a did_cs fit on the trimmed
# diffdiff design equal to one on survey's trimmed design (estimates and
# design-based SEs, 1e-10).

trim_data <- function(seed = 1) {
  set.seed(seed)
  u <- data.frame(id = 1:150, str = rep(1:5, 30), psu = rep(1:30, each = 5), w = rexp(150) * 10 + 0.5)
  u$psu <- u$str * 100 + u$psu
  u
}

test_that("trim_weights equals survey::trimWeights, one step and strict", {
  need_peer("survey")
  u <- trim_data()
  des <- survey::svydesign(ids = ~psu, strata = ~str, weights = ~w, data = u)
  up <- 2 * stats::median(u$w); lo <- 0.5 * stats::median(u$w)
  for (strict in c(FALSE, TRUE)) {
    ref <- stats::weights(survey::trimWeights(des, upper = up, lower = lo, strict = strict))
    expect_equal(trim_weights(u$w, upper = up, lower = lo, strict = strict), unname(ref), tolerance = 1e-12)
    dd <- trim_weights(survey_design(u, weights = "w", strata = "str", ids = "psu"), upper = up, lower = lo,
                       strict = strict)
    expect_equal(dd$weights, unname(ref), tolerance = 1e-12)
    expect_equal(sum(dd$weights), sum(u$w), tolerance = 1e-12)
    expect_identical(dd$trimmed$strict, strict)
  }
  # one step can leave weights past a bound; strict cannot
  one <- trim_weights(u$w, upper = up, lower = lo)
  st <- trim_weights(u$w, upper = up, lower = lo, strict = TRUE)
  expect_true(any(one > up + 1e-12))
  expect_true(all(st <= up + 1e-9 & st >= lo - 1e-9))
  expect_identical(trim_weights(u$w), u$w)
})

test_that("a did_cs fit on the trimmed design equals one on survey's trimmed design; the label says trimmed", {
  need_peer("survey")
  u <- trim_data(2)
  set.seed(3)
  d <- expand.grid(t = 1:4, id = u$id)[, c("id", "t")]
  d <- merge(d, u, by = "id")
  d$g <- c(0, 3, 4)[d$id %% 3 + 1]
  d$y <- rnorm(nrow(d)) + d$t * 0.2 + (d$g > 0 & d$t >= d$g)
  up <- 2.5 * stats::median(u$w)
  sdes <- survey::trimWeights(survey::svydesign(ids = ~psu, strata = ~str, weights = ~w, data = d), upper = up)
  ddes <- trim_weights(survey_design(d, weights = "w", strata = "str", ids = "psu"), upper = up)
  a <- did_cs(d, "y", "id", "t", "g", nboot = 0, survey = ddes)
  b <- did_cs(d, "y", "id", "t", "g", nboot = 0, survey = sdes)
  expect_equal(a$coeftable$estimate, b$coeftable$estimate, tolerance = 1e-10)
  expect_equal(a$coeftable$std.error, b$coeftable$std.error, tolerance = 1e-10)
  expect_match(a$vcov_label, "weights trimmed to \\[-Inf, ")
  expect_output(print(ddes), "weights trimmed to")
  u0 <- did_cs(d, "y", "id", "t", "g", nboot = 0, survey = survey_design(d, weights = "w", strata = "str", ids = "psu"))
  expect_gt(max(abs(u0$coeftable$estimate - a$coeftable$estimate)), 1e-6)
})

test_that("trim_weights: replicate designs column by column; bad input", {
  u <- trim_data(4)
  R <- matrix(u$w * rexp(150 * 8), 150, 8)
  u2 <- cbind(u, as.data.frame(R))
  rd <- survey_design(u2, weights = "w", repweights = paste0("V", 1:8), type = "bootstrap")
  tr <- trim_weights(rd, upper = 25)
  expect_equal(tr$repweights[, 3], trim_weights(rd$repweights[, 3], upper = 25), tolerance = 1e-14)
  expect_equal(tr$weights, trim_weights(u$w, upper = 25), tolerance = 1e-14)
  expect_error(trim_weights(u$w, upper = 1, lower = 2), "`lower` \\(2\\) must be below `upper` \\(1\\)")
  expect_error(trim_weights(u$w, upper = "a"), "`upper` must be one number")
  expect_error(trim_weights(c(1, -1)), "positive finite weights")
  expect_error(trim_weights(u$w, upper = 1), "no trimming keeps the total")
  expect_error(trim_weights(u$w, upper = 30, strict = NA), "strict")
  if (has_peer("survey"))
    expect_error(trim_weights(survey::svydesign(ids = ~psu, weights = ~w, data = u)), "survey::trimWeights")
})
