# did_ddd() against the live triplediff 0.2.4 (installed by
# tools/install-triplediff.sh with its R >= 4.3 and Matrix >= 1.6.1
# requirements relaxed, no code changed) on triplediff's own generators.
# Tolerances: ATT and ATT(g,t) 1e-8, influence functions 1e-8, analytic
# standard errors 1e-6. In the two-period case triplediff's SE is
# sd(psi) / sqrt(n) (n - 1 in the sd), did_ddd's sqrt(sum(psi^2)) / n (as
# triplediff's staggered SEs): the test compares did_ddd's SE times
# sqrt(n / (n - 1)), the documented difference.

ddd_peer <- function(...) suppressWarnings(suppressMessages(triplediff::ddd(...)))
xf <- ~ cov1 + cov2 + cov3 + cov4

test_that("did_ddd equals triplediff in the two-period panel: dr, reg, ipw, with covariates", {
  need_peer("triplediff")
  set.seed(11)
  g2 <- triplediff::gen_dgp_2periods(size = 2000, dgp_type = 1)$data
  d <- as.data.frame(g2); d$G <- ifelse(d$state == 1, 2, 0)
  d0 <- d
  for (m in c("dr", "reg", "ipw")) {
    r <- ddd_peer(yname = "y", tname = "time", idname = "id", gname = "state", pname = "partition", xformla = xf,
                  data = g2, control_group = "nevertreated", est_method = m, inffunc = TRUE)
    f <- did_ddd(d, "y", "id", "time", "G", "partition", xformla = xf, est_method = m)
    n <- f$n
    expect_equal(unname(f$coefficients), r$ATT, tolerance = 1e-8, label = m)
    psi <- as.matrix(f$inf)[match(sort(f$units), f$units), 1]
    expect_equal(psi, as.numeric(r$att_inf_func), tolerance = 1e-8, label = paste(m, "IF"))
    expect_equal(f$coeftable$std.error * sqrt(n / (n - 1)), r$se, tolerance = 1e-6, label = paste(m, "SE"))
  }
  expect_identical(d, d0)
})

test_that("did_ddd without covariates is the difference of the eligible and ineligible DiDs", {
  set.seed(2)
  n <- 400
  s <- rbinom(n, 1, 0.5); q <- rbinom(n, 1, 0.5)
  d <- data.frame(id = rep(1:n, each = 2), t = rep(1:2, n), g = rep(2 * s, each = 2), q = rep(q, each = 2))
  d$y <- rnorm(n)[d$id] + d$t * (1 + q[d$id] + s[d$id]) + 1.5 * (d$g == 2 & d$t == 2 & d$q == 1) + rnorm(2 * n)
  dy <- d$y[d$t == 2] - d$y[d$t == 1]
  did <- function(qq) mean(dy[s == 1 & q == qq]) - mean(dy[s == 0 & q == qq])
  for (m in c("dr", "reg", "ipw")) {
    f <- did_ddd(d, "y", "id", "t", "g", "q", est_method = m)
    expect_equal(unname(f$coefficients), did(1) - did(0), tolerance = 1e-12, label = m)
  }
})

