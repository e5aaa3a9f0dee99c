# did_sdid() against synthdid 0.0.9 (GitHub only, not installable from CRAN,
# so compared through numbers it produced).
# Prop 99: ../shared/reference/README.md (synthdid_estimate / sc_estimate /
# did_estimate on panel.matrices(california_prop99); placebo SEs with
# set.seed(12345) and 200 replications). Panels A and B: printed by
# tools/sdid-reference.R with synthdid 0.0.9 installed (estimates, weights
# and coefficients from synthdid_estimate(), sc_estimate(), did_estimate();
# SEs from vcov(method = ...) with set.seed(12345) before placebo and
# bootstrap, 50 replications). Tolerances from issue #4: estimates 1e-8,
# weights 1e-6, placebo (and bootstrap) SEs 1e-6, jackknife SEs 1e-8.

rel <- function(a, b) max(abs(a - b) / pmax(abs(b), 1e-12))
prop99 <- function() read.csv(system.file("extdata", "california_prop99.csv", package = "diffdiff"), sep = ";")

test_that("Prop 99: estimates, weights and placebo SEs equal synthdid's", {
  d <- prop99()
  ref_est <- c(sdid = -15.6038278727, sc = -19.6196634709, did = -27.3491110836)
  ref_se <- c(sdid = 8.367993, sc = 9.917426, did = 17.740267)
  for (m in names(ref_est)) {
    set.seed(12345)
    f <- did_sdid(d, "PacksPerCapita", "State", "Year", "treated", method = m, se = "placebo", nboot = 200)
    expect_lt(rel(unname(coef(f)), ref_est[[m]]), 1e-8)
    # the reference SEs are given to 7 significant digits (rounding < 1e-7 relative)
    expect_lt(rel(f$coeftable$std.error, ref_se[[m]]), 1e-6)
  }
  f <- did_sdid(d, "PacksPerCapita", "State", "Year", "treated", se = "none")
  expect_equal(unname(f$lambda[c("1986", "1987", "1988")]), c(0.3664706, 0.2064531, 0.4270763), tolerance = 1e-6)
  expect_equal(sum(f$lambda[setdiff(names(f$lambda), c("1986", "1987", "1988"))]), 0)
  top <- sort(f$omega, decreasing = TRUE)[1:5]
  expect_equal(names(top), c("Nevada", "New Hampshire", "Connecticut", "Delaware", "Colorado"))
  expect_lt(max(abs(unname(top) - c(0.1244892, 0.1050476, 0.07828729, 0.07036812, 0.05751279))), 1e-6)
  expect_equal(f$fits[[1]]$noise_level, 5.494401, tolerance = 1e-6)
  expect_equal(f$fits[[1]]$zeta_omega, 10.22623, tolerance = 1e-6)
  expect_warning(j <- did_sdid(d, "PacksPerCapita", "State", "Year", "treated", se = "jackknife"),
                 "one treated unit")
  expect_true(is.na(j$coeftable$std.error))
})

ref_A <- list(
  sdid = c(est = 1.96654341016, placebo = 0.160811971813, bootstrap = 0.122840677148, jackknife = 0.112108017286),
  sc = c(est = 1.8721569943, placebo = 0.208077606023, bootstrap = 0.44448016085, jackknife = 1.39561528674),
  did = c(est = 1.60616061235, placebo = 0.281748402141, bootstrap = 0.243051039806, jackknife = 0.321585365027))
lambda_A <- c(0.0489431378877, 0.145566357692, 0.0626290094331, 0.0144872605254, 0.185203586643, 0,
              0.0828315858366, 0.150270531672, 0, 0.305396985142, 0.00467154516955, 0)
omega_A <- c(0.0215903515535, 0.0672448989561, 0.027565763275, 0.0143387672839, 0.0460143248289,
             0.0851492489802, 0.0752362091947, 0, 0.066576482207, 0.00538736148491, 0.0532167267127,
             0.015684926799, 0.0794056218157, 0, 0.0156116382586, 0.00566010602316, 0.0131566716696,
             0.0455600500407, 0, 0, 0.0134598966738, 0.070734133648, 0.0367203336139, 0.000340887428717,
             0.0605387191398, 0, 0.0367162549516, 0.0243295763451, 0.0560360528948, 0.0637249962208)

test_that("panel A (several treated units): every method and variance equals synthdid", {
  d <- sim_sdid_panel()
  for (m in names(ref_A)) for (se in c("placebo", "bootstrap", "jackknife")) {
    set.seed(12345)
    f <- did_sdid(d, "y", "unit", "time", "treat", method = m, se = se, nboot = 50)
    expect_lt(rel(unname(coef(f)), ref_A[[m]][["est"]]), 1e-8)
    expect_lt(rel(f$coeftable$std.error, ref_A[[m]][[se]]), if (se == "jackknife") 1e-8 else 1e-6)
  }
  f <- did_sdid(d, "y", "unit", "time", "treat", se = "none")
  expect_lt(max(abs(unname(f$lambda) - lambda_A)), 1e-6)
  expect_lt(max(abs(unname(f$omega) - omega_A)), 1e-6)
  expect_equal(names(f$omega), sprintf("u%02d", 1:30))
})

