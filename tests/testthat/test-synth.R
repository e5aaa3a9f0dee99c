# did_synth()'s features beyond Synth's synth() (whose parity is in
# test-parity-synth.R): V by cross-validation, several treated units and
# their average, the in-time placebo and leave-one-out diagnostics, the
# intervals at other levels, perfect pre-treatment fits, and the methods.
# Each expectation is checked against a refit computed another way (on
# altered data, or with the pieces given by hand), not against a stored
# output of did_synth itself.

test_that("v_method = \"cv\": V from the training period, W from the validation-period predictors", {
  d <- synth_sim(5, J = 10)
  fit <- did_synth(d, "y", "id", "t", "d", predictors = c("x1", "x2"), v_method = "cv", cv_split = 6,
                   placebo = FALSE)
  u <- fit$fits[[1]]
  # V: the nested search with predictors over 1..6, MSPE over the validation periods 7..12
  tr <- did_synth(d, "y", "id", "t", "d", predictors = c("x1", "x2"), predictors_window = 1:6,
                  optimize_window = 7:12, placebo = FALSE)$fits[[1]]
  expect_equal(u$v, tr$v, tolerance = 1e-12)
  expect_equal(u$cv, list(train = 1:6, valid = 7:12))
  # W: that V with the predictors over 7..12
  fw <- did_synth(d, "y", "id", "t", "d", predictors = c("x1", "x2"), predictors_window = 7:12,
                  v_method = "custom", custom_v = unname(tr$v), placebo = FALSE)$fits[[1]]
  expect_equal(u$w, fw$w, tolerance = 1e-12)
  expect_equal(unname(u$X1), unname(fw$X1), tolerance = 1e-12)
  expect_equal(fit$coeftable$estimate, fw$att, tolerance = 1e-12)
  expect_match(fit$title, "cross-validated")
  # the default split: half the pre-treatment periods
  f0 <- did_synth(d, "y", "id", "t", "d", predictors = c("x1", "x2"), v_method = "cv", placebo = FALSE)
  expect_equal(f0$fits[[1]]$cv$train, 1:6)
  f <- function(...) did_synth(d, "y", "id", "t", "d", predictors = c("x1", "x2"), placebo = FALSE, ...)
  expect_error(f(v_method = "cv", cv_split = 12), "`cv_split` must be a pre-treatment period of unit 1 before")
  expect_error(f(v_method = "cv", cv_split = 99), "got 99")
  expect_error(f(v_method = "cv", cv_split = c(3, 4)), "`cv_split` must be NULL or one period")
  expect_error(f(cv_split = 6), "`cv_split` is used only with v_method = \"cv\"")
  expect_error(did_synth(d, "y", "id", "t", "d", v_method = "cv"), "needs `predictors` or `special_predictors`")
  expect_error(f(v_method = "cv", predictors_window = 1:5, cv_split = 6), "no period in the validation period")
})

test_that("several treated units: each unit's row is its own fit, the average's p-value enumerates placebo combinations", {
  d <- synth_sim(7, J = 9)
  d$d <- as.integer(d$id %in% c(1, 2) & d$t > 12)
  fit <- did_synth(d, "y", "id", "t", "d", predictors = c("x1", "x2"))
  tab <- fit$coeftable
  expect_identical(tab$term, c("ATT", "unit::1", "unit::2"))
  for (k in 1:2) {
    # unit k against the never-treated donors alone (the other treated unit dropped)
    one <- did_synth(d[d$id != 3 - k, ], "y", "id", "t", "d", predictors = c("x1", "x2"))
    expect_equal(tab$estimate[k + 1], one$coeftable$estimate, tolerance = 1e-12)
    expect_equal(tab$p.value[k + 1], one$coeftable$p.value, tolerance = 1e-12)
    expect_equal(tab$conf.low[k + 1], one$coeftable$conf.low, tolerance = 1e-10)
  }
  expect_equal(tab$estimate[1], mean(tab$estimate[2:3]))
  # Cavallo et al.: every pair (one placebo for each treated unit) by brute force
  r <- fit$placebos$table$ratio
  obs <- mean(tab$rmspe.ratio[2:3])
  g <- expand.grid(a = r, b = r)
  expect_identical(tab$n.placebos[1], as.double(nrow(g)))
  expect_equal(tab$p.value[1], (1 + sum((g$a + g$b) / 2 >= obs)) / (1 + nrow(g)))
  # the average has no interval; the average gaps are the units' mean by event time
  expect_true(is.na(tab$conf.low[1]))
  ag <- fit$average_gaps
  expect_equal(ag$gap, (fit$fits[[1]]$gap + fit$fits[[2]]$gap) / 2, tolerance = 1e-12)
  expect_identical(ag$n_units, rep(2L, 20))
  expect_error(synth_fp(fit, unit = 5), "`unit` must be one of the treated units")
  expect_equal(synth_fp(fit, unit = 2)$conf.low, tab$conf.low[3])
})

