#' Complex survey designs
#'
#' Describes a stratified multistage sample the way `survey::svydesign()`
#' does, with its meanings and names, for design-based (Taylor-series
#' linearisation) standard errors. `ids` gives the sampling units of each
#' stage (`~ psu`, `~ psu + ssu`; `~ 1` or `NULL` for individual sampling),
#' `strata` the first-stage strata, `fpc` the finite population correction
#' per stage (population numbers of units, or sampling fractions when all
#' values are at most 1), `nest = TRUE` makes PSU labels unique within strata.
#' Later-stage strata are the clusters of the stage above, and later stages
#' add variance only when `fpc` is given for them, as in survey.
#' `lonely_psu` is survey's `options(survey.lonely.psu)`: `"fail"` (the
#' default, an error naming the stratum), `"remove"`, `"certainty"`,
#' `"adjust"` or `"average"`.
#'
#' @param data A data frame (never modified).
#' @param weights Sampling weights: a one-sided formula or a column name.
#'   Without weights, `fpc` implies them (as in survey); without both, all
#'   weights are 1 (with a warning).
#' @param strata,ids,fpc Formulas or column names (`ids` and `fpc` one per
#'   stage).
#' @param nest Relabel PSUs within strata.
#' @param lonely_psu Treatment of strata with a single PSU.
#' @param repweights Replicate weights for a replicate design: a formula,
#'   column names, a single regular expression matching their names (as
#'   survey), or a numeric matrix with one row per observation.
#' @param type Replicate type: `"BRR"`, `"Fay"`, `"JK1"`, `"JKn"`, `"SDR"`
#'   (successive difference) or `"bootstrap"` (case-insensitive).
#' @param rho Fay's rho (required for `"Fay"`).
#' @param scale,rscales Overall and per-replicate variance multipliers;
#'   `NULL` for survey's defaults for the type (`rscales` is required for
#'   combined `"JKn"` weights).
#' @param mse Centre the replicates at the full-sample estimate (`TRUE`) or at
#'   their mean (`FALSE`, survey's default).
#' @param combined_weights Replicate weights include the sampling weights
#'   (`TRUE`, survey's default), or multiply them.
#' @return An object of class `dd_survey_design`. A replicate design's
#'   variance of a statistic with replicate values theta_r is
#'   `scale * sum(rscales * (theta_r - centre)^2)`, as `survey::svrVar()`.
#' @examples
#' d <- read.csv(system.file("extdata", "sim_panel.csv", package = "diffdiff"))
#' des <- survey_design(d, weights = ~ w, strata = ~ state, ids = ~ id, nest = TRUE,
#'                      lonely_psu = "adjust")   # state 1 has a single unit
#' des
#' @export
survey_design <- function(data, weights = NULL, strata = NULL, ids = NULL, fpc = NULL, nest = FALSE,
                          lonely_psu = c("fail", "remove", "certainty", "adjust", "average"),
                          repweights = NULL, type = NULL, rho = NULL, scale = NULL, rscales = NULL,
                          mse = FALSE, combined_weights = TRUE) {
  dd_check_data(data)
  if (!is.null(repweights) || !is.null(type))
    return(dd_svy_replicate(data, weights, repweights, type, rho, scale, rscales, mse, combined_weights))
  nest <- dd_check_flag(nest, "nest")
  lonely_psu <- dd_match_arg(lonely_psu[1], c("fail", "remove", "certainty", "adjust", "average"), "lonely_psu")
  n <- nrow(data)
  if (n == 0L) dd_stop("`data` has no rows.")
  ids_l <- dd_svy_vars(ids, data, "ids")
  str_l <- dd_svy_vars(strata, data, "strata")
  fpc_l <- dd_svy_vars(fpc, data, "fpc")
  w_l <- dd_svy_vars(weights, data, "weights")
  if (length(str_l) > 1L) dd_stop("`strata` must name one variable (first-stage strata); got %d.", length(str_l))
  if (length(w_l) > 1L) dd_stop("`weights` must name one variable; got %d.", length(w_l))
  if (!length(ids_l)) ids_l <- list(seq_len(n))                  # individual sampling
  S <- length(ids_l)
  for (s in seq_len(S)) {
    bad <- which(is.na(ids_l[[s]]))
    if (length(bad)) dd_stop("`ids` (stage %d) has missing values (first in row %d).", s, bad[1])
  }
  has_strata <- length(str_l) == 1L
  st <- if (has_strata) str_l[[1]] else rep(1L, n)
  if (has_strata && anyNA(st)) dd_stop("`strata` has missing values (first in row %d).", which(is.na(st))[1])
  # stage codes: clusters nested in the clusters above (and in strata with nest)
  # codes of combinations, through integer codes (no string keys)
  key <- function(...) {
    parts <- lapply(Filter(Negate(is.null), list(...)), function(v) if (is.null(attr(v, "nlev"))) dd_codes(v) else v)
    code <- parts[[1]]
    for (p in parts[-1]) code <- dd_codes(as.double(code) * attr(p, "nlev") + p)
    code
  }
  clus <- vector("list", S)
  for (s in seq_len(S)) {
    clus[[s]] <- if (s == 1L) key(if (nest && has_strata) st else NULL, ids_l[[1]])
                 else key(clus[[s - 1L]], ids_l[[s]])
  }
  stc <- dd_codes(st)
  if (has_strata && !nest) {
    sc <- .Call(C_first_varying, clus[[1]], attr(clus[[1]], "nlev"), as.integer(stc))
    if (sc > 0)
      dd_stop("Clusters not nested in strata at top level; you may want nest=TRUE. (PSU %s appears in strata %s and %s.)",
              dd_show(ids_l[[1]][sc]), dd_show(st[match(clus[[1]][sc], clus[[1]])]), dd_show(st[sc]))
  }
  if (!has_strata && length(unique(ids_l[[1]])) == 1L) dd_stop("the design has only one primary sampling unit (`ids`).")
  # per stage: strata (stage 1: strata; later: the clusters above), PSU counts
  stages <- vector("list", S)
  for (s in seq_len(S)) {
    sh <- if (s == 1L) stc else clus[[s - 1L]]
    ns <- attr(sh, "nlev")
    first <- dd_first_rows(clus[[s]])
    npsu <- tabulate(sh[first] + 1L, ns)
    stages[[s]] <- list(strata = as.integer(sh), ns = ns, clus = as.integer(clus[[s]]),
                        nc = attr(clus[[s]], "nlev"), npsu = npsu, popsize = rep(NA_real_, ns),
                        stratum_label = if (s == 1L) st[dd_first_rows(sh)] else NULL,
                        psu_label = if (s == 1L) ids_l[[1]][first] else NULL)
  }
  if (length(fpc_l)) {
    if (length(fpc_l) > S) dd_stop("`fpc` has %d stage(s) but `ids` has %d.", length(fpc_l), S)
    allv <- unlist(fpc_l)
    if (anyNA(allv)) dd_stop("`fpc` has missing values.")
    if (any(allv <= 0)) dd_stop("`fpc` must be positive; it has %s.", format(min(allv)))
    frac <- all(allv <= 1)
    if (!frac && any(allv < 1)) dd_stop("`fpc` must be all population sizes (>= 1) or all sampling fractions (<= 1).")
    for (s in seq_along(fpc_l)) {
      sg <- stages[[s]]
      v <- fpc_l[[s]]
      pop <- if (frac) sg$npsu[sg$strata + 1L] / v else v
      vary <- .Call(C_first_varying, sg$strata, sg$ns, as.double(pop))
      if (vary > 0) dd_stop("`fpc` varies within a stratum at stage %d (row %d).", s, vary)
      ps <- pop[dd_first_rows(structure(sg$strata, nlev = sg$ns))]
      small <- which(ps < sg$npsu)
      if (length(small))
        dd_stop("`fpc` at stage %d is smaller than the number of sampled units in stratum %s: %s < %d.", s,
                if (s == 1L) dd_show(sg$stratum_label[small[1]]) else as.character(small[1]),
                format(ps[small[1]]), sg$npsu[small[1]])
      stages[[s]]$popsize <- as.double(ps)
    }
  }
  if (length(w_l)) {
    w <- w_l[[1]]
    if (!is.numeric(w)) dd_stop("`weights` must be numeric; it is %s.", class(w)[1])
    bad <- which(is.na(w) | w < 0)
    if (length(bad)) dd_stop("`weights` must be non-negative and not missing; row %d has %s.", bad[1], format(w[bad[1]]))
    w <- as.double(w)
    dd_check_design_weights(w)
  } else if (length(fpc_l)) {
    w <- rep(1, n)
    for (s in seq_along(fpc_l)) w <- w * (stages[[s]]$popsize / stages[[s]]$npsu)[stages[[s]]$strata + 1L]
  } else {
    warning("No weights or probabilities supplied, assuming equal probability (as survey).", call. = FALSE)
    w <- rep(1, n)
  }
  structure(list(n = n, weights = w, stages = stages, fpc = length(fpc_l) > 0L, nest = nest,
                 lonely_psu = lonely_psu, has_strata = has_strata, replicate = FALSE),
            class = "dd_survey_design")
}

