# bench/synth.R: did_synth()'s in-space placebos against Synth 1.1-10's loop
# (dataprep() + synth() with each donor in turn as the treated unit, the
# other donors as its pool: the loop of Abadie, Diamond and Hainmueller
# 2010's placebo study) on the Basque data of ?synth, in one R process.
# Checks, per placebo unit: the outcome MSPE over the optimisation window
# (Synth's loss.v) that did_synth reaches relative to Synth's, and the
# synthetic paths; writes time and memory (R's heap peak during each call
# above its baseline, gc()) ratios to
# bench/results/synth.{json,md}.
# Usage: Rscript bench/synth.R
suppressPackageStartupMessages({ library(diffdiff); library(Synth) })
out_dir <- file.path("bench", "results")
dir.create(out_dir, showWarnings = FALSE, recursive = TRUE)
e <- new.env(); utils::data("basque", package = "Synth", envir = e)
b <- e$basque[e$basque$regionno != 1, ]
b$d <- as.integer(b$regionno == 17 & b$year >= 1970)
donors <- c(2:16, 18)
sp <- list(list("gdpcap", 1960:1969, "mean"), list("sec.agriculture", seq(1961, 1969, 2), "mean"),
  list("sec.energy", seq(1961, 1969, 2), "mean"), list("sec.industry", seq(1961, 1969, 2), "mean"),
  list("sec.construction", seq(1961, 1969, 2), "mean"), list("sec.services.venta", seq(1961, 1969, 2), "mean"),
  list("sec.services.nonventa", seq(1961, 1969, 2), "mean"), list("popdens", 1969, "mean"))
pr <- c("school.illit", "school.prim", "school.med", "school.high", "school.post.high", "invest")

# time, and the peak of R's heap during the call above what was in use
# before it (so that what the first call leaves behind does not count
# against the second)
source(file.path("bench", "measure.R"))
measure <- bench_in_process

peer <- measure(lapply(donors, function(j) {
  dp <- dataprep(foo = b, predictors = pr, predictors.op = "mean", time.predictors.prior = 1964:1969,
                 special.predictors = sp, dependent = "gdpcap", unit.variable = "regionno",
                 unit.names.variable = "regionname", time.variable = "year", treatment.identifier = j,
                 controls.identifier = setdiff(donors, j), time.optimize.ssr = 1960:1969, time.plot = 1955:1997)
  utils::capture.output(so <- synth(dp))
  list(loss_v = so$loss.v[1], gap = drop(dp$Y1plot - dp$Y0plot %*% so$solution.w))
}))
ours <- measure(did_synth(b, "gdpcap", "regionno", "year", "d", predictors = pr,
                                     predictors_window = 1964:1969, special_predictors = sp,
                                     optimize_window = 1960:1969))
pl <- ours$value$placebos
# each placebo's MSPE over the optimisation window, from its gaps
ow <- match(1960:1969, ours$value$periods)
ours_loss <- rowMeans(pl$gaps[match(donors, pl$table$unit), ow, drop = FALSE]^2)
synth_loss <- vapply(peer$value, `[[`, 0, "loss_v")
rel <- (ours_loss - synth_loss) / synth_loss
res <- list(
  data = "Basque (Synth's basque, 16 donors, 14 predictors), in-space placebos over all donors",
  synth_seconds = peer$seconds, diffdiff_seconds = ours$seconds, time_ratio = peer$seconds / ours$seconds,
  synth_mb = peer$mb, diffdiff_mb = ours$mb, memory_ratio = peer$mb / ours$mb,
  placebos_not_worse = sum(rel <= 1e-6), placebos = length(rel), max_rel_excess = max(rel),
  median_rel_difference = stats::median(rel))
jsonlite_ok <- requireNamespace("jsonlite", quietly = TRUE)
if (jsonlite_ok) writeLines(jsonlite::toJSON(res, auto_unbox = TRUE, pretty = TRUE, digits = 6),
                            file.path(out_dir, "synth.json"))
md <- c("# did_synth in-space placebos vs Synth's loop", "",
        sprintf("Data: %s. Same R process; diffdiff's time includes the treated unit's own fit.", res$data), "",
        "| | Synth 1.1-10 | diffdiff | ratio |", "|---|---|---|---|",
        sprintf("| time (s) | %.2f | %.2f | %.1fx |", res$synth_seconds, res$diffdiff_seconds, res$time_ratio),
        sprintf("| R heap peak above baseline (MB) | %.1f | %.1f | %.2fx |", res$synth_mb, res$diffdiff_mb, res$memory_ratio), "",
        sprintf("Agreement: did_synth's pre-period MSPE is no larger than Synth's (relative 1e-6) for %d of %d placebo units; largest relative excess %.3g, median relative difference %.3g.",
                res$placebos_not_worse, res$placebos, res$max_rel_excess, res$median_rel_difference))
writeLines(md, file.path(out_dir, "synth.md"))
cat(md, sep = "\n")
