# did_stacked(balance = "entropy"): entropy-balanced stacked DiD (CBWSDID,
# Ustyuzhanin 2026, as diff-diff's StackedDiD(balance = "entropy"); spec:
# tools/notes/diffdiff-extensions-spec.md, section 1). No Python diff-diff
# here: the balancing weights are checked against the R package ebal
# (Hainmueller's ebalance(), run to constraint.tolerance = 1e-10 on its
# totals scale; weights 1e-6), the estimates against a stack made here with
# base R and fitted by lm() with those weights, the SEs against
# sandwich::vcovCL(type = "HC1") (CR1, weights fixed; 1e-6), plus the
# spec's worked example and invariants.

# the stacked sub-experiments of the recipe, by hand (balanced windows)
eb_stack <- function(d, kpre, kpost, rule = "not_yet_treated") {
  never <- d$first_treat == 0
  out <- list()
  for (a in sort(unique(d$first_treat[!never]))) {
    if (a - kpre < min(d$year) || a + kpost > max(d$year)) next
    bound <- switch(rule, not_yet_treated = a + kpost, never_treated = Inf)
    ctrl <- never | d$first_treat > bound
    s <- d[(d$first_treat == a | ctrl) & d$year >= a - kpre & d$year <= a + kpost, ]
    s$sub <- a; s$e <- s$year - a; s$D <- as.integer(s$first_treat == a)
    out[[length(out) + 1]] <- s
  }
  do.call(rbind, out)
}

# ebal's control weights per cohort (normalised to sum to 1), covariates at a - 1
eb_ebal_weights <- function(d, s, covs) {
  b <- rep(NA_real_, nrow(s))
  for (a in unique(s$sub)) {
    u <- unique(s[s$sub == a, c("id", "D")])
    x <- d[d$year == a - 1, ]; x <- x[match(u$id, x$id), covs, drop = FALSE]
    e <- ebal::ebalance(u$D, x, constraint.tolerance = 1e-10, max.iterations = 500)
    expect_true(e$converged)
    wc <- e$w / sum(e$w)
    k <- s$sub == a & s$D == 0
    b[k] <- wc[match(s$id[k], u$id[u$D == 0])]
  }
  b
}

# the spec's worked example (section 1): 6 units, periods 1..4, x constant
eb_example <- function() {
  u <- data.frame(id = c("A", "B", "C", "N1", "N2", "N3"), g = c(3, 3, 4, 0, 0, 0), x = c(2, 3, 2.5, 1, 2, 6))
  Y <- rbind(c(1, 2, 3, 5), c(2, 2, 4, 5), c(0, 1, 1, 3), c(1, 1, 2, 2), c(0, 1, 1, 2), c(3, 4, 6, 7))
  data.frame(id = rep(u$id, each = 4), t = rep(1:4, 6), g = rep(u$g, each = 4), x = rep(u$x, each = 4),
             y = as.vector(t(Y)))
}

test_that("the spec's worked example: weights, diagnostics, estimate and CR1 SE", {
  # reference numbers: tools/notes/diffdiff-extensions-spec.md, section 1,
  # "Worked example" (the spec author's R re-implementation of diff-diff's
  # algorithm, printed to 7 significant digits: tolerance 1e-6 absolute)
  d <- eb_example(); d0 <- d
  f <- suppressWarnings(did_stacked(d, "y", "id", "t", "g", kappa_pre = 1, kappa_post = 0, balance = "entropy",
                                    balance_covariates = "x"))
  expect_identical(d, d0)
  bw <- f$balance_weights
  expect_equal(bw$b[bw$cohort == 3 & !bw$treated], c(0.2553582, 0.3045962, 0.2708163, 0.1692293), tolerance = 1e-6)
  expect_equal(bw$unit[bw$cohort == 3 & !bw$treated], c("C", "N1", "N2", "N3"))
  expect_equal(bw$b[bw$cohort == 4 & !bw$treated], c(0.4090507, 0.3636866, 0.2272627), tolerance = 1e-6)
  dg <- f$balance_diagnostics
  expect_equal(dg$ess, c(3.846647, 2.847066), tolerance = 1e-6)
  expect_equal(dg$max_imbalance_pre, c(0.375, 0.5))
  expect_equal(dg$iterations[1], 5L)
  expect_equal(dg$solver, c("newton", "newton"))
  # control rows' regression weights: b times N^C_a Q_a = (N^D_a / N^D) N^C = (2/3) 7 and (1/3) 7 (diff-diff's
  # factors 4/3 and 2/3 times N^C / K = 7 / 2: the same estimates without xformla, as checked next)
  expect_equal(bw$weight[!bw$treated] / bw$b[!bw$treated], rep(c(14 / 3, 7 / 3), c(4, 3)), tolerance = 1e-12)
  i <- f$coeftable$term == "event::0"
  expect_lt(abs(f$coeftable$estimate[i] - 1.0409804), 1e-6)
  expect_lt(abs(f$coeftable$std.error[i] - 0.4582786), 1e-6)
  expect_equal(f$stacked_nobs, 20L)
  # the closed form: treated mean change minus the weighted control changes
  dy <- function(id, a) { s <- d[d$id == id, ]; s$y[s$t == a] - s$y[s$t == a - 1] }
  ctl <- function(a) { s <- bw[bw$cohort == a & !bw$treated, ]; sum(s$b * vapply(s$unit, dy, 1, a = a)) }
  expect_equal(f$coeftable$estimate[i], mean(c(dy("A", 3), dy("B", 3), dy("C", 4))) - (2 / 3 * ctl(3) + 1 / 3 * ctl(4)),
               tolerance = 1e-12)
  # without balancing (the spec: 0.9444444, SE 0.5119541)
  f0 <- suppressWarnings(did_stacked(d, "y", "id", "t", "g", kappa_pre = 1, kappa_post = 0))
  expect_lt(abs(f0$coeftable$estimate[1] - 0.9444444), 1e-6)
  expect_lt(abs(f0$coeftable$std.error[1] - 0.5119541), 1e-6)
  expect_identical(f0$balance, "none")
  expect_identical(f$balance, "entropy")
})

