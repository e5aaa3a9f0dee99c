# bench/rd.R: rd_robust() against rdrobust's rdrobust() (4.1.1) on the same
# simulated data in one R process: 1,000,000 observations, running variable
# uniform on [-1, 1], cutoff 0, a jump of 0.4 and curvature; three calls:
# the default (mserd bandwidth, nearest-neighbour variance), vce = "hc1",
# and a fuzzy design with a covariate and 500 clusters. Checks the
# estimates, standard errors and bandwidths (1e-8 relative) and writes the
# time (median of 3 calls) and memory (R heap peak above the baseline, first
# call) ratios to bench/results/rd.{json,md}.
# Usage: Rscript bench/rd.R [n]
suppressPackageStartupMessages({library(diffdiff); library(rdrobust)})
out_dir <- file.path("bench", "results")
dir.create(out_dir, showWarnings = FALSE, recursive = TRUE)
a <- commandArgs(TRUE)
n <- if (length(a)) as.numeric(a[1]) else 1e6
set.seed(1)
d <- data.frame(x = stats::runif(n, -1, 1), z = stats::rnorm(n), g = sample.int(500, n, replace = TRUE))
d$t <- as.numeric(stats::runif(n) < 0.2 + 0.6 * (d$x >= 0))
d$y <- 0.5 + 0.8 * d$x - 0.3 * d$x^2 + 0.4 * (d$x >= 0) + 0.2 * d$z + stats::rnorm(n, sd = 0.3)
d$y2 <- 0.5 + 0.8 * d$x + 0.6 * d$t + 0.2 * d$z + stats::rnorm(n, sd = 0.3)

source(file.path("bench", "measure.R"))
measure <- bench_in_process_median
nums <- function(f) c(f$coeftable$estimate[1:2], f$coeftable$std.error[c(1, 3)], f$bandwidths$h, f$bandwidths$b)
pnums <- function(r) c(r$Estimate[1, c("tau.us", "tau.bc", "se.us", "se.rb")], r$bws["h", ], r$bws["b", ])
cases <- list(
  default = list(peer = function() rdrobust(d$y, d$x), ours = function() rd_robust(d, "y", "x")),
  hc1 = list(peer = function() rdrobust(d$y, d$x, vce = "hc1"), ours = function() rd_robust(d, "y", "x", vce = "hc1")),
  fuzzy_covariate_cluster = list(
    peer = function() rdrobust(d$y2, d$x, fuzzy = d$t, covs = d$z, cluster = d$g),
    ours = function() rd_robust(d, "y2", "x", fuzzy = "t", covs = ~ z, cluster = "g")))
res <- list()
for (k in names(cases)) {
  peer <- measure(cases[[k]]$peer)
  ours <- measure(cases[[k]]$ours)
  diff <- max(abs(nums(ours$value) - pnums(peer$value)) / pmax(1, abs(pnums(peer$value))))
  stopifnot(diff < 1e-8)
  res[[k]] <- list(rdrobust_seconds = peer$seconds, diffdiff_seconds = ours$seconds,
                   time_ratio = peer$seconds / ours$seconds, rdrobust_mb = peer$mb, diffdiff_mb = ours$mb,
                   memory_ratio = peer$mb / ours$mb, max_rel_diff = diff)
}
if (requireNamespace("jsonlite", quietly = TRUE))
  writeLines(jsonlite::toJSON(c(list(n = n), res), auto_unbox = TRUE, pretty = TRUE, digits = 6),
             file.path(out_dir, "rd.json"))
md <- c("# rd_robust vs rdrobust::rdrobust (4.1.1)", "",
        sprintf("Data: %s observations, running variable uniform on [-1, 1], cutoff 0; same R process; time: median of 3 calls; memory: R heap peak above the baseline (first call).",
                format(n, big.mark = ",", scientific = FALSE)), "",
        "| call | rdrobust (s) | rd_robust (s) | time ratio | rdrobust MB | rd_robust MB | memory ratio | largest difference |",
        "|---|---|---|---|---|---|---|---|",
        vapply(names(res), function(k) with(res[[k]], sprintf("| %s | %.2f | %.3f | %.1fx | %.0f | %.0f | %.2fx | %.1e |", k,
               rdrobust_seconds, diffdiff_seconds, time_ratio, rdrobust_mb, diffdiff_mb, memory_ratio, max_rel_diff)), ""),
        "", "Largest difference: estimates, standard errors and bandwidths, relative to max(1, |rdrobust's value|).")
writeLines(md, file.path(out_dir, "rd.md"))
cat(md, sep = "\n")
