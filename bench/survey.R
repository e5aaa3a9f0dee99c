# bench/survey.R: aggregate_survey() against survey::svyby(~y, ~state + year,
# design, svymean) on BRFSS-shaped microdata: 50 states x 10 years, 100,000,
# 300,000 and 1,000,000 rows, 20 strata, 1,000 PSUs (PSUs nested in strata),
# sampling weights. Answers checked equal (cell means 1e-10, SEs 1e-8,
# matched by cell); time and peak resident-memory growth, each in a fresh
# process. Second case: the brand-survey shape (500, 1,000 and 2,000 units x
# 12 periods, 20 strata x 8 PSUs, 160 JK1 replicates from the PSUs), a 2x2
# DiD with a covariate by did_2x2(survey = ) against svyglm() on the
# replicate design: coefficients and SEs checked equal; 5 paired,
# interleaved runs in this process (the ratio: the median of the per-pair
# ratios; diffdiff 10 calls per run).
# Usage: Rscript bench/survey.R   (writes bench/results/survey.{json,md})
suppressPackageStartupMessages({library(diffdiff); library(survey)})
out_dir <- file.path("bench", "results")
dir.create(out_dir, showWarnings = FALSE, recursive = TRUE)

make_brfss <- function(n = 1e6, seed = 1) {
  set.seed(seed)
  strata <- sample(20, n, TRUE)
  data.frame(state = sample(50, n, TRUE), year = sample(2001:2010, n, TRUE), strata = strata,
             psu = strata * 1000 + sample(50, n, TRUE), w = runif(n, 50, 150),
             y = rnorm(n) + sample(50, n, TRUE) / 10)
}
rds <- tempfile(fileext = ".rds")

measure <- function(which) {
  callr::r(function(rds, which) {
    suppressPackageStartupMessages({library(diffdiff); library(survey)})
    rss <- function(field) {
      s <- readLines("/proc/self/status")
      as.numeric(sub("[^0-9]*([0-9]+).*", "\\1", grep(paste0("^", field, ":"), s, value = TRUE)))
    }
    d <- readRDS(rds)
    dd_threads(2)
    des <- if (which == "survey") svydesign(id = ~psu, strata = ~strata, weights = ~w, data = d)
           else survey_design(d, weights = ~w, strata = ~strata, ids = ~psu)
    invisible(gc(full = TRUE))
    cat("5", file = "/proc/self/clear_refs")
    base <- rss("VmRSS")
    t0 <- proc.time()[["elapsed"]]
    r <- if (which == "survey") {
      b <- svyby(~y, ~state + year, des, svymean)
      data.frame(state = b$state, year = b$year, y = b$y, se = unname(SE(b)))
    } else {
      a <- aggregate_survey(d, "y", c("state", "year"), des)
      data.frame(state = a$state, year = a$year, y = a$y, se = a$y_se)
    }
    secs <- proc.time()[["elapsed"]] - t0
    list(result = r, seconds = secs, peak_mb = (rss("VmHWM") - base) / 1024)
  }, args = list(rds = rds, which = which))
}

res1 <- NULL
for (n in c(1e5, 3e5, 1e6)) {
  saveRDS(make_brfss(n), rds)
  p <- measure("survey")
  q <- measure("diffdiff")
  m <- merge(p$result, q$result, by = c("state", "year"), suffixes = c(".survey", ".dd"))
  stopifnot(nrow(m) == 500L)
  d_est <- max(abs(m$y.dd - m$y.survey) / abs(m$y.survey))
  d_se <- max(abs(m$se.dd - m$se.survey) / m$se.survey)
  stopifnot(d_est < 1e-10, d_se < 1e-8)
  r <- data.frame(case = sprintf("aggregate_survey vs svyby(svymean): %s rows, 500 cells, 20 strata, 1,000 PSUs",
                                 format(n, big.mark = ",", scientific = FALSE)),
                  survey_s = p$seconds, diffdiff_s = q$seconds, speedup = p$seconds / q$seconds,
                  survey_mb = p$peak_mb, diffdiff_mb = q$peak_mb, mem_ratio = q$peak_mb / p$peak_mb,
                  max_rel_diff_mean = d_est, max_rel_diff_se = d_se)
  print(r, digits = 4)
  res1 <- rbind(res1, r)
}

