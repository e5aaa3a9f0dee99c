# did_dcdh() against DIDmultiplegtDYN. The CRAN release (2.4.0) cannot run
# here: it needs the polars package, which is not on CRAN. The reference
# numbers in ref-dcdh.csv come from DIDmultiplegtDYN 2.2.0, the newest
# release without polars, on inst/extdata/reversible_panel.csv (both written
# by tools/dcdh-reference.R; 2.2.0 installed by tools/install-dcdh.sh).
# 2.2.0 and 2.4.0 compute the same estimates and analytic SEs in these cases
# (compared by reading both; ?did_dcdh lists where they differ).
# Tolerances: estimates 1e-8 relative, SEs 1e-6 relative, cell counts exact.
#
# The default rules with `controls` are 2.4.0's, and no 2.4.0 reference
# numbers exist here, for this reason: 2.4.0 (CRAN; 2.3.0-2.3.4 likewise)
# lists polars under Suggests but cannot run without it.
# did_multiplegt_dyn() stops at its start unless requireNamespace("polars")
# succeeds, and the estimation itself (did_multiplegt_main.R,
# did_multiplegt_dyn_core.R, polars_helpers.R; the controls' step included)
# is written in polars expressions (some 1,500 pl$... calls) with no
# data.table or base R path. polars is neither on CRAN nor in Debian, and
# r-universe and the Rust crates it builds from cannot be reached here.
# Running 2.4.0 would need a reimplementation of polars' API, whose numbers
# would be ours, not the peer's. So the controls cases are checked against
# 2.2.0 under rules = "DIDmultiplegtDYN-2.2.0" (every part of the controls'
# variance but its two rules), and the default against 2.2.0 with the size
# of the difference asserted: estimates equal (1e-8), SEs apart by the
# amounts measured per case; equal (1e-6) where the two rules coincide (one
# baseline treatment, no weights, a balanced panel: controls_abs).

dcdh_panel <- function() read.csv(system.file("extdata", "reversible_panel.csv", package = "diffdiff"))
dcdh_ref <- function() read.csv(test_path("ref-dcdh.csv"))

dcdh_cases <- list(
  abs = list(d = "D_abs", effects = 4, placebo = 3),
  rev = list(d = "D_rev", effects = 4, placebo = 3, effects_equal = TRUE),
  multi = list(d = "D_multi", effects = 4, placebo = 3),
  multi_norm = list(d = "D_multi", effects = 4, placebo = 3, normalized = TRUE),
  rev_in = list(d = "D_rev", effects = 3, placebo = 2, switchers = "in"),
  rev_out = list(d = "D_rev", effects = 3, placebo = 2, switchers = "out"),
  unbal = list(d = "D_rev", effects = 4, placebo = 3, unbalanced = TRUE),
  weight_cl = list(d = "D_rev", effects = 4, placebo = 3, weightsname = "w", cluster = "cl"),
  never_only = list(d = "D_rev", effects = 3, placebo = 2, only_never_switchers = TRUE),
  trends_np = list(d = "D_rev", effects = 3, placebo = 2, trends_nonparam = "region"),
  same_sw = list(d = "D_rev", effects = 4, placebo = 3, same_switchers = TRUE),
  trends_lin = list(d = "D_rev", effects = 3, placebo = 2, trends_lin = TRUE),
  controls_abs = list(d = "D_abs", effects = 3, placebo = 2, controls = "x"),
  less_cons = list(d = "D_rev", effects = 3, placebo = 2, less_conservative_se = TRUE),
  d_missing = list(d = "D_na", effects = 3, placebo = 2),
  y_missing = list(d = "D_na", y = "y_na", effects = 3, placebo = 2, cluster = "cl"))

# controls with several baseline treatments, weights or an unbalanced panel:
# 2.2.0 normalises theta_d's influence by every baseline's control cells and
# fits E-hat without the weights (its feols() call names a variable that is
# NULL in scope); 2.4.0 (and diffdiff by default) use the baseline's own
# cells and the weights. rules = "DIDmultiplegtDYN-2.2.0" gives 2.2.0's two
# rules, so everything else in the controls' variance is checked against
# 2.2.0 here.
dcdh_cases_220 <- list(
  controls = list(d = "D_rev", effects = 3, placebo = 2, controls = "x"),
  controls2 = list(d = "D_multi", effects = 3, placebo = 2, controls = c("x", "x2"), weightsname = "w",
                   cluster = "cl"),
  controls_tl = list(d = "D_rev", effects = 3, placebo = 2, controls = c("x", "x2"), trends_lin = TRUE),
  controls_unb = list(d = "D_rev", effects = 3, placebo = 2, controls = "x", unbalanced = TRUE))

dcdh_fit <- function(a, data = dcdh_panel(), rules = "default") {
  if (isTRUE(a$unbalanced)) data <- data[data$keep_unbal == 1, ]
  did_dcdh(data, a$y %||% "y", "id", "t", a$d, effects = a$effects, placebo = a$placebo,
           normalized = isTRUE(a$normalized), switchers = a$switchers %||% "both",
           only_never_switchers = isTRUE(a$only_never_switchers), same_switchers = isTRUE(a$same_switchers),
           trends_nonparam = a$trends_nonparam, trends_lin = isTRUE(a$trends_lin),
           same_switchers_pl = isTRUE(a$same_switchers_pl),
           effects_equal = isTRUE(a$effects_equal), weightsname = a$weightsname, cluster = a$cluster,
           controls = a$controls, less_conservative_se = isTRUE(a$less_conservative_se), rules = rules)
}
`%||%` <- function(a, b) if (is.null(a)) b else a

