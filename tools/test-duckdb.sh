#!/usr/bin/env bash
# `make test-duckdb`: the DuckDB tests of the database back end
# (tests/testthat/test-dbi-duckdb.R, with the SQLite ones of test-dbi.R),
# which CI skips because duckdb compiles from source for over an hour on 2
# cores. Installs the test dependencies and duckdb once (idempotent), the
# package into a private library, and runs the two files with duckdb
# required (a skip counts as a failure here). Last line: N passed, N failed.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
bash "$here/tools/install-deps.sh"
bash "$here/tools/install-duckdb.sh"
lib="$(mktemp -d)"
trap 'rm -rf "$lib"' EXIT
R CMD INSTALL --no-multiarch -l "$lib" "$here" > "$lib/install.log" 2>&1 || { cat "$lib/install.log"; exit 1; }
R_LIBS="$lib${R_LIBS:+:$R_LIBS}" DIFFDIFF_REQUIRE_PARITY=true Rscript --no-save --no-restore --no-init-file -e '
suppressMessages(library(testthat)); library(diffdiff)
files <- file.path(commandArgs(TRUE)[1], "tests", "testthat", c("test-dbi-duckdb.R", "test-dbi.R"))
res <- do.call(rbind, lapply(files, function(f)
  as.data.frame(test_file(f, package = "diffdiff", load_package = "installed", reporter = "summary"))))
n_fail <- sum(res$failed) + sum(res$error) + sum(res$skipped)   # a skip is a failure here
cat(sprintf("%d passed, %d failed\n", sum(res$passed), n_fail))
if (n_fail > 0) quit(status = 1)' "$here"
