# Placebo and robustness tests by re-estimation: placebo_test().
#
# Every test re-runs the fit's own estimator call on a redrawn treatment:
# the panel is validated once (the call is evaluated with dd_reuse$capture
# on, and the panel that dd_panel() builds is kept), and each draw hands
# dd_panel() that panel with new first-treated periods and, where the test
# drops units or periods, a subset of its rows (dd_reuse$panel), so no draw
# reads or checks the data again. Treatment is redrawn at the unit level as
# a first-treated period G (0: never treated): from `gname`, or from an
# absorbing 0/1 `dname`, which is rebuilt as t >= G.

# The estimators whose fits placebo_test() re-runs (dd_placebo_estimators)
# and the classes whose effect is their simple aggregate
# (dd_placebo_aggregated) come from the registry (R/estimators.R).

#' Placebo and robustness tests by re-estimation
#'
#' Re-runs the estimator that produced `fit` on redrawn treatments:
#' \describe{
#'   \item{`"timing"`}{Fake adoption dates in the pre-period: only the periods
#'     before `cutoff` (default: the last adoption period) are kept, units
#'     treated before it are dropped, and the remaining treated units are
#'     assigned the adoption date `shift` periods before their true one (a
#'     unit whose fake date is not before `cutoff` is untreated in the window
#'     and serves as a comparison). The fit on this data estimates an effect
#'     that is zero under parallel trends and no anticipation; its
#'     standard error uses the fit's own inference settings. With fewer
#'     than two fake-treated units (or clusters, for a clustered fit) the
#'     test is refused: the error names the `cutoff` that gives the most
#'     (on the castle panel, the default leaves the one state adopting in
#'     2009; `cutoff = 2006` gives 13). The result records the numbers of
#'     fake-treated units (`n_fake_treated`), their clusters
#'     (`n_fake_clusters`) and comparison units (`n_comparison`), and
#'     print() shows them.}
#'   \item{`"group"`}{Fake treated groups among the never-treated units: the
#'     treated units are dropped, and in each of `ndraws` draws `n_treated`
#'     never-treated units (default: the treated share of the units) get
#'     adoption dates drawn from the treated units' dates. Reports each
#'     draw's estimate and p-value and the share of draws rejecting at
#'     `alpha`, which should be close to `alpha`.}
#'   \item{`"permutation"`}{Randomisation inference: the units' treatment
#'     (first treated period) is permuted across units `nperm` times and the
#'     statistic \eqn{S} recomputed (by default the studentised \eqn{S =
#'     |\hat\theta / se|}; see `statistic` and "The permutation statistic"
#'     below); the p-value is the share of permuted statistics at least as
#'     large as the observed one, counting the observed assignment, \eqn{(1 +
#'     \#\{S_b \ge S\}) / (1 + m)} over the \eqn{m} permutations that give a
#'     statistic. When `nperm` equals the number of distinct assignments, all
#'     of them are enumerated and the p-value is \eqn{\#\{S_b \ge S\} / m}
#'     (the observed assignment is one of them).}
#'   \item{`"leave_one_out"`}{Re-estimation without each treated unit
#'     (`by = "unit"`) or each treated cohort (`by = "cohort"`).}
#' }
#' The effect tested (its label is the result's `statistic`) is the fit's
#' overall effect: its `ATT` row; for group-time
#' estimators (did_cs, did_edid, did_etwfe, did_ddd) the simple aggregate
#' (`aggregate(fit, "simple")`); for an event study without an `ATT` row
#' the mean of the event-time coefficients at e >= 0 (standard error from
#' their covariance); or the coefficient named by `term`.
#'
#' **The permutation statistic** (`statistic`, used by `type =
#' "permutation"` only). A permutation test compares the observed statistic
#' with its values over re-assignments of the treatment, so it is exact only
#' when every permuted assignment was as likely as the observed one to have
#' produced the data, i.e. when the units are exchangeable under the null.
#' \describe{
#'   \item{`"t"` (default)}{\eqn{S = |\hat\theta / se|}, the estimate
#'     divided by its standard error from the same (cheap, analytic) variance
#'     the draws use, computed anew for the observed assignment so that the
#'     observed and permuted statistics are the same function of the data.
#'     It is exact under the sharp null (no effect on any unit) with
#'     treatment assigned completely at random, like any statistic, and it
#'     stays valid asymptotically (many treated and control units) when the
#'     units' error distributions differ, e.g. when the treated units have
#'     a larger error variance, provided the standard error is robust to that
#'     (the default clustered standard errors of the regression estimators
#'     are; `vcov = "iid"` is not): a studentised statistic is asymptotically
#'     pivotal (Chung and Romano 2013). With very few treated units neither
#'     statistic is reliable (MacKinnon and Webb 2020).}
#'   \item{`"estimate"`}{\eqn{S = |\hat\theta|}, the raw estimate (the
#'     only statistic of earlier versions). Valid only when the treated and the
#'     placebo (permuted) assignments are exchangeable with equal error
#'     distributions across units: permuting pools the high- and
#'     low-variance units, so when the treated units are noisier the
#'     permutation distribution is too narrow and the test over-rejects
#'     (several times the nominal level in simulations where the treated
#'     units' errors have a larger variance; `"t"` stays near it). It needs no standard error per
#'     draw, so it is the cheaper choice for estimators whose standard error
#'     is a bootstrap (did_trop) or a jackknife (did_sdid).}
#' }
#' A permutation whose estimate or standard error is missing, infinite or
#' (for `"t"`) a standard error of zero gives no statistic: it is kept in
#' `draws` (with `statistic` `NA`), left out of the p-value, counted in
#' `n_no_statistic`, and a warning says how many; if the observed assignment
#' gives no statistic, `placebo_test()` stops. The other types compare no
#' statistic across draws: `"timing"` is one fit with its own test,
#' `"group"` reports each draw's own test (its p-value, i.e. its t test) and
#' their rejection rate (a draw without a p-value is left out of the rate,
#' counted in `n_no_statistic` and warned about), and `"leave_one_out"`
#' reports estimates; for them
#' `statistic = "estimate"` is an error, and `test_statistic` is `NA`.
#'
#' Draws re-use the validated panel: the data are checked once, and each
#' draw changes only the treatment (and, for `"timing"`, `"group"` and
#' `"leave_one_out"`, which rows are kept). Draws skip the bootstrap
#' (`nboot = 0`, analytic standard errors; did_sdid: jackknife, or none for
#' permutations with `statistic = "estimate"`, which need only the
#' estimate; did_trop, whose only standard error is its bootstrap, keeps it
#' with the fit's `nboot` except for permutations with `statistic =
#' "estimate"`, so a did_trop fit with `nboot = 0` needs `statistic =
#' "estimate"`). A draw whose estimator stops
#' with an error (e.g. a permuted cohort without comparison units) is
#' counted and left out, with a warning. The draws run on the workers of
#' the caller's [future::plan()] when one other than sequential is set, with
#' the numbers of the sequential run bit for bit: every draw runs under its
#' own seed, drawn from the caller's stream after the redrawn treatments (so
#' a draw that resamples, did_trop's bootstrap, does not depend on the plan).
#' Fits with a survey design, did_2x2
#' (no panel), and estimators with reversible or continuous treatments
#' (did_dcdh, did_dose, did_had) are not supported.
#'
#' @param fit A fit from one of the panel estimators (did_twfe, did_event,
#'   did_sa, did_bjs, did_gardner, did_stacked, did_lpdid, did_lwdid, did_cs, did_sdid, did_etwfe,
#'   did_edid, did_rs, did_ddd, did_trop).
#' @param type `"timing"`, `"group"`, `"permutation"` or `"leave_one_out"`.
#' @param data The data the fit was estimated on (default: the fit's call's
#'   `data`, evaluated where `placebo_test()` is called).
#' @param term The coefficient to test (default: the overall effect, above).
#' @param shift,cutoff `"timing"`: periods by which adoption is moved earlier
#'   (a whole number >= 1), and the first period left out (default: the last
#'   adoption period).
#' @param ndraws,n_treated `"group"`: number of draws and fake treated units
#'   per draw.
#' @param nperm `"permutation"`: number of permutations.
#' @param statistic `"permutation"`: the statistic compared across
#'   permutations, `"t"` (default: the absolute t statistic
#'   \eqn{|\hat\theta / se|}) or `"estimate"` (the absolute estimate,
#'   the default before; valid only with equal error distributions across
#'   units). See "The permutation statistic".
#' @param by `"leave_one_out"`: `"unit"` or `"cohort"`.
#' @param alpha Level of the tests reported.
#' @param envir Environment in which the fit's call is evaluated.
#' @return An object of class `dd_placebo`: `type`, `statistic` (the label
#'   of the effect tested), `estimate` (the fit's estimate of it; for
#'   `"timing"`, the placebo estimate), `std.error`, `p.value`, `draws` (a
#'   data frame: `draw`, `estimate`, `std.error`, `p.value`, and the unit or
#'   cohort left out; for `"permutation"` also `statistic`, the signed
#'   statistic \eqn{\hat\theta_b / se_b} or \eqn{\hat\theta_b} of each
#'   permutation), `failed` (draws that stopped with an error), the settings,
#'   and for `"timing"` the placebo `fit`. For `"permutation"` also
#'   `test_statistic` (`"t"` or `"estimate"`; `NA` for the other types),
#'   `observed_statistic` (the signed observed statistic the permutations are
#'   compared with) and `n_no_statistic` (permutations without a statistic,
#'   left out; for `"group"`, draws without a p-value, left out of
#'   `rejection_rate`). It has `print()` and `plot()` methods.
#' @references Chung, E. and Romano, J. P. (2013). Exact and asymptotically
#'   robust permutation tests. *The Annals of Statistics* 41(2), 484-507.
#'
#'   MacKinnon, J. G. and Webb, M. D. (2020). Randomization inference for
#'   difference-in-differences with few treated clusters. *Journal of
#'   Econometrics* 218(2), 435-450.
#' @examples
#' set.seed(3)
#' d <- dd_sim_staggered(n_units = 60, n_periods = 6, effect = 1)
#' fit <- did_cs(d, "y", "id", "time", "first_treat", nboot = 0)
#' placebo_test(fit, "timing", data = d)
#' pt <- placebo_test(fit, "permutation", data = d, nperm = 49)
#' pt
#' plot(pt)
#' placebo_test(fit, "leave_one_out", data = d, by = "cohort")
#' @export
placebo_test <- function(fit, type = c("timing", "group", "permutation", "leave_one_out"), data = NULL,
                         term = NULL, shift = 1, cutoff = NULL, ndraws = 100, n_treated = NULL, nperm = 999,
                         statistic = c("t", "estimate"), by = c("unit", "cohort"), alpha = 0.05,
                         envir = parent.frame()) {
  if (!inherits(fit, "dd_fit") || is.null(fit$call))
    dd_stop("`fit` must be a fit from a diffdiff estimator; got %s.", dd_show(class(fit)))
  est <- fit$estimator
  if (!is.null(fit$db))
    dd_stop("`fit` was estimated on a database table; placebo_test() redraws treatment on the validated panel in memory. collect() the table and refit to run placebo tests.",
            .code = "NEEDS_MEMORY")
  if (!est %in% dd_placebo_estimators)
    dd_stop("`fit` comes from %s, which placebo_test() does not support; it re-runs the panel estimators %s (pass the estimator's fit, not an aggregate()).",
            if (grepl("_agg$", class(fit)[1])) "aggregate()" else paste0(est, "()"),
            paste(dd_placebo_estimators, collapse = ", "))
  type <- dd_match_arg(type[1], c("timing", "group", "permutation", "leave_one_out"), "type")
  statistic <- dd_match_arg(statistic[1], c("t", "estimate"), "statistic")
  if (type != "permutation" && statistic == "estimate")
    dd_stop("`statistic` = \"estimate\" applies to type = \"permutation\" only; type = \"%s\" compares no statistic across draws (%s).",
            type, switch(type, timing = "it is one fit with its own test",
                         group = "each draw is judged by its own test, its p-value",
                         leave_one_out = "it reports the estimates"))
  alpha <- dd_check_alpha(alpha)
  if (!is.null(term) && (!is.character(term) || length(term) != 1L || !term %in% fit$coeftable$term))
    dd_stop("`term` = %s is not a coefficient of the fit (%s).", dd_show(term),
            dd_show(fit$coeftable$term, max = 6L))
  cl <- fit$call
  cl[[1L]] <- as.name(est)
  if (!is.null(cl$survey))
    dd_stop("`fit` has a survey design (`survey`); placebo_test() re-draws units, which would break the design's strata and PSUs. Refit without `survey` (with `weightsname`) to run placebo tests.")
  env <- new.env(parent = envir)
  assign(est, get(est, envir = asNamespace("diffdiff")), envir = env)
  if (!is.null(data)) {
    dd_check_data(data)
    assign(".dd_placebo_data", data, envir = env)
    cl$data <- as.name(".dd_placebo_data")
  }
  # the validated panel: built once, by the estimator itself, with its
  # cheapest inference (capture), then redrawn
  # (permutations compared by the raw estimate need no standard errors)
  cheap <- dd_placebo_cheap(cl, est, point_only = type == "permutation" && statistic == "estimate")
  cap <- dd_placebo_capture(cheap, env, keep_fit = type == "permutation")
  pan <- cap$pan
  u <- dd_placebo_units(pan)
  obs <- dd_placebo_stat(fit, term)
  res <- switch(type,
    timing = dd_placebo_timing(cl, env, pan, u, term, shift, cutoff),
    group = dd_placebo_group(cheap, env, pan, u, term, ndraws, n_treated, alpha),
    permutation = dd_placebo_perm(cheap, env, pan, u, term, nperm, dd_placebo_stat(cap$fit, term), statistic),
    leave_one_out = dd_placebo_loo(cheap, env, pan, u, term, by))
  out <- c(list(type = type, estimator = est, statistic = obs$label,
                test_statistic = if (type == "permutation") statistic else NA_character_, alpha = alpha), res)
  if (type != "timing") {
    out$estimate <- obs$est; out$std.error <- obs$se
    if (is.null(out$p.value)) out$p.value <- obs$p
  }
  if (out$failed > 0L)
    warning(sprintf("placebo_test(): %d of %d draws stopped with an error (e.g. no comparison units) and were left out.",
                    out$failed, out$failed + nrow(out$draws)), call. = FALSE)
  if (type == "permutation" && out$n_no_statistic > 0L)
    warning(sprintf("placebo_test(): %d of %d permutations gave no %s (%s) and were left out of the p-value.",
                    out$n_no_statistic, nrow(out$draws),
                    if (statistic == "t") "t statistic" else "estimate",
                    if (statistic == "t") "missing, infinite or zero standard error, or a missing estimate"
                    else "a missing or infinite estimate"), call. = FALSE)
  if (type == "group" && out$n_no_statistic > 0L)
    warning(sprintf("placebo_test(): %d of %d draws gave no p-value (no standard error) and were left out of the rejection rate.",
                    out$n_no_statistic, nrow(out$draws)), call. = FALSE)
  structure(out, class = "dd_placebo")
}

