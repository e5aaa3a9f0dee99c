# bench/cs_band.R: the uniform band over all ATT(g,t) and over the event study
# (aggregate type = "dynamic"), 999 bootstrap draws: did::att_gt(cband = TRUE)
# + did::aggte(cband = TRUE) (did's sup-t band, the only one did has) against
# did_cs() with did's band (cband_method = "sup-t") and with the wild
# bootstrap-t band (cband_method = "bootstrap-t"), on the same data in one
# process (5,000 x 12, 10,000 x 15 and 20,000 x 18 unit-periods with 4, 6 and
# 7 cohorts, no covariates). Checks that
# the ATT(g,t) and the event-study estimates agree with did's, that the
# bootstrap-t critical values lie in a plausible range and that the
# bootstrap-t standard errors are the analytic ones, then times each and
# measures peak memory in fresh processes.
# Usage: Rscript bench/cs_band.R [reps]            (writes bench/results/cs_band.{json,md})
#        Rscript bench/cs_band.R --one did|sup-t|bootstrap-t [shape 1-3]   (one fit, for whole-process timing)
suppressPackageStartupMessages({library(diffdiff); library(did)})
args <- commandArgs(TRUE)
out_dir <- file.path("bench", "results")
dd_threads(2)

make_stagg <- function(n, T, ncoh, seed = 1) {
  set.seed(seed)
  coh <- round(seq(3, T - 1, length.out = ncoh))
  g <- ifelse(runif(n) < 0.3, 0, sample(coh, n, replace = TRUE))
  d <- data.frame(id = rep(seq_len(n), each = T), t = rep(seq_len(T), n))
  d$g <- g[d$id]
  d$y <- rnorm(n)[d$id] + 0.1 * d$t + ifelse(d$g > 0 & d$t >= d$g, 1 + 0.2 * (d$t - d$g), 0) + rnorm(nrow(d))
  d
}

run <- function(which, d) {
  set.seed(42)
  if (which == "did") {
    m <- suppressWarnings(att_gt("y", "t", "id", "g", data = d, bstrap = TRUE, biters = 999, cband = TRUE))
    list(m = m, a = suppressWarnings(aggte(m, type = "dynamic", bstrap = TRUE, biters = 999, cband = TRUE)))
  } else {
    f <- did_cs(d, "y", "id", "t", "g", nboot = 999, cband = TRUE, cband_method = which)
    list(f = f, a = aggregate(f, type = "dynamic"))
  }
}

shapes <- list(list(name = "5k units x 12 periods, 4 cohorts", n = 5000, T = 12, k = 4),
               list(name = "10k units x 15 periods, 6 cohorts", n = 10000, T = 15, k = 6),
               list(name = "20k units x 18 periods, 7 cohorts", n = 20000, T = 18, k = 7))
if (length(args) >= 2 && args[1] == "--one") {
  sh <- shapes[[if (length(args) >= 3) as.integer(args[3]) else 2L]]
  invisible(run(args[2], make_stagg(sh$n, sh$T, sh$k)))
  quit(save = "no")
}
reps <- if (length(args)) as.integer(args[1]) else 3L
dir.create(out_dir, showWarnings = FALSE, recursive = TRUE)
methods <- c("did", "sup-t", "bootstrap-t")

peak_mb <- function(which, d) {
  rds <- tempfile(fileext = ".rds"); saveRDS(d, rds)
  callr::r(function(rds, which, run) {
    suppressPackageStartupMessages({library(diffdiff); library(did)})
    d <- readRDS(rds); dd_threads(2)
    rss <- function(field) {
      s <- readLines("/proc/self/status")
      as.numeric(sub("[^0-9]*([0-9]+).*", "\\1", grep(paste0("^", field, ":"), s, value = TRUE)))
    }
    invisible(gc(full = TRUE))
    cat("5", file = "/proc/self/clear_refs")
    base <- rss("VmRSS")
    r <- run(which, d)
    (rss("VmHWM") - base) / 1024
  }, args = list(rds = rds, which = which, run = run))
}

