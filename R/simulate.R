#' Simulated DiD panels
#'
#' Generators of balanced panels with a known effect, for power analysis
#' ([dd_simulate_power()]), examples and tests; reproducible under
#' [set.seed()]. Outcomes are `unit effect + time effect + error`, errors
#' AR(1) within unit (`rho`), plus the treatment effect on treated
#' observations.
#'
#' * `dd_sim_basic()`: a block design: a share `treated_share` of units is
#'   treated from period `n_pre + 1` on (`first_treat`; 0 for controls),
#'   with indicators `treat`, `post` and `D`.
#' * `dd_sim_staggered()`: staggered adoption: units are spread evenly over
#'   the `cohorts` (first treated periods) and the never treated
#'   (`never_share`, `first_treat = 0`); the effect at event time `e >= 0` is
#'   `effect + dynamic * e`.
#'
#' @param n_units Number of units.
#' @param n_pre,n_post Periods before and after treatment (`dd_sim_basic`).
#' @param n_periods Number of periods (`dd_sim_staggered`).
#' @param cohorts First treated periods (`dd_sim_staggered`; default: every
#'   second period from 3 to `n_periods - 1`).
#' @param treated_share,never_share Share of treated (basic) or
#'   never-treated (staggered) units.
#' @param effect Treatment effect (at adoption).
#' @param dynamic Change of the effect per period since adoption.
#' @param rho AR(1) coefficient of the errors.
#' @param sd,sd_unit Standard deviations of the errors (stationary) and of
#'   the unit effects.
#' @param trend Common time trend per period.
#' @param trend_treated Extra trend per period of the (ever-)treated units
#'   (`dd_sim_basic`, `dd_sim_staggered`): parallel trends fail unless 0.
#' @param panel `FALSE` for repeated cross-sections (`dd_sim_staggered`): each
#'   row a new unit (own `id` and unit effect, `rho` unused), `n_units` a period.
#' * `dd_sim_factor()`: `n_treated` units adopt at `first_treat`, and the
#'   outcomes add `n_factors` interactive effects `lambda_i' f_t` (factors
#'   are random walks) whose loadings are larger by `loading_shift` for the
#'   treated units, so that parallel trends fail but a factor model (or
#'   synthetic control) holds.
#' * `dd_sim_ddd()`: staggered adoption with an eligibility partition
#'   (`eligible`, a share `eligible_share` of every cohort): only eligible
#'   units of treated cohorts are affected, and cohort x period and
#'   eligibility x period shocks (`sd_shock`) break both double differences
#'   but not the triple difference.
#' * `dd_sim_survey()`: a block design in `n_strata` strata of `n_psu` PSUs
#'   each, treatment assigned by PSU within stratum, a PSU effect on the
#'   post-period change (`sd_psu`) and sampling weights that differ by
#'   stratum (columns `stratum`, `psu`, `weight`).
#' * `dd_sim_continuous()`: staggered adoption of a continuous dose: each
#'   treated unit draws a dose (log-normal, `dose_meanlog`, `dose_sdlog`;
#'   constant within unit, 0 for the never treated) and its effect from
#'   adoption on is `effect + slope * dose` (so ATT(d) is linear in the dose
#'   and the average causal response is `slope`).
#' * `dd_sim_reversible()`: a treatment that switches once, in either
#'   direction: a share `treated_share` of units start treated and stop at a
#'   random period (leavers), the others start untreated and start at a
#'   random period (joiners); the effect of being treated is drawn per unit
#'   and period (mean `effect`, SD `effect_sd`).
#' * `dd_sim_spillover()`: staggered adoption (as `dd_sim_staggered()`) of
#'   units scattered at random over a region of `region_km` x `region_km`
#'   kilometres (columns `lat`, `lon`, degrees, around 37 N 98 W); an
#'   untreated unit at distance `d` from the nearest unit treated by then
#'   gains `spillover * (1 - d / reach)` when `d < reach` (Butts 2021's
#'   set-up; [did_spillover()]), so that nearby controls are contaminated.
#' * On their own pages: [dd_sim_synth()] (synthetic control: few treated
#'   units in the donors' convex hull) and [dd_sim_county()] (a county panel
#'   with the layout of did's `mpdta`, the generator of `sim_county.csv`).
#' @param n_treated,first_treat Treated units and their adoption period
#'   (`dd_sim_factor`; default: the last quarter of the periods).
#' @param n_factors,loading_shift Number of factors and the treated units'
#'   loading shift (`dd_sim_factor`).
#' @param eligible_share,sd_shock Share of eligible units and the SD of the
#'   group x period shocks (`dd_sim_ddd`).
#' @param n_strata,n_psu,units_per_psu,sd_psu Survey layout and the SD of
#'   the PSU effect on the post-period outcomes (`dd_sim_survey`).
#' @param slope,dose_meanlog,dose_sdlog Effect per unit of dose and the
#'   log-normal dose distribution (`dd_sim_continuous`).
#' @param effect_sd SD of the unit-period effects (`dd_sim_reversible`).
#' @param spillover,reach,region_km The spillover on an untreated unit next
#'   to a treated one, the distance (km) at which it vanishes, and the side
#'   of the square region (`dd_sim_spillover`).
#' @return A data frame: `id`, `time`, `first_treat`, `D` (treated
#'   observation), `y` (and `treat`, `post` for `dd_sim_basic`; `eligible`
#'   for `dd_sim_ddd`; `stratum`, `psu`, `weight` for `dd_sim_survey`;
#'   `dose` for `dd_sim_continuous`; `dd_sim_reversible` has `id`, `time`,
#'   `D`, `y`; `dd_sim_spillover` adds `lat` and `lon`).
#' @examples
#' set.seed(1)
#' head(dd_sim_basic(n_units = 50, n_pre = 2, n_post = 2, effect = 0.5))
#' d <- dd_sim_staggered(n_units = 300, n_periods = 8, effect = 1, dynamic = 0.2)
#' table(d$first_treat[d$time == 1])
#' dc <- dd_sim_continuous(n_units = 200, n_periods = 4, cohorts = 3)
#' summary(dc$dose[dc$first_treat > 0])
#' dr <- dd_sim_reversible(n_units = 50, n_periods = 6)
#' table(dr$D, dr$time)
#' ds <- dd_sim_spillover(n_units = 200, n_periods = 6)
#' plot(ds$lon[ds$time == 1], ds$lat[ds$time == 1], col = 1 + (ds$first_treat[ds$time == 1] > 0))
#' @name dd_sim
NULL

