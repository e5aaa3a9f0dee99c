# Cohort x period cells: the rules that decide which cohort-time cells an
# estimator has (did_cs's group-time cells and its cohort and period rules,
# which the later cell estimators share) and the regression layer's cells
# path (indicators that are constant within cohort x period cells, summed by
# cell instead of stored as dense columns: did_event, did_sa, did_bjs,
# did_gardner, did_stacked).

# Whether regressors constant within cohort x period cells may be handled as
# cells (dd_regress_cells()) in a regression with a unit fixed effect: without
# weights, or with weights constant within units (uc: the units' dd_codes()),
# so that the weighted unit means of a cell-constant column are equal across
# the units of a cell's group. The internal option diffdiff.cells = FALSE
# forces dense columns (the tests compare the two paths).
dd_cells_ok <- function(uc, w) {
  if (isFALSE(getOption("diffdiff.cells", TRUE))) return(FALSE)
  is.null(w) || .Call(C_first_varying, uc, attr(uc, "nlev"), as.double(w)) == 0
}

# Cells for dd_regress_cells(): regressors that depend only on a unit-level
# key (for example the cohort) and the period. A group collects the units
# with the same key and the same set of observed periods; a cell is a group
# x period. colidx: for each row, the column (1..length(cols)) of its
# indicator, NA for none. per_fe: whether the period is a fixed effect of
# the regression (else only the unit effect is absorbed).
dd_cells <- function(uc, tc, key, colidx, cols, per_fe = TRUE) {
  N <- attr(uc, "nlev"); T <- attr(tc, "nlev")
  first <- dd_first_rows(uc)
  kc <- dd_codes(key[first])                              # key of each unit
  kr <- kc[uc + 1L]
  nT <- tabulate(uc + 1L, N)
  # units sharing a key share their set of periods when each has as many
  # rows as the key has distinct periods (exact); otherwise compare the sets
  pairs <- dd_codes(as.double(kr) * T + tc)
  nd <- tabulate(kr[dd_first_rows(pairs)] + 1L, attr(kc, "nlev"))
  grp_u <- if (all(nT == nd[kc + 1L])) kc else {
    o <- order(uc, tc)
    dd_codes(paste(key[first], vapply(split(tc[o], uc[o]), paste, character(1), collapse = ",")))
  }
  idx <- dd_codes(as.double(grp_u[uc + 1L]) * T + tc)
  fr <- dd_first_rows(idx)
  D <- matrix(0, length(fr), length(cols), dimnames = list(NULL, cols))
  on <- !is.na(colidx[fr])
  D[cbind(which(on), colidx[fr][on])] <- 1
  list(idx = as.integer(idx), grp = grp_u[uc[fr] + 1L], per = tc[fr], D = D, per_fe = per_fe)
}

# column sums of w * x (x a vector or matrix, NULL: of w alone; w NULL: 1)
# within cells 0..nc-1 (all cells present or not), without temporaries
dd_cell_sums <- function(x, idx, nc, w = NULL) {
  if (!is.null(x)) x <- dd_double(x)
  s <- .Call(C_cell_sums, x, if (is.null(w)) NULL else as.double(w), as.integer(idx), as.integer(nc))
  if (is.matrix(x)) s else s[, 1]
}

