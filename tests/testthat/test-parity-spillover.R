# did_spillover() against did2s 1.2.1. did2s cannot be installed on R 4.2.2
# (it imports HonestDiD, which needs CVXR, unavailable for this R), so the
# reference numbers in ref-spillover-did2s.csv were computed by did2s itself,
# installed with only its HonestDiD wrappers removed (tools/install-did2s.sh),
# by tools/spillover-reference.R, which also wrote the panel
# (spill_panel.csv) and computed the exposure rings by brute force (every
# pair's haversine distance), not with diffdiff: Butts's two stages are
# did2s with the clean rows as its untreated sample and the treatment and
# ring indicators as the second stage. Estimates to 1e-8, GMM standard
# errors to 1e-6 (relative), as test-parity-gardner.R.

spill_ref <- function(case) {
  r <- utils::read.csv(test_path("ref-spillover-did2s.csv"))
  r <- r[r$case == case, ]
  lab <- c("[0,20)", "[20,40)", "[40,80]")
  r$term <- sub("^D$", "direct", r$term)
  r$term <- sub("^rel::", "event::", r$term)
  for (j in 1:3) {
    r$term <- sub(sprintf("^r%d$", j), paste0("spillover::", lab[j]), r$term)
    r$term <- sub(sprintf("^e%d::", j), paste0("spillover::", lab[j], "::event::"), r$term)
  }
  r
}

spill_check <- function(case, f) {
  r <- spill_ref(case)
  expect_gt(nrow(r), 3)
  m <- match(r$term, f$coeftable$term)
  expect_false(anyNA(m))
  expect_lt(rel_diff(f$coeftable$estimate[m], r$estimate), 1e-8)
  expect_lt(rel_diff(f$coeftable$std.error[m], r$std.error), 1e-6)
}

spill_panel <- function() utils::read.csv(test_path("spill_panel.csv"))

test_that("direct and ring effects and their GMM SEs equal did2s's on the clean-row first stage", {
  d <- spill_panel(); d0 <- d
  f <- did_spillover(d, "y", "id", "time", "first_treat", rings = c(0, 20, 40, 80))
  expect_identical(d, d0)
  spill_check("static", f)
  expect_identical(f$coeftable$term, c("direct", "spillover::[0,20)", "spillover::[20,40)", "spillover::[40,80]"))
  # covariate in the first stage, weights, clustered by state
  f2 <- did_spillover(d, "y", "id", "time", "first_treat", ~ x, rings = c(0, 20, 40, 80), weightsname = "w",
                      cluster = "state")
  spill_check("static_cov_w_state", f2)
})

test_that("the event study's direct and per-ring horizons equal did2s's", {
  d <- spill_panel()
  f <- did_spillover(d, "y", "id", "time", "first_treat", rings = c(0, 20, 40, 80), event_study = TRUE)
  spill_check("event", f)
  # the pooled rows are the static fit's
  s <- did_spillover(d, "y", "id", "time", "first_treat", rings = c(0, 20, 40, 80))
  m <- match(s$coeftable$term, f$coeftable$term)
  expect_equal(f$coeftable$estimate[m], s$coeftable$estimate, tolerance = 1e-12)
  expect_equal(f$coeftable$std.error[m], s$coeftable$std.error, tolerance = 1e-12)
})