test_that("staggered treated units: each against the placebos at its own adoption period", {
  d <- synth_sim(8, J = 8)
  d$d <- as.integer((d$id == 1 & d$t > 12) | (d$id == 2 & d$t > 14))
  fit <- did_synth(d, "y", "id", "t", "d", predictors = c("x1", "x2"))
  pl <- fit$placebos$table
  expect_setequal(unique(pl$adopt), c(13, 15))
  two <- did_synth(d[d$id != 1, ], "y", "id", "t", "d", predictors = c("x1", "x2"))
  expect_equal(fit$coeftable$estimate[3], two$coeftable$estimate, tolerance = 1e-12)
  expect_equal(fit$coeftable$p.value[3], two$coeftable$p.value, tolerance = 1e-12)
  g <- fit$gaps
  expect_identical(range(g$event[g$unit == "2"]), c(-14L, 5L))
})

test_that("synth_diagnostics: the in-time placebo is the fit on the earlier periods, leave-one-out drops each donor", {
  d <- synth_sim(3, J = 8)
  fit <- did_synth(d, "y", "id", "t", "d", predictors = c("x1", "x2"), placebo = FALSE)
  dg <- synth_diagnostics(fit, placebo_time = 8)
  dt <- d[d$t <= 12, ]
  dt$d <- as.integer(dt$id == 1 & dt$t >= 8)
  ref <- did_synth(dt, "y", "id", "t", "d", predictors = c("x1", "x2"), placebo = FALSE)$fits[[1]]
  expect_equal(unname(dg$placebo_time$gap), unname(ref$gap), tolerance = 1e-12)
  expect_equal(dg$placebo_time$att, ref$att, tolerance = 1e-12)
  expect_identical(names(dg$placebo_time$gap), as.character(1:12))
  w <- fit$fits[[1]]$w
  expect_setequal(dg$leave_one_out$donor, names(w)[w > 1e-10])
  for (dn in dg$leave_one_out$donor) {
    ref <- did_synth(d[d$id != as.integer(dn), ], "y", "id", "t", "d", predictors = c("x1", "x2"),
                     placebo = FALSE)$fits[[1]]
    row <- dg$leave_one_out[dg$leave_one_out$donor == dn, ]
    expect_equal(row$att, ref$att, tolerance = 1e-12)
    expect_equal(row$change, ref$att - fit$fits[[1]]$att, tolerance = 1e-12)
    expect_equal(unname(dg$loo_paths[, dn]), unname(ref$synthetic), tolerance = 1e-12)
  }
  # windows and special predictors are cut at the fake treatment
  f2 <- did_synth(d, "y", "id", "t", "d", predictors = "x1", special_predictors = list(list("y", 1:12, "mean")),
                  optimize_window = 3:12, placebo = FALSE)
  d2 <- synth_diagnostics(f2, placebo_time = 8, leave_one_out = FALSE)
  ref2 <- did_synth(dt, "y", "id", "t", "d", predictors = "x1", special_predictors = list(list("y", 1:7, "mean")),
                    optimize_window = 3:7, placebo = FALSE)$fits[[1]]
  expect_equal(unname(d2$placebo_time$gap), unname(ref2$gap), tolerance = 1e-12)
  expect_null(d2$leave_one_out)
  expect_identical(d2$placebo_time$dropped, character())
  # a special predictor measured only from the fake treatment on is left out, and said
  f3 <- did_synth(d, "y", "id", "t", "d", predictors = "x1",
                  special_predictors = list(list("y", 1:3, "mean"), list("y", 9:10, "mean")), placebo = FALSE)
  d3 <- synth_diagnostics(f3, placebo_time = 8, leave_one_out = FALSE)
  ref3 <- did_synth(dt, "y", "id", "t", "d", predictors = "x1", special_predictors = list(list("y", 1:3, "mean")),
                    placebo = FALSE)$fits[[1]]
  expect_equal(unname(d3$placebo_time$gap), unname(ref3$gap), tolerance = 1e-12)
  expect_identical(d3$placebo_time$dropped, "special.y.9.10")
  expect_output(print(d3), "left out: special.y.9.10")
  f4 <- did_synth(d, "y", "id", "t", "d", special_predictors = list(list("y", 9:10, "mean"), list("x2", 10, "mean")),
                  placebo = FALSE)
  expect_error(synth_diagnostics(f4, placebo_time = 8), "no predictor is left for the in-time placebo")
  expect_error(synth_diagnostics(f2, placebo_time = 13), "`placebo_time` must be a pre-treatment period of unit 1")
  expect_error(synth_diagnostics(f2, placebo_time = 1), "`placebo_time` must be")
  expect_error(synth_diagnostics(f2, placebo_time = 2.5), "got 2.5")
  expect_error(synth_diagnostics(f2, placebo_time = 2), "`optimize_window` has no period before `placebo_time` = 2")
  expect_error(synth_diagnostics(lm(y ~ t, d)), "`fit` must be a did_synth\\(\\) fit")
  expect_error(plot(d2), "no leave_one_out part")
})

