# did_spillover(): the nearest-treated distances of the C grid against brute
# force, the two stages written out with lm() on exposures computed here,
# the GMM scores written out with dense matrices (their clustered variance
# is did_spillover's, and their Conley variance, summed over pairs by hand,
# is its Conley variance), anticipation, and bad input.

spill_panel <- function() utils::read.csv(test_path("spill_panel.csv"))

# every pair's distance on fixest's sphere (radius 6376 km), or planar
brute_dist <- function(la1, lo1, la2, lo2, distance = "spherical") {
  if (distance == "euclidean") return(sqrt(outer(la1, la2, "-")^2 + outer(lo1, lo2, "-")^2))
  r <- pi / 180
  if (distance == "spherical") {
    h <- sin(outer(la1, la2, function(a, b) (b - a) * r / 2))^2 +
      outer(cos(la1 * r), cos(la2 * r)) * sin(outer(lo1, lo2, function(a, b) (b - a) * r / 2))^2
    return(12752 * asin(pmin(sqrt(h), 1)))
  }
  # triangular: fixest's equirectangular distance with its truncated pi
  p5 <- 3.14159
  dla <- abs(outer(la1, la2, "-")) * r; dlo <- abs(outer(lo1, lo2, "-")) * r
  dlo <- ifelse(dlo < p5, dlo, 6.28318 - dlo)
  cb <- cos(outer(la1, la2, "+") * r / 2)
  (111 * 180 / p5) * sqrt(dla^2 + (cb * dlo)^2)
}

# distance from each unit to the nearest other unit of each label within c
brute_nearest <- function(la, lo, lab, G, c, distance) {
  M <- brute_dist(la, lo, la, lo, distance)
  diag(M) <- Inf
  M[M > c] <- Inf
  vapply(seq_len(G) - 1L, function(g) if (any(lab == g)) apply(M[, lab == g, drop = FALSE], 1, min) else
    rep(Inf, length(la)), numeric(length(la)))
}

test_that("the grid's nearest treated distances equal brute force (sphere, plane, date line, poles)", {
  ns <- asNamespace("diffdiff")
  for (case in 1:4) {
    set.seed(case)
    n <- 700
    la <- switch(case, stats::runif(n, 30, 50), stats::runif(n, 80, 90), stats::runif(n, -10, 10), stats::runif(n, 0, 300))
    lo <- switch(case, stats::runif(n, -120, -80), stats::runif(n, -180, 180), c(stats::runif(n / 2, 175, 180),
                 stats::runif(n / 2, -180, -175)), stats::runif(n, 0, 300))
    dist <- if (case == 4) "euclidean" else "spherical"
    lab <- sample(c(-1L, 0L, 1L, 2L), n, TRUE, prob = c(0.7, 0.1, 0.1, 0.1))
    seen <- logical()
    for (c in c(50, 150, 400)) {
      got <- .Call(ns$C_spill_nearest, la, lo, lab, c(c, if (dist == "euclidean") 3 else 1, 3))
      want <- brute_nearest(la, lo, lab, 3L, c, dist)
      expect_identical(is.finite(got), is.finite(want))
      expect_lt(max(abs(got[is.finite(want)] - want[is.finite(want)])), 1e-9)
      seen <- c(seen, is.finite(want))
    }
    # some pairs are found, some are not: the check is not vacuous
    expect_true(any(seen) && any(!seen))
  }
  set.seed(9)
  la <- stats::runif(500, 30, 40); lo <- stats::runif(500, -100, -90)
  lab <- sample(c(-1L, 0L), 500, TRUE, prob = c(0.8, 0.2))
  got <- .Call(ns$C_spill_nearest, la, lo, lab, c(120, 2, 1))
  want <- brute_nearest(la, lo, lab, 1L, 120, "triangular")
  expect_identical(is.finite(got), is.finite(want))
  expect_lt(max(abs(got[is.finite(want)] - want[is.finite(want)])), 1e-9)
})

test_that("the nearest distances are the same bits on one and two threads, across the parallel throttle", {
  ns <- asNamespace("diffdiff")
  need_threads()
  old <- dd_threads()
  on.exit(dd_threads(old))
  for (n in c(2047, 2048, 2049, 9000)) {
    set.seed(n)
    la <- stats::runif(n, 30, 50); lo <- stats::runif(n, -120, -80)
    lab <- sample(c(-1L, 0L, 1L), n, TRUE, prob = c(0.8, 0.1, 0.1))
    dd_threads(1)
    a <- .Call(ns$C_spill_nearest, la, lo, lab, c(200, 1, 2))
    dd_threads(2)
    b <- .Call(ns$C_spill_nearest, la, lo, lab, c(200, 1, 2))
    expect_identical(a, b)
    expect_true(any(is.finite(a)))
  }
})

