# Records every value returned by an exported diffdiff function while the test
# suite runs, so that two builds can be compared number for number (a
# refactor must leave every estimate, SE, band and test statistic unchanged).
#
#   Rscript tools/fit-identity.R record LIB OUT.rds [TESTFILE ...]
#   Rscript tools/fit-identity.R compare BEFORE.rds AFTER.rds
#
# record: loads diffdiff from LIB, traces each exported function (exit
# hook), runs tests/testthat file by file (all test-*.R unless given) and
# saves, per file, the sequence of (function, numeric leaves) returned.
# Numeric leaves of up to 5,000 values are kept whole, larger ones as length,
# sum, sum of squares and a hash of their bytes. Environments, functions and
# calls are not walked. compare: matches the two logs file by file and, within
# a file, the k-th call of each function with its k-th call (or, where the
# test file changed, with an identical value of the same function anywhere
# in the other log); prints the largest relative difference per file and
# every value left without an identical counterpart; exits 1 when there is
# one (values differing by up to 1e-13 relative count as identical).
args <- commandArgs(trailingOnly = TRUE)
mode <- args[1]

leaves <- function(x, path, out, depth = 0L) {
  if (depth > 6L || is.null(x) || is.environment(x) || is.function(x) || is.language(x)) return(out)
  if (is.list(x)) {
    nm <- names(x)
    if (is.null(nm)) nm <- as.character(seq_along(x))
    for (i in seq_along(x)) out <- leaves(x[[i]], paste0(path, "$", nm[i]), out, depth + 1L)
    return(out)
  }
  if (is.numeric(x) || is.logical(x) || is.complex(x)) {
    v <- as.double(if (is.complex(x)) c(Re(x), Im(x)) else unclass(x))
    out[[path]] <- if (length(v) <= 5000L) v else
      list(n = length(v), sum = sum(v, na.rm = TRUE), ss = sum(v^2, na.rm = TRUE),
           hash = sum(as.double(writeBin(v, raw())) * seq_along(writeBin(v, raw()))))
  }
  out
}

