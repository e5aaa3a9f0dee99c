# did_dml() and the cross-fitting layer without a peer: cross-fitting
# written out by hand with lm() and glm() on the stored folds (both
# normalisations), the folds' stratification and reproducibility, the median
# rule, user learners, lasso and forest, invariants and bad input. (did's
# numbers at folds = 1 are in test-parity-dml.R.)

dml_2x2 <- function(n = 400, seed = 5) {
  set.seed(seed)
  D <- rbinom(n, 1, 0.4)
  x1 <- rnorm(n) + 0.5 * D; x2 <- runif(n)
  d <- data.frame(id = rep(seq_len(n), each = 2), t = rep(1:2, n), x1 = rep(x1, each = 2), x2 = rep(x2, each = 2),
                  g = rep(ifelse(D == 1, 2, 0), each = 2))
  d$y <- rnorm(n)[d$id] + d$t * (0.5 + 0.3 * d$x1^2) + (d$g == 2 & d$t == 2) * 1.5 + rnorm(2 * n)
  d
}

# the cell by hand: out-of-fold lm / glm fits on the stored folds
dml_hand <- function(d, folds, normalize) {
  w <- d[d$t == 1, ]; w$dy <- d$y[d$t == 2] - d$y[d$t == 1]
  w$D <- as.numeric(w$g == 2)
  w$f <- folds
  ps <- m <- numeric(nrow(w))
  for (k in sort(unique(folds))) {
    tr <- w[w$f != k, ]; at <- w$f == k
    ps[at] <- predict(glm(D ~ x1 + x2, binomial, tr), w[at, ], type = "response")
    m[at] <- predict(lm(dy ~ x1 + x2, tr[tr$D == 0, ]), w[at, ])
  }
  ps <- pmin(ps, 1 - 1e-6)
  e <- w$dy - m; D <- w$D; r <- (1 - D) * ps / (1 - ps) * (ps < 0.995 | D == 1)
  if (normalize == "hajek") {
    e1 <- sum(D * e) / sum(D); e0 <- sum(r * e) / sum(r)
    list(att = e1 - e0, phi = D * (e - e1) / mean(D) - r * (e - e0) / mean(r))
  } else {
    s <- (D * e - r * e) / mean(D); att <- mean(s)
    list(att = att, phi = s - D * att / mean(D))
  }
}

test_that("cross-fitting by hand (lm and glm on the stored folds) gives did_dml's estimate and standard error", {
  d <- dml_2x2()
  for (nz in c("hajek", "ht")) {
    f <- did_dml(d, "y", "id", "t", "g", ~ x1 + x2, folds = 4, normalize = nz, nboot = 0, seed = 11)
    h <- dml_hand(d, f$folds[order(f$units)], nz)
    expect_equal(f$coeftable$estimate, h$att, tolerance = 1e-8, label = nz)
    expect_equal(f$coeftable$std.error, sqrt(sum(h$phi^2)) / length(h$phi), tolerance = 1e-8, label = paste(nz, "SE"))
  }
})

test_that("folds: stratified by cohort, reproducible under `seed`, the session's stream untouched", {
  set.seed(1)
  strata <- rep(c(0, 3, 4), c(50, 23, 17))
  f <- diffdiff:::dd_cf_folds(strata, 5L)
  expect_true(all(table(f) %in% c(18L, 18L)))
  for (s in unique(strata)) expect_lte(diff(range(tabulate(f[strata == s], 5L))), 1L)
  expect_identical(diffdiff:::dd_cf_folds(strata, 1L), rep(1L, 90))
  d <- dml_2x2()
  set.seed(99); before <- .Random.seed
  a <- did_dml(d, "y", "id", "t", "g", ~ x1 + x2, nboot = 0, seed = 4)
  expect_identical(.Random.seed, before)
  b <- did_dml(d, "y", "id", "t", "g", ~ x1 + x2, nboot = 0, seed = 4)
  expect_identical(a$coeftable, b$coeftable)
  expect_identical(a$folds, b$folds)
  c2 <- did_dml(d, "y", "id", "t", "g", ~ x1 + x2, nboot = 0, seed = 5)
  expect_false(identical(a$folds, c2$folds))
})

test_that("the median rule over repeated splits", {
  est <- cbind(c(1, 3, 2), c(0, 0, 1)); v <- cbind(c(0.1, 0.2, 0.3), c(1, 2, 3))
  r <- diffdiff:::dd_cf_median(est, v)
  expect_equal(r$est, c(2, 0))
  expect_equal(r$var, c(median(c(0.1 + 1, 0.2 + 1, 0.3)), median(c(1, 2, 3 + 1))))
})

