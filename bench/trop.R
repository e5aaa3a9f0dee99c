# bench/trop.R: did_trop() against diff-diff's TROP (Python, pure-Python
# backend) on a 200 units x 30 periods panel (40 units treated in the last 7
# periods, two latent factors), at fixed tuning parameters (diff-diff's
# cross-validation over its default grids takes many hours on this panel;
# see the note in bench/results/trop.md). Each side runs in its own process on the same CSV
# (tools/diffdiff-py-reference.py for diff-diff), timed whole (start-up,
# reading the data, the fit) and by the fit alone, with its peak resident
# memory (/usr/bin/time). Estimates must agree to 1e-6; bootstrap standard
# errors come from different generators and are compared with their Monte
# Carlo error. Target: did_trop >= 20x faster.
# Needs DIFFDIFF_PY_PATH (a diff-diff checkout) and python3 with numpy,
# pandas and scipy; skipped otherwise.
# Usage: Rscript bench/trop.R
suppressPackageStartupMessages(library(diffdiff))
out_dir <- file.path("bench", "results")
dir.create(out_dir, showWarnings = FALSE, recursive = TRUE)
py_path <- Sys.getenv("DIFFDIFF_PY_PATH")
if (!nzchar(py_path) || !dir.exists(py_path)) {
  message("bench/trop.R: DIFFDIFF_PY_PATH is not set to a diff-diff checkout; skipped.")
  quit(save = "no")
}
python <- Sys.getenv("PYTHON", "/usr/bin/python3")
tool <- normalizePath(file.path("tools", "diffdiff-py-reference.py"))
work <- tempfile("trop-bench"); dir.create(work)
set.seed(20261201)
d <- dd_sim_factor(n_units = 200, n_periods = 30, n_treated = 40, first_treat = 24, effect = 1)
csv <- file.path(work, "panel_200x30.csv")
utils::write.csv(d[, c("id", "time", "y", "D")], csv, row.names = FALSE)

configs <- list(
  list(method = "local", lambda = c(0.5, 0.5, 0.1), nboot = 0, cores = 1),
  list(method = "local", lambda = c(0.5, 0.5, 0.1), nboot = 0, cores = 2),
  list(method = "local", lambda = c(0.5, 0.5, Inf), nboot = 20, cores = 1),
  list(method = "global", lambda = c(0.5, 0.5, 0.1), nboot = 0, cores = 1),
  list(method = "global", lambda = c(0.5, 0.5, Inf), nboot = 200, cores = 1))

# one timed process: elapsed seconds and peak RSS (MiB) from /usr/bin/time
timed <- function(cmd, args) {
  tf <- file.path(work, "time.txt")
  st <- system2("/usr/bin/time", c("-f", "'%e %M'", "-o", tf, cmd, args), stdout = TRUE, stderr = TRUE)
  v <- as.numeric(strsplit(trimws(utils::tail(readLines(tf), 1)), " ")[[1]])
  list(elapsed = v[1], rss_mib = v[2] / 1024, out = st)
}
r_script <- file.path(work, "fit.R")
writeLines(c(
  "a <- commandArgs(TRUE); suppressPackageStartupMessages(library(diffdiff))",
  "d <- read.csv(a[1]); lam <- as.numeric(strsplit(a[3], ',')[[1]]); set.seed(1)",
  "t0 <- proc.time()[['elapsed']]",
  "f <- did_trop(d, 'y', 'id', 'time', 'D', method = a[2], lambda_time = lam[1], lambda_unit = lam[2],",
  "              lambda_nn = lam[3], nboot = as.integer(a[4]), cores = as.integer(a[6]))",
  "sec <- proc.time()[['elapsed']] - t0",
  "saveRDS(list(att = unname(coef(f)), se = f$coeftable$std.error, tau = f$cell_effects, seconds = sec), a[5])"),
  r_script)

