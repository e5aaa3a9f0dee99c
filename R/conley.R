#' Conley spatial standard errors
#'
#' `dd_conley()` describes a Conley (1999) spatial heteroskedasticity and
#' autocorrelation consistent variance for the regression estimators'
#' `vcov` argument (`did_2x2()`, `did_twfe()`, `did_event()`, `did_sa()`,
#' `did_stacked()`, `did_etwfe()` with `family = "gaussian"`, `did_lpdid()`): the scores
#' of observations within `cutoff` of each other are correlated. `vcov =
#' "conley"` with the estimator's `coords` and `cutoff` arguments is the
#' same with the defaults below.
#'
#' With scores \eqn{s_i = w_i e_i \tilde x_i} (\eqn{\tilde x} the regressors
#' after absorbing the fixed effects), \eqn{B = (\tilde X' W \tilde X)^{-1}}
#' and \eqn{K} the number of parameters including every fixed-effect
#' coefficient, \deqn{V = \frac{n}{n - K} B \Big(\sum_i \sum_j k(d_{ij})
#' s_i s_j'\Big) B,} tested with \eqn{n - K} degrees of freedom: fixest's
#' `vcov = conley(cutoff, distance = "spherical")` (fixest 0.14; its
#' `distance = "triangular"` default is `distance = "triangular"` here),
#' with its constants: distances in km on a sphere of radius 6,376 km,
#' pairs pre-filtered on a latitude and longitude box of half-width
#' \eqn{(c / 111)} degrees (with \eqn{\pi} as 3.14159), longitudes wrapping
#' at the date line; `"triangular"` is fixest's equirectangular distance;
#' `"euclidean"` takes planar coordinates in the units of `cutoff`.
#' `kernel = "uniform"` weights every pair within the cutoff by 1 (fixest),
#' `"bartlett"` by \eqn{1 - d/c}. Pairs are found through a grid (rows of
#' latitude, points sorted by longitude within a row), so 100,000 locations
#' take about a second.
#'
#' In a panel, fixest's form (`lag = NULL`, default) correlates all
#' observations within the cutoff whatever their periods (a unit with all
#' its own periods). `lag = L` gives the panel form of Conley (1999) and
#' Hsiang (2010) instead: spatial correlation within each period, and
#' serial correlation of a unit with its own periods up to \eqn{L} apart
#' with Bartlett weights \eqn{1 - |t - s| / (L + 1)}.
#'
#' The uniform kernel's variance need not be positive semi-definite; as
#' fixest does, its eigenvalues below 1e-16 are then set to 1e-16 (with a
#' warning when that changes it by more than 1e-8). The repair acts on the
#' variance of the estimator's own regression: did_etwfe's carries its
#' cohort and period effects as dummies where fixest absorbs them, so in
#' that case the two differ slightly. The Bartlett kernel is positive
#' semi-definite on the line, not always on the sphere.
#'
#' With `cluster` as well, pairs in the same cluster get weight 1 whatever
#' their distance (the maximum of the two kernels, as Colella et al.'s
#' `acreg`).
#'
#' @param cutoff The distance within which scores are correlated: kilometres
#'   for the spherical distances, the coordinates' units for
#'   `"euclidean"`; > 0.
#' @param coords The latitude and longitude columns (degrees), in that
#'   order (for `"euclidean"`: y and x).
#' @param kernel `"uniform"` (default) or `"bartlett"`.
#' @param distance `"spherical"` (default), `"triangular"` or
#'   `"euclidean"`.
#' @param lag `NULL` (fixest's form, default) or the serial lag \eqn{L \ge 0}
#'   of the panel form (in units of the period variable).
#' @return An object of class `dd_conley` for `vcov`.
#' @references Conley, T. G. (1999). GMM estimation with cross sectional
#'   dependence. *Journal of Econometrics* 92(1).
#'
#'   Hsiang, S. M. (2010). Temperatures and cyclones strongly associated
#'   with economic production in the Caribbean and Central America. *PNAS*
#'   107(35).
#' @examples
#' set.seed(1)
#' d <- dd_sim_staggered(n_units = 200, n_periods = 6)
#' d$lat <- 30 + (d$id %% 20); d$lon <- -100 + (d$id %/% 20)
#' did_twfe(d, "y", "id", "time", "D", vcov = dd_conley(300))
#' did_twfe(d, "y", "id", "time", "D", vcov = "conley", coords = c("lat", "lon"), cutoff = 300)
#' @export
dd_conley <- function(cutoff, coords = c("lat", "lon"), kernel = c("uniform", "bartlett"),
                      distance = c("spherical", "triangular", "euclidean"), lag = NULL) {
  if (missing(cutoff)) dd_stop("`cutoff` (the distance within which scores are correlated) must be given.")
  if (!is.numeric(cutoff) || length(cutoff) != 1L || is.na(cutoff) || !is.finite(cutoff) || cutoff <= 0)
    dd_stop("`cutoff` must be one positive number (kilometres, or the coordinates' units for \"euclidean\"); got %s.",
            dd_show(cutoff))
  if (!is.character(coords) || length(coords) != 2L || anyNA(coords) || coords[1] == coords[2])
    dd_stop("`coords` must name two different columns, latitude then longitude; got %s.", dd_show(coords))
  kernel <- dd_match_vocab(kernel[1], c("uniform", "bartlett"), "kernel")
  distance <- dd_match_vocab(distance[1], c("spherical", "triangular", "euclidean"), "distance")
  if (!is.null(lag)) lag <- dd_check_count(lag, "lag", min = 0)
  structure(list(cutoff = as.double(cutoff), coords = coords, kernel = kernel, distance = distance, lag = lag),
            class = "dd_conley")
}

