# did_duration(): the duration DiD of Deaner and Ku (2026, arXiv:2405.05220v2).
# No R package implements it (no peer). The checks: the estimand computed by
# hand in plain R from the paper's equations (numbers below are the
# equation numbers of v2, as transcribed in diff-diff's review
# docs/methodology/papers/deaner-ku-2026-review.md), the worked example of
# tools/notes/diffdiff-extensions-spec.md section 3 (numbers from that
# note's own R re-implementation), influence functions against numerical
# derivatives with respect to unit weights, standard errors against a
# bootstrap of individuals (the paper's Algorithm 1, by hand), recovery of
# dd_sim_duration()'s known effects, invariances and bad input.

# The paper's estimator, by hand, unweighted. Y: units x periods (0/1),
# trt: logical per unit, tt: the periods, tstar: the last period before
# treatment, fit: the periods whose equations give c (default: every period
# after the first up to tstar), a: their weights (default equal).
hand_duration <- function(Y, trt, tt, tstar, method, fit = NULL, a = NULL) {
  Tn <- length(tt); js <- match(tstar, tt)
  Ybar1 <- colMeans(Y[trt, , drop = FALSE]); Ybar2 <- colMeans(Y[!trt, , drop = FALSE])
  R1 <- -log(1 - Ybar1); R2 <- -log(1 - Ybar2)            # (3.1), Group 1 treated, Group 2 untreated
  el <- tt - tt[1]                                         # "t - 1": time since the first period (Remark 3)
  L1 <- R1 - R1[1]; L2 <- R2 - R2[1]                       # long differences Delta_{t-1} R_{k,t}
  if (is.null(fit)) fit <- tt[2:js]
  if (is.null(a)) a <- rep(1, length(fit))
  a <- a / sum(a)                                          # sum of alpha_t = 1 (p. 21)
  f <- match(fit, tt)
  if (method == "cd") {
    c_hat <- sum(a * (L1[f] / el[f] - L2[f] / el[f]))      # (3.2)
    R0 <- R1[1] + L2 + el * c_hat                          # (3.3)
    m <- function(t) L1[t] / el[t] - L2[t] / el[t]
  } else {
    c_hat <- sum(a * L1[f] / L2[f])                        # (2.15) solved at each t, weighted as in (3.2)
    R0 <- R1[1] + c_hat * L2                               # (2.16)
    m <- function(t) L1[t] / L2[t]
  }
  post <- (js + 1):Tn
  tau <- Ybar1[post] - 1 + exp(-R0[post])                  # (3.4), i.e. (2.17)
  delta <- if (js >= 3) vapply(2:(js - 1), function(t) m(t) - m(js), 0) else numeric()  # Algorithm 2, step 1
  list(tau = unname(tau), att = mean(tau), c_hat = c_hat, delta = unname(delta), S0 = exp(-R0))
}

# long data -> units x periods (rows by sorted id), without the package
wide <- function(d, y = "y", id = "id", t = "t") {
  ids <- sort(unique(d[[id]])); tt <- sort(unique(d[[t]]))
  Y <- matrix(NA_real_, length(ids), length(tt))
  Y[cbind(match(d[[id]], ids), match(d[[t]], tt))] <- d[[y]]
  list(Y = Y, ids = ids, tt = tt)
}

# a small panel: n1 treated (first treated in period g), n0 never treated,
# absorption times drawn from a discrete distribution (Inf: never absorbed)
small_panel <- function(seed, n1 = 14, n0 = 17, tt = 1:6, g = 5) {
  set.seed(seed)
  A <- sample(c(tt, Inf), n1 + n0, replace = TRUE, prob = c(0.08, rep(0.12, length(tt) - 1), 0.3))
  d <- expand.grid(t = tt, id = seq_len(n1 + n0))
  d$g <- ifelse(d$id <= n1, g, 0)
  d$y <- as.integer(d$t >= A[d$id])
  d
}

