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
