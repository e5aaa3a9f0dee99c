# bench/honest.R: the diagnostics against their peers on the same inputs.
#   honest_did, Delta^RM by C-LF, Mbar in {0.5, 1, 1.5, 2}, default grid (1000
#     points), first post period  vs HonestDiD::createSensitivityResults_relativeMagnitudes
#   honest_did, Delta^SD FLCI over 10 values of M (0 to 0.04), l = e17
#     vs HonestDiD::createSensitivityResults(method = "FLCI")
#   both on HonestDiD's LW event study (9 pre, 23 post periods; inst/extdata)
#   bacon_decomp on castle  vs bacondecomp::bacon (CRAN)
# HonestDiD 0.2.8 is on CRAN but imports CVXR, which CRAN does not provide for
# R 4.2.2; give a library where it is installed in HONESTDID_LIB (see
# tools/install-honestdid.sh); without it the HonestDiD rows time diffdiff alone.
# Each peer runs once per case in a fresh R process (callr) reporting time,
# peak memory and its answer; diffdiff's time is the median of `reps` runs
# here, its memory one run in a fresh process (growth of VmHWM after
# /proc/self/clear_refs). Answers are checked before anything is recorded.
# Usage: HONESTDID_LIB=/tmp/honestlib [PEER_TIMEOUT=s] Rscript bench/honest.R [reps]
suppressPackageStartupMessages(library(diffdiff))
args <- commandArgs(TRUE)
reps <- if (length(args) >= 1) as.integer(args[1]) else 5L
hd_lib <- Sys.getenv("HONESTDID_LIB")
has_hd <- nzchar(hd_lib) && requireNamespace("HonestDiD", lib.loc = hd_lib, quietly = TRUE)
peer_timeout <- as.numeric(Sys.getenv("PEER_TIMEOUT", "3600"))
out_dir <- file.path("bench", "results")
dir.create(out_dir, showWarnings = FALSE, recursive = TRUE)
dd_threads(2)

source(file.path("tests", "testthat", "helper-honest.R"))   # read_event_study()
read_es <- function(name)
  read_event_study(system.file("extdata", paste0("honestdid_", name, "_event_study.txt"), package = "diffdiff"))
lw <- read_es("lw")
data("castle", package = "bacondecomp", envir = environment())
inputs <- list(lw = lw, castle = castle)

Mbar <- c(0.5, 1, 1.5, 2)
Mvec <- seq(0, 0.04, length.out = 10)
runners <- list(
  rm = list(
    peer = function(x) {
      lw <- x$lw
      r <- HonestDiD::createSensitivityResults_relativeMagnitudes(
        betahat = lw$b, sigma = lw$S, numPrePeriods = lw$K, numPostPeriods = lw$P, Mbarvec = c(0.5, 1, 1.5, 2))
      data.frame(M = r$Mbar, lb = r$lb, ub = r$ub)
    },
    dd = function(x) {
      lw <- x$lw
      r <- diffdiff::honest_did(betahat = lw$b, sigma = lw$S, num_pre = lw$K, type = "RM",
                                Mbar = c(0.5, 1, 1.5, 2), breakdown = FALSE)$results
      data.frame(M = r$Mbar, lb = r$lb, ub = r$ub)
    }),
  flci = list(
    peer = function(x) {
      lw <- x$lw
      r <- HonestDiD::createSensitivityResults(
        betahat = lw$b, sigma = lw$S, numPrePeriods = lw$K, numPostPeriods = lw$P, method = "FLCI",
        Mvec = seq(0, 0.04, length.out = 10), l_vec = HonestDiD::basisVector(17, lw$P))
      data.frame(M = r$M, lb = r$lb, ub = r$ub)
    },
    dd = function(x) {
      lw <- x$lw
      r <- diffdiff::honest_did(betahat = lw$b, sigma = lw$S, num_pre = lw$K, type = "SD",
                                M = seq(0, 0.04, length.out = 10), l_vec = replace(numeric(lw$P), 17, 1),
                                breakdown = FALSE)$results
      data.frame(M = r$M, lb = r$lb, ub = r$ub)
    }),
  bacon = list(
    peer = function(x) {
      r <- bacondecomp::bacon(l_homicide ~ post, data = x$castle, id_var = "state", time_var = "year",
                              quietly = TRUE)
      data.frame(treated = r$treated, untreated = r$untreated, estimate = r$estimate, weight = r$weight)
    },
    dd = function(x) {
      r <- diffdiff::bacon_decomp(x$castle, "l_homicide", "state", "year", treatname = "post")$two_by_twos
      r$untreated[!is.finite(r$untreated)] <- 99999     # bacondecomp's code for never treated
      data.frame(treated = r$treated, untreated = r$untreated, estimate = r$estimate, weight = r$weight)
    }))
peer_names <- c(rm = "HonestDiD (RM, C-LF)", flci = "HonestDiD (SD, FLCI)", bacon = "bacondecomp")
cases <- c(rm = "LW, Delta^RM C-LF, 4 Mbar, grid 1000", flci = "LW, Delta^SD FLCI, 10 M, l = e17",
           bacon = "castle, 25 comparisons")

