# Progress of long loops through progressr (in Suggests): silent unless the
# user asks for it (progressr::with_progress(), or
# progressr::handlers(global = TRUE)). Asking loads progressr, so a session
# where it is not loaded cannot show progress: the loops then run in one
# call, without loading it (that would cost every process ~0.1 s).
#
# dd_progress_batches(n, fun, label, combine): fun(b) computes the tasks b
# (consecutive task numbers) and returns their values (a vector, or a matrix
# or list of matrices with one row per task: pass combine = dd_rbind_batches).
# The tasks run in 20 batches with a progress update after each, but only
# when the first batch suggests the loop will take at least
# getOption("diffdiff.progress_after", 1) seconds; otherwise the rest runs
# in one more call, silently. A task's result does not depend on the
# batching (tasks are independent and their random draws are fixed before:
# the SDiD resamples are drawn in R, the multiplier and wild bootstraps take
# one seed and their first replicate), so the numbers are the same with or
# without progress; the option diffdiff.progress = FALSE runs one batch.
# With `distribute = TRUE` (loops whose tasks are fits worth shipping:
# SDiD's placebo, bootstrap and jackknife replications) and a future plan
# set by the caller, the batches run on the plan's workers instead
# (dd_future_lapply, R/threads.R), with the same numbers.
dd_progress_batches <- function(n, fun, label, combine = function(r) unlist(r, use.names = FALSE),
                                distribute = FALSE) {
  if (distribute && n > 1L && dd_future_plan_active()) {
    nb <- min(n, max(20L, 2L * future::nbrOfWorkers()))
    batches <- unname(split(seq_len(n), ceiling(seq_len(n) * nb / n)))
    return(combine(dd_future_lapply(batches, fun, label)))
  }
  if (n < 40L || isFALSE(getOption("diffdiff.progress")) || !isNamespaceLoaded("progressr"))
    return(fun(seq_len(n)))
  batches <- split(seq_len(n), ceiling(seq_len(n) * 20 / n))
  t0 <- proc.time()[["elapsed"]]
  first <- fun(batches[[1]])
  after <- getOption("diffdiff.progress_after", 1)
  if ((proc.time()[["elapsed"]] - t0) * length(batches) < after)
    return(combine(list(first, fun(unlist(batches[-1], use.names = FALSE)))))
  p <- progressr::progressor(steps = n, label = label)
  p(message = label, amount = length(batches[[1]]))
  combine(c(list(first), lapply(batches[-1], function(b) {
    r <- fun(b)
    p(message = label, amount = length(b))
    r
  })))
}

# batches of matrices (or of lists of matrices, element by element) stacked
# by rows; the numeric attribute "not_converged" (a count) is summed
dd_rbind_batches <- function(r) {
  if (length(r) == 1L) return(r[[1]])
  nc <- sum(vapply(r, function(x) as.numeric(attr(x, "not_converged") %||% 0), numeric(1)))
  out <- if (is.list(r[[1]])) {
    stats::setNames(lapply(seq_along(r[[1]]), function(k) do.call(rbind, lapply(r, `[[`, k))), names(r[[1]]))
  } else do.call(rbind, r)
  if (!is.null(attr(r[[1]], "not_converged"))) attr(out, "not_converged") <- as.integer(nc)
  out
}

# A C bootstrap of nboot replicates in batches: boot(B, seed, first)
# computes replicates first, ..., first + B - 1 (0-based) from the seed (a
# matrix, or a list of matrices, with one row per replicate). The seed (rng.c,
# dd_seed_arg) is two whole numbers in [0, 2^32) from R's generator, the very
# draws the C code makes itself when given none, drawn once for all batches.
dd_boot_batches <- function(nboot, label, boot) {
  seed <- dd_boot_seed()
  dd_progress_batches(nboot, function(b) boot(length(b), seed, if (length(b)) b[[1]] - 1L else 0L), label,
                      combine = dd_rbind_batches)
}
dd_boot_seed <- function() floor(stats::runif(2L) * 4294967296)

# lapply() with a progress update after each element (deterministic work,
# e.g. honest_did()'s interval at each M): the same results with or without
# progress.
dd_progress_lapply <- function(X, FUN, label) {
  if (length(X) < 2L || isFALSE(getOption("diffdiff.progress")) || !isNamespaceLoaded("progressr"))
    return(lapply(X, FUN))
  p <- progressr::progressor(steps = length(X), label = label)
  lapply(X, function(x) {
    r <- FUN(x)
    p(message = label)
    r
  })
}
