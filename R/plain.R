# The plain-language summary of a fit (summary(fit, style = "plain") and
# dd_report()): the wording rules of diff-diff's BusinessReport
# (tools/notes/practitioner-spec.md, section 3) on diffdiff's own numbers:
# the headline from dd_diag_overall(), the checks from dd_diagnose(), the
# estimand and assumption from the registry.

# the outcome units diff-diff recognises; any other text is printed verbatim
dd_plain_units <- c("$", "usd", "%", "pp", "log_points", "count")

dd_plain_fmt <- function(v, unit) {
  if (!is.finite(v)) return(format(v))
  a <- abs(v)
  num <- function(x, d = 2) formatC(x, format = "f", digits = d, big.mark = ",")
  sig <- function(x) format(signif(x, 3), big.mark = ",", scientific = FALSE, trim = TRUE)
  core <- if (is.null(unit)) sig(a)
          else switch(unit, "$" = , usd = paste0("$", num(a)), "%" = paste0(num(a), "%"), pp = paste0(num(a), " pp"),
                      log_points = paste0(sig(a), " log points"), count = num(a, if (a >= 100) 0 else 1),
                      paste(sig(a), unit))
  if (v < 0) paste0("-", core) else core
}

dd_plain_args <- function(outcome_label, outcome_unit, treatment_label, direction) {
  for (a in list(list(outcome_label, "outcome_label"), list(outcome_unit, "outcome_unit"),
                 list(treatment_label, "treatment_label")))
    if (!is.null(a[[1]]) && (!is.character(a[[1]]) || length(a[[1]]) != 1L || is.na(a[[1]]) || !nzchar(a[[1]])))
      dd_stop("`%s` must be one non-empty string; got %s.", a[[2]], dd_show(a[[1]]))
  dd_match_arg(direction[1], c("neutral", "higher_is_better", "lower_is_better"), "direction")
}

