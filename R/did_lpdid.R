#' Local-projections difference-in-differences (LP-DiD)
#'
#' Dube, Girardi, Jorda and Taylor (2025): for each horizon \eqn{h}, the long
#' difference of the outcome is regressed on the treatment switch with
#' period fixed effects,
#' \deqn{y_{i,t+h} - y_{i,t-1} = \beta_h \Delta D_{it} + \delta^h_t + e^h_{it},}
#' on the clean-control sample: newly treated rows (\eqn{\Delta D_{it} = 1})
#' and rows not yet treated at \eqn{t + h} (for the pre-treatment horizons
#' \eqn{h = -K, \dots, -2}, whose outcome is \eqn{y_{i,t+h} - y_{i,t-1}},
#' rows not yet treated at \eqn{t}); rows already treated are never
#' controls. Leads and lags are calendar periods (the periods must be
#' equally spaced): a row enters horizon \eqn{h} only where both outcomes
#' are observed. \eqn{h = -1} is the reference (0 by construction).
#'
#' `reweight = FALSE` (default) is the regression's variance-weighted
#' estimand; `reweight = TRUE` weights the rows of period \eqn{t} by
#' \eqn{N_t / N^C_t} (all rows over clean controls in that period's sample;
#' periods without a treated row or without a control are dropped), which
#' gives the equally weighted average of the period-specific effects over
#' the newly treated rows (Callaway and Sant'Anna's with not-yet-treated
#' controls). `pmd` replaces the base \eqn{y_{i,t-1}} by the mean of the
#' `pmd` periods before \eqn{t} (all observed) or, with `pmd = "max"`, of
#' every observed period before \eqn{t}.
#'
#' The pooled estimates are the same regression on the mean of the
#' outcomes over the post window \eqn{0..H} (the row `ATT`; every outcome of
#' the window observed, controls clean through \eqn{t + H}) and over the
#' pre window \eqn{-K..-2} (the row `pooled::pre`).
#'
#' Standard errors are clustered (by unit by default) with fixest's
#' small-sample factor \eqn{G/(G-1) \cdot (n-1)/(n-K)} of each horizon's
#' regression and t tests with \eqn{G - 1} degrees of freedom, as the
#' authors' fixest recipe and Stata's `lpdid` (reghdfe). The covariance
#' across horizons stacks the horizons' cluster scores (each scaled by its
#' horizon's factor), so that joint tests, bands and [honest_did()] see
#' it; each diagonal entry is its horizon's own variance.
#'
#' @param data A data frame (long panel, one row per unit and period).
#' @param yname,idname,tname Outcome, unit and period columns.
#' @param gname The first treated period of each unit (0 or `Inf` for never
#'   treated). Give this or `dname`.
#' @param dname A 0/1 absorbing treatment column.
#' @param pre_window The earliest pre-treatment horizon \eqn{K} (horizons
#'   \eqn{-K..-2}; 1 for none).
#' @param post_window The last post-treatment horizon \eqn{H} (horizons
#'   \eqn{0..H}).
#' @param reweight `FALSE` (variance-weighted, default) or `TRUE` (equally
#'   weighted over the newly treated rows).
#' @param pmd `NULL` (base period \eqn{t - 1}), a number of periods \eqn{k}
#'   or `"max"` (pre-mean differencing).
#' @param control_group `"not_yet_treated"` (default) or `"never_treated"`.
#' @param cluster The clustering column (default `idname`).
#' @param alpha Level of the intervals is `1 - alpha`.
#' @return A `did_lpdid` fit (a `dd_fit`) with rows `event::h` (\eqn{h \ne
#'   -1}), `pooled::pre` (when \eqn{K \ge 2}) and `ATT` (the pooled post
#'   window), their covariance, `horizons` (per horizon: rows, treated rows,
#'   clean controls, clusters) and the event-study component.
#' @references Dube, A., Girardi, D., Jorda, O. and Taylor, A. M. (2025). A
#'   local projections approach to difference-in-differences. *Journal of
#'   Applied Econometrics*.
#' @examples
#' d <- read.csv(system.file("extdata", "sim_panel.csv", package = "diffdiff"))
#' fit <- did_lpdid(d, "y", "id", "year", gname = "first_treat", pre_window = 3, post_window = 3)
#' fit
#' plot(fit)
#' @export
did_lpdid <- function(data, yname, idname, tname, gname = NULL, dname = NULL, pre_window, post_window,
                      reweight = FALSE, pmd = NULL, control_group = c("not_yet_treated", "never_treated"),
                      cluster = NULL, alpha = 0.05) {
  call <- match.call()
  dd_required(c("data", "yname", "idname", "tname"))
  dd_check_data(data)
  if (is.null(dname) == is.null(gname))
    dd_stop("give the treatment as exactly one of `gname` (first treated period) and `dname` (a 0/1 column); got %s.",
            if (is.null(dname)) "neither" else "both")
  if (missing(pre_window)) dd_stop("`pre_window` (the earliest pre-treatment horizon K: horizons -K..-2) must be given.")
  if (missing(post_window)) dd_stop("`post_window` (the last post-treatment horizon H: horizons 0..H) must be given.")
  K <- dd_check_count(pre_window, "pre_window", min = 1)
  H <- dd_check_count(post_window, "post_window", min = 0)
  reweight <- dd_check_flag(reweight, "reweight")
  control_group <- dd_match_vocab(control_group[1], c("not_yet_treated", "never_treated"), "control_group")
  alpha <- dd_check_alpha(alpha)
  if (!is.null(pmd) && !identical(pmd, "max") &&
      !(is.numeric(pmd) && length(pmd) == 1L && !is.na(pmd) && pmd >= 1 && pmd == round(pmd)))
    dd_stop("`pmd` must be NULL, a whole number of periods >= 1, or \"max\"; got %s.", dd_show(pmd))
  cl <- cluster %||% idname
  role <- if (is.null(dname)) c(gname = gname) else c(dname = dname)
  pan <- dd_panel(data, yname, idname, tname, role, cluster = cl, sorted = TRUE)
  L <- dd_lpdid_layout(pan, dname, gname)
  hs <- c(if (K >= 2) -(K:2), 0:H)
  B <- dd_lpdid_base(L$Y, pmd)
  wins <- c(as.list(hs), if (K >= 2) list(-(2:K)), list(0:H))
  hcs <- c(hs, if (K >= 2) -2L, H)
  terms <- c(paste0("event::", hs), if (K >= 2) "pooled::pre", "ATT")
  fits <- lapply(seq_along(wins), function(k) dd_lpdid_fit(L, B, wins[[k]], hcs[k], control_group, reweight, terms[k]))
  dd_lpdid_result(L, fits, terms, hs, call, yname, alpha, reweight, pmd, control_group, cl, K, H)
}