# the peer's row name for each of our terms
dcdh_peer_term <- function(tab) {
  ifelse(tab$term == "ATT", "Av_tot_eff",
         ifelse(tab$event >= 0, paste0("Effect_", tab$event + 1), paste0("Placebo_", -tab$event - 1)))
}

dcdh_check_ref <- function(cases, rules = "default") {
  ref <- dcdh_ref()
  for (nm in names(cases)) {
    f <- suppressMessages(dcdh_fit(cases[[nm]], rules = rules))
    expect_identical(f$rules, rules)
    tab <- f$coeftable
    r <- ref[ref$case == nm & !grepl("^p_", ref$term) & !is.na(ref$estimate), ]   # trends_lin: no ATE
    k <- match(r$term, dcdh_peer_term(tab))
    expect_false(anyNA(k), info = nm)
    expect_identical(nrow(tab), nrow(r), info = nm)
    expect_lt(max(abs(tab$estimate[k] - r$estimate) / abs(r$estimate)), 1e-8, label = paste(nm, "estimates"))
    expect_lt(max(abs(tab$std.error[k] - r$se) / r$se), 1e-6, label = paste(nm, "SEs"))
    expect_identical(as.numeric(tab$n[k]), as.numeric(r$n), info = nm)
    # trends_lin: DIDmultiplegtDYN reruns its core for each placebo and reports
    # every placebo's switcher count from the last run (placebo 1 with the
    # switchers of placebos 1..2 here, 62), while its estimate and n come from
    # placebo 1's own run; diffdiff reports the count of the run that gives the
    # estimate (75) -- a deliberate difference in that count only
    sw <- if (nm %in% c("trends_lin", "controls_tl")) r$term != "Placebo_1" else TRUE
    expect_identical(as.numeric(tab$switchers[k][sw]), as.numeric(r$switchers[sw]), info = nm)
    # joint tests: the peer computes 1 - pchisq (0 below ~1e-16), diffdiff the upper tail
    for (j in c("effects", "placebos", "equal_effects")) {
      pr <- ref$estimate[ref$case == nm & ref$term == c(effects = "p_jointeffects", placebos = "p_jointplacebo",
                                                          equal_effects = "p_equality_effects")[[j]]]
      if (!length(pr)) next
      if (pr > 1e-10) expect_lt(abs(f$joint[[j]] - pr), 1e-8, label = paste(nm, j))
      else expect_lt(f$joint[[j]], 1e-10, label = paste(nm, j))
    }
  }
}

test_that("did_dcdh equals DIDmultiplegtDYN 2.2.0 (stored) on sixteen designs", {
  dcdh_check_ref(dcdh_cases)
})

test_that("with controls, did_dcdh equals DIDmultiplegtDYN 2.2.0 (stored) under rules = \"DIDmultiplegtDYN-2.2.0\"", {
  dcdh_check_ref(dcdh_cases_220, rules = "DIDmultiplegtDYN-2.2.0")
  # without controls, or where the two rules coincide, the rules change nothing
  dcdh_check_ref(dcdh_cases["controls_abs"], rules = "DIDmultiplegtDYN-2.2.0")
  dcdh_check_ref(dcdh_cases["rev"], rules = "DIDmultiplegtDYN-2.2.0")
})

test_that("with controls, the default (2.4.0's rules) against 2.2.0 (stored): estimates equal, SEs apart by the measured amounts", {
  # largest |SE / SE_2.2.0 - 1| over the effects, placebos and ATT, as
  # measured: 4.04% (controls: several baselines), 9.57% (controls2: three
  # baselines, weights, clusters), 2.94% (controls_tl), 3.60% (controls_unb:
  # gaps); asserted as at least 0.01% and at most the measured value rounded
  # up to the next 0.1%
  ref <- dcdh_ref()
  most <- c(controls = 0.041, controls2 = 0.096, controls_tl = 0.03, controls_unb = 0.037)
  for (nm in names(dcdh_cases_220)) {
    f <- suppressMessages(dcdh_fit(dcdh_cases_220[[nm]]))
    expect_identical(f$rules, "default")
    r <- ref[ref$case == nm & !grepl("^p_", ref$term) & !is.na(ref$estimate), ]
    k <- match(r$term, dcdh_peer_term(f$coeftable))
    expect_lt(max(abs(f$coeftable$estimate[k] - r$estimate) / abs(r$estimate)), 1e-8, label = nm)
    d <- max(abs(f$coeftable$std.error[k] / r$se - 1))
    expect_true(d > 1e-4 && d < most[[nm]], label = paste(nm, "SE difference", d))
  }
})

