# did_check(): one report on a panel before estimation.

#' Profile a panel before estimation
#'
#' Checks a long panel for what decides which DiD estimators apply and how
#' much to trust them, and reports each finding with a severity and a named
#' code: one column in two roles, e.g. `yname = idname` (`ROLE_CONFLICT`),
#' a column name that `data` has more than once (`DUPLICATE_COLUMNS`), a
#' single period (`SINGLE_PERIOD`) or unit (`SINGLE_UNIT`), duplicated
#' unit-periods (`DUPLICATE_ROWS`), balance
#' (`UNBALANCED`) and gaps inside units' spans (`GAPS`), missing or infinite
#' outcomes by period (`MISSING_OUTCOME`), an outcome whose squares overflow
#' or underflow double precision (`OUTCOME_SCALE`: magnitudes above 1e150
#' or all below 1e-150), the outcome's shape (`OUTCOME_BINARY`,
#' `OUTCOME_COUNT`, `OUTCOME_BOUNDED`, `OUTCOME_HEAVY_TAILS`, `OUTCOME_CONSTANT`),
#' first treated periods that are negative (`COHORT_NEGATIVE`: never treated
#' is 0, `Inf` or `NA`, not -1) or not a period of the data
#' (`COHORT_NOT_PERIOD`),
#' the treatment: reversals (`TREATMENT_REVERSIBLE`), a continuous dose
#' (`DOSE_CONTINUOUS`), units treated from the first period
#' (`ALWAYS_TREATED`), never-treated units (`NEVER_TREATED`,
#' `NO_NEVER_TREATED`), cohort sizes (`COHORTS`, `THIN_COHORT`), periods in
#' which every unit is treated (`NO_UNTREATED_PERIOD`), too few periods before
#' the first adoption (`FEW_PRE_PERIODS`), no treated unit
#' (`NO_TREATED`), and which estimators the data support (`ESTIMATORS`).
#'
#' Severities: `"error"` (an estimator would stop), `"warning"` (estimates
#' may mislead or some estimators do not apply), `"info"`.
#'
#' The estimators' own errors for these problems carry the same codes: the
#' message ends with `[did_check: CODE]` and the condition has class
#' `diffdiff_error` (and `diffdiff_<code>`, lower case) with the code in its
#' `code` field, e.g. `tryCatch(did_sdid(...), diffdiff_error = function(e)
#' e$code)`. Codes carried: `ROLE_CONFLICT`, `DUPLICATE_COLUMNS`,
#' `SINGLE_PERIOD`, `SINGLE_UNIT`, `DUPLICATE_ROWS`, `UNBALANCED`
#' (estimators that need a balanced panel), `MISSING_OUTCOME` (those that
#' need a complete one; the others drop missing and infinite outcomes with a
#' message), `OUTCOME_CONSTANT`, `OUTCOME_SCALE`, `COHORT_NEGATIVE`,
#' `COHORT_NOT_PERIOD` (every estimator that takes `gname`), `NO_TREATED`,
#' `ALWAYS_TREATED`, `NO_NEVER_TREATED` (estimators that need never-treated
#' units), `TREATMENT_REVERSIBLE` (did_sdid, did_trop, did_had) and
#' `FEW_PRE_PERIODS` (did_sdid). For the checks the estimators share
#' (column roles, periods, units, the outcome's scale, the cohort rule)
#' did_check() runs the estimators' own code, so the finding's text is the
#' estimator's error message.
#'
#' @param data A data frame (long panel; not modified).
#' @param yname,idname,tname Outcome, unit and (numeric) period columns.
#' @param gname First treated period (0, `Inf` or `NA`: never treated), or
#' @param dname a treatment column: 0/1 (binary, possibly reversible) or a
#'   continuous dose (0: untreated). Give one of them.
#' @param thin Cohorts with fewer units than this are reported as thin.
#' @return An object of class `dd_check`: `findings` (a data frame: `code`,
#'   `severity`, `finding`), the panel's dimensions, and `estimators` (the
#'   estimators the data support). `print()` shows a short checklist,
#'   `as.data.frame()` the findings.
#' @references Roth, J., Sant'Anna, P. H. C., Bilinski, A. and Poe, J.
#'   (2023). What's trending in difference-in-differences? A synthesis of
#'   the recent econometrics literature. *Journal of Econometrics* 235(2),
#'   2218-2244.
#'
#'   Baker, A., Callaway, B., Cunningham, S., Goodman-Bacon, A. and
#'   Sant'Anna, P. H. C. (2025). Difference-in-differences designs: a
#'   practitioner's guide. arXiv:2503.13323.
#'
#'   Mou, H., Liu, L. and Xu, Y. (2023). panelView: panel data visualization
#'   in R and Stata. *Journal of Statistical Software* 107(7) (the
#'   treatment-status plot of [plot.dd_check()]).
#' @examples
#' set.seed(1)
#' d <- dd_sim_staggered(n_units = 200, n_periods = 8)
#' did_check(d, "y", "id", "time", gname = "first_treat")
#' d$D[d$id == 3 & d$time == 8] <- 0          # a reversal
#' did_check(d, "y", "id", "time", dname = "D")
#' @export
did_check <- function(data, yname, idname, tname, gname = NULL, dname = NULL, thin = 5) {
  thin <- dd_did_check_args(data, yname, idname, tname, gname, dname, thin)
  f <- list()
  add <- function(code, severity, ...) f[[length(f) + 1L]] <<- data.frame(code = code, severity = severity,
                                                                          finding = sprintf(...),
                                                                          stringsAsFactors = FALSE)
  # the estimators' own checks (validate.R, panel.R): an error of theirs with
  # a code becomes an "error" finding with that code and their message
  # (without the "[did_check: CODE]" suffix); FALSE when it failed
  shared <- function(expr) tryCatch({ expr; TRUE }, diffdiff_error = function(e) {
    add(e$code, "error", "%s", sub(" \\[did_check: [A-Z_]+\\]$", "", conditionMessage(e)))
    FALSE
  })
  # one column in two roles; a used column name that `data` has twice
  shared(dd_check_roles(data, list(yname = yname, idname = idname, tname = tname, gname = gname, dname = dname)))
  id <- data[[idname]]
  tt <- dd_check_numeric_col(data[[tname]], "tname", tname, convert = FALSE)
  y <- data[[yname]]
  if (!is.numeric(y) && !is.logical(y)) dd_stop("`yname` = \"%s\" must be numeric; got %s.", yname, class(y)[1])
  y <- as.numeric(y)
  if (anyNA(id)) dd_stop("`idname` = \"%s\" has missing values (first in row %d).", idname, which(is.na(id))[1])
  if (anyNA(tt)) dd_stop("`tname` = \"%s\" has missing values (first in row %d).", tname, which(is.na(tt))[1])
  idc <- dd_codes(id); tc <- dd_codes(tt)
  N <- attr(idc, "nlev"); T <- attr(tc, "nlev"); tlev <- sort(unique(tt))
  if (T < 2L) shared(dd_check_periods(tt, tname))
  if (N < 2L) shared(dd_check_units(idc, id, idname))
  # duplicated unit-periods: the estimators' check (the first unit and period)
  shared(dd_check_unique_codes(idc, tc, id, tt))
  dup <- duplicated(data.frame(idc, tc))
  # balance and gaps
  per_unit <- dd_level_count(idc, !dup)
  unbal <- sum(per_unit < T)
  if (unbal > 0L) {
    add("UNBALANCED", "warning", "%d of %d units are not observed in all %d periods: did_cs balances the panel (drops them) unless allow_unbalanced_panel = TRUE; did_sdid and did_trop need a balanced panel (dd_balance()).",
        unbal, N, T)
    pos <- match(tt, tlev)
    span <- tapply(pos, idc, function(p) max(p) - min(p) + 1L)
    nobs <- tapply(pos, idc, function(p) length(unique(p)))
    gaps <- sum(span > nobs)
    if (gaps > 0L) add("GAPS", "warning", "%d units have gaps (missing periods inside their first-to-last span).", gaps)
  } else add("BALANCED", "info", "Balanced panel: %d units x %d periods.", N, T)
  # outcome
  # missing (NA, NaN) and infinite (Inf, -Inf: log(0), an overflow) outcomes:
  # the estimators drop both with a message (dd_prepare), and those that need
  # a complete panel stop with this code (dd_stop_incomplete)
  miss <- !is.finite(y)
  if (any(miss)) {
    byp <- tapply(miss, tt, sum)
    worst <- which.max(byp)
    inf <- which(is.infinite(y))
    add("MISSING_OUTCOME", "warning", "%d missing %soutcomes (%.1f%%)%s; most in period %s (%d). Estimators drop these rows; those that need a complete panel (did_sdid, did_trop, ...) stop.",
        sum(miss), if (length(inf)) "or infinite " else "", 100 * mean(miss),
        if (length(inf)) sprintf(", %d of them infinite (e.g. row %d: %s)", length(inf), inf[1], format(y[inf[1]]))
        else "",
        names(byp)[worst], max(byp))
  }
  yv <- y[!miss]
  # the estimators' outcome check: constant (OUTCOME_CONSTANT), or squares
  # that overflow or underflow (OUTCOME_SCALE); its shape and tails are then
  # not described
  if (!length(yv)) {
    # no usable outcome at all: nothing varies (the code of a constant one)
    add("OUTCOME_CONSTANT", "error", "`yname` = \"%s\" has no usable value (every row missing or infinite); there is nothing to estimate an effect from.",
        yname)
  } else if (!shared(dd_check_outcome(yv, yname))) yv <- numeric()
  else if (all(yv %in% c(0, 1))) add("OUTCOME_BINARY", "info", "The outcome is binary (0/1): effects are on probabilities; did_etwfe(family = \"logit\") models it.")
  else if (all(yv >= 0 & yv == round(yv))) add("OUTCOME_COUNT", "info", "The outcome is a count (whole numbers >= 0): did_etwfe(family = \"poisson\") models it.")
  else if (all(yv >= 0 & yv <= 1)) add("OUTCOME_BOUNDED", "info", "The outcome lies in [0, 1] (a share or rate).")
  if (length(yv) > 20L && length(unique(yv)) > 2L) {
    z <- (yv - mean(yv)) / stats::sd(yv)
    kurt <- mean(z^4)
    if (is.finite(kurt) && kurt > 10)
      add("OUTCOME_HEAVY_TAILS", "warning", "The outcome has heavy tails (kurtosis %.1f): a few units can dominate the estimates; consider logs or a robustness check with placebo_test(type = \"leave_one_out\").", kurt)
  }
  # treatment: first treated period per unit
  first <- dd_first_rows(idc)
  reversible <- FALSE; continuous <- FALSE
  if (!is.null(gname)) {
    g <- data[[gname]]
    if (!is.numeric(g)) dd_stop("`gname` = \"%s\" must be numeric (first treated periods); got %s.", gname, class(g)[1])
    dd_check_constant_within(g, id, "gname", gname, code = idc)
    G <- g[first]
    # the estimators' cohort rule: negative values and values that are not
    # periods (nor never-treated codes) are errors
    shared(suppressMessages(dd_cohort_never(G, tlev, gname, tname)))
    G[is.na(G) | is.infinite(G) | G > max(tlev)] <- 0
  } else {
    d <- data[[dname]]
    if (is.logical(d)) d <- as.numeric(d)
    if (!is.numeric(d)) dd_stop("`dname` = \"%s\" must be numeric; got %s.", dname, class(d)[1])
    dv <- d[!is.na(d)]
    continuous <- !all(dv %in% c(0, 1))
    ft <- dd_first_treated(d, idc, tt, N)
    G <- ft$first
    G[!is.finite(G)] <- 0
    if (ft$n_off) {
      reversible <- TRUE
      add("TREATMENT_REVERSIBLE", "warning", "The treatment switches off again for %d units: staggered-adoption estimators do not apply; use did_dcdh() (reversible treatments).",
          ft$n_off)
    }
    if (continuous) {
      pos <- dv[dv != 0]
      add("DOSE_CONTINUOUS", "info", "The treatment is a continuous dose (%d distinct non-zero values, from %s to %s; %.1f%% of rows untreated): use did_dose() or did_had().",
          length(unique(pos)), format(min(pos), digits = 4), format(max(pos), digits = 4), 100 * mean(dv == 0))
    }
  }
  ntr <- sum(G > 0)
  if (ntr == 0L) add("NO_TREATED", "error", "No unit is ever treated.")
  always <- sum(G > 0 & G <= tlev[1])
  if (always > 0L)
    add("ALWAYS_TREATED", "warning", "%d units are treated from the first period (%s): they have no pre-period; most estimators drop them.",
        always, format(tlev[1]))
  nnever <- sum(G == 0)
  if (nnever == 0L)
    add("NO_NEVER_TREATED", "warning", "No never-treated units: use not-yet-treated comparisons (did_cs(control_group = \"notyettreated\"), did_etwfe drops the periods from the last adoption on); did_sdid and did_trop need never-treated units.")
  else add("NEVER_TREATED", "info", "%d never-treated units (%.0f%%).", nnever, 100 * nnever / N)
  coh <- table(G[G > 0 & G > tlev[1]])
  if (length(coh)) {
    add("COHORTS", "info", "%d adoption cohort(s): %s.", length(coh),
        paste(sprintf("%s (%d units)", names(coh), as.integer(coh)), collapse = ", "))
    th <- coh[coh < thin]
    if (length(th))
      add("THIN_COHORT", "warning", "Thin cohort(s) with fewer than %d units: %s; their ATT(g,t) are imprecise.",
          thin, paste(sprintf("%s (%d)", names(th), as.integer(th)), collapse = ", "))
    firstadopt <- min(as.numeric(names(coh)))
    npre <- sum(tlev < firstadopt)
    if (npre < 2L)
      add("FEW_PRE_PERIODS", "warning", "Only %d period(s) before the first adoption (%s): the earliest cohort's pre-trends cannot be tested; did_trop needs 2.",
          npre, format(firstadopt))
  }
  if (ntr > 0L && !reversible) {
    lastg <- max(G)
    allt <- if (nnever == 0L) tlev[tlev >= lastg] else numeric()
    if (length(allt))
      add("NO_UNTREATED_PERIOD", "warning", "Every unit is treated in period(s) %s: no comparison units there; effects cannot be estimated for them.",
          paste(format(allt), collapse = ", "))
  }
  # supported estimators: each registry row's did_check rule (R/estimators.R)
  est <- dd_check_supported(list(continuous = continuous, reversible = reversible, nnever = nnever,
                                 balanced = unbal == 0L, ncohorts = length(coh),
                                 npre = if (length(coh)) sum(tlev < min(as.numeric(names(coh)))) else 0L))
  if (ntr > 0L) add("ESTIMATORS", "info", "Supported: %s.", paste(est, collapse = ", "))
  fd <- do.call(rbind, f)
  sev <- c(error = 1L, warning = 2L, info = 3L)
  fd <- fd[order(sev[fd$severity], seq_len(nrow(fd))), , drop = FALSE]
  rownames(fd) <- NULL
  structure(list(findings = fd, n_units = N, n_periods = T, nobs = nrow(data), estimators = if (ntr > 0L) est else character(),
                 yname = yname, status = dd_check_status(idc, tc, tt, tlev, G, if (is.null(gname)) d else NULL, dup),
                 treatment = if (is.null(gname)) dname else gname, tname = tname), class = "dd_check")
}

