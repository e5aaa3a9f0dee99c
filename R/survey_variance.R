# Design-based variances (Taylor linearisation over strata and PSUs by
# stage, replicate weights), design-based cell means (aggregate_survey()),
# the survey variance of regression coefficients and the PSU rows that the
# influence-function engine (influence.R) uses for survey designs. The
# designs themselves are built in survey_design.R; the kernels are in
# src/survey.c.

# The stage loop of survey's svyrecvar: stage 1, then (with fpc) each later
# stage weighted by the sampling fractions of the stages above it. kernel(sg,
# s, mult, group, ng, lon) returns one stage's variance (with attribute
# "lonely"); the sum over stages is returned.
dd_svy_stages <- function(design, kernel) {
  lon <- match(design$lonely_psu, c("fail", "remove", "certainty", "adjust", "average")) - 1L
  V <- 0
  S <- if (design$fpc) length(design$stages) else 1L
  for (s in seq_len(S)) {
    sg <- design$stages[[s]]
    if (s > 1L && all(is.na(sg$popsize))) break
    # per stratum: multiplier from the stages above (the product of their
    # sampling fractions npsu / popsize, in stage order, at the stratum's
    # first row); group = parent cluster
    first <- dd_first_rows(structure(sg$strata, nlev = sg$ns))
    mult <- rep(1, length(first))
    for (u in seq_len(s - 1L)) {
      su <- design$stages[[u]]
      mult <- mult * (su$npsu / su$popsize)[su$strata[first] + 1L]
    }
    group <- if (s == 1L) rep(0L, sg$ns) else design$stages[[s - 1L]]$clus[first]
    ng <- if (s == 1L) 1L else design$stages[[s - 1L]]$nc
    Vs <- kernel(sg, s, mult, as.integer(group), as.integer(ng), lon)
    if (attr(Vs, "lonely") > 0L && design$lonely_psu == "fail") dd_svy_lonely_stop(sg, s, attr(Vs, "lonely"))
    attr(Vs, "lonely") <- NULL
    V <- V + Vs
  }
  V
}

# survey's error for a lonely PSU under "fail", naming the first such stratum
# in sorted order (as survey does)
dd_svy_lonely_stop <- function(sg, s, lonely) {
  lab <- if (s == 1L) sort(sg$stratum_label[sg$npsu == 1L])[1] else lonely
  dd_stop("Stratum (%s) has only one PSU at stage %d; set `lonely_psu` in survey_design() (\"remove\", \"certainty\", \"adjust\" or \"average\").",
          format(lab), s)
}

# Taylor-series variance of totals whose per-observation contributions are
# the columns of x (n x k), as survey's svyrecvar.
dd_svy_vcov <- function(design, x) {
  x <- as.matrix(x)
  x <- dd_double(x)
  dd_svy_stages(design, function(sg, s, mult, group, ng, lon)
    .Call(C_svy_onestage, x, sg$strata, sg$clus, sg$nc, as.integer(sg$npsu), sg$popsize, mult, group, ng, lon, FALSE))
}

# Design-based totals and means of y (with their standard errors), the
# quantities of survey's svytotal() and svymean().
dd_svy_total <- function(design, y) {
  design <- dd_as_survey_design(design)
  y <- as.matrix(y)
  x <- y * design$weights
  est <- colSums(x)
  V <- if (design$replicate) dd_svy_rep_var(design, est, crossprod(design$repweights, y))
       else dd_svy_vcov(design, x)
  list(estimate = est, se = sqrt(diag(V)), vcov = V)
}

dd_svy_mean <- function(design, y) {
  design <- dd_as_survey_design(design)
  y <- as.matrix(y)
  W <- sum(design$weights)
  est <- colSums(y * design$weights) / W
  V <- if (design$replicate) {
    dd_svy_rep_var(design, est, crossprod(design$repweights, y) / colSums(design$repweights))
  } else dd_svy_vcov(design, sweep(y, 2, est) * design$weights / W)
  list(estimate = est, se = sqrt(diag(V)), vcov = V)
}

