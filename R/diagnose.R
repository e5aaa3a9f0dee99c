#' Run the diagnostics a fit admits, in one object
#'
#' The checks of diff-diff's `DiagnosticReport` that apply to the fit, each
#' with a status (`"ran"`, `"skipped"` with the reason, `"error"` with the
#' message: one failing check does not stop the others) and a headline:
#'
#' * **parallel_trends**: the joint Wald test that every pre-treatment
#'   event-time estimate is zero (chi-squared), from the fit's event study (or
#'   `aggregate(fit, "dynamic")` for the fits on did_cs's cells; a singular
#'   covariance on its rank, through its pseudo-inverse). Verdict by
#'   the p-value: below 0.05 `"clear_violation"`, below 0.30
#'   `"some_evidence_against"`, else `"no_detected_violation"`.
#' * **pretrends_power**: the linear pre-trend slope detected with 80%
#'   power ([pretrends_power()]), relative to the overall estimate: below
#'   0.25 `"well_powered"`, below 1 `"moderately_powered"`, else
#'   `"underpowered"`.
#' * **sensitivity**: [honest_did()] with relative magnitudes `Mbar` = 0.5,
#'   1, 1.5, 2 on the first post-treatment period: the robust intervals and
#'   the breakdown value; `"robust_over_grid"`, `"robust_to_M_x"` (a
#'   breakdown of at least 1) or `"fragile"`.
#' * **heterogeneity**: the spread of the post-treatment ATT(g,t) (or event
#'   time) estimates: range, standard deviation, coefficient of variation and
#'   whether they share a sign.
#' * **design_effect**: with a survey design, the design effects
#'   ([dd_deff()]).
#' * **bacon**: the Goodman-Bacon decomposition ([bacon_decomp()]) of the
#'   two-way fixed-effects coefficient on the fit's own panel (its rows,
#'   outcome, units, periods and treatment timing, as the estimator validated
#'   them): the share of the weight on "later vs earlier treated" comparisons
#'   (already-treated units as controls). Verdict: above 0.10
#'   `"material_forbidden_weight"`, above 0.01 `"some_forbidden_weight"`,
#'   else `"negligible_forbidden_weight"`. For a two-way fixed-effects fit
#'   this is a statement about the estimate; for a heterogeneity-robust
#'   estimator it describes the rollout (what a TWFE regression would have
#'   mixed). It needs the data (`data`, or the fit's `data` argument found
#'   from `envir`), a balanced panel with staggered timing, and an
#'   estimator that [placebo_test()] can re-run.
#'
#' There is no pass/fail verdict (as diff-diff). `next_steps` are the first
#' five of [dd_next_steps()] with the checks that ran marked done.
#'
#' @param fit A diffdiff fit.
#' @param alpha Level of the tests and intervals (default the fit's).
#' @param data The data the fit was estimated on, for the Bacon check
#'   (`NULL`: the fit's call's `data`, evaluated in `envir`).
#' @param bacon Run the Bacon check (`TRUE`, the default; it re-runs the
#'   estimator once, without bootstrap, to rebuild its panel).
#' @param envir Where the fit's call is evaluated (default: the caller's
#'   frame).
#' @return An object of class `dd_diagnosis`: `estimator`, `checks` (a data
#'   frame: check, status, verdict, headline, reason), the sections
#'   (`parallel_trends`, `pretrends_power`, `sensitivity`, `heterogeneity`,
#'   `design_effect`, `bacon`), `interpretation` (a paragraph) and
#'   `next_steps`. Methods print, tidy and plot (the event study with the
#'   pre-trend test, the HonestDiD intervals and the Bacon weights, in one
#'   figure).
#' @examples
#' d <- read.csv(system.file("extdata", "sim_panel.csv", package = "diffdiff"))
#' fit <- did_cs(d, "y", "id", "year", "first_treat", nboot = 0, base_period = "universal")
#' dd_diagnose(fit)
#' @export
dd_diagnose <- function(fit, alpha = NULL, data = NULL, bacon = TRUE, envir = parent.frame()) {
  if (!inherits(fit, "dd_fit")) dd_stop("`fit` must be a diffdiff fit; got %s.", dd_show(class(fit)[1]))
  alpha <- if (is.null(alpha)) fit$alpha %||% 0.05 else dd_check_alpha(alpha)
  dd_check_flag(bacon, "bacon")
  if (!is.null(data)) dd_check_data(data)
  if (!is.environment(envir)) dd_stop("`envir` must be an environment; got %s.", dd_show(class(envir)[1]))
  dd_diagnose_run(fit, alpha, if (bacon) dd_fit_panel_df(fit, data, envir))
}