test_that("did_ddd equals triplediff with staggered adoption (never-treated comparisons) and its aggregations", {
  need_peer("triplediff")
  set.seed(3)
  gm <- triplediff::gen_dgp_mult_periods(size = 500, dgp_type = 1)$data
  d <- as.data.frame(gm); d$G <- ifelse(is.finite(d$state), d$state, 0)
  for (bp in c("varying", "universal")) for (m in c("dr", "reg", "ipw")) {
    lab <- paste(bp, m)
    r <- ddd_peer(yname = "y", tname = "time", idname = "id", gname = "state", pname = "partition", xformla = xf,
                  data = gm, control_group = "nevertreated", base_period = bp, est_method = m, inffunc = TRUE)
    f <- did_ddd(d, "y", "id", "time", "G", "partition", xformla = xf, base_period = bp, est_method = m)
    k <- match(paste(r$groups, r$periods), paste(f$coeftable$group, f$coeftable$time))
    expect_false(anyNA(k))
    expect_equal(f$coeftable$estimate[k], r$ATT, tolerance = 1e-8, label = lab)
    ok <- !is.na(r$se)
    expect_equal(f$coeftable$std.error[k][ok], r$se[ok], tolerance = 1e-6, label = paste(lab, "SE"))
    psi <- as.matrix(f$inf)[match(sort(f$units), f$units), k, drop = FALSE]
    expect_equal(unname(psi[, ok]), unname(as.matrix(r$inf_func_mat)[, ok]), tolerance = 1e-8, label = paste(lab, "IF"))
    if (m != "dr") next
    for (ty in c("simple", "eventstudy", "group")) {
      a <- suppressWarnings(triplediff::agg_ddd(r, type = ty))$aggte_ddd
      b <- aggregate(f, type = c(simple = "simple", eventstudy = "dynamic", group = "group")[[ty]])
      tb <- b$coeftable
      expect_equal(b$coefficients[["ATT"]], a$overall.att, tolerance = 1e-8, label = paste(lab, ty))
      if (ty != "simple") {
        el <- tb[tb$term != "ATT", ]
        expect_equal(el$estimate, a$att.egt, tolerance = 1e-8, label = paste(lab, ty, "elements"))
        okk <- !is.na(a$se.egt)
        expect_equal(el$std.error[okk], a$se.egt[okk], tolerance = 1e-6, label = paste(lab, ty, "element SEs"))
      }
      # triplediff's overall SE of the group aggregation differs: its
      # weight-influence term takes `group` (the cohorts of the first cells)
      # where did takes the cohort list (compute_aggregations.R, selective
      # branch); did_ddd follows did (documented in ?did_ddd)
      if (ty != "group") expect_equal(tb$std.error[tb$term == "ATT"], a$overall.se, tolerance = 1e-6,
                                      label = paste(lab, ty, "overall SE"))
      if (ty == "group") {
        # triplediff's number from did_ddd's influence functions with its
        # weight term (cohorts r$groups[1:2] instead of the cohort list)
        psi <- as.matrix(b$inf) %*% b$comb
        G <- f$unit_group; gl <- sort(unique(r$groups)); J <- length(gl)
        pg <- vapply(gl, function(g) mean(G == g), 0)
        wif <- function(grp) sapply(seq_len(J), function(k) ((G == grp[k]) - pg[k]) / sum(pg)) -
          rowSums(sapply(seq_len(J), function(k) (G == grp[k]) - pg[k])) %*% t(pg / sum(pg)^2)
        th <- el$estimate
        ov <- function(grp) psi[, seq_len(J)] %*% (pg / sum(pg)) + wif(grp) %*% th
        expect_equal(sqrt(sum(ov(r$groups[seq_len(J)])^2)) / f$n, a$overall.se, tolerance = 1e-6)
        expect_equal(sqrt(sum(ov(gl)^2)) / f$n, tb$std.error[tb$term == "ATT"], tolerance = 1e-10)
      }
    }
  }
})

test_that("did_ddd equals triplediff with not-yet-treated comparisons (GMM over comparison cohorts)", {
  # gen_dgp_mult_periods has cohorts 2, 3 and never treated over 3 periods:
  # ATT(2,2) combines the never treated and cohort 3; every cohort is in
  # every cell (the case where triplediff's scaling is right). The GMM
  # cells' SE of triplediff uses the n - 1 covariance: did_ddd's times
  # sqrt(n / (n - 1)) is compared there (documented).
  need_peer("triplediff")
  set.seed(3)
  gm <- triplediff::gen_dgp_mult_periods(size = 500, dgp_type = 1)$data
  d <- as.data.frame(gm); d$G <- ifelse(is.finite(d$state), d$state, 0)
  for (bp in c("varying", "universal")) for (m in c("dr", "reg", "ipw")) {
    lab <- paste(bp, m)
    r <- ddd_peer(yname = "y", tname = "time", idname = "id", gname = "state", pname = "partition", xformla = xf,
                  data = gm, control_group = "notyettreated", base_period = bp, est_method = m, inffunc = TRUE)
    f <- did_ddd(d, "y", "id", "time", "G", "partition", xformla = xf, base_period = bp, est_method = m,
                 control_group = "notyettreated")
    k <- match(paste(r$groups, r$periods), paste(f$coeftable$group, f$coeftable$time))
    expect_equal(f$coeftable$estimate[k], r$ATT, tolerance = 1e-8, label = lab)
    psi <- as.matrix(f$inf)[match(sort(f$units), f$units), k, drop = FALSE]
    ok <- !is.na(r$se)
    expect_equal(unname(psi[, ok]), unname(as.matrix(r$inf_func_mat)[, ok]), tolerance = 1e-8, label = paste(lab, "IF"))
    gmm <- f$comparisons[k] > 1
    expect_true(any(gmm))
    fac <- ifelse(gmm, sqrt(f$n / (f$n - 1)), 1)
    expect_equal((f$coeftable$std.error[k] * fac)[ok], r$se[ok], tolerance = 1e-6, label = paste(lab, "SE"))
    if (m == "dr" && bp == "varying") {
      e <- aggregate(f, type = "dynamic")
      a <- suppressWarnings(triplediff::agg_ddd(r, type = "eventstudy"))$aggte_ddd
      el <- e$coeftable[e$coeftable$term != "ATT", ]
      expect_equal(el$estimate, a$att.egt, tolerance = 1e-8)
      expect_equal(el$std.error, a$se.egt, tolerance = 1e-6)
    }
  }
})