# The summary: sentences (named), the headline numbers and the caveats
# (severity, topic, message)
dd_plain <- function(fit, outcome_label = NULL, outcome_unit = NULL, treatment_label = NULL,
                     direction = c("neutral", "higher_is_better", "lower_is_better"), alpha = NULL,
                     diagnosis = NULL) {
  direction <- dd_plain_args(outcome_label, outcome_unit, treatment_label, direction)
  fit_alpha <- fit$alpha %||% 0.05
  alpha <- if (is.null(alpha)) fit_alpha else dd_check_alpha(alpha)
  est <- class(fit)[1]
  reg <- dd_estimators()
  ri <- match(est, reg$name)
  o <- if (is.null(diagnosis)) dd_diag_overall(fit) else diagnosis$overall   # (computed once)
  yl <- outcome_label %||% fit$yname %||% "the outcome"
  tl <- treatment_label %||% "The treatment"
  unit <- if (is.null(outcome_unit)) NULL else if (tolower(outcome_unit) %in% dd_plain_units) tolower(outcome_unit)
          else outcome_unit
  cav <- data.frame(severity = character(), topic = character(), message = character(), stringsAsFactors = FALSE)
  add <- function(sev, topic, msg) cav[nrow(cav) + 1L, ] <<- list(sev, topic, msg)
  v <- o$estimate; p <- o$p.value; lo <- o$conf.low; hi <- o$conf.high
  lev <- 100 * (1 - fit_alpha)
  s <- list()
  if (!is.finite(v)) {
    s$headline <- sprintf("The analysis was unable to produce a finite estimate of the effect of %s on %s.",
                          tolower(tl), yl)
    add("warning", "estimate", "The estimate is not finite: check the data and the specification (did_check()).")
  } else {
    verb <- switch(direction,
                   neutral = if (v >= 0) "increased" else "decreased",
                   higher_is_better = if (v >= 0) "lifted" else "reduced",
                   lower_is_better = if (v >= 0) "worsened" else "improved")
    ci <- if (is.finite(lo) && is.finite(hi))
      sprintf("%g%% CI: %s to %s", lev, dd_plain_fmt(lo, unit), dd_plain_fmt(hi, unit)) else "inference unavailable"
    s$headline <- sprintf("%s %s %s by %s (%s).", tl, verb, yl, dd_plain_fmt(abs(v), unit), ci)
  }
  s$target <- sprintf("The number is %s.", reg$estimand[ri] %||% "the average effect on the treated")
  if (is.finite(p)) {
    s$significance <- if (p < 0.001) "The data strongly support the direction of the effect (p < 0.001)."
      else if (p < 0.01) sprintf("The direction of the effect is well supported (p = %s).", format(signif(p, 2)))
      else if (p < alpha) sprintf("The effect is statistically significant at the %g%% level (p = %s).", 100 * (1 - alpha), format(signif(p, 2)))
      else if (p < 0.10) sprintf("The interval includes zero, but the direction is suggestive (p = %s).", format(signif(p, 2)))
      else sprintf("The interval includes zero: the data are consistent with no effect (p = %s).", format(signif(p, 2)))
    if (p > alpha - 0.01 && p < alpha + 0.001) {
      s$significance <- paste(s$significance, sprintf("The p-value is close to the %g threshold: small changes to the analysis could change the verdict.", alpha))
      add("info", "significance", sprintf("p = %s is near the threshold %g.", format(signif(p, 3)), alpha))
    }
  }
  if (alpha != fit_alpha)
    add("info", "alpha", sprintf("The significance wording uses alpha = %g; the interval stays at the fit's %g%% level (it is not recomputed).",
                                 alpha, lev))
  s$assumption <- sprintf("Assumption: %s", dd_assumption_text(est, fit))
  dg <- diagnosis
  if (!is.null(dg)) {
    pt <- dg$parallel_trends; pw <- dg$pretrends_power; hs <- dg$sensitivity; bc <- dg$bacon; de <- dg$design_effect
    if (identical(pt$status, "ran"))
      s$pre_trends <- switch(pt$verdict,
        clear_violation = sprintf("Before treatment the groups already moved differently (p = %s): the assumption looks violated, so treat the estimate with caution.", format(signif(pt$p.value, 2))),
        some_evidence_against = sprintf("Before treatment there is some evidence that the groups moved differently (p = %s).", format(signif(pt$p.value, 2))),
        sprintf("Before treatment the groups moved alike (no detected difference, p = %s)%s.", format(signif(pt$p.value, 2)),
                if (identical(pw$status, "ran") && pw$verdict == "underpowered") ", although that check could have missed a sizeable difference" else ""))
    if (identical(hs$status, "ran")) {
      bd <- hs$breakdown
      s$sensitivity <- if (is.na(bd) || bd >= 2) "The conclusion holds even if the assumption failed after treatment by up to twice the largest difference seen before treatment."
        else if (bd > 0) sprintf("The conclusion holds if the assumption failed after treatment by up to %s times the largest difference seen before treatment.", format(signif(bd, 2)))
        else "The conclusion does not hold once the assumption is allowed to fail after treatment as much as it did before."
      if (is.finite(bd) && bd < 0.5) add("warning", "sensitivity", sprintf("HonestDiD breakdown value %s (below 0.5): the conclusion is fragile.", format(signif(bd, 2))))
    }
    # (diff-diff makes both a warning; for a heterogeneity-robust fit it
    # describes the rollout, not this estimate, so here it is information)
    if (identical(bc$status, "ran") && bc$forbidden_weight > 0.10)
      add(if (bc$about == "estimate") "warning" else "info", "bacon", if (bc$about == "estimate")
        sprintf("%.0f%% of the TWFE weight compares later- with already-treated units: re-estimate with a heterogeneity-robust estimator.", 100 * bc$forbidden_weight)
        else sprintf("A TWFE regression would put %.0f%% of its weight on already-treated comparisons; this estimator does not use them (a statement about the rollout, not this estimate).", 100 * bc$forbidden_weight))
    if (identical(de$status, "ran")) {
      mx <- max(de$table$deff, na.rm = TRUE)
      s$design <- sprintf("The survey design makes the estimates %s as variable as a simple random sample of the same size would (design effect up to %s).",
                          if (mx >= 1) "up to that many times" else "less", format(signif(mx, 3)))
      if (mx >= 5) add("warning", "design_effect", sprintf("Design effect %s: the effective sample is far smaller than the count of observations.", format(signif(mx, 3))))
      else if (mx >= 1.5) add("info", "design_effect", sprintf("Design effect %s.", format(signif(mx, 3))))
    }
    for (w in unique(unlist(lapply(dg[dg$checks$check], `[[`, "warnings")))) add("info", "diagnostics", w)
  }
  n_obs <- fit$nobs; n_u <- fit$n_units
  s$sample <- sprintf("Sample: %s observations%s.", dd_fmt_int(n_obs),
                      if (!is.null(n_u) && is.finite(n_u) && n_u != n_obs) sprintf(" on %s units", dd_fmt_int(n_u)) else "")
  ntr <- fit$n_treated %||% (if (!is.null(fit$cohort_n)) sum(fit$cohort_n[names(fit$cohort_n) != "0"]))
  if (length(ntr) == 1L && is.finite(ntr) && ntr <= 3)
    add("warning", "sample", sprintf("Only %d treated unit%s: large-sample standard errors are doubtful; consider did_sdid(), did_synth() or placebo_test(type = \"permutation\").",
                                     as.integer(ntr), if (ntr == 1) "" else "s"))
  if (identical(unit, "log_points"))
    add("info", "units", "The effect is in log points; it is not converted to a percentage (100 * (exp(x) - 1) is the percent change).")
  warn <- cav$message[cav$severity == "warning"]
  if (length(warn)) s$caveat <- paste("Caveat:", warn[1])
  structure(list(sentences = unlist(s), estimate = v, conf.low = lo, conf.high = hi, p.value = p, alpha = alpha,
                 level = 1 - fit_alpha, term = o$term, outcome = yl, unit = unit, direction = direction,
                 caveats = cav, estimator = est),
            class = "dd_plain")
}

#' @export
print.dd_plain <- function(x, ...) {
  dd_check_dots(list(...), "print()")
  cat(sprintf("Plain-language summary (%s)\n\n", x$estimator))
  cat(strwrap(paste(x$sentences, collapse = " ")), sep = "\n")
  if (nrow(x$caveats)) {
    cat("\nCaveats:\n")
    cat(paste0("- [", x$caveats$severity, "] ", x$caveats$message), sep = "\n")
  }
  invisible(x)
}
