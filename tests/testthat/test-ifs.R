# Block-sparse influence functions (src/ifs.c) against plain dense R
# arithmetic on the same matrices, and the C bootstrap summaries against the
# R definitions did uses (type-1 quantiles, IQR / 1.349, sup-t over a band).

ns <- asNamespace("diffdiff")

# a random block layout: 3 row blocks over 7 columns, each block touching a
# subset of the columns, and its dense equivalent
rand_ifs <- function(seed = 1) {
  set.seed(seed)
  n <- c(13L, 7L, 21L); K <- 7L
  cols <- list(c(0L, 2L, 3L, 6L), c(1L, 2L), 0:6)
  vals <- lapply(seq_along(n), function(b) matrix(rnorm(n[b] * length(cols[[b]])), n[b]))
  s <- ns$dd_ifs(sum(n), K, c(0L, cumsum(n)), cols, vals)
  D <- matrix(0, sum(n), K)
  st <- c(0L, cumsum(n))
  for (b in seq_along(n)) D[st[b] + seq_len(n[b]), cols[[b]] + 1L] <- vals[[b]]
  list(s = s, D = D)
}

test_that("block operations equal dense arithmetic", {
  r <- rand_ifs()
  s <- r$s; D <- r$D
  expect_equal(as.matrix(s), D, tolerance = 0)
  expect_equal(.Call(ns$C_ifs_colss, s), colSums(D^2), tolerance = 1e-13)
  sel <- c(5L, 0L, 2L)
  expect_equal(.Call(ns$C_ifs_crossprod, s, sel), crossprod(D[, sel + 1L]), tolerance = 1e-13)
  A <- matrix(rnorm(7 * 3), 7, 3); A[4, 2] <- 0
  expect_equal(.Call(ns$C_ifs_combine, s, A), D %*% A, tolerance = 1e-13)
  expect_equal(.Call(ns$C_ifs_comb_cross, s, A, TRUE), colSums((D %*% A)^2), tolerance = 1e-13)
  expect_equal(.Call(ns$C_ifs_comb_cross, s, A, FALSE), crossprod(D %*% A), tolerance = 1e-13)
  cl <- rep(c(3, 1, 2, 2), length.out = nrow(D))
  R <- ns$dd_if_rows(s, cl)
  expect_equal(as.matrix(R), rowsum(D, cl, reorder = TRUE), tolerance = 1e-13, ignore_attr = TRUE)
  expect_equal(ns$dd_if_se(s, 10, cl, cols = 1:7), sqrt(colSums(rowsum(D, cl)^2)) / 10, tolerance = 1e-13)
})

test_that("the bootstrap over blocks equals the bootstrap of the dense matrix", {
  r <- rand_ifs(2)
  dense <- ns$dd_ifs_dense(r$D)
  for (type in 1:3) {
    set.seed(5); a <- .Call(ns$C_ifs_boot, r$s, 0:6, 77L, type, NULL, NULL, NULL, 0L, NULL)
    set.seed(5); b <- .Call(ns$C_ifs_boot, dense, 0:6, 77L, type, NULL, NULL, NULL, 0L, NULL)
    expect_equal(a, b, tolerance = 1e-13)
    # and equals v' D / sqrt(n) with the weights of the documented streams
    set.seed(5); w <- .Call(ns$C_boot_weights, nrow(r$D), 77L, type)
    # C_boot_weights draws its own seed the same way: stream b = column b
    expect_equal(a, t(w) %*% r$D / sqrt(nrow(r$D)), tolerance = 1e-12)
  }
})