# The treatment status of the panel by treatment history, as panelView's
# collapsed view: with `gname`, one history per cohort (never treated last);
# with a treatment column `d`, the distinct unit paths of d != 0 (the 30
# most frequent, the rest pooled as "other"). Returns periods, a histories x
# periods matrix `status` (0 untreated, 1 treated, NA: not observed for any
# unit of the history), `observed` (the share of the history's units observed
# in each period), `n` (units per history) and `label`. O(rows) work.
dd_check_status <- function(idc, tc, tt, tlev, G, d, dup) {
  N <- attr(idc, "nlev"); T <- length(tlev)
  keep <- !dup
  col <- match(tt, tlev)
  if (is.null(d)) {
    key <- ifelse(G > 0, G, Inf)                       # never treated last
    lev <- sort(unique(key))
    h <- match(key, lev)
    status <- t(vapply(lev, function(g) as.numeric(is.finite(g) & tlev >= g), numeric(T)))
    label <- ifelse(is.finite(lev), format(lev, trim = TRUE), "never")
  } else {
    W <- matrix(NA_real_, N, T)
    W[cbind(idc[keep] + 1L, col[keep])] <- as.numeric(d[keep] != 0)
    path <- apply(W, 1L, function(r) paste(ifelse(is.na(r), "-", r), collapse = ""))
    tab <- sort(table(path), decreasing = TRUE)
    top <- names(tab)[seq_len(min(30L, length(tab)))]
    h0 <- match(path, top)
    other <- anyNA(h0)
    h <- ifelse(is.na(h0), length(top) + 1L, h0)
    lev <- c(top, if (other) "other")
    status <- do.call(rbind, lapply(seq_along(lev), function(k) {
      m <- W[h == k, , drop = FALSE]
      s <- colMeans(m, na.rm = TRUE)
      s[is.nan(s)] <- NA_real_
      s
    }))
    # order: by first treated period (never treated last), as for cohorts
    ft <- apply(status, 1L, function(s) { w <- which(s > 0.5); if (length(w)) w[1] else Inf })
    o <- order(ft, -tabulate(h, length(lev)))
    status <- status[o, , drop = FALSE]
    h <- match(h, o)
    lev <- lev[o]
    label <- ifelse(lev == "other", "other paths",
                    ifelse(is.finite(ft[o]), sprintf("from %s", format(tlev[pmin(ft[o], T)], trim = TRUE)), "never"))
  }
  K <- length(lev)
  n <- tabulate(h, K)
  obs <- matrix(0, K, T)
  hr <- h[idc[keep] + 1L]
  cnt <- tabulate((col[keep] - 1L) * K + hr, K * T)
  obs[] <- cnt / rep(n, T)
  status[obs == 0] <- NA_real_
  list(periods = tlev, status = matrix(status, K, T), observed = obs, n = n, label = label,
       kind = if (is.null(d)) "cohort" else "history")
}