# The panel laid out on the calendar grid: outcome (units x periods, NA
# where a unit is not observed), each unit's first treated period as a
# column index (Inf: never), the cluster of each cell
dd_lpdid_layout <- function(pan, dname, gname) {
  tlev <- sort(unique(pan$tt))
  if (length(tlev) < 2L) dd_stop("`tname` has a single period; LP-DiD needs at least two.")
  step <- diff(tlev)
  if (any(abs(step - step[1]) > 1e-8 * max(1, abs(step[1]))))
    dd_stop("`tname` periods must be equally spaced (leads and lags are calendar periods); the gaps between periods are %s.",
            dd_show(unique(step)))
  N <- pan$n_units
  ids <- pan$id[dd_first_rows(pan$idc)]
  Y <- dd_panel_wide(pan, pan$y)                     # NA where a unit is not observed
  CL <- dd_panel_wide(pan, as.double(pan$cl) + 1)
  storage.mode(CL) <- "integer"
  G <- dd_unit_first_col(pan, dname, gname, tlev, "LP-DiD with an absorbing treatment needs it to stay on.")$col
  if (!any(is.finite(G) & G >= 2 & G <= length(tlev)))
    dd_stop("no unit is first treated after the first period (`%s`): LP-DiD has no treatment switch to use.",
            dname %||% gname, .code = "NO_TREATED")
  dd_check_nclusters(length(unique(pan$cl)), names(pan$cluster)[1], "cluster")
  list(Y = Y, CL = CL, G = G, ids = ids, tlev = tlev, n_units = N, nobs = length(pan$y),
       n_clusters = length(unique(pan$cl)), notes = pan$notes)
}

