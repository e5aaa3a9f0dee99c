# The dCDH engine (de Chaisemartin and D'Haultfoeuille 2024, as
# DIDmultiplegtDYN's did_multiplegt_dyn()), in stages: the sample and its
# group x period matrices (dd_dcdh_sample), the number of effects and
# placebos (dd_dcdh_n_effects), the horizon kernel's inputs
# (dd_dcdh_kernel_inputs), one direction of switching (dd_dcdh_core, one
# horizon at a time through C_dcdh_horizon: dd_dcdh_horizon) and the pooled
# effects, placebos and average total effect with their cluster influence
# functions (dd_dcdh_aggregate). did_dcdh() turns these into the fit
# (dd_dcdh_result: variance, bootstrap and joint tests from one V).

# group x period matrix helpers
dd_dcdh_first <- function(L) {                 # first column index with TRUE
  r <- max.col(L * 1, ties.method = "first"); r[rowSums(L) == 0] <- NA; r }
dd_dcdh_last <- function(L) {
  r <- max.col(L * 1, ties.method = "last");  r[rowSums(L) == 0] <- NA; r }
dd_dcdh_rowcum <- function(L) {                # cumulative sum along time
  if (ncol(L) == 1L) return(L * 1)
  M <- L * 1; for (k in 2:ncol(M)) M[, k] <- M[, k] + M[, k - 1]; M }
dd_dcdh_lag <- function(M, s) {                # row-based lag within group
  out <- matrix(NA_real_, nrow(M), ncol(M))
  if (s < ncol(M)) out[, (s + 1):ncol(M)] <- M[, 1:(ncol(M) - s)]
  out }
dd_dcdh_nz <- function(L) L & !is.na(L)                  # NA -> FALSE
dd_dcdh_w0 <- function(x, L) { x[!L] <- 0; x }           # ifelse(L, x, 0) for L without NA
# the cells' key: the baseline treatment, and the trends_nonparam value
dd_dcdh_bkey <- function(d_sq, tnp) if (is.null(tnp)) d_sq else paste(d_sq, tnp, sep = "\r")
# sum within (d_sq, t) cells, back on the groups' rows
dd_dcdh_cellsum <- function(M, bi) {
  r <- rowsum(M, bi, na.rm = TRUE); r[match(bi, as.integer(rownames(r))), , drop = FALSE] }
# outcome change net of the controls' change (dX: the controls' changes)
dd_dcdh_resid <- function(ctl, dy, dX) {
  if (is.null(ctl)) return(dy)
  for (j in seq_along(dX)) dy <- dy - ctl$theta[, j] * dX[[j]]
  dy
}

# The estimator on the group x period matrices (balanced grid; P marks the
# observed cells): sample rules, switchers in and out, effects, placebos,
# the average total effect and the group (cluster) influence functions of
# the analytic variance. Follows DIDmultiplegtDYN 2.4.0 (checked against
# 2.2.0's numbers; see ?did_dcdh for where they differ).
dd_dcdh_engine <- function(P, Y, D, W, CL, gl, effects, placebo, normalized, switchers, only_never_switchers,
                           tnp = NULL, same_switchers = FALSE, same_switchers_pl = FALSE, X = NULL,
                           less_conservative_se = FALSE, rules = NULL) {
  s <- dd_dcdh_sample(P, Y, D, W, CL, gl, tnp, X)
  # controls: the coefficients per baseline treatment, and the pieces of
  # their estimation's contribution to the variance
  s$ctl <- if (is.null(X)) NULL else dd_dcdh_controls(s$X, s$Y, s$N, s$W, s$K, s$Fg, s$d_sq, s$bi, s$G,
                                                       isTRUE(rules$dcdh_controls_2.2.0))
  nl <- dd_dcdh_n_effects(s, effects, placebo, switchers)
  k <- dd_dcdh_kernel_inputs(s, less_conservative_se, nl$l_XX)
  o <- list(normalized = normalized, only_never_switchers = only_never_switchers, same_switchers = same_switchers,
            same_switchers_pl = same_switchers_pl, less_conservative_se = less_conservative_se)
  L_u <- nl$L_u; L_a <- nl$L_a; Lp_u <- nl$Lp_u; Lp_a <- nl$Lp_a; l_XX <- nl$l_XX; l_pl <- nl$l_pl
  run_in <- switchers %in% c("", "in") && !is.na(L_u) && L_u != 0
  run_out <- switchers %in% c("", "out") && !is.na(L_a) && L_a != 0
  R1 <- if (run_in) dd_dcdh_core(s, k, o, 1, min(L_u, l_XX), min(l_pl, if (is.na(Lp_u)) 0 else Lp_u)) else NULL
  R0 <- if (run_out) dd_dcdh_core(s, k, o, 0, min(L_a, l_XX), min(l_pl, if (is.na(Lp_a)) 0 else Lp_a)) else NULL
  dd_dcdh_aggregate(s, R1, R0, l_XX, l_pl, switchers, normalized)
}