# errors: n x T, AR(1) with stationary variance sd^2
dd_sim_errors <- function(n, T, rho, sd) {
  e <- matrix(stats::rnorm(n * T), n, T)
  if (T > 1L && rho != 0) for (t in 2:T) e[, t] <- rho * e[, t - 1] + sqrt(1 - rho^2) * e[, t]
  sd * e
}

dd_sim_check <- function(n_units, rho, sd, sd_unit, effect, dynamic = 0, trend = 0) {
  if (!is.numeric(rho) || length(rho) != 1L || is.na(rho) || abs(rho) >= 1)
    dd_stop("`rho` must be one number in (-1, 1); got %s.", dd_show(rho))
  for (a in list(list(sd, "sd"), list(sd_unit, "sd_unit")))
    if (!is.numeric(a[[1]]) || length(a[[1]]) != 1L || is.na(a[[1]]) || a[[1]] < 0)
      dd_stop("`%s` must be one number >= 0; got %s.", a[[2]], dd_show(a[[1]]))
  for (a in list(list(effect, "effect"), list(dynamic, "dynamic"), list(trend, "trend")))
    if (!is.numeric(a[[1]]) || length(a[[1]]) != 1L || !is.finite(a[[1]]))
      dd_stop("`%s` must be one finite number; got %s.", a[[2]], dd_show(a[[1]]))
}

#' @rdname dd_sim
#' @export
dd_sim_basic <- function(n_units = 200, n_pre = 1, n_post = 1, treated_share = 0.5, effect = 0, rho = 0,
                         sd = 1, sd_unit = 1, trend = 0, trend_treated = 0) {
  n_units <- dd_check_count(n_units, "n_units", min = 2)
  n_pre <- dd_check_count(n_pre, "n_pre", min = 1)
  n_post <- dd_check_count(n_post, "n_post", min = 1)
  if (!is.numeric(treated_share) || length(treated_share) != 1L || is.na(treated_share) || treated_share <= 0 ||
      treated_share >= 1)
    dd_stop("`treated_share` must be one number in (0, 1); got %s.", dd_show(treated_share))
  dd_sim_check(n_units, rho, sd, sd_unit, effect, 0, trend)
  trend_treated <- dd_check_number(trend_treated, "trend_treated")
  T <- n_pre + n_post
  nt <- ceiling(n_units * treated_share)
  if (nt >= n_units) dd_stop("`treated_share` = %s leaves no control unit among %d.", format(treated_share), n_units)
  tr <- rep(c(1, 0), c(nt, n_units - nt))
  post <- rep(seq_len(T) > n_pre, each = n_units)
  Y <- stats::rnorm(n_units, 0, sd_unit) + dd_sim_errors(n_units, T, rho, sd)
  y <- as.vector(Y) + rep(trend * seq_len(T), each = n_units) + trend_treated * rep(seq_len(T), each = n_units) * rep(tr, T)
  D <- as.numeric(rep(tr, T) == 1 & post)
  data.frame(id = rep(seq_len(n_units), T), time = rep(seq_len(T), each = n_units),
             first_treat = rep(ifelse(tr == 1, n_pre + 1, 0), T), treat = rep(tr, T), post = as.numeric(post),
             D = D, y = y + effect * D)
}

