#' Plot a diffdiff fit
#'
#' For event studies (fits with an event-study component, `x$event_study`) draws the
#' estimates against relative time with pointwise confidence intervals (and
#' uniform bands when the fit has them), the reference period(s) at zero as
#' open circles, and pre-treatment periods in a different colour from
#' post-treatment ones. For other fits draws the main coefficients with their
#' intervals. Base graphics; readable at the default device size.
#'
#' @param x A `dd_fit`.
#' @param level Confidence level of the intervals (default `1 - alpha` of the
#'   fit).
#' @param main,xlab,ylab Titles.
#' @param col Colours for pre- and post-treatment periods.
#' @param legend Draw the legend (default `TRUE`).
#' @param legend_pos Where: `"auto"` (default: the corner with the fewest
#'   estimates and intervals in it) or a keyword of [graphics::legend()]
#'   (`"topleft"`, `"bottomright"`, ...).
#' @param ... Passed to [graphics::plot.default()].
#' @return `x`, invisibly.
#' @examples
#' d <- read.csv(system.file("extdata", "sim_panel.csv", package = "diffdiff"))
#' es <- did_event(d, yname = "y", idname = "id", tname = "year", gname = "first_treat")
#' plot(es)
#' @export
plot.dd_fit <- function(x, level = 1 - x$alpha, main = NULL, xlab = NULL, ylab = NULL,
                        col = c("#1B6CA8", "#C0392B"), legend = TRUE, legend_pos = "auto", ...) {
  legend <- dd_check_flag(legend, "legend")
  tab <- x$coeftable
  ci <- confint(x, level = level)
  tab$lo <- ci[, 1]; tab$hi <- ci[, 2]
  op <- graphics::par(mar = c(4.2, 4.2, 3, 1), las = 1)
  on.exit(graphics::par(op))
  es <- x$event_study
  if (!is.null(es)) {
    tab <- tab[match(es$term, tab$term), , drop = FALSE]
    tab$event <- es$event
    ref <- es$reference
    ev <- c(tab$event, ref)
    est <- c(tab$estimate, rep(0, length(ref)))
    lo <- c(tab$lo, rep(0, length(ref))); hi <- c(tab$hi, rep(0, length(ref)))
    band <- !is.null(tab$cband.low)
    yl <- range(c(lo, hi, 0, if (band) c(tab$cband.low, tab$cband.high)), finite = TRUE)
    graphics::plot.default(ev, est, type = "n", ylim = yl,
                           main = main %||% paste("Event study:", x$yname),
                           xlab = xlab %||% dd_es_xlab(x),
                           ylab = ylab %||% paste("Effect on", x$yname), xaxt = "n", ...)
    graphics::axis(1, at = sort(unique(ev)))
    graphics::abline(h = 0, col = "grey50")
    graphics::abline(v = -0.5, lty = 2, col = "grey50")
    cc <- ifelse(ev < 0, col[1], col[2])
    if (band) graphics::segments(tab$event, tab$cband.low, tab$event, tab$cband.high,
                                 col = grDevices::adjustcolor(cc[seq_len(nrow(tab))], 0.35), lwd = 6, lend = 1)
    graphics::segments(ev, lo, ev, hi, col = cc, lwd = 2)
    isref <- seq_along(ev) > nrow(tab)
    graphics::points(ev, est, pch = ifelse(isref, 1, ifelse(ev < 0, 15, 16)), col = cc, cex = 1.2)
    # (only the kinds of periods the plot has)
    has <- c(any(tab$event < 0), any(tab$event >= 0))
    leg <- c("pre-treatment", "post-treatment")[has]; pch <- c(15, 16)[has]; lc <- col[has]; lw <- c(NA, NA)[has]
    if (length(ref)) { leg <- c(leg, "reference (0)"); pch <- c(pch, 1); lc <- c(lc, "grey30"); lw <- c(lw, NA) }
    if (band) { leg <- c(leg, "uniform band"); pch <- c(pch, NA); lc <- c(lc, grDevices::adjustcolor("grey30", 0.35)); lw <- c(lw, 6) }
    if (legend)
      graphics::legend(dd_legend_pos(legend_pos, c(ev, ev, ev), c(est, lo, hi), range(ev), yl), bty = "n",
                       pch = pch, col = lc, lwd = lw, legend = leg, cex = 0.85)
  } else {
    tab <- tab[tab$term %in% x$main_terms, , drop = FALSE]
    k <- nrow(tab)
    # room for the term labels on the left; a long title shrinks to fit
    lw <- max(graphics::strwidth(tab$term, units = "inches")) / graphics::par("csi")
    graphics::par(mar = c(4.2, max(4.2, lw + 1.5), 3, 1))
    ttl <- main %||% paste(x$title)
    tw <- graphics::strwidth(ttl, units = "inches", cex = 1.2, font = 2)
    cm <- min(1.2, 1.2 * 0.98 * graphics::par("pin")[1] / tw)
    graphics::plot.default(tab$estimate, seq_len(k), type = "n", yaxt = "n",
                           xlim = range(c(tab$lo, tab$hi, 0), finite = TRUE), ylim = c(0.5, k + 0.5),
                           main = ttl, cex.main = cm, xlab = xlab %||% "Estimate",
                           ylab = ylab %||% "", ...)
    graphics::axis(2, at = seq_len(k), labels = tab$term)
    graphics::abline(v = 0, col = "grey50", lty = 2)
    graphics::segments(tab$lo, seq_len(k), tab$hi, seq_len(k), col = col[2], lwd = 2)
    graphics::points(tab$estimate, seq_len(k), pch = 16, col = col[2], cex = 1.2)
  }
  invisible(x)
}

