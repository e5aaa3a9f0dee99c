# did_cic(): changes-in-changes and quantile DiD. Hand computations on a
# tiny panel, invariants (row order, CiC's invariance to increasing
# transformations), the overall ATT's weights, the bootstrap (reproducible,
# thread-free, clusters resampled whole, equal in distribution to a
# bootstrap written here in R), and bad input. Parity with qte:
# test-parity-cic.R.

# 4 control units (g = 0) and 2 treated (g = 2), periods 1 and 2:
#   controls  y00 = 1, 2, 3, 4   y01 = 2, 4, 6, 8
#   treated   y10 = 2.5, 4       y11 = 10, 3
cic_tiny <- function() {
  data.frame(id = rep(1:6, each = 2), t = rep(1:2, 6), g = rep(c(0, 0, 0, 0, 2, 2), each = 2),
             y = c(1, 2, 2, 4, 3, 6, 4, 8, 2.5, 10, 4, 3))
}

# a staggered panel: cohorts 3 and 4 and never treated, periods 1..5
cic_panel <- function(n = 200, seed = 4) {
  set.seed(seed)
  G <- sample(c(0, 3, 4), n, replace = TRUE)
  d <- expand.grid(t = 1:5, id = seq_len(n))
  d$g <- G[d$id]
  u <- stats::pnorm(stats::rnorm(n)[d$id] + stats::rnorm(nrow(d), sd = 0.5))
  d$y <- exp(0.2 * d$t + stats::qnorm(u)) + (d$g > 0 & d$t >= d$g) * (1 + u)
  d$cl <- d$id %% 20
  d
}

test_that("CiC on the tiny panel: the counterfactuals, ATT and QTTs computed by hand", {
  # F00(2.5) = 2/4, Q01(1/2) (type 1: the ceiling(4 * 0.5) = 2nd value) = 4;
  # F00(4) = 1, Q01(1) = 8: counterfactuals 4 and 8.
  # ATT = mean(10, 3) - mean(4, 8) = 6.5 - 6 = 0.5.
  # QTT(0.5) = Q(y11: 3, 10; the 1st) - Q(cf: 4, 8; the 1st) = 3 - 4 = -1;
  # QTT(0.75) = the 2nd of each: 10 - 8 = 2.
  f <- did_cic(cic_tiny(), "y", "id", "t", "g", probs = c(0.5, 0.75), nboot = 0)
  expect_identical(f$distributions[[1]]$counterfactual, c(4, 8))
  expect_identical(f$distributions[[1]]$treated, c(3, 10))
  expect_equal(f$distributions[[1]]$base, 1)
  expect_equal(unname(coef(f)[c("ATT", "ATT(2,2)", "QTT::2,2,0.5", "QTT::2,2,0.75")]), c(0.5, 0.5, -1, 2),
               tolerance = 1e-14)
  expect_identical(f$coeftable$quantile, c(NA, NA, 0.5, 0.75))
  expect_identical(f$coeftable$group, c(NA, 2, 2, 2))
  expect_true(all(is.na(f$coeftable$std.error)))          # nboot = 0: no inference
  expect_identical(f$cells$n_treated, 2L); expect_identical(f$cells$n_control, 4L)
})

test_that("QDiD on the tiny panel by hand (type 7 quantiles)", {
  # p = 0.5: y11 (3, 10): index 1.5 -> 6.5; y10 (2.5, 4) -> 3.25;
  # y01 (2, 4, 6, 8): index 2.5 -> 5; y00 (1, 2, 3, 4) -> 2.5;
  # QTT = 6.5 - (3.25 + 5 - 2.5) = 0.75.
  # ATT: ranks of y10 in itself 0.5 and 1; Q01 = 5, 8; Q00 = 2.5, 4;
  # counterfactuals 2.5 + 5 - 2.5 = 5 and 4 + 8 - 4 = 8; ATT = 6.5 - 6.5 = 0.
  f <- did_cic(cic_tiny(), "y", "id", "t", "g", method = "qdid", probs = 0.5, nboot = 0)
  expect_equal(unname(coef(f)[c("ATT", "QTT::2,2,0.5")]), c(0, 0.75), tolerance = 1e-14)
  expect_identical(f$distributions[[1]]$counterfactual, c(5, 8))
  expect_identical(f$method, "qdid")
})

