# honest_did() against HonestDiD. HonestDiD cannot be installed on R 4.2.2 (its
# optimisation stack, CVXR, is not on CRAN for this R), so the comparison is
# with published numbers: ../shared/reference/README.md of this project, which
# lists intervals computed by HonestDiD 0.2.x on its BC and LW event studies
# (shipped here as inst/extdata/honestdid_*_event_study.txt). Where a number
# below carries more digits than that README, it is the same result at full
# precision from HonestDiD's stored vignette results (data/VignetteResults.rda
# in the HonestDiD repository at commit fdadae3, version 0.2.6).

read_es <- function(name)
  read_event_study(system.file("extdata", paste0("honestdid_", name, "_event_study.txt"),
                                             package = "diffdiff"))

# largest absolute difference below tol (the references are rounded to the digits printed)
expect_close <- function(actual, expected, tol) {
  expect_equal(length(actual), length(expected))
  expect_lt(max(abs(actual - expected)), tol)
}

bc <- read_es("bc")
lw <- read_es("lw")
l17 <- replace(numeric(23), 17, 1)   # HonestDiD's basisVector(17, 23)

test_that("the event-study files parse to the documented sizes", {
  expect_equal(c(bc$K, bc$P, dim(bc$S)), c(4, 4, 8, 8))
  expect_equal(c(lw$K, lw$P, dim(lw$S)), c(9, 23, 32, 32))
})

test_that("BC original interval equals constructOriginalCS (reference [0.1587749, 0.2331473])", {
  h <- honest_did(betahat = bc$b, sigma = bc$S, num_pre = bc$K, type = "SD", M = 0, breakdown = FALSE)
  expect_close(unname(h$original), c(0.1587749, 0.2331473), 5e-8)
})

test_that("BC Delta^SDRM, C-LF, grid of 100 on [-1, 1] equals HonestDiD exactly", {
  # README block labelled "BC, relative magnitudes (DeltaRM), C-LF"; HonestDiD's vignette computes it with
  # createSensitivityResults_relativeMagnitudes(bound = "deviation from linear trend", ...), i.e. Delta^SDRM
  # (the stored tibble says Delta = "DeltaSDRM"). Endpoints are grid points -1 + i * 2/99.
  h <- honest_did(betahat = bc$b, sigma = bc$S, num_pre = bc$K, type = "SDRM", Mbar = seq(0, 2, by = 0.5),
                  grid_points = 100, grid_lb = -1, grid_ub = 1, breakdown = FALSE)
  ref_lb <- c(0.2121, 0.1515, 0.0707, -0.0101, -0.1111)
  ref_ub <- c(0.3131, 0.3939, 0.4949, 0.5960, 0.6970)
  expect_close(h$results$lb, ref_lb, 5e-5)
  expect_close(h$results$ub, ref_ub, 5e-5)
  # full precision: the same grid points
  expect_close(h$results$lb, -1 + c(60, 57, 53, 49, 44) * 2 / 99, 1e-12)
  expect_close(h$results$ub, -1 + c(65, 69, 74, 79, 84) * 2 / 99, 1e-12)
  expect_true(all(diff(h$results$lb) < 0) && all(diff(h$results$ub) > 0))   # nested in Mbar
})

test_that("BC Delta^SDNB (negative bias), default C-F, equals HonestDiD", {
  h <- honest_did(betahat = bc$b, sigma = bc$S, num_pre = bc$K, type = "SD", sign = "negative",
                  M = c(0, 0.1, 0.2, 0.3), breakdown = FALSE)
  expect_identical(h$method, "C-F")
  r <- h$results
  # README: [0.20586, 0.23422], [0.16411, 0.41835], [0.16412, 0.51847], [0.16420, 0.64684]
  expect_close(r$lb, c(0.20586, 0.16411, 0.16412, 0.16420), 5e-6)
  expect_close(r$ub[1:3], c(0.23422, 0.41835, 0.51847), 5e-6)
  # full precision (VignetteResults): M = 0.1 and 0.2 identical grid points
  expect_close(c(r$lb[2], r$ub[2], r$lb[3], r$ub[3], r$lb[4]),
               c(0.1641096769, 0.4183529070, 0.1641167324, 0.5184691025, 0.1642031625), 1e-9)
  # M = 0: HonestDiD's grid is the alpha/10 FLCI, whose centre ECOS returns off the exact minimum-variance
  # estimator by +8.3e-7 (0.2058558924 there); the grid, and so both ends, move by that amount.
  expect_close(r$lb[1], 0.2058558924, 1e-6)
  # M = 0.3: HonestDiD's upper end 0.64684 is the last grid point, i.e. the upper end of the alpha/10 FLCI,
  # where the first-stage test sits exactly on its boundary and R's decision is rounding. diffdiff rejects
  # the two boundary points of that grid always (deliberate); its interval ends at the largest interior
  # accepted point instead.
  fl <- diffdiff:::dd_flci(bc$b, bc$S, bc$K, bc$P, c(1, 0, 0, 0), 0.3, 0.005)
  expect_close(fl$center + fl$half, 0.64684, 5e-6)
  expect_lt(r$ub[4], 0.64684 - 0.02)
})

