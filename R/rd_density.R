# rd_density(): the manipulation test of Cattaneo, Jansson and Ma (2020), a
# test of continuity of the running variable's density at the cutoff, as
# rddensity 3.0's rddensity() and rdbwdensity(). The density on each side is
# the slope of a local polynomial fit to the empirical distribution
# function; its variance is the jackknife-type estimator (default) or the
# plug-in (asymptotic) one. The heavy pass over a window (Gram matrix and
# jackknife middle matrix) is C_rd_density_fit (src/rd_density.c); the small
# systems, the bandwidth selector and the test are here. Methods are in
# rd_density_methods.R.

#' Manipulation test: is the density of the running variable continuous at the cutoff?
#'
#' The density-discontinuity test of Cattaneo, Jansson and Ma (2020), equal
#' to `rddensity::rddensity()` (rddensity 3.0) with its data-driven
#' bandwidths (`rddensity::rdbwdensity()`). The density of the running
#' variable on each side of the cutoff is estimated by a local polynomial
#' fit of order `q` to the empirical distribution function (its slope at the
#' cutoff), and the test statistic is the difference of the two estimates
#' over its standard error.
#'
#' @section Method:
#' The sample is sorted; the empirical distribution function at the i-th
#' smallest value is (i - 1) / (N - 1), computed on the whole sample; with
#' `masspoints = TRUE` and repeated values every member of a run of equal
#' values takes the value of the run's last member. Within the window
#' `[c - h_left, c + h_right]` (both ends included) it is regressed on
#' powers of `(x - c) / h` with kernel weights, separately on each side
#' (`fitselect = "unrestricted"`) or with a common intercept and common
#' powers above the first (`"restricted"`, equal bandwidths). The jackknife
#' variance uses, for each observation, the sum of the weighted regressors
#' of the observations above it divided by N - 1 (with mass points, the sum
#' from the first member of its run); the plug-in variance uses the kernel's
#' moment matrices (closed forms; rddensity integrates them numerically, to
#' the same values up to rounding). A negative variance is reported as `NA`.
#'
#' The bandwidths (`h = NULL`) minimise the asymptotic mean squared error of
#' the order-`p` estimates on each side (`"each"`), of their difference
#' (`"diff"`) and of their sum (`"sum"`), from normal-reference pilot
#' bandwidths, with rdbwdensity's regularisation (`regularize`, `nlocalmin`,
#' `nuniquemin`); `"comb"` takes, for each side, the median of that side's,
#' the difference's and the sum's bandwidth (unrestricted) or the smaller of
#' the difference's and the sum's (restricted).
#'
#' Observations exactly at the cutoff count on the right, as in rddensity
#' (and as in [rd_robust()]'s data layer): `N_r` counts `x >= c`, and their
#' density is the right-hand one.
#'
#' Differences from rddensity: rddensity's binomial tests (`bino`) and the
#' order-`p` fit of `all = TRUE` are not computed; `q` is at most 10; the
#' test is computed with both variance estimators (`vce` chooses the one
#' reported as the test and standard errors). Where rddensity's bandwidth
#' selector stops with an error because a pilot variance is negative, the
#' corresponding bandwidth is 0 before regularisation (so the lower limits
#' apply).
#' @param data A data.frame, data.table or tibble.
#' @param xname Name of the running-variable column (numeric). Rows where it
#'   is missing are dropped with a message.
#' @param c The cutoff, strictly inside the range of the running variable.
#' @param p Order of the local polynomial used for the bandwidth selection
#'   (1 to 7).
#' @param q Order of the local polynomial of the test (`p` to 10; default
#'   `p + 1`, the bias-corrected test).
#' @param kernel `"triangular"` (default), `"epanechnikov"` or `"uniform"`
#'   (or `"tri"`, `"epa"`, `"uni"`).
#' @param fitselect `"unrestricted"` (separate fits on each side, the
#'   default) or `"restricted"` (common intercept and higher powers; equal
#'   bandwidths).
#' @param vce Variance estimator: `"jackknife"` (default) or `"plugin"`.
#' @param h `NULL` (data-driven bandwidths), one positive bandwidth for both
#'   sides, or `c(left, right)`.
#' @param bwselect With `h = NULL`: `"comb"` (default), `"each"`, `"diff"` or
#'   `"sum"` (`"each"` needs `fitselect = "unrestricted"`).
#' @param masspoints `TRUE` (default): repeated values are treated as mass
#'   points (the distribution function and the jackknife rows as described
#'   under Method), as rddensity's `massPoints`. No effect without repeated
#'   values.
#' @param regularize `TRUE` (default): the bandwidth selector's pilot and
#'   final bandwidths are capped by the range of the data and floored so
#'   that each side has `nlocalmin` observations and `nuniquemin` distinct
#'   values in the window, as rdbwdensity's `regularize`.
#' @param nlocalmin,nuniquemin The minimum numbers of observations and of
#'   distinct values on each side for the regularised bandwidths (`NULL`:
#'   `20 + p + 1`; 0 switches the floor off); rdbwdensity's `nLocalMin`
#'   and `nUniqueMin`.
#' @param alpha Level of the confidence intervals (`1 - alpha`).
#' @return An object of class `rd_density`, a list with `test` (a data
#'   frame: the statistic and p-value with the jackknife and with the
#'   plug-in variance, and the one `vce` chose), `estimates` (a data frame:
#'   `left`, `right` and `difference` (right minus left) with the standard
#'   errors under `vce` and under both estimators), `h` (`c(left, right)`),
#'   `h_source` (`"user"` or `"estimated"`), `bandwidths` (the selector's
#'   rows `left`, `right`, `diff`, `sum` with their variance and squared
#'   bias, then `comb_left` and `comb_right`; `NULL` with a user `h`),
#'   `N`, `N_l`, `N_r`, `N_h_l`, `N_h_r` (observations left and right of the
#'   cutoff, in all and within the window), `masspoints_used` (whether
#'   repeated values were found and treated as mass points), the settings
#'   (`xname`, `c`, `p`, `q`, `kernel`, `fitselect`, `vce`, `bwselect`,
#'   `masspoints`, `regularize`, `nlocalmin`, `nuniquemin`, `alpha`),
#'   `n_dropped`, `x` (the sorted running variable, for the plots) and
#'   `call`. Methods: `print()`, `summary()`, `tidy()`, `glance()`, `plot()`
#'   and `autoplot()` (see [plot.rd_density()]).
#' @references Cattaneo, M. D., Jansson, M. and Ma, X. (2020). Simple local
#'   polynomial density estimators. *Journal of the American Statistical
#'   Association* 115(531), 1449-1455.
#'
#'   Cattaneo, M. D., Jansson, M. and Ma, X. (2018). Manipulation testing
#'   based on density discontinuity. *The Stata Journal* 18(1), 234-261.
#' @examples
#' set.seed(1)
#' d <- data.frame(score = c(rnorm(600, -0.2), runif(150, 0, 0.5)))
#' fit <- rd_density(d, "score")
#' fit
#' tidy(fit)
#' glance(fit)
#' rd_density(d, "score", h = c(0.5, 0.6), kernel = "uniform", vce = "plugin")
#' plot(fit)
#' @export
rd_density <- function(data, xname, c = 0, p = 2, q = p + 1, kernel = "triangular",
                       fitselect = c("unrestricted", "restricted"), vce = c("jackknife", "plugin"), h = NULL,
                       bwselect = c("comb", "each", "diff", "sum"), masspoints = TRUE, regularize = TRUE,
                       nlocalmin = NULL, nuniquemin = NULL, alpha = 0.05) {
  cl <- match.call()
  if (missing(data)) dd_stop("`data` (the data frame) is missing.")
  if (missing(xname)) dd_stop("`xname` (the running-variable column) is missing.")
  c <- dd_rd_cutoff(c)
  p <- dd_rd_whole(p, "p", 1L, 7L)
  q <- dd_rd_whole(q, "q", p, 10L)
  kernel <- dd_rd_kernel(kernel)
  fitselect <- dd_rdd_choice(fitselect, c("unrestricted", "restricted"), "fitselect")
  vce <- dd_rdd_choice(vce, c("jackknife", "plugin"), "vce")
  bwselect <- dd_rdd_choice(bwselect, c("comb", "each", "diff", "sum"), "bwselect")
  masspoints <- dd_check_flag(masspoints, "masspoints")
  regularize <- dd_check_flag(regularize, "regularize")
  nlocalmin <- if (is.null(nlocalmin)) 21L + p else dd_check_count(nlocalmin, "nlocalmin")
  nuniquemin <- if (is.null(nuniquemin)) 21L + p else dd_check_count(nuniquemin, "nuniquemin")
  alpha <- dd_check_alpha(alpha)
  restricted <- fitselect == "restricted"
  if (!is.null(h)) {
    if (!is.numeric(h) || !length(h) || length(h) > 2L || anyNA(h) || any(!is.finite(h)) || any(h <= 0))
      dd_stop("`h` must be NULL, one positive bandwidth or two (left, right); got %s.", dd_show(h))
    h <- rep_len(as.double(h), 2L)
    if (restricted && h[1] != h[2])
      dd_stop("`h` = %s: the restricted fit (`fitselect` = \"restricted\") needs one bandwidth for both sides.",
              dd_show(h))
  } else if (restricted && bwselect == "each")
    dd_stop("`bwselect` = \"each\" selects one bandwidth per side, which the restricted fit (`fitselect` = \"restricted\") cannot use; choose \"comb\", \"diff\" or \"sum\".")

  rd <- dd_rd_data(data, list(xname = xname), c = c)
  xs <- sort(rd$xname, method = "radix")
  N <- length(xs)
  Nl <- dd_rdd_below(xs, c)       # observations below the cutoff (x == c counts on the right)
  Nr <- N - Nl
  cdf <- .Call(C_rd_density_cdf, xs, masspoints, c)    # the distribution function and the distinct values
  repeated <- !is.null(cdf$unique)
  xu <- if (repeated) cdf$unique else xs
  Nlu <- dd_rdd_below(xu, c)
  need <- if (is.null(h)) max(q, p + 2L) + 1L else q + 1L
  if (Nl == 0L || Nr == 0L || xs[1L] >= c || xs[N] <= c || min(Nlu, length(xu) - Nlu) < need ||
      length(xu) == 1L)
    dd_rd_sides(rd$xname, c, xname, need = need)    # the error that names the numbers
  if (xs[N] <= c)
    dd_stop("the cutoff `c` = %s must be below the largest value of `xname` = \"%s\" (%s).", format(c), xname,
            format(xs[N]))
  mass <- repeated && masspoints
  Y <- cdf$Y
  X <- xs - c
  kc <- unname(dd_rd_kernels[kernel])
  st <- list(X = X, Y = Y, mean = cdf$mean, sd = cdf$sd, N = N, Nl = Nl, Nr = Nr, XU = xu - c, Nlu = Nlu, kern = kc, kernel = kernel,
             restricted = restricted, mass = mass)

  bw <- NULL
  if (is.null(h)) {
    bw <- dd_rdd_bw(st, p, vce, regularize, nlocalmin, nuniquemin)
    b <- bw$h
    h <- if (!restricted) switch(bwselect, each = b[1:2], diff = b[c(3, 3)], sum = b[c(4, 4)],
                                 comb = c(stats::median(b[c(1, 3, 4)]), stats::median(b[c(2, 3, 4)])))
         else switch(bwselect, diff = b[c(3, 3)], sum = b[c(4, 4)], comb = rep(min(b[3:4]), 2L))
    bw <- data.frame(selector = c("left", "right", "diff", "sum", "comb_left", "comb_right"),
                     h = c(b, if (!restricted) c(stats::median(b[c(1, 3, 4)]), stats::median(b[c(2, 3, 4)]))
                              else rep(min(b[3:4]), 2L)),
                     variance = c(bw$variance, NA, NA), bias_sq = c(bw$biassq, NA, NA), stringsAsFactors = FALSE)
    if (any(!is.finite(h) | h <= 0))
      dd_stop("the bandwidth selector gave h = %s (a pilot fit failed); set `regularize = TRUE` or give `h`.",
              dd_show(h))
  }
  win <- dd_rdd_window(X, h[1], h[2])
  Nlh <- Nl - win[1]
  Nrh <- win[2] - Nlh
  XU <- st$XU                                       # distinct values in the window, each side
  dl <- Nlu - dd_rdd_below(XU, -h[1])
  dr <- dd_rdd_below(XU, h[2], TRUE) - Nlu
  if (min(dl, dr) < q + 1L)
    dd_stop("the window [c - %s, c + %s] has %d distinct value%s of `xname` = \"%s\" below the cutoff and %d at or above it; the order-%d fit (`q`) needs %d on each side: widen `h` or lower `q`.",
            format(h[1]), format(h[2]), dl, if (dl == 1L) "" else "s", xname, dr, q, q + 1L)
  f <- dd_rdd_fit(st, win, h[1], h[2], q, s = 1L, jack = TRUE, plugin = TRUE)

  se_jk <- sqrt(f$v_jk[1:3]); se_pl <- sqrt(f$v_pl[1:3])
  est <- c(f$f, f$f[2] - f$f[1])
  Tst <- est[3] / c(jackknife = se_jk[3], plugin = se_pl[3])
  test <- data.frame(vce = c("jackknife", "plugin"), statistic = unname(Tst),
                     p.value = 2 * stats::pnorm(-abs(unname(Tst))), stringsAsFactors = FALSE)
  test$chosen <- test$vce == vce
  se <- if (vce == "jackknife") se_jk else se_pl
  estimates <- data.frame(term = c("left", "right", "difference"), estimate = est, std.error = se,
                          se_jackknife = se_jk, se_plugin = se_pl, stringsAsFactors = FALSE)
  structure(list(test = test, estimates = estimates, statistic = Tst[[vce]],
                 p.value = test$p.value[test$chosen], h = c(left = h[1], right = h[2]),
                 h_source = if (is.null(bw)) "user" else "estimated", bandwidths = bw,
                 N = N, N_l = Nl, N_r = Nr, N_h_l = Nlh, N_h_r = Nrh, masspoints_used = mass, repeated = repeated,
                 xname = xname, c = c, p = p, q = q, kernel = kernel, fitselect = fitselect, vce = vce,
                 bwselect = if (is.null(bw)) NA_character_ else bwselect, masspoints = masspoints,
                 regularize = regularize, nlocalmin = nlocalmin, nuniquemin = nuniquemin, alpha = alpha,
                 n_dropped = rd$n_dropped, x = xs, call = cl),
            class = "rd_density")
}

