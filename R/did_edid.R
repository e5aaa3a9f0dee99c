#' Efficient difference in differences (Chen, Sant'Anna and Xie)
#'
#' The efficient ATT(g,t) of Chen, Sant'Anna and Xie (2025) for staggered
#' adoption with a never-treated group. Under parallel trends in all periods
#' (`pt_assumption = "all"`, the paper's efficient estimator) each ATT(g,t)
#' combines every valid comparison: the long difference of cohort g from the
#' first period, `Y_t - Y_1`, against the never treated's, and against every
#' cohort g' that is still untreated at a period t' (`t_1 < t' < g' -
#' anticipation`), the moment `mean_g(Y_t - Y_1) - mean_never(Y_t - Y_t') -
#' mean_g'(Y_t' - Y_1)`. The moments are weighted by the efficient (GMM)
#' weights `Omega^-1 1 / (1' Omega^-1 1)`, with `Omega` the covariance of
#' their influence functions, and the influence function of the combination
#' is the efficient influence function. With one comparison (two periods, or
#' no cohort but the never treated) it is the Callaway-Sant'Anna ATT(g,t)
#' with never-treated comparisons. `pt_assumption = "post"` keeps only the
#' never treated and the period before adoption: [did_cs()] with
#' `control_group = "nevertreated"`, `base_period = "universal"`,
#' `est_method = "reg"` and no covariates.
#'
#' With covariates (`xformla`), every moment is the mean of the paper's doubly
#' robust generated outcomes (its Eq. 4.4): the long differences net of the
#' comparison groups' conditional means `m(X)` (linear regressions on the
#' covariates within each group) and the comparison units reweighted by the
#' propensity ratios `p_g(X) / p_c(X)` (the paper's convex sieve problem with
#' a linear basis: its normal equations make the reweighted covariate means of
#' each comparison group those of cohort g). The influence functions include
#' the estimated cohort share; `Omega` is their covariance and the weights are
#' `Omega^-1 1 / (1' Omega^-1 1)` as without covariates. Covariates are
#' taken at the first period (they should not vary over time) and must vary
#' within every cohort and the never treated. Two deliberate simplifications
#' of the paper's fully efficient version: the weights do not vary with `X`
#' (the paper estimates a conditional `Omega(X)` by kernel smoothing; constant
#' weights keep the estimator consistent and are efficient when the moments'
#' conditional covariance does not depend on `X`), and the sieve has degree
#' one (no data-driven basis). With the same linear basis in the regressions
#' and the sieve, each moment equals the regression-adjusted one; under
#' `pt_assumption = "post"` did_edid is [did_cs()] with `est_method = "reg"`
#' and the same covariates.
#'
#' Inference runs through the shared influence-function layer: analytic
#' standard errors `sqrt(sum(psi^2)) / n`, clusters (sums of the influence
#' functions by cluster, as [did_cs()]), survey designs, the multiplier
#' bootstrap with uniform bands; `aggregate()` gives the event study
#' (`"dynamic"`, cohort shares with their estimation term; its overall row
#' is the paper's average over event times `e >= 0`), `"group"`, `"simple"`
#' and `"calendar"` summaries through [aggregate.did_cs()].
#'
#' @section Checked against:
#' No R package implements the estimator. The tests reproduce the paper's
#' Table 6 on the HRS hospitalisation sample shipped in
#' `inst/extdata/hrs_edid.csv` (656 individuals; the paper had 652): all
#' ten published point estimates to the integer and the standard errors
#' within 0.2% of the published ones. By construction, with one comparison
#' the estimates and standard errors equal [did_cs()]'s. The Python library
#' diff-diff (3.3.2) builds `Omega` from five separate covariance terms that
#' leave out the never treated's cross-covariances and keeps a copy of the
#' never-treated moment per base period: its weights are not the efficient
#' ones and its estimates on the HRS sample differ by up to 0.026 published
#' standard errors; did_edid uses the covariance of the moments (with the
#' within-group divisor n_c, which reproduces the published numbers; n_c - 1
#' misses four of them by one dollar). With covariates no published numbers
#' or implementation of the paper's estimator were available here: the tests
#' compare with a direct unit-by-unit computation of the generated outcomes,
#' with the estimator without covariates (`xformla = ~ 1`) and with
#' [did_cs()] (`pt_assumption = "post"`); diff-diff's covariate version
#' differs (kernel-smoothed weights, clipped ratios, an influence function
#' without the cohort share's term).
#'
#' @param data A balanced panel (units missing periods are dropped with a
#'   warning).
#' @param yname,idname,tname,gname Outcome, unit, period and first treated
#'   period (0, Inf or NA: never treated; after the last period: never
#'   treated).
#' @param xformla A one-sided covariate formula (e.g. `~ x1 + x2`; first-period
#'   values); `NULL` (default): no covariates.
#' @param pt_assumption `"all"` (default): parallel trends in all periods,
#'   the efficient estimator; `"post"`: only from the period before adoption
#'   on (one comparison per cell).
#' @param anticipation Periods of anticipation.
#' @param weightsname Sampling weights (constant within unit).
#' @param cluster A column to cluster on (units nested in clusters).
#' @param survey A complex survey design (as in [did_cs()]).
#' @param nboot,boot_weights,cband,alpha Multiplier bootstrap draws (0:
#'   analytic), weights, uniform band over the ATT(g,t), significance level.
#' @param ... Not used (an error if given).
#' @return A fit of class `c("did_edid", "dd_fit")` with one row per
#'   ATT(g,t) (`group`, `time`, `event`, `comparisons`: the number of moments
#'   combined); `fit$weights` lists each cell's moments and efficient weights;
#'   `fit$engine` is `"means"` without covariates (cohort means and second
#'   moments) and `"generated_outcomes"` with them.
#' @references Chen, X., Sant'Anna, P. H. C. and Xie, H. (2025). Efficient
#'   difference-in-differences and event study estimators.
#' @examples
#' d <- read.csv(system.file("extdata", "hrs_edid.csv", package = "diffdiff"))
#' fit <- did_edid(d, "outcome", "unit", "time", "first_treat")
#' fit
#' es <- aggregate(fit, type = "dynamic")
#' es
#' plot(es)
#' # with a (here simulated, time-invariant) covariate
#' set.seed(1)
#' d$age <- stats::rnorm(length(unique(d$unit)), 55, 5)[match(d$unit, unique(d$unit))]
#' did_edid(d, "outcome", "unit", "time", "first_treat", xformla = ~ age)
#' @export
did_edid <- function(data, yname, idname, tname, gname, xformla = NULL, pt_assumption = c("all", "post"),
                     anticipation = 0, weightsname = NULL, cluster = NULL, survey = NULL, nboot = 0,
                     boot_weights = c("rademacher", "mammen", "webb"), cband = FALSE, alpha = 0.05, ...) {
  call <- match.call()
  dd_required(c("data", "yname", "idname", "tname", "gname"))
  dd_did_aliases(list(...), character(), "did_edid")
  sp <- dd_spec(alpha = alpha, nboot = nboot, boot_weights = boot_weights, cband = cband, cluster = cluster)
  dd_check_data(data)
  pt_assumption <- dd_match_arg(pt_assumption[1], c("all", "post"), "pt_assumption")
  anticipation <- dd_check_count(anticipation, "anticipation")
  if (!is.null(xformla)) {
    if (!inherits(xformla, "formula") || length(xformla) != 2L)
      dd_stop("`xformla` must be a one-sided formula such as ~ x1 + x2; it is %s.",
              paste(deparse(xformla), collapse = " "))
    xlab <- paste(deparse(xformla), collapse = " ")
  }
  dd_check_string(cluster, "cluster", null_ok = TRUE)
  if (!is.null(cluster) && identical(cluster, idname)) cluster <- NULL
  # the units (by cohort) and their influence-function rows (R/unit_panel.R)
  up <- dd_unit_panel(data, yname, idname, tname, gname, xformla, weightsname, cluster, survey, sp$nboot,
                      anticipation = anticipation, need_never = "did_edid()")
  design <- up$design; prep <- up$prep; cl <- up$cl
  rm(up)
  uw1 <- if (is.null(prep$W)) NULL else prep$W[, 1]
  eng <- if (is.null(xformla))
    dd_edid_engine(prep$Y, prep$unit_group, uw1, prep$tlist, prep$glist, anticipation, pt_assumption)
  else   # covariates at the first period (the common baseline)
    dd_edid_engine_x(prep$Y, prep$unit_group, uw1,
                     cbind(rep(1, nrow(prep$Y)), if (is.null(prep$X)) NULL else matrix(prep$X[, , 1], nrow(prep$Y))), prep$tlist,
                     prep$glist, anticipation, pt_assumption, xlab)
  n <- prep$n
  cells <- eng$cells
  K <- nrow(cells)
  ci <- dd_cells_inference(eng$inf, n, cl, K, cells$att, sp)
  se <- ci$se; crit <- ci$crit
  terms <- sprintf("ATT(%s,%s)", format(cells$g, trim = TRUE), format(cells$t, trim = TRUE))
  tab <- dd_if_table(terms, cells$att, se, sp$alpha, crit,
                     data.frame(group = cells$g, time = cells$t, event = cells$t - cells$g,
                                comparisons = cells$H))
  svy_label <- dd_svy_label(design)
  info <- dd_info("did_edid", "Efficient DiD, group-time ATT (did_edid)", yname, prep$nobs,
                  if (sp$nboot > 0L) "bootstrap" else "analytic",
                  paste0(dd_cs_vcov_label(sp$nboot, sp$boot_weights, cluster), svy_label), Inf, sp$alpha, terms,
                  n_units = n, n_periods = length(prep$tlist),
                  n_clusters = if (inherits(cl, "dd_svy_rows")) cl$G else if (is.null(cl)) NULL else length(unique(cl)),
                  notes = prep$notes)
  uw <- prep$unit_weight
  new_dd_fit("did_edid", tab, stats::setNames(cells$att, terms), NULL, info, call,
             list(inf = eng$inf, n = n, units = prep$units, unit_group = prep$unit_group, unit_weight = uw / mean(uw),
                  unit_cluster = cl, periods = prep$tlist, crit = crit, nboot = sp$nboot,
                  boot_weights = sp$boot_weights, cband = sp$cband, pt_assumption = pt_assumption,
                  anticipation = anticipation, tname = tname, cluster = cluster,
                  covariates = if (is.null(xformla)) NULL else xlab,
                  engine = if (is.null(xformla)) "means" else "generated_outcomes",
                  survey_label = if (nzchar(svy_label)) svy_label else NULL, weights = eng$weights))
}

