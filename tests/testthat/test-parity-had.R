# did_had() against the live DIDHAD 2.0.0 (CRAN; with nprobust 1.0.0 and
# YatchewTest 1.1.1), installed by tools/install-deps.sh. Tolerances: 1e-8
# for estimates, standard errors, interval ends and bandwidths (the issue
# asks 1e-6), 1e-8 for the QUG and Yatchew statistics; counts exact.
# DIDHAD's `N` column is the largest group number in the horizon sample, not
# a count (documented), so it is not compared.

had_sim <- function(G = 400, TT = 6, F = 4, stay = 0.05, seed = 5, round_to = NULL, growth = 0.1) {
  set.seed(seed)
  dose <- ifelse(runif(G) < stay, 0, rexp(G, 2))
  if (!is.null(round_to)) dose <- round(dose, round_to)
  d <- expand.grid(t = 1:TT, g = 1:G)[, c("g", "t")]
  d$D <- ifelse(d$t >= F, dose[d$g] * (1 + growth * (d$t - F)), 0)
  d$y <- rnorm(G)[d$g] + 0.3 * d$t + rnorm(G, sd = 0.2)[d$g] * d$t + d$D * (1 + 0.5 * dose[d$g]) + rnorm(nrow(d))
  d
}

had_peer <- function(d, y, g, t, D, ...) {
  r <- suppressMessages(DIDHAD::did_had(d, y, g, t, D, graph_off = TRUE, ...))$results
  r
}

expect_had_equal <- function(fit, r, label) {
  m <- r$resmat
  tab <- fit$coeftable
  ne <- r$res.effects; np <- r$res.placebo
  expect_identical(tab$term, paste0("event::", c(seq_len(ne) - 1, if (np) -seq_len(np) - 1)), label = label)
  expect_equal(tab$estimate, unname(m[, "Estimate"]), tolerance = 1e-8, label = paste(label, "estimate"))
  expect_equal(tab$std.error, unname(m[, "SE"]), tolerance = 1e-8, label = paste(label, "SE"))
  expect_equal(tab$conf.low, unname(m[, "LB.CI"]), tolerance = 1e-8, label = paste(label, "LB"))
  expect_equal(tab$conf.high, unname(m[, "UB.CI"]), tolerance = 1e-8, label = paste(label, "UB"))
  expect_equal(tab$bw, unname(m[, "BW"]), tolerance = 1e-8, label = paste(label, "BW"))
  expect_identical(as.numeric(tab$n_bw), unname(m[, "N.BW"]), label = paste(label, "N.BW"))
  expect_equal(fit$tests$qug_statistic, unname(m[, "T"]), tolerance = 1e-8, label = paste(label, "QUG T"))
  expect_equal(fit$tests$qug_p.value, unname(m[, "p.val"]), tolerance = 1e-8, label = paste(label, "QUG p"))
  if (!is.null(r$yatchew_test)) {
    yt <- r$yatchew_test
    expect_equal(fit$tests$yatchew_sigma2_lin, unname(yt[, 1]), tolerance = 1e-8, label = paste(label, "Y lin"))
    expect_equal(fit$tests$yatchew_sigma2_diff, unname(yt[, 2]), tolerance = 1e-8, label = paste(label, "Y diff"))
    expect_equal(fit$tests$yatchew_statistic, unname(yt[, 3]), tolerance = 1e-8, label = paste(label, "Y T"))
    expect_equal(fit$tests$yatchew_p.value, unname(yt[, 4]), tolerance = 1e-8, label = paste(label, "Y p"))
    expect_identical(as.numeric(fit$tests$yatchew_n), unname(yt[, 5]), label = paste(label, "Y N"))
  }
}

test_that("did_had equals DIDHAD: effects, placebos, Yatchew, stayers", {
  need_peer("DIDHAD")
  d <- had_sim()
  d0 <- d
  r <- had_peer(d, "y", "g", "t", "D", effects = 3, placebo = 2, yatchew = TRUE)
  f <- did_had(d, "y", "g", "t", "D", effects = 3, placebo = 2, yatchew = TRUE)
  expect_identical(d, d0)
  expect_had_equal(f, r, "base")
  expect_identical(f$n_stayers, r$n_stayers)
  expect_identical(as.numeric(f$coeftable$n), rep(400, 5))
  # the conventional estimate is outside the bias-corrected interval somewhere
  # in this design only by chance; the interval's centre is estimate_bc
  expect_equal((f$coeftable$conf.low + f$coeftable$conf.high) / 2, f$coeftable$estimate_bc, tolerance = 1e-12)
})

