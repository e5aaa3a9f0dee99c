# Synthetic control (Abadie and Gardeazabal 2003; Abadie, Diamond and
# Hainmueller 2010, 2015) as Synth 1.1 computes it: predictors averaged over
# windows, scaled by their standard deviation over donors and treated, V by
# the nested minimisation of the pre-period outcome MSPE (Synth's two
# starting values, equal weights and the regression-based ones, each run
# through Nelder-Mead and BFGS, the best of the four kept; by default more
# starts), W on the simplex for that V (src/synth.c, exact active set
# instead of Synth's ipop). The result and its methods: synth_methods.R and
# synth_plots.R; further inference: synth_inference.R.

#' Synthetic control
#'
#' The synthetic control method of Abadie and Gardeazabal (2003) and Abadie,
#' Diamond and Hainmueller (2010, 2015), as R's Synth computes it, with the
#' inference referees ask for: in-space placebos and their RMSPE-ratio
#' p-value, Firpo and Possebom (2018) confidence sets ([synth_fp()]),
#' conformal inference ([synth_conformal()]), in-time placebos and
#' leave-one-out donors ([synth_diagnostics()]).
#'
#' For each treated unit, the synthetic control is the weighted average of
#' the donors (the units never treated, or `donors`) with weights W on the
#' simplex that best reproduces the unit's predictors: \eqn{W = \arg\min (X_1
#' - X_0 W)' V (X_1 - X_0 W)}, the predictors scaled by their standard
#' deviation over the treated unit and the donors (as Synth). The predictor
#' weights V are chosen (`v_method`) by the nested minimisation of the
#' outcome's pre-treatment MSPE over `optimize_window` (as Synth's
#' `synth()`), given (`"custom"`), or equal (`"inverse_variance"`: equal
#' weights on the scaled predictors, i.e. inverse-variance weights on the
#' raw ones). W solves a quadratic programme on the simplex, exactly (an
#' active-set method in C), where Synth's interior-point solver stops at five
#' significant digits. Without predictors, the predictors are the outcome in
#' every period of `optimize_window` (all pre-treatment periods by default).
#'
#' **What is estimated.** For each treated unit, the gap (its outcome minus
#' its synthetic control's) in every period; its ATT is the mean gap over
#' its post-treatment periods. With several treated units (a `gname` or
#' `dname` that treats several), each gets its own synthetic control from
#' the same donors, and the `ATT` row is the average of the units' ATTs with
#' equal weights (each unit's average effect over its own post-treatment
#' periods), followed by one `unit::<id>` row per unit; `average_gaps` holds
#' the average gap by time since treatment.
#'
#' **Inference.** There are no standard errors. With `placebo = TRUE`
#' (default) every donor in turn is treated as if it had been treated at the
#' treated unit's adoption period, with the other donors as its pool, and the
#' p-value is the share of units (the treated one included) whose ratio of
#' post- to pre-treatment RMSPE is at least the treated unit's (Abadie,
#' Diamond and Hainmueller 2010), optionally among the placebos whose
#' pre-treatment MSPE is at most `placebo_mspe_cut` times the treated unit's.
#' The interval is the Firpo-Possebom set for a constant effect: the effects
#' the placebo test does not reject (exact, see [synth_fp()]). The `ATT` row
#' of several treated units takes its p-value from every combination of one
#' placebo per treated unit (Cavallo, Galiani, Noy and Pantano 2013: the mean
#' of the treated units' RMSPE ratios against the means of the placebos').
#'
#' @param data A data frame (or tibble, data.table): a balanced panel.
#' @param yname,idname,tname The outcome, unit identifier and period columns.
#' @param dname A 0/1 treatment column (absorbing: on from the adoption
#'   period on). Give this or `gname`.
#' @param gname The first treated period of each unit (0 or `Inf` for never
#'   treated).
#' @param predictors Columns averaged (with `predictors_op`) over
#'   `predictors_window` for each unit; `NULL` for none.
#' @param predictors_window The periods `predictors` are averaged over
#'   (default: every pre-treatment period).
#' @param predictors_op The aggregation of `predictors`: `"mean"` (default),
#'   `"median"`, `"min"`, `"max"` or `"sum"`; missing values are dropped.
#' @param special_predictors Synth's special predictors: a list of
#'   `list(column, periods, op)` entries, e.g. `list(list("gdp", 1960:1969,
#'   "mean"))`; the column may be the outcome (lagged outcomes). The periods
#'   must precede treatment (of every treated unit); an in-time placebo
#'   ([synth_diagnostics()]) keeps those before its fake treatment.
#' @param optimize_window The pre-treatment periods over which the outcome's
#'   MSPE is minimised to choose V (default: all pre-treatment periods).
#' @param donors The identifiers of the donor units (default: every unit
#'   never treated).
#' @param v_method How V is chosen: `"nested"` (default), `"cv"` (Abadie,
#'   Diamond and Hainmueller 2015: V minimises the MSPE over a validation
#'   period of synthetic controls built from predictors measured over a
#'   training period; the final weights use that V with predictors measured
#'   over the validation period), `"inverse_variance"` or `"custom"`.
#' @param custom_v For `v_method = "custom"`: one non-negative weight per
#'   predictor (regular predictors first, then special ones).
#' @param v_search For `v_method = "nested"`: `"multistart"` (default: Synth's
#'   two starting values, one start per predictor and ten quasi-random ones;
#'   the smallest MSPE kept) or `"synth"` (Synth's two starts only, for
#'   comparison with Synth).
#' @param cv_split For `v_method = "cv"`: the last period of the training
#'   period (default: the middle of the pre-treatment periods); the
#'   validation period runs from the next period to the last pre-treatment
#'   one.
#' @param placebo Run the in-space placebos (default `TRUE`).
#' @param placebo_mspe_cut Keep only the placebos whose pre-treatment MSPE is
#'   at most this many times the treated unit's (Abadie, Diamond and
#'   Hainmueller 2010 use 20, 5 and 2); `Inf` (default) keeps all.
#' @param alpha The level of the intervals is `1 - alpha`.
#' @param ... Must be empty (a misspelt argument is an error).
#' @return A `did_synth` fit (a `dd_fit`): the coefficient table (estimate,
#'   placebo p-value, interval, pre- and post-treatment RMSPE and their
#'   ratio, number of placebos); `weights`, the donor weights W named by
#'   donor (with several treated units, a donors x treated units matrix);
#'   `loss_w`, the predictor loss \eqn{(X_1 - X_0 W)' V (X_1 - X_0 W)} on
#'   standardised predictors (Synth's `loss.w`), one per treated unit;
#'   `vmat`, V as a diagonal matrix (a list by treated unit with several);
#'   the long tables `weight_table` (W), `predictor_weights` (V), `balance`,
#'   `gaps`, `average_gaps`; the `placebos` (their table and gaps) and the
#'   per-unit `fits`. `tidy(fit, what = )` returns each table.
#' @references Abadie, A., Diamond, A. and Hainmueller, J. (2010). Synthetic
#'   control methods for comparative case studies. *Journal of the American
#'   Statistical Association* 105, 493-505.
#'
#'   Abadie, A., Diamond, A. and Hainmueller, J. (2015). Comparative politics
#'   and the synthetic control method. *American Journal of Political
#'   Science* 59, 495-510.
#'
#'   Cavallo, E., Galiani, S., Noy, I. and Pantano, J. (2013). Catastrophic
#'   natural disasters and economic growth. *Review of Economics and
#'   Statistics* 95, 1549-1561.
#' @seealso [synth_fp()], [synth_conformal()], [synth_diagnostics()];
#'   [did_sdid()] for synthetic difference-in-differences.
#' @examples
#' d <- read.csv(system.file("extdata", "california_prop99.csv", package = "diffdiff"), sep = ";")
#' fit <- did_synth(d, "PacksPerCapita", "State", "Year", "treated",
#'                  special_predictors = list(list("PacksPerCapita", 1975, "mean"),
#'                                            list("PacksPerCapita", 1980, "mean"),
#'                                            list("PacksPerCapita", 1988, "mean")))
#' fit
#' summary(fit)
#' tidy(fit, what = "weights")
#' plot(fit)
#' plot(fit, type = "placebos")
#' @export
did_synth <- function(data, yname, idname, tname, dname = NULL, gname = NULL, predictors = NULL,
                      predictors_window = NULL, predictors_op = "mean", special_predictors = NULL,
                      optimize_window = NULL, donors = NULL,
                      v_method = c("nested", "cv", "inverse_variance", "custom"), custom_v = NULL,
                      v_search = c("multistart", "synth"), cv_split = NULL, placebo = TRUE, placebo_mspe_cut = Inf,
                      alpha = 0.05, ...) {
  call <- match.call()
  dd_check_dots(list(...), "did_synth()")
  dd_required(c("data", "yname", "idname", "tname"))
  dd_check_data(data)
  if (is.null(dname) == is.null(gname))
    dd_stop("give the treatment as exactly one of `dname` (a 0/1 column) and `gname` (first treated period); got %s.",
            if (is.null(dname)) "neither" else "both")
  v_method <- dd_match_arg(v_method[1], c("nested", "cv", "inverse_variance", "custom"), "v_method")
  v_search <- dd_match_arg(v_search[1], c("multistart", "synth"), "v_search")
  placebo <- dd_check_flag(placebo, "placebo")
  alpha <- dd_check_alpha(alpha)
  if (!is.numeric(placebo_mspe_cut) || length(placebo_mspe_cut) != 1L || is.na(placebo_mspe_cut) ||
      placebo_mspe_cut < 1)
    dd_stop("`placebo_mspe_cut` must be a number >= 1 (Inf keeps every placebo); got %s.", dd_show(placebo_mspe_cut))
  spec <- dd_synth_spec(data, predictors, predictors_op, special_predictors)
  if (v_method == "cv" && !length(spec$predictors) && !length(spec$special))
    dd_stop("v_method = \"cv\" needs `predictors` or `special_predictors` (without them the predictors are the outcome in each period, which differ between the training and validation periods).")
  if (!is.null(cv_split) && v_method != "cv")
    dd_stop("`cv_split` is used only with v_method = \"cv\"; got v_method = \"%s\".", v_method)
  if (!is.null(cv_split) && (!is.numeric(cv_split) || length(cv_split) != 1L || is.na(cv_split)))
    dd_stop("`cv_split` must be NULL or one period of the data; got %s.", dd_show(cv_split))
  role <- if (is.null(dname)) c(gname = gname) else c(dname = dname)
  pan <- dd_panel(data, yname, idname, tname, role, complete = "synthetic control", sorted = TRUE,
                  aux = spec$aux)
  prep <- dd_synth_layout(pan, dname, gname, donors)
  settings <- list(spec = spec, predictors_window = predictors_window, optimize_window = optimize_window,
                   v_method = v_method, custom_v = custom_v, v_search = v_search, cv_split = cv_split)
  fits <- lapply(prep$treated, function(i) dd_synth_unit(prep, i, prep$donors, settings))
  names(fits) <- prep$ids[prep$treated]
  pl <- if (placebo) dd_synth_placebos(prep, fits, settings, placebo_mspe_cut) else NULL
  dd_synth_result(prep, fits, pl, settings, call, yname, tname, alpha, placebo_mspe_cut)
}