# one of `choices` (the default vector: its first); case ignored as rddensity does
dd_rdd_choice <- function(x, choices, arg) {
  if (identical(x, choices)) return(choices[1])
  if (is.character(x) && length(x) == 1L && !is.na(x) && tolower(x) %in% choices) return(tolower(x))
  dd_match_arg(x, choices, arg)
}

# the number of elements of the sorted vector v below t (or at most t:
# `or_equal`), by binary search (findInterval() would check the order first)
dd_rdd_below <- function(v, t, or_equal = FALSE) .Call(C_rd_density_below, v, as.double(t), or_equal)

# rows of the sorted, centred X inside [-hl, hr] (both ends included):
# c(first row, 0-based; number of rows)
dd_rdd_window <- function(X, hl, hr) {
  lo <- dd_rdd_below(X, -hl)
  hi <- dd_rdd_below(X, hr, TRUE)
  as.integer(c(lo, hi - lo))
}

# The fit of order P at (hl, hr) on the window `win` of st$X: the density
# estimates left and right (`f`), the coefficients on x^s (`s`), and the
# variances (`v_jk`, `v_pl`: left, right, difference, sum; NA where
# negative or not computed). A singular Gram matrix gives NA throughout.
dd_rdd_fit <- function(st, win, hl, hr, P, s = 1L, jack = TRUE, plugin = TRUE) {
  design <- if (st$restricted) 1L else 0L
  r <- .Call(C_rd_density_fit, st$X, st$Y, win, c(hl, hr), 0, c(P, st$kern, design, as.integer(jack), st$mass),
             as.double(st$N))
  na4 <- rep(NA_real_, 4L)
  out <- list(f = c(NA_real_, NA_real_), s = c(NA_real_, NA_real_), v_jk = na4, v_pl = na4)
  Sinv <- tryCatch(solve(r$S, tol = 0), error = function(e) NULL)
  if (is.null(Sinv) || anyNA(Sinv)) return(out)
  Hp <- if (design == 0L) c(rbind(hl^(0:P), hr^(0:P))) else hl^c(0, 1, 1, if (P > 1L) 2:P)
  b <- drop(Sinv %*% r$By) / Hp
  if (design == 0L) {
    out$f <- b[3:4]; out$s <- b[c(2 * s + 1, 2 * s + 2)]; ij <- 3:4
  } else {
    out$f <- b[2:3]; out$s <- rep(b[s + 2], 2L); ij <- 2:3
  }
  four <- function(V) {
    v <- c(V[ij[1], ij[1]], V[ij[2], ij[2]], V[ij[1], ij[1]] + V[ij[2], ij[2]] - 2 * V[ij[1], ij[2]],
           V[ij[1], ij[1]] + V[ij[2], ij[2]] + 2 * V[ij[1], ij[2]])
    v[!is.na(v) & v < 0] <- NA_real_
    v
  }
  if (jack) out$v_jk <- four((Sinv %*% r$M %*% Sinv) / outer(Hp, Hp))
  if (plugin) {
    N <- st$N
    if (design == 0L) {
      m <- dd_rdd_moments(P, st$kernel)
      Si <- solve(m$S)
      v22 <- (Si %*% m$G %*% Si)[2, 2]
      v <- c(out$f[1] * v22 / (N * hl), out$f[2] * v22 / (N * hr))
      v <- c(v, sum(v), sum(v))
      v[!is.na(v) & v < 0] <- NA_real_
      out$v_pl <- v
    } else {
      m <- dd_rdd_plus(P, st$kernel)
      A <- solve(out$f[1] * m$Sm + out$f[2] * m$S)
      V <- A %*% (out$f[1]^3 * m$Gm + out$f[2]^3 * m$G) %*% A / (N * hl)
      out$v_pl <- four(V)
    }
  }
  out
}