test_that("did_ddd: bootstrap, bands, clusters and the event study's typed component", {
  need_peer("triplediff")
  set.seed(3)
  gm <- triplediff::gen_dgp_mult_periods(size = 500, dgp_type = 1)$data
  d <- as.data.frame(gm); d$G <- ifelse(is.finite(d$state), d$state, 0)
  f0 <- did_ddd(d, "y", "id", "time", "G", "partition", xformla = xf)
  set.seed(1)
  fb <- did_ddd(d, "y", "id", "time", "G", "partition", xformla = xf, nboot = 999, cband = TRUE)
  expect_identical(fb$coefficients, f0$coefficients)
  ratio <- fb$coeftable$std.error / f0$coeftable$std.error
  expect_true(all(abs(ratio - 1) < 0.15), label = paste(format(ratio, digits = 3), collapse = " "))
  expect_true(fb$crit > stats::qnorm(0.975))
  es <- aggregate(f0, type = "dynamic")
  expect_equal(es$event_study$event, c(-1, 0, 1))
  fc <- did_ddd(d, "y", "id", "time", "G", "partition", xformla = xf, cluster = "cluster")
  expect_identical(fc$n_clusters, length(unique(d$cluster)))
  expect_false(isTRUE(all.equal(fc$coeftable$std.error, f0$coeftable$std.error)))
  expect_equal(sqrt(diag(vcov(f0))), stats::setNames(f0$coeftable$std.error, f0$coeftable$term), tolerance = 1e-12)
})

test_that("did_ddd: bad input gets errors naming the argument and value", {
  set.seed(2)
  n <- 200
  s <- sample(c(0, 2), n, TRUE); q <- rbinom(n, 1, 0.5)
  d <- data.frame(id = rep(1:n, each = 3), t = rep(1:3, n), g = rep(s, each = 3), q = rep(q, each = 3))
  d$y <- rnorm(nrow(d))
  run <- function(dd, ...) did_ddd(dd, "y", "id", "t", "g", "q", ...)
  d2 <- d; d2$q[1] <- 2
  expect_error(run(d2), "`pname` = \"q\" must be a 0/1 indicator")
  d3 <- d; d3$q[d3$id == 1] <- c(0, 1, 1)
  expect_error(run(d3), "`pname` = \"q\" must be constant within each unit")
  d4 <- d; d4$q[d4$g == 2] <- 1
  expect_error(run(d4), "cohort 2 .* no ineligible units")
  d5 <- d; d5$q[d5$g == 2] <- 0
  expect_error(run(d5), "cohort 2 .* no eligible units")
  d6 <- d; d6$q[d6$g == 0] <- 1
  expect_error(run(d6), "never-treated units .* eligible and ineligible")
  d7 <- d; d7$g[d7$id == 3] <- c(0, 2, 2)
  expect_error(run(d7), "`gname` = \"g\" must be constant within each unit")
  # units missing periods are dropped with a warning (as triplediff and did)
  expect_warning(fu <- run(d[-1, ]), "1 units are missing in some periods")
  expect_equal(coef(fu), coef(run(d[d$id != 1, ])), tolerance = 1e-14)
  expect_error(run(d, panel = "no"), "`panel`")
  expect_error(run(d, cores = 0), "`cores`")
  expect_error(run(d, inffunc = NA), "`inffunc`")
  expect_error(run(d, bootstrap = TRUE), "no argument `bootstrap`")
  # not-yet-treated comparisons from a cohort without ineligible units only
  set.seed(2)
  s2 <- sample(c(3, 5), n, TRUE); q2 <- rbinom(n, 1, 0.5); q2[s2 == 5] <- 1
  dn <- data.frame(id = rep(1:n, each = 6), t = rep(1:6, n), g = rep(s2, each = 6), q = rep(q2, each = 6))
  dn$y <- rnorm(nrow(dn))
  expect_error(run(dn, control_group = "notyettreated"),
               "ATT\\(3,2\\) has no comparison cohort with both eligible and ineligible units")
  # repeated cross-sections with no ineligible never-treated observation in
  # period 2: the cells using period 2 are NA with a warning, the others stay
  dr <- d[!(d$g == 0 & d$q == 0 & d$t == 2), ]
  expect_warning(fr <- run(dr, panel = FALSE),
                 "no comparison \\(or treated\\) units for the comparisons ATT\\(2,2\\) against never treated ineligible; left out")
  expect_identical(fr$coeftable$term, c("ATT(2,2)", "ATT(2,3)"))
  expect_identical(is.na(fr$coeftable$estimate), c(TRUE, FALSE))
  expect_identical(is.na(fr$coeftable$std.error), c(TRUE, FALSE))
  # with not-yet-treated comparisons a cell keeps the comparison cohorts
  # that have observations: ATT(3,2) (periods 2 and 1) without the
  # ineligible never treated of period 1 compares with cohort 4 alone
  set.seed(2)
  s3 <- sample(c(0, 3, 4), 900, TRUE); q3 <- rbinom(900, 1, 0.5)
  d3 <- data.frame(id = rep(1:900, each = 4), t = rep(1:4, 900), g = rep(s3, each = 4), q = rep(q3, each = 4))
  d3$y <- rnorm(nrow(d3)) + 2 * (d3$g > 0 & d3$t >= d3$g & d3$q == 1)
  d3 <- d3[!(d3$g == 0 & d3$q == 0 & d3$t == 1), ]
  expect_warning(f3 <- run(d3, panel = FALSE, control_group = "notyettreated"),
                 "ATT\\(3,2\\) against never treated ineligible, ATT\\(4,2\\) against never treated ineligible; left out")
  expect_false(anyNA(f3$coeftable$estimate))
  expect_identical(f3$comparisons[f3$coeftable$term == "ATT(3,2)"], 1L)
  only4 <- suppressWarnings(run(d3[d3$g != 0 | d3$t != 1, ], panel = FALSE, control_group = "notyettreated"))
  expect_equal(f3$coefficients[["ATT(3,2)"]], only4$coefficients[["ATT(3,2)"]], tolerance = 1e-12)
  expect_error(run(d, est_method = "ols"), "`est_method`")
  expect_error(did_ddd(d, "y", "id", "t", "g"), "`pname`")
  d8 <- d; d8$psu <- seq_len(nrow(d8))
  expect_error(run(d8, survey = suppressWarnings(survey_design(d8, ids = "psu"))), "units \\(`idname` = \"id\"\\) must lie within one PSU")
})

