# bench/efficient.R: the efficient staggered estimators against their R
# peers on the same data, each side in a fresh R process (callr) reporting
# its time, peak memory (growth of VmHWM after /proc/self/clear_refs) and
# its answer. Panels: mpdta-shaped, 5,000, 10,000 and 20,000 units x 8
# periods, cohorts first treated in periods 3-7 and never treated, unit
# effects, period trend, effects growing with exposure.
#  * did_rs() vs staggered::staggered() (1.2.2): the efficient estimator
#    (simple), the event study at e = -2..3 with its covariance, and the
#    Fisher randomisation test with 99 permutations (did_rs with
#    staggered's seeds through rules = "staggered-1.2.2", so that the
#    p-values must be identical).
#    Estimates checked to 1e-8, SEs to 1e-6.
#  * did_etwfe() vs etwfe::etwfe() + emfx() (0.6.2): linear with one
#    covariate (cohort and period fixed effects, clustered by unit) and
#    Poisson on a count outcome with the same covariate, each with the
#    simple and event-study aggregations. Estimates checked to 1e-8
#    (Poisson: 1e-7 relative, both fitted to glm.tol 1e-10), SEs to 1e-5
#    relative (emfx differentiates numerically).
# Usage: Rscript bench/efficient.R [reps]
suppressPackageStartupMessages(library(diffdiff))
args <- commandArgs(TRUE)
reps <- if (length(args) >= 1) as.integer(args[1]) else 3L
out_dir <- file.path("bench", "results")
dir.create(out_dir, showWarnings = FALSE, recursive = TRUE)
helper <- normalizePath(file.path("bench", "measure.R"))
source(helper)
has <- function(p) requireNamespace(p, quietly = TRUE)

fresh <- function(rds, side, case, reps) {
  callr::r(function(rds, side, case, reps, helper) {
    suppressPackageStartupMessages(library(diffdiff))
    # marginaleffects 1.0.0 (under etwfe::emfx()) calls `%||%`, which base R
    # has only from 4.4 on, without importing it: supply it on older R (as
    # tests/testthat/helper-parity.R does; a bug of the peer, not of diffdiff)
    if (!exists("%||%", envir = baseenv(), inherits = FALSE))
      assign("%||%", function(x, y) if (is.null(x)) y else x, envir = globalenv())
    dd_threads(2)
    d <- readRDS(rds)
    ev <- -2:3
    run <- switch(paste(side, case),
      "staggered simple" = function() {
        r <- staggered::staggered(d, i = "id", t = "t", g = "g", y = "y", estimand = "simple")
        list(est = r$estimate, se = c(r$se, r$se_neyman))
      },
      "diffdiff simple" = function() {
        f <- did_rs(d, "y", "id", "t", "g", estimand = "simple")
        list(est = f$coeftable$estimate, se = c(f$coeftable$std.error, f$coeftable$se_neyman))
      },
      "staggered eventstudy" = function() {
        r <- staggered::staggered(d, i = "id", t = "t", g = "g", y = "y", estimand = "eventstudy", eventTime = ev,
                                  return_full_vcv = TRUE)
        list(est = r$resultsDF$estimate, se = c(r$vcv))
      },
      "diffdiff eventstudy" = function() {
        f <- did_rs(d, "y", "id", "t", "g", estimand = "eventstudy", event_time = ev)
        list(est = f$coeftable$estimate, se = c(vcov(f)))
      },
      "staggered fisher" = function() {
        r <- staggered::staggered(d, i = "id", t = "t", g = "g", y = "y", estimand = "simple", compute_fisher = TRUE,
                                  num_fisher_permutations = 99)
        list(est = c(r$estimate, r$fisher_pval, r$fisher_pval_se_neyman), se = c(r$se, r$se_neyman))
      },
      "etwfe linear" = function() {
        m <- suppressMessages(etwfe::etwfe(y ~ x, tvar = t, gvar = g, data = d, vcov = ~id))
        a <- etwfe::emfx(m, type = "simple"); e <- etwfe::emfx(m, type = "event")
        list(est = c(a$estimate, e$estimate), se = c(a$std.error, e$std.error))
      },
      "diffdiff linear" = function() {
        f <- did_etwfe(d, "y", "id", "t", "g", xformla = ~ x)
        a <- aggregate(f, type = "simple"); e <- aggregate(f, type = "dynamic")
        list(est = c(a$coeftable$estimate, e$coeftable$estimate), se = c(a$coeftable$std.error, e$coeftable$std.error))
      },
      "etwfe poisson" = function() {
        m <- suppressMessages(etwfe::etwfe(yc ~ x, tvar = t, gvar = g, data = d, vcov = ~id, family = "poisson",
                                           glm.tol = 1e-10))
        a <- etwfe::emfx(m, type = "simple"); e <- etwfe::emfx(m, type = "event")
        list(est = c(a$estimate, e$estimate), se = c(a$std.error, e$std.error))
      },
      "diffdiff poisson" = function() {
        f <- did_etwfe(d, "yc", "id", "t", "g", xformla = ~ x, family = "poisson", glm_tol = 1e-10)
        a <- aggregate(f, type = "simple"); e <- aggregate(f, type = "dynamic")
        list(est = c(a$coeftable$estimate, e$coeftable$estimate), se = c(a$coeftable$std.error, e$coeftable$std.error))
      },
      "diffdiff fisher" = function() {
        f <- did_rs(d, "y", "id", "t", "g", estimand = "simple", nperm = 99, rules = "staggered-1.2.2")
        tb <- f$coeftable
        list(est = c(tb$estimate, tb$p.value.fisher, tb$p.value.fisher_neyman), se = c(tb$std.error, tb$se_neyman))
      })
    source(helper)
    bench_measure(run, reps)
  }, args = list(rds = rds, side = side, case = case, reps = reps, helper = helper))
}

