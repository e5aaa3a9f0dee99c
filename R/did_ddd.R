#' Triple differences: two periods and staggered adoption
#'
#' The triple-difference estimators of Ortiz-Villavicencio and Sant'Anna
#' (2025), as triplediff's `ddd()`: units belong to a treated cohort S (their
#' first treated period, `gname`; 0, Inf or NA for never treated) and to an
#' eligible or ineligible partition Q (`pname`, 0/1); only eligible units of
#' a treated cohort are treated. Each ATT(g,t) is a sum of three
#' difference-in-differences of the eligible units of cohort g (S = g, Q = 1)
#' against, in turn, the ineligible units of the same cohort (S = g, Q = 0),
#' the eligible never-treated units and the ineligible never-treated units
#' (the last one subtracted): DDD = DiD(S=g,Q=0) + DiD(S=never,Q=1) -
#' DiD(S=never,Q=0), each by regression adjustment (`"reg"`), inverse
#' probability weighting (`"ipw"`) or doubly robust (`"dr"`) with the
#' covariates `xformla`, on the two subgroups involved only. The three
#' comparisons run in did_cs()'s cell engine (the same C kernel), so the
#' cells, base periods (`"varying"`, `"universal"`), anticipation, weights,
#' clusters, survey designs, the multiplier bootstrap and uniform bands are
#' those of [did_cs()]; `aggregate()` gives the simple, group, dynamic
#' (event study) and calendar summaries.
#'
#' @section Correspondence with triplediff:
#' `yname`, `tname`, `idname`, `gname`, `pname`, `xformla`, `est_method`,
#' `base_period`, `weightsname`, `cband`, `alpha` have `ddd()`'s names and
#' meaning; `nboot > 0` is its `boot = TRUE, nboot` (`boot` is accepted).
#' ATT(g,t), the two-period ATT and their influence functions equal
#' triplediff 0.2.4's to about 1e-12 in the tests. Standard errors are
#' sqrt(sum(psi^2)) / n as triplediff's staggered ones; in the two-period
#' case triplediff divides the influence function's standard deviation
#' (n - 1) by sqrt(n), larger by sqrt(n / (n - 1)), and so do its SEs of
#' cells that combine several not-yet-treated comparison cohorts (GMM:
#' sqrt(1 / (n sum(Omega^-1))) with the n - 1 covariance Omega). With
#' `control_group = "notyettreated"` a cell with several comparison cohorts
#' (the never treated and every cohort not yet treated) combines their
#' triple differences with the weights colSums(Omega^-1) / sum(Omega^-1), as
#' triplediff (`fit$comparisons` counts them). The aggregations equal
#' triplediff's `agg_ddd()` (estimates, element SEs, overall SEs) except the
#' overall SE of `type = "group"`: triplediff's weight-estimation term there
#' takes the cohorts of the first ATT(g,t) cells instead of the cohort list
#' (0.273 against did_ddd's 0.355, which follows did, on the test data).
#' When a not-yet-treated cell leaves some cohorts out (e.g. ATT(2,3) with
#' cohort 3 already treated), triplediff 0.2.4 scales the comparison
#' cohorts' influence functions by the cell size instead of the sample size
#' and places them on the wrong units, which changes its estimates there
#' (ATT(2,3) 1.8488 against 1.8569 in the tests) and shrinks their SEs;
#' did_ddd uses each comparison's full-sample influence function (checked
#' against an independent implementation). Not yet available: repeated
#' cross-sections.
#'
#' @param data A balanced panel (data.frame, data.table or tibble).
#' @param yname,idname,tname,gname Outcome, unit, period and first treated
#'   period (0, Inf or NA: never treated) columns.
#' @param pname The 0/1 eligibility (partition) column, constant within unit.
#' @param xformla One-sided covariate formula (values from the earlier of a
#'   cell's two periods, as did_cs).
#' @param est_method `"dr"` (default), `"reg"` or `"ipw"`.
#' @param control_group `"nevertreated"` (default) or `"notyettreated"`.
#' @param base_period `"varying"` (default) or `"universal"`.
#' @param anticipation Periods of anticipation.
#' @param weightsname Sampling weights (constant within unit).
#' @param cluster A column to cluster on (units nested in clusters).
#' @param survey A complex survey design (as in [did_cs()]).
#' @param nboot,boot_weights,cband,alpha Multiplier bootstrap draws (0:
#'   analytic), weights, uniform band over the ATT(g,t), significance level.
#' @param ... triplediff's `boot` (TRUE: `nboot` draws, default 999).
#' @return A fit of class `c("did_ddd", "dd_fit")` with one row per ATT(g,t)
#'   (`group`, `time`, `event`); with two periods one row `ATT(g,t)` for the
#'   treated cohort.
#' @references Ortiz-Villavicencio, M. and Sant'Anna, P. H. C. (2025). Better
#'   understanding triple differences estimators.
#' @examples
#' set.seed(1)
#' n <- 600
#' g <- sample(c(0, 3, 4), n, replace = TRUE); q <- rbinom(n, 1, 0.5)
#' x <- rnorm(n)
#' d <- expand.grid(t = 1:5, id = 1:n)
#' d$g <- g[d$id]; d$q <- q[d$id]; d$x <- x[d$id]
#' d$y <- rnorm(n)[d$id] + d$t * (1 + 0.2 * d$q) + 0.5 * x[d$id] * d$t +
#'   2 * (d$g > 0 & d$t >= d$g & d$q == 1) + rnorm(nrow(d))
#' fit <- did_ddd(d, "y", "id", "t", "g", "q", xformla = ~ x)
#' fit
#' es <- aggregate(fit, type = "dynamic")
#' plot(es)
#' @export
did_ddd <- function(data, yname, idname, tname, gname, pname, xformla = NULL, est_method = c("dr", "reg", "ipw"),
                    control_group = c("nevertreated", "notyettreated"), base_period = c("varying", "universal"),
                    anticipation = 0, weightsname = NULL, cluster = NULL, survey = NULL, nboot = 0,
                    boot_weights = c("rademacher", "mammen", "webb"), cband = FALSE, alpha = 0.05, ...) {
  call <- match.call()
  dd_required(c("data", "yname", "idname", "tname", "gname"))
  if (missing(pname)) dd_stop("`pname` (the 0/1 eligibility column) is missing.")
  dots <- list(...)
  a <- dd_did_aliases(dots, "boot", "did_ddd")
  if (!is.null(a$boot) && dd_check_flag(a$boot, "boot") && identical(nboot, 0)) nboot <- 999
  sp <- dd_spec(alpha = alpha, nboot = nboot, boot_weights = boot_weights, cband = cband, cluster = cluster)
  dd_check_data(data)
  est_method <- dd_match_arg(if (identical(est_method, c("dr", "reg", "ipw"))) "dr" else est_method,
                             c("dr", "reg", "ipw"), "est_method")
  control_group <- dd_match_vocab(control_group[1], c("nevertreated", "notyettreated"), "control_group")
  base_period <- dd_match_arg(base_period[1], c("varying", "universal"), "base_period")
  anticipation <- dd_check_count(anticipation, "anticipation")
  dd_check_string(cluster, "cluster", null_ok = TRUE)
  if (!is.null(cluster) && identical(cluster, idname)) cluster <- NULL
  design <- dd_svy_arg(survey, data, weightsname, cluster, NULL, 0L)
  if (!is.null(design) && design$replicate && sp$nboot > 0L)
    dd_stop("`nboot` = %d: with a replicate-weight `survey` design the standard errors come from the replicates; use nboot = 0.",
            sp$nboot)
  p <- dd_panel(data, yname, idname, tname, c(gname = gname, pname = pname), xformla, weightsname, cluster, NULL,
                design, x_list = TRUE, anticipation = anticipation)
  Q <- dd_check_numeric_col(p$vals$pname, "pname", pname)
  dd_check_binary(Q, "pname", pname)
  dd_check_constant_within(Q, p$id, "pname", pname, code = p$idc)
  if (!is.null(p$w)) dd_check_constant_within(p$w, p$id, if (is.null(design)) "weightsname" else "survey",
                                              if (is.null(design)) weightsname else "weights", code = p$idc)
  if (!is.null(cluster)) dd_check_constant_within(p$cluster[[1]], p$id, "cluster", cluster, code = p$idc)
  dd_svy_check_units(design, p, idname)
  ef <- dd_first_rows(p$idc)
  tlev <- as.double(p$tt[dd_first_rows(p$tc)])
  tlist <- sort(tlev)
  G <- as.double(p$g[ef]); never <- p$never[ef]; Qu <- Q[ef]
  co <- dd_cs_cohorts(G, never, tlist, anticipation, control_group, "units")
  tl <- tlist[co$tkeep]
  # units in blocks of (cohort, eligibility): cohorts in order (never treated
  # last), eligible before ineligible, then by identifier
  Gk <- ifelse(never, Inf, G)
  kept <- which(co$keep)
  kept <- kept[order(Gk[kept], -Qu[kept], p$id[ef][kept], method = "radix")]
  umap <- rep(-1L, length(ef)); umap[kept] <- seq_along(kept) - 1L
  tmap <- match(tlev, tl) - 1L; tmap[is.na(tmap)] <- -1L
  wide <- .Call(C_panel_wide, p$idc, p$tc, umap, tmap, length(kept), length(tl), as.double(p$y),
                if (is.null(p$w)) NULL else as.double(p$w), p$X)
  if (anyNA(wide$Y))
    dd_stop("the panel is unbalanced: %d unit(s) miss some periods; did_ddd() needs a balanced panel.",
            sum(rowSums(is.na(wide$Y)) > 0))
  n <- length(kept)
  ug <- Gk[kept]; uq <- Qu[kept]
  glist <- co$glist
  eng <- dd_ddd_engine(wide, ug, uq, tl, glist, anticipation, base_period, control_group, est_method, gname, pname)
  cl <- if (!is.null(design)) dd_svy_if_rows(design, p$rows[ef[kept]])
        else if (!is.null(cluster)) p$cluster[[1]][ef[kept]] else NULL
  if (!is.null(cluster)) dd_check_nclusters(length(unique(cl)), cluster)
  cells <- eng$cells; K <- length(cells$g)
  se <- dd_if_se(eng$inf, n, cl, seq_len(K))
  se[is.na(eng$att)] <- NA_real_
  crit <- NA_real_
  if (sp$nboot > 0L) {
    okc <- which(!is.na(se))
    bt <- dd_if_boot(eng$inf, n, cl, sp$nboot, sp$boot_weights, sp$alpha, band = seq_along(okc), cols = okc)
    se[okc] <- bt$se
    if (sp$cband && length(okc) > 1L) crit <- bt$crit
  } else if (sp$cband) dd_stop("`cband` = TRUE needs bootstrap draws: set nboot = 999, say.")
  terms <- sprintf("ATT(%s,%s)", format(cells$g, trim = TRUE), format(cells$t, trim = TRUE))
  tab <- dd_if_table(terms, eng$att, se, sp$alpha, crit,
                     data.frame(group = cells$g, time = cells$t, event = cells$t - cells$g))
  svy_label <- dd_svy_label(design)
  uw <- if (is.null(wide$W)) rep(1, n) else wide$W[, 1]
  info <- dd_info("did_ddd", "Triple differences, group-time ATT (did_ddd)", yname, n * length(tl),
                  if (sp$nboot > 0L) "bootstrap" else "analytic",
                  paste0(dd_cs_vcov_label(sp$nboot, sp$boot_weights, cluster), svy_label), Inf, sp$alpha, terms,
                  n_units = n, n_periods = length(tl),
                  n_clusters = if (inherits(cl, "dd_svy_rows")) cl$G else if (is.null(cl)) NULL else length(unique(cl)),
                  notes = co$notes)
  new_dd_fit("did_ddd", tab, stats::setNames(eng$att, terms), NULL, info, call,
             list(inf = eng$inf, n = n, units = p$id[ef][kept], unit_group = ifelse(is.finite(ug), ug, 0),
                  unit_partition = uq, unit_weight = uw / mean(uw), unit_cluster = cl, periods = tl, crit = crit,
                  nboot = sp$nboot, boot_weights = sp$boot_weights, cband = sp$cband, control_group = control_group,
                  anticipation = anticipation, base_period = base_period, est_method = est_method, tname = tname,
                  cluster = cluster, survey_label = if (nzchar(svy_label)) svy_label else NULL,
                  comparisons = eng$n_comparisons))
}