# The rules under which did_check() lists an estimator as supported, named
# by the registry's `check_rule` (R/estimators.R). Each takes what did_check()
# found (x: continuous, reversible, nnever, balanced, ncohorts, npre: periods
# before the first adoption) and the estimator's name, and returns the label
# to list, or NULL.
dd_check_rules <- list(
  # an absorbing binary treatment (staggered or block adoption)
  absorbing = function(x, name) if (!x$continuous && !x$reversible) name,
  # and never-treated units
  absorbing_never = function(x, name) if (!x$continuous && !x$reversible && x$nnever > 0L) name,
  # and a balanced panel; with several cohorts, the estimator's staggered = TRUE
  balanced_never_staggered = function(x, name)
    if (!x$continuous && !x$reversible && x$nnever > 0L && x$balanced)
      if (x$ncohorts <= 1L) name else paste0(name, "(staggered = TRUE)"),
  # and at least two periods before the first adoption
  balanced_never_pre2 = function(x, name)
    if (!x$continuous && !x$reversible && x$nnever > 0L && x$balanced && x$ncohorts > 0L && x$npre >= 2L) name,
  # and a balanced panel with at least two never-treated units (donors) and a
  # period before the first adoption
  balanced_never2 = function(x, name)
    if (!x$continuous && !x$reversible && x$nnever > 1L && x$balanced && x$ncohorts > 0L && x$npre >= 1L) name,
  # a 0/1 treatment that switches off again
  reversible = function(x, name) if (!x$continuous && x$reversible) name,
  # a continuous dose
  dose = function(x, name) if (x$continuous) name)

