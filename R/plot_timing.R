#' Treatment timing of a panel: cohorts and the staircase plot
#'
#' Who is treated when: each unit's first treated period (from `gname`, or
#' from a 0/1 treatment `dname`, as the estimators read it), the cohorts'
#' sizes, and a "staircase" plot of treatment status over the periods --
#' one band per cohort, its height the cohort's number of units (`units =
#' TRUE`: one row per unit, which also shows a treatment that switches off
#' again).
#'
#' @param data A data frame (or tibble, data.table) in long format.
#' @param idname,tname The unit and period columns.
#' @param gname The first treated period (0, NA or Inf: never treated), or
#' @param dname a 0/1 treatment column (one of the two).
#' @return An object of class `dd_timing`: `cohorts` (first treated period,
#'   `Inf` for never treated; units; share), `units` (each unit's first
#'   treated period), `periods`, `status` (units x periods treatment status,
#'   sorted by cohort; `NA` where a unit is not observed), `reversible` (the
#'   number of units whose `dname` switches off again). Methods print, plot
#'   (base graphics) and autoplot.
#' @examples
#' d <- read.csv(system.file("extdata", "sim_panel.csv", package = "diffdiff"))
#' tm <- dd_timing(d, "id", "year", gname = "first_treat")
#' tm
#' plot(tm)
#' @export
dd_timing <- function(data, idname, tname, gname = NULL, dname = NULL) {
  dd_check_data(data)
  dd_check_string(idname, "idname"); dd_check_cols(data, idname, "idname")
  dd_check_string(tname, "tname"); dd_check_cols(data, tname, "tname")
  if (is.null(gname) == is.null(dname)) dd_stop("give exactly one of `gname` (first treated period) and `dname` (0/1 treatment).")
  tt <- dd_check_numeric_col(data[[tname]], "tname", tname, convert = FALSE)
  if (anyNA(tt)) dd_stop("`tname` = \"%s\" has missing values (first in row %d).", tname, which(is.na(tt))[1])
  id <- data[[idname]]
  if (anyNA(id)) dd_stop("`idname` = \"%s\" has missing values (first in row %d).", idname, which(is.na(id))[1])
  idc <- dd_codes(id)
  n <- attr(idc, "nlev")
  per <- sort(unique(tt))
  first_rows <- dd_first_rows(idc)
  if (!is.null(gname)) {
    dd_check_string(gname, "gname"); dd_check_cols(data, gname, "gname")
    g <- dd_check_numeric_col(data[[gname]], "gname", gname)
    dd_check_constant_within(g, idc, "gname", gname, code = idc)
    gu <- g[first_rows]
    first <- ifelse(is.na(gu) | gu == 0 | !is.finite(gu), Inf, gu)
    rev_n <- 0L
    on <- tt >= first[idc + 1L]
  } else {
    dd_check_string(dname, "dname"); dd_check_cols(data, dname, "dname")
    d <- dd_check_numeric_col(data[[dname]], "dname", dname)
    nb <- .Call(C_first_not01, d)
    if (nb > 0) dd_stop("`dname` = \"%s\" must be 0/1; row %d has %s.", dname, nb, format(d[nb]))
    ft <- dd_first_treated(d, idc, tt, n)
    first <- ft$first
    rev_n <- ft$n_off
    on <- !is.na(d) & d != 0
  }
  # units sorted by cohort (never treated last), then by identifier
  o <- order(first, id[first_rows])
  status <- matrix(NA, n, length(per))
  status[cbind(match(idc + 1L, o), match(tt, per))] <- on
  tab <- table(factor(first, levels = sort(unique(first))))
  cohorts <- data.frame(first_treated = as.numeric(names(tab)), units = as.integer(tab),
                        share = as.integer(tab) / n)
  structure(list(cohorts = cohorts, units = data.frame(id = id[first_rows][o], first_treated = first[o]),
                 periods = per, status = status, reversible = rev_n, idname = idname, tname = tname,
                 treatment = if (!is.null(gname)) gname else dname), class = "dd_timing")
}

#' @export
print.dd_timing <- function(x, ...) {
  dd_check_dots(list(...), "print()")
  cat(sprintf("Treatment timing (%s): %d units, %d periods (%s to %s)\n", x$treatment, nrow(x$units),
              length(x$periods), format(min(x$periods)), format(max(x$periods))))
  co <- x$cohorts
  lab <- ifelse(is.finite(co$first_treated), format(co$first_treated), "never treated")
  print(data.frame(cohort = lab, units = co$units, share = sprintf("%.1f%%", 100 * co$share)), row.names = FALSE)
  if (x$reversible > 0L) cat(sprintf("%d unit(s) are untreated again after their first treated period.\n", x$reversible))
  invisible(x)
}