#' @export
print.dd_conley <- function(x, ...) {
  cat(dd_conley_label(x), "\n", sep = "")
  invisible(x)
}

dd_conley_label <- function(cz)
  sprintf("Conley spatial HAC (cutoff %s%s, %s kernel, %s distance%s)", format(cz$cutoff),
          if (cz$distance == "euclidean") "" else " km", cz$kernel, cz$distance,
          if (is.null(cz$lag)) "" else sprintf("; within periods, serial lag %d", cz$lag))

# The variance request resolved: `vcov` = "conley" with the front end's
# `coords` and `cutoff`, or a dd_conley(); NULL for any other vcov. Checks
# the coordinate columns.
dd_conley_arg <- function(vcov, coords, cutoff, data) {
  if (inherits(vcov, "dd_conley")) {
    if (!is.null(coords) || !is.null(cutoff))
      dd_stop("`vcov` = dd_conley(...) carries its own coordinates and cutoff; drop `coords` and `cutoff`.")
    cz <- vcov
  } else if (identical(vcov, "conley")) {
    if (is.null(cutoff)) dd_stop("`vcov` = \"conley\" needs `cutoff` (kilometres).")
    cz <- dd_conley(cutoff, coords %||% c("lat", "lon"))
  } else {
    if (!is.null(coords) || !is.null(cutoff))
      dd_stop("`coords` and `cutoff` are for `vcov` = \"conley\"; got `vcov` = %s.", dd_show(vcov %||% "NULL"))
    return(NULL)
  }
  dd_check_cols(data, cz$coords, "coords")
  for (j in 1:2) dd_check_numeric_col(data[[cz$coords[j]]], "coords", cz$coords[j])
  cz
}

# The coordinates of the regression's rows (data rows `rows`), checked: no
# missing value; degrees within range on the sphere. unit, tt: the rows'
# unit codes and periods (the panel form).
dd_conley_rows <- function(cz, data, rows, unit = NULL, tt = NULL) {
  y <- as.double(data[[cz$coords[1]]][rows]); x <- as.double(data[[cz$coords[2]]][rows])
  bad <- which(!is.finite(y) | !is.finite(x))
  if (length(bad))
    dd_stop("`coords` (\"%s\", \"%s\") must be known for every row used; row %d has %s, %s.", cz$coords[1],
            cz$coords[2], rows[bad[1]], format(y[bad[1]]), format(x[bad[1]]))
  if (cz$distance != "euclidean") {
    if (any(abs(y) > 90)) dd_stop("`coords`: latitude \"%s\" must be in degrees within [-90, 90]; row %d has %s.",
                                  cz$coords[1], rows[which(abs(y) > 90)[1]], format(y[which(abs(y) > 90)[1]]))
    if (any(abs(x) > 180)) dd_stop("`coords`: longitude \"%s\" must be in degrees within [-180, 180]; row %d has %s.",
                                   cz$coords[2], rows[which(abs(x) > 180)[1]], format(x[which(abs(x) > 180)[1]]))
  }
  panel <- !is.null(cz$lag)
  if (panel && (is.null(unit) || is.null(tt)))
    dd_stop("`vcov` = dd_conley(lag = %d): the panel form needs units and periods, which this estimator does not have.",
            cz$lag)
  list(y = y, x = x, grp = if (panel) as.integer(dd_sorted_codes(tt)), unit = if (panel) as.integer(unit),
       tt = if (panel) as.double(tt), cz = cz)
}

# the rows `keep` of a dd_conley_rows() list (rows the regression drops)
dd_conley_subset <- function(cr, keep) {
  if (is.null(cr)) return(NULL)
  for (nm in c("y", "x", "grp", "unit", "tt")) if (!is.null(cr[[nm]])) cr[[nm]] <- cr[[nm]][keep]
  cr
}

