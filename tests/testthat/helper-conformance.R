# The conformance suite's panel and its list of estimators (test-conformance.R,
# test-conformance-interrupt.R, test-registry.R). One entry per row of the
# estimator registry (dd_estimators(), R/estimators.R) and per diagnostic
# (cf_diagnostics); test-conformance.R checks that the entries are exactly
# these. An entry:
#   fit(d, a)   the default call on the panel d; a: overrides (yname, cluster)
#   skip        checks that do not apply, each with the reason
#   expect      per-check overrides of the expected error (rx, code)
#   long        a call whose longest loop runs for many seconds (the Ctrl-C check):
#               a string of R code evaluated in a fresh R process with diffdiff loaded

# 90 units x 6 periods, rows sorted by unit and period; cohorts 3 and 5 and 30
# never treated; 15 clusters mixing treated and untreated units; columns for
# every design: a 0/1 indicator `d`, a 2x2 `treated`/`post`, a partition `q`
# (did_ddd), a unit dose `dose` (did_dose), a heterogeneous-adoption dose `hd`
# (0 before period 4, >= 0 from 4 on: did_had), a reversible treatment `drev`
# (did_dcdh), weights, a covariate, coordinates `lat`, `lon` (did_spillover)
# and a running variable `rv` (rd_robust).
cf_panel <- function(n = 90, T = 6, seed = 29, cohorts = c(3, 5)) {
  set.seed(seed)
  d <- expand.grid(t = seq_len(T), id = seq_len(n))[, c("id", "t")]
  gu <- rep(c(0, cohorts), length.out = n)
  d$g <- gu[d$id]
  d$d <- as.integer(d$g > 0 & d$t >= d$g)
  d$treated <- as.integer(d$g > 0)
  d$post <- as.integer(d$t >= 3)
  d$q <- rep(c(0, 1, 1, 0, 1), length.out = n)[d$id]
  du <- ifelse(gu > 0, stats::runif(n, 0.2, 2), 0)
  d$dose <- du[d$id]
  hu <- stats::rexp(n, 2)
  d$hd <- ifelse(d$t >= 4, hu[d$id], 0)
  # reversible: on at 3 and off at 5 for one group of units, on at 4 for another
  ru <- rep(c(0, 1, 2, 0), length.out = n)
  d$drev <- as.integer((ru[d$id] == 1 & d$t %in% 3:4) | (ru[d$id] == 2 & d$t >= 4))
  d$x <- stats::rnorm(n)[d$id]
  d$w <- stats::runif(n, 0.5, 2)[d$id]
  d$cl <- (d$id %/% 2) %% 15
  d$y <- 0.3 * d$x + 0.2 * d$t + stats::rnorm(n)[d$id] + (1 + 0.2 * pmax(d$t - d$g, 0)) * d$d +
    0.5 * d$dose * d$d + 0.7 * d$hd + 0.8 * d$drev + 0.4 * d$q * d$d + stats::rnorm(nrow(d))
  # coordinates (did_spillover): treated units close together, the never
  # treated 500 km away (no random draw, so the columns above are unchanged)
  d$lat <- ifelse(d$g == 0, 45, 40) + (d$id %% 10) * 0.05
  d$lon <- -90 + (d$id %/% 10) * 0.05
  # a running variable (rd_robust): 100 values in [-1, 1) with ties, no draw
  d$rv <- ((d$id * 37 + d$t * 11) %% 100) / 50 - 1
  rownames(d) <- NULL
  d
}

# an absorbing 0/1 outcome from an event indicator `hit`: 1 from the unit's
# first period with an event on (whatever the order of the rows)
cf_absorbing <- function(hit, id, t) {
  first <- tapply(ifelse(hit, t, Inf), id, min)
  as.integer(t >= first[as.character(id)])
}

# the same panel, large (the Ctrl-C check)
cf_big <- function(n, T, cohorts = c(3, 5)) cf_panel(n, T, seed = 1, cohorts = cohorts)

# argument `k` of the overrides a, or its default
cf_a <- function(a, k, default) if (is.null(a[[k]])) default else a[[k]]

