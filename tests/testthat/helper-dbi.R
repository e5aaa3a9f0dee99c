# The checks of the database back end (R/dbi.R, R/did_cs_db.R), run on
# SQLite by test-dbi.R (in CI) and on DuckDB by test-dbi-duckdb.R (where
# duckdb is installed: `make test-duckdb`): `driver` is "RSQLite" or
# "duckdb" (db_table(), helper-parity.R).

db_panel <- function(n = 300, T = 6, seed = 1) {
  set.seed(seed)
  d <- dd_sim_staggered(n_units = n, n_periods = T)
  d$st <- d$id %% 17
  d
}

# the largest absolute difference of two vectors with the same missing
# values (Inf when those differ)
num_diff <- function(x, y) if (!identical(is.na(x), is.na(y))) Inf else max(abs(x - y), 0, na.rm = TRUE)

# the largest absolute differences between the in-memory and the database
# fit (and their aggregations), each under the same seed
db_diff <- function(d, tb, ...) {
  set.seed(3); a <- did_cs(d, "y", "id", "time", "first_treat", ...)
  set.seed(3); b <- did_cs(tb, "y", "id", "time", "first_treat", ...)
  num <- num_diff
  r <- c(estimate = num(a$coeftable$estimate, b$coeftable$estimate),
         se = num(a$coeftable$std.error, b$coeftable$std.error),
         vcov = num(vcov(a), vcov(b)), pretest = num(a$pretest$W, b$pretest$W), crit = num(a$crit, b$crit))
  for (ty in c("simple", "group", "dynamic", "calendar")) {
    set.seed(4); x <- aggregate(a, ty)
    set.seed(4); y <- aggregate(b, ty)
    r[ty] <- max(num(x$coeftable$estimate, y$coeftable$estimate), num(x$coeftable$std.error, y$coeftable$std.error),
                 num(x$crit, y$crit))
  }
  expect_identical(b$coeftable$term, a$coeftable$term)
  expect_identical(b$n, a$n)
  expect_false(is.null(b$db))                     # the database path ran
  r
}

# did_cs on a database table equals the in-memory fit (analytic standard errors)
dbi_check_analytic <- function(driver) {
  d <- db_panel()
  tb <- db_table(d, driver = driver)
  q0 <- diffdiff:::dd_db_counts$queries
  for (a in list(list(), list(control_group = "notyettreated"), list(base_period = "universal"),
                 list(base_period = "universal", control_group = "notyettreated"),
                 list(anticipation = 1), list(anticipation = 1, control_group = "notyettreated"),
                 list(cluster = "st"), list(cluster = "st", control_group = "notyettreated", base_period = "universal"),
                 list(est_method = "reg"), list(est_method = "ipw"))) {
    r <- do.call(db_diff, c(list(d, tb, nboot = 0, cband = FALSE), a))
    expect_lt(max(r), 1e-10, label = paste(names(a), a, collapse = ", "))
  }
  expect_gt(diffdiff:::dd_db_counts$queries, q0)  # the fits queried the engine
}

# the multiplier bootstrap of a database fit draws the in-memory multipliers
dbi_check_bootstrap <- function(driver) {
  d <- db_panel()
  tb <- db_table(d, driver = driver)
  s0 <- diffdiff:::dd_db_counts$streams
  for (a in list(list(), list(boot_weights = "mammen", control_group = "notyettreated"),
                 list(boot_weights = "webb", base_period = "universal"), list(cluster = "st"))) {
    r <- do.call(db_diff, c(list(d, tb, nboot = 199), a))
    expect_lt(max(r), 1e-10, label = paste(names(a), a, collapse = ", "))
  }
  expect_gt(diffdiff:::dd_db_counts$streams, s0)  # unclustered: the units were streamed
  # the streamed bootstrap is a real one: its standard errors differ from the analytic ones
  set.seed(3); b <- did_cs(tb, "y", "id", "time", "first_treat", nboot = 199)
  a0 <- did_cs(tb, "y", "id", "time", "first_treat", nboot = 0)
  expect_gt(max(abs(b$coeftable$std.error - a0$coeftable$std.error)), 1e-3)
}

