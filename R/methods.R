# The methods every dd_fit shares: coef, vcov, nobs, confint, tidy, glance,
# as.data.frame, print and summary (the constructor is in results.R).

#' Methods for diffdiff fits
#'
#' Every estimator returns an object of class `c("did_<name>", "dd_fit")`. Its
#' coefficient table (`tidy()` or `as.data.frame()`) has one row per estimated
#' term with `term, estimate, std.error, statistic, p.value, conf.low,
#' conf.high`, plus `event` for event-study terms and, when a wild bootstrap
#' was run, `boot.p.value, boot.conf.low, boot.conf.high`. `coef()` returns
#' all coefficients, with `NA` for terms dropped for collinearity (as `lm`);
#' `vcov()` covers the estimated ones. Tests and intervals use the t
#' distribution with the degrees of freedom stated in [dd_vcov_types].
#'
#' Event-study fits (`did_event`, `did_sa`, `did_bjs`, `did_gardner`,
#' `did_stacked`, `aggregate(did_cs(...), type = "dynamic")`) also carry
#' `event_study`, an object of class `dd_event_study`: the estimated event
#' times (`event`, increasing), their table terms (`term`), `estimate`,
#' `std.error`, covariance block (`vcov`), the reference period(s) normalised
#' to zero and not estimated (`reference`), what the pre-period estimates are
#' relative to (`base_period`: `"reference"`, `"varying"` for did_cs's
#' varying base period, `"imputation"` for did_bjs, `"transformation"` for
#' did_lwdid's rolling transformations) and the uniform band's
#' critical value (`crit`, `NA` without a band). [honest_did()],
#' [pretrends_power()], [plot.dd_fit()] and [plot_event_studies()] read it.
#'
#' In `tidy()` (and so in modelsummary tables) the overall effect's row is
#' labelled by its estimand, since the estimators' overall effects differ:
#' `"ATT (2x2)"`, `"ATT (TWFE)"`, `"ATT (SA, cohort shares, e >= 0)"`,
#' `"ATT (all treated obs.)"` (did_bjs, did_gardner), `"ATT (stacked, mean
#' over e >= 0)"`, `"ATT (SDiD)"`, `"ATT (CS simple)"`, `"ATT (CS dynamic,
#' mean over e >= 0)"`, ...; `coef()` and the printed table keep `"ATT"`.
#'
#' @param object,x A `dd_fit`.
#' @param parm Terms (names or positions); default all estimated terms.
#' @param level Confidence level.
#' @param conf.int,conf.level For `tidy()`: include intervals, and at which level.
#' @param ref For `tidy()` of an event study: add the reference period(s) as
#'   rows (`estimate` 0 by normalisation, no standard error), in event-time
#'   order, for plots of one's own. Default `FALSE`.
#' @param row.names For `as.data.frame()`: row names of the result (default: 1, 2, ...).
#' @param optional For the generic; changes nothing (the column names are syntactic).
#' @param cluster,vcov For `summary()`: another variance, as fixest's `summary(fit, cluster = ~state)`.
#'   `cluster` (a column name or one-sided formula): the influence-function estimators ([did_cs()],
#'   [did_edid()], [did_ddd()] and their [aggregate()]s) recompute their analytic standard errors from the
#'   stored influence functions, clustered by that column (constant within units), read from `data`; the
#'   bootstrap standard errors and uniform band of a bootstrap fit are replaced by analytic ones (the
#'   header says so). The other estimators keep no scores: `summary()` stops with the `update()` call that
#'   refits with the new variance (e.g. `update(fit, cluster = ~state)`), and says so when the estimator has
#'   no such argument. `vcov` is always refitted that way.
#' @param data For `summary(fit, cluster = )`: the data of the fit, to read the cluster column from
#'   (default: the fit's call's `data`, found as [update()] finds it); with `style = "plain"`, also for
#'   the Bacon check of [dd_diagnose()].
#' @param style For `summary()`: `"table"` (the default: the coefficient table) or `"plain"`: a summary in
#'   plain language for readers who are not economists (the rules of diff-diff's BusinessReport): the
#'   effect in the outcome's units with its interval ("The treatment increased sales by $1,234.50 (95% CI:
#'   ...)"), what the number is (the estimator's estimand, [dd_estimators()]), how strongly the data support
#'   it (wording by the p-value: below 0.001 "strongly", below 0.01 "well supported", below `alpha`
#'   significant, below 0.10 "suggestive", else "consistent with no effect"), the assumption it rests on,
#'   and, from [dd_diagnose()], the pre-trend test, the HonestDiD breakdown value and the design effect in
#'   words, the sample and the caveats (severity `"warning"` or `"info"`).
#' @param outcome_label,treatment_label For `style = "plain"`: what the outcome and the treatment are
#'   called in the text (default: the outcome column's name and "The treatment").
#' @param outcome_unit For `style = "plain"`: the outcome's unit: `"$"` (or `"usd"`: `$1,234.56`), `"%"`,
#'   `"pp"` (percentage points), `"log_points"` (never turned into percent), `"count"`; any other text is
#'   printed after the number (`"hours"`). Default: none (3 significant digits).
#' @param direction For `style = "plain"`: `"neutral"` (increased / decreased), `"higher_is_better"`
#'   (lifted / reduced) or `"lower_is_better"` (worsened / improved).
#' @param alpha For `style = "plain"`: the level used in the significance wording (default the fit's); the
#'   interval stays at the fit's level (never recomputed), and a caveat says so.
#' @param diagnose For `style = "plain"`: run [dd_diagnose()] for the pre-trend, sensitivity, Bacon and
#'   design-effect sentences (default `TRUE`).
#' @param digits Significant digits to print.
#' @param ... Not used: an error if given (no argument is ignored silently). `tidy()` and `glance()` follow
#'   broom's contract instead, as modelsummary passes its own arguments through: an error only for a
#'   variance asked for (`vcov`, `cluster`; see `summary()`) or a misspelt argument (`conf.levl`).
#' @return `coef`: named numeric; `vcov`: matrix; `confint`: matrix with two
#'   columns; `nobs`: integer; `tidy`, `as.data.frame`, `glance`: data frames;
#'   `summary`: an object of class `summary.dd_fit`. `glance()` has one row:
#'   `estimator`, `nobs`, `n.units`, `n.periods`, `n.clusters` (the smaller
#'   count with two-way clustering), `vcov.type`, `df`, `r.squared`,
#'   `r.squared.within`.
#' @examples
#' d <- read.csv(system.file("extdata", "sim_panel.csv", package = "diffdiff"))
#' fit <- did_twfe(d, yname = "y", idname = "id", tname = "year", dname = "treat")
#' fit
#' summary(fit)
#' coef(fit)
#' confint(fit, level = 0.9)
#' tidy(fit)
#' glance(fit)
#' # another variance: an influence-function fit is reclustered from what it stores
#' cs <- did_cs(d, yname = "y", idname = "id", tname = "year", gname = "first_treat", nboot = 0)
#' summary(cs, cluster = ~state)
#' # a regression fit is refitted
#' summary(update(fit, cluster = ~state))
#' @name dd_fit-methods
NULL

