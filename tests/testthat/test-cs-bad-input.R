# did_cs: bad input gets an error naming the argument and the value; did's
# warnings where did warns; the caller's data are untouched.
test_that("did_cs input errors", {
  d0 <- sim_cs_panel(n = 200)
  d <- d0; d$g[d$id == 3][2] <- 6
  expect_error(did_cs(d, "y", "id", "t", "g", nboot = 0),
               '`gname` = "g" must be constant within each unit; unit 3 has values')
  d <- d0; d$g[d$g == 4] <- 4.5
  expect_error(did_cs(d, "y", "id", "t", "g", nboot = 0), "has value 4.5, which is not a period")
  d <- d0[d0$g > 0, ]
  expect_error(did_cs(d, "y", "id", "t", "g", nboot = 0), 'use control_group = "notyettreated"')
  expect_silent(suppressWarnings(did_cs(d, "y", "id", "t", "g", nboot = 0, control_group = "notyettreated")))
  d <- rbind(d0, d0[1, ])
  expect_error(did_cs(d, "y", "id", "t", "g", nboot = 0), "unit 1 has more than one row in period 1")
  expect_error(did_cs(d0, "y", "id", "t", "g", est_method = "ols"), '`est_method` must be one of .*got "ols"')
  expect_error(did_cs(d0, "y", "id", "t", "g", control_group = "last"), '`control_group` must be one of "nevertreated", "notyettreated"; got "last"')
  expect_error(did_cs(d0, "y", "id", "t", "g", anticipation = -1), "`anticipation` must be a whole number between 0 and 2147483647; got -1")
  expect_error(did_cs(d0, "y", "id", "t", "g", base_period = "fixed"), "`base_period`")
  expect_error(did_cs(d0, "y", "id", "t", "gg"), '`gname` = "gg" is not a column')
  expect_error(did_cs(d0, "y", "id", "t", "g", xformla = ~ zz), '`xformla` uses "zz"')
  d <- d0; d$cl <- d$t
  expect_error(did_cs(d, "y", "id", "t", "g", cluster = "cl", nboot = 0),
               '`cluster` = "cl" must be constant within each unit')
  f <- did_cs(d0, "y", "id", "t", "g", nboot = 0)
  expect_error(aggregate(f, type = "events"), '`type` must be one of .*got "events"')
  expect_error(aggregate(f, type = "dynamic", balance_e = -1), "`balance_e`")
})

test_that("did's warnings: already-treated units, unbalanced panels, trimming, no comparison units", {
  d0 <- sim_cs_panel(n = 200)
  d <- d0; d$g[d$id %in% 1:5] <- 1
  expect_warning(did_cs(d, "y", "id", "t", "g", nboot = 0), "Dropped 5 units that were already treated")
  d <- d0[-c(1, 50, 99), ]
  expect_warning(did_cs(d, "y", "id", "t", "g", nboot = 0), "units are missing in some periods")
  # a covariate that nearly separates treatment: scores hit the trimming bound
  d <- d0; d$x3 <- ifelse(d$g > 0, 1, 0) + rnorm(nrow(d), 0, 0.05)[d$id]
  expect_warning(did_cs(d, "y", "id", "t", "g", xformla = ~ x3, nboot = 0, est_method = "ipw"),
                 "overlap|trimming")
  # not-yet-treated comparison: the last cohort's late cells have no comparison units
  d <- d0[d0$g > 0, ]
  expect_warning(f <- did_cs(d, "y", "id", "t", "g", nboot = 0, control_group = "notyettreated"), NA)
})

test_that("did_cs never modifies the caller's data", {
  d <- data.table::as.data.table(sim_cs_panel(n = 150))
  before <- data.table::copy(d)
  suppressWarnings(did_cs(d, "y", "id", "t", "g", xformla = ~ x1, nboot = 0, weightsname = "w"))
  expect_identical(d, before)
})
