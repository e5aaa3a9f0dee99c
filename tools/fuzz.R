# Fuzz every registered .Call routine of diffdiff in child processes.
#
# 1. Record real argument lists: the package's R code is sourced into an
#    environment whose `.Call` records each call's arguments, and a workload
#    of estimator calls runs through it.
# 2. Mutate: for each recorded call (up to two per routine) and each argument,
#    replace the argument by each value of a pool of hostile values (wrong
#    types, NA, empty, negative, INT_MAX, wrong lengths, truncated lists).
#    Routines the workload did not reach get random argument lists.
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
rec <- new.env()
E <- new.env(parent = ns)
E$.Call <- function(.NAME, ...) {
  nm <- sub("^C_", "", if (is.character(.NAME)) .NAME else .NAME$name)
  have <- rec[[nm]]
  if (length(have) < 2L) {
    a <- list(...)
    # keep small calls only (a child serialises nothing large)
    if (sum(vapply(a, function(x) as.numeric(utils::object.size(x)), 0)) < 2e6)
      rec[[nm]] <- c(have, list(a))
  }
  base::.Call(.NAME, ...)
}
for (f in list.files("R", pattern = "[.]R$", full.names = TRUE)) sys.source(f, envir = E, keep.source = FALSE)
for (f in list.files("tests/testthat", pattern = "^helper-.*[.]R$", full.names = TRUE))
  sys.source(f, envir = globalenv(), keep.source = FALSE)

quiet <- function(expr) tryCatch(suppressWarnings(suppressMessages(expr)), error = function(e) NULL)
set.seed(seed)
d <- sim_cs_panel(n = 200, T = 6)
d$d <- as.numeric(d$g > 0 & d$t >= d$g)
d$cl <- d$id %% 15
d$psu <- d$id %% 40; d$st <- d$id %% 4
u <- sim_unbalanced(n_units = 80, n_t = 8)
s <- sim_sdid_panel(N0 = 20, N1 = 4, T0 = 8, T1 = 3, covariates = TRUE)
s2 <- s; s2$treat[s2$unit %in% c("u21", "u22") & s2$time >= 2007] <- 1   # staggered
invisible(with(E, {
  quiet(did_2x2(d[d$t %in% 3:4, ], "y", "d", "t", cluster = "cl", nboot = 49))
  quiet(did_twfe(d, "y", "id", "t", "d", xformla = ~ x1, cluster = "cl", nboot = 49, weightsname = "w"))
  quiet(did_twfe(u, "y", "id", "t", "d", fe = "firm", cluster = c("state", "t")))
  quiet(did_event(d, "y", "id", "t", "g", cluster = "id"))
  f <- quiet(did_cs(d, "y", "id", "t", "g", xformla = ~ x1, nboot = 49))
  quiet(did_cs(d, "y", "id", "t", "g", est_method = "ipw", xformla = ~ x1, nboot = 0))
  quiet(did_cs(d, "y", "id", "t", "g", panel = FALSE, xformla = ~ x1, nboot = 49))
  quiet(did_cs(d[-(1:7), ], "y", "id", "t", "g", allow_unbalanced_panel = TRUE, nboot = 0))
  if (!is.null(f)) {
    a <- quiet(aggregate.did_cs(f, "dynamic"))
    quiet(aggregate.did_cs(f, "group")); quiet(aggregate.did_cs(f, "simple"))
    if (!is.null(a)) {
      quiet(honest_did(a, type = "SD", M = c(0, 0.01)))
      quiet(honest_did(a, type = "RM", Mbar = c(0, 0.5), grid_points = 50))
      quiet(honest_did(a, type = "SD", M = 0.01, sign = "positive"))
      quiet(honest_did(a, type = "SD", M = 0.01, method = "Conditional"))
      quiet(pretrends_power(a, power = 0.5))
    }
  }
  quiet(did_sa(d, "y", "id", "t", "g", cluster = "id"))
  quiet(did_bjs(d, "y", "id", "t", "g", pretrends = TRUE))
  quiet(did_gardner(d, "y", "id", "t", "g"))
  quiet(did_stacked(d, "y", "id", "t", "g", kappa_pre = 1, kappa_post = 1))
  if (!is.null(f)) quiet(as.matrix.dd_ifs(f$inf))
  quiet(bacon_decomp(d, "y", "id", "t", dname = "d"))
  quiet(bacon_decomp(d, "y", "id", "t", dname = "d", xformla = ~ x1))
  for (se in c("placebo", "bootstrap", "jackknife"))
    quiet(did_sdid(s, "y", "unit", "time", "treat", se = se, nboot = 5, xformla = if (se == "jackknife") ~ x1))
  quiet(did_sdid(s, "y", "unit", "time", "treat", se = "jackknife"))
  quiet(did_sdid(s2, "y", "unit", "time", "treat", se = "bootstrap", nboot = 5, staggered = TRUE))
  sd1 <- quiet(survey_design(d, weights = "w", strata = "st", ids = "psu", nest = TRUE))
  if (!is.null(sd1)) {
    quiet(aggregate_survey(d, "y", "t", sd1))
    quiet(did_cs(d, "y", "id", "t", "g", nboot = 0, survey = sd1))
    quiet(did_twfe(d, "y", "id", "t", "d", survey = sd1))
  }
  rw <- matrix(runif(nrow(d) * 8, 0.5, 1.5), nrow(d), 8)
  dd <- cbind(d, as.data.frame(rw))
  sd2 <- quiet(survey_design(dd, weights = "w", repweights = paste0("V", 1:8), type = "bootstrap"))
  if (!is.null(sd2)) {
    quiet(aggregate_survey(dd, "y", "t", sd2))
    quiet(did_twfe(dd, "y", "id", "t", "d", survey = sd2))
    quiet(did_twfe(dd, "y", "id", "t", "d", xformla = ~ x1, survey = sd2))
  }
  NULL
}))
rm(E, d, u, s, s2); invisible(gc())   # a small parent forks faster

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
      if (is.integer(x)) { y <- x; y[1] <- .Machine$integer.max; v <- c(v, list(y)) }
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
