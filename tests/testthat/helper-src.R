# The package's C sources, for the tests that read them: in the source tree
# (tests/testthat -> ../../src) or, under R CMD check, in the unpacked
# tarball (diffdiff.Rcheck/tests/testthat -> ../../00_pkg_src/diffdiff/src).
# Not found: skip, or fail when DIFFDIFF_REQUIRE_PARITY=true (make test, CI).
src_dir <- function() {
  for (p in c(file.path("..", "..", "src"), file.path("..", "..", "00_pkg_src", "diffdiff", "src")))
    if (file.exists(file.path(p, "diffdiff.h"))) return(p)
  if (identical(Sys.getenv("DIFFDIFF_REQUIRE_PARITY"), "true")) stop("the C sources are not found")
  testthat::skip("the C sources are not available")
}

# The source tree's bench/scenarios/ (not in the built package): from
# DIFFDIFF_SRC_DIR (set by `make test`) or relative to tests/testthat. Not
# found: skip, or fail when DIFFDIFF_REQUIRE_PARITY=true.
scenario_dir <- function() {
  for (p in c(file.path(Sys.getenv("DIFFDIFF_SRC_DIR"), "bench", "scenarios"), file.path("..", "..", "bench", "scenarios")))
    if (nzchar(p) && file.exists(file.path(p, "harness.R"))) return(normalizePath(p))
  if (identical(Sys.getenv("DIFFDIFF_REQUIRE_PARITY"), "true")) stop("bench/scenarios/ is not found (DIFFDIFF_SRC_DIR)")
  testthat::skip("bench/scenarios/ is not available (set DIFFDIFF_SRC_DIR to the source tree)")
}

# The source tree's root (for its tools/, not in the built package): from
# DIFFDIFF_SRC_DIR (set by `make test`) or relative to tests/testthat; `need`
# is a file it must hold. Not found: skip, or fail when
# DIFFDIFF_REQUIRE_PARITY=true.
source_root <- function(need) {
  for (p in c(Sys.getenv("DIFFDIFF_SRC_DIR"), file.path("..", "..")))
    if (nzchar(p) && file.exists(file.path(p, need))) return(normalizePath(p))
  if (identical(Sys.getenv("DIFFDIFF_REQUIRE_PARITY"), "true")) stop(sprintf("%s is not found (DIFFDIFF_SRC_DIR)", need))
  testthat::skip(sprintf("%s is not available (set DIFFDIFF_SRC_DIR to the source tree)", need))
}