dd_svy_rep_types <- c("BRR", "Fay", "JK1", "JKn", "SDR", "bootstrap")

# replicate variance (survey::svrVar) of statistics with full-sample values
# theta (k) and replicate values thetas (R x k)
dd_svy_rep_var <- function(design, theta, thetas) {
  thetas <- as.matrix(thetas)
  centre <- if (design$mse) theta else colMeans(thetas[design$rscales > 0, , drop = FALSE])
  D <- sweep(thetas, 2, centre) * sqrt(design$rscales)
  crossprod(D) * design$scale
}

#' Design-based cell means from survey microdata
#'
#' Collapses microdata to cells (for example state x year) with design-based
#' means and standard errors per cell, as `survey::svyby(~y, ~by, design,
#' svymean)` computes them: domain estimation on the full design (each cell's
#' mean is linearised and its variance computed over all strata and PSUs,
#' with zero contributions outside the cell), not on a subset. The result is
#' ready for a second-stage panel estimator (for example [did_cs()] with
#' `weightsname = "weight_sum"`).
#'
#' @param data The microdata the design describes (same rows, same order).
#'   Or a database table (a dbplyr table), with `design` =
#'   `survey_design()` of that table: a one-stage design (weights, strata,
#'   PSUs, with replacement; `lonely_psu = "fail"`); the cells' sums and
#'   each PSU's sums of the linearised values are computed in the engine,
#'   and the result equals the in-memory one (tested to 1e-10).
#' @param ynames Outcome columns (numeric, no missing values).
#' @param by Cell-defining columns (character vector or one-sided formula).
#' @param design A [survey_design()] or a survey package design of `data`.
#' @param deff `TRUE`: also each cell mean's design effect `y_deff`, as
#'   survey's `svyby(..., svymean, deff = TRUE)` (the design-based variance
#'   over the variance under simple random sampling without replacement of
#'   the cell's units from a population of its weight sum; NA where the
#'   weights sum to less than the units). Default `FALSE`. See also
#'   [dd_deff()] for the estimates of a fit.
#' @return A data frame with one row per cell (sorted by `by`): the `by`
#'   columns; for each outcome `y`, its design-based mean `y` and standard
#'   error `y_se` (and `y_deff`); `n` (observations), `n_eff` (Kish's effective size
#'   `(sum w)^2 / sum w^2`) and `weight_sum` (the cell's estimated population
#'   size, the weight a second stage should use). Attribute `weights_column`
#'   names that column.
#' @examples
#' d <- read.csv(system.file("extdata", "sim_panel.csv", package = "diffdiff"))
#' des <- survey_design(d, weights = ~ w, strata = ~ state, ids = ~ id, nest = TRUE,
#'                      lonely_psu = "adjust")   # state 1 has a single unit
#' cells <- aggregate_survey(d, "y", by = c("state", "year"), design = des)
#' head(cells)
#' @export
aggregate_survey <- function(data, ynames, by, design, deff = FALSE) {
  deff <- dd_check_flag(deff, "deff")
  if (dd_is_db(data)) {
    if (deff) dd_stop("`deff` = TRUE is not available for a database table yet; collect() the table first.")
    return(dd_aggregate_survey_db(data, ynames, by, design))
  }
  dd_check_data(data)
  design <- dd_as_survey_design(design)
  if (design$n != nrow(data))
    dd_stop("`design` describes %d observations but `data` has %d rows; build the design on the same data.",
            design$n, nrow(data))
  if (!is.character(ynames) || !length(ynames)) dd_stop("`ynames` must be column names; got %s.", dd_show(ynames))
  dd_check_cols(data, ynames, "ynames")
  byv <- if (inherits(by, "formula")) all.vars(by) else by
  if (!is.character(byv) || !length(byv)) dd_stop("`by` must be column names or a formula; got %s.", dd_show(by))
  dd_check_cols(data, byv, "by")
  dd_check_roles(data, list(ynames = ynames, by = byv))
  for (v in byv) if (anyNA(data[[v]])) dd_stop("`by` column \"%s\" has missing values (first in row %d).", v,
                                               which(is.na(data[[v]]))[1])
  # cells in sorted order of the by columns: each column coded by its
  # sorted distinct values (factors: by their levels), the codes combined
  # (exact in doubles up to 2^53 cells), the combinations coded again
  codes <- lapply(byv, function(v) dd_sorted_codes(data[[v]]))
  ks <- vapply(codes, attr, 0, "nlev")
  ncomb <- prod(ks)
  if (ncomb > 2^52) dd_stop("`by` defines too many cells to count.")
  dd_reuse$cells_path <- if (ncomb <= 4 * nrow(data) + 1024) "table" else "sort"
  dom <- if (dd_reuse$cells_path == "table") {        # few possible cells: table them (in C)
    .Call(C_cell_codes, codes, as.integer(ks))
  } else {
    comb <- 0
    for (j in seq_along(codes)) comb <- comb * ks[j] + codes[[j]]
    match(comb, sort(unique(comb), method = "radix")) - 1L
  }
  dom <- as.integer(dom)
  nd <- max(dom) + 1L
  first <- dd_first_rows(structure(dom, nlev = nd))
  out <- data.frame(lapply(stats::setNames(byv, byv), function(v) data[[v]][first]), stringsAsFactors = FALSE)
  w <- as.double(design$weights)
  Wd <- dd_cell_sums(NULL, dom, nd, w = w)
  if (any(Wd == 0)) {
    k <- which(Wd == 0)
    dd_stop("`by` cell %s has zero total weight in `design` (%d such cell%s); its design-based mean is undefined. Drop its rows or give them positive weights.",
            paste(sprintf("%s = %s", byv, vapply(byv, function(v) format(out[[v]][k[1]]), "")), collapse = ", "),
            length(k), if (length(k) > 1L) "s" else "")
  }
  for (yv in ynames) {
    y <- data[[yv]]
    if (!is.numeric(y)) dd_stop("`ynames` column \"%s\" must be numeric; it is %s.", yv, class(y)[1])
    if (anyNA(y)) dd_stop("`ynames` column \"%s\" has missing values (first in row %d).", yv, which(is.na(y))[1])
    y <- as.double(y)
    m <- dd_cell_sums(y, dom, nd, w = w) / Wd
    V <- if (design$replicate) {
      Wr <- design$repweights
      th <- dd_cell_sums(Wr, dom, nd, w = y) / dd_cell_sums(Wr, dom, nd)      # nd x R
      centre <- if (design$mse) m else rowMeans(th[, design$rscales > 0, drop = FALSE])
      as.vector(((th - centre)^2) %*% design$rscales) * design$scale
    } else {
      dd_svy_domain_var(design, .Call(C_domain_lin, w, y, dom, m, Wd), dom, nd)
    }
    out[[yv]] <- m
    out[[paste0(yv, "_se")]] <- sqrt(V)
    if (deff) {
      # survey's svymean(deff = TRUE) in each cell: the variance under
      # simple random sampling of the cell's n units without replacement
      # from a population of its weight sum
      nd_pos <- dd_cell_sums(as.double(w > 0), dom, nd)
      s2 <- dd_cell_sums((y - m[dom + 1L])^2, dom, nd, w = w) / Wd * nd_pos / (nd_pos - 1)
      vsrs <- ifelse(Wd > nd_pos, s2 * (Wd - nd_pos) / (Wd * nd_pos), NA_real_)
      out[[paste0(yv, "_deff")]] <- V / vsrs
    }
  }
  out$n <- tabulate(dom + 1L, nd)
  out$n_eff <- Wd^2 / dd_cell_sums(w, dom, nd, w = w)
  out$weight_sum <- Wd
  attr(out, "weights_column") <- "weight_sum"
  out
}