# The checks; pd: the fit's panel (dd_fit_panel_df(): a list, or the reason
# it could not be rebuilt), NULL when the Bacon check is not requested.
# dd_report() passes the panel it builds once for all its sections.
dd_diagnose_run <- function(fit, alpha, pd) {
  est <- class(fit)[1]
  reg <- dd_estimators()
  agg <- reg$aggregate[match(est, reg$name)]
  es <- if (!is.null(fit$event_study)) fit
        else if (identical(agg, "did_cs_agg")) tryCatch(suppressWarnings(aggregate(fit, "dynamic")), error = function(e) NULL)
        else NULL
  overall <- dd_diag_overall(fit)
  # each check's warnings are kept with it (printed), its error becomes its status
  run <- function(f) {
    ws <- character()
    r <- tryCatch(withCallingHandlers(f(), warning = function(w) {
      ws <<- c(ws, conditionMessage(w)); invokeRestart("muffleWarning")
    }), error = function(e) list(status = "error", reason = conditionMessage(e)))
    r$warnings <- unique(ws)
    r
  }
  no_es <- list(status = "skipped", reason = "the fit has no event study (no pre-treatment event times)")
  pt <- if (is.null(es)) no_es else run(function() dd_diag_pt(es))
  pw <- if (is.null(es)) no_es else run(function() dd_diag_power(es, overall, alpha))
  hs <- if (is.null(es)) no_es else run(function() dd_diag_honest(es, alpha))
  ht <- run(function() dd_diag_hetero(fit))
  de <- if (inherits(fit$unit_cluster, "dd_svy_rows")) run(function() dd_diag_deff(fit))
        else list(status = "skipped", reason = "no survey design")
  bc <- if (is.null(pd)) list(status = "skipped", reason = "not requested (bacon = FALSE)")
        else run(function() dd_diag_bacon(fit, pd))
  secs <- list(parallel_trends = pt, pretrends_power = pw, sensitivity = hs, heterogeneity = ht, design_effect = de,
               bacon = bc)
  checks <- data.frame(check = names(secs), status = vapply(secs, function(s) s$status %||% "ran", ""),
                       verdict = vapply(secs, function(s) s$verdict %||% NA_character_, ""),
                       headline = vapply(secs, function(s) s$headline %||% NA_character_, ""),
                       reason = vapply(secs, function(s) s$reason %||% NA_character_, ""), stringsAsFactors = FALSE)
  rownames(checks) <- NULL
  ran <- checks$check[checks$status == "ran"]
  done <- c(character(), if ("parallel_trends" %in% ran) "parallel_trends", if ("sensitivity" %in% ran) "sensitivity",
            if ("heterogeneity" %in% ran) "heterogeneity")
  ns <- dd_next_steps(fit, completed = done)
  out <- c(list(estimator = est, alpha = alpha, overall = overall, checks = checks), secs,
           list(next_steps = utils::head(ns$steps, 5L), event_study = es))
  out$interpretation <- dd_diag_text(out, fit)
  structure(out, class = "dd_diagnosis")
}

# the headline estimate: the overall ATT (aggregate "simple" for the cell fits)
dd_diag_overall <- function(fit) {
  tab <- fit$coeftable
  i <- match("ATT", tab$term)
  if (is.na(i) && !is.null(fit$event_study)) {
    # an event study: the mean of the post-treatment estimates
    post <- fit$event_study$term[fit$event_study$event >= 0]
    post <- post[post %in% tab$term & is.finite(tab$estimate[match(post, tab$term)])]
    if (length(post)) {
      lc <- dd_lincom(tab$estimate[match(post, tab$term)], as.matrix(stats::vcov(fit))[post, post, drop = FALSE],
                      matrix(1 / length(post), 1L, length(post)), "mean")
      est <- lc$estimate[[1]]; se <- sqrt(lc$vcov[1, 1])
      z <- stats::qnorm(1 - (fit$alpha %||% 0.05) / 2)
      return(list(term = "mean of the post-treatment event-time estimates", estimate = est, std.error = se,
                  p.value = 2 * stats::pnorm(-abs(est / se)), conf.low = est - z * se, conf.high = est + z * se))
    }
  }
  if (is.na(i)) {
    a <- tryCatch(suppressWarnings(aggregate(fit, "simple")), error = function(e) NULL)
    if (!is.null(a) && nrow(a$coeftable)) return(as.list(a$coeftable[1, c("term", "estimate", "std.error", "p.value", "conf.low", "conf.high")]))
    i <- match(fit$main_terms[1], tab$term)
    if (is.na(i)) i <- 1L
  }
  as.list(tab[i, c("term", "estimate", "std.error", "p.value", "conf.low", "conf.high")])
}

