# bench/dose-coverage.R: are did_dose()'s analytic standard errors right?
# 1,000 panels from contdid's own simulator (1,000 units x 4 periods, cohorts
# 2, 3, 4 and never treated, ATT(d) = 0.5 d + 0.3 d^2), B-spline of degree 3
# with one knot: the Monte Carlo standard deviation of each estimate against
# the mean standard error of did_dose (contdid's faults corrected) and of
# the same computation with them undone (contdid 0.1.1's influence
# functions, rules = "contdid-0.1.1"). Writes
# bench/results/dose_coverage.md.
# Usage: Rscript bench/dose-coverage.R [reps]
suppressPackageStartupMessages(library(diffdiff))
args <- commandArgs(TRUE)
R <- if (length(args) >= 1) as.integer(args[1]) else 1000L
if (!requireNamespace("contdid", quietly = TRUE)) stop("bench/dose-coverage.R needs contdid")
dv <- c(0.3, 0.5, 0.7)
out <- t(vapply(seq_len(R), function(r) {
  set.seed(1000 + r)
  df <- contdid::simulate_contdid_data(n = 1000, num_time_periods = 4, num_groups = 4, dose_linear_effect = 0.5,
                                       dose_quadratic_effect = 0.3)
  fit <- function(compat)
    did_dose(df, "Y", "id", "time_period", "G", "D", degree = 3, num_knots = 1, nboot = 0, dvals = dv,
             rules = if (compat) "contdid-0.1.1" else "default")
  g <- fit(FALSE); f <- fit(TRUE)
  c(g$coefficients, g$dose$att, g$dose$acrt, g$coeftable$std.error, g$dose$att_se, g$dose$acrt_se,
    f$coeftable$std.error, f$dose$att_se, f$dose$acrt_se)
}, numeric(24)))
k <- 8
terms <- c("ATT (ATT^o)", "ACRT (ACRT^o)", sprintf("ATT(%g)", dv), sprintf("ACRT(%g)", dv))
res <- data.frame(term = terms, mc_sd = apply(out[, 1:k], 2, stats::sd), se_diffdiff = colMeans(out[, k + 1:k]),
                  se_contdid_faults = colMeans(out[, 2 * k + 1:k]))
res$ratio_diffdiff <- res$se_diffdiff / res$mc_sd
res$ratio_contdid <- res$se_contdid_faults / res$mc_sd
print(res, digits = 3)
md <- c("# bench/dose-coverage.R results", "",
        sprintf("%s; %s; diffdiff %s; contdid %s simulator; %d panels of 1,000 units x 4 periods.",
                format(Sys.time(), "%Y-%m-%d %H:%M:%S %Z"), R.version.string, packageVersion("diffdiff"),
                packageVersion("contdid"), R), "",
        "Monte Carlo SD of each estimate against the mean analytic SE: did_dose (corrected) and with contdid 0.1.1's faults undone. The curves of the second are evaluated in contdid's grid basis, so its ATT(d)/ACRT(d) SEs refer to a different (wrong) curve.", "",
        "| term | MC SD | mean SE did_dose | ratio | mean SE contdid-faults | ratio |", "|---|---|---|---|---|---|",
        sprintf("| %s | %.4f | %.4f | %.2f | %.4f | %.2f |", res$term, res$mc_sd, res$se_diffdiff, res$ratio_diffdiff,
                res$se_contdid_faults, res$ratio_contdid))
dir.create(file.path("bench", "results"), showWarnings = FALSE)
writeLines(md, file.path("bench", "results", "dose_coverage.md"))
cat(md, sep = "\n")
