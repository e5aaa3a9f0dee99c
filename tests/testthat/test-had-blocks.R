# The building blocks of did_had() (issue 17) against the live peers:
# Yatchew's test against YatchewTest 1.1.1 (orders 0 and 1, robust or not,
# ties in the doses), and, on a simulated heterogeneous-adoption panel with
# stayers, one horizon at a time against DIDHAD 2.0.0's did_had(): its
# estimate (mean change - local-linear intercept) / mean dose, SE se.rb /
# mean dose, bandwidth, QUG test and Yatchew test.

test_that("dd_yatchew equals YatchewTest::yatchew_test", {
  need_peer("YatchewTest")
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
  need_peer("DIDHAD")
  need_peer("nprobust")
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
  need_peer("StuteTest")
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

test_that("dd_stute draws its uniforms as matrix(runif(n * nboot), n, nboot); the kernel is thread-free and checked", {
  # the C kernel draws the uniforms a block of columns at a time; the
  # reference is the matrix drawn at once in R and handed over
  set.seed(4)
  n <- 2500
  d <- rexp(n); y <- 1 + d + rnorm(n)
  for (o in 0:1) {
    set.seed(30 + o)
    a <- diffdiff:::dd_stute(y, d, o, nboot = 1200)
    sa <- .Random.seed
    set.seed(30 + o)
    b <- diffdiff:::dd_stute(y, d, o, matrix(runif(n * 1200), n, 1200))
    expect_identical(a, b)
    expect_identical(sa, .Random.seed)
  }
  # the same bits for one and two threads
  old <- dd_threads(); on.exit(dd_threads(old, throttle = 65536))
  dd_threads(1)
  set.seed(8); a <- diffdiff:::dd_stute(y, d, 1L, nboot = 999)
  need_threads()
  dd_threads(2, throttle = 1)
  set.seed(8); b <- diffdiff:::dd_stute(y, d, 1L, nboot = 999)
  dd_threads(old, throttle = 65536)
  expect_identical(a, b)
  # the entry point refuses inconsistent sizes with an internal error
  f <- diffdiff:::dd_stute_fit(y[1:10], d[1:10], 1L)
  ok <- list(f$e, f$o - 1L, as.double(f$Q), 10L, 2L, 10L, 5L, NULL)
  call <- function(a) do.call(.Call, c(list(diffdiff:::C_stute_boot), a))
  expect_identical(dim(call(ok)), c(5L, 1L))
  bad <- list(list(2, f$o), list(2, c(f$o[-1], 10L)), list(3, as.double(f$Q)[-1]), list(4, 11L), list(5, 11L), list(6, 5L),
              list(7, 0L), list(8, matrix(0, 10, 4)), list(4, NA_integer_))
  for (b in bad) {
    a <- ok; a[b[[1]]] <- list(b[[2]])
    expect_error(call(a), "internal error in C_stute_boot", label = paste(b[[1]]))
  }
})
