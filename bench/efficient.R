# bench/efficient.R: the efficient staggered estimators against their R
# peers on the same data, each side in a fresh R process (callr) reporting
# its time, peak memory (growth of VmHWM after /proc/self/clear_refs) and
# its answer. Panel: mpdta-shaped, 20,000 units x 8 periods, cohorts first
# treated in periods 3-7 and never treated, unit effects, period trend,
# effects growing with exposure.
#  * did_rs() vs staggered::staggered() (1.2.2): the efficient estimator
#    (simple), the event study at e = -2..3 with its covariance, and the
#    Fisher randomisation test with 99 permutations (did_rs with
#    staggered's seeds through the internal option
#    diffdiff.staggered_compat, so that the p-values must be identical).
#    Estimates checked to 1e-8, SEs to 1e-6.
# (did_etwfe() vs etwfe + emfx: to come with did_etwfe.)
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
      "diffdiff fisher" = function() {
        options(diffdiff.staggered_compat = TRUE)
        f <- did_rs(d, "y", "id", "t", "g", estimand = "simple", nperm = 99)
        tb <- f$coeftable
        list(est = c(tb$estimate, tb$p.value.fisher, tb$p.value.fisher_neyman), se = c(tb$std.error, tb$se_neyman))
      })
    source(helper)
    bench_measure(run, reps)
  }, args = list(rds = rds, side = side, case = case, reps = reps, helper = helper))
}

set.seed(19)
N <- 20000; TT <- 8
g <- sample(c(3, 4, 5, 6, 7, Inf), N, replace = TRUE, prob = c(0.15, 0.15, 0.15, 0.15, 0.15, 0.25))
d <- expand.grid(t = seq_len(TT), id = seq_len(N))[, c("id", "t")]
d$g <- g[d$id]
d$y <- rnorm(N)[d$id] + 0.3 * d$t + ifelse(d$t >= d$g, 0.05 * (1 + 0.5 * (d$t - d$g)), 0) + rnorm(nrow(d))
rds <- tempfile(fileext = ".rds")
saveRDS(d, rds)

row <- function(case, peer, P, D, diff)
  data.frame(case = case, peer = peer, peer_s = P$time, diffdiff_s = D$time, speedup = P$time / D$time,
             peer_peak_mb = P$mb, diffdiff_peak_mb = D$mb, mem_ratio = D$mb / P$mb, diff = diff)
rows <- list()
labels <- c(simple = "did_rs: 20,000 x 8, efficient, simple",
            eventstudy = "did_rs: 20,000 x 8, efficient, event study e = -2..3 with covariance",
            fisher = "did_rs: 20,000 x 8, Fisher test, 99 permutations (staggered's seeds)")
for (case in names(labels)) {
  D <- fresh(rds, "diffdiff", case, if (case == "fisher") 1L else reps)
  P <- if (has("staggered")) fresh(rds, "staggered", case, 1L) else NULL
  if (is.null(P)) next
  e <- max(abs(D$res$est - P$res$est)); s <- max(abs(D$res$se - P$res$se) / pmax(abs(P$res$se), 1e-300))
  stopifnot(e < 1e-8, s < 1e-6)
  rows[[length(rows) + 1]] <- row(labels[[case]], sprintf("staggered %s", packageVersion("staggered")), P, D,
                                  sprintf("est %.1e; SE rel %.1e", e, s))
  print(rows[[length(rows)]], digits = 4)
}

res <- do.call(rbind, rows)
meta <- list(date = format(Sys.time(), "%Y-%m-%d %H:%M:%S %Z"), R = R.version.string,
             staggered = if (has("staggered")) format(packageVersion("staggered")) else NA,
             diffdiff = format(packageVersion("diffdiff")), reps = reps, threads = 2L)
if (requireNamespace("jsonlite", quietly = TRUE))
  writeLines(jsonlite::toJSON(list(meta = meta, results = res), pretty = TRUE, digits = 6, na = "null"),
             file.path(out_dir, "efficient.json"))
md <- c("# bench/efficient.R results", "",
        sprintf("%s; %s; staggered %s; diffdiff %s with 2 threads.", meta$date, meta$R, meta$staggered, meta$diffdiff), "",
        paste0("Each side in a fresh process: the peer one run, diffdiff the median of ", reps, " runs (one run for ",
               "the Fisher test; the first run gives the peak memory). speedup = peer time / diffdiff time; mem ",
               "ratio = diffdiff peak / peer peak; diff = agreement of the estimates (and Fisher p-values) and ",
               "standard errors (event study: the covariance)."), "",
        bench_table_md(res))
writeLines(md, file.path(out_dir, "efficient.md"))
cat(md, sep = "\n")
