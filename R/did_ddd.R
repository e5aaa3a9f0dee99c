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
#' against an independent implementation).
#'
#' Repeated cross-sections (`panel = FALSE`: each row its own observation)
#' and unbalanced panels (`allow_unbalanced_panel = TRUE`) run in did_cs()'s
#' repeated cross-section engine with DRDID's `drdid_rc`, `reg_did_rc` and
#' `std_ipw_did_rc` per comparison, as triplediff's `panel = FALSE` and
#' `allow_unbalanced_panel = TRUE` paths: `"reg"` and `"ipw"` equal
#' triplediff 0.2.4 (estimates, influence functions, SEs with the factors
#' above). Its doubly robust repeated cross-section influence function
#' (`compute_did_rc`) adds the comparison regression's base-period terms
#' where DRDID subtracts them; the estimates agree (with one comparison
#' cohort), the influence functions differ on the comparison observations of
#' the base period, and so do SEs (0.3427 against did_ddd's 0.3446 on the
#' same n - 1 convention in the two-period test) and the GMM weights of
#' not-yet-treated cells. did_ddd follows DRDID
#' (checked against `DRDID::drdid_rc`). Without `allow_unbalanced_panel`,
#' units missing periods are dropped with a warning (as triplediff).
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
#' @param panel `TRUE` for panel data, `FALSE` for repeated cross-sections
#'   (`idname` then only orders the rows).
#' @param allow_unbalanced_panel Keep units missing some periods (estimated
#'   as repeated cross-sections with the units' rows combined, as triplediff
#'   and did) instead of dropping them.
#' @param cluster A column to cluster on (units nested in clusters).
#' @param survey A complex survey design (as in [did_cs()]).
#' @param nboot,boot_weights,cband,alpha Multiplier bootstrap draws (0:
#'   analytic), weights, uniform band over the ATT(g,t), significance level.
#' @param ... triplediff's `boot` (TRUE: `nboot` draws, default 999);
#'   `inffunc`, `use_parallel` and `cores` are accepted and change nothing
#'   (the influence functions are always in `fit$inf`; threads follow
#'   [dd_threads()]).
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
                    anticipation = 0, weightsname = NULL, panel = TRUE, allow_unbalanced_panel = FALSE,
                    cluster = NULL, survey = NULL, nboot = 0, boot_weights = c("rademacher", "mammen", "webb"),
                    cband = FALSE, alpha = 0.05, ...) {
  call <- match.call()
  dd_required(c("data", "yname", "idname", "tname", "gname"))
  if (missing(pname)) dd_stop("`pname` (the 0/1 eligibility column) is missing.")
  # triplediff's spellings: `boot`; `inffunc` (the influence functions are
  # always kept, `fit$inf`), `use_parallel` and `cores` (threads follow
  # dd_threads()) are accepted and change nothing
  a <- dd_did_aliases(list(...), c("boot", "inffunc", "use_parallel", "cores"), "did_ddd")
  for (nm in c("inffunc", "use_parallel")) if (!is.null(a[[nm]])) dd_check_flag(a[[nm]], nm)
  if (!is.null(a$cores)) dd_check_count(a$cores, "cores", min = 1)
  if (!is.null(a$boot) && dd_check_flag(a$boot, "boot") && identical(nboot, 0)) nboot <- 999
  sp <- dd_spec(alpha = alpha, nboot = nboot, boot_weights = boot_weights, cband = cband, cluster = cluster)
  dd_check_data(data)
  est_method <- dd_match_arg(if (identical(est_method, c("dr", "reg", "ipw"))) "dr" else est_method,
                             c("dr", "reg", "ipw"), "est_method")
  control_group <- dd_match_vocab(control_group[1], c("nevertreated", "notyettreated"), "control_group")
  base_period <- dd_match_arg(base_period[1], c("varying", "universal"), "base_period")
  anticipation <- dd_check_count(anticipation, "anticipation")
  panel <- dd_check_flag(panel, "panel")
  allow_unbalanced_panel <- dd_check_flag(allow_unbalanced_panel, "allow_unbalanced_panel")
  dd_check_string(cluster, "cluster", null_ok = TRUE)
  if (!is.null(cluster) && identical(cluster, idname)) cluster <- NULL
  # the units (by cohort, eligible before ineligible) and their
  # influence-function rows (R/unit_panel.R)
  up <- dd_unit_panel(data, yname, idname, tname, gname, xformla, weightsname, cluster, survey, sp$nboot,
                      roles = c(pname = pname), role_checks = list(pname = dd_check_binary), partition = "pname",
                      anticipation = anticipation, control_group = control_group, panel = panel,
                      allow_unbalanced = allow_unbalanced_panel)
  design <- up$design; prep <- up$prep; uq <- up$unit$pname; cl <- up$cl
  rm(up)
  cells <- dd_cs_cells(prep$tlist, prep$glist, anticipation, base_period, control_group)
  eng <- dd_ddd_engine(prep, uq, cells, control_group, est_method, gname, pname)
  n <- prep$n
  K <- length(cells$g)
  ci <- dd_cells_inference(eng$inf, n, cl, K, eng$att, sp)
  se <- ci$se; crit <- ci$crit
  terms <- sprintf("ATT(%s,%s)", format(cells$g, trim = TRUE), format(cells$t, trim = TRUE))
  tab <- dd_if_table(terms, eng$att, se, sp$alpha, crit,
                     data.frame(group = cells$g, time = cells$t, event = cells$t - cells$g))
  svy_label <- dd_svy_label(design)
  units_level <- prep$panel || allow_unbalanced_panel
  info <- dd_info("did_ddd", "Triple differences, group-time ATT (did_ddd)", yname, prep$nobs,
                  if (sp$nboot > 0L) "bootstrap" else "analytic",
                  paste0(dd_cs_vcov_label(sp$nboot, sp$boot_weights, cluster), svy_label), Inf, sp$alpha, terms,
                  n_units = if (units_level) n else NULL, n_periods = length(prep$tlist),
                  n_clusters = if (inherits(cl, "dd_svy_rows")) cl$G else if (is.null(cl)) NULL else length(unique(cl)),
                  notes = prep$notes)
  uw <- prep$unit_weight
  new_dd_fit("did_ddd", tab, stats::setNames(eng$att, terms), NULL, info, call,
             list(inf = eng$inf, n = n, units = prep$units, unit_group = prep$unit_group, unit_partition = uq,
                  unit_weight = uw / mean(uw), unit_cluster = cl, periods = prep$tlist, crit = crit,
                  nboot = sp$nboot, boot_weights = sp$boot_weights, cband = sp$cband, control_group = control_group,
                  anticipation = anticipation, base_period = base_period, est_method = est_method, tname = tname,
                  panel = prep$panel, cluster = cluster, survey_label = if (nzchar(svy_label)) svy_label else NULL,
                  comparisons = eng$n_comparisons))
}

