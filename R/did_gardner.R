#' Gardner (2022) two-stage difference-in-differences
#'
#' First stage: unit and period fixed effects (and covariates) fitted on the
#' untreated observations; second stage: the residualised outcome
#' \eqn{\tilde y = y - \hat y(0)} regressed, over all observations, on
#' treatment indicators without intercept: one indicator per event-time
#' horizon (and per lead, for the pre-period estimates) for the event study,
#' and the treatment indicator for the overall ATT. This is what
#' `did2s::did2s()` computes with `first_stage = ~ x | id + t` and
#' `second_stage = ~ i(rel_year, ref = c(-1, Inf))` (event study) or
#' `~ i(treat, ref = FALSE)` (static).
#'
#' Standard errors are the GMM-corrected clustered standard errors of Butts
#' and Gardner (as did2s): the second-stage scores minus the first-stage
#' scores times \eqn{(X_1'W_0X_1)^{-1}X_1'WX_2}, clustered, without a
#' small-sample adjustment. The matrix \eqn{(X_1'W_0X_1)^{-1}X_1'WX_2} is
#' obtained exactly from the first stage's normal equations (the unit
#' effects eliminated), never by inverting a units x units matrix.
#'
#' The event-time estimates equal the imputation estimates of [did_bjs()]
#' (the two estimators coincide for these targets); the standard errors
#' differ (GMM sandwich versus BJS's conservative variance), and the leads
#' here are averages of first-stage residuals, whereas did_bjs estimates
#' them by its pre-trend regression.
#'
#' @section Standard errors and their estimand:
#' The point estimates weight cohorts by their realised shares of the
#' treated observations (they equal [did_bjs()]'s), but the GMM standard
#' errors take the treated observations' second-stage residuals around the
#' single coefficient of their horizon, so differences between the cohorts'
#' effects enter them as sampling variation of the cohort composition: they
#' target the effects with POPULATION cohort shares, as the aggregations of
#' [did_cs()] do. For the realised-share effects they are conservative when
#' effects differ across cohorts, and then larger than did_bjs's standard
#' errors on the same data (see `vignette("coverage", package = "diffdiff")`
#' for the Monte Carlo evidence).
#'
#' @inheritParams did_bjs
#' @param pretrends Leads to estimate: `TRUE` (default) all leads but -1,
#'   `FALSE` none, or negative whole numbers.
#' @return An object of class `c("did_gardner", "dd_fit")` with rows
#'   `event::h` (leads and horizons) and `ATT`; t tests with the second
#'   stage's residual degrees of freedom (observations minus coefficients),
#'   as did2s. Also `event_study`, `n_treated`, `n_untreated`, `first_stage` and
#'   `path` (`"cells"` or `"dense"`: how the first stage handled the period
#'   indicators), as in [did_bjs()].
#' @references Gardner, J. (2022). Two-stage differences in differences.
#'   arXiv:2207.05943. Butts, K. and Gardner, J. (2022). did2s: Two-stage
#'   difference-in-differences. The R Journal 14(3).
#' @examples
#' d <- read.csv(system.file("extdata", "sim_panel.csv", package = "diffdiff"))
#' g2 <- did_gardner(d, yname = "y", idname = "id", tname = "year", gname = "first_treat")
#' g2
#' plot(g2)
#' @inheritSection diffdiff-package Cohort coding
#' @inheritSection diffdiff-package Formula interface
#' @export
did_gardner <- function(data, yname, idname, tname, gname, xformla = NULL, weightsname = NULL,
                        horizon = NULL, pretrends = TRUE, cluster = NULL, alpha = 0.05,
                        nboot = 0, boot_weights = c("rademacher", "mammen", "webb"), cband = FALSE,
                        fe_tol = 1e-8, fe_maxit = 10000, survey = NULL) {
  call <- match.call()
  # the fixest-style formula (y ~ x | id + t, sunab(g, t)): the column-name call (R/formula.R)
  fcl <- dd_formula_call(match.call(), environment(), "did_gardner")
  if (!is.null(fcl)) return(eval(fcl, parent.frame()))
  dd_required(c("data", "yname", "idname", "tname", "gname"))
  sp <- dd_spec(alpha = alpha, nboot = nboot, boot_weights = boot_weights, cband = cband, fe_tol = fe_tol,
                fe_maxit = fe_maxit)
  alpha <- sp$alpha
  im <- dd_impute_setup(data, yname, idname, tname, gname, xformla, weightsname, cluster, survey, sp, horizon)
  st <- p <- im$st; sp <- im$spec
  fs <- im$fs; tr <- im$tr; u <- fs$untreated
  leads <- dd_leads(pretrends, st$ev[u])
  Wl <- dd_group_weights(st$ev[u], leads, if (is.null(p$w)) NULL else p$w[u])
  # second stage: with disjoint indicators and no intercept, each coefficient
  # is the weighted mean of the residualised outcome over its rows (the
  # normalised weights w x2 / sum(w x2) are Wl for the leads, Wt for the
  # horizons and the ATT)
  Wt <- im$Wt
  yu <- fs$adj[u]; yt <- fs$adj[tr]
  beta <- c(colSums(Wl * yu), colSums(Wt * yt))
  L <- ncol(Wl); post <- L + seq_len(ncol(Wt))
  # scores: second stage w x2 e2, minus the first stage's w u gamma' x1 (v0 u)
  blocks <- list(list(rows = tr, M = Wt * (yt - rep(beta[post], each = length(tr))), cols = post),
                 list(rows = u, M = dd_impute_v(fs, st$idc[tr], st$tc[tr], p$X[tr, , drop = FALSE], Wt,
                                                mult = fs$resid), cols = post))
  if (L) blocks <- c(blocks, list(list(rows = u, M = dd_impute_v(fs, st$idc[u], st$tc[u], p$X[u, , drop = FALSE],
                                                                   Wl, mult = fs$resid), cols = seq_len(L))))
  if (L) blocks <- c(blocks, list(list(rows = u, M = Wl * (yu - rep(beta[seq_len(L)], each = length(u))),
                                       cols = seq_len(L))))
  V <- dd_lin_vcov_blocks(blocks, names(beta), length(p$y), st)
  df <- sum(im$ok) - (length(beta) - 1L)
  dd_impute_result("did_gardner", "Two-stage DiD of Gardner (did_gardner)", "GMM-corrected (did2s)", beta, V,
                   c(leads, im$hz, NA), df, st, im, yname, idname, tname, sp, call,
                   list(event_study = dd_es_spec(reference = if (isTRUE(pretrends)) -1 else numeric(),
                                                 base_period = "reference")))
}
