#' Callaway and Sant'Anna (2021) staggered difference-in-differences
#'
#' Group-time average treatment effects ATT(g,t) for staggered adoption, equal
#' to `did::att_gt()` (did 2.5.1, DRDID 1.4.0) number for number: the same
#' cells, base periods, comparison groups, estimators and influence functions.
#' Each ATT(g,t) is a 2x2 comparison of cohort g with the comparison units
#' between a base period and t, estimated by outcome regression (`"reg"`),
#' standardised inverse probability weighting (`"ipw"`) or the doubly robust
#' estimator (`"dr"`, the default) of Sant'Anna and Zhao (2020), with did's
#' propensity-score trimming (comparison units with scores >= 0.995 get zero
#' weight) and its overlap guard (a cell whose unweighted propensity score
#' reaches 0.999 is `NA`, with a warning). Use [aggregate.did_cs()] for the
#' simple, group, dynamic (event-study) and calendar summaries.
#'
#' Data rules, as did applies them: `gname` is the first treated period; 0,
#' `Inf` (and, in diffdiff, `NA`) mean never treated, and so does a first
#' treated period after the last period plus `anticipation` (with a message).
#' Units treated by the first period (plus `anticipation`) are dropped with a
#' warning. Other `gname` values must be periods of the data. In a panel,
#' units missing some period are dropped (warning) unless
#' `allow_unbalanced_panel = TRUE`. Covariates may vary over time: each cell
#' takes covariates and weights from the earlier of its two periods (did's
#' rule). Without never-treated units, `control_group = "nevertreated"` is an
#' error (did would silently recode the last cohort); with `"notyettreated"`
#' the periods from the last cohort's treatment on are dropped, as did does.
#'
#' Inference: influence-function standard errors (analytic when `nboot = 0`,
#' cluster-robust when `cluster` names a variable other than `idname`), or the
#' multiplier bootstrap (`nboot` draws, did's Rademacher weights by default;
#' standard errors from the interquartile range; `cband = TRUE` adds the sup-t
#' uniform band). The bootstrap runs in C from a seed taken from R's RNG, so
#' `set.seed()` reproduces it for any thread count and any order of the rows
#' of `data`; its draws differ from
#' did's (which are not thread-safe), so bootstrap numbers agree with did's in
#' distribution, not digit for digit. The print method reports the Wald
#' pre-test of parallel trends (did's, on the analytic variance).
#'
#' @section Standard errors and their estimand:
#' The standard error of an ATT(g,t) targets that ATT(g,t). The aggregations
#' of [aggregate.did_cs()] weight cohorts by their estimated shares, and
#' their influence functions include the estimation of those shares (did's
#' weight-estimation term), so their standard errors target the aggregate
#' with the POPULATION cohort shares (the expected shares of the population
#' the units are drawn from); for the aggregate with the sample's realised
#' shares they are conservative when effects differ across cohorts. This is
#' the target of [did_gardner()]'s standard errors too, whereas [did_sa()]
#' and [did_bjs()] target the realised-share averages.
#'
#' The uniform band (`cband = TRUE`) is did's sup-t band: its critical value
#' is the 95% quantile of the largest bootstrap t statistic, each draw being
#' divided by the bootstrap standard error of its cell. With many cells and
#' few units per cohort it undercovers, as did's own band does: the critical
#' value treats the standard errors as known and is estimated from the
#' cells' sample correlation, and more bootstrap draws do not help. In the
#' Monte Carlo study of the source repository (`bench/coverage/cs_band.R`: 36
#' cells, about 30 units per cohort and 30 never treated) the nominal 95%
#' band covered 88.1% of 2000 draws (did 2.5.1's own band: 88.4% of 500);
#' with 120 units per cohort, 93.2% of 1000.
#'
#' `cband_method = "bootstrap-t"` is the remedy: a wild bootstrap-t critical
#' value. Each bootstrap draw is divided by the standard error that the draw
#' itself would report (from its multiplied influence functions, recentred
#' within each cohort and within the never-treated units), so that the
#' critical value accounts for the estimation of the standard errors; the
#' standard errors and the band are then the analytic influence-function
#' ones. In the same study it covered 94.2% of 2000 draws (36 cells, 30
#' units per cohort), 94.9% of 1000 (12 cells) and 94.8% of 1000 (120 units
#' per cohort); its band was about 10% wider than did's. It matters when there
#' are many cells (a band over a long event study) and a few dozen units per
#' cohort; with hundreds of units per cohort the two bands agree. The
#' recentring within cohorts is exact for the unconditional estimator with
#' never-treated comparisons (the case studied); with covariates or
#' not-yet-treated comparisons it is an approximation. It needs each cluster
#' (if `cluster` is given) inside one cohort and is not available with a
#' `survey` design. See `vignette("coverage", package = "diffdiff")`.
#'
#' @section Data in a database:
#' When `data` is a database table, the pass over its rows runs in the
#' database engine as SQL (through DBI, with casts translated by dbplyr)
#' and only small tables come back: per cohort, the number of units, the
#' mean outcome of each period and the centred cross-moments of the
#' outcome paths (with a `cluster` coarser than the unit, also per cluster
#' and cohort the centred sums). Without covariates and weights these
#' determine every ATT(g,t), their influence-function variance, the
#' aggregations of [aggregate.did_cs()] and the pre-test exactly: the
#' numbers equal the in-memory fit of the same data (to about 1e-15;
#' tested to 1e-10 on SQLite and DuckDB). The multiplier bootstrap streams
#' the units back in chunks, ordered as the in-memory fit orders them (by
#' cohort, the never treated last, then by identifier), so that each unit
#' gets the same multipliers and the bootstrap equals the in-memory one;
#' with character identifiers the database's collation orders them, and
#' the draws, equally valid, differ from the in-memory fit's. Periods must
#' be numeric, at most 60; units missing a period (or its outcome) are
#' dropped, as in memory. Covariates (`xformla`), `weightsname`, `survey`,
#' repeated cross-sections (`panel = FALSE`), `allow_unbalanced_panel` and
#' `cband_method = "bootstrap-t"` need the data in memory, and an error
#' says so; so does `placebo_test()`, and `summary(fit, cluster = )` asks
#' for a refit (`update(fit, cluster = )`, which runs in the engine). Any engine
#' with a DBI driver and a dbplyr back end can serve (DuckDB, SQLite,
#' Postgres; Spark through sparklyr is expected to work but is not tested).
#'
#' @param data A long data frame (data.frame, data.table or tibble); never
#'   modified. Or a database table (a dbplyr table, `dplyr::tbl(con,
#'   "panel")`, e.g. a DuckDB view over Parquet files): see "Data in a
#'   database".
#' @param yname,idname,tname,gname Outcome, unit identifier, period (numeric)
#'   and first-treated-period columns, in the package's one positional order
#'   (did's `att_gt()` takes `tname` before `idname`: name the arguments, or
#'   swap them, when moving a positional did call).
#' @param xformla Optional one-sided covariate formula (did's `xformla`).
#' @param control_group `"nevertreated"` (default) or `"notyettreated"`.
#' @param anticipation Number of periods of anticipation (default 0).
#' @param base_period `"varying"` (default) or `"universal"`.
#' @param est_method `"dr"` (default), `"ipw"` or `"reg"`.
#' @param weightsname Optional sampling-weight column.
#' @param panel `TRUE` for panel data, `FALSE` for repeated cross-sections.
#' @param allow_unbalanced_panel Keep units missing some periods (estimated
#'   with the repeated cross-section estimators, influence functions summed by
#'   unit, as did does).
#' @param cluster Optional column to cluster by, constant within unit
#'   (`idname` is always the unit of resampling; naming it changes nothing).
#' @param nboot Multiplier-bootstrap draws; 0 for analytic standard errors.
#'   Default 1000 (did's `biters`).
#' @param boot_weights `"rademacher"` (default, did's), `"mammen"` or `"webb"`.
#' @param cband Uniform confidence band over all ATT(g,t) (bootstrap only).
#' @param cband_method `"sup-t"` (default, did's band: draws studentised by
#'   their bootstrap standard errors) or `"bootstrap-t"` (each draw studentised
#'   by its own standard error; standard errors analytic; `nboot` draws). See
#'   the section on the uniform band.
#' @param alpha Significance level (did's `alp`).
#' @param survey Optional complex survey design of `data` ([survey_design()]
#'   or a survey package design; in a panel each unit within one PSU): its
#'   weights are the sampling weights, and the standard errors of ATT(g,t) and
#'   of every aggregate are design-based variances of the influence-function
#'   totals (Taylor linearisation over strata and PSUs, as
#'   `survey::svytotal()`; or the replicate weights); the multiplier bootstrap
#'   then draws one multiplier per PSU on the PSU totals centred within strata.
#'   Intervals stay normal, as survey's `confint()` for totals. Not combined
#'   with `weightsname` or `cluster`; multistage designs with a finite
#'   population correction below the first stage are not supported yet.
#' @param ... did's spellings: `alp`, `bstrap`, `biters`, `clustervars`; and
#'   did's `print_details`, `pl` and `cores`, accepted and ignored (diffdiff
#'   prints nothing while it runs and sets its threads with [dd_threads()]),
#'   so that an `att_gt()` call runs after renaming the function.
#' @return An object of class `c("did_cs", "dd_fit")` with one row per
#'   ATT(g,t) (columns `group`, `time`, `event`), the pre-test (`pretest`),
#'   and the influence functions `inf`, stored block-sparse (each cell is
#'   zero outside its cohorts): `as.matrix(fit$inf)` gives the dense
#'   n x (K + G) matrix, K cells then the G cohort-share columns the
#'   aggregations use, with rows in the order of `fit$units` (by cohort, then
#'   by identifier, whatever the order of the rows of `data`; the bootstrap
#'   draws its multipliers in this order). A did_cs
#'   standard error is `sqrt(colSums(as.matrix(fit$inf)^2))[k] / fit$n`.
#'   `vcov(fit)` forms the K x K covariance on demand (n K^2 work, more than
#'   the estimation itself with many cells), so `fit$vcov` is `NULL` (as for
#'   the aggregations); the event study of `aggregate(type = "dynamic")`
#'   stores its covariance in `$event_study$vcov`.
#' @references Callaway, B. and Sant'Anna, P. H. C. (2021). Difference-in-
#'   differences with multiple time periods. Journal of Econometrics 225(2).
#'   Sant'Anna, P. H. C. and Zhao, J. (2020). Doubly robust
#'   difference-in-differences estimators. Journal of Econometrics 219(1).
#' @examples
#' d <- read.csv(system.file("extdata", "sim_panel.csv", package = "diffdiff"))
#' cs <- did_cs(d, yname = "y", tname = "year", idname = "id", gname = "first_treat",
#'              xformla = ~ x2, nboot = 0)
#' cs
#' aggregate(cs, type = "dynamic")
#' # a did::att_gt() call runs after renaming the function
#' did_cs(yname = "y", tname = "year", idname = "id", gname = "first_treat",
#'        data = d, bstrap = FALSE, alp = 0.1)
#' # the same panel in a database (here SQLite; DuckDB is the same call)
#' if (requireNamespace("RSQLite", quietly = TRUE) && requireNamespace("dbplyr", quietly = TRUE)) {
#'   con <- DBI::dbConnect(RSQLite::SQLite(), ":memory:")
#'   DBI::dbWriteTable(con, "panel", d)
#'   db <- did_cs(dplyr::tbl(con, "panel"), "y", "id", "year", "first_treat", nboot = 0)
#'   aggregate(db, "simple")
#'   DBI::dbDisconnect(con)
#' }
#' @inheritSection diffdiff-package Cohort coding
#' @export
did_cs <- function(data, yname, idname, tname, gname, xformla = NULL,
                   control_group = c("nevertreated", "notyettreated"), anticipation = 0,
                   base_period = c("varying", "universal"), est_method = c("dr", "ipw", "reg"),
                   weightsname = NULL, panel = TRUE, allow_unbalanced_panel = FALSE,
                   cluster = NULL, nboot = 1000, boot_weights = c("rademacher", "mammen", "webb"),
                   cband = TRUE, cband_method = c("sup-t", "bootstrap-t"), alpha = 0.05, survey = NULL, ...) {
  call <- match.call()
  dd_required(c("data", "yname", "idname", "tname", "gname"))
  # the shared settings and did's spellings (alp, bstrap, biters, clustervars)
  sp <- dd_spec(alpha = alpha, nboot = nboot, boot_weights = boot_weights, cband = cband,
                cband_method = cband_method, cluster = cluster, dots = list(...),
                aliases = c("alp", "bstrap", "biters", "clustervars", "print_details", "pl", "cores"), fun = "did_cs")
  alpha <- sp$alpha; nboot <- sp$nboot; boot_weights <- sp$boot_weights; cband <- sp$cband
  cband_method <- sp$cband_method; cluster <- sp$cluster
  control_group <- dd_match_vocab(control_group[1], c("nevertreated", "notyettreated"), "control_group")
  base_period <- dd_match_arg(base_period[1], c("varying", "universal"), "base_period")
  est_method <- dd_match_arg(est_method[1], c("dr", "ipw", "reg"), "est_method")
  anticipation <- dd_check_count(anticipation, "anticipation")
  if (cband_method == "bootstrap-t" && cband && nboot == 0L)
    dd_stop("`cband_method` = \"bootstrap-t\" needs bootstrap draws: `nboot` is 0; set nboot = 1000, say.")
  panel <- dd_check_flag(panel, "panel")
  allow_unbalanced_panel <- dd_check_flag(allow_unbalanced_panel, "allow_unbalanced_panel")
  s <- list(nboot = nboot, boot_weights = boot_weights, cband = cband, cband_method = cband_method,
            alpha = alpha, cluster = cluster, control_group = control_group, anticipation = anticipation,
            base_period = base_period, tname = tname, est_method = est_method,
            allow_unbalanced_panel = allow_unbalanced_panel)
  # a database table: the moments computed in the engine (R/did_cs_db.R)
  if (dd_is_db(data))
    return(dd_cs_db(data, yname, idname, tname, gname, xformla, weightsname, panel, survey, call, s))
  dd_check_data(data)
  dd_check_string(idname, "idname")
  cluster <- dd_cs_cluster(cluster, data, idname)
  # the units and their influence-function rows (R/unit_panel.R); panel
  # weights may vary over time (each cell uses its base period's, as did)
  up <- dd_unit_panel(data, yname, idname, tname, gname, xformla, weightsname, cluster, survey, nboot,
                      anticipation = anticipation, control_group = control_group, panel = panel,
                      allow_unbalanced = allow_unbalanced_panel, weights_vary = TRUE)
  design <- up$design; prep <- up$prep
  rm(up)
  cells <- dd_cs_cells(prep$tlist, prep$glist, anticipation, base_period, control_group)
  method <- match(est_method, c("reg", "ipw", "dr")) - 1L
  K <- length(cells$g)
  glist <- sort(unique(cells$g))
  if (prep$panel) {
    lay <- dd_cs_layout(cells, prep, glist)
    r <- .Call(C_cs_panel, prep$Y, lay$start, prep$bval, prep$bnever, prep$W, prep$X, cells$idx,
               cells$g, lay$pos, lay$task, lengths(lay$cols), lay$extra, method, 0.995)
    inf <- dd_ifs(prep$n, K + length(glist), lay$start, lay$cols, r$vals)
    r$vals <- NULL
  } else {
    lay <- dd_cs_rc_layout(cells, prep, glist)
    r <- .Call(C_cs_rc, prep$y, prep$tcol, prep$gval, prep$never, prep$w, prep$Xrc,
               cells$idx, cells$g, cells$thr, method, 0.995, prep$unit, prep$n,
               list(lay$start, lay$pos, lengths(lay$cols), lay$extra, lay$blk, lay$loc),
               as.double(prep$unit_weight))
    inf <- dd_ifs(prep$n, K + length(glist), lay$start, lay$cols, r$vals, rows = lay$rows)
    r$vals <- NULL
    rm(lay)
  }
  prep$Y <- prep$W <- prep$X <- prep$y <- prep$Xrc <- NULL
  dd_cs_finish(r, inf, cells, prep, design, yname, call, s)
}

