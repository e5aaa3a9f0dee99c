# Resampling loops on the caller's future plan (issue 38, part 1): the loops
# of dd_simulate_power() and did_trop() (its cells and its bootstrap) run on
# the plan's workers with the sequential loop's numbers bit for bit, for
# plan(sequential), plan(multisession, workers = 2) and a PSOCK
# plan(cluster) on localhost; the caller's random-number state is left as the
# sequential loop leaves it; which path ran is asserted.

skip_if_not_installed("future")
skip_if_not_installed("future.apply")

sim_power <- function() {
  set.seed(11)
  ps <- dd_simulate_power(function(d) did_twfe(d, "y", "id", "time", "D"), dd_sim_basic, effect_sizes = c(0, 0.5),
                          nsim = 6, mc_se = 0.3, dgp_args = list(n_units = 30, n_pre = 2, n_post = 2))
  list(ps = ps, after = stats::runif(1))
}

trop_boot <- function() {
  set.seed(5)
  d <- dd_sim_factor(n_units = 16, n_periods = 6, n_treated = 3, first_treat = 5)
  set.seed(6)
  f <- did_trop(d, "y", "id", "time", "D", lambda_time = 0.1, lambda_unit = 0.1, lambda_nn = 0.1, nboot = 8)
  list(tab = f$coeftable, reps = f$replicates, after = stats::runif(1))
}

test_that("dd_simulate_power and did_trop give the sequential numbers under every future plan", {
  oplan <- future::plan()
  on.exit(future::plan(oplan), add = TRUE)
  future::plan(future::sequential)
  n0 <- diffdiff:::dd_futures$n
  ref_p <- sim_power(); ref_t <- trop_boot()
  expect_identical(diffdiff:::dd_futures$n, n0)                 # sequential: the plain loop ran
  plans <- list(multisession = function() future::plan(future::multisession, workers = 2),
                cluster = function() future::plan(future::cluster, workers = rep("localhost", 2)))
  for (nm in names(plans)) {
    plans[[nm]]()
    n1 <- diffdiff:::dd_futures$n
    p <- sim_power(); t <- trop_boot()
    expect_gt(diffdiff:::dd_futures$n, n1)                      # the loops ran through the plan
    expect_identical(p$ps, ref_p$ps, label = paste("dd_simulate_power under", nm))
    expect_identical(p$after, ref_p$after, label = paste("the caller's stream after the loop,", nm))
    expect_identical(t$tab, ref_t$tab, label = paste("did_trop under", nm))
    expect_identical(t$reps, ref_t$reps, label = paste("did_trop replicates under", nm))
    expect_identical(t$after, ref_t$after)
    future::plan(future::sequential)
  }
})

test_that("an error in a worker is raised in the caller", {
  oplan <- future::plan()
  on.exit(future::plan(oplan), add = TRUE)
  future::plan(future::multisession, workers = 2)
  expect_error(diffdiff:::dd_lapply(1:3, function(i) if (i == 2) stop("boom in task 2") else i), "boom in task 2")
})
