# did_lpdid() with covariates, regression adjustment, non-absorbing
# treatments, weights and survey designs, against (1) the fixest recipe
# built here (live peer: feols per horizon on the clean sample, weights as
# feols weights), and (2) the numbers diff-diff publishes for these cases
# on its test panels (regenerated bit for bit by helper-lpdid.R):
#  - benchmarks/data/lpdid_golden.json (igerber/diff-diff @ 08b6a663):
#    `direct_es` (feols(Dy ~ tdiff + x | time), CR1);
#  - benchmarks/data/lpdid_ra_stata_golden.json (@ 08b6a663): Stata 19
#    `teffects ra (Dy x i.time) (tdiff), atet vce(cluster unit)` (att, se, N);
#    tests/test_methodology_lpdid.py (@ ad053ffa) POOLED_RA_SE_PIN;
#  - benchmarks/data/lpdid_nonabsorbing_golden.json (@ 08b6a663): feols
#    reconstructions of Eq. 12 (first entry) and Eq. 13 (effect
#    stabilisation, L = 3), and tests/test_methodology_lpdid.py RW_SE_PIN
#    (the reweighted SEs with periods lacking treated rows dropped);
#  - benchmarks/data/lpdid_nonabsorbing_stata_golden.json (SSC lpdid 1.0.3,
#    Stata 19): nonabsorbing(, firsttreat notyet), VW and rw (Stata rounds
#    its reweighting factors to 1e-8, so the rw SEs are compared at 1e-7);
#  - benchmarks/data/lpdid_survey_golden.json (@ ad053ffa): svyglm on a
#    fresh svydesign per horizon (every PSU is in every horizon there, so
#    the domain variance used here is the same number).
# Published numbers carry 13 significant digits (16 for Stata's): compared
# at 1e-10.

lp_rows <- function(fit, terms) fit$coeftable[match(terms, fit$coeftable$term), ]
lp_terms <- function(hs) paste0("event::", hs)

test_that("covariates enter at the base row's period: diff-diff's direct_es and the fixest recipe", {
  d <- lp_panel60()
  fit <- did_lpdid(d, "y", "unit", "time", gname = "g", xformla = ~ x, pre_window = 3, post_window = 4)
  r <- lp_rows(fit, lp_terms(c(0:4, -2, -3)))
  expect_equal(r$estimate, c(2.876086144279, 3.217671119032, 3.571778263524, 3.969558831006, 4.268878161094,
                             0.1185563879358, -0.1239894706087), tolerance = 1e-10)
  expect_equal(r$std.error, c(0.4110153204559, 0.433940624349, 0.4571207641365, 0.3912243590417, 0.3995261701574,
                              0.442300060411, 0.4328879644821), tolerance = 1e-10)
  expect_identical(fit$covariates, "x")
  expect_identical(fit$method, "regression")
  need_peer("fixest")
  # the recipe, live, on the pooled windows too (diff-diff's golden has no pooled direct rows)
  key <- paste(d$unit, d$time); at <- function(k) d$y[match(paste(d$unit, d$time + k), key)]
  G <- ifelse(d$g == 0, Inf, d$g)
  one <- function(target, hc) {
    s <- data.frame(dy = target - at(-1), D = as.integer(d$time == G), tt = d$time, id = d$unit, x = d$x)
    s <- s[!is.na(s$dy) & (s$D == 1 | (d$time < G & (if (hc >= 0) d$time + hc < G else TRUE))), ]
    m <- fixest::feols(dy ~ D + x | tt, s, vcov = ~id, ssc = fixest::ssc(adj = TRUE, cluster.adj = TRUE))
    c(unname(stats::coef(m)["D"]), unname(fixest::se(m)["D"]))
  }
  post <- one(Reduce(`+`, lapply(0:4, at)) / 5, 4); pre <- one((at(-3) + at(-2)) / 2, -3)
  p <- lp_rows(fit, c("ATT", "pooled::pre"))
  expect_equal(p$estimate, c(post[1], pre[1]), tolerance = 1e-8)
  expect_equal(p$std.error, c(post[2], pre[2]), tolerance = 1e-6)
})