# the call with the cheapest inference that still gives what a draw needs
dd_placebo_cheap <- function(cl, est, point_only) {
  fm <- names(formals(get(est, envir = asNamespace("diffdiff"))))
  if (est == "did_sdid") {
    cl$se <- if (point_only) "none" else "jackknife"
  } else if (est == "did_trop") {
    # its only standard error is the bootstrap: kept unless only the
    # estimate is needed; the tuning found by the fit is kept fixed
    if (point_only) cl$nboot <- 0L
  } else if ("nboot" %in% fm) cl$nboot <- 0L
  if ("cband" %in% fm) cl$cband <- FALSE
  if (est == "did_rs") cl$nperm <- 0L
  cl
}

# evaluate the call once, keeping the panel dd_panel() builds (and, with
# keep_fit, the fit: the observed assignment under the draws' settings)
dd_placebo_capture <- function(cl, env, keep_fit = FALSE) {
  dd_reuse$capture <- TRUE; dd_reuse$captured <- NULL
  on.exit({ dd_reuse$capture <- FALSE; dd_reuse$captured <- NULL })
  f <- suppressWarnings(suppressMessages(eval(cl, env)))   # the fit itself already warned
  pan <- dd_reuse$captured
  if (is.null(pan)) dd_stop("internal error: the fit's estimator built no panel; please report.")
  if (!is.null(pan$design))
    dd_stop("`fit` has a survey design; placebo_test() re-draws units, which would break the design. Refit without `survey`.")
  if (!isTRUE(pan$key$unique_rows))
    dd_stop("`fit` comes from repeated cross-sections (panel = FALSE); placebo_test() redraws treatment by unit and needs a panel.")
  list(pan = pan, fit = if (keep_fit) f)
}

