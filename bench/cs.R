# bench/cs.R: did_cs() + aggregate(type = "dynamic") against its peers on the
# same data in one process, answers checked before anything is timed.
#
# A. did::att_gt() + did::aggte(type = "dynamic") on diff-diff's staggered
#    shapes (10,000 units x 15 periods with 6 cohorts, 20,000 x 18 with 7),
#    without and with two covariates, analytic (no band on either side) and
#    with 999 multiplier-bootstrap draws and the uniform band (both sides).
# B. fastdid::fastdid(result_type = "dynamic", never-treated comparisons,
#    varying base period: did_cs's defaults) at 100,000 and 1,000,000 units
#    x 10 periods (3 cohorts and never treated), analytic.
# C. The data floor: one group-by pass over the same rows (data.table's mean
#    of the outcome by cohort and period), at the sizes of B.
#
# Times are paired and interleaved: each pair runs the peer once and
# diffdiff once (diffdiff repeated `inner` times when a call is short, for
# the timer's resolution), after a gc(); the ratio reported is the median of
# the per-pair ratios. Both sides single-threaded (dd_threads(1),
# data.table's threads 1), as did is. Peak memory: resident-set growth during
# one fit in a fresh R process (bench/measure.R), also as a multiple of the
# size of the input data frame.
# fastdid: tools/install-fastdid.sh puts it in /tmp/fastdidlib.
# Usage: Rscript bench/cs.R [pairs]   (writes bench/results/cs.{json,md})
suppressPackageStartupMessages({library(diffdiff); library(did)})
fd_lib <- Sys.getenv("FASTDID_LIB", "/tmp/fastdidlib")
if (dir.exists(fd_lib)) .libPaths(c(fd_lib, .libPaths()))
have_fd <- requireNamespace("fastdid", quietly = TRUE) && requireNamespace("data.table", quietly = TRUE)
args <- commandArgs(TRUE)
pairs <- if (length(args)) as.integer(args[1]) else 5L
out_dir <- file.path("bench", "results")
dir.create(out_dir, showWarnings = FALSE, recursive = TRUE)
dd_threads(1)
if (have_fd) data.table::setDTthreads(1)

make_stagg <- function(n, T, ncoh, seed = 1) {
  set.seed(seed)
  coh <- round(seq(3, T - 1, length.out = ncoh))
  x1 <- rnorm(n); x2 <- rbinom(n, 1, 0.5)
  g <- ifelse(runif(n) < 0.3, 0, sample(coh, n, replace = TRUE))
  d <- data.frame(id = rep(seq_len(n), each = T), t = rep(seq_len(T), n))
  d$g <- g[d$id]; d$x1 <- x1[d$id]; d$x2 <- x2[d$id]
  d$y <- rnorm(n)[d$id] + 0.1 * d$t + 0.3 * d$x1 * d$t / T + 0.2 * d$x2 +
    ifelse(d$g > 0 & d$t >= d$g, 1 + 0.2 * (d$t - d$g), 0) + rnorm(nrow(d))
  d
}
make_big <- function(n, T = 10, seed = 1) {
  set.seed(seed)
  d <- data.frame(id = rep(seq_len(n), each = T), t = rep(seq_len(T), n))
  d$g <- sample(c(0, 4, 6, 8), n, replace = TRUE)[d$id]
  d$y <- rnorm(n)[d$id] + 0.1 * d$t + (d$g > 0 & d$t >= d$g) + rnorm(nrow(d))
  d
}

run_did <- function(d, xf, boot)
  suppressWarnings({
    m <- att_gt("y", "t", "id", "g", xformla = xf, data = d, bstrap = boot, biters = 999, cband = boot)
    list(m = m, a = aggte(m, type = "dynamic", bstrap = boot, biters = 999, cband = boot))
  })
run_dd <- function(d, xf, boot)
  suppressWarnings({
    f <- did_cs(d, "y", "id", "t", "g", xformla = xf, nboot = if (boot) 999 else 0, cband = boot)
    list(f = f, a = aggregate(f, type = "dynamic"))
  })
run_fd <- function(dt)
  fastdid::fastdid(dt, timevar = "t", cohortvar = "g", unitvar = "id", outcomevar = "y", result_type = "dynamic",
                   control_option = "never", base_period = "varying")
run_gb <- function(dt) dt[, list(m = mean(y)), by = c("g", "t")]

