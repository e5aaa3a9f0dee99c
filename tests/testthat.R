# Runs the testthat suite and writes its totals to testthat-summary.txt (read by
# tools/check.sh, which prints them as the last line of `make test`).
library(testthat)
library(diffdiff)

res <- test_check("diffdiff", stop_on_failure = FALSE, reporter = "summary")
df <- as.data.frame(res)
n_fail <- sum(df$failed) + sum(df$error)
n_pass <- sum(df$passed)
line <- sprintf("%d passed, %d failed, %d skipped", n_pass, n_fail, sum(df$skipped))
writeLines(line, "testthat-summary.txt")
cat(line, "\n")
if (n_fail > 0) stop(line)
