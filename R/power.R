#' Analytic power, minimum detectable effect and sample size for DiD designs
#'
#' Solves for whichever of `effect`, `n` and `power` is left `NULL`, for a
#' design in which a share `treated_share` of `n` units is treated, each unit
#' observed `n_pre` periods before and `n_post` after, and the effect
#' estimated by difference in differences (the post mean minus the pre mean,
#' treated minus control: the two-way fixed-effects estimate on a balanced
#' panel), by ANCOVA (post mean on the treatment and the pre mean) or by the
#' post-period comparison alone.
#'
#' The variance of one unit's summary `c'y` is `c' Sigma c` with `Sigma` the
#' covariance of a unit's `n_pre + n_post` outcomes: `sd^2` times an AR(1)
#' (`correlation = "ar1"`, `rho^|t - s|`) or equicorrelated
#' (`"equicorrelated"`, every pair `rho`) correlation matrix. The DiD
#' variance is then Burlig, Preonas and Woerman's (2020) formula with these
#' covariances (with equicorrelation, Frison and Pocock's (1992) "change"
#' variance `sd^2 (1 - rho) (1/n_pre + 1/n_post)`), and ANCOVA's is
#' Frison and Pocock's `b'Sigma b - (a'Sigma b)^2 / a'Sigma a` (large
#' samples). The estimate's variance is `V_unit / (p (1 - p) n)` times the
#' cluster design effect `1 + (cluster_size - 1) icc` (treatment assigned by
#' clusters of `cluster_size` units; `icc`: the intra-cluster correlation of
#' the units' analysed summary, e.g. their pre-post change) times the survey
#' design effect `deff`.
#'
#' **The test** (`test`). By default (`test = "t"`, new in this version;
#' the normal approximation was the only test before) the power is that of
#' the t test [did_twfe()] reports: the estimate over its clustered standard
#' error, compared with Student's t with `df = n_clusters - 1` degrees of
#' freedom (fixest's `t.df = "min"`, clusters minus one; `n_clusters =
#' ceiling(n / cluster_size)`, so `df = n - 1` with the default
#' `cluster_size = 1`, where did_twfe clusters by unit: the t test of the
#' design described above when the analysis clusters by the unit of
#' assignment). Under the alternative that statistic is noncentral t with
#' noncentrality \eqn{\lambda} = `effect / se`, so with \eqn{c} =
#' `qt(1 - alpha/2, df)` the power is \eqn{1 - F_{df,\lambda}(c) +
#' F_{df,\lambda}(-c)} (`pt(c, df, ncp)`; one-sided: \eqn{c} =
#' `qt(1 - alpha, df)` and \eqn{1 - F_{df,\lambda}(c)}). The minimum
#' detectable effect is the \eqn{\lambda} with exactly the target power
#' (both tails counted; found by root-finding) times `se`, and the sample
#' size the smallest `n` with at least the target power (the degrees of
#' freedom grow with `n`); `n` must give at least two clusters. On the
#' two-period design with 24 units and `effect = 1.6`, `sd = 1`, the t
#' power is 0.756, which the rejection rate of did_twfe's t test on
#' simulated panels matches (tests), while the normal approximation
#' over-states it (0.791). On two-period designs with equal group sizes
#' did_twfe's clustered t statistic is a constant multiple (its
#' small-sample correction) of the pooled two-sample t statistic, which is
#' exactly noncentral t with `n - 2` degrees of freedom; the t power
#' differs from that exact power by about 3e-4 with 24 units and 4e-3 with
#' 12 (powers from 0.15 to 0.85). With
#' more periods, clustering or other estimators it is the usual
#' approximation.
#'
#' `test = "z"` keeps the normal approximation (the test of diff-diff's
#' power functions): power `pnorm(d - z_a) + pnorm(-d - z_a)` with `d =
#' effect / se` and `z_a = qnorm(1 - alpha/2)` (one-sided: `pnorm(d - z_a)`
#' with `z_a = qnorm(1 - alpha)`); the minimum detectable effect is the
#' conventional `(z_a + z_power) se`, which leaves out the far tail, and the
#' sample size the smallest `n` whose variance gives that effect, rounded
#' up. Either way `n_treated = ceiling(n p)`.
#'
#' @section Checked against:
#' The Python library diff-diff (3.3.2) on two-period designs, where its
#' variance `2 sd^2 (1/n_t + 1/n_c)` is the DiD variance: with `test =
#' "z"` (diff-diff's normal approximation) equal minimum detectable effects,
#' power and sample sizes (tests). For more periods
#' diff-diff uses `sd^2 (1/n_t + 1/n_c) (1 + (T - 1) rho) / T`, the variance
#' of a difference of time-averaged levels rather than of a DiD (it ignores
#' the pre/post split, grows with `rho`, and its panel sample sizes carry an
#' extra factor 2); dd_power() follows Burlig, Preonas and Woerman and Frison
#' and Pocock instead, which the tests check against simulated panels.
#'
#' @param effect Effect size(s) to detect (> 0; the direction comes from
#'   `alternative`), or `NULL` to solve for the minimum detectable effect.
#' @param n Number of units (treated and control), or `NULL` to solve for it.
#' @param power Target power (between `alpha` and 1), or `NULL` to compute it.
#' @param sd Standard deviation of one outcome observation (total: unit
#'   effect and noise).
#' @param n_pre,n_post Periods observed before and after treatment.
#' @param rho Correlation of a unit's outcomes across periods (see
#'   `correlation`).
#' @param correlation `"equicorrelated"` (default: a unit effect, every pair
#'   `rho`) or `"ar1"` (`rho^|t - s|`).
#' @param estimator `"did"` (default), `"ancova"` or `"post"`.
#' @param treated_share Share of units treated.
#' @param cluster_size,icc Units per cluster of assignment and the
#'   intra-cluster correlation of the analysed unit summary (in `[0, 1)`).
#' @param deff Survey design effect (a variance multiplier).
#' @param alpha Significance level.
#' @param alternative `"two.sided"`, `"greater"` or `"less"`.
#' @param test `"t"` (default: the t test with `n_clusters - 1` degrees of
#'   freedom that did_twfe reports, noncentral t power) or `"z"` (the normal
#'   approximation, the only test before). See "The test" in Details.
#' @return A data frame of class `dd_power`, one row per value of the vector
#'   argument: the inputs, `se`, `effect` (the minimum detectable effect when
#'   solved for), `power`, `n`, `n_treated`, `n_control`, `n_clusters`,
#'   `test`, `df` (the t test's degrees of freedom; `Inf` for `"z"`) and
#'   `solved` (what was solved for).
#' @references Burlig, F., Preonas, L. and Woerman, M. (2020). Panel data and
#'   experimental design. Journal of Development Economics 144.
#'   Frison, L. and Pocock, S. J. (1992). Repeated measures in clinical
#'   trials. Statistics in Medicine 11(13).
#' @examples
#' # minimum detectable effect with 200 units, 4 + 4 periods, rho = 0.5
#' dd_power(n = 200, n_pre = 4, n_post = 4, rho = 0.5, power = 0.8)
#' # units needed to detect 0.2 SD with 80% power, AR(1) errors, clustered by 10
#' dd_power(effect = 0.2, power = 0.8, n_pre = 3, n_post = 3, rho = 0.6, correlation = "ar1",
#'          cluster_size = 10, icc = 0.05)
#' # a power curve
#' dd_power(effect = seq(0.05, 0.4, by = 0.05), n = 300, n_pre = 2, n_post = 2, rho = 0.4)
#' @export
dd_power <- function(effect = NULL, n = NULL, power = NULL, sd = 1, n_pre = 1, n_post = 1, rho = 0,
                     correlation = c("equicorrelated", "ar1"), estimator = c("did", "ancova", "post"),
                     treated_share = 0.5, cluster_size = 1, icc = 0, deff = 1, alpha = 0.05,
                     alternative = c("two.sided", "greater", "less"), test = c("t", "z")) {
  correlation <- dd_match_arg(correlation[1], c("equicorrelated", "ar1"), "correlation")
  test <- dd_match_arg(test[1], c("t", "z"), "test")
  estimator <- dd_match_arg(estimator[1], c("did", "ancova", "post"), "estimator")
  alternative <- dd_match_arg(alternative[1], c("two.sided", "greater", "less"), "alternative")
  miss <- c(effect = is.null(effect), n = is.null(n), power = is.null(power))
  if (sum(miss) != 1L)
    dd_stop("give two of `effect`, `n` and `power` and leave the one to solve for NULL; %s.",
            if (sum(miss) == 0L) "all three are given"
            else paste(paste0("`", names(miss)[miss], "`", collapse = " and "), "are NULL"))
  num <- function(x, arg, lo, hi, lo_open = TRUE, hi_open = TRUE, len1 = TRUE) {
    if (!is.numeric(x) || !length(x) || anyNA(x) || (len1 && length(x) != 1L))
      dd_stop("`%s` must be %s; it is %s.", arg, if (len1) "one number" else "numeric", dd_show(x))
    bad <- (if (lo_open) x <= lo else x < lo) | (if (hi_open) x >= hi else x > hi)
    if (any(bad))
      dd_stop("`%s` = %s must lie in %s%s, %s%s.", arg, dd_show(x[bad][1]), if (lo_open) "(" else "[", format(lo),
              format(hi), if (hi_open) ")" else "]")
    x
  }
  if (!is.null(effect)) num(effect, "effect", 0, Inf, len1 = FALSE)
  if (!is.null(power)) num(power, "power", alpha, 1, len1 = FALSE)
  if (!is.null(n)) {
    num(n, "n", 2, Inf, lo_open = FALSE, len1 = FALSE)
    if (any(n != round(n))) dd_stop("`n` = %s must be whole numbers of units.", dd_show(n[n != round(n)][1]))
  }
  num(sd, "sd", 0, Inf)
  n_pre <- dd_check_count(n_pre, "n_pre", min = 1)
  n_post <- dd_check_count(n_post, "n_post", min = 1)
  num(rho, "rho", -1, 1)
  num(treated_share, "treated_share", 0, 1)
  cluster_size <- dd_check_count(cluster_size, "cluster_size", min = 1)
  num(icc, "icc", 0, 1, lo_open = FALSE)
  num(deff, "deff", 0, Inf)
  num(alpha, "alpha", 0, 0.5)
  # one unit's covariance and the variance of its summary
  Tn <- n_pre + n_post
  ix <- seq_len(Tn)
  R <- if (correlation == "ar1") rho^abs(outer(ix, ix, "-")) else { m <- matrix(rho, Tn, Tn); diag(m) <- 1; m }
  if (min(eigen(R, symmetric = TRUE, only.values = TRUE)$values) < -1e-12)
    dd_stop("`rho` = %s with %d periods does not give a valid (positive semi-definite) correlation matrix.",
            format(rho), Tn)
  S <- sd^2 * R
  a <- c(rep(1 / n_pre, n_pre), rep(0, n_post)); b <- c(rep(0, n_pre), rep(1 / n_post, n_post))
  v_unit <- switch(estimator,
    did = drop(crossprod(b - a, S %*% (b - a))),
    post = drop(crossprod(b, S %*% b)),
    ancova = drop(crossprod(b, S %*% b)) - drop(crossprod(a, S %*% b))^2 / drop(crossprod(a, S %*% a)))
  if (v_unit <= 0)
    dd_stop("the estimator's variance is zero for these settings (`rho` = %s): nothing to power.", format(rho))
  p <- treated_share
  mult <- v_unit * (1 + (cluster_size - 1) * icc) * deff / (p * (1 - p))
  a1 <- if (alternative == "two.sided") alpha / 2 else alpha
  z_a <- stats::qnorm(1 - a1)
  pow <- function(delta, se) {
    d <- delta / se
    if (alternative == "two.sided") stats::pnorm(d - z_a) + stats::pnorm(-d - z_a) else stats::pnorm(d - z_a)
  }
  # the t test: df = clusters - 1, noncentrality lambda = effect / se
  df_of <- function(n) ceiling(n / cluster_size) - 1
  pow_t <- function(lambda, df) {
    cr <- stats::qt(1 - a1, df)
    up <- stats::pt(cr, df, ncp = lambda, lower.tail = FALSE)
    if (alternative == "two.sided") up + stats::pt(-cr, df, ncp = lambda) else up
  }
  check_df <- function(n) {
    bad <- df_of(n) < 1
    if (any(bad))
      dd_stop("`n` = %s with `cluster_size` = %d gives %d cluster(s); the t test (`test` = \"t\", df = clusters - 1) needs at least 2. Raise `n` or use test = \"z\".",
              format(n[bad][1]), cluster_size, ceiling(n[bad][1] / cluster_size))
  }
  # the noncentrality with power `target` at df (the power increases in it)
  lambda_for <- function(target, df) {
    f <- function(l) pow_t(l, df) - target
    hi <- 2 * (z_a + stats::qnorm(target)) + 2
    while (f(hi) < 0) hi <- 2 * hi
    stats::uniroot(f, c(0, hi), tol = 1e-12)$root
  }
  # the smallest n >= 2 clusters with power >= target (the power increases
  # in n: the noncentrality and the degrees of freedom both grow)
  n_for <- function(delta, target) {
    ok <- function(n) pow_t(delta / sqrt(mult / n), df_of(n)) >= target
    lo <- max(2, cluster_size + 1) - 1                          # fails (or too few clusters)
    hi <- max(lo + 1, ceiling((z_a + stats::qnorm(target))^2 * mult / delta^2))
    while (!ok(hi)) { lo <- hi; hi <- 2 * hi }
    while (hi - lo > 1) { mid <- floor((lo + hi) / 2); if (ok(mid)) hi <- mid else lo <- mid }
    hi
  }
  if (miss[["power"]]) {
    g <- expand.grid(effect = effect, n = n)
    g$se <- sqrt(mult / g$n)
    if (test == "t") {
      check_df(g$n)
      g$power <- pow_t(g$effect / g$se, df_of(g$n))
    } else g$power <- pow(g$effect, g$se)
  } else if (miss[["effect"]]) {
    g <- expand.grid(power = power, n = n)
    g$se <- sqrt(mult / g$n)
    if (test == "t") {
      check_df(g$n)
      g$effect <- mapply(lambda_for, g$power, df_of(g$n)) * g$se
    } else g$effect <- (z_a + stats::qnorm(g$power)) * g$se
  } else {
    g <- expand.grid(effect = effect, power = power)
    g$n <- if (test == "t") mapply(n_for, g$effect, g$power)
           else pmax(2, ceiling((z_a + stats::qnorm(g$power))^2 * mult / g$effect^2))
    g$se <- sqrt(mult / g$n)
  }
  g$n_treated <- ceiling(g$n * p)
  g$n_control <- g$n - g$n_treated
  g$n_clusters <- ceiling(g$n / cluster_size)
  out <- data.frame(solved = names(miss)[miss], effect = g$effect, power = g$power, n = g$n,
                    n_treated = g$n_treated, n_control = g$n_control, n_clusters = g$n_clusters, se = g$se,
                    sd = sd, n_pre = n_pre, n_post = n_post, rho = rho, correlation = correlation,
                    estimator = estimator, treated_share = p, cluster_size = cluster_size, icc = icc, deff = deff,
                    alpha = alpha, alternative = alternative, test = test,
                    df = if (test == "t") df_of(g$n) else Inf, stringsAsFactors = FALSE)
  if (any(out$n_treated < 1 | out$n_control < 1))
    warning("some designs have no treated or no control unit at this `treated_share`: raise `n`.", call. = FALSE)
  structure(out, class = c("dd_power", "data.frame"))
}

