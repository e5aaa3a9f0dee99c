# did_lpdid() against the LP-DiD recipe of Dube, Girardi, Jorda and Taylor
# built here with fixest (live): for each horizon, feols(long difference ~
# switch | period) on that horizon's clean sample, clustered by unit with
# fixest's default small-sample factor (as the authors' R example files,
# which set ssc(adj = TRUE, cluster.adj = TRUE) to match reghdfe).
# Estimates to 1e-8 and standard errors to 1e-6 (the design's parity
# tolerances; measured differences are about 1e-13). Data: the castle
# doctrine panel the package ships (Cheng and Hoekstra 2013, as in
# bacondecomp), sim_panel.csv, and diff-diff's LP-DiD test panel
# (regenerated from its published generator, seed 20260629), whose values
# diff-diff 3.x stores in benchmarks/data/lpdid_golden.json (computed there
# with fixest): those numbers are checked too.

# the recipe: one feols per horizon on the clean sample, calendar leads and lags
lp_recipe <- function(d, y, id, t, g, hs, K, H, pmd = NULL, reweight = FALSE) {
  d <- d[order(d[[id]], d[[t]]), ]
  key <- paste(d[[id]], d[[t]])
  at <- function(k) d[[y]][match(paste(d[[id]], d[[t]] + k), key)]
  G <- ifelse(d[[g]] == 0, Inf, d[[g]])
  base <- if (is.null(pmd)) at(-1) else Reduce(`+`, lapply(seq_len(pmd), function(j) at(-j))) / pmd
  one <- function(target, hc) {
    s <- data.frame(dy = target - base, D = as.integer(d[[t]] == G), tt = d[[t]], id = d[[id]])
    ctrl <- d[[t]] < G & (if (hc >= 0) d[[t]] + hc < G else TRUE)
    s <- s[!is.na(s$dy) & (s$D == 1 | ctrl), ]
    if (reweight) {
      nt <- stats::ave(s$D, s$tt, FUN = length); nc <- stats::ave(1 - s$D, s$tt, FUN = sum)
      s$w <- nt / nc
      s <- s[nc > 0 & nc < nt, ]
      m <- fixest::feols(dy ~ D | tt, s, weights = ~w, vcov = ~id, ssc = fixest::ssc(adj = TRUE, cluster.adj = TRUE))
    } else m <- fixest::feols(dy ~ D | tt, s, vcov = ~id, ssc = fixest::ssc(adj = TRUE, cluster.adj = TRUE))
    c(b = unname(stats::coef(m)["D"]), se = unname(fixest::se(m)["D"]), n = stats::nobs(m))
  }
  out <- t(vapply(hs, function(h) one(at(h), h), numeric(3)))
  pre <- if (K >= 2) one(Reduce(`+`, lapply(2:K, function(k) at(-k))) / (K - 1), -2) else NULL
  post <- one(Reduce(`+`, lapply(0:H, at)) / (H + 1), H)
  rbind(out, pre, post)
}

lp_check <- function(fit, ref, label) {
  tab <- fit$coeftable
  expect_identical(nrow(tab), nrow(ref), label = label)
  expect_equal(tab$estimate, unname(ref[, "b"]), tolerance = 1e-8, label = paste(label, "estimates"))
  expect_equal(tab$std.error, unname(ref[, "se"]), tolerance = 1e-6, label = paste(label, "SEs"))
  expect_identical(fit$horizons$n, as.integer(ref[, "n"]), label = paste(label, "rows"))
}

test_that("did_lpdid equals the fixest recipe on the castle panel (VW, reweighted, pmd)", {
  need_peer("fixest")
  d <- utils::read.csv(system.file("extdata", "castle.csv", package = "diffdiff"))
  hs <- c(-3, -2, 0:4)
  for (rw in c(FALSE, TRUE)) {
    fit <- did_lpdid(d, "l_homicide", "sid", "year", gname = "effyear", pre_window = 3, post_window = 4, reweight = rw)
    lp_check(fit, lp_recipe(d, "l_homicide", "sid", "year", "effyear", hs, 3, 4, reweight = rw), paste("castle rw", rw))
  }
  fit <- did_lpdid(d, "l_homicide", "sid", "year", gname = "effyear", pre_window = 3, post_window = 4, pmd = 2)
  lp_check(fit, lp_recipe(d, "l_homicide", "sid", "year", "effyear", hs, 3, 4, pmd = 2), "castle pmd 2")
  expect_identical(fit$coeftable$term, c(paste0("event::", hs), "pooled::pre", "ATT"))
})