test_that("repeated cross-sections: the tiny data as independent rows give the panel's numbers", {
  d <- cic_tiny()
  d$id <- seq_len(nrow(d))                                 # every row its own individual
  for (m in c("cic", "qdid")) {
    fp <- did_cic(cic_tiny(), "y", "id", "t", "g", method = m, probs = c(0.25, 0.5, 0.75), nboot = 0)
    fr <- did_cic(d, "y", "id", "t", "g", method = m, probs = c(0.25, 0.5, 0.75), nboot = 0, panel = FALSE)
    expect_identical(coef(fr), coef(fp))
    expect_false(fr$panel)
  }
})

test_that("a panel cell uses the units observed in both of its periods", {
  d <- cic_tiny()
  # a fifth control observed only in period 2 does not enter the cell
  f0 <- did_cic(d, "y", "id", "t", "g", probs = 0.5, nboot = 0)
  d2 <- rbind(d, data.frame(id = 7, t = 2, g = 0, y = 100))
  f <- did_cic(d2, "y", "id", "t", "g", probs = 0.5, nboot = 0)
  expect_identical(coef(f), coef(f0))
  expect_identical(f$cells$n_control, 4L)
  # as repeated cross-sections, the row counts (and the counterfactual
  # with it: Q01 of (2, 4, 6, 8, 100) at 2/4 is the ceiling(2.5) = 3rd value, 6)
  d2$id <- seq_len(nrow(d2))
  fr <- did_cic(d2, "y", "id", "t", "g", probs = 0.5, nboot = 0, panel = FALSE)
  expect_identical(fr$distributions[[1]]$counterfactual, c(6, 100))
})

test_that("the overall ATT averages the cells weighted by cohort size; not-yet-treated controls take later cohorts", {
  d <- cic_panel()
  f <- did_cic(d, "y", "id", "t", "g", probs = 0.5, nboot = 0)
  cells <- f$cells
  expect_identical(paste(cells$group, cells$time), c("3 3", "3 4", "3 5", "4 4", "4 5"))
  expect_identical(cells$base, c(2, 2, 2, 3, 3))
  size <- c(`3` = sum(d$g == 3 & d$t == 1), `4` = sum(d$g == 4 & d$t == 1))
  w <- size[as.character(cells$group)]
  att <- coef(f)[sprintf("ATT(%s,%s)", cells$group, cells$time)]
  expect_equal(coef(f)[["ATT"]], sum(w * att) / sum(w), tolerance = 1e-14)
  expect_identical(cells$n_control, rep(sum(d$g == 0 & d$t == 1), 5L))
  fn <- did_cic(d, "y", "id", "t", "g", probs = 0.5, nboot = 0, control_group = "notyettreated")
  # cell (3,3): never treated and cohort 4; later cells: never treated only
  expect_identical(fn$cells$n_control, c(sum(d$g %in% c(0, 4) & d$t == 1), rep(sum(d$g == 0 & d$t == 1), 4L)))
  expect_identical(unname(coef(fn)[c("ATT(3,4)", "ATT(4,4)")]), unname(coef(f)[c("ATT(3,4)", "ATT(4,4)")]))
  expect_false(identical(coef(fn)[["ATT(3,3)"]], coef(f)[["ATT(3,3)"]]))
  # did's spellings of the control group
  expect_identical(coef(did_cic(d, "y", "id", "t", "g", probs = 0.5, nboot = 0, control_group = "not_yet_treated")),
                   coef(fn))
})

test_that("CiC is invariant to a strictly increasing transformation of the outcome", {
  d <- cic_panel()
  p <- c(0.1, 0.3, 0.5, 0.9)
  f <- did_cic(d, "y", "id", "t", "g", probs = p, nboot = 0)
  d$ly <- log(d$y) * 3 + 1
  h <- function(v) log(v) * 3 + 1
  fl <- did_cic(d, "ly", "id", "t", "g", probs = p, nboot = 0)
  for (k in seq_along(f$distributions)) {
    a <- f$distributions[[k]]; b <- fl$distributions[[k]]
    # the counterfactual values transform with the outcome
    expect_equal(b$counterfactual, h(a$counterfactual), tolerance = 1e-12)
    # and so do the QTTs: h(Q11(p)) - h(Qcf(p)), type-1 quantiles being values of the samples
    q <- sprintf("QTT::%s,%s,%s", a$group, a$time, p)
    expect_equal(unname(coef(fl)[q]),
                 unname(h(stats::quantile(a$treated, p, type = 1)) - h(stats::quantile(a$counterfactual, p, type = 1))),
                 tolerance = 1e-12)
  }
  # QDiD is not: a differences-in-quantiles model changes under log
  g <- did_cic(d, "y", "id", "t", "g", probs = p, nboot = 0, method = "qdid")
  gl <- did_cic(d, "ly", "id", "t", "g", probs = p, nboot = 0, method = "qdid")
  a <- g$distributions[[1]]
  expect_gt(max(abs(gl$distributions[[1]]$counterfactual - h(a$counterfactual))), 1e-3)
})

