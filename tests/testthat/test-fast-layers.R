# The one-pass helpers of the shared layers (issue 36) against the base R
# computations they replace: dd_codes()'s first rows, the outcome's one-pass
# statistics, the never-treated rows, the blocked influence-function cross
# products, the data-frame constructor of the coefficient tables, and the
# replicate-weight products and solves of the survey variance.

test_that("dd_codes records the first row of each level as C_first_rows finds it", {
  set.seed(3)
  for (x in list(rep(1:5, each = 3), sample(c(7, 9, 2, 2, 9, 100), 40, replace = TRUE), c(3L, 3L, 3L),
                 sample.int(1025L, 5000L, replace = TRUE), -3:3)) {
    code <- diffdiff:::dd_codes(x)
    expect_false(is.null(attr(code, "first")))
    expect_identical(attr(code, "first"), .Call(diffdiff:::C_first_rows, code, attr(code, "nlev")))
    expect_identical(attr(code, "first"), which(!duplicated(x)))
  }
  # hashed codes (characters) carry no attribute; dd_first_rows() computes them
  code <- diffdiff:::dd_codes(c("b", "a", "b", "c"))
  expect_null(attr(code, "first"))
  expect_identical(diffdiff:::dd_first_rows(code), c(1L, 2L, 4L))
  # a subset of the codes loses the attribute (it would be stale)
  code <- diffdiff:::dd_codes(c(5, 6, 5, 7))
  expect_null(attr(code[2:4], "first"))
})

test_that("dd_vec_stats gives the NA count, range, sum and sum of squares of base R", {
  set.seed(4)
  y <- rnorm(1025) * 1e3
  st <- diffdiff:::dd_vec_stats(y)
  expect_identical(st[1:3], c(0, min(y), max(y)))
  expect_identical(st[4], sum(y))
  expect_equal(st[5], drop(crossprod(y)), tolerance = 1e-14)
  expect_identical(diffdiff:::dd_checksum(y, st), diffdiff:::dd_checksum(y))
  y[c(3, 700)] <- c(NA, NaN)
  st <- diffdiff:::dd_vec_stats(y)
  expect_identical(st[1:3], c(2, min(y, na.rm = TRUE), max(y, na.rm = TRUE)))
  # with missing values the checksum falls back to R's (NA propagates)
  expect_identical(diffdiff:::dd_checksum(y, st), diffdiff:::dd_checksum(y))
  expect_identical(diffdiff:::dd_vec_stats(c(NA_real_, NA_real_))[1:3], c(2, Inf, -Inf))
  expect_identical(diffdiff:::dd_vec_stats(1:4)[2:4], c(1, 4, 10))
  # the outcome checks still fire from the one-pass statistics
  expect_error(diffdiff:::dd_check_outcome(rep(2, 10), "y"), "constant")
  expect_error(diffdiff:::dd_check_outcome(c(1, 2, 1e200), "y"), "overflow")
  expect_error(diffdiff:::dd_check_outcome(c(1e-300, 2e-300), "y"), "underflow")
  expect_silent(diffdiff:::dd_check_outcome(c(NA, NA), "y"))
})

test_that("C_never_rows expands unit flags to rows and zeroes g there", {
  code <- diffdiff:::dd_codes(c(1, 1, 2, 2, 3, 3))
  for (g in list(c(0, 0, 5, 5, Inf, Inf), c(0L, 0L, 5L, 5L, NA, NA))) {
    r <- .Call(diffdiff:::C_never_rows, code, c(TRUE, FALSE, TRUE), g)
    expect_identical(r$never, c(TRUE, TRUE, FALSE, FALSE, TRUE, TRUE))
    g0 <- g; g0[r$never] <- 0
    expect_identical(r$g, g0)
  }
  # no never-treated row: g comes back as it was (integer stays integer)
  r <- .Call(diffdiff:::C_never_rows, code, c(FALSE, FALSE, FALSE), 1:6)
  expect_identical(r$g, 1:6)
  # double g with +0 on the never-treated rows: the same object back (no copy);
  # -0 is replaced by +0 as g[never] <- 0 does
  g <- c(0, 0, 5, 5, 0, 0)
  r <- .Call(diffdiff:::C_never_rows, code, c(TRUE, FALSE, TRUE), g)
  expect_identical(r$g, g)
  expect_identical(.Internal(address(r$g)), .Internal(address(g)))
  r <- .Call(diffdiff:::C_never_rows, code, c(TRUE, FALSE, TRUE), c(-0, 0, 5, 5, 0, 0))
  expect_identical(1 / r$g[1], Inf)
  expect_false(identical(.Internal(address(r$g)), .Internal(address(g))))
  expect_error(.Call(diffdiff:::C_never_rows, code, c(TRUE, FALSE), 1:6), "code")
  expect_error(.Call(diffdiff:::C_never_rows, code, c(TRUE, FALSE, TRUE), 1:5), "one value per row")
})