#' @rdname dd_fit-methods
#' @export
coef.dd_fit <- function(object, ...) {
  dd_check_dots(list(...), "coef()")
  object$coefficients
}

#' @rdname dd_fit-methods
#' @export
vcov.dd_fit <- function(object, ...) {
  dd_check_dots(list(...), "vcov()")
  object$vcov
}

#' @rdname dd_fit-methods
#' @export
nobs.dd_fit <- function(object, ...) {
  dd_check_dots(list(...), "nobs()")
  object$nobs
}

dd_parm <- function(object, parm) {
  tab <- object$coeftable
  if (missing(parm) || is.null(parm)) return(seq_len(nrow(tab)))
  idx <- if (is.numeric(parm)) parm else match(parm, tab$term)
  if (anyNA(idx) || any(idx < 1 | idx > nrow(tab)))
    dd_stop("`parm` = %s does not name estimated terms; they are %s.", dd_show(parm), dd_show(tab$term))
  idx
}

#' @rdname dd_fit-methods
#' @export
confint.dd_fit <- function(object, parm, level = 0.95, ...) {
  dd_check_dots(list(...), "confint()")
  if (!is.numeric(level) || length(level) != 1L || is.na(level) || level <= 0 || level >= 1)
    dd_stop("`level` must be a number strictly between 0 and 1; got %s.", dd_show(level))
  tab <- object$coeftable[dd_parm(object, if (missing(parm)) NULL else parm), , drop = FALSE]
  crit <- stats::qt(1 - (1 - level) / 2, dd_term_df(object, tab$term))
  out <- cbind(tab$estimate - crit * tab$std.error, tab$estimate + crit * tab$std.error)
  a <- (1 - level) / 2
  dimnames(out) <- list(tab$term, sprintf("%s %%", format(100 * c(a, 1 - a), trim = TRUE, digits = 3)))
  out
}