# sample rules on the group x period matrices: baseline treatments, first
# switches F_g, the design restriction, missing treatments, the balanced
# grid, S_g, the groups without a first stage dropped, and the clusters
dd_dcdh_sample <- function(P, Y, D, W, CL, gl, tnp, X) {
  cluster <- if (is.null(CL)) NULL else TRUE
  nG <- nrow(P); nT <- ncol(P)
  K <- matrix(rep(seq_len(nT), each = nG), nG, nT)
  ## ------------------------------------------------- 1. baseline, F_g
  min_d <- dd_dcdh_first(!is.na(D)); max_d <- dd_dcdh_last(!is.na(D))
  d_sq <- D[cbind(seq_len(nG), min_d)]
  dif <- D - d_sq
  up <- dd_dcdh_nz(P & !is.na(D) & dif > 0); dn <- dd_dcdh_nz(P & !is.na(D) & dif < 0)
  both <- P & dd_dcdh_rowcum(up) > 0 & dd_dcdh_rowcum(dn) > 0      # went above AND below D_g1
  P[both] <- FALSE
  ever <- dd_dcdh_rowcum(dd_dcdh_nz(P & !is.na(D) & abs(dif) > 0)) > 0
  Fg <- dd_dcdh_first(ever & P); Fg[is.na(Fg)] <- 0

  ## Design restriction: >= 2 distinct F_g (0 = never) within each baseline
  alive <- rowSums(P) > 0
  kk <- dd_dcdh_bkey(d_sq, tnp); bl0 <- sort(unique(kk[alive])); b0 <- match(kk, bl0)
  ndist <- tapply(Fg[alive], b0[alive], function(v) length(unique(v)))
  okb <- as.integer(names(ndist))[ndist >= 2]
  P[!(b0 %in% okb), ] <- FALSE
  alive <- rowSums(P) > 0
  G_XX <- sum(alive)
  if (G_XX == 0) dd_stop("no baseline treatment value has groups with two different first-switch dates (or never switching): no effect can be estimated.")

  ## keep (t, d) cells that still contain a not-yet-switched group
  b0[!alive] <- NA
  nyet <- dd_dcdh_nz(P & !ever)
  okc <- rowsum(nyet[alive, , drop = FALSE] * 1, b0[alive]) > 0
  cellok <- matrix(FALSE, nG, nT)
  cellok[alive, ] <- okc[match(b0[alive], as.integer(rownames(okc))), , drop = FALSE]
  P <- P & cellok
  colsP <- which(colSums(P) > 0)
  T_max <- max(colsP)
  Fg[Fg == 0] <- T_max + 1

  ## ------------------------------------------------- 2. missing treatments
  Y[!P] <- NA; D[!P] <- NA; W[!P] <- NA
  last_obs <- dd_dcdh_last(P & !is.na(D) & K < Fg)
  Y[dd_dcdh_nz(P & K < min_d)] <- NA
  sw <- Fg < T_max + 1
  dsqM <- matrix(d_sq, nG, nT)
  m <- dd_dcdh_nz(P & sw & is.na(D) & K < last_obs & K > min_d); D[m] <- dsqM[m]
  cond3 <- sw & !is.na(last_obs) & last_obs < Fg - 1     # uncertain switch date
  Y[dd_dcdh_nz(P & cond3 & K > last_obs)] <- NA
  trunc <- ifelse(cond3, last_obs + 1, NA)
  Fg[cond3] <- T_max + 1
  dFg <- rep(NA_real_, nG); ok <- Fg <= nT
  dFg[ok] <- D[cbind(which(ok), Fg[ok])]
  m <- dd_dcdh_nz(P & Fg < T_max + 1 & is.na(D) & K > Fg & last_obs == Fg - 1)
  D[m] <- matrix(dFg, nG, nT)[m]
  nsw <- Fg == T_max + 1
  m <- dd_dcdh_nz(P & nsw & is.na(D) & K > min_d & K < max_d); D[m] <- dsqM[m]
  Y[dd_dcdh_nz(P & nsw & K > max_d)] <- NA
  trunc[nsw] <- max_d[nsw] + 1

  ## ------------------------------------------------- 3. balanced grid
  rows <- which(alive & rowSums(P) > 0); cols <- colsP
  sub <- function(M) M[rows, cols, drop = FALSE]
  P <- sub(P); Y <- sub(Y); D <- sub(D); W <- sub(W); K <- sub(K)
  if (!is.null(X)) X <- lapply(X, sub)
  if (!is.null(cluster)) CL <- sub(CL)
  d_sq <- d_sq[rows]; Fg <- Fg[rows]; trunc <- trunc[rows]; gl_kept <- gl[rows]
  if (!is.null(tnp)) tnp <- tnp[rows]
  nG <- length(rows); nK <- length(cols); kv <- cols
  hasfill <- rowSums(!P) > 0
  fgt <- ifelse(hasfill | is.na(trunc), Fg, pmin(Fg, trunc))   # F_g_trunc max
  bl <- sort(unique(dd_dcdh_bkey(d_sq, tnp))); bi <- match(dd_dcdh_bkey(d_sq, tnp), bl)
  Tg <- (as.vector(tapply(fgt, bi, max)) - 1)[bi]
  N <- ifelse(is.na(Y) | is.na(D), 0, W); N[is.na(N)] <- 0

  ## S_g and no-first-stage switchers
  post <- K >= Fg & K <= Tg & !is.na(D)
  avg <- rowSums(ifelse(post, D, 0)) / rowSums(post)
  dropg <- !is.na(avg) & avg == d_sq & Fg != Tg + 1
  Sg <- as.numeric(avg > d_sq)
  Sg[is.nan(avg)] <- 1                                  # empty post window (as DIDmultiplegtDYN 2.4.0)
  Sg[Fg == T_max + 1] <- NA
  keep <- !dropg
  sel <- function(M) M[keep, , drop = FALSE]
  P <- sel(P); Y <- sel(Y); D <- sel(D); N <- sel(N); K <- sel(K); W <- sel(W)
  if (!is.null(X)) X <- lapply(X, sel)
  if (!is.null(cluster)) CL <- sel(CL)
  d_sq <- d_sq[keep]; Fg <- Fg[keep]; Tg <- Tg[keep]; Sg <- Sg[keep]
  if (!is.null(tnp)) tnp <- tnp[keep]
  gl_kept <- gl_kept[keep]; nG <- sum(keep)
  bl <- sort(unique(dd_dcdh_bkey(d_sq, tnp))); bi <- match(dd_dcdh_bkey(d_sq, tnp), bl)
  cF <- match(Fg, kv)
  dfg <- ifelse(is.na(cF), NA_real_, D[cbind(seq_len(nG), ifelse(is.na(cF), 1L, cF))])
  dfg[is.na(dfg) & Fg == T_max + 1] <- d_sq[is.na(dfg) & Fg == T_max + 1]
  Lg <- Tg - Fg + 1
  Lpl <- ifelse(Fg >= 3, pmin(Lg, Fg - 2), NA)
  if (!is.null(cluster)) {
    cmin <- suppressWarnings(apply(CL, 1, min, na.rm = TRUE))
    cmax <- suppressWarnings(apply(CL, 1, max, na.rm = TRUE))
    if (any(cmax > cmin)) dd_stop("`cluster` must be constant within each group (the groups must be nested in the clusters).")
    clg <- cmin
  } else clg <- seq_len(nG)
  G <- G_XX
  list(P = P, Y = Y, D = D, W = W, K = K, N = N, X = X, d_sq = d_sq, Fg = Fg, Tg = Tg, Sg = Sg, tnp = tnp,
       gl_kept = gl_kept, nG = nG, nK = nK, kv = kv, bl = bl, bi = bi, dfg = dfg, Lg = Lg, Lpl = Lpl,
       clg = clg, G = G, T_max = T_max, clustered = !is.null(cluster))
}

