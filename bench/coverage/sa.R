# Coverage of did_sa() (Sun-Abraham): event-time effects, leads and the
# overall ATT, clustered by unit (the default), design "stag".
#
# did_sa weights cohorts by their REALISED shares of the observations at each
# relative period, and its delta-method standard error treats those shares
# as fixed: it targets the realised-share average of tau(g, e). Coverage of
# the population-share average (the DGP's cohort probabilities) is reported
# alongside.
#
# Run: R_LIBS=/tmp/lib-coverage Rscript bench/coverage/sa.R

source("bench/coverage/helpers.R")
design <- "stag"

one_draw <- function(r) {
  d <- draw_stagger(design, r)
  sh <- cohort_shares(d)
  fit <- did_sa(d, "y", "id", "t", "g")
  tab <- fit$coeftable
  event_rows("did_sa", "CR1 by unit", design, tab,
             list(`realised shares` = event_truths(d, tab$term, sh$real),
                  `population shares` = event_truths(d, tab$term, sh$pop)))
}

st <- cov_study("sa", cov_nsim(), one_draw)
cov_write(st)
