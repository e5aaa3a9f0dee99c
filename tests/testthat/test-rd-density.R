# rd_density() against rddensity 3.0 (rddensity() with rdbwdensity()'s
# bandwidths; peer: rddensity, data rdrobust_RDsenate from rdrobust) on the
# Senate margin and three simulated designs: the test statistic, p-value,
# densities left and right, their standard errors and the bandwidths, all
# to 1e-8 relative (measured: at most about 1e-9; rounding in the ill-
# conditioned bias fits of order p + 2), except with q = 4 (p = 3): there
# the Gram matrix of the order-4 fit has condition numbers near 1e6-1e7 and
# rddensity's own rounding (solve() on crossprod()) moves its jackknife SEs
# by up to 2e-8 relative from a QR-based reference, which rd_density() meets
# to 1e-10 (tested below), so those comparisons are at 1e-7 relative
# (measured: at most 7.3e-8, the p-value). Then invariants, ties at the
# cutoff, bad input and the methods.

# rddensity's numbers for the same call, as one named vector
rdd_peer <- function(X, ...) {
  r <- suppressWarnings(rddensity::rddensity(X, ...))
  jk <- identical(r$opt$vce, "jackknife")
  se <- if (jk) r$sd_jk else r$sd_asy
  c(T = if (jk) r$test$t_jk else r$test$t_asy, p = if (jk) r$test$p_jk else r$test$p_asy,
    f_l = r$hat$left, f_r = r$hat$right, se_l = se$left, se_r = se$right, se_d = se$diff,
    h_l = r$h$left, h_r = r$h$right, N_h_l = r$N$eff_left, N_h_r = r$N$eff_right)
}
rdd_ours <- function(fit) {
  e <- fit$estimates
  c(T = fit$statistic, p = fit$p.value, f_l = e$estimate[1], f_r = e$estimate[2], se_l = e$std.error[1],
    se_r = e$std.error[2], se_d = e$std.error[3], h_l = fit$h[["left"]], h_r = fit$h[["right"]],
    N_h_l = fit$N_h_l, N_h_r = fit$N_h_r)
}
# largest relative difference (NA against NA counts as equal)
rdd_reldiff <- function(a, b) {
  expect_identical(is.na(a), is.na(b))
  k <- !is.na(a) & !is.na(b)
  max(0, abs(a[k] - b[k]) / pmax(abs(b[k]), 1e-300))
}
rdd_check <- function(d, xname, ..., tol = NULL) {
  fit <- suppressMessages(rd_density(d, xname, ...))
  args <- list(...)
  if (is.null(tol)) tol <- if (fit$q >= 4L) 1e-7 else 1e-8
  args$X <- d[[xname]]
  ren <- c(masspoints = "massPoints", nlocalmin = "nLocalMin", nuniquemin = "nUniqueMin")   # rddensity's spellings
  hit <- names(args) %in% names(ren)
  names(args)[hit] <- ren[names(args)[hit]]
  peer <- do.call(rdd_peer, args)
  rd <- rdd_reldiff(rdd_ours(fit), peer)
  expect_lt(rd, tol)                       # 1e-8 relative (q = 4: 1e-7): T, p, densities, SEs, bandwidths
  invisible(rd)
}

rdd_sims <- function() {
  set.seed(20240611)
  smooth <- data.frame(x = rnorm(1500, 0.2, 1))
  jump <- data.frame(x = c(rnorm(1200, -0.3, 1), runif(400, 0, 0.8)))          # a jump in the density at 0
  ties <- data.frame(x = round(runif(2500, 0, 4) + rnorm(2500, 0, 0.3), 1))  # mass points, cutoff 1.5
  list(smooth = smooth, jump = jump, ties = ties)
}

