# bench/rd_plot.R: rd_plot() against rdrobust's rdplot() (4.1.1) on the same
# simulated data in one R process: 1,000,000 observations, running variable
# uniform on [-1, 1], cutoff 0, the default call (esmv bins, a degree-4
# polynomial, uniform kernel); rdplot(hide = TRUE) and rd_plot(plot =
# FALSE). Checks J, J_IMSE, J_MV and the bin counts (exactly), the bin means
# and interval bounds (1e-8), the plotted polynomial (1e-8) and its
# coefficients (1e-7 absolute: on 1e6 rows rdplot's normal equations on raw
# powers are themselves about 6e-9 from the least-squares solution that
# qr() gives, rd_plot's 1e-12; both distances are reported); writes the time (median of 3 calls) and memory (R heap peak
# above the baseline, first call) ratios to bench/results/rd_plot.{json,md}.
# Usage: Rscript bench/rd_plot.R [n]
suppressPackageStartupMessages({library(diffdiff); library(rdrobust)})
out_dir <- file.path("bench", "results")
dir.create(out_dir, showWarnings = FALSE, recursive = TRUE)
a <- commandArgs(TRUE)
n <- if (length(a)) as.numeric(a[1]) else 1e6
set.seed(1)
d <- data.frame(x = stats::runif(n, -1, 1))
d$y <- 0.5 + d$x + 0.3 * d$x^2 + 0.4 * (d$x >= 0) + stats::rnorm(n, sd = 0.3)

source(file.path("bench", "measure.R"))
measure <- bench_in_process_median
peer <- measure(function() rdplot(d$y, d$x, hide = TRUE))
ours <- measure(function() rd_plot(d, "y", "x", plot = FALSE))
b <- peer$value; r <- ours$value; vb <- b$vars_bins
res <- list(data = sprintf("%s observations, running variable uniform on [-1, 1], cutoff 0; J = (%d, %d) bins",
                           format(n, big.mark = ",", scientific = FALSE), r$J[[1]], r$J[[2]]),
            rdplot_seconds = peer$seconds, diffdiff_seconds = ours$seconds, time_ratio = peer$seconds / ours$seconds,
            rdplot_mb = peer$mb, diffdiff_mb = ours$mb, memory_ratio = peer$mb / ours$mb,
            same_J = all(r$J == b$J) && all(r$J_IMSE == b$J_IMSE) && all(r$J_MV == b$J_MV),
            same_counts = identical(as.numeric(r$bins$n), as.numeric(vb$rdplot_N)),
            max_abs_diff_bin_mean = max(abs(r$bins$y_mean - vb$rdplot_mean_y)),
            max_abs_diff_ci = max(abs(c(r$bins$ci_low - vb$rdplot_ci_l, r$bins$ci_high - vb$rdplot_ci_r))),
            max_abs_diff_poly = max(abs(r$poly$fit - b$vars_poly$rdplot_y)),
            max_abs_diff_coef = max(abs(unname(r$coef) - unname(b$coef))),
            max_rel_diff_coef = max(abs(unname(r$coef) - unname(b$coef)) / abs(b$coef)))
qr_coef <- sapply(list(d$x < 0, d$x >= 0), function(i) qr.coef(qr(outer(d$x[i], 0:4, "^")), d$y[i]))
res$qr_dist_rdplot <- max(abs(qr_coef - unname(b$coef)))
res$qr_dist_diffdiff <- max(abs(qr_coef - unname(r$coef)))
stopifnot(res$same_J, res$same_counts, res$max_abs_diff_bin_mean < 1e-8, res$max_abs_diff_ci < 1e-8,
          res$max_abs_diff_poly < 1e-8, res$max_abs_diff_coef < 1e-7)
if (requireNamespace("jsonlite", quietly = TRUE))
  writeLines(jsonlite::toJSON(res, auto_unbox = TRUE, pretty = TRUE, digits = 6), file.path(out_dir, "rd_plot.json"))
md <- c("# rd_plot vs rdrobust::rdplot (4.1.1)", "",
        sprintf("Data: %s; same R process; rdplot(hide = TRUE), rd_plot(plot = FALSE); time: median of 3 calls.",
                res$data), "",
        "| | rdplot | diffdiff | ratio |", "|---|---|---|---|",
        sprintf("| time (s) | %.2f | %.3f | %.1fx |", res$rdplot_seconds, res$diffdiff_seconds, res$time_ratio),
        sprintf("| R heap peak above baseline (MB) | %.0f | %.0f | %.2fx |", res$rdplot_mb, res$diffdiff_mb,
                res$memory_ratio), "",
        sprintf("Agreement: J, J_IMSE, J_MV and bin counts identical; largest bin-mean difference %.2g, largest interval-bound difference %.2g, largest difference of the plotted polynomial %.2g, of its coefficients %.2g (relative %.2g).",
                res$max_abs_diff_bin_mean, res$max_abs_diff_ci, res$max_abs_diff_poly, res$max_abs_diff_coef,
                res$max_rel_diff_coef),
        sprintf("Coefficients against the least-squares solution by qr(): rdplot %.2g, rd_plot %.2g (largest absolute difference).",
                res$qr_dist_rdplot, res$qr_dist_diffdiff))
writeLines(md, file.path(out_dir, "rd_plot.md"))
cat(md, sep = "\n")
