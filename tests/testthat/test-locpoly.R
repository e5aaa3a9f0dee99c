# The local-linear building block of did_had() (src/locpoly.c) against
# nprobust 1.0.0's lprobust(eval = 0, p = 1, bwselect = "mse-dpi",
# vce = "nn"), live, with the bandwidth selectors "mse-dpi", "imse-dpi", "mse-rot", "imse-rot" and
# "ce-rot": bandwidth, window size, conventional and
# bias-corrected intercepts and their standard errors, for the four kernels,
# on data with ties, a mass of exact zeros and small samples (n = 30: the
# bwcheck floor of 21 points), and with a given bandwidth.

test_that("dd_lprobust equals nprobust::lprobust (five bandwidth selectors, nn residuals)", {
  need_peer("nprobust")
  set.seed(1)
  worst <- 0
  for (case in 1:6) {
    n <- c(200, 50, 500, 30, 1000, 300)[case]
    x <- if (case %in% c(2, 4)) round(runif(n)^2, 2) else runif(n)^1.5
    if (case == 6) x[1:20] <- 0
    y <- 1 + 2 * x - x^2 + rnorm(n, sd = 0.5)
    for (bs in c("mse-dpi", "imse-dpi", "ce-rot", "mse-rot", "imse-rot")) for (k in c("epa", "tri", "uni", "gau")) {
      a <- nprobust::lprobust(y, x, eval = 0, kernel = k, bwselect = bs)$Estimate
      b <- diffdiff:::dd_lprobust(y, x, 0, k, bwselect = bs)
      expect_equal(unname(b[c("h", "N", "tau.us", "tau.bc", "se.us", "se.rb")]), unname(a[c(2, 4:8)]),
                   tolerance = 1e-10, label = paste(case, bs, k))
      worst <- max(worst, abs(b[["tau.bc"]] - a[1, "tau.bc"]), abs(b[["se.rb"]] - a[1, "se.rb"]))
    }
  }
  expect_lt(worst, 1e-10)
  # a given bandwidth
  x <- runif(300); y <- sin(3 * x) + rnorm(300, sd = 0.3)
  a <- nprobust::lprobust(y, x, eval = 0, h = 0.25, kernel = "tri")$Estimate
  b <- diffdiff:::dd_lprobust(y, x, 0, "tri", h = 0.25)
  expect_equal(unname(b[c("h", "N", "tau.us", "tau.bc", "se.us", "se.rb")]), unname(a[c(2, 4:8)]), tolerance = 1e-10)
})

test_that("dd_lprobust at and across the bwcheck floor (21 nearest points): n = 20, 21, 22", {
  need_peer("nprobust")
  set.seed(9)
  for (n in 20:22) {
    x <- runif(n); y <- x + rnorm(n, sd = 0.2)
    for (k in c("epa", "uni")) {
      a <- suppressWarnings(nprobust::lprobust(y, x, eval = 0, kernel = k, bwselect = "mse-dpi"))$Estimate
      b <- diffdiff:::dd_lprobust(y, x, 0, k)
      expect_equal(unname(b[c("h", "N", "tau.us", "tau.bc", "se.us", "se.rb")]), unname(a[c(2, 4:8)]),
                   tolerance = 1e-10, label = paste(n, k))
    }
  }
})
