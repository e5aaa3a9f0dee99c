#' Double/debiased machine-learning DiD
#'
#' Group-time average treatment effects on the treated, ATT(g,t), as
#' [did_cs()] defines them (the same cells, comparison groups, base periods
#' and aggregations), each estimated by the doubly robust (Neyman
#' orthogonal) score of Chang (2020) with the nuisance functions -- the
#' propensity score and the comparison units' outcome change given the
#' covariates -- fitted by a learner on other folds of the units
#' (cross-fitting, Chernozhukov et al. 2018).
#'
#' In each cell the units of cohort g (D = 1) and of the comparison group
#' (D = 0) are split into `folds` folds (stratified by cohort, the same
#' folds in every cell). For each fold the propensity score p(X) is fitted
#' on the other folds' units and the comparison units' outcome change
#' m(X) = E(Y_t - Y_base | X, D = 0) on the other folds' comparison units;
#' both are predicted for the fold. The estimate is
#' mean_D(dY - m) - sum_{D=0} r (dY - m) / sum_{D=0} r with the odds
#' r = p / (1 - p) (`normalize = "hajek"`, the default; `"ht"` divides the
#' comparison term by the treated share instead, Chang's published form).
#' As DRDID, propensities are capped at 1 - 1e-6 and comparison units with
#' p >= `trim` get weight zero. Standard errors come from the score's
#' influence functions through the same layer as [did_cs()] (clusters,
#' multiplier bootstrap, uniform bands, [aggregate()]).
#'
#' With `folds = 1` (no cross-fitting) and `learner = "linear"` (least
#' squares for m, logit for p) the estimator is Sant'Anna and Zhao's
#' doubly robust DiD: the influence functions then include the estimation
#' effect of the two parametric fits, and the fit equals
#' `did_cs(est_method = "dr")` (checked in the tests).
#'
#' @inheritParams did_cs
#' @param learner The nuisance learner: `"linear"` (least squares for the
#'   outcome, logit for the propensity), `"lasso"` (glmnet's
#'   cross-validated lasso, `lambda.min`), `"forest"` (ranger's random
#'   forest, 500 trees), or a function `function(x, y, w, x_new, type)`
#'   returning predictions at `x_new` (`type` is `"regression"` or
#'   `"classification"`: then probabilities). A list with elements
#'   `outcome` and `propensity` gives each nuisance its own.
#' @param folds The number of cross-fitting folds (default 5; 1: no
#'   cross-fitting).
#' @param repeats The number of independent fold draws (default 1). With
#'   more, each ATT(g,t) and aggregate is the median over the splits and its
#'   variance the median of each split's variance plus its squared distance
#'   from the median estimate (Chernozhukov et al. 2018, sec. 3.4).
#' @param normalize `"hajek"` (default) or `"ht"`: how the comparison term
#'   is normalised (see Details).
#' @param panel `TRUE` (default): a panel; `FALSE`: repeated
#'   cross-sections (each row its own unit; `idname` then names a row
#'   identifier), with Sant'Anna and Zhao's locally efficient doubly robust
#'   score (the comparison group's and the treated group's outcome in each
#'   period, and the propensity, cross-fitted; folds stratified by cohort and
#'   period); without cross-fitting it is `did_cs(panel = FALSE, est_method =
#'   "dr")`.
#' @param trim Comparison units with propensity at or above `trim` get
#'   weight zero (default 0.995, as DRDID).
#' @param seed `NULL` (the session's random-number stream) or a number: the
#'   folds (and the learners' own random draws) are drawn under
#'   `set.seed(seed)`, and the session's stream is left as it was.
#' @param survey Optional complex survey design, as [did_cs()]'s: its
#'   weights weight the learners' fits and the score, and the standard errors
#'   are design-based variances of the influence-function totals (with
#'   `folds = 1` and the linear learners equal to `did_cs(survey = ,
#'   est_method = "dr")`).
#' @return An object of class `c("did_dml", "dd_fit")` with the fields of
#'   a [did_cs()] fit (the same table; [aggregate()] as did_cs's) and the
#'   learners, the folds and the normalisation recorded (`learners`,
#'   `folds` (each unit's fold, in the order of `units`), `normalize`,
#'   `trim`, `seed`, `repeats`; with repeats, `splits`: the fit of each
#'   split).
#' @references Chang, N.-C. (2020). Double/debiased machine learning for
#'   difference-in-differences models. Econometrics Journal 23(2), 177-191.
#'
#'   Chernozhukov, V., Chetverikov, D., Demirer, M., Duflo, E., Hansen, C.,
#'   Newey, W. and Robins, J. (2018). Double/debiased machine learning for
#'   treatment and structural parameters. Econometrics Journal 21(1), C1-C68.
#'
#'   Sant'Anna, P. H. C. and Zhao, J. (2020). Doubly robust
#'   difference-in-differences estimators. Journal of Econometrics 219(1),
#'   101-122.
#' @examples
#' set.seed(2)
#' d <- dd_sim_staggered(n_units = 300, n_periods = 4)
#' d$x1 <- rnorm(300)[d$id]
#' fit <- did_dml(d, "y", "id", "time", "first_treat", ~ x1, nboot = 0, seed = 1)
#' fit
#' aggregate(fit, "simple")
#' @export
did_dml <- function(data, yname, idname, tname, gname, xformla = NULL, learner = "linear", folds = 5L,
                    repeats = 1L, normalize = c("hajek", "ht"), control_group = c("nevertreated", "notyettreated"),
                    anticipation = 0, base_period = c("varying", "universal"), weightsname = NULL, panel = TRUE,
                    cluster = NULL, nboot = 1000, boot_weights = c("rademacher", "mammen", "webb"), cband = TRUE,
                    alpha = 0.05, trim = 0.995, seed = NULL, survey = NULL) {
  call <- match.call()
  dd_required(c("data", "yname", "idname", "tname", "gname"))
  sp <- dd_spec(alpha = alpha, nboot = nboot, boot_weights = boot_weights, cband = cband, cluster = cluster,
                dots = list(), fun = "did_dml")
  control_group <- dd_match_vocab(control_group[1], c("nevertreated", "notyettreated"), "control_group")
  base_period <- dd_match_arg(base_period[1], c("varying", "universal"), "base_period")
  normalize <- dd_match_arg(normalize[1], c("hajek", "ht"), "normalize")
  anticipation <- dd_check_count(anticipation, "anticipation")
  K <- dd_check_count(folds, "folds", min = 1)
  if (!is.numeric(trim) || length(trim) != 1L || !is.finite(trim) || trim <= 0 || trim > 1)
    dd_stop("`trim` must be one number in (0, 1]; got %s.", dd_show(trim))
  if (!is.null(seed) && (!is.numeric(seed) || length(seed) != 1L || !is.finite(seed)))
    dd_stop("`seed` must be NULL or one number; got %s.", dd_show(seed))
  lrn <- dd_cf_learners(learner)
  dd_check_data(data)
  dd_check_string(idname, "idname")
  cluster <- dd_cs_cluster(sp$cluster, data, idname)
  panel <- dd_check_flag(panel, "panel")
  if (!panel && normalize == "ht")
    dd_stop("`normalize` = \"ht\" is not available for repeated cross-sections (`panel` = FALSE): their score is Sant'Anna and Zhao's locally efficient one, normalised within each group and period.")
  up <- dd_unit_panel(data, yname, idname, tname, gname, xformla, weightsname, cluster, survey, sp$nboot,
                      anticipation = anticipation, control_group = control_group, panel = panel,
                      allow_unbalanced = FALSE, weights_vary = TRUE)
  prep <- up$prep
  cells <- dd_cs_cells(prep$tlist, prep$glist, anticipation, base_period, control_group)
  glist <- sort(unique(cells$g))
  lay <- if (panel) dd_cs_layout(cells, prep, glist) else dd_cs_rc_layout(cells, prep, glist)
  # repeated cross-sections: each row its own unit, its stratum its cohort and period
  strata <- if (panel) prep$unit_group else paste(prep$unit_group, prep$unit_period)
  # folds by unit, stratified by cohort, the same in every cell
  S <- dd_check_count(repeats, "repeats", min = 1)
  if (S > 1L && K == 1L) dd_stop("`repeats` = %d needs cross-fitting (`folds` > 1): without folds every split is the same.", S)
  if (S > 1L && sp$cband && sp$nboot > 0L)
    dd_stop("`repeats` = %d with a uniform band: the median rule combines standard errors, not bands; set cband = FALSE.", S)
  fold <- dd_with_seed(seed, lapply(seq_len(S), function(i) dd_cf_folds(strata, K)))
  parametric <- K == 1L && lrn$outcome$name == "linear" && lrn$propensity$name == "linear"
  s <- list(nboot = sp$nboot, boot_weights = sp$boot_weights, cband = sp$cband, cband_method = "sup-t",
            alpha = sp$alpha, cluster = cluster, control_group = control_group, anticipation = anticipation,
            base_period = base_period, tname = tname, est_method = "dr", allow_unbalanced_panel = FALSE,
            subclass = "did_dml",
            title = sprintf("Double/debiased ML DiD, group-time ATT (did_dml: %s, %s)",
                            if (K == 1L) "no cross-fitting" else sprintf("%d-fold cross-fitting", K),
                            paste(unique(c(lrn$outcome$name, lrn$propensity$name)), collapse = " / ")),
            more = list(learners = c(outcome = lrn$outcome$name, propensity = lrn$propensity$name),
                        normalize = normalize, trim = trim, seed = seed, repeats = S))
  # one fit per split (the learners' own draws from the seed's stream too)
  fits <- dd_with_seed(if (is.null(seed)) NULL else seed + 1, lapply(seq_len(S), function(i) {
    res <- if (panel) dd_dml_cells(prep, cells, lay, glist, fold[[i]], lrn, normalize, trim, parametric)
           else dd_dml_cells_rc(prep, cells, lay, fold[[i]], lrn, trim, parametric)
    inf <- dd_ifs(prep$n, length(cells$g) + length(glist), lay$start, lay$cols, res$vals, rows = lay$rows)
    res$vals <- NULL
    si <- s
    si$more$folds <- fold[[i]]
    si$more$ovb <- res$ovb
    res$ovb <- NULL
    if (i > 1L) suppressWarnings(dd_cs_finish(res, inf, cells, prep, up$design, yname, call, si))
    else dd_cs_finish(res, inf, cells, prep, up$design, yname, call, si)
  }))
  if (S == 1L) return(fits[[1]])
  dd_dml_median_fit(fits)
}

