# did_cic() against qte 2.0.0 (Callaway; CRAN), its legacy CiC() and QDiD()
# (changes-in-changes and quantile DiD of one treated group and two periods),
# point estimates: the ATT and the QTT at every quantile level.
#
# qte cannot be installed into R 4.2.2's library: it imports quantreg, which
# imports MatrixModels, whose versions >= 0.5-3 need Matrix >= 1.6-0 (R 4.2.2
# ships Matrix 1.5-3). tools/install-qte.sh installs qte 2.0.0 with the
# archived Matrix 1.6-5 into a private library (tools/install-deps.sh runs it
# for `make test`; the Makefile passes the library as DIFFDIFF_QTE_LIB). A
# process that has loaded Matrix 1.5 cannot load Matrix 1.6, so qte runs in a
# child Rscript with that library first on its path (peer_subprocess(),
# helper-parity.R); data and results pass through temporary RDS files.
# Without the library the tests skip, or fail under
# DIFFDIFF_REQUIRE_PARITY=true (need_private_peer()).
#
# Each did_cic() cell (cohort g, period t, base period b) is the 2x2 that qte
# takes: cohort g (treat = 1) and the control group (treat = 0) in periods b
# (tmin1) and t. The Lalonde panel (qte's lalonde.psid.panel, GPL data, not
# copied into this package: the child process writes it out for the test)
# is one such 2x2 (treated in 1978, base 1975). The simulated data: a panel
# with two cohorts (continuous outcome; a rounded, discrete one with many
# ties and treated values outside the controls' range) and repeated cross
# sections.
# Tolerance: 1e-8 relative to max(1, |qte's value|) (the package's point
# estimate tolerance); measured: 0 (bit for bit) on every comparison below.

qte_lib <- function() need_private_peer("qte", "DIFFDIFF_QTE_LIB", "/tmp/qtelib", min_version = "2.0.0")

# jobs: list(data (a data frame, or "lalonde"), fun ("CiC" or "QDiD"),
# formula (a string), t, tmin1, tname, panel, probs)
qte_child <- function(jobs, lalonde = FALSE) {
  peer_subprocess(qte_lib(), c(
    "suppressMessages(library(qte))",
    "lal <- NULL",
    "if (isTRUE(input$lalonde)) {",
    "  e <- new.env(); utils::data('lalonde', package = 'qte', envir = e)",
    "  lal <- e$lalonde.psid.panel[, c('id', 'year', 're', 'treat')]",
    "}",
    "run <- function(j) {",
    "  d <- if (identical(j$data, 'lalonde')) lal else j$data",
    "  f <- get(j$fun, asNamespace('qte'))",
    "  o <- suppressWarnings(f(stats::as.formula(j$formula), t = j$t, tmin1 = j$tmin1, tname = j$tname,",
    "                          idname = 'id', data = d, panel = j$panel, se = FALSE, probs = j$probs))",
    "  list(ate = unname(o$ate), qte = unname(o$qte))",
    "}",
    "output <- list(version = as.character(utils::packageVersion('qte')), lalonde = lal,",
    "               res = lapply(input$jobs, run))"),
    input = list(jobs = jobs, lalonde = lalonde))
}

# largest difference relative to max(1, |reference|)
cic_rel <- function(a, b) max(abs(unname(a) - unname(b)) / pmax(1, abs(unname(b))))

# our ATT(g,t) and QTT::g,t,p of one cell
cic_cell <- function(fit, g, t) {
  cf <- fit$coefficients
  list(ate = cf[[sprintf("ATT(%s,%s)", g, t)]], qte = cf[startsWith(names(cf), sprintf("QTT::%s,%s,", g, t))])
}

# a panel of n units, periods 1..5, cohorts 3 and 4 and never treated; the
# outcome a nonlinear function of a unit rank (CiC's model) plus effects
# that grow with the rank
cic_sim_panel <- function(n = 300, seed = 11, discrete = FALSE) {
  set.seed(seed)
  G <- sample(c(0, 3, 4), n, replace = TRUE, prob = c(0.4, 0.3, 0.3))
  a <- stats::rnorm(n)
  d <- expand.grid(period = 1:5, id = seq_len(n))
  d$g <- G[d$id]
  u <- stats::pnorm(0.8 * a[d$id] + stats::rnorm(nrow(d), sd = 0.6))
  d$y <- exp(0.25 * d$period + stats::qnorm(u)) + (d$g > 0 & d$period >= d$g) * (0.5 + 2 * u)
  if (discrete) d$y <- round(d$y)
  d[sample(nrow(d)), ]
}

