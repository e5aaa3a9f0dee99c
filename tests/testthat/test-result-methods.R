# Every returned object plots and tidies (issue 37, item 7): did_check's
# treatment-status plot, tidiers and plots of equivalence_test, dd_compare,
# sdid_diagnostics, dd_power and placebo_test; aggregate() on a fit with
# nothing to aggregate; residuals(), fitted(), predict() of the regression
# estimators (parity with fixest).

castle_data <- function() read.csv(system.file("extdata", "castle.csv", package = "diffdiff"))

test_that("did_check: treatment status by cohort and by treatment path, plot, autoplot, tidy, glance", {
  castle <- castle_data()
  chk <- did_check(castle, "l_homicide", "sid", "year", gname = "effyear")
  s <- chk$status
  # cohorts in order of adoption, never treated last, with their sizes (states per adoption year)
  expect_identical(s$label, c("2005", "2006", "2007", "2008", "2009", "never"))
  expect_identical(s$n, c(1L, 13L, 4L, 2L, 1L, 29L))
  expect_identical(s$status[2, ], as.numeric(2000:2010 >= 2006))
  expect_true(all(s$status[6, ] == 0) && all(s$observed == 1))
  grDevices::pdf(NULL); on.exit(grDevices::dev.off())
  expect_identical(plot(chk), chk)
  g <- generics::glance(chk)
  expect_identical(c(g$n_units, g$n_periods, g$nobs), c(50L, 11L, 550L))
  expect_identical(g$n_warnings, sum(chk$findings$severity == "warning"))
  expect_identical(generics::tidy(chk)$code, chk$findings$code)
  if (requireNamespace("ggplot2", quietly = TRUE)) {
    p <- ggplot2::autoplot(chk)
    expect_s3_class(p, "ggplot")
    expect_identical(nrow(p$data), 6L * 11L)
  }
  # a reversible treatment: one row per path; a unit-period missing for 20 units shows as not observed
  d <- read.csv(system.file("extdata", "reversible_panel.csv", package = "diffdiff"))
  d <- d[!(d$id %in% 1:20 & d$t == 3), ]
  ch2 <- did_check(d, "y", "id", "t", dname = "D_rev")
  s2 <- ch2$status
  expect_identical(sum(s2$n), 120L)
  # every unit's path is one row: the rows' statuses are 0/1 where observed
  expect_true(all(s2$status %in% c(0, 1, NA)))
  # the 20 units missing period 3 are exactly the never-treated ones here
  nv <- which(s2$label == "never")
  expect_identical(s2$n[nv], 20L)
  expect_true(is.na(s2$status[nv, 3]) && s2$observed[nv, 3] == 0)
  expect_identical(plot(ch2), ch2)
})

test_that("equivalence_test, dd_compare, sdid_diagnostics, dd_power, placebo_test: tidy, glance, as.data.frame, plot", {
  d <- sim_panel()
  grDevices::pdf(NULL); on.exit(grDevices::dev.off())
  eq <- equivalence_test(did_event(d, "y", "id", "year", "first_treat"), margin = 0.75)
  te <- generics::tidy(eq)
  expect_identical(te$estimate, eq$table$estimate)
  expect_identical(te$term[1], paste0("event::", eq$table$event[1]))
  ge <- generics::glance(eq)
  expect_identical(c(ge$p.value, ge$bound, ge$margin), c(eq$p.value, eq$bound, 0.75))
  expect_identical(as.data.frame(eq), te)
  expect_identical(plot(eq), eq)
  cp <- dd_compare(did_twfe(d, "y", "id", "year", "treat"), did_twfe(d, "y", "id", "year", "treat", cluster = "state"))
  expect_identical(generics::tidy(cp)$se_ratio, cp$table$se_ratio)
  gc <- generics::glance(cp)
  expect_identical(gc$n_common, 1L)
  expect_match(gc$supported, "different_settings")
  expect_identical(plot(cp), cp)
  d$dd <- as.integer(d$first_treat > 0 & d$year >= d$first_treat)
  s <- suppressWarnings(did_sdid(d[d$first_treat %in% c(0, 2006), ], "y", "id", "year", "dd", se = "none"))
  sd <- sdid_diagnostics(s)
  expect_identical(generics::tidy(sd)$estimate, sd$leave_one_out$estimate)
  gs <- generics::glance(sd)
  expect_equal(gs$effective_controls, unname(sd$weights[["effective_controls"]]))
  expect_equal(gs$placebo_time, sd$placebo_time$estimate)
  expect_identical(plot(sd), sd)
  pw <- dd_power(n = 300, power = 0.8, n_pre = 3, n_post = 3, rho = 0.5)
  expect_equal(generics::glance(pw)$effect, pw$effect)
  expect_identical(nrow(generics::tidy(pw)), 1L)
  expect_identical(plot(pw), pw)
  pwd <- dd_power(n = 300, power = 0.8, n_pre = 3, n_post = 3, rho = 0.5, deff = 2, cluster_size = 5, icc = 0.1)
  expect_identical(plot(pwd), pwd)
  set.seed(1)
  pl <- placebo_test(did_cs(d, "y", "id", "year", "first_treat", nboot = 0), "permutation", nperm = 9)
  expect_identical(as.data.frame(pl), generics::tidy(pl))
})

