#' Reversible and non-binary treatments: de Chaisemartin and D'Haultfoeuille
#'
#' The event-study estimators of de Chaisemartin and D'Haultfoeuille (2024)
#' for treatments that may switch on and off, or change in intensity, as
#' DIDmultiplegtDYN's `did_multiplegt_dyn()`: for each group the first period
#' `F_g` at which its treatment differs from its first observed value (the
#' baseline), the effect `l` periods after that switch (`Effect_l`, reported
#' as event time `l - 1`) compares the group's outcome change since `F_g - 1`
#' with that of groups with the same baseline treatment that have not
#' switched yet; switchers in (treatment up) and out (down) are pooled with
#' their weights. Placebos (`Placebo_l`, event time `-l - 1`) compare the
#' changes over the `l` periods before `F_g - 1`. The reference period is the
#' last one before the switch (event time -1). The overall row `ATT` is the
#' average total effect per unit of treatment (DIDmultiplegtDYN's
#' "Av_tot_eff").
#'
#' Standard errors are the paper's analytic ones: influence functions per
#' group, recentred within cohorts (baseline, switch date and treatment after
#' the switch for switchers; baseline and period for controls) with the
#' cohort-size correction `sqrt(n / (n - 1))`, summed within clusters. The
#' influence functions go through the package's shared inference layer, so
#' `nboot > 0` gives a multiplier bootstrap (and `cband = TRUE` a uniform
#' band over the event times), which DIDmultiplegtDYN does not offer.
#'
#' @section Correspondence with DIDmultiplegtDYN:
#' `yname`, `idname`, `tname`, `dname` are its `outcome`, `group`, `time`,
#' `treatment`; `effects`, `placebo`, `normalized`, `switchers`, `controls`,
#' `less_conservative_se`,
#' `only_never_switchers`, `same_switchers`, `same_switchers_pl`, `trends_nonparam`, `trends_lin`,
#' `effects_equal` have its names and meaning (`switchers = "both"`
#' is its `""`, also accepted); `weightsname` is `weight`; `alpha` is
#' `1 - ci_level / 100`. The numbers equal DIDmultiplegtDYN 2.2.0 (the
#' newest release that runs without the polars package) to about 1e-14 in
#' the tests, and follow 2.4.0 where the two differ: the joint tests are `NA`
#' when the covariance of the estimates is numerically singular, and with
#' clusters a switcher alone in its cohort and in its period's cohort keeps
#' its whole outcome change in the variance. Unlike 2.4.0, the placebos' `n`
#' counts the cells of switchers out too (2.4.0 counts only switchers in).
#' The covariance of the estimates (`vcov()`) is the one the influence
#' functions imply; DIDmultiplegtDYN's stored `vcov` has wrong off-diagonal
#' terms (it uses the first group's value), which the joint tests do not use.
#' Missing outcomes and treatments are handled as DIDmultiplegtDYN does: a
#' row with a missing outcome still gives its treatment; a missing treatment
#' between two equal observed values (before the first switch, or after it
#' at the treatment of the switch) is filled in; a group whose switch date
#' is uncertain (treatment missing just before the first observed change)
#' is a control only up to its last period of known status. `by`,
#' `by_path` and `predict_het` have its names and meaning (`by_path` and
#' `predict_het` not combined with `trends_lin`); in `by_path`, the other
#' groups' periods before their switch are controls when their baseline
#' treatment equals the path's (DIDmultiplegtDYN compares only the first
#' character of the two). Not available: `continuous`, `bootstrap` (use
#' `nboot`), `design`, `date_first_switch`, `normalized_weights`,
#' `save_sample`, `dont_drop_larger_lower`,
#' `drop_if_d_miss_before_first_switch`.
#'
#' With `controls`, the estimates equal 2.2.0's; the standard errors follow
#' 2.4.0, which normalises each baseline treatment's controls coefficients'
#' influence by that baseline's own control cells and fits the not-yet-switched
#' outcome changes with the weights (2.2.0 counted the cells of every baseline
#' and dropped the weights there: SEs up to about 10% apart in the tests when
#' there are several baseline treatments, weights or gaps; identical
#' otherwise); `rules = "DIDmultiplegtDYN-2.2.0"` gives 2.2.0's. Controls that are collinear (or do not change over time) among
#' a baseline's not-yet-switched cells are left out for that baseline, with a
#' warning, as the peer does. With `trends_lin`, DIDmultiplegtDYN reports each
#' placebo's number of switchers from its last placebo run; diffdiff reports
#' the count of the run that gives the placebo's estimate.
#'
#' @param data A data frame: one row per group and period.
#' @param yname,idname,tname Names of the outcome, group and (numeric) period
#'   columns.
#' @param dname Name of the treatment column: binary, discrete or continuous,
#'   and free to change in both directions.
#' @param effects Number of effects after the switch (`Effect_1`, ...): at
#'   most as many as the data allow.
#' @param placebo Number of placebo estimates (0 for none).
#' @param normalized If `TRUE`, each effect is divided by the average total
#'   change in treatment it reflects (an effect per unit of treatment).
#' @param switchers `"both"` (default), `"in"` (treatment increases only) or
#'   `"out"` (decreases only).
#' @param only_never_switchers If `TRUE`, only groups that never switch are
#'   controls (not the not-yet-switched).
#' @param same_switchers If `TRUE`, every effect uses the same switchers:
#'   those observed, with controls, at all the `effects` horizons.
#' @param xformla,controls Time-varying control variables, as a one-sided
#'   formula (`~ x1 + x2`) or column names: `xformla` is the package's common
#'   name, `controls` DIDmultiplegtDYN's (give one).
#'   For each baseline treatment, the outcome's changes are net of the
#'   controls' changes times their coefficients, estimated by a regression of
#'   first differences with period effects on the not-yet-switched cells;
#'   the variance accounts for that estimation. Rows with a missing control
#'   are dropped.
#' @param same_switchers_pl With `same_switchers`: the placebos too use only
#'   the switchers whose placebos can all be estimated.
#' @param trends_nonparam Name of a group-level column (a region, say):
#'   controls must share the switcher's value (time effects by that
#'   variable).
#' @param trends_lin If `TRUE`, group-specific linear trends: the effects and
#'   placebos are estimated on the outcome's first differences and cumulated
#'   (no average total effect).
#' @param effects_equal If `TRUE`, `joint` also has the p-value of the test
#'   that all the effects are equal (`equal_effects`).
#' @param less_conservative_se If `TRUE`, the switchers' outcome changes are
#'   recentred on finer cohorts in the variance of the effects: groups with
#'   the same treatment path up to the horizon (or, with a single group on
#'   it, up to the switch, or the same baseline and switch date), as
#'   DIDmultiplegtDYN's option of that name (useful when treatments change
#'   several times).
#' @param by Name of a group-level column: the estimator on the groups of
#'   each of its values separately (DIDmultiplegtDYN's `by`); returns a
#'   [did_dcdh_by] object.
#' @param by_path A number `k`: the estimator separately for the `k` most
#'   common treatment paths of the switchers (their treatments from `F_g - 1`
#'   to `F_g - 1 + l`, `l` the number of effects the whole sample allows),
#'   each with the same switchers throughout and as controls the periods
#'   before their switch of the groups with the same baseline treatment;
#'   `-1` for all paths (DIDmultiplegtDYN's `by_path`). Returns a
#'   [did_dcdh_by] object. Not supported with `trends_lin` (an error).
#' @param predict_het Heterogeneity of the effects: a list of group-level
#'   covariates (column names) and the effects (`l`, also the placebos with
#'   those numbers; `-1` for all), as DIDmultiplegtDYN's `predict_het`; a
#'   character vector alone means all effects. For each effect, the
#'   switchers' outcome change since `F_g - 1` (sign-adjusted for switchers
#'   out) is regressed on the covariates and fixed effects for the cells of
#'   first-switch date x baseline treatment x direction (x `trends_nonparam`),
#'   weighted, with HC1 standard errors; `fit$predict_het` has the
#'   coefficients, t-based intervals and the p-value of the joint test that
#'   all covariates' coefficients are zero (`p_joint`). Not supported with
#'   `trends_lin` (an error; DIDmultiplegtDYN regresses the outcome in
#'   levels there, a combination not checked here) or `normalized`.
#' @param estimand `"dynamic"` (default): the event-study effects above;
#'   `"DID_M"`: the instantaneous effect of de Chaisemartin and
#'   D'Haultfoeuille (2020), DIDmultiplegt's `did_multiplegt(mode = "old")`:
#'   every switch between two consecutive periods (not only the first) is
#'   compared with the groups of the same prior treatment whose treatment
#'   stays stable, `placebo` gives its placebos (the outcome change `k`
#'   periods earlier, among groups stable over those periods), and the terms
#'   are `DID_M`, `placebo_1`, ... (not an event study). Its standard errors
#'   are analytic (DIDmultiplegt bootstraps them): the influence functions
#'   given the treatments, with the outcome changes recentred within each
#'   period x prior treatment x (rising, stable, falling) cell.
#' @param threshold_stable_treatment With `estimand = "DID_M"`: a change in
#'   treatment of at most this size counts as stable (DIDmultiplegt's option
#'   of that name).
#' @param weightsname Name of a column of weights (of group-period cells).
#' @param cluster Name of a column of clusters containing the groups (the
#'   default clusters by group).
#' @param survey Optional complex survey design of `data` ([survey_design()]
#'   or a survey package design; each group within one PSU): its weights
#'   are the cell weights, and the standard errors are design-based
#'   variances of the groups' influence-function totals (Taylor
#'   linearisation over strata and PSUs, or the replicate weights); with
#'   `nboot`, one multiplier per PSU. An extension: DIDmultiplegtDYN has no
#'   survey designs. Not combined with `weightsname` or `cluster`.
#' @param alpha Significance level.
#' @param nboot Multiplier bootstrap draws (0: the analytic variance).
#' @param boot_weights,cband Bootstrap weights and a uniform band over the
#'   event times (`cband = TRUE` needs `nboot > 0`; an error otherwise).
#' @param rules Peer rules ([dd_rules]): `"default"` (DIDmultiplegtDYN
#'   2.4.0's variance with `controls`) or `"DIDmultiplegtDYN-2.2.0"` (2.2.0's:
#'   the controls' coefficients' influence normalised by every baseline
#'   treatment's control cells, the not-yet-switched outcome changes fitted
#'   without the weights). Only the standard errors with `controls` differ;
#'   not with `estimand = "DID_M"`.
#' @return A `did_dcdh` fit (a [dd_fit][dd_fit-methods]) with the effects,
#'   placebos and `ATT` in `coeftable` (`event`, `n` = cells used,
#'   `switchers` = switcher cells), the typed event study (so `plot()`,
#'   `autoplot()`, [honest_did()] and [pretrends_power()] work), `joint`
#'   (the p-values of the joint tests that all effects, and all placebos,
#'   are zero), `delta_D_avg_total` and, with `predict_het`, `predict_het`.
#'   With `by` or `by_path`, a [did_dcdh_by] object: one fit per level or
#'   path.
#' @references de Chaisemartin, C. and D'Haultfoeuille, X. (2024).
#'   Difference-in-differences estimators of intertemporal treatment
#'   effects. Review of Economics and Statistics.
#' @seealso [twfe_weights()] for why the TWFE regression fails here.
#' @examples
#' d <- read.csv(system.file("extdata", "reversible_panel.csv", package = "diffdiff"))
#' f <- did_dcdh(d, "y", "id", "t", "D_rev", effects = 3, placebo = 2)
#' f
#' plot(f)
#' @export
did_dcdh <- function(data, yname, idname, tname, dname, effects = 1, placebo = 0, normalized = FALSE,
                     switchers = c("both", "in", "out"), only_never_switchers = FALSE, same_switchers = FALSE,
                     same_switchers_pl = FALSE,
                     controls = NULL, trends_nonparam = NULL, trends_lin = FALSE, effects_equal = FALSE,
                     less_conservative_se = FALSE, by = NULL, by_path = NULL, predict_het = NULL,
                     estimand = c("dynamic", "DID_M"), threshold_stable_treatment = 0,
                     weightsname = NULL, cluster = NULL,
                     survey = NULL, alpha = 0.05, nboot = 0, boot_weights = c("rademacher", "mammen", "webb"),
                     cband = FALSE, rules = "default", xformla = NULL) {
  call <- match.call()
  # the package's common name for covariates; `controls` is DIDmultiplegtDYN's
  if (!is.null(xformla)) {
    if (!is.null(controls)) dd_stop("`xformla` and `controls` name the same thing (the time-varying controls); give one.")
    controls <- xformla
  }
  dd_required(c("data", "yname", "idname", "tname", "dname"), labels = c(dname = "the treatment column"))
  dd_check_data(data)
  sp <- dd_spec(alpha = alpha, nboot = nboot, boot_weights = boot_weights, cband = cband, effects = effects,
                placebo = placebo)
  effects <- sp$effects; placebo <- sp$placebo
  rl <- dd_rules(rules, "did_dcdh")
  dd_check_flag(normalized, "normalized"); dd_check_flag(only_never_switchers, "only_never_switchers")
  dd_check_flag(same_switchers, "same_switchers"); dd_check_flag(trends_lin, "trends_lin")
  dd_check_flag(same_switchers_pl, "same_switchers_pl")
  if (same_switchers_pl && !same_switchers)
    dd_stop("`same_switchers_pl` = TRUE needs `same_switchers` = TRUE (as in DIDmultiplegtDYN).")
  dd_check_flag(effects_equal, "effects_equal"); dd_check_flag(less_conservative_se, "less_conservative_se")
  dd_check_string(trends_nonparam, "trends_nonparam", null_ok = TRUE)
  if (identical(switchers, "")) switchers <- "both"
  switchers <- dd_match_arg(if (identical(switchers, eval(formals()$switchers))) "both" else switchers,
                            c("both", "in", "out"), "switchers")
  dd_check_string(cluster, "cluster", null_ok = TRUE)
  if (!is.null(cluster) && identical(cluster, idname)) cluster <- NULL
  dd_check_string(by, "by", null_ok = TRUE)
  estimand <- dd_match_arg(if (identical(estimand, c("dynamic", "DID_M"))) "dynamic" else estimand,
                           c("dynamic", "DID_M"), "estimand")
  if (!is.numeric(threshold_stable_treatment) || length(threshold_stable_treatment) != 1L ||
      !is.finite(threshold_stable_treatment) || threshold_stable_treatment < 0)
    dd_stop("`threshold_stable_treatment` must be a number >= 0; got %s.", dd_show(threshold_stable_treatment))
  if (estimand == "DID_M") {
    used <- c(normalized = normalized, only_never_switchers = only_never_switchers, same_switchers = same_switchers,
              controls = !is.null(controls), trends_nonparam = !is.null(trends_nonparam), trends_lin = trends_lin,
              effects_equal = effects_equal, less_conservative_se = less_conservative_se, by = !is.null(by),
              by_path = !is.null(by_path), predict_het = !is.null(predict_het), weightsname = !is.null(weightsname),
              survey = !is.null(survey), switchers = switchers != "both", rules = rl$rule != "default")
    if (any(used)) dd_stop("estimand = \"DID_M\" does not take %s (the dynamic estimator does).",
                           paste0("`", names(used)[used], "`", collapse = ", "))
  } else if (threshold_stable_treatment > 0)
    dd_stop("`threshold_stable_treatment` applies to estimand = \"DID_M\" only.")
  if (!is.null(by_path)) {
    if (!is.numeric(by_path) || length(by_path) != 1L || is.na(by_path) ||
        !(by_path == -1 || (by_path >= 1 && by_path == round(by_path))))
      dd_stop("`by_path` must be a whole number >= 1 (the most common paths) or -1 (all paths); got %s.",
              dd_show(by_path))
    if (!is.null(by)) dd_stop("`by` and `by_path` cannot be combined.")
    if (trends_lin) dd_stop("`by_path` is not supported with `trends_lin` = TRUE; use one of them.")
  }
  het <- dd_dcdh_het_arg(predict_het, data, idname, normalized, trends_lin)
  # by / by_path: the estimator on each subsample (arguments as checked here);
  # by_path first estimates on the whole sample to find the paths
  if (!is.null(by) || !is.null(by_path)) {
    args <- mget(names(formals()), environment())
    args$by <- args$by_path <- NULL
    if (!is.null(by)) return(dd_dcdh_by(args, by))
  }
  xf <- dd_dcdh_controls_formula(controls, data)
  design <- dd_if_design(survey, data, weightsname, cluster, sp$nboot)
  p <- dd_panel(data, yname, idname, tname, c(dname = dname, if (!is.null(cluster)) c(cluster = cluster),
                                               if (!is.null(trends_nonparam)) c(trends_nonparam = trends_nonparam)),
                xf, weightsname, design = design, na_ok = c("yname", "dname"), sorted = TRUE)
  dd_svy_check_units(design, p, idname, "group")
  d <- dd_check_numeric_col(p$vals$dname, "dname", dname)
  if (any(is.infinite(d))) dd_stop("`dname` = \"%s\" has infinite values.", dname)
  if (all(is.na(d))) dd_stop("`dname` = \"%s\" is missing in every row.", dname)
  if (all(is.na(p$y))) dd_stop("`yname` = \"%s\" is missing in every row.", yname)
  if (length(unique(d[!is.na(d)])) < 2L)
    dd_stop("`dname` = \"%s\" takes one value (%s): nothing switches.", dname, format(d[!is.na(d)][1]))
  nG <- attr(p$idc, "nlev"); nT <- attr(p$tc, "nlev")
  if (estimand == "DID_M") {
    cc <- NULL
    if (!is.null(cluster)) {
      cc <- dd_sorted_codes(p$vals$cluster)
      dd_check_constant_within(cc, p$id, "cluster", cluster, code = p$idc)
      dd_check_nclusters(attr(cc, "nlev"), cluster)
      cc <- cc + 1L
    }
    return(dd_dcdh_m_fit(p, d, placebo, threshold_stable_treatment, cc, sp, call, yname, idname, tname, cluster))
  }
  idx <- cbind(p$idc + 1L, p$tc + 1L)
  mat <- function(v) { m <- matrix(NA_real_, nG, nT); m[idx] <- v; m }
  P <- matrix(FALSE, nG, nT); P[idx] <- TRUE
  CL <- NULL
  if (!is.null(cluster)) {
    cc <- dd_sorted_codes(p$vals$cluster)
    dd_check_constant_within(cc, p$id, "cluster", cluster, code = p$idc)
    dd_check_nclusters(attr(cc, "nlev"), cluster)
    CL <- mat(cc + 1)
  }
  gl <- p$id[dd_first_rows(p$idc)]
  tnp <- NULL
  if (!is.null(trends_nonparam)) {
    tc <- dd_sorted_codes(p$vals$trends_nonparam)
    dd_check_constant_within(tc, p$id, "trends_nonparam", trends_nonparam, code = p$idc)
    tnp <- tc[dd_first_rows(p$idc)]
  }
  # the controls as group x period matrices
  X <- if (is.null(p$X) || !ncol(p$X)) NULL
       else stats::setNames(lapply(seq_len(ncol(p$X)), function(j) mat(p$X[, j])), colnames(p$X))
  run <- function(Y, P, CL, gl, tnp, effects, placebo, same, same_pl = FALSE, X = NULL)
    dd_dcdh_engine(P, Y, mat(d)[gl$rows, gl$cols, drop = FALSE],
                   mat(if (is.null(p$w)) rep(1, length(p$y)) else p$w)[gl$rows, gl$cols, drop = FALSE],
                   CL, gl$id, effects, placebo, normalized, if (switchers == "both") "" else switchers,
                   only_never_switchers, tnp = tnp, same_switchers = same, same_switchers_pl = same_pl,
                   less_conservative_se = less_conservative_se,
                   X = X, rules = rl)
  all <- list(rows = seq_len(nG), cols = seq_len(nT), id = gl)
  r <- if (trends_lin) dd_dcdh_trends_lin(run, P, mat(p$y), mat(d), CL, all, tnp, effects, placebo, X)
       else run(mat(p$y), P, CL, all, tnp, effects, placebo, same_switchers, same_switchers_pl, X = X)
  if (!is.null(by_path)) return(dd_dcdh_by_path(args, by_path, r, p))
  dd_dcdh_result(r, p, sp, call, yname, idname, tname, cluster, effects, placebo, effects_equal, design,
                 if (!is.null(het)) dd_dcdh_predict_het(r, het, data, idname, sp$alpha), rules = rl$rule)
}

