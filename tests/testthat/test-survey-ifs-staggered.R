# Survey Taylor-linearisation standard errors of the staggered estimators
# did_bjs, did_gardner and did_stacked equal survey::svytotal() of their
# influence-function totals on the same design. The influence functions are
# derived here independently from the published formulas, in plain R (dense
# model matrices and the normal equations; fixest::demean for the stacked
# regression's absorption), never from diffdiff's internals; the design is
# built with survey::svydesign. The survey weights w are the regression
# weights; every contribution psi below carries its w (psi = w x ...), and
# svytotal() multiplies by the design weights itself, so it gets psi / w.
# Tolerance 1e-8 (relative), the issue's.
#  did_bjs (Borusyak, Jaravel and Spiess 2024, Theorem 3, conservative):
#   estimate_k = sum_it v_itk y_it; untreated rows: v0 = -W0 Z0 (Z0'W0 Z0)^-1
#   Z1' w_k times the first-stage residual; treated rows: w_k (tau - tbar),
#   tbar the v^2-weighted mean of tau within the cohort x horizon cell.
#  did_gardner (Gardner 2022; Butts and Gardner 2022, GMM): second-stage
#   score x2 w e2 (X2'WX2)^-1 minus the first-stage correction
#   z w0 e0 (Z0'W0 Z0)^-1 Z'W X2 (X2'WX2)^-1.
#  did_stacked (Wing, Freedman and Hollingsworth 2024): the stacked data
#   built here, weighted LS with weights Q w, score Q w e x~ (X~'W X~)^-1 of
#   each stacked row, summed over the copies of each original row.

# w_varies = TRUE: survey weights that vary within units (so that did_bjs
# and did_gardner take their dense path instead of the cells path)
svy_setup <- function(w_varies = FALSE) {
  d <- sim_panel()
  if (w_varies) d$w <- d$w * (1 + 0.25 * (d$year %% 3))
  list(d = d,
       des = survey_design(d, weights = ~ w, strata = ~ state, ids = ~ id, nest = TRUE, lonely_psu = "adjust"),
       design_fun = function(dd) survey::svydesign(ids = ~ id, strata = ~ state, weights = ~ w, data = dd, nest = TRUE))
}

# svytotal's covariance of the columns of psi / w (psi: n x K, rows of d)
svy_total_vcov <- function(d, psi, design_fun) {
  nm <- colnames(psi)
  z <- psi / d$w
  colnames(z) <- paste0("psi", seq_len(ncol(z)))
  sd <- design_fun(cbind(d, z))
  op <- options(survey.lonely.psu = "adjust"); on.exit(options(op))
  V <- stats::vcov(survey::svytotal(stats::as.formula(paste("~", paste(colnames(z), collapse = " + "))), sd))
  V <- unclass(V)
  attributes(V) <- list(dim = dim(V), dimnames = list(nm, nm))
  V
}

# The first stage of the imputation estimators, dense: weighted OLS of y on
# unit and period indicators over the untreated rows (never treated, or
# before adoption); tau = y - yhat(0) on every row (the residual on the
# untreated ones), the treated rows' horizons and the estimand weights
# (columns event::h, then ATT; each w / sum of w over its treated rows).
impute_first_stage <- function(d) {
  w <- d$w
  tr <- d$first_treat > 0 & d$year >= d$first_treat
  u <- !tr
  Z <- stats::model.matrix(~ factor(id) + factor(year), d)
  A <- crossprod(Z[u, ], w[u] * Z[u, ])
  theta <- solve(A, crossprod(Z[u, ], w[u] * d$y[u]))
  tau <- drop(d$y - Z %*% theta)
  h <- ifelse(tr, d$year - d$first_treat, NA)
  hz <- sort(unique(h[tr]))
  X2 <- cbind(vapply(hz, function(k) as.numeric(tr & h == k), numeric(nrow(d))), ATT = as.numeric(tr))
  colnames(X2) <- c(paste0("event::", hz), "ATT")
  Wt <- sweep(w * X2, 2, colSums(w * X2), "/")
  list(w = w, tr = tr, u = u, Z = Z, A = A, tau = tau, h = h, X2 = X2, Wt = Wt)
}

