# bench/dml_mc.R: Monte Carlo of did_dml() against the linear doubly robust
# DiD (did_cs(est_method = "dr")) when both nuisances are nonlinear in the
# covariates: a two-period panel of n units, x1, x2 uniform on [-2, 2], the
# propensity plogis(-0.3 + 0.8 x1^2 - x2) (selection on x1^2, so the logit
# in x1, x2 is misspecified), the untreated change 1.5 sin(2 x1) + x1^2 +
# 0.5 x2^2 + noise (the covariate-dependent trend is misspecified by the
# linear regression), and an effect of 1 for everyone. Estimators: did_cs's
# linear DR, did_dml with the linear learners (5 folds) and with ranger's
# forests (5 folds). Writes bias, Monte Carlo standard error, RMSE and the
# coverage of the 95% interval to bench/results/dml_mc.{json,md}.
# Usage: Rscript bench/dml_mc.R [reps] [n]
suppressPackageStartupMessages(library(diffdiff))
out_dir <- file.path("bench", "results")
dir.create(out_dir, showWarnings = FALSE, recursive = TRUE)
a <- commandArgs(TRUE)
R <- if (length(a) >= 1) as.integer(a[1]) else 200L
n <- if (length(a) >= 2) as.integer(a[2]) else 2000L

dgp <- function(n) {
  x1 <- runif(n, -2, 2); x2 <- runif(n, -2, 2)
  D <- rbinom(n, 1, stats::plogis(-0.3 + 0.8 * x1^2 - x2))
  y0 <- rnorm(n)
  y1 <- y0 + 1.5 * sin(2 * x1) + x1^2 + 0.5 * x2^2 + D * 1 + rnorm(n)
  data.frame(id = rep(seq_len(n), each = 2), t = rep(1:2, n), x1 = rep(x1, each = 2), x2 = rep(x2, each = 2),
             g = rep(ifelse(D == 1, 2, 0), each = 2), y = as.vector(rbind(y0, y1)))
}
est <- list(
  linear_dr = function(d) did_cs(d, "y", "id", "t", "g", ~ x1 + x2, nboot = 0),
  dml_linear = function(d) did_dml(d, "y", "id", "t", "g", ~ x1 + x2, nboot = 0),
  dml_forest = function(d) did_dml(d, "y", "id", "t", "g", ~ x1 + x2, learner = "forest", nboot = 0))
res <- array(NA_real_, c(R, length(est), 2), dimnames = list(NULL, names(est), c("est", "se")))
t0 <- proc.time()[["elapsed"]]
set.seed(20261206)
for (r in seq_len(R)) {
  d <- dgp(n)
  for (k in names(est)) {
    f <- est[[k]](d)
    res[r, k, ] <- c(f$coeftable$estimate, f$coeftable$std.error)
  }
}
el <- proc.time()[["elapsed"]] - t0
tab <- do.call(rbind, lapply(names(est), function(k) {
  e <- res[, k, "est"]; s <- res[, k, "se"]
  data.frame(estimator = k, bias = mean(e) - 1, mc_se = stats::sd(e) / sqrt(R), rmse = sqrt(mean((e - 1)^2)),
             mean_se = mean(s), sd_est = stats::sd(e), coverage = mean(abs(e - 1) <= stats::qnorm(0.975) * s))
}))
if (requireNamespace("jsonlite", quietly = TRUE))
  writeLines(jsonlite::toJSON(list(reps = R, n = n, seconds = el, results = tab), auto_unbox = TRUE, pretty = TRUE,
                              digits = 6), file.path(out_dir, "dml_mc.json"))
md <- c("# did_dml Monte Carlo: nonlinear nuisances", "",
        sprintf("%d replications of a two-period panel of %s units; true effect 1; propensity and untreated trend nonlinear in the covariates (see bench/dml_mc.R); %.0f s.",
                R, format(n, big.mark = ","), el), "",
        "| estimator | bias | MC SE of bias | RMSE | mean SE | SD of estimates | coverage (95%) |",
        "|---|---|---|---|---|---|---|",
        sprintf("| %s | %.4f | %.4f | %.4f | %.4f | %.4f | %.3f |", tab$estimator, tab$bias, tab$mc_se, tab$rmse,
                tab$mean_se, tab$sd_est, tab$coverage))
writeLines(md, file.path(out_dir, "dml_mc.md"))
cat(md, sep = "\n")