if (mode == "record") {
  lib <- args[2]; out <- args[3]; files <- args[-(1:3)]
  suppressPackageStartupMessages({library(testthat); library(diffdiff, lib.loc = lib)})
  ns <- asNamespace("diffdiff")
  rec <- new.env()
  rec$log <- list(); rec$file <- ""; rec$depth <- 0L
  assign("..dd_identity_rec", rec, envir = globalenv())
  record <- function(fname, value) {
    r <- get("..dd_identity_rec", envir = globalenv())
    e <- list(f = fname, v = tryCatch(leaves(value, "", list()), error = function(e) list()))
    r$log[[r$file]][[length(r$log[[r$file]]) + 1L]] <- e
  }
  assign("..dd_identity_record", record, envir = globalenv())
  exp <- sort(getNamespaceExports("diffdiff"))
  exp <- exp[vapply(exp, function(f) is.function(get(f, ns)), logical(1))]
  # traced twice: in the namespace (calls from inside the package and
  # diffdiff::f) and in the attached package (calls by bare name from the
  # tests), which holds its own copy of each export
  pkg_env <- as.environment("package:diffdiff")
  for (f in exp) {
    ex <- bquote(..dd_identity_record(.(f), returnValue(NULL)))
    for (w in list(ns, pkg_env)) suppressMessages(trace(f, exit = ex, where = w, print = FALSE))
  }
  td <- file.path(Sys.getenv("DIFFDIFF_SRC_DIR", "."), "tests", "testthat")
  if (!length(files)) files <- list.files(td, "^test-.*\\.R$")
  files <- setdiff(basename(files), c("test-conformance-interrupt.R"))
  old <- setwd(td)
  for (h in list.files(".", "^helper.*\\.R$")) sys.source(h, envir = globalenv())
  for (f in files) {
    rec$file <- f
    rec$log[[f]] <- list()
    set.seed(1)
    t0 <- proc.time()[["elapsed"]]
    res <- tryCatch(as.data.frame(test_file(f, reporter = "silent", env = new.env(parent = globalenv()))),
                    error = function(e) NULL)
    cat(sprintf("%-45s %5d values %6.1f s\n", f, length(rec$log[[f]]), proc.time()[["elapsed"]] - t0))
  }
  setwd(old)
  saveRDS(rec$log, out)
} else if (mode == "compare") {
  a <- readRDS(args[2]); b <- readRDS(args[3])
  bad <- 0L
  rel <- function(x, y) {
    if (is.list(x) || is.list(y)) return(if (identical(x, y)) 0 else Inf)
    if (length(x) != length(y)) return(Inf)
    if (!identical(is.na(x), is.na(y))) return(Inf)
    ok <- !is.na(x)
    if (!any(ok)) return(0)
    d <- abs(x[ok] - y[ok]); s <- pmax(abs(x[ok]), abs(y[ok]), 1e-300)
    d[!is.finite(d) & x[ok] == y[ok]] <- 0
    r <- max(ifelse(d == 0, 0, d / pmax(s, 1e-8)))
    if (is.na(r)) Inf else r                     # e.g. Inf against -Inf
  }
  for (f in union(names(a), names(b))) {
    A <- a[[f]]; B <- b[[f]]
    if (is.null(A) || is.null(B)) { cat(sprintf("%-45s only in one log\n", f)); bad <- bad + 1L; next }
    fa <- vapply(A, `[[`, "", "f"); fb <- vapply(B, `[[`, "", "f")
    # the k-th call of each function in one log against its k-th call in the
    # other; where a test file changed (calls reordered, added or removed) a
    # value without a positional match is looked up among all of the other
    # log's values of that function: an identical one counts as a match, and
    # otherwise the value is reported with its distance to the nearest one
    # of the same shape
    worst <- 0; where <- ""; nleaf <- 0L; unmatched <- character()
    key <- function(e) paste(names(e$v), collapse = "|")
    dist <- function(va, vb) {
      m <- 0
      for (p in union(names(va), names(vb))) {
        # by position: `[[""]]` does not match the empty name of a top-level value
        ja <- match(p, names(va)); jb <- match(p, names(vb))
        r <- if (is.na(ja) || is.na(jb)) Inf else rel(va[[ja]], vb[[jb]])
        if (r > m) m <- r
      }
      m
    }
    for (fn in union(fa, fb)) {
      ia <- which(fa == fn); ib <- which(fb == fn)
      for (k in seq_along(ib)) {
        vb <- B[[ib[k]]]$v
        nleaf <- nleaf + length(vb)
        r <- if (k <= length(ia)) dist(A[[ia[k]]]$v, vb) else Inf
        if (r > 1e-13) {
          same <- ia[vapply(A[ia], key, "") == key(B[[ib[k]]])]
          d <- vapply(same, function(j) dist(A[[j]]$v, vb), 0)
          r <- if (length(d)) min(d) else Inf
          if (r > 1e-13) unmatched <- c(unmatched, sprintf("%s call %d (nearest %.1e)", fn, k, r))
        }
        if (r > worst) { worst <- r; where <- sprintf("%s call %d", fn, k) }
      }
      if (length(ia) > length(ib)) unmatched <- c(unmatched, sprintf("%s: %d call(s) only before", fn, length(ia) - length(ib)))
    }
    flag <- if (length(unmatched)) { bad <- bad + 1L; "DIFFERS" } else ""
    cat(sprintf("%-45s %5d values %7d leaves  max rel %.1e %s\n", f, length(B), nleaf, worst, flag))
    if (length(unmatched))
      cat(sprintf("    %s\n", utils::head(unmatched, 8)), if (length(unmatched) > 8) sprintf("    ... %d more\n", length(unmatched) - 8), sep = "")
  }
  cat(sprintf("%d file(s) differ\n", bad))
  quit(status = if (bad) 1L else 0L)
}