# Unit-level treatment of the panel: G (first treated period, 0 never),
# the unit code of each row, and how the treatment is stored (gname / dname)
dd_placebo_units <- function(pan) {
  if (!is.numeric(pan$tt))
    dd_stop("`tname` = \"%s\" is not numeric; placebo_test() orders periods and needs numeric periods.", pan$key$tname)
  first <- dd_first_rows(pan$idc)
  tlev <- sort(unique(pan$tt))
  if (!is.null(pan$g)) {
    G <- pan$g[first]
    role <- "gname"
  } else if (!is.null(pan$vals$dname)) {
    d <- pan$vals$dname
    if (!all(d %in% c(0, 1)))
      dd_stop("`dname` = \"%s\" is not a 0/1 treatment indicator; placebo_test() redraws a binary treatment.",
              pan$key$role[["dname"]])
    ft <- dd_first_treated(d, pan$idc, pan$tt, length(first))
    dd_check_absorbing(ft, pan$key$role[["dname"]], pan$id, pan$tt, pan$idc,
                       "placebo_test() needs an absorbing treatment (once treated, always treated).")
    G <- dd_first_as_gname(ft, pan$key$role[["dname"]], pan$id, pan$idc)
    role <- "dname"
  } else dd_stop("internal error: the panel has no treatment (gname or dname); please report.")
  list(G = G, id = pan$id[first], role = role, tlev = tlev)
}

