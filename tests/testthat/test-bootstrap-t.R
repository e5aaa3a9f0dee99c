# did_cs(cband_method = "bootstrap-t"): the wild bootstrap-t critical value
# of the uniform band. Reference: an R computation from the dense influence
# functions and the multipliers themselves. The multipliers are recovered
# from the C kernel by bootstrapping the identity matrix under the same seed
# (row r of the identity receives the r-th multiplier of each stream), then
# the studentised draws, their recentred standard errors and the type-1
# quantile of the largest |t| are formed in plain R.

ns <- asNamespace("diffdiff")

multipliers <- function(seed, n, B, type = 1L) {
  set.seed(seed)
  .Call(ns$C_ifs_boot, ns$dd_ifs_dense(diag(n)), 0:(n - 1L), as.integer(B), type, NULL, NULL, NULL, 0L, NULL) * sqrt(n)
}

# recentred sum of squares of the multiplied influence functions
ref_ss <- function(V, psi, grp) {
  vapply(seq_len(ncol(psi)), function(k) {
    x <- V * rep(psi[, k], each = nrow(V))
    rowSums(x^2) - Reduce(`+`, lapply(unique(grp), function(h) rowSums(x[, grp == h, drop = FALSE])^2 / sum(grp == h)))
  }, numeric(nrow(V)))
}

ref_crit <- function(V, psi, grp, alpha = 0.05) {
  t <- (V %*% psi) / sqrt(ref_ss(V, psi, grp))
  mx <- apply(abs(t), 1, max)
  sort(mx)[ceiling(length(mx) * (1 - alpha))]
}

test_that("the grouped bootstrap kernel returns the same draws and the recentred sums of squares", {
  set.seed(1)
  for (n in c(37L, 64L, 65L)) {
    K <- 3L
    psi <- matrix(rnorm(n * K), n, K)
    for (grp in list(sample(0:2, n, TRUE), rep(0:2, c(10L, 20L, n - 30L)))) {
      for (type in 1:3) {
        V <- multipliers(5, n, 70L, type)
        S <- ns$dd_ifs_dense(psi)
        set.seed(5); r <- .Call(ns$C_ifs_boot, S, 0:(K - 1L), 70L, type, as.integer(grp), 3L, NULL, 0L, NULL)
        set.seed(5); d0 <- .Call(ns$C_ifs_boot, S, 0:(K - 1L), 70L, type, NULL, NULL, NULL, 0L, NULL)
        expect_equal(length(unique(round(c(V), 10))), if (type == 3L) 6L else 2L)
        expect_equal(r$draws, d0, tolerance = 1e-13)
        expect_equal(r$draws, V %*% psi / sqrt(n), tolerance = 1e-13)
        expect_equal(r$ss, ref_ss(V, psi, grp), tolerance = 1e-12)
      }
    }
  }
})

test_that("did_cs bootstrap-t: analytic SE, critical value as the R reference, row order irrelevant", {
  d <- sim_panel()
  B <- 199L
  set.seed(11)
  fit <- did_cs(d, "y", "id", "year", "first_treat", nboot = B, cband_method = "bootstrap-t")
  an <- did_cs(d, "y", "id", "year", "first_treat", nboot = 0)
  expect_equal(fit$coeftable$std.error, an$coeftable$std.error, tolerance = 1e-14)
  expect_identical(fit$vcov_type, "analytic")
  expect_match(fit$vcov_label, "wild bootstrap-t (199 draws, rademacher)", fixed = TRUE)
  K <- nrow(fit$coeftable)
  psi <- as.matrix(fit$inf)[, seq_len(K)]
  V <- multipliers(11, fit$n, B)
  crit <- ref_crit(V, psi, fit$unit_group)
  expect_equal(fit$crit, crit, tolerance = 1e-12)
  expect_equal(fit$coeftable$cband.high - fit$coeftable$estimate, crit * an$coeftable$std.error, tolerance = 1e-12)
  # the sup-t band with the same draws has a smaller critical value here
  set.seed(11)
  st <- did_cs(d, "y", "id", "year", "first_treat", nboot = B)
  expect_gt(fit$crit, st$crit)
  # the same seed gives the same band for any order of the rows
  ds <- d[sample(nrow(d)), ]
  set.seed(11)
  sh <- did_cs(ds, "y", "id", "year", "first_treat", nboot = B, cband_method = "bootstrap-t")
  expect_equal(sh$crit, fit$crit, tolerance = 1e-13)
})

