#!/usr/bin/env bash
# `make sanitize`: builds diffdiff with AddressSanitizer and UBSan (gcc) into a
# private library and runs the test suite against it. R itself is not
# instrumented, so libasan is preloaded and leak detection is off (R keeps
# memory until exit by design). Any sanitizer report fails the run.
set -u
cd "$(dirname "$0")/.."
root=$(pwd)
work="$root/check/sanitize"
# the instrumented objects must not leak into a normal build
trap 'rm -f "$root"/src/*.o "$root"/src/*.so' EXIT
rm -f src/*.o src/*.so
rm -rf "$work"; mkdir -p "$work/lib"
cat > "$work/Makevars" <<'MK'
CC = gcc
CFLAGS = -g -O1 -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined
LDFLAGS = -fsanitize=address,undefined
MK
echo "sanitize: building with -fsanitize=address,undefined"
R_MAKEVARS_USER="$work/Makevars" R CMD INSTALL --preclean --no-test-load -l "$work/lib" . \
  > "$work/install.log" 2>&1 || { tail -40 "$work/install.log"; exit 1; }
grep -q -- "-fsanitize=address" "$work/install.log" || { echo "sanitize: flags not applied"; exit 1; }
asan=$(gcc -print-file-name=libasan.so)
ubsan=$(gcc -print-file-name=libubsan.so)
echo "sanitize: running tests/testthat with $asan preloaded"
LD_PRELOAD="$asan:$ubsan" \
ASAN_OPTIONS="detect_leaks=0:allocator_may_return_null=1:abort_on_error=1" \
UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1" \
R_LIBS="$work/lib" DIFFDIFF_REQUIRE_PARITY=true \
Rscript --vanilla -e '
  .libPaths(c(Sys.getenv("R_LIBS"), .libPaths()))
  library(testthat); library(diffdiff, lib.loc = Sys.getenv("R_LIBS"))
  stopifnot(grepl("sanitize", find.package("diffdiff")))
  res <- as.data.frame(test_dir("tests/testthat", reporter = "summary", stop_on_failure = FALSE,
                                load_package = "none"))
  cat(sprintf("%d passed, %d failed\n", sum(res$passed), sum(res$failed) + sum(res$error)))
  if (sum(res$failed) + sum(res$error) > 0) quit(status = 1)
' 2>&1 | tee "$work/tests.log"
status=${PIPESTATUS[0]}
if grep -qE "AddressSanitizer|runtime error|LeakSanitizer" "$work/tests.log"; then
  echo "sanitize: sanitizer reported an error (see $work/tests.log)"; exit 1
fi
exit "$status"
