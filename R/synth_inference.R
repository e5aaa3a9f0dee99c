# Inference for did_synth fits beyond the in-space placebos: conformal
# inference (Chernozhukov, Wuethrich and Zhu 2021), Firpo and Possebom (2018)
# sets, the in-time placebo and leave-one-out donors.

# Conformal inference for one treated unit of a did_synth fit. Under the
# sharp null theta_t = theta0_t in the post-treatment periods, the treated
# unit's untreated outcomes are known (y_t - theta0_t); synthetic control
# weights are fitted to them over all periods (outcomes only, simplex
# weights without intercept: the paper's constrained estimator), and the
# residuals' post-period statistic S_q = (T1^(-1/2) sum |u_t|^q)^(1/q) is
# compared with its values under permutations of time: the T cyclic shifts
# ("moving_block") or n_perm random permutations with the identity
# ("iid"). The p-value is the share of permutations whose statistic is at
# least the observed one. Intervals invert the test over a grid: per
# period (the pre-treatment periods and that one period, T1 = 1), and for a
# constant effect over all post-treatment periods (the average effect when
# the effect is constant).
#
#' Conformal inference for a synthetic control
#'
#' The conformal inference of Chernozhukov, Wuthrich and Zhu (2021) for one
#' treated unit of a [did_synth()] fit. Under the sharp null that the effect
#' in the post-treatment periods is `theta0`, the unit's untreated outcomes
#' are known; synthetic control weights (on the simplex, outcomes only) are
#' fitted to them over all periods, and the post-treatment residuals'
#' statistic \eqn{S_q = (T_1^{-1/2} \sum |u_t|^q)^{1/q}} is compared with its
#' values under permutations of time: the \eqn{T} cyclic shifts
#' (`"moving_block"`, default) or `n_perm` random permutations (`"iid"`).
#' Inverting the test gives an interval for each post-treatment period (the
#' pre-treatment periods and that one period) and for a constant effect over
#' all post-treatment periods.
#'
#' With moving blocks the smallest p-value is \eqn{1 / (T_0 + 1)} for a
#' single period: when that exceeds `alpha`, no value is rejected and the
#' period's interval is the real line. Intervals are found on a grid of
#' `n_grid` points around the estimate (plus or minus ten pre-treatment
#' RMSPE, or `grid`); `at_edge = TRUE` says the set reaches the grid's end
#' (give a wider `grid`).
#' @param fit A [did_synth()] fit.
#' @param theta0 The null: one effect, or one per post-treatment period
#'   (default 0: no effect).
#' @param q The exponent of the statistic (default 1).
#' @param permutations `"moving_block"` or `"iid"`.
#' @param n_perm For `"iid"`: the number of permutations (the identity
#'   included; draws use R's random numbers).
#' @param alpha The level of the intervals is `1 - alpha` (default: the
#'   fit's).
#' @param grid,n_grid The values tested for the intervals (default: `n_grid`
#'   points around each estimate).
#' @param unit The treated unit (its identifier; default the first).
#' @return A `dd_synth_conformal` object: `p.value` (the joint test of
#'   `theta0`), `periods` (per-period estimate and interval) and `average`
#'   (the constant-effect interval).
#' @references Chernozhukov, V., Wuthrich, K. and Zhu, Y. (2021). An exact
#'   and robust conformal inference method for counterfactual and synthetic
#'   controls. *Journal of the American Statistical Association* 116,
#'   1849-1864.
#' @examples
#' d <- read.csv(system.file("extdata", "california_prop99.csv", package = "diffdiff"), sep = ";")
#' fit <- did_synth(d, "PacksPerCapita", "State", "Year", "treated", placebo = FALSE)
#' synth_conformal(fit)
#' @export
synth_conformal <- function(fit, theta0 = 0, q = 1, permutations = c("moving_block", "iid"), n_perm = 5000,
                            alpha = NULL, grid = NULL, n_grid = 201, unit = NULL) {
  dd_synth_check_fit(fit)
  permutations <- dd_match_arg(permutations[1], c("moving_block", "iid"), "permutations")
  if (!is.numeric(q) || length(q) != 1L || is.na(q) || q <= 0)
    dd_stop("`q` must be a number > 0; got %s.", dd_show(q))
  alpha <- if (is.null(alpha)) fit$alpha else dd_check_alpha(alpha)
  n_perm <- dd_check_count(n_perm, "n_perm", min = 1)
  n_grid <- dd_check_count(n_grid, "n_grid", min = 3)
  u <- fit$fits[[dd_synth_pick(fit, unit)]]
  T0 <- length(u$pre); post <- u$post; T1 <- length(post)
  y <- u$y; Y0 <- fit$Y0
  if (!is.numeric(theta0) || !(length(theta0) %in% c(1L, T1)) || anyNA(theta0))
    dd_stop("`theta0` must be one number or one per post-treatment period (%d); got %s.", T1, dd_show(theta0))
  perms <- dd_conformal_perms(T0 + T1, permutations, n_perm)
  p_joint <- dd_conformal_p(y, Y0, u$pre, post, matrix(rep_len(theta0, T1)), q, perms)
  # the grid around the estimates: +- 10 pre-treatment RMSPE (or the gap's size)
  span <- 10 * max(u$pre_rmspe, stats::sd(u$gap[post]), 1e-8 * max(1, abs(y)))
  mk_grid <- function(centre) if (is.null(grid)) seq(centre - span, centre + span, length.out = n_grid) else grid
  per <- lapply(seq_along(post), function(h) {
    g <- mk_grid(u$gap[post[h]])
    cols <- c(u$pre, post[h])
    ph <- dd_conformal_perms(T0 + 1L, permutations, n_perm)
    # with T0 + 1 cyclic shifts no p-value is below 1 / (T0 + 1): when that
    # exceeds alpha, no value is rejected and the interval is the real line
    if (dd_p_exceeds(1 / nrow(ph), alpha)) return(list(low = -Inf, high = Inf, edge = FALSE))
    p <- dd_conformal_p(y[cols], Y0[cols, , drop = FALSE], seq_len(T0), T0 + 1L, matrix(g, 1L), q, ph)
    dd_conformal_set(g, p, alpha)
  })
  g <- mk_grid(mean(u$gap[post]))
  pa <- dd_conformal_p(y, Y0, u$pre, post, matrix(rep(g, each = T1), T1), q, perms)
  avg <- dd_conformal_set(g, pa, alpha)
  per_tab <- data.frame(time = fit$periods[post], estimate = u$gap[post],
                        conf.low = vapply(per, `[[`, 0, "low"), conf.high = vapply(per, `[[`, 0, "high"),
                        at_edge = vapply(per, `[[`, NA, "edge"))
  structure(list(p.value = p_joint, theta0 = theta0, q = q, permutations = permutations,
                 n_perm = nrow(perms), alpha = alpha, periods = per_tab,
                 average = data.frame(estimate = mean(u$gap[post]), conf.low = avg$low, conf.high = avg$high,
                                      at_edge = avg$edge)),
            class = "dd_synth_conformal")
}