# The base of each row (units x periods): y(t - 1), the mean of the pmd
# periods before t (all observed), or of every observed period before t
dd_lpdid_base <- function(Y, pmd) {
  N <- nrow(Y); T <- ncol(Y)
  lag <- function(j) cbind(matrix(NA_real_, N, min(j, T)), Y[, seq_len(max(T - j, 0)), drop = FALSE])
  if (is.null(pmd)) return(lag(1L))
  if (!identical(pmd, "max")) return(Reduce(`+`, lapply(seq_len(pmd), lag)) / pmd)
  obs <- !is.na(Y)
  cs <- matrix(0, N, T); cn <- matrix(0, N, T)
  for (t in seq_len(T)[-1]) {
    cs[, t] <- cs[, t - 1L] + ifelse(obs[, t - 1L], Y[, t - 1L], 0)
    cn[, t] <- cn[, t - 1L] + obs[, t - 1L]
  }
  m <- cs / cn
  m[cn == 0] <- NA_real_
  m
}

# One regression (C, lpdid.c): the mean of y(t + h) over the offsets `win`
# minus the base, on the newly treated rows and the clean controls (not
# yet treated at t + hc, hc >= 0; at t for hc < 0), period fixed effects;
# its cluster scores scaled by fixest's small-sample factor
dd_lpdid_fit <- function(L, B, win, hc, control_group, reweight, term) {
  r <- .Call(C_lpdid_horizon, L$Y, B, L$CL, as.double(L$G), as.integer(win), as.integer(hc),
             control_group == "never_treated", reweight, L$n_clusters)
  n <- r$n; Gc <- r$n_clusters; k <- 1L + r$n_periods
  out <- list(ok = FALSE, term = term, n = n, n_treated = r$n_treated, n_control = r$n_control)
  if (is.na(r$b) || Gc < 2L || n <= k) return(out)
  fac <- Gc / (Gc - 1) * (n - 1) / (n - k)
  c(out[-1], list(ok = TRUE, b = r$b, score = r$score * sqrt(fac), G = Gc))
}

dd_lpdid_result <- function(L, fits, terms, hs, call, yname, alpha, reweight, pmd, control_group, cl, K, H) {
  ok <- vapply(fits, `[[`, NA, "ok")
  if (!any(ok[terms %in% c(paste0("event::", 0:H), "ATT")]))
    dd_stop("no post-treatment horizon has both newly treated rows and clean controls.")
  # the scores of all horizons by cluster: the covariance across horizons
  S <- matrix(vapply(fits[ok], `[[`, numeric(L$n_clusters), "score"), L$n_clusters)
  V <- dd_if_cross(dd_ifs_dense(S), NULL); dimnames(V) <- list(terms[ok], terms[ok])
  b <- vapply(fits[ok], `[[`, 0, "b")
  df <- vapply(fits[ok], function(f) f$G - 1, 0)
  tab <- dd_coef_table(stats::setNames(b, terms[ok]), sqrt(diag(V)), df, alpha)
  tab$event <- c(hs, NA, NA)[seq_along(terms)][ok]
  hz <- data.frame(term = terms, n = vapply(fits, function(f) as.integer(f$n), 1L),
                   n_treated = vapply(fits, function(f) as.integer(f$n_treated), 1L),
                   n_control = vapply(fits, function(f) as.integer(f$n_control), 1L),
                   clusters = vapply(fits, function(f) as.integer(f$G %||% NA), 1L), estimated = ok)
  notes <- L$notes
  if (any(!ok)) notes <- c(notes, sprintf("not estimable (no newly treated row or no clean control): %s.",
                                          paste(terms[!ok], collapse = ", ")))
  title <- sprintf("Local-projections DiD (did_lpdid, %s%s)", if (reweight) "equally weighted" else "variance weighted",
                   if (is.null(pmd)) "" else sprintf(", pre-mean differencing over %s", if (identical(pmd, "max")) "all earlier periods" else paste(pmd, "periods")))
  info <- dd_info("did_lpdid", title, yname, L$nobs, "cluster",
                  sprintf("clustered by %s (CR1 with fixest's small-sample factor and G - 1 df, per horizon)", cl),
                  stats::setNames(df, terms[ok]), alpha, terms[ok], n_units = L$n_units, n_periods = length(L$tlev),
                  n_clusters = L$n_clusters, notes = notes)
  new_dd_fit("did_lpdid", tab, stats::setNames(tab$estimate, tab$term), V, info, call,
             list(event_study = dd_es_spec(reference = -1), horizons = hz, reweight = reweight, pmd = pmd,
                  control_group = control_group, windows = c(pre = K, post = H)))
}