# the exposure of every row computed here: distance to the nearest unit
# treated by t (start g - a), its ring, and the unit's first exposure
hand_exposure <- function(d, rings, a = 0) {
  u <- d[!duplicated(d$id), ]
  M <- brute_dist(u$lat, u$lon, u$lat, u$lon)
  diag(M) <- Inf
  s <- ifelse(u$first_treat > 0, u$first_treat - a, Inf)
  iu <- match(d$id, u$id)
  near <- vapply(seq_len(nrow(d)), function(r) {
    tr <- which(s <= d$time[r])
    if (length(tr)) min(M[iu[r], tr]) else Inf
  }, 0)
  K <- length(rings) - 1
  ring <- findInterval(near, rings); ring[near == max(rings)] <- K; ring[near > max(rings)] <- NA
  starts <- sort(unique(s[is.finite(s)]))
  first <- vapply(seq_len(nrow(u)), function(i) {
    hit <- vapply(starts, function(g) min(M[i, s == g]) <= max(rings), TRUE)
    if (any(hit)) starts[which(hit)[1]] else NA_real_
  }, 0)
  D <- d$first_treat > 0 & d$time >= d$first_treat - a
  list(near = near, ring = ifelse(D, NA, ring), D = D, first = first[iu])
}

test_that("the two stages equal lm() on the clean rows and the ring indicators, with anticipation", {
  d <- spill_panel()
  rings <- c(0, 30, 60)
  for (a in 0:1) {
    ex <- hand_exposure(d, rings, a)
    clean <- !ex$D & is.na(ex$ring)
    m1 <- stats::lm(y ~ factor(id) + factor(time) + x, data = d[clean, ])
    adj <- d$y - stats::predict(m1, newdata = d)
    X <- cbind(direct = as.numeric(ex$D), r1 = as.numeric(ex$ring %in% 1), r2 = as.numeric(ex$ring %in% 2))
    want <- stats::coef(stats::lm(adj ~ 0 + X))
    f <- did_spillover(d, "y", "id", "time", "first_treat", ~ x, rings = rings, anticipation = a)
    expect_equal(unname(stats::coef(f)), unname(want), tolerance = 1e-10)
    expect_identical(f$n_clean, sum(clean))
    expect_equal(f$exposure$distance[is.finite(ex$near) & ex$near <= 60], ex$near[is.finite(ex$near) & ex$near <= 60],
                 tolerance = 1e-12)
    expect_equal(f$exposure$first_exposed, ex$first)
    expect_equal(unname(f$ring_rows), c(sum(ex$ring %in% 1), sum(ex$ring %in% 2)))
    # event study: direct by t - g, rings by time since first exposure
    e <- did_spillover(d, "y", "id", "time", "first_treat", ~ x, rings = rings, anticipation = a, event_study = TRUE)
    h <- d$time - ex$first
    sel <- ex$ring %in% 2 & h == 1
    expect_equal(unname(stats::coef(e)["spillover::[30,60]::event::1"]), mean(adj[sel]), tolerance = 1e-10)
    sel <- ex$D & d$time - d$first_treat == -a
    expect_equal(unname(stats::coef(e)[sprintf("event::%d", -a)]), mean(adj[sel]), tolerance = 1e-10)
  }
  # anticipation = 1 is the same fit as cohorts starting a period earlier
  d2 <- d; d2$first_treat <- ifelse(d$first_treat > 0, d$first_treat - 1, 0)
  expect_equal(stats::coef(did_spillover(d, "y", "id", "time", "first_treat", rings = rings, anticipation = 1)),
               stats::coef(did_spillover(d2, "y", "id", "time", "first_treat", rings = rings)), tolerance = 1e-12)
})

# Gardner's GMM scores written out with dense matrices: psi_i = (X2'X2)^-1
# (x2_i e2_i - X2'X1 (X10'X10)^-1 x10_i e1_i), X1 the unit and period
# indicators of every row, X10 those of the clean rows (others zero)
hand_scores <- function(d, rings) {
  ex <- hand_exposure(d, rings)
  clean <- !ex$D & is.na(ex$ring)
  X1 <- stats::model.matrix(~ factor(id) + factor(time), d)
  X10 <- X1 * clean
  b1 <- qr.coef(qr(X10[clean, ]), d$y[clean])
  b1[is.na(b1)] <- 0
  e1 <- (d$y - drop(X1 %*% b1)) * clean
  adj <- d$y - drop(X1 %*% b1)
  X2 <- cbind(as.numeric(ex$D), sapply(seq_len(length(rings) - 1), function(j) as.numeric(ex$ring %in% j)))
  b2 <- qr.coef(qr(X2), adj)
  e2 <- adj - drop(X2 %*% b2)
  A <- solve(crossprod(X2))
  B <- crossprod(X2, X1) %*% MASS::ginv(crossprod(X10))
  psi <- (X2 * e2 - t(B %*% t(X10 * e1))) %*% A
  list(psi = psi, b2 = b2)
}

