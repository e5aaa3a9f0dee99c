#' Write a self-contained report of an analysis
#'
#' One call writes the analysis of a fit as a self-contained HTML file (or a
#' PDF where LaTeX is installed), rendered with rmarkdown from the template
#' `system.file("report", "dd_report.Rmd", package = "diffdiff")`. The
#' numbers are computed first, by the package's own functions, and the
#' template only lays them out; the computed sections are returned, so the
#' report's content can be checked or reused without rendering.
#'
#' The sections, each present when the fit admits it (otherwise the report
#' says why it is missing):
#' * **Summary in plain language**: `summary(fit, style = "plain")`, with the
#'   wording options passed on (`outcome_label`, `outcome_unit`,
#'   `treatment_label`, `direction`).
#' * **Data profile**: [did_check()] on the panel the estimator used (its
#'   rows, outcome, units, periods and first treated periods) and the
#'   treatment-timing plot of [dd_timing()].
#' * **Estimates**: what the headline number is (the estimand in words), the
#'   coefficient table and, for the fits on did_cs's cells, the cohort and
#'   event-time aggregations.
#' * **Event study**: the event-study plot.
#' * **Pre-trends**: the joint Wald test of the pre-treatment estimates and
#'   the power of the pre-test ([pretrends_power()]), as [dd_diagnose()]
#'   reports them.
#' * **Sensitivity**: [honest_did()] with relative magnitudes (robust
#'   intervals for `Mbar` = 0.5, 1, 1.5, 2, the breakdown value, the plot).
#' * **Placebo tests**: [placebo_test()] of the types in `placebo`.
#' * **Goodman-Bacon check** and **next steps** ([dd_next_steps()]).
#' * **Reproducibility**: the fit's call and its stamp (package, R, BLAS and
#'   LAPACK versions, threads, random-number generator and seed, the data's
#'   rows and outcome checksum, time).
#'
#' @param fit A diffdiff fit.
#' @param file The output file (default `"report.html"`; its extension is
#'   the format's).
#' @param format `"html"` (default: one self-contained file, figures
#'   embedded; needs pandoc, which RStudio ships) or `"pdf"` (needs LaTeX,
#'   e.g. `tinytex::install_tinytex()`).
#' @param data The data the fit was estimated on (`NULL`: the fit's call's
#'   `data`, evaluated in `envir`), for the data profile, the Bacon check
#'   and the placebo tests.
#' @param title The report's title (default: the estimator's title and the
#'   outcome).
#' @param outcome_label,outcome_unit,treatment_label,direction The wording of
#'   the plain-language summary: see `style = "plain"` in
#'   [summary.dd_fit()].
#' @param placebo The [placebo_test()] types to run (default `"timing"`:
#'   one refit with the treatment moved earlier; `"permutation"`,
#'   `"group"` and `"leave_one_out"` refit many times); `NULL` or
#'   `character()` for none. Only for the estimators [placebo_test()]
#'   re-runs.
#' @param seed Seed of the random-number stream for the placebo draws
#'   (default `NULL`: the current stream).
#' @param render Write the file (default `TRUE`); `FALSE` computes and
#'   returns the sections only.
#' @param quiet Silence rmarkdown's progress (default `TRUE`).
#' @param envir Where the fit's call is evaluated (default: the caller's
#'   frame).
#' @return Invisibly, an object of class `dd_report`: `file` (the path
#'   written, `NA` without rendering), `format`, `title` and `sections` (a
#'   named list: `plain`, `check`, `timing`, `estimates`, `aggregates`,
#'   `diagnosis`, `placebo`, `next_steps`, `stamp`; each missing section is a
#'   list with `status = "skipped"` and the `reason`). Print shows the
#'   sections' status.
#' @seealso [dd_diagnose()], [dd_next_steps()], `summary(fit, style =
#'   "plain")`.
#' @examples
#' d <- read.csv(system.file("extdata", "sim_panel.csv", package = "diffdiff"))
#' fit <- did_cs(d, "y", "id", "year", "first_treat", nboot = 0, base_period = "universal")
#' r <- dd_report(fit, render = FALSE, placebo = NULL)
#' r
#' if (requireNamespace("rmarkdown", quietly = TRUE) && rmarkdown::pandoc_available()) {
#'   out <- dd_report(fit, file = file.path(tempdir(), "report.html"), placebo = NULL,
#'                    outcome_label = "sales", outcome_unit = "$")
#'   file.exists(out$file)
#' }
#' @export
dd_report <- function(fit, file = "report.html", format = c("html", "pdf"), data = NULL, title = NULL,
                      outcome_label = NULL, outcome_unit = NULL, treatment_label = NULL,
                      direction = c("neutral", "higher_is_better", "lower_is_better"), placebo = "timing",
                      seed = NULL, render = TRUE, quiet = TRUE, envir = parent.frame()) {
  if (!inherits(fit, "dd_fit")) dd_stop("`fit` must be a diffdiff fit; got %s.", dd_show(class(fit)[1]))
  format <- dd_match_arg(format[1], c("html", "pdf"), "format")
  render <- dd_check_flag(render, "render")
  quiet <- dd_check_flag(quiet, "quiet")
  if (!is.null(data)) dd_check_data(data)
  if (!is.environment(envir)) dd_stop("`envir` must be an environment; got %s.", dd_show(class(envir)[1]))
  direction <- dd_plain_args(outcome_label, outcome_unit, treatment_label, direction)
  if (!is.null(title) && (!is.character(title) || length(title) != 1L || is.na(title)))
    dd_stop("`title` must be one string; got %s.", dd_show(title))
  types <- c("timing", "permutation", "group", "leave_one_out")
  if (is.null(placebo)) placebo <- character()
  if (!is.character(placebo) || anyNA(placebo) || length(bad <- setdiff(placebo, types)))
    dd_stop("`placebo` must be placebo_test() types (%s) or NULL; got %s.", paste0('"', types, '"', collapse = ", "),
            dd_show(placebo))
  if (!is.null(seed)) seed <- dd_check_count(seed, "seed", min = 0)
  if (render) {
    if (!is.character(file) || length(file) != 1L || is.na(file) || !nzchar(file))
      dd_stop("`file` must be one file name; got %s.", dd_show(file))
    ext <- tolower(tools::file_ext(file))
    if (ext != format)
      dd_stop("`file` = \"%s\" does not end in .%s (format = \"%s\").", file, format, format)
    if (!requireNamespace("rmarkdown", quietly = TRUE) || !requireNamespace("knitr", quietly = TRUE))
      dd_stop("dd_report() renders with rmarkdown and knitr: install.packages(c(\"rmarkdown\", \"knitr\")), or use render = FALSE.",
              .code = "NEEDS_PACKAGE")
    if (!rmarkdown::pandoc_available())
      dd_stop("dd_report() needs pandoc to render (RStudio ships it; or install it from your system's packages); render = FALSE returns the sections without it.",
              .code = "NEEDS_PANDOC")
    if (format == "pdf" && !nzchar(Sys.which("pdflatex")) && !nzchar(Sys.which("xelatex")))
      dd_stop("format = \"pdf\" needs LaTeX (pdflatex or xelatex), which is not installed: tinytex::install_tinytex() installs it, or use format = \"html\".",
              .code = "NEEDS_LATEX")
  }
  title <- title %||% sprintf("%s: %s", fit$title %||% class(fit)[1], outcome_label %||% fit$yname %||% "outcome")
  secs <- dd_report_sections(fit, data, envir, placebo, seed, outcome_label, outcome_unit, treatment_label, direction)
  out <- structure(list(file = NA_character_, format = format, title = title, sections = secs), class = "dd_report")
  if (render) out$file <- dd_report_render(out, file, format, quiet)
  invisible(out)
}

