#' Simulated panel with an absorbing binary outcome (duration DiD)
#'
#' A balanced panel for [did_duration()] with a known effect. Periods are
#' `1, ..., n_periods`; a share `treated_share` of units is treated from
#' `first_treat` on (`first_treat` 0 for the others). A share
#' `absorbed_share` of each group (treated, never treated) is absorbed
#' already in period 1; afterwards a unit of group k still at risk is
#' absorbed between periods j - 1 and j with probability `1 - exp(-h_kj)`,
#' `h_kj` the hazard integrated over that interval. The never treated have
#' `h_0j = hazard[j]`; the treated, without treatment, `hazard[j] + gap`
#' (common dynamics, the paper's Eq. 2.3) or `gap * hazard[j]` (proportional
#' hazards, Eq. 2.4); with treatment (intervals ending at `first_treat` or
#' later) their hazard is multiplied by `1 + effect`. So the identifying
#' restriction of `method` holds exactly, and the true effects are
#' `ATT(t) = S0_1t - S_1t` with `S0_1t = (1 - p_1) exp(-sum_{j <= t} (untreated
#' hazard))` and `S_1t` the same with the treated hazard (population values,
#' attribute `true_att`).
#'
#' @param n_units Number of units.
#' @param n_periods Number of periods (at least 3).
#' @param first_treat The treated group's first treated period (at least 3).
#' @param treated_share Share of treated units.
#' @param hazard The never treated's integrated hazard per interval
#'   (`n_periods` values, the first unused; positive); default `0.1 + 0.1 *
#'   j / n_periods`.
#' @param gap The treated's untreated hazard: additive gap (common dynamics)
#'   or ratio (proportional hazards).
#' @param effect Proportional change of the treated's hazard under treatment
#'   (> -1).
#' @param absorbed_share Shares absorbed in period 1 (treated, never
#'   treated).
#' @param method `"common_dynamics"` or `"proportional_hazards"`: which
#'   restriction the untreated hazards satisfy.
#' @return A data frame (`id`, `time`, `first_treat`, `treated`, `y`) with
#'   attributes `true_att` (named `ATT(t)`, and `ATT`, their mean) and
#'   `true_c` (the `gap`).
#' @examples
#' set.seed(2)
#' d <- dd_sim_duration(n_units = 200, n_periods = 5, first_treat = 4)
#' head(d)
#' attr(d, "true_att")
#' @export
dd_sim_duration <- function(n_units = 1000, n_periods = 8, first_treat = 5, treated_share = 0.5, hazard = NULL,
                            gap = 0.05, effect = 0.5, absorbed_share = c(0.2, 0.1),
                            method = c("common_dynamics", "proportional_hazards")) {
  method <- dd_match_arg(method[1], c("common_dynamics", "proportional_hazards"), "method")
  n_units <- dd_check_count(n_units, "n_units", min = 2)
  T <- dd_check_count(n_periods, "n_periods", min = 3)
  g <- dd_check_count(first_treat, "first_treat", min = 3)
  if (g > T) dd_stop("`first_treat` must be at most `n_periods` (%s); got %s.", format(T), format(g))
  if (is.null(hazard)) hazard <- 0.1 + 0.1 * seq_len(T) / T
  if (!is.numeric(hazard) || length(hazard) != T || anyNA(hazard) || any(hazard[-1] <= 0) || any(!is.finite(hazard)))
    dd_stop("`hazard` must be %d positive finite numbers; got %s.", T, dd_show(hazard))
  chk <- function(x, arg, lo, hi, n = 1L)
    if (!is.numeric(x) || length(x) != n || anyNA(x) || any(x <= lo) || any(x >= hi))
      dd_stop("`%s` must be %s number(s) in (%s, %s); got %s.", arg, n, format(lo), format(hi), dd_show(x))
  chk(treated_share, "treated_share", 0, 1)
  chk(effect, "effect", -1, Inf)
  gap <- dd_check_number(gap, "gap")
  if (!is.numeric(absorbed_share) || length(absorbed_share) != 2L || anyNA(absorbed_share) ||
      any(absorbed_share < 0) || any(absorbed_share >= 1))
    dd_stop("`absorbed_share` must be 2 numbers in [0, 1); got %s.", dd_show(absorbed_share))
  h0 <- c(0, hazard[-1])
  h1u <- if (method == "common_dynamics") c(0, hazard[-1] + gap) else c(0, gap * hazard[-1])
  if (any(h1u < 0)) dd_stop("`gap` = %s makes the treated's untreated hazard negative.", format(gap))
  h1 <- h1u * ifelse(seq_len(T) >= g, 1 + effect, 1)
  n1 <- round(treated_share * n_units)
  if (n1 < 1 || n1 >= n_units)
    dd_stop("`treated_share` = %s gives %d treated of %d units; the design needs at least one treated and one never-treated unit.",
            format(treated_share), as.integer(n1), as.integer(n_units))
  trt <- seq_len(n_units) <= n1
  # absorption period: 1 with probability p_k, else the first j whose
  # cumulative hazard reaches an Exp(1) draw (Inf: never absorbed)
  first_in <- stats::runif(n_units) < ifelse(trt, absorbed_share[1], absorbed_share[2])
  ex <- stats::rexp(n_units)
  absorb <- ifelse(first_in, 1, Inf)
  for (k in 1:2) {
    s <- which(!first_in & (trt == (k == 1L)))
    H <- cumsum(if (k == 1L) h1 else h0)
    j <- findInterval(ex[s], H, left.open = TRUE) + 1L
    absorb[s] <- ifelse(j > T, Inf, j)
  }
  d <- expand.grid(time = seq_len(T), id = seq_len(n_units))[, c("id", "time")]
  d$first_treat <- ifelse(trt[d$id], g, 0)
  d$treated <- as.integer(trt[d$id])
  d$y <- as.integer(d$time >= absorb[d$id])
  post <- g:T
  true <- (1 - absorbed_share[1]) * (exp(-cumsum(h1u)) - exp(-cumsum(h1)))[post]
  attr(d, "true_att") <- c(ATT = mean(true), stats::setNames(true, sprintf("ATT(%d)", post)))
  attr(d, "true_c") <- gap
  d
}
