# Issue 13, "silent wrong answers": inputs on which estimators used to return
# numbers that meant nothing (ATT 0 with SE 0, p = 1e-32, SEs of 1e-16, NA
# SEs without a word, a truncated interval, bootstrap numbers that moved with
# the row order). Each must now be a clear error or warning. Every test here
# fails on the code before the fix (checked against the previous commit).

d0 <- sim_panel()                      # 300 units, 2001-2010, cohorts 2004/2006/2008, never = 0
d2x2 <- sim_2x2()

# one call per estimator; `...` reaches the estimator
fits <- list(
  did_2x2 = function(d, y = "y", ...) did_2x2(d[d$year %in% c(2004, 2007) & d$first_treat %in% c(0, 2006), ],
                                              y, "treated", "post", cluster = "id", ...),
  did_twfe = function(d, y = "y", ...) did_twfe(d, y, "id", "year", "treat", ...),
  did_event = function(d, y = "y", ...) did_event(d, y, "id", "year", "first_treat", ...),
  did_sa = function(d, y = "y", ...) did_sa(d, y, "id", "year", "first_treat", ...),
  did_bjs = function(d, y = "y", ...) did_bjs(d, y, "id", "year", "first_treat", ...),
  did_gardner = function(d, y = "y", ...) did_gardner(d, y, "id", "year", "first_treat", ...),
  did_stacked = function(d, y = "y", ...) did_stacked(d, y, "id", "year", "first_treat", kappa_pre = 2,
                                                      kappa_post = 1, ...),
  did_cs = function(d, y = "y", ...) did_cs(d, y, "id", "year", "first_treat", nboot = 0, ...),
  did_sdid = function(d, y = "y", ...) did_sdid(d[d$first_treat %in% c(0, 2006), ], y, "id", "year", "treat",
                                                se = "none", ...),
  bacon_decomp = function(d, y = "y", ...) bacon_decomp(d, y, "id", "year", gname = "first_treat", ...)
)
with_2x2_cols <- function(d) {
  d$treated <- as.integer(d$first_treat == 2006); d$post <- as.integer(d$year == 2007)
  d
}
quiet <- function(expr) suppressMessages(suppressWarnings(expr))
muffle <- function(expr, pattern)
  withCallingHandlers(expr, warning = function(w) if (grepl(pattern, conditionMessage(w))) invokeRestart("muffleWarning"))

test_that("item 1: a constant outcome is an error naming `yname` in every estimator", {
  d <- with_2x2_cols(d0)
  d$yc <- 5
  for (nm in names(fits))
    expect_error(quiet(fits[[nm]](d, "yc")), '`yname` = "yc" is constant \\(5 in every usable row\\)', info = nm)
  # constant after the unusable rows are dropped
  d$yc[1:3] <- c(NA, 7, 8); d$w2 <- 1; d$w2[2:3] <- 0
  expect_error(quiet(did_twfe(d, "yc", "id", "year", "treat", weightsname = "w2")), '`yname` = "yc" is constant')
})

test_that("item 2: a single cluster is the same error in every estimator, also with survey designs", {
  d <- d0; d$one <- 1
  msg <- '`cluster` = "one" has a single cluster in the estimation sample'
  expect_error(did_gardner(d, "y", "id", "year", "first_treat", cluster = "one"), msg)
  expect_error(did_bjs(d, "y", "id", "year", "first_treat", cluster = "one"), msg)
  expect_error(did_cs(d, "y", "id", "year", "first_treat", cluster = "one", nboot = 0), msg)
  expect_error(did_cs(d, "y", "id", "year", "first_treat", cluster = "one", nboot = 99), msg)
  expect_error(did_stacked(d, "y", "id", "year", "first_treat", kappa_pre = 2, kappa_post = 1, cluster = "one"), msg)
  expect_error(did_sa(d, "y", "id", "year", "first_treat", cluster = "one"), msg)
  expect_error(did_twfe(d, "y", "id", "year", "treat", cluster = "one"), msg)
  # a design whose estimation sample lies in one PSU (the other PSU's outcomes are missing)
  d$psu <- ifelse(d$id <= 150, 1, 2)
  des <- survey_design(d, weights = ~ w, ids = ~ psu)
  d$y[d$psu == 2] <- NA
  smsg <- "`survey` has a single primary sampling unit in the estimation sample"
  expect_error(quiet(did_twfe(d, "y", "id", "year", "treat", survey = des)), smsg)
  expect_error(quiet(did_cs(d, "y", "id", "year", "first_treat", survey = des, nboot = 0)), smsg)
  expect_error(quiet(did_gardner(d, "y", "id", "year", "first_treat", survey = des)), smsg)
})

