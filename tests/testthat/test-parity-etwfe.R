# did_etwfe() against the live etwfe 0.6.2 (CRAN; fixest and marginaleffects
# underneath): cell coefficients 1e-8, their SEs 1e-6 (relative), emfx()
# aggregates 1e-8 and their SEs 1e-5 relative: marginaleffects differentiates
# numerically (forward differences with steps ~1.5e-8 |beta|), which puts
# noise of about 1e-6 (up to 1e-5) into its SEs; did_ddd's derivatives are
# exact. Poisson and logit fits run with glm.tol = 1e-12 on both sides.

peer_backports()   # marginaleffects 1.0.0 on R < 4.4 (helper-parity.R)
et <- function(...) suppressMessages(etwfe::etwfe(...))
et_cells <- function(m) {
  cf <- stats::coef(m)
  k <- grepl("^\\.Dtreat:", names(cf)) & !grepl("_dm$", names(cf))
  g <- sub(".*::([0-9]+):.*", "\\1", names(cf)[k]); t <- sub(".*::([0-9]+)$", "\\1", names(cf)[k])
  list(coef = stats::setNames(unname(cf[k]), sprintf("ATT(%s,%s)", g, t)),
       se = stats::setNames(unname(sqrt(diag(stats::vcov(m)))[k]), sprintf("ATT(%s,%s)", g, t)))
}
et_check <- function(f, m, lab, coef_tol = 1e-8) {
  ec <- et_cells(m)
  tab <- f$coeftable
  k <- match(names(ec$coef), tab$term)
  expect_false(anyNA(k), label = paste(lab, "cells"))
  expect_identical(sort(tab$term[grepl("^ATT\\([0-9]+,[0-9]+\\)$", tab$term)]), sort(names(ec$coef)))
  expect_equal(tab$estimate[k], unname(ec$coef), tolerance = coef_tol, label = paste(lab, "coef"))
  expect_equal(tab$std.error[k], unname(ec$se), tolerance = 1e-6, label = paste(lab, "coef SE"))
  for (ty in c("simple", "group", "calendar", "event")) {
    e <- suppressWarnings(etwfe::emfx(m, type = ty))
    a <- aggregate(f, type = ty)$coeftable
    expect_identical(nrow(a), nrow(e), label = paste(lab, ty, "rows"))
    expect_equal(a$estimate, e$estimate, tolerance = 1e-8, label = paste(lab, ty))
    ok <- !is.na(e$std.error) & e$std.error > 0
    expect_equal(is.na(a$std.error), !ok, label = paste(lab, ty, "NA SEs"))
    expect_equal(a$std.error[ok], e$std.error[ok], tolerance = 1e-5, label = paste(lab, ty, "SE"))
  }
}

test_that("did_etwfe equals etwfe + emfx on mpdta (linear; not-yet and never treated; covariates; vcov)", {
  need_peer("etwfe")
  need_peer("did")
  data("mpdta", package = "did", envir = environment())
  m0 <- mpdta
  for (cg in c("notyet", "never")) for (xf in list(NULL, ~ lpop)) for (vc in c("iid", "cluster")) {
    fml <- if (is.null(xf)) lemp ~ 0 else lemp ~ lpop
    lab <- paste(cg, deparse(fml), vc)
    m <- if (vc == "iid") et(fml, tvar = year, gvar = first.treat, data = mpdta, cgroup = cg)
         else et(fml, tvar = year, gvar = first.treat, data = mpdta, cgroup = cg, vcov = ~countyreal)
    f <- did_etwfe(mpdta, "lemp", "countyreal", "year", "first.treat", xformla = xf, cgroup = cg,
                   vcov = if (vc == "iid") "iid" else NULL)
    et_check(f, m, lab)
  }
  expect_identical(mpdta, m0)
  # unit fixed effects (etwfe's ivar) and explicit indicators (fe = "none")
  m <- et(lemp ~ lpop, tvar = year, gvar = first.treat, data = mpdta, ivar = countyreal, vcov = ~countyreal)
  f <- suppressMessages(did_etwfe(mpdta, "lemp", "countyreal", "year", "first.treat", xformla = ~ lpop, fe = "unit"))
  et_check(f, m, "ivar")
  m <- et(lemp ~ lpop, tvar = year, gvar = first.treat, data = mpdta, fe = "none", cgroup = "never",
                    vcov = ~countyreal)
  f <- did_etwfe(mpdta, "lemp", "countyreal", "year", "first.treat", xformla = ~ lpop, fe = "none",
                 control_group = "nevertreated")
  et_check(f, m, "fe none")
  # the typed event study: never-treated comparisons, reference -1
  es <- aggregate(f, type = "dynamic")
  expect_identical(es$event_study$reference, -1)
  expect_false(-1 %in% es$event_study$event)
})

