# did_bc()'s cells: the imputation and the doubly robust estimators of
# Caetano, Callaway, Payne and Sant'Anna (bad controls), each ATT(g,t) on
# the cell's units in wide form, and its influence function laid out as
# did_cs's engine lays out its own (as did_dml's cells, R/dml_score.R).
#
# A cell's data `v`: dY (outcome change, base period to t), D (0/1 cohort g
# against the comparison group), and the matrices (units x columns, no
# intercept, possibly zero columns) bpre / bpost (the bad control in the
# base period and in t; NULL without one), Z (covariates in the base
# period), W (the bad control's auxiliary covariates in the base period),
# dW and dZ (changes of covariates, base period to t).

# Least squares among rows `rows` of y on [1, X] (the regression engine's
# rank rule), with the predictions at every row, the kept design's rows and
# its (X'X)^-1
dd_bc_ols <- function(y, X, rows) {
  f <- suppressMessages(dd_regress(y[rows], X[rows, , drop = FALSE]))
  b <- f$coef; b[is.na(b)] <- 0
  list(coef = f$coef, keep = f$keep, fit = drop(cbind(1, X) %*% b), bread = f$bread, resid = f$resid)
}

# Logit among rows `rows` of a 0/1 y on [1, X] (IRLS on the same engine):
# the fitted probabilities at every row and the kept design's
# (X' diag(p(1-p)) X)^-1
dd_bc_logit <- function(y, X, rows) {
  cols <- c("(Intercept)", colnames(X))
  f <- suppressMessages(dd_glm(y[rows], cbind("(Intercept)" = 1, X[rows, , drop = FALSE]), family = "logit"))
  b <- dd_coef_full(f$reg$coef, cols)
  p <- stats::plogis(drop(cbind(1, X) %*% b))
  # the kept columns (the engine's bread's, in the columns' order) and the
  # information at the solution (the engine's bread may be one IRLS step
  # older, depending on which rank rule decided)
  keep <- cols %in% rownames(f$reg$bread)
  Sk <- cbind(1, X[rows, , drop = FALSE])[, keep, drop = FALSE]
  list(coef = b, keep = keep, fit = p, bread = chol2inv(chol(crossprod(Sk, p[rows] * (1 - p[rows]) * Sk))))
}

# The imputation estimator: the bad control's untreated value in t imputed
# for the treated (unconfoundedness: a regression of its value in t on its
# base-period value and W, dW, dZ, Z among the comparison units -- logit for
# a 0/1 bad control; "did": its change on W, dW, dZ, Z, added to the base
# value), then the comparison units' outcome change regressed on the
# (imputed) bad control in t, its base value, dZ and Z and predicted for
# the treated. The influence function carries both regressions' estimation
# effect (the first through the outcome regression's coefficient on the
# imputed bad control).
dd_bc_impute <- function(v, binary, strategy) {
  D <- v$D; n <- length(D); c0 <- D == 0; t1 <- D == 1
  n0 <- sum(c0); pi1 <- sum(t1) / n
  has_bc <- !is.null(v$bpre)
  first <- NULL
  if (has_bc) {
    if (strategy == "did") {
      S <- cbind(v$W, v$dW, v$dZ, v$Z)
      if (is.null(S)) S <- matrix(0, n, 0)
      first <- dd_bc_ols(drop(v$bpost - v$bpre), S, c0)
      imp <- drop(v$bpre) + first$fit
    } else {
      S <- cbind(bc_pre = drop(v$bpre), v$W, v$dW, v$dZ, v$Z)
      first <- if (binary) dd_bc_logit(drop(v$bpost), S, c0) else dd_bc_ols(drop(v$bpost), S, c0)
      imp <- first$fit
    }
    ximp <- ifelse(t1, imp, drop(v$bpost))
    R <- cbind(bc_imp = ximp, bc_pre = drop(v$bpre), v$dZ, v$Z)
  } else R <- cbind(v$dZ, v$Z)
  if (is.null(R)) R <- matrix(0, n, 0)
  out <- dd_bc_ols(v$dY, R, c0)
  e <- v$dY - out$fit
  att <- mean(e[t1])
  # the comparison units' term: the outcome regression's estimation effect
  # and, through its coefficient on the imputed bad control, the first
  # regression's (Sigma^-1 = n0 (X'WX)^-1)
  Ri <- cbind(1, R)[, out$keep, drop = FALSE]
  corr <- drop(Ri[c0, , drop = FALSE] %*% (n0 * out$bread %*% colMeans(Ri[t1, , drop = FALSE]))) * e[c0]
  if (has_bc) {
    b1 <- out$coef[["bc_imp"]]
    if (is.na(b1)) b1 <- 0
    Si <- cbind(1, S)[, first$keep, drop = FALSE]
    resp <- if (strategy == "did") drop(v$bpost - v$bpre) else drop(v$bpost)
    u <- resp - first$fit
    wt1 <- if (binary && strategy != "did") first$fit[t1] * (1 - first$fit[t1]) else 1
    ks <- n0 * first$bread %*% (b1 * colMeans(Si[t1, , drop = FALSE] * wt1))
    corr <- corr + drop(Si[c0, , drop = FALSE] %*% ks) * u[c0]
  }
  phi <- numeric(n)
  phi[t1] <- (e[t1] - att) / pi1
  phi[c0] <- -corr / (1 - pi1)
  list(att = att, phi = phi)
}

