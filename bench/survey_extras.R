# bench/survey_extras.R: issue 44's survey extras against the survey package
# on the same data in one R process: trim_weights() against
# survey::trimWeights() (strict, a stratified cluster design) and
# aggregate_survey(deff = TRUE) against svyby(svymean, deff = TRUE) (cell
# means by year with design effects). Checks agreement; writes
# bench/results/survey_extras.{json,md}. Time: median of 3 calls; memory: R
# heap peak above the baseline (first call).
# Usage: Rscript bench/survey_extras.R [n]
suppressPackageStartupMessages({library(diffdiff); library(survey)})
out_dir <- file.path("bench", "results")
dir.create(out_dir, showWarnings = FALSE, recursive = TRUE)
a <- commandArgs(TRUE)
n <- if (length(a)) as.integer(a[1]) else 200000L
set.seed(1)
d <- data.frame(str = sample(1:20, n, TRUE), w = rexp(n) * 50 + 1, year = sample(2001:2010, n, TRUE), y = rnorm(n))
d$psu <- d$str * 1000 + sample(1:40, n, TRUE)
source(file.path("bench", "measure.R"))
sdes <- svydesign(ids = ~psu, strata = ~str, weights = ~w, data = d)
ddes <- survey_design(d, weights = "w", strata = "str", ids = "psu")
up <- 3 * median(d$w)
p1 <- bench_in_process_median(function() weights(trimWeights(sdes, upper = up, strict = TRUE)))
o1 <- bench_in_process_median(function() trim_weights(ddes, upper = up, strict = TRUE)$weights)
d1 <- max(abs(o1$value - unname(p1$value)) / unname(p1$value))
stopifnot(d1 < 1e-12)
p2 <- bench_in_process_median(function() svyby(~y, ~year, sdes, svymean, deff = TRUE))
o2 <- bench_in_process_median(function() aggregate_survey(d, "y", by = "year", design = ddes, deff = TRUE))
d2 <- max(abs(o2$value$y_deff - unname(p2$value$DEff.y)) / unname(p2$value$DEff.y))
stopifnot(d2 < 1e-8)
res <- data.frame(case = c(sprintf("trim_weights(strict) %s rows", format(n, big.mark = ",")),
                           sprintf("cell means + deff by year, %s rows", format(n, big.mark = ","))),
                  peer = c("survey::trimWeights", "survey::svyby(svymean, deff = TRUE)"),
                  peer_s = c(p1$seconds, p2$seconds), diffdiff_s = c(o1$seconds, o2$seconds),
                  speedup = c(p1$seconds / o1$seconds, p2$seconds / o2$seconds), peer_peak_mb = c(p1$mb, p2$mb),
                  diffdiff_peak_mb = c(o1$mb, o2$mb), mem_ratio = c(o1$mb / p1$mb, o2$mb / p2$mb),
                  diff = sprintf("%.1e", c(d1, d2)))
if (requireNamespace("jsonlite", quietly = TRUE))
  writeLines(jsonlite::toJSON(res, pretty = TRUE, digits = 6), file.path(out_dir, "survey_extras.json"))
md <- c("# Survey extras: trim_weights, aggregate_survey(deff = TRUE) vs the survey package", "",
        "Same R process; time: median of 3 calls; memory: R heap peak above the baseline (MB); diff: largest relative difference (weights; design effects).",
        "", bench_table_md(res))
writeLines(md, file.path(out_dir, "survey_extras.md"))
cat(md, sep = "\n")
