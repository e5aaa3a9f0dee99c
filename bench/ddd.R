# bench/ddd.R: did_ddd() against triplediff::ddd() (0.2.4, installed by
# tools/install-triplediff.sh) on the same data, each side in a fresh R
# process (callr) reporting its time, peak memory (growth of VmHWM after
# /proc/self/clear_refs) and its answer. The panel: 5,000, 20,000 and
# 50,000 units x 10 periods, four treated cohorts (first treated in periods 3, 5, 7, 9) and a
# never-treated group, a 0/1 eligibility, two covariates that shift both the
# cohort and the eligibility shares and the trends; doubly robust,
# never-treated comparisons, varying base period:
#  * analytic SEs: ATT(g,t) checked to 1e-8, SEs to 1e-6 (relative);
#  * 999 multiplier-bootstrap draws with a uniform band (triplediff forces
#    the band when it bootstraps): ATT(g,t) to 1e-8; the bootstrap SEs come
#    from different draws. Both sides estimate an SE from the interquartile
#    range of 999 draws, whose relative Monte Carlo error is about
#    1.17 / sqrt(999) = 3.7%, so the ratio of two independent ones has about
#    5.2%: each of the 36 ratios must lie within 4 such errors (0.21) and
#    their mean within 3% of 1 (the mean of 36 correlated ratios).
# Usage: Rscript bench/ddd.R [reps]
suppressPackageStartupMessages(library(diffdiff))
args <- commandArgs(TRUE)
reps <- if (length(args) >= 1) as.integer(args[1]) else 3L
out_dir <- file.path("bench", "results")
dir.create(out_dir, showWarnings = FALSE, recursive = TRUE)
helper <- normalizePath(file.path("bench", "measure.R"))
source(helper)
has <- function(p) requireNamespace(p, quietly = TRUE)

fresh <- function(rds, side, boot, reps) {
  callr::r(function(rds, side, boot, reps, helper) {
    suppressPackageStartupMessages(library(diffdiff))
    dd_threads(2)
    d <- readRDS(rds)
    run <- switch(side,
      triplediff = function() {
        set.seed(1)
        r <- suppressWarnings(triplediff::ddd(yname = "y", tname = "t", idname = "id", gname = "g", pname = "q",
                                              xformla = ~ x1 + x2, data = d, control_group = "nevertreated",
                                              base_period = "varying", est_method = "dr", boot = boot,
                                              nboot = if (boot) 999 else NULL, cband = boot))
        list(key = paste(r$groups, r$periods), est = r$ATT, se = r$se)
      },
      diffdiff = function() {
        set.seed(1)
        f <- did_ddd(d, "y", "id", "t", "g", "q", xformla = ~ x1 + x2, control_group = "nevertreated",
                     base_period = "varying", est_method = "dr", nboot = if (boot) 999 else 0, cband = boot)
        list(key = paste(f$coeftable$group, f$coeftable$time), est = f$coeftable$estimate,
             se = f$coeftable$std.error)
      })
    source(helper)
    bench_measure(run, reps)
  }, args = list(rds = rds, side = side, boot = boot, reps = reps, helper = helper))
}

# the panel: N units x 10 periods
make_panel <- function(N, TT = 10) {
  set.seed(18)
  x1 <- rnorm(N); x2 <- rbinom(N, 1, 0.4)
  lp <- cbind(0, 0.3 * x1, -0.2 * x1 + 0.3 * x2, 0.2 * x2, -0.3 * x1)      # never, 3, 5, 7, 9
  pr <- exp(lp) / rowSums(exp(lp))
  g <- c(0, 3, 5, 7, 9)[apply(pr, 1, function(p) sample.int(5, 1, prob = p))]
  q <- rbinom(N, 1, stats::plogis(0.2 * x1 - 0.3 * x2))
  d <- expand.grid(t = seq_len(TT), id = seq_len(N))[, c("id", "t")]
  i <- d$id
  d$g <- g[i]; d$q <- q[i]; d$x1 <- x1[i]; d$x2 <- x2[i]
  treated <- d$g > 0 & d$t >= d$g & d$q == 1
  d$y <- rnorm(N)[i] + d$t * (0.5 + 0.3 * d$q + 0.2 * (d$g > 0) + 0.4 * d$x1 + 0.2 * d$x2) +
    ifelse(treated, 1 + 0.2 * (d$t - d$g), 0) + rnorm(nrow(d))
  d
}
sizes <- c(5000, 20000, 50000)

