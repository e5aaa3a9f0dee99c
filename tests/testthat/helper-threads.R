# The thread-identity tests (results bitwise identical for 1 and 2 threads)
# pass vacuously when dd_threads(2) cannot get two threads (one core, a CPU
# affinity mask of one, a build without OpenMP): both runs are then serial.
# need_threads() skips such a test, or, with DIFFDIFF_REQUIRE_PARITY=true
# (set by `make test` and CI), fails it, so the comparison can never be
# skipped silently there. Call it just before the first dd_threads(2).

# the number of threads dd_threads(n) gets here; the setting is restored
dd_threads_reach <- function(n = 2L) {
  old <- dd_threads()
  on.exit(dd_threads(old))
  dd_threads(n)
}

# `reach` is an argument only so that the helper itself can be tested
need_threads <- function(n = 2L, reach = dd_threads_reach(n)) {
  if (reach >= n) return(invisible(TRUE))
  msg <- sprintf("dd_threads(%d) gets %d thread(s) here, so a comparison with 1 thread would be vacuous", n, reach)
  if (identical(Sys.getenv("DIFFDIFF_REQUIRE_PARITY"), "true"))
    stop(msg, " (DIFFDIFF_REQUIRE_PARITY=true: thread-identity tests must run)", call. = FALSE)
  testthat::skip(msg)
}
