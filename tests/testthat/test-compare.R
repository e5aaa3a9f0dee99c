# dd_compare(): planted differences, one per explanation, and real pairs
# (did::att_gt vs did_cs, fixest vs did_twfe, diff-diff's TROP numbers).

hyp <- function(x) x$hypotheses$hypothesis[x$hypotheses$supported]

test_that("dd_compare: each planted difference is explained by its hypothesis", {
  set.seed(1)
  d <- dd_sim_staggered(n_units = 200, n_periods = 6, effect = 1)
  a <- did_event(d, "y", "id", "time", "first_treat")
  tab <- a$coeftable
  # agreement
  x <- dd_compare(a, data.frame(term = tab$term, estimate = tab$estimate, std.error = tab$std.error))
  expect_identical(hyp(x), "agree")
  expect_output(print(x), "\\[yes\\] agree")
  # a different sample
  b <- did_event(d[d$id > 5, ], "y", "id", "time", "first_treat")
  x <- dd_compare(a, b)
  expect_true("different_sample" %in% hyp(x))
  expect_false("agree" %in% hyp(x))
  # SEs without the cluster small-sample factor
  G <- a$n_clusters
  x <- dd_compare(a, data.frame(term = tab$term, estimate = tab$estimate, std.error = tab$std.error / sqrt(G / (G - 1))))
  expect_identical(hyp(x), "se_small_sample_factor")
  expect_match(x$hypotheses$evidence[1], "cluster factor")
  # a constant ratio that is no known factor
  x <- dd_compare(a, data.frame(term = tab$term, estimate = tab$estimate, std.error = tab$std.error * 1.37))
  expect_identical(hyp(x), "se_constant_ratio")
  # estimates within 1e-5, no pattern
  set.seed(2)
  x <- dd_compare(a, data.frame(term = tab$term, estimate = tab$estimate * (1 + runif(nrow(tab), -1e-7, 1e-7)),
                                std.error = tab$std.error))
  expect_identical(hyp(x), "numerical_tolerance")
  # another reference period: b normalises to event time -2
  e <- tab$estimate; names(e) <- tab$term
  bref <- e - e[["event::-2"]]
  bt <- data.frame(term = c(names(bref), "event::-1"), estimate = c(unname(bref), -e[["event::-2"]]))
  x <- dd_compare(a, bt)
  expect_true("reference_period" %in% hyp(x))
  expect_match(x$hypotheses$evidence[x$hypotheses$hypothesis == "reference_period"], "b is zero at event::-2")
  # bootstrap noise: two bootstrap runs of did_cs
  set.seed(3); c1 <- aggregate(did_cs(d, "y", "id", "time", "first_treat", nboot = 499), "dynamic")
  set.seed(4); c2 <- aggregate(did_cs(d, "y", "id", "time", "first_treat", nboot = 499), "dynamic")
  x <- dd_compare(c1, c2)
  expect_true("bootstrap_noise" %in% hyp(x))
  expect_false("agree" %in% hyp(x))
  # SEs that differ term by term without a pattern, estimates equal
  set.seed(8)
  x <- dd_compare(a, data.frame(term = tab$term, estimate = tab$estimate,
                                std.error = tab$std.error * runif(nrow(tab), 0.7, 1.3)))
  expect_identical(hyp(x), "se_method_differs")
  # a different estimand: never- vs not-yet-treated comparisons
  n1 <- aggregate(did_cs(d, "y", "id", "time", "first_treat", nboot = 0), "simple")
  n2 <- aggregate(did_cs(d, "y", "id", "time", "first_treat", nboot = 0, control_group = "notyettreated"), "simple")
  x <- dd_compare(n1, n2)
  expect_identical(hyp(x), "estimates_differ")
})

