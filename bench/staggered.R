# bench/staggered.R: the heterogeneity-robust event studies against their
# peers on the same simulated staggered panels (10,000 units x 15 periods with
# 6 cohorts; 20,000 x 18 with 7; 5,000 x 12 with 4):
#   did_sa      vs fixest::feols(y ~ sunab(g, t) | id + t, cluster = ~id)
#   did_bjs     vs didimputation::did_imputation(horizon = TRUE, pretrends = all leads but -1)
#   did_gardner vs did2s::did2s(second_stage = ~ i(rel, ref = c(-1, Inf)))
#   did_stacked vs the recipe of Wing et al. by hand (data.table stack,
#               corrective weights, fixest::feols with the weights)
# Each peer runs once per shape in a fresh R process (callr) that reports its
# time, its peak memory and its coefficients; diffdiff's time is the median of
# `reps` runs in this process, its memory one fit in a fresh process. Memory =
# growth of the peak resident set (VmHWM after /proc/self/clear_refs). The
# answers are checked before anything is recorded.
# did2s is not installable on R 4.2.2 from CRAN (HonestDiD -> CVXR): give the
# library made by tools/install-did2s.sh in DID2S_LIB (without it the Gardner
# rows time diffdiff alone).
# Usage: DID2S_LIB=/tmp/did2slib [PEER_TIMEOUT=s] Rscript bench/staggered.R [reps] [shapes]
#   shapes: "1,2,3" (default; 3 is the smallest, 5k x 12) or e.g. "1";
#   with STAGGERED_MERGE=1 the other shapes' rows of the previous results are
#   kept (each row records the date of its run).
suppressPackageStartupMessages({library(diffdiff); library(fixest)})
args <- commandArgs(TRUE)
reps <- if (length(args) >= 1) as.integer(args[1]) else 3L
which_shapes <- if (length(args) >= 2) as.integer(strsplit(args[2], ",")[[1]]) else 1:3
did2s_lib <- Sys.getenv("DID2S_LIB")
has_did2s <- nzchar(did2s_lib) && requireNamespace("did2s", lib.loc = did2s_lib, quietly = TRUE)
out_dir <- file.path("bench", "results")
dir.create(out_dir, showWarnings = FALSE, recursive = TRUE)
dd_threads(2)
setFixest_nthreads(2)

make_stagg <- function(n, T, ncoh, seed = 1) {
  set.seed(seed)
  coh <- round(seq(3, T - 1, length.out = ncoh))
  x1 <- rnorm(n)
  g <- ifelse(runif(n) < 0.3, 0, sample(coh, n, replace = TRUE))
  d <- data.frame(id = rep(seq_len(n), each = T), t = rep(seq_len(T), n))
  d$g <- g[d$id]; d$x1 <- x1[d$id] + rnorm(nrow(d), sd = 0.5)
  d$y <- rnorm(n)[d$id] + 0.1 * d$t + 0.3 * d$x1 +
    ifelse(d$g > 0 & d$t >= d$g, 1 + 0.2 * (d$t - d$g), 0) + rnorm(nrow(d))
  d$D <- d$g > 0 & d$t >= d$g
  d$rel <- ifelse(d$g > 0, d$t - d$g, Inf)
  d
}

# the peers, and diffdiff, as functions of the data (run in fresh processes too)
runners <- list(
  sa = list(
    peer = function(d) {
      m <- fixest::feols(y ~ sunab(g, t) | id + t, d, cluster = ~id)
      ct <- summary(m, agg = FALSE)$coeftable
      data.frame(term = rownames(ct), estimate = ct[, 1], std.error = ct[, 2])
    },
    dd = function(d) diffdiff::did_sa(d, "y", "id", "t", "g"),
    ours = function(f) f$cohort_coefs),
  bjs = list(
    peer = function(d) {
      # all leads but -1, named explicitly: with pretrends = TRUE fixest drops
      # one collinear lead of its own choosing (usually, not always, -1)
      ld <- sort(unique((d$t - d$g)[d$g > 0 & d$t < d$g]))
      r <- as.data.frame(didimputation::did_imputation(d, "y", "g", "t", "id", horizon = TRUE,
                                                       pretrends = ld[ld < -1]))
      data.frame(term = paste0("event::", r$term), estimate = r$estimate, std.error = r$std.error)
    },
    dd = function(d) diffdiff::did_bjs(d, "y", "id", "t", "g"),
    ours = function(f) f$coeftable),
  gardner = list(
    peer = function(d) {
      m <- did2s::did2s(d, "y", ~ 0 | id + t, ~ i(rel, ref = c(-1, Inf)), "D", cluster_var = "id")
      ct <- m$coeftable
      data.frame(term = sub("^rel::", "event::", rownames(ct)), estimate = ct[, 1], std.error = ct[, 2])
    },
    dd = function(d) diffdiff::did_gardner(d, "y", "id", "t", "g"),
    ours = function(f) f$coeftable),
  stacked = list(
    peer = function(d) {
      dt <- data.table::as.data.table(d)
      kpre <- 3; kpost <- 3
      lo <- min(dt$t); hi <- max(dt$t)
      coh <- sort(unique(dt$g[dt$g > 0]))
      coh <- coh[coh - kpre >= lo & coh + kpost <= hi]
      s <- data.table::rbindlist(lapply(coh, function(a) {
        x <- dt[(g == a | g == 0 | g > a + kpost) & t >= a - kpre & t <= a + kpost]
        x[, `:=`(sub = a, e = t - a, Dsa = as.integer(g == a))]
      }))
      s[, `:=`(nTae = sum(Dsa), nCae = sum(1 - Dsa)), by = c("sub", "e")]
      s[, `:=`(nTe = sum(Dsa), nCe = sum(1 - Dsa)), by = "e"]
      s[, Q := ifelse(Dsa == 1, 1, (nTae / nTe) / (nCae / nCe))]
      m <- fixest::feols(y ~ i(e, Dsa, ref = -1) | Dsa + e, s, weights = ~Q, cluster = ~id)
      ct <- fixest::coeftable(m)
      data.frame(term = sub("^e::(-?[0-9]+):Dsa$", "event::\\1", rownames(ct)), estimate = ct[, 1],
                 std.error = ct[, 2])
    },
    dd = function(d) suppressMessages(diffdiff::did_stacked(d, "y", "id", "t", "g", kappa_pre = 3, kappa_post = 3)),
    ours = function(f) f$coeftable))