test_that("rd_density equals rddensity on the Senate margin for every p, kernel, vce, fitselect and bwselect", {
  need_peer("rddensity"); need_peer("rdrobust")
  data(rdrobust_RDsenate, package = "rdrobust", envir = environment())
  d <- rdrobust_RDsenate
  worst <- 0
  for (vce in c("jackknife", "plugin")) for (fs in c("unrestricted", "restricted"))
    for (k in c("triangular", "epanechnikov", "uniform")) for (p in 1:3)
      for (bw in if (fs == "restricted") c("comb", "diff", "sum") else c("comb", "each", "diff", "sum"))
        worst <- max(worst, rdd_check(d, "margin", p = p, kernel = k, fitselect = fs, vce = vce, bwselect = bw))
  expect_lt(worst, 1e-7)
  # the default call's numbers (rddensity 3.0, rdrobust_RDsenate$margin):
  # h = (19.84111, 27.11879), as tools/notes/rdrobust-spec.md section 9
  fit <- suppressMessages(rd_density(d, "margin"))
  expect_equal(unname(fit$h), c(19.84111, 27.11879), tolerance = 1e-6)
  expect_identical(c(fit$N, fit$N_l, fit$N_r), c(1390L, 640L, 750L))
})

test_that("rd_density equals rddensity on simulated designs (smooth, jump, mass points with c = 1.5)", {
  need_peer("rddensity")
  s <- rdd_sims()
  worst <- 0
  for (nm in names(s)) {
    cc <- if (nm == "ties") 1.5 else 0
    for (p in 1:3) for (k in c("triangular", "epanechnikov", "uniform")) for (vce in c("jackknife", "plugin"))
      for (fs in c("unrestricted", "restricted"))
        worst <- max(worst, rdd_check(s[[nm]], "x", c = cc, p = p, kernel = k, vce = vce, fitselect = fs))
    for (bw in c("each", "diff", "sum"))
      worst <- max(worst, rdd_check(s[[nm]], "x", c = cc, bwselect = bw))
  }
  expect_lt(worst, 1e-7)
  # mass points switched off, q above p + 1, no regularisation, other floors
  worst <- max(rdd_check(s$ties, "x", c = 1.5, masspoints = FALSE),
               rdd_check(s$ties, "x", c = 1.5, masspoints = FALSE, vce = "plugin", fitselect = "restricted"),
               rdd_check(s$smooth, "x", p = 1, q = 3),
               rdd_check(s$jump, "x", regularize = FALSE),
               rdd_check(s$jump, "x", nlocalmin = 40, nuniquemin = 0),
               rdd_check(s$ties, "x", c = 1.5, nlocalmin = 0, nuniquemin = 30))
  expect_lt(worst, 1e-8)
})

test_that("rd_density equals rddensity with user bandwidths (one and two)", {
  need_peer("rddensity")
  s <- rdd_sims()
  worst <- 0
  for (p in 1:3) for (k in c("triangular", "epanechnikov", "uniform")) for (vce in c("jackknife", "plugin")) {
    worst <- max(worst, rdd_check(s$jump, "x", p = p, kernel = k, vce = vce, h = 0.6),
                 rdd_check(s$jump, "x", p = p, kernel = k, vce = vce, h = c(0.5, 0.7)),
                 rdd_check(s$ties, "x", c = 1.5, p = p, kernel = k, vce = vce, h = c(0.8, 1.1)),
                 rdd_check(s$smooth, "x", p = p, kernel = k, vce = vce, h = 0.9, fitselect = "restricted"))
  }
  expect_lt(worst, 1e-7)
  fit <- rd_density(s$jump, "x", h = c(0.5, 0.7))
  expect_identical(fit$h_source, "user")
  expect_null(fit$bandwidths)
})