# The predictor specification: regular predictors (columns averaged over
# predictors_window with predictors_op) and Synth's special predictors
# (list(column, periods, op) each); the columns they read.
dd_synth_spec <- function(data, predictors, predictors_op, special_predictors) {
  ops <- c("mean", "median", "min", "max", "sum")
  if (!is.null(predictors) && (!is.character(predictors) || !length(predictors) || anyNA(predictors)))
    dd_stop("`predictors` must be NULL or column names; got %s.", dd_show(predictors))
  if (anyDuplicated(predictors))
    dd_stop("`predictors` names column \"%s\" twice.", predictors[anyDuplicated(predictors)])
  predictors_op <- dd_match_arg(predictors_op, ops, "predictors_op")
  sp <- list()
  if (!is.null(special_predictors)) {
    if (!is.list(special_predictors) || !length(special_predictors))
      dd_stop("`special_predictors` must be a list of list(column, periods, op) entries, as Synth's; got %s.",
              dd_show(special_predictors))
    for (i in seq_along(special_predictors)) {
      e <- special_predictors[[i]]
      lab <- sprintf("special_predictors[[%d]]", i)
      if (!is.list(e) || length(e) != 3L || !is.character(e[[1]]) || length(e[[1]]) != 1L ||
          !is.numeric(e[[2]]) || !length(e[[2]]) || anyNA(e[[2]]) || anyDuplicated(e[[2]]) ||
          !is.character(e[[3]]) || length(e[[3]]) != 1L)
        dd_stop("`%s` must be list(column, periods, op), e.g. list(\"gdp\", 1960:1969, \"mean\"); got %s.", lab,
                dd_show(e))
      dd_match_arg(e[[3]], ops, paste0(lab, "[[3]]"))
      sp[[i]] <- list(col = e[[1]], periods = as.double(e[[2]]), op = e[[3]],
                      name = sprintf("special.%s.%s", e[[1]], if (length(e[[2]]) > 1)
                        paste0(e[[2]][1], ".", e[[2]][length(e[[2]])]) else e[[2]]))
    }
  }
  aux <- c(character(), if (length(predictors)) stats::setNames(predictors, rep("predictors", length(predictors))),
           if (length(sp)) stats::setNames(vapply(sp, `[[`, "", "col"), sprintf("special_predictors[[%d]]", seq_along(sp))))
  list(predictors = predictors, op = predictors_op, special = sp, aux = aux)
}