test_that("repeated splits: the median rule over the splits' fits and aggregates", {
  d <- dml_2x2()
  d$g[d$g == 2 & d$id %% 2 == 0] <- 3
  d <- rbind(d, transform(d[d$t == 2, ], t = 3))
  d$y[d$t == 3] <- d$y[d$t == 3] + rnorm(sum(d$t == 3))
  f <- did_dml(d, "y", "id", "t", "g", ~ x1 + x2, repeats = 3, nboot = 0, seed = 6)
  expect_length(f$splits, 3L)
  est <- sapply(f$splits, function(s) s$coeftable$estimate)
  se <- sapply(f$splits, function(s) s$coeftable$std.error)
  med <- apply(est, 1, median)
  expect_equal(f$coeftable$estimate, med)
  expect_equal(f$coeftable$std.error, sqrt(sapply(seq_along(med), function(j) median(se[j, ]^2 + (est[j, ] - med[j])^2))))
  ag <- aggregate(f, "simple")
  ae <- sapply(f$splits, function(s) aggregate(s, "simple")$coeftable$estimate)
  expect_equal(ag$coeftable$estimate, median(ae))
  expect_equal(sqrt(diag(vcov(f))), f$coeftable$std.error, ignore_attr = TRUE)
  g <- did_dml(d, "y", "id", "t", "g", ~ x1 + x2, repeats = 3, nboot = 0, seed = 6)
  expect_identical(g$coeftable, f$coeftable)
  expect_error(did_dml(d, "y", "id", "t", "g", repeats = 2, folds = 1, nboot = 0), "`repeats` = 2 needs cross-fitting")
  expect_error(did_dml(d, "y", "id", "t", "g", repeats = 2, nboot = 99), "set cband = FALSE")
})

test_that("user learners, lasso and forest run; the learners are recorded", {
  d <- dml_2x2(n = 300)
  ols <- function(x, y, w, x_new, type) {
    if (type == "classification") return(rep(sum(w * y) / sum(w), nrow(x_new)))
    drop(cbind(1, x_new) %*% stats::lm.wfit(cbind(1, x), y, w)$coefficients)
  }
  f <- did_dml(d, "y", "id", "t", "g", ~ x1 + x2, learner = list(outcome = ols, propensity = "linear"), nboot = 0,
               seed = 2)
  expect_identical(unname(f$learners), c("user", "linear"))
  expect_true(is.finite(f$coeftable$estimate))
  skip_if_not_installed("glmnet")
  f2 <- did_dml(d, "y", "id", "t", "g", ~ x1 + x2, learner = "lasso", nboot = 0, seed = 2)
  expect_true(is.finite(f2$coeftable$std.error))
  f2b <- did_dml(d, "y", "id", "t", "g", ~ x1 + x2, learner = "lasso", nboot = 0, seed = 2)
  expect_identical(f2$coeftable, f2b$coeftable)
  skip_if_not_installed("ranger")
  f3 <- did_dml(d, "y", "id", "t", "g", ~ x1 + x2, learner = "forest", nboot = 0, seed = 2)
  f3b <- did_dml(d, "y", "id", "t", "g", ~ x1 + x2, learner = "forest", nboot = 0, seed = 2)
  expect_identical(f3$coeftable, f3b$coeftable)
  expect_identical(unname(f3$learners), c("forest", "forest"))
})

test_that("bad input: errors naming the argument and value", {
  d <- dml_2x2(n = 100)
  expect_error(did_dml(d, "y", "id", "t", "g", learner = "svm"), "`learner`")
  expect_error(did_dml(d, "y", "id", "t", "g", learner = list(outcome = "linear")), "`outcome` and `propensity`")
  expect_error(did_dml(d, "y", "id", "t", "g", folds = 0), "`folds`")
  expect_error(did_dml(d, "y", "id", "t", "g", normalize = "x"), "`normalize`")
  expect_error(did_dml(d, "y", "id", "t", "g", trim = 2), "`trim` must be one number")
  expect_error(did_dml(d, "y", "id", "t", "g", seed = "a"), "`seed` must be NULL or one number")
  bad <- function(x, y, w, x_new, type) rep(NA_real_, nrow(x_new))
  expect_error(did_dml(d, "y", "id", "t", "g", ~ x1, learner = bad, nboot = 0), "returned")
  before <- d
  f <- did_dml(d, "y", "id", "t", "g", ~ x1, nboot = 0, seed = 1)
  expect_identical(d, before)
})