test_that("regression adjustment (reweight with covariates) equals Stata's teffects ra, clustered", {
  d <- lp_panel60()
  fit <- did_lpdid(d, "y", "unit", "time", gname = "g", xformla = ~ x, pre_window = 3, post_window = 4, reweight = TRUE)
  r <- lp_rows(fit, lp_terms(c(0:4, -2, -3)))
  expect_equal(r$estimate, c(2.888871838355342, 3.225268910679945, 3.5779502216280248, 3.973278128236954,
                             4.2651037814454096, 0.1204444745695894, -0.11970460945194859), tolerance = 1e-10)
  expect_equal(r$std.error, c(0.45516589747218866, 0.44522904812910252, 0.46179396866595729, 0.39295354484873846,
                              0.39398602601018534, 0.43592937799131937, 0.43296260860283592), tolerance = 1e-10)
  expect_identical(fit$horizons$n[match(lp_terms(c(0:4, -2, -3)), fit$horizons$term)],
                   c(522L, 461L, 401L, 353L, 305L, 461L, 401L))
  # POOLED_RA_SE_PIN (post, pre)
  expect_equal(lp_rows(fit, c("ATT", "pooled::pre"))$std.error, c(0.35917407532121975, 0.3785290141761256),
               tolerance = 1e-10)
  expect_identical(fit$method, "regression adjustment")
  expect_match(fit$vcov_label, "no small-sample factor")
  # t tests with G - 1 degrees of freedom
  expect_equal(r$p.value, 2 * stats::pt(-abs(r$estimate / r$std.error), 59), tolerance = 1e-12)
})

test_that("regression adjustment by hand: lm on the controls, the treated rows' mean residual, its influence function", {
  d <- utils::read.csv(system.file("extdata", "castle.csv", package = "diffdiff"))
  key <- paste(d$sid, d$year); at <- function(k) d$l_homicide[match(paste(d$sid, d$year + k), key)]
  G <- ifelse(d$effyear == 0, Inf, d$effyear)
  for (wn in list(NULL, "popwt")) {
    fit <- did_lpdid(d, "l_homicide", "sid", "year", gname = "effyear", xformla = ~ poverty + l_police,
                     pre_window = 2, post_window = 2, reweight = TRUE, weightsname = wn)
    for (h in c(-2, 0, 2)) {
      s <- data.frame(dy = at(h) - at(-1), D = d$year == G, tt = factor(d$year), id = d$sid, x1 = d$poverty,
                      x2 = d$l_police, w = if (is.null(wn)) 1 else d[[wn]])
      s <- s[!is.na(s$dy) & (s$D | (d$year < G & (if (h >= 0) d$year + h < G else TRUE))), ]
      c0 <- s[!s$D, ]; c1 <- s[s$D & s$tt %in% c0$tt, ]
      m <- stats::lm(dy ~ x1 + x2 + tt, c0, weights = w)
      r1 <- c1$dy - stats::predict(m, c1)
      tau <- sum(c1$w * r1) / sum(c1$w)
      X0 <- stats::model.matrix(m); X1 <- stats::model.matrix(~ x1 + x2 + tt, c1)[, colnames(X0)]
      # treated: w (r - tau) / W1; controls: -w x' (X0'W X0)^{-1} (sum_T w x / W1) e
      phi <- c(c1$w * (r1 - tau) / sum(c1$w),
               -c0$w * drop(X0 %*% solve(crossprod(X0, X0 * c0$w), colSums(X1 * c1$w) / sum(c1$w))) * stats::resid(m))
      se <- sqrt(sum(rowsum(phi, c(c1$id, c0$id))^2))
      r <- lp_rows(fit, paste0("event::", h))
      lab <- sprintf("weights %s, h = %d", wn %||% "none", h)
      expect_equal(r$estimate, tau, tolerance = 1e-10, label = lab)
      expect_equal(r$std.error, se, tolerance = 1e-10, label = lab)
    }
  }
})