dd_diag_pre <- function(es) {
  ev <- es$event_study
  tab <- es$coeftable[match(ev$term, es$coeftable$term), , drop = FALSE]
  pre <- ev$event < 0 & !is.na(tab$estimate)
  list(tab = tab[pre, , drop = FALSE], event = ev$event[pre])
}

dd_diag_pt <- function(es) {
  p <- dd_diag_pre(es)
  k <- nrow(p$tab)
  if (!k) return(list(status = "skipped", reason = "no pre-treatment event times"))
  V <- as.matrix(stats::vcov(es))[p$tab$term, p$tab$term, drop = FALSE]
  if (!all(is.finite(V))) return(list(status = "skipped", reason = "the pre-treatment estimates' covariance is not finite"))
  # the package's Wald test (a singular covariance: its pseudo-inverse, on its rank)
  wd <- dd_wald(p$tab$estimate, V)
  W <- wd$statistic * wd$df1; pv <- wd$p.value; k <- wd$df1
  method <- "joint Wald (chi-squared)"
  verdict <- if (pv < 0.05) "clear_violation" else if (pv < 0.30) "some_evidence_against" else "no_detected_violation"
  list(status = "ran", statistic = W, df = k, p.value = pv, method = method, verdict = verdict,
       headline = sprintf("%s of %d pre-treatment estimates: p = %s", method, k, format.pval(pv, digits = 3)))
}

dd_diag_power <- function(es, overall, alpha) {
  if (nrow(dd_diag_pre(es)$tab) < 2L) return(list(status = "skipped", reason = "fewer than 2 pre-treatment event times"))
  p <- pretrends_power(es, power = 0.8, alpha = alpha)
  ratio <- abs(p$slope) / abs(overall$estimate)
  tier <- if (!is.finite(ratio)) "unknown" else if (ratio < 0.25) "well_powered" else if (ratio < 1) "moderately_powered"
          else "underpowered"
  list(status = "ran", slope = p$slope, ratio = ratio, verdict = tier,
       headline = sprintf("a linear pre-trend of slope %s per period is detected with 80%% power (%.2f of the estimate)",
                          format(p$slope, digits = 3), ratio))
}

dd_diag_honest <- function(es, alpha) {
  if (!nrow(dd_diag_pre(es)$tab)) return(list(status = "skipped", reason = "no pre-treatment event times"))
  h <- honest_did(es, type = "RM", Mbar = c(0.5, 1, 1.5, 2), alpha = alpha)
  bd <- h$breakdown
  verdict <- if (is.na(bd) || bd >= max(h$results$Mbar)) "robust_over_grid" else if (bd >= 1) "robust_to_M_x" else "fragile"
  list(status = "ran", results = h$results, breakdown = bd, verdict = verdict, honest = h,
       headline = sprintf("HonestDiD (relative magnitudes): the robust interval excludes 0 up to Mbar = %s",
                          format(bd, digits = 3)))
}

dd_diag_hetero <- function(fit) {
  tab <- fit$coeftable
  post <- if (!is.null(tab$group) && !is.null(tab$time)) tab[!is.na(tab$group) & tab$time >= tab$group, , drop = FALSE]
          else if (!is.null(fit$event_study)) tab[match(fit$event_study$term[fit$event_study$event >= 0], tab$term), , drop = FALSE]
          else NULL
  if (is.null(post)) return(list(status = "skipped", reason = "the fit has no group-time or event-time estimates"))
  v <- post$estimate[is.finite(post$estimate)]
  if (length(v) < 2L) return(list(status = "skipped", reason = "fewer than 2 post-treatment estimates"))
  s <- stats::sd(v); m <- mean(v)
  same <- all(v > 0) || all(v < 0)
  list(status = "ran", n = length(v), min = min(v), max = max(v), mean = m, sd = s,
       cv = if (abs(m) > 0.1 * s) s / abs(m) else NA_real_, same_sign = same,
       verdict = if (same) "same_sign" else "mixed_signs",
       headline = sprintf("%d post-treatment estimates from %s to %s (%s)", length(v), format(min(v), digits = 3),
                          format(max(v), digits = 3), if (same) "all of one sign" else "of both signs"))
}

