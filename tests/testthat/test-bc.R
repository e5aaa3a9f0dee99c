# did_bc() without its peer (test-parity-bc.R has badcontrols): the
# reductions to did_cs and did_dml without a bad control, the influence
# functions against numerical derivatives of the estimator written out with
# lm()/glm() and unit weights, the doubly robust fallbacks and learners,
# notes and warnings, and bad input.

bc_panel <- function(n = 400, T = 4, seed = 11, binary = FALSE) {
  set.seed(seed)
  d <- data.frame(id = rep(seq_len(n), each = T), t = rep(seq_len(T), n))
  z <- rnorm(n); w <- 0.5 * z + rnorm(n)
  g <- sample(c(0, 3, 4), n, TRUE, prob = c(0.5, 0.25, 0.25))
  d$z <- z[d$id]; d$w <- w[d$id]; d$g <- g[d$id]
  post <- d$g > 0 & d$t >= d$g
  idx <- 0.4 * d$z + 0.3 * d$w + 0.1 * d$t + 0.6 * post
  d$x <- if (binary) rbinom(nrow(d), 1, plogis(idx)) else idx + rnorm(nrow(d), sd = 0.4)
  d$zt <- d$z + rnorm(nrow(d), sd = 0.2)
  d$y <- d$z + (1 + 0.1 * d$t) * d$x + 0.2 * d$t + post + rnorm(nrow(d), sd = 0.5)
  d
}

test_that("without a bad control: imputation is did_cs(est_method = 'reg'), the doubly robust score did_dml(normalize = 'ht')", {
  d <- bc_panel()
  for (cg in c("notyettreated", "nevertreated")) {
    a <- did_bc(d, "y", "id", "t", "g", bad_control = NULL, xformla = ~ z, control_group = cg, nboot = 0)
    b <- did_cs(d, "y", "id", "t", "g", xformla = ~ z, est_method = "reg", control_group = cg, nboot = 0)
    expect_equal(a$coeftable$estimate, b$coeftable$estimate, tolerance = 1e-10)
    expect_equal(a$coeftable$std.error, b$coeftable$std.error, tolerance = 1e-10)
    expect_equal(aggregate(a, "dynamic")$coeftable$std.error, aggregate(b, "dynamic")$coeftable$std.error,
                 tolerance = 1e-10)
    a <- did_bc(d, "y", "id", "t", "g", bad_control = NULL, xformla = ~ z, est_method = "dr", control_group = cg,
                nboot = 0, seed = 4)
    b <- did_dml(d, "y", "id", "t", "g", xformla = ~ z, normalize = "ht", trim = 1, control_group = cg, nboot = 0,
                 seed = 4)
    expect_identical(a$folds, b$folds)
    expect_equal(a$coeftable$estimate, b$coeftable$estimate, tolerance = 1e-10)
    expect_equal(a$coeftable$std.error, b$coeftable$std.error, tolerance = 1e-10)
  }
})

# one cell (cohort 3, t = 4, base 2, not yet treated) in wide form
bc_cell <- function(d, g = 3, tp = 4, base = 2) {
  pre <- d[d$t == base & (d$g == g | d$g == 0 | d$g > tp), ]
  post <- d[d$t == tp, ][match(pre$id, d$id[d$t == tp]), ]
  list(dY = post$y - pre$y, D = as.numeric(pre$g == g), bpre = cbind(x = pre$x), bpost = cbind(x = post$x),
       Z = cbind(z = pre$z), W = cbind(w = pre$w), dZ = cbind(zt = post$zt - pre$zt))
}

