#' What to check next after a fit: the practitioner's recipe
#'
#' The checks still to run after fitting, following the eight steps of
#' Baker, Callaway, Cunningham, Goodman-Bacon and Sant'Anna (2025) as the
#' Python library diff-diff's `practitioner_next_steps()` lays them out:
#' (1) define the target parameter, (2) state the identifying assumptions,
#' (3) assess parallel trends, (4) choose an estimator suited to the design,
#' (5) estimate, (6) sensitivity, (7) heterogeneity, (8) robustness and
#' reporting. Each step says why and gives the diffdiff call to run it; the
#' steps depend on the estimator (its registry row). A step is dropped when
#' its tag is listed in `completed`; nothing in the data is inspected, so a
#' listed step is a reminder, not a finding. Warnings flag an estimate that
#' is NA and, for a [bacon_decomp()], a weight on "later vs earlier treated"
#' comparisons above 1%.
#'
#' @param fit A diffdiff fit (any estimator), or a [bacon_decomp()] result.
#' @param completed Tags of steps already done: any of `"target_parameter"`,
#'   `"assumptions"`, `"parallel_trends"`, `"estimator_selection"`,
#'   `"estimation"` (always done for a fit), `"sensitivity"`, `"placebo"`,
#'   `"heterogeneity"`, `"robustness"`.
#' @return An object of class `dd_next_steps`: `estimator`, `completed`,
#'   `steps` (a data frame: `step` (Baker et al.'s number), `tag`, `label`,
#'   `why`, `code`, `priority`) and `warnings`. Print shows them.
#' @references Baker, A., Callaway, B., Cunningham, S., Goodman-Bacon, A. and
#'   Sant'Anna, P. H. C. (2025). Difference-in-differences designs: a
#'   practitioner's guide. arXiv:2503.13323.
#' @examples
#' d <- read.csv(system.file("extdata", "sim_panel.csv", package = "diffdiff"))
#' fit <- did_cs(d, "y", "id", "year", "first_treat", nboot = 0)
#' dd_next_steps(fit)
#' dd_next_steps(fit, completed = c("parallel_trends", "sensitivity"))
#' @export
dd_next_steps <- function(fit, completed = character()) {
  tags <- c("target_parameter", "assumptions", "parallel_trends", "estimator_selection", "estimation", "sensitivity",
            "placebo", "heterogeneity", "robustness")
  if (!is.character(completed) || anyNA(completed)) dd_stop("`completed` must be step tags (strings); got %s.", dd_show(completed))
  bad <- setdiff(completed, tags)
  if (length(bad)) dd_stop("`completed` has %s, not a step tag; the tags are %s.", dd_show(bad),
                           paste0('"', tags, '"', collapse = ", "))
  bacon <- inherits(fit, "bacon_decomp")
  if (!bacon && !inherits(fit, "dd_fit")) dd_stop("`fit` must be a diffdiff fit or a bacon_decomp(); got %s.", dd_show(class(fit)[1]))
  est <- if (bacon) "bacon_decomp" else class(fit)[1]
  done <- unique(c(completed, if (!bacon) "estimation"))
  warn <- character()
  if (!bacon && length(fit$coefficients) && all(is.na(fit$coefficients)))
    warn <- c(warn, "Every estimate is NA: check the data and the specification (did_check()) before anything else.")
  if (bacon) {
    tb <- fit$two_by_twos
    w_late <- sum(tb$weight[grepl("Later vs Earlier", tb$type)])
    if (w_late > 0.01)
      warn <- c(warn, sprintf("%.1f%% of the TWFE weight is on comparisons of later- with earlier-treated units (already-treated controls): the TWFE coefficient is contaminated when effects change over time; use a heterogeneity-robust estimator.",
                              100 * w_late))
  }
  st <- dd_steps_for(est, fit)
  if (!bacon) st <- rbind(dd_step(1, "target_parameter", "Define the target parameter",
                                  "Say which average effect answers the question (ATT, ATT(g,t), an event-time or calendar aggregate; weighted or not) before reading the numbers.",
                                  "aggregate(fit, \"group\")  # or \"dynamic\", \"calendar\", \"simple\""),
                          dd_step(2, "assumptions", "State the identifying assumptions",
                                  dd_assumption_text(est, fit), "did_check(data, yname, idname, tname, gname)"),
                          st)
  steps <- st[!st$tag %in% done, , drop = FALSE]
  rownames(steps) <- NULL
  structure(list(estimator = est, completed = sort(done), steps = steps, warnings = warn), class = "dd_next_steps")
}

dd_step <- function(step, tag, label, why, code, priority = "high")
  data.frame(step = step, tag = tag, label = label, why = why, code = code, priority = priority, stringsAsFactors = FALSE)

