# Power of the pre-test for parallel trends and the distortion it causes
# (Roth 2022). The front end checks the input, builds the hypothesised
# violation and the pre-test region; the Gaussian rectangle probability and
# truncated moments come from src/pretrends.c (C_pretrends_mvn).

#' Power of pre-trend tests, and event-study means after pre-testing
#'
#' For a hypothesised violation of parallel trends `delta`, computes how often
#' the usual pre-test would detect it and what the event-study coefficients
#' look like on average in the samples that pass the pre-test, following
#' Roth (2022) and his R package pretrends. Or, given a target `power`, finds
#' the linear trend that the pre-test detects with that probability (Roth's
#' `slope_for_power()`).
#'
#' **The pre-test.** As in pretrends, parallel trends is rejected when any
#' pre-period coefficient is individually significant: \eqn{|\hat\beta_t /
#' se_t| > c} for some pre period \eqn{t}, with \eqn{c} = `qnorm(1 - alpha/2)`
#' and \eqn{se_t = \sqrt{\Sigma_{tt}}}; there is no multiplicity correction.
#' (pretrends fixes \eqn{c = 1.96}; `alpha = 0.05` here gives \eqn{c =
#' 1.959964}, which moves the power by less than \eqn{10^{-4}}.)
#'
#' **The model.** Under the hypothesised violation and a true effect of zero,
#' \eqn{\hat\beta \sim N(\delta, \Sigma)} (Roth 2022, section I).
#' * `power` = \eqn{1 - P(pass)}, with \eqn{P(pass) = P(|\hat\beta_t| \le c\,
#'   se_t} for every pre period \eqn{t)}, a multivariate-normal rectangle
#'   probability (pretrends' `rejectionProbability_NIS`).
#' * `bayes_factor` = \eqn{P(pass \mid \delta) / P(pass \mid 0)}, the
#'   "Bayes Factor" of pretrends, and `likelihood_ratio` =
#'   \eqn{\phi_\Sigma(\hat\beta_{pre} - \delta_{pre}) /
#'   \phi_\Sigma(\hat\beta_{pre})}, the "Likelihood Ratio" of pretrends (the
#'   likelihood of the observed pre-period coefficients under `delta` relative
#'   to parallel trends).
#' * `mean_pass` = \eqn{E[\hat\beta \mid pass]}, the "expectation after
#'   pre-testing" of pretrends (`meanBetaPre_NIS`, `meanBetaPost_NIS`). For
#'   pre periods it is a truncated-normal mean; for post periods
#'   \eqn{E[\hat\beta_{post} \mid pass] = \delta_{post} +
#'   \Sigma_{post,pre}\Sigma_{pre}^{-1}(E[\hat\beta_{pre} \mid pass] -
#'   \delta_{pre})} (Roth 2022, Proposition 1 and its proof). With a true
#'   effect of zero this is the **bias conditional on passing** the pre-test,
#'   which Roth reports next to the **unconditional bias** \eqn{\delta_{post}}
#'   (pretrends' `betaPostConditional` and `betaPostUnconditional`). Since the
#'   pre-test does not involve the post periods, for any true effect
#'   \eqn{\tau} the conditional bias is \eqn{E[\hat\beta_{post} \mid pass] -
#'   \tau_{post}}, the same number. `distortion` = `mean_pass - delta` is the
#'   part of it caused by pre-testing.
#'
#' **Linear trends.** With `slope`, \eqn{\delta_t = slope \times (t - r)} for
#' every event time \eqn{t} (pre and post), where \eqn{r} is the reference
#' (omitted) period, exactly as pretrends builds `deltatrue = slope * (tVec -
#' referencePeriod)`. For a fit, \eqn{r} is the fit's reference period (its
#' `ref`, the one closest to treatment when several are omitted; `-1` for
#' `did_bjs(pretrends = TRUE)`); for a fit that stores none, the latest
#' negative event time that has no coefficient (`-1` when it is missing). For
#' raw `betahat`, the coefficients are taken to be at event times
#' \eqn{-K-1, \dots, -2} (the `num_pre` = \eqn{K} pre periods), reference
#' \eqn{r = -1}, and \eqn{0, 1, \dots} after treatment (the layout of Roth's
#' He and Wang example). A negative slope is a downward trend: the power is the
#' same as for \eqn{|slope|} and the biases change sign. With `power`, the
#' slope is found by root-finding on \eqn{[0, \bar s]}, where at \eqn{\bar s}
#' the most detectable single coefficient alone reaches the target power (so
#' the joint power does too); the power increases with \eqn{|slope|}, and the
#' positive root is reported, as `slope_for_power()` does. `power` must
#' exceed the pre-test's size \eqn{1 - P(pass \mid \delta = 0)}, which is
#' `alpha` for one pre period and larger for several.
#'
#' **Numerics.** \eqn{P(pass)} is computed by Genz's (1992)
#' separation-of-variables integration (variables ordered as in Genz and Bretz
#' 2009, the last one integrated in closed form) on quasi-Monte-Carlo Korobov
#' lattice rules with the baker's transform and 12 random shifts from a fixed
#' internal seed (R's random number stream is not used, and results are
#' reproducible). The lattice size doubles until three
#' standard errors across shifts are below `tol` (default `1e-5`) for the
#' probability and, for each conditional mean, below `tol` (times the largest
#' standard error of `betahat` when that exceeds 1); the conditional means come from Stein's
#' identity (Tallis 1961), which turns the truncated moments into
#' \eqn{2K} further rectangle probabilities in \eqn{K - 1} dimensions. The
#' error estimates are returned in `power_error` and `mean_pass_error`.
#' Run time grows quickly with the number of pre periods and as `tol`
#' shrinks (roughly tenfold per tenfold smaller `tol`): at the default a
#' fraction of a second for \eqn{K \le 6}, longer when `power` is given (each
#' step of the root search integrates anew). For comparison, pretrends uses
#' mvtnorm's default absolute error of 1e-3.
#' With one pre period the closed forms are used (no integration). When the
#' slope is found from `power`, the number of points is held fixed during the
#' root search (so the power is a smooth function of the slope); the results
#' are then recomputed at the root with the adaptive rule, so the reported
#' `power` equals the target up to the integration error (exactly, for one
#' pre period or uncorrelated pre periods, where the integrand is constant).
#'
#' @param fit An event-study fit: [did_event()], [did_sa()],
#'   [did_bjs()] with `pretrends = TRUE`, or `aggregate(did_cs(...), type =
#'   "dynamic")`. Alternatively give `betahat`, `sigma` and `num_pre`.
#' @param betahat Event-study coefficients: the `num_pre` pre-period
#'   coefficients first (oldest first, reference period omitted), then the
#'   post periods. Used only with `fit = NULL`.
#' @param sigma Covariance matrix of `betahat` (symmetric, positive
#'   semi-definite; its pre-period block must be positive definite).
#' @param num_pre Number of pre-period coefficients at the start of `betahat`.
#' @param power Target power of the pre-test, strictly between its size and 1
#'   (e.g. 0.5 or 0.8): the linear trend detected with this probability is
#'   found and analysed.
#' @param slope Slope of a hypothesised linear violation, \eqn{\delta_t =
#'   slope \times (t - r)} (see Details). A finite number; may be negative.
#' @param delta Hypothesised violation of parallel trends, one value per
#'   coefficient (pre and post), in the order of `betahat` (for a fit, the
#'   order of the event times, reference period omitted).
#'   Give exactly one of `power`, `slope` and `delta`.
#' @param alpha Level of each pre-period t-test (critical value
#'   `qnorm(1 - alpha/2)`).
#' @param tol Accuracy of the numerical integration (three standard errors of
#'   the quasi-Monte-Carlo estimate of the pass probability and of the
#'   conditional means); see Numerics.
#' @param l_vec Optional weights over the post periods: the results are also
#'   given for \eqn{l'\hat\beta_{post}} (e.g. the average effect, `rep(1/P,
#'   P)`), as pretrends does with `eta`.
#' @return An object of class `dd_pretrends`, a list with
#'   * `power`, `power_error`: power of the pre-test against `delta`, and the
#'     integration error estimate;
#'   * `pass_prob` (\eqn{1 -} `power`), `size` (the power against
#'     \eqn{\delta = 0}), `bayes_factor`, `likelihood_ratio` (see Details);
#'   * `slope` (or `NULL` when `delta` was given), `target_power` (or `NULL`),
#'     `ref` (the reference period \eqn{r}), `alpha`, `crit` (the t critical
#'     value);
#'   * `table`: a data frame with one row per coefficient and, with `l_vec`,
#'     a last row `"l_vec"`: `term`, `event`, `type` (`"pre"`, `"post"`,
#'     `"l_vec"`), `estimate` (\eqn{\hat\beta}), `std.error`, `delta`
#'     (hypothesised violation = unconditional bias), `mean_pass`
#'     (\eqn{E[\hat\beta \mid pass]}; for post rows the bias conditional on
#'     passing), `mean_pass_error`, `distortion` (`mean_pass - delta`);
#'   * `betahat`, `sigma`, `delta`, `event`, `num_pre`, `l_vec`, `points`
#'     (lattice points used), `call`.
#'
#'   `as.data.frame()` returns `table`; `print()` summarises; `plot()` draws
#'   the event study with pointwise `1 - alpha` intervals, the hypothesised
#'   trend and the expectation after pre-testing.
#' @references Roth, J. (2022). Pretest with Caution: Event-Study Estimates
#'   after Testing for Parallel Trends. *American Economic Review: Insights*,
#'   4(3), 305-322. \doi{10.1257/aeri.20210236}
#'
#'   Roth, J. pretrends: Power Calculations and Visualization for Pre-Trends
#'   Tests (R package), <https://github.com/jonathandroth/pretrends>.
#'
#'   Genz, A. (1992). Numerical Computation of Multivariate Normal
#'   Probabilities. *Journal of Computational and Graphical Statistics*, 1(2),
#'   141-149.
#'
#'   Genz, A. and Bretz, F. (2009). *Computation of Multivariate Normal and t
#'   Probabilities*. Springer.
#'
#'   Tallis, G. M. (1961). The Moment Generating Function of the Truncated
#'   Multi-normal Distribution. *Journal of the Royal Statistical Society B*,
#'   23(1), 223-229.
#' @examples
#' # three pre periods (event times -4, -3, -2; reference -1), three post periods
#' b <- c(0.02, -0.01, 0.01, 0.10, 0.12, 0.15)
#' S <- 0.02^2 * (diag(6) + 0.3 * (1 - diag(6)))
#' pp <- pretrends_power(betahat = b, sigma = S, num_pre = 3, power = 0.5)
#' pp
#' as.data.frame(pp)
#' pretrends_power(betahat = b, sigma = S, num_pre = 3, slope = 0.01,
#'                 l_vec = rep(1/3, 3))
#' plot(pp)
#' @export
pretrends_power <- function(fit = NULL, betahat = NULL, sigma = NULL, num_pre = NULL,
                            power = NULL, slope = NULL, delta = NULL, alpha = 0.05, l_vec = NULL,
                            tol = 1e-5) {
  cl <- match.call()
  es <- dd_event_study(fit, betahat, sigma, num_pre, fun = "pretrends_power")
  alpha <- dd_check_alpha(alpha)
  if (!is.numeric(tol) || length(tol) != 1L || is.na(tol) || tol < 1e-9 || tol > 1e-2)
    dd_stop("`tol` must be a number between 1e-9 and 0.01; got %s.", dd_show(tol))
  K <- es$K; P <- es$P; n <- K + P
  if (is.null(fit)) {
    ev <- c(seq(-K - 1, -2), seq_len(P) - 1)
    ref <- -1
  } else {
    ev <- es$event
    ref <- pt_ref(fit, ev)
  }
  b <- unname(es$betahat); S <- unname(es$sigma)
  pre <- seq_len(K); post <- K + seq_len(P)
  given <- c(power = !is.null(power), slope = !is.null(slope), delta = !is.null(delta))
  if (sum(given) != 1L)
    dd_stop("`pretrends_power()` needs exactly one of `power`, `slope` and `delta`; got %s.",
            if (any(given)) paste0("`", names(given)[given], "`", collapse = " and ") else "none")
  Spre <- S[pre, pre, drop = FALSE]
  se <- sqrt(pmax(diag(S), 0))
  if (any(se[pre] <= 0))
    dd_stop("`sigma` must give every pre-period coefficient a positive variance (the pre-test divides by it); the variance at event time %s is 0.",
            dd_show(ev[pre][se[pre] <= 0]))
  if (K > 1L) {
    ew <- eigen(Spre, symmetric = TRUE, only.values = TRUE)$values
    if (min(ew) <= 1e-12 * max(ew))
      dd_stop("`sigma`: the block of the pre-period coefficients must be positive definite; its smallest eigenvalue is %s.",
              format(min(ew), digits = 3))
  }
  if (!is.null(l_vec)) l_vec <- dd_check_lvec(l_vec, P, nonzero = FALSE)
  crit <- stats::qnorm(1 - alpha / 2)
  lim <- crit * se[pre]
  # linear combinations beyond the pre periods: the post coefficients, then l'post
  A <- S[post, pre, drop = FALSE]
  mZ_of <- function(d) d[post]
  if (!is.null(l_vec)) {
    A <- rbind(A, crossprod(l_vec, S[post, pre, drop = FALSE]))
    mZ_of <- function(d) c(d[post], sum(l_vec * d[post]))
  }
  tol_scale <- max(1, se) # means: absolute, relative to the largest se when above 1
  # moments = FALSE: P(pass) only; levels: lattice sizes (see pt_maxlev)
  run <- function(d, lev = pt_minlev, maxlev = pt_maxlev, moments = TRUE) {
    ctrl <- c(tol, tol_scale, lev, maxlev, as.numeric(moments))
    if (moments) .Call(C_pretrends_mvn, as.double(d[pre]), Spre, -lim, lim, A, as.double(mZ_of(d)), ctrl)
    else .Call(C_pretrends_mvn, as.double(d[pre]), Spre, -lim, lim, matrix(0, 0, K), double(0), ctrl)
  }
  null_run <- run(numeric(n), moments = FALSE)
  size <- 1 - null_run$prob
  target <- NULL
  if (!is.null(delta)) {
    if (!is.numeric(delta) || length(delta) != n || anyNA(delta) || any(!is.finite(delta)))
      dd_stop("`delta` must be a finite numeric vector with one value per coefficient (%d: %d pre, %d post); got %s.",
              n, K, P, dd_show(delta))
    d <- as.double(delta)
    slope <- NULL
  } else {
    if (!is.null(power)) {
      if (!is.numeric(power) || length(power) != 1L || is.na(power) || power <= alpha || power >= 1)
        dd_stop("`power` must be a number strictly between `alpha` (%s) and 1; got %s.",
                format(alpha), dd_show(power))
      if (power <= size + 1e-9)
        dd_stop("`power` = %s is not above the size of the pre-test (%s, its rejection probability under parallel trends with %d pre periods); no trend has this power.",
                format(power), format(size, digits = 6), K)
      target <- as.double(power)
      found <- pt_slope_for_power(target, run, ev, ref, pre, se, crit)
      slope <- found$slope
    } else if (!is.numeric(slope) || length(slope) != 1L || is.na(slope) || !is.finite(slope)) {
      dd_stop("`slope` must be a single finite number; got %s.", dd_show(slope))
    }
    slope <- as.double(slope)
    d <- slope * (ev - ref)
  }
  r <- run(d)
  if (!isTRUE(r$converged))
    warning(sprintf("pretrends_power(): the integration stopped at %s points with error estimates %s (probability) and %s (means), above the tolerance.",
                    format(r$points), format(r$prob_error, digits = 2), format(max(r$mean_error), digits = 2)),
            call. = FALSE)
  pass <- r$prob
  m <- r$mean; merr <- r$mean_error
  if (!(pass > 0)) { m[] <- NA_real_; merr[] <- NA_real_ }
  # likelihood ratio of the observed pre coefficients (pretrends' "Likelihood Ratio")
  R <- chol(Spre)
  zb <- backsolve(R, b[pre], transpose = TRUE)
  zd <- backsolve(R, d[pre], transpose = TRUE)
  lr <- exp(sum(zd * zb) - 0.5 * sum(zd * zd))
  tab <- data.frame(term = paste0("event::", ev), event = ev,
                    type = rep(c("pre", "post"), c(K, P)),
                    estimate = b, std.error = se, delta = d,
                    mean_pass = m[seq_len(n)], mean_pass_error = merr[seq_len(n)],
                    stringsAsFactors = FALSE)
  if (!is.null(l_vec)) {
    tab <- rbind(tab, data.frame(term = "l_vec", event = NA_real_, type = "l_vec",
                                 estimate = sum(l_vec * b[post]),
                                 std.error = sqrt(max(0, drop(crossprod(l_vec, S[post, post] %*% l_vec)))),
                                 delta = sum(l_vec * d[post]), mean_pass = m[n + 1L],
                                 mean_pass_error = merr[n + 1L], stringsAsFactors = FALSE))
  }
  tab$distortion <- tab$mean_pass - tab$delta
  out <- list(power = 1 - pass, power_error = r$prob_error, pass_prob = pass, size = size,
              bayes_factor = pass / null_run$prob, likelihood_ratio = lr,
              slope = slope, target_power = target, ref = ref, alpha = alpha, crit = crit,
              table = tab, betahat = stats::setNames(b, ev), sigma = S, delta = stats::setNames(d, ev),
              event = ev, num_pre = K, l_vec = l_vec, points = r$points, call = cl)
  class(out) <- "dd_pretrends"
  out
}

