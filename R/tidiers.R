# tidy(), glance(), as.data.frame() and plot() for the results that are not
# fits and had only print(): equivalence_test(), dd_compare(),
# sdid_diagnostics(), dd_power(), placebo_test() (as.data.frame), and
# aggregate() on a fit that has nothing to aggregate. Each table is the one
# the print method shows; glance() is one row of the headline numbers.

#' Tidiers and plots of equivalence tests, comparisons, SDiD diagnostics and power
#'
#' `tidy()` returns the result's table, `glance()` one row of its headline
#' numbers, `as.data.frame()` the same as `tidy()`, and `plot()` draws it:
#' * [equivalence_test()]: the pre-period coefficients and their two
#'   one-sided tests; glance: the margin, p-value, verdict and bound; plot:
#'   the coefficients with their `1 - 2 alpha` intervals against the margin
#'   and the equivalence bound.
#' * [dd_compare()]: the terms of the two fits side by side; glance: the
#'   largest differences and the supported explanations; plot: estimate of
#'   `b` against estimate of `a`, with their intervals.
#' * [sdid_diagnostics()]: the leave-one-out estimates; glance: the weight
#'   summaries and the in-time placebo; plot: the leave-one-out estimates by
#'   unit weight.
#' * [dd_power()]: one row of the design and the solved quantity (tidy and
#'   glance alike).
#' * [placebo_test()]: `as.data.frame()` gives its draws (as `tidy()`).
#' @param x A result of one of these functions.
#' @param row.names,optional As for [as.data.frame()] (`row.names` used,
#'   `optional` changes nothing).
#' @param main,xlab,ylab Titles.
#' @param ... `plot()`: passed to [graphics::plot.default()]; `tidy()` and
#'   `glance()`: broom's contract (other arguments are not used); the
#'   others: not used (an error if given).
#' @return Data frames; `plot()` returns `x` invisibly.
#' @examples
#' d <- read.csv(system.file("extdata", "sim_panel.csv", package = "diffdiff"))
#' eq <- equivalence_test(did_event(d, "y", "id", "year", "first_treat"), margin = 0.75)
#' tidy(eq)
#' glance(eq)
#' plot(eq)
#' cp <- dd_compare(did_twfe(d, "y", "id", "year", "treat"),
#'                  did_twfe(d, "y", "id", "year", "treat", cluster = "state"))
#' glance(cp)
#' @name result-tidiers
NULL

# --- equivalence_test() ------------------------------------------------------

#' @rdname result-tidiers
#' @export
tidy.dd_equivalence <- function(x, ...) {
  dd_check_broom_dots(list(...), "tidy()", sys.function())
  t <- x$table
  data.frame(term = if (!is.null(t$event)) paste0("event::", t$event) else rownames(t), t, row.names = NULL,
             stringsAsFactors = FALSE)
}

#' @rdname result-tidiers
#' @export
glance.dd_equivalence <- function(x, ...) {
  dd_check_broom_dots(list(...), "glance()", sys.function())
  data.frame(n_coefficients = nrow(x$table), margin = x$margin %||% NA_real_, p.value = x$p.value %||% NA_real_,
             equivalent = x$equivalent %||% NA, bound = x$bound, alpha = x$alpha)
}

#' @rdname result-tidiers
#' @export
as.data.frame.dd_equivalence <- function(x, row.names = NULL, optional = FALSE, ...)
  dd_as_df(tidy.dd_equivalence(x), row.names, list(...))

