# did_dcdh()'s controls: the covariate formula, the coefficients per baseline
# treatment and their contribution to the variance; and the path means of
# less_conservative_se.

# `controls`: column names or a one-sided formula -> the covariate formula
dd_dcdh_controls_formula <- function(controls, data) {
  if (is.null(controls)) return(NULL)
  if (inherits(controls, "formula")) return(controls)
  if (!is.character(controls) || !length(controls) || anyNA(controls) || any(!nzchar(controls)))
    dd_stop("`controls` must be column names (a character vector) or a one-sided formula; got %s.",
            dd_show(controls))
  miss <- setdiff(controls, names(data))
  if (length(miss)) dd_stop("`controls` names %s, which is not a column of `data`.", dd_show(miss))
  stats::as.formula(paste("~", paste0("`", controls, "`", collapse = " + ")), env = baseenv())
}

# dCDH with controls (de Chaisemartin and D'Haultfoeuille 2024, web appendix;
# DIDmultiplegtDYN's `controls`). For each baseline treatment d whose groups
# have at least two first-switch dates, theta_d is the (weighted) regression
# of the first difference of the outcome on the first differences of the
# controls with period effects, over the not-yet-switched cells of baseline
# d; the effects then use the outcome's change net of theta_d'(change of the
# controls). The variance gets the estimation of theta_d through, per group,
# `inb` = (its share of theta_d's influence) - theta_d, which
# dd_dcdh_controls_var() weights by each horizon's M. Y, N, W, K and X[[j]]
# are group x period matrices; Fg, d_sq, bi are per group (bi: the cell key
# of baseline and trends_nonparam).
dd_dcdh_controls <- function(X, Y, N, W, K, Fg, d_sq, bi, G, v220 = FALSE) {
  nG <- nrow(Y); nX <- length(X)
  lag1 <- function(M) cbind(NA_real_, M[, -ncol(M), drop = FALSE])
  dY <- Y - lag1(Y)
  dX <- lapply(X, function(M) M - lag1(M))
  okX <- Reduce(`&`, lapply(dX, function(M) !is.na(M)))
  nys <- K < Fg & !is.na(dY)                        # not yet switched, outcome change observed
  col_of <- function(v, L) matrix(vapply(v, function(M) M[L], numeric(sum(L))), ncol = length(v),
                                  dimnames = list(NULL, paste0("x", seq_along(v))))
  # the package's least squares (dd_regress: fixed effects absorbed, pivoted
  # QR); a collinear control gets coefficient 0 (DIDmultiplegtDYN's invsym)
  ols <- function(y, Xm, fe, w) {
    r <- suppressMessages(dd_regress(y, Xm, list(cell = dd_codes(fe)), w, none_ok = TRUE))
    b <- r$coef; b[is.na(b)] <- 0
    B <- matrix(0, nX, nX); B[r$keep, r$keep] <- r$bread
    list(coef = unname(b), bread = B, Xd = r$Xd, keep = r$keep, fitted = y - r$resid)
  }
  theta <- matrix(0, nG, nX); levels <- list(); singular <- character()
  for (l in sort(unique(d_sq))) {
    lev <- d_sq == l
    if (length(unique(Fg[lev])) < 2L) next
    ml <- nys & okX & lev & N > 0
    if (!any(ml)) dd_stop("`controls`: the groups with baseline treatment %s have no not-yet-switched period with the outcome and the controls observed in two consecutive periods; their controls' coefficients cannot be estimated.", format(l))
    # theta_d: the outcome's first differences on the controls', within
    # (baseline x trends_nonparam) x period cells, weighted
    gi <- row(ml)[ml]
    th_fit <- ols(dY[ml], col_of(dX, ml), dd_combo_codes(bi[gi], K[ml]), N[ml])
    if (!all(th_fit$keep)) singular <- c(singular, format(l))
    th <- th_fit$coef
    # the normalisation of theta_d's influence: the baseline's control cells
    # (DIDmultiplegtDYN 2.4.0); 2.2.0 counted every baseline's, and fitted
    # E-hat below without the weights (rules = "DIDmultiplegtDYN-2.2.0"
    # reproduces both, for the parity tests against 2.2.0's numbers)
    rsum <- if (v220) sum(N[K >= 2 & K <= max(Fg) - 1 & nys]) else sum(N[ml & K >= 2 & K <= max(Fg[gi]) - 1])
    inv_den <- th_fit$bread * rsum * G
    # E-hat: period effects + controls' changes, fitted over the baseline's
    # not-yet-switched cells (weighted; rows with a control missing left out)
    rr <- nys & okX & lev
    E <- matrix(NA_real_, nG, ncol(Y))
    E[rr] <- ols(dY[rr], col_of(dX, rr), K[rr], if (v220) rep(1, sum(rr)) else W[rr])$fitted
    ehd <- colSums(nys & lev)                        # not-yet-switched cells per period
    E[rr] <- E[rr] * (ehd[col(rr)[rr]] >= 2)
    fac <- ifelse(ehd >= 2, sqrt(ehd / pmax(ehd - 1, 1)), 1)
    T_d <- max(Fg[lev]) - 1
    N_c <- sum(N[nys & lev & K >= 2 & K <= T_d])
    # each group's sum over its control cells of the demeaned controls'
    # changes times the recentred outcome change
    f <- N * matrix(fac, nG, ncol(Y), byrow = TRUE) * (dY - E) / N_c
    f[!(K >= 2 & K <= Fg - 1) | is.na(E)] <- 0
    in_sum <- matrix(0, nG, nX)
    sg <- rowsum(f[ml] * th_fit$Xd, gi, reorder = TRUE)
    in_sum[as.integer(rownames(sg)), th_fit$keep] <- sg
    inb <- (lev & Fg >= 3) * (in_sum %*% t(inv_den)) - matrix(th, nG, nX, byrow = TRUE)
    theta[lev, ] <- matrix(th, sum(lev), nX, byrow = TRUE)
    levels[[length(levels) + 1L]] <- list(lev = lev, inb = inb)
  }
  if (length(singular))
    warning(sprintf("`controls`: the controls are collinear among the not-yet-switched cells of the groups with baseline treatment %s; the collinear ones are left out there.", paste(singular, collapse = ", ")), call. = FALSE)
  list(theta = theta, levels = levels)
}

