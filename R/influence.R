# The influence-function inference engine: estimates whose influence
# functions are stored block-sparse (dd_ifs; kernels in src/ifs.c) get
# analytic or clustered standard errors, their covariance, the multiplier
# bootstrap (standard errors from the interquartile range, did's sup-t band)
# and the wild bootstrap-t band. did_cs() and aggregate.did_cs() use it; the
# survey designs enter through dd_if_rows() (PSU totals, survey.R).

dd_zero_tol <- sqrt(.Machine$double.eps) * 10   # did's "treat as zero"

# Influence functions are stored block-sparse (src/ifs.c): rows (units) in
# blocks, each block a dense matrix over the columns it touches. rows: NULL
# (the blocks are contiguous row ranges, in row order) or the 0-based row
# of each stored row, block after block (a permutation of the n rows: the
# blocks group rows that are not adjacent, and the rows keep their order:
# as.matrix() gives the n x K matrix in row order and the bootstrap draws
# row r's multipliers as for a dense matrix).
dd_ifs <- function(n, K, start, cols, vals, rows = NULL)
  structure(list(n = as.integer(n), K = as.integer(K), start = as.integer(start), cols = cols, vals = vals,
                 rows = if (is.null(rows)) NULL else as.integer(rows)),
            class = "dd_ifs")

# a dense n x K matrix as one block
dd_ifs_dense <- function(psi) {
  psi <- as.matrix(psi)
  psi <- dd_double(psi)
  dd_ifs(nrow(psi), ncol(psi), c(0L, nrow(psi)), list(seq_len(ncol(psi)) - 1L), list(psi))
}

#' Influence functions as a dense matrix
#'
#' `as.matrix(fit$ifs)` expands the block-sparse influence functions that
#' [did_cs()] stores (units x estimates) into a dense matrix.
#' @param x A `dd_ifs` object (`fit$ifs` of a [did_cs()] fit).
#' @param ... Not used: an error if given (no argument is ignored silently).
#' @return A numeric matrix, one row per unit (observation in repeated
#'   cross-sections) and one column per estimate.
#' @keywords internal
#' @method as.matrix dd_ifs
#' @export
as.matrix.dd_ifs <- function(x, ...) {
  dd_check_dots(list(...), "as.matrix()")
  .Call(C_ifs_dense, x)
}

# Rows that receive multipliers: units, or cluster sums of the unit rows
# (dense, one block).
dd_if_rows <- function(psi, cluster) {
  if (is.null(cluster)) return(psi)
  if (inherits(cluster, "dd_svy_rows")) return(dd_svy_rows_apply(psi, cluster))   # survey designs
  # clusters in sorted order of their values, as rowsum(reorder = TRUE)
  cl <- dd_sorted_codes(cluster)
  # one cluster: every cluster sum is the total, zero up to rounding (the
  # front ends name the column; this guards every caller of the layer)
  if (attr(cl, "nlev") < 2L)
    dd_stop("`cluster` has a single cluster in the estimation sample; clustered standard errors need at least two.",
            .code = "ONE_CLUSTER")
  dd_ifs_dense(.Call(C_ifs_rowsum, psi, as.integer(cl), attr(cl, "nlev")))
}

# Analytic standard errors of estimates whose influence functions are the
# columns `cols` of psi (n units), or the columns of psi %*% comb (computed
# block by block, never formed): sqrt(sum psi^2) / n, or with cluster sums.
# `cross`: the unscaled (Psi comb)' (Psi comb) when the caller has formed it
# (dd_if_cross), whose diagonal is the same sums of squares.
dd_if_se <- function(psi, n, cluster = NULL, cols = seq_len(psi$K), comb = NULL, cross = NULL) {
  ss <- if (!is.null(cross)) diag(cross)
        else if (is.null(comb)) .Call(C_ifs_colss, dd_if_rows(psi, cluster))[cols]
        else .Call(C_ifs_comb_cross, dd_if_rows(psi, cluster), comb, TRUE)
  se <- sqrt(ss) / n
  se[!is.finite(se) | se <= dd_zero_tol] <- NA_real_
  se
}

