#' DiD with a bad control: a covariate that reacts to the treatment
#'
#' Group-time average treatment effects on the treated, ATT(g,t), when
#' parallel trends hold only conditional on a time-varying covariate that
#' the treatment itself may move (a "bad control"), by the estimators of
#' Caetano, Callaway, Payne and Sant'Anna: the bad control's untreated
#' value in period t is identified (for the treated) from the comparison
#' units, and the outcome's untreated change is modelled given it. The
#' cells, comparison groups, base periods and aggregations are
#' [did_cs()]'s.
#'
#' In each cell (cohort g against the comparison group, from the base
#' period to t) with X the bad control, Z the covariates (`xformla`, base
#' period), dZ their changes (`dxformla`), W the bad control's auxiliary
#' covariates (`bc_xformla`, base period) and dW their changes
#' (`bc_dxformla`):
#'
#' * `est_method = "imputation"`: among the comparison units, X in t is
#'   regressed on (X in the base period, W, dW, dZ, Z) -- a logit when X is
#'   0/1 -- and the treated units' untreated X in t imputed from it
#'   (`bc_strategy = "did"`: X's change is regressed on (W, dW, dZ, Z) and
#'   added to the treated's base value, parallel trends for the bad
#'   control); the comparison units' outcome change is regressed on (X in t,
#'   X in the base period, dZ, Z) and the ATT is the treated units' mean
#'   outcome change minus its prediction at their imputed X. The influence
#'   function carries both regressions' estimation effect.
#' * `est_method = "dr"`: the doubly robust score (the paper's Algorithm
#'   1) with the comparison units' outcome change m(X_t, X_base, dZ, Z), the
#'   propensity p(X_base, W, dW, dZ, Z) and the two projections nu = E(m |
#'   p's features, D = 0) and omega = E(p/(1-p) | m's features, D = 0) fitted
#'   by `learner` on the other folds (cross-fitting; folds by unit,
#'   stratified by cohort, the same in every cell, from [did_dml()]'s
#'   layer). The projections' pseudo-outcomes on the training folds are the
#'   in-sample fits of the linear learners and out-of-fold fits within the
#'   training folds for the others. Propensities are capped at 1 - 1e-6. A
#'   cell falls back to the imputation estimator (a warning and
#'   `fallbacks` say which) when its treated units are fewer than the
#'   propensity's features plus `min_treated`, or when a propensity fitted
#'   on the whole cell exceeds `overlap`.
#'
#' Without a bad control (`bad_control = NULL`) the imputation estimator is
#' the outcome-regression DiD (`did_cs(est_method = "reg")`) and the doubly
#' robust one is Chang's score ([did_dml()] with `normalize = "ht"`).
#' Changes (dZ, dW) that do not vary within a cell are dropped from it, with
#' a note. Standard errors come from the influence functions through the
#' same layer as [did_cs()] (clusters, multiplier bootstrap, uniform bands,
#' [aggregate()]).
#'
#' Compared with the R package badcontrols (1.0.1): the imputation
#' estimator equals its `didbc(est_method = "imputation")` (the tests check
#' every cell and the aggregations to 1e-8 on its simulated data and its
#' NLSY example; a 0/1 bad control to 1e-6: glm's logit stops at a looser
#' tolerance); the doubly robust score equals its `dr_ml_attgt()` cell by
#' cell given the same folds (`nuisance_method = "parametric"`), but
#' badcontrols draws new folds in every cell and diffdiff one set of folds
#' for all cells, so whole fits differ by the fold draw. Its
#' `nuisance_method = "ml"` (grf forests) is not offered; `learner =
#' "forest"` uses ranger. Weights are not offered (badcontrols's cells
#' ignore them). With `anticipation` > 0 the comparison group is did's
#' (cohorts first treated after t + anticipation; badcontrols: after t).
#'
#' @inheritParams did_dml
#' @param bad_control The bad control: a column name or a one-sided formula
#'   naming one numeric column (time-varying; 0/1 values make the imputation
#'   model a logit). `NULL`: none.
#' @param xformla Covariates Z, in the base period of each cell (a
#'   one-sided formula; factors allowed).
#' @param dxformla Covariates whose change from the base period to t (dZ)
#'   enters every model (a one-sided formula of numeric columns).
#' @param bc_xformla The bad control's auxiliary covariates W, in the base
#'   period (they may include the outcome): in the imputation model and the
#'   propensity only.
#' @param bc_dxformla Covariates whose change (dW) enters the imputation
#'   model and the propensity only.
#' @param est_method `"imputation"` (default) or `"dr"`.
#' @param bc_strategy How the bad control's untreated value is identified:
#'   `"unconfoundedness"` (default) or `"did"` (parallel trends for the bad
#'   control; imputation only).
#' @param control_group `"notyettreated"` (default, as badcontrols) or
#'   `"nevertreated"`.
#' @param learner As [did_dml()]'s (`est_method = "dr"` only): the outcome
#'   learner also fits nu and omega.
#' @param folds As [did_dml()]'s (`est_method = "dr"` only).
#' @param overlap The doubly robust estimator falls back to imputation in a
#'   cell whose whole-cell propensity exceeds it somewhere (default 0.99).
#' @param min_treated The doubly robust estimator falls back to imputation
#'   in a cell with fewer treated units than the propensity's features plus
#'   this (default 5).
#' @return An object of class `c("did_bc", "dd_fit")` with the fields of a
#'   [did_cs()] fit and `bad_control`, `bc_binary`, `bc_strategy`,
#'   `learners`, `folds` (each unit's fold, in the order of `units`; `NULL`
#'   for imputation), `seed` and `fallbacks` (per cell: `""`, `"treated"`
#'   or `"overlap"`).
#' @references Caetano, C., Callaway, B., Payne, S. and Sant'Anna, H. C.
#'   (2026). Difference-in-differences when parallel trends holds
#'   conditional on covariates that are affected by the treatment.
#'   arXiv:2608.03881.
#' @examples
#' set.seed(3)
#' n <- 300; T <- 4
#' d <- data.frame(id = rep(1:n, each = T), time = rep(1:T, n))
#' z <- rnorm(n); g <- sample(c(0, 3, 4), n, TRUE)
#' d$z <- z[d$id]; d$g <- g[d$id]
#' post <- d$g > 0 & d$time >= d$g
#' d$x <- 0.5 * d$z + 0.1 * d$time + 0.5 * post + rnorm(nrow(d), sd = 0.3)
#' d$y <- d$z + d$x + 0.2 * d$time + post + rnorm(nrow(d), sd = 0.3)
#' fit <- did_bc(d, "y", "id", "time", "g", bad_control = "x", xformla = ~ z, nboot = 0)
#' fit
#' aggregate(fit, "simple")
#' @export
did_bc <- function(data, yname, idname, tname, gname, bad_control, xformla = NULL, dxformla = NULL,
                   bc_xformla = NULL, bc_dxformla = NULL, est_method = c("imputation", "dr"),
                   bc_strategy = c("unconfoundedness", "did"), control_group = c("notyettreated", "nevertreated"),
                   anticipation = 0, base_period = c("varying", "universal"), learner = "linear", folds = 5L,
                   cluster = NULL, nboot = 1000, boot_weights = c("rademacher", "mammen", "webb"), cband = TRUE,
                   alpha = 0.05, overlap = 0.99, min_treated = 5L, seed = NULL) {
  call <- match.call()
  dd_required(c("data", "yname", "idname", "tname", "gname", "bad_control"),
              labels = c(bad_control = "the bad control column; NULL for none"))
  sp <- dd_spec(alpha = alpha, nboot = nboot, boot_weights = boot_weights, cband = cband, cluster = cluster,
                dots = list(), fun = "did_bc")
  control_group <- dd_match_vocab(control_group[1], c("notyettreated", "nevertreated"), "control_group")
  base_period <- dd_match_arg(base_period[1], c("varying", "universal"), "base_period")
  method <- dd_match_arg(est_method[1], c("imputation", "dr"), "est_method")
  strategy <- dd_match_arg(bc_strategy[1], c("unconfoundedness", "did"), "bc_strategy")
  anticipation <- dd_check_count(anticipation, "anticipation")
  K <- dd_check_count(folds, "folds", min = 1)
  min_treated <- dd_check_count(min_treated, "min_treated")
  if (!is.numeric(overlap) || length(overlap) != 1L || !is.finite(overlap) || overlap <= 0 || overlap > 1)
    dd_stop("`overlap` must be one number in (0, 1]; got %s.", dd_show(overlap))
  if (!is.null(seed) && (!is.numeric(seed) || length(seed) != 1L || !is.finite(seed)))
    dd_stop("`seed` must be NULL or one number; got %s.", dd_show(seed))
  dd_check_data(data)
  dd_check_string(idname, "idname")
  bcv <- dd_bc_variable(bad_control, data)
  if (strategy == "did" && method == "dr")
    dd_stop("`bc_strategy` = \"did\" is available with `est_method` = \"imputation\" only (as badcontrols).")
  if (strategy == "did" && is.null(bcv))
    dd_stop("`bc_strategy` = \"did\" needs a bad control (parallel trends for the bad control); `bad_control` is NULL.")
  lrn <- dd_cf_learners(learner)
  roles <- dd_bc_roles(bcv, xformla, dxformla, bc_xformla, bc_dxformla, data, yname)
  cluster <- dd_cs_cluster(sp$cluster, data, idname)
  up <- dd_unit_panel(data, yname, idname, tname, gname, roles$formula, NULL, cluster, NULL, sp$nboot,
                      anticipation = anticipation, control_group = control_group, panel = TRUE,
                      allow_unbalanced = FALSE)
  prep <- up$prep
  binary <- FALSE
  if (!is.null(bcv)) {
    xb <- prep$X[, roles$cols$bc, ]
    binary <- all(xb %in% c(0, 1)) && length(unique(as.vector(xb))) == 2L
    if (all(apply(matrix(xb, nrow(prep$X)), 1, function(r) diff(range(r)) == 0)))
      warning(sprintf("the bad control `%s` does not vary over time within any unit; it may not be a bad control (a time-invariant covariate belongs in `xformla`).",
                      bcv), call. = FALSE)
  }
  cells <- dd_cs_cells(prep$tlist, prep$glist, anticipation, base_period, control_group)
  glist <- sort(unique(cells$g))
  lay <- dd_cs_layout(cells, prep, glist)
  fold <- if (method == "dr") dd_with_seed(seed, dd_cf_folds(prep$unit_group, K)) else NULL
  o <- list(method = method, strategy = strategy, binary = binary, lrn = lrn, overlap = overlap,
            min_treated = min_treated)
  res <- dd_with_seed(if (is.null(seed)) NULL else seed + 1, dd_bc_cells(prep, cells, lay, fold, roles$cols, o))
  inf <- dd_ifs(prep$n, length(cells$g) + length(glist), lay$start, lay$cols, res$vals, rows = lay$rows)
  fb <- res$fallback
  if (any(nzchar(fb)))
    warning(sprintf("the doubly robust estimator fell back to imputation in %d cell(s): %s (too few treated units for the propensity's features plus `min_treated`, or a whole-cell propensity above `overlap` = %g).",
                    sum(nzchar(fb)), paste(sprintf("(%s,%s) %s", cells$g, cells$t, fb)[nzchar(fb)], collapse = ", "),
                    overlap), call. = FALSE)
  prep$notes <- c(prep$notes, if (length(res$dropped))
    sprintf("Changes that do not vary within a cell were dropped from it: %s.", paste(res$dropped, collapse = ", ")))
  what <- if (method == "dr") sprintf("doubly robust, %s, %s", if (K == 1L) "no cross-fitting" else sprintf("%d-fold cross-fitting", K),
                                      paste(unique(c(lrn$outcome$name, lrn$propensity$name)), collapse = " / "))
          else sprintf("imputation, %s", strategy)
  s <- list(nboot = sp$nboot, boot_weights = sp$boot_weights, cband = sp$cband, cband_method = "sup-t",
            alpha = sp$alpha, cluster = cluster, control_group = control_group, anticipation = anticipation,
            base_period = base_period, tname = tname, est_method = method, allow_unbalanced_panel = FALSE,
            subclass = "did_bc",
            title = sprintf("DiD with a bad control, group-time ATT (did_bc: %s)", what),
            more = list(bad_control = bcv, bc_binary = binary, bc_strategy = strategy,
                        learners = if (method == "dr") c(outcome = lrn$outcome$name, propensity = lrn$propensity$name),
                        folds = fold, seed = seed, fallbacks = fb))
  dd_cs_finish(res, inf, cells, prep, NULL, yname, call, s)
}

