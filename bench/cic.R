# bench/cic.R: did_cic() against qte 2.0.0's CiC() and QDiD() (the legacy
# two-period wrappers), point estimates and the nonparametric bootstrap
# (100 draws, qte's default), on the same data.
#
# qte needs Matrix >= 1.6 (tools/install-qte.sh installs it with Matrix 1.6-5
# into a private library, QTE_LIB, default /tmp/qtelib), which cannot be
# loaded into a process that has R 4.2.2's Matrix 1.5: so each qte call runs
# in a child Rscript with that library first, timed there with the same
# measure (bench/measure.R's bench_in_process: elapsed time and R's heap
# peak above the baseline before the call); did_cic() runs in this process.
# Both sides single-threaded (qte's bootstrap with cores = 1; dd_threads(1)).
# The ATT and every QTT must agree to 1e-8 (the bootstrap draws differ: the
# standard errors are reported side by side), except QDiD with covariates,
# whose difference from qte (rounding ties in qte's step functions, see
# ?did_cic, "Covariates") is reported, not checked. The covariate cases:
# qte's own example for CiC (the Lalonde panel with age, age^2, education,
# black, hispanic, married, nodegree) and a simulated panel with one
# continuous covariate for QDiD; every draw refits the quantile regressions
# at tau = 0.01, ..., 0.99 on both sides. Writes
# bench/results/cic.{json,md}.
# Usage: QTE_LIB=/tmp/qtelib Rscript bench/cic.R [units]
suppressPackageStartupMessages(library(diffdiff))
source(file.path("bench", "measure.R"))
out_dir <- file.path("bench", "results")
dir.create(out_dir, showWarnings = FALSE, recursive = TRUE)
a <- commandArgs(TRUE)
n <- if (length(a)) as.integer(a[1]) else 5000L
lib <- Sys.getenv("QTE_LIB", "/tmp/qtelib")
if (!file.exists(file.path(lib, "qte", "DESCRIPTION"))) stop("qte is not installed in ", lib, ": run tools/install-qte.sh ", lib)
dd_threads(1)

# a two-period panel: 40% treated; outcome a nonlinear function of a unit rank
set.seed(1)
treat <- as.integer(stats::runif(n) < 0.4)
u <- stats::runif(n)
y1 <- exp(stats::qnorm(u) + stats::rnorm(n, sd = 0.3))
y2 <- exp(0.3 + stats::qnorm(u) + stats::rnorm(n, sd = 0.3)) + treat * (0.5 + u)
sim <- data.frame(id = rep(seq_len(n), 2), year = rep(c(2001, 2002), each = n), treat = rep(treat, 2), y = c(y1, y2))

# a smaller two-period panel with a continuous covariate for QDiD with
# covariates (qte's QDiD with covariates and 100 draws on the Lalonde panel
# was still running after 30 minutes of CPU, where 2 and 4 draws take 4 and
# 6 s: one of its resamples appears to stall quantreg's simplex, a panel of
# 60% zero earnings resampled with ties; so it is not a case here)
set.seed(2)
nx <- 1000L
trx <- as.integer(stats::runif(nx) < 0.4)
xx <- stats::rnorm(nx) + 0.3 * trx
ux <- stats::runif(nx)
simx <- data.frame(id = rep(seq_len(nx), 2), year = rep(c(2001, 2002), each = nx), treat = rep(trx, 2),
                   x = rep(xx, 2),
                   y = c(exp(stats::qnorm(ux) + 0.5 * xx + stats::rnorm(nx, sd = 0.3)),
                         exp(0.3 + stats::qnorm(ux) + 0.6 * xx + stats::rnorm(nx, sd = 0.3)) + trx * (0.5 + ux)))

# one qte call in a child process: list(value = list(ate, qte, ate.se), seconds, mb, data)
peer <- function(fun, data, formula, t, tmin1, xformla = NULL) {
  inp <- tempfile(fileext = ".rds"); out <- tempfile(fileext = ".rds"); scr <- tempfile(fileext = ".R")
  on.exit(unlink(c(inp, out, scr)))
  saveRDS(list(fun = fun, data = data, formula = formula, t = t, tmin1 = tmin1, xformla = xformla), inp)
  writeLines(c(sprintf(".libPaths(c(%s, .libPaths()))", deparse(lib)),
               "suppressMessages(library(qte))", "source(file.path('bench', 'measure.R'))",
               sprintf("j <- readRDS(%s)", deparse(inp)),
               "if (identical(j$data, 'lalonde')) { e <- new.env(); utils::data('lalonde', package = 'qte', envir = e); j$data <- e$lalonde.psid.panel[, c('id', 'year', 're', 'treat', 'age', 'education', 'black', 'hispanic', 'married', 'nodegree')] }",
               "xf <- if (is.null(j$xformla)) NULL else stats::as.formula(j$xformla)",
               "f <- get(j$fun, asNamespace('qte'))",
               "set.seed(1)",
               "m <- suppressWarnings(bench_in_process(f(stats::as.formula(j$formula), xformla = xf, t = j$t, tmin1 = j$tmin1, tname = 'year', idname = 'id', data = j$data, panel = TRUE, se = TRUE, iters = 100, cores = 1)))",
               "m$value <- list(ate = unname(m$value$ate), qte = unname(m$value$qte), ate.se = unname(m$value$ate.se))",
               "m$data <- j$data",
               sprintf("saveRDS(m, %s)", deparse(out))), scr)
  log <- system2(file.path(R.home("bin"), "Rscript"), c("--vanilla", shQuote(scr)), stdout = TRUE, stderr = TRUE)
  if (!file.exists(out)) stop("qte failed:\n", paste(log, collapse = "\n"))
  readRDS(out)
}

