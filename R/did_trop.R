#' Triply robust panel estimator (TROP)
#'
#' The TROP estimator of Athey, Imbens, Qu and Viviano (2025): each treated
#' cell's counterfactual comes from a weighted two-way fixed-effect model
#' with a low-rank (nuclear-norm regularised) factor component, fitted on
#' the untreated cells with exponential time-decay weights and unit weights
#' that favour units whose untreated outcomes track the treated unit's. The
#' three tuning parameters are chosen by leave-one-out cross-validation on
#' the untreated cells; the standard error is a unit bootstrap.
#'
#' The computations are those of the Python library diff-diff 3.3.2 (its
#' `TROP` class), to which the estimates agree at fixed tuning parameters
#' (tests: 1e-6, observed far closer):
#' \describe{
#'   \item{`method = "local"`}{(default; staggered adoption allowed) one fit
#'     per treated cell \eqn{(t, i)}: weights \eqn{\theta_s \omega_j} with
#'     \eqn{\theta_s = e^{-\lambda_{time}|s - t|}} (periods counted by
#'     position) and \eqn{\omega_j = e^{-\lambda_{unit} d_j}}, \eqn{d_j} the
#'     root mean squared difference between unit \eqn{j}'s and unit
#'     \eqn{i}'s outcomes over the other periods where both are untreated
#'     (\eqn{\omega_i = 1}; \eqn{\lambda_{unit} = 0}: all 1); the fit
#'     alternates a Gauss-Seidel sweep for the unit and period effects with
#'     ten proximal-gradient (FISTA) steps on the factor component \eqn{L},
#'     whose singular values are soft-thresholded at \eqn{\lambda_{nn}/(2
#'     \max W)}; \eqn{\tau_{it} = Y_{it} - \alpha_i - \beta_t - L_{it}}.
#'     `alpha`, `beta` and `L` of the result average the cells' fits.}
#'   \item{`method = "global"`}{(one adoption period) one weighted fit with
#'     an intercept: time weights centred at \eqn{T - P/2} (\eqn{P} treated
#'     periods), unit weights from the distance to the treated units' mean
#'     outcome over the pre-periods, an exact weighted least-squares step
#'     for the fixed effects and twenty FISTA steps per iteration.}
#' }
#' The ATT is the unweighted mean of \eqn{\tau_{it}} over the treated cells.
#' Cross-validation (LOOCV) scores a tuning triple by the sum of squared
#' prediction errors of every untreated cell left out in turn; the local
#' method searches one parameter at a time (initial values, then cycles
#' over unit, time and factor penalty until the score stops changing), the
#' global method the full grid; ties go to the first grid value.
#' `lambda_nn = Inf` means no factor component. Giving `lambda_time`,
#' `lambda_unit` or `lambda_nn` fixes that parameter (all three: no
#' cross-validation).
#'
#' Inference follows diff-diff: the bootstrap resamples never-treated and
#' treated units separately (their numbers fixed) and re-estimates with the
#' chosen tuning parameters; the standard error is the replicates' standard
#' deviation, and the t statistic, p-value and interval use a t distribution
#' with (treated cells - 1) degrees of freedom. The draws come from R's
#' generator (reproducible under `set.seed()`), not numpy's, so the standard
#' error agrees with diff-diff's within Monte Carlo error (exactly when the
#' same units are drawn).
#'
#' The panel must be balanced without missing values; the treatment must be
#' absorbing, with at least one never-treated unit and two periods before
#' the first adoption, unless `non_absorbing = TRUE`.
#'
#' @section Non-absorbing treatment:
#' With `non_absorbing = TRUE` (local method only) the treatment may switch
#' on and off, as in Athey, Imbens, Qu and Viviano (2025, Eq. 12 and
#' Algorithm 2) and diff-diff's `TROP(non_absorbing = True)`. The estimator
#' is the same: every treated cell gets its own weighted fit on the
#' untreated cells, which now include a unit's periods after it switched
#' off (no carryover is assumed: past treatment does not affect later
#' untreated outcomes), and the unit distances \eqn{d_j} use the periods in
#' which both units are untreated. What changes:
#' \itemize{
#'   \item the checks: the treatment need not be absorbing and no unit need
#'     be never treated; at least two periods must contain an untreated
#'     cell;
#'   \item an identification guard: a treated cell's
#'     \eqn{\alpha_i + \beta_t} is identified only when its unit and period
#'     are connected in the bipartite graph of units and periods whose edges
#'     are the untreated cells with positive weight in that cell's fit
#'     (a unit never untreated, a period in which every unit is treated, or
#'     a donor pool cut in two leave it unidentified). Such cells are not
#'     fitted: their effect is `NA` in `cell_effects`, they are left out of
#'     the ATT and of the degrees of freedom, with a warning that counts
#'     them; when no treated cell is identified the fit stops. The
#'     cross-validation fits do not apply the guard (as diff-diff's);
#'   \item the bootstrap resamples the never-treated units (possibly none)
#'     and the ever-treated units separately, applies the guard in every
#'     replicate (a replicate's ATT averages its identified cells; one with
#'     none is a failed replicate).
#' }
#' The guard runs in every local fit, absorbing or not (as diff-diff's): on
#' an absorbing panel with a never-treated unit it acts only when every
#' donor weight of a cell is 0 (an underflow of the exponential weights with
#' a large `lambda_unit` or `lambda_time` on a large outcome scale), where
#' the fit used to return the outcome minus the unit effect as if it were
#' an effect; so `non_absorbing = TRUE` gives the same numbers as the
#' default. The fit
#' records the setting (`non_absorbing`) and prints the assumption it rests
#' on: the paper proves triple robustness only under block assignment, so
#' the bootstrap standard error should be read with care (diff-diff warns
#' on every such fit; here a line under the printed table and a note in
#' `summary()`).
#'
#' @param data A data frame (long panel).
#' @param yname,idname,tname Outcome, unit and period columns.
#' @param dname The 0/1 treatment indicator.
#' @param method `"local"` or `"global"`.
#' @param lambda_time,lambda_unit,lambda_nn Fixed tuning parameters (NULL:
#'   chosen by cross-validation over the grids).
#' @param lambda_time_grid,lambda_unit_grid,lambda_nn_grid Grids searched
#'   (diff-diff's defaults).
#' @param nboot Bootstrap replications (0: no standard error).
#' @param alpha Significance level.
#' @section Covariates, weights and clusters:
#' `did_trop()` has no `xformla`, `weightsname` or `cluster` (passing one is
#' an error saying why). The triply robust panel estimator, as diff-diff's
#' TROP, adjusts for unobserved factors through its low-rank component and
#' its unit and time weights, not for covariates (residualise the outcome
#' first if needed); those weights are chosen by the estimator, so sampling
#' weights have no defined role; its bootstrap resamples units, and a
#' cluster bootstrap is not implemented.
#' @param max_iter,tol Outer iterations and convergence tolerance of each
#'   fit (maximum absolute change).
#' @param cores Processes for the fits (forked; not on Windows): the
#'   treated cells' fits, the cross-validation fits and the bootstrap
#'   replicates are split among them. Results do not depend on `cores`.
#'   With a `future::plan()` other than sequential set, the plan's workers
#'   run them instead, with the same numbers bit for bit.
#' @param non_absorbing `FALSE` (default): the treatment must be absorbing
#'   (once treated, always treated). `TRUE`: it may switch on and off
#'   (`method = "local"` only); see "Non-absorbing treatment".
#' @param ... diff-diff's spellings: `n_bootstrap` for `nboot`.
#' @return A `did_trop` fit (class `dd_fit`) with the `ATT` row, the chosen
#'   tuning parameters (`lambda`), the cross-validation score (`loocv`),
#'   the per-cell effects (`cell_effects`), `alpha`, `beta`, `L` (unit and
#'   period effects and factor component, see above), the bootstrap
#'   replicates (`replicates`) and `non_absorbing`.
#' @references Athey, S., Imbens, G., Qu, Z. and Viviano, D. (2025). Triply
#'   robust panel estimators. arXiv:2508.21536.
#' @examples
#' set.seed(1)
#' d <- dd_sim_factor(n_units = 30, n_periods = 10, n_treated = 5, effect = 2)
#' fit <- did_trop(d, "y", "id", "time", "D", lambda_time = 0.5, lambda_unit = 0.5,
#'                 lambda_nn = 0.1, nboot = 20)
#' fit
#' # tuning parameters by cross-validation over small grids (here without
#' # a factor component, which is fast; each score refits every untreated
#' # cell)
#' did_trop(d, "y", "id", "time", "D", lambda_time_grid = c(0, 0.5), lambda_unit_grid = c(0, 1),
#'          lambda_nn_grid = Inf, nboot = 0)
#' # a treatment that switches on and off
#' r <- dd_sim_reversible(n_units = 30, n_periods = 8)
#' did_trop(r, "y", "id", "time", "D", lambda_time = 0.5, lambda_unit = 0, lambda_nn = Inf,
#'          nboot = 20, non_absorbing = TRUE)
#' @export
did_trop <- function(data, yname, idname, tname, dname, method = c("local", "global"), lambda_time = NULL,
                     lambda_unit = NULL, lambda_nn = NULL, lambda_time_grid = c(0, 0.1, 0.5, 1, 2, 5),
                     lambda_unit_grid = c(0, 0.1, 0.5, 1, 2, 5), lambda_nn_grid = c(0, 0.01, 0.1, 1, 10),
                     nboot = 200, alpha = 0.05, max_iter = 100, tol = 1e-6, cores = 1L, non_absorbing = FALSE,
                     ...) {
  call <- match.call()
  dd_required(c("data", "yname", "idname", "tname", "dname"))
  dots <- dd_unsupported_args(list(...), "did_trop", dd_trop_unsupported)
  if (length(dots)) {
    bad <- setdiff(names(dots) %||% "", "n_bootstrap")
    if (length(bad) || is.null(names(dots)))
      dd_stop("`did_trop()` has no argument %s; diff-diff's spelling accepted here: `n_bootstrap`.",
              paste0("`", setdiff(names(dots) %||% "(unnamed)", "n_bootstrap"), "`", collapse = ", "))
    nboot <- dots$n_bootstrap
  }
  dd_check_data(data)
  method <- dd_match_arg(method[1], c("local", "global"), "method")
  non_absorbing <- dd_check_flag(non_absorbing, "non_absorbing")
  if (non_absorbing && method == "global")
    dd_stop("`method` = \"global\" does not support `non_absorbing` = TRUE (its one fit needs one adoption period); use method = \"local\".")
  sp <- dd_spec(alpha = alpha, nboot = nboot)
  nboot <- sp$nboot; alpha <- sp$alpha
  if (nboot == 1L) dd_stop("`nboot` = 1: a bootstrap standard error needs at least 2 replications (0: none).")
  max_iter <- dd_check_count(max_iter, "max_iter", min = 1)
  cores <- dd_check_count(cores, "cores", min = 1)
  if (!is.numeric(tol) || length(tol) != 1L || !is.finite(tol) || tol <= 0)
    dd_stop("`tol` must be one positive number; got %s.", dd_show(tol))
  grids <- list(time = dd_trop_grid(lambda_time, lambda_time_grid, "lambda_time", inf_ok = FALSE),
                unit = dd_trop_grid(lambda_unit, lambda_unit_grid, "lambda_unit", inf_ok = FALSE),
                nn = dd_trop_grid(lambda_nn, lambda_nn_grid, "lambda_nn", inf_ok = TRUE))
  pan <- dd_panel(data, yname, idname, tname, c(dname = dname), complete = "TROP")
  m <- dd_trop_matrices(pan, dname, method, non_absorbing)
  ctrl <- c(max_iter, tol)
  # tuning parameters
  tuned <- all(lengths(grids) == 1L)
  lam <- if (tuned) c(grids$time, grids$unit, grids$nn) else
    dd_trop_search(m, method, grids, ctrl, cores)
  loocv <- if (tuned) NA_real_ else attr(lam, "score")
  lam <- as.numeric(lam)
  fit <- dd_trop_fit(m, method, lam, ctrl, cores)
  # global: unit effects relative to the first unit (its effect is in the
  # intercept), as diff-diff reports them
  if (method == "global") fit$alpha <- fit$alpha - fit$alpha[1]
  if (m$guard) dd_trop_guard_check(fit$tau, m, dname)
  att <- if (m$guard) mean(fit$tau[!is.na(fit$tau)]) else mean(fit$tau)
  if (!is.finite(att)) dd_stop("TROP gave a non-finite effect (the fixed-effect system is singular: a unit or period without untreated weight); try smaller `lambda_unit`.")
  # unit bootstrap with the chosen tuning parameters
  reps <- if (nboot > 0L) dd_trop_boot(m, method, lam, ctrl, dd_trop_draws(m, nboot), cores) else numeric()
  ok <- is.finite(reps)
  se <- if (sum(ok) >= 2L) stats::sd(reps[ok]) else NA_real_
  ncell <- if (m$guard) sum(!is.na(fit$tau)) else length(fit$tau)
  df <- max(1, ncell - 1)
  tab <- dd_coef_table(c(ATT = att), se, df, alpha)
  notes <- character()
  if (fit$nonconverged > 0L)
    notes <- c(notes, sprintf("%d of %d fits reached max_iter = %d before converging (tol = %g).",
                              fit$nonconverged, ncell, max_iter, tol))
  if (m$guard) notes <- c(notes, dd_trop_general_notes(fit$tau, non_absorbing))
  if (nboot > 0L && any(!ok))
    notes <- c(notes, sprintf("%d of %d bootstrap replicates failed and were left out.", sum(!ok), nboot))
  info <- dd_info("did_trop", sprintf("Triply robust panel estimator (did_trop, method = \"%s\")", method), yname,
                  length(m$Y), if (nboot > 0L) "bootstrap" else "none",
                  if (nboot > 0L) sprintf("unit bootstrap (%d replications, stratified by treatment)", nboot) else "none",
                  df, alpha, "ATT", n_units = ncol(m$Y), n_periods = nrow(m$Y), notes = notes)
  lam_out <- c(lambda_time = lam[1], lambda_unit = lam[2], lambda_nn = if (lam[3] >= 1e10) Inf else lam[3])
  cells <- data.frame(unit = m$units[m$cells[, 2] + 1L], time = m$periods[m$cells[, 1] + 1L], tau = fit$tau)
  names(cells)[1:2] <- c(idname, tname)
  extra <- list(method = method, lambda = lam_out, loocv = loocv, cell_effects = cells,
                unit_effects = stats::setNames(fit$alpha, m$units), period_effects = stats::setNames(fit$beta, m$periods),
                factor = structure(fit$L, dimnames = list(m$periods, m$units)), replicates = reps, nboot = nboot,
                tname = tname, settings = list(max_iter = max_iter, tol = tol, grids = grids, cores = cores),
                n_treated = m$n_treated, n_control = m$n_control, non_absorbing = non_absorbing)
  new_dd_fit("did_trop", tab, c(ATT = att), matrix(se^2, 1, 1, dimnames = list("ATT", "ATT")), info, call, extra)
}

