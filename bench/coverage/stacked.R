# Coverage of did_stacked() (Wing, Freedman and Hollingsworth): event-time
# effects, the lead and the overall ATT (mean of the post event times), the
# paper's specification (treated and event-time effects, corrective weights,
# CR1 by unit), kappa_pre = kappa_post = 2.
#
# delta_e weights the sub-experiments by their REALISED treated counts; the
# regression pools all sub-experiments in one set of event-time effects, so
# calendar effects and treatment effects that differ across sub-experiments
# stay in the residuals. Designs (helpers.R): "stag" (effects, calendar
# trends and levels differ across sub-experiments), "stag-calendar" (only
# trends and levels differ), "stag-effects" (only effects differ) and
# "stag-homog" (none differ). Coverage of both the realised- and the
# population-share averages.
#
# Run: R_LIBS=/tmp/lib-coverage Rscript bench/coverage/stacked.R

source("bench/coverage/helpers.R")
KPRE <- 2; KPOST <- 2

one_draw <- function(r) {
  out <- list()
  for (design in c("stag", "stag-calendar", "stag-effects", "stag-homog")) {
    d <- draw_stagger(design, r)
    sh <- cohort_shares(d)
    fit <- did_stacked(d, "y", "id", "t", "g", kappa_pre = KPRE, kappa_post = KPOST)
    tab <- fit$coeftable
    kept <- fit$cohorts$cohort[fit$cohorts$kept]
    tr <- function(w) event_truths(d, tab$term, w, cohorts = kept, att = "mean_e", emax = KPOST)
    out[[design]] <- event_rows("did_stacked", "CR1 by unit", design, tab,
                                list(`realised shares` = tr(sh$real), `population shares` = tr(sh$pop)))
  }
  do.call(rbind, out)
}

st <- cov_study("stacked", cov_nsim(), one_draw)
cov_write(st)