# the number of effects (l_XX) and placebos (l_pl), and the largest per
# direction (L_u switchers in, L_a out; Lp_u, Lp_a their placebos)
dd_dcdh_n_effects <- function(s, effects, placebo, switchers) {
  Sg <- s$Sg; Lg <- s$Lg; Lpl <- s$Lpl
  inS <- !is.na(Sg) & Sg == 1; outS <- !is.na(Sg) & Sg == 0
  mx <- function(v) { if (!length(v)) return(NA); m <- suppressWarnings(max(v, na.rm = TRUE)); if (!is.finite(m)) NA else m }
  L_u <- L_a <- Lp_u <- Lp_a <- NA
  if (switchers %in% c("", "in")) {
    L_u <- if (any(inS)) { m <- mx(Lg[inS]); if (is.na(m)) 0 else m } else 0
    if (placebo != 0 && any(inS)) { m <- mx(Lpl[inS]); Lp_u <- if (is.na(m) || m < 0) 0 else m }
  }
  if (switchers %in% c("", "out")) {
    L_a <- if (any(outS)) { m <- mx(Lg[outS]); if (is.na(m)) 0 else m } else 0
    if (placebo != 0 && any(outS)) { m <- mx(Lpl[outS]); Lp_a <- if (is.na(m) || m < 0) 0 else m }
  }
  bad <- function(L) is.na(L) || L == 0
  if ((switchers == "in" && bad(L_u)) || (switchers == "out" && bad(L_a)) ||
      (switchers == "" && bad(L_u) && bad(L_a)))
    dd_stop("no switcher%s has a not-yet-switched control with the same baseline treatment: no effect can be estimated.", if (switchers == "") "" else sprintf(" (switchers = \"%s\")", switchers))
  if (switchers == "") Lsel <- max(L_a, L_u, na.rm = TRUE)
  if (switchers == "in") Lsel <- L_u
  if (switchers == "out") Lsel <- L_a
  l_XX <- min(Lsel, effects)
  l_pl <- 0
  if (placebo != 0) {
    Lp <- switch(switchers, "in" = Lp_u, "out" = Lp_a, max(Lp_a, Lp_u, na.rm = TRUE))
    l_pl <- min(Lp, placebo, effects, na.rm = TRUE)
  }

  list(L_u = L_u, L_a = L_a, Lp_u = Lp_u, Lp_a = Lp_a, l_XX = l_XX, l_pl = l_pl)
}