# The kernel's moments on [0, 1] in closed form (k(u) = sum_a kc[a] u^a):
# S[i, j] = int u^(i + j) k, C[i] = int u^(i + P + 1) k and rddensity's G,
# i, j = 0..P
dd_rdd_moments <- function(P, kernel) {
  kc <- switch(kernel, triangular = c(1, -1), epanechnikov = c(0.75, 0, -0.75), uniform = 0.5)
  a <- seq_along(kc) - 1
  mom <- function(m) sum(kc / (m + a + 1))
  S <- outer(0:P, 0:P, Vectorize(function(i, j) mom(i + j)))
  C <- vapply(0:P, function(i) mom(i + P + 1), 0)
  kk <- outer(kc, kc); A <- outer(a, a, "+"); Aa <- outer(a, rep(1, length(a))); Bb <- t(Aa)
  G <- outer(1:(P + 1), 1:(P + 1), Vectorize(function(i, j)
    sum(kk / ((i + Aa + 1) * (i + j + A + 1))) + sum(kk / (i + Aa) * (1 / (j + Bb + 1) - 1 / (i + j + A + 1)))))
  list(S = S, C = C, G = G)
}

# the restricted fit's moment matrices: S, G and C with an empty second
# row and column (the left slope), and their mirror images through Psi
dd_rdd_plus <- function(P, kernel) {
  m <- dd_rdd_moments(P, kernel)
  grow <- function(A) {
    out <- matrix(0, P + 2, P + 2)
    keep <- c(1, 3:(P + 2))
    out[keep, keep] <- A
    out
  }
  Psi <- diag(c(1, 0, 0, if (P > 1) (-1)^(2:P)), P + 2)
  Psi[2, 3] <- Psi[3, 2] <- -1
  S <- grow(m$S); G <- grow(m$G)
  C <- c(m$C[1], 0, m$C[-1])
  list(S = S, G = G, C = C, Psi = Psi, Sm = Psi %*% S %*% Psi, Gm = Psi %*% G %*% Psi)
}