test_that("the estimates equal the paper's equations computed by hand (1e-10)", {
  for (seed in 1:3) {
    d <- small_panel(seed)
    w <- wide(d)
    trt <- w$ids <= 14
    for (m in c("cd", "ph")) {
      meth <- if (m == "cd") "common_dynamics" else "proportional_hazards"
      f <- did_duration(d, "y", "id", "t", "g", method = meth)
      h <- hand_duration(w$Y, trt, w$tt, 4, m)
      expect_equal(unname(coef(f)), c(h$att, h$tau), tolerance = 1e-10)
      expect_equal(unname(f$c_hat["estimate"]), h$c_hat, tolerance = 1e-10)
      expect_equal(f$pretest$table$estimate, h$delta, tolerance = 1e-10)
      expect_equal(f$survival$counterfactual, h$S0, tolerance = 1e-10)
      # chosen fitting periods and weights (the paper's alpha_t, p. 21)
      f2 <- did_duration(d, "y", "id", "t", "g", method = meth, fit_periods = c(4, 2), fit_weights = c(3, 1))
      h2 <- hand_duration(w$Y, trt, w$tt, 4, m, fit = c(2, 4), a = c(1, 3))
      expect_equal(unname(coef(f2)), c(h2$att, h2$tau), tolerance = 1e-10)
      expect_equal(f2$fit_periods, c(2, 4)); expect_equal(f2$fit_weights, c(0.25, 0.75))
    }
  }
  # unequally spaced periods: elapsed time in the units of tname (Remark 3)
  d <- small_panel(4, n1 = 30, n0 = 30, tt = c(1, 2, 4, 5, 8, 9), g = 8)
  w <- wide(d)
  f <- did_duration(d, "y", "id", "t", "g")
  h <- hand_duration(w$Y, w$ids <= 30, w$tt, 5, "cd")
  expect_equal(unname(coef(f)), c(h$att, h$tau), tolerance = 1e-10)
  expect_equal(f$last_pre, 5)
})

test_that("the worked example of the spec note is reproduced (its 8-decimal numbers)", {
  # 10 treated, 10 never treated, periods 1..5, treated from 4; absorption
  # periods as in tools/notes/diffdiff-extensions-spec.md section 3
  A <- c(1, 2, 2, 3, 4, 4, 5, Inf, Inf, Inf, 2, 2, 3, 3, 4, 5, Inf, Inf, Inf, Inf)
  d <- expand.grid(t = 1:5, id = 1:20)
  d$g <- ifelse(d$id <= 10, 4, 0)
  d$y <- as.integer(d$t >= A[d$id])
  cd <- did_duration(d, "y", "id", "t", "g")
  ph <- did_duration(d, "y", "id", "t", "g", method = "proportional_hazards")
  # the note prints 8 decimals (7 for R0 and S0): half a unit of the last one
  near <- function(x, ref, digits = 8) expect_lt(max(abs(unname(x) - ref)), 0.5 * 10^-digits + 1e-12)
  near(cd$c_hat["estimate"], -0.01225469)
  near(cd$survival$R_counterfactual, c(0.1053605, 0.3162494, 0.5916768, 0.7617436, 0.9726325), 7)
  near(coef(cd), c(0.07246906, 0.06685170, 0.07808642))
  near(cd$pretest$table$estimate, 0.08085113)
  near(ph$c_hat["estimate"], 0.95999509)
  near(ph$survival$counterfactual[4:5], c(0.4626528, 0.3734410), 7)
  near(coef(ph), c(0.06804692, 0.06265280, 0.07344105))
  near(ph$pretest$table$estimate, 0.33250088)
})

test_that("the influence functions are the derivatives of the estimates with respect to unit weights", {
  d <- small_panel(11, n1 = 40, n0 = 50, tt = 1:7, g = 5)
  set.seed(3)
  wu <- runif(90, 0.5, 2)
  d$w <- wu[d$id]
  for (meth in c("common_dynamics", "proportional_hazards")) {
    f <- did_duration(d, "y", "id", "t", "g", method = meth, weightsname = "w")
    expect_equal(f$units, 1:90)
    h <- 1e-4
    for (j in c(1, 7, 40, 41, 66, 90)) {
      est <- function(s) { dj <- d; dj$w[dj$id == j] <- dj$w[dj$id == j] * (1 + s); coef(did_duration(dj, "y", "id", "t", "g", method = meth, weightsname = "w")) }
      # w_j d theta / d w_j = psi_j / n (influence function per unit, scale n)
      num <- (est(h) - est(-h)) / (2 * h)
      expect_equal(unname(f$inf[j, ]) / f$n, unname(num), tolerance = 1e-6, label = paste(meth, "unit", j))
    }
    # the analytic standard errors are those of the influence functions
    expect_equal(f$coeftable$std.error, unname(sqrt(colSums(f$inf^2)) / f$n), tolerance = 1e-12)
  }
})

