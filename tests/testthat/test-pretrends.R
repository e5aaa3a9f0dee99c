# pretrends_power(): power of the pre-test and means after pre-testing
# (Roth 2022, AER: Insights). The peer package pretrends is not on CRAN, so it
# is not compared live; its formulas are re-derived here in closed form or by
# brute-force integration.

cv <- stats::qnorm(0.975)

# absolute agreement (the accuracy targets are absolute)
expect_abs <- function(object, expected, tol) {
  d <- max(abs(unname(object) - unname(expected)))
  expect(is.finite(d) && d <= tol, sprintf("largest absolute difference %g exceeds %g", d, tol))
  invisible(object)
}

# E[X | lo <= X <= hi] for X ~ N(m, s^2): the truncated-normal mean
# (Johnson, Kotz and Balakrishnan 1994, Continuous Univariate Distributions
# vol. 1, eq. 13.134): m + s (phi(A) - phi(B)) / (Phi(B) - Phi(A)),
# A = (lo - m)/s, B = (hi - m)/s.
tn_mean <- function(m, s, lo, hi) {
  A <- (lo - m) / s; B <- (hi - m) / s
  m + s * (dnorm(A) - dnorm(B)) / (pnorm(B) - pnorm(A))
}

test_that("one pre period: power, truncated mean and post mean match Roth's closed forms", {
  # betahat = (pre at event -2, post at 0, post at 1); reference -1
  s <- c(0.8, 1.1, 1.3)
  R <- matrix(c(1, 0.4, 0.2, 0.4, 1, 0.5, 0.2, 0.5, 1), 3)
  S <- R * outer(s, s)
  b <- c(0.3, 0.5, 0.9)
  d <- c(-0.7, 0.4, 1.2)
  pp <- pretrends_power(betahat = b, sigma = S, num_pre = 1, delta = d)
  # Roth (2022), section II: power against delta = 1 - [Phi(c - d/s) - Phi(-c - d/s)]
  pass <- pnorm(cv - d[1] / s[1]) - pnorm(-cv - d[1] / s[1])
  expect_equal(pp$power, 1 - pass, tolerance = 1e-12)
  expect_equal(pp$pass_prob, pass, tolerance = 1e-12)
  expect_equal(pp$power_error, 0)
  # E[beta_pre | |beta_pre| <= c s]: truncated normal mean
  epre <- tn_mean(d[1], s[1], -cv * s[1], cv * s[1])
  tab <- as.data.frame(pp)
  expect_equal(tab$mean_pass[1], epre, tolerance = 1e-12)
  # Roth (2022), Proposition 1 / pretrends meanBetaPost_NIS:
  # E[post | pass] = delta_post + cov(post, pre) / var(pre) * (E[pre | pass] - delta_pre)
  epost <- d[2:3] + S[2:3, 1] / S[1, 1] * (epre - d[1])
  expect_equal(tab$mean_pass[2:3], epost, tolerance = 1e-12)
  expect_equal(tab$delta, d)
  expect_equal(tab$distortion, tab$mean_pass - d)
  expect_equal(tab$event, c(-2, 0, 1))
  # pretrends' Bayes factor: P(pass | delta) / P(pass | 0); size with one pre period = alpha
  expect_equal(pp$size, 0.05, tolerance = 1e-12)
  expect_equal(pp$bayes_factor, pass / 0.95, tolerance = 1e-12)
  # pretrends' likelihood ratio: dnorm(b; delta, s) / dnorm(b; 0, s)
  expect_equal(pp$likelihood_ratio, dnorm(b[1], d[1], s[1]) / dnorm(b[1], 0, s[1]), tolerance = 1e-12)
  # l_vec: the combination of the post means
  l <- c(0.25, 0.75)
  pl <- pretrends_power(betahat = b, sigma = S, num_pre = 1, delta = d, l_vec = l)
  tl <- as.data.frame(pl)
  expect_equal(nrow(tl), 4L)
  expect_equal(tl$mean_pass[4], sum(l * epost), tolerance = 1e-12)
  expect_equal(tl$delta[4], sum(l * d[2:3]))
  expect_equal(tl$std.error[4], sqrt(drop(t(l) %*% S[2:3, 2:3] %*% l)), tolerance = 1e-12)
})