test_that("the blocked cross products equal the dense ones at every width", {
  set.seed(5)
  for (m in c(1:9, 13L)) {
    n1 <- 37; n2 <- 50
    b1 <- matrix(rnorm(n1 * m), n1, m); b2 <- matrix(rnorm(n2 * 2), n2, 2)
    cols2 <- c(0L, m - 1L)
    psi <- diffdiff:::dd_ifs(n1 + n2, m, c(0L, n1, n1 + n2), list(seq_len(m) - 1L, unique(cols2)),
                             list(b1, b2[, seq_along(unique(cols2)), drop = FALSE]))
    D <- as.matrix(psi)
    expect_equal(.Call(diffdiff:::C_ifs_crossprod, psi, seq_len(m) - 1L), crossprod(D), tolerance = 1e-13)
    A <- matrix(rnorm(m * 3), m, 3)
    full <- .Call(diffdiff:::C_ifs_comb_cross, psi, A, FALSE)
    expect_equal(full, crossprod(D %*% A), tolerance = 1e-13)
    # the diagonal of the full product is the diagonal-only pass, to the bit
    expect_identical(diag(full), .Call(diffdiff:::C_ifs_comb_cross, psi, A, TRUE))
    A <- matrix(rnorm(m * (m + 2)), m, m + 2)
    full <- .Call(diffdiff:::C_ifs_comb_cross, psi, A, FALSE)
    expect_equal(full, crossprod(D %*% A), tolerance = 1e-13)
    expect_identical(diag(full), .Call(diffdiff:::C_ifs_comb_cross, psi, A, TRUE))
  }
})

test_that("dd_df builds the data frame data.frame() builds", {
  cols <- list(term = c("a", "b"), estimate = c(1, 2), std.error = c(0.1, NA))
  expect_identical(diffdiff:::dd_df(cols), data.frame(cols, stringsAsFactors = FALSE))
  tab <- diffdiff:::dd_coef_table(c(a = 1, b = 2), c(0.5, 1), Inf, 0.05)
  ref <- data.frame(term = c("a", "b"), estimate = c(1, 2), std.error = c(0.5, 1), statistic = c(2, 2),
                    p.value = 2 * pnorm(-2), conf.low = c(1, 2) - qnorm(0.975) * c(0.5, 1),
                    conf.high = c(1, 2) + qnorm(0.975) * c(0.5, 1))
  expect_identical(tab, ref)
  ex <- data.frame(event = c(-1, 0))
  expect_identical(diffdiff:::dd_if_table(c("a", "b"), c(1, 2), c(0.5, 1), 0.05, extra = ex), cbind(ref, ex))
  # unnamed estimates and recycled standard errors take data.frame()'s route (and its error)
  expect_error(diffdiff:::dd_coef_table(c(1, 2), c(1, 1), Inf, 0.05), "differing number of rows")
  expect_identical(diffdiff:::dd_coef_table(c(a = 1, b = 2), 1, Inf, 0.05)$std.error, c(1, 1))
})

