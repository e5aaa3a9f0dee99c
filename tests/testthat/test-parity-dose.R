# did_dose() against the live contdid 0.1.1 (CRAN; installed by
# tools/install-deps.sh) on its own simulated panels
# (contdid::simulate_contdid_data). contdid has four faults that did_dose
# corrects (documented in ?did_dose); rules = "contdid-0.1.1" (?dd_rules)
# undoes them, and with it the estimates, grid, knots and every influence
# function must equal contdid's: 1e-8 (estimates, the issue's tolerance) and
# 1e-8 for the influence functions. The default rules are compared with
# contdid too, where it computes the same thing (grid, knots, ATT^o, ACRT^o,
# ATT^o's standard error; with "cck", the curves and ACRT(d)'s standard
# errors), and where they deliberately differ the size of the difference is
# asserted as measured on these data (contdid 0.1.1, the only release).
# contdid's standard errors are multiplier-bootstrap ones drawn from R's RNG
# (did_dose's bootstrap uses its own counter-based generator): equal
# influence functions imply the same bootstrap distribution; in addition the
# analytic standard errors must lie within 15% of contdid's bootstrap ones
# (1000 draws: the IQR rule's Monte Carlo sd is about 4%), and contdid's
# analytic cell variances (att_gt$V_analytical) are compared at 1e-6.

dose_data <- function(seed = 1234, n = 1000, periods = 4, groups = 4) {
  set.seed(seed)
  contdid::simulate_contdid_data(n = n, num_time_periods = periods, num_groups = groups,
                                 dose_linear_effect = 0.5, dose_quadratic_effect = 0.3)
}

dose_peer <- function(df, target = "level", aggregation = "dose", degree = 3, num_knots = 1, biters = 1000, seed = 1,
                      ...) {
  set.seed(seed)
  suppressWarnings(suppressMessages(contdid::cont_did(
    yname = "Y", tname = "time_period", idname = "id", dname = "D", gname = "G", data = df,
    target_parameter = target, aggregation = aggregation, treatment_type = "continuous",
    control_group = "notyettreated", degree = degree, num_knots = num_knots, biters = biters, ...)))
}

dose_compat <- function(...) did_dose(..., rules = "contdid-0.1.1")

# the analytic standard error that an influence function (n x 1) implies
dose_if_se <- function(x) sqrt(sum(x^2)) / length(x)

test_that("did_dose with contdid's faults undone equals contdid: curves, overall parameters, influence functions", {
  need_peer("contdid")
  for (cfg in list(c(3, 1), c(3, 0), c(2, 2), c(1, 0))) {
    df <- dose_data(seed = 1234 + cfg[2])
    df0 <- df
    r <- dose_peer(df, degree = cfg[1], num_knots = cfg[2])
    f <- dose_compat(df, "Y", "id", "time_period", "G", "D", degree = cfg[1], num_knots = cfg[2], nboot = 0)
    expect_identical(df, df0)
    lab <- paste("degree", cfg[1], "knots", cfg[2])
    expect_equal(f$dose$dose, unname(r$dose), tolerance = 1e-12, label = lab)
    expect_equal(f$knots, unname(r$pte_params$knots), tolerance = 1e-12, label = lab)
    expect_equal(f$dose$att, unname(r$att.d), tolerance = 1e-8, label = paste(lab, "ATT(d)"))
    expect_equal(f$dose$acrt, unname(r$acrt.d), tolerance = 1e-8, label = paste(lab, "ACRT(d)"))
    expect_equal(f$coefficients[["ATT"]], r$overall_att, tolerance = 1e-8, label = paste(lab, "ATT"))
    expect_equal(f$coefficients[["ACRT"]], r$overall_acrt, tolerance = 1e-8, label = paste(lab, "ACRT"))
    expect_equal(unname(f$inf[, "ATT"]), as.numeric(r$overall_att_inffunc), tolerance = 1e-8, label = paste(lab, "IF ATT"))
    expect_equal(unname(f$inf[, "ACRT"]), as.numeric(r$overall_acrt_inffunc), tolerance = 1e-8,
                 label = paste(lab, "IF ACRT"))
    expect_equal(unname(f$curve_inf$att), unname(r$att.d_inffunc), tolerance = 1e-8, label = paste(lab, "IF ATT(d)"))
    expect_equal(unname(f$curve_inf$acrt), unname(r$acrt.d_inffunc), tolerance = 1e-8, label = paste(lab, "IF ACRT(d)"))
    # bootstrap SEs: the analytic ones from the same influence functions
    # within the bootstrap's Monte Carlo error
    ratio <- c(f$coeftable$std.error / c(r$overall_att_se, r$overall_acrt_se), f$dose$att_se / r$att.d_se)
    expect_true(all(abs(ratio - 1) < 0.15), label = paste(lab, "SE ratios", paste(range(ratio), collapse = "-")))
  }
})

