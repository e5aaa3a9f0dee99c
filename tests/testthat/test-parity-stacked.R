# did_stacked() against the recipe of Wing, Freedman and Hollingsworth (2024)
# run by hand: sub-experiments built here with base R, corrective weights
# Q = (N^D_ae / N^D_e) / (N^C_ae / N^C_e) for controls (1 for treated; counts
# of stacked rows per sub-experiment and event time, as the authors' R code),
# and the event study fitted by fixest::feols(y ~ i(e, D, ref = -1) | D + e,
# weights = Q, cluster = ~ unit). Estimates 1e-8, clustered SEs 1e-6.
stack_by_hand <- function(d, kpre, kpost, rule = "not_yet_treated", g = "first_treat", t = "year") {
  never <- d[[g]] == 0 | is.na(d[[g]])
  lo <- min(d[[t]]); hi <- max(d[[t]])
  out <- list()
  for (a in sort(unique(d[[g]][!never]))) {
    if (a - kpre < lo || a + kpost > hi) next
    bound <- switch(rule, not_yet_treated = a + kpost, strict = a + kpost + kpre, never_treated = Inf)
    ctrl <- never | d[[g]] > bound
    if (!any(ctrl)) next
    s <- d[(d[[g]] == a & !never | ctrl) & d[[t]] >= a - kpre & d[[t]] <= a + kpost, ]
    s$sub <- a; s$e <- s[[t]] - a; s$D <- as.integer(s[[g]] == a & !(s[[g]] == 0))
    out[[length(out) + 1]] <- s
  }
  s <- do.call(rbind, out)
  n_ae <- aggregate(cbind(T = s$D, C = 1 - s$D), list(sub = s$sub, e = s$e), sum)
  n_e <- aggregate(cbind(T = s$D, C = 1 - s$D), list(e = s$e), sum)
  k <- match(paste(s$sub, s$e), paste(n_ae$sub, n_ae$e)); j <- match(s$e, n_e$e)
  s$Q <- ifelse(s$D == 1, 1, (n_ae$T[k] / n_e$T[j]) / (n_ae$C[k] / n_e$C[j]))
  s[s$Q > 0, ]
}

stacked_check <- function(res, f) {
  ct <- fixest::coeftable(res)
  k <- grep("^e::", rownames(ct))
  m <- match(paste0("event::", sub("^e::(-?[0-9]+):D$", "\\1", rownames(ct)[k])), f$coeftable$term)
  expect_false(anyNA(m))
  expect_lt(rel_diff(f$coeftable$estimate[m], ct[k, 1]), 1e-8)
  expect_lt(rel_diff(f$coeftable$std.error[m], ct[k, 2]), 1e-6)
  post <- k[as.numeric(sub("^e::(-?[0-9]+):D$", "\\1", rownames(ct)[k])) >= 0]
  a <- rep(1 / length(post), length(post))
  att <- sum(a * coef(res)[post]); se <- sqrt(drop(t(a) %*% vcov(res)[post, post] %*% a))
  i <- match("ATT", f$coeftable$term)
  expect_lt(abs(f$coeftable$estimate[i] - att) / abs(att), 1e-8)
  expect_lt(abs(f$coeftable$std.error[i] - se) / se, 1e-6)
  expect_equal(f$stacked_nobs, nobs(res))
}

test_that("balanced panel: event study and ATT equal the hand-made stack in feols", {
  need_peer("fixest")
  d <- sim_panel(); d0 <- d
  f <- did_stacked(d, "y", "id", "year", "first_treat", kappa_pre = 3, kappa_post = 2)
  expect_identical(d, d0)
  s <- stack_by_hand(d, 3, 2)
  stacked_check(fixest::feols(y ~ i(e, D, ref = -1) | D + e, s, weights = ~ Q, cluster = ~ id), f)
  expect_equal(f$cohorts$kept, c(TRUE, TRUE, TRUE))
  expect_message(f3 <- did_stacked(d, "y", "id", "year", "first_treat", kappa_pre = 3, kappa_post = 3), "2008 trimmed")
  expect_equal(f3$cohorts$kept, c(TRUE, TRUE, FALSE))
  # never-treated and strict clean controls; clustering by state
  for (rule in c("never_treated", "strict")) {
    f <- did_stacked(d, "y", "id", "year", "first_treat", kappa_pre = 2, kappa_post = 1, control_group = rule,
                     cluster = "state")
    s <- stack_by_hand(d, 2, 1, rule)
    stacked_check(fixest::feols(y ~ i(e, D, ref = -1) | D + e, s, weights = ~ Q, cluster = ~ state), f)
  }
})

test_that("unbalanced panel, covariates and sampling weights equal the hand-made stack", {
  need_peer("fixest")
  d <- sim_panel()
  set.seed(11)
  d <- d[-sample(nrow(d), 300), ]
  expect_message(f <- did_stacked(d, "y", "id", "year", "first_treat", kappa_pre = 3, kappa_post = 3,
                                  xformla = ~ x1, weightsname = "w"), "2008 trimmed")
  s <- stack_by_hand(d, 3, 3)
  s$wQ <- s$Q * s$w
  stacked_check(fixest::feols(y ~ i(e, D, ref = -1) + x1 | D + e, s, weights = ~ wQ, cluster = ~ id), f)
  # Q differs across event times within a sub-experiment here (unbalanced cells)
  expect_gt(length(unique(round(s$Q[s$D == 0 & s$sub == 2004], 12))), 1)
})