# a fixed value or a grid (finite values >= 0; Inf only for lambda_nn)
dd_trop_grid <- function(fixed, grid, arg, inf_ok) {
  v <- if (!is.null(fixed)) fixed else grid
  a <- if (!is.null(fixed)) arg else paste0(arg, "_grid")
  if (!is.numeric(v) || !length(v) || anyNA(v) || any(v < 0) || (!inf_ok && any(is.infinite(v))) ||
      (!is.null(fixed) && length(v) != 1L))
    dd_stop("`%s` must be %s >= 0%s; got %s.", a, if (!is.null(fixed)) "one number" else "numbers",
            if (inf_ok) " (Inf: no factor component)" else " and finite", dd_show(v))
  v
}

# The wide panel: Y and D (periods x units, periods sorted, units sorted by
# identifier), the treated cells (row-major: period, then unit; 0-based),
# the untreated cells, the pools of never- and ever-treated units, and for
# the global method the number of treated periods.
dd_trop_matrices <- function(pan, dname, method, non_absorbing = FALSE) {
  d <- dd_check_numeric_col(pan$vals$dname, "dname", dname)
  if (any(!d %in% c(0, 1))) {
    b <- which(!d %in% c(0, 1))[1]
    dd_stop("`dname` = \"%s\" must be 0/1; row %d has %s.", dname, pan$rows[b], format(d[b]))
  }
  ul <- pan$id[dd_first_rows(pan$idc)]
  uo <- order(ul)
  umap <- match(seq_along(ul), uo) - 1L
  Y <- t(dd_panel_wide(pan, pan$y, umap = umap))
  D <- t(dd_panel_wide(pan, d, umap = umap))
  storage.mode(D) <- "integer"
  periods <- sort(pan$tt[dd_first_rows(pan$tc)])
  units <- ul[uo]
  if (!non_absorbing)
    dd_check_absorbing(dd_first_treated(d, pan$idc, pan$tt, pan$n_units), dname, pan$id, pan$tt, pan$idc,
                       "TROP needs an absorbing treatment (once treated, always treated), or `non_absorbing = TRUE`.")
  ever <- colSums(D) > 0
  if (!any(ever)) dd_stop("`dname` = \"%s\" is never 1: there are no treated cells.", dname, .code = "NO_TREATED")
  first <- min(which(rowSums(D) > 0))
  if (non_absorbing) {
    dd_trop_check_general(D, periods, dname)
  } else {
    if (all(ever))
      dd_stop("every unit is treated at some point: TROP needs at least one never-treated unit (`dname` = \"%s\" is 0 throughout for none).", dname, .code = "NO_NEVER_TREATED")
    if (first - 1L < 2L)
      dd_stop("the first treated period (%s) leaves %d period(s) before it; TROP needs at least 2 pre-treatment periods.",
              format(periods[first]), first - 1L)
  }
  adopt <- apply(D[, ever, drop = FALSE], 2, function(z) which(z == 1)[1])
  # treated periods (the global method's; the local method does not use it)
  P <- if (non_absorbing) 0L else nrow(D) - first + 1L
  if (method == "global" && length(unique(adopt)) > 1L)
    dd_stop("`method` = \"global\" needs one adoption period; units adopt in periods %s. Use method = \"local\" for staggered adoption.",
            paste(format(periods[sort(unique(adopt))]), collapse = ", "))
  w <- which(D == 1L, arr.ind = TRUE)
  cells <- w[order(w[, 1], w[, 2]), , drop = FALSE] - 1L
  c0 <- which(D == 0L, arr.ind = TRUE)
  controls <- c0[order(c0[, 1], c0[, 2]), , drop = FALSE] - 1L
  storage.mode(cells) <- "integer"; storage.mode(controls) <- "integer"
  list(Y = Y, D = D, cells = unname(cells), controls = unname(controls), P = P, periods = periods, units = units,
       pool_control = which(!ever), pool_treated = which(ever), n_treated = sum(ever), n_control = sum(!ever),
       guard = method == "local", non_absorbing = non_absorbing)
}

