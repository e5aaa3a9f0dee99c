# bench/sdid.R: did_sdid() against synthdid 0.0.9 (GitHub only; see
# bench/README.md for installing it). Cases:
#  1. California Prop 99: the three point estimates and their placebo SEs
#     (200 replications, set.seed(12345)), answers checked equal;
#  2. 400 controls + 100 treated x 20 + 10 periods, diff-diff's SDiD shapes
#     800 + 200 x 20 + 10 and 4,000 + 1,000 x 25 + 15: point estimate +
#     placebo SE (200 replications) against synthdid where synthdid
#     finishes within 10 minutes;
#  3. diffdiff alone at 8,000 + 2,000 x 30 + 20 and 16,000 + 4,000 x 35 + 25
#     with the jackknife SE (target: the 20K shape in under 10 s).
# Each run is a fresh R process (callr): time and peak resident-memory growth.
# Usage: SYNTHDID_LIB=/path/to/lib Rscript bench/sdid.R
#        (writes bench/results/sdid.{json,md})
suppressPackageStartupMessages(library(diffdiff))
out_dir <- file.path("bench", "results")
dir.create(out_dir, showWarnings = FALSE, recursive = TRUE)
lib <- Sys.getenv("SYNTHDID_LIB", "")
have_sd <- requireNamespace("synthdid", lib.loc = if (nzchar(lib)) lib else NULL, quietly = TRUE)
if (!have_sd) message("synthdid not found (set SYNTHDID_LIB); diffdiff runs alone.")

make_sdid <- function(N0, N1, T0, T1, seed = 1) {
  set.seed(seed); N <- N0 + N1; T <- T0 + T1
  L <- matrix(rnorm(N * 2), N, 2); F <- matrix(rnorm(T * 2), T, 2)
  tr <- rep(c(0, 1), c(N0, N1)); L[tr == 1, 1] <- L[tr == 1, 1] + 0.5
  y <- outer(rnorm(N), rep(1, T)) + outer(rep(1, N), cumsum(rnorm(T, sd = 0.3))) + L %*% t(F) +
    matrix(rnorm(N * T, sd = 0.5), N, T)
  D <- outer(tr, c(rep(0, T0), rep(1, T1)))
  data.frame(unit = rep(sprintf("u%06d", seq_len(N)), times = T), time = rep(seq_len(T), each = N),
             y = as.vector(y + D), treat = as.vector(D))
}

# one measured task in a fresh process: returns estimate, se, seconds, peak MB
measure <- function(which, rds, method, se, nboot, timeout = 600) {
  f <- function(which, rds, method, se, nboot, lib) {
    rss <- function(field) {
      s <- readLines("/proc/self/status")
      as.numeric(sub("[^0-9]*([0-9]+).*", "\\1", grep(paste0("^", field, ":"), s, value = TRUE)))
    }
    d <- readRDS(rds)
    if (which == "synthdid") {
      suppressPackageStartupMessages(library(synthdid, lib.loc = if (nzchar(lib)) lib else NULL))
      names(d)[1:4] <- c("unit", "time", "y", "treat")
      setup <- panel.matrices(d, unit = "unit", time = "time", outcome = "y", treatment = "treat")
      est_fun <- switch(method, sdid = synthdid_estimate, sc = sc_estimate, did = did_estimate)
    } else {
      suppressPackageStartupMessages(library(diffdiff))
      dd_threads(2)
    }
    invisible(gc(full = TRUE))
    cat("5", file = "/proc/self/clear_refs")
    base <- rss("VmRSS")
    t0 <- proc.time()[["elapsed"]]
    set.seed(12345)
    if (which == "synthdid") {
      e <- est_fun(setup$Y, setup$N0, setup$T0)
      s <- if (se == "none") NA_real_ else sqrt(vcov(e, method = se, replications = nboot))[1, 1]
      est <- c(e)
    } else {
      fit <- did_sdid(d, names(d)[3], names(d)[1], names(d)[2], names(d)[4], method = method, se = se,
                      nboot = nboot)
      est <- unname(coef(fit)); s <- fit$coeftable$std.error
    }
    secs <- proc.time()[["elapsed"]] - t0
    list(estimate = est, se = s, seconds = secs, peak_mb = (rss("VmHWM") - base) / 1024)
  }
  tryCatch(callr::r(f, args = list(which = which, rds = rds, method = method, se = se, nboot = nboot, lib = lib),
                    timeout = timeout),
           error = function(e) list(estimate = NA_real_, se = NA_real_, seconds = if (grepl("timeout|timed out", conditionMessage(e), ignore.case = TRUE)) Inf else NA_real_,
                                    peak_mb = NA_real_, error = conditionMessage(e)))
}

