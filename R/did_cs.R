#' Callaway and Sant'Anna (2021) staggered difference-in-differences
#'
#' Group-time average treatment effects ATT(g,t) for staggered adoption, equal
#' to `did::att_gt()` (did 2.5.1, DRDID 1.4.0) number for number: the same
#' cells, base periods, comparison groups, estimators and influence functions.
#' Each ATT(g,t) is a 2x2 comparison of cohort g with the comparison units
#' between a base period and t, estimated by outcome regression (`"reg"`),
#' standardised inverse probability weighting (`"ipw"`) or the doubly robust
#' estimator (`"dr"`, the default) of Sant'Anna and Zhao (2020), with did's
#' propensity-score trimming (comparison units with scores >= 0.995 get zero
#' weight) and its overlap guard (a cell whose unweighted propensity score
#' reaches 0.999 is `NA`, with a warning). Use [aggregate.did_cs()] for the
#' simple, group, dynamic (event-study) and calendar summaries.
#'
#' Data rules, as did applies them: `gname` is the first treated period; 0,
#' `Inf` (and, in diffdiff, `NA`) mean never treated, and so does a first
#' treated period after the last period plus `anticipation` (with a message).
#' Units treated by the first period (plus `anticipation`) are dropped with a
#' warning. Other `gname` values must be periods of the data. In a panel,
#' units missing some period are dropped (warning) unless
#' `allow_unbalanced_panel = TRUE`. Covariates may vary over time: each cell
#' takes covariates and weights from the earlier of its two periods (did's
#' rule). Without never-treated units, `control_group = "nevertreated"` is an
#' error (did would silently recode the last cohort); with `"notyettreated"`
#' the periods from the last cohort's treatment on are dropped, as did does.
#'
#' Inference: influence-function standard errors (analytic when `nboot = 0`,
#' cluster-robust when `cluster` names a variable other than `idname`), or the
#' multiplier bootstrap (`nboot` draws, did's Rademacher weights by default;
#' standard errors from the interquartile range; `cband = TRUE` adds the sup-t
#' uniform band). The bootstrap runs in C from a seed taken from R's RNG, so
#' `set.seed()` reproduces it for any thread count; its draws differ from
#' did's (which are not thread-safe), so bootstrap numbers agree with did's in
#' distribution, not digit for digit. The print method reports the Wald
#' pre-test of parallel trends (did's, on the analytic variance).
#'
#' @param data A long data frame (data.frame, data.table or tibble); never
#'   modified.
#' @param yname,tname,idname,gname Outcome, period (numeric), unit identifier
#'   and first-treated-period columns.
#' @param xformla Optional one-sided covariate formula (did's `xformla`).
#' @param control_group `"nevertreated"` (default) or `"notyettreated"`.
#' @param anticipation Number of periods of anticipation (default 0).
#' @param base_period `"varying"` (default) or `"universal"`.
#' @param est_method `"dr"` (default), `"ipw"` or `"reg"`.
#' @param weightsname Optional sampling-weight column.
#' @param panel `TRUE` for panel data, `FALSE` for repeated cross-sections.
#' @param allow_unbalanced_panel Keep units missing some periods (estimated
#'   with the repeated cross-section estimators, influence functions summed by
#'   unit, as did does).
#' @param cluster Optional column to cluster by, constant within unit
#'   (`idname` is always the unit of resampling; naming it changes nothing).
#' @param nboot Multiplier-bootstrap draws; 0 for analytic standard errors.
#'   Default 1000 (did's `biters`).
#' @param boot_weights `"rademacher"` (default, did's), `"mammen"` or `"webb"`.
#' @param cband Uniform confidence band over all ATT(g,t) (bootstrap only).
#' @param alpha Significance level (did's `alp`).
#' @param ... did's spellings: `alp`, `bstrap`, `biters`, `clustervars`.
#' @return An object of class `c("did_cs", "dd_fit")` with one row per
#'   ATT(g,t) (columns `group`, `time`, `event`), the influence functions, and
#'   the pre-test (`pretest`).
#' @references Callaway, B. and Sant'Anna, P. H. C. (2021). Difference-in-
#'   differences with multiple time periods. Journal of Econometrics 225(2).
#'   Sant'Anna, P. H. C. and Zhao, J. (2020). Doubly robust
#'   difference-in-differences estimators. Journal of Econometrics 219(1).
#' @examples
#' d <- read.csv(system.file("extdata", "sim_panel.csv", package = "diffdiff"))
#' cs <- did_cs(d, yname = "y", tname = "year", idname = "id", gname = "first_treat",
#'              xformla = ~ x2, nboot = 0)
#' cs
#' aggregate(cs, type = "dynamic")
#' # a did::att_gt() call runs after renaming the function
#' did_cs(yname = "y", tname = "year", idname = "id", gname = "first_treat",
#'        data = d, bstrap = FALSE, alp = 0.1)
#' @export
did_cs <- function(data, yname, tname, idname, gname, xformla = NULL,
                   control_group = c("nevertreated", "notyettreated"), anticipation = 0,
                   base_period = c("varying", "universal"), est_method = c("dr", "ipw", "reg"),
                   weightsname = NULL, panel = TRUE, allow_unbalanced_panel = FALSE,
                   cluster = NULL, nboot = 1000, boot_weights = c("rademacher", "mammen", "webb"),
                   cband = TRUE, alpha = 0.05, ...) {
  call <- match.call()
  a <- dd_did_aliases(list(...), c("alp", "bstrap", "biters", "clustervars"), "did_cs")
  if (!is.null(a$alp)) alpha <- a$alp
  if (!is.null(a$biters)) nboot <- a$biters
  if (!is.null(a$bstrap) && !dd_check_flag(a$bstrap, "bstrap")) nboot <- 0
  if (!is.null(a$clustervars)) cluster <- a$clustervars
  dd_check_data(data)
  control_group <- dd_match_arg(control_group[1], c("nevertreated", "notyettreated"), "control_group")
  base_period <- dd_match_arg(base_period[1], c("varying", "universal"), "base_period")
  est_method <- dd_match_arg(est_method[1], c("dr", "ipw", "reg"), "est_method")
  boot_weights <- dd_match_arg(boot_weights[1], c("rademacher", "mammen", "webb"), "boot_weights")
  anticipation <- dd_check_count(anticipation, "anticipation")
  nboot <- dd_check_count(nboot, "nboot")
  alpha <- dd_check_alpha(alpha)
  cband <- dd_check_flag(cband, "cband")
  panel <- dd_check_flag(panel, "panel")
  allow_unbalanced_panel <- dd_check_flag(allow_unbalanced_panel, "allow_unbalanced_panel")
  dd_check_string(idname, "idname")
  if (!is.null(cluster)) {
    cluster <- dd_cluster_names(cluster, data)
    cluster <- setdiff(cluster, idname)
    if (length(cluster) > 1L)
      dd_stop("`cluster` can name one variable besides `idname` (as did's `clustervars`); got %s.",
              dd_show(cluster))
    if (!length(cluster)) cluster <- NULL
  }
  p <- dd_prepare(data, yname, c(idname = idname, tname = tname, gname = gname), xformla,
                  weightsname, cluster, na_ok = "gname")
  id <- p$vals$idname
  tt <- dd_check_numeric_col(p$vals$tname, "tname", tname)
  g <- dd_check_numeric_col(p$vals$gname, "gname", gname)
  w <- if (is.null(p$w)) rep(1, length(tt)) else p$w
  idc <- dd_codes(id); tc <- dd_codes(tt)
  if (panel) dd_check_unique_codes(idc, tc, id, tt)
  dd_check_constant_within(g, id, "gname", gname, code = idc)
  if (!is.null(cluster)) dd_check_constant_within(p$cluster[[1]], id, "cluster", cluster, code = idc)
  prep <- dd_cs_prepare(y = p$y, tt = tt, g = g, id = id, w = w, X = p$X, idc = idc, tc = tc,
                        cl = if (length(p$cluster)) p$cluster[[1]] else NULL,
                        xformla = xformla, gname = gname, tname = tname, anticipation = anticipation,
                        control_group = control_group, panel = panel,
                        allow_unbalanced = allow_unbalanced_panel)
  cells <- dd_cs_cells(prep$tlist, prep$glist, anticipation, base_period, control_group)
  method <- match(est_method, c("reg", "ipw", "dr")) - 1L
  if (prep$panel) {
    r <- .Call(C_cs_panel, prep$Y, prep$gval, prep$never, prep$W, prep$X,
               cells$idx, cells$g, cells$thr, method, 0.995)
  } else {
    r <- .Call(C_cs_rc, prep$y, prep$tcol, prep$gval, prep$never, prep$w, prep$Xrc,
               cells$idx, cells$g, cells$thr, method, 0.995, prep$unit, prep$n)
  }
  dd_cs_report(r, cells)
  n <- prep$n
  inf <- r$inf
  se <- dd_if_se(inf, n, prep$unit_cluster)
  se[is.na(r$att)] <- NA_real_
  crit <- NA_real_
  boot <- NULL
  if (nboot > 0L) {
    okc <- which(!is.na(se))
    if (length(okc)) {
      # one set of draws for the cells and for the cohort-share columns the
      # aggregations need (aggregate() reuses them)
      glist <- sort(unique(cells$g))
      bt <- dd_if_boot(inf, n, prep$unit_cluster, nboot, boot_weights, alpha,
                       band = seq_along(okc), cols = okc,
                       extra = dd_cohort_mat(prep$unit_weight, prep$unit_group, glist))
      se[okc] <- bt$se[seq_along(okc)]
      boot <- list(draws = bt$draws, cells = okc, N = bt$N, boot_weights = boot_weights)
      if (cband && length(prep$tlist) > 2L) {
        crit <- bt$crit
        if (is.finite(crit) && crit >= 7)
          warning(sprintf("the uniform-band critical value is large (%.2f); inference may be unreliable.", crit),
                  call. = FALSE)
      }
    }
  }
  pre <- dd_cs_pretest(r$att, inf, n, prep$unit_cluster, cells, se)
  terms <- sprintf("ATT(%s,%s)", format(cells$g, trim = TRUE), format(cells$t, trim = TRUE))
  tab <- dd_if_table(terms, r$att, se, alpha, crit,
                     data.frame(group = cells$g, time = cells$t, event = cells$t - cells$g))
  label <- dd_cs_vcov_label(nboot, boot_weights, cluster)
  info <- list(estimator = "did_cs", title = "Callaway-Sant'Anna group-time ATT (did_cs)",
               yname = yname, nobs = prep$nobs, n_units = if (prep$panel || allow_unbalanced_panel) n else NULL,
               n_periods = length(prep$tlist),
               n_clusters = if (is.null(cluster)) NULL else length(unique(prep$unit_cluster)),
               vcov_type = if (nboot > 0) "bootstrap" else "analytic", vcov_label = label,
               df = Inf, alpha = alpha, main_terms = terms, fe_names = NULL, dropped = character(),
               notes = prep$notes)
  extra <- list(inf = inf, n = n, unit_group = prep$unit_group, unit_weight = prep$unit_weight,
                unit_cluster = prep$unit_cluster, periods = prep$tlist, crit = crit,
                pretest = pre, boot = boot, nboot = nboot, boot_weights = boot_weights, cband = cband,
                control_group = control_group, anticipation = anticipation, base_period = base_period,
                est_method = est_method, cluster = cluster, n_cell = r$n_cell, cell_status = r$status)
  # the K x K variance is formed on demand by vcov() (it is n K^2 work)
  new_dd_fit("did_cs", tab, stats::setNames(r$att, terms), NULL, info, call, extra)
}

