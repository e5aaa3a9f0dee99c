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
  # a database table: the design's columns, for aggregate_survey() in the engine (R/survey_db.R)
  if (dd_is_db(data)) return(dd_db_survey_design(data, weights, strata, ids, fpc, nest, lonely_psu, repweights, type))
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
    if (anyNA(ids_l[[s]]))
      dd_stop("`ids` (stage %d) has missing values (first in row %d).", s, which(is.na(ids_l[[s]]))[1])
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
    if (anyNA(w) || any(w < 0)) {
      bad <- which(is.na(w) | w < 0)
      dd_stop("`weights` must be non-negative and not missing; row %d has %s.", bad[1], format(w[bad[1]]))
    }
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
#' @param ... Not used: an error if given (no argument is ignored silently).
#' @export
print.dd_survey_design <- function(x, ...) {
  dd_check_dots(list(...), "print()")
  if (x$replicate) {
    cat(sprintf("Replicate-weight survey design (diffdiff): %d observations, %d %s replicates\n", x$n,
                ncol(x$repweights), x$type))
    cat(sprintf("  scale %.6g; mse %s; weights: sum %.6g\n", x$scale, x$mse, sum(x$weights)))
    if (!is.null(x$trimmed))
      cat(sprintf("  weights trimmed to [%s, %s]%s\n", format(x$trimmed$lower), format(x$trimmed$upper),
                  if (x$trimmed$strict) " (strict)" else ""))
    return(invisible(x))
  }
  s1 <- x$stages[[1]]
  cat(sprintf("Survey design (diffdiff): %d observations, %d stage(s)\n", x$n, length(x$stages)))
  cat(sprintf("  stage 1: %d strata, %d PSUs%s\n", if (x$has_strata) s1$ns else 1L, s1$nc,
              if (all(is.na(s1$popsize))) "" else ", with fpc"))
  cat(sprintf("  weights: sum %.6g; lonely PSUs: \"%s\"\n", sum(x$weights), x$lonely_psu))
  if (!is.null(x$domain)) cat(sprintf("  subpopulation: %s (%d rows; the others have weight 0)\n", x$domain$label, x$domain$n))
  if (!is.null(x$trimmed))
    cat(sprintf("  weights trimmed to [%s, %s]%s: %d moved to a bound\n", format(x$trimmed$lower),
                format(x$trimmed$upper), if (x$trimmed$strict) " (strict)" else "", x$trimmed$n))
  invisible(x)
}

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
  W <- dd_double(W)
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
                 mse = mse, replicate = TRUE, degf = dd_rep_rank(W) - 1L), class = "dd_survey_design")
}

# The rank of the replicate weights as survey computes it (LINPACK's
# qr(W, tol = 1e-5)), from the distinct rows: rows repeat (a unit's rows in
# a panel, a PSU's units), and the distinct rows scaled by the square root
# of their counts have the same cross-product, hence the same R factor and
# the same rank decisions, as W. Distinct rows are found from a fixed
# projection and then checked element by element; on any collision, or
# when few rows repeat, W itself is used. dd_reuse$rank_path records which.
dd_rep_rank <- function(W) {
  n <- nrow(W)
  if (n > 4L * ncol(W)) {
    key <- drop(W %*% (1 + sin(seq_len(ncol(W)) * 0.7548776662)))
    u <- unique(key)
    if (length(u) <= n %/% 2L) {
      g <- match(key, u)
      first <- match(seq_along(u), g)
      if (.Call(C_rows_equal, W, as.integer(first[g]))) {
        dd_reuse$rank_path <- "distinct"
        return(qr(W[first, , drop = FALSE] * sqrt(tabulate(g, length(u))), tol = 1e-5)$rank)
      }
    }
  }
  dd_reuse$rank_path <- "full"
  qr(W, tol = 1e-5)$rank
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
                          degf = if (is.null(x$degf)) dd_rep_rank(W) - 1L else x$degf),
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
      npsu <- tabulate(sh[first] + 1L, ns)
      # survey's subset() drops the rows outside the subpopulation but keeps
      # the PSU counts of the whole design (fpc$sampsize): PSUs with no row
      # left would be missing from the variance, so refuse
      ss <- x$fpc$sampsize
      if (!is.null(ss) && any(as.double(ss[dd_first_rows(sh), s]) > npsu))
        dd_stop("`survey` is a subset of a survey package design with rows dropped (its stratum %s has %d PSUs, %d with rows left): the variance needs the whole design. Build survey_design() on the whole data and use subset() on it (the rows outside get weight zero), with the whole data.",
                format(x$strata[[s]][dd_first_rows(sh)][which(as.double(ss[dd_first_rows(sh), s]) > npsu)[1]]),
                as.integer(ss[dd_first_rows(sh), s][which(as.double(ss[dd_first_rows(sh), s]) > npsu)[1]]),
                npsu[which(as.double(ss[dd_first_rows(sh), s]) > npsu)[1]])
      stages[[s]] <- list(strata = as.integer(sh), ns = ns, clus = as.integer(cl), nc = attr(cl, "nlev"),
                          npsu = npsu, popsize = pop,
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
