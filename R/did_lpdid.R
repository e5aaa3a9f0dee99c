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
#' Covariates (`xformla`, `ylags`, `dylags`) take their value at the base
#' row's period \eqn{t} (the row whose switch defines treatment) and enter
#' every horizon's regression beside the switch and the period effects
#' (the authors' `controls()`); their standard errors count the covariates
#' in the small-sample factor. With `reweight = TRUE` covariates use
#' regression adjustment instead (the authors' and Stata `teffects ra`'s
#' route): the outcome regression (period effects and covariates) on the
#' clean controls only, the treated rows' mean residual as the effect, and
#' its influence function clustered without a small-sample factor (t tests
#' with \eqn{G - 1} degrees of freedom). Treated rows of a period without a
#' clean control are then dropped (the fit's notes say how many).
#'
#' `non_absorbing` admits a treatment that switches on and off (`dname`;
#' periods without gaps within each unit): `"first_entry"` uses each unit's
#' first entry into treatment, kept only while the treatment stays on
#' through \eqn{t + h}, against controls untreated from their first period
#' through \eqn{t + h}; `"effect_stabilization"` assumes that the effect of
#' a change has stabilised after `stabilization_window` (\eqn{L}) periods:
#' treated rows enter at \eqn{t} after at least \eqn{L} untreated periods
#' and stay on through \eqn{t + h}; controls have no change of treatment
#' over \eqn{t - L .. t + h} (stably treated units included); for the
#' pre-treatment horizons the window is \eqn{t - \max(L, -h) .. t - 1}.
#' Periods before a unit's first count as untreated. These are diff-diff's
#' `first_entry` and `effect_stabilization` and Stata `lpdid`'s
#' `nonabsorbing(, firsttreat notyet)` and `nonabsorbing(L)` (which differs
#' from both at the panel's edges and in its pre-treatment samples).
#'
#' Sampling weights (`weightsname`, or a survey design's weights) weight
#' each row's regression by the base row's weight; with `reweight = TRUE`
#' the period factor becomes \eqn{W_t / W^C_t} (sums of weights), which
#' reduces to \eqn{N_t / N^C_t} without weights. With `survey` the
#' variance is design-based: the rows' scores summed by unit, then PSU
#' totals within strata (Taylor linearisation with the design's finite
#' population correction, every horizon a domain of the full design), t
#' tests with the design's degrees of freedom (PSUs minus strata); each
#' unit must lie within one PSU.
#'
#' @param data A data frame (long panel, one row per unit and period).
#' @param yname,idname,tname Outcome, unit and period columns.
#' @param gname The first treated period of each unit (0 or `Inf` for never
#'   treated). Give this or `dname`.
#' @param dname A 0/1 treatment column: absorbing unless `non_absorbing`
#'   says otherwise.
#' @param xformla A one-sided formula of covariates (values at the base
#'   row's period), or `NULL`.
#' @param pre_window The earliest pre-treatment horizon \eqn{K} (horizons
#'   \eqn{-K..-2}; 1 for none).
#' @param post_window The last post-treatment horizon \eqn{H} (horizons
#'   \eqn{0..H}).
#' @param reweight `FALSE` (variance-weighted, default) or `TRUE` (equally
#'   weighted over the newly treated rows; with covariates, regression
#'   adjustment).
#' @param pmd `NULL` (base period \eqn{t - 1}), a number of periods \eqn{k}
#'   or `"max"` (pre-mean differencing).
#' @param control_group `"not_yet_treated"` (default) or `"never_treated"`
#'   (absorbing treatments only).
#' @param non_absorbing `NULL` (absorbing treatment, default),
#'   `"first_entry"` or `"effect_stabilization"` (needs `dname`).
#' @param stabilization_window The number of periods \eqn{L \ge 1} after
#'   which the effect of a change is assumed stable (with
#'   `non_absorbing = "effect_stabilization"` only).
#' @param ylags,dylags Numbers of calendar lags of the outcome
#'   (\eqn{y_{t-1}, \dots}) and of its first difference
#'   (\eqn{\Delta y_{t-1}, \dots}) added as covariates (0: none).
#' @param weightsname Sampling weights column (the base row's weight
#'   weights each row), or `NULL`.
#' @param cluster The clustering column (default `idname`).
#' @param survey A survey design of `data` ([survey_design()] or a survey
#'   package design): its weights and a design-based variance.
#' @param vcov `NULL` or `"cluster"` (clustered, default), or Conley's
#'   spatial variance: `"conley"` with `coords` and `cutoff`, or a
#'   [dd_conley()]. Each horizon's variance is then fixest's `conley()` on
#'   its regression (the cells' scores at the units' coordinates, \eqn{n /
#'   (n - K)}, \eqn{n - K} degrees of freedom), and the covariance across
#'   horizons pairs the cells of different horizons the same way.
#' @param coords,cutoff With `vcov = "conley"`: the latitude and longitude
#'   columns and the cutoff in kilometres (see [dd_conley()]).
#' @param alpha Level of the intervals is `1 - alpha`.
#' @return A `did_lpdid` fit (a `dd_fit`) with rows `event::h` (\eqn{h \ne
#'   -1}), `pooled::pre` (when \eqn{K \ge 2}) and `ATT` (the pooled post
#'   window), their covariance, `horizons` (per horizon: rows, treated rows,
#'   clean controls, clusters) and the event-study component; the settings
#'   (`reweight`, `pmd`, `control_group`, `non_absorbing`,
#'   `stabilization_window`, `covariates`, `method`) are recorded in the fit.
#' @references Dube, A., Girardi, D., Jorda, O. and Taylor, A. M. (2025). A
#'   local projections approach to difference-in-differences. *Journal of
#'   Applied Econometrics*.
#' @examples
#' d <- read.csv(system.file("extdata", "sim_panel.csv", package = "diffdiff"))
#' fit <- did_lpdid(d, "y", "id", "year", gname = "first_treat", pre_window = 3, post_window = 3)
#' fit
#' plot(fit)
#' # a covariate, by regression adjustment with equal weights
#' d$x <- sin(d$id) + d$year / 2000
#' did_lpdid(d, "y", "id", "year", gname = "first_treat", xformla = ~ x, pre_window = 2,
#'           post_window = 2, reweight = TRUE)
#' @export
did_lpdid <- function(data, yname, idname, tname, gname = NULL, dname = NULL, xformla = NULL, pre_window,
                      post_window, reweight = FALSE, pmd = NULL,
                      control_group = c("not_yet_treated", "never_treated"), non_absorbing = NULL,
                      stabilization_window = NULL, ylags = 0, dylags = 0, weightsname = NULL, cluster = NULL,
                      survey = NULL, vcov = NULL, coords = NULL, cutoff = NULL, alpha = 0.05) {
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
  ylags <- dd_check_count(ylags, "ylags", min = 0)
  dylags <- dd_check_count(dylags, "dylags", min = 0)
  mode <- 0L
  if (!is.null(non_absorbing)) {
    non_absorbing <- dd_match_vocab(non_absorbing[1], c("first_entry", "effect_stabilization"), "non_absorbing")
    if (is.null(dname))
      dd_stop("`non_absorbing` = \"%s\" needs the treatment as a 0/1 column `dname` (a first treated period `gname` is absorbing).",
              non_absorbing)
    if (control_group == "never_treated")
      dd_stop("`control_group` = \"never_treated\" is for absorbing treatments; with `non_absorbing` = \"%s\" the controls are the clean units of each horizon.",
              non_absorbing)
    mode <- if (non_absorbing == "first_entry") 1L else 2L
  }
  if (mode == 2L) {
    if (is.null(stabilization_window))
      dd_stop("`non_absorbing` = \"effect_stabilization\" needs `stabilization_window` (L >= 1 periods after which the effect is stable).")
    L <- dd_check_count(stabilization_window, "stabilization_window", min = 1)
  } else {
    if (!is.null(stabilization_window))
      dd_stop("`stabilization_window` = %s applies to `non_absorbing` = \"effect_stabilization\" only.",
              dd_show(stabilization_window))
    L <- 0L
  }
  if (!is.null(vcov) && !identical(vcov, "cluster") && !identical(vcov, "conley") && !inherits(vcov, "dd_conley"))
    dd_stop("`vcov` = %s: did_lpdid() clusters its standard errors (\"cluster\", default) or uses Conley's (\"conley\", dd_conley()).",
            dd_show(vcov))
  cz <- dd_conley_arg(if (identical(vcov, "cluster")) NULL else vcov, coords, cutoff, data)
  if (!is.null(cz) && (!is.null(survey) || !is.null(cluster)))
    dd_stop("did_lpdid()'s Conley variance does not combine with %s.", if (!is.null(survey)) "`survey`" else "`cluster`")
  design <- dd_svy_arg(survey, data, weightsname, cluster, NULL, 0L)
  cl <- if (is.null(design) && is.null(cz)) cluster %||% idname else NULL
  role <- if (is.null(dname)) c(gname = gname) else c(dname = dname)
  pan <- dd_panel(data, yname, idname, tname, role, xformla = xformla, weightsname = weightsname, cluster = cl,
                  design = design, sorted = TRUE)
  L_ <- dd_lpdid_layout(pan, dname, gname, mode, design, cz, data)
  B <- dd_lpdid_base(L_$Y, pmd)
  X <- dd_lpdid_covariates(pan, L_, ylags, dylags)
  ra <- reweight && !is.null(X)
  hs <- c(if (K >= 2) -(K:2), 0:H)
  wins <- c(as.list(hs), if (K >= 2) list(-(2:K)), list(0:H))
  hcs <- c(hs, if (K >= 2) -K, H)
  terms <- c(paste0("event::", hs), if (K >= 2) "pooled::pre", "ATT")
  fits <- lapply(seq_along(wins), function(k)
    dd_lpdid_fit(L_, B, X, wins[[k]], hcs[k], control_group, reweight, ra, mode, L, terms[k]))
  dd_lpdid_result(L_, fits, terms, hs, call, yname, alpha, list(
    reweight = reweight, pmd = pmd, control_group = control_group, non_absorbing = non_absorbing,
    stabilization_window = if (mode == 2L) L, covariates = X$names,
    method = if (ra) "regression adjustment" else "regression", windows = c(pre = K, post = H)), cl, ra, X)
}