dd_cs_vcov_label <- function(nboot, boot_weights, cluster) {
  s <- if (nboot > 0) sprintf("Multiplier bootstrap (%d draws, %s)", nboot, boot_weights)
       else "Influence function (analytic)"
  if (!is.null(cluster)) s <- paste0(s, ", clustered by ", cluster)
  s
}

# did's data rules (pre_process_did2), on plain vectors.
dd_cs_prepare <- function(y, tt, g, id, w, X, cl, xformla, gname, tname, anticipation,
                          control_group, panel, allow_unbalanced, idc = dd_codes(id), tc = dd_codes(tt)) {
  notes <- character()
  never <- is.na(g) | g == 0 | is.infinite(g)
  sorted_levels <- function(v, code = dd_codes(v)) sort(v[dd_first_rows(code)])
  tlist <- sorted_levels(tt, tc)
  if (any(!never & g < 0)) dd_stop("`gname` = \"%s\" must be >= 0 (0 means never treated); it has %s.",
                                  gname, format(min(g[!never])))
  late <- !never & g > max(tlist) + anticipation
  if (any(late)) {
    message(sprintf("diffdiff: %d unit(s) first treated after the last period are treated as never treated.",
                    length(unique(id[late]))))
    never <- never | late
  }
  gl <- sorted_levels(g[!never])
  offgrid <- !never & g %in% gl[gl >= min(tlist) & !(gl %in% tlist)]
  if (any(offgrid))
    dd_stop("`gname` = \"%s\" has value %s, which is not a period of `tname` = \"%s\" (periods: %s); only 0, Inf or NA may lie outside.",
            gname, format(g[which(offgrid)[1]]), tname, paste(format(tlist), collapse = ", "))
  first <- !never & g <= tlist[1] + anticipation
  if (any(first)) {
    k <- if (panel) length(unique(id[first])) else sum(first)
    warning(sprintf("Dropped %d %s that were already treated in the first period (as did does).", k,
                    if (panel) "units" else "observations"), call. = FALSE)
    keep <- !first
    y <- y[keep]; tt <- tt[keep]; g <- g[keep]; id <- id[keep]; w <- w[keep]; never <- never[keep]
    if (!is.null(X)) X <- X[keep, , drop = FALSE]
    if (!is.null(cl)) cl <- cl[keep]
    idc <- dd_recode(idc, keep); tc <- dd_recode(tc, keep)
  }
  if (!any(never)) {
    if (control_group == "nevertreated")
      dd_stop("there are no never-treated units (`gname` 0, Inf or NA), so `control_group` = \"nevertreated\" has no comparison group; use control_group = \"notyettreated\".")
    latest <- max(g)
    keep <- tt < latest - anticipation
    notes <- c(notes, sprintf("no never-treated units: periods from %s on dropped; cohort %s serves only as a comparison group.",
                              format(latest - anticipation), format(latest)))
    y <- y[keep]; tt <- tt[keep]; g <- g[keep]; id <- id[keep]; w <- w[keep]; never <- never[keep]
    if (!is.null(X)) X <- X[keep, , drop = FALSE]
    if (!is.null(cl)) cl <- cl[keep]
    idc <- dd_recode(idc, keep); tc <- dd_recode(tc, keep)
  }
  if (any(first) || !any(never)) tlist <- sorted_levels(tt, tc)
  gval <- g; gval[never] <- Inf
  gz <- g; gz[never] <- 0                     # finite codes: the O(n) path of dd_codes
  gcode <- dd_codes(gz)
  glev <- gz[dd_first_rows(gcode)]
  glist <- sort(glev[glev > 0 & glev > tlist[1] + anticipation & glev <= max(tlist) + anticipation])
  if (!any(never)) glist <- setdiff(glist, max(g))
  if (!length(glist)) dd_stop("no treated cohort is left to estimate (check `gname` and `anticipation`).")
  w <- w / mean(w)
  Xi <- cbind("(Intercept)" = rep(1, length(y)), X)
  k <- ncol(Xi)
  unbalanced <- FALSE
  if (panel) {
    cnt <- tabulate(idc + 1L, attr(idc, "nlev"))
    if (any(cnt != length(tlist))) {
      if (allow_unbalanced) unbalanced <- TRUE else {
        bad <- cnt[idc + 1L] != length(tlist)
        warning(sprintf("%d units are missing in some periods; converting to a balanced panel by dropping them (as did does).",
                        length(unique(id[bad]))), call. = FALSE)
        keep <- !bad
        y <- y[keep]; tt <- tt[keep]; g <- g[keep]; id <- id[keep]; w <- w[keep]; never <- never[keep]
        gval <- gval[keep]; Xi <- Xi[keep, , drop = FALSE]
        if (!is.null(cl)) cl <- cl[keep]
        idc <- dd_recode(idc, keep); tc <- dd_recode(tc, keep)
      }
    }
  }
  # small groups (did: fewer than 5 + number of covariate terms)
  nterm <- if (is.null(xformla)) 0L else length(attr(stats::terms(xformla), "term.labels"))
  gz <- gval; gz[!is.finite(gz)] <- 0         # after any balancing
  gcode <- dd_codes(gz)
  gsz <- tabulate(gcode + 1L, attr(gcode, "nlev")) / length(tlist)
  gnm <- gz[dd_first_rows(gcode)]
  small <- gnm[gsz < nterm + 5]
  if (length(small)) {
    if (0 %in% small && control_group == "nevertreated")
      dd_stop("the never-treated group is too small (%s units) for `control_group` = \"nevertreated\" with these covariates; use \"notyettreated\".",
              format(gsz[gnm == 0]))
    small[small == 0] <- Inf
    warning(sprintf("small cohort(s) %s; some ATT(g,t) may be imprecise or not estimable.",
                    paste(small, collapse = ", ")), call. = FALSE)
  }
  if (panel && !unbalanced) {
    tcode <- match(tt[dd_first_rows(tc)], tlist)[tc + 1L]
    N <- attr(idc, "nlev"); T <- length(tlist)
    wide <- .Call(C_cs_wide, idc, tcode - 1L, N, T, as.double(y), as.double(w),
                  if (k > 1L) Xi[, -1L, drop = FALSE] else NULL)
    Y <- wide$Y; Wm <- wide$W; Xa <- wide$X
    first_row <- dd_first_rows(idc)
    unit_g <- gval[first_row]
    ucl <- if (is.null(cl)) NULL else cl[first_row]
    ug0 <- unit_g; ug0[!is.finite(ug0)] <- 0
    return(list(panel = TRUE, Y = Y, W = Wm, X = Xa, gval = as.double(ug0),
                never = !is.finite(unit_g), n = N, nobs = length(y), tlist = tlist, glist = glist,
                unit_group = ug0, unit_weight = Wm[, 1],
                unit_cluster = ucl, notes = notes))
  }
  # repeated cross-sections, or an unbalanced panel (rows grouped by unit)
  unit <- if (unbalanced) idc else seq_along(y) - 1L
  n <- if (unbalanced) attr(unit, "nlev") else length(y)
  first_row <- if (unbalanced) dd_first_rows(unit) else seq_len(n)
  unit_g <- gval[first_row]
  uw <- if (unbalanced) as.vector(tapply(w, as.integer(unit), mean)) else w
  ucl <- if (is.null(cl)) NULL else cl[first_row]
  list(panel = FALSE, y = y, tcol = match(tt, tlist) - 1L, gval = as.double(ifelse(is.finite(gval), gval, 0)),
       never = !is.finite(gval), w = w, Xrc = Xi, unit = as.integer(unit), n = n, nobs = length(y),
       tlist = tlist, glist = glist, unit_group = ifelse(is.finite(unit_g), unit_g, 0),
       unit_weight = uw, unit_cluster = ucl, notes = notes)
}

