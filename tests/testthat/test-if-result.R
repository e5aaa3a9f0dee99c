# The influence-function result layer dd_if_result() (R/influence.R): the
# covariance from the rows, cluster sums of unit rows, the one-cluster and
# band-without-draws errors, and the estimators that stand on it
# (did_dcdh, its DID_M, did_had) refuse cband = TRUE without bootstrap draws.

sp0 <- function(...) diffdiff:::dd_spec(...)

test_that("dd_if_result: V = crossprod(rows) / scale^2, clusters summed in sorted order", {
  set.seed(3)
  n <- 40
  U <- matrix(rnorm(2 * n), n, 2, dimnames = list(NULL, c("a", "b")))
  est <- c(a = 1, b = 2)
  r <- diffdiff:::dd_if_result(est, U, n, sp0(), 1:2, "test influence functions", "iid")
  expect_equal(r$V_analytic, crossprod(U) / n^2, tolerance = 1e-14)
  expect_equal(r$tab$std.error, unname(sqrt(colSums(U^2)) / n), tolerance = 1e-14)
  expect_identical(r$n_clusters, 40L)
  # clustered: hand cluster sums
  cl <- rep(c(7, 3, 11, 5), length.out = n)
  rc <- diffdiff:::dd_if_result(est, U, n, sp0(), 1:2, "test influence functions", "clustered", cluster = cl)
  S <- rowsum(U, cl)
  expect_equal(rc$V_analytic, crossprod(S) / n^2, tolerance = 1e-14, ignore_attr = TRUE)
  expect_identical(rc$n_clusters, 4L)
  # row order of the data does not move the clustered rows
  o <- sample(n)
  rco <- diffdiff:::dd_if_result(est, U[o, ], n, sp0(), 1:2, "x", "clustered", cluster = cl[o])
  expect_equal(rco$R, rc$R, tolerance = 1e-14)
  expect_error(diffdiff:::dd_if_result(est, U, n, sp0(), 1:2, "x", "clustered", cluster = rep(1, n)),
               "single cluster")
  expect_error(diffdiff:::dd_if_result(est, U, n, sp0(cband = TRUE), 1:2, "x", "iid"),
               "`cband` = TRUE needs bootstrap draws", fixed = TRUE)
  # with draws: a band over `band`
  set.seed(1)
  rb <- diffdiff:::dd_if_result(est, U, n, sp0(nboot = 199, cband = TRUE), 1:2, "x", "iid")
  expect_true(is.finite(rb$crit) && rb$crit > stats::qnorm(0.975) - 0.5)
  expect_true(all(c("cband.low", "cband.high") %in% names(rb$tab)))
})

test_that("did_dcdh, its DID_M and did_had refuse cband = TRUE without bootstrap draws", {
  set.seed(1)
  d <- expand.grid(id = 1:60, t = 1:6)
  d$D <- as.integer(d$t >= (d$id %% 4 + 2) & d$id %% 5 != 0)
  d$y <- rnorm(nrow(d)) + d$D
  msg <- "`cband` = TRUE needs bootstrap draws"
  expect_error(did_dcdh(d, "y", "id", "t", "D", effects = 2, cband = TRUE), msg, fixed = TRUE)
  expect_error(did_dcdh(d, "y", "id", "t", "D", estimand = "DID_M", placebo = 1, cband = TRUE), msg, fixed = TRUE)
  g <- expand.grid(id = 1:100, t = 1:3)
  g$D <- ifelse(g$t == 3, stats::runif(300), 0)
  g$y <- rnorm(300) + g$D
  expect_error(did_had(g, "y", "id", "t", "D", cband = TRUE), msg, fixed = TRUE)
  expect_no_error(did_dcdh(d, "y", "id", "t", "D", effects = 2, nboot = 49, cband = TRUE))
})
