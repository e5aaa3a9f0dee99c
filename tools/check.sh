#!/usr/bin/env bash
# Runs R CMD check --as-cran --no-manual on the built tarball, then prints the
# testthat totals as the very last line: "N passed, N failed".
# Exit status is non-zero on any check ERROR or WARNING or failed test.
set -u
tarball=$1; outdir=$2; shift 2
rm -rf "$outdir"; mkdir -p "$outdir"
env "$@" R CMD check --as-cran --no-manual -o "$outdir" "$tarball"
status=$?
log="$outdir/diffdiff.Rcheck/00check.log"
summary="$outdir/diffdiff.Rcheck/tests/testthat-summary.txt"
bad=0
if [ -f "$log" ] && grep -qE '^Status: .*(ERROR|WARNING)' "$log"; then bad=1; fi
[ "$status" -ne 0 ] && bad=1
if [ -f "$outdir/diffdiff.Rcheck/tests/testthat.Rout.fail" ]; then
  echo "---- tests/testthat.Rout.fail (tail) ----"
  tail -n 60 "$outdir/diffdiff.Rcheck/tests/testthat.Rout.fail"
  bad=1
fi
if [ -f "$summary" ]; then
  line=$(tail -n 1 "$summary")
  failed=$(echo "$line" | sed -n 's/.* \([0-9]*\) failed.*/\1/p')
  [ "${failed:-1}" -ne 0 ] && bad=1
else
  line="0 passed, 1 failed"   # the test suite did not run to the end
  bad=1
fi
[ -f "$log" ] && grep -E '^Status:' "$log"
echo "$line"
exit $bad
