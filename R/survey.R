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
#' @return An object of class `dd_survey_design`.
#' @examples
#' d <- read.csv(system.file("extdata", "sim_panel.csv", package = "diffdiff"))
#' des <- survey_design(d, weights = ~ w, strata = ~ state, ids = ~ id, nest = TRUE)
#' des
#' @export
survey_design <- function(data, weights = NULL, strata = NULL, ids = NULL, fpc = NULL, nest = FALSE,
                          lonely_psu = c("fail", "remove", "certainty", "adjust", "average")) {
  dd_check_data(data)
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
  key <- function(...) dd_codes(do.call(paste, c(lapply(Filter(Negate(is.null), list(...)), as.character),
                                                  sep = "\r")))
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
                        stratum_label = if (s == 1L) st[dd_first_rows(sh)] else NULL)
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
  } else if (length(fpc_l)) {
    w <- rep(1, n)
    for (s in seq_along(fpc_l)) w <- w * (stages[[s]]$popsize / stages[[s]]$npsu)[stages[[s]]$strata + 1L]
  } else {
    warning("No weights or probabilities supplied, assuming equal probability (as survey).", call. = FALSE)
    w <- rep(1, n)
  }
  structure(list(n = n, weights = w, stages = stages, fpc = length(fpc_l) > 0L, nest = nest,
                 lonely_psu = lonely_psu, has_strata = has_strata),
            class = "dd_survey_design")
}

# variables of a formula or character vector, as a list of columns
dd_svy_vars <- function(x, data, arg) {
  if (is.null(x)) return(list())
  vars <- if (inherits(x, "formula")) all.vars(x) else x
  if (!is.character(vars)) dd_stop("`%s` must be a formula or column names; got %s.", arg, dd_show(x))
  if (inherits(x, "formula") && !length(vars)) return(list())     # ~ 1 or ~ 0
  miss <- setdiff(vars, names(data))
  if (length(miss)) dd_stop("`%s` uses %s, which is not a column of `data`.", arg, dd_show(miss))
  lapply(vars, function(v) data[[v]])
}

#' @rdname survey_design
#' @param x A `dd_survey_design`.
#' @param ... Ignored.
#' @export
print.dd_survey_design <- function(x, ...) {
  s1 <- x$stages[[1]]
  cat(sprintf("Survey design (diffdiff): %d observations, %d stage(s)\n", x$n, length(x$stages)))
  cat(sprintf("  stage 1: %d strata, %d PSUs%s\n", if (x$has_strata) s1$ns else 1L, s1$nc,
              if (all(is.na(s1$popsize))) "" else ", with fpc"))
  cat(sprintf("  weights: sum %.6g; lonely PSUs: \"%s\"\n", sum(x$weights), x$lonely_psu))
  invisible(x)
}

# Taylor-series variance of totals whose per-observation contributions are
# the columns of x (n x k): survey's svyrecvar (stage 1, plus later stages
# weighted by the sampling fractions above them when fpc is given).
dd_svy_vcov <- function(design, x) {
  x <- as.matrix(x)
  storage.mode(x) <- "double"
  lon <- match(design$lonely_psu, c("fail", "remove", "certainty", "adjust", "average")) - 1L
  V <- 0
  mult_obs <- rep(1, nrow(x))
  S <- if (design$fpc) length(design$stages) else 1L
  for (s in seq_len(S)) {
    sg <- design$stages[[s]]
    if (s > 1L && all(is.na(sg$popsize))) break
    # per stratum: multiplier from the stages above; group = parent cluster
    first <- dd_first_rows(structure(sg$strata, nlev = sg$ns))
    mult <- mult_obs[first]
    group <- if (s == 1L) rep(0L, sg$ns) else design$stages[[s - 1L]]$clus[first]
    ng <- if (s == 1L) 1L else design$stages[[s - 1L]]$nc
    Vs <- .Call(C_svy_onestage, x, sg$strata, sg$clus, sg$nc, as.integer(sg$npsu), sg$popsize, mult,
                as.integer(group), as.integer(ng), lon)
    lonely <- attr(Vs, "lonely")
    if (lonely > 0L && design$lonely_psu == "fail") {
      # name the first lonely stratum in sorted order, as survey does
      lab <- if (s == 1L) sort(sg$stratum_label[sg$npsu == 1L])[1] else lonely
      dd_stop("Stratum (%s) has only one PSU at stage %d; set `lonely_psu` in survey_design() (\"remove\", \"certainty\", \"adjust\" or \"average\").",
              format(lab), s)
    }
    attr(Vs, "lonely") <- NULL
    V <- V + Vs
    # the next stage is weighted by this stage's sampling fraction n / N
    mult_obs <- mult_obs * (sg$npsu / sg$popsize)[sg$strata + 1L]
  }
  V
}

# Design-based totals and means of y (with their standard errors), the
# quantities of survey's svytotal() and svymean().
dd_svy_total <- function(design, y) {
  y <- as.matrix(y)
  x <- y * design$weights
  est <- colSums(x)
  V <- dd_svy_vcov(design, x)
  list(estimate = est, se = sqrt(diag(V)), vcov = V)
}

dd_svy_mean <- function(design, y) {
  y <- as.matrix(y)
  W <- sum(design$weights)
  est <- colSums(y * design$weights) / W
  x <- sweep(y, 2, est) * design$weights / W
  V <- dd_svy_vcov(design, x)
  list(estimate = est, se = sqrt(diag(V)), vcov = V)
}