dd_diag_deff <- function(fit) {
  d <- dd_deff(fit)
  mx <- max(d$deff, na.rm = TRUE)
  band <- if (mx < 0.95) "improves_precision" else if (mx < 1.05) "trivial" else if (mx < 2) "slightly_reduces"
          else if (mx < 5) "materially_reduces" else "large_warning"
  list(status = "ran", table = d, verdict = band,
       headline = sprintf("design effects %s to %s", format(min(d$deff, na.rm = TRUE), digits = 3), format(mx, digits = 3)))
}

# The fit's validated panel as a data frame (the rows, outcome, units,
# periods and first treated period the estimator used), rebuilt as
# placebo_test() does; a string (the reason) when it cannot be
dd_fit_panel_df <- function(fit, data, envir) {
  est <- fit$estimator
  if (!est %in% dd_placebo_estimators)
    return(sprintf("%s's panel cannot be rebuilt (not an estimator placebo_test() re-runs)", est))
  if (!is.null(fit$db)) return("estimated on a database table")
  cl <- fit$call
  if (is.null(cl) || !is.null(cl$survey)) return("the fit has a survey design")
  cl[[1L]] <- as.name(est)
  env <- new.env(parent = envir)
  assign(est, get(est, envir = asNamespace("diffdiff")), envir = env)
  if (!is.null(data)) { assign(".dd_diag_data", data, envir = env); cl$data <- as.name(".dd_diag_data") }
  pan <- tryCatch(dd_placebo_capture(dd_placebo_cheap(cl, est, point_only = TRUE), env)$pan,
                  error = function(e) e)
  if (inherits(pan, "error"))
    return(sprintf("the fit's panel could not be rebuilt (pass `data`): %s", conditionMessage(pan)))
  u <- tryCatch(dd_placebo_units(pan), error = function(e) e)
  if (inherits(u, "error")) return(conditionMessage(u))
  nm <- c(y = fit$yname %||% "y", id = pan$key$idname %||% "id", t = pan$key$tname %||% "t", g = if (!is.null(pan$g)) pan$key$role[["gname"]] %||% "first_treated" else "first_treated")
  nm <- make.unique(unname(nm))
  d <- data.frame(pan$id, as.double(pan$tt), pan$y, u$G[pan$idc + 1L])
  names(d) <- nm[c(2, 3, 1, 4)]
  list(data = d, yname = nm[1], idname = nm[2], tname = nm[3], gname = nm[4], balanced = isTRUE(pan$balanced),
       tlev = u$tlev)
}

# The Goodman-Bacon decomposition on the fit's validated panel
dd_diag_bacon <- function(fit, pd) {
  if (is.character(pd)) return(list(status = "skipped", reason = pd))
  if (!pd$balanced) return(list(status = "skipped", reason = "the panel is unbalanced (the decomposition needs a balanced panel)"))
  G <- pd$data[[pd$gname]]
  Gc <- G[is.finite(G) & G > min(pd$tlev) & G <= max(pd$tlev)]
  if (length(unique(Gc)) < 2L)
    return(list(status = "skipped", reason = "fewer than two treatment-timing cohorts (no staggered timing to decompose)"))
  b <- bacon_decomp(pd$data, pd$yname, pd$idname, pd$tname, gname = pd$gname)
  tb <- b$two_by_twos
  w_late <- sum(tb$weight[tb$type == "Later vs Earlier Treated"])
  verdict <- if (w_late > 0.10) "material_forbidden_weight" else if (w_late > 0.01) "some_forbidden_weight"
             else "negligible_forbidden_weight"
  twfe <- fit$estimator %in% c("did_twfe", "did_event")
  list(status = "ran", decomposition = b, forbidden_weight = w_late, beta_twfe = b$beta_twfe, verdict = verdict,
       about = if (twfe) "estimate" else "rollout",
       headline = sprintf("%.1f%% of the TWFE weight on later- vs earlier-treated comparisons (TWFE coefficient %s)",
                          100 * w_late, format(b$beta_twfe, digits = 4)))
}

