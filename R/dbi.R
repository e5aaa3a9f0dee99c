# The database back end: a panel that lives in a database (a dbplyr table,
# `dplyr::tbl(con, "panel")`, e.g. a DuckDB view over Parquet files) is
# estimated by pushing the pass over its rows into the engine as SQL and
# pulling back only small tables: per cohort, the number of units, the mean
# outcome path and the centred cross-moments of the outcome paths (and, with
# a cluster coarser than the unit, the centred sums of each cluster and
# cohort). The estimators whose statistics are functions of those moments
# (did_cs without covariates, R/did_cs_db.R) take them from here; the
# multiplier bootstrap streams the units back in chunks, in the order the
# in-memory fit keeps them. The SQL is plain (CTEs, CASE, GROUP BY, joins)
# with identifiers quoted by DBI and casts translated by dbplyr, so that any
# engine with a DBI driver and a dbplyr back end can serve (tested on
# RSQLite and DuckDB).

# the estimators (and what of them) that take a database table
dd_db_estimators <- c(did_cs = "did_cs() without covariates, weights or a survey design, on a balanced panel",
                      did_twfe = "did_twfe() without covariates, weights, extra fixed effects or the wild bootstrap, on a balanced panel (iid, HC0/HC1 or one-way clustered variance)",
                      did_event = "did_event() likewise",
                      did_2x2 = "did_2x2() without covariates, weights or the wild bootstrap",
                      aggregate_survey = "aggregate_survey() with a one-stage design (weights, strata, PSUs)")

dd_is_db <- function(data) inherits(data, "tbl_sql")

# the error for an estimator (or option) that needs the data in memory;
# `what`: the function, or the option and its value
dd_db_in_memory <- function(data, what) {
  dd_stop("`data` is a database table (class %s); %s needs the data in memory: collect() it first (dplyr::collect(data)). What runs in the database: %s.",
          class(data)[1], what, paste(dd_db_estimators, collapse = "; "), .code = "NEEDS_MEMORY")
}

# the exported diffdiff function the user called (the outermost on the
# stack), for messages
dd_caller_name <- function() {
  ex <- getNamespaceExports("diffdiff")
  for (cl in sys.calls()) {
    h <- cl[[1L]]
    nm <- if (is.name(h)) as.character(h)
          else if (is.call(h) && as.character(h[[1L]])[1] %in% c("::", ":::")) as.character(h[[3L]]) else NA_character_
    if (!is.na(nm) && nm %in% ex) return(paste0(nm, "()"))
  }
  "this function"
}

# The table: its connection, the query it stands for (as a subquery), its
# columns (the roles checked: each a column of the table), a quoting
# function and the roles' quoted names.
dd_db_open <- function(data, cols, fun) {
  for (p in c("DBI", "dbplyr"))
    if (!requireNamespace(p, quietly = TRUE))
      dd_stop("`data` is a database table; %s() reads it through the package %s: install.packages(\"%s\").",
              fun, p, p)
  have <- colnames(data)
  for (a in names(cols)) {
    v <- cols[[a]]
    if (is.null(v)) next
    dd_check_string(v, a)
    if (!v %in% have)
      dd_stop("`%s` = \"%s\" is not a column of the database table `data` (its columns: %s).", a, v,
              dd_show(have, max = 8L))
  }
  con <- dbplyr::remote_con(data)
  q <- function(x) as.character(DBI::dbQuoteIdentifier(con, x))
  list(con = con, from = sprintf("(%s) dd_q", as.character(dbplyr::sql_render(data))), q = q,
       col = lapply(cols[!vapply(cols, is.null, logical(1))], q),
       num = dd_db_cast(con))
}

# a count from the engine as the in-memory fits hold it: an integer while it fits
dd_db_count <- function(x) if (x <= .Machine$integer.max) as.integer(x) else as.double(x)

# a function casting an SQL expression to a binary double: DuckDB's DOUBLE;
# otherwise dbplyr's translation of as.double(), unless it names an exact
# numeric type (NUMERIC, DECIMAL: Postgres, and DuckDB's NUMERIC is
# DECIMAL(18,3), which would round the outcomes), then DOUBLE PRECISION
dd_db_cast <- function(con) {
  if (inherits(con, "duckdb_connection")) return(function(e) sprintf("CAST(%s AS DOUBLE)", e))
  probe <- as.character(dbplyr::translate_sql(as.double(!!dbplyr::sql("dd_x")), con = con))
  if (grepl("NUMERIC|DECIMAL", probe, ignore.case = TRUE)) return(function(e) sprintf("CAST(%s AS DOUBLE PRECISION)", e))
  function(e) sub("dd_x", e, probe, fixed = TRUE)
}