test_that("did_dose's default rules against contdid: what agrees, and the measured size of what differs", {
  # On contdid's simulated panels (never-treated units have dose 0, so the
  # first period's positive doses are the treated doses) the default takes
  # the same grid and knots, and ATT^o and ACRT^o are the same estimates.
  # Deliberate differences (measured here, contdid 0.1.1): ATT^o's analytic
  # standard error differs from the one contdid's influence function implies
  # by 0.0026%-0.057% (the cohort shares' estimation, normalised over all
  # units); ACRT^o's is 2.22-2.29 times it (contdid scales the influence
  # function by the cell size, not the treated units); the curves differ
  # (contdid's basis has the grid's range as boundary knots): ATT(d) by up
  # to 0.030, 0.052, 0.131, 0.061 and ACRT(d) by up to 0.18, 0.38, 1.41,
  # 0.072 in the four configurations.
  need_peer("contdid")
  cfgs <- list(c(3, 1), c(3, 0), c(2, 2), c(1, 0))
  att_max <- c(0.031, 0.053, 0.132, 0.062); acrt_max <- c(0.19, 0.39, 1.42, 0.073)
  for (i in seq_along(cfgs)) {
    cfg <- cfgs[[i]]
    df <- dose_data(seed = 1234 + cfg[2])
    r <- dose_peer(df, degree = cfg[1], num_knots = cfg[2], biters = 10)
    f <- did_dose(df, "Y", "id", "time_period", "G", "D", degree = cfg[1], num_knots = cfg[2], nboot = 0)
    expect_identical(f$rules, "default")
    lab <- paste("degree", cfg[1], "knots", cfg[2])
    expect_equal(f$dose$dose, unname(r$dose), tolerance = 1e-12, label = lab)
    expect_equal(f$knots, unname(r$pte_params$knots), tolerance = 1e-12, label = lab)
    expect_equal(f$coefficients[["ATT"]], r$overall_att, tolerance = 1e-8, label = paste(lab, "ATT"))
    expect_equal(f$coefficients[["ACRT"]], r$overall_acrt, tolerance = 1e-8, label = paste(lab, "ACRT"))
    d_att <- abs(f$coeftable$std.error[1] / dose_if_se(r$overall_att_inffunc) - 1)
    expect_true(d_att > 1e-5 && d_att < 6e-4, label = paste(lab, "ATT SE", d_att))
    q_acrt <- f$coeftable$std.error[2] / dose_if_se(r$overall_acrt_inffunc)
    expect_true(q_acrt > 2.2 && q_acrt < 2.3, label = paste(lab, "ACRT SE ratio", q_acrt))
    da <- max(abs(f$dose$att - r$att.d)); dc <- max(abs(f$dose$acrt - r$acrt.d))
    expect_true(da > 0.01 && da < att_max[i], label = paste(lab, "ATT(d)", da))
    expect_true(dc > 0.05 && dc < acrt_max[i], label = paste(lab, "ACRT(d)", dc))
  }
})

