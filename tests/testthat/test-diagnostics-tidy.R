# tidy(), glance() and as.data.frame() of bacon_decomp, honest_did and
# pretrends_power: a `term` column, one glance row, consistent with the
# objects' own fields.

test_that("bacon_decomp: tidy rows are the 2x2 comparisons; glance the TWFE coefficient", {
  d <- sim_panel()
  b <- bacon_decomp(d, "y", "id", "year", gname = "first_treat")
  t <- tidy(b)
  expect_identical(nrow(t), nrow(b$two_by_twos))
  expect_true(all(c("term", "estimate", "weight", "type") %in% names(t)))
  expect_equal(sum(t$weight * t$estimate), b$beta_twfe, tolerance = 1e-12)
  expect_match(t$term[is.infinite(t$untreated)][1], " vs never$")
  g <- glance(b)
  expect_identical(nrow(g), 1L); expect_equal(g$beta_twfe, b$beta_twfe); expect_equal(g$nobs, nrow(d))
  expect_identical(as.data.frame(b), b$two_by_twos)
})

test_that("honest_did: tidy has the original interval and one row per M; glance the breakdown", {
  d <- sim_panel()
  e <- did_event(d, "y", "id", "year", "first_treat")
  h <- honest_did(e, type = "SD", M = c(0, 0.01, 0.02))
  t <- tidy(h)
  expect_identical(t$term, c("original", "M = 0", "M = 0.01", "M = 0.02"))
  expect_equal(t$conf.low[-1], h$results$lb); expect_equal(t$conf.high[-1], h$results$ub)
  expect_equal(c(t$conf.low[1], t$conf.high[1]), unname(h$original))
  g <- glance(h)
  expect_identical(nrow(g), 1L); expect_identical(g$type, "SD"); expect_equal(g$estimate, h$estimate)
})

test_that("pretrends_power: tidy is the event-time table; glance the power and slope", {
  d <- sim_panel()
  e <- did_event(d, "y", "id", "year", "first_treat")
  p <- pretrends_power(e, power = 0.5)
  t <- tidy(p)
  expect_identical(t$term, e$event_study$term)
  expect_equal(t$estimate, unname(e$event_study$estimate))
  g <- glance(p)
  expect_identical(nrow(g), 1L); expect_equal(g$power, 0.5, tolerance = 1e-4); expect_equal(g$slope, p$slope)
})
