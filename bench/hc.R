# bench/hc.R: vcov = "HC2" / "HC3" in did_twfe against sandwich::vcovHC() on
# lm() with the fixed effects as factors (the only way sandwich gets the
# leverages of a two-way fixed-effects model), on the same unbalanced panel
# in one R process; n units x 10 periods, staggered adoption, one covariate.
# Checks the standard errors agree (1e-8 relative), writes
# bench/results/hc.{json,md}. Time: median of 3 calls; memory: R heap peak
# above the baseline (first call).
# Usage: Rscript bench/hc.R [n]
suppressPackageStartupMessages({library(diffdiff); library(sandwich)})
out_dir <- file.path("bench", "results")
dir.create(out_dir, showWarnings = FALSE, recursive = TRUE)
a <- commandArgs(TRUE)
n <- if (length(a)) as.integer(a[1]) else 1000L
set.seed(1)
d <- expand.grid(t = 1:10, id = seq_len(n))[, c("id", "t")]
g <- sample(c(0, 4, 6, 8), n, TRUE)
d$D <- as.integer(g[d$id] > 0 & d$t >= g[d$id])
d$x <- rnorm(nrow(d))
d$y <- rnorm(n)[d$id] + 0.2 * d$t + d$D + 0.5 * d$x + rnorm(nrow(d)) * (1 + d$D)
d <- d[-sample(nrow(d), nrow(d) %/% 50), ]
source(file.path("bench", "measure.R"))
rows <- lapply(c("HC2", "HC3"), function(ty) {
  peer <- bench_in_process_median(function() {
    m <- lm(y ~ D + x + factor(id) + factor(t), data = d)
    sqrt(diag(vcovHC(m, type = ty))[c("D", "x")])
  })
  ours <- bench_in_process_median(function() did_twfe(d, "y", "id", "t", "D", xformla = ~ x, vcov = ty))
  se <- ours$value$coeftable$std.error[match(c("ATT", "x"), ours$value$coeftable$term)]
  diff <- max(abs(se - peer$value) / peer$value)
  stopifnot(diff < 1e-8)
  data.frame(case = sprintf("did_twfe vcov = \"%s\", %s units x 10", ty, format(n, big.mark = ",")),
             peer = "lm() + sandwich::vcovHC", peer_s = peer$seconds, diffdiff_s = ours$seconds,
             speedup = peer$seconds / ours$seconds, peer_peak_mb = peer$mb, diffdiff_peak_mb = ours$mb,
             mem_ratio = ours$mb / peer$mb, diff = sprintf("%.1e", diff))
})
res <- do.call(rbind, rows)
if (requireNamespace("jsonlite", quietly = TRUE))
  writeLines(jsonlite::toJSON(res, pretty = TRUE, digits = 6), file.path(out_dir, "hc.json"))
md <- c("# HC2 / HC3: did_twfe vs lm() + sandwich::vcovHC", "",
        "Same R process; time: median of 3 calls; memory: R heap peak above the baseline (MB); diff: largest relative difference of the SEs.",
        "", bench_table_md(res))
writeLines(md, file.path(out_dir, "hc.md"))
cat(md, sep = "\n")