test_that("LW Delta^SD FLCI for l = e17: half-lengths equal HonestDiD's, centres within ECOS's noise", {
  ref <- rbind(c(3.9054468895, 8.374721276), c(-0.0829056139, 8.190835656), c(-14.1037747077, 5.384253362))
  h <- honest_did(betahat = lw$b, sigma = lw$S, num_pre = lw$K, type = "SD", M = c(0, 0.01, 0.04),
                  l_vec = l17, breakdown = FALSE)
  half <- (h$results$ub - h$results$lb) / 2
  ref_half <- (ref[, 2] - ref[, 1]) / 2
  expect_lt(max(abs(half / ref_half - 1)), 1e-7)
  # HonestDiD solves the bias problem with ECOS; its solution is accurate to ~1e-6 in h, and the centre moves
  # ~20x that. At M = 0 the feasible set is a single point (the minimum-variance estimator), which ECOS
  # misses by 1.97e-3 in the centre.
  cen <- (h$results$ub + h$results$lb) / 2
  ref_cen <- (ref[, 2] + ref[, 1]) / 2
  expect_lt(abs(cen[1] - ref_cen[1]), 2.5e-3)
  expect_lt(max(abs(cen[2:3] - ref_cen[2:3])), 5e-5)
  # the M = 0 centre is exactly the minimum-variance trend-orthogonal estimator (closed form, here)
  K <- lw$K; P <- lw$P
  D <- diag(K); D[cbind(2:K, 1:(K - 1))] <- -1
  Q <- t(D) %*% lw$S[1:K, 1:K] %*% D
  q <- drop(t(D) %*% lw$S[1:K, K + 1:P] %*% l17)
  w <- solve(rbind(cbind(2 * Q, 1), c(rep(1, K), 0)), c(-2 * q, 17))[1:K]
  expect_equal(cen[1], sum(drop(D %*% w) * lw$b[1:K]) + lw$b[K + 17], tolerance = 1e-10)
  expect_close(h$results$lb, c(3.905447, -0.082906, -14.103775), 2.5e-3)
})

test_that("LW Delta^SDD (monotone decreasing), C-F, M = 0: HonestDiD's interval moved by its ECOS centre shift", {
  h <- honest_did(betahat = lw$b, sigma = lw$S, num_pre = lw$K, type = "SD", monotonicity = "decreasing",
                  M = 0, l_vec = l17, breakdown = FALSE)
  # reference [2.953460, 9.109366]. The C-F grid is the alpha/10 FLCI at M = 0, centred at the minimum-variance
  # estimator, which HonestDiD's ECOS puts at 6.140084083 (the reference's M = 0 FLCI centre, above) and
  # diffdiff at the exact 6.142056694: the grid, and both ends, shift by that difference.
  shift <- (h$results$lb[1] + 0) - 2.953460
  fl <- diffdiff:::dd_flci(lw$b, lw$S, lw$K, lw$P, l17, 0, 0.005)
  ecos_shift <- fl$center - (3.9054468895 + 8.374721276) / 2
  expect_close(c(h$results$lb, h$results$ub) - c(2.953460, 9.109366), rep(ecos_shift, 2), 2e-6)
  expect_gt(shift, 0)
})

