# did_sdid(): every bad input named in issue #4 gets an error naming the
# argument and the value.
base <- function() sim_sdid_panel(N0 = 8, N1 = 2, T0 = 5, T1 = 3)
run <- function(d, ...) did_sdid(d, "y", "unit", "time", "treat", ...)

test_that("design errors", {
  d <- base()
  s <- d; s$treat[s$unit == "u10" & s$time == 2006] <- 0
  expect_error(run(s), "not a block design.*2006, 2007.*staggered = TRUE")
  s <- d; s$treat[s$unit %in% c("u09", "u10")] <- 1
  expect_error(run(s), "no pre-treatment periods")
  s <- d; s$treat[s$unit %in% sprintf("u%02d", 1:8)] <- s$treat[s$unit == "u09"][1]
  s$treat <- ifelse(s$time > 2005, 1, 0)
  expect_error(run(s), "no control units")
  s <- d[d$unit %in% c("u01", "u09", "u10"), ]
  expect_error(run(s), "single control unit \\(\"u01\"\\)")
  s <- d[d$unit %in% c("u01", "u02", "u09", "u10"), ]
  expect_error(run(s, se = "placebo"), "more control units than treated units \\(2 controls, 2 treated\\).*bootstrap")
  expect_error(run(d[-5, ]), "unbalanced: unit \"u05\" has no row for period 2001")
  s <- d; s$y[7] <- NA
  expect_error(run(s), "`yname` = \"y\" has 1 missing or non-finite value\\(s\\) \\(first in row 7\\)")
  s <- d; s$treat[3] <- 2
  expect_error(run(s), "`dname` = \"treat\" must be 0/1; row 3 has 2")
  s <- d; s$treat[s$unit == "u10" & s$time == 2008] <- 0
  expect_error(run(s), "switches off again for unit \"u10\"")
  s <- d; s$treat <- 0
  expect_error(run(s), "no treated units")
  s <- rbind(d, d[1, ])
  expect_error(run(s), "identify rows uniquely")
  s <- d[d$unit != "u10", ]
  expect_error(run(s, se = "bootstrap"), "at least two treated units \\(there is 1\\).*placebo")
  s <- d; s$treat <- ifelse(s$unit %in% c("u09", "u10") & s$time >= 2002, 1, 0)
  expect_error(run(s), "noise level .* 1 pre-period")
  expect_silent(run(s, method = "did", se = "none"))
})

test_that("argument errors name the argument and the value", {
  d <- base()
  expect_error(run(d, method = "synth"), "`method` must be one of .*\"synth\"")
  expect_error(run(d, se = "boot"), "`se` must be one of .*\"boot\"")
  expect_error(run(d, nboot = 1), "`nboot` must be a whole number between 2 and 2147483647; got 1")
  expect_error(run(d, zeta_omega = -1), "`zeta_omega` must be NULL or a number >= 0; got -1")
  expect_error(run(d, max_iter = 0), "`max_iter` must be a whole number between 1 and 2147483647; got 0")
  expect_error(run(d, sparsify = NA), "`sparsify` must be TRUE or FALSE; got NA")
  expect_error(did_sdid(d, "y", "unit", "time", "nope"), "`dname`.*nope")
  expect_error(run(d, xformla = ~ zz), "`xformla` uses \"zz\"")
  f <- run(d, se = "none")
  expect_error(sdid_weights(f, mass = 2), "`mass` must be a number in \\(0, 1\\]; got 2")
  expect_error(sdid_diagnostics(f, zeta_grid = -1), "`zeta_grid` must be non-negative")
  expect_error(sdid_weights(list()), "`x` must be a did_sdid\\(\\) fit")
})