# Predictions of `lrn` fitted on rows `train` at rows `ev`, and at rows
# `pseudo` (a subset of train): in-sample for the linear learners, else out
# of fold within the training rows (their own folds), so that a flexible
# learner's pseudo-outcomes are not its fit to the same rows
dd_bc_pred <- function(lrn, x, y, train, ev, pseudo, type, fold) {
  w <- rep(1, length(y))
  if (is.null(pseudo) || lrn$name == "linear") {
    at <- c(which(ev), if (!is.null(pseudo)) which(pseudo))
    p <- lrn$fit(x[train, , drop = FALSE], y[train], w[train], x[at, , drop = FALSE], type)
    return(list(ev = p[seq_len(sum(ev))], pseudo = if (!is.null(pseudo)) p[-seq_len(sum(ev))]))
  }
  p <- lrn$fit(x[train, , drop = FALSE], y[train], w[train], x[ev, , drop = FALSE], type)
  inner <- match(fold[train], sort(unique(fold[train])))
  q <- dd_cf_predict(lrn, x[train, , drop = FALSE], y[train], w[train], rep(TRUE, sum(train)), inner, type)
  list(ev = p, pseudo = q[pseudo[train]])
}

# The doubly robust estimator (the paper's Algorithm 1): with m(X_t, X_b,
# dZ, Z) the comparison units' outcome change, p(X_b, W, dW, dZ, Z) the
# propensity, nu = E[m | p's features, D = 0] and omega = E[p / (1 - p) |
# m's features, D = 0], all cross-fitted,
#   phi = D (dY - nu) / pi - (1 - D) (m - nu) p / (1 - p) / pi
#         - (1 - D) (dY - m) omega / pi,
# att = mean(phi). Without a bad control nu = m and omega = p / (1 - p):
# Chang's score (did_dml(normalize = "ht")). Propensities are capped at
# 1 - 1e-6. Falls back to the imputation estimator (fallback = TRUE) when
# the treated are fewer than p's features plus `min_treated`, or when the
# propensity fitted on the whole cell exceeds `overlap` somewhere.
dd_bc_dr <- function(v, fold, lrn, binary, overlap, min_treated) {
  D <- v$D; n <- length(D); c0 <- D == 0
  has_bc <- !is.null(v$bpre)
  mx <- cbind(if (has_bc) cbind(bc_post = drop(v$bpost), bc_pre = drop(v$bpre)), v$dZ, v$Z)
  px <- cbind(if (has_bc) cbind(bc_pre = drop(v$bpre), v$W, v$dW), v$dZ, v$Z)
  if (is.null(mx)) mx <- matrix(0, n, 0)
  if (is.null(px)) px <- matrix(0, n, 0)
  colnames(mx) <- paste0("m", seq_len(ncol(mx))); colnames(px) <- paste0("p", seq_len(ncol(px)))
  fall <- function(why) c(dd_bc_impute(v, binary, "unconfoundedness"), list(fallback = why))
  if (sum(D) < ncol(px) + min_treated) return(fall("treated"))
  if (any(lrn$propensity$fit(px, D, rep(1, n), px, "classification") > overlap)) return(fall("overlap"))
  K <- max(fold)
  m <- p <- nu <- om <- numeric(n)
  for (k in seq_len(K)) {
    tr <- if (K == 1L) rep(TRUE, n) else fold != k
    ev <- if (K == 1L) rep(TRUE, n) else fold == k
    if (!any(ev)) next
    trc <- tr & c0
    mf <- dd_bc_pred(lrn$outcome, mx, v$dY, trc, ev, if (has_bc) trc, "regression", fold)
    pf <- dd_bc_pred(lrn$propensity, px, D, tr, ev, if (has_bc) trc, "classification", fold)
    m[ev] <- mf$ev
    p[ev] <- pmin(pf$ev, 1 - 1e-6)
    if (has_bc) {
      pt <- pmin(pf$pseudo, 1 - 1e-6)
      nu[ev] <- lrn$outcome$fit(px[trc, , drop = FALSE], mf$pseudo, rep(1, sum(trc)), px[ev, , drop = FALSE],
                                "regression")
      om[ev] <- lrn$outcome$fit(mx[trc, , drop = FALSE], pt / (1 - pt), rep(1, sum(trc)), mx[ev, , drop = FALSE],
                                "regression")
    } else {
      nu[ev] <- m[ev]
      om[ev] <- p[ev] / (1 - p[ev])
    }
  }
  pi1 <- mean(D)
  s <- (D * (v$dY - nu) - (1 - D) * (m - nu) * p / (1 - p) - (1 - D) * (v$dY - m) * om) / pi1
  att <- mean(s)
  list(att = att, phi = s - att - att / pi1 * (D - pi1), fallback = "")
}

