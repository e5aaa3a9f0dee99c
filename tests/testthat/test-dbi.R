# did_cs() on a database table (issue 38, part 2; R/dbi.R, R/did_cs_db.R):
# the fit from the engine's cohort moments equals the in-memory fit of the
# same data to 1e-10 (ATT(g,t), standard errors, every aggregation, the
# covariance, the pre-test, the band), for never / not-yet-treated
# comparisons, varying / universal base periods, anticipation, clustering by
# a coarser cluster, and the multiplier bootstrap (the units streamed back
# in chunks get the in-memory fit's multipliers; chunk sizes across the
# 64-row words of the Rademacher draws and across 1,024). The engine here
# is SQLite (RSQLite, a Debian binary, so CI runs these); test-dbi-duckdb.R
# runs the same checks on DuckDB. Also: the data checks in the engine, the
# options that need the data in memory, and the methods of a database fit.

test_that("did_cs on a database table equals the in-memory fit (analytic standard errors)", {
  need_peer("RSQLite"); need_peer("dbplyr")
  dbi_check_analytic("RSQLite")
})

test_that("the multiplier bootstrap of a database fit draws the in-memory multipliers", {
  need_peer("RSQLite"); need_peer("dbplyr")
  dbi_check_bootstrap("RSQLite")
})

test_that("the streamed bootstrap is the same for every chunk size (across 64-row words and 1,024)", {
  need_peer("RSQLite"); need_peer("dbplyr")
  dbi_check_chunks("RSQLite")
})

test_that("the engine's checks and the in-memory fit's rules on the data", {
  need_peer("RSQLite"); need_peer("dbplyr")
  dbi_check_data("RSQLite")
})

test_that("what needs the data in memory says so", {
  need_peer("RSQLite"); need_peer("dbplyr")
  dbi_check_memory("RSQLite")
})

test_that("every method works on the default fit of a database table", {
  need_peer("RSQLite"); need_peer("dbplyr")
  dbi_check_methods("RSQLite")
})

test_that("C_ifs_boot's rowinfo: chunks of rows add up to the draws of the whole matrix", {
  ns <- asNamespace("diffdiff")
  set.seed(2)
  n <- 1100; K <- 3
  P <- matrix(rnorm(n * K), n, K)
  seed <- c(12345, 678)
  for (type in 1:3) {
    whole <- .Call(ns$C_ifs_boot, ns$dd_ifs_dense(P), 0:(K - 1L), 37L, type, NULL, NULL, seed, 0L, NULL)
    for (cuts in list(c(0, 63, 64, 1100), c(0, 1, 65, 1023, 1024, 1025, 1100), c(0, 700, 1100))) {
      acc <- 0
      for (j in seq_len(length(cuts) - 1L)) {
        i <- (cuts[j] + 1):cuts[j + 1]
        acc <- acc + .Call(ns$C_ifs_boot, ns$dd_ifs_dense(P[i, , drop = FALSE]), 0:(K - 1L), 37L, type, NULL, NULL,
                           seed, 0L, c(cuts[j], n))
      }
      expect_lt(max(abs(acc - whole)), 1e-12, label = paste("type", type, "cuts", paste(cuts, collapse = ",")))
    }
  }
  expect_error(.Call(ns$C_ifs_boot, ns$dd_ifs_dense(P), 0:2, 5L, 1L, NULL, NULL, seed, 0L, c(10, 20)), "rowinfo")
})

test_that("did_twfe on a database table equals the in-memory fit", {
  need_peer("RSQLite"); need_peer("dbplyr")
  dbi_check_twfe("RSQLite")
})

test_that("did_event on a database table equals the in-memory fit", {
  need_peer("RSQLite"); need_peer("dbplyr")
  dbi_check_event("RSQLite")
})

test_that("aggregate_survey on a database table equals the in-memory cells", {
  need_peer("RSQLite"); need_peer("dbplyr")
  dbi_check_survey("RSQLite")
})

test_that("did_2x2 on a database table equals the in-memory fit", {
  need_peer("RSQLite"); need_peer("dbplyr")
  dbi_check_2x2("RSQLite")
})
