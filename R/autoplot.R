# ggplot2 versions of the plots (ggplot2 is in Suggests): autoplot() methods
# registered on ggplot2's generic when ggplot2 is loaded. They return ggplot
# objects (themeable, combinable, saved with ggsave()) with the same
# information as the base plots.

# the breaks of an axis whose values are whole numbers (periods): pretty()'s
# breaks without the fractional ones (2002.5); other values: pretty()'s
dd_whole_breaks <- function(v) {
  whole <- length(v) && all(v[is.finite(v)] == round(v[is.finite(v)]))
  function(lim) {
    b <- pretty(lim)
    if (whole) {
      b <- b[b == round(b)]
      if (length(b) < 2L) b <- unique(round(seq(lim[1], lim[2], length.out = 3)))
    }
    b
  }
}

# a caption line naming what a plot leaves out because it was not estimated
dd_plot_na_note <- function(what, kind) {
  if (!length(what)) return("")
  sprintf("\nNot estimable, not drawn: %s %s%s", if (length(what) > 1L) paste0(kind, "s") else kind,
          paste(utils::head(what, 8), collapse = ", "), if (length(what) > 8) ", ..." else "")
}

dd_need_ggplot <- function() {
  if (!requireNamespace("ggplot2", quietly = TRUE))
    dd_stop("autoplot() needs the ggplot2 package; install it, or use plot() (base graphics).")
}

#' ggplot2 plots of diffdiff results
#'
#' `autoplot()` methods (ggplot2 in Suggests) for fits and diagnostics. They
#' show what the base-graphics `plot()` methods show and return a ggplot
#' object to theme, combine or save with `ggplot2::ggsave()`.
#'
#' * Event studies ([did_event()], [did_sa()], [did_bjs()], [did_gardner()],
#'   [did_stacked()], `aggregate(did_cs(...), type = "dynamic")`): estimates
#'   against event time, pointwise intervals, the uniform band when the fit
#'   has one (wider, lighter bars), the reference period(s) at zero as open
#'   circles, pre- and post-treatment periods in two colours. Other fits:
#'   the main coefficients with their intervals.
#' * [twfe_decomp()]: each ATT(g,t) against its weight in the TWFE
#'   coefficient, post- and pre-treatment cells in two colours.
#' * [bacon_decomp()]: each 2x2 estimate against its weight, by comparison
#'   type, with the TWFE coefficient as a horizontal line.
#' * [honest_did()]: the robust intervals against `M` (or `Mbar`), the
#'   original interval first, the breakdown value as a labelled vertical line.
#' * [did_cs()]: ATT(g,t) against the period, one panel per cohort, with
#'   pointwise intervals and the uniform band.
#' * [did_sdid()]: the treated units' average and the synthetic control over
#'   time (the cohort named for staggered fits), the time weights as bars.
#' * [pretrends_power()]: the event study, the hypothesised trend and the
#'   expectation after pre-testing.
#' @param object A `dd_fit`, `bacon_decomp`, `twfe_decomp`, `honest_did` or
#'   `dd_pretrends` object.
#' @param cohort For staggered [did_sdid()] fits, the cohort to plot.
#' @param level Confidence level of the pointwise intervals (fits).
#' @param type For [did_cs()] fits (and [did_dml()], [did_bc()]): `"cohorts"`
#'   (default: one panel per cohort) or `"heatmap"` (one tile per ATT(g,t)).
#' @param ... Not used: an error if given (no argument is ignored silently).
#' @return A `ggplot` object.
#' @examples
#' if (requireNamespace("ggplot2", quietly = TRUE)) {
#'   d <- read.csv(system.file("extdata", "sim_panel.csv", package = "diffdiff"))
#'   es <- did_sa(d, yname = "y", idname = "id", tname = "year", gname = "first_treat",
#'                nboot = 199, cband = TRUE)
#'   p <- ggplot2::autoplot(es)
#'   p + ggplot2::theme_minimal()
#' }
#' @name autoplot.dd_fit
NULL