# brand-survey shape, JK1 replicate design (160 PSUs, one replicate each);
# paired, interleaved runs in this process: the ratio is the median of the
# per-pair ratios
dd_threads(2)
res2 <- NULL
for (nu in c(500, 1000, 2000)) {
  set.seed(5)
  TT <- 12
  u <- data.frame(unit = 1:nu, str = rep(1:20, each = nu / 20))
  u$psu <- u$str * 100 + rep(1:8, length.out = nu)
  u$treat <- rbinom(nu, 1, 0.4); u$w <- runif(nu, 1, 4)
  b <- u[rep(seq_len(nu), each = TT), ]; b$t <- rep(1:TT, nu)
  b$post <- as.integer(b$t > 6); b$x <- rnorm(nrow(b))
  b$y <- rnorm(nrow(b)) + 0.3 * b$treat * b$post + 0.1 * b$t + 0.5 * b$x
  jk <- as.svrepdesign(svydesign(ids = ~psu, weights = ~w, data = b), type = "JK1")
  stopifnot(ncol(jk$repweights) == 160L)
  g <- svyglm(y ~ treat * post + x, design = jk)
  f <- did_2x2(b, "y", "treat", "post", xformla = ~ x, survey = jk)
  ord <- c("(Intercept)", "treat", "post", "x", "ATT")
  d_est2 <- max(abs(coef(g) - coef(f)[ord]) / abs(coef(g)))
  d_se2 <- max(abs(SE(g) - f$coeftable$std.error[match(ord, f$coeftable$term)]) / SE(g))
  stopifnot(d_est2 < 1e-8, d_se2 < 1e-6)
  tt <- vapply(1:5, function(i) c(system.time(svyglm(y ~ treat * post + x, design = jk))[["elapsed"]],
                                  system.time(for (k in 1:10) did_2x2(b, "y", "treat", "post", xformla = ~ x,
                                                                      survey = jk))[["elapsed"]] / 10), numeric(2))
  r <- data.frame(case = sprintf("did_2x2(survey = JK1) vs svyglm: %s rows, 160 PSUs, 160 JK1 replicates",
                                 format(nu * TT, big.mark = ",")),
                  survey_s = median(tt[1, ]), diffdiff_s = median(tt[2, ]), speedup = median(tt[1, ] / tt[2, ]),
                  survey_mb = NA_real_, diffdiff_mb = NA_real_, mem_ratio = NA_real_, max_rel_diff_mean = d_est2,
                  max_rel_diff_se = d_se2)
  print(r, digits = 4)
  res2 <- rbind(res2, r)
}
res <- rbind(res1, res2)
meta <- list(date = format(Sys.time(), "%Y-%m-%d %H:%M:%S %Z"), R = R.version.string,
             survey = as.character(packageVersion("survey")), diffdiff = as.character(packageVersion("diffdiff")),
             threads = 2L)
if (requireNamespace("jsonlite", quietly = TRUE))
  writeLines(jsonlite::toJSON(list(meta = meta, results = res), pretty = TRUE, digits = 8),
             file.path(out_dir, "survey.json"))
md <- c("# bench/survey.R results", "",
        sprintf("%s; %s; survey %s; diffdiff %s; diffdiff with 2 threads. Case 1: one run each in a fresh process (design construction not timed for either); case 2: 5 paired, interleaved runs in one process, the median of the per-pair ratios (memory not measured).",
                meta$date, meta$R, meta$survey, meta$diffdiff), "",
        "| case | survey s | diffdiff s | speedup | survey MB | diffdiff MB | mem ratio | mean diff | SE diff |",
        "|---|---|---|---|---|---|---|---|---|",
        sprintf("| %s | %.3f | %.3f | %.0fx | %s | %s | %s | %.1e | %.1e |", res$case, res$survey_s, res$diffdiff_s,
                res$speedup, ifelse(is.na(res$survey_mb), "-", sprintf("%.0f", res$survey_mb)),
                ifelse(is.na(res$diffdiff_mb), "-", sprintf("%.0f", res$diffdiff_mb)),
                ifelse(is.na(res$mem_ratio), "-", sprintf("%.3f", res$mem_ratio)), res$max_rel_diff_mean, res$max_rel_diff_se))
writeLines(md, file.path(out_dir, "survey.md"))
cat(md, sep = "\n")