# the permutations of 1..T as rows: cyclic shifts (T of them, the identity
# first) or the identity and n - 1 random permutations (R's RNG)
dd_conformal_perms <- function(T, type, n) {
  if (type == "moving_block") return(t(vapply(0:(T - 1L), function(j) ((seq_len(T) - 1L + j) %% T) + 1L, integer(T))))
  rbind(seq_len(T), t(replicate(n - 1L, sample.int(T))))
}

# p-values of the nulls in the columns of Theta (T1 x m: the post-period
# effects under each null): the weights fitted under each null (one batched
# solve), residuals, statistic under each permutation
dd_conformal_p <- function(y, Y0, pre, post, Theta, q, perms) {
  m <- ncol(Theta)
  B <- matrix(y, length(y), m)
  B[post, ] <- B[post, , drop = FALSE] - Theta
  W <- .Call(C_synth_w, Y0, B)$w
  U <- B - Y0 %*% W
  T1 <- length(post); Tn <- length(y)
  stat <- function(Uc) (colSums(abs(Uc)^q) / sqrt(T1))^(1 / q)
  s0 <- stat(U[post, , drop = FALSE])
  # the post-period block of each permutation: its last T1 positions
  cnt <- numeric(m)
  for (r in seq_len(nrow(perms))) {
    idx <- perms[r, (Tn - T1 + 1L):Tn]
    cnt <- cnt + (stat(U[idx, , drop = FALSE]) >= s0 - 1e-12 * pmax(1, abs(s0)))
  }
  cnt / nrow(perms)
}

