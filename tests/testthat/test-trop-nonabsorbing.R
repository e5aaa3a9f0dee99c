# did_trop(non_absorbing = TRUE): diff-diff's TROP(non_absorbing = True)
# (Athey, Imbens, Qu and Viviano 2025, Eq. 12 / Algorithm 2; the spec is
# section 2 of tools/notes/diffdiff-extensions-spec.md). No R package
# implements TROP. The checks here are independent of the C code:
#  - the spec's worked example (4 x 4 panel; its numbers come from an R
#    re-implementation written from diff-diff's source, not from running
#    diff-diff) and, at lambda = 0, the same effects from one lm() fit;
#  - a plain-R route (hand_trop below): the weights written out, the weighted
#    least squares by lm.wfit() on unit and period dummies (lambda_nn = Inf:
#    no factor component), and identification decided by linear algebra
#    (is the cell's unit + period contrast in the row space of the design?)
#    rather than by the kernel's graph search;
#  - the default (absorbing) fit, which non_absorbing = TRUE must reproduce
#    on absorbing data (its own parity with diff-diff is test-trop.R's).

# plain-R TROP at lambda_nn = Inf. Y, D: periods x units (units sorted as
# did_trop sorts them). Returns tau per treated cell, period-major (did_trop's
# cell order), NA for a cell whose unit + period effect is not identified.
hand_trop <- function(Y, D, lt, lu) {
  T <- nrow(Y); N <- ncol(Y)
  w <- which(D == 1, arr.ind = TRUE)
  w <- w[order(w[, 1], w[, 2]), , drop = FALSE]
  vapply(seq_len(nrow(w)), function(k) {
    t <- w[k, 1]; i <- w[k, 2]
    theta <- exp(-lt * abs(seq_len(T) - t))
    omega <- vapply(seq_len(N), function(j) {
      if (j == i || lu == 0) return(1)
      both <- seq_len(T) != t & D[, i] == 0 & D[, j] == 0
      if (!any(both)) 0 else exp(-lu * sqrt(mean((Y[both, i] - Y[both, j])^2)))
    }, numeric(1))
    W <- outer(theta, omega) * (D == 0)
    use <- W > 0
    X <- cbind(diag(N)[col(Y)[use], , drop = FALSE], diag(T)[row(Y)[use], , drop = FALSE])
    x0 <- c(diag(N)[i, ], diag(T)[t, ])
    if (!any(use) || max(abs(qr.resid(qr(t(X)), x0))) > 1e-8) return(NA_real_)
    b <- stats::lm.wfit(X, Y[use], W[use])$coefficients
    b[is.na(b)] <- 0                       # aliased: any solution gives the same x0'b
    Y[t, i] - sum(x0 * b)
  }, numeric(1))
}

# long data -> periods x units matrices, units sorted by identifier
wide <- function(d, v, id = "id", tm = "time") {
  u <- sort(unique(d[[id]])); p <- sort(unique(d[[tm]]))
  m <- matrix(NA_real_, length(p), length(u))
  m[cbind(match(d[[tm]], p), match(d[[id]], u))] <- d[[v]]
  m
}
long <- function(D, Y, ids = seq_len(ncol(D))) {
  data.frame(id = rep(ids, each = nrow(D)), time = rep(seq_len(nrow(D)), ncol(D)), D = as.vector(D), y = as.vector(Y))
}

# 6 units x 6 periods: switches on and off, a never-treated unit and an
# always-treated one (u6: not identified)
switch_panel <- function(seed = 3) {
  set.seed(seed)
  D <- cbind(c(0, 0, 1, 1, 0, 0), c(0, 1, 1, 0, 0, 1), c(0, 0, 0, 0, 0, 0), c(1, 1, 0, 0, 0, 0),
             c(0, 0, 0, 1, 1, 1), c(1, 1, 1, 1, 1, 1))
  Y <- outer(1:6 * 0.4, rnorm(6, 0, 2), "+") + matrix(rnorm(36, 0, 0.5), 6) + 1.5 * D
  long(D, Y, paste0("u", 1:6))
}
tight <- list(max_iter = 1e5, tol = 1e-13)