# domain variances for a Taylor design (the stages as dd_svy_vcov)
dd_svy_domain_var <- function(design, x, dom, nd) {
  as.vector(dd_svy_stages(design, function(sg, s, mult, group, ng, lon)
    .Call(C_svy_domain, as.double(x), as.integer(dom), as.integer(nd), sg$strata, sg$clus, sg$nc,
          as.integer(sg$npsu), sg$popsize, mult, lon)))
}

# Design-based variance of regression coefficients, as survey::svyglm():
# Taylor designs take the variance of the coefficients' influence functions
# w_i e_i x_i' (X'WX)^{-1} (zero for rows outside the estimation sample, as
# svyglm's domain handling), replicate designs refit with each replicate's
# weights. rows: the design rows of the estimation sample (may repeat, for
# stacked data); mult: factors by which the regression weights exceed the
# design weights (replicate weights are scaled alike). Degrees of
# freedom: the design's (PSUs minus strata, or the rank of the replicate
# weights minus 1) + 1 - coefficients, as svyglm's df.residual (with fixed
# effects, the design's degrees of freedom).
dd_svy_reg_vcov <- function(reg, design, rows, y, X, fe, opts, mult = NULL) {
  keep <- reg$keep
  p <- sum(keep)
  if (!design$replicate) {
    dd_check_nclusters(length(unique(design$stages[[1]]$clus[rows])), NULL, "survey")
    S <- matrix(0, design$n, p)
    sc <- (reg$w * reg$resid) * (reg$Xd %*% reg$bread)
    if (anyDuplicated(rows)) {          # stacked data: a design row used more than once
      sc <- rowsum(sc, rows, reorder = TRUE)
      S[as.integer(rownames(sc)), ] <- sc
    } else S[rows, ] <- sc
    V <- dd_svy_vcov(design, S)
    degf <- dd_svy_degf(design)
    label <- paste0("Survey design (Taylor linearisation", dd_svy_label_extra(design), ")")
  } else {
    W <- design$repweights
    nrep <- ncol(W)
    # each replicate refit: without fixed effects, weighted normal equations
    # on the fit's design matrix; with them, a full refit on the rows with
    # positive weight (fixed effects recoded)
    if (!length(fe)) {
      # all replicates' X'W_rX and X'W_r y from two products with the weights
      # (the analysis weights W[rows, r] x mult read in place by C), then
      # each replicate's solve(A_r, b_r) in C (LAPACK's dgesv and solve()'s
      # condition check; a row of NA where solve() would stop)
      Xd <- reg$Xd
      ij <- which(upper.tri(diag(p), diag = TRUE), arr.ind = TRUE)
      M <- cbind(Xd[, ij[, 1], drop = FALSE] * Xd[, ij[, 2], drop = FALSE], Xd * y)
      ri <- if (length(rows) == nrow(W) && !is.unsorted(rows, strictly = TRUE)) NULL else as.integer(rows)
      GB <- dd_progress_batches(nrep, function(b) .Call(C_svy_rep_crossprod, W, M, as.integer(b), ri,
                                                        if (is.null(mult)) NULL else as.double(mult)),
                                "replicate weights", combine = dd_rbind_batches)
      thetas <- .Call(C_svy_rep_solve, GB[, seq_len(nrow(ij)), drop = FALSE], GB[, nrow(ij) + seq_len(p), drop = FALSE],
                      ij)
    } else {
      Wr <- W[rows, , drop = FALSE]
      if (!is.null(mult)) Wr <- Wr * mult   # analysis weights = mult x design weights
      # (each refit is a full regression: progress per refit; on the
      # caller's future plan if one is set)
      thetas <- matrix(t(vapply(dd_lapply(seq_len(nrep), dd_svy_refit_fun(Wr, y, X, fe, opts, keep), 1L,
                                          "replicate refits"), identity, numeric(p))), nrep, p)
    }
    bad <- rowSums(is.na(thetas)) > 0
    if (any(bad)) {
      if (all(bad)) dd_stop("every replicate refit has a coefficient that is not estimable; the replicate variance is undefined.")
      warning(sprintf("%d replicates gave NA coefficients and were discarded (as survey's svrVar).", sum(bad)),
              call. = FALSE)
      design$rscales <- design$rscales[!bad]
      thetas <- thetas[!bad, , drop = FALSE]
    }
    V <- dd_svy_rep_var(design, reg$coef[keep], thetas)
    degf <- design$degf
    label <- sprintf("Survey design (%d %s replicates%s)", nrep, design$type, dd_svy_label_extra(design))
  }
  dimnames(V) <- list(names(reg$coef)[keep], names(reg$coef)[keep])
  df <- if (length(fe)) degf else degf + 1 - p   # p counts the intercept, as length(coef(svyglm))
  list(V = V, df = max(df, 1), K = p, G = NULL, type = "survey", label = label)
}

