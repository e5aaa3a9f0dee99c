# did_dcdh()'s by_path (one fit per treatment path) and predict_het
# (heterogeneity regressions of the group effects), with the by_path
# result's methods.

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
#' @param ... Passed to [plot_event_studies()] by `plot()`; not used by `print()` and `tidy()` (an error if
#'   given).
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
  dd_check_broom_dots(list(...), "tidy()", sys.function())
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
  if (trends_lin) dd_stop("`predict_het` is not supported with `trends_lin` = TRUE; use one of them.")
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

#' @rdname did_dcdh_by
#' @export
glance.did_dcdh_by <- function(x, ...) {
  dd_check_broom_dots(list(...), "glance()", sys.function())
  do.call(rbind, lapply(seq_along(x$fits), function(k)
    cbind(by = names(x$fits)[k], glance(x$fits[[k]]), stringsAsFactors = FALSE)))
}

#' @rdname did_dcdh_by
#' @param row.names,optional As for [as.data.frame()] (`optional` changes nothing).
#' @export
as.data.frame.did_dcdh_by <- function(x, row.names = NULL, optional = FALSE, ...)
  dd_as_df(tidy.did_dcdh_by(x), row.names, list(...))