test_that("did_dcdh's rules argument: recorded, printed when not default, checked; the old option is gone", {
  d <- dcdh_panel()
  run <- function(...) did_dcdh(d, "y", "id", "t", "D_rev", effects = 2, placebo = 1, controls = "x", ...)
  f0 <- run(); f1 <- run(rules = "DIDmultiplegtDYN-2.2.0")
  expect_identical(f1$rules, "DIDmultiplegtDYN-2.2.0")
  expect_identical(f0$coeftable$estimate, f1$coeftable$estimate)
  expect_false(isTRUE(all.equal(f0$coeftable$std.error, f1$coeftable$std.error)))
  expect_false(any(grepl("Peer rules", capture.output(print(f0)))))
  expect_true(any(grepl("^Peer rules: DIDmultiplegtDYN-2.2.0 \\(DIDmultiplegtDYN 2.2.0's variance with controls\\)$",
                        capture.output(print(f1)))))
  expect_true(any(grepl("^Peer rules: DIDmultiplegtDYN-2.2.0", capture.output(print(summary(f1))))))
  expect_error(run(rules = "2.2.0"),
               "`rules` must be one of \"default\", \"DIDmultiplegtDYN-2.2.0\"; got \"2.2.0\"", fixed = TRUE)
  expect_error(run(rules = 1), "`rules` must be one of")
  # by: every level's fit has the rules
  b <- suppressMessages(did_dcdh(d, "y", "id", "t", "D_rev", effects = 2, controls = "x", by = "region",
                                 rules = "DIDmultiplegtDYN-2.2.0"))
  expect_true(all(vapply(b$fits, function(x) identical(x$rules, "DIDmultiplegtDYN-2.2.0"), logical(1))))
  # DID_M has no controls: the rule does not apply there
  expect_error(did_dcdh(d, "y", "id", "t", "D_rev", estimand = "DID_M", rules = "DIDmultiplegtDYN-2.2.0"),
               "estimand = \"DID_M\" does not take `rules`", fixed = TRUE)
  fo <- expect_removed_option("diffdiff.dcdh_controls", "2.2.0", "did_dcdh", "DIDmultiplegtDYN-2.2.0", run)
  expect_identical(fo$coeftable, f0$coeftable)
})

test_that("with absorbing staggered adoption the effects equal did_cs's not-yet-treated, universal-base event study", {
  d <- dcdh_panel()
  d <- d[d$id <= 80, ]                               # never and "on" groups only: absorbing
  g <- tapply(ifelse(d$D_abs == 1, d$t, Inf), d$id, min)
  d$g <- g[as.character(d$id)]; d$g[!is.finite(d$g)] <- 0
  f <- did_dcdh(d, "y", "id", "t", "D_abs", effects = 4, placebo = 1)
  cs <- aggregate(did_cs(d, "y", "id", "t", "g", control_group = "notyettreated", base_period = "universal",
                         nboot = 0), type = "dynamic")
  for (e in c(-2, 0:3)) {
    term <- paste0("event::", e)
    expect_equal(f$coeftable$estimate[f$coeftable$term == term], cs$coeftable$estimate[cs$coeftable$term == term],
                 tolerance = 1e-12, info = term)
  }
})

test_that("did_dcdh's fit: event study, methods, bootstrap, the caller's data untouched", {
  d <- dcdh_panel(); d0 <- d
  f <- did_dcdh(d, "y", "id", "t", "D_rev", effects = 3, placebo = 2)
  expect_identical(d, d0)
  expect_s3_class(f, c("did_dcdh", "dd_fit"))
  es <- f$event_study
  expect_identical(es$reference, -1)
  expect_setequal(es$event, c(-3, -2, 0, 1, 2))
  # V from the influence functions: its diagonal gives the SEs
  expect_equal(sqrt(diag(vcov(f))), stats::setNames(f$coeftable$std.error, f$coeftable$term), tolerance = 1e-12)
  expect_identical(tidy(f)$term[tidy(f)$term != "ATT" & !grepl("^event", tidy(f)$term)],
                   "ATT (dCDH, total effect per unit of treatment)")
  pdf(NULL); on.exit(grDevices::dev.off())
  expect_silent(plot(f))
  if (requireNamespace("ggplot2", quietly = TRUE))
    expect_identical(ggplot2::autoplot(f)$labels$x, "Periods relative to the first switch")
  h <- honest_did(f, type = "RM", Mbar = c(0, 0.5), breakdown = FALSE)
  expect_s3_class(h, "honest_did")
  # multiplier bootstrap of the same influence functions: SEs close to the analytic ones
  set.seed(1)
  b <- did_dcdh(d, "y", "id", "t", "D_rev", effects = 3, placebo = 2, nboot = 4999, cband = TRUE)
  expect_equal(b$coeftable$estimate, f$coeftable$estimate)
  expect_lt(max(abs(b$coeftable$std.error / f$coeftable$std.error - 1)), 0.1)
  expect_true(all(is.finite(b$coeftable$cband.low[b$coeftable$term != "ATT"])))
  expect_gt(b$crit, stats::qnorm(0.975))
})