# The panel laid out for the fits: outcome matrix (units x periods, both
# sorted), the predictor columns likewise, each unit's adoption column, the
# treated units and the donor pool.
dd_synth_layout <- function(pan, dname, gname, donors) {
  N <- pan$n_units
  ids <- pan$id[dd_first_rows(pan$idc)]
  tlev <- pan$tt[dd_first_rows(pan$tc)]
  Y <- dd_panel_wide(pan, pan$y)
  aux <- lapply(pan$aux, function(v) dd_panel_wide(pan, v))
  fc <- dd_unit_first_col(pan, dname, gname, tlev, "synthetic control needs treatment to stay on once adopted.")
  fin <- is.finite(fc$col)
  adopt <- integer(N); adopt[fin] <- as.integer(fc$col[fin])
  treated <- which(adopt > 0)
  if (!length(treated))
    dd_stop("no unit is treated in the data (`%s`): there is nothing to estimate.", dname %||% gname,
            .code = "NO_TREATED")
  pool <- which(adopt == 0)
  if (!is.null(donors)) {
    bad <- setdiff(donors, ids)
    if (length(bad)) dd_stop("`donors` names unit %s, which is not in the data.", dd_show(bad))
    tr <- intersect(donors, ids[treated])
    if (length(tr)) dd_stop("`donors` names unit %s, which is treated; donors must never be treated.", dd_show(tr))
    pool <- which(ids %in% donors)
  }
  if (length(pool) < 2L)
    dd_stop("synthetic control needs at least two never-treated donor units; the data have %d.", length(pool),
            .code = "NO_NEVER_TREATED")
  early <- treated[adopt[treated] == 1L]
  if (length(early))
    dd_stop("unit %s is treated from the first period (%s): there is no pre-treatment period.",
            dd_show(ids[early[1]]), format(tlev[1]))
  # a pre-treatment RMSPE at most `tol` is a perfect fit (the outcome's scale times 1e-9)
  list(Y = Y, aux = aux, ids = ids, tlev = tlev, adopt = adopt, treated = treated, donors = pool, notes = pan$notes,
       tol = 1e-9 * max(1, max(abs(Y), na.rm = TRUE)), nobs = length(pan$y))
}

