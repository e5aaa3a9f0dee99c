# Reference numbers for synth_conformal() from scinference, the authors' R
# package for Chernozhukov, Wuthrich and Zhu (2021) (GitHub
# kwuthrich/scinference, version 0.0.0.9000 at commit 567c688; not on CRAN,
# and GitHub cannot be reached from CI, so its numbers are stored in
# tests/testthat/ref-scinference.csv and this script regenerates them where
# scinference is installed).
#
# How it was installed here: its source at that commit, with CVXR removed
# from Imports (CVXR serves only its constrained-lasso estimator, which is
# not compared; no other change), into a private library next to limSolve
# 2.0.3 from CRAN (quadprog and lpSolve from Debian):
#   R CMD INSTALL -l LIB scinference-source
#
# scinference's synthetic control (estimation_method = "sc") fits simplex
# weights with limSolve::lsei. Its default lsei_type = 1 (lsei's Fortran
# solver) fails on the simulated data below when the fit uses T0 + 1 = 51
# periods for 50 donors (the per-period intervals): lsei reports IsError =
# TRUE and returns weights down to -141, which scinference uses without
# checking, so its default intervals there are not those of the method.
# lsei_type = 2 (quadprog) solves the same problem correctly, and that is
# what is stored. p-values: moving-block permutations (q = 1); the iid
# permutations draw from R's random numbers in another order and are not
# compared.
#
# Usage: Rscript tools/scinference-reference.R LIB   (writes tests/testthat/ref-scinference.csv)
lib <- commandArgs(TRUE)[1]
stopifnot(!is.na(lib))
suppressPackageStartupMessages(library(scinference, lib.loc = lib))
out <- list()
add <- function(case, quantity, index, value)
  out[[length(out) + 1L]] <<- data.frame(case = case, quantity = quantity, index = index, value = value)

run <- function(case, Y1, Y0, T0, T1, nulls, grid, alpha) {
  for (k in seq_along(nulls)) {
    p <- scinference(Y1, Y0, T1 = T1, T0 = T0, theta0 = nulls[[k]], estimation_method = "sc",
                     permutation_method = "mb", lsei_type = 2)$p_val
    add(case, paste0("p_null", k), 0L, p)
  }
  ci <- scinference(Y1, Y0, T1 = T1, T0 = T0, estimation_method = "sc", ci = TRUE, ci_grid = grid, alpha = alpha,
                    lsei_type = 2)
  add(case, "lb", seq_len(T1), ci$lb)
  add(case, "ub", seq_len(T1), ci$ub)
}

# 1. the simulated example of scinference's vignette (J = 50, T0 = 50, T1 = 5, effect 2)
set.seed(12345)
J <- 50L; T0 <- 50L; T1 <- 5L
w <- rep(0, J); w[1:3] <- 1 / 3
Y0 <- matrix(rnorm((T0 + T1) * J), (T0 + T1), J)
Y1 <- Y0 %*% w + rnorm(T0 + T1)
Y1[(T0 + 1):(T0 + T1)] <- Y1[(T0 + 1):(T0 + T1)] + 2
run("vignette", Y1, Y0, T0, T1, list(4, 0, 2, c(1, 2, 3, 2, 1)), seq(-2, 8, 0.1), 0.1)

# 2. California's Proposition 99 (the package's california_prop99.csv):
# 38 donor states, 1970-1988 before, 1989-2000 after
d <- read.csv(file.path("inst", "extdata", "california_prop99.csv"), sep = ";")
Y <- stats::reshape(d[, c("State", "Year", "PacksPerCapita")], idvar = "Year", timevar = "State",
                    direction = "wide")
Y <- Y[order(Y$Year), ]
cal <- "PacksPerCapita.California"
Y1 <- Y[[cal]]
Y0 <- as.matrix(Y[, setdiff(names(Y), c("Year", cal))])
run("prop99", Y1, Y0, 19L, 12L, list(0, -20, -30), seq(-60, 20, 0.5), 0.1)

res <- do.call(rbind, out)
utils::write.csv(res, file.path("tests", "testthat", "ref-scinference.csv"), row.names = FALSE)
print(res)