test_that("balancing weights equal ebal's per sub-experiment; estimates and SEs equal lm() + vcovCL by hand", {
  need_peer("ebal")
  need_peer("sandwich")
  d <- sim_panel()
  for (rule in c("not_yet_treated", "never_treated")) {
    f <- did_stacked(d, "y", "id", "year", "first_treat", kappa_pre = 3, kappa_post = 2, control_group = rule,
                     balance = "entropy", balance_covariates = ~ x1 + x2)
    s <- eb_stack(d, 3, 2, rule)
    s$b <- eb_ebal_weights(d, s, c("x1", "x2"))
    # the design weights, per cohort and control unit: ebal's at 1e-6
    k <- match(paste(s$sub, s$id)[s$D == 0], paste(f$balance_weights$cohort, f$balance_weights$unit))
    expect_false(anyNA(k))
    expect_lt(max(abs(f$balance_weights$b[k] - s$b[s$D == 0])), 1e-6)
    # the estimates' parity below at 1e-8 needs weights more precise than the
    # default balance_tol = 1e-8 gives (those differ from ebal's by 1.5e-10
    # with never-treated controls, moving the estimates by 2.4e-9):
    # balance_tol = 1e-12, and then the weights equal ebal's at 1e-10
    f <- did_stacked(d, "y", "id", "year", "first_treat", kappa_pre = 3, kappa_post = 2, control_group = rule,
                     balance = "entropy", balance_covariates = ~ x1 + x2, balance_tol = 1e-12)
    expect_lt(max(abs(f$balance_weights$b[k] - s$b[s$D == 0])), 1e-10)
    # the regression weights W = b (N^D_a / N^D) / (sum b / sum of sums), by hand
    nd <- tapply(s$D, s$sub, sum) / 6                            # treated units (6 rows per unit)
    mass <- tapply(ifelse(s$D == 0, s$b, 0), s$sub, sum) / 6
    s$W <- ifelse(s$D == 1, 1, s$b * (nd / sum(nd))[as.character(s$sub)] / (mass / sum(mass))[as.character(s$sub)])
    for (h in c(-3, -2, 0, 1, 2)) s[[paste0("De", h + 3)]] <- as.numeric(s$D == 1 & s$e == h)
    m <- lm(y ~ factor(D) + factor(e) + De0 + De1 + De3 + De4 + De5, data = s, weights = W)
    V <- sandwich::vcovCL(m, cluster = ~ id, type = "HC1")
    nm <- c("De0", "De1", "De3", "De4", "De5")
    expect_lt(rel_diff(f$coeftable$estimate[1:5], coef(m)[nm]), 1e-8)
    expect_lt(rel_diff(f$coeftable$std.error[1:5], sqrt(diag(V)[nm])), 1e-6)
    a <- c(0, 0, 1, 1, 1) / 3
    expect_lt(abs(f$coeftable$estimate[6] - sum(a * coef(m)[nm])) / f$coeftable$estimate[6], 1e-8)
    expect_lt(abs(f$coeftable$std.error[6] - sqrt(drop(a %*% V[nm, nm] %*% a))) / f$coeftable$std.error[6], 1e-6)
    expect_equal(f$stacked_nobs, nrow(s))
  }
})

