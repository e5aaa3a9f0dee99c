# The unit panel of the influence-function estimators (R/unit_panel.R):
# did_cs, did_ddd, did_edid and did_dose build their units, their
# influence-function rows and the few-clusters warning through one builder,
# dd_unit_panel(), so the checks and warnings are the same in all four.

# 240 units x 5 periods, cohorts 3 and 4 and never treated, an eligibility
# partition q (did_ddd), a unit dose (did_dose), 12 clusters mixing treated
# and untreated units
up_panel <- function(n = 240, T = 5, seed = 11) {
  set.seed(seed)
  d <- expand.grid(t = seq_len(T), id = seq_len(n))[, c("id", "t")]
  gu <- rep(c(0, 3, 4), length.out = n)
  d$g <- gu[d$id]
  d$q <- rep(c(0, 1, 1, 0, 1), length.out = n)[d$id]
  d$dose <- ifelse(gu > 0, stats::runif(n, 0.2, 2), 0)[d$id]
  d$cl <- (d$id %/% 3) %% 12                        # each cluster holds all three cohorts
  on <- as.numeric(d$g > 0 & d$t >= d$g)
  d$y <- stats::rnorm(n)[d$id] + 0.3 * d$t + on * (1 + d$dose + 0.5 * d$q) + stats::rnorm(nrow(d))
  d
}

up_fits <- list(
  did_cs = function(d, ...) did_cs(d, "y", "id", "t", "g", nboot = 0, ...),
  did_ddd = function(d, ...) did_ddd(d, "y", "id", "t", "g", "q", ...),
  did_edid = function(d, ...) did_edid(d, "y", "id", "t", "g", ...),
  did_dose = function(d, ...) did_dose(d, "y", "id", "t", "g", "dose", degree = 1, nboot = 0, ...)
)

# the warnings of a call (the fit itself is kept out of the way)
up_warnings <- function(expr) {
  w <- character()
  withCallingHandlers(expr, warning = function(c) {
    w <<- c(w, conditionMessage(c))
    invokeRestart("muffleWarning")
  })
  w
}

few_rx <- "clusters? with treated observations and [0-9]+ with untreated \\(control\\) units"

test_that("few treated clusters: the same warning from did_cs, did_ddd, did_edid and did_dose", {
  d <- up_panel()
  few <- d[d$g == 0 | d$cl %in% c(0, 1), ]          # treated units in 2 of the 12 clusters
  msgs <- lapply(up_fits, function(f) up_warnings(f(few, cluster = "cl")))
  for (e in names(msgs)) {
    hit <- grep(few_rx, msgs[[e]], value = TRUE)
    expect_length(hit, 1L)
    expect_match(hit, paste0("^`cluster` = \"cl\": 2 clusters with treated observations and 12 with untreated ",
                             "\\(control\\) units; .*neither the CR1 interval nor the wild cluster bootstrap is exact"),
                 info = e)
  }
  few_msg <- lapply(msgs, grep, pattern = few_rx, value = TRUE)
  for (e in names(few_msg)[-1]) expect_identical(few_msg[[e]], few_msg[["did_cs"]], info = e)
  # few untreated clusters: the never-treated units in 3 clusters
  fewc <- d[d$g > 0 | d$cl %in% c(0, 1, 2), ]
  for (e in names(up_fits)) {
    hit <- grep(few_rx, up_warnings(up_fits[[e]](fewc, cluster = "cl")), value = TRUE)
    expect_length(hit, 1L)
    expect_match(hit, ": 12 clusters with treated observations and 3 with untreated", info = e)
  }
})

test_that("few treated units under the default (unit) clustering: the same warning from all four", {
  d <- up_panel()
  # 4 treated units, two per cohort, eligible and ineligible (did_ddd)
  tiny <- d[d$g == 0 | d$id %in% c(2, 11, 3, 6), ]
  msgs <- lapply(up_fits, function(f) {
    w <- up_warnings(tryCatch(f(tiny), error = function(e) NULL))
    grep(few_rx, w, value = TRUE)
  })
  for (e in names(msgs)) {
    expect_length(msgs[[e]], 1L)
    expect_match(msgs[[e]], "^The units \\(`idname` = \"id\", the clusters of the variance\\): 4 clusters with treated observations and 80 with untreated",
                 info = e)
  }
})

