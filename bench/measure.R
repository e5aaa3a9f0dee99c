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

# The results table of the scripts whose rows have case, peer, peer_s,
# diffdiff_s, speedup, peer_peak_mb, diffdiff_peak_mb, mem_ratio, diff (a
# string), as markdown lines.
bench_table_md <- function(res)
  c("| case | peer | peer s | diffdiff s | speedup | peer MB | diffdiff MB | mem ratio | diff |",
    "|---|---|---|---|---|---|---|---|---|",
    sprintf("| %s | %s | %.2f | %.3f | %.1fx | %.1f | %.1f | %.3f | %s |", res$case, res$peer, res$peer_s,
            res$diffdiff_s, res$speedup, res$peer_peak_mb, res$diffdiff_peak_mb, res$mem_ratio, res$diff))

# Scripts that run both sides in one process (did_synth, did_lpdid,
# did_lwdid, Conley): a call's elapsed time and R's heap peak above the
# baseline before it (MB)
bench_in_process <- function(expr) {
  base <- sum(gc(reset = TRUE, full = TRUE)[, 2])
  t0 <- proc.time()[["elapsed"]]
  val <- force(expr)
  list(value = val, seconds = proc.time()[["elapsed"]] - t0, mb = sum(gc()[, 6]) - base)
}

# bench_in_process() of fun(), with the time the median of `reps` calls
# (the first included)
bench_in_process_median <- function(fun, reps = 3L) {
  m <- bench_in_process(fun())
  m$seconds <- stats::median(c(m$seconds, replicate(reps - 1L, system.time(fun())[["elapsed"]])))
  m
}
