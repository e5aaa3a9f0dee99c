# Writes tests/testthat/ref-honestdid.csv: intervals computed by HonestDiD 0.2.8
# itself, for the live-style parity tests of honest_did() (test-honest.R).
# HonestDiD does not install on R 4.2.2 as is (CVXR); tools/install-honestdid.sh
# installs it into a private library on top of the archived CVXR 1.0-11.
# Usage: Rscript tools/honestdid-reference.R [LIB]   (default /tmp/honestlib)
args <- commandArgs(TRUE)
lib <- if (length(args)) args[1] else "/tmp/honestlib"
.libPaths(c(lib, .libPaths()))
suppressPackageStartupMessages(library(HonestDiD))

source(file.path("tests", "testthat", "helper-honest.R"))   # read_event_study()
read_es <- read_event_study
bc <- read_es("inst/extdata/honestdid_bc_event_study.txt")
bc1 <- list(b = bc$b[1:5], S = bc$S[1:5, 1:5], K = 4, P = 1)      # one post period
data_sets <- list(bc = bc, bc1 = bc1)

# case: data, bound family, method, M values, l_vec, sign, monotonicity, grid
cases <- list(
  list(id = "bc_sd_cond", d = "bc", fam = "SD", method = "Conditional", M = c(0, 0.05)),
  list(id = "bc_sd_clf", d = "bc", fam = "SD", method = "C-LF", M = c(0, 0.05)),
  list(id = "bc_sd_cf_avg", d = "bc", fam = "SD", method = "C-F", M = c(0, 0.05), l = rep(0.25, 4),
       sign = "positive"),
  list(id = "bc_sdi_cf", d = "bc", fam = "SD", method = "C-F", M = c(0, 0.05), mono = "increasing"),
  list(id = "bc_sd_flci_avg", d = "bc", fam = "SD", method = "FLCI", M = c(0.02, 0.05), l = rep(0.25, 4)),
  list(id = "bc_rm_clf", d = "bc", fam = "RM", method = "C-LF", M = c(0.5, 1)),
  list(id = "bc_rm_cond", d = "bc", fam = "RM", method = "Conditional", M = c(0.5, 1), l = c(0, 1, 0, 0)),
  list(id = "bc_rmnb_clf", d = "bc", fam = "RM", method = "C-LF", M = 1, sign = "negative"),
  list(id = "bc_sdrmd_cond", d = "bc", fam = "SDRM", method = "Conditional", M = 1, mono = "decreasing"),
  list(id = "bc1_sd_cond", d = "bc1", fam = "SD", method = "Conditional", M = c(0.05, 0.1)),
  list(id = "bc1_sd_cf", d = "bc1", fam = "SD", method = "C-F", M = c(0.05, 0.1)),
  list(id = "bc1_rm_clf", d = "bc1", fam = "RM", method = "C-LF", M = c(0.5, 1))
)

out <- list()
for (cs in cases) {
  x <- data_sets[[cs$d]]
  l <- if (is.null(cs$l)) basisVector(1, x$P) else matrix(cs$l, ncol = 1)
  t0 <- proc.time()[["elapsed"]]
  r <- if (cs$fam == "SD") {
    createSensitivityResults(betahat = x$b, sigma = x$S, numPrePeriods = x$K, numPostPeriods = x$P,
                             method = cs$method, Mvec = cs$M, l_vec = l,
                             biasDirection = cs$sign, monotonicityDirection = cs$mono)
  } else {
    createSensitivityResults_relativeMagnitudes(
      betahat = x$b, sigma = x$S, numPrePeriods = x$K, numPostPeriods = x$P,
      bound = if (cs$fam == "RM") "deviation from parallel trends" else "deviation from linear trend",
      method = cs$method, Mbarvec = cs$M, l_vec = l, biasDirection = cs$sign, monotonicityDirection = cs$mono)
  }
  el <- proc.time()[["elapsed"]] - t0
  Mcol <- if (cs$fam == "SD") r$M else r$Mbar
  cat(sprintf("%-16s %6.1f s\n", cs$id, el))
  out[[length(out) + 1L]] <- data.frame(case = cs$id, data = cs$d, type = cs$fam, method = cs$method,
                                        sign = if (is.null(cs$sign)) "" else cs$sign,
                                        mono = if (is.null(cs$mono)) "" else cs$mono,
                                        l_vec = paste(c(l), collapse = " "), M = Mcol,
                                        lb = r$lb, ub = r$ub, seconds = el)
}
# Delta^SDNB by the conditional and C-LF tests on an explicit grid: HonestDiD's default grid for
# biasDirection = "negative" is the mirror image of the identified set at betahat = 0 (it cuts the interval at
# the grid's end), so the comparison fixes the grid to the identified set [0, M] widened by 20 se, which is
# honest_did()'s default.
sdth <- sqrt(bc$S[5, 5])
for (hf in c("ARP", "LF")) for (M in c(0.02, 0.1)) {
  glb <- 0 - 20 * sdth; gub <- M + 20 * sdth
  t0 <- proc.time()[["elapsed"]]
  r <- computeConditionalCS_DeltaSDB(bc$b, bc$S, bc$K, bc$P, l_vec = basisVector(1, bc$P), M = M,
                                     hybrid_flag = hf, biasDirection = "negative", grid.lb = glb, grid.ub = gub)
  acc <- r$grid[r$accept == 1]   # lb and ub as createSensitivityResults reads them
  r <- list(lb = min(acc), ub = max(acc))
  el <- proc.time()[["elapsed"]] - t0
  id <- paste0("bc_sdnb_", tolower(hf), "_grid")
  cat(sprintf("%-16s %6.1f s\n", id, el))
  out[[length(out) + 1L]] <- data.frame(case = id, data = "bc", type = "SD",
                                        method = if (hf == "ARP") "Conditional" else "C-LF", sign = "negative",
                                        mono = "", l_vec = "1 0 0 0", M = M, lb = r$lb, ub = r$ub, seconds = el,
                                        grid_lb = glb, grid_ub = gub)
}
out <- lapply(out, function(d) { if (is.null(d$grid_lb)) { d$grid_lb <- NA; d$grid_ub <- NA }; d })
out <- do.call(rbind, out)
print(out)
con <- file("tests/testthat/ref-honestdid.csv", "w")
writeLines(c(sprintf("# Written by tools/honestdid-reference.R with HonestDiD %s (CVXR %s), %s; %s",
                     packageVersion("HonestDiD"), packageVersion("CVXR"), format(Sys.Date()), R.version.string)),
           con)
write.csv(out, con, row.names = FALSE)
close(con)
