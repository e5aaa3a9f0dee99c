# bench/survey.R: aggregate_survey() against survey::svyby(~y, ~state + year,
# design, svymean) on BRFSS-shaped microdata: 50 states x 10 years,
# 1,000,000 rows, 20 strata, 1,000 PSUs (PSUs nested in strata), sampling
# weights. Answers checked equal (cell means 1e-10, SEs 1e-8, matched by
# cell); time and peak resident-memory growth, each in a fresh process.
# (The issue's second case, a JK1 replicate-design 2x2 DiD against svyglm,
# waits for the survey argument of the regression estimators.)
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
d <- make_brfss()
rds <- tempfile(fileext = ".rds"); saveRDS(d, rds)

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

p <- measure("survey")
q <- measure("diffdiff")
m <- merge(p$result, q$result, by = c("state", "year"), suffixes = c(".survey", ".dd"))
stopifnot(nrow(m) == 500L)
d_est <- max(abs(m$y.dd - m$y.survey) / abs(m$y.survey))
d_se <- max(abs(m$se.dd - m$se.survey) / m$se.survey)
stopifnot(d_est < 1e-10, d_se < 1e-8)
res <- data.frame(case = "aggregate_survey vs svyby(svymean): 1,000,000 rows, 500 cells, 20 strata, 1,000 PSUs",
                  survey_s = p$seconds, diffdiff_s = q$seconds, speedup = p$seconds / q$seconds,
                  survey_mb = p$peak_mb, diffdiff_mb = q$peak_mb, mem_ratio = q$peak_mb / p$peak_mb,
                  max_rel_diff_mean = d_est, max_rel_diff_se = d_se)
print(res, digits = 4)
meta <- list(date = format(Sys.time(), "%Y-%m-%d %H:%M:%S %Z"), R = R.version.string,
             survey = as.character(packageVersion("survey")), diffdiff = as.character(packageVersion("diffdiff")),
             threads = 2L)
if (requireNamespace("jsonlite", quietly = TRUE))
  writeLines(jsonlite::toJSON(list(meta = meta, results = res), pretty = TRUE, digits = 8),
             file.path(out_dir, "survey.json"))
md <- c("# bench/survey.R results", "",
        sprintf("%s; %s; survey %s; diffdiff %s; diffdiff with 2 threads; one run each in a fresh process (design construction not timed for either).",
                meta$date, meta$R, meta$survey, meta$diffdiff), "",
        "| case | survey s | diffdiff s | speedup | survey MB | diffdiff MB | mem ratio | mean diff | SE diff |",
        "|---|---|---|---|---|---|---|---|---|",
        sprintf("| %s | %.2f | %.3f | %.0fx | %.0f | %.0f | %.3f | %.1e | %.1e |", res$case, res$survey_s, res$diffdiff_s,
                res$speedup, res$survey_mb, res$diffdiff_mb, res$mem_ratio, res$max_rel_diff_mean, res$max_rel_diff_se))
writeLines(md, file.path(out_dir, "survey.md"))
cat(md, sep = "\n")