test_that("did_had equals DIDHAD for every kernel and bandwidth rule", {
  need_peer("DIDHAD")
  d <- had_sim(G = 250, TT = 4, F = 3, seed = 11)
  for (k in c("epa", "tri", "uni", "gau")) for (bw in c("mse-dpi", "imse-dpi", "ce-rot", "mse-rot", "imse-rot")) {
    r <- had_peer(d, "y", "g", "t", "D", effects = 2, placebo = 1, kernel = k, bw_method = bw)
    f <- did_had(d, "y", "g", "t", "D", effects = 2, placebo = 1, kernel = k, bwselect = bw)
    expect_had_equal(f, r, paste(k, bw))
  }
})

test_that("did_had equals DIDHAD with trends_lin and dynamic, and truncates as it does", {
  need_peer("DIDHAD")
  d <- had_sim(G = 300, TT = 7, F = 4, seed = 3)
  for (cfg in list(c(TRUE, FALSE), c(FALSE, TRUE), c(TRUE, TRUE))) {
    r <- had_peer(d, "y", "g", "t", "D", effects = 9, placebo = 3, trends_lin = cfg[1], dynamic = cfg[2],
                  yatchew = TRUE, kernel = "tri")
    f <- suppressWarnings(did_had(d, "y", "g", "t", "D", effects = 9, placebo = 3, trends_lin = cfg[1],
                                  dynamic = cfg[2], yatchew = TRUE, kernel = "tri"))
    expect_had_equal(f, r, paste(cfg, collapse = "/"))
    expect_true(any(grepl("9 effect\\(s\\) requested; the data allow 4", f$notes)))
  }
})

test_that("did_had equals DIDHAD on an unbalanced panel: missing rows and outcomes, ties, labels, gapped years", {
  need_peer("DIDHAD")
  d <- had_sim(G = 400, TT = 6, F = 4, stay = 0.1, seed = 8, round_to = 2, growth = 0)
  set.seed(9)
  d <- d[-sample(nrow(d), 60), ]
  d$y[sample(nrow(d), 30)] <- NA
  d$g <- sprintf("unit-%03d", d$g)
  d$t <- 2000 + 2 * d$t
  r <- had_peer(d, "y", "g", "t", "D", effects = 3, placebo = 2, yatchew = TRUE)
  f <- suppressMessages(did_had(d, "y", "g", "t", "D", effects = 3, placebo = 2, yatchew = TRUE))
  expect_had_equal(f, r, "unbalanced")
  expect_true(any(is.infinite(f$tests$qug_statistic)))      # tied smallest positive doses
  expect_identical(f$adoption, 2008)
  # n counts the groups with both an outcome change and a dose
  expect_true(all(f$coeftable$n < 400))
})

test_that("did_had's covariance comes from the influence functions and its bootstrap agrees", {
  d <- had_sim()
  f <- did_had(d, "y", "g", "t", "D", effects = 3, placebo = 2)
  V <- vcov(f)
  expect_equal(sqrt(diag(V)), stats::setNames(f$coeftable$std.error, f$coeftable$term), tolerance = 1e-12)
  expect_equal(V, crossprod(f$inf), tolerance = 1e-12, ignore_attr = TRUE)
  expect_true(all(V[upper.tri(V)] != 0))
  # confint() is centred on the bias-corrected estimate, as the table
  ci <- confint(f)
  expect_equal(unname(ci[, 1]), f$coeftable$conf.low, tolerance = 1e-12)
  expect_equal(unname(ci[, 2]), f$coeftable$conf.high, tolerance = 1e-12)
  expect_equal(unname(rowMeans(confint(f, level = 0.8))), f$coeftable$estimate_bc, tolerance = 1e-12)
  # the typed event study holds the bias-corrected estimates with V
  es <- f$event_study
  expect_equal(es$event, c(-3, -2, 0, 1, 2))
  expect_equal(es$estimate, f$coeftable$estimate_bc[match(es$term, f$coeftable$term)], tolerance = 0)
  set.seed(1)
  fb <- did_had(d, "y", "g", "t", "D", effects = 3, placebo = 2, nboot = 2000, cband = TRUE)
  expect_identical(fb$coeftable$estimate, f$coeftable$estimate)
  ratio <- fb$coeftable$std.error / f$coeftable$std.error
  expect_true(all(abs(ratio - 1) < 0.1), label = paste(format(ratio), collapse = " "))
  expect_true(fb$crit > stats::qnorm(0.975) && fb$crit < 3.5)
  expect_equal((fb$coeftable$cband.low + fb$coeftable$cband.high) / 2, fb$coeftable$estimate_bc, tolerance = 1e-12)
  expect_s3_class(honest_did(f, type = "SD", M = c(0, 0.1)), "honest_did")
})