# the fit: effects (event l - 1), placebos (event -l - 1), the average total
# effect (ATT); variance from the group (cluster) influence functions
dd_dcdh_result <- function(r, p, sp, call, yname, idname, tname, cluster, effects, placebo,
                           effects_equal = FALSE, design = NULL, predict_het = NULL, rules = "default") {
  le <- nrow(r$Effects); lp <- if (is.null(r$Placebos)) 0L else nrow(r$Placebos)
  notes <- character()
  if (le < effects) notes <- c(notes, sprintf("%d effect(s) requested; the data allow %d.", effects, le))
  if (lp < placebo) notes <- c(notes, sprintf("%d placebo(s) requested; the data allow %d.", placebo, lp))
  M <- rbind(r$Effects, r$Placebos, r$ATE)
  ev <- c(seq_len(le) - 1, if (lp) -seq_len(lp) - 1, if (!is.null(r$ATE)) NA)
  terms <- c(paste0("event::", ev[!is.na(ev)]), if (!is.null(r$ATE)) "ATT")
  est <- stats::setNames(M[, "Estimate"], terms)
  # influence functions: the effects' and placebos' (cluster sums), and the
  # average total effect's; V = crossprod / G^2 (a survey design: PSU totals
  # centred within strata, or replicate totals); the joint tests from this V
  U <- cbind(r$IF, r$IF_ate)
  colnames(U) <- terms
  band <- seq_len(le + lp)
  grow <- if (!is.null(design)) p$rows[dd_first_rows(p$idc)][match(r$groups, p$id[dd_first_rows(p$idc)])]
  res <- dd_if_result(est, U, r$G, sp, band, "dCDH influence functions",
                      sprintf("clustered (%s)", if (is.null(cluster)) idname else cluster),
                      ok = M[, "has_se"] == 1, design = design, unit_rows = grow)
  V <- res$V_analytic
  joint_p <- function(k) if (length(k) > 1L) dd_if_wald(est[k], V[k, k, drop = FALSE], length(k)) else NA_real_
  tab <- res$tab
  tab$event <- ev
  tab$n <- M[, "N"]; tab$switchers <- M[, "Switchers"]
  info <- dd_info("did_dcdh", "de Chaisemartin-D'Haultfoeuille event study (did_dcdh)", yname, length(p$y),
                  if (sp$nboot > 0L) "bootstrap" else "cluster", res$label, Inf,
                  sp$alpha, terms, n_units = attr(p$idc, "nlev"), n_periods = attr(p$tc, "nlev"),
                  n_clusters = res$n_clusters, notes = notes, more = list(rules = rules))
  new_dd_fit("did_dcdh", tab, est, res$V, info, call,
             list(event_study = dd_es_spec(reference = -1), crit = res$crit, nboot = sp$nboot,
                  boot_weights = sp$boot_weights, cband = sp$cband, tname = tname,
                  joint = c(effects = joint_p(seq_len(le)), placebos = joint_p(le + seq_len(lp)),
                            if (effects_equal) c(equal_effects = dd_if_wald_equal(est[seq_len(le)],
                                                                              V[seq_len(le), seq_len(le), drop = FALSE]))),
                  delta_D_avg_total = r$delta_D_avg_total, inf = U, estimand = "dynamic",
                  predict_het = predict_het))
}