#' @rdname dd_fit-methods
#' @method tidy dd_fit
#' @export
tidy.dd_fit <- function(x, conf.int = TRUE, conf.level = 1 - x$alpha, ref = FALSE, ...) {
  dd_check_broom_dots(list(...), "tidy()", sys.function())
  tab <- dd_tidy(x, conf.int, conf.level, ref)
  tab$term[tab$term == "ATT"] <- dd_estimand_label(x)
  tab
}

# The overall effect of each estimator is a different estimand; in tables
# (tidy(), hence modelsummary) its row says which, so that fits of different
# estimators never share an "ATT" row. coef() and the printed table keep
# "ATT".
dd_estimand_label <- function(x) {
  switch(x$estimator,
         did_2x2 = "ATT (2x2)",
         did_twfe = "ATT (TWFE)",
         did_sa = "ATT (SA, cohort shares, e >= 0)",
         did_bjs = , did_gardner = "ATT (all treated obs.)",
         did_stacked = "ATT (stacked, mean over e >= 0)",
         did_dcdh = "ATT (dCDH, total effect per unit of treatment)",
         did_sdid = sprintf("ATT (%s)", c(sdid = "SDiD", sc = "SC", did = "DiD")[[x$method %||% "sdid"]]),
         did_cs_agg = sprintf("ATT (CS %s)", c(simple = "simple", dynamic = "dynamic, mean over e >= 0",
                                               group = "group, mean over cohorts",
                                               calendar = "calendar, mean over periods")[[x$type]]),
         "ATT")
}

# tidy() without the estimand labels (the plots match terms to main_terms)
dd_tidy <- function(x, conf.int = TRUE, conf.level = 1 - x$alpha, ref = FALSE) {
  tab <- x$coeftable
  if (!isTRUE(all.equal(conf.level, 1 - x$alpha))) {
    ci <- confint(x, level = conf.level)
    tab$conf.low <- unname(ci[, 1]); tab$conf.high <- unname(ci[, 2])
  }
  if (!conf.int) tab$conf.low <- tab$conf.high <- NULL
  if (!isTRUE(dd_check_flag(ref, "ref")) || is.null(x$event_study) || !length(x$event_study$reference) ||
      is.null(tab$event)) {
    rownames(tab) <- NULL
    return(tab)
  }
  # the reference period(s) as rows: estimate 0 by normalisation, no
  # standard error; event-time rows in event order, other rows (an overall
  # ATT) after them
  # (did_cs's dynamic aggregation with a universal base period already has
  # its reference row)
  r <- setdiff(x$event_study$reference, tab$event)
  out <- tab
  if (length(r)) {
    add <- tab[rep(NA_integer_, length(r)), , drop = FALSE]
    add$term <- paste0("event::", r); add$event <- r; add$estimate <- rep(0, length(r))
    out <- rbind(tab, add)
  }
  ev <- !is.na(out$event)
  out <- out[c(which(ev)[order(out$event[ev])], which(!ev)), , drop = FALSE]
  rownames(out) <- NULL
  out
}