test_that("item 3: one column in two roles, and duplicated column names, are errors", {
  d <- with_2x2_cols(d0)
  expect_error(did_twfe(d, "id", "id", "year", "treat"), '`yname` and `idname` both name the column "id"')
  expect_error(did_event(d, "y", "id", "year", "year"), '`tname` and `gname` both name the column "year"')
  expect_error(did_cs(d, "y", "id", "year", "first_treat", weightsname = "y"),
               '`yname` and `weightsname` both name the column "y"')
  expect_error(did_2x2(d, "y", "treated", "treated"), '`treatname` and `postname` both name the column "treated"')
  expect_error(did_sdid(d, "treat", "id", "year", "treat"), '`yname` and `dname` both name the column "treat"')
  expect_error(bacon_decomp(d, "y", "year", "year", gname = "first_treat"),
               '`idname` and `tname` both name the column "year"')
  expect_error(did_bjs(d, "y", "id", "year", "first_treat", cluster = "y"), '`yname` and `cluster` both name the column "y"')
  # clustering by the unit, the period or the cohort is legitimate
  expect_s3_class(did_twfe(d, "y", "id", "year", "treat", cluster = "id"), "did_twfe")
  expect_s3_class(quiet(did_event(d, "y", "id", "year", "first_treat", cluster = "first_treat")), "did_event")
  # duplicated names: an error when the column is used, nothing otherwise
  dd <- cbind(d, y = rnorm(nrow(d)), state = 1)
  expect_error(did_twfe(dd, "y", "id", "year", "treat"), '`data` has 2 columns named "y" \\(used as `yname`\\)')
  expect_error(did_twfe(dd, "x1", "id", "year", "treat", cluster = "state"), '2 columns named "state" \\(used as `cluster`\\)')
  expect_s3_class(did_twfe(dd, "x1", "id", "year", "treat"), "did_twfe")
  dx <- cbind(d, x2 = 1)
  expect_error(did_twfe(dx, "y", "id", "year", "treat", xformla = ~ x2), '"x2" \\(used as `xformla`\\)')
})

test_that("item 4: an outcome whose squares overflow is an error suggesting rescaling, in every estimator", {
  d <- with_2x2_cols(d0)
  d$ybig <- d$y * 1e300
  for (nm in names(fits))
    expect_error(quiet(fits[[nm]](d, "ybig")), '`yname` = "ybig" has values as large as .*Rescale it', info = nm)
  d$xbig <- d$x1 * 1e200
  expect_error(did_twfe(d, "y", "id", "year", "treat", xformla = ~ xbig), '`xformla` variable "xbig" has values as large')
  d$ytiny <- d$y * 1e-200
  expect_error(did_twfe(d, "ytiny", "id", "year", "treat"), "underflow.*Rescale it")
  # the safety net on results: non-finite estimates from finite data are an error
  tab <- data.frame(term = "ATT", estimate = 1, std.error = Inf)
  expect_error(diffdiff:::dd_check_finite_result(tab, "y"), "result for ATT is not finite.*Rescale")
})

