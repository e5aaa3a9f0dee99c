# Methods of rd_density() results: print, summary, tidy, glance, plot (base
# graphics) and autoplot (ggplot2). The plots draw local polynomial density
# estimates over a grid on each side of the cutoff (the order-p fit with the
# test's bandwidth of that side, on that side's observations only, with
# pointwise intervals) over a histogram of the running variable.

#' Methods for rd_density results
#'
#' `print()` shows the settings, the density estimates left and right of the
#' cutoff, their difference and the test; `summary()` adds the bandwidth
#' selector's rows and the test under both variance estimators. `tidy()`
#' returns the rows `left`, `right` and `difference` (right minus left; its
#' statistic and p-value are the test's; the left and right rows have none),
#' `glance()` one row with the test, the bandwidths, the counts and the
#' settings.
#'
#' `plot()` and `autoplot()` draw a histogram of the running variable (bins
#' that do not straddle the cutoff, heights scaled as a density of the whole
#' sample) and, on each side, local polynomial estimates of the density over
#' a grid of `n_grid` points (order `p`, the side's bandwidth of the test,
#' that side's observations only, so that the estimate at the cutoff is a
#' boundary estimate) with pointwise intervals at `level` (jackknife
#' variance), and the test's estimates at the cutoff (order `q`) with their
#' intervals.
#' @param x,object An `rd_density` result.
#' @param digits Significant digits printed.
#' @param level Confidence level of the intervals drawn.
#' @param n_grid Number of grid points on each side.
#' @param range The range of the running variable drawn (default: the data
#'   within three bandwidths of the cutoff).
#' @param hist `TRUE` to draw the histogram.
#' @param main,xlab,ylab Titles.
#' @param ... `print()`, `summary()` and `autoplot()`: not used (an error if
#'   given); `plot()`: passed to [graphics::plot.default()]; `tidy()` and
#'   `glance()`: broom's contract (other arguments are not used).
#' @return `print()` and `plot()` return `x` invisibly; `summary()` an object
#'   that prints; `tidy()` and `glance()` data frames; `autoplot()` a
#'   `ggplot` object.
#' @examples
#' set.seed(2)
#' d <- data.frame(score = c(rnorm(500, -0.2), runif(120, 0, 0.5)))
#' fit <- rd_density(d, "score")
#' summary(fit)
#' tidy(fit)
#' glance(fit)
#' plot(fit)
#' if (requireNamespace("ggplot2", quietly = TRUE)) ggplot2::autoplot(fit)
#' @name rd_density-methods
NULL

# the header lines that print() and summary() share
dd_rdd_header <- function(x) {
  cat(sprintf("Manipulation test (Cattaneo, Jansson and Ma 2020): density of %s at c = %s\n", x$xname,
              format(x$c)))
  cat(sprintf("Observations: %s (left %s, right %s); within the bandwidths: left %s, right %s\n", dd_fmt_int(x$N),
              dd_fmt_int(x$N_l), dd_fmt_int(x$N_r), dd_fmt_int(x$N_h_l), dd_fmt_int(x$N_h_r)))
  cat(sprintf("Bandwidths: left %s, right %s (%s); p = %d, q = %d; %s kernel; %s fit; %s variance\n",
              format(x$h[["left"]], digits = 5), format(x$h[["right"]], digits = 5),
              if (x$h_source == "user") "given" else paste0("estimated, ", x$bwselect), x$p, x$q, x$kernel,
              x$fitselect, x$vce))
  if (x$repeated)
    cat(sprintf("Repeated values: %s\n", if (x$masspoints_used) "treated as mass points" else "not treated as mass points (masspoints = FALSE)"))
}

#' @rdname rd_density-methods
#' @export
print.rd_density <- function(x, digits = max(3L, getOption("digits") - 3L), ...) {
  dd_check_dots(list(...), "print()")
  dd_rdd_header(x)
  cat("\n")
  dd_print_table(tidy.rd_density(x), x$alpha, digits)
  cat(sprintf("Continuity test (right minus left = 0): T = %s, p-value = %s (%s)\n",
              format(x$statistic, digits = digits), format.pval(x$p.value, digits = digits), x$vce))
  invisible(x)
}