# The fit from the cell estimates `r` (att, status, n_cell, n_trim) and
# their influence functions `inf` (the K cells, then the cohort-share
# columns): standard errors (analytic, multiplier bootstrap, bootstrap-t
# band), the pre-test, the table and the did_cs object. `prep`: the units'
# fields (n, nobs, tlist, unit_cluster, unit_group, unit_weight, units,
# notes, panel, and cohort_n for fits whose units are not in memory); `s`:
# the settings (and for did_dml: subclass, title and more fields). Shared by
# the in-memory and the database fits and by did_dml().
dd_cs_finish <- function(r, inf, cells, prep, design, yname, call, s) {
  nboot <- s$nboot; boot_weights <- s$boot_weights; cband <- s$cband; cband_method <- s$cband_method
  alpha <- s$alpha; cluster <- s$cluster; allow_unbalanced_panel <- s$allow_unbalanced_panel
  K <- length(cells$g)
  glist <- sort(unique(cells$g))
  dd_cs_report(r, cells)
  n <- prep$n
  se <- dd_if_se(inf, n, prep$unit_cluster, seq_len(K))
  se[is.na(r$att)] <- NA_real_
  crit <- NA_real_
  boot <- NULL
  bootstrap_t <- cband && cband_method == "bootstrap-t"
  if (bootstrap_t) {
    # analytic standard errors; the band's critical value from the wild
    # bootstrap-t (each draw studentised by its own standard error)
    okc <- which(!is.na(se))
    if (length(okc) && length(prep$tlist) > 2L) {
      crit <- dd_if_boot_t(inf, n, prep$unit_cluster, prep$unit_group, nboot, boot_weights, alpha, cols = okc)$crit
      dd_cs_crit_warn(crit)
    }
  } else if (nboot > 0L) {
    okc <- which(!is.na(se))
    if (length(okc)) {
      # one set of draws for the cells and for the cohort-share columns the
      # aggregations need (aggregate() reuses them)
      bt <- dd_if_boot(inf, n, prep$unit_cluster, nboot, boot_weights, alpha,
                       band = seq_along(okc), cols = c(okc, K + seq_along(glist)))
      se[okc] <- bt$se[seq_along(okc)]
      boot <- list(draws = bt$draws, cells = okc, N = bt$N, boot_weights = boot_weights)
      if (cband && length(prep$tlist) > 2L) {
        crit <- bt$crit
        dd_cs_crit_warn(crit)
      }
    }
  }
  pre <- dd_cs_pretest(r$att, inf, n, prep$unit_cluster, cells, se)
  terms <- sprintf("ATT(%s,%s)", format(cells$g, trim = TRUE), format(cells$t, trim = TRUE))
  tab <- dd_if_table(terms, r$att, se, alpha, crit,
                     data.frame(group = cells$g, time = cells$t, event = cells$t - cells$g))
  svy_label <- dd_svy_label(design)
  label <- paste0(dd_cs_vcov_label(nboot, boot_weights, cluster, bootstrap_t), svy_label)
  # did_dml() shares this: its class, title and fields come in s
  subclass <- s$subclass %||% "did_cs"
  info <- dd_info(subclass[1], s$title %||% "Callaway-Sant'Anna group-time ATT (did_cs)", yname, prep$nobs,
                  if (nboot > 0 && !bootstrap_t) "bootstrap" else "analytic", label, Inf, alpha, terms,
                  n_units = if (prep$panel || allow_unbalanced_panel) n else NULL, n_periods = length(prep$tlist),
                  n_clusters = if (!is.null(prep$n_clusters)) prep$n_clusters
                               else if (inherits(prep$unit_cluster, "dd_svy_rows")) prep$unit_cluster$G
                               else if (is.null(cluster)) NULL else length(unique(prep$unit_cluster)),
                  notes = prep$notes)
  extra <- list(inf = inf, n = n, units = prep$units, survey_label = svy_label, unit_group = prep$unit_group, unit_weight = prep$unit_weight,
                unit_cluster = prep$unit_cluster, periods = prep$tlist, crit = crit,
                pretest = pre, boot_draws = boot, nboot = nboot, boot_weights = boot_weights, cband = cband,
                cband_method = cband_method, control_group = s$control_group, anticipation = s$anticipation,
                base_period = s$base_period, tname = s$tname,
                est_method = s$est_method, cluster = cluster, n_cell = r$n_cell, cell_status = r$status,
                cohort_n = prep$cohort_n, db = prep$db)
  extra <- c(extra, s$more)
  # the K x K variance is formed on demand by vcov() (it is n K^2 work)
  new_dd_fit(subclass, tab, stats::setNames(r$att, terms), NULL, info, call, extra)
}