# the horizon kernel's inputs: cohort codes, cluster codes and orders, and
# the switchers' treatment paths for less_conservative_se
dd_dcdh_kernel_inputs <- function(s, less_conservative_se, l_XX) {
  Fg <- s$Fg; dfg <- s$dfg; d_sq <- s$d_sq; tnp <- s$tnp; clg <- s$clg; bi <- s$bi; kv <- s$kv; Tg <- s$Tg
  D <- s$D; nG <- s$nG
  coh <- dd_combo_codes(dd_dcdh_bkey(d_sq, tnp), Fg, dfg)                      # (D_g1, F_g, D_gFg)
  clustered <- s$clustered

  # the horizon kernel's (C) inputs: cluster codes, and the groups in
  # baseline and in cohort order (to count distinct clusters)
  clc <- if (clustered) match(clg, unique(clg)) else integer()
  ncl <- length(unique(clc))
  ordx <- if (clustered) c(order(bi), order(coh)) - 1L else integer()
  kvd <- as.double(kv); Fgd <- as.double(Fg); Tgd <- as.double(Tg)
  # less_conservative_se: the switchers' treatment paths (baseline, F_g,
  # then the treatment at F_g, F_g + 1, ...; a missing one repeats the last)
  lcp <- NULL
  if (less_conservative_se) {
    key <- paste(dd_dcdh_bkey(d_sq, tnp), Fg); dprev <- d_sq
    lcp <- list(match(key, unique(key)))
    for (i in seq_len(max(l_XX, 1))) {
      cc <- match(Fg - 1 + i, kv); di <- rep(NA_real_, nG)
      di[!is.na(cc)] <- D[cbind(which(!is.na(cc)), cc[!is.na(cc)])]
      di[is.na(di)] <- dprev[is.na(di)]
      key <- paste(key, di); dprev <- di
      lcp[[i + 1L]] <- match(key, unique(key))
    }
  }

  list(coh = coh, clc = clc, ncl = ncl, ordx = ordx, kvd = kvd, Fgd = Fgd, Tgd = Tgd, lcp = lcp)
}

