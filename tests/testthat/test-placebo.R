# placebo_test(): every draw re-runs the estimator on the validated panel
# with a redrawn treatment. The slow path here is independent: the data
# frame is rebuilt with the redrawn treatment (or without the rows left out)
# and the estimator is called on it from scratch; the draws must equal those
# fits to 1e-12. The fast path is asserted by counting the panels built
# from data (dd_reuse$built): one per placebo_test() call, whatever the
# number of draws.

built <- function() diffdiff:::dd_reuse$built

pl_data <- function(n = 40, T = 6, seed = 3) {
  set.seed(seed)
  d <- dd_sim_staggered(n_units = n, n_periods = T, effect = 1)
  d$D <- as.integer(d$first_treat > 0 & d$time >= d$first_treat)
  d
}

# the data with unit-level first treated periods G (in the order of first
# appearance of the units) and the indicator rebuilt
pl_assign <- function(d, G) {
  u <- unique(d$id)
  d$first_treat <- G[match(d$id, u)]
  d$D <- as.integer(d$first_treat > 0 & d$time >= d$first_treat)
  d
}
pl_G <- function(d) { u <- unique(d$id); d$first_treat[match(u, d$id)] }

# the statistic placebo_test() uses, from a fresh fit
pl_stat <- function(f) diffdiff:::dd_placebo_stat(f)$est

test_that("permutation draws equal fresh fits on the permuted data, for every estimator; one panel built", {
  d <- pl_data()
  G <- pl_G(d)
  fits <- list(
    cs = function(x) did_cs(x, "y", "id", "time", "first_treat", nboot = 0),
    twfe = function(x) did_twfe(x, "y", "id", "time", "D"),
    event = function(x) did_event(x, "y", "id", "time", "first_treat"),
    sa = function(x) did_sa(x, "y", "id", "time", "first_treat"),
    bjs = function(x) did_bjs(x, "y", "id", "time", "first_treat"),
    gardner = function(x) did_gardner(x, "y", "id", "time", "first_treat"),
    stacked = function(x) did_stacked(x, "y", "id", "time", "first_treat", kappa_pre = 1, kappa_post = 1),
    etwfe = function(x) did_etwfe(x, "y", "id", "time", "first_treat"),
    edid = function(x) did_edid(x, "y", "id", "time", "first_treat", nboot = 0),
    rs = function(x) did_rs(x, "y", "id", "time", "first_treat"))
  for (nm in names(fits)) {
    fit <- suppressMessages(fits[[nm]](d))
    set.seed(11)
    perms <- lapply(1:4, function(b) G[sample.int(length(G))])
    set.seed(11)
    b0 <- built()
    pt <- suppressWarnings(placebo_test(fit, "permutation", data = d, nperm = 4))
    expect_identical(built() - b0, 1L, label = paste(nm, "panels built"))
    expect_equal(pt$estimate, pl_stat(fit), tolerance = 1e-12, label = nm)
    slow <- vapply(perms, function(g) {
      f <- tryCatch(suppressWarnings(suppressMessages(fits[[nm]](pl_assign(d, g)))), error = function(e) NULL)
      if (is.null(f)) NA_real_ else pl_stat(f)
    }, numeric(1))
    expect_equal(pt$draws$estimate, slow[pt$draws$draw], tolerance = 1e-12, label = nm)
    expect_identical(pt$failed, sum(is.na(slow)), label = nm)
  }
})

