# rd_robust() against the live rdrobust 4.1.1 (CRAN; tools/install-deps.sh),
# on its shipped example (rdrobust_RDsenate: vote on margin, cutoff 0) and
# three simulated designs. Tolerance 1e-8 (relative, testthat's) for every
# estimate, standard error, p-value, interval end and bandwidth; counts
# exact. Every bandwidth selector x vce x kernel is looped on RDsenate, and
# the other arguments (covariates, fuzzy, clusters, weights, p, q, deriv,
# rho, h and b per side, mass points, bwcheck, bwrestrict, stdvars,
# scaleregul, nnmatch, the cutoff) one at a time.

rd_senate <- function() {
  need_peer("rdrobust")
  e <- new.env()
  utils::data("rdrobust_RDsenate", package = "rdrobust", envir = e)
  d <- e$rdrobust_RDsenate
  set.seed(42)
  d$T <- as.numeric(runif(nrow(d)) < 0.2 + 0.6 * (d$margin >= 0))
  d$pop <- d$population / 1e6
  d[stats::complete.cases(d$vote, d$margin, d$presdemvoteshlag1), ]
}

rd_quiet <- function(expr) suppressWarnings(suppressMessages(expr))

# rd_robust's numbers against rdrobust's (r), with the first stage when fuzzy
expect_rd_equal <- function(fit, r, label) {
  tab <- fit$coeftable
  expect_identical(tab$term, c("conventional", "bias-corrected", "robust"), label = label)
  expect_equal(tab$estimate, unname(r$coef[, 1]), tolerance = 1e-8, label = paste(label, "estimate"))
  expect_equal(tab$std.error, unname(r$se[, 1]), tolerance = 1e-8, label = paste(label, "SE"))
  expect_equal(tab$p.value, unname(r$pv[, 1]), tolerance = 1e-8, label = paste(label, "p-value"))
  expect_equal(cbind(tab$conf.low, tab$conf.high), unname(r$ci), tolerance = 1e-8, label = paste(label, "CI"))
  expect_equal(fit$bandwidths$h, unname(r$bws["h", ]), tolerance = 1e-8, label = paste(label, "h"))
  expect_equal(fit$bandwidths$b, unname(r$bws["b", ]), tolerance = 1e-8, label = paste(label, "b"))
  expect_identical(as.numeric(fit$counts$n_h), as.numeric(r$N_h), label = paste(label, "N_h"))
  expect_identical(as.numeric(fit$counts$n_b), as.numeric(r$N_b), label = paste(label, "N_b"))
  expect_identical(as.numeric(fit$counts$n), as.numeric(r$N), label = paste(label, "N"))
  expect_equal(fit$sides$conventional, as.vector(r$tau_cl), tolerance = 1e-8, label = paste(label, "sides"))
  expect_equal(fit$sides$bias, as.vector(r$bias), tolerance = 1e-8, label = paste(label, "bias"))
  if (!is.null(r$tau_T)) {
    expect_equal(fit$first_stage$estimate[1:2], unname(r$tau_T[1:2]), tolerance = 1e-8,
                 label = paste(label, "first stage"))
    expect_equal(fit$first_stage$std.error[c(1, 3)], unname(r$se_T[c(1, 3)]), tolerance = 1e-8,
                 label = paste(label, "first-stage SE"))
  }
  if (!is.null(r$coef_covs))
    expect_equal(as.vector(fit$coef_covs), as.vector(r$coef_covs), tolerance = 1e-8,
                 label = paste(label, "covariate coefficients"))
}

test_that("rd_robust equals rdrobust on RDsenate for every selector, variance and kernel", {
  d <- rd_senate()
  for (bs in c("mserd", "msetwo", "msesum", "msecomb1", "msecomb2", "cerrd", "certwo", "cersum", "cercomb1", "cercomb2"))
    for (v in c("nn", "hc0", "hc1", "hc2", "hc3"))
      for (k in c("triangular", "epanechnikov", "uniform")) {
        fit <- rd_quiet(rd_robust(d, "vote", "margin", bwselect = bs, vce = v, kernel = k))
        r <- rd_quiet(rdrobust::rdrobust(d$vote, d$margin, bwselect = bs, vce = v, kernel = k))
        expect_rd_equal(fit, r, paste(bs, v, k))
      }
})