test_that("bootstrap summaries equal did's quantile definitions", {
  set.seed(3)
  draws <- matrix(rnorm(999 * 5), 999, 5)
  draws[1:400, 4] <- round(draws[1:400, 4], 1)       # ties
  draws[7, 2] <- NA
  q <- function(x, p) { x <- sort(x[!is.na(x)]); x[max(1L, ceiling(length(x) * p))] }
  sig <- apply(draws, 2, function(x) (q(x, 0.75) - q(x, 0.25)) / (qnorm(0.75) - qnorm(0.25)))
  band <- c(1L, 3L, 4L)
  z <- abs(draws[, band]) / rep(sig[band], each = nrow(draws))
  crit <- q(apply(z, 1, max, na.rm = TRUE), 0.95)
  r <- .Call(ns$C_draws_summary, draws, band - 1L, 0.05, 1e-7)
  expect_equal(r$sig, sig, tolerance = 1e-15)
  expect_equal(r$crit, crit, tolerance = 1e-15)
  # a constant column has no spread: NA, and it is left out of the band
  draws[, 3] <- 0
  r <- .Call(ns$C_draws_summary, draws, band - 1L, 0.05, 1e-7)
  expect_true(is.na(r$sig[3]))
  z <- abs(draws[, c(1L, 4L)]) / rep(sig[c(1L, 4L)], each = nrow(draws))
  expect_equal(r$crit, q(apply(z, 1, max), 0.95), tolerance = 1e-15)
})

test_that("did_cs influence functions: block layout, unit order and aggregates", {
  d <- sim_cs_panel(n = 300)
  f <- did_cs(d, "y", "id", "t", "g", xformla = ~ x1, control_group = "notyettreated", nboot = 0)
  K <- nrow(f$coeftable)
  D <- as.matrix(f$inf)
  expect_equal(dim(D), c(300L, K + 2L))               # cells, then the two cohort-share columns
  expect_setequal(f$units, unique(d$id))
  # the cohort-share columns are w 1{G = g} in the fit's unit order
  g_of <- d$g[match(f$units, d$id)]
  expect_equal(D[, K + 1L], as.numeric(g_of == 4), tolerance = 0)
  expect_equal(D[, K + 2L], as.numeric(g_of == 6), tolerance = 0)
  expect_equal(f$coeftable$std.error, sqrt(colSums(D[, 1:K]^2)) / 300, tolerance = 1e-12)
  expect_equal(vcov(f), crossprod(D[, 1:K]) / 300^2, tolerance = 1e-12, ignore_attr = TRUE)
  a <- aggregate(f, type = "dynamic")
  psi <- D %*% a$comb
  expect_equal(a$coeftable$std.error, sqrt(colSums(psi^2)) / 300, tolerance = 1e-12)
  expect_equal(vcov(a), crossprod(psi) / 300^2, tolerance = 1e-12, ignore_attr = TRUE)
})

test_that("integer time, cohort and covariate columns give the same fit as doubles", {
  d <- sim_cs_panel(n = 200)
  di <- d
  di$t <- as.integer(di$t); di$g <- as.integer(di$g); di$x2 <- as.integer(di$x2)
  dd <- d
  dd$t <- as.double(dd$t); dd$g <- as.double(dd$g); dd$x2 <- as.double(dd$x2)
  a <- did_cs(di, "y", "id", "t", "g", xformla = ~ x1 + x2, nboot = 0)
  b <- did_cs(dd, "y", "id", "t", "g", xformla = ~ x1 + x2, nboot = 0)
  expect_identical(a$coeftable, b$coeftable)
  expect_identical(di$t, as.integer(d$t))               # the caller's data untouched
})

# a permuted layout (dd_ifs's `rows`): the blocks group rows that are not
# adjacent; every operation must equal that of the n x K matrix in row order
rand_ifs_perm <- function(seed = 1) {
  r <- rand_ifs(seed)
  set.seed(seed + 100)
  n <- nrow(r$D)
  rows <- sample(n) - 1L                       # stored row i is row rows[i]
  s <- r$s
  s$rows <- rows
  D <- matrix(0, n, ncol(r$D))
  D[rows + 1L, ] <- r$D                        # the stored rows, put back in row order
  list(s = s, D = D)
}