test_that("did_dcdh refuses bad input with messages naming it", {
  d <- dcdh_panel()
  expect_error(did_dcdh(d, "y", "id", "t", "D_rev", effects = 0), "`effects` must be a whole number")
  expect_error(did_dcdh(d, "y", "id", "t", "D_rev", switchers = "up"), "`switchers` must be one of")
  expect_error(did_dcdh(d, "y", "id", "t", "D_rev", effects_equal = NA), "`effects_equal` must be TRUE or FALSE")
  expect_true(is.na(did_dcdh(d, "y", "id", "t", "D_rev", effects_equal = TRUE)$joint[["equal_effects"]]))
  d1 <- d; d1$D_rev <- 1
  expect_error(did_dcdh(d1, "y", "id", "t", "D_rev"), "`dname` = \"D_rev\" takes one value")
  d2 <- d; d2$cl2 <- d2$t %% 2
  expect_error(did_dcdh(d2, "y", "id", "t", "D_rev", cluster = "cl2"), "cluster")
  expect_error(did_dcdh(d, "y", "id", "t", "D_rv"), "D_rv")
  expect_error(did_dcdh(rbind(d, d[1, ]), "y", "id", "t", "D_rev"), "more than one row|duplicate")
  # every group switches at the same date and none stays untreated: no control
  d3 <- d[d$id <= 80, ]; d3$D_abs <- as.integer(d3$t >= 5)
  expect_error(did_dcdh(d3, "y", "id", "t", "D_abs"), "no effect can be estimated")
  f <- did_dcdh(d, "y", "id", "t", "D_rev", effects = 20)
  expect_match(f$notes, "20 effect\\(s\\) requested; the data allow")
})

test_that("did_dcdh's controls: collinear or time-invariant controls are left out with a warning; bad controls refused", {
  d <- dcdh_panel()
  base <- did_dcdh(d, "y", "id", "t", "D_rev", effects = 3, placebo = 2, controls = "x")
  # a copy of x (rescaled) adds nothing: same estimates and SEs, and a warning
  d$x_twice <- 2 * d$x
  expect_warning(f2 <- did_dcdh(d, "y", "id", "t", "D_rev", effects = 3, placebo = 2, controls = c("x", "x_twice")),
                 "collinear")
  expect_equal(f2$coeftable$estimate, base$coeftable$estimate, tolerance = 1e-10)
  expect_equal(f2$coeftable$std.error, base$coeftable$std.error, tolerance = 1e-10)
  # a control constant within groups has no changes: the fit without controls
  none <- did_dcdh(d, "y", "id", "t", "D_rev", effects = 3, placebo = 2)
  expect_warning(fr <- did_dcdh(d, "y", "id", "t", "D_rev", effects = 3, placebo = 2, controls = "region"),
                 "collinear")
  expect_equal(fr$coeftable$estimate, none$coeftable$estimate, tolerance = 1e-12)
  expect_equal(fr$coeftable$std.error, none$coeftable$std.error, tolerance = 1e-12)
  # the controls do change the answer when they matter (x is in y)
  expect_gt(max(abs(base$coeftable$estimate - none$coeftable$estimate)), 1e-3)
  # a formula is the same as the names
  ff <- did_dcdh(d, "y", "id", "t", "D_rev", effects = 3, placebo = 2, controls = ~ x)
  expect_identical(ff$coeftable$estimate, base$coeftable$estimate)
  expect_error(did_dcdh(d, "y", "id", "t", "D_rev", controls = "xx"), "`controls` names \"xx\"")
  expect_error(did_dcdh(d, "y", "id", "t", "D_rev", controls = 3), "`controls` must be column names")
  d$xc <- as.complex(d$x)
  expect_error(did_dcdh(d, "y", "id", "t", "D_rev", controls = "xc"), "must be numeric")
  # rows with a missing control are dropped, with a message
  d$xm <- d$x; d$xm[c(5, 17)] <- NA
  expect_message(did_dcdh(d, "y", "id", "t", "D_rev", controls = "xm"), "2 observations removed")
})