#' @rdname dd_fit-methods
#' @method glance dd_fit
#' @export
glance.dd_fit <- function(x, ...) {
  dd_check_broom_dots(list(...), "glance()", sys.function())
  data.frame(estimator = x$estimator, nobs = x$nobs, n.units = x$n_units %||% NA_integer_,
             n.periods = x$n_periods %||% NA_integer_,
             n.clusters = if (is.null(x$n_clusters)) NA_integer_ else min(x$n_clusters),
             vcov.type = x$vcov_label, df = min(x$df), r.squared = x$r2 %||% NA_real_,
             r.squared.within = x$r2_within %||% NA_real_, stringsAsFactors = FALSE)
}

#' @rdname dd_fit-methods
#' @export
as.data.frame.dd_fit <- function(x, row.names = NULL, optional = FALSE, ...) dd_as_df(tidy(x), row.names, list(...))

# as.data.frame() methods: the table with `row.names` when given and
# `stringsAsFactors` (which data.frame() passes) honoured; any other argument
# is an error. (`optional`, about syntactic column names, changes nothing:
# the tables' names are syntactic.)
dd_as_df <- function(df, row.names, dots) {
  saf <- dots$stringsAsFactors
  dots$stringsAsFactors <- NULL
  dd_check_dots(dots, "as.data.frame()")
  df <- as.data.frame(df, stringsAsFactors = FALSE)
  if (isTRUE(saf)) df[] <- lapply(df, function(v) if (is.character(v)) factor(v) else v)
  if (!is.null(row.names)) row.names(df) <- row.names
  df
}

dd_fmt_int <- function(x) formatC(x, format = "d", big.mark = ",")

dd_print_header <- function(x) {
  cat(x$title, "\n", sep = "")
  line <- sprintf("Outcome: %s   Observations: %s", x$yname, dd_fmt_int(x$nobs))
  if (!is.null(x$n_units)) line <- paste0(line, sprintf("   Units: %s", dd_fmt_int(x$n_units)))
  if (!is.null(x$n_periods)) line <- paste0(line, sprintf("   Periods: %s", dd_fmt_int(x$n_periods)))
  cat(line, "\n", sep = "")
  if (length(x$fe_names))
    cat("Fixed effects: ", paste(sprintf("%s (%s)", x$fe_names, dd_fmt_int(x$fe_sizes)), collapse = ", "),
        "\n", sep = "")
  se <- x$vcov_label
  if (!is.null(x$n_clusters)) se <- paste0(se, ", ", paste(dd_fmt_int(x$n_clusters), collapse = " & "), " clusters")
  cat("Standard errors: ", se, "\n", sep = "")
  dd_design_line(x)
  dd_rules_line(x)
}

# The comparison, base period and reference period of a fit, one line, so
# that two fits printed one after the other can be compared at a glance
# (the estimators' defaults differ: never-treated comparisons in did_cs,
# not-yet-treated in did_etwfe, did_dose, did_stacked).
dd_design_line <- function(x) {
  cmp <- dd_comparison_text(x)
  es <- x$event_study
  bp <- if (!is.null(es)) switch(es$base_period, reference = "the reference period",
                                 varying = "varying (pre-period estimates: changes between consecutive periods)",
                                 imputation = "imputation (pre-period estimates test the untreated model)",
                                 transformation = "each unit's pre-treatment mean or trend (rolling transformation)")
        else if (!is.null(x$base_period)) switch(x$base_period, varying = "varying (t - 1 before treatment)",
                                                 universal = "universal (g - 1)", x$base_period)
  ref <- if (!is.null(es)) (if (length(es$reference)) paste(format(es$reference), collapse = ", ") else "none")
         else if (identical(x$base_period, "universal")) "g - 1 (0 by construction)"
  parts <- c(if (!is.null(cmp)) paste("Comparison:", cmp), if (!is.null(bp)) paste("base period:", bp),
             if (!is.null(ref)) paste("reference period:", ref))
  if (length(parts)) cat(paste(parts, collapse = "; "), "\n", sep = "")
  invisible(NULL)
}