cases <- list()
prop <- read.csv(system.file("extdata", "california_prop99.csv", package = "diffdiff"), sep = ";")
prop <- prop[, c("State", "Year", "PacksPerCapita", "treated")]
rds <- tempfile(fileext = ".rds"); saveRDS(prop, rds)
for (m in c("sdid", "sc", "did"))
  cases[[length(cases) + 1]] <- list(label = sprintf("Prop 99, %s, estimate + placebo SE (200)", m), rds = rds,
                                     method = m, se = "placebo", nboot = 200, peer = TRUE)
for (sh in list(c(400, 100, 20, 10), c(800, 200, 20, 10), c(4000, 1000, 25, 15))) {
  rds <- tempfile(fileext = ".rds"); saveRDS(make_sdid(sh[1], sh[2], sh[3], sh[4]), rds)
  cases[[length(cases) + 1]] <- list(label = sprintf("%d + %d units x %d + %d periods, sdid, estimate + placebo SE (200)",
                                                     sh[1], sh[2], sh[3], sh[4]),
                                     rds = rds, method = "sdid", se = "placebo", nboot = 200, peer = TRUE)
}
for (sh in list(c(8000, 2000, 30, 20), c(16000, 4000, 35, 25))) {
  rds <- tempfile(fileext = ".rds"); saveRDS(make_sdid(sh[1], sh[2], sh[3], sh[4]), rds)
  cases[[length(cases) + 1]] <- list(label = sprintf("%d + %d units x %d + %d periods, sdid, estimate + jackknife SE",
                                                     sh[1], sh[2], sh[3], sh[4]),
                                     rds = rds, method = "sdid", se = "jackknife", nboot = 0, peer = FALSE)
}

res <- list()
for (cs in cases) {
  q <- measure("diffdiff", cs$rds, cs$method, cs$se, cs$nboot)
  p <- if (cs$peer && have_sd) measure("synthdid", cs$rds, cs$method, cs$se, cs$nboot) else
    list(estimate = NA_real_, se = NA_real_, seconds = NA_real_, peak_mb = NA_real_)
  d_est <- abs(q$estimate - p$estimate) / abs(p$estimate)
  d_se <- abs(q$se - p$se) / p$se
  if (is.finite(d_est) && d_est > 1e-8) stop("estimates disagree: ", cs$label)
  if (is.finite(d_se) && d_se > 1e-6) stop("standard errors disagree: ", cs$label)
  r <- data.frame(case = cs$label, synthdid_s = p$seconds, diffdiff_s = q$seconds,
                  speedup = if (is.finite(p$seconds)) p$seconds / q$seconds else NA_real_, synthdid_mb = p$peak_mb, diffdiff_mb = q$peak_mb,
                  mem_ratio = q$peak_mb / p$peak_mb, estimate = q$estimate, se = q$se,
                  rel_diff_estimate = d_est, rel_diff_se = d_se)
  print(r, digits = 4)
  res[[length(res) + 1]] <- r
}
res <- do.call(rbind, res)
meta <- list(date = format(Sys.time(), "%Y-%m-%d %H:%M:%S %Z"), R = R.version.string,
             synthdid = if (have_sd) as.character(utils::packageVersion("synthdid", lib.loc = if (nzchar(lib)) lib else NULL)) else NA,
             diffdiff = as.character(utils::packageVersion("diffdiff")), threads = 2L)
if (requireNamespace("jsonlite", quietly = TRUE))
  writeLines(jsonlite::toJSON(list(meta = meta, results = res), pretty = TRUE, digits = 8, na = "null"),
             file.path(out_dir, "sdid.json"))
fmt <- function(x, f) ifelse(is.na(x), "-", ifelse(is.infinite(x), "> 600", sprintf(f, x)))
md <- c("# bench/sdid.R results", "",
        sprintf("%s; %s; synthdid %s; diffdiff %s; diffdiff with 2 threads; one run each in a fresh process.",
                meta$date, meta$R, meta$synthdid, meta$diffdiff), "",
        "speedup = synthdid time / diffdiff time; mem ratio = diffdiff peak / synthdid peak (resident-set growth).",
        "Differences: relative, estimate and standard error (placebo draws under set.seed(12345), as synthdid's).", "",
        "| case | synthdid s | diffdiff s | speedup | synthdid MB | diffdiff MB | mem ratio | estimate diff | SE diff |",
        "|---|---|---|---|---|---|---|---|---|",
        sprintf("| %s | %s | %s | %s | %s | %s | %s | %s | %s |", res$case, fmt(res$synthdid_s, "%.1f"),
                fmt(res$diffdiff_s, "%.3f"), fmt(res$speedup, "%.0fx"), fmt(res$synthdid_mb, "%.0f"),
                fmt(res$diffdiff_mb, "%.0f"), fmt(res$mem_ratio, "%.2f"), fmt(res$rel_diff_estimate, "%.1e"),
                fmt(res$rel_diff_se, "%.1e")))
writeLines(md, file.path(out_dir, "sdid.md"))
cat(md, sep = "\n")