test_that("row order does not change any number, bootstrap included; the caller's data is unchanged", {
  d <- cic_panel()
  before <- d
  set.seed(3); f <- did_cic(d, "y", "id", "t", "g", probs = c(0.25, 0.5), nboot = 60)
  expect_identical(d, before)
  set.seed(1); o <- sample(nrow(d))
  set.seed(3); fo <- did_cic(d[o, ], "y", "id", "t", "g", probs = c(0.25, 0.5), nboot = 60)
  expect_identical(fo$coeftable, f$coeftable)
  expect_identical(fo$vcov, f$vcov)
  dr <- d; dr$id2 <- seq_len(nrow(dr))
  set.seed(3); r1 <- did_cic(dr, "y", "id2", "t", "g", probs = 0.5, nboot = 40, panel = FALSE)
  set.seed(3); r2 <- did_cic(dr[rev(seq_len(nrow(dr))), ], "y", "id2", "t", "g", probs = 0.5, nboot = 40, panel = FALSE)
  expect_identical(r2$coeftable, r1$coeftable)
})

test_that("the bootstrap: reproducible under set.seed(), the same with any thread count, covariance of the draws", {
  d <- cic_panel()
  set.seed(11); a <- did_cic(d, "y", "id", "t", "g", probs = c(0.25, 0.75), nboot = 200)
  set.seed(11); b <- did_cic(d, "y", "id", "t", "g", probs = c(0.25, 0.75), nboot = 200)
  expect_identical(a$coeftable, b$coeftable)
  set.seed(12); c2 <- did_cic(d, "y", "id", "t", "g", probs = c(0.25, 0.75), nboot = 200)
  expect_false(identical(a$coeftable$std.error, c2$coeftable$std.error))
  old <- dd_threads(); on.exit(dd_threads(old))
  dd_threads(1); set.seed(11); t1 <- did_cic(d, "y", "id", "t", "g", probs = c(0.25, 0.75), nboot = 200)
  dd_threads(2, throttle = 1); set.seed(11); t2 <- did_cic(d, "y", "id", "t", "g", probs = c(0.25, 0.75), nboot = 200)
  expect_identical(t1$coeftable, a$coeftable)
  expect_identical(t2$coeftable, a$coeftable)
  # the overall ATT's variance is w' V w over the cells' ATTs (one covariance)
  V <- a$vcov
  cells <- sprintf("ATT(%s,%s)", a$cells$group, a$cells$time)
  size <- c(`3` = sum(d$g == 3 & d$t == 1), `4` = sum(d$g == 4 & d$t == 1))
  w <- size[as.character(a$cells$group)]; w <- w / sum(w)
  expect_equal(V["ATT", "ATT"], drop(t(w) %*% V[cells, cells] %*% w), tolerance = 1e-12)
  expect_equal(a$coeftable$std.error, unname(sqrt(diag(V))), tolerance = 1e-14)
  expect_identical(a$vcov_type, "bootstrap")
  # normal intervals, as qte
  tab <- a$coeftable
  expect_equal(tab$conf.low, tab$estimate - stats::qnorm(0.975) * tab$std.error, tolerance = 1e-12)
})