# the streamed bootstrap is the same for every chunk size (across 64-row words and 1,024)
dbi_check_chunks <- function(driver) {
  d <- db_panel(n = 2100, T = 4, seed = 5)
  tb <- db_table(d, driver = driver)
  set.seed(3); ref <- aggregate(did_cs(d, "y", "id", "time", "first_treat", nboot = 0), "dynamic", nboot = 99)
  f <- did_cs(tb, "y", "id", "time", "first_treat", nboot = 0)
  N <- f$n
  for (w in c("rademacher", "mammen")) {
    set.seed(3); ref <- aggregate(did_cs(d, "y", "id", "time", "first_treat", nboot = 0), "dynamic", nboot = 99,
                                  boot_weights = w)
    for (ch in c(63L, 64L, 65L, 1023L, 1024L, 1025L)) {
      st <- attr(f$inf, "db_stream"); st$chunk <- ch; attr(f$inf, "db_stream") <- st
      c0 <- diffdiff:::dd_db_counts$chunks
      set.seed(3); a <- aggregate(f, "dynamic", nboot = 99, boot_weights = w)
      expect_identical(diffdiff:::dd_db_counts$chunks - c0, as.integer(ceiling(N / ch)))   # chunks streamed
      expect_lt(max(abs(a$coeftable$std.error - ref$coeftable$std.error)), 1e-10, label = paste(w, "chunk", ch))
      expect_lt(abs(a$crit - ref$crit), 1e-10)
    }
  }
}

# the engine's checks and the in-memory fit's rules on the data
dbi_check_data <- function(driver) {
  d <- db_panel(n = 120, T = 5, seed = 2)
  # rows missing, or with a missing outcome: those units dropped, as in memory, with its warning
  d2 <- d[-c(3, 50), ]; d2$y[d2$id == 7 & d2$time == 2] <- NA
  tb2 <- db_table(d2, driver = driver)
  expect_warning(b <- did_cs(tb2, "y", "id", "time", "first_treat", nboot = 0), "3 units are missing in some periods")
  a <- suppressMessages(suppressWarnings(did_cs(d2, "y", "id", "time", "first_treat", nboot = 0)))
  expect_identical(b$n, a$n)
  expect_lt(num_diff(b$coeftable$std.error, a$coeftable$std.error), 1e-10)
  # the row order of the table does not matter
  tb3 <- db_table(d[rev(seq_len(nrow(d))), ], name = "rev", driver = driver)
  expect_identical(did_cs(tb3, "y", "id", "time", "first_treat", nboot = 0)$coeftable,
                   did_cs(db_table(d, name = "fwd", driver = driver), "y", "id", "time", "first_treat", nboot = 0)$coeftable)
  # duplicated (unit, period) rows, a cohort varying within a unit, missing identifiers
  expect_error(did_cs(db_table(rbind(d, d[1, ]), name = "dup", driver = driver), "y", "id", "time", "first_treat"),
               "1 unit\\(s\\) with more than one row in a period", class = "diffdiff_duplicated_rows")
  d4 <- d; d4$first_treat[d4$id == 2 & d4$time == 3] <- 4
  expect_error(did_cs(db_table(d4, name = "gvar", driver = driver), "y", "id", "time", "first_treat"),
               "`gname` = \"first_treat\" varies within 1 unit")
  d5 <- d; d5$id[4] <- NA
  expect_error(did_cs(db_table(d5, name = "idna", driver = driver), "y", "id", "time", "first_treat"),
               "`idname` = \"id\" is missing \\(NULL\\) in 1 row")
  d6 <- d; d6$st[d6$id == 3 & d6$time == 2] <- 99
  expect_error(did_cs(db_table(d6, name = "clvar", driver = driver), "y", "id", "time", "first_treat", cluster = "st"),
               "`cluster` = \"st\" varies within 1 unit")
  d7 <- d; d7$one <- 1
  expect_error(did_cs(db_table(d7, name = "onecl", driver = driver), "y", "id", "time", "first_treat", cluster = "one", nboot = 0),
               "single cluster")
  expect_error(did_cs(db_table(d, name = "cols", driver = driver), "y", "id", "year", "first_treat"),
               "`tname` = \"year\" is not a column of the database table")
  d8 <- d; d8$tc <- as.character(d8$time)
  expect_error(did_cs(db_table(d8, name = "tchar", driver = driver), "y", "id", "tc", "first_treat"), "`tname` = \"tc\" is not numeric")
  long <- dd_sim_staggered(n_units = 20, n_periods = 61)
  expect_error(did_cs(db_table(long, name = "long", driver = driver), "y", "id", "time", "first_treat"), "has 61 periods")
  # units treated in the first period are dropped with the in-memory warning; late cohorts are never treated
  d9 <- d; d9$first_treat[d9$id %in% 1:3] <- 1; d9$first_treat[d9$id %in% 4:5] <- 9
  expect_warning(expect_message(b <- did_cs(db_table(d9, name = "first", driver = driver), "y", "id", "time", "first_treat", nboot = 0),
                                "2 unit\\(s\\) first treated after the last period"),
                 "Dropped 3 units that were already treated in the first period")
  a <- suppressWarnings(suppressMessages(did_cs(d9, "y", "id", "time", "first_treat", nboot = 0)))
  expect_lt(num_diff(b$coeftable$std.error, a$coeftable$std.error), 1e-10)
  # no never-treated units: the in-memory rules (not-yet-treated: periods dropped; never-treated: an error)
  set.seed(4)
  d10 <- dd_sim_staggered(n_units = 120, n_periods = 5, cohorts = c(3, 4, 5))
  d10 <- d10[d10$first_treat > 0, ]
  tb10 <- db_table(d10, name = "nonever", driver = driver)
  expect_error(did_cs(tb10, "y", "id", "time", "first_treat"), "no never-treated units")
  b <- did_cs(tb10, "y", "id", "time", "first_treat", control_group = "notyettreated", nboot = 0)
  a <- did_cs(d10, "y", "id", "time", "first_treat", control_group = "notyettreated", nboot = 0)
  expect_identical(b$coeftable$term, a$coeftable$term)
  expect_lt(num_diff(b$coeftable$std.error, a$coeftable$std.error), 1e-10)
  # the table is not modified
  back <- DBI::dbReadTable(dbplyr::remote_con(tb10), "nonever")
  d10 <- as.data.frame(d10); rownames(d10) <- NULL
  expect_identical(back, d10)
}

