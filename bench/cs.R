# bench/cs.R: did_cs() + aggregate(type = "dynamic") against did::att_gt() +
# did::aggte() on the same data in one process (diff-diff's staggered shapes:
# 10,000 units x 15 periods with 6 cohorts, 20,000 x 18 with 7), with and
# without two covariates, analytic (bstrap = FALSE) and with 999 multiplier
# bootstrap draws. Answers are checked first (ATT(g,t), analytic SEs, dynamic
# aggregates). Times: median of `reps` runs (did: fewer when slow). Peak
# memory: resident-set growth during one fit in a fresh R process.
# Usage: Rscript bench/cs.R [reps]   (writes bench/results/cs.{json,md})
suppressPackageStartupMessages({library(diffdiff); library(did)})
args <- commandArgs(TRUE)
reps <- if (length(args)) as.integer(args[1]) else 3L
out_dir <- file.path("bench", "results")
dir.create(out_dir, showWarnings = FALSE, recursive = TRUE)
dd_threads(2)

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

run_did <- function(d, xf, boot) {
  m <- att_gt("y", "t", "id", "g", xformla = xf, data = d, bstrap = boot, biters = 999, cband = boot)
  list(m = m, a = aggte(m, type = "dynamic", bstrap = boot, biters = 999, cband = boot))
}
run_dd <- function(d, xf, boot) {
  f <- did_cs(d, "y", "id", "t", "g", xformla = xf, nboot = if (boot) 999 else 0, cband = boot)
  list(f = f, a = aggregate(f, type = "dynamic"))
}
timeit <- function(f, k) median(vapply(seq_len(k), function(i) { gc(); system.time(f())[["elapsed"]] }, numeric(1)))

peak_mb <- function(rds, which, xf, boot) {
  callr::r(function(rds, which, xf, boot) {
    suppressPackageStartupMessages({library(diffdiff); library(did)})
    d <- readRDS(rds); dd_threads(2)
    rss <- function(field) {
      s <- readLines("/proc/self/status")
      as.numeric(sub("[^0-9]*([0-9]+).*", "\\1", grep(paste0("^", field, ":"), s, value = TRUE)))
    }
    invisible(gc(full = TRUE))
    cat("5", file = "/proc/self/clear_refs")
    base <- rss("VmRSS")
    if (which == "did") {
      m <- att_gt("y", "t", "id", "g", xformla = xf, data = d, bstrap = boot, biters = 999, cband = boot)
      a <- aggte(m, type = "dynamic", bstrap = boot, biters = 999, cband = boot)
    } else {
      f <- did_cs(d, "y", "id", "t", "g", xformla = xf, nboot = if (boot) 999 else 0, cband = boot)
      a <- aggregate(f, type = "dynamic")
    }
    (rss("VmHWM") - base) / 1024
  }, args = list(rds = rds, which = which, xf = xf, boot = boot))
}

shapes <- list(list(name = "10k units x 15 periods, 6 cohorts", n = 10000, T = 15, k = 6),
               list(name = "20k units x 18 periods, 7 cohorts", n = 20000, T = 18, k = 7))
res <- list()
for (sh in shapes) {
  d <- make_stagg(sh$n, sh$T, sh$k)
  rds <- tempfile(fileext = ".rds"); saveRDS(d, rds)
  for (xf in list(NULL, ~ x1 + x2)) for (boot in c(FALSE, TRUE)) {
    lab <- sprintf("%s; %s; %s", sh$name, if (is.null(xf)) "no covariates" else "2 covariates",
                   if (boot) "bootstrap 999" else "analytic")
    t_did <- system.time(P <- suppressWarnings(run_did(d, xf, boot)))[["elapsed"]]
    Q <- suppressWarnings(run_dd(d, xf, boot))
    d_att <- max(abs(Q$f$coeftable$estimate - P$m$att) / abs(P$m$att), na.rm = TRUE)
    d_dyn <- max(abs(Q$a$coeftable$estimate - c(P$a$att.egt, P$a$overall.att)) /
                   abs(c(P$a$att.egt, P$a$overall.att)))
    d_se <- if (!boot) max(abs(Q$f$coeftable$std.error - P$m$se) / P$m$se, na.rm = TRUE) else
      max(abs(Q$f$coeftable$std.error / P$m$se - 1), na.rm = TRUE)
    stopifnot(d_att < 1e-8, d_dyn < 1e-8, if (!boot) d_se < 1e-6 else d_se < 0.25)
    k_did <- if (t_did > 20) 1L else reps
    if (k_did > 1L) t_did <- timeit(function() suppressWarnings(run_did(d, xf, boot)), k_did)
    t_dd <- timeit(function() suppressWarnings(run_dd(d, xf, boot)), reps)
    m_did <- peak_mb(rds, "did", xf, boot); m_dd <- peak_mb(rds, "diffdiff", xf, boot)
    r <- data.frame(case = lab, did_s = t_did, diffdiff_s = t_dd, speedup = t_did / t_dd,
                    did_peak_mb = m_did, diffdiff_peak_mb = m_dd, mem_ratio = m_dd / m_did,
                    max_rel_diff_att = d_att, max_rel_diff_dynamic = d_dyn, se_diff = d_se)
    print(r, digits = 4)
    res[[length(res) + 1L]] <- r
  }
}
res <- do.call(rbind, res)
meta <- list(date = format(Sys.time(), "%Y-%m-%d %H:%M:%S %Z"), R = R.version.string,
             did = as.character(packageVersion("did")), diffdiff = as.character(packageVersion("diffdiff")),
             reps = reps, threads = 2L)
if (requireNamespace("jsonlite", quietly = TRUE))
  writeLines(jsonlite::toJSON(list(meta = meta, results = res), pretty = TRUE, digits = 6),
             file.path(out_dir, "cs.json"))
md <- c("# bench/cs.R results", "",
        sprintf("%s; %s; did %s; diffdiff %s; diffdiff with 2 threads; median of up to %d runs.",
                meta$date, meta$R, meta$did, meta$diffdiff, reps), "",
        "speedup = did time / diffdiff time; mem_ratio = diffdiff peak / did peak (fresh process each).",
        "se diff: analytic rows, max relative difference; bootstrap rows, max |ratio - 1| of bootstrap SEs (two independent bootstraps).", "",
        "| case | did s | diffdiff s | speedup | did MB | diffdiff MB | mem ratio | ATT diff | dynamic diff | se diff |",
        "|---|---|---|---|---|---|---|---|---|---|",
        sprintf("| %s | %.2f | %.3f | %.0fx | %.0f | %.0f | %.3f | %.1e | %.1e | %.1e |", res$case, res$did_s,
                res$diffdiff_s, res$speedup, res$did_peak_mb, res$diffdiff_peak_mb, res$mem_ratio,
                res$max_rel_diff_att, res$max_rel_diff_dynamic, res$se_diff))
writeLines(md, file.path(out_dir, "cs.md"))
cat(md, sep = "\n")
