# did_lwdid(): the rolling transformations and cell regressions against lm()
# by hand (reference numbers computed in the test itself: per-unit demeaning /
# lm(y ~ year) detrending on the cohort's pre-periods, then lm() on the cell,
# classical and CR1 standard errors from summary(lm) and the sandwich formula;
# 1e-10), invariants, bad input and the caller's data. Published reference
# numbers are in test-parity-lwdid.R.

lw_sim <- function(n = 60, T = 8, cohorts = c(4, 6), seed = 3, unbalanced = FALSE) {
  set.seed(seed)
  d <- expand.grid(year = 2000 + seq_len(T), id = seq_len(n))
  gu <- rep(c(0, 2000 + cohorts), length.out = n)
  d$g <- gu[d$id]
  a <- rnorm(n); b <- rnorm(n, 0, 0.2); x <- rnorm(n)
  d$x <- x[d$id]; d$cl <- d$id %% 9
  d$y <- a[d$id] + b[d$id] * (d$year - 2000) + 0.5 * d$x + (d$g > 0 & d$year >= d$g) * (1 + 0.3 * (d$year - d$g)) +
    rnorm(nrow(d))
  if (unbalanced) d <- d[-c(5, 17, 40, 101), ]
  d
}

# the transform by hand: unit by unit, lm on the pre-periods
lw_hand_transform <- function(d, g, how) {
  do.call(rbind, lapply(split(d, d$id), function(u) {
    pre <- u[u$year < g, ]
    u$yd <- if (how == "demean") u$y - mean(pre$y) else u$y - predict(lm(y ~ year, pre), newdata = u)
    u
  }))
}

lw_hand_cell <- function(d, g, t, how, nyt = TRUE, X = FALSE, cluster = FALSE) {
  u <- lw_hand_transform(d, g, how)
  u <- u[u$year == t & (u$g == g | u$g == 0 | (nyt & u$g > max(g, t))), ]
  u$D <- as.numeric(u$g == g)
  if (X) {
    u$xc <- u$x - mean(u$x[u$D == 1])
    m <- lm(yd ~ D + x + D:xc, u)
  } else m <- lm(yd ~ D, u)
  se <- if (!cluster) summary(m)$coefficients["D", 2] else {
    Z <- model.matrix(m); e <- resid(m); A <- solve(crossprod(Z))
    G <- length(unique(u$cl)); n <- nrow(Z); k <- ncol(Z)
    s <- rowsum(Z * e, u$cl); sqrt((A %*% crossprod(s) %*% A)["D", "D"] * G / (G - 1) * (n - 1) / (n - k))
  }
  c(coef(m)[["D"]], se)
}

lw_cell <- function(f, g, t) unlist(f$cells[f$cells$group == g & f$cells$time == t, c("estimate", "std.error")])

test_that("demeaned and detrended cells equal lm by hand (estimates and classical SEs, 1e-10)", {
  d <- lw_sim()
  for (how in c("demean", "detrend")) for (cg in c("not_yet_treated", "never_treated")) {
    f <- did_lwdid(d, "y", "id", "year", "g", transformation = how, control_group = cg)
    for (gt in list(c(2004, 2004), c(2004, 2007), c(2006, 2001), c(2006, 2008), c(2004, 2001)))
      expect_equal(unname(lw_cell(f, gt[1], gt[2])),
                   unname(lw_hand_cell(d, gt[1], gt[2], how, cg == "not_yet_treated")), tolerance = 1e-10,
                   label = sprintf("%s %s cell (%d, %d)", how, cg, gt[1], gt[2]))
    refs <- if (how == "demean") 2005 else c(2004, 2005)
    expect_false(any(f$cells$group == 2006 & f$cells$time %in% refs))
  }
})

test_that("covariates (interacted at the treated mean) and CR1 clustering equal lm by hand", {
  d <- lw_sim(n = 90)
  f <- did_lwdid(d, "y", "id", "year", "g", ~x)
  expect_equal(unname(lw_cell(f, 2004, 2006)), unname(lw_hand_cell(d, 2004, 2006, "demean", X = TRUE)), tolerance = 1e-10)
  fc <- did_lwdid(d, "y", "id", "year", "g", cluster = "cl", transformation = "detrend")
  expect_equal(unname(lw_cell(fc, 2006, 2007)), unname(lw_hand_cell(d, 2006, 2007, "detrend", cluster = TRUE)),
               tolerance = 1e-10)
  expect_equal(fc$cells$df[1], 8)
})

test_that("unbalanced panels: each unit's transform uses its own observed pre-periods", {
  d <- lw_sim(unbalanced = TRUE)
  f <- did_lwdid(d, "y", "id", "year", "g", transformation = "detrend")
  expect_equal(unname(lw_cell(f, 2006, 2008)), unname(lw_hand_cell(d, 2006, 2008, "detrend")), tolerance = 1e-10)
})