# integration controls: first and last lattice level (0-based; level l has
# about 2^(10 + l) points per shift)
pt_minlev <- 0
pt_maxlev <- 10

# reference period of a fit (see the help page)
pt_ref <- function(fit, ev) {
  post0 <- min(ev[ev >= 0])
  r <- fit$event_study$reference
  if (is.numeric(r) && length(r)) {
    r <- r[is.finite(r) & r < post0]
    if (length(r)) return(max(r))
  }
  cand <- seq(-1, min(ev) - 1)
  cand[!(cand %in% ev)][1]
}

# slope with the requested power: bracket with the most detectable single
# coefficient, fix the number of points, then solve
pt_slope_for_power <- function(target, run, ev, ref, pre, se, crit) {
  # univariate power at standardised mean m: 1 - [Phi(c - m) - Phi(-c - m)]
  upow <- function(m) 1 - (stats::pnorm(crit - m) - stats::pnorm(-crit - m))
  m_star <- stats::uniroot(function(m) upow(m) - target, c(0, crit + 10), tol = 1e-14)$root
  h <- abs(ev[pre] - ref) / se[pre]
  s_hi <- m_star / max(h)
  dv <- function(s) s * (ev - ref)
  # one lattice size for the whole search, so that the power is a smooth function of the slope
  lev <- max(run(dv(s_hi / 2), moments = FALSE)$level, run(dv(s_hi), moments = FALSE)$level)
  pw_at <- function(s, l) 1 - run(dv(s), l, l, moments = FALSE)$prob
  # a coarse root on a small lattice, then a narrow bracket on the fine one
  lc <- min(lev, 2L)
  s0 <- stats::uniroot(function(s) pw_at(s, lc) - target, c(0, s_hi * 1.05),
                       extendInt = "upX", tol = 1e-9 * s_hi)$root
  f <- function(s) pw_at(s, lev) - target
  lo <- 0; hi <- s_hi * 1.05; flo <- NULL; fhi <- NULL
  for (w in c(1e-4, 1e-3, 1e-2, 1e-1)) {
    l1 <- max(0, s0 * (1 - w)); h1 <- s0 * (1 + w)
    f1 <- f(l1); f2 <- f(h1)
    if (f1 <= 0 && f2 >= 0) { lo <- l1; hi <- h1; flo <- f1; fhi <- f2; break }
  }
  if (is.null(flo)) { flo <- f(lo); fhi <- f(hi) }
  if (fhi < 0) dd_stop("internal error in pretrends_power(): no slope reaches power %s; please report.", format(target))
  root <- stats::uniroot(f, c(lo, hi), f.lower = flo, f.upper = fhi, tol = 1e-13 * s_hi, maxiter = 200)$root
  list(slope = root, level = lev)
}

