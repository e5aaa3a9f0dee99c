# Memory-safety rules of the C sources (rchk-style hazards) that no result
# can show, checked where they can be.

# setAttrib(x, install(...), ScalarInteger(k)): the scalar is unprotected
# while install() and setAttrib() may allocate, so a garbage collection there
# can free it (rchk reports this). Guards the fix in bootstrap.c, panel.c and
# survey.c: the value is PROTECTed first. A static check of the sources
# (src_dir(), helper-src.R: the source tree or R CMD check's unpacked tarball).
test_that("no setAttrib() call allocates its value in its own argument list", {
  src <- src_dir()
  hits <- character()
  for (f in list.files(src, "[.]c$", full.names = TRUE)) {
    code <- paste(readLines(f, warn = FALSE), collapse = "\n")
    calls <- regmatches(code, gregexpr("setAttrib\\([^;]*;", code))[[1]]
    bad <- grepl("(Scalar[A-Za-z]+|allocVector|allocMatrix|mkString|mkChar|duplicate|ScalarString)\\s*\\(", calls)
    hits <- c(hits, sprintf("%s: %s", basename(f), calls[bad]))
  }
  expect_identical(hits, character())
})

# R_alloc's blocks are aligned to 8 bytes; a long double (16-byte aligned on
# x86-64) stored there is undefined behaviour (UBSan: "store to misaligned
# address" in C_dcdh_horizon under make sanitize). Long double scratch comes
# from dd_alloc_ld() (util.c), which aligns it.
test_that("no C source casts R_alloc memory to long double", {
  src <- src_dir()
  hits <- character()
  for (f in list.files(src, "[.][ch]$", full.names = TRUE)) {
    code <- paste(readLines(f, warn = FALSE), collapse = "\n")
    code <- gsub("(?s)long double \\*dd_alloc_ld\\(R_xlen_t n\\) \\{.*?\n\\}", " ", code, perl = TRUE)  # the helper itself
    m <- regmatches(code, gregexpr("\\(long double \\*\\) *R_alloc|R_alloc\\([^;]*sizeof\\(long double\\)", code,
                                   perl = TRUE))[[1]]
    if (length(m)) hits <- c(hits, sprintf("%s: %s", basename(f), m))
  }
  expect_identical(hits, character())
})

# The kernels keep the order of the fixed-effect dimensions in an
# int[DD_FE_MAX] (32) array; the R front ends refuse more than 32 dimensions,
# and C refuses them too, with an internal error, not an overflow.
test_that("C_demean refuses more than 32 fixed-effect dimensions with an internal error", {
  n <- 40L
  fe <- rep(list(rep(0:1, n / 2)), 33)
  expect_error(.Call(diffdiff:::C_demean, as.double(1:n), matrix(as.double(n:1), n), fe, rep(2L, 33), NULL,
                     1e-8, 100L),
               "internal error in C_demean: `fe` must have 1 to 32 dimensions; please report")
  expect_silent(.Call(diffdiff:::C_demean, as.double(1:n), matrix(as.double(n:1), n), fe[1:32], rep(2L, 32), NULL,
                      1e-8, 100L))
})

# Scratch memory comes from R_alloc (DESIGN.md): a malloc'd block whose
# lifetime spans R_CheckUserInterrupt (dd_chunks_next, dd_check_interrupt)
# or any R call that can raise an error leaks when that call longjmps back
# to R. C_cs_panel took its per-thread workspace from malloc and then ran its
# chunk loop (Ctrl-C leaked it). A static check of the sources: no
# malloc/calloc/realloc/free at all (comments stripped).
test_that("no C source takes memory from malloc, calloc or realloc", {
  src <- src_dir()
  hits <- character()
  for (f in list.files(src, "[.][ch]$", full.names = TRUE)) {
    code <- paste(readLines(f, warn = FALSE), collapse = "\n")
    code <- gsub("/\\*.*?\\*/", " ", code, perl = TRUE)
    code <- gsub("//[^\n]*", " ", code)
    m <- regmatches(code, gregexpr("\\b(malloc|calloc|realloc|free)\\s*\\(", code, perl = TRUE))[[1]]
    if (length(m)) hits <- c(hits, sprintf("%s: %s", basename(f), m))
  }
  expect_identical(hits, character())
})

