# dd_power(): analytic power, MDE and sample size. References:
#  * ref-power-diffdiff.csv: the Python library diff-diff 3.3.2
#    (PowerAnalysis / compute_mde / compute_power / compute_sample_size, pure
#    Python backend, run by /work/notes/power-exp/ref.py outside the package)
#    on two-period designs with independent errors, where its variance
#    2 sd^2 (1/n_t + 1/n_c) is the DiD variance (its multi-period formula is
#    not a DiD variance: see ?dd_power);
#  * the closed forms of Frison and Pocock (1992) for equicorrelated outcomes
#    and of Burlig, Preonas and Woerman (2020) with AR(1) errors (their
#    average pre, post and cross covariances), written out below;
#  * simulated panels (unit effects, AR(1) errors, cluster shocks): the
#    sampling variance and rejection rate of the DiD estimate agree with the
#    formula within Monte Carlo error;
#  * the t test (the default): the noncentral t power written out in the
#    test from R's pt()/qt(), and the rejection rate of did_twfe's own t test
#    on simulated small panels.

test_that("dd_power equals diff-diff on two-period designs (test = \"z\", diff-diff's normal approximation)", {
  ref <- utils::read.csv(test_path("ref-power-diffdiff.csv"))
  for (i in seq_len(nrow(ref))) {
    r <- ref[i, ]
    lab <- paste("diff-diff case", r$case)
    if (r$query == "mde") {
      f <- dd_power(n = r$n, power = r$target_power, sd = r$sigma, treated_share = r$treated_share, deff = r$deff,
                    alpha = r$alpha, alternative = r$alternative, test = "z")
      expect_equal(f$effect, r$mde, tolerance = 1e-12, label = lab)
    } else if (r$query == "power") {
      f <- dd_power(effect = r$effect, n = r$n, sd = r$sigma, treated_share = r$treated_share, deff = r$deff,
                    alpha = r$alpha, alternative = r$alternative, test = "z")
      expect_equal(f$power, r$power, tolerance = 1e-12, label = lab)
    } else {
      f <- dd_power(effect = r$effect, power = r$target_power, sd = r$sigma, treated_share = r$treated_share,
                    deff = r$deff, alpha = r$alpha, alternative = r$alternative, test = "z")
      expect_identical(as.integer(f$n), as.integer(r$required_n), label = lab)
    }
  }
})

test_that("dd_power's variances are Frison-Pocock's and Burlig-Preonas-Woerman's closed forms", {
  se2 <- function(...) dd_power(effect = 1, n = 100, ...)$se^2 * 0.25 * 100   # the unit variance (p = 1/2)
  for (m in c(1, 3)) for (r in c(1, 4)) for (rho in c(0, 0.3, 0.8)) {
    s2 <- 1.7^2
    expect_equal(se2(sd = 1.7, n_pre = m, n_post = r, rho = rho), s2 * (1 - rho) * (1 / m + 1 / r), tolerance = 1e-12)
    expect_equal(se2(sd = 1.7, n_pre = m, n_post = r, rho = rho, estimator = "post"), s2 * (1 + (r - 1) * rho) / r,
                 tolerance = 1e-12)
    expect_equal(se2(sd = 1.7, n_pre = m, n_post = r, rho = rho, estimator = "ancova"),
                 s2 * ((1 + (r - 1) * rho) / r - m * rho^2 / (1 + (m - 1) * rho)), tolerance = 1e-12)
    # AR(1): BPW's bracket with the average pre, post and pre-post covariances
    psi <- function(k) s2 * rho^k
    pB <- if (m > 1) 2 / (m * (m - 1)) * sum(vapply(seq_len(m - 1), function(k) (m - k) * psi(k), 0)) else 0
    pA <- if (r > 1) 2 / (r * (r - 1)) * sum(vapply(seq_len(r - 1), function(k) (r - k) * psi(k), 0)) else 0
    pX <- sum(vapply(seq_len(m + r - 1), function(k) min(k, m, r, m + r - k) * psi(k), 0)) / (m * r)
    bpw <- (1 / m + 1 / r) * s2 + (m - 1) / m * pB + (r - 1) / r * pA - 2 * pX
    expect_equal(se2(sd = 1.7, n_pre = m, n_post = r, rho = rho, correlation = "ar1"), bpw, tolerance = 1e-12)
  }
  # design effects multiply the variance; the minimum detectable effect and
  # the sample size invert each other
  a <- dd_power(n = 400, power = 0.8, n_pre = 2, n_post = 3, rho = 0.5, cluster_size = 8, icc = 0.1, deff = 1.3)
  b <- dd_power(n = 400, power = 0.8, n_pre = 2, n_post = 3, rho = 0.5)
  expect_equal(a$se^2 / b$se^2, (1 + 7 * 0.1) * 1.3, tolerance = 1e-12)
  expect_identical(a$n_clusters, 50)
  s <- dd_power(effect = a$effect, power = 0.8, n_pre = 2, n_post = 3, rho = 0.5, cluster_size = 8, icc = 0.1,
                deff = 1.3)
  expect_identical(s$n, 400)
  expect_equal(dd_power(effect = a$effect, n = 400, n_pre = 2, n_post = 3, rho = 0.5, cluster_size = 8, icc = 0.1,
                        deff = 1.3)$power, 0.8, tolerance = 1e-3)   # (two-sided: the far tail adds ~1e-7)
  # vectors: a power curve, increasing in the effect
  cur <- dd_power(effect = seq(0.05, 0.5, by = 0.05), n = 300, n_pre = 2, n_post = 2, rho = 0.4)
  expect_identical(nrow(cur), 10L)
  expect_true(all(diff(cur$power) > 0))
  expect_output(print(cur), "DiD power analysis \\(power\\)")
})