#' @rdname dd_sim
#' @export
dd_sim_staggered <- function(n_units = 500, n_periods = 10, cohorts = NULL, never_share = 0.3, effect = 0,
                             dynamic = 0, rho = 0, sd = 1, sd_unit = 1, trend = 0, trend_treated = 0,
                             panel = TRUE) {
  n_units <- dd_check_count(n_units, "n_units", min = 2)
  n_periods <- dd_check_count(n_periods, "n_periods", min = 2)
  if (is.null(cohorts)) cohorts <- seq(3, max(3, n_periods - 1), by = 2)
  if (!is.numeric(cohorts) || !length(cohorts) || anyNA(cohorts) || any(cohorts < 2 | cohorts > n_periods) ||
      any(cohorts != round(cohorts)))
    dd_stop("`cohorts` must be whole periods between 2 and `n_periods` = %d; got %s.", n_periods, dd_show(cohorts))
  if (!is.numeric(never_share) || length(never_share) != 1L || is.na(never_share) || never_share < 0 ||
      never_share >= 1)
    dd_stop("`never_share` must be one number in [0, 1); got %s.", dd_show(never_share))
  dd_sim_check(n_units, rho, sd, sd_unit, effect, dynamic, trend)
  trend_treated <- dd_check_number(trend_treated, "trend_treated")
  panel <- dd_check_flag(panel, "panel")
  cohorts <- sort(unique(cohorts))
  nn <- round(n_units * never_share)
  g <- c(rep(0, nn), rep(cohorts, length.out = n_units - nn))
  g <- g[order(g == 0, g)]                         # cohorts in order, never treated last
  T <- n_periods
  Y <- if (panel) stats::rnorm(n_units, 0, sd_unit) + dd_sim_errors(n_units, T, rho, sd)
       else matrix(stats::rnorm(n_units * T, 0, sd_unit), n_units, T) + dd_sim_errors(n_units, T, 0, sd)
  tt <- rep(seq_len(T), each = n_units)
  gg <- rep(g, T)
  D <- as.numeric(gg > 0 & tt >= gg)
  eff <- ifelse(D == 1, effect + dynamic * (tt - gg), 0)
  data.frame(id = if (panel) rep(seq_len(n_units), T) else seq_len(n_units * T), time = tt, first_treat = gg, D = D,
             y = as.vector(Y) + (trend + trend_treated * (gg > 0)) * tt + eff)
}

#' @rdname dd_sim
#' @export
dd_sim_factor <- function(n_units = 50, n_periods = 30, n_treated = 5, first_treat = NULL, n_factors = 2,
                          loading_shift = 0.5, effect = 0, rho = 0, sd = 1, sd_unit = 1, trend = 0) {
  n_units <- dd_check_count(n_units, "n_units", min = 3)
  n_periods <- dd_check_count(n_periods, "n_periods", min = 3)
  n_treated <- dd_check_count(n_treated, "n_treated", min = 1)
  if (n_treated >= n_units) dd_stop("`n_treated` = %d leaves no control unit among `n_units` = %d.", n_treated, n_units)
  if (is.null(first_treat)) first_treat <- n_periods - floor(n_periods / 4) + 1
  first_treat <- dd_check_count(first_treat, "first_treat", min = 2)
  if (first_treat > n_periods) dd_stop("`first_treat` = %d is after the last period (%d).", first_treat, n_periods)
  n_factors <- dd_check_count(n_factors, "n_factors", min = 0)
  if (!is.numeric(loading_shift) || length(loading_shift) != 1L || !is.finite(loading_shift))
    dd_stop("`loading_shift` must be one finite number; got %s.", dd_show(loading_shift))
  dd_sim_check(n_units, rho, sd, sd_unit, effect, 0, trend)
  T <- n_periods
  tr <- seq_len(n_units) <= n_treated
  Y <- stats::rnorm(n_units, 0, sd_unit) + dd_sim_errors(n_units, T, rho, sd)
  if (n_factors > 0L) {
    Fm <- apply(matrix(stats::rnorm(T * n_factors, 0, 0.5), T, n_factors), 2, cumsum)   # random walks
    L <- matrix(stats::rnorm(n_units * n_factors), n_units, n_factors) + loading_shift * tr
    Y <- Y + L %*% t(Fm)
  }
  tt <- rep(seq_len(T), each = n_units)
  D <- as.numeric(rep(tr, T) & tt >= first_treat)
  data.frame(id = rep(seq_len(n_units), T), time = tt, first_treat = rep(ifelse(tr, first_treat, 0), T), D = D,
             y = as.vector(Y) + trend * tt + effect * D)
}

