# bench/had_stute.R: did_had()'s Stute linearity tests against StuteTest on
# the same data. 1,000, 2,000 and 3,000 groups x 6 periods, adoption in
# period 4 (doses from 0 up), 2 effects and 2 placebos: four Stute tests of 999 wild-bootstrap
# draws each. The peer is StuteTest::stute_test() (1.0.2) on each horizon's
# first differences and doses (order 1 for the effects, 0 for the placebos,
# as DIDHAD calls it); diffdiff is the whole did_had(stute = TRUE) fit
# (estimates, local-linear SEs and the four tests), so the ratio understates
# the tests' own speed-up. The statistics must agree to 1e-10 (the bootstrap
# p-values are drawn differently: they must agree within Monte Carlo error,
# 4 SE of a p-value from 999 draws). Each side runs in a fresh process
# (callr) reporting its time and peak-memory growth (bench/measure.R).
# Usage: Rscript bench/had_stute.R [reps]
#        Rscript bench/had_stute.R --side had|stute [groups]   (one side alone, for whole-process timing)
suppressPackageStartupMessages(library(diffdiff))
args <- commandArgs(TRUE)
B <- 999
sizes <- c(1000, 2000, 3000)
make_data <- function(G) {
  set.seed(21)
  dose <- stats::rexp(G, 2)
  d <- expand.grid(t = 1:6, g = 1:G)[, c("g", "t")]
  d$D <- ifelse(d$t >= 4, dose[d$g], 0)
  d$y <- stats::rnorm(G)[d$g] + 0.2 * d$t + d$D * (1 + 0.5 * dose[d$g]) + stats::rnorm(nrow(d))
  d
}
sides <- list(
  had = function(d) {
    set.seed(1)
    f <- did_had(d, "y", "g", "t", "D", effects = 2, placebo = 2, stute = TRUE, stute_nboot = B)
    list(stat = f$tests$stute_statistic, p = f$tests$stute_p.value)
  },
  stute = function(d) {
    set.seed(1)
    Yt <- function(t) d$y[d$t == t][order(d$g[d$t == t])]
    Xt <- function(t) d$D[d$t == t][order(d$g[d$t == t])]
    out <- lapply(1:4, function(k) {
      pl <- k > 2; l <- if (pl) k - 2 else k
      dy <- if (pl) Yt(3 - l) - Yt(3) else Yt(3 + l) - Yt(3)
      r <- StuteTest::stute_test(data.frame(Y = dy, D = Xt(3 + l)), "Y", "D", order = if (pl) 0 else 1, brep = B)
      c(r$results[1, "t stat"], r$results[1, "p-value"])
    })
    list(stat = vapply(out, `[`, 0, 1), p = vapply(out, `[`, 0, 2))
  })

if (length(args) >= 2 && args[1] == "--side") {
  if (args[2] == "stute") suppressPackageStartupMessages(library(StuteTest))
  r <- sides[[args[2]]](make_data(if (length(args) >= 3) as.numeric(args[3]) else 3000))
  cat(sprintf("%.10g %.4f\n", r$stat, r$p), sep = "")
  quit(save = "no")
}

reps <- if (length(args) >= 1) as.integer(args[1]) else 3L
out_dir <- file.path("bench", "results")
dir.create(out_dir, showWarnings = FALSE, recursive = TRUE)
helper <- normalizePath(file.path("bench", "measure.R"))
source(helper)
rds <- tempfile(fileext = ".rds")
fresh <- function(side, reps)
  callr::r(function(rds, side, reps, helper, sides, B) {
    assign("B", B, envir = globalenv())
    suppressPackageStartupMessages(library(diffdiff))
    if (side == "stute") suppressPackageStartupMessages(library(StuteTest))
    dd_threads(2)
    d <- readRDS(rds)
    source(helper)
    bench_measure(function() sides[[side]](d), reps)
  }, args = list(rds = rds, side = side, reps = reps, helper = helper, sides = sides, B = B))
stopifnot(requireNamespace("StuteTest", quietly = TRUE))
rows <- list()
for (G in sizes) {
  saveRDS(make_data(G), rds)
  D <- fresh("had", reps)
  P <- fresh("stute", 1L)
  es <- max(abs(D$res$stat - P$res$stat) / pmax(1e-300, abs(P$res$stat)))
  ep <- max(abs(D$res$p - P$res$p))
  mc <- 4 * sqrt(0.25 / B)
  stopifnot(es < 1e-10, ep < mc)
  rows[[length(rows) + 1L]] <- data.frame(
    case = sprintf("did_had(stute = TRUE): %s groups x 6 periods, 4 Stute tests x %d draws", format(G, big.mark = ","), B),
    peer = sprintf("StuteTest %s", packageVersion("StuteTest")), peer_s = P$time,
    diffdiff_s = D$time, speedup = P$time / D$time, peer_peak_mb = P$mb, diffdiff_peak_mb = D$mb,
    mem_ratio = D$mb / P$mb,
    diff = sprintf("statistics %.1e (relative); p-values %.3f (MC bound %.3f)", es, ep, mc))
  print(rows[[length(rows)]], digits = 4)
}
res <- do.call(rbind, rows)
meta <- list(date = format(Sys.time(), "%Y-%m-%d %H:%M:%S %Z"), R = R.version.string,
             StuteTest = format(packageVersion("StuteTest")), diffdiff = format(packageVersion("diffdiff")),
             reps = reps, threads = 2L)
if (requireNamespace("jsonlite", quietly = TRUE))
  writeLines(jsonlite::toJSON(list(meta = meta, results = res), pretty = TRUE, digits = 6, na = "null"),
             file.path(out_dir, "had_stute.json"))
md <- c("# bench/had_stute.R results", "",
        sprintf("%s; %s; StuteTest %s; diffdiff %s with 2 threads.", meta$date, meta$R, meta$StuteTest,
                meta$diffdiff), "",
        paste0("Each side in a fresh process: the peer one run, diffdiff the median of ", reps, " runs (the first ",
               "gives the peak memory). speedup = peer time / diffdiff time; mem ratio = diffdiff peak / peer ",
               "peak; diff = agreement of the Stute statistics and p-values."), "",
        bench_table_md(res))
writeLines(md, file.path(out_dir, "had_stute.md"))
cat(md, sep = "\n")