# The efficient ATT(g,t) from the wide panel (Y: n x T, units sorted by
# cohort, G: cohort per unit with 0 for never treated, w: unit weights or
# NULL). Every moment of a cell is a linear function of a unit's outcomes
# within its group (cohort or never treated): moment j = sum_c a_cj' mu_c
# with mu_c the group's (weighted) mean outcome vector, its influence
# function w_i a_cj' (Y_i - mu_c) / pi_c for unit i of group c. So Omega =
# sum_c A_c' M_c A_c / pi_c^2 with M_c = sum_{i in c} w_i^2 (Y_i - mu_c)
# (Y_i - mu_c)' / n, and the efficient influence function of a cell is one
# product (Y_c - mu_c) a_c per group. Returns the cells (g, t, att, H), the
# influence functions (n x (K + |glist|): the cells, then the cohort-share
# columns w 1{G = g} of the aggregations) and the moments with their weights.
dd_edid_engine <- function(Y, G, w, tlist, glist, anticipation, pt_assumption) {
  n <- nrow(Y); T <- ncol(Y)
  wn <- if (is.null(w)) rep(1, n) else w / mean(w)
  groups <- c(glist, 0)
  gi <- match(G, groups)                                  # group of each unit
  if (anyNA(gi)) stop("internal error: units outside the cohorts; please report", call. = FALSE)
  pi_c <- vapply(seq_along(groups), function(k) sum(wn[gi == k]) / n, numeric(1))
  mu <- matrix(0, T, length(groups)); M <- vector("list", length(groups)); Yc <- vector("list", length(groups))
  for (k in seq_along(groups)) {
    s <- which(gi == k)
    ws <- wn[s]
    mu[, k] <- colSums(ws * Y[s, , drop = FALSE]) / sum(ws)
    Yc[[k]] <- sweep(Y[s, , drop = FALSE], 2, mu[, k]) * ws   # w_i (Y_i - mu_c)
    M[[k]] <- crossprod(Yc[[k]]) / n
  }
  e <- function(t) { v <- numeric(T); v[t] <- 1; v }      # period indicator (column index)
  cells <- list(); IFc <- list(); wts <- list()
  for (g in glist) {
    for (ti in seq_len(T)) {
      t <- tlist[ti]
      mm <- dd_edid_moments(g, ti, tlist, glist, anticipation, pt_assumption)
      if (is.null(mm)) next
      base <- mm$base; pr <- mm$pairs
      H <- nrow(pr)
      # coefficient vectors a_cj (T x H per group)
      A <- lapply(seq_along(groups), function(k) {
        c0 <- groups[k]
        Ak <- matrix(0, T, H)
        for (j in seq_len(H)) {
          tp <- pr$tp[j]; gp <- pr$gp[j]
          v <- numeric(T)
          if (c0 == g) v <- v + e(ti) - e(base)
          if (c0 == 0) v <- v - (e(ti) - e(tp))
          if (gp != 0 && c0 == gp) v <- v - (e(tp) - e(base))
          Ak[, j] <- v
        }
        Ak
      })
      yhat <- Reduce(`+`, lapply(seq_along(groups), function(k) drop(crossprod(A[[k]], mu[, k]))))
      if (H == 1L) {
        wt <- 1
      } else {
        Om <- Reduce(`+`, lapply(seq_along(groups), function(k) crossprod(A[[k]], M[[k]] %*% A[[k]]) / pi_c[k]^2))
        wt <- dd_edid_weights(Om, g, t)
      }
      att <- if (ti == base) 0 else sum(wt * yhat)
      cells[[length(cells) + 1L]] <- data.frame(g = g, t = t, att = att, H = if (ti == base) 0L else H)
      IFc[[length(IFc) + 1L]] <- if (ti == base) matrix(0, T, length(groups))
                                 else vapply(seq_along(groups), function(k) drop(A[[k]] %*% wt) / pi_c[k], numeric(T))
      wts[[length(wts) + 1L]] <- data.frame(group = g, time = t, comparison = ifelse(pr$gp == 0, Inf, pr$gp),
                                            base = tlist[pr$tp], moment = yhat, weight = wt)
    }
  }
  cells <- do.call(rbind, cells)
  K <- nrow(cells)
  # influence functions: per group, w_i (Y_i - mu_c)' [a_c(k) / pi_c]_k
  inf <- matrix(0, n, K)
  for (k in seq_along(groups)) {
    s <- which(gi == k)
    if (!length(s)) next
    Bk <- vapply(IFc, function(m) m[, k], numeric(T))
    inf[s, ] <- Yc[[k]] %*% matrix(Bk, T, K)
  }
  wts <- do.call(rbind, wts)
  rownames(wts) <- NULL
  list(cells = cells, weights = wts,
       inf = dd_ifs_dense(cbind(inf, dd_cohort_mat(wn, G, glist))))
}