test_that("invariants: one cohort gives Q = 1; row order; survey with PSU = unit", {
  d <- sim_panel()
  d1 <- d[d$first_treat %in% c(0, 2006), ]
  f1 <- did_stacked(d1, "y", "id", "year", "first_treat", kappa_pre = 2, kappa_post = 2)
  e1 <- did_event(d1[d1$year >= 2004 & d1$year <= 2008, ], "y", "id", "year", "first_treat")
  # one sub-experiment: Q = 1, and on a balanced window the pooled regression on
  # D and event time gives the unit/period fixed-effects event study's estimates
  expect_equal(f1$coeftable$estimate[1:4], e1$coeftable$estimate[match(f1$coeftable$term[1:4], e1$coeftable$term)],
               tolerance = 1e-10)
  set.seed(2)
  f <- did_stacked(d, "y", "id", "year", "first_treat", kappa_pre = 3, kappa_post = 2)
  f2 <- did_stacked(d[sample(nrow(d)), ], "y", "id", "year", "first_treat", kappa_pre = 3, kappa_post = 2)
  expect_equal(f2$coeftable, f$coeftable, tolerance = 1e-10)
  d$w1 <- 1
  s <- did_stacked(d, "y", "id", "year", "first_treat", kappa_pre = 3, kappa_post = 2,
                   survey = survey_design(d, weights = ~ w1, ids = ~ id))
  expect_equal(s$coeftable$estimate, f$coeftable$estimate, tolerance = 1e-12)
  expect_true(all(s$coeftable$std.error > 0))
  # Taylor linearisation with duplicated design rows: the scores of a unit's copies are summed
  G <- length(unique(d$id)); n <- f$stacked_nobs; K <- nrow(f$coef_full) + 2 + 6 - 1
  expect_equal(s$coeftable$std.error[1], f$coeftable$std.error[1] / sqrt((n - 1) / (n - K)), tolerance = 1e-6)
})

test_that("replicate design: the variance of refits with Q x replicate weights", {
  need_peer("survey")
  d <- sim_panel()
  d <- d[d$id <= 80, ]
  rep <- survey::as.svrepdesign(survey::svydesign(ids = ~ id, weights = ~ w, data = d), type = "JK1")
  f <- did_stacked(d, "y", "id", "year", "first_treat", kappa_pre = 2, kappa_post = 1, survey = rep)
  s <- stack_by_hand(d, 2, 1)
  s$row <- match(paste(s$id, s$year), paste(d$id, d$year))
  Wr <- weights(rep, "analysis")[s$row, ]
  fit_w <- function(wt) {
    b <- coef(lm(y ~ 0 + factor(D) + factor(e) + I(D * (e == -2)) + I(D * (e == 0)) + I(D * (e == 1)),
                 data = s, weights = wt))
    b[grep("^I\\(", names(b))]
  }
  th <- fit_w(s$Q * s$w)
  ths <- t(apply(Wr, 2, function(wr) fit_w(s$Q * wr)))
  G <- ncol(Wr)
  se <- sqrt((G - 1) / G * colSums(sweep(ths, 2, colMeans(ths))^2))
  expect_lt(rel_diff(f$coeftable$estimate[1:3], th), 1e-10)
  expect_lt(rel_diff(f$coeftable$std.error[1:3], se), 1e-8)
})

test_that("bad input names the argument and value", {
  d <- sim_panel()
  expect_error(did_stacked(d, "y", "id", "year", "first_treat", kappa_post = 2), "`kappa_pre`")
  expect_error(did_stacked(d, "y", "id", "year", "first_treat", kappa_pre = 2), "`kappa_post`")
  expect_error(did_stacked(d, "y", "id", "year", "first_treat", kappa_pre = 0, kappa_post = 1), "`kappa_pre`.*0")
  expect_error(did_stacked(d, "y", "id", "year", "first_treat", kappa_pre = 1, kappa_post = -1), "`kappa_post`.*-1")
  expect_error(did_stacked(d, "y", "id", "year", "first_treat", kappa_pre = 8, kappa_post = 4),
               "no cohort has its event window.*`kappa_pre` = 8")
  expect_message(did_stacked(d, "y", "id", "year", "first_treat", kappa_pre = 3, kappa_post = 3),
                 "cohort\\(s\\) 2008 trimmed \\(window outside the data\\)")
  expect_error(did_stacked(d, "y", "id", "year", "first_treat", kappa_pre = 1, kappa_post = 1,
                           control_group = "bogus"), "`control_group`.*bogus")
  d2 <- d[d$first_treat != 0, ]
  expect_error(did_stacked(d2, "y", "id", "year", "first_treat", kappa_pre = 1, kappa_post = 1,
                           control_group = "never_treated"), "no cohort.*clean control")
})

test_that("Conley's spatial variance: the hand-made stack in feols with vcov = conley()", {
  need_peer("fixest")
  d <- sim_panel()
  set.seed(8)
  u <- sort(unique(d$id))
  d$lat <- stats::runif(length(u), 35, 45)[match(d$id, u)]; d$lon <- stats::runif(length(u), -100, -85)[match(d$id, u)]
  f <- did_stacked(d, "y", "id", "year", "first_treat", kappa_pre = 3, kappa_post = 2, vcov = "conley", cutoff = 150)
  s <- stack_by_hand(d, 3, 2)
  stacked_check(fixest::feols(y ~ i(e, D, ref = -1) | D + e, s, weights = ~ Q,
                              vcov = fixest::conley(150, distance = "spherical")), f)
  expect_match(f$vcov_label, "Conley")
})