test_that("many treated and untreated clusters (or units): no warning from any of the four", {
  d <- up_panel()
  for (e in names(up_fits)) {
    expect_identical(up_warnings(up_fits[[e]](d, cluster = "cl")), character(), info = e)
    expect_identical(up_warnings(up_fits[[e]](d)), character(), info = e)
  }
})

test_that("a single cluster in the estimation sample is the same error in all four", {
  d <- up_panel(); d$one <- 1
  for (e in names(up_fits))
    expect_error(up_fits[[e]](d, cluster = "one"),
                 '`cluster` = "one" has a single cluster in the estimation sample', info = e)
  # did_dose: the clusters are counted among the units kept (the units
  # treated in the first period are dropped, leaving one cluster)
  d$two <- ifelse(d$id == 2, 2, 1); d$g[d$id == 2] <- 1
  expect_error(suppressWarnings(up_fits$did_dose(d, cluster = "two")),
               '`cluster` = "two" has a single cluster in the estimation sample')
})

test_that("weights and clusters constant within units: the same errors in did_ddd, did_edid and did_dose", {
  d <- up_panel()
  d$wv <- 1 + 0.1 * d$t                              # varies within units
  d$clv <- d$t %% 3                                  # varies within units
  for (e in c("did_ddd", "did_edid", "did_dose")) {
    expect_error(up_fits[[e]](d, weightsname = "wv"), '`weightsname` = "wv" must be constant within each unit', info = e)
    expect_error(up_fits[[e]](d, cluster = "clv"), '`cluster` = "clv" must be constant within each unit; unit 1 has values 0 and 1 and 2',
                 info = e)
  }
  # did_cs: weights may vary over time (each cell uses its base period's, as did)
  expect_s3_class(up_fits$did_cs(d, weightsname = "wv"), "did_cs")
  expect_error(up_fits$did_cs(d, cluster = "clv"), '`cluster` = "clv" must be constant within each unit')
})

test_that("no estimator lays out its units or warns about few clusters itself: only R/unit_panel.R", {
  root <- source_root("R/unit_panel.R")
  code <- function(f) {
    x <- readLines(f)
    sub("^\\s*#.*$", "", x)                          # comment lines out
  }
  files <- list.files(file.path(root, "R"), "\\.R$", full.names = TRUE)
  calls <- function(pat, fs) unlist(lapply(fs, function(f) {
    i <- grep(pat, code(f))
    if (length(i)) paste0(basename(f), ":", i) else character()
  }))
  # dd_cs_prepare() is called from the builder only; no estimator file
  # warns about few clusters itself
  builder <- file.path(root, "R", "unit_panel.R")
  expect_identical(calls("dd_cs_prepare\\(", setdiff(files, builder)), character())
  expect_identical(calls("dd_warn_few_clusters\\(", grep("/did_[^/]*\\.R$", files, value = TRUE)), character())
  expect_length(calls("dd_cs_prepare\\(", builder), 1L)
  expect_length(calls("dd_warn_few_clusters\\(", builder), 1L)
  # the four estimators' prologue is the builder's
  est <- file.path(root, "R", c("did_cs.R", "did_ddd.R", "did_edid.R", "did_dose.R"))
  pro <- "dd_cs_prepare\\(|dd_warn_few_clusters\\(|dd_check_nclusters\\(|dd_svy_check_units\\(|dd_svy_if_rows\\(|dd_if_design\\(|dd_panel\\("
  expect_identical(calls(pro, est), character())
  for (f in est) expect_true(any(grepl("dd_unit_panel\\(", code(f))), info = basename(f))
})