test_that("the bootstrap standard errors agree with a stratified bootstrap written here in R (Monte Carlo error)", {
  # one cohort (2x2); the estimator written from its definition with
  # quantile() and ecdf(); units resampled within cohorts with R's sample()
  set.seed(21)
  n <- 300
  G <- rep(c(0, 2), c(180, 120))
  u <- stats::runif(n)
  y1 <- stats::qnorm(u) + stats::rnorm(n, sd = 0.3)
  y2 <- exp(0.5 * stats::qnorm(u)) + (G == 2) * (0.5 + u) + stats::rnorm(n, sd = 0.3)
  d <- data.frame(id = rep(seq_len(n), 2), t = rep(1:2, each = n), g = rep(G, 2), y = c(y1, y2))
  cic <- function(i) {
    c0 <- i[G[i] == 0]; c1 <- i[G[i] == 2]
    cf <- stats::quantile(y2[c0], stats::ecdf(y1[c0])(y1[c1]), type = 1)
    mean(y2[c1]) - mean(cf)
  }
  set.seed(5)
  B <- 400
  draws <- replicate(B, cic(c(sample(which(G == 0), replace = TRUE), sample(which(G == 2), replace = TRUE))))
  se_r <- stats::sd(draws)
  set.seed(6)
  f <- did_cic(d, "y", "id", "t", "g", probs = 0.5, nboot = B)
  expect_equal(coef(f)[["ATT"]], cic(seq_len(n)), tolerance = 1e-12)
  # two independent estimates of one standard error from 400 draws each
  # differ by about 5% (sd); 15% is three of those
  expect_lt(abs(f$coeftable$std.error[1] / se_r - 1), 0.15)
})

test_that("with `cluster`, whole clusters are resampled", {
  # every unit duplicated under a new identifier, the pair forming a
  # cluster: resampling the pairs is resampling the original units (each
  # cluster as one unit), so the draws are the same as on the original
  # units clustered by themselves
  d <- cic_panel(n = 120)
  d1 <- d; d1$cl <- d1$id
  d2 <- d; d2$id <- d2$id + 10000; d2$cl <- d$id
  set.seed(9); a <- did_cic(d1, "y", "id", "t", "g", probs = c(0.3, 0.6), nboot = 80, cluster = "cl")
  set.seed(9); b <- did_cic(rbind(d1, d2), "y", "id", "t", "g", probs = c(0.3, 0.6), nboot = 80, cluster = "cl")
  expect_equal(b$coeftable$estimate, a$coeftable$estimate, tolerance = 1e-12)
  expect_equal(b$coeftable$std.error, a$coeftable$std.error, tolerance = 1e-10)
  expect_identical(b$n_clusters, 120L)
  expect_match(b$vcov_label, "resampling clusters of cl")
  # clusters that are not units: a different resampling
  set.seed(9); f <- did_cic(d, "y", "id", "t", "g", probs = c(0.3, 0.6), nboot = 80, cluster = "cl")
  expect_identical(f$n_clusters, 20L)
  expect_false(isTRUE(all.equal(f$coeftable$std.error, a$coeftable$std.error)))
  # a cluster that is not constant within units
  d$cl2 <- d$t
  expect_error(did_cic(d, "y", "id", "t", "g", cluster = "cl2", nboot = 10), "`cluster` = \"cl2\" must be constant within each unit")
})

