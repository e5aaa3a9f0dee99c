# bench/duration.R: did_duration() against the by-hand plain-R route on the
# same data (no R package implements Deaner and Ku's duration DiD). The
# by-hand route: reshape to units x periods with base R, then the paper's
# equations (arXiv:2405.05220v2, Eqs. 3.1-3.4; the proportional-hazards
# ratio as in ?did_duration) on the group means; its standard errors are the
# paper's own, the standard deviation over a bootstrap of individuals
# (Appendix B, Algorithm 1). did_duration() gives delta-method influence
# functions (analytic standard errors) through the shared layer, and the
# multiplier bootstrap of those. Checked: the estimates agree to 1e-10; the
# standard errors are reported side by side (the bootstrap's differ by its
# Monte Carlo error). Time: elapsed seconds (median of 3); memory: R's heap
# peak above the baseline before the call (bench/measure.R). One thread.
# Writes bench/results/duration.{json,md}.
# Usage: Rscript bench/duration.R
suppressPackageStartupMessages(library(diffdiff))
source(file.path("bench", "measure.R"))
out_dir <- file.path("bench", "results")
dir.create(out_dir, showWarnings = FALSE, recursive = TRUE)
dd_threads(1)

hand_fit <- function(Y, trt, tt, js, method) {
  S1 <- colMeans(1 - Y[trt, , drop = FALSE]); S2 <- colMeans(1 - Y[!trt, , drop = FALSE])
  R1 <- -log(S1); R2 <- -log(S2)                                   # (3.1)
  el <- tt - tt[1]; L1 <- R1 - R1[1]; L2 <- R2 - R2[1]
  f <- 2:js
  if (method == "common_dynamics") {
    c_hat <- mean(L1[f] / el[f] - L2[f] / el[f])                   # (3.2), equal weights
    R0 <- R1[1] + L2 + el * c_hat                                  # (3.3)
  } else {
    c_hat <- mean(L1[f] / L2[f])                                   # (2.15) per period, averaged
    R0 <- R1[1] + c_hat * L2                                       # (2.16)
  }
  post <- (js + 1):length(tt)
  tau <- exp(-R0[post]) - S1[post]                                 # (3.4)
  c(mean(tau), tau)
}
hand_route <- function(d, method, B) {
  ids <- sort(unique(d$id)); tt <- sort(unique(d$time))
  Y <- matrix(0, length(ids), length(tt))
  Y[cbind(match(d$id, ids), match(d$time, tt))] <- d$y
  g <- tapply(d$first_treat, d$id, max)[as.character(ids)]
  trt <- g > 0
  js <- max(which(tt < max(g)))
  est <- hand_fit(Y, trt, tt, js, method)
  se <- if (B > 0) apply(vapply(seq_len(B), function(b) {
    i <- sample.int(nrow(Y), replace = TRUE)
    hand_fit(Y[i, , drop = FALSE], trt[i], tt, js, method)
  }, numeric(length(est))), 1, stats::sd) else rep(NA_real_, length(est))
  list(est = est, se = se)
}

cases <- list(
  list(label = "point estimates, 200,000 units x 10 periods, common dynamics", n = 2e5, T = 10, g = 7,
       method = "common_dynamics", B = 0, nboot = 0),
  list(label = "point estimates, 200,000 units x 10 periods, proportional hazards", n = 2e5, T = 10, g = 7,
       method = "proportional_hazards", B = 0, nboot = 0),
  list(label = "standard errors, 20,000 units x 8 periods: bootstrap of individuals (199) vs analytic",
       n = 2e4, T = 8, g = 5, method = "common_dynamics", B = 199, nboot = 0),
  list(label = "standard errors, 20,000 units x 8 periods: bootstrap of individuals (999) vs multiplier (999)",
       n = 2e4, T = 8, g = 5, method = "common_dynamics", B = 999, nboot = 999))
rows <- list()
for (cs in cases) {
  set.seed(1)
  d <- dd_sim_duration(n_units = cs$n, n_periods = cs$T, first_treat = cs$g, method = cs$method,
                       gap = if (cs$method == "common_dynamics") 0.05 else 1.5)
  set.seed(2)
  h <- bench_in_process_median(function() hand_route(d, cs$method, cs$B))
  set.seed(2)
  f <- bench_in_process_median(function() did_duration(d, "y", "id", "time", "first_treat", method = cs$method,
                                                       nboot = cs$nboot))
  diff <- max(abs(f$value$coeftable$estimate - h$value$est))
  stopifnot(diff < 1e-10)
  se_txt <- if (cs$B > 0) sprintf(" (ATT SE: by hand %.5f, diffdiff %.5f)", h$value$se[1], f$value$coeftable$std.error[1]) else ""
  rows[[length(rows) + 1L]] <- data.frame(case = cs$label, peer = "by hand (base R)", peer_s = h$seconds,
                                          diffdiff_s = f$seconds, speedup = h$seconds / f$seconds,
                                          peer_peak_mb = h$mb, diffdiff_peak_mb = f$mb,
                                          mem_ratio = f$mb / h$mb, diff = paste0(format(diff, digits = 3), se_txt))
  cat(cs$label, ": ", sprintf("%.3f s vs %.3f s, diff %s", h$seconds, f$seconds, rows[[length(rows)]]$diff), "\n")
}
res <- do.call(rbind, rows)
jsonlite::write_json(res, file.path(out_dir, "duration.json"), pretty = TRUE, digits = NA)
writeLines(c("# did_duration vs the by-hand plain-R route (Deaner and Ku's equations)", "",
             "The same simulated panels (dd_sim_duration(), seed 1) in one process, one thread. Time: elapsed seconds",
             "(median of 3 calls); memory: R's heap peak above the baseline before the call. diff: the largest",
             "absolute difference of the estimates (ATT and every ATT(t)), checked < 1e-10. The by-hand route's",
             "standard errors come from a bootstrap of individuals (the paper's Algorithm 1); did_duration's from",
             "its influence functions (analytic, or their multiplier bootstrap).", "",
             bench_table_md(res), "",
             sprintf("R %s, diffdiff %s, %s.", getRversion(), utils::packageVersion("diffdiff"), format(Sys.time(), "%Y-%m-%d"))),
           file.path(out_dir, "duration.md"))