#' @rdname rd_density-methods
#' @export
summary.rd_density <- function(object, ...) {
  dd_check_dots(list(...), "summary()")
  structure(list(fit = object), class = "summary.rd_density")
}

#' @rdname rd_density-methods
#' @export
print.summary.rd_density <- function(x, digits = max(3L, getOption("digits") - 3L), ...) {
  dd_check_dots(list(...), "print()")
  f <- x$fit
  dd_rdd_header(f)
  cat(sprintf("Settings: masspoints = %s, regularize = %s, nlocalmin = %d, nuniquemin = %d; %g%% intervals\n",
              f$masspoints, f$regularize, f$nlocalmin, f$nuniquemin, 100 * (1 - f$alpha)))
  if (f$n_dropped) cat(sprintf("Rows dropped for a missing running variable: %s\n", dd_fmt_int(f$n_dropped)))
  cat("\n")
  dd_print_table(tidy.rd_density(f), f$alpha, digits)
  cat("\nThe test under both variance estimators (", f$vce, " reported above):\n", sep = "")
  e <- f$estimates
  tt <- data.frame(vce = f$test$vce, std.error = c(e$se_jackknife[3], e$se_plugin[3]), statistic = f$test$statistic,
                   p.value = f$test$p.value)
  print(tt, digits = digits, row.names = FALSE)
  if (!is.null(f$bandwidths)) {
    cat(sprintf("\nBandwidth selector (order p = %d; rows as rdbwdensity, then the comb rule):\n", f$p))
    print(f$bandwidths, digits = digits, row.names = FALSE)
  }
  invisible(x)
}

#' @rdname rd_density-methods
#' @export
tidy.rd_density <- function(x, ...) {
  dd_check_broom_dots(list(...), "tidy()", sys.function())
  e <- x$estimates
  z <- stats::qnorm(1 - x$alpha / 2)
  data.frame(term = e$term, estimate = e$estimate, std.error = e$std.error,
             statistic = c(NA, NA, x$statistic), p.value = c(NA, NA, x$p.value),
             conf.low = e$estimate - z * e$std.error, conf.high = e$estimate + z * e$std.error,
             stringsAsFactors = FALSE)
}

#' @rdname rd_density-methods
#' @export
glance.rd_density <- function(x, ...) {
  dd_check_broom_dots(list(...), "glance()", sys.function())
  t <- x$test
  data.frame(statistic = x$statistic, p.value = x$p.value, vce = x$vce, h_left = x$h[["left"]],
             h_right = x$h[["right"]], N = x$N, N_left = x$N_l, N_right = x$N_r, N_h_left = x$N_h_l,
             N_h_right = x$N_h_r, p = x$p, q = x$q, kernel = x$kernel, fitselect = x$fitselect,
             bwselect = x$bwselect, statistic_jackknife = t$statistic[1], p.value_jackknife = t$p.value[1],
             statistic_plugin = t$statistic[2], p.value_plugin = t$p.value[2], stringsAsFactors = FALSE)
}

