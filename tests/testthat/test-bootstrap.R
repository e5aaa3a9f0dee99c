# Wild cluster bootstrap with the null imposed (WCR).

# Brute force: refit the model on every bootstrap sample with fixest, using the
# very same weights (drawn by C_boot_weights from the same seed), and compare
# the symmetric p-value. This checks the linear-in-r algebra of bootstrap.c.
brute_p <- function(d, fml_full, fml_restr, fml_boot, term, clname, B, seed, fixef.tol = 1e-11) {
  r <- fixest::feols(fml_restr, d, fixef.tol = fixef.tol, notes = FALSE)
  u <- resid(r); f <- fitted(r)
  full <- fixest::feols(fml_full, d, vcov = stats::as.formula(paste0("~", clname)), fixef.tol = fixef.tol)
  t0 <- fixest::tstat(full)[term]
  # multipliers are drawn per cluster in sorted order of the cluster values (so that the
  # numbers do not depend on the order of the rows)
  cl <- d[[clname]]; codes <- match(cl, sort(unique(cl)))
  set.seed(seed)
  V <- .Call(diffdiff:::C_boot_weights, length(unique(cl)), B, 1L)
  tb <- vapply(seq_len(B), function(b) {
    d$ystar <- f + V[codes, b] * u
    m <- fixest::feols(fml_boot, d,
                       vcov = stats::as.formula(paste0("~", clname)), fixef.tol = fixef.tol)
    fixest::tstat(m)[term]
  }, numeric(1))
  mean(abs(tb) >= abs(t0))
}

test_that("WCR p-value equals a brute-force refit with the same weights (no FE)", {
  need_peer("fixest")
  d <- sim_2x2()
  d$att <- d$treated * d$post
  set.seed(11)
  fit <- did_2x2(d, "y", "treated", "post", xformla = ~ x1, cluster = "state", nboot = 99)
  p_bf <- brute_p(d, y ~ treated + post + att + x1, y ~ treated + post + x1,
                  ystar ~ treated + post + att + x1, "att", "state", 99, 11)
  expect_equal(fit$coeftable$boot.p.value[fit$coeftable$term == "ATT"], p_bf)
})

test_that("WCR p-value equals a brute-force refit when FE are not nested in clusters", {
  need_peer("fixest")
  d <- sim_panel()
  d <- d[d$id <= 120, ]
  # null nearly true so the p-value is interior
  d$y2 <- d$y - 1.7 * d$treat
  set.seed(5)
  fit <- did_twfe(d, "y2", "id", "year", "treat", xformla = ~ x1, cluster = "state",
                  nboot = 49, fe_tol = 1e-11)
  p_bf <- brute_p(d, y2 ~ treat + x1 | id + year, y2 ~ x1 | id + year,
                  ystar ~ treat + x1 | id + year, "treat", "state", 49, 5)
  expect_equal(fit$coeftable$boot.p.value[1], p_bf)
  expect_gt(p_bf, 0)
})

test_that("bootstrap is reproducible under set.seed and identical for 1 and 2 threads", {
  d <- sim_panel()
  run <- function() {
    set.seed(2024)
    did_twfe(d, "y", "id", "year", "treat", cluster = "state", nboot = 199)$coeftable
  }
  old <- dd_threads()
  on.exit(dd_threads(old, throttle = 65536))
  dd_threads(1)
  a <- run(); b <- run()
  expect_identical(a, b)
  set.seed(1); e <- did_twfe(d, "y", "id", "year", "treat", cluster = "state", nboot = 199)
  expect_false(identical(e$coeftable$boot.p.value, a$boot.p.value) &&
                 identical(e$coeftable$boot.conf.low, a$boot.conf.low))
  need_threads(2)
  dd_threads(2, throttle = 1)
  c2 <- run()
  expect_identical(a, c2)
})

test_that("bootstrap interval brackets the estimate and is near the analytic one", {
  d <- sim_panel()
  set.seed(3)
  fit <- did_twfe(d, "y", "id", "year", "treat", nboot = 999)
  tab <- fit$coeftable
  expect_lt(tab$boot.conf.low, tab$estimate)
  expect_gt(tab$boot.conf.high, tab$estimate)
  # 300 clusters: bootstrap and analytic intervals agree closely
  expect_lt(abs(tab$boot.conf.low - tab$conf.low) / tab$std.error, 0.25)
  expect_lt(abs(tab$boot.conf.high - tab$conf.high) / tab$std.error, 0.25)
})