dd_diag_text <- function(x, fit) {
  o <- x$overall
  s <- sprintf("The estimate (%s) is %s (%g%% CI %s to %s, p = %s).", o$term, format(o$estimate, digits = 4),
               100 * (1 - x$alpha), format(o$conf.low, digits = 4), format(o$conf.high, digits = 4),
               format.pval(o$p.value, digits = 3))
  pt <- x$parallel_trends; pw <- x$pretrends_power; hs <- x$sensitivity
  if (identical(pt$status, "ran")) {
    pow <- if (identical(pw$status, "ran")) pw$verdict else "unknown"
    s <- c(s, switch(pt$verdict,
      clear_violation = "The pre-treatment estimates reject parallel trends: treat the estimate as tentative.",
      some_evidence_against = "The pre-treatment estimates give some evidence against parallel trends.",
      if (pow == "well_powered") "The pre-treatment estimates are consistent with parallel trends, and the test would probably have detected a meaningful pre-trend."
      else if (pow == "moderately_powered") "Parallel trends is not rejected; the test is moderately informative."
      else "Parallel trends is not rejected, but the test has little power: the non-rejection proves little."))
  }
  if (identical(hs$status, "ran"))
    s <- c(s, switch(hs$verdict,
      robust_over_grid = "The conclusion survives post-treatment violations up to twice the largest pre-treatment one (HonestDiD).",
      robust_to_M_x = sprintf("The conclusion survives post-treatment violations up to %s times the largest pre-treatment one (HonestDiD).",
                              format(hs$breakdown, digits = 3)),
      "The conclusion does not survive post-treatment violations as large as the pre-treatment ones (HonestDiD breakdown below 1)."))
  bc <- x$bacon
  if (identical(bc$status, "ran") && bc$verdict != "negligible_forbidden_weight")
    s <- c(s, if (bc$about == "estimate")
      sprintf("%.0f%% of this TWFE coefficient's weight compares later- with already-treated units: it is biased when effects change over time; prefer a heterogeneity-robust estimator.", 100 * bc$forbidden_weight)
      else sprintf("A TWFE regression on these data would put %.0f%% of its weight on comparisons with already-treated units; this estimator avoids them.", 100 * bc$forbidden_weight))
  if (nrow(x$next_steps)) s <- c(s, sprintf("Next step: %s.", x$next_steps$label[1]))
  paste(s, collapse = " ")
}

#' @export
print.dd_diagnosis <- function(x, ...) {
  dd_check_dots(list(...), "print()")
  cat(sprintf("Diagnostics of a %s fit\n\n", x$estimator))
  for (i in seq_len(nrow(x$checks))) {
    r <- x$checks[i, ]
    cat(sprintf("%-16s %-8s %s\n", r$check, r$status,
                if (r$status == "ran") sprintf("%s [%s]", r$headline, r$verdict) else r$reason))
  }
  ws <- unique(unlist(lapply(x[x$checks$check], `[[`, "warnings")))
  if (length(ws)) cat(paste0("Warning: ", ws), sep = "\n")
  cat("\n"); cat(strwrap(x$interpretation), sep = "\n")
  invisible(x)
}

#' @export
tidy.dd_diagnosis <- function(x, ...) {
  dd_check_dots(list(...), "tidy()")
  x$checks
}

#' @rdname dd_diagnose
#' @param x A `dd_diagnosis`.
#' @param which The panels to draw, of those whose check ran: `"event_study"`
#'   (the event study, titled with the pre-trend test), `"sensitivity"`
#'   (the HonestDiD intervals over `Mbar`) and `"bacon"` (the 2x2
#'   estimates against their weights). One row of panels.
#' @param ... Unused (an error if given).
#' @export
plot.dd_diagnosis <- function(x, which = c("event_study", "sensitivity", "bacon"), ...) {
  dd_check_dots(list(...), "plot()")
  if (!is.character(which) || !length(which) || anyNA(which) ||
      length(bad <- setdiff(which, c("event_study", "sensitivity", "bacon"))))
    dd_stop("`which` must be some of \"event_study\", \"sensitivity\", \"bacon\"; got %s.", dd_show(which))
  ran <- function(s) identical(x[[s]]$status, "ran")
  panels <- which[vapply(which, function(w) switch(w, event_study = !is.null(x$event_study),
                                                   sensitivity = ran("sensitivity"), bacon = ran("bacon")), NA)]
  if (!length(panels))
    dd_stop("none of the panels in `which` (%s) can be drawn: the fit has no event study, and the sensitivity and Bacon checks did not run.",
            dd_show(which))
  op <- graphics::par(mfrow = c(1L, length(panels)))
  on.exit(graphics::par(op))
  for (w in panels) switch(w,
    event_study = {
      pt <- x$parallel_trends
      graphics::plot(x$event_study, main = if (ran("parallel_trends"))
        sprintf("Event study (pre-trends: p = %s)", format.pval(pt$p.value, digits = 2)) else "Event study")
    },
    sensitivity = graphics::plot(x$sensitivity$honest,
                                 main = sprintf("HonestDiD (breakdown Mbar = %s)", format(x$sensitivity$breakdown, digits = 3))),
    bacon = graphics::plot(x$bacon$decomposition, main = sprintf("Bacon: %.0f%% later vs earlier", 100 * x$bacon$forbidden_weight)))
  invisible(x)
}