# The .Call entry points trust no subscript: code and index vectors are
# checked to be in range (dd_chk_range, src/util.c) before a kernel uses them.
# Each call runs in a child process (callr), so that a crash or a hang fails
# the test instead of ending the session: before the checks, C_dcdh_horizon
# crashed on a baseline or cohort code INT_MAX / NA / one past the last, and
# C_lp_fit crashed on a tie-run size INT_MAX, -5 or NA and hung on 0.
# A case: the routine's name, then its arguments; the result: "ok" or the
# error message, per case.
hostile_calls <- function(cases, timeout = 60) {
  skip_if_not_installed("callr")
  callr::r(function(cases) {
    ns <- asNamespace("diffdiff")
    vapply(cases, function(a) tryCatch({ do.call(.Call, c(list(get(a[[1]], ns)), a[-1])); "ok" },
                                       error = function(e) conditionMessage(e)), "")
  }, args = list(cases), timeout = timeout)
}

test_that("C_dcdh_horizon refuses out-of-range codes, orders and sizes with an internal error", {
  f <- "C_dcdh_horizon"
  set.seed(3)
  nG <- 6L; nK <- 4L
  bi <- c(1L, 1L, 2L, 2L, 1L, 2L); coh <- c(1L, 2L, 3L, 3L, 2L, 1L); clg <- c(1L, 1L, 2L, 2L, 3L, 3L)
  M <- function(v) matrix(as.double(v), nG, nK)
  ok <- list(f, M(rnorm(nG * nK)), M(rbinom(nG * nK, 1, 0.4)), M(rbinom(nG * nK, 1, 0.5)), M(1), as.double(1:nK),
             c(2, 3, 4, 9, 3, 2), rep(3, nG), bi, coh, clg, c(order(bi), order(coh)) - 1L,
             1L, as.double(nG), 2L, 3L, 3L, double(), double())   # horizon, G, nb, nc, ncl, ms, ds
  with_arg <- function(j, v) { a <- ok; a[[j + 1L]] <- v; a }
  with_el <- function(j, k, v) { a <- ok; a[[j + 1L]][k] <- v; a }
  im <- .Machine$integer.max
  cases <- list(
    valid = ok,
    unclustered = { a <- with_arg(10, integer()); a[[12]] <- integer(); a[[17]] <- 0L; a },
    bi_max = with_el(8, 1, im), bi_na = with_el(8, 1, NA), bi_past = with_el(8, 2, 3L), bi_zero = with_el(8, 3, 0L),
    coh_max = with_el(9, 1, im), coh_past = with_el(9, 1, 4L),
    clg_max = with_el(10, 1, im), clg_zero = with_el(10, 1, 0L),
    ord_max = with_el(11, 1, im), ord_past = with_el(11, nG + 1L, nG), ord_dup = with_el(11, 2, ok[[12]][1]),
    ord_unsorted = { a <- ok; a[[12]][1:nG] <- (seq_len(nG) - 1L); a },
    nb_huge = with_arg(14, 1e10), nb_nan = with_arg(14, NaN), nc_over = with_arg(15, nG + 1),
    ncl_over = with_arg(16, nG + 1), horizon_na = with_arg(12, NA), G_nan = with_arg(13, NaN),
    G_zero = with_arg(13, 0), G_neg = with_arg(13, -2),
    nb_packed = with_arg(14, c(2L, 3L)),
    ms_short = { a <- with_arg(17, c(1, 2)); a[[19]] <- c(1, 2); a })
  r <- hostile_calls(cases)
  expect_identical(r[["valid"]], "ok")
  expect_identical(r[["unclustered"]], "ok")
  pre <- "^internal error in C_dcdh_horizon: "
  expect_match(r[["bi_max"]], paste0(pre, "`bi` has 2147483647 at position 1, outside \\[1, 2\\]; please report$"))
  expect_match(r[["bi_na"]], paste0(pre, "`bi` has NA at position 1"))
  expect_match(r[["bi_past"]], paste0(pre, "`bi` has 3 at position 2, outside \\[1, 2\\]"))
  expect_match(r[["bi_zero"]], paste0(pre, "`bi` has 0 at position 3"))
  expect_match(r[["coh_max"]], paste0(pre, "`coh` has 2147483647 at position 1, outside \\[1, 3\\]"))
  expect_match(r[["coh_past"]], paste0(pre, "`coh` has 4 at position 1"))
  expect_match(r[["clg_max"]], paste0(pre, "`clg` has 2147483647 at position 1, outside \\[1, 3\\]"))
  expect_match(r[["clg_zero"]], paste0(pre, "`clg` has 0 at position 1"))
  expect_match(r[["ord_max"]], paste0(pre, "`ord` has 2147483647 at position 1, outside \\[0, 5\\]"))
  expect_match(r[["ord_past"]], paste0(pre, "`ord` has 6 at position 7"))
  expect_match(r[["ord_dup"]], paste0(pre, "`ord \\(baseline order\\)` repeats group"))
  expect_match(r[["ord_unsorted"]], paste0(pre, "`ord \\(baseline order\\)` is not in key order"))
  expect_match(r[["nb_huge"]], paste0(pre, "`nb` must be a whole number in \\[1, 6\\]"))
  expect_match(r[["nb_nan"]], paste0(pre, "`nb` must be a whole number"))
  expect_match(r[["nc_over"]], paste0(pre, "`nc` must be a whole number in \\[1, 6\\]"))
  expect_match(r[["ncl_over"]], paste0(pre, "`ncl` must be a whole number in \\[0, 6\\]"))
  expect_match(r[["horizon_na"]], paste0(pre, "`horizon` must be a whole number"))
  expect_match(r[["G_nan"]], paste0(pre, "`G` must be a finite number"))
  expect_match(r[["G_zero"]], paste0(pre, "`G` must be positive"))
  expect_match(r[["G_neg"]], paste0(pre, "`G` must be positive"))
  expect_match(r[["nb_packed"]], paste0(pre, "`nb` must be a single number"))
  expect_match(r[["ms_short"]], paste0(pre, "`ms` has the wrong length"))
})