#' @rdname result-tidiers
#' @export
plot.dd_equivalence <- function(x, main = NULL, xlab = NULL, ylab = "Pre-period coefficient", ...) {
  t <- x$table
  ev <- if (!is.null(t$event)) t$event else seq_len(nrow(t))
  z <- stats::qt(1 - x$alpha, t$df)               # the 1 - 2 alpha interval of the two one-sided tests
  lo <- t$estimate - z * t$std.error; hi <- t$estimate + z * t$std.error
  m <- c(x$margin, x$bound)
  yl <- range(c(lo, hi, m, -m, 0), finite = TRUE)
  yl[2] <- yl[2] + 0.3 * diff(yl)                 # (room for the legend above the margin)
  op <- graphics::par(mar = c(4.2, 4.2, 3, 1), las = 1)
  on.exit(graphics::par(op))
  graphics::plot.default(ev, t$estimate, ylim = yl, pch = 16, col = "#1B6CA8", xaxt = "n",
                         main = main %||% "Equivalence test of the pre-period coefficients",
                         xlab = xlab %||% "Periods relative to treatment", ylab = ylab, ...)
  graphics::axis(1, at = ev)
  graphics::segments(ev, lo, ev, hi, col = "#1B6CA8", lwd = 2)
  graphics::abline(h = 0, col = "grey50")
  graphics::abline(h = c(-1, 1) * x$bound, lty = 3, col = "grey30")
  if (!is.null(x$margin)) graphics::abline(h = c(-1, 1) * x$margin, lty = 2, col = "#C0392B")
  graphics::legend("topleft", bty = "n", cex = 0.85, lty = c(1, if (!is.null(x$margin)) 2, 3),
                   col = c("#1B6CA8", if (!is.null(x$margin)) "#C0392B", "grey30"),
                   legend = c(sprintf("%g%% intervals (two one-sided tests)", 100 * (1 - 2 * x$alpha)),
                              if (!is.null(x$margin)) sprintf("margin +-%s", format(x$margin, digits = 3)),
                              sprintf("equivalence bound +-%s", format(x$bound, digits = 3))))
  invisible(x)
}

# --- dd_compare() --------------------------------------------------------------

#' @rdname result-tidiers
#' @export
tidy.dd_compare <- function(x, ...) {
  dd_check_broom_dots(list(...), "tidy()", sys.function())
  dd_as_df(x$table, NULL, list())
}

#' @rdname result-tidiers
#' @export
glance.dd_compare <- function(x, ...) {
  dd_check_broom_dots(list(...), "glance()", sys.function())
  t <- x$table; h <- x$hypotheses
  mx <- function(v) if (length(v) && any(is.finite(v))) max(v[is.finite(v)]) else NA_real_
  data.frame(a = x$a$label, b = x$b$label, n_common = nrow(t), n_only_a = length(x$only_a),
             n_only_b = length(x$only_b), max_rel_diff = mx(t$rel_diff), max_abs_log_se_ratio = mx(abs(log(t$se_ratio))),
             supported = paste(h$hypothesis[h$supported], collapse = ", "), stringsAsFactors = FALSE)
}

#' @rdname result-tidiers
#' @export
as.data.frame.dd_compare <- function(x, row.names = NULL, optional = FALSE, ...)
  dd_as_df(x$table, row.names, list(...))

#' @rdname result-tidiers
#' @export
plot.dd_compare <- function(x, main = NULL, xlab = NULL, ylab = NULL, ...) {
  t <- x$table
  z <- stats::qnorm(0.975)
  xa <- c(t$estimate_a - z * t$se_a, t$estimate_a + z * t$se_a)
  yb <- c(t$estimate_b - z * t$se_b, t$estimate_b + z * t$se_b)
  lim <- range(c(xa, yb), finite = TRUE)
  op <- graphics::par(mar = c(4.2, 4.2, 3, 1), las = 1)
  on.exit(graphics::par(op))
  graphics::plot.default(t$estimate_a, t$estimate_b, xlim = lim, ylim = lim, pch = 16, col = "#1B6CA8",
                         main = main %||% sprintf("%s (a) against %s (b)", x$a$label, x$b$label),
                         xlab = xlab %||% sprintf("estimate of a (%s)", x$a$label),
                         ylab = ylab %||% sprintf("estimate of b (%s)", x$b$label), ...)
  graphics::abline(0, 1, lty = 2, col = "grey50")
  graphics::segments(t$estimate_a - z * t$se_a, t$estimate_b, t$estimate_a + z * t$se_a, t$estimate_b, col = "grey60")
  graphics::segments(t$estimate_a, t$estimate_b - z * t$se_b, t$estimate_a, t$estimate_b + z * t$se_b, col = "grey60")
  graphics::mtext("bars: 95% intervals of each fit; dashed: equality", side = 3, line = 0.2, cex = 0.8)
  invisible(x)
}

