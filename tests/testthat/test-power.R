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
#    formula within Monte Carlo error.

test_that("dd_power equals diff-diff on two-period designs", {
  ref <- utils::read.csv(test_path("ref-power-diffdiff.csv"))
  for (i in seq_len(nrow(ref))) {
    r <- ref[i, ]
    lab <- paste("diff-diff case", r$case)
    if (r$query == "mde") {
      f <- dd_power(n = r$n, power = r$target_power, sd = r$sigma, treated_share = r$treated_share, deff = r$deff,
                    alpha = r$alpha, alternative = r$alternative)
      expect_equal(f$effect, r$mde, tolerance = 1e-12, label = lab)
    } else if (r$query == "power") {
      f <- dd_power(effect = r$effect, n = r$n, sd = r$sigma, treated_share = r$treated_share, deff = r$deff,
                    alpha = r$alpha, alternative = r$alternative)
      expect_equal(f$power, r$power, tolerance = 1e-12, label = lab)
    } else {
      f <- dd_power(effect = r$effect, power = r$target_power, sd = r$sigma, treated_share = r$treated_share,
                    deff = r$deff, alpha = r$alpha, alternative = r$alternative)
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
  f <- dd_power(effect = delta, n = J, sd = sde, n_pre = m, n_post = r, rho = phi, correlation = "ar1")
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

test_that("dd_power: bad input gets errors naming the argument and value", {
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
