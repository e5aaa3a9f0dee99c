#' Design effects and effective sample sizes of a survey-design fit
#'
#' For each estimate of a fit with a `survey` design, the ratio of its
#' design-based variance to the variance it would have under simple random
#' sampling of the same number of units from the same (weighted)
#' population -- Kish's design effect, as survey's `deff = TRUE` defines it
#' for a mean -- and the effective sample size `n / deff`.
#'
#' The estimate is linearised: with `psi_i` its influence function on unit
#' i (so that the estimate's error is `sum_i w_i psi_i / W`, `w_i` the
#' unit's weight and `W` their sum), the simple-random-sampling variance is
#' `s^2 (W - n) / (W n)` (`replace = TRUE`: `s^2 / n`), with `s^2 = n / (n
#' - 1) sum_i w_i (psi_i - psi_bar)^2 / W` the weighted variance of `psi`
#' (survey's `svyvar()`) and `n` the units with positive weight. For a mean
#' `psi_i = y_i - ybar` and this is survey's `svymean(deff = TRUE)`. The
#' design-based variance is the fit's analytic one (also when its standard
#' errors are bootstrapped).
#'
#' @param fit A fit with influence functions and a Taylor-linearisation
#'   `survey` design ([did_cs()], [did_dml()], [did_ddd()], [did_edid()],
#'   [did_dose()], [did_dcdh()]).
#' @param type `NULL` (the fit's estimates) or an [aggregate()] type.
#' @param replace `FALSE` (default): simple random sampling without
#'   replacement from a population of size `W`; `TRUE`: with replacement.
#' @return A data frame: term, estimate, std.error (design-based), se_srs,
#'   deff and n_eff.
#' @examples
#' set.seed(1)
#' d <- dd_sim_staggered(n_units = 400, n_periods = 4)
#' d$w <- runif(400, 5, 30)[d$id]
#' d$psu <- d$id %% 40
#' des <- survey_design(d, weights = "w", ids = "psu")
#' fit <- did_cs(d, "y", "id", "time", "first_treat", nboot = 0, survey = des)
#' dd_deff(fit)
#' dd_deff(fit, type = "simple")
#' @export
dd_deff <- function(fit, type = NULL, replace = FALSE) {
  replace <- dd_check_flag(replace, "replace")
  if (!inherits(fit, "dd_fit") || is.null(fit$inf))
    dd_stop("`fit` must be a fit with influence functions per unit (did_cs, did_dml, did_ddd, did_edid, did_dose, did_dcdh); got %s.",
            dd_show(class(fit)[1]))
  if (!inherits(fit$unit_cluster, "dd_svy_rows"))
    dd_stop("`fit` has no Taylor-linearisation survey design (`survey`); a design effect compares its design-based variance with simple random sampling.")
  K <- nrow(fit$coeftable)
  tab <- fit$coeftable
  U <- as.matrix(fit$inf)
  if (!is.null(type)) {
    ag <- aggregate(fit, type)
    tab <- ag$coeftable
    U <- U %*% ag$comb
  } else U <- U[, seq_len(K), drop = FALSE]
  n <- fit$n
  se <- dd_if_se(dd_ifs_dense(U), n, fit$unit_cluster)
  # the units' design weights (the fit's unit weights are rescaled)
  w <- fit$unit_cluster$w
  pos <- w > 0
  m <- sum(pos); W <- sum(w)
  if (!replace && W <= m)
    dd_stop("the weights sum to %s, not more than the %d units: they do not look like sampling weights (population counts); use replace = TRUE.",
            format(W), m)
  # psi: the estimate's error is sum_i w_i psi_i / W (the rows of U are n times each unit's share of it)
  psi <- U[pos, , drop = FALSE] / n * W / w[pos]
  wp <- w[pos]
  pbar <- colSums(wp * psi) / W
  s2 <- colSums(wp * sweep(psi, 2, pbar)^2) / W * m / (m - 1)
  vsrs <- if (replace) s2 / m else s2 * (W - m) / (W * m)
  deff <- se^2 / vsrs
  data.frame(term = tab$term, estimate = tab$estimate, std.error = se, se_srs = sqrt(vsrs), deff = deff,
             n_eff = m / deff, stringsAsFactors = FALSE)
}
