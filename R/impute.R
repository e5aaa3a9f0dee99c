# The imputation layer shared by did_bjs() and did_gardner(): the variance
# set-up and panel, the first stage on the untreated rows, the estimand
# weights, the imputation weights of the untreated rows, the linear-estimator
# variance from per-observation contributions, and the result.

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
                           "untreated observation to impute from%s."), sum(!ok),
                    if (fs$n_sets > 1L) sprintf(paste0(", or (the untreated observations link units and periods in %d ",
                                                       "separate sets) their unit and period lie in different sets"),
                                                fs$n_sets) else ""))
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
                             call, extra, vlabel = NULL) {
  alpha <- spec$alpha
  keep <- which(im$ok)
  terms <- names(est)
  if (spec$nboot > 0L && !is.null(st$design) && st$design$replicate)
    dd_stop("the multiplier bootstrap (`nboot` = %d) is not available with a replicate-weight `survey` design (its standard errors come from the replicates); use nboot = 0.",
            spec$nboot)
  psi <- attr(V, "ifs"); attr(V, "ifs") <- NULL
  band <- which(!is.na(event))
  lab0 <- if (!is.null(vlabel)) vlabel
          else if (!is.null(st$design)) sprintf("Survey design (%s influence function)", label)
          else sprintf("%s, clustered (%s)", label, names(st$cluster)[1])
  bt <- dd_boot_table(est, V, df, spec, band, function(V) dd_ifs_boot(psi, V, spec, band,
                                                                       structure(lab0, psu = !is.null(st$design))))
  tab <- bt$tab; V <- bt$V
  tab$event <- event
  p <- st$p
  nu <- attr(dd_recode(st$idc, keep), "nlev"); nt <- attr(dd_recode(st$tc, keep), "nlev")
  info <- dd_info(estimator, title, yname, length(keep),
                  if (!is.null(vlabel)) "conley" else if (!is.null(st$design)) "survey" else "cluster", lab0,
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
  # the untreated rows' units and periods may fall into several connected
  # sets: the unit and period effects are then identified within each set
  # only, and each set past the first loses one period indicator to the unit
  # effects (its normalisation, effect 0); a row whose unit and period lie
  # in different sets cannot be imputed
  cs <- dd_impute_components(idc[u], tc[u], attr(idc, "nlev"), attr(tc, "nlev"))
  if (length(lost) && cs$n > 1L) {
    lp <- tu[match(lost, pnames) + 1L]
    ref_set <- cs$period[tu[1] + 1L]
    norm <- cs$period[lp + 1L] != ref_set & !duplicated(cs$period[lp + 1L])
    lam[lp[norm] + 1L] <- 0
    lost <- lost[!norm]
  }
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
  if (cs$n > 1L) adj[!is.na(adj) & cs$unit[idc + 1L] != cs$period[tc + 1L]] <- NA_real_
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
       beta = beta, path = if (is.null(cells)) "dense" else "cells", n_sets = cs$n)
}

# The connected sets of the bipartite graph of units and periods linked by
# the rows (unit codes uc, period codes tc, 0-based; nu, nt levels): the set
# of each unit and each period (NA: no row), and their number n. Labels
# propagate (the smallest period code of the set) until nothing changes.
dd_impute_components <- function(uc, tc, nu, nt) {
  lp <- rep(NA_integer_, nt); lu <- rep(NA_integer_, nu)
  lp[unique(tc) + 1L] <- unique(tc)
  repeat {
    m <- lp[tc + 1L]
    lu2 <- rep(NA_integer_, nu)
    o <- order(m)
    f <- !duplicated(uc[o])
    lu2[uc[o][f] + 1L] <- m[o][f]
    m2 <- lu2[uc + 1L]
    o <- order(m2)
    f <- !duplicated(tc[o])
    lp2 <- lp
    lp2[tc[o][f] + 1L] <- m2[o][f]
    if (identical(lp2, lp) && identical(lu2, lu)) break
    lp <- lp2; lu <- lu2
  }
  list(unit = lu, period = lp, n = length(unique(lp[!is.na(lp)])))
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
  B <- dd_double(B)
  .Call(C_lin_rows, reg$Xd, B[dn, , drop = FALSE], cm, if (is.null(cm)) NULL else reg$cells$idx,
        if (is.null(A)) NULL else as.matrix(A), if (is.null(A)) NULL else as.integer(ucode), as.double(s), NULL)
}