# the supported estimators, in the registry's order
dd_check_supported <- function(x) {
  reg <- dd_registry[!is.na(dd_registry$check_rule), ]
  as.character(unlist(Map(function(rule, name) dd_check_rules[[rule]](x, name), reg$check_rule, reg$name),
                      use.names = FALSE))
}

#' @export
print.dd_check <- function(x, ...) {
  dd_check_dots(list(...), "print()")
  cat(sprintf("Panel check: %s units x %s periods, %s rows (outcome %s)\n", dd_fmt_int(x$n_units),
              dd_fmt_int(x$n_periods), dd_fmt_int(x$nobs), x$yname))
  mark <- c(error = "[x]", warning = "[!]", info = "[ ]")
  f <- x$findings
  for (i in seq_len(nrow(f)))
    cat(sprintf("%s %s: %s\n", mark[[f$severity[i]]], f$code[i], f$finding[i]))
  invisible(x)
}

#' @export
as.data.frame.dd_check <- function(x, row.names = NULL, optional = FALSE, ...) dd_as_df(x$findings, row.names, list(...))

# did_check()'s arguments: the column names and exactly one treatment role;
# returns `thin`
dd_did_check_args <- function(data, yname, idname, tname, gname, dname, thin) {
  dd_check_data(data)
  cols <- list(yname = yname, idname = idname, tname = tname)
  for (a in names(cols)) {
    dd_check_string(cols[[a]], a)
    dd_check_cols(data, cols[[a]], a)
  }
  if (is.null(gname) == is.null(dname))
    dd_stop("give the treatment as exactly one of `gname` (first treated period) and `dname` (a treatment column).")
  if (!is.null(gname)) { dd_check_string(gname, "gname"); dd_check_cols(data, gname, "gname") }
  if (!is.null(dname)) { dd_check_string(dname, "dname"); dd_check_cols(data, dname, "dname") }
  dd_check_count(thin, "thin", min = 1)
}