test_that("independent pre periods (K = 3): product of univariate probabilities and truncated means", {
  s <- c(0.5, 0.7, 0.9, 1, 1.2)
  S <- diag(s^2)
  S[4, 1] <- S[1, 4] <- 0.1; S[5, 3] <- S[3, 5] <- -0.2; S[4, 5] <- S[5, 4] <- 0.3
  d <- c(-0.9, 0.2, 0.6, 0.3, 0.8)
  b <- c(0.1, -0.2, 0.3, 0.5, 0.4)
  pp <- pretrends_power(betahat = b, sigma = S, num_pre = 3, delta = d)
  # with diagonal Sigma_pre the pre-test region is a product set: P(pass) = prod_t P(|Z_t| <= c)
  pt <- pnorm(cv - d[1:3] / s[1:3]) - pnorm(-cv - d[1:3] / s[1:3])
  expect_equal(pp$pass_prob, prod(pt), tolerance = 1e-10)
  expect_lt(pp$power_error, 1e-10)
  # and the pre coefficients stay independent given passing: each a truncated normal mean
  tab <- as.data.frame(pp)
  epre <- tn_mean(d[1:3], s[1:3], -cv * s[1:3], cv * s[1:3])
  expect_equal(tab$mean_pass[1:3], epre, tolerance = 1e-8)
  epost <- d[4:5] + S[4:5, 1:3] %*% solve(S[1:3, 1:3], epre - d[1:3])
  expect_equal(tab$mean_pass[4:5], drop(epost), tolerance = 1e-8)
  # size: 1 - 0.95^3
  expect_equal(pp$size, 1 - 0.95^3, tolerance = 1e-10)
})

# brute force for two correlated pre periods: integrate the conditional normal
# of the second given the first over the pre-test interval of the first
brute2 <- function(d, S) {
  s <- sqrt(diag(S)); r <- S[1, 2] / (s[1] * s[2])
  lim <- cv * s
  inner <- function(x1, what) {
    m2 <- d[2] + S[1, 2] / S[1, 1] * (x1 - d[1])
    s2 <- s[2] * sqrt(1 - r^2)
    A <- (-lim[2] - m2) / s2; B <- (lim[2] - m2) / s2
    p2 <- pnorm(B) - pnorm(A)
    w <- dnorm(x1, d[1], s[1])
    switch(what, p = w * p2, m1 = w * p2 * x1, m2 = w * (m2 * p2 + s2 * (dnorm(A) - dnorm(B))))
  }
  I <- function(what) stats::integrate(inner, -lim[1], lim[1], what = what,
                                       rel.tol = 1e-13, abs.tol = 0, subdivisions = 1000L)$value
  P <- I("p")
  list(P = P, mean = c(I("m1"), I("m2")) / P)
}

test_that("correlated pre periods (K = 2): probability and means match numerical integration to 1e-6", {
  s <- c(0.6, 0.9, 1, 1.1)
  R <- 0.55^abs(outer(1:4, 1:4, "-"))
  S <- R * outer(s, s)
  for (d in list(c(-0.8, -0.3, 0.4, 0.9), c(0.5, -0.4, 0.1, 0.0), c(1.5, 1.0, 0.6, -0.2))) {
    pp <- pretrends_power(betahat = rep(0, 4), sigma = S, num_pre = 2, delta = d, tol = 1e-6)
    bf <- brute2(d[1:2], S[1:2, 1:2])
    expect_abs(pp$pass_prob, bf$P, 1e-6)
    tab <- as.data.frame(pp)
    expect_abs(tab$mean_pass[1:2], bf$mean, 1e-6)
    epost <- d[3:4] + S[3:4, 1:2] %*% solve(S[1:2, 1:2], bf$mean - d[1:2])
    expect_abs(tab$mean_pass[3:4], drop(epost), 1e-6)
    expect_lt(pp$power_error, 1e-6)
  }
})

