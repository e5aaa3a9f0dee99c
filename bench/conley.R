# bench/conley.R: did_twfe(vcov = dd_conley(cutoff)) against fixest's
# feols(y ~ D | id + time, vcov = conley(cutoff, distance = "spherical")) on
# the same simulated panel in one R process: 100,000 locations (units
# scattered over the continental United States) x 2 periods, cutoff 100 km.
# Checks the estimate (1e-8) and the standard error (1e-8 relative); writes
# time and memory ratios to bench/results/conley.{json,md}.
# Usage: Rscript bench/conley.R [units] [cutoff_km]
suppressPackageStartupMessages({ library(diffdiff); library(fixest) })
setFixest_nthreads(1)
out_dir <- file.path("bench", "results")
dir.create(out_dir, showWarnings = FALSE, recursive = TRUE)
a <- commandArgs(TRUE)
n <- if (length(a) >= 1) as.integer(a[1]) else 100000L
cut <- if (length(a) >= 2) as.numeric(a[2]) else 100
set.seed(1)
lat <- stats::runif(n, 25, 49); lon <- stats::runif(n, -124, -67)
g <- stats::rbinom(n, 1, 0.3)
d <- data.frame(id = rep(seq_len(n), each = 2), time = rep(1:2, n))
d$lat <- lat[d$id]; d$lon <- lon[d$id]
d$D <- as.integer(g[d$id] == 1 & d$time == 2)
d$y <- sin(d$lat / 3) + cos(d$lon / 4) + d$time * 0.1 + 0.5 * d$D + stats::rnorm(2 * n)

source(file.path("bench", "measure.R"))
measure <- bench_in_process
peer <- measure(feols(y ~ D | id + time, d, vcov = conley(cut, distance = "spherical")))
ours <- measure(did_twfe(d, "y", "id", "time", "D", vcov = dd_conley(cut)))
res <- list(data = sprintf("%d locations x 2 periods, cutoff %g km (spherical, uniform kernel)", n, cut),
            fixest_seconds = peer$seconds, diffdiff_seconds = ours$seconds, time_ratio = peer$seconds / ours$seconds,
            fixest_mb = peer$mb, diffdiff_mb = ours$mb, memory_ratio = peer$mb / ours$mb,
            diff_estimate = abs(ours$value$coeftable$estimate[1] - coef(peer$value)[["D"]]),
            rel_diff_se = abs(ours$value$coeftable$std.error[1] / se(peer$value)[["D"]] - 1))
stopifnot(res$diff_estimate < 1e-8, res$rel_diff_se < 1e-8)
if (requireNamespace("jsonlite", quietly = TRUE))
  writeLines(jsonlite::toJSON(res, auto_unbox = TRUE, pretty = TRUE, digits = 6), file.path(out_dir, "conley.json"))
md <- c("# Conley standard errors: did_twfe vs fixest's conley()", "",
        sprintf("Data: %s; same R process, fixest %s on 1 thread.", res$data, utils::packageVersion("fixest")), "",
        "| | fixest | diffdiff | ratio |", "|---|---|---|---|",
        sprintf("| time (s) | %.2f | %.2f | %.1fx |", res$fixest_seconds, res$diffdiff_seconds, res$time_ratio),
        sprintf("| R heap peak above baseline (MB) | %.0f | %.0f | %.2fx |", res$fixest_mb, res$diffdiff_mb, res$memory_ratio), "",
        sprintf("Agreement: estimate difference %.2g, relative SE difference %.2g.", res$diff_estimate, res$rel_diff_se))
writeLines(md, file.path(out_dir, "conley.md"))
cat(md, sep = "\n")