# repeated cross-sections: every row its own individual
cic_sim_rc <- function(n = 1500, seed = 5) {
  set.seed(seed)
  d <- data.frame(id = seq_len(n), period = sample(1:5, n, replace = TRUE),
                  g = sample(c(0, 3, 4), n, replace = TRUE, prob = c(0.4, 0.3, 0.3)))
  u <- stats::runif(n)
  d$y <- exp(0.2 * d$period + stats::qnorm(u) + 0.3 * (d$g == 3)) + (d$g > 0 & d$period >= d$g) * (1 + u)
  d
}

# the qte jobs of every cell of a did_cic() fit on d (periods 1..5, base t - 1)
cic_jobs <- function(fit, d, fun, control_group, panel, probs) {
  lapply(seq_len(nrow(fit$cells)), function(k) {
    g <- fit$cells$group[k]; t <- fit$cells$time[k]; b <- fit$cells$base[k]
    ctrl <- if (control_group == "nevertreated") d$g == 0 else d$g == 0 | d$g > t
    s <- d[(d$g == g | ctrl) & d$period %in% c(b, t), ]
    s$treat <- as.integer(s$g == g)
    list(data = s[, c("id", "period", "y", "treat")], fun = fun, formula = "y ~ treat", t = t, tmin1 = b,
         tname = "period", panel = panel, probs = probs)
  })
}

test_that("did_cic() equals qte's CiC() and QDiD() on the Lalonde panel (panel and repeated cross-sections)", {
  qte_lib()
  probs <- seq(0.05, 0.95, 0.05)
  jobs <- list()
  for (fun in c("CiC", "QDiD")) for (pn in c(TRUE, FALSE))
    jobs[[length(jobs) + 1L]] <- list(data = "lalonde", fun = fun, formula = "re ~ treat", t = 1978, tmin1 = 1975,
                                      tname = "year", panel = pn, probs = probs)
  ref <- qte_child(jobs, lalonde = TRUE)
  expect_identical(ref$version, "2.0.0")
  d <- ref$lalonde
  expect_identical(nrow(d), 8025L)                       # 2,675 units x 3 years
  d$g <- ifelse(d$treat == 1, 1978, 0)
  k <- 0L
  for (fun in c("CiC", "QDiD")) for (pn in c(TRUE, FALSE)) {
    k <- k + 1L
    fit <- did_cic(d, "re", "id", "year", "g", method = tolower(fun), panel = pn, nboot = 0)
    ours <- cic_cell(fit, 1978, 1978)
    expect_length(ours$qte, length(probs))
    expect_lte(cic_rel(ours$ate, ref$res[[k]]$ate), 1e-8)
    expect_lte(cic_rel(ours$qte, ref$res[[k]]$qte), 1e-8)
    # one cohort: the overall ATT is the cell's
    expect_identical(fit$coefficients[["ATT"]], ours$ate)
  }
  # (the reference values themselves: qte 2.0.0's CiC ATT on this panel is
  # about 5090 and its QDiD ATT about 1685)
  expect_equal(ref$res[[1]]$ate, 5090, tolerance = 1e-3)
  expect_equal(ref$res[[3]]$ate, 1685, tolerance = 1e-3)
})

