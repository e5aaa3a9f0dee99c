# Bandwidth selection for rd_robust(), as rdrobust 4.1's (Calonico, Cattaneo
# and Titiunik 2014; Calonico, Cattaneo and Farrell 2020): the MSE-optimal
# and CER-optimal selectors, common (rd), per side (two), for the sum
# (sum) and their combinations. Every local fit is C_rd_lp (src/rd.c) on
# one side; the variance of a fit is the sum of squares of its observations'
# terms (cluster sums with CR1 when clustered).

# One side's fit: sd a side (dd_rd_side), h and b, orders p, q (-1: none),
# derivative nu, s: NULL or the combination of D's columns whose variance
# terms are wanted
dd_rd_lp <- function(sd, h, b, p, q, nu, s = NULL, st)
  .Call(C_rd_lp, sd$d, sd$D, sd$fw, as.double(h), as.double(b), as.integer(c(p, q, nu)), st$kern,
        if (is.null(s)) NULL else as.double(s), st$vce_code, st$nnmatch)

# The variance of a fit's nu-th coefficient from its terms psi (over the
# window), with CR1's factor ((n - 1) / (n - k)) G / (G - 1) when clustered
# (clusters counted in the window)
dd_rd_var <- function(psi, f, sd, k) {
  if (is.null(sd$cl)) return(sum(psi^2))
  g <- sd$cl[f$idx]
  S <- rowsum(psi, g, reorder = FALSE)
  n <- length(psi); G <- length(S)
  ((n - 1) / (n - k)) * (G / (G - 1)) * sum(S^2)
}

# The combination s of the columns (y[, T], Z) of a pilot fit of one side,
# as rdrobust's selector: sharp 1; covariates (1, -gamma_y) from the side's
# own partialled cross-products; fuzzy the linearised ratio of the side's
# nu-th coefficients
dd_rd_s_pilot <- function(f, st, nu) {
  m <- ncol(f$beta_p)
  if (m == 1L) return(1)
  dT <- st$dT
  fac <- factorial(nu)
  if (st$dZ == 0L) {
    tY <- fac * f$beta_p[nu + 1, 1]; tT <- fac * f$beta_p[nu + 1, 2]
    return(c(1 / tT, -tY / tT^2))
  }
  A <- f$DWD - crossprod(f$U, f$beta_p)
  z <- (2 + dT):m
  gam <- dd_rd_gamma(A[z, z, drop = FALSE], A[z, seq_len(1 + dT), drop = FALSE])
  if (dT == 0L) return(c(1, -gam[, 1]))
  sY <- c(1, -gam[, 1]); sT <- c(1, -gam[, 2])
  tY <- fac * sum(sY * f$beta_p[nu + 1, c(1, z)])
  tT <- fac * sum(sT * f$beta_p[nu + 1, c(2, z)])
  c(1 / tT, -tY / tT^2, -gam[, 1] / tT + tY / tT^2 * gam[, 2])
}

# gamma = A_ZZ^{-1} A_ZY: rdrobust's Moore-Penrose inverse (relative
# tolerance 1e-15) after dropping collinear covariates
dd_rd_gamma <- function(AZZ, AZY) dd_pinv(AZZ, tol = 1e-15, rhs = AZY)

# rdrobust_bw: the variance, bias and regularisation constants of an
# order-o fit for derivative nu at the pilot bandwidth hV, the bias from an
# order-oB fit at hB; the pilot parts are cached per (o, nu) in `cache`
dd_rd_bwstep <- function(sd, o, nu, oB, hV, hB, scale, st, cache) {
  nan <- list(V = NaN, B = NaN, R = NaN, rate = 1 / (2 * o + 3))
  key <- paste(o, nu)
  pc <- cache[[key]]
  if (is.null(pc)) {
    # one fit when the outcome is one column (s = 1), else a second with s
    one <- ncol(sd$D) == 1L
    f <- dd_rd_lp(sd, hV, hV, o, -1L, nu, if (one) 1, st)
    if (!f$ok) { assign(key, list(VV = NaN), envir = cache); return(nan) }
    s <- dd_rd_s_pilot(f, st, nu)
    f2 <- if (one) f else dd_rd_lp(sd, hV, hV, o, -1L, nu, s, st)
    pc <- list(VV = dd_rd_var(f2$psi_cl, f2, sd, o + 1), BC = hV^nu * f$GinvL[nu + 1], s = s)
    assign(key, pc, envir = cache)
  }
  if (!is.finite(pc$VV) || !is.finite(hB) || hB <= 0) return(nan)
  fB <- dd_rd_lp(sd, hB, hB, oB, -1L, o + 1, if (scale > 0) pc$s, st)
  if (!fB$ok) return(nan)
  Reg <- 0
  if (scale > 0) Reg <- 3 * pc$BC^2 * dd_rd_var(fB$psi_cl, fB, sd, oB + 1)
  list(V = (2 * nu + 1) * hV^(2 * nu + 1) * pc$VV,
       B = sqrt(2 * (o + 1 - nu)) * pc$BC * sum(pc$s * fB$beta_p[o + 2, ]),
       R = scale * 2 * (o + 1 - nu) * Reg, rate = 1 / (2 * o + 3))
}