test_that("the FLCI estimator is orthogonal to linear trends and its bias is worst case", {
  st <- diffdiff:::dd_flci_setup(lw$b, lw$S, lw$K, lw$P, l17)
  for (M in c(0.01, 0.04)) {
    fl <- diffdiff:::dd_flci(lw$b, lw$S, lw$K, lw$P, l17, M, 0.05)
    ev <- c(-(lw$K:1), 1:lw$P)
    expect_lt(abs(sum(ev * fl$vec)), 1e-9 * sum(abs(ev * fl$vec)))
    # its variance is h^2
    expect_equal(drop(crossprod(fl$vec, lw$S %*% fl$vec)), fl$h^2, tolerance = 1e-9)
    # worst-case bias over Delta^SD(M) by LP (max v'delta s.t. |second differences| <= M, delta_0 = 0),
    # equal to the QP's bias
    A <- diffdiff:::dd_A_SD(lw$K, lw$P)
    wb <- -.Call(diffdiff:::C_lp_max, A, -fl$vec, -rep(M, nrow(A)))
    expect_equal(wb, fl$bias, tolerance = 1e-8)
  }
  # the bias QP against a brute-force check: the dual value equals the primal at the recovered w
  for (h in seq(st$hMin * 1.01, st$h0 * 0.99, length.out = 5)) {
    B <- diffdiff:::dd_flci_bias(st, h)
    expect_equal(st$Cl + sum(abs(cumsum(B$w))), B$value, tolerance = 1e-10)
    expect_lte(st$V(B$w), h^2 * (1 + 1e-10))
    expect_equal(sum(B$w), 17, tolerance = 1e-12)
  }
})

test_that("the simulated folded-normal quantile equals R's quantile over the same draws", {
  z <- diffdiff:::dd_honest_draws()$z
  for (mu in c(0, 0.37, 2.5, -1.2, 10)) for (p in c(0.95, 0.995)) {
    expect_identical(diffdiff:::dd_qfold(p, mu), quantile(abs(z + mu), p, names = FALSE, type = 7))
  }
  # the draws are R's set.seed(0); rnorm(1e6) (HonestDiD's .qfoldednormal); Qhat_.95(0) = 1.96223866698157
  expect_equal(diffdiff:::dd_qfold(0.95, 0), 1.96223866698157, tolerance = 1e-14)
})

test_that("the fixed normal draws are generated only as far as needed, each a prefix of set.seed(0); rnorm(1e6)", {
  cache <- diffdiff:::dd_cache
  keep <- mget(c("hd", "hd_sorted", "zmat"), envir = cache, ifnotfound = list(NULL))
  on.exit(for (k in names(keep)) assign(k, keep[[k]], envir = cache))
  clear <- function() for (k in c("hd", "hd_sorted", "zmat")) assign(k, NULL, envir = cache)
  clear()
  a <- honest_did(betahat = bc$b, sigma = bc$S, num_pre = bc$K, type = "RM", Mbar = c(0.5, 1), grid_points = 200,
                  breakdown = FALSE)
  # the path: only the least-favourable draws were generated, not the 1e6
  expect_gt(length(cache$hd$z), 0)
  expect_lt(length(cache$hd$z), 1e6)
  expect_null(cache$hd_sorted)
  short <- cache$hd$z
  clear()
  z <- diffdiff:::dd_honest_draws(1e6)$z
  expect_length(z, 1e6)
  expect_identical(short, z[seq_along(short)])
  expect_identical(diffdiff:::dd_honest_draws(1000)$z, z[1:1000])
  # the same intervals with the full sample cached
  b <- honest_did(betahat = bc$b, sigma = bc$S, num_pre = bc$K, type = "RM", Mbar = c(0.5, 1), grid_points = 200,
                  breakdown = FALSE)
  expect_identical(a$results, b$results)
  # R's own draws (the caller's generator restored below)
  genv <- globalenv()
  had <- exists(".Random.seed", envir = genv, inherits = FALSE)
  old <- if (had) get(".Random.seed", envir = genv); oldkind <- RNGkind()
  suppressWarnings(set.seed(0, kind = "Mersenne-Twister", normal.kind = "Inversion", sample.kind = "Rejection"))
  ref <- rnorm(70000)
  suppressWarnings(RNGkind(oldkind[1], oldkind[2], oldkind[3]))
  if (had) assign(".Random.seed", old, envir = genv) else rm(".Random.seed", envir = genv)
  expect_identical(z[1:70000], ref)
})

