#' Continuous treatments: dose-response difference-in-differences
#'
#' The estimators of Callaway, Goodman-Bacon and Sant'Anna (2024) for a
#' treatment whose intensity (the dose) varies across units, with staggered
#' or common timing, as contdid's `cont_did()`: in each cohort-period cell
#' (g, t), the outcome change of the cohort's units since the base period is
#' regressed on a B-spline in their dose (degree `degree`, `num_knots`
#' interior knots at quantiles of the treated doses); subtracting the mean
#' change of the comparison units (not yet treated or never treated) gives
#' the dose-response curve ATT(d) under strong parallel trends, and the
#' spline's derivative the average causal response ACRT(d). The overall
#' parameters are the binarised difference in differences `ATT` (ATT^o: all
#' treated against the comparison units) and `ACRT` (ACRT^o: the average of
#' the derivative over the treated doses). Cells are averaged as did's
#' "group" aggregation (cohort means over post-treatment periods, weighted by
#' cohort size); `aggregate(fit, type = "dynamic")` gives the event study of
#' ATT^o or ACRT^o.
#'
#' Inference: every estimate has an influence function on the units (the
#' spline coefficients' least-squares influence, the comparison mean's, and
#' the estimated cohort shares'), which give analytic standard errors
#' (clustered with `cluster`, or design-based with `survey`), or, with
#' `nboot > 0`, the multiplier
#' bootstrap of the package's shared layer; `cband = TRUE` adds uniform
#' (sup-t) bands over the dose grid, one for ATT(d) and one for ACRT(d).
#'
#' @section Correspondence with contdid:
#' `yname`, `idname`, `tname`, `gname`, `degree`, `num_knots`, `dvals`,
#' `control_group`, `base_period`, `anticipation`, `cband` have the names and
#' meaning of `cont_did()` (`dose` is its `dname`, `alpha` its `alp`,
#' `nboot` its `biters`). contdid 0.1.1 (target_parameter "level" or "slope",
#' aggregation "dose", dose_est_method "parametric") has four faults that
#' did_dose corrects, so their numbers differ: it evaluates the dose-response
#' curves in a spline basis whose boundary knots are the range of the grid
#' `dvals`, not of the cohort's doses used in the fit (ATT(d) and ACRT(d)
#' then differ by up to 0.7 in its own simulated data); it scales the
#' influence function of ACRT^o by the cell size instead of the number of
#' treated units (standard errors too small by that ratio); the comparison
#' units enter the influence function of ATT(d) with the wrong sign; and the
#' estimated cohort shares enter only ATT^o's influence function, with shares
#' normalised over treated cohorts. It also ignores `control_group`,
#' `base_period` and `clustervars` (always not-yet-treated, varying, no
#' clusters) and takes the knots and grid from the first period's positive
#' doses of all units. With the same corrections undone (`rules =
#' "contdid-0.1.1"`), did_dose equals contdid to about 1e-12: estimates,
#' grid, knots and every influence function, hence the bootstrap standard
#' errors in distribution. Units treated in the first period are dropped and
#' data without never-treated units are handled as did does (contdid drops
#' the earliest cohort instead). `dose_est_method = "cck"` is contdid's
#' data-driven nonparametric path for two periods (as npiv: cubic B-splines
#' whose number of segments is chosen by Lepski's method with a Gaussian
#' multiplier bootstrap of 999 draws from R's RNG, leaving the RNG state
#' unchanged as npiv does, and uniform bands whose critical value accounts
#' for that choice); with contdid's conventions it equals contdid to about
#' 1e-13 (the chosen dimension, critical values, curves, standard errors,
#' ACRT^o and its influence function). By default did_dose reports the
#' curves on `dvals` (contdid reports them at the observed doses and uses
#' `dvals` only to choose the dimension), adds the comparison mean's
#' variance to ATT(d)'s standard error, and gives ACRT^o's standard error
#' with the package's influence-function convention (contdid's sd(IF) /
#' sqrt(n1) is larger by sqrt(n1 / (n1 - 1))). Not available: covariates
#' (neither has them). contdid accepts `weightsname` and ignores it; did_dose uses the
#' weights (and survey designs) in every mean and spline regression.
#'
#' @param data A data.frame (or data.table, tibble): a balanced panel.
#' @param yname,idname,tname,gname Outcome, unit, period and first treated
#'   period (0, Inf or NA: never treated) columns.
#' @param dose The dose column: constant within unit, > 0 for treated units
#'   (ignored for never-treated units).
#' @param degree Degree of the B-spline (1 = piecewise linear).
#' @param num_knots Number of interior knots, at quantiles of the treated
#'   doses (0: a global polynomial of degree `degree`).
#' @param knots Interior knots given directly (instead of `num_knots`).
#' @param dvals Doses at which to report ATT(d) and ACRT(d); default the
#'   10th to 99th percentiles of the treated doses (as contdid), or 50
#'   equally spaced doses over their range with `dose_est_method = "cck"`.
#' @param dose_est_method `"parametric"` (default: a B-spline of the given
#'   `degree` and knots) or `"cck"` (two periods, one cohort and
#'   never-treated units: a data-driven cubic spline, as contdid; `cband`
#'   then needs no bootstrap).
#' @param control_group `"notyettreated"` (default, as contdid) or
#'   `"nevertreated"`.
#' @param base_period `"varying"` (default) or `"universal"`.
#' @param anticipation Periods of anticipation.
#' @param weightsname Sampling weights (constant within unit; normalised to
#'   mean 1 as did does).
#' @param cluster A column to cluster on (units nested in clusters);
#'   default the unit.
#' @param survey A complex survey design of `data` ([survey_design()] or a
#'   survey package design; each unit within one PSU): its weights, and
#'   design-based variances of the influence functions (PSU totals within
#'   strata, or the replicate weights) as in [did_cs()].
#' @param alpha Significance level.
#' @param nboot,boot_weights,cband Multiplier bootstrap draws (0:
#'   analytic standard errors; default 1000 as contdid's `biters`), weights
#'   and uniform bands over `dvals`.
#' @param rules Peer rules ([dd_rules]): `"default"` (diffdiff's
#'   corrections of contdid 0.1.1's four faults, above) or `"contdid-0.1.1"`
#'   (the faults and contdid's conventions undone: its basis on `dvals`'
#'   range, knots and grid from the first period's positive doses, its
#'   influence functions; with `"cck"`, the curves at the observed doses and
#'   its standard errors), which equals contdid 0.1.1 to about 1e-12.
#' @param ... contdid's and did's spellings: `dname` (the dose column),
#'   `alp`, `bstrap`, `biters`, `clustervars`.
#' @return A fit of class `c("did_dose", "dd_fit")` with rows `ATT` (ATT^o)
#'   and `ACRT` (ACRT^o); `fit$dose` is the table of ATT(d) and ACRT(d) on
#'   the grid with standard errors, pointwise intervals and bands; `fit$cells`
#'   the cell estimates. `plot(fit)` draws the curves.
#' @references Callaway, B., Goodman-Bacon, A. and Sant'Anna, P. H. C.
#'   (2024). Difference-in-differences with a continuous treatment.
#' @examples
#' set.seed(1)
#' n <- 400
#' g <- sample(c(0, 2, 3, 4), n, replace = TRUE)
#' dose <- ifelse(g == 0, 0, runif(n))
#' d <- expand.grid(t = 1:4, id = 1:n)
#' d$g <- g[d$id]; d$dose <- dose[d$id]
#' d$y <- rnorm(n)[d$id] + d$t + (d$g > 0 & d$t >= d$g) * (d$dose + d$dose^2) + rnorm(nrow(d))
#' fit <- did_dose(d, "y", "id", "t", "g", "dose", degree = 2, nboot = 0)
#' fit
#' plot(fit)
#' plot(aggregate(fit, type = "dynamic"))
#' @export
did_dose <- function(data, yname, idname, tname, gname, dose, degree = 3, num_knots = 0, knots = NULL,
                     dvals = NULL, dose_est_method = c("parametric", "cck"), control_group = c("notyettreated", "nevertreated"),
                     base_period = c("varying", "universal"), anticipation = 0, weightsname = NULL, cluster = NULL,
                     survey = NULL, alpha = 0.05, nboot = 1000, boot_weights = c("rademacher", "mammen", "webb"),
                     cband = FALSE, rules = "default", ...) {
  call <- match.call()
  # contdid's spellings: `dname` for the dose; did's `alp`, `bstrap`,
  # `biters`, `clustervars` (through dd_spec)
  dots <- list(...)
  if (!is.null(dots$dname)) {
    if (!missing(dose)) dd_stop("give the dose column once: `dose` or contdid's `dname`, not both.")
    dose <- dots$dname
    dots$dname <- NULL
  }
  dd_required(c("data", "yname", "idname", "tname", "gname", "dose"))
  dd_check_data(data)
  sp <- dd_spec(alpha = alpha, nboot = nboot, boot_weights = boot_weights, cband = cband, cluster = cluster,
                dots = dots, aliases = c("alp", "bstrap", "biters", "clustervars", "dname"), fun = "did_dose")
  cluster <- sp$cluster
  degree <- dd_check_count(degree, "degree", min = 1)
  if (degree > 10) dd_stop("`degree` must be between 1 and 10; got %s.", dd_show(degree))
  num_knots <- dd_check_count(num_knots, "num_knots")
  if (!is.null(knots) && (!is.numeric(knots) || anyNA(knots) || any(!is.finite(knots))))
    dd_stop("`knots` must be NULL or finite numbers; got %s.", dd_show(knots))
  if (!is.null(dvals) && (!is.numeric(dvals) || !length(dvals) || anyNA(dvals) || any(!is.finite(dvals))))
    dd_stop("`dvals` must be NULL or finite numbers; got %s.", dd_show(dvals))
  control_group <- dd_match_arg(if (identical(control_group, eval(formals()$control_group))) "notyettreated"
                                else control_group, c("notyettreated", "nevertreated"), "control_group")
  base_period <- dd_match_arg(if (identical(base_period, eval(formals()$base_period))) "varying" else base_period,
                              c("varying", "universal"), "base_period")
  anticipation <- dd_check_count(anticipation, "anticipation")
  dose_est_method <- dd_match_arg(if (identical(dose_est_method, c("parametric", "cck"))) "parametric"
                                  else dose_est_method, c("parametric", "cck"), "dose_est_method")
  cck <- dose_est_method == "cck"
  if (cck) {
    if (!is.null(knots) || num_knots > 0 || degree != 3)
      dd_stop("`dose_est_method` = \"cck\" chooses the spline itself (cubic, data-driven number of knots); drop `knots`, `num_knots` and `degree`.")
    if (!is.null(weightsname) || !is.null(survey) || !is.null(cluster))
      dd_stop("`dose_est_method` = \"cck\" has heteroskedasticity-robust standard errors for independent units only; drop `weightsname`, `survey` and `cluster`.")
  }
  dd_check_string(cluster, "cluster", null_ok = TRUE)
  if (!is.null(cluster) && identical(cluster, idname)) cluster <- NULL
  rl <- dd_rules(rules, "did_dose")
  compat <- rl$contdid_0.1.1
  # the units (in the order of their identifiers: the bootstrap draws its
  # multipliers in this order, whatever the order of the rows) and their
  # influence-function rows (R/unit_panel.R); dd_panel()'s never-treated
  # rule without `anticipation`, as before
  up <- dd_unit_panel(data, yname, idname, tname, gname, NULL, weightsname, cluster, survey, sp$nboot,
                      roles = c(dose = dose), role_checks = list(dose = dd_dose_check), anticipation = anticipation,
                      control_group = control_group, layout = "id", complete = "did_dose()", panel_anticipation = 0)
  design <- up$design; prep <- up$prep; p <- up$panel; dv <- up$rows$dose; cl <- up$cl
  rm(up)
  Y <- prep$Y; tl <- prep$tlist; notes <- prep$notes
  G <- prep$unit_group; never <- prep$never; Du <- dv[prep$unit_prow]; wu <- prep$unit_weight
  w <- wu / mean(wu)
  svy_label <- dd_svy_label(design)
  glist <- prep$glist
  n <- length(G)
  if (any(never & Du != 0)) {
    notes <- c(notes, sprintf("%d never-treated unit(s) have a nonzero `dose`; their dose is taken as 0.",
                              sum(never & Du != 0)))
    Du[never] <- 0
  }
  trt <- G %in% glist
  z <- which(trt & Du == 0)
  if (length(z))
    dd_stop("`dose` = \"%s\" is 0 for %d treated unit(s) (e.g. %s %s, cohort %s); treated units need a positive dose (code untreated units as never treated).",
            dose, length(z), idname, dd_show(prep$units[z[1]]), format(G[z[1]]))
  dT <- Du[trt]
  # knots and the grid: quantiles of the treated doses (contdid 0.1.1: of the
  # first period's positive doses of every unit in the data)
  d0 <- if (compat) dv[p$tt == min(p$tt) & dv > 0] else dT
  if (length(unique(dT)) < 2L) dd_stop("`dose` = \"%s\" takes one value among treated units (%s); a dose-response needs varying doses.",
                                       dose, format(dT[1]))
  if (is.null(knots)) {
    knots <- if (num_knots) unname(stats::quantile(d0, seq(0, 1, length.out = num_knots + 2))[-c(1, num_knots + 2)])
             else numeric()
  } else knots <- sort(knots)
  rng <- range(dT)
  if (any(knots <= rng[1] | knots >= rng[2]))
    dd_stop("`knots` must lie strictly inside the range of the treated doses [%s, %s]; got %s.",
            format(rng[1]), format(rng[2]), dd_show(knots))
  if (cck) {
    if (length(tl) != 2L || length(glist) != 1L || !any(never))
      dd_stop("`dose_est_method` = \"cck\" needs two periods, one treated cohort and never-treated units (as contdid); the data have %d period(s) and %d treated cohort(s)%s.",
              length(tl), length(glist), if (any(never)) "" else " and no never-treated unit")
    if (sum(trt) < 25L)
      dd_stop("`dose_est_method` = \"cck\" needs at least 25 treated units for its data-driven spline; got %d.", sum(trt))
  }
  if (is.null(dvals)) dvals <- if (cck) seq(min(dT), max(dT), length.out = 50)
                               else unname(stats::quantile(d0, seq(0.1, 0.99, 0.01)))
  else if (any(dvals < rng[1] | dvals > rng[2]))
    dd_stop("`dvals` must lie within the range of the treated doses [%s, %s]; got %s.", format(rng[1]),
            format(rng[2]), dd_show(dvals[dvals < rng[1] | dvals > rng[2]]))
  cells <- dd_cs_cells(tl, glist, anticipation, base_period, control_group)
  K <- length(cells$g)
  deval <- if (cck && compat) sort(dT) else dvals   # contdid 0.1.1's cck reports at the observed doses
  nd <- length(deval)
  est <- list(att = numeric(K), acrt = numeric(K), att_d = matrix(0, nd, K), acrt_d = matrix(0, nd, K))
  psi_att <- matrix(0, n, K); psi_acrt <- matrix(0, n, K)
  cellfits <- vector("list", K)
  for (k in seq_len(K)) {
    g <- cells$g[k]
    dy <- Y[, cells$idx[k, 2] + 1L] - Y[, cells$idx[k, 3] + 1L]
    tr <- which(G == g)
    cc <- which(never | (G > cells$thr[k] & G != g))
    if (!length(cc))
      dd_stop("cohort %s in period %s has no comparison units (%s); try control_group = \"notyettreated\" or fewer periods.",
              format(g), format(cells$t[k]), control_group)
    r <- if (cck) dd_dose_cck(dy[tr], Du[tr], dy[cc], dvals, deval, n, compat, sp$alpha)
         else dd_dose_cell(dy[tr], Du[tr], dy[cc], w[tr], w[cc], knots, degree, dvals, n, compat, g)
    est$att[k] <- r$att; est$acrt[k] <- r$acrt; est$att_d[, k] <- r$att_d; est$acrt_d[, k] <- r$acrt_d
    psi_att[tr, k] <- r$if_att_t; psi_att[cc, k] <- r$if_c
    psi_acrt[tr, k] <- r$if_acrt * if (compat && !cck) sum(w[tr]) / (sum(w[tr]) + sum(w[cc])) else 1
    # contdid 0.1.1's cck curves leave out the comparison mean's variance
    cellfits[[k]] <- list(tr = tr, cc = cc, Z = r$Z, B = r$B, dB = r$dB,
                          if_c = if (cck && compat) 0 * r$if_c else r$if_c, cck = r$cck)
  }
  ag <- dd_dose_aggregate(est, psi_att, psi_acrt, cellfits, cells, w, G, glist, n, cl, compat, cck, sp, deval,
                         cluster, svy_label)
  if_o <- ag$if_o; ov <- ag$ov; IFd <- ag$IFd; IFa <- ag$IFa; se_o <- ag$se_o; dose_tab <- ag$dose_tab
  crit_d <- ag$crit_d; crit_a <- ag$crit_a; ck <- ag$ck; label <- ag$label
  tab <- dd_if_table(c("ATT", "ACRT"), ov, se_o, sp$alpha)
  V <- dd_if_vcov(list(inf = dd_ifs_dense(if_o), unit_cluster = cl, n = n, coeftable = tab,
                       vcov_type = if (sp$nboot > 0L) "bootstrap" else "analytic"))
  cell_tab <- data.frame(group = cells$g, time = cells$t, att = est$att, acrt = est$acrt,
                         n_treated = vapply(cellfits, function(f) length(f$tr), 1L),
                         n_comparison = vapply(cellfits, function(f) length(f$cc), 1L))
  info <- dd_info("did_dose", "Continuous-dose difference in differences (did_dose)", yname, n * length(tl),
                  if (sp$nboot > 0L) "bootstrap" else "analytic", label, Inf, sp$alpha, c("ATT", "ACRT"),
                  n_units = n, n_periods = length(tl),
                  n_clusters = if (inherits(cl, "dd_svy_rows")) cl$G else if (is.null(cl)) NULL else length(unique(cl)),
                  notes = notes, more = list(rules = rl$rule))
  new_dd_fit("did_dose", tab, ov, V, info, call,
             list(dose = dose_tab, cells = cell_tab, knots = knots, degree = degree, tname = tname,
                  control_group = control_group,
                  dose_crit = c(att = crit_d, acrt = crit_a), nboot = sp$nboot, boot_weights = sp$boot_weights,
                  cband = sp$cband, inf = if_o, cck = ck,
                  cell_inf = list(att = psi_att, acrt = psi_acrt, G = G, w = w, cluster = cl, glist = glist,
                                  survey_label = if (nzchar(svy_label)) svy_label else NULL,
                                  periods = tl, control_group = control_group, base_period = base_period,
                                  anticipation = anticipation, cluster_name = cluster),
                  curve_inf = list(att = IFd, acrt = IFa)))
}

