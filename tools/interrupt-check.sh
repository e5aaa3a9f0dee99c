#!/usr/bin/env bash
# Ctrl-C reaches every long C kernel within a second and the session works
# afterwards. For each case of tools/interrupt-check.R: start it, wait until
# the long call has run DELAY seconds, send SIGINT, and measure the time from
# the signal to R's interrupt handler. A case passes when it stopped within
# LIMIT seconds, did not run to completion, and printed ALIVE afterwards.
# Usage: tools/interrupt-check.sh [LIB]   (LIB: library holding diffdiff)
set -u
cd "$(dirname "$0")/.."
LIB="${1:-}"
DELAY="${DELAY:-3}"
LIMIT="${LIMIT:-1}"
CASES="${CASES:-sdid_placebo cs_bootstrap cs_cells wild_bootstrap demean_pcg survey_domains survey_replicates honest_grid had_stute conley spillover rd}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail=0
printf "%-16s %10s %8s  %-28s %s\n" case "stop (s)" session "interrupted in" result
for c in $CASES; do
  log="$work/$c.log"
  Rscript --vanilla tools/interrupt-check.R "$c" "$LIB" > "$log" 2>&1 &
  pid=$!
  # wait for START (data built), at most 300 s
  for _ in $(seq 1 3000); do grep -q '^START' "$log" && break; kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  sleep "$DELAY"
  tkill=$(date +%s.%N)
  kill -INT "$pid" 2>/dev/null
  # wait for the process to end, at most 120 s
  for _ in $(seq 1 1200); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  if kill -0 "$pid" 2>/dev/null; then kill -KILL "$pid"; echo "HUNG" >> "$log"; fi
  wait "$pid" 2>/dev/null
  tstop=$(sed -n 's/^STOPPED \([0-9.]*\).*/\1/p' "$log")
  alive=$(grep -c '^ALIVE' "$log")
  if [ -n "$tstop" ]; then
    lag=$(awk -v a="$tstop" -v b="$tkill" 'BEGIN { printf "%.3f", a - b }')
    ok=$(awk -v l="$lag" -v m="$LIMIT" 'BEGIN { print (l <= m) ? 1 : 0 }')
  else
    lag="-"; ok=0
  fi
  [ "$alive" -ge 1 ] || ok=0
  res="ok"; [ "$ok" -eq 1 ] || { res="FAIL"; fail=1; }
  grep -q '^COMPLETED' "$log" && res="FAIL (ran to completion: the signal was not acted on during the call, or the input is too small)"
  where=$(sed -n 's/^WHERE \(.*\)/\1/p' "$log" | tr -d ' ')
  printf "%-16s %10s %8s  %-28s %s\n" "$c" "$lag" "$([ "$alive" -ge 1 ] && echo works || echo broken)" "${where:--}" "$res"
  [ "$res" = "ok" ] || sed 's/^/    | /' "$log" | tail -15
done
exit $fail