# the imputation estimator written out with lm()/glm() and unit weights u
bc_by_hand <- function(v, u, strategy, binary) {
  df <- data.frame(dY = v$dY, D = v$D, bpre = drop(v$bpre), bpost = drop(v$bpost), z = drop(v$Z), w = drop(v$W),
                   dz = drop(v$dZ), u = u)
  c0 <- df$D == 0
  if (strategy == "did") {
    f1 <- stats::lm(I(bpost - bpre) ~ w + dz + z, data = df[c0, ], weights = u)
    imp <- df$bpre + stats::predict(f1, newdata = df)
  } else if (binary) {
    f1 <- suppressWarnings(stats::glm(bpost ~ bpre + w + dz + z, data = df[c0, ], weights = u,
                                      family = stats::quasibinomial(), control = stats::glm.control(epsilon = 1e-14)))
    imp <- stats::predict(f1, newdata = df, type = "response")
  } else {
    f1 <- stats::lm(bpost ~ bpre + w + dz + z, data = df[c0, ], weights = u)
    imp <- stats::predict(f1, newdata = df)
  }
  df$ximp <- ifelse(df$D == 1, imp, df$bpost)
  f3 <- stats::lm(dY ~ ximp + bpre + dz + z, data = df[c0, ], weights = u)
  e <- df$dY - stats::predict(f3, newdata = df)
  sum(u * df$D * e) / sum(u * df$D)
}

test_that("the imputation estimator's influence function is the numerical derivative of the estimator in each unit's weight", {
  for (cs in list(list("unconfoundedness", FALSE), list("did", FALSE), list("unconfoundedness", TRUE))) {
    d <- bc_panel(binary = cs[[2]])
    v <- bc_cell(d)
    n <- length(v$D)
    r <- diffdiff:::dd_bc_impute(v, cs[[2]], cs[[1]])
    expect_equal(r$att, bc_by_hand(v, rep(1, n), cs[[1]], cs[[2]]), tolerance = 1e-10)
    # phi_i = n d att / d u_i (the estimator is invariant to the weights' scale)
    set.seed(1)
    at <- c(sample(which(v$D == 1), 8), sample(which(v$D == 0), 12))
    h <- 1e-5
    num <- vapply(at, function(i) {
      up <- dn <- rep(1, n); up[i] <- 1 + h; dn[i] <- 1 - h
      n * (bc_by_hand(v, up, cs[[1]], cs[[2]]) - bc_by_hand(v, dn, cs[[1]], cs[[2]])) / (2 * h)
    }, 0)
    expect_equal(r$phi[at], num, tolerance = 1e-6, label = paste(cs, collapse = "/"))
    expect_lt(abs(mean(r$phi)), 1e-12)
  }
})

test_that("did_bc fits: the table, the fields, aggregate(), the bad control's role, invariance to the outcome's scale", {
  d <- bc_panel()
  f <- did_bc(d, "y", "id", "t", "g", bad_control = ~ x, xformla = ~ z, bc_xformla = ~ w, nboot = 0)
  expect_s3_class(f, "did_bc")
  expect_identical(class(f), c("did_bc", "dd_fit"))
  expect_identical(f$bad_control, "x")
  expect_false(f$bc_binary)
  expect_null(f$folds)
  expect_true(all(c("group", "time") %in% names(tidy(f))))
  out <- capture.output(print(f))
  expect_true(any(grepl("bad control: x; estimator: imputation (unconfoundedness)", out, fixed = TRUE)))
  d2 <- d; d2$y <- 3 * d2$y + 7
  f2 <- did_bc(d2, "y", "id", "t", "g", bad_control = "x", xformla = ~ z, bc_xformla = ~ w, nboot = 0)
  expect_equal(f2$coeftable$estimate, 3 * f$coeftable$estimate, tolerance = 1e-10)
  expect_equal(f2$coeftable$std.error, 3 * f$coeftable$std.error, tolerance = 1e-10)
  # the bad control matters: ignoring it (xformla only) gives another answer
  f0 <- did_bc(d, "y", "id", "t", "g", bad_control = NULL, xformla = ~ z, nboot = 0)
  expect_gt(max(abs(f0$coeftable$estimate - f$coeftable$estimate)), 0.05)
  ag <- aggregate(f, "simple")
  expect_equal(nrow(ag$coeftable), 1L)
  expect_true(is.finite(ag$coeftable$std.error))
  # the multiplier bootstrap and clusters come from did_cs's layer
  d$cl <- d$id %% 25
  fb <- did_bc(d, "y", "id", "t", "g", bad_control = "x", xformla = ~ z, cluster = "cl", nboot = 199)
  fa <- did_bc(d, "y", "id", "t", "g", bad_control = "x", xformla = ~ z, cluster = "cl", nboot = 0)
  expect_equal(fb$coeftable$estimate, fa$coeftable$estimate, tolerance = 1e-12)
  expect_false(isTRUE(all.equal(fb$coeftable$std.error, fa$coeftable$std.error)))
  expect_identical(fb$cluster, "cl")
  expect_true(all(is.finite(fb$coeftable$std.error)))
})