# paired, interleaved timings: the peer once, diffdiff `inner` times, per pair
paired <- function(peer, mine, pairs, inner = 1L) {
  r <- vapply(seq_len(pairs), function(i) {
    gc(); a <- system.time(peer())[["elapsed"]]
    gc(); b <- system.time(for (k in seq_len(inner)) mine())[["elapsed"]] / inner
    c(a, b)
  }, numeric(2))
  list(peer = stats::median(r[1, ]), mine = stats::median(r[2, ]), ratio = stats::median(r[1, ] / r[2, ]))
}
inner_for <- function(f) { t1 <- system.time(f())[["elapsed"]]; max(1L, min(50L, as.integer(ceiling(0.5 / max(t1, 1e-3))))) }

# peak resident growth of one call in a fresh process
peak_mb <- function(rds, expr_fun, libs = .libPaths()) {
  callr::r(function(rds, fun, libs, measure) {
    .libPaths(libs)
    suppressPackageStartupMessages({library(diffdiff); library(did)})
    source(measure)
    dd_threads(1)
    if (requireNamespace("data.table", quietly = TRUE)) data.table::setDTthreads(1)
    d <- readRDS(rds)
    if (requireNamespace("data.table", quietly = TRUE) && fun %in% c("fd", "gb")) {
      d <- data.table::as.data.table(d); d[g == 0, g := Inf]
    }
    run <- switch(fun,
      did = function() suppressWarnings(did::aggte(did::att_gt("y", "t", "id", "g", data = d, bstrap = FALSE, cband = FALSE),
                                                   type = "dynamic", bstrap = FALSE, cband = FALSE)),
      dd = function() suppressWarnings(aggregate(did_cs(d, "y", "id", "t", "g", nboot = 0, cband = FALSE), type = "dynamic")),
      fd = function() fastdid::fastdid(d, timevar = "t", cohortvar = "g", unitvar = "id", outcomevar = "y",
                                       result_type = "dynamic", control_option = "never", base_period = "varying"),
      gb = function() d[, list(m = mean(y)), by = c("g", "t")])
    bench_measure(run)$mb
  }, args = list(rds = rds, fun = expr_fun, libs = libs, measure = normalizePath(file.path("bench", "measure.R"))))
}

res <- list()
# ---- A: did ----------------------------------------------------------------
shapes <- list(list(name = "10k units x 15 periods, 6 cohorts", n = 10000, T = 15, k = 6),
               list(name = "20k units x 18 periods, 7 cohorts", n = 20000, T = 18, k = 7))
