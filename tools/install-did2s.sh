#!/usr/bin/env bash
# did2s (CRAN) cannot be installed on R 4.2.2: it imports HonestDiD, which needs
# CVXR, which CRAN no longer provides for this R. Its estimator (R/did2s.R) does
# not use HonestDiD. This script installs did2s into a private library with only
# the HonestDiD sensitivity wrappers removed (R/honest_did.R, their two exports
# and help pages, HonestDiD in Imports); did2s() itself is unchanged. Used by
# tools/did2s-reference.R and bench/staggered.R, never by the package or its tests.
# Usage: tools/install-did2s.sh [LIB]   (default /tmp/did2slib)
set -euo pipefail
LIB="${1:-/tmp/did2slib}"
mkdir -p "$LIB"
if Rscript -e "quit(status = !requireNamespace('did2s', lib.loc = '$LIB', quietly = TRUE))"; then
  echo "did2s already in $LIB"; exit 0
fi
WORK="$(mktemp -d)"
Rscript --no-save --no-restore --no-init-file --no-environ -e "
lib <- '$LIB'; .libPaths(c(lib, .libPaths()))
repos <- getOption('repos'); if (any(repos == '@CRAN@')) stop('no CRAN mirror configured: set options(repos) in Rprofile.site')
deps <- c('boot', 'broom', 'data.table', 'did', 'didimputation', 'dreamerr', 'ggplot2', 'Matrix', 'rlang', 'staggered')
need <- deps[!vapply(deps, requireNamespace, logical(1), quietly = TRUE)]
if (length(need)) install.packages(need, lib = lib, repos = repos, Ncpus = 2L, quiet = TRUE)
download.packages('did2s', destdir = '$WORK', repos = repos, type = 'source', quiet = TRUE)
"
cd "$WORK"
tar xzf did2s_*.tar.gz
rm -f did2s/R/honest_did.R did2s/man/honest_did_did2s.Rd did2s/man/get_honestdid_obj_did2s.Rd did2s/MD5
sed -i '/honest_did_did2s\|get_honestdid_obj_did2s/d' did2s/NAMESPACE
sed -i 's/ HonestDiD,//' did2s/DESCRIPTION
R_LIBS="$LIB" R CMD INSTALL --library="$LIB" did2s >/dev/null
cd / && rm -rf "$WORK"
Rscript -e "library(did2s, lib.loc = '$LIB'); cat('did2s', format(packageVersion('did2s', lib.loc = '$LIB')), 'installed in $LIB\n')"