# the group aggregation of the cells (ATT^o, ACRT^o) and the dose curves,
# with their influence functions, standard errors (analytic or multiplier
# bootstrap), bands and the table of the curves
dd_dose_aggregate <- function(est, psi_att, psi_acrt, cellfits, cells, w, G, glist, n, cl, compat, cck, sp, deval,
                              cluster, svy_label) {
  # the group aggregation over post-treatment cells; cohort columns
  # C[, j] = 1{G = g_j} carry the estimated shares' terms
  post <- cells$t >= cells$g
  pg <- vapply(glist, function(g) sum(w * (G == g)) / n, numeric(1))
  gm <- dd_agg_group_map(cells$g, post, pg, glist)
  Cm <- dd_cohort_mat(w, G, glist)
  a <- gm$a
  # contdid 0.1.1: ATT^o's share term with shares normalised over the
  # treated cohorts, no share term elsewhere
  Mo <- if (compat) dd_dose_compat_map(cells$g, post, pg, glist) else gm$M
  Md <- if (compat) 0 * gm$M else gm$M
  if_o <- cbind(psi_att %*% a + Cm %*% (Mo %*% est$att), psi_acrt %*% a + Cm %*% (Md %*% est$acrt))
  colnames(if_o) <- c("ATT", "ACRT")
  ov <- c(ATT = sum(a * est$att), ACRT = sum(a * est$acrt))
  # the curves' influence functions: each post cell's treated units through
  # the spline coefficients, its comparison units through their mean
  IFd <- Cm %*% (Md %*% t(est$att_d)); IFa <- Cm %*% (Md %*% t(est$acrt_d))
  for (k in which(post & a != 0)) {
    f <- cellfits[[k]]
    IFd[f$tr, ] <- IFd[f$tr, ] + a[k] * (f$Z %*% t(f$B))
    IFd[f$cc, ] <- IFd[f$cc, ] + a[k] * (if (compat && !cck) -f$if_c else f$if_c)
    IFa[f$tr, ] <- IFa[f$tr, ] + a[k] * (f$Z %*% t(f$dB))
  }
  curve <- list(att = drop(est$att_d %*% a), acrt = drop(est$acrt_d %*% a))
  se_o <- dd_if_se(dd_ifs_dense(if_o), n, cl); se_d <- dd_if_se(dd_ifs_dense(IFd), n, cl)
  se_a <- dd_if_se(dd_ifs_dense(IFa), n, cl)
  crit_d <- crit_a <- NA_real_
  label <- paste0(dd_cs_vcov_label(sp$nboot, sp$boot_weights, cluster), svy_label)
  if (sp$nboot > 0L) {
    bo <- dd_if_boot(dd_ifs_dense(if_o), n, cl, sp$nboot, sp$boot_weights, sp$alpha)
    bd <- dd_if_boot(dd_ifs_dense(IFd), n, cl, sp$nboot, sp$boot_weights, sp$alpha)
    ba <- dd_if_boot(dd_ifs_dense(IFa), n, cl, sp$nboot, sp$boot_weights, sp$alpha)
    se_o <- ifelse(is.na(se_o), NA_real_, bo$se); se_d <- ifelse(is.na(se_d), NA_real_, bd$se)
    se_a <- ifelse(is.na(se_a), NA_real_, ba$se)
    if (sp$cband && !cck) { crit_d <- bd$crit; crit_a <- ba$crit }
  } else if (sp$cband && !cck) {
    dd_stop("`cband` = TRUE needs bootstrap draws: set nboot = 1000, say.")
  }
  # cck: the uniform bands of the data-driven spline (their critical values
  # account for the choice of its dimension)
  ck <- if (cck) cellfits[[1]]$cck else NULL
  if (cck && sp$cband) { crit_d <- ck$cv; crit_a <- ck$cv_deriv }
  z <- stats::qnorm(1 - sp$alpha / 2)
  dose_tab <- data.frame(dose = deval, att = curve$att, att_se = se_d, att_low = curve$att - z * se_d,
                         att_high = curve$att + z * se_d, acrt = curve$acrt, acrt_se = se_a,
                         acrt_low = curve$acrt - z * se_a, acrt_high = curve$acrt + z * se_a)
  if (is.finite(crit_d)) {
    dose_tab$att_cband_low <- curve$att - crit_d * se_d; dose_tab$att_cband_high <- curve$att + crit_d * se_d
    dose_tab$acrt_cband_low <- curve$acrt - crit_a * se_a; dose_tab$acrt_cband_high <- curve$acrt + crit_a * se_a
  }
  list(if_o = if_o, ov = ov, IFd = IFd, IFa = IFa, se_o = se_o, dose_tab = dose_tab, crit_d = crit_d,
       crit_a = crit_a, ck = ck, label = label)
}