#' Treatment status plot and tidiers of a panel check
#'
#' `plot()` and `autoplot()` draw the treatment status of the panel checked
#' by [did_check()], as panelView's collapsed view: one row per treatment
#' history (with `gname`, one per adoption cohort, in order of adoption,
#' never-treated units last; with a treatment column, the distinct paths of
#' units, the 30 most frequent), periods across, treated cells dark, untreated
#' cells light, cells observed for no unit of the row blank, and the number of
#' units of each row in its label. Partly observed cells are drawn lighter, in
#' proportion to the share of the row's units observed. `tidy()` gives the
#' findings, `glance()` one row of counts.
#' @param x,object A `dd_check` object.
#' @param col Colours of untreated and treated cells.
#' @param main Title.
#' @param ... `plot()`: passed to [graphics::image()]; the other methods: not
#'   used (an error if given; `tidy()` and `glance()` follow broom's contract).
#' @return `plot()`: `x`, invisibly; `autoplot()`: a ggplot; `tidy()`: the
#'   findings (`code`, `severity`, `finding`); `glance()`: one row (`n_units`,
#'   `n_periods`, `nobs`, `n_errors`, `n_warnings`, `estimators`).
#' @examples
#' castle <- read.csv(system.file("extdata", "castle.csv", package = "diffdiff"))
#' chk <- did_check(castle, "l_homicide", "sid", "year", gname = "effyear")
#' plot(chk)
#' glance(chk)
#' @name dd_check-methods
NULL