test_that("did_dose's bootstrap standard errors and bands agree with contdid's in distribution", {
  need_peer("contdid")
  df <- dose_data()
  r <- dose_peer(df, cband = TRUE)
  set.seed(3)
  f <- dose_compat(df, "Y", "id", "time_period", "G", "D", degree = 3, num_knots = 1, nboot = 1000, cband = TRUE)
  ratio <- f$dose$att_se / r$att.d_se
  expect_true(all(abs(ratio - 1) < 0.15), label = paste(range(ratio), collapse = "-"))
  expect_lt(abs(f$dose_crit[["att"]] / r$att.d_crit.val - 1), 0.1)
  expect_lt(abs(f$dose_crit[["acrt"]] / r$acrt.d_crit.val - 1), 0.1)
})

test_that("did_dose's event study of ACRT^o equals contdid's (slope, eventstudy)", {
  need_peer("contdid")
  df <- dose_data(seed = 99)
  r <- dose_peer(df, target = "slope", aggregation = "eventstudy")
  f <- dose_compat(df, "Y", "id", "time_period", "G", "D", degree = 3, num_knots = 1, nboot = 0)
  key <- paste(r$att_gt$group, r$att_gt$t)
  m <- match(key, paste(f$cells$group, f$cells$time))
  expect_equal(f$cells$acrt[m], r$att_gt$att, tolerance = 1e-8)
  # contdid's analytic cell variances (its bootstrap SEs are reported)
  expect_equal(sqrt(colSums(f$cell_inf$acrt^2))[m] / nrow(f$cell_inf$acrt),
               sqrt(diag(r$att_gt$V_analytical) / nrow(f$cell_inf$acrt)), tolerance = 1e-6)
  es <- aggregate(f, type = "dynamic", parameter = "acrt", nboot = 0)
  ev <- es$coeftable[!is.na(es$coeftable$event), ]
  expect_equal(ev$event, r$event_study$egt)
  expect_equal(ev$estimate, r$event_study$att.egt, tolerance = 1e-8)
  expect_equal(es$coefficients[["ATT"]], r$event_study$overall.att, tolerance = 1e-8)
  g <- aggregate(f, type = "group", parameter = "acrt", nboot = 0)
  expect_equal(g$coefficients[["ATT"]], r$overall_att$overall.att, tolerance = 1e-8)
})

test_that("did_dose: ATT^o and its SE equal did_cs's group aggregation; the two aggregation routes agree", {
  need_peer("contdid")
  df <- dose_data(seed = 7)
  f <- did_dose(df, "Y", "id", "time_period", "G", "D", degree = 3, num_knots = 1, nboot = 0)
  cs <- did_cs(df, "Y", "id", "time_period", "G", control_group = "notyettreated", nboot = 0, cband = FALSE)
  a <- aggregate(cs, type = "group")
  expect_equal(f$coefficients[["ATT"]], a$coefficients[["ATT"]], tolerance = 1e-10)
  expect_equal(f$coeftable$std.error[1], a$coeftable$std.error[a$coeftable$term == "ATT"], tolerance = 1e-10)
  # cells: the binarised ATT^o(g,t) are did_cs's ATT(g,t)
  ct <- cs$coeftable
  expect_equal(f$cells$att[match(paste(ct$group, ct$time), paste(f$cells$group, f$cells$time))], ct$estimate,
               tolerance = 1e-10)
  # ACRT^o from the fit and from aggregate(type = "group") (the cell route)
  g <- aggregate(f, type = "group", parameter = "acrt", nboot = 0)
  expect_equal(g$coefficients[["ATT"]], f$coefficients[["ACRT"]], tolerance = 1e-12)
  expect_equal(g$coeftable$std.error[g$coeftable$term == "ATT"], f$coeftable$std.error[2], tolerance = 1e-10)
  # the corrected standard errors differ from contdid's where the faults bite
  fc <- dose_compat(df, "Y", "id", "time_period", "G", "D", degree = 3, num_knots = 1, nboot = 0)
  expect_gt(f$coeftable$std.error[2] / fc$coeftable$std.error[2], 1.5)
  expect_equal(f$coeftable$std.error[1], fc$coeftable$std.error[1], tolerance = 0.05)
})