test_that("did_had: bad input gets errors naming the argument and value", {
  d <- had_sim(G = 100)
  expect_error(did_had(d, "y", "g", "t", "D", kernel = "triangular"), "`kernel`")
  expect_error(did_had(d, "y", "g", "t", "D", bwselect = "ce-dpi"), "ce-dpi")
  expect_error(did_had(d, "y", "g", "t", "D", effects = 0), "`effects`")
  dn <- d; dn$D[dn$g == 3 & dn$t >= 4] <- -0.5
  expect_error(did_had(dn, "y", "g", "t", "D"), "negative doses \\(-0.5")
  ds <- d; ds$D[ds$g == 7 & ds$t == 4] <- 0          # group 7 adopts at 5
  expect_error(did_had(ds, "y", "g", "t", "D"), "g 7 at t = 5")
  dp <- d; dp$D[dp$g == 2 & dp$t <= 3] <- 1
  expect_error(did_had(dp, "y", "g", "t", "D"), "not 0 before adoption.*g 2")
  d0 <- d; d0$D <- 0
  expect_error(did_had(d0, "y", "g", "t", "D"), "never changes")
  d2 <- d; d2$D <- ifelse(d2$t >= 4, (d2$g %% 2) + 1, 0)
  expect_error(did_had(d2, "y", "g", "t", "D"), "effect 1 .* 2 distinct dose")
  expect_error(did_had(had_sim(G = 100, F = 2), "y", "g", "t", "D", trends_lin = TRUE), "trends_lin")
  expect_error(did_had(d, "y", "g", "t", "nodose"), "dname")
  dc <- d; dc$D <- as.character(dc$D)
  expect_error(did_had(dc, "y", "g", "t", "D"), "dname")
  # doses far from zero: the QUG test rejects and did_had says so
  # (with stayers, or ties at the smallest dose, no warning)
  dq <- had_sim(G = 100, stay = 0); dq$D <- ifelse(dq$t >= 4, 0.3 + dq$D, 0)
  expect_warning(did_had(dq, "y", "g", "t", "D"), "quasi-untreated-group test rejects .* effect\\(s\\) 1")
  expect_no_warning(did_had(had_sim(G = 100), "y", "g", "t", "D"))
  df <- had_sim(G = 100, stay = 0); df$D <- ifelse(df$t >= 4, 50 + df$D, 0)
  expect_error(suppressWarnings(did_had(df, "y", "g", "t", "D")), "singular.*smallest is 50")
})

test_that("did_had: a dose that falls back to 0 after adoption is an error naming the group and periods", {
  # outside the design (dose 0 for all up to F, then >= 0 and staying on):
  # DIDHAD 2.0.0 returns numbers, counting such a group as untreated at the
  # horizons where its dose is 0 (before the fix did_had did the same, silently)
  d <- had_sim(G = 100, stay = 0.1)
  g5 <- unique(d$g[d$D > 0])[1:3]
  dz <- d; dz$D[dz$g %in% g5 & dz$t == 5] <- 0
  e <- tryCatch(did_had(dz, "y", "g", "t", "D", effects = 3), error = function(e) e)
  expect_s3_class(e, "diffdiff_treatment_reversible")
  expect_match(conditionMessage(e), sprintf(
    '`dname` = "D" falls back to 0 after being positive for 3 group\\(s\\) \\(e.g. g %d: dose [0-9.]+ at t = 4, 0 at t = 5\\)',
    g5[1]))
  # the same after a missing dose in between, and at the last period only
  dm <- d; dm$D[dm$g == g5[1] & dm$t == 5] <- NA; dm$D[dm$g == g5[1] & dm$t == 6] <- 0
  expect_error(suppressMessages(did_had(dm, "y", "g", "t", "D", effects = 3)), "1 group\\(s\\) .*dose [0-9.]+ at t = 4, 0 at t = 6")
  # did_check() reports the same problem with the same code
  expect_true("TREATMENT_REVERSIBLE" %in% did_check(dz, "y", "g", "t", dname = "D")$findings$code)
  # doses that change but stay positive, and stayers at 0 throughout, remain in the design
  expect_s3_class(did_had(d, "y", "g", "t", "D", effects = 3), c("did_had", "dd_fit"), exact = TRUE)
})