# the dose column's rule (dd_unit_panel's role check): no negative doses
dd_dose_check <- function(v, arg, col) {
  if (any(v < 0)) dd_stop("`%s` = \"%s\" has negative values (%s); doses must be >= 0.", arg, col,
                          dd_show(unique(v[v < 0])))
  invisible(TRUE)
}

# One (g, t) cell: the regression of the treated units' outcome changes on
# the spline basis of their doses (boundary knots: the range of these doses;
# contdid 0.1.1: the grid's for the curves), the comparison mean m0, and the
# influence-function pieces on the n scale: the treated units' Z = n (X e)
# (X'X)^{-1} (times the basis at a dose gives ATT_gt(d)'s), the comparison
# units' -(n / n0)(dy - m0), ATT^o's and ACRT^o's treated parts.
dd_dose_cell <- function(dy, d, dy0, w1, w0, knots, degree, dvals, n, compat, g) {
  nb <- degree + length(knots)
  if (length(unique(d)) < nb + 1L)
    dd_stop("cohort %s has %d distinct dose(s) for a spline with %d coefficients (degree %d, %d knot(s)); use a lower `degree` or fewer knots.",
            format(g), length(unique(d)), nb + 1L, degree, length(knots))
  bnd <- range(d)
  if (any(knots <= bnd[1] | knots >= bnd[2]))
    dd_stop("cohort %s's doses [%s, %s] do not bracket the knots %s; use fewer knots (`num_knots`) or give `knots` inside every cohort's dose range.",
            format(g), format(bnd[1]), format(bnd[2]), dd_show(knots))
  X <- dd_bspline(d, knots, bnd, degree)
  colnames(X) <- paste0("b", seq_len(nb))
  f <- suppressMessages(dd_regress(dy, X, w = w1))
  if (!all(f$keep))
    dd_stop("cohort %s: the spline basis in the dose is collinear (too few distinct doses); use a lower `degree` or fewer knots.",
            format(g))
  beta <- f$coef
  gb <- if (compat) range(dvals) else bnd
  B <- cbind(1, dd_bspline(dvals, knots, gb, degree)); dB <- cbind(0, dd_bspline(dvals, knots, gb, degree, 1L))
  dX <- cbind(0, dd_bspline(d, knots, bnd, degree, 1L))
  S1 <- sum(w1); S0 <- sum(w0)
  m1 <- sum(w1 * dy) / S1; m0 <- sum(w0 * dy0) / S0
  # influence of the (weighted) spline coefficients, n (X'WX)^{-1} X_i w_i e_i
  Z <- n * (cbind(1, X) * (w1 * f$resid)) %*% f$bread
  acrt_i <- drop(dX %*% beta)
  acrt <- sum(w1 * acrt_i) / S1
  list(att = m1 - m0, acrt = acrt, att_d = drop(B %*% beta) - m0, acrt_d = drop(dB %*% beta),
       if_att_t = n * w1 / S1 * (dy - m1), if_c = -n * w0 / S0 * (dy0 - m0),
       if_acrt = n * w1 / S1 * (acrt_i - acrt) + drop(Z %*% (colSums(w1 * dX) / S1)),
       Z = Z, B = B, dB = dB)
}