test_that("dd_compare on real pairs: did, fixest, diff-diff", {
  set.seed(5)
  d <- dd_sim_staggered(n_units = 150, n_periods = 6, effect = 1)
  if (has_peer("did")) {
    r <- did::att_gt("y", "time", "id", "first_treat", data = d, bstrap = FALSE, cband = FALSE)
    ref <- data.frame(term = sprintf("ATT(%s,%s)", r$group, r$t), estimate = r$att, std.error = r$se, source = "did")
    x <- dd_compare(did_cs(d, "y", "id", "time", "first_treat", nboot = 0), ref, tol = 1e-8)
    expect_identical(hyp(x), "agree")
  }
  if (has_peer("fixest")) {
    m <- fixest::feols(y ~ D | id + time, d, cluster = ~id)
    ref <- data.frame(term = "ATT", estimate = unname(coef(m)), std.error = unname(fixest::se(m)), n = nobs(m))
    x <- dd_compare(did_twfe(d, "y", "id", "time", "D"), ref)
    expect_identical(hyp(x), "agree")
  }
  # diff-diff 3.3.2's TROP numbers (ref-trop-cells.csv, see test-trop.R)
  rc <- read.csv("ref-trop-cells.csv", colClasses = c(att = "character"))
  rc <- rc[rc$panel == "block" & rc$method == "local" & rc$lambda_nn > 1e9 & rc$lambda_time == 0.5, ]
  f <- did_trop(read.csv("trop-panel-30x12.csv"), "y", "unit", "time", "d", lambda_time = 0.5, lambda_unit = 0.5,
                lambda_nn = Inf, nboot = 0)
  x <- dd_compare(f, data.frame(term = "ATT", estimate = as.numeric(rc$att[1]), source = rc$source[1]), tol = 1e-6)
  expect_identical(hyp(x), "agree")
  expect_match(x$b$label, "diff-diff 3.3.2")
})

test_that("dd_compare on diff-diff's Callaway-Sant'Anna numbers for the castle panel: the cell SEs are Welch's", {
  # inst/extdata/diffdiff_cs_castle.csv: diff-diff 3.3.2 (commit 33afb6a),
  # written by tools/diffdiff-py-cs-castle.py
  castle <- read.csv(system.file("extdata", "castle.csv", package = "diffdiff"))
  py <- read.csv(system.file("extdata", "diffdiff_cs_castle.csv", package = "diffdiff"))
  expect_match(py$source[1], "^diff-diff 3\\.3\\.2 CallawaySantAnna")
  for (cg in c("never_treated", "not_yet_treated")) {
    f <- suppressWarnings(did_cs(castle, "l_homicide", "sid", "year", "effyear", nboot = 0,
                                 control_group = if (cg == "never_treated") "nevertreated" else "notyettreated"))
    an <- py[py$control_group == cg & py$nboot == 0, ]
    cells <- an[grepl("^ATT\\(", an$term), ]
    x <- dd_compare(f, cells)
    expect_equal(nrow(x$table), 50L)
    expect_lt(max(x$table$rel_diff), 1e-12)
    expect_identical(hyp(x), "se_welch_cells", info = cg)
    expect_lt(min(x$table$se_ratio), 0.75)           # up to 27% apart: not a rounding matter
    # the event study and the overall ATT agree, SEs included
    x <- dd_compare(aggregate(f, "dynamic"), an[grepl("^event::", an$term), ])
    expect_identical(hyp(x), "agree", info = cg)
    x <- dd_compare(aggregate(f, "simple"), an[an$term == "ATT", ])
    expect_identical(hyp(x), "agree", info = cg)
    # with 999 bootstrap draws on diff-diff's side: Monte Carlo noise
    bs <- py[py$control_group == cg & py$nboot == 999 & grepl("^ATT\\(", py$term), ]
    x <- dd_compare(f, bs)
    expect_identical(hyp(x), "bootstrap_noise", info = cg)
  }
})

test_that("dd_compare: bad input", {
  set.seed(6)
  d <- dd_sim_basic(n_units = 40)
  a <- did_twfe(d, "y", "id", "time", "D")
  expect_error(dd_compare(a, 1), "`b` must be a diffdiff fit or a data frame")
  expect_error(dd_compare(a, data.frame(term = "x", estimate = 1)), "share no term")
  expect_error(dd_compare(a, data.frame(term = c("ATT", "ATT"), estimate = 1:2)), "twice")
  expect_error(dd_compare(a, a, tol = 0), "`tol`")
  expect_error(dd_compare(a, a, terms = "nope"), "`terms` = \"nope\"")
  expect_error(dd_compare(a, a, refit = "yes"), "`refit`")
  expect_error(dd_compare(a, a, data = 1:3), "`data`")
})

