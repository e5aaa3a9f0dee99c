# modelsummary over five estimators: one row per estimand (their overall
# effects are different estimands and must not share an "ATT" row), the
# estimates and standard errors of each fit, and glance()'s counts.

test_that("a modelsummary table of five fits has one row per estimand", {
  skip_if_not_installed("modelsummary")
  skip_if_not_installed("broom")
  d <- sim_panel()
  fits <- list(TWFE = did_twfe(d, "y", "id", "year", "treat"),
               SA = did_sa(d, "y", "id", "year", "first_treat"),
               BJS = did_bjs(d, "y", "id", "year", "first_treat", pretrends = FALSE),
               Stacked = did_stacked(d, "y", "id", "year", "first_treat", kappa_pre = 2, kappa_post = 1),
               CS = aggregate(did_cs(d, "y", "id", "year", "first_treat", nboot = 0), type = "dynamic"))
  m <- modelsummary::modelsummary(fits, output = "data.frame", coef_omit = "^event", fmt = 6,
                                  gof_map = c("nobs", "n.units", "n.clusters"))
  est <- m[m$part == "estimates" & m$statistic == "estimate", ]
  expect_identical(nrow(est), 5L)                                  # five estimands, five rows
  expect_identical(anyDuplicated(est$term), 0L)
  for (k in seq_along(fits)) {
    f <- fits[[k]]
    row <- est[est$term == tidy(f)$term[tidy(f)$term != "ATT" & grepl("^ATT", tidy(f)$term)], names(fits)[k]]
    expect_equal(as.numeric(row), unname(coef(f)["ATT"]), tolerance = 1e-6, info = names(fits)[k])
    others <- setdiff(names(fits), names(fits)[k])
    expect_true(all(est[est$term == tidy(f)$term[grepl("^ATT", tidy(f)$term)], others] == ""))
  }
  g <- m[m$part == "gof", ]
  expect_true(all(c("Num.Obs.", "n.units", "n.clusters") %in% g$term))
  expect_identical(g[g$term == "n.units", "TWFE"], "300")
})