#' @rdname pretrends_power
#' @param x A `dd_pretrends` object.
#' @param digits Significant digits to print.
#' @param ... Passed to [graphics::plot.default()] by `plot()`; not used by
#'   `print()` and `as.data.frame()` (an error if given).
#' @export
print.dd_pretrends <- function(x, digits = 4, ...) {
  dd_check_dots(list(...), "print()")
  cat("Pre-trend test power (Roth 2022)\n")
  cat(sprintf("Pre-test: reject if any of %d pre-period |t| > %s (alpha = %s per coefficient); size %s\n",
              x$num_pre, format(x$crit, digits = 6), format(x$alpha), format(x$size, digits = digits)))
  if (!is.null(x$slope)) {
    cat(sprintf("Hypothesised trend: delta_t = %s * (t - (%s))%s\n", format(x$slope, digits = digits),
                format(x$ref),
                if (!is.null(x$target_power)) sprintf(", the slope with power %s", format(x$target_power)) else ""))
  } else cat("Hypothesised violation: user-supplied delta\n")
  cat(sprintf("Power %s (error %s), P(pass) %s, Bayes factor %s, likelihood ratio %s\n\n",
              format(x$power, digits = digits), format(x$power_error, digits = 2),
              format(x$pass_prob, digits = digits), format(x$bayes_factor, digits = digits),
              format(x$likelihood_ratio, digits = digits)))
  tab <- x$table[, c("term", "type", "estimate", "std.error", "delta", "mean_pass", "distortion")]
  names(tab)[5:6] <- c("delta", "E[b | pass]")
  num <- vapply(tab, is.numeric, logical(1))
  tab[num] <- lapply(tab[num], signif, digits = digits)
  print(tab, row.names = FALSE)
  cat("delta: hypothesised bias (unconditional); E[b | pass]: mean after passing the pre-test (the bias conditional on passing, for post periods)\n")
  invisible(x)
}

