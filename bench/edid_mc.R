# bench/edid_mc.R: a Monte Carlo of did_edid() against did_cs() on the same
# panels. Efficient DiD (parallel trends in all periods) should never be less
# precise than Callaway-Sant'Anna with never-treated comparisons beyond
# simulation noise, and its standard errors should track its sampling
# standard deviation. Panels: 1,000 units x 6 periods, cohorts first treated
# in periods 3, 4, 5 (25%, 25%, 20%) and never treated (30%), unit effects,
# AR(1) errors (rho = 0.6, where the efficient weights matter), effects
# 1 + 0.3 (t - g). 500 replications; for each post-treatment ATT(g,t) and the
# event-study average: the sampling SD of both estimators, their ratio (with
# a bootstrap interval over replications), the mean analytic SE over the SD
# and the coverage of the 95% interval. A second design adds covariates:
# cohort membership and trends depend on x1 (normal) and x2 (binary), so
# parallel trends hold only conditionally; did_edid(xformla = ~ x1 + x2)
# against did_cs(est_method = "reg") with the same covariates (and the
# unadjusted did_edid's bias).
# Usage: Rscript bench/edid_mc.R [reps]
suppressPackageStartupMessages(library(diffdiff))
args <- commandArgs(TRUE)
reps <- if (length(args) >= 1) as.integer(args[1]) else 500L
out_dir <- file.path("bench", "results")
dir.create(out_dir, showWarnings = FALSE, recursive = TRUE)
dd_threads(2)
gen <- function(n = 1000, TT = 6, rho = 0.6) {
  G <- sample(c(3, 4, 5, Inf), n, replace = TRUE, prob = c(0.25, 0.25, 0.2, 0.3))
  e <- matrix(0, n, TT); e[, 1] <- rnorm(n) / sqrt(1 - rho^2)
  for (t in 2:TT) e[, t] <- rho * e[, t - 1] + rnorm(n)
  Y <- rnorm(n) + outer(rep(1, n), 0.3 * seq_len(TT)) + e
  for (t in seq_len(TT)) Y[, t] <- Y[, t] + ifelse(is.finite(G) & t >= G, 1 + 0.3 * (t - G), 0)
  data.frame(id = rep(seq_len(n), each = TT), t = rep(seq_len(TT), n), g = rep(ifelse(is.finite(G), G, 0), each = TT),
             y = as.vector(t(Y)))
}
gen_x <- function(n = 1000, TT = 6, rho = 0.6) {
  x1 <- rnorm(n); x2 <- rbinom(n, 1, 0.4)
  lp <- cbind(0, 0.8 * x1, -0.5 * x1 + 0.5 * x2, 0.3 * x2)
  pr <- exp(lp) / rowSums(exp(lp))
  G <- c(Inf, 3, 4, 5)[apply(pr, 1, function(p) sample.int(4, 1, prob = p))]
  e <- matrix(0, n, TT); e[, 1] <- rnorm(n) / sqrt(1 - rho^2)
  for (t in 2:TT) e[, t] <- rho * e[, t - 1] + rnorm(n)
  Y <- rnorm(n) + x1 + outer(x1, 0.5 * seq_len(TT)) + outer(x2, 0.2 * seq_len(TT)) + e
  for (t in seq_len(TT)) Y[, t] <- Y[, t] + ifelse(is.finite(G) & t >= G, 1 + 0.3 * (t - G), 0)
  data.frame(id = rep(seq_len(n), each = TT), t = rep(seq_len(TT), n), g = rep(ifelse(is.finite(G), G, 0), each = TT),
             y = as.vector(t(Y)), x1 = rep(x1, each = TT), x2 = rep(x2, each = TT))
}
run <- function(gen, xf) {
set.seed(2025)
t0 <- proc.time()[["elapsed"]]
res <- lapply(seq_len(reps), function(r) {
  d <- gen()
  fe <- did_edid(d, "y", "id", "t", "g", xformla = xf)
  fc <- did_cs(d, "y", "id", "t", "g", xformla = xf, control_group = "nevertreated", est_method = "reg", nboot = 0)
  f0 <- if (is.null(xf)) fe else did_edid(d, "y", "id", "t", "g")
  post <- fe$coeftable$time >= fe$coeftable$group
  ke <- fe$coeftable[post, ]
  kc <- fc$coeftable[match(ke$term, fc$coeftable$term), ]
  k0 <- f0$coeftable[match(ke$term, f0$coeftable$term), ]
  ae <- aggregate(fe, type = "dynamic")$coeftable; ac <- aggregate(fc, type = "dynamic")$coeftable
  a0 <- aggregate(f0, type = "dynamic")$coeftable
  data.frame(term = c(ke$term, "ES average"),
             truth = c(1 + 0.3 * (ke$time - ke$group), NA),
             edid = c(ke$estimate, ae$estimate[ae$term == "ATT"]), edid_se = c(ke$std.error, ae$std.error[ae$term == "ATT"]),
             cs = c(kc$estimate, ac$estimate[ac$term == "ATT"]), cs_se = c(kc$std.error, ac$std.error[ac$term == "ATT"]),
             edid0 = c(k0$estimate, a0$estimate[a0$term == "ATT"]), rep = r)
})
el <- proc.time()[["elapsed"]] - t0
res <- do.call(rbind, res)
res$truth[res$term == "ES average"] <- mean(c(1, 1.3, 1.6, 1.9))   # e = 0..3 average of 1 + 0.3 e
z <- stats::qnorm(0.975)
summ <- do.call(rbind, lapply(split(res, factor(res$term, unique(res$term))), function(x) {
  sd_e <- stats::sd(x$edid); sd_c <- stats::sd(x$cs)
  bt <- replicate(400, { i <- sample.int(nrow(x), replace = TRUE); stats::sd(x$edid[i]) / stats::sd(x$cs[i]) })
  data.frame(term = x$term[1], bias_edid = mean(x$edid - x$truth), bias_cs = mean(x$cs - x$truth),
             bias_edid0 = mean(x$edid0 - x$truth),
             sd_edid = sd_e, sd_cs = sd_c, ratio = sd_e / sd_c,
             ratio_lo = stats::quantile(bt, 0.025, names = FALSE), ratio_hi = stats::quantile(bt, 0.975, names = FALSE),
             se_over_sd_edid = mean(x$edid_se) / sd_e, se_over_sd_cs = mean(x$cs_se) / sd_c,
             cover_edid = mean(abs(x$edid - x$truth) <= z * x$edid_se),
             cover_cs = mean(abs(x$cs - x$truth) <= z * x$cs_se))
}))
rownames(summ) <- NULL
print(summ, digits = 3)
stopifnot(all(summ$ratio_lo <= 1))           # never worse than did_cs beyond simulation noise
list(summ = summ, el = el, covariates = !is.null(xf))
}
tab <- function(r, title) {
  summ <- r$summ
  c(sprintf("## %s (%.0f s)", title, r$el), "",
    "| estimate | bias EDiD | bias CS | bias EDiD without covariates | sd EDiD | sd CS | ratio | 95% interval | se/sd EDiD | se/sd CS | cover EDiD | cover CS |",
    "|---|---|---|---|---|---|---|---|---|---|---|---|",
    sprintf("| %s | %.4f | %.4f | %s | %.4f | %.4f | %.3f | %.3f-%.3f | %.3f | %.3f | %.3f | %.3f |", summ$term,
            summ$bias_edid, summ$bias_cs, if (r$covariates) sprintf("%.4f", summ$bias_edid0) else "-", summ$sd_edid, summ$sd_cs, summ$ratio, summ$ratio_lo,
            summ$ratio_hi, summ$se_over_sd_edid, summ$se_over_sd_cs, summ$cover_edid, summ$cover_cs), "")
}
r0 <- run(gen, NULL)
rx <- run(gen_x, ~ x1 + x2)
md <- c("# bench/edid_mc.R results", "",
        sprintf("%s; %s; diffdiff %s; %d replications of 1,000 units x 6 periods (AR(1) errors, rho = 0.6).",
                format(Sys.time(), "%Y-%m-%d %H:%M:%S %Z"), R.version.string, packageVersion("diffdiff"), reps), "",
        "sd: sampling SD over replications; ratio = sd(did_edid) / sd(did_cs) with a 95% bootstrap interval over replications; se/sd: mean analytic SE over the sampling SD; cover: coverage of the 95% interval.", "",
        tab(r0, "Unconditional parallel trends, no covariates"),
        tab(rx, "Conditional parallel trends, covariates x1 + x2 (did_cs: est_method = \"reg\" with the same covariates)"))
writeLines(md, file.path(out_dir, "edid_mc.md"))
cat(md, sep = "\n")
