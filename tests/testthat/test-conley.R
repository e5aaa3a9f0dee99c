# Conley spatial standard errors (vcov = "conley", dd_conley()) against
# fixest 0.14's vcov = conley(cutoff, distance) (live peer: feols on the
# same regression; 1e-8), and against O(n^2) computations written out here
# for what fixest does not offer (the Bartlett kernel, the panel form with a
# serial lag, the combination with clusters, euclidean coordinates).
# fixest's convention, matched: the meat over all pairs within the cutoff
# (uniform kernel, d <= cutoff), V = n / (n - K) B M B with K every
# parameter including the fixed effects, t tests with n - K degrees of
# freedom; distances in km, "spherical" on a sphere of radius 6,376 km after
# a box pre-filter of half-width (cutoff / 111) degrees with pi as 3.14159,
# "triangular" its equirectangular approximation.

# fixest's pair rule written out (O(n^2)): the box pre-filter, then the distance
cf_pairs <- function(lat, lon, cutoff, distance) {
  la <- lat / 180 * pi; lo <- lon / 180 * pi
  L <- ((cutoff / 111) * 3.14159) / 180
  dlat <- abs(outer(la, la, "-"))
  dl0 <- outer(lo, lo, "-"); dlon <- abs(dl0); dlon <- ifelse(dlon < 3.14159, dlon, 6.28318 - dlon)
  cm <- cos(outer(la, la, "+") / 2)
  box <- !(dlat > L) & !(dlon > L / cm)
  if (distance == "spherical") {
    h <- sin(outer(la, la, "-") / 2)^2 + outer(cos(la), cos(la)) * sin(dl0 / 2)^2
    ok <- 12752 * asin(pmin(sqrt(h), 1)) <= cutoff
  } else ok <- dlat^2 + (cm * dlon)^2 <= (((cutoff * 3.14159) / 180) / 111)^2
  W <- (box & ok) * 1
  diag(W) <- 1
  W
}

cf_sim <- function(n_units = 150, n_periods = 5, seed = 2) {
  set.seed(seed)
  d <- dd_sim_staggered(n_units = n_units, n_periods = n_periods)
  u <- sort(unique(d$id))
  la <- stats::runif(length(u), 30, 50); lo <- stats::runif(length(u), -120, -80)
  d$lat <- la[match(d$id, u)]; d$lon <- lo[match(d$id, u)]
  d$x <- stats::rnorm(nrow(d)); d$w <- stats::runif(nrow(d), 0.5, 2)
  d$state <- d$id %% 13
  d
}

test_that("the grid finds exactly fixest's pairs: cutoffs from 0 to continental, the date line, high latitudes", {
  ns <- asNamespace("diffdiff")
  set.seed(5)
  n <- 700
  S <- cbind(1, stats::rnorm(n)) * stats::rnorm(n)
  sets <- list(us = cbind(stats::runif(n, 30, 50), stats::runif(n, -120, -80)),
               dateline = cbind(stats::runif(n, 60, 85), c(stats::runif(n / 2, 170, 180), stats::runif(n / 2, -180, -170))),
               ties = cbind(round(stats::runif(n, 40, 42), 1), round(stats::runif(n, -90, -88), 1)))
  for (nm in names(sets)) for (dist in c("spherical", "triangular")) for (cut in c(0, 15, 111, 500, 3000)) {
    xy <- sets[[nm]]
    W <- cf_pairs(xy[, 1], xy[, 2], cut, dist)
    M <- .Call(ns$C_conley_meat, S, xy[, 1], xy[, 2], c(cut, if (dist == "spherical") 1 else 2, 0, -1, 1),
               NULL, NULL, NULL, NULL)
    expect_equal(M, crossprod(S, W %*% S), tolerance = 1e-12, label = sprintf("%s %s %g km", nm, dist, cut))
  }
})

