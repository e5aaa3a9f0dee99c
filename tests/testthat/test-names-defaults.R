# Names and defaults across estimators (issue 37, item 6): common names
# accepted next to the peers' (did_dcdh's xformla, did_had's dose),
# arguments an estimator does not have are errors saying why, every print
# header states the comparison, base period and reference period, and
# aggregate() takes "event" for "dynamic".

test_that("did_dcdh takes xformla (= controls) and did_had takes dose (= dname)", {
  P <- cf_panel()
  set.seed(5); P$xc <- stats::rnorm(nrow(P))
  a <- did_dcdh(P, "y", "id", "t", "drev", effects = 2, controls = "xc")
  b <- did_dcdh(P, "y", "id", "t", "drev", effects = 2, xformla = ~ xc)
  expect_identical(a$coeftable, b$coeftable)
  expect_false(identical(a$coeftable, did_dcdh(P, "y", "id", "t", "drev", effects = 2)$coeftable))
  expect_error(did_dcdh(P, "y", "id", "t", "drev", xformla = ~ xc, controls = "xc"), "give one")
  expect_identical(did_had(P, "y", "id", "t", dose = "hd")$coeftable, did_had(P, "y", "id", "t", "hd")$coeftable)
  expect_error(did_had(P, "y", "id", "t", "hd", dose = "hd"), "give one")
})

test_that("arguments an estimator does not have are errors saying why", {
  P <- cf_panel()
  expect_error(did_rs(P, "y", "id", "t", "g", cluster = "cl"), "did_rs\\(\\) has no `cluster` argument: its design-based",
               class = "diffdiff_unsupported_argument")
  expect_error(did_rs(P, "y", "id", "t", "g", xformla = ~ x), "no covariate adjustment")
  expect_error(did_rs(P, "y", "id", "t", "g", weightsname = "w"), "weights units equally")
  expect_error(did_sdid(P, "y", "id", "t", "d", cluster = "cl"), "did_sdid\\(\\) has no `cluster` argument")
  expect_error(did_sdid(P, "y", "id", "t", "d", weightsname = "w"), "no defined role")
  expect_error(did_sdid(P, "y", "id", "t", "d", foo = 1), "does not use `foo`")
  expect_error(did_trop(P, "y", "id", "t", "d", cluster = "cl"), "cluster bootstrap is not implemented")
  expect_error(did_trop(P, "y", "id", "t", "d", xformla = ~ x), "residualise")
})

test_that("every print header states the comparison (and base and reference periods of event studies)", {
  P <- cf_panel()
  want <- c(did_2x2 = "the control group", did_twfe = "untreated observations", did_event = "untreated observations",
            did_cs = "never-treated units", did_sa = "never-treated units", did_bjs = "imputation",
            did_gardner = "imputation", did_stacked = "not-yet-treated units", did_etwfe = "not-yet-treated units",
            did_rs = "random timing", did_edid = "efficient weights", did_sdid = "synthetic control",
            did_trop = "untreated cells", did_ddd = "ineligible units", did_dose = "not-yet-treated units",
            did_had = "quasi-untreated", did_dcdh = "not changed yet", did_synth = "never-treated donors",
            did_lpdid = "not-yet-treated units", did_lwdid = "not-yet-treated units",
            did_spillover = "beyond the last ring (100)", did_cic = "never-treated units",
            rd_robust = "just below the cutoff (rv < 0)", did_dml = "never-treated units",
            did_bc = "not-yet-treated units", did_duration = "never-treated units (untreated hazards: common dynamics)")
  reg <- dd_estimators()
  expect_setequal(names(want), reg$name)
  for (e in reg$name) {
    set.seed(1)
    f <- suppressWarnings(suppressMessages(cf_estimators[[e]]$fit(P, list())))
    out <- utils::capture.output(print(f))
    line <- grep("^Comparison: ", out, value = TRUE)
    expect_length(line, 1L)
    expect_match(line, want[[e]], fixed = TRUE, label = e)
    if (!is.null(f$event_study)) expect_match(line, "reference period: ", label = e)
  }
  # two did_cs fits differing in their comparison and base period say so
  a <- utils::capture.output(print(aggregate(did_cs(P, "y", "id", "t", "g", nboot = 0), type = "dynamic")))
  b <- utils::capture.output(print(aggregate(did_cs(P, "y", "id", "t", "g", nboot = 0, control_group = "notyettreated",
                                                    base_period = "universal"), type = "dynamic")))
  expect_true(any(grepl("Comparison: never-treated units; base period: varying .*; reference period: none", a)))
  expect_true(any(grepl("Comparison: not-yet-treated units; base period: the reference period; reference period: -1", b)))
  # did_sa with the last-treated cohort as control names it
  sa <- suppressMessages(did_sa(P[P$g > 0, ], "y", "id", "t", "g"))
  expect_true(any(grepl("Comparison: the last-treated cohort \\(5\\)", utils::capture.output(print(sa)))))
})

test_that("aggregate() takes \"event\" for \"dynamic\" on every estimator that aggregates", {
  P <- cf_panel()
  for (f in list(did_cs(P, "y", "id", "t", "g", nboot = 0), did_edid(P, "y", "id", "t", "g"),
                 did_ddd(P, "y", "id", "t", "g", "q"), did_etwfe(P, "y", "id", "t", "g"),
                 did_dose(P, "y", "id", "t", "g", "dose"))) {
    set.seed(2); a <- suppressWarnings(aggregate(f, type = "event"))
    set.seed(2); b <- suppressWarnings(aggregate(f, type = "dynamic"))
    expect_identical(a$coeftable, b$coeftable)
  }
})
