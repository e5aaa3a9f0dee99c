# summary(fit, cluster = , vcov = ) (issue 37, item 2): the influence-function
# fits recompute their variance from the stored influence functions, equal
# to the refit with that cluster; every other fit stops with the update()
# call that refits; no method ignores an argument it does not use.

test_that("summary(cs, cluster = ) equals the refit clustered by that column, for every spelling", {
  d <- sim_panel()
  cs <- did_cs(d, "y", "id", "year", "first_treat", nboot = 0)
  ref <- did_cs(d, "y", "id", "year", "first_treat", nboot = 0, cluster = "state")
  for (cl in list("state", ~state)) {
    s <- summary(cs, cluster = cl)$fit
    expect_equal(s$coeftable$std.error, ref$coeftable$std.error, tolerance = 1e-12)
    expect_equal(s$coeftable$conf.low, ref$coeftable$conf.low, tolerance = 1e-12)
    expect_equal(s$pretest$W, ref$pretest$W, tolerance = 1e-12)
    expect_equal(unname(vcov(s)), unname(vcov(ref)), tolerance = 1e-12)
    expect_identical(s$n_clusters, ref$n_clusters)
    expect_match(s$vcov_label, "clustered by state; recomputed by summary\\(\\)")
  }
  # the printed summary says so, and differs from the unclustered one
  out <- utils::capture.output(print(summary(cs, cluster = "state")))
  expect_true(any(grepl("clustered by state; recomputed by summary()", out, fixed = TRUE)))
  expect_false(identical(out, utils::capture.output(print(summary(cs)))))
  # clustering by the unit identifier is the unit-level variance
  expect_equal(summary(ref, cluster = "id")$fit$coeftable$std.error, cs$coeftable$std.error, tolerance = 1e-12)
  # the estimates never change, and the fit itself is untouched
  expect_identical(summary(cs, cluster = "state")$fit$coeftable$estimate, cs$coeftable$estimate)
  expect_identical(cs$coeftable, did_cs(d, "y", "id", "year", "first_treat", nboot = 0)$coeftable)
})

test_that("summary(aggregate, cluster = ) equals the aggregate of the clustered refit (event study included)", {
  d <- sim_panel()
  cs <- did_cs(d, "y", "id", "year", "first_treat", nboot = 0)
  ref <- did_cs(d, "y", "id", "year", "first_treat", nboot = 0, cluster = "state")
  for (type in c("dynamic", "group", "simple", "calendar")) {
    s <- summary(aggregate(cs, type = type), cluster = ~state, data = d)$fit
    r <- aggregate(ref, type = type)
    expect_equal(s$coeftable$std.error, r$coeftable$std.error, tolerance = 1e-12, label = type)
    if (type == "dynamic") {
      expect_equal(s$event_study$vcov, r$event_study$vcov, tolerance = 1e-12)
      expect_equal(s$event_study$std.error, r$event_study$std.error, tolerance = 1e-12)
    }
  }
  # did_ddd and did_edid (the other influence-function fits) too
  P <- cf_panel()
  e0 <- did_edid(P, "y", "id", "t", "g")
  e1 <- did_edid(P, "y", "id", "t", "g", cluster = "cl")
  expect_equal(summary(e0, cluster = "cl")$fit$coeftable$std.error, e1$coeftable$std.error, tolerance = 1e-12)
  t0 <- did_ddd(P, "y", "id", "t", "g", "q")
  t1 <- did_ddd(P, "y", "id", "t", "g", "q", cluster = "cl")
  expect_equal(summary(t0, cluster = "cl")$fit$coeftable$std.error, t1$coeftable$std.error, tolerance = 1e-12)
  expect_equal(summary(aggregate(t0, type = "dynamic"), cluster = "cl")$fit$coeftable$std.error,
               aggregate(t1, type = "dynamic")$coeftable$std.error, tolerance = 1e-12)
})

test_that("a bootstrap fit reclustered by summary() reports analytic standard errors and drops its band", {
  d <- sim_panel()
  set.seed(3)
  cs <- did_cs(d, "y", "id", "year", "first_treat", nboot = 199)
  expect_false(is.null(cs$coeftable$cband.low))
  s <- summary(cs, cluster = "state")$fit
  ref <- did_cs(d, "y", "id", "year", "first_treat", nboot = 0, cluster = "state")
  expect_equal(s$coeftable$std.error, ref$coeftable$std.error, tolerance = 1e-12)
  expect_null(s$coeftable$cband.low)
  expect_identical(s$vcov_type, "analytic")
  expect_match(s$vcov_label, "the fit: Multiplier bootstrap")
})