test_that("every cell of did_cic() on a simulated panel equals qte on that cell's 2x2 (never and not-yet-treated controls)", {
  qte_lib()
  probs <- seq(0.05, 0.95, 0.05)
  d <- cic_sim_panel()
  fits <- list(); jobs <- list()
  for (fun in c("CiC", "QDiD")) for (cg in c("nevertreated", "notyettreated")) {
    f <- did_cic(d, "y", "id", "period", "g", method = tolower(fun), control_group = cg, nboot = 0, probs = probs)
    expect_identical(nrow(f$cells), 5L)                  # (3,3) (3,4) (3,5) (4,4) (4,5)
    fits[[length(fits) + 1L]] <- f
    jobs <- c(jobs, cic_jobs(f, d, fun, cg, TRUE, probs))
  }
  ref <- qte_child(jobs)$res
  k <- 0L
  for (f in fits) for (i in seq_len(nrow(f$cells))) {
    k <- k + 1L
    ours <- cic_cell(f, f$cells$group[i], f$cells$time[i])
    expect_lte(cic_rel(ours$ate, ref[[k]]$ate), 1e-8)
    expect_lte(cic_rel(ours$qte, ref[[k]]$qte), 1e-8)
  }
  expect_identical(k, 20L)
})

test_that("did_cic() equals qte with a discrete outcome (ties, values outside the controls' range) and extreme quantile levels", {
  qte_lib()
  probs <- c(0.01, 0.1, 0.2, 0.25, 0.3, 0.5, 0.7, 0.75, 0.9, 0.99)
  d <- cic_sim_panel(n = 200, seed = 3, discrete = TRUE)
  expect_lt(length(unique(d$y)), 40)                    # many ties
  fits <- list(); jobs <- list()
  for (fun in c("CiC", "QDiD")) {
    f <- did_cic(d, "y", "id", "period", "g", method = tolower(fun), nboot = 0, probs = probs)
    fits[[fun]] <- f
    jobs <- c(jobs, cic_jobs(f, d, fun, "nevertreated", TRUE, probs))
  }
  ref <- qte_child(jobs)$res
  k <- 0L
  for (f in fits) for (i in seq_len(nrow(f$cells))) {
    k <- k + 1L
    ours <- cic_cell(f, f$cells$group[i], f$cells$time[i])
    expect_lte(cic_rel(ours$ate, ref[[k]]$ate), 1e-8)
    expect_lte(cic_rel(ours$qte, ref[[k]]$qte), 1e-8)
  }
  expect_identical(k, 10L)
})

test_that("did_cic(panel = FALSE) equals qte's CiC() and QDiD() on repeated cross-sections, cell by cell", {
  qte_lib()
  probs <- seq(0.05, 0.95, 0.05)
  d <- cic_sim_rc()
  fits <- list(); jobs <- list()
  for (fun in c("CiC", "QDiD")) {
    f <- did_cic(d, "y", "id", "period", "g", method = tolower(fun), panel = FALSE, nboot = 0, probs = probs)
    fits[[fun]] <- f
    jobs <- c(jobs, cic_jobs(f, d, fun, "nevertreated", FALSE, probs))
  }
  ref <- qte_child(jobs)$res
  k <- 0L
  for (f in fits) for (i in seq_len(nrow(f$cells))) {
    k <- k + 1L
    ours <- cic_cell(f, f$cells$group[i], f$cells$time[i])
    expect_lte(cic_rel(ours$ate, ref[[k]]$ate), 1e-8)
    expect_lte(cic_rel(ours$qte, ref[[k]]$qte), 1e-8)
  }
  expect_identical(k, 10L)
})