test_that("the least-favourable test's first stage read from its interval (eta is convex in theta) decides every grid point as testing each point does", {
  # every relative-magnitudes sub-problem of the BC and LW event studies, on
  # grids of 64 points (under the scan's threshold: every point tested), 65
  # and 1000 (the scan), narrow and wide (the interval then falls between
  # two coarse points)
  cmp <- function(es, l, Mbar, n, width) {
    K <- es$K; P <- es$P; b <- es$b; S <- es$S
    ctx <- list(b = b, S = S, K = K, P = P, l = l, alpha = 0.05)
    th <- sum(l * b[K + seq_len(P)]); sd <- sqrt(drop(crossprod(l, S[K + seq_len(P), K + seq_len(P)] %*% l)))
    grid <- th + seq(-width, width, length.out = n) * sd
    scanned <- 0L
    for (maxpos in c(TRUE, FALSE)) for (s in seq(-(K - 1), 0)) {
      A <- diffdiff:::dd_A_rel(K, P, Mbar, s, maxpos, FALSE)
      pr <- list(A = A, d = numeric(nrow(A)), rows = diffdiff:::dd_post_rows(A, K, P))
      st <- diffdiff:::dd_arp_setup(ctx, pr, 1, NULL)
      run <- function(opts) .Call(diffdiff:::C_arp_grid, st$Y, st$a1, st$X, st$S, grid, opts, st$g,
                                  integer(n), st$dnorm)
      a <- run(st$opts); f <- run(c(st$opts, 1))
      expect_identical(as.vector(a), as.vector(f))
      expect_identical(attr(f, "tested"), as.integer(n))
      if (n <= 64) expect_identical(attr(a, "tested"), as.integer(n))
      if (n > 64 && attr(a, "tested") < n) scanned <- scanned + 1L
    }
    scanned
  }
  for (es in list(bc, lw)) {
    l <- c(1, numeric(es$P - 1))
    for (Mbar in c(0.5, 2)) {
      expect_identical(cmp(es, l, Mbar, 64, 20), 0L)
      expect_gt(cmp(es, l, Mbar, 65, 20), 0L)
      expect_gt(cmp(es, l, Mbar, 1000, 20), 0L)
      # the coarse points' last step shorter than 16, and ending exactly on one
      for (n in c(80, 81, 97)) expect_gt(cmp(es, l, Mbar, n, 20), 0L)
      expect_gt(cmp(es, l, Mbar, 200, 400), 0L)
    }
  }
})

test_that("honest_did leaves the caller's random numbers alone", {
  set.seed(42); x <- runif(3)
  set.seed(42)
  honest_did(betahat = bc$b, sigma = bc$S, num_pre = bc$K, type = "RM", Mbar = 1, grid_points = 50,
             breakdown = FALSE)
  expect_identical(runif(3), x)
})

test_that("the truncated-normal quantile inverts the truncated distribution", {
  tq <- function(p, l, u) .Call(diffdiff:::C_tn_quantile, p, l, u)
  for (cs in list(c(0.9, -1, 2), c(0.3, 0.5, 4), c(0.95, -3, -1), c(0.99, 1, Inf))) {
    x <- tq(cs[1], cs[2], cs[3])
    expect_equal((pnorm(x) - pnorm(cs[2])) / (pnorm(cs[3]) - pnorm(cs[2])), cs[1], tolerance = 1e-10)
  }
  # far in the tail (l > 35): the same identity on the log scale
  x <- tq(0.5, 40, Inf)
  expect_equal(exp(pnorm(x, lower.tail = FALSE, log.p = TRUE) - pnorm(40, lower.tail = FALSE, log.p = TRUE)),
               0.5, tolerance = 1e-9)
})

test_that("the ARP statistic from the simplex equals brute-force vertex enumeration", {
  set.seed(3)
  m <- 7; k <- 2
  X <- matrix(rnorm(m * k), m, k)
  Sig <- crossprod(matrix(rnorm(m * m), m)) / m
  Xi <- matrix(rnorm(m * 20), m, 20)
  eta <- .Call(diffdiff:::C_arp_eta, X, Sig, Xi)
  W <- cbind(sqrt(diag(Sig)), X)
  cmb <- combn(m, k + 1)
  verts <- NULL
  for (j in seq_len(ncol(cmb))) {
    B <- cmb[, j]
    if (abs(det(W[B, ])) < 1e-12) next
    lam <- solve(t(W[B, ]), c(1, rep(0, k)))
    if (all(lam >= -1e-12)) { v <- numeric(m); v[B] <- lam; verts <- cbind(verts, v) }
  }
  brute <- apply(Xi, 2, function(y) max(colSums(verts * y)))
  expect_equal(eta, brute, tolerance = 1e-10)
})

