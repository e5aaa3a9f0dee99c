#' Rolling-transformation difference-in-differences (Lee and Wooldridge)
#'
#' Lee and Wooldridge (2025, 2026): each unit's outcome is transformed with
#' its own pre-treatment periods, then every cohort-period cell is a
#' cross-section comparison of the transformed outcomes.
#'
#' **Transformation.** For cohort \eqn{g} (first treated period) the
#' pre-window is every observed period \eqn{s < g} of a unit. `"demean"`
#' subtracts the unit's mean over its pre-window, \eqn{\dot Y_{itg} = Y_{it}
#' - \bar Y_{i,s<g}}; `"detrend"` subtracts the unit's own linear trend
#' fitted by least squares on \eqn{(1, s)} over the pre-window (at least two
#' pre-periods). The transform is applied to all periods of the unit, and
#' the comparison units of cohort \eqn{g} are transformed with cohort
#' \eqn{g}'s window, not their own.
#'
#' **Cells.** For cohort \eqn{g} and period \eqn{t} the cell compares the
#' units of cohort \eqn{g} with the comparison units: never treated
#' (`control_group = "never_treated"`) or, the default, not yet treated
#' (never treated or first treated after both \eqn{g} and \eqn{t}: LW 2025,
#' appendix D.3, and the authors' Stata `lwdid`), each with a transformed
#' outcome at \eqn{t}. Post-treatment cells (\eqn{t \ge g}) estimate
#' ATT(g,t); pre-treatment cells are placebo cells with the same transform,
#' except the reference periods, which the transform uses up: event time
#' \eqn{-1} (demean) or \eqn{-2, -1} (detrend), event time being the
#' difference of period positions \eqn{t - g} on the sorted periods.
#'
#' **Estimators per cell** (`est_method`): `"ra"`, regression adjustment,
#' the coefficient on the treatment in the OLS of \eqn{\dot Y} on \eqn{(1,
#' D, X, D (X - \bar X_1))} (\eqn{\bar X_1} the cell's treated mean; the
#' interactions only when both groups have more than \eqn{K + 1} units, else
#' \eqn{(1, D, X)}; without covariates the difference of means); `"ipw"`,
#' the Hajek inverse-probability-weighted difference with odds weights
#' \eqn{p/(1-p)} of a logit propensity score (no trimming, as Stata's
#' `lwdid`); `"dr"`, inverse-probability-weighted regression adjustment
#' (IPWRA); `"psm"`, one-to-one nearest-neighbour matching on the
#' propensity score with replacement (no standard error: matching has no
#' influence function here, so its aggregates have none either).
#' `ipw`, `dr` and `psm` need covariates (`xformla`); covariates must be
#' constant within units.
#'
#' **Variance.** `vcov = "iid"` (default; the small-sample exact inference
#' of LW 2026: classical OLS variance and \eqn{t} with the regression's
#' residual degrees of freedom) or `"hetero"` (HC1) for `"ra"`; with
#' `cluster`, CR1 (factor \eqn{G/(G-1) \cdot (n-1)/(n-k)}) with \eqn{G - 1}
#' degrees of freedom. `ipw` and `dr` use the sandwich variance of their
#' stacked estimating equations (the logit score, the weighted control mean
#' or outcome regression, the treated mean: every first-stage estimate's
#' effect included; \eqn{t} with \eqn{n - K - 1} and \eqn{n - K - 2}
#' degrees of freedom). It differs slightly from diff-diff's forms (which
#' take \eqn{1/(n-1)} and the weights' derivatives at fixed outcome
#' coefficients) and from Stata `lwdid`'s IPWRA variance, which holds the
#' treated units' covariate mean fixed (diff-diff reports about 15\% on
#' Stata's Walmart example). Each cell's influence function (one row per unit, scaled so
#' that its sum of squares is the cell's variance) is the common currency:
#' the event-time, cohort and overall effects are linear combinations of
#' the cells (`dd_lincom`), their covariance and bootstrap come from the
#' influence-function layer, with the normal reference when they combine
#' several cells.
#'
#' **Aggregation.** `event::e` averages the cells at event time \eqn{e}
#' weighted by their treated units; `cohort::g` averages cohort \eqn{g}'s
#' post-treatment cells the same way; `ATT` is the cohort effects weighted
#' by the cohorts' treated units. With one cohort (common timing) `ATT` is
#' instead the LW (2026) regression of each unit's mean transformed outcome
#' over the post-treatment periods (the periods it is observed) on the
#' treatment, with the cell's exact \eqn{t} inference. With several cohorts,
#' never-treated controls, `"ra"` and no covariates, the row `tau_omega` is
#' LW (2026)'s composite regression (eqs 7.11 to 7.19, Stata `lwdid`'s
#' small-sample staggered estimate): treated units' own-cohort post means
#' and never-treated units' cohort-share-weighted post means regressed on
#' the treatment (complete cases).
#'
#' **Randomisation inference and bootstrap.** `nperm > 0` (common timing,
#' `"ra"`) permutes the treatment over the units of the collapsed
#' regression (interactions recomputed for each assignment) and reports the
#' two-sided p-value of the `ATT`: by exact enumeration of all
#' \eqn{\binom{N}{N_1}} assignments when there are at most `nperm` of them
#' (\eqn{\#\{|b^*| \ge |b|\} / \binom{N}{N_1}}), else `nperm` permutations
#' from R's random-number stream (\eqn{(c + 1) / (nperm + 1)}). `nboot > 0`:
#' with common timing and `"ra"`, the wild (cluster) bootstrap of the
#' collapsed regression with the null imposed (columns `boot.p.value`,
#' `boot.conf.low`, `boot.conf.high` of the `ATT` row); with several
#' cohorts, the multiplier bootstrap of the influence functions (standard
#' errors, and a uniform band over the event times with `cband = TRUE`).
#'
#' Deliberate differences from diff-diff's `LWDiD`: default variance
#' classical (diff-diff: HC1; Stata's small-sample `lwdid`: classical), no
#' propensity-score trimming (diff-diff: 0.01), the common-timing post
#' average over the periods a unit is observed (Stata; diff-diff keeps
#' complete units only), and the `tau_omega` composite as its own row
#' rather than replacing the overall effect.
#'
#' @param data A data frame (long panel, one row per unit and period).
#' @param yname,idname,tname Outcome, unit and period columns.
#' @param gname The first treated period of each unit (0, `Inf` or `NA`:
#'   never treated).
#' @param xformla A one-sided formula of unit-constant covariates, or `NULL`.
#' @param transformation `"demean"` (default) or `"detrend"`.
#' @param est_method `"ra"` (default), `"ipw"`, `"dr"` or `"psm"`.
#' @param control_group `"not_yet_treated"` (default, as LW 2025 and the
#'   authors' Stata `lwdid` for large panels) or `"never_treated"`.
#' @param vcov `"iid"` (default, classical) or `"hetero"` (HC1), for
#'   `est_method = "ra"`; with `cluster`, clustered (CR1).
#' @param cluster A unit-constant clustering column, or `NULL`.
#' @param alpha Level of the intervals is `1 - alpha`.
#' @param nboot Bootstrap draws (0: none): the wild bootstrap with the null
#'   imposed (common timing, `"ra"`) or the multiplier bootstrap (several
#'   cohorts).
#' @param boot_weights `"rademacher"` (default), `"mammen"` or `"webb"`.
#' @param cband Uniform band over the event times (several cohorts, needs
#'   `nboot > 0`).
#' @param nperm Randomisation-inference permutations (0: none; common
#'   timing, `"ra"`).
#' @param ... did's spellings `alp`, `bstrap`, `biters`; anything else is an
#'   error.
#' @return A `did_lwdid` fit (a `dd_fit`) with rows `ATT`, `tau_omega`
#'   (when it applies), `cohort::g` and `event::e` (with an event-study
#'   component), `cells` (one row per cohort-period cell: estimate, standard
#'   error, degrees of freedom, treated and comparison units), `ri` (the
#'   randomisation test) and the settings.
#' @references Lee, S. J. and Wooldridge, J. M. (2025). A simple
#'   transformation approach to difference-in-differences estimation for
#'   panel data. SSRN 4516518.
#'
#'   Lee, S. J. and Wooldridge, J. M. (2026). Simple approaches to inference
#'   with difference-in-differences estimators with small cross-sectional
#'   sample sizes. SSRN 5325686.
#' @examples
#' d <- read.csv(system.file("extdata", "sim_panel.csv", package = "diffdiff"))
#' fit <- did_lwdid(d, "y", "id", "year", "first_treat")
#' fit
#' plot(fit)
#' @export
did_lwdid <- function(data, yname, idname, tname, gname, xformla = NULL,
                      transformation = c("demean", "detrend"), est_method = c("ra", "ipw", "dr", "psm"),
                      control_group = c("not_yet_treated", "never_treated"), vcov = c("iid", "hetero"),
                      cluster = NULL, alpha = 0.05, nboot = 0, boot_weights = c("rademacher", "mammen", "webb"),
                      cband = FALSE, nperm = 0, ...) {
  call <- match.call()
  dd_required(c("data", "yname", "idname", "tname", "gname"))
  dd_check_data(data)
  sp <- dd_spec(alpha, nboot, boot_weights[1], cband, dots = list(...), aliases = c("alp", "bstrap", "biters"),
                fun = "did_lwdid")
  transformation <- dd_match_vocab(transformation[1], c("demean", "detrend"), "transformation")
  est_method <- dd_match_vocab(est_method[1], c("ra", "ipw", "dr", "psm"), "est_method")
  control_group <- dd_match_vocab(control_group[1], c("not_yet_treated", "never_treated"), "control_group")
  vcov <- dd_match_vocab(vcov[1], c("iid", "hetero"), "vcov")
  nperm <- dd_check_count(nperm, "nperm")
  xformla <- dd_check_xformla(xformla, data)
  if (est_method != "ra" && is.null(xformla))
    dd_stop("`est_method` = \"%s\" needs covariates for the propensity score: give `xformla`.", est_method)
  if (!is.null(cluster)) dd_check_string(cluster, "cluster")
  if (est_method == "psm" && (!is.null(cluster) || sp$nboot > 0L))
    dd_stop("`est_method` = \"psm\" has no variance to cluster or bootstrap (matching estimates have no influence function here); drop `%s`.",
            if (!is.null(cluster)) "cluster" else "nboot")
  pan <- dd_panel(data, yname, idname, tname, c(gname = gname), xformla, cluster = cluster, sorted = TRUE)
  L <- dd_lw_layout(pan, xformla, cluster, gname, transformation)
  common <- length(L$cohorts) == 1L
  if (nperm > 0L && !(common && est_method == "ra"))
    dd_stop("`nperm` = %d: randomisation inference needs common timing (one cohort; here %d) and `est_method` = \"ra\" (here \"%s\").",
            nperm, length(L$cohorts), est_method)
  if (sp$cband && common)
    dd_stop("`cband` = TRUE: the uniform band comes from the multiplier bootstrap of a staggered design; with one cohort use the exact t intervals or `nboot` (wild bootstrap of the ATT).")
  if (sp$nboot > 0L && common && est_method != "ra")
    dd_stop("`nboot` = %d: with one cohort the bootstrap is the wild bootstrap of the regression (`est_method` = \"ra\"); got \"%s\".",
            sp$nboot, est_method)
  opts <- list(method = est_method, vcov = if (!is.null(cluster)) "cluster" else vcov, clustered = !is.null(cluster))
  cells <- dd_lw_cells(L, transformation, control_group, opts)
  dd_lw_result(L, cells, common, transformation, est_method, control_group, opts, sp, nperm, call, yname, cluster)
}