fresh <- function(rds, est, side, lib, timeout) {
  callr::r(timeout = timeout, function(rds, est, side, lib, runners) {
    if (nzchar(lib)) .libPaths(c(lib, .libPaths()))
    suppressPackageStartupMessages(library(diffdiff))
    if (side == "peer" && est != "bacon") suppressPackageStartupMessages(library(HonestDiD))
    if (side == "peer" && est == "bacon") suppressPackageStartupMessages(library(bacondecomp))
    dd_threads(2)
    x <- readRDS(rds)
    rss <- function(field) {
      s <- readLines("/proc/self/status")
      as.numeric(sub("[^0-9]*([0-9]+).*", "\\1", grep(paste0("^", field, ":"), s, value = TRUE)))
    }
    invisible(gc(full = TRUE))
    cat("5", file = "/proc/self/clear_refs")
    base <- rss("VmRSS")
    t0 <- proc.time()[["elapsed"]]
    res <- suppressWarnings(runners[[est]][[side]](x))
    el <- proc.time()[["elapsed"]] - t0
    list(time = el, mb = (rss("VmHWM") - base) / 1024, res = res)
  }, args = list(rds = rds, est = est, side = side, lib = lib, runners = runners))
}
run_peer <- function(rds, est, lib) {
  tryCatch(fresh(rds, est, "peer", lib, peer_timeout),
           callr_timeout_error = function(e) list(time = peer_timeout, mb = NA_real_, res = NULL, timed_out = TRUE))
}

# agreement: bacon to 1e-8; RM intervals are grid points (identical grids) to 1e-8;
# FLCI half-lengths to 1e-6 relative, centres to 2.5e-3 (HonestDiD's ECOS solution
# of the bias problem is accurate to ~1e-6 in h; see tests/testthat/test-honest.R)
check <- function(est, peer, ours) {
  if (est == "bacon") {
    key <- function(d) paste(d$treated, d$untreated)
    m <- match(key(peer), key(ours))
    stopifnot(!anyNA(m), nrow(peer) == nrow(ours))
    return(max(abs(peer$estimate - ours$estimate[m]), abs(peer$weight - ours$weight[m])))
  }
  stopifnot(nrow(peer) == nrow(ours), max(abs(peer$M - ours$M)) < 1e-12)
  if (est == "rm") return(max(abs(c(peer$lb - ours$lb, peer$ub - ours$ub))))
  hp <- (peer$ub - peer$lb) / 2; ho <- (ours$ub - ours$lb) / 2
  c(half = max(abs(ho / hp - 1)), centre = max(abs((peer$ub + peer$lb) / 2 - (ours$ub + ours$lb) / 2)))
}
tol <- list(rm = 1e-8, bacon = 1e-8, flci = c(half = 1e-6, centre = 2.5e-3))

rds <- tempfile(fileext = ".rds"); saveRDS(inputs, rds)
res <- list()
for (est in names(runners)) {
  r <- runners[[est]]
  ours <- r$dd(inputs)
  t_dd <- median(vapply(seq_len(reps), function(i) { gc(); system.time(r$dd(inputs))[["elapsed"]] }, numeric(1)))
  m_dd <- fresh(rds, est, "dd", "", Inf)$mb
  have_peer <- est == "bacon" || has_hd
  P <- if (have_peer) run_peer(rds, est, if (est == "bacon") "" else hd_lib) else list(time = NA_real_, mb = NA_real_)
  d <- NA_real_
  if (have_peer && !isTRUE(P$timed_out)) {
    d <- check(est, P$res, ours)
    stopifnot(all(d <= tol[[est]]))
  }
  row <- data.frame(case = cases[[est]], peer = if (have_peer) peer_names[[est]] else "HonestDiD (not installed)",
                    peer_s = P$time, peer_timed_out = isTRUE(P$timed_out), diffdiff_s = t_dd,
                    speedup = P$time / t_dd, peer_peak_mb = P$mb, diffdiff_peak_mb = m_dd,
                    mem_ratio = m_dd / P$mb, diff = paste(format(d, digits = 2), collapse = " / "))
  print(row, digits = 4)
  res[[length(res) + 1L]] <- row
}
res <- do.call(rbind, res)
ver <- function(p, lib = NULL) tryCatch(format(packageVersion(p, lib.loc = lib)), error = function(e) NA)
meta <- list(date = format(Sys.time(), "%Y-%m-%d %H:%M:%S %Z"), R = R.version.string,
             HonestDiD = if (has_hd) ver("HonestDiD", hd_lib) else NA, bacondecomp = ver("bacondecomp"),
             diffdiff = ver("diffdiff"), reps = reps, threads = 2L)
if (requireNamespace("jsonlite", quietly = TRUE))
  writeLines(jsonlite::toJSON(list(meta = meta, results = res), pretty = TRUE, digits = 6, na = "null"),
             file.path(out_dir, "honest.json"))
md <- c("# bench/honest.R results", "",
        sprintf("%s; %s; HonestDiD %s, bacondecomp %s; diffdiff %s with 2 threads.",
                meta$date, meta$R, meta$HonestDiD, meta$bacondecomp, meta$diffdiff), "",
        paste0("Peers: one run each in a fresh process (time and peak memory); diffdiff: median of ", reps,
               " runs, memory from one run in a fresh process. speedup = peer time / diffdiff time; ",
               "mem ratio = diffdiff peak / peer peak. diff: bacon max |difference| of estimates and weights; ",
               "RM max |difference| of the interval ends; FLCI max relative difference of the half-lengths / ",
               "max |difference| of the centres."), "",
        "| case | peer | peer s | diffdiff s | speedup | peer MB | diffdiff MB | mem ratio | diff |",
        "|---|---|---|---|---|---|---|---|---|",
        sprintf("| %s | %s | %s%.2f | %.4f | %s%.1fx | %.1f | %.1f | %.3f | %s |", res$case, res$peer,
                ifelse(res$peer_timed_out, "> ", ""), res$peer_s, res$diffdiff_s,
                ifelse(res$peer_timed_out, "> ", ""), res$speedup, res$peer_peak_mb, res$diffdiff_peak_mb,
                res$mem_ratio, res$diff))
writeLines(md, file.path(out_dir, "honest.md"))
cat(md, sep = "\n")