# the numbers of a result, for comparisons
cf_numbers <- function(x) {
  if (inherits(x, "bacon_decomp"))
    return(x$two_by_twos[do.call(order, unname(x$two_by_twos[vapply(x$two_by_twos, is.numeric, logical(1))])), ])
  if (inherits(x, "dd_check")) return(x$findings)
  if (inherits(x, "twfe_weights")) {
    w <- as.data.frame(generics::tidy(x))
    w <- w[do.call(order, unname(w[vapply(w, is.numeric, logical(1))])), ]
    rownames(w) <- NULL
    return(list(w, x$beta))
  }
  if (inherits(x, "twfe_decomp")) return(list(x$cells, x$beta, x$post, x$pre, x$comparisons))
  if (inherits(x, "honest_did")) return(list(x$results, x$original))
  if (inherits(x, "dd_placebo")) return(x[c("statistic", "p.value", "estimate")])
  tab <- x$coeftable
  num <- tab[, vapply(tab, is.numeric, logical(1)), drop = FALSE]
  rownames(num) <- NULL
  num
}

# autoplot() of a result, drawn (printed on the open device): an error when
# it is not a ggplot or when drawing it warns (ggplot2's "Removed rows
# containing missing values" means a plot that drops what it was given)
cf_autoplot <- function(x) {
  p <- ggplot2::autoplot(x)
  stopifnot(inherits(p, "ggplot"))
  w <- character()
  withCallingHandlers(print(p), warning = function(cond) {
    w <<- c(w, conditionMessage(cond))
    invokeRestart("muffleWarning")
  })
  if (length(w)) stop("drawing the autoplot warned: ", paste(unique(w), collapse = "; "))
  invisible(p)
}

# one method of a result, run: NULL, or the error's message
cf_method <- function(k, x) tryCatch({
  switch(k,
    print = utils::capture.output(print(x)),
    summary = utils::capture.output(print(summary(x))),
    tidy = { t <- generics::tidy(x); stopifnot(is.data.frame(t), nrow(t) > 0) },
    glance = { g <- generics::glance(x); stopifnot(is.data.frame(g), nrow(g) == 1) },
    plot = plot(x),
    autoplot = if (requireNamespace("ggplot2", quietly = TRUE)) cf_autoplot(x))
  NULL
}, error = function(err) conditionMessage(err))

# the entries that are not estimators (not registry rows): diagnostics and reports
cf_diagnostics <- c("bacon_decomp", "twfe_weights", "twfe_decomp", "placebo_test", "honest_did", "did_check", "rd_plot", "rd_density")

# the entries the checks run over: the registry's rows, then the diagnostics
# (a row without an entry fails its checks: its entry has no `fit`)
cf_entries <- function() c(dd_estimators()$name, cf_diagnostics)