# The panel laid out for the transformations: outcome (units x sorted
# periods, NA where unobserved; units in sorted order of their
# identifiers), each unit's cohort (0 never), the covariates and cluster
# per unit (constant within units), the cohorts that have the
# pre-periods their transform needs.
dd_lw_layout <- function(pan, xformla, cluster, gname, transformation) {
  tlev <- sort(unique(pan$tt))
  if (length(tlev) < 2L) dd_stop("`tname` has a single period; rolling DiD needs at least two.")
  first <- dd_first_rows(pan$idc)
  o <- order(pan$idc[first])                         # sorted codes: units in sorted order of identifiers
  first <- first[o]
  Y <- dd_panel_wide(pan, pan$y)
  G <- as.double(pan$g[first])
  X <- NULL
  if (!is.null(xformla)) {
    Xr <- as.matrix(pan$X)
    for (j in seq_len(ncol(Xr)))
      dd_check_constant_within(Xr[, j], pan$id, "xformla", colnames(Xr)[j], code = pan$idc)
    X <- Xr[first, , drop = FALSE]
  }
  cl <- NULL
  if (!is.null(cluster)) {
    dd_check_constant_within(pan$cluster[[1]], pan$id, "cluster", cluster, code = pan$idc)
    cl <- pan$cluster[[1]][first]
    dd_check_nclusters(length(unique(cl)), cluster)
  }
  gpos <- match(G, tlev)
  bad <- which(G > 0 & G >= tlev[1] & is.na(gpos))   # (before the first period: treated before the data)
  if (length(bad))
    dd_stop("`gname` = \"%s\" must be a period of `tname` (or 0, Inf, NA for never treated); unit %s has %s.",
            gname, dd_show(pan$id[first][bad[1]]), format(G[bad[1]]))
  need <- if (transformation == "demean") 1L else 2L
  glist <- sort(unique(G[G > 0]))
  npre <- vapply(glist, function(g) sum(tlev < g), 1L)
  notes <- pan$notes
  skip <- glist[npre < need]
  if (length(skip))
    notes <- c(notes, sprintf("cohort(s) %s skipped: fewer than %d period(s) before treatment for `transformation` = \"%s\".",
                              paste(skip, collapse = ", "), need, transformation))
  cohorts <- glist[npre >= need]
  if (!length(cohorts))
    dd_stop("no cohort of `gname` = \"%s\" has the %d pre-treatment period(s) that `transformation` = \"%s\" needs.",
            gname, need, transformation, .code = "NO_TREATED")
  if (!any(G == 0)) {
    late <- max(cohorts)
    notes <- c(notes, sprintf("no never-treated units: cohort %s serves only as a not-yet-treated comparison.", late))
  }
  list(Y = Y, G = G, X = X, cl = cl, tlev = tlev, cohorts = cohorts, ids = pan$id[first], n_units = length(first),
       nobs = length(pan$y), notes = notes, need = need)
}