test_that("the doubly robust estimator: folds, seeds, learners, out-of-fold pseudo-outcomes for flexible learners, fallbacks", {
  d <- bc_panel()
  a <- did_bc(d, "y", "id", "t", "g", bad_control = "x", xformla = ~ z, bc_xformla = ~ w, est_method = "dr",
              nboot = 0, seed = 2)
  b <- did_bc(d, "y", "id", "t", "g", bad_control = "x", xformla = ~ z, bc_xformla = ~ w, est_method = "dr",
              nboot = 0, seed = 2)
  expect_identical(a$coeftable, b$coeftable)
  expect_identical(sort(unique(a$folds)), 1:5)
  expect_identical(a$learners, c(outcome = "linear", propensity = "linear"))
  # close to imputation on this linear design
  im <- did_bc(d, "y", "id", "t", "g", bad_control = "x", xformla = ~ z, bc_xformla = ~ w, nboot = 0)
  expect_lt(max(abs(a$coeftable$estimate - im$coeftable$estimate)), 0.15)
  # a user learner: each cell and fold fits m and p once, plus (not linear)
  # once per other fold for the pseudo-outcomes, plus nu and omega; and the
  # whole-cell propensity once per cell
  calls <- 0L
  mean_lrn <- function(x, y, w, x_new, type) {
    calls <<- calls + 1L
    rep(sum(w * y) / sum(w), nrow(x_new))
  }
  K <- 3L
  u <- did_bc(d, "y", "id", "t", "g", bad_control = "x", est_method = "dr", learner = mean_lrn, folds = K,
              nboot = 0, seed = 1)
  ncell <- sum(u$cell_status == 0L & u$n_cell > 0L)
  expect_identical(calls, ncell * (1L + K * (2L * (1L + (K - 1L)) + 2L)))
  expect_identical(u$learners[["outcome"]], "user")
  skip_if_not_installed("ranger")
  fr <- did_bc(d, "y", "id", "t", "g", bad_control = "x", xformla = ~ z, est_method = "dr", learner = "forest",
               folds = 3, nboot = 0, seed = 9)
  fr2 <- did_bc(d, "y", "id", "t", "g", bad_control = "x", xformla = ~ z, est_method = "dr", learner = "forest",
                folds = 3, nboot = 0, seed = 9)
  expect_identical(fr$coeftable$estimate, fr2$coeftable$estimate)
  expect_true(all(is.finite(fr$coeftable$std.error)))
})

test_that("fallbacks to imputation say so; notes and warnings", {
  d <- bc_panel()
  expect_warning(f <- did_bc(d, "y", "id", "t", "g", bad_control = "x", xformla = ~ z, est_method = "dr",
                             min_treated = 10000, nboot = 0, seed = 1), "fell back to imputation in 6 cell")
  im <- did_bc(d, "y", "id", "t", "g", bad_control = "x", xformla = ~ z, nboot = 0)
  expect_true(all(f$fallbacks == "treated"))
  expect_equal(f$coeftable$estimate, im$coeftable$estimate, tolerance = 1e-12)
  expect_output(print(f), "Imputation used instead in 6 cell")
  expect_warning(did_bc(d, "y", "id", "t", "g", bad_control = "x", xformla = ~ z, est_method = "dr",
                        overlap = 0.2, nboot = 0, seed = 1), "overlap")
  # a bad control that never changes within a unit
  d$xc <- d$z + 1
  expect_warning(did_bc(d, "y", "id", "t", "g", bad_control = "xc", nboot = 0), "does not vary over time")
  # a change that does not vary within the cells is dropped, with a note
  d$zc <- d$z + d$t
  f <- did_bc(d, "y", "id", "t", "g", bad_control = "x", dxformla = ~ zc, nboot = 0)
  expect_true(any(grepl("dropped from it: dz:zc", f$notes)))
})

