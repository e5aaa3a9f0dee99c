# Reference numbers for tests/testthat/test-parity-sdid.R from synthdid 0.0.9
# itself (GitHub synth-inference/synthdid; not on CRAN). Install it into a
# private library first, e.g.
#   git clone https://github.com/synth-inference/synthdid && R CMD INSTALL -l /tmp/sdlib synthdid
# then run: Rscript tools/sdid-reference.R /tmp/sdlib
args <- commandArgs(TRUE)
library(synthdid, lib.loc = if (length(args)) args[1] else NULL)
source("tests/testthat/helper-sdid.R")
show <- function(label, x) cat(sprintf("%-28s %s\n", label, paste(formatC(x, digits = 12, format = "g"), collapse = ", ")))
run <- function(d, X = NULL, label) {
  setup <- panel.matrices(d, unit = "unit", time = "time", outcome = "y", treatment = "treat")
  Xa <- if (is.null(X)) array(dim = c(dim(setup$Y), 0)) else {
    # covariates in the same unit and period order as setup$Y
    a <- array(NA_real_, c(dim(setup$Y), length(X)))
    for (k in seq_along(X)) {
      m <- tapply(d[[X[k]]], list(d$unit, d$time), identity)
      a[, , k] <- m[rownames(setup$Y), colnames(setup$Y)]
    }
    a
  }
  cat("##", label, "\n")
  ests <- list(sdid = synthdid_estimate(setup$Y, setup$N0, setup$T0, X = Xa),
               sc = sc_estimate(setup$Y, setup$N0, setup$T0, X = Xa),
               did = did_estimate(setup$Y, setup$N0, setup$T0, X = Xa))
  for (m in names(ests)) {
    e <- ests[[m]]
    show(paste(m, "estimate"), c(e))
    w <- attr(e, "weights")
    if (m == "sdid") { show("sdid lambda", w$lambda); show("sdid omega", w$omega); if (!is.null(w$beta)) show("sdid beta", w$beta) }
    set.seed(12345); show(paste(m, "placebo se"), sqrt(vcov(e, method = "placebo", replications = 50)))
    set.seed(12345); show(paste(m, "bootstrap se"), sqrt(vcov(e, method = "bootstrap", replications = 50)))
    show(paste(m, "jackknife se"), sqrt(vcov(e, method = "jackknife")))
  }
}
run(sim_sdid_panel(), NULL, "panel A: 30 controls, 5 treated, 12 + 6 periods")
run(sim_sdid_panel(N0 = 25, N1 = 4, T0 = 10, T1 = 5, seed = 202, covariates = TRUE), c("x1", "x2"),
    "panel B: 25 controls, 4 treated, 10 + 5 periods, two time-varying covariates")
