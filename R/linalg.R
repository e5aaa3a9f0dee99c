# The package's one pseudo-inverse, and the map of its rank rules.
#
# Every least-squares fit and every inverse of a possibly singular matrix in
# diffdiff follows one of the rules below; each rule is the one of the peer the
# estimator is checked against, so that a rank-deficient problem gives the
# peer's numbers and not merely "a" solution.
#
# * Regressions (dd_regress() / dd_estimate(): did_twfe, did_event, did_sa,
#   did_etwfe, did_stacked, the imputation first stages, ...): C_ols
#   (src/linalg.c), a QR that keeps the columns in their order and drops a
#   column whose residual norm after the kept columns before it is at most
#   `collin_tol` times its reference norm, reported as an aliased term the
#   way lm() and fixest report them. dd_gram_ols() (R/regress.R) applies the
#   same rule to the normal equations and hands back to C_ols when a column
#   is too close to the threshold to decide from the Gram matrix.
# * did_cs's small cell regressions: Cholesky of the Gram matrix in plain C
#   (linalg.c's dd_chol_*, called from cs.c inside parallel regions), with
#   DRDID's rule: a singular system (dd_chol_ok's rcond test) makes the cell
#   not estimable instead of dropping columns.
# * did_dose: dd_pinv(divide = TRUE) with tol = sqrt(eps) (MASS::ginv's rule), because
#   contdid / npiv solve the B-spline sieve with MASS::ginv; a basis with
#   empty segments then gives contdid's coefficients.
# * did_rs: dd_pinv() with tol = sqrt(eps), because staggered inverts the
#   pre-period covariances of its refined variance with MASS::ginv.
# * did_edid: dd_pinv() with tol = max(dim) * eps (the rule of MATLAB's pinv
#   and numpy's matrix_rank) for Omega^-1 1 in the efficient weights: Omega
#   is a covariance of full rank unless some comparison moments are exact
#   linear combinations of others, and only the numerically null directions
#   of those are dropped (with a warning); the covariate sieve fits use a
#   pivoted QR and stop when it is rank deficient.
# * rd_robust's covariate coefficients: dd_pinv() with tol = 1e-15 (rdrobust
#   inverts the partialled covariate cross-products with MASS::ginv at
#   ginv.tol = 1e-15); collinear covariates are dropped first by qr() with
#   tol = 1e-7 (rdrobust's covs_drop).
# * did_had's Stute test: qr() with its default tolerance (as lm()).
# * Replicate survey designs: the rank of the replicate weights from
#   qr(tol = 1e-5), as survey::svrepdesign's degrees of freedom.
# * CR2 (R/cr2.R): G_j^(-1/2) with eigenvalues <= 1e-12 set to zero
#   (clubSandwich's rule); its svd() is the thin decomposition of R_j L that
#   gives the eigenvalues, not an inverse.
#
# No other R file calls svd() for an inverse (tests/testthat/test-linalg.R
# checks this).

# Moore-Penrose pseudo-inverse of A (n x p, finite) from its SVD: singular
# values d_i <= tol * d_1 (d_1 the largest) are treated as zero, as
# MASS::ginv does with its default tol = sqrt(eps); A = 0 gives the p x n
# zero matrix. It is computed as MASS::ginv computes it,
#   V_k diag(1 / d_k) U_k'   (the kept k columns of U and V).
# rhs: NULL, or a vector or matrix with n rows; then the result is
# pinv(A) rhs, computed as V_k (diag(1 / d_k) (U_k' rhs)) without forming the
# inverse. details = TRUE returns list(x = the result, d = all singular
# values, rank = k) for callers that check the spectrum. divide = TRUE
# computes V_k (U_k' / d_k) instead (dividing by the singular values rather
# than multiplying by their reciprocals): the same matrix up to the last
# bits, kept for did_dose, whose numbers were computed this way.
dd_pinv <- function(A, tol = sqrt(.Machine$double.eps), rhs = NULL, details = FALSE, divide = FALSE) {
  if (!is.matrix(A)) A <- as.matrix(A)
  if (!is.numeric(tol) || length(tol) != 1L || is.na(tol) || tol < 0)
    stop("internal error: dd_pinv()'s `tol` must be one number >= 0; please report", call. = FALSE)
  if (!is.null(rhs) && NROW(rhs) != nrow(A))
    stop("internal error: dd_pinv()'s `rhs` must have nrow(A) rows; please report", call. = FALSE)
  if (any(dim(A) == 0L)) {
    x <- if (is.null(rhs)) matrix(0, ncol(A), nrow(A)) else matrix(0, ncol(A), NCOL(rhs))
    return(if (details) list(x = x, d = numeric(), rank = 0L) else x)
  }
  s <- svd(A)
  keep <- s$d > tol * s$d[1]
  k <- sum(keep)
  x <- if (is.null(rhs)) {
    if (k == 0L) array(0, dim(A)[2:1])
    else if (divide) s$v[, keep, drop = FALSE] %*% (t(s$u[, keep, drop = FALSE]) / s$d[keep])
    else s$v[, keep, drop = FALSE] %*% ((1 / s$d[keep]) * t(s$u[, keep, drop = FALSE]))
  } else {
    if (k == 0L) matrix(0, ncol(A), NCOL(rhs))
    else s$v[, keep, drop = FALSE] %*% ((1 / s$d[keep]) * crossprod(s$u[, keep, drop = FALSE], rhs))
  }
  if (details) list(x = x, d = s$d, rank = k) else x
}