# The moments of cell (g, tlist[ti]): the base period's column and the
# comparison pairs (gp: comparison cohort, 0 for the never treated; tp: its
# period's column). Parallel trends in all periods: (never, t_1), then every
# (g', t') with t_1 < t' < g' - anticipation, but (g, t); after treatment
# only: (never, the period before adoption). NULL: no cell (t = t_1).
dd_edid_moments <- function(g, ti, tlist, glist, anticipation, pt_assumption) {
  if (pt_assumption == "all") {
    if (ti == 1L) return(NULL)
    pr <- data.frame(gp = 0, tp = 1L)
    for (gp in glist) {
      tps <- which(tlist > tlist[1] & tlist < gp - anticipation)
      tps <- tps[!(gp == g & tps == ti)]
      if (length(tps)) pr <- rbind(pr, data.frame(gp = gp, tp = tps))
    }
    list(base = 1L, pairs = pr)
  } else {
    base <- max(which(tlist < g - anticipation))
    list(base = base, pairs = data.frame(gp = 0, tp = base))
  }
}

# The efficient ATT(g,t) with covariates (the paper's doubly robust generated
# outcomes, its Eq. 4.4). For cell (g,t) and comparison (g',t'), unit i's
# generated outcome is
#   [1{G=g} (Y_t - Y_1 - m_inf(t,t') - m_g'(t',1))
#    - 1{G=inf} r_g,inf(X) (Y_t - Y_t' - m_inf(t,t'))
#    - 1{G=g'} r_g,g'(X) (Y_t' - Y_1 - m_g'(t',1))] / pi_g,
# m_c(a,b) the regression of Y_a - Y_b on Psi = [1, X] within group c and
# r_g,c = p_g(X) / p_c(X) the linear sieve of the propensity ratio: the
# minimiser of E_n[1{G=c} (Psi'b)^2 - 2 1{G=g} Psi'b], whose normal equations
# make the r-weighted covariate means of group c those of cohort g. The
# moment is the (weighted) mean of the generated outcomes; its influence
# function w_i (Yhat_i - 1{G=g} moment / pi_g) (the estimated pi_g's term;
# the nuisances add nothing: Neyman orthogonality). Omega is the covariance
# of these influence functions and the weights Omega^-1 1 / 1'Omega^-1 1 as
# without covariates (constant in X). Psi's columns must vary within every
# group. Same return value as dd_edid_engine().
dd_edid_engine_x <- function(Y, G, w, Psi, tlist, glist, anticipation, pt_assumption, xlab) {
  n <- nrow(Y); T <- ncol(Y)
  wn <- if (is.null(w)) rep(1, n) else w / mean(w)
  groups <- c(glist, 0)
  gi <- match(G, groups)
  if (anyNA(gi)) stop("internal error: units outside the cohorts; please report", call. = FALSE)
  pi_c <- vapply(seq_along(groups), function(k) sum(wn[gi == k]) / n, numeric(1))
  # per group: the weighted least-squares fit of every period's outcome on Psi
  # (fitted values for all units, n x T) and the Cholesky factor of its Gram
  Fit <- vector("list", length(groups)); Rc <- vector("list", length(groups))
  for (k in seq_along(groups)) {
    s <- which(gi == k)
    qa <- qr(sqrt(wn[s]) * Psi[s, , drop = FALSE])
    if (qa$rank < ncol(Psi))
      dd_stop("`xformla` = %s: the covariates are collinear or constant within %s (%d units, %d coefficients with the intercept); the regressions and propensity ratios within each group need them to vary.",
              xlab, if (groups[k] == 0) "the never treated" else paste("cohort", format(groups[k])), length(s),
              ncol(Psi))
    Rc[[k]] <- qr.R(qa)[, order(qa$pivot), drop = FALSE]
    Fit[[k]] <- Psi %*% qr.coef(qa, sqrt(wn[s]) * Y[s, , drop = FALSE])
  }
  # r_g,c(X_i) for the units of group c: Psi_i' (Psi_c' W Psi_c)^-1 sum_{j in g} w_j Psi_j
  ratio <- function(g, k) {
    s <- which(gi == k)
    if (groups[k] == g) return(rep(1, length(s)))
    b <- colSums(wn[gi == match(g, groups)] * Psi[gi == match(g, groups), , drop = FALSE])
    drop(Psi[s, , drop = FALSE] %*% backsolve(Rc[[k]], forwardsolve(t(Rc[[k]]), b)))
  }
  k0 <- length(groups)
  cells <- list(); infl <- list(); wts <- list()
  for (g in glist) {
    kg <- match(g, groups); sg <- which(gi == kg); s0 <- which(gi == k0)
    r0 <- ratio(g, k0)
    for (ti in seq_len(T)) {
      mm <- dd_edid_moments(g, ti, tlist, glist, anticipation, pt_assumption)
      if (is.null(mm)) next
      base <- mm$base; pr <- mm$pairs; t <- tlist[ti]
      H <- nrow(pr)
      if (ti == base) {
        cells[[length(cells) + 1L]] <- data.frame(g = g, t = t, att = 0, H = 0L)
        infl[[length(infl) + 1L]] <- numeric(n)
        wts[[length(wts) + 1L]] <- data.frame(group = g, time = t, comparison = Inf, base = tlist[base],
                                              moment = 0, weight = 1)
        next
      }
      Yh <- matrix(0, n, H)
      F0 <- Fit[[k0]]
      for (j in seq_len(H)) {
        tp <- pr$tp[j]; gp <- pr$gp[j]
        m0 <- F0[, ti] - F0[, tp]                              # m_inf(t, t')
        a <- Y[sg, ti] - Y[sg, base] - m0[sg]
        Yh[s0, j] <- -r0 * (Y[s0, ti] - Y[s0, tp] - m0[s0])
        if (gp != 0) {
          kp <- match(gp, groups); sp <- which(gi == kp)
          mp <- Fit[[kp]][, tp] - Fit[[kp]][, base]            # m_g'(t', 1)
          a <- a - mp[sg]
          Yh[sp, j] <- Yh[sp, j] - ratio(g, kp) * (Y[sp, tp] - Y[sp, base] - mp[sp])
        }
        Yh[sg, j] <- Yh[sg, j] + a
      }
      Yh <- Yh / pi_c[kg]
      yhat <- colSums(wn * Yh) / n
      E <- wn * Yh
      E[sg, ] <- E[sg, , drop = FALSE] - outer(wn[sg], yhat / pi_c[kg])
      wt <- if (H == 1L) 1 else dd_edid_weights(crossprod(E) / n, g, t)
      cells[[length(cells) + 1L]] <- data.frame(g = g, t = t, att = sum(wt * yhat), H = H)
      infl[[length(infl) + 1L]] <- drop(E %*% wt)
      wts[[length(wts) + 1L]] <- data.frame(group = g, time = t, comparison = ifelse(pr$gp == 0, Inf, pr$gp),
                                            base = tlist[pr$tp], moment = yhat, weight = wt)
    }
  }
  cells <- do.call(rbind, cells)
  wts <- do.call(rbind, wts)
  rownames(wts) <- NULL
  list(cells = cells, weights = wts,
       inf = dd_ifs_dense(cbind(do.call(cbind, infl), dd_cohort_mat(wn, G, glist))))
}