cf_estimators <- list(
  did_2x2 = list(
    fit = function(d, a) did_2x2(d, cf_a(a, "yname", "y"), "treated", "post", cluster = cf_a(a, "cluster", "cl")),
    skip = c(dups = "repeated cross-sections: no unit-period key"),
    expect = list(roles = list(rx = '`yname` and `treatname` both name the column "treated"', code = "ROLE_CONFLICT")),
    roles = list(yname = "treated"),
    long = 'd <- cf_big(20000, 4); did_2x2(d, "y", "treated", "post", cluster = "id", nboot = 2e5)'),
  did_twfe = list(
    fit = function(d, a) did_twfe(d, cf_a(a, "yname", "y"), "id", "t", "d", cluster = a$cluster),
    long = 'd <- cf_big(20000, 10); did_twfe(d, "y", "id", "t", "d", nboot = 2e5)'),
  did_event = list(
    fit = function(d, a) did_event(d, cf_a(a, "yname", "y"), "id", "t", "g", cluster = a$cluster),
    long = 'd <- cf_big(20000, 10); did_event(d, "y", "id", "t", "g", nboot = 2e5)'),
  did_cs = list(
    fit = function(d, a) did_cs(d, cf_a(a, "yname", "y"), "id", "t", "g", cluster = a$cluster),
    long = 'd <- cf_big(100000, 8); did_cs(d, "y", "id", "t", "g", nboot = 1e6)'),
  did_dml = list(
    fit = function(d, a) did_dml(d, cf_a(a, "yname", "y"), "id", "t", "g", ~ x, cluster = a$cluster, nboot = 0,
                                 seed = 1),
    long = 'd <- cf_big(20000, 6); d$x2 <- rnorm(nrow(d)); for (i in 1:100) did_dml(d, "y", "id", "t", "g", ~ x + x2, nboot = 0)'),
  # the bad control: hd, a time-varying covariate that moves from period 4 on
  did_bc = list(
    fit = function(d, a) did_bc(d, cf_a(a, "yname", "y"), "id", "t", "g", bad_control = "hd", xformla = ~ x,
                                cluster = a$cluster, nboot = 0),
    long = 'd <- cf_big(20000, 6); d$x2 <- rnorm(nrow(d)); for (i in 1:100) did_bc(d, "y", "id", "t", "g", bad_control = "hd", xformla = ~ x + x2, est_method = "dr", nboot = 0)'),
  did_sdid = list(
    fit = function(d, a) did_sdid(d, cf_a(a, "yname", "y"), "id", "t", "d", staggered = TRUE, se = "bootstrap"),
    skip = c(cluster = "no cluster argument (placebo / bootstrap / jackknife over units)"),
    long = 'd <- cf_big(1600, 40); d$d <- as.integer(d$id %% 10 == 0 & d$t > 30); did_sdid(d, "y", "id", "t", "d", nboot = 1e5)'),
  did_sa = list(
    fit = function(d, a) did_sa(d, cf_a(a, "yname", "y"), "id", "t", "g", cluster = a$cluster),
    long = 'd <- cf_big(20000, 10); did_sa(d, "y", "id", "t", "g", nboot = 2e5)'),
  did_bjs = list(
    fit = function(d, a) did_bjs(d, cf_a(a, "yname", "y"), "id", "t", "g", cluster = a$cluster),
    long = 'd <- cf_big(20000, 10); did_bjs(d, "y", "id", "t", "g", nboot = 2e5)'),
  did_spillover = list(
    fit = function(d, a) did_spillover(d, cf_a(a, "yname", "y"), "id", "t", "g", rings = c(0, 10, 100),
                                       cluster = a$cluster),
    long = 'd <- cf_big(20000, 10); did_spillover(d, "y", "id", "t", "g", rings = c(0, 10, 100), nboot = 2e5)'),
  did_gardner = list(
    fit = function(d, a) did_gardner(d, cf_a(a, "yname", "y"), "id", "t", "g", cluster = a$cluster),
    long = 'd <- cf_big(20000, 10); did_gardner(d, "y", "id", "t", "g", nboot = 2e5)'),
  did_stacked = list(
    fit = function(d, a) did_stacked(d, cf_a(a, "yname", "y"), "id", "t", "g", kappa_pre = 1, kappa_post = 1,
                                     cluster = a$cluster),
    long = 'd <- cf_big(20000, 10); did_stacked(d, "y", "id", "t", "g", kappa_pre = 2, kappa_post = 2, nboot = 1e6)'),
  did_lpdid = list(
    fit = function(d, a) did_lpdid(d, cf_a(a, "yname", "y"), "id", "t", "g", pre_window = 2, post_window = 1,
                                   cluster = a$cluster),
    long = 'd <- cf_big(2e5, 30, cohorts = 3:28); for (i in 1:50) did_lpdid(d, "y", "id", "t", "g", pre_window = 5, post_window = 10)'),
  did_lwdid = list(
    fit = function(d, a) did_lwdid(d, cf_a(a, "yname", "y"), "id", "t", "g", cluster = a$cluster),
    long = 'd <- cf_big(2e5, 30, cohorts = 3:28); for (i in 1:50) did_lwdid(d, "y", "id", "t", "g")'),
  did_cic = list(
    fit = function(d, a) did_cic(d, cf_a(a, "yname", "y"), "id", "t", "g", cluster = a$cluster),
    long = 'd <- cf_big(20000, 6); did_cic(d, "y", "id", "t", "g", probs = 0.5, nboot = 1e5)'),
  did_ddd = list(
    fit = function(d, a) did_ddd(d, cf_a(a, "yname", "y"), "id", "t", "g", "q", cluster = a$cluster),
    long = 'd <- cf_big(50000, 8); did_ddd(d, "y", "id", "t", "g", "q", nboot = 1e6)'),
  did_dose = list(
    fit = function(d, a) did_dose(d, cf_a(a, "yname", "y"), "id", "t", "g", "dose", cluster = a$cluster),
    long = 'd <- cf_big(20000, 6); did_dose(d, "y", "id", "t", "g", "dose", nboot = 1e6)'),
  did_had = list(
    fit = function(d, a) did_had(d, cf_a(a, "yname", "y"), "id", "t", "hd"),
    skip = c(cluster = "no cluster argument (independent groups)"),
    long = 'd <- cf_big(3000, 6); did_had(d, "y", "id", "t", "hd", effects = 2, stute = TRUE, stute_nboot = 1e6)'),
  did_dcdh = list(
    fit = function(d, a) did_dcdh(d, cf_a(a, "yname", "y"), "id", "t", "drev", effects = 2, placebo = 1,
                                  cluster = a$cluster),
    long = 'd <- cf_big(20000, 8); did_dcdh(d, "y", "id", "t", "drev", effects = 2, nboot = 1e6)'),
  did_etwfe = list(
    fit = function(d, a) did_etwfe(d, cf_a(a, "yname", "y"), "id", "t", "g", cluster = a$cluster),
    long = 'd <- cf_big(20000, 8); did_etwfe(d, "y", "id", "t", "g", nboot = 2e5)'),
  did_edid = list(
    fit = function(d, a) did_edid(d, cf_a(a, "yname", "y"), "id", "t", "g", cluster = a$cluster),
    long = 'd <- cf_big(20000, 8); did_edid(d, "y", "id", "t", "g", nboot = 2e5)'),
  did_rs = list(
    fit = function(d, a) did_rs(d, cf_a(a, "yname", "y"), "id", "t", "g"),
    skip = c(cluster = "no cluster argument (design-based: units are the randomisation units)"),
    long = 'd <- cf_big(5000, 8); did_rs(d, "y", "id", "t", "g", nperm = 1e6)'),
  did_trop = list(
    # the never treated and 4 treated units, 20 bootstrap draws (the local
    # method refits every treated cell in each draw: 200 on the whole panel take 40 s)
    fit = function(d, a) {
      keep <- d[["g"]] == 0 | d[["id"]] <= 6     # (not d$g inside d[...]: `d` is also a column)
      did_trop(d[keep, ], cf_a(a, "yname", "y"), "id", "t", "d",
               lambda_time = 0.5, lambda_unit = 0.5, lambda_nn = 0.1, nboot = 20)
    },
    skip = c(cluster = "no cluster argument (unit bootstrap)"),
    long = 'd <- cf_big(400, 20); did_trop(d, "y", "id", "t", "d", lambda_time = 0.5, lambda_unit = 0.5, lambda_nn = 0.1, nboot = 1e5)'),
  did_synth = list(
    # the never-treated and 4 treated units (cohorts 3 and 5); no predictors:
    # the outcome in each pre-treatment period, 60 in-space placebos
    fit = function(d, a) {
      keep <- d[["g"]] == 0 | d[["id"]] <= 6
      did_synth(d[keep, ], cf_a(a, "yname", "y"), "id", "t", "d")
    },
    skip = c(cluster = "no cluster argument (in-space placebos over donors)"),
    long = 'd <- cf_big(400, 30); d$d <- as.integer(d$id <= 3 & d$t > 20); d$z <- rnorm(nrow(d)); did_synth(d, "y", "id", "t", "d", predictors = c("x", "z"), special_predictors = list(list("y", 1:10, "mean"), list("y", 11:20, "mean")))'),
  # one treated cohort (3) and the never treated; the outcome made binary and
  # absorbing from y (1 from the first period y > 1.5 on), under its own name
  # so that a constant y stays constant
  did_duration = list(
    fit = function(d, a) {
      keep <- d[["g"]] %in% c(0, 3)
      d <- d[keep, ]
      yn <- cf_a(a, "yname", "y")
      if (yn == "y") d[["y"]] <- cf_absorbing(d[["y"]] > 1.5, d[["id"]], d[["t"]])
      did_duration(d, yn, "id", "t", "g", cluster = a$cluster)
    },
    long = 'd <- cf_big(20000, 10, cohorts = 5); d$y <- as.integer(d$y > 2); d$y <- ave(d$y, d$id, FUN = cummax); did_duration(d, "y", "id", "t", "g", nboot = 2e5)'),
  rd_robust = list(
    fit = function(d, a) rd_robust(d, cf_a(a, "yname", "y"), "rv", cluster = a$cluster),
    skip = c(dups = "a cross-section of observations: no unit-period key"),
    roles = list(yname = "rv"),
    expect = list(roles = list(rx = '`yname` and `xname` both name the column "rv"', code = "ROLE_CONFLICT")),
    long = 'd <- data.frame(x = runif(3e6, -1, 1)); d$y <- d$x + (d$x >= 0) + rnorm(3e6); for (i in 1:100) rd_robust(d, "y", "x")'),
  bacon_decomp = list(
    fit = function(d, a) bacon_decomp(d, cf_a(a, "yname", "y"), "id", "t", gname = "g"),
    skip = c(cluster = "a decomposition: no standard errors"),
    long = 'd <- cf_big(5e4, 30, cohorts = 3:28); for (i in 1:1000) bacon_decomp(d, "y", "id", "t", gname = "g")'),
  twfe_weights = list(
    fit = function(d, a) twfe_weights(d, cf_a(a, "yname", "y"), "id", "t", "d"),
    skip = c(cluster = "weights of the coefficient: no standard errors"),
    long = 'd <- cf_big(5e4, 20); for (i in 1:1000) twfe_weights(d, "y", "id", "t", "d")'),
  twfe_decomp = list(
    fit = function(d, a) twfe_decomp(d, cf_a(a, "yname", "y"), "id", "t", "g"),
    skip = c(cluster = "a decomposition of the coefficient: no standard errors of its own"),
    long = 'd <- cf_big(5e4, 20); for (i in 1:1000) twfe_decomp(d, "y", "id", "t", "g")'),
  placebo_test = list(
    fit = function(d, a) {
      f <- did_cs(d, cf_a(a, "yname", "y"), "id", "t", "g", nboot = 0, cluster = a$cluster)
      placebo_test(f, "permutation", data = d, nperm = 49)
    },
    long = 'd <- cf_big(2000, 6); f <- did_cs(d, "y", "id", "t", "g", nboot = 0); placebo_test(f, "permutation", data = d, nperm = 1e5)'),
  honest_did = list(
    fit = function(d, a) honest_did(did_event(d, cf_a(a, "yname", "y"), "id", "t", "g", cluster = a$cluster),
                                    type = "RM", Mbar = c(0.5, 1), grid_points = 200),
    long = 'b <- c(rnorm(6, sd = 0.05), 0.5, 0.6, 0.7, 0.8, 0.9); honest_did(betahat = b, sigma = diag(0.01, 11), num_pre = 6, type = "RM", Mbar = seq(0.25, 5, by = 0.25), grid_points = 2e5, breakdown = FALSE)'),
  rd_plot = list(
    fit = function(d, a) rd_plot(d, cf_a(a, "yname", "y"), "rv", plot = FALSE),
    skip = c(cluster = "no cluster argument (a plot)", dups = "a cross-section of observations: no unit-period key",
             constant = "a plot of the data: a constant outcome is drawn as it is (one bin a side), nothing is estimated"),
    roles = list(yname = "rv"),
    expect = list(roles = list(rx = '`yname` and `xname` both name the column "rv"', code = "ROLE_CONFLICT")),
    long = 'd <- data.frame(x = runif(3e6, -1, 1)); d$y <- d$x + (d$x >= 0) + rnorm(3e6); for (i in 1:100) rd_plot(d, "y", "x", plot = FALSE)'),
  rd_density = list(
    fit = function(d, a) rd_density(d, "rv"),
    skip = c(cluster = "no cluster argument", dups = "a cross-section of observations: no unit-period key",
             constant = "no outcome (the density of the running variable)",
             roles = "one column (the running variable)"),
    long = 'd <- data.frame(x = runif(3e6, -1, 1)); for (i in 1:100) rd_density(d, "x")'),
  did_check = list(
    fit = function(d, a) did_check(d, cf_a(a, "yname", "y"), "id", "t", gname = "g"),
    skip = c(cluster = "no cluster argument", summary = "a report", tidy = "a report", glance = "a report",
             plot = "a report", autoplot = "a report", constant = "reports it (OUTCOME_CONSTANT)",
             dups = "reports it (DUPLICATE_ROWS)", roles = "reports it (ROLE_CONFLICT)"),
    long = 'd <- cf_big(5e4, 10); for (i in 1:1000) did_check(d, "y", "id", "t", gname = "g")')
)
