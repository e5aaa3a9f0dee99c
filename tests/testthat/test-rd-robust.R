# rd_robust() without its peer: the estimator written out by hand with
# dense matrices (uniform kernel, HC0; triangular with weights, HC1; CR1
# clusters; covariates), identities of the local-polynomial estimator,
# invariants, bad input and every method. (Parity with rdrobust is in
# test-parity-rd.R.)

rd_dgp <- function(n = 1500, seed = 3) {
  set.seed(seed)
  x <- runif(n, -1, 1)
  z <- rnorm(n) + 0.5 * x
  t <- as.numeric(runif(n) < 0.2 + 0.6 * (x >= 0))
  data.frame(x = x, z = z, t = t, g = sample(1:40, n, replace = TRUE), w = runif(n, 0.5, 2),
             y = 1 + 0.7 * x - 0.5 * x^2 + 0.4 * (x >= 0) + 0.3 * z + rnorm(n, sd = 0.3 + 0.2 * abs(x)))
}

# one side by hand: weighted LS of order p at h, order q at b; the
# conventional and bias-corrected intercepts and their sandwich variances
# with residuals from the side's own fits (hc0 or hc1) or cluster sums (cr1)
rd_side_hand <- function(x, y, h, b, p, q, kern, fw = 1, vce = "hc0", g = NULL) {
  K <- function(u) switch(kern, uni = 0.5 * (abs(u) <= 1), tri = pmax(1 - abs(u), 0))
  wh <- fw * K(x / h) / h; wb <- fw * K(x / b) / b
  keep <- if (h > b) wh > 0 else wb > 0
  x <- x[keep]; y <- y[keep]; wh <- wh[keep]; wb <- wb[keep]; n <- length(x)
  Rp <- outer(x, 0:p, `^`); Rq <- outer(x, 0:q, `^`)
  Gp <- solve(crossprod(Rp, wh * Rp)); Gq <- solve(crossprod(Rq, wb * Rq))
  bp <- Gp %*% crossprod(Rp, wh * y); bq <- Gq %*% crossprod(Rq, wb * y)
  ell <- crossprod(Rp, wh * (x / h)^(p + 1))
  Q <- wh * Rp - h^(p + 1) * outer(wb * (Rq %*% Gq)[, p + 2], drop(ell))
  bbc <- Gp %*% crossprod(Q, y)
  ep <- drop(y - Rp %*% bp); eq <- drop(y - Rq %*% bq)
  if (vce == "hc1") { ep <- ep * sqrt(n / (n - p - 1)); eq <- eq * sqrt(n / (n - q - 1)) }
  S1 <- ep * wh * Rp; S2 <- eq * Q
  f1 <- f2 <- 1
  if (!is.null(g)) {
    g <- g[keep]; G <- length(unique(g))
    S1 <- rowsum(S1, g); S2 <- rowsum(S2, g)
    f1 <- (n - 1) / (n - p - 1) * G / (G - 1); f2 <- (n - 1) / (n - q - 1) * G / (G - 1)
  }
  list(cl = bp[1], bc = bbc[1], vcl = f1 * (Gp %*% crossprod(S1) %*% Gp)[1, 1],
       vrb = f2 * (Gp %*% crossprod(S2) %*% Gp)[1, 1])
}

rd_hand <- function(d, h, b, p = 1, q = 2, kern = "uni", fw = NULL, vce = "hc0", g = NULL) {
  l <- d$x < 0
  L <- rd_side_hand(d$x[l], d$y[l], h, b, p, q, kern, if (is.null(fw)) 1 else fw[l], vce, g[l])
  R <- rd_side_hand(d$x[!l], d$y[!l], h, b, p, q, kern, if (is.null(fw)) 1 else fw[!l], vce, g[!l])
  c(R$cl - L$cl, R$bc - L$bc, sqrt(L$vcl + R$vcl), sqrt(L$vrb + R$vrb))
}

rd_nums <- function(f) c(f$coeftable$estimate[1:2], f$coeftable$std.error[c(1, 3)])