#' @rdname dd_sim
#' @export
dd_sim_ddd <- function(n_units = 1000, n_periods = 8, cohorts = NULL, never_share = 0.3, eligible_share = 0.5,
                       effect = 0, dynamic = 0, sd_shock = 0.5, rho = 0, sd = 1, sd_unit = 1) {
  if (!is.numeric(eligible_share) || length(eligible_share) != 1L || is.na(eligible_share) || eligible_share <= 0 ||
      eligible_share >= 1)
    dd_stop("`eligible_share` must be one number in (0, 1); got %s.", dd_show(eligible_share))
  if (!is.numeric(sd_shock) || length(sd_shock) != 1L || is.na(sd_shock) || sd_shock < 0)
    dd_stop("`sd_shock` must be one number >= 0; got %s.", dd_show(sd_shock))
  d <- dd_sim_staggered(n_units = n_units, n_periods = n_periods, cohorts = cohorts, never_share = never_share,
                        effect = 0, rho = rho, sd = sd, sd_unit = sd_unit)
  u <- d$time == 1
  el <- stats::ave(seq_len(sum(u)), d$first_treat[u], FUN = function(i) as.numeric(seq_along(i) <= round(length(i) * eligible_share)))
  d$eligible <- rep(el, n_periods)
  g <- sort(unique(d$first_treat))
  # shocks that a double difference does not remove: cohort x period and
  # eligibility x period
  cs <- matrix(stats::rnorm(length(g) * n_periods, 0, sd_shock), length(g), n_periods)
  es <- matrix(stats::rnorm(2 * n_periods, 0, sd_shock), 2, n_periods)
  d$y <- d$y + cs[cbind(match(d$first_treat, g), d$time)] + es[cbind(d$eligible + 1, d$time)]
  d$D <- as.numeric(d$D == 1 & d$eligible == 1)
  d$y <- d$y + ifelse(d$D == 1, effect + dynamic * (d$time - d$first_treat), 0)
  d[, c("id", "time", "first_treat", "eligible", "D", "y")]
}

#' @rdname dd_sim
#' @export
dd_sim_continuous <- function(n_units = 500, n_periods = 6, cohorts = NULL, never_share = 0.3, effect = 1, slope = 2,
                              dose_meanlog = 0.5, dose_sdlog = 0.5, rho = 0, sd = 1, sd_unit = 2, trend = 0.5) {
  for (a in c("dose_meanlog", "slope")) {
    v <- get(a)
    if (!is.numeric(v) || length(v) != 1L || !is.finite(v)) dd_stop("`%s` must be one finite number; got %s.", a, dd_show(v))
  }
  if (!is.numeric(dose_sdlog) || length(dose_sdlog) != 1L || !is.finite(dose_sdlog) || dose_sdlog < 0)
    dd_stop("`dose_sdlog` must be one number >= 0; got %s.", dd_show(dose_sdlog))
  d <- dd_sim_staggered(n_units = n_units, n_periods = n_periods, cohorts = cohorts, never_share = never_share,
                        effect = 0, rho = rho, sd = sd, sd_unit = sd_unit, trend = trend)
  n <- nrow(d) / n_periods
  g <- d$first_treat[seq_len(n)]
  dose <- ifelse(g > 0, stats::rlnorm(n, dose_meanlog, dose_sdlog), 0)
  d$dose <- rep(dose, n_periods)
  d$y <- d$y + d$D * (effect + slope * d$dose)
  d[, c("id", "time", "first_treat", "dose", "D", "y")]
}

#' @rdname dd_sim
#' @export
dd_sim_reversible <- function(n_units = 120, n_periods = 10, treated_share = 0.3, effect = 2, effect_sd = 0.5,
                              rho = 0, sd = 0.5, sd_unit = 2, trend = 0.1) {
  n_units <- dd_check_count(n_units, "n_units", min = 2)
  n_periods <- dd_check_count(n_periods, "n_periods", min = 2)
  if (!is.numeric(treated_share) || length(treated_share) != 1L || is.na(treated_share) || treated_share < 0 ||
      treated_share > 1)
    dd_stop("`treated_share` must be one number in [0, 1]; got %s.", dd_show(treated_share))
  if (!is.numeric(effect_sd) || length(effect_sd) != 1L || !is.finite(effect_sd) || effect_sd < 0)
    dd_stop("`effect_sd` must be one number >= 0; got %s.", dd_show(effect_sd))
  dd_sim_check(n_units, rho, sd, sd_unit, effect, 0, trend)
  T <- n_periods
  start_on <- stats::runif(n_units) < treated_share
  sw <- sample.int(T - 1L, n_units, replace = TRUE) + 1L        # the first period with the new status: 2..T
  tt <- rep(seq_len(T), each = n_units)
  after <- tt >= rep(sw, T)
  D <- as.numeric(ifelse(rep(start_on, T), !after, after))
  Y <- stats::rnorm(n_units, 0, sd_unit) + dd_sim_errors(n_units, T, rho, sd)
  eff <- stats::rnorm(n_units * T, effect, effect_sd)
  data.frame(id = rep(seq_len(n_units), T), time = tt, D = D, y = as.vector(Y) + trend * tt + D * eff)
}