lalonde_x <- "~ age + I(age^2) + education + black + hispanic + married + nodegree"
cases <- list(
  list(case = sprintf("CiC, %s units x 2 periods, 100 draws", format(n, big.mark = ",")), fun = "CiC", data = sim,
       formula = "y ~ treat", y = "y", t = 2002, tmin1 = 2001),
  list(case = sprintf("QDiD, %s units x 2 periods, 100 draws", format(n, big.mark = ",")), fun = "QDiD", data = sim,
       formula = "y ~ treat", y = "y", t = 2002, tmin1 = 2001),
  list(case = "CiC, Lalonde PSID panel (2,675 units, 1975 and 1978), 100 draws", fun = "CiC", data = "lalonde",
       formula = "re ~ treat", y = "re", t = 1978, tmin1 = 1975),
  list(case = "CiC with 7 covariates (qte's example), Lalonde PSID panel, 100 draws", fun = "CiC", data = "lalonde",
       formula = "re ~ treat", y = "re", t = 1978, tmin1 = 1975, xformla = lalonde_x),
  list(case = "QDiD with a continuous covariate, 1,000 units x 2 periods, 100 draws", fun = "QDiD", data = simx,
       formula = "y ~ treat", y = "y", t = 2002, tmin1 = 2001, xformla = "~ x", strict = FALSE))
rows <- list()
for (cs in cases) {
  p <- peer(cs$fun, cs$data, cs$formula, cs$t, cs$tmin1, cs$xformla)
  d <- p$data
  d$g <- ifelse(d$treat == 1, cs$t, 0)
  set.seed(1)
  xf <- if (is.null(cs$xformla)) NULL else stats::as.formula(cs$xformla)
  o <- bench_in_process(did_cic(d, cs$y, "id", "year", "g", xformla = xf, method = tolower(cs$fun), nboot = 100))
  cf <- coef(o$value)
  att <- cf[[sprintf("ATT(%s,%s)", cs$t, cs$t)]]
  qtt <- cf[startsWith(names(cf), sprintf("QTT::%s,%s,", cs$t, cs$t))]
  diff <- max(abs(c(att - p$value$ate, qtt - p$value$qte)) / pmax(1, abs(c(p$value$ate, p$value$qte))))
  if (!isFALSE(cs$strict)) stopifnot(diff < 1e-8)
  rows[[length(rows) + 1L]] <- data.frame(
    case = cs$case, peer = "qte 2.0.0", peer_s = p$seconds, diffdiff_s = o$seconds, speedup = p$seconds / o$seconds,
    peer_peak_mb = p$mb, diffdiff_peak_mb = o$mb, mem_ratio = o$mb / p$mb,
    diff = sprintf("%.3g%s (ATT SE: qte %.4g, diffdiff %.4g)", diff,
                   if (isFALSE(cs$strict)) sprintf(" (ATT: qte %.2f, diffdiff %.2f; rounding ties, ?did_cic)", p$value$ate, att) else "",
                   p$value$ate.se, o$value$coeftable$std.error[o$value$coeftable$term == "ATT"]),
    stringsAsFactors = FALSE)
}
res <- do.call(rbind, rows)
if (requireNamespace("jsonlite", quietly = TRUE))
  writeLines(jsonlite::toJSON(res, dataframe = "rows", pretty = TRUE, digits = 6), file.path(out_dir, "cic.json"))
md <- c("# did_cic vs qte 2.0.0 (CiC(), QDiD())", "",
        "qte in a child process on its private library (Matrix 1.6-5), did_cic() in the parent; one thread each",
        "(qte's bootstrap with cores = 1). Time: elapsed seconds of one call with 100 bootstrap draws and qte's",
        "default 19 quantile levels; memory: R's heap peak above the baseline before the call. diff: the largest",
        "difference of the ATT and the QTTs relative to max(1, |qte|); the standard errors differ by the draws.",
        "With covariates every draw refits the quantile regressions (99 levels of tau, 2 samples for CiC, 3 for",
        "QDiD) on both sides; qte's QDiD with covariates differs from did_cic's by rounding ties (see ?did_cic).", "",
        bench_table_md(res))
writeLines(md, file.path(out_dir, "cic.md"))
cat(md, sep = "\n")
