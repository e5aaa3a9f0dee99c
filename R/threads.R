#' Number of threads used by diffdiff
#'
#' Gets or sets the number of OpenMP threads the C backend may use. The default
#' is half the logical cores, at least one, capped by the environment variables
#' `OMP_THREAD_LIMIT` and `OMP_NUM_THREADS` (the smallest of those set); under
#' `R CMD check` (when `_R_CHECK_LIMIT_CORES_` is set) it is at most 2, the most
#' CRAN allows, and still capped by those variables. Small inputs always run on one thread:
#' a second thread is used only when a task has at least `throttle` units of
#' work per thread. Results are bitwise identical for any thread count: work is
#' split into fixed tasks (columns, replicates) that are each computed by one
#' thread and combined in a fixed order. diffdiff never calls
#' `omp_set_num_threads()`, so other packages' thread settings are untouched.
#'
#' @param n `NULL` to query, or a positive whole number of threads.
#' @param throttle Optional; the work per thread (roughly, observations times
#'   columns) below which a task stays serial. Default 65536.
#' @return The number of threads in force (invisibly when setting).
#' @examples
#' old <- dd_threads()
#' dd_threads(1)
#' dd_threads()
#' dd_threads(old)
#' @export
dd_threads <- function(n = NULL, throttle = NULL) {
  if (is.null(n) && is.null(throttle)) return(.Call(C_get_threads))
  if (is.null(n)) n <- .Call(C_get_threads)
  n <- dd_check_count(n, "n", min = 1)   # a count: 1e10 is an error naming `n`, not an NA reaching C
  if (!is.null(throttle) && (!is.numeric(throttle) || length(throttle) != 1L ||
                             is.na(throttle) || throttle < 1))
    stop(sprintf("`throttle` must be a number >= 1; got %s.", dd_show(throttle)), call. = FALSE)
  n <- min(n, max(1L, .Call(C_num_procs)))
  invisible(.Call(C_set_threads, n, if (is.null(throttle)) NA_real_ else as.double(throttle)))
}

# The default: half the cores (under R CMD check, i.e. with
# _R_CHECK_LIMIT_CORES_ set and not "false", 2 or the cores if fewer), capped
# by OMP_THREAD_LIMIT and OMP_NUM_THREADS where they are set. The check rule
# caps; it used to replace the OpenMP limits. OMP_NUM_THREADS may list the
# threads per nesting level ("4,2"): the first (outer) level counts.
dd_default_threads <- function() {
  procs <- max(1L, .Call(C_num_procs))
  chk <- tolower(Sys.getenv("_R_CHECK_LIMIT_CORES_", ""))
  n <- if (nzchar(chk) && chk != "false") min(2L, procs) else max(1L, procs %/% 2L)
  for (v in c("OMP_THREAD_LIMIT", "OMP_NUM_THREADS")) {
    k <- suppressWarnings(as.numeric(strsplit(trimws(Sys.getenv(v, "")), ",", fixed = TRUE)[[1]][1]))
    if (length(k) == 1L && !is.na(k) && k >= 1) n <- min(n, as.integer(min(k, .Machine$integer.max)))
  }
  max(1L, n)
}

# The one model for R-level parallel loops (loops over fits or draws:
# did_trop's cells and bootstrap, simulate_power()'s draws). Kernels in C
# use threads instead (dd_chunks in src/threads.c; CONTRIBUTING.md,
# "Parallel work").
#
# dd_lapply(X, FUN, cores, label) is lapply(X, FUN): on `cores` forked
# processes (parallel::mclapply, prescheduled: element i always goes to the
# same child for a given `cores`) when cores > 1, X has more than one element
# and the platform forks (not Windows); otherwise in this process, through
# dd_progress_lapply() when `label` names the loop for a progress bar. A
# forked child runs diffdiff's kernels on one thread (threads.c's
# pthread_atfork handler). An error in a child is raised again here, as the
# sequential loop would raise it.
#
# Random numbers: the result must not depend on `cores`, so FUN does not draw
# from R's stream in the children (mclapply reseeds them). Either every draw
# is made in this process before the loop (did_trop's resamples), or FUN
# first calls set.seed() with a seed drawn here for its element
# (simulate_power()); a C kernel inside FUN then takes its counter-based
# streams' seed from that state.
dd_forks <- new.env(parent = emptyenv())
dd_forks$n <- 0L   # forked loops run in this session (the tests read it: which path ran)

