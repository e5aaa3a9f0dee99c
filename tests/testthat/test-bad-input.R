# Every bad input gets an error naming the argument and the offending value,
# and the caller's data are never modified.
d0 <- sim_panel()

test_that("missing columns and wrong types name the argument and value", {
  d <- d0
  expect_error(did_twfe(d, "nope", "id", "year", "treat"), '`yname` = "nope" is not a column of `data`')
  expect_error(did_twfe(d, "y", "ID", "year", "treat"), '`idname` = "ID" is not a column')
  expect_error(did_twfe(d, "y", "id", "year", "treat", xformla = ~ zz), '`xformla` uses "zz"')
  expect_error(did_twfe(d, "y", "id", "year", "treat", cluster = "cl"), '`cluster` = "cl"')
  expect_error(did_twfe(d, "y", "id", "year", "treat", weightsname = "ww"), '`weightsname` = "ww"')
  expect_error(did_event(d, "y", "id", "year", "gg"), '`gname` = "gg"')
  expect_error(did_2x2(d, "y", "tr", "post"), '`treatname` = "tr"')
  expect_error(did_twfe(list(a = 1), "y", "id", "year", "treat"), "`data` must be a data.frame")
  expect_error(did_twfe(d, 3, "id", "year", "treat"), "`yname` must be a single column name")
  d$ychar <- as.character(d$y)
  expect_error(did_twfe(d, "ychar", "id", "year", "treat"), '`yname` = "ychar" must be a numeric column; it is character')
  d$tchar <- as.character(d$year)
  expect_error(did_event(d, "y", "id", "tchar", "first_treat"), '`tname` = "tchar" must be a numeric column')
})

test_that("NA, NaN and Inf rows are dropped with a message giving the counts", {
  d <- d0
  d$y[1:3] <- c(NA, NaN, Inf)
  d$x1[10] <- -Inf
  expect_message(fit <- did_twfe(d, "y", "id", "year", "treat", xformla = ~ x1),
                 '4 observations removed because of NA/NaN/Inf values \\(3 in `yname` \\("y"\\), 1 in `xformla`\\)')
  expect_equal(nobs(fit), 2996L)
  d$y <- NA_real_
  expect_error(suppressMessages(did_twfe(d, "y", "id", "year", "treat")), "every row of `data`")
})

test_that("panel structure errors", {
  d <- rbind(d0, d0[5, ])
  expect_error(did_twfe(d, "y", "id", "year", "treat"), "unit 1 has more than one row in period 2005")
  d <- d0; d$treat[7] <- 2
  expect_error(did_twfe(d, "y", "id", "year", "treat"), '`dname` = "treat" must be a 0/1 indicator; row 7 has 2')
  d <- d0; d$first_treat[d$id == 4][1] <- 2009
  expect_error(did_event(d, "y", "id", "year", "first_treat"),
               '`gname` = "first_treat" must be constant within each unit; unit 4 has values')
  d <- d0; d$treat <- 1
  expect_error(did_twfe(d, "y", "id", "year", "treat"), "is 1 in every row")
  d$treat <- 0
  expect_error(did_twfe(d, "y", "id", "year", "treat"), "is 0 in every row")
  d <- d0; d$first_treat <- 0
  expect_error(did_event(d, "y", "id", "year", "first_treat"), "every unit as never treated")
  d <- d0[d0$year == 2005, ]
  expect_error(did_twfe(d, "y", "id", "year", "treat"), '`tname` = "year" must have at least two periods')
  d <- d0; d$one <- 1
  expect_error(did_twfe(d, "y", "id", "year", "treat", cluster = "one"), '`cluster` = "one" has a single cluster')
})

test_that("weights: negative is an error, zero is dropped with a message", {
  d <- d0; d$w[12] <- -0.5
  expect_error(did_twfe(d, "y", "id", "year", "treat", weightsname = "w"),
               '`weightsname` = "w" has negative values \\(row 12 has -0.5\\)')
  d <- d0; d$w[1:2] <- 0
  expect_message(fit <- did_twfe(d, "y", "id", "year", "treat", weightsname = "w"), "2 observations removed because of zero weight")
  expect_equal(nobs(fit), 2998L)
})

test_that("2x2 design errors", {
  d <- d0[d0$year %in% c(2004, 2007), ]
  d$tr <- as.integer(d$first_treat > 0); d$post <- as.integer(d$year == 2007)
  d$all1 <- 1
  expect_error(did_2x2(d, "y", "all1", "post"), "is 1 in every row: there is no control group")
  expect_error(did_2x2(d, "y", "tr", "all1"), '`postname` = "all1" takes only the value 1')
  d$tr2 <- d$tr * 3
  expect_error(did_2x2(d, "y", "tr2", "post"), "must be a 0/1 indicator")
})

test_that("argument checks name the argument and the value", {
  d <- d0
  expect_error(did_twfe(d, "y", "id", "year", "treat", alpha = 1.5), "`alpha` must be a number strictly between 0 and 1; got 1.5")
  expect_error(did_twfe(d, "y", "id", "year", "treat", nboot = -1), "`nboot` must be a whole number between 0 and 2147483647; got -1")
  expect_error(did_twfe(d, "y", "id", "year", "treat", nboot = 9, boot_weights = "gauss"), '`boot_weights` must be one of .*got "gauss"')
  expect_error(did_twfe(d, "y", "id", "year", "treat", vcov = "HC4"), '`vcov` must be one of .*got "HC4"')
  expect_error(did_twfe(d, "y", "id", "year", "treat", vcov = "iid", cluster = "state"), '`vcov` = "iid" does not use `cluster`')
  expect_error(did_twfe(d, "y", "id", "year", "treat", fe_tol = 0), "`fe_tol` must be a positive number; got 0")
  expect_error(did_twfe(d, "y", "id", "year", "treat", xformla = y ~ x1), "`xformla` must be a one-sided formula")
  expect_error(did_event(d, "y", "id", "year", "first_treat", ref = 0.5), "`ref` must be whole numbers")
  expect_error(did_event(d, "y", "id", "year", "first_treat", ref = 50), "`ref` = 50 is not a relative period")
  expect_error(did_event(d, "y", "id", "year", "first_treat", window = c(3, -3)), "`window` must be c\\(lo, hi\\)")
  expect_error(did_event(d, "y", "id", "year", "first_treat", window = c(20, 30)), "`window` = c\\(20, 30\\) lies outside")
  expect_error(did_twfe(d, "y", "id", "year", "treat", cluster = c("id", "year", "state")), "one or two column names")
})

test_that("the caller's data are never modified (data.frame and data.table)", {
  for (d in list(d0, data.table::as.data.table(d0))) {
    before <- data.table::copy(d)
    d$y[1] <- NA
    before$y[1] <- NA
    suppressMessages({
      did_twfe(d, "y", "id", "year", "treat", xformla = ~ x1, weightsname = "w")
      did_event(d, "y", "id", "year", "first_treat", window = c(-2, 2))
      try(did_twfe(d, "y", "id", "year", "nope"), silent = TRUE)
    })
    expect_identical(d, before)
  }
})