# did's `clustervars`: the unit and at most one more variable; the unit
# itself (the default clustering of the influence functions) drops out
dd_cs_cluster <- function(cluster, data, idname) {
  if (is.null(cluster)) return(NULL)
  cluster <- setdiff(dd_cluster_names(cluster, data), idname)
  if (length(cluster) > 1L)
    dd_stop("`cluster` can name one variable besides `idname` (as did's `clustervars`); got %s.", dd_show(cluster))
  if (!length(cluster)) NULL else cluster
}

dd_cs_vcov_label <- function(nboot, boot_weights, cluster, bootstrap_t = FALSE) {
  s <- if (nboot > 0 && !bootstrap_t) sprintf("Multiplier bootstrap (%d draws, %s)", nboot, boot_weights)
       else "Influence function (analytic)"
  if (!is.null(cluster)) s <- paste0(s, ", clustered by ", cluster)
  if (bootstrap_t) s <- paste0(s, sprintf("; uniform band: wild bootstrap-t (%d draws, %s)", nboot, boot_weights))
  s
}

dd_cs_crit_warn <- function(crit) {
  if (is.infinite(crit))
    warning("the uniform-band critical value is not finite (some bootstrap standard errors are zero: groups too small); the band is not reported.",
            call. = FALSE)
  else if (crit >= 7)
    warning(sprintf("the uniform-band critical value is large (%.2f); inference may be unreliable.", crit),
            call. = FALSE)
}

