# The six practitioner workflows: diffdiff against diff-diff (Python) on this
# machine, phase by phase; writes bench/results/scenarios.md and .json.
#
#   Rscript bench/scenarios/run.R [reps]
#
# diffdiff: each scenario and scale in `reps` fresh R processes (default 3;
# the medians are reported). diff-diff: its own scenario scripts
# (benchmarks/speed_review/bench_<scenario>.py), unchanged, pure-Python
# backend, single-threaded BLAS, once each (or the median of several earlier
# runs: SCENARIO_PY_DIR below), via tools/diffdiff-py-scenarios.py,
# from the checkout named by DIFFDIFF_PY_PATH (skipped with a message when
# absent); its published times (Apple M4, in the checkout's baselines/) are
# listed too. Agreement: on data built by diff-diff's own scenario builders
# (same seeds), the quantities both compute the same way (Callaway-Sant'Anna,
# the 2x2 with and without the design, the design-based cell means,
# synthetic DiD with jackknife SEs, the dose-response ATT and ACRT) are
# compared, and diffdiff's whole chain is run on that data.
args <- commandArgs(TRUE)
reps <- if (length(args) >= 1) as.integer(args[1]) else 3L
here <- dirname(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE)[1]))
root <- normalizePath(file.path(here, "..", ".."))
out_dir <- file.path(root, "bench", "results")
tmp <- tempfile("scenarios-")
dir.create(tmp)
suppressPackageStartupMessages(library(diffdiff))

scen <- list(campaign_staggered = c("small", "medium", "large"), brand_awareness_survey = c("small", "medium", "large"),
             brfss_panel = c("small", "medium", "large"), geo_few_markets = c("small", "medium", "large"),
             reversible_dcdh = "small", dose_response = "small")
read_json <- function(f) jsonlite::fromJSON(f, simplifyVector = TRUE)

# ---- diffdiff: fresh processes ----
run_r <- function(name, scale, data = "") {
  f <- file.path(tmp, sprintf("r_%s_%s_%s.json", name, scale, basename(tempfile(""))))
  st <- system2(file.path(R.home("bin"), "Rscript"), c(file.path(here, paste0(name, ".R")), scale, f, data),
                stdout = FALSE, stderr = FALSE)
  if (st != 0 || !file.exists(f)) stop(sprintf("diffdiff scenario %s/%s failed", name, scale))
  read_json(f)
}
# SCENARIO_PAIRED=1 (with DIFFDIFF_PY_PATH): the machine's speed drifts, so
# each of the `reps` rounds runs a chain's scales in diffdiff and then
# diff-diff's script for the same chain (its scales in one process, as its
# harness does), one after the other, and the speedup is the median of the
# round-by-round ratios; geo_few_markets (diff-diff: minutes per scale) is
# not paired (its diff-diff times come from SCENARIO_PY_DIR or one run)
paired <- nzchar(Sys.getenv("SCENARIO_PAIRED")) && nzchar(Sys.getenv("DIFFDIFF_PY_PATH"))
# (one output directory per round and chain: the tool replaces its copy of
# diff-diff's scripts and results on every call)
pair_dir <- function(i, name) file.path(tmp, sprintf("pyrep%d_%s", i, name))
all_runs <- list()
for (i in seq_len(reps)) for (name in names(scen)) {
  for (scale in scen[[name]]) all_runs[[paste(name, scale)]][[i]] <- run_r(name, scale)
  if (paired && name != "geo_few_markets")
    system2(if (file.exists("/usr/bin/python3")) "/usr/bin/python3" else Sys.which("python3"),
            c(file.path(root, "tools", "diffdiff-py-scenarios.py"), pair_dir(i, name), "--timing", "--scenarios", name),
            stdout = FALSE, stderr = FALSE, env = paste0("DIFFDIFF_PY_PATH=", Sys.getenv("DIFFDIFF_PY_PATH")))
}
rres <- list()
for (name in names(scen)) for (scale in scen[[name]]) {
  runs <- all_runs[[paste(name, scale)]]
  ph <- runs[[1]]$phases[, c("phase", "seconds")]
  ph$seconds <- apply(sapply(runs, function(r) r$phases$seconds), 1, stats::median)
  rres[[paste(name, scale)]] <- list(name = name, scale = scale, phases = ph,
                                     total = stats::median(sapply(runs, function(r) r$total_seconds)),
                                     peak_mb = stats::median(sapply(runs, function(r) r$memory$peak_mb)),
                                     totals = sapply(runs, function(r) r$total_seconds),
                                     totals_nh = sapply(runs, function(r)
                                       r$total_seconds - sum(r$phases$seconds[grepl("honest", r$phases$phase)])))
  message(sprintf("diffdiff %s/%s: %.3f s", name, scale, rres[[paste(name, scale)]]$total))
}