test_that("did_bjs survey SEs: svytotal of the imputation weights times the residuals (Theorem 3)", {
  need_peer("fixest"); need_peer("survey")
  for (wv in c(FALSE, TRUE)) {
    s <- svy_setup(wv); d <- s$d
    f <- did_bjs(d, "y", "id", "year", "first_treat", pretrends = FALSE, survey = s$des)
    expect_identical(f$path, if (wv) "dense" else "cells")
    fs <- impute_first_stage(d)
    Wt <- fs$Wt; tr <- fs$tr; u <- fs$u; tau <- fs$tau
    est <- colSums(Wt * tau)
    expect_equal(names(coef(f)), names(est))
    expect_lt(rel_diff(coef(f), est), 1e-8)
    # untreated rows: v0 = -w0 z0' (Z0'W0 Z0)^-1 Z1' w_k, times the residual
    v0 <- -fs$w * (fs$Z %*% solve(fs$A, crossprod(fs$Z[tr, ], Wt[tr, ])))
    psi <- matrix(0, nrow(d), ncol(Wt), dimnames = list(NULL, colnames(Wt)))
    psi[u, ] <- v0[u, ] * tau[u]
    # treated rows: w_k (tau - tbar_k), tbar_k the mean of tau weighted by
    # w_k^2 (v^2) within the row's cohort x horizon cell
    cell <- paste(d$first_treat, fs$h)[tr]
    for (k in seq_len(ncol(Wt))) {
      v2 <- Wt[tr, k]^2
      tb <- tapply(v2 * tau[tr], cell, sum) / tapply(v2, cell, sum)
      tb[!is.finite(tb)] <- 0                       # cells outside column k (weights 0)
      psi[tr, k] <- Wt[tr, k] * (tau[tr] - tb[cell])
  }
  V <- svy_total_vcov(d, psi, s$design_fun)
  expect_lt(rel_diff(sqrt(diag(vcov(f))), sqrt(diag(V))), 1e-8)
  expect_lt(rel_diff(f$coeftable$std.error, sqrt(diag(V))), 1e-8)
  expect_lt(max(abs(vcov(f) - V)) / max(abs(V)), 1e-8)           # off-diagonals too
  }
})

test_that("did_gardner survey SEs: svytotal of the GMM scores (second stage minus the first-stage correction)", {
  need_peer("fixest"); need_peer("survey")
  for (wv in c(FALSE, TRUE)) {
    s <- svy_setup(wv); d <- s$d
    f <- did_gardner(d, "y", "id", "year", "first_treat", pretrends = FALSE, survey = s$des)
    expect_identical(f$path, if (wv) "dense" else "cells")
    fs <- impute_first_stage(d)
    w <- fs$w; u <- fs$u; Z <- fs$Z; X2 <- fs$X2; tau <- fs$tau
    # two second stages over all rows: horizon indicators (event study), the
    # treatment indicator (ATT); no intercept
    psi_of <- function(X) {
      B2 <- solve(crossprod(X, w * X))
      beta <- drop(B2 %*% crossprod(X, w * tau))
      e2 <- drop(tau - X %*% beta)
      score <- (X * (w * e2)) %*% B2
      gamma <- solve(fs$A, crossprod(Z, w * X))      # (Z0'W0 Z0)^-1 Z'W X2
      corr <- (Z * (u * w * tau)) %*% gamma %*% B2    # z w0 e0 (first-stage residual on untreated rows)
      list(beta = beta, psi = score - corr)
  }
  ev <- psi_of(X2[, -ncol(X2), drop = FALSE]); at <- psi_of(X2[, "ATT", drop = FALSE])
  est <- c(ev$beta, at$beta)
  psi <- cbind(ev$psi, at$psi)
  colnames(psi) <- names(est) <- colnames(X2)
  expect_equal(names(coef(f)), names(est))
  expect_lt(rel_diff(coef(f), est), 1e-8)
  V <- svy_total_vcov(d, psi, s$design_fun)
  expect_lt(rel_diff(f$coeftable$std.error, sqrt(diag(V))), 1e-8)
  expect_lt(max(abs(vcov(f) - V)) / max(abs(V)), 1e-8)
  }
})