test_that("every fit carries a reproducibility stamp that dd_compare reads", {
  set.seed(7)
  d <- dd_sim_staggered(n_units = 80, n_periods = 5, effect = 1)
  set.seed(99)
  a <- did_cs(d, "y", "id", "time", "first_treat", nboot = 0)
  st <- a$stamp
  expect_identical(st$diffdiff, as.character(packageVersion("diffdiff")))
  expect_identical(st$R, R.version.string)
  expect_identical(st$threads, dd_threads())
  expect_identical(st$data$rows, nrow(d)); expect_identical(st$data$columns, ncol(d))
  expect_identical(st$data$used, nrow(d))
  expect_identical(st$data$outcome, sprintf("%d:%.10g:%.10g", nrow(d), sum(d$y), sum(d$y^2)))
  # the generator's state when the data were read
  set.seed(99); s0 <- .Random.seed
  expect_identical(st$seed, diffdiff:::dd_checksum(s0))
  # order-invariant; changes with the data
  b <- did_cs(d[nrow(d):1, ], "y", "id", "time", "first_treat", nboot = 0)
  expect_identical(b$stamp$data$outcome, st$data$outcome)
  d2 <- d; d2$y[1] <- d2$y[1] + 1e-6
  c2 <- did_cs(d2, "y", "id", "time", "first_treat", nboot = 0)
  expect_false(identical(c2$stamp$data$outcome, st$data$outcome))
  x <- dd_compare(a, c2)
  expect_true("different_data" %in% hyp(x))
  expect_false("different_software" %in% hyp(x))
  expect_false("different_data" %in% hyp(dd_compare(a, b)))
  # aggregates carry no data part; the estimator's fit does
  expect_null(aggregate(a, "simple")$stamp$data)
  # other software: a stamp with another thread count
  bb <- b; bb$stamp$threads <- b$stamp$threads + 1L
  expect_true("different_software" %in% hyp(dd_compare(a, bb)))
})