test_that("rd_density's jackknife SEs with q = 4 meet a QR-based computation to 1e-9", {
  # the mass-point design at h = (0.8, 1.1), c = 1.5, p = 3 (q = 4), where
  # rddensity differs by 1.7e-8: the same variance from the QR factor of
  # the weighted design (no Gram matrix formed), mass-point rows as rddensity
  s <- rdd_sims(); d <- s$ties; c0 <- 1.5; hl <- 0.8; hr <- 1.1; P <- 4
  X <- sort(d$x); N <- length(X)
  last <- cumsum(rle(X)$lengths); Fh <- (rep(last, rle(X)$lengths) - 1) / (N - 1)
  x <- X - c0; k <- x >= -hl & x <= hr; x <- x[k]
  L <- x < 0; w <- ifelse(L, (1 + x / hl) / hl, (1 - x / hr) / hr)
  B <- cbind(outer(ifelse(L, x / hl, 0), 0:P, `^`) * L, outer(ifelse(L, 0, x / hr), 0:P, `^`) * (!L))
  B <- B[, c(rbind(1:(P + 1), (P + 2):(2 * P + 2)))]
  sc <- c(rbind(hl^(0:P), hr^(0:P)))
  Ri <- backsolve(qr.R(qr(sqrt(w) * B)), diag(ncol(B)))
  Lm <- apply(w * B, 2, function(v) c(rev(cumsum(rev(v)))[-1], 0)) / (N - 1)
  g <- match(x, unique(x)); Lm <- Lm[match(g, g), , drop = FALSE]
  G <- crossprod(Ri, t(Lm))
  V <- (Ri %*% tcrossprod(G) %*% t(Ri)) / outer(sc, sc)
  ref <- sqrt(c(V[3, 3], V[4, 4], V[3, 3] + V[4, 4] - 2 * V[3, 4]))
  fit <- rd_density(d, "x", c = c0, p = 3, h = c(hl, hr))
  expect_lt(max(abs(fit$estimates$std.error / ref - 1)), 1e-9)    # measured 5.6e-11
})

test_that("rd_density: row order, the caller's data and a shift of x and c together", {
  s <- rdd_sims()
  d <- s$ties
  before <- data.frame(d)
  a <- rd_density(d, "x", c = 1.5)
  expect_identical(d, before)
  set.seed(5)
  b <- rd_density(d[sample(nrow(d)), , drop = FALSE], "x", c = 1.5)
  expect_identical(a$estimates, b$estimates)
  expect_identical(a$h, b$h)
  sh <- data.frame(x = d$x + 0.25)        # exact in binary: the shifted values keep their ties
  m <- rd_density(sh, "x", c = 1.75)
  expect_equal(m$statistic, a$statistic, tolerance = 1e-8)
  expect_equal(unname(m$h), unname(a$h), tolerance = 1e-8)
  expect_identical(c(m$N_l, m$N_r, m$N_h_l, m$N_h_r), c(a$N_l, a$N_r, a$N_h_l, a$N_h_r))
})

test_that("rd_density: observations at the cutoff count on the right, as in rddensity", {
  need_peer("rddensity")
  set.seed(9)
  d <- data.frame(x = c(round(rnorm(800), 2), rep(0, 25)))
  fit <- rd_density(d, "x")
  expect_identical(fit$N_l, sum(d$x < 0))
  expect_identical(fit$N_r, sum(d$x >= 0))
  expect_true(fit$masspoints_used)
  expect_lt(rdd_check(d, "x"), 1e-8)
  expect_lt(rdd_check(d, "x", h = c(0.4, 0.4), fitselect = "restricted"), 1e-8)
})

test_that("rd_density: missing running-variable values are dropped with a message", {
  s <- rdd_sims()
  d <- s$smooth
  d$x[c(3, 10, 200)] <- NA
  expect_message(fit <- rd_density(d, "x"), "Dropped 3 rows with missing values in x")
  expect_identical(fit$n_dropped, 3L)
  expect_equal(fit$statistic, rd_density(d[!is.na(d$x), , drop = FALSE], "x")$statistic)
})