test_that("non-absorbing, first entry: diff-diff's Eq. 12 goldens and Stata's nonabsorbing(, firsttreat notyet)", {
  d <- lp_panel_na()
  f <- function(...) did_lpdid(d, "y", "unit", "time", dname = "treat", pre_window = 3, post_window = 4,
                               non_absorbing = "first_entry", ...)
  vw <- f()
  terms <- c(lp_terms(c(-3, -2, 0:4)), "pooled::pre", "ATT")
  r <- lp_rows(vw, terms)
  # Stata lpdid 1.0.3 (att, se, N)
  expect_equal(r$estimate, c(-0.11058688194906449, -0.028508009716748425, 1.8468153374570833, 1.9174189184921464,
                             1.9541562370690497, 1.8430002097850104, 1.8651045890489937, -0.083163290352517599,
                             1.8463774549223959), tolerance = 1e-10)
  expect_equal(r$std.error, c(0.083864694854006674, 0.059950164863315426, 0.091536864444450375, 0.082514757717069953,
                              0.095995993613636657, 0.093215506869608694, 0.10344600862300475, 0.060216134633611737,
                              0.082239499731901228), tolerance = 1e-10)
  expect_identical(vw$horizons$n[match(terms, vw$horizons$term)], c(300L, 350L, 400L, 350L, 298L, 246L, 211L, 300L, 211L))
  rw <- lp_rows(f(reweight = TRUE), terms)
  expect_equal(rw$estimate, c(-0.10982753532939604, -0.027473431971800764, 1.8483385269860748, 1.9098467525590781,
                              1.9542651398293733, 1.844237043489463, 1.8646288450757691, -0.080380126038013866,
                              1.8500925875939953), tolerance = 1e-7)
  expect_equal(rw$std.error, c(0.085127249305807715, 0.059909786016452311, 0.093169339989145811, 0.082755294278197722,
                               0.095993108882509365, 0.094299729259659446, 0.10524070978446542, 0.061217606891681819,
                               0.082980268093888879), tolerance = 1e-7)
  expect_identical(f()$non_absorbing, "first_entry")
})

test_that("non-absorbing, effect stabilisation (L = 3): diff-diff's Eq. 13 goldens, VW and reweighted", {
  d <- lp_panel_na()
  f <- function(...) did_lpdid(d, "y", "unit", "time", dname = "treat", pre_window = 3, post_window = 4,
                               non_absorbing = "effect_stabilization", stabilization_window = 3, ...)
  terms <- lp_terms(c(0:4, -2, -3))
  vw <- lp_rows(f(), terms)
  expect_equal(vw$estimate, c(1.851991243051, 1.921104469807, 1.929898604367, 1.913731884109, 1.886119926793,
                              -0.08778777268896, -0.1105312033519), tolerance = 1e-10)
  expect_equal(vw$std.error, c(0.07114522249739, 0.06702437575657, 0.07968483555297, 0.07652544247632,
                               0.09228264962342, 0.04731311562096, 0.06317647498563), tolerance = 1e-10)
  fr <- f(reweight = TRUE)
  rw <- lp_rows(fr, terms)
  expect_equal(rw$estimate, c(1.854916933798, 1.919465194082, 1.933380912538, 1.915912905771, 1.886338871188,
                              -0.08271702126404, -0.1074628208957), tolerance = 1e-10)
  # RW_SE_PIN: periods without a treated row get no weight and leave the sample
  expect_equal(rw$std.error, c(0.07250480396311137, 0.06781253723720812, 0.08001875551196519, 0.07730466850470008,
                               0.09296215631711323, 0.04782093937871335, 0.0645474561163424), tolerance = 1e-10)
  expect_identical(fr$stabilization_window, 3L)
})