test_that("aggregate() on a fit with nothing to aggregate is a diffdiff error naming the estimators that aggregate", {
  d <- sim_panel()
  expect_error(aggregate(did_twfe(d, "y", "id", "year", "treat")),
               "a did_twfe fit has nothing to aggregate.*did_cs\\(\\)", class = "diffdiff_nothing_to_aggregate")
  expect_error(aggregate(did_sa(d, "y", "id", "year", "first_treat"), type = "dynamic"), "nothing to aggregate")
})

test_that("residuals(), fitted(), predict(): the estimation sample, equal to fixest's", {
  need_peer("fixest")
  d <- sim_panel()
  tw <- did_twfe(d, "y", "id", "year", "treat", xformla = ~ x1)
  ft <- fixest::feols(y ~ treat + x1 | id + year, d, cluster = ~ id)
  expect_equal(residuals(tw), unname(residuals(ft)), tolerance = 1e-10)
  expect_equal(fitted(tw), unname(fitted(ft)), tolerance = 1e-10)
  expect_identical(predict(tw), fitted(tw))
  expect_equal(fitted(tw) + residuals(tw), d$y, tolerance = 1e-12)
  d2 <- d[d$year %in% c(2003, 2006) & d$first_treat %in% c(0, 2006), ]
  d2$treated <- as.integer(d2$first_treat > 0); d2$post <- as.integer(d2$year == 2006)
  x2 <- did_2x2(d2, "y", "treated", "post")
  expect_length(residuals(x2), nrow(d2))
  expect_equal(residuals(x2), unname(residuals(stats::lm(y ~ treated * post, d2))), tolerance = 1e-10)
  # missing outcomes: the estimation sample only
  dm <- d; dm$y[c(3, 10)] <- NA
  tm <- suppressMessages(did_twfe(dm, "y", "id", "year", "treat"))
  fm <- fixest::feols(y ~ treat | id + year, dm, notes = FALSE)
  expect_length(residuals(tm), nrow(d) - 2L)
  expect_equal(residuals(tm), unname(residuals(fm)), tolerance = 1e-10)
  # event studies and Sun-Abraham keep theirs too
  expect_length(residuals(did_event(d, "y", "id", "year", "first_treat")), nrow(d))
  expect_length(fitted(did_sa(d, "y", "id", "year", "first_treat")), nrow(d))
  expect_error(predict(tw, newdata = d), "absorbed", class = "diffdiff_no_newdata")
  expect_error(residuals(did_cs(d, "y", "id", "year", "first_treat", nboot = 0)), "not one regression",
               class = "diffdiff_not_a_regression")
  expect_error(fitted(tw, foo = 1), "does not use `foo`")
})

test_that("did_dcdh by subgroup and simulated power: tidy, glance, as.data.frame", {
  d <- read.csv(system.file("extdata", "reversible_panel.csv", package = "diffdiff"))
  b <- suppressMessages(did_dcdh(d, "y", "id", "t", "D_rev", effects = 2, by = "region"))
  g <- generics::glance(b)
  expect_identical(nrow(g), length(b$fits))
  expect_identical(g$by, names(b$fits))
  expect_identical(as.data.frame(b), generics::tidy(b))
  set.seed(1)
  ps <- dd_simulate_power(function(d) did_twfe(d, "y", "id", "time", "D"), dd_sim_basic, effect_sizes = c(0, 0.4),
                          nsim = 20, mc_se = 0.2, dgp_args = list(n_units = 40, n_pre = 2, n_post = 2))
  tp <- generics::tidy(ps)
  expect_false(inherits(tp, "dd_power_sim"))
  expect_identical(tp$power, ps$power)
  gp <- generics::glance(ps)
  expect_identical(gp$n_effects, 2L)
  expect_identical(gp$nsim, sum(ps$nsim))
})