ref_B <- list(sdid = c(est = 1.8707838403, placebo = 0.193123504495, bootstrap = 0.173932544838,
                       jackknife = 0.122455705288),
              sc = c(est = 2.51647823366, placebo = 0.443146389086, bootstrap = 0.366045444174,
                     jackknife = 2.01164682026),
              did = c(est = 1.87615727808))
lambda_B <- c(0.00026036423295, 0.156875237709, 0.151122438119, 0.00026036423295, 0.00026036423295,
              0.00026036423295, 0.171325299989, 0.116006251839, 0.24736837573, 0.156260939682)
beta_B <- c(1.1360397339, -0.225842309594)

test_that("panel B (time-varying covariates): estimates, beta and SEs equal synthdid", {
  d <- sim_sdid_panel(N0 = 25, N1 = 4, T0 = 10, T1 = 5, seed = 202, covariates = TRUE)
  # (synthdid's did_estimate() variances with covariates were not run: each
  # replication iterates the covariate coefficients 10,000 times in R)
  for (m in names(ref_B)) for (se in c(setdiff(names(ref_B[[m]]), "est"), if (m == "did") "none")) {
    set.seed(12345)
    f <- did_sdid(d, "y", "unit", "time", "treat", method = m, se = se, nboot = 50, xformla = ~ x1 + x2)
    expect_lt(rel(unname(coef(f)), ref_B[[m]][["est"]]), 1e-8)
    if (se != "none") expect_lt(rel(f$coeftable$std.error, ref_B[[m]][[se]]), if (se == "jackknife") 1e-8 else 1e-6)
  }
  f <- did_sdid(d, "y", "unit", "time", "treat", se = "none", xformla = ~ x1 + x2)
  expect_lt(max(abs(unname(f$lambda) - lambda_B)), 1e-6)
  expect_lt(rel(f$fits[[1]]$beta, beta_B), 1e-6)
})

test_that("replications are reproducible and identical for 1 and 2 threads", {
  d <- sim_sdid_panel()
  run <- function(se) { set.seed(9); did_sdid(d, "y", "unit", "time", "treat", se = se, nboot = 30)$coeftable }
  old <- dd_threads()
  on.exit(dd_threads(old, throttle = 65536))
  ses <- c("placebo", "bootstrap", "jackknife")
  dd_threads(1)
  a <- lapply(ses, run)
  for (i in seq_along(ses)) expect_identical(a[[i]], run(ses[i]))
  need_threads(2)
  dd_threads(2, throttle = 1)
  for (i in seq_along(ses)) expect_identical(a[[i]], run(ses[i]))
})

test_that("the caller's data is not modified and row order does not matter", {
  d <- sim_sdid_panel()
  d0 <- d
  f1 <- did_sdid(d, "y", "unit", "time", "treat", se = "none")
  expect_identical(d, d0)
  set.seed(1)
  f2 <- did_sdid(d[sample(nrow(d)), ], "y", "unit", "time", "treat", se = "none")
  expect_identical(coef(f1), coef(f2))
})

test_that("staggered adoption: cohort fits on the never-treated controls, cell-weighted average", {
  d <- sim_sdid_panel(N0 = 30, N1 = 6)
  late <- d$unit %in% c("u34", "u35", "u36")
  d$treat[late & d$time < 2015] <- 0          # cohorts 2013 (3 units) and 2015 (3 units)
  f <- did_sdid(d, "y", "unit", "time", "treat", staggered = TRUE, se = "none")
  a <- did_sdid(d[!late, ], "y", "unit", "time", "treat", se = "none")
  b <- did_sdid(d[!(d$unit %in% c("u31", "u32", "u33")), ], "y", "unit", "time", "treat", se = "none")
  expect_equal(unname(coef(f))[1:2], unname(c(coef(a), coef(b))), tolerance = 1e-12)
  w <- c(3 * 6, 3 * 4)                          # treated units x post-periods (T = 18)
  expect_equal(unname(coef(f))[3], sum(w * coef(f)[1:2]) / sum(w), tolerance = 1e-12)
  # one cohort: the staggered path is the block estimator
  g <- did_sdid(d[!late, ], "y", "unit", "time", "treat", staggered = TRUE, se = "none")
  expect_identical(coef(g), coef(a))
  for (se in c("placebo", "bootstrap", "jackknife")) {
    set.seed(2)
    s <- did_sdid(d, "y", "unit", "time", "treat", staggered = TRUE, se = se, nboot = 40)
    expect_true(all(is.finite(s$coeftable$std.error)))
    expect_equal(diag(vcov(s)), s$coeftable$std.error^2, ignore_attr = TRUE)
  }
})

