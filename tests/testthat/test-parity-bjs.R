# did_bjs() against didimputation::did_imputation() (live, CRAN 0.5.1):
# static ATT, event-study horizons and pre-trend coefficients; estimates to
# 1e-8 and standard errors to 1e-6 (relative). didimputation's first stage is
# fixest::feols with its default fixed-effect tolerance (1e-6), which moves
# its estimates by ~1e-8; the tests tighten it to 1e-11 (a global fixest
# option, restored afterwards) so that the comparison measures the methods.
bjs_peer <- function(...) {
  old <- fixest::getFixest_estimation()
  fixest::setFixest_estimation(fixef.tol = 1e-11)
  on.exit(fixest::setFixest_estimation(reset = TRUE))
  as.data.frame(didimputation::did_imputation(...))
}

bjs_check <- function(ref, f) {
  term <- ifelse(ref$term == "treat", "ATT", paste0("event::", ref$term))
  m <- match(term, f$coeftable$term)
  expect_false(anyNA(m))
  expect_lt(rel_diff(f$coeftable$estimate[m], ref$estimate), 1e-8)
  expect_lt(rel_diff(f$coeftable$std.error[m], ref$std.error), 1e-6)
}

test_that("static ATT, all horizons and all leads equal didimputation's (df_het)", {
  need_peer("didimputation")
  d <- het_data(); d0 <- d
  f <- did_bjs(d, "dep_var", "unit", "year", "g")
  expect_identical(d, d0)
  bjs_check(bjs_peer(d, "dep_var", "g", "year", "unit"), f)
  bjs_check(bjs_peer(d, "dep_var", "g", "year", "unit", horizon = TRUE, pretrends = TRUE), f)
  expect_equal(f$event_study$reference, -1)
  expect_equal(sum(grepl("^event::-", f$coeftable$term)), 19)
})

test_that("covariates, clustering by state, chosen horizons and leads equal didimputation's", {
  need_peer("didimputation")
  d <- het_data()
  ref <- bjs_peer(d, "y2", "g", "year", "unit", first_stage = ~ x | unit + year, horizon = c(0, 1, 2, 5),
                  pretrends = -3:-1, cluster_var = "state")
  f <- did_bjs(d, "y2", "unit", "year", "g", xformla = ~ x, horizon = c(0, 1, 2, 5), pretrends = -3:-1,
               cluster = "state")
  bjs_check(ref, f)
  bjs_check(bjs_peer(d, "y2", "g", "year", "unit", first_stage = ~ x | unit + year, cluster_var = "state"), f)
  expect_equal(f$n_clusters, length(unique(d$state)))
  expect_equal(unname(f$first_stage["x"]), 0.5, tolerance = 0.05)
})

test_that("weighted estimates equal didimputation's; weighted SEs follow the exact imputation weights", {
  need_peer("didimputation")
  d <- het_data()
  f <- did_bjs(d, "dep_var", "unit", "year", "g", weightsname = "w", pretrends = FALSE)
  ref <- rbind(bjs_peer(d, "dep_var", "g", "year", "unit", wname = "w", horizon = TRUE),
               bjs_peer(d, "dep_var", "g", "year", "unit", wname = "w"))
  m <- match(ifelse(ref$term == "treat", "ATT", paste0("event::", ref$term)), f$coeftable$term)
  expect_lt(rel_diff(f$coeftable$estimate[m], ref$estimate), 1e-8)
  # didimputation forms the untreated weights as -w z'(Z0'W^2 Z0)^- Z1'W w*,
  # not the estimator's derivative -w z'(Z0'W Z0)^- Z1' w* (see the next
  # test); with non-constant weights its SEs differ from ours by < 1% here
  d_se <- abs(f$coeftable$std.error[m] / ref$std.error - 1)
  expect_gt(max(d_se), 1e-4)
  expect_lt(max(d_se), 0.02)
  # constant weights: the two coincide
  d$w2 <- 3
  bjs_check(bjs_peer(d, "dep_var", "g", "year", "unit", wname = "w2", horizon = TRUE),
            did_bjs(d, "dep_var", "unit", "year", "g", weightsname = "w2", pretrends = FALSE))
})

for (wv in c("unit", "row")) test_that(sprintf("imputation weights are the derivative of the estimates; SE from them (weights by %s)", wv), {
  # weights constant within units: period indicators as cells; varying: dense columns
  d <- sim_panel()
  d <- d[d$id <= 60, ]
  if (wv == "row") d$w <- d$w * (1 + (d$year %% 4) / 3)
  opts <- diffdiff:::dd_fe_opts()
  idc <- diffdiff:::dd_codes(d$id); tc <- diffdiff:::dd_codes(d$year)
  D <- d$first_treat > 0 & d$year >= d$first_treat
  X <- cbind(x1 = d$x1)
  est_of <- function(y) {
    fs <- diffdiff:::dd_impute_fit(y, X, idc, tc, D, d$w, opts)
    tr <- which(D)
    Wt <- cbind(h0 = (d$year - d$first_treat)[tr] == 0, all = 1) * d$w[tr]
    Wt <- sweep(Wt, 2, colSums(Wt), "/")
    list(est = colSums(Wt * fs$adj[tr]), fs = fs, Wt = Wt, tr = tr)
  }
  base <- est_of(d$y)
  u <- base$fs$untreated
  v <- diffdiff:::dd_impute_v(base$fs, idc[base$tr], tc[base$tr], X[base$tr, , drop = FALSE], base$Wt)
  # the estimator is linear in y: a unit change in an untreated outcome moves it by v
  fd <- t(vapply(u, function(i) { y <- d$y; y[i] <- y[i] + 1; est_of(y)$est - base$est }, numeric(2)))
  expect_lt(max(abs(fd - v)), 1e-10)
  # the variance from these derivatives equals did_bjs's
  tau <- base$fs$adj[base$tr]
  cell <- paste(d$first_treat[base$tr], d$year[base$tr])
  eps1 <- sapply(1:2, function(j) {
    a <- base$Wt[, j]^2
    tau - ave(a * tau, cell, FUN = sum) / ifelse(ave(a, cell, FUN = sum) > 0, ave(a, cell, FUN = sum), 1) *
      (ave(a, cell, FUN = sum) > 0)
  })
  psi <- matrix(0, nrow(d), 2)
  psi[u, ] <- fd * base$fs$adj[u]
  psi[base$tr, ] <- base$Wt * eps1
  se <- sqrt(colSums(rowsum(psi, d$id)^2))
  f <- did_bjs(d, "y", "id", "year", "first_treat", xformla = ~ x1, weightsname = "w", horizon = 0,
               pretrends = FALSE)
  expect_lt(rel_diff(f$coeftable$std.error, se), 1e-10)
  expect_lt(rel_diff(f$coeftable$estimate, base$est), 1e-12)
})

