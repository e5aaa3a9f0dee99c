# The database back end's checks (helper-dbi.R) on DuckDB, the embedded
# engine the back end is meant for (a DuckDB view over Parquet files).
# duckdb compiles from source for over an hour on 2 cores, so CI does not
# install it: these tests skip there, saying so (need_duckdb(),
# helper-parity.R), the only parity tests allowed to. `make test-duckdb`
# installs duckdb once (tools/install-duckdb.sh) and runs them.

for (title in names(dbi_checks)) {
  test_that(paste("DuckDB:", title), {
    need_duckdb()
    dbi_checks[[title]]("duckdb")
  })
}