# Every cell: the cell's units and their values (pre = the base period,
# post = t, whichever is earlier), the estimator, and the influence
# functions in did_cs's block layout, n / n_cell times the cell's.
# cols: the column indices of the roles in prep$X's covariates. Returns
# att, status, n_cell, n_trim (0), vals and each cell's fallback reason.
dd_bc_cells <- function(prep, cells, lay, fold, cols, o) {
  K <- length(cells$g); n <- prep$n
  vals <- dd_cs_vals(prep, lay)
  att <- numeric(K); status <- integer(K); ncell <- integer(K)
  fallback <- character(K); dropped <- character()
  Tx <- if (is.null(prep$X)) 1L else dim(prep$X)[3]
  slice <- function(units, j, tp) {
    if (!length(j)) return(NULL)
    x <- matrix(prep$X[units, j, if (Tx == 1L) 1L else tp], length(units))
    colnames(x) <- names(j)
    x
  }
  for (c in seq_len(K)) {
    if (lay$task[c] < 0L) next                                     # a reference cell: 0
    cu <- dd_cs_cell_units(prep, lay, cells, c)
    units <- cu$units; D <- cu$D
    ncell[c] <- length(units)
    if (!any(D == 1) || all(D == 1)) { att[c] <- NA_real_; status[c] <- 4L; next }
    tc <- cells$idx[c, 2] + 1L; bc <- cells$idx[c, 3] + 1L
    v <- list(dY = prep$Y[units, tc] - prep$Y[units, bc], D = D,
              bpre = slice(units, cols$bc, bc), bpost = slice(units, cols$bc, tc),
              Z = slice(units, cols$z, bc), W = slice(units, cols$w, bc))
    # changes that do not vary in the cell are dropped (as badcontrols)
    delta <- function(j) {
      if (!length(j)) return(NULL)
      d <- slice(units, j, tc) - slice(units, j, bc)
      flat <- apply(d, 2, function(z) isTRUE(all.equal(stats::var(z), 0)))
      dropped <<- c(dropped, names(j)[flat])
      if (all(flat)) NULL else d[, !flat, drop = FALSE]
    }
    v$dW <- delta(cols$dw); v$dZ <- delta(cols$dz)
    # too few comparison units for the regressions: no estimate
    nc <- function(x) if (is.null(x)) 0L else ncol(x)
    hb <- !is.null(v$bpre)
    if (sum(D == 0) <= 1L + max(2L * hb + nc(v$dZ) + nc(v$Z), hb + nc(v$W) + nc(v$dW) + nc(v$dZ) + nc(v$Z))) {
      att[c] <- NA_real_; status[c] <- 4L; next
    }
    r <- if (o$method == "dr") dd_bc_dr(v, fold[units], o$lrn, o$binary, o$overlap, o$min_treated)
         else dd_bc_impute(v, o$binary, o$strategy)
    att[c] <- r$att
    fallback[c] <- r$fallback %||% ""
    vals <- dd_cs_cell_store(vals, lay, cu, c, r$phi * n / length(units))
  }
  list(att = att, status = status, n_cell = ncell, n_trim = integer(K), vals = vals, fallback = fallback,
       dropped = unique(dropped))
}
