#' Borusyak, Jaravel and Spiess (2024) imputation estimator
#'
#' Fits unit and period fixed effects (and covariates) on the untreated
#' observations only (never-treated units and not-yet-treated periods),
#' imputes the untreated outcome of every treated observation from that fit,
#' and averages the differences between observed and imputed outcomes: over
#' all treated observations (the overall ATT) and over the treated
#' observations `h` periods after adoption (event-time effects). This is what
#' `didimputation::did_imputation()` computes.
#'
#' Standard errors are the paper's conservative clustered variance (Theorem
#' 3): each estimate is a weighted sum of the outcomes, \eqn{\sum_{it} v_{it}
#' Y_{it}}, with the imputation weights \eqn{v_{it}} of untreated
#' observations obtained exactly from the first-stage normal equations; the
#' variance is \eqn{\sum_c (\sum_{it \in c} v_{it} \tilde\varepsilon_{it})^2}
#' over clusters, with first-stage residuals for untreated observations and,
#' for treated ones, the effect minus its \eqn{v^2}-weighted average within
#' the cohort x horizon cell. Intervals use the normal distribution.
#'
#' Pre-trends (the paper's test, Section 4.4) are estimated separately on the
#' untreated observations by regressing the outcome on indicators of the
#' leads (periods before adoption) with the same fixed effects and
#' covariates; with `pretrends = TRUE` all leads but -1 (the reference). They
#' appear in the table as `event::-k`; `fit$pretest` holds their joint Wald
#' test (F with the cluster degrees of freedom).
#'
#' Observations that cannot be imputed (units never observed untreated, or
#' periods without untreated observations) are dropped with a message.
#'
#' Differences from didimputation (deliberate): with sampling weights that
#' vary across units, didimputation forms the imputation weights as
#' \eqn{-W Z_0 (Z_0'W^2 Z_0)^{-1} Z_1'W w^*} rather than the derivative of its
#' own estimate, \eqn{-W Z_0 (Z_0'W Z_0)^{-1} Z_1' w^*}, which is used here;
#' the estimates are equal and the standard errors differ (by 0.4-0.8\% on
#' didimputation's `df_het` with weights 1-3). With `pretrends = TRUE`
#' didimputation lets fixest drop one collinear lead of its choosing
#' (usually -1); here -1 is always the reference.
#'
#' @section Standard errors and their estimand:
#' Each estimate averages the treated observations of its horizon, so
#' cohorts enter with their REALISED shares, and the variance centres the
#' treated residuals within cohort x horizon cells, i.e. it conditions on the
#' realised cohort composition: the standard errors target the
#' realised-share averages (as [did_sa()]'s), not the population-share
#' averages of [did_cs()]'s aggregations and [did_gardner()] (whose standard
#' errors are larger on the same data when effects differ across cohorts).
#' Monte Carlo evidence in `vignette("coverage", package = "diffdiff")`.
#'
#' @inheritParams did_sa
#' @param gname First treated period of each unit: 0, `Inf`, `NA` or a value
#'   after the last period mean never treated; see section "Cohort coding" for
#'   the one rule every estimator applies.
#' @param horizon Event-time horizons (whole numbers >= 0) to estimate; `NULL`
#'   (default) or `TRUE`: every horizon with treated observations. Horizons
#'   without treated observations are dropped with a message.
#' @param nboot Multiplier-bootstrap draws (0, the default: analytic
#'   standard errors). With `nboot > 0` the standard errors come from a
#'   multiplier bootstrap of the estimates' influence functions (the scores
#'   of the variance above, one multiplier per cluster), scaled so that the
#'   bootstrap variance converges to the analytic one; did's
#'   interquartile-range rule. With a `survey` design (Taylor
#'   linearisation), one multiplier per PSU on the PSU totals centred within
#'   strata; not with replicate weights.
#' @param boot_weights `"rademacher"` (default), `"mammen"` or `"webb"`.
#' @param cband With `nboot > 0`, a uniform (sup-t) band over the event-time
#'   estimates (columns `cband.low`, `cband.high`; critical value `fit$crit`).
#' @param pretrends Leads for the pre-trend regression: `TRUE` (default) all
#'   leads with -1 as the reference, `FALSE` none, or negative whole numbers
#'   (the reference is then every other untreated observation).
#' @param cluster Column to cluster by (default `idname`; one-way).
#' @return An object of class `c("did_bjs", "dd_fit")`: rows `event::h` for
#'   leads (pre-trend coefficients) and horizons, and `ATT` (the average over
#'   all treated observations); `vcov()` covers all of them. Besides the
#'   fields of every fit ([dd_fit-methods]): `pretest`, the joint Wald test of
#'   the leads (a data frame with `statistic`, `df1`, `df2`, `p.value`; `NULL`
#'   without leads); `event_study`, the typed event study (its `reference`
#'   is -1 with `pretrends = TRUE`, else empty); `n_treated` and
#'   `n_untreated`, the imputed treated and the
#'   untreated observations; `first_stage`, the first-stage coefficients
#'   (covariates, then period effects, whose names `period::k` carry internal
#'   period codes rather than values of `tname`); `path`, `"cells"` when the
#'   period and lead indicators were handled as cohort x period cells (no
#'   weights, or weights constant within units) or `"dense"` (weights varying
#'   within units). The imputation weights themselves are not returned.
#' @references Borusyak, K., Jaravel, X. and Spiess, J. (2024). Revisiting
#'   event-study designs: robust and efficient estimation. Review of Economic
#'   Studies 91(6).
#' @examples
#' d <- read.csv(system.file("extdata", "sim_panel.csv", package = "diffdiff"))
#' bjs <- did_bjs(d, yname = "y", idname = "id", tname = "year", gname = "first_treat")
#' bjs
#' bjs$pretest
#' plot(bjs)
#' @inheritSection diffdiff-package Cohort coding
#' @inheritSection diffdiff-package Formula interface
#' @export
did_bjs <- function(data, yname, idname, tname, gname, xformla = NULL, weightsname = NULL,
                    horizon = NULL, pretrends = TRUE, cluster = NULL, alpha = 0.05,
                    nboot = 0, boot_weights = c("rademacher", "mammen", "webb"), cband = FALSE,
                    fe_tol = 1e-8, fe_maxit = 10000, survey = NULL) {
  call <- match.call()
  # the fixest-style formula (y ~ x | id + t, sunab(g, t)): the column-name call (R/formula.R)
  fcl <- dd_formula_call(match.call(), environment(), "did_bjs")
  if (!is.null(fcl)) return(eval(fcl, parent.frame()))
  dd_required(c("data", "yname", "idname", "tname", "gname"))
  sp <- dd_spec(alpha = alpha, nboot = nboot, boot_weights = boot_weights, cband = cband, fe_tol = fe_tol,
                fe_maxit = fe_maxit)
  alpha <- sp$alpha; opts <- sp$opts
  im <- dd_impute_setup(data, yname, idname, tname, gname, xformla, weightsname, cluster, survey, sp, horizon)
  st <- p <- im$st; sp <- im$spec
  fs <- im$fs; tr <- im$tr; Wt <- im$Wt; tau <- fs$adj[tr]
  # imputation weights of the untreated rows, v0 = -W Z0 (Z0'W Z0)^- Z1' Wt,
  # times their residuals
  v0e <- dd_impute_v(fs, st$idc[tr], st$tc[tr], p$X[tr, , drop = FALSE], Wt, mult = fs$resid)
  # treated residuals: tau minus its v^2-weighted mean within cohort x horizon
  ev <- st$ev[tr]; ev0 <- min(ev)
  cell <- dd_codes(st$g[tr] * (max(ev) - ev0 + 1) + (ev - ev0))       # cohort x horizon
  nc <- attr(cell, "nlev")
  V2 <- Wt^2
  tbar <- as.matrix(dd_cell_sums(V2, cell, nc, w = tau) / dd_cell_sums(V2, cell, nc))
  tbar[!is.finite(tbar)] <- 0
  # pre-trends on the untreated rows
  pre <- dd_bjs_pretrends(pretrends, st, p, fs, opts)
  est <- c(pre$est, colSums(Wt * tau))
  L <- length(pre$terms); post <- L + seq_len(ncol(Wt))
  blocks <- list(list(rows = fs$untreated, M = v0e, cols = post),
                 list(rows = tr, M = Wt * (tau - tbar[cell + 1L, , drop = FALSE]), cols = post))
  if (L) blocks <- c(blocks, list(list(rows = fs$untreated, M = pre$psi, cols = seq_len(L))))
  V <- dd_lin_vcov_blocks(blocks, names(est), length(p$y), st)
  if (!is.null(pre) && is.null(st$design)) {
    k <- seq_along(pre$terms)
    V[k, k] <- pre$V                  # the regression's small-sample-adjusted clustered variance
  }
  pretest <- if (!is.null(pre)) dd_wald(pre$est, V[seq_along(pre$terms), seq_along(pre$terms), drop = FALSE], pre$df)
  dd_impute_result("did_bjs", "Imputation estimator of Borusyak, Jaravel and Spiess (did_bjs)",
                   "BJS conservative", est, V, c(pre$leads, im$hz, NA), Inf, st, im, yname, idname, tname,
                   sp, call, list(pretest = pretest,
                                     event_study = dd_es_spec(reference = if (isTRUE(pretrends)) -1 else numeric(),
                                                              base_period = "imputation")))
}