test_that("rd_robust equals rdrobust with covariates, fuzzy designs, clusters and weights", {
  d <- rd_senate()
  Z <- cbind(d$presdemvoteshlag1, d$pop)
  cases <- list(
    list("covariates", list(covs = ~ presdemvoteshlag1 + pop), list(covs = Z)),
    list("covariates, hc1, h and b", list(covs = c("presdemvoteshlag1", "pop"), h = 15, b = 25, vce = "hc1"),
         list(covs = Z, h = 15, b = 25, vce = "hc1")),
    list("covariates, msetwo, hc3", list(covs = ~ presdemvoteshlag1 + pop, bwselect = "msetwo", vce = "hc3"),
         list(covs = Z, bwselect = "msetwo", vce = "hc3")),
    list("fuzzy", list(fuzzy = "T"), list(fuzzy = d$T)),
    list("fuzzy, msetwo, hc2", list(fuzzy = "T", bwselect = "msetwo", vce = "hc2"),
         list(fuzzy = d$T, bwselect = "msetwo", vce = "hc2")),
    list("fuzzy with covariates", list(fuzzy = "T", covs = ~ presdemvoteshlag1 + pop),
         list(fuzzy = d$T, covs = Z)),
    list("fuzzy with covariates, cercomb2, hc3", list(fuzzy = "T", covs = ~ presdemvoteshlag1 + pop,
                                                      bwselect = "cercomb2", vce = "hc3"),
         list(fuzzy = d$T, covs = Z, bwselect = "cercomb2", vce = "hc3")),
    list("cluster", list(cluster = "state"), list(cluster = d$state)),
    list("cluster, h = b", list(cluster = "state", h = 15), list(cluster = d$state, h = 15)),
    list("cluster, h != b", list(cluster = "state", h = 15, b = 25), list(cluster = d$state, h = 15, b = 25)),
    list("cluster, hc1, msetwo, covariate", list(cluster = "state", vce = "hc1", bwselect = "msetwo",
                                                 covs = ~ presdemvoteshlag1),
         list(cluster = d$state, vce = "hc1", bwselect = "msetwo", covs = d$presdemvoteshlag1)),
    list("cluster, cerrd, fuzzy", list(cluster = "state", bwselect = "cerrd", fuzzy = "T"),
         list(cluster = d$state, bwselect = "cerrd", fuzzy = d$T)),
    list("cluster, fuzzy, covariates, h = b", list(cluster = "state", fuzzy = "T", covs = ~ pop, h = 20),
         list(cluster = d$state, fuzzy = d$T, covs = d$pop, h = 20)),
    list("weights", list(weightsname = "pop"), list(weights = d$pop)),
    list("weights, hc1, msesum", list(weightsname = "pop", vce = "hc1", bwselect = "msesum"),
         list(weights = d$pop, vce = "hc1", bwselect = "msesum")))
  for (cs in cases) {
    fit <- rd_quiet(do.call(rd_robust, c(list(d, "vote", "margin"), cs[[2]])))
    r <- rd_quiet(do.call(rdrobust::rdrobust, c(list(d$vote, d$margin), cs[[3]])))
    expect_rd_equal(fit, r, cs[[1]])
  }
  # the reduced form of a fuzzy fit is the sharp RD of the outcome at the same bandwidths
  fit <- rd_quiet(rd_robust(d, "vote", "margin", fuzzy = "T", covs = ~ pop))
  r <- rd_quiet(rdrobust::rdrobust(d$vote, d$margin, covs = d$pop, h = fit$bandwidths$h, b = fit$bandwidths$b))
  expect_equal(fit$reduced_form$estimate, unname(r$coef[, 1]), tolerance = 1e-8)
  expect_equal(fit$reduced_form$std.error, unname(r$se[, 1]), tolerance = 1e-8)
})

test_that("rd_robust equals rdrobust for other orders, derivatives, bandwidths and selector settings", {
  d <- rd_senate()
  d$mr <- round(d$margin)
  cases <- list(
    list(p = 0), list(p = 2), list(p = 2, q = 4, kernel = "epa"), list(p = 3, kernel = "uni"), list(deriv = 1),
    list(deriv = 1, p = 1), list(deriv = 1, p = 3, bwselect = "msetwo"), list(h = 12, rho = 0.5),
    list(h = c(10, 14), b = c(20, 18)), list(h = 8, b = 16, vce = "hc2"), list(masspoints = "off"),
    list(masspoints = "check"), list(bwcheck = 50), list(bwrestrict = FALSE), list(stdvars = FALSE),
    list(scaleregul = 0), list(scaleregul = 2), list(nnmatch = 5), list(c = 10), list(c = -20, bwselect = "msetwo"))
  for (a in cases) {
    fit <- rd_quiet(do.call(rd_robust, c(list(d, "vote", "margin"), a)))
    r <- rd_quiet(do.call(rdrobust::rdrobust, c(list(d$vote, d$margin), a)))
    expect_rd_equal(fit, r, paste(names(a), vapply(a, function(v) paste(v, collapse = "/"), ""), collapse = ", "))
  }
  # mass points: a rounded running variable (the bwcheck floor of masspoints = "adjust")
  for (a in list(list(), list(bwselect = "msetwo", vce = "hc2"), list(bwselect = "cercomb2"), list(masspoints = "off"))) {
    fit <- rd_quiet(do.call(rd_robust, c(list(d, "vote", "mr"), a)))
    r <- rd_quiet(do.call(rdrobust::rdrobust, c(list(d$vote, d$mr), a)))
    expect_rd_equal(fit, r, paste("mass points", paste(unlist(a), collapse = " ")))
  }
  expect_warning(suppressMessages(rd_robust(d, "vote", "mr")), "Mass points")
})

