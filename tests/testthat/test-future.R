# Resampling loops on the caller's future plan (issue 38, part 1): the loops
# of dd_simulate_power(), did_trop() (its cells and its bootstrap),
# placebo_test() (its draws; did_trop's draws resample), did_sdid()'s placebo,
# bootstrap and jackknife replications (one cohort and staggered) and the
# replicate-weight refits of a survey design with fixed effects run on the
# plan's workers with the sequential loop's numbers bit for bit, for
# plan(sequential), plan(multisession, workers = 2) and a PSOCK
# plan(cluster) on localhost; the caller's random-number state is left as the
# sequential loop leaves it; which path ran is asserted for every workload.
# Ctrl-C during a loop on a multisession plan stops it within 1 s and the
# plan's next future runs at once (the busy workers are replaced).

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

prop99 <- function() {
  p <- read.csv(system.file("extdata", "california_prop99.csv", package = "diffdiff"), sep = ";")
  names(p) <- c("state", "year", "packs", "treated")
  p
}

# each workload returns what must not depend on the plan, and the caller's
# next random number
workloads <- list(
  power = sim_power,
  trop = trop_boot,
  placebo_perm = function() {
    d <- sim_panel(); d <- d[d$id <= 60, ]
    f <- did_twfe(d, "y", "id", "year", "treat")
    set.seed(2)
    r <- placebo_test(f, "permutation", nperm = 12)
    list(draws = r$draws, p = r$p.value, after = stats::runif(1))
  },
  placebo_trop = function() {
    set.seed(5)
    d <- dd_sim_factor(n_units = 14, n_periods = 6, n_treated = 3, first_treat = 5)
    f <- did_trop(d, "y", "id", "time", "D", lambda_time = 0.1, lambda_unit = 0.1, lambda_nn = 0.1, nboot = 6)
    set.seed(3)
    r <- placebo_test(f, "group", ndraws = 4, n_treated = 2)
    list(draws = r$draws, after = stats::runif(1))
  },
  sdid = function() {
    p <- prop99()
    set.seed(4)
    a <- did_sdid(p, "packs", "state", "year", "treated", se = "placebo", nboot = 30)
    d <- sim_panel(); d <- d[d$first_treat %in% c(0, 2006) & d$id <= 80, ]
    d$d <- as.integer(d$first_treat > 0 & d$year >= d$first_treat)
    b <- did_sdid(d, "y", "id", "year", "d", se = "bootstrap", nboot = 30)
    j <- did_sdid(d, "y", "id", "year", "d", se = "jackknife", xformla = ~ x1)
    list(a = a$replicates, b = b$replicates, j = j$replicates, tab = rbind(a$coeftable, b$coeftable, j$coeftable),
         after = stats::runif(1))
  },
  sdid_staggered = function() {
    d <- sim_panel(); d <- d[d$id <= 90, ]
    set.seed(8)
    f <- did_sdid(d, "y", "id", "year", "treat", se = "bootstrap", nboot = 25, staggered = TRUE)
    list(tab = f$coeftable, vcov = f$vcov, after = stats::runif(1))
  },
  survey_refits = function() {
    if (!has_peer("survey")) return(NULL)
    d <- sim_panel(); d <- d[d$id <= 40, ]
    j <- survey::as.svrepdesign(survey::svydesign(ids = ~id, weights = ~w, data = d), type = "JK1")
    f <- did_twfe(d, "y", "id", "year", "treat", survey = j)
    list(tab = f$coeftable, vcov = f$vcov)
  }
)

test_that("every resampling loop gives the sequential numbers under every future plan", {
  oplan <- future::plan()
  on.exit(future::plan(oplan), add = TRUE)
  future::plan(future::sequential)
  n0 <- diffdiff:::dd_futures$n
  ref <- lapply(workloads, function(w) w())
  expect_identical(diffdiff:::dd_futures$n, n0)                 # sequential: the plain loops ran
  plans <- list(multisession = function() future::plan(future::multisession, workers = 2),
                cluster = function() future::plan(future::cluster, workers = rep("localhost", 2)))
  for (nm in names(plans)) {
    plans[[nm]]()
    for (w in names(workloads)) {
      n1 <- diffdiff:::dd_futures$n
      r <- workloads[[w]]()
      expect_gt(diffdiff:::dd_futures$n, n1, label = sprintf("loops of %s run through the %s plan", w, nm))
      expect_identical(r, ref[[w]], label = sprintf("%s under the %s plan", w, nm))
    }
    future::plan(future::sequential)
  }
})

