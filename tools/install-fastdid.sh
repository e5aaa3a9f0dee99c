#!/usr/bin/env bash
# fastdid (CRAN, 1.0.6 when written) for bench/cs.R's large-panel comparison:
# installed into a private library from R's configured repositories, with
# whatever of its dependencies the machine lacks. Used by bench/cs.R only,
# never by the package or its tests.
# Usage: tools/install-fastdid.sh [LIB]   (default /tmp/fastdidlib)
set -euo pipefail
LIB="${1:-/tmp/fastdidlib}"
mkdir -p "$LIB"
if Rscript -e "quit(status = !requireNamespace('fastdid', lib.loc = c('$LIB', .libPaths()), quietly = TRUE))"; then
  echo "fastdid already available"; exit 0
fi
Rscript --no-save --no-restore -e "
repos <- getOption('repos'); if (any(repos == '@CRAN@')) stop('no CRAN mirror configured: set options(repos) in Rprofile.site')
.libPaths(c('$LIB', .libPaths()))
install.packages('fastdid', lib = '$LIB', repos = repos, Ncpus = 2L, quiet = TRUE,
                 dependencies = c('Depends', 'Imports', 'LinkingTo'))
library(fastdid, lib.loc = '$LIB'); cat('fastdid', format(packageVersion('fastdid', lib.loc = '$LIB')), 'installed in $LIB\n')
"
