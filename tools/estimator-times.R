# Time of every estimator and diagnostic's default fit, two builds side by side
# (a refactor must not make any estimator slower).
#
#   Rscript tools/estimator-times.R LIB_BEFORE LIB_AFTER [n_units periods rounds] [OUT_PREFIX]
#
# The fits are the conformance suite's default calls (tests/testthat/
# helper-conformance.R, cf_estimators) on its panel at n_units x periods
# (default 3000 x 8). Each round runs one fresh R process per build, the
# builds alternating (A B A B ...); a process fits every entry once to warm
# up, then three times, and keeps the median elapsed time. The table holds,
# per entry, the smallest of the rounds' medians for each build and their
# ratio (after / before). Written to OUT_PREFIX.md and OUT_PREFIX.csv
# (default bench/results/refactor_times). The environment variable
# DD_ENTRIES (comma-separated names, e.g. did_2x2,did_sa) restricts the
# entries timed.
args <- commandArgs(trailingOnly = TRUE)
if (length(args) && args[1] == "--child") {
  lib <- args[2]; n <- as.integer(args[3]); T <- as.integer(args[4]); out <- args[5]
  suppressPackageStartupMessages(library(diffdiff, lib.loc = lib))
  sys.source(file.path("tests", "testthat", "helper-conformance.R"), envir = globalenv())
  d <- cf_big(n, T)
  ent <- names(cf_estimators)
  only <- Sys.getenv("DD_ENTRIES")
  if (nzchar(only)) ent <- intersect(ent, strsplit(only, ",", fixed = TRUE)[[1]])
  res <- vapply(ent, function(e) {
    f <- cf_estimators[[e]]$fit
    run <- function() suppressWarnings(suppressMessages(f(d, list())))
    set.seed(1); run()
    median(vapply(1:3, function(i) { set.seed(1); system.time(run())[["elapsed"]] }, numeric(1)))
  }, numeric(1))
  saveRDS(res, out)
  quit(save = "no")
}
libA <- args[1]; libB <- args[2]
n <- if (length(args) >= 3) as.integer(args[3]) else 3000L
T <- if (length(args) >= 4) as.integer(args[4]) else 8L
rounds <- if (length(args) >= 5) as.integer(args[5]) else 3L
prefix <- if (length(args) >= 6) args[6] else file.path("bench", "results", "refactor_times")
me <- sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))
A <- B <- NULL
for (r in seq_len(rounds)) for (w in c("A", "B")) {
  tf <- tempfile(fileext = ".rds")
  st <- system2(file.path(R.home("bin"), "Rscript"),
                c(me, "--child", if (w == "A") libA else libB, n, T, tf))
  if (st != 0L || !file.exists(tf)) stop("the child process for build ", w, " failed")
  x <- readRDS(tf)
  if (w == "A") A <- if (is.null(A)) x else pmin(A, x) else B <- if (is.null(B)) x else pmin(B, x)
  cat(sprintf("round %d build %s done\n", r, w))
}
tab <- data.frame(estimator = names(A), before_s = round(A, 4), after_s = round(B[names(A)], 4),
                  ratio = round(B[names(A)] / A, 3), row.names = NULL)
dir.create(dirname(prefix), showWarnings = FALSE, recursive = TRUE)
utils::write.csv(tab, paste0(prefix, ".csv"), row.names = FALSE)
md <- c(sprintf("# Default fit times before and after (panel %d units x %d periods; min over %d rounds of the median of 3)",
                n, T, rounds), "", "| estimator | before (s) | after (s) | after / before |", "|---|---|---|---|",
        sprintf("| %s | %.4f | %.4f | %.3f |", tab$estimator, tab$before_s, tab$after_s, tab$ratio))
writeLines(md, paste0(prefix, ".md"))
print(tab)
cat(sprintf("slowest ratio %.3f (%s)\n", max(tab$ratio), tab$estimator[which.max(tab$ratio)]))
