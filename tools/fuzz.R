# Fuzz every registered .Call routine of diffdiff in child processes.
#
# 1. Record real argument lists: the package's R code is sourced into an
#    environment whose `.Call` records each call's arguments, and a workload
#    of estimator, diagnostic and survey calls runs through it
#    (tools/fuzz-workload.R, which reaches every registered routine).
# 2. Mutate: for each recorded call (up to two per routine, and one more per
#    call of another shape, up to four) and each argument,
#    replace the argument by each value of a pool of hostile values (wrong
#    types, NA, empty, negative, INT_MAX, wrong lengths, truncated lists).
#    Every routine also gets random argument lists (only these, for a
#    routine the workload does not reach: the coverage test fails then).
# 3. Each try runs in a forked child (parallel::mcparallel) with a time limit:
#    a child that dies is a crash, one that does not answer is a hang; an R
#    error or a value is fine.
# Prints one line per routine and the totals; exits 1 on any crash or hang.
# Usage: Rscript tools/fuzz.R [LIB] [SEED] [TIMEOUT] [PER_ARG]   (from the repository root)
args <- commandArgs(TRUE)
lib <- if (length(args) >= 1 && nzchar(args[1])) args[1] else ""
seed <- if (length(args) >= 2) as.integer(args[2]) else 1L
timeout <- if (length(args) >= 3) as.numeric(args[3]) else 20
per_arg <- if (length(args) >= 4) as.integer(args[4]) else 14L
if (nzchar(lib)) .libPaths(c(lib, .libPaths()))
suppressMessages(library(diffdiff))
if (.Platform$OS.type != "unix") stop("tools/fuzz.R needs fork() (parallel::mcparallel)")
dd_threads(2)
ns <- asNamespace("diffdiff")
routines <- getDLLRegisteredRoutines("diffdiff")$.Call
arity <- vapply(routines, function(r) r$numParameters, integer(1))
names(arity) <- vapply(routines, function(r) r$name, character(1))

# ---- 1. record ----------------------------------------------------------
# the workload (tools/fuzz-workload.R; tests/testthat/test-fuzz-coverage.R
# checks that it reaches every registered routine)
source(file.path("tools", "fuzz-workload.R"), local = TRUE)
rec <- fuzz_record(".", seed)
unreached <- setdiff(names(arity), names(rec))
if (length(unreached))
  cat(sprintf("not reached by the workload (random arguments only): %s\n\n", paste(unreached, collapse = ", ")))
invisible(gc())   # a small parent forks faster

# ---- 2. values ----------------------------------------------------------
pool <- list(NULL, logical(0), integer(0), numeric(0), character(0), list(), NA, NA_integer_, NA_real_,
             -1L, 0L, 1L, .Machine$integer.max, -.Machine$integer.max, 1e10, -1e300, NaN, Inf, "a",
             TRUE, 2.5, c(1, NA, 3), 1:3, matrix(0, 0, 0), matrix(1, 2, 2), matrix(NA_real_, 3, 1),
             list(1, "a"), list(NULL, NULL, NULL, NULL, NULL), c(-5L, 10L), factor("a"))
variants <- function(x) {
  v <- pool
  if (length(x) > 1) {
    v <- c(v, list(x[seq_len(length(x) %/% 2)]))                         # truncated
    if (is.atomic(x)) {
      y <- x; y[1] <- NA; v <- c(v, list(y))                              # NA inside
      if (is.numeric(x)) { y <- x; y[length(y)] <- -y[length(y)] - 7; v <- c(v, list(y)) }   # out of range
      if (is.integer(x)) {
        y <- x; y[1] <- .Machine$integer.max; v <- c(v, list(y))
        y <- x; y[1] <- suppressWarnings(max(x, na.rm = TRUE)) + 1L; v <- c(v, list(y))   # one past the largest code
      }
      v <- c(v, list(if (is.integer(x)) as.double(x) else if (is.double(x)) as.integer(x) else as.character(x)))
    }
    if (is.list(x)) v <- c(v, list(x[-length(x)]))
  }
  if (is.matrix(x)) { y <- x; dim(y) <- rev(dim(y)); v <- c(v, list(y), list(as.vector(x))) }
  v
}

# ---- 3. run -------------------------------------------------------------
try_one <- function(sym, a) {
  job <- parallel::mcparallel({
    r <- tryCatch({ v <- do.call(base::.Call, c(list(sym), a)); "ok" }, error = function(e) "error")
    r
  }, silent = TRUE)
  res <- parallel::mccollect(job, wait = FALSE, timeout = timeout)
  if (is.null(res)) {                    # no answer within the time limit
    tools::pskill(job$pid, tools::SIGKILL)
    suppressWarnings(parallel::mccollect(job, wait = TRUE))
    return("hang")
  }
  r <- res[[1]]                          # NULL: the child died without an answer
  if (is.character(r) && length(r) == 1 && r %in% c("ok", "error")) r else "crash"
}

set.seed(seed)
out <- list(); fails <- list()
for (nm in names(arity)) {
  sym <- get(paste0("C_", nm), envir = ns)
  calls <- rec[[nm]]
  tries <- list()
  if (length(calls)) {
    # every argument of every recorded call, with up to `per_arg` hostile values
    for (a in calls) for (i in seq_along(a)) for (v in { vv <- variants(a[[i]]); vv[sample.int(length(vv), min(per_arg, length(vv)))] }) {
      b <- a
      if (is.null(v)) b[i] <- list(NULL) else b[[i]] <- v
      tries[[length(tries) + 1L]] <- b
    }
  }
  n_rand <- if (arity[[nm]] == 0L) 1L else if (length(calls)) 20L else 150L
  for (k in seq_len(n_rand)) tries[[length(tries) + 1L]] <- sample(pool, arity[[nm]], replace = TRUE)
  st <- suppressWarnings(vapply(tries, function(a) try_one(sym, a), character(1)))
  bad <- which(st %in% c("crash", "hang"))
  for (j in bad) fails[[length(fails) + 1L]] <- list(routine = nm, status = st[j],
                                                    args = vapply(tries[[j]], function(x) paste(utils::capture.output(utils::str(x, give.attr = FALSE, vec.len = 2)), collapse = " ")[1], ""))
  out[[nm]] <- c(recorded = length(calls), tries = length(st), ok = sum(st == "ok"), error = sum(st == "error"),
                 crash = sum(st == "crash"), hang = sum(st == "hang"))
  cat(sprintf("%-18s recorded %d  tries %4d  ok %4d  error %4d  crash %3d  hang %d\n", nm, length(calls),
              length(st), sum(st == "ok"), sum(st == "error"), sum(st == "crash"), sum(st == "hang")))
}
tot <- Reduce(`+`, out)
cat(sprintf("\nfuzz: %d routines, %d tries, %d crashes, %d hangs (%d routines reached by the workload)\n",
            length(out), tot[["tries"]], tot[["crash"]], tot[["hang"]], sum(vapply(out, `[[`, 0, "recorded") > 0)))
if (length(fails)) {
  cat("\nfailures (first 40):\n")
  for (f in utils::head(fails, 40)) {
    cat(sprintf("- %s: %s\n", f$routine, f$status))
    for (k in seq_along(f$args)) cat(sprintf("    arg %d: %s\n", k, substr(f$args[k], 1, 110)))
  }
}
quit(status = if (tot[["crash"]] + tot[["hang"]] > 0) 1L else 0L)
