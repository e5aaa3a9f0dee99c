# Shared by bench/scenarios/*.R: time each phase of a practitioner workflow
# (elapsed seconds) and the process's peak resident memory, and write the
# result as JSON. Each scenario script defines <name>_data(scale) and
# <name>_phases(data) (a named list of functions of an environment `res`
# in which phases leave their results) and calls scenario_main() last;
# sourced with SCENARIO_NO_MAIN set (as the smoke tests do), it only
# defines them.

scenario_rss_mb <- function(field = "VmHWM") {
  s <- readLines("/proc/self/status")
  as.numeric(sub("[^0-9]*([0-9]+).*", "\\1", grep(paste0("^", field, ":"), s, value = TRUE))) / 1024
}

# run the phases in order in one environment; a phase that stops is
# recorded (ok = FALSE, error) and the chain goes on
scenario_run <- function(name, scale, phases, data, meta = list()) {
  res <- new.env()
  res$data <- data
  invisible(gc(full = TRUE))
  start_mb <- scenario_rss_mb("VmRSS")
  rows <- lapply(names(phases), function(p) {
    t0 <- proc.time()[["elapsed"]]
    err <- tryCatch({ phases[[p]](res); NA_character_ }, error = function(e) conditionMessage(e))
    data.frame(phase = p, seconds = proc.time()[["elapsed"]] - t0, ok = is.na(err), error = err,
               stringsAsFactors = FALSE)
  })
  tab <- do.call(rbind, rows)
  list(scenario = name, scale = scale, total_seconds = sum(tab$seconds), phases = tab,
       memory = list(start_mb = start_mb, peak_mb = scenario_rss_mb("VmHWM")),
       headline = if (is.function(res$headline)) res$headline() else res$headline,
       meta = meta, diffdiff = as.character(utils::packageVersion("diffdiff")),
       R = paste(R.version$major, R.version$minor, sep = "."))
}

scenario_json <- function(x) {
  enc <- function(v) {
    if (is.null(v)) return("null")
    if (is.data.frame(v)) return(paste0("[", paste(vapply(seq_len(nrow(v)), function(i) enc(as.list(v[i, , drop = FALSE])), ""), collapse = ","), "]"))
    if (is.list(v)) return(paste0("{", paste(sprintf("\"%s\":%s", names(v), vapply(v, enc, "")), collapse = ","), "}"))
    if (length(v) != 1L) return(paste0("[", paste(vapply(as.list(v), enc, ""), collapse = ","), "]"))
    if (is.na(v)) return("null")
    if (is.character(v)) return(sprintf("\"%s\"", gsub("\"", "\\\\\"", v)))
    if (is.logical(v)) return(tolower(as.character(v)))
    format(v, digits = 15)
  }
  enc(x)
}

# Rscript bench/scenarios/<name>.R <scale> [out.json] [data.csv]
scenario_main <- function(name) {
  if (nzchar(Sys.getenv("SCENARIO_NO_MAIN"))) return(invisible())
  a <- commandArgs(TRUE)
  scale <- if (length(a) >= 1) a[1] else "small"
  suppressPackageStartupMessages(library(diffdiff))
  data <- if (length(a) >= 3 && nzchar(a[3])) utils::read.csv(a[3]) else get(paste0(name, "_data"))(scale)
  r <- scenario_run(name, scale, get(paste0(name, "_phases"))(), data)
  out <- if (length(a) >= 2 && nzchar(a[2])) a[2] else ""
  js <- scenario_json(r)
  if (nzchar(out)) writeLines(js, out) else cat(js, "\n")
  bad <- r$phases[!r$phases$ok, ]
  if (nrow(bad)) {
    message(sprintf("%s/%s: phase %s failed: %s", name, scale, bad$phase, bad$error))
    quit(status = 1)
  }
  invisible(r)
}

# shared by the chains: all four aggregations of a group-time fit, the
# pre-period rows of an event study, and a report table of several fits
scenario_aggregates <- function(fit)
  lapply(c(simple = "simple", dynamic = "dynamic", group = "group", calendar = "calendar"), function(t) aggregate(fit, t))
scenario_pretrends <- function(es) es$coeftable[grepl("^event::-", es$coeftable$term), ]
scenario_report <- function(fits)
  do.call(rbind, lapply(names(fits), function(k)
    cbind(model = k, tidy(fits[[k]])[, c("term", "estimate", "std.error", "conf.low", "conf.high")])))