# The rolling transform of every unit with cohort g's pre-window (periods
# before g): the outcome minus the unit's pre-mean (demean) or its own
# pre-period linear trend (detrend); NA for units without enough
# pre-period observations.
dd_lw_transform <- function(Y, tlev, g, transformation) {
  pre <- tlev < g
  Yp <- Y[, pre, drop = FALSE]
  ob <- !is.na(Yp)
  n <- rowSums(ob)
  Y0 <- Yp; Y0[!ob] <- 0
  if (transformation == "demean") {
    m <- rowSums(Y0) / n
    m[n < 1] <- NA_real_
    return(Y - m)
  }
  s <- tlev[pre] - mean(tlev[pre])                 # centred periods (the same residuals)
  S <- matrix(s, nrow(Yp), length(s), byrow = TRUE) * ob
  St <- rowSums(S); Stt <- rowSums(S * S); Sy <- rowSums(Y0); Sty <- rowSums(S * Y0)
  den <- n * Stt - St^2
  b <- (n * Sty - St * Sy) / den
  a <- (Sy - b * St) / n
  bad <- n < 2 | !(abs(den) > 1e-12 * pmax(1, n * Stt))
  a[bad] <- NA_real_; b[bad] <- NA_real_
  Y - a - outer(b, tlev - mean(tlev[pre]))
}