# one horizon's cells: switchers `dist` (NA where dy is missing) against
# the controls `never` with the same baseline: the influence functions of
# the estimate (U) and of its variance (Uv), the counts and the
# normalisation (sgn, Sgeq: the direction of dd_dcdh_core)
dd_dcdh_horizon <- function(s, k, o, sgn, Sgeq, dy, dist, never, i, dX = NULL, paths = NULL) {
  N <- s$N; K <- s$K; Fg <- s$Fg; Tg <- s$Tg; D <- s$D; d_sq <- s$d_sq; nG <- s$nG; nK <- s$nK; bi <- s$bi
  bl <- s$bl; G <- s$G; ctl <- s$ctl
  kvd <- k$kvd; Fgd <- k$Fgd; Tgd <- k$Tgd; coh <- k$coh; clc <- k$clc; ordx <- k$ordx; ncl <- k$ncl
  normalized <- o$normalized
  if (!is.double(dist)) storage.mode(dist) <- "double"
  if (!is.double(never)) storage.mode(never) <- "double"
  ms <- ds <- double()
  if (!is.null(paths)) { m <- dd_dcdh_path_means(dy, dist, N, paths); ms <- m$mean; ds <- m$dof }
  h <- .Call(C_dcdh_horizon, dy, dist, never, N, kvd, Fgd, Tgd, bi, coh, clc, ordx,
             as.integer(i), as.double(G), length(bl), max(coh), ncl, ms, ds)
  out <- list(N = h$N, Ndw = h$Ndw, U = h$U, Uv = h$Uv, cnt = h$cnt, dnorm = 0)
  Ni <- h$N
  if (Ni == 0) return(out)
  if (!is.null(ctl)) {
    Nc <- h$Nc[bi, , drop = FALSE]
    ratio <- h$Ntg[bi, , drop = FALSE] / Nc; ratio[Nc == 0] <- 0
    out$Uv <- out$Uv - dd_dcdh_controls_var(ctl, dX, (i <= Tg - 2) * (G / Ni) *
      (dist - ratio * never) * ((K >= i + 1) & (K <= Tg)) * N, G)
  }
  if (normalized) {
    inwin <- dd_dcdh_nz(K >= Fg & K <= Fg - 1 + i & Sgeq)
    st <- rowSums(dd_dcdh_w0(D - d_sq, inwin), na.rm = TRUE)
    out$dnorm <- sum((N / Ni * sgn * matrix(st, nG, nK))[dd_dcdh_nz(dist == 1)], na.rm = TRUE)
  }
  out
}