# The standard errors of K cell estimates from their influence functions
# (the first K columns of psi): analytic, or with nboot > 0 the multiplier
# bootstrap's (and, with a band, its sup-t critical value); NA where the
# estimate is NA. spec: dd_spec() settings. (did_ddd, did_edid.)
dd_cells_inference <- function(psi, n, cluster, K, est, spec) {
  se <- dd_if_se(psi, n, cluster, seq_len(K))
  se[is.na(est)] <- NA_real_
  crit <- NA_real_
  if (spec$nboot > 0L) {
    okc <- which(!is.na(se))
    bt <- dd_if_boot(psi, n, cluster, spec$nboot, spec$boot_weights, spec$alpha, band = seq_along(okc), cols = okc)
    se[okc] <- bt$se
    if (spec$cband && length(okc) > 1L) crit <- bt$crit
  } else if (spec$cband) dd_stop("`cband` = TRUE needs bootstrap draws: set nboot = 999, say.")
  list(se = se, crit = crit)
}

# Multiplier bootstrap (C, ifs.c) of the columns `cols` of psi, or of
# psi %*% comb (the draws of a linear combination are that combination of
# the draws): returns bootstrap standard errors (interquartile range / 1.349,
# type-1 quantiles, as did) and the sup-t critical value at level 1 - alpha
# over the columns in `band` (positions among the results).
dd_if_boot <- function(psi, n, cluster, nboot, boot_weights, alpha, band = NULL,
                       cols = seq_len(psi$K), comb = NULL) {
  # a database fit's rows stand for its units' cross-products only: the
  # units are streamed from the database (R/did_cs_db.R)
  st <- attr(psi, "db_stream")
  if (!is.null(comb)) cols <- which(rowSums(comb != 0) > 0)
  if (!is.null(st)) {
    draws <- dd_db_if_boot(st, nboot, boot_weights, cols)
    N <- st$N
  } else {
    R <- dd_if_rows(psi, cluster)
    draws <- dd_boot_batches(nboot, "multiplier bootstrap", function(B, seed, first)
      .Call(C_ifs_boot, R, as.integer(cols - 1L), B, dd_boot_types[[boot_weights]], NULL, NULL, seed, first, NULL))
    N <- R$n
  }
  if (!is.null(comb)) draws <- draws %*% comb[cols, , drop = FALSE]
  if (is.null(band)) band <- seq_len(ncol(draws))
  out <- dd_draws_summary(draws, N, n, alpha, band = band)
  out$draws <- draws
  out$N <- N
  out
}

# Wild bootstrap-t critical value for a uniform band over the columns `cols`
# of psi (or of psi %*% comb): each replicate's draw is divided by the
# standard error that replicate would itself report, from its multiplied
# influence functions recentred within the groups `group` (one per unit: the
# cohort, 0 for never treated; with clusters, each cluster's cohort, which
# must be unique), and the critical value is the 1 - alpha quantile of the
# largest |t| over the columns. A replicate whose standard error is
# numerically zero counts as an infinite |t|. Returns the critical value and
# the multiplier-row count.
dd_if_boot_t <- function(psi, n, cluster, group, nboot, boot_weights, alpha, cols = seq_len(psi$K),
                         comb = NULL) {
  if (inherits(cluster, "dd_svy_rows"))
    dd_stop("`cband_method` = \"bootstrap-t\" is not available with a `survey` design; use cband_method = \"sup-t\".")
  if (isTRUE(attr(psi, "db")))
    dd_stop("`cband_method` = \"bootstrap-t\" needs the data in memory (the fit's data is a database table); use cband_method = \"sup-t\", or collect() the table.",
            .code = "NEEDS_MEMORY")
  R <- dd_if_rows(psi, cluster)
  if (is.null(cluster)) {
    rg <- group
  } else {
    cl2 <- dd_sorted_codes(cluster) + 1L               # cluster rows in sorted order (as dd_if_rows)
    ng <- tapply(group, cl2, function(z) length(unique(z)))
    if (any(ng > 1L))
      dd_stop("`cband_method` = \"bootstrap-t\" recentres the bootstrap within cohorts and needs each cluster inside one cohort; %d cluster(s) of `cluster` hold units of several cohorts. Use cband_method = \"sup-t\".",
              sum(ng > 1L))
    rg <- group[match(seq_len(attr(cl2, "nlev")), cl2)]
  }
  if (!is.null(comb)) {
    R <- dd_ifs_dense(.Call(C_ifs_combine, R, comb))
    cols <- seq_len(ncol(comb))
  }
  gc <- match(rg, sort(unique(rg))) - 1L
  r <- dd_boot_batches(nboot, "wild bootstrap-t", function(B, seed, first)
    .Call(C_ifs_boot, R, as.integer(cols - 1L), B, dd_boot_types[[boot_weights]], as.integer(gc), max(gc) + 1L,
          seed, first, NULL))
  tot <- .Call(C_ifs_colss, R)[cols]
  t <- r$draws * sqrt(R$n) / sqrt(pmax(r$ss, 0))
  # a replicate with a numerically zero standard error: infinite |t|
  t[r$ss <= rep(tot, each = nrow(t)) * 1e-12] <- Inf
  mx <- abs(t[, 1])
  for (k in seq_len(ncol(t))[-1]) mx <- pmax(mx, abs(t[, k]))
  mx[is.na(mx)] <- Inf
  crit <- if (length(mx)) sort(mx)[max(1L, ceiling(length(mx) * (1 - alpha)))] else NA_real_
  list(crit = crit, N = R$n)
}