# the confidence set {theta: p(theta) > alpha} on a grid, reported as its
# hull (low, high); edge = TRUE when it reaches the grid's end (widen it)
dd_conformal_set <- function(g, p, alpha) {
  ok <- dd_p_exceeds(p, alpha)
  if (!any(ok)) return(list(low = NA_real_, high = NA_real_, edge = FALSE))
  list(low = min(g[ok]), high = max(g[ok]), edge = ok[1] || ok[length(ok)])
}

# Firpo and Possebom (2018) confidence sets by inverting the in-space
# placebo test over sharp nulls alpha_t = c h_t in the post-treatment
# periods: h_t = 1 ("constant") or the number of periods since treatment
# ("linear"). The treated unit's weights are fitted on pre-treatment data
# and the placebo pools exclude it (as in Abadie, Diamond and Hainmueller
# 2010), so only the treated unit's post/pre RMSPE ratio depends on c:
# R(c)^2 = mean((gap_t - c h_t)^2) / pre_rmspe^2, and the set {c: p(c) >
# alpha} is the interval where R(c) stays at most the m-th largest placebo
# ratio, m the fewest placebo ratios at least R(c) that keep p above alpha:
# the roots of a quadratic, exact. Placebos dropped by the fit's
# placebo_mspe_cut stay dropped.
#
#' Firpo-Possebom confidence sets for a synthetic control
#'
#' Firpo and Possebom (2018): the set of effects \eqn{c h_t} (in every
#' post-treatment period \eqn{t}) that the in-space placebo test of a
#' [did_synth()] fit does not reject at level `alpha`, with \eqn{h_t = 1}
#' (`"constant"`) or \eqn{h_t} the number of periods since treatment, from 1
#' (`"linear"`). The treated unit's weights use pre-treatment data only and
#' the placebos exclude it, so under each null only the treated unit's RMSPE
#' ratio changes, and the set is an interval found exactly (the roots of a
#' quadratic). Placebos dropped by the fit's `placebo_mspe_cut` stay
#' dropped. An empty set is `NA`; a set that rejects nothing is
#' \eqn{(-\infty, \infty)} (too few placebos for the level).
#' @param fit A [did_synth()] fit with placebos.
#' @param type `"constant"` (default) or `"linear"`.
#' @param alpha The level is `1 - alpha` (default: the fit's).
#' @param unit The treated unit (its identifier; default the first).
#' @return A `dd_synth_fp` object: `estimate` (the least-squares \eqn{c}),
#'   `conf.low`, `conf.high`, `n_placebos`, `type`, `alpha`.
#' @references Firpo, S. and Possebom, V. (2018). Synthetic control method:
#'   inference, sensitivity analysis and confidence sets. *Journal of Causal
#'   Inference* 6(2).
#' @examples
#' d <- read.csv(system.file("extdata", "california_prop99.csv", package = "diffdiff"), sep = ";")
#' fit <- did_synth(d, "PacksPerCapita", "State", "Year", "treated")
#' synth_fp(fit)
#' synth_fp(fit, "linear")
#' @export
synth_fp <- function(fit, type = c("constant", "linear"), alpha = NULL, unit = NULL) {
  dd_synth_check_fit(fit)
  if (is.null(fit$placebos))
    dd_stop("`fit` has no placebos (it was fitted with placebo = FALSE); refit with placebo = TRUE.")
  type <- dd_match_arg(type[1], c("constant", "linear"), "type")
  alpha <- if (is.null(alpha)) fit$alpha else dd_check_alpha(alpha)
  u <- fit$fits[[dd_synth_pick(fit, unit)]]
  structure(dd_synth_fp_core(u, fit$placebos$table, fit$periods, fit$placebo_mspe_cut, type, alpha),
            class = "dd_synth_fp")
}

# p > alpha for a p-value that is a ratio of counts: an alpha computed as
# 1 - level (0.19999999999999996 for level 0.8) counts as the level meant
dd_p_exceeds <- function(p, alpha) p > alpha + 1e-12