test_that("did_sdid (block design) draws equal fresh fits", {
  set.seed(4)
  d <- dd_sim_factor(n_units = 20, n_periods = 10, n_treated = 4)
  fit <- did_sdid(d, "y", "id", "time", "D", se = "none")
  u <- unique(d$id)
  G <- vapply(u, function(i) { t <- d$time[d$id == i & d$D == 1]; if (length(t)) min(t) else 0 }, numeric(1))
  set.seed(2); perms <- lapply(1:3, function(b) G[sample.int(length(G))])
  set.seed(2); pt <- placebo_test(fit, "permutation", data = d, nperm = 3)
  slow <- vapply(perms, function(g) {
    x <- d; x$D <- as.integer(g[match(x$id, u)] > 0 & x$time >= g[match(x$id, u)])
    did_sdid(x, "y", "id", "time", "D", se = "none")$coeftable$estimate[1]
  }, numeric(1))
  expect_equal(pt$draws$estimate, slow, tolerance = 1e-12)
  # leave one treated unit out: jackknife standard errors in the draws
  lo <- placebo_test(fit, "leave_one_out", data = d)
  expect_identical(nrow(lo$draws), 4L)
  x <- d[d$id != lo$draws$left_out[2], ]
  expect_equal(lo$draws$estimate[2], did_sdid(x, "y", "id", "time", "D", se = "none")$coeftable$estimate[1],
               tolerance = 1e-12)
  expect_true(all(is.finite(lo$draws$std.error)))
  # did_trop on the same data (no factor component: fast)
  tf <- did_trop(d, "y", "id", "time", "D", lambda_time = 0.5, lambda_unit = 0.5, lambda_nn = Inf, nboot = 0)
  # (a did_trop fit with nboot = 0 has no standard error: the raw estimate)
  set.seed(2); pt <- placebo_test(tf, "permutation", data = d, nperm = 3, statistic = "estimate")
  slow <- vapply(perms, function(g) {
    x <- d; x$D <- as.integer(g[match(x$id, u)] > 0 & x$time >= g[match(x$id, u)])
    unname(coef(did_trop(x, "y", "id", "time", "D", lambda_time = 0.5, lambda_unit = 0.5, lambda_nn = Inf, nboot = 0)))
  }, numeric(1))
  expect_equal(pt$draws$estimate, slow, tolerance = 1e-12)
})

test_that("exact permutation p-value: all distinct assignments enumerated", {
  set.seed(8)
  d <- dd_sim_basic(n_units = 7, n_pre = 2, n_post = 2, treated_share = 2 / 7, effect = 2)
  fit <- suppressWarnings(did_twfe(d, "y", "id", "time", "D"))
  u <- unique(d$id)
  G <- vapply(u, function(i) { t <- d$time[d$id == i & d$D == 1]; if (length(t)) min(t) else 0 }, numeric(1))
  k <- sum(G > 0); g1 <- max(G)
  expect_identical(k, 2L)
  # choose(7, 2) = 21 assignments
  expect_error(placebo_test(fit, "permutation", data = d, nperm = 22), "`nperm` = 22 exceeds the 21 distinct")
  # (the raw-estimate statistic; the default t statistic is tested below)
  pt <- placebo_test(fit, "permutation", data = d, nperm = 21, statistic = "estimate")
  expect_true(pt$exact)
  cmb <- utils::combn(7, 2)
  slow <- apply(cmb, 2, function(j) {
    g <- numeric(7); g[j] <- g1
    x <- d; x$D <- as.integer(g[match(x$id, u)] > 0 & x$time >= g1)
    suppressWarnings(did_twfe(x, "y", "id", "time", "D"))$coeftable$estimate
  })
  expect_equal(sort(pt$draws$estimate), sort(slow), tolerance = 1e-12)
  obs <- fit$coeftable$estimate
  expect_equal(pt$p.value, mean(abs(slow) >= abs(obs) - 1e-10))
  # the observed assignment is one of the 21
  expect_true(any(abs(slow - obs) < 1e-12))
})