# The data-driven nonparametric cell (dose_est_method = "cck", as contdid's
# path through npiv's npiv()): a cubic B-spline regression of the treated
# units' outcome changes (net of the comparison mean) on their dose whose
# number of segments is chosen by Lepski's method over J = 1, 2, 4, ... (Chen,
# Christensen and Kankanala): every pair of dimensions is compared on the
# grid `dvals` by the sup of their t statistics, against the 1 - alpha-hat
# quantile of its Gaussian-multiplier bootstrap (999 draws from R's RNG, the
# same draws for every pair, the RNG state left as it was, as npiv does);
# the uniform band's critical value adds log(log J~) times that quantile.
# Breakpoints at quantiles of the doses (plus npiv's 1e-10 jitter), least
# squares by the pseudo-inverse, HC0 variances. ACRT^o's influence function
# uses the unjittered basis, as contdid. Returns the pieces of dd_dose_cell
# plus `cck` (J, the dimensions tried, theta*, the critical values).
dd_dose_cck <- function(dy, d, dy0, dvals, deval, n, compat, alpha) {
  n1 <- length(dy)
  m0 <- mean(dy0)
  y <- dy - m0
  brk <- function(J, jitter = TRUE) {
    b <- unname(stats::quantile(d, seq(0, 1, length.out = J + 1)))
    if (jitter) b + seq(0, 1e-10 * (max(d) - min(d)), length.out = J + 1) else b
  }
  basis <- function(xx, br, deriv = 0L) dd_bspline(xx, br[-c(1, length(br))], range(br), 3L, deriv, intercept = TRUE)
  fit <- function(J) {
    P <- basis(d, brk(J))
    tmp <- dd_pinv(crossprod(P), divide = TRUE) %*% t(P)
    b <- drop(tmp %*% y)
    list(P = P, tmp = tmp, b = b, U = y - drop(P %*% b), br = brk(J))
  }
  nzd <- function(a) ifelse(a < 0, pmin(-.Machine$double.eps, a), pmax(.Machine$double.eps, a))
  # the dimensions tried (npiv's J-hat-max rule)
  Lmax <- max(floor(log(n1, 2)), 3)
  S <- 2^(0:Lmax)
  sc <- max(1, (0.1 * log(n1))^4)
  tv <- vapply(seq_len(Lmax), function(i) { Jd <- 3 + S[i]; Jd * sqrt(log(Jd)) * max((0.1 * log(n1))^4, 1 / sc) }, 0)
  Lh <- which(tv[-Lmax] <= 10 * sqrt(n1) & 10 * sqrt(n1) < tv[-1])[1]
  if (is.na(Lh)) Lh <- Lmax
  S <- S[seq_len(Lh)]
  if (length(S) < 2L) dd_stop("`dose_est_method` = \"cck\": too few treated units (%d) to compare spline dimensions.", n1)
  Jmax <- 3 + max(S)
  ahat <- min(0.5, sqrt(log(Jmax) / Jmax))
  # the multipliers: R's normal draws, the RNG state restored afterwards
  seed <- if (exists(".Random.seed", globalenv())) get(".Random.seed", globalenv()) else NULL
  Om <- matrix(stats::rnorm(n1 * 999), n1, 999)
  if (!is.null(seed)) assign(".Random.seed", seed, globalenv()) else rm(".Random.seed", envir = globalenv())
  fits <- lapply(S, fit)
  hc0 <- function(A, U1, A2 = A, U2 = U1) rowSums((A * rep(U1, each = nrow(A))) * (A2 * rep(U2, each = nrow(A2))))
  pairs <- expand.grid(i = seq_along(S), j = seq_along(S))
  pairs <- pairs[pairs$j > pairs$i, , drop = FALSE]
  Zs <- numeric(nrow(pairs)); Zb <- matrix(0, 999, nrow(pairs))
  for (k in seq_len(nrow(pairs))) {
    f1 <- fits[[pairs$i[k]]]; f2 <- fits[[pairs$j[k]]]
    A1 <- basis(dvals, f1$br) %*% f1$tmp; A2 <- basis(dvals, f2$br) %*% f2$tmp
    se <- sqrt(hc0(A1, f1$U) + hc0(A2, f2$U) - 2 * hc0(A1, f1$U, A2, f2$U))
    Zs[k] <- max(abs(drop(A1 %*% y - A2 %*% y) / nzd(se)))
    Zb[, k] <- apply(abs((A1 %*% (f1$U * Om) - A2 %*% (f2$U * Om)) / nzd(se)), 2, max)
  }
  theta <- stats::quantile(apply(Zb, 1, max), 1 - ahat, type = 5, names = FALSE)
  ok <- matrix(TRUE, length(S), length(S))
  ok[cbind(pairs$i, pairs$j)] <- Zs <= 1.1 * theta
  acc <- vapply(seq_len(length(S) - 1L), function(i) all(ok[i, (i + 1):length(S)]), TRUE)
  Jseg <- if (any(acc)) S[which(acc)[1]] else max(S)
  J2 <- sort(S, decreasing = TRUE)[2]
  Jx <- min(Jseg, J2); Jt <- min(3 + Jseg, 3 + J2)
  # the uniform band's critical values over the evaluation points
  Jb <- if (length(S) > 2L) S[S <= max(Jx, max(S[seq_len(length(S) - 2L)]))] else S
  ev <- if (compat) d else deval
  sup <- function(deriv) {
    M <- vapply(Jb, function(J) {
      f <- fits[[match(J, S)]]
      A <- basis(ev, f$br, deriv) %*% f$tmp
      apply(abs((A %*% (f$U * Om)) / nzd(sqrt(abs(hc0(A, f$U))))), 2, max)
    }, numeric(999))
    stats::quantile(apply(matrix(M, 999), 1, max), if (compat) 0.95 else 1 - alpha, type = 5, names = FALSE) +
      max(0, log(log(Jt))) * theta
  }
  cv <- sup(0L); cvd <- sup(1L)
  # the chosen spline
  f <- fits[[match(Jx, S)]]
  B <- basis(deval, f$br); dB <- basis(deval, f$br, 1L)
  dX <- basis(d, f$br, 1L)
  acrt_i <- drop(dX %*% f$b)
  acrt <- mean(acrt_i)
  # ACRT^o's influence function on the unjittered basis (contdid)
  b0 <- brk(Jx, FALSE)
  B0 <- basis(d, b0); dB0 <- basis(d, b0, 1L)
  ifa <- (acrt_i - acrt) + drop((f$U * B0) %*% dd_pinv(crossprod(B0) / n1, divide = TRUE) %*% colMeans(dB0))
  list(att = mean(dy) - m0, acrt = acrt, att_d = drop(B %*% f$b), acrt_d = drop(dB %*% f$b),
       if_att_t = n / n1 * (dy - mean(dy)), if_c = -n / length(dy0) * (dy0 - m0),
       if_acrt = n / n1 * ifa * if (compat) sqrt(n1 / (n1 - 1)) else 1,
       Z = n * (f$P * f$U) %*% dd_pinv(crossprod(f$P), divide = TRUE), B = B, dB = dB,
       cck = list(J = Jx, J_tried = S, theta = theta, cv = cv, cv_deriv = cvd))
}