test_that("bad input: probs, method, control group, missing outcomes, empty cells, degenerate CiC, covariates", {
  d <- cic_panel()
  e <- function(...) expect_error(did_cic(d, "y", "id", "t", "g", nboot = 0, ...), class = "error")
  expect_error(did_cic(d, "y", "id", "t", "g", probs = c(0, 0.5)), "`probs` must lie strictly between 0 and 1; got 0 (element 1)", fixed = TRUE)
  expect_error(did_cic(d, "y", "id", "t", "g", probs = c(0.5, 1)), "`probs` must lie strictly between 0 and 1; got 1 (element 2)", fixed = TRUE)
  expect_error(did_cic(d, "y", "id", "t", "g", probs = -0.1), "got -0.1", fixed = TRUE)
  expect_error(did_cic(d, "y", "id", "t", "g", probs = c(0.5, 0.25)), "`probs` must be strictly increasing; got c(0.50, 0.25)", fixed = TRUE)
  expect_error(did_cic(d, "y", "id", "t", "g", probs = c(0.5, 0.5)), "`probs` must be strictly increasing")
  expect_error(did_cic(d, "y", "id", "t", "g", probs = c(0.5, NA)), "`probs` must be a non-empty numeric vector without missing values")
  expect_error(did_cic(d, "y", "id", "t", "g", probs = "0.5"), "`probs` must be a non-empty numeric vector")
  expect_error(did_cic(d, "y", "id", "t", "g", probs = numeric()), "`probs` must be a non-empty numeric vector")
  expect_error(did_cic(d, "y", "id", "t", "g", method = "changes"), "`method`.*\"changes\"")
  expect_error(did_cic(d, "y", "id", "t", "g", control_group = "last"), "`control_group`.*\"last\"")
  expect_error(did_cic(d, "y", "id", "t", "g", panel = NA), "`panel` must be TRUE or FALSE; got NA")
  expect_error(did_cic(d, "y", "id", "t", "g", nboot = -1), "`nboot` must be a whole number")
  expect_error(did_cic(d, "y", "id", "t", "g", iters = 10), "has no argument `iters`")
  # missing outcomes: an error naming the column and the row
  dm <- d; dm$y[7] <- NA
  expect_error(did_cic(dm, "y", "id", "t", "g", nboot = 0),
               "`yname` = \"y\" has 1 missing value(s) (first in row 7)", fixed = TRUE)
  # no never-treated units: the cells have no control group
  dn <- d[d$g != 0, ]
  expect_error(did_cic(dn, "y", "id", "t", "g", nboot = 0),
               "cell (cohort 3, period 3): the control group (never treated) has no units observed in both periods in period 2 of `tname` = \"t\" and 3",
               fixed = TRUE)
  # not-yet-treated: cohort 4 serves cohort 3 in period 3, and nothing is left for period 4
  expect_error(did_cic(dn, "y", "id", "t", "g", nboot = 0, control_group = "notyettreated"),
               "cell (cohort 3, period 4): the control group (never or not yet treated) has no units", fixed = TRUE)
  # a cohort whose units are all missing in the base period
  dc <- d[!(d$g == 4 & d$t == 3), ]
  expect_error(did_cic(dc, "y", "id", "t", "g", nboot = 0), "cell (cohort 4, period 4): the cohort (`gname` = 4) has no units", fixed = TRUE)
  dr <- dc; dr$id <- seq_len(nrow(dr))
  expect_error(did_cic(dr, "y", "id", "t", "g", nboot = 0, panel = FALSE),
               "cell (cohort 4, period 4): the cohort (`gname` = 4) has no rows in period 3", fixed = TRUE)
  # CiC with a constant control outcome in the base period
  dk <- d; dk$y[dk$g == 0 & dk$t == 2] <- 1
  expect_error(did_cic(dk, "y", "id", "t", "g", nboot = 0),
               "cell (cohort 3, period 3): the control group's outcome in the base period 2 is constant (1 for all", fixed = TRUE)
  expect_silent(did_cic(dk, "y", "id", "t", "g", nboot = 0, method = "qdid"))
  # a constant outcome (the shared check)
  dk$y <- 2
  expect_error(did_cic(dk, "y", "id", "t", "g", nboot = 0), "`yname` = \"y\" is constant")
  # covariates: a formula of columns
  expect_error(did_cic(d, "y", "id", "t", "g", xformla = ~ nothere), "`xformla` uses \"nothere\", which is not a column")
  expect_error(did_cic(d, "y", "id", "t", "g", xformla = "cl"), "`xformla` must be a one-sided formula")
  # cohorts without a base period are skipped with a note
  d1 <- d; d1$g[d1$g == 3] <- 1
  f <- did_cic(d1, "y", "id", "t", "g", nboot = 0, probs = 0.5)
  expect_identical(unique(f$cells$group), 4)
  expect_match(paste(f$notes, collapse = " "), "cohort(s) 1 skipped: no period of `tname` before the first treated period", fixed = TRUE)
  d1$g[d1$g == 4] <- 1
  expect_error(did_cic(d1, "y", "id", "t", "g", nboot = 0), "no cohort of `gname` = \"g\" has a period before its first treated period")
})

test_that("did's and qte's spellings: alp and biters", {
  d <- cic_panel(n = 80)
  set.seed(2); a <- did_cic(d, "y", "id", "t", "g", probs = 0.5, alp = 0.1, biters = 30)
  set.seed(2); b <- did_cic(d, "y", "id", "t", "g", probs = 0.5, alpha = 0.1, nboot = 30)
  expect_identical(a$coeftable, b$coeftable)
  expect_identical(a$nboot, 30L)
  expect_identical(a$alpha, 0.1)
})


# ---- covariates (xformla) -------------------------------------------------