row <- function(case, peer, P, D, diff)
  data.frame(case = case, peer = peer, peer_s = P$time, diffdiff_s = D$time, speedup = P$time / D$time,
             peer_peak_mb = P$mb, diffdiff_peak_mb = D$mb, mem_ratio = D$mb / P$mb, diff = diff)
rows <- list()
peer <- if (has("triplediff")) sprintf("triplediff %s", packageVersion("triplediff")) else NA
for (N in sizes) {
  rds <- tempfile(fileext = ".rds")
  saveRDS(make_panel(N), rds)
  for (boot in c(FALSE, TRUE)) {
    case <- sprintf("did_ddd: %s x 10, 4 cohorts, 2 covariates, dr, %s", format(N, big.mark = ","),
                    if (boot) "999 bootstrap draws, uniform band" else "analytic SEs")
    D <- fresh(rds, "diffdiff", boot, reps)
    P <- if (has("triplediff")) fresh(rds, "triplediff", boot, 1L) else NULL
    if (is.null(P)) {
      rows[[length(rows) + 1]] <- data.frame(case = case, peer = "(triplediff not installed)", peer_s = NA,
                                             diffdiff_s = D$time, speedup = NA, peer_peak_mb = NA,
                                             diffdiff_peak_mb = D$mb, mem_ratio = NA, diff = "")
      next
    }
    k <- match(P$res$key, D$res$key)
    stopifnot(!anyNA(k))
    e <- max(abs(D$res$est[k] - P$res$est))
    ok <- !is.na(P$res$se)
    ratio <- D$res$se[k][ok] / P$res$se[ok]
    s <- range(ratio)
    if (boot) stopifnot(e < 1e-8, abs(s - 1) < 0.21, abs(mean(ratio) - 1) < 0.03)
    else stopifnot(e < 1e-8, abs(s - 1) < 1e-6)
    rows[[length(rows) + 1]] <- row(case, peer, P, D,
                                    sprintf("ATT(g,t) %.1e; SE ratio %.4f-%.4f (mean %.4f)", e, s[1], s[2],
                                            mean(ratio)))
    print(rows[[length(rows)]], digits = 4)
  }
}

res <- do.call(rbind, rows)
meta <- list(date = format(Sys.time(), "%Y-%m-%d %H:%M:%S %Z"), R = R.version.string,
             triplediff = if (has("triplediff")) format(packageVersion("triplediff")) else NA,
             diffdiff = format(packageVersion("diffdiff")), reps = reps, threads = 2L)
if (requireNamespace("jsonlite", quietly = TRUE))
  writeLines(jsonlite::toJSON(list(meta = meta, results = res), pretty = TRUE, digits = 6, na = "null"),
             file.path(out_dir, "ddd.json"))
md <- c("# bench/ddd.R results", "",
        sprintf("%s; %s; triplediff %s; diffdiff %s with 2 threads.", meta$date, meta$R, meta$triplediff,
                meta$diffdiff), "",
        paste0("Each side in a fresh process: triplediff one run, diffdiff the median of ", reps, " runs (the ",
               "first gives the peak memory). speedup = triplediff time / diffdiff time; mem ratio = diffdiff ",
               "peak / triplediff peak; diff = largest ATT(g,t) difference and the range of the SE ratios ",
               "(analytic: equal; bootstrap: different draws)."), "",
        bench_table_md(res))
writeLines(md, file.path(out_dir, "ddd.md"))
cat(md, sep = "\n")