# what the fit's effects are compared with, in words
dd_comparison_text <- function(x) {
  est <- x$estimator %||% class(x)[1]
  if (grepl("_agg$", est)) {
    src <- x$source_call %||% NULL
    est <- if (!is.null(src)) as.character(src[[1]])[1] else sub("_agg$", "", est)
  }
  cg <- x$control_group
  cg_text <- function(cg) {
    if (is.null(cg)) return(NULL)
    if (startsWith(cg, "last:")) return(sprintf("the last-treated cohort (%s)", sub("^last:", "", cg)))
    switch(cg, nevertreated = , never_treated = , never = "never-treated units",
           notyettreated = , not_yet_treated = , notyet = "not-yet-treated units",
           strict = "units not treated within the window (strict)", cg)
  }
  switch(est,
         did_2x2 = "the control group (`treatname` = 0)",
         did_twfe = , did_event = "untreated observations (two-way fixed effects)",
         did_bjs = , did_gardner = "untreated observations (imputation)",
         did_spillover = sprintf("untreated observations beyond the last ring (%s) from every treated unit (imputation)",
                                 format(max(x$rings %||% NA))),
         did_edid = "never-treated and not-yet-treated units (efficient weights)",
         did_duration = sprintf("never-treated units (untreated hazards: %s)", sub("_", " ", x$method %||% "")),
         did_rs = "not-yet-treated cohorts (random timing)",
         did_sdid = "synthetic control (weighted untreated units)",
         did_synth = "synthetic control (weighted never-treated donors, matched on the predictors)",
         did_trop = "untreated cells (weighted)",
         did_had = "quasi-untreated units (doses near 0)",
         did_dcdh = "units whose treatment has not changed yet",
         rd_robust = sprintf("observations just below the cutoff (%s < %s), one local polynomial on each side",
                             x$xname, format(x$cutoff)),
         did_ddd = paste(cg_text(cg %||% "nevertreated"), "(and the ineligible units)"),
         cg_text(cg))
}

# The coefficient table: z / Pr(>|z|) headers under normal inference (df =
# Inf), t / Pr(>|t|) otherwise; the interval ends formatted like the
# estimates (fixed notation, no 1e-05 in an interval column).
# The t degrees of freedom of the terms `terms` of a fit: one number for
# all, or (CR2's Satterthwaite df) one per coefficient, by name.
dd_term_df <- function(x, terms) {
  df <- x$df
  if (length(df) <= 1L) return(df)
  d <- unname(df[terms])
  d[is.na(d)] <- Inf
  d
}

dd_print_table <- function(tab, alpha, digits, df = Inf) {
  z <- all(!is.finite(df))
  # printCoefmat formats the last column as the p-value: the interval goes before it
  # a bias-corrected estimate (did_had) goes next to the estimate: the
  # statistic, p-value and interval are centred on it
  bc <- !is.null(tab$estimate_bc)
  m <- cbind(Estimate = tab$estimate, `Bias-corr.` = if (bc) tab$estimate_bc, `Std. Error` = tab$std.error,
             stat = tab$statistic, tab$conf.low, tab$conf.high, p = tab$p.value)
  k <- bc
  colnames(m)[c(3, 6) + k] <- if (z) c("z value", "Pr(>|z|)") else c("t value", "Pr(>|t|)")
  colnames(m)[4:5 + k] <- sprintf("%s %%", format(100 * c(alpha / 2, 1 - alpha / 2), trim = TRUE))
  rownames(m) <- tab$term
  stats::printCoefmat(m, digits = digits, P.values = TRUE, has.Pvalue = TRUE,
                      cs.ind = if (bc) c(1, 2, 3, 5, 6) else c(1, 2, 4, 5), tst.ind = 3 + k, signif.stars = FALSE)
}