# Every cell (cohort g, period t), post-treatment and placebo, except the
# reference periods; each with its estimate, influence function (one value
# per unit of the cell) and degrees of freedom.
dd_lw_cells <- function(L, transformation, control_group, opts) {
  refs <- if (transformation == "demean") -1L else c(-2L, -1L)
  out <- list()
  L$Ydot <- list()
  for (g in L$cohorts) {
    Yd <- dd_lw_transform(L$Y, L$tlev, g, transformation)
    gp <- match(g, L$tlev)
    for (j in seq_along(L$tlev)) {
      e <- j - gp
      if (e %in% refs) next
      t <- L$tlev[j]
      ctrl <- if (control_group == "never_treated") L$G == 0 else L$G == 0 | L$G > max(g, t)
      tr <- L$G == g
      y <- Yd[, j]
      keep <- which((tr | ctrl) & is.finite(y))
      D <- as.double(tr[keep])
      r <- list(g = g, t = t, e = e, n_treated = sum(D), n_control = sum(1 - D), units = keep, est = NA_real_,
                psi = NULL, df = NA_real_)
      if (r$n_treated >= 1 && r$n_control >= 1 && (control_group != "never_treated" || r$n_control >= 2))
        r <- c(r[setdiff(names(r), c("est", "psi", "df"))],
               dd_lw_estimate(y[keep], D, dd_lw_rows(L$X, keep), L$cl[keep], opts))
      out[[length(out) + 1L]] <- r
    }
  }
  out
}

# One cross-section estimate: est, psi (influence function over the given
# units, scaled so that sum(psi^2), summed within clusters, is the
# variance; NULL without one) and df.
dd_lw_estimate <- function(y, D, X, cl, opts) {
  na <- list(est = NA_real_, psi = NULL, df = NA_real_)
  if (length(y) < 3L) return(na)
  switch(opts$method, ra = dd_lw_ra(y, D, X, cl, opts), ipw = dd_lw_ipw(y, D, X, cl, FALSE),
         dr = dd_lw_ipw(y, D, X, cl, TRUE), psm = dd_lw_psm(y, D, X))
}