test_that("non-absorbing, effect stabilisation: the fixest recipe on the Eq. 13 sample, written out here", {
  need_peer("fixest")
  d <- lp_panel_na(); L <- 2
  fit <- did_lpdid(d, "y", "unit", "time", dname = "treat", pre_window = 3, post_window = 2,
                   non_absorbing = "effect_stabilization", stabilization_window = L)
  d <- d[order(d$unit, d$time), ]
  key <- paste(d$unit, d$time); at <- function(v, k) v[match(paste(d$unit, d$time + k), key)]
  dD <- d$treat - ifelse(d$time == 1, 0, at(d$treat, -1))                   # D before the panel: 0
  lagD <- function(k) { v <- at(dD, -k); v[is.na(v) & d$time - k < 1] <- 0; v }   # no change before the panel
  lagL <- function(k) { v <- at(d$treat, -k); v[is.na(v) & d$time - k < 1] <- 0; v }
  for (h in c(-3, -2, 0, 1, 2)) {
    m <- if (h < 0) max(L, -h) else L
    untreated_before <- Reduce(`&`, lapply(1:m, function(k) lagL(k) == 0))
    stable_before <- Reduce(`&`, lapply(1:m, function(k) lagD(k) == 0))
    stable_after <- if (h > 0) Reduce(`&`, lapply(1:h, function(k) !is.na(at(dD, k)) & at(dD, k) == 0)) else TRUE
    tr <- dD == 1 & untreated_before & stable_after
    ctrl <- if (h >= 0) dD == 0 & stable_before & stable_after else !tr & stable_before
    s <- data.frame(dy = at(d$y, h) - at(d$y, -1), D = as.integer(tr), tt = d$time, id = d$unit)
    s <- s[!is.na(s$dy) & (tr | ctrl), ]
    mm <- fixest::feols(dy ~ D | tt, s, vcov = ~id, ssc = fixest::ssc(adj = TRUE, cluster.adj = TRUE))
    r <- lp_rows(fit, paste0("event::", h))
    expect_equal(r$estimate, unname(stats::coef(mm)["D"]), tolerance = 1e-8)
    expect_equal(r$std.error, unname(fixest::se(mm)["D"]), tolerance = 1e-6)
    expect_identical(fit$horizons$n[fit$horizons$term == paste0("event::", h)], nrow(s))
  }
})

test_that("survey designs: diff-diff's svyglm goldens (strata, PSUs, fpc; weights only; a covariate; pooled)", {
  d <- lp_panel_svy()
  f <- function(des, ...) did_lpdid(d, "y", "unit", "time", gname = "g", pre_window = 3, post_window = 4,
                                    survey = des, ...)
  terms <- lp_terms(c(0:4, -2, -3))
  est <- c(2.624112557921, 2.593986037014, 3.579941778181, 4.008222869028, 3.882316481629, -0.05518985932683,
           -0.2829634020839)
  full <- f(survey_design(d, ids = ~psu, strata = ~stratum, fpc = ~fpc, weights = ~weight))
  r <- lp_rows(full, terms)
  expect_equal(r$estimate, est, tolerance = 1e-10)
  expect_equal(r$std.error, c(0.1849191460497, 0.2126289257184, 0.1691561916473, 0.250331727805, 0.1803068275608,
                              0.1164062358211, 0.1941367665957), tolerance = 1e-10)
  expect_equal(lp_rows(full, c("ATT", "pooled::pre"))$estimate, c(3.359136633265, -0.1690766307054), tolerance = 1e-10)
  expect_equal(lp_rows(full, c("ATT", "pooled::pre"))$std.error, c(0.1779718319795, 0.1518511686767), tolerance = 1e-10)
  # df = 14 PSUs - 4 strata
  expect_equal(r$p.value, 2 * stats::pt(-abs(r$estimate / r$std.error), 10), tolerance = 1e-12)
  expect_identical(full$vcov_type, "survey")
  nofpc <- lp_rows(f(survey_design(d, ids = ~psu, strata = ~stratum, weights = ~weight)), terms)
  expect_equal(nofpc$std.error, c(0.2615151642859, 0.3007027105038, 0.239222980387, 0.3540225245542, 0.2549923609249,
                                  0.164623277443, 0.2745508482749), tolerance = 1e-10)
  inj <- f(survey_design(d, ids = ~unit, weights = ~weight))
  expect_equal(lp_rows(inj, terms)$std.error, c(0.2261150339971, 0.2465200278538, 0.1967625151687, 0.2635749111488,
                                                 0.2716230812718, 0.2152559315853, 0.2495231661023), tolerance = 1e-10)
  expect_equal(lp_rows(inj, c("ATT", "pooled::pre"))$std.error, c(0.1905486610436, 0.2138738768941), tolerance = 1e-10)
  cv <- f(survey_design(d, ids = ~psu, strata = ~stratum, fpc = ~fpc, weights = ~weight), xformla = ~ x)
  r <- lp_rows(cv, terms)
  expect_equal(r$estimate, c(2.647898017603, 2.593494237233, 3.577209310476, 4.007497877233, 3.878643429977,
                             -0.05792998040707, -0.2864951132323), tolerance = 1e-10)
  expect_equal(r$std.error, c(0.1936410644549, 0.2131448643148, 0.1711510921869, 0.2516503255828, 0.1799400438737,
                              0.1173984619161, 0.1950637839557), tolerance = 1e-10)
  expect_equal(lp_rows(cv, c("ATT", "pooled::pre"))$std.error, c(0.1834087011598, 0.1528219754753), tolerance = 1e-10)
  # a survey package design gives the same numbers
  need_peer("survey")
  sd <- survey::svydesign(ids = ~psu, strata = ~stratum, fpc = ~fpc, weights = ~weight, data = d)
  expect_equal(f(sd)$coeftable, full$coeftable, tolerance = 1e-12)
})