test_that("dd_power agrees with simulated panels (AR(1) errors, unit effects, clustered assignment)", {
  set.seed(20)
  J <- 240; m <- 3; r <- 3; phi <- 0.6; sdu <- 0.8; sde <- 1; delta <- 0.25
  reps <- 3000
  # one DiD estimate per replication from the units' post-minus-pre changes
  # (the two-way fixed-effects estimate on a balanced panel: checked below)
  tr <- rep(c(1, 0), each = J / 2)
  sim <- function(cl_size = 1, sdc = 0) {
    e <- matrix(stats::rnorm(J * (m + r)), J)
    for (t in 2:(m + r)) e[, t] <- phi * e[, t - 1] + sqrt(1 - phi^2) * e[, t]
    Y <- stats::rnorm(J, 0, sdu) + sde * e
    Y[, (m + 1):(m + r)] <- Y[, (m + 1):(m + r)] + delta * tr
    if (sdc > 0) {                                 # a post-period shock shared by a cluster of units
      cl <- (seq_len(J) - 1) %/% cl_size
      Y[, (m + 1):(m + r)] <- Y[, (m + 1):(m + r)] + stats::rnorm(max(cl) + 1, 0, sdc)[cl + 1]
    }
    Y
  }
  est <- function(Y) { ch <- rowMeans(Y[, (m + 1):(m + r)]) - rowMeans(Y[, 1:m]); mean(ch[tr == 1]) - mean(ch[tr == 0]) }
  # the TWFE estimate is that DiD
  Y <- sim()
  d <- data.frame(id = rep(seq_len(J), m + r), t = rep(seq_len(m + r), each = J), y = as.vector(Y),
                  D = as.numeric(rep(tr, m + r) == 1 & rep(seq_len(m + r), each = J) > m))
  expect_equal(unname(coef(did_twfe(d, "y", "id", "t", "D"))[["ATT"]]), est(Y), tolerance = 1e-10)
  # AR(1) errors on top of unit effects: the unit effect cancels, so the
  # DiD variance is that of AR(1) errors with sd sde
  x <- replicate(reps, est(sim()))
  # (the statistic below divides by the true SE and uses the normal critical
  # value: the z test)
  f <- dd_power(effect = delta, n = J, sd = sde, n_pre = m, n_post = r, rho = phi, correlation = "ar1", test = "z")
  ratio <- stats::var(x) / f$se^2
  expect_true(abs(ratio - 1) < 4 * sqrt(2 / reps), label = paste("variance ratio", round(ratio, 3)))
  rej <- mean(abs(x / f$se) > stats::qnorm(0.975))
  expect_true(abs(rej - f$power) < 4 * sqrt(f$power * (1 - f$power) / reps),
              label = paste("rejection", round(rej, 3), "vs power", round(f$power, 3)))
  # clustered assignment (blocks of 8 units, the treated half first) with a
  # cluster shock on the post periods: ICC of the unit change = sdc^2 /
  # (sdc^2 + var of a unit's change)
  sdc <- 0.3
  vch <- dd_power(effect = 1, n = 4, sd = sde, n_pre = m, n_post = r, rho = phi, correlation = "ar1")$se^2 * 0.25 * 4
  icc <- sdc^2 / (sdc^2 + vch)
  xc <- replicate(reps, est(sim(8, sdc)))
  fc <- dd_power(effect = delta, n = J, sd = sqrt(sde^2), n_pre = m, n_post = r, rho = phi, correlation = "ar1",
                 cluster_size = 8, icc = icc)
  # the design effect acts on the total variance of the unit change
  rc <- stats::var(xc) / (fc$se^2 * (sdc^2 + vch) / vch)
  expect_true(abs(rc - 1) < 4 * sqrt(2 / reps), label = paste("clustered variance ratio", round(rc, 3)))
})