test_that("xformla with balancing: the covariate enters the weighted regression", {
  need_peer("ebal")
  need_peer("sandwich")
  d <- sim_panel()
  f <- did_stacked(d, "y", "id", "year", "first_treat", xformla = ~ x1, kappa_pre = 2, kappa_post = 1,
                   balance = "entropy", balance_covariates = "x2", balance_tol = 1e-12)
  s <- eb_stack(d, 2, 1)
  s$b <- eb_ebal_weights(d, s, "x2")
  nd <- tapply(s$D, s$sub, sum) / 4
  mass <- tapply(ifelse(s$D == 0, s$b, 0), s$sub, sum) / 4
  nc <- tapply(1 - s$D, s$sub, sum) / 4
  # W = (b / mass) N^C_a Q_a (see ?did_stacked: uniform b gives Q)
  s$W <- ifelse(s$D == 1, 1, s$b * (nd / sum(nd))[as.character(s$sub)] * sum(nc) / mass[as.character(s$sub)])
  m <- lm(y ~ factor(D) + factor(e) + I(D * (e == -2)) + I(D * (e == 0)) + I(D * (e == 1)) + x1, data = s, weights = W)
  nm <- grep("^I\\(", names(coef(m)), value = TRUE)
  expect_lt(rel_diff(f$coeftable$estimate[1:3], coef(m)[nm]), 1e-8)
  expect_lt(rel_diff(f$coeftable$std.error[1:3], sqrt(diag(sandwich::vcovCL(m, cluster = ~ id, type = "HC1"))[nm])), 1e-6)
})

test_that("invariants: balance reached, weights positive and normalised, row order, data untouched", {
  d <- sim_panel(); d0 <- d
  f <- did_stacked(d, "y", "id", "year", "first_treat", kappa_pre = 3, kappa_post = 2, balance = "entropy",
                   balance_covariates = c("x1", "x2", "x1"))
  expect_identical(d, d0)
  expect_identical(f$balance_covariates, c("x1", "x2"))
  expect_equal(f$balance_tol, 1e-8); expect_equal(f$balance_maxit, 200L)
  bw <- f$balance_weights
  expect_true(all(bw$b > 0)); expect_true(all(bw$b[bw$treated] == 1))
  nd <- tapply(bw$treated, bw$cohort, sum)
  for (a in unique(bw$cohort)) {
    s <- bw[bw$cohort == a, ]
    expect_equal(sum(s$b[!s$treated]), 1, tolerance = 1e-12)
    # the regression weights of the controls sum to N^C N^D_a / N^D (Nt_a = 1; N^C all clean controls)
    expect_equal(sum(s$weight[!s$treated]), sum(!bw$treated) * nd[[as.character(a)]] / sum(nd), tolerance = 1e-10)
    # weighted control means at a - 1 equal the treated means (raw scale, 1e-8)
    x <- d[d$year == a - 1, ]
    xt <- colMeans(x[match(s$unit[s$treated], x$id), c("x1", "x2")])
    xc <- colSums(s$b[!s$treated] * x[match(s$unit[!s$treated], x$id), c("x1", "x2")])
    expect_lt(max(abs(xc - xt)), 1e-8)
    # and they were not balanced before
    expect_gt(max(abs(colMeans(x[match(s$unit[!s$treated], x$id), c("x1", "x2")]) - xt)), 1e-3)
  }
  expect_equal(f$balance_diagnostics$effective_control_mass, rep(1, 3), tolerance = 1e-12)
  expect_true(all(f$balance_diagnostics$max_imbalance_post < 1e-8))
  expect_match(f$title, "entropy-balanced")
  set.seed(3)
  f2 <- did_stacked(d[sample(nrow(d)), ], "y", "id", "year", "first_treat", kappa_pre = 3, kappa_post = 2,
                    balance = "entropy", balance_covariates = c("x1", "x2"))
  expect_equal(f2$coeftable, f$coeftable, tolerance = 1e-10)
  expect_equal(f2$balance_weights, bw, tolerance = 1e-10)
  # a time-varying covariate is read at a - 1 only: changing it elsewhere changes nothing
  d3 <- d; d3$x1[!(d3$year %in% (c(2004, 2006, 2008) - 1))] <- NA
  f3 <- did_stacked(d3, "y", "id", "year", "first_treat", kappa_pre = 3, kappa_post = 2, balance = "entropy",
                    balance_covariates = c("x1", "x2"))
  expect_equal(f3$coeftable, f$coeftable, tolerance = 1e-12)
})

