# The imputation layer (did_bjs, did_gardner, did_spillover) when the
# untreated observations link units and periods in separate sets: unit and
# period effects are comparable within a set only. Rows whose unit and period
# lie in different sets are not imputed (before: imputed with period effects
# of another normalisation, a plausible wrong number), and each set keeps
# every period (before: one period per extra set was lost to collinearity).

two_sets <- function(seed = 1) {
  set.seed(seed)
  # set A: periods 1-3, cohort 2 and never-treated units; set B: periods 4-6,
  # cohort 5 and other never-treated units (no unit observed in both)
  A <- expand.grid(t = 1:3, id = 1:40); A$g <- ifelse(A$id <= 20, 2, 0)
  B <- expand.grid(t = 4:6, id = 41:80); B$g <- ifelse(B$id <= 60, 5, 0)
  d <- rbind(A, B)
  d$y <- rnorm(80)[d$id] + 0.5 * d$t + (d$g > 0 & d$t >= d$g) * (1 + d$id / 40) + rnorm(nrow(d))
  d
}

test_that("with two unconnected sets each set is imputed within itself (did_gardner, did_bjs)", {
  d <- two_sets()
  dA <- d[d$t <= 3, ]; dB <- d[d$t >= 4, ]
  for (est in list(did_gardner, did_bjs)) {
    f <- suppressMessages(est(d, "y", "id", "t", "g", pretrends = FALSE))
    a <- suppressMessages(est(dA, "y", "id", "t", "g", pretrends = FALSE))
    b <- suppressMessages(est(dB, "y", "id", "t", "g", pretrends = FALSE))
    nA <- sum(dA$g > 0 & dA$t >= dA$g); nB <- sum(dB$g > 0 & dB$t >= dB$g)
    expect_equal(unname(coef(f)["ATT"]), unname((nA * coef(a)["ATT"] + nB * coef(b)["ATT"]) / (nA + nB)),
                 tolerance = 1e-10)
    expect_equal(f$nobs, nrow(d))
  }
})

test_that("a treated row whose unit and period lie in different sets is not imputed: no number when none can be", {
  set.seed(1)
  A <- expand.grid(t = 1:6, id = 1:50); A$g <- 4
  B <- expand.grid(t = 4:6, id = 51:100); B$g <- 0
  d <- rbind(A, B)
  d$y <- rnorm(100)[d$id] + d$t + (d$g > 0 & d$t >= d$g) * 2 + rnorm(nrow(d))
  expect_error(suppressMessages(did_gardner(d, "y", "id", "t", "g")), "no treated observation can be imputed")
  expect_message(try(did_gardner(d, "y", "id", "t", "g"), silent = TRUE), "2 separate sets")
  expect_error(suppressMessages(did_bjs(d, "y", "id", "t", "g")), "no treated observation can be imputed")
  # with a bridge (never-treated units observed in every period) the sets join and the effect is identified
  C <- expand.grid(t = 1:6, id = 101:130); C$g <- 0
  C$y <- rnorm(30)[C$id - 100] + C$t + rnorm(nrow(C))
  f <- suppressMessages(did_gardner(rbind(d, C), "y", "id", "t", "g"))
  expect_true(is.finite(coef(f)[["ATT"]]))
  expect_equal(diffdiff:::dd_impute_components(c(0L, 0L, 1L), c(0L, 1L, 1L), 2L, 2L)$n, 1L)
  expect_equal(diffdiff:::dd_impute_components(c(0L, 1L), c(0L, 1L), 2L, 2L)$n, 2L)
})
