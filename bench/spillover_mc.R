# bench/spillover_mc.R: Monte Carlo of did_spillover() against the naive
# DiDs when treatment spills over to nearby untreated units (Butts 2021).
# Each replication draws dd_sim_spillover(): 1,000 units over a 1,000 km
# square, 8 periods, 10% treated in 3 cohorts, a direct effect of 1 and a
# spillover of 1.5 x (1 - d / 60) on untreated units within d < 60 km of a
# unit treated by then. Estimators: did_spillover with rings (0, 20, 40, 60)
# km; the naive two-stage DiD (did_gardner) and TWFE (did_twfe), which use
# the contaminated units as controls. Reports bias, RMSE and the coverage of
# 95% intervals of the direct effect (clustered and Conley SEs), and the
# mean ring estimates against their true means (the true spillover averaged
# over each ring's rows). Writes bench/results/spillover_mc.{json,md}.
# Usage: Rscript bench/spillover_mc.R [reps]
suppressPackageStartupMessages(library(diffdiff))
out_dir <- file.path("bench", "results")
dir.create(out_dir, showWarnings = FALSE, recursive = TRUE)
a <- commandArgs(TRUE)
R <- if (length(a) >= 1) as.integer(a[1]) else 500L
rings <- c(0, 20, 40, 60)
sp_true <- function(d, f) {
  # the true spillover of each exposed row: 1.5 (1 - d / 60), d the distance
  # did_spillover reports (the generator's own distance, on the same sphere)
  ex <- f$exposure
  s <- ifelse(d$D == 0 & ex$distance < 60, 1.5 * (1 - ex$distance / 60), 0)
  tapply(s[d$D == 0 & !is.na(ex$ring)], ex$ring[d$D == 0 & !is.na(ex$ring)], mean)
}
set.seed(2021)
t0 <- proc.time()[["elapsed"]]
sims <- lapply(seq_len(R), function(r) {
  d <- dd_sim_spillover(n_units = 1000, n_periods = 8, cohorts = c(3, 5, 7), spillover = 1.5, reach = 60,
                        region_km = 1000)
  f <- suppressMessages(did_spillover(d, "y", "id", "time", "first_treat", rings = rings))
  fc <- suppressMessages(did_spillover(d, "y", "id", "time", "first_treat", rings = rings, vcov = "conley",
                                       cutoff = 60))
  g <- suppressMessages(did_gardner(d, "y", "id", "time", "first_treat"))
  w <- suppressMessages(did_twfe(d, "y", "id", "time", "D"))
  ci <- function(fit, term) {
    k <- match(term, fit$coeftable$term)
    c(fit$coeftable$conf.low[k], fit$coeftable$conf.high[k])
  }
  list(direct = coef(f)[["direct"]], rings = coef(f)[-1], true_rings = sp_true(d, f),
       gardner = coef(g)[["ATT"]], twfe = coef(w)[[1]],
       cover = c(cluster = prod(ci(f, "direct") - 1) < 0, conley = prod(ci(fc, "direct") - 1) < 0,
                 gardner = prod(ci(g, "ATT") - 1) < 0))
})
secs <- proc.time()[["elapsed"]] - t0
est <- cbind(did_spillover = vapply(sims, `[[`, 0, "direct"), did_gardner = vapply(sims, `[[`, 0, "gardner"),
             did_twfe = vapply(sims, `[[`, 0, "twfe"))
bias <- colMeans(est) - 1
mcse <- apply(est, 2, sd) / sqrt(R)
rmse <- sqrt(colMeans((est - 1)^2))
cover <- rowMeans(vapply(sims, `[[`, logical(3), "cover"))
rg <- do.call(rbind, lapply(sims, `[[`, "rings"))
tr <- do.call(rbind, lapply(sims, `[[`, "true_rings"))
res <- list(reps = R, seconds = secs, bias = as.list(bias), mc_se = as.list(mcse), rmse = as.list(rmse),
            coverage = as.list(cover), ring_mean_estimate = as.list(colMeans(rg)),
            ring_mean_truth = as.list(stats::setNames(colMeans(tr), colnames(rg))))
if (requireNamespace("jsonlite", quietly = TRUE))
  writeLines(jsonlite::toJSON(res, auto_unbox = TRUE, pretty = TRUE, digits = 6), file.path(out_dir, "spillover_mc.json"))
md <- c("# Spillover DiD: Monte Carlo", "",
        sprintf("%d replications of dd_sim_spillover(n_units = 1000, n_periods = 8, cohorts = c(3, 5, 7), spillover = 1.5, reach = 60, region_km = 1000); true direct effect 1; %.0f s.", R, secs), "",
        "| estimator of the direct effect | bias | Monte Carlo SE | RMSE |", "|---|---|---|---|",
        sprintf("| %s | %.4f | %.4f | %.4f |", names(bias), bias, mcse, rmse), "",
        sprintf("Coverage of 95%% intervals for the direct effect: did_spillover clustered %.3f, Conley (60 km) %.3f; did_gardner %.3f.",
                cover[["cluster"]], cover[["conley"]], cover[["gardner"]]), "",
        "| ring | mean estimate | mean true spillover |", "|---|---|---|",
        sprintf("| %s | %.4f | %.4f |", sub("^spillover::", "", colnames(rg)), colMeans(rg), colMeans(tr)))
writeLines(md, file.path(out_dir, "spillover_mc.md"))
cat(md, sep = "\n")
