# Diagnostics, tables and plots for did_sdid() fits.

# the block fit behind a did_sdid result (one cohort's for staggered fits)
dd_sdid_part <- function(x, cohort = NULL) {
  if (!inherits(x, "did_sdid")) dd_stop("`x` must be a did_sdid() fit; got %s.", dd_show(class(x)[1]))
  if (length(x$fits) == 1L) return(x$fits[[1]])
  if (is.null(cohort))
    dd_stop("this fit has %d adoption cohorts (%s); choose one with `cohort`.", length(x$cohorts),
            paste(format(x$cohorts), collapse = ", "))
  k <- match(cohort, x$cohorts)
  if (is.na(k)) dd_stop("`cohort` must be one of %s; got %s.", paste(format(x$cohorts), collapse = ", "),
                        dd_show(cohort))
  x$fits[[k]]
}

#' Weights of a synthetic DiD fit
#'
#' The unit weights (omega, over the controls, largest first) and the time
#' weights (lambda, over the pre-treatment periods, in time order) of a
#' [did_sdid()] fit, as synthdid's `synthdid_controls()` lists them.
#'
#' @param x A `did_sdid` fit.
#' @param cohort For staggered fits, the adoption period of the cohort.
#' @param mass Keep the largest unit weights up to this cumulative mass
#'   (1 keeps all, the default).
#' @return A list with data frames `omega` (`unit`, `weight`) and `lambda`
#'   (`period`, `weight`).
#' @examples
#' d <- read.csv(system.file("extdata", "california_prop99.csv", package = "diffdiff"), sep = ";")
#' fit <- did_sdid(d, "PacksPerCapita", "State", "Year", "treated", se = "none")
#' sdid_weights(fit, mass = 0.9)
#' @export
sdid_weights <- function(x, cohort = NULL, mass = 1) {
  f <- dd_sdid_part(x, cohort)
  if (!is.numeric(mass) || length(mass) != 1L || is.na(mass) || mass <= 0 || mass > 1)
    dd_stop("`mass` must be a number in (0, 1]; got %s.", dd_show(mass))
  om <- f$omega
  names(om) <- rownames(f$Y)[seq_len(f$N0)]
  o <- order(-om)
  omega <- data.frame(unit = names(om)[o], weight = unname(om[o]), stringsAsFactors = FALSE)
  if (mass < 1) omega <- omega[seq_len(min(nrow(omega), which(cumsum(omega$weight) >= mass - 1e-12)[1])), ]
  rownames(omega) <- NULL
  lambda <- data.frame(period = colnames(f$Y)[seq_len(f$T0)], weight = unname(f$lambda),
                       stringsAsFactors = FALSE)
  list(omega = omega, lambda = lambda)
}