for (sh in shapes) {
  d <- make_stagg(sh$n, sh$T, sh$k)
  rds <- tempfile(fileext = ".rds"); saveRDS(d, rds)
  in_mb <- as.numeric(utils::object.size(d)) / 2^20
  for (xf in list(NULL, ~ x1 + x2)) for (boot in c(FALSE, TRUE)) {
    lab <- sprintf("%s; %s; %s", sh$name, if (is.null(xf)) "no covariates" else "2 covariates",
                   if (boot) "bootstrap 999 + band" else "analytic, no band")
    P <- run_did(d, xf, boot); Q <- run_dd(d, xf, boot)
    d_att <- max(abs(Q$f$coeftable$estimate - P$m$att) / abs(P$m$att), na.rm = TRUE)
    d_dyn <- max(abs(Q$a$coeftable$estimate - c(P$a$att.egt, P$a$overall.att)) /
                   abs(c(P$a$att.egt, P$a$overall.att)))
    d_se <- if (!boot) max(abs(Q$f$coeftable$std.error - P$m$se) / P$m$se, na.rm = TRUE) else
      max(abs(Q$f$coeftable$std.error / P$m$se - 1), na.rm = TRUE)
    stopifnot(d_att < 1e-8, d_dyn < 1e-8, if (!boot) d_se < 1e-6 else d_se < 0.25)
    fm <- function() run_dd(d, xf, boot)
    tt <- paired(function() run_did(d, xf, boot), fm, pairs, inner_for(fm))
    mem <- if (is.null(xf) && !boot) c(peak_mb(rds, "did"), peak_mb(rds, "dd")) else c(NA, NA)
    r <- data.frame(part = "A", case = lab, peer = paste("did", packageVersion("did")), peer_s = tt$peer,
                    diffdiff_s = tt$mine, speedup = tt$ratio, peer_peak_mb = mem[1], diffdiff_peak_mb = mem[2],
                    input_mb = in_mb, diff = sprintf("ATT %.1e, dynamic %.1e, SE %.1e", d_att, d_dyn, d_se))
    print(r, digits = 4)
    res[[length(res) + 1L]] <- r
  }
}
# ---- B and C: fastdid, the group-by pass --------------------------------------
if (have_fd) {
  for (n in c(1e5, 1e6)) {
    d <- make_big(n)
    rds <- tempfile(fileext = ".rds"); saveRDS(d, rds)
    in_mb <- as.numeric(utils::object.size(d)) / 2^20
    dt <- data.table::as.data.table(d); dt[g == 0, g := Inf]
    Q <- run_dd(d, NULL, FALSE); F <- run_fd(dt)
    tb <- Q$a$coeftable; tb <- tb[!is.na(tb$event), ]
    m <- match(tb$event, F$event_time)
    d_att <- max(abs(tb$estimate - F$att[m])); d_se <- max(abs(tb$std.error - F$se[m]))
    stopifnot(!anyNA(m), d_att < 1e-8, d_se < 1e-8)
    lab <- sprintf("%s units x 10 periods, 3 cohorts; no covariates; analytic", format(n, big.mark = ",", scientific = FALSE))
    fm <- function() run_dd(d, NULL, FALSE)
    np <- if (n >= 1e6) max(3L, pairs %/% 2L) else pairs
    tt <- paired(function() run_fd(dt), fm, np, inner_for(fm))
    r <- data.frame(part = "B", case = lab, peer = paste("fastdid", packageVersion("fastdid")), peer_s = tt$peer,
                    diffdiff_s = tt$mine, speedup = tt$ratio, peer_peak_mb = peak_mb(rds, "fd"),
                    diffdiff_peak_mb = peak_mb(rds, "dd"), input_mb = in_mb,
                    diff = sprintf("dynamic ATT %.1e, SE %.1e (absolute)", d_att, d_se))
    print(r, digits = 4); res[[length(res) + 1L]] <- r
    tt <- paired(function() run_gb(dt), fm, np, 1L)
    r <- data.frame(part = "C", case = sprintf("%s rows: one group-by pass (mean of y by cohort and period)",
                                               format(nrow(d), big.mark = ",", scientific = FALSE)),
                    peer = paste("data.table", packageVersion("data.table")), peer_s = tt$peer, diffdiff_s = tt$mine,
                    speedup = tt$ratio, peer_peak_mb = peak_mb(rds, "gb"), diffdiff_peak_mb = NA_real_,
                    input_mb = in_mb, diff = "-")
    print(r, digits = 4); res[[length(res) + 1L]] <- r
  }
} else message("fastdid not found (tools/install-fastdid.sh): parts B and C skipped")
res <- do.call(rbind, res)
res$mem_ratio <- res$diffdiff_peak_mb / res$peer_peak_mb
res$diffdiff_input_copies <- res$diffdiff_peak_mb / res$input_mb
meta <- list(date = format(Sys.time(), "%Y-%m-%d %H:%M:%S %Z"), R = R.version.string,
             did = as.character(packageVersion("did")), diffdiff = as.character(packageVersion("diffdiff")),
             fastdid = if (have_fd) as.character(packageVersion("fastdid")) else NA, pairs = pairs, threads = 1L)
if (requireNamespace("jsonlite", quietly = TRUE))
  writeLines(jsonlite::toJSON(list(meta = meta, results = res), pretty = TRUE, digits = 6, na = "null"),
             file.path(out_dir, "cs.json"))
fmt <- function(v, f) ifelse(is.na(v), "-", sprintf(f, v))
md <- c("# bench/cs.R results", "",
        sprintf("%s; %s; did %s; fastdid %s; diffdiff %s; one thread on both sides; median of %d paired, interleaved runs.",
                meta$date, meta$R, meta$did, meta$fastdid, meta$diffdiff, pairs), "",
        "speedup = peer time / diffdiff time (median of the per-pair ratios); part C: the group-by pass's time / diffdiff's, i.e. diffdiff takes 1/speedup passes.",
        "MB: resident-set growth during one fit in a fresh process; copies = diffdiff MB / size of the input data frame.",
        "diff: largest relative differences from did (bootstrap rows: |ratio - 1| of the two bootstraps' SEs), absolute from fastdid.", "",
        "| part | case | peer | peer s | diffdiff s | speedup | peer MB | diffdiff MB | mem ratio | input copies | diff |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
        sprintf("| %s | %s | %s | %.3f | %.4f | %.1fx | %s | %s | %s | %s | %s |", res$part, res$case, res$peer, res$peer_s,
                res$diffdiff_s, res$speedup, fmt(res$peer_peak_mb, "%.0f"), fmt(res$diffdiff_peak_mb, "%.0f"),
                fmt(res$mem_ratio, "%.2f"), fmt(res$diffdiff_input_copies, "%.2f"), res$diff))
writeLines(md, file.path(out_dir, "cs.md"))
cat(md, sep = "\n")
