# Parity tests compare with live peers. A user without the peer skips them;
# with DIFFDIFF_REQUIRE_PARITY=true (set by `make test` and CI, and by
# tools/sanitize.sh and tools/valgrind.sh when every peer is installed) a
# missing peer is a failure, so parity can never be skipped silently in CI.
# Every test that needs a peer goes through need_peer() (or has_peer() for a
# block inside a larger test); skip_if_not_installed() is left for the tool
# packages in dd_tool_packages (tests/testthat/test-peer-skips.R checks both
# lists against the test files).

# the packages whose numbers diffdiff is checked against (peers and reference
# implementations); tools/sanitize.sh and tools/valgrind.sh read this list
dd_peer_packages <- c("fixest", "did", "DRDID", "didimputation", "bacondecomp", "TwoWayFEWeights", "clubSandwich",
                      "survey", "mvtnorm", "MASS", "nprobust", "YatchewTest", "StuteTest", "DIDHAD", "contdid",
                      "triplediff", "staggered", "etwfe", "Synth", "kernlab", "rdrobust",
                      # the database back end's engines and interfaces (the
                      # reference is the in-memory fit; RSQLite from Debian)
                      "DBI", "dbplyr", "RSQLite",
                      # regression discontinuity: rd_density() against rddensity
                      "rddensity",
                      # ovb_sensitivity()'s bound formulas against sensemakr's
                      "sensemakr",
                      # did_bc() against badcontrols::didbc (ptetools' cells)
                      "badcontrols",
                      # vcov = "HC2" / "HC3" against vcovHC()
                      "sandwich",
                      # did_stacked(balance = "entropy")'s weights against ebalance()
                      "ebal")

# packages the tests use as tools, not as references (plots, child processes,
# progress bars, table output, input classes): a plain skip_if_not_installed()
dd_tool_packages <- c("ggplot2", "callr", "progressr", "modelsummary", "broom", "tinytable", "tibble", "data.table",
                      "future", "future.apply",
                      # did_dml's learners (the tests check them, not against them)
                      "glmnet", "ranger",
                      # dd_report()'s rendering
                      "rmarkdown", "knitr")

parity_required <- function() identical(Sys.getenv("DIFFDIFF_REQUIRE_PARITY"), "true")

# NULL if pkg (>= min_version) is installed, else what is missing
peer_missing <- function(pkg, min_version = NULL) {
  if (!requireNamespace(pkg, quietly = TRUE)) return(sprintf("peer package '%s' is not installed", pkg))
  if (!is.null(min_version) && utils::packageVersion(pkg) < min_version)
    return(sprintf("peer package '%s' is %s, older than %s", pkg, format(utils::packageVersion(pkg)), min_version))
  NULL
}

# skip the test without the peer, or fail under DIFFDIFF_REQUIRE_PARITY=true;
# then set the peer up (fixest on one thread, etwfe's backports). Skips say
# "parity: ..." (the sanitizer and valgrind runs count them).
need_peer <- function(pkg, min_version = NULL) {
  miss <- peer_missing(pkg, min_version)
  if (!is.null(miss)) {
    if (parity_required())
      stop(sprintf("%s: it is required for parity tests (DIFFDIFF_REQUIRE_PARITY=true)", miss), call. = FALSE)
    testthat::skip(paste("parity:", miss))
  }
  fixest_threads_1(pkg)
  if (pkg %in% c("etwfe", "marginaleffects")) peer_backports()
  invisible(TRUE)
}

# The DuckDB tests of the database back end: duckdb compiles from source for
# over an hour on 2 cores, so CI does not install it; these are the only
# parity tests that skip under DIFFDIFF_REQUIRE_PARITY=true, saying so.
# `make test-duckdb` installs it (tools/install-duckdb.sh) and runs them.
# (duckdb is not in Suggests, as R CMD check would then require it: it is
# reached through a name held in a variable)
dd_duckdb <- "duckdb"
need_duckdb <- function() {
  need_peer("DBI"); need_peer("dbplyr")
  if (!requireNamespace(dd_duckdb, quietly = TRUE))
    testthat::skip("duckdb is not installed (it compiles from source for over an hour, so CI does not install it; `make test-duckdb` installs it and runs these tests)")
  invisible(TRUE)
}

# a database table holding `d`, on an in-memory database of `driver`
# ("RSQLite" or "duckdb"), disconnected when the calling test ends
db_table <- function(d, driver = "RSQLite", name = "panel", env = parent.frame()) {
  con <- if (driver == "duckdb") DBI::dbConnect(getExportedValue(dd_duckdb, "duckdb")(), dbdir = ":memory:")
         else DBI::dbConnect(RSQLite::SQLite(), ":memory:")
  withr::defer(if (driver == "duckdb") DBI::dbDisconnect(con, shutdown = TRUE) else DBI::dbDisconnect(con),
                  envir = env)
  DBI::dbWriteTable(con, name, as.data.frame(d))
  dplyr::tbl(con, name)
}

# for a block inside a larger test: TRUE with the peer; FALSE without it, or
# an error under DIFFDIFF_REQUIRE_PARITY=true
has_peer <- function(pkg, min_version = NULL) {
  miss <- peer_missing(pkg, min_version)
  if (is.null(miss)) { fixest_threads_1(pkg); return(TRUE) }
  if (parity_required())
    stop(sprintf("%s: it is required for parity tests (DIFFDIFF_REQUIRE_PARITY=true)", miss), call. = FALSE)
  FALSE
}