# The controls' part of a horizon's variance influence functions (one per
# group): sum over baselines d and controls j of M_dj * inb_dj, where M_dj
# averages the horizon's weights `base` (groups x periods) times the
# controls' changes dX[[j]] over the groups of baseline d.
dd_dcdh_controls_var <- function(ctl, dX, base, G) {
  part <- numeric(nrow(base))
  for (lv in ctl$levels) for (j in seq_along(dX)) {
    M <- sum((base * dX[[j]])[lv$lev, , drop = FALSE], na.rm = TRUE) / G
    part <- part + M * lv$inb[, j]
  }
  part
}

# less_conservative_se: each switcher's cohort mean of the outcome change and
# its number of groups, over the finest of its treatment paths
# (paths[[3]]: up to this horizon; paths[[2]]: baseline, F_g and the
# treatment at F_g; paths[[1]]: baseline and F_g) that has more than one
# group (as DIDmultiplegtDYN: groups, not clusters)
dd_dcdh_path_means <- function(dy, dist, N, paths) {
  sf <- N != 0 & !is.na(dist) & dist == 1
  w <- function(x) { x[!sf | is.na(x)] <- 0; x }
  cnt <- rowSums(w(N)); tot <- rowSums(w(N * dy)); dof <- rowSums(sf & !is.na(dy))
  by <- function(v, code) as.vector(rowsum(v, code, reorder = TRUE))[code]
  lv <- lapply(paths, function(code) list(mean = by(tot, code) / by(cnt, code), dof = by(dof, code),
                                          full = tabulate(code)[code] > 1))
  pick <- function(f) {
    v <- ifelse(lv[[3]]$full, lv[[3]][[f]], NA_real_)
    v <- ifelse(!lv[[3]]$full & lv[[2]]$full, lv[[2]][[f]], v)
    ifelse(!lv[[2]]$full, lv[[1]][[f]], v)
  }
  list(mean = pick("mean"), dof = pick("dof"))
}