# the identifying assumption in words: the registry's text, else parallel
# trends worded with the fit's comparison group and anticipation
dd_assumption_text <- function(est, fit) {
  reg <- dd_estimators()
  a <- reg$assumption[match(est, reg$name)]
  if (!is.na(a)) return(a)
  cg <- fit$control_group %||% ""
  k <- suppressWarnings(as.numeric(fit$anticipation %||% 0))
  sprintf("Parallel trends%s, %s, no spillovers, and overlap when covariates enter.",
          if (nzchar(cg)) sprintf(" relative to the %s units", sub("notyettreated", "not-yet-treated", sub("nevertreated", "never-treated", cg)))
          else "",
          if (length(k) == 1L && is.finite(k) && k > 0)
            sprintf("no effects earlier than %s period%s before treatment (anticipation = %s)", format(k), if (k == 1) "" else "s", format(k))
          else "no anticipation")
}

# the estimator's own steps (Baker et al. 3-8)
dd_steps_for <- function(est, fit) {
  pt_es <- dd_step(3, "parallel_trends", "Assess parallel trends on the event study",
                   "Read the pre-treatment event-time estimates (near zero, jointly insignificant), not a generic 2x2 test; an insignificant pre-trend does not prove parallel trends, so check the test's power too.",
                   "es <- aggregate(fit, \"dynamic\"); plot(es); pretrends_power(es)")
  pt_gen <- dd_step(3, "parallel_trends", "Test parallel trends in the pre-periods",
                    "Compare the groups' pre-treatment trends; an insignificant difference does not prove parallel trends.",
                    "trend_tests(data, yname, tname, treatname, idname)")
  honest <- dd_step(6, "sensitivity", "Sensitivity to violations of parallel trends (HonestDiD)",
                    "Bound the effect when post-treatment violations may be up to M times the largest pre-treatment one (relative magnitudes), and report the breakdown value.",
                    "honest_did(aggregate(fit, \"dynamic\"), type = \"RM\", Mbar = c(0.5, 1, 1.5, 2))")
  hetero <- dd_step(7, "heterogeneity", "Look at heterogeneity across cohorts and event times",
                    "Aggregate by cohort and by time since treatment; one overall number can hide effects that differ in sign.",
                    "aggregate(fit, \"group\"); aggregate(fit, \"dynamic\"); plot(fit, type = \"heatmap\")")
  compare <- dd_step(8, "robustness", "Compare heterogeneity-robust estimators",
                     "Estimates that rest on different comparisons (Callaway-Sant'Anna, Sun-Abraham, imputation, two-stage, stacked) should tell the same story.",
                     "dd_compare(list(cs = fit, sa = did_sa(...), bjs = did_bjs(...)))")
  covs <- dd_step(8, "robustness", "With and without covariates",
                  "Report both: covariates change the comparison (conditional parallel trends) and can move the estimate.",
                  "update(fit, xformla = NULL)", "medium")
  placebo <- dd_step(6, "placebo", "Placebo tests",
                     "Re-estimate with a fake treatment date or fake treated units: a clear 'effect' there undermines the design.",
                     "placebo_test(fit)", "medium")
  bacon <- dd_step(4, "estimator_selection", "Check the TWFE comparisons (Goodman-Bacon; negative weights)",
                   "With staggered timing the TWFE coefficient mixes in already-treated units as controls and can put negative weight on some cells.",
                   "bacon_decomp(data, yname, idname, tname, dname = ...); twfe_weights(data, yname, idname, tname, dname)")
  switch(est,
    did_2x2 = rbind(pt_gen, placebo, dd_step(4, "estimator_selection", "Is the timing really one date?",
                    "With more than one adoption cohort use a staggered estimator (did_cs) instead of one 2x2.",
                    "dd_timing(data, idname, tname, gname = ...)")),
    did_twfe = , did_event = rbind(pt_es, bacon, honest, compare),
    did_cs = , did_edid = , did_bc = rbind(pt_es, honest, hetero, compare, covs),
    did_dml = rbind(pt_es, honest, dd_step(6, "sensitivity", "Omitted-variable bias",
                    "How strong an omitted confounder would have to be to explain the effect away.",
                    "ovb_sensitivity(fit)"), hetero, compare,
                    dd_step(8, "learner_sensitivity", "Another nuisance learner",
                            "Refit with a different learner: the estimate should not hinge on one machine-learning method.",
                            "update(fit, learner = \"forest\")", "medium")),
    did_sa = , did_bjs = , did_gardner = , did_etwfe = , did_stacked = , did_lpdid = , did_lwdid = , did_spillover = , did_rs =
      rbind(pt_es, honest, hetero, compare,
            dd_step(6, "specification_comparison", "Vary the specification",
                    "Change the control group, the window or the anticipation: the estimate should not depend on one choice.",
                    "update(fit, control_group = ...)", "medium")),
    did_sdid = rbind(dd_step(6, "sensitivity", "Pre-treatment fit and weight concentration",
                             "A poor pre-treatment fit or weights on a few units make the estimate fragile.",
                             "sdid_diagnostics(fit)"),
                     dd_step(6, "in_time_placebo", "In-time placebo", "Move the treatment date into the pre-period.",
                             "placebo_test(fit)", "medium"), compare),
    did_synth = rbind(dd_step(6, "placebo", "In-space placebo inference",
                              "Rank the treated unit's post/pre fit ratio among the donors' (permutation p-value).",
                              "synth_fp(fit); synth_conformal(fit)"),
                      dd_step(3, "parallel_trends", "Pre-treatment fit and predictor balance",
                              "The synthetic control must track the treated unit before treatment.", "synth_diagnostics(fit)"),
                      dd_step(6, "in_time_placebo", "Backdating", "Move the treatment date earlier.", "placebo_test(fit)", "medium")),
    did_trop = rbind(dd_step(6, "sensitivity", "The factor structure",
                             "Check that a few factors explain the untreated outcomes.", "plot(fit)"), placebo, compare),
    did_dose = rbind(dd_step(3, "parallel_trends", "Parallel trends by dose",
                             "Strong parallel trends across doses is needed for ATT(d) comparisons; inspect pre-trends by dose group.",
                             "plot(fit)"), dd_step(7, "heterogeneity", "The dose-response curve",
                             "Read the effect along the dose, with its band; sparse doses are imprecise.", "plot(fit)"),
                     dd_step(4, "estimator_selection", "No untreated units?",
                             "Without untreated units use the heterogeneous-adoption design.", "did_had(...)")),
    did_had = rbind(dd_step(3, "parallel_trends", "The pretests (QUG, Stute, Yatchew)",
                            "Test the design's assumptions before reading the effect.", "summary(fit)"),
                    dd_step(6, "sensitivity", "Bandwidth", "Check that the effect is stable across bandwidths.",
                            "update(fit, bandwidth = ...)", "medium")),
    did_ddd = rbind(dd_step(3, "parallel_trends", "The triple-difference assumption",
                            "Inspect the pre-period cell means of the four groups; there is no formal test.", "plot(fit)"),
                    hetero, covs),
    did_cic = rbind(dd_step(6, "placebo", "Placebo on two pre-periods",
                            "Refit with both periods before treatment: the quantile effects should be flat at zero.",
                            "did_cic(...)", "medium"),
                    dd_step(7, "heterogeneity", "The quantile-effect profile", "Read the effects across quantiles.",
                            "plot(fit)"), covs),
    did_dcdh = rbind(dd_step(3, "parallel_trends", "The placebo estimates",
                             "did_dcdh's placebos test parallel trends before each switch.", "summary(fit)"), honest, compare),
    rd_robust = rbind(dd_step(3, "parallel_trends", "Manipulation of the running variable",
                              "Test for a jump in the density at the cutoff.", "rd_density(data, xname, c = ...)"),
                      dd_step(6, "sensitivity", "Bandwidths and polynomial order",
                              "The estimate should not depend on one bandwidth or order.", "update(fit, h = ...)", "medium"),
                      dd_step(6, "placebo", "Placebo cutoffs and covariates",
                              "No jump at fake cutoffs or in predetermined covariates.", "rd_robust(data, covariate, xname, c = ...)",
                              "medium")),
    bacon_decomp = dd_step(4, "estimator_selection", "Use a heterogeneity-robust estimator",
                           "TWFE's comparisons include already-treated units as controls.",
                           "did_cs(data, yname, idname, tname, gname)"),
    rbind(pt_gen, dd_step(6, "sensitivity", "Sensitivity analysis", "HonestDiD bounds or placebo tests.",
                          "honest_did(...); placebo_test(fit)"), compare))
}

#' @export
print.dd_next_steps <- function(x, ...) {
  dd_check_dots(list(...), "print()")
  cat(sprintf("Next steps after %s (Baker et al. 2025's recipe)\n", x$estimator))
  if (length(x$warnings)) cat(paste0("Warning: ", x$warnings, "\n"), sep = "")
  if (!nrow(x$steps)) { cat("Every step of the recipe is marked done.\n"); return(invisible(x)) }
  for (i in seq_len(nrow(x$steps))) {
    s <- x$steps[i, ]
    cat(sprintf("\n[%s] Step %d: %s\n", toupper(s$priority), s$step, s$label))
    cat(strwrap(s$why, indent = 4, exdent = 4), sep = "\n")
    cat(sprintf("    %s\n", s$code))
  }
  cat(sprintf("\nDone: %s\n", if (length(x$completed)) paste(x$completed, collapse = ", ") else "none"))
  invisible(x)
}