#' Diagnostics of a synthetic DiD fit
#'
#' What an applied paper reports next to a synthetic DiD estimate:
#' \describe{
#'   \item{weights}{the effective number of controls `1 / sum(omega^2)` and of
#'     pre-periods `1 / sum(lambda^2)`, the number of controls with positive
#'     weight, the Herfindahl index `sum(omega^2)` and the share of the five
#'     largest unit weights;}
#'   \item{placebo_time}{the in-time placebo: the same estimator on the
#'     pre-treatment periods only, with the last ones as a fake treatment
#'     period (synthdid's `synthdid_placebo()`; `treated_fraction` of the
#'     pre-periods, by default the post-period share of the panel);}
#'   \item{leave_one_out}{the estimate without each control of positive
#'     weight and without each treated unit (when there are two or more):
#'     with `loo = "refit"` the weights are re-solved on the remaining units
#'     (a new fit); with `loo = "jackknife"` they are held fixed, the unit
#'     weights renormalised over the remaining controls (Arkhangelsky et al.
#'     2021, Algorithm 3): the leave-one-out estimates behind
#'     `se = "jackknife"`, and what diff-diff's `get_loo_effects_df()`
#'     reports. The jackknife version is one pass over the panel; the refit
#'     solves the weights once per unit (a few seconds with hundreds of
#'     controls);}
#'   \item{sensitivity}{the estimate over a grid of `zeta_omega` (multiples
#'     of the fitted value).}
#' }
#' @param x A `did_sdid` fit.
#' @param cohort For staggered fits, the adoption period of the cohort.
#' @param zeta_grid Multiples of the fitted `zeta_omega` for the sensitivity
#'   table.
#' @param treated_fraction Fraction of the pre-periods used as the placebo
#'   post-period (`NULL`: synthdid's default).
#' @param loo `"refit"` (default: re-solve the weights without each unit) or
#'   `"jackknife"` (weights held fixed).
#' @return A list of class `sdid_diagnostics` with elements `weights`
#'   (named numeric), `placebo_time` (estimate and placebo periods),
#'   `leave_one_out` and `sensitivity` (data frames), and `loo` (how the
#'   leave-one-out estimates were computed).
#' @examples
#' d <- read.csv(system.file("extdata", "california_prop99.csv", package = "diffdiff"), sep = ";")
#' fit <- did_sdid(d, "PacksPerCapita", "State", "Year", "treated", se = "none")
#' sdid_diagnostics(fit)
#' # leave-one-out with the weights held fixed (the jackknife's)
#' sdid_diagnostics(fit, loo = "jackknife")$leave_one_out[1:5, ]
#' @export
sdid_diagnostics <- function(x, cohort = NULL, zeta_grid = c(0.25, 0.5, 1, 2, 4), treated_fraction = NULL,
                             loo = c("refit", "jackknife")) {
  f <- dd_sdid_part(x, cohort)
  loo_how <- dd_match_arg(loo[1], c("refit", "jackknife"), "loo")
  if (!is.numeric(zeta_grid) || !length(zeta_grid) || anyNA(zeta_grid) || any(zeta_grid < 0))
    dd_stop("`zeta_grid` must be non-negative numbers; got %s.", dd_show(zeta_grid))
  s <- x$settings
  Y <- f$Y; N0 <- f$N0; T0 <- f$T0; N <- nrow(Y)
  om <- f$omega; la <- f$lambda
  top <- sort(om, decreasing = TRUE)
  wts <- c(effective_controls = 1 / sum(om^2), effective_periods = if (any(la != 0)) 1 / sum(la^2) else NA_real_,
           positive_controls = sum(om > 0), herfindahl = sum(om^2), top5_share = sum(utils::head(top, 5)))
  # in-time placebo (synthdid_placebo): pre-periods only
  if (is.null(treated_fraction)) treated_fraction <- 1 - T0 / ncol(Y)
  if (!is.numeric(treated_fraction) || length(treated_fraction) != 1L || is.na(treated_fraction) ||
      treated_fraction <= 0 || treated_fraction >= 1)
    dd_stop("`treated_fraction` must be a number strictly between 0 and 1; got %s.", dd_show(treated_fraction))
  pT0 <- floor(T0 * (1 - treated_fraction))
  placebo <- if (pT0 >= 2L && pT0 < T0) {
    pf <- dd_sdid_refit(f, s, Y[, seq_len(T0), drop = FALSE], N0, pT0,
                        if (is.null(f$X)) NULL else f$X[, seq_len(T0), , drop = FALSE], placebo = TRUE)
    list(estimate = pf$estimate, periods = colnames(Y)[(pT0 + 1):T0])
  } else list(estimate = NA_real_, periods = character())
  # leave one out: controls with weight, and treated units
  drop <- c(which(om > 0), if (N - N0 > 1L) (N0 + 1):N)
  loo <- if (loo_how == "jackknife") {
    # a jackknife fit of one cohort holds them already (the same rows)
    stored <- identical(x$se_method, "jackknife") && length(x$fits) == 1L && length(x$replicates) == N
    dd_reuse$sdid_loo_path <- if (stored) "stored" else "computed"
    (if (stored) x$replicates else dd_sdid_jackknife(f, N0, ", leave one out"))[drop]
  } else vapply(drop, function(i) {
    keep <- setdiff(seq_len(N), i)
    dd_sdid_refit(f, s, Y[keep, , drop = FALSE], N0 - (i <= N0), T0,
                  if (is.null(f$X)) NULL else f$X[keep, , , drop = FALSE])$estimate
  }, numeric(1))
  loo <- data.frame(unit = rownames(Y)[drop], role = ifelse(drop <= N0, "control", "treated"),
                    weight = ifelse(drop <= N0, om[pmin(drop, N0)], NA_real_), estimate = loo,
                    change = loo - f$estimate, stringsAsFactors = FALSE)
  sens <- vapply(zeta_grid, function(m) {
    s2 <- s; s2$zeta_omega <- m * f$zeta_omega; s2$noise_level <- f$noise_level
    dd_sdid_block(Y, N0, T0, f$X, s2)$estimate
  }, numeric(1))
  sens <- data.frame(multiple = zeta_grid, zeta_omega = zeta_grid * f$zeta_omega, estimate = sens)
  structure(list(weights = wts, placebo_time = placebo, leave_one_out = loo, sensitivity = sens, loo = loo_how),
            class = "sdid_diagnostics")
}