#' Group-time plot of a Callaway-Sant'Anna fit
#'
#' One panel per treated cohort: ATT(g,t) against the period with pointwise
#' intervals, the uniform band when the fit has one (lighter, wider bars),
#' pre-treatment periods (t < g) in the first colour and post-treatment ones
#' in the second, and a dashed line before the cohort's first treated period.
#' For an event study, plot `aggregate(fit, type = "dynamic")`.
#' `type = "heatmap"`: one tile per ATT(g,t), cohorts down and periods
#' across, coloured by the estimate on a scale symmetric about zero, the
#' estimate printed in it (with `*` when its interval excludes zero), and a
#' bar at each cohort's first treated period. The fits on did_cs's cells
#' ([did_dml()], [did_bc()]) are drawn the same way.
#'
#' @param x A `did_cs` fit (or a `did_dml` or `did_bc` fit).
#' @param level Confidence level of the pointwise intervals.
#' @param col Colours for pre- and post-treatment periods.
#' @param type `"cohorts"` (default: one panel per cohort) or `"heatmap"`.
#' @param ... Passed to [graphics::plot.default()].
#' @return `x`, invisibly.
#' @examples
#' d <- read.csv(system.file("extdata", "sim_panel.csv", package = "diffdiff"))
#' cs <- did_cs(d, yname = "y", tname = "year", idname = "id", gname = "first_treat",
#'              nboot = 0)
#' plot(cs)
#' @export
plot.did_cs <- function(x, level = 1 - x$alpha, col = c("#1B6CA8", "#C0392B"), type = c("cohorts", "heatmap"), ...) {
  type <- dd_match_arg(type[1], c("cohorts", "heatmap"), "type")
  if (type == "heatmap") return(dd_plot_heatmap(x, level, ...))
  tab <- x$coeftable
  z <- stats::qnorm(1 - (1 - level) / 2)
  tab$lo <- tab$estimate - z * tab$std.error; tab$hi <- tab$estimate + z * tab$std.error
  groups <- unique(tab$group)
  k <- length(groups)
  nc <- if (k <= 3) 1L else 2L
  op <- graphics::par(mfrow = c(ceiling(k / nc), nc), mar = c(3.2, 4, 2.2, 1), las = 1, oma = c(1.5, 0, 1.5, 0))
  on.exit(graphics::par(op))
  band <- !is.null(tab$cband.low)
  yl <- range(c(tab$lo, tab$hi, 0, if (band) c(tab$cband.low, tab$cband.high)), finite = TRUE)
  # the reference cells (universal base period) as open circles at 0, as in
  # the event-study plots
  tab$ref <- dd_cs_is_ref(x, tab)
  for (g in groups) {
    s <- tab[tab$group == g, , drop = FALSE]
    cc <- ifelse(s$time < g, col[1], col[2])
    graphics::plot.default(s$time, s$estimate, type = "n", ylim = yl, xlab = "", ylab = "ATT(g,t)",
                           main = paste("Cohort", g), xaxt = "n", ...)
    graphics::axis(1, at = s$time)
    graphics::abline(h = 0, col = "grey50")
    graphics::abline(v = g - 0.5, lty = 2, col = "grey50")
    ok <- !s$ref & !is.na(s$lo)
    if (band) graphics::segments(s$time[ok], s$cband.low[ok], s$time[ok], s$cband.high[ok],
                                 col = grDevices::adjustcolor(cc[ok], 0.35), lwd = 6, lend = 1)
    graphics::segments(s$time[ok], s$lo[ok], s$time[ok], s$hi[ok], col = cc[ok], lwd = 2)
    graphics::points(s$time, s$estimate, pch = ifelse(s$ref, 1, ifelse(s$time < g, 15, 16)), col = cc,
                     cex = ifelse(s$ref, 1.2, 1))
  }
  graphics::mtext(paste("Group-time average treatment effects:", x$yname), outer = TRUE, font = 2)
  graphics::mtext(x$tname %||% "Period", side = 1, outer = TRUE, line = 0.3)
  invisible(x)
}