# the regression-adjustment design: [1, D, X, D (X - Xbar_1)] when both
# groups have more than K + 1 units, else [1, D, X]
dd_lw_design <- function(D, X) {
  if (is.null(X) || !ncol(X)) return(cbind(D = D))
  K <- ncol(X)
  n1 <- sum(D); n0 <- sum(1 - D)
  if (n1 > K + 1 && n0 > K + 1) {
    Xc <- sweep(X, 2, colMeans(X[D == 1, , drop = FALSE]))
    colnames(Xc) <- paste0("D:", colnames(X))
    cbind(D = D, X, Xc * D)
  } else cbind(D = D, X)
}

dd_lw_ra <- function(y, D, X, cl, opts) {
  na <- list(est = NA_real_, psi = NULL, df = NA_real_)
  Z <- dd_lw_design(D, X)
  reg <- suppressMessages(dd_regress(y, Z))
  if (!isTRUE(reg$keep[match("D", names(reg$coef))])) return(na)
  n <- length(y); k <- reg$rank
  if (n - k <= 0) return(na)
  a <- drop(reg$Xd %*% reg$bread[, "D"])
  e <- reg$resid
  s <- a * e
  ss <- sum(s^2)
  est <- reg$coef[["D"]]
  if (opts$vcov == "iid") {
    v <- sum(e^2) / (n - k) * reg$bread["D", "D"]
    psi <- if (ss > 0) s * sqrt(v / ss) else s
    df <- n - k
  } else if (opts$vcov == "hetero") {
    psi <- s * sqrt(n / (n - k)); df <- n - k
  } else {
    Gc <- length(unique(cl))
    if (Gc < 2L) return(list(est = est, psi = NULL, df = NA_real_))
    psi <- s * sqrt(Gc / (Gc - 1) * (n - 1) / (n - k)); df <- Gc - 1
  }
  list(est = est, psi = psi, df = df)
}

# the logit propensity score on [1, X] (the package's GLM engine)
dd_lw_pscore <- function(D, X) {
  fit <- suppressMessages(dd_glm(D, X, family = "logit"))
  p <- fit$mu
  if (any(p < 1e-8 | p > 1 - 1e-8))
    warning("propensity scores within 1e-8 of 0 or 1 (near separation); the weighted estimates are unstable.",
            call. = FALSE)
  list(p = p, x = cbind(1, X)[, c(TRUE, fit$reg$keep[-1]), drop = FALSE])
}

# IPW (Hajek, odds weights) and IPWRA (dr = TRUE): estimates and their
# influence functions from the stacked estimating equations (M-estimation:
# the logit score x (D - p); for ipw the weighted control mean (1 - D) w (y
# - mu0), for dr the control outcome regression (1 - D) w x (y - x'b), with
# w = p / (1 - p) = exp(x'g) so that dw/dg = w x'; and the treated mean):
# IF = -J^{-1} m, whose sum of squares over n^2 is the sandwich variance
# (clustered: summed within clusters, times G / (G - 1))
dd_lw_ipw <- function(y, D, X, cl, dr) {
  ps <- dd_lw_pscore(D, X)
  p <- ps$p; x <- ps$x
  n <- length(y); tr <- D == 1; co <- !tr
  pbar <- mean(D)
  w <- ifelse(co, p / (1 - p), 0)
  A <- crossprod(x * (p * (1 - p)), x) / n
  IFg <- (x * (D - p)) %*% solve(A)                       # rows: the logit coefficients' IF
  if (!dr) {
    y1 <- mean(y[tr]); mu0 <- sum(w * y) / sum(w)
    est <- y1 - mu0
    h <- colSums(x * (w * (y - mu0))) / n                 # d E[(1 - D) w (y - mu0)] / dg
    IF <- D * (y - y1) / pbar - (w * (y - mu0) + drop(IFg %*% h)) / (sum(w) / n)
    nparam <- ncol(x)
  } else {
    ob <- suppressMessages(dd_regress(y[co], X[co, , drop = FALSE], w = w[co]))
    b <- ob$coef; b[!ob$keep] <- 0
    r <- y - drop(cbind(1, X) %*% b)
    est <- mean(r[tr]) - sum(w * r) / sum(w)              # (the second term is 0 up to rounding)
    xo <- cbind(1, X)[, ob$keep, drop = FALSE]
    Q <- crossprod(xo * w, xo) / n
    Jbg <- crossprod(xo * (w * r), x) / n                 # d E[(1 - D) w x r] / dg
    IFb <- (xo * (w * r) + IFg %*% t(Jbg)) %*% solve(Q)   # rows: the outcome model's IF
    IF <- D * (r - mean(r[tr])) / pbar - drop(IFb %*% colMeans(xo[tr, , drop = FALSE]))
    nparam <- 1 + ncol(xo)
  }
  if (is.null(cl)) {
    out <- IF / n; df <- n - nparam
  } else {
    Gc <- length(unique(cl))
    if (Gc < 2L) return(list(est = est, psi = NULL, df = NA_real_))
    out <- IF / n * sqrt(Gc / (Gc - 1)); df <- Gc - 1
  }
  list(est = est, psi = out, df = if (df > 0) df else NA_real_)
}