#' @export
print.dd_power <- function(x, digits = 4, ...) {
  dd_check_dots(list(...), "print()")
  r <- x[1, ]
  what <- switch(r$solved, effect = "minimum detectable effect", n = "required sample size", power = "power")
  cat(sprintf("DiD power analysis (%s): %s estimator, %d pre + %d post periods, %s correlation %s\n", what,
              r$estimator, r$n_pre, r$n_post, if (r$correlation == "ar1") "AR(1)" else "equicorrelated",
              format(r$rho)))
  tst <- r$test %||% "z"                               # results of earlier versions: z
  cat(sprintf("sd %s; treated share %s; cluster size %d, ICC %s; design effect %s; %s %s at alpha = %s\n",
              format(r$sd), format(r$treated_share), r$cluster_size, format(r$icc), format(r$deff),
              if (r$alternative == "two.sided") "two-sided" else paste0("one-sided (", r$alternative, ")"),
              if (tst == "t") "t test (noncentral t power, df = clusters - 1; test = \"t\")"
              else "z test (normal approximation; test = \"z\")",
              format(r$alpha)))
  cols <- c("effect", "power", "n", "n_treated", "n_control", if (r$cluster_size > 1) "n_clusters",
            if (tst == "t") "df", "se")
  print(as.data.frame(x)[, cols], digits = digits, row.names = FALSE)
  invisible(x)
}