# The (g,t) cells: 0-based (unused, t, base) columns, group, period, threshold
# for not-yet-treated comparison units.
dd_cs_cells <- function(tlist, glist, anticipation, base_period, control_group) {
  T <- length(tlist)
  out <- list()
  for (g in glist) {
    bg <- max(which(tlist + anticipation < g))
    tis <- if (base_period == "varying") 2:T else 1:T
    for (ti in tis) {
      t <- tlist[ti]
      b <- if (base_period == "universal" || g <= t) bg else ti - 1L
      thr <- if (control_group == "nevertreated") Inf else tlist[max(ti, b)] + anticipation
      out[[length(out) + 1L]] <- c(g, t, ti - 1L, b - 1L, thr)
    }
  }
  m <- do.call(rbind, out)
  idx <- cbind(0L, as.integer(m[, 3]), as.integer(m[, 4]))
  list(g = m[, 1], t = m[, 2], idx = idx, thr = m[, 5], base = tlist[m[, 4] + 1])
}

# Warnings for cells did warns about, with counts.
dd_cs_report <- function(r, cells) {
  lab <- function(s) paste(sprintf("(%s,%s)", format(cells$g[s]), format(cells$t[s])), collapse = ", ")
  st <- r$status
  if (any(st == 4L)) warning(sprintf("no comparison (or treated) units for ATT(g,t) %s; set to NA (did warns likewise).",
                                     lab(st == 4L)), call. = FALSE)
  if (any(st == 5L)) warning(sprintf("overlap condition violated (propensity score >= 0.999) for ATT(g,t) %s; set to NA.",
                                     lab(st == 5L)), call. = FALSE)
  if (any(st %in% 2:3)) warning(sprintf("singular covariate matrix (outcome regression or propensity score) for ATT(g,t) %s; set to NA.",
                                        lab(st %in% 2:3)), call. = FALSE)
  if (any(st == 1L)) warning(sprintf("propensity score estimation did not converge for ATT(g,t) %s.", lab(st == 1L)),
                             call. = FALSE)
  if (any(r$n_trim > 0L))
    warning(sprintf("propensity scores at the 0.995 trimming bound: %s comparison unit(s) given zero weight across %d cell(s).",
                    format(sum(r$n_trim)), sum(r$n_trim > 0L)), call. = FALSE)
  invisible(NULL)
}