# one C call: tau for `cells` (loo: the untreated cells left out in turn;
# guard: the identification guard (every local fit), tau NA for a cell whose unit
# and period are not connected, not with loo)
dd_trop_call <- function(Y, D, method, lam, ctrl, cells, loo, P, guard = FALSE) {
  .Call(C_trop_fit, Y, D, if (method == "local") 0L else 1L, as.double(pmin(lam, 1e10)), as.double(ctrl),
        cells, as.integer(loo), as.integer(P), as.integer(guard && !loo))
}

# Fits for many cells in fixed chunks of 16 (the same chunks whatever
# `cores`, so results do not depend on it), on `cores` forked processes
# (each single-threaded) when there is more than one chunk. Returns tau for
# every cell and, unless loo, the local fits' effects summed in chunk order.
dd_trop_cells <- function(Y, D, method, lam, ctrl, cells, loo, P, cores = 1L, guard = FALSE) {
  K <- nrow(cells)
  chunks <- split(seq_len(K), (seq_len(K) - 1L) %/% 16L)
  one <- function(ix) dd_trop_call(Y, D, method, lam, ctrl, cells[ix, , drop = FALSE], loo, P, guard)
  res <- dd_lapply(chunks, one, cores)
  out <- list(tau = unlist(lapply(res, `[[`, "tau"), use.names = FALSE),
              nonconverged = sum(vapply(res, `[[`, integer(1), "nonconverged")),
              nsvd = sum(vapply(res, `[[`, integer(1), "nsvd")))
  if (!loo) for (f in c("alpha", "beta", "L")) out[[f]] <- Reduce(`+`, lapply(res, `[[`, f))
  out
}