test_that("bootstrap weights have mean 0 and variance 1", {
  set.seed(9)
  for (type in 1:3) {
    V <- .Call(diffdiff:::C_boot_weights, 2000L, 100L, type)
    expect_lt(abs(mean(V)), 0.01)
    expect_lt(abs(mean(V^2) - 1), 0.01)
  }
  V <- .Call(diffdiff:::C_boot_weights, 1000L, 10L, 1L)
  expect_setequal(unique(as.vector(V)), c(-1, 1))
  V <- .Call(diffdiff:::C_boot_weights, 1000L, 10L, 3L)
  expect_equal(sort(unique(as.vector(V))), c(-sqrt(1.5), -1, -sqrt(0.5), sqrt(0.5), 1, sqrt(1.5)))
})

test_that("WCR has close to nominal size under the null with few clusters", {
  # 300 simulated data sets, 16 clusters, true ATT = 0, cluster-correlated
  # errors; rejection rate at 5% must lie in [0.015, 0.09] (3 binomial SEs).
  set.seed(77)
  rej <- vapply(1:300, function(s) {
    G <- 16; n_g <- 20
    cl <- rep(seq_len(G), each = n_g)
    treated <- as.integer(cl <= 8)
    post <- rep(0:1, length.out = G * n_g)
    y <- rnorm(G)[cl] + rnorm(G * n_g) * (1 + treated)
    dd <- data.frame(y = y, treated = treated, post = post, cl = cl)
    f <- did_2x2(dd, "y", "treated", "post", cluster = "cl", nboot = 199)
    f$coeftable$boot.p.value[f$coeftable$term == "ATT"] < 0.05
  }, logical(1))
  expect_gt(mean(rej), 0.015)
  expect_lt(mean(rej), 0.09)
})

test_that("two-way clustering with the bootstrap is refused with a clear error", {
  d <- sim_panel()
  expect_error(did_twfe(d, "y", "id", "year", "treat", cluster = c("state", "year"), nboot = 9),
               "one-way")
})

test_that("WCR with Mammen weights and 6 clusters: an unbounded interval is reported as such (not +-1e7)", {
  need_peer("fixest")
  # 6 clusters: 14% of Mammen draws give every cluster the same weight and
  # reproduce the sample t statistic at every null value, so no null value is
  # rejected at 5%. Checked by brute force at a null value 1e4 standard
  # errors away: refits on y* = fitted_r + v u_r with the same weights.
  set.seed(2)
  d <- expand.grid(unit = 1:20, cl = 1:6, post = 0:1)
  d$treated <- as.integer(d$cl <= 3)
  d$y <- rnorm(6)[d$cl] + 0.5 * d$post + d$treated * d$post + rnorm(nrow(d))
  d$att <- d$treated * d$post
  ws <- character()
  fit <- withCallingHandlers({
    set.seed(7); did_2x2(d, "y", "treated", "post", cluster = "cl", nboot = 199, boot_weights = "mammen")
  }, warning = function(w) { ws <<- c(ws, conditionMessage(w)); invokeRestart("muffleWarning") })
  expect_true(any(grepl("6 clusters and mammen weights: 14.4% of the draws", ws, fixed = TRUE)))
  expect_true(any(grepl("`ATT`: the wild bootstrap confidence interval is unbounded", ws, fixed = TRUE)))
  tab <- fit$coeftable[fit$coeftable$term == "ATT", ]
  expect_identical(c(tab$boot.conf.low, tab$boot.conf.high), c(-Inf, Inf))
  r <- tab$estimate + 1e4 * tab$std.error
  d$yr <- d$y - r * d$att
  rf <- fixest::feols(yr ~ treated + post, d, notes = FALSE)
  t0 <- (tab$estimate - r) / tab$std.error
  codes <- match(d$cl, sort(unique(d$cl)))
  set.seed(7)
  V <- .Call(diffdiff:::C_boot_weights, 6L, 199L, 2L)
  tb <- vapply(seq_len(199), function(b) {
    d$ystar <- fitted(rf) + r * d$att + V[codes, b] * resid(rf)
    m <- fixest::feols(ystar ~ treated + post + att, d, vcov = ~ cl)
    (coef(m)[["att"]] - r) / fixest::se(m)[["att"]]
  }, numeric(1))
  expect_gte(mean(abs(tb) >= abs(t0) * (1 - 1e-9)), 0.05)
  # Webb weights: 6^(1-6) = 0.01% such draws; the interval is finite
  set.seed(7)
  fw <- suppressWarnings(did_2x2(d, "y", "treated", "post", cluster = "cl", nboot = 199, boot_weights = "webb"))
  tw <- fw$coeftable[fw$coeftable$term == "ATT", ]
  expect_true(all(is.finite(c(tw$boot.conf.low, tw$boot.conf.high))))
  expect_lt(tw$boot.conf.high - tw$boot.conf.low, 20 * tw$std.error)
})
