# Methods of rd_plot() results: print, plot (base graphics), autoplot
# (ggplot2), tidy (the bins) and glance (one row of the bin counts).

#' Methods for regression-discontinuity plots
#'
#' `print()` describes an [rd_plot()] result (bins per side, the selection
#' method, `J_IMSE` and `J_MV`, the polynomial's order); `plot()` draws it
#' with base graphics and `autoplot()` with ggplot2: the bin means at the
#' bins' midpoints, the global polynomial on each side, a vertical line at
#' the cutoff and, when asked, the bins' confidence intervals as bars or
#' shaded bands. `tidy()` returns the bins table, `glance()` one row:
#' `J_left`, `J_right`, `binselect`, `p`, `N_left`, `N_right`.
#' @param x,object An [rd_plot()] result.
#' @param ci `TRUE` to draw the bins' confidence intervals (at the level in
#'   the result: `ci` of [rd_plot()], 95 when it was `NULL`); default: drawn
#'   when [rd_plot()] was given `ci`.
#' @param shade `TRUE` to draw the intervals as shaded bands instead of bars.
#' @param main,xlab,ylab Title and axis labels (default: "RD plot", the
#'   running variable's and the outcome's names).
#' @param col Colours of the bin means and of the polynomial.
#' @param digits Significant digits printed.
#' @param ... `plot()`: passed to [graphics::plot.default()]; `tidy()` and
#'   `glance()`: broom's contract (other arguments are not used); `print()`
#'   and `autoplot()`: not used (an error if given).
#' @return `print()` and `plot()` return `x` invisibly, `autoplot()` a
#'   `ggplot` object, `tidy()` and `glance()` data frames.
#' @examples
#' set.seed(2)
#' d <- data.frame(x = runif(1000, -1, 1))
#' d$y <- d$x + 0.5 * (d$x >= 0) + rnorm(1000, sd = 0.2)
#' rp <- rd_plot(d, "y", "x", ci = 90, plot = FALSE)
#' print(rp)
#' plot(rp, shade = TRUE)
#' glance(rp)
#' if (requireNamespace("ggplot2", quietly = TRUE)) ggplot2::autoplot(rp)
#' @name rd_plot-methods
NULL

#' @rdname rd_plot-methods
#' @export
print.rd_plot <- function(x, digits = max(3L, getOption("digits") - 3L), ...) {
  dd_check_dots(list(...), "print()")
  cat(sprintf("RD plot of %s on %s, cutoff %s\n", x$yname, x$xname, format(x$c, digits = digits)))
  cat(sprintf("Bins: %s (%s)%s\n", x$binselect, x$method,
              if (x$binselect != x$binselect_requested)
                sprintf("; %s was requested (mass points, masspoints = \"adjust\")", x$binselect_requested)
              else ""))
  if (!is.null(x$call$nbins)) cat("Numbers of bins set by `nbins`\n")
  tab <- data.frame(row.names = c("Observations", "Bins (J)", "J_IMSE", "J_MV", "Scale (J / J_IMSE)",
                                  "Average bin length"),
                    left = c(x$N[1], x$J[1], x$J_IMSE[1], x$J_MV[1], NA, NA),
                    right = c(x$N[2], x$J[2], x$J_IMSE[2], x$J_MV[2], NA, NA))
  len <- vapply(c("left", "right"), function(s) {
    b <- x$bins[x$bins$side == s, ]
    if (all(is.na(b$x_right))) NA_real_ else (max(b$x_right, na.rm = TRUE) - min(b$x_left, na.rm = TRUE)) / x$J[[s]]
  }, 0)
  out <- format(tab[1:4, ], digits = digits)
  out <- rbind(out, data.frame(row.names = rownames(tab)[5:6],
                               left = vapply(c(x$rscale[1], len[1]), format, "", digits = digits),
                               right = vapply(c(x$rscale[2], len[2]), format, "", digits = digits)))
  print(out, quote = FALSE)
  cat(sprintf("Global polynomial of order %d on each side, %s kernel, h = %s (left), %s (right)\n", x$p,
              x$kernel, format(x$h[1], digits = digits), format(x$h[2], digits = digits)))
  invisible(x)
}