test_that("dd_power's default t test: the noncentral t power with did_twfe's degrees of freedom (clusters - 1)", {
  # the closed form, written out here from the inputs: two-sided
  # 1 - F(c) + F(-c), one-sided 1 - F(c), F the noncentral t distribution
  # with df = clusters - 1 and ncp = effect / se, c the t critical value
  nct <- function(effect, se, df, alpha = 0.05, two = TRUE) {
    cr <- stats::qt(1 - if (two) alpha / 2 else alpha, df)
    1 - stats::pt(cr, df, effect / se) + if (two) stats::pt(-cr, df, effect / se) else 0
  }
  f <- dd_power(effect = 1.6, n = 24)
  expect_identical(f$test, "t")
  expect_identical(f$df, 23)
  se <- sqrt(2 / (0.25 * 24))                        # sd 1, two periods: the DiD variance 2 sd^2 / (p (1-p) n)
  expect_equal(f$se, se, tolerance = 1e-14)
  expect_equal(f$power, nct(1.6, se, 23), tolerance = 1e-12)
  expect_output(print(f), "two-sided t test \\(noncentral t power, df = clusters - 1; test = \"t\"\\)")
  fz <- dd_power(effect = 1.6, n = 24, test = "z")
  expect_identical(fz$test, "z")
  expect_identical(fz$df, Inf)
  expect_equal(fz$power, stats::pnorm(1.6 / se - stats::qnorm(0.975)) + stats::pnorm(-1.6 / se - stats::qnorm(0.975)),
               tolerance = 1e-12)
  expect_output(print(fz), "z test \\(normal approximation; test = \"z\"\\)")
  # more periods, clustering, one-sided: df = ceiling(n / cluster_size) - 1
  g <- dd_power(effect = 0.3, n = c(60, 203), n_pre = 2, n_post = 3, rho = 0.4, cluster_size = 5, icc = 0.1,
                alternative = "greater")
  expect_identical(g$df, c(11, 40))
  expect_equal(g$power, nct(0.3, g$se, c(11, 40), two = FALSE), tolerance = 1e-12)
  # the minimum detectable effect has exactly the target power, and the
  # sample size is the smallest n with at least the target power
  m <- dd_power(n = c(12, 24, 200), power = 0.8)
  expect_equal(nct(m$effect, m$se, c(11, 23, 199)), rep(0.8, 3), tolerance = 1e-8)
  s <- dd_power(effect = c(1.6, 0.5), power = 0.8, cluster_size = 1)
  for (i in 1:2) {
    se_n <- function(n) sqrt(2 / (0.25 * n))
    expect_gte(nct(s$effect[i], se_n(s$n[i]), s$n[i] - 1), 0.8)
    expect_lt(nct(s$effect[i], se_n(s$n[i] - 1), s$n[i] - 2), 0.8)
  }
  # the t test needs more units than the normal approximation
  expect_true(all(s$n > dd_power(effect = c(1.6, 0.5), power = 0.8, test = "z")$n))
  # a few clusters: the sample size search over the degrees of freedom
  k <- dd_power(effect = 1, power = 0.9, cluster_size = 50, icc = 0.2, alternative = "greater")
  se_k <- function(n) sqrt(2 * (1 + 49 * 0.2) / (0.25 * n))
  expect_gte(nct(1, se_k(k$n), ceiling(k$n / 50) - 1, two = FALSE), 0.9)
  expect_lt(nct(1, se_k(k$n - 1), ceiling((k$n - 1) / 50) - 1, two = FALSE), 0.9)
})