test_that("sampling weights: feols with weights (VW); reweighting by W_t / W^C_t by hand", {
  need_peer("fixest")
  d <- utils::read.csv(system.file("extdata", "castle.csv", package = "diffdiff"))
  fit <- did_lpdid(d, "l_homicide", "sid", "year", gname = "effyear", pre_window = 2, post_window = 2,
                   weightsname = "popwt")
  fr <- did_lpdid(d, "l_homicide", "sid", "year", gname = "effyear", pre_window = 2, post_window = 2,
                  weightsname = "popwt", reweight = TRUE)
  key <- paste(d$sid, d$year); at <- function(k) d$l_homicide[match(paste(d$sid, d$year + k), key)]
  G <- ifelse(d$effyear == 0, Inf, d$effyear)
  for (h in c(-2, 0, 2)) {
    s <- data.frame(dy = at(h) - at(-1), D = as.integer(d$year == G), tt = d$year, id = d$sid, w = d$popwt)
    s <- s[!is.na(s$dy) & (s$D == 1 | (d$year < G & (if (h >= 0) d$year + h < G else TRUE))), ]
    m <- fixest::feols(dy ~ D | tt, s, weights = ~w, vcov = ~id, ssc = fixest::ssc(adj = TRUE, cluster.adj = TRUE))
    r <- lp_rows(fit, paste0("event::", h))
    expect_equal(r$estimate, unname(stats::coef(m)["D"]), tolerance = 1e-8)
    expect_equal(r$std.error, unname(fixest::se(m)["D"]), tolerance = 1e-6)
    Wt <- stats::ave(s$w, s$tt, FUN = sum); Wc <- stats::ave(s$w * (1 - s$D), s$tt, FUN = sum)
    n1 <- stats::ave(s$D, s$tt, FUN = sum)
    s2 <- s[n1 > 0 & Wc > 0, ]; s2$rw <- (s$w * Wt / Wc)[n1 > 0 & Wc > 0]
    m2 <- fixest::feols(dy ~ D | tt, s2, weights = ~rw, vcov = ~id, ssc = fixest::ssc(adj = TRUE, cluster.adj = TRUE))
    r2 <- lp_rows(fr, paste0("event::", h))
    expect_equal(r2$estimate, unname(stats::coef(m2)["D"]), tolerance = 1e-8)
    expect_equal(r2$std.error, unname(fixest::se(m2)["D"]), tolerance = 1e-6)
    # the equally weighted estimand: the treated rows' weighted mean of the per-period contrasts
    pc <- vapply(split(s2, s2$tt), function(z) stats::weighted.mean(z$dy[z$D == 1], z$w[z$D == 1]) -
                   stats::weighted.mean(z$dy[z$D == 0], z$w[z$D == 0]), 0)
    w1 <- vapply(split(s2, s2$tt), function(z) sum(z$w[z$D == 1]), 0)
    expect_equal(r2$estimate, sum(pc * w1) / sum(w1), tolerance = 1e-10)
  }
})

