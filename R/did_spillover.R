#' Difference-in-differences with spatial spillovers (Butts 2021)
#'
#' When treatment spills over to nearby untreated units, a DiD that uses them
#' as controls is biased: their outcomes move with the treatment. Butts
#' (2021) estimates the direct effect on the treated and the spillover
#' effects on untreated units by their distance to the nearest treated unit,
#' in rings given by the user, with the counterfactual fitted on the units
#' far from every treated unit only.
#'
#' For each row, \eqn{d_{it}} is the distance from unit \eqn{i} to the
#' nearest other unit treated by period \eqn{t} (cohort \eqn{g \le t +}
#' `anticipation`): with staggered adoption a unit's exposure grows as
#' cohorts start. The rings are the intervals between the breakpoints
#' `rings` = \eqn{(0, r_1, \dots, r_K)}: \eqn{[r_{j-1}, r_j)}, the last one
#' closed at \eqn{r_K}. An untreated row is exposed when \eqn{d_{it} \le
#' r_K}; the rows that are neither treated nor exposed are the clean
#' controls.
#'
#' Estimation is Gardner's two-stage DiD (as [did_gardner()]) with the
#' exposure indicators: first stage, unit and period fixed effects (and the
#' covariates of `xformla`) on the clean rows; second stage, the residualised
#' outcome on the treatment indicator \eqn{D_{it}} and the ring indicators
#' \eqn{(1 - D_{it}) R_{j,it}}, without intercept. As these indicators are
#' disjoint, each coefficient is the (weighted) mean of the residualised
#' outcome over its rows:
#' \itemize{
#'   \item `direct`: the average effect on the treated rows;
#'   \item `spillover::[a,b)`: the average spillover effect on the untreated
#'     rows of that ring.
#' }
#' With one treatment date and no covariates these equal the coefficients of
#' the two-way fixed-effects regression of the outcome on \eqn{D_{it}} and
#' the ring indicators with unit and period effects fitted on every row only
#' in special cases; the test suite checks them against the two stages run
#' by hand with `lm()` and against did2s.
#'
#' With `event_study = TRUE` the direct effect is also reported by event
#' time \eqn{t - g} (rows `event::h`; with `pretrends`, the leads are the
#' averages of the clean rows' first-stage residuals, as did_gardner), and
#' each ring's spillover effect by time since first exposure \eqn{t -
#' E_i}, where \eqn{E_i} is the first period in which some treated unit is
#' within \eqn{r_K} of unit \eqn{i} (rows `spillover::[a,b)::event::h`).
#'
#' Distances: `distance = "spherical"` (the default) is the great-circle
#' distance in kilometres of the package's Conley variance (fixest's
#' haversine with a 6376 km radius; diff-diff's SpilloverDiD uses 6371.01
#' km, 0.08% less), `"triangular"` fixest's equirectangular approximation,
#' `"euclidean"` planar coordinates in their own units. The nearest treated
#' units are found through a grid in C, so that the work grows with the
#' number of neighbours within \eqn{r_K}, not with the square of the number
#' of units.
#'
#' Standard errors: the GMM-corrected variance of Gardner's two stages
#' (did2s), clustered by unit by default (`cluster` for another variable),
#' or Conley's spatial variance of the same scores (`vcov = "conley"` with
#' `cutoff`, using `coords`; or `vcov = dd_conley(...)`, whose `lag` adds a
#' unit's own periods), which Butts recommends because spillovers make
#' nearby units' errors correlated. The Conley variance here is the scores'
#' sum over pairs within the cutoff, without a small-sample factor (as the
#' clustered variance of did_gardner), combined with `cluster` when given.
#' t tests use the second stage's residual degrees of freedom.
#'
#' @inheritParams did_gardner
#' @param coords The two coordinate columns, latitude then longitude in
#'   degrees (planar x, y for `distance = "euclidean"`); constant within
#'   each unit.
#' @param rings The ring breakpoints: increasing numbers starting at 0, in
#'   kilometres (or the coordinates' units), at least two. The last one is
#'   the distance beyond which units are taken as unaffected.
#' @param distance `"spherical"` (default), `"triangular"` or `"euclidean"`.
#' @param event_study `TRUE` for the effects by event time as well.
#' @param horizon With `event_study`, the horizons to report (default all).
#' @param pretrends With `event_study`, the leads of the direct effect: `TRUE`
#'   all but the reference \eqn{-1 -} `anticipation`, `FALSE` (default) none.
#' @param anticipation Periods before `gname` in which units are treated
#'   already (and expose their neighbours); default 0.
#' @param vcov `NULL` (clustered, the default), `"conley"` (with `cutoff`) or
#'   a [dd_conley()] specification.
#' @param cutoff With `vcov = "conley"`: the Conley cutoff, in kilometres.
#' @return An object of class `c("did_spillover", "dd_fit")`: rows `direct`,
#'   one `spillover::[a,b)` per ring, and with `event_study` the rows by
#'   event time. Also `rings`, `ring_rows` (rows per ring), `n_clean` (rows
#'   of the first stage), `distance`, `exposure` (per kept row: the unit,
#'   the period, the distance to the nearest treated unit (`Inf` beyond the
#'   last ring), the ring, and the unit's first exposure period), and, as
#'   [did_gardner()], `n_treated`, `first_stage`, `path`.
#' @references Butts, K. (2021). Difference-in-differences estimation with
#'   spatial spillovers. arXiv:2105.03737. Gardner, J. (2022). Two-stage
#'   differences in differences. arXiv:2207.05943.
#' @examples
#' set.seed(1)
#' d <- dd_sim_spillover(n_units = 400, n_periods = 8)
#' sp <- did_spillover(d, "y", "id", "time", "first_treat", rings = c(0, 25, 50, 75))
#' sp
#' # naive two-stage DiD: spillovers bias the control group
#' did_gardner(d, "y", "id", "time", "first_treat")
#' # Conley standard errors, and the event study
#' did_spillover(d, "y", "id", "time", "first_treat", rings = c(0, 25, 50, 75),
#'               vcov = "conley", cutoff = 75)
#' es <- did_spillover(d, "y", "id", "time", "first_treat", rings = c(0, 40, 75),
#'                     event_study = TRUE, pretrends = TRUE)
#' plot(es)
#' @export
did_spillover <- function(data, yname, idname, tname, gname, xformla = NULL, coords = c("lat", "lon"), rings,
                          distance = c("spherical", "triangular", "euclidean"), event_study = FALSE, horizon = NULL,
                          pretrends = FALSE, anticipation = 0, weightsname = NULL, cluster = NULL, vcov = NULL,
                          cutoff = NULL, alpha = 0.05, nboot = 0, boot_weights = c("rademacher", "mammen", "webb"),
                          cband = FALSE, fe_tol = 1e-8, fe_maxit = 10000, survey = NULL) {
  call <- match.call()
  dd_required(c("data", "yname", "idname", "tname", "gname", "rings"),
              labels = c(rings = "the ring breakpoints, increasing from 0, e.g. c(0, 10, 20)"))
  sp <- dd_spec(alpha = alpha, nboot = nboot, boot_weights = boot_weights, cband = cband, fe_tol = fe_tol,
                fe_maxit = fe_maxit)
  dd_check_data(data)
  if (is.character(xformla))
    dd_stop("`xformla` must be a one-sided formula (e.g. ~ x1 + x2); got %s. The coordinate columns go in `coords`.",
            dd_show(xformla))
  if (!is.character(coords) || length(coords) != 2L || anyNA(coords) || coords[1] == coords[2])
    dd_stop("`coords` must name two different columns (latitude, then longitude); got %s.", dd_show(coords))
  dd_check_cols(data, coords, "coords")
  distance <- dd_match_vocab(distance[1], c("spherical", "triangular", "euclidean"), "distance")
  rings <- dd_spill_rings(rings)
  event_study <- dd_check_flag(event_study, "event_study")
  pretrends <- dd_check_flag(pretrends, "pretrends")
  anticipation <- dd_check_count(anticipation, "anticipation")
  if (!event_study && (!is.null(horizon) || pretrends))
    dd_stop("`horizon` and `pretrends` are for the event study; set event_study = TRUE.")
  sp <- dd_spec_variance(sp, data, idname, weightsname, cluster, vcov, survey, one_way = TRUE,
                         coords = if (identical(vcov, "conley")) coords, cutoff = cutoff, conley = TRUE)
  st <- dd_panel(data, yname, idname, tname, c(gname = gname), xformla, weightsname, sp$cluster, NULL, sp$design,
                 anticipation = anticipation, aux = c(coords = coords[1], coords = coords[2]))
  # treatment with anticipation: treated from g - anticipation on
  st$g <- ifelse(st$g > 0, st$g - anticipation, 0)
  st <- dd_panel_timing(st, gname)
  st$ev <- st$ev - anticipation                      # event time t - g
  ex <- dd_spill_exposure(st, coords, rings, distance)
  D <- st$D; ring <- ex$ring
  exposed <- !D & !is.na(ring)
  clean <- !D & !exposed
  if (!any(clean))
    dd_stop("no clean control: every untreated row is within %s of a treated unit (`rings` = %s). Far-away untreated units identify the counterfactual; use a smaller last ring.",
            format(max(rings)), dd_show(rings))
  nc <- dd_level_count(st$tc, clean)
  if (any(nc == 0L)) {
    tl <- st$tt[dd_first_rows(st$tc)][nc == 0L]
    msg <- sprintf("period(s) %s have no clean control row (untreated and farther than %s from every treated unit)",
                   dd_show(sort(tl)), format(max(rings)))
    if (all(nc[st$tc[st$D] + 1L] == 0L)) dd_stop("%s: no treated row can be imputed. Use a smaller last ring or drop these periods.", msg)
    message(sprintf("diffdiff: %s; their treated and exposed rows are removed.", msg))
  }
  fs <- dd_impute_fit(st$y, st$X, st$idc, st$tc, !clean, st$w, sp$opts)
  ok <- !is.na(fs$adj)
  if (!all(ok) && all(nc > 0L))
    message(sprintf(paste0("diffdiff: %d treated or exposed observation(s) removed: their unit has no ",
                           "clean (untreated and unexposed) observation to impute from%s."), sum(!ok),
                    if (fs$n_sets > 1L) sprintf(paste0(", or (the clean observations link units and periods in %d ",
                                                       "separate sets) their unit and period lie in different sets"),
                                                fs$n_sets) else ""))
  if (!any(ok & D)) dd_stop("no treated observation can be imputed: no period of a treated row has a clean control row, or no treated unit has a clean row.")
  tr <- which(!clean & ok)
  u <- fs$untreated
  # the estimand weights on the treated and exposed rows: direct, each ring,
  # and with the event study their horizons
  rl <- dd_spill_ring_labels(rings)
  grp <- ifelse(D[tr], "direct", paste0("spillover::", rl[ring[tr]]))
  cnt <- stats::setNames(tabulate(ring[tr][!D[tr]], length(rl)), rl)
  if (any(cnt == 0))
    message(sprintf("diffdiff: no untreated row in ring %s: no spillover effect is estimated there.",
                    paste(rl[cnt == 0], collapse = ", ")))
  W <- dd_spill_weights(grp, c("direct", paste0("spillover::", rl[cnt > 0])), if (is.null(st$w)) NULL else st$w[tr])
  event <- rep(NA_real_, ncol(W))
  hz <- NULL
  if (event_study) {
    hz <- dd_horizons(horizon, st$ev[tr][D[tr]])
    Wd <- dd_group_weights(ifelse(D[tr], st$ev[tr], NA), hz, if (is.null(st$w)) NULL else st$w[tr])
    hs <- (st$tt - ex$first_exposed)[tr]
    He <- lapply(which(cnt > 0), function(j) {
      rows <- !D[tr] & ring[tr] == j
      h <- sort(unique(hs[rows]))
      if (!is.null(horizon) && !isTRUE(horizon)) h <- intersect(h, horizon)
      M <- dd_group_weights(ifelse(rows, hs, NA), h, if (is.null(st$w)) NULL else st$w[tr])
      colnames(M) <- paste0("spillover::", rl[j], "::", colnames(M))
      M
    })
    W <- cbind(Wd, W, do.call(cbind, He))
    event <- c(hz, rep(NA_real_, ncol(W) - length(hz)))
  }
  beta <- colSums(W * fs$adj[tr])
  K <- length(beta)
  blocks <- list(list(rows = tr, M = W * (fs$adj[tr] - rep(beta, each = length(tr))), cols = seq_len(K)),
                 list(rows = u, M = dd_impute_v(fs, st$idc[tr], st$tc[tr], st$X[tr, , drop = FALSE], W,
                                                mult = fs$resid), cols = seq_len(K)))
  if (event_study && pretrends) {
    evu <- st$ev[u]
    leads <- setdiff(sort(unique(evu[!is.na(evu) & evu < -anticipation])), -1 - anticipation)
    if (length(leads)) {
      Wl <- dd_group_weights(evu, leads, if (is.null(st$w)) NULL else st$w[u])
      bl <- colSums(Wl * fs$resid)
      L <- seq_len(length(leads))
      blocks <- lapply(blocks, function(b) { b$cols <- b$cols + length(leads); b })
      blocks <- c(blocks, list(
        list(rows = u, M = Wl * (fs$resid - rep(bl, each = length(u))), cols = L),
        list(rows = u, M = dd_impute_v(fs, st$idc[u], st$tc[u], st$X[u, , drop = FALSE], Wl, mult = fs$resid),
             cols = L)))
      beta <- c(bl, beta); event <- c(leads, event)
    }
  }
  df <- sum(ok) - (length(beta) - 1L)
  im <- list(ok = ok, tr = which(D & ok), fs = fs)
  vl <- NULL
  if (is.null(sp$conley)) {
    V <- dd_lin_vcov_blocks(blocks, names(beta), length(st$y), st)
  } else {
    V <- dd_spill_conley(blocks, names(beta), st, sp, data, ok)
    vl <- attr(V, "label"); attr(V, "label") <- NULL
  }
  exposure <- data.frame(id = st$id, time = st$tt, distance = ex$d, ring = factor(rl[ring], levels = rl),
                         first_exposed = ex$first_exposed)
  names(exposure)[1:2] <- c(idname, tname)
  fit <- dd_impute_result("did_spillover", "Spillover DiD of Butts (did_spillover)", "GMM-corrected (did2s)", beta, V,
                          event, df, st, im, yname, idname, tname, sp, call,
                          list(event_study = if (event_study) dd_es_spec(reference = if (pretrends) -1 - anticipation else numeric(),
                                                                        base_period = "reference"),
                               rings = rings, ring_rows = cnt, n_clean = length(u),
                               distance = distance, exposure = exposure, anticipation = anticipation),
                          vlabel = vl)
}