#' @rdname dd_check-methods
#' @export
plot.dd_check <- function(x, col = c("#D6E4F0", "#C0392B"), main = NULL, ...) {
  s <- x$status
  if (is.null(s)) dd_stop("this did_check() result has no treatment status (made by an older version); run did_check() again.")
  K <- nrow(s$status); T <- length(s$periods)
  lab <- sprintf("%s (%s)", s$label, dd_fmt_int(s$n))
  op <- graphics::par(mar = c(4.2, max(4.2, max(graphics::strwidth(lab, units = "inches")) / graphics::par("csi") + 1.5),
                              3, 1), las = 1)
  on.exit(graphics::par(op))
  graphics::plot.default(NA, xlim = c(0.5, T + 0.5), ylim = c(K + 0.5, 0.5), xaxt = "n", yaxt = "n",
                         xlab = x$tname %||% "Period", ylab = "",
                         main = main %||% sprintf("Treatment status: %s units x %s periods (%s)", dd_fmt_int(x$n_units),
                                                  dd_fmt_int(x$n_periods), x$treatment %||% "treatment"), ...)
  for (k in seq_len(K)) for (j in seq_len(T)) {
    v <- s$status[k, j]
    if (is.na(v)) next
    cc <- grDevices::colorRampPalette(col)(101)[round(100 * v) + 1L]
    graphics::rect(j - 0.5, k - 0.45, j + 0.5, k + 0.45, col = grDevices::adjustcolor(cc, s$observed[k, j]),
                   border = "white")
  }
  graphics::axis(1, at = seq_len(T), labels = format(s$periods))
  graphics::axis(2, at = seq_len(K), labels = lab, tick = FALSE)
  graphics::mtext("rows: treatment histories (units)", side = 3, line = 0.2, cex = 0.8, adj = 0)
  graphics::legend("topright", inset = c(0, -0.02), horiz = TRUE, bty = "n", xpd = TRUE, cex = 0.8,
                   fill = col, border = NA, legend = c("untreated", "treated"))
  invisible(x)
}