# Event-time horizons to report: `horizon` (NULL: every horizon >= 0 with
# treated observations) checked against those present; absent ones dropped
# with a message.
dd_horizons <- function(horizon, present, arg = "horizon") {
  present <- sort(unique(present))
  if (is.null(horizon) || isTRUE(horizon)) return(present)
  if (!is.numeric(horizon) || !length(horizon) || anyNA(horizon) || any(horizon != round(horizon)) ||
      any(horizon < 0))
    dd_stop("`%s` must be NULL, TRUE or whole numbers >= 0 (periods since treatment); got %s.",
            arg, dd_show(horizon))
  horizon <- sort(unique(horizon))
  miss <- setdiff(horizon, present)
  if (length(miss)) {
    if (length(miss) == length(horizon))
      dd_stop("`%s` = %s: no treated observation at any of these horizons; observed horizons are %s.",
              arg, dd_show(horizon), dd_show(present))
    message(sprintf("diffdiff: `%s` %s dropped: no treated observations at %s.", arg,
                    dd_show(miss), if (length(miss) > 1) "these horizons" else "this horizon"))
  }
  intersect(horizon, present)
}

# Variance of linear estimators (did_bjs, did_gardner) from per-observation
# contributions given in blocks (rows, an m-column matrix M of those rows'
# contributions, and the estimates' columns it feeds; blocks may share rows):
# sums over clusters (st$cl) or the survey design's PSU / replicate rows,
# then their cross-products. Clustered: the cluster sums of each block are
# added, without forming the n x K matrix; otherwise the influence-function
# rows of did_cs (dd_if_rows) on the assembled matrix. K names the
# estimates; n the rows.
dd_lin_vcov_blocks <- function(blocks, names, n, st) {
  K <- length(names)
  if (is.null(st$design) && !is.null(st$cl)) {
    used <- unique(unlist(lapply(blocks, `[[`, "rows")))
    dd_check_nclusters(length(unique(st$cl[used])), names(st$cluster)[1])
  }
  ifs <- NULL
  if (!is.null(st$design) || is.null(st$cl)) {
    psi <- matrix(0, n, K)
    for (b in blocks) psi[b$rows, b$cols] <- psi[b$rows, b$cols] + b$M
    used <- sort(unique(unlist(lapply(blocks, `[[`, "rows"))))
    # observations in (unit, period) order, so that the multiplier bootstrap's
    # rows (observations, or a survey design's PSUs in the order of their
    # first unit) do not depend on the order of the rows of the data
    used <- used[order(dd_row_ranks(list(st$id[used], st$tt[used])))]
    psi <- dd_ifs_dense(psi[used, , drop = FALSE])
    R <- as.matrix(dd_if_rows(psi, if (!is.null(st$design)) dd_svy_if_rows(st$design, st$rows[used])))
    V <- crossprod(R)
    if (is.null(st$design) || !st$design$replicate) ifs <- R
  } else {
    S <- matrix(0, attr(st$cl, "nlev"), K)
    for (b in blocks) {
      s <- rowsum(b$M, st$cl[b$rows], reorder = TRUE)
      i <- as.integer(rownames(s)) + 1L
      S[i, b$cols] <- S[i, b$cols] + s
    }
    V <- crossprod(S)
    # rows for the multiplier bootstrap: clusters in sorted order of their values
    cv <- st$cluster[[1]][dd_first_rows(st$cl)]
    ifs <- S[order(cv), , drop = FALSE]
  }
  dimnames(V) <- list(names, names)
  structure(V, ifs = ifs)
}
