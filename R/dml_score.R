# did_dml()'s cells: each ATT(g,t) from the doubly robust (orthogonal)
# score with cross-fitted nuisances, and its influence function laid out as
# did_cs's engine lays out its own (R/did_cs.R: dd_cs_layout), so that the
# fit, the bootstrap and aggregate() are did_cs's.

# One 2x2 panel cell: dY the outcome changes, D the treated indicator, x
# the covariates (n x k, no intercept, k may be 0), w the weights (mean 1),
# folds; lrn the two learners; normalize "hajek" or "ht"; trim the
# comparison units' propensity bound; parametric: no cross-fitting with the
# linear / logit learners (the influence function then carries the two
# fits' estimation effect, as DRDID's drdid_panel). Returns att, the
# influence function phi (the estimate's error is mean(phi)), and the
# number of trimmed comparison units.
dd_dml_cell <- function(dY, D, x, w, folds, lrn, normalize, trim, parametric) {
  n <- length(dY)
  ps <- dd_cf_predict(lrn$propensity, x, D, w, rep(TRUE, n), folds, "classification")
  ps <- pmin(ps, 1 - 1e-6)
  m <- dd_cf_predict(lrn$outcome, x, dY, w, D == 0, folds, "regression")
  keep <- D == 1 | ps < trim
  wt <- w * D
  wc <- keep * w * ps * (1 - D) / (1 - ps)
  e <- dY - m
  mt <- mean(wt); mc <- mean(wc)
  eta1 <- mean(wt * e) / mt
  if (normalize == "hajek") {
    eta0 <- mean(wc * e) / mc
    att <- eta1 - eta0
    phi <- (wt * (e - eta1)) / mt - (wc * (e - eta0)) / mc
    if (parametric) phi <- phi + dd_dml_estimation_effect(dY, D, x, w, ps, m, wt, wc, eta0, mt, mc)
    alpha <- wc / mc
  } else {
    # Chang (2020): the comparison term divided by the treated share too
    s <- (wt * e - wc * e) / mt
    att <- mean(s)
    phi <- s - wt * att / mt
    alpha <- wc / mt
  }
  # for ovb_sensitivity(): the comparison units' residual trends and the
  # comparison term's weights (its Riesz representer: the term is mean(alpha e))
  list(att = att, phi = phi, n_trim = sum(D == 0 & !keep), e0 = (1 - D) * e, alpha = alpha)
}

# Sant'Anna and Zhao's (DRDID's drdid_panel) estimation-effect terms of the
# logit propensity and the comparison units' least-squares fit, for the
# doubly robust estimate without cross-fitting (added to its plug-in
# influence function)
dd_dml_estimation_effect <- function(dY, D, x, w, ps, m, wt, wc, eta0, mt, mc) {
  n <- length(dY)
  Xi <- cbind(1, x)
  e <- dY - m
  wo <- w * (1 - D)
  XpX <- crossprod(wo * Xi, Xi) / n
  lin_ols <- (wo * e * Xi) %*% solve(XpX)
  H <- chol2inv(chol(crossprod(Xi, ps * (1 - ps) * w * Xi))) * n
  lin_ps <- (w * (D - ps) * Xi) %*% H
  M1 <- colSums(wt * Xi) / n
  M2 <- colSums(wc * (e - eta0) * Xi) / n
  M3 <- colSums(wc * Xi) / n
  drop(-(lin_ols %*% M1) / mt - (lin_ps %*% M2 - lin_ols %*% M3) / mc)
}

# The panel cells' influence-function blocks in did_cs's layout, zero but
# for the cohort-share columns (the units' weights)
dd_cs_vals <- function(prep, lay) {
  bst <- prep$bstart
  vals <- lapply(seq_along(prep$bval), function(b) matrix(0, bst[b + 1] - bst[b], length(lay$cols[[b]])))
  for (b in seq_along(prep$bval)) if (lay$extra[b] >= 0)
    vals[[b]][, lay$extra[b] + 1L] <- if (is.null(prep$W)) 1 else prep$W[(bst[b] + 1L):bst[b + 1], 1]
  vals
}

# Cell c's units (rows of the wide panel: the blocks of its cohort and its
# comparison group), their blocks and the treated indicator
dd_cs_cell_units <- function(prep, lay, cells, c) {
  bst <- prep$bstart
  bs <- which(lay$pos[, c] >= 0L)
  blk <- rep(bs, bst[bs + 1] - bst[bs])
  list(units = unlist(lapply(bs, function(b) (bst[b] + 1L):bst[b + 1])), blk = blk, bs = bs,
       D = as.numeric(!prep$bnever[blk] & prep$bval[blk] == cells$g[c]))
}

# Cell c's influence function psi (on cu$units) into its column of each block
dd_cs_cell_store <- function(vals, lay, cu, c, psi) {
  for (b in cu$bs) vals[[b]][, lay$pos[b, c] + 1L] <- psi[cu$blk == b]
  vals
}