# The Conley meat of scores S (rows: the rows of cr, dd_conley_rows()):
# sum_ij w_ij s_i s_j' (C, conley.c); with cluster codes cl, the pairs of
# different clusters only (the caller adds the cluster meat). Without
# clusters, rows at the same place (in the same period, for the panel form)
# are every pair of each other's: their scores are summed first, as fixest
# does (an exact shortcut), and the panel form's serial pairs come from the
# rows themselves.
dd_conley_meat <- function(S, cr, cl = NULL) {
  cz <- cr$cz
  opts <- c(cz$cutoff, match(cz$distance, c("spherical", "triangular", "euclidean")),
            match(cz$kernel, c("uniform", "bartlett")) - 1, if (is.null(cz$lag)) -1 else cz$lag)
  if (!is.null(cl))
    return(.Call(C_conley_meat, S, cr$y, cr$x, as.double(c(opts, 1)), cr$grp, as.integer(cl), cr$unit, cr$tt))
  u <- dd_combo_codes(if (is.null(cr$grp)) 0L else cr$grp, cr$y, cr$x)
  f <- !duplicated(u)
  M <- .Call(C_conley_meat, rowsum(S, u, reorder = FALSE), cr$y[f], cr$x[f], as.double(c(opts[1:3], -1, 1)),
             if (is.null(cr$grp)) NULL else cr$grp[f], NULL, NULL, NULL)
  if (!is.null(cz$lag))
    M <- M + .Call(C_conley_meat, S, cr$y, cr$x, as.double(c(opts, 0)), NULL, NULL, cr$unit, cr$tt)
  M
}

# Conley's variance of a regression: the meat over the pairs within the
# cutoff (C, conley.c), the cluster meat when clustered too, V = n / (n -
# K) B M B with K every parameter (fixest's K.fixef = "full"), n - K
# degrees of freedom; eigenvalues below 1e-16 set to 1e-16 as fixest does
dd_vcov_conley <- function(reg, cr, clusters) {
  if (!is.null(reg$cells)) stop("internal error: a Conley variance with cell-structured regressors; please report", call. = FALSE)
  cz <- cr$cz
  if (length(clusters) > 1L)
    dd_stop("`vcov` = Conley combines with one-way clustering only; `cluster` = %s has two.", dd_show(names(clusters)))
  n <- reg$n; B <- reg$bread
  S <- reg$Xd * (if (is.null(reg$w)) reg$resid else reg$w * reg$resid)
  cl <- if (length(clusters)) clusters[[1]] else NULL
  M <- dd_conley_meat(S, cr, cl)
  if (!is.null(cl)) M <- M + dd_meat(reg, cl, attr(cl, "nlev"))
  M <- (M + t(M)) / 2
  K <- reg$nparams
  V <- dd_conley_psd(B %*% M %*% B * (n / (n - K)))
  dimnames(V) <- dimnames(B)
  list(V = V, df = max(n - K, 1), K = K, G = if (is.null(cl)) NULL else attr(cl, "nlev"), type = "conley",
       label = paste0(dd_conley_label(cz), if (!is.null(cl)) sprintf(", and clustered (%s)", names(clusters)[1]) else ""))
}

# a panel estimator's rows for dd_estimate(): NULL unless the spec asks for
# Conley's variance (the panel form's periods: the period values when
# numeric, else their sorted positions)
dd_conley_panel_rows <- function(sp, data, p, keep = seq_along(p$rows)) {
  if (is.null(sp$conley)) return(NULL)
  tt <- if (is.numeric(p$tt)) p$tt else as.integer(dd_sorted_codes(p$tt))
  dd_conley_rows(sp$conley, data, p$rows[keep], p$idc[keep], tt[keep])
}

# Conley's variance reads the coordinates row by row: not on a database table
dd_conley_in_memory <- function(data, vcov, coords) {
  if (dd_is_db(data) && (identical(vcov, "conley") || inherits(vcov, "dd_conley") || !is.null(coords)))
    dd_stop("Conley's variance needs the data in memory; collect the table first (e.g. dplyr::collect()).")
  invisible(NULL)
}

# a Conley variance made positive semi-definite as fixest does: eigenvalues
# below 1e-16 set to 1e-16 (a warning when that moves it by more than 1e-8)
dd_conley_psd <- function(V) {
  V <- (V + t(V)) / 2
  ev <- eigen(V, symmetric = TRUE)
  if (any(ev$values <= 0)) {
    V2 <- ev$vectors %*% diag(pmax(ev$values, 1e-16), nrow(V)) %*% t(ev$vectors)
    if (max(abs(V2 - V)) > 1e-8)
      warning("the Conley variance matrix was not positive semi-definite; eigenvalues below 1e-16 were set to 1e-16.",
              call. = FALSE)
    dimnames(V2) <- dimnames(V)
    V <- V2
  }
  V
}
