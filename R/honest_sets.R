# honest_did()'s confidence sets: the ARP conditional and hybrid tests
# (least-favourable and FLCI hybrids), the optimal fixed-length confidence
# interval, and the breakdown value; called from dd_honest_ci() in honest.R.

# one sub-problem's ARP test (the least-favourable critical value included),
# set up once for all the grids it is run on (a grid extended at its ends)
dd_arp_setup <- function(ctx, pr, hybrid, flci) {
  K <- ctx$K; P <- ctx$P; l <- ctx$l
  A <- pr$A; rows <- pr$rows
  jl <- max(which(l != 0))
  Gam <- rbind(l, diag(P)[-jl, , drop = FALSE])
  AG <- A[, K + seq_len(P), drop = FALSE] %*% solve(Gam)
  a1 <- AG[, 1]
  X <- AG[, -1, drop = FALSE]
  Y <- drop(A %*% ctx$b) - pr$d
  SY <- A %*% ctx$S %*% t(A)
  SR <- SY[rows, rows, drop = FALSE]
  SR <- (SR + t(SR)) / 2
  XR <- X[rows, , drop = FALSE]
  fc <- 0; fh <- 0; g <- numeric(length(rows))
  if (hybrid == 2) {
    fc <- flci$center; fh <- flci$half
    g <- drop(A %*% ctx$S %*% flci$vec)[rows]
  }
  st <- list(Y = Y[rows], a1 = a1[rows], X = XR, S = SR, opts = c(ctx$alpha, hybrid, 0, fc, fh), g = g,
             dnorm = if (P == 1L) pr$d[rows] / sqrt(pmax(diag(SR), 0)) else numeric(0))
  if (hybrid == 1) st$opts[3] <- dd_lf_cv(XR, SR, ctx$alpha / 10)
  st
}

# accept (1) / reject (0) / NA (LP failure) at each grid point; points with
# skip == 1 are not tested (already accepted by another sub-problem)
dd_arp_accept <- function(st, grid, skip = integer(length(grid)))
  .Call(C_arp_grid, st$Y, st$a1, st$X, st$S, as.numeric(grid), st$opts, st$g, as.integer(skip), st$dnorm)

dd_lf_draws <- function(m, sims) {
  key <- paste(m, sims)
  if (is.null(dd_cache$zmat[[key]]))
    dd_cache$zmat[[key]] <- matrix(dd_honest_draws(sims * m)$z, m, sims)
  dd_cache$zmat[[key]]
}

# least-favourable critical value: 1 - kappa quantile of the ARP statistic under
# N(0, Sigma_R), 1000 draws from the fixed normal sample (as HonestDiD with seed 0)
dd_lf_cv <- function(XR, SR, kappa, sims = 1000L) {
  m <- nrow(SR)
  e <- eigen(SR, symmetric = TRUE)
  Rm <- e$vectors %*% (t(e$vectors) * sqrt(pmax(e$values, 0)))
  # draws as columns (m x sims): the s-th column is draw s (the s-th row of
  # the sims x m matrix filled by rows) times Rm
  Xi <- crossprod(Rm, dd_lf_draws(m, sims))
  eta <- .Call(C_arp_eta, XR, SR, Xi)
  stats::quantile(eta, 1 - kappa, type = 7, na.rm = TRUE, names = FALSE)
}

# ---- the fixed normal sample (set.seed(0); rnorm(1e6)), caller's RNG untouched ----

dd_cache <- new.env(parent = emptyenv())

# The first `n` draws of set.seed(0); rnorm(1e6) (Mersenne-Twister,
# inversion: each draw takes the next two uniforms, so rnorm(n) is the first
# n of rnorm(1e6); HonestDiD draws sims x moments afresh from seed 0 for
# its least-favourable critical values). Only as many as asked for are
# generated: the least-favourable critical values need sims x moments (tens
# of thousands), the FLCI's folded-normal quantiles all 1e6 (about 50 ms).
dd_honest_draws <- function(n = 1e6) {
  if (length(dd_cache$hd$z) < n) {
    genv <- globalenv()
    had <- exists(".Random.seed", envir = genv, inherits = FALSE)
    old <- if (had) get(".Random.seed", envir = genv, inherits = FALSE)
    oldkind <- RNGkind()
    on.exit({
      if (had) assign(".Random.seed", old, envir = genv)
      else {
        suppressWarnings(RNGkind(oldkind[1], oldkind[2], oldkind[3]))
        if (exists(".Random.seed", envir = genv, inherits = FALSE)) rm(".Random.seed", envir = genv)
      }
    })
    suppressWarnings(set.seed(0, kind = "Mersenne-Twister", normal.kind = "Inversion",
                              sample.kind = "Rejection"))
    # at least 64,000 (the critical values of up to 64 moments)
    dd_cache$hd <- list(z = stats::rnorm(max(n, 64000)))
  }
  z <- dd_cache$hd$z
  list(z = if (length(z) > n) z[seq_len(n)] else z)
}

# the same draws sorted (the FLCI's folded-normal quantiles), when first needed
dd_honest_sorted <- function() {
  if (is.null(dd_cache$hd_sorted)) dd_cache$hd_sorted <- sort(dd_honest_draws(1e6)$z)
  dd_cache$hd_sorted
}

# ---- the optimal FLCI for Delta^SD(M) ----

