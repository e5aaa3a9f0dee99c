# bench/twfe.R: diffdiff::did_twfe against fixest::feols on the same data, in
# one R process: unit + period fixed effects, standard errors clustered by
# unit, the same thread count on both sides (1 and 2).
# Sizes: 10k to 30M rows (units x 10 periods, staggered 0/1 treatment), plus
# two 1M-row variants: two covariates, and a third fixed effect (firms, an
# AKM-style mobility graph).
# Time: paired interleaved runs (diffdiff, fixest, diffdiff, ...; gc() before
# each), the ratio is the median of the per-pair ratios; below 0.5M rows each
# timing is the mean of `inner` calls so that it is well above the clock's
# resolution. Memory: peak resident-set growth during one fit in a fresh
# process (bench/measure.R), which counts C/C++ allocations as well as R's.
# The answers are checked to agree (coefficient and clustered SE, relative
# difference < 1e-6 at both packages' default tolerances) before timing.
# Usage: Rscript bench/twfe.R [max_rows]  (writes bench/results/twfe.{csv,md,json})
suppressPackageStartupMessages({library(diffdiff); library(fixest)})
args <- commandArgs(TRUE)
max_rows <- if (length(args)) as.numeric(args[1]) else 3e7
out_dir <- file.path("bench", "results")
dir.create(out_dir, showWarnings = FALSE, recursive = TRUE)
measure_src <- normalizePath(file.path("bench", "measure.R"))

make_panel <- function(rows, n_t = 10, firms = 0, covariates = FALSE, seed = 1) {
  set.seed(seed)
  n_units <- rows / n_t
  id <- rep(seq_len(n_units), each = n_t); t <- rep(seq_len(n_t), n_units)
  g <- sample(c(0, seq(3, n_t - 1, by = 2)), n_units, replace = TRUE)[id]
  d <- data.frame(id = id, t = t)
  if (firms > 0) {
    # each unit starts at a random firm and moves with probability 0.1 a period
    move <- t == 1 | runif(length(t)) < 0.1
    firm <- ifelse(move, sample.int(firms, length(t), replace = TRUE) - 1L, NA_integer_)
    d$firm <- firm[cummax(ifelse(move, seq_along(t), 0L))]
  }
  d$d <- as.integer(g > 0 & t >= g)
  d$y <- rnorm(n_units)[id] + 0.1 * t + 1.5 * d$d + rnorm(rows) +
    (if (firms > 0) rnorm(firms)[d$firm + 1] else 0)
  if (covariates) {
    d$x1 <- rnorm(rows); d$x2 <- rnorm(rows)
    d$y <- d$y + 0.5 * d$x1 - 0.3 * d$x2
  }
  d
}

# the two calls, as functions of the data, the case and the thread count
fit_dd <- function(d, cs) did_twfe(d, "y", "id", "t", "d", xformla = if (cs$cov) ~ x1 + x2,
                                   fe = if (cs$firms > 0) "firm")
fit_fx <- function(d, cs, nth) {
  f <- if (cs$cov) y ~ d + x1 + x2 | id + t else if (cs$firms > 0) y ~ d | id + t + firm else y ~ d | id + t
  feols(f, d, vcov = ~id, nthreads = nth, notes = FALSE)
}

peak_mb <- function(rds, which, cs, nth) {
  callr::r(function(rds, which, cs, nth, measure_src, fit_dd, fit_fx) {
    suppressPackageStartupMessages({library(diffdiff); library(fixest)})
    source(measure_src)
    d <- readRDS(rds)
    dd_threads(nth)
    run <- if (which == "diffdiff") function() fit_dd(d, cs) else function() fit_fx(d, cs, nth)
    bench_measure(run)$mb
  }, args = list(rds = rds, which = which, cs = cs, nth = nth, measure_src = measure_src,
                 fit_dd = fit_dd, fit_fx = fit_fx))
}

paired <- function(fa, fb, pairs, inner) {
  fa(); fb()                                   # warm-up
  r <- vapply(seq_len(pairs), function(i) {
    gc(); a <- system.time(for (k in seq_len(inner)) fa())[["elapsed"]] / inner
    gc(); b <- system.time(for (k in seq_len(inner)) fb())[["elapsed"]] / inner
    c(a, b)
  }, numeric(2))
  c(dd = stats::median(r[1, ]), fx = stats::median(r[2, ]), ratio = stats::median(r[1, ] / r[2, ]))
}