# The cells of the triple difference in did_cs's panel engine (C_cs_panel):
# blocks of units by (cohort, eligibility); each ATT(g,t) is three engine
# cells with the eligible units of cohort g treated, compared with the
# ineligible units of g, the eligible never treated and the ineligible never
# treated. Returns att (K), the cells, and the influence functions (n x
# (K + |glist|): the K cells' DDD combinations, then the cohort-share
# columns of the aggregations, w 1{S = g, Q = 1}).
dd_ddd_engine <- function(wide, ug, uq, tl, glist, anticipation, base_period, control_group, est_method, gname,
                          pname) {
  key <- paste(ug, uq)
  bkey <- unique(key)                                # units are sorted by block
  first <- match(bkey, key)
  bG <- ug[first]; bQ <- uq[first]; bnever <- !is.finite(bG)
  # treated blocks are found by value (bval == the cell's cohort): the
  # ineligible block of a cohort gets a value no cell has
  bval <- ifelse(bnever, Inf, ifelse(bQ == 1, bG, -Inf))
  bstart <- as.integer(c(0L, cumsum(tabulate(match(key, bkey), length(bkey)))))
  for (g in glist) {
    if (!any(bG == g & bQ == 1)) dd_stop("cohort %s of `gname` = \"%s\" has no eligible units (`pname` = \"%s\" is 0 for all of them).",
                                         format(g), gname, pname)
    if (!any(bG == g & bQ == 0)) dd_stop("cohort %s of `gname` = \"%s\" has no ineligible units (`pname` = \"%s\" is 1 for all of them); the triple difference needs both.",
                                         format(g), gname, pname)
  }
  if (control_group == "nevertreated" && (!any(bnever & bQ == 1) || !any(bnever & bQ == 0)))
    dd_stop("the never-treated units of `gname` = \"%s\" must include eligible and ineligible units (`pname` = \"%s\" 1 and 0).",
            gname, pname)
  cells <- dd_cs_cells(tl, glist, anticipation, base_period, control_group)
  K <- length(cells$g)
  ref <- cells$idx[, 2] == cells$idx[, 3]
  # each cell's comparison cohorts (Inf: never treated): the never treated,
  # or with not-yet-treated comparisons every cohort not treated by the
  # cell's threshold; cohorts lacking eligible or ineligible units are left out
  comp <- lapply(seq_len(K), function(k) {
    cs <- sort(unique(bG[bnever | (bG > cells$thr[k] & bG != cells$g[k])]))
    cs[vapply(cs, function(c) any(bG == c & bQ == 1) && any(bG == c & bQ == 0), TRUE)]
  })
  nc <- lengths(comp)
  if (any(nc == 0L & !ref))
    dd_stop("ATT(%s,%s) has no comparison cohort with both eligible and ineligible units (`pname` = \"%s\").",
            format(cells$g[which(nc == 0L & !ref)[1]]), format(cells$t[which(nc == 0L & !ref)[1]]), pname)
  # engine cells: per cell the eligible of g against the ineligible of g
  # (pair 3), then per comparison cohort c against its eligible (2) and
  # ineligible (1) units
  cell <- integer(); pair <- integer(); cc <- numeric()
  for (k in seq_len(K)) {
    cs <- if (length(comp[[k]])) comp[[k]] else Inf
    cell <- c(cell, k, rep(k, 2L * length(cs))); pair <- c(pair, 3L, rep(c(2L, 1L), length(cs)))
    cc <- c(cc, NA, rep(cs, each = 2L))
  }
  J <- length(cell); gc <- cells$g[cell]
  memb <- vapply(seq_len(J), function(j) {
    tr <- !bnever & bG == gc[j] & bQ == 1
    tr | switch(pair[j], bG == cc[j] & bQ == 0, bG == cc[j] & bQ == 1, !bnever & bG == gc[j] & bQ == 0)
  }, logical(length(bkey)))
  memb <- matrix(memb, length(bkey))
  refj <- ref[cell]
  memb[, refj] <- FALSE
  bc <- dd_cs_block_cols(memb, bval, bnever, glist)
  varying <- (!is.null(wide$X) && dim(wide$X)[3] > 1L) || (!is.null(wide$W) && ncol(wide$W) > 1L)
  tkey <- paste(gc, apply(memb, 2, function(z) paste(which(z), collapse = ",")),
                if (varying) pmin(cells$idx[cell, 2], cells$idx[cell, 3]) else "")
  task <- match(tkey, unique(tkey[!refj])) - 1L
  task[refj] <- -1L
  r <- .Call(C_cs_panel, wide$Y, bstart, as.double(bval), bnever, wide$W, wide$X, cells$idx[cell, , drop = FALSE],
             as.double(gc), bc$pos, as.integer(task), lengths(bc$cols), bc$extra,
             match(est_method, c("reg", "ipw", "dr")) - 1L, 0.995)
  dd_cs_report(r, list(g = gc, t = cells$t[cell]))
  psi <- dd_ifs(length(ug), J + length(glist), bstart, bc$cols, r$vals)
  # one DDD per (cell, comparison cohort): pair 3 + pair 2 - pair 1
  p3 <- which(pair == 3L)
  pc <- which(pair == 2L)                            # one per (cell, cohort)
  comb <- matrix(0, J + length(glist), length(pc))
  comb[cbind(p3[cell[pc]], seq_along(pc))] <- 1
  comb[cbind(pc, seq_along(pc))] <- 1
  comb[cbind(pc + 1L, seq_along(pc))] <- -1
  attc <- drop(r$att %*% comb[seq_len(J), , drop = FALSE])
  L <- .Call(C_ifs_combine, psi, comb)
  # several comparison cohorts: their optimal (GMM) combination, weights
  # colSums(Omega^-1) / sum(Omega^-1) with Omega the covariance of their
  # influence functions (as triplediff)
  att <- numeric(K); IF <- matrix(0, length(ug), K)
  for (k in seq_len(K)) {
    j <- which(cell[pc] == k)
    if (length(j) == 1L || ref[k]) {
      att[k] <- attc[j[1]]; IF[, k] <- L[, j[1]]
    } else {
      Oi <- tryCatch(solve(stats::cov(L[, j, drop = FALSE])), error = function(e) NULL)
      if (is.null(Oi)) dd_stop("ATT(%s,%s): the covariance of the comparison cohorts' estimates is singular.",
                               format(cells$g[k]), format(cells$t[k]))
      w <- colSums(Oi) / sum(Oi)
      att[k] <- sum(w * attc[j]); IF[, k] <- L[, j, drop = FALSE] %*% w
    }
  }
  # the cohort-share columns w 1{S = g} (every unit of the cohort, eligible or
  # not, as triplediff's aggregation weights)
  w <- if (is.null(wide$W)) rep(1, length(ug)) else wide$W[, 1]
  list(att = att, cells = cells, n_comparisons = nc,
       inf = dd_ifs_dense(cbind(IF, dd_cohort_mat(w, ifelse(is.finite(ug), ug, 0), glist))))
}