# Coefficient table for influence-function estimators (normal reference).
dd_if_table <- function(term, est, se, alpha, crit = NA_real_, extra = NULL) {
  tab <- dd_coef_table(stats::setNames(est, term), se, Inf, alpha)   # df = Inf: normal
  if (!is.null(extra)) {
    # cbind() of two data frames of one length: their columns side by side
    tab <- if (is.data.frame(extra) && nrow(extra) == nrow(tab) && !any(vapply(extra, is.list, NA)))
      dd_df(c(unclass(tab), unclass(extra))) else cbind(tab, extra)
  }
  if (is.finite(crit)) {
    tab$cband.low <- tab$estimate - crit * tab$std.error
    tab$cband.high <- tab$estimate + crit * tab$std.error
  }
  tab
}

# Bootstrap summaries from draws (B x m, columns already on did's sqrt(N)
# scale): IQR standard errors and the sup-t critical value over `band`.
dd_draws_summary <- function(draws, N, n, alpha, band = integer()) {
  r <- .Call(C_draws_summary, draws, as.integer(band - 1L), as.double(alpha), dd_zero_tol)
  list(se = r$sig * sqrt(N) / n, crit = r$crit)
}

# The unscaled cross-product of the influence functions: of the first m
# columns of psi, or of psi %*% comb (n m^2 work), with cluster sums.
dd_if_cross <- function(psi, cluster, comb = NULL, m = psi$K) {
  R <- dd_if_rows(psi, cluster)
  if (is.null(comb)) .Call(C_ifs_crossprod, R, seq_len(m) - 1L) else .Call(C_ifs_comb_cross, R, comb, FALSE)
}

# variance of influence-function estimates, formed on demand (n m^2 work):
# cluster sums when clustered; bootstrap fits keep their bootstrap standard
# errors on the diagonal
dd_if_vcov <- function(object, cross = NULL) {
  V <- cross %||% dd_if_cross(object$inf, object$unit_cluster, object$comb, nrow(object$coeftable))
  V <- V / object$n^2
  se <- object$coeftable$std.error
  if (identical(object$vcov_type, "bootstrap")) {
    s <- se / sqrt(diag(V)); s[!is.finite(s)] <- NA_real_
    V <- V * outer(s, s)
  }
  dimnames(V) <- list(object$coeftable$term, object$coeftable$term)
  V
}