test_that("intervals are nested in M and equivariant to the scale of the outcome", {
  h <- honest_did(betahat = bc$b, sigma = bc$S, num_pre = bc$K, type = "SD", M = c(0, 0.05, 0.1), breakdown = FALSE)
  # the FLCI's estimator changes with M, so the intervals need not be nested, but they lengthen
  expect_true(all(diff(h$results$ub - h$results$lb) > 0))
  h10 <- honest_did(betahat = 10 * bc$b, sigma = 100 * bc$S, num_pre = bc$K, type = "SD", M = c(0, 0.5, 1),
                    breakdown = FALSE)
  expect_equal(h10$results$lb, 10 * h$results$lb, tolerance = 1e-8)
  expect_equal(h10$results$ub, 10 * h$results$ub, tolerance = 1e-8)
  r1 <- honest_did(betahat = bc$b, sigma = bc$S, num_pre = bc$K, type = "RM", Mbar = c(0.5, 1),
                   grid_points = 101, grid_lb = -1, grid_ub = 1, breakdown = FALSE)
  r10 <- honest_did(betahat = 10 * bc$b, sigma = 100 * bc$S, num_pre = bc$K, type = "RM", Mbar = c(0.5, 1),
                    grid_points = 101, grid_lb = -10, grid_ub = 10, breakdown = FALSE)
  expect_equal(r10$results$lb, 10 * r1$results$lb, tolerance = 1e-10)
  expect_equal(r10$results$ub, 10 * r1$results$ub, tolerance = 1e-10)
  # RM with Mbar = 0 and the conditional method lies inside the original interval's neighbourhood
  expect_true(all(r1$results$lb <= r1$results$ub))
})

test_that("l_vec: a combination of post periods, and the breakdown value", {
  l <- c(0.25, 0.25, 0.25, 0.25)
  h <- honest_did(betahat = bc$b, sigma = bc$S, num_pre = bc$K, type = "SD", M = seq(0, 0.1, length.out = 5),
                  l_vec = l, breakdown_tol = 1e-3)
  expect_equal(h$estimate, mean(bc$b[5:8]), tolerance = 1e-12)
  bd <- h$breakdown
  expect_true(is.finite(bd) && bd > 0)
  ctx_ci <- function(M) {
    hh <- honest_did(betahat = bc$b, sigma = bc$S, num_pre = bc$K, type = "SD", M = M, l_vec = l, breakdown = FALSE)
    c(hh$results$lb, hh$results$ub)
  }
  expect_lte(ctx_ci(bd)[1], 0)
  expect_gt(ctx_ci(bd - 1e-3 * 0.1)[1], 0)
})

test_that("honest_did takes the event studies of did_event, did_sa, did_bjs and did_cs", {
  d <- sim_panel()
  ev <- did_event(d, yname = "y", tname = "year", idname = "id", gname = "first_treat")
  h <- honest_did(ev, type = "SD", M = c(0, 0.1), breakdown = FALSE)
  cf <- coef(ev)
  expect_equal(unname(h$betahat), unname(cf[grepl("^event::", names(cf))]), tolerance = 1e-14)
  expect_equal(h$num_pre, 6L)
  expect_equal(unname(h$estimate), unname(cf["event::0"]), tolerance = 1e-14)
  sa <- did_sa(d, yname = "y", tname = "year", idname = "id", gname = "first_treat")
  expect_s3_class(honest_did(sa, type = "RM", Mbar = 1, grid_points = 100, breakdown = FALSE), "honest_did")
  bj <- did_bjs(d, yname = "y", tname = "year", idname = "id", gname = "first_treat", pretrends = TRUE)
  hb <- honest_did(bj, type = "SD", M = 0.1, breakdown = FALSE)
  expect_equal(unname(hb$sigma), unname(vcov(bj)[1:13, 1:13]), tolerance = 1e-14)
  cs <- did_cs(d, yname = "y", tname = "year", idname = "id", gname = "first_treat", base_period = "universal")
  ag <- aggregate(cs, type = "dynamic")
  expect_silent(hc <- honest_did(ag, type = "SD", M = 0.1, breakdown = FALSE))
  csv <- did_cs(d, yname = "y", tname = "year", idname = "id", gname = "first_treat")
  expect_warning(honest_did(aggregate(csv, type = "dynamic"), type = "SD", M = 0.1, breakdown = FALSE),
                 "base_period = \"universal\"")
  expect_equal(hc$num_pre, 6L)   # event -1 is the universal base (0, no variance): dropped
  expect_equal(unname(hc$betahat), unname(coef(ag)[c(1:6, 8:14)]), tolerance = 1e-14)
  out <- as.data.frame(h)
  expect_equal(out$method, c("Original", "FLCI", "FLCI"))
  pdf(NULL); on.exit(dev.off())
  expect_invisible(plot(h))
  expect_output(print(h), "Breakdown|Original")
})

