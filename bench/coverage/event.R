# Coverage of did_event() (dynamic TWFE event study, reference -1):
#  * design "stag" (staggered, heterogeneous effects), CR1 by unit. The
#    estimand of each coefficient is the regression's own weighting of the
#    cell effects (contaminated by other cohorts' effects when effects
#    differ by cohort), computed by applying did_event to the noise-free
#    outcome of the draw; coverage of the realised-share ATT(e) is
#    reported to show the gap.
#  * design "few-treated 2/10" (common adoption at period 5 in 2 of 10
#    clusters, 8 periods): CR1 by cluster and the wild cluster bootstrap
#    (WCR, Rademacher, 999 replications, run for every coefficient) on half
#    the draws (it costs about 0.3 s a draw). Estimand: the effect at each
#    event time (0 before adoption).
#
# Run: R_LIBS=/tmp/lib-coverage Rscript bench/coverage/event.R

source("bench/coverage/helpers.R")
NBOOT <- 999
TAU <- c(1, 1.2, 1.4, 1.6)
WILD_EVERY <- 2     # the wild bootstrap on every 2nd draw

one_draw <- function(r) {
  design <- "stag"
  d <- draw_stagger(design, r)
  sh <- cohort_shares(d)
  tab <- did_event(d, "y", "id", "t", "g")$coeftable
  own <- did_event(noise_free(d), "y", "id", "t", "g")$coeftable
  own <- stats::setNames(own$estimate[match(tab$term, own$term)], tab$term)
  out <- list(event_rows("did_event", "CR1 by unit", design, tab,
                         list(`TWFE estimand (own weights)` = own,
                              `realised-share ATT(e) (not its estimand)` = event_truths(d, tab$term, sh$real))))
  if (r %% WILD_EVERY == 0) {
    design <- "few-treated 2/10"
    d <- draw_cluster(design, r, T = 8, T0 = 4, tau_e = TAU)
    d$g <- ifelse(d$treated == 1, 5, 0)
    f <- did_event(d, "y", "id", "t", "g", cluster = "cluster", nboot = NBOOT)
    tb <- f$coeftable
    truth <- stats::setNames(ifelse(tb$event >= 0, TAU[pmax(tb$event, 0) + 1], 0), tb$term)
    out <- c(out, list(event_rows("did_event", "CR1 by cluster, t(G-1)", design, tb, list(`ATT(e)` = truth)),
                       event_rows("did_event", "wild cluster bootstrap (WCR, rademacher)", design, tb,
                                  list(`ATT(e)` = truth), lo = tb$boot.conf.low, hi = tb$boot.conf.high)))
  }
  do.call(rbind, out)
}

st <- cov_study("event", cov_nsim(), one_draw,
                note = sprintf("few-treated design on every draw r divisible by %d; wild bootstrap: %d replications", WILD_EVERY, NBOOT))
cov_write(st)
