# The number of tests of a testthat run (the value of test_dir() or
# test_file()) that skipped for a missing peer: need_peer()'s skips, whose
# message starts "parity: " (tests/testthat/helper-parity.R). For
# tools/sanitize.sh and tools/valgrind.sh when they run without
# DIFFDIFF_REQUIRE_PARITY (tools/parity-env.sh).
parity_skips <- function(raw) {
  msg <- unlist(lapply(raw, function(t) vapply(t$results, function(e)
    if (inherits(e, "expectation_skip")) conditionMessage(e) else "", "")))
  sum(grepl("parity: ", msg, fixed = TRUE))
}
