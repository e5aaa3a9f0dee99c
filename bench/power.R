# bench/power.R: simulated power of did_cs() (simple aggregation) with 1,000
# draws of dd_sim_staggered(500 units x 10 periods, 4 cohorts and never
# treated, AR(1) errors), with 1 and 2 processes (the draws must be
# identical), against the same loop with did::att_gt() + aggte() (the peer:
# timed on the first `peer_draws` draws, the same panels, estimates checked
# to 1e-8, and scaled to 1,000). Target: under 10 s for 1,000 draws.
# Usage: Rscript bench/power.R [nsim] [peer_draws]
suppressPackageStartupMessages(library(diffdiff))
args <- commandArgs(TRUE)
nsim <- if (length(args) >= 1) as.integer(args[1]) else 1000L
peer_draws <- if (length(args) >= 2) as.integer(args[2]) else 50L
out_dir <- file.path("bench", "results")
dir.create(out_dir, showWarnings = FALSE, recursive = TRUE)
dgp_args <- list(n_units = 500, n_periods = 10, rho = 0.5)
est <- function(d) aggregate(did_cs(d, "y", "id", "time", "first_treat"), type = "simple")
run <- function(cores) {
  set.seed(2026)
  t0 <- proc.time()[["elapsed"]]
  r <- dd_simulate_power(est, dd_sim_staggered, effect_sizes = 0.1, nsim = nsim, dgp_args = dgp_args, cores = cores)
  list(time = proc.time()[["elapsed"]] - t0, res = r)
}
r1 <- run(1L); r2 <- run(2L)
stopifnot(identical(r1$res$power, r2$res$power), identical(r1$res$mean_estimate, r2$res$mean_estimate))
# the peer on the first draws' panels (the same seeds as dd_simulate_power)
peer <- NULL
if (requireNamespace("did", quietly = TRUE)) {
  set.seed(2026)
  seeds <- sample.int(.Machine$integer.max, nsim)[seq_len(peer_draws)]
  dd_t <- did_t <- 0; diff <- 0
  for (s in seeds) {
    set.seed(s); d <- do.call(dd_sim_staggered, c(list(effect = 0.1), dgp_args))
    t0 <- proc.time()[["elapsed"]]; a <- est(d)$coeftable$estimate; dd_t <- dd_t + proc.time()[["elapsed"]] - t0
    t0 <- proc.time()[["elapsed"]]
    b <- suppressWarnings(did::aggte(did::att_gt("y", "time", "id", "first_treat", data = d, bstrap = FALSE,
                                                 cband = FALSE), type = "simple", bstrap = FALSE)$overall.att)
    did_t <- did_t + proc.time()[["elapsed"]] - t0
    diff <- max(diff, abs(a - b))
  }
  stopifnot(diff < 1e-8)
  peer <- list(per_draw_dd = dd_t / peer_draws, per_draw_did = did_t / peer_draws, diff = diff)
}
md <- c("# bench/power.R results", "",
        sprintf("%s; %s; diffdiff %s%s.", format(Sys.time(), "%Y-%m-%d %H:%M:%S %Z"), R.version.string,
                packageVersion("diffdiff"), if (!is.null(peer)) sprintf("; did %s", packageVersion("did")) else ""), "",
        sprintf("dd_simulate_power(): %d draws of dd_sim_staggered(500 units x 10 periods), did_cs + simple aggregation, effect 0.1: power %.3f (MC SE %.3f).",
                nsim, r1$res$power, r1$res$mc_se), "",
        "| processes | seconds | identical draws |", "|---|---|---|",
        sprintf("| 1 | %.2f | reference |", r1$time), sprintf("| 2 | %.2f | yes |", r2$time), "",
        if (!is.null(peer))
          sprintf("Peer on the first %d draws' panels (one fit per draw, no bootstrap): did::att_gt + aggte %.1f ms per draw, diffdiff %.1f ms (%.0fx); the same estimates (max difference %.1e). 1,000 draws with did: about %.0f s.",
                  peer_draws, 1000 * peer$per_draw_did, 1000 * peer$per_draw_dd, peer$per_draw_did / peer$per_draw_dd,
                  peer$diff, 1000 * peer$per_draw_did) else "did not installed: no peer timing.")
writeLines(md, file.path(out_dir, "power.md"))
cat(md, sep = "\n")
