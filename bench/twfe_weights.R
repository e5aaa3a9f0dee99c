# bench/twfe_weights.R: twfe_weights() against TwoWayFEWeights::twowayfeweights()
# (CRAN 2.1.0) on the same data: a staggered panel with reversals, 1,000,
# 5,000 and 20,000 units x 20 periods (20,000 to 400,000 rows), types feTR,
# feS, fdTR, fdS (the fd types get the peer its differenced columns, formed
# before timing). Each side runs in a fresh R process (callr) per case,
# reporting its time, peak memory (growth of VmHWM after
# /proc/self/clear_refs) and its answer; the cell weights and beta are
# checked to agree (1e-8) before anything is recorded.
# Usage: Rscript bench/twfe_weights.R [reps]   (reps: diffdiff runs; median)
suppressPackageStartupMessages(library(diffdiff))
args <- commandArgs(TRUE)
reps <- if (length(args) >= 1) as.integer(args[1]) else 3L
out_dir <- file.path("bench", "results")
dir.create(out_dir, showWarnings = FALSE, recursive = TRUE)
helper <- normalizePath(file.path("bench", "measure.R"))

make_panel <- function(N, T = 20) {
  set.seed(42)
  d <- expand.grid(id = seq_len(N), t = seq_len(T))
  g <- sample(c(0, 4, 8, 12, 16), N, TRUE)
  d$D <- as.numeric(g[d$id] > 0 & d$t >= g[d$id])
  d$D[d$id %% 9 == 0 & d$t >= 18] <- 0                                   # reversals
  d$y <- rnorm(nrow(d)) + d$D * (1 + (d$id %% 5) / 2) + d$t / 10
  d <- d[order(d$id, d$t), ]
  lag <- function(v) ave(v, d$id, FUN = function(z) c(NA, diff(z)))
  d$dy <- lag(d$y); d$dD <- lag(d$D)
  d
}
sizes <- c(1000, 5000, 20000); T <- 20
rds <- tempfile(fileext = ".rds")

fresh <- function(type, side, reps) {
  callr::r(function(rds, type, side, reps, helper) {
    suppressPackageStartupMessages(library(diffdiff))
    if (side == "peer") suppressPackageStartupMessages(library(TwoWayFEWeights))
    dd_threads(2)
    d <- readRDS(rds)
    run <- if (side == "peer") function() {
      fd <- type %in% c("fdTR", "fdS")
      utils::capture.output(r <- suppressWarnings(suppressMessages(twowayfeweights(
        d, if (fd) "dy" else "y", "id", "t", if (fd) "dD" else "D", type = type, D0 = if (type == "fdTR") "D",
        summary_measures = TRUE))))
      data.frame(G = r$dat_result$G, T = r$dat_result$T, w = r$dat_result$weight, beta = r$beta)
    } else function() {
      r <- twfe_weights(d, "y", "id", "t", "D", type = type)
      data.frame(G = r$weights$id, T = r$weights$t, w = r$weights$weight, beta = r$beta)
    }
    source(helper)
    bench_measure(run, reps)
  }, args = list(rds = rds, type = type, side = side, reps = reps, helper = helper))
}

res <- list()
for (N in sizes) {
  saveRDS(make_panel(N, T), rds)
  for (type in c("feTR", "feS", "fdTR", "fdS")) {
    P <- fresh(type, "peer", 1L)
    D <- fresh(type, "dd", reps)
    k <- match(paste(P$res$G, P$res$T), paste(D$res$G, D$res$T))
    stopifnot(!anyNA(k), nrow(P$res) == nrow(D$res))
    diff <- max(abs(P$res$w - D$res$w[k]), abs(P$res$beta[1] - D$res$beta[1]))
    stopifnot(diff < 1e-8)
    row <- data.frame(type = type, cells = nrow(P$res), peer_s = P$time, diffdiff_s = D$time,
                      speedup = P$time / D$time, peer_peak_mb = P$mb, diffdiff_peak_mb = D$mb,
                      mem_ratio = D$mb / P$mb, diff = diff)
    print(row, digits = 4)
    res[[length(res) + 1L]] <- row
  }
}
res <- do.call(rbind, res)
ver <- function(p) tryCatch(format(packageVersion(p)), error = function(e) NA)
meta <- list(date = format(Sys.time(), "%Y-%m-%d %H:%M:%S %Z"), R = R.version.string,
             TwoWayFEWeights = ver("TwoWayFEWeights"), diffdiff = ver("diffdiff"), reps = reps, threads = 2L,
             data = sprintf("%s units x %d periods, staggered with reversals", paste(format(sizes, big.mark = ","), collapse = ", "), T))
if (requireNamespace("jsonlite", quietly = TRUE))
  writeLines(jsonlite::toJSON(list(meta = meta, results = res), pretty = TRUE, digits = 6, na = "null"),
             file.path(out_dir, "twfe_weights.json"))
md <- c("# bench/twfe_weights.R results", "",
        sprintf("%s; %s; TwoWayFEWeights %s; diffdiff %s with 2 threads; %s.", meta$date, meta$R,
                meta$TwoWayFEWeights, meta$diffdiff, meta$data), "",
        paste0("Each side in a fresh process: the peer one run, diffdiff the median of ", reps, " runs ",
               "(the first in a fresh process gives the peak memory). speedup = peer time / diffdiff time; ",
               "mem ratio = diffdiff peak / peer peak; diff = max |difference| of the cell weights and beta."), "",
        "| type | cells | peer s | diffdiff s | speedup | peer MB | diffdiff MB | mem ratio | diff |",
        "|---|---|---|---|---|---|---|---|---|",
        sprintf("| %s | %d | %.3f | %.3f | %.1fx | %.1f | %.1f | %.3f | %.1e |", res$type, res$cells, res$peer_s,
                res$diffdiff_s, res$speedup, res$peer_peak_mb, res$diffdiff_peak_mb, res$mem_ratio, res$diff))
writeLines(md, file.path(out_dir, "twfe_weights.md"))
cat(md, sep = "\n")