# ---- covariates: qte's CiC(..., xformla) and QDiD(..., xformla) ----------
# qte 2.0.0 fits quantreg's rq() (method "br") at tau = 0.01, ..., 0.99 to
# the controls in both periods (and, for QDiD, to the treated in the base
# period) and evaluates the step functions of predict(..., type = "Qhat" /
# "Fhat", stepfun = TRUE) at each treated base-period observation. The
# child process also re-runs that algorithm from quantreg's fits (the
# "oracle" below, written here from qte's description, not from did_cic):
#   - with tie = FALSE it must reproduce qte's own numbers (1e-8): the
#     oracle is qte's computation;
#   - with tie = TRUE, in Fhat, fitted quantiles within 1e-10 (1 + |y|) of
#     one another or of the outcome y are taken as equal (did_cic's rule:
#     they are equal in exact arithmetic). It matters for QDiD: the
#     treated's own fit passes through 8 of their observations at every tau,
#     and with discrete covariates the fits of different tau coincide at
#     some covariate values; qte leaves those comparisons to quantreg's
#     rounding (about 1e-12). did_cic's CiC equals qte itself;
#     its QDiD equals the oracle with tie = TRUE, and the size of its
#     difference from qte is recorded in the test (not a tolerance).
# Measured (qte 2.0.0, quantreg 6.1): CiC against qte, Lalonde: ATT 9.1e-13,
# QTTs 2.9e-11 absolute; simulated cells 1.8e-15. QDiD against the oracle
# with exact ties: 9.5e-11 (Lalonde), 5.3e-15 (simulated); against qte
# itself: ATT 198.67 and QTTs up to 703 (Lalonde), up to 0.28 (simulated).
# The oracle without the tie rule reproduces qte exactly (0).
qte_child_x <- function(jobs, lalonde = FALSE) {
  peer_subprocess(qte_lib(), c(
    "suppressMessages({library(qte); library(quantreg)})",
    "lal <- NULL",
    "if (isTRUE(input$lalonde)) {",
    "  e <- new.env(); utils::data('lalonde', package = 'qte', envir = e)",
    "  lal <- e$lalonde.psid.panel[, c('id', 'year', 're', 'treat', 'age', 'education', 'black', 'hispanic',",
    "                                  'married', 'nodegree')]",
    "}",
    "u <- seq(0.01, 0.99, 0.01)",
    "Fh <- function(q, v, tie) {",
    "  tol <- if (tie) 1e-10 * (1 + abs(v)) else 0",
    "  q[abs(q - v) <= tol] <- v",
    "  ok <- which(q <= v)",
    "  if (!length(ok)) return(u[1])",
    "  k <- max(ok[q[ok] >= max(q[ok]) - tol])",
    "  if (k == 1) u[1] else u[k - 1]",
    "}",
    "Qh <- function(q, r) q[max(1, sum(u <= r))]",
    "run <- function(j) {",
    "  d <- if (identical(j$data, 'lalonde')) lal else j$data",
    "  f <- get(j$fun, asNamespace('qte'))",
    "  fm <- stats::as.formula(j$formula); xf <- stats::as.formula(j$xformla)",
    "  o <- suppressWarnings(f(fm, xformla = xf, t = j$t, tmin1 = j$tmin1, tname = j$tname, idname = 'id',",
    "                         data = d, panel = j$panel, se = FALSE, probs = j$probs))",
    "  yv <- all.vars(fm)[1]; tv <- all.vars(fm)[2]",
    "  dd <- d[d[[j$tname]] %in% c(j$t, j$tmin1), ]",
    "  if (j$panel) dd <- dd[order(dd$id), ]",
    "  smp <- function(per, tr) dd[dd[[j$tname]] == per & dd[[tv]] == tr, ]",
    "  s00 <- smp(j$tmin1, 0); s01 <- smp(j$t, 0); s10 <- smp(j$tmin1, 1); s11 <- smp(j$t, 1)",
    "  rf <- stats::as.formula(paste(yv, '~', paste(labels(stats::terms(xf)), collapse = ' + ')))",
    "  fit <- function(s) suppressWarnings(coef(rq(rf, data = s, tau = u)))",
    "  B <- list(fit(s00), fit(s01), if (j$fun == 'QDiD') fit(s10))",
    "  X10 <- stats::model.matrix(rf, s10); y10 <- s10[[yv]]; y11 <- s11[[yv]]",
    "  oracle <- function(tie) {",
    "    P0 <- X10 %*% B[[1]]; P1 <- X10 %*% B[[2]]",
    "    if (j$fun == 'CiC') {",
    "      y0 <- vapply(seq_along(y10), function(i) Qh(P1[i, ], Fh(P0[i, ], y10[i], tie)), 0)",
    "      q1 <- stats::quantile(y11, j$probs, type = 1)",
    "    } else {",
    "      P2 <- X10 %*% B[[3]]",
    "      r <- vapply(seq_along(y10), function(i) Fh(P2[i, ], y10[i], tie), 0)",
    "      y0 <- (y10 + vapply(seq_along(y10), function(i) Qh(P1[i, ], r[i]), 0)) -",
    "        vapply(seq_along(y10), function(i) Qh(P0[i, ], r[i]), 0)",
    "      q1 <- stats::quantile(y11, j$probs, type = 7)",
    "    }",
    "    list(ate = mean(y11) - mean(y0), qte = unname(q1 - stats::quantile(y0, j$probs, type = 1)))",
    "  }",
    "  list(ate = unname(o$ate), qte = unname(o$qte), raw = oracle(FALSE), tie = oracle(TRUE))",
    "}",
    "output <- list(version = as.character(utils::packageVersion('qte')), lalonde = lal,",
    "               res = lapply(input$jobs, run))"),
    input = list(jobs = jobs, lalonde = lalonde))
}

