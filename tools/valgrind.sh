#!/usr/bin/env bash
# `make valgrind`: the test suite, the did_sdid workspace boundary cases and
# the later estimators' kernels at their thresholds
# under valgrind (memcheck) against a plain -O0 -g build in a private library.
# Any invalid read/write, use of uninitialised values in diffdiff's code or
# definite leak from it fails the run (R's own allocations are not counted).
# Usage: tools/valgrind.sh [FILTER]   (FILTER: a regular expression on test file names; default all)
# VALGRIND_SHARDS=k splits the suite into k valgrind processes (default 2);
# VALGRIND_BOUNDARY=0 skips the boundary cases; VALGRIND_KERNELS=0 skips the
# later estimators' kernels at their size thresholds (tools/valgrind-kernels.R);
# VALGRIND_SUITE=0 skips the test suite (the boundary and kernel cases only).
# Logs go to check-valgrind/ (kept apart from check/, which `make test` clears).
set -u
cd "$(dirname "$0")/.."
root=$(pwd)
work="$root/check-valgrind"
echo "valgrind: building with -g -O0"
bash tools/build-private.sh "$work" 'CFLAGS = -g -O0' || exit 1
filter="${1:-}"
status=0
parity_label=valgrind
. tools/parity-env.sh
run() {  # $1: label, $2: R code
  echo "valgrind: $1"
  R_LIBS="$work/lib" OMP_NUM_THREADS=2 \
    R -d "valgrind --tool=memcheck --error-exitcode=0 --track-origins=yes --log-file=$work/$1.vg" \
      --vanilla --no-echo -e "$2" > "$work/$1.out" 2>&1 || status=1
  tail -n 2 "$work/$1.out"
  if [ ! -f "$work/$1.vg" ] || ! grep -qE '^[0-9]+ passed, 0 failed' "$work/$1.out"; then
    echo "valgrind: $1: the tests did not run to the end or failed"; status=1; return
  fi
  # errors whose stack passes through diffdiff.so
  n=$(awk '/^==[0-9]+== [A-Z]/{blk=$0; next} /^==[0-9]+== +(at|by) /{ if ($0 ~ /diffdiff\.so/) hit=1 } /^==[0-9]+== *$/{ if (hit) c++; hit=0 } END{print c+0}' "$work/$1.vg")
  echo "valgrind: $1: $n error block(s) in diffdiff code (log: $work/$1.vg)"
  [ "$n" -eq 0 ] || status=1
}
if [ "${VALGRIND_BOUNDARY:-1}" = 1 ]; then
run boundary '
  .libPaths(c(Sys.getenv("R_LIBS"), .libPaths())); library(testthat); library(diffdiff)
  res <- as.data.frame(test_file("tests/testthat/test-sdid-boundary.R", reporter = "summary"))
  cat(sprintf("%d passed, %d failed\n", sum(res$passed), sum(res$failed) + sum(res$error)))'
fi
if [ "${VALGRIND_KERNELS:-1}" = 1 ]; then
run kernels 'source("tools/valgrind-kernels.R")'
fi
[ "${VALGRIND_SUITE:-1}" = 1 ] || exit $status
# the suite in VALGRIND_SHARDS (default 2: one per core) shards of test
# files run side by side, each its own valgrind process and log
shards="${VALGRIND_SHARDS:-2}"
files=$(cd tests/testthat && ls test-*.R | sed 's/^test-//; s/[.]R$//')
[ -n "$filter" ] && files=$(echo "$files" | grep -E "$filter")
pids=()
for k in $(seq 1 "$shards"); do
  sel=$(echo "$files" | awk -v k="$k" -v m="$shards" 'NR % m == k % m' | paste -sd'|' -)
  [ -z "$sel" ] && continue
  ( run "suite-$k" "
  .libPaths(c(Sys.getenv('R_LIBS'), .libPaths())); library(testthat); library(diffdiff)
  raw <- test_dir('tests/testthat', reporter = 'summary', stop_on_failure = FALSE,
                  load_package = 'none', filter = '^($sel)\$')
  res <- as.data.frame(raw)
  source('tools/parity-skips.R')
  if (!identical(Sys.getenv('DIFFDIFF_REQUIRE_PARITY'), 'true'))
    cat(sprintf('valgrind: %d parity test(s) skipped for a missing peer\n', parity_skips(raw)))
  cat(sprintf('%d passed, %d failed\n', sum(res\$passed), sum(res\$failed) + sum(res\$error)))"
    exit $status ) &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || status=1; done
exit $status
