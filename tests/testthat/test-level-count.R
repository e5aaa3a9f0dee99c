# dd_level_count(), dd_levels_hit() and dd_unit_rows() (R/panel.R, C in
# panel.c): the counting behind the unbalanced-panel check, did_twfe's
# never-treated units and the few-cluster warning. Each is checked against
# tabulate()/unique() on random data, with NA masks, empty sets and the early
# stop; bad codes are internal errors, never a read out of bounds.

lc_ref <- function(code, mask = NULL) {
  if (is.null(mask)) mask <- rep(TRUE, length(code))
  tabulate(code[!is.na(mask) & mask] + 1L, attr(code, "nlev"))
}
hit_ref <- function(code, rows) length(unique(code[rows]))

test_that("dd_level_count equals tabulate over the masked rows", {
  set.seed(11)
  for (n in c(1L, 2L, 1023L, 1024L, 1025L, 50000L)) {
    code <- diffdiff:::dd_codes(sample.int(max(1L, n %/% 7L), n, replace = TRUE))
    mask <- sample(c(TRUE, FALSE, NA), n, replace = TRUE)
    expect_identical(diffdiff:::dd_level_count(code), lc_ref(code))
    expect_identical(diffdiff:::dd_level_count(code, mask), lc_ref(code, mask))
    expect_identical(diffdiff:::dd_level_count(code, rep(FALSE, n)), integer(attr(code, "nlev")))
  }
})

test_that("dd_levels_hit counts distinct levels of a row set and stops at `stop`", {
  set.seed(12)
  n <- 20000L
  unit <- diffdiff:::dd_codes(rep(seq_len(2000L), each = 10L))
  cl <- diffdiff:::dd_codes(((seq_len(n) - 1L) %/% 10L) %% 37L)        # clusters of units
  treated <- runif(n) < 0.01
  expect_identical(diffdiff:::dd_levels_hit(cl, treated), hit_ref(cl, treated))
  expect_identical(diffdiff:::dd_levels_hit(cl, treated, 5L), min(5L, hit_ref(cl, treated)))
  expect_identical(diffdiff:::dd_levels_hit(cl, rep(FALSE, n)), 0L)
  expect_identical(diffdiff:::dd_levels_hit(cl, rep(NA, n)), 0L)
  # per-unit flags: the same as the expanded logical vector
  never <- diffdiff:::dd_level_count(unit, treated) == 0L
  set <- diffdiff:::dd_unit_rows(never, unit)
  expect_identical(diffdiff:::dd_levels_hit(cl, set), hit_ref(cl, never[unit + 1L]))
  expect_identical(diffdiff:::dd_levels_hit(cl, set, 3L), 3L)
  # subsets of the rows (after singletons): the same as subsetting the vector
  rows <- sort(sample.int(n, 5000L))
  sub <- diffdiff:::dd_set_rows(set, rows)
  clr <- diffdiff:::dd_codes(cl[rows])
  expect_identical(diffdiff:::dd_levels_hit(clr, sub), hit_ref(clr, never[unit[rows] + 1L]))
  expect_identical(diffdiff:::dd_set_rows(treated, rows), treated[rows])
})

test_that("bad codes are internal errors naming the routine and the argument", {
  code <- diffdiff:::dd_codes(c(1, 2, 2, 3))
  bad <- code; bad[2] <- 7L
  expect_error(.Call(diffdiff:::C_level_count, bad, 3L, NULL), "C_level_count: `code` has a code out of range")
  bad[2] <- NA_integer_
  expect_error(.Call(diffdiff:::C_level_count, bad, 3L, NULL), "C_level_count: `code` has a code out of range")
  expect_error(.Call(diffdiff:::C_level_count, code, 3L, c(TRUE, FALSE)), "`mask` has the wrong length")
  expect_error(.Call(diffdiff:::C_levels_hit, bad, 3L, rep(TRUE, 4), NULL, 0L), "C_levels_hit: `code` has a code out of range")
  expect_error(.Call(diffdiff:::C_levels_hit, code, 3L, TRUE, NULL, 0L), "`mask` has the wrong length")
  expect_error(.Call(diffdiff:::C_levels_hit, code, 3L, c(TRUE, FALSE), c(0L, 1L, 2L, 1L), 0L),
               "C_levels_hit: `mcode` has a code out of range")
  expect_error(.Call(diffdiff:::C_levels_hit, code, 3L, c(TRUE, FALSE), c(0L, 1L), 0L), "`mcode` has the wrong length")
})

test_that("the few-cluster warning gives the exact counts of tabulate()", {
  set.seed(13)
  d <- expand.grid(t = 1:6, id = 1:60)
  d$state <- (d$id - 1L) %/% 3L                          # 20 states of 3 units
  d$d <- as.integer(d$state %in% c(0, 1, 2) & d$t >= 4)   # 3 treated states
  d$y <- rnorm(nrow(d)) + d$d
  w <- NULL
  withCallingHandlers(did_twfe(d, "y", "id", "t", "d", cluster = "state"),
                      warning = function(e) { w <<- conditionMessage(e); invokeRestart("muffleWarning") })
  never <- tapply(d$d, d$id, max)[as.character(d$id)] == 0
  G1 <- length(unique(d$state[d$d == 1])); G0 <- length(unique(d$state[never]))
  expect_match(w, sprintf("%d clusters with treated observations and %d with untreated", G1, G0), fixed = TRUE)
  # enough treated states: no warning
  d$d <- as.integer(d$state %in% 0:9 & d$t >= 4)
  expect_no_warning(did_twfe(d, "y", "id", "t", "d", cluster = "state"))
})

test_that("the few-cluster warning at and across its threshold of 5 clusters", {
  set.seed(14)
  d <- expand.grid(t = 1:6, id = 1:60)
  d$state <- (d$id - 1L) %/% 3L                          # 20 states of 3 units
  d$y <- rnorm(nrow(d))
  msg <- function(k_treated) {
    d$d <- as.integer(d$state < k_treated & d$t >= 4)
    w <- NULL
    withCallingHandlers(did_twfe(d, "y", "id", "t", "d", cluster = "state"),
                        warning = function(e) { w <<- conditionMessage(e); invokeRestart("muffleWarning") })
    w
  }
  expect_match(msg(4), "4 clusters with treated observations and 16 with untreated", fixed = TRUE)
  expect_null(msg(5))
  expect_null(msg(6))
  # enough treated but few untreated clusters: the treated count is exact,
  # not the 5 the early stop reached
  expect_match(msg(16), "16 clusters with treated observations and 4 with untreated", fixed = TRUE)
  expect_null(msg(15))
})