test_that("random permutations: p-value formula and reproducibility", {
  d <- pl_data(n = 30)
  fit <- did_cs(d, "y", "id", "time", "first_treat", nboot = 0)
  set.seed(1); a <- placebo_test(fit, "permutation", data = d, nperm = 19, statistic = "estimate")
  set.seed(1); b <- placebo_test(fit, "permutation", data = d, nperm = 19, statistic = "estimate")
  expect_identical(a$draws, b$draws)
  hit <- sum(abs(a$draws$estimate) >= abs(a$estimate) - 1e-10 * max(1, abs(a$estimate)))
  expect_equal(a$p.value, (1 + hit) / (1 + nrow(a$draws)))
  expect_false(a$exact)
  # a strong effect: no permuted estimate reaches it
  expect_equal(a$p.value, 1 / 20)
  # plots
  f <- tempfile(fileext = ".png"); png(f); plot(a); dev.off(); expect_true(file.size(f) > 0)
  skip_if_not_installed("ggplot2")
  g <- ggplot2::autoplot(a)
  expect_s3_class(g, "ggplot")
  expect_match(g$labels$title, "Permutation distribution \\(p = 0.05\\)")
})

# A small heteroskedastic design (the two treated units' errors have 4
# times the controls' standard deviation), all choose(8, 2) = 28 assignments
# enumerated. The reference p-values come from fresh did_twfe() fits on each
# assignment's data (their estimates and clustered standard errors), not from
# placebo_test().
pl_het <- function(seed = 2) {
  set.seed(seed)
  n <- 8; tr <- rep(c(1, 0), c(2, 6))
  e <- matrix(stats::rnorm(2 * n), n) * ifelse(tr == 1, 4, 1)
  data.frame(id = rep(seq_len(n), 2), time = rep(1:2, each = n), y = as.vector(stats::rnorm(n) + e),
             D = as.numeric(rep(tr, 2) == 1 & rep(1:2, each = n) == 2))
}

test_that("permutation: the default statistic is |estimate / SE|; the p-value is the share of |t| draws >= the observed |t|", {
  d <- pl_het()
  fit <- suppressWarnings(did_twfe(d, "y", "id", "time", "D"))
  cmb <- utils::combn(8, 2)
  slow <- t(apply(cmb, 2, function(j) {
    x <- d; x$D <- as.numeric(x$id %in% j & x$time == 2)
    unlist(suppressWarnings(did_twfe(x, "y", "id", "time", "D"))$coeftable[1, c("estimate", "std.error")])
  }))
  t_slow <- slow[, 1] / slow[, 2]
  t_obs <- fit$coeftable$estimate / fit$coeftable$std.error
  p_t <- mean(abs(t_slow) >= abs(t_obs) - 1e-10 * max(1, abs(t_obs)))
  p_est <- mean(abs(slow[, 1]) >= abs(fit$coeftable$estimate) - 1e-10)
  expect_false(isTRUE(all.equal(p_t, p_est)))          # the design separates the two statistics
  pt <- suppressWarnings(placebo_test(fit, "permutation", data = d, nperm = 28))
  expect_true(pt$exact)
  expect_identical(pt$test_statistic, "t")
  expect_equal(pt$observed_statistic, t_obs, tolerance = 1e-12)
  expect_equal(sort(pt$draws$statistic), sort(t_slow), tolerance = 1e-10)
  expect_equal(pt$p.value, p_t)
  expect_identical(pt$n_no_statistic, 0L)
  expect_output(print(pt), "Permutation statistic: \\|t\\| = \\|estimate / SE\\| \\(statistic = \"t\"\\)")
  # the raw estimate, on request
  pe <- suppressWarnings(placebo_test(fit, "permutation", data = d, nperm = 28, statistic = "estimate"))
  expect_identical(pe$test_statistic, "estimate")
  expect_equal(pe$p.value, p_est)
  expect_equal(pe$draws$statistic, pe$draws$estimate)
  expect_output(print(pe), "Permutation statistic: \\|estimate\\| \\(statistic = \"estimate\"\\)")
  # the other types compare no statistic across draws
  lo <- placebo_test(fit, "leave_one_out", data = d)
  expect_identical(lo$test_statistic, NA_character_)
  # plots of the t distribution
  f <- tempfile(fileext = ".png"); png(f); plot(pt); dev.off(); expect_true(file.size(f) > 0)
  skip_if_not_installed("ggplot2")
  g <- ggplot2::autoplot(pt)
  expect_identical(g$labels$x, "t statistic (estimate / SE)")
})

