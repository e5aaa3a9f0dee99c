# did_trop() against diff-diff's TROP. No R package implements TROP; the
# reference numbers come from diff-diff 3.3.2 (Python; github
# HanomicsIMF/diff-diff, commit 33afb6a, pure-Python backend with Debian's
# numpy 1.24.2), run on this machine on 2026-12-01 on the panels
# trop-panel-30x12.csv (30 units, 12 periods, 8 units treated from period
# 9) and trop-panel-30x12-stag.csv (two adoption dates), with one-point
# grids for fixed tuning parameters (tools/diffdiff-py-reference.py does the
# same from any CSV):
#   ref-trop-cells.csv   every treated cell's effect and the ATT, local and
#                        global method, five tuning triples
#   ref-trop-scores.csv  cross-validation scores diff-diff computed
#   ref-trop-search.csv  its tuning choices over small grids (local: 28
#                        score evaluations, global: 8)
#   ref-trop-boot.csv    its bootstrap draws (units drawn, 0-based positions
#                        in the sorted control and treated pools), each
#                        replicate's ATT, the SE, p-value and interval
# Tolerance: the issue's 1e-6 for estimates at the same tuning parameters
# (observed differences ~1e-13).

trop_panel <- function(f = "trop-panel-30x12.csv") read.csv(f)
num_col <- function(x) as.numeric(x)

test_that("did_trop equals diff-diff cell by cell at fixed tuning parameters (local and global)", {
  ref <- read.csv("ref-trop-cells.csv", colClasses = c(tau = "character", att = "character"))
  ref$tau <- num_col(ref$tau); ref$att <- num_col(ref$att)
  runs <- unique(ref[, c("panel", "method", "lambda_time", "lambda_unit", "lambda_nn")])
  expect_gte(nrow(runs), 15L)
  for (r in seq_len(nrow(runs))) {
    x <- runs[r, ]
    d <- trop_panel(if (x$panel == "stag") "trop-panel-30x12-stag.csv" else "trop-panel-30x12.csv")
    f <- did_trop(d, "y", "unit", "time", "d", method = x$method, lambda_time = x$lambda_time,
                  lambda_unit = x$lambda_unit, lambda_nn = x$lambda_nn, nboot = 0)
    rr <- merge(ref, x)
    m <- merge(rr, f$cell_effects, by = c("unit", "time"), suffixes = c(".py", ".r"))
    lab <- paste(x, collapse = " ")
    expect_identical(nrow(m), nrow(f$cell_effects), label = lab)
    expect_identical(nrow(m), nrow(rr), label = lab)
    expect_lt(max(abs(m$tau.py - m$tau.r)), 1e-6)
    expect_lt(abs(unname(coef(f)) - rr$att[1]), 1e-6)
    expect_identical(unname(f$lambda), c(x$lambda_time, x$lambda_unit, x$lambda_nn))
  }
})

test_that("cross-validation scores equal diff-diff's", {
  ref <- read.csv("ref-trop-scores.csv", colClasses = c(score = "character"))
  ref$score <- num_col(ref$score)
  # the fast triples (no factor component, or a large time decay)
  ref <- ref[ref$lambda_nn > 1e9 | ref$lambda_time >= 1, ]
  expect_gte(nrow(ref), 6L)
  d <- trop_panel()
  for (meth in unique(ref$method)) {
    pan <- diffdiff:::dd_panel(d, "y", "unit", "time", c(dname = "d"), complete = "TROP")
    m <- diffdiff:::dd_trop_matrices(pan, "d", meth)
    rr <- ref[ref$method == meth, ]
    for (i in seq_len(nrow(rr))) {
      q <- diffdiff:::dd_trop_score(m, meth, c(rr$lambda_time[i], rr$lambda_unit[i], rr$lambda_nn[i]), c(100, 1e-6))
      expect_equal(q, rr$score[i], tolerance = 1e-8, label = paste(meth, rr$lambda_time[i], rr$lambda_unit[i], rr$lambda_nn[i]))
    }
  }
})