test_that("did_dose by construction: a linear dose-response is recovered exactly without noise", {
  set.seed(4)
  n <- 300
  g <- sample(c(0, 3), n, replace = TRUE, prob = c(0.4, 0.6))
  dose <- ifelse(g == 0, 0, runif(n, 0.5, 2))
  d <- expand.grid(t = 1:4, id = 1:n)
  d$g <- g[d$id]; d$dose <- dose[d$id]
  d$y <- rnorm(n)[d$id] + 0.5 * d$t + (d$g > 0 & d$t >= d$g) * (1 + 2 * d$dose)
  f <- did_dose(d, "y", "id", "t", "g", "dose", degree = 1, nboot = 0)
  expect_equal(f$dose$att, 1 + 2 * f$dose$dose, tolerance = 1e-10)
  expect_equal(f$dose$acrt, rep(2, nrow(f$dose)), tolerance = 1e-10)
  expect_equal(f$coefficients[["ACRT"]], 2, tolerance = 1e-10)
  expect_equal(f$coefficients[["ATT"]], 1 + 2 * mean(dose[g == 3]), tolerance = 1e-10)
  # clusters of one unit give the unclustered standard errors; coarser ones run
  d$y <- d$y + rnorm(nrow(d))
  d$cl1 <- d$id + 1000; d$state <- d$id %% 25
  f0 <- did_dose(d, "y", "id", "t", "g", "dose", degree = 2, nboot = 0)
  f1 <- did_dose(d, "y", "id", "t", "g", "dose", degree = 2, nboot = 0, cluster = "cl1")
  expect_equal(f1$coeftable$std.error, f0$coeftable$std.error, tolerance = 1e-12)
  expect_equal(f1$dose$att_se, f0$dose$att_se, tolerance = 1e-12)
  f2 <- did_dose(d, "y", "id", "t", "g", "dose", degree = 2, nboot = 0, cluster = "state")
  expect_identical(f2$n_clusters, 25L)
  expect_false(isTRUE(all.equal(f2$coeftable$std.error, f0$coeftable$std.error)))
})

test_that("did_dose: bad input gets errors naming the argument and value", {
  set.seed(4)
  n <- 200
  g <- sample(c(0, 2, 3), n, replace = TRUE)
  dose <- ifelse(g == 0, 0, runif(n, 0.5, 2))
  d <- expand.grid(t = 1:3, id = 1:n)
  d$g <- g[d$id]; d$dose <- dose[d$id]
  d$y <- rnorm(nrow(d))
  run <- function(dd, degree = 2, ...) did_dose(dd, "y", "id", "t", "g", "dose", nboot = 0, degree = degree, ...)
  dn <- d; dn$dose[dn$id == which(g > 0)[1]] <- -1
  expect_error(run(dn), "`dose` = \"dose\" has negative values \\(-1\\)")
  dm <- d; dm$dose[5] <- NA
  expect_error(run(dm), "`dose`.*missing")
  dv <- d; dv$dose[dv$id == which(g > 0)[1] & dv$t == 2] <- 9
  expect_error(run(dv), "`dose` = \"dose\" must be constant within each unit")
  d1 <- d; d1$dose[d1$g > 0] <- 1
  expect_error(run(d1), "takes one value among treated units")
  dz <- d; dz$dose[dz$id == which(g > 0)[1]] <- 0
  expect_error(run(dz), "is 0 for 1 treated unit")
  expect_error(run(d, degree = 0), "`degree`")
  expect_error(run(d, knots = c(0.1)), "`knots` must lie strictly inside")
  expect_error(run(d, dvals = c(1, 5)), "`dvals` must lie within .* 5")
  expect_error(run(d, cband = TRUE), "`cband` = TRUE needs bootstrap draws")
  expect_error(run(d, control_group = "never"), "`control_group`")
  # too few distinct doses for the spline in one cohort
  dd <- d; dd$dose[dd$g == 2] <- ifelse(dd$id[dd$g == 2] %% 2 == 0, 1, 1.5)
  expect_error(run(dd, degree = 3), "cohort 2 has 2 distinct dose\\(s\\) for a spline with 4 coefficients")
  # no comparison units: everyone treated by the last period, never-treated control
  da <- d[d$g > 0, ]
  expect_error(run(da, control_group = "nevertreated"), "no never-treated units")
  expect_error(aggregate(run(d), type = "dynamic", parameter = "slope"), "`parameter`")
})