# contdid 0.1.1's share term for ATT^o: shares normalised over the treated
# cohorts in both the weights and the indicators' centring
dd_dose_compat_map <- function(gk, post, pg, glist) {
  q <- pg / sum(pg)
  J <- length(glist); K <- length(gk)
  j <- match(gk, glist)
  nj <- tabulate(j[post], J)
  M <- matrix(0, J, K)
  # its term sum_j theta_j [(1{G = g_j} - q_j) - q_j sum_l (1{G = g_l} - q_l)]
  # is sum_l (theta_l - sum_j q_j theta_j) 1{G = g_l} (the constants cancel)
  for (k in which(post)) M[, k] <- (replace(numeric(J), j[k], 1) - q[j[k]]) / nj[j[k]]
  M
}

# B-spline basis without the intercept column (as splines2::bSpline and
# splines::bs with intercept = FALSE), or its derivative (deriv = 1, as
# splines2::dbs), with boundary knots `boundary`; beyond them (and, for the
# derivative, at the right one) the boundary pieces are continued as
# polynomials (splines::bs's expansion, exact for the piece's degree).
dd_bspline <- function(x, knots, boundary, degree, deriv = 0L, intercept = FALSE) {
  ord <- degree + 1L
  Ak <- sort(c(rep(boundary, ord), knots))
  nb <- length(Ak) - ord
  B <- matrix(0, length(x), nb)
  right <- if (deriv > 0) x >= boundary[2] else x > boundary[2]
  inside <- x >= boundary[1] & !right
  if (any(inside)) B[inside, ] <- splines::splineDesign(Ak, x[inside], ord, rep(deriv, sum(inside)))
  for (side in 1:2) {
    o <- if (side == 1) x < boundary[1] else right
    if (!any(o)) next
    b <- if (side == 1) 0.75 * boundary[1] + 0.25 * Ak[ord + 1L] else 0.75 * boundary[2] + 0.25 * Ak[nb]
    D <- splines::splineDesign(Ak, rep(b, ord), ord, 0:degree)
    j <- deriv:degree
    P <- outer(x[o] - b, j - deriv, `^`) %*% diag(1 / factorial(j - deriv), length(j))
    B[o, ] <- P %*% D[j + 1L, , drop = FALSE]
  }
  if (intercept) B else B[, -1, drop = FALSE]
}