#' @rdname dd_check-methods
#' @exportS3Method ggplot2::autoplot
autoplot.dd_check <- function(object, col = c("#D6E4F0", "#C0392B"), main = NULL, ...) {
  dd_check_dots(list(...), "autoplot()")
  dd_need_ggplot()
  gg <- asNamespace("ggplot2")
  s <- object$status
  if (is.null(s)) dd_stop("this did_check() result has no treatment status (made by an older version); run did_check() again.")
  K <- nrow(s$status); T <- length(s$periods)
  lab <- sprintf("%s (%s)", s$label, dd_fmt_int(s$n))
  df <- data.frame(row = factor(rep(lab, T), levels = rev(lab)), period = rep(s$periods, each = K),
                   status = as.vector(s$status), observed = as.vector(s$observed))
  df <- df[!is.na(df$status), , drop = FALSE]
  gg$ggplot(df, gg$aes(x = .data$period, y = .data$row, fill = .data$status, alpha = .data$observed)) +
    gg$geom_tile(colour = "white") +
    gg$scale_fill_gradient(low = col[1], high = col[2], limits = c(0, 1), breaks = c(0, 1),
                           labels = c("untreated", "treated"), name = NULL) +
    gg$scale_alpha_continuous(range = c(0.3, 1), limits = c(0, 1), guide = "none") +
    gg$scale_x_continuous(breaks = dd_whole_breaks(s$periods)) +
    gg$labs(x = object$tname %||% "Period", y = "Treatment history (units)",
            title = main %||% sprintf("Treatment status: %s units x %s periods", dd_fmt_int(object$n_units),
                                      dd_fmt_int(object$n_periods))) +
    gg$theme(legend.position = "bottom", panel.grid = gg$element_blank())
}

#' @rdname dd_check-methods
#' @export
tidy.dd_check <- function(x, ...) {
  dd_check_broom_dots(list(...), "tidy()", sys.function())
  dd_as_df(x$findings, NULL, list())
}

#' @rdname dd_check-methods
#' @export
glance.dd_check <- function(x, ...) {
  dd_check_broom_dots(list(...), "glance()", sys.function())
  f <- x$findings
  data.frame(n_units = x$n_units, n_periods = x$n_periods, nobs = x$nobs, n_errors = sum(f$severity == "error"),
             n_warnings = sum(f$severity == "warning"), estimators = paste(x$estimators, collapse = ", "),
             stringsAsFactors = FALSE)
}