#' Aggregate a did_ddd fit
#'
#' The summaries of [aggregate.did_cs()] for the triple-difference ATT(g,t):
#' `"dynamic"` (event study), `"group"`, `"simple"`, `"calendar"`, with
#' cohort shares of all units of each treated cohort (as triplediff's
#' `agg_ddd()`) and their estimation in the influence functions.
#'
#' @param x A `did_ddd` fit.
#' @param type `"dynamic"` (default), `"group"`, `"simple"` or `"calendar"`.
#' @param ... Passed to [aggregate.did_cs()].
#' @return A `did_cs_agg` fit.
#' @examples
#' set.seed(1)
#' n <- 600
#' g <- sample(c(0, 3, 4), n, replace = TRUE); q <- rbinom(n, 1, 0.5)
#' d <- expand.grid(t = 1:5, id = 1:n)
#' d$g <- g[d$id]; d$q <- q[d$id]
#' d$y <- rnorm(n)[d$id] + d$t * (1 + 0.2 * d$q) +
#'   2 * (d$g > 0 & d$t >= d$g & d$q == 1) + rnorm(nrow(d))
#' aggregate(did_ddd(d, "y", "id", "t", "g", "q"), type = "simple")
#' @export
aggregate.did_ddd <- function(x, type = c("dynamic", "group", "simple", "calendar"), ...) {
  type <- dd_match_arg(if (identical(type, eval(formals()$type))) "dynamic" else type,
                       c("dynamic", "group", "simple", "calendar"), "type")
  tab <- x$coeftable
  out <- aggregate.did_cs(dd_cells_as_cs(x, tab$group, tab$time, tab$estimate, x$inf, x$unit_group, x$unit_weight,
                                         x$unit_cluster, x$periods, x$cluster, x$survey_label, x$base_period,
                                         x$anticipation), type = type, ...)
  out$title <- sprintf("Triple differences: aggregation (type = \"%s\") of ATT(g,t) (did_ddd)", type)
  out$call <- match.call()
  out
}

#' @export
vcov.did_ddd <- function(object, ...) dd_if_vcov(object)