test_that("the spec's worked example, and at lambda = 0 the effects of one lm() fit on the untreated cells", {
  D <- cbind(c(0, 1, 0, 1), c(0, 0, 1, 1), c(0, 0, 0, 0), c(1, 0, 0, 0))
  Y <- cbind(c(1.0, 3.2, 2.1, 4.0), c(2.0, 2.9, 5.1, 5.8), c(0.5, 1.4, 1.6, 2.2), c(4.0, 1.9, 2.4, 3.1))
  d <- long(D, Y)
  # no leading untreated period: the default refuses
  expect_error(did_trop(d, "y", "id", "time", "D", lambda_time = 0, lambda_unit = 0, lambda_nn = Inf, nboot = 0),
               "switches off again for unit 1 .*or `non_absorbing = TRUE`", class = "diffdiff_treatment_reversible")
  f0 <- did_trop(d, "y", "id", "time", "D", lambda_time = 0, lambda_unit = 0, lambda_nn = Inf, nboot = 0,
                 non_absorbing = TRUE)
  f5 <- did_trop(d, "y", "id", "time", "D", lambda_time = 0.5, lambda_unit = 0.5, lambda_nn = Inf, nboot = 0,
                 non_absorbing = TRUE)
  # spec section 2 (cells (t1,u4), (t2,u1), (t3,u2), (t4,u1), (t4,u2)), printed to 6-7 digits: 1e-6
  expect_identical(f0$cell_effects$id, c(4L, 1L, 2L, 1L, 2L))
  expect_equal(f0$cell_effects$tau, c(2.789655, 1.398621, 1.918621, 1.217931, 1.957931), tolerance = 1e-6)
  expect_equal(unname(coef(f0)), 1.8565518, tolerance = 1e-7)
  expect_equal(f5$cell_effects$tau, c(2.841096, 1.402823, 1.893195, 1.235605, 1.932993), tolerance = 1e-6)
  expect_equal(unname(coef(f5)), 1.8611423, tolerance = 1e-7)
  expect_identical(c(f0$n_treated, f0$n_control), c(3L, 1L))
  expect_true(f0$non_absorbing)
  # lambda = 0: every cell's fit is the unweighted two-way fit on the 11 untreated cells
  ctl <- d[d$D == 0, ]
  lmf <- lm(y ~ factor(id) + factor(time), data = ctl)
  tr <- d[d$D == 1, ][order(d$time[d$D == 1], d$id[d$D == 1]), ]
  tau_lm <- tr$y - predict(lmf, newdata = tr)
  ft <- do.call(did_trop, c(list(d, "y", "id", "time", "D", lambda_time = 0, lambda_unit = 0, lambda_nn = Inf,
                                 nboot = 0, non_absorbing = TRUE), tight))
  expect_equal(ft$cell_effects$tau, unname(tau_lm), tolerance = 1e-9)
  # the default tolerance (1e-6, diff-diff's) stops the alternating fit early: within 1e-6 of lm()
  expect_equal(f0$cell_effects$tau, unname(tau_lm), tolerance = 1e-6)
})

test_that("by hand: weights and weighted least squares in plain R, a switching treatment at fixed lambda", {
  d <- switch_panel()
  Y <- wide(d, "y"); D <- wide(d, "D")
  for (lam in list(c(0, 0), c(0.3, 0.4), c(1, 2))) {
    h <- hand_trop(Y, D, lam[1], lam[2])
    expect_warning(f <- do.call(did_trop, c(list(d, "y", "id", "time", "D", lambda_time = lam[1], lambda_unit = lam[2],
                                                 lambda_nn = Inf, nboot = 0, non_absorbing = TRUE), tight)),
                   "6 of 16 treated cells of `dname` = \"D\" are not identified \\(e.g. unit \"u6\" in period 1")
    expect_identical(is.na(f$cell_effects$tau), is.na(h))
    expect_identical(sum(is.na(h)), 6L)                    # u6, treated throughout
    expect_equal(f$cell_effects$tau, h, tolerance = 1e-9)
    expect_equal(unname(coef(f)), mean(h, na.rm = TRUE), tolerance = 1e-9)
    expect_identical(f$df, 9)                              # 16 treated cells (2+3+0+2+3+6), 10 identified: df 9
  }
  # distance weights that cut the graph: dd_sim_reversible, lambda_unit > 0 (a unit untreated only in the last
  # period shares untreated periods only with units untreated then, which are all treated in period 1)
  set.seed(11)
  r <- dd_sim_reversible(n_units = 24, n_periods = 6, effect = 2)
  Y <- wide(r, "y"); D <- wide(r, "D")
  h <- hand_trop(Y, D, 0.5, 0.5)
  expect_gt(sum(is.na(h)), 0L)
  f <- suppressWarnings(do.call(did_trop, c(list(r, "y", "id", "time", "D", lambda_time = 0.5, lambda_unit = 0.5,
                                                 lambda_nn = Inf, nboot = 0, non_absorbing = TRUE), tight)))
  expect_identical(is.na(f$cell_effects$tau), is.na(h))
  expect_equal(f$cell_effects$tau, h, tolerance = 1e-8)
  expect_output(print(summary(f)), sprintf("%d of %d treated cells not identified", sum(is.na(h)), length(h)))
})