test_that("did_ddd reproduces the stored triplediff staggered numbers (never- and not-yet-treated keys)", {
  # ref-ddd-staggered.csv: triplediff's numbers from ../shared/reference (an
  # earlier release; 0.2.4 reproduces them), xformla = ~1, varying base
  # period, never- and not-yet-treated comparisons
  need_peer("triplediff")
  ref <- read.csv(test_path("ref-ddd-staggered.csv"), comment.char = "#", stringsAsFactors = FALSE)
  for (k in unique(ref$key)) {
    r <- ref[ref$key == k, ]
    set.seed(r$seed[1])
    d <- as.data.frame(triplediff::gen_dgp_mult_periods(size = r$n[1], dgp_type = r$dgp_type[1])$data)
    d$G <- ifelse(is.finite(d$state), d$state, 0)
    f <- did_ddd(d, "y", "id", "time", "G", "partition", est_method = r$est_method[1],
                 control_group = r$control_group[1])
    gt <- r[r$what == "gt", ]
    m <- match(paste(gt$group, gt$time), paste(f$coeftable$group, f$coeftable$time))
    expect_equal(f$coeftable$estimate[m], gt$att, tolerance = 1e-8, label = k)
    fac <- ifelse(f$comparisons[m] > 1, sqrt(f$n / (f$n - 1)), 1)       # GMM cells: n - 1 (see above)
    expect_equal(f$coeftable$std.error[m] * fac, gt$se, tolerance = 1e-6, label = k)
    s <- aggregate(f, type = "simple")
    expect_equal(unname(s$coefficients), r$att[r$what == "simple"], tolerance = 1e-8, label = k)
    expect_equal(s$coeftable$std.error, r$se[r$what == "simple"], tolerance = 1e-6, label = k)
    e <- aggregate(f, type = "dynamic")
    es <- r[r$what == "es", ]
    et <- e$coeftable[e$coeftable$term != "ATT", ]
    expect_equal(et$event, es$event)
    expect_equal(et$estimate, es$att, tolerance = 1e-8, label = k)
    expect_equal(et$std.error, es$se, tolerance = 1e-6, label = k)
    expect_equal(e$coefficients[["ATT"]], r$att[r$what == "es_overall"], tolerance = 1e-8, label = k)
    expect_equal(e$coeftable$std.error[e$coeftable$term == "ATT"], r$se[r$what == "es_overall"], tolerance = 1e-6)
  }
})

