# Coverage of did_bjs() (imputation, Borusyak-Jaravel-Spiess): horizons,
# pre-trend leads and the overall ATT, clustered by unit, design "stag".
#
# Each estimate averages the treated observations at its horizon, so cohorts
# enter with their REALISED shares; the conservative variance of Theorem 3
# takes the treated residuals around the cohort x horizon means, i.e. it
# conditions on the realised cohort composition: it targets the
# realised-share average. Coverage of the population-share average is
# reported alongside.
#
# Run: R_LIBS=/tmp/lib-coverage Rscript bench/coverage/bjs.R

source("bench/coverage/helpers.R")
design <- "stag"

one_draw <- function(r) {
  d <- draw_stagger(design, r)
  sh <- cohort_shares(d)
  fit <- did_bjs(d, "y", "id", "t", "g")
  tab <- fit$coeftable
  event_rows("did_bjs", "BJS conservative SE", design, tab,
             list(`realised shares` = event_truths(d, tab$term, sh$real),
                  `population shares` = event_truths(d, tab$term, sh$pop)))
}

st <- cov_study("bjs", cov_nsim(), one_draw)
cov_write(st)
