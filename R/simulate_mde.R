#' Simulated minimum detectable effect of any DiD estimator
#'
#' The smallest effect that `estimator` detects with probability `power`
#' (two-sided test of `term` at `alpha`) on panels drawn by `dgp`, found by
#' bisection on the effect size with [dd_simulate_power()] at each step, as
#' diff-diff's `simulate_mde()`. Every step uses the same draws (common
#' random numbers: the same seed for each effect size), so the simulated
#' power is a smooth function of the effect and the search is stable. The
#' bracket starts at 0 and at `upper` (default: 2.8 times the sampling SD of
#' the estimate at effect 0, doubled until the power reaches the target);
#' the search stops when the bracket is narrower than `tol` times its upper
#' end, and the minimum detectable effect is interpolated linearly between
#' the bracket's two powers.
#'
#' @inheritParams dd_simulate_power
#' @param power The target power (default 0.8).
#' @param nsim Draws per effect size (default 500).
#' @param upper The upper end of the starting bracket (`NULL`: found as
#'   described).
#' @param tol Relative width of the bracket at which the search stops
#'   (default 0.02).
#' @param max_steps Most bisection steps (default 20).
#' @param seed `NULL` (a seed drawn from the caller's stream, so that
#'   [set.seed()] makes the result reproducible) or a number.
#' @return An object of class `dd_mde_sim`: `mde`, its bracket (`lower`,
#'   `upper`), the target `power`, `alpha`, `nsim` and `path` (every effect
#'   size simulated, in order, with its power and Monte Carlo standard
#'   error). Methods print, tidy and plot.
#' @examples
#' set.seed(1)
#' m <- dd_simulate_mde(function(d) did_twfe(d, "y", "id", "time", "D"), dd_sim_basic, nsim = 60,
#'                      mc_se = 0.07, tol = 0.1, dgp_args = list(n_units = 100, n_pre = 2, n_post = 2))
#' m
#' @export
dd_simulate_mde <- function(estimator, dgp = dd_sim_basic, power = 0.8, nsim = 500, alpha = 0.05, term = NULL,
                            dgp_args = list(), est_args = list(), upper = NULL, tol = 0.02, max_steps = 20L,
                            mc_se = 0.025, cores = 1L, seed = NULL) {
  if (!is.numeric(power) || length(power) != 1L || is.na(power) || power <= alpha || power >= 1)
    dd_stop("`power` must be one number between `alpha` and 1; got %s.", dd_show(power))
  if (!is.null(upper) && (!is.numeric(upper) || length(upper) != 1L || !is.finite(upper) || upper <= 0))
    dd_stop("`upper` must be NULL or one positive number; got %s.", dd_show(upper))
  if (!is.numeric(tol) || length(tol) != 1L || !is.finite(tol) || tol <= 0 || tol >= 1)
    dd_stop("`tol` must be one number in (0, 1); got %s.", dd_show(tol))
  max_steps <- dd_check_count(max_steps, "max_steps", min = 1)
  if (!is.null(seed) && (!is.numeric(seed) || length(seed) != 1L || !is.finite(seed)))
    dd_stop("`seed` must be NULL or one number; got %s.", dd_show(seed))
  if (is.null(seed)) seed <- sample.int(.Machine$integer.max, 1L)
  path <- NULL
  warned <- FALSE
  pw <- function(e) {
    r <- withCallingHandlers(
      dd_with_seed(seed, dd_simulate_power(estimator, dgp, effect_sizes = e, nsim = nsim, alpha = alpha, term = term,
                                           dgp_args = dgp_args, est_args = est_args, power = power, mc_se = mc_se,
                                           cores = cores)),
      warning = function(w) {
        if (startsWith(conditionMessage(w), "`nsim` =")) {
          if (warned) invokeRestart("muffleWarning")
          warned <<- TRUE
        }
      })
    path <<- rbind(path, data.frame(effect = e, power = r$power, mc_se = r$mc_se, sd_estimate = r$sd_estimate))
    r
  }
  r0 <- pw(0)
  if (r0$power >= power)
    dd_stop("the test rejects in %.0f%% of the draws at effect 0 (at least the target power %s): its size is broken, so there is no minimum detectable effect.",
            100 * r0$power, format(power))
  lo <- 0; plo <- r0$power
  hi <- upper %||% (2.8 * r0$sd_estimate)
  if (!is.finite(hi) || hi <= 0) dd_stop("the estimate does not vary across the draws at effect 0; give `upper`.")
  phi <- pw(hi)$power
  doublings <- 0L
  while (phi < power) {
    if (doublings >= 10L) dd_stop("the power stays below %s up to an effect of %s; give a larger `upper` or more units.",
                                  format(power), format(hi))
    lo <- hi; plo <- phi
    hi <- 2 * hi; phi <- pw(hi)$power
    doublings <- doublings + 1L
  }
  steps <- 0L
  while ((hi - lo) > tol * hi && steps < max_steps) {
    mid <- (lo + hi) / 2
    pm <- pw(mid)$power
    if (pm >= power) { hi <- mid; phi <- pm } else { lo <- mid; plo <- pm }
    steps <- steps + 1L
  }
  mde <- if (phi > plo) lo + (power - plo) * (hi - lo) / (phi - plo) else hi
  structure(list(mde = mde, lower = lo, upper = hi, power = power, alpha = alpha, nsim = nsim, seed = seed,
                 converged = (hi - lo) <= tol * hi, path = path), class = "dd_mde_sim")
}

#' @export
print.dd_mde_sim <- function(x, digits = 4, ...) {
  dd_check_dots(list(...), "print()")
  cat(sprintf("Simulated minimum detectable effect (power %s, two-sided alpha %s, %d draws per effect size)\n",
              format(x$power), format(x$alpha), x$nsim))
  cat(sprintf("MDE: %s (bracket [%s, %s]%s); %d effect sizes simulated\n", format(x$mde, digits = digits),
              format(x$lower, digits = digits), format(x$upper, digits = digits),
              if (x$converged) "" else ", not narrowed to `tol`", nrow(x$path)))
  invisible(x)
}

#' @export
tidy.dd_mde_sim <- function(x, ...) {
  dd_check_dots(list(...), "tidy()")
  x$path
}

#' @export
plot.dd_mde_sim <- function(x, main = "Simulated power: the search for the MDE", xlab = "Effect", ylab = "Power",
                            ...) {
  p <- x$path[order(x$path$effect), ]
  op <- graphics::par(mar = c(4.2, 4.2, 3, 1), las = 1)
  on.exit(graphics::par(op))
  graphics::plot.default(p$effect, p$power, type = "b", pch = 16, ylim = c(0, 1), main = main, xlab = xlab,
                         ylab = ylab, ...)
  graphics::segments(p$effect, pmax(0, p$power - 1.96 * p$mc_se), p$effect, pmin(1, p$power + 1.96 * p$mc_se),
                     col = "grey50")
  graphics::abline(h = x$power, lty = 2, col = "grey50")
  graphics::abline(v = x$mde, lty = 2, col = "#C0392B")
  invisible(x)
}
