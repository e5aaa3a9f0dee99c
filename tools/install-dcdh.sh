#!/usr/bin/env bash
# DIDmultiplegtDYN, the R reference for did_dcdh(), cannot run here as CRAN
# ships it: from 2.3.0 on (CRAN has 2.4.0) it stops unless the `polars`
# package is installed, and polars is not on CRAN (it comes from r-universe
# and builds from Rust crates, neither of which this machine can reach).
# 2.2.0 is the newest release without polars; its estimator and analytic
# variance equal 2.4.0's except where tests/testthat/test-parity-dcdh.R says.
# CRAN's archive of DIDmultiplegtDYN does not answer here, so this script
# installs 2.2.0 from a source tree given as the first argument (e.g. tag
# 2.2.0 of the CRAN mirror on GitHub, or DIDmultiplegtDYN_2.2.0.tar.gz from
# the CRAN archive, unpacked), with its two extra imports (matlib, plm) from
# the configured repositories, into a private library.
# Used to regenerate tests/testthat/ref-dcdh.csv (tools/dcdh-reference.R) and
# by bench/dcdh.R; never by the package or its tests.
#
# It then installs DIDmultiplegt 2.1.0 (CRAN), the reference for
# did_dcdh(estimand = "DID_M") (its mode "old"), with one line of its
# NAMESPACE removed: importFrom(stats,lag) masks dplyr's lag(), so every
# first difference the released package computes is zero and mode "old"
# returns NaN on any data. Nothing else is changed.
# Usage: tools/install-dcdh.sh SRC [LIB]   (default LIB /tmp/lib-dcdh)
set -euo pipefail
SRC="${1:?usage: tools/install-dcdh.sh SRC [LIB]}"
LIB="${2:-/tmp/lib-dcdh}"
mkdir -p "$LIB"
LIB="$(cd "$LIB" && pwd)"
grep -q '^Version: 2.2.0' "$SRC/DESCRIPTION" || { echo "install-dcdh: $SRC is not DIDmultiplegtDYN 2.2.0"; exit 1; }
# Debian binaries for the compiled dependencies that have them
bash "$(dirname "$0")/apt-install.sh" install-dcdh r-cran-openxlsx r-cran-car r-cran-lmtest r-cran-haven \
  r-cran-cowplot r-cran-dplyr r-cran-plm
Rscript --no-save --no-restore --no-init-file --no-environ -e "
lib <- '$LIB'; .libPaths(c(lib, .libPaths()))
need <- c('fixest', 'rnames', 'matlib', 'plm')
need <- need[!vapply(need, requireNamespace, logical(1), quietly = TRUE)]
if (length(need)) {
  message('install-dcdh: CRAN install ', paste(need, collapse = ' '))
  install.packages(need, lib = lib, repos = getOption('repos'), Ncpus = 2L, quiet = TRUE)
}
"
R CMD INSTALL --no-multiarch -l "$LIB" "$SRC"
# DIDmultiplegt 2.1.0 with the stats::lag import removed (see above)
TMP="$(mktemp -d)"
Rscript --no-save --no-restore --no-init-file --no-environ -e "
lib <- '$LIB'; .libPaths(c(lib, .libPaths()))
need <- c('plotrix', 'sampling', 'stringr', 'Deriv', 'doBy', 'DIDHAD')
need <- need[!vapply(need, requireNamespace, logical(1), quietly = TRUE)]
if (length(need)) install.packages(need, lib = lib, repos = getOption('repos'), Ncpus = 2L, quiet = TRUE)
f <- download.packages('DIDmultiplegt', destdir = '$TMP', repos = getOption('repos'), type = 'source')[1, 2]
untar(f, exdir = '$TMP')
"
grep -q '^Version: 2.1.0' "$TMP/DIDmultiplegt/DESCRIPTION" || { echo "install-dcdh: CRAN's DIDmultiplegt is not 2.1.0"; exit 1; }
sed -i '/^importFrom(stats,lag)$/d' "$TMP/DIDmultiplegt/NAMESPACE"
R CMD INSTALL --no-multiarch -l "$LIB" "$TMP/DIDmultiplegt"
rm -rf "$TMP"
R_LIBS="$LIB" Rscript -e "options(rgl.useNULL = TRUE); suppressPackageStartupMessages(library(DIDmultiplegtDYN)); cat('install-dcdh: DIDmultiplegtDYN', format(packageVersion('DIDmultiplegtDYN')), 'and DIDmultiplegt', format(packageVersion('DIDmultiplegt')), 'in', '$LIB', '\n')"