# replicate r's refit with fixed effects: the coefficients `keep` of the
# regression on the rows with positive replicate weight (made here so that
# it carries only what a refit needs to a future worker)
dd_svy_refit_fun <- function(Wr, y, X, fe, opts, keep) {
  force(Wr); force(y); force(X); force(fe); force(opts); force(keep)
  function(r) {
    k <- which(Wr[, r] > 0)
    fr <- suppressMessages(dd_regress(y[k], X[k, , drop = FALSE], lapply(fe, dd_recode, k), Wr[k, r], opts))
    fr$coef[keep]
  }
}

# Survey inference for influence-function estimators (did_cs): the rows whose
# cross-products give the design-based variance of totals of the unit-level
# influence functions psi (and whose multipliers give a stratified bootstrap).
# unit_rows: for each unit (row of psi), a row of the design's data.
#  Taylor designs: PSU totals of psi over all first-stage PSUs of the design,
#  centred within strata and scaled by sqrt(f_h n_h / (n_h - 1)) (survey's
#  onestage, lonely-PSU rules included), so that colSums(rows^2) is survey's
#  variance of the totals.
#  Replicate designs: rows sqrt(scale rscales_r) (T_r - centre), T_r = sum_i
#  (w_ri / w_i) psi_i the replicate totals (svytotal of psi / w on the
#  replicate design).
dd_svy_if_rows <- function(design, unit_rows) {
  if (design$replicate) {
    A <- design$repweights[unit_rows, , drop = FALSE] / design$weights[unit_rows]
    return(structure(list(type = "replicate", A = A, scale = design$scale, rscales = design$rscales,
                          mse = design$mse, G = ncol(A)), class = "dd_svy_rows"))
  }
  if (design$fpc && length(design$stages) > 1L && any(!is.na(design$stages[[2]]$popsize)))
    dd_stop("`survey`: a multistage design with a finite population correction at later stages is not supported by the influence-function variance yet; give the first-stage design (ultimate clusters).")
  s1 <- design$stages[[1]]
  first <- dd_first_rows(structure(s1$clus, nlev = s1$nc))
  pstr <- s1$strata[first]                        # stratum of each PSU (0-based)
  upsu <- s1$clus[unit_rows]
  dd_check_nclusters(length(unique(upsu)), NULL, "survey")
  # PSUs numbered by stratum label, then by their first unit in the order of
  # the units (sorted by identifier by the caller), then by label: the
  # multiplier bootstrap draws one multiplier per PSU in this order, which
  # then does not depend on the order of the rows
  fpos <- rep(Inf, s1$nc)
  m1 <- !duplicated(upsu)
  fpos[upsu[m1] + 1L] <- which(m1)
  slab <- if (is.null(s1$stratum_label)) pstr else s1$stratum_label[pstr + 1L]
  plab <- if (is.null(s1$psu_label)) seq_len(s1$nc) else s1$psu_label
  o <- order(slab, fpos, plab)
  newc <- integer(s1$nc); newc[o] <- seq_len(s1$nc) - 1L
  pstr <- pstr[o]
  # the stratum rules (fpc, n_h / (n_h - 1), lonely PSUs) are those of the
  # C kernel, applied to the PSU totals in dd_svy_rows_apply()
  structure(list(type = "taylor", psu = as.integer(newc[upsu + 1L]), G = s1$nc, pstr = as.integer(pstr),
                 w = design$weights[unit_rows], stage = s1, lonely = match(design$lonely_psu, c("fail", "remove", "certainty", "adjust", "average")) - 1L),
            class = "dd_svy_rows")
}