test_that("common timing: ATT is lm of the post-period mean on D (exact t), event rows the per-period cells", {
  d <- lw_sim(cohorts = 5)
  for (how in c("demean", "detrend")) {
    f <- did_lwdid(d, "y", "id", "year", "g", transformation = how)
    expect_true(f$common_timing)
    u <- lw_hand_transform(d, 2005, how)
    u <- u[u$year >= 2005, ]
    yb <- tapply(u$yd, u$id, mean); D <- as.numeric(tapply(u$g, u$id, max) > 0)
    m <- summary(lm(yb ~ D))$coefficients
    expect_equal(unname(unlist(f$coeftable[1, c("estimate", "std.error", "p.value")])), unname(m["D", c(1, 2, 4)]),
                 tolerance = 1e-10)
    expect_equal(unname(f$df[["ATT"]]), length(yb) - 2)
    e2 <- f$coeftable[f$coeftable$term == "event::2", ]
    expect_equal(c(e2$estimate, e2$std.error), unname(lw_hand_cell(d, 2005, 2007, how)), tolerance = 1e-10)
  }
  # demean + ra without covariates is the 2x2 DiD of pre/post means
  f <- did_lwdid(d, "y", "id", "year", "g")
  mm <- with(d, tapply(y, list(id, year >= 2005), mean))
  D <- tapply(d$g, d$id, max) > 0
  dd <- mean(mm[D, 2] - mm[D, 1]) - mean(mm[!D, 2] - mm[!D, 1])
  expect_equal(coef(f)[["ATT"]], dd, tolerance = 1e-10)
})

test_that("aggregates are the n-treated-weighted cell combinations with the joint influence-function covariance", {
  d <- lw_sim()
  f <- did_lwdid(d, "y", "id", "year", "g")
  c0 <- f$cells[f$cells$event == 0, ]
  expect_equal(coef(f)[["event::0"]], sum(c0$estimate * c0$n_treated) / sum(c0$n_treated), tolerance = 1e-12)
  ch <- f$cells[f$cells$group == 2004 & f$cells$event >= 0, ]
  expect_equal(coef(f)[["cohort::2004"]], mean(ch$estimate), tolerance = 1e-12)
  expect_equal(coef(f)[["ATT"]], (20 * coef(f)[["cohort::2004"]] + 20 * coef(f)[["cohort::2006"]]) / 40,
               tolerance = 1e-12)
  # a one-cell row keeps its cell's standard error and t degrees of freedom
  e4 <- f$coeftable[f$coeftable$term == "event::4", ]
  cc <- f$cells[f$cells$event == 4, ]
  expect_equal(nrow(cc), 1L)
  expect_equal(e4$std.error, cc$std.error, tolerance = 1e-12)
  expect_equal(unname(f$df[["event::4"]]), cc$df)
  expect_equal(unname(sqrt(diag(vcov(f)))), f$coeftable$std.error, tolerance = 1e-12)
  # the event study component: honest_did(), pretrends_power() and plot() read
  # it; its estimates are relative to the units' pre-treatment means, with no
  # reference period normalised to zero (the omitted -1 is not zero), which
  # the diagnostics say
  expect_s3_class(f$event_study, "dd_event_study")
  expect_identical(f$event_study$reference, numeric())
  expect_identical(f$event_study$base_period, "transformation")
  expect_no_error(plot(f))
  expect_warning(pretrends_power(f, power = 0.8), "pre-treatment mean or trend")
  expect_warning(honest_did(f, type = "SD", M = c(0, 0.1)), "not to one reference period")
})

test_that("ipw, dr and psm: estimates by hand; dr with no covariate effect on the logit equals ra-like weighting", {
  d <- lw_sim(n = 120)
  f <- did_lwdid(d, "y", "id", "year", "g", ~x, est_method = "ipw", control_group = "never_treated")
  u <- lw_hand_transform(d, 2004, "demean")
  u <- u[u$year == 2006 & u$g %in% c(0, 2004), ]
  D <- as.numeric(u$g == 2004)
  p <- fitted(glm(D ~ x, binomial(), data = u))
  w <- p / (1 - p)
  ipw <- mean(u$yd[D == 1]) - sum((w * u$yd)[D == 0]) / sum(w[D == 0])
  expect_equal(unname(lw_cell(f, 2004, 2006)[1]), ipw, tolerance = 1e-8)
  fd <- did_lwdid(d, "y", "id", "year", "g", ~x, est_method = "dr", control_group = "never_treated")
  xc <- u$x - mean(u$x[D == 1])
  dr <- coef(lm(yd ~ D + xc + D:xc, u, weights = ifelse(D == 1, 1, w)))[["D"]]
  expect_equal(unname(lw_cell(fd, 2004, 2006)[1]), dr, tolerance = 1e-8)
  expect_true(all(is.finite(fd$coeftable$std.error)))
  fp <- did_lwdid(d, "y", "id", "year", "g", ~x, est_method = "psm")
  expect_true(all(is.na(fp$coeftable$std.error)))
  expect_true(all(is.finite(fp$coeftable$estimate)))
})

