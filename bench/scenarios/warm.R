# The six practitioner workflows as an R user runs them: in one warm R
# session. Each round starts a fresh R process per chain, loads diffdiff,
# makes one small call (a 40-row did_2x2), then runs the chain at each of
# its scales in order (small, medium, large: diff-diff's harness likewise
# runs a chain's scales one after the other in one Python process), and
# then each scale a second time ("again": a user iterating on an analysis).
# Phases are timed inside the process as bench/scenarios/harness.R does.
#
#   Rscript bench/scenarios/warm.R [rounds]      (default 5)
#
# diff-diff's times are not re-run here: they are the medians recorded in
# bench/results/scenarios.json by bench/scenarios/run.R (diff-diff 3.3.2,
# pure-Python backend, single-threaded BLAS, this machine, paired rounds;
# the date is in bench/results/scenarios.md). The HonestDiD phases compute
# different things on the two sides (see scenarios.md), so the ratios are
# given with and without them; the HonestDiD phase against HonestDiD itself
# is bench/scenarios/honest_peer.R (bench/results/scenarios-honest.md).
# Writes bench/results/scenarios-warm.{md,json}.
args <- commandArgs(TRUE)
here <- dirname(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE)[1]))
root <- normalizePath(file.path(here, "..", ".."))
scen <- list(campaign_staggered = c("small", "medium", "large"), brand_awareness_survey = c("small", "medium", "large"),
             brfss_panel = c("small", "medium", "large"), geo_few_markets = c("small", "medium", "large"),
             reversible_dcdh = "small", dose_response = "small")
honest_phase <- function(p) grepl("honest", p)

# ---- child: one chain, all its scales, twice, in this process ----
if (length(args) >= 1 && args[1] == "--child") {
  name <- args[2]; out <- args[3]
  Sys.setenv(SCENARIO_NO_MAIN = "1", SCENARIO_DIR = here)
  suppressPackageStartupMessages(library(diffdiff))
  source(file.path(here, paste0(name, ".R")), local = TRUE)
  set.seed(1)
  tiny <- data.frame(y = stats::rnorm(40), d = rep(0:1, 20), p = rep(0:1, each = 20))
  invisible(did_2x2(tiny, "y", "d", "p"))                     # the one small call
  data <- lapply(stats::setNames(nm = scen[[name]]), get(paste0(name, "_data")))   # built before any timing
  ph <- get(paste0(name, "_phases"))()
  runs <- list()
  for (pass in c("first", "again")) for (s in scen[[name]]) {
    r <- suppressWarnings(scenario_run(name, s, ph, data[[s]]))
    if (!all(r$phases$ok)) stop(sprintf("%s/%s: phase %s failed: %s", name, s, r$phases$phase[!r$phases$ok][1],
                                        r$phases$error[!r$phases$ok][1]))
    runs[[length(runs) + 1L]] <- data.frame(scenario = name, scale = s, pass = pass, phase = r$phases$phase,
                                            seconds = r$phases$seconds)
  }
  utils::write.csv(do.call(rbind, runs), out, row.names = FALSE)
  quit(status = 0)
}