dd_flci_setup <- function(b, S, K, P, l) {
  post <- K + seq_len(P)
  D <- diag(K)
  if (K > 1) D[cbind(2:K, 1:(K - 1))] <- -1
  Q <- t(D) %*% S[seq_len(K), seq_len(K), drop = FALSE] %*% D
  Q <- (Q + t(Q)) / 2
  q <- drop(t(D) %*% S[seq_len(K), post, drop = FALSE] %*% l)
  c0 <- drop(crossprod(l, S[post, post, drop = FALSE] %*% l))
  sbar <- sum(seq_len(P) * l)
  Cl <- sum(abs(vapply(seq_len(P), function(s) sum(seq_len(s) * l[(P - s + 1):P]), 0))) - sbar
  V <- function(w) drop(crossprod(w, Q %*% w)) + 2 * sum(q * w) + c0
  w0 <- c(numeric(K - 1), sbar)
  st <- list(K = K, P = P, D = D, Q = Q, q = q, c0 = c0, sbar = sbar, Cl = Cl, V = V, w0 = w0,
             b = b, l = l, h0 = sqrt(V(w0)))
  if (K == 1L) {
    st$ws <- w0; st$Vmin <- V(w0); st$hMin <- st$h0
    return(st)
  }
  KKT <- rbind(cbind(2 * Q, 1), c(rep(1, K), 0))
  ws <- solve(KKT, c(-2 * q, sbar))[seq_len(K)]
  N <- qr.Q(qr(matrix(1, K, 1)), complete = TRUE)[, -1, drop = FALSE]
  Cm <- t(N) %*% Q %*% N
  Nt <- N %*% solve(Cm, t(N))
  L1 <- matrix(0, K - 1, K); L1[lower.tri(L1, diag = TRUE)] <- 1
  H <- L1 %*% Nt %*% t(L1)
  st$ws <- ws; st$Vmin <- V(ws); st$hMin <- sqrt(st$Vmin)
  st$Nt <- Nt; st$L1 <- L1; st$a <- drop(L1 %*% ws); st$H <- (H + t(H)) / 2
  st
}

# worst-case bias (per unit of M) at standard deviation h, and the weights w
dd_flci_bias <- function(st, h) {
  if (st$K == 1L) return(list(value = st$Cl + abs(st$sbar), w = st$w0))
  r <- sqrt(max(h^2 - st$Vmin, 0))
  res <- .Call(C_flci_bias, st$H, st$a, r)
  n <- length(st$a)
  if (res[n + 2L] != 0) dd_stop("honest_did: the FLCI bias problem could not be solved (h = %s).", format(h))
  mu <- res[seq_len(n)]
  qmu <- sqrt(max(drop(crossprod(mu, st$H %*% mu)), 0))
  w <- if (all(mu == 0)) st$w0 else if (qmu > 0) st$ws - r * drop(st$Nt %*% crossprod(st$L1, mu)) / qmu else st$ws
  list(value = st$Cl + abs(st$sbar) + res[n + 1L], w = w)
}

dd_qfold <- function(p, mu) .Call(C_qfold, dd_honest_sorted(), p, mu)

dd_flci <- function(b, S, K, P, l, M, alpha) {
  st <- dd_flci_setup(b, S, K, P, l)
  f <- function(h) {
    B <- dd_flci_bias(st, h)$value
    if (is.finite(B)) dd_qfold(1 - alpha, M * B / h) * h else NaN
  }
  a <- st$hMin; bb <- st$h0
  hstar <- a
  if (bb > a) {
    eps <- .Machine$double.eps
    dif <- min((bb - a) / 100, abs(bb) * eps^(1 / 3))
    fa <- f(a); fb <- f(bb)
    fpa <- (f(a + dif) - fa) / dif
    fpb <- (f(bb - dif) - fb) / (-dif)
    maxiter <- 10 * ceiling(log(abs(bb - a) / dif) / log(2))
    failtol <- sqrt(eps)
    iter <- 1; failed <- FALSE
    if (fpa > fpb || is.nan(fa) || is.nan(fb)) failed <- TRUE
    else if (fpb < 0) hstar <- bb
    else if (fpa > 0) hstar <- a
    else {
      while (!failed && abs(bb - a) > dif) {
        iter <- iter + 1
        x <- (a + bb) / 2
        fpx <- (f(x + dif) - f(x - dif)) / (2 * dif)
        failed <- fpx > fpb + failtol || fpx + failtol < fpa || iter > maxiter
        if (fpx > 0) bb <- x else a <- x
      }
      hstar <- (a + bb) / 2
    }
    if (failed) {
      hg <- seq(st$hMin, st$h0, length.out = 100)
      fv <- vapply(hg, f, 0)
      hstar <- hg[which.min(fv)]
    }
  }
  B <- dd_flci_bias(st, hstar)
  half <- dd_qfold(1 - alpha, M * B$value / hstar) * hstar
  vec <- c(drop(st$D %*% B$w), l)
  list(center = sum(vec * b), half = half, vec = vec, h = hstar, bias = M * B$value)
}

# ---- breakdown value ----

dd_breakdown <- function(ctx, Mv, lb, ub, tol) {
  inc <- !is.na(lb) & lb <= 0 & ub >= 0
  o <- order(Mv)
  Mv <- Mv[o]; inc <- inc[o]
  if (!any(inc)) return(NA_real_)
  j <- which(inc)[1]
  if (j == 1L && Mv[1] == 0) return(0)
  lo <- if (j == 1L) 0 else Mv[j - 1]
  hi <- Mv[j]
  if (j == 1L) {
    ci0 <- dd_honest_ci(ctx, 0)
    if (!is.na(ci0[1]) && ci0[1] <= 0 && ci0[2] >= 0) return(0)
  }
  step <- tol * max(Mv)
  while (hi - lo > step) {
    mid <- (lo + hi) / 2
    ci <- dd_honest_ci(ctx, mid)
    if (!is.na(ci[1]) && ci[1] <= 0 && ci[2] >= 0) hi <- mid else lo <- mid
  }
  hi
}

# ---- methods ----