dd_db_get <- function(src, sql) {
  dd_db_counts$queries <- dd_db_counts$queries + 1L
  DBI::dbGetQuery(src$con, sql)
}

# a number as an SQL literal (periods): exact for doubles
dd_db_lit <- function(v) {
  if (!is.numeric(v) || anyNA(v) || any(!is.finite(v))) dd_stop("internal error: a non-finite SQL literal; please report.")
  formatC(v, digits = 17, format = "g")
}

# `sql` for each role: sum of a condition over rows
dd_db_count_if <- function(cond) sprintf("SUM(CASE WHEN %s THEN 1 ELSE 0 END)", cond)

# The unit-level key of the estimation (a per-unit aggregate): did_cs's
# first treated period, MIN(gname); did_twfe's treatment path, the sum over
# the periods j of d_j 2^(j - 1) (exact in doubles up to 52 periods).
dd_db_key <- function(src, kind, periods = NULL) {
  c <- src$col
  if (kind == "cohort") return(sprintf("MIN(%s)", c$gname))
  pw <- formatC(2^(seq_along(periods) - 1), format = "f", digits = 0)
  sprintf("SUM(CASE %s ELSE 0 END)", paste(sprintf("WHEN %s = %s THEN %s * %s", c$tname, dd_db_lit(periods),
                                                   src$num(c$dname), pw), collapse = " "))
}

# The panel's rows checked in the engine (missing identifiers and periods,
# duplicated (unit, period) pairs, a cohort or cluster that varies within a
# unit; with kind = "path", a treatment that is missing or not 0/1) and its
# periods and units by key (dd_db_key). Returns the periods, the keys (raw
# values, NA for missing) with their unit counts and the counts of units
# with every period observed.
dd_db_check_panel <- function(src, roles, kind = "cohort") {
  c <- src$col
  path <- kind == "path"
  nulls <- c(idname = "na_id", tname = "na_t", cluster = "na_cl", dname = "na_d")
  chk <- intersect(c("idname", "tname", if (!is.null(c$cluster)) "cluster", if (path) "dname"), names(c))
  s <- dd_db_get(src, sprintf("SELECT COUNT(*) AS n_rows, %s%s FROM %s",
                              paste(sprintf("%s AS %s", dd_db_count_if(paste(unlist(c[chk]), "IS NULL")), nulls[chk]),
                                    collapse = ", "),
                              if (path) sprintf(", %s AS bad_d", dd_db_count_if(sprintf("%s NOT IN (0, 1)", c$dname)))
                              else "", src$from))
  if (s$n_rows == 0) dd_stop("`data` (a database table) has no rows.")
  for (r in chk) {
    k <- s[[nulls[[r]]]]
    if (k > 0)
      dd_stop("`%s` = \"%s\" is missing (NULL) in %s row(s) of the database table; filter them out first (dplyr::filter(!is.na(%s))).",
              r, roles[[r]], format(k), roles[[r]])
  }
  if (path && s$bad_d > 0)
    dd_stop("`dname` = \"%s\" must be a 0/1 treatment indicator; %s row(s) of the database table have other values.",
            roles$dname, format(s$bad_d))
  per <- dd_db_get(src, sprintf("SELECT DISTINCT %s AS t FROM %s ORDER BY 1", c$tname, src$from))$t
  if (!is.numeric(per))
    dd_stop("`tname` = \"%s\" is not numeric in the database table (it is %s); the database back end orders periods by their values.",
            roles$tname, class(per)[1])
  if (length(per) < 2L) dd_stop("`tname` = \"%s\" has a single period; a panel needs at least two.", roles$tname)
  tmax <- if (path) 52L else 60L
  if (length(per) > tmax)
    dd_stop("`tname` = \"%s\" has %d periods; the database back end handles up to %d (it forms the %d cross-moments of the outcome paths in the engine). collect() the table to estimate in memory.",
            roles$tname, length(per), tmax, length(per) * (length(per) + 1L) / 2L)
  T <- length(per)
  cl <- c$cluster
  key <- dd_db_key(src, kind, per)
  u <- dd_db_get(src, sprintf(paste0(
    "WITH u AS (SELECT %s AS g0, %s COUNT(*) AS nr, COUNT(DISTINCT %s) AS nt, ",
    "COUNT(%s) AS ny%s FROM %s GROUP BY %s) ",
    "SELECT g0 AS g, COUNT(*) AS n, %s AS n_complete, %s AS bad_g, %s AS dup%s FROM u GROUP BY g0"),
    key, if (path) "" else sprintf("MAX(%s) AS g1, %s AS gn, ", c$gname, dd_db_count_if(paste(c$gname, "IS NULL"))),
    c$tname, c$yname, if (is.null(cl)) "" else sprintf(", MIN(%s) AS c0, MAX(%s) AS c1", cl, cl), src$from, c$idname,
    dd_db_count_if(sprintf("nr = %d AND ny = %d", T, T)),
    if (path) "0" else dd_db_count_if("g0 <> g1 OR (gn > 0 AND gn < nr)"),
    dd_db_count_if("nt < nr"), if (is.null(cl)) "" else paste0(", ", dd_db_count_if("c0 <> c1"), " AS bad_c")))
  if (sum(u$dup) > 0)
    dd_stop("`data` (a database table) has %s unit(s) with more than one row in a period (`idname` = \"%s\", `tname` = \"%s\"); a panel has one row per unit and period.",
            format(sum(u$dup)), roles$idname, roles$tname, .code = "DUPLICATED_ROWS")
  if (sum(u$bad_g) > 0)
    dd_stop("`gname` = \"%s\" varies within %s unit(s) of the database table; it must be constant within units (each unit's first treated period).",
            roles$gname, format(sum(u$bad_g)))
  if (!is.null(cl) && sum(u$bad_c) > 0)
    dd_stop("`cluster` = \"%s\" varies within %s unit(s) of the database table; the database back end clusters units, so the cluster must be constant within units.",
            roles$cluster, format(sum(u$bad_c)))
  if (!is.numeric(u$g) && !all(is.na(u$g)))
    dd_stop("`gname` = \"%s\" is not numeric in the database table (it is %s).", roles$gname, class(u$g)[1])
  list(periods = as.double(per), g = as.double(u$g), n = as.double(u$n), n_complete = as.double(u$n_complete),
       n_rows = as.double(s$n_rows))
}