test_that("bad input to honest_did gets clear errors", {
  d <- sim_panel()
  bj <- did_bjs(d, yname = "y", tname = "year", idname = "id", gname = "first_treat", pretrends = FALSE)
  expect_error(honest_did(bj), "no pre-period coefficients")
  b <- bc$b; S <- bc$S
  expect_error(honest_did(betahat = b, sigma = S[1:7, 1:7], num_pre = 4), "`sigma` must be 8 x 8")
  S2 <- S; S2[1, 2] <- S2[1, 2] + 1
  expect_error(honest_did(betahat = b, sigma = S2, num_pre = 4), "`sigma` must be symmetric")
  S3 <- S - diag(0.01, 8)
  expect_error(honest_did(betahat = b, sigma = S3, num_pre = 4), "positive semi-definite")
  expect_error(honest_did(betahat = b, sigma = "a", num_pre = 4), "`sigma` must be a numeric matrix")
  expect_error(honest_did(betahat = b, sigma = S, num_pre = 4, l_vec = c(1, 0)), "`l_vec` must .* length 4.*c\\(1, 0\\)")
  expect_error(honest_did(betahat = b, sigma = S, num_pre = 4, M = c(0, -1)), "`M` must be non-negative.*-1")
  expect_error(honest_did(betahat = b, sigma = S, num_pre = 4, type = "RM", Mbar = -0.5), "`Mbar` must be non-negative.*-0.5")
  expect_error(honest_did(betahat = b, sigma = S, num_pre = 0), "`num_pre`.*0")
  expect_error(honest_did(betahat = b, sigma = S, num_pre = 8), "`num_pre`.*8")
  expect_error(honest_did(betahat = b, sigma = S, num_pre = 4, type = "XX"), "`type`")
  expect_error(honest_did(betahat = b, sigma = S, num_pre = 4, method = "FLCI", sign = "negative"), "FLCI")
  expect_error(honest_did(betahat = b, sigma = S, num_pre = 4, type = "RM", method = "FLCI"), "`method`")
  expect_error(honest_did(betahat = b[-(1:3)], sigma = S[-(1:3), -(1:3)], num_pre = 1, type = "SDRM"),
               "SDRM.*at least 2")
  expect_error(honest_did(betahat = b, sigma = S, num_pre = 4, sign = "up"), "`sign`")
  expect_error(honest_did(betahat = b, sigma = S, num_pre = 4, sign = "positive", monotonicity = "increasing"),
               "at most one")
  expect_error(honest_did(ev <- 1:3), "`fit` must be an event-study fit")
  expect_error(honest_did(betahat = b, sigma = S, num_pre = 4, grid_lb = 1, grid_ub = 0), "`grid_lb`")
  expect_error(honest_did(), "needs a fit")
})