test_that("item 5: one cohort rule for every estimator that takes `gname`", {
  gfits <- fits[c("did_event", "did_cs", "did_sa", "did_bjs", "did_gardner", "did_stacked", "bacon_decomp")]
  d <- d0; d$first_treat[d$first_treat == 2006] <- 2006.5
  for (nm in names(gfits))
    expect_error(quiet(gfits[[nm]](d)), '`gname` = "first_treat" has value 2006.5, which is not a period of `tname` = "year"',
                 info = nm)
  d <- d0; d$first_treat[d$first_treat == 0] <- -1
  for (nm in names(gfits))
    expect_error(quiet(gfits[[nm]](d)), '`gname` = "first_treat" has the negative value -1', info = nm)
  # irregular periods: 2004 is not observed (every other year), so it is not a cohort
  d <- d0[d0$year %% 2 == 1, ]
  for (nm in names(gfits))
    expect_error(quiet(gfits[[nm]](d)), "has value 200[468], which is not a period", info = nm)
  # after the last period: never treated, with a message, the same as coding it 0
  d <- d0; d$first_treat[d$first_treat == 0] <- 2015
  for (nm in c("did_event", "did_sa", "did_bjs", "did_gardner", "did_cs")) {
    expect_message(f <- suppressWarnings(gfits[[nm]](d)), "120 unit\\(s\\) first treated after the last period", info = nm)
    expect_equal(coef(f), coef(quiet(gfits[[nm]](d0))), tolerance = 1e-12, info = nm)
  }
})

test_that("item 5: did_sa keeps gname = 0 as never treated when 0 is a period (parity with sunab)", {
  need_peer("fixest")
  d <- d0
  d$t0 <- d$year - 2001                                      # periods 0..9
  d$g0 <- ifelse(d$first_treat == 0, 0, d$first_treat - 2001)
  d$gI <- ifelse(d$first_treat == 0, 10000, d$first_treat - 2001)
  f <- did_sa(d, "y", "id", "t0", "g0", xformla = ~ x1)
  # fixest's sunab on the same data with the never treated coded 10000 (outside the periods)
  res <- fixest::feols(y ~ x1 + sunab(gI, t0) | id + t0, d, cluster = ~id)
  a <- summary(res, agg = "ATT")$coeftable
  i <- nrow(f$coeftable)
  expect_lt(abs(a["ATT", 1] - f$coeftable$estimate[i]) / abs(a["ATT", 1]), 1e-8)
  expect_lt(abs(a["ATT", 2] - f$coeftable$std.error[i]) / a["ATT", 2], 1e-6)
  full <- summary(res, agg = FALSE)$coeftable
  mm <- match(sub("gI", "g0", rownames(full)), f$cohort_coefs$term)
  expect_false(anyNA(mm))
  expect_lt(max(abs(full[, 1] - f$cohort_coefs$estimate[mm]) / abs(full[, 1])), 1e-8)
  expect_lt(max(abs(full[, 2] - f$cohort_coefs$std.error[mm]) / full[, 2]), 1e-6)
  # (sunab(g0, t0) itself treats cohort 0 as never treated but removes one observation as NA:
  # fixest 0.14.2 gives ATT 2.2984869 vs 2.2984974 here, 4e-6 apart)
  expect_false(any(grepl("cohort::0$", f$cohort_coefs$term)))
})

test_that("item 6: did_sa warns when a cohort has no period at `ref` and says which period is the reference", {
  d <- d0[d0$year != 2005, ]                                # cohort 2006 has no e = -1
  expect_warning(f <- did_sa(d, "y", "id", "year", "first_treat"),
                 "cohort 2006 has no observation at relative period -1 \\(`ref`; no year = 2005\\), so its effects are normalised on relative period -2 \\(year = 2004\\)")
  expect_equal(unname(f$cohort_ref), c(-1, -2, -1))
  expect_false(any(grepl("year::-2:cohort::2006", f$cohort_coefs$term)))
  expect_true(any(grepl("year::0:cohort::2006", f$cohort_coefs$term)))     # no treated period is the reference
  expect_silent(did_sa(d0, "y", "id", "year", "first_treat"))
})

