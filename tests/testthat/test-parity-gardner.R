# did_gardner() against did2s 1.2.1. did2s cannot be installed on R 4.2.2
# (it imports HonestDiD, which needs CVXR, unavailable for this R), so the
# reference numbers in ref-did2s.csv were computed by did2s itself, installed
# with only its HonestDiD wrappers removed (tools/install-did2s.sh), by
# tools/did2s-reference.R: didimputation's df_het and diffdiff's sim_panel,
# static and event-study second stages, covariates, weights, clustering by
# unit and state. Estimates to 1e-8, standard errors to 1e-6 (relative).
ref_did2s <- function(case) {
  r <- utils::read.csv(test_path("ref-did2s.csv"))
  r <- r[r$case == case, ]
  r$term <- ifelse(grepl("TRUE$", r$term), "ATT", sub("^rel::", "event::", r$term))
  r
}

gardner_check <- function(case, f) {
  r <- ref_did2s(case)
  expect_gt(nrow(r), 0)
  m <- match(r$term, f$coeftable$term)
  expect_false(anyNA(m))
  expect_lt(rel_diff(f$coeftable$estimate[m], r$estimate), 1e-8)
  expect_lt(rel_diff(f$coeftable$std.error[m], r$std.error), 1e-6)
}

test_that("static and event-study estimates and GMM SEs equal did2s's (df_het)", {
  need_peer("didimputation")   # for its df_het data
  d <- het_data(); d0 <- d
  f <- did_gardner(d, "dep_var", "unit", "year", "g")
  expect_identical(d, d0)
  gardner_check("het_static", f)
  gardner_check("het_event", f)
  expect_equal(nrow(ref_did2s("het_event")) + 1L, nrow(f$coeftable))   # all leads and horizons, plus the ATT
  f <- did_gardner(d, "y2", "unit", "year", "g", xformla = ~ x, cluster = "state")
  gardner_check("het_static_cov_state", f)
  gardner_check("het_event_cov_state", f)
  f <- did_gardner(d, "dep_var", "unit", "year", "g", weightsname = "w")
  gardner_check("het_static_w", f)
  gardner_check("het_event_w", f)
})

test_that("weighted with a covariate on sim_panel equals did2s", {
  f <- did_gardner(sim_panel(), "y", "id", "year", "first_treat", xformla = ~ x1, weightsname = "w")
  gardner_check("sim_static_w_cov", f)
  gardner_check("sim_event_w_cov", f)
})

test_that("GMM variance equals the dense sandwich with explicit dummies (small panel)", {
  d <- sim_panel()
  d <- d[d$id <= 50, ]
  f <- did_gardner(d, "y", "id", "year", "first_treat", xformla = ~ x1, weightsname = "w", pretrends = -2)
  D <- d$first_treat > 0 & d$year >= d$first_treat
  ev <- ifelse(d$first_treat > 0, d$year - d$first_treat, NA)
  X1 <- cbind(d$x1, model.matrix(~ 0 + factor(id), d), model.matrix(~ factor(year), d)[, -1])
  w <- d$w
  g1 <- solve(crossprod(X1[!D, ], w[!D] * X1[!D, ]), crossprod(X1[!D, ], w[!D] * d$y[!D]))
  yt <- d$y - drop(X1 %*% g1)
  hz <- sort(unique(ev[D]))
  X2 <- cbind(`event::-2` = !D & !is.na(ev) & ev == -2, sapply(hz, function(h) D & ev == h))
  colnames(X2)[-1] <- paste0("event::", hz)
  X2 <- X2 * 1
  B <- solve(crossprod(X2, w * X2))
  b <- B %*% crossprod(X2, w * yt)
  e2 <- yt - drop(X2 %*% b)
  gam <- solve(crossprod(X1[!D, ], w[!D] * X1[!D, ]), crossprod(X1, w * X2))
  u <- ifelse(D, 0, yt)
  psi <- w * X2 * e2 - w * u * (X1 %*% gam)
  V <- B %*% crossprod(rowsum(psi, d$id)) %*% B
  m <- match(colnames(X2), f$coeftable$term)
  expect_lt(rel_diff(f$coeftable$estimate[m], b), 1e-10)
  expect_lt(rel_diff(f$coeftable$std.error[m], sqrt(diag(V))), 1e-10)
})

test_that("Gardner's post-period estimates are the imputation estimates; survey and bad input", {
  d <- sim_panel()
  g2 <- did_gardner(d, "y", "id", "year", "first_treat", xformla = ~ x1)
  b <- did_bjs(d, "y", "id", "year", "first_treat", xformla = ~ x1)
  post <- function(f) f$coeftable[!is.na(f$coeftable$event) & f$coeftable$event >= 0 | f$coeftable$term == "ATT", ]
  expect_equal(post(g2)$estimate, post(b)$estimate, tolerance = 1e-12)
  expect_equal(post(g2)$term, post(b)$term)
  expect_false(isTRUE(all.equal(post(g2)$std.error, post(b)$std.error)))
  expect_equal(sqrt(diag(vcov(g2))), g2$coeftable$std.error, ignore_attr = TRUE)
  d$w1 <- 1
  s <- did_gardner(d, "y", "id", "year", "first_treat", survey = survey_design(d, weights = ~ w1, ids = ~ id))
  g <- did_gardner(d, "y", "id", "year", "first_treat")
  G <- length(unique(d$id))
  # Taylor variance of the PSU totals: G/(G-1) x the clustered sum of squares (totals centred; they sum to 0)
  expect_equal(s$coeftable$std.error, g$coeftable$std.error * sqrt(G / (G - 1)), tolerance = 1e-10)
  expect_error(did_gardner(d, "y", "id", "year", "first_treat", horizon = 1.5), "`horizon`.*1.5")
  expect_error(did_gardner(d, "y", "id", "year", "first_treat", pretrends = "a"), "`pretrends`")
  expect_error(did_gardner(d, "y", "id", "year", "first_treat", survey = survey_design(d, weights = ~ w1),
                           cluster = "id"), "`cluster`")
})