test_that("did_dose with weights and survey designs: ATT^o and its SE equal did_cs's; row order does not matter", {
  need_peer("contdid")
  df <- dose_data(seed = 8, n = 800)
  set.seed(2)
  u <- unique(df$id)
  uw <- runif(length(u), 0.5, 2); st <- sample(1:4, length(u), TRUE); psu <- sample(1:60, length(u), TRUE)
  df$w <- uw[match(df$id, u)]; df$st <- st[match(df$id, u)]; df$psu <- psu[match(df$id, u)] + 100 * df$st
  f <- did_dose(df, "Y", "id", "time_period", "G", "D", degree = 2, num_knots = 1, nboot = 0, weightsname = "w")
  cs <- did_cs(df, "Y", "id", "time_period", "G", control_group = "notyettreated", nboot = 0, cband = FALSE,
               weightsname = "w")
  a <- aggregate(cs, type = "group")
  expect_equal(f$coefficients[["ATT"]], a$coefficients[["ATT"]], tolerance = 1e-10)
  expect_equal(f$coeftable$std.error[1], a$coeftable$std.error[a$coeftable$term == "ATT"], tolerance = 1e-10)
  # the weighted spline fit: the weighted regression of the changes on the basis
  f0 <- did_dose(df, "Y", "id", "time_period", "G", "D", degree = 2, num_knots = 1, nboot = 0)
  expect_false(isTRUE(all.equal(f$dose$att, f0$dose$att)))
  des <- survey_design(df, ids = "psu", strata = "st", weights = "w")
  fs <- did_dose(df, "Y", "id", "time_period", "G", "D", degree = 2, num_knots = 1, nboot = 0, survey = des)
  css <- did_cs(df, "Y", "id", "time_period", "G", control_group = "notyettreated", nboot = 0, cband = FALSE,
                survey = des)
  as <- aggregate(css, type = "group")
  expect_equal(fs$coefficients, f$coefficients, tolerance = 1e-12)
  expect_equal(fs$coeftable$std.error[1], as$coeftable$std.error[as$coeftable$term == "ATT"], tolerance = 1e-10)
  expect_identical(fs$n_clusters, length(unique(df$psu)))
  # event study through aggregate.did_cs keeps the design
  es <- aggregate(fs, type = "dynamic")
  ec <- aggregate(css, type = "dynamic")
  expect_equal(es$coeftable$estimate, ec$coeftable$estimate, tolerance = 1e-10)
  expect_equal(es$coeftable$std.error, ec$coeftable$std.error, tolerance = 1e-10)
  # bootstrap: the same draws whatever the row order
  set.seed(9)
  b1 <- did_dose(df, "Y", "id", "time_period", "G", "D", degree = 2, nboot = 199, weightsname = "w")
  ds <- df[sample(nrow(df)), ]
  set.seed(9)
  b2 <- did_dose(ds, "Y", "id", "time_period", "G", "D", degree = 2, nboot = 199, weightsname = "w")
  expect_equal(b2$coeftable$std.error, b1$coeftable$std.error, tolerance = 1e-12)
  expect_equal(b2$dose$att_se, b1$dose$att_se, tolerance = 1e-12)
  dw <- df; dw$w[dw$id == u[1] & dw$time_period == 2] <- 9
  expect_error(did_dose(dw, "Y", "id", "time_period", "G", "D", nboot = 0, weightsname = "w"),
               "`weightsname` = \"w\" must be constant within each unit")
  expect_error(did_dose(df, "Y", "id", "time_period", "G", "D", nboot = 0, survey = des, cluster = "st"),
               "`cluster`")
})

