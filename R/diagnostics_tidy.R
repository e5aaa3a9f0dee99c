# tidy(), glance() and as.data.frame() for the diagnostics (bacon_decomp,
# honest_did, pretrends_power, placebo_test), so that they work with broom-style tools
# (modelsummary, dplyr) like the fits.

#' Tidy summaries of the diagnostics
#'
#' `tidy()` gives one row per reported quantity with a `term` column (as
#' broom and modelsummary expect), `glance()` one row of summary numbers and
#' `as.data.frame()` the object's main table.
#'
#' * [bacon_decomp()]: `tidy()` has one row per 2x2 comparison (`term`
#'   "treated vs untreated", `estimate`, `weight`, `type`, `treated`,
#'   `untreated`); `glance()` the TWFE coefficient (`beta_twfe`), the number
#'   of comparisons and the panel's size.
#' * [honest_did()]: `tidy()` has the original interval and one row per
#'   value of `M` (or `Mbar`): `term`, `conf.low`, `conf.high`, `method`,
#'   `delta`; `glance()` the restriction, method, breakdown value and the
#'   target's estimate and standard error.
#' * [pretrends_power()]: `tidy()` is the event-time table (`term`, `event`,
#'   `estimate`, `std.error`, the hypothesised trend `delta` and the
#'   expectation after pre-testing); `glance()` the power, slope, pass
#'   probability, Bayes factor and likelihood ratio.
#' * [placebo_test()]: `tidy()` has one row per draw (`term` "draw k",
#'   `estimate`, `std.error` where the draws have one, the permutation's
#'   `statistic`, and the left-out unit or cohort for leave-one-out);
#'   `glance()` the type, the estimator, the statistic, the estimate on the
#'   data, the p-value (or the group placebo's rejection rate) and the number
#'   of draws used and failed.
#' @param x A `bacon_decomp`, `honest_did`, `dd_pretrends` or `dd_placebo` object.
#' @param row.names,optional Ignored (for the generic).
#' @param ... `print()`, `summary()`, `as.data.frame()`: not used (an error if given). `tidy()` and
#'   `glance()` follow broom's contract (modelsummary passes its own arguments through): an error only for
#'   `vcov` or `cluster` (not recomputed here) or a misspelt argument.
#' @return A data frame.
#' @examples
#' d <- read.csv(system.file("extdata", "sim_panel.csv", package = "diffdiff"))
#' b <- bacon_decomp(d, yname = "y", idname = "id", tname = "year", gname = "first_treat")
#' tidy(b)
#' glance(b)
#' es <- did_event(d, yname = "y", idname = "id", tname = "year", gname = "first_treat")
#' tidy(honest_did(es, type = "SD", M = c(0, 0.01)))
#' glance(pretrends_power(es, power = 0.5))
#' @name diagnostics-tidy
NULL

#' @rdname diagnostics-tidy
#' @method tidy bacon_decomp
#' @export
tidy.bacon_decomp <- function(x, ...) {
  dd_check_broom_dots(list(...), "tidy()", sys.function())
  b <- x$two_by_twos
  lab <- function(v) ifelse(is.infinite(v), "never", format(v, trim = TRUE))
  data.frame(term = paste(lab(b$treated), "vs", lab(b$untreated)), estimate = b$estimate, weight = b$weight,
             type = b$type, treated = b$treated, untreated = b$untreated, stringsAsFactors = FALSE)
}

#' @rdname diagnostics-tidy
#' @method glance bacon_decomp
#' @export
glance.bacon_decomp <- function(x, ...) {
  dd_check_broom_dots(list(...), "glance()", sys.function())
  data.frame(beta_twfe = x$beta_twfe, n.comparisons = nrow(x$two_by_twos), n.units = x$n_units,
             n.periods = x$n_periods, nobs = x$n_units * x$n_periods)
}

#' @rdname diagnostics-tidy
#' @export
as.data.frame.bacon_decomp <- function(x, row.names = NULL, optional = FALSE, ...)
  dd_as_df(x$two_by_twos, row.names, list(...))

#' @rdname diagnostics-tidy
#' @method tidy honest_did
#' @export
tidy.honest_did <- function(x, ...) {
  dd_check_broom_dots(list(...), "tidy()", sys.function())
  a <- as.data.frame(x)
  lab <- names(a)[1]
  data.frame(term = ifelse(is.na(a[[1]]), "original", sprintf("%s = %s", lab, vapply(a[[1]], format, "", digits = 6))),
             M = a[[1]], conf.low = a$lb, conf.high = a$ub, method = a$method, delta = a$delta,
             stringsAsFactors = FALSE)
}

#' @rdname diagnostics-tidy
#' @method glance honest_did
#' @export
glance.honest_did <- function(x, ...) {
  dd_check_broom_dots(list(...), "glance()", sys.function())
  data.frame(type = x$type, method = x$method, breakdown = x$breakdown, alpha = x$alpha, estimate = x$estimate,
             std.error = x$se, num_pre = x$num_pre, num_post = x$num_post, stringsAsFactors = FALSE)
}

#' @rdname diagnostics-tidy
#' @method tidy dd_pretrends
#' @export
tidy.dd_pretrends <- function(x, ...) {
  dd_check_broom_dots(list(...), "tidy()", sys.function())
  t <- x$table
  rownames(t) <- NULL
  t
}

#' @rdname diagnostics-tidy
#' @method glance dd_pretrends
#' @export
glance.dd_pretrends <- function(x, ...) {
  dd_check_broom_dots(list(...), "glance()", sys.function())
  data.frame(power = x$power, slope = x$slope, pass_prob = x$pass_prob, size = x$size,
             bayes_factor = x$bayes_factor, likelihood_ratio = x$likelihood_ratio, alpha = x$alpha,
             num_pre = x$num_pre)
}

#' @rdname diagnostics-tidy
#' @method tidy dd_placebo
#' @export
tidy.dd_placebo <- function(x, ...) {
  dd_check_broom_dots(list(...), "tidy()", sys.function())
  d <- as.data.frame(x$draws)
  rownames(d) <- NULL
  cbind(data.frame(term = paste("draw", seq_len(nrow(d))), stringsAsFactors = FALSE), d)
}

#' @rdname diagnostics-tidy
#' @method glance dd_placebo
#' @export
glance.dd_placebo <- function(x, ...) {
  dd_check_broom_dots(list(...), "glance()", sys.function())
  data.frame(type = x$type, estimator = x$estimator, term = x$statistic, test_statistic = x$test_statistic,
             estimate = x$estimate %||% NA_real_, std.error = x$std.error %||% NA_real_,
             p.value = x$p.value %||% NA_real_, rejection_rate = x$rejection_rate %||% NA_real_,
             n.draws = nrow(x$draws), n.failed = x$failed, alpha = x$alpha, stringsAsFactors = FALSE)
}