# The panel with unit-level first treated periods `G` (per unit code of
# `pan`), keeping the rows `keep` (NULL: all)
dd_placebo_redraw <- function(pan, G, keep = NULL) {
  Grow <- G[pan$idc + 1L]
  if (!is.null(pan$g)) {
    pan$g <- Grow; pan$never <- Grow == 0
    if (!is.null(pan$vals$gname)) pan$vals$gname <- Grow
  } else {
    d <- Grow > 0 & pan$tt >= Grow
    old <- pan$vals$dname
    pan$vals$dname <- if (is.logical(old)) d else if (is.integer(old)) as.integer(d) else as.numeric(d)
  }
  if (!is.null(keep) && !all(keep)) pan <- dd_panel_subset(pan, keep)
  pan
}

# the panel restricted to rows `keep` (logical), codes and counts rebuilt
dd_panel_subset <- function(pan, keep) {
  k <- which(keep)
  sub <- function(v) if (is.null(v)) NULL else if (is.matrix(v)) v[k, , drop = FALSE] else v[k]
  pan$y <- pan$y[k]
  pan$X <- if (is.list(pan$X) && !is.matrix(pan$X)) lapply(pan$X, sub) else sub(pan$X)
  pan$w <- sub(pan$w)
  pan$vals <- lapply(pan$vals, sub)
  pan$cluster <- lapply(pan$cluster, sub)
  pan$fe <- lapply(pan$fe, sub)
  pan$rows <- pan$rows[k]
  pan$id <- pan$id[k]; pan$tt <- pan$tt[k]
  pan$idc <- dd_codes(pan$id); pan$tc <- dd_codes(pan$tt)
  pan$cl <- if (!length(pan$cluster)) NULL else if (identical(names(pan$cluster)[1], pan$key$idname)) pan$idc
            else dd_codes(pan$cluster[[1]])
  pan$n_units <- attr(pan$idc, "nlev"); pan$n_periods <- attr(pan$tc, "nlev")
  pan$balanced <- length(pan$tt) == as.double(pan$n_units) * pan$n_periods
  if (!is.null(pan$g)) { pan$g <- pan$g[k]; pan$never <- pan$never[k] }
  pan
}