# The fit of repeated splits: the first split's, with each ATT(g,t) and
# standard error from the median rule over the splits; the splits kept for
# aggregate()
dd_dml_median_fit <- function(fits) {
  out <- fits[[1]]
  out$coeftable <- dd_dml_median_table(lapply(fits, `[[`, "coeftable"), out$alpha)
  out$coefficients[] <- out$coeftable$estimate
  out$splits <- fits
  out$notes <- c(out$notes, sprintf("Median over %d cross-fitting splits (Chernozhukov et al. 2018); the pre-test and the influence functions are the first split's.",
                                    length(fits)))
  out
}

# the median rule over tables of the same rows
dd_dml_median_table <- function(tabs, alpha) {
  est <- vapply(tabs, function(t) t$estimate, numeric(nrow(tabs[[1]])))
  se <- vapply(tabs, function(t) t$std.error, numeric(nrow(tabs[[1]])))
  m <- dd_cf_median(t(matrix(est, nrow(tabs[[1]]))), t(matrix(se, nrow(tabs[[1]]))^2))
  tab <- tabs[[1]]
  keep <- setdiff(names(tab), c("term", "estimate", "std.error", "statistic", "p.value", "conf.low", "conf.high",
                                "cband.low", "cband.high"))
  dd_if_table(tab$term, m$est, sqrt(m$var), alpha, extra = if (length(keep)) tab[keep])
}