# The bad control's column name (NULL: none), from a name or a one-sided
# formula naming one numeric column
dd_bc_variable <- function(bad_control, data) {
  if (is.null(bad_control)) return(NULL)
  v <- if (inherits(bad_control, "formula")) {
    if (length(bad_control) != 2L) dd_stop("`bad_control` must be a one-sided formula such as ~ x; got %s.",
                                            deparse(bad_control))
    all.vars(bad_control)
  } else bad_control
  if (!is.character(v) || length(v) != 1L || is.na(v))
    dd_stop("`bad_control` must name one column (one bad control; several are not supported, as badcontrols); got %s.",
            dd_show(v))
  if (!v %in% names(data)) dd_stop("`bad_control` = \"%s\" is not a column of `data`.", v)
  if (!is.numeric(data[[v]]) && !is.logical(data[[v]]))
    dd_stop("`bad_control` = \"%s\" must be a numeric column; it is %s.", v, class(data[[v]])[1])
  v
}

# The roles' columns: one covariate formula for the panel layer (the bad
# control, xformla's terms, then the variables of the other three formulas)
# and the column indices of each role in it, named "role:variable"
dd_bc_roles <- function(bcv, xformla, dxformla, bc_xformla, bc_dxformla, data, yname) {
  fvars <- function(f, arg) {
    if (is.null(f)) return(character())
    if (!inherits(f, "formula") || length(f) != 2L) dd_stop("`%s` must be a one-sided formula; got %s.", arg, dd_show(f))
    v <- all.vars(f)
    miss <- setdiff(v, names(data))
    if (length(miss)) dd_stop("`%s` names %s, not a column of `data`.", arg, dd_show(miss))
    if (arg != "xformla") for (x in v) if (!is.numeric(data[[x]]) && !is.logical(data[[x]]))
      dd_stop("`%s` variable \"%s\" must be numeric; it is %s.", arg, x, class(data[[x]])[1])
    v
  }
  xv <- fvars(xformla, "xformla"); dzv <- fvars(dxformla, "dxformla")
  wv <- fvars(bc_xformla, "bc_xformla"); dwv <- fvars(bc_dxformla, "bc_dxformla")
  if (!is.null(bcv) && bcv %in% c(xv, dzv, wv, dwv))
    dd_stop("the bad control \"%s\" also appears in a covariate formula; its base-period value and its value in t already enter the models.", bcv)
  if (identical(bcv, yname)) dd_stop("`bad_control` = \"%s\" is the outcome (`yname`).", bcv)
  zlab <- if (is.null(xformla)) character() else attr(stats::terms(xformla), "term.labels")
  zcols <- if (length(zlab)) colnames(dd_covariates(xformla, data)) else character()
  extra <- setdiff(unique(c(wv, dwv, dzv)), c(zlab, bcv))
  labs <- c(bcv, zlab, extra)
  if (!length(labs)) return(list(formula = NULL, cols = list()))
  cn <- c(bcv, zcols, extra)
  ix <- function(v, role) if (length(v)) stats::setNames(match(v, cn), paste0(role, ":", v)) else integer()
  list(formula = stats::reformulate(labs), cols = list(bc = ix(bcv, "bc"), z = ix(zcols, "z"), w = ix(wv, "w"),
                                                       dw = ix(dwv, "dw"), dz = ix(dzv, "dz")))
}

