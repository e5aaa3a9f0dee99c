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
#' @export
did_bjs <- function(data, yname, idname, tname, gname, xformla = NULL, weightsname = NULL,
                    horizon = NULL, pretrends = TRUE, cluster = NULL, alpha = 0.05,
                    nboot = 0, boot_weights = c("rademacher", "mammen", "webb"), cband = FALSE,
                    fe_tol = 1e-8, fe_maxit = 10000, survey = NULL) {
  call <- match.call()
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
  cell <- dd_codes(paste(st$g[tr], st$ev[tr]))
  V2 <- Wt^2
  tbar <- rowsum(V2 * tau, cell, reorder = TRUE) / rowsum(V2, cell, reorder = TRUE)
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

# Shared by did_bjs() and did_gardner(): the variance set-up (one-way
# clustering by unit by default, or the survey design) and the panel with
# treatment timing (`st`), the first stage on the untreated rows
# (dd_impute_fit), rows that cannot be imputed, the horizons, and the
# estimand weights on the treated rows (columns: horizons, then the ATT;
# each column sums to one, proportional to the observation weights).
dd_impute_setup <- function(data, yname, idname, tname, gname, xformla, weightsname, cluster, survey, spec,
                            horizon) {
  spec <- dd_spec_variance(spec, data, idname, weightsname, cluster, NULL, survey, one_way = TRUE)
  st <- p <- dd_panel_timing(dd_panel(data, yname, idname, tname, c(gname = gname), xformla, weightsname,
                                      spec$cluster, NULL, spec$design), gname)
  fs <- dd_impute_fit(p$y, p$X, st$idc, st$tc, st$D, p$w, spec$opts)
  ok <- !is.na(fs$adj)
  if (!all(ok)) {
    message(sprintf(paste0("diffdiff: %d treated observation(s) removed: their unit or period has no ",
                           "untreated observation to impute from."), sum(!ok)))
    if (!any(ok & st$D)) dd_stop("no treated observation can be imputed.")
  }
  tr <- which(st$D & ok)
  if (is.null(st$design) && !is.null(st$cl))
    dd_warn_few_clusters(st$D[ok], st$never[ok], st$cl[ok], names(p$cluster)[1])
  hz <- dd_horizons(horizon, st$ev[tr])
  Wt <- dd_group_weights(st$ev[tr], hz, if (is.null(p$w)) NULL else p$w[tr], all = TRUE)
  list(st = st, spec = spec, fs = fs, ok = ok, tr = tr, hz = hz, Wt = Wt)
}

# Columns: for each value h of `at`, weights w 1(e == h) / sum; with
# all = TRUE a last column "ATT" over every row. Names event::h.
dd_group_weights <- function(e, at, w = NULL, all = FALSE) {
  W <- vapply(at, function(h) as.double(!is.na(e) & e == h), numeric(length(e)))
  W <- matrix(W, length(e), dimnames = list(NULL, if (length(at)) paste0("event::", at) else character()))
  if (all) W <- cbind(W, ATT = 1)
  if (!is.null(w)) W <- W * w
  sweep(W, 2, colSums(W), "/")
}


dd_impute_result <- function(estimator, title, label, est, V, event, df, st, im, yname, idname, tname, spec,
                             call, extra) {
  alpha <- spec$alpha
  keep <- which(im$ok)
  terms <- names(est)
  if (spec$nboot > 0L && !is.null(st$design) && st$design$replicate)
    dd_stop("the multiplier bootstrap (`nboot` = %d) is not available with a replicate-weight `survey` design (its standard errors come from the replicates); use nboot = 0.",
            spec$nboot)
  psi <- attr(V, "ifs"); attr(V, "ifs") <- NULL
  band <- which(!is.na(event))
  lab0 <- if (!is.null(st$design)) sprintf("Survey design (%s influence function)", label)
          else sprintf("%s, clustered (%s)", label, names(st$cluster)[1])
  bt <- dd_boot_table(est, V, df, spec, band, function(V) dd_ifs_boot(psi, V, spec, band,
                                                                       structure(lab0, psu = !is.null(st$design))))
  tab <- bt$tab; V <- bt$V
  tab$event <- event
  p <- st$p
  nu <- attr(dd_recode(st$idc, keep), "nlev"); nt <- attr(dd_recode(st$tc, keep), "nlev")
  info <- dd_info(estimator, title, yname, length(keep), if (!is.null(st$design)) "survey" else "cluster", lab0,
                  df, alpha, terms, n_units = nu, n_periods = nt,
                  n_clusters = if (is.null(st$design) && !is.null(st$cl)) attr(dd_recode(st$cl, keep), "nlev"),
                  fe_names = c(idname, tname), dropped = im$fs$dropped, more = list(fe_sizes = c(nu, nt)))
  if (spec$nboot > 0L) { info$vcov_type <- "bootstrap"; info$vcov_label <- bt$label }
  new_dd_fit(estimator, tab, est, V, info, call,
             c(extra, list(n_treated = length(im$tr), n_untreated = length(im$fs$untreated),
                           first_stage = im$fs$coef, path = im$fs$path, crit = bt$crit, nboot = spec$nboot,
                           boot_weights = spec$boot_weights, cband = spec$cband)))
}

# First stage of the imputation (and two-stage) estimators: outcome on unit
# and period effects and covariates over the untreated rows. The unit effect
# is absorbed (one fixed effect: exact in one pass of the shared demeaning),
# periods enter as indicators (first untreated period the reference), so that
# the period and unit effects are recovered exactly for imputation. Without
# weights or with weights constant within units (dd_cells_ok()) the period
# indicators are cells (dd_regress_cells: never formed row by row), else
# dense columns; `path` says which ("cells" or "dense").
# Returns the imputed-outcome residual adj = y - yhat0 for every row (NA when
# the row's unit or period has no untreated observation), the untreated
# residuals, and what dd_impute_v() needs.
dd_impute_fit <- function(y, X, idc, tc, D, w, opts) {
  u <- which(!D)
  tu <- sort(unique(tc[u]))
  k <- if (is.null(X)) 0L else ncol(X)
  pnames <- paste0("period::", tu[-1])
  uc <- dd_recode(idc, u)
  wu <- if (is.null(w)) NULL else w[u]
  tcu <- structure(tc[u], nlev = attr(tc, "nlev"))
  if (dd_cells_ok(uc, wu)) {
    j <- match(tcu, tu) - 1L
    j[j == 0L] <- NA_integer_
    cells <- dd_cells(uc, tcu, rep(0, length(u)), j, pnames, per_fe = FALSE)
    Xu <- if (k) X[u, , drop = FALSE] else matrix(0, length(u), 0)
  } else {
    cells <- NULL
    Xu <- dd_period_dummies(tcu, tu, lead = if (k) X[u, , drop = FALSE])
  }
  reg <- dd_regress(y[u], Xu, list(unit = uc), wu, opts, cells = cells)
  if (!is.null(cells) && is.null(reg$cells)) {
    # dd_regress() fell back to dense columns (a rank decision the cells' Gram
    # matrix cannot make): the period indicators are columns of Xd
    Xu <- cbind(Xu, cells$D[cells$idx + 1L, , drop = FALSE])
    cells <- NULL
  }
  theta <- reg$coef
  theta[is.na(theta)] <- 0                       # collinear columns contribute nothing
  beta <- theta[seq_len(k)]
  lam <- rep(NA_real_, attr(tc, "nlev"))
  lam[tu + 1L] <- c(0, theta[pnames])
  # a period whose indicator was dropped (collinear) cannot be imputed
  lost <- pnames[!reg$keep[match(pnames, names(reg$coef))]]
  if (length(lost)) lam[tu[match(lost, pnames) + 1L] + 1L] <- NA_real_
  xb <- if (k) drop(X %*% beta) else 0
  r0 <- y[u] - (if (k) xb[u] else 0) - lam[tcu + 1L]
  if (is.null(wu)) wu <- rep(1, length(u))
  Wi <- rowsum(wu, uc, reorder = TRUE)[, 1]
  alpha_u <- rowsum(wu * r0, uc, reorder = TRUE)[, 1] / Wi
  fr <- dd_first_rows(uc)
  alpha <- rep(NA_real_, attr(idc, "nlev"))
  alpha[idc[u][fr] + 1L] <- alpha_u
  adj <- y - (alpha[idc + 1L] + lam[tc + 1L] + xb)
  # unit means of the kept regressors over the untreated rows (raw - demeaned
  # at each unit's first row), in the order of the bread: dense, then cells
  kept <- names(reg$coef)[reg$keep]
  dn <- colnames(reg$Xd)
  Rbar <- Xu[fr, dn, drop = FALSE] - reg$Xd[fr, , drop = FALSE]
  if (!is.null(cells)) {
    cn <- colnames(reg$cells$M)
    cf <- reg$cells$idx[fr] + 1L
    Rbar <- cbind(Rbar, cells$D[cf, cn, drop = FALSE] - reg$cells$M[cf, , drop = FALSE])
  }
  list(adj = adj, resid = adj[u], untreated = u, uc = uc, Wi = Wi, reg = reg, k = k, tu = tu, pnames = pnames,
       Rbar = Rbar, uid = idc[u][fr], wu = wu, coef = reg$coef, dropped = reg$dropped, lam = lam, alpha = alpha,
       beta = beta, path = if (is.null(cells)) "dense" else "cells")
}

# Indicators of the periods `levels[-1]` (the first is the reference) for
# rows with period codes `tcode`, after the columns of `lead` (one matrix,
# filled in place).
dd_period_dummies <- function(tcode, levels, lead = NULL) {
  k <- if (is.null(lead)) 0L else ncol(lead)
  P <- matrix(0, length(tcode), k + length(levels) - 1L)
  if (k) P[, seq_len(k)] <- lead
  if (length(levels) > 1L) {
    j <- match(tcode, levels) - 1L
    P[cbind(which(j > 0), k + j[j > 0])] <- 1
  }
  colnames(P) <- c(colnames(lead), paste0("period::", levels[-1]))
  P
}

# Imputation weights of the untreated rows for the estimands whose weights
# on the treated rows (unit codes idt, period codes tct, covariates Xt) are
# the columns of Wt: v0 = -w (A_i / W_i + rtilde' theta), where A = Z1'Wt by
# unit, theta = (Rtilde' W Rtilde)^- (a_r - sum_i A_i rbar_i) (the normal
# equations with the unit effects eliminated; Rtilde the demeaned covariates
# and period indicators of the first stage, rbar their unit means).
# Returned multiplied by `mult` (a vector over the untreated rows).
dd_impute_v <- function(fs, idt, tct, Xt, Wt, mult = 1) {
  reg <- fs$reg
  kept <- names(reg$coef)[reg$keep]
  # a_r = Z1'Wt for the covariates and the period indicators (by period sums)
  Sp <- dd_cell_sums(Wt, tct, length(fs$lam))
  ar <- matrix(0, length(kept), ncol(Wt), dimnames = list(kept, colnames(Wt)))
  pk <- intersect(kept, fs$pnames)
  if (length(pk)) ar[pk, ] <- Sp[fs$tu[match(pk, fs$pnames) + 1L] + 1L, , drop = FALSE]
  xk <- setdiff(kept, fs$pnames)
  if (length(xk)) ar[xk, ] <- crossprod(Xt[, xk, drop = FALSE], Wt)
  # unit sums of the estimand weights, in the first stage's unit order
  A <- matrix(0, length(fs$uid), ncol(Wt))
  Ai <- rowsum(Wt, match(idt, fs$uid), reorder = TRUE)
  A[as.integer(rownames(Ai)), ] <- Ai
  theta <- reg$bread %*% (ar - crossprod(fs$Rbar, A))
  dd_lin_rows(reg, theta, A / fs$Wi, fs$uc, -fs$wu * mult)
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

# Joint Wald test that the coefficients b (covariance V) are all zero:
# F = b' V^- b / q with (q, df) degrees of freedom (chi-squared when df = Inf).
dd_wald <- function(b, V, df = Inf) {
  q <- length(b)
  e <- eigen((V + t(V)) / 2, symmetric = TRUE)
  pos <- e$values > max(e$values) * 1e-12
  stat <- sum((crossprod(e$vectors[, pos, drop = FALSE], b))^2 / e$values[pos]) / sum(pos)
  q <- sum(pos)
  p <- if (is.finite(df)) stats::pf(stat, q, df, lower.tail = FALSE) else stats::pchisq(stat * q, q, lower.tail = FALSE)
  data.frame(statistic = stat, df1 = q, df2 = df, p.value = p)
}

# Leads (negative event times) requested by `pretrends` among those observed
# in `ev`: TRUE all but -1 (the reference), FALSE/NULL none, or a set of
# negative whole numbers (absent ones dropped with a message).
dd_leads <- function(pretrends, ev) {
  if (is.null(pretrends) || isFALSE(pretrends)) return(numeric())
  avail <- sort(unique(ev[!is.na(ev) & ev < 0]))
  if (isTRUE(pretrends)) {
    leads <- setdiff(avail, -1)
  } else {
    if (!is.numeric(pretrends) || !length(pretrends) || anyNA(pretrends) || any(pretrends != round(pretrends)) ||
        any(pretrends >= 0))
      dd_stop("`pretrends` must be TRUE, FALSE or negative whole numbers (leads); got %s.", dd_show(pretrends))
    leads <- sort(unique(pretrends))
    miss <- setdiff(leads, avail)
    if (length(miss)) {
      if (length(miss) == length(leads))
        dd_stop("`pretrends` = %s: no untreated observation at these leads; observed leads are %s.",
                dd_show(pretrends), dd_show(avail))
      message(sprintf("diffdiff: `pretrends` %s dropped: no untreated observations at %s.", dd_show(miss),
                      if (length(miss) > 1) "these leads" else "this lead"))
      leads <- setdiff(leads, miss)
    }
  }
  if (!length(leads))
    message("diffdiff: no lead to estimate (`pretrends`): the data have no pre-treatment period besides the reference.")
  leads
}

# Rows of the regression's demeaned regressors (dense and cells) times the
# coefficient matrix B (kept regressors x H), plus a unit part A[ucode, ],
# scaled by s: one n x H matrix (C, C_lin_rows).
dd_lin_rows <- function(reg, B, A, ucode, s) {
  dn <- colnames(reg$Xd)
  cm <- if (is.null(reg$cells)) NULL else reg$cells$M %*% B[colnames(reg$cells$M), , drop = FALSE]
  storage.mode(B) <- "double"
  .Call(C_lin_rows, reg$Xd, B[dn, , drop = FALSE], cm, if (is.null(cm)) NULL else reg$cells$idx,
        if (is.null(A)) NULL else as.matrix(A), if (is.null(A)) NULL else as.integer(ucode), as.double(s), NULL)
}
