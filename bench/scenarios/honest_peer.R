# The HonestDiD phase of scenario 1 against its real peer: the
# relative-magnitudes robust confidence set (ARP conditional-least-favourable
# hybrid, 1000 grid points) for the effect on impact, Mbar = 1, on the
# large-scale campaign's Callaway-Sant'Anna event study (17 pre-periods, 18
# post-periods), by diffdiff and by the HonestDiD package on the same grid.
# diff-diff's own phase computes a different, closed-form interval (its
# relative-magnitudes bounds widened by a critical value times the SE), so
# this is the comparison of like with like. Writes
# bench/results/scenarios-honest.md.
#
#   HONESTDID_LIB=/path/to/lib Rscript bench/scenarios/honest_peer.R
# (tools/install-honestdid.sh installs HonestDiD 0.2.8 into such a library.)
here <- dirname(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE)[1]))
lib <- Sys.getenv("HONESTDID_LIB")
if (nzchar(lib)) .libPaths(c(lib, .libPaths()))
if (!requireNamespace("HonestDiD", quietly = TRUE)) {
  message("HonestDiD is not installed (set HONESTDID_LIB; tools/install-honestdid.sh): nothing to compare")
  quit(status = 0)
}
suppressPackageStartupMessages(library(diffdiff))
Sys.setenv(SCENARIO_NO_MAIN = "1", SCENARIO_DIR = here)
source(file.path(here, "campaign_staggered.R"), local = TRUE)
d <- campaign_staggered_data("large")
cs <- did_cs(d, "outcome", "unit", "period", "first_treat", xformla = ~ log_pop + baseline_spend, nboot = 0,
             base_period = "universal")
es <- aggregate(cs, "dynamic")
e <- diffdiff:::dd_event_study(es, NULL, NULL, NULL, fun = "honest_peer")
t_dd <- system.time(h <- honest_did(es, type = "RM", Mbar = 1, breakdown = FALSE))[["elapsed"]]
lo <- h$grids$start_lb; hi <- h$grids$start_ub            # the grid diffdiff used (moved to the estimate)
t_hd <- system.time(r <- HonestDiD::createSensitivityResults_relativeMagnitudes(
  betahat = unname(e$betahat), sigma = unname(e$sigma), numPrePeriods = e$K, numPostPeriods = e$P, Mbarvec = 1,
  gridPoints = 1000, grid.lb = lo, grid.ub = hi))[["elapsed"]]
diff <- max(abs(r$lb - h$results$lb), abs(r$ub - h$results$ub))
md <- c("# Scenario 1's HonestDiD phase against HonestDiD", "",
        sprintf("Run %s: the relative-magnitudes robust confidence set (C-LF, 1000 grid points on [%.4f, %.4f]) for the effect on impact, Mbar = 1, on the large campaign's Callaway-Sant'Anna event study (%d pre-, %d post-periods). One process, one run each.",
                format(Sys.time(), "%Y-%m-%d"), lo, hi, e$K, e$P), "",
        "| | interval | seconds |", "|---|---|---|",
        sprintf("| diffdiff %s | [%.6f, %.6f] | %.2f |", utils::packageVersion("diffdiff"), h$results$lb, h$results$ub, t_dd),
        sprintf("| HonestDiD %s | [%.6f, %.6f] | %.2f |", utils::packageVersion("HonestDiD"), r$lb, r$ub, t_hd), "",
        sprintf("Largest difference of the ends: %.1e. HonestDiD / diffdiff time: %.0fx.", diff, t_hd / t_dd))
writeLines(md, file.path(here, "..", "results", "scenarios-honest.md"))
cat(md, sep = "\n")