test_that("permutation under a heteroskedastic null: |t| rejects near the nominal rate, |estimate| over-rejects", {
  # 60 units, 12 treated whose errors have 3 times the controls' standard
  # deviation, no effect. Permuting pools noisy and quiet units, so the raw
  # estimate's permutation distribution is too narrow (its variance about
  # 1/2.8 of the estimate's); the studentised statistic is asymptotically
  # pivotal. 19 random permutations: an exact test rejects (p = 1/20) with
  # probability 0.05. The |estimate| p-value is computed by hand from the
  # same draws (the rule of the "estimate" statistic, checked above).
  set.seed(2024)
  reps <- 200; n <- 60; tr <- rep(c(1, 0), c(12, n - 12))
  p <- t(replicate(reps, {
    e <- matrix(stats::rnorm(2 * n), n) * ifelse(tr == 1, 3, 1)
    d <- data.frame(id = rep(seq_len(n), 2), time = rep(1:2, each = n), y = as.vector(stats::rnorm(n) + e),
                    D = as.numeric(rep(tr, 2) == 1 & rep(1:2, each = n) == 2))
    fit <- did_twfe(d, "y", "id", "time", "D")
    pt <- placebo_test(fit, "permutation", data = d, nperm = 19)
    hit <- sum(abs(pt$draws$estimate) >= abs(pt$estimate) - 1e-10 * max(1, abs(pt$estimate)))
    c(pt$p.value, (1 + hit) / (1 + nrow(pt$draws)))
  }))
  rej <- colMeans(p <= 0.05 + 1e-12)
  mcse <- sqrt(0.05 * 0.95 / reps)
  expect_true(abs(rej[1] - 0.05) < 3 * mcse, label = paste("t rejection", rej[1]))
  expect_true(rej[2] > 0.05 + 3 * mcse, label = paste("estimate rejection", rej[2]))
})

test_that("permutations without a statistic are left out, counted and warned about", {
  # the rule: a missing or infinite estimate, or (t) a missing, infinite or
  # zero standard error, gives no statistic
  st <- diffdiff:::dd_placebo_perm_stat
  est <- c(1, 2, NA, 3, 0.5, Inf); se <- c(1, 0, 1, NA, 0.25, 1)
  expect_identical(st(est, se, "t"), c(1, NA, NA, NA, 2, NA))
  expect_identical(st(est, se, "estimate"), c(1, 2, NA, 3, 0.5, NA))
  pp <- diffdiff:::dd_placebo_perm_p
  expect_identical(pp(1.5, c(1, NA, NA, NA, 2, NA), exact = FALSE), (1 + 1) / (1 + 2))
  expect_identical(pp(1.5, c(1, NA, 2, -3), exact = TRUE), 2 / 3)
  # through placebo_test(): the draws' standard errors knocked out for two
  # permutations (no estimator gives such draws reliably on small data)
  d <- pl_het()
  fit <- suppressWarnings(did_twfe(d, "y", "id", "time", "D"))
  ns <- asNamespace("diffdiff")
  orig <- get("dd_placebo_draw", ns)
  k <- 0L
  unlockBinding("dd_placebo_draw", ns)
  assign("dd_placebo_draw", function(...) { k <<- k + 1L; r <- orig(...); if (k %in% c(3L, 7L)) r[2] <- NA; r }, ns)
  on.exit({ assign("dd_placebo_draw", orig, ns); lockBinding("dd_placebo_draw", ns) }, add = TRUE)
  expect_warning(pt <- placebo_test(fit, "permutation", data = d, nperm = 28),
                 "2 of 28 permutations gave no t statistic .* left out of the p-value")
  expect_identical(pt$n_no_statistic, 2L)
  expect_identical(nrow(pt$draws), 28L)
  expect_true(all(is.na(pt$draws$statistic[c(3, 7)])))
  s <- pt$draws$statistic[-c(3, 7)]
  expect_equal(pt$p.value, mean(abs(s) >= abs(pt$observed_statistic) - 1e-10 * max(1, abs(pt$observed_statistic))))
  expect_output(print(pt), "2 permutation\\(s\\) gave no statistic and were left out of the p-value \\(26 used\\)")
  # every draw without a statistic: an error, not a p-value
  k <- 0L
  assign("dd_placebo_draw", function(...) { r <- orig(...); r[2] <- NA; r }, ns)
  expect_error(placebo_test(fit, "permutation", data = d, nperm = 28), "none of the 28 permutations that ran gave a t statistic")
  # the group placebo: a draw without a p-value leaves the rejection rate
  # (it was dropped silently by na.rm before)
  dg <- pl_data(n = 60)
  fg <- did_cs(dg, "y", "id", "time", "first_treat", nboot = 0)
  k <- 0L
  assign("dd_placebo_draw", function(...) { k <<- k + 1L; r <- orig(...); if (k == 2L) r[2:3] <- NA; r }, ns)
  set.seed(9)
  expect_warning(pg <- placebo_test(fg, "group", data = dg, ndraws = 4, n_treated = 5),
                 "1 of 4 draws gave no p-value \\(no standard error\\) and were left out of the rejection rate")
  expect_identical(pg$n_no_statistic, 1L)
  expect_equal(pg$rejection_rate, mean(pg$draws$p.value[-2] < 0.05))
  expect_output(print(pg), "1 draw\\(s\\) gave no p-value and were left out of the rejection rate")
})

