# bench/dml.R: did_dml() against did::att_gt(est_method = "dr") on the same
# simulated panel in one R process (n units x 6 periods, cohorts 3, 4, 5
# and never treated, two covariates): did_dml without cross-fitting (equal
# to att_gt: checked here to 1e-8) and with 5-fold cross-fitting (linear
# learners; what cross-fitting costs). Time: median of 3 calls; memory: R
# heap peak above the baseline (first call). Writes bench/results/dml.{json,md}.
# Usage: Rscript bench/dml.R [n]
suppressPackageStartupMessages({library(diffdiff); library(did)})
out_dir <- file.path("bench", "results")
dir.create(out_dir, showWarnings = FALSE, recursive = TRUE)
a <- commandArgs(TRUE)
n <- if (length(a)) as.integer(a[1]) else 20000L
set.seed(1)
g <- sample(c(0, 3, 4, 5), n, replace = TRUE)
d <- expand.grid(t = 1:6, id = seq_len(n))[, c("id", "t")]
d$g <- g[d$id]; d$x1 <- rnorm(n)[d$id]; d$x2 <- rbinom(n, 1, 0.5)[d$id]
d$y <- rnorm(n)[d$id] + 0.3 * d$t + 0.2 * d$x1 * d$t + (d$g > 0 & d$t >= d$g) + rnorm(nrow(d))
source(file.path("bench", "measure.R"))
peer <- bench_in_process_median(function()
  suppressWarnings(att_gt("y", "t", "id", "g", ~ x1 + x2, data = d, est_method = "dr", bstrap = FALSE, cband = FALSE)))
k1 <- bench_in_process_median(function() did_dml(d, "y", "id", "t", "g", ~ x1 + x2, folds = 1, nboot = 0))
k5 <- bench_in_process_median(function() did_dml(d, "y", "id", "t", "g", ~ x1 + x2, folds = 5, nboot = 0, seed = 1))
diff <- max(abs(k1$value$coeftable$estimate - peer$value$att), abs(k1$value$coeftable$std.error - peer$value$se))
stopifnot(diff < 1e-8)
res <- list(n = n, att_gt_seconds = peer$seconds, dml_nofold_seconds = k1$seconds, dml_5fold_seconds = k5$seconds,
            ratio_nofold = peer$seconds / k1$seconds, ratio_5fold = peer$seconds / k5$seconds, att_gt_mb = peer$mb,
            dml_nofold_mb = k1$mb, dml_5fold_mb = k5$mb, max_abs_diff = diff)
if (requireNamespace("jsonlite", quietly = TRUE))
  writeLines(jsonlite::toJSON(res, auto_unbox = TRUE, pretty = TRUE, digits = 6), file.path(out_dir, "dml.json"))
md <- c("# did_dml vs did::att_gt(est_method = \"dr\")", "",
        sprintf("Data: %s units x 6 periods, cohorts 3, 4, 5 and never treated, two covariates; same R process; time: median of 3 calls; memory: R heap peak above the baseline.",
                format(n, big.mark = ",")), "",
        "| call | seconds | ratio (att_gt / call) | MB |", "|---|---|---|---|",
        sprintf("| att_gt(est_method = \"dr\") | %.2f | 1 | %.0f |", res$att_gt_seconds, res$att_gt_mb),
        sprintf("| did_dml(folds = 1) | %.2f | %.1fx | %.0f |", res$dml_nofold_seconds, res$ratio_nofold, res$dml_nofold_mb),
        sprintf("| did_dml(folds = 5) | %.2f | %.1fx | %.0f |", res$dml_5fold_seconds, res$ratio_5fold, res$dml_5fold_mb),
        "", sprintf("did_dml(folds = 1) against att_gt: largest difference of the ATT(g,t) and their SEs %.1e.", diff))
writeLines(md, file.path(out_dir, "dml.md"))
cat(md, sep = "\n")