# the ring breakpoints, checked: numbers, increasing from 0, at least two
dd_spill_rings <- function(rings) {
  if (!is.numeric(rings) || length(rings) < 2L || anyNA(rings) || any(!is.finite(rings)))
    dd_stop("`rings` must be at least two finite distances, increasing from 0 (e.g. c(0, 10, 20)); got %s.",
            dd_show(rings))
  if (rings[1] != 0)
    dd_stop("`rings` must start at 0 (the innermost ring holds the rows closest to a treated unit); got %s.",
            dd_show(rings))
  if (any(diff(rings) <= 0)) dd_stop("`rings` must be strictly increasing; got %s.", dd_show(rings))
  as.double(rings)
}

dd_spill_ring_labels <- function(rings) {
  K <- length(rings) - 1L
  f <- vapply(rings, function(r) format(r, digits = 15), "")
  sprintf("[%s,%s%s", f[-(K + 1L)], f[-1], ifelse(seq_len(K) == K, "]", ")"))
}

# Columns of disjoint groups (labels `grp`, columns `levels`), each summing
# to one, proportional to the weights w
dd_spill_weights <- function(grp, levels, w = NULL) {
  W <- vapply(levels, function(l) as.double(grp == l), numeric(length(grp)))
  W <- matrix(W, length(grp), dimnames = list(NULL, levels))
  if (!is.null(w)) W <- W * w
  sweep(W, 2, colSums(W), "/")
}