# Influence functions of regression coefficients for the multiplier
# bootstrap: one row per cluster (clusters in sorted order of their values,
# so that the multipliers do not depend on the row order of the data) or per
# observation (in the order of `key`, a 0-based rank of each row), scaled so
# that sqrt(colSums(psi^2)) / n is the fit's analytic standard error (the
# small-sample factor of CR1 / HC1 included): psi_g = n sqrt(c) B sum_{i in g}
# w_i e_i xd_i. Bootstrap standard errors then converge to the analytic ones.
dd_reg_ifs <- function(reg, vc, cluster_values = NULL, key = NULL, svy = NULL) {
  if (!is.null(reg$cells)) stop("internal error: regression influence functions need dense regressors; please report",
                                call. = FALSE)
  if (!is.null(svy)) {
    # survey designs: the observations' scores w e x~ B, in the order of the
    # key, turned into PSU rows centred within strata (dd_svy_if_rows, the C
    # kernel's rules): one multiplier per PSU, as did_cs(survey = ) draws.
    # Stacked data use a design row more than once (rows repeat): its
    # copies' scores add up in its PSU's total, as in dd_svy_reg_vcov().
    if (svy$design$replicate)
      dd_stop("the multiplier bootstrap (`nboot` > 0) is not available with a replicate-weight `survey` design (its standard errors come from the replicates); use nboot = 0.")
    sc <- ((if (is.null(reg$w)) 1 else reg$w) * reg$resid) * (reg$Xd %*% reg$bread)
    o <- if (is.null(key)) seq_len(nrow(sc)) else order(key)
    R <- as.matrix(dd_svy_rows_apply(dd_ifs_dense(sc[o, , drop = FALSE]), dd_svy_if_rows(svy$design, svy$rows[o])))
    colnames(R) <- colnames(reg$Xd)
    return(R * reg$n)
  }
  if (identical(vc$type, "CR2"))
    dd_stop("the multiplier bootstrap (`nboot` > 0) does not combine with `vcov` = \"CR2\" (CR2 is already the small-sample correction, with Satterthwaite degrees of freedom); use nboot = 0, or vcov = \"cluster\" with the bootstrap.")
  if (vc$type %in% c("HC2", "HC3"))
    dd_stop("the multiplier bootstrap (`nboot` > 0) does not combine with `vcov` = \"%s\" (a leverage correction of the analytic variance); use nboot = 0, or vcov = \"hetero\" with the bootstrap.",
            vc$type)
  if (!vc$type %in% c("cluster", "hetero", "HC0", "survey"))
    dd_stop("the multiplier bootstrap (`nboot` > 0) needs heteroskedasticity-robust or clustered standard errors; got vcov = \"%s\".",
            vc$type)
  sc <- reg$Xd * ((if (is.null(reg$w)) 1 else reg$w) * reg$resid)
  if (vc$type == "cluster") {
    if (length(cluster_values) != 1L)
      dd_stop("the multiplier bootstrap (`nboot` > 0) supports one-way clustering; `cluster` names %d variables.",
              length(cluster_values))
    sc <- rowsum(sc, dd_sorted_codes(cluster_values[[1]]), reorder = TRUE)
  } else if (!is.null(key)) {
    sc <- sc[order(key), , drop = FALSE]
  }
  S <- sc %*% reg$bread
  colnames(S) <- colnames(reg$Xd)
  v0 <- colSums(S^2)
  cf <- diag(vc$V) / v0
  ok <- is.finite(cf) & v0 > 0
  if (any(ok) && max(abs(cf[ok] / cf[ok][1] - 1)) > 1e-8)
    stop("internal error: the small-sample factor differs across coefficients; please report", call. = FALSE)
  cf <- if (any(ok)) cf[ok][1] else 1
  S * (reg$n * sqrt(cf))
}

# The multiplier bootstrap of estimates whose influence-function rows are
# `psi` (rows: clusters or observations, in an order that does not depend on
# the row order of the data; columns: the estimates): each column is scaled
# so that sqrt(sum psi^2) / n equals the analytic standard error sqrt(V_kk),
# so that the bootstrap standard errors converge to the analytic ones.
# Returns bootstrap standard errors (did's interquartile-range rule), the
# sup-t critical value over the columns `band` when spec$cband, the
# covariance rescaled to the bootstrap standard errors, and a label.
dd_ifs_boot <- function(psi, V, spec, band, what) {
  n <- nrow(psi)
  ss <- sqrt(colSums(psi^2)) / n
  sc <- sqrt(pmax(diag(V), 0)) / ss
  sc[!is.finite(sc)] <- 0
  psi <- sweep(psi, 2, sc, "*")
  bt <- dd_if_boot(dd_ifs_dense(psi), n, NULL, spec$nboot, spec$boot_weights, spec$alpha,
                   band = if (spec$cband) band else integer())
  se <- bt$se
  s <- se / sqrt(diag(V)); s[!is.finite(s)] <- NA_real_
  list(se = se, crit = if (spec$cband && length(band)) bt$crit else NA_real_, V = V * outer(s, s),
       label = sprintf("%s; multiplier bootstrap of the influence functions (%d draws, %s%s)", what, spec$nboot,
                       spec$boot_weights, if (identical(attr(what, "psu"), TRUE)) ", one per PSU" else ""))
}