test_that("dd_compare refits the fit with one setting changed to find a planted difference", {
  set.seed(3)
  d <- dd_sim_staggered(n_units = 240, n_periods = 7, effect = 1, dynamic = 0.3)
  d$w <- ave(runif(nrow(d), 0.5, 2), d$id)
  d$x <- ave(rnorm(nrow(d)), d$id)
  d$y <- d$y + 0.5 * d$x * d$time / 7
  d$state <- (d$id - 1L) %% 20L
  d0 <- d
  nums <- function(f) as.data.frame(f)[c("term", "estimate", "std.error")]
  a <- did_cs(d, "y", "id", "time", "first_treat")
  planted <- list(
    different_control_group = did_cs(d, "y", "id", "time", "first_treat", control_group = "notyettreated"),
    different_base_period = did_cs(d, "y", "id", "time", "first_treat", base_period = "universal"),
    different_anticipation = did_cs(d, "y", "id", "time", "first_treat", anticipation = 1))
  for (h in names(planted)) {
    x <- dd_compare(a, nums(planted[[h]]))
    expect_identical(hyp(x), h, info = h)
    ev <- x$hypotheses$evidence[x$hypotheses$hypothesis == h]
    expect_match(ev, "at most 0.0e\\+00 relative|at most [0-9.]+e-1[0-9] relative", info = h)
    # every other refit was tried and left the difference
    tried <- x$hypotheses$hypothesis[grepl("^different_", x$hypotheses$hypothesis)]
    expect_true(all(c("different_control_group", "different_base_period", "different_est_method",
                      "different_anticipation") %in% tried), info = h)
    expect_false(x$hypotheses$supported[x$hypotheses$hypothesis == "estimates_differ"], info = h)
  }
  # the other implementation used the ipw estimator: the fit on the numbers' side
  ipw <- did_cs(d, "y", "id", "time", "first_treat", xformla = ~x, est_method = "ipw")
  x <- dd_compare(nums(did_cs(d, "y", "id", "time", "first_treat", xformla = ~x)), ipw)   # b is refitted
  expect_identical(hyp(x), "different_est_method")
  expect_match(x$hypotheses$evidence[1], "refitting b with est_method = \"dr\"")
  # weights and covariates: the numbers come from a fit without them
  aw <- did_cs(d, "y", "id", "time", "first_treat", weightsname = "w")
  expect_identical(hyp(dd_compare(aw, nums(a))), "different_weights")
  ax <- did_cs(d, "y", "id", "time", "first_treat", xformla = ~x)
  expect_identical(hyp(dd_compare(ax, nums(a))), "different_covariates")
  # standard errors clustered at another level
  ae <- did_event(d, "y", "id", "time", "first_treat", cluster = "state")
  ue <- did_event(d, "y", "id", "time", "first_treat")
  x <- dd_compare(ae, nums(ue))
  expect_identical(hyp(x), "different_cluster")
  # two fits: the differing settings are read from their calls
  x <- dd_compare(a, planted$different_control_group)
  expect_true(all(c("different_settings", "different_control_group") %in% hyp(x)))
  expect_match(x$hypotheses$evidence[x$hypotheses$hypothesis == "different_settings"],
               "control_group = \"nevertreated\" vs \"notyettreated\"")
  x <- dd_compare(a, did_cs(d, "y", "id", "time", "first_treat"))     # bootstrap SEs from other draws
  expect_identical(x$hypotheses$evidence[x$hypotheses$hypothesis == "different_settings"],
                   "the two calls use the same settings")
  expect_true("bootstrap_noise" %in% hyp(x))
  x <- dd_compare(ue, did_sa(d, "y", "id", "time", "first_treat"), refit = FALSE)
  expect_true("different_estimator" %in% hyp(x))
  # no refit without the data, with a message saying how; `data` supplies it
  f <- local({ dl <- d; did_cs(dl, "y", "id", "time", "first_treat") })
  x <- dd_compare(f, nums(planted$different_base_period))
  expect_false(any(c("different_base_period", "different_control_group") %in% x$hypotheses$hypothesis))
  expect_match(x$hypotheses$evidence[x$hypotheses$hypothesis == "refit"], "pass the data as `data`")
  x <- dd_compare(f, nums(planted$different_base_period), data = d)
  expect_identical(hyp(x), "different_base_period")
  # refit = FALSE: numbers only
  x <- dd_compare(a, nums(planted$different_base_period), refit = FALSE)
  expect_false(any(c("different_base_period", "different_control_group", "refit") %in% x$hypotheses$hypothesis))
  expect_identical(hyp(x), "estimates_differ")
  expect_identical(d, d0)
})

test_that("dd_compare: tidy()'s term names match the fit's, and a planted factor is recognised on either side", {
  d <- sim_panel()
  a <- did_twfe(d, "y", "id", "year", "treat", cluster = "state")
  G <- 30
  expect_equal(unname(a$n_clusters), G)
  b <- data.frame(term = generics::tidy(a)$term, estimate = a$coeftable$estimate,
                  std.error = a$coeftable$std.error / sqrt(G / (G - 1)))
  expect_identical(b$term, "ATT (TWFE)")
  for (x in list(dd_compare(a, b), dd_compare(b, a))) {
    expect_identical(x$table$term, "ATT")
    expect_true(x$hypotheses$supported[x$hypotheses$hypothesis == "se_small_sample_factor"])
    expect_match(x$hypotheses$evidence[x$hypotheses$hypothesis == "se_small_sample_factor"], "cluster factor 1.0170952")
  }
  # the factor planted the other way (b's SE larger) on the data-frame side
  b2 <- b; b2$std.error <- a$coeftable$std.error * sqrt(G / (G - 1))
  h <- dd_compare(b2, a)$hypotheses
  expect_true(h$supported[h$hypothesis == "se_small_sample_factor"])
  # an event study's terms pass through unchanged
  e <- did_event(d, "y", "id", "year", "first_treat")
  t <- generics::tidy(e)
  expect_identical(dd_compare(e, data.frame(term = t$term, estimate = t$estimate, std.error = t$std.error))$table$term,
                   e$coeftable$term)
})