# the fit on the data: local, one fit per treated cell (effects averaged
# over the fitted cells: with the guard, the identified ones); global, one fit
dd_trop_fit <- function(m, method, lam, ctrl, cores = 1L) {
  if (method == "global") return(dd_trop_call(m$Y, m$D, method, lam, ctrl, m$cells, FALSE, m$P))
  guard <- isTRUE(m$guard)
  r <- dd_trop_cells(m$Y, m$D, method, lam, ctrl, m$cells, FALSE, m$P, cores, guard)
  n <- if (guard) sum(!is.na(r$tau)) else nrow(m$cells)
  r$alpha <- r$alpha / n; r$beta <- r$beta / n; r$L <- r$L / n
  r
}

# cross-validation score: the sum of squared leave-one-out errors over the
# untreated cells (Inf when a fit fails)
dd_trop_score <- function(m, method, lam, ctrl, cores = 1L) {
  r <- dd_trop_cells(m$Y, m$D, method, lam, ctrl, m$controls, TRUE, m$P, cores)
  q <- sum(r$tau^2)
  if (is.finite(q)) q else Inf
}

# The tuning search (diff-diff 3.3.2): local, one parameter at a time
# (initial values, then up to 10 cycles unit -> time -> nn until the score
# changes by less than 1e-6); global, the full grid in nested order (time,
# unit, nn). Ties go to the earliest value. Returns c(time, unit, nn) with
# attribute "score".
# `score_fun` (tests): the score of a triple, instead of the fits; each
# distinct triple is scored once.
dd_trop_search <- function(m, method, grids, ctrl, cores = 1L,
                           score_fun = function(l) dd_trop_score(m, method, l, ctrl, cores)) {
  cache <- new.env(parent = emptyenv())
  score <- function(l) {
    k <- paste(format(l, digits = 17), collapse = "|")
    if (is.null(cache[[k]])) cache[[k]] <- score_fun(l)
    cache[[k]]
  }
  if (method == "global") {
    g <- expand.grid(nn = grids$nn, unit = grids$unit, time = grids$time)[, c("time", "unit", "nn")]
    lab <- "TROP cross-validation (grid)"
    s <- unlist(dd_progress_lapply(seq_len(nrow(g)), function(r) score(as.numeric(g[r, ])), lab))
    if (!any(is.finite(s))) return(dd_trop_default())
    b <- which(s == min(s))[1]
    return(structure(as.numeric(g[b, ]), score = s[b]))
  }
  search <- function(which, grid, fixed) {
    best <- grid[1]; bs <- Inf
    for (v in grid) {
      l <- fixed; l[which] <- v
      q <- score(l)
      if (q < bs) { bs <- q; best <- v }
    }
    list(v = best, score = bs)
  }
  lt <- search(1, grids$time, c(0, 0, Inf))$v
  ln <- search(3, grids$nn, c(0, 0, 0))$v
  lu <- search(2, grids$unit, c(0, 0, Inf))$v
  prev <- Inf
  for (cyc in 1:10) {
    lu <- search(2, grids$unit, c(lt, 0, ln))$v
    lt <- search(1, grids$time, c(0, lu, ln))$v
    r <- search(3, grids$nn, c(lt, lu, 0))
    ln <- r$v
    if (isTRUE(abs(r$score - prev) < 1e-6)) break
    prev <- r$score
  }
  q <- score(c(lt, lu, ln))
  if (!is.finite(q)) return(dd_trop_default())
  structure(c(lt, lu, ln), score = q)
}

