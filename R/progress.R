# Progress of long loops through progressr (in Suggests): silent unless the
# user asks for it (progressr::with_progress(), or
# progressr::handlers(global = TRUE)).
#
# dd_progress_batches(n, fun, label): fun(b) computes the tasks b (an integer
# vector of task numbers) and returns one value per task. The tasks run in
# at most 20 batches with a progress update after each. A task's result does
# not depend on the batching (tasks are independent and their draws are made
# before), so the numbers are the same with or without progress; the option
# diffdiff.progress = FALSE runs one batch (no progress).
dd_progress_batches <- function(n, fun, label) {
  if (n < 40L || isFALSE(getOption("diffdiff.progress")) || !requireNamespace("progressr", quietly = TRUE))
    return(fun(seq_len(n)))
  batches <- split(seq_len(n), ceiling(seq_len(n) * 20 / n))
  p <- progressr::progressor(steps = n, label = label)
  unlist(lapply(batches, function(b) {
    r <- fun(b)
    p(amount = length(b))
    r
  }), use.names = FALSE)
}

# lapply() with a progress update after each element (deterministic work,
# e.g. honest_did()'s interval at each M): the same results with or without
# progress.
dd_progress_lapply <- function(X, FUN, label) {
  if (length(X) < 2L || isFALSE(getOption("diffdiff.progress")) || !requireNamespace("progressr", quietly = TRUE))
    return(lapply(X, FUN))
  p <- progressr::progressor(steps = length(X), label = label)
  lapply(X, function(x) {
    r <- FUN(x)
    p()
    r
  })
}