sizes <- c(1e4, 1e5, 2e5, 1e6, 3e6, 1e7, 3e7)
cases <- c(lapply(sizes[sizes <= max_rows], function(n)
             list(name = sprintf("%s rows", format(n, big.mark = ",", scientific = FALSE)), rows = n,
                  cov = FALSE, firms = 0)),
           list(list(name = "1,000,000 rows, 2 covariates", rows = 1e6, cov = TRUE, firms = 0),
                list(name = "1,000,000 rows, 3 FE (2k firms)", rows = 1e6, cov = FALSE, firms = 2000)))

res <- list()
for (cs in cases) {
  d <- make_panel(cs$rows, firms = cs$firms, covariates = cs$cov)
  rds <- tempfile(fileext = ".rds"); saveRDS(d, rds, compress = FALSE)
  pairs <- if (cs$rows <= 2e5) 21L else if (cs$rows <= 1e6) 11L else if (cs$rows <= 3e6) 5L else 3L
  inner <- if (cs$rows < 5e5) max(1L, as.integer(2e6 / cs$rows)) else 1L
  for (nth in 1:2) {
    dd_threads(nth)
    a <- fit_dd(d, cs); b <- fit_fx(d, cs, nth)
    nm <- sub("^d$", "ATT", names(coef(b)))            # fixest's "d" is diffdiff's "ATT"
    dcoef <- max(abs(coef(a)[nm] - coef(b)) / abs(coef(b)))
    dse <- max(abs(a$coeftable$std.error[match(nm, a$coeftable$term)] - se(b)) / se(b))
    stopifnot(dcoef < 1e-6, dse < 1e-6)
    tm <- paired(function() fit_dd(d, cs), function() fit_fx(d, cs, nth), pairs, inner)
    m_dd <- peak_mb(rds, "diffdiff", cs, nth); m_fx <- peak_mb(rds, "fixest", cs, nth)
    r <- data.frame(case = cs$name, rows = cs$rows, threads = nth, pairs = pairs, inner = inner,
                    diffdiff_s = tm[["dd"]], fixest_s = tm[["fx"]], time_ratio = tm[["ratio"]],
                    diffdiff_peak_mb = m_dd, fixest_peak_mb = m_fx, mem_ratio = m_dd / m_fx,
                    max_rel_diff_coef = dcoef, max_rel_diff_se = dse)
    print(r, digits = 4)
    res[[length(res) + 1L]] <- r
  }
  unlink(rds); rm(d); invisible(gc())
}
res <- do.call(rbind, res)
meta <- list(date = format(Sys.time(), "%Y-%m-%d %H:%M:%S %Z"), R = R.version.string,
             fixest = as.character(packageVersion("fixest")),
             diffdiff = as.character(packageVersion("diffdiff")), cores = parallel::detectCores())
utils::write.csv(res, file.path(out_dir, "twfe.csv"), row.names = FALSE)
if (requireNamespace("jsonlite", quietly = TRUE))
  writeLines(jsonlite::toJSON(list(meta = meta, results = res), pretty = TRUE, digits = 6),
             file.path(out_dir, "twfe.json"))
md <- c("# bench/twfe.R results", "",
        sprintf("%s; %s; fixest %s; diffdiff %s; %d cores.", meta$date, meta$R, meta$fixest,
                meta$diffdiff, meta$cores), "",
        paste("Unit + period fixed effects, SEs clustered by unit. time ratio = median over interleaved",
              "pairs of diffdiff / fixest elapsed time (target <= 0.667, i.e. diffdiff >= 1.5x faster);",
              "memory = peak RSS growth of one fit in a fresh process (target mem ratio <= 1)."), "",
        "| case | threads | pairs x inner | diffdiff s | fixest s | time ratio | diffdiff MB | fixest MB | mem ratio | coef diff | se diff |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
        sprintf("| %s | %d | %d x %d | %.4f | %.4f | %.3f | %.1f | %.1f | %.2f | %.1e | %.1e |",
                res$case, res$threads, res$pairs, res$inner, res$diffdiff_s, res$fixest_s, res$time_ratio,
                res$diffdiff_peak_mb, res$fixest_peak_mb, res$mem_ratio, res$max_rel_diff_coef,
                res$max_rel_diff_se))
writeLines(md, file.path(out_dir, "twfe.md"))
cat(md, sep = "\n")