test_that("did_lpdid equals the recipe on an unbalanced panel with gaps, and t tests use G - 1 df", {
  need_peer("fixest")
  d <- utils::read.csv(system.file("extdata", "sim_panel.csv", package = "diffdiff"))
  set.seed(4)
  d <- d[-sample(nrow(d), 300), ]                 # interior gaps: calendar lags, not row lags
  fit <- did_lpdid(d, "y", "id", "year", gname = "first_treat", pre_window = 4, post_window = 3)
  ref <- lp_recipe(d, "y", "id", "year", "first_treat", c(-4:-2, 0:3), 4, 3)
  lp_check(fit, ref, "sim gaps")
  tab <- fit$coeftable
  G <- fit$horizons$clusters
  expect_equal(tab$p.value, 2 * stats::pt(-abs(tab$estimate / tab$std.error), G - 1), tolerance = 1e-12)
})

test_that("diff-diff's published LP-DiD numbers (lpdid_golden.json) on its regenerated test panel", {
  # diff-diff benchmarks/R/generate_lpdid_golden.R's panel (helper-lpdid.R)
  d <- lp_panel60()
  f <- function(...) did_lpdid(d, "y", "unit", "time", gname = "g", pre_window = 3, post_window = 4, ...)
  vw <- f()$coeftable
  # lpdid_golden.json (diff-diff, fixest 0.x): vw h = 0, 4, -3; ew h = 0; pmd 2 h = 0; pooled post and pre
  expect_equal(vw$estimate[vw$term == "event::0"], 2.891454184758, tolerance = 1e-11)
  expect_equal(vw$std.error[vw$term == "event::0"], 0.4972838592697, tolerance = 1e-11)
  expect_equal(vw$estimate[vw$term == "event::4"], 4.269176444588, tolerance = 1e-11)
  expect_equal(vw$std.error[vw$term == "event::4"], 0.396524220757, tolerance = 1e-10)
  expect_equal(vw$estimate[vw$term == "event::-3"], -0.1254433057345, tolerance = 1e-11)
  expect_equal(vw$std.error[vw$term == "event::-3"], 0.4292726043484, tolerance = 1e-11)
  expect_equal(vw$estimate[vw$term == "ATT"], 3.532265685012, tolerance = 1e-11)
  expect_equal(vw$std.error[vw$term == "ATT"], 0.3521082333958, tolerance = 1e-11)
  expect_equal(vw$estimate[vw$term == "pooled::pre"], -0.003540304476795, tolerance = 1e-10)
  expect_equal(vw$std.error[vw$term == "pooled::pre"], 0.377308359478, tolerance = 1e-10)
  ew <- f(reweight = TRUE)$coeftable
  expect_equal(ew$estimate[ew$term == "event::0"], 2.903628272087, tolerance = 1e-11)
  expect_equal(ew$std.error[ew$term == "event::0"], 0.4973282590126, tolerance = 1e-11)
  pm <- f(pmd = 2)$coeftable
  expect_equal(pm$estimate[pm$term == "event::0"], 2.832272836367, tolerance = 1e-11)
  expect_equal(pm$std.error[pm$term == "event::0"], 0.4337549369753, tolerance = 1e-11)
})

test_that("the covariance across horizons is the stacked cluster scores of the horizons' regressions", {
  need_peer("fixest")
  d <- utils::read.csv(system.file("extdata", "castle.csv", package = "diffdiff"))
  fit <- did_lpdid(d, "l_homicide", "sid", "year", gname = "effyear", pre_window = 2, post_window = 2)
  # by hand from fixest: scores w D~ e / sum D~^2 by state, times sqrt of each horizon's factor
  key <- paste(d$sid, d$year); at <- function(k) d$l_homicide[match(paste(d$sid, d$year + k), key)]
  G <- ifelse(d$effyear == 0, Inf, d$effyear)
  sc <- function(h) {
    s <- data.frame(dy = at(h) - at(-1), D = as.integer(d$year == G), tt = d$year, id = d$sid)
    s <- s[!is.na(s$dy) & (s$D == 1 | (d$year < G & (if (h >= 0) d$year + h < G else TRUE))), ]
    m <- fixest::feols(dy ~ D | tt, s)
    Dt <- fixest::demean(s$D, s$tt)[, 1]
    n <- nrow(s); k <- 1 + length(unique(s$tt)); Gc <- length(unique(s$id))
    v <- rowsum(Dt * stats::resid(m), s$id)[, 1] / sum(Dt^2) * sqrt(Gc / (Gc - 1) * (n - 1) / (n - k))
    v[as.character(sort(unique(d$sid)))] %||% 0
  }
  S <- vapply(c(-2, 0, 1, 2), sc, numeric(length(unique(d$sid))))
  S[is.na(S)] <- 0
  V <- crossprod(S)
  expect_equal(unname(fit$vcov[1:4, 1:4]), unname(V), tolerance = 1e-10)
  expect_true(abs(stats::cov2cor(fit$vcov)[2, 3]) > 0.05)       # the horizons are correlated
  es <- fit$event_study
  expect_false(is.null(es))
})