test_that("C_lp_fit and C_lp_poly refuse unsorted x, wrong tie runs and bad options with an internal error", {
  f <- "C_lp_fit"
  set.seed(4)
  x <- sort(round(runif(60), 2)); y <- 1 + x + rnorm(60, sd = 0.2)
  r <- rle(x)
  dups <- as.integer(rep(r$lengths, r$lengths)); dupsid <- as.integer(sequence(r$lengths))
  stopifnot(any(dups > 1))                         # ties present
  # c, kernel, matches, h (mse-dpi), cbw, bwmin, bwmax, range, stop
  ok <- list(f, x, y, dups, dupsid, 0.5, 0L, 3L, -1, 0.3, 0.05, 0.5, 1, 0L)
  with_el <- function(j, k, v) { a <- ok; a[[j + 1L]][k] <- v; a }
  with_arg <- function(j, v) { a <- ok; a[[j + 1L]] <- v; a }
  im <- .Machine$integer.max
  cases <- list(
    valid = ok, psi = with_arg(13, 2L),
    dups_max = with_el(3, 2, im), dups_zero = with_el(3, 2, 0L), dups_neg = with_el(3, 2, -5L),
    dups_na = with_el(3, 2, NA), dupsid_max = with_el(4, 2, im),
    unsorted = { a <- ok; a[[2]] <- rev(x); a }, x_nan = with_el(1, 3, NaN),
    kernel = with_arg(6, 7L), matches = with_arg(7, NaN), stop = with_arg(13, 5L),
    h_packed = with_arg(8, c(-1, 0.3)), c_int = with_arg(5, 1L),
    poly_order = list("C_lp_poly", x, y, 0.5, 0L, 0.3, 11L),
    poly_kernel = list("C_lp_poly", x, y, 0.5, 1e10, 0.3, 2L),
    poly_ok = list("C_lp_poly", x, y, 0.5, 0L, 0.3, 2L))
  res <- hostile_calls(cases)
  for (k in c("valid", "psi", "poly_ok")) expect_identical(res[[k]], "ok", label = k)
  pre <- "^internal error in C_lp_fit: "
  ties <- "`dups` / `dupsid` do not describe the ties of `x` at position"
  for (k in c("dups_max", "dups_zero", "dups_neg", "dups_na", "dupsid_max"))
    expect_match(res[[k]], paste0(pre, ties), label = k)
  expect_match(res[["unsorted"]], paste0(pre, "`x` is not sorted at position 2"))
  expect_match(res[["x_nan"]], paste0(pre, "`x` has NaN at position 3"))
  expect_match(res[["kernel"]], paste0(pre, "`kernel` must be a whole number in \\[0, 3\\]"))
  expect_match(res[["matches"]], paste0(pre, "`matches` must be a whole number"))
  expect_match(res[["stop"]], paste0(pre, "`stop` must be a whole number in \\[0, 2\\]"))
  expect_match(res[["h_packed"]], paste0(pre, "`h` has the wrong length"))
  expect_match(res[["c_int"]], paste0(pre, "`c` must be a double vector"))
  expect_match(res[["poly_order"]], "^internal error in C_lp_poly: `order` must be a whole number in \\[0, 10\\]")
  expect_match(res[["poly_kernel"]], "^internal error in C_lp_poly: `kernel` must be a whole number in \\[0, 3\\]")
})