lalonde_x <- "~ age + I(age^2) + education + black + hispanic + married + nodegree"

test_that("did_cic(xformla =) equals qte's CiC() and QDiD() with covariates on the Lalonde panel (panel and repeated cross-sections)", {
  qte_lib()
  probs <- seq(0.05, 0.95, 0.05)
  jobs <- list()
  for (fun in c("CiC", "QDiD")) for (pn in c(TRUE, FALSE))
    jobs[[length(jobs) + 1L]] <- list(data = "lalonde", fun = fun, formula = "re ~ treat", xformla = lalonde_x,
                                      t = 1978, tmin1 = 1975, tname = "year", panel = pn, probs = probs)
  ref <- qte_child_x(jobs, lalonde = TRUE)
  expect_identical(ref$version, "2.0.0")
  d <- ref$lalonde
  d$g <- ifelse(d$treat == 1, 1978, 0)
  k <- 0L
  raw_qdid <- numeric()
  for (fun in c("CiC", "QDiD")) for (pn in c(TRUE, FALSE)) {
    k <- k + 1L
    r <- ref$res[[k]]
    # the oracle is qte's algorithm: it reproduces qte (1e-8)
    expect_lte(cic_rel(r$raw$ate, r$ate), 1e-8)
    expect_lte(cic_rel(r$raw$qte, r$qte), 1e-8)
    fit <- did_cic(d, "re", "id", "year", "g", xformla = stats::as.formula(lalonde_x), method = tolower(fun),
                   panel = pn, nboot = 0)
    ours <- cic_cell(fit, 1978, 1978)
    expect_length(ours$qte, length(probs))
    # did_cic against the oracle with exact ties: 1e-8
    expect_lte(cic_rel(ours$ate, r$tie$ate), 1e-8)
    expect_lte(cic_rel(ours$qte, r$tie$qte), 1e-8)
    if (fun == "CiC") {
      # and against qte itself: 1e-8 (no tie decided by rounding here)
      expect_lte(cic_rel(ours$ate, r$ate), 1e-8)
      expect_lte(cic_rel(ours$qte, r$qte), 1e-8)
    } else raw_qdid <- c(raw_qdid, abs(ours$ate - r$ate))
    expect_identical(fit$covariates, c("age", "I(age^2)", "education", "black", "hispanic", "married", "nodegree"))
  }
  # the reference values: qte 2.0.0's CiC ATT with these covariates is about
  # 4629, its QDiD ATT about 2033; did_cic's QDiD ATT (1834.4) differs from
  # qte's by about 199 (measured 198.67), all of it from the rounding ties
  # described above (the oracle without them reproduces qte)
  expect_equal(ref$res[[1]]$ate, 4629, tolerance = 1e-3)
  expect_equal(ref$res[[3]]$ate, 2033, tolerance = 1e-3)
  expect_equal(raw_qdid, c(198.67, 198.67), tolerance = 1e-3)
})

# a panel with one continuous covariate (constant within unit, as qte's
# panel version expects) on which the outcome's quantiles depend
cic_sim_panel_x <- function(n = 400, seed = 21) {
  set.seed(seed)
  G <- sample(c(0, 3, 4), n, replace = TRUE, prob = c(0.45, 0.3, 0.25))
  x <- stats::rnorm(n) + 0.4 * (G > 0)
  a <- stats::rnorm(n)
  d <- expand.grid(period = 1:4, id = seq_len(n))
  d$g <- G[d$id]; d$x <- x[d$id]
  e <- 0.6 * a[d$id] + stats::rnorm(nrow(d), sd = 0.8)
  d$y <- 1 + 0.2 * d$period + (1 + 0.3 * d$period) * d$x + exp(0.5 * e) + (d$g > 0 & d$period >= d$g) * (1 + d$x^2)
  d[sample(nrow(d)), ]
}