# One draw: the estimator on the redrawn panel; NULL when it stops. `args`
# are the call's arguments, evaluated once (dd_placebo_run), so that a draw
# needs nothing from the caller's environment and runs the same in this
# process and on a future worker.
dd_placebo_draw <- function(est, args, pan, term) {
  dd_reuse$panel <- pan
  on.exit(dd_reuse$panel <- NULL)
  fun <- get(est, envir = asNamespace("diffdiff"))
  f <- tryCatch(suppressWarnings(suppressMessages(do.call(fun, args))), error = function(e) NULL)
  if (is.null(f)) return(NULL)
  s <- tryCatch(dd_placebo_stat(f, term), error = function(e) NULL)
  if (is.null(s)) NULL else c(s$est, s$se, s$p)
}

# the function running draw b of `draws` (made here, so that it carries only
# what a draw needs to a future worker)
dd_placebo_worker <- function(est, args, pan, term, draws) {
  force(est); force(args); force(pan); force(term); force(draws)
  function(b) dd_placebo_draw(est, args, dd_placebo_redraw(pan, draws[[b]]$G, draws[[b]]$keep), term)
}

# run draws (a list of list(G, keep)); a data frame of the draws that ran.
# The draws go through dd_seeded_lapply(): on the caller's future plan if one
# is set, each under its own seed (an estimator that resamples, did_trop's
# bootstrap, gives the same numbers whatever the plan).
dd_placebo_run <- function(cl, env, pan, term, draws, label) {
  est <- as.character(cl[[1L]])
  args <- lapply(as.list(cl)[-1L], eval, envir = env)
  res <- dd_seeded_lapply(seq_along(draws), dd_placebo_worker(est, args, pan, term, draws), 1L, label)
  ok <- !vapply(res, is.null, logical(1))
  m <- matrix(unlist(res[ok]), ncol = 3L, byrow = TRUE)
  list(draws = data.frame(draw = which(ok), estimate = m[, 1], std.error = m[, 2], p.value = m[, 3]),
       failed = sum(!ok), ok = ok)
}