# A NaN in C_pretrends_mvn's inputs made every error estimate NaN, so that the
# lattice refinement never met its tolerance and ran to its last level (2
# minutes for K = 4: the fuzzer's one hang; 7 s for K = 2 here, against 0.01 s
# on the same valid input). The R front end passes finite values only.
test_that("C_pretrends_mvn refuses NaN means, covariances and limits at once", {
  S <- matrix(c(0.010, 0.004, 0.004, 0.012), 2)
  ok <- list("C_pretrends_mvn", c(0.05, 0.1), S, c(-0.2, -0.21), c(0.2, 0.21), matrix(c(0.003, 0.002), 1), 0.3,
             c(1e-5, 1, 0, 10, 1))
  with_el <- function(j, k, v) { a <- ok; a[[j + 1L]][k] <- v; a }
  r <- hostile_calls(list(valid = ok, inf_limit = with_el(3, 1, -Inf), A_na = with_el(5, 1, NA),
                          mu_nan = with_el(1, 2, NaN), S_na = with_el(2, 3, NA), upper_nan = with_el(4, 2, NaN),
                          mZ_inf = with_el(6, 1, Inf)), timeout = 120)
  expect_identical(r[["valid"]], "ok")
  expect_identical(r[["inf_limit"]], "ok")
  pre <- "^internal error in C_pretrends_mvn: "
  expect_match(r[["A_na"]], paste0(pre, "`A` has NA/NaN at position 1; please report$"))
  expect_match(r[["mu_nan"]], paste0(pre, "`mu` has NA/NaN at position 2"))
  expect_match(r[["S_na"]], paste0(pre, "`S` has NA/NaN at position 3"))
  expect_match(r[["upper_nan"]], paste0(pre, "`upper` has NA/NaN at position 2"))
  expect_match(r[["mZ_inf"]], paste0(pre, "`mZ` has an infinite value at position 1"))
})