# The per-unit table as SQL (a CTE body): over the rows of `periods` (the
# periods the fit keeps), one row per unit with every such period observed
# (the others are dropped, as the in-memory fit drops them), its key
# (dd_db_key: the first treated period, coded 0 for the never treated by
# the SQL condition `never` on the raw value dd_G; or the treatment path),
# outcomes dd_y1..dd_yT in period order, the cluster (dd_c); units in
# `drop` (an SQL condition) left out.
dd_db_units_sql <- function(src, periods, never = "(1 = 0)", drop = "(1 = 0)", kind = "cohort") {
  c <- src$col
  T <- length(periods)
  ys <- vapply(seq_len(T), function(j) sprintf("SUM(CASE WHEN %s = %s THEN %s END) AS dd_y%d", c$tname,
                                               dd_db_lit(periods[j]), src$num(c$yname), j), "")
  raw <- sprintf("SELECT %s AS dd_id, %s AS dd_graw, %s%s FROM %s WHERE %s IN (%s) GROUP BY %s HAVING COUNT(%s) = %d AND COUNT(*) = %d",
                 c$idname, dd_db_key(src, kind, periods), paste(ys, collapse = ", "),
                 if (is.null(c$cluster)) "" else sprintf(", MIN(%s) AS dd_c", c$cluster), src$from,
                 c$tname, paste(dd_db_lit(periods), collapse = ", "), c$idname, c$yname, T, T)
  sprintf("dd_u0 AS (%s), dd_u AS (SELECT dd_id, CASE WHEN %s THEN 0 ELSE dd_graw END AS dd_g, %s%s FROM dd_u0 WHERE NOT (%s))",
          raw, gsub("dd_G", "dd_graw", never, fixed = TRUE), paste0("dd_y", seq_len(T), collapse = ", "),
          if (is.null(c$cluster)) "" else ", dd_c", gsub("dd_G", "dd_graw", drop, fixed = TRUE))
}