test_that("item 7: bacon_decomp says when the TWFE coefficient is not identified", {
  expect_error(bacon_decomp(d0[d0$id == 1, ], "y", "id", "year", gname = "first_treat"),
               "single unit .*not identified")
  d <- d0[d0$first_treat == 2006, ]
  expect_error(bacon_decomp(d, "y", "id", "year", gname = "first_treat"),
               "`gname` = \"first_treat\" gives every unit the same treatment timing \\(first treated in 2006\\).*not identified")
  expect_error(bacon_decomp(d, "y", "id", "year", gname = "first_treat", xformla = ~ x1), "not identified")
  expect_error(diffdiff:::dd_bacon_identified(c(0, 0), c(2004, Inf)), "no 2x2 comparison has positive weight")
})

test_that("item 8: all-zero survey weights, and a zero-weight domain, are errors", {
  d <- d0; d$w0 <- 0
  expect_error(survey_design(d, weights = ~ w0, ids = ~ id), "`weights` is zero for every observation")
  expect_error(survey_design(d, weights = ~ w0, repweights = matrix(1, nrow(d), 4), type = "bootstrap"),
               "`weights` is zero for every observation")
  d$w0[d$state != 3] <- 1
  des <- survey_design(d, weights = ~ w0, ids = ~ id)
  expect_error(aggregate_survey(d, "y", by = c("state", "year"), design = des),
               "`by` cell state = 3, year = 2001 has zero total weight in `design` \\(10 such cells\\)")
})

test_that("item 9: did_cs with a single period names `tname`", {
  expect_error(did_cs(d0[d0$year == 2006, ], "y", "id", "year", "first_treat", nboot = 0),
               '`tname` = "year" must have at least two periods; the data have only 2006')
})

test_that("item 10: did_sdid takes periods as every estimator does (numeric, by value)", {
  d <- sim_sdid_panel(N0 = 8, N1 = 2, T0 = 9, T1 = 3)
  d$t1 <- d$time - 2000                                     # 1..12: as text "1", "10", "11", "12", "2", ...
  a <- did_sdid(d, "y", "unit", "time", "treat", se = "none")
  b <- did_sdid(d, "y", "unit", "t1", "treat", se = "none")
  expect_equal(coef(a), coef(b), tolerance = 1e-12)
  d$tc <- as.character(d$t1)
  expect_error(did_sdid(d, "y", "unit", "tc", "treat"), '`tname` = "tc" must be a numeric column; it is character')
  expect_error(did_sdid(d[d$time == 2001, ], "y", "unit", "time", "treat"), '`tname` = "time" must have at least two periods')
})

test_that("item 11: honest_did never returns an interval cut at the grid's end", {
  es <- read_event_study(system.file("extdata", "honestdid_bc_event_study.txt", package = "diffdiff"))
  # RM, C-LF, Mbar = 2: the default grid (+/- 20 se) used to cut the upper end at 0.3795 with a warning
  expect_silent(h <- honest_did(betahat = es$b, sigma = es$S, num_pre = es$K, type = "RM", Mbar = c(1, 2),
                                breakdown = FALSE))
  sd20 <- 20 * h$se
  expect_equal(h$grids$start_ub, c(sd20, sd20), tolerance = 1e-12)
  expect_gt(h$results$ub[2], sd20)
  expect_gt(h$grids$ub[2], h$results$ub[2])                 # the grid goes beyond the end: closed
  expect_equal(h$grids$ub[1], sd20)                         # no extension where none was needed
  # the extension adds points at the same step: equal to one explicit grid over the extended range
  step <- 2 * sd20 / 999
  h2 <- honest_did(betahat = es$b, sigma = es$S, num_pre = es$K, type = "RM", Mbar = 2, breakdown = FALSE,
                   grid_lb = -sd20, grid_ub = sd20 + 1000 * step, grid_points = 2000)
  expect_equal(h2$results$ub, h$results$ub[2], tolerance = 1e-10)
  expect_equal(h2$results$lb, h$results$lb[2], tolerance = 1e-10)
  # a given grid that cuts the set is extended too
  h3 <- honest_did(betahat = es$b, sigma = es$S, num_pre = es$K, type = "RM", Mbar = 2, breakdown = FALSE,
                   grid_lb = -0.1, grid_ub = 0.1, grid_points = 101)
  expect_gt(h3$results$ub, 0.3)
  # a set that does not close within 20 extensions is an error, not a cut interval
  expect_error(honest_did(betahat = es$b, sigma = es$S, num_pre = es$K, type = "RM", Mbar = 1e4, breakdown = FALSE,
                          grid_points = 50),
               "still reaches the end of the grid after extending it 20 times.*does not return a truncated interval")
})