test_that("a permuted block layout equals dense arithmetic in row order", {
  r <- rand_ifs_perm()
  s <- r$s; D <- r$D
  expect_equal(as.matrix(s), D, tolerance = 0)
  expect_equal(.Call(ns$C_ifs_colss, s), colSums(D^2), tolerance = 1e-13)
  sel <- c(5L, 0L, 2L)
  expect_equal(.Call(ns$C_ifs_crossprod, s, sel), crossprod(D[, sel + 1L]), tolerance = 1e-13)
  A <- matrix(rnorm(7 * 3), 7, 3); A[4, 2] <- 0
  expect_equal(.Call(ns$C_ifs_combine, s, A), D %*% A, tolerance = 1e-13)
  expect_equal(.Call(ns$C_ifs_comb_cross, s, A, FALSE), crossprod(D %*% A), tolerance = 1e-13)
  cl <- rep(c(3, 1, 2, 2, 5), length.out = nrow(D))
  expect_equal(as.matrix(ns$dd_if_rows(s, cl)), rowsum(D, cl, reorder = TRUE), tolerance = 1e-13,
               ignore_attr = TRUE)
  bad <- s; bad$rows[2] <- bad$rows[1]
  expect_error(.Call(ns$C_ifs_colss, bad), "not a permutation")
})

test_that("a permuted block layout gives row r the r-th bootstrap weight", {
  r <- rand_ifs_perm(4)
  dense <- ns$dd_ifs_dense(r$D)
  grp <- rep(0:2, length.out = nrow(r$D))
  for (type in 1:3) {
    set.seed(5); a <- .Call(ns$C_ifs_boot, r$s, 0:6, 77L, type, NULL, NULL, NULL, 0L, NULL)
    set.seed(5); b <- .Call(ns$C_ifs_boot, dense, 0:6, 77L, type, NULL, NULL, NULL, 0L, NULL)
    expect_equal(a, b, tolerance = 1e-13)
    set.seed(5); w <- .Call(ns$C_boot_weights, nrow(r$D), 77L, type)
    expect_equal(a, t(w) %*% r$D / sqrt(nrow(r$D)), tolerance = 1e-12)
    # with groups (the bootstrap-t studentisation)
    set.seed(5); a <- .Call(ns$C_ifs_boot, r$s, c(4L, 1L), 40L, type, grp, 3L, NULL, 0L, NULL)
    set.seed(5); b <- .Call(ns$C_ifs_boot, dense, c(4L, 1L), 40L, type, grp, 3L, NULL, 0L, NULL)
    expect_equal(a, b, tolerance = 1e-13)
  }
})

