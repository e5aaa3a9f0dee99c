# Results are bitwise identical for 1 and 2 threads (DESIGN: fixed tasks,
# combined in a fixed order). throttle = 1 forces the parallel path even on
# these small inputs.
test_that("dd_threads gets and sets the thread count", {
  old <- dd_threads()
  on.exit(dd_threads(old, throttle = 65536))
  expect_true(old >= 1)
  dd_threads(1)
  expect_equal(dd_threads(), 1L)
  expect_error(dd_threads(0), "`n` must be a whole number between 1 and 2147483647; got 0")
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
  need_threads(2)
  dd_threads(2, throttle = 1); b <- run()
  expect_identical(a$dm, b$dm)
  expect_identical(a$twfe$coeftable, b$twfe$coeftable)
  expect_identical(a$twfe$vcov, b$twfe$vcov)
})

# Forked children (parallel::mclapply) after a threaded call: GNU OpenMP's
# thread pool does not survive fork(), so a child that entered a parallel
# region could hang. The pthread_atfork handler makes children serial.
test_that("mclapply over did_cs fits works after a threaded call", {
  skip_on_os("windows")
  need_threads(2)   # "after a threaded call" needs a second thread
  d <- sim_cs_panel(n = 600, T = 8)
  old <- dd_threads()
  on.exit(dd_threads(old, throttle = 65536))
  dd_threads(2, throttle = 1)
  set.seed(3)
  ref <- did_cs(d, "y", "id", "t", "g", xformla = ~ x1, nboot = 200)   # threaded in the parent
  job <- parallel::mcparallel(parallel::mclapply(1:2, function(i) {
    set.seed(3)
    f <- did_cs(d, "y", "id", "t", "g", xformla = ~ x1, nboot = 200)
    list(threads = dd_threads(), coef = coef(f), se = f$coeftable$std.error)
  }, mc.cores = 2))
  res <- parallel::mccollect(job, wait = FALSE, timeout = 120)
  if (is.null(res)) { tools::pskill(job$pid); parallel::mccollect(job, wait = FALSE) }
  expect_false(is.null(res))                        # no hang
  out <- res[[1]]
  expect_length(out, 2)
  for (o in out) {
    expect_identical(o$threads, 1L)                 # children run single-threaded
    expect_identical(o$coef, coef(ref))             # and give the parent's numbers
    expect_identical(o$se, ref$coeftable$std.error)
  }
  expect_identical(dd_threads(), 2L)                # the parent keeps its setting
})

# The default thread count respects OMP_THREAD_LIMIT and OMP_NUM_THREADS, also
# under R CMD check (_R_CHECK_LIMIT_CORES_ set, as by --as-cran), where it is
# never more than 2. Guards against the regression where the R CMD check rule
# replaced the OpenMP limits by 2 instead of capping them. Each case runs in a
# fresh R process, so the variables are set before diffdiff loads and this
# session's setting is untouched.
test_that("the default thread count respects OMP_THREAD_LIMIT, OMP_NUM_THREADS and R CMD check", {
  skip_if_not_installed("callr")
  default_in_child <- function(vars) callr::r(function(vars) {
    Sys.unsetenv(c("OMP_THREAD_LIMIT", "OMP_NUM_THREADS", "_R_CHECK_LIMIT_CORES_"))
    if (length(vars)) do.call(Sys.setenv, as.list(vars))
    c(threads = diffdiff::dd_threads(), procs = .Call(diffdiff:::C_num_procs))
  }, list(vars = vars), libpath = .libPaths())
  chk <- c("_R_CHECK_LIMIT_CORES_" = "TRUE")
  expect_identical(default_in_child(c(chk, OMP_NUM_THREADS = "1"))[["threads"]], 1L)
  expect_identical(default_in_child(c(chk, OMP_THREAD_LIMIT = "1"))[["threads"]], 1L)
  expect_identical(default_in_child(c(chk, OMP_THREAD_LIMIT = "3", OMP_NUM_THREADS = "1"))[["threads"]], 1L)
  expect_identical(default_in_child(c(chk, OMP_THREAD_LIMIT = "1", OMP_NUM_THREADS = "3"))[["threads"]], 1L)
  expect_identical(default_in_child(c(OMP_NUM_THREADS = "1"))[["threads"]], 1L)
  expect_identical(default_in_child(c(OMP_THREAD_LIMIT = "1"))[["threads"]], 1L)
  # a nested list "outer,inner": the outer level counts
  expect_identical(default_in_child(c(chk, OMP_NUM_THREADS = "1,4"))[["threads"]], 1L)
  # under R CMD check: 2 (or the cores, if fewer), whatever the limits above 2
  r <- default_in_child(c(chk, OMP_NUM_THREADS = "64", OMP_THREAD_LIMIT = "64"))
  expect_identical(r[["threads"]], min(2L, r[["procs"]]))
  r <- default_in_child(chk)
  expect_identical(r[["threads"]], min(2L, r[["procs"]]))
  # no limit set: half the cores, at least one
  r <- default_in_child(character())
  expect_identical(r[["threads"]], max(1L, r[["procs"]] %/% 2L))
})