# nearest-neighbour matching on the propensity score (one control per
# treated unit, with replacement, ties to the first control in unit order)
dd_lw_psm <- function(y, D, X) {
  p <- dd_lw_pscore(D, X)$p
  ic <- which(D == 0)
  m <- vapply(which(D == 1), function(i) ic[which.min(abs(p[ic] - p[i]))], 1L)
  list(est = mean(y[D == 1] - y[m]), psi = NULL, df = NA_real_)
}

dd_lw_rows <- function(X, keep) if (is.null(X)) NULL else X[keep, , drop = FALSE]

# A unit's mean of its transformed outcomes over the periods from g on (the
# periods where it is observed; NA if none)
dd_lw_post_mean <- function(Yd, tlev, g) {
  P <- Yd[, tlev >= g, drop = FALSE]
  ob <- is.finite(P)
  P[!ob] <- 0
  m <- rowSums(P) / rowSums(ob)
  m[rowSums(ob) == 0] <- NA_real_
  m
}

# LW (2026)'s composite regression for staggered designs with never-treated
# controls (eqs 7.11-7.19): treated units' own-cohort post means, never-
# treated units' cohort-share-weighted post means (complete cases; shares
# over the surviving treated units), regressed on the treatment
dd_lw_tau_omega <- function(L, transformation, opts) {
  M <- vapply(L$cohorts, function(g) dd_lw_post_mean(dd_lw_transform(L$Y, L$tlev, g, transformation), L$tlev, g),
              numeric(L$n_units))
  M <- matrix(M, L$n_units)
  tr <- which(L$G %in% L$cohorts)
  own <- M[cbind(tr, match(L$G[tr], L$cohorts))]
  tr <- tr[is.finite(own)]; own <- own[is.finite(own)]
  om <- tabulate(match(L$G[tr], L$cohorts), length(L$cohorts))
  om <- om / sum(om)
  nv <- which(L$G == 0)
  use <- om > 0
  yc <- drop(M[nv, use, drop = FALSE] %*% om[use])
  nv <- nv[is.finite(yc)]; yc <- yc[is.finite(yc)]
  units <- c(tr, nv)
  o <- order(units)
  y <- c(own, yc)[o]; D <- rep(c(1, 0), c(length(tr), length(nv)))[o]; units <- units[o]
  c(list(units = units, n_treated = length(tr), n_control = length(nv)),
    if (length(tr) >= 1L && length(nv) >= 1L) dd_lw_estimate(y, D, NULL, L$cl[units], opts)
    else list(est = NA_real_, psi = NULL, df = NA_real_))
}

# the unit rows of an estimate's influence function (zero outside its units)
dd_lw_ucol <- function(r, N) {
  u <- numeric(N)
  if (!is.null(r$psi)) u[r$units] <- r$psi
  u
}