test_that("clustered and Conley variances equal the GMM scores' sums written out by hand", {
  d <- spill_panel()
  d <- d[d$id <= 150, ]
  rings <- c(0, 40, 80)
  h <- hand_scores(d, rings)
  f <- did_spillover(d, "y", "id", "time", "first_treat", rings = rings)
  expect_equal(unname(stats::coef(f)), unname(h$b2), tolerance = 1e-10)
  S <- rowsum(h$psi, d$id)
  expect_equal(unname(f$vcov), unname(crossprod(S)), tolerance = 1e-9)
  # Conley: every pair of rows within 100 km (spherical, uniform kernel)
  M <- brute_dist(d$lat, d$lon, d$lat, d$lon)
  K <- (M <= 100) * 1
  want <- crossprod(h$psi, K %*% h$psi)
  fc <- did_spillover(d, "y", "id", "time", "first_treat", rings = rings, vcov = "conley", cutoff = 100)
  expect_equal(unname(fc$vcov), unname(want), tolerance = 1e-9)
  expect_identical(fc$vcov_type, "conley")
  expect_match(fc$vcov_label, "Conley")
  # Bartlett kernel, and combined with clustering by state (pairs in a state weigh 1)
  fb <- did_spillover(d, "y", "id", "time", "first_treat", rings = rings, vcov = dd_conley(100, kernel = "bartlett"))
  Kb <- 1 - M / 100
  Kb[Kb < 0] <- 0
  expect_equal(unname(fb$vcov), unname(crossprod(h$psi, Kb %*% h$psi)), tolerance = 1e-9)
  fs <- did_spillover(d, "y", "id", "time", "first_treat", rings = rings, vcov = "conley", cutoff = 100, cluster = "state")
  Ks <- pmax(K, outer(d$state, d$state, "=="))
  expect_equal(unname(fs$vcov), unname(crossprod(h$psi, Ks %*% h$psi)), tolerance = 1e-9)
})

test_that("the caller's data are unchanged and results do not depend on row order", {
  d <- spill_panel(); d0 <- d
  f <- did_spillover(d, "y", "id", "time", "first_treat", rings = c(0, 20, 40))
  expect_identical(d, d0)
  set.seed(3)
  g <- did_spillover(d[sample(nrow(d)), ], "y", "id", "time", "first_treat", rings = c(0, 20, 40))
  expect_equal(stats::coef(g), stats::coef(f), tolerance = 1e-12)
  expect_equal(g$vcov, f$vcov, tolerance = 1e-12)
  expect_s3_class(f, "dd_fit")
  expect_true(all(c("direct", "spillover::[0,20)") %in% tidy(f)$term))
  expect_output(print(f), "Spillover DiD")
  expect_equal(nrow(glance(f)), 1L)
})

test_that("bad rings, coordinates and settings are refused, naming the argument and value", {
  d <- spill_panel()
  sp <- function(...) did_spillover(d, "y", "id", "time", "first_treat", ...)
  expect_error(sp(), "`rings`")
  expect_error(sp(rings = 10), "at least two")
  expect_error(sp(rings = c(5, 10)), "must start at 0.*5, 10")
  expect_error(sp(rings = c(0, 20, 10)), "strictly increasing.*0, 20, 10")
  expect_error(sp(rings = c(0, 20, 20)), "strictly increasing")
  expect_error(sp(rings = c(0, NA)), "`rings`")
  expect_error(sp(rings = c(0, Inf)), "`rings`")
  expect_error(sp(rings = c("0", "10")), "`rings`")
  expect_error(sp(rings = c(0, 20), coords = c("lat", "lat")), "`coords` must name two different columns")
  expect_error(sp(rings = c(0, 20), coords = "lat"), "`coords`")
  expect_error(sp(rings = c(0, 20), coords = c("lat", "nope")), "nope")
  dn <- d; dn$lat[5] <- NA
  expect_error(did_spillover(dn, "y", "id", "time", "first_treat", rings = c(0, 20)), "`coords`.*known for every row")
  dv <- d; dv$lon[2] <- dv$lon[2] + 0.1
  expect_error(did_spillover(dv, "y", "id", "time", "first_treat", rings = c(0, 20)), "constant within each unit")
  db <- d; db$lat <- db$lat + 60
  expect_error(did_spillover(db, "y", "id", "time", "first_treat", rings = c(0, 20)), "within \\[-90, 90\\]")
  expect_error(sp(rings = c(0, 5000)), "no clean control")
  expect_error(sp(rings = c(0, 20), vcov = "conley"), "`cutoff`")
  expect_error(sp(rings = c(0, 20), vcov = "conley", cutoff = 0), "`cutoff` must be one positive number")
  expect_error(sp(rings = c(0, 20), vcov = "conley", cutoff = -5), "`cutoff`")
  expect_error(sp(rings = c(0, 20), horizon = 1), "event_study = TRUE")
  expect_error(sp(rings = c(0, 20), distance = "manhattan"), "`distance`")
  expect_error(sp(rings = c(0, 20), anticipation = -1), "`anticipation`")
  expect_error(did_spillover(d, "y", "id", "time", "first_treat", c("lat", "lon"), rings = c(0, 20)),
               "`xformla` must be a one-sided formula.*`coords`")
  expect_error(sp(rings = c(0, 20), event_study = NA), "`event_study`")
  # a constant outcome: no confident number
  dc <- d; dc$y <- 1
  expect_error(did_spillover(dc, "y", "id", "time", "first_treat", rings = c(0, 20)), "constant|no variation")
})