test_that("dd_few_levels and dd_sorted_levels equal unique(), sort() and tabulate()", {
  set.seed(6)
  x <- sample(c(0, 5, 3, Inf, NA, NaN, -0), 2000, replace = TRUE)
  fl <- diffdiff:::dd_few_levels(x)
  expect_identical(fl$values, unique(x))
  count <- function(v) if (is.nan(v)) sum(is.nan(x)) else if (is.na(v)) sum(is.na(x) & !is.nan(x)) else sum(x == v, na.rm = TRUE)
  expect_identical(fl$counts, as.double(vapply(fl$values, count, 0L)))
  expect_identical(diffdiff:::dd_sorted_levels(x), sort(unique(x)))
  y <- sample(c(2L, 9L, 4L), 3000, replace = TRUE)
  s <- diffdiff:::dd_sorted_levels(y, counts = TRUE)
  expect_identical(s$values, as.double(sort(unique(y))))
  expect_identical(s$counts, tabulate(match(y, sort(unique(y)))))
  # more distinct values than the table holds: NULL, and R's route
  z <- as.double(1:100)
  expect_null(diffdiff:::dd_few_levels(z, max = 64L))
  expect_identical(diffdiff:::dd_sorted_levels(rev(z), counts = TRUE), list(values = z, counts = rep(1L, 100)))
  expect_identical(diffdiff:::dd_few_levels(c(TRUE, NA, TRUE))$counts, c(2, 1))
})

test_that("the cohort rule on the distinct values of a long vector equals the rule on every value", {
  set.seed(7)
  periods <- 1:10
  rule <- function(g, ...) diffdiff:::dd_cohort_never(g, periods, "g", "t", ...)
  g <- sample(c(0, 4, 6, Inf, NA, 12), 5000, replace = TRUE)     # 12: after the last period
  expect_message(rule(g), "first treated after the last period")
  long <- suppressMessages(rule(g))
  # the same rule value by value (a short vector takes the element-wise route)
  short <- unlist(lapply(split(g, ceiling(seq_along(g) / 50)), function(v) suppressMessages(rule(v))), use.names = FALSE)
  expect_identical(long, short)
  expect_message(rule(g), sprintf("^diffdiff: %d unit", sum(g == 12, na.rm = TRUE)))
  # the errors name the first offending value in order of the units
  g2 <- g; g2[c(100, 300)] <- c(4.5, 2.5)
  expect_error(rule(g2), "has value 4.5, which is not a period")
  g3 <- g; g3[c(200, 400)] <- c(-2, -1)
  expect_error(rule(g3), "negative value -2")
  # with anticipation 2, 12 is no longer after the last period (10 + 2): an error on both routes
  expect_error(rule(g, anticipation = 2), "has value 12, which is not a period")
  expect_error(rule(c(0, 12), anticipation = 2), "has value 12, which is not a period")
})

test_that("the chunked cross product is exact across its 256-row chunks", {
  set.seed(8)
  for (n1 in c(255L, 256L, 257L, 513L)) {
    m <- 6L
    b1 <- matrix(rnorm(n1 * m), n1, m); b2 <- matrix(rnorm(9 * 2), 9, 2)
    psi <- diffdiff:::dd_ifs(n1 + 9, m, c(0L, n1, n1 + 9L), list(seq_len(m) - 1L, c(0L, 5L)), list(b1, b2))
    D <- as.matrix(psi)
    A <- matrix(rnorm(m * 5), m, 5)
    full <- .Call(diffdiff:::C_ifs_comb_cross, psi, A, FALSE)
    expect_equal(full, crossprod(D %*% A), tolerance = 1e-13)
    expect_identical(diag(full), .Call(diffdiff:::C_ifs_comb_cross, psi, A, TRUE))
  }
})

test_that("dd_few_levels holds up to `max` distinct values and gives up beyond", {
  x64 <- rep(as.double(1:64), 3); x65 <- rep(as.double(1:65), 3)
  expect_identical(diffdiff:::dd_few_levels(x64)$values, as.double(1:64))
  expect_null(diffdiff:::dd_few_levels(x65))
  expect_identical(diffdiff:::dd_sorted_levels(rev(x64), counts = TRUE), list(values = as.double(1:64), counts = rep(3L, 64)))
  expect_identical(diffdiff:::dd_sorted_levels(rev(x65), counts = TRUE), list(values = as.double(1:65), counts = rep(3L, 65)))
})