test_that("cross-validation: every untreated cell (after switching off too) left out in turn, by hand", {
  d <- switch_panel()
  d <- d[d$id != "u6", ]                                   # every left-out cell then stays identified
  Y <- wide(d, "y"); D <- wide(d, "D")
  # the score by hand: each untreated cell's own weights, the cell left out, the squared prediction error
  hand_score <- function(lt) {
    c0 <- which(D == 0, arr.ind = TRUE)
    sum(apply(c0, 1, function(c) {
      t <- c[1]; i <- c[2]
      W <- outer(exp(-lt * abs(seq_len(nrow(Y)) - t)), rep(1, ncol(Y))) * (D == 0)
      W[t, i] <- 0
      use <- W > 0
      X <- cbind(diag(ncol(Y))[col(Y)[use], ], diag(nrow(Y))[row(Y)[use], ])
      b <- stats::lm.wfit(X, Y[use], W[use])$coefficients
      b[is.na(b)] <- 0
      (Y[t, i] - sum(c(diag(ncol(Y))[i, ], diag(nrow(Y))[t, ]) * b))^2
    }))
  }
  g <- c(2, 0.5, 0)                                        # the best last: not the first by default
  f <- do.call(did_trop, c(list(d, "y", "id", "time", "D", lambda_time_grid = g, lambda_unit = 0,
                                lambda_nn = Inf, nboot = 0, non_absorbing = TRUE), tight))
  q <- vapply(g, hand_score, numeric(1))
  expect_identical(which.min(q), 3L)
  expect_identical(unname(f$lambda[["lambda_time"]]), g[which.min(q)])
  expect_equal(f$loocv, min(q), tolerance = 1e-9)
  pan <- diffdiff:::dd_panel(d, "y", "id", "time", c(dname = "D"), complete = "TROP")
  m <- diffdiff:::dd_trop_matrices(pan, "D", "local", non_absorbing = TRUE)
  expect_equal(vapply(g, function(l) diffdiff:::dd_trop_score(m, "local", c(l, 0, Inf), c(1e5, 1e-13)), numeric(1)),
               q, tolerance = 1e-9)
})

test_that("an absorbing panel: non_absorbing = TRUE gives the default fit's numbers, bootstrap included", {
  st <- read.csv("trop-panel-30x12-stag.csv")
  for (nn in c(Inf, 0.1)) {
    set.seed(7)
    a <- did_trop(st, "y", "unit", "time", "d", lambda_time = 0.5, lambda_unit = 0.5, lambda_nn = nn, nboot = 6)
    set.seed(7)
    b <- did_trop(st, "y", "unit", "time", "d", lambda_time = 0.5, lambda_unit = 0.5, lambda_nn = nn, nboot = 6,
                  non_absorbing = TRUE)
    # the guard never applies (a never-treated unit connects every period): the same kernel calls
    expect_identical(coef(b), coef(a))
    expect_identical(b$replicates, a$replicates)
    expect_identical(b$coeftable, a$coeftable)
    expect_identical(b$cell_effects, a$cell_effects)
    expect_identical(b$factor, a$factor)
    expect_false(a$non_absorbing)
    expect_true(b$non_absorbing)
  }
})

test_that("row order and unit labels do not matter; the caller's data is unchanged", {
  d <- switch_panel(5)
  d0 <- d
  set.seed(1)
  f <- suppressWarnings(did_trop(d, "y", "id", "time", "D", lambda_time = 0.5, lambda_unit = 0.5, lambda_nn = 0.1,
                                 nboot = 8, non_absorbing = TRUE))
  s <- d[sample(nrow(d)), ]
  s$id <- sub("u", "unit_", s$id)
  set.seed(1)
  g <- suppressWarnings(did_trop(s, "y", "id", "time", "D", lambda_time = 0.5, lambda_unit = 0.5, lambda_nn = 0.1,
                                 nboot = 8, non_absorbing = TRUE))
  expect_equal(coef(g), coef(f), tolerance = 1e-12)
  expect_equal(g$replicates, f$replicates, tolerance = 1e-12)
  expect_equal(g$cell_effects$tau, f$cell_effects$tau, tolerance = 1e-12)
  expect_identical(d, d0)
})