test_that("did_dcdh by and by_path equal DIDmultiplegtDYN 2.2.0 (stored) level by level", {
  d <- dcdh_panel(); ref <- dcdh_ref()
  check <- function(b, nm) {
    expect_s3_class(b, "did_dcdh_by")
    lv <- unique(sub("^[^|]*\\|", "", ref$case[startsWith(ref$case, paste0(nm, "|"))]))
    expect_identical(names(b$fits), lv)                # the same levels, in the peer's order
    for (l in lv) {
      tab <- b$fits[[l]]$coeftable
      r <- ref[ref$case == paste0(nm, "|", l) & !grepl("^p_", ref$term), ]
      k <- match(r$term, dcdh_peer_term(tab))
      expect_false(anyNA(k))
      expect_identical(nrow(tab), nrow(r))
      expect_lt(max(abs(tab$estimate[k] - r$estimate) / abs(r$estimate)), 1e-8, label = paste(nm, l))
      expect_lt(max(abs(tab$std.error[k] - r$se) / r$se), 1e-6, label = paste(nm, l))
      expect_identical(as.numeric(tab$n[k]), as.numeric(r$n))
      expect_identical(as.numeric(tab$switchers[k]), as.numeric(r$switchers))
    }
  }
  check(did_dcdh(d, "y", "id", "t", "D_rev", effects = 3, placebo = 1, by = "region"), "by_region")
  bp <- did_dcdh(d, "y", "id", "t", "D_multi", effects = 2, placebo = 1, by_path = -1)
  check(bp, "by_path")
  # each path's groups are its switchers (the peer's Effect_1 count, same switchers throughout)
  expect_equal(bp$levels$groups, ref$switchers[ref$term == "Effect_1" & startsWith(ref$case, "by_path|")])
  check(did_dcdh(d, "y", "id", "t", "D_rev", effects = 2, placebo = 1, by_path = 2, cluster = "cl"), "by_path2")
  # a by level is the estimator on that level's groups
  b <- did_dcdh(d, "y", "id", "t", "D_rev", effects = 2, by = "region")
  expect_identical(b$fits[["2"]]$coeftable$estimate,
                   did_dcdh(d[d$region == 2, ], "y", "id", "t", "D_rev", effects = 2)$coeftable$estimate)
  td <- tidy(b)
  expect_identical(unique(td$by), c("1", "2", "3"))
  expect_output(print(b), "did_dcdh by region: 3 levels")
  expect_message(bb <- did_dcdh(d, "y", "id", "t", "D_multi", effects = 2, by_path = 9), "9 treatment paths requested")
  expect_length(bb$fits, 4L)
  pdf(NULL); on.exit(grDevices::dev.off(), add = TRUE)
  drawn <- plot(bp)
  expect_setequal(unique(drawn$estimator), paste("path", names(bp$fits)))
})

test_that("did_dcdh by and by_path refuse bad input", {
  d <- dcdh_panel()
  expect_error(did_dcdh(d, "y", "id", "t", "D_rev", by = "x"), "`by` = \"x\" must be constant within each group")
  expect_error(did_dcdh(d, "y", "id", "t", "D_rev", by = "nope"), "`by` = \"nope\" is not a column")
  expect_error(did_dcdh(d, "y", "id", "t", "D_rev", by_path = 0), "`by_path` must be a whole number")
  expect_error(did_dcdh(d, "y", "id", "t", "D_rev", by_path = 1.5), "`by_path` must be a whole number")
  expect_error(did_dcdh(d, "y", "id", "t", "D_rev", by = "region", by_path = 2), "cannot be combined")
  expect_error(did_dcdh(d, "y", "id", "t", "D_rev", by_path = 2, trends_lin = TRUE), "`by_path` is not supported with `trends_lin` = TRUE", fixed = TRUE)
})

test_that("did_dcdh: missing treatments and outcomes", {
  d <- dcdh_panel()
  d$D_all_na <- NA_real_
  expect_error(did_dcdh(d, "y", "id", "t", "D_all_na"), "`dname` = \"D_all_na\" is missing in every row")
  d$y_all_na <- NA_real_
  expect_error(did_dcdh(d, "y_all_na", "id", "t", "D_rev"), "`yname` = \"y_all_na\" is missing in every row")
  d$D_inf <- d$D_rev; d$D_inf[3] <- Inf
  expect_error(did_dcdh(d, "y", "id", "t", "D_inf"), "infinite")
  # a missing treatment is not the same as a dropped row (the peer's fill-in
  # rules; equality with DIDmultiplegtDYN is case d_missing above)
  a <- did_dcdh(d, "y", "id", "t", "D_na", effects = 3)
  b <- suppressMessages(did_dcdh(d[!is.na(d$D_na), ], "y", "id", "t", "D_na", effects = 3))
  expect_gt(max(abs(a$coeftable$estimate - b$coeftable$estimate)), 1e-3)
})