# The estimation sample. A balanced panel goes wide (N x T outcomes, units
# sorted by cohort into blocks) with unit-level bookkeeping only; repeated
# cross-sections and unbalanced panels stay long (rows) for the RC engine.
# `part` (did_ddd's eligibility, per row) sorts a panel's units by cohort and
# eligibility.
dd_cs_prepare <- function(y, tt, g, never, id, w, X, cl, nterm, gname, tname, anticipation,
                          control_group, panel, allow_unbalanced, idc = dd_codes(id), tc = dd_codes(tt),
                          part = NULL) {
  tlev <- as.double(tt[dd_first_rows(tc)])    # period of each time code
  tlist <- sort(tlev)
  ef <- if (panel) dd_first_rows(idc) else NULL
  eg <- as.double(if (panel) g[ef] else g)    # first treated period per entity (never treated: 0)
  co <- dd_cs_cohorts(eg, if (panel) never[ef] else never, tlist, anticipation, control_group,
                      if (panel) "units" else "observations")
  tl <- tlist[co$tkeep]
  T <- length(tl)
  tmap <- match(tlev, tl) - 1L; tmap[is.na(tmap)] <- -1L
  gkey <- eg; gkey[co$never] <- Inf
  if (panel) {
    # units sorted by cohort (never treated last), then by identifier, so that
    # the influence-function rows (and the bootstrap multipliers drawn for
    # them) do not depend on the order of the rows; dropped units map to -1
    kept <- which(co$keep)
    # (did_ddd: eligible before ineligible within a cohort, `part`)
    idk <- id[ef][kept]
    kept <- if (!is.null(part)) kept[order(gkey[kept], -part[ef][kept], idk)]
            else if (is.numeric(idk) && !is.unsorted(idk)) kept[order(gkey[kept], method = "radix")]  # (ties: stable)
            else kept[order(gkey[kept], idk)]
    umap <- rep(-1L, length(eg)); umap[kept] <- seq_along(kept) - 1L
    wide <- .Call(C_panel_wide, idc, tc, umap, tmap, length(kept), T, as.double(y),
                  if (is.null(w)) NULL else as.double(w), X)
    miss <- if (anyNA(wide$Y)) rowSums(is.na(wide$Y)) > 0 else FALSE
    if (any(miss) && !allow_unbalanced) {
      warning(sprintf("%d units are missing in some periods; converting to a balanced panel by dropping them (as did does).",
                      sum(miss)), call. = FALSE)
      ok <- !miss
      wide$Y <- wide$Y[ok, , drop = FALSE]
      if (!is.null(wide$W)) wide$W <- wide$W[ok, , drop = FALSE]
      if (!is.null(wide$X)) wide$X <- wide$X[ok, , , drop = FALSE]
      kept <- kept[ok]
    }
    if (!any(miss) || !allow_unbalanced) {
      ug <- gkey[kept]
      ug0 <- ug; ug0[!is.finite(ug0)] <- 0
      dd_cs_small(ug0, nterm, control_group)
      lv <- dd_sorted_levels(ug, counts = TRUE)   # ug is sorted: units are in cohort order
      bval <- lv$values
      bstart <- c(0L, cumsum(lv$counts))
      return(list(panel = TRUE, Y = wide$Y, W = wide$W, X = wide$X, bval = as.double(bval),
                  bnever = !is.finite(bval), bstart = as.integer(bstart), n = length(kept),
                  nobs = length(kept) * T, tlist = tl, glist = co$glist,
                  unit_group = ug0, unit_weight = if (is.null(wide$W)) rep(1, length(kept)) else wide$W[, 1],
                  unit_cluster = if (is.null(cl)) NULL else cl[ef][kept], units = id[ef][kept],
                  unit_prow = ef[kept], notes = co$notes))
    }
    rm(wide)
  }
  # rows for the repeated cross-section engine
  if (is.list(X)) X <- do.call(cbind, X)
  ent <- if (panel) idc + 1L else seq_along(y)
  keep <- co$keep[ent] & co$tkeep[match(tt, tlist)]
  prow <- which(keep)                          # kept rows among the input rows
  if (!all(keep)) {
    y <- y[keep]; tt <- tt[keep]; idc <- dd_recode(idc, keep); ent <- ent[keep]
    if (!is.null(w)) w <- w[keep]
    if (!is.null(X)) X <- X[keep, , drop = FALSE]
    if (!is.null(cl)) cl <- cl[keep]
    id <- id[keep]
  }
  # rows sorted by identifier and period (and outcome), so that units (and
  # their bootstrap multipliers) come in an order that does not depend on
  # the order of the rows
  o <- order(id, tt, y)
  if (is.unsorted(o)) {
    y <- y[o]; tt <- tt[o]; idc <- dd_recode(idc, o); ent <- ent[o]; prow <- prow[o]; id <- id[o]
    if (!is.null(w)) w <- w[o]
    if (!is.null(X)) X <- X[o, , drop = FALSE]
    if (!is.null(cl)) cl <- cl[o]
  }
  gval <- gkey[ent]
  w <- if (is.null(w)) rep(1, length(y)) else w / mean(w)
  unit <- if (panel) idc else seq_along(y) - 1L
  n <- if (panel) attr(unit, "nlev") else length(y)
  first_row <- if (panel) dd_first_rows(unit) else seq_len(n)
  unit_g <- gval[first_row]
  ug0 <- ifelse(is.finite(unit_g), unit_g, 0)
  # did counts rows / periods here (also for unbalanced panels)
  dd_cs_small(ifelse(is.finite(gval), gval, 0), nterm, control_group, T)
  uw <- if (panel) as.vector(tapply(w, as.integer(unit), mean)) else w
  tcol <- match(tt, tl) - 1L
  list(panel = FALSE, y = y, tcol = tcol, gval = as.double(ifelse(is.finite(gval), gval, 0)),
       never = !is.finite(gval), w = w, Xrc = cbind("(Intercept)" = rep(1, length(y)), X),
       unit = as.integer(unit), n = n, nobs = length(y), tlist = tl, glist = co$glist,
       unit_group = ug0, unit_weight = uw, unit_cluster = if (is.null(cl)) NULL else cl[first_row],
       units = if (panel) id[first_row] else NULL, unit_prow = prow[first_row], notes = co$notes,
       unit_period = if (panel) NULL else tcol)
}