# the set for one treated unit's fit u against the placebo table
dd_synth_fp_core <- function(u, tab, periods, cut, type, alpha) {
  s <- tab$adopt == periods[u$post[1]] & tab$pre_rmspe^2 <= cut * u$pre_rmspe^2
  r <- sort(tab$ratio[s], decreasing = TRUE)
  J <- length(r)
  m <- which(dd_p_exceeds((1 + 0:J) / (1 + J), alpha))[1] - 1L      # the fewest placebo ratios >= R(c) needed
  g <- u$gap[u$post]
  h <- if (type == "constant") rep(1, length(g)) else seq_along(g)
  out <- list(type = type, alpha = alpha, n_placebos = J, estimate = sum(g * h) / sum(h^2))
  if (!is.finite(u$ratio) || is.na(m)) {
    # p never exceeds alpha (empty), or the unit's own pre-treatment fit is
    # perfect (its ratio is infinite whatever c): no set
    out[c("conf.low", "conf.high")] <- list(NA_real_, NA_real_)
  } else if (m == 0L || !is.finite(r[m])) {
    # p always exceeds alpha (the m-th placebo fits its pre-period perfectly)
    out[c("conf.low", "conf.high")] <- list(-Inf, Inf)
  } else {
    # mean(h^2) c^2 - 2 mean(g h) c + mean(g^2) - r_m^2 pre^2 <= 0
    a <- mean(h^2); b <- mean(g * h); e <- mean(g^2) - r[m]^2 * u$pre_rmspe^2
    disc <- b^2 - a * e
    out[c("conf.low", "conf.high")] <- if (disc < 0) list(NA_real_, NA_real_)
                                       else list((b - sqrt(disc)) / a, (b + sqrt(disc)) / a)
  }
  out
}