test_that("special predictors must precede treatment", {
  d <- synth_sim(3, J = 6)
  expect_error(did_synth(d, "y", "id", "t", "d", special_predictors = list(list("x2", 10:14, "mean"))),
               "special predictor \"x2\" asks for period 13, 14, which is not before treatment")
})

test_that("intervals at another level invert the placebo test at that level", {
  d <- synth_sim(4, J = 19)
  fit <- did_synth(d, "y", "id", "t", "d", predictors = c("x1", "x2"))
  ci <- confint(fit, level = 0.8)
  fp <- synth_fp(fit, alpha = 0.2)
  expect_equal(unname(ci[1, ]), c(fp$conf.low, fp$conf.high))
  expect_identical(colnames(ci), c("10 %", "90 %"))
  expect_equal(unname(confint(fit)[1, ]), c(fit$coeftable$conf.low, fit$coeftable$conf.high))
  tt <- tidy(fit, conf.level = 0.8)
  expect_equal(c(tt$conf.low, tt$conf.high), unname(ci[1, ]))
  # the set contains the estimate, and at 80% it lies inside the 95% set
  expect_lte(fp$conf.low, fit$coeftable$estimate); expect_gte(fp$conf.high, fit$coeftable$estimate)
  expect_gte(fp$conf.low, fit$coeftable$conf.low); expect_lte(fp$conf.high, fit$coeftable$conf.high)
  expect_error(confint(fit, level = 1.2), "`level` must be a number strictly between 0 and 1; got 1.2")
})

test_that("a perfect pre-treatment fit: no p-value and no interval, with a note", {
  set.seed(2)
  T <- 10
  Y0 <- matrix(stats::rnorm(4 * T), 4) + outer(1:4, rep(1, T))
  y1 <- 0.5 * Y0[1, ] + 0.5 * Y0[2, ]      # exactly a convex combination of donors 2 and 3
  y1[7:10] <- y1[7:10] + 1
  d <- data.frame(id = rep(1:5, each = T), t = rep(1:T, 5), y = c(y1, t(Y0)))
  d$d <- as.integer(d$id == 1 & d$t >= 7)
  fit <- did_synth(d, "y", "id", "t", "d")
  expect_lt(fit$coeftable$pre.rmspe, 1e-7)
  expect_true(is.na(fit$coeftable$p.value))
  expect_true(is.na(fit$coeftable$conf.low))
  expect_equal(fit$coeftable$estimate, 1, tolerance = 1e-6)
  expect_true(any(grepl("reproduces its pre-treatment outcomes exactly", fit$notes)))
  expect_output(print(fit), "reproduces its pre-treatment outcomes exactly")
})

test_that("tidy() tables, glance(), summary(), print() and plots of a fit", {
  d <- synth_sim(3, J = 8)
  fit <- did_synth(d, "y", "id", "t", "d", predictors = c("x1", "x2"))
  w <- tidy(fit, what = "weights")
  expect_equal(sum(w$weight), 1, tolerance = 1e-12)
  expect_true(all(w$weight >= 0))
  b <- tidy(fit, what = "balance")
  X0 <- fit$fits[[1]]$X0
  expect_equal(b$synthetic, unname(drop(X0 %*% fit$fits[[1]]$w)), tolerance = 1e-12)
  # the treated unit's predictors from the data by hand
  expect_equal(b$treated, c(mean(d$x1[d$id == 1 & d$t <= 12]), mean(d$x2[d$id == 1 & d$t <= 12])))
  g <- tidy(fit, what = "gaps")
  expect_equal(g$gap, d$y[d$id == 1] - g$synthetic, tolerance = 1e-12)
  expect_equal(mean(g$gap[g$post]), fit$coeftable$estimate, tolerance = 1e-12)
  expect_equal(sum(tidy(fit, what = "predictors")$weight), 1, tolerance = 1e-12)
  expect_identical(nrow(tidy(fit, what = "placebos")), 8L)
  expect_error(tidy(fit, what = "nope"), "`what`")
  gl <- glance(fit)
  expect_identical(nrow(gl), 1L)
  expect_identical(as.integer(gl$nobs), nrow(d))
  expect_output(print(fit), "ATT")
  expect_output(print(summary(fit)), "Predictor balance|balance")
  expect_identical(coef(fit), c(ATT = fit$coeftable$estimate))
  f <- tempfile(fileext = ".png")
  grDevices::png(f)
  for (ty in c("paths", "gaps", "placebos", "weights")) expect_silent(plot(fit, type = ty))
  grDevices::dev.off()
  unlink(f)
  expect_error(plot(fit, type = "pie"), "`type`")
  f0 <- did_synth(d, "y", "id", "t", "d", predictors = c("x1", "x2"), placebo = FALSE)
  expect_error(tidy(f0, what = "placebos"), "no placebos")
  expect_error(synth_fp(f0), "has no placebos")
  expect_true(is.na(f0$coeftable$p.value))
})

