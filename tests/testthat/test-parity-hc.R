# vcov = "HC2" and "HC3" (issue 44) against sandwich::vcovHC() on lm() with
# the fixed effects as factors: the leverages include the fixed effects'
# part (the fixed effect with the most levels in closed form, the others
# through their demeaned indicators). Standard errors to 1e-8 (testthat's
# relative): two-way fixed effects on an unbalanced panel, weights, a third
# fixed effect, the event study (its cell regressors made dense), the 2x2
# without fixed effects.

hc_panel <- function(n = 60, T = 5, seed = 1) {
  set.seed(seed)
  d <- expand.grid(t = seq_len(T), id = seq_len(n))[, c("id", "t")]
  d$g <- c(0, 3, 4)[d$id %% 3 + 1]
  d$D <- as.integer(d$g > 0 & d$t >= d$g)
  d$x <- rnorm(nrow(d))
  d$w <- runif(n, 0.5, 2)[d$id]
  d$region <- (d$id %% 4)
  d$rt <- paste(d$region, d$t)
  d$y <- d$id / 10 + 0.3 * d$t + d$D + 0.5 * d$x + rnorm(nrow(d)) * (1 + d$D + (d$id %% 5 == 0))
  d[-c(3, 17, 44, 101), ]                         # unbalanced
}

test_that("did_twfe(vcov = 'HC2' / 'HC3') equals sandwich::vcovHC on lm() with the fixed effects as factors", {
  need_peer("sandwich")
  d <- hc_panel()
  for (ty in c("HC2", "HC3")) for (wt in c(FALSE, TRUE)) {
    f <- did_twfe(d, "y", "id", "t", "D", xformla = ~ x, vcov = ty, weightsname = if (wt) "w")
    m <- stats::lm(y ~ D + x + factor(id) + factor(t), data = d, weights = if (wt) d$w)
    V <- sandwich::vcovHC(m, type = ty)[c("D", "x"), c("D", "x")]
    lab <- paste(ty, if (wt) "weighted" else "unweighted")
    expect_equal(f$coeftable$std.error[match(c("ATT", "x"), f$coeftable$term)], unname(sqrt(diag(V))),
                 tolerance = 1e-8, label = lab)
    expect_identical(f$vcov_type, ty)
    expect_equal(f$df, stats::df.residual(m), label = lab)
  }
  # a third fixed effect (region x period)
  f <- did_twfe(d, "y", "id", "t", "D", xformla = ~ x, fe = "rt", vcov = "HC3")
  m <- stats::lm(y ~ D + x + factor(id) + factor(t) + factor(rt), data = d)
  V <- sandwich::vcovHC(m, type = "HC3")
  expect_equal(f$coeftable$std.error[match(c("ATT", "x"), f$coeftable$term)], unname(sqrt(diag(V)[c("D", "x")])),
               tolerance = 1e-8)
})

test_that("did_event and did_2x2 with HC2 / HC3 equal sandwich::vcovHC", {
  need_peer("sandwich")
  d <- hc_panel(seed = 2)
  d$rel <- ifelse(d$g > 0, d$t - d$g, NA)
  es <- sort(setdiff(unique(d$rel[!is.na(d$rel)]), -1))
  for (e in es) d[[paste0("e", match(e, es))]] <- as.integer(!is.na(d$rel) & d$rel == e)
  fml <- stats::as.formula(paste("y ~", paste0("e", seq_along(es), collapse = " + "), "+ factor(id) + factor(t)"))
  for (ty in c("HC2", "HC3")) {
    f <- did_event(d, "y", "id", "t", "g", vcov = ty)
    expect_identical(f$path, "dense")              # (the cell regressors are made dense for the leverages)
    m <- stats::lm(fml, data = d)
    V <- sandwich::vcovHC(m, type = ty)
    expect_equal(f$coeftable$std.error[match(sprintf("event::%d", es), f$coeftable$term)],
                 unname(sqrt(diag(V)[paste0("e", seq_along(es))])), tolerance = 1e-8, label = ty)
  }
  d$tr <- as.integer(d$g > 0); d$post <- as.integer(d$t >= 3)
  for (ty in c("HC2", "HC3")) {
    f <- did_2x2(d, "y", "tr", "post", vcov = ty)
    m <- stats::lm(y ~ tr * post, data = d)
    expect_equal(f$coeftable$std.error, unname(sqrt(diag(sandwich::vcovHC(m, type = ty)))), tolerance = 1e-8)
  }
})

test_that("HC2 / HC3: leverage-1 observations and the multiplier bootstrap are errors; HC3 >= HC2 >= HC0", {
  d <- hc_panel(seed = 3)
  d1 <- rbind(d, transform(d[1, ], id = 999L))      # a unit seen once: a fixed-effect singleton
  expect_error(did_twfe(d1, "y", "id", "t", "D", vcov = "HC2", drop_singletons = FALSE),
               "`vcov` = \"HC2\": 1 observation\\(s\\) have leverage 1")
  expect_silent(suppressMessages(did_twfe(d1, "y", "id", "t", "D", vcov = "HC2")))
  s <- vapply(c("HC0", "HC2", "HC3"), function(v) did_twfe(d, "y", "id", "t", "D", vcov = v)$coeftable$std.error[1], 0)
  expect_true(s[["HC0"]] < s[["HC2"]] && s[["HC2"]] < s[["HC3"]])
  expect_error(did_event(d, "y", "id", "t", "g", vcov = "HC3", nboot = 99, cband = TRUE),
               "does not combine with `vcov` = \"HC3\"")
  expect_error(did_twfe(d, "y", "id", "t", "D", vcov = "HC2", cluster = "region"), "does not use `cluster`")
})

test_that("HC2 / HC3 of Poisson and logit fits (the IRLS engine) equal sandwich::vcovHC on glm()", {
  need_peer("sandwich")
  set.seed(4)
  n <- 400
  x <- rnorm(n); f <- sample(1:12, n, TRUE)
  yp <- rpois(n, exp(0.3 + 0.4 * x + f / 12))
  yl <- rbinom(n, 1, plogis(-0.2 + 0.8 * x + (f %% 3) / 3))
  fe <- list(f = diffdiff:::dd_codes(f))
  for (fam in c("poisson", "logit")) {
    y <- if (fam == "poisson") yp else yl
    g <- stats::glm(y ~ x + factor(f), family = if (fam == "poisson") stats::poisson() else stats::binomial(),
                    control = stats::glm.control(epsilon = 1e-14, maxit = 100))
    r <- diffdiff:::dd_glm(y, cbind(x = x), fe = fe, family = fam)
    for (ty in c("HC2", "HC3")) {
      v <- diffdiff:::dd_vcov(r$reg, ty)
      expect_equal(sqrt(v$V["x", "x"]), sqrt(sandwich::vcovHC(g, type = ty)["x", "x"]), tolerance = 1e-8,
                   label = paste(fam, ty))
    }
  }
})