#' @rdname autoplot.dd_fit
#' @exportS3Method ggplot2::autoplot
autoplot.dd_fit <- function(object, level = 1 - object$alpha, ...) {
  dd_check_dots(list(...), "autoplot()")
  dd_need_ggplot()
  gg <- asNamespace("ggplot2")
  x <- object
  tab <- dd_tidy(x, conf.level = level)
  es <- x$event_study
  col <- c(pre = "#1B6CA8", post = "#C0392B")
  if (is.null(es)) {
    tab <- tab[tab$term %in% x$main_terms, , drop = FALSE]
    tab$term <- factor(tab$term, levels = rev(tab$term))
    return(gg$ggplot(tab, gg$aes(x = .data$estimate, y = .data$term)) +
             gg$geom_vline(xintercept = 0, linetype = 2, colour = "grey50") +
             gg$geom_errorbar(gg$aes(xmin = .data$conf.low, xmax = .data$conf.high), width = 0.15,
                              orientation = "y", colour = col[["post"]]) +
             gg$geom_point(colour = col[["post"]], size = 2.5) +
             gg$labs(x = "Estimate", y = NULL, title = x$title))
  }
  tab <- tab[match(es$term, tab$term), , drop = FALSE]
  tab$event <- es$event
  tab$period <- factor(ifelse(tab$event < 0, "pre", "post"), levels = c("pre", "post"))
  # (an event study without a reference period, e.g. did_cs's varying base
  # period, has none to draw)
  ref <- data.frame(event = as.double(es$reference), estimate = rep(0, length(es$reference)),
                    period = factor(ifelse(es$reference < 0, "pre", "post"), levels = c("pre", "post")))
  p <- gg$ggplot(tab, gg$aes(x = .data$event, y = .data$estimate, colour = .data$period)) +
    gg$geom_hline(yintercept = 0, colour = "grey50") +
    gg$geom_vline(xintercept = -0.5, linetype = 2, colour = "grey50")
  if (!is.null(tab$cband.low))
    p <- p + gg$geom_linerange(gg$aes(ymin = .data$cband.low, ymax = .data$cband.high), linewidth = 2.5,
                               alpha = 0.35, na.rm = TRUE)
  p <- p + gg$geom_linerange(gg$aes(ymin = .data$conf.low, ymax = .data$conf.high), linewidth = 0.8, na.rm = TRUE) +
    gg$geom_point(size = 2.3, na.rm = TRUE)
  if (nrow(ref)) p <- p + gg$geom_point(data = ref, shape = 1, size = 2.5)
  p + gg$scale_colour_manual(values = col, labels = c(pre = "pre-treatment", post = "post-treatment"), name = NULL,
                             drop = FALSE) +
    gg$scale_x_continuous(breaks = sort(unique(c(tab$event, ref$event)))) +
    gg$labs(x = dd_es_xlab(x), y = paste("Effect on", x$yname),
            title = paste("Event study:", x$yname),
            caption = paste0(sprintf("Bars: %g%% pointwise intervals", 100 * level),
                             if (!is.null(tab$cband.low)) "; light bars: uniform band" else "",
                             if (nrow(ref)) sprintf("\nOpen circle: reference period (%s), 0 by normalisation",
                                                   paste(ref$event, collapse = ", "))
                             else if (identical(es$base_period, "varying"))
                               "\nNo reference period: pre-treatment estimates are changes between consecutive periods (varying base period)"
                             else if (identical(es$base_period, "transformation"))
                               "\nNo reference period: estimates are relative to each unit's pre-treatment mean or trend (rolling transformation)",
                             dd_plot_na_note(tab$event[is.na(tab$estimate) | is.na(tab$conf.low)], "event time"))) +
    gg$theme(legend.position = "bottom", plot.caption.position = "plot", plot.caption = gg$element_text(hjust = 0))
}

#' @rdname autoplot.dd_fit
#' @exportS3Method ggplot2::autoplot
autoplot.bacon_decomp <- function(object, ...) {
  dd_check_dots(list(...), "autoplot()")
  dd_need_ggplot()
  gg <- asNamespace("ggplot2")
  b <- object$two_by_twos
  gg$ggplot(b, gg$aes(x = .data$weight, y = .data$estimate, shape = .data$type, colour = .data$type)) +
    gg$geom_hline(yintercept = object$beta_twfe, linetype = 2, colour = "grey40") +
    gg$geom_point(size = 2.5) +
    gg$labs(x = "Weight", y = "2x2 DiD estimate", colour = "Comparison", shape = "Comparison",
            title = "Goodman-Bacon decomposition",
            caption = sprintf("Dashed line: TWFE coefficient %.4g (the weighted sum)", object$beta_twfe))
}

