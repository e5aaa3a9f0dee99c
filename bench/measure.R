# Shared by the benchmark scripts that run each side in a fresh process
# (sourced inside the callr child): the time and peak-memory growth of one
# call of run() (VmHWM after /proc/self/clear_refs), then the median time of
# `reps` calls.
bench_measure <- function(run, reps = 1L) {
  rss <- function(field) {
    s <- readLines("/proc/self/status")
    as.numeric(sub("[^0-9]*([0-9]+).*", "\\1", grep(paste0("^", field, ":"), s, value = TRUE)))
  }
  invisible(gc(full = TRUE))
  cat("5", file = "/proc/self/clear_refs")
  base <- rss("VmRSS")
  t0 <- proc.time()[["elapsed"]]
  res <- run()
  el <- proc.time()[["elapsed"]] - t0
  mb <- (rss("VmHWM") - base) / 1024
  if (reps > 1) el <- stats::median(c(el, vapply(seq_len(reps - 1), function(i) system.time(run())[["elapsed"]], 0)))
  list(time = el, mb = mb, res = res)
}