test_that("did_dose(dose_est_method = \"cck\") equals contdid's data-driven path (npiv), Lepski choice included", {
  # contdid 0.1.1's cck path draws npiv's 999 normal multipliers from R's RNG
  # with the state preserved; did_dose draws the same ones, so the chosen
  # dimension, theta* and the critical values must be equal, not only close.
  need_peer("contdid")
  wiggly <- function(seed, n) {
    set.seed(seed)
    G <- ifelse(runif(n) < 0.3, 0, 2); D <- ifelse(G == 2, runif(n), 0)
    df <- data.frame(id = rep(1:n, each = 2), time_period = rep(1:2, n), G = rep(G, each = 2), D = rep(D, each = 2))
    df$Y <- rnorm(n)[df$id] + df$time_period + (df$time_period == 2) * (sin(6 * pi * df$D) + 2 * df$D) +
      rnorm(2 * n, sd = 0.3)
    df
  }
  sets <- list(dose_data(seed = 7, n = 1000, periods = 2, groups = 2), wiggly(3, 800))
  for (k in seq_along(sets)) {
    df <- sets[[k]]
    r <- dose_peer(df, dose_est_method = "cck", cband = TRUE, degree = 3, num_knots = 0, seed = 7)
    set.seed(7)
    f <- dose_compat(df, "Y", "id", "time_period", "G", "D", dose_est_method = "cck", nboot = 0, cband = TRUE)
    s1 <- .Random.seed; set.seed(7); expect_identical(s1, .Random.seed)        # RNG state left as it was
    expect_equal(f$dose$dose, r$dose, tolerance = 1e-12)
    expect_equal(f$dose$att, unname(r$att.d), tolerance = 1e-8, label = paste(k, "ATT(d)"))
    expect_equal(f$dose$acrt, unname(r$acrt.d), tolerance = 1e-8, label = paste(k, "ACRT(d)"))
    expect_equal(f$dose$att_se, unname(r$att.d_se), tolerance = 1e-6, label = paste(k, "ATT(d) se"))
    expect_equal(f$dose$acrt_se, unname(r$acrt.d_se), tolerance = 1e-6, label = paste(k, "ACRT(d) se"))
    expect_equal(unname(f$coefficients), c(r$overall_att, r$overall_acrt), tolerance = 1e-8)
    expect_equal(f$coeftable$std.error[2], r$overall_acrt_se, tolerance = 1e-6)
    tr <- df$G[df$time_period == 1] > 0; n <- length(tr); n1 <- sum(tr)
    expect_equal(unname(f$inf[tr, "ACRT"]) * n1 / n / sqrt(n1 / (n1 - 1)), as.numeric(r$overall_acrt_inffunc),
                 tolerance = 1e-8)
    expect_equal(unname(f$dose_crit), c(r$att.d_crit.val, r$acrt.d_crit.val), tolerance = 1e-10)
  }
  expect_gt(f$cck$J, 4)                                  # the wiggly curve needs many segments
  # the default: curves on dvals, the comparison mean's variance in ATT(d)'s SE
  g <- did_dose(sets[[2]], "Y", "id", "time_period", "G", "D", dose_est_method = "cck", nboot = 0, cband = TRUE)
  expect_identical(nrow(g$dose), 50L)
  expect_identical(g$cck$J, f$cck$J)
  i <- findInterval(0.5, f$dose$dose)
  expect_gt(g$dose$att_se[which.min(abs(g$dose$dose - 0.5))], 0.99 * min(f$dose$att_se[i + 0:1]))
  d2 <- dose_data(seed = 1)
  expect_error(did_dose(d2, "Y", "id", "time_period", "G", "D", dose_est_method = "cck"), "needs two periods")
  expect_error(did_dose(sets[[1]], "Y", "id", "time_period", "G", "D", dose_est_method = "cck", num_knots = 2),
               "chooses the spline itself")
})

