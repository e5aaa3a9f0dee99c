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
#' @param controls Time-varying control variables: column names (as
#'   DIDmultiplegtDYN's `controls`) or a one-sided formula (`~ x1 + x2`).
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
#'   [did_dcdh_by] object.
#' @param predict_het Heterogeneity of the effects: a list of group-level
#'   covariates (column names) and the effects (`l`, also the placebos with
#'   those numbers; `-1` for all), as DIDmultiplegtDYN's `predict_het`; a
#'   character vector alone means all effects. For each effect, the
#'   switchers' outcome change since `F_g - 1` (sign-adjusted for switchers
#'   out) is regressed on the covariates and fixed effects for the cells of
#'   first-switch date x baseline treatment x direction (x `trends_nonparam`),
#'   weighted, with HC1 standard errors; `fit$predict_het` has the
#'   coefficients, t-based intervals and the p-value of the joint test that
#'   all covariates' coefficients are zero (`p_joint`).
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
#'   event times (with `nboot > 0`).
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
                     cband = FALSE, rules = "default") {
  call <- match.call()
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
    if (trends_lin) dd_stop("`by_path` cannot be combined with `trends_lin` (not implemented).")
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
                   only_never_switchers, sp$alpha, tnp = tnp, same_switchers = same, same_switchers_pl = same_pl,
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
  # average total effect's; V = crossprod / G^2
  U <- cbind(r$IF, r$IF_ate)
  colnames(U) <- terms
  label <- sprintf("dCDH influence functions, clustered (%s)", if (is.null(cluster)) idname else cluster)
  # a survey design: the groups' influence functions become PSU totals
  # centred within strata (or replicate totals), the rows of the variance
  # and of the multiplier bootstrap
  R <- U
  if (!is.null(design)) {
    grow <- p$rows[dd_first_rows(p$idc)][match(r$groups, p$id[dd_first_rows(p$idc)])]
    R <- as.matrix(dd_if_rows(dd_ifs_dense(U), dd_svy_if_rows(design, grow)))
    colnames(R) <- terms
    label <- if (design$replicate) sprintf("dCDH influence functions, survey design (%d %s replicates)",
                                           ncol(design$repweights), design$type)
             else "dCDH influence functions, survey design (Taylor linearisation, PSUs within strata)"
  }
  V <- crossprod(R) / r$G^2
  se_ok <- is.finite(M[, "SE"])
  V[!se_ok, ] <- NA_real_; V[, !se_ok] <- NA_real_
  band <- seq_len(le + lp)
  # the joint tests (all effects, all placebos zero) from this same variance:
  # clustered or design-based, as the table's standard errors
  joint_p <- function(k) if (length(k) > 1L) dd_dcdh_joint(est[k], V[k, k, drop = FALSE], length(k)) else NA_real_
  bt <- dd_boot_table(est, V, Inf, sp, band, function(V) dd_ifs_boot(R, V, sp, band, label))
  tab <- bt$tab
  tab$event <- ev
  tab$n <- M[, "N"]; tab$switchers <- M[, "Switchers"]
  info <- dd_info("did_dcdh", "de Chaisemartin-D'Haultfoeuille event study (did_dcdh)", yname, length(p$y),
                  if (sp$nboot > 0L) "bootstrap" else "cluster", if (sp$nboot > 0L) bt$label else label, Inf,
                  sp$alpha, terms, n_units = attr(p$idc, "nlev"), n_periods = attr(p$tc, "nlev"),
                  n_clusters = if (is.null(design)) nrow(U) else if (design$replicate) NULL else nrow(R),
                  notes = notes, more = list(rules = rules))
  new_dd_fit("did_dcdh", tab, est, bt$V, info, call,
             list(event_study = dd_es_spec(reference = -1), crit = bt$crit, nboot = sp$nboot,
                  boot_weights = sp$boot_weights, cband = sp$cband, tname = tname,
                  joint = c(effects = joint_p(seq_len(le)), placebos = joint_p(le + seq_len(lp)),
                            if (effects_equal) c(equal_effects = dd_dcdh_equal(est[seq_len(le)],
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
    eff[l, "SE"] <- sqrt(sum(IFe[, l]^2)) / r$G
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
        pls[l, "SE"] <- sqrt(sum(IFp[, l]^2)) / r$G
      }
    }
  }
  U <- cbind(IFe, IFp)
  colnames(U) <- c(paste0("Effect_", seq_len(le)), if (lp) paste0("Placebo_", seq_len(lp)))
  list(Effects = eff, Placebos = pls, ATE = NULL, G = G, IF = U, IF_ate = NULL,
       delta_D_avg_total = NA_real_, groups = r1$groups)
}

# Wald test that the effects b are all equal (their deviations from their
# mean are zero: k - 1 degrees of freedom), as DIDmultiplegtDYN's
# effects_equal; NA when fewer than two effects or a singular covariance
dd_dcdh_equal <- function(b, V) {
  k <- length(b)
  if (k < 2L) return(NA_real_)
  Dm <- cbind(diag(k - 1L), 0) - 1 / k
  dd_dcdh_joint(drop(Dm %*% b), Dm %*% V %*% t(Dm), k - 1L)
}

# Wald test that the k estimates b are all zero; NA unless their covariance
# is well invertible (every eigenvalue above 1e-10, as DIDmultiplegtDYN 2.4.0)
dd_dcdh_joint <- function(b, Vs, k) {
  if (k < 2 || any(is.na(b)) || any(!is.finite(Vs))) return(NA_real_)
  ev <- eigen(Vs, symmetric = TRUE, only.values = TRUE)$values
  if (sum(ev > 1e-10) < k) return(NA_real_)
  stats::pchisq(drop(crossprod(b, solve(Vs, b))), df = k, lower.tail = FALSE)
}

# The estimator on the group x period matrices (balanced grid; P marks the
# observed cells): sample rules, switchers in and out, effects, placebos,
# the average total effect and the group (cluster) influence functions of
# the analytic variance. Follows DIDmultiplegtDYN 2.4.0 (checked against
# 2.2.0's numbers; see ?did_dcdh for where they differ).
dd_dcdh_engine <- function(P, Y, D, W, CL, gl, effects, placebo, normalized, switchers, only_never_switchers,
                           alpha, tnp = NULL, same_switchers = FALSE, same_switchers_pl = FALSE, X = NULL,
                           less_conservative_se = FALSE, rules = NULL) {
  cluster <- if (is.null(CL)) NULL else TRUE
  # the cells' key: the baseline treatment, and the trends_nonparam value
  bkey <- function() if (is.null(tnp)) d_sq else paste(d_sq, tnp, sep = "\r")
  nG <- nrow(P); nT <- ncol(P)
  K <- matrix(rep(seq_len(nT), each = nG), nG, nT)
  ## ---------------------------------------------------------------- helpers
  first_true <- function(L) {                 # first column index with TRUE
    r <- max.col(L * 1, ties.method = "first"); r[rowSums(L) == 0] <- NA; r }
  last_true <- function(L) {
    r <- max.col(L * 1, ties.method = "last");  r[rowSums(L) == 0] <- NA; r }
  rowcum <- function(L) {                     # cumulative sum along time
    if (ncol(L) == 1L) return(L * 1)
    M <- L * 1; for (k in 2:ncol(M)) M[, k] <- M[, k] + M[, k - 1]; M }
  lagM <- function(M, s) {                    # row-based lag within group
    out <- matrix(NA_real_, nrow(M), ncol(M))
    if (s < ncol(M)) out[, (s + 1):ncol(M)] <- M[, 1:(ncol(M) - s)]
    out }
  nz <- function(L) L & !is.na(L)                  # NA -> FALSE
  w0 <- function(x, L) { x[!L] <- 0; x }           # ifelse(L, x, 0) for L without NA
  wNA <- function(x, L) { x[!L] <- NA; x }         # ifelse(L, x, NA)

  ## ------------------------------------------------- 1. baseline, F_g
  min_d <- first_true(!is.na(D)); max_d <- last_true(!is.na(D))
  d_sq <- D[cbind(seq_len(nG), min_d)]
  dif <- D - d_sq
  up <- nz(P & !is.na(D) & dif > 0); dn <- nz(P & !is.na(D) & dif < 0)
  both <- P & rowcum(up) > 0 & rowcum(dn) > 0      # went above AND below D_g1
  P[both] <- FALSE
  ever <- rowcum(nz(P & !is.na(D) & abs(dif) > 0)) > 0
  Fg <- first_true(ever & P); Fg[is.na(Fg)] <- 0

  ## Design restriction: >= 2 distinct F_g (0 = never) within each baseline
  alive <- rowSums(P) > 0
  kk <- bkey(); bl0 <- sort(unique(kk[alive])); b0 <- match(kk, bl0)
  ndist <- tapply(Fg[alive], b0[alive], function(v) length(unique(v)))
  okb <- as.integer(names(ndist))[ndist >= 2]
  P[!(b0 %in% okb), ] <- FALSE
  alive <- rowSums(P) > 0
  G_XX <- sum(alive)
  if (G_XX == 0) dd_stop("no baseline treatment value has groups with two different first-switch dates (or never switching): no effect can be estimated.")

  ## keep (t, d) cells that still contain a not-yet-switched group
  b0[!alive] <- NA
  nyet <- nz(P & !ever)
  okc <- rowsum(nyet[alive, , drop = FALSE] * 1, b0[alive]) > 0
  cellok <- matrix(FALSE, nG, nT)
  cellok[alive, ] <- okc[match(b0[alive], as.integer(rownames(okc))), , drop = FALSE]
  P <- P & cellok
  colsP <- which(colSums(P) > 0)
  t_min <- min(colsP); T_max <- max(colsP)
  Fg[Fg == 0] <- T_max + 1

  ## ------------------------------------------------- 2. missing treatments
  Y[!P] <- NA; D[!P] <- NA; W[!P] <- NA
  last_obs <- last_true(P & !is.na(D) & K < Fg)
  Y[nz(P & K < min_d)] <- NA
  sw <- Fg < T_max + 1
  dsqM <- matrix(d_sq, nG, nT)
  m <- nz(P & sw & is.na(D) & K < last_obs & K > min_d); D[m] <- dsqM[m]
  cond3 <- sw & !is.na(last_obs) & last_obs < Fg - 1     # uncertain switch date
  Y[nz(P & cond3 & K > last_obs)] <- NA
  trunc <- ifelse(cond3, last_obs + 1, NA)
  Fg[cond3] <- T_max + 1
  dFg <- rep(NA_real_, nG); ok <- Fg <= nT
  dFg[ok] <- D[cbind(which(ok), Fg[ok])]
  m <- nz(P & Fg < T_max + 1 & is.na(D) & K > Fg & last_obs == Fg - 1)
  D[m] <- matrix(dFg, nG, nT)[m]
  nsw <- Fg == T_max + 1
  m <- nz(P & nsw & is.na(D) & K > min_d & K < max_d); D[m] <- dsqM[m]
  Y[nz(P & nsw & K > max_d)] <- NA
  trunc[nsw] <- max_d[nsw] + 1

  ## ------------------------------------------------- 3. balanced grid
  rows <- which(alive & rowSums(P) > 0); cols <- colsP
  sub <- function(M) M[rows, cols, drop = FALSE]
  P <- sub(P); Y <- sub(Y); D <- sub(D); W <- sub(W); K <- sub(K)
  if (!is.null(X)) X <- lapply(X, sub)
  if (!is.null(cluster)) CL <- sub(CL)
  d_sq <- d_sq[rows]; Fg <- Fg[rows]; trunc <- trunc[rows]; gl_kept <- gl[rows]
  if (!is.null(tnp)) tnp <- tnp[rows]
  nG <- length(rows); nK <- length(cols); kv <- cols
  hasfill <- rowSums(!P) > 0
  fgt <- ifelse(hasfill | is.na(trunc), Fg, pmin(Fg, trunc))   # F_g_trunc max
  bl <- sort(unique(bkey())); bi <- match(bkey(), bl)
  Tg <- (as.vector(tapply(fgt, bi, max)) - 1)[bi]
  N <- ifelse(is.na(Y) | is.na(D), 0, W); N[is.na(N)] <- 0

  ## S_g and no-first-stage switchers
  post <- K >= Fg & K <= Tg & !is.na(D)
  avg <- rowSums(ifelse(post, D, 0)) / rowSums(post)
  dropg <- !is.na(avg) & avg == d_sq & Fg != Tg + 1
  Sg <- as.numeric(avg > d_sq)
  Sg[is.nan(avg)] <- 1                                  # empty post window (as DIDmultiplegtDYN 2.4.0)
  Sg[Fg == T_max + 1] <- NA
  keep <- !dropg
  sel <- function(M) M[keep, , drop = FALSE]
  P <- sel(P); Y <- sel(Y); D <- sel(D); N <- sel(N); K <- sel(K); W <- sel(W)
  if (!is.null(X)) X <- lapply(X, sel)
  if (!is.null(cluster)) CL <- sel(CL)
  d_sq <- d_sq[keep]; Fg <- Fg[keep]; Tg <- Tg[keep]; Sg <- Sg[keep]
  if (!is.null(tnp)) tnp <- tnp[keep]
  gl_kept <- gl_kept[keep]; nG <- sum(keep)
  bl <- sort(unique(bkey())); bi <- match(bkey(), bl)
  cF <- match(Fg, kv)
  dfg <- ifelse(is.na(cF), NA_real_, D[cbind(seq_len(nG), ifelse(is.na(cF), 1L, cF))])
  dfg[is.na(dfg) & Fg == T_max + 1] <- d_sq[is.na(dfg) & Fg == T_max + 1]
  Lg <- Tg - Fg + 1
  Lpl <- ifelse(Fg >= 3, pmin(Lg, Fg - 2), NA)
  if (!is.null(cluster)) {
    cmin <- suppressWarnings(apply(CL, 1, min, na.rm = TRUE))
    cmax <- suppressWarnings(apply(CL, 1, max, na.rm = TRUE))
    if (any(cmax > cmin)) dd_stop("`cluster` must be constant within each group (the groups must be nested in the clusters).")
    clg <- cmin
  } else clg <- seq_len(nG)
  G <- G_XX
  # controls: the coefficients per baseline treatment, and the pieces of
  # their estimation's contribution to the variance
  ctl <- if (is.null(X)) NULL else dd_dcdh_controls(X, Y, N, W, K, Fg, d_sq, bi, G,
                                                         isTRUE(rules$dcdh_controls_2.2.0))
  # outcome change net of the controls' change (dX: the controls' changes)
  resid_dy <- function(dy, dX) {
    if (is.null(ctl)) return(dy)
    for (j in seq_along(dX)) dy <- dy - ctl$theta[, j] * dX[[j]]
    dy
  }

  ## ------------------------------------------------- 4. number of effects
  inS <- !is.na(Sg) & Sg == 1; outS <- !is.na(Sg) & Sg == 0
  mx <- function(v) { if (!length(v)) return(NA); m <- suppressWarnings(max(v, na.rm = TRUE)); if (!is.finite(m)) NA else m }
  L_u <- L_a <- Lp_u <- Lp_a <- NA
  if (switchers %in% c("", "in")) {
    L_u <- if (any(inS)) { m <- mx(Lg[inS]); if (is.na(m)) 0 else m } else 0
    if (placebo != 0 && any(inS)) { m <- mx(Lpl[inS]); Lp_u <- if (is.na(m) || m < 0) 0 else m }
  }
  if (switchers %in% c("", "out")) {
    L_a <- if (any(outS)) { m <- mx(Lg[outS]); if (is.na(m)) 0 else m } else 0
    if (placebo != 0 && any(outS)) { m <- mx(Lpl[outS]); Lp_a <- if (is.na(m) || m < 0) 0 else m }
  }
  bad <- function(L) is.na(L) || L == 0
  if ((switchers == "in" && bad(L_u)) || (switchers == "out" && bad(L_a)) ||
      (switchers == "" && bad(L_u) && bad(L_a)))
    dd_stop("no switcher%s has a not-yet-switched control with the same baseline treatment: no effect can be estimated.", if (switchers == "") "" else sprintf(" (switchers = \"%s\")", switchers))
  if (switchers == "") Lsel <- max(L_a, L_u, na.rm = TRUE)
  if (switchers == "in") Lsel <- L_u
  if (switchers == "out") Lsel <- L_a
  l_XX <- min(Lsel, effects)
  l_pl <- 0
  if (placebo != 0) {
    Lp <- switch(switchers, "in" = Lp_u, "out" = Lp_a, max(Lp_a, Lp_u, na.rm = TRUE))
    l_pl <- min(Lp, placebo, effects, na.rm = TRUE)
  }

  ## ------------------------------------------------- 5. core (one direction)
  cellsum <- function(M) {                          # sum within (d_sq, t)
    r <- rowsum(M, bi, na.rm = TRUE); r[match(bi, as.integer(rownames(r))), , drop = FALSE] }
  coh <- dd_combo_codes(bkey(), Fg, dfg)                      # (D_g1, F_g, D_gFg)
  clustered <- !is.null(cluster)

  # the horizon kernel's (C) inputs: cluster codes, and the groups in
  # baseline and in cohort order (to count distinct clusters)
  clc <- if (clustered) match(clg, unique(clg)) else integer()
  ncl <- length(unique(clc))
  ordx <- if (clustered) c(order(bi), order(coh)) - 1L else integer()
  kvd <- as.double(kv); Fgd <- as.double(Fg); Tgd <- as.double(Tg)
  # less_conservative_se: the switchers' treatment paths (baseline, F_g,
  # then the treatment at F_g, F_g + 1, ...; a missing one repeats the last)
  lcp <- NULL
  if (less_conservative_se) {
    key <- paste(bkey(), Fg); dprev <- d_sq
    lcp <- list(match(key, unique(key)))
    for (i in seq_len(max(l_XX, 1))) {
      cc <- match(Fg - 1 + i, kv); di <- rep(NA_real_, nG)
      di[!is.na(cc)] <- D[cbind(which(!is.na(cc)), cc[!is.na(cc)])]
      di[is.na(di)] <- dprev[is.na(di)]
      key <- paste(key, di); dprev <- di
      lcp[[i + 1L]] <- match(key, unique(key))
    }
  }

  core <- function(inc, n_eff, n_pl) {
    sgn <- if (inc == 1) 1 else -1
    Sgeq <- !is.na(Sg) & Sg == inc
    res <- list(N = numeric(n_eff), Ndw = numeric(n_eff), U = matrix(0, nG, n_eff),
                Uv = matrix(0, nG, n_eff), cnt = vector("list", n_eff),
                dnorm = numeric(n_eff), date = numeric(n_eff), dDg = vector("list", n_eff),
                Npl = numeric(n_pl), Npldw = numeric(n_pl), Upl = matrix(0, nG, max(n_pl, 1)),
                Uplv = matrix(0, nG, max(n_pl, 1)), cntpl = vector("list", n_pl),
                dnormpl = numeric(n_pl))
    keep_i <- vector("list", n_eff)
    # same_switchers: only switchers whose effects 1..n_eff all have an
    # observed outcome change and controls (F_g - 1 + n_eff <= T_g)
    same <- rep(TRUE, nG)
    if (same_switchers) {
      same <- Fg - 1 + n_eff <= Tg
      for (q in seq_len(n_eff)) {
        dyq <- Y - lagM(Y, q)
        nq <- (K < Fg) * 1; nq[is.na(dyq)] <- NA
        if (only_never_switchers) nq[nz(Fg > K & Fg < T_max + 1 & !is.na(dyq))] <- 0
        okq <- nz(K == Fg - 1 + q & !is.na(dyq) & cellsum(nq * N) > 0)
        same <- same & rowSums(okq) > 0
      }
    }
    # one horizon's cells: switchers `dist` (NA where dy is missing) against
    # the controls `never` with the same baseline: the influence functions of
    # the estimate (U) and of its variance (Uv), the counts and the
    # normalisation
    horizon <- function(dy, dist, never, i, dX = NULL, paths = NULL) {
      if (!is.double(dist)) storage.mode(dist) <- "double"
      if (!is.double(never)) storage.mode(never) <- "double"
      ms <- ds <- double()
      if (!is.null(paths)) { m <- dd_dcdh_path_means(dy, dist, N, paths); ms <- m$mean; ds <- m$dof }
      h <- .Call(C_dcdh_horizon, dy, dist, never, N, kvd, Fgd, Tgd, bi, coh, clc, ordx,
                 as.double(c(i, G, length(bl), max(coh), ncl)), ms, ds)
      out <- list(N = h$N, Ndw = h$Ndw, U = h$U, Uv = h$Uv, cnt = h$cnt, dnorm = 0)
      Ni <- h$N
      if (Ni == 0) return(out)
      if (!is.null(ctl)) {
        Nc <- h$Nc[bi, , drop = FALSE]
        ratio <- h$Ntg[bi, , drop = FALSE] / Nc; ratio[Nc == 0] <- 0
        out$Uv <- out$Uv - dd_dcdh_controls_var(ctl, dX, (i <= Tg - 2) * (G / Ni) *
          (dist - ratio * never) * ((K >= i + 1) & (K <= Tg)) * N, G)
      }
      if (normalized) {
        inwin <- nz(K >= Fg & K <= Fg - 1 + i & Sgeq)
        st <- rowSums(w0(D - d_sq, inwin), na.rm = TRUE)
        out$dnorm <- sum((N / Ni * sgn * matrix(st, nG, nK))[nz(dist == 1)], na.rm = TRUE)
      }
      out
    }
    for (i in seq_len(n_eff)) {
      dy <- Y - lagM(Y, i)
      never <- (K < Fg) * 1                               # F_g > t : not yet switched
      never[is.na(dy)] <- NA
      if (only_never_switchers) never[nz(Fg > K & Fg < T_max + 1 & !is.na(dy))] <- 0
      Nc <- cellsum(never * N)
      dist <- ((K == Fg - 1 + i) & (i <= Lg) & Sgeq & same & (Nc > 0)) * 1
      dist[is.na(dy)] <- NA
      if (i <= n_pl) keep_i[[i]] <- list(dist = dist, never = never)     # for the placebos
      dX <- if (is.null(ctl)) NULL else lapply(X, function(M) M - lagM(M, i))
      h <- horizon(resid_dy(dy, dX), dist, never, i, dX,
                   if (less_conservative_se) list(lcp[[1]], lcp[[2]], lcp[[i + 1]]))
      res$N[i] <- h$N; res$Ndw[i] <- h$Ndw; res$U[, i] <- h$U; res$Uv[, i] <- h$Uv; res$dnorm[i] <- h$dnorm
      if (h$N != 0) {
        res$cnt[[i]] <- h$cnt
        s1 <- nz(dist == 1)
        res$date[i] <- sum((N / h$N * sgn * (D - d_sq))[s1], na.rm = TRUE)
        res$dDg[[i]] <- w0(sgn * (D - d_sq), s1)
      }
    }
    # same_switchers_pl: only switchers whose placebos 1..n_pl all have an
    # observed outcome change and controls
    samepl <- rep(TRUE, nG)
    if (same_switchers_pl) for (q in seq_len(n_pl)) {
      dq <- lagM(Y, 2 * q) - lagM(Y, q)
      nq <- keep_i[[q]]$never * (!is.na(dq))
      okq <- nz(keep_i[[q]]$dist == 1 & !is.na(dq) & cellsum(nq * N) > 0)
      samepl <- samepl & rowSums(okq) > 0
    }
    for (i in seq_len(n_pl)) {
      dist <- keep_i[[i]]$dist * samepl; never <- keep_i[[i]]$never
      dpl <- lagM(Y, 2 * i) - lagM(Y, i)                  # Y(F_g - 1 - l) - Y(F_g - 1) at the switcher's row
      nevpl <- never * (!is.na(dpl))
      distpl <- dist * (!is.na(dpl)) * (cellsum(nevpl * N) > 0)
      dX <- if (is.null(ctl)) NULL else lapply(X, function(M) lagM(M, 2 * i) - lagM(M, i))
      h <- horizon(resid_dy(dpl, dX), distpl, nevpl, i, dX)
      res$Npl[i] <- h$N; res$Npldw[i] <- h$Ndw; res$Upl[, i] <- h$U; res$Uplv[, i] <- h$Uv
      res$dnormpl[i] <- h$dnorm
      if (h$N != 0) res$cntpl[[i]] <- h$cnt
    }
    ## average total effect pieces
    sumN <- sum(res$N)
    num <- numeric(nG); numv <- numeric(nG); den <- 0
    for (i in seq_len(n_eff)) if (res$N[i] != 0) {
      w <- res$N[i] / sumN
      num <- num + w * res$U[, i]; numv <- numv + w * res$Uv[, i]; den <- den + w * res$date[i]
    }
    res$sumN <- sumN; res$Uate <- num / den; res$Uatev <- numv / den; res$den <- den
    res
  }

  run_in <- switchers %in% c("", "in") && !is.na(L_u) && L_u != 0
  run_out <- switchers %in% c("", "out") && !is.na(L_a) && L_a != 0
  R1 <- if (run_in) core(1, min(L_u, l_XX), min(l_pl, if (is.na(Lp_u)) 0 else Lp_u)) else NULL
  R0 <- if (run_out) core(0, min(L_a, l_XX), min(l_pl, if (is.na(Lp_a)) 0 else Lp_a)) else NULL
  getN <- function(R, field, i) if (is.null(R) || i > length(R[[field]])) 0 else R[[field]][i]

  ## ------------------------------------------------- 6. aggregation
  z <- stats::qnorm(1 - alpha / 2)
  clsum <- function(u) as.vector(rowsum(u, clg))
  zeroM <- matrix(0, nG, nK)
  pick <- function(R, fld, i, Nval) if (Nval != 0) R[[fld]][[i]] else zeroM
  IFs <- list(); est <- c(); ses <- c(); names_est <- c()
  mk_row <- function(b, s, Ncnt, Sw, Nw, Sww)
    c(Estimate = b, SE = s, `LB CI` = b - z * s, `UB CI` = b + z * s,
      N = Ncnt, Switchers = Sw, N.w = Nw, Switchers.w = Sww)
  # horizon i of the effects (placebo = FALSE) or placebos: switchers in and
  # out pooled with their weights; the row and the cluster influence function
  pooled <- function(i, placebo) {
    f <- if (placebo) c(N = "Npl", U = "Upl", Uv = "Uplv", dn = "dnormpl", cnt = "cntpl", dw = "Npldw")
         else c(N = "N", U = "U", Uv = "Uv", dn = "dnorm", cnt = "cnt", dw = "Ndw")
    N1 <- getN(R1, f[["N"]], i); N0 <- getN(R0, f[["N"]], i); tot <- N1 + N0
    Up <- if (N1 != 0) R1[[f[["U"]]]][, i] else 0; Um <- if (N0 != 0) -R0[[f[["U"]]]][, i] else 0
    Vp <- if (N1 != 0) R1[[f[["Uv"]]]][, i] else 0; Vm <- if (N0 != 0) -R0[[f[["Uv"]]]][, i] else 0
    b <- if (tot > 0) (N1 * sum(Up) / G + N0 * sum(Um) / G) / tot else NA
    uv <- if (tot > 0) (N1 / tot) * Vp + (N0 / tot) * Vm else numeric(nG)
    uc <- clsum(uv + numeric(nG)); vs <- sum(uc^2)
    # an effect whose variance is exactly 0 has no SE (as 2.4.0); a placebo's is 0
    s <- if (tot > 0 && (placebo || vs > 0)) sqrt(vs) / G else NA
    dl <- 1
    if (normalized && tot > 0) {
      dl <- (N1 / tot) * getN(R1, f[["dn"]], i) + (N0 / tot) * getN(R0, f[["dn"]], i)
      if (!is.na(dl) && dl != 0) { b <- b / dl; s <- s / dl } else dl <- 1
    }
    if ((switchers == "" && N1 == 0 && N0 == 0) || (switchers == "out" && N0 == 0) ||
        (switchers == "in" && N1 == 0)) b <- NA
    # cells counted in either direction (as 2.2.0; see ?did_dcdh)
    cg <- pmax(pick(R1, f[["cnt"]], i, N1), pick(R0, f[["cnt"]], i, N0))
    list(row = mk_row(b, s, sum(cg > 0), getN(R1, f[["dw"]], i) + getN(R0, f[["dw"]], i), sum(cg), tot),
         IF = uc / dl, dl = dl)
  }
  eff <- matrix(NA_real_, l_XX, 8); deltaD <- numeric(l_XX)
  for (i in seq_len(l_XX)) {
    h <- pooled(i, FALSE)
    eff[i, ] <- h$row; deltaD[i] <- h$dl
    IFs[[paste0("Effect_", i)]] <- h$IF
  }
  colnames(eff) <- names(mk_row(0, 0, 0, 0, 0, 0)); rownames(eff) <- paste0("Effect_", seq_len(l_XX))

  ## average total effect
  sN1 <- sum(sapply(seq_len(l_XX), function(i) getN(R1, "N", i)))
  sN0 <- sum(sapply(seq_len(l_XX), function(i) getN(R0, "N", i)))
  den1 <- if (!is.null(R1) && sN1 != 0) R1$den else 0
  den0 <- if (!is.null(R0) && sN0 != 0) R0$den else 0
  if (switchers == "") {
    dd <- den1 * sN1 + den0 * sN0
    wp <- if (dd > 0) den1 * sN1 / dd else 0.5
  } else wp <- as.numeric(switchers == "in")
  Ua <- wp * (if (!is.null(R1) && sN1 != 0) R1$Uate else 0) +
    (1 - wp) * (if (!is.null(R0) && sN0 != 0) -R0$Uate else 0)
  Uav <- wp * (if (!is.null(R1) && sN1 != 0) R1$Uatev else 0) +
    (1 - wp) * (if (!is.null(R0) && sN0 != 0) -R0$Uatev else 0)
  ate_b <- sum(Ua + numeric(nG)) / G
  ate_s <- sqrt(sum(clsum(Uav + numeric(nG))^2)) / G
  cga <- zeroM
  for (i in seq_len(l_XX)) cga <- pmax(cga, pmax(pick(R1, "cnt", i, getN(R1, "N", i)),
                                                 pick(R0, "cnt", i, getN(R0, "N", i))))
  ate <- mk_row(ate_b, ate_s, sum(cga > 0),
                sum(sapply(seq_len(l_XX), function(i) getN(R1, "Ndw", i) + getN(R0, "Ndw", i))),
                sum(cga), sN1 + sN0)
  ate <- matrix(ate, 1, dimnames = list("Av_tot_eff", names(ate)))

  ## average number of periods over which effects accumulate
  Mg <- pmin(l_XX, Lg); num <- 0; dnm <- 0
  for (i in seq_len(l_XX)) for (R in list(R1, R0)) {
    if (is.null(R) || i > length(R$N) || R$N[i] == 0) next
    v <- R$dDg[[i]]; v[v == 0] <- NA
    num <- num + sum(v * (Mg - (i - 1)), na.rm = TRUE); dnm <- dnm + sum(v, na.rm = TRUE)
  }
  delta_D_avg_total <- num / dnm

  ## placebos
  pls <- NULL
  if (l_pl > 0) {
    pls <- matrix(NA_real_, l_pl, 8)
    for (i in seq_len(l_pl)) {
      h <- pooled(i, TRUE)
      pls[i, ] <- h$row
      IFs[[paste0("Placebo_", i)]] <- h$IF
    }
    colnames(pls) <- colnames(eff); rownames(pls) <- paste0("Placebo_", seq_len(l_pl))
  }

  ## the influence functions (the variance and the joint tests: dd_dcdh_result)
  U <- do.call(cbind, IFs)

  list(Effects = eff, ATE = ate, Placebos = pls,
       delta_D_avg_total = delta_D_avg_total, N_Effects = l_XX, N_Placebos = l_pl,
       G = G, IF = U, IF_ate = clsum(Uav + numeric(nG)), groups = gl_kept,
       design = list(Fg = Fg, D = D, Y = Y, W = W, kv = kv, Tg = Tg, Sg = Sg, d_sq = d_sq, tnp = tnp,
                     groups = gl_kept))
}

# `controls`: column names or a one-sided formula -> the covariate formula
dd_dcdh_controls_formula <- function(controls, data) {
  if (is.null(controls)) return(NULL)
  if (inherits(controls, "formula")) return(controls)
  if (!is.character(controls) || !length(controls) || anyNA(controls) || any(!nzchar(controls)))
    dd_stop("`controls` must be column names (a character vector) or a one-sided formula; got %s.",
            dd_show(controls))
  miss <- setdiff(controls, names(data))
  if (length(miss)) dd_stop("`controls` names %s, which is not a column of `data`.", dd_show(miss))
  stats::as.formula(paste("~", paste0("`", controls, "`", collapse = " + ")), env = baseenv())
}

# dCDH with controls (de Chaisemartin and D'Haultfoeuille 2024, web appendix;
# DIDmultiplegtDYN's `controls`). For each baseline treatment d whose groups
# have at least two first-switch dates, theta_d is the (weighted) regression
# of the first difference of the outcome on the first differences of the
# controls with period effects, over the not-yet-switched cells of baseline
# d; the effects then use the outcome's change net of theta_d'(change of the
# controls). The variance gets the estimation of theta_d through, per group,
# `inb` = (its share of theta_d's influence) - theta_d, which
# dd_dcdh_controls_var() weights by each horizon's M. Y, N, W, K and X[[j]]
# are group x period matrices; Fg, d_sq, bi are per group (bi: the cell key
# of baseline and trends_nonparam).
dd_dcdh_controls <- function(X, Y, N, W, K, Fg, d_sq, bi, G, v220 = FALSE) {
  nG <- nrow(Y); nX <- length(X)
  lag1 <- function(M) cbind(NA_real_, M[, -ncol(M), drop = FALSE])
  dY <- Y - lag1(Y)
  dX <- lapply(X, function(M) M - lag1(M))
  okX <- Reduce(`&`, lapply(dX, function(M) !is.na(M)))
  nys <- K < Fg & !is.na(dY)                        # not yet switched, outcome change observed
  col_of <- function(v, L) matrix(vapply(v, function(M) M[L], numeric(sum(L))), ncol = length(v),
                                  dimnames = list(NULL, paste0("x", seq_along(v))))
  # the package's least squares (dd_regress: fixed effects absorbed, pivoted
  # QR); a collinear control gets coefficient 0 (DIDmultiplegtDYN's invsym)
  ols <- function(y, Xm, fe, w) {
    r <- suppressMessages(dd_regress(y, Xm, list(cell = dd_codes(fe)), w, none_ok = TRUE))
    b <- r$coef; b[is.na(b)] <- 0
    B <- matrix(0, nX, nX); B[r$keep, r$keep] <- r$bread
    list(coef = unname(b), bread = B, Xd = r$Xd, keep = r$keep, fitted = y - r$resid)
  }
  theta <- matrix(0, nG, nX); levels <- list(); singular <- character()
  for (l in sort(unique(d_sq))) {
    lev <- d_sq == l
    if (length(unique(Fg[lev])) < 2L) next
    ml <- nys & okX & lev & N > 0
    if (!any(ml)) dd_stop("`controls`: the groups with baseline treatment %s have no not-yet-switched period with the outcome and the controls observed in two consecutive periods; their controls' coefficients cannot be estimated.", format(l))
    # theta_d: the outcome's first differences on the controls', within
    # (baseline x trends_nonparam) x period cells, weighted
    gi <- row(ml)[ml]
    th_fit <- ols(dY[ml], col_of(dX, ml), dd_combo_codes(bi[gi], K[ml]), N[ml])
    if (!all(th_fit$keep)) singular <- c(singular, format(l))
    th <- th_fit$coef
    # the normalisation of theta_d's influence: the baseline's control cells
    # (DIDmultiplegtDYN 2.4.0); 2.2.0 counted every baseline's, and fitted
    # E-hat below without the weights (rules = "DIDmultiplegtDYN-2.2.0"
    # reproduces both, for the parity tests against 2.2.0's numbers)
    rsum <- if (v220) sum(N[K >= 2 & K <= max(Fg) - 1 & nys]) else sum(N[ml & K >= 2 & K <= max(Fg[gi]) - 1])
    inv_den <- th_fit$bread * rsum * G
    # E-hat: period effects + controls' changes, fitted over the baseline's
    # not-yet-switched cells (weighted; rows with a control missing left out)
    rr <- nys & okX & lev
    E <- matrix(NA_real_, nG, ncol(Y))
    E[rr] <- ols(dY[rr], col_of(dX, rr), K[rr], if (v220) rep(1, sum(rr)) else W[rr])$fitted
    ehd <- colSums(nys & lev)                        # not-yet-switched cells per period
    E[rr] <- E[rr] * (ehd[col(rr)[rr]] >= 2)
    fac <- ifelse(ehd >= 2, sqrt(ehd / pmax(ehd - 1, 1)), 1)
    T_d <- max(Fg[lev]) - 1
    N_c <- sum(N[nys & lev & K >= 2 & K <= T_d])
    # each group's sum over its control cells of the demeaned controls'
    # changes times the recentred outcome change
    f <- N * matrix(fac, nG, ncol(Y), byrow = TRUE) * (dY - E) / N_c
    f[!(K >= 2 & K <= Fg - 1) | is.na(E)] <- 0
    in_sum <- matrix(0, nG, nX)
    sg <- rowsum(f[ml] * th_fit$Xd, gi, reorder = TRUE)
    in_sum[as.integer(rownames(sg)), th_fit$keep] <- sg
    inb <- (lev & Fg >= 3) * (in_sum %*% t(inv_den)) - matrix(th, nG, nX, byrow = TRUE)
    theta[lev, ] <- matrix(th, sum(lev), nX, byrow = TRUE)
    levels[[length(levels) + 1L]] <- list(lev = lev, inb = inb)
  }
  if (length(singular))
    warning(sprintf("`controls`: the controls are collinear among the not-yet-switched cells of the groups with baseline treatment %s; the collinear ones are left out there.", paste(singular, collapse = ", ")), call. = FALSE)
  list(theta = theta, levels = levels)
}

# The controls' part of a horizon's variance influence functions (one per
# group): sum over baselines d and controls j of M_dj * inb_dj, where M_dj
# averages the horizon's weights `base` (groups x periods) times the
# controls' changes dX[[j]] over the groups of baseline d.
dd_dcdh_controls_var <- function(ctl, dX, base, G) {
  part <- numeric(nrow(base))
  for (lv in ctl$levels) for (j in seq_along(dX)) {
    M <- sum((base * dX[[j]])[lv$lev, , drop = FALSE], na.rm = TRUE) / G
    part <- part + M * lv$inb[, j]
  }
  part
}

# less_conservative_se: each switcher's cohort mean of the outcome change and
# its number of groups, over the finest of its treatment paths
# (paths[[3]]: up to this horizon; paths[[2]]: baseline, F_g and the
# treatment at F_g; paths[[1]]: baseline and F_g) that has more than one
# group (as DIDmultiplegtDYN: groups, not clusters)
dd_dcdh_path_means <- function(dy, dist, N, paths) {
  sf <- N != 0 & !is.na(dist) & dist == 1
  w <- function(x) { x[!sf | is.na(x)] <- 0; x }
  cnt <- rowSums(w(N)); tot <- rowSums(w(N * dy)); dof <- rowSums(sf & !is.na(dy))
  by <- function(v, code) as.vector(rowsum(v, code, reorder = TRUE))[code]
  lv <- lapply(paths, function(code) list(mean = by(tot, code) / by(cnt, code), dof = by(dof, code),
                                          full = tabulate(code)[code] > 1))
  pick <- function(f) {
    v <- ifelse(lv[[3]]$full, lv[[3]][[f]], NA_real_)
    v <- ifelse(!lv[[3]]$full & lv[[2]]$full, lv[[2]][[f]], v)
    ifelse(!lv[[2]]$full, lv[[1]][[f]], v)
  }
  list(mean = pick("mean"), dof = pick("dof"))
}

# by: the estimator on the groups of each value of a group-level column
dd_dcdh_by <- function(args, by) {
  data <- args$data
  if (!by %in% names(data)) dd_stop("`by` = \"%s\" is not a column of `data`.", by)
  v <- data[[by]]; id <- data[[args$idname]]
  if (anyNA(v)) dd_stop("`by` = \"%s\" has missing values.", by)
  dd_check_constant_within(v, id, "by", by, what = "group")
  lev <- if (is.factor(v)) levels(droplevels(v)) else as.character(sort(unique(v)))
  vv <- as.character(v)
  fits <- lapply(lev, function(l) { a <- args; a$data <- data[vv == l, , drop = FALSE]; do.call(did_dcdh, a) })
  names(fits) <- lev
  dd_dcdh_by_result(fits, by, data.frame(level = lev, groups = vapply(lev, function(l)
    length(unique(id[vv == l])), numeric(1)), row.names = NULL))
}

# by_path: the estimator separately for the most common treatment paths
# (the treatments from F_g - 1 to F_g - 1 + l, l = the number of effects the
# whole sample allows), each with the groups on that path and the periods
# before their switch of the other groups with the same baseline treatment,
# all effects from the same switchers (as DIDmultiplegtDYN's by_path)
dd_dcdh_by_path <- function(args, by_path, r, p) {
  des <- r$design; l <- r$N_Effects
  nG <- length(des$Fg)
  vals <- vapply(0:l, function(j) {
    cc <- match(des$Fg - 1 + j, des$kv); out <- rep(NA_real_, nG)
    out[!is.na(cc)] <- des$D[cbind(which(!is.na(cc)), cc[!is.na(cc)])]
    out }, numeric(nG))
  vals <- matrix(vals, nG)
  complete <- rowSums(is.na(vals)) == 0
  path <- rep(NA_character_, nG)
  path[complete] <- apply(vals[complete, , drop = FALSE], 1, function(v) paste(as.character(v), collapse = ","))
  if (!any(complete)) dd_stop("`by_path`: no switcher is observed over its %d period(s) after the switch.", l)
  cnt <- table(factor(path[complete], levels = unique(path[complete])))
  ord <- order(-as.vector(cnt), seq_along(cnt))          # most groups first; ties: first seen
  paths <- names(cnt)[ord]
  k <- if (by_path == -1) length(paths) else min(by_path, length(paths))
  if (by_path > length(paths))
    message(sprintf("diffdiff: %d treatment paths requested; the data have %d.", by_path, length(paths)))
  paths <- paths[seq_len(k)]
  # the rows of the data behind the panel: each group's first switch and baseline
  gi <- match(p$id, des$groups)                          # NA: groups the estimator dropped
  rowsd <- p$rows
  base <- vals[, 1]
  tcol <- p$tc + 1L
  fits <- lapply(paths, function(pp) {
    on <- !is.na(path) & path == pp
    b0 <- base[on][1]
    same <- !is.na(base) & base == b0
    keep <- !is.na(gi) & (on[gi] | (same[gi] & tcol < des$Fg[gi]))
    keep[is.na(keep)] <- FALSE
    a <- args
    a$data <- args$data[rowsd[keep], , drop = FALSE]
    a$same_switchers <- TRUE
    do.call(did_dcdh, a)
  })
  names(fits) <- paths
  dd_dcdh_by_result(fits, "path", data.frame(level = paths, groups = as.vector(cnt[paths]), row.names = NULL))
}

dd_dcdh_by_result <- function(fits, by, levels) {
  structure(list(fits = fits, by = by, levels = levels), class = "did_dcdh_by")
}

#' Estimates of did_dcdh() by subgroup or by treatment path
#'
#' `did_dcdh(..., by = )` and `did_dcdh(..., by_path = )` return one
#' [did_dcdh()] fit per level of `by` (or per treatment path) in `$fits`, a
#' named list; `$levels` has the number of groups of each. `print()` shows
#' each fit's table, `plot()` draws the event studies together
#' ([plot_event_studies()]), `tidy()` stacks the tables with a `by` column.
#' @param x A `did_dcdh_by` object.
#' @param ... Passed to [plot_event_studies()] (plot) or ignored.
#' @return `print()` and `plot()` return `x` invisibly (`plot()`: the data
#'   drawn); `tidy()` a data frame.
#' @name did_dcdh_by
#' @examples
#' d <- read.csv(system.file("extdata", "reversible_panel.csv", package = "diffdiff"))
#' b <- did_dcdh(d, "y", "id", "t", "D_multi", effects = 2, placebo = 1, by_path = 2)
#' b
#' plot(b)
#' tidy(b)
NULL

#' @rdname did_dcdh_by
#' @export
print.did_dcdh_by <- function(x, ...) {
  cat(sprintf("did_dcdh by %s: %d %s\n", if (x$by == "path") "treatment path" else x$by, length(x$fits),
              if (x$by == "path") "paths" else "levels"))
  for (k in seq_along(x$fits)) {
    cat(sprintf("\n== %s %s (%d groups)\n", if (x$by == "path") "Path" else paste0(x$by, " ="), names(x$fits)[k],
                as.integer(x$levels$groups[k])))
    print(x$fits[[k]], ...)
  }
  invisible(x)
}

#' @rdname did_dcdh_by
#' @export
plot.did_dcdh_by <- function(x, ...) {
  fits <- x$fits
  names(fits) <- if (x$by == "path") paste("path", names(fits)) else paste(x$by, "=", names(fits))
  plot_event_studies(fits, main = sprintf("did_dcdh by %s", if (x$by == "path") "treatment path" else x$by),
                     xlab = dd_es_xlab(fits[[1]]), ...)
}

#' @rdname did_dcdh_by
#' @export
tidy.did_dcdh_by <- function(x, ...) {
  do.call(rbind, lapply(seq_along(x$fits), function(k)
    cbind(by = names(x$fits)[k], tidy(x$fits[[k]]), stringsAsFactors = FALSE)))
}

# predict_het: the covariates (constant within groups) and the effects
dd_dcdh_het_arg <- function(predict_het, data, idname, normalized, trends_lin) {
  if (is.null(predict_het)) return(NULL)
  if (is.character(predict_het)) predict_het <- list(predict_het, -1)
  if (!is.list(predict_het) || length(predict_het) != 2L || !is.character(predict_het[[1]]) ||
      !length(predict_het[[1]]) || !is.numeric(predict_het[[2]]) || anyNA(predict_het[[2]]) ||
      !all(predict_het[[2]] == -1 | (predict_het[[2]] >= 1 & predict_het[[2]] == round(predict_het[[2]]))))
    dd_stop("`predict_het` must be list(covariates, effects): column names and effect numbers (>= 1, or -1 for all); got %s.",
            dd_show(predict_het))
  if (normalized) dd_stop("`predict_het` cannot be combined with `normalized` (as in DIDmultiplegtDYN).")
  if (trends_lin) dd_stop("`predict_het` cannot be combined with `trends_lin` (not implemented).")
  cv <- predict_het[[1]]
  miss <- setdiff(cv, names(data))
  if (length(miss)) dd_stop("`predict_het` names %s, which is not a column of `data`.", dd_show(miss))
  for (v in cv) {
    x <- data[[v]]
    if (!is.numeric(x) && !is.logical(x))
      dd_stop("`predict_het` covariate \"%s\" must be numeric; it is %s.", v, class(x)[1])
    dd_check_constant_within(x, data[[idname]], "predict_het", v, what = "group")
  }
  list(covariates = cv, effects = predict_het[[2]])
}

# predict_het: for effect l (and placebo l), the groups whose effect l is
# estimable (F_g - 1 + l <= T_g) with an observed outcome at F_g - 1: their
# outcome change S_g (Y_{F_g - 1 + l} - Y_{F_g - 1}) (placebo: Y_{F_g - 1 - l})
# regressed, weighted by the group's weight in its first period, on the
# covariates and fixed effects for the cells of the factors (F_g, baseline,
# direction, trends_nonparam) that vary in the sample; HC1 variance; the
# joint test that the covariates' coefficients are zero (F test)
dd_dcdh_predict_het <- function(r, het, data, idname, alpha) {
  des <- r$design; l_e <- r$N_Effects; l_p <- r$N_Placebos
  pick <- function(req, L, what) {
    if (any(req == -1)) return(seq_len(L))
    if (any(req > L)) dd_stop("`predict_het`: effect %s requested; the fit has %d %s.", format(max(req)), L, what)
    sort(unique(req))
  }
  eff <- pick(het$effects, l_e, "effects")
  pls <- if (l_p > 0) pick(het$effects, l_p, "placebos") else integer()
  nG <- length(des$Fg)
  Yat <- function(k) { cc <- match(k, des$kv); v <- rep(NA_real_, nG)
                       v[!is.na(cc)] <- des$Y[cbind(which(!is.na(cc)), cc[!is.na(cc)])]; v }
  y0 <- Yat(des$Fg - 1)
  Sh <- ifelse(des$Sg == 1, 1, -1)
  id <- data[[idname]]
  X <- vapply(het$covariates, function(v) as.double(data[[v]][match(des$groups, id)]), numeric(nG))
  X <- matrix(X, nG, dimnames = list(NULL, het$covariates))
  w <- des$W[, 1]
  one <- function(l, placebo) {
    y <- Sh * ((if (placebo) Yat(des$Fg - 1 - l) else Yat(des$Fg - 1 + l)) - y0)
    insamp <- des$Fg - 1 + l <= des$Tg
    feas <- insamp & !is.na(y0)
    facs <- list(des$Fg, des$d_sq, des$Sg, des$tnp)
    facs <- facs[!vapply(facs, is.null, logical(1))]
    facs <- facs[vapply(facs, function(f) length(unique(f[feas])) > 1L, logical(1))]
    ok <- insamp & !is.na(y) & !is.na(w) & w > 0 & rowSums(is.na(X)) == 0
    cell <- if (length(facs)) do.call(dd_combo_codes, lapply(facs, function(f) f[ok])) else rep(1L, sum(ok))
    # the package's regression and HC1 variance, the cells as fixed effects
    cvn <- colnames(X)
    reg <- suppressMessages(dd_regress(y[ok], X[ok, , drop = FALSE], list(cell = dd_codes(cell)), w[ok]))
    b <- reg$coef[cvn]
    if (anyNA(b)) dd_stop("`predict_het`: covariate %s is collinear with the cells of first-switch date, baseline and direction (effect %d).",
                          dd_show(cvn[is.na(b)]), l)
    vc <- dd_vcov(reg, "hetero")
    V <- vc$V[cvn, cvn, drop = FALSE]
    se <- sqrt(diag(V))
    q <- length(cvn)
    Fs <- drop(crossprod(b, solve(V, b))) / q
    tq <- stats::qt(1 - alpha / 2, vc$df)
    data.frame(effect = if (placebo) -l else l, covariate = cvn, estimate = unname(b), std.error = unname(se),
               statistic = unname(b / se), conf.low = unname(b - tq * se), conf.high = unname(b + tq * se),
               n = reg$n, p_joint = stats::pf(Fs, q, vc$df, lower.tail = FALSE), row.names = NULL)
  }
  out <- do.call(rbind, c(lapply(pls, one, placebo = TRUE), lapply(eff, one, placebo = FALSE)))
  out[order(match(out$covariate, het$covariates), out$effect), , drop = FALSE]
}