test_that("correlated pre periods (K = 3, 4): probability and means match mvtnorm to 1e-6", {
  need_peer("mvtnorm")
  for (K in 3:4) {
    n <- K + 2
    s <- seq(0.7, 1.3, length.out = n)
    S <- (0.4 + 0.6 * diag(n)) * outer(s, s)
    ev <- c(seq(-K - 1, -2), 0, 1)
    d <- 0.25 * (ev + 1)
    pp <- pretrends_power(betahat = rep(0, n), sigma = S, num_pre = K, slope = 0.25, tol = 1e-6)
    expect_equal(pp$delta, stats::setNames(d, ev))
    lim <- cv * s[1:K]
    P <- mvtnorm::pmvnorm(-lim, lim, mean = d[1:K], sigma = S[1:K, 1:K],
                          algorithm = mvtnorm::Miwa(steps = 4096, checkCorr = FALSE))
    expect_abs(pp$pass_prob, as.numeric(P), 1e-6)
    # truncated means by Stein's identity with mvtnorm's probabilities (Tallis 1961):
    # E[(X - mu) 1{pass}] = Sigma g, g_k = phi_k(a_k) P(rest | X_k = a_k) - phi_k(b_k) P(rest | X_k = b_k)
    Sp <- S[1:K, 1:K]; a <- -lim - d[1:K]; b <- lim - d[1:K]
    g <- numeric(K)
    for (k in seq_len(K)) {
      Sc <- Sp[-k, -k] - tcrossprod(Sp[-k, k]) / Sp[k, k]
      for (side in 1:2) {
        t <- if (side == 1) a[k] else b[k]
        m <- Sp[-k, k] * t / Sp[k, k]
        pr <- mvtnorm::pmvnorm(a[-k] - m, b[-k] - m, sigma = Sc,
                               algorithm = mvtnorm::Miwa(steps = 4096, checkCorr = FALSE))
        g[k] <- g[k] + (if (side == 1) 1 else -1) * dnorm(t, 0, sqrt(Sp[k, k])) * as.numeric(pr)
      }
    }
    emean <- d[1:K] + drop(Sp %*% g) / as.numeric(P)
    tab <- as.data.frame(pp)
    expect_abs(tab$mean_pass[1:K], emean, 1e-6)
    epost <- d[K + 1:2] + S[K + 1:2, 1:K] %*% solve(Sp, emean - d[1:K])
    expect_abs(tab$mean_pass[K + 1:2], drop(epost), 1e-6)
  }
})

test_that("the slope for a given power has that power", {
  # one pre period: exact
  S1 <- matrix(c(0.04, 0.01, 0.01, 0.09), 2)
  for (pw in c(0.5, 0.8)) {
    pp <- pretrends_power(betahat = c(0.1, 0.2), sigma = S1, num_pre = 1, power = pw)
    # with reference -1 and the pre period at -2: delta_pre = -slope, so power = 1 - [Phi(c + m) - Phi(-c + m)]
    m <- pp$slope / 0.2
    expect_abs(1 - (pnorm(cv + m) - pnorm(-cv + m)), pw, 1e-8)
    expect_abs(pp$power, pw, 1e-8)
    expect_gt(pp$slope, 0)
    expect_equal(pp$target_power, pw)
  }
  # independent pre periods: the product formula, exact
  s <- c(0.3, 0.4, 0.5)
  S3 <- diag(c(s, 0.6)^2)
  pp <- pretrends_power(betahat = c(0, 0, 0, 0), sigma = S3, num_pre = 3, power = 0.8)
  dpre <- pp$slope * c(-3, -2, -1)
  pass <- prod(pnorm(cv - dpre / s) - pnorm(-cv - dpre / s))
  expect_abs(1 - pass, 0.8, 1e-8)
  expect_abs(pp$power, 0.8, 1e-8)
  # correlated: the power at the returned slope, recomputed, within the integration accuracy
  S <- (0.5 + 0.5 * diag(5)) * 0.01
  pp <- pretrends_power(betahat = rep(0, 5), sigma = S, num_pre = 3, power = 0.5, tol = 1e-6)
  expect_abs(pp$power, 0.5, 1e-6)
  p2 <- pretrends_power(betahat = rep(0, 5), sigma = S, num_pre = 3, slope = pp$slope, tol = 1e-6)
  expect_abs(p2$power, 0.5, 1e-6)
  expect_abs(p2$table$mean_pass, pp$table$mean_pass, 1e-6)
})

