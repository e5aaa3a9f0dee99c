# The one least-squares engine every regression estimator uses: absorb the
# fixed effects (C, demean.c), then weighted least squares by pivoted QR (C,
# linalg.c). Returns what the variance layer (inference.R) needs.

dd_fe_opts <- function(fe_tol = 1e-8, fe_maxit = 10000L, collin_tol = 1e-7) {
  list(fe_tol = dd_check_positive(fe_tol, "fe_tol"),
       fe_maxit = dd_check_count(fe_maxit, "fe_maxit", min = 1),
       collin_tol = dd_check_positive(collin_tol, "collin_tol"))
}

# y: numeric n; X: n x p matrix with colnames; fe: NULL or a named list of
# dd_codes() vectors (one per FE dimension); w: NULL or positive weights.
# cells: optional regressors constant within cells (see dd_regress_cells()),
# placed after the columns of X.
# none_ok: every regressor collinear is a fit with no coefficient (keep all
# FALSE) instead of an error (did_dcdh's controls: a control with no change
# left in a baseline's cells drops out, as DIDmultiplegtDYN).
dd_regress <- function(y, X, fe = NULL, w = NULL, opts = dd_fe_opts(), cells = NULL, none_ok = FALSE) {
  if (!is.null(cells)) {
    r <- dd_regress_cells(y, X, fe, w, opts, cells)
    if (!is.null(r)) return(r)
    # near-collinear columns: the cell indicators as dense columns, QR's rank rule
    X <- cbind(X, cells$D[cells$idx + 1L, , drop = FALSE])
  }
  n <- length(y)
  X <- dd_double(X)
  has_fe <- length(fe) > 0L
  if (!has_fe) {
    X <- cbind("(Intercept)" = 1, X)
  }
  if (ncol(X) == 0L) dd_stop("the model has no regressor to estimate.")
  femat <- NULL
  if (has_fe) {
    if (length(fe) > 32L)
      dd_stop("at most 32 fixed-effect dimensions are supported; got %d.", length(fe))
    femat <- dd_fe_matrix(fe)
    dm <- .Call(C_demean, as.double(y), X, femat$codes, femat$nlev, w,
                opts$fe_tol, as.integer(opts$fe_maxit))
    if (!all(dm$converged)) {
      bad <- c("the outcome", colnames(X))[!dm$converged]
      warning(sprintf(paste0("fixed-effect absorption did not converge for %s after %d ",
                             "iterations (fe_tol = %g); raise `fe_maxit` or loosen `fe_tol`."),
                      paste(bad, collapse = ", "), max(dm$iter), opts$fe_tol), call. = FALSE)
    }
    yd <- dm$y; Xd <- dm$X; refnorm <- dm$norms; iter <- max(dm$iter)
    # naming the columns in place: the list's reference dropped first
    # (rm(dm) does not drop it, and colnames<- copies a 24 MB 1M x 3 Xd)
    dm$X <- NULL; rm(dm)
    dimnames(Xd) <- list(NULL, colnames(X))
  } else {
    yd <- as.double(y); Xd <- X; iter <- 0L
    refnorm <- sqrt(if (is.null(w)) colSums(X * X) else colSums(w * X * X))
  }
  if (n <= ncol(Xd)) dd_stop("the model has %d observations for %d coefficients; too few to estimate.",
                            n, ncol(Xd))
  fit <- .Call(C_ols, Xd, yd, w, refnorm, opts$collin_tol)
  names(fit$coef) <- colnames(X)
  dropped <- colnames(X)[!fit$keep]
  if (length(dropped)) {
    if (!any(fit$keep) && !none_ok)
      dd_stop("every regressor (%s) is collinear with the fixed effects or the other regressors.",
              paste(dropped, collapse = ", "))
    message(sprintf("diffdiff: %s %s removed because of collinearity (coefficient NA).",
                    if (length(dropped) > 1) "variables" else "variable",
                    paste0("'", dropped, "'", collapse = ", ")))
  }
  kept <- colnames(X)[fit$keep]
  if (!all(fit$keep)) Xd <- Xd[, fit$keep, drop = FALSE]
  dimnames(fit$bread) <- list(kept, kept)
  nparams <- fit$rank + if (has_fe) sum(femat$nlev) - (length(femat$nlev) - 1L) else 0L
  list(coef = fit$coef, keep = fit$keep, bread = fit$bread, resid = fit$resid,
       Xd = Xd, yd = yd, w = w, n = n, rank = fit$rank, nparams = nparams,
       intercept = !has_fe, fe = femat, fe_codes = fe, dropped = dropped, iter = iter, opts = opts)
}