test_that("cells of an always-treated unit or an all-treated last period are NA, the rest as without them", {
  d <- switch_panel()
  args <- list(lambda_time = 0.5, lambda_unit = 0.5, lambda_nn = 0.1, nboot = 0, non_absorbing = TRUE)
  f <- suppressWarnings(do.call(did_trop, c(list(d, "y", "id", "time", "D"), args)))
  g <- do.call(did_trop, c(list(d[d$id != "u6", ], "y", "id", "time", "D"), args))
  # u6 has no untreated cell: it carries no weight in any other cell's fit
  expect_equal(coef(f), coef(g), tolerance = 1e-13)
  expect_equal(f$cell_effects$tau[f$cell_effects$id != "u6"], g$cell_effects$tau, tolerance = 1e-13)
  expect_true(all(is.na(f$cell_effects$tau[f$cell_effects$id == "u6"])))
  # a seventh period in which every unit is treated: its cells are not identified; earlier period positions
  # are unchanged, so the other cells are as before
  x <- rbind(d[d$id != "u6", ], data.frame(id = paste0("u", 1:5), time = 7, D = 1, y = rnorm(5)))
  expect_warning(h <- do.call(did_trop, c(list(x, "y", "id", "time", "D"), args)),
                 "5 of 15 treated cells .* not identified \\(e.g. unit \"u1\" in period 7")
  expect_equal(h$cell_effects$tau[h$cell_effects$time < 7], g$cell_effects$tau, tolerance = 1e-13)
  expect_identical(h$df, g$df)
})

test_that("a known effect is recovered on dd_sim_reversible() data within Monte Carlo error", {
  set.seed(42)
  nsim <- 20
  sims <- lapply(seq_len(nsim), function(s) {
    r <- dd_sim_reversible(n_units = 60, n_periods = 8, effect = 2, effect_sd = 0.5)
    f <- did_trop(r, "y", "id", "time", "D", lambda_time = 0.5, lambda_unit = 0, lambda_nn = Inf,
                  nboot = if (s <= 5) 40 else 0, non_absorbing = TRUE)
    c(att = unname(coef(f)), se = f$coeftable$std.error)
  })
  att <- vapply(sims, `[[`, 1, "att")
  mc_se <- stats::sd(att) / sqrt(nsim)
  # the effect is 2 on average over treated cells (dd_sim_reversible: effect 2, sd 0.5 per cell)
  expect_lt(abs(mean(att) - 2), 4 * mc_se)
  # the bootstrap standard error is of the size of the estimates' spread (5 fits, 40 replicates each: loose)
  se <- vapply(sims[1:5], `[[`, 1, "se")
  expect_gt(mean(se) / stats::sd(att), 0.5)
  expect_lt(mean(se) / stats::sd(att), 2)
})

test_that("bootstrap: never- and ever-treated units resampled apart (none never treated allowed), guard in every replicate", {
  d <- switch_panel()
  for (x in list(d, d[d$id != "u3", ])) {                 # with u3, the one never-treated unit, and without
    Y <- wide(x, "y"); D <- wide(x, "D")
    set.seed(9)
    f <- suppressWarnings(do.call(did_trop, c(list(x, "y", "id", "time", "D", lambda_time = 0.3, lambda_unit = 0.4,
                                                   lambda_nn = Inf, nboot = 12, non_absorbing = TRUE), tight)))
    # the draws as documented: R's generator, per replicate the never-treated pool first, then the ever-treated
    # pool, each with replacement; each replicate's ATT the mean over its identified cells
    set.seed(9)
    p0 <- which(colSums(D) == 0); p1 <- which(colSums(D) > 0)
    reps <- vapply(1:12, function(b) {
      cols <- c(p0[sample.int(length(p0), length(p0), replace = TRUE)], p1[sample.int(length(p1), length(p1), replace = TRUE)])
      h <- hand_trop(Y[, cols, drop = FALSE], D[, cols, drop = FALSE], 0.3, 0.4)
      if (all(is.na(h))) NA_real_ else mean(h, na.rm = TRUE)
    }, numeric(1))
    expect_equal(f$replicates, reps, tolerance = 1e-8)
    expect_equal(f$coeftable$std.error, stats::sd(reps[is.finite(reps)]), tolerance = 1e-8)
    expect_identical(f$n_control, length(p0))
  }
  expect_identical(f$n_control, 0L)
  # forked processes: the same numbers bit for bit
  skip_on_os("windows")
  set.seed(9)
  g <- suppressWarnings(did_trop(x, "y", "id", "time", "D", lambda_time = 0.3, lambda_unit = 0.4, lambda_nn = Inf,
                                 nboot = 12, non_absorbing = TRUE, cores = 2, max_iter = 1e5, tol = 1e-13))
  expect_identical(g$replicates, f$replicates)
  expect_identical(g$cell_effects, f$cell_effects)
})