test_that("did_etwfe with sampling weights: etwfe's weighted regression; aggregates weighted too", {
  need_peer("etwfe")
  need_peer("did")
  data("mpdta", package = "did", envir = environment())
  set.seed(3)
  w <- runif(500, 0.5, 2)
  mpdta$w <- w[match(mpdta$countyreal, unique(mpdta$countyreal))]
  m <- et(lemp ~ lpop, tvar = year, gvar = first.treat, data = mpdta, weights = ~w, vcov = ~countyreal)
  f <- did_etwfe(mpdta, "lemp", "countyreal", "year", "first.treat", xformla = ~ lpop, weightsname = "w")
  ec <- et_cells(m)
  k <- match(names(ec$coef), f$coeftable$term)
  expect_equal(f$coeftable$estimate[k], unname(ec$coef), tolerance = 1e-8)
  expect_equal(f$coeftable$std.error[k], unname(ec$se), tolerance = 1e-6)
  # emfx averages every row with weight one; did_etwfe weights them: equal
  # weights reproduce emfx, the sampling weights move the average
  a <- aggregate(f, type = "simple")$coeftable$estimate
  e <- suppressWarnings(etwfe::emfx(m, type = "simple"))$estimate
  expect_false(isTRUE(all.equal(a, e)))
  mpdta$one <- 1
  f1 <- did_etwfe(mpdta, "lemp", "countyreal", "year", "first.treat", xformla = ~ lpop, weightsname = "one")
  m1 <- et(lemp ~ lpop, tvar = year, gvar = first.treat, data = mpdta, vcov = ~countyreal)
  expect_equal(aggregate(f1, type = "simple")$coeftable$estimate, etwfe::emfx(m1, type = "simple")$estimate,
               tolerance = 1e-8)
})

test_that("did_etwfe equals etwfe + emfx for Poisson (mpdta) and logit (simulated)", {
  need_peer("etwfe")
  need_peer("did")
  data("mpdta", package = "did", envir = environment())
  mpdta$emp <- exp(mpdta$lemp)
  for (cg in c("notyet", "never")) {
    m <- et(emp ~ lpop, tvar = year, gvar = first.treat, data = mpdta, cgroup = cg, family = "poisson",
                      vcov = ~countyreal, glm.tol = 1e-12)
    f <- did_etwfe(mpdta, "emp", "countyreal", "year", "first.treat", xformla = ~ lpop, cgroup = cg,
                   family = "poisson", glm_tol = 1e-12)
    et_check(f, m, paste("poisson", cg))
  }
  set.seed(12)
  n <- 1500
  g <- sample(c(3, 4, 5, Inf), n, replace = TRUE)
  d <- expand.grid(t = 1:6, id = 1:n)
  d$g <- g[d$id]; d$x <- rnorm(n)[d$id]
  d$yb <- rbinom(nrow(d), 1, stats::plogis(-0.5 + 0.1 * d$t + 0.3 * d$x + ifelse(d$t >= d$g, 0.5, 0)))
  m <- et(yb ~ x, tvar = t, gvar = g, data = d, family = "logit", vcov = ~id, glm.tol = 1e-12)
  f <- did_etwfe(d, "yb", "id", "t", "g", xformla = ~ x, family = "logit", glm_tol = 1e-12)
  et_check(f, m, "logit")
  # the link scale
  e <- etwfe::emfx(m, type = "simple", predict = "link")
  a <- aggregate(f, type = "simple", predict = "link")$coeftable
  expect_equal(a$estimate, e$estimate, tolerance = 1e-8)
  expect_equal(a$std.error, e$std.error, tolerance = 1e-5)
})