test_that("aggregate() bootstrap-t: the band of the event study from the aggregated influence functions", {
  d <- sim_panel()
  fit <- did_cs(d, "y", "id", "year", "first_treat", nboot = 0)
  set.seed(3)
  es <- aggregate(fit, type = "dynamic", nboot = 149, cband = TRUE, cband_method = "bootstrap-t")
  an <- aggregate(fit, type = "dynamic", nboot = 0, cband = FALSE)
  expect_equal(es$coeftable$std.error, an$coeftable$std.error, tolerance = 1e-14)
  m <- nrow(es$coeftable) - 1L
  psi <- as.matrix(fit$inf) %*% es$comb[, seq_len(m)]
  crit <- ref_crit(multipliers(3, fit$n, 149L), psi, fit$unit_group)
  expect_equal(es$crit, crit, tolerance = 1e-12)
  expect_equal((es$coeftable$cband.high - es$coeftable$cband.low)[seq_len(m)] / 2,
               crit * an$coeftable$std.error[seq_len(m)], tolerance = 1e-12)
  # the fit's method is the default of aggregate()
  set.seed(3)
  fb <- did_cs(d, "y", "id", "year", "first_treat", nboot = 149, cband_method = "bootstrap-t")
  set.seed(3)
  eb <- aggregate(fb, type = "dynamic")
  expect_equal(eb$crit, crit, tolerance = 1e-12)
})

test_that("bootstrap-t with clusters nested in cohorts works on cluster sums; otherwise a clear error", {
  d <- sim_panel()
  # a cluster variable nested in cohorts: cohort x (id %% 7)
  d$cl <- d$first_treat * 100 + d$id %% 7
  set.seed(4)
  fit <- did_cs(d, "y", "id", "year", "first_treat", cluster = "cl", nboot = 99, cband_method = "bootstrap-t")
  K <- nrow(fit$coeftable)
  psi <- as.matrix(fit$inf)[, seq_len(K)]
  cl <- fit$unit_cluster
  lev <- sort(unique(cl))
  P <- rowsum(psi, match(cl, lev))
  grp <- fit$unit_group[match(seq_along(lev), match(cl, lev))]
  expect_equal(fit$crit, ref_crit(multipliers(4, length(lev), 99L), P, grp), tolerance = 1e-12)
  expect_error(did_cs(d, "y", "id", "year", "first_treat", cluster = "state", nboot = 99,
                      cband_method = "bootstrap-t"), "cband_method.*cluster\\(s\\) of `cluster`")
})

test_that("bootstrap-t bad input: named argument and value", {
  d <- sim_panel()
  expect_error(did_cs(d, "y", "id", "year", "first_treat", nboot = 0, cband_method = "bootstrap-t"),
               "`cband_method`.*`nboot` is 0")
  expect_error(did_cs(d, "y", "id", "year", "first_treat", nboot = 0, cband_method = "boot"), "cband_method")
  fit <- did_cs(d, "y", "id", "year", "first_treat", nboot = 0)
  expect_error(aggregate(fit, type = "dynamic", cband = TRUE, cband_method = "bootstrap-t"), "`nboot` is 0")
  expect_error(aggregate(fit, cband_method = "t"), "cband_method")
  des <- survey_design(d, weights = ~ w, ids = ~ id)
  expect_error(did_cs(d, "y", "id", "year", "first_treat", nboot = 99, survey = des, cband_method = "bootstrap-t"),
               "bootstrap-t.*survey")
  # cband = FALSE: no band, nothing drawn, no error even with nboot = 0
  nb <- did_cs(d, "y", "id", "year", "first_treat", nboot = 0, cband = FALSE, cband_method = "bootstrap-t")
  expect_null(nb$coeftable$cband.low)
})

test_that("bootstrap-t on repeated cross-sections and unbalanced panels (one multiplier per row of the influence functions)", {
  d <- sim_panel()
  for (args in list(list(panel = FALSE), list(allow_unbalanced_panel = TRUE))) {
    dd <- if (isTRUE(args$allow_unbalanced_panel)) d[-c(5, 77, 300), ] else d
    set.seed(8)
    fit <- do.call(did_cs, c(list(dd, "y", "id", "year", "first_treat", nboot = 99, cband_method = "bootstrap-t"), args))
    K <- nrow(fit$coeftable)
    psi <- as.matrix(fit$inf)[, seq_len(K)]
    expect_equal(nrow(psi), length(fit$unit_group))
    expect_equal(fit$crit, ref_crit(multipliers(8, fit$n, 99L), psi, fit$unit_group), tolerance = 1e-12)
  }
})