test_that("timing placebo equals the fit on the shifted pre-period data", {
  d <- pl_data(n = 50, T = 7)
  # cohorts
  fit <- did_cs(d, "y", "id", "time", "first_treat", nboot = 0)
  gl <- sort(unique(d$first_treat[d$first_treat > 0]))
  pt <- placebo_test(fit, "timing", data = d, shift = 2)
  cut <- max(gl)
  x <- d[d$time < cut & !(d$first_treat > 0 & d$first_treat < cut), ]
  x$first_treat[x$first_treat > 0] <- x$first_treat[x$first_treat > 0] - 2
  slow <- did_cs(x, "y", "id", "time", "first_treat", nboot = 0)
  expect_equal(pt$estimate, pl_stat(slow), tolerance = 1e-12)
  expect_equal(pt$std.error, aggregate(slow, "simple")$coeftable$std.error[1], tolerance = 1e-12)
  expect_identical(pt$cutoff, cut)
  # an earlier cutoff: the later cohort moved past it serves as a comparison
  pt2 <- placebo_test(fit, "timing", data = d, cutoff = gl[2], shift = 1)
  x <- d[d$time < gl[2] & !(d$first_treat > 0 & d$first_treat < gl[2]), ]
  x$first_treat[x$first_treat > 0] <- x$first_treat[x$first_treat > 0] - 1
  x$first_treat[x$first_treat >= gl[2]] <- 0
  expect_equal(pt2$estimate, pl_stat(did_cs(x, "y", "id", "time", "first_treat", nboot = 0)), tolerance = 1e-12)
  # did_twfe with an indicator: the same rows, D rebuilt
  tw <- did_twfe(d, "y", "id", "time", "D")
  pt3 <- placebo_test(tw, "timing", data = d)
  x <- d[d$time < cut & !(d$first_treat > 0 & d$first_treat < cut), ]
  x$D <- as.integer(x$first_treat > 0 & x$time >= x$first_treat - 1)
  expect_equal(pt3$estimate, did_twfe(x, "y", "id", "time", "D")$coeftable$estimate, tolerance = 1e-12)
})