test_that("diagnostics: effective controls, in-time placebo, leave-one-out, sensitivity", {
  d <- prop99()
  f <- did_sdid(d, "PacksPerCapita", "State", "Year", "treated", se = "none")
  dg <- sdid_diagnostics(f)
  expect_equal(dg$weights[["effective_controls"]], 1 / sum(f$omega^2))
  expect_equal(dg$weights[["top5_share"]], sum(sort(f$omega, decreasing = TRUE)[1:5]))
  # the sensitivity grid at multiple 1 reproduces the fit
  expect_equal(dg$sensitivity$estimate[dg$sensitivity$multiple == 1], unname(coef(f)), tolerance = 1e-12)
  # leave-one-out of a control equals a fit without it
  nv <- did_sdid(d[d$State != "Nevada", ], "PacksPerCapita", "State", "Year", "treated", se = "none")
  expect_equal(dg$leave_one_out$estimate[dg$leave_one_out$unit == "Nevada"], unname(coef(nv)), tolerance = 1e-12)
  # in-time placebo: pre-periods only, the last ones as fake treatment, the fit's options
  expect_equal(dg$placebo_time$periods, as.character(1981:1988))
  expect_true(is.finite(dg$placebo_time$estimate))
  w <- sdid_weights(f, mass = 0.9)
  expect_true(sum(w$omega$weight) >= 0.9 && sum(w$omega$weight[-nrow(w$omega)]) < 0.9)
  expect_silent(plot(f)); expect_silent(plot(f, type = "weights"))
})

test_that("diagnostics: the jackknife leave-one-out holds the weights fixed and equals the hand computation", {
  d <- prop99()
  f <- did_sdid(d, "PacksPerCapita", "State", "Year", "treated", se = "none")   # one treated unit
  dj <- sdid_diagnostics(f, loo = "jackknife")
  dr <- sdid_diagnostics(f)
  expect_identical(dj$loo, "jackknife"); expect_identical(dr$loo, "refit")
  l <- dj$leave_one_out
  expect_identical(l[, c("unit", "role", "weight")], dr$leave_one_out[, c("unit", "role", "weight")])
  # by hand from the fit's weights: each control's contrast y_i' (-lambda, 1/T1)
  # over the periods, the treated mean minus the renormalised omega average
  w <- f$fits[[1]]
  Y <- w$Y; N0 <- w$N0; T0 <- w$T0; T1 <- ncol(Y) - T0
  cvec <- drop(Y %*% c(-w$lambda, rep(1 / T1, T1)))
  om <- w$omega
  hand <- vapply(l$unit, function(u) {
    i <- match(u, rownames(Y)); keep <- setdiff(seq_len(N0), i)
    mean(cvec[(N0 + 1):nrow(Y)]) - sum(om[keep] * cvec[keep]) / sum(om[keep])
  }, numeric(1))
  expect_equal(l$estimate, unname(hand), tolerance = 1e-12)
  expect_equal(l$change, l$estimate - unname(coef(f)[1]), tolerance = 1e-14)
  # the path: the fixed-weight values differ from the re-solved ones
  expect_gt(max(abs(l$estimate - dr$leave_one_out$estimate)), 1e-4)
  expect_error(sdid_diagnostics(f, loo = "fixed"), "`loo` must be one of .*\"fixed\"")
  # more than one treated unit: treated rows too, and with the zero-weight
  # controls (whose estimate is the full one) the jackknife SE of the fit
  set.seed(7)
  dd <- diffdiff::dd_sim_factor(n_units = 40, n_periods = 10, n_treated = 6, first_treat = 7, effect = 1)
  g <- did_sdid(dd, "y", "id", "time", "D", se = "jackknife")
  gj <- sdid_diagnostics(g, loo = "jackknife")$leave_one_out
  # read from the jackknife fit, the same as computed from a fit without SEs
  expect_identical(diffdiff:::dd_reuse$sdid_loo_path, "stored")
  g0 <- sdid_diagnostics(did_sdid(dd, "y", "id", "time", "D", se = "none"), loo = "jackknife")$leave_one_out
  expect_identical(diffdiff:::dd_reuse$sdid_loo_path, "computed")
  expect_equal(gj$estimate, g0$estimate, tolerance = 1e-14)
  expect_true(all(c("control", "treated") %in% gj$role))
  p <- g$fits[[1]]
  zero <- sum(p$omega == 0)
  est <- c(gj$estimate, rep(unname(coef(g)[1]), zero))
  nn <- length(est)
  expect_equal(nn, nrow(p$Y))
  expect_equal(sqrt((nn - 1) / nn * sum((est - mean(est))^2)), g$coeftable$std.error[1], tolerance = 1e-10)
})