#' @rdname dd_sim
#' @export
dd_sim_survey <- function(n_strata = 4, n_psu = 10, units_per_psu = 10, n_pre = 2, n_post = 2, effect = 0,
                          sd_psu = 0.3, rho = 0, sd = 1, sd_unit = 1) {
  n_strata <- dd_check_count(n_strata, "n_strata", min = 1)
  n_psu <- dd_check_count(n_psu, "n_psu", min = 2)
  units_per_psu <- dd_check_count(units_per_psu, "units_per_psu", min = 1)
  if (!is.numeric(sd_psu) || length(sd_psu) != 1L || is.na(sd_psu) || sd_psu < 0)
    dd_stop("`sd_psu` must be one number >= 0; got %s.", dd_show(sd_psu))
  n_units <- n_strata * n_psu * units_per_psu
  d <- dd_sim_basic(n_units = n_units, n_pre = n_pre, n_post = n_post, treated_share = 0.5, effect = 0, rho = rho,
                    sd = sd, sd_unit = sd_unit)
  psu <- (d$id - 1) %/% units_per_psu + 1                      # PSUs numbered across strata
  stratum <- (psu - 1) %% n_strata + 1
  tr_psu <- as.numeric(((psu - 1) %/% n_strata) %% 2 == 0)    # half of each stratum's PSUs treated
  T <- n_pre + n_post
  d$treat <- tr_psu
  d$D <- as.numeric(tr_psu == 1 & d$post == 1)
  d$first_treat <- ifelse(tr_psu == 1, n_pre + 1, 0)
  shock <- stats::rnorm(max(psu), 0, sd_psu)
  d$y <- d$y + d$post * shock[psu] + effect * d$D
  d$stratum <- stratum; d$psu <- psu
  d$weight <- c(1, 2, 4, 8)[(stratum - 1) %% 4 + 1] * 10
  d[, c("id", "time", "stratum", "psu", "weight", "first_treat", "treat", "post", "D", "y")]
}

#' Simulated power of any DiD estimator
#'
#' Runs `estimator` on `nsim` panels drawn by `dgp` for each effect size and
#' reports the share of draws in which the test of `term` rejects at
#' `alpha` (power; the size at effect 0), with its Monte Carlo standard
#' error, the mean estimate, its sampling SD and the mean reported standard
#' error. Every draw gets its own seed, drawn in advance from the caller's
#' random-number stream, so the results are the same under [set.seed()]
#' whatever the number of `cores` (draws run in forked processes with
#' `cores > 1`, not on Windows).
#'
#' @param estimator A function of a data frame returning a fit (e.g.
#'   `function(d) did_twfe(d, "y", "id", "time", "D")`), or a fit-producing
#'   function such as [did_twfe()] with `est_args`.
#' @param dgp A generator taking `effect` (e.g. [dd_sim_basic()],
#'   [dd_sim_staggered()]).
#' @param effect_sizes Effects to simulate (>= 0; 0 gives the size).
#' @param nsim Draws per effect size.
#' @param alpha Level of the two-sided test.
#' @param term The coefficient tested (default: the fit's first main term).
#' @param dgp_args,est_args Further arguments of `dgp` and `estimator`.
#' @param power The target power for the minimum detectable effect
#'   (interpolated between the simulated effect sizes).
#' @param mc_se Largest acceptable Monte Carlo standard error of a power
#'   estimate: fewer draws than `0.25 / mc_se^2` give a warning. It must be
#'   reachable: `0.25 / mc_se^2` may not exceed the largest `nsim`,
#'   2147483647 (`.Machine$integer.max`), so `mc_se` is at least
#'   `sqrt(0.25 / .Machine$integer.max)`, about 1.08e-05; a smaller value is
#'   an error.
#' @param cores Processes for the draws (forked; not on Windows). With a
#'   `future::plan()` other than sequential set, the plan's workers run the
#'   draws instead (multisession, a cluster, SLURM through future.batchtools),
#'   with the same numbers bit for bit: each draw has its own seed, drawn
#'   beforehand from the caller's stream.
#' @return A data frame of class `dd_power_sim` (one row per effect size:
#'   `effect`, `power`, `mc_se`, `mean_estimate`, `sd_estimate`,
#'   `mean_se`, `nsim`, `failed`), with the attribute `mde`.
#' @examples
#' set.seed(1)
#' ps <- dd_simulate_power(function(d) did_twfe(d, "y", "id", "time", "D"), dd_sim_basic,
#'                         effect_sizes = c(0, 0.2, 0.4), nsim = 100, mc_se = 0.05,
#'                         dgp_args = list(n_units = 100, n_pre = 2, n_post = 2))
#' ps
#' plot(ps)
#' @export
dd_simulate_power <- function(estimator, dgp = dd_sim_basic, effect_sizes, nsim = 1000, alpha = 0.05, term = NULL,
                              dgp_args = list(), est_args = list(), power = 0.8, mc_se = 0.025, cores = 1L) {
  if (!is.function(estimator)) dd_stop("`estimator` must be a function returning a fit; got %s.", dd_show(estimator))
  if (!is.function(dgp)) dd_stop("`dgp` must be a data-generating function (e.g. dd_sim_basic); got %s.", dd_show(dgp))
  if (!is.numeric(effect_sizes) || !length(effect_sizes) || anyNA(effect_sizes) || any(effect_sizes < 0) ||
      any(!is.finite(effect_sizes)))
    dd_stop("`effect_sizes` must be finite numbers >= 0 (0: the size of the test); got %s.", dd_show(effect_sizes))
  nsim <- dd_check_count(nsim, "nsim", min = 2)
  cores <- dd_check_count(cores, "cores", min = 1)
  if (!is.numeric(alpha) || length(alpha) != 1L || is.na(alpha) || alpha <= 0 || alpha >= 1)
    dd_stop("`alpha` must be one number in (0, 1); got %s.", dd_show(alpha))
  if (!is.list(dgp_args) || !is.list(est_args)) dd_stop("`dgp_args` and `est_args` must be lists.")
  if (!is.numeric(power) || length(power) != 1L || is.na(power) || power <= 0 || power >= 1)
    dd_stop("`power` must be one number in (0, 1) (the target power of the minimum detectable effect); got %s.",
            dd_show(power))
  if (!is.null(term) && (!is.character(term) || length(term) != 1L || is.na(term) || !nzchar(term)))
    dd_stop("`term` must be NULL (the fit's first main term) or one coefficient name (a string); got %s.", dd_show(term))
  if (!is.numeric(mc_se) || length(mc_se) != 1L || !is.finite(mc_se) || mc_se <= 0)
    dd_stop("`mc_se` must be one positive finite number; got %s.", dd_show(mc_se))
  # the draws that reach mc_se (the Monte Carlo SE of a proportion is at
  # most sqrt(0.25 / nsim)) must be a possible `nsim`
  need <- ceiling(0.25 / mc_se^2)
  if (need > .Machine$integer.max)
    dd_stop("`mc_se` = %s would need %s draws per effect size (0.25 / mc_se^2), more than the largest `nsim` (%d); `mc_se` must be at least %s.",
            format(mc_se), format(need, digits = 3), .Machine$integer.max,
            format(sqrt(0.25 / .Machine$integer.max), digits = 3))
  if (nsim < need)
    warning(sprintf("`nsim` = %d draws give power estimates with a Monte Carlo standard error up to %.3f, above `mc_se` = %s; use nsim >= %s.",
                    nsim, sqrt(0.25 / nsim), format(mc_se), format(need, scientific = FALSE)), call. = FALSE)
  K <- length(effect_sizes)
  if (as.double(K) * nsim > .Machine$integer.max)
    dd_stop("`nsim` = %d draws for each of %d `effect_sizes` make %s draws, more than %d.", nsim, K,
            format(as.double(K) * nsim, digits = 3), .Machine$integer.max)
  one <- function(k) {   # (run under its own seed, drawn from the caller's stream: dd_seeded_lapply)
    es <- effect_sizes[(k - 1L) %/% nsim + 1L]
    d <- do.call(dgp, c(list(effect = es), dgp_args))
    f <- tryCatch(suppressMessages(suppressWarnings(do.call(estimator, c(list(d), est_args)))),
                  error = function(e) NULL)
    if (is.null(f) || !inherits(f, "dd_fit")) return(c(NA_real_, NA_real_, NA_real_))
    tab <- f$coeftable
    tm <- if (is.null(term)) f$main_terms[1] else term
    i <- match(tm, tab$term)
    if (is.na(i)) return(c(NA_real_, NA_real_, NA_real_))
    c(tab$estimate[i], tab$std.error[i], tab$p.value[i])
  }
  res <- dd_seeded_lapply(seq_len(K * nsim), one, cores, "power simulation")
  res <- matrix(unlist(res), ncol = 3L, byrow = TRUE)
  out <- do.call(rbind, lapply(seq_len(K), function(k) {
    r <- res[(k - 1L) * nsim + seq_len(nsim), , drop = FALSE]
    ok <- stats::complete.cases(r)
    pw <- mean(r[ok, 3] < alpha)
    data.frame(effect = effect_sizes[k], power = pw, mc_se = sqrt(pw * (1 - pw) / sum(ok)),
               mean_estimate = mean(r[ok, 1]), sd_estimate = stats::sd(r[ok, 1]), mean_se = mean(r[ok, 2]),
               nsim = sum(ok), failed = sum(!ok))
  }))
  if (any(out$failed > 0))
    warning(sprintf("%d draws failed (the estimator gave an error or no `%s`) and were left out.", sum(out$failed),
                    if (is.null(term)) "main term" else term), call. = FALSE)
  # minimum detectable effect: the first crossing of the target power
  mde <- dd_first_crossing(out$effect, out$power, power)
  structure(out, class = c("dd_power_sim", "data.frame"), mde = mde, target_power = power, alpha = alpha)
}