test_that("did_twfe and did_2x2 with vcov = \"conley\" equal fixest's conley() (spherical and triangular)", {
  need_peer("fixest")
  d <- cf_sim()
  for (dist in c("spherical", "triangular")) {
    f <- did_twfe(d, "y", "id", "time", "D", xformla = ~ x, vcov = dd_conley(300, distance = dist))
    m <- fixest::feols(y ~ D + x | id + time, d, vcov = fixest::conley(300, distance = dist))
    expect_equal(unname(f$coeftable$estimate), unname(stats::coef(m)), tolerance = 1e-8)
    expect_equal(unname(f$coeftable$std.error), as.vector(fixest::se(m)), tolerance = 1e-8, label = dist)
    expect_equal(unname(f$coeftable$p.value), as.vector(fixest::pvalue(m)), tolerance = 1e-8)
    # weights
    fw <- did_twfe(d, "y", "id", "time", "D", weightsname = "w", vcov = dd_conley(150, distance = dist))
    mw <- fixest::feols(y ~ D | id + time, d, weights = ~w, vcov = fixest::conley(150, distance = dist))
    expect_equal(unname(fw$coeftable$std.error), as.vector(fixest::se(mw)), tolerance = 1e-8)
  }
  # vcov = "conley" with coords and cutoff: fixest's spherical distance, uniform kernel
  a <- did_twfe(d, "y", "id", "time", "D", vcov = "conley", coords = c("lat", "lon"), cutoff = 300)
  m <- fixest::feols(y ~ D | id + time, d, vcov = fixest::conley(300, distance = "spherical"))
  expect_equal(unname(a$coeftable$std.error), as.vector(fixest::se(m)), tolerance = 1e-8)
  expect_match(a$vcov_label, "Conley spatial HAC \\(cutoff 300 km, uniform kernel, spherical distance\\)")
  # a cross-section: did_2x2 on the first and last periods
  s <- d[d$time %in% c(1, 5), ]
  s$tr <- as.integer(s$first_treat > 0 & s$first_treat <= 5); s$po <- as.integer(s$time == 5)
  s$lat <- s$lat + s$time / 100                      # the two periods' rows at distinct places
  b <- did_2x2(s, "y", "tr", "po", vcov = "conley", cutoff = 250)
  mb <- fixest::feols(y ~ tr * po, s, vcov = fixest::conley(250, distance = "spherical"))
  expect_equal(unname(b$coeftable$std.error), as.vector(fixest::se(mb)), tolerance = 1e-8)
})

test_that("did_event with Conley's variance equals feols on the same event-time dummies", {
  need_peer("fixest")
  d <- cf_sim()
  f <- did_event(d, "y", "id", "time", "first_treat", vcov = dd_conley(200))
  rel <- ifelse(d$first_treat == 0, -1, d$time - d$first_treat)
  m <- fixest::feols(y ~ i(rel, ref = -1) | id + time, cbind(d, rel = rel),
                     vcov = fixest::conley(200, distance = "spherical"))
  k <- match(paste0("event::", sub("rel::", "", names(stats::coef(m)))), f$coeftable$term)
  expect_false(anyNA(k))
  expect_equal(f$coeftable$estimate[k], unname(stats::coef(m)), tolerance = 1e-8)
  expect_equal(f$coeftable$std.error[k], as.vector(fixest::se(m)), tolerance = 1e-8)
})

# the full O(n^2) weights of the variants fixest does not have, on a
# regression with unit and period effects (dummies in lm), K every parameter
cf_hand <- function(d, W, cutoff_used = TRUE) {
  m <- stats::lm(y ~ D + factor(id) + factor(time), d)
  X <- stats::model.matrix(m); e <- stats::resid(m)
  Xt <- stats::resid(stats::lm(d$D ~ factor(d$id) + factor(d$time)))     # D with the effects partialled out
  s <- Xt * e
  n <- nrow(d); K <- m$rank
  sqrt(drop(crossprod(s, W %*% s)) / sum(Xt^2)^2 * n / (n - K))
}

test_that("the Bartlett kernel, euclidean coordinates, the panel form's serial lag and clusters, by hand", {
  d <- cf_sim(n_units = 80, n_periods = 5)
  d$ex <- d$lon * 10; d$ey <- d$lat * 10                     # planar coordinates
  D <- as.matrix(stats::dist(cbind(d$ey, d$ex)))
  # Bartlett, euclidean, fixest's form (all periods)
  W <- pmax(1 - D / 60, 0)
  f <- did_twfe(d, "y", "id", "time", "D", vcov = dd_conley(60, coords = c("ey", "ex"), kernel = "bartlett",
                                                             distance = "euclidean"))
  expect_equal(f$coeftable$std.error, cf_hand(d, W), tolerance = 1e-8)
  # the panel form: uniform within each period, a unit's own periods up to 2 apart with 1 - |t - s| / 3
  same_t <- outer(d$time, d$time, "==")
  same_u <- outer(d$id, d$id, "==")
  lagw <- pmax(1 - abs(outer(d$time, d$time, "-")) / 3, 0)
  W <- (D <= 60) * same_t
  W[same_u & !same_t] <- lagw[same_u & !same_t]
  f <- did_twfe(d, "y", "id", "time", "D", vcov = dd_conley(60, coords = c("ey", "ex"), distance = "euclidean", lag = 2))
  expect_equal(f$coeftable$std.error, cf_hand(d, W), tolerance = 1e-8)
  expect_match(f$vcov_label, "within periods, serial lag 2")
  # with clusters: every pair in a cluster gets weight 1
  same_c <- outer(d$state, d$state, "==")
  W <- pmax((D <= 60) * 1, same_c)
  f <- did_twfe(d, "y", "id", "time", "D", cluster = "state",
                vcov = dd_conley(60, coords = c("ey", "ex"), distance = "euclidean"))
  expect_equal(f$coeftable$std.error, cf_hand(d, W), tolerance = 1e-8)
  expect_match(f$vcov_label, "and clustered \\(state\\)")
})