test_that("did_bc refuses bad input, naming the argument and the value", {
  d <- bc_panel()
  fit <- function(...) did_bc(d, "y", "id", "t", "g", nboot = 0, ...)
  expect_error(did_bc(d, "y", "id", "t", "g"), "bad_control")
  expect_error(fit(bad_control = "nope"), "`bad_control` = \"nope\" is not a column")
  expect_error(fit(bad_control = ~ x + z), "one column")
  expect_error(fit(bad_control = x ~ z), "one-sided formula")
  d$xs <- as.character(d$x)
  expect_error(did_bc(d, "y", "id", "t", "g", bad_control = "xs", nboot = 0), "must be a numeric column; it is character")
  expect_error(fit(bad_control = "x", xformla = ~ x), "also appears in a covariate formula")
  expect_error(fit(bad_control = "y"), "is the outcome")
  expect_error(fit(bad_control = "x", est_method = "dr", bc_strategy = "did"), "imputation")
  expect_error(fit(bad_control = NULL, bc_strategy = "did"), "needs a bad control")
  expect_error(fit(bad_control = "x", est_method = "ml"), "est_method")
  expect_error(fit(bad_control = "x", bc_strategy = "parallel"), "bc_strategy")
  expect_error(fit(bad_control = "x", overlap = 1.5), "`overlap` must be one number in \\(0, 1\\]; got 1.5")
  expect_error(fit(bad_control = "x", folds = 0), "folds")
  expect_error(fit(bad_control = "x", min_treated = -1), "min_treated")
  expect_error(fit(bad_control = "x", learner = "boosting"), "learner")
  expect_error(fit(bad_control = "x", dxformla = ~ nope), "`dxformla` names \"nope\"")
  d$fz <- factor(d$z > 0)
  expect_error(did_bc(d, "y", "id", "t", "g", bad_control = "x", bc_xformla = ~ fz, nboot = 0),
               "`bc_xformla` variable \"fz\" must be numeric")
  expect_error(fit(bad_control = "x", dxformla = "zt"), "`dxformla` must be a one-sided formula")
  expect_error(fit(bad_control = "x", seed = "a"), "seed")
})

test_that("collinear covariates drop out of every model, the logit's included", {
  d <- bc_panel(binary = TRUE)
  d$w2 <- 2 * d$w
  a <- did_bc(d, "y", "id", "t", "g", bad_control = "x", xformla = ~ z, bc_xformla = ~ w + w2, nboot = 0)
  b <- did_bc(d, "y", "id", "t", "g", bad_control = "x", xformla = ~ z, bc_xformla = ~ w, nboot = 0)
  expect_true(a$bc_binary)
  expect_equal(a$coeftable$estimate, b$coeftable$estimate, tolerance = 1e-9)
  expect_equal(a$coeftable$std.error, b$coeftable$std.error, tolerance = 1e-9)
  a <- did_bc(d, "y", "id", "t", "g", bad_control = "x", xformla = ~ z, bc_xformla = ~ w + w2, est_method = "dr",
              nboot = 0, seed = 1)
  b <- did_bc(d, "y", "id", "t", "g", bad_control = "x", xformla = ~ z, bc_xformla = ~ w, est_method = "dr",
              nboot = 0, seed = 1)
  expect_equal(a$coeftable$estimate, b$coeftable$estimate, tolerance = 1e-9)
})