# One predictor: op over the given period columns of one unit's row (NA
# removed; all NA is an error naming the unit)
dd_synth_op <- function(M, rows, cols, op, what, ids) {
  sub <- M[rows, cols, drop = FALSE]
  allna <- rowSums(!is.na(sub)) == 0
  if (any(allna))
    dd_stop("%s is missing for unit %s in every period it is measured over.", what, dd_show(ids[rows][allna]))
  apply(sub, 1, match.fun(op), na.rm = TRUE)
}

# The predictor matrix (k x units) of units `rows` for a fit whose
# pre-treatment periods are columns `pre`
dd_synth_X <- function(prep, rows, pre, settings, yname = "the outcome") {
  spec <- settings$spec; tlev <- prep$tlev
  pw <- dd_synth_window(settings$predictors_window, tlev, pre, "predictors_window")
  X <- NULL; nm <- character()
  for (p in spec$predictors) {
    X <- rbind(X, dd_synth_op(prep$aux[[p]], rows, pw, spec$op, sprintf("predictor \"%s\"", p), prep$ids))
    nm <- c(nm, p)
  }
  for (e in spec$special) {
    cols <- match(e$periods, tlev)
    if (anyNA(cols))
      dd_stop("special predictor \"%s\" asks for period %s, which is not in the data.", e$col,
              dd_periods(e$periods[is.na(cols)]))
    if (any(cols > max(pre)))
      dd_stop("special predictor \"%s\" asks for period %s, which is not before treatment (the last pre-treatment period is %s).",
              e$col, dd_periods(e$periods[cols > max(pre)]), format(tlev[max(pre)]))
    X <- rbind(X, dd_synth_op(prep$aux[[e$col]], rows, cols, e$op, sprintf("special predictor \"%s\"", e$col),
                              prep$ids))
    nm <- c(nm, e$name)
  }
  if (is.null(X)) {
    # no predictors: the outcome in each optimisation period
    ow <- dd_synth_window(settings$optimize_window, tlev, pre, "optimize_window")
    X <- t(prep$Y[rows, ow, drop = FALSE])
    nm <- paste0(yname, ".", tlev[ow])
  }
  rownames(X) <- nm
  X
}