# Least squares from the normal equations A b = r, with the rank rule of
# C_ols (linalg.c): columns in their order, a column dropped when its
# residual norm after the kept columns before it (the Cholesky pivot) is
# at most tol times its reference norm.
dd_gram_ols <- function(A, r, refnorm, tol) {
  p <- ncol(A)
  keep <- logical(p)
  R <- matrix(0, p, p)
  # the Gram matrix resolves a column's residual norm only to about
  # sqrt(p eps) times its norm (C_ols's QR to eps): a column whose residual
  # is within a factor 100 of that resolution or of the threshold cannot be
  # decided here (`ambiguous`; dd_regress() then refits with the QR rule)
  res <- 100 * max(tol, sqrt(p * .Machine$double.eps))
  ambiguous <- FALSE
  for (j in seq_len(p)) {
    k <- which(keep[seq_len(j - 1L)])
    rj <- if (length(k)) R[k, j] <- backsolve(R[k, k, drop = FALSE], A[k, j], transpose = TRUE) else numeric()
    d <- A[j, j] - sum(rj^2)
    if (sqrt(max(d, 0)) <= res * refnorm[j]) ambiguous <- TRUE
    if (d > 0 && sqrt(d) > tol * refnorm[j]) { keep[j] <- TRUE; R[j, j] <- sqrt(d) }
  }
  if (ambiguous) return(NULL)
  if (!any(keep)) dd_stop("every regressor is collinear with the fixed effects or the other regressors.")
  Rk <- R[keep, keep, drop = FALSE]
  coef <- rep(NA_real_, p)
  coef[keep] <- backsolve(Rk, backsolve(Rk, r[keep], transpose = TRUE))
  list(coef = coef, keep = keep, bread = chol2inv(Rk), rank = sum(keep))
}

# The pipeline shared by the regression front ends: singletons, fit, variance,
# coefficient table, optional wild bootstrap for the main terms.
# boot_key: vectors that jointly identify the rows (e.g. unit and period), for
# a wild bootstrap without clusters (each row draws its own multiplier, in
# the order of the key, so that results do not depend on the row order); by
# default the outcome, regressors and weights (rows equal in all of them are
# interchangeable). treated, control: logical per row (treated observations,
# observations of never-treated or control units) or a dd_unit_rows() (one
# flag per unit), for the warning on few treated or untreated clusters.
dd_estimate <- function(y, X, fe, w, clusters, spec, main_terms, survey = NULL, cells = NULL,
                        boot_key = NULL, treated = NULL, control = NULL, wild_available = TRUE, conley = NULL) {
  # the settings, checked once by dd_spec() (spec.R)
  vcov_type <- spec$vcov_type; alpha <- spec$alpha; nboot <- spec$nboot; boot_weights <- spec$boot_weights
  opts <- spec$opts; drop_singletons <- spec$drop_singletons
  if (is.null(vcov_type)) stop("internal error: dd_estimate() without a variance type; please report", call. = FALSE)
  rows <- seq_along(y)
  n_singletons <- 0L
  fe <- lapply(fe, function(f) if (is.null(attr(f, "nlev"))) dd_codes(f) else f)
  if (length(fe) && drop_singletons) {
    s <- dd_singletons(fe)
    if (!is.null(s)) {
      n_singletons <- sum(s)
      if (all(s)) dd_stop("every observation is a fixed-effect singleton; nothing is left to estimate.")
      message(sprintf("diffdiff: %d fixed-effect singleton%s removed (drop_singletons = TRUE).",
                      n_singletons, if (n_singletons > 1) "s" else ""))
      rows <- which(!s)
      y <- y[rows]; X <- X[rows, , drop = FALSE]
      if (!is.null(w)) w <- w[rows]
      fe <- lapply(fe, dd_recode, rows)
      clusters <- lapply(clusters, `[`, rows)
      conley <- dd_conley_subset(conley, rows)
    }
  }
  raw_clusters <- clusters
  # cluster codes, computed once (the few-cluster warning and the variance);
  # a cluster variable that is also a fixed effect reuses its codes
  clusters <- stats::setNames(lapply(names(clusters), function(nm)
    if (nm %in% names(fe)) fe[[nm]] else dd_codes(clusters[[nm]])), names(clusters))
  if (!is.null(treated) && is.null(survey) && vcov_type == "cluster") {
    if (n_singletons > 0L) { treated <- dd_set_rows(treated, rows); control <- dd_set_rows(control, rows) }
    for (nm in names(clusters)) dd_warn_few_clusters(treated, control, clusters[[nm]], nm, boot = wild_available)
  }
  # cells: a function of the estimation rows giving cell-structured regressors
  # (kept structured for the regression and clustered/robust variances; the
  # survey and bootstrap code take dense columns)
  if (!is.null(cells)) {
    cells <- cells(rows)
    if (!is.null(survey) || nboot > 0L || vcov_type %in% c("CR2", "conley", "HC2", "HC3")) {
      X <- cbind(X, cells$D[cells$idx + 1L, , drop = FALSE])
      cells <- NULL
    }
  }
  reg <- dd_regress(y, X, fe, w, opts, cells = cells)
  if (vcov_type == "conley" && is.null(conley))
    stop("internal error: a Conley variance without coordinates; please report", call. = FALSE)
  vc <- if (is.null(survey)) dd_vcov(reg, vcov_type, clusters, conley)
        else dd_svy_reg_vcov(reg, survey$design, survey$rows[rows], y, X, fe, opts,
                             mult = if (is.null(survey$mult)) NULL else survey$mult[rows])
  est <- reg$coef[reg$keep]
  tab <- dd_coef_table(est, sqrt(diag(vc$V)), vc$df, alpha)
  boot <- NULL
  if (nboot > 0L && wild_available) {
    if (length(clusters) > 1L)
      dd_stop("the wild cluster bootstrap (`nboot` = %d) supports one-way clustering; `cluster` = %s has two.",
              nboot, dd_show(names(clusters)))
    if (vcov_type == "iid")
      message("diffdiff: the wild bootstrap uses heteroskedasticity-robust t statistics, whatever `vcov`.")
    tab$boot.p.value <- tab$boot.conf.low <- tab$boot.conf.high <- NA_real_
    bterms <- intersect(main_terms, tab$term)
    # multipliers drawn per cluster in sorted order of the cluster values (per
    # row in the order of boot_key without clusters): the same seed gives the
    # same numbers for any order of the rows
    bcl <- if (length(raw_clusters)) dd_sorted_codes(raw_clusters[[1]]) else NULL
    okey <- NULL
    if (is.null(bcl)) {
      key <- if (!is.null(boot_key)) lapply(boot_key, `[`, rows)
             else c(list(y), lapply(seq_len(ncol(X)), function(j) X[, j]), if (!is.null(w)) list(w))
      okey <- dd_row_ranks(key) - 1L
    }
    if (!is.null(bcl)) dd_warn_same_weight(attr(bcl, "nlev"), boot_weights, alpha)
    for (term in bterms) {
      wb <- dd_wild(reg, term, bcl, nboot, boot_weights, alpha, obs_codes = okey)
      i <- match(term, tab$term)
      tab$boot.p.value[i] <- wb$p.value
      tab$boot.conf.low[i] <- wb$conf.low
      tab$boot.conf.high[i] <- wb$conf.high
      boot <- wb[c("nboot", "boot_weights", "G")]
    }
  }
  # estimators without the wild bootstrap: the coefficients' influence
  # functions for the multiplier bootstrap (influence.R)
  ifs <- NULL
  if (nboot > 0L && (!wild_available || isTRUE(spec$cband))) {
    key <- if (is.null(boot_key)) NULL else dd_row_ranks(lapply(boot_key, `[`, rows)) - 1L
    svy <- if (is.null(survey)) NULL else list(design = survey$design, rows = survey$rows[rows], mult = survey$mult)
    ifs <- dd_reg_ifs(reg, vc, lapply(raw_clusters, identity), key, svy)
  }
  wss <- function(v, c = 0) .Call(C_wss, as.double(v), w, as.double(c))
  ssr <- wss(reg$resid)
  ybar <- if (is.null(w)) mean(y) else sum(w * y) / sum(w)
  r2 <- 1 - ssr / wss(y, ybar)
  r2w <- if (length(fe)) 1 - ssr / wss(reg$yd) else NULL
  list(reg = reg, vc = vc, tab = tab, boot = boot, ifs = ifs, rows = rows, r2 = r2, r2w = r2w, y = y,
       n_singletons = n_singletons, path = if (is.null(reg$cells)) "dense" else "cells")
}

