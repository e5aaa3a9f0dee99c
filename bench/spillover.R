# bench/spillover.R: did_spillover() against the recipe an applied user has
# without it, in one R process on the same data: each unit's distance to the
# nearest unit treated by each period in R (haversine on fixest's 6376 km
# sphere, units against each cohort's units in blocks), the ring
# indicators, then did2s::did2s() with the clean rows as its untreated
# sample and the treatment and ring indicators as the second stage
# (GMM-corrected SEs clustered by unit). 20,000 units x 10 periods,
# 1,000 treated units in 3 cohorts, rings (0, 10, 20, 40) km. Checks the
# estimates (1e-8) and SEs (1e-6 relative); writes time and memory ratios to
# bench/results/spillover.{json,md}.
# did2s is not installable on R 4.2.2 from CRAN (HonestDiD -> CVXR): give the
# library made by tools/install-did2s.sh in DID2S_LIB.
# Usage: DID2S_LIB=/tmp/did2slib Rscript bench/spillover.R [units]
lib <- Sys.getenv("DID2S_LIB")
if (!nzchar(lib)) stop("set DID2S_LIB to the library of tools/install-did2s.sh")
suppressPackageStartupMessages({ library(diffdiff); library(did2s, lib.loc = lib) })
fixest::setFixest_nthreads(1)
fixest::setFixest_estimation(fixef.tol = 1e-11)
out_dir <- file.path("bench", "results")
dir.create(out_dir, showWarnings = FALSE, recursive = TRUE)
a <- commandArgs(TRUE)
n <- if (length(a) >= 1) as.integer(a[1]) else 20000L
T <- 10L
rings <- c(0, 10, 20, 40)
set.seed(1)
lat <- stats::runif(n, 30, 45); lon <- stats::runif(n, -110, -85)
g <- sample(c(rep(0, n - 1000), rep(c(4, 6, 8), length.out = 1000)))
d <- data.frame(id = rep(seq_len(n), each = T), time = rep(seq_len(T), n))
d$first_treat <- g[d$id]; d$lat <- lat[d$id]; d$lon <- lon[d$id]
d$D <- as.integer(d$first_treat > 0 & d$time >= d$first_treat)
d$y <- stats::rnorm(n)[d$id] + 0.1 * d$time + d$D + stats::rnorm(n * T)

recipe_seconds <- c(distances = NA, did2s = NA)
recipe <- function(d) {
  t0 <- proc.time()[["elapsed"]]
  u <- d[!duplicated(d$id), ]
  starts <- sort(unique(u$first_treat[u$first_treat > 0]))
  r <- pi / 180
  # each unit's distance to the nearest unit of each cohort, in blocks of units
  Dm <- matrix(Inf, nrow(u), length(starts))
  for (j in seq_along(starts)) {
    tj <- which(u$first_treat == starts[j])
    for (b in split(seq_len(nrow(u)), ceiling(seq_len(nrow(u)) / 2000))) {
      h <- sin(outer(u$lat[b], u$lat[tj], function(x, y) (y - x) * r / 2))^2 +
        outer(cos(u$lat[b] * r), cos(u$lat[tj] * r)) * sin(outer(u$lon[b], u$lon[tj], function(x, y) (y - x) * r / 2))^2
      dd <- 12752 * asin(pmin(sqrt(h), 1))
      dd[outer(u$id[b], u$id[tj], "==")] <- Inf
      Dm[b, j] <- apply(dd, 1, min)
    }
  }
  for (j in seq_along(starts)[-1]) Dm[, j] <- pmin(Dm[, j], Dm[, j - 1])
  k <- findInterval(d$time, starts)
  near <- ifelse(k > 0, Dm[cbind(match(d$id, u$id), pmax(k, 1))], Inf)
  ring <- findInterval(near, rings); ring[near == max(rings)] <- length(rings) - 1; ring[near > max(rings)] <- NA
  d$notclean <- as.integer(d$D == 1 | !is.na(ring))
  for (j in seq_len(length(rings) - 1)) d[[paste0("r", j)]] <- as.integer(d$D == 0 & ring %in% j)
  t1 <- proc.time()[["elapsed"]]
  m <- did2s::did2s(d, "y", ~ 0 | id + time, ~ D + r1 + r2 + r3, "notclean", cluster_var = "id", verbose = FALSE)
  recipe_seconds <<- c(distances = t1 - t0, did2s = proc.time()[["elapsed"]] - t1)
  m
}

source(file.path("bench", "measure.R"))
measure <- bench_in_process
peer <- measure(recipe(d))
ours <- measure(did_spillover(d, "y", "id", "time", "first_treat", rings = rings))
pc <- peer$value$coeftable
res <- list(data = sprintf("%d units x %d periods, 1000 treated in 3 cohorts, rings %s km", n, T,
                           paste(rings, collapse = ", ")),
            peer_seconds = peer$seconds, diffdiff_seconds = ours$seconds, time_ratio = peer$seconds / ours$seconds,
            peer_mb = peer$mb, diffdiff_mb = ours$mb, memory_ratio = peer$mb / ours$mb,
            diff_estimate = max(abs(ours$value$coeftable$estimate - pc[, 1])),
            rel_diff_se = max(abs(ours$value$coeftable$std.error / pc[, 2] - 1)),
            peer_distance_seconds = recipe_seconds[["distances"]], peer_did2s_seconds = recipe_seconds[["did2s"]],
            ratio_did2s_alone = recipe_seconds[["did2s"]] / ours$seconds,
            ring_rows = as.list(ours$value$ring_rows))
stopifnot(res$diff_estimate < 1e-8, res$rel_diff_se < 1e-6)
if (requireNamespace("jsonlite", quietly = TRUE))
  writeLines(jsonlite::toJSON(res, auto_unbox = TRUE, pretty = TRUE, digits = 6), file.path(out_dir, "spillover.json"))
md <- c("# Spillover DiD: did_spillover vs distances in R + did2s", "",
        sprintf("Data: %s; same R process, did2s %s (fixest %s on 1 thread).", res$data,
                utils::packageVersion("did2s", lib.loc = lib), utils::packageVersion("fixest")), "",
        "| | R recipe + did2s | diffdiff | ratio |", "|---|---|---|---|",
        sprintf("| time (s) | %.2f | %.2f | %.1fx |", res$peer_seconds, res$diffdiff_seconds, res$time_ratio),
        sprintf("| R heap peak above baseline (MB) | %.0f | %.0f | %.2fx |", res$peer_mb, res$diffdiff_mb, res$memory_ratio), "",
        sprintf("The recipe's time: %.2f s for the distances in R, %.2f s for did2s (with fixest's fixed-effect tolerance at 1e-11, as tools/spillover-reference.R); did2s alone is %.1fx did_spillover's time.",
                res$peer_distance_seconds, res$peer_did2s_seconds, res$ratio_did2s_alone), "",
        sprintf("Agreement: largest estimate difference %.2g, largest relative SE difference %.2g.", res$diff_estimate,
                res$rel_diff_se))
writeLines(md, file.path(out_dir, "spillover.md"))
cat(md, sep = "\n")