# periods for a message: "13, 14" (at most five, then "...")
dd_periods <- function(x) paste(c(format(utils::head(x, 5)), if (length(x) > 5) "..."), collapse = ", ")

# A window of periods (NULL: all of `pre`) as period columns, checked to lie
# before treatment
dd_synth_window <- function(win, tlev, pre, arg) {
  if (is.null(win)) return(pre)
  if (!is.numeric(win) || !length(win) || anyNA(win))
    dd_stop("`%s` must be NULL or periods of the data; got %s.", arg, dd_show(win))
  cols <- match(win, tlev)
  if (anyNA(cols)) dd_stop("`%s` has period %s, which is not in the data.", arg, dd_periods(win[is.na(cols)]))
  late <- setdiff(cols, pre)
  if (length(late))
    dd_stop("`%s` has period %s, which is not before treatment (the last pre-treatment period is %s).", arg,
            dd_periods(tlev[late]), format(tlev[max(pre)]))
  cols
}

# The nested problem for one treated unit against a donor pool: returns the
# weights, V, the losses and the paths.
dd_synth_unit <- function(prep, i, pool, settings) {
  pre <- seq_len(prep$adopt[i] - 1L)
  rows <- c(i, pool)
  if (settings$v_method == "cv") {
    sol <- dd_synth_cv(prep, i, rows, pre, settings)
    X <- sol$X
  } else {
    X <- dd_synth_X(prep, rows, pre, settings)
    ow <- dd_synth_window(settings$optimize_window, prep$tlev, pre, "optimize_window")
    Z <- t(prep$Y[rows, ow, drop = FALSE])
    sol <- dd_synth_solve(X[, 1], X[, -1, drop = FALSE], Z[, 1], Z[, -1, drop = FALSE],
                          if (is.null(settings$spec$predictors) && !length(settings$spec$special)) "inverse_variance"
                          else settings$v_method, settings$custom_v, prep$ids[i], settings$v_search)
  }
  w <- stats::setNames(sol$w, prep$ids[pool])
  synth <- drop(crossprod(prep$Y[pool, , drop = FALSE], w))
  y <- prep$Y[i, ]
  gap <- y - synth
  post <- setdiff(seq_along(prep$tlev), pre)
  c(sol[c("v", "loss_w", "loss_v", "optim")], list(cv = sol$cv,
    w = w, X1 = X[, 1], X0 = X[, -1, drop = FALSE], y = y, synthetic = synth, gap = gap, pre = pre, post = post,
    pre_rmspe = sqrt(mean(gap[pre]^2)), post_rmspe = sqrt(mean(gap[post]^2)), att = mean(gap[post]),
    ratio = dd_synth_ratio(sqrt(mean(gap[post]^2)), sqrt(mean(gap[pre]^2)), prep$tol)))
}