test_that("invariants: power grows with |slope|, is symmetric in its sign, equals the size at 0", {
  S <- (0.3 + 0.7 * diag(6)) * outer(seq(1, 2, length.out = 6), seq(1, 2, length.out = 6))
  b <- rep(0, 6)
  pw <- vapply(c(0, 0.1, 0.2, 0.4, 0.8), function(sl)
    pretrends_power(betahat = b, sigma = S, num_pre = 3, slope = sl)$power, numeric(1))
  expect_true(all(diff(pw) > 0))
  p0 <- pretrends_power(betahat = b, sigma = S, num_pre = 3, slope = 0)
  # at slope 0 the power is the size: 1 - P(pass | delta = 0)
  expect_equal(p0$power, p0$size, tolerance = 1e-12)
  expect_equal(p0$bayes_factor, 1, tolerance = 1e-12)
  expect_abs(p0$table$mean_pass, rep(0, 6), 1e-6)
  expect_gt(p0$size, 0.05) # three correlated t-tests reject more often than one
  pp <- pretrends_power(betahat = b, sigma = S, num_pre = 3, slope = 0.3)
  pm <- pretrends_power(betahat = b, sigma = S, num_pre = 3, slope = -0.3)
  expect_abs(pm$power, pp$power, 1e-6)
  expect_abs(pm$table$mean_pass, -pp$table$mean_pass, 1e-6)
  # delta = slope * (t - r) with r = -1: pre at -4, -3, -2, post at 0, 1, 2
  expect_equal(unname(pp$delta), 0.3 * c(-3, -2, -1, 1, 2, 3))
  expect_equal(pp$ref, -1)
  # same numbers when delta is given directly
  pd <- pretrends_power(betahat = b, sigma = S, num_pre = 3, delta = 0.3 * c(-3, -2, -1, 1, 2, 3))
  expect_equal(pd$power, pp$power, tolerance = 1e-12)
  expect_null(pd$slope)
  # deterministic: R's RNG is neither used nor disturbed
  set.seed(1); u1 <- runif(1)
  set.seed(1); p1 <- pretrends_power(betahat = b, sigma = S, num_pre = 3, slope = 0.3); u2 <- runif(1)
  expect_identical(u1, u2)
  expect_identical(p1$power, pp$power)
})

test_that("methods: print, as.data.frame, plot", {
  S <- (0.5 + 0.5 * diag(5)) * 0.01
  pp <- pretrends_power(betahat = c(0.02, -0.01, 0.03, 0.1, 0.12), sigma = S, num_pre = 2,
                        slope = 0.05, l_vec = c(0.5, 0.25, 0.25))
  expect_s3_class(pp, "dd_pretrends")
  expect_output(print(pp), "Power")
  df <- as.data.frame(pp)
  expect_named(df, c("term", "event", "type", "estimate", "std.error", "delta", "mean_pass",
                     "mean_pass_error", "distortion"))
  expect_equal(df$type, c("pre", "pre", "post", "post", "post", "l_vec"))
  pdf(NULL); on.exit(grDevices::dev.off())
  expect_invisible(plot(pp))
})

test_that("works on did_event and did_bjs(pretrends = TRUE) fits", {
  d <- utils::read.csv(system.file("extdata", "sim_panel.csv", package = "diffdiff"))
  # binned endpoints keep three pre periods (-4, -3, -2), so the root search is quick
  es <- did_event(d, yname = "y", idname = "id", tname = "year", gname = "first_treat",
                  window = c(-4, 3))
  pe <- pretrends_power(es, power = 0.5)
  expect_equal(as.data.frame(pe)$event, c(-4, -3, -2, 0, 1, 2, 3))
  tab <- as.data.frame(pe)
  expect_equal(pe$ref, -1)
  expect_true(all(tab$event != -1))
  expect_abs(pe$power, 0.5, 1e-6)
  expect_equal(unname(pe$delta), pe$slope * (tab$event + 1))
  co <- stats::coef(es)
  expect_equal(tab$estimate, unname(co[paste0("event::", tab$event)]), tolerance = 1e-12)
  bj <- did_bjs(d, yname = "y", idname = "id", tname = "year", gname = "first_treat", pretrends = TRUE)
  pb <- pretrends_power(bj, slope = 0.05)
  expect_s3_class(pb, "dd_pretrends")
  expect_true(pb$power > pb$size)
  expect_true(all(is.finite(as.data.frame(pb)$mean_pass)))
})