# The panel laid out on the calendar grid: outcome (units x periods, NA
# where a unit is not observed), each unit's first treated period as a
# column index (Inf: never; for a non-absorbing treatment its first period
# with D = 1, and the cell states of C_lpdid_state), the cluster of each
# cell (with a survey design: the unit, whose scores the design sums), the
# weights
dd_lpdid_layout <- function(pan, dname, gname, mode, design, cz = NULL, data = NULL) {
  tlev <- sort(unique(pan$tt))
  if (length(tlev) < 2L) dd_stop("`tname` has a single period; LP-DiD needs at least two.")
  step <- diff(tlev)
  if (any(abs(step - step[1]) > 1e-8 * max(1, abs(step[1]))))
    dd_stop("`tname` periods must be equally spaced (leads and lags are calendar periods); the gaps between periods are %s.",
            dd_show(unique(step)))
  N <- pan$n_units
  first <- dd_first_rows(pan$idc)
  ids <- pan$id[first]
  Y <- dd_panel_wide(pan, pan$y)                     # NA where a unit is not observed
  ST <- NULL
  if (mode == 0L) {
    G <- dd_unit_first_col(pan, dname, gname, tlev, "LP-DiD with an absorbing treatment needs it to stay on (or `non_absorbing`).")$col
  } else {
    d <- dd_check_numeric_col(pan$vals$dname, "dname", dname)
    dd_check_binary(d, "dname", dname)
    D <- dd_panel_wide(pan, d)
    obs <- !is.na(D)
    cnt <- rowSums(obs)
    gap <- which(max.col(obs, "last") - max.col(obs, "first") + 1L != cnt)
    if (length(gap))
      dd_stop("`non_absorbing` needs each unit observed in consecutive periods (changes of treatment are dated); unit %s has a gap.",
              dd_show(ids[gap[1]]))
    s <- .Call(C_lpdid_state, D)
    ST <- s$ST; G <- s$first
  }
  if (!any(is.finite(G) & G >= 2 & G <= length(tlev)))
    dd_stop("no unit is first treated after the first period (`%s`): LP-DiD has no treatment switch to use.",
            dname %||% gname, .code = "NO_TREATED")
  cells <- NULL
  if (!is.null(cz)) {
    # Conley: every cell's score on its own (the cells are the rows of the
    # meat), at the unit's coordinates in that period
    cr <- dd_conley_rows(cz, data, pan$rows)
    CL <- matrix(seq_len(N * length(tlev)), N)
    CL[is.na(Y)] <- NA
    ncl <- N * length(tlev)
    cells <- list(y = dd_panel_wide(pan, cr$y), x = dd_panel_wide(pan, cr$x), cz = cz)
  } else if (is.null(design)) {
    ncl <- length(unique(pan$cl))
    dd_check_nclusters(ncl, names(pan$cluster)[1], "cluster")
    CL <- dd_panel_wide(pan, as.double(pan$cl) + 1)
  } else {
    psu <- design$stages[[1]]$clus[pan$rows]
    if (any(psu != psu[first][pan$idc + 1L]))
      dd_stop("`survey`: each unit must lie within one PSU; unit %s is in several.",
              dd_show(ids[pan$idc[which(psu != psu[first][pan$idc + 1L])[1]] + 1L]))
    ncl <- N
    CL <- dd_panel_wide(pan, as.double(pan$idc) + 1)
  }
  storage.mode(CL) <- "integer"
  W <- if (is.null(pan$w)) NULL else dd_panel_wide(pan, as.double(pan$w))
  list(Y = Y, CL = CL, G = as.double(G), ST = ST, W = W, ids = ids, tlev = tlev, n_units = N,
       nobs = length(pan$y), n_clusters = ncl, design = design, unit_rows = pan$rows[first], notes = pan$notes,
       conley = cells)
}

