#!/usr/bin/env bash
# qte 2.0.0 (CRAN; changes-in-changes and quantile DiD, the peer of issue
# 41's did_cic) cannot be installed on R 4.2.2 as is: it imports quantreg,
# which imports MatrixModels, and MatrixModels 0.5-3 and later need Matrix >=
# 1.6-0, newer than R 4.2.2's recommended Matrix 1.5-3 (Matrix 1.7 needs R >=
# 4.4). This script installs the archived Matrix 1.6-5 (R >= 3.5) into a
# private library, then qte and its other dependencies from the configured
# repositories (their current versions need at most R 4.2.0). Nothing is
# patched. Takes about two minutes (Matrix compiles). For parity tests and
# benchmarks only, never used by the package.
# Usage: tools/install-qte.sh [LIB]   (default /tmp/qtelib)
set -euo pipefail
LIB="${1:-/tmp/qtelib}"
mkdir -p "$LIB"
LIB="$(cd "$LIB" && pwd)"
if R_LIBS="$LIB" Rscript -e "quit(status = !requireNamespace('qte', lib.loc = '$LIB', quietly = TRUE))" 2>/dev/null; then
  echo "qte already in $LIB"; exit 0
fi
Rscript --no-save --no-restore --no-init-file --no-environ -e "
lib <- '$LIB'; .libPaths(c(lib, .libPaths()))
repos <- getOption('repos'); if (any(repos == '@CRAN@')) stop('no CRAN mirror configured: set options(repos) in Rprofile.site')
# (versions read without loading: a Matrix 1.5 namespace loaded here would stop qte's own check below)
if (utils::packageVersion('Matrix') < '1.6-0') {
  message('install-qte: archived Matrix 1.6-5')
  url <- sprintf('%s/src/contrib/Archive/Matrix/Matrix_1.6-5.tar.gz', repos[[1]])
  install.packages(url, repos = NULL, type = 'source', lib = lib, quiet = TRUE)
  if (utils::packageVersion('Matrix', lib.loc = lib) < '1.6-0') stop('install-qte: could not install Matrix 1.6-5')
}
install.packages('qte', lib = lib, repos = repos, Ncpus = 2L, quiet = TRUE)
"
# a fresh process loads it as the tests will
R_LIBS="$LIB" Rscript -e "library(qte, lib.loc = '$LIB'); cat('qte', format(packageVersion('qte')), 'with Matrix', format(packageVersion('Matrix')), 'installed in $LIB\n')"
