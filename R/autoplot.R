# ggplot2 versions of the plots (ggplot2 is in Suggests): autoplot() methods
# registered on ggplot2's generic when ggplot2 is loaded. They return ggplot
# objects (themeable, combinable, saved with ggsave()) with the same
# information as the base plots.

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
#' * [bacon_decomp()]: each 2x2 estimate against its weight, by comparison
#'   type, with the TWFE coefficient as a horizontal line.
#' * [honest_did()]: the robust intervals against `M` (or `Mbar`), the
#'   original interval first, the breakdown value as a labelled vertical line.
#' @param object A `dd_fit`, `bacon_decomp` or `honest_did` object.
#' @param level Confidence level of the pointwise intervals (fits).
#' @param ... Ignored.
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
  ref <- data.frame(event = es$reference, estimate = 0,
                    period = factor(ifelse(es$reference < 0, "pre", "post"), levels = c("pre", "post")))
  p <- gg$ggplot(tab, gg$aes(x = .data$event, y = .data$estimate, colour = .data$period)) +
    gg$geom_hline(yintercept = 0, colour = "grey50") +
    gg$geom_vline(xintercept = -0.5, linetype = 2, colour = "grey50")
  if (!is.null(tab$cband.low))
    p <- p + gg$geom_linerange(gg$aes(ymin = .data$cband.low, ymax = .data$cband.high), linewidth = 2.5,
                               alpha = 0.35)
  p <- p + gg$geom_linerange(gg$aes(ymin = .data$conf.low, ymax = .data$conf.high), linewidth = 0.8) +
    gg$geom_point(size = 2.3)
  if (nrow(ref)) p <- p + gg$geom_point(data = ref, shape = 1, size = 2.5)
  p + gg$scale_colour_manual(values = col, labels = c(pre = "pre-treatment", post = "post-treatment"), name = NULL,
                             drop = FALSE) +
    gg$scale_x_continuous(breaks = sort(unique(c(tab$event, ref$event)))) +
    gg$labs(x = "Periods relative to treatment", y = paste("Effect on", x$yname),
            title = paste("Event study:", x$yname),
            caption = paste0(sprintf("Bars: %g%% pointwise intervals", 100 * level),
                             if (!is.null(tab$cband.low)) "; light bars: uniform band" else "",
                             if (nrow(ref)) sprintf("\nOpen circle: reference period (%s), 0 by normalisation",
                                                   paste(ref$event, collapse = ", ")))) +
    gg$theme(legend.position = "bottom", plot.caption.position = "plot", plot.caption = gg$element_text(hjust = 0))
}

#' @rdname autoplot.dd_fit
#' @exportS3Method ggplot2::autoplot
autoplot.bacon_decomp <- function(object, ...) {
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
autoplot.honest_did <- function(object, ...) {
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
