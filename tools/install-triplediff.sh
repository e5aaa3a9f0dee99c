#!/usr/bin/env bash
# triplediff 0.2.4 (CRAN), the reference for did_ddd(), asks for R >= 4.3 and
# Matrix >= 1.6.1 in its DESCRIPTION; R 4.2.2 ships Matrix 1.5-3. It installs
# and runs here with those two requirements relaxed and nothing else
# changed (no code is touched). CRAN's default filter hides packages that ask
# for a newer R, so the source is fetched with the filter off. Installs into
# the first library of .libPaths() (as tools/install-deps.sh does for the
# other peers), or into LIB if given. Idempotent.
# Usage: tools/install-triplediff.sh [LIB]
set -euo pipefail
LIB="${1:-}"
if Rscript --no-save --no-restore --no-init-file --no-environ -e "
  if (nzchar('$LIB')) .libPaths(c('$LIB', .libPaths()))
  quit(status = !(requireNamespace('triplediff', quietly = TRUE) && utils::packageVersion('triplediff') >= '0.2.4'))" \
  2>/dev/null; then
  echo "install-triplediff: triplediff present"; exit 0
fi
bash "$(dirname "$0")/apt-install.sh" install-triplediff r-cran-rcppeigen r-cran-data.table r-cran-rcpp
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
Rscript --no-save --no-restore --no-init-file --no-environ -e "
lib <- if (nzchar('$LIB')) '$LIB' else .libPaths()[1]
dir.create(lib, showWarnings = FALSE, recursive = TRUE)
.libPaths(c(lib, .libPaths()))
repos <- getOption('repos')
deps <- c('BMisc', 'fastglm')
need <- deps[!vapply(deps, requireNamespace, logical(1), quietly = TRUE)]
if (length(need)) install.packages(need, lib = lib, repos = repos, Ncpus = 2L, quiet = TRUE)
a <- utils::available.packages(repos = repos, filters = list())
if (!'triplediff' %in% rownames(a)) stop('install-triplediff: triplediff is not in the configured repositories')
utils::download.packages('triplediff', destdir = '$WORK', available = a, repos = repos, type = 'source', quiet = TRUE)
"
cd "$WORK"
tar xzf triplediff_*.tar.gz
# the two requirements relaxed: R (>= 4.3...) and Matrix (>= 1.6.1)
sed -i -E 's/R \(>= ?4\.[3-9][^)]*\)/R (>= 4.1)/; s/Matrix \(>= ?1\.6\.1\)/Matrix/' triplediff/DESCRIPTION
grep -E "^(Depends|Imports)" -A3 triplediff/DESCRIPTION | head -8
if [ -n "$LIB" ]; then R CMD INSTALL --no-multiarch -l "$LIB" triplediff; else R CMD INSTALL --no-multiarch triplediff; fi
Rscript -e "if (nzchar('$LIB')) .libPaths(c('$LIB', .libPaths())); library(triplediff); cat('install-triplediff: triplediff', format(packageVersion('triplediff')), 'installed\n')"
