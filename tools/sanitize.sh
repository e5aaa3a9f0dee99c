#!/usr/bin/env bash
# `make sanitize`: builds diffdiff with AddressSanitizer and UBSan (gcc) into a
# private library and runs the test suite against it. R itself is not
# instrumented, so libasan is preloaded and leak detection is off (R keeps
# memory until exit by design). Any sanitizer report fails the run.
set -u
cd "$(dirname "$0")/.."
root=$(pwd)
work="$root/check/sanitize"
echo "sanitize: building with -fsanitize=address,undefined"
bash tools/build-private.sh "$work" 'CC = gcc\nCFLAGS = -g -O1 -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined\nLDFLAGS = -fsanitize=address,undefined' || exit 1
grep -q -- "-fsanitize=address" "$work/install.log" || { echo "sanitize: flags not applied"; exit 1; }
asan=$(gcc -print-file-name=libasan.so)
ubsan=$(gcc -print-file-name=libubsan.so)
parity_label=sanitize
. tools/parity-env.sh
echo "sanitize: running tests/testthat with $asan preloaded"
LD_PRELOAD="$asan:$ubsan" \
ASAN_OPTIONS="detect_leaks=0:allocator_may_return_null=1:abort_on_error=1" \
UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1" \
R_LIBS="$work/lib" \
Rscript --vanilla -e '
  .libPaths(c(Sys.getenv("R_LIBS"), .libPaths()))
  library(testthat); library(diffdiff, lib.loc = Sys.getenv("R_LIBS"))
  stopifnot(grepl("sanitize", find.package("diffdiff")))
  raw <- test_dir("tests/testthat", reporter = "summary", stop_on_failure = FALSE, load_package = "none")
  res <- as.data.frame(raw)
  source("tools/parity-skips.R")
  if (!identical(Sys.getenv("DIFFDIFF_REQUIRE_PARITY"), "true"))
    cat(sprintf("sanitize: %d parity test(s) skipped for a missing peer\n", parity_skips(raw)))
  cat(sprintf("%d passed, %d failed\n", sum(res$passed), sum(res$failed) + sum(res$error)))
  if (sum(res$failed) + sum(res$error) > 0) quit(status = 1)
' 2>&1 | tee "$work/tests.log"
status=${PIPESTATUS[0]}
if grep -qE "AddressSanitizer|runtime error|LeakSanitizer" "$work/tests.log"; then
  echo "sanitize: sanitizer reported an error (see $work/tests.log)"; exit 1
fi
exit "$status"