test_that("bad input gives errors naming the argument and value", {
  S <- diag(4) * 0.01
  b <- rep(0, 4)
  expect_error(pretrends_power(betahat = b, sigma = S, num_pre = 2), "exactly one of `power`, `slope` and `delta`; got none")
  expect_error(pretrends_power(betahat = b, sigma = S, num_pre = 2, slope = 1, power = 0.5),
               "got `power` and `slope`")
  expect_error(pretrends_power(betahat = b, sigma = S, num_pre = 0, slope = 1), "`num_pre`.*0")
  expect_error(pretrends_power(betahat = b, sigma = S, num_pre = 4, slope = 1), "`num_pre`.*4")
  Sa <- S; Sa[1, 2] <- 0.005
  expect_error(pretrends_power(betahat = b, sigma = Sa, num_pre = 2, slope = 1), "`sigma` must be symmetric")
  Sn <- matrix(c(1, 2, 0, 0, 2, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1), 4)
  expect_error(pretrends_power(betahat = b, sigma = Sn, num_pre = 2, slope = 1), "`sigma` must be positive semi-definite")
  expect_error(pretrends_power(betahat = b, sigma = diag(3), num_pre = 2, slope = 1), "`sigma` must be 4 x 4.*3 x 3")
  Sz <- S; Sz[1, 1] <- 0
  expect_error(pretrends_power(betahat = b, sigma = Sz, num_pre = 2, slope = 1), "`sigma`.*positive variance.*-3")
  Ss <- matrix(0.01, 4, 4) + diag(c(0, 0, 0.01, 0.01))
  expect_error(pretrends_power(betahat = b, sigma = Ss, num_pre = 2, slope = 1), "`sigma`.*positive definite")
  expect_error(pretrends_power(betahat = b, sigma = S, num_pre = 2, slope = 1, l_vec = 1:3),
               "`l_vec`.*length 2.*c\\(1, 2, 3\\)")
  expect_error(pretrends_power(betahat = b, sigma = S, num_pre = 2, slope = 1, l_vec = c(1, NA)), "`l_vec`.*NA")
  expect_error(pretrends_power(betahat = b, sigma = S, num_pre = 2, power = 1), "`power`.*got 1")
  expect_error(pretrends_power(betahat = b, sigma = S, num_pre = 2, power = 0.04), "`power`.*0.04")
  expect_error(pretrends_power(betahat = b, sigma = S, num_pre = 2, power = 0.06),
               "`power` = 0.06 is not above the size")
  expect_error(pretrends_power(betahat = b, sigma = S, num_pre = 2, power = NA), "`power`.*NA")
  expect_error(pretrends_power(betahat = b, sigma = S, num_pre = 2, slope = NA), "`slope`.*NA")
  expect_error(pretrends_power(betahat = b, sigma = S, num_pre = 2, slope = c(1, 2)), "`slope`.*c\\(1, 2\\)")
  expect_error(pretrends_power(betahat = b, sigma = S, num_pre = 2, slope = Inf), "`slope`.*Inf")
  expect_error(pretrends_power(betahat = b, sigma = S, num_pre = 2, slope = "a"), "`slope`.*\"a\"")
  expect_error(pretrends_power(betahat = b, sigma = S, num_pre = 2, delta = 1:3), "`delta`.*4.*c\\(1, 2, 3\\)")
  expect_error(pretrends_power(betahat = b, sigma = S, num_pre = 2, delta = c(1, 2, NA, 4)), "`delta`.*NA")
  expect_error(pretrends_power(betahat = b, sigma = S, num_pre = 2, slope = 1, alpha = 1), "`alpha`.*got 1")
  expect_error(pretrends_power(betahat = b, sigma = S, num_pre = 2, slope = 1, alpha = 0), "`alpha`.*got 0")
  expect_error(pretrends_power(betahat = b, sigma = S, num_pre = 2, slope = 1, alpha = -0.1), "`alpha`.*-0.1")
  expect_error(pretrends_power(betahat = c(b, NA), sigma = S, num_pre = 2, slope = 1), "`betahat`")
  expect_error(pretrends_power(fit = lm(1 ~ 1), slope = 1), "`fit`.*class lm")
  expect_error(pretrends_power(betahat = b, num_pre = 2, slope = 1), "needs a fit, or both `betahat` and `sigma`")
  expect_error(pretrends_power(betahat = b, sigma = S, num_pre = 2, slope = 1, tol = 0), "`tol`.*0")
})