test_that("covariates already balanced: uniform weights and the estimates of balance = \"none\"", {
  d <- sim_panel()
  set.seed(5)
  z <- stats::rnorm(max(d$id))[d$id]
  # every cohort and the never treated have mean 0 (so does any union of them)
  d$xb <- z - stats::ave(z, d$first_treat, d$year)
  f0 <- did_stacked(d, "y", "id", "year", "first_treat", kappa_pre = 3, kappa_post = 2)
  f <- did_stacked(d, "y", "id", "year", "first_treat", kappa_pre = 3, kappa_post = 2, balance = "entropy",
                   balance_covariates = "xb")
  bw <- f$balance_weights
  nc <- tapply(!bw$treated, bw$cohort, sum)
  expect_equal(bw$b[!bw$treated], as.vector(1 / nc[as.character(bw$cohort[!bw$treated])]), tolerance = 1e-12)
  expect_equal(f$balance_diagnostics$iterations, rep(1L, 3))
  expect_equal(f$coeftable$estimate, f0$coeftable$estimate, tolerance = 1e-10)
  expect_equal(f$coeftable$std.error, f0$coeftable$std.error, tolerance = 1e-10)
})

test_that("bad input names the argument and the value", {
  d <- sim_panel()
  st <- function(...) did_stacked(d, "y", "id", "year", "first_treat", kappa_pre = 2, kappa_post = 1, ...)
  expect_error(st(balance = "ebal"), "`balance` must be one of \"none\", \"entropy\"; got \"ebal\"")
  expect_error(st(balance = "entropy"), "`balance` = \"entropy\" needs `balance_covariates`.*got NULL")
  expect_error(st(balance_covariates = "x1"), "`balance_covariates` = \"x1\" is given with `balance` = \"none\"")
  expect_error(st(balance = "entropy", balance_covariates = "nope"), "`balance_covariates` = \"nope\" is not a column")
  expect_error(st(balance = "entropy", balance_covariates = ~ log(x2)), "`balance_covariates` = ~log\\(x2\\)")
  expect_error(st(balance = "entropy", balance_covariates = 3), "`balance_covariates` must be column names.*got 3")
  d$xc <- as.character(d$x1)
  expect_error(st(balance = "entropy", balance_covariates = c("x1", "xc")),
               "`balance_covariates` names column \"xc\", which is character, not numeric")
  d$xn <- d$x1; d$xn[d$id == 7 & d$year == 2005] <- NA   # unit 7 is treated in 2006
  expect_error(st(balance = "entropy", balance_covariates = "xn"),
               "`balance_covariates` column \"xn\" is NA for id = 7 at period 2005 .*cohort 2006")
  expect_error(st(balance = "entropy", balance_covariates = "x1", balance_tol = -1), "`balance_tol`.*-1")
  expect_error(st(balance = "entropy", balance_covariates = "x1", balance_maxit = 0), "`balance_maxit`.*0")
  expect_error(st(balance = "entropy", balance_covariates = "x1", weightsname = "w"),
               "`weightsname` = \"w\" cannot be combined with `balance` = \"entropy\"")
  expect_error(st(balance = "entropy", balance_covariates = "x1", survey = survey_design(d, weights = ~ w)),
               "`survey` cannot be combined with `balance` = \"entropy\"")
  # infeasible: cohort 2006's treated mean of xi is above every control's value
  d$xi <- ifelse(d$first_treat == 2006, 5 + d$x2, d$x2)
  expect_error(st(balance = "entropy", balance_covariates = c("x1", "xi")),
               "entropy balancing failed for cohort 2006.*\"xi\".*outside the controls' convex hull")
  # an unbalanced window
  d2 <- d[!(d$id == 3 & d$year == 2005), ]
  expect_error(did_stacked(d2, "y", "id", "year", "first_treat", kappa_pre = 2, kappa_post = 1, balance = "entropy",
                           balance_covariates = "x1"),
               "needs balanced event windows: in cohort 2004's window \\[2002, 2005\\], 1 treated or clean-control unit.*id = 3 has 3")
})