# what needs the data in memory says so
dbi_check_memory <- function(driver) {
  d <- db_panel(n = 80, T = 4)
  d$w <- 1
  tb <- db_table(d, driver = driver)
  for (a in list(list(xformla = ~ st), list(weightsname = "w"), list(panel = FALSE), list(allow_unbalanced_panel = TRUE),
                 list(cband_method = "bootstrap-t"))) {
    e <- tryCatch(do.call(did_cs, c(list(tb, "y", "id", "time", "first_treat"), a)), error = function(e) e)
    expect_s3_class(e, "diffdiff_needs_memory")
    expect_match(conditionMessage(e), sprintf("did_cs\\(%s = .*needs the data in memory", names(a)))
  }
  expect_error(did_sa(tb, "y", "id", "time", "first_treat"),
               "did_sa\\(\\) needs the data in memory.*did_cs\\(\\) without covariates.*did_twfe\\(\\) without covariates.*did_event\\(\\) likewise")
  expect_error(did_bjs(tb, "y", "id", "time", "first_treat"), "did_bjs\\(\\) needs the data in memory")
  expect_error(did_check(tb, "y", "id", "time", gname = "first_treat"), "did_check\\(\\) needs the data in memory")
  f <- did_cs(tb, "y", "id", "time", "first_treat", nboot = 0)
  expect_error(placebo_test(f, "permutation", nperm = 5), "estimated on a database table")
  expect_error(aggregate(f, "dynamic", cband_method = "bootstrap-t", nboot = 9), "bootstrap-t\" needs the data in memory")
}

