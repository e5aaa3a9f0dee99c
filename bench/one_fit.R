# bench/one_fit.R: one fit of a regression or staggered estimator on a
# 20,000-unit x 12-period panel (240,000 rows, one covariate, unit-constant
# weights for did_sa/did_bjs), for whole-process timings of two builds
# (e.g. before and after a refactor, each in its own library):
#   R_LIBS=/path/to/lib Rscript bench/one_fit.R twfe|event|sa|bjs|cs
# Results of the issue-14 comparison: bench/results/one_fit.md.
args <- commandArgs(TRUE); which <- args[1]
suppressPackageStartupMessages(library(diffdiff)); dd_threads(2)
set.seed(1); n <- 20000; T <- 12
g <- sample(c(0, 4:11), n, TRUE)
d <- data.frame(id = rep(1:n, each = T), t = rep(1:T, n)); d$g <- g[d$id]
d$x1 <- rnorm(nrow(d)); d$w <- runif(n, 0.5, 2)[d$id]
d$y <- rnorm(n)[d$id] + 0.1 * d$t + 0.2 * d$x1 + ifelse(d$g > 0 & d$t >= d$g, 1, 0) + rnorm(nrow(d))
d$d <- as.integer(d$g > 0 & d$t >= d$g)
f <- switch(which,
  twfe = did_twfe(d, "y", "id", "t", "d", xformla = ~ x1),
  event = did_event(d, "y", "id", "t", "g", xformla = ~ x1),
  sa = did_sa(d, "y", "id", "t", "g", xformla = ~ x1, weightsname = "w"),
  bjs = did_bjs(d, "y", "id", "t", "g", xformla = ~ x1, weightsname = "w"),
  cs = did_cs(d, "y", "t", "id", "g", nboot = 999))
cat(which, sum(f$coeftable$estimate), "\n")
