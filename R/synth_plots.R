# plot() and autoplot() of did_synth fits: treated and synthetic paths, the
# gap, the gap against the in-space placebos' gaps, the donor weights. Both
# draw the curves dd_synth_curves() returns.

# The curves of one plot type: a list with `lines` (x, y, curve, unit),
# the treatment line `vline`, the axis labels and the title. unit = NULL:
# the first treated unit (paths, placebos, weights) or, with several treated
# units, the average gap by event time (gaps).
dd_synth_curves <- function(x, type, unit, n_donors) {
  many <- length(x$fits) > 1L
  if (type == "gaps" && many && is.null(unit)) {
    g <- x$gaps
    a <- x$average_gaps
    lines <- rbind(data.frame(x = g$event, y = g$gap, curve = "unit", unit = g$unit, stringsAsFactors = FALSE),
                   data.frame(x = a$event, y = a$gap, curve = "average", unit = "average", stringsAsFactors = FALSE))
    return(list(lines = lines, vline = -0.5, xlab = "periods since treatment", ylab = paste("Gap in", x$yname),
                title = sprintf("Gap: treated minus synthetic (%d treated units and their average)", length(x$fits))))
  }
  k <- dd_synth_pick(x, unit)
  f <- x$fits[[k]]; u <- names(x$fits)[k]
  lab <- if (many) sprintf(" (unit %s)", u) else ""
  per <- x$periods
  vline <- (per[f$post[1] - 1L] + per[f$post[1]]) / 2
  if (type == "weights") {
    w <- x$weight_table[x$weight_table$unit == u & x$weight_table$weight > 0, , drop = FALSE]
    w <- utils::head(w[order(-w$weight), , drop = FALSE], dd_check_count(n_donors, "n_donors", min = 1))
    return(list(weights = w, title = paste0("Synthetic control donor weights", lab)))
  }
  if (type == "paths")
    return(list(lines = rbind(data.frame(x = per, y = f$y, curve = "treated", unit = u, stringsAsFactors = FALSE),
                              data.frame(x = per, y = f$synthetic, curve = "synthetic control", unit = u,
                                         stringsAsFactors = FALSE)),
                vline = vline, xlab = x$tname, ylab = x$yname, title = paste0("Treated unit and synthetic control", lab)))
  lines <- data.frame(x = per, y = f$gap, curve = "treated", unit = u, stringsAsFactors = FALSE)
  sub <- NULL
  if (type == "placebos") {
    if (is.null(x$placebos)) dd_stop("the fit has no placebos (placebo = FALSE); use type = \"gaps\".")
    tab <- x$placebos$table
    s <- which(tab$adopt == per[f$post[1]] & tab$pre_rmspe^2 <= x$placebo_mspe_cut * f$pre_rmspe^2)
    G <- x$placebos$gaps[s, , drop = FALSE]
    pl <- data.frame(x = rep(per, each = length(s)), y = as.vector(G), curve = "placebo",
                     unit = rep(as.character(tab$unit[s]), length(per)), stringsAsFactors = FALSE)
    lines <- rbind(pl, lines)
    sub <- sprintf("%d placebos%s", length(s), if (is.finite(x$placebo_mspe_cut))
      sprintf(" (pre-treatment MSPE at most %g times the treated unit's)", x$placebo_mspe_cut) else "")
  }
  list(lines = lines, vline = vline, xlab = x$tname, ylab = paste("Gap in", x$yname), sub = sub,
       title = paste0(if (type == "placebos") "Gap of the treated unit and of the in-space placebos"
                      else "Gap: treated minus synthetic control", lab))
}