test_that("did_dose's control groups and base periods: the binarised cells are did_cs's", {
  need_peer("contdid")
  df <- dose_data(seed = 21, n = 900, periods = 5, groups = 5)
  for (cg in c("nevertreated", "notyettreated")) for (bp in c("varying", "universal")) {
    f <- did_dose(df, "Y", "id", "time_period", "G", "D", degree = 2, nboot = 0, control_group = cg, base_period = bp)
    cs <- did_cs(df, "Y", "id", "time_period", "G", control_group = cg, base_period = bp, nboot = 0, cband = FALSE)
    ct <- cs$coeftable
    m <- match(paste(ct$group, ct$time), paste(f$cells$group, f$cells$time))
    ok <- !is.na(m)
    expect_true(mean(ok) > 0.8, label = paste(cg, bp))
    expect_equal(f$cells$att[m[ok]], ct$estimate[ok], tolerance = 1e-10, label = paste(cg, bp))
    a <- aggregate(cs, type = "group"); g <- aggregate(f, type = "group", nboot = 0)
    expect_equal(g$coefficients[["ATT"]], a$coefficients[["ATT"]], tolerance = 1e-10, label = paste(cg, bp))
    expect_equal(g$coeftable$std.error, a$coeftable$std.error, tolerance = 1e-10, label = paste(cg, bp))
    e1 <- aggregate(f, type = "dynamic", nboot = 0); e2 <- aggregate(cs, type = "dynamic")
    expect_equal(e1$coeftable$estimate, e2$coeftable$estimate, tolerance = 1e-10, label = paste(cg, bp))
    expect_equal(e1$event_study$reference, e2$event_study$reference)
  }
})

test_that("did_dose(dose_est_method = \"cck\")'s default rules against contdid at contdid's doses", {
  # The default evaluated at contdid's doses (dvals = the observed treated
  # doses): the same dimension, curves, ATT^o, ACRT^o and ACRT(d) standard
  # errors; the deliberate differences are exact: ATT(d)'s variance adds the
  # comparison mean's (mean of squared deviations / n0, the same at every
  # dose), and ACRT^o's standard error is contdid's sd(IF) / sqrt(n1) times
  # sqrt((n1 - 1) / n1). contdid reports a bootstrap SE for ATT^o; the
  # default's analytic one equals the one its influence function implies.
  need_peer("contdid")
  set.seed(7)
  df <- contdid::simulate_contdid_data(n = 1000, num_time_periods = 2, num_groups = 2, dose_linear_effect = 0.5,
                                       dose_quadratic_effect = 0.3)
  r <- dose_peer(df, dose_est_method = "cck", cband = TRUE, degree = 3, num_knots = 0, seed = 7)
  set.seed(7)
  g <- did_dose(df, "Y", "id", "time_period", "G", "D", dose_est_method = "cck", nboot = 0, cband = TRUE,
                dvals = r$dose)
  expect_equal(g$dose$att, unname(r$att.d), tolerance = 1e-8)
  expect_equal(g$dose$acrt, unname(r$acrt.d), tolerance = 1e-8)
  expect_equal(unname(g$coefficients), c(r$overall_att, r$overall_acrt), tolerance = 1e-8)
  expect_equal(g$dose$acrt_se, unname(r$acrt.d_se), tolerance = 1e-6)
  expect_equal(g$coeftable$std.error[1], dose_if_se(r$overall_att_inffunc), tolerance = 1e-6)
  u <- df[df$time_period == 1, ]; u2 <- df[df$time_period == 2, ]
  dy <- u2$Y[match(u$id, u2$id)] - u$Y
  n1 <- sum(u$G > 0); dy0 <- dy[u$G == 0]
  expect_equal(g$coeftable$std.error[2] * sqrt(n1 / (n1 - 1)), r$overall_acrt_se, tolerance = 1e-6)
  expect_equal(g$dose$att_se^2 - r$att.d_se^2, rep(mean((dy0 - mean(dy0))^2) / length(dy0), nrow(g$dose)),
               tolerance = 1e-6)
})