test_that("did_dcdh with a survey design: the weights' estimates, design-based SEs equal survey's on the influence functions", {
  need_peer("survey")
  d <- dcdh_panel()
  d$st <- (d$cl - 1) %/% 4 + 1                       # 3 strata of 4 PSUs (the clusters)
  des <- survey::svydesign(ids = ~cl, strata = ~st, weights = ~w, data = d)
  f <- did_dcdh(d, "y", "id", "t", "D_rev", effects = 3, placebo = 2, survey = des)
  g <- did_dcdh(d, "y", "id", "t", "D_rev", effects = 3, placebo = 2, weightsname = "w")
  expect_equal(f$coeftable$estimate, g$coeftable$estimate, tolerance = 1e-12)
  expect_match(f$vcov_label, "survey design \\(Taylor")
  # the groups' influence functions (fit$inf, one row per group, all 120
  # groups used here) as totals over the design, by the survey package
  G <- length(unique(d$id))
  gd <- d[!duplicated(d$id), ]; gd <- gd[order(gd$id), ]
  Ud <- as.data.frame(f$inf / G); names(Ud) <- paste0("u", seq_len(ncol(Ud)))
  fo <- stats::as.formula(paste("~", paste(names(Ud), collapse = "+")))
  v <- survey::svytotal(fo, survey::svydesign(ids = ~cl, strata = ~st, weights = ~1, data = cbind(Ud, gd[c("cl", "st")])))
  expect_equal(unname(survey::SE(v)), f$coeftable$std.error, tolerance = 1e-10)
  # bootstrap replicate weights (50 replicates of the PSUs within strata)
  set.seed(11)
  rdes <- survey::as.svrepdesign(des, type = "subbootstrap", replicates = 50)
  fr <- did_dcdh(d, "y", "id", "t", "D_rev", effects = 3, placebo = 2, survey = rdes)
  expect_equal(fr$coeftable$estimate, g$coeftable$estimate, tolerance = 1e-12)
  # survey's totals on the row-level replicate design of variables that
  # spread each group's psi / w over its rows (replicate weights are constant
  # within a PSU, hence within a group): replicate totals sum_g w_rg psi_g / w_g
  ids <- sort(unique(d$id)); gi <- match(d$id, ids)
  nrow_g <- tabulate(gi); w_g <- d$w[match(ids, d$id)]
  Urow <- as.data.frame((fr$inf / G / w_g / nrow_g)[gi, , drop = FALSE]); names(Urow) <- names(Ud)
  set.seed(11)
  rdes2 <- survey::as.svrepdesign(survey::svydesign(ids = ~cl, strata = ~st, weights = ~w, data = cbind(d, Urow)),
                                  type = "subbootstrap", replicates = 50)
  expect_match(fr$vcov_label, "50 .*replicates")
  expect_gt(max(abs(fr$coeftable$std.error / f$coeftable$std.error - 1)), 0.01)   # not the Taylor numbers
  vr <- survey::svytotal(fo, rdes2)
  expect_equal(unname(survey::SE(vr)), fr$coeftable$std.error, tolerance = 1e-10)
  expect_error(did_dcdh(d, "y", "id", "t", "D_rev", survey = rdes, nboot = 99), "replicate-weight")
  expect_error(did_dcdh(d, "y", "id", "t", "D_rev", survey = des, weightsname = "w"), "`weightsname`")
  expect_error(did_dcdh(d, "y", "id", "t", "D_rev", survey = des, cluster = "cl"), "`cluster`")
  # groups split across PSUs
  d$psu2 <- d$t %% 2
  expect_error(did_dcdh(d, "y", "id", "t", "D_rev", survey = survey::svydesign(ids = ~psu2, weights = ~w, data = d)),
               "must lie within one PSU")
  # with nboot, a multiplier per PSU: bootstrap SEs near the analytic ones
  set.seed(3)
  fb <- did_dcdh(d, "y", "id", "t", "D_rev", effects = 3, placebo = 2, survey = des, nboot = 1999)
  expect_lt(max(abs(fb$coeftable$std.error / f$coeftable$std.error - 1)), 0.15)
})

test_that("did_dcdh predict_het equals DIDmultiplegtDYN 2.2.0 (stored)", {
  d <- dcdh_panel()
  ref <- read.csv(test_path("ref-dcdh-het.csv"))
  cases <- list(
    het1 = list(d = "D_rev", effects = 3, placebo = 2, predict_het = list(c("xg", "w"), c(1, 2))),
    het2 = list(d = "D_multi", effects = 2, placebo = 1, predict_het = list("xg", -1), weightsname = "w"),
    het3 = list(d = "D_rev", effects = 2, placebo = 0, predict_het = list(c("xg", "w"), -1), trends_nonparam = "region"))
  for (nm in names(cases)) {
    a <- cases[[nm]]; dn <- a$d; a$d <- NULL
    h <- do.call(did_dcdh, c(list(d, "y", "id", "t", dn), a))$predict_het
    r <- ref[ref$case == nm, ]
    expect_identical(nrow(h), nrow(r), info = nm)
    k <- match(paste(r$effect, r$covariate), paste(h$effect, h$covariate))
    expect_false(anyNA(k))
    expect_lt(max(abs(h$estimate[k] - r$estimate) / abs(r$estimate)), 1e-8, label = paste(nm, "estimates"))
    expect_lt(max(abs(h$std.error[k] - r$se) / r$se), 1e-6, label = paste(nm, "SEs"))
    expect_lt(max(abs(h$conf.low[k] - r$lb)), 1e-6, label = paste(nm, "intervals"))
    expect_identical(as.numeric(h$n[k]), as.numeric(r$n))
    expect_lt(max(abs(h$p_joint[k] - r$pF)), 1e-8, label = paste(nm, "joint tests"))
  }
  # a character vector alone: every effect
  h <- did_dcdh(d, "y", "id", "t", "D_rev", effects = 2, predict_het = "xg")$predict_het
  expect_equal(h$effect, c(1, 2))
  expect_error(did_dcdh(d, "y", "id", "t", "D_rev", predict_het = list("x", 1)), "`predict_het` = \"x\" must be constant within each group")
  expect_error(did_dcdh(d, "y", "id", "t", "D_rev", predict_het = list("nope", 1)), "not a column")
  expect_error(did_dcdh(d, "y", "id", "t", "D_rev", effects = 2, predict_het = list("xg", 3)), "effect 3 requested")
  expect_error(did_dcdh(d, "y", "id", "t", "D_rev", predict_het = list("xg", 0)), "`predict_het` must be list")
  expect_error(did_dcdh(d, "y", "id", "t", "D_rev", predict_het = "xg", normalized = TRUE), "normalized")
  expect_error(did_dcdh(d, "y", "id", "t", "D_rev", effects = 2, predict_het = "xg", trends_lin = TRUE),
               "`predict_het` is not supported with `trends_lin` = TRUE", fixed = TRUE)
  d$xg_copy <- 2 * d$xg
  expect_error(did_dcdh(d, "y", "id", "t", "D_rev", predict_het = list(c("xg", "xg_copy"), 1)), "collinear")
})