test_that("Conley's variance: each horizon equals fixest's conley() on the recipe, the covariance across horizons by hand", {
  need_peer("fixest")
  d <- utils::read.csv(system.file("extdata", "castle.csv", package = "diffdiff"))
  set.seed(2)
  u <- sort(unique(d$sid))
  d$lat <- stats::runif(length(u), 28, 48)[match(d$sid, u)]; d$lon <- stats::runif(length(u), -120, -72)[match(d$sid, u)]
  fit <- did_lpdid(d, "l_homicide", "sid", "year", gname = "effyear", pre_window = 2, post_window = 2,
                   vcov = dd_conley(500))
  key <- paste(d$sid, d$year); at <- function(k) d$l_homicide[match(paste(d$sid, d$year + k), key)]
  G <- ifelse(d$effyear == 0, Inf, d$effyear)
  sc <- list()
  for (h in c(-2, 0, 1, 2)) {
    s <- data.frame(dy = at(h) - at(-1), D = as.integer(d$year == G), tt = d$year, id = d$sid, lat = d$lat,
                    lon = d$lon, cell = key)
    s <- s[!is.na(s$dy) & (s$D == 1 | (d$year < G & (if (h >= 0) d$year + h < G else TRUE))), ]
    m <- fixest::feols(dy ~ D | tt, s, vcov = fixest::conley(500, distance = "spherical"))
    r <- lp_rows(fit, paste0("event::", h))
    expect_equal(r$estimate, unname(stats::coef(m)["D"]), tolerance = 1e-8)
    expect_equal(r$std.error, as.vector(fixest::se(m)["D"]), tolerance = 1e-8)
    expect_equal(r$p.value, as.vector(fixest::pvalue(m)["D"]), tolerance = 1e-8)
    Dt <- fixest::demean(s$D, s$tt)[, 1]
    n <- nrow(s); k <- 1 + length(unique(s$tt))
    sc[[as.character(h)]] <- stats::setNames(Dt * stats::resid(m) / sum(Dt^2) * sqrt(n / (n - k)), s$cell)
  }
  # horizons 0 and 1: sum over pairs of cells within 500 km (the units' places, all periods) of s0_i s1_j
  a <- sc[["0"]]; b <- sc[["1"]]
  pa <- match(names(a), key); pb <- match(names(b), key)
  hav <- function(i, j) {
    r <- pi / 180
    h <- sin((d$lat[j] - d$lat[i]) * r / 2)^2 + cos(d$lat[i] * r) * cos(d$lat[j] * r) * sin((d$lon[j] - d$lon[i]) * r / 2)^2
    12752 * asin(pmin(sqrt(h), 1))
  }
  W <- outer(pa, pb, function(i, j) hav(i, j) <= 500)
  expect_equal(fit$vcov["event::0", "event::1"], drop(a %*% W %*% b), tolerance = 1e-10)
  expect_identical(fit$vcov_type, "conley")
  expect_error(did_lpdid(d, "l_homicide", "sid", "year", gname = "effyear", pre_window = 2, post_window = 2,
                         vcov = dd_conley(500), cluster = "state"), "does not combine with `cluster`")
  expect_error(did_lpdid(d, "l_homicide", "sid", "year", gname = "effyear", pre_window = 2, post_window = 2,
                         vcov = "hetero"), "did_lpdid\\(\\) clusters its standard errors")
})