test_that("whole-number unit weights equal repeating the units (an independent check of the weighting)", {
  d <- small_panel(8, n1 = 20, n0 = 25, tt = 1:6, g = 4)
  set.seed(8)
  wu <- sample(1:3, 45, replace = TRUE)
  d$w <- wu[d$id]
  rep_id <- rep(seq_len(45), wu)
  dx <- do.call(rbind, lapply(seq_along(rep_id), function(k) {
    r <- d[d$id == rep_id[k], ]; r$id <- k; r
  }))
  for (meth in c("common_dynamics", "proportional_hazards")) {
    a <- did_duration(d, "y", "id", "t", "g", method = meth, weightsname = "w")
    b <- did_duration(dx, "y", "id", "t", "g", method = meth)
    expect_equal(unname(coef(a)), unname(coef(b)), tolerance = 1e-12)
    expect_equal(a$c_hat[["estimate"]], b$c_hat[["estimate"]], tolerance = 1e-12)
    expect_equal(a$pretest$table$estimate, b$pretest$table$estimate, tolerance = 1e-12)
    expect_false(isTRUE(all.equal(unname(coef(a)), unname(coef(did_duration(d, "y", "id", "t", "g", method = meth))))))
  }
})

test_that("analytic standard errors agree with a bootstrap of individuals (the paper's Algorithm 1, by hand)", {
  set.seed(21)
  d <- dd_sim_duration(n_units = 3000, n_periods = 6, first_treat = 4)
  w <- wide(d, t = "time")
  trt <- w$ids <= 1500
  f <- did_duration(d, "y", "id", "time", "first_treat")
  B <- 400
  draws <- t(vapply(seq_len(B), function(b) {
    i <- sample.int(nrow(w$Y), replace = TRUE)
    h <- hand_duration(w$Y[i, ], trt[i], w$tt, 3, "cd")
    c(h$att, h$tau, h$c_hat, h$delta)
  }, numeric(6)))
  # the effects, c and the pretest contrast (period 2, anchored at 3)
  ratio <- c(f$coeftable$std.error, f$c_hat[["std.error"]], f$pretest$table$std.error) / apply(draws, 2, stats::sd)
  # the bootstrap SD's relative Monte Carlo error is about 1 / sqrt(2 B) = 3.5%
  expect_true(all(abs(ratio - 1) < 0.15), label = paste(format(ratio), collapse = " "))
})

test_that("the known effects of dd_sim_duration() are recovered within Monte Carlo error", {
  for (meth in c("common_dynamics", "proportional_hazards")) {
    z <- NULL
    for (seed in 1:4) {
      set.seed(seed)
      d <- dd_sim_duration(n_units = 8000, n_periods = 7, first_treat = 5, effect = 0.6, method = meth,
                           gap = if (meth == "common_dynamics") 0.05 else 1.5)
      f <- did_duration(d, "y", "id", "time", "first_treat", method = meth)
      truth <- attr(d, "true_att")
      expect_identical(names(coef(f)), names(truth))
      zs <- (coef(f) - truth) / f$coeftable$std.error
      expect_true(all(abs(zs) < 4), label = paste(meth, seed))
      expect_lt(abs(f$c_hat[["estimate"]] - attr(d, "true_c")), 4 * f$c_hat[["std.error"]])
      z <- rbind(z, zs)
    }
    # the mean z over 4 seeds has SD 1/2
    expect_true(all(abs(colMeans(z)) < 1.75), label = paste(meth, paste(format(colMeans(z)), collapse = " ")))
  }
  # a true effect of 0: the estimates centre on 0
  set.seed(9)
  d <- dd_sim_duration(n_units = 8000, effect = 0)
  expect_true(all(attr(d, "true_att") == 0))
  f <- did_duration(d, "y", "id", "time", "first_treat")
  expect_true(all(abs(coef(f) / f$coeftable$std.error) < 4))
})