# need_threads() (helper-threads.R) guards the thread-identity tests against
# passing vacuously: with fewer than two threads within reach (one core, an
# affinity mask of one CPU, no OpenMP) dd_threads(2) gives 1, and "identical
# for 1 and 2 threads" compared two serial runs. Such tests now skip, and
# fail when DIFFDIFF_REQUIRE_PARITY=true.
test_that("thread-identity tests skip, or fail under DIFFDIFF_REQUIRE_PARITY, without two threads", {
  old_env <- Sys.getenv("DIFFDIFF_REQUIRE_PARITY", unset = NA)
  on.exit(if (is.na(old_env)) Sys.unsetenv("DIFFDIFF_REQUIRE_PARITY")
          else Sys.setenv(DIFFDIFF_REQUIRE_PARITY = old_env))
  old <- dd_threads()
  Sys.unsetenv("DIFFDIFF_REQUIRE_PARITY")
  expect_condition(need_threads(2, reach = 1L), "vacuous", class = "skip")
  expect_true(need_threads(2, reach = 2L))
  Sys.setenv(DIFFDIFF_REQUIRE_PARITY = "true")
  expect_error(need_threads(2, reach = 1L), "dd_threads\\(2\\) gets 1 thread.*DIFFDIFF_REQUIRE_PARITY=true")
  expect_true(need_threads(2, reach = 2L))
  expect_identical(dd_threads_reach(1L), 1L)
  expect_identical(dd_threads(), old)                 # the probe leaves the setting as it was
  # on one CPU (Linux affinity mask) two threads are out of reach: skip, or fail under the variable
  skip_on_os(c("windows", "mac", "solaris"))
  skip_if(!nzchar(Sys.which("taskset")) ||
            system2("taskset", c("-c", "0", "true"), stdout = FALSE, stderr = FALSE) != 0L,
          "taskset cannot bind to CPU 0 here")
  one_cpu <- function(require) {
    code <- sprintf(paste0('Sys.setenv(DIFFDIFF_REQUIRE_PARITY = "%s"); source("%s"); ',
                           'cat(dd_threads_reach(2L), tryCatch({need_threads(2); "ran"}, ',
                           'skip = function(e) "skipped", error = function(e) "failed"))'),
                    require, normalizePath(test_path("helper-threads.R"), winslash = "/"))
    lib <- paste(.libPaths(), collapse = .Platform$path.sep)
    system2("taskset", c("-c", "0", file.path(R.home("bin"), "Rscript"), "-e",
                         shQuote(paste0("library(diffdiff); library(testthat); ", code))),
            stdout = TRUE, env = paste0("R_LIBS=", shQuote(lib)))
  }
  expect_identical(one_cpu("false"), "1 skipped")
  expect_identical(one_cpu("true"), "1 failed")
})