# The triple difference in did_cs's cell engines. Units (observations in
# repeated cross-sections) form blocks of (cohort, eligibility), in repeated
# cross-sections also by period; each ATT(g,t) is, per comparison cohort c,
# three engine cells with the eligible units of cohort g treated, compared
# with the ineligible units of g (pair 3), the eligible (pair 2) and the
# ineligible (pair 1) units of c: DDD_c = pair 3 + pair 2 - pair 1. Several
# comparison cohorts (not-yet-treated) are combined with GMM weights.
# Returns att (K), the number of comparison cohorts per cell, and the
# influence functions (n x (K + |glist|): the cells, then the cohort-share
# columns of the aggregations, w 1{S = g}).
dd_ddd_engine <- function(prep, uq, cells, control_group, est_method, gname, pname) {
  ug <- ifelse(prep$unit_group == 0, Inf, prep$unit_group)   # Inf: never treated
  glist <- prep$glist
  K <- length(cells$g)
  ref <- cells$idx[, 2] == cells$idx[, 3]
  # (cohort, eligibility) combinations and the engine cells they enter
  cq <- paste(ug, uq)
  ckey <- unique(cq)
  cG <- ug[match(ckey, cq)]; cQ <- uq[match(ckey, cq)]; cnever <- !is.finite(cG)
  what <- if (prep$panel || !is.null(prep$units)) "units" else "observations"
  for (g in glist) {
    if (!any(cG == g & cQ == 1)) dd_stop("cohort %s of `gname` = \"%s\" has no eligible %s (`pname` = \"%s\" is 0 for all of them).",
                                         format(g), gname, what, pname)
    if (!any(cG == g & cQ == 0)) dd_stop("cohort %s of `gname` = \"%s\" has no ineligible %s (`pname` = \"%s\" is 1 for all of them); the triple difference needs both.",
                                         format(g), gname, what, pname)
  }
  if (control_group == "nevertreated" && (!any(cnever & cQ == 1) || !any(cnever & cQ == 0)))
    dd_stop("the never-treated %s of `gname` = \"%s\" must include eligible and ineligible ones (`pname` = \"%s\" 1 and 0).",
            what, gname, pname)
  # each cell's comparison cohorts (Inf: never treated): the never treated,
  # or with not-yet-treated comparisons every cohort not treated by the
  # cell's threshold; cohorts lacking eligible or ineligible units are left out
  comp <- lapply(seq_len(K), function(k) {
    cs <- sort(unique(cG[cnever | (cG > cells$thr[k] & cG != cells$g[k])]))
    cs[vapply(cs, function(c) any(cG == c & cQ == 1) && any(cG == c & cQ == 0), TRUE)]
  })
  nc <- lengths(comp)
  if (any(nc == 0L & !ref))
    dd_stop("ATT(%s,%s) has no comparison cohort with both eligible and ineligible %s (`pname` = \"%s\").",
            format(cells$g[which(nc == 0L & !ref)[1]]), format(cells$t[which(nc == 0L & !ref)[1]]), what, pname)
  cell <- integer(); pair <- integer(); cc <- numeric()
  for (k in seq_len(K)) {
    cs <- if (length(comp[[k]])) comp[[k]] else Inf
    cell <- c(cell, k, rep(k, 2L * length(cs))); pair <- c(pair, 3L, rep(c(2L, 1L), length(cs)))
    cc <- c(cc, NA, rep(cs, each = 2L))
  }
  J <- length(cell); gc <- cells$g[cell]
  cmemb <- vapply(seq_len(J), function(j) {
    tr <- !cnever & cG == gc[j] & cQ == 1
    tr | switch(pair[j], cG == cc[j] & cQ == 0, cG == cc[j] & cQ == 1, !cnever & cG == gc[j] & cQ == 0)
  }, logical(length(ckey)))
  cmemb <- matrix(cmemb, length(ckey))
  refj <- ref[cell]
  cmemb[, refj] <- FALSE
  # treated blocks are found by value (== the cell's cohort): ineligible
  # blocks of a cohort get a value no cell has
  cval <- ifelse(cnever, Inf, ifelse(cQ == 1, cG, -Inf))
  idx <- cells$idx[cell, , drop = FALSE]
  method <- match(est_method, c("reg", "ipw", "dr")) - 1L
  if (prep$panel) {
    # units come sorted by cohort and eligibility: the blocks are contiguous
    bstart <- as.integer(c(0L, cumsum(tabulate(match(cq, ckey), length(ckey)))))
    bc <- dd_cs_block_cols(cmemb, cval, cnever, glist)
    varying <- (!is.null(prep$X) && dim(prep$X)[3] > 1L) || (!is.null(prep$W) && ncol(prep$W) > 1L)
    tkey <- paste(gc, apply(cmemb, 2, function(z) paste(which(z), collapse = ",")),
                  if (varying) pmin(idx[, 2], idx[, 3]) else "")
    task <- match(tkey, unique(tkey[!refj])) - 1L
    task[refj] <- -1L
    r <- .Call(C_cs_panel, prep$Y, bstart, as.double(cval), cnever, prep$W, prep$X, idx, as.double(gc), bc$pos,
               as.integer(task), lengths(bc$cols), bc$extra, method, 0.995)
    psi <- dd_ifs(length(ug), J + length(glist), bstart, bc$cols, r$vals)
  } else {
    # rows stay in their order (by identifier); blocks of (cohort,
    # eligibility), by period in repeated cross-sections (a row is in a cell
    # only in one of the cell's two periods)
    n <- prep$n
    up <- if (is.null(prep$unit_period)) rep(-1L, n) else prep$unit_period
    tl <- sort(unique(up))
    bl <- dd_rc_blocks((match(cq, ckey) - 1L) * length(tl) + match(up, tl))
    nb <- length(bl$key)
    bcq <- (bl$key - 1L) %/% length(tl) + 1L; bp <- tl[(bl$key - 1L) %% length(tl) + 1L]
    memb <- cmemb[bcq, , drop = FALSE] & (bp < 0 | outer(bp, idx[, 2], "==") | outer(bp, idx[, 3], "=="))
    memb <- matrix(memb, nb, J)
    bc <- dd_cs_block_cols(memb, cval[bcq], cnever[bcq], glist)
    r <- .Call(C_cs_rc, prep$y, prep$tcol, prep$gval, prep$never, prep$w, prep$Xrc, idx, as.double(gc),
               cells$thr[cell], method, 0.995, prep$unit, n,
               list(bl$start, bc$pos, lengths(bc$cols), bc$extra, bl$blk, bl$loc, as.double(cval[bcq])),
               as.double(prep$unit_weight))
    psi <- dd_ifs(n, J + length(glist), bl$start, bc$cols, r$vals, rows = bl$rows)
  }
  r$vals <- NULL
  coh <- function(c) ifelse(is.finite(c), paste("cohort", format(c)), "never treated")
  dd_cs_report(r, NULL, what = "the comparisons",
               labels = sprintf("ATT(%s,%s) against %s", format(gc), format(cells$t[cell]),
                                ifelse(pair == 3L, paste(coh(gc), "ineligible"),
                                       paste(coh(cc), ifelse(pair == 2L, "eligible", "ineligible")))),
               fate = "left out (a cell without any comparison left is NA)")
  # one DDD per (cell, comparison cohort): pair 3 + pair 2 - pair 1
  p3 <- which(pair == 3L)
  pc <- which(pair == 2L)                            # one per (cell, cohort)
  comb <- matrix(0, J + length(glist), length(pc))
  comb[cbind(p3[cell[pc]], seq_along(pc))] <- 1
  comb[cbind(pc, seq_along(pc))] <- 1
  comb[cbind(pc + 1L, seq_along(pc))] <- -1
  # (sums over each combination's own engine cells: an NA cell elsewhere
  # must not reach it, as NA * 0 would in a matrix product)
  attc <- vapply(seq_along(pc), function(i) {
    a <- comb[seq_len(J), i]
    sum(r$att[a != 0] * a[a != 0])
  }, numeric(1))
  L <- .Call(C_ifs_combine, psi, comb)
  # several comparison cohorts: their optimal (GMM) combination, weights
  # colSums(Omega^-1) / sum(Omega^-1) with Omega the covariance of their
  # influence functions (as triplediff)
  # (a comparison cohort whose triple difference is NA, for want of
  # observations, is left out of the combination)
  att <- numeric(K); IF <- matrix(0, length(ug), K)
  for (k in seq_len(K)) {
    j <- which(cell[pc] == k)
    if (!ref[k] && length(j) > 1L) {
      j <- j[!is.na(attc[j])]
      nc[k] <- length(j)
      if (!length(j)) { att[k] <- NA_real_; IF[, k] <- NA_real_; next }
    }
    if (length(j) == 1L || ref[k]) {
      att[k] <- attc[j[1]]; IF[, k] <- L[, j[1]]
    } else {
      Oi <- if (anyNA(L[, j])) NULL else tryCatch(solve(stats::cov(L[, j, drop = FALSE])), error = function(e) NULL)
      if (is.null(Oi)) dd_stop("ATT(%s,%s): the covariance of the comparison cohorts' estimates is singular or not available.",
                               format(cells$g[k]), format(cells$t[k]))
      w <- colSums(Oi) / sum(Oi)
      att[k] <- sum(w * attc[j]); IF[, k] <- L[, j, drop = FALSE] %*% w
    }
  }
  # the cohort-share columns w 1{S = g} (every unit of the cohort, eligible or
  # not, as triplediff's aggregation weights), with the weights normalised
  # as the fit's unit_weight from which aggregate() computes the shares
  uw <- prep$unit_weight
  list(att = att, n_comparisons = nc,
       inf = dd_ifs_dense(cbind(IF, dd_cohort_mat(uw / mean(uw), prep$unit_group, glist))))
}