test_that("did_dcdh(estimand = \"DID_M\") equals DIDmultiplegt 2.1.0's mode \"old\" (stored); analytic SEs near its bootstrap", {
  # reference: tools/dcdh-reference.R, DIDmultiplegt 2.1.0 with one NAMESPACE
  # line removed (see tools/install-dcdh.sh: as released, mode "old" returns NaN)
  d <- dcdh_panel()
  ref <- read.csv(test_path("ref-dcdh-m.csv"))
  cases <- list(m_rev = list(d = "D_rev", placebo = 2), m_multi = list(d = "D_multi", placebo = 2, cluster = "cl"),
                m_na = list(d = "D_na", placebo = 1), m_unbal = list(d = "D_rev", placebo = 2, unbalanced = TRUE),
                m_cont = list(d = "D_cont", placebo = 1, threshold_stable_treatment = 0.1))
  ratios <- numeric()
  for (nm in names(cases)) {
    a <- cases[[nm]]
    dat <- if (isTRUE(a$unbalanced)) d[d$keep_unbal == 1, ] else d
    f <- did_dcdh(dat, "y", "id", "t", a$d, placebo = a$placebo, estimand = "DID_M", cluster = a$cluster,
                  threshold_stable_treatment = a$threshold_stable_treatment %||% 0)
    r <- ref[ref$case == nm, ]
    tab <- f$coeftable
    expect_identical(tab$term, sub("^effect$", "DID_M", r$term), info = nm)
    expect_lt(max(abs(tab$estimate - r$estimate) / abs(r$estimate)), 1e-8, label = paste(nm, "estimates"))
    expect_identical(as.numeric(tab$n), as.numeric(r$n), info = nm)
    expect_identical(tab$switchers[1], as.numeric(r$switchers[1]), info = nm)
    if (!anyNA(r$boot_se)) ratios <- c(ratios, tab$std.error / r$boot_se)
  }
  expect_length(ratios, 6L)
  # the peer's standard errors are a 250-draw bootstrap of groups (clusters),
  # which varies the treatment paths too; the analytic ones (given the
  # treatments) agree with them to within ~25% here, on average within 10%
  expect_true(all(ratios > 0.75 & ratios < 1.25))
  expect_lt(abs(mean(ratios) - 1), 0.1)
})

test_that("did_dcdh(estimand = \"DID_M\"): invariants and bad input", {
  d <- dcdh_panel()
  # with absorbing adoption every switch is a first switch, the stable groups
  # with treatment 0 at t - 1 are the not-yet-treated: DID_M = the dynamic
  # estimator's first effect (the two number N alike)
  m <- did_dcdh(d, "y", "id", "t", "D_abs", estimand = "DID_M")
  e <- did_dcdh(d, "y", "id", "t", "D_abs", effects = 1)
  expect_equal(m$coeftable$estimate[1], e$coeftable$estimate[1], tolerance = 1e-12)
  expect_equal(m$coeftable$n[1], e$coeftable$n[1])
  expect_error(did_dcdh(d, "y", "id", "t", "D_rev", estimand = "DID_M", normalized = TRUE),
               "does not take `normalized`")
  expect_error(did_dcdh(d, "y", "id", "t", "D_rev", estimand = "DID_M", controls = "x"), "does not take `controls`")
  expect_error(did_dcdh(d, "y", "id", "t", "D_rev", estimand = "DIDM"), "`estimand` must be one of")
  expect_error(did_dcdh(d, "y", "id", "t", "D_rev", threshold_stable_treatment = 0.1), "applies to estimand")
  expect_error(did_dcdh(d, "y", "id", "t", "D_rev", estimand = "DID_M", threshold_stable_treatment = -1),
               "`threshold_stable_treatment` must be a number >= 0")
  # nothing switches next to a stable group: an error, not a number
  d2 <- d; d2$D_one <- as.integer(d2$t >= 5)
  expect_error(did_dcdh(d2, "y", "id", "t", "D_one", estimand = "DID_M"), "DID_M cannot be estimated")
  # the bootstrap goes through the shared layer
  set.seed(2)
  b <- did_dcdh(d, "y", "id", "t", "D_rev", placebo = 1, estimand = "DID_M", nboot = 999)
  a <- did_dcdh(d, "y", "id", "t", "D_rev", placebo = 1, estimand = "DID_M")
  expect_lt(max(abs(b$coeftable$std.error / a$coeftable$std.error - 1)), 0.12)
  expect_match(b$vcov_label, "bootstrap")
})

test_that("did_dcdh same_switchers_pl equals DIDmultiplegtDYN 2.2.0 (stored)", {
  dcdh_check_ref(list(same_sw_pl = list(d = "D_rev", effects = 3, placebo = 2, same_switchers = TRUE,
                                        same_switchers_pl = TRUE)))
  d <- dcdh_panel()
  expect_error(did_dcdh(d, "y", "id", "t", "D_rev", same_switchers_pl = TRUE), "needs `same_switchers`")
})

