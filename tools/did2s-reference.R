# Reference numbers for tests/testthat/test-parity-gardner.R from did2s 1.2.1
# (installed by tools/install-did2s.sh; did2s itself is not installable on
# R 4.2.2). Rerun from the package root:
#   tools/install-did2s.sh /tmp/did2slib && Rscript tools/did2s-reference.R /tmp/did2slib
# fixest's fixed-effect tolerance is tightened to 1e-11 (did2s's first stage
# uses fixest's default 1e-6, which moves its estimates by ~5e-8).
lib <- commandArgs(TRUE)[1]
suppressPackageStartupMessages({library(did2s, lib.loc = lib); library(didimputation)})
fixest::setFixest_estimation(fixef.tol = 1e-11)
data("df_het", package = "didimputation")
d <- as.data.frame(df_het)
set.seed(7); d$x <- rnorm(nrow(d)) + d$year / 100; d$y2 <- d$dep_var + 0.5 * d$x; d$w <- 1 + d$unit %% 3
d$treat <- d$g > 0 & d$year >= d$g
d$rel <- ifelse(d$g > 0, d$year - d$g, Inf)
sp <- read.csv("inst/extdata/sim_panel.csv")
sp$D <- sp$first_treat > 0 & sp$year >= sp$first_treat
sp$rel <- ifelse(sp$first_treat > 0, sp$year - sp$first_treat, Inf)
es <- ~ i(rel, ref = c(-1, Inf))
out <- list(
  het_static = did2s(d, "dep_var", ~ 0 | unit + year, ~ i(treat, ref = FALSE), "treat", cluster_var = "unit"),
  het_event = did2s(d, "dep_var", ~ 0 | unit + year, es, "treat", cluster_var = "unit"),
  het_static_cov_state = did2s(d, "y2", ~ x | unit + year, ~ i(treat, ref = FALSE), "treat", cluster_var = "state"),
  het_event_cov_state = did2s(d, "y2", ~ x | unit + year, es, "treat", cluster_var = "state"),
  het_static_w = did2s(d, "dep_var", ~ 0 | unit + year, ~ i(treat, ref = FALSE), "treat", cluster_var = "unit",
                       weights = "w"),
  het_event_w = did2s(d, "dep_var", ~ 0 | unit + year, es, "treat", cluster_var = "unit", weights = "w"),
  sim_static_w_cov = did2s(sp, "y", ~ x1 | id + year, ~ i(D, ref = FALSE), "D", cluster_var = "id", weights = "w"),
  sim_event_w_cov = did2s(sp, "y", ~ x1 | id + year, es, "D", cluster_var = "id", weights = "w"))
r <- do.call(rbind, lapply(names(out), function(k) {
  ct <- out[[k]]$coeftable
  data.frame(case = k, term = rownames(ct), estimate = ct[, 1], std.error = ct[, 2])
}))
utils::write.csv(r, "tests/testthat/ref-did2s.csv", row.names = FALSE)
cat(sprintf("%d reference rows from did2s %s written\n", nrow(r), format(packageVersion("did2s", lib.loc = lib))))