# V by cross-validation (Abadie, Diamond and Hainmueller 2015): the
# pre-treatment periods split at cv_split into training and validation
# periods; V minimises the validation-period outcome MSPE of the weights
# fitted to predictors averaged over the training periods (the nested
# search); the final weights use that V with the predictors averaged over
# the validation periods. Special predictors keep their own periods in both
# steps. (predictors_window, when given, is intersected with each period.)
dd_synth_cv <- function(prep, i, rows, pre, settings) {
  tlev <- prep$tlev
  s <- if (is.null(settings$cv_split)) length(pre) %/% 2L else match(settings$cv_split, tlev)
  if (is.na(s) || s < 1L || s >= length(pre))
    dd_stop("`cv_split` must be a pre-treatment period of unit %s before its last one (%s to %s); got %s.",
            dd_show(prep$ids[i]), format(tlev[1]), format(tlev[max(pre) - 1L]),
            if (is.null(settings$cv_split)) "a single pre-treatment period" else dd_show(settings$cv_split))
  pw <- dd_synth_window(settings$predictors_window, tlev, pre, "predictors_window")
  part <- function(cols, what) {
    k <- intersect(pw, cols)
    if (!length(k))
      dd_stop("`predictors_window` has no period in the %s period (%s to %s) of v_method = \"cv\".", what,
              format(tlev[min(cols)]), format(tlev[max(cols)]))
    st <- settings; st$predictors_window <- tlev[k]
    dd_synth_X(prep, rows, pre, st)
  }
  train <- pre[seq_len(s)]; valid <- pre[-seq_len(s)]
  Xt <- part(train, "training"); X <- part(valid, "validation")
  Z <- t(prep$Y[rows, valid, drop = FALSE])
  st <- dd_synth_solve(Xt[, 1], Xt[, -1, drop = FALSE], Z[, 1], Z[, -1, drop = FALSE], "nested", NULL,
                       prep$ids[i], settings$v_search)
  sol <- dd_synth_solve(X[, 1], X[, -1, drop = FALSE], Z[, 1], Z[, -1, drop = FALSE], "custom", unname(st$v),
                        prep$ids[i])
  sol$optim <- st$optim; sol$loss_v <- st$loss_v; sol$X <- X
  sol$cv <- list(train = tlev[train], valid = tlev[valid])
  sol
}