dd_svy_rows_apply <- function(psi, s) {
  if (s$type == "replicate") {
    D <- as.matrix(psi)
    T <- crossprod(s$A, D)
    centre <- if (s$mse) colSums(D) else colMeans(T[s$rscales > 0, , drop = FALSE])
    return(dd_ifs_dense(sweep(T, 2, centre) * sqrt(s$scale * s$rscales)))
  }
  # PSU totals (every PSU of the design, zero where no unit is used), then
  # the kernel's centred and scaled rows, one per PSU in multiplier order
  Z <- .Call(C_ifs_rowsum, psi, s$psu, s$G)
  s1 <- s$stage
  R <- .Call(C_svy_onestage, Z, s$pstr, seq_len(s$G) - 1L, s$G, as.integer(s1$npsu), s1$popsize,
             rep(1, s1$ns), integer(s1$ns), 1L, s$lonely, TRUE)
  if (attr(R, "lonely") > 0L && s$lonely == 0L) dd_svy_lonely_stop(s1, 1L, attr(R, "lonely"))
  attr(R, "lonely") <- NULL
  dd_ifs_dense(R)
}

# Panel estimators whose influence functions are per unit (did_cs, did_dose,
# did_ddd, did_dcdh): each unit within one PSU of a linearisation design
# (`what`: "unit" or "group").
dd_svy_check_units <- function(design, p, idname, what = "unit") {
  if (is.null(design) || design$replicate) return(invisible(TRUE))
  bad <- .Call(C_first_varying, p$idc, attr(p$idc, "nlev"), design$stages[[1]]$clus[p$rows])
  if (bad > 0) dd_stop("`survey`: %ss (`idname` = \"%s\") must lie within one PSU; %s %s spans several.",
                       what, idname, what, dd_show(p$id[bad]))
  invisible(TRUE)
}