test_that("randomisation inference and the wild bootstrap are reproducible under set.seed()", {
  d <- lw_sim(n = 40, cohorts = 5)
  set.seed(1); a <- did_lwdid(d, "y", "id", "year", "g", nperm = 199, nboot = 99, cluster = "cl")
  set.seed(1); b <- did_lwdid(d, "y", "id", "year", "g", nperm = 199, nboot = 99, cluster = "cl")
  expect_identical(a$ri, b$ri)
  expect_false(a$ri$exact)
  expect_identical(a$coeftable$boot.p.value, b$coeftable$boot.p.value)
  expect_true(is.finite(a$coeftable$boot.p.value[1]))
  expect_identical(a$wild_boot$G, 9L)
  # small designs: exact enumeration (choose(6, 2) = 15 assignments)
  s <- d[d$id %in% c(1:4, 6, 11) & (d$g == 0 | d$id %in% c(2, 4)), ]
  s <- d[d$id %in% c(1, 2, 4, 7, 10, 13), ]
  r <- did_lwdid(s, "y", "id", "year", "g", nperm = 100)$ri
  expect_true(r$exact)
  expect_identical(r$n_assignments, as.integer(choose(6, sum(tapply(s$g, s$id, max) > 0))))
  # staggered: the multiplier bootstrap with a uniform band over event times
  set.seed(2); m <- did_lwdid(lw_sim(), "y", "id", "year", "g", nboot = 199, cband = TRUE)
  expect_true(is.finite(m$event_study$crit))
})

test_that("row order and relabelled identifiers do not change the numbers", {
  d <- lw_sim(unbalanced = TRUE)
  f0 <- did_lwdid(d, "y", "id", "year", "g", ~x, cluster = "cl")
  set.seed(5); d2 <- d[sample(nrow(d)), ]
  f1 <- did_lwdid(d2, "y", "id", "year", "g", ~x, cluster = "cl")
  expect_identical(f1$coeftable, f0$coeftable)
  d3 <- d; d3$id <- paste0("u", 1000 - d3$id)
  f2 <- did_lwdid(d3, "y", "id", "year", "g", ~x, cluster = "cl")
  expect_equal(f2$coeftable, f0$coeftable, tolerance = 1e-12)
  expect_equal(f2$cells, f0$cells, tolerance = 1e-12)
})

test_that("bad input: errors name the argument and the value; the caller's data is unchanged", {
  d <- lw_sim()
  d0 <- d
  expect_error(did_lwdid(d, "y", "id", "year", "g", transformation = "demeanq"), "transformation.*demeanq")
  expect_error(did_lwdid(d, "y", "id", "year", "g", est_method = "ipw"), "est_method.*ipw.*xformla")
  expect_error(did_lwdid(d, "y", "id", "year", "g", control_group = "last"), "control_group.*last")
  expect_error(did_lwdid(d, "y", "id", "year", "g", nperm = 99), "nperm.*99")
  expect_error(did_lwdid(d, "y", "id", "year", "g", vcov = "HC3"), "vcov.*HC3")
  dx <- d; dx$x <- rnorm(nrow(dx))
  expect_error(did_lwdid(dx, "y", "id", "year", "g", ~x), "xformla|x")
  dg <- d; dg$g[dg$g == 2004] <- 2004.5
  expect_error(did_lwdid(dg, "y", "id", "year", "g"), "gname.*2004.5")
  expect_error(did_lwdid(d, "y", "id", "year", "g", foo = 1), "foo")
  expect_error(did_lwdid(d[d$g != 0 | d$id > 0, ], "y", "id", "year", "g", est_method = "psm", ~x, nboot = 9),
               "psm")
  expect_identical(d, d0)
})

test_that("cohorts without enough pre-periods (or treated before the data) are skipped with a note", {
  d <- lw_sim(cohorts = c(2, 5))
  d$g[d$g == 2002] <- 1990                     # treated before the data start
  f <- did_lwdid(d, "y", "id", "year", "g")
  expect_identical(f$cohorts, 2005)
  expect_true(any(grepl("1990", f$notes)))
  d2 <- lw_sim(cohorts = c(2, 5))
  fd <- did_lwdid(d2, "y", "id", "year", "g", transformation = "detrend")
  expect_identical(fd$cohorts, 2005)
  expect_true(any(grepl("2002", fd$notes)))
})