# ---- parent ----
rounds <- if (length(args) >= 1) as.integer(args[1]) else 5L
out_dir <- file.path(root, "bench", "results")
suppressPackageStartupMessages(library(diffdiff))
py <- jsonlite::fromJSON(file.path(out_dir, "scenarios.json"))$table
tmp <- tempfile("warm-"); dir.create(tmp)
all <- list()
for (i in seq_len(rounds)) for (name in names(scen)) {
  f <- file.path(tmp, sprintf("%s_%d.csv", name, i))
  st <- system2(file.path(R.home("bin"), "Rscript"), c(file.path(here, "warm.R"), "--child", name, f),
                stdout = FALSE, stderr = FALSE)
  if (st != 0 || !file.exists(f)) stop(sprintf("warm session for %s failed (round %d)", name, i))
  x <- utils::read.csv(f); x$round <- i
  all[[length(all) + 1L]] <- x
  message(sprintf("round %d %s: done", i, name))
}
raw <- do.call(rbind, all)
tot <- function(x, nh) sum(x$seconds[if (nh) !honest_phase(x$phase) else TRUE])
rows <- list()
for (name in names(scen)) for (s in scen[[name]]) {
  k <- raw[raw$scenario == name & raw$scale == s, ]
  per <- function(pass, nh) vapply(seq_len(rounds), function(i) tot(k[k$round == i & k$pass == pass, ], nh), 0)
  p <- py[py$scenario == name & py$scale == s, ]
  rows[[length(rows) + 1L]] <- data.frame(
    scenario = name, scale = s,
    first_s = stats::median(per("first", FALSE)), again_s = stats::median(per("again", FALSE)),
    first_nh_s = stats::median(per("first", TRUE)), again_nh_s = stats::median(per("again", TRUE)),
    py_s = p$diffdiff_py_s, py_nh_s = p$diffdiff_py_nohonest_s, fresh_s = p$diffdiff_s, fresh_nh_s = p$diffdiff_nohonest_s)
}
tab <- do.call(rbind, rows)
tab$speedup_first <- tab$py_s / tab$first_s
tab$speedup_first_nh <- tab$py_nh_s / tab$first_nh_s
tab$speedup_again_nh <- tab$py_nh_s / tab$again_nh_s
tab$speedup_fresh_nh <- tab$py_nh_s / tab$fresh_nh_s
phases <- stats::aggregate(seconds ~ scenario + scale + pass + phase, raw, stats::median)
fmt <- function(x, d = 3) ifelse(is.na(x), "-", formatC(x, format = "f", digits = d))
fx <- function(x) ifelse(is.na(x), "-", sprintf("%.1fx", x))
md <- c("# The six practitioner workflows in a warm R session", "",
        sprintf("Run %s on this machine (%s; R %s, diffdiff %s); `Rscript bench/scenarios/warm.R %d`. Each of %d rounds: per chain a fresh R process, diffdiff loaded, one small call (a 40-row `did_2x2`), then the chain at each scale in order (small, medium, large, as diff-diff's harness runs them in one Python process) and then each scale again. Times: medians over the rounds of each chain's total (phases timed inside the process; data generation not timed).",
                format(Sys.time(), "%Y-%m-%d"), utils::sessionInfo()$running, paste(R.version$major, R.version$minor, sep = "."),
                as.character(utils::packageVersion("diffdiff")), rounds, rounds),
        "", "diff-diff: not re-run; its times are the medians recorded in `bench/results/scenarios.json` by `bench/scenarios/run.R` on this machine (diff-diff 3.3.2, pure-Python backend, single-threaded BLAS; date and method in `scenarios.md`). \"fresh\": diffdiff's fresh-process times from the same file, kept for the record.",
        "", "The HonestDiD phases compute different things on the two sides (`scenarios.md`); \"w/o HonestDiD\" leaves those phases out on both sides. Against HonestDiD itself the phase is 420x faster (`scenarios-honest.md`).",
        "", "| scenario | scale | diffdiff warm s | diff-diff s | speedup | warm w/o HonestDiD s | again w/o HonestDiD s | diff-diff w/o HonestDiD s | speedup w/o HonestDiD (warm) | (again) | (fresh process) |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
        sprintf("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |", tab$scenario, tab$scale, fmt(tab$first_s), fmt(tab$py_s),
                fx(tab$speedup_first), fmt(tab$first_nh_s), fmt(tab$again_nh_s), fmt(tab$py_nh_s), fx(tab$speedup_first_nh),
                fx(tab$speedup_again_nh), fx(tab$speedup_fresh_nh)),
        "", "## Phases (warm, first pass; medians, seconds)", "",
        "| scenario | scale | phase | s |", "|---|---|---|---|",
        with(phases[phases$pass == "first", ], sprintf("| %s | %s | %s | %s |", scenario, scale, phase, fmt(seconds, 4))))
writeLines(md, file.path(out_dir, "scenarios-warm.md"))
writeLines(jsonlite::toJSON(list(table = tab, rounds = rounds, date = format(Sys.time(), "%Y-%m-%d")), auto_unbox = TRUE,
                            digits = 6, pretty = TRUE), file.path(out_dir, "scenarios-warm.json"))
message("wrote bench/results/scenarios-warm.md and scenarios-warm.json")