peer_names <- c(sa = "fixest sunab", bjs = "didimputation", gardner = "did2s", stacked = "by hand (data.table + feols)")
peer_versions <- c(sa = "fixest", bjs = "didimputation", gardner = "did2s", stacked = "fixest")

# one run in a fresh process: elapsed time, peak memory growth (MB), result;
# a peer run longer than PEER_TIMEOUT seconds (default 3600) is stopped and
# reported as a lower bound
peer_timeout <- as.numeric(Sys.getenv("PEER_TIMEOUT", "3600"))
fresh <- function(rds, est, side, lib) {
  if (side == "peer") {
    out <- tryCatch(fresh1(rds, est, side, lib, peer_timeout),
                    callr_timeout_error = function(e) list(time = peer_timeout, mb = NA_real_, res = NULL,
                                                             timed_out = TRUE))
    return(out)
  }
  fresh1(rds, est, side, lib, Inf)
}
fresh1 <- function(rds, est, side, lib, timeout, tight = FALSE) {
  callr::r(timeout = timeout, function(rds, est, side, lib, runners, tight) {
    if (nzchar(lib)) .libPaths(c(lib, .libPaths()))
    suppressPackageStartupMessages({library(diffdiff); library(fixest)})
    if (tight) fixest::setFixest_estimation(fixef.tol = 1e-11)
    if (est == "bjs" && side == "peer") suppressPackageStartupMessages(library(didimputation))
    dd_threads(2); setFixest_nthreads(2)
    d <- readRDS(rds)
    rss <- function(field) {
      s <- readLines("/proc/self/status")
      as.numeric(sub("[^0-9]*([0-9]+).*", "\\1", grep(paste0("^", field, ":"), s, value = TRUE)))
    }
    invisible(gc(full = TRUE))
    cat("5", file = "/proc/self/clear_refs")
    base <- rss("VmRSS")
    t0 <- proc.time()[["elapsed"]]
    res <- suppressWarnings(runners[[est]][[side]](d))
    el <- proc.time()[["elapsed"]] - t0
    list(time = el, mb = (rss("VmHWM") - base) / 1024, res = if (side == "peer") res else NULL)
  }, args = list(rds = rds, est = est, side = side, lib = lib, runners = runners, tight = tight))
}

compare <- function(peer, ours) {
  m <- match(peer$term, ours$term)
  if (anyNA(m)) stop("terms missing from diffdiff: ", paste(peer$term[is.na(m)], collapse = ", "))
  scale <- max(abs(peer$estimate))
  c(est = max(abs(peer$estimate - ours$estimate[m])) / scale,
    se = max(abs(peer$std.error - ours$std.error[m]) / peer$std.error))
}

shapes <- list(list(name = "10k units x 15 periods, 6 cohorts", n = 10000, T = 15, k = 6),
               list(name = "20k units x 18 periods, 7 cohorts", n = 20000, T = 18, k = 7),
               list(name = "5k units x 12 periods, 4 cohorts", n = 5000, T = 12, k = 4))[which_shapes]