# every method works on the default fit of a database table
dbi_check_methods <- function(driver) {
  d <- db_panel(n = 150, T = 5)
  tb <- db_table(d, driver = driver)
  set.seed(1); f <- did_cs(tb, "y", "id", "time", "first_treat")
  set.seed(1); g <- did_cs(d, "y", "id", "time", "first_treat")
  expect_lt(max(abs(f$coeftable$std.error - g$coeftable$std.error)), 1e-10)
  out <- capture.output(print(f))
  expect_true(any(grepl("Data: a database table \\(tbl_.*, 750 rows\\)", out)))
  expect_s3_class(summary(f), "summary.dd_fit")
  expect_identical(names(generics::tidy(f)), names(generics::tidy(g)))
  expect_equal(generics::glance(f)$nobs, generics::glance(g)$nobs)
  expect_equal(dim(vcov(f)), dim(vcov(g)))
  expect_equal(confint(f), confint(g), tolerance = 1e-10)
  pdf(NULL); on.exit(grDevices::dev.off(), add = TRUE)
  expect_silent(plot(f))
  set.seed(2); e <- aggregate(f, "dynamic")
  expect_silent(plot(e))
}

# did_twfe on a database table equals the in-memory fit (every variance it
# takes there, absorbing and reversible treatments, an outcome far from 0)
dbi_check_twfe <- function(driver) {
  d <- db_panel(n = 300, T = 6)
  d$y <- d$y + 100
  set.seed(8)
  d$Dr <- as.integer(stats::runif(nrow(d)) < 0.3)        # a reversible treatment: many paths
  tb <- db_table(d, driver = driver)
  q0 <- diffdiff:::dd_db_counts$queries
  for (dn in c("D", "Dr")) for (a in list(list(), list(cluster = "st"), list(vcov = "iid"), list(vcov = "hetero"),
                                         list(vcov = "HC0"), list(cluster = ~ id))) {
    x <- do.call(did_twfe, c(list(d, "y", "id", "time", dn), a))
    y <- do.call(did_twfe, c(list(tb, "y", "id", "time", dn), a))
    lab <- paste(dn, names(a), a, collapse = " ")
    expect_false(is.null(y$db), label = lab)
    expect_lt(max(abs(c(x$coeftable$estimate - y$coeftable$estimate, x$coeftable$std.error - y$coeftable$std.error,
                        x$coeftable$p.value - y$coeftable$p.value, x$r2 - y$r2, x$r2_within - y$r2_within))), 1e-10,
              label = lab)
    expect_identical(c(y$df, y$nobs, y$n_units, y$n_periods), c(x$df, x$nobs, x$n_units, x$n_periods), label = lab)
    expect_identical(y$n_clusters, x$n_clusters, label = lab)
    expect_identical(y$vcov_label, x$vcov_label, label = lab)
  }
  expect_gt(diffdiff:::dd_db_counts$queries, q0)
  # the few-cluster warning, as in memory
  d$reg <- d$id %% 3
  expect_warning(did_twfe(db_table(d, driver = driver, name = "few"), "y", "id", "time", "D", cluster = "reg"),
                 "3 clusters with treated observations and 3 with untreated")
  # what needs memory, and the data checks
  for (a in list(list(xformla = ~ st), list(fe = "st"), list(nboot = 99), list(vcov = "CR2"), list(cluster = c("id", "st"))))
    expect_error(do.call(did_twfe, c(list(tb, "y", "id", "time", "D"), a)), "needs the data in memory",
                 class = "diffdiff_needs_memory")
  d2 <- d[-5, ]
  expect_error(did_twfe(db_table(d2, driver = driver, name = "unbal"), "y", "id", "time", "D"),
               "unbalanced panel \\(1 unit\\(s\\)", class = "diffdiff_needs_memory")
  d3 <- d; d3$D[3] <- 2
  expect_error(did_twfe(db_table(d3, driver = driver, name = "bin"), "y", "id", "time", "D"), "0/1 treatment indicator")
  d4 <- d; d4$D <- as.integer(d4$first_treat > 0)
  expect_error(did_twfe(db_table(d4, driver = driver, name = "coll"), "y", "id", "time", "D"), "collinear")
  f <- did_twfe(tb, "y", "id", "time", "D")
  expect_error(residuals(f), "database table", class = "diffdiff_needs_memory")
  expect_true(any(grepl("ATT", utils::capture.output(print(f)))))
}