# Without cross-fitting the estimation effect needs the covariates (with an
# intercept) of full rank in all rows (the logit) and in each group's rows
# (the least-squares fits): TRUE when not (did_cs: the cell is NA, with a
# warning)
dd_dml_singular <- function(x, groups) {
  full <- function(r) qr(cbind(1, x[r, , drop = FALSE]))$rank > ncol(x)
  !full(rep(TRUE, nrow(x))) || !all(vapply(split(seq_len(nrow(x)), groups), full, logical(1)))
}

# Every cell: the samples, outcome changes, covariates and weights as
# did_cs's engine takes them (covariates and weights of the earlier of the
# two periods), the score, and the influence functions in did_cs's block
# layout (did's scale: n / n_cell times the cell's). Returns att, status,
# n_cell, n_trim (as the engine) and vals (per block).
dd_dml_cells <- function(prep, cells, lay, glist, fold, lrn, normalize, trim, parametric) {
  K <- length(cells$g); n <- prep$n
  vals <- dd_cs_vals(prep, lay)
  att <- numeric(K); status <- integer(K); ncell <- integer(K); ntrim <- integer(K)
  ovb <- vector("list", K)
  Tx <- if (is.null(prep$X)) 1L else dim(prep$X)[3]
  Tw <- if (is.null(prep$W)) 1L else ncol(prep$W)
  for (c in seq_len(K)) {
    if (lay$task[c] < 0L) next                                     # a reference cell: 0
    cu <- dd_cs_cell_units(prep, lay, cells, c)
    units <- cu$units; D <- cu$D
    ncell[c] <- length(units)
    if (!any(D == 1) || all(D == 1)) { att[c] <- NA_real_; status[c] <- 4L; next }
    tc <- cells$idx[c, 2] + 1L; bc <- cells$idx[c, 3] + 1L; pc <- min(tc, bc)
    dY <- prep$Y[units, tc] - prep$Y[units, bc]
    x <- if (is.null(prep$X)) matrix(0, length(units), 0)
         else matrix(prep$X[units, , if (Tx == 1L) 1L else pc], length(units))
    if (ncol(x)) colnames(x) <- paste0("x", seq_len(ncol(x)))
    w <- if (is.null(prep$W)) rep(1, length(units)) else prep$W[units, if (Tw == 1L) 1L else pc]
    w <- w / mean(w)
    # without cross-fitting the estimation effect needs full-rank designs
    # (did_cs: the cell is NA with a warning)
    if (parametric && ncol(x) && dd_dml_singular(x, D)) { att[c] <- NA_real_; status[c] <- 3L; next }
    r <- dd_dml_cell(dY, D, x, w, fold[units], lrn, normalize, trim, parametric)
    att[c] <- r$att; ntrim[c] <- r$n_trim
    ovb[[c]] <- list(units = units, e0 = r$e0, alpha = r$alpha)
    vals <- dd_cs_cell_store(vals, lay, cu, c, r$phi * n / length(units))
  }
  list(att = att, status = status, n_cell = ncell, n_trim = ntrim, vals = vals, ovb = ovb)
}