test_that("did_ddd with not-yet-treated comparisons when cells leave cohorts out: the corrected estimator", {
  # Four periods, cohorts 2, 3, 4 and never treated: ATT(2,3) compares cohort
  # 2 with cohort 4 and the never treated (cohort 3 is treated by then), so
  # cells leave cohorts out. triplediff 0.2.4 then scales the comparison
  # cohorts' influence functions by the cell size and places them on the
  # wrong units, which moves ATT(2,3) (1.8488 against 1.8569). The reference
  # (ref-ddd-nyt-stag4.csv) is an independent base-R re-implementation with
  # full-sample influence functions; its GMM cells' SE uses the n - 1
  # covariance (compared after the factor sqrt(n / (n - 1))).
  stag4_panel <- function(n = 1200, seed = 11) {
    set.seed(seed)
    G <- sample(c(0, 2, 3, 4), n, replace = TRUE, prob = c(.3, .25, .25, .2))
    Q <- rbinom(n, 1, 0.5); x1 <- rnorm(n); x2 <- rnorm(n)
    a <- rnorm(n) + 0.5 * x1
    d <- expand.grid(id = 1:n, time = 1:4)
    d <- d[order(d$id, d$time), ]
    i <- d$id
    d$state <- G[i]; d$partition <- Q[i]; d$x1 <- x1[i]; d$x2 <- x2[i]
    treated <- G[i] > 0 & d$time >= G[i] & Q[i] == 1
    d$y <- a[i] + d$time * (1 + 0.3 * x1[i] + 0.2 * Q[i] + 0.1 * (G[i] > 0)) + treated * (1 + d$time - G[i]) +
      rnorm(nrow(d))
    d
  }
  d <- stag4_panel()
  ref <- read.csv(test_path("ref-ddd-nyt-stag4.csv"), comment.char = "#")
  f <- did_ddd(d, "y", "id", "time", "state", "partition", xformla = ~ x1 + x2, control_group = "notyettreated")
  k <- match(paste(ref$group, ref$time), paste(f$coeftable$group, f$coeftable$time))
  expect_equal(f$coeftable$estimate[k], ref$att, tolerance = 1e-8)
  fac <- ifelse(f$comparisons[k] > 1, sqrt(f$n / (f$n - 1)), 1)
  expect_equal(f$coeftable$std.error[k] * fac, ref$se, tolerance = 1e-6)
  expect_identical(as.integer(f$comparisons[k][1:2]), c(3L, 2L))     # ATT(2,2): never, 3, 4; ATT(2,3): never, 4
  need_peer("triplediff")
  r <- ddd_peer(yname = "y", tname = "time", idname = "id", gname = "state", pname = "partition",
                xformla = ~ x1 + x2, data = d, control_group = "notyettreated", est_method = "dr")
  j <- match(paste(r$groups, r$periods), paste(ref$group, ref$time))
  expect_gt(abs(r$ATT[j == 2] - ref$att[2]), 0.005)                 # triplediff's placement fault
})

# Repeated cross-sections and unbalanced panels run in did_cs's repeated
# cross-section engine (C_cs_rc) with blocks of (cohort, eligibility,
# period). The samples: triplediff's panels with a random 60% (two periods)
# or 70% (staggered) of the rows kept, each row its own observation
# (triplediff: idname = NULL, panel = FALSE), and a random 85% of the rows
# kept as an unbalanced panel (allow_unbalanced_panel = TRUE).
# triplediff 0.2.4's doubly robust repeated cross-section influence function
# (compute_did_rc) adds the pre-period regression terms where DRDID's
# drdid_rc (did's and did_cs's estimator) subtracts them: the estimates
# agree, the influence functions differ on the comparison observations of
# the base period only. did_ddd follows DRDID; the tests check both facts,
# and the doubly robust influence function against DRDID::drdid_rc directly.
rc_rows <- function(x, p, seed) { set.seed(seed); x[rbinom(nrow(x), 1, p) == 1] }