# ---- diff-diff ----
py_path <- Sys.getenv("DIFFDIFF_PY_PATH")
py <- "/usr/bin/python3"
if (!file.exists(py)) py <- Sys.which("python3")
tool <- file.path(root, "tools", "diffdiff-py-scenarios.py")
pyout <- file.path(tmp, "py")
have_py <- nzchar(py_path) && nzchar(py)
# SCENARIO_PY_DIR: the output directory of an earlier
# tools/diffdiff-py-scenarios.py run (--timing --all-scales, and --data
# --scales small) to reuse instead of running diff-diff again; several
# directories separated by ":" (further --timing runs) give the median of
# their times (the data and the agreement checks come from the first)
py_dirs <- NULL
if (nzchar(Sys.getenv("SCENARIO_PY_DIR"))) {
  py_dirs <- strsplit(Sys.getenv("SCENARIO_PY_DIR"), ":", fixed = TRUE)[[1]]
  pyout <- py_dirs[1]
  have_py <- nzchar(py)
} else if (have_py) {
  system2(py, c(tool, pyout, "--timing", "--all-scales"), env = paste0("DIFFDIFF_PY_PATH=", py_path))
  system2(py, c(tool, pyout, "--data", "--scales", "small"), env = paste0("DIFFDIFF_PY_PATH=", py_path))
}
have_py <- have_py && dir.exists(pyout) && !file.exists(file.path(pyout, "skipped.txt"))
if (!have_py) message("diff-diff not run: set DIFFDIFF_PY_PATH to a diff-diff checkout (python3 with numpy, scipy, pandas)")
py_json <- function(dir, name, scale) {
  f <- c(file.path(dir, sprintf("%s_%s_python.json", name, scale)), file.path(dir, sprintf("%s_python.json", name)))
  f <- f[file.exists(f)]
  if (!length(f)) return(NULL)
  read_json(f[1])
}
pub_dir <- if (nzchar(py_path)) file.path(py_path, "benchmarks", "speed_review", "baselines") else ""
here_dirs <- file.path(if (is.null(py_dirs)) pyout else py_dirs, "speed_review", "baselines")
# the median over the runs that have this chain and scale (phase by phase;
# the total and the peak memory likewise); field runs: how many
py_json_med <- function(dirs, name, scale) {
  js <- Filter(Negate(is.null), lapply(dirs, py_json, name = name, scale = scale))
  if (!length(js)) return(NULL)
  out <- js[[1]]
  out$total_seconds <- stats::median(vapply(js, function(j) j$total_seconds, 0))
  out$memory$peak_mb <- stats::median(vapply(js, function(j) j$memory$peak_mb, 0))
  for (p in names(out$phases))
    out$phases[[p]]$seconds <- stats::median(vapply(js, function(j) j$phases[[p]]$seconds, 0))
  out$runs <- length(js)
  out
}