# the survey part of a variance label ("" without a design)
dd_svy_label <- function(design) {
  if (is.null(design)) return("")
  trim <- dd_svy_label_extra(design)
  if (design$replicate) sprintf(", survey design (%d %s replicates%s)", ncol(design$repweights), design$type, trim)
  else sprintf(", survey design (Taylor linearisation, PSUs within strata%s)", trim)
}

# what a design's weights went through: trim_weights(), subset()
dd_svy_label_extra <- function(design) {
  tr <- design$trimmed
  out <- if (is.null(tr)) "" else sprintf("; weights trimmed to [%s, %s]", format(tr$lower), format(tr$upper))
  if (!is.null(design$domain)) out <- sprintf("%s; subpopulation %s (%d rows)", out, design$domain$label, design$domain$n)
  out
}

# A Taylor design's degrees of freedom as survey's degf(): the first-stage
# PSUs minus the strata among the rows of positive weight (a subpopulation's
# rows, when subset() zeroed the others)
dd_svy_degf <- function(design) {
  if (design$replicate) return(design$degf)
  s1 <- design$stages[[1]]
  pos <- design$weights > 0
  length(unique(s1$clus[pos])) - (if (design$has_strata) length(unique(s1$strata[pos])) else 1L)
}

# The survey design of an influence-function estimator (did_cs, did_ddd,
# did_dcdh, did_dose, did_edid): converted and checked by dd_svy_arg(); a
# replicate-weight design gives the standard errors itself, so no
# multiplier bootstrap on top.
dd_if_design <- function(survey, data, weightsname, cluster, nboot) {
  design <- dd_svy_arg(survey, data, weightsname, cluster, NULL, 0L)
  if (!is.null(design) && design$replicate && nboot > 0L)
    dd_stop("`nboot` = %d: with a replicate-weight `survey` design the standard errors come from the replicates; use nboot = 0.",
            nboot)
  design
}