test_that("rd_robust equals the estimator written out with dense matrices", {
  d <- rd_dgp()
  expect_equal(rd_nums(rd_robust(d, "y", "x", h = 0.4, b = 0.7, kernel = "uniform", vce = "hc0")),
               rd_hand(d, 0.4, 0.7), tolerance = 1e-10)
  expect_equal(rd_nums(rd_robust(d, "y", "x", h = 0.6, b = 0.45, kernel = "uni", vce = "hc0", p = 2, q = 3)),
               rd_hand(d, 0.6, 0.45, 2, 3), tolerance = 1e-10)
  expect_equal(rd_nums(rd_robust(d, "y", "x", h = 0.5, b = 0.8, kernel = "tri", vce = "hc1", weightsname = "w")),
               rd_hand(d, 0.5, 0.8, kern = "tri", fw = d$w, vce = "hc1"), tolerance = 1e-10)
  expect_equal(rd_nums(rd_robust(d, "y", "x", h = 0.5, b = 0.8, kernel = "tri", cluster = "g")),
               rd_hand(d, 0.5, 0.8, kern = "tri", g = d$g), tolerance = 1e-10)
})

test_that("covariates: the jump of y - z'gamma with the pooled partialled gamma", {
  d <- rd_dgp()
  f <- rd_robust(d, "y", "x", covs = ~ z, h = 0.5, b = 0.5, kernel = "uni", vce = "hc0")
  # gamma by hand: z and y partialled on each side's order-1 fit in the h window, pooled
  part <- function(v, s) {
    i <- s & abs(d$x) <= 0.5
    stats::resid(stats::lm(v[i] ~ d$x[i]))
  }
  zl <- part(d$z, d$x < 0); zr <- part(d$z, d$x >= 0)
  yl <- part(d$y, d$x < 0); yr <- part(d$y, d$x >= 0)
  gam <- sum(c(zl, zr) * c(yl, yr)) / sum(c(zl, zr)^2)
  expect_equal(f$coef_covs[1, 1], gam, tolerance = 1e-10)
  d2 <- d; d2$y <- d$y - gam * d$z
  f2 <- rd_robust(d2, "y", "x", h = 0.5, b = 0.5, kernel = "uni", vce = "hc0")
  expect_equal(f$coeftable$estimate, f2$coeftable$estimate, tolerance = 1e-10)
})

test_that("identities: h = b makes the bias-corrected estimate the order-q estimate; fuzzy is the ratio", {
  d <- rd_dgp()
  a <- rd_robust(d, "y", "x", h = 0.5, vce = "hc1")
  b2 <- rd_robust(d, "y", "x", h = 0.5, p = 2, q = 3, vce = "hc1")
  expect_equal(a$coeftable$estimate[2], b2$coeftable$estimate[1], tolerance = 1e-10)
  f <- rd_robust(d, "y", "x", fuzzy = "t", h = 0.5, b = 0.7)
  ry <- rd_robust(d, "y", "x", h = 0.5, b = 0.7)
  rt <- rd_robust(d, "t", "x", h = 0.5, b = 0.7)
  expect_equal(f$coeftable$estimate[1], ry$coeftable$estimate[1] / rt$coeftable$estimate[1], tolerance = 1e-12)
  expect_equal(f$first_stage$estimate, rt$coeftable$estimate, tolerance = 1e-12)
  expect_equal(f$first_stage$std.error, rt$coeftable$std.error, tolerance = 1e-12)
  expect_equal(f$reduced_form$estimate, ry$coeftable$estimate, tolerance = 1e-12)
  # the influence functions reproduce the variance
  expect_equal(sqrt(colSums(f$inf^2)), f$coeftable$std.error, tolerance = 1e-12, ignore_attr = TRUE)
  expect_equal(vcov(f)["robust", "robust"], f$coeftable$std.error[3]^2, tolerance = 1e-12)
})

test_that("invariants: row order, shifts and rescaling", {
  d <- rd_dgp()
  f0 <- rd_robust(d, "y", "x")
  set.seed(2)
  for (o in list(sample(nrow(d)), rev(seq_len(nrow(d)))))
    expect_equal(rd_nums(rd_robust(d[o, ], "y", "x")), rd_nums(f0), tolerance = 1e-10)
  # shifting x and c together leaves everything (bandwidths included) unchanged
  d2 <- d; d2$x <- d$x + 7
  f2 <- rd_robust(d2, "y", "x", c = 7)
  expect_equal(rd_nums(f2), rd_nums(f0), tolerance = 1e-8)
  expect_equal(f2$bandwidths$h, f0$bandwidths$h, tolerance = 1e-8)
  # rescaling y rescales the estimates and standard errors
  d3 <- d; d3$y <- 10 * d$y
  expect_equal(rd_nums(rd_robust(d3, "y", "x")), 10 * rd_nums(f0), tolerance = 1e-8)
  # rescaling x rescales the bandwidths, not the estimates
  d4 <- d; d4$x <- 3 * d$x
  f4 <- rd_robust(d4, "y", "x")
  expect_equal(rd_nums(f4), rd_nums(f0), tolerance = 1e-8)
  expect_equal(f4$bandwidths$h, 3 * f0$bandwidths$h, tolerance = 1e-8)
})