test_that("row order, unit labels and an affine relabelling of the periods change nothing", {
  set.seed(5)
  d <- dd_sim_duration(n_units = 300, n_periods = 6, first_treat = 4)
  d$cl <- d$id %% 20
  f0 <- did_duration(d, "y", "id", "time", "first_treat", cluster = "cl")
  o <- sample(nrow(d))
  f1 <- did_duration(d[o, ], "y", "id", "time", "first_treat", cluster = "cl")
  expect_equal(f1$coeftable, f0$coeftable, tolerance = 1e-12)
  expect_equal(f1$pretest, f0$pretest, tolerance = 1e-12)
  d2 <- d; d2$id <- paste0("u", 1000 - d2$id)
  f2 <- did_duration(d2, "y", "id", "time", "first_treat", cluster = "cl")
  expect_equal(f2$coeftable$estimate, f0$coeftable$estimate, tolerance = 1e-12)
  expect_equal(f2$coeftable$std.error, f0$coeftable$std.error, tolerance = 1e-12)
  # periods 2000 + 3 t: the same effects; the common-dynamics c is per unit of
  # time (a third); the proportional-hazards ratio does not change
  d3 <- d; d3$time <- 2000 + 3 * d3$time; d3$first_treat <- ifelse(d3$first_treat > 0, 2000 + 3 * d3$first_treat, 0)
  f3 <- did_duration(d3, "y", "id", "time", "first_treat", cluster = "cl")
  expect_equal(unname(coef(f3)), unname(coef(f0)), tolerance = 1e-10)
  expect_equal(f3$coeftable$std.error, f0$coeftable$std.error, tolerance = 1e-10)
  expect_equal(f3$coeftable$term[2], "ATT(2012)")
  expect_equal(f3$c_hat[["estimate"]], f0$c_hat[["estimate"]] / 3, tolerance = 1e-10)
  expect_equal(f3$pretest$p.value, f0$pretest$p.value, tolerance = 1e-10)
  p0 <- did_duration(d, "y", "id", "time", "first_treat", method = "proportional_hazards")
  p3 <- did_duration(d3, "y", "id", "time", "first_treat", method = "proportional_hazards")
  expect_equal(unname(coef(p3)), unname(coef(p0)), tolerance = 1e-10)
  expect_equal(p3$c_hat, p0$c_hat, tolerance = 1e-10)
})

test_that("clusters, the multiplier bootstrap and the uniform band go through the shared layer", {
  set.seed(6)
  d <- dd_sim_duration(n_units = 1000, n_periods = 6, first_treat = 4)
  f <- did_duration(d, "y", "id", "time", "first_treat")
  # one unit per cluster: the unclustered variance
  fc <- did_duration(d, "y", "id", "time", "first_treat", cluster = "id")
  expect_equal(fc$coeftable$std.error, f$coeftable$std.error, tolerance = 1e-12)
  d$cl <- (d$id - 1) %/% 5
  f5 <- did_duration(d, "y", "id", "time", "first_treat", cluster = "cl")
  U <- rowsum(f$inf, (f$units - 1) %/% 5)
  expect_equal(f5$coeftable$std.error, unname(sqrt(colSums(U^2)) / f$n), tolerance = 1e-12)
  expect_equal(f5$n_clusters, 200L)
  set.seed(1)
  fb <- did_duration(d, "y", "id", "time", "first_treat", nboot = 999, cband = TRUE)
  expect_true(all(c("cband.low", "cband.high") %in% names(fb$coeftable)))
  expect_true(all(is.na(fb$coeftable$cband.low[1])) && all(!is.na(fb$coeftable$cband.low[-1])))
  expect_true(all(abs(fb$coeftable$std.error / f$coeftable$std.error - 1) < 0.15))
  expect_gt(fb$crit, stats::qnorm(0.975))
  set.seed(1)
  expect_identical(did_duration(d, "y", "id", "time", "first_treat", nboot = 999, cband = TRUE)$coeftable, fb$coeftable)
  expect_error(did_duration(d, "y", "id", "time", "first_treat", cband = TRUE), "`cband` = TRUE needs bootstrap draws")
})

