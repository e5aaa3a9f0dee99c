# dd_simulate_mde() (issue 44): bisection on the effect size over
# dd_simulate_power() with common random numbers. The simulated MDE of the
# two-way fixed-effects estimate on dd_sim_basic panels against dd_power()'s
# analytic one (the t test of the same design; 0.563 for 200 units, one
# pre- and one post-period): within 10% (the Monte Carlo error of the MDE is
# about 3% at 400 draws). Reproducibility, the search path, bad input.

test_that("the simulated MDE matches the analytic one; the search is reproducible and its path monotone", {
  est <- function(d) did_twfe(d, "y", "id", "time", "D")
  an <- dd_power(n = 200, power = 0.8, n_pre = 1, n_post = 1, sd = 1)
  set.seed(11)
  m <- dd_simulate_mde(est, dd_sim_basic, nsim = 400, mc_se = 0.03, tol = 0.03,
                       dgp_args = list(n_units = 200, n_pre = 1, n_post = 1))
  expect_lt(abs(m$mde - an$effect) / an$effect, 0.10)
  expect_true(m$converged)
  expect_true(m$lower <= m$mde && m$mde <= m$upper)
  # common random numbers: the power rises with the effect along the path
  p <- m$path[order(m$path$effect), ]
  expect_false(is.unsorted(p$power))
  expect_equal(length(unique(signif(m$path$sd_estimate, 12))), 1L)
  set.seed(11)
  m2 <- dd_simulate_mde(est, dd_sim_basic, nsim = 400, mc_se = 0.03, tol = 0.03,
                        dgp_args = list(n_units = 200, n_pre = 1, n_post = 1))
  expect_identical(m2$mde, m$mde)
  m3 <- dd_simulate_mde(est, dd_sim_basic, nsim = 50, mc_se = 0.08, tol = 0.2, seed = 5,
                        dgp_args = list(n_units = 60, n_pre = 1, n_post = 1))
  expect_identical(m3$seed, 5)
  expect_output(print(m3), "Simulated minimum detectable effect")
  expect_s3_class(tidy(m3), "data.frame")
  grDevices::pdf(NULL); on.exit(grDevices::dev.off())
  expect_invisible(plot(m3))
})

test_that("dd_simulate_mde: bad input and a broken test", {
  est <- function(d) did_twfe(d, "y", "id", "time", "D")
  expect_error(dd_simulate_mde(est, power = 0.01), "`power` must be one number between `alpha` and 1")
  expect_error(dd_simulate_mde(est, upper = -1), "`upper`")
  expect_error(dd_simulate_mde(est, tol = 2), "`tol`")
  expect_error(dd_simulate_mde(est, seed = "a"), "`seed`")
  # a "test" that always rejects: its size is broken
  always <- function(d) { f <- did_twfe(d, "y", "id", "time", "D"); f$coeftable$p.value[] <- 0; f }
  expect_error(dd_simulate_mde(always, nsim = 20, mc_se = 0.2, dgp_args = list(n_units = 40)), "size is broken")
})
