# Coverage of did_2x2(): CR1 clustered intervals (t with G - 1 df) and the
# wild cluster bootstrap (WCR, null imposed, interval by test inversion,
# Rademacher / Webb / Mammen weights, 999 replications) in two clustered
# designs: 2 of 10 clusters treated ("few-treated 2/10") and 5 of 10
# ("balanced 5/10"); 30 units per cluster, two periods, cluster x period
# shocks. Also the heteroskedasticity-robust interval that ignores the
# clustering (HC1, the default without `cluster`). Estimand: the ATT of the
# treated units (tau = 1; the regression's own estimand).
#
# Run: R_LIBS=/tmp/lib-coverage Rscript bench/coverage/twoby2.R

source("bench/coverage/helpers.R")
NBOOT <- 999

one_draw <- function(r) {
  out <- list()
  for (design in c("few-treated 2/10", "balanced 5/10")) {
    d <- draw_cluster(design, r, T = 2, T0 = 1, tau_e = 1)
    truth <- 1
    f0 <- did_2x2(d, "y", "treated", "post")
    t0 <- tab_rows(f0, "ATT")
    out[[length(out) + 1]] <- cov_rows("did_2x2", "HC1 (clustering ignored)", design, "ATT", "ATT", truth,
                                       t0$estimate, t0$conf.low, t0$conf.high, t0$std.error)
    for (bw in c("rademacher", "webb", "mammen")) {
      f <- did_2x2(d, "y", "treated", "post", cluster = "cluster", nboot = NBOOT, boot_weights = bw)
      tb <- tab_rows(f, "ATT")
      if (bw == "rademacher")
        out[[length(out) + 1]] <- cov_rows("did_2x2", "CR1 by cluster, t(G-1)", design, "ATT", "ATT", truth,
                                           tb$estimate, tb$conf.low, tb$conf.high, tb$std.error)
      out[[length(out) + 1]] <- cov_rows("did_2x2", sprintf("wild cluster bootstrap (WCR, %s)", bw), design,
                                         "ATT", "ATT", truth, tb$estimate, tb$boot.conf.low, tb$boot.conf.high,
                                         tb$std.error)
    }
  }
  do.call(rbind, out)
}

st <- cov_study("twoby2", cov_nsim(), one_draw, note = sprintf("wild bootstrap: %d replications", NBOOT))
cov_write(st)