# re-fit with the fit's settings (noise level and regularisation re-derived
# from the new panel, as synthdid does for a new call; `placebo` keeps the
# fit's options, as synthdid_placebo() does)
dd_sdid_refit <- function(f, s, Y, N0, T0, X, placebo = FALSE) {
  if (placebo) {
    s$noise_level <- f$noise_level; s$zeta_omega <- f$zeta_omega; s$zeta_lambda <- f$zeta_lambda
    s$min_decrease <- f$opts[3]
  }
  dd_sdid_block(Y, N0, T0, X, s)
}

#' @rdname sdid_diagnostics
#' @param ... Not used: an error if given (no argument is ignored silently).
#' @export
print.sdid_diagnostics <- function(x, ...) {
  dd_check_dots(list(...), "print()")
  w <- x$weights
  cat("Synthetic DiD diagnostics\n")
  cat(sprintf("  effective controls %.2f (of %d with positive weight); effective pre-periods %.2f\n",
              w[["effective_controls"]], as.integer(w[["positive_controls"]]), w[["effective_periods"]]))
  cat(sprintf("  unit-weight concentration: Herfindahl %.4f, top-5 share %.3f\n", w[["herfindahl"]], w[["top5_share"]]))
  if (!is.na(x$placebo_time$estimate))
    cat(sprintf("  in-time placebo (periods %s as fake treatment): %.4f\n",
                paste(range(x$placebo_time$periods), collapse = "-"), x$placebo_time$estimate))
  l <- x$leave_one_out
  if (nrow(l)) cat(sprintf("  leave-one-out estimates (%s): %.4f to %.4f (largest change: dropping %s)\n",
                           if (identical(x$loo, "jackknife")) "weights fixed" else "weights re-solved",
                           min(l$estimate), max(l$estimate), l$unit[which.max(abs(l$change))]))
  cat("  sensitivity to zeta_omega:\n")
  print(x$sensitivity, row.names = FALSE, digits = 4)
  invisible(x)
}

#' @rdname did_sdid
#' @param object A `did_sdid` fit.
#' @method summary did_sdid
#' @export
summary.did_sdid <- function(object, ...) {
  dots <- list(...)
  # the plain-language summary is the shared one
  if (identical(dots$style, "plain")) return(NextMethod())
  if (identical(dots$style, "table")) dots$style <- NULL
  v <- names(dots) %in% c("cluster", "vcov")
  # (an error: did_sdid has no such argument; dd_revcov says so)
  if (any(v)) dd_revcov(object, dots$cluster, dots$vcov)
  dd_check_dots(dots, "summary()")
  structure(list(fit = object), class = "summary.did_sdid")
}

#' @export
print.summary.did_sdid <- function(x, ...) {
  dd_check_dots(list(...), "print()")
  f <- x$fit
  print(f)
  parts <- if (length(f$fits) == 1L) list(NULL) else as.list(f$cohorts)
  for (co in parts) {
    p <- dd_sdid_part(f, co)
    if (!is.null(co)) cat(sprintf("\nCohort %s:\n", format(co)))
    cat(sprintf("N0 = %d controls (effective %.2f), N1 = %d treated; T0 = %d pre-periods (effective %.2f), T1 = %d post\n",
                p$N0, 1 / sum(p$omega^2), nrow(p$Y) - p$N0, p$T0,
                if (any(p$lambda != 0)) 1 / sum(p$lambda^2) else NA_real_, ncol(p$Y) - p$T0))
    cat(sprintf("noise level %.5g; zeta_omega %.5g; zeta_lambda %.5g\n", p$noise_level, p$zeta_omega, p$zeta_lambda))
    w <- sdid_weights(f, co, mass = 0.9)
    k <- nrow(w$omega)
    cat(sprintf("Largest unit weights (90%% of the mass: %d unit%s%s):\n", k, if (k == 1L) "" else "s",
                if (k > 10L) "; the 10 largest shown, all in sdid_weights()" else ""))
    print(utils::head(w$omega, 10L), row.names = FALSE, digits = 4)
    lw <- w$lambda[w$lambda$weight > 0, , drop = FALSE]
    if (nrow(lw)) { cat("Positive time weights:\n"); print(lw, row.names = FALSE, digits = 4) }
  }
  invisible(x)
}

# The curves of the trajectory plots (plot and autoplot of did_sdid): the
# treated units' average and the synthetic control, shifted to match the
# treated units over the lambda-weighted pre-period. f: dd_sdid_part();
# Y: its outcomes net of the covariates' effect.
dd_sdid_curves <- function(f, Y) {
  N0 <- f$N0; T0 <- f$T0
  per <- suppressWarnings(as.numeric(colnames(Y)))
  if (anyNA(per)) per <- seq_len(ncol(Y))
  tr <- colMeans(Y[(N0 + 1):nrow(Y), , drop = FALSE])
  sc <- colSums(f$omega * Y[seq_len(N0), , drop = FALSE])
  la <- f$lambda
  if (sum(la) > 0) sc <- sc + sum(la * (tr[seq_len(T0)] - sc[seq_len(T0)]))
  data.frame(period = per, treated = tr, synthetic = sc, row.names = NULL)
}

