# Reference numbers for tests/testthat/test-parity-spillover.R from did2s
# 1.2.1 (installed by tools/install-did2s.sh; did2s itself is not installable
# on R 4.2.2). Rerun from the package root:
#   tools/install-did2s.sh /tmp/did2slib && Rscript tools/spillover-reference.R /tmp/did2slib
# It writes the panel (tests/testthat/spill_panel.csv: units scattered over
# a region, staggered adoption, outcomes with spillovers on nearby untreated
# units) and did2s's estimates and GMM standard errors, with the exposure
# rings computed here by brute force (every pair's haversine distance on a
# 6376 km sphere, fixest's conley() radius), never by diffdiff: Butts's
# two stages are did2s with the clean rows (untreated and beyond the last
# ring) as its untreated sample, and the treatment and ring indicators as
# the second stage. fixest's fixed-effect tolerance is tightened to 1e-11.
lib <- commandArgs(TRUE)[1]
suppressPackageStartupMessages(library(did2s, lib.loc = lib))
fixest::setFixest_estimation(fixef.tol = 1e-11)
set.seed(41)
n <- 300; T <- 7
lat <- 40 + runif(n, -3, 3); lon <- -90 + runif(n, -4, 4)
g <- sample(c(rep(0, 255), rep(c(3, 5), length.out = 45)))
d <- expand.grid(time = seq_len(T), id = seq_len(n))[, c("id", "time")]
d$first_treat <- g[d$id]; d$lat <- round(lat[d$id], 6); d$lon <- round(lon[d$id], 6)
d$x <- round(rnorm(nrow(d)) + d$time / 10, 6)
d$w <- 1 + d$id %% 3
d$state <- d$id %/% 10
D <- d$first_treat > 0 & d$time >= d$first_treat
# distances: every pair (the unit itself excluded)
rad <- pi / 180
la <- round(lat, 6); lo <- round(lon, 6)
hv <- outer(1:n, 1:n, function(i, j) {
  h <- sin((la[j] - la[i]) * rad / 2)^2 + cos(la[i] * rad) * cos(la[j] * rad) * sin((lo[j] - lo[i]) * rad / 2)^2
  12752 * asin(pmin(1, sqrt(h)))
})
diag(hv) <- Inf
near <- vapply(seq_len(nrow(d)), function(r) {
  tr <- which(g > 0 & g <= d$time[r])
  if (length(tr)) min(hv[d$id[r], tr]) else Inf
}, 0)
sp <- ifelse(!D & near < 60, 0.8 * (1 - near / 60), 0)
d$y <- round(rnorm(n)[d$id] + 0.1 * d$time + 0.3 * d$x + D * (1 + 0.2 * (d$time - d$first_treat)) + sp +
               rnorm(nrow(d)), 6)
utils::write.csv(d, "tests/testthat/spill_panel.csv", row.names = FALSE)
d <- utils::read.csv("tests/testthat/spill_panel.csv")     # the numbers as the test reads them
rings <- c(0, 20, 40, 80)
ring <- findInterval(near, rings); ring[near == 80] <- 3; ring[near > 80] <- NA
d$D <- as.numeric(D)
d$notclean <- as.numeric(D | !is.na(ring))
for (j in 1:3) d[[paste0("r", j)]] <- as.numeric(!D & ring %in% j)
d$rel <- ifelse(D, d$time - d$first_treat, Inf)
first <- vapply(seq_len(n), function(i) {
  s <- sort(unique(g[g > 0]))
  hit <- vapply(s, function(gg) min(hv[i, g == gg]) <= 80, TRUE)
  if (any(hit)) s[which(hit)[1]] else NA_real_
}, 0)
d$hexp <- d$time - first[d$id]
for (j in 1:3) d[[paste0("e", j)]] <- ifelse(d[[paste0("r", j)]] == 1, d$hexp, Inf)
st <- ~ D + r1 + r2 + r3
es <- ~ i(rel, ref = Inf) + i(e1, ref = Inf) + i(e2, ref = Inf) + i(e3, ref = Inf)
out <- list(
  static = did2s(d, "y", ~ 0 | id + time, st, "notclean", cluster_var = "id", verbose = FALSE),
  static_cov_w_state = did2s(d, "y", ~ x | id + time, st, "notclean", cluster_var = "state", weights = "w",
                             verbose = FALSE),
  event = did2s(d, "y", ~ 0 | id + time, es, "notclean", cluster_var = "id", verbose = FALSE))
r <- do.call(rbind, lapply(names(out), function(k) {
  ct <- out[[k]]$coeftable
  data.frame(case = k, term = rownames(ct), estimate = ct[, 1], std.error = ct[, 2])
}))
utils::write.csv(r, "tests/testthat/ref-spillover-did2s.csv", row.names = FALSE)
cat(sprintf("%d reference rows from did2s %s written; rows per ring %s\n", nrow(r),
            format(packageVersion("did2s", lib.loc = lib)), paste(table(ring[!D]), collapse = " ")))