# did's Wald pre-test of parallel trends: pre-treatment cells (g > t) with a
# standard error, on the analytic (possibly clustered) variance.
dd_cs_pretest <- function(att, inf, n, cluster, cells, se) {
  P <- which(cells$g > cells$t & !is.na(se) & !is.na(att))
  if (!length(P)) return(list(W = NA_real_, df = 0L, p.value = NA_real_, note = "no pre-treatment cells"))
  V <- if (is.null(cluster)) .Call(C_if_crossprod, inf, as.integer(P)) / n
       else crossprod(dd_if_rows(inf[, P, drop = FALSE], cluster)) / n
  if (anyNA(V) || rcond(V) <= .Machine$double.eps)
    return(list(W = NA_real_, df = length(P), p.value = NA_real_, note = "singular variance of the pre-treatment ATT(g,t)"))
  a <- att[P]
  W <- n * drop(crossprod(a, solve(V, a)))
  list(W = W, df = length(P), p.value = stats::pchisq(W, length(P), lower.tail = FALSE), note = NULL)
}

#' @rdname did_cs
#' @param x A `did_cs` fit.
#' @method print did_cs
#' @export
print.did_cs <- function(x, ...) {
  NextMethod()
  pt <- x$pretest
  if (!is.na(pt$W))
    cat(sprintf("Pre-test of parallel trends: W = %.4f, df = %d, p-value = %.5f\n", pt$W, pt$df, pt$p.value))
  else if (!is.null(pt$note)) cat("Pre-test of parallel trends not computed:", pt$note, "\n")
  cat(sprintf("Control group: %s; anticipation: %d; base period: %s; estimator: %s\n",
              x$control_group, x$anticipation, x$base_period, x$est_method))
  invisible(x)
}

#' @rdname did_cs
#' @param object A `did_cs` fit.
#' @method vcov did_cs
#' @export
vcov.did_cs <- function(object, ...) dd_if_vcov(object)

# variance of influence-function estimates, formed on demand (n m^2 work):
# cluster sums when clustered; bootstrap fits keep their bootstrap standard
# errors on the diagonal
dd_if_vcov <- function(object) {
  V <- crossprod(dd_if_rows(object$inf, object$unit_cluster)) / object$n^2
  se <- object$coeftable$std.error
  if (identical(object$vcov_type, "bootstrap")) {
    s <- se / sqrt(diag(V)); s[!is.finite(s)] <- NA_real_
    V <- V * outer(s, s)
  }
  dimnames(V) <- list(object$coeftable$term, object$coeftable$term)
  V
}
