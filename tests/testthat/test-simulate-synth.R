# dd_sim_synth() (issue 44, item 5): the synthetic-control DGP. Its known
# properties are checked directly: the treated units' noiseless paths are the
# returned convex combinations of the donors' (so a synthetic control fits
# the pre-period exactly and its ATT is the planted one to rounding), and
# with noise did_synth and did_sdid recover the planted average effect
# within Monte Carlo error (the truth, effect + dynamic * (n_post - 1) / 2,
# comes from the DGP's definition, not from the estimators).

test_that("dd_sim_synth: layout, weights, reproducibility", {
  set.seed(31); a <- dd_sim_synth(n_donors = 8, n_treated = 2, n_pre = 6, n_post = 3, n_convex = 3, n_predictors = 2)
  set.seed(31); b <- dd_sim_synth(n_donors = 8, n_treated = 2, n_pre = 6, n_post = 3, n_convex = 3, n_predictors = 2)
  expect_identical(a, b)
  expect_identical(dim(a), c(90L, 8L))
  expect_identical(names(a), c("id", "time", "first_treat", "D", "y", "effect_true", "x1", "x2"))
  expect_identical(a$id, rep(1:10, each = 9)); expect_identical(a$time, rep(1:9, 10))
  expect_identical(unique(a$first_treat[a$id <= 2]), 7L)
  expect_identical(unique(a$first_treat[a$id > 2]), 0L)
  expect_identical(a$D, as.numeric(a$id <= 2 & a$time >= 7))
  expect_true(all(tapply(a$x1, a$id, function(v) length(unique(v))) == 1L))      # predictors constant within unit
  W <- attr(a, "weights")
  expect_identical(dim(W), c(8L, 2L)); expect_identical(rownames(W), as.character(3:10))
  expect_equal(unname(colSums(W)), c(1, 1), tolerance = 1e-14)
  expect_true(all(W >= 0)); expect_equal(unname(colSums(W > 0)), c(3, 3))
  # the planted effect: effect + dynamic * (periods since adoption)
  set.seed(32); e <- dd_sim_synth(n_donors = 5, n_pre = 3, n_post = 4, effect = 2, dynamic = -0.5, n_predictors = 0)
  expect_identical(names(e), c("id", "time", "first_treat", "D", "y", "effect_true"))
  expect_equal(e$effect_true[e$D == 1], 2 - 0.5 * 0:3)
  expect_true(all(e$effect_true[e$D == 0] == 0))
  # a different seed, a different panel
  set.seed(33); expect_false(isTRUE(all.equal(dd_sim_synth(n_donors = 5)$y, e$y)))
})

test_that("dd_sim_synth without noise: the treated paths are the returned combinations; did_synth is exact", {
  set.seed(34)
  s <- dd_sim_synth(n_donors = 10, n_treated = 2, n_pre = 15, n_post = 3, effect = 2, dynamic = 0.5, sd = 0)
  W <- attr(s, "weights")
  Y <- matrix(s$y - s$effect_true, ncol = 18, byrow = TRUE)                        # units x periods, untreated
  expect_equal(Y[1:2, ], t(W) %*% Y[3:12, ], tolerance = 1e-12, ignore_attr = TRUE)
  # the common trend and the baselines enter through weights that sum to 1
  fit <- did_synth(s, "y", "id", "time", "D", placebo = FALSE)
  truth <- 2 + 0.5 * (3 - 1) / 2
  expect_equal(mean(s$effect_true[s$D == 1]), truth)
  expect_equal(unname(coef(fit)), rep(truth, 3), tolerance = 1e-8)                # ATT, unit::1, unit::2
  expect_lt(max(fit$coeftable$pre.rmspe, na.rm = TRUE), 1e-8)
})

test_that("dd_sim_synth with noise: did_synth and did_sdid recover the effect within Monte Carlo error", {
  set.seed(35)
  R <- 40
  est <- t(vapply(seq_len(R), function(r) {
    s <- dd_sim_synth(n_donors = 15, n_pre = 15, n_post = 4, effect = 2, dynamic = 0.5, n_predictors = 0)
    c(synth = unname(coef(did_synth(s, "y", "id", "time", "D", placebo = FALSE))[1]),
      sdid = unname(coef(did_sdid(s, "y", "id", "time", "D", se = "none"))),
      sc = unname(coef(did_sdid(s, "y", "id", "time", "D", method = "sc", se = "none"))))
  }, numeric(3)))
  truth <- 2 + 0.5 * (4 - 1) / 2
  mcse <- apply(est, 2, stats::sd) / sqrt(R)
  z <- (colMeans(est) - truth) / mcse
  expect_true(all(abs(z) < 4), label = paste(names(z), round(colMeans(est), 3), "z", round(z, 2), collapse = "; "))
  # the noise is what limits precision: a few tenths here, not units
  expect_true(all(apply(est, 2, stats::sd) < 1.5))
})

test_that("dd_sim_synth: bad input names the argument and the value", {
  expect_error(dd_sim_synth(n_donors = 1), "`n_donors` must be a whole number between 2")
  expect_error(dd_sim_synth(n_treated = 0), "`n_treated` must be a whole number between 1")
  expect_error(dd_sim_synth(n_pre = 2.5), "`n_pre` must be a whole number.*got 2.5")
  expect_error(dd_sim_synth(n_donors = 3, n_convex = 4), "`n_convex` = 4 is more than the 3 donors")
  expect_error(dd_sim_synth(factor_rho = 1.2), "`factor_rho` must be one number in \\[0, 1\\]; got 1.2")
  expect_error(dd_sim_synth(sd = -1), "`sd` must be one finite number >= 0; got -1")
  expect_error(dd_sim_synth(effect = NA), "`effect` must be one finite number; got NA")
  expect_error(dd_sim_synth(trend = c(1, 2)), "`trend` must be one finite number; got c\\(1, 2\\)")
  expect_error(dd_sim_synth(n_factors = 0), "`n_factors` must be a whole number between 1")
})
