# The database back end (issue 38, part 2; R/dbi.R and the R/*_db.R files):
# did_twfe, did_event, did_2x2 and aggregate_survey on a database table
# equal their in-memory results to 1e-10, and did_cs from the engine's
# cohort moments equals the in-memory fit of the
# same data to 1e-10 (ATT(g,t), standard errors, every aggregation, the
# covariance, the pre-test, the band), for never / not-yet-treated
# comparisons, varying / universal base periods, anticipation, clustering by
# a coarser cluster, and the multiplier bootstrap (the units streamed back
# in chunks get the in-memory fit's multipliers; chunk sizes across the
# 64-row words of the Rademacher draws and across 1,024). The engine here
# is SQLite (RSQLite, a Debian binary, so CI runs these); test-dbi-duckdb.R
# runs the same checks on DuckDB. Also: the data checks in the engine, the
# options that need the data in memory, and the methods of a database fit.

for (title in names(dbi_checks)) {
  test_that(title, {
    need_peer("RSQLite"); need_peer("dbplyr")
    dbi_checks[[title]]("RSQLite")
  })
}

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