test_that("did_had's Stute tests: per-horizon statistics as StuteTest, joint tests, reproducible", {
  need_peer("StuteTest")
  d <- had_sim(G = 300, seed = 12)
  set.seed(5)
  f <- did_had(d, "y", "g", "t", "D", effects = 2, placebo = 2, stute = TRUE, stute_nboot = 299)
  ds <- d[sample(nrow(d)), ]
  set.seed(5)
  f2 <- did_had(ds, "y", "g", "t", "D", effects = 2, placebo = 2, stute = TRUE, stute_nboot = 299)
  expect_identical(f2$tests$stute_p.value, f$tests$stute_p.value)      # row order does not matter
  Y <- function(t) d$y[d$t == t][order(d$g[d$t == t])]
  X <- function(t) d$D[d$t == t][order(d$g[d$t == t])]
  for (k in 1:4) {
    pl <- k > 2; l <- if (pl) k - 2 else k
    dy <- if (pl) Y(3 - l) - Y(3) else Y(3 + l) - Y(3)
    r <- StuteTest::stute_test(data.frame(Y = dy, D = X(3 + l)), "Y", "D", order = if (pl) 0 else 1, brep = 10)
    expect_equal(f$tests$stute_statistic[k], r$results[1, "t stat"], tolerance = 1e-10, label = k)
  }
  # the joint statistics are the sums; the p-values are shares of 299 draws
  expect_equal(f$stute_joint$statistic, c(sum(f$tests$stute_statistic[1:2]), sum(f$tests$stute_statistic[3:4])),
               tolerance = 1e-12)
  expect_true(all(abs(f$stute_joint$p.value * 299 - round(f$stute_joint$p.value * 299)) < 1e-9))
  # nonlinear effects (the simulation's d^2 term) are detected, placebos pass
  expect_lt(f$stute_joint$p.value[1], 0.05)
  expect_gt(f$stute_joint$p.value[2], 0.05)
  expect_error(did_had(d, "y", "g", "t", "D", stute = TRUE, stute_nboot = 0), "`stute_nboot`")
  expect_output(print(f), "Joint Stute tests")
})

test_that("did_had's Stute bootstrap draws matrix(runif(nG * B), nG, B) by group rank, block by block", {
  # The kernel draws the uniforms a block of columns at a time (about 2^20
  # values: 349 columns at 3000 groups, so 1000 draws take three blocks and
  # several interrupt chunks). Reference: the uniforms drawn in R at once
  # and handed to dd_stute(), whose bootstrap given the uniforms equals
  # StuteTest 1.0.2 (test-had-blocks.R), with the row of each group the rank
  # of its identifier; the generator's state afterwards is that of the R draw.
  d <- had_sim(G = 3000, seed = 21)
  d <- d[!(d$g %in% c(5, 17) & d$t == 6), ]              # group sets differ across horizons
  set.seed(3); d$g <- sample(3000)[d$g]                  # identifiers not in row order
  B <- 1000
  set.seed(9)
  f <- did_had(d, "y", "g", "t", "D", effects = 3, placebo = 2, stute = TRUE, stute_nboot = B)
  after <- .Random.seed
  set.seed(9)
  ids <- sort(unique(d$g))
  U <- matrix(runif(length(ids) * B), length(ids), B)
  expect_identical(.Random.seed, after)
  Y <- function(t) { dt <- d[d$t == t, ]; dt$y[match(ids, dt$g)] }
  X <- function(t) { dt <- d[d$t == t, ]; dt$D[match(ids, dt$g)] }
  hz <- c(1:3, -(1:2)); st <- numeric(5); bt <- matrix(0, B, 5)
  for (k in 1:5) {
    l <- abs(hz[k]); pl <- hz[k] < 0
    dy <- if (pl) Y(3 - l) - Y(3) else Y(3 + l) - Y(3)
    x <- X(3 + l)
    s <- which(!is.na(dy) & !is.na(x))
    r <- diffdiff:::dd_stute(dy[s], x[s], if (pl) 0L else 1L, U[s, , drop = FALSE])
    st[k] <- r$statistic; bt[, k] <- r$boot
    expect_identical(f$tests$stute_p.value[k], r$p.value, label = k)
  }
  expect_equal(f$tests$stute_statistic, st, tolerance = 1e-12)
  expect_identical(f$stute_joint$p.value,
                   c(mean(bt[, 1] + bt[, 2] + bt[, 3] > sum(st[1:3])), mean(bt[, 4] + bt[, 5] > sum(st[4:5]))))
})