# Block layout of the repeated cross-section engine's influence functions.
# The rows (units) keep their order (by identifier, as dd_cs_prepare sorts
# them; the bootstrap draws its multipliers in this order) and are grouped
# into blocks that need not be adjacent (dd_ifs's `rows`): by cohort and
# period in repeated cross-sections (an observation is in cell (g, t) only
# when its period is t or the base period), by cohort in unbalanced panels
# (a unit's rows may fall in any period). Block b is in cell c's sample when
# its cohort is the treated one, never treated, or not yet treated by the
# cell's threshold (and, with a period, when that period is one of the
# cell's two); treated cohorts' blocks add their cohort-share column.
dd_cs_rc_layout <- function(cells, prep, glist) {
  n <- prep$n; K <- length(cells$g)
  ug <- prep$unit_group                            # 0: never treated
  up <- if (is.null(prep$unit_period)) rep(-1L, n) else prep$unit_period
  gl <- sort(unique(ug)); tl <- sort(unique(up))
  bl <- dd_rc_blocks((match(ug, gl) - 1L) * length(tl) + match(up, tl))
  bkey <- bl$key; nb <- length(bkey)
  bg <- gl[(bkey - 1L) %/% length(tl) + 1L]; bp <- tl[(bkey - 1L) %% length(tl) + 1L]
  bnever <- bg == 0
  memb <- (outer(bg, cells$g, "==") & !bnever) | bnever | outer(bg, cells$thr, ">")
  memb <- memb & (bp < 0 | outer(bp, cells$idx[, 2], "==") | outer(bp, cells$idx[, 3], "=="))
  memb <- matrix(memb, nb, K)
  memb[, cells$idx[, 2] == cells$idx[, 3]] <- FALSE   # reference cells: zero
  bc <- dd_cs_block_cols(memb, bg, bnever, glist)
  list(start = bl$start, pos = bc$pos, cols = bc$cols, extra = bc$extra, blk = bl$blk, loc = bl$loc,
       rows = bl$rows)
}