#' Robustness checks of a synthetic control: in-time placebo and leave-one-out donors
#'
#' The two checks of Abadie, Diamond and Hainmueller (2015) for one treated
#' unit of a [did_synth()] fit, with the fit's settings (predictors, V
#' method, windows):
#' \describe{
#'   \item{in-time placebo}{the synthetic control refitted on the periods
#'     before the actual treatment only, as if treatment had started at
#'     `placebo_time`: a credible synthetic control shows no gap between
#'     `placebo_time` and the actual treatment. Windows (`predictors_window`,
#'     `optimize_window`) and the periods of special predictors are cut to
#'     those before `placebo_time` (a special predictor with none is left
#'     out, and listed in `dropped`);}
#'   \item{leave-one-out}{the synthetic control refitted without each donor
#'     of positive weight in turn: how much the estimate rests on one donor.}
#' }
#' @param fit A [did_synth()] fit.
#' @param unit The treated unit (its identifier; default the first).
#' @param placebo_time The fake treatment period for the in-time placebo
#'   (default: the middle pre-treatment period); `NA` skips it.
#' @param leave_one_out Run the leave-one-out fits (default `TRUE`).
#' @return A `dd_synth_diagnostics` object: `placebo_time` (a list with the
#'   fake period, the gaps, the mean gap between the fake and the actual
#'   treatment and the pre-fake-treatment RMSPE) and `leave_one_out` (a data
#'   frame: the donor left out, its weight, the ATT without it and the
#'   change, the pre-treatment RMSPE) with `loo_paths` (the synthetic paths,
#'   periods x donors left out). It prints, and plots the leave-one-out paths
#'   (`plot(x)`) or the in-time placebo (`plot(x, type = "placebo_time")`).
#' @examples
#' d <- read.csv(system.file("extdata", "california_prop99.csv", package = "diffdiff"), sep = ";")
#' fit <- did_synth(d, "PacksPerCapita", "State", "Year", "treated", placebo = FALSE)
#' dg <- synth_diagnostics(fit, placebo_time = 1980)
#' dg
#' plot(dg)
#' @export
synth_diagnostics <- function(fit, unit = NULL, placebo_time = NULL, leave_one_out = TRUE) {
  dd_synth_check_fit(fit)
  k <- dd_synth_pick(fit, unit)
  leave_one_out <- dd_check_flag(leave_one_out, "leave_one_out")
  prep <- fit$synth_data; st <- fit$settings
  i <- prep$treated[k]; u <- fit$fits[[k]]; tlev <- prep$tlev
  out <- list(unit = names(fit$fits)[k], fit = u, periods = tlev, tname = fit$tname, yname = fit$yname)
  if (!(length(placebo_time) == 1L && is.na(placebo_time))) {
    pre <- u$pre
    if (is.null(placebo_time)) placebo_time <- tlev[max(2L, (length(pre) + 1L) %/% 2L + 1L)]
    a <- match(placebo_time, tlev)
    if (!is.numeric(placebo_time) || length(placebo_time) != 1L || is.na(a) || a < 2L || a > length(pre))
      dd_stop("`placebo_time` must be a pre-treatment period of unit %s after the first (%s to %s), or NA; got %s.",
              out$unit, format(tlev[2]), format(tlev[length(pre)]), dd_show(placebo_time))
    keep <- pre
    p2 <- prep
    p2$Y <- prep$Y[, keep, drop = FALSE]; p2$aux <- lapply(prep$aux, function(M) M[, keep, drop = FALSE])
    p2$tlev <- tlev[keep]; p2$adopt[i] <- a
    s2 <- st
    for (w in c("predictors_window", "optimize_window"))
      if (!is.null(st[[w]])) {
        s2[[w]] <- st[[w]][st[[w]] < placebo_time]
        if (!length(s2[[w]])) dd_stop("`%s` has no period before `placebo_time` = %s.", w, format(placebo_time))
      }
    # special predictors keep their periods before placebo_time; one with
    # none is dropped (and said), as long as a predictor is left
    sp <- lapply(st$spec$special, function(e) { e$periods <- e$periods[e$periods < placebo_time]; e })
    gone <- vapply(sp, function(e) !length(e$periods), NA)
    s2$spec$special <- sp[!gone]
    if (any(gone) && !length(s2$spec$special) && !length(st$spec$predictors))
      dd_stop("no predictor is left for the in-time placebo at `placebo_time` = %s: every special predictor is measured from then on; choose an earlier `placebo_time`.",
              format(placebo_time))
    if (!is.null(st$cv_split) && st$cv_split >= tlev[a - 1L]) s2$cv_split <- NULL
    f <- dd_synth_unit(p2, i, prep$donors, s2)
    out$placebo_time <- list(time = placebo_time, gap = stats::setNames(f$gap, p2$tlev), att = f$att,
                             pre_rmspe = f$pre_rmspe, post_rmspe = f$post_rmspe, synthetic = f$synthetic,
                             y = f$y, weights = f$w,
                             dropped = vapply(st$spec$special[gone], `[[`, "", "name"))
  }
  if (leave_one_out) {
    pos <- names(u$w)[u$w > 1e-10]
    if (length(prep$donors) <= 2L) dd_stop("leave-one-out needs at least three donors; the fit has %d.", length(prep$donors))
    res <- dd_lapply(pos, function(dn) {
      pool <- setdiff(prep$donors, match(dn, prep$ids))
      dd_synth_unit(prep, i, pool, st)[c("att", "pre_rmspe", "synthetic")]
    }, label = "leave-one-out synthetic controls")
    out$leave_one_out <- data.frame(donor = pos, weight = unname(u$w[pos]),
                                    att = vapply(res, `[[`, 0, "att"), change = vapply(res, `[[`, 0, "att") - u$att,
                                    pre_rmspe = vapply(res, `[[`, 0, "pre_rmspe"), stringsAsFactors = FALSE)
    out$loo_paths <- matrix(unlist(lapply(res, `[[`, "synthetic")), length(tlev), dimnames = list(tlev, pos))
  }
  structure(out, class = "dd_synth_diagnostics")
}

#' @export
print.dd_synth_diagnostics <- function(x, digits = max(3L, getOption("digits") - 3L), ...) {
  dd_check_dots(list(...), "print()")
  cat(sprintf("Synthetic control diagnostics, unit %s (ATT %s, pre-treatment RMSPE %s)\n", x$unit,
              format(x$fit$att, digits = digits), format(x$fit$pre_rmspe, digits = digits)))
  if (!is.null(x$placebo_time)) {
    p <- x$placebo_time
    cat(sprintf("In-time placebo at %s: mean gap %s from %s to the actual treatment (RMSPE before %s, after %s)\n",
                format(p$time), format(p$att, digits = digits), format(p$time), format(p$pre_rmspe, digits = digits),
                format(p$post_rmspe, digits = digits)))
    if (length(p$dropped))
      cat(sprintf("  (special predictors measured from %s on left out: %s)\n", format(p$time),
                  paste(p$dropped, collapse = ", ")))
  }
  if (!is.null(x$leave_one_out)) {
    cat("Leave-one-out (each donor of positive weight left out):\n")
    print(x$leave_one_out, row.names = FALSE, digits = digits)
  }
  invisible(x)
}