test_that("bad input is an error naming the argument and the value", {
  d <- small_panel(1)
  e <- function(rx, ...) expect_error(did_duration(...), rx)
  d2 <- d; d2$y[5] <- 2
  e('`yname` = "y" must be a 0/1 indicator; row 5 has 2', d2, "y", "id", "t", "g")
  u <- d$id[match(1, d$y)]
  d3 <- d; r <- which(d3$id == u & d3$t == 6); d3$y[r] <- 0
  e(sprintf('`yname` = "y" must be absorbing.*id %d is 1 in period [1-5] and 0 in period 6', u), d3, "y", "id", "t", "g")
  e('`yname` = "nope" is not a column', d, "nope", "id", "t", "g")
  e('`gname` = "gg" is not a column', d, "y", "id", "t", "gg")
  e('`method` .*"hazard"', d, "y", "id", "t", "g", method = "hazard")
  d4 <- d; d4$g[d4$id == 3] <- 4
  e('`gname` = "g" has 2 treated cohorts \\(4, 5\\)', d4, "y", "id", "t", "g")
  d5 <- d; d5$g[d5$g > 0] <- 2
  e('`gname` = "g": the treated group is first treated in 2, leaving 1 period\\(s\\) before treatment', d5, "y", "id", "t", "g")
  e("`fit_periods` = c\\(1, 2\\): period 1 is not a period after the first and before treatment", d, "y", "id", "t", "g",
    fit_periods = c(1, 2))
  e("`fit_weights` must be 3 non-negative finite numbers.*got c\\( ?1, -1, +1\\)", d, "y", "id", "t", "g",
    fit_weights = c(1, -1, 1))
  e("did_duration\\(\\) has no `xformla` argument", d, "y", "id", "t", "g", xformla = ~ x)
  e("has no argument `foo`", d, "y", "id", "t", "g", foo = 1)
  d6 <- d[d$t != 3 | d$id != 2, ]
  e("did_duration\\(\\)", d6, "y", "id", "t", "g")
  # every treated unit absorbed before treatment: -log(0)
  d7 <- d; d7$y[d7$g > 0 & d7$t >= 3] <- 1
  e('every treated unit is absorbed by period 3', d7, "y", "id", "t", "g")
  # proportional hazards without never-treated exits in a fitting period
  d8 <- d; d8$y[d8$g == 0] <- as.integer(d8$t[d8$g == 0] >= 4 & d8$id[d8$g == 0] %% 2 == 0)
  e('`method` = "proportional_hazards": no never-treated unit is absorbed between periods 1 and 2', d8, "y", "id",
    "t", "g", method = "proportional_hazards")
  expect_silent(did_duration(d8, "y", "id", "t", "g", method = "proportional_hazards", fit_periods = 4))
  # no never-treated units
  e("no never-treated units", d[d$g > 0, ], "y", "id", "t", "g")
  # the caller's data are unchanged
  before <- d
  did_duration(d, "y", "id", "t", "g")
  expect_identical(d, before)
})

test_that("dd_sim_duration checks its arguments and its true effects follow the hazards", {
  expect_error(dd_sim_duration(first_treat = 2), "`first_treat` must be a whole number between 3")
  expect_error(dd_sim_duration(n_periods = 4, first_treat = 5), "`first_treat` must be at most `n_periods` \\(4\\); got 5")
  expect_error(dd_sim_duration(effect = -2), "`effect` must be")
  expect_error(dd_sim_duration(hazard = 1:2), "`hazard` must be 8 positive")
  expect_error(dd_sim_duration(absorbed_share = 1), "`absorbed_share` must be 2 numbers")
  expect_error(dd_sim_duration(gap = NA), "`gap` must be one finite number; got NA")
  expect_error(dd_sim_duration(gap = c(1, 2)), "`gap` must be one finite number")
  expect_error(dd_sim_duration(n_units = 10, treated_share = 0.01), "`treated_share` = 0.01 gives 0 treated of 10 units")
  # a huge sample: the treated group's observed survival approaches its
  # population value (1 - p_1) exp(-cumulative hazard), computed here directly
  set.seed(4)
  d <- dd_sim_duration(n_units = 4e5, n_periods = 5, first_treat = 4, hazard = rep(0.2, 5), gap = 0.1, effect = 1,
                       absorbed_share = c(0.3, 0.1))
  s1 <- 1 - tapply(d$y[d$treated == 1], d$time[d$treated == 1], mean)
  pop <- 0.7 * exp(-cumsum(c(0, 0.3, 0.3, 0.6, 0.6)))
  expect_true(all(abs(s1 - pop) < 0.004))
  expect_equal(unname(attr(d, "true_att")[-1]), 0.7 * (exp(-c(0.9, 1.2)) - exp(-c(1.2, 1.8))),
               tolerance = 1e-12)
})