# did_event on a database table equals the in-memory fit (references,
# windows, every variance it takes there)
dbi_check_event <- function(driver) {
  d <- db_panel(n = 300, T = 8)
  d$y <- d$y + 50
  tb <- db_table(d, driver = driver)
  for (a in list(list(), list(cluster = "st"), list(vcov = "iid"), list(vcov = "hetero"), list(window = c(-3, 2)),
                 list(ref = c(-1, -5)), list(ref = -2, window = c(-4, 3), cluster = "st"))) {
    x <- do.call(did_event, c(list(d, "y", "id", "time", "first_treat"), a))
    y <- do.call(did_event, c(list(tb, "y", "id", "time", "first_treat"), a))
    lab <- paste(names(a), a, collapse = " ")
    expect_false(is.null(y$db), label = lab)
    expect_identical(y$coeftable$term, x$coeftable$term, label = lab)
    expect_identical(y$coeftable$event, x$coeftable$event, label = lab)
    expect_lt(max(abs(c(x$coeftable$estimate - y$coeftable$estimate, x$coeftable$std.error - y$coeftable$std.error,
                        vcov(x) - vcov(y), x$r2 - y$r2, x$r2_within - y$r2_within))), 1e-10, label = lab)
    expect_identical(c(y$df, y$nobs), c(x$df, x$nobs), label = lab)
    expect_identical(y$event_study$reference, x$event_study$reference, label = lab)
  }
  y <- did_event(tb, "y", "id", "time", "first_treat")
  x <- did_event(d, "y", "id", "time", "first_treat")
  h1 <- honest_did(y, type = "SD", M = c(0, 0.05)); h0 <- honest_did(x, type = "SD", M = c(0, 0.05))
  expect_lt(max(abs(h1$results$lb - h0$results$lb), abs(h1$results$ub - h0$results$ub)), 1e-8)
  expect_error(did_event(tb, "y", "id", "time", "first_treat", nboot = 9, cband = TRUE), "needs the data in memory",
               class = "diffdiff_needs_memory")
  expect_error(did_event(tb, "y", "id", "time", "first_treat", ref = 99), "`ref` = 99 is not a relative period")
}

# aggregate_survey on a database table equals the in-memory result (one-stage
# designs: strata and PSUs, PSUs only, strata only, weights only)
dbi_check_survey <- function(driver) {
  d <- sim_panel()
  d <- d[d$state != 1, ]                                 # (state 1 has a single PSU)
  d$y2 <- 3 * d$y + 1000                                 # an outcome far from 0
  d$cell <- sprintf("s%02d", d$state)                    # a character `by` column
  tb <- db_table(d, driver = driver)
  q0 <- diffdiff:::dd_db_counts$queries
  for (a in list(list(weights = ~ w, strata = ~ state, ids = ~ id, nest = TRUE), list(weights = ~ w, ids = ~ id),
                 list(weights = ~ w, strata = ~ state), list(weights = "w"))) {
    for (by in list(c("state", "year"), ~ cell + year)) {
      x <- aggregate_survey(d, c("y", "y2"), by, do.call(survey_design, c(list(d), a)))
      y <- aggregate_survey(tb, c("y", "y2"), by, do.call(survey_design, c(list(tb), a)))
      lab <- paste(names(a), a, collapse = " ")
      expect_identical(names(y), names(x), label = lab)
      for (v in setdiff(names(x), c("y", "y2", "y_se", "y2_se", "n_eff", "weight_sum")))
        expect_identical(y[[v]], x[[v]], label = paste(lab, v))
      for (v in c("y", "y2", "y_se", "y2_se", "n_eff", "weight_sum"))
        expect_lt(max(abs(y[[v]] - x[[v]]) / pmax(1, abs(x[[v]]))), 1e-10, label = paste(lab, v))
      expect_identical(attr(y, "weights_column"), "weight_sum")
    }
  }
  expect_gt(diffdiff:::dd_db_counts$queries, q0)
  # a single PSU in a stratum, PSU labels across strata without nest, what needs memory
  tb1 <- db_table(sim_panel(), driver = driver, name = "lonely")
  expect_error(aggregate_survey(tb1, "y", c("state", "year"), survey_design(tb1, weights = ~ w, strata = ~ state, ids = ~ id)),
               "Stratum \\(1\\) has only one PSU")
  d2 <- d; d2$psu <- d2$id %% 7
  tb2 <- db_table(d2, driver = driver, name = "psu")
  expect_error(aggregate_survey(tb2, "y", "year", survey_design(tb2, weights = ~ w, strata = ~ state, ids = ~ psu)),
               "appear in more than one stratum; use nest = TRUE")
  for (a in list(list(weights = ~ w, fpc = ~ x1), list(weights = ~ w, lonely_psu = "adjust"),
                 list(weights = ~ w, ids = ~ state + id)))
    expect_error(do.call(survey_design, c(list(tb), a)), "needs the data in memory", class = "diffdiff_needs_memory")
  expect_error(aggregate_survey(tb, "y", "year", survey_design(d, weights = ~ w)), "must be survey_design\\(\\) of that table")
  expect_error(aggregate_survey(tb, "nope", "year", survey_design(tb, weights = ~ w)), "`ynames` = \"nope\" is not a column")
  d3 <- d; d3$y[2] <- NA
  tb3 <- db_table(d3, driver = driver, name = "yna")
  expect_error(aggregate_survey(tb3, "y", "year", survey_design(tb3, weights = ~ w)), "`ynames` column \"y\" has missing")
}