rows <- list(); py_runs <- list()
for (k in seq_along(configs)) {
  cf <- configs[[k]]
  lam <- paste(ifelse(is.finite(cf$lambda), format(cf$lambda), "inf"), collapse = ",")
  jf <- file.path(work, sprintf("py_%d.json", k)); rf <- file.path(work, sprintf("r_%d.rds", k))
  # diff-diff once per (method, lambda, nboot): the cores rows reuse it
  key <- paste(cf$method, lam, cf$nboot)
  if (is.null(py_runs[[key]])) {
    py_runs[[key]] <- list(t = timed(python, c(tool, csv, jf, "--method", cf$method, "--lambda", lam, "--nboot",
                                               cf$nboot, "--columns", "y,D,id,time")),
                           j = jsonlite::fromJSON(jf))
  }
  py <- py_runs[[key]]$t; pj <- py_runs[[key]]$j
  if (!is.null(pj$skipped)) { message("bench/trop.R: ", pj$skipped); quit(save = "no") }
  rr <- timed(file.path(R.home("bin"), "Rscript"), c(r_script, csv, cf$method, lam, cf$nboot, rf, cf$cores))
  rj <- readRDS(rf)
  te <- pj$treatment_effects
  m <- merge(data.frame(id = te$unit, time = te$time, py = te$tau), rj$tau, by = c("id", "time"))
  stopifnot(nrow(m) == nrow(rj$tau), abs(rj$att - pj$att) < 1e-6, max(abs(m$py - m$tau)) < 1e-6)
  se_note <- if (cf$nboot > 0)
    sprintf("%.4f vs %.4f (ratio %.3f; Monte Carlo SD of a ratio of two %d-draw SEs about %.3f)", rj$se, pj$se,
            rj$se / pj$se, cf$nboot, sqrt(1 / cf$nboot)) else "-"
  rows[[k]] <- data.frame(method = cf$method, lambda = lam, nboot = cf$nboot, cores = cf$cores, att_diff = abs(rj$att - pj$att),
                          tau_maxdiff = max(abs(m$py - m$tau)), py_fit_s = pj$seconds, dd_fit_s = rj$seconds,
                          fit_ratio = pj$seconds / rj$seconds, py_proc_s = py$elapsed, dd_proc_s = rr$elapsed,
                          proc_ratio = py$elapsed / rr$elapsed, py_rss_mib = py$rss_mib, dd_rss_mib = rr$rss_mib,
                          rss_ratio = rr$rss_mib / py$rss_mib, se = se_note, stringsAsFactors = FALSE)
  print(rows[[k]])
}
res <- do.call(rbind, rows)
n_trt <- sum(d$D == 1); n_ctrl <- sum(d$D == 0)
jsonlite::write_json(list(diff_diff = pj$source, threads = dd_threads(), results = res),
                     file.path(out_dir, "trop.json"), auto_unbox = TRUE, digits = NA, pretty = TRUE)
md <- c("# did_trop() vs diff-diff TROP (200 units x 30 periods)", "",
        sprintf("Peer: %s. Generated by bench/trop.R on %s; %d thread(s) for diffdiff.", pj$source,
                format(Sys.Date()), dd_threads()), "",
        "Each side in its own process on the same CSV; `fit` = the estimator call alone, `proc` = the whole process",
        "(start-up, reading the CSV, the fit); `rss` = peak resident memory (diffdiff / diff-diff).", "",
        "| method | lambda (time, unit, nn) | nboot | did_trop cores | ATT diff | max tau diff | diff-diff fit s | did_trop fit s | fit ratio | proc ratio | rss ratio | bootstrap SE (did_trop vs diff-diff) |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
        sprintf("| %s | %s | %d | %d | %.1e | %.1e | %.1f | %.2f | %.1fx | %.1fx | %.2f | %s |", res$method, res$lambda,
                as.integer(res$nboot), as.integer(res$cores), res$att_diff, res$tau_maxdiff, res$py_fit_s, res$dd_fit_s, res$fit_ratio,
                res$proc_ratio, res$rss_ratio, res$se), "",
        sprintf(paste("diff-diff's cross-validation with its default grids is not timed: each score evaluation refits",
                      "every untreated cell (%d here), about %.0f minutes per evaluation with a factor component at",
                      "diff-diff's measured time per cell fit above, and its local search needs at least 52 evaluations."),
                n_ctrl, res$py_fit_s[1] / n_trt * n_ctrl / 60))
writeLines(md, file.path(out_dir, "trop.md"))
cat(md, sep = "\n")
