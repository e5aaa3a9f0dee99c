# Tests of the heterogeneous-adoption design (did_had(), issue 17), on one
# horizon's outcome changes y and doses d (one value per group).

# Yatchew's test of linearity (order 1) or of a constant mean (order 0) of
# E(y | d), as YatchewTest::yatchew_test(het_robust = TRUE): the residual
# variance of the polynomial fit against half the mean squared difference of
# neighbouring outcomes after sorting by (d, y); one-sided normal p-value.
dd_yatchew <- function(y, d, order = 1L, het_robust = TRUE) {
  ok <- !is.na(y) & !is.na(d)
  y <- as.double(y[ok]); d <- as.double(d[ok])
  n <- length(y)
  if (n < 3L) return(c(sigma2_lin = NA_real_, sigma2_diff = NA_real_, statistic = NA_real_, p.value = NA_real_, n = n))
  o <- order(d, y)
  y <- y[o]; d <- d[o]
  e <- if (order == 0L) y - mean(y)
       else dd_regress(y, matrix(outer(d, seq_len(order), `^`), n, dimnames = list(NULL, paste0("d", seq_len(order)))))$resid
  s_lin <- stats::var(e)
  s_diff <- 0.5 * mean(diff(y)^2)
  stat <- if (het_robust) sqrt(n) * (s_lin - s_diff) / sqrt(mean((e[-1] * e[-n])^2))
          else sqrt(n) * (s_lin / s_diff - 1)
  c(sigma2_lin = s_lin, sigma2_diff = s_diff, statistic = stat,
    p.value = stats::pnorm(stat, lower.tail = FALSE), n = n)
}

# The quasi-untreated-group test (de Chaisemartin, D'Haultfoeuille, Pasquier,
# Sow and Vazquez-Bare): with d_(1) <= d_(2) the two smallest positive doses,
# T = d_(1) / (d_(2) - d_(1)), P(T > t) = 1 / (1 + t) when the support of the
# doses reaches 0. NA with fewer than two positive doses.
dd_qug <- function(d) {
  d <- sort(d[!is.na(d) & d > 0])
  if (length(d) < 2L) return(c(statistic = NA_real_, p.value = NA_real_))
  stat <- d[1] / (d[2] - d[1])
  c(statistic = stat, p.value = if (is.finite(stat)) 1 / (1 + stat) else 0)
}

# Stute's (1997) test that E(y | d) is a polynomial of degree `order` (1:
# linear; 0: constant), as StuteTest::stute_test(): with the data sorted by
# (d, y) and e the residuals of the polynomial fit, the statistic is
# sum_k (sum_{i <= k} e_i)^2 / n^2; its null distribution comes from a wild
# bootstrap with Mammen's two-point weights, (1 + sqrt 5) / 2 with
# probability (sqrt 5 - 1) / (2 sqrt 5) and (1 - sqrt 5) / 2 otherwise,
# from uniforms U (n x B, one row per observation in the input order, so
# that a unit keeps its multipliers across horizons; drawn from R's RNG as
# matrix(runif(n * nboot), n, nboot) when not given). Each draw refits the
# polynomial on fitted + w e. Returns the statistic, p-value (the share of
# draws above it), n and the B bootstrap statistics (for joint tests over
# horizons).
dd_stute <- function(y, d, order = 1L, U = NULL, nboot = 500L) {
  f <- dd_stute_fit(y, d, order)
  if (!is.null(U)) U <- matrix(as.double(U), nrow(U), ncol(U))
  boot <- dd_stute_boot(list(f), list(seq_along(y)), length(y), if (is.null(U)) nboot else ncol(U), U)[, 1L]
  list(statistic = f$statistic, p.value = mean(boot > f$statistic), n = f$n, boot = boot)
}

# The observed Stute statistic and what its bootstrap needs: the order o of
# the data by (d, y), the residuals e of the polynomial fit in that order and
# a thin Q spanning the design (its first rank columns, the span that
# qr.resid() projects out).
dd_stute_fit <- function(y, d, order = 1L) {
  n <- length(y)
  o <- order(d, y)
  q <- qr(outer(d[o], 0:order, `^`))
  e <- qr.resid(q, y[o])
  list(statistic = sum(cumsum(e)^2) / n^2, n = n, o = o, e = e,
       Q = qr.Q(q)[, seq_len(q$rank), drop = FALSE])
}

# The bootstrap statistics (B x H) of the fits `fits` (dd_stute_fit()) of H
# horizons; rows[[k]]: for horizon k's observations in the input order, the
# row (1..nG) of the uniforms each reads. With U NULL the kernel draws the
# nG x B uniforms from R's RNG as matrix(runif(nG * B), nG, B) would, a block
# of columns at a time (memory O(nG + B), not O(nG B); Ctrl-C between
# blocks).
dd_stute_boot <- function(fits, rows, nG, B, U = NULL) {
  pos <- unlist(lapply(seq_along(fits), function(k) rows[[k]][fits[[k]]$o] - 1L), use.names = FALSE)
  .Call(C_stute_boot, as.double(unlist(lapply(fits, `[[`, "e"), use.names = FALSE)), as.integer(pos),
        as.double(unlist(lapply(fits, `[[`, "Q"), use.names = FALSE)),
        vapply(fits, function(f) as.integer(f$n), 0L), vapply(fits, function(f) ncol(f$Q), 0L),
        as.integer(nG), as.integer(B), U)
}