# the staircase's rectangles: one per cohort (or unit) and run of periods
# with the same status; rows from the top (first cohort) down
dd_timing_rects <- function(x, units) {
  S <- x$status
  per <- x$periods
  if (units) { grp <- seq_len(nrow(S)); h <- rep(1, nrow(S)) }
  else {
    grp <- match(x$units$first_treated, x$cohorts$first_treated)
    h <- x$cohorts$units
    S <- do.call(rbind, lapply(seq_along(h), function(k) {
      s <- S[grp == k, , drop = FALSE]
      # a cohort's status per period: treated if its units are (absorbing), NA if none observed
      apply(s, 2, function(v) if (all(is.na(v))) NA else any(v, na.rm = TRUE))
    }))
    grp <- seq_along(h)
  }
  top <- sum(h) - c(0, cumsum(h)[-length(h)])
  dx <- if (length(per) > 1L) min(diff(per)) / 2 else 0.5
  out <- do.call(rbind, lapply(seq_len(nrow(S)), function(r)
    data.frame(row = r, xmin = per - dx, xmax = per + dx, ymin = top[r] - h[r], ymax = top[r],
               status = ifelse(is.na(S[r, ]), "not observed", ifelse(S[r, ], "treated", "untreated")))))
  list(rects = out, top = top, h = h)
}

dd_timing_cols <- c(untreated = "#D6E4F0", treated = "#C0392B", "not observed" = "white")

#' @rdname dd_timing
#' @param x,object A `dd_timing` object.
#' @param units `TRUE`: one row per unit; `FALSE`: one band per cohort;
#'   `NULL` (default): units when there are at most 60.
#' @param main Title.
#' @param ... Passed to [graphics::plot.default()] (plot) or not used.
#' @export
plot.dd_timing <- function(x, units = NULL, main = NULL, ...) {
  units <- if (is.null(units)) nrow(x$units) <= 60L else dd_check_flag(units, "units")
  r <- dd_timing_rects(x, units)
  op <- graphics::par(mar = c(4.2, if (units) 4.2 else 7.5, 3, 1), las = 1)
  on.exit(graphics::par(op))
  graphics::plot.default(range(c(r$rects$xmin, r$rects$xmax)), c(0, sum(r$h)), type = "n", xaxs = "i", yaxs = "i",
                         xlab = x$tname, ylab = if (units) "Units (by cohort)" else "", yaxt = "n", xaxt = "n",
                         main = main %||% sprintf("Treatment timing: %s", x$treatment), ...)
  graphics::axis(1, at = x$periods)
  graphics::rect(r$rects$xmin, r$rects$ymin, r$rects$xmax, r$rects$ymax, col = dd_timing_cols[r$rects$status],
                 border = if (units) NA else "white")
  if (!units) {
    co <- x$cohorts
    lab <- sprintf("%s (%d)", ifelse(is.finite(co$first_treated), format(co$first_treated), "never"), co$units)
    graphics::axis(2, at = r$top - r$h / 2, labels = lab, tick = FALSE, cex.axis = 0.85)
  }
  graphics::legend("bottomright", legend = c("untreated", "treated"), fill = dd_timing_cols[1:2], bty = "o",
                   bg = "white", cex = 0.85, inset = 0.01)
  invisible(x)
}

#' @rdname dd_timing
#' @exportS3Method ggplot2::autoplot
autoplot.dd_timing <- function(object, units = NULL, ...) {
  dd_check_dots(list(...), "autoplot()")
  dd_need_ggplot()
  gg <- asNamespace("ggplot2")
  units <- if (is.null(units)) nrow(object$units) <= 60L else dd_check_flag(units, "units")
  r <- dd_timing_rects(object, units)
  co <- object$cohorts
  lab <- sprintf("%s (%d)", ifelse(is.finite(co$first_treated), format(co$first_treated), "never"), co$units)
  p <- gg$ggplot(r$rects) +
    gg$geom_rect(gg$aes(xmin = .data$xmin, xmax = .data$xmax, ymin = .data$ymin, ymax = .data$ymax,
                        fill = .data$status), colour = if (units) NA else "white") +
    gg$scale_fill_manual(values = dd_timing_cols, name = NULL) +
    gg$scale_x_continuous(breaks = object$periods, expand = c(0, 0)) +
    gg$labs(x = object$tname, y = if (units) "Units (by cohort)" else NULL,
            title = sprintf("Treatment timing: %s", object$treatment)) +
    gg$theme(legend.position = "bottom")
  if (units) p + gg$scale_y_continuous(breaks = NULL, expand = c(0, 0))
  else p + gg$scale_y_continuous(breaks = r$top - r$h / 2, labels = lab, expand = c(0, 0))
}