test_that("the tuning search makes diff-diff's choices from diff-diff's scores", {
  # the search replayed with diff-diff's scores (each triple it evaluated):
  # the same choice, and no triple diff-diff did not evaluate
  sc <- read.csv("ref-trop-scores.csv", colClasses = c(score = "character"))
  sc$score <- num_col(sc$score)
  ref <- read.csv("ref-trop-search.csv", colClasses = c(score = "character", att = "character"))
  d <- trop_panel()
  pan <- diffdiff:::dd_panel(d, "y", "unit", "time", c(dname = "d"), complete = "TROP")
  for (i in seq_len(nrow(ref))) {
    meth <- ref$method[i]
    g <- lapply(ref[i, c("grid_time", "grid_unit", "grid_nn")], function(s) as.numeric(strsplit(s, " ")[[1]]))
    grids <- list(time = g[[1]], unit = g[[2]], nn = g[[3]])
    s <- sc[sc$method == meth, ]
    asked <- list()
    lookup <- function(l) {
      asked[[length(asked) + 1L]] <<- l
      j <- which(s$lambda_time == l[1] & s$lambda_unit == l[2] & (s$lambda_nn == l[3] | (s$lambda_nn > 1e9 & l[3] > 1e9)))
      expect_length(j, 1L)
      s$score[j[1]]
    }
    m <- diffdiff:::dd_trop_matrices(pan, "d", meth)
    lam <- diffdiff:::dd_trop_search(m, meth, grids, c(100, 1e-6), score_fun = lookup)
    expect_identical(as.numeric(lam), c(ref$lambda_time[i], ref$lambda_unit[i], ref$lambda_nn[i]), label = meth)
    expect_equal(attr(lam, "score"), as.numeric(ref$score[i]), tolerance = 1e-12)
    # the estimate at the chosen parameters
    f <- did_trop(d, "y", "unit", "time", "d", method = meth, lambda_time = lam[1], lambda_unit = lam[2],
                  lambda_nn = lam[3], nboot = 0)
    expect_lt(abs(unname(coef(f)) - as.numeric(ref$att[i])), 1e-6)
  }
  # did_trop() runs the same search (grids without a factor component: fast)
  f <- did_trop(d, "y", "unit", "time", "d", lambda_time_grid = c(0, 0.5, 1), lambda_unit_grid = c(0, 0.5, 1),
                lambda_nn_grid = Inf, nboot = 0)
  lam <- diffdiff:::dd_trop_search(diffdiff:::dd_trop_matrices(pan, "d", "local"), "local",
                                   list(time = c(0, 0.5, 1), unit = c(0, 0.5, 1), nn = Inf), c(100, 1e-6))
  expect_identical(unname(f$lambda), as.numeric(lam))
  expect_equal(f$loocv, attr(lam, "score"))
  sc_inf <- sc[sc$method == "local" & sc$lambda_nn > 1e9, ]
  # each score it could have chosen is at least the chosen one
  expect_true(all(sc_inf$score >= f$loocv - 1e-9 | !(sc_inf$lambda_time %in% c(0, 0.5, 1))))
})