# marginaleffects 1.0.0 (under etwfe::emfx()) calls `%||%`, which base R has
# only from 4.4 on, without importing it; on older R the lookup from its
# namespace falls through to the global environment, where this supplies it
# (a bug of the peer on R < 4.4, not of diffdiff).
peer_backports <- function() {
  if (!exists("%||%", envir = baseenv(), inherits = FALSE) && !exists("%||%", envir = globalenv(), inherits = FALSE))
    assign("%||%", function(x, y) if (is.null(x)) y else x, envir = globalenv())
}

fixest_threads_1 <- function(pkg) {
  if (pkg == "fixest") fixest::setFixest_nthreads(1)
}

# elementwise relative difference
rel_diff <- function(a, b) {
  a <- unname(as.vector(a)); b <- unname(as.vector(b))
  stopifnot(length(a) == length(b))
  max(abs(a - b) / abs(b))
}

sim_panel <- function() {
  read.csv(system.file("extdata", "sim_panel.csv", package = "diffdiff"))
}

# A simulated unbalanced panel with three fixed-effect dimensions and weights.
sim_unbalanced <- function(n_units = 150, n_t = 12, seed = 42) {
  set.seed(seed)
  d <- expand.grid(id = seq_len(n_units), t = seq_len(n_t))
  d <- d[sample(nrow(d), round(0.85 * nrow(d))), ]           # unbalanced
  d$firm <- (d$id * 7 + d$t %/% 4) %% 40                     # third FE, crosses units
  d$state <- d$id %% 17
  g <- sample(c(0, 4, 7, 10), n_units, replace = TRUE)
  d$g <- g[d$id]
  d$d <- as.integer(d$g > 0 & d$t >= d$g)
  d$x1 <- rnorm(nrow(d)); d$x2 <- rnorm(nrow(d))
  d$w <- runif(nrow(d), 0.2, 3)
  d$y <- 0.1 * d$id %% 5 + 0.2 * d$t + 0.3 * (d$firm %% 3) + 1.5 * d$d + 0.5 * d$x1 -
    0.2 * d$x2 + rnorm(nrow(d))
  d
}

# The 2x2 slice of the shipped panel: the 2006 cohort against never-treated
# units, in 2004 and 2007.
sim_2x2 <- function() {
  d <- sim_panel()
  d <- d[d$year %in% c(2004, 2007) & d$first_treat %in% c(0, 2006), ]
  d$treated <- as.integer(d$first_treat == 2006)
  d$post <- as.integer(d$year == 2007)
  d
}

# A removed results-changing option (issue 35; R/rules.R's dd_rules_legacy):
# set to `value`, the first fit warns once that it is gone and names the
# `rules` value that replaces it, and a second fit does not warn again.
# run: a function of no arguments giving a fit; returns the warned fit (the
# caller checks that its numbers equal the default fit's).
expect_removed_option <- function(option, value, estimator, rule, run) {
  rm(list = ls(diffdiff:::dd_rules_warned), envir = diffdiff:::dd_rules_warned)
  old <- options(stats::setNames(list(value), option))
  on.exit(options(old))
  testthat::expect_warning(fit <- run(),
                           sprintf("`%s` is gone and is ignored; pass %s(rules = \"%s\")", option, estimator, rule),
                           fixed = TRUE)
  testthat::expect_no_warning(run())
  fit
}

# A peer that lives in a private library because it cannot be installed
# into R 4.2.2's own (qte 2.0.0: quantreg -> MatrixModels needs Matrix >=
# 1.6; tools/install-qte.sh). The library is named by the environment
# variable `env` (default `default`); it runs in a child process
# (peer_subprocess()), never in this one (its Matrix 1.6 cannot load next to
# R's Matrix 1.5). Returns the library; skips without the peer, or fails
# under DIFFDIFF_REQUIRE_PARITY=true, as need_peer() does.
need_private_peer <- function(pkg, env, default, min_version = NULL) {
  lib <- Sys.getenv(env, default)
  desc <- file.path(lib, pkg, "DESCRIPTION")
  miss <- if (!file.exists(desc)) sprintf("peer package '%s' is not installed in %s (%s; tools/install-%s.sh)", pkg, lib, env, pkg)
          else if (!is.null(min_version) && package_version(read.dcf(desc, "Version")[1, 1]) < min_version)
            sprintf("peer package '%s' in %s is older than %s", pkg, lib, min_version)
  if (!is.null(miss)) {
    if (parity_required())
      stop(sprintf("%s: it is required for parity tests (DIFFDIFF_REQUIRE_PARITY=true)", miss), call. = FALSE)
    testthat::skip(paste("parity:", miss))
  }
  normalizePath(lib)
}

# Runs `code` (R source lines) in a fresh Rscript with `lib` first on the
# library path; `input` is saved to an RDS file the code reads as `input`,
# and the code's value `output` is read back. An error in the child fails
# with its output.
peer_subprocess <- function(lib, code, input = NULL) {
  inp <- tempfile(fileext = ".rds"); out <- tempfile(fileext = ".rds"); scr <- tempfile(fileext = ".R")
  on.exit(unlink(c(inp, out, scr)))
  saveRDS(input, inp)
  writeLines(c(sprintf(".libPaths(c(%s, .libPaths()))", deparse(lib)),
               sprintf("input <- readRDS(%s)", deparse(inp)), code,
               sprintf("saveRDS(output, %s)", deparse(out))), scr)
  log <- suppressWarnings(system2(file.path(R.home("bin"), "Rscript"), c("--vanilla", shQuote(scr)),
                                  stdout = TRUE, stderr = TRUE))
  if (!file.exists(out)) stop("the peer's child process failed:\n", paste(utils::tail(log, 20), collapse = "\n"),
                              call. = FALSE)
  readRDS(out)
}