# Blocks of rows by an integer key, rows in their order within a block: the
# sorted distinct keys, each row's block (0-based) and place in it, the
# blocks' starts, and the rows in block order (0-based; NULL when the blocks
# are contiguous already). The layout of C_cs_rc's influence functions.
dd_rc_blocks <- function(key) {
  ord <- order(key)                                # stable
  bkey <- unique(key[ord])
  blk <- match(key, bkey) - 1L
  start <- c(0L, cumsum(tabulate(blk + 1L, length(bkey))))
  loc <- integer(length(key))
  loc[ord] <- seq_along(key) - 1L - start[blk[ord] + 1L]
  rows <- ord - 1L
  if (!is.unsorted(rows)) rows <- NULL
  list(key = bkey, blk = as.integer(blk), start = as.integer(start), loc = as.integer(loc), rows = rows)
}

# The columns each block of rows stores, given its membership in the cells
# (memb: blocks x cells): the cells it belongs to, then its cohort-share
# column when the block is a treated cohort's; pos, the position of each
# cell among its block's columns (-1: not stored); extra, the position of
# the cohort-share column (-1: none). Shared by both layouts.
dd_cs_block_cols <- function(memb, bg, bnever, glist) {
  nb <- nrow(memb); K <- ncol(memb)
  pos <- matrix(-1L, nb, K)
  cols <- vector("list", nb); extra <- rep(-1L, nb)
  for (b in seq_len(nb)) {
    j <- which(memb[b, ])
    pos[b, j] <- seq_along(j) - 1L
    gi <- if (bnever[b]) NA else match(bg[b], glist)
    if (!is.na(gi)) extra[b] <- length(j)
    cols[[b]] <- as.integer(c(j - 1L, if (!is.na(gi)) K + gi - 1L))
  }
  list(pos = pos, cols = cols, extra = as.integer(extra))
}