test_that("every cell of did_cic(xformla = ~ x) on a simulated panel equals qte's covariate CiC / the oracle of QDiD", {
  qte_lib()
  probs <- seq(0.05, 0.95, 0.05)
  d <- cic_sim_panel_x()
  fits <- list(); jobs <- list()
  for (fun in c("CiC", "QDiD")) for (pn in c(TRUE, FALSE)) {
    dd <- d
    if (!pn) dd$id <- seq_len(nrow(dd))                  # the same rows as repeated cross-sections
    f <- did_cic(dd, "y", "id", "period", "g", xformla = ~ x, method = tolower(fun), panel = pn, nboot = 0,
                 probs = probs)
    expect_identical(nrow(f$cells), 3L)                  # (3,3) (3,4) (4,4)
    fits[[length(fits) + 1L]] <- f
    for (k in seq_len(nrow(f$cells))) {
      g <- f$cells$group[k]; t <- f$cells$time[k]; b <- f$cells$base[k]
      s <- dd[(dd$g == g | dd$g == 0) & dd$period %in% c(b, t), ]
      s$treat <- as.integer(s$g == g)
      jobs[[length(jobs) + 1L]] <- list(data = s[, c("id", "period", "y", "treat", "x")], fun = fun,
                                        formula = "y ~ treat", xformla = "~ x", t = t, tmin1 = b,
                                        tname = "period", panel = pn, probs = probs)
    }
  }
  ref <- qte_child_x(jobs)$res
  k <- 0L; dq <- numeric()
  for (f in fits) for (i in seq_len(nrow(f$cells))) {
    k <- k + 1L
    r <- ref[[k]]
    expect_lte(cic_rel(r$raw$ate, r$ate), 1e-8)
    expect_lte(cic_rel(r$raw$qte, r$qte), 1e-8)
    ours <- cic_cell(f, f$cells$group[i], f$cells$time[i])
    expect_lte(cic_rel(ours$ate, r$tie$ate), 1e-8)
    expect_lte(cic_rel(ours$qte, r$tie$qte), 1e-8)
    if (f$method == "cic") {
      expect_lte(cic_rel(ours$ate, r$ate), 1e-8)
      expect_lte(cic_rel(ours$qte, r$qte), 1e-8)
    } else dq <- c(dq, cic_rel(c(ours$ate, ours$qte), c(r$ate, r$qte)))
  }
  expect_identical(k, 12L)
  message(sprintf("did_cic QDiD with covariates vs qte itself (simulated cells): max relative difference %.3g", max(dq)))
})

