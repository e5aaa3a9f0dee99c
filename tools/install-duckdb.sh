#!/usr/bin/env bash
# Install the duckdb R package once, for `make test-duckdb` (the DuckDB tests
# of the database back end, R/dbi*.R). duckdb has no Debian binary for this R
# and compiles from source through CRAN: on 2 cores that takes more than 55
# minutes, which is why CI (90 minutes from a clean machine) tests the SQL path
# on RSQLite only. DBI and dbplyr come from Debian. Idempotent.
set -euo pipefail
bash "$(dirname "$0")/apt-install.sh" install-duckdb r-cran-dbi r-cran-dbplyr r-cran-rsqlite
# without debugging information (-g0): R's default flags add it, which
# makes the objects and the link of duckdb's million lines several times
# larger (the compiler's output is printed: redirect it to a log)
mv="$(mktemp)"
trap 'rm -f "$mv"' EXIT
printf 'CXXFLAGS = -O2 -g0\nCXX11FLAGS = -O2 -g0\nCXX14FLAGS = -O2 -g0\nCXX17FLAGS = -O2 -g0\nCFLAGS = -O2 -g0\n' > "$mv"
R_MAKEVARS_USER="$mv" Rscript --no-save --no-restore --no-init-file --no-environ -e '
# duckdb needs DBI >= 1.2 (its result classes extend DBIResultArrow);
# Debian bookworm has 1.1.3, so a newer DBI comes from CRAN first (the
# cause of two failed builds: the compile succeeded, loading did not)
if (utils::packageVersion("DBI") < "1.2.0") {
  message("install-duckdb: CRAN install DBI (duckdb needs >= 1.2)")
  install.packages("DBI", lib = .libPaths()[1], repos = getOption("repos"))
  if (utils::packageVersion("DBI", lib.loc = .libPaths()[1]) < "1.2.0") stop("install-duckdb: could not install DBI >= 1.2")
}
if (!requireNamespace("duckdb", quietly = TRUE)) {
  message("install-duckdb: CRAN install duckdb (compiles from source; about an hour on 2 cores)")
  Sys.setenv(MAKEFLAGS = paste0("-j", Sys.getenv("DUCKDB_JOBS", max(1L, parallel::detectCores()))))
  install.packages("duckdb", lib = .libPaths()[1], repos = getOption("repos"))
  if (!requireNamespace("duckdb", quietly = TRUE)) stop("install-duckdb: could not install duckdb (the compiler output above says why)")
}
message("install-duckdb: duckdb ", utils::packageVersion("duckdb"), " present")
'