test_that("item 12: bootstrap results do not depend on the order of the rows", {
  set.seed(99)
  s <- d0[sample(nrow(d0)), ]
  cs <- function(d, ...) {
    set.seed(1); f <- did_cs(d, "y", "id", "year", "first_treat", nboot = 199, ...)
    set.seed(2); a <- aggregate(f, type = "dynamic", nboot = 199)
    list(f$coeftable$std.error, f$crit, a$coeftable$std.error, a$crit, f$coeftable$cband.low,
         aggregate(f, type = "group")$coeftable$std.error)
  }
  expect_equal(cs(s), cs(d0), tolerance = 1e-12)
  expect_equal(cs(s, panel = FALSE), cs(d0, panel = FALSE), tolerance = 1e-12)
  u <- d0[-c(5, 77, 300), ]
  us <- u[sample(nrow(u)), ]                  # (shuffled before the seed is set inside cs())
  expect_equal(cs(us, allow_unbalanced_panel = TRUE), cs(u, allow_unbalanced_panel = TRUE), tolerance = 1e-12)
  svy <- function(d) {
    des <- survey_design(d, weights = ~ w, strata = ~ state, ids = ~ id, nest = TRUE, lonely_psu = "adjust")
    set.seed(1); did_cs(d, "y", "id", "year", "first_treat", nboot = 199, survey = des)$coeftable$std.error
  }
  expect_equal(svy(s), svy(d0), tolerance = 1e-12)
  wild <- function(d, ...) {
    set.seed(1); f <- quiet(did_twfe(d, "y", "id", "year", "treat", nboot = 199, ...))
    unlist(f$coeftable[1, c("boot.p.value", "boot.conf.low", "boot.conf.high")])
  }
  expect_equal(wild(s, cluster = "state"), wild(d0, cluster = "state"), tolerance = 1e-12)
  expect_equal(wild(s, vcov = "hetero"), wild(d0, vcov = "hetero"), tolerance = 1e-12)
  ev <- function(d) { set.seed(1); f <- did_event(d, "y", "id", "year", "first_treat", nboot = 19)
                      cbind(f$coeftable$boot.conf.low, f$coeftable$boot.conf.high) }
  expect_equal(ev(s), ev(d0), tolerance = 1e-12)
  w2 <- function(d) { set.seed(1); f <- did_2x2(d, "y", "treated", "post", nboot = 99)
                      unlist(f$coeftable[f$coeftable$term == "ATT", c("boot.p.value", "boot.conf.low", "boot.conf.high")]) }
  s2 <- d2x2[sample(nrow(d2x2)), ]
  expect_equal(w2(s2), w2(d2x2), tolerance = 1e-12)
  # did_sdid's replications index units in synthdid's order (by identifier): already invariant
  ds <- sim_sdid_panel(N0 = 12, N1 = 3, T0 = 6, T1 = 3)
  ss <- ds[sample(nrow(ds)), ]
  for (se in c("placebo", "bootstrap")) {
    sd1 <- function(d) { set.seed(1); did_sdid(d, "y", "unit", "time", "treat", se = se, nboot = 30)$coeftable$std.error }
    expect_equal(sd1(ss), sd1(ds), tolerance = 1e-12)
  }
})

