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
#' misses four of them by one dollar).
#'
#' @param data A balanced panel (units missing periods are dropped with a
#'   warning).
#' @param yname,idname,tname,gname Outcome, unit, period and first treated
#'   period (0, Inf or NA: never treated; after the last period: never
#'   treated).
#' @param xformla Covariates: not implemented yet (an error).
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
#'   combined); `fit$weights` lists each cell's moments and efficient weights.
#' @references Chen, X., Sant'Anna, P. H. C. and Xie, H. (2025). Efficient
#'   difference-in-differences and event study estimators.
#' @examples
#' d <- read.csv(system.file("extdata", "hrs_edid.csv", package = "diffdiff"))
#' fit <- did_edid(d, "outcome", "unit", "time", "first_treat")
#' fit
#' es <- aggregate(fit, type = "dynamic")
#' es
#' plot(es)
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
  if (!is.null(xformla))
    dd_stop("`xformla` = %s: did_edid() does not take covariates yet (the paper's covariate version needs sieve propensity ratios and a conditional covariance); use did_cs() for covariate-adjusted estimates.",
            paste(deparse(xformla), collapse = " "))
  dd_check_string(cluster, "cluster", null_ok = TRUE)
  if (!is.null(cluster) && identical(cluster, idname)) cluster <- NULL
  design <- dd_if_design(survey, data, weightsname, cluster, sp$nboot)
  p <- dd_panel(data, yname, idname, tname, c(gname = gname), NULL, weightsname, cluster, NULL, design,
                x_list = TRUE, anticipation = anticipation)
  if (!any(p$never))
    dd_stop("there are no never-treated units (`gname` = \"%s\" 0, Inf or NA, or after the last period): did_edid() needs them as the comparison group.",
            gname)
  if (!is.null(p$w)) dd_check_constant_within(p$w, p$id, if (is.null(design)) "weightsname" else "survey",
                                              if (is.null(design)) weightsname else "weights", code = p$idc)
  if (!is.null(cluster)) dd_check_constant_within(p$cluster[[1]], p$id, "cluster", cluster, code = p$idc)
  dd_svy_check_units(design, p, idname)
  prep <- dd_cs_prepare(y = p$y, tt = p$tt, g = p$g, never = p$never, id = p$id, w = p$w, X = NULL, idc = p$idc,
                        tc = p$tc, cl = if (length(p$cluster)) p$cluster[[1]] else NULL, nterm = 0L,
                        gname = gname, tname = tname, anticipation = anticipation, control_group = "nevertreated",
                        panel = TRUE, allow_unbalanced = FALSE)
  prow <- p$rows[prep$unit_prow]
  rm(p)
  eng <- dd_edid_engine(prep$Y, prep$unit_group, if (is.null(prep$W)) NULL else prep$W[, 1], prep$tlist,
                        prep$glist, anticipation, pt_assumption)
  n <- prep$n
  cl <- if (!is.null(design)) dd_svy_if_rows(design, prow) else prep$unit_cluster
  if (!is.null(cluster)) dd_check_nclusters(length(unique(cl)), cluster)
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
      if (pt_assumption == "all") {
        if (ti == 1L) next
        base <- 1L
        # moments: (never, t_1), then every (g', t') with t_1 < t' < g' - anticipation, but (g, t)
        pr <- data.frame(gp = 0, tp = 1L)
        for (gp in glist) {
          tps <- which(tlist > tlist[1] & tlist < gp - anticipation)
          tps <- tps[!(gp == g & tps == ti)]
          if (length(tps)) pr <- rbind(pr, data.frame(gp = gp, tp = tps))
        }
      } else {
        base <- max(which(tlist < g - anticipation))
        pr <- data.frame(gp = 0, tp = base)
      }
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

# The efficient weights Omega^-1 1 / (1' Omega^-1 1); a singular Omega
# (moments that are exact linear combinations of others) gets the
# Moore-Penrose inverse, with a warning.
dd_edid_weights <- function(Om, g, t) {
  s <- svd(Om)
  tol <- max(dim(Om)) * max(s$d) * .Machine$double.eps
  if (!all(is.finite(s$d)) || max(s$d) <= 0)
    dd_stop("ATT(%s,%s): the covariance of the comparison moments is zero or not finite (constant outcomes?).",
            format(g), format(t))
  if (min(s$d) <= 1e-12 * max(s$d))
    warning(sprintf("ATT(%s,%s): the comparison moments are (nearly) collinear; their weights use the pseudo-inverse of their covariance.",
                    format(g), format(t)), call. = FALSE)
  d <- ifelse(s$d > tol, 1 / s$d, 0)
  a <- drop(s$v %*% (d * crossprod(s$u, rep(1, nrow(Om)))))
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
#' @param type `"dynamic"` (default), `"group"`, `"simple"` or `"calendar"`.
#' @param ... Passed to [aggregate.did_cs()].
#' @return A `did_cs_agg` fit.
#' @examples
#' d <- read.csv(system.file("extdata", "hrs_edid.csv", package = "diffdiff"))
#' aggregate(did_edid(d, "outcome", "unit", "time", "first_treat"), type = "simple")
#' @export
aggregate.did_edid <- function(x, type = c("dynamic", "group", "simple", "calendar"), ...)
  dd_agg_via_cs(x, type, if (x$pt_assumption == "all") "pt_all" else "universal", "Efficient DiD", match.call(), ...)

#' @export
vcov.did_edid <- function(object, ...) dd_if_vcov(object)

# print() and summary(): after the table, the settings
dd_footer.did_edid <- function(x) {
  NextMethod()
  cat(sprintf("Parallel trends: %s; comparisons: never treated%s; anticipation: %d\n",
              if (x$pt_assumption == "all") "all periods (efficient combination)" else "post-treatment periods",
              if (x$pt_assumption == "all") " and not-yet-treated cohorts' earlier periods" else "",
              x$anticipation))
  invisible(x)
}