test_that("concentrated weights warn; the L-BFGS fallback balances when Newton is cut short", {
  d <- sim_panel()
  # cohort 2004's treated mean of xs sits among the few controls with large values
  d$xs <- ifelse(d$first_treat == 2004, 2.9, ifelse(d$id %% 40 == 0, 3, 0))
  expect_warning(f <- did_stacked(d, "y", "id", "year", "first_treat", kappa_pre = 2, kappa_post = 1,
                                  balance = "entropy", balance_covariates = "xs"),
                 "cohort 2004 concentrates the control weights \\(effective sample size")
  expect_lt(f$balance_diagnostics$ess[1], 0.05 * f$balance_diagnostics$n_control[1])
  # the first Newton step overshoots (the Hessian underflows; diff-diff's
  # iteration diverges here): steepest-descent steps recover, and the weights
  # are ebal's
  expect_true(f$balance_diagnostics$max_imbalance_post[1] < 1e-8)
  expect_gt(f$balance_diagnostics$iterations[1], 10L)
  if (has_peer("ebal")) {
    x <- d[d$year == 2003, ]; bw <- f$balance_weights[f$balance_weights$cohort == 2004, ]
    x <- x[match(bw$unit, x$id), ]
    e <- ebal::ebalance(bw$treated, x[, "xs", drop = FALSE], constraint.tolerance = 1e-10)
    expect_lt(max(abs(e$w / sum(e$w) - bw$b[!bw$treated])), 1e-6)
  }
  f1 <- did_stacked(d, "y", "id", "year", "first_treat", kappa_pre = 2, kappa_post = 1, balance = "entropy",
                    balance_covariates = c("x1", "x2"), balance_maxit = 1)
  expect_equal(f1$balance_diagnostics$solver, rep("lbfgs", 3))
  expect_true(all(f1$balance_diagnostics$max_imbalance_post < 1e-8))
  f2 <- did_stacked(d, "y", "id", "year", "first_treat", kappa_pre = 2, kappa_post = 1, balance = "entropy",
                    balance_covariates = c("x1", "x2"))
  expect_equal(f1$balance_weights$b, f2$balance_weights$b, tolerance = 1e-6)
  expect_equal(f1$balance_maxit, 1L)
})

test_that("CR2 with balancing weights equals clubSandwich's CR2 and Satterthwaite df on lm() (fixed weights)", {
  need_peer("clubSandwich")
  d <- sim_panel()
  f <- did_stacked(d, "y", "id", "year", "first_treat", kappa_pre = 2, kappa_post = 1, balance = "entropy",
                   balance_covariates = "x2", vcov = "CR2")
  s <- eb_stack(d, 2, 1)
  # the fit's own regression weights (the weights' parity is tested above):
  # this checks the CR2 layer with them
  s$W <- f$balance_weights$weight[match(paste(s$sub, s$id), paste(f$balance_weights$cohort, f$balance_weights$unit))]
  m <- lm(y ~ factor(D) + factor(e) + I(D * (e == -2)) + I(D * (e == 0)) + I(D * (e == 1)), data = s, weights = W)
  V <- clubSandwich::vcovCR(m, cluster = s$id, type = "CR2")
  nm <- grep("^I\\(", names(coef(m)), value = TRUE)
  expect_lt(rel_diff(f$coeftable$std.error[1:3], sqrt(diag(V))[nm]), 1e-6)
  ct <- clubSandwich::coef_test(m, vcov = V, test = "Satterthwaite")
  expect_lt(rel_diff(f$df[1:3], ct$df_Satt[match(nm, ct$Coef)]), 1e-6)
})

test_that("uniform balancing weights give balance = \"none\"'s estimates, with xformla too", {
  # A balancing covariate that is already balanced (the same value for every
  # unit) leaves b uniform, so the weights must be Wing's Q: the
  # estimates equal the default's with and without regression covariates.
  # (With diff-diff's scale, control weights K / sum N^C times Q, the
  # xformla case moved: ATT 1.66627 against 1.66517 on this panel.)
  d <- sim_panel()
  d$one <- 1
  for (xf in list(NULL, ~ x1)) {
    f0 <- did_stacked(d, "y", "id", "year", "first_treat", xformla = xf, kappa_pre = 2, kappa_post = 1)
    fe <- suppressWarnings(did_stacked(d, "y", "id", "year", "first_treat", xformla = xf, kappa_pre = 2, kappa_post = 1,
                                       balance = "entropy", balance_covariates = "one"))
    expect_true(all(abs(fe$balance_weights$b[!fe$balance_weights$treated] -
                        ave(fe$balance_weights$b, fe$balance_weights$cohort, FUN = function(v) v[length(v)])[!fe$balance_weights$treated]) < 1e-12))
    expect_equal(fe$coeftable$estimate, f0$coeftable$estimate, tolerance = 1e-10)
    expect_equal(fe$coeftable$std.error, f0$coeftable$std.error, tolerance = 1e-10)
  }
})