# did_2x2 on a database table equals the in-memory fit
dbi_check_2x2 <- function(driver) {
  d <- sim_panel()
  d$post <- as.integer(d$year >= 2006)
  d$y <- d$y + 100
  tb <- db_table(d, driver = driver)
  for (a in list(list(), list(cluster = "id"), list(cluster = ~ state), list(vcov = "iid"), list(vcov = "HC0"))) {
    x <- do.call(did_2x2, c(list(d, "y", "treat", "post"), a))
    y <- do.call(did_2x2, c(list(tb, "y", "treat", "post"), a))
    lab <- paste(names(a), a, collapse = " ")
    expect_false(is.null(y$db), label = lab)
    expect_identical(y$coeftable$term, x$coeftable$term, label = lab)
    expect_lt(max(abs(c(x$coeftable$estimate - y$coeftable$estimate, x$coeftable$std.error - y$coeftable$std.error,
                        vcov(x) - vcov(y), x$r2 - y$r2))), 1e-10, label = lab)
    expect_identical(list(y$df, y$nobs, y$n_clusters, y$vcov_label), list(x$df, x$nobs, x$n_clusters, x$vcov_label),
                     label = lab)
  }
  d2 <- d[!(d$treat == 1 & d$post == 0), ]
  expect_error(did_2x2(db_table(d2, driver = driver, name = "nocell"), "y", "treat", "post"),
               "the \\(treat = 1, post = 0\\) cell has no observations")
  expect_error(did_2x2(tb, "y", "treat", "post", xformla = ~ x1), "needs the data in memory", class = "diffdiff_needs_memory")
  expect_error(did_2x2(tb, "y", "treat", "year"), "`postname` = \"year\" must be 0/1")
}

# the checks, by title (test-dbi.R runs them on SQLite, test-dbi-duckdb.R on DuckDB)
dbi_checks <- list(
  "did_cs on a database table equals the in-memory fit (analytic standard errors)" = dbi_check_analytic,
  "the multiplier bootstrap of a database fit draws the in-memory multipliers" = dbi_check_bootstrap,
  "the streamed bootstrap is the same for every chunk size (across 64-row words and 1,024)" = dbi_check_chunks,
  "the engine's checks and the in-memory fit's rules on the data" = dbi_check_data,
  "what needs the data in memory says so" = dbi_check_memory,
  "every method works on the default fit of a database table" = dbi_check_methods,
  "did_twfe on a database table equals the in-memory fit" = dbi_check_twfe,
  "did_event on a database table equals the in-memory fit" = dbi_check_event,
  "did_2x2 on a database table equals the in-memory fit" = dbi_check_2x2,
  "aggregate_survey on a database table equals the in-memory cells" = dbi_check_survey)
