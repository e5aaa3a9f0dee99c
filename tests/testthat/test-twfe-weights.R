# twfe_weights() against live TwoWayFEWeights 2.1.0 (CRAN): the cell weights,
# beta, the counts and sums of positive and negative weights and Corollary
# 1's two measures, for the four types, with and without observation
# weights, controls, a non-binary and a reversible treatment, an unbalanced
# panel and group-level data. TwoWayFEWeights takes the first-difference
# types' differences ready-made (its Y and D; D0 the level treatment): the
# tests form them between consecutive periods, as twfe_weights() does.
# Invariant (no peer): with Y = unit + period effects + D x effect(g, t), the
# coefficient is exactly the weighted sum of the cells' effects.

tw_panel <- function(N = 60, T = 8, seed = 1, reversible = TRUE, dose = FALSE) {
  set.seed(seed)
  d <- expand.grid(id = seq_len(N), t = seq_len(T))
  g <- sample(c(0, 2, 3, 5, 7), N, TRUE, prob = c(0.1, 0.3, 0.2, 0.2, 0.2))
  d$D <- as.numeric(g[d$id] > 0 & d$t >= g[d$id])
  if (reversible) d$D[d$id %% 7 == 0 & d$t >= T - 1] <- 0
  if (dose) d$D <- d$D * (1 + d$id %% 3)
  d$x <- rnorm(nrow(d))
  d$y <- rnorm(nrow(d)) + d$D * (1 + d$id / 20 + d$t / 3) + 0.5 * d$x + d$t / 4
  d$w <- runif(N, 0.5, 2)[d$id]
  d <- d[order(d$id, d$t), ]
  lag <- function(v) ave(v, d$id, FUN = function(z) c(NA, diff(z)))
  d$dy <- lag(d$y); d$dD <- lag(d$D); d$dx <- lag(d$x)
  d
}

# the peer on the same data (its fd types on the differenced columns)
tw_peer <- function(d, type, weights = NULL, controls = NULL) {
  fd <- type %in% c("fdTR", "fdS")
  suppressWarnings(suppressMessages(utils::capture.output(r <- TwoWayFEWeights::twowayfeweights(
    d, if (fd) "dy" else "y", "id", "t", if (fd) "dD" else "D", type = type, D0 = if (type == "fdTR") "D",
    weights = if (!is.null(weights)) d[[weights]], controls = if (!is.null(controls)) (if (fd) "dx" else "x"),
    summary_measures = TRUE))))
  r
}

tw_compare <- function(a, b, tol = 1e-8) {
  pw <- b$dat_result
  key_b <- paste(pw$G, pw$T); key_a <- paste(a$weights$id, a$weights$t)
  expect_setequal(key_a, key_b)
  expect_lt(max(abs(a$weights$weight[match(key_b, key_a)] - pw$weight)), tol)
  expect_lt(abs(a$beta - b$beta), tol * max(1, abs(b$beta)))
  expect_identical(c(a$n_pos, a$n_neg), c(b$nr_plus, b$nr_minus))
  expect_lt(abs(a$sum_pos - b$sum_plus) + abs(a$sum_neg - b$sum_minus), tol)
  expect_lt(abs(a$sigma_fe - b$sensibility), tol * max(1, b$sensibility))
  if (b$sum_minus < 0) expect_lt(abs(a$sigma_fe_sign - b$sensibility2), tol * max(1, b$sensibility2))
  else expect_true(is.na(a$sigma_fe_sign))
}

test_that("twfe_weights equals TwoWayFEWeights for the four types, with and without weights", {
  need_peer("TwoWayFEWeights")
  d <- tw_panel()
  negs <- 0L
  for (type in c("feTR", "feS", "fdTR", "fdS")) for (wn in list(NULL, "w")) {
    a <- twfe_weights(d, "y", "id", "t", "D", type = type, weightsname = wn)
    b <- tw_peer(d, type, wn)
    tw_compare(a, b)
    negs <- negs + a$n_neg
  }
  expect_gt(negs, 0L)                          # the design has negative weights to compare
})

test_that("twfe_weights equals TwoWayFEWeights with controls, a dose, an unbalanced panel", {
  need_peer("TwoWayFEWeights")
  d <- tw_panel(seed = 2)
  for (type in c("feTR", "feS", "fdS"))
    tw_compare(twfe_weights(d, "y", "id", "t", "D", type = type, xformla = ~ x), tw_peer(d, type, controls = "x"))
  d2 <- tw_panel(seed = 3, dose = TRUE)
  for (type in c("feTR", "feS", "fdTR", "fdS"))
    tw_compare(twfe_weights(d2, "y", "id", "t", "D", type = type), tw_peer(d2, type))
  # unbalanced: rows dropped at random (the differences skip the gaps, as the peer's lagged columns)
  d3 <- tw_panel(seed = 4)
  set.seed(4)
  d3 <- d3[-sample(nrow(d3), 40), ]
  lag <- function(v) { r <- rep(NA_real_, length(v)); ok <- c(FALSE, diff(d3$t) == 1 & diff(d3$id) == 0)
                       r[ok] <- v[ok] - v[which(ok) - 1L]; r }
  d3$dy <- lag(d3$y); d3$dD <- lag(d3$D)
  for (type in c("feTR", "feS", "fdTR", "fdS"))
    tw_compare(twfe_weights(d3, "y", "id", "t", "D", type = type, weightsname = "w"), tw_peer(d3, type, "w"))
})