#' @rdname synth_diagnostics
#' @param x A `dd_synth_diagnostics` object.
#' @param type `"leave_one_out"` (default: the treated path, the synthetic
#'   control and the leave-one-out synthetic controls) or `"placebo_time"`.
#' @param ... Further arguments to [graphics::plot()].
#' @export
plot.dd_synth_diagnostics <- function(x, type = c("leave_one_out", "placebo_time"), ...) {
  type <- dd_match_arg(type[1], c("leave_one_out", "placebo_time"), "type")
  part <- if (type == "leave_one_out") x$loo_paths else x$placebo_time
  if (is.null(part)) dd_stop("the diagnostics have no %s part (it was skipped).", type)
  op <- graphics::par(las = 1); on.exit(graphics::par(op))
  f <- x$fit; per <- x$periods
  if (type == "leave_one_out") {
    graphics::matplot(per, part, type = "l", lty = 1, col = "grey70", ylim = range(c(part, f$y, f$synthetic)),
                      xlab = x$tname, ylab = x$yname, main = sprintf("Leave-one-out synthetic controls (unit %s)", x$unit), ...)
    graphics::lines(per, f$y, lwd = 2); graphics::lines(per, f$synthetic, lwd = 2, lty = 2, col = "#C0392B")
    graphics::abline(v = (per[f$post[1] - 1L] + per[f$post[1]]) / 2, col = "grey60", lty = 2)
    graphics::legend("topleft", c("treated", "synthetic control", "leaving one donor out"), lwd = c(2, 2, 1),
                     lty = c(1, 2, 1), col = c("black", "#C0392B", "grey70"), bty = "n")
  } else {
    pp <- per[seq_along(part$y)]
    graphics::plot(pp, part$y, type = "l", lwd = 2, ylim = range(c(part$y, part$synthetic)), xlab = x$tname,
                   ylab = x$yname, main = sprintf("In-time placebo at %s (unit %s)", format(part$time), x$unit), ...)
    graphics::lines(pp, part$synthetic, lwd = 2, lty = 2, col = "#C0392B")
    a <- match(part$time, pp)
    graphics::abline(v = (pp[a - 1L] + pp[a]) / 2, col = "grey60", lty = 2)
    graphics::legend("topleft", c("treated", "synthetic control (placebo)"), lwd = 2, lty = 1:2,
                     col = c("black", "#C0392B"), bty = "n")
  }
  invisible(x)
}

#' @export
print.dd_synth_fp <- function(x, digits = max(3L, getOption("digits") - 3L), ...) {
  dd_check_dots(list(...), "print()")
  cat(sprintf("Firpo-Possebom %g%% set for a %s effect (%d placebos): estimate %s, set [%s, %s]\n",
              100 * (1 - x$alpha), x$type, x$n_placebos, format(x$estimate, digits = digits),
              format(x$conf.low, digits = digits), format(x$conf.high, digits = digits)))
  if (is.na(x$conf.low)) cat("(NA: the set is empty, or the treated unit's pre-treatment fit is perfect)\n")
  invisible(x)
}

#' @export
print.dd_synth_conformal <- function(x, digits = max(3L, getOption("digits") - 3L), ...) {
  dd_check_dots(list(...), "print()")
  cat(sprintf("Conformal inference (Chernozhukov, Wuthrich and Zhu 2021), %s permutations (%d), q = %g\n",
              gsub("_", "-", x$permutations), x$n_perm, x$q))
  cat(sprintf("Joint test of theta0 = %s: p = %s\n", paste(format(utils::head(x$theta0, 4), digits = digits),
              collapse = ", "), format(x$p.value, digits = digits)))
  cat(sprintf("%g%% intervals by period:\n", 100 * (1 - x$alpha)))
  print(x$periods, row.names = FALSE, digits = digits)
  cat("Constant effect:\n")
  print(x$average, row.names = FALSE, digits = digits)
  invisible(x)
}