res <- NULL; agree <- NULL
for (sh in shapes) {
  d <- make_stagg(sh$n, sh$T, sh$k)
  P <- run("did", d)
  S <- run("sup-t", d)
  Q <- run("bootstrap-t", d)
  an <- did_cs(d, "y", "id", "t", "g", nboot = 0)
  d_att <- max(abs(Q$f$coeftable$estimate - P$m$att) / abs(P$m$att))
  d_dyn <- max(abs(Q$a$coeftable$estimate - c(P$a$att.egt, P$a$overall.att)) / abs(c(P$a$att.egt, P$a$overall.att)))
  d_se <- max(abs(Q$f$coeftable$std.error / an$coeftable$std.error - 1))
  crit <- c(did = unname(P$m$c), did_dyn = unname(P$a$crit.val.egt), sup_t = S$f$crit, sup_t_dyn = S$a$crit,
            boot_t = Q$f$crit, boot_t_dyn = Q$a$crit)
  print(crit)
  stopifnot(d_att < 1e-8, d_dyn < 1e-8, d_se < 1e-12, all(is.finite(crit)),
            Q$f$crit > stats::qnorm(0.975), Q$f$crit < stats::qnorm(1 - 0.025 / nrow(Q$f$coeftable)) + 0.5)
  # paired, interleaved: in each round did, then each band of did_cs; the
  # speed-ups are the medians of the round-by-round ratios
  tt <- vapply(seq_len(reps), function(i)
    vapply(methods, function(w) { gc(); system.time(run(w, d))[["elapsed"]] }, numeric(1)), numeric(3))
  m <- vapply(methods, peak_mb, numeric(1), d = d)
  r <- data.frame(shape = sh$name,
                  method = c("did::att_gt + aggte (sup-t band)", "did_cs + aggregate, sup-t band",
                             "did_cs + aggregate, bootstrap-t band"),
                  seconds = apply(tt, 1, stats::median), speedup_vs_did = apply(tt[1, ] / t(tt), 2, stats::median),
                  peak_mb = m, mem_ratio_vs_did = m / m[["did"]],
                  crit_cells = c(crit[["did"]], crit[["sup_t"]], crit[["boot_t"]]),
                  crit_dynamic = c(crit[["did_dyn"]], crit[["sup_t_dyn"]], crit[["boot_t_dyn"]]),
                  max_rel_diff_att = d_att, max_rel_diff_dynamic = d_dyn, max_rel_diff_se_vs_analytic = d_se)
  print(r, digits = 4)
  res <- rbind(res, r)
}
meta <- list(date = format(Sys.time(), "%Y-%m-%d %H:%M:%S %Z"), R = R.version.string,
             did = as.character(packageVersion("did")), diffdiff = as.character(packageVersion("diffdiff")),
             reps = reps, threads = 2L, max_rel_diff_att = max(res$max_rel_diff_att))
if (requireNamespace("jsonlite", quietly = TRUE))
  writeLines(jsonlite::toJSON(list(meta = meta, results = res), pretty = TRUE, digits = 6),
             file.path(out_dir, "cs_band.json"))
md <- c("# bench/cs_band.R results", "",
        sprintf("%s; %s; did %s; diffdiff %s; 2 threads; %d paired, interleaved rounds (times: medians; speed-ups: medians of the round-by-round ratios); 999 draws.",
                meta$date, meta$R, meta$did, meta$diffdiff, reps), "",
        "Agreement (bootstrap-t fit vs did): ATT(g,t) and event-study max rel. diff; bootstrap-t SEs vs the analytic ones.",
        "Critical values differ by design (did's sup-t vs the wild bootstrap-t); memory: peak RSS growth in a fresh process.", "",
        "| shape | method | seconds | speedup vs did | peak MB | mem ratio vs did | crit (cells) | crit (event study) | ATT diff | event-study diff | SE vs analytic |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
        sprintf("| %s | %s | %.3f | %.0fx | %.0f | %.3f | %.3f | %.3f | %.1e | %.1e | %.1e |", res$shape, res$method, res$seconds,
                res$speedup_vs_did, res$peak_mb, res$mem_ratio_vs_did, res$crit_cells, res$crit_dynamic,
                res$max_rel_diff_att, res$max_rel_diff_dynamic, res$max_rel_diff_se_vs_analytic))
writeLines(md, file.path(out_dir, "cs_band.md"))
cat(md, sep = "\n")