test_that("summary() with another variance on a fit that cannot recompute it names the update() call", {
  d <- sim_panel()
  tw <- did_twfe(d, "y", "id", "year", "treat")
  expect_error(summary(tw, cluster = "state"), 'update\\(fit, cluster = "state"\\)', class = "diffdiff_refit_needed")
  expect_error(summary(tw, cluster = ~state), "update\\(fit, cluster = ~state\\)")
  expect_error(summary(tw, vcov = "iid"), 'update\\(fit, vcov = "iid"\\)')
  # and the update() it names works and changes the variance
  u <- update(tw, cluster = ~state)
  expect_false(isTRUE(all.equal(u$coeftable$std.error, tw$coeftable$std.error)))
  expect_match(u$vcov_label, "state")
  ev <- did_event(d, "y", "id", "year", "first_treat")
  expect_error(summary(ev, cluster = "state"), "update\\(fit, cluster")
  # an estimator without the argument says so
  d$d <- as.integer(d$first_treat > 0 & d$year >= d$first_treat)
  s <- suppressWarnings(did_sdid(d, "y", "id", "year", "d", staggered = TRUE, se = "none"))
  expect_error(summary(s, cluster = "state"), "did_sdid\\(\\) has no `cluster` argument", class = "diffdiff_no_such_variance")
  # vcov on an influence-function fit: no such argument either
  cs <- did_cs(d, "y", "id", "year", "first_treat", nboot = 0)
  expect_error(summary(cs, vcov = "iid"), '`vcov` = "iid" does not apply to a did_cs fit')
  # aggregates of fits that keep no influence functions: refit, then aggregate
  et <- did_etwfe(d, "y", "id", "year", "first_treat")
  expect_error(summary(aggregate(et, type = "dynamic"), cluster = "state"),
               'aggregate\\(update\\(fit, cluster = "state"\\), type = "dynamic"\\)')
  # a survey fit: its design gives the variance
  des <- survey_design(d, weights = ~ w, ids = ~ state)
  sv <- did_cs(d, "y", "id", "year", "first_treat", nboot = 0, survey = des)
  expect_error(summary(sv, cluster = "state"), "survey design", class = "diffdiff_survey_variance")
  expect_error(summary(aggregate(sv, type = "simple"), cluster = "state"), "survey design")
})

test_that("summary(cluster = ) errors: bad column, varying within unit, one cluster, data not found", {
  d <- sim_panel()
  cs <- did_cs(d, "y", "id", "year", "first_treat", nboot = 0)
  expect_error(summary(cs, cluster = "nope"), '`cluster` = "nope" is not a column')
  d2 <- d; d2$st2 <- d2$state; d2$st2[2] <- 99
  expect_error(summary(cs, cluster = "st2", data = d2), "must be constant within each unit")
  d2$one <- 1
  expect_error(summary(cs, cluster = "one", data = d2), "single cluster", class = "diffdiff_one_cluster")
  d2$miss <- d2$state; d2$miss[d2$id == 6] <- NA
  expect_error(summary(cs, cluster = "miss", data = d2), "missing values")
  expect_error(summary(cs, cluster = "state", data = d[d$id != 6, ]), "not in `data`")
  f <- local({ dd <- d; did_cs(dd, "y", "id", "year", "first_treat", nboot = 0) })
  expect_error(summary(f, cluster = "state"), "pass `data` =")
  expect_identical(summary(f, cluster = "state", data = d)$fit$n_clusters, 30L)
  expect_error(summary(cs, cluster = c("state", "year")), "one variable")
})

test_that("no method ignores an argument it does not use", {
  d <- sim_panel()
  tw <- did_twfe(d, "y", "id", "year", "treat")
  cs <- did_cs(d, "y", "id", "year", "first_treat", nboot = 0)
  a <- aggregate(cs, type = "dynamic")
  calls <- list(
    summary = function(x) summary(x, clustr = "state"), print = function(x) print(x, foo = 1),
    coef = function(x) coef(x, foo = 1), vcov = function(x) vcov(x, foo = 1), nobs = function(x) nobs(x, foo = 1),
    confint = function(x) confint(x, foo = 1), as.data.frame = function(x) as.data.frame(x, foo = 1))
  for (f in list(tw, cs, a)) for (k in names(calls))
    expect_error(utils::capture.output(calls[[k]](f)), sprintf("%s() does not use `%s`", k,
                 if (k == "summary") "clustr" else "foo"), fixed = TRUE, label = paste(k, class(f)[1]))
  # tidy() and glance(): broom's contract (modelsummary passes vcov = NULL,
  # gof_map, coef_rename through), but a variance or a misspelt argument is
  # an error, not a table with the old variance
  for (f in list(tw, cs, a)) {
    expect_identical(generics::tidy(f, vcov = NULL, coef_rename = FALSE), generics::tidy(f))
    expect_identical(generics::glance(f, gof_map = list()), generics::glance(f))
    expect_error(generics::tidy(f, vcov = "iid"), "does not recompute the variance")
    expect_error(generics::tidy(f, cluster = ~state), "does not recompute the variance")
    expect_error(generics::tidy(f, conf.levl = 0.9), "did you mean `conf.level`")
  }
  expect_error(print(summary(tw), foo = 1), "print() does not use `foo`", fixed = TRUE)
  if (requireNamespace("ggplot2", quietly = TRUE))
    expect_error(ggplot2::autoplot(cs, foo = 1), "autoplot() does not use `foo`", fixed = TRUE)
  expect_error(aggregate(did_etwfe(d, "y", "id", "year", "first_treat"), type = "simple", foo = 1),
               "aggregate() does not use `foo`", fixed = TRUE)
  # the diagnostics' methods too
  b <- bacon_decomp(d, "y", "id", "year", dname = "treat")
  for (g in list(function(x) print(x, foo = 1), function(x) summary(x, foo = 1),
                 function(x) as.data.frame(x, foo = 1)))
    expect_error(utils::capture.output(g(b)), "does not use `foo`")
  expect_error(generics::tidy(b, vcov = "iid"), "does not recompute the variance")
  # data.frame() passes stringsAsFactors to as.data.frame(): honoured, not an error
  df <- data.frame(tw)
  expect_identical(df$term, generics::tidy(tw)$term)
  expect_true(is.factor(as.data.frame(tw, stringsAsFactors = TRUE)$term))
  expect_identical(rownames(as.data.frame(tw, row.names = "r1")), "r1")
})