test_that("the fit carries weights named by donor, loss_w and vmat, as Synth's solution.w, loss.w and V", {
  d <- synth_sim(3, J = 8)
  fit <- did_synth(d, "y", "id", "t", "d", predictors = c("x1", "x2"), placebo = FALSE)
  u <- fit$fits[[1]]
  expect_identical(names(fit$weights), as.character(2:9))
  expect_equal(unname(fit$weights), unname(u$w))
  # loss_w by hand: the standardised predictors' V-weighted squared gap
  X <- cbind(u$X1, u$X0); s <- apply(X, 1, stats::sd)
  r <- (u$X1 - u$X0 %*% fit$weights) / s
  expect_equal(unname(fit$loss_w), sum(u$v * r^2), tolerance = 1e-10)
  expect_identical(dim(fit$vmat), c(2L, 2L))
  expect_equal(unname(diag(fit$vmat)), unname(u$v))
  expect_identical(rownames(fit$vmat), c("x1", "x2"))
  expect_equal(fit$vmat[1, 2], 0)
  d$d <- as.integer(d$id %in% c(1, 2) & d$t > 12)
  f2 <- did_synth(d, "y", "id", "t", "d", predictors = c("x1", "x2"), placebo = FALSE)
  expect_identical(dim(f2$weights), c(7L, 2L))
  expect_identical(colnames(f2$weights), c("1", "2"))
  expect_equal(colSums(f2$weights), c(`1` = 1, `2` = 1))
  expect_identical(names(f2$vmat), c("1", "2"))
  expect_identical(names(f2$loss_w), c("1", "2"))
})

test_that("the V search in C (R's nmmin and vmmin) gives optim()'s numbers on the R-level objective", {
  # the slow path: optim() over C_synth_vloss, the warm start carried in R;
  # the fast path: C_synth_nm. Both are called here directly (no switch
  # chooses between them), so the comparison is of the two paths.
  # (a treated unit outside the donors' hull, so that W moves with V)
  set.seed(2)
  k <- 4; J <- 9; T <- 8
  X0 <- matrix(stats::rnorm(k * J), k); X1 <- apply(X0, 1, max) + 0.3
  Z0 <- matrix(stats::rnorm(T * k), T) %*% X0 + matrix(stats::rnorm(T * J, sd = 0.2), T)
  Z1 <- drop(matrix(stats::rnorm(T * k), T) %*% X1)
  for (m in c("Nelder-Mead", "BFGS")) {
    warm <- NULL
    fn <- function(par) {
      r <- .Call(diffdiff:::C_synth_vloss, X0, X1, Z0, Z1, par, warm)
      w <- attr(r, "w")
      if (!is.null(w)) warm <<- which(w > 0) - 1L
      as.numeric(r)
    }
    par0 <- c(0.4, 0.3, 0.2, 0.1)
    slow <- stats::optim(par0, fn, method = m)
    fast <- .Call(diffdiff:::C_synth_nm, X0, X1, Z0, Z1, par0, NULL, if (m == "BFGS") 100L else 500L, m == "BFGS")
    expect_identical(fast$par, slow$par, label = m)
    expect_identical(fast$value, slow$value, label = m)
    expect_identical(fast$counts[1], unname(slow$counts[1]), label = m)
    if (m == "BFGS") expect_identical(fast$counts[2], unname(slow$counts[2]))
    expect_identical(fast$convergence, slow$convergence)
    expect_identical(fast$warm, warm, label = m)
    expect_gt(fast$counts[1], 20L)   # a search that moved
  }
})