# the replicate-weight products in blocks of four replicates, against one
# replicate at a time in R (the same double operations in the same order:
# rows in order, zero weights skipped), at 1 to 9 replicates (partial and
# full blocks), with a row subset and multipliers
test_that("the blocked replicate cross products equal the row-by-row sums", {
  set.seed(11)
  n <- 37L; q <- 5L; nW <- 45L
  M <- matrix(rnorm(n * q), n, q)
  ref <- function(W, cols, rows, mult) {
    out <- matrix(0, length(cols), q)
    for (j in seq_along(cols)) for (k in seq_len(q)) {
      a <- 0
      for (i in seq_len(n)) {
        wi <- W[if (is.null(rows)) i else rows[i], cols[j]]
        if (!is.null(mult)) wi <- wi * mult[i]
        if (wi != 0) a <- a + wi * M[i, k]
      }
      out[j, k] <- a
    }
    out
  }
  for (R in 1:9) {
    W <- matrix(runif(nW * R, 0.5, 2), nW, R)
    W[sample(length(W), length(W) %/% 5)] <- 0          # zero weights scattered over rows and replicates
    cols <- as.integer(rev(seq_len(R)))
    rows <- sample.int(nW, n)
    mult <- runif(n)
    for (cfg in list(list(NULL, NULL), list(rows, NULL), list(rows, mult))) {
      Wc <- if (is.null(cfg[[1]])) W[seq_len(n), , drop = FALSE] else W
      got <- .Call(diffdiff:::C_svy_rep_crossprod, Wc, M, cols, if (is.null(cfg[[1]])) NULL else as.integer(cfg[[1]]),
                   cfg[[2]])
      expect_identical(got, ref(Wc, cols, cfg[[1]], cfg[[2]]))
    }
  }
})

test_that("the replicates' solves equal solve(), with NA where solve() stops", {
  set.seed(12)
  p <- 4L
  ij <- which(upper.tri(diag(p), diag = TRUE), arr.ind = TRUE)
  nrep <- 7L
  G <- matrix(0, nrep, nrow(ij)); B <- matrix(rnorm(nrep * p), nrep, p)
  for (r in seq_len(nrep)) {
    X <- matrix(rnorm(30 * p), 30, p)
    A <- crossprod(X)
    if (r == 3L) A[] <- 0                                       # exactly singular
    if (r == 5L) { X[, 4] <- X[, 3] * (1 + 1e-17); A <- crossprod(X) }   # computationally singular
    G[r, ] <- A[ij]
  }
  got <- .Call(diffdiff:::C_svy_rep_solve, G, B, ij)
  want <- t(vapply(seq_len(nrep), function(r) {
    A <- matrix(0, p, p); A[ij] <- G[r, ]; A[ij[, 2:1]] <- G[r, ]
    tryCatch(drop(solve(A, B[r, ])), error = function(e) rep(NA_real_, p))
  }, numeric(p)))
  expect_identical(got, want)
  expect_true(all(is.na(got[c(3, 5), ])))
  expect_false(anyNA(got[-c(3, 5), ]))
})

# dd_sorted_codes: the table-ranked codes in C against the values' ranks
# among the sorted distinct values, on both sides of the range limit
# (4n + 1024 values), where the C path hands over to sort(unique())
test_that("dd_sorted_codes numbers the values in sorted order on both paths", {
  set.seed(13)
  ref <- function(x) match(x, sort(unique(x))) - 1L
  n <- 50L
  for (x in list(sample(c(5L, -3L, 9L, 0L), 60, TRUE), c(2.0, -0.0, 0.0, 7.0, 2.0), rep(4, 10), 10:1,
                 sample(1:1200, n, TRUE), c(1, 4 * n + 1024), c(1, 4 * n + 1025), c(1L, 4L * n + 1024L),
                 c(1L, 4L * n + 1025L), c(1.5, 3, 1.5))) {
    x <- rep_len(x, n)
    code <- diffdiff:::dd_sorted_codes(x)
    expect_identical(as.vector(code), ref(x))
    expect_identical(attr(code, "nlev"), length(unique(x)))
  }
  # which path ran: C codes a range of 4n + 1024 values, not one more
  expect_false(is.null(.Call(diffdiff:::C_sorted_codes, rep_len(c(1, 4 * n + 1024), n))))
  expect_null(.Call(diffdiff:::C_sorted_codes, rep_len(c(1, 4 * n + 1025), n)))
  expect_null(.Call(diffdiff:::C_sorted_codes, c(1, NA, 2)))
  expect_null(.Call(diffdiff:::C_sorted_codes, c(1, 2.5)))
})