test_that("did_had's Stute bootstrap does not hold a groups x draws matrix (memory O(G + B), not O(G B))", {
  # before the fix the uniforms, their multipliers and the bootstrap
  # residuals were nG x B matrices: about 9 such matrices at the peak
  d <- had_sim(G = 1000, seed = 2)
  B <- 4000
  v0 <- gc(reset = TRUE)["Vcells", "used"]
  set.seed(1)
  f <- did_had(d, "y", "g", "t", "D", effects = 3, placebo = 2, stute = TRUE, stute_nboot = B)
  peak <- gc()["Vcells", "max used"]
  expect_lt(peak - v0, 1000 * B)                         # less than one 1000 x 4000 double matrix
  expect_true(all(f$tests$stute_p.value >= 0 & f$tests$stute_p.value <= 1))
})

test_that("did_had equals DIDHAD at and across nprobust's 21-point floor (20, 21, 22 groups)", {
  need_peer("DIDHAD")
  for (G in 20:22) {
    d <- had_sim(G = G, TT = 4, F = 3, stay = 0, seed = G)
    r <- suppressWarnings(had_peer(d, "y", "g", "t", "D", effects = 2, placebo = 1))
    f <- did_had(d, "y", "g", "t", "D", effects = 2, placebo = 1)
    expect_had_equal(f, r, paste(G, "groups"))
  }
})

test_that("a call written for DIDHAD::did_had runs unchanged", {
  d <- had_sim(G = 200, seed = 4)
  a <- did_had(df = d, outcome = "y", group = "g", time = "t", treatment = "D", effects = 2, placebo = 1,
               level = 0.1, bw_method = "mse-rot", kernel = "tri", graph_off = TRUE)
  b <- did_had(d, "y", "g", "t", "D", effects = 2, placebo = 1, alpha = 0.1, bwselect = "mse-rot", kernel = "tri")
  expect_identical(a$coeftable, b$coeftable)
  expect_error(did_had(d, "y", "g", "t", "D", bandwidth = 2), "no argument `bandwidth`")
  expect_error(did_had(d, "y", "g", "t"), "`dname` \\(the dose column\\) is missing")
})

test_that("did_had fits have class did_had and print as diffdiff's, DIDHAD's results as DIDHAD's, in either load order", {
  need_peer("DIDHAD")
  skip_if_not_installed("callr")
  run <- function(first) callr::r(function(first, lib) {
    .libPaths(c(lib, .libPaths()))
    pk <- if (first == "DIDHAD") c("DIDHAD", "diffdiff") else c("diffdiff", "DIDHAD")
    suppressMessages(for (p in pk) library(p, character.only = TRUE))
    set.seed(1)
    G <- 60
    d <- expand.grid(t = 1:4, g = 1:G)[, c("g", "t")]
    dose <- stats::rexp(G)
    d$D <- ifelse(d$t >= 3, dose[d$g], 0)
    d$y <- stats::rnorm(nrow(d)) + d$D
    f <- diffdiff::did_had(d, "y", "g", "t", "D")
    r <- suppressMessages(DIDHAD::did_had(d, "y", "g", "t", "D", graph_off = TRUE))
    list(cls = class(f), ours = utils::capture.output(print(f)), ours_s = utils::capture.output(summary(f)),
         peer = utils::capture.output(print(r)))
  }, list(first, dirname(system.file(package = "diffdiff"))))
  for (first in c("DIDHAD", "diffdiff")) {
    o <- run(first)
    expect_identical(o$cls, c("did_had", "dd_fit"), info = first)
    expect_identical(o$ours[1], "Heterogeneous adoption design (did_had)", info = first)
    expect_identical(o$ours_s[1], "Heterogeneous adoption design (did_had)", info = first)
    expect_true(any(grepl("Effect Estimates", o$peer)), info = first)
    expect_false(any(grepl("Heterogeneous adoption design", o$peer)), info = first)
  }
})