test_that("invariants: exact DGP, horizons average to the ATT, row order, vcov", {
  d <- sim_panel()
  f <- did_bjs(d, "y", "id", "year", "first_treat", pretrends = FALSE)
  post <- f$coeftable[!is.na(f$coeftable$event), ]
  D <- d$first_treat > 0 & d$year >= d$first_treat
  n_h <- table(factor((d$year - d$first_treat)[D], levels = post$event))
  expect_equal(sum(post$estimate * n_h) / sum(n_h), unname(f$coefficients["ATT"]), tolerance = 1e-12)
  expect_equal(sqrt(diag(vcov(f))), f$coeftable$std.error, ignore_attr = TRUE)
  set.seed(3)
  f2 <- did_bjs(d[sample(nrow(d)), ], "y", "id", "year", "first_treat", pretrends = FALSE)
  expect_equal(f2$coeftable, f$coeftable, tolerance = 1e-10)
  # no noise, constant effect 2: every estimate is 2, every lead 0
  d$y0 <- d$id / 10 + (d$year - 2000)^1.5 + 2 * D
  g <- did_bjs(d, "y0", "id", "year", "first_treat")
  post <- !is.na(g$coeftable$event) & g$coeftable$event >= 0 | g$coeftable$term == "ATT"
  expect_lt(max(abs(g$coeftable$estimate[post] - 2)), 1e-9)
  expect_lt(max(abs(g$coeftable$estimate[!post])), 1e-9)
  expect_true(is.data.frame(g$pretest) && g$pretest$df1 == sum(!post))
})

test_that("survey design with PSU = unit and equal weights: G/(G-1) times the clustered variance", {
  d <- sim_panel()
  d$w1 <- 2
  des <- survey_design(d, weights = ~ w1, ids = ~ id)
  f <- did_bjs(d, "y", "id", "year", "first_treat", survey = des)
  g <- did_bjs(d, "y", "id", "year", "first_treat", weightsname = "w1")
  G <- length(unique(d$id))
  post <- !is.na(f$coeftable$event) & f$coeftable$event >= 0
  expect_equal(f$coeftable$estimate, g$coeftable$estimate, tolerance = 1e-12)
  expect_equal(f$coeftable$std.error[post], g$coeftable$std.error[post] * sqrt(G / (G - 1)), tolerance = 1e-10)
})

test_that("bad input names the argument and value", {
  d <- sim_panel()
  expect_error(did_bjs(d, "y", "id", "year", "first_treat", horizon = -1), "`horizon`.*-1")
  expect_error(did_bjs(d, "y", "id", "year", "first_treat", horizon = 50), "`horizon` = 50.*no treated")
  expect_message(f <- did_bjs(d, "y", "id", "year", "first_treat", horizon = c(0, 50)), "`horizon` 50 dropped")
  expect_equal(sum(!is.na(f$coeftable$event) & f$coeftable$event >= 0), 1)
  expect_error(did_bjs(d, "y", "id", "year", "first_treat", pretrends = 2), "`pretrends`.*2")
  expect_error(did_bjs(d, "y", "id", "year", "first_treat", pretrends = -40), "`pretrends` = -40")
  expect_error(did_bjs(d, "y", "id", "year", "first_treat", cluster = c("id", "state")), "one-way")
  d2 <- d; d2$first_treat[d2$id == 1 & d2$year == 2003] <- 2008
  expect_error(did_bjs(d2, "y", "id", "year", "first_treat"), "`gname`.*constant")
  d3 <- d; d3$first_treat <- 0
  expect_error(did_bjs(d3, "y", "id", "year", "first_treat"), "`gname` = \"first_treat\" marks no treated")
  d4 <- d; d4$first_treat <- 2001
  expect_error(did_bjs(d4, "y", "id", "year", "first_treat"), "every observation as treated")
  # always-treated units cannot be imputed: removed with a message
  d5 <- d; d5$first_treat[d5$id <= 5] <- 2001
  expect_message(did_bjs(d5, "y", "id", "year", "first_treat"), "50 treated observation\\(s\\) removed")
  # a covariate collinear with the unit effects: message, coefficient dropped
  d6 <- d; d6$xc <- d6$id %% 7
  expect_message(did_bjs(d6, "y", "id", "year", "first_treat", xformla = ~ xc), "'xc'.*collinearity")
  expect_error(did_bjs(d, "y", "id", "year", "nope"), "gname")
})
