# bench/dcdh.R: did_dcdh() against DIDmultiplegtDYN::did_multiplegt_dyn() on
# the same data: a reversible panel with three treatment levels, 1,000,
# 2,500 and 5,000 groups x 20 periods, effects = 5, placebo = 3, one time-varying control.
# The CRAN release of DIDmultiplegtDYN (2.4.0) needs the polars package, which
# is not on CRAN; the peer here is 2.2.0 in a private library
# (tools/install-dcdh.sh), given in DCDH_LIB. Each side runs in a fresh R
# process (callr) reporting its time, peak memory (growth of VmHWM after
# /proc/self/clear_refs) and its answer; estimates (1e-8) and SEs (1e-6) are
# checked to agree before anything is recorded. Also times did_dcdh alone on
# 50,000 groups x 20 periods.
# Usage: DCDH_LIB=/tmp/lib-dcdh Rscript bench/dcdh.R [reps]
suppressPackageStartupMessages(library(diffdiff))
args <- commandArgs(TRUE)
reps <- if (length(args) >= 1) as.integer(args[1]) else 3L
lib <- Sys.getenv("DCDH_LIB")
has_peer <- nzchar(lib) && requireNamespace("DIDmultiplegtDYN", lib.loc = lib, quietly = TRUE)
out_dir <- file.path("bench", "results")
dir.create(out_dir, showWarnings = FALSE, recursive = TRUE)
helper <- normalizePath(file.path("bench", "measure.R"))
source(helper)

make_panel <- function(G, TT, seed) {
  set.seed(seed)
  d <- expand.grid(t = seq_len(TT), id = seq_len(G))[, c("id", "t")]
  first <- ifelse(runif(G) < 0.2, Inf, sample(3:(TT - 2), G, TRUE))
  back <- first + ifelse(runif(G) < 0.3, sample(2:5, G, TRUE), Inf)
  lev <- sample(1:2, G, TRUE)
  on <- d$t >= first[d$id] & d$t < back[d$id]
  d$D <- on * lev[d$id]
  d$x <- rnorm(nrow(d)) + d$t / 20
  d$y <- rnorm(G)[d$id] + d$t / 10 + d$D * 0.8 + 0.3 * d$x + rnorm(nrow(d))
  d
}
fresh <- function(rds, side, reps, lib) {
  callr::r(function(rds, side, reps, lib, helper) {
    if (nzchar(lib)) .libPaths(c(lib, .libPaths()))
    options(rgl.useNULL = TRUE)
    suppressPackageStartupMessages(library(diffdiff))
    if (side == "peer") suppressPackageStartupMessages(library(DIDmultiplegtDYN))
    dd_threads(2)
    d <- readRDS(rds)
    run <- if (side == "peer") function() {
      r <- suppressWarnings(did_multiplegt_dyn(d, "y", "id", "t", "D", effects = 5, placebo = 3,
                                               controls = "x", graph_off = TRUE))$results
      m <- rbind(r$Effects, r$Placebos, r$ATE)
      data.frame(term = trimws(rownames(m)), estimate = m[, "Estimate"], se = m[, "SE"])
    } else function() {
      f <- did_dcdh(d, "y", "id", "t", "D", effects = 5, placebo = 3, controls = "x")
      tab <- f$coeftable
      term <- ifelse(tab$term == "ATT", "Av_tot_eff",
                     ifelse(tab$event >= 0, paste0("Effect_", tab$event + 1), paste0("Placebo_", -tab$event - 1)))
      data.frame(term = term, estimate = tab$estimate, se = tab$std.error)
    }
    source(helper)
    bench_measure(run, reps)
  }, args = list(rds = rds, side = side, reps = reps, lib = lib, helper = helper))
}

rows <- list()
rds <- tempfile(fileext = ".rds")
# with the peer at three sizes (DIDmultiplegtDYN takes about a minute at
# 5,000 groups), then diffdiff alone at 50,000 groups
for (G in c(1000, 2500, 5000)) {
  saveRDS(make_panel(G, 20, 1), rds)
  D <- fresh(rds, "dd", reps, "")
  P <- if (has_peer) fresh(rds, "peer", 1L, lib) else list(time = NA_real_, mb = NA_real_, res = NULL)
  diff <- c(est = NA_real_, se = NA_real_)
  if (has_peer) {
    k <- match(P$res$term, D$res$term)
    if (anyNA(k) || nrow(P$res) != nrow(D$res)) { print(P$res); print(D$res); stop("the terms differ") }
    diff <- c(est = max(abs(D$res$estimate[k] / P$res$estimate - 1)), se = max(abs(D$res$se[k] / P$res$se - 1)))
    stopifnot(diff[["est"]] < 1e-8, diff[["se"]] < 1e-6)
  }
  rows[[length(rows) + 1L]] <- data.frame(case = sprintf("%s x 20, 3 levels, effects 5, placebo 3, 1 control",
                                                          format(G, big.mark = ",")),
                                          peer = if (has_peer) "DIDmultiplegtDYN 2.2.0" else "(not installed)",
                                          peer_s = P$time, diffdiff_s = D$time, speedup = P$time / D$time,
                                          peer_peak_mb = P$mb, diffdiff_peak_mb = D$mb, mem_ratio = D$mb / P$mb,
                                          diff = sprintf("%.1e / %.1e", diff[["est"]], diff[["se"]]))
  print(rows[[length(rows)]], digits = 4)
}
saveRDS(make_panel(50000, 20, 2), rds)
B <- fresh(rds, "dd", 1L, "")
rows[[length(rows) + 1L]] <- data.frame(case = "50,000 x 20, 3 levels, effects 5, placebo 3, 1 control (diffdiff alone)",
                                        peer = "-", peer_s = NA_real_, diffdiff_s = B$time, speedup = NA_real_,
                                        peer_peak_mb = NA_real_, diffdiff_peak_mb = B$mb, mem_ratio = NA_real_, diff = "-")
print(rows[[length(rows)]], digits = 4)
res <- do.call(rbind, rows)
meta <- list(date = format(Sys.time(), "%Y-%m-%d %H:%M:%S %Z"), R = R.version.string,
             DIDmultiplegtDYN = if (has_peer) format(packageVersion("DIDmultiplegtDYN", lib.loc = lib)) else NA,
             diffdiff = format(packageVersion("diffdiff")), reps = reps, threads = 2L)
if (requireNamespace("jsonlite", quietly = TRUE))
  writeLines(jsonlite::toJSON(list(meta = meta, results = res), pretty = TRUE, digits = 6, na = "null"),
             file.path(out_dir, "dcdh.json"))
md <- c("# bench/dcdh.R results", "",
        sprintf("%s; %s; DIDmultiplegtDYN %s; diffdiff %s with 2 threads.", meta$date, meta$R,
                meta$DIDmultiplegtDYN, meta$diffdiff), "",
        paste0("Each side in a fresh process: the peer one run, diffdiff the median of ", reps, " runs (the first ",
               "gives the peak memory). speedup = peer time / diffdiff time; mem ratio = diffdiff peak / peer ",
               "peak; diff = max relative difference of the estimates / of the SEs."), "",
        bench_table_md(res))
writeLines(md, file.path(out_dir, "dcdh.md"))
cat(md, sep = "\n")