#' @rdname autoplot.dd_fit
#' @exportS3Method ggplot2::autoplot
autoplot.twfe_weights <- function(object, ...) {
  dd_check_dots(list(...), "autoplot()")
  dd_need_ggplot()
  gg <- asNamespace("ggplot2")
  w <- object$weights[object$weights$weight != 0, , drop = FALSE]
  w$period <- w[[2]]
  w$sign <- factor(ifelse(w$weight < 0, "negative", "positive"), c("positive", "negative"))
  gg$ggplot(w, gg$aes(x = .data$period, y = .data$weight, colour = .data$sign)) +
    gg$geom_hline(yintercept = 0, linetype = 2, colour = "grey40") +
    gg$geom_point(size = 1.8) +
    gg$scale_colour_manual(values = c(positive = "#1B6CA8", negative = "#C0392B"), drop = FALSE) +
    (if (is.numeric(w$period)) gg$scale_x_continuous(breaks = dd_whole_breaks(w$period))) +
    gg$labs(x = object$names[2], y = "Weight in the TWFE coefficient", colour = "Weight",
            title = sprintf("TWFE weights: %d positive, %d negative (the negative ones sum to %.3g)", object$n_pos, object$n_neg,
                            object$sum_neg))
}

#' @rdname autoplot.dd_fit
#' @exportS3Method ggplot2::autoplot
autoplot.honest_did <- function(object, ...) {
  dd_check_dots(list(...), "autoplot()")
  dd_need_ggplot()
  gg <- asNamespace("ggplot2")
  a <- tidy(object)
  lab <- if (object$type == "SD") "M" else "Mbar"
  a$kind <- ifelse(a$term == "original", "Original", "Robust")
  # the original interval to the left of the grid, on the same axis
  rng <- diff(range(a$M, na.rm = TRUE)); if (!is.finite(rng) || rng == 0) rng <- 1
  a$x <- a$M
  a$x[a$kind == "Original"] <- min(a$M, na.rm = TRUE) - 0.08 * rng
  p <- gg$ggplot(a, gg$aes(x = .data$x, ymin = .data$conf.low, ymax = .data$conf.high, colour = .data$kind)) +
    gg$geom_hline(yintercept = 0, colour = "grey50") +
    gg$geom_errorbar(width = 0.025 * rng, linewidth = 0.8) +
    gg$scale_colour_manual(values = c(Original = "grey30", Robust = "#1B6CA8"),
                           labels = c(Original = "original (no violation allowed)", Robust = "robust"), name = NULL) +
    gg$labs(x = lab, y = "Confidence interval", title = sprintf("Sensitivity (%s, %s)", object$type, object$method)) +
    gg$theme(legend.position = "bottom")
  if (is.finite(object$breakdown %||% NA_real_))
    p <- p + gg$geom_vline(xintercept = object$breakdown, linetype = 3) +
      gg$annotate("text", x = object$breakdown, y = max(a$conf.high, na.rm = TRUE), hjust = -0.05, vjust = 1,
                  label = sprintf("breakdown %s = %.3g", lab, object$breakdown), size = 3.2)
  p
}

#' @rdname autoplot.dd_fit
#' @exportS3Method ggplot2::autoplot
autoplot.did_dml <- function(object, ...) autoplot.did_cs(object, ...)

#' @rdname autoplot.dd_fit
#' @exportS3Method ggplot2::autoplot
autoplot.did_bc <- function(object, ...) autoplot.did_cs(object, ...)

