#!/usr/bin/env bash
# Install every dependency diffdiff needs on a fresh Debian machine with R.
# Debian r-cran-* binaries where they exist (fast), CRAN for the rest, pandoc for
# vignettes. Idempotent: a second run installs nothing.
# --minimal: only what installing diffdiff with its vignettes needs (the
# Imports, knitr, rmarkdown, pandoc; Debian binaries, no compilation), for
# `make install` and `make demo`; the test-only peers come with `make test`.
set -euo pipefail

if [ "${1:-}" = "--minimal" ]; then
  bash "$(dirname "$0")/apt-install.sh" install-deps r-cran-data.table r-cran-generics r-cran-knitr \
    r-cran-rmarkdown pandoc
  echo "install-deps: the packages diffdiff needs to install are present"
  exit 0
fi

# Debian packages: R packages built for the system R, plus pandoc.
DEB_PKGS="r-cran-data.table r-cran-generics r-cran-roxygen2 r-cran-knitr
  r-cran-rmarkdown r-cran-progressr r-cran-testthat r-cran-rcpp r-cran-sandwich
  r-cran-formula r-cran-numderiv r-cran-zoo r-cran-survey r-cran-mvtnorm r-cran-pkgbuild r-cran-callr
  r-cran-tibble r-cran-broom r-cran-haven r-cran-dplyr r-cran-ggplot2 r-cran-plm r-cran-splines2
  r-cran-checkmate r-cran-pbapply r-cran-rcpparmadillo r-cran-rcppeigen r-cran-purrr r-cran-future
  r-cran-future.apply r-cran-dbi r-cran-dbplyr r-cran-rsqlite r-cran-glmnet r-cran-ranger pandoc qpdf"
# Packages only on CRAN (or newer there than Debian's copy is useful).
CRAN_PKGS="fixest did DRDID staggered etwfe clubSandwich didimputation bacondecomp modelsummary TwoWayFEWeights contdid DIDHAD nprobust YatchewTest StuteTest Synth rdrobust rddensity sensemakr ptetools badcontrols ebal"

bash "$(dirname "$0")/apt-install.sh" install-deps $DEB_PKGS

# The CRAN packages' own dependencies from Debian too, wherever Debian has them
# in a version that every package of the closure accepts (compiling them took
# most of a fresh machine's `make test`); install.packages() builds the rest.
DEB_CLOSURE=$(Rscript --no-save --no-restore --no-init-file --no-environ "$(dirname "$0")/deb-closure.R" "$CRAN_PKGS" | tr '\n' ' ')
if [ -n "${DEB_CLOSURE// /}" ]; then
  bash "$(dirname "$0")/apt-install.sh" install-deps $DEB_CLOSURE
fi

Rscript --no-save --no-restore --no-init-file --no-environ -e '
pkgs <- strsplit(commandArgs(TRUE)[1], " +")[[1]]
pkgs <- pkgs[nzchar(pkgs)]
need <- pkgs[!vapply(pkgs, requireNamespace, logical(1), quietly = TRUE)]
if (length(need)) {
  message("install-deps: CRAN install ", paste(need, collapse = " "))
  lib <- .libPaths()[1]
  install.packages(need, lib = lib, repos = getOption("repos"),
                   Ncpus = 2L, quiet = TRUE)
  still <- need[!vapply(need, requireNamespace, logical(1), quietly = TRUE)]
  if (length(still)) stop("install-deps: could not install ", paste(still, collapse = " "))
}
' "$CRAN_PKGS"
# modelsummary's default output (tinytable) needs knitr >= 1.43 (it calls
# knitr's record_print); Debian bookworm ships 1.42. Newer knitr needs a
# newer xfun, so the four are updated together from the configured
# repositories.
Rscript --no-save --no-restore --no-init-file --no-environ -e '
if (utils::packageVersion("knitr") < "1.43") {
  message("install-deps: CRAN install knitr xfun evaluate highr (knitr ", utils::packageVersion("knitr"), " < 1.43)")
  install.packages(c("knitr", "xfun", "evaluate", "highr"), lib = .libPaths()[1], repos = getOption("repos"),
                   Ncpus = 2L, quiet = TRUE)
  if (utils::packageVersion("knitr", lib.loc = .libPaths()[1]) < "1.43") stop("install-deps: could not update knitr")
}
'
# triplediff (did_ddd's reference) asks for R >= 4.3 and runs with that
# requirement relaxed (tools/install-triplediff.sh).
bash "$(dirname "$0")/install-triplediff.sh"
# qte 2.0.0 (did_cic's parity peer) needs Matrix >= 1.6, newer than R 4.2.2's:
# it goes into its own library (the Makefile passes it to the tests as
# DIFFDIFF_QTE_LIB; tools/install-qte.sh says why)
bash "$(dirname "$0")/install-qte.sh" "${DIFFDIFF_QTE_LIB:-$HOME/.cache/diffdiff/qtelib}"
echo "install-deps: all dependencies present"
