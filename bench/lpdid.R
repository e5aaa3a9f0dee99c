# bench/lpdid.R: did_lpdid() against the LP-DiD recipe of Dube, Girardi,
# Jorda and Taylor built with fixest (the authors' R example files: the
# long differences by calendar lead/lag, then feols(dy ~ D | period,
# vcov = ~unit) on each horizon's clean sample, looped over horizons), on
# the same simulated panel in one R process: 100,000 units x 20 periods,
# staggered adoption, horizons -5..-2 and 0..10 and the pooled windows.
# A second run adds a time-varying covariate (feols(dy ~ D + x | period)
# in the recipe, `xformla = ~ x` here). Checks estimates (1e-8) and
# standard errors (1e-6); writes time and memory (R's heap peak above each
# call's baseline) ratios to bench/results/lpdid.{json,md}.
# Usage: Rscript bench/lpdid.R [units]
suppressPackageStartupMessages({ library(diffdiff); library(fixest) })
setFixest_nthreads(1)
out_dir <- file.path("bench", "results")
dir.create(out_dir, showWarnings = FALSE, recursive = TRUE)
a <- commandArgs(TRUE)
n <- if (length(a)) as.integer(a[1]) else 100000L
T <- 20L; K <- 5L; H <- 10L
set.seed(1)
g <- sample(c(0, 6:16), n, replace = TRUE)
d <- data.frame(id = rep(seq_len(n), each = T), t = rep(seq_len(T), n))
d$g <- g[d$id]
d$y <- stats::rnorm(n)[d$id] + 0.1 * d$t + ifelse(d$g > 0 & d$t >= d$g, 1 + 0.1 * (d$t - d$g), 0) + stats::rnorm(n * T)
d$x <- stats::rnorm(n * T) + 0.05 * d$t
d$y <- d$y + 0.5 * d$x

source(file.path("bench", "measure.R"))
measure <- bench_in_process
recipe <- function(d, cov = FALSE) {
  key <- d$id * (2L * T) + d$t                 # (no collision for |k| < T)
  at <- function(k) d$y[match(d$id * (2L * T) + d$t + k, key)]
  G <- ifelse(d$g == 0, Inf, d$g)
  D <- as.integer(d$t == G)
  base <- at(-1)
  one <- function(target, hc) {
    ctrl <- d$t < G & (if (hc >= 0) d$t + hc < G else TRUE)
    keep <- !is.na(target - base) & (D == 1 | ctrl)
    s <- data.frame(dy = (target - base)[keep], D = D[keep], tt = d$t[keep], id = d$id[keep], x = d$x[keep])
    m <- if (cov) feols(dy ~ D + x | tt, s, vcov = ~id) else feols(dy ~ D | tt, s, vcov = ~id)
    c(coef(m)[["D"]], se(m)[["D"]])
  }
  hs <- c(-(K:2), 0:H)
  rbind(t(vapply(hs, function(h) one(at(h), h), numeric(2))),
        one(Reduce(`+`, lapply(2:K, function(k) at(-k))) / (K - 1), -K),
        one(Reduce(`+`, lapply(0:H, at)) / (H + 1), H))
}
run <- function(cov) {
  peer <- measure(recipe(d, cov))
  ours <- measure(did_lpdid(d, "y", "id", "t", gname = "g", xformla = if (cov) ~ x, pre_window = K, post_window = H))
  tab <- ours$value$coeftable
  r <- list(fixest_seconds = peer$seconds, diffdiff_seconds = ours$seconds, time_ratio = peer$seconds / ours$seconds,
            fixest_mb = peer$mb, diffdiff_mb = ours$mb, memory_ratio = peer$mb / ours$mb,
            max_abs_diff_estimate = max(abs(tab$estimate - peer$value[, 1])),
            max_rel_diff_se = max(abs(tab$std.error / peer$value[, 2] - 1)))
  stopifnot(r$max_abs_diff_estimate < 1e-8, r$max_rel_diff_se < 1e-6)
  r
}
res <- c(list(data = sprintf("%d units x %d periods, horizons -%d..-2, 0..%d and pooled", n, T, K, H)), run(FALSE))
res$covariate <- run(TRUE)
if (requireNamespace("jsonlite", quietly = TRUE))
  writeLines(jsonlite::toJSON(res, auto_unbox = TRUE, pretty = TRUE, digits = 6), file.path(out_dir, "lpdid.json"))
md <- c("# did_lpdid vs the fixest LP-DiD recipe", "", sprintf("Data: %s; same R process, fixest on 1 thread.", res$data), "",
        sprintf("| | fixest %s recipe | diffdiff | ratio |", utils::packageVersion("fixest")), "|---|---|---|---|",
        sprintf("| time (s) | %.2f | %.2f | %.1fx |", res$fixest_seconds, res$diffdiff_seconds, res$time_ratio),
        sprintf("| R heap peak above baseline (MB) | %.0f | %.0f | %.2fx |", res$fixest_mb, res$diffdiff_mb, res$memory_ratio), "",
        sprintf("Agreement: largest estimate difference %.2g, largest relative SE difference %.2g.",
                res$max_abs_diff_estimate, res$max_rel_diff_se), "",
        "With a covariate (`xformla = ~ x`; the recipe's `feols(dy ~ D + x | tt)`):", "",
        "| | fixest recipe | diffdiff | ratio |", "|---|---|---|---|",
        sprintf("| time (s) | %.2f | %.2f | %.1fx |", res$covariate$fixest_seconds, res$covariate$diffdiff_seconds,
                res$covariate$time_ratio),
        sprintf("| R heap peak above baseline (MB) | %.0f | %.0f | %.2fx |", res$covariate$fixest_mb,
                res$covariate$diffdiff_mb, res$covariate$memory_ratio), "",
        sprintf("Agreement: largest estimate difference %.2g, largest relative SE difference %.2g.",
                res$covariate$max_abs_diff_estimate, res$covariate$max_rel_diff_se))
writeLines(md, file.path(out_dir, "lpdid.md"))
cat(md, sep = "\n")