# Least squares with regressors that are constant within cells (for example
# cohort x period indicators, as in Sun-Abraham), with unit and period fixed
# effects and weights constant within units. cells: list(idx = 0-based cell
# of each row, D = cells x K raw values, grp = 0-based group of each cell,
# per = 0-based period of each cell), where a group collects the units with
# the same cohort and the same observed periods. Absorbing the unit and
# period effects maps cell-constant columns to cell-constant columns, and
# the alternating projections on the cells x (group, period) problem, with
# the cells' total weights, are those on the full data; so the K columns are
# demeaned on the small problem (the same C_demean) and the normal equations
# are assembled from cell sums: O(n (1 + k)) work instead of O(n K^2).
# Returns what dd_regress() returns, with the structured columns in `cells`
# (demeaned values per cell) and the dense ones in Xd.
dd_regress_cells <- function(y, X, fe, w, opts, cells) {
  n <- length(y)
  if (is.null(X)) X <- matrix(0, n, 0)
  X <- dd_double(X)
  femat <- dd_fe_matrix(fe)
  dm <- .Call(C_demean, as.double(y), X, femat$codes, femat$nlev, w, opts$fe_tol, as.integer(opts$fe_maxit))
  nc <- nrow(cells$D)
  Wc <- .Call(C_cell_sums, NULL, w, cells$idx, nc)[, 1]
  cfe <- dd_fe_matrix(if (isFALSE(cells$per_fe)) list(dd_codes(cells$grp))
                      else list(dd_codes(cells$grp), dd_codes(cells$per)))
  dc <- .Call(C_demean, NULL, cells$D, cfe$codes, cfe$nlev, as.double(Wc), opts$fe_tol, as.integer(opts$fe_maxit))
  conv <- c(dm$converged, dc$converged)
  if (!all(conv)) {
    bad <- c("the outcome", colnames(X), colnames(cells$D))[!conv]
    warning(sprintf(paste0("fixed-effect absorption did not converge for %s after %d iterations (fe_tol = %g); ",
                           "raise `fe_maxit` or loosen `fe_tol`."), paste(bad, collapse = ", "),
                    max(dm$iter, dc$iter), opts$fe_tol), call. = FALSE)
  }
  Xd <- dm$X; yd <- dm$y; dm$X <- NULL              # in place (see dd_regress)
  dimnames(Xd) <- list(NULL, colnames(X))
  Dt <- dc$X; colnames(Dt) <- colnames(cells$D)
  SX <- .Call(C_cell_sums, Xd, w, cells$idx, nc)
  wXd <- if (is.null(w) || !ncol(Xd)) Xd else w * Xd
  A <- rbind(cbind(crossprod(Xd, wXd), crossprod(SX, Dt)),
             cbind(crossprod(Dt, SX), crossprod(Dt, Wc * Dt)))
  b <- c(crossprod(wXd, yd), crossprod(Dt, .Call(C_cell_sums, yd, w, cells$idx, nc)[, 1]))
  p <- ncol(A)
  if (n <= p) dd_stop("the model has %d observations for %d coefficients; too few to estimate.", n, p)
  fit <- dd_gram_ols(A, b, c(dm$norms, dc$norms), opts$collin_tol)
  if (is.null(fit)) return(NULL)        # a rank decision the Gram matrix cannot make: dense QR
  nm <- c(colnames(X), colnames(cells$D))
  names(fit$coef) <- nm
  kx <- ncol(X)
  keepx <- fit$keep[seq_len(kx)]; keepd <- fit$keep[kx + seq_len(ncol(Dt))]
  bx <- fit$coef[seq_len(kx)][keepx]; bd <- fit$coef[kx + seq_len(ncol(Dt))][keepd]
  resid <- .Call(C_lin_rows, Xd[, keepx, drop = FALSE], matrix(-bx, ncol = 1),
                 -(Dt[, keepd, drop = FALSE] %*% bd), cells$idx, NULL, NULL, NULL, yd)
  dim(resid) <- NULL
  dropped <- nm[!fit$keep]
  if (length(dropped))
    message(sprintf("diffdiff: %s %s removed because of collinearity (coefficient NA).",
                    if (length(dropped) > 1) "variables" else "variable", paste0("'", dropped, "'", collapse = ", ")))
  kept <- nm[fit$keep]
  dimnames(fit$bread) <- list(kept, kept)
  nparams <- fit$rank + sum(femat$nlev) - (length(femat$nlev) - 1L)
  list(coef = fit$coef, keep = fit$keep, bread = fit$bread, resid = resid,
       Xd = Xd[, keepx, drop = FALSE], yd = yd, w = w, n = n, rank = fit$rank, nparams = nparams,
       intercept = FALSE, fe = femat, fe_codes = fe, dropped = dropped, iter = max(dm$iter, dc$iter), opts = opts,
       cells = list(idx = cells$idx, M = Dt[, keepd, drop = FALSE]))
}

# did's rules for cohorts and periods (pre_process_did2), on one first-treated
# period per entity (unit in a panel, row in repeated cross-sections; or
# one per cohort value, with `count` entities each): g
# (0 for the never treated) and `never` as dd_panel() codes them. Returns the entities and periods kept, the never-treated entities, the
# treated cohorts to estimate (glist) and notes.
dd_cs_cohorts <- function(g, never, tlist, anticipation, control_group, what, count = NULL) {
  notes <- character()
  first <- !never & g <= tlist[1] + anticipation
  if (any(first))
    warning(sprintf("Dropped %d %s that were already treated in the first period (as did does).",
                    as.integer(if (is.null(count)) sum(first) else sum(count[first])), what), call. = FALSE)
  keep <- !first
  tkeep <- rep(TRUE, length(tlist))
  if (!any(never & keep)) {
    if (control_group == "nevertreated")
      dd_stop("there are no never-treated units (`gname` 0, Inf or NA), so `control_group` = \"nevertreated\" has no comparison group; use control_group = \"notyettreated\".")
    latest <- max(g[keep])
    tkeep <- tlist < latest - anticipation
    notes <- c(notes, sprintf("no never-treated units: periods from %s on dropped; cohort %s serves only as a comparison group.",
                              format(latest - anticipation), format(latest)))
  }
  tl <- tlist[tkeep]
  glev <- dd_sorted_levels(g[keep & !never])
  glist <- glev[glev > tl[1] + anticipation & glev <= max(tl) + anticipation]
  if (!any(never & keep)) glist <- setdiff(glist, latest)
  if (!length(glist)) dd_stop("no treated cohort is left to estimate (check `gname` and `anticipation`).")
  list(never = never, keep = keep, tkeep = tkeep, glist = glist, notes = notes)
}

# did's small-group check: cohorts with fewer than 5 + (number of covariate
# terms) units; gz: the cohort of each unit (0 = never treated), cnt_div: rows
# per unit (1 in a panel, the number of periods in cross-sections); or one
# value per cohort with `count` units each
dd_cs_small <- function(gz, nterm, control_group, cnt_div = 1, count = NULL) {
  lv <- dd_sorted_levels(gz, counts = TRUE)
  gnm <- lv$values
  tab <- if (is.null(count)) lv$counts / cnt_div else vapply(gnm, function(v) sum(count[gz == v]), numeric(1))
  small <- gnm[tab < nterm + 5]
  if (!length(small)) return(invisible(NULL))
  if (0 %in% small && control_group == "nevertreated")
    dd_stop("the never-treated group is too small (%s units) for `control_group` = \"nevertreated\" with these covariates; use \"notyettreated\".",
            format(as.numeric(tab[gnm == 0])))
  small[small == 0] <- Inf
  warning(sprintf("small cohort(s) %s; some ATT(g,t) may be imprecise or not estimable.",
                  paste(small, collapse = ", ")), call. = FALSE)
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