test_that("honest_did equals HonestDiD 0.2.8 itself on more cases (ref-honestdid.csv)", {
  # ref-honestdid.csv was written by tools/honestdid-reference.R with HonestDiD 0.2.8 run on R 4.2.2 (installed
  # by tools/install-honestdid.sh on the archived CVXR 1.0-11; no estimator code changed). Interval ends are
  # grid points; with the same grid they agree to 1e-6. C-F grids and FLCIs depend on HonestDiD's conic
  # solution of the FLCI problem (ECOS noise, see above; measured up to 2e-5 of the interval's length, at M = 0
  # where the FLCI is a single point of the feasible set): tolerance 1e-4 of the interval's length.
  ref <- read.csv(test_path("ref-honestdid.csv"), comment.char = "#", stringsAsFactors = FALSE)
  sets <- list(bc = bc, bc1 = list(b = bc$b[1:5], S = bc$S[1:5, 1:5], K = 4, P = 1))
  for (id in unique(ref$case)) {
    r <- ref[ref$case == id, ]
    x <- sets[[r$data[1]]]
    args <- list(betahat = x$b, sigma = x$S, num_pre = x$K, type = r$type[1], method = r$method[1],
                 l_vec = as.numeric(strsplit(r$l_vec[1], " ")[[1]]), breakdown = FALSE)
    if (r$type[1] == "SD") args$M <- r$M else args$Mbar <- r$M
    if (nzchar(r$sign[1])) args$sign <- r$sign[1]
    if (nzchar(r$mono[1])) args$monotonicity <- r$mono[1]
    if (!is.na(r$grid_lb[1])) {
      # Delta^SDNB by the ARP and C-LF tests: run by HonestDiD on an explicit grid, the identified set at
      # betahat = 0 ([0, M]) widened by 20 se, because HonestDiD's own default for a negative bias mirrors
      # that set and cuts the interval at the grid's end. That explicit grid is honest_did()'s default.
      sdth <- sqrt(x$S[x$K + 1, x$K + 1])
      expect_close(c(r$grid_lb, r$grid_ub), c(rep(-20 * sdth, length(r$M)), r$M + 20 * sdth), 1e-12)
    }
    h <- suppressWarnings(do.call(honest_did, args))
    tol <- if (r$method[1] %in% c("C-F", "FLCI")) 1e-4 * max(r$ub - r$lb) else 1e-6
    ref_lb <- r$lb; ref_ub <- r$ub
    # where HonestDiD's interval ends at the end of its grid (it warns that the interval is open:
    # bc_rm_cond, bc_sdrmd_cond at Mbar = 1, bc1_sd_cond at M = 0.05), diffdiff extends the grid
    # (same start, same step) and its end lies beyond; the test compares those ends that way
    # and every other end as before
    g <- h$grids
    cut_ub <- !is.na(g$ub) & g$ub > g$start_ub
    cut_lb <- !is.na(g$lb) & g$lb < g$start_lb
    if (any(cut_ub | cut_lb)) {
      if (any(cut_ub)) expect_close(ref_ub[cut_ub], g$start_ub[cut_ub], 1e-9)   # HonestDiD stopped at the grid's end
      if (any(cut_lb)) expect_close(ref_lb[cut_lb], g$start_lb[cut_lb], 1e-9)
      expect_true(all(h$results$ub[cut_ub] > ref_ub[cut_ub]) && all(h$results$lb[cut_lb] < ref_lb[cut_lb]))
      ref_ub[cut_ub] <- h$results$ub[cut_ub]; ref_lb[cut_lb] <- h$results$lb[cut_lb]
    }
    if (r$method[1] == "C-F") {
      # where HonestDiD accepted an end of the grid (the alpha/10 FLCI; its decision there is rounding),
      # diffdiff rejects it (documented): its bound is then exactly one grid step inside
      for (i in seq_along(r$M)) {
        fl <- diffdiff:::dd_flci(x$b, x$S, x$K, x$P, args$l_vec, r$M[i], 0.005)
        step <- 2 * fl$half / 999
        if (abs(ref_ub[i] - (fl$center + fl$half)) < tol) ref_ub[i] <- ref_ub[i] - step
        if (abs(ref_lb[i] - (fl$center - fl$half)) < tol) ref_lb[i] <- ref_lb[i] + step
      }
    }
    expect_close(c(h$results$lb, h$results$ub), c(ref_lb, ref_ub), tol)
  }
})