res <- list(); tight <- list()
for (sh in shapes) {
  d <- make_stagg(sh$n, sh$T, sh$k)
  rds <- tempfile(fileext = ".rds"); saveRDS(d, rds)
  for (est in names(runners)) {
    if (est == "gardner" && !has_did2s) {
      message("did2s not available (DID2S_LIB): Gardner timed for diffdiff alone")
    }
    r <- runners[[est]]
    f <- r$dd(d)                                     # warm-up and the answer
    t_dd <- median(vapply(seq_len(reps), function(i) { gc(); system.time(r$dd(d))[["elapsed"]] }, numeric(1)))
    m_dd <- fresh(rds, est, "dd", "")$mb
    if (est == "gardner" && !has_did2s) {
      P <- list(time = NA_real_, mb = NA_real_); diff <- c(est = NA, se = NA)
    } else {
      P <- fresh(rds, est, "peer", if (est == "gardner") did2s_lib else "")
      if (isTRUE(P$timed_out)) {
        message(sprintf("%s on %s: stopped after %.0f s", peer_names[[est]], sh$name, peer_timeout))
        diff <- c(est = NA, se = NA)
      } else {
        diff <- compare(P$res, r$ours(f))
        # estimates to 1e-8 of the largest coefficient, standard errors to
        # 1e-6. The imputation peers' first stages stop at fixest's default
        # tolerance (fixef.tol 1e-6), which can move their post-period
        # estimates by a few 1e-8 (5k x 12: didimputation 1.5e-8 of the
        # largest); then the answer is checked against the peer run again at
        # fixef.tol 1e-11, as tests/testthat/test-parity-bjs.R does (untimed:
        # the time is the default run's), and that difference is recorded
        if (est %in% c("bjs", "gardner") && diff[["est"]] >= 1e-8) {
          Pt <- fresh1(rds, est, "peer", if (est == "gardner") did2s_lib else "", Inf, tight = TRUE)
          diff <- compare(Pt$res, r$ours(f))
          tight[[length(tight) + 1L]] <- paste0("did_", est, " on ", sh$name)
        }
        stopifnot(diff[["est"]] < 1e-8, diff[["se"]] < 1e-6)
      }
    }
    row <- data.frame(case = sh$name, estimator = paste0("did_", est), peer = peer_names[[est]],
                      peer_s = P$time, peer_timed_out = isTRUE(P$timed_out), diffdiff_s = t_dd, speedup = P$time / t_dd, peer_peak_mb = P$mb,
                      diffdiff_peak_mb = m_dd, mem_ratio = m_dd / P$mb, est_diff = diff[["est"]],
                      se_diff = diff[["se"]])
    print(row, digits = 4)
    res[[length(res) + 1L]] <- row
  }
}
res <- do.call(rbind, res)
res$run <- format(Sys.Date())
# STAGGERED_MERGE=1: keep the rows of the shapes not run this time from the
# previous results (each row carries the date of its run)
prev_file <- file.path(out_dir, "staggered.json")
if (nzchar(Sys.getenv("STAGGERED_MERGE")) && file.exists(prev_file)) {
  prev <- jsonlite::fromJSON(prev_file)
  old <- as.data.frame(prev$results)
  if (is.null(old$run)) old$run <- substr(prev$meta$date, 1, 10)
  old <- old[!(old$case %in% res$case), , drop = FALSE]
  if (nrow(old)) res <- rbind(old[, names(res)], res)
}
ver <- function(p, lib = NULL) tryCatch(format(packageVersion(p, lib.loc = lib)), error = function(e) NA)
meta <- list(date = format(Sys.time(), "%Y-%m-%d %H:%M:%S %Z"), R = R.version.string,
             fixest = ver("fixest"), didimputation = ver("didimputation"),
             did2s = if (has_did2s) ver("did2s", did2s_lib) else NA, diffdiff = ver("diffdiff"),
             reps = reps, threads = 2L, checked_at_fixef_tol_1e11 = unlist(tight))
if (requireNamespace("jsonlite", quietly = TRUE))
  writeLines(jsonlite::toJSON(list(meta = meta, results = res), pretty = TRUE, digits = 6, na = "null"),
             file.path(out_dir, "staggered.json"))
md <- c("# bench/staggered.R results", "",
        sprintf("%s; %s; fixest %s, didimputation %s, did2s %s; diffdiff %s with 2 threads (fixest 2 threads).",
                meta$date, meta$R, meta$fixest, meta$didimputation, meta$did2s, meta$diffdiff), "",
        paste0("Peers: one run each in a fresh process (time and peak memory); diffdiff: median of ", reps,
               " runs, memory from one fit in a fresh process. speedup = peer time / diffdiff time; ",
               "mem ratio = diffdiff peak / peer peak. est diff = max |difference| / max |estimate|; ",
               "se diff = max relative difference of the standard errors.",
               if (length(tight)) sprintf(" %s: est/se diff against the peer at fixef.tol 1e-11 (at fixest's default 1e-6 its first stage stops a few 1e-8 short; the time is the default run's).",
                                          paste(unlist(tight), collapse = "; ")) else ""), "",
        "| case | estimator | peer | peer s | diffdiff s | speedup | peer MB | diffdiff MB | mem ratio | est diff | se diff | run |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
        sprintf("| %s | %s | %s | %s%.2f | %.3f | %s%.1fx | %.0f | %.0f | %.3f | %.1e | %.1e | %s |", res$case, res$estimator,
                res$peer, ifelse(res$peer_timed_out, "> ", ""), res$peer_s, res$diffdiff_s,
                ifelse(res$peer_timed_out, "> ", ""), res$speedup, res$peer_peak_mb, res$diffdiff_peak_mb,
                res$mem_ratio, res$est_diff, res$se_diff, res$run))
writeLines(md, file.path(out_dir, "staggered.md"))
cat(md, sep = "\n")