# What the plots draw: `curve` (side, x, estimate, conf.low, conf.high),
# `hist` (side, left, right, density) and `cutoff` (the test's estimates
# at the cutoff with their intervals), in the running variable's units
dd_rdd_plot_data <- function(x, level, n_grid, range) {
  if (!is.numeric(level) || length(level) != 1L || is.na(level) || level <= 0 || level >= 1)
    dd_stop("`level` must be a number strictly between 0 and 1; got %s.", dd_show(level))
  n_grid <- dd_check_count(n_grid, "n_grid", min = 2)
  xs <- x$x; c0 <- x$c; N <- length(xs); h <- unname(x$h)
  if (is.null(range)) range <- c(max(xs[1L], c0 - 3 * h[1]), min(xs[N], c0 + 3 * h[2]))
  if (!is.numeric(range) || length(range) != 2L || anyNA(range) || range[1] >= c0 || range[2] <= c0)
    dd_stop("`range` must be two numbers on either side of the cutoff (%s); got %s.", format(c0), dd_show(range))
  cdf <- .Call(C_rd_density_cdf, xs, x$masspoints, c0)
  X <- xs - c0; Y <- cdf$Y; Nl <- x$N_l
  z <- stats::qnorm(1 - (1 - level) / 2)
  kc <- unname(dd_rd_kernels[x$kernel]); P <- x$p
  one <- function(t, side) {
    hh <- h[side]
    lo <- dd_rdd_below(X, t - hh); hi <- dd_rdd_below(X, t + hh, TRUE)
    if (side == 1L) hi <- min(hi, Nl) else lo <- max(lo, Nl)
    if (hi - lo < P + 2L) return(c(NA, NA))
    r <- .Call(C_rd_density_fit, X, Y, as.integer(c(lo, hi - lo)), c(hh, hh), t,
               c(P, kc, 2L, 1L, as.integer(x$masspoints_used)), as.double(N))
    Si <- tryCatch(solve(r$S, tol = 0), error = function(e) NULL)
    if (is.null(Si)) return(c(NA, NA))
    f <- sum(Si[2, ] * r$By) / hh
    v <- (Si %*% r$M %*% Si)[2, 2] / hh^2
    c(f, if (is.finite(v) && v >= 0) sqrt(v) else NA)
  }
  curve <- do.call(rbind, lapply(1:2, function(side) {
    g <- if (side == 1L) seq(range[1] - c0, 0, length.out = n_grid) else seq(0, range[2] - c0, length.out = n_grid)
    fs <- vapply(g, one, numeric(2), side = side)
    data.frame(side = c("left", "right")[side], x = g + c0, estimate = fs[1, ], conf.low = fs[1, ] - z * fs[2, ],
               conf.high = fs[1, ] + z * fs[2, ], stringsAsFactors = FALSE)
  }))
  hist <- do.call(rbind, lapply(1:2, function(side) {
    lim <- if (side == 1L) c(range[1], c0) else c(c0, range[2])
    inside <- if (side == 1L) xs >= lim[1] & xs < c0 else xs >= c0 & xs <= lim[2]
    nb <- max(5L, min(40L, ceiling(sqrt(sum(inside)) / 1.5)))
    br <- seq(lim[1], lim[2], length.out = nb + 1L)
    cnt <- tabulate(findInterval(xs[inside], br, rightmost.closed = TRUE, all.inside = TRUE), nb)
    data.frame(side = c("left", "right")[side], left = br[-(nb + 1L)], right = br[-1L],
               density = cnt / (N * diff(br)), stringsAsFactors = FALSE)
  }))
  e <- x$estimates
  cutoff <- data.frame(side = c("left", "right"), x = c0, estimate = e$estimate[1:2],
                       conf.low = e$estimate[1:2] - z * e$std.error[1:2],
                       conf.high = e$estimate[1:2] + z * e$std.error[1:2], stringsAsFactors = FALSE)
  list(curve = curve, hist = hist, cutoff = cutoff, range = range, level = level)
}

dd_rdd_colours <- c(left = "#1B6CA8", right = "#C0392B")

