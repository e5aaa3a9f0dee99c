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
dd_regress <- function(y, X, fe = NULL, w = NULL, opts = dd_fe_opts()) {
  n <- length(y)
  storage.mode(X) <- "double"
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
    yd <- dm$y
    Xd <- dm$X
    colnames(Xd) <- colnames(X)
    refnorm <- dm$norms
    iter <- max(dm$iter)
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
    if (!any(fit$keep))
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

# The pipeline shared by the regression front ends: singletons, fit, variance,
# coefficient table, optional wild bootstrap for the main terms.
dd_estimate <- function(y, X, fe, w, clusters, vcov_type, alpha, nboot, boot_weights,
                        main_terms, opts, drop_singletons = TRUE, survey = NULL) {
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
    }
  }
  # cluster codes; a cluster variable that is also a fixed effect reuses its codes
  clusters <- stats::setNames(lapply(names(clusters), function(nm)
    if (nm %in% names(fe)) fe[[nm]] else dd_codes(clusters[[nm]])), names(clusters))
  reg <- dd_regress(y, X, fe, w, opts)
  vc <- if (is.null(survey)) dd_vcov(reg, vcov_type, clusters)
        else dd_svy_reg_vcov(reg, survey$design, survey$rows[rows], y, X, fe, opts,
                             mult = if (is.null(survey$mult)) NULL else survey$mult[rows])
  est <- reg$coef[reg$keep]
  tab <- dd_coef_table(est, sqrt(diag(vc$V)), vc$df, alpha)
  boot <- NULL
  if (nboot > 0L) {
    if (length(clusters) > 1L)
      dd_stop("the wild cluster bootstrap (`nboot` = %d) supports one-way clustering; `cluster` = %s has two.",
              nboot, dd_show(names(clusters)))
    if (vcov_type == "iid")
      message("diffdiff: the wild bootstrap uses heteroskedasticity-robust t statistics, whatever `vcov`.")
    tab$boot.p.value <- tab$boot.conf.low <- tab$boot.conf.high <- NA_real_
    bterms <- intersect(main_terms, tab$term)
    # progress through progressr when installed: silent unless the user asks
    # (progressr::handlers() / with_progress())
    tick <- if (requireNamespace("progressr", quietly = TRUE))
      progressr::progressor(steps = length(bterms)) else function(...) NULL
    for (term in bterms) {
      tick(sprintf("wild bootstrap: %s", term))
      wb <- dd_wild(reg, term, if (length(clusters)) clusters[[1]] else NULL, nboot, boot_weights, alpha)
      i <- match(term, tab$term)
      tab$boot.p.value[i] <- wb$p.value
      tab$boot.conf.low[i] <- wb$conf.low
      tab$boot.conf.high[i] <- wb$conf.high
      boot <- wb[c("nboot", "boot_weights", "G")]
    }
  }
  wss <- function(v) if (is.null(w)) sum(crossprod(v)) else sum(crossprod(v, w * v))
  ssr <- wss(reg$resid)
  ybar <- if (is.null(w)) mean(y) else sum(w * y) / sum(w)
  r2 <- 1 - ssr / wss(y - ybar)
  r2w <- if (length(fe)) 1 - ssr / wss(reg$yd) else NULL
  list(reg = reg, vc = vc, tab = tab, boot = boot, rows = rows, r2 = r2, r2w = r2w,
       n_singletons = n_singletons)
}

# Fields of the result that every regression front end fills the same way.
dd_reg_info <- function(est, estimator, title, yname, alpha, main_terms, clusters, fe_names,
                        n_units = NULL, n_periods = NULL, notes = character()) {
  reg <- est$reg
  list(estimator = estimator, title = title, yname = yname, nobs = reg$n,
       n_units = n_units, n_periods = n_periods,
       n_clusters = if (est$vc$type == "cluster") est$vc$G else NULL,
       vcov_type = est$vc$type, vcov_label = est$vc$label, df = est$vc$df, alpha = alpha,
       main_terms = main_terms, fe_names = fe_names,
       fe_sizes = if (is.null(reg$fe)) NULL else reg$fe$nlev,
       dropped = reg$dropped, r2 = est$r2, r2_within = est$r2w, boot = est$boot,
       n_singletons = est$n_singletons, fe_iter = reg$iter, notes = notes)
}

# The set-up shared by the panel regression front ends (did_twfe, did_event,
# did_sa): the survey design (if any), the default clustering by unit, the
# variance type, the estimation rows (dd_prepare, design weights), and the
# unit and period codes with the one-row-per-unit-period check.
dd_panel_setup <- function(data, yname, idname, tname, role, xformla, weightsname, cluster, vcov, nboot,
                           survey, fe = NULL, na_ok = character(), numeric_t = FALSE) {
  dd_check_string(idname, "idname")
  cluster <- dd_cluster_names(cluster, data)
  design <- dd_svy_arg(survey, data, weightsname, cluster, vcov, nboot)
  if (is.null(design) && is.null(cluster) && (is.null(vcov) || identical(vcov, "cluster"))) cluster <- idname
  vtype <- dd_resolve_vcov(vcov, cluster, "cluster")
  if (vtype != "cluster") cluster <- NULL
  p <- dd_prepare(data, yname, c(c(idname = idname, tname = tname), role), xformla, weightsname, cluster, fe,
                  na_ok = na_ok)
  if (!is.null(design)) p$w <- design$weights[p$rows]
  tt <- if (numeric_t) dd_check_numeric_col(p$vals$tname, "tname", tname) else p$vals$tname
  dd_check_periods(tt, tname)
  idc <- dd_codes(p$vals$idname); tc <- dd_codes(tt)
  dd_check_unique_codes(idc, tc, p$vals$idname, tt)
  list(design = design, vtype = vtype, p = p, id = p$vals$idname, tt = tt, idc = idc, tc = tc,
       survey = if (is.null(design)) NULL else list(design = design, rows = p$rows))
}