#' @rdname autoplot.dd_fit
#' @exportS3Method ggplot2::autoplot
autoplot.did_cs <- function(object, level = 1 - object$alpha, type = c("cohorts", "heatmap"), ...) {
  dd_check_dots(list(...), "autoplot()")
  dd_need_ggplot()
  type <- dd_match_arg(type[1], c("cohorts", "heatmap"), "type")
  if (type == "heatmap") return(dd_autoplot_heatmap(object, level))
  gg <- asNamespace("ggplot2")
  tab <- dd_tidy(object, conf.level = level)
  tab <- tab[!is.na(tab$group), , drop = FALSE]
  tab$period <- factor(ifelse(tab$time < tab$group, "pre", "post"), levels = c("pre", "post"))
  tab$cohort <- factor(paste("Cohort", tab$group), levels = paste("Cohort", sort(unique(tab$group))))
  # the reference cells (universal base period: 0 by construction) as open
  # circles, as in the event-study plots; cells that could not be estimated
  # are left out and named in the caption
  isref <- dd_cs_is_ref(object, tab)
  ref <- tab[isref, , drop = FALSE]
  miss <- tab[!isref & (is.na(tab$estimate) | is.na(tab$conf.low)), , drop = FALSE]
  tab <- tab[!isref & !is.na(tab$estimate), , drop = FALSE]
  col <- c(pre = "#1B6CA8", post = "#C0392B")
  p <- gg$ggplot(tab, gg$aes(x = .data$time, y = .data$estimate, colour = .data$period)) +
    gg$geom_hline(yintercept = 0, colour = "grey50") +
    gg$geom_vline(data = data.frame(cohort = levels(tab$cohort), g = sort(unique(tab$group)) - 0.5),
                  gg$aes(xintercept = .data$g), linetype = 2, colour = "grey50")
  if (!is.null(tab$cband.low))
    p <- p + gg$geom_linerange(gg$aes(ymin = .data$cband.low, ymax = .data$cband.high), linewidth = 2.2,
                               alpha = 0.35, na.rm = TRUE)
  p <- p + gg$geom_linerange(gg$aes(ymin = .data$conf.low, ymax = .data$conf.high), linewidth = 0.7, na.rm = TRUE) +
    gg$geom_point(size = 1.8)
  if (nrow(ref)) p <- p + gg$geom_point(data = ref, shape = 1, size = 2.2)
  cap <- paste0(if (nrow(ref)) "Open circles: the reference cells (the base period), 0 by construction" else "",
                dd_plot_na_note(sprintf("ATT(%s,%s)", miss$group, miss$time), "cell"))
  p + gg$facet_wrap(~cohort, ncol = 1) +
    gg$scale_colour_manual(values = col, labels = c(pre = "pre-treatment", post = "post-treatment"), name = NULL,
                           drop = FALSE) +
    gg$scale_x_continuous(breaks = dd_whole_breaks(c(tab$time, ref$time))) +
    gg$labs(x = object$tname %||% "Period", y = "ATT(g,t)",
            title = paste("Group-time average treatment effects:", object$yname),
            caption = if (nzchar(cap)) sub("^\n", "", cap) else NULL) +
    gg$theme(legend.position = "bottom", plot.caption.position = "plot", plot.caption = gg$element_text(hjust = 0))
}

#' @rdname autoplot.dd_fit
#' @exportS3Method ggplot2::autoplot
autoplot.did_sdid <- function(object, cohort = NULL, ...) {
  dd_check_dots(list(...), "autoplot()")
  dd_need_ggplot()
  gg <- asNamespace("ggplot2")
  # the curves plot.did_sdid() draws
  pp <- dd_sdid_plot_part(object, cohort)
  f <- pp$f
  tr <- dd_sdid_curves(f, pp$Y)
  long <- rbind(data.frame(period = tr$period, value = tr$treated, curve = "treated"),
                data.frame(period = tr$period, value = tr$synthetic, curve = "synthetic control"))
  long$curve <- factor(long$curve, levels = c("treated", "synthetic control"))
  rng <- range(long$value); base <- rng[1] - 0.15 * diff(rng)
  la <- f$lambda
  w <- data.frame(period = tr$period[seq_along(la)], h = if (any(la > 0)) 0.12 * diff(rng) * la / max(la) else 0)
  coh <- pp$label
  gg$ggplot(long, gg$aes(x = .data$period, y = .data$value)) +
    gg$geom_rect(data = w, gg$aes(xmin = .data$period - 0.4, xmax = .data$period + 0.4, ymin = base,
                                  ymax = base + .data$h), inherit.aes = FALSE, fill = "grey80") +
    gg$geom_vline(xintercept = mean(tr$period[length(la) + 0:1]), colour = "grey60") +
    gg$geom_line(gg$aes(linetype = .data$curve), linewidth = 0.9) +
    gg$scale_linetype_manual(values = c(1, 2), name = NULL) +
    gg$scale_x_continuous(breaks = dd_whole_breaks(tr$period)) +
    gg$labs(x = object$tname %||% "period", y = object$yname,
            title = paste0("Treated units and synthetic control", coh),
            caption = "Grey bars: the time weights (lambda) of the pre-period") +
    gg$theme(legend.position = "bottom")
}