# rdbwdensity's bandwidths of order p: rows left, right, diff, sum (`h`),
# with the variance and squared bias of each row
dd_rdd_bw <- function(st, p, vce, regularize, nlocalmin, nuniquemin) {
  X <- st$X; N <- st$N; Nl <- st$Nl; Nr <- st$Nr; XU <- st$XU; NU <- length(XU); Nlu <- st$Nlu; Nru <- NU - Nlu
  sdx <- st$sd
  z <- st$mean / sdx
  herm <- function(k) switch(k + 1L, 1, z, z^2 - 1, z^3 - 3 * z, z^4 - 6 * z^2 + 3, z^5 - 10 * z^3 + 15 * z,
                              z^6 - 15 * z^4 + 45 * z^2 - 15, z^7 - 21 * z^5 + 105 * z^3 - 105 * z,
                              z^8 - 28 * z^6 + 210 * z^4 - 420 * z^2 + 105,
                              z^9 - 36 * z^7 + 378 * z^5 - 1260 * z^3 + 945 * z)
  fb <- 1 / (herm(p + 2L)^2 * stats::dnorm(z))
  fc <- 1 / (herm(p)^2 * stats::dnorm(z))
  bn <- ((2 * p + 1) / 4 * fb * dd_rdd_Cb[p] / N)^(1 / (2 * p + 5)) * sdx
  cn <- (1 / (2 * p) * fc * dd_rdd_Cc[p] / N)^(1 / (2 * p + 1)) * sdx
  # the k-th smallest distance to the cutoff on the left / right of sorted v (nl below 0)
  kl <- function(v, nl, k) -v[nl - min(k, nl) + 1L]
  kr <- function(v, nl, n, k) v[nl + min(k, n - nl)]
  if (regularize) {
    top <- max(-XU[1L], XU[NU])
    bn <- min(bn, top); cn <- min(cn, top)
    if (nlocalmin > 0) {
      bn <- max(bn, kl(X, Nl, p + 23L), kr(X, Nl, N, p + 23L))
      cn <- max(cn, kl(X, Nl, p + 21L), kr(X, Nl, N, p + 21L))
    }
    if (nuniquemin > 0) {
      bn <- max(bn, kl(XU, Nlu, p + 23L), kr(XU, Nlu, NU, p + 23L))
      cn <- max(cn, kl(XU, Nlu, p + 21L), kr(XU, Nlu, NU, p + 21L))
    }
  }
  fb_ <- dd_rdd_fit(st, dd_rdd_window(X, bn, bn), bn, bn, p + 2L, s = p + 1L, jack = FALSE, plugin = FALSE)
  fc_ <- dd_rdd_fit(st, dd_rdd_window(X, cn, cn), cn, cn, p, s = 1L, jack = vce == "jackknife",
                    plugin = vce == "plugin")
  variance <- N * cn * (if (vce == "plugin") fc_$v_pl else fc_$v_jk)
  if (!st$restricted) {
    m <- dd_rdd_moments(p, st$kernel)
    k2 <- solve(m$S, m$C)[2]
    bl <- fb_$s[1] * k2 * (-1)^p; br <- fb_$s[2] * k2
  } else {
    m <- dd_rdd_plus(p, st$kernel)
    A <- solve(fc_$f[2] * m$S + fc_$f[1] * m$Psi %*% m$S %*% m$Psi)
    Cv <- fb_$s[1] * (fc_$f[2] * m$C + (-1)^(p + 1) * fc_$f[1] * drop(m$Psi %*% m$C))
    tmp <- drop(A %*% Cv)
    bl <- tmp[2]; br <- tmp[3]
  }
  biassq <- c(bl, br, br - bl, br + bl)^2
  hh <- (1 / (2 * p) * variance / biassq / N)^(1 / (2 * p + 1))
  hh[is.na(hh)] <- 0
  if (regularize) {
    top <- max(-XU[1L], XU[NU])
    hh <- pmin(hh, c(-XU[1L], XU[NU], top, top))
    if (nlocalmin > 0) {
      lm <- kl(X, Nl, nlocalmin); rm <- kr(X, Nl, N, nlocalmin)
      hh <- pmax(hh, c(lm, rm, max(lm, rm), max(lm, rm)))
    }
    if (nuniquemin > 0) {
      lm <- kl(XU, Nlu, nuniquemin); rm <- kr(XU, Nlu, NU, nuniquemin)
      hh <- pmax(hh, c(lm, rm, max(lm, rm), max(lm, rm)))
    }
  }
  list(h = hh, variance = variance, biassq = biassq)
}

# rdbwdensity's normal-reference constants of the pilot bandwidths, p = 1..7
dd_rdd_Cb <- c(25884.4444444942, 3430865.45512362, 845007948.042626, 330631733667.038, 187774809656037,
               145729502641999264, 1.4601350297445e20)
dd_rdd_Cc <- c(4.80000000000002, 548.571428571555, 100800.000000204, 29558225.4581006, 12896196859.6126,
               7890871468221.61, 6467911284037581)