# ---- agreement on diff-diff's data ----
agree <- NULL
if (have_py) {
  D <- file.path(pyout, "data")
  J <- function(n) read_json(file.path(D, paste0(n, ".json")))
  C <- function(n) utils::read.csv(file.path(D, paste0(n, ".csv")))
  rel <- function(a, b) max(abs(a - b) / pmax(abs(b), 1e-300))
  se_of <- function(f, term) f$coeftable$std.error[f$coeftable$term == term]
  rows <- list()
  add <- function(s, what, a, b) rows[[length(rows) + 1L]] <<- data.frame(scenario = s, quantity = what,
                                                                          rel_diff = rel(a, b))
  d <- C("campaign_staggered_small"); j <- J("campaign_staggered_small")
  a <- aggregate(suppressWarnings(did_cs(d, "outcome", "unit", "period", "first_treat", nboot = 0)), "simple")
  add("campaign_staggered", "Callaway-Sant'Anna overall ATT (no covariates)", coef(a)[["ATT"]], j$cs_nocov_att)
  add("campaign_staggered", "its standard error (analytic)", se_of(a, "ATT"), j$cs_nocov_se)
  d <- C("brand_awareness_survey_small"); j <- J("brand_awareness_survey_small")
  n <- did_2x2(d, "outcome", "treat_unit", "post", vcov = "HC1")
  t <- did_2x2(d, "outcome", "treat_unit", "post",
               survey = survey_design(d, weights = ~weight, strata = ~stratum, ids = ~psu, fpc = ~fpc, nest = TRUE))
  add("brand_awareness_survey", "2x2 ATT and HC1 SE", c(coef(n)[["ATT"]], se_of(n, "ATT")), c(j$naive_att, j$naive_se))
  add("brand_awareness_survey", "2x2 ATT and SE under the design (strata, PSU, fpc)", c(coef(t)[["ATT"]], se_of(t, "ATT")),
      c(j$tsl_att, j$tsl_se))
  d <- C("brfss_panel_small"); j <- J("brfss_panel_small")
  cells <- aggregate_survey(d, "y", c("state", "year"), survey_design(d, weights = ~finalwt, strata = ~strata, ids = ~psu))
  add("brfss_panel", "500 design-based cell means", cells$y, j$y_mean)
  add("brfss_panel", "their standard errors (domain estimation)", cells$y_se, j$y_se)
  d <- C("geo_few_markets_small"); j <- J("geo_few_markets_small")
  g <- did_sdid(d, "outcome", "unit", "period", "treated", se = "jackknife")
  add("geo_few_markets", "synthetic DiD ATT and jackknife SE", c(coef(g)[[1]], g$coeftable$std.error[1]), c(j$att, j$se))
  d <- C("dose_response_small"); j <- J("dose_response_small")
  f <- did_dose(d, "outcome", "unit", "period", "first_treat", "dose", degree = 3, num_knots = 1, nboot = 0,
                control_group = "nevertreated")
  ct <- f$coeftable
  add("dose_response", "overall ATT and ACRT (cubic, one knot)", ct$estimate[match(c("ATT", "ACRT"), ct$term)],
      c(j$att_o, j$acrt_o))
  agree <- do.call(rbind, rows)
  # diffdiff's whole chain on diff-diff's data (the same column names)
  chain <- list()
  for (nm in c("campaign_staggered", "brand_awareness_survey", "geo_few_markets", "dose_response")) {
    r <- tryCatch(run_r(nm, "small", file.path(D, paste0(nm, "_small.csv"))), error = function(e) NULL)
    chain[[nm]] <- if (is.null(r)) "failed" else sprintf("%.3f s", r$total_seconds)
  }
}

# ---- tables ----
fmt <- function(x, d = 3) ifelse(is.na(x), "-", formatC(x, format = "f", digits = d))
rows <- list(); detail <- character()
for (k in names(rres)) {
  r <- rres[[k]]
  pd <- if (paired && r$name != "geo_few_markets") file.path(pair_dir(seq_len(reps), r$name), "speed_review", "baselines")
        else here_dirs
  ph <- if (have_py || paired) py_json_med(pd, r$name, r$scale) else NULL
  # paired rounds: the median of the round-by-round ratios
  pr <- if (paired && r$name != "geo_few_markets") lapply(pd, py_json, name = r$name, scale = r$scale) else NULL
  ratio <- ratio_nh <- NA
  if (length(pr) && !any(vapply(pr, is.null, TRUE))) {
    pyt_i <- vapply(pr, function(j) j$total_seconds, 0)
    pyn_i <- vapply(pr, function(j) sum(unlist(lapply(j$phases[!grepl("honest", names(j$phases))], `[[`, "seconds"))), 0)
    ratio <- stats::median(pyt_i / r$totals); ratio_nh <- stats::median(pyn_i / r$totals_nh)
  }
  pub <- if (nzchar(pub_dir)) py_json(pub_dir, r$name, r$scale) else NULL
  pyt <- if (!is.null(ph)) ph$total_seconds else NA
  py_ph <- if (!is.null(ph)) vapply(ph$phases, function(p) p$seconds, 0) else numeric()
  # the chains without their HonestDiD phase (different computations: see
  # the note in the table's header)
  r_nh <- r$total - sum(r$phases$seconds[grepl("honest", r$phases$phase)])
  py_nh <- if (length(py_ph)) sum(py_ph[!grepl("honest", names(py_ph))]) else NA
  rows[[k]] <- data.frame(scenario = r$name, scale = r$scale, diffdiff_s = r$total, diffdiff_mb = r$peak_mb,
                          diffdiff_py_s = pyt, diffdiff_py_mb = if (!is.null(ph)) ph$memory$peak_mb else NA,
                          published_m4_s = if (!is.null(pub)) pub$total_seconds else NA,
                          diffdiff_py_runs = if (!is.null(ph)) ph$runs else NA,
                          speedup = if (is.na(ratio)) pyt / r$total else ratio, diffdiff_nohonest_s = r_nh,
                          diffdiff_py_nohonest_s = py_nh,
                          speedup_nohonest = if (is.na(ratio_nh)) py_nh / r_nh else ratio_nh, paired = !is.na(ratio))
  detail <- c(detail, sprintf("\n### %s / %s\n", r$name, r$scale),
              "| diffdiff phase | s | | diff-diff phase | s |", "|---|---|---|---|---|",
              sprintf("| %s | %s | | %s | %s |",
                      c(r$phases$phase, rep("", max(0, length(py_ph) - nrow(r$phases)))),
                      c(fmt(r$phases$seconds), rep("", max(0, length(py_ph) - nrow(r$phases)))),
                      c(names(py_ph), rep("", max(0, nrow(r$phases) - length(py_ph)))),
                      c(fmt(py_ph), rep("", max(0, nrow(r$phases) - length(py_ph))))))
}
tab <- do.call(rbind, rows)
pub_ver <- if (nzchar(pub_dir)) unique(unlist(lapply(list.files(pub_dir, "_python\\.json$", full.names = TRUE),
                                                   function(f) read_json(f)$diff_diff_version))) else character()
