# The database back end's checks (helper-dbi.R) on DuckDB, the embedded
# engine the back end is meant for (a DuckDB view over Parquet files).
# duckdb compiles from source for over an hour on 2 cores, so CI does not
# install it: these tests skip there, saying so (need_duckdb(),
# helper-parity.R), the only parity tests allowed to. `make test-duckdb`
# installs duckdb once (tools/install-duckdb.sh) and runs them.

test_that("DuckDB: did_cs on a database table equals the in-memory fit (analytic standard errors)", {
  need_duckdb()
  dbi_check_analytic("duckdb")
})

test_that("DuckDB: the multiplier bootstrap of a database fit draws the in-memory multipliers", {
  need_duckdb()
  dbi_check_bootstrap("duckdb")
})

test_that("DuckDB: the streamed bootstrap is the same for every chunk size (across 64-row words and 1,024)", {
  need_duckdb()
  dbi_check_chunks("duckdb")
})

test_that("DuckDB: the engine's checks and the in-memory fit's rules on the data", {
  need_duckdb()
  dbi_check_data("duckdb")
})

test_that("DuckDB: what needs the data in memory says so", {
  need_duckdb()
  dbi_check_memory("duckdb")
})

test_that("DuckDB: every method works on the default fit of a database table", {
  need_duckdb()
  dbi_check_methods("duckdb")
})

test_that("DuckDB: did_twfe on a database table equals the in-memory fit", {
  need_duckdb()
  dbi_check_twfe("duckdb")
})

test_that("DuckDB: did_event on a database table equals the in-memory fit", {
  need_duckdb()
  dbi_check_event("duckdb")
})

test_that("DuckDB: aggregate_survey on a database table equals the in-memory cells", {
  need_duckdb()
  dbi_check_survey("duckdb")
})

test_that("DuckDB: did_2x2 on a database table equals the in-memory fit", {
  need_duckdb()
  dbi_check_2x2("duckdb")
})
