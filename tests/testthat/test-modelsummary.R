# modelsummary over five estimators: one row per estimand (their overall
# effects are different estimands and must not share an "ATT" row), the
# estimates and standard errors of each fit, and glance()'s counts.

five_fits <- function() {
  d <- sim_panel()
  list(TWFE = did_twfe(d, "y", "id", "year", "treat"),
       SA = did_sa(d, "y", "id", "year", "first_treat"),
       BJS = did_bjs(d, "y", "id", "year", "first_treat", pretrends = FALSE),
       Stacked = did_stacked(d, "y", "id", "year", "first_treat", kappa_pre = 2, kappa_post = 1),
       CS = aggregate(did_cs(d, "y", "id", "year", "first_treat", nboot = 0), type = "dynamic"))
}

test_that("a modelsummary table of five fits has one row per estimand", {
  skip_if_not_installed("modelsummary")
  skip_if_not_installed("broom")
  fits <- five_fits()
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

# modelsummary's default output is a tinytable (it needs knitr >= 1.43,
# which tools/install-deps.sh installs): the same rows in markdown, and the
# LaTeX and HTML outputs build
test_that("modelsummary's default (tinytable) output shows each estimand on its own row", {
  skip_if_not_installed("modelsummary")
  skip_if_not_installed("tinytable")
  fits <- five_fits()[c("TWFE", "SA", "CS")]
  tt <- modelsummary::modelsummary(fits, coef_omit = "^event", gof_map = c("nobs", "n.units"))
  expect_s4_class(tt, "tinytable")
  md <- tinytable::save_tt(tt, "markdown")
  labels <- vapply(fits, function(f) { t <- tidy(f)$term; t[grepl("^ATT", t)][1] }, "")
  expect_identical(anyDuplicated(labels), 0L)
  for (l in labels) expect_match(md, l, fixed = TRUE)
  expect_match(md, sprintf("%.3f", coef(fits$SA)[["ATT"]]), fixed = TRUE)
  expect_match(md, "n.units", fixed = TRUE)
  for (o in c("latex", "html")) expect_match(tinytable::save_tt(tt, o), labels[["SA"]], fixed = TRUE)
})