#' @rdname rd_plot-methods
#' @export
plot.rd_plot <- function(x, ci = !is.null(x$ci), shade = x$shade, main = "RD plot", xlab = x$xname,
                         ylab = x$yname, col = c("#1B3F8B", "#C0392B"), ...) {
  dd_check_flag(ci, "ci"); dd_check_flag(shade, "shade")
  b <- x$bins
  bx <- ifelse(is.na(b$x_mid), b$x_mean, b$x_mid)
  ys <- c(b$y_mean, x$poly$fit, if (ci || shade) c(b$ci_low, b$ci_high))
  op <- graphics::par(mar = c(4.2, 4.2, 3, 1), las = 1)
  on.exit(graphics::par(op))
  graphics::plot.default(bx, b$y_mean, type = "n", xlim = range(c(bx, x$poly$x), finite = TRUE),
                         ylim = range(ys, finite = TRUE), main = main, xlab = xlab, ylab = ylab, ...)
  if (shade) {
    for (s in c("left", "right")) {
      i <- b$side == s
      graphics::polygon(c(bx[i], rev(bx[i])), c(b$ci_low[i], rev(b$ci_high[i])),
                        col = grDevices::adjustcolor(col[1], 0.2), border = NA)
    }
  } else if (ci) {
    graphics::segments(bx, b$ci_low, bx, b$ci_high, col = grDevices::adjustcolor(col[1], 0.6))
  }
  graphics::abline(v = x$c, col = "grey30")
  for (s in c("left", "right")) {
    i <- x$poly$side == s
    graphics::lines(x$poly$x[i], x$poly$fit[i], col = col[2], lwd = 2)
  }
  graphics::points(bx, b$y_mean, pch = 16, col = col[1], cex = 1)
  invisible(x)
}

#' @rdname rd_plot-methods
#' @exportS3Method ggplot2::autoplot
autoplot.rd_plot <- function(object, ci = !is.null(object$ci), shade = object$shade, main = "RD plot",
                             xlab = object$xname, ylab = object$yname, col = c("#1B3F8B", "#C0392B"), ...) {
  dd_check_dots(list(...), "autoplot()")
  dd_need_ggplot()
  dd_check_flag(ci, "ci"); dd_check_flag(shade, "shade")
  gg <- asNamespace("ggplot2")
  b <- object$bins
  b$x_plot <- ifelse(is.na(b$x_mid), b$x_mean, b$x_mid)
  p <- gg$ggplot() + gg$theme_bw()
  if (shade)
    p <- p + gg$geom_ribbon(data = b, gg$aes(x = .data$x_plot, ymin = .data$ci_low, ymax = .data$ci_high,
                                             group = .data$side), fill = col[1], alpha = 0.2)
  else if (ci)
    p <- p + gg$geom_errorbar(data = b, gg$aes(x = .data$x_plot, ymin = .data$ci_low, ymax = .data$ci_high),
                              colour = col[1], alpha = 0.6, width = 0)
  p + gg$geom_vline(xintercept = object$c, colour = "grey30") +
    gg$geom_line(data = object$poly, gg$aes(x = .data$x, y = .data$fit, group = .data$side), colour = col[2],
                 linewidth = 0.9) +
    gg$geom_point(data = b, gg$aes(x = .data$x_plot, y = .data$y_mean), colour = col[1], size = 1.6) +
    gg$labs(title = main, x = xlab, y = ylab,
            caption = sprintf("%s; J = %s (left), %s (right); polynomial of order %d", object$binselect,
                              format(object$J[1]), format(object$J[2]), object$p))
}

#' @rdname rd_plot-methods
#' @export
tidy.rd_plot <- function(x, ...) {
  dd_check_broom_dots(list(...), "tidy()", sys.function())
  x$bins
}

#' @rdname rd_plot-methods
#' @export
glance.rd_plot <- function(x, ...) {
  dd_check_broom_dots(list(...), "glance()", sys.function())
  data.frame(J_left = x$J[[1]], J_right = x$J[[2]], binselect = x$binselect, p = x$p, N_left = x$N[[1]],
             N_right = x$N[[2]], stringsAsFactors = FALSE)
}