test_that("leave-one-out by unit and by cohort equal fits without them", {
  d <- pl_data(n = 30)
  fit <- did_sa(d, "y", "id", "time", "first_treat")
  lo <- placebo_test(fit, "leave_one_out", data = d)
  expect_identical(nrow(lo$draws), sum(pl_G(d) > 0))
  for (j in c(1, nrow(lo$draws))) {
    x <- d[d$id != lo$draws$left_out[j], ]
    expect_equal(lo$draws$estimate[j], pl_stat(did_sa(x, "y", "id", "time", "first_treat")), tolerance = 1e-12)
  }
  lc <- placebo_test(fit, "leave_one_out", data = d, by = "cohort")
  x <- d[d$first_treat != lc$draws$left_out[1], ]
  expect_equal(lc$draws$estimate[1], pl_stat(did_sa(x, "y", "id", "time", "first_treat")), tolerance = 1e-12)
})

test_that("group placebo: fake treated never-treated units, reproducible, each draw a fresh fit", {
  d <- pl_data(n = 60)
  fit <- did_cs(d, "y", "id", "time", "first_treat", nboot = 0)
  G <- pl_G(d)
  ctrl <- which(G == 0); gt <- G[G > 0]
  set.seed(9); a <- placebo_test(fit, "group", data = d, ndraws = 3, n_treated = 5)
  set.seed(9); b <- placebo_test(fit, "group", data = d, ndraws = 3, n_treated = 5)
  expect_identical(a$draws, b$draws)
  set.seed(9)
  fake <- ctrl[sample.int(length(ctrl), 5)]
  dates <- gt[sample.int(length(gt), 5)]
  g <- numeric(length(G)); g[fake] <- dates
  x <- pl_assign(d, g)[pl_assign(d, g)$id %in% unique(d$id)[G == 0], ]
  expect_equal(a$draws$estimate[1], pl_stat(suppressWarnings(did_cs(x, "y", "id", "time", "first_treat", nboot = 0))), tolerance = 1e-12)
  expect_equal(a$rejection_rate, mean(a$draws$p.value < 0.05))
})

test_that("placebo_test(): bad input", {
  d <- pl_data(n = 30)
  d0 <- d
  fit <- did_cs(d, "y", "id", "time", "first_treat", nboot = 0)
  expect_error(placebo_test(1), "`fit` must be a fit")
  expect_error(placebo_test(fit, "bogus", data = d), "type")
  expect_error(placebo_test(aggregate(fit, "simple"), data = d), "aggregate\\(\\)")
  expect_error(placebo_test(fit, data = d, term = "nope"), "`term` = \"nope\"")
  # placebo dates that leave no pre-period
  expect_error(placebo_test(fit, "timing", data = d, shift = 4), "leave no pre-period")
  expect_error(placebo_test(fit, "timing", data = d, cutoff = 2), "`cutoff` = 2 leaves 1 period")
  expect_error(placebo_test(fit, "timing", data = d, cutoff = 99), "`cutoff` must be one period")
  expect_error(placebo_test(fit, "timing", data = d, shift = 0), "shift")
  expect_error(placebo_test(fit, "permutation", data = d, nperm = 0), "nperm")
  expect_error(placebo_test(fit, "permutation", data = d, nperm = 5, statistic = "foo"),
               "`statistic` must be one of \"t\", \"estimate\"; got \"foo\"")
  expect_error(placebo_test(fit, "permutation", data = d, nperm = 5, statistic = 1), "`statistic` must be one of")
  expect_error(placebo_test(fit, "group", data = d, statistic = "estimate"),
               "`statistic` = \"estimate\" applies to type = \"permutation\" only; type = \"group\"")
  # the t statistic needs the observed assignment's standard error: did_trop
  # with nboot = 0 has none
  set.seed(4)
  dt <- dd_sim_factor(n_units = 12, n_periods = 6, n_treated = 3)
  tf <- did_trop(dt, "y", "id", "time", "D", lambda_time = 0.5, lambda_unit = 0.5, lambda_nn = Inf, nboot = 0)
  expect_error(placebo_test(tf, "permutation", data = dt, nperm = 3),
               "`statistic` = \"t\" needs the standard error of the observed assignment")
  expect_error(placebo_test(fit, "group", data = d, n_treated = 1000), "`n_treated` = 1000 leaves no")
  # a treatment that switches off
  x <- d; x$D[x$id == x$id[x$D == 1][1] & x$time == max(x$time)] <- 0L
  tw <- did_twfe(x, "y", "id", "time", "D")
  expect_error(placebo_test(tw, "permutation", data = x, nperm = 5), "switches off again for unit .*placebo_test\\(\\) needs an absorbing treatment", class = "diffdiff_treatment_reversible")
  # unsupported estimators and settings
  f2 <- did_2x2(transform(d[d$time %in% 1:2, ], post = time == 2, tr = first_treat > 0), "y", "tr", "post")
  expect_error(placebo_test(f2), "did_2x2\\(\\), which placebo_test\\(\\) does not support")
  d$w <- 1; des <- survey_design(d, weights = "w")
  fs <- did_event(d, "y", "id", "time", "first_treat", survey = des)
  expect_error(placebo_test(fs, data = d), "survey design")
  expect_identical(d0, d[names(d0)])
})