test_that("bootstrap: diff-diff's draws replayed give its replicates, SE, p-value and interval", {
  ref <- read.csv("ref-trop-boot.csv", colClasses = c(att_b = "character", se = "character", p_value = "character",
                                                      ci_low = "character", ci_high = "character", att = "character"))
  d <- trop_panel()
  pan <- diffdiff:::dd_panel(d, "y", "unit", "time", c(dname = "d"), complete = "TROP")
  for (meth in c("local", "global")) {
    r <- ref[ref$method == meth, ]
    m <- diffdiff:::dd_trop_matrices(pan, "d", meth)
    draws <- lapply(seq_len(nrow(r)), function(b)
      list(control = as.integer(strsplit(r$control_draws[b], " ")[[1]]) + 1L,
           treated = as.integer(strsplit(r$treated_draws[b], " ")[[1]]) + 1L))
    lam <- c(r$lambda_time[1], r$lambda_unit[1], r$lambda_nn[1])
    reps <- diffdiff:::dd_trop_boot(m, meth, lam, c(100, 1e-6), draws)
    expect_lt(max(abs(reps - as.numeric(r$att_b))), 1e-6)
    se <- sd(reps)
    expect_equal(se, as.numeric(r$se[1]), tolerance = 1e-6)
    # the t-based inference did_trop reports, from that SE
    att <- as.numeric(r$att[1])
    tab <- diffdiff:::dd_coef_table(c(ATT = att), se, 32 - 1, 0.05)
    expect_equal(tab$p.value, as.numeric(r$p_value[1]), tolerance = 1e-6)
    expect_equal(c(tab$conf.low, tab$conf.high), as.numeric(c(r$ci_low[1], r$ci_high[1])), tolerance = 1e-6)
  }
  # did_trop()'s own bootstrap: reproducible, SE = sd of its replicates,
  # the table uses treated cells - 1 degrees of freedom
  set.seed(5); a <- did_trop(d, "y", "unit", "time", "d", "global", 0.5, 0.5, 0.1, nboot = 30)
  set.seed(5); b <- did_trop(d, "y", "unit", "time", "d", "global", 0.5, 0.5, 0.1, nboot = 30)
  expect_identical(a$replicates, b$replicates)
  expect_equal(a$coeftable$std.error, sd(a$replicates))
  expect_identical(a$df, 31)
  expect_equal(a$coeftable$p.value, 2 * pt(-abs(unname(coef(a)) / sd(a$replicates)), 31))
})

test_that("cores: forked processes give the same numbers bit for bit", {
  skip_on_os("windows")
  d <- trop_panel()
  n0 <- diffdiff:::dd_forks$n
  set.seed(3)
  a <- did_trop(d, "y", "unit", "time", "d", lambda_time_grid = c(0, 1), lambda_unit_grid = 1,
                lambda_nn_grid = c(1, Inf), nboot = 4, cores = 1)
  expect_identical(diffdiff:::dd_forks$n, n0)
  set.seed(3)
  b <- did_trop(d, "y", "unit", "time", "d", lambda_time_grid = c(0, 1), lambda_unit_grid = 1,
                lambda_nn_grid = c(1, Inf), nboot = 4, cores = 2)
  expect_gt(diffdiff:::dd_forks$n, n0)          # the forked path ran
  expect_identical(a$coefficients, b$coefficients)
  expect_identical(a$lambda, b$lambda)
  expect_identical(a$loocv, b$loocv)
  expect_identical(a$replicates, b$replicates)
  expect_identical(a$unit_effects, b$unit_effects)
  expect_identical(a$factor, b$factor)
  expect_error(did_trop(d, "y", "unit", "time", "d", cores = 0), "cores")
})

test_that("TROP special cases: lambda_nn = 0 is one Gauss-Seidel sweep; no factor and uniform weights", {
  d <- trop_panel()
  # lambda_nn = 0, uniform weights: alpha_j = mean of unit j's untreated
  # outcomes, beta_t = mean over untreated cells of (y - alpha_j)
  f <- did_trop(d, "y", "unit", "time", "d", lambda_time = 0, lambda_unit = 0, lambda_nn = 0, nboot = 0)
  u <- d$d == 0
  al <- tapply(d$y[u], d$unit[u], mean)
  be <- tapply((d$y - al[as.character(d$unit)])[u], d$time[u], mean)
  tr <- d[d$d == 1, ]
  tau <- tr$y - al[as.character(tr$unit)] - be[as.character(tr$time)]
  expect_equal(unname(coef(f)), mean(tau), tolerance = 1e-12)
  # global, no factor: the weighted two-way fixed-effects regression
  g <- did_trop(d, "y", "unit", "time", "d", "global", lambda_time = 0, lambda_unit = 0, lambda_nn = Inf, nboot = 0)
  dd <- d[d$d == 0, ]
  fe <- lm(y ~ factor(unit) + factor(time), dd)
  pr <- predict(fe, newdata = tr)
  expect_equal(unname(coef(g)), mean(tr$y - pr), tolerance = 1e-10)
})

