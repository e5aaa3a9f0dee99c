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
# that a unit keeps its multipliers across horizons; drawn from R's RNG when
# not given). Each draw refits the polynomial on fitted + w e. Returns the
# statistic, p-value (the share of draws above it), n and the B bootstrap
# statistics (for joint tests over horizons).
dd_stute <- function(y, d, order = 1L, U = NULL, nboot = 500L) {
  n <- length(y)
  if (is.null(U)) U <- matrix(stats::runif(n * nboot), n, nboot)
  o <- order(d, y)
  X <- outer(d[o], 0:order, `^`)
  q <- qr(X)
  e <- qr.resid(q, y[o])
  stat <- sum(cumsum(e)^2) / n^2
  W <- ifelse(U[o, , drop = FALSE] > (sqrt(5) + 1) / (2 * sqrt(5)), (1 + sqrt(5)) / 2, (1 - sqrt(5)) / 2)
  boot <- colSums(apply(qr.resid(q, W * e), 2, cumsum)^2) / n^2
  list(statistic = stat, p.value = mean(boot > stat), n = n, boot = boot)
}