test_that("ovb_sensitivity: the bound by hand, the robustness values, aggregates, errors", {
  d <- dml_2x2()
  f <- did_dml(d, "y", "id", "t", "g", ~ x1 + x2, folds = 4, nboot = 0, seed = 11)
  h <- dml_hand(d, f$folds[order(f$units)], "hajek")
  # S by hand from the cell: the comparison units' residual trends and the comparison weights
  w <- d[d$t == 1, ]; D <- as.numeric(w$g == 2)
  ff <- f$folds[order(f$units)]
  ps <- m <- numeric(nrow(w)); dy <- d$y[d$t == 2] - d$y[d$t == 1]
  for (k in 1:4) {
    tr <- ff != k
    ps[!tr] <- predict(glm(D[tr] ~ x1 + x2, binomial, w[tr, ]), w[!tr, ], type = "response")
    m[!tr] <- predict(lm(dy ~ x1 + x2, data.frame(dy = dy, w)[tr & D == 0, ]), w[!tr, ])
  }
  r <- (1 - D) * ps / (1 - ps)
  a <- r / mean(r); e0 <- (1 - D) * (dy - m)
  S <- sqrt(mean(e0^2) * mean(a^2))
  s <- ovb_sensitivity(f, cf_y = 0.1, cf_d = 0.2, rho = 0.8)
  expect_equal(s$table$S, S, tolerance = 1e-8)
  expect_equal(s$table$bias, 0.8 * sqrt(0.1 * 0.2 / 0.8) * S, tolerance = 1e-8)
  expect_equal(s$table$lower, f$coeftable$estimate - s$table$bias, tolerance = 1e-12)
  # the robustness value: the bound at cf_y = cf_d = rv is |estimate|
  s1 <- ovb_sensitivity(f, cf_y = s$table$rv, cf_d = s$table$rv, rho = 0.8)
  expect_equal(s1$table$bias, abs(f$coeftable$estimate), tolerance = 1e-8)
  # rv_alpha: the interval touches zero there
  s2 <- ovb_sensitivity(f, cf_y = s$table$rv_alpha, cf_d = s$table$rv_alpha, rho = 0.8)
  expect_equal(min(abs(c(s2$table$conf.low, s2$table$conf.high))), 0, tolerance = 1e-6)
  expect_lt(s$table$rv_alpha, s$table$rv)
  # no confounding: the bounds are the estimate, the interval the fit's
  s0 <- ovb_sensitivity(f, cf_y = 0, cf_d = 0)
  expect_equal(c(s0$table$conf.low, s0$table$conf.high), unname(unlist(f$coeftable[c("conf.low", "conf.high")])),
               tolerance = 1e-10)
  expect_error(ovb_sensitivity(f, cf_d = 1), "`cf_d` must be one number in \\[0, 1\\)")
  expect_error(ovb_sensitivity(f, rho = 2), "`rho`")
  # a did_cs doubly robust fit: its call re-run as did_dml(folds = 1)
  cs <- did_cs(d, "y", "id", "t", "g", ~ x1, nboot = 0)
  sc <- ovb_sensitivity(cs, cf_y = 0.1, cf_d = 0.2, rho = 0.8)
  s1f <- ovb_sensitivity(did_dml(d, "y", "id", "t", "g", ~ x1, folds = 1, nboot = 0), cf_y = 0.1, cf_d = 0.2, rho = 0.8)
  expect_equal(sc$table, s1f$table, tolerance = 1e-10)
  expect_equal(sc$table$estimate, cs$coeftable$estimate, tolerance = 1e-10)
  expect_error(ovb_sensitivity(did_cs(d, "y", "id", "t", "g", ~ x1, est_method = "ipw", nboot = 0)),
               "est_method = \"ipw\"")
  expect_error(ovb_sensitivity(did_cs(d, "y", "id", "t", "g", ~ x1, nboot = 49, cband_method = "bootstrap-t")),
               "`cband_method`, which did_dml\\(\\) does not take")
  d_old <- d
  d$y <- d$y + rnorm(nrow(d))
  expect_error(ovb_sensitivity(cs), "has its data changed")
  d <- d_old
  expect_s3_class(tidy(s), "data.frame"); expect_equal(nrow(glance(s)), 1L)
  expect_output(print(s), "Omitted-variable-bias bounds")
  grDevices::pdf(NULL); on.exit(grDevices::dev.off())
  expect_invisible(plot(s))
  if (requireNamespace("ggplot2", quietly = TRUE)) expect_s3_class(ggplot2::autoplot(s), "ggplot")
})