test_that("item 13: did_gardner(pretrends = FALSE) runs and equals the post rows of pretrends = TRUE", {
  a <- did_gardner(d0, "y", "id", "year", "first_treat", pretrends = FALSE)
  b <- did_gardner(d0, "y", "id", "year", "first_treat")
  expect_false(any(a$coeftable$event < 0, na.rm = TRUE))
  k <- match(a$coeftable$term, b$coeftable$term)
  expect_equal(a$coeftable$estimate, b$coeftable$estimate[k], tolerance = 1e-12)
  expect_equal(a$coeftable$std.error, b$coeftable$std.error[k], tolerance = 1e-10)
  w <- diffdiff:::dd_group_weights(c(-1, 0, 1), numeric(0))
  expect_equal(dim(w), c(3L, 0L))
})

test_that("item 14: few treated (or untreated) clusters: a warning in every estimator with clustered inference", {
  d <- with_2x2_cols(d0)
  d$cl10 <- d$id %% 10                                       # 10 clusters
  few <- d[d$first_treat == 0 | d$cl10 %in% c(0, 1), ]     # treated units in 2 of them
  msg <- "`cluster` = \"cl10\": 2 clusters with treated observations and 10 with untreated .*neither the CR1 interval nor the wild cluster bootstrap is exact"
  expect_warning(did_twfe(few, "y", "id", "year", "treat", cluster = "cl10"), paste0(msg, ".*`nboot` > 0"))
  expect_warning(did_event(few, "y", "id", "year", "first_treat", cluster = "cl10"), msg)
  expect_warning(did_2x2(few[few$year %in% c(2004, 2007) & few$first_treat %in% c(0, 2006), ], "y", "treated",
                         "post", cluster = "cl10"), ": 2 clusters with treated")
  expect_warning(quiet_msg <- suppressMessages(did_sa(few, "y", "id", "year", "first_treat", cluster = "cl10")),
                 paste0(msg, ".*did_2x2\\(\\), did_twfe\\(\\) and did_event\\(\\)"))
  expect_warning(did_bjs(few, "y", "id", "year", "first_treat", cluster = "cl10"), msg)
  expect_warning(did_gardner(few, "y", "id", "year", "first_treat", cluster = "cl10"), msg)
  expect_warning(suppressMessages(did_stacked(few, "y", "id", "year", "first_treat", kappa_pre = 2, kappa_post = 1,
                                              cluster = "cl10")), msg)
  expect_warning(muffle(did_cs(few, "y", "id", "year", "first_treat", cluster = "cl10", nboot = 0), "small cohort"), msg)
  # few untreated clusters
  fewc <- d[d$first_treat > 0 | d$cl10 %in% c(0, 1, 2), ]
  expect_warning(did_twfe(fewc, "y", "id", "year", "treat", cluster = "cl10"), ": 10 clusters with treated observations and 3 with untreated")
  # few treated units under the default (unit) clustering, did_cs included
  tiny <- d[d$first_treat == 0 | d$id %in% c(1, 3, 4), ]
  expect_warning(muffle(did_cs(tiny, "y", "id", "year", "first_treat", nboot = 0), "small cohort"),
                 "The units \\(`idname` = \"id\", the clusters of the variance\\): 3 clusters with treated")
  # no warning with many treated and untreated clusters, or treatment varying within clusters
  expect_warning(did_twfe(d, "y", "id", "year", "treat", cluster = "state"), NA)
  expect_warning(did_twfe(d, "y", "id", "year", "treat", cluster = "cl10"), NA)
})