# Block layout of the panel engine's influence functions: block b (units of
# cohort bval[b]) is in the sample of cell c when it is the treated cohort,
# never treated, or not yet treated by the cell's threshold; cells sharing a
# sample and a covariate period form one task (their propensity score and
# regression design are computed once).
dd_cs_layout <- function(cells, prep, glist) {
  bval <- prep$bval; bnever <- prep$bnever
  K <- length(cells$g); nb <- length(bval)
  memb <- (outer(bval, cells$g, "==") & !bnever) | bnever | outer(bval, cells$thr, ">")
  memb <- matrix(memb, nb, K)
  ref <- cells$idx[, 2] == cells$idx[, 3]
  memb[, ref] <- FALSE
  bc <- dd_cs_block_cols(memb, bval, bnever, glist)
  pos <- bc$pos; cols <- bc$cols; extra <- bc$extra
  varying <- (!is.null(prep$X) && dim(prep$X)[3] > 1L) || (!is.null(prep$W) && ncol(prep$W) > 1L)
  key <- paste(cells$g, apply(memb, 2, function(z) paste(which(z), collapse = ",")),
               if (varying) pmin(cells$idx[, 2], cells$idx[, 3]) else "")
  task <- match(key, unique(key[!ref])) - 1L
  task[ref] <- -1L
  list(start = prep$bstart, pos = pos, task = as.integer(task), cols = cols, extra = as.integer(extra))
}