# three simulated designs: a smooth jump with heteroskedastic noise; a
# discrete running variable (ties, mass points) and a cutoff at 3; a fuzzy
# design with a covariate, clusters and weights
rd_sim <- function(design, n = 2500, seed = 11) {
  set.seed(seed)
  if (design == 1) {
    x <- rbeta(n, 2, 4) * 2 - 0.6
    y <- 1 + 0.6 * x - 0.8 * x^2 + 0.35 * (x >= 0) + rnorm(n, sd = 0.2 + 0.3 * abs(x))
    return(data.frame(x = x, y = y))
  }
  if (design == 2) {
    x <- sample(0:40, n, replace = TRUE) / 5
    y <- sin(x) + 0.5 * (x >= 3) + rnorm(n, sd = 0.5)
    return(data.frame(x = x, y = y))
  }
  x <- runif(n, -2, 2); z <- rnorm(n) + 0.3 * x
  g <- sample(1:60, n, replace = TRUE)
  t <- as.numeric(runif(n) < 0.15 + 0.55 * (x >= 0) + 0.05 * x)
  y <- 0.4 * x + 0.9 * t + 0.5 * z + rnorm(60)[g] * 0.3 + rnorm(n, sd = 0.4)
  data.frame(x = x, y = y, t = t, t1 = t * (x >= 0), z = z, g = g, w = runif(n, 0.5, 2))
}

test_that("rd_robust equals rdrobust on three simulated designs", {
  need_peer("rdrobust")
  d1 <- rd_sim(1); d2 <- rd_sim(2); d3 <- rd_sim(3)
  runs <- list(
    list(d1, list(), list()), list(d1, list(bwselect = "msetwo", vce = "hc1"), list(bwselect = "msetwo", vce = "hc1")),
    list(d1, list(bwselect = "cersum", kernel = "epa", p = 2), list(bwselect = "cersum", kernel = "epa", p = 2)),
    list(d2, list(c = 3), list(c = 3)), list(d2, list(c = 3, bwselect = "msecomb1", vce = "hc3"),
                                             list(c = 3, bwselect = "msecomb1", vce = "hc3")),
    list(d2, list(c = 3, masspoints = "off", kernel = "uni"), list(c = 3, masspoints = "off", kernel = "uni")),
    list(d3, list(fuzzy = "t", covs = ~ z), list(fuzzy = d3$t, covs = d3$z)),
    list(d3, list(fuzzy = "t", covs = ~ z, cluster = "g"), list(fuzzy = d3$t, covs = d3$z, cluster = d3$g)),
    list(d3, list(covs = ~ z, cluster = "g", weightsname = "w", bwselect = "certwo"),
         list(covs = d3$z, cluster = d3$g, weights = d3$w, bwselect = "certwo")),
    list(d3, list(fuzzy = "t", weightsname = "w", vce = "hc2", bwselect = "msecomb2"),
         list(fuzzy = d3$t, weights = d3$w, vce = "hc2", bwselect = "msecomb2")),
    # one-sided non-compliance (no treatment below the cutoff): selected as sharp
    list(d3, list(fuzzy = "t1"), list(fuzzy = d3$t1)),
    list(d3, list(fuzzy = "t1", covs = ~ z, bwselect = "certwo"), list(fuzzy = d3$t1, covs = d3$z, bwselect = "certwo")))
  for (i in seq_along(runs)) {
    z <- runs[[i]]
    fit <- rd_quiet(do.call(rd_robust, c(list(z[[1]], "y", "x"), z[[2]])))
    r <- rd_quiet(do.call(rdrobust::rdrobust, c(list(z[[1]]$y, z[[1]]$x), z[[3]])))
    expect_rd_equal(fit, r, sprintf("simulated run %d", i))
  }
})