dd_trop_default <- function() {
  warning("TROP cross-validation failed for every tuning value; using diff-diff's fallback (lambda_time = 1, lambda_unit = 1, lambda_nn = 0.1).",
          call. = FALSE)
  structure(c(1, 1, 0.1), score = NA_real_)
}

# bootstrap draws: never-treated units, then treated units, each resampled
# with replacement (positions in the pools)
dd_trop_draws <- function(m, nboot) {
  nc <- length(m$pool_control); nt <- length(m$pool_treated)
  lapply(seq_len(nboot), function(b) {
    cd <- sample.int(nc, nc, replace = TRUE)
    td <- sample.int(nt, nt, replace = TRUE)
    list(control = cd, treated = td)
  })
}

# ATT of each bootstrap replicate (NA when its fit fails): the drawn units'
# columns, the tuning parameters fixed (with the guard: the mean over the
# replicate's identified cells, NA when there are none)
dd_trop_boot <- function(m, method, lam, ctrl, draws, cores = 1L) {
  unlist(dd_lapply(seq_along(draws), function(b) {
    cols <- c(m$pool_control[draws[[b]]$control], m$pool_treated[draws[[b]]$treated])
    Db <- m$D[, cols, drop = FALSE]
    w <- which(Db == 1L, arr.ind = TRUE) - 1L
    storage.mode(w) <- "integer"
    guard <- isTRUE(m$guard)
    r <- tryCatch(dd_trop_call(m$Y[, cols, drop = FALSE], Db, method, lam, ctrl, unname(w), FALSE, m$P, guard),
                  error = function(e) NULL)
    if (is.null(r)) NA_real_ else if (guard) dd_trop_guard_mean(r$tau) else mean(r$tau)
  }, cores, "TROP bootstrap"))
}

# printed under the table: the tuning parameters and how they were chosen
dd_footer.did_trop <- function(x) {
  l <- x$lambda
  how <- if (is.na(x$loocv)) "fixed" else sprintf("leave-one-out cross-validation, score %s", format(x$loocv, digits = 6))
  cat(sprintf("Tuning: lambda_time = %s, lambda_unit = %s, lambda_nn = %s (%s)\n", format(l[[1]]), format(l[[2]]),
              format(l[[3]]), how))
  if (isTRUE(x$non_absorbing))
    cat("Treatment switches on and off (non_absorbing = TRUE): no carryover assumed; see summary() for notes.\n")
  invisible(x)
}

# why did_trop() takes no covariates, weights or clusters (its help page says
# the same)
dd_trop_unsupported <- c(
  xformla = "the triply robust panel estimator (as diff-diff's TROP) adjusts for unobserved factors through its low-rank component and unit and time weights, not for covariates; residualise the outcome on covariates first if needed.",
  cluster = "its bootstrap resamples units, as diff-diff's does; a cluster bootstrap is not implemented, so treatment assigned by clusters is not reflected in its standard error.",
  weightsname = "its unit and time weights are chosen by the estimator (by leave-one-out cross-validation of the tuning); sampling weights have no defined role in it.")