# The pre-trend regression of did_bjs(): outcome on lead indicators (and the
# first stage's covariates) with unit and period effects, untreated rows only;
# clustered variance as the regression front ends (fixest's small-sample
# adjustment). psi: the coefficients' linearisation on the untreated rows, scaled so that
# its cluster cross-products equal that variance (used for the covariance
# with the post-treatment estimates).
dd_bjs_pretrends <- function(pretrends, st, p, fs, opts) {
  u <- fs$untreated
  leads <- dd_leads(pretrends, st$ev[u])
  if (!length(leads)) return(NULL)
  evu <- st$ev[u]
  nl <- length(leads); k <- if (is.null(p$X)) 0L else ncol(p$X)
  lnames <- paste0("event::", leads)
  j <- match(evu, leads)
  uc <- dd_recode(st$idc, u); tcu <- dd_recode(st$tc, u)
  fe <- list(unit = uc, period = tcu)
  wu <- if (is.null(p$w)) NULL else p$w[u]
  Xc <- if (k) p$X[u, , drop = FALSE] else matrix(0, length(u), 0)
  # the lead indicators depend on the cohort and the period: cells without
  # weights or with weights constant within units, else dense columns (the
  # same rows and weights as the first stage, hence the same path)
  if (dd_cells_ok(uc, wu)) {
    cells <- dd_cells(uc, tcu, ifelse(st$never[u], -Inf, st$g[u]), j, lnames)
    X <- Xc
  } else {
    cells <- NULL
    X <- matrix(0, length(u), nl + k, dimnames = list(NULL, c(lnames, colnames(p$X))))
    X[cbind(which(!is.na(j)), j[!is.na(j)])] <- 1
    if (k) X[, nl + seq_len(k)] <- Xc
  }
  reg <- suppressMessages(dd_regress(p$y[u], X, fe, wu, opts, cells = cells))   # the first stage reported collinear covariates
  keep <- intersect(lnames, names(reg$coef)[reg$keep])
  if (!length(keep)) return(NULL)
  # per-row linearisation of the lead coefficients: w e x~' B[, leads]
  kept <- names(reg$coef)[reg$keep]
  Vr <- NULL; df <- Inf; sc <- 1
  if (is.null(st$design) && !is.null(st$cl)) {
    vc <- dd_vcov(reg, "cluster", stats::setNames(list(dd_recode(st$cl, u)), names(p$cluster)[1]))
    Vr <- vc$V[keep, keep, drop = FALSE]
    df <- vc$df
    sc <- sqrt((vc$G / (vc$G - 1)) * ((reg$n - 1) / (reg$n - vc$K)))
  }
  psi_u <- dd_lin_rows(reg, reg$bread[, keep, drop = FALSE], NULL, NULL,
                       sc * (if (is.null(reg$w)) 1 else reg$w) * reg$resid)
  list(terms = keep, leads = leads[match(keep, lnames)], est = reg$coef[keep], psi = psi_u, V = Vr, df = df)
}

