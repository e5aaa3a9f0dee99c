# bench/twfe.R: diffdiff::did_twfe against fixest::feols on the same data, in
# one R process, same vcov (clustered by unit) and the same thread count (1 and
# 2). Sizes: 10,000 units x 10 periods, 20,000 x 12, and a 1,000,000-row panel
# with three fixed-effect dimensions (unit, period, firm). Each timing is the
# median of `reps` runs in this process; memory is the peak resident-set growth
# during one fit in a fresh process (see peak_mb), which counts C/C++
# allocations as well as R's. Answers are checked to agree before timing.
# Usage: Rscript bench/twfe.R [reps]   (writes bench/results/twfe.{json,md})
suppressPackageStartupMessages({library(diffdiff); library(fixest)})
args <- commandArgs(TRUE)
reps <- if (length(args)) as.integer(args[1]) else 5L
out_dir <- file.path("bench", "results")
dir.create(out_dir, showWarnings = FALSE, recursive = TRUE)

make_panel <- function(n_units, n_t, firms = 0, seed = 1) {
  set.seed(seed)
  id <- rep(seq_len(n_units), each = n_t); t <- rep(seq_len(n_t), n_units)
  g <- sample(c(0, seq(3, n_t - 1, by = 2)), n_units, replace = TRUE)[id]
  d <- data.frame(id = id, t = t)
  if (firms > 0) {
    # workers and firms: each unit starts at a random firm and moves to another
    # random firm with probability 0.1 each period (an AKM-style mobility graph)
    move <- t == 1 | runif(length(t)) < 0.1
    firm <- ifelse(move, sample.int(firms, length(t), replace = TRUE) - 1L, NA_integer_)
    d$firm <- firm[cummax(ifelse(move, seq_along(t), 0L))]
  }
  d$d <- as.integer(g > 0 & t >= g)
  d$x1 <- rnorm(nrow(d)); d$x2 <- rnorm(nrow(d))
  d$y <- rnorm(n_units)[id] + 0.1 * t + 1.5 * d$d + 0.5 * d$x1 - 0.3 * d$x2 +
    (if (firms > 0) rnorm(firms)[d$firm + 1] else 0) + rnorm(nrow(d))
  d
}

# Peak memory of one fit, measured in a fresh R process (callr) that loads the
# data and both packages first, so that neither fit benefits from memory the
# other left in the heap: growth of the peak resident set (VmHWM, reset
# through /proc/self/clear_refs) over the resident set before the fit.
peak_mb <- function(rds, which, nth, three) {
  callr::r(function(rds, which, nth, three) {
    suppressPackageStartupMessages({library(diffdiff); library(fixest)})
    d <- readRDS(rds)
    rss <- function(field) {
      s <- readLines("/proc/self/status")
      as.numeric(sub("[^0-9]*([0-9]+).*", "\\1", grep(paste0("^", field, ":"), s, value = TRUE)))
    }
    dd_threads(nth)
    f <- if (which == "diffdiff") function() did_twfe(d, "y", "id", "t", "d", xformla = ~ x1 + x2,
                                                      fe = if (three) "firm" else NULL)
         else function() feols(if (three) y ~ d + x1 + x2 | id + t + firm else y ~ d + x1 + x2 | id + t,
                               d, vcov = ~id, nthreads = nth, notes = FALSE)
    invisible(gc(full = TRUE))
    cat("5", file = "/proc/self/clear_refs")
    base <- rss("VmRSS")
    f()
    (rss("VmHWM") - base) / 1024
  }, args = list(rds = rds, which = which, nth = nth, three = three))
}
time_med <- function(f) {
  f()  # warm-up
  median(vapply(seq_len(reps), function(i) { gc(); system.time(f())[["elapsed"]] }, numeric(1)))
}

cases <- list(
  list(name = "10k units x 10", n = 10000, t = 10, firms = 0),
  list(name = "20k units x 12", n = 20000, t = 12, firms = 0),
  list(name = "1M rows, 3 FE (100k units x 10, 2k firms)", n = 100000, t = 10, firms = 2000))

res <- list()
for (cs in cases) {
  d <- make_panel(cs$n, cs$t, cs$firms)
  three <- cs$firms > 0
  rds <- tempfile(fileext = ".rds"); saveRDS(d, rds)
  f_dd <- function() did_twfe(d, "y", "id", "t", "d", xformla = ~ x1 + x2,
                              fe = if (three) "firm" else NULL)
  f_fx <- function(nth) feols(if (three) y ~ d + x1 + x2 | id + t + firm else y ~ d + x1 + x2 | id + t,
                              d, vcov = ~id, nthreads = nth, notes = FALSE)
  for (nth in 1:2) {
    dd_threads(nth)
    a <- f_dd(); b <- f_fx(nth)
    # agreement: both at their default FE tolerances (diffdiff 1e-8, fixest 1e-6)
    dcoef <- max(abs(coef(a) - coef(b)) / abs(coef(b)))
    dse <- max(abs(a$coeftable$std.error - se(b)) / se(b))
    stopifnot(dcoef < 1e-6, dse < 1e-6)
    t_dd <- time_med(f_dd); t_fx <- time_med(function() f_fx(nth))
    m_dd <- peak_mb(rds, "diffdiff", nth, three); m_fx <- peak_mb(rds, "fixest", nth, three)
    r <- data.frame(case = cs$name, rows = nrow(d), threads = nth,
                    diffdiff_s = t_dd, fixest_s = t_fx, time_ratio = t_dd / t_fx,
                    diffdiff_peak_mb = m_dd, fixest_peak_mb = m_fx, mem_ratio = m_dd / m_fx,
                    max_rel_diff_coef = dcoef, max_rel_diff_se = dse)
    print(r, digits = 4)
    res[[length(res) + 1]] <- r
  }
}
res <- do.call(rbind, res)
meta <- list(date = format(Sys.time(), "%Y-%m-%d %H:%M:%S %Z"), R = R.version.string,
             fixest = as.character(packageVersion("fixest")),
             diffdiff = as.character(packageVersion("diffdiff")), reps = reps,
             cores = parallel::detectCores())
if (requireNamespace("jsonlite", quietly = TRUE))
  writeLines(jsonlite::toJSON(list(meta = meta, results = res), pretty = TRUE, digits = 6),
             file.path(out_dir, "twfe.json"))
md <- c("# bench/twfe.R results", "",
        sprintf("%s; %s; fixest %s; diffdiff %s; median of %d runs; %d cores.",
                meta$date, meta$R, meta$fixest, meta$diffdiff, reps, meta$cores), "",
        "time_ratio and mem_ratio are diffdiff / fixest (below 1: diffdiff faster / smaller).", "",
        "| case | threads | diffdiff s | fixest s | time ratio | diffdiff MB | fixest MB | mem ratio | coef diff | se diff |",
        "|---|---|---|---|---|---|---|---|---|---|",
        sprintf("| %s | %d | %.3f | %.3f | %.2f | %.1f | %.1f | %.2f | %.1e | %.1e |", res$case, res$threads,
                res$diffdiff_s, res$fixest_s, res$time_ratio, res$diffdiff_peak_mb, res$fixest_peak_mb,
                res$mem_ratio, res$max_rel_diff_coef, res$max_rel_diff_se))
writeLines(md, file.path(out_dir, "twfe.md"))
cat(md, sep = "\n")