test_that("twfe_weights on group-level data (several observations per cell) equals TwoWayFEWeights", {
  need_peer("TwoWayFEWeights")
  set.seed(5)
  d <- tw_panel(N = 20, T = 6, seed = 5)
  ind <- d[rep(seq_len(nrow(d)), each = 3), c("id", "t", "D", "w")]
  ind$y <- rnorm(nrow(ind)) + ind$D * 2 + ind$t / 5
  ind$w <- runif(nrow(ind), 0.5, 2)
  a <- twfe_weights(ind, "y", "id", "t", "D", weightsname = "w", panel = FALSE)
  b <- suppressWarnings(suppressMessages(TwoWayFEWeights::twowayfeweights(ind, "y", "id", "t", "D", weights = ind$w,
                                                                          summary_measures = TRUE)))
  tw_compare(a, b)
  expect_identical(nrow(a$weights), length(unique(paste(ind$id, ind$t))))
})

test_that("the feTR weights decompose the coefficient exactly (no peer)", {
  set.seed(6)
  d <- tw_panel(seed = 6, reversible = FALSE)
  eff <- 1 + d$id / 10 + (d$t - 4)^2 / 3               # heterogeneous cell effects
  d$y <- d$id / 3 + sin(d$t) + d$D * eff               # no noise
  a <- twfe_weights(d, "y", "id", "t", "D")
  expect_equal(sum(a$weights$weight), 1, tolerance = 1e-12)
  ce <- eff[match(paste(a$weights$id, a$weights$t), paste(d$id, d$t))]
  expect_equal(sum(a$weights$weight * ce), a$beta, tolerance = 1e-10)
  expect_equal(a$beta, unname(coef(did_twfe(d, "y", "id", "t", "D"))["ATT"]), tolerance = 1e-10)
  expect_gt(a$n_neg, 0L)                               # staggered: some negative weights
  expect_true(all(a$weights$weight[d$D[match(paste(a$weights$id, a$weights$t), paste(d$id, d$t))] == 0] == 0))
  # the caller's data is not modified
  d0 <- d; twfe_weights(d, "y", "id", "t", "D", type = "fdS"); expect_identical(d, d0)
  # methods
  expect_identical(nrow(tidy(a)), nrow(a$weights))
  g <- glance(a)
  expect_identical(g$n.negative, a$n_neg)
  expect_equal(g$share.negative, a$n_neg / (a$n_pos + a$n_neg))
  expect_output(print(a), "negative weights")
  expect_identical(as.data.frame(a), a$weights)
})

test_that("twfe_weights refuses bad input with messages naming it", {
  d <- tw_panel()
  expect_error(twfe_weights(d, "y", "id", "t", "D", type = "TR"), "`type` must be one of")
  expect_error(twfe_weights(d, "y", "id", "t", "Dx"), "Dx")
  d0 <- d; d0$D <- 0
  expect_error(twfe_weights(d0, "y", "id", "t", "D"), "`dname` = \"D\" is 0 in every row")
  expect_error(twfe_weights(d, "y", "id", "t", "D", type = "fdTR", xformla = ~ x), "`xformla` is not available")
  dd <- rbind(d, d[1, ])
  expect_error(twfe_weights(dd, "y", "id", "t", "D", type = "feS", panel = FALSE), "one row per group and period")
  expect_error(twfe_weights(d, "y", "id", "t", "D", panel = NA), "`panel` must be TRUE or FALSE; got NA")
  dc <- d; dc$D <- as.numeric(dc$id %% 2)               # constant within units: no switch
  expect_error(twfe_weights(dc, "y", "id", "t", "D", type = "feS"), "`dname` = \"D\" is collinear with the group and period")
  expect_error(twfe_weights(dc, "y", "id", "t", "D", type = "fdS"), "`dname` = \"D\" never changes")
  expect_error(twfe_weights(dc, "y", "id", "t", "D"), "`dname` = \"D\" is collinear")
  expect_error(twfe_weights(d, "y", "id", "t"), "dname")
})

test_that("twfe_weights: a duplicated unit-period row is the estimators' DUPLICATE_ROWS error (panel = FALSE: group data)", {
  # before the fix a duplicated row was taken as a second observation of the
  # cell and moved beta without a word; every estimator stops on it
  d <- tw_panel(reversible = FALSE)
  dup <- rbind(d, d[d$id == 3 & d$t == 5, ])
  code_of <- function(expr) tryCatch({ expr; NA_character_ }, diffdiff_error = function(e) e$code)
  for (type in c("feTR", "feS", "fdTR", "fdS"))
    expect_identical(code_of(twfe_weights(dup, "y", "id", "t", "D", type = type)), "DUPLICATE_ROWS", label = type)
  expect_identical(code_of(did_twfe(dup, "y", "id", "t", "D")), "DUPLICATE_ROWS")
  expect_error(twfe_weights(dup, "y", "id", "t", "D"),
               "unit 3 has more than one row in period 5\\. If `idname` = \"id\" names groups .*pass `panel = FALSE`")
  # with panel = FALSE the rows are observations within cells (group-level
  # data), as TwoWayFEWeights takes them: the clean panel gives the same answer either way
  a <- twfe_weights(d, "y", "id", "t", "D")
  expect_identical(twfe_weights(d, "y", "id", "t", "D", panel = FALSE)$weights, a$weights)
  b <- twfe_weights(dup, "y", "id", "t", "D", panel = FALSE)
  expect_false(isTRUE(all.equal(b$beta, a$beta)))
})