test_that("ties at the cutoff: observations at x = c are on the right", {
  d <- rd_dgp()
  d$x[1:50] <- 0
  f <- rd_robust(d, "y", "x", h = 0.5)
  expect_identical(f$counts$n, c(sum(d$x < 0), sum(d$x >= 0)))
  # a right side made only of the cutoff cannot be fitted
  d2 <- d[d$x <= 0, ]
  expect_error(suppressWarnings(rd_robust(d2, "y", "x", h = 0.5)), "distinct value|too few distinct")
  expect_warning(try(rd_robust(d2, "y", "x", h = 0.5), silent = TRUE), "Mass points")
})

test_that("bad input: errors naming the argument and value", {
  d <- rd_dgp()
  expect_error(rd_robust(d, "y", "nope"), "`xname` = \"nope\" is not a column")
  expect_error(rd_robust(d, "yy", "x"), "`yname` = \"yy\" is not a column")
  d$s <- "a"
  expect_error(rd_robust(d, "y", "s"), "`xname` = \"s\" must be a numeric column")
  expect_error(rd_robust(d, "y", "x", c = 2), "cutoff `c` = 2 is not inside the range")
  expect_error(rd_robust(d, "y", "x", c = NA), "`c`")
  dc <- d; dc$x <- 0.3
  expect_error(rd_robust(dc, "y", "x"), "`xname` = \"x\" is constant")
  dy <- d; dy$y <- 1
  expect_error(rd_robust(dy, "y", "x"), "`yname` = \"y\" is constant")
  expect_error(rd_robust(d, "y", "x", p = -1), "`p` must be a whole number")
  expect_error(rd_robust(d, "y", "x", p = 2, q = 2), "`q` = 2 must be larger than `p` = 2")
  expect_error(rd_robust(d, "y", "x", deriv = 2, p = 1), "`deriv` = 2 must not exceed `p` = 1")
  expect_error(rd_robust(d, "y", "x", kernel = "gaussian"), "`kernel`")
  expect_error(rd_robust(d, "y", "x", bwselect = "mse"), "`bwselect`")
  expect_error(rd_robust(d, "y", "x", vce = "hc4"), "`vce`")
  expect_error(rd_robust(d, "y", "x", h = -1), "`h` must be one positive number")
  expect_error(rd_robust(d, "y", "x", h = c(1, 2, 3)), "`h` must be one positive number")
  expect_error(rd_robust(d, "y", "x", b = 1), "`b` = 1 is given without `h`")
  expect_error(rd_robust(d, "y", "x", rho = 0), "`rho` must be one positive number")
  expect_error(rd_robust(d, "y", "x", alpha = 2), "alpha")
  expect_error(rd_robust(d, "y", "x", cluster = "g", vce = "hc2"), "CR2 and CR3 are not offered")
  expect_error(rd_robust(d, "y", "x", h = 0.01), "too few distinct values|no observation within")
  dw <- d; dw$w[3] <- -1
  expect_error(rd_robust(dw, "y", "x", weightsname = "w"), "`weightsname` = \"w\" has negative values")
  expect_error(rd_robust(d, "x", "x"), "`yname` and `xname` both name the column \"x\"")
  d1 <- d; d1$one <- 1
  expect_error(rd_robust(d1, "y", "x", cluster = "one"), "`cluster` = \"one\" has a single cluster")
  dt <- d; dt$t <- 1
  expect_error(rd_robust(dt, "y", "x", fuzzy = "t"), "`fuzzy` = \"t\" does not vary")
  # missing values are dropped with a message; Inf is an error
  dn <- d; dn$y[1:3] <- NA
  expect_message(f <- rd_robust(dn, "y", "x"), "Dropped 3 rows")
  expect_identical(nobs(f), nrow(d) - 3L)
  di <- d; di$x[2] <- Inf
  expect_error(rd_robust(di, "y", "x"), "`xname` = \"x\" has a non-finite value")
  # too few observations to select: a warning and the widest bandwidth
  expect_warning(f <- rd_robust(d[c(which(d$x < 0)[1:8], which(d$x >= 0)[1:8]), ], "y", "x", p = 1), "too few to select")
  expect_identical(f$bwselect, "manual")
})