#' @rdname did_synth
#' @param type The plot: `"paths"` (treated and synthetic outcome paths,
#'   default), `"gaps"` (their difference; with several treated units and
#'   `unit = NULL`, every unit's gap by time since treatment and their
#'   average), `"placebos"` (the treated unit's gap against the placebos'
#'   gaps) or `"weights"` (the largest donor weights).
#' @param unit The treated unit to plot (its identifier; default the first).
#' @param n_donors The number of donor weights drawn by `type = "weights"`.
#' @param legend Draw the legend (default `TRUE`).
#' @method plot did_synth
#' @export
plot.did_synth <- function(x, type = c("paths", "gaps", "placebos", "weights"), unit = NULL, n_donors = 15,
                           legend = TRUE, ...) {
  type <- dd_match_arg(type[1], c("paths", "gaps", "placebos", "weights"), "type")
  legend <- dd_check_flag(legend, "legend")
  cv <- dd_synth_curves(x, type, unit, n_donors)
  if (type == "weights") {
    w <- cv$weights
    op <- graphics::par(mar = c(4, 8, 2, 1)); on.exit(graphics::par(op))
    graphics::barplot(rev(w$weight), names.arg = rev(w$donor), horiz = TRUE, las = 1, col = "grey40", border = NA,
                      xlim = c(0, 1.05 * max(w$weight)), xlab = "donor weight (W)", main = cv$title, ...)
    return(invisible(w))
  }
  L <- cv$lines
  op <- graphics::par(las = 1); on.exit(graphics::par(op))
  graphics::plot(L$x, L$y, type = "n", xlab = cv$xlab, ylab = cv$ylab, main = cv$title, sub = cv$sub, ...)
  if (type != "paths") graphics::abline(h = 0, col = "grey60", lty = 3)
  graphics::abline(v = cv$vline, col = "grey60", lty = 2)
  style <- list(treated = list(col = "black", lwd = 2, lty = 1), `synthetic control` = list(col = "#C0392B", lwd = 2, lty = 2),
                placebo = list(col = "grey75", lwd = 1, lty = 1), unit = list(col = "grey60", lwd = 1, lty = 1),
                average = list(col = "black", lwd = 2.5, lty = 1))
  for (cu in intersect(c("placebo", "unit", "treated", "synthetic control", "average"), unique(L$curve)))
    for (u in unique(L$unit[L$curve == cu])) {
      s <- L$curve == cu & L$unit == u
      graphics::lines(L$x[s], L$y[s], col = style[[cu]]$col, lwd = style[[cu]]$lwd, lty = style[[cu]]$lty)
    }
  if (legend) {
    cur <- intersect(c("treated", "synthetic control", "placebo", "unit", "average"), unique(L$curve))
    labs <- c(treated = if (type == "paths") "treated" else "treated unit", `synthetic control` = "synthetic control",
              placebo = "placebos", unit = "treated units", average = "average")[cur]
    graphics::legend("topleft", labs, col = vapply(style[cur], `[[`, "", "col"),
                     lwd = vapply(style[cur], `[[`, 0, "lwd"), lty = vapply(style[cur], `[[`, 0, "lty"), bty = "n")
  }
  invisible(L)
}

#' @rdname did_synth
#' @exportS3Method ggplot2::autoplot
autoplot.did_synth <- function(object, type = c("paths", "gaps", "placebos", "weights"), unit = NULL, n_donors = 15,
                               ...) {
  dd_check_dots(list(...), "autoplot()")
  dd_need_ggplot()
  gg <- asNamespace("ggplot2")
  type <- dd_match_arg(type[1], c("paths", "gaps", "placebos", "weights"), "type")
  cv <- dd_synth_curves(object, type, unit, n_donors)
  if (type == "weights") {
    w <- cv$weights
    w$donor <- factor(w$donor, levels = rev(w$donor))
    return(gg$ggplot(w, gg$aes(x = .data$weight, y = .data$donor)) + gg$geom_col(fill = "grey40") +
             gg$labs(x = "donor weight (W)", y = NULL, title = cv$title))
  }
  L <- cv$lines
  lev <- intersect(c("placebo", "unit", "treated", "synthetic control", "average"), unique(L$curve))
  L$curve <- factor(L$curve, levels = lev)
  L$group <- paste(L$curve, L$unit)
  cols <- c(placebo = "grey75", unit = "grey60", treated = "black", `synthetic control` = "#C0392B", average = "black")
  lwd <- c(placebo = 0.4, unit = 0.4, treated = 0.9, `synthetic control` = 0.9, average = 1.2)
  lty <- c(placebo = 1, unit = 1, treated = 1, `synthetic control` = 2, average = 1)
  p <- gg$ggplot(L, gg$aes(x = .data$x, y = .data$y, group = .data$group, colour = .data$curve,
                           linewidth = .data$curve, linetype = .data$curve))
  if (type != "paths") p <- p + gg$geom_hline(yintercept = 0, colour = "grey60", linetype = 3)
  p + gg$geom_vline(xintercept = cv$vline, colour = "grey60", linetype = 2) +
    gg$geom_line() +
    gg$scale_colour_manual(values = cols[lev], name = NULL) +
    gg$scale_linewidth_manual(values = lwd[lev], name = NULL) +
    gg$scale_linetype_manual(values = lty[lev], name = NULL) +
    gg$labs(x = cv$xlab, y = cv$ylab, title = cv$title, caption = cv$sub) +
    gg$theme(legend.position = "bottom")
}