dd_lapply <- function(X, FUN, cores = 1L, label = NULL) {
  # a future plan set by the caller takes the loop (below); otherwise `cores`
  if (length(X) > 1L && dd_future_plan_active()) return(dd_future_lapply(X, FUN, label))
  if (cores > 1L && length(X) > 1L && .Platform$OS.type != "windows") {
    dd_forks$n <- dd_forks$n + 1L
    res <- parallel::mclapply(X, FUN, mc.cores = cores, mc.preschedule = TRUE)
    bad <- vapply(res, inherits, logical(1), "try-error")
    if (any(bad)) stop(attr(res[[which(bad)[1]]], "condition"))
    return(res)
  }
  if (is.null(label)) lapply(X, FUN) else dd_progress_lapply(X, FUN, label)
}

# dd_seeded_lapply(X, FUN, cores, label) is dd_lapply() for loops whose
# elements draw random numbers (simulate_power()'s data, a placebo draw's
# bootstrap): one seed per element is drawn here, from the caller's stream,
# and each element runs under set.seed(its seed), so its numbers do not
# depend on the plan, `cores` or the order the elements run in; the
# caller's stream is left where drawing the seeds left it.
dd_seeded_lapply <- function(X, FUN, cores = 1L, label = NULL) {
  if (!length(X)) return(list())
  seeds <- sample.int(.Machine$integer.max, length(X))
  old <- get(".Random.seed", envir = globalenv(), inherits = FALSE)
  on.exit(assign(".Random.seed", old, envir = globalenv()))
  dd_lapply(seq_along(X), function(i) {
    set.seed(seeds[i])
    FUN(X[[i]])
  }, cores, label)
}

# The caller's future plan (future + future.apply, in Suggests): when a plan
# other than sequential is set, the loop runs on its workers (multisession,
# cluster, batchtools on SLURM, ...), element by element, with the same
# numbers as the sequential loop bit for bit: every element seeds itself as
# in the sequential loop (or draws nothing), under the caller's RNG kind,
# whatever the worker's stream (future.seed = TRUE gives each element its
# own L'Ecuyer stream, so future sees no RNG misuse); the caller's own
# random-number state is left as the sequential loop leaves it. Progress is
# relayed from the workers by progressr. (`cores` forks only without a plan.)
dd_futures <- new.env(parent = emptyenv())
dd_futures$n <- 0L   # loops run through a future plan in this session (the tests read it: which path ran)

dd_future_plan_active <- function() {
  if (!isNamespaceLoaded("future") || !requireNamespace("future.apply", quietly = TRUE)) return(FALSE)
  !inherits(future::plan("next"), "sequential")
}

dd_future_lapply <- function(X, FUN, label = NULL) {
  dd_futures$n <- dd_futures$n + 1L
  kind <- RNGkind()
  had <- exists(".Random.seed", envir = globalenv(), inherits = FALSE)
  old <- if (had) get(".Random.seed", envir = globalenv(), inherits = FALSE)
  on.exit(if (had) assign(".Random.seed", old, envir = globalenv()) else if (exists(".Random.seed", envir = globalenv(), inherits = FALSE)) rm(".Random.seed", envir = globalenv()))
  task <- function(x) {
    RNGkind(kind[1], kind[2], kind[3])
    FUN(x)
  }
  run <- task
  if (!is.null(label) && !isFALSE(getOption("diffdiff.progress")) && isNamespaceLoaded("progressr")) {
    p <- progressr::progressor(steps = length(X), label = label)
    run <- function(x) {
      r <- task(x)
      p(message = label)
      r
    }
  }
  # Ctrl-C stops the loop at once; the plan's workers, still busy with their
  # chunks, are then replaced (dd_future_reset) so that the session's next
  # future does not wait for them
  withCallingHandlers(future.apply::future_lapply(X, run, future.seed = TRUE, future.packages = "diffdiff"),
                      interrupt = function(e) dd_future_reset())
}

# Restart the plan's workers (after an interrupt): the plan is set to
# sequential and back, which shuts down the workers future started
# (multisession, cluster from host names; busy PSOCK workers are left to
# exit after their chunk) and starts new ones on the next use. A cluster the
# caller made (plan(cluster, workers = cl)) is the caller's and is left
# alone, as are batchtools jobs already submitted to a scheduler.
dd_future_reset <- function() {
  pl <- future::plan("list")
  if (inherits(formals(pl[[1]])$workers, "cluster")) return(invisible(FALSE))
  future::plan(future::sequential)
  future::plan(pl)
  invisible(TRUE)
}