# aggregate(): did_cs's aggregations of the cells
#' @export
aggregate.did_bc <- function(x, type = c("group", "simple", "dynamic", "calendar"), ...) {
  dd_agg_via_cs(x, type, x$base_period, "DiD with a bad control", match.call(), ...)
}

#' @export
vcov.did_bc <- function(object, ...) {
  dd_check_dots(list(...), "vcov()")
  dd_if_vcov(object)
}

# print() and summary(): the pre-test and the settings, as did_cs
dd_footer.did_bc <- function(x) {
  NextMethod()
  dd_cs_pretest_cat(x$pretest)
  cat(sprintf("Control group: %s; anticipation: %d; base period: %s; bad control: %s%s; estimator: %s\n",
              x$control_group, x$anticipation, x$base_period, x$bad_control %||% "none",
              if (isTRUE(x$bc_binary)) " (0/1)" else "",
              if (x$est_method == "dr") sprintf("doubly robust (%s / %s learners)", x$learners[["outcome"]],
                                                x$learners[["propensity"]])
              else sprintf("imputation (%s)", x$bc_strategy)))
  if (any(nzchar(x$fallbacks))) cat(sprintf("Imputation used instead in %d cell(s) (see `fallbacks`)\n",
                                            sum(nzchar(x$fallbacks))))
  invisible(x)
}