# every section; one that fails or does not apply says why
dd_report_sections <- function(fit, data, envir, placebo, seed, outcome_label, outcome_unit, treatment_label,
                               direction) {
  skip <- function(reason) list(status = "skipped", reason = reason)
  try_sec <- function(expr) tryCatch(suppressMessages(expr), error = function(e) skip(conditionMessage(e)))
  est <- class(fit)[1]
  # the fit's panel, rebuilt once (the estimator re-run without bootstrap)
  pd <- dd_fit_panel_df(fit, data, envir)
  dg <- dd_diagnose_run(fit, fit$alpha %||% 0.05, pd)
  plain <- dd_plain(fit, outcome_label, outcome_unit, treatment_label, direction, NULL, dg)
  chk <- tim <- skip(if (is.character(pd)) pd else "")
  if (!is.character(pd)) {
    chk <- try_sec(list(status = "ran", check = did_check(pd$data, pd$yname, pd$idname, pd$tname, gname = pd$gname)))
    tim <- try_sec(list(status = "ran", timing = dd_timing(pd$data, pd$idname, pd$tname, gname = pd$gname)))
  }
  reg <- dd_estimators()
  agg <- reg$aggregate[match(est, reg$name)]
  aggs <- if (identical(agg, "did_cs_agg"))
    try_sec(list(status = "ran", group = suppressWarnings(aggregate(fit, "group")), dynamic = dg$event_study))
  else skip("the estimator's own table is its aggregation")
  pl <- if (!length(placebo)) skip("not requested (placebo = NULL)")
        else if (!est %in% dd_placebo_estimators) skip(sprintf("placebo_test() does not re-run %s fits", est))
        else {
          if (!is.null(seed)) {
            old <- if (exists(".Random.seed", globalenv())) get(".Random.seed", globalenv())
            on.exit(if (is.null(old)) rm(".Random.seed", envir = globalenv()) else assign(".Random.seed", old, globalenv()),
                    add = TRUE)
            set.seed(seed)
          }
          stats::setNames(lapply(placebo, function(ty) try_sec(list(status = "ran",
            test = suppressWarnings(placebo_test(fit, type = ty, data = data, envir = envir))))), placebo)
        }
  list(plain = plain,
       check = chk, timing = tim,
       estimates = list(status = "ran", estimand = reg$estimand[match(est, reg$name)],
                        assumption = dd_assumption_text(est, fit), table = fit$coeftable, fit = fit),
       aggregates = aggs, diagnosis = dg, placebo = pl,
       next_steps = dd_next_steps(fit, completed = c(character(), if (identical(dg$parallel_trends$status, "ran")) "parallel_trends",
                                                     if (identical(dg$sensitivity$status, "ran")) "sensitivity",
                                                     if (length(placebo) && est %in% dd_placebo_estimators) "placebo")),
       stamp = list(status = "ran", call = paste(deparse(fit$call, width.cutoff = 80L), collapse = "\n"),
                    stamp = fit$stamp, rendered = format(Sys.time(), "%Y-%m-%d %H:%M:%S %Z")))
}