# --- sdid_diagnostics() --------------------------------------------------------

#' @rdname result-tidiers
#' @export
tidy.sdid_diagnostics <- function(x, ...) {
  dd_check_broom_dots(list(...), "tidy()", sys.function())
  dd_as_df(x$leave_one_out, NULL, list())
}

#' @rdname result-tidiers
#' @export
glance.sdid_diagnostics <- function(x, ...) {
  dd_check_broom_dots(list(...), "glance()", sys.function())
  w <- x$weights
  l <- x$leave_one_out
  data.frame(effective_controls = w[["effective_controls"]], effective_periods = w[["effective_periods"]],
             positive_controls = w[["positive_controls"]], herfindahl = w[["herfindahl"]],
             top5_share = w[["top5_share"]], placebo_time = x$placebo_time$estimate,
             loo_min = if (nrow(l)) min(l$estimate) else NA_real_, loo_max = if (nrow(l)) max(l$estimate) else NA_real_)
}

#' @rdname result-tidiers
#' @export
as.data.frame.sdid_diagnostics <- function(x, row.names = NULL, optional = FALSE, ...)
  dd_as_df(x$leave_one_out, row.names, list(...))

#' @rdname result-tidiers
#' @export
plot.sdid_diagnostics <- function(x, main = NULL, xlab = "Weight of the unit left out", ylab = "Estimate without it",
                                  ...) {
  l <- x$leave_one_out
  if (!nrow(l)) dd_stop("these diagnostics have no leave-one-out estimates to plot.")
  full <- l$estimate[1] - l$change[1]
  # controls by their unit weight; treated units (no weight) in a strip at the left
  ctl <- l[l$role == "control", , drop = FALSE]; tr <- l[l$role != "control", , drop = FALSE]
  xr <- range(ctl$weight, finite = TRUE); if (!all(is.finite(xr))) xr <- c(0, 1)
  xt <- xr[1] - 0.08 * max(diff(xr), 1e-12)
  op <- graphics::par(mar = c(4.2, 4.2, 3, 1), las = 1)
  on.exit(graphics::par(op))
  graphics::plot.default(c(ctl$weight, rep(xt, nrow(tr))), c(ctl$estimate, tr$estimate), pch = 16,
                         col = c(rep("#1B6CA8", nrow(ctl)), rep("#C0392B", nrow(tr))),
                         main = main %||% "Leave-one-out estimates", xlab = xlab, ylab = ylab, ...)
  graphics::abline(h = full, lty = 2, col = "grey40")
  if (nrow(tr)) graphics::abline(v = xr[1] - 0.04 * max(diff(xr), 1e-12), col = "grey80")
  graphics::legend("topright", bty = "n", cex = 0.85, pch = c(16, if (nrow(tr)) 16, NA), lty = c(NA, if (nrow(tr)) NA, 2),
                   col = c("#1B6CA8", if (nrow(tr)) "#C0392B", "grey40"),
                   legend = c("control left out (by its weight)", if (nrow(tr)) "treated unit left out (left strip)",
                              "full-sample estimate"))
  invisible(x)
}

# --- dd_power() ----------------------------------------------------------------

#' @rdname result-tidiers
#' @export
tidy.dd_power <- function(x, ...) {
  dd_check_broom_dots(list(...), "tidy()", sys.function())
  as.data.frame(unclass(x), stringsAsFactors = FALSE)
}

#' @rdname result-tidiers
#' @export
glance.dd_power <- function(x, ...) {
  dd_check_broom_dots(list(...), "glance()", sys.function())
  as.data.frame(unclass(x)[c("solved", "effect", "power", "n", "se", "alpha")], stringsAsFactors = FALSE)
}

#' @rdname result-tidiers
#' @export
as.data.frame.dd_power <- function(x, row.names = NULL, optional = FALSE, ...)
  dd_as_df(tidy.dd_power(x), row.names, list(...))

# --- placebo_test() ------------------------------------------------------------

#' @rdname result-tidiers
#' @export
as.data.frame.dd_placebo <- function(x, row.names = NULL, optional = FALSE, ...)
  dd_as_df(tidy.dd_placebo(x), row.names, list(...))