# the first x at which p (ordered by x) crosses `target` from below,
# interpolated linearly between the grid points; NA when not bracketed
dd_first_crossing <- function(x, p, target) {
  o <- order(x); x <- x[o]; p <- p[o]
  j <- which(p[-1] >= target & p[-length(p)] < target)
  if (!length(j)) return(NA_real_)
  j <- j[1]
  x[j] + (target - p[j]) * (x[j + 1] - x[j]) / (p[j + 1] - p[j])
}

#' Simulated sample size of any DiD estimator
#'
#' The number of units needed for a target power at a given effect:
#' [dd_simulate_power()] at each candidate `n_units` (passed to `dgp` as
#' its `n_units` argument), and the smallest number of units whose power
#' reaches `power`, interpolated linearly between the candidates (rounded
#' up). Reproducible under [set.seed()] whatever `cores`.
#'
#' @inheritParams dd_simulate_power
#' @param effect The effect to detect (> 0).
#' @param n_units Candidate numbers of units (whole numbers >= 2, at least
#'   two of them).
#' @param power The target power.
#' @return A data frame of class `dd_power_sim_n` (one row per candidate:
#'   `n_units` and the columns of [dd_simulate_power()]), with the attribute
#'   `n_required` (NA when the candidates do not bracket the target).
#' @examples
#' set.seed(1)
#' ss <- dd_simulate_sample_size(function(d) did_twfe(d, "y", "id", "time", "D"), dd_sim_basic,
#'                               effect = 0.3, n_units = c(40, 80, 160), nsim = 60, mc_se = 0.07,
#'                               dgp_args = list(n_pre = 2, n_post = 2))
#' ss
#' plot(ss)
#' @export
dd_simulate_sample_size <- function(estimator, dgp = dd_sim_basic, effect, n_units, nsim = 1000, alpha = 0.05,
                                    term = NULL, dgp_args = list(), est_args = list(), power = 0.8, mc_se = 0.025,
                                    cores = 1L) {
  if (!is.numeric(effect) || length(effect) != 1L || !is.finite(effect) || effect <= 0)
    dd_stop("`effect` must be one positive number (the effect to detect); got %s.", dd_show(effect))
  if (!is.numeric(n_units) || length(n_units) < 2L || anyNA(n_units) || any(n_units < 2) ||
      any(n_units != round(n_units)) || anyDuplicated(n_units))
    dd_stop("`n_units` must be at least two distinct whole numbers >= 2 (candidate numbers of units); got %s.",
            dd_show(n_units))
  if (!is.numeric(power) || length(power) != 1L || is.na(power) || power <= alpha || power >= 1)
    dd_stop("`power` must be one number between `alpha` and 1; got %s.", dd_show(power))
  if (!is.list(dgp_args) || !is.null(dgp_args$n_units))
    dd_stop("`dgp_args` must be a list without `n_units` (the candidates are `n_units`).")
  n_units <- sort(n_units)
  # the too-few-draws warning once, not once per candidate
  warned <- FALSE
  rows <- lapply(n_units, function(n) withCallingHandlers(
    dd_simulate_power(estimator, dgp, effect_sizes = effect, nsim = nsim, alpha = alpha, term = term,
                      dgp_args = c(dgp_args, list(n_units = n)), est_args = est_args, power = power,
                      mc_se = mc_se, cores = cores),
    warning = function(w) {
      if (startsWith(conditionMessage(w), "`nsim` =")) {
        if (warned) invokeRestart("muffleWarning")
        warned <<- TRUE
      }
    }))
  out <- cbind(data.frame(n_units = n_units), do.call(rbind, lapply(rows, as.data.frame)))
  nr <- dd_first_crossing(out$n_units, out$power, power)
  structure(out, class = c("dd_power_sim_n", "data.frame"), n_required = if (is.na(nr)) NA_real_ else ceiling(nr),
            target_power = power, alpha = alpha, effect = effect)
}

