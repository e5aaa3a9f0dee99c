# Smoke tests of the six practitioner workflows in bench/scenarios/ (the
# timings are bench/scenarios/run.R's, not the tests'): each chain runs at
# its small scale with every phase succeeding, on the data its builder makes,
# and its main estimate is near the effect the builder planted.

run_scenario_small <- function(name) {
  dir <- scenario_dir()
  old <- Sys.getenv(c("SCENARIO_NO_MAIN", "SCENARIO_DIR"), unset = NA)
  Sys.setenv(SCENARIO_NO_MAIN = "1", SCENARIO_DIR = dir)
  on.exit(for (k in names(old)) if (is.na(old[[k]])) Sys.unsetenv(k) else do.call(Sys.setenv, as.list(old[k])))
  env <- new.env(parent = globalenv())
  sys.source(file.path(dir, paste0(name, ".R")), envir = env)
  r <- suppressWarnings(suppressMessages(get("scenario_run", env)(name, "small", get(paste0(name, "_phases"), env)(),
                                                                   get(paste0(name, "_data"), env)("small"))))
  expect_true(all(r$phases$ok), info = paste(name, paste(r$phases$error[!r$phases$ok], collapse = "; ")))
  expect_gt(nrow(r$phases), 2L)
  expect_true(all(r$phases$seconds >= 0))
  r
}

near <- function(est, se, truth, k = 5) expect_lt(abs(est - truth), k * se)

test_that("scenario 1 (staggered campaign) runs end to end", {
  r <- run_scenario_small("campaign_staggered")
  expect_identical(r$phases$phase[c(1, 2, 4)], c("bacon_decomposition", "cs_fit_with_covariates_bootstrap999",
                                                 "honest_did_M_grid"))
  expect_true(is.finite(r$headline$cs_att) && r$headline$cs_se > 0)
  # without and with the (irrelevant) covariates: close
  expect_lt(abs(r$headline$cs_att - r$headline$cs_nocov_att), 3 * r$headline$cs_se)
})

test_that("scenario 2 (brand survey) runs end to end; the design-based ATT is near the planted 3", {
  r <- run_scenario_small("brand_awareness_survey")
  near(r$headline$tsl_att, r$headline$tsl_se, 3)
  expect_gt(r$headline$jk1_se, 0)
})

test_that("scenario 3 (microdata to panel) runs end to end; the ATT is near the planted 3", {
  r <- run_scenario_small("brfss_panel")
  expect_identical(r$headline$cells, 500L)
  near(r$headline$cs_att, r$headline$cs_se, 3)
})

test_that("scenario 4 (few markets, synthetic DiD) runs end to end; the ATT is near the planted 2", {
  r <- run_scenario_small("geo_few_markets")
  near(r$headline$att, r$headline$se_jackknife, 2)
  expect_gt(r$headline$se_bootstrap, 0)
})

test_that("scenario 5 (reversible treatment, dCDH under a design) runs end to end; the first effect is near 2", {
  r <- run_scenario_small("reversible_dcdh")
  near(r$headline$effect_1, r$headline$se_1, 2)
})

test_that("scenario 6 (dose response) runs end to end; ACRT near 2, ATT near 1 + 2 E[dose]", {
  r <- run_scenario_small("dose_response")
  expect_lt(abs(r$headline$acrt_o - 2), 0.5)
  expect_lt(abs(r$headline$att_o - (1 + 2 * exp(0.5 + 0.5^2 / 2))), 0.5)
})