test_that("did_trop: invariants and bad input", {
  d <- trop_panel()
  d0 <- d
  f <- did_trop(d, "y", "unit", "time", "d", lambda_time = 0.5, lambda_unit = 0.5, lambda_nn = Inf, nboot = 0)
  # row order and unit labels do not matter
  set.seed(1); s <- d[sample(nrow(d)), ]; s$unit <- paste0("u", s$unit)
  f2 <- did_trop(s, "y", "unit", "time", "d", lambda_time = 0.5, lambda_unit = 0.5, lambda_nn = Inf, nboot = 0)
  expect_equal(coef(f2), coef(f), tolerance = 1e-12)
  expect_identical(d, d0)
  expect_s3_class(f, "dd_fit")
  expect_output(print(f), "Triply robust")
  expect_output(print(f), "Tuning: lambda_time = 0.5, lambda_unit = 0.5, lambda_nn = Inf \\(fixed\\)")
  expect_identical(nrow(tidy(f)), 1L)
  # n_bootstrap (diff-diff's spelling)
  set.seed(2); a <- did_trop(d, "y", "unit", "time", "d", "global", 0.5, 0.5, Inf, n_bootstrap = 5)
  expect_identical(a$nboot, 5L)
  expect_error(did_trop(d, "y", "unit", "time", "d", bogus = 1), "no argument `bogus`")
  # no never-treated unit
  x <- d; x$d[x$time >= 11] <- 1
  expect_error(did_trop(x, "y", "unit", "time", "d", lambda_time = 0, lambda_unit = 0, lambda_nn = Inf, nboot = 0),
               "at least one never-treated unit")
  # not absorbing
  x <- d; x$d[x$unit == x$unit[x$d == 1][1] & x$time == 12] <- 0
  expect_error(did_trop(x, "y", "unit", "time", "d", nboot = 0), "switches off again for unit")
  # too few pre-periods
  x <- d; x$d[x$unit %in% unique(x$unit[x$d == 1]) & x$time >= 2] <- 1
  expect_error(did_trop(x, "y", "unit", "time", "d", nboot = 0), "at least 2 pre-treatment periods")
  # no treated cell; not 0/1
  x <- d; x$d <- 0
  expect_error(did_trop(x, "y", "unit", "time", "d", nboot = 0), "no treated cells")
  x <- d; x$d[1] <- 2
  expect_error(did_trop(x, "y", "unit", "time", "d", nboot = 0), "must be 0/1")
  # global with staggered adoption
  st <- trop_panel("trop-panel-30x12-stag.csv")
  expect_error(did_trop(st, "y", "unit", "time", "d", "global", nboot = 0), "one adoption period")
  # missing outcome / unbalanced
  x <- d; x$y[5] <- NA
  expect_error(did_trop(x, "y", "unit", "time", "d", nboot = 0), "missing or non-finite")
  expect_error(did_trop(d[-5, ], "y", "unit", "time", "d", nboot = 0), "unbalanced")
  # tuning parameters and settings
  expect_error(did_trop(d, "y", "unit", "time", "d", lambda_time = -1), "`lambda_time` must be one number >= 0")
  expect_error(did_trop(d, "y", "unit", "time", "d", lambda_unit = Inf), "`lambda_unit` must be one number >= 0")
  expect_error(did_trop(d, "y", "unit", "time", "d", lambda_nn_grid = numeric()), "`lambda_nn_grid` must be numbers")
  expect_error(did_trop(d, "y", "unit", "time", "d", nboot = 1), "`nboot` = 1")
  expect_error(did_trop(d, "y", "unit", "time", "d", tol = 0), "`tol`")
  expect_error(did_trop(d, "y", "unit", "time", "d", method = "both"), "method")
})
