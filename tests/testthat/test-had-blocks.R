# The building blocks of did_had() (issue 17) against the live peers:
# Yatchew's test against YatchewTest 1.1.1 (orders 0 and 1, robust or not,
# ties in the doses), and, on a simulated heterogeneous-adoption panel with
# stayers, one horizon at a time against DIDHAD 2.0.0's did_had(): its
# estimate (mean change - local-linear intercept) / mean dose, SE se.rb /
# mean dose, bandwidth, QUG test and Yatchew test.

test_that("dd_yatchew equals YatchewTest::yatchew_test", {
  skip_if_not_installed("YatchewTest")
  set.seed(2)
  for (k in 1:4) {
    n <- c(100, 500, 40, 1000)[k]
    d <- if (k == 3) round(runif(n), 1) else runif(n)
    y <- 1 + d + (k == 2) * d^2 + rnorm(n, sd = 0.3 + d)
    for (o in 0:1) for (hr in c(TRUE, FALSE)) {
      r <- YatchewTest::yatchew_test(data = data.frame(y = y, d = d), Y = "y", D = "d", het_robust = hr, order = o)
      b <- diffdiff:::dd_yatchew(y, d, o, hr)
      a <- unname(as.numeric(r$results[1, ]))
      expect_equal(unname(b[-4]), a[-4], tolerance = 1e-12, label = paste(k, o, hr))
      # the p-value: YatchewTest takes 1 - pnorm(T), diffdiff the upper tail
      # directly (more accurate for small p); they agree to double rounding
      expect_lt(abs(b[[4]] - a[4]), 1e-15)
    }
  }
})

test_that("one horizon of DIDHAD::did_had from dd_lprobust, dd_qug and dd_yatchew", {
  skip_if_not_installed("DIDHAD")
  skip_if_not_installed("nprobust")
  set.seed(5)
  G <- 400; TT <- 5; F <- 3
  dose <- ifelse(runif(G) < 0.05, 0, rexp(G, 2))                    # about 5% stayers
  d <- expand.grid(t = 1:TT, g = 1:G)[, c("g", "t")]
  d$D <- ifelse(d$t >= F, dose[d$g], 0)
  d$y <- rnorm(G)[d$g] + 0.3 * d$t + d$D * (1 + 0.5 * dose[d$g]) + rnorm(nrow(d))
  r <- suppressMessages(DIDHAD::did_had(d, "y", "g", "t", "D", effects = 2, placebo = 1, yatchew = TRUE,
                                        graph_off = TRUE))$results
  Y <- function(t) d$y[d$t == t][order(d$g[d$t == t])]
  X <- function(t) d$D[d$t == t][order(d$g[d$t == t])]
  for (l in 1:3) {
    pl <- l == 3
    dy <- if (pl) Y(F - 2) - Y(F - 1) else Y(F - 1 + l) - Y(F - 1)
    x <- X(if (pl) F else F - 1 + l)
    lp <- diffdiff:::dd_lprobust(dy, x, 0, "epa")
    expect_equal((mean(dy) - lp[["tau.us"]]) / mean(x), r$resmat[l, "Estimate"], tolerance = 1e-10)
    expect_equal(lp[["se.rb"]] / mean(x), r$resmat[l, "SE"], tolerance = 1e-10)
    expect_equal(lp[["h"]], r$resmat[l, "BW"], tolerance = 1e-10)
    if (!pl) expect_equal(unname(diffdiff:::dd_qug(x)), unname(r$resmat[l, c("T", "p.val")]), tolerance = 1e-12)
    expect_equal(unname(diffdiff:::dd_yatchew(dy, x, if (pl) 0 else 1)[1:4]), unname(r$yatchew_test[l, 1:4]),
                 tolerance = 1e-12)
  }
  expect_identical(unname(diffdiff:::dd_qug(c(0, 0, 1))), c(NA_real_, NA_real_))
  expect_identical(unname(diffdiff:::dd_qug(c(0.5, 0.5, 1))), c(Inf, 0))
})

test_that("dd_stute equals StuteTest::stute_test given the same uniforms", {
  # StuteTest 1.0.2 (CRAN) draws U <- matrix(runif(n * brep)) and gives row k
  # to the k-th observation sorted by (D, Y); dd_stute takes one row per
  # observation in the input order, so the test hands it the same rows
  skip_if_not_installed("StuteTest")
  set.seed(3)
  for (k in 1:3) {
    n <- c(300, 120, 1000)[k]
    d <- if (k == 1) round(runif(n), 2) else rexp(n)
    y <- 1 + d + (k != 3) * 0.8 * d^2 + rnorm(n, sd = 0.3 + 0.2 * d)
    for (o in 0:2) {
      set.seed(11 + o)
      r <- StuteTest::stute_test(data.frame(Y = y, D = d), "Y", "D", order = o, brep = 199)
      set.seed(11 + o)
      U <- matrix(runif(n * 199), n, 199)
      Ui <- U; Ui[order(d, y), ] <- U
      b <- diffdiff:::dd_stute(y, d, o, Ui)
      expect_equal(b$statistic, r$results[1, "t stat"], tolerance = 1e-10, label = paste(k, o))
      expect_identical(b$p.value, unname(r$results[1, "p-value"]), label = paste(k, o))
    }
  }
})