test_that("a ring without untreated rows is dropped with a message; periods without clean rows are named", {
  d <- spill_panel()
  expect_message(f <- did_spillover(d, "y", "id", "time", "first_treat", rings = c(0, 1e-6, 20)),
                 "no untreated row in ring \\[0,1e-06\\)")
  expect_false(any(grepl("1e-06)", names(stats::coef(f)), fixed = TRUE)))
  expect_identical(unname(f$ring_rows[1]), 0L)
})

test_that("dd_sim_spillover: spillovers on nearby untreated units only, and the naive DiD is biased", {
  set.seed(5)
  d <- dd_sim_spillover(n_units = 300, n_periods = 5, spillover = 2, reach = 80, region_km = 600, sd = 0, sd_unit = 0)
  expect_named(d, c("id", "time", "first_treat", "D", "lat", "lon", "y"))
  # without noise: y is the effect plus the spillover
  expect_true(all(d$y[d$D == 1] == 1))
  expect_true(any(d$y[d$D == 0] > 0))
  expect_error(dd_sim_spillover(reach = 0), "`reach`")
  expect_error(dd_sim_spillover(spillover = NA), "`spillover`")
})

test_that("a tiny cutoff is a grid of at most 1e7 rows, not an internal error (regression)", {
  ns <- asNamespace("diffdiff")
  set.seed(4)
  n <- 300
  la <- stats::runif(n, -80, 80); lo <- stats::runif(n, -170, 170)
  la[2] <- la[1]; lo[2] <- lo[1]                     # two units at one place
  lab <- c(0L, 0L, rep(c(-1L, 0L), length.out = n - 2))
  got <- .Call(ns$C_spill_nearest, la, lo, lab, c(1e-9, 1, 1))
  want <- brute_nearest(la, lo, lab, 1L, 1e-9, "spherical")
  expect_identical(got, want)
  expect_identical(got[1:2, 1], c(0, 0))
  # the Conley meat: distinct places are no pairs but their own
  S <- cbind(1, stats::rnorm(n))
  M <- .Call(ns$C_conley_meat, S[-2, ], la[-2], lo[-2], c(1e-9, 1, 0, -1, 1), NULL, NULL, NULL, NULL)
  expect_equal(M, crossprod(S[-2, ]), tolerance = 1e-13)
})

test_that("a survey design with unit PSUs is the clustered variance times G / (G - 1); the bootstrap reproduces", {
  d <- spill_panel()
  d$w1 <- 1
  rings <- c(0, 20, 40)
  s <- did_spillover(d, "y", "id", "time", "first_treat", rings = rings,
                     survey = survey_design(d, weights = ~ w1, ids = ~ id))
  g <- did_spillover(d, "y", "id", "time", "first_treat", rings = rings)
  G <- length(unique(d$id))
  expect_equal(s$coeftable$estimate, g$coeftable$estimate, tolerance = 1e-12)
  expect_equal(s$coeftable$std.error, g$coeftable$std.error * sqrt(G / (G - 1)), tolerance = 1e-10)
  expect_error(did_spillover(d, "y", "id", "time", "first_treat", rings = rings, vcov = "conley", cutoff = 50,
                             survey = survey_design(d, weights = ~ w1, ids = ~ id)), "cannot be combined with `survey`")
  set.seed(11); b1 <- did_spillover(d, "y", "id", "time", "first_treat", rings = rings, nboot = 199)
  set.seed(11); b2 <- did_spillover(d, "y", "id", "time", "first_treat", rings = rings, nboot = 199)
  expect_identical(b1$coeftable, b2$coeftable)
  expect_identical(b1$vcov_type, "bootstrap")
  # bootstrap SEs near the analytic ones (199 draws)
  expect_lt(max(abs(b1$coeftable$std.error / g$coeftable$std.error - 1)), 0.25)
  expect_error(did_spillover(d, "y", "id", "time", "first_treat", rings = rings, nboot = 99, vcov = "conley",
                             cutoff = 50), "`nboot`")
})
