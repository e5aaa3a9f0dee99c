#' Trim survey weights
#'
#' Weights above `upper` are set to `upper` and weights below `lower` to
#' `lower`; what was cut off (or added) is spread in equal parts over the
#' weights inside the bounds, so the total is unchanged -- the rule of
#' survey's `trimWeights()`. Spreading may push a weight past a bound
#' again: `strict = TRUE` repeats the step until none is (survey's
#' `strict`).
#'
#' A [survey_design()] keeps its strata, clusters and finite population
#' corrections and gets the trimmed weights; a replicate-weight design has
#' its full-sample weights and each replicate's weights trimmed by the same
#' rule, column by column. The design records the trimming (`trimmed`:
#' the bounds, `strict` and the number of weights moved to a bound), and
#' fits with it say so in their variance label.
#'
#' @param x A [survey_design()] or a numeric vector of positive weights.
#' @param upper,lower The bounds (default no bound); for example a multiple
#'   of the median weight, or a quantile of the weights.
#' @param strict `FALSE` (default): one step; `TRUE`: repeat until every
#'   weight is within the bounds.
#' @return `x` with its weights trimmed (a design of the same kind, or a
#'   numeric vector).
#' @examples
#' set.seed(1)
#' d <- data.frame(psu = rep(1:20, each = 5), w = rexp(100) * 10, y = rnorm(100))
#' des <- survey_design(d, weights = "w", ids = "psu")
#' tw <- trim_weights(des, upper = 3 * median(d$w))
#' tw
#' range(tw$weights); sum(tw$weights) - sum(d$w)
#' @export
trim_weights <- function(x, upper = Inf, lower = -Inf, strict = FALSE) {
  one <- function(v, arg) {
    if (!is.numeric(v) || length(v) != 1L || is.na(v)) dd_stop("`%s` must be one number; got %s.", arg, dd_show(v))
    as.double(v)
  }
  upper <- one(upper, "upper"); lower <- one(lower, "lower")
  if (lower >= upper) dd_stop("`lower` (%s) must be below `upper` (%s).", format(lower), format(upper))
  strict <- dd_check_flag(strict, "strict")
  if (inherits(x, "dd_survey_design")) {
    w <- dd_trim(x$weights, upper, lower, strict, "the design's weights")
    moved <- sum(x$weights < lower | x$weights > upper)
    x$weights <- w
    if (isTRUE(x$replicate))
      x$repweights <- vapply(seq_len(ncol(x$repweights)), function(j)
        dd_trim(x$repweights[, j], upper, lower, strict, sprintf("replicate %d's weights", j)), numeric(nrow(x$repweights)))
    x$trimmed <- list(upper = upper, lower = lower, strict = strict, n = moved)
    return(x)
  }
  if (inherits(x, c("survey.design", "svyrep.design")))
    dd_stop("`x` is a survey package design: trim it with survey::trimWeights() (the same rule), or convert it with survey_design() first.")
  if (!is.numeric(x) || !length(x) || anyNA(x) || any(!is.finite(x)) || any(x <= 0))
    dd_stop("`x` must be a survey_design() or a vector of positive finite weights; got %s.", dd_show(x))
  dd_trim(as.double(x), upper, lower, strict, "`x`")
}

# one step (or, strict, steps until none is outside) of survey's rule on
# weights w (zero weights -- rows outside a subpopulation -- stay zero);
# `what` names them in the errors
dd_trim <- function(w, upper, lower, strict, what) {
  if (any(w == 0)) {
    pos <- w > 0
    w[pos] <- dd_trim(w[pos], upper, lower, strict, what)
    return(w)
  }
  tot <- sum(w)
  if (upper * length(w) < tot || lower * length(w) > tot)
    dd_stop("no trimming keeps the total of %s (%s) with every weight in [%s, %s]: %d weights average %s.", what,
            format(tot), format(lower), format(upper), length(w), format(tot / length(w)))
  for (it in seq_len(1000L)) {
    out <- w < lower | w > upper
    if (!any(out)) break
    if (all(out)) dd_stop("every one of %s is outside [%s, %s]; nothing is left to take up the trimmed weight.",
                          what, format(lower), format(upper))
    wn <- pmin(pmax(w, lower), upper)
    wn[!out] <- wn[!out] + sum(w - wn) / sum(!out)
    w <- wn
    if (!strict) break
  }
  w
}

#' A subpopulation of a survey design
#'
#' Estimation on a subpopulation (a domain) that keeps the whole design:
#' the rows outside get weight zero, as survey's `subset()` does, so an
#' estimator leaves them out of the estimation while the variance keeps
#' every stratum and PSU of the design (a PSU without rows in the
#' subpopulation contributes a zero total) -- not the smaller design a
#' subset of the data would describe. Degrees of freedom are survey's
#' `degf()`: the PSUs minus the strata with rows in the subpopulation. Pass
#' the whole `data` with the subset design.
#'
#' @param x A [survey_design()].
#' @param subset A logical vector, one value per row of the design (`NA`
#'   counts as outside).
#' @param ... Not used.
#' @return The design with zero weights outside the subpopulation, recording
#'   it (`domain`: the number of rows inside and the expression).
#' @examples
#' set.seed(1)
#' d <- dd_sim_staggered(n_units = 200, n_periods = 4)
#' d$w <- runif(200, 5, 30)[d$id]; d$psu <- d$id %% 40; d$female <- (d$id %% 2)
#' des <- survey_design(d, weights = "w", ids = "psu")
#' fit <- did_cs(d, "y", "id", "time", "first_treat", nboot = 0, survey = subset(des, d$female == 1))
#' fit
#' @export
subset.dd_survey_design <- function(x, subset, ...) {
  dd_check_dots(list(...), "subset()")
  lab <- paste(deparse(substitute(subset)), collapse = " ")
  if (!is.logical(subset) || length(subset) != x$n)
    dd_stop("`subset` must be a logical vector with one value per row of the design (%d); got %s.", x$n,
            dd_show(subset))
  inside <- !is.na(subset) & subset
  if (!any(inside & x$weights > 0)) dd_stop("`subset` (%s) leaves no row of positive weight.", lab)
  x$weights[!inside] <- 0
  if (isTRUE(x$replicate)) x$repweights[!inside, ] <- 0
  x$domain <- list(n = sum(inside), label = lab)
  x
}