# ... of regression aggregates S b (dd_lincom) from the coefficients'
# influence functions (dd_reg_ifs)
dd_reg_boot <- function(est, S, V, spec, band)
  dd_ifs_boot(dd_lincom(est$reg$coef[est$reg$keep], NULL, S, ifs = est$ifs)$ifs, V, spec, band,
              structure(est$vc$label, psu = identical(est$vc$type, "survey")))

# A table with the multiplier bootstrap when spec$nboot > 0: bootstrap
# standard errors, and the uniform band over the rows `band` (the event
# times) when spec$cband. Returns list(tab, V, crit, label) (label NULL
# without the bootstrap). boot: function(V) giving dd_ifs_boot()'s list.
dd_boot_table <- function(estimate, V, df, spec, band, boot) {
  se <- sqrt(diag(V)); crit <- NA_real_; label <- NULL
  if (spec$nboot > 0L) {
    bt <- boot(V)
    se <- bt$se; V <- bt$V; crit <- bt$crit; label <- bt$label
  }
  tab <- dd_coef_table(estimate, se, df, spec$alpha)
  if (is.finite(crit)) {
    tab$cband.low <- tab$cband.high <- NA_real_
    tab$cband.low[band] <- tab$estimate[band] - crit * tab$std.error[band]
    tab$cband.high[band] <- tab$estimate[band] + crit * tab$std.error[band]
  }
  list(tab = tab, V = V, crit = crit, label = label)
}

# a regression aggregate's table (did_sa, did_stacked)
dd_reg_agg_table <- function(est, lc, S, spec, band)
  dd_boot_table(lc$estimate, lc$vcov, dd_vc_df(est$vc, S), spec, band, function(V) dd_reg_boot(est, S, V, spec, band))

# The t degrees of freedom of the linear combinations S b of a fit's
# coefficients: the variance's (one number), or CR2's Satterthwaite degrees
# of freedom of each combination.
dd_vc_df <- function(vc, S) if (identical(vc$type, "CR2")) dd_cr2_df(vc$cr2, S) else vc$df

# The result layer of estimators whose engines return estimates and their
# influence functions U (rows: groups, clusters or units, in an order that
# does not depend on the row order of the data; columns: the estimates;
# covariance crossprod(U) / scale^2): with a survey design the rows become
# PSU totals centred within strata, or replicate totals (unit_rows: the data
# row of each row of U); estimates with ok = FALSE get no variance. Returns
# the table (multiplier bootstrap and sup-t band over `band` when sp asks),
# the covariance (bootstrap-rescaled: V; analytic or design-based:
# V_analytic, for Wald tests), the variance label, the rows R and the number
# of clusters (the rows of R). what: the influence functions' name ("dCDH
# influence functions"), how: the analytic variance's description (NULL:
# none). cluster: NULL when the rows of U are already the clusters (or the
# unclustered units), else one value per row of U: the rows are summed
# within clusters (in sorted order of the values; one cluster is an error).
# A uniform band (sp$cband) needs bootstrap draws (sp$nboot > 0).
dd_if_result <- function(est, U, scale, sp, band, what, how, ok = NULL, design = NULL, unit_rows = NULL,
                         cluster = NULL) {
  if (sp$cband && sp$nboot == 0L) dd_stop("`cband` = TRUE needs bootstrap draws: set nboot = 999, say.")
  if (!is.null(design) && !is.null(cluster))
    stop("internal error: dd_if_result() takes a survey design or clusters, not both; please report", call. = FALSE)
  R <- U
  label <- if (is.null(how)) what else sprintf("%s, %s", what, how)
  if (!is.null(cluster)) {
    R <- as.matrix(dd_if_rows(dd_ifs_dense(U), cluster))
    colnames(R) <- colnames(U)
  }
  if (!is.null(design)) {
    R <- as.matrix(dd_if_rows(dd_ifs_dense(U), dd_svy_if_rows(design, unit_rows)))
    colnames(R) <- colnames(U)
    label <- if (design$replicate) sprintf("%s, survey design (%d %s replicates)", what,
                                           ncol(design$repweights), design$type)
             else sprintf("%s, survey design (Taylor linearisation, PSUs within strata)", what)
  }
  V <- crossprod(R) / scale^2
  if (!is.null(ok)) { V[!ok, ] <- NA_real_; V[, !ok] <- NA_real_ }
  bt <- dd_boot_table(est, V, Inf, sp, band, function(V) dd_ifs_boot(R, V, sp, band, label))
  list(tab = bt$tab, V = bt$V, V_analytic = V, crit = bt$crit, label = if (sp$nboot > 0L) bt$label else label,
       R = R, n_clusters = if (is.null(design)) nrow(R) else if (design$replicate) NULL else nrow(R))
}