# The statistic of a fit: list(est, se, p, label)
dd_placebo_stat <- function(f, term = NULL) {
  pick <- function(tab, i, label) {
    list(est = tab$estimate[i], se = tab$std.error[i], p = tab$p.value[i], label = label)
  }
  if (!is.null(term)) {
    i <- match(term, f$coeftable$term)
    if (is.na(i)) dd_stop("`term` = \"%s\" is not a coefficient of the re-estimated fit.", term)
    return(pick(f$coeftable, i, term))
  }
  if (inherits(f, dd_placebo_aggregated)) {
    a <- aggregate(f, "simple")
    return(pick(a$coeftable, match("ATT", a$coeftable$term), "ATT (simple aggregate)"))
  }
  tab <- f$coeftable
  i <- match("ATT", tab$term)
  if (!is.na(i)) return(pick(tab, i, "ATT"))
  if (!is.null(tab$event) && any(tab$event >= 0, na.rm = TRUE)) {
    post <- which(!is.na(tab$event) & tab$event >= 0)
    trm <- tab$term[post]
    S <- matrix(1 / length(post), 1L, length(post))
    lc <- dd_lincom(tab$estimate[post], f$vcov[trm, trm, drop = FALSE], S, "mean")
    ct <- dd_coef_table(lc$estimate, sqrt(drop(lc$vcov)), min(f$df), f$alpha)
    return(list(est = ct$estimate, se = ct$std.error, p = ct$p.value, label = "mean of event-time effects, e >= 0"))
  }
  pick(tab, match(f$main_terms[1], tab$term), f$main_terms[1])
}

