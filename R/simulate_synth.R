# dd_sim_synth(): a panel for synthetic control (issue 44, item 5): few
# treated units whose untreated paths lie in the convex hull of the donors'.

#' Simulated panel for synthetic control
#'
#' A balanced panel of `n_treated` treated units and `n_donors` never-treated
#' donors for [did_synth()] and [did_sdid()], with a known effect.
#' Untreated outcomes follow a factor model,
#' \deqn{Y_{it}(0) = b_i + \mathrm{trend} \cdot t + \lambda_i' F_t + \varepsilon_{it},}
#' with `n_factors` latent factors \eqn{F_t} following AR(1) processes
#' (coefficient `factor_rho`; 1 gives random walks, with standard normal
#' innovations and a standard normal start), non-negative donor loadings
#' \eqn{\lambda_i} (absolute values of standard normals), donor baselines
#' \eqn{b_i} drawn from a normal with mean `baseline` and SD `sd_baseline`,
#' and errors \eqn{\varepsilon_{it}} with SD `sd`.
#'
#' Each treated unit's loadings and baseline are a convex combination of
#' those of `n_convex` donors drawn at random (weights from a flat Dirichlet
#' distribution, i.e. normalised standard exponentials), so that without
#' noise (`sd = 0`) its untreated path is exactly that combination of the
#' donors' paths: a synthetic control exists and reproduces it. The weights
#' are returned in the attribute `"weights"`; a fitted synthetic control need
#' not find them (other combinations may fit as well), only the
#' counterfactual path. This differs from [dd_sim_factor()], whose treated
#' units have shifted loadings (outside the donors' hull), the case for
#' factor-model estimators rather than synthetic control.
#'
#' Every treated unit adopts in period `n_pre + 1`; its effect `k` periods
#' after adoption is `effect + dynamic * k`, so the true average effect over
#' the post-treatment periods is `effect + dynamic * (n_post - 1) / 2`.
#'
#' Predictors (`n_predictors` columns `x1`, `x2`, ..., constant within unit,
#' for `did_synth(predictors = )`): predictor `h` is the unit's loading on
#' factor `((h - 1) %% n_factors) + 1` plus normal noise with SD
#' `sd_predictor`.
#'
#' Random numbers are drawn in this order: factors, donor loadings, donor
#' baselines, the treated units' donors and weights (unit by unit),
#' predictor noise, outcome errors; the results are reproducible under
#' [set.seed()].
#'
#' @param n_donors Number of never-treated donor units (at least 2).
#' @param n_treated Number of treated units (at least 1).
#' @param n_pre,n_post Periods before and from adoption (at least 1 each).
#' @param n_factors Number of latent factors (at least 1).
#' @param n_convex Number of donors in each treated unit's convex
#'   combination (1 to `n_donors`).
#' @param effect Effect in the adoption period.
#' @param dynamic Change of the effect per period since adoption.
#' @param factor_rho AR(1) coefficient of the factors, in \[0, 1\].
#' @param trend Common linear time trend per period.
#' @param baseline,sd_baseline Mean and SD of the donors' baselines.
#' @param n_predictors Number of predictor columns (0 for none).
#' @param sd_predictor SD of the predictors' noise.
#' @param sd SD of the outcome errors.
#' @return A data frame sorted by unit then period: `id` (treated units
#'   first, `1..n_treated`, then the donors), `time` (`1..n_pre + n_post`),
#'   `first_treat` (`n_pre + 1` for treated units, 0 for donors), `D` (the
#'   treated observations), `y`, the effect planted in each row (`effect_true`;
#'   0 where `D = 0`) and `x1..` (predictors); the attribute `"weights"` is
#'   the `n_donors` x `n_treated` matrix of generating weights (rows named by
#'   donor id, columns by treated id).
#' @seealso [dd_sim] for the other generators; [did_synth()], [did_sdid()].
#' @examples
#' set.seed(1)
#' d <- dd_sim_synth(n_donors = 12, n_pre = 12, n_post = 4, effect = 3)
#' round(colSums(attr(d, "weights")), 12)
#' fit <- did_sdid(d, "y", "id", "time", "D", se = "none")
#' coef(fit)
#' @export
dd_sim_synth <- function(n_donors = 20, n_treated = 1, n_pre = 20, n_post = 6, n_factors = 3, n_convex = 4,
                         effect = 5, dynamic = 0, factor_rho = 0.9, trend = 0.5, baseline = 50, sd_baseline = 5,
                         n_predictors = 3, sd_predictor = 0.5, sd = 1) {
  n_donors <- dd_check_count(n_donors, "n_donors", min = 2)
  n_treated <- dd_check_count(n_treated, "n_treated", min = 1)
  n_pre <- dd_check_count(n_pre, "n_pre", min = 1)
  n_post <- dd_check_count(n_post, "n_post", min = 1)
  n_factors <- dd_check_count(n_factors, "n_factors", min = 1)
  n_convex <- dd_check_count(n_convex, "n_convex", min = 1)
  if (n_convex > n_donors)
    dd_stop("`n_convex` = %d is more than the %d donors (`n_donors`).", n_convex, n_donors)
  n_predictors <- dd_check_count(n_predictors, "n_predictors", min = 0)
  effect <- dd_check_number(effect, "effect"); dynamic <- dd_check_number(dynamic, "dynamic")
  trend <- dd_check_number(trend, "trend"); baseline <- dd_check_number(baseline, "baseline")
  factor_rho <- dd_check_number(factor_rho, "factor_rho", 0, 1, "one number in [0, 1]")
  sd_baseline <- dd_check_number(sd_baseline, "sd_baseline", 0, Inf, "one finite number >= 0")
  sd_predictor <- dd_check_number(sd_predictor, "sd_predictor", 0, Inf, "one finite number >= 0")
  sd <- dd_check_number(sd, "sd", 0, Inf, "one finite number >= 0")
  T <- n_pre + n_post; K <- n_factors; n <- n_treated + n_donors
  Fm <- matrix(0, T, K)
  Fm[1, ] <- stats::rnorm(K)
  if (T > 1L) for (t in 2:T) Fm[t, ] <- factor_rho * Fm[t - 1, ] + stats::rnorm(K)
  Ld <- matrix(abs(stats::rnorm(n_donors * K)), n_donors, K)
  bd <- stats::rnorm(n_donors, baseline, sd_baseline)
  W <- matrix(0, n_donors, n_treated)
  for (j in seq_len(n_treated)) {
    k <- sample.int(n_donors, n_convex)
    e <- stats::rexp(n_convex)
    W[k, j] <- e / sum(e)
  }
  L <- rbind(crossprod(W, Ld), Ld)                       # treated first, then donors
  b <- c(crossprod(W, bd), bd)
  mu <- b + L %*% t(Fm) + matrix(trend * seq_len(T), n, T, byrow = TRUE)   # n x T, untreated, noiseless
  X <- if (n_predictors > 0L)
    L[, (seq_len(n_predictors) - 1L) %% K + 1L, drop = FALSE] + stats::rnorm(n * n_predictors, 0, sd_predictor)
  Y <- mu + matrix(stats::rnorm(n * T, 0, sd), n, T)
  g <- rep(c(n_pre + 1L, 0L), c(n_treated, n_donors))
  id <- rep(seq_len(n), each = T); tt <- rep(seq_len(T), n); gg <- g[id]
  D <- as.numeric(gg > 0 & tt >= gg)
  tau <- ifelse(D == 1, effect + dynamic * (tt - gg), 0)
  d <- data.frame(id = id, time = tt, first_treat = gg, D = D, y = as.vector(t(Y)) + tau, effect_true = tau)
  if (n_predictors > 0L) for (h in seq_len(n_predictors)) d[[paste0("x", h)]] <- X[id, h]
  dimnames(W) <- list(as.character(n_treated + seq_len(n_donors)), as.character(seq_len(n_treated)))
  attr(d, "weights") <- W
  d
}