test_that("timing placebo: refused with one fake-treated unit (naming a cutoff that works); counts printed; p-values as format.pval", {
  castle <- read.csv(system.file("extdata", "castle.csv", package = "diffdiff"))
  cs <- suppressWarnings(did_cs(castle, "l_homicide", "sid", "year", "effyear", nboot = 0))
  # the default cutoff (2009, the last adoption) leaves the one state adopting in 2009
  expect_error(placebo_test(cs, type = "timing"), "1 fake-treated unit.*`cutoff` = 2006 gives 13",
               class = "diffdiff_placebo_too_few")
  p <- suppressWarnings(placebo_test(cs, type = "timing", cutoff = 2006))
  # 13 states adopt in 2006 (fake date 2005); 29 never treated + 7 adopting 2007-2009 are comparisons
  expect_identical(p$n_fake_treated, 13L)
  expect_identical(p$n_comparison, 36L)
  expect_null(p$n_fake_clusters)
  out <- utils::capture.output(print(p))
  expect_true(any(grepl("Fake-treated units: 13; comparison units: 36", out, fixed = TRUE)))
  expect_true(any(grepl(paste0("p-value ", format.pval(p$p.value, digits = 4)), out, fixed = TRUE)))
  # a clustered fit counts clusters: 4 regions, say; one fake-treated region is refused
  castle$region <- (castle$sid - 1) %/% 13
  csc <- suppressWarnings(did_cs(castle, "l_homicide", "sid", "year", "effyear", nboot = 0, cluster = "region"))
  pc <- suppressWarnings(placebo_test(csc, type = "timing", cutoff = 2006))
  adopters <- unique(castle$sid[castle$effyear == 2006])
  expect_identical(pc$n_fake_clusters, length(unique((adopters - 1) %/% 13)))
  expect_true(any(grepl(sprintf("Fake-treated units: 13 in %d clusters", pc$n_fake_clusters),
                        utils::capture.output(print(pc)), fixed = TRUE)))
  one <- castle$sid[castle$effyear == 2007]
  castle$reg2 <- ifelse(castle$sid %in% one, 99, castle$region)
  cs2 <- suppressWarnings(did_cs(castle, "l_homicide", "sid", "year", "effyear", nboot = 0, cluster = "reg2"))
  expect_error(placebo_test(cs2, type = "timing", cutoff = 2007), "1 fake-treated cluster")
  # a tiny p-value prints as format.pval prints it, not as 0.00000000003757
  x <- p; x$p.value <- 3.757e-11
  expect_true(any(grepl("p-value 3.757e-11", utils::capture.output(print(x)), fixed = TRUE)))
})
