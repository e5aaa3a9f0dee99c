# bench/summary.R: one page over every benchmark's results, regenerated from
# the JSON files the bench/ scripts write (bench/results/*.json): per script
# and case, the peer, the speed-up (peer time / diffdiff time), the peak
# memory ratio (diffdiff / peer), the agreement recorded by the script, and
# the date and threads of the run. Scripts that write no JSON are listed
# with their markdown result, and the number of cases per script is shown
# (the target is three sizes each).
# Usage: Rscript bench/summary.R   (writes bench/results/summary.md)
if (!requireNamespace("jsonlite", quietly = TRUE)) stop("bench/summary.R needs jsonlite")
res_dir <- file.path("bench", "results")
files <- sort(list.files(res_dir, "\\.json$", full.names = TRUE))

num <- function(x) if (is.null(x)) NA_real_ else suppressWarnings(as.numeric(unlist(x)))
first <- function(x) if (is.null(x) || !length(x)) NA else unlist(x)[1]
fmt_g <- function(v, digits = 2) ifelse(is.na(v), "-", formatC(v, digits = digits, format = "g"))
fmt_x <- function(v) ifelse(is.na(v), "-", ifelse(v >= 10, sprintf("%.0fx", v), sprintf("%.2fx", v)))

# one data frame per results file: script, case, peer, speedup, mem_ratio, agreement
adapt <- function(name, js) {
  r <- js$results
  if (is.data.frame(r)) r <- r else if (is.list(r) && length(r)) r <- as.data.frame(do.call(rbind, lapply(r, as.data.frame)))
  meta <- js$meta
  thr <- first(meta$threads %||% meta$cores %||% js$threads)
  date <- substr(as.character(first(meta$date)), 1, 10)
  out <- function(case, peer, speedup, mem, agree)
    data.frame(script = name, case = as.character(case), peer = as.character(peer), speedup = num(speedup),
               mem_ratio = num(mem), agreement = as.character(agree), threads = as.character(thr), date = date,
               stringsAsFactors = FALSE)
  switch(name,
    twfe = transform(out(r$case, paste("fixest", first(meta$fixest)), 1 / num(r$time_ratio), r$mem_ratio,
                         sprintf("coef %s, SE %s", fmt_g(num(r$max_rel_diff_coef)), fmt_g(num(r$max_rel_diff_se)))),
                     threads = as.character(r$threads)),
    sdid = out(r$case, paste("synthdid", first(meta$synthdid)), r$speedup, r$mem_ratio,
               sprintf("estimate %s, SE %s", fmt_g(num(r$rel_diff_estimate)), fmt_g(num(r$rel_diff_se)))),
    survey = out(r$case, "survey", r$speedup, r$mem_ratio,
                 sprintf("mean %s, SE %s", fmt_g(num(r$max_rel_diff_mean)), fmt_g(num(r$max_rel_diff_se)))),
    staggered = out(paste0(r$estimator, ": ", r$case), r$peer, r$speedup, r$mem_ratio,
                    sprintf("estimate %s, SE %s", fmt_g(num(r$est_diff)), fmt_g(num(r$se_diff)))),
    trop = out(sprintf("%s, lambda %s, nboot %s, %s core(s)", r$method, r$lambda, r$nboot, r$cores),
               "diff-diff TROP (Python)", r$fit_ratio, r$rss_ratio,
               sprintf("ATT %s, tau %s", fmt_g(num(r$att_diff)), fmt_g(num(r$tau_maxdiff)))),
    cs_band = {
      r <- r[!grepl("^did::", r$method), , drop = FALSE]        # the peer's own row
      out(if (is.null(r$shape)) r$method else paste0(r$shape, "; ", r$method), paste("did", first(meta$did)),
          r$speedup_vs_did, r$mem_ratio_vs_did,
          sprintf("ATT %s", fmt_g(num(r$max_rel_diff_att %||% first(meta$max_rel_diff_att)))))
    },
    twfe_weights = out(paste(r$type, r$cells), "TwoWayFEWeights", r$speedup, r$mem_ratio, r$diff),
    scenarios = {
      tab <- jsonlite::fromJSON(js$table)
      out(paste(tab$scenario, tab$scale), "diff-diff (Python, pure backend)", tab$speedup, NA, "see scenarios.md")
    },
    `scenarios-warm` = {
      tab <- js$table
      out(paste(tab$scenario, tab$scale, "(warm session, w/o HonestDiD phase)"), "diff-diff (Python, pure backend)",
          tab$speedup_first_nh, NA, "see scenarios-warm.md")
    },
    cs = if (!is.null(r$peer)) out(r$case, r$peer, r$speedup, r$mem_ratio, r$diff)
         else out(r$case, paste("did", first(meta$did)), r$speedup, r$mem_ratio,
                  sprintf("ATT %s, SE %s", fmt_g(num(r$max_rel_diff_att)), fmt_g(num(r$se_diff)))),
    # the shared layout (bench/measure.R's bench_table_md)
    if (!is.null(r$speedup) && !is.null(r$case)) out(r$case, r$peer %||% "-", r$speedup, r$mem_ratio, r$diff %||% "-")
    else NULL)
}
`%||%` <- function(a, b) if (is.null(a)) b else a

rows <- list(); unread <- character()
for (f in files) {
  name <- sub("\\.json$", "", basename(f))
  js <- tryCatch(jsonlite::fromJSON(f, simplifyDataFrame = TRUE), error = function(e) NULL)
  if (is.null(js) && name == "scenarios") js <- NULL
  if (name == "scenarios") js <- tryCatch(list(table = jsonlite::toJSON(jsonlite::fromJSON(f)$table)), error = function(e) NULL)
  a <- if (is.null(js)) NULL else tryCatch(adapt(name, js), error = function(e) NULL)
  if (is.null(a) || !nrow(a)) unread <- c(unread, basename(f)) else rows[[name]] <- a
}
tab <- do.call(rbind, rows)
md_only <- setdiff(sub("\\.md$", "", list.files(res_dir, "\\.md$")), c(sub("\\.json$", "", basename(files)), "summary"))
counts <- table(tab$script)
lines <- c("# Benchmark summary", "",
           sprintf("Generated by `Rscript bench/summary.R` on %s from `bench/results/*.json` (each row: one case of one script; the script's own page has the details and the method).",
                   format(Sys.Date())), "",
           "speed-up = peer time / diffdiff time; memory = diffdiff peak / peer peak; agreement as the script records it (relative unless the page says otherwise).", "",
           "| script | case | peer | speed-up | memory | agreement | threads | run |",
           "|---|---|---|---|---|---|---|---|",
           sprintf("| %s | %s | %s | %s | %s | %s | %s | %s |", tab$script, tab$case, tab$peer, fmt_x(tab$speedup),
                   fmt_g(tab$mem_ratio), tab$agreement, ifelse(is.na(tab$threads) | tab$threads == "NA", "-", tab$threads),
                   ifelse(is.na(tab$date), "-", tab$date)), "",
           "## Cases per script", "",
           paste(sprintf("- %s: %d case(s)%s", names(counts), as.integer(counts),
                         ifelse(counts < 3, " (fewer than the three sizes asked for)", "")), collapse = "\n"))
if (length(md_only))
  lines <- c(lines, "", "## Results with no JSON (markdown only)", "",
             paste(sprintf("- `bench/results/%s.md`", md_only), collapse = "\n"))
if (length(unread)) lines <- c(lines, "", sprintf("Not read (unknown layout): %s", paste(unread, collapse = ", ")))
writeLines(lines, file.path(res_dir, "summary.md"))
cat(lines, sep = "\n")