test_that("ovb_sensitivity on an aggregate: the cells' biases summed with the absolute weights", {
  d <- dml_2x2()
  d$g[d$g == 2 & d$id %% 2 == 0] <- 3
  d <- rbind(d, transform(d[d$t == 2, ], t = 3))
  d$y[d$t == 3] <- d$y[d$t == 3] + rnorm(sum(d$t == 3))
  f <- did_dml(d, "y", "id", "t", "g", ~ x1 + x2, nboot = 0, seed = 6)
  cells <- ovb_sensitivity(f, cf_y = 0.05, cf_d = 0.05)
  ag <- aggregate(f, "simple")
  s <- ovb_sensitivity(f, cf_y = 0.05, cf_d = 0.05, type = "simple")
  K <- nrow(f$coeftable)
  expect_equal(s$table$estimate, ag$coeftable$estimate)
  expect_equal(s$table$bias, sum(abs(ag$comb[seq_len(K), 1]) * cells$table$bias), tolerance = 1e-12)
})

test_that("the bound formulas equal sensemakr's bias() and robustness value for a regression coefficient", {
  need_peer("sensemakr")
  e <- new.env(); utils::data("darfur", package = "sensemakr", envir = e)
  m <- stats::lm(peacefactor ~ directlyharmed + age + farmer_dar + herder_dar + pastvoted + hhsize_darfur + female +
                   village, data = e$darfur)
  se <- summary(m)$coefficients["directlyharmed", "Std. Error"]
  S <- se * sqrt(m$df.residual)
  expect_equal(diffdiff:::dd_ovb_bias(S, 0.12, 0.04), unname(sensemakr::bias(m, "directlyharmed", r2dz.x = 0.04,
                                                                                  r2yz.dx = 0.12)), tolerance = 1e-10)
  expect_equal(diffdiff:::dd_ovb_rv(stats::coef(m)[["directlyharmed"]], S),
               unname(sensemakr::robustness_value(m, "directlyharmed", q = 1, alpha = 1)), tolerance = 1e-10,
               ignore_attr = TRUE)
})

test_that("repeated cross-sections: cross-fitting runs and reproduces; what is not offered says so", {
  set.seed(8); n <- 1200
  d <- data.frame(id = seq_len(n), t = sample(1:3, n, TRUE), g = sample(c(0, 3), n, TRUE))
  d$x1 <- rnorm(n)
  d$y <- 1 + 0.3 * d$t + 0.3 * d$x1 * d$t + (d$g > 0 & d$t >= d$g) + rnorm(n)
  f <- did_dml(d, "y", "id", "t", "g", ~ x1, panel = FALSE, nboot = 0, seed = 3)
  g <- did_dml(d, "y", "id", "t", "g", ~ x1, panel = FALSE, nboot = 0, seed = 3)
  expect_identical(f$coeftable, g$coeftable)
  expect_true(all(is.finite(f$coeftable$std.error)))
  expect_error(did_dml(d, "y", "id", "t", "g", ~ x1, panel = FALSE, normalize = "ht"), "not available for repeated")
  expect_error(ovb_sensitivity(f), "repeated cross-sections")
})

test_that("collinear covariates: cross-fitted learners drop the duplicate (as lm); without cross-fitting the cell is NA, as did_cs", {
  # (regression: the linear learner once multiplied the design by a
  # coefficient vector without the logit's dropped column: non-conformable)
  set.seed(1)
  d <- dd_sim_staggered(n_units = 300, n_periods = 4)
  d$x1 <- rnorm(300)[d$id]; d$x2 <- 2 * d$x1
  a <- did_dml(d, "y", "id", "time", "first_treat", ~ x1 + x2, nboot = 0, seed = 1)
  b <- did_dml(d, "y", "id", "time", "first_treat", ~ x1, nboot = 0, seed = 1)
  expect_equal(a$coeftable$estimate, b$coeftable$estimate, tolerance = 1e-10)
  expect_equal(a$coeftable$std.error, b$coeftable$std.error, tolerance = 1e-10)
  for (p in c(TRUE, FALSE)) {
    expect_warning(f <- did_dml(d, "y", "id", "time", "first_treat", ~ x1 + x2, nboot = 0, folds = 1, panel = p),
                   "singular covariate matrix")
    h <- suppressWarnings(did_cs(d, "y", "id", "time", "first_treat", ~ x1 + x2, nboot = 0, est_method = "dr", panel = p))
    expect_true(all(is.na(f$coeftable$estimate)))
    expect_identical(is.na(f$coeftable$estimate), is.na(h$coeftable$estimate))
  }
})