test_that("did_stacked survey SEs: svytotal of the stacked scores summed over each row's copies", {
  need_peer("fixest"); need_peer("survey")
  s <- svy_setup(); d <- s$d
  kpre <- 2; kpost <- 1
  f <- did_stacked(d, "y", "id", "year", "first_treat", kappa_pre = kpre, kappa_post = kpost, survey = s$des)
  # the stack: per cohort a whose window fits, its units and the clean
  # controls (never treated, or first treated after a + kappa_post), periods
  # a - kappa_pre .. a + kappa_post
  g <- d$first_treat; never <- g == 0
  cohorts <- sort(unique(g[!never]))
  cohorts <- cohorts[cohorts - kpre >= min(d$year) & cohorts + kpost <= max(d$year)]
  S <- do.call(rbind, lapply(cohorts, function(a) {
    rows <- which((never | g == a | g > a + kpost) & d$year >= a - kpre & d$year <= a + kpost)
    data.frame(row = rows, a = a, e = d$year[rows] - a, D = as.integer(!never[rows] & g[rows] == a))
  }))
  # corrective weights: 1 for treated rows; (N^D_ae / N^D_e) / (N^C_ae / N^C_e)
  # for control rows, counts of stacked rows
  nae <- function(D) table(factor(S$a[S$D == D], cohorts), factor(S$e[S$D == D], -kpre:kpost))
  nT <- nae(1); nC <- nae(0)
  qc <- sweep(nT, 2, colSums(nT), "/") / sweep(nC, 2, colSums(nC), "/")
  S$Q <- ifelse(S$D == 1, 1, qc[cbind(match(S$a, cohorts), match(S$e, -kpre:kpost))])
  expect_equal(nrow(S), f$stacked_nobs)
  W <- S$Q * d$w[S$row]
  evs <- setdiff(-kpre:kpost, -1)
  X <- vapply(evs, function(k) as.numeric(S$D == 1 & S$e == k), numeric(nrow(S)))
  colnames(X) <- paste0("event::", evs)
  dm <- fixest::demean(cbind(y = d$y[S$row], X), list(S$D, S$e), weights = W, tol = 1e-13)
  Xt <- dm[, -1, drop = FALSE]; yt <- dm[, 1]
  B <- solve(crossprod(Xt, W * Xt))
  beta <- drop(B %*% crossprod(Xt, W * yt))
  e <- drop(yt - Xt %*% beta)
  post <- evs >= 0
  est <- c(beta, ATT = mean(beta[post]))
  names(est) <- c(colnames(X), "ATT")
  expect_equal(names(coef(f)), names(est))
  expect_lt(rel_diff(coef(f), est), 1e-8)
  # scores / w of the stacked rows (Q e x~ B), summed over each row's copies
  zs <- (Xt * (S$Q * e)) %*% B
  psi <- matrix(0, nrow(d), ncol(X))
  ps <- rowsum(zs, S$row, reorder = TRUE)
  psi[as.integer(rownames(ps)), ] <- ps
  psi <- cbind(psi, psi[, post, drop = FALSE] %*% rep(1 / sum(post), sum(post)))   # the ATT, a linear combination
  colnames(psi) <- names(est)
  expect_gt(anyDuplicated(S$row), 0)                # some rows are in several sub-experiments
  V <- svy_total_vcov(d, psi * d$w, s$design_fun)
  expect_lt(rel_diff(f$coeftable$std.error, sqrt(diag(V))), 1e-8)
  expect_lt(max(abs(vcov(f) - V)) / max(abs(V)), 1e-8)
})