dd_lw_result <- function(L, cells, common, transformation, est_method, control_group, opts, sp, nperm, call, yname,
                         cluster) {
  N <- L$n_units
  est_c <- vapply(cells, `[[`, 0, "est")
  fin <- is.finite(est_c)
  if (!any(fin & vapply(cells, `[[`, 0, "e") >= 0))
    dd_stop("no post-treatment cell has both treated units of its cohort and comparison units with a transformed outcome.")
  hasif <- vapply(cells, function(r) !is.null(r$psi), NA) & fin
  n1 <- vapply(cells, `[[`, 0, "n_treated")
  ev <- vapply(cells, `[[`, 0, "e"); gg <- vapply(cells, `[[`, 0, "g")
  Uc <- vapply(cells, dd_lw_ucol, numeric(N), N = N)
  Uc <- matrix(Uc, N)
  b <- ifelse(fin, est_c, 0)
  # the rows as combinations of the cells: event times, cohorts, overall
  es <- sort(unique(ev[fin]))
  wrow <- function(sel) { w <- ifelse(sel & fin, n1, 0); if (sum(w) > 0) w / sum(w) else w }
  Se <- t(vapply(es, function(e) wrow(ev == e), numeric(length(cells))))
  gs <- L$cohorts[vapply(L$cohorts, function(g) any(fin & gg == g & ev >= 0), NA)]
  Sg <- t(vapply(gs, function(g) wrow(gg == g & ev >= 0), numeric(length(cells))))
  mass <- vapply(gs, function(g) {
    u <- unique(unlist(lapply(cells[fin & gg == g & ev >= 0], `[[`, "units")))
    sum(L$G[u] == g)
  }, 0)
  Sa <- matrix(colSums(Sg * (mass / sum(mass))), 1)
  S <- rbind(Sa, Sg, Se)
  terms <- c("ATT", paste0("cohort::", gs), paste0("event::", es))
  rownames(S) <- terms
  lc <- dd_lincom(b, NULL, S, terms, ifs = Uc)
  est <- lc$estimate; U <- lc$ifs; colnames(U) <- terms
  ok <- rowSums(S[, !hasif, drop = FALSE] != 0) == 0
  # degrees of freedom: a row of one cell has that cell's; clustered rows
  # G - 1 over their clusters; else the normal reference
  one <- rowSums(S != 0) == 1L
  cdf <- vapply(cells, function(r) as.double(r$df), 0)
  df <- ifelse(one, cdf[max.col(S != 0, ties.method = "first")], Inf)
  if (!is.null(L$cl))
    df <- vapply(seq_along(terms), function(k) length(unique(L$cl[U[, k] != 0])) - 1, 0)
  extra_rows <- list()
  if (common) {
    g <- L$cohorts
    y <- dd_lw_post_mean(dd_lw_transform(L$Y, L$tlev, g, transformation), L$tlev, g)
    keep <- which((L$G == g | L$G == 0) & is.finite(y))
    D <- as.double(L$G[keep] == g)
    r <- c(list(units = keep, n_treated = sum(D), n_control = sum(1 - D)),
           dd_lw_estimate(y[keep], D, dd_lw_rows(L$X, keep), L$cl[keep], opts))
    if (!is.finite(r$est)) dd_stop("the post-period average regression is not estimable (too few units, or the treatment column is collinear).")
    est[["ATT"]] <- r$est; U[, "ATT"] <- dd_lw_ucol(r, N); ok[1] <- !is.null(r$psi); df[1] <- r$df
    collapsed <- list(y = y[keep], D = D, X = dd_lw_rows(L$X, keep), cl = L$cl[keep])
  }
  if (!common && control_group == "never_treated" && est_method == "ra" && is.null(L$X)) {
    r <- dd_lw_tau_omega(L, transformation, opts)
    if (is.finite(r$est)) {
      est <- c(est[1], tau_omega = r$est, est[-1]); U <- cbind(U[, 1, drop = FALSE], tau_omega = dd_lw_ucol(r, N), U[, -1, drop = FALSE])
      ok <- c(ok[1], !is.null(r$psi), ok[-1]); df <- c(df[1], r$df, df[-1])
      terms <- names(est)
    }
  }
  names(ok) <- names(df) <- terms
  band <- which(startsWith(terms, "event::"))
  sp1 <- sp
  if (common) sp1$nboot <- 0L
  what <- "Rolling DiD cell influence functions"
  how <- switch(opts$vcov, iid = "classical per cell", hetero = "HC1 per cell",
                cluster = sprintf("clustered by %s (CR1 per cell)", cluster))
  if (est_method %in% c("ipw", "dr")) how <- if (is.null(cluster)) "sandwich per cell" else sprintf("clustered by %s", cluster)
  res <- dd_if_result(est, U, 1, sp1, band, what, how, ok = ok, cluster = L$cl)
  V <- res$V; dimnames(V) <- list(terms, terms)
  tab <- if (sp1$nboot > 0L) res$tab else dd_coef_table(est, sqrt(diag(V)), df, sp$alpha)
  if (sp1$nboot > 0L) df[] <- Inf
  tab$event <- ifelse(startsWith(terms, "event::"), suppressWarnings(as.numeric(sub("^event::", "", terms))), NA)
  # cells: their own inference (standard errors from the influence-function layer)
  cse <- dd_if_se(dd_ifs_dense(Uc), 1, L$cl)
  cse[!fin | !hasif] <- NA_real_
  ctab <- dd_coef_table(stats::setNames(est_c, sprintf("ATT(%s,%s)", gg, vapply(cells, `[[`, 0, "t"))), cse, cdf, sp$alpha)
  ctab <- cbind(ctab, group = gg, time = vapply(cells, `[[`, 0, "t"), event = ev, df = cdf, n_treated = n1,
                n_control = vapply(cells, `[[`, 0, "n_control"))
  wild <- NULL; ri <- NULL
  if (common && sp$nboot > 0L) {
    w <- dd_lw_wild(collapsed, sp)
    tab$boot.p.value <- tab$boot.conf.low <- tab$boot.conf.high <- NA_real_
    tab$boot.p.value[1] <- w$p.value; tab$boot.conf.low[1] <- w$conf.low; tab$boot.conf.high[1] <- w$conf.high
    wild <- w[c("nboot", "boot_weights", "G")]
  }
  if (nperm > 0L) ri <- dd_lw_ri(collapsed, est[["ATT"]], nperm)
  notes <- L$notes
  if (any(!fin)) notes <- c(notes, sprintf("%d cell(s) not estimable (no treated or comparison units, or a singular design).", sum(!fin)))
  if (est_method == "psm") notes <- c(notes, "matching (est_method = \"psm\") has no standard errors.")
  vtype <- if (est_method %in% c("ipw", "dr", "psm")) "influence function" else opts$vcov
  title <- sprintf("Rolling DiD (did_lwdid, %s, %s%s)", transformation, est_method,
                   if (common) ", common timing" else "")
  info <- dd_info("did_lwdid", title, yname, L$nobs, vtype, res$label, df, sp$alpha,
                  intersect(c("ATT", "tau_omega"), terms), n_units = N,
                  n_periods = length(L$tlev), n_clusters = if (is.null(L$cl)) NULL else res$n_clusters,
                  notes = notes,
                  more = list(crit = if (is.finite(res$crit)) res$crit else NULL, wild_boot = wild))
  new_dd_fit("did_lwdid", tab, stats::setNames(tab$estimate, tab$term), V, info, call,
             list(event_study = dd_es_spec(base_period = "transformation"), cells = ctab, transformation = transformation,
                  est_method = est_method, control_group = control_group, cohorts = L$cohorts,
                  common_timing = common, ri = ri, nboot = sp$nboot, boot_weights = sp$boot_weights,
                  cband = sp$cband))
}

