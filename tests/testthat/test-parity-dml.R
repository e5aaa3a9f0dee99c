# did_dml() against the live did 2.x (att_gt(est_method = "dr") and aggte())
# and did_cs(): with `folds = 1` (no cross-fitting) and the linear learners
# (least squares and logit) the cross-fitting layer's predictions and the
# orthogonal score, with the two fits' estimation effect, are Sant'Anna and
# Zhao's doubly robust estimator, so every ATT(g,t), standard error and
# aggregate must equal did's. Tolerance 1e-8 (testthat's relative) for
# estimates and standard errors.

dml_panel <- function(n = 600, seed = 8) {
  set.seed(seed)
  g <- sample(c(0, 3, 4, 5), n, replace = TRUE, prob = c(0.4, 0.2, 0.2, 0.2))
  x1 <- rnorm(n); x2 <- rbinom(n, 1, 0.4)
  d <- expand.grid(t = 1:6, id = seq_len(n))[, c("id", "t")]
  d$g <- g[d$id]; d$x1 <- x1[d$id]; d$x2 <- x2[d$id]
  d$w <- runif(n, 0.5, 2)[d$id]
  d$y <- rnorm(n)[d$id] + 0.3 * d$t + 0.4 * d$x1 * d$t / 3 + 0.5 * d$x2 +
    (d$g > 0 & d$t >= d$g) * (1 + 0.5 * d$x1) + rnorm(nrow(d))
  d
}

test_that("did_dml with folds = 1 and linear learners equals did::att_gt(est_method = 'dr') and aggte()", {
  need_peer("did")
  d <- dml_panel()
  for (a in list(list(control_group = "nevertreated", base_period = "varying"),
                 list(control_group = "notyettreated", base_period = "universal"),
                 list(control_group = "notyettreated", base_period = "varying", weightsname = "w"))) {
    fit <- do.call(did_dml, c(list(d, "y", "id", "t", "g", ~ x1 + x2, folds = 1, nboot = 0), a))
    r <- suppressWarnings(did::att_gt("y", "t", "id", "g", ~ x1 + x2, data = d, est_method = "dr",
                                      control_group = a$control_group, base_period = a$base_period,
                                      weightsname = a$weightsname, bstrap = FALSE, cband = FALSE))
    lab <- paste(unlist(a), collapse = "/")
    expect_equal(fit$coeftable$estimate, r$att, tolerance = 1e-8, label = paste(lab, "ATT(g,t)"))
    expect_equal(fit$coeftable$std.error, r$se, tolerance = 1e-8, label = paste(lab, "SE"))
    for (ty in c("simple", "group", "dynamic", "calendar")) {
      ag <- aggregate(fit, ty)
      ra <- suppressWarnings(did::aggte(r, type = ty, bstrap = FALSE, cband = FALSE))
      est <- if (ty == "simple") ra$overall.att else ra$att.egt
      se <- if (ty == "simple") ra$overall.se else ra$se.egt
      k <- if (ty == "simple") 1L else seq_along(est)
      expect_equal(ag$coeftable$estimate[k], est, tolerance = 1e-8, label = paste(lab, ty))
      expect_equal(ag$coeftable$std.error[k], se, tolerance = 1e-8, label = paste(lab, ty, "SE"))
    }
  }
})

test_that("did_dml with folds = 1 equals did_cs(est_method = 'dr') bit for bit in its aggregates", {
  d <- dml_panel(seed = 3)
  a <- did_cs(d, "y", "id", "t", "g", ~ x1 + x2, nboot = 0, control_group = "notyettreated")
  b <- did_dml(d, "y", "id", "t", "g", ~ x1 + x2, folds = 1, nboot = 0, control_group = "notyettreated")
  expect_equal(b$coeftable$estimate, a$coeftable$estimate, tolerance = 1e-10)
  expect_equal(b$coeftable$std.error, a$coeftable$std.error, tolerance = 1e-10)
  expect_equal(aggregate(b, "dynamic")$coeftable$std.error, aggregate(a, "dynamic")$coeftable$std.error,
               tolerance = 1e-10)
})

