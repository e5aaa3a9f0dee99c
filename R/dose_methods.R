# did_dose() fits: aggregate() (event study and cohorts of the cells),
# the printed footer, plot() and autoplot() of the dose curves.

#' Event study and other aggregations of a did_dose fit
#'
#' Aggregates the cell parameters of a [did_dose()] fit, the binarised
#' ATT^o(g,t) (`parameter = "att"`) or the average causal response
#' ACRT^o(g,t) (`"acrt"`), with the aggregation of [aggregate.did_cs()]:
#' `"dynamic"` (the event study), `"group"`, `"simple"` or `"calendar"`,
#' standard errors from the cell influence functions and the estimated
#' cohort shares, the multiplier bootstrap and uniform bands as set in the
#' fit or here.
#'
#' @param x A `did_dose` fit.
#' @param type `"dynamic"` (default; also `"event"`), `"group"`, `"simple"` or `"calendar"`.
#' @param parameter `"att"` (default) or `"acrt"`.
#' @param ... Passed to [aggregate.did_cs()] (`min_e`, `max_e`, `balance_e`,
#'   `nboot`, `cband`, `alpha`, ...).
#' @return A `did_cs_agg` fit; for `"dynamic"` an event study for
#'   [plot()], [honest_did()] and [pretrends_power()].
#' @examples
#' set.seed(1)
#' n <- 400
#' g <- sample(c(0, 2, 3, 4), n, replace = TRUE)
#' dose <- ifelse(g == 0, 0, runif(n))
#' d <- expand.grid(t = 1:4, id = 1:n)
#' d$g <- g[d$id]; d$dose <- dose[d$id]
#' d$y <- rnorm(n)[d$id] + d$t + (d$g > 0 & d$t >= d$g) * (d$dose + d$dose^2) + rnorm(nrow(d))
#' fit <- did_dose(d, "y", "id", "t", "g", "dose", degree = 2, nboot = 0)
#' aggregate(fit, type = "dynamic", parameter = "acrt")
#' @export
aggregate.did_dose <- function(x, type = c("dynamic", "group", "simple", "calendar"), parameter = c("att", "acrt"),
                               ...) {
  if (identical(type, "event")) type <- "dynamic"            # (did_etwfe's and etwfe's name)
  type <- dd_match_arg(if (identical(type, eval(formals()$type))) "dynamic" else type,
                       c("dynamic", "group", "simple", "calendar"), "type")
  parameter <- dd_match_arg(if (identical(parameter, c("att", "acrt"))) "att" else parameter, c("att", "acrt"),
                            "parameter")
  ci <- x$cell_inf
  cs <- x$cells
  # the cells as a did_cs fit: cell influence functions, then the cohort
  # columns of the share terms
  shaped <- dd_cells_as_cs(x, cs$group, cs$time, cs[[parameter]],
                           dd_ifs_dense(cbind(ci[[parameter]], dd_cohort_mat(ci$w, ci$G, ci$glist))), ci$G, ci$w,
                           ci$cluster, ci$periods, ci$cluster_name, ci$survey_label, ci$base_period, ci$anticipation)
  out <- aggregate.did_cs(shaped, type = type, ...)
  out$title <- sprintf("did_dose aggregation (type = \"%s\") of %s", type,
                       if (parameter == "att") "ATT^o(g,t), the binarised effect" else "ACRT^o(g,t), the average causal response")
  out$call <- match.call()
  out$rules <- x$rules        # the fit's peer rules carry over (print shows a non-default)
  out
}

dd_footer.did_dose <- function(x) {
  dd_footer.default(x)
  d <- x$dose
  cat(sprintf("Dose-response: ATT(d) and ACRT(d) at %d doses from %s to %s in fit$dose; %s.\n",
              nrow(d), format(signif(min(d$dose), 4)), format(signif(max(d$dose), 4)),
              if (!is.null(x$cck)) sprintf("data-driven cubic B-spline with %d segment(s) (chosen among %s)", x$cck$J,
                                           paste(x$cck$J_tried, collapse = ", "))
              else sprintf("B-spline of degree %d, %s", x$degree,
                           if (length(x$knots)) sprintf("knots at %s", paste(format(signif(x$knots, 4)), collapse = ", "))
                           else "no interior knots")))
  if (any(is.finite(x$dose_crit)))
    cat(sprintf("Uniform bands over the doses: critical values %.3f (ATT(d)) and %.3f (ACRT(d)).\n",
                x$dose_crit[["att"]], x$dose_crit[["acrt"]]))
  invisible(x)
}