# Each row's distance to the nearest other unit treated by its period (Inf
# beyond the last ring), its ring (NA beyond), and the unit's first period
# of exposure (the first cohort start, with anticipation, within the last
# ring; NA if none). The unit coordinates are checked (known, constant
# within units, degrees in range on the sphere).
dd_spill_exposure <- function(st, coords, rings, distance) {
  lat <- st$aux[[coords[1]]]; lon <- st$aux[[coords[2]]]
  for (j in 1:2) {
    v <- st$aux[[coords[j]]]
    if (!is.numeric(v)) dd_stop("`coords` column \"%s\" must be numeric; got %s.", coords[j], class(v)[1])
    bad <- which(!is.finite(v))
    if (length(bad))
      dd_stop("`coords` (\"%s\") must be known for every row used; row %d has %s.", coords[j], st$rows[bad[1]],
              format(v[bad[1]]))
    dd_check_constant_within(v, st$id, "coords", coords[j], code = st$idc)
  }
  if (distance != "euclidean") {
    if (any(abs(lat) > 90)) dd_stop("`coords`: latitude \"%s\" must be in degrees within [-90, 90]; got %s.",
                                    coords[1], format(lat[abs(lat) > 90][1]))
    if (any(abs(lon) > 180)) dd_stop("`coords`: longitude \"%s\" must be in degrees within [-180, 180]; got %s.",
                                     coords[2], format(lon[abs(lon) > 180][1]))
  }
  fr <- dd_first_rows(st$idc)
  gu <- st$g[fr]                                    # effective start per unit (0: never)
  starts <- sort(unique(gu[gu > 0]))
  lab <- match(gu, starts) - 1L
  lab[is.na(lab)] <- -1L
  dmax <- max(rings)
  Dm <- .Call(C_spill_nearest, as.double(lat[fr]), as.double(lon[fr]), as.integer(lab),
              c(dmax, match(distance, c("spherical", "triangular", "euclidean")), length(starts)))
  # the nearest treated unit by each period: cumulative minimum over cohorts
  # in order of their start
  if (length(starts) > 1L) for (j in 2:length(starts)) Dm[, j] <- pmin(Dm[, j], Dm[, j - 1L])
  uidx <- st$idc + 1L
  j <- findInterval(st$tt, starts)
  d <- rep(Inf, length(st$tt))
  has <- j > 0L
  d[has] <- Dm[cbind(uidx[has], j[has])]
  ring <- findInterval(d, rings)
  ring[d == dmax] <- length(rings) - 1L
  ring[!is.finite(d)] <- NA_integer_
  # (after the cumulative minimum a unit's finite columns are its last ones)
  nf <- rowSums(is.finite(Dm))
  first <- ifelse(nf > 0L, starts[pmax(length(starts) - nf + 1L, 1L)], NA_real_)
  list(d = d, ring = ring, first_exposed = first[uidx])
}

# Conley's variance of the two stages' scores (rows: the data's rows in
# `st`); combined with `cluster` when given
dd_spill_conley <- function(blocks, names, st, sp, data, ok) {
  n <- length(st$y); K <- length(names)
  psi <- matrix(0, n, K)
  for (b in blocks) psi[b$rows, b$cols] <- psi[b$rows, b$cols] + b$M
  keep <- which(ok)
  cr <- dd_conley_panel_rows(sp, data, st, keep)
  cl <- if (!is.null(st$cl) && length(sp$cluster)) st$cl[keep] else NULL
  M <- dd_conley_meat(psi[keep, , drop = FALSE], cr, cl)
  if (!is.null(cl)) { S <- rowsum(psi[keep, , drop = FALSE], cl); M <- M + crossprod(S) }
  V <- dd_conley_psd(M)
  dimnames(V) <- list(names, names)
  structure(V, label = paste0(dd_conley_label(sp$conley),
                              if (!is.null(cl)) sprintf(", and clustered (%s)", sp$cluster[1]) else ""))
}