test_that("Conley's variance: row order, and clear errors", {
  d <- cf_sim()
  a <- did_twfe(d, "y", "id", "time", "D", vcov = dd_conley(300))
  set.seed(3)
  b <- did_twfe(d[sample(nrow(d)), ], "y", "id", "time", "D", vcov = dd_conley(300))
  expect_equal(b$coeftable, a$coeftable, tolerance = 1e-12)
  f <- function(...) did_twfe(d, "y", "id", "time", "D", ...)
  expect_error(f(vcov = "conley"), "needs `cutoff`")
  expect_error(f(vcov = "conley", cutoff = 0), "`cutoff` must be one positive number")
  expect_error(f(vcov = "conley", cutoff = -5), "got -5")
  expect_error(f(vcov = "conley", cutoff = c(1, 2)), "`cutoff`")
  expect_error(f(vcov = "conley", cutoff = 100, coords = c("lat", "nosuch")), "nosuch")
  expect_error(f(vcov = "conley", cutoff = 100, coords = "lat"), "`coords` must name two different columns")
  expect_error(f(vcov = "hetero", cutoff = 100), "are for `vcov` = \"conley\"")
  expect_error(f(vcov = dd_conley(100), cutoff = 100), "carries its own")
  expect_error(f(vcov = dd_conley(100, kernel = "epanechnikov")), "kernel")
  expect_error(f(vcov = dd_conley(100), nboot = 99), "cannot be combined with Conley")
  d2 <- d; d2$lat[7] <- NA
  expect_error(did_twfe(d2, "y", "id", "time", "D", vcov = dd_conley(100)), "row 7 has NA")
  d3 <- d; d3$lat[3] <- 95
  expect_error(did_twfe(d3, "y", "id", "time", "D", vcov = dd_conley(100)), "within \\[-90, 90\\]; row 3 has 95")
  expect_error(did_bjs(d, "y", "id", "time", "first_treat", vcov = dd_conley(100)), "unused argument")
  d$yc <- stats::rpois(nrow(d), 2)
  expect_error(did_etwfe(d, "yc", "id", "time", "first_treat", family = "poisson", vcov = dd_conley(100)),
               "`family` = \"gaussian\"; got \"poisson\"")
  s <- d[d$time %in% c(1, 5), ]
  s$tr <- as.integer(s$first_treat > 0); s$po <- as.integer(s$time == 5)
  expect_error(did_2x2(s, "y", "tr", "po", vcov = dd_conley(100, lag = 1)), "panel form needs units and periods")
  before <- d
  invisible(did_twfe(d, "y", "id", "time", "D", vcov = "conley", cutoff = 100))
  expect_identical(d, before)
})

test_that("the Conley meat is the same bits on one and two threads, across the parallel throttle", {
  ns <- asNamespace("diffdiff")
  need_threads()
  old <- dd_threads()
  on.exit(dd_threads(old))
  for (n in c(2047, 2048, 2049, 9000)) {
    set.seed(n)
    S <- cbind(1, stats::rnorm(n)) * stats::rnorm(n)
    la <- stats::runif(n, 30, 50); lo <- stats::runif(n, -120, -80)
    dd_threads(1)
    a <- .Call(ns$C_conley_meat, S, la, lo, c(200, 1, 1, -1, 1), NULL, NULL, NULL, NULL)
    dd_threads(2)
    b <- .Call(ns$C_conley_meat, S, la, lo, c(200, 1, 1, -1, 1), NULL, NULL, NULL, NULL)
    expect_identical(a, b)
  }
})
