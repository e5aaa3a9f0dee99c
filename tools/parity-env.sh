# Sourced by tools/sanitize.sh and tools/valgrind.sh (from the repository
# root; parity_label names the run). DIFFDIFF_REQUIRE_PARITY=true -- a test
# whose peer is missing fails -- only when every parity peer
# (tests/testthat/helper-parity.R's dd_peer_packages) is installed, as after
# `make deps` (which `make sanitize` and `make valgrind` run first), or when
# the caller set it already. Otherwise it is unset, the missing peers are
# listed, and the run prints how many tests skipped for a missing peer
# (parity_skips() of tools/parity-skips.R).
missing_peers=$(Rscript --vanilla -e 'source("tests/testthat/helper-parity.R")
  cat(dd_peer_packages[!vapply(dd_peer_packages, requireNamespace, NA, quietly = TRUE)])' 2>/dev/null) ||
  missing_peers="(tests/testthat/helper-parity.R could not be read)"
if [ "${DIFFDIFF_REQUIRE_PARITY:-}" = true ] || [ -z "$missing_peers" ]; then
  export DIFFDIFF_REQUIRE_PARITY=true
  if [ -z "$missing_peers" ]; then
    echo "$parity_label: every parity peer is installed: DIFFDIFF_REQUIRE_PARITY=true"
  else
    echo "$parity_label: DIFFDIFF_REQUIRE_PARITY=true as set, with peers missing: $missing_peers (their tests fail)"
  fi
else
  unset DIFFDIFF_REQUIRE_PARITY
  echo "$parity_label: peers not installed: $missing_peers; their parity tests skip (counted at the end)"
fi