test_that("an outcome that is exactly linear near the cutoff gets NA standard errors, not zero", {
  set.seed(1)
  d <- data.frame(x = runif(500, -1, 1))
  d$y <- 1 + (d$x >= 0) + d$x
  f <- rd_robust(d, "y", "x", h = 0.5, vce = "hc1")
  expect_equal(f$coeftable$estimate, rep(1, 3), tolerance = 1e-10)
  expect_true(all(is.na(f$coeftable$std.error)))
  expect_true(all(is.na(f$coeftable$p.value)))
  expect_match(f$notes, "zero up to rounding")
  # noise restores them
  d$y <- d$y + rnorm(500, sd = 0.1)
  expect_false(anyNA(rd_robust(d, "y", "x", h = 0.5, vce = "hc1")$coeftable$std.error))
})

test_that("the caller's data is not modified; data.table and tibble give the same numbers", {
  d <- rd_dgp()
  before <- data.table::copy(d)
  f <- rd_robust(d, "y", "x", covs = ~ z, cluster = "g")
  expect_identical(d, before)
  dt <- data.table::as.data.table(d); data.table::setkeyv(dt, "z")
  bt <- data.table::copy(dt)
  expect_equal(rd_nums(rd_robust(dt, "y", "x", covs = ~ z, cluster = "g")), rd_nums(f), tolerance = 1e-10)
  expect_identical(dt, bt)
  skip_if_not_installed("tibble")
  expect_equal(rd_nums(rd_robust(tibble::as_tibble(d), "y", "x", covs = ~ z, cluster = "g")), rd_nums(f),
               tolerance = 1e-10)
})

test_that("every method works on the default fit", {
  d <- rd_dgp()
  f <- rd_robust(d, "y", "x", fuzzy = "t", covs = ~ z)
  out <- utils::capture.output(print(f))
  expect_true(any(grepl("First stage", out)))
  expect_true(any(grepl("^robust", out)))
  expect_output(print(summary(f)), "bias-corrected")
  tt <- tidy(f)
  expect_identical(tt$term, c("conventional", "bias-corrected", "robust"))
  expect_identical(tt$estimate[2], tt$estimate[3])
  expect_equal(nrow(glance(f)), 1L)
  expect_equal(unname(coef(f)), tt$estimate)
  expect_equal(dim(vcov(f)), c(3L, 3L))
  expect_equal(unname(confint(f)[3, ]), c(tt$conf.low[3], tt$conf.high[3]))
  grDevices::pdf(NULL); on.exit(grDevices::dev.off())
  expect_invisible(plot(f))
  expect_invisible(plot(f, type = "coef"))
  expect_error(plot(f, type = "bins"), "`type`")
  skip_if_not_installed("ggplot2")
  expect_s3_class(ggplot2::autoplot(f), "ggplot")
  expect_s3_class(ggplot2::autoplot(f, type = "coef"), "ggplot")
})

test_that("the RD kernel's window crosses its interrupt chunk and bisection bounds correctly", {
  # windows at the edge of the data and sizes around the 2^20-row chunk
  for (n in c(2^20 - 1, 2^20, 2^20 + 1)) {
    set.seed(n)
    x <- sort(runif(n, 0, 1))
    D <- matrix(x + rnorm(n), n)
    st <- list(kern = 2L, vce_code = 1L, nnmatch = 3L)
    f <- diffdiff:::dd_rd_lp(list(d = x, D = D, fw = NULL), 2, 2, 1L, 2L, 0L, 1, st)
    expect_identical(f$counts[1], as.integer(n))
    expect_equal(drop(f$beta_p), unname(stats::coef(stats::lm(D[, 1] ~ x))), tolerance = 1e-9)
  }
})