# Warnings for cells did warns about, with counts.
# did_ddd names its engine cells (`labels`, `what`) and what becomes of them
# (`fate`).
dd_cs_report <- function(r, cells, labels = NULL, what = "ATT(g,t)", fate = "set to NA") {
  lab <- function(s) paste(if (is.null(labels)) sprintf("(%s,%s)", format(cells$g[s]), format(cells$t[s]))
                           else labels[s], collapse = ", ")
  st <- r$status
  if (any(st == 4L)) warning(sprintf("no comparison (or treated) units for %s %s; %s%s.", what, lab(st == 4L), fate,
                                     if (is.null(labels)) " (did warns likewise)" else ""), call. = FALSE)
  if (any(st == 5L)) warning(sprintf("overlap condition violated (propensity score >= 0.999) for %s %s; %s.",
                                     what, lab(st == 5L), fate), call. = FALSE)
  if (any(st %in% 2:3)) warning(sprintf("singular covariate matrix (outcome regression or propensity score) for %s %s; %s.",
                                        what, lab(st %in% 2:3), fate), call. = FALSE)
  if (any(st == 1L)) warning(sprintf("propensity score estimation did not converge for %s %s.", what, lab(st == 1L)),
                             call. = FALSE)
  if (any(r$n_trim > 0L))
    warning(sprintf("propensity scores at the 0.995 trimming bound: %s comparison unit(s) given zero weight across %d cell(s).",
                    format(sum(r$n_trim)), sum(r$n_trim > 0L)), call. = FALSE)
  invisible(NULL)
}

# did's Wald pre-test of parallel trends: pre-treatment cells (g > t) with a
# standard error, on the analytic (possibly clustered) variance.
dd_cs_pretest <- function(att, inf, n, cluster, cells, se) {
  P <- which(cells$g > cells$t & !is.na(se) & !is.na(att))
  if (!length(P)) return(list(W = NA_real_, df = 0L, p.value = NA_real_, note = "no pre-treatment cells"))
  V <- .Call(C_ifs_crossprod, dd_if_rows(inf, cluster), as.integer(P - 1L)) / n
  if (anyNA(V) || rcond(V) <= .Machine$double.eps)
    return(list(W = NA_real_, df = length(P), p.value = NA_real_, note = "singular variance of the pre-treatment ATT(g,t)"))
  a <- att[P]
  W <- n * drop(crossprod(a, solve(V, a)))
  list(W = W, df = length(P), p.value = stats::pchisq(W, length(P), lower.tail = FALSE), note = NULL)
}

# the footers' pre-test line (did_cs and the fits on its cells)
dd_cs_pretest_cat <- function(pt) {
  if (!is.na(pt$W))
    cat(sprintf("Pre-test of parallel trends: W = %.4f, df = %d, p-value = %s\n", pt$W, pt$df, format.pval(pt$p.value, digits = 4)))
  else if (!is.null(pt$note)) cat("Pre-test of parallel trends not computed:", pt$note, "\n")
}

# print() and summary(): after the table, the pre-test and the settings
dd_footer.did_cs <- function(x) {
  NextMethod()
  dd_cs_pretest_cat(x$pretest)
  cat(sprintf("Control group: %s; anticipation: %d; base period: %s; estimator: %s\n",
              x$control_group, x$anticipation, x$base_period, x$est_method))
  if (!is.null(x$db))
    cat(sprintf("Data: a database table (%s, %s rows), cohort moments computed in the engine\n", x$db$class,
                format(x$db$rows, big.mark = ",")))
  invisible(x)
}

#' @rdname did_cs
#' @param object A `did_cs` fit.
#' @method vcov did_cs
#' @export
vcov.did_cs <- function(object, ...) {
  dd_check_dots(list(...), "vcov()")
  dd_if_vcov(object)
}


# The reference cells of a did_cs fit: with the universal base period, each
# cohort's ATT(g, base) is 0 by construction (no standard error). `tab`: the
# fit's coefficient table or its tidy() rows (columns group and time).
dd_cs_is_ref <- function(x, tab = x$coeftable) {
  if (!identical(x$base_period, "universal") || !nrow(tab)) return(rep(FALSE, nrow(tab)))
  ant <- x$anticipation %||% 0
  per <- x$periods
  base <- vapply(tab$group, function(g) {
    b <- per[per + ant < g]
    if (length(b)) max(b) else NA_real_
  }, numeric(1))
  !is.na(base) & tab$time == base
}