#' @export
print.dd_placebo <- function(x, digits = 4, ...) {
  dd_check_dots(list(...), "print()")
  f <- function(v) formatC(v, digits = digits, format = "fg", flag = "#")
  fp <- function(p) format.pval(p, digits = digits)
  lab <- c(timing = "Placebo test: fake adoption dates in the pre-period",
           group = "Placebo test: fake treated groups among the never treated",
           permutation = "Randomisation inference: treatment permuted across units",
           leave_one_out = "Leave-one-out re-estimation")[[x$type]]
  cat(lab, "\n", sep = "")
  cat(sprintf("Estimator: %s   Statistic: %s\n", x$estimator, x$statistic))
  switch(x$type,
    timing = {
      cat(sprintf("Periods before %s; adoption moved %d period(s) earlier (fake dates: %s); %d unit(s) treated before %s dropped\n",
                  format(x$cutoff), x$shift, paste(format(x$fake_dates), collapse = ", "), x$n_dropped_units,
                  format(x$cutoff)))
      if (!is.null(x$n_fake_treated))
        cat(sprintf("Fake-treated units: %d%s; comparison units: %d\n", x$n_fake_treated,
                    if (is.null(x$n_fake_clusters)) "" else sprintf(" in %d clusters", x$n_fake_clusters),
                    x$n_comparison))
      cat(sprintf("Placebo estimate: %s (SE %s), p-value %s\n", f(x$estimate), f(x$std.error), fp(x$p.value)))
    },
    group = {
      cat(sprintf("Draws: %d (%d fake treated units each)\n", nrow(x$draws), x$n_treated))
      cat(sprintf("Mean placebo estimate: %s (SD over draws %s)\n", f(mean(x$draws$estimate)),
                  f(stats::sd(x$draws$estimate))))
      cat(sprintf("Share of draws rejecting at %g: %s (expected about %g)\n", x$alpha, f(x$rejection_rate), x$alpha))
      if (isTRUE(x$n_no_statistic > 0L))
        cat(sprintf("%d draw(s) gave no p-value and were left out of the rejection rate\n", x$n_no_statistic))
    },
    permutation = {
      ts <- x$test_statistic %||% "estimate"          # results of earlier versions: the estimate
      m <- if (is.null(x$draws$statistic)) nrow(x$draws) else sum(!is.na(x$draws$statistic))
      cat(sprintf("Permutation statistic: %s (statistic = \"%s\"), observed %s\n",
                  if (ts == "t") "|t| = |estimate / SE|" else "|estimate|", ts,
                  f(abs(x$observed_statistic %||% x$estimate))))
      cat(sprintf("Estimate: %s; %s %d permutations; randomisation p-value %s\n", f(x$estimate),
                  if (x$exact) "all" else "random", nrow(x$draws), fp(x$p.value)))
      if (isTRUE(x$n_no_statistic > 0L))
        cat(sprintf("%d permutation(s) gave no statistic and were left out of the p-value (%d used)\n",
                    x$n_no_statistic, m))
      if (!x$exact) cat(sprintf("(%s distinct assignments; Monte Carlo SE of the p-value %s)\n",
                                format(signif(x$n_assignments, 3)),
                                f(sqrt(x$p.value * (1 - x$p.value) / m))))
    },
    leave_one_out = {
      d <- x$draws
      cat(sprintf("Full-sample estimate: %s (SE %s)\n", f(x$estimate), f(x$std.error)))
      cat(sprintf("Leaving out each %s (%d fits): estimates from %s to %s; largest change %s (leaving out %s)\n",
                  x$by, nrow(d), f(min(d$estimate)), f(max(d$estimate)),
                  f(max(abs(d$estimate - x$estimate))), dd_show(d$left_out[which.max(abs(d$estimate - x$estimate))])))
    })
  if (x$failed > 0L) cat(sprintf("%d draw(s) stopped with an error and were left out\n", x$failed))
  invisible(x)
}

