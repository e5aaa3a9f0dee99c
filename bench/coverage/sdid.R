# Coverage of did_sdid() (synthetic DiD, block design): the placebo,
# bootstrap and jackknife standard errors (synthdid's vcov() methods; normal
# intervals), 200 replications for placebo and bootstrap (the default).
#
# Designs (helpers.R): a two-factor model with AR(1) errors, 40 controls and
# 5 treated units, 20 pre- and 5 post-periods; "factor-edge" puts the treated
# units' loadings at the controls' 95% quantile in both factors (at the edge
# of the controls' loadings, where no convex combination of controls
# reproduces them), "factor-interior" draws them like the controls'.
# Estimand: the ATT of the treated units over the post periods (tau = 1).
#
# Placebo and bootstrap re-solve the weights 200 times per draw (about 0.25 s
# each), so this script runs 0.4 x COVERAGE_NSIM draws per design (800 by
# default).
#
# Run: R_LIBS=/tmp/lib-coverage Rscript bench/coverage/sdid.R

source("bench/coverage/helpers.R")
FRAC <- 0.4
NBOOT <- 200

one_draw <- function(r) {
  out <- list()
  for (design in c("factor-edge", "factor-interior")) {
    d <- draw_factor(design, r)
    truth <- attr(d, "att")
    for (se in c("placebo", "bootstrap", "jackknife")) {
      f <- did_sdid(d, "y", "id", "t", "d", se = se, nboot = NBOOT)
      tb <- tab_rows(f, "ATT")
      out[[length(out) + 1]] <- cov_rows("did_sdid", sprintf("%s SE, normal", se), design, "ATT (treated, post)",
                                         "ATT", truth, tb$estimate, tb$conf.low, tb$conf.high, tb$std.error)
    }
  }
  do.call(rbind, out)
}

st <- cov_study("sdid", cov_nsim(FRAC), one_draw,
                note = sprintf("%d replications (placebo, bootstrap); draws = COVERAGE_NSIM x %g", NBOOT, FRAC))
cov_write(st)