# a two-period panel with a binary covariate z: controls 41 with z = 0 and
# 37 with z = 1, treated 23 and 29 (no group size times a tau of the grid
# 0.01, ..., 0.99 is a whole number, so every quantile regression has one
# solution), continuous outcomes
cic_zpanel <- function(seed = 3) {
  set.seed(seed)
  z <- c(rep(0:1, c(41, 37)), rep(0:1, c(23, 29)))
  g <- rep(c(0, 2), c(78, 52))
  n <- length(z)
  a <- stats::rnorm(n)
  d <- data.frame(id = rep(seq_len(n), each = 2), t = rep(1:2, n), g = rep(g, each = 2), z = rep(z, each = 2))
  d$y <- exp(0.5 * a[d$id] + stats::rnorm(nrow(d), sd = 0.5)) + d$z * (1 + d$t) +
    (d$g == 2 & d$t == 2) * (1 + d$z)
  d
}

test_that("a binary covariate: the quantile regressions are the groups' quantiles; the counterfactuals by hand", {
  # With x = (1, z) the fitted tau-quantile at z is the type-1 tau-quantile
  # of the sample's outcomes in group z (unique here). qte's step functions
  # on the grid u = 0.01, ..., 0.99, written here from their definition:
  #   Qhat(r) = q(u_k), k the last grid point <= r (the first if none);
  #   Fhat(v) = u_{k-1} (u_1 when k = 1 or no q <= v), k the index of the
  #     largest fitted quantile <= v, the last one among equal values.
  d <- cic_zpanel()
  u <- seq(0.01, 0.99, 0.01)
  probs <- c(0.1, 0.25, 0.5, 0.75, 0.9)
  Qhat <- function(q, r) q[max(1L, sum(u <= r))]
  Fhat <- function(q, v) {
    ok <- which(q <= v)
    if (!length(ok)) return(u[1])
    k <- max(ok[q[ok] == max(q[ok])])
    if (k == 1L) u[1] else u[k - 1L]
  }
  s <- function(t, g) d[d$t == t & d$g == g, ]
  s00 <- s(1, 0); s01 <- s(2, 0); s10 <- s(1, 2); s11 <- s(2, 2)
  gq <- function(smp, z) stats::quantile(smp$y[smp$z == z], u, type = 1, names = FALSE)
  for (m in c("cic", "qdid")) {
    cf <- vapply(seq_len(nrow(s10)), function(i) {
      z <- s10$z[i]; v <- s10$y[i]
      if (m == "cic") Qhat(gq(s01, z), Fhat(gq(s00, z), v))
      else {
        r <- Fhat(gq(s10, z), v)
        v + Qhat(gq(s01, z), r) - Qhat(gq(s00, z), r)
      }
    }, 0)
    q11 <- stats::quantile(s11$y, probs, type = if (m == "cic") 1 else 7, names = FALSE)
    want <- c(mean(s11$y) - mean(cf), q11 - stats::quantile(cf, probs, type = 1, names = FALSE))
    f <- did_cic(d, "y", "id", "t", "g", xformla = ~ z, method = m, probs = probs, nboot = 0)
    expect_equal(unname(coef(f)[-1]), want, tolerance = 1e-10)
    expect_equal(f$distributions[[1]]$counterfactual, sort(cf), tolerance = 1e-10)
    expect_identical(f$covariates, "z")
    expect_identical(f$xformla, ~ z)
    expect_identical(f$taus, u)
  }
  # and the quantile regression itself: the groups' quantiles
  X <- cbind(1, s00$z)
  b <- .Call(diffdiff:::C_rq, X, s00$y, rep(1, nrow(X)), u)
  expect_equal(b[1, ], gq(s00, 0), tolerance = 1e-12)
  expect_equal(b[1, ] + b[2, ], gq(s00, 1), tolerance = 1e-12)
})