test_that("the sequential workloads give numbers (the comparison is not between empty results)", {
  r <- workloads$sdid()
  expect_length(r$a, 30L); expect_length(r$b, 30L); expect_true(all(is.finite(c(r$a, r$b, r$j))))
  p <- workloads$placebo_trop()
  expect_equal(nrow(p$draws), 4L); expect_true(all(is.finite(p$draws$estimate)))
})

test_that("an error in a worker is raised in the caller", {
  oplan <- future::plan()
  on.exit(future::plan(oplan), add = TRUE)
  future::plan(future::multisession, workers = 2)
  expect_error(diffdiff:::dd_lapply(1:3, function(i) if (i == 2) stop("boom in task 2") else i), "boom in task 2")
})

test_that("Ctrl-C stops a loop on a multisession plan within 1 s, and the plan's next future runs at once", {
  skip_on_os("windows")
  skip_if_not_installed("callr")
  skip_if(identical(Sys.getenv("DIFFDIFF_SKIP_INTERRUPT"), "true"))
  child <- function() {
    suppressMessages(library(diffdiff))
    future::plan(future::multisession, workers = 2)
    invisible(future.apply::future_lapply(1:2, function(i) i))        # the workers are up
    set.seed(1)
    cat("START\n"); flush(stdout())
    res <- tryCatch({
      dd_simulate_power(function(d) { Sys.sleep(0.3); did_twfe(d, "y", "id", "time", "D") }, dd_sim_basic,
                        effect_sizes = 0, nsim = 80, mc_se = 0.3, dgp_args = list(n_units = 30, n_pre = 2, n_post = 2))
      "COMPLETED"
    }, interrupt = function(e) sprintf("STOPPED %.6f", as.numeric(Sys.time())))
    cat(res, "\n"); flush(stdout())
    t0 <- Sys.time()
    r <- future.apply::future_lapply(1:4, function(i) i^2)
    cat(sprintf("AFTER %s %.3f\n", paste(unlist(r), collapse = ","), as.numeric(Sys.time() - t0, units = "secs")))
    flush(stdout())
  }
  p <- callr::r_bg(child, stdout = "|", stderr = "|", env = callr::rcmd_safe_env())
  out <- character()
  t_end <- Sys.time() + 120
  while (!any(out == "START") && p$is_alive() && Sys.time() < t_end) {
    p$poll_io(200)
    out <- c(out, p$read_output_lines())
  }
  expect_true(any(out == "START"), label = paste("the child started:", paste(p$read_error_lines(), collapse = " ")))
  Sys.sleep(2)
  t_int <- as.numeric(Sys.time())
  p$interrupt()
  p$wait(60000)
  if (p$is_alive()) p$kill()
  out <- c(out, p$read_all_output_lines(), p$read_all_error_lines())
  st <- grep("^STOPPED", out, value = TRUE)
  lag <- if (length(st)) as.numeric(sub("^STOPPED ([0-9.]+).*", "\\1", st[1])) - t_int else NA_real_
  expect_true(length(st) == 1L && lag <= 1, label = sprintf("stopped within 1 s of Ctrl-C (lag %s; output %s)",
                                                           format(lag, digits = 3), paste(out, collapse = " | ")))
  after <- grep("^AFTER", out, value = TRUE)
  expect_length(after, 1L)
  expect_match(after[1], "^AFTER 1,4,9,16 ")
  # the 80 draws of 0.3 s on 2 workers take 12 s; waiting for the busy
  # workers would take most of that, fresh workers start in about a second
  expect_lt(as.numeric(sub("^AFTER [0-9,]+ ", "", after[1])), 5)
})