test_that("did_etwfe: the GLM kernel with absorbed fixed effects equals fixest::fepois / feglm", {
  need_peer("fixest")
  set.seed(5)
  n <- 400
  d <- expand.grid(t = 1:5, id = 1:n)
  d$x <- rnorm(nrow(d)); d$a <- rnorm(n)[d$id]
  d$y <- rpois(nrow(d), exp(0.2 + 0.3 * d$x + 0.5 * d$a + 0.05 * d$t))
  g <- diffdiff:::dd_glm(d$y, cbind(x = d$x), list(id = diffdiff:::dd_codes(d$id), t = diffdiff:::dd_codes(d$t)),
                         NULL, "poisson", tol = 1e-12)
  m <- fixest::fepois(y ~ x | id + t, d, glm.tol = 1e-12, fixef.rm = "none")
  expect_equal(unname(g$reg$coef[["x"]]), unname(stats::coef(m)[["x"]]), tolerance = 1e-8)
  expect_equal(g$eta, unname(stats::predict(m, type = "link")), tolerance = 1e-8)
  V <- diffdiff:::dd_glm_vcov(g, "cluster", list(id = diffdiff:::dd_codes(d$id)))$V
  expect_equal(sqrt(V[1, 1]), unname(fixest::se(m, cluster = ~id)[["x"]]), tolerance = 1e-6)
})

test_that("did_etwfe: bad input gets errors naming the argument and value", {
  need_peer("did")
  data("mpdta", package = "did", envir = environment())
  run <- function(dd = mpdta, ...) did_etwfe(dd, "lemp", "countyreal", "year", "first.treat", ...)
  mpdta$neg <- mpdta$lemp - 8
  expect_error(did_etwfe(mpdta, "neg", "countyreal", "year", "first.treat", family = "poisson"),
               "`yname` = \"neg\" has negative values")
  expect_error(run(family = "logit"), "`yname` = \"lemp\" has values other than 0 and 1")
  expect_error(run(family = "probit"), "`family`")
  mpdta$e <- exp(mpdta$lemp)
  expect_error(did_etwfe(mpdta, "e", "countyreal", "year", "first.treat", family = "poisson", fe = "cohort"),
               "`fe` = \"cohort\" with `family` = \"poisson\"")
  expect_error(run(mpdta[mpdta$first.treat != 0, ], control_group = "nevertreated"), "no never-treated units")
  mpdta$cx <- mpdta$first.treat / 1000
  expect_error(run(xformla = ~ cx), "'cx' is constant within every treated cohort")
  expect_error(run(fe = "twoway"), "`fe`")
  expect_error(run(ivar2 = 1), "no argument `ivar2`")
  expect_message(f <- run(mpdta[mpdta$first.treat != 0, ]), "191 observations of periods from 2007 on")
  expect_match(f$notes, "cohort 2007 \\(the last treated\\) is the comparison")
})