# one direction of switching (inc = 1: in, 0: out): n_eff effects and n_pl
# placebos, their influence functions, counts and normalisations, and the
# average total effect's pieces
dd_dcdh_core <- function(s, k, o, inc, n_eff, n_pl) {
  Y <- s$Y; K <- s$K; N <- s$N; D <- s$D; X <- s$X; Fg <- s$Fg; Tg <- s$Tg; Sg <- s$Sg; Lg <- s$Lg; nG <- s$nG
  T_max <- s$T_max; d_sq <- s$d_sq; bi <- s$bi; ctl <- s$ctl
  only_never_switchers <- o$only_never_switchers; same_switchers <- o$same_switchers
  same_switchers_pl <- o$same_switchers_pl; less_conservative_se <- o$less_conservative_se
  lcp <- k$lcp
  cellsum <- function(M) dd_dcdh_cellsum(M, bi)
  sgn <- if (inc == 1) 1 else -1
  Sgeq <- !is.na(Sg) & Sg == inc
  res <- list(N = numeric(n_eff), Ndw = numeric(n_eff), U = matrix(0, nG, n_eff),
              Uv = matrix(0, nG, n_eff), cnt = vector("list", n_eff),
              dnorm = numeric(n_eff), date = numeric(n_eff), dDg = vector("list", n_eff),
              Npl = numeric(n_pl), Npldw = numeric(n_pl), Upl = matrix(0, nG, max(n_pl, 1)),
              Uplv = matrix(0, nG, max(n_pl, 1)), cntpl = vector("list", n_pl),
              dnormpl = numeric(n_pl))
  keep_i <- vector("list", n_eff)
  # same_switchers: only switchers whose effects 1..n_eff all have an
  # observed outcome change and controls (F_g - 1 + n_eff <= T_g)
  same <- rep(TRUE, nG)
  if (same_switchers) {
    same <- Fg - 1 + n_eff <= Tg
    for (q in seq_len(n_eff)) {
      dyq <- Y - dd_dcdh_lag(Y, q)
      nq <- (K < Fg) * 1; nq[is.na(dyq)] <- NA
      if (only_never_switchers) nq[dd_dcdh_nz(Fg > K & Fg < T_max + 1 & !is.na(dyq))] <- 0
      okq <- dd_dcdh_nz(K == Fg - 1 + q & !is.na(dyq) & cellsum(nq * N) > 0)
      same <- same & rowSums(okq) > 0
    }
  }
  for (i in seq_len(n_eff)) {
    dy <- Y - dd_dcdh_lag(Y, i)
    never <- (K < Fg) * 1                               # F_g > t : not yet switched
    never[is.na(dy)] <- NA
    if (only_never_switchers) never[dd_dcdh_nz(Fg > K & Fg < T_max + 1 & !is.na(dy))] <- 0
    Nc <- cellsum(never * N)
    dist <- ((K == Fg - 1 + i) & (i <= Lg) & Sgeq & same & (Nc > 0)) * 1
    dist[is.na(dy)] <- NA
    if (i <= n_pl) keep_i[[i]] <- list(dist = dist, never = never)     # for the placebos
    dX <- if (is.null(ctl)) NULL else lapply(X, function(M) M - dd_dcdh_lag(M, i))
    h <- dd_dcdh_horizon(s, k, o, sgn, Sgeq, dd_dcdh_resid(ctl, dy, dX), dist, never, i, dX,
                 if (less_conservative_se) list(lcp[[1]], lcp[[2]], lcp[[i + 1]]))
    res$N[i] <- h$N; res$Ndw[i] <- h$Ndw; res$U[, i] <- h$U; res$Uv[, i] <- h$Uv; res$dnorm[i] <- h$dnorm
    if (h$N != 0) {
      res$cnt[[i]] <- h$cnt
      s1 <- dd_dcdh_nz(dist == 1)
      res$date[i] <- sum((N / h$N * sgn * (D - d_sq))[s1], na.rm = TRUE)
      res$dDg[[i]] <- dd_dcdh_w0(sgn * (D - d_sq), s1)
    }
  }
  # same_switchers_pl: only switchers whose placebos 1..n_pl all have an
  # observed outcome change and controls
  samepl <- rep(TRUE, nG)
  if (same_switchers_pl) for (q in seq_len(n_pl)) {
    dq <- dd_dcdh_lag(Y, 2 * q) - dd_dcdh_lag(Y, q)
    nq <- keep_i[[q]]$never * (!is.na(dq))
    okq <- dd_dcdh_nz(keep_i[[q]]$dist == 1 & !is.na(dq) & cellsum(nq * N) > 0)
    samepl <- samepl & rowSums(okq) > 0
  }
  for (i in seq_len(n_pl)) {
    dist <- keep_i[[i]]$dist * samepl; never <- keep_i[[i]]$never
    dpl <- dd_dcdh_lag(Y, 2 * i) - dd_dcdh_lag(Y, i)                  # Y(F_g - 1 - l) - Y(F_g - 1) at the switcher's row
    nevpl <- never * (!is.na(dpl))
    distpl <- dist * (!is.na(dpl)) * (cellsum(nevpl * N) > 0)
    dX <- if (is.null(ctl)) NULL else lapply(X, function(M) dd_dcdh_lag(M, 2 * i) - dd_dcdh_lag(M, i))
    h <- dd_dcdh_horizon(s, k, o, sgn, Sgeq, dd_dcdh_resid(ctl, dpl, dX), distpl, nevpl, i, dX)
    res$Npl[i] <- h$N; res$Npldw[i] <- h$Ndw; res$Upl[, i] <- h$U; res$Uplv[, i] <- h$Uv
    res$dnormpl[i] <- h$dnorm
    if (h$N != 0) res$cntpl[[i]] <- h$cnt
  }
  ## average total effect pieces
  sumN <- sum(res$N)
  num <- numeric(nG); numv <- numeric(nG); den <- 0
  for (i in seq_len(n_eff)) if (res$N[i] != 0) {
    w <- res$N[i] / sumN
    num <- num + w * res$U[, i]; numv <- numv + w * res$Uv[, i]; den <- den + w * res$date[i]
  }
  res$sumN <- sumN; res$Uate <- num / den; res$Uatev <- numv / den; res$den <- den
  res
}