test_that("did_ddd equals triplediff in two-period repeated cross-sections: dr, reg, ipw", {
  need_peer("triplediff")
  need_peer("DRDID")
  set.seed(11)
  g2 <- rc_rows(triplediff::gen_dgp_2periods(size = 1000, dgp_type = 1)$data, 0.6, 5)
  d <- as.data.frame(g2); d$G <- ifelse(d$state == 1, 2, 0); d$rid <- seq_len(nrow(d))
  n <- nrow(d)
  d0 <- d
  on.exit(expect_identical(d, d0))
  db <- d; db$partition[db$G == 2] <- 1
  expect_error(did_ddd(db, "y", "rid", "time", "G", "partition", panel = FALSE),
               "cohort 2 of `gname` = \"G\" has no ineligible observations")
  db <- d; db$partition[1] <- 3
  expect_error(did_ddd(db, "y", "rid", "time", "G", "partition", panel = FALSE), "`pname` = \"partition\" must be a 0/1")
  for (m in c("dr", "reg", "ipw")) {
    r <- ddd_peer(yname = "y", tname = "time", idname = NULL, gname = "state", pname = "partition", xformla = xf,
                  data = data.table::copy(g2), est_method = m, panel = FALSE, inffunc = TRUE)
    f <- did_ddd(d, "y", "rid", "time", "G", "partition", xformla = xf, est_method = m, panel = FALSE)
    expect_identical(f$n, n)
    expect_null(f$units)
    expect_equal(unname(f$coefficients), r$ATT, tolerance = 1e-8, label = m)
    psi <- as.matrix(f$inf)[, 1]
    if (m == "dr") {
      # the base-period comparison rows (state 0 or partition 0, time 1) carry
      # triplediff's sign difference; everywhere else the two agree
      cmp <- !(d$state == 1 & d$partition == 1) & d$time == 1
      expect_equal(psi[!cmp], as.numeric(r$att_inf_func)[!cmp], tolerance = 1e-8)
      expect_gt(max(abs(psi[cmp] - as.numeric(r$att_inf_func)[cmp])), 1)
      # did_ddd's influence function is DRDID's: sum of the three drdid_rc
      # influence functions, each scaled by n / n_j
      sg <- ifelse(d$state == 1 & d$partition == 1, 4, ifelse(d$state == 1, 3, ifelse(d$partition == 1, 2, 1)))
      X <- stats::model.matrix(xf, d)
      ref <- numeric(n)
      for (j in 3:1) {
        s <- sg %in% c(4, j)
        a <- DRDID::drdid_rc(y = d$y[s], post = as.numeric(d$time[s] == 2), D = as.numeric(sg[s] == 4),
                             covariates = X[s, ], boot = FALSE, inffunc = TRUE)
        ref[s] <- ref[s] + (if (j == 1) -1 else 1) * n / sum(s) * a$att.inf.func
      }
      expect_equal(psi, ref, tolerance = 1e-8)
    } else {
      expect_equal(psi, as.numeric(r$att_inf_func), tolerance = 1e-8, label = paste(m, "IF"))
      expect_equal(f$coeftable$std.error * sqrt(n / (n - 1)), r$se, tolerance = 1e-6, label = paste(m, "SE"))
    }
  }
})