# A design whose weights are all zero estimates nothing (every total is 0
# and every mean 0/0).
dd_check_design_weights <- function(w, arg = "weights") {
  if (!length(w) || all(w == 0))
    dd_stop("%s zero for every observation; a survey design needs positive weights (rows with zero weight are allowed, but not all of them).",
            if (arg == "weights") "`weights` is" else "the survey design's weights are")
  invisible(TRUE)
}

# variables of a formula or character vector, as a list of columns
dd_svy_vars <- function(x, data, arg) {
  if (is.null(x)) return(list())
  vars <- if (inherits(x, "formula")) all.vars(x) else x
  if (!is.character(vars)) dd_stop("`%s` must be a formula or column names; got %s.", arg, dd_show(x))
  if (inherits(x, "formula") && !length(vars)) return(list())     # ~ 1 or ~ 0
  miss <- setdiff(vars, names(data))
  if (length(miss)) dd_stop("`%s` uses %s, which is not a column of `data`.", arg, dd_show(miss))
  dd_check_roles(data, list(), stats::setNames(list(vars), arg))     # a duplicated column name
  lapply(vars, function(v) data[[v]])
}

#' @rdname survey_design
#' @param x A `dd_survey_design`.
#' @param ... Ignored.
#' @export
print.dd_survey_design <- function(x, ...) {
  if (x$replicate) {
    cat(sprintf("Replicate-weight survey design (diffdiff): %d observations, %d %s replicates\n", x$n,
                ncol(x$repweights), x$type))
    cat(sprintf("  scale %.6g; mse %s; weights: sum %.6g\n", x$scale, x$mse, sum(x$weights)))
    return(invisible(x))
  }
  s1 <- x$stages[[1]]
  cat(sprintf("Survey design (diffdiff): %d observations, %d stage(s)\n", x$n, length(x$stages)))
  cat(sprintf("  stage 1: %d strata, %d PSUs%s\n", if (x$has_strata) s1$ns else 1L, s1$nc,
              if (all(is.na(s1$popsize))) "" else ", with fpc"))
  cat(sprintf("  weights: sum %.6g; lonely PSUs: \"%s\"\n", sum(x$weights), x$lonely_psu))
  invisible(x)
}

