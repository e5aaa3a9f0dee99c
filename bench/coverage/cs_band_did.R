# The did package's own uniform band on the cs_band.R design "cs-30x36"
# (~30 units per cohort, 36 ATT(g,t)): did::att_gt(bstrap = TRUE,
# cband = TRUE, biters = 1000), the same data sets as cs_band.R (same seeds).
# did's bootstrap runs in R, so this script is not part of `make coverage`;
# it runs COVERAGE_DID_NSIM draws (default 500) and writes
# bench/coverage/results/cs_band_did.csv, which report.R includes when present.
#
# Run: R_LIBS=/tmp/lib-coverage Rscript bench/coverage/cs_band_did.R

source("bench/coverage/helpers.R")
if (!requireNamespace("did", quietly = TRUE)) stop("the did package is needed")
source_band <- new.env()
# the design and data of cs_band.R without running it
local({
  ex <- parse("bench/coverage/cs_band.R")
  keep <- vapply(ex, function(e) is.call(e) && identical(e[[1]], as.name("<-")) &&
                   as.character(e[[2]]) %in% c("RHO", "B", "design_band", "band_data"), logical(1))
  for (e in ex[keep]) eval(e, source_band)
})
name <- "cs-30x36"
nsim <- as.integer(Sys.getenv("COVERAGE_DID_NSIM", "500"))

one_draw <- function(r) {
  d <- source_band$band_data(name, r)
  tau <- attr(d, "tau"); coh <- as.numeric(rownames(tau))
  a <- did::att_gt(yname = "y", tname = "t", idname = "id", gname = "g", data = d,
                   control_group = "nevertreated", bstrap = TRUE, biters = 1000, cband = TRUE)
  e <- a$t - a$group
  truth <- ifelse(e >= 0, tau[cbind(match(a$group, coh), pmax(e, 0) + 1L)], 0)
  term <- sprintf("ATT(%s,%s)", a$group, a$t)
  rbind(cov_rows("did::att_gt", "default (did 2.x, biters = 1000)", name, "ATT(g,t)", term, truth, a$att,
                 a$att - a$c * a$se, a$att + a$c * a$se, a$se, band = TRUE),
        cov_rows("did::att_gt", "critical value", name, "diagnostic", "did", NA, a$c, NA, NA))
}

st <- cov_study("cs_band_did", nsim, one_draw, note = sprintf("did %s, biters = 1000", utils::packageVersion("did")))
cov_write(st)