# Lines after the table that print() and summary() both show: the uniform
# band's critical value, and what a subclass adds (did_cs: the pre-test and
# its settings).
dd_footer <- function(x) UseMethod("dd_footer")

dd_footer.default <- function(x) {
  if (!is.null(x$crit) && is.finite(x$crit))
    cat(sprintf("Uniform band critical value: %.3f (%s, %g%%)\n", x$crit,
                if (identical(x$cband_method, "bootstrap-t")) "bootstrap-t" else "sup-t", 100 * (1 - x$alpha)))
  invisible(x)
}

#' @rdname dd_fit-methods
#' @export
print.dd_fit <- function(x, digits = max(3L, getOption("digits") - 3L), ...) {
  dd_check_dots(list(...), "print()")
  dd_print_header(x)
  cat("\n")
  tab <- x$coeftable[x$coeftable$term %in% x$main_terms, , drop = FALSE]
  dd_print_table(tab, x$alpha, digits, dd_term_df(x, tab$term))
  more <- setdiff(x$coeftable$term, x$main_terms)
  if (length(more))
    cat(if (all(grepl("::", more, fixed = TRUE))) sprintf("(%d more rows, %s: see summary())\n", length(more),
                                                          paste(unique(sub("::.*", "", more)), collapse = " and "))
        else "(covariates: see summary())\n")
  dd_footer(x)
  invisible(x)
}

#' @rdname dd_fit-methods
#' @export
summary.dd_fit <- function(object, cluster = NULL, vcov = NULL, data = NULL, style = c("table", "plain"),
                           outcome_label = NULL, outcome_unit = NULL, treatment_label = NULL,
                           direction = c("neutral", "higher_is_better", "lower_is_better"), alpha = NULL,
                           diagnose = TRUE, ...) {
  dd_check_dots(list(...), "summary()")
  style <- dd_match_arg(style[1], c("table", "plain"), "style")
  plain <- c(outcome_label = !is.null(outcome_label), outcome_unit = !is.null(outcome_unit),
             treatment_label = !is.null(treatment_label), direction = !missing(direction), alpha = !is.null(alpha),
             diagnose = !missing(diagnose))
  if (style == "table" && any(plain))
    dd_stop("`%s` applies to style = \"plain\" only (a summary in words); the table summary has no such argument.",
            names(plain)[plain][1])
  env <- parent.frame()
  if (!is.null(cluster) || !is.null(vcov)) object <- dd_revcov(object, cluster, vcov, data, env)
  if (style == "plain") {
    dd_check_flag(diagnose, "diagnose")
    dg <- if (diagnose) dd_diagnose(object, data = data, envir = env)
    return(dd_plain(object, outcome_label, outcome_unit, treatment_label, direction, alpha, dg))
  }
  structure(list(fit = object), class = "summary.dd_fit")
}

#' @rdname dd_fit-methods
#' @export
print.summary.dd_fit <- function(x, digits = max(3L, getOption("digits") - 3L), ...) {
  dd_check_dots(list(...), "print()")
  f <- x$fit
  dd_print_header(f)
  cat(if (length(f$df) > 1L)
        sprintf("Inference: t distributions with %s degrees of freedom per coefficient (%s to %s), %g%% intervals\n",
                if (identical(f$vcov_type, "CR2")) "Satterthwaite" else "their own",
                format(min(f$df), digits = 4), format(max(f$df), digits = 4), 100 * (1 - f$alpha))
      else if (is.finite(f$df)) sprintf("Inference: t distribution with %s degrees of freedom, %g%% intervals\n",
                                        format(f$df), 100 * (1 - f$alpha))
      else sprintf("Inference: normal distribution, %g%% intervals\n", 100 * (1 - f$alpha)))
  cat("\n")
  dd_print_table(f$coeftable, f$alpha, digits, dd_term_df(f, f$coeftable$term))
  dd_footer(f)
  if (length(f$dropped))
    cat("Dropped for collinearity: ", paste(f$dropped, collapse = ", "), "\n", sep = "")
  if (!is.null(f$r2))
    cat(sprintf("R-squared: %.4f   Within R-squared: %s\n", f$r2,
                if (is.null(f$r2_within)) "-" else sprintf("%.4f", f$r2_within)))
  b <- f$coeftable
  if ("boot.p.value" %in% names(b)) {
    bb <- b[!is.na(b$boot.p.value), , drop = FALSE]
    cat(sprintf("\nWild cluster bootstrap (null imposed, %s weights, %d replications, %s clusters):\n",
                f$wild_boot$boot_weights, f$wild_boot$nboot, dd_fmt_int(f$wild_boot$G)))
    m <- cbind(`p-value` = bb$boot.p.value, bb$boot.conf.low, bb$boot.conf.high)
    colnames(m)[2:3] <- sprintf("%s %%", format(100 * c(f$alpha / 2, 1 - f$alpha / 2), trim = TRUE))
    rownames(m) <- bb$term
    print(signif(m, digits))
    cat("(symmetric p-values; intervals by test inversion)\n")
  }
  if (length(f$notes)) cat(paste0("Note: ", f$notes, "\n"), sep = "")
  invisible(x)
}