# the effects, placebos and average total effect pooled over the two
# directions, with their cluster influence functions (rows: clusters)
dd_dcdh_aggregate <- function(s, R1, R0, l_XX, l_pl, switchers, normalized) {
  nG <- s$nG; nK <- s$nK; G <- s$G; Lg <- s$Lg; gl_kept <- s$gl_kept; Fg <- s$Fg; D <- s$D; Y <- s$Y; W <- s$W
  kv <- s$kv; Tg <- s$Tg; Sg <- s$Sg; d_sq <- s$d_sq; tnp <- s$tnp; clg <- s$clg
  getN <- function(R, field, i) if (is.null(R) || i > length(R[[field]])) 0 else R[[field]][i]
  clsum <- function(u) as.vector(rowsum(u, clg))
  zeroM <- matrix(0, nG, nK)
  pick <- function(R, fld, i, Nval) if (Nval != 0) R[[fld]][[i]] else zeroM
  IFs <- list()
  # has_se: whether the estimate gets a variance (the result layer computes
  # it from the influence functions)
  mk_row <- function(b, has_se, Ncnt, Sw, Nw, Sww)
    c(Estimate = b, has_se = as.numeric(has_se), N = Ncnt, Switchers = Sw, N.w = Nw, Switchers.w = Sww)
  # horizon i of the effects (placebo = FALSE) or placebos: switchers in and
  # out pooled with their weights; the row and the cluster influence function
  pooled <- function(i, placebo) {
    f <- if (placebo) c(N = "Npl", U = "Upl", Uv = "Uplv", dn = "dnormpl", cnt = "cntpl", dw = "Npldw")
         else c(N = "N", U = "U", Uv = "Uv", dn = "dnorm", cnt = "cnt", dw = "Ndw")
    N1 <- getN(R1, f[["N"]], i); N0 <- getN(R0, f[["N"]], i); tot <- N1 + N0
    Up <- if (N1 != 0) R1[[f[["U"]]]][, i] else 0; Um <- if (N0 != 0) -R0[[f[["U"]]]][, i] else 0
    Vp <- if (N1 != 0) R1[[f[["Uv"]]]][, i] else 0; Vm <- if (N0 != 0) -R0[[f[["Uv"]]]][, i] else 0
    b <- if (tot > 0) (N1 * sum(Up) / G + N0 * sum(Um) / G) / tot else NA
    uv <- if (tot > 0) (N1 / tot) * Vp + (N0 / tot) * Vm else numeric(nG)
    uc <- clsum(uv + numeric(nG))
    # an effect whose variance is exactly 0 has no SE (as 2.4.0); a placebo's is 0
    has_se <- tot > 0 && (placebo || sum(uc^2) > 0)
    dl <- 1
    if (normalized && tot > 0) {
      dl <- (N1 / tot) * getN(R1, f[["dn"]], i) + (N0 / tot) * getN(R0, f[["dn"]], i)
      if (!is.na(dl) && dl != 0) b <- b / dl else dl <- 1
    }
    if ((switchers == "" && N1 == 0 && N0 == 0) || (switchers == "out" && N0 == 0) ||
        (switchers == "in" && N1 == 0)) b <- NA
    # cells counted in either direction (as 2.2.0; see ?did_dcdh)
    cg <- pmax(pick(R1, f[["cnt"]], i, N1), pick(R0, f[["cnt"]], i, N0))
    list(row = mk_row(b, has_se, sum(cg > 0), getN(R1, f[["dw"]], i) + getN(R0, f[["dw"]], i), sum(cg), tot),
         IF = uc / dl)
  }
  row_names <- names(mk_row(0, TRUE, 0, 0, 0, 0))
  eff <- matrix(NA_real_, l_XX, length(row_names))
  for (i in seq_len(l_XX)) {
    h <- pooled(i, FALSE)
    eff[i, ] <- h$row
    IFs[[paste0("Effect_", i)]] <- h$IF
  }
  colnames(eff) <- row_names; rownames(eff) <- paste0("Effect_", seq_len(l_XX))

  ## average total effect
  sN1 <- sum(sapply(seq_len(l_XX), function(i) getN(R1, "N", i)))
  sN0 <- sum(sapply(seq_len(l_XX), function(i) getN(R0, "N", i)))
  den1 <- if (!is.null(R1) && sN1 != 0) R1$den else 0
  den0 <- if (!is.null(R0) && sN0 != 0) R0$den else 0
  if (switchers == "") {
    dd <- den1 * sN1 + den0 * sN0
    wp <- if (dd > 0) den1 * sN1 / dd else 0.5
  } else wp <- as.numeric(switchers == "in")
  Ua <- wp * (if (!is.null(R1) && sN1 != 0) R1$Uate else 0) +
    (1 - wp) * (if (!is.null(R0) && sN0 != 0) -R0$Uate else 0)
  Uav <- wp * (if (!is.null(R1) && sN1 != 0) R1$Uatev else 0) +
    (1 - wp) * (if (!is.null(R0) && sN0 != 0) -R0$Uatev else 0)
  ate_b <- sum(Ua + numeric(nG)) / G
  ate_se <- is.finite(sqrt(sum(clsum(Uav + numeric(nG))^2)) / G)
  cga <- zeroM
  for (i in seq_len(l_XX)) cga <- pmax(cga, pmax(pick(R1, "cnt", i, getN(R1, "N", i)),
                                                 pick(R0, "cnt", i, getN(R0, "N", i))))
  ate <- mk_row(ate_b, ate_se, sum(cga > 0),
                sum(sapply(seq_len(l_XX), function(i) getN(R1, "Ndw", i) + getN(R0, "Ndw", i))),
                sum(cga), sN1 + sN0)
  ate <- matrix(ate, 1, dimnames = list("Av_tot_eff", names(ate)))

  ## average number of periods over which effects accumulate
  Mg <- pmin(l_XX, Lg); num <- 0; dnm <- 0
  for (i in seq_len(l_XX)) for (R in list(R1, R0)) {
    if (is.null(R) || i > length(R$N) || R$N[i] == 0) next
    v <- R$dDg[[i]]; v[v == 0] <- NA
    num <- num + sum(v * (Mg - (i - 1)), na.rm = TRUE); dnm <- dnm + sum(v, na.rm = TRUE)
  }
  delta_D_avg_total <- num / dnm

  ## placebos
  pls <- NULL
  if (l_pl > 0) {
    pls <- matrix(NA_real_, l_pl, length(row_names))
    for (i in seq_len(l_pl)) {
      h <- pooled(i, TRUE)
      pls[i, ] <- h$row
      IFs[[paste0("Placebo_", i)]] <- h$IF
    }
    colnames(pls) <- colnames(eff); rownames(pls) <- paste0("Placebo_", seq_len(l_pl))
  }

  ## the influence functions (the variance and the joint tests: dd_dcdh_result)
  U <- do.call(cbind, IFs)

  list(Effects = eff, ATE = ate, Placebos = pls,
       delta_D_avg_total = delta_D_avg_total, N_Effects = l_XX, N_Placebos = l_pl,
       G = G, IF = U, IF_ate = clsum(Uav + numeric(nG)), groups = gl_kept,
       design = list(Fg = Fg, D = D, Y = Y, W = W, kv = kv, Tg = Tg, Sg = Sg, d_sq = d_sq, tnp = tnp,
                     groups = gl_kept))
}