test_that("issue 34: did_dcdh does not depend on the row order (periods and groups numbered by value)", {
  # Before the fix, periods were numbered in order of first appearance and used
  # as matrix columns (lags = column offsets): rows sorted by descending period
  # gave event::1 = 1.128 instead of 1.722 on this file, shuffled rows others.
  d <- utils::read.csv(system.file("extdata", "reversible_panel.csv", package = "diffdiff"))
  ref <- did_dcdh(d, "y", "id", "t", "D_rev", effects = 2, placebo = 1, cluster = "cl")
  set.seed(3)
  for (o in list(order(-d$t, -d$id), order(-d$t), sample(nrow(d)), order(d$t, -d$id))) {
    f <- did_dcdh(d[o, ], "y", "id", "t", "D_rev", effects = 2, placebo = 1, cluster = "cl")
    expect_equal(f$coeftable[c("estimate", "std.error")], ref$coeftable[c("estimate", "std.error")],
                 tolerance = 1e-10)
    expect_equal(f$joint, ref$joint, tolerance = 1e-10)
    m <- did_dcdh(d[o, ], "y", "id", "t", "D_rev", estimand = "DID_M", placebo = 1)
    m0 <- did_dcdh(d, "y", "id", "t", "D_rev", estimand = "DID_M", placebo = 1)
    expect_equal(m$coeftable$estimate, m0$coeftable$estimate, tolerance = 1e-10)
  }
  # the multiplier bootstrap draws per cluster in sorted order: same numbers too
  set.seed(5); b1 <- did_dcdh(d, "y", "id", "t", "D_rev", effects = 2, cluster = "cl", nboot = 99)
  set.seed(5); b2 <- did_dcdh(d[rev(seq_len(nrow(d))), ], "y", "id", "t", "D_rev", effects = 2, cluster = "cl", nboot = 99)
  expect_equal(b1$coeftable$std.error, b2$coeftable$std.error, tolerance = 1e-10)
})

test_that("issue 34: one cluster is an error in did_dcdh (both estimands) and did_dose, not SE = |estimate| or NA", {
  d <- utils::read.csv(system.file("extdata", "reversible_panel.csv", package = "diffdiff"))
  d$one <- 1
  msg <- '`cluster` = "one" has a single cluster in the estimation sample.*ONE_CLUSTER'
  expect_error(did_dcdh(d, "y", "id", "t", "D_rev", effects = 2, cluster = "one"), msg)
  expect_error(did_dcdh(d, "y", "id", "t", "D_rev", estimand = "DID_M", cluster = "one"), msg)
  e <- tryCatch(did_dcdh(d, "y", "id", "t", "D_rev", cluster = "one"), diffdiff_error = function(e) e$code)
  expect_identical(e, "ONE_CLUSTER")
  set.seed(2)
  n <- 200; T <- 4
  dd <- data.frame(id = rep(seq_len(n), each = T), t = rep(seq_len(T), n))
  gu <- sample(c(0, 3, 4), n, TRUE); du <- ifelse(gu > 0, runif(n), 0)
  dd$g <- gu[dd$id]; dd$dose <- du[dd$id]; dd$one <- 7
  dd$y <- rnorm(nrow(dd)) + (dd$t >= dd$g & dd$g > 0) * dd$dose
  expect_error(did_dose(dd, "y", "id", "t", "g", "dose", cluster = "one", nboot = 0),
               '`cluster` = "one" has a single cluster')
  expect_error(did_dose(dd, "y", "id", "t", "g", "dose", cluster = "one", nboot = 49),
               '`cluster` = "one" has a single cluster')
})

test_that("issue 34: did_dcdh's joint tests use the table's variance (the survey design's)", {
  need_peer("survey")
  d <- dcdh_panel()
  d$st <- (d$cl - 1) %/% 4 + 1
  des <- survey::svydesign(ids = ~cl, strata = ~st, weights = ~w, data = d)
  f <- did_dcdh(d, "y", "id", "t", "D_rev", effects = 3, placebo = 2, survey = des)
  g <- did_dcdh(d, "y", "id", "t", "D_rev", effects = 3, placebo = 2, weightsname = "w")
  # the Wald statistics from the fit's own covariance (design-based here)
  wald <- function(fit, k) {
    b <- coef(fit)[k]; V <- vcov(fit)[k, k]
    stats::pchisq(drop(crossprod(b, solve(V, b))), df = length(k), lower.tail = FALSE)
  }
  ke <- grep("^event::[0-9]", names(coef(f))); kp <- grep("^event::-", names(coef(f)))
  expect_equal(unname(f$joint[["effects"]]), wald(f, ke), tolerance = 1e-10)
  expect_equal(unname(f$joint[["placebos"]]), wald(f, kp), tolerance = 1e-10)
  expect_equal(unname(g$joint[["effects"]]), wald(g, ke), tolerance = 1e-10)
  expect_equal(unname(g$joint[["placebos"]]), wald(g, kp), tolerance = 1e-10)
  expect_gt(abs(f$joint[["placebos"]] - g$joint[["placebos"]]), 0.05)   # the design changes them (0.58 vs 0.44)
})
