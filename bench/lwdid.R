# bench/lwdid.R: did_lwdid() against the rolling-DiD recipe by hand (no R
# package implements it): for each cohort g, each unit's outcome minus its
# mean over the periods before g (demean), then lm(ydot ~ D) on each
# (cohort, period) cell (cohort g against the not-yet-treated units),
# looped over the cells, summary(lm) standard errors. Same simulated panel,
# one R process: 20,000 units x 20 periods, 10 cohorts. Checks the cell
# estimates (1e-8) and standard errors (1e-6); writes time and memory
# ratios to bench/results/lwdid.{json,md}.
# Usage: Rscript bench/lwdid.R [units]
suppressPackageStartupMessages(library(diffdiff))
out_dir <- file.path("bench", "results")
dir.create(out_dir, showWarnings = FALSE, recursive = TRUE)
a <- commandArgs(TRUE)
n <- if (length(a)) as.integer(a[1]) else 20000L
T <- 20L
set.seed(1)
g <- sample(c(0, 6:15), n, replace = TRUE)
d <- data.frame(id = rep(seq_len(n), each = T), t = rep(seq_len(T), n))
d$g <- g[d$id]
d$y <- stats::rnorm(n)[d$id] + 0.1 * d$t + ifelse(d$g > 0 & d$t >= d$g, 1 + 0.1 * (d$t - d$g), 0) + stats::rnorm(n * T)

source(file.path("bench", "measure.R"))
measure <- bench_in_process
recipe <- function(d) {
  out <- list()
  for (gg in sort(unique(d$g[d$g > 0]))) {
    pm <- tapply(d$y[d$t < gg], d$id[d$t < gg], mean)
    yd <- d$y - pm[as.character(d$id)]
    for (tt in setdiff(sort(unique(d$t)), gg - 1)) {
      s <- d$t == tt & (d$g == gg | d$g == 0 | d$g > max(gg, tt))
      m <- summary(lm(yd[s] ~ I(as.numeric(d$g[s] == gg))))$coefficients
      out[[length(out) + 1L]] <- c(gg, tt, m[2, 1], m[2, 2])
    }
  }
  do.call(rbind, out)
}
peer <- measure(recipe(d))
ours <- measure(did_lwdid(d, "y", "id", "t", "g"))
cl <- ours$value$cells
key <- match(paste(peer$value[, 1], peer$value[, 2]), paste(cl$group, cl$time))
res <- list(data = sprintf("%d units x %d periods, %d cohorts, %d cells", n, T, length(unique(g[g > 0])), nrow(cl)),
            lm_seconds = peer$seconds, diffdiff_seconds = ours$seconds, time_ratio = peer$seconds / ours$seconds,
            lm_mb = peer$mb, diffdiff_mb = ours$mb, memory_ratio = peer$mb / ours$mb,
            max_abs_diff_estimate = max(abs(cl$estimate[key] - peer$value[, 3])),
            max_rel_diff_se = max(abs(cl$std.error[key] / peer$value[, 4] - 1)))
stopifnot(!anyNA(key), nrow(cl) == nrow(peer$value), res$max_abs_diff_estimate < 1e-8, res$max_rel_diff_se < 1e-6)
if (requireNamespace("jsonlite", quietly = TRUE))
  writeLines(jsonlite::toJSON(res, auto_unbox = TRUE, pretty = TRUE, digits = 6), file.path(out_dir, "lwdid.json"))
md <- c("# did_lwdid vs the rolling-DiD recipe by hand (lm per cell)", "",
        sprintf("Data: %s; same R process.", res$data), "",
        "| | lm recipe | diffdiff | ratio |", "|---|---|---|---|",
        sprintf("| time (s) | %.2f | %.2f | %.1fx |", res$lm_seconds, res$diffdiff_seconds, res$time_ratio),
        sprintf("| R heap peak above baseline (MB) | %.0f | %.0f | %.2fx |", res$lm_mb, res$diffdiff_mb, res$memory_ratio), "",
        sprintf("Agreement: largest estimate difference %.2g, largest relative SE difference %.2g.",
                res$max_abs_diff_estimate, res$max_rel_diff_se))
writeLines(md, file.path(out_dir, "lwdid.md"))
cat(md, sep = "\n")
