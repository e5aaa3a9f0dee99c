# bench/rd_density.R: rd_density() against rddensity 3.0's rddensity() (the
# default call: p = 2, q = 3, triangular kernel, jackknife variance, comb
# bandwidths from rdbwdensity()) on the same simulated running variable in
# one R process: 100,000 observations, a normal density with a jump at the
# cutoff, and the same values rounded to 3 decimals (mass points). Checks
# the test statistic, densities, SEs and bandwidths (1e-8 relative); writes
# the median time of `reps` calls and R's heap peak above each call's
# baseline to bench/results/rd_density.{json,md}.
# Usage: Rscript bench/rd_density.R [n] [reps]
suppressPackageStartupMessages({ library(diffdiff); library(rddensity) })
out_dir <- file.path("bench", "results")
dir.create(out_dir, showWarnings = FALSE, recursive = TRUE)
a <- commandArgs(TRUE)
n <- if (length(a)) as.integer(a[1]) else 100000L
reps <- if (length(a) > 1) as.integer(a[2]) else 21L
set.seed(1)
x <- c(rnorm(round(0.8 * n), -0.2), runif(n - round(0.8 * n), 0, 1))
source(file.path("bench", "measure.R"))
timed <- function(f) { v <- bench_in_process(f()); s <- stats::median(vapply(seq_len(reps), function(i)
  system.time(f())[["elapsed"]], 0)); list(value = v$value, seconds = s, mb = v$mb) }
one <- function(label, xx) {
  d <- data.frame(x = xx)
  peer <- timed(function() rddensity(xx))
  ours <- timed(function() rd_density(d, "x"))
  r <- peer$value; m <- ours$value
  pv <- c(r$test$t_jk, r$hat$left, r$hat$right, r$sd_jk$left, r$sd_jk$right, r$sd_jk$diff, r$h$left, r$h$right)
  mv <- c(m$statistic, m$estimates$estimate[1:2], m$estimates$std.error, unname(m$h))
  rel <- max(abs(mv / pv - 1))
  stopifnot(rel < 1e-8)
  list(case = label, rddensity_seconds = peer$seconds, diffdiff_seconds = ours$seconds,
       time_ratio = peer$seconds / ours$seconds, rddensity_mb = peer$mb, diffdiff_mb = ours$mb,
       memory_ratio = peer$mb / ours$mb, max_rel_diff = rel)
}
res <- list(one("continuous", x), one("mass points (3 decimals)", round(x, 3)))
if (requireNamespace("jsonlite", quietly = TRUE))
  writeLines(jsonlite::toJSON(list(n = n, reps = reps, cases = res), auto_unbox = TRUE, pretty = TRUE, digits = 6),
             file.path(out_dir, "rd_density.json"))
md <- c("# rd_density vs rddensity", "",
        sprintf("Data: %s observations (80%% N(-0.2, 1), 20%% U(0, 1): a jump at the cutoff 0), and the same rounded to 3 decimals; default calls; same R process; median of %d calls (heap peak from the first).",
                format(n, big.mark = ","), reps), "",
        sprintf("| case | rddensity %s s | diffdiff s | speedup | rddensity MB | diffdiff MB | mem ratio | max rel diff |",
                utils::packageVersion("rddensity")), "|---|---|---|---|---|---|---|---|",
        vapply(res, function(r) sprintf("| %s | %.4f | %.4f | %.1fx | %.1f | %.1f | %.2fx | %.1e |", r$case,
                                        r$rddensity_seconds, r$diffdiff_seconds, r$time_ratio, r$rddensity_mb,
                                        r$diffdiff_mb, r$memory_ratio, r$max_rel_diff), ""), "",
        "Compared: the test statistic, the densities left and right, their SEs and the SE of the difference, and the two bandwidths.")
writeLines(md, file.path(out_dir, "rd_density.md"))
cat(md, sep = "\n")