# The efficient weights Omega^-1 1 / (1' Omega^-1 1); a singular Omega
# (moments that are exact linear combinations of others) gets the
# Moore-Penrose inverse, with a warning.
dd_edid_weights <- function(Om, g, t) {
  # singular values at most max(dim) eps times the largest are dropped
  p <- dd_pinv(Om, tol = max(dim(Om)) * .Machine$double.eps, rhs = rep(1, nrow(Om)), details = TRUE)
  sv <- p$d
  if (!all(is.finite(sv)) || max(sv) <= 0)
    dd_stop("ATT(%s,%s): the covariance of the comparison moments is zero or not finite (constant outcomes?).",
            format(g), format(t))
  if (min(sv) <= 1e-12 * max(sv))
    warning(sprintf("ATT(%s,%s): the comparison moments are (nearly) collinear; their weights use the pseudo-inverse of their covariance.",
                    format(g), format(t)), call. = FALSE)
  a <- drop(p$x)
  if (abs(sum(a)) <= .Machine$double.eps * sum(abs(a)))
    dd_stop("ATT(%s,%s): the efficient weights are not defined (1' Omega^-1 1 = 0).", format(g), format(t))
  a / sum(a)
}

#' Aggregate a did_edid fit
#'
#' The summaries of [aggregate.did_cs()] for the efficient ATT(g,t):
#' `"dynamic"` (event study; the overall row averages the event times
#' `e >= 0`, the paper's ES_avg), `"group"`, `"simple"`, `"calendar"`, with
#' cohort shares and their estimation in the influence functions.
#'
#' @param x A `did_edid` fit.
#' @param type `"dynamic"` (default; also `"event"`), `"group"`, `"simple"` or `"calendar"`.
#' @param ... Passed to [aggregate.did_cs()].
#' @return A `did_cs_agg` fit.
#' @examples
#' d <- read.csv(system.file("extdata", "hrs_edid.csv", package = "diffdiff"))
#' aggregate(did_edid(d, "outcome", "unit", "time", "first_treat"), type = "simple")
#' @export
aggregate.did_edid <- function(x, type = c("dynamic", "group", "simple", "calendar"), ...)
  dd_agg_via_cs(x, type, if (x$pt_assumption == "all") "pt_all" else "universal", "Efficient DiD", match.call(), ...)

#' @export
vcov.did_edid <- function(object, ...) {
  dd_check_dots(list(...), "vcov()")
  dd_if_vcov(object)
}

# print() and summary(): after the table, the settings
dd_footer.did_edid <- function(x) {
  NextMethod()
  cat(sprintf("Parallel trends: %s; comparisons: never treated%s; anticipation: %d\n",
              if (x$pt_assumption == "all") "all periods (efficient combination)" else "post-treatment periods",
              if (x$pt_assumption == "all") " and not-yet-treated cohorts' earlier periods" else "",
              x$anticipation))
  if (!is.null(x$covariates))
    cat(sprintf("Covariates: %s (doubly robust generated outcomes: linear regressions and linear-sieve propensity ratios within groups; first-period values)\n",
                x$covariates))
  invisible(x)
}