#' @rdname plot.did_cs
#' @export
plot.did_dml <- function(x, ...) plot.did_cs(x, ...)

#' @rdname plot.did_cs
#' @export
plot.did_bc <- function(x, ...) plot.did_cs(x, ...)

#' Several event studies in one plot
#'
#' Draws the event-time estimates and pointwise confidence intervals of
#' several fits side by side (slightly offset horizontally), for example the
#' Callaway-Sant'Anna, Sun-Abraham, imputation, two-stage and stacked
#' estimates of the same effect. Reference periods (fixed at zero by a fit)
#' are drawn as open circles.
#'
#' @param fits A named list of event-study fits: any `dd_fit` whose table has
#'   an `event` column (`did_event`, `did_sa`, `did_bjs`, `did_gardner`,
#'   `did_stacked`, `aggregate(did_cs, type = "dynamic")`).
#' @param level Confidence level of the intervals.
#' @param col Colours, one per fit.
#' @param main,xlab,ylab Titles.
#' @param legend Draw the legend (default `TRUE`).
#' @param legend_pos Where: `"auto"` (default: the corner with the fewest
#'   estimates and intervals) or a keyword of [graphics::legend()].
#' @param ... Passed to [graphics::plot.default()].
#' @return A data frame of what was drawn (estimator, event, estimate,
#'   conf.low, conf.high), invisibly.
#' @examples
#' d <- read.csv(system.file("extdata", "sim_panel.csv", package = "diffdiff"))
#' fits <- list(
#'   "Sun-Abraham" = did_sa(d, "y", "id", "year", "first_treat"),
#'   "Imputation (BJS)" = did_bjs(d, "y", "id", "year", "first_treat"),
#'   "Stacked" = did_stacked(d, "y", "id", "year", "first_treat", kappa_pre = 3, kappa_post = 2))
#' plot_event_studies(fits)
#' @export
plot_event_studies <- function(fits, level = 0.95, col = NULL, main = "Event studies", xlab = NULL,
                               ylab = "Estimate", legend = TRUE, legend_pos = "auto", ...) {
  legend <- dd_check_flag(legend, "legend")
  if (!is.list(fits) || inherits(fits, "dd_fit") || !length(fits))
    dd_stop("`fits` must be a non-empty named list of event-study fits; got %s.", class(fits)[1])
  nm <- names(fits)
  if (is.null(nm) || any(!nzchar(nm))) dd_stop("`fits` must be a named list (the names label the legend).")
  for (k in seq_along(fits)) {
    f <- fits[[k]]
    if (!inherits(f, "dd_fit") || is.null(f$event_study))
      dd_stop("`fits` element \"%s\" is not an event-study fit (a dd_fit with an event-study component).", nm[k])
  }
  if (is.null(col)) col <- c("#1B6CA8", "#C0392B", "#2E8B57", "#8E44AD", "#D68910", "#17A589", "#566573", "#D81B60", "#6E2C00")
  col <- rep_len(col, length(fits))
  rows <- lapply(seq_along(fits), function(k) {
    f <- fits[[k]]
    es <- f$event_study
    ci <- confint(f, parm = es$term, level = level)
    out <- data.frame(estimator = nm[k], event = es$event, estimate = es$estimate,
                      conf.low = ci[, 1], conf.high = ci[, 2], ref = FALSE, stringsAsFactors = FALSE)
    ref <- es$reference
    if (length(ref)) out <- rbind(out, data.frame(estimator = nm[k], event = ref, estimate = 0, conf.low = 0,
                                                  conf.high = 0, ref = TRUE, stringsAsFactors = FALSE))
    out[order(out$event), ]
  })
  all <- do.call(rbind, rows)
  width <- 0.6
  off <- if (length(fits) > 1) seq(-width / 2, width / 2, length.out = length(fits)) else 0
  op <- graphics::par(mar = c(4.2, 4.2, 3, 1), las = 1)
  on.exit(graphics::par(op))
  graphics::plot.default(all$event, all$estimate, type = "n",
                         xlim = range(all$event) + c(-0.5, 0.5),
                         ylim = range(c(all$conf.low, all$conf.high, 0), finite = TRUE),
                         main = main, xlab = xlab %||% "Periods relative to treatment", ylab = ylab, xaxt = "n", ...)
  graphics::axis(1, at = sort(unique(all$event)))
  graphics::abline(h = 0, col = "grey50")
  graphics::abline(v = -0.5, lty = 2, col = "grey50")
  for (k in seq_along(rows)) {
    r <- rows[[k]]
    x <- r$event + off[k]
    graphics::segments(x, r$conf.low, x, r$conf.high, col = col[k], lwd = 1.6)
    graphics::points(x, r$estimate, pch = ifelse(r$ref, 1, 16), col = col[k], cex = 0.9)
  }
  if (legend)
    graphics::legend(dd_legend_pos(legend_pos, rep(all$event, 3), c(all$estimate, all$conf.low, all$conf.high),
                                   range(all$event) + c(-0.5, 0.5), range(c(all$conf.low, all$conf.high, 0), finite = TRUE)),
                     legend = nm, col = col, pch = 16, lwd = 1.6, bty = "n", cex = 0.85)
  rownames(all) <- NULL
  invisible(all[, c("estimator", "event", "estimate", "conf.low", "conf.high")])
}

