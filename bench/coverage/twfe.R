# Coverage of did_twfe() (static two-way fixed effects):
#  * clustered designs (helpers.R): 10 clusters of 30 units, 8 periods,
#    treated clusters adopt at period 5 (2 of 10, or 5 of 10), effects
#    1, 1.2, 1.4, 1.6 at event times 0..3; CR1 by cluster and the wild
#    cluster bootstrap (WCR, Rademacher / Webb / Mammen, 999 replications),
#    and CR1 by unit (ignoring the cluster shocks). Estimand: the average
#    effect over treated post-period observations (1.3).
#  * design "stag" (staggered, heterogeneous effects): CR1 by unit. The
#    estimand is the TWFE coefficient's own weighting of the cell effects
#    (some weights may be negative), computed by applying did_twfe to the
#    noise-free outcome of the draw; coverage of the realised ATT (average
#    effect over treated observations) is reported to show the gap.
#
# Run: R_LIBS=/tmp/lib-coverage Rscript bench/coverage/twfe.R

source("bench/coverage/helpers.R")
NBOOT <- 999
TAU <- c(1, 1.2, 1.4, 1.6)

one_draw <- function(r) {
  out <- list()
  for (design in c("few-treated 2/10", "balanced 5/10")) {
    d <- draw_cluster(design, r, T = 8, T0 = 4, tau_e = TAU)
    truth <- mean(TAU)
    fu <- did_twfe(d, "y", "id", "t", "d")    # clustered by unit (default)
    tu <- tab_rows(fu, "ATT")
    out[[length(out) + 1]] <- cov_rows("did_twfe", "CR1 by unit (cluster shocks ignored)", design, "ATT", "ATT",
                                       truth, tu$estimate, tu$conf.low, tu$conf.high, tu$std.error)
    for (bw in c("rademacher", "webb", "mammen")) {
      f <- did_twfe(d, "y", "id", "t", "d", cluster = "cluster", nboot = NBOOT, boot_weights = bw)
      tb <- tab_rows(f, "ATT")
      if (bw == "rademacher")
        out[[length(out) + 1]] <- cov_rows("did_twfe", "CR1 by cluster, t(G-1)", design, "ATT", "ATT", truth,
                                           tb$estimate, tb$conf.low, tb$conf.high, tb$std.error)
      out[[length(out) + 1]] <- cov_rows("did_twfe", sprintf("wild cluster bootstrap (WCR, %s)", bw), design,
                                         "ATT", "ATT", truth, tb$estimate, tb$boot.conf.low, tb$boot.conf.high,
                                         tb$std.error)
    }
  }
  design <- "stag"
  d <- draw_stagger(design, r)
  f <- did_twfe(d, "y", "id", "t", "d")
  tb <- tab_rows(f, "ATT")
  own <- tab_rows(did_twfe(noise_free(d), "y", "id", "t", "d"), "ATT")$estimate
  att <- mean(d$tau[d$d == 1])
  rbind(do.call(rbind, out),
        cov_rows("did_twfe", "CR1 by unit", design, "TWFE estimand (own weights)", "ATT", own,
                 tb$estimate, tb$conf.low, tb$conf.high, tb$std.error),
        cov_rows("did_twfe", "CR1 by unit", design, "ATT over treated obs. (not its estimand)", "ATT", att,
                 tb$estimate, tb$conf.low, tb$conf.high, tb$std.error))
}

st <- cov_study("twfe", cov_nsim(), one_draw, note = sprintf("wild bootstrap: %d replications", NBOOT))
cov_write(st)
