#!/usr/bin/env bash
# HonestDiD 0.2.8 (CRAN) cannot be installed on R 4.2.2 as is: it imports
# CVXR (>= 1.8), and every CVXR >= 1.8 needs R >= 4.3 (and Matrix >= 1.7).
# This script installs HonestDiD into a private library on top of the archived
# CVXR 1.0-11 (R >= 3.4), with archived osqp 0.6.0.8 (osqp >= 0.6.3.1 needs
# Matrix >= 1.6.1; R 4.2.2 ships 1.5-3). HonestDiD itself is patched in two
# places only: its DESCRIPTION asks for CVXR (>= 1.0-11) instead of (>= 1.8),
# and its internal .psolve() wrapper (R/utilities.R), which repackages the
# CVXR >= 1.8 psolve() result into the old list(value, status, getValue),
# returns CVXR < 1.8's psolve() result as is, since that already is that list.
# No estimator code is changed. Debian r-cran-* binaries are used where they
# exist (system library), CRAN for the rest (private library).
# Used for benchmark and parity comparisons only, never by the package or its tests.
# Usage: tools/install-honestdid.sh [LIB]   (default /tmp/honestlib)
set -euo pipefail
LIB="${1:-/tmp/honestlib}"
mkdir -p "$LIB"
LIB="$(cd "$LIB" && pwd)"
if R_LIBS="$LIB" Rscript -e "quit(status = !requireNamespace('HonestDiD', lib.loc = '$LIB', quietly = TRUE))" 2>/dev/null; then
  echo "HonestDiD already in $LIB"; exit 0
fi

# Debian packages: compiled dependencies built for the system R, and GLPK for Rglpk.
DEB_PKGS="libglpk-dev r-cran-ecosolver r-cran-rmpfr r-cran-gmp r-cran-bit64 r-cran-bit
  r-cran-r6 r-cran-rglpk r-cran-slam r-cran-pracma r-cran-foreach r-cran-iterators
  r-cran-matrixstats r-cran-nleqslv r-cran-rcpparmadillo r-cran-rcppeigen"
bash "$(dirname "$0")/apt-install.sh" install-honestdid $DEB_PKGS

WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
Rscript --no-save --no-restore --no-init-file --no-environ -e "
lib <- '$LIB'; .libPaths(c(lib, .libPaths()))
repos <- getOption('repos'); if (any(repos == '@CRAN@')) stop('no CRAN mirror configured: set options(repos) in Rprofile.site')
have <- function(p, v = '0') {
  ok <- requireNamespace(p, quietly = TRUE)
  ok && utils::packageVersion(p) >= v
}
archived <- function(p, v, min = v) {
  if (have(p, min)) return(invisible())
  message('install-honestdid: archived ', p, ' ', v)
  url <- sprintf('%s/src/contrib/Archive/%s/%s_%s.tar.gz', repos, p, p, v)
  install.packages(url, repos = NULL, type = 'source', lib = lib, quiet = TRUE)
  if (!have(p, min)) stop('install-honestdid: could not install ', p, ' ', v)
}
# CRAN (current versions work on R 4.2.2).
deps <- c('Rcpp', 'RcppEigen', 'Matrix', 'R6', 'bit64', 'gmp', 'Rmpfr', 'ECOSolveR', 'scs',
          'rlang', 'foreach', 'matrixStats', 'latex2exp', 'lpSolveAPI', 'pracma', 'purrr',
          'tibble', 'dplyr', 'ggplot2', 'Rglpk', 'mvtnorm', 'TruncatedNormal')
need <- deps[!vapply(deps, requireNamespace, logical(1), quietly = TRUE)]
if (length(need)) {
  message('install-honestdid: CRAN install ', paste(need, collapse = ' '))
  install.packages(need, lib = lib, repos = repos, Ncpus = 2L, quiet = TRUE)
}
# Archived versions that still support R 4.2.2 / Matrix 1.5.
archived('osqp', '0.6.0.8')
archived('CVXR', '1.0-11')
invisible(download.packages('HonestDiD', destdir = '$WORK', repos = repos, type = 'source', quiet = TRUE))
"
cd "$WORK"
tar xzf HonestDiD_*.tar.gz
rm -f HonestDiD/MD5
sed -i 's/CVXR (>= 1\.8)/CVXR (>= 1.0-11)/' HonestDiD/DESCRIPTION
grep -q 'CVXR (>= 1.0-11)' HonestDiD/DESCRIPTION
# In CVXR < 1.8 psolve() returns list(value, status, getValue) itself.
perl -0pi -e 's/(  value  <- CVXR::psolve\(problem, \.\.\.\)\n)/$1  if (base::is.list(value)) base::return(value)  # CVXR < 1.8\n/' HonestDiD/R/utilities.R
grep -q 'CVXR < 1.8' HonestDiD/R/utilities.R
echo "install-honestdid: R CMD INSTALL HonestDiD $(sed -n 's/^Version: //p' HonestDiD/DESCRIPTION) (patched for CVXR 1.0-11)"
R_LIBS="$LIB" R CMD INSTALL --library="$LIB" HonestDiD >"$WORK/install.log" 2>&1 || { cat "$WORK/install.log"; exit 1; }
cd /
R_LIBS="$LIB" Rscript -e "library(HonestDiD, lib.loc = '$LIB'); cat('HonestDiD', format(packageVersion('HonestDiD', lib.loc = '$LIB')), 'with CVXR', format(packageVersion('CVXR')), 'installed in $LIB\n')"
