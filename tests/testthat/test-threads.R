# Results are bitwise identical for 1 and 2 threads (DESIGN: fixed tasks,
# combined in a fixed order). throttle = 1 forces the parallel path even on
# these small inputs.
test_that("dd_threads gets and sets the thread count", {
  old <- dd_threads()
  on.exit(dd_threads(old, throttle = 65536))
  expect_true(old >= 1)
  dd_threads(1)
  expect_equal(dd_threads(), 1L)
  expect_error(dd_threads(0), "`n` must be a positive whole number; got 0")
  expect_error(dd_threads("a"), "`n`")
  expect_error(dd_threads(1, throttle = -1), "`throttle`")
})

test_that("FE absorption, variance and estimates are identical for 1 and 2 threads", {
  d <- sim_unbalanced(n_units = 400, n_t = 15)
  run <- function() list(
    twfe = did_twfe(d, "y", "id", "t", "d", xformla = ~ x1 + x2, fe = "firm", weightsname = "w",
                    cluster = c("state", "t")),
    dm = .Call(diffdiff:::C_demean, d$y, cbind(d$x1, d$x2),
               list(match(d$id, unique(d$id)) - 1L, match(d$t, unique(d$t)) - 1L,
                    match(d$firm, unique(d$firm)) - 1L),
               c(length(unique(d$id)), length(unique(d$t)), length(unique(d$firm))),
               d$w, 1e-10, 10000L))
  old <- dd_threads()
  on.exit(dd_threads(old, throttle = 65536))
  dd_threads(1); a <- run()
  dd_threads(2, throttle = 1); b <- run()
  expect_identical(a$dm, b$dm)
  expect_identical(a$twfe$coeftable, b$twfe$coeftable)
  expect_identical(a$twfe$vcov, b$twfe$vcov)
})
