# dd_sim_county(): a simulated county panel with the layout of the did
# package's mpdta (issue 44, item 5). mpdta is GPL-2 and diffdiff is MIT, so
# nothing of it is copied: the layout (500 counties, 2003-2007, cohorts
# 2004/2006/2007 with mpdta's cohort sizes, never-treated counties, a
# time-invariant log-population covariate) is reproduced by simulation.

#' Simulated county panel (the layout of did's mpdta)
#'
#' A simulated panel with the layout of the `mpdta` data of the did package
#' (county teen employment and minimum wages), so that tutorials written for
#' `did::att_gt()` run on it after changing only the function name
#' ([did_cs()]). **The numbers are simulated: this is not the did package's
#' data** (nor the employment records behind it), only its layout: by
#' default 500 counties, 2003-2007, counties first treated in 2004, 2006 and
#' 2007 (20, 40 and 131 counties, mpdta's cohort sizes) and 309 never
#' treated. The shipped file `sim_county.csv` ([diffdiff_data]) is this
#' generator's output under the seed stated there.
#'
#' The log population `lpop` is drawn per county from a normal with mean 3.2
#' and SD 1.5 (constant over time). Cohorts are drawn without replacement,
#' cohort by cohort (in the order of `cohorts`), with probabilities
#' proportional to \eqn{\exp(-\mathrm{selection} \cdot z_i)}, \eqn{z_i} the
#' standardised `lpop`: with `selection > 0` smaller counties are treated more
#' often. The log teen employment is
#' \deqn{\mathrm{lemp}_{it} = 2.6 + \mathrm{lpop}_i + a_i + \gamma_t +
#'   \mathrm{x\_trend} \cdot (\mathrm{lpop}_i - 3.2)(t - 1) + \tau_{it} +
#'   \varepsilon_{it},}
#' with county effects \eqn{a_i} (SD `sd_unit`), year effects \eqn{\gamma_t}
#' (a random walk with steps of SD 0.03, `t` the year's position), errors
#' \eqn{\varepsilon_{it}} (SD `sd`), and the effect \eqn{\tau_{it} =
#' \mathrm{effect} + \mathrm{dynamic} \cdot (\mathrm{year} - g)} from the
#' first treated year \eqn{g} on. So parallel trends hold conditionally on
#' `lpop` (the trend differs by `lpop` when `x_trend` is not 0), not
#' unconditionally when `selection` is not 0: `did_cs(..., xformla = ~lpop)`
#' recovers the effects, the estimator without covariates is biased (by
#' about `x_trend` times the cohort's mean `lpop` gap to the never treated
#' per year of distance from the base period).
#'
#' Random numbers are drawn in this order: `lpop`, the cohorts, the county
#' effects, the year effects, the errors; results are reproducible under
#' [set.seed()].
#'
#' @param n_units Number of counties.
#' @param years The years (consecutive whole numbers, at least two).
#' @param cohorts First treated years (within `years`, after the first).
#' @param cohort_shares Share of the counties in each cohort (one per
#'   cohort; the counts are `round(n_units * cohort_shares)`); the others
#'   are never treated (at least one must be).
#' @param effect Effect on `lemp` in the first treated year.
#' @param dynamic Change of the effect per year since treatment.
#' @param x_trend Difference in the yearly trend of `lemp` per unit of
#'   `lpop`.
#' @param selection How strongly small counties (low `lpop`) are selected
#'   into treatment (0: at random).
#' @param sd,sd_unit SDs of the errors and of the county effects.
#' @return A data frame sorted by county then year, with mpdta's columns
#'   `year`, `countyreal` (county id, `1..n_units`), `lpop`, `lemp`,
#'   `first.treat` (first treated year; 0 for never treated) and `treat`
#'   (1 for counties ever treated), plus `effect_true`, the effect planted in
#'   each row (0 before treatment and for the never treated).
#' @seealso [diffdiff_data] (`sim_county.csv`), [dd_sim] for the other
#'   generators.
#' @examples
#' set.seed(1)
#' d <- dd_sim_county()
#' table(d$first.treat[d$year == 2003])
#' fit <- did_cs(d, "lemp", "countyreal", "year", "first.treat", xformla = ~lpop, nboot = 0)
#' aggregate(fit, "simple")
#' @export
dd_sim_county <- function(n_units = 500, years = 2003:2007, cohorts = c(2004, 2006, 2007),
                          cohort_shares = c(20, 40, 131) / 500, effect = -0.02, dynamic = -0.03, x_trend = 0.01,
                          selection = 0.5, sd = 0.1, sd_unit = 0.3) {
  n_units <- dd_check_count(n_units, "n_units", min = 2)
  if (!is.numeric(years) || length(years) < 2L || anyNA(years) || any(years != round(years)) ||
      any(diff(years) != 1))
    dd_stop("`years` must be at least two consecutive whole years in increasing order; got %s.", dd_show(years))
  if (!is.numeric(cohorts) || !length(cohorts) || anyNA(cohorts) || anyDuplicated(cohorts) ||
      !all(cohorts %in% years[-1L]))
    dd_stop("`cohorts` must be distinct years of `years` after the first (%s); got %s.",
            format(years[1L]), dd_show(cohorts))
  if (!is.numeric(cohort_shares) || length(cohort_shares) != length(cohorts) || anyNA(cohort_shares) ||
      any(cohort_shares < 0 | cohort_shares > 1))
    dd_stop("`cohort_shares` must be %d numbers in [0, 1], one per cohort; got %s.", length(cohorts),
            dd_show(cohort_shares))
  ng <- round(n_units * cohort_shares)
  if (sum(ng) >= n_units)
    dd_stop("`cohort_shares` = %s leaves no never-treated county among `n_units` = %d.", dd_show(cohort_shares),
            n_units)
  effect <- dd_check_number(effect, "effect"); dynamic <- dd_check_number(dynamic, "dynamic")
  x_trend <- dd_check_number(x_trend, "x_trend"); selection <- dd_check_number(selection, "selection")
  sd <- dd_check_number(sd, "sd", 0, Inf, "one finite number >= 0")
  sd_unit <- dd_check_number(sd_unit, "sd_unit", 0, Inf, "one finite number >= 0")
  T <- length(years)
  lpop <- stats::rnorm(n_units, 3.2, 1.5)
  z <- (lpop - mean(lpop)) / stats::sd(lpop)
  w <- exp(-selection * z)
  g <- numeric(n_units); left <- seq_len(n_units)
  for (k in seq_along(cohorts)) {
    if (ng[k] == 0) next
    pick <- left[sample.int(length(left), ng[k], prob = w[left])]
    g[pick] <- cohorts[k]
    left <- setdiff(left, pick)
  }
  a <- stats::rnorm(n_units, 0, sd_unit)
  gam <- cumsum(stats::rnorm(T, 0, 0.03))
  id <- rep(seq_len(n_units), each = T); ti <- rep(seq_len(T), n_units); yr <- years[ti]; gg <- g[id]
  tau <- ifelse(gg > 0 & yr >= gg, effect + dynamic * (yr - gg), 0)
  lemp <- 2.6 + lpop[id] + a[id] + gam[ti] + x_trend * (lpop[id] - 3.2) * (ti - 1) + tau +
    stats::rnorm(n_units * T, 0, sd)
  data.frame(year = as.integer(yr), countyreal = id, lpop = lpop[id], lemp = lemp, first.treat = gg,
             treat = as.integer(gg > 0), effect_true = tau)
}