test_that("dd_power's t power equals the rejection rate of did_twfe's t test on simulated small panels", {
  # The design dd_power describes: 24 units, half treated, one pre and one
  # post period, outcome = unit effect + independent N(0, 1) noise (the
  # unit effect cancels: sd = 1, rho = 0), effect 1.6. Each panel is fitted
  # by did_twfe() (clustered by unit, df = 23) and its reported p-value used.
  # At this n the t power (0.756) and the z power (0.791) are about 5 Monte
  # Carlo SEs apart at 4000 draws.
  set.seed(77)
  J <- 24; delta <- 1.6; reps <- 4000
  tr <- rep(c(1, 0), each = J / 2)
  D <- as.numeric(rep(tr, 2) == 1 & rep(1:2, each = J) == 2)
  base <- data.frame(id = rep(seq_len(J), 2), time = rep(1:2, each = J), D = D)
  rej <- mean(vapply(seq_len(reps), function(b) {
    d <- base
    d$y <- rep(stats::rnorm(J), 2) + stats::rnorm(2 * J) + delta * D
    suppressWarnings(did_twfe(d, "y", "id", "time", "D"))$coeftable$p.value < 0.05
  }, logical(1)))
  ft <- dd_power(effect = delta, n = J)
  fz <- dd_power(effect = delta, n = J, test = "z")
  mcse <- sqrt(ft$power * (1 - ft$power) / reps)
  expect_true(abs(ft$power - rej) < 3 * mcse, label = paste("t power", round(ft$power, 4), "vs simulated", rej))
  expect_false(abs(fz$power - rej) < 3 * mcse, label = paste("z power", round(fz$power, 4), "vs simulated", rej))
})

test_that("dd_power: bad input gets errors naming the argument and value", {
  expect_error(dd_power(effect = 0.2, n = 100, test = "x"), "`test` must be one of \"t\", \"z\"; got \"x\"")
  expect_error(dd_power(effect = 0.2, n = 10, cluster_size = 10),
               "`n` = 10 with `cluster_size` = 10 gives 1 cluster\\(s\\); the t test")
  expect_silent(dd_power(effect = 0.2, n = 10, cluster_size = 10, test = "z"))
  expect_error(dd_power(effect = 0, n = 100), "`effect` = 0 must lie in \\(0, Inf\\)")
  expect_error(dd_power(effect = -0.2, n = 100), "`effect` = -0.2")
  expect_error(dd_power(effect = 0.2, n = 100, icc = 1), "`icc` = 1 must lie in \\[0, 1\\)")
  expect_error(dd_power(effect = 0.2, n = 100, icc = -0.1), "`icc` = -0.1")
  expect_error(dd_power(effect = 0.2), "`n` and `power` are NULL")
  expect_error(dd_power(effect = 0.2, n = 100, power = 0.8), "all three are given")
  expect_error(dd_power(n = 100, power = 0.01), "`power` = 0.01 must lie in \\(0.05, 1\\)")
  expect_error(dd_power(n = 100, power = 0.8, treated_share = 1), "`treated_share` = 1")
  expect_error(dd_power(n = 100.5, power = 0.8), "`n` = 100.5 must be whole numbers")
  expect_error(dd_power(n = 100, power = 0.8, n_pre = 2, n_post = 2, rho = -0.5),
               "`rho` = -0.5 with 4 periods does not give a valid")
  expect_error(dd_power(n = 100, power = 0.8, rho = 1), "`rho` = 1")
  expect_error(dd_power(n = 100, power = 0.8, n_pre = 0), "`n_pre`")
  expect_error(dd_power(n = 100, power = 0.8, estimator = "ols"), "`estimator`")
})