# Synth's synth(): scaling, V, W. X1 (k), X0 (k x J), Z1 (T), Z0 (T x J).
dd_synth_solve <- function(X1, X0, Z1, Z0, v_method, custom_v, unit, v_search = "multistart") {
  k <- length(X1)
  sds <- apply(cbind(X0, X1), 1, stats::sd)
  flat <- which(apply(X0, 1, stats::sd) == 0)
  if (length(flat))
    dd_stop("predictor \"%s\" does not vary across the donors of unit %s; remove it.", rownames(X0)[flat[1]],
            dd_show(unit))
  X0s <- X0 / sds; X1s <- X1 / sds
  optim_info <- NULL
  if (v_method == "custom") {
    if (!is.numeric(custom_v) || length(custom_v) != k || anyNA(custom_v) || any(custom_v < 0) || sum(custom_v) <= 0)
      dd_stop("`custom_v` must be %d non-negative numbers (one per predictor), not all zero; got %s.", k,
              dd_show(custom_v))
    v <- custom_v / sum(custom_v)
  } else if (v_method == "inverse_variance" || k == 1L) {
    v <- rep(1 / k, k)
  } else {
    nv <- dd_synth_nested_v(X0s, X1s, Z0, Z1, v_search)
    v <- nv$v; optim_info <- nv$info
  }
  v <- stats::setNames(v, rownames(X0))
  A <- sqrt(v) * X0s
  sol <- .Call(C_synth_w, A, matrix(sqrt(v) * X1s))
  w <- sol$w[, 1]
  r <- Z1 - drop(Z0 %*% w)
  list(w = w, v = v, loss_w = sol$loss[1], loss_v = mean(r^2), optim = optim_info)
}

# Synth's V search: from equal weights and from the regression-based
# starting values, Nelder-Mead and BFGS (stats::optim's defaults, as
# optimx calls them), the smallest outcome MSPE kept; V = |par| / sum |par|.
# search = "multistart" adds one start per predictor (weight 1 on it, 0.01
# on the others) and ten quasi-random ones, each run by Nelder-Mead alone
# (BFGS's finite differences cost k + 1 evaluations a step): with exact weights the MSPE is flat wherever W stays at a
# vertex, and a local search from Synth's two starts can stop there (on
# simulated panels it ended 14% above the best MSPE the extra starts found).
dd_synth_nested_v <- function(X0s, X1s, Z0, Z1, search = "multistart") {
  # warm start from the support of the previous evaluation's weights
  warm <- NULL
  k <- length(X1s)
  starts <- list(equal = rep(1 / k, k))
  Xall <- cbind(1, t(cbind(X1s, X0s)))
  Zall <- cbind(Z1, Z0)
  beta <- tryCatch(solve(crossprod(Xall)) %*% t(Xall) %*% t(Zall), error = function(e) NULL)
  if (!is.null(beta)) {
    b <- beta[-1, , drop = FALSE]
    sv <- diag(b %*% t(b))
    starts$regression <- sv / sum(sv)
  }
  if (search == "multistart" && k > 1L)
    for (j in seq_len(k)) { s0 <- rep(0.01, k); s0[j] <- 1; starts[[rownames(X0s)[j] %||% paste0("v", j)]] <- s0 }
  if (search == "multistart" && k > 1L) {
    # ten fixed quasi-random interior starts (a Halton sequence: no draw from
    # the caller's random numbers)
    H <- dd_halton(10L, k)
    for (r in seq_len(nrow(H))) starts[[paste0("halton", r)]] <- H[r, ] / sum(H[r, ])
  }
  best <- NULL; info <- list()
  # optim()'s routines (R's nmmin and vmmin) with its defaults (maxit 500
  # and 100), called from C on the C objective, the warm start carried
  # through as fn carries it: the numbers of optim(par, fn, method = m)
  opt <- function(par, m) {
    bfgs <- m == "BFGS"
    r <- .Call(C_synth_nm, X0s, X1s, Z0, Z1, as.double(par), warm, if (bfgs) 100L else 500L, bfgs)
    warm <<- r$warm
    names(r$counts) <- c("function", "gradient")
    r[c("par", "value", "counts", "convergence")]
  }
  run <- function(lab, par, m) {
    o <- opt(par, m)
    # Nelder-Mead stops where its simplex lies on a plateau (W at a vertex):
    # one restart from where it stopped (multistart only)
    if (search == "multistart" && m == "Nelder-Mead") {
      o2 <- opt(o$par, m)
      o2$counts <- o2$counts + o$counts
      if (o2$value <= o$value) o <- o2
    }
    info[[lab]] <<- c(value = o$value, counts = o$counts[1], convergence = o$convergence)
    if (is.null(best) || o$value < best$value) best <<- o
  }
  for (s in names(starts))
    for (m in if (s %in% c("equal", "regression")) c("Nelder-Mead", "BFGS") else "Nelder-Mead")
      run(paste(s, m), starts[[s]], m)
  list(v = abs(best$par) / sum(abs(best$par)), info = do.call(rbind, info))
}

