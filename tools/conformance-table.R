# Runs the conformance suite (tests/testthat/test-conformance*.R) on the
# installed diffdiff and prints its table: estimator x check, "pass", "FAIL",
# the Ctrl-C lag, or "-" where the check does not apply (the reason is in the
# estimator's `skip` in tests/testthat/helper-conformance.R).
# Usage (from the repository root): Rscript tools/conformance-table.R [LIB]
args <- commandArgs(TRUE)
if (length(args) && nzchar(args[1])) .libPaths(c(args[1], .libPaths()))
suppressMessages({ library(testthat); library(diffdiff) })
log <- tempfile(fileext = ".tsv")
Sys.setenv(DIFFDIFF_CONFORMANCE_LOG = log)
owd <- setwd("tests/testthat")
for (f in list.files(".", "^helper-.*[.]R$")) sys.source(f, envir = globalenv())
for (f in c("test-conformance.R", "test-conformance-interrupt.R"))
  invisible(test_file(f, reporter = "silent", env = new.env(parent = globalenv())))
setwd(owd)
r <- utils::read.delim(log, header = FALSE, col.names = c("estimator", "check", "result"), colClasses = "character")
r <- r[!duplicated(r[c("estimator", "check")], fromLast = TRUE), ]
checks <- c("order", "constant", "cluster", "roles", "dups", "data", "print", "summary", "tidy", "glance", "plot",
            "autoplot", "ctrl-c")
est <- unique(r$estimator)
tab <- matrix("-", length(est), length(checks), dimnames = list(est, checks))
tab[cbind(match(r$estimator, est), match(r$check, checks))] <- r$result
cat("| estimator |", paste(checks, collapse = " | "), "|\n")
cat("|---|", paste(rep("---", length(checks)), collapse = "|"), "|\n")
for (i in seq_along(est)) cat("|", est[i], "|", paste(tab[i, ], collapse = " | "), "|\n")
cat(sprintf("\n%d checks: %d pass, %d FAIL\n", sum(tab != "-"), sum(tab != "-" & tab != "FAIL"), sum(tab == "FAIL")))