# trends_lin: group-specific linear trends. The outcome becomes its change
# since the group's previous observation, groups switching in the second
# period and the first period are dropped, and effect l is the sum of the
# first l effects on the changes, all from the same switchers (placebo l
# likewise, with the same switchers for the placebos too); no average total
# effect. The influence functions are summed the same way.
dd_dcdh_trends_lin <- function(run, P, Y, D, CL, all, tnp, effects, placebo, X = NULL) {
  nG <- nrow(P); nT <- ncol(P)
  # change since the group's previous observation (across gaps)
  fd <- function(Y) {
    dY <- matrix(NA_real_, nG, nT); prev <- rep(NA_real_, nG)
    for (k in seq_len(nT)) {
      dY[, k] <- ifelse(P[, k], Y[, k] - prev, NA_real_)
      prev <- ifelse(P[, k], Y[, k], prev)
    }
    dY
  }
  dY <- fd(Y)
  dX <- if (is.null(X)) NULL else lapply(X, fd)
  first <- max.col(ifelse(P, 1, 0), ties.method = "first")
  d1 <- D[cbind(seq_len(nG), first)]
  chg <- P & !is.na(D) & D != d1
  Fg <- ifelse(rowSums(chg) > 0, max.col(ifelse(chg, 1, 0), ties.method = "first"), 0)
  rows <- which(Fg != 2); cols <- seq_len(nT)[-1]
  sub <- list(rows = rows, cols = cols, id = all$id[rows])
  memo <- list()
  go <- function(e, pl) {
    key <- paste(e, pl)
    if (is.null(memo[[key]])) memo[[key]] <<- go1(e, pl)
    memo[[key]]
  }
  go1 <- function(e, pl) {
    run(dY[rows, cols, drop = FALSE], P[rows, cols, drop = FALSE],
        if (is.null(CL)) NULL else CL[rows, cols, drop = FALSE], sub,
        if (is.null(tnp)) NULL else tnp[rows], e, pl, TRUE, pl > 0,
        if (is.null(dX)) NULL else lapply(dX, function(M) M[rows, cols, drop = FALSE]))
  }
  r1 <- go(effects, 0)
  le <- nrow(r1$Effects)
  eff <- r1$Effects; IFe <- matrix(0, nrow(r1$IF), le)
  G <- r1$G
  for (l in seq_len(le)) {
    r <- go(l, 0)
    U <- r$IF[, seq_len(l), drop = FALSE]
    eff[l, ] <- r$Effects[l, ]
    eff[l, "Estimate"] <- sum(r$Effects[seq_len(l), "Estimate"])
    IFe[, l] <- rowSums(U)
    eff[l, "has_se"] <- is.finite(sqrt(sum(IFe[, l]^2)) / r$G)
  }
  pls <- NULL; IFp <- NULL
  lp <- min(placebo, le)
  if (lp > 0) {
    rp <- go(lp, lp)
    lp <- if (is.null(rp$Placebos)) 0L else nrow(rp$Placebos)
    if (lp > 0) {
      pls <- rp$Placebos[seq_len(lp), , drop = FALSE]; IFp <- matrix(0, nrow(r1$IF), lp)
      for (l in seq_len(lp)) {
        r <- go(l, l)
        k <- grep("^Placebo_", colnames(r$IF))
        pls[l, ] <- r$Placebos[l, ]
        pls[l, "Estimate"] <- sum(r$Placebos[seq_len(l), "Estimate"])
        IFp[, l] <- rowSums(r$IF[, k[seq_len(l)], drop = FALSE])
        pls[l, "has_se"] <- is.finite(sqrt(sum(IFp[, l]^2)) / r$G)
      }
    }
  }
  U <- cbind(IFe, IFp)
  colnames(U) <- c(paste0("Effect_", seq_len(le)), if (lp) paste0("Placebo_", seq_len(lp)))
  list(Effects = eff, Placebos = pls, ATE = NULL, G = G, IF = U, IF_ate = NULL,
       delta_D_avg_total = NA_real_, groups = r1$groups)
}