md <- c("# Six practitioner workflows: diffdiff vs diff-diff (Python)", "",
        sprintf("Run %s on this machine (%s; R %s, diffdiff %s). Each chain's phases are timed inside the process (data generation not timed), as diff-diff's harness does; diffdiff: median of %d fresh processes; diff-diff %s: its own scenario scripts, unchanged, pure-Python backend, single-threaded BLAS, the median of the runs counted in the table (phase by phase).%s Peak MB: the process's resident-memory high-water mark (diff-diff: psutil's sampled peak).",
                format(Sys.time(), "%Y-%m-%d"), utils::sessionInfo()$running, paste(R.version$major, R.version$minor, sep = "."),
                as.character(utils::packageVersion("diffdiff")), reps,
                if (have_py) system2(py, c("-c", shQuote("import diff_diff; print(diff_diff.__version__)")),
                                     stdout = TRUE, env = paste0("PYTHONPATH=", py_path)) else "(not run)",
                if (paired) sprintf(" Paired: in each of %d rounds a chain ran in diffdiff and then in diff-diff, one after the other, and the speedups are the medians of the round-by-round ratios (the machine's speed drifts by tens of percent between minutes); geo_few_markets is not paired (diff-diff takes minutes per scale there).", reps) else ""),
        "", sprintf("Published: the times in diff-diff's checked-in baselines (Apple M4; their files state diff-diff %s, before 3.3.0's synthetic-DiD bootstrap that re-estimates the weights on every draw, which dominates scenario 4 here).",
                    if (length(pub_ver)) paste(pub_ver, collapse = ", ") else "(not read)"),
        "", "The HonestDiD phases compute different things: diffdiff the relative-magnitudes robust confidence set by test inversion (the ARP conditional-least-favourable hybrid over 1000 grid points, as the HonestDiD package; `bench/scenarios/honest_peer.R` times HonestDiD itself on scenario 1's large event study: `bench/results/scenarios-honest.md`), diff-diff 3.3.2 a closed-form interval (its identified set widened by a critical value times the SE; its code leaves the ARP test for relative magnitudes disabled). The last three columns leave those phases out on both sides.",
        "", "| scenario | scale | diffdiff s | diffdiff peak MB | diff-diff s (here) | diff-diff runs | diff-diff peak MB | speedup | diff-diff s (published, M4) | diffdiff s w/o HonestDiD | diff-diff s w/o HonestDiD | speedup w/o HonestDiD |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
        sprintf("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |", tab$scenario, tab$scale, fmt(tab$diffdiff_s),
                fmt(tab$diffdiff_mb, 0), fmt(tab$diffdiff_py_s), fmt(tab$diffdiff_py_runs, 0), fmt(tab$diffdiff_py_mb, 0),
                ifelse(is.na(tab$speedup), "-", sprintf("%.1fx", tab$speedup)), fmt(tab$published_m4_s),
                fmt(tab$diffdiff_nohonest_s), fmt(tab$diffdiff_py_nohonest_s),
                ifelse(is.na(tab$speedup_nohonest), "-", sprintf("%.1fx", tab$speedup_nohonest))))
if (!is.null(agree))
  md <- c(md, "", "## Agreement on diff-diff's data (small scale, relative differences)", "",
          "| scenario | quantity | largest relative difference |", "|---|---|---|",
          sprintf("| %s | %s | %.1e |", agree$scenario, agree$quantity, agree$rel_diff), "",
          sprintf("diffdiff's whole chain on diff-diff's data: %s.", paste(sprintf("%s %s", names(chain), unlist(chain)), collapse = "; ")))
md <- c(md, "", "## Phases", detail)
writeLines(md, file.path(out_dir, "scenarios.md"))
writeLines(jsonlite::toJSON(list(table = tab, agreement = agree, reps = reps), auto_unbox = TRUE, digits = 6, pretty = TRUE),
           file.path(out_dir, "scenarios.json"))
message("wrote bench/results/scenarios.md and scenarios.json")