# repeated cross-sections: cell (g, t) is zero outside the observations of its
# two periods and its comparison cohorts, and the fit stores it block-sparse
test_that("did_cs(panel = FALSE) stores block-sparse influence functions in row order", {
  d <- sim_cs_panel(n = 300)
  set.seed(2)
  d <- d[sample(nrow(d)), ]
  f <- did_cs(d, "y", "id", "t", "g", xformla = ~ x1, panel = FALSE, nboot = 0)
  K <- nrow(f$coeftable); n <- f$n
  expect_identical(n, nrow(d))
  stored <- sum(lengths(f$inf$vals))
  expect_lt(stored, 0.4 * n * (K + 2L))               # dense: n x (K + 2) values
  D <- as.matrix(f$inf)
  expect_equal(dim(D), c(n, K + 2L))
  # rows are the observations sorted by identifier and period
  o <- d[order(d$id, d$t), ]
  base <- ifelse(f$coeftable$group <= f$coeftable$time, f$coeftable$group - 1, f$coeftable$time - 1)
  for (k in seq_len(K)) {
    gk <- f$coeftable$group[k]
    inside <- o$t %in% c(f$coeftable$time[k], base[k]) & (o$g == gk | o$g == 0)
    expect_true(all(D[!inside, k] == 0))
    expect_true(all(D[inside, k] != 0))
  }
  expect_equal(D[, K + 1L], as.numeric(o$g == 4), tolerance = 0)
  expect_equal(D[, K + 2L], as.numeric(o$g == 6), tolerance = 0)
  expect_equal(f$coeftable$std.error, sqrt(colSums(D[, 1:K]^2)) / n, tolerance = 1e-12)
  a <- aggregate(f, type = "dynamic")
  expect_equal(a$coeftable$std.error, sqrt(colSums((D %*% a$comb)^2)) / n, tolerance = 1e-12)
  # the multipliers follow the rows: the same draws as from the dense matrix
  set.seed(7); b1 <- ns$dd_if_boot(f$inf, n, NULL, 99L, "rademacher", 0.05)
  set.seed(7); b2 <- ns$dd_if_boot(ns$dd_ifs_dense(D), n, NULL, 99L, "rademacher", 0.05)
  expect_equal(b1$draws, b2$draws, tolerance = 1e-13)
  # unbalanced panels: units in cohort blocks, fewer values than dense
  u <- sim_cs_panel(n = 300)
  u <- u[-seq(1, nrow(u), by = 7), ]
  fu <- did_cs(u, "y", "id", "t", "g", xformla = ~ x1, allow_unbalanced_panel = TRUE, nboot = 0)
  Ku <- nrow(fu$coeftable)
  expect_lt(sum(lengths(fu$inf$vals)), fu$n * (Ku + 2L))
  Du <- as.matrix(fu$inf)
  gu <- u$g[match(sort(unique(u$id)), u$id)]           # units sorted by identifier
  for (k in seq_len(Ku)) expect_true(all(Du[gu != 0 & gu != fu$coeftable$group[k], k] == 0))
})

test_that("a bootstrap in batches (one seed, first replicate) equals one call, and R draws the C seed", {
  ns <- asNamespace("diffdiff")
  set.seed(3)
  S <- ns$dd_ifs_dense(matrix(rnorm(300 * 4), 300))
  grp <- rep(0:2, length.out = 300)
  for (type in 1:3) {
    set.seed(9); one <- .Call(ns$C_ifs_boot, S, 0:3, 250L, type, NULL, NULL, NULL, 0L, NULL)
    set.seed(9); seed <- ns$dd_boot_seed()
    bat <- rbind(.Call(ns$C_ifs_boot, S, 0:3, 97L, type, NULL, NULL, seed, 0L, NULL),
                 .Call(ns$C_ifs_boot, S, 0:3, 153L, type, NULL, NULL, seed, 97L, NULL))
    expect_identical(bat, one)
    set.seed(9); one <- .Call(ns$C_ifs_boot, S, c(3L, 0L), 60L, type, grp, 3L, NULL, 0L, NULL)
    b1 <- .Call(ns$C_ifs_boot, S, c(3L, 0L), 13L, type, grp, 3L, seed, 0L, NULL)
    b2 <- .Call(ns$C_ifs_boot, S, c(3L, 0L), 47L, type, grp, 3L, seed, 13L, NULL)
    expect_identical(rbind(b1$draws, b2$draws), one$draws)
    expect_identical(rbind(b1$ss, b2$ss), one$ss)
  }
  # a later first replicate gives other draws (the offset is used)
  expect_false(identical(.Call(ns$C_ifs_boot, S, 0:3, 5L, 1L, NULL, NULL, seed, 0L, NULL),
                         .Call(ns$C_ifs_boot, S, 0:3, 5L, 1L, NULL, NULL, seed, 5L, NULL)))
  expect_error(.Call(ns$C_ifs_boot, S, 0:3, 5L, 1L, NULL, NULL, c(1, 2^32), 0L, NULL), "`seed`")
  expect_error(.Call(ns$C_ifs_boot, S, 0:3, 5L, 1L, NULL, NULL, 1, 0L, NULL), "`seed`")
  expect_error(.Call(ns$C_ifs_boot, S, 0:3, 5L, 1L, NULL, NULL, NULL, -1L, NULL), "`first`")
})
