# The generalised linear model kernel: iteratively reweighted least squares
# on the one least-squares engine (dd_regress: fixed effects absorbed with
# the working weights in C, pivoted QR in C), for Poisson (log link) and
# logit. Converges when the relative change of the deviance is below `tol`
# (glm.fit's and fixest's rule: |dev - dev_old| / (0.1 + |dev|) < tol).
# Returns the final weighted least-squares fit (its bread is (X'WX)^-1 on
# the demeaned design, its residuals the working residuals and w the
# working weights, so that dd_vcov()'s clustered and robust meats are the
# model's scores), the linear predictor (fixed effects included), the
# fitted means, the deviance and the iteration count.
dd_glm <- function(y, X, fe = NULL, w = NULL, family = c("poisson", "logit"), opts = dd_fe_opts(), tol = 1e-10,
                   maxit = 100L) {
  family <- match.arg(family, c("poisson", "logit", "gaussian"))
  n <- length(y)
  pw <- if (is.null(w)) rep(1, n) else w
  fam <- switch(family,
    gaussian = list(linkinv = function(eta) eta, mu.eta = function(eta) rep(1, length(eta)),
                    var = function(mu) rep(1, length(mu)), dev = function(y, mu) pw * (y - mu)^2,
                    start = function(y) y),
    poisson = list(linkinv = function(eta) exp(eta), mu.eta = function(eta) exp(eta), var = function(mu) mu,
                   dev = function(y, mu) 2 * pw * (ifelse(y > 0, y * log(y / mu), 0) - (y - mu)),
                   start = function(y) log(y + 0.1)),
    logit = list(linkinv = stats::plogis, mu.eta = stats::dlogis, var = function(mu) mu * (1 - mu),
                 dev = function(y, mu) -2 * pw * (y * log(mu) + (1 - y) * log(1 - mu)),
                 start = function(y) stats::qlogis((pw * y + 0.5) / (pw + 1))))
  eta <- fam$start(y)
  dev_old <- Inf
  keep_cols <- NULL
  # without fixed effects each step solves the normal equations (X'WX) b =
  # X'Wz by Cholesky with the QR engine's rank rule (dd_gram_ols), the QR
  # engine only when that rule cannot decide; with fixed effects the
  # working response and design are demeaned with the working weights (C)
  Xi <- if (!is.null(fe)) NULL else if (identical(colnames(X)[1], "(Intercept)")) X else cbind("(Intercept)" = 1, X)
  # a sparse design (did_etwfe's cells and slopes) in compressed rows: the
  # normal equations cost n nnz^2 per step (C_xtwx) instead of n p^2
  # (density from the nonzero count: no n x p logical temporary)
  csr <- if (!is.null(Xi)) .Call(C_csr, Xi) else NULL
  if (!is.null(csr) && length(csr$val) >= 0.3 * as.double(nrow(Xi)) * ncol(Xi)) csr <- NULL
  gram <- NULL
  for (it in seq_len(maxit)) {
    mu <- fam$linkinv(eta)
    me <- fam$mu.eta(eta)
    z <- eta + (y - mu) / me
    W <- pw * me^2 / fam$var(mu)
    if (any(!is.finite(W)) || any(W <= 0))
      dd_stop("the %s fit diverged (fitted means at the boundary); check for perfect separation or outcomes that a covariate predicts exactly.",
              family)
    gram <- NULL
    if (!is.null(csr)) {
      ne <- .Call(C_xtwx, csr, as.double(W), as.double(z))
      gram <- dd_gram_ols(ne$A, ne$r, sqrt(pmax(diag(ne$A), 0)), opts$collin_tol)
    } else if (!is.null(Xi)) {
      XW <- Xi * W
      A <- crossprod(Xi, XW)
      gram <- dd_gram_ols(A, drop(crossprod(XW, z)), sqrt(pmax(diag(A), 0)), opts$collin_tol)
      rm(XW)
    }
    if (!is.null(gram)) {
      if (it == 1L && !all(gram$keep))
        message(sprintf("diffdiff: %s removed because of collinearity (coefficient NA).",
                        paste0("'", colnames(Xi)[!gram$keep], "'", collapse = ", ")))
      cf <- gram$coef; cf[!gram$keep] <- 0
      eta <- drop(Xi %*% cf)
    } else {
      # (the QR engine adds its own intercept without fixed effects)
      if (is.null(fe) && identical(colnames(X)[1], "(Intercept)")) X <- X[, -1, drop = FALSE]
      reg <- if (is.null(keep_cols)) dd_regress(z, X, fe, W, opts)
             else suppressMessages(dd_regress(z, X[, keep_cols, drop = FALSE], fe, W, opts))
      if (is.null(keep_cols)) keep_cols <- setdiff(names(reg$coef)[reg$keep], "(Intercept)")
      eta <- z - reg$resid
    }
    mu <- fam$linkinv(eta)
    dev <- sum(fam$dev(y, mu))
    # (identity link: the first step is the least-squares solution)
    if (family == "gaussian") { dev_old <- dev; break }
    if (abs(dev - dev_old) / (0.1 + abs(dev)) < tol) break
    dev_old <- dev
  }
  converged <- abs(dev - dev_old) / (0.1 + abs(dev)) < tol
  if (!converged)
    warning(sprintf("the %s fit did not converge in %d iterations (relative deviance change %.2g).", family, maxit,
                    abs(dev - dev_old) / (0.1 + abs(dev))), call. = FALSE)
  # the fit at the solution: working weights and residuals at the final eta
  mu <- fam$linkinv(eta); me <- fam$mu.eta(eta)
  W <- pw * me^2 / fam$var(mu)
  z <- eta + (y - mu) / me
  if (!is.null(gram)) {
    # the weighted least-squares fit of the last step, as dd_regress()
    # returns it (z - eta are its residuals: the step has converged)
    k <- gram$keep
    kn <- colnames(Xi)[k]
    bread <- gram$bread; dimnames(bread) <- list(kn, kn)
    reg <- list(coef = stats::setNames(gram$coef, colnames(Xi)), keep = k, bread = bread, resid = z - eta,
                Xd = if (all(k)) Xi else Xi[, k, drop = FALSE], yd = z, w = W, n = length(y), rank = sum(k), nparams = sum(k),
                intercept = TRUE, fe = NULL, fe_codes = NULL, dropped = colnames(Xi)[!k], iter = 0L, opts = opts)
  } else {
    if (is.null(keep_cols)) keep_cols <- colnames(X)
    reg <- suppressMessages(dd_regress(z, X[, keep_cols, drop = FALSE], fe, W, opts))
    reg$dropped <- setdiff(colnames(X), keep_cols)
  }
  list(reg = reg, eta = eta, mu = mu, deviance = dev, iter = it, converged = converged, family = family,
       path = if (!is.null(gram)) (if (!is.null(csr)) "sparse" else "dense") else "qr")
}

# The variance of a dd_glm() fit as fixest computes it (dispersion 1):
# iid (n - 1) / (n - K) (X'WX)^-1; clustered and heteroskedasticity-robust
# as dd_vcov() on the final weighted fit (the scores w x (z - eta) are
# x (y - mu) mu.eta / var).
dd_glm_vcov <- function(g, type, clusters = NULL, conley = NULL) {
  reg <- g$reg
  if (type == "iid" && g$family != "gaussian") {
    K <- reg$nparams
    return(list(V = reg$bread * (reg$n - 1) / (reg$n - K), df = reg$n - K, K = K, G = NULL, type = "iid",
                label = "IID"))
  }
  dd_vcov(reg, type, clusters, conley)
}