#' @export
print.dd_power_sim_n <- function(x, digits = 4, ...) {
  dd_check_dots(list(...), "print()")
  cat(sprintf("Simulated power by number of units (effect %s, %d draws each, two-sided alpha = %s)\n",
              format(attr(x, "effect")), max(x$nsim), format(attr(x, "alpha"))))
  print(as.data.frame(x), digits = digits, row.names = FALSE)
  n <- attr(x, "n_required")
  cat(sprintf("Units needed for power %s: %s\n", format(attr(x, "target_power")),
              if (is.finite(n)) format(n) else "not bracketed by `n_units`"))
  invisible(x)
}

#' @rdname dd_simulate_sample_size
#' @param x A `dd_simulate_sample_size()` result.
#' @param main,xlab,ylab Titles.
#' @param ... Passed to [graphics::plot.default()].
#' @export
plot.dd_power_sim_n <- function(x, main = "Simulated power by sample size", xlab = "Units", ylab = "Power", ...) {
  op <- graphics::par(mar = c(4.2, 4.2, 3, 1), las = 1)
  on.exit(graphics::par(op))
  lo <- pmax(0, x$power - 1.96 * x$mc_se); hi <- pmin(1, x$power + 1.96 * x$mc_se)
  graphics::plot.default(x$n_units, x$power, type = "n", ylim = c(0, 1), main = main, xlab = xlab, ylab = ylab, ...)
  graphics::abline(h = attr(x, "target_power"), lty = 2, col = "grey50")
  graphics::lines(x$n_units, x$power, col = "#1B6CA8", lwd = 2)
  graphics::segments(x$n_units, lo, x$n_units, hi, col = "#1B6CA8", lwd = 2)
  graphics::points(x$n_units, x$power, pch = 16, col = "#1B6CA8")
  n <- attr(x, "n_required")
  if (is.finite(n)) {
    graphics::abline(v = n, lty = 2, col = "#C0392B")
    graphics::text(n, 0.1, sprintf("n = %d", as.integer(n)), pos = if (n > mean(range(x$n_units))) 2 else 4,
                   col = "#C0392B", cex = 0.85)
  }
  invisible(x)
}