test_that("covariates: row order, relabelled units, repeated cross-sections, the bootstrap", {
  d <- cic_panel(n = 160)
  set.seed(2)
  d$x <- stats::rnorm(160)[d$id] + 0.3 * (d$g > 0)
  d$y <- d$y + d$x * d$t
  f <- did_cic(d, "y", "id", "t", "g", xformla = ~ x, probs = c(0.25, 0.5, 0.75), nboot = 0)
  expect_identical(nrow(f$cells), 5L)
  set.seed(3)
  ds <- d[sample(nrow(d)), ]
  expect_identical(coef(did_cic(ds, "y", "id", "t", "g", xformla = ~ x, probs = c(0.25, 0.5, 0.75), nboot = 0)), coef(f))
  # without covariates the estimates differ (the covariate matters here)
  f0 <- did_cic(d, "y", "id", "t", "g", probs = c(0.25, 0.5, 0.75), nboot = 0)
  expect_gt(max(abs(coef(f) - coef(f0))), 0.05)
  # a covariate that does not vary within samples beyond the intercept's
  # role is refused; a constant shift of x changes nothing but the intercept
  d2 <- d; d2$x <- d2$x + 100
  expect_equal(coef(did_cic(d2, "y", "id", "t", "g", xformla = ~ x, probs = c(0.25, 0.5, 0.75), nboot = 0)), coef(f),
               tolerance = 1e-8)
  # repeated cross-sections run the same quantile regressions per period
  dr <- d; dr$id <- seq_len(nrow(dr))
  fr <- did_cic(dr, "y", "id", "t", "g", xformla = ~ x, probs = c(0.25, 0.5, 0.75), nboot = 0, panel = FALSE)
  expect_equal(coef(fr), coef(f), tolerance = 1e-10)
  # the bootstrap refits every draw: reproducible, positive standard errors
  set.seed(5); b1 <- did_cic(d, "y", "id", "t", "g", xformla = ~ x, probs = 0.5, nboot = 20, method = "qdid")
  set.seed(5); b2 <- did_cic(d, "y", "id", "t", "g", xformla = ~ x, probs = 0.5, nboot = 20, method = "qdid")
  expect_identical(b1$coeftable, b2$coeftable)
  expect_true(all(b1$coeftable$std.error > 0))
  expect_identical(coef(b1), coef(did_cic(d, "y", "id", "t", "g", xformla = ~ x, probs = 0.5, nboot = 0, method = "qdid")))
})

test_that("covariates: bad input (collinear, too few observations in a cell, no terms)", {
  d <- cic_panel(n = 120)
  set.seed(4)
  d$x <- stats::rnorm(120)[d$id]
  d$x2 <- 2 * d$x
  expect_error(did_cic(d, "y", "id", "t", "g", xformla = ~ x + x2, nboot = 0),
               "cell (cohort 3, period 3): the covariates of `xformla` are collinear in the control group in the base period 2 (x2: rank 2 of 3)",
               fixed = TRUE)
  # a covariate constant among the controls: collinear with the intercept
  d$k <- ifelse(d$g == 0, 1, d$x)
  expect_error(did_cic(d, "y", "id", "t", "g", xformla = ~ k, nboot = 0), "are collinear in the control group in the base period 2")
  # QDiD also fits the cohort in the base period
  d$k2 <- ifelse(d$g == 3, 1, d$x)
  expect_silent(did_cic(d, "y", "id", "t", "g", xformla = ~ k2, nboot = 0, probs = 0.5))
  expect_error(did_cic(d, "y", "id", "t", "g", xformla = ~ k2, nboot = 0, method = "qdid"),
               "cell (cohort 3, period 3): the covariates of `xformla` are collinear in the cohort in the base period 2", fixed = TRUE)
  # fewer observations than coefficients
  tiny <- cic_tiny(); tiny$a <- c(1, 1, 2, 2, 3, 3, 5, 5, 1, 1, 2, 2); tiny$b <- tiny$a^2
  expect_error(did_cic(tiny, "y", "id", "t", "g", xformla = ~ a + b, nboot = 0, method = "qdid"),
               "cell (cohort 2, period 2): the cohort in the base period 1 has 2 observation(s), fewer than the 3 coefficients of the quantile regressions on `xformla` (intercept and a, b)",
               fixed = TRUE)
  expect_error(did_cic(d, "y", "id", "t", "g", xformla = ~ 1, nboot = 0), "has no covariate terms")
  # missing covariate values: the shared rule drops the row, with a message
  # (the unit then leaves the cells of that period)
  i0 <- min(d$id[d$g == 0])                                # a control unit
  dm <- d; dm$x[dm$id == i0 & dm$t == 2] <- NA
  expect_message(fm <- did_cic(dm, "y", "id", "t", "g", xformla = ~ x, nboot = 0, probs = 0.5),
                 "1 observation removed because of NA/NaN/Inf values (1 in `xformla`)", fixed = TRUE)
  full <- did_cic(d, "y", "id", "t", "g", xformla = ~ x, nboot = 0, probs = 0.5)
  expect_identical(fm$cells$n_control_base[fm$cells$base == 2], full$cells$n_control_base[full$cells$base == 2] - 1L)
})
