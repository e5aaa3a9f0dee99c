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

test_that("dd_if_align: two regressions on overlapping samples, joint covariance = fixest's stacked regression", {
  need_peer("fixest")
  set.seed(11)
  n <- 400
  d <- data.frame(cl = sample(1:40, n, TRUE), x = rnorm(n))
  d$y1 <- 1 + 0.5 * d$x + rnorm(n) + rnorm(40)[d$cl]
  d$y2 <- -1 + 2 * d$x + rnorm(n) + rnorm(40)[d$cl]
  s1 <- d$cl <= 30; s2 <- d$cl >= 11          # clusters 1-10 only in the first, 31-40 only in the second
  # each regression's cluster score rows (HC0 meat: no small-sample factor)
  rows <- function(y, s) {
    X <- cbind(1, d$x[s]); e <- stats::lm.fit(X, y[s])$residuals
    B <- solve(crossprod(X))
    S <- rowsum(X * e, d$cl[s], reorder = TRUE) %*% B
    list(U = S, key = sort(unique(d$cl[s])), scale = 1)
  }
  b1 <- rows(d$y1, s1); b2 <- rows(d$y2, s2)
  # shuffled keys of a block give the same alignment
  o <- rev(seq_along(b2$key))
  al <- diffdiff:::dd_if_align(list(b1, b2))
  al2 <- diffdiff:::dd_if_align(list(b1, list(U = b2$U[o, ], key = b2$key[o], scale = 1)))
  expect_identical(al$U, al2$U)
  expect_identical(al$key, 1:40)
  V <- crossprod(al$U)
  # the stacked system: each regressor interacted with the sample indicator
  st <- rbind(data.frame(y = d$y1[s1], a1 = 1, x1 = d$x[s1], a2 = 0, x2 = 0, cl = d$cl[s1]),
              data.frame(y = d$y2[s2], a1 = 0, x1 = 0, a2 = 1, x2 = d$x[s2], cl = d$cl[s2]))
  m <- fixest::feols(y ~ 0 + a1 + x1 + a2 + x2, st, cluster = ~cl,
                     ssc = fixest::ssc(adj = FALSE, cluster.adj = FALSE))
  expect_equal(unname(V), unname(as.matrix(stats::vcov(m))), tolerance = 1e-10, ignore_attr = TRUE)
  expect_gt(abs(V[2, 4]), 1e-6)               # the shared clusters give a cross-covariance
  # a combination across blocks through dd_lincom: its variance from the rows
  lc <- diffdiff:::dd_lincom(stats::coef(m), V, matrix(c(0, 0.5, 0, 0.5), 1), "mean slope", ifs = al$U)
  expect_equal(drop(crossprod(lc$ifs)), drop(lc$vcov), tolerance = 1e-12)
  # a scale divides the rows
  al3 <- diffdiff:::dd_if_align(list(list(U = b1$U * 7, key = b1$key, scale = 7)))
  expect_equal(al3$U, diffdiff:::dd_if_align(list(b1))$U, tolerance = 1e-14)
  expect_error(diffdiff:::dd_if_align(list(list(U = b1$U, key = b1$key[-1], scale = 1))), "do not conform")
  expect_error(diffdiff:::dd_if_align(list(list(U = b1$U, key = b1$key, scale = 0))), "do not conform")
})