# --- aggregate() on a fit with nothing to aggregate ----------------------------

#' @rdname result-tidiers
#' @param type Not used: `aggregate()` of such a fit is an error naming the estimators that aggregate.
#' @export
aggregate.dd_fit <- function(x, type = NULL, ...) {
  reg <- dd_registry
  has <- reg$name[!is.na(reg$aggregate)]
  dd_stop("aggregate(): a %s fit has nothing to aggregate (it reports its effects directly: see its table or tidy()); aggregate() combines the group-time effects of %s.",
          x$estimator %||% class(x)[1], paste0(has, "()", collapse = ", "), .code = "NOTHING_TO_AGGREGATE")
}

#' @rdname result-tidiers
#' @export
plot.dd_power <- function(x, main = NULL, xlab = "Effect size", ylab = "Power", ...) {
  # the power curve of the design: power against the effect size, with the
  # design's other settings, and the solved point marked
  args <- unclass(x)[c("n", "sd", "n_pre", "n_post", "rho", "correlation", "estimator", "treated_share",
                       "cluster_size", "icc", "deff", "alpha", "alternative", "test")]
  args <- lapply(args, function(v) v[[1]])
  e_max <- if (is.finite(x$effect[1]) && x$effect[1] != 0) 2.5 * abs(x$effect[1]) else 4 * x$se[1]
  grid <- seq(e_max / 80, e_max, length.out = 80)
  pw <- vapply(grid, function(e) do.call(dd_power, c(list(effect = e), args))$power[1], numeric(1))
  op <- graphics::par(mar = c(4.2, 4.2, 3, 1), las = 1)
  on.exit(graphics::par(op))
  graphics::plot.default(grid, pw, type = "l", lwd = 2, col = "#1B6CA8", ylim = c(0, 1),
                         main = main %||% sprintf("Power of the %s design: %s units, %d pre and %d post periods",
                                                  x$estimator[1], format(x$n[1]), x$n_pre[1], x$n_post[1]),
                         xlab = xlab, ylab = ylab, ...)
  graphics::abline(h = x$alpha[1], lty = 3, col = "grey50")
  graphics::points(abs(x$effect[1]), x$power[1], pch = 16, col = "#C0392B", cex = 1.3)
  graphics::segments(abs(x$effect[1]), 0, abs(x$effect[1]), x$power[1], lty = 2, col = "#C0392B")
  graphics::legend("bottomright", bty = "n", cex = 0.85, lty = c(1, NA, 3), pch = c(NA, 16, NA),
                   col = c("#1B6CA8", "#C0392B", "grey50"),
                   legend = c("power", sprintf("effect %s, power %.2f", format(x$effect[1], digits = 3), x$power[1]),
                              sprintf("alpha = %g", x$alpha[1])))
  invisible(x)
}

# --- dd_simulate_power(), dd_simulate_sample_size() ----------------------------

#' @rdname result-tidiers
#' @export
tidy.dd_power_sim <- function(x, ...) {
  dd_check_broom_dots(list(...), "tidy()", sys.function())
  as.data.frame(unclass(x)[names(x)], stringsAsFactors = FALSE)
}

#' @rdname result-tidiers
#' @export
glance.dd_power_sim <- function(x, ...) {
  dd_check_broom_dots(list(...), "glance()", sys.function())
  data.frame(n_effects = nrow(x), nsim = sum(x$nsim), failed = sum(x$failed), mde = attr(x, "mde") %||% NA_real_,
             target_power = attr(x, "target_power") %||% NA_real_, alpha = attr(x, "alpha") %||% NA_real_)
}

#' @rdname result-tidiers
#' @export
tidy.dd_power_sim_n <- function(x, ...) {
  dd_check_broom_dots(list(...), "tidy()", sys.function())
  as.data.frame(unclass(x)[names(x)], stringsAsFactors = FALSE)
}

#' @rdname result-tidiers
#' @export
glance.dd_power_sim_n <- function(x, ...) {
  dd_check_broom_dots(list(...), "glance()", sys.function())
  data.frame(n_sizes = nrow(x), n_required = attr(x, "n_required") %||% NA_real_)
}