#' @rdname pretrends_power
#' @param row.names,optional Ignored (for the generic).
#' @export
as.data.frame.dd_pretrends <- function(x, row.names = NULL, optional = FALSE, ...) {
  dd_as_df(x$table, row.names, list(...))
}

#' @rdname pretrends_power
#' @param main,xlab,ylab Plot titles.
#' @param col Colours of the estimates, the hypothesised trend and the
#'   expectation after pre-testing.
#' @param legend Draw the legend (default `TRUE`).
#' @param legend_pos Where: `"auto"` (default: the emptiest corner) or a
#'   keyword of [graphics::legend()].
#' @export
plot.dd_pretrends <- function(x, main = "Event study, hypothesised trend and expectation after pre-testing",
                              xlab = "Event time", ylab = "Estimate",
                              col = c("black", "#C0392B", "#1B6CA8"), legend = TRUE, legend_pos = "auto", ...) {
  legend <- dd_check_flag(legend, "legend")
  tab <- x$table[x$table$type != "l_vec", , drop = FALSE]
  z <- stats::qnorm(1 - x$alpha / 2)
  lo <- tab$estimate - z * tab$std.error; hi <- tab$estimate + z * tab$std.error
  ev <- c(tab$event, x$ref); o <- order(ev)
  tr <- c(tab$delta, 0)[o]; mp <- c(tab$mean_pass, 0)[o]
  yl <- range(c(lo, hi, tr, mp, 0), na.rm = TRUE)
  op <- graphics::par(las = 1, mar = c(4.2, 4.2, 3, 1)); on.exit(graphics::par(op))
  graphics::plot.default(tab$event, tab$estimate, type = "n", ylim = yl, xlim = range(ev),
                         main = main, xlab = xlab, ylab = ylab, xaxt = "n", ...)
  graphics::axis(1, at = sort(ev))
  graphics::abline(h = 0, col = "grey60", lty = 3)
  graphics::abline(v = x$ref + 0.5, col = "grey80", lty = 3)
  graphics::segments(tab$event, lo, tab$event, hi, col = col[1])
  graphics::points(c(tab$event, x$ref), c(tab$estimate, 0), pch = 19, col = col[1])
  graphics::lines(ev[o], tr, col = col[2], lwd = 2)
  graphics::points(ev[o], tr, pch = 17, col = col[2])
  graphics::lines(ev[o], mp, col = col[3], lwd = 2, lty = 2)
  graphics::points(ev[o], mp, pch = 15, col = col[3])
  if (legend)
    graphics::legend(dd_legend_pos(legend_pos, c(tab$event, tab$event, tab$event, ev[o], ev[o]), c(tab$estimate, lo, hi, tr, mp),
                                   range(ev), yl),
                     bty = "n", col = col, pch = c(19, 17, 15), lty = c(NA, 1, 2),
                     legend = c("Estimate", "Hypothesised trend", "Expectation after pre-testing"))
  invisible(x)
}