test_that("rd_density: bad input names the argument and the value", {
  s <- rdd_sims()
  d <- s$smooth
  d$txt <- as.character(d$x)
  expect_error(rd_density(d, "nope"), "`xname` = \"nope\" is not a column of `data`")
  expect_error(rd_density(d, "txt"), "xname")
  expect_error(rd_density(data.frame(x = rep(1, 50)), "x", c = 1), "is constant")
  expect_error(rd_density(d, "x", c = 100), "cutoff `c` = 100 is not inside the range")
  expect_error(rd_density(d, "x", c = NA), "`c` \\(the cutoff\\) must be one finite number")
  expect_error(rd_density(data.frame(x = c(-(1:3), 1:100)), "x"), "has 3 distinct values below the cutoff")
  expect_error(rd_density(d, "x", p = 0), "`p` must be a whole number from 1 to 7; got 0")
  expect_error(rd_density(d, "x", p = 1.5), "`p` must be a whole number")
  expect_error(rd_density(d, "x", p = 2, q = 1), "`q` must be a whole number from 2 to 10; got 1")
  expect_error(rd_density(d, "x", kernel = "gaussian"), "`kernel` must be one of")
  expect_error(rd_density(d, "x", h = -1), "`h` must be NULL, one positive bandwidth or two")
  expect_error(rd_density(d, "x", h = c(1, 2, 3)), "`h` must be NULL")
  expect_error(rd_density(d, "x", h = c(1, NA)), "`h` must be NULL")
  expect_error(rd_density(d, "x", h = c(0.5, 0.7), fitselect = "restricted"), "needs one bandwidth for both sides")
  expect_error(rd_density(d, "x", fitselect = "restricted", bwselect = "each"), "`bwselect` = \"each\"")
  expect_error(rd_density(d, "x", vce = "hc1"), "`vce` must be one of \"jackknife\", \"plugin\"; got \"hc1\"")
  expect_error(rd_density(d, "x", bwselect = "cer"), "`bwselect` must be one of")
  expect_error(rd_density(d, "x", masspoints = NA), "`masspoints` must be TRUE or FALSE")
  expect_error(rd_density(d, "x", alpha = 2), "`alpha` must be a number strictly between 0 and 1")
  expect_error(rd_density(d, "x", h = 1e-4), "the order-3 fit \\(`q`\\) needs 4 on each side")
  expect_error(rd_density(d), "`xname` \\(the running-variable column\\) is missing")
  expect_identical(rd_density(d, "x", kernel = "TRI")$kernel, "triangular")
})

test_that("rd_density methods on the default fit: print, summary, tidy, glance, plot, autoplot", {
  s <- rdd_sims()
  fit <- rd_density(s$jump, "x")
  expect_s3_class(fit, "rd_density")
  expect_output(print(fit), "Manipulation test")
  expect_output(print(fit), "Continuity test")
  expect_output(print(summary(fit)), "Bandwidth selector")
  td <- tidy(fit)
  expect_identical(td$term, c("left", "right", "difference"))
  expect_identical(names(td), c("term", "estimate", "std.error", "statistic", "p.value", "conf.low", "conf.high"))
  expect_equal(td$statistic[3], fit$statistic)
  expect_equal(td$estimate[3], td$estimate[2] - td$estimate[1])
  gl <- glance(fit)
  expect_identical(nrow(gl), 1L)
  expect_true(all(c("statistic", "p.value", "h_left", "h_right", "N_left", "N_right") %in% names(gl)))
  expect_lt(fit$p.value, 0.05)                      # the design has a jump
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off(), add = TRUE)
  expect_identical(plot(fit), fit)
  expect_identical(plot(fit, hist = FALSE, n_grid = 10, level = 0.9), fit)
  expect_error(plot(fit, range = c(1, 2)), "`range` must be two numbers on either side of the cutoff")
  expect_error(print(fit, foo = 1), "does not use")
  skip_if_not_installed("ggplot2")
  p <- ggplot2::autoplot(fit)
  expect_s3_class(p, "ggplot")
  expect_silent(ggplot2::ggplot_build(p))
})