test_that("bad input: the global method, a non-flag, a disconnected design, too few untreated cells", {
  d <- switch_panel()
  expect_error(did_trop(d, "y", "id", "time", "D", method = "global", non_absorbing = TRUE, nboot = 0),
               "`method` = \"global\" does not support `non_absorbing` = TRUE")
  for (bad in list("yes", NA, c(TRUE, TRUE), 1))
    expect_error(did_trop(d, "y", "id", "time", "D", non_absorbing = bad, nboot = 0),
                 "`non_absorbing` must be TRUE or FALSE; got")
  expect_error(did_trop(d, "y", "id", "time", "D", non_absorbing = "yes", nboot = 0), "got \"yes\"")
  # two blocks: u1, u2 untreated in periods 1-2 only, u3, u4 in periods 3-4 only; no treated cell's unit and
  # period are connected through untreated cells
  D <- cbind(c(0, 0, 1, 1), c(0, 0, 1, 1), c(1, 1, 0, 0), c(1, 1, 0, 0))
  set.seed(2)
  b <- long(D, matrix(rnorm(16), 4))
  expect_error(did_trop(b, "y", "id", "time", "D", lambda_time = 0, lambda_unit = 0, lambda_nn = Inf, nboot = 0,
                        non_absorbing = TRUE),
               "`dname` = \"D\": none of the 8 treated cells is identified \\(e.g. unit 3 in period 1")
  # every cell treated; untreated cells in one period only
  x <- d; x$D <- 1
  expect_error(did_trop(x, "y", "id", "time", "D", nboot = 0, non_absorbing = TRUE),
               "`dname` = \"D\" is 1 in every cell")
  x <- d; x$D <- as.numeric(x$time != 3 | x$id == "u6")
  expect_error(did_trop(x, "y", "id", "time", "D", nboot = 0, non_absorbing = TRUE),
               "`dname` = \"D\" is 0 only in period 3: with `non_absorbing` = TRUE, TROP needs at least 2 periods")
  # the checks shared with the default still apply
  x <- d; x$D[1] <- 2
  expect_error(did_trop(x, "y", "id", "time", "D", nboot = 0, non_absorbing = TRUE), "must be 0/1")
  x <- d; x$D <- 0
  expect_error(did_trop(x, "y", "id", "time", "D", nboot = 0, non_absorbing = TRUE), "no treated cells",
               class = "diffdiff_no_treated")
  expect_error(did_trop(d[-3, ], "y", "id", "time", "D", nboot = 0, non_absorbing = TRUE), "unbalanced")
})

test_that("the identification guard runs in default local fits: all donor weights 0 is an error, not a number", {
  # Regression test: with the outcome in the thousands and lambda_unit = 5
  # every donor weight exp(-5 * distance) underflows to 0, and the default
  # fit returned the treated outcome minus its unit effect as the ATT (1872
  # here, for a true effect of 2000), with no warning.
  set.seed(1)
  d <- dd_sim_factor(n_units = 20, n_periods = 10, n_treated = 3, effect = 2)
  d$y <- d$y * 1000
  expect_error(did_trop(d, "y", "id", "time", "D", lambda_time = 0, lambda_unit = 5, lambda_nn = Inf, nboot = 0),
               "none of the 6 treated cells is identified.*smaller `lambda_unit`")
  # the same data at a scale where the weights do not underflow: a number,
  # the same with the guard as the non-absorbing path, no unidentified cell
  d$y <- d$y / 1000
  f <- did_trop(d, "y", "id", "time", "D", lambda_time = 0, lambda_unit = 5, lambda_nn = Inf, nboot = 0)
  expect_false(anyNA(f$cell_effects$tau))
  fn <- did_trop(d, "y", "id", "time", "D", lambda_time = 0, lambda_unit = 5, lambda_nn = Inf, nboot = 0,
                 non_absorbing = TRUE)
  expect_identical(coef(f), coef(fn))
})
