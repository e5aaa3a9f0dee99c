#' Dynamic two-way fixed-effects event study
#'
#' Regresses the outcome on relative-time indicators (period minus the first
#' treated period `gname`) with unit and time fixed effects:
#' `y ~ sum_e 1{t - g = e} + x | id + t`, omitting the reference period(s)
#' `ref`. This is the regression fixest writes as
#' `feols(y ~ i(rel_time, ref = -1) | id + t)` with never-treated units given a
#' relative time outside the sample. Never-treated units (`gname` 0, `Inf` or
#' `NA`) have every indicator equal to 0 and serve as controls; without them,
#' one more relative period is not identified and is dropped for collinearity
#' (with a message), exactly as in fixest.
#'
#' `window = c(lo, hi)` bins the endpoints: relative periods below `lo` are
#' pooled into `lo` and those above `hi` into `hi`, so the end coefficients
#' average the effects beyond the window (the usual "binned endpoints").
#'
#' Like any TWFE event study, the coefficients can be contaminated by effects
#' from other relative periods when effects are heterogeneous across cohorts;
#' the heterogeneity-robust estimators are the remedy.
#'
#' @inheritParams did_twfe
#' @param tname Name of the time period column (numeric, in the same units as
#'   `gname`).
#' @param gname Name of the column with each unit's first treated period;
#'   0, `Inf` or `NA` mean never treated; see section "Cohort coding". Must be
#'   constant within a unit.
#' @param ref Reference relative period(s), omitted from the regression
#'   (default -1).
#' @param window Optional `c(lo, hi)`: relative periods outside are binned
#'   into the endpoints.
#' @param survey Optional complex survey design of `data` ([survey_design()] or a
#'   survey package design): design weights and design-based variance, as
#'   `survey::svyglm()` with the fixed effects as factors (Taylor
#'   linearisation, or refits per replicate weight); t tests use the design's
#'   degrees of freedom. Not combined with `weightsname`, `cluster`, `vcov`
#'   or `nboot`.
#' @param nboot Number of wild cluster bootstrap replications (null imposed)
#'   run for each event-time coefficient; 0 (default) for analytic inference.
#' @param cband With `nboot > 0`, a uniform (sup-t) band over the event-time
#'   coefficients (columns `cband.low`, `cband.high`): its critical value
#'   (`fit$crit`) is the 95% quantile of the largest |t| of a multiplier
#'   bootstrap of the coefficients' influence functions (`nboot` draws,
#'   `boot_weights`; one multiplier per cluster), and it is applied to the
#'   analytic standard errors. The wild bootstrap intervals stay pointwise.
#' @return An object of class `c("did_event", "dd_fit")`; the coefficient
#'   table has a column `event` (relative period), and `plot()` draws the
#'   event-study plot.
#' @references Sun, L. and Abraham, S. (2021). Estimating dynamic treatment
#'   effects in event studies with heterogeneous treatment effects. *Journal
#'   of Econometrics* 225(2), 175-199.
#'
#'   Borusyak, K., Jaravel, X. and Spiess, J. (2024). Revisiting event-study
#'   designs: robust and efficient estimation. *Review of Economic Studies*
#'   91(6), 3253-3285.
#'
#'   Roth, J., Sant'Anna, P. H. C., Bilinski, A. and Poe, J. (2023). What's
#'   trending in difference-in-differences? A synthesis of the recent
#'   econometrics literature. *Journal of Econometrics* 235(2), 2218-2244.
#' @examples
#' d <- read.csv(system.file("extdata", "sim_panel.csv", package = "diffdiff"))
#' es <- did_event(d, yname = "y", idname = "id", tname = "year", gname = "first_treat")
#' es
#' plot(es)
#' did_event(d, yname = "y", idname = "id", tname = "year", gname = "first_treat",
#'           window = c(-3, 2))
#' @section Data in a database:
#' `data` may also be a database table (a dbplyr table, e.g. a DuckDB view
#' over Parquet files): the event-time indicators depend only on the
#' cohort and the period, so on a balanced panel the cohorts' unit counts,
#' mean outcome paths and centred cross-moments (computed in the engine)
#' give the coefficients, their iid, HC0/HC1 or one-way clustered
#' covariance and the R-squared exactly, as [did_twfe()] does by treatment
#' path (equal to the in-memory fit to about 1e-13; tested to 1e-10).
#' Covariates, weights, extra fixed effects, `survey`, the bootstrap and
#' its band, CR2, two-way clustering, unbalanced panels and event-time
#' indicators collinear with the fixed effects need the data in memory (an
#' error says so).
#' @inheritSection diffdiff-package Cohort coding
#' @inheritSection diffdiff-package Formula interface
#' @export
did_event <- function(data, yname, idname, tname, gname, xformla = NULL, ref = -1, window = NULL,
                      weightsname = NULL, fe = NULL, cluster = NULL,
                      vcov = NULL, alpha = 0.05, nboot = 0,
                      boot_weights = c("rademacher", "mammen", "webb"), cband = FALSE,
                      fe_tol = 1e-8, fe_maxit = 10000, drop_singletons = TRUE, survey = NULL, coords = NULL,
                      cutoff = NULL) {
  call <- match.call()
  # the fixest-style formula (y ~ x | id + t, sunab(g, t)): the column-name call (R/formula.R)
  fcl <- dd_formula_call(match.call(), environment(), "did_event")
  if (!is.null(fcl)) return(eval(fcl, parent.frame()))
  dd_required(c("data", "yname", "idname", "tname", "gname"))
  dd_conley_in_memory(data, vcov, coords)
  if (!dd_is_db(data)) dd_check_data(data)
  sp <- dd_spec(alpha = alpha, nboot = nboot, boot_weights = boot_weights, cband = cband, fe_tol = fe_tol,
                fe_maxit = fe_maxit, drop_singletons = drop_singletons)
  if (sp$cband && sp$nboot == 0L)
    dd_stop("`cband` = TRUE needs bootstrap draws for its critical value: `nboot` is 0; set nboot = 999, say.")
  alpha <- sp$alpha; nboot <- sp$nboot
  if (!is.numeric(ref) || !length(ref) || anyNA(ref) || any(ref != round(ref)))
    dd_stop("`ref` must be whole numbers (relative periods); got %s.", dd_show(ref))
  if (!is.null(window) && (!is.numeric(window) || length(window) != 2L || anyNA(window) ||
                           any(window != round(window)) || window[1] > window[2]))
    dd_stop("`window` must be c(lo, hi) with whole numbers lo <= hi; got %s.", dd_show(window))
  # a database table: the cohorts' moments computed in the engine (R/did_event_db.R)
  if (dd_is_db(data))
    return(dd_event_db(data, yname, idname, tname, gname, xformla, ref, window, weightsname, fe, cluster, vcov,
                       alpha, nboot, sp$cband, survey, call))
  sp <- dd_spec_variance(sp, data, idname, weightsname, cluster, vcov, survey, wild = TRUE, coords = coords,
                         cutoff = cutoff, conley = TRUE)
  p <- dd_panel(data, yname, idname, tname, c(gname = gname), xformla, weightsname, sp$cluster, fe, sp$design)
  id <- p$id; tt <- p$tt; idc <- p$idc; tc <- p$tc; g <- p$g; never <- p$never
  if (all(never)) dd_stop("`gname` = \"%s\" marks every unit as never treated (0, Inf, NA or after the last period).", gname, .code = "NO_TREATED")
  rel <- ifelse(never, NA_real_, tt - g)
  if (any(!never & rel != round(rel)))
    dd_stop("`tname` - `gname` must be whole numbers; unit %s has %s.",
            dd_show(id[which(!never & rel != round(rel))[1]]), format(rel[which(!never & rel != round(rel))[1]]))
  obs <- sort(unique(rel[!never]))
  if (!is.null(window)) {
    if (window[2] < min(obs) || window[1] > max(obs))
      dd_stop("`window` = %s lies outside the relative periods in the data (%s to %s).",
              dd_show(window), format(min(obs)), format(max(obs)))
    rel <- pmin(pmax(rel, window[1]), window[2])
    obs <- sort(unique(rel[!never]))
  }
  if (!any(ref %in% obs))
    dd_stop("`ref` = %s is not a relative period in the data (they run from %s to %s).",
            dd_show(ref), format(min(obs)), format(max(obs)))
  ev <- setdiff(obs, ref)
  if (!length(ev)) dd_stop("no relative period is left once `ref` = %s is omitted.", dd_show(ref))
  relc <- match(rel, ev)
  terms <- paste0("event::", ev)
  fel <- c(stats::setNames(list(idc, tc), c(idname, tname)), lapply(p$fe, dd_codes))
  # the event indicators depend only on the cohort and the period: with the
  # unit and period effects alone, and no weights or weights constant within
  # units, they are handled as cells (never an n x E dense matrix);
  # otherwise as dense columns
  cellf <- NULL
  if (!length(p$fe) && dd_cells_ok(idc, p$w)) {
    key <- ifelse(never, -Inf, g)
    cellf <- function(r) dd_cells(dd_recode(idc, r), dd_recode(tc, r), key[r], relc[r], terms)
    X <- if (is.null(p$X)) matrix(0, length(rel), 0) else p$X
  } else {
    D <- matrix(0, length(rel), length(ev))
    hit <- which(!is.na(relc))
    D[cbind(hit, relc[hit])] <- 1
    colnames(D) <- terms
    X <- cbind(D, p$X)
  }
  est <- dd_estimate(p$y, X, fel, p$w, p$cluster, sp, terms,
                     survey = p$survey, boot_key = list(id, tt), treated = !never & tt >= g, control = never,
                     cells = cellf, conley = dd_conley_panel_rows(sp, data, p))
  # the event-time coefficients first, then the covariates (the cells come last in the regression)
  est <- dd_reorder_terms(est, c(terms, colnames(p$X)))
  est$tab$event <- ev[match(est$tab$term, terms)]
  crit <- NA_real_
  if (sp$cband) {
    # the uniform band over the event-time coefficients: the sup-t critical
    # value of a multiplier bootstrap of their influence functions, applied
    # to the analytic standard errors
    b <- est$reg$coef[est$reg$keep]
    kt <- intersect(terms, names(b))
    S <- diag(length(b))[match(kt, names(b)), , drop = FALSE]
    crit <- dd_reg_boot(est, S, dd_lincom(b, est$vc$V, S, kt)$vcov, sp, band = seq_along(kt))$crit
    i <- match(kt, est$tab$term)
    est$tab$cband.low <- est$tab$cband.high <- NA_real_
    est$tab$cband.low[i] <- est$tab$estimate[i] - crit * est$tab$std.error[i]
    est$tab$cband.high[i] <- est$tab$estimate[i] + crit * est$tab$std.error[i]
  }
  r <- est$rows
  notes <- character()
  if (!any(never[r])) notes <- "no never-treated units: the control group is the not-yet-treated."
  info <- dd_reg_info(est, "did_event", "TWFE event study (did_event)", yname, alpha, terms,
                      p$cluster, names(fel),
                      n_units = attr(est$reg$fe_codes[[1]], "nlev"),
                      n_periods = attr(est$reg$fe_codes[[2]], "nlev"),
                      notes = notes)
  new_dd_fit("did_event", est$tab, est$reg$coef, est$vc$V, info, call,
             extra = list(window = window,
                          event_study = dd_es_spec(reference = ref[ref %in% obs]), crit = crit,
                          cband = sp$cband, path = est$path))
}
