# bench/bc.R: did_bc() against badcontrols::didbc() on the same data in one
# R process: badcontrols' own simulated panel (simulate_bad_controls, n
# units x 4 periods) and its NLSY job-displacement example (3,231 x 6).
# Imputation (both sides deterministic: ATT(g,t) and analytic SEs checked
# to 1e-8) and the doubly robust estimator with parametric nuisances
# (5-fold cross-fitting on both sides; the fold draws differ, so only the
# time is compared). bstrap = FALSE, cband = FALSE for badcontrols (its
# aggregations still draw 100 multiplier-bootstrap replications), nboot = 0
# for did_bc. Time: median of 3 calls; memory: R heap peak above the
# baseline (first call). Writes bench/results/bc.{json,md}.
# Usage: Rscript bench/bc.R [n]
suppressPackageStartupMessages({library(diffdiff); library(badcontrols)})
out_dir <- file.path("bench", "results")
dir.create(out_dir, showWarnings = FALSE, recursive = TRUE)
a <- commandArgs(TRUE)
n <- if (length(a)) as.integer(a[1]) else 20000L
source(file.path("bench", "measure.R"))
set.seed(20260101)
sim <- simulate_bad_controls(n = n, T_max = 4)$data
data("nlsy_job_displacement", package = "badcontrols")
peer <- function(d, y, g, t, bc, x, method)
  suppressWarnings(didbc(y, g, t, "id", d, bad_control_formula = bc, xformula = x, est_method = method,
                         nuisance_method = "parametric", bstrap = FALSE, cband = FALSE))
ours <- function(d, y, g, t, bc, x, method)
  suppressWarnings(did_bc(d, y, "id", t, g, bad_control = bc, xformla = x, est_method = method, nboot = 0, seed = 1))
cases <- list(
  list(case = sprintf("simulated, %s units x 4, imputation", format(n, big.mark = ",")), d = sim, y = "Y", g = "G",
       t = "period", bc = ~ X, x = ~ Z, method = c("imputation", "imputation")),
  list(case = sprintf("simulated, %s units x 4, doubly robust (5 folds, parametric)", format(n, big.mark = ",")),
       d = sim, y = "Y", g = "G", t = "period", bc = ~ X, x = ~ Z, method = c("dr_ml", "dr")),
  list(case = "NLSY 3,231 x 6, imputation", d = nlsy_job_displacement, y = "log_earnings", g = "group", t = "year",
       bc = ~ occ_score, x = ~ race + female + educ_max_grade, method = c("imputation", "imputation")))
rows <- lapply(cases, function(k) {
  set.seed(1)
  p <- bench_in_process_median(function() peer(k$d, k$y, k$g, k$t, k$bc, k$x, k$method[1]))
  o <- bench_in_process_median(function() ours(k$d, k$y, k$g, k$t, k$bc, k$x, k$method[2]))
  diff <- "(folds differ)"
  if (k$method[2] == "imputation") {
    r <- p$value$att_gt; tab <- o$value$coeftable
    m <- match(paste(r$group, r$t), paste(tab$group, tab$time))
    se <- sqrt(diag(as.matrix(r$V_analytical)) / nrow(r$inf_func))
    dm <- max(abs(r$att - tab$estimate[m]), abs(se - tab$std.error[m]))
    stopifnot(dm < 1e-8)
    diff <- sprintf("%.1e", dm)
  }
  data.frame(case = k$case, peer = "badcontrols::didbc", peer_s = p$seconds, diffdiff_s = o$seconds,
             speedup = p$seconds / o$seconds, peer_peak_mb = p$mb, diffdiff_peak_mb = o$mb, mem_ratio = o$mb / p$mb,
             diff = diff)
})
res <- do.call(rbind, rows)
if (requireNamespace("jsonlite", quietly = TRUE))
  writeLines(jsonlite::toJSON(res, pretty = TRUE, digits = 6), file.path(out_dir, "bc.json"))
md <- c("# did_bc vs badcontrols::didbc", "",
        "Same R process; time: median of 3 calls; memory: R heap peak above the baseline (MB); diff: largest difference of the ATT(g,t) and their analytic SEs.",
        "", bench_table_md(res))
writeLines(md, file.path(out_dir, "bc.md"))
cat(md, sep = "\n")