# The legend's corner: `pos` as given, or ("auto") the corner of the plot
# region with the fewest of the points (x, y) in its quarter (ties: top left,
# top right, bottom left, bottom right).
dd_legend_pos <- function(pos, x, y, xlim, ylim) {
  corners <- c("topleft", "topright", "bottomleft", "bottomright")
  if (!is.character(pos) || length(pos) != 1L || !(pos %in% c("auto", corners, "top", "bottom", "left", "right",
                                                                "center")))
    dd_stop("`legend_pos` must be \"auto\" or a legend() keyword such as \"topleft\"; got %s.", dd_show(pos))
  if (pos != "auto") return(pos)
  ok <- is.finite(x) & is.finite(y)
  fx <- (x[ok] - xlim[1]) / max(diff(xlim), 1e-12); fy <- (y[ok] - ylim[1]) / max(diff(ylim), 1e-12)
  n <- c(sum(fx < 0.4 & fy > 0.6), sum(fx > 0.6 & fy > 0.6), sum(fx < 0.4 & fy < 0.4), sum(fx > 0.6 & fy < 0.4))
  corners[which.min(n)]
}

# the event-study x axis: periods relative to treatment, or to the first
# switch for reversible treatments (did_dcdh: event 0 is the switch period)
dd_es_xlab <- function(x)
  if (inherits(x, "did_dcdh")) "Periods relative to the first switch" else "Periods relative to treatment"

#' Plot the weights of the TWFE coefficient
#'
#' The weight of each treated cell (group x period) in the two-way
#' fixed-effects coefficient, against the period: positive weights in blue,
#' negative in red (de Chaisemartin and D'Haultfoeuille, 2020). Cells with
#' weight zero (untreated) are not drawn.
#' @param x A [twfe_weights()] result.
#' @param main,xlab,ylab Title and axis labels.
#' @param col Colours of positive and negative weights.
#' @param ... Passed to [graphics::plot()].
#' @return `x`, invisibly.
#' @examples
#' d <- read.csv(system.file("extdata", "sim_panel.csv", package = "diffdiff"))
#' plot(twfe_weights(d, "y", "id", "year", "treat"))
#' @export
plot.twfe_weights <- function(x, main = NULL, xlab = NULL, ylab = "Weight in the TWFE coefficient",
                              col = c("#1B6CA8", "#C0392B"), ...) {
  w <- x$weights[x$weights$weight != 0, , drop = FALSE]
  per <- w[[2]]
  xv <- if (is.numeric(per)) per else as.integer(factor(per))
  if (is.null(main)) main <- sprintf("TWFE weights: %d positive, %d negative (the negative ones sum to %.3g)", x$n_pos, x$n_neg, x$sum_neg)
  graphics::plot(xv, w$weight, pch = 16, col = ifelse(w$weight < 0, col[2], col[1]),
                 xlab = if (is.null(xlab)) x$names[2] else xlab, ylab = ylab, main = main,
                 xaxt = if (is.numeric(per)) "s" else "n", ...)
  if (!is.numeric(per)) graphics::axis(1, at = seq_along(levels(factor(per))), labels = levels(factor(per)))
  graphics::abline(h = 0, lty = 2, col = "grey40")
  invisible(x)
}