# The FLCI's worst-case bias (C_flci_bias, src/honest.c) bisects over t and
# calls its box-QP solver at every step. Guards against the regression where
# the solver and the exact-step code took R_alloc scratch inside those loops,
# so memory grew with the iterations until the call returned: the scratch is
# now allocated once, and the number of allocations (as logged by Rprofmem)
# is the same however many iterations a problem takes.
test_that("C_flci_bias allocates its scratch once, not once per bisection step", {
  skip_if_not(capabilities("profmem"), "R was built without memory profiling")
  set.seed(1)
  n <- 20   # scratch vectors of n doubles are logged one by one (larger than R's small-vector pools)
  M <- matrix(rnorm(n * n), n); H <- crossprod(M) + diag(n); a <- rnorm(n)
  root <- sqrt(sum(a * solve(H, a)))
  f <- tempfile(); on.exit(unlink(f))
  allocs <- function(r) {
    # a garbage collection first: finalizers of objects left by earlier tests
    # (run by a collection during the call) would log allocations of their own
    invisible(gc())
    Rprofmem(f, threshold = 0)
    res <- .Call(diffdiff:::C_flci_bias, H, a, r)
    Rprofmem(NULL)
    expect_identical(res[n + 2], 0)   # status: solved
    # the vectors allocated (scratch and result); "new page" lines are R
    # taking a page for small vectors, which depends on the state of its
    # memory pools, not on this call. (The test failed once in a full check,
    # 2 distinct counts instead of 1; not reproduced in 300 repetitions;
    # these two guards are for the likely causes.)
    l <- readLines(f)
    sum(!grepl("^new page", l))
  }
  # radii inside (0, root): the bisection runs, a different number of steps for each
  k <- vapply(root * c(0.05, 0.3, 0.6, 0.9), allocs, numeric(1))
  expect_identical(length(unique(k)), 1L)
})

test_that("RM: an estimate far from 0 gets a grid around it, not an empty set", {
  # l'beta = 10 with SE 0.1: 100 SEs from 0, outside HonestDiD's default
  # RM grid (+/- 20 SEs around 0), which then rejects every point
  b <- c(0.02, -0.03, 0.01, 10, 10.5)
  S <- diag(c(0.01, 0.01, 0.01, 0.01, 0.012))
  h <- expect_silent(honest_did(betahat = b, sigma = S, num_pre = 3, type = "RM", Mbar = c(0.5, 1), breakdown = FALSE))
  expect_true(all(is.finite(c(h$results$lb, h$results$ub))))
  expect_true(all(h$results$lb < 10 & h$results$ub > 10))
  # the path: the grid used is +/- 20 SEs around the estimate, and the result
  # equals the one on that grid given explicitly
  expect_equal(h$grids$start_lb, rep(10 - 20 * 0.1, 2))
  h2 <- honest_did(betahat = b, sigma = S, num_pre = 3, type = "RM", Mbar = c(0.5, 1), breakdown = FALSE,
                   grid_lb = 8, grid_ub = 12)
  expect_identical(h$results, h2$results)
  # the same under "SD" with the conditional and hybrid tests (their grid
  # spans the identified set at betahat = 0)
  for (m in c("C-LF", "Conditional")) {
    s <- expect_silent(honest_did(betahat = b, sigma = S, num_pre = 3, type = "SD", M = c(0, 0.1), method = m,
                                  breakdown = FALSE))
    expect_true(all(s$results$lb < 10 & s$results$ub > 10), info = m)
    expect_equal(s$grids$start_lb, c(-2, -2.1) + 10, info = m)
    s2 <- honest_did(betahat = b, sigma = S, num_pre = 3, type = "SD", M = 0.1, method = m, breakdown = FALSE,
                     grid_lb = 7.9, grid_ub = 12.1)
    expect_equal(s$results[2, ], s2$results, ignore_attr = TRUE, tolerance = 1e-12, info = m)
  }
})

test_that("the ARP statistic over many draws (warm starts from cached optimal bases) equals a cold LP per draw", {
  set.seed(31)
  m <- 24; k <- 5
  X <- matrix(rnorm(m * k), m, k)
  S <- crossprod(matrix(rnorm(m * m), m)) / m + diag(m) * 0.1
  Xi <- matrix(rnorm(m * 300), m, 300)
  eta <- .Call(diffdiff:::C_arp_eta, X, S, Xi)
  W <- cbind(sqrt(diag(S)), X)
  cold <- apply(Xi, 2, function(xi) .Call(diffdiff:::C_lp_max, W, c(1, rep(0, k)), xi))
  expect_true(all(is.finite(eta)))
  expect_equal(eta, cold, tolerance = 1e-10)
  # the draws in another order give the same values (the cache order differs)
  o <- sample(300)
  expect_equal(.Call(diffdiff:::C_arp_eta, X, S, Xi[, o]), eta[o], tolerance = 1e-10)
})
