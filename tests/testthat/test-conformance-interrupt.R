# The conformance suite's Ctrl-C check (issue 34): for every estimator in
# `cf_estimators` (helper-conformance.R), its longest loop (`long`: a call of
# many seconds on a large panel) runs in a fresh R process; after it has run
# for 1.5 s the process gets SIGINT, and the call must stop within 1 s (the
# time from the signal to R's interrupt handler) and the session go on working.
# Unix only (signals); set DIFFDIFF_SKIP_INTERRUPT=true to skip it.

test_that("conformance: Ctrl-C stops every estimator's longest loop within 1 s", {
  skip_on_os("windows")
  skip_if_not_installed("callr")
  skip_if(identical(Sys.getenv("DIFFDIFF_SKIP_INTERRUPT"), "true"))
  helper <- normalizePath(test_path("helper-conformance.R"))
  child <- function(code, helper) {
    suppressMessages(library(diffdiff))
    source(helper)
    set.seed(1)
    ex <- parse(text = code)
    # everything but the last expression builds the data
    for (i in seq_len(length(ex) - 1L)) eval(ex[[i]], globalenv())
    cat("START\n"); flush(stdout())
    res <- tryCatch({
      suppressWarnings(suppressMessages(eval(ex[[length(ex)]], globalenv())))
      "COMPLETED"
    }, interrupt = function(e) sprintf("STOPPED %.6f", as.numeric(Sys.time())))
    cat(res, "\n"); cat("ALIVE", sum(1:10), "\n"); flush(stdout())
    invisible(NULL)
  }
  for (e in names(cf_estimators)) {
    code <- cf_estimators[[e]]$long
    expect_false(is.null(code), label = paste(e, "has a long call"))
    if (is.null(code)) next
    p <- callr::r_bg(child, list(code = code, helper = helper), stdout = "|", stderr = "|",
                     env = c(callr::rcmd_safe_env(), OMP_NUM_THREADS = "2"))
    out <- character()
    t_end <- Sys.time() + 180
    while (!any(out == "START") && p$is_alive() && Sys.time() < t_end) {
      p$poll_io(200)
      out <- c(out, p$read_output_lines())
    }
    expect_true(any(out == "START"), label = sprintf("%s: the data were built (%s)", e,
                                                     paste(p$read_error_lines(), collapse = " ")))
    Sys.sleep(1.5)
    t_int <- as.numeric(Sys.time())
    p$interrupt()
    p$wait(30000)
    if (p$is_alive()) p$kill()
    out <- c(out, p$read_all_output_lines(), p$read_all_error_lines())
    st <- grep("^STOPPED", out, value = TRUE)
    lag <- if (length(st)) as.numeric(sub("^STOPPED ([0-9.]+).*", "\\1", st[1])) - t_int else NA_real_
    expect_false(any(grepl("^COMPLETED", out)), label = sprintf("%s: the long call was still running at the signal", e))
    expect_true(length(st) == 1L && lag <= 1, label = sprintf("%s stopped within 1 s of Ctrl-C (lag %s s; output: %s)",
                                                             e, format(lag, digits = 3), paste(out, collapse = " | ")))
    expect_true(any(grepl("^ALIVE 55", out)), label = paste(e, "session works after the interrupt"))
    f <- Sys.getenv("DIFFDIFF_CONFORMANCE_LOG")
    if (nzchar(f))
      cat(sprintf("%s\tctrl-c\t%s\n", e, if (isTRUE(length(st) == 1L && lag <= 1)) sprintf("%.2f s", lag) else "FAIL"),
          file = f, append = TRUE)
  }
})