# The covariates on the grid (N x T x p; NULL without): the xformla columns
# at each row's period, then the outcome's calendar lags y(t - j) and lagged
# differences y(t - j) - y(t - j - 1)
dd_lpdid_covariates <- function(pan, L, ylags, dylags) {
  Y <- L$Y; N <- nrow(Y); T <- ncol(Y)
  lag <- function(j) cbind(matrix(NA_real_, N, min(j, T)), Y[, seq_len(max(T - j, 0)), drop = FALSE])
  mats <- list()
  if (!is.null(pan$X) && ncol(pan$X))
    for (j in seq_len(ncol(pan$X))) mats[[colnames(pan$X)[j]]] <- dd_panel_wide(pan, as.double(pan$X[, j]))
  for (j in seq_len(ylags)) mats[[sprintf("ylag%d", j)]] <- lag(j)
  for (j in seq_len(dylags)) mats[[sprintf("dylag%d", j)]] <- lag(j) - lag(j + 1L)
  if (!length(mats)) return(NULL)
  list(X = array(unlist(mats, use.names = FALSE), c(N, T, length(mats))), names = names(mats))
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
# minus the base, on the newly treated rows and the clean controls (the
# rule of horizon hc: not yet treated at t + hc, hc >= 0; at t for hc < 0;
# the non-absorbing modes' windows), period fixed effects, covariates; its
# cluster (or, with a survey design, unit) scores, scaled by fixest's
# small-sample factor for the clustered regression
dd_lpdid_fit <- function(L, B, X, win, hc, control_group, reweight, ra, mode, Lw, term) {
  opts <- as.integer(c(hc, control_group == "never_treated", reweight, L$n_clusters, mode, Lw, ra))
  r <- .Call(C_lpdid_horizon, L$Y, B, L$CL, L$G, L$W, X$X, L$ST, as.integer(win), opts)
  n <- r$n; k <- r$k + r$n_periods
  Gc <- if (is.null(L$design)) r$n_clusters else Inf
  out <- list(ok = FALSE, term = term, n = n, n_treated = r$n_treated, n_control = r$n_control,
              dropped = r$dropped, aliased = X$names[r$aliased])
  if (is.na(r$b) || r$n_clusters < 2L || (!ra && n <= k)) return(out)
  # the small-sample factor: fixest's CR1, or with Conley its n / (n - K)
  fac <- if (ra || !is.null(L$design)) 1 else if (!is.null(L$conley)) n / (n - k)
         else Gc / (Gc - 1) * (n - 1) / (n - k)
  c(out[-1], list(ok = TRUE, b = r$b, score = r$score * sqrt(fac), G = if (is.null(L$conley)) r$n_clusters else NA,
                  dfk = n - k))
}

dd_lpdid_result <- function(L, fits, terms, hs, call, yname, alpha, set, cl, ra, X) {
  ok <- vapply(fits, `[[`, NA, "ok")
  H <- set$windows[["post"]]
  if (!any(ok[terms %in% c(paste0("event::", 0:H), "ATT")]))
    dd_stop("no post-treatment horizon has both newly treated rows and clean controls.")
  # the scores of all horizons by cluster (or unit): the covariance across horizons
  S <- matrix(vapply(fits[ok], `[[`, numeric(L$n_clusters), "score"), L$n_clusters)
  b <- vapply(fits[ok], `[[`, 0, "b")
  if (!is.null(L$conley)) {
    # Conley: the meat of the cells' scores, the horizons side by side
    keep <- which(rowSums(S != 0) > 0)
    cc <- L$conley; N <- L$n_units
    cr <- list(y = cc$y[keep], x = cc$x[keep], cz = cc$cz)
    if (!is.null(cc$cz$lag)) {
      cr$grp <- as.integer((keep - 1L) %/% N); cr$unit <- as.integer((keep - 1L) %% N); cr$tt <- L$tlev[cr$grp + 1L]
    }
    V <- dd_conley_psd(dd_conley_meat(S[keep, , drop = FALSE], cr))
    df <- vapply(fits[ok], function(f) f$dfk, 0)
    vtype <- "conley"
    vlab <- dd_conley_label(cc$cz)
    ncl <- NULL
  } else if (is.null(L$design)) {
    V <- dd_if_cross(dd_ifs_dense(S), NULL)
    df <- vapply(fits[ok], function(f) f$G - 1, 0)
    vtype <- "cluster"
    vlab <- if (ra) sprintf("clustered by %s (influence function of the regression adjustment, no small-sample factor; G - 1 df, per horizon)", cl)
            else sprintf("clustered by %s (CR1 with fixest's small-sample factor and G - 1 df, per horizon)", cl)
    ncl <- L$n_clusters
  } else {
    sp <- dd_spec(alpha = alpha)
    res <- dd_if_result(stats::setNames(b, terms[ok]), S, 1, sp, integer(), "LP-DiD scores", NULL,
                        design = L$design, unit_rows = L$unit_rows)
    V <- res$V_analytic
    degf <- dd_svy_degf(L$design)
    df <- rep(max(degf, 1), sum(ok))
    vtype <- "survey"
    vlab <- res$label
    ncl <- res$n_clusters
  }
  dimnames(V) <- list(terms[ok], terms[ok])
  tab <- dd_coef_table(stats::setNames(b, terms[ok]), sqrt(diag(V)), df, alpha)
  tab$event <- c(hs, NA, NA)[seq_along(terms)][ok]
  hz <- data.frame(term = terms, n = vapply(fits, function(f) as.integer(f$n), 1L),
                   n_treated = vapply(fits, function(f) as.integer(f$n_treated), 1L),
                   n_control = vapply(fits, function(f) as.integer(f$n_control), 1L),
                   clusters = vapply(fits, function(f) as.integer(f$G %||% NA), 1L), estimated = ok)
  notes <- L$notes
  if (any(!ok)) notes <- c(notes, sprintf("not estimable (no newly treated row or no clean control): %s.",
                                          paste(terms[!ok], collapse = ", ")))
  drop <- vapply(fits, function(f) f$dropped, 0)
  if (any(drop > 0))
    notes <- c(notes, sprintf("regression adjustment: treated rows without a clean control in their period dropped (%s).",
                              paste(sprintf("%s: %d", terms[drop > 0], as.integer(drop[drop > 0])), collapse = ", ")))
  al <- unique(unlist(lapply(fits, `[[`, "aliased")))
  if (length(al)) notes <- c(notes, sprintf("covariates collinear with the switch and period effects in some horizon, dropped there: %s.",
                                            paste(al, collapse = ", ")))
  pmd <- set$pmd
  title <- sprintf("Local-projections DiD (did_lpdid, %s%s%s)",
                   if (ra) "regression adjustment, equally weighted" else if (set$reweight) "equally weighted" else "variance weighted",
                   if (is.null(pmd)) "" else sprintf(", pre-mean differencing over %s", if (identical(pmd, "max")) "all earlier periods" else paste(pmd, "periods")),
                   if (is.null(set$non_absorbing)) "" else sprintf(", non-absorbing: %s%s", sub("_", " ", set$non_absorbing),
                                                                   if (is.null(set$stabilization_window)) "" else sprintf(" after %d periods", set$stabilization_window)))
  info <- dd_info("did_lpdid", title, yname, L$nobs, vtype, vlab,
                  stats::setNames(df, terms[ok]), alpha, terms[ok], n_units = L$n_units, n_periods = length(L$tlev),
                  n_clusters = ncl, notes = notes)
  new_dd_fit("did_lpdid", tab, stats::setNames(tab$estimate, tab$term), V, info, call,
             c(list(event_study = dd_es_spec(reference = -1), horizons = hz), set))
}