# the regression-adjustment coefficient on D in the collapsed cross-section
dd_lw_ra_coef <- function(y, D, X) {
  Z <- cbind(1, dd_lw_design(D, X))
  q <- qr(Z)
  if (q$rank < ncol(Z) && !(2L %in% q$pivot[seq_len(q$rank)])) return(NA_real_)
  qr.coef(q, y)[2]
}

# Randomisation inference on the collapsed regression: the treatment
# permuted over its units (exact enumeration of all assignments when there
# are at most nperm; else nperm permutations from R's stream)
dd_lw_ri <- function(cd, b0, nperm) {
  n <- length(cd$y); n1 <- sum(cd$D)
  nall <- choose(n, n1)
  stat <- if (is.null(cd$X)) function(d) mean(cd$y[d == 1]) - mean(cd$y[d == 0])
          else function(d) dd_lw_ra_coef(cd$y, d, cd$X)
  exact <- nall <= nperm
  idx <- if (exact) utils::combn(n, n1, simplify = FALSE) else lapply(seq_len(nperm), function(b) sample.int(n, n1))
  bs <- vapply(idx, function(i) { d <- numeric(n); d[i] <- 1; stat(d) }, 0)
  bs <- bs[is.finite(bs)]
  hit <- sum(abs(bs) >= abs(b0) * (1 - 1e-12))
  p <- if (exact) hit / length(bs) else (hit + 1) / (length(bs) + 1)
  list(p.value = p, exact = exact, n_assignments = length(bs), nperm = nperm, statistic = b0)
}

# the wild (cluster) bootstrap of the collapsed regression, null imposed
# (the regression layer's dd_wild: units, or clusters, in sorted order)
dd_lw_wild <- function(cd, sp) {
  Z <- dd_lw_design(cd$D, cd$X)
  reg <- suppressMessages(dd_regress(cd$y, Z))
  bcl <- if (is.null(cd$cl)) NULL else dd_sorted_codes(cd$cl)
  if (!is.null(bcl)) dd_warn_same_weight(attr(bcl, "nlev"), sp$boot_weights, sp$alpha)
  dd_wild(reg, "D", bcl, sp$nboot, sp$boot_weights, sp$alpha, obs_codes = seq_along(cd$y) - 1L)
}
