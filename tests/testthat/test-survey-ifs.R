# Survey Taylor-linearisation standard errors of the regression estimators
# equal survey::svytotal() of their influence-function totals on the same
# design: psi_i = x~_i e_i (X~' W X~)^{-1} (x~ the regressors after
# absorbing the weighted unit and period effects, e the residuals; the
# design's weights are applied by svytotal). The influence functions are
# computed here independently (fixest::demean for the absorption, the
# normal equations in R), and the design is built with survey::svydesign.
# Tolerance 1e-8 (relative), the issue's.

svy_if_vcov <- function(d, X, y, w, design_fun) {
  dm <- fixest::demean(cbind(y = y, X), list(d$id, d$year), weights = w)
  Xt <- dm[, -1, drop = FALSE]; yt <- dm[, 1]
  B <- solve(crossprod(Xt, w * Xt))
  e <- drop(yt - Xt %*% (B %*% crossprod(Xt, w * yt)))
  psi <- (Xt * e) %*% B
  colnames(psi) <- paste0("psi", seq_len(ncol(psi)))
  sd <- design_fun(cbind(d, psi))
  op <- options(survey.lonely.psu = "adjust"); on.exit(options(op))
  V <- stats::vcov(survey::svytotal(stats::as.formula(paste("~", paste(colnames(psi), collapse = " + "))), sd))
  dimnames(V) <- list(colnames(X), colnames(X))
  V
}

svy_data <- function() {
  d <- sim_panel()
  list(d = d,
       des = survey_design(d, weights = ~ w, strata = ~ state, ids = ~ id, nest = TRUE, lonely_psu = "adjust"),
       design_fun = function(dd) survey::svydesign(ids = ~ id, strata = ~ state, weights = ~ w, data = dd, nest = TRUE))
}

test_that("did_twfe and did_event survey SEs are svytotal of their influence-function totals", {
  need_peer("fixest"); need_peer("survey")
  s <- svy_data(); d <- s$d
  f <- did_twfe(d, "y", "id", "year", "treat", xformla = ~ x1, survey = s$des)
  V <- svy_if_vcov(d, cbind(ATT = d$treat, x1 = d$x1), d$y, d$w, s$design_fun)
  expect_lt(rel_diff(diag(vcov(f)), diag(V)), 1e-8)
  expect_lt(rel_diff(vcov(f)[1, 2], V[1, 2]), 1e-8)
  e <- did_event(d, "y", "id", "year", "first_treat", survey = s$des)
  es <- e$event_study
  rel <- ifelse(d$first_treat == 0, NA, d$year - d$first_treat)
  D <- vapply(es$event, function(k) as.numeric(!is.na(rel) & rel == k), numeric(nrow(d)))
  colnames(D) <- es$term
  V <- svy_if_vcov(d, D, d$y, d$w, s$design_fun)
  expect_lt(rel_diff(diag(es$vcov), diag(V)), 1e-8)
  expect_lt(max(abs(es$vcov - V)) / max(abs(V)), 1e-8)
})

test_that("did_sa survey SEs: the cohort coefficients' influence-function totals, aggregated by dd_lincom", {
  need_peer("fixest"); need_peer("survey")
  s <- svy_data(); d <- s$d
  f <- did_sa(d, "y", "id", "year", "first_treat", survey = s$des)
  cc <- f$cohort_coefs$term                      # "year::e:cohort::g"
  e_of <- as.numeric(sub("^year::(-?[0-9]+):cohort::.*$", "\\1", cc))
  g_of <- as.numeric(sub("^.*:cohort::", "", cc))
  D <- vapply(seq_along(cc), function(k) as.numeric(d$first_treat == g_of[k] & d$year - d$first_treat == e_of[k]),
              numeric(nrow(d)))
  colnames(D) <- cc
  V <- svy_if_vcov(d, D, d$y, d$w, s$design_fun)
  expect_lt(rel_diff(diag(f$vcov_full), diag(V[cc, cc])), 1e-8)
  # the aggregates: shares of each cohort at its event time
  ev <- f$event_study
  S <- t(vapply(ev$event, function(k) { s <- (e_of == k) * f$shares[cc]; s / sum(s) }, numeric(length(cc))))
  expect_lt(rel_diff(ev$std.error, sqrt(diag(S %*% V %*% t(S)))), 1e-8)
})