#' Aggregate a did_ddd fit
#'
#' The summaries of [aggregate.did_cs()] for the triple-difference ATT(g,t):
#' `"dynamic"` (event study), `"group"`, `"simple"`, `"calendar"`, with
#' cohort shares of all units of each treated cohort (as triplediff's
#' `agg_ddd()`) and their estimation in the influence functions.
#'
#' @param x A `did_ddd` fit.
#' @param type `"dynamic"` (default; also `"event"`), `"group"`, `"simple"` or `"calendar"`.
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
aggregate.did_ddd <- function(x, type = c("dynamic", "group", "simple", "calendar"), ...)
  dd_agg_via_cs(x, type, x$base_period, "Triple differences", match.call(), ...)

#' @export
vcov.did_ddd <- function(object, ...) {
  dd_check_dots(list(...), "vcov()")
  dd_if_vcov(object)
}

# print() and summary(): after the table, the settings and the comparisons
dd_footer.did_ddd <- function(x) {
  NextMethod()
  cat(sprintf("Control group: %s; anticipation: %d; base period: %s; estimator: %s; %s\n",
              x$control_group, x$anticipation, x$base_period, x$est_method,
              if (isTRUE(x$panel)) "panel" else if (!is.null(x$units)) "unbalanced panel" else "repeated cross-sections"))
  q <- x$unit_partition
  cat(sprintf("Eligible %s: %d of %d in treated cohorts, %d of %d never treated\n",
              if (is.null(x$units)) "observations" else "units", sum(q == 1 & x$unit_group > 0), sum(x$unit_group > 0), sum(q == 1 & x$unit_group == 0),
              sum(x$unit_group == 0)))
  m <- x$comparisons
  if (any(m > 1L))
    cat(sprintf("%d cell(s) combine %s comparison cohorts (GMM weights).\n", sum(m > 1L),
                if (min(m[m > 1L]) == max(m)) max(m) else paste(min(m[m > 1L]), "to", max(m))))
  invisible(x)
}