# The stage loop of survey's svyrecvar: stage 1, then (with fpc) each later
# stage weighted by the sampling fractions of the stages above it. kernel(sg,
# s, mult, group, ng, lon) returns one stage's variance (with attribute
# "lonely"); the sum over stages is returned.
dd_svy_stages <- function(design, nobs, kernel) {
  lon <- match(design$lonely_psu, c("fail", "remove", "certainty", "adjust", "average")) - 1L
  V <- 0
  mult_obs <- rep(1, nobs)
  S <- if (design$fpc) length(design$stages) else 1L
  for (s in seq_len(S)) {
    sg <- design$stages[[s]]
    if (s > 1L && all(is.na(sg$popsize))) break
    # per stratum: multiplier from the stages above; group = parent cluster
    first <- dd_first_rows(structure(sg$strata, nlev = sg$ns))
    group <- if (s == 1L) rep(0L, sg$ns) else design$stages[[s - 1L]]$clus[first]
    ng <- if (s == 1L) 1L else design$stages[[s - 1L]]$nc
    Vs <- kernel(sg, s, mult_obs[first], as.integer(group), as.integer(ng), lon)
    if (attr(Vs, "lonely") > 0L && design$lonely_psu == "fail") dd_svy_lonely_stop(sg, s, attr(Vs, "lonely"))
    attr(Vs, "lonely") <- NULL
    V <- V + Vs
    mult_obs <- mult_obs * (sg$npsu / sg$popsize)[sg$strata + 1L]
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
  storage.mode(x) <- "double"
  dd_svy_stages(design, nrow(x), function(sg, s, mult, group, ng, lon)
    .Call(C_svy_onestage, x, sg$strata, sg$clus, sg$nc, as.integer(sg$npsu), sg$popsize, mult, group, ng, lon))
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

# Replicate-weight designs, with survey::svrepdesign()'s defaults per type.
dd_svy_replicate <- function(data, weights, repweights, type, rho, scale, rscales, mse, combined_weights) {
  n <- nrow(data)
  if (is.null(type) || !is.character(type) || length(type) != 1L || is.na(type))
    dd_stop("`type` must be one of %s (any case); got %s.", paste0('"', dd_svy_rep_types, '"', collapse = ", "),
            dd_show(type))
  k <- match(tolower(type), tolower(c(dd_svy_rep_types, "successive-difference")))
  if (is.na(k))
    dd_stop("`type` must be one of %s (any case); got %s.", paste0('"', dd_svy_rep_types, '"', collapse = ", "),
            dd_show(type))
  type <- c(dd_svy_rep_types, "SDR")[k]
  mse <- dd_check_flag(mse, "mse")
  combined_weights <- dd_check_flag(combined_weights, "combined_weights")
  if (is.null(repweights)) dd_stop("a replicate design needs `repweights`.")
  W <- if (is.matrix(repweights) || is.data.frame(repweights) && !is.null(dim(repweights))) {
    if (nrow(repweights) != n)
      dd_stop("`repweights` has %d rows but `data` has %d; give one row of replicate weights per observation.",
              nrow(repweights), n)
    as.matrix(repweights)
  } else {
    cols <- if (inherits(repweights, "formula")) all.vars(repweights) else repweights
    if (!is.character(cols)) dd_stop("`repweights` must be a formula, column names, a pattern or a matrix; got %s.",
                                     dd_show(repweights))
    if (length(cols) == 1L && !(cols %in% names(data))) cols <- grep(cols, names(data), value = TRUE)
    miss <- setdiff(cols, names(data))
    if (!length(cols) || length(miss))
      dd_stop("`repweights` = %s does not name columns of `data`.", dd_show(if (length(miss)) miss else repweights))
    as.matrix(data[, cols, drop = FALSE])
  }
  storage.mode(W) <- "double"
  if (anyNA(W)) dd_stop("`repweights` has missing values (first in row %d).", which(rowSums(is.na(W)) > 0)[1])
  R <- ncol(W)
  w_l <- dd_svy_vars(weights, data, "weights")
  w <- if (length(w_l)) as.double(w_l[[1]]) else {
    warning("No sampling weights provided: equal probability assumed (as survey).", call. = FALSE)
    rep(1, n)
  }
  bad <- which(is.na(w) | w < 0)
  if (length(bad)) dd_stop("`weights` must be non-negative and not missing; row %d has %s.", bad[1], format(w[bad[1]]))
  dd_check_design_weights(w)
  if (!is.null(rscales) && !(length(rscales) %in% c(1L, R)))
    dd_stop("`rscales` has length %d; it should be 1 or the number of replicates (%d).", length(rscales), R)
  if (type == "Fay" && is.null(rho)) dd_stop("`rho` is required for type = \"Fay\".")
  if (type == "BRR") scale <- 1 / R
  if (type == "Fay") scale <- 1 / (R * (1 - rho)^2)
  if (type == "bootstrap" && is.null(scale)) scale <- 1 / (R - 1)
  if (type == "JK1" && is.null(scale)) scale <- if (combined_weights) (R - 1) / R else 1 / max(W[, 1])
  if (type == "JKn" && is.null(rscales)) {
    if (combined_weights) dd_stop("`rscales` ((n_h - 1) / n_h per replicate) is required for combined JKn weights.")
    rscales <- 1 / apply(W, 2, max)
  }
  if (type == "SDR") { scale <- 4 / R; rscales <- rep(1, R) }
  if (is.null(scale)) scale <- 1
  if (is.null(rscales)) rscales <- rep(1, R)
  rscales <- rep_len(as.double(rscales), R)
  if (!combined_weights) W <- W * w
  # design degrees of freedom, computed once as survey does (rank of the replicate weights - 1)
  structure(list(n = n, weights = w, repweights = W, type = type, scale = as.double(scale), rscales = rscales,
                 mse = mse, replicate = TRUE, degf = qr(W, tol = 1e-5)$rank - 1L), class = "dd_survey_design")
}

# A survey package design as a dd_survey_design (not re-specified by hand):
# the processed clusters, strata, fpc and probabilities of svydesign(), or
# the replicate weights and scales of svrepdesign() / as.svrepdesign().
dd_as_survey_design <- function(x) {
  if (inherits(x, "dd_survey_design")) return(x)
  if (inherits(x, "svyrep.design")) {
    W <- as.matrix(stats::weights(x, "analysis"))   # combined replicate weights
    dd_check_design_weights(as.double(x$pweights), "survey")
    return(structure(list(n = nrow(W), weights = as.double(x$pweights), repweights = unname(W),
                          type = x$type, scale = as.double(x$scale), rscales = rep_len(as.double(x$rscales), ncol(W)),
                          mse = isTRUE(x$mse), replicate = TRUE,
                          degf = if (is.null(x$degf)) qr(W, tol = 1e-5)$rank - 1L else x$degf),
                     class = "dd_survey_design"))
  }
  if (inherits(x, "survey.design2")) {
    S <- ncol(x$cluster)
    n <- nrow(x$cluster)
    lon <- getOption("survey.lonely.psu")
    if (is.null(lon)) lon <- "fail"
    stages <- vector("list", S)
    for (s in seq_len(S)) {
      sh <- dd_codes(as.character(x$strata[[s]]))
      cl <- dd_codes(as.character(x$cluster[[s]]))
      first <- dd_first_rows(cl)
      ns <- attr(sh, "nlev")
      pop <- if (is.null(x$fpc$popsize)) rep(NA_real_, ns)
             else as.double(x$fpc$popsize[dd_first_rows(sh), s])
      stages[[s]] <- list(strata = as.integer(sh), ns = ns, clus = as.integer(cl), nc = attr(cl, "nlev"),
                          npsu = tabulate(sh[first] + 1L, ns), popsize = pop,
                          stratum_label = if (s == 1L) x$strata[[1]][dd_first_rows(sh)] else NULL,
                          psu_label = if (s == 1L) x$cluster[[1]][first] else NULL)
    }
    dd_check_design_weights(1 / as.double(x$prob), "survey")
    return(structure(list(n = n, weights = 1 / as.double(x$prob), stages = stages, fpc = !is.null(x$fpc$popsize),
                          nest = FALSE, lonely_psu = lon, has_strata = isTRUE(x$has.strata), replicate = FALSE),
                     class = "dd_survey_design"))
  }
  dd_stop("`survey` must be a survey_design(), survey::svydesign() or survey::svrepdesign() object; got %s.",
          dd_show(class(x)[1]))
}

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
#' @param ynames Outcome columns (numeric, no missing values).
#' @param by Cell-defining columns (character vector or one-sided formula).
#' @param design A [survey_design()] or a survey package design of `data`.
#' @return A data frame with one row per cell (sorted by `by`): the `by`
#'   columns; for each outcome `y`, its design-based mean `y` and standard
#'   error `y_se`; `n` (observations), `n_eff` (Kish's effective size
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
aggregate_survey <- function(data, ynames, by, design) {
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
  # cells in sorted order of the by columns
  keys <- lapply(byv, function(v) data[[v]])
  o <- do.call(order, unname(keys))
  k1 <- do.call(paste, c(lapply(keys, as.character), sep = "\r"))
  lev <- unique(k1[o])
  dom <- match(k1, lev) - 1L
  nd <- length(lev)
  first <- o[!duplicated(k1[o])]
  out <- data.frame(lapply(stats::setNames(byv, byv), function(v) data[[v]][first]), stringsAsFactors = FALSE)
  w <- design$weights
  Wd <- as.vector(rowsum(w, dom, reorder = TRUE))
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
    m <- as.vector(rowsum(w * y, dom, reorder = TRUE)) / Wd
    V <- if (design$replicate) {
      Wr <- design$repweights
      th <- rowsum(Wr * y, dom, reorder = TRUE) / rowsum(Wr, dom, reorder = TRUE)   # nd x R
      centre <- if (design$mse) m else rowMeans(th[, design$rscales > 0, drop = FALSE])
      as.vector(((th - centre)^2) %*% design$rscales) * design$scale
    } else {
      x <- w * (y - m[dom + 1L]) / Wd[dom + 1L]
      dd_svy_domain_var(design, x, dom, nd)
    }
    out[[yv]] <- m
    out[[paste0(yv, "_se")]] <- sqrt(V)
  }
  out$n <- tabulate(dom + 1L, nd)
  out$n_eff <- Wd^2 / as.vector(rowsum(w^2, dom, reorder = TRUE))
  out$weight_sum <- Wd
  attr(out, "weights_column") <- "weight_sum"
  out
}

# domain variances for a Taylor design (the stages as dd_svy_vcov)
dd_svy_domain_var <- function(design, x, dom, nd) {
  as.vector(dd_svy_stages(design, length(x), function(sg, s, mult, group, ng, lon)
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
    s1 <- design$stages[[1]]
    degf <- s1$nc - (if (design$has_strata) s1$ns else 1L)
    label <- "Survey design (Taylor linearisation)"
  } else {
    Wr <- design$repweights[rows, , drop = FALSE]
    if (!is.null(mult)) Wr <- Wr * mult   # analysis weights = mult x design weights
    # each replicate refit: without fixed effects, weighted normal equations
    # on the fit's design matrix; with them, a full refit on the rows with
    # positive weight (fixed effects recoded)
    refit <- if (!length(fe)) {
      # all replicates' X'W_rX and X'W_r y from two products with the weights
      Xd <- reg$Xd
      ij <- which(upper.tri(diag(p), diag = TRUE), arr.ind = TRUE)
      GB <- .Call(C_svy_rep_crossprod, Wr, cbind(Xd[, ij[, 1], drop = FALSE] * Xd[, ij[, 2], drop = FALSE], Xd * y))
      G <- GB[, seq_len(nrow(ij)), drop = FALSE]
      Bv <- GB[, nrow(ij) + seq_len(p), drop = FALSE]
      function(r) {
        A <- matrix(0, p, p)
        A[ij] <- G[r, ]
        A[ij[, 2:1, drop = FALSE]] <- G[r, ]
        tryCatch(drop(solve(A, Bv[r, ])), error = function(e) rep(NA_real_, p))
      }
    } else function(r) {
      k <- which(Wr[, r] > 0)
      fr <- suppressMessages(dd_regress(y[k], X[k, , drop = FALSE], lapply(fe, dd_recode, k), Wr[k, r], opts))
      fr$coef[keep]
    }
    thetas <- t(vapply(seq_len(ncol(Wr)), refit, numeric(p)))
    thetas <- matrix(thetas, ncol(Wr), p)
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
    label <- sprintf("Survey design (%d %s replicates)", ncol(Wr), design$type)
  }
  dimnames(V) <- list(names(reg$coef)[keep], names(reg$coef)[keep])
  df <- if (length(fe)) degf else degf + 1 - p   # p counts the intercept, as length(coef(svyglm))
  list(V = V, df = max(df, 1), K = p, G = NULL, type = "survey", label = label)
}

# The survey argument of the regression front ends: the design (converted),
# checked against the data, and the weights it implies for the kept rows.
dd_svy_arg <- function(survey, data, weightsname, cluster, vcov, nboot) {
  if (is.null(survey)) return(NULL)
  design <- dd_as_survey_design(survey)
  if (design$n != nrow(data))
    dd_stop("`survey` describes %d observations but `data` has %d rows; build the design on the same data.",
            design$n, nrow(data))
  if (!is.null(weightsname))
    dd_stop("`weightsname` = \"%s\" and `survey` both give weights; the design's weights are used, so drop `weightsname`.",
            weightsname)
  if (length(cluster)) dd_stop("`cluster` = %s and `survey` both define the variance; the design's PSUs are the clusters.",
                               dd_show(cluster))
  if (!is.null(vcov)) dd_stop("`vcov` = %s cannot be combined with `survey` (the variance is design-based).", dd_show(vcov))
  if (nboot > 0L) dd_stop("`nboot` = %d (wild bootstrap) cannot be combined with `survey`; use a replicate-weight design.", nboot)
  design
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
    dd_stop("`survey`: a multistage design with a finite population correction at later stages is not supported by did_cs yet; give the first-stage design (ultimate clusters).")
  s1 <- design$stages[[1]]
  first <- dd_first_rows(structure(s1$clus, nlev = s1$nc))
  pstr <- s1$strata[first]                        # stratum of each PSU (0-based)
  N <- s1$popsize
  f <- ifelse(is.na(N) | !is.finite(N), 1, (N - s1$npsu) / N)
  scale <- ifelse(s1$npsu > 1, f * s1$npsu / (s1$npsu - 1), f)
  center <- rep(TRUE, s1$ns)
  lonely <- s1$npsu == 1L & f >= 1e-7
  ok <- rep(TRUE, s1$ns)
  if (any(lonely)) {
    rule <- design$lonely_psu
    if (rule == "fail") dd_svy_lonely_stop(s1, 1L, which(lonely)[1])
    if (rule %in% c("remove", "certainty")) scale[lonely] <- 0
    if (rule == "adjust") center[lonely] <- FALSE
    if (rule == "average") { scale[lonely] <- 0; ok[lonely] <- FALSE }
  }
  scale[f < 1e-7] <- 0
  scale <- scale * sum(tabulate(pstr + 1L, s1$ns) > 0) / sum(ok & tabulate(pstr + 1L, s1$ns) > 0)
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
  structure(list(type = "taylor", psu = as.integer(newc[upsu + 1L]), G = s1$nc, pstr = as.integer(pstr),
                 ns = s1$ns, sq = sqrt(scale[pstr + 1L]), center = center), class = "dd_svy_rows")
}

dd_svy_rows_apply <- function(psi, s) {
  if (s$type == "replicate") {
    D <- as.matrix(psi)
    T <- crossprod(s$A, D)
    centre <- if (s$mse) colSums(D) else colMeans(T[s$rscales > 0, , drop = FALSE])
    return(dd_ifs_dense(sweep(T, 2, centre) * sqrt(s$scale * s$rscales)))
  }
  Z <- .Call(C_ifs_rowsum, psi, s$psu, s$G)
  cnt <- tabulate(s$pstr + 1L, s$ns)
  M <- rowsum(Z, s$pstr, reorder = TRUE)             # stratum sums (strata with PSUs, sorted)
  hs <- sort(unique(s$pstr))
  means <- matrix(0, s$ns, ncol(Z))
  means[hs + 1L, ] <- M / cnt[hs + 1L]
  means[!s$center, ] <- 0
  dd_ifs_dense((Z - means[s$pstr + 1L, , drop = FALSE]) * s$sq)
}