test_that("did_ddd equals triplediff with staggered repeated cross-sections and unbalanced panels", {
  need_peer("triplediff")
  set.seed(3)
  gm <- triplediff::gen_dgp_mult_periods(size = 500, dgp_type = 1)$data
  for (layout in c("rcs", "unbalanced")) for (cg in c("nevertreated", "notyettreated")) for (m in c("dr", "reg", "ipw")) {
    rcs <- layout == "rcs"
    gs <- rc_rows(gm, if (rcs) 0.7 else 0.85, 6)
    d <- as.data.frame(gs); d$G <- ifelse(is.finite(d$state), d$state, 0); d$rid <- seq_len(nrow(d))
    bp <- if (cg == "nevertreated") "universal" else "varying"
    lab <- paste(layout, cg, m)
    r <- ddd_peer(yname = "y", tname = "time", idname = if (rcs) NULL else "id", gname = "state", pname = "partition",
                  xformla = xf, data = data.table::copy(gs), control_group = cg, base_period = bp, est_method = m,
                  panel = !rcs, allow_unbalanced_panel = !rcs)
    f <- did_ddd(d, "y", if (rcs) "rid" else "id", "time", "G", "partition", xformla = xf, control_group = cg,
                 base_period = bp, est_method = m, panel = !rcs, allow_unbalanced_panel = !rcs)
    expect_identical(f$n, r$n)
    k <- match(paste(r$groups, r$periods), paste(f$coeftable$group, f$coeftable$time))
    ok <- !is.na(r$se)
    o <- if (rcs) seq_len(f$n) else match(sort(f$units), f$units)   # triplediff's order
    psi <- as.matrix(f$inf)[o, k, drop = FALSE]
    gmm <- f$comparisons[k] > 1
    if (cg == "notyettreated") expect_true(any(gmm))
    if (m == "dr") {
      # triplediff's sign difference moves the GMM weights; with one
      # comparison cohort the estimates agree and the influence functions
      # agree on the treated units' rows
      expect_equal(f$coeftable$estimate[k][!gmm], r$ATT[!gmm], tolerance = 1e-8, label = lab)
      tr <- (f$unit_group > 0 & f$unit_partition == 1)[o]
      expect_equal(unname(psi[tr, ok & !gmm]), unname(as.matrix(r$inf_func_mat)[tr, ok & !gmm]), tolerance = 1e-8,
                   label = paste(lab, "IF"))
      next
    }
    expect_equal(f$coeftable$estimate[k], r$ATT, tolerance = 1e-8, label = lab)
    expect_equal(unname(psi[, ok]), unname(as.matrix(r$inf_func_mat)[, ok]), tolerance = 1e-8, label = paste(lab, "IF"))
    fac <- ifelse(gmm, sqrt(f$n / (f$n - 1)), 1)
    expect_equal((f$coeftable$std.error[k] * fac)[ok], r$se[ok], tolerance = 1e-6, label = paste(lab, "SE"))
    for (ty in c("simple", "eventstudy")) {
      a <- suppressWarnings(triplediff::agg_ddd(r, type = ty))$aggte_ddd
      b <- aggregate(f, type = c(simple = "simple", eventstudy = "dynamic")[[ty]])$coeftable
      expect_equal(b$estimate[b$term == "ATT"], a$overall.att, tolerance = 1e-8, label = paste(lab, ty))
      if (cg == "nevertreated") expect_equal(b$std.error[b$term == "ATT"], a$overall.se, tolerance = 1e-6,
                                             label = paste(lab, ty, "SE"))
      if (ty == "eventstudy") expect_equal(b$estimate[b$term != "ATT"], a$att.egt, tolerance = 1e-8)
    }
  }
})

test_that("did_ddd's clustered standard errors equal triplediff's (staggered: analytic; two periods: its bootstrap)", {
  need_peer("triplediff")
  set.seed(3)
  gm <- triplediff::gen_dgp_mult_periods(size = 500, dgp_type = 1)$data
  d <- as.data.frame(gm); d$G <- ifelse(is.finite(d$state), d$state, 0)
  for (cg in c("nevertreated", "notyettreated")) {
    # triplediff's staggered clustered SEs are analytic cluster sums of the
    # influence functions, also for the GMM cells (no n - 1 factor there)
    r <- ddd_peer(yname = "y", tname = "time", idname = "id", gname = "state", pname = "partition", xformla = xf,
                  data = gm, control_group = cg, base_period = "varying", est_method = "dr", cluster = "cluster")
    f <- did_ddd(d, "y", "id", "time", "G", "partition", xformla = xf, control_group = cg, cluster = "cluster")
    expect_identical(f$n_clusters, length(unique(d$cluster)))
    k <- match(paste(r$groups, r$periods), paste(f$coeftable$group, f$coeftable$time))
    expect_equal(f$coeftable$estimate[k], r$ATT, tolerance = 1e-8, label = cg)
    expect_equal(f$coeftable$std.error[k], r$se, tolerance = 1e-6, label = paste(cg, "cluster SE"))
    for (ty in c("simple", "eventstudy")) {
      a <- suppressWarnings(triplediff::agg_ddd(r, type = ty))$aggte_ddd
      b <- aggregate(f, type = c(simple = "simple", eventstudy = "dynamic")[[ty]])$coeftable
      expect_equal(b$std.error[b$term == "ATT"], a$overall.se, tolerance = 1e-6, label = paste(cg, ty, "cluster SE"))
      if (ty == "eventstudy") {
        ok <- !is.na(a$se.egt)
        expect_equal(b$std.error[b$term != "ATT"][ok], a$se.egt[ok], tolerance = 1e-6)
      }
    }
  }
  # two periods: triplediff clusters by its multiplier bootstrap only (999
  # draws, forced); did_ddd's analytic cluster SE lies within its Monte Carlo
  # error (the interquartile-range SE of 999 draws: a few per cent)
  set.seed(11)
  g2 <- triplediff::gen_dgp_2periods(size = 2000, dgp_type = 1)$data
  d2 <- as.data.frame(g2); d2$G <- ifelse(d2$state == 1, 2, 0)
  set.seed(7)
  r2 <- ddd_peer(yname = "y", tname = "time", idname = "id", gname = "state", pname = "partition", xformla = xf,
                 data = g2, est_method = "dr", cluster = "cluster")
  expect_identical(r2$nboot, 999)
  f2 <- did_ddd(d2, "y", "id", "time", "G", "partition", xformla = xf, cluster = "cluster")
  expect_equal(unname(f2$coefficients), r2$ATT, tolerance = 1e-8)
  expect_lt(abs(f2$coeftable$std.error / r2$se - 1), 0.12)
  set.seed(8)
  fb <- did_ddd(d2, "y", "id", "time", "G", "partition", xformla = xf, cluster = "cluster", nboot = 999)
  expect_lt(abs(fb$coeftable$std.error / r2$se - 1), 0.12)
})