test_that("cck across npiv's dimension threshold (31 / 32 / 33 treated units) equals contdid", {
  # npiv tries J = 1, 2, ..., 2^(L - 1) with L = max(floor(log2(n1)), 3) as
  # long as its rule J sqrt(log J) <= 10 sqrt(n1) allows (always here): 4
  # dimensions (1 to 8) for 31 treated units, 5 (1 to 16) for 32 and 33
  need_peer("contdid")
  for (n1 in 31:33) {
    set.seed(n1)
    n <- n1 + 40
    G <- c(rep(2, n1), rep(0, 40)); D <- ifelse(G == 2, runif(n), 0)
    df <- data.frame(id = rep(1:n, each = 2), time_period = rep(1:2, n), G = rep(G, each = 2), D = rep(D, each = 2))
    df$Y <- rnorm(n)[df$id] + df$time_period + (df$time_period == 2) * (sin(4 * pi * df$D) + df$D) +
      rnorm(2 * n, sd = 0.2)
    r <- dose_peer(df, dose_est_method = "cck", cband = TRUE, degree = 3, num_knots = 0, seed = 2)
    set.seed(2)
    f <- dose_compat(df, "Y", "id", "time_period", "G", "D", dose_est_method = "cck", nboot = 0, cband = TRUE)
    expect_identical(f$cck$J_tried, if (n1 < 32) c(1, 2, 4, 8) else c(1, 2, 4, 8, 16), label = n1)
    expect_equal(f$dose$att, unname(r$att.d), tolerance = 1e-8, label = n1)
    expect_equal(f$dose$att_se, unname(r$att.d_se), tolerance = 1e-6, label = n1)
    expect_equal(unname(f$dose_crit), c(r$att.d_crit.val, r$acrt.d_crit.val), tolerance = 1e-10, label = n1)
  }
})

test_that("did_dose takes contdid's and did's spellings", {
  need_peer("contdid")
  df <- dose_data(seed = 5, n = 600)
  a <- did_dose(df, "Y", "id", "time_period", "G", dname = "D", degree = 2, alp = 0.1, bstrap = FALSE)
  b <- did_dose(df, "Y", "id", "time_period", "G", "D", degree = 2, alpha = 0.1, nboot = 0)
  expect_identical(a$coeftable, b$coeftable)
  expect_identical(a$alpha, 0.1)
  expect_error(did_dose(df, "Y", "id", "time_period", "G", "D", dname = "D"), "once")
  expect_error(did_dose(df, "Y", "id", "time_period", "G"), "`dose` \\(the dose column\\) is missing")
  expect_error(did_dose(df, "Y", "id", "time_period", "G", "D", xformula = ~x), "`xformula`")
})

test_that("did_dose's rules argument: recorded, printed when not default, checked; the old option is gone", {
  need_peer("contdid")
  df <- dose_data(seed = 5, n = 600)
  run <- function(...) did_dose(df, "Y", "id", "time_period", "G", "D", degree = 2, num_knots = 1, nboot = 0, ...)
  f0 <- run(); f1 <- run(rules = "contdid-0.1.1")
  expect_identical(f0$rules, "default"); expect_identical(f1$rules, "contdid-0.1.1")
  expect_false(isTRUE(all.equal(f0$coeftable$std.error, f1$coeftable$std.error)))
  out0 <- capture.output(print(f0)); out1 <- capture.output(print(f1))
  expect_false(any(grepl("Peer rules", out0)))
  expect_true(any(grepl("^Peer rules: contdid-0.1.1 \\(contdid 0.1.1's basis", out1)))
  expect_true(any(grepl("^Peer rules: contdid-0.1.1", capture.output(print(summary(f1))))))
  expect_false(any(grepl("Peer rules", capture.output(print(summary(f0))))))
  expect_error(run(rules = "contdid-0.1.0"),
               "`rules` must be one of \"default\", \"contdid-0.1.1\"; got \"contdid-0.1.0\"", fixed = TRUE)
  expect_error(run(rules = c("default", "contdid-0.1.1")), "`rules` must be one of")
  expect_error(run(rules = NA_character_), "`rules` must be one of")
  # the removed option: a warning once per session naming the argument, and
  # no effect on the numbers
  fo <- expect_removed_option("diffdiff.contdid_compat", "0.1.1", "did_dose", "contdid-0.1.1", run)
  expect_identical(fo$coeftable, f0$coeftable)
  expect_identical(fo$dose, f0$dose)
  expect_no_warning(fo2 <- run(rules = "contdid-0.1.1"))
  expect_identical(fo2$coeftable, f1$coeftable)
})