# The group-time heatmap of ATT(g,t) (plot(type = "heatmap") of did_cs and
# the fits on its cells): cohorts down, periods across, colour the estimate
# on a scale symmetric about zero, the estimate printed in each cell with
# "*" when its interval excludes zero; cells without an estimate grey.
dd_heatmap_data <- function(x, level) {
  tab <- dd_tidy(x, conf.level = level)
  tab <- tab[!is.na(tab$group), , drop = FALSE]
  tab$ref <- dd_cs_is_ref(x, tab)
  tab$sig <- !is.na(tab$conf.low) & (tab$conf.low > 0 | tab$conf.high < 0)
  tab$label <- ifelse(is.na(tab$estimate), "NA", paste0(formatC(tab$estimate, digits = 2, format = "f"),
                                                          ifelse(tab$sig, "*", "")))
  tab$label[tab$ref] <- "ref"
  tab
}

dd_heat_cols <- function(v, lim) {
  pal <- grDevices::colorRampPalette(c("#1B6CA8", "#F7F7F7", "#C0392B"))(101)
  ifelse(is.na(v), "grey80", pal[pmin(101, pmax(1, round((v / lim + 1) * 50) + 1))])
}

dd_plot_heatmap <- function(x, level, main = NULL, ...) {
  tab <- dd_heatmap_data(x, level)
  gs <- sort(unique(tab$group)); ts <- sort(unique(tab$time))
  lim <- max(abs(tab$estimate[!tab$ref]), na.rm = TRUE)
  if (!is.finite(lim) || lim == 0) lim <- 1
  op <- graphics::par(mar = c(4.2, 5, 3, 1), las = 1)
  on.exit(graphics::par(op))
  graphics::plot.default(range(ts) + c(-0.5, 0.5), c(0.5, length(gs) + 0.5), type = "n", xaxs = "i", yaxs = "i",
                         xlab = x$tname %||% "Period", ylab = "Cohort (first treated)", xaxt = "n", yaxt = "n",
                         main = main %||% paste("ATT(g,t):", x$yname), ...)
  graphics::axis(1, at = ts)
  graphics::axis(2, at = seq_along(gs), labels = rev(gs))
  yy <- length(gs) + 1 - match(tab$group, gs)
  graphics::rect(tab$time - 0.5, yy - 0.5, tab$time + 0.5, yy + 0.5, col = dd_heat_cols(tab$estimate, lim),
                 border = "white")
  graphics::text(tab$time, yy, tab$label, cex = if (length(ts) > 12) 0.6 else 0.8)
  # the first treated period of each cohort: the staircase's edge
  graphics::segments(gs - 0.5, rev(seq_along(gs)) - 0.5, gs - 0.5, rev(seq_along(gs)) + 0.5, lwd = 2)
  graphics::mtext(sprintf("* interval (%g%%) excludes 0; black bars: first treated period", 100 * level), side = 3,
                  line = 0.2, cex = 0.75)
  invisible(x)
}

dd_autoplot_heatmap <- function(object, level) {
  gg <- asNamespace("ggplot2")
  tab <- dd_heatmap_data(object, level)
  tab$cohort <- factor(tab$group, levels = rev(sort(unique(tab$group))))
  lim <- max(abs(tab$estimate[!tab$ref]), na.rm = TRUE)
  if (!is.finite(lim) || lim == 0) lim <- 1
  gg$ggplot(tab, gg$aes(x = .data$time, y = .data$cohort, fill = .data$estimate)) +
    gg$geom_tile(colour = "white") +
    gg$geom_text(gg$aes(label = .data$label), size = 3) +
    gg$scale_fill_gradient2(low = "#1B6CA8", mid = "#F7F7F7", high = "#C0392B", midpoint = 0, limits = c(-lim, lim),
                            na.value = "grey80", name = "ATT(g,t)") +
    gg$scale_x_continuous(breaks = sort(unique(tab$time)), expand = c(0, 0)) +
    gg$scale_y_discrete(expand = c(0, 0)) +
    gg$labs(x = object$tname %||% "Period", y = "Cohort (first treated)", title = paste("ATT(g,t):", object$yname),
            caption = sprintf("* interval (%g%%) excludes 0", 100 * level)) +
    gg$theme(panel.grid = gg$element_blank())
}