# The cohort moments: per cohort (dd_g, 0 = never treated) the units n, the
# mean outcome of each period and the centred cross-moments
# sum_i (y_is - m_s)(y_it - m_t); with a cluster, also per cluster and
# cohort the units and the centred sums sum_i (y_it - m_t).
dd_db_moments <- function(src, units_sql, T, cluster = FALSE) {
  y <- paste0("dd_y", seq_len(T)); m <- paste0("dd_m", seq_len(T))
  means <- sprintf("dd_m AS (SELECT dd_g, COUNT(*) AS dd_n, %s FROM dd_u GROUP BY dd_g)",
                   paste(sprintf("AVG(%s) AS %s", y, m), collapse = ", "))
  ij <- which(upper.tri(diag(T), diag = TRUE), arr.ind = TRUE)
  ij <- ij[order(ij[, 1], ij[, 2]), , drop = FALSE]
  prods <- sprintf("SUM((dd_u.%s - dd_m.%s) * (dd_u.%s - dd_m.%s)) AS dd_q%d_%d", y[ij[, 1]], m[ij[, 1]], y[ij[, 2]],
                   m[ij[, 2]], ij[, 1], ij[, 2])
  mom <- dd_db_get(src, sprintf("WITH %s, %s SELECT dd_m.dd_g AS dd_g, MIN(dd_m.dd_n) AS dd_n, %s, %s FROM dd_u JOIN dd_m ON dd_u.dd_g = dd_m.dd_g GROUP BY dd_m.dd_g ORDER BY 1",
                                units_sql, means, paste(sprintf("MIN(dd_m.%s) AS %s", m, m), collapse = ", "),
                                paste(prods, collapse = ", ")))
  nb <- nrow(mom)
  Q <- array(0, c(T, T, nb))
  for (b in seq_len(nb)) {
    q <- matrix(0, T, T)
    q[ij] <- as.double(unlist(mom[b, sprintf("dd_q%d_%d", ij[, 1], ij[, 2])]))
    q[ij[, 2:1, drop = FALSE]] <- q[ij]
    Q[, , b] <- q
  }
  out <- list(g = as.double(mom$dd_g), n = as.double(mom$dd_n),
              mean = matrix(as.double(unlist(mom[, m])), nb, T), Q = Q)
  if (cluster) {
    cs <- dd_db_get(src, sprintf("WITH %s, %s SELECT dd_u.dd_c AS dd_c, dd_u.dd_g AS dd_g, COUNT(*) AS dd_n, %s FROM dd_u JOIN dd_m ON dd_u.dd_g = dd_m.dd_g GROUP BY dd_u.dd_c, dd_u.dd_g",
                                 units_sql, means,
                                 paste(sprintf("SUM(dd_u.%s - dd_m.%s) AS dd_s%d", y, m, seq_len(T)), collapse = ", ")))
    out$clusters <- list(c = cs$dd_c, g = as.double(cs$dd_g), n = as.double(cs$dd_n),
                         s = matrix(as.double(unlist(cs[, paste0("dd_s", seq_len(T))])), nrow(cs), T))
  }
  out
}

# Stream the units (cohort, outcomes) in the in-memory fit's order: by
# cohort, the never treated last, then by identifier; fun(chunk) for each
# chunk of at most `chunk` units (a data frame: dd_g, dd_y1..dd_yT).
dd_db_counts <- new.env(parent = emptyenv())
dd_db_counts$streams <- 0L; dd_db_counts$chunks <- 0L; dd_db_counts$queries <- 0L   # (the tests read them: which path ran)

dd_db_stream <- function(src, units_sql, T, fun, chunk = 65536L) {
  dd_db_counts$streams <- dd_db_counts$streams + 1L
  res <- DBI::dbSendQuery(src$con, sprintf(
    "WITH %s SELECT dd_g, %s FROM dd_u ORDER BY CASE WHEN dd_g = 0 THEN 1 ELSE 0 END, dd_g, dd_id", units_sql,
    paste0("dd_y", seq_len(T), collapse = ", ")))
  on.exit(DBI::dbClearResult(res))
  while (!DBI::dbHasCompleted(res)) {
    ch <- DBI::dbFetch(res, n = chunk)
    if (nrow(ch)) {
      dd_db_counts$chunks <- dd_db_counts$chunks + 1L
      fun(ch)
    }
  }
  invisible(NULL)
}