#' @export
plot.dd_placebo <- function(x, main = NULL, xlab = NULL, ...) {
  d <- x$draws
  perm <- x$type == "permutation"
  xlab <- xlab %||% dd_placebo_xlab(x)
  if (x$type == "timing") {
    dd_stop("a timing placebo is one fit; plot its event study with plot(x$fit).")
  }
  if (x$type == "leave_one_out") {
    o <- order(d$estimate)
    graphics::plot(d$estimate[o], seq_along(o), xlab = xlab, ylab = paste(x$by, "left out"), yaxt = "n", pch = 19,
                   main = main %||% sprintf("Leave one %s out", x$by), ...)
    graphics::axis(2, at = seq_along(o), labels = format(d$left_out[o]), las = 1, cex.axis = 0.7)
    graphics::abline(v = x$estimate, lty = 2)
    graphics::mtext("dashed: full-sample estimate", side = 3, line = 0.3, cex = 0.8)
    return(invisible(x))
  }
  # permutations: the statistic compared (t or estimate); group: estimates
  v <- if (perm) d$statistic[!is.na(d$statistic)] else d$estimate
  v0 <- if (perm) x$observed_statistic else x$estimate
  h <- graphics::hist(v, breaks = "FD", plot = FALSE)
  r <- range(c(h$breaks, v0, if (perm) -v0))
  graphics::hist(v, breaks = h$breaks, col = "grey85", border = "white", xlab = xlab, xlim = r,
                 main = main %||% if (perm) sprintf("Permutation distribution (p = %s)", format.pval(x$p.value, digits = 3))
                                  else "Placebo estimates over draws", ...)
  graphics::abline(v = v0, col = "firebrick", lwd = 2)
  if (perm) graphics::abline(v = -v0, col = "firebrick", lwd = 2, lty = 2)
  graphics::mtext(dd_placebo_subtitle(x), side = 3, line = 0.3, cex = 0.8)
  invisible(x)
}

dd_placebo_xlab <- function(x) {
  if (x$type == "permutation" && identical(x$test_statistic, "t")) "t statistic (estimate / SE)" else "Estimate"
}

dd_placebo_subtitle <- function(x) {
  if (x$type != "permutation") return("solid: the fit's estimate")
  sprintf("solid: the fit's %s; dashed: its mirror (two-sided test)",
          if (identical(x$test_statistic, "t")) "t statistic" else "estimate")
}

#' @rdname placebo_test
#' @param object A `placebo_test()` result (`autoplot()`: ggplot2; the same
#'   plots as `plot()`).
#' @param ... Not used: an error if given.
#' @exportS3Method ggplot2::autoplot
autoplot.dd_placebo <- function(object, ...) {
  dd_check_dots(list(...), "autoplot()")
  dd_need_ggplot()
  gg <- asNamespace("ggplot2")
  x <- object
  d <- x$draws
  if (x$type == "timing") dd_stop("a timing placebo is one fit; plot its event study with autoplot(x$fit).")
  if (x$type == "leave_one_out") {
    d$label <- factor(format(d$left_out), levels = format(d$left_out)[order(d$estimate)])
    return(gg$ggplot(d, gg$aes(x = .data$estimate, y = .data$label)) +
             gg$geom_vline(xintercept = x$estimate, linetype = 2, colour = "grey40") +
             gg$geom_point(colour = "#1B6CA8", size = 2) +
             gg$labs(x = "Estimate", y = paste(x$by, "left out"), title = sprintf("Leave one %s out", x$by),
                     subtitle = "dashed: full-sample estimate"))
  }
  perm <- x$type == "permutation"
  d$value <- if (perm) d$statistic else d$estimate
  d <- d[!is.na(d$value), , drop = FALSE]
  v0 <- if (perm) x$observed_statistic else x$estimate
  p <- gg$ggplot(d, gg$aes(x = .data$value)) +
    gg$geom_histogram(bins = max(10L, min(40L, nrow(d) %/% 5L)), fill = "grey80", colour = "white") +
    gg$geom_vline(xintercept = v0, colour = "firebrick", linewidth = 0.9) +
    gg$labs(x = dd_placebo_xlab(x), y = "Draws",
            title = if (perm) sprintf("Permutation distribution (p = %s)", format.pval(x$p.value, digits = 3)) else "Placebo estimates over draws",
            subtitle = dd_placebo_subtitle(x))
  if (perm) p <- p + gg$geom_vline(xintercept = -v0, colour = "firebrick", linewidth = 0.9, linetype = 2)
  p
}
