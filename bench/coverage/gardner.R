# Coverage of did_gardner() (two-stage DiD): horizons, leads and the overall
# ATT with the GMM-corrected clustered standard errors (did2s's), design
# "stag".
#
# The point estimates equal did_bjs's (realised-share averages), but the
# second-stage scores are the treated residuals around the horizon's single
# coefficient, so the variation of the cohort composition enters the
# variance: the GMM standard error targets the POPULATION-share average.
# Coverage of the realised-share average is reported alongside.
#
# Run: R_LIBS=/tmp/lib-coverage Rscript bench/coverage/gardner.R

source("bench/coverage/helpers.R")
design <- "stag"

one_draw <- function(r) {
  d <- draw_stagger(design, r)
  sh <- cohort_shares(d)
  fit <- did_gardner(d, "y", "id", "t", "g")
  tab <- fit$coeftable
  event_rows("did_gardner", "GMM-corrected SE", design, tab,
             list(`population shares` = event_truths(d, tab$term, sh$pop),
                  `realised shares` = event_truths(d, tab$term, sh$real)))
}

st <- cov_study("gardner", cov_nsim(), one_draw)
cov_write(st)