#' @export
print.dd_power_sim <- function(x, digits = 4, ...) {
  dd_check_dots(list(...), "print()")
  cat(sprintf("Simulated power (%d draws per effect, two-sided alpha = %s)\n", max(x$nsim), format(attr(x, "alpha"))))
  print(as.data.frame(x), digits = digits, row.names = FALSE)
  mde <- attr(x, "mde")
  cat(sprintf("Minimum detectable effect at power %s: %s\n", format(attr(x, "target_power")),
              if (is.finite(mde)) format(mde, digits = digits) else "not bracketed by the effect sizes"))
  invisible(x)
}

#' Plot a simulated power curve
#'
#' Power against effect size with Monte Carlo 95% intervals, the target
#' power and the interpolated minimum detectable effect; `plot()` in base
#' graphics, `autoplot()` with ggplot2.
#' @param x A [dd_simulate_power()] result.
#' @param main,xlab,ylab Titles.
#' @param ... Passed to [graphics::plot.default()].
#' @return `x`, invisibly.
#' @examples
#' set.seed(1)
#' ps <- dd_simulate_power(function(d) did_twfe(d, "y", "id", "time", "D"), dd_sim_basic,
#'                         effect_sizes = c(0, 0.25, 0.5), nsim = 60, mc_se = 0.07,
#'                         dgp_args = list(n_units = 80))
#' plot(ps)
#' if (requireNamespace("ggplot2", quietly = TRUE)) ggplot2::autoplot(ps)
#' @export
plot.dd_power_sim <- function(x, main = "Simulated power", xlab = "Effect size", ylab = "Power", ...) {
  op <- graphics::par(mar = c(4.2, 4.2, 3, 1), las = 1)
  on.exit(graphics::par(op))
  o <- order(x$effect)
  lo <- pmax(0, x$power - 1.96 * x$mc_se); hi <- pmin(1, x$power + 1.96 * x$mc_se)
  graphics::plot.default(x$effect[o], x$power[o], type = "n", ylim = c(0, 1), main = main, xlab = xlab, ylab = ylab,
                         ...)
  graphics::abline(h = c(attr(x, "alpha"), attr(x, "target_power")), lty = c(3, 2), col = "grey50")
  graphics::lines(x$effect[o], x$power[o], col = "#1B6CA8", lwd = 2)
  graphics::segments(x$effect, lo, x$effect, hi, col = "#1B6CA8", lwd = 2)
  graphics::points(x$effect, x$power, pch = 16, col = "#1B6CA8")
  mde <- attr(x, "mde")
  if (is.finite(mde)) {
    graphics::abline(v = mde, lty = 2, col = "#C0392B")
    graphics::text(mde, 0.95, sprintf("MDE %.3g", mde), pos = if (mde > mean(range(x$effect))) 2 else 4,
                   col = "#C0392B", cex = 0.85)
  }
  invisible(x)
}

#' @rdname plot.dd_power_sim
#' @param object A [dd_simulate_power()] result (`autoplot()`: ggplot2).
#' @exportS3Method ggplot2::autoplot
autoplot.dd_power_sim <- function(object, ...) {
  dd_check_dots(list(...), "autoplot()")
  mde <- attr(object, "mde")
  dd_power_gg(object, "effect", c(attr(object, "alpha"), attr(object, "target_power")), c(3, 2), mde,
              "Effect size", "Simulated power",
              if (is.finite(mde)) sprintf("Minimum detectable effect %.3g", mde) else NULL)
}

# the ggplot of simulated power against `xvar` (effect or units), with Monte
# Carlo 95% intervals, reference lines at `hlines` and the crossing `vline`
dd_power_gg <- function(object, xvar, hlines, hltype, vline, xlab, title, subtitle) {
  dd_need_ggplot()
  gg <- asNamespace("ggplot2")
  x <- as.data.frame(object)
  x$lo <- pmax(0, x$power - 1.96 * x$mc_se); x$hi <- pmin(1, x$power + 1.96 * x$mc_se)
  p <- gg$ggplot(x, gg$aes(x = .data[[xvar]], y = .data$power)) +
    gg$geom_hline(yintercept = hlines, linetype = hltype, colour = "grey50") +
    gg$geom_line(colour = "#1B6CA8", linewidth = 0.9) +
    gg$geom_linerange(gg$aes(ymin = .data$lo, ymax = .data$hi), colour = "#1B6CA8", linewidth = 0.8) +
    gg$geom_point(colour = "#1B6CA8", size = 2.3) +
    gg$coord_cartesian(ylim = c(0, 1)) +
    gg$labs(x = xlab, y = "Power", title = title, subtitle = subtitle)
  if (is.finite(vline)) p <- p + gg$geom_vline(xintercept = vline, linetype = 2, colour = "#C0392B")
  p
}

#' @rdname dd_simulate_sample_size
#' @param object A `dd_simulate_sample_size()` result (`autoplot()`:
#'   ggplot2).
#' @exportS3Method ggplot2::autoplot
autoplot.dd_power_sim_n <- function(object, ...) {
  dd_check_dots(list(...), "autoplot()")
  n <- attr(object, "n_required")
  dd_power_gg(object, "n_units", attr(object, "target_power"), 2, n, "Units", "Simulated power by sample size",
              if (is.finite(n)) sprintf("Units needed: %d", as.integer(n)) else NULL)
}