make_panel <- function(N, TT = 8) {
  set.seed(19)
  g <- sample(c(3, 4, 5, 6, 7, Inf), N, replace = TRUE, prob = c(0.15, 0.15, 0.15, 0.15, 0.15, 0.25))
  d <- expand.grid(t = seq_len(TT), id = seq_len(N))[, c("id", "t")]
  d$g <- g[d$id]
  x <- rnorm(N)
  d$x <- x[d$id]
  d$y <- rnorm(N)[d$id] + 0.3 * d$t + 0.2 * d$x * d$t / TT + ifelse(d$t >= d$g, 0.05 * (1 + 0.5 * (d$t - d$g)), 0) +
    rnorm(nrow(d))
  d$yc <- rpois(nrow(d), exp(0.5 + 0.05 * d$t + 0.2 * d$x + ifelse(d$t >= d$g, 0.1, 0)))
  d
}
rds <- tempfile(fileext = ".rds")

row <- function(case, peer, P, D, diff)
  data.frame(case = case, peer = peer, peer_s = P$time, diffdiff_s = D$time, speedup = P$time / D$time,
             peer_peak_mb = P$mb, diffdiff_peak_mb = D$mb, mem_ratio = D$mb / P$mb, diff = diff)
rows <- list()
labels <- c(simple = "did_rs: %s x 8, efficient, simple",
            eventstudy = "did_rs: %s x 8, efficient, event study e = -2..3 with covariance",
            fisher = "did_rs: %s x 8, Fisher test, 99 permutations (staggered's seeds)",
            linear = "did_etwfe: %s x 8, linear, 1 covariate, simple + event study",
            poisson = "did_etwfe: %s x 8, Poisson, 1 covariate, simple + event study")
for (N in c(5000, 10000, 20000)) {
  saveRDS(make_panel(N), rds)
  for (case in names(labels)) {
    pk <- if (case %in% c("linear", "poisson")) "etwfe" else "staggered"
    D <- fresh(rds, "diffdiff", case, if (case == "fisher") 1L else reps)
    P <- if (has(pk)) fresh(rds, pk, case, 1L) else NULL
    if (is.null(P)) next
    ok <- !is.na(P$res$se) & P$res$se > 0
    e <- max(abs(D$res$est - P$res$est) / if (case == "poisson") pmax(abs(P$res$est), 1e-8) else 1)
    s <- max(abs(D$res$se[ok] - P$res$se[ok]) / abs(P$res$se[ok]))
    stopifnot(e < if (case == "poisson") 1e-7 else 1e-8, s < if (pk == "etwfe") 1e-5 else 1e-6)
    rows[[length(rows) + 1]] <- row(sprintf(labels[[case]], format(N, big.mark = ",")),
                                    sprintf("%s %s", pk, packageVersion(pk)), P, D,
                                    sprintf("est %s%.1e; SE rel %.1e", if (case == "poisson") "rel " else "", e, s))
    print(rows[[length(rows)]], digits = 4)
  }
}

res <- do.call(rbind, rows)
meta <- list(date = format(Sys.time(), "%Y-%m-%d %H:%M:%S %Z"), R = R.version.string,
             staggered = if (has("staggered")) format(packageVersion("staggered")) else NA,
             etwfe = if (has("etwfe")) format(packageVersion("etwfe")) else NA,
             marginaleffects = if (has("marginaleffects")) format(packageVersion("marginaleffects")) else NA,
             diffdiff = format(packageVersion("diffdiff")), reps = reps, threads = 2L)
if (requireNamespace("jsonlite", quietly = TRUE))
  writeLines(jsonlite::toJSON(list(meta = meta, results = res), pretty = TRUE, digits = 6, na = "null"),
             file.path(out_dir, "efficient.json"))
md <- c("# bench/efficient.R results", "",
        sprintf("%s; %s; staggered %s; etwfe %s (marginaleffects %s); diffdiff %s with 2 threads.", meta$date, meta$R,
                meta$staggered, meta$etwfe, meta$marginaleffects, meta$diffdiff), "",
        paste0("Each side in a fresh process: the peer one run, diffdiff the median of ", reps, " runs (one run for ",
               "the Fisher test; the first run gives the peak memory). speedup = peer time / diffdiff time; mem ",
               "ratio = diffdiff peak / peer peak; diff = agreement of the estimates (and Fisher p-values) and ",
               "standard errors (event study: the covariance)."), "",
        bench_table_md(res))
writeLines(md, file.path(out_dir, "efficient.md"))
cat(md, sep = "\n")