# aggregate(): did_cs's aggregations of the cells (their influence
# functions carry did_cs's cohort-share columns); with repeated splits, each
# split's aggregate and the median rule over them
#' @export
aggregate.did_dml <- function(x, type = c("group", "simple", "dynamic", "calendar"), ...) {
  one <- function(f) dd_agg_via_cs(f, type, f$base_period, "Double/debiased ML DiD", match.call(), ...)
  if (is.null(x$splits)) return(one(x))
  ags <- lapply(x$splits, one)
  out <- ags[[1]]
  out$coeftable <- dd_dml_median_table(lapply(ags, `[[`, "coeftable"), out$alpha)
  out$coefficients[] <- out$coeftable$estimate
  out
}

#' @export
vcov.did_dml <- function(object, ...) {
  dd_check_dots(list(...), "vcov()")
  V <- dd_if_vcov(object)
  if (is.null(object$splits)) return(V)
  # repeated splits: the first split's correlations with the median-rule
  # standard errors
  s0 <- sqrt(diag(V)); s1 <- object$coeftable$std.error
  ok <- is.finite(s0) & s0 > 0 & is.finite(s1)
  V[ok, ok] <- V[ok, ok] / outer(s0[ok], s0[ok]) * outer(s1[ok], s1[ok])
  V
}

# print() and summary(): the pre-test and the settings, as did_cs, and
# the learners
dd_footer.did_dml <- function(x) {
  NextMethod()
  dd_cs_pretest_cat(x$pretest)
  cat(sprintf("Control group: %s; anticipation: %d; base period: %s; learners: %s (outcome), %s (propensity); %s normalisation%s\n",
              x$control_group, x$anticipation, x$base_period, x$learners[["outcome"]], x$learners[["propensity"]],
              x$normalize, if (x$repeats > 1L) sprintf("; median of %d splits", x$repeats) else ""))
  invisible(x)
}