# the did_sdid part of a cohort (NULL: the only one, or the first cohort)
# and its outcomes net of the covariates' effect
dd_sdid_plot_part <- function(x, cohort) {
  if (is.null(cohort) && length(x$fits) > 1L) cohort <- x$cohorts[1]
  f <- dd_sdid_part(x, cohort)
  Y <- f$Y
  if (!is.null(f$X) && length(f$beta)) for (k in seq_along(f$beta)) Y <- Y - f$beta[k] * f$X[, , k]
  list(f = f, Y = Y, cohort = cohort,
       label = if (length(x$fits) > 1L) sprintf(" (cohort %s)", format(cohort)) else "")
}

#' @rdname did_sdid
#' @param x A `did_sdid` fit.
#' @param type `"trajectory"`: the treated average and the synthetic control
#'   over time, the time weights shaded under the pre-period; `"weights"`:
#'   the largest unit weights.
#' @param cohort For staggered fits, the cohort to plot.
#' @param n_units Number of unit weights shown.
#' @param legend,legend_pos Draw the trajectory plot's legend (default
#'   `TRUE`), and where: `"auto"` (default; the corner with the least of the
#'   curves and the time weights in it) or a keyword of [graphics::legend()].
#' @param ... Further arguments to the plotting function (`plot` or `barplot`). `summary()` takes none: its
#'   `cluster` and `vcov` (as for the other fits) are errors saying why (did_sdid's variance is its placebo,
#'   bootstrap or jackknife variance; refit with another `se`), and so is any other argument.
#' @method plot did_sdid
#' @export
plot.did_sdid <- function(x, type = c("trajectory", "weights"), cohort = NULL, n_units = 15, legend = TRUE,
                          legend_pos = "auto", ...) {
  type <- dd_match_arg(type[1], c("trajectory", "weights"), "type")
  legend <- dd_check_flag(legend, "legend")
  dd_legend_pos(legend_pos, 0, 0, c(0, 1), c(0, 1))      # checks the value
  # staggered fits: every title names the cohort shown
  pp <- dd_sdid_plot_part(x, cohort)
  f <- pp$f; Y <- pp$Y; cohort <- pp$cohort; coh <- pp$label; T0 <- f$T0
  if (type == "weights") {
    w <- sdid_weights(x, cohort)$omega
    w <- utils::head(w[w$weight > 0, , drop = FALSE], dd_check_count(n_units, "n_units", min = 1))
    op <- graphics::par(mar = c(4, 8, 2, 1)); on.exit(graphics::par(op))
    graphics::barplot(rev(w$weight), names.arg = rev(w$unit), horiz = TRUE, las = 1, col = "grey40",
                      xlim = c(0, 1.05 * max(w$weight)),
                      border = NA, xlab = "unit weight (omega)", main = paste0("Synthetic DiD unit weights", coh), ...)
    return(invisible(w))
  }
  cv <- dd_sdid_curves(f, Y)
  per <- cv$period; tr <- cv$treated; sc <- cv$synthetic; la <- f$lambda
  rng <- range(c(tr, sc))
  base <- rng[1] - 0.15 * diff(rng)
  op <- graphics::par(las = 1); on.exit(graphics::par(op))
  graphics::plot(per, tr, type = "l", lwd = 2, ylim = c(base, rng[2]), xlab = x$tname %||% "period", ylab = x$yname,
                 main = paste0("Treated units and synthetic control", coh), ...)
  graphics::lines(per, sc, lwd = 2, lty = 2, col = "grey35")
  graphics::abline(v = (per[T0] + per[T0 + 1]) / 2, col = "grey60")
  if (sum(la) > 0) {
    h <- 0.12 * diff(rng) * la / max(la)
    graphics::rect(per[seq_len(T0)] - 0.4, base, per[seq_len(T0)] + 0.4, base + h, col = "grey80", border = NA)
  }
  if (legend)
    graphics::legend(dd_legend_pos(legend_pos, c(per, per, per[seq_len(T0)]), c(tr, sc, rep(base, T0)),
                                   range(per), c(base, rng[2])), c("treated", "synthetic control", "time weights"), lty = c(1, 2, NA),
                     lwd = c(2, 2, NA), pch = c(NA, NA, 15), col = c("black", "grey35", "grey80"), bty = "n")
  invisible(cv)
}