#' @rdname rd_density-methods
#' @export
plot.rd_density <- function(x, level = 1 - x$alpha, n_grid = 30, range = NULL, hist = TRUE, main = NULL,
                            xlab = NULL, ylab = "Density", ...) {
  hist <- dd_check_flag(hist, "hist")
  d <- dd_rdd_plot_data(x, level, n_grid, range)
  cu <- d$curve
  yl <- range(c(0, cu$conf.low, cu$conf.high, d$cutoff$conf.low, d$cutoff$conf.high, if (hist) d$hist$density),
              finite = TRUE)
  op <- graphics::par(mar = c(4.2, 4.2, 3, 1), las = 1)
  on.exit(graphics::par(op))
  graphics::plot.default(NA, xlim = d$range, ylim = yl, main = main %||% sprintf(
    "Density of %s around the cutoff (T = %.2f, p = %s)", x$xname, x$statistic,
    format.pval(x$p.value, digits = 2)),
    xlab = xlab %||% x$xname, ylab = ylab, ...)
  if (hist)
    graphics::rect(d$hist$left, 0, d$hist$right, d$hist$density, col = "grey88", border = "white")
  for (s in c("left", "right")) {
    k <- cu$side == s & is.finite(cu$conf.low) & is.finite(cu$conf.high)
    col <- dd_rdd_colours[[s]]
    if (any(k))
      graphics::polygon(c(cu$x[k], rev(cu$x[k])), c(cu$conf.low[k], rev(cu$conf.high[k])),
                        col = grDevices::adjustcolor(col, 0.25), border = NA)
    graphics::lines(cu$x[cu$side == s], cu$estimate[cu$side == s], col = col, lwd = 2)
  }
  ct <- d$cutoff
  graphics::abline(v = x$c, lty = 2, col = "grey40")
  graphics::segments(ct$x + c(-1, 1) * 0.005 * diff(d$range), ct$conf.low, ct$x + c(-1, 1) * 0.005 * diff(d$range),
                     ct$conf.high, col = dd_rdd_colours, lwd = 2)
  graphics::points(ct$x + c(-1, 1) * 0.005 * diff(d$range), ct$estimate, pch = 16, col = dd_rdd_colours)
  graphics::legend("topleft", bty = "n", cex = 0.8, lwd = c(2, 2, NA, if (hist) NA),
                   pch = c(NA, NA, 16, if (hist) 15), col = c(dd_rdd_colours, "grey30", if (hist) "grey80"),
                   legend = c(sprintf("left: order-%d estimate, %g%% band", x$p, 100 * d$level),
                              sprintf("right: order-%d estimate, %g%% band", x$p, 100 * d$level),
                              sprintf("test's estimates at the cutoff (order %d)", x$q), if (hist) "histogram"))
  invisible(x)
}

#' @rdname rd_density-methods
#' @exportS3Method ggplot2::autoplot
autoplot.rd_density <- function(object, level = 1 - object$alpha, n_grid = 30, range = NULL, hist = TRUE, ...) {
  dd_check_dots(list(...), "autoplot()")
  dd_need_ggplot()
  hist <- dd_check_flag(hist, "hist")
  gg <- asNamespace("ggplot2")
  d <- dd_rdd_plot_data(object, level, n_grid, range)
  cu <- d$curve
  p <- gg$ggplot()
  if (hist)
    p <- p + gg$geom_rect(data = d$hist, gg$aes(xmin = .data$left, xmax = .data$right, ymin = 0,
                                                ymax = .data$density), fill = "grey85", colour = "white")
  p + gg$geom_ribbon(data = cu[is.finite(cu$conf.low), ],
                     gg$aes(x = .data$x, ymin = .data$conf.low, ymax = .data$conf.high, fill = .data$side),
                     alpha = 0.25) +
    gg$geom_line(data = cu, gg$aes(x = .data$x, y = .data$estimate, colour = .data$side), linewidth = 0.9,
                 na.rm = TRUE) +
    gg$geom_vline(xintercept = object$c, linetype = 2, colour = "grey40") +
    gg$geom_pointrange(data = d$cutoff, gg$aes(x = .data$x, y = .data$estimate, ymin = .data$conf.low,
                                               ymax = .data$conf.high, colour = .data$side),
                       position = gg$position_dodge(width = 0.01 * diff(d$range)), size = 0.3) +
    gg$scale_colour_manual(values = dd_rdd_colours, name = NULL) +
    gg$scale_fill_manual(values = dd_rdd_colours, name = NULL) +
    gg$labs(x = object$xname, y = "Density",
            title = sprintf("Density of %s around the cutoff", object$xname),
            subtitle = sprintf("T = %.2f, p = %s (%s); curves: order %d, %g%% bands; points: the test's order-%d estimates",
                               object$statistic, format.pval(object$p.value, digits = 2), object$vce, object$p, 100 * d$level, object$q)) +
    gg$theme(legend.position = "bottom")
}
