# did_cs against did::att_gt / did::aggte (did 2.5.1 when written).
# Tolerances (issue #3): ATT(g,t) and aggregates 1e-8 relative, analytic
# standard errors 1e-6 relative; NA cells must coincide.
cs_check <- function(p) {
  expect_equal(p$f$coeftable$group, p$m$group)
  expect_equal(p$f$coeftable$time, p$m$t)
  expect_lt(rel_na(p$f$coeftable$estimate, p$m$att), 1e-8)
  expect_lt(rel_na(p$f$coeftable$std.error, p$m$se), 1e-6)
  if (!is.null(p$m$W)) expect_lt(abs(p$f$pretest$W - p$m$W) / p$m$W, 1e-6)
}

test_that("mpdta: every estimator, control group, base period and anticipation", {
  need_peer("did")
  data("mpdta", package = "did", envir = environment())
  for (em in c("dr", "ipw", "reg")) for (cg in c("nevertreated", "notyettreated"))
    for (bp in c("varying", "universal")) for (an in 0:1) for (xf in list(NULL, ~lpop)) {
      p <- cs_pair(mpdta, "lemp", "year", "countyreal", "first.treat", xformla = xf,
                   est_method = em, control_group = cg, base_period = bp, anticipation = an)
      cs_check(p)
    }
})

test_that("mpdta: every aggregation type, including balance_e, min_e, max_e", {
  need_peer("did")
  data("mpdta", package = "did", envir = environment())
  for (em in c("dr", "reg")) {
    p <- cs_pair(mpdta, "lemp", "year", "countyreal", "first.treat", xformla = ~lpop, est_method = em)
    cs_check_aggte(p)
    a <- did::aggte(p$m, type = "dynamic", balance_e = 1, bstrap = FALSE, cband = FALSE)
    b <- aggregate(p$f, type = "dynamic", balance_e = 1, nboot = 0, cband = FALSE)
    expect_lt(rel_na(b$coeftable$estimate, c(a$att.egt, a$overall.att)), 1e-8)
    expect_lt(rel_na(b$coeftable$std.error, c(a$se.egt, a$overall.se)), 1e-6)
    a <- did::aggte(p$m, type = "dynamic", min_e = -2, max_e = 2, bstrap = FALSE, cband = FALSE)
    b <- aggregate(p$f, type = "dynamic", min_e = -2, max_e = 2, nboot = 0, cband = FALSE)
    expect_lt(rel_na(b$coeftable$estimate, c(a$att.egt, a$overall.att)), 1e-8)
    expect_lt(rel_na(b$coeftable$std.error, c(a$se.egt, a$overall.se)), 1e-6)
    a <- did::aggte(p$m, type = "group", max_e = 1, bstrap = FALSE, cband = FALSE)
    b <- aggregate(p$f, type = "group", max_e = 1, nboot = 0, cband = FALSE)
    expect_lt(rel_na(b$coeftable$estimate, c(a$att.egt, a$overall.att)), 1e-8)
  }
})

test_that("repeated cross-sections, unbalanced panel, weights and clusters", {
  need_peer("did")
  data("mpdta", package = "did", envir = environment())
  set.seed(1)
  mp <- mpdta
  mp$w <- ave(runif(nrow(mp), 0.5, 2), mp$countyreal)
  mp$cl <- mp$countyreal %% 37
  un <- mpdta[-sample(nrow(mpdta), round(0.1 * nrow(mpdta))), ]   # 10% of rows removed
  for (em in c("dr", "ipw", "reg")) {
    p <- cs_pair(mpdta, "lemp", "year", "countyreal", "first.treat", xformla = ~lpop,
                 est_method = em, panel = FALSE)
    cs_check(p); cs_check_aggte(p)
    p <- cs_pair(mpdta, "lemp", "year", "countyreal", "first.treat", est_method = em,
                 panel = FALSE, control_group = "notyettreated")
    cs_check(p)
    p <- cs_pair(un, "lemp", "year", "countyreal", "first.treat", xformla = ~lpop,
                 est_method = em, allow_unbalanced_panel = TRUE)
    cs_check(p); cs_check_aggte(p)
    p <- cs_pair(mp, "lemp", "year", "countyreal", "first.treat", xformla = ~lpop,
                 est_method = em, weightsname = "w")
    cs_check(p); cs_check_aggte(p)
    p <- cs_pair(mp, "lemp", "year", "countyreal", "first.treat", xformla = ~lpop,
                 est_method = em, clustervars = "cl")
    cs_check(p); cs_check_aggte(p)
  }
})

test_that("a simulated panel where reg, ipw and dr differ", {
  need_peer("did")
  d <- sim_cs_panel()
  est <- list()
  for (em in c("dr", "ipw", "reg")) for (cg in c("nevertreated", "notyettreated")) {
    p <- cs_pair(d, "y", "t", "id", "g", xformla = ~ x1 + x2, est_method = em,
                 control_group = cg, weightsname = "w")
    cs_check(p); cs_check_aggte(p)
    est[[paste(em, cg)]] <- p$f$coeftable$estimate
  }
  # the covariates matter: the three estimators do not coincide
  expect_gt(max(abs(est[["dr nevertreated"]] - est[["reg nevertreated"]])), 1e-3)
  expect_gt(max(abs(est[["dr nevertreated"]] - est[["ipw nevertreated"]])), 1e-3)
})

test_that("did's argument spellings run unchanged", {
  need_peer("did")
  data("mpdta", package = "did", envir = environment())
  f <- did_cs(yname = "lemp", tname = "year", idname = "countyreal", gname = "first.treat",
              data = mpdta, bstrap = FALSE, alp = 0.1, est_method = "reg")
  m <- did::att_gt(yname = "lemp", tname = "year", idname = "countyreal", gname = "first.treat",
                   data = mpdta, bstrap = FALSE, cband = FALSE, alp = 0.1, est_method = "reg")
  expect_equal(f$alpha, 0.1)
  expect_lt(rel_na(f$coeftable$std.error, m$se), 1e-6)
  expect_error(did_cs(mpdta, "lemp", "countyreal", "year", "first.treat", biter = 10), "`biter`")
})

test_that("time-varying covariates and weights: each cell uses the earlier period's values, as did", {
  need_peer("did")
  d <- sim_cs_panel(n = 400)
  set.seed(5)
  d$x3 <- d$x1 + 0.3 * d$t + rnorm(nrow(d), 0, 0.5)      # varies within unit
  d$w2 <- d$w * (1 + 0.1 * d$t)                          # weights vary over time too
  for (em in c("dr", "ipw", "reg")) for (bp in c("varying", "universal")) {
    p <- cs_pair(d, "y", "t", "id", "g", xformla = ~ x3 + x2, est_method = em, base_period = bp,
                 weightsname = "w2", control_group = "notyettreated", anticipation = 1)
    cs_check(p)
  }
})