dd_report_render <- function(x, file, format, quiet) {
  tmpl <- system.file("report", "dd_report.Rmd", package = "diffdiff")
  if (!nzchar(tmpl)) dd_stop("internal error: the report template is not installed; please report.")
  work <- tempfile("dd_report")
  dir.create(work)
  on.exit(unlink(work, recursive = TRUE), add = TRUE)
  rmd <- file.path(work, "dd_report.Rmd")
  file.copy(tmpl, rmd)
  env <- new.env(parent = asNamespace("diffdiff"))
  env$report <- x
  fmt <- if (format == "html") rmarkdown::html_document(self_contained = TRUE, toc = TRUE, toc_depth = 2)
         else rmarkdown::pdf_document(toc = TRUE)
  out <- rmarkdown::render(rmd, output_format = fmt, output_file = basename(file), output_dir = work,
                           intermediates_dir = work, envir = env, quiet = quiet)
  dir <- dirname(file)
  if (!dir.exists(dir)) dd_stop("`file` = \"%s\": the folder \"%s\" does not exist.", file, dir)
  if (!file.copy(out, file, overwrite = TRUE)) dd_stop("`file` = \"%s\" could not be written.", file)
  normalizePath(file)
}

#' @export
print.dd_report <- function(x, ...) {
  dd_check_dots(list(...), "print()")
  cat(sprintf("Report: %s\n", x$title))
  cat(if (is.na(x$file)) "(not rendered)\n" else sprintf("File: %s\n", x$file))
  st <- function(s) if (is.null(s$status)) "ran" else s$status
  for (n in names(x$sections)) {
    s <- x$sections[[n]]
    if (n == "placebo" && is.null(s$status)) {
      for (ty in names(s)) cat(sprintf("  %-12s %s\n", paste0("placebo:", ty), st(s[[ty]])))
      next
    }
    cat(sprintf("  %-12s %s%s\n", n, st(s), if (identical(st(s), "skipped")) paste0(" (", s$reason, ")") else ""))
  }
  invisible(x)
}