# In-space placebos (Abadie, Diamond and Hainmueller 2010): every donor in
# turn as the treated unit, the other donors as its pool, at each adoption
# period of the treated units; the ratio of post- to pre-treatment RMSPE.
dd_synth_placebos <- function(prep, fits, settings, cut) {
  adopts <- sort(unique(prep$adopt[prep$treated]))
  tasks <- expand.grid(j = prep$donors, a = adopts)
  res <- dd_lapply(seq_len(nrow(tasks)), function(r) {
    j <- tasks$j[r]
    p2 <- prep; p2$adopt[j] <- tasks$a[r]
    f <- dd_synth_unit(p2, j, setdiff(prep$donors, j), settings)
    c(pre_rmspe = f$pre_rmspe, post_rmspe = f$post_rmspe, att = f$att, ratio = f$ratio, f$gap)
  }, label = "synthetic control placebos")
  M <- do.call(rbind, res)
  tab <- data.frame(unit = prep$ids[tasks$j], adopt = prep$tlev[tasks$a], M[, 1:4, drop = FALSE])
  gaps <- M[, -(1:4), drop = FALSE]
  colnames(gaps) <- prep$tlev
  # the p-value of each treated unit: the share of units (itself included)
  # whose ratio is at least its own, among the placebos whose pre-treatment
  # MSPE is at most `cut` times its own
  p <- vapply(fits, function(f) {
    a <- prep$tlev[f$post[1]]
    s <- tab$adopt == a & tab$pre_rmspe^2 <= cut * f$pre_rmspe^2
    (1 + sum(tab$ratio[s] >= f$ratio)) / (1 + sum(s))
  }, numeric(1))
  list(table = tab, gaps = gaps, p.value = p)
}

# The first n points of the Halton sequence in k dimensions (bases the first
# k primes), an n x k matrix in (0, 1)
dd_halton <- function(n, k) {
  primes <- c(2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59, 61, 67, 71, 73, 79, 83, 89, 97)
  while (length(primes) < k) {
    cand <- max(primes) + 2
    while (any(cand %% primes[primes <= sqrt(cand)] == 0)) cand <- cand + 2
    primes <- c(primes, cand)
  }
  vapply(seq_len(k), function(j) {
    b <- primes[j]
    vapply(seq_len(n), function(i) {
      f <- 1; r <- 0
      while (i > 0) { f <- f / b; r <- r + f * (i %% b); i <- i %/% b }
      r
    }, numeric(1))
  }, numeric(n))
}