test_that("did_ddd equals triplediff with sampling weights (staggered panel and repeated cross-sections)", {
  need_peer("triplediff")
  set.seed(3)
  gm <- triplediff::gen_dgp_mult_periods(size = 500, dgp_type = 1)$data
  set.seed(9); wu <- runif(max(gm$id), 0.5, 2); gm$w <- wu[gm$id]
  gr <- rc_rows(gm, 0.7, 6)
  for (rcs in c(FALSE, TRUE)) for (m in c("dr", "reg", "ipw")) for (cg in c("nevertreated", "notyettreated")) {
    if (rcs && (m == "dr" || cg == "notyettreated")) next     # triplediff's dr sign difference (above)
    gs <- if (rcs) gr else gm
    d <- as.data.frame(gs); d$G <- ifelse(is.finite(d$state), d$state, 0); d$rid <- seq_len(nrow(d))
    lab <- paste(rcs, m, cg)
    r <- ddd_peer(yname = "y", tname = "time", idname = if (rcs) NULL else "id", gname = "state",
                  pname = "partition", xformla = xf, data = data.table::copy(gs), control_group = cg, est_method = m,
                  weightsname = "w", panel = !rcs)
    f <- did_ddd(d, "y", if (rcs) "rid" else "id", "time", "G", "partition", xformla = xf, control_group = cg,
                 est_method = m, weightsname = "w", panel = !rcs)
    k <- match(paste(r$groups, r$periods), paste(f$coeftable$group, f$coeftable$time))
    ok <- !is.na(r$se)
    expect_equal(f$coeftable$estimate[k], r$ATT, tolerance = 1e-8, label = lab)
    fac <- ifelse(f$comparisons[k] > 1, sqrt(f$n / (f$n - 1)), 1)
    expect_equal((f$coeftable$std.error[k] * fac)[ok], r$se[ok], tolerance = 1e-6, label = paste(lab, "SE"))
    a <- suppressWarnings(triplediff::agg_ddd(r, type = "eventstudy"))$aggte_ddd
    b <- aggregate(f, type = "dynamic")$coeftable
    expect_equal(b$estimate[b$term != "ATT"], a$att.egt, tolerance = 1e-8, label = paste(lab, "ES"))
    expect_equal(b$std.error[b$term == "ATT"], a$overall.se, tolerance = 1e-6, label = paste(lab, "ES SE"))
  }
})

test_that("did_ddd with a survey design in repeated cross-sections: the design variance without strata is the clustered one times sqrt(G / (G - 1))", {
  need_peer("triplediff")
  set.seed(3)
  gm <- triplediff::gen_dgp_mult_periods(size = 500, dgp_type = 1)$data
  d <- as.data.frame(rc_rows(gm, 0.7, 6)); d$G <- ifelse(is.finite(d$state), d$state, 0); d$rid <- seq_len(nrow(d))
  set.seed(2); d$w <- runif(nrow(d), 0.5, 2); d$psu <- d$cluster
  G <- length(unique(d$psu))
  f1 <- did_ddd(d, "y", "rid", "time", "G", "partition", xformla = ~ cov1, weightsname = "w", panel = FALSE,
                cluster = "psu")
  f2 <- did_ddd(d, "y", "rid", "time", "G", "partition", xformla = ~ cov1, panel = FALSE,
                survey = survey_design(d, weights = "w", ids = "psu"))
  expect_equal(f2$coefficients, f1$coefficients, tolerance = 1e-12)
  expect_equal(f2$coeftable$std.error, f1$coeftable$std.error * sqrt(G / (G - 1)), tolerance = 1e-10)
  a1 <- aggregate(f1, type = "simple")$coeftable; a2 <- aggregate(f2, type = "simple")$coeftable
  expect_equal(a2$std.error, a1$std.error * sqrt(G / (G - 1)), tolerance = 1e-10)
  expect_match(f2$vcov_label, "survey design")
})