test_that("the repeated cross-sections cell score without cross-fitting equals DRDID::drdid_rc (estimate and influence function)", {
  need_peer("DRDID")
  set.seed(4)
  n <- 1500
  x1 <- rnorm(n); x2 <- rbinom(n, 1, 0.5)
  D <- rbinom(n, 1, stats::plogis(-0.3 + 0.5 * x1)); post <- rbinom(n, 1, 0.5)
  y <- 1 + x1 + 0.5 * x2 + post * (0.5 + 0.3 * x1) + D * post * 1.2 + D * 0.4 + rnorm(n)
  w <- runif(n, 0.5, 2); w <- w / mean(w)
  x <- cbind(x1 = x1, x2 = x2)
  lrn <- list(outcome = diffdiff:::dd_cf_learner("linear"), propensity = diffdiff:::dd_cf_learner("linear"))
  mine <- diffdiff:::dd_dml_cell_rc(y, post, D, x, w, rep(1L, n), lrn, 0.995, TRUE)
  ref <- DRDID::drdid_rc(y, post, D, cbind(1, x), i.weights = w, inffunc = TRUE)   # DRDID adds no intercept
  expect_equal(mine$att, ref$ATT, tolerance = 1e-8)
  expect_equal(mine$phi, as.vector(ref$att.inf.func), tolerance = 1e-8)
})

test_that("did_dml(panel = FALSE) without cross-fitting equals did::att_gt(panel = FALSE, est_method = 'dr')", {
  need_peer("did")
  set.seed(8); n <- 3000
  d <- data.frame(id = seq_len(n), t = sample(1:5, n, TRUE), g = sample(c(0, 3, 4), n, TRUE))
  d$x1 <- rnorm(n); d$x2 <- rbinom(n, 1, 0.4); d$w <- runif(n, 0.5, 2)
  d$y <- 1 + 0.3 * d$t + 0.3 * d$x1 * d$t + 0.5 * d$x2 + (d$g > 0 & d$t >= d$g) * (1 + 0.3 * d$x1) +
    0.4 * (d$g > 0) + rnorm(n)
  for (a in list(list(control_group = "nevertreated", base_period = "varying"),
                 list(control_group = "notyettreated", base_period = "varying", weightsname = "w"))) {
    fit <- do.call(did_dml, c(list(d, "y", "id", "t", "g", ~ x1 + x2, panel = FALSE, folds = 1, nboot = 0), a))
    r <- suppressWarnings(did::att_gt("y", "t", "id", "g", ~ x1 + x2, data = d, panel = FALSE, est_method = "dr",
                                      control_group = a$control_group, base_period = a$base_period,
                                      weightsname = a$weightsname, bstrap = FALSE, cband = FALSE))
    lab <- paste(unlist(a), collapse = "/")
    expect_equal(fit$coeftable$estimate, r$att, tolerance = 1e-8, label = paste("RC", lab))
    expect_equal(fit$coeftable$std.error, r$se, tolerance = 1e-8, label = paste("RC", lab, "SE"))
    ag <- aggregate(fit, "dynamic")
    ra <- suppressWarnings(did::aggte(r, type = "dynamic", bstrap = FALSE, cband = FALSE))
    k <- seq_along(ra$egt)                                # (the event rows; the overall ATT row follows)
    expect_identical(ag$coeftable$term[k], paste0("event::", ra$egt))
    expect_equal(ag$coeftable$estimate[k], ra$att.egt, tolerance = 1e-8, label = paste("RC", lab, "dynamic"))
    expect_equal(ag$coeftable$std.error[k], ra$se.egt, tolerance = 1e-8, label = paste("RC", lab, "dynamic SE"))
  }
})

test_that("did_dml(survey = ) with folds = 1 equals did_cs(survey = , est_method = 'dr'): design-based SEs come from the shared layer", {
  need_peer("survey")
  d <- dml_panel(n = 400, seed = 3)
  set.seed(4)
  u <- data.frame(id = 1:400, str = sample(1:5, 400, TRUE))
  u$psu <- u$str * 100 + sample(1:8, 400, TRUE)
  d <- merge(d, u, by = "id")
  des <- survey::svydesign(ids = ~psu, strata = ~str, weights = ~w, data = d)
  a <- did_dml(d, "y", "id", "t", "g", ~ x1 + x2, folds = 1, nboot = 0, survey = des)
  b <- did_cs(d, "y", "id", "t", "g", ~ x1 + x2, nboot = 0, survey = des)
  expect_equal(a$coeftable$estimate, b$coeftable$estimate, tolerance = 1e-8)
  expect_equal(a$coeftable$std.error, b$coeftable$std.error, tolerance = 1e-8)
  expect_equal(aggregate(a, "dynamic")$coeftable$std.error, aggregate(b, "dynamic")$coeftable$std.error, tolerance = 1e-8)
  # not the weighted fit's unit-clustered SEs
  w <- did_dml(d, "y", "id", "t", "g", ~ x1 + x2, folds = 1, nboot = 0, weightsname = "w")
  expect_equal(w$coeftable$estimate, a$coeftable$estimate, tolerance = 1e-10)
  expect_gt(max(abs(w$coeftable$std.error - a$coeftable$std.error)), 1e-4)
  expect_true(nzchar(a$survey_label))
  expect_error(ovb_sensitivity(a), "survey design")
})