# The selectors. L, R: the sides on the selection scale (standardised when
# st$std); c_bw, bw_max*, bw_min* as rdrobust. Returns the (h_l, h_r, b_l,
# b_r) of `bwselect` on the original scale (x_sd: the running variable's
# scale factor), and the pilot bandwidth.
dd_rd_bwselect <- function(L, R, st, bwselect, x_sd) {
  p <- st$p; q <- st$q; nu <- st$deriv; sr <- st$scaleregul
  eps <- sqrt(.Machine$double.eps)
  N <- L$N + R$N
  xs <- c(L$d, R$d)                       # sorted
  BWp <- min(dd_rd_sd(xs), (dd_rd_q2(xs, 0.75) - dd_rd_q2(xs, 0.25)) / 1.349)
  Cc <- c(triangular = 2.576, epanechnikov = 2.34, uniform = 1.843)[[st$kernel]]
  c_bw <- Cc * BWp * (if (st$masspoints == "adjust") L$M + R$M else N)^(-1 / 5)
  mx <- c(L$range, R$range)
  if (st$bwrestrict) c_bw <- min(c_bw, max(mx))
  mn <- c(0, 0)
  if (!is.null(st$bwcheck)) {
    mn <- c(L$uniq[min(st$bwcheck, L$M)], R$uniq[min(st$bwcheck, R$M)]) * (1 + eps)
    c_bw <- max(c_bw, mn)
  }
  capl <- function(v, i) if (st$bwrestrict) min(v, if (i == 0) max(mx) else mx[i]) else v
  cl <- new.env(parent = emptyenv()); cr <- new.env(parent = emptyenv())
  Dl <- dd_rd_bwstep(L, q + 1, q + 1, q + 2, c_bw, L$range * (1 + eps), 0, st, cl)
  Dr <- dd_rd_bwstep(R, q + 1, q + 1, q + 2, c_bw, R$range * (1 + eps), 0, st, cr)
  fam <- switch(bwselect, mserd = , cerrd = "d", msetwo = , certwo = "t", msesum = , cersum = "s",
                msecomb1 = , cercomb1 = c("d", "s"), msecomb2 = , cercomb2 = c("d", "s", "t"))
  chain <- function(sgn) {
    # common bandwidths for the difference (sgn = -1) or the sum (+1)
    comb <- function(a, b) ((a$V + b$V) / ((b$B + sgn * a$B)^2 + sr * (b$R + a$R)))^a$rate
    d <- capl(((Dl$V + Dr$V) / (Dr$B + sgn * Dl$B)^2)^Dl$rate, 0)
    if (!is.null(st$bwcheck)) d <- max(d, mn)
    bb <- capl(comb(dd_rd_bwstep(L, q, p + 1, q + 1, c_bw, d, sr, st, cl),
                    dd_rd_bwstep(R, q, p + 1, q + 1, c_bw, d, sr, st, cr)), 0)
    hh <- capl(comb(dd_rd_bwstep(L, p, nu, q, c_bw, bb, sr, st, cl),
                    dd_rd_bwstep(R, p, nu, q, c_bw, bb, sr, st, cr)), 0)
    x_sd * c(hh, hh, bb, bb)
  }
  out <- list()
  if ("t" %in% fam) {
    one <- function(sd, D, i, cache) {
      d <- capl((D$V / D$B^2)^D$rate, i)
      if (!is.null(st$bwcheck)) d <- max(d, mn[i])
      Bs <- dd_rd_bwstep(sd, q, p + 1, q + 1, c_bw, d, sr, st, cache)
      bb <- capl((Bs$V / (Bs$B^2 + sr * Bs$R))^Bs$rate, i)
      Hs <- dd_rd_bwstep(sd, p, nu, q, c_bw, bb, sr, st, cache)
      x_sd * c(capl((Hs$V / (Hs$B^2 + sr * Hs$R))^Hs$rate, i), bb)
    }
    a <- one(L, Dl, 1, cl); b <- one(R, Dr, 2, cr)
    out$t <- c(a[1], b[1], a[2], b[2])
  }
  if ("s" %in% fam) out$s <- chain(1)
  if ("d" %in% fam) out$d <- chain(-1)
  bw <- switch(sub("^(mse|cer)", "", bwselect), rd = out$d, two = out$t, sum = out$s,
               comb1 = pmin(out$d, out$s),
               comb2 = apply(rbind(out$d, out$s, out$t), 2, stats::median))
  if (startsWith(bwselect, "cer")) {
    nn <- if (is.null(st$n_clusters_sides)) N else sum(st$n_clusters_sides)
    bw[1:2] <- bw[1:2] * nn^(-(p / ((3 + p) * (3 + 2 * p))))
  }
  if (any(!is.finite(bw)) || any(bw <= 0))
    dd_stop("the bandwidth selector `bwselect` = \"%s\" failed (a bandwidth is %s): too few distinct values of the running variable near the cutoff, or no curvature to estimate the bias from. Give `h` (and `b`) yourself.",
            bwselect, format(bw[which(!is.finite(bw) | bw <= 0)[1]]))
  list(bw = stats::setNames(bw, c("h_left", "h_right", "b_left", "b_right")), c_bw = x_sd * c_bw)
}