# quantreg 6.1 (in qte's private library), rq(method = "br"), against
# C_rq on designs where the solution is unique (quantreg's "Solution may be
# nonunique" warning is counted in the child and must be absent), and on
# the Lalonde samples the covariate estimators fit (in qte's order).
test_that("C_rq (did_cic's quantile regression) equals quantreg's rq(method = 'br') coefficients", {
  lib <- qte_lib()
  u <- seq(0.01, 0.99, 0.01)
  set.seed(8)
  n <- 401
  x1 <- stats::rnorm(n); x2 <- stats::runif(n)
  d1 <- data.frame(y = 1 + x1 - x2 + (1 + x2) * stats::rnorm(n), x1 = x1, x2 = x2)
  # dummies: group sizes 211 and 187 (n tau never an integer), a 3-level factor
  z <- rep(c(0, 1), c(211, 187)); f3 <- factor(rep(c("a", "b", "c"), length.out = 398))
  x3 <- stats::rnorm(398)
  d2 <- data.frame(y = 2 * z + as.integer(f3) + x3 + stats::rexp(398), z = z, f3 = f3, x3 = x3)
  d3 <- data.frame(y = stats::rnorm(397))               # intercept only, 397 tau never an integer
  d4 <- data.frame(y = stats::rnorm(60) + 1:60 / 20, x = 1:60 / 7 + stats::rnorm(60, sd = 0.1))
  w4 <- rep(1:3, 20)                                     # weights: quantreg on the replicated rows
  designs <- list(list(d = d1, f = "y ~ x1 + x2"), list(d = d2, f = "y ~ z + f3 + x3"), list(d = d3, f = "y ~ 1"),
                  list(d = d4[rep(seq_len(60), w4), ], f = "y ~ x"))
  ref <- peer_subprocess(lib, c(
    "suppressMessages(library(quantreg))",
    "u <- seq(0.01, 0.99, 0.01)",
    "one <- function(s) {",
    "  fl <- logical(length(u))",
    "  b <- vapply(seq_along(u), function(k) withCallingHandlers(coef(rq(stats::as.formula(s$f), data = s$d, tau = u[k])),",
    "    warning = function(w) { if (grepl('nonunique', conditionMessage(w))) fl[k] <<- TRUE; invokeRestart('muffleWarning') }),",
    "    numeric(ncol(stats::model.matrix(stats::as.formula(s$f), s$d))))",
    "  list(b = unname(matrix(b, ncol = length(u))), nonunique = fl) }",
    "e <- new.env(); utils::data('lalonde', package = 'qte', envir = e)",
    "L <- e$lalonde.psid.panel; L <- L[order(L$id), ]",
    "lf <- re ~ age + I(age^2) + education + black + hispanic + married + nodegree",
    "lal <- lapply(list(c(1975, 0), c(1978, 0), c(1975, 1)), function(k) {",
    "  s <- L[L$year == k[1] & L$treat == k[2], ]",
    "  list(X = stats::model.matrix(lf, s), y = s$re, b = unname(suppressWarnings(coef(rq(lf, data = s, tau = u))))) })",
    "output <- list(version = as.character(utils::packageVersion('quantreg')), des = lapply(input, one), lal = lal)"),
    input = designs)
  expect_identical(ref$version, "6.1")
  rel <- function(a, b) max(abs(a - b) / pmax(1, abs(b)))
  check <- function(s, b) {
    X <- stats::model.matrix(stats::as.formula(s$f), s$d)
    ours <- .Call(diffdiff:::C_rq, unname(X), as.double(s$d$y), rep(1, nrow(X)), u)
    uq <- !b$nonunique
    # where quantreg's solution is unique (it raises no "nonunique"
    # warning): the same coefficients, 1e-8
    expect_gt(sum(uq), 90L)
    expect_lte(rel(ours[, uq], b$b[, uq]), 1e-8)
    # where it may not be: another optimal vertex is allowed; the
    # objective must be the minimum (quantreg's) to 1e-10 relative
    obj <- function(B, k) { e <- s$d$y - X %*% B[, k]; sum(e * (u[k] - (e < 0))) }
    for (k in which(!uq)) expect_lte(abs(obj(ours, k) - obj(b$b, k)) / obj(b$b, k), 1e-10)
    sum(!uq)
  }
  nonuniq <- vapply(seq_along(designs), function(k) check(designs[[k]], ref$des[[k]]), 0L)
  # the continuous designs and the intercept-only one are unique at every
  # tau; the design with dummies is flagged at a few (2 with this seed)
  expect_identical(nonuniq[c(1L, 3L, 4L)], c(0L, 0L, 0L))
  expect_identical(nonuniq[2L], 2L)
  # the intercept-only fit is the type-1 sample quantile (unique: 397 tau not whole)
  b3 <- .Call(diffdiff:::C_rq, matrix(1, 397, 1), d3$y, rep(1, 397), u)
  expect_identical(as.vector(b3), unname(stats::quantile(d3$y, u, type = 1)))
  # integer weights: as the rows repeated (quantreg ran on the repeated rows)
  X4 <- cbind(1, d4$x)
  b4 <- .Call(diffdiff:::C_rq, X4, d4$y, as.double(w4), u)
  expect_lte(rel(b4, ref$des[[4]]$b), 1e-8)
  # the Lalonde samples (quantreg warns of possible nonuniqueness at a few
  # tau; the coefficients agree at every tau)
  for (s in ref$lal) {
    b <- .Call(diffdiff:::C_rq, unname(s$X), s$y, rep(1, length(s$y)), u)
    expect_lte(rel(b, s$b), 1e-8)
  }
})