# One 2x2 repeated cross-sections cell: Sant'Anna and Zhao's locally
# efficient doubly robust score (DRDID's drdid_rc) with cross-fitted
# nuisances: the propensity on all rows, the comparison group's outcome in
# each period and the treated group's in each period (four regressions on
# their rows), each predicted for every row out of fold. y outcomes, post
# 0/1, D 0/1, x covariates (no intercept), w weights (mean 1). With
# `parametric` (no cross-fitting, linear learners) the influence function
# carries the five fits' estimation effects and equals drdid_rc's. Returns
# att and phi (the estimate's error is mean(phi)).
dd_dml_cell_rc <- function(y, post, D, x, w, folds, lrn, trim, parametric) {
  n <- length(y)
  ps <- pmin(dd_cf_predict(lrn$propensity, x, D, w, rep(TRUE, n), folds, "classification"), 1 - 1e-6)
  mu <- function(d, p) dd_cf_predict(lrn$outcome, x, y, w, D == d & post == p, folds, "regression")
  c0 <- mu(0, 0); c1 <- mu(0, 1); t0 <- mu(1, 0); t1 <- mu(1, 1)
  keep <- D == 1 | ps < trim
  yc <- post * c1 + (1 - post) * c0
  odds <- ps / (1 - ps)
  wv <- list(tpre = keep * w * D * (1 - post), tpost = keep * w * D * post,
             cpre = keep * w * odds * (1 - D) * (1 - post), cpost = keep * w * odds * (1 - D) * post,
             d = keep * w * D, dt1 = keep * w * D * post, dt0 = keep * w * D * (1 - post))
  mw <- lapply(wv, mean)
  r <- y - yc
  eta <- list(tpre = wv$tpre * r / mw$tpre, tpost = wv$tpost * r / mw$tpost, cpre = wv$cpre * r / mw$cpre,
              cpost = wv$cpost * r / mw$cpost, dpost = wv$d * (t1 - c1) / mw$d, dt1 = wv$dt1 * (t1 - c1) / mw$dt1,
              dpre = wv$d * (t0 - c0) / mw$d, dt0 = wv$dt0 * (t0 - c0) / mw$dt0)
  a <- lapply(eta, mean)
  att <- (a$tpost - a$tpre) - (a$cpost - a$cpre) + (a$dpost - a$dt1) - (a$dpre - a$dt0)
  inf <- function(k, wk) eta[[k]] - wv[[wk]] * a[[k]] / mw[[wk]]
  phi <- (inf("tpost", "tpost") - inf("tpre", "tpre")) - (inf("cpost", "cpost") - inf("cpre", "cpre")) +
    (inf("dpost", "d") - inf("dt1", "dt1")) - (inf("dpre", "d") - inf("dt0", "dt0"))
  if (parametric) {
    Xi <- cbind(1, x)
    ols <- function(sel, fit) {
      wo <- w * sel
      (wo * (y - fit) * Xi) %*% solve(crossprod(wo * Xi, Xi) / n)
    }
    L0 <- ols((1 - D) * (1 - post), c0); L1 <- ols((1 - D) * post, c1)
    T0 <- ols(D * (1 - post), t0); T1 <- ols(D * post, t1)
    Lps <- (w * (D - ps) * Xi) %*% (chol2inv(chol(crossprod(Xi, ps * (1 - ps) * w * Xi))) * n)
    cm <- function(v) colSums(v * Xi) / n
    treat_or <- L1 %*% (-cm(wv$tpost) / mw$tpost) - L0 %*% (-cm(wv$tpre) / mw$tpre)
    cont_ps <- Lps %*% (cm(wv$cpost * (r - a$cpost)) / mw$cpost - cm(wv$cpre * (r - a$cpre)) / mw$cpre)
    cont_or <- L1 %*% (-cm(wv$cpost) / mw$cpost) - L0 %*% (-cm(wv$cpre) / mw$cpre)
    or <- (T1 - L1) %*% cm(wv$d / mw$d - wv$dt1 / mw$dt1) - (T0 - L0) %*% cm(wv$d / mw$d - wv$dt0 / mw$dt0)
    phi <- phi + drop(treat_or - cont_ps - cont_or + or)
  }
  list(att = att, phi = phi, n_trim = sum(D == 0 & !keep))
}

# Every cell of repeated cross-sections: each row its own unit; the cell's
# rows are those of its two periods in the treated cohort and the
# comparison group; the influence functions in did_cs's RC block layout
# (dd_cs_rc_layout: unit u is row loc[u] of block blk[u]), n / n_cell times
# the cell's. Returns att, status, n_cell, n_trim and vals (per block).
dd_dml_cells_rc <- function(prep, cells, lay, fold, lrn, trim, parametric) {
  K <- length(cells$g); n <- prep$n
  nb <- length(lay$start) - 1L
  vals <- lapply(seq_len(nb), function(b) matrix(0, lay$start[b + 1] - lay$start[b], length(lay$cols[[b]])))
  for (b in which(lay$extra >= 0L)) {
    u <- which(lay$blk == b - 1L)
    vals[[b]][lay$loc[u] + 1L, lay$extra[b] + 1L] <- prep$unit_weight[u]
  }
  att <- numeric(K); status <- integer(K); ncell <- integer(K); ntrim <- integer(K)
  for (c in seq_len(K)) {
    tc <- cells$idx[c, 2]; bc <- cells$idx[c, 3]
    if (tc == bc) next                                             # a reference cell: 0
    g <- cells$g[c]
    rows <- which(prep$tcol %in% c(tc, bc) & ((!prep$never & prep$gval == g) | prep$never | prep$gval > cells$thr[c]))
    D <- as.numeric(!prep$never[rows] & prep$gval[rows] == g)
    post <- as.numeric(prep$tcol[rows] == tc)
    ncell[c] <- length(rows)
    if (length(unique(paste(D, post))) < 4L) { att[c] <- NA_real_; status[c] <- 4L; next }
    x <- prep$Xrc[rows, -1L, drop = FALSE]
    if (ncol(x)) colnames(x) <- paste0("x", seq_len(ncol(x)))
    w <- prep$w[rows] / mean(prep$w[rows])
    if (parametric && ncol(x) && dd_dml_singular(x, paste(D, post))) { att[c] <- NA_real_; status[c] <- 3L; next }
    r <- dd_dml_cell_rc(prep$y[rows], post, D, x, w, fold[rows], lrn, trim, parametric)
    att[c] <- r$att; ntrim[c] <- r$n_trim
    u <- prep$unit[rows] + 1L
    psi <- r$phi * n / length(rows)
    for (b in unique(lay$blk[u])) {
      sel <- lay$blk[u] == b
      vals[[b + 1L]][lay$loc[u[sel]] + 1L, lay$pos[b + 1L, c] + 1L] <- psi[sel]
    }
  }
  list(att = att, status = status, n_cell = ncell, n_trim = ntrim, vals = vals, ovb = vector("list", K))
}