# Wald test that the effects b are all equal (their deviations from their
# mean are zero: k - 1 degrees of freedom), as DIDmultiplegtDYN's
# effects_equal (did_dcdh); NA when fewer than two effects or a singular covariance
dd_if_wald_equal <- function(b, V) {
  k <- length(b)
  if (k < 2L) return(NA_real_)
  Dm <- cbind(diag(k - 1L), 0) - 1 / k
  dd_if_wald(drop(Dm %*% b), Dm %*% V %*% t(Dm), k - 1L)
}

# Wald test that the k estimates b are all zero; NA unless their covariance
# is well invertible (every eigenvalue above 1e-10, as DIDmultiplegtDYN 2.4.0)
dd_if_wald <- function(b, Vs, k) {
  if (k < 2 || any(is.na(b)) || any(!is.finite(Vs))) return(NA_real_)
  ev <- eigen(Vs, symmetric = TRUE, only.values = TRUE)$values
  if (sum(ev > 1e-10) < k) return(NA_real_)
  stats::pchisq(drop(crossprod(b, solve(Vs, b))), df = k, lower.tail = FALSE)
}

# Influence-function rows of several estimations aligned on one set of rows:
# per-horizon regressions on different samples (local projections, rolling
# DiD, a regression per cohort), each with its clusters' (or units') rows.
# blocks: a list of list(U, key, scale): U the block's rows (one per key;
# keys unique), scaled so that crossprod(U) / scale^2 is the block's
# covariance (dd_reg_ifs() rows with scale = the regression's n). Returns
# list(U, key): one row per key of the union (sorted), the blocks' columns
# side by side as U_b / scale_b and zero where a block has no row for the
# key, so that crossprod(U) is the joint covariance (the cross-covariances
# from the clusters the blocks share) and dd_lincom(b, crossprod(U), S, ifs
# = U) gives any combination across blocks; dd_if_result(est, U, 1, ...)
# the table, bootstrap and band. Each block keeps its own small-sample
# factor (its CR1 c_b enters a cross-covariance as sqrt(c_b c_b')).
dd_if_align <- function(blocks) {
  if (!length(blocks)) stop("internal error: dd_if_align() needs at least one block; please report", call. = FALSE)
  for (b in blocks)
    if (!is.matrix(b$U) || nrow(b$U) != length(b$key) || anyDuplicated(b$key) || anyNA(b$key) ||
        !is.numeric(b$scale) || length(b$scale) != 1L || !(b$scale > 0))
      stop("internal error: dd_if_align() got a block whose rows, keys or scale do not conform; please report",
           call. = FALSE)
  key <- sort(unique(unlist(lapply(blocks, function(b) b$key), use.names = FALSE)))
  U <- do.call(cbind, lapply(blocks, function(b) {
    M <- matrix(0, length(key), ncol(b$U), dimnames = list(NULL, colnames(b$U)))
    M[match(b$key, key), ] <- b$U / b$scale
    M
  }))
  list(U = U, key = key)
}