#' Residuals, fitted values and predictions of the regression estimators
#'
#' The regression estimators ([did_2x2()], [did_twfe()], [did_event()],
#' [did_sa()], [did_stacked()]) keep the residuals and fitted values of their
#' estimation sample (the rows used: after missing values, fixed-effect
#' singletons and, for [did_stacked()], the stacked rows), as fixest's
#' `feols()` does; `fitted(fit) + residuals(fit)` is the outcome. The other
#' estimators are not one regression and stop with a message saying so.
#' `predict()` without `newdata` gives the fitted values; with `newdata` it
#' stops, as the fixed effects are absorbed, not estimated.
#' @param object A `dd_fit`.
#' @param newdata For `predict()`: must be `NULL` (see above).
#' @param ... Not used (an error if given).
#' @return A numeric vector, one value per row of the estimation sample.
#' @examples
#' d <- read.csv(system.file("extdata", "sim_panel.csv", package = "diffdiff"))
#' fit <- did_twfe(d, "y", "id", "year", "treat")
#' summary(residuals(fit))
#' all.equal(fitted(fit) + residuals(fit), d$y)
#' @name dd_fit-residuals
NULL

dd_fit_vector <- function(object, what, fun) {
  v <- object[[what]]
  if (is.null(v) && !is.null(object$db))
    dd_stop("%s(): the fit was estimated on a database table and keeps no %s (one per row of the table); compute them in the database, or collect() the table and refit.",
            fun, if (what == "residuals") "residuals" else "fitted values", .code = "NEEDS_MEMORY")
  if (is.null(v))
    dd_stop("%s(): a %s fit is not one regression and keeps no %s (the regression estimators do: did_2x2, did_twfe, did_event, did_sa, did_stacked).",
            fun, object$estimator %||% class(object)[1], if (what == "residuals") "residuals" else "fitted values",
            .code = "NOT_A_REGRESSION")
  v
}

#' @rdname dd_fit-residuals
#' @export
residuals.dd_fit <- function(object, ...) {
  dd_check_dots(list(...), "residuals()")
  dd_fit_vector(object, "residuals", "residuals")
}

#' @rdname dd_fit-residuals
#' @export
fitted.dd_fit <- function(object, ...) {
  dd_check_dots(list(...), "fitted()")
  dd_fit_vector(object, "fitted.values", "fitted")
}

#' @rdname dd_fit-residuals
#' @export
predict.dd_fit <- function(object, newdata = NULL, ...) {
  dd_check_dots(list(...), "predict()")
  if (!is.null(newdata))
    dd_stop("predict(newdata = ): not available for a %s fit: its fixed effects are absorbed (demeaned out), not estimated, so there is nothing to predict new rows from; fitted() gives the estimation sample's fitted values.",
            object$estimator %||% class(object)[1], .code = "NO_NEWDATA")
  dd_fit_vector(object, "fitted.values", "predict")
}