# Fields of the result that every regression front end fills the same way.
dd_reg_info <- function(est, estimator, title, yname, alpha, main_terms, clusters, fe_names,
                        n_units = NULL, n_periods = NULL, notes = character()) {
  reg <- est$reg
  dd_info(estimator, title, yname, reg$n, est$vc$type, est$vc$label, est$vc$df, alpha, main_terms,
          n_units = n_units, n_periods = n_periods, n_clusters = if (est$vc$type %in% c("cluster", "CR2")) est$vc$G else NULL,
          fe_names = fe_names, dropped = reg$dropped, notes = notes,
          more = list(fe_sizes = if (is.null(reg$fe)) NULL else reg$fe$nlev, r2 = est$r2, r2_within = est$r2w,
                      wild_boot = est$boot, n_singletons = est$n_singletons, fe_iter = reg$iter,
                      cr2_path = est$vc$cr2$path,
                      # residuals and fitted values of the estimation sample (as
                      # fixest and lm keep them): fitted() = y - residuals()
                      residuals = as.double(reg$resid), fitted.values = as.double(est$y - reg$resid)))
}

# Puts the coefficients, the table rows and the covariance of a
# dd_estimate() result in the order of `terms` (names not in `terms` keep
# their order after them). The regression internals (Xd, bread, the
# influence functions) keep theirs: they are used by name or as a whole.
dd_reorder_terms <- function(est, terms) {
  cn <- names(est$reg$coef)
  o <- order(match(cn, terms, nomatch = length(terms) + seq_along(cn)))
  if (identical(o, seq_along(cn))) return(est)
  est$reg$coef <- est$reg$coef[o]
  est$reg$keep <- est$reg$keep[o]
  ot <- order(match(est$tab$term, names(est$reg$coef)))
  est$tab <- est$tab[ot, , drop = FALSE]
  rownames(est$tab) <- NULL
  kt <- names(est$reg$coef)[est$reg$keep]
  est$vc$V <- est$vc$V[kt, kt, drop = FALSE]
  if (!is.null(est$ifs)) est$ifs <- est$ifs[, match(kt, colnames(est$ifs)), drop = FALSE]
  est
}