#' Plot the dose-response curves of a did_dose fit
#'
#' ATT(d) and ACRT(d) against the dose, with pointwise intervals (shaded)
#' and, when the fit has them, uniform bands (dashed lines); the overall
#' ATT^o and ACRT^o as horizontal dotted lines.
#'
#' @param x A `did_dose` fit.
#' @param which `"both"` (default), `"att"` or `"acrt"`.
#' @param col Line colour.
#' @param ... Passed to [graphics::plot.default()].
#' @return `x`, invisibly.
#' @examples
#' set.seed(1)
#' n <- 400
#' g <- sample(c(0, 2, 3, 4), n, replace = TRUE)
#' dose <- ifelse(g == 0, 0, runif(n))
#' d <- expand.grid(t = 1:4, id = 1:n)
#' d$g <- g[d$id]; d$dose <- dose[d$id]
#' d$y <- rnorm(n)[d$id] + d$t + (d$g > 0 & d$t >= d$g) * (d$dose + d$dose^2) + rnorm(nrow(d))
#' fit <- did_dose(d, "y", "id", "t", "g", "dose", degree = 2, nboot = 199, cband = TRUE)
#' plot(fit)
#' @export
plot.did_dose <- function(x, which = c("both", "att", "acrt"), col = "#1B6CA8", ...) {
  which <- dd_match_arg(if (identical(which, c("both", "att", "acrt"))) "both" else which,
                        c("both", "att", "acrt"), "which")
  w <- if (which == "both") c("att", "acrt") else which
  op <- graphics::par(mfrow = c(1, length(w)), mar = c(4.2, 4.2, 3, 1), las = 1)
  on.exit(graphics::par(op))
  d <- x$dose
  for (k in w) {
    est <- d[[k]]; lo <- d[[paste0(k, "_low")]]; hi <- d[[paste0(k, "_high")]]
    blo <- d[[paste0(k, "_cband_low")]]; bhi <- d[[paste0(k, "_cband_high")]]
    yl <- range(c(lo, hi, blo, bhi, 0), finite = TRUE)
    graphics::plot.default(d$dose, est, type = "n", ylim = yl, xlab = "Dose",
                           ylab = if (k == "att") "ATT(d)" else "ACRT(d)",
                           main = if (k == "att") "Dose-response: ATT(d)" else "Average causal response: ACRT(d)", ...)
    graphics::abline(h = 0, col = "grey50")
    graphics::polygon(c(d$dose, rev(d$dose)), c(lo, rev(hi)), col = grDevices::adjustcolor(col, 0.25), border = NA)
    if (!is.null(blo)) {
      graphics::lines(d$dose, blo, lty = 2, col = col); graphics::lines(d$dose, bhi, lty = 2, col = col)
    }
    graphics::lines(d$dose, est, lwd = 2, col = col)
    graphics::abline(h = x$coefficients[[toupper(k)]], lty = 3, col = "grey30")
    graphics::legend("topleft", bty = "n", cex = 0.8,
                     legend = c(if (k == "att") "ATT(d)" else "ACRT(d)",
                                sprintf("%g%% pointwise", 100 * (1 - x$alpha)),
                                if (!is.null(blo)) sprintf("%g%% uniform band", 100 * (1 - x$alpha)),
                                if (k == "att") "ATT (overall)" else "ACRT (overall)"),
                     lty = c(1, NA, if (!is.null(blo)) 2, 3), lwd = c(2, NA, if (!is.null(blo)) 1, 1),
                     pch = c(NA, 15, if (!is.null(blo)) NA, NA), pt.cex = 2,
                     col = c(col, grDevices::adjustcolor(col, 0.25), if (!is.null(blo)) col, "grey30"))
  }
  invisible(x)
}

#' @rdname autoplot.dd_fit
#' @param which For [did_dose()] fits: `"both"`, `"att"` or `"acrt"`.
#' @exportS3Method ggplot2::autoplot
autoplot.did_dose <- function(object, which = c("both", "att", "acrt"), ...) {
  dd_check_dots(list(...), "autoplot()")
  dd_need_ggplot()
  gg <- asNamespace("ggplot2")
  which <- dd_match_arg(if (identical(which, c("both", "att", "acrt"))) "both" else which,
                        c("both", "att", "acrt"), "which")
  w <- if (which == "both") c("att", "acrt") else which
  d <- object$dose
  lab <- c(att = "ATT(d)", acrt = "ACRT(d)")
  a <- do.call(rbind, lapply(w, function(k)
    data.frame(panel = lab[[k]], dose = d$dose, estimate = d[[k]], conf.low = d[[paste0(k, "_low")]],
               conf.high = d[[paste0(k, "_high")]],
               band.low = if (is.null(d[[paste0(k, "_cband_low")]])) NA_real_ else d[[paste0(k, "_cband_low")]],
               band.high = if (is.null(d[[paste0(k, "_cband_high")]])) NA_real_ else d[[paste0(k, "_cband_high")]],
               overall = object$coefficients[[toupper(k)]])))
  a$panel <- factor(a$panel, levels = lab[w])
  p <- gg$ggplot(a, gg$aes(x = .data$dose)) +
    gg$geom_hline(yintercept = 0, colour = "grey50") +
    gg$geom_ribbon(gg$aes(ymin = .data$conf.low, ymax = .data$conf.high), fill = "#1B6CA8", alpha = 0.25) +
    gg$geom_line(gg$aes(y = .data$estimate), colour = "#1B6CA8", linewidth = 1) +
    gg$geom_hline(gg$aes(yintercept = .data$overall), linetype = "dotted", colour = "grey30") +
    gg$facet_wrap(~panel, scales = "free_y") +
    gg$labs(x = "Dose", y = NULL, title = "Dose-response",
            caption = sprintf("Shaded: %g%% pointwise intervals%s; dotted: overall ATT / ACRT", 100 * (1 - object$alpha),
                              if (all(is.na(a$band.low))) "" else "; dashed: uniform band"))
  if (!all(is.na(a$band.low)))
    p <- p + gg$geom_line(gg$aes(y = .data$band.low), linetype = "dashed", colour = "#1B6CA8") +
      gg$geom_line(gg$aes(y = .data$band.high), linetype = "dashed", colour = "#1B6CA8")
  p
}