test_that("dd_glm: the sparse, dense and QR paths agree with glm.fit (Poisson and logit)", {
  set.seed(8)
  n <- 3000
  g <- sample(1:12, n, replace = TRUE)
  x <- rnorm(n)
  Xs <- cbind(x = x, sapply(2:12, function(k) as.double(g == k)))             # sparse: dummies
  colnames(Xs)[-1] <- paste0("g", 2:12)
  Xd <- cbind(x = x, x2 = rnorm(n), x3 = runif(n))                             # dense
  for (fam in c("poisson", "logit")) {
    eta <- 0.2 + 0.4 * x + 0.05 * g
    y <- if (fam == "poisson") rpois(n, exp(eta)) else rbinom(n, 1, stats::plogis(eta - 0.5))
    gf <- if (fam == "poisson") stats::poisson() else stats::binomial()
    for (X in list(Xs, Xd)) {
      r <- diffdiff:::dd_glm(y, X, NULL, NULL, fam, tol = 1e-12)
      ref <- stats::glm.fit(cbind(1, X), y, family = gf, control = stats::glm.control(epsilon = 1e-12))
      expect_identical(r$path, if (identical(X, Xs)) "sparse" else "dense")
      expect_equal(unname(r$reg$coef), unname(ref$coefficients), tolerance = 1e-8)
      V <- diffdiff:::dd_glm_vcov(r, "iid")$V
      expect_equal(unname(sqrt(diag(V))), unname(sqrt(diag(summary.glm(ref)$cov.unscaled)) * sqrt((n - 1) / (n - ncol(X) - 1))),
                   tolerance = 1e-7)
    }
    # fixed effects absorbed: the QR engine on demeaned working data
    r <- diffdiff:::dd_glm(y, cbind(x = x), list(g = diffdiff:::dd_codes(g)), NULL, fam, tol = 1e-12)
    expect_identical(r$path, "qr")
    ref <- stats::glm.fit(cbind(x, sapply(1:12, function(k) as.double(g == k))), y, family = gf,
                          control = stats::glm.control(epsilon = 1e-12))
    expect_equal(unname(r$reg$coef[["x"]]), unname(ref$coefficients[1]), tolerance = 1e-8)
  }
})

test_that("C_xtwx (sparse normal equations) equals crossprod across its interrupt-check block of 65,536 rows", {
  for (n in c(65535L, 65536L, 65537L)) {
    set.seed(n)
    g <- sample(1:10, n, replace = TRUE)
    X <- cbind(1, rnorm(n), sapply(2:10, function(k) as.double(g == k)))
    w <- runif(n); z <- rnorm(n)
    ne <- .Call(diffdiff:::C_xtwx, .Call(diffdiff:::C_csr, X), w, z)
    expect_equal(ne$A, crossprod(X, w * X), tolerance = 1e-12, label = paste("A", n))
    expect_equal(ne$r, drop(crossprod(X, w * z)), tolerance = 1e-12, label = paste("r", n))
  }
})

test_that("did_etwfe with Conley's spatial variance equals etwfe with fixest's conley()", {
  need_peer("etwfe")
  need_peer("did")
  data("mpdta", package = "did", envir = environment())
  set.seed(9)
  u <- sort(unique(mpdta$countyreal))
  mpdta$lat <- stats::runif(length(u), 35, 45)[match(mpdta$countyreal, u)]
  mpdta$lon <- stats::runif(length(u), -100, -85)[match(mpdta$countyreal, u)]
  # (a cutoff at which the covariance is positive definite: its repair acts on
  # each program's own regression, and did_etwfe's carries the cohort and
  # period effects as dummies, fixest's absorbs them)
  m <- et(lemp ~ lpop, tvar = year, gvar = first.treat, data = mpdta, vcov = fixest::conley(50, distance = "spherical"))
  f <- did_etwfe(mpdta, "lemp", "countyreal", "year", "first.treat", xformla = ~ lpop, vcov = dd_conley(50))
  et_check(f, m, "conley")
  expect_error(did_etwfe(mpdta, "lemp", "countyreal", "year", "first.treat", family = "poisson",
                         vcov = dd_conley(100)), "family` = \"gaussian\"")
})