#' @rdname autoplot.dd_fit
#' @exportS3Method ggplot2::autoplot
autoplot.dd_pretrends <- function(object, ...) {
  dd_check_dots(list(...), "autoplot()")
  dd_need_ggplot()
  gg <- asNamespace("ggplot2")
  x <- object
  tab <- x$table[x$table$type != "l_vec", , drop = FALSE]
  z <- stats::qnorm(1 - x$alpha / 2)
  est <- data.frame(event = c(tab$event, x$ref), estimate = c(tab$estimate, 0),
                    lo = c(tab$estimate - z * tab$std.error, 0), hi = c(tab$estimate + z * tab$std.error, 0))
  lines <- rbind(data.frame(event = c(tab$event, x$ref), value = c(tab$delta, 0), what = "hypothesised trend"),
                 data.frame(event = c(tab$event, x$ref), value = c(tab$mean_pass, 0),
                            what = "expectation after pre-testing"))
  lines <- lines[order(lines$what, lines$event), ]
  gg$ggplot(est, gg$aes(x = .data$event, y = .data$estimate)) +
    gg$geom_hline(yintercept = 0, colour = "grey60", linetype = 3) +
    gg$geom_linerange(gg$aes(ymin = .data$lo, ymax = .data$hi)) +
    gg$geom_point() +
    gg$geom_line(data = lines, gg$aes(y = .data$value, colour = .data$what, linetype = .data$what), linewidth = 0.9) +
    gg$scale_colour_manual(values = c("hypothesised trend" = "#C0392B", "expectation after pre-testing" = "#1B6CA8"),
                           name = NULL) +
    gg$scale_linetype_manual(values = c("hypothesised trend" = 1, "expectation after pre-testing" = 2), name = NULL) +
    gg$scale_x_continuous(breaks = sort(unique(est$event))) +
    gg$labs(x = "Event time", y = "Estimate", title = "Event study, hypothesised trend and expectation after pre-testing",
            caption = sprintf("Power of the pre-test: %.2f", x$power)) +
    gg$theme(legend.position = "bottom")
}

#' @rdname autoplot.dd_fit
#' @exportS3Method ggplot2::autoplot
autoplot.twfe_decomp <- function(object, ...) {
  dd_check_dots(list(...), "autoplot()")
  dd_need_ggplot()
  gg <- asNamespace("ggplot2")
  cl <- object$cells[!is.na(object$cells$att), , drop = FALSE]
  cl$cell <- factor(ifelse(cl$post, "post-treatment (t >= g)", "pre-treatment (t < g)"),
                   c("post-treatment (t >= g)", "pre-treatment (t < g)"))
  gg$ggplot(cl, gg$aes(x = .data$weight, y = .data$att, colour = .data$cell, shape = .data$cell)) +
    gg$geom_hline(yintercept = 0, colour = "grey50") + gg$geom_vline(xintercept = 0, colour = "grey50") +
    gg$geom_point(size = 2.8) +
    gg$scale_colour_manual(values = c("#C0392B", "#1B6CA8"), name = NULL, drop = FALSE) +
    gg$scale_shape_manual(values = c(16, 1), name = NULL, drop = FALSE) +
    gg$labs(x = "Weight in the TWFE coefficient",
            y = if (object$covariates) "Cell contrast (implicit regression weights)" else "ATT(g,t)",
            title = "TWFE coefficient as a weighted sum of ATT(g,t)",
            caption = sprintf("TWFE %.4g = post %.4g + pre %.4g%s", object$beta, object$post, object$pre,
                              if (object$covariates) sprintf(" + remainder %.2g", object$remainder) else "")) +
    gg$theme(legend.position = "bottom")
}
