#' Sun and Abraham (2021) interaction-weighted event study
#'
#' Regresses the outcome on cohort x relative-period indicators (and
#' covariates) with unit and period fixed effects, the regression fixest
#' writes as `feols(y ~ x + sunab(g, t) | id + t)`. Units whose first treated
#' period `gname` is 0, `Inf` or `NA`, or after the last observed period
#' (with a message giving their number), are never treated: they get no
#' indicators and are the control group. Negative values (including `-Inf`)
#' and values between two observed periods are errors. Relative period `ref`
#' (-1) is omitted for every cohort. A cohort with no observation before its
#' first treated period (treated throughout the data, as when it is first
#' treated at or before the first period) is dropped with a message, as
#' `sunab()` does. The cohort-specific effects are then averaged to
#' event-time effects with weights equal to each cohort's share of the
#' observations at that relative period, and to an overall ATT over relative
#' periods >= 0 (fixest's
#' `aggregate()` / `summary(agg = "ATT")`), with standard errors by the delta
#' method from the full variance matrix.
#'
#' Without never-treated units (or with `control_group = "last"`), the last-treated
#' cohort is a control cohort, as Sun and Abraham propose (with
#' `control_group = "last"` the never-treated units, if any, remain controls too):
#' the observations of every unit from the last cohort's first treated period
#' on are dropped and the cohort gets no indicators, so the effects are
#' identified from the periods before it is treated.
#'
#' A cohort never observed at relative period `ref` (irregular periods, for
#' example a missing year) is normalised on its observed relative period
#' nearest to `ref` before treatment, with a warning naming the cohort and
#' that period; fixest instead lets collinearity drop one of the cohort's
#' indicators, which can be a treated period. `cohort_ref` in the result
#' gives each cohort's reference.
#'
#' @section Standard errors and their estimand:
#' The event-time effects and the ATT weight the cohort-specific
#' coefficients by the cohorts' REALISED shares of the observations, and the
#' delta-method standard errors treat those shares as fixed: they target the
#' realised-share averages of the cohort effects (conditional on the sample's
#' cohort composition), as [did_bjs()] does. When effects differ across
#' cohorts and the composition is random, the intervals undercover the
#' population-share averages that the aggregations of [did_cs()] and
#' [did_gardner()] target (Monte Carlo evidence in
#' `vignette("coverage", package = "diffdiff")`).
#'
#' @inheritParams did_event
#' @param gname First treated period of each unit: 0, `Inf`, `NA` or a value
#'   after the last period mean never treated; see section "Cohort coding" for
#'   the one rule every estimator applies.
#' @param ref Omitted relative period (default -1).
#' @param nboot Multiplier-bootstrap draws (0, the default: analytic
#'   standard errors). With `nboot > 0` the standard errors of the event-time
#'   estimates and of the ATT come from a multiplier bootstrap of the
#'   coefficients' influence functions (one multiplier per cluster; per
#'   observation without clusters), scaled so that the bootstrap variance
#'   converges to the analytic (CR1 / HC1) one; did's interquartile-range
#'   rule. With a `survey` design (Taylor linearisation), one multiplier per
#'   PSU on the PSU totals centred within strata (not with replicate weights,
#'   and not yet for did_stacked); not with `vcov = "iid"`.
#' @param boot_weights `"rademacher"` (default), `"mammen"` or `"webb"`.
#' @param cband With `nboot > 0`, a uniform (sup-t) band over the event-time
#'   estimates: columns `cband.low`, `cband.high`; its critical value is
#'   `fit$crit` and `fit$event_study$crit`.
#' @param control_group Control cohort: `"auto"` (default; never-treated units when
#'   there are any, else the last-treated cohort, with a message), `"never"`
#'   or `"last"`; the other estimators' spellings (`"nevertreated"`,
#'   `"never_treated"`, `"lasttreated"`, ...) are accepted (see "Vocabulary"
#'   in ?diffdiff).
#' @param control Former name of `control_group` (accepted as an alias).
#' @return An object of class `c("did_sa", "dd_fit")`: the table has one row
#'   per relative period (`event`) and a last row `"ATT"`; `cohort_coefs`
#'   holds the cohort x period coefficients (fixest's `summary(agg = FALSE)`),
#'   `vcov_full` their variance, `shares` the (weighted) observations behind
#'   each, `cohort_ref` each cohort's reference period, and `path` how the
#'   indicators were handled: `"cells"` (cohort x period cell sums; no
#'   weights, or weights constant within units, without `survey`) or
#'   `"dense"` (explicit columns).
#' @references Sun, L. and Abraham, S. (2021). Estimating dynamic treatment
#'   effects in event studies with heterogeneous treatment effects. Journal of
#'   Econometrics 225(2).
#' @examples
#' d <- read.csv(system.file("extdata", "sim_panel.csv", package = "diffdiff"))
#' sa <- did_sa(d, yname = "y", idname = "id", tname = "year", gname = "first_treat", xformla = ~ x1)
#' sa
#' plot(sa)
#' # the same fit, written as fixest writes it
#' did_sa(y ~ x1 + sunab(first_treat, year) | id + year, data = d)
#' @inheritSection diffdiff-package Cohort coding
#' @inheritSection diffdiff-package Formula interface
#' @export
did_sa <- function(data, yname, idname, tname, gname, xformla = NULL, weightsname = NULL, ref = -1,
                   control_group = c("auto", "never", "last"), cluster = NULL, vcov = NULL, alpha = 0.05,
                   nboot = 0, boot_weights = c("rademacher", "mammen", "webb"), cband = FALSE,
                   fe_tol = 1e-8, fe_maxit = 10000, survey = NULL, control = NULL, coords = NULL, cutoff = NULL) {
  call <- match.call()
  # the fixest-style formula (y ~ x | id + t, sunab(g, t)): the column-name call (R/formula.R)
  fcl <- dd_formula_call(match.call(), environment(), "did_sa")
  if (!is.null(fcl)) return(eval(fcl, parent.frame()))
  dd_required(c("data", "yname", "idname", "tname", "gname"))
  dd_check_data(data)
  sp <- dd_spec(alpha = alpha, nboot = nboot, boot_weights = boot_weights, cband = cband, fe_tol = fe_tol,
                fe_maxit = fe_maxit)
  alpha <- sp$alpha
  if (!is.null(control)) {
    if (!missing(control_group)) dd_stop("`control_group` and `control` (its former name) are both given; give `control_group` only.")
    control_group <- control
  }
  control <- dd_match_vocab(control_group[1], c("auto", "never", "last"), "control_group")
  if (!is.numeric(ref) || length(ref) != 1L || is.na(ref) || ref != round(ref))
    dd_stop("`ref` must be one whole number (a relative period); got %s.", dd_show(ref))
  sp <- dd_spec_variance(sp, data, idname, weightsname, cluster, vcov, survey, coords = coords, cutoff = cutoff,
                         conley = TRUE)
  # the cohort rule of every estimator (0, Inf, NA, after the last period: never treated)
  p <- dd_panel(data, yname, idname, tname, c(gname = gname), xformla, weightsname, sp$cluster, NULL, sp$design)
  id <- p$id; tt <- p$tt; idc <- p$idc; tc <- p$tc; g <- p$g; never <- p$never
  if (all(never)) dd_stop("`gname` = \"%s\" has no cohort treated within the observed periods.", gname)
  rel <- ifelse(never, NA_real_, tt - g)
  # always-treated cohorts (no pre-period observed) are dropped, as sunab does
  always <- !never & !(g %in% unique(g[!never & rel < 0]))
  keep <- !always
  if (any(always))
    message(sprintf("diffdiff: %d observation(s) of always-treated cohort(s) %s removed (as fixest's sunab).",
                    sum(always), paste(sort(unique(g[always])), collapse = ", ")))
  if (control == "auto") {
    control <- if (any(never[keep])) "never" else "last"
    if (control == "last") message("diffdiff: no never-treated units; the last-treated cohort is the control (control_group = \"last\").")
  }
  if (control == "never" && !any(never[keep]))
    dd_stop("there are no never-treated units (`gname` outside the observed periods); use `control_group` = \"last\" for the last-treated cohort as control.", .code = "NO_NEVER_TREATED")
  if (control == "last") {
    coh <- sort(unique(g[!never & keep]))
    if (length(coh) < 2L)
      dd_stop("`control_group` = \"last\" needs at least two treated cohorts (the last one is the control); `gname` = \"%s\" has %s.",
              gname, dd_show(coh))
    glast <- coh[length(coh)]
    # the last cohort's periods from its treatment on leave the sample; it becomes the control
    late <- keep & tt >= glast
    keep <- keep & !late
    never <- never | (!is.na(g) & g == glast)
    rel[never] <- NA_real_
    if (!any(!never[keep] & rel[keep] >= 0))
      dd_stop("`control_group` = \"last\": no treated observation is left before the last cohort (%s) is treated.", format(glast))
  }
  # the omitted (reference) relative period of each cohort: `ref`, or, for a
  # cohort never observed at `ref` (irregular periods), its observed relative
  # period nearest to `ref` on the same side of treatment (with a warning),
  # rather than whichever period collinearity would drop
  tr <- !never & keep
  cg0 <- sort(unique(g[tr]))
  refg <- vapply(cg0, function(c0) {
    e <- unique(rel[tr & g == c0])
    if (ref %in% e) return(as.double(ref))
    cand <- if (ref < 0 && any(e < 0)) e[e < 0] else if (ref >= 0 && any(e >= 0)) e[e >= 0] else e
    cand[order(abs(cand - ref), -cand)][1]
  }, numeric(1))
  moved <- which(refg != ref)
  if (length(moved))
    warning(paste0("did_sa: ", paste(sprintf(
      "cohort %s has no observation at relative period %s (`ref`; no %s = %s), so its effects are normalised on relative period %s (%s = %s) instead",
      format(cg0[moved]), format(ref), tname, format(cg0[moved] + ref), format(refg[moved]), tname,
      format(cg0[moved] + refg[moved])), collapse = "; "), "."), call. = FALSE)
  rref <- rep(as.double(ref), length(g))
  rref[tr] <- refg[match(g[tr], cg0)]
  # cohort x relative-period indicators, the reference omitted; names as fixest's
  cell <- !never & keep & rel != rref
  ev <- sort(unique(rel[cell])); cg <- sort(unique(g[cell]))
  present <- matrix(FALSE, length(ev), length(cg))
  present[cbind(match(rel[cell], ev), match(g[cell], cg))] <- TRUE
  pr <- which(present, arr.ind = TRUE)
  pr <- pr[order(pr[, 1], pr[, 2]), , drop = FALSE]
  combos <- data.frame(e = ev[pr[, 1]], g = cg[pr[, 2]])
  cols <- paste0(tname, "::", combos$e, ":cohort::", combos$g)
  # column of each row's indicator (NA: none)
  lut <- matrix(NA_integer_, length(ev), length(cg))
  lut[cbind(match(combos$e, ev), match(combos$g, cg))] <- seq_along(cols)
  colidx <- lut[cbind(match(rel, ev), match(g, cg))]
  colidx[!cell] <- NA_integer_
  rows <- which(keep)
  fel <- stats::setNames(list(dd_recode(idc, rows), dd_recode(tc, rows)), c(idname, tname))
  w <- if (is.null(p$w)) NULL else p$w[rows]
  Xc <- if (is.null(p$X)) matrix(0, length(rows), 0) else p$X[rows, , drop = FALSE]
  # the indicators are constant within cohort x period cells: without weights
  # or with weights constant within units, they are handled as cells
  # (dd_regress_cells); otherwise as dense columns
  if (dd_cells_ok(fel[[1]], w)) {
    cellf <- function(r) dd_cells(dd_recode(fel[[1]], r), dd_recode(fel[[2]], r),
                                   ifelse(never[rows][r], -Inf, g[rows][r]), colidx[rows][r], cols)
    X <- Xc
  } else {
    D <- matrix(0, length(tt), length(cols), dimnames = list(NULL, cols))
    D[cbind(which(cell), colidx[cell])] <- 1
    X <- cbind(Xc, D[rows, , drop = FALSE])
    cellf <- NULL
  }
  est <- dd_estimate(p$y[rows], X, fel, w, lapply(p$cluster, `[`, rows), sp, character(),
                     survey = if (is.null(p$survey)) NULL else list(design = p$design, rows = p$rows[rows]),
                     cells = cellf, treated = (!never & tt >= g)[rows], control = never[rows], wild_available = FALSE,
                     boot_key = list(id[rows], tt[rows]), conley = dd_conley_panel_rows(sp, data, p, rows))
  b <- est$reg$coef[est$reg$keep]
  V <- est$vc$V
  kept_cols <- intersect(cols, names(b))
  # shares: each cohort's (weighted) observations at the relative period
  er <- est$rows
  ci <- colidx[rows][er]
  wk <- if (is.null(w)) rep(1, length(er)) else w[er]
  n_obs <- dd_cell_sums(wk[!is.na(ci)], ci[!is.na(ci)] - 1L, length(cols))[match(kept_cols, cols)]
  names(n_obs) <- kept_cols
  e_of <- combos$e[match(kept_cols, cols)]
  # aggregation matrix S (terms x coefficients): event times, then the ATT
  evs <- sort(unique(e_of))
  share <- function(sel) { s <- numeric(length(b)); names(s) <- names(b)
                           s[kept_cols[sel]] <- n_obs[sel] / sum(n_obs[sel]); s }
  S <- rbind(t(vapply(evs, function(e) share(e_of == e), numeric(length(b)))), share(e_of >= 0))
  terms <- c(paste0("event::", evs), "ATT")
  lc <- dd_lincom(b, V, S, terms)
  ag <- dd_reg_agg_table(est, lc, S, sp, band = seq_along(evs))
  tab <- ag$tab; Va <- ag$V; crit <- ag$crit
  tab$event <- c(evs, NA)
  info <- dd_reg_info(est, "did_sa", "Sun-Abraham interaction-weighted event study (did_sa)", yname, alpha,
                      terms, p$cluster, names(fel), n_units = attr(est$reg$fe_codes[[1]], "nlev"),
                      n_periods = attr(est$reg$fe_codes[[2]], "nlev"))
  if (sp$nboot > 0L) { info$vcov_type <- "bootstrap"; info$vcov_label <- ag$label }
  if (identical(est$vc$type, "CR2")) info$df <- stats::setNames(dd_vc_df(est$vc, S), terms)
  full <- dd_coef_table(b, sqrt(diag(V)), est$vc$df, alpha)
  new_dd_fit("did_sa", tab, stats::setNames(tab$estimate, terms), Va, info, call,
             list(cohort_coefs = full, vcov_full = V, shares = n_obs,
                  cohort_ref = stats::setNames(refg, cg0), path = est$path,
                  control_group = if (control == "last") sprintf("last:%s", format(glast)) else "never",
                  event_study = dd_es_spec(reference = ref), crit = crit, nboot = sp$nboot,
                  boot_weights = sp$boot_weights, cband = sp$cband))
}
