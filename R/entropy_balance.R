# Entropy balancing (Hainmueller 2012) and its use in did_stacked(balance =
# "entropy"): covariate-balanced weighted stacked DiD (Ustyuzhanin 2026), as
# diff-diff's StackedDiD(balance = "entropy") (tools/notes/
# diffdiff-extensions-spec.md, section 1).

# Entropy-balancing weights of the rows of X (n x k, the controls) whose
# weighted means equal `target` (length k), closest to uniform base weights in
# Kullback-Leibler divergence. The dual L(lambda) = log sum_i q_i
# exp(Zs_i' lambda) (q = 1/n; Zs = X - target, each column divided by its
# population standard deviation, or 1 when that is below 1e-12) is convex; its
# minimiser gives w_i = q_i exp(Zs_i' lambda) / sum_j q_j exp(Zs_j' lambda),
# and its gradient sum_i w_i Zs_i is zero exactly at balance. From lambda = 0,
# damped Newton steps (Hessian = the weighted covariance of Zs plus a ridge of
# 1e-10 times its mean diagonal; the minimum-norm least-squares direction if
# that fails) with Armijo backtracking (slope 1e-4, step halved at most 40
# times), until the largest raw-scale residual |sum_i w_i X_ik - target_k| is
# below `tol` or after `maxit` steps (where no halving of a Newton step
# decreases the dual enough, a steepest-descent step instead: diff-diff would
# move by 2^-40 of the Newton step and, after an overshoot that left a
# vanishing Hessian, diverge); then, if still unbalanced, L-BFGS-B on
# the dual from the last lambda (500 iterations), kept only if it lowers the
# residual. Never stops: returns `converged` and the residuals, and the caller
# reports a failure with its context. `iterations` is the Newton step at
# which the loop stopped (diff-diff's n_iter).
dd_entropy_balance <- function(X, target, tol = 1e-8, maxit = 200L) {
  n <- nrow(X); k <- ncol(X)
  q <- rep(1 / n, n)
  Z <- X - rep(target, each = n)
  s <- sqrt(colMeans((Z - rep(colMeans(Z), each = n))^2))
  s[s < 1e-12] <- 1
  Zs <- Z / rep(s, each = n)
  logits <- function(lam) drop(Zs %*% lam)
  wts <- function(lam) { l <- logits(lam); e <- q * exp(l - max(l)); e / sum(e) }
  loss <- function(lam) { l <- logits(lam); m <- max(l); m + log(sum(q * exp(l - m))) }
  resid <- function(w) drop(crossprod(X, w)) - target
  lam <- numeric(k)
  it <- 0L
  for (it in seq_len(maxit)) {
    w <- wts(lam)
    if (max(abs(resid(w))) < tol) break
    g <- drop(crossprod(Zs, w))
    Zc <- Zs - rep(g, each = n)
    H <- crossprod(Zc, w * Zc)
    ridge <- 1e-10 * (sum(diag(H)) / k + 1e-12)
    d <- tryCatch(-drop(solve(H + diag(ridge, k), g)), error = function(e) -drop(dd_pinv(H) %*% g))
    base <- loss(lam)
    armijo <- function(d) {
      slope <- sum(g * d); step <- 1
      for (j in seq_len(40L)) {
        if (loss(lam + step * d) <= base + 1e-4 * step * slope) return(list(step = step, ok = TRUE))
        step <- step / 2
      }
      list(step = step, ok = FALSE)
    }
    ls <- armijo(d)
    # a Newton direction without sufficient decrease after 40 halvings (a
    # Hessian that underflowed after an overshoot): a steepest-descent step
    # instead (diff-diff moves by 2^-40 of the Newton direction there)
    if (!ls$ok) { d <- -g; ls <- armijo(d) }
    lam <- lam + ls$step * d
  }
  w <- wts(lam)
  r <- resid(w)
  solver <- "newton"
  if (max(abs(r)) >= tol) {
    # scipy's L-BFGS-B settings (memory 10, projected-gradient tolerance
    # 1e-12, 500 iterations); the numbers need not equal scipy's
    o <- tryCatch(stats::optim(lam, loss, function(l) drop(crossprod(Zs, wts(l))), method = "L-BFGS-B",
                               control = list(maxit = 500L, pgtol = 1e-12, lmm = 10L)),
                  error = function(e) NULL)
    if (!is.null(o) && all(is.finite(o$par))) {
      w2 <- wts(o$par); r2 <- resid(w2)
      if (max(abs(r2)) < max(abs(r))) { lam <- o$par; w <- w2; r <- r2; solver <- "lbfgs" }
    }
  }
  list(weights = w, lambda = lam, residuals = r, max_residual = max(abs(r)), converged = max(abs(r)) < tol,
       iterations = it, ess = 1 / sum(w^2), solver = solver)
}

# did_stacked()'s balancing arguments: `balance`, the covariate columns
# (a character vector, or a one-sided formula of plain column names;
# duplicates dropped), the tolerance and the iteration cap. Balancing needs
# covariates and is refused with sampling weights or a survey design (the
# base weights would have to be the sampling weights: not specified).
dd_stacked_balance_args <- function(balance, covariates, tol, maxit, weightsname, survey) {
  balance <- dd_match_arg(balance[1], c("none", "entropy"), "balance")
  if (inherits(covariates, "formula")) {
    tl <- attr(stats::terms(covariates), "term.labels")
    if (length(covariates) != 2L || !length(tl) || !all(tl %in% all.vars(covariates)))
      dd_stop("`balance_covariates` = %s: give a one-sided formula of column names (such as ~ x1 + x2) or a character vector; the covariates' means are balanced as they are.",
              dd_show(covariates))
    covariates <- tl
  }
  if (!is.null(covariates) && (!is.character(covariates) || !length(covariates) || anyNA(covariates) ||
                               !all(nzchar(covariates))))
    dd_stop("`balance_covariates` must be column names (a character vector) or a one-sided formula; got %s.",
            dd_show(covariates))
  if (balance == "none") {
    if (!is.null(covariates))
      dd_stop("`balance_covariates` = %s is given with `balance` = \"none\"; the covariates are only used to balance (balance = \"entropy\"); regression covariates go in `xformla`.",
              dd_show(covariates))
    return(list(balance = "none"))
  }
  if (is.null(covariates))
    dd_stop("`balance` = \"entropy\" needs `balance_covariates` (the columns whose treated means the controls are balanced to); got NULL.")
  if (!is.null(weightsname))
    dd_stop("`weightsname` = \"%s\" cannot be combined with `balance` = \"entropy\" (the balancing weights start from uniform base weights).",
            weightsname)
  if (!is.null(survey))
    dd_stop("`survey` cannot be combined with `balance` = \"entropy\"; got %s.", dd_show(class(survey)[1]))
  list(balance = "entropy", covariates = unique(covariates), tol = dd_check_positive(tol, "balance_tol"),
       maxit = dd_check_count(maxit, "balance_maxit", min = 1))
}

# The balancing weights of the stacked rows. Per kept cohort a (columns of
# `umask`, cohorts `kc`): the balanced-window gate (every treated and clean
# control unit has exactly one row at each event time of the window), the
# covariates of every such unit at period a - 1, the controls' entropy
# weights b (summing to 1) towards the treated means, then the regression
# weights W = 1 for treated rows and (b / Nt_a) N^C_a Q_a =
# b (N^D_a / sum N^D) (sum N^C) / Nt_a for control rows at every event time,
# with Nt_a = sum b (the effective control mass, 1 up to rounding) and N^C_a
# the clean controls: uniform b gives Q. (diff-diff's weights are these
# divided by sum N^C / K, K the sub-experiments: a constant ratio of control
# to treated weight that changes nothing without covariates in the
# regression, but moves the pooled covariate coefficients with `xformla`.) Returns W for the stacked rows and the
# weights and diagnostics recorded in the fit. Units are taken in the sorted
# order of their identifiers, so nothing depends on the row order of `data`.
dd_stacked_balance <- function(bal, st, r, sub, e0, D, umask, kc, kpre, nE, tv, gu, nu, idname) {
  N <- nrow(umask); K <- length(kc)
  ids <- st$id[dd_first_rows(st$idc)]
  uc <- st$idc[r] + 1L
  # whole-number event times (periods one apart inside the windows)
  if (any(tv[st$tc[r] + 1L] - kc[sub] != e0 - kpre))
    dd_stop("`balance` = \"entropy\" needs periods one apart inside each event window (periods %s).",
            dd_show(sort(unique(tv))))
  rows_in <- matrix(tabulate(uc + N * (sub - 1L), N * K), N)
  X <- do.call(cbind, st$aux[bal$covariates])
  cov_rows <- function(a, units) {
    at <- which(st$tt == a - 1)
    map <- integer(N); map[st$idc[at] + 1L] <- at
    map[units]
  }
  out_w <- list(); diag_rows <- list(); b_all <- list(); nd <- numeric(K); nt <- numeric(K); nc <- numeric(K)
  for (k in seq_len(K)) {
    a <- kc[k]
    bad <- which(umask[, k] & rows_in[, k] != nE)
    if (length(bad))
      dd_stop("`balance` = \"entropy\" needs balanced event windows: in cohort %s's window [%s, %s], %d treated or clean-control unit(s) do not have one row at each of the %d periods (%s = %s has %d). Use balance = \"none\", or a balanced window.",
              format(a), format(a - kpre), format(a + nE - 1 - kpre), length(bad), nE, idname,
              dd_show(ids[bad[1]]), rows_in[bad[1], k])
    tr <- which(umask[, k] & !nu & gu == a); co <- which(umask[, k] & !(!nu & gu == a))
    tr <- tr[order(ids[tr])]; co <- co[order(ids[co])]
    Xt <- X[cov_rows(a, tr), , drop = FALSE]; Xc <- X[cov_rows(a, co), , drop = FALSE]
    for (j in seq_along(bal$covariates)) {
      nf <- which(!is.finite(c(Xt[, j], Xc[, j])))
      if (length(nf))
        dd_stop("`balance_covariates` column \"%s\" is %s for %s = %s at period %s (the period before cohort %s's adoption, where the balancing covariates are read); balancing needs finite values there.",
                bal$covariates[j], format(c(Xt[, j], Xc[, j])[nf[1]]), idname, dd_show(ids[c(tr, co)[nf[1]]]),
                format(a - 1), format(a))
    }
    m <- colMeans(Xt)
    eb <- dd_entropy_balance(Xc, m, bal$tol, bal$maxit)
    if (!eb$converged) {
      j <- which.max(abs(eb$residuals))
      dd_stop("`balance_covariates`: entropy balancing failed for cohort %s: the controls cannot match the treated mean of \"%s\" (%s; the clean controls range over [%s, %s]); largest residual %s >= `balance_tol` = %s. The treated mean lies outside the controls' convex hull: use fewer covariates, another `control_group`, or balance = \"none\".",
              format(a), bal$covariates[j], format(m[j]), format(min(Xc[, j])), format(max(Xc[, j])),
              format(eb$max_residual, digits = 3), format(bal$tol))
    }
    if (eb$ess < max(2, 0.05 * length(co)))
      warning(sprintf("entropy balancing for cohort %s concentrates the control weights (effective sample size %.1f of %d controls); its estimates may be unstable.",
                      format(a), eb$ess, length(co)), call. = FALSE)
    nd[k] <- length(tr); nt[k] <- sum(eb$weights); nc[k] <- length(co)
    b_all[[k]] <- list(tr = tr, co = co, b = eb$weights)
    diag_rows[[k]] <- data.frame(cohort = a, n_treated = length(tr), n_control = length(co),
                                 effective_control_mass = nt[k], ess = eb$ess,
                                 max_imbalance_pre = max(abs(colMeans(Xc) - m)),
                                 max_imbalance_post = eb$max_residual, iterations = eb$iterations,
                                 solver = eb$solver)
  }
  # b N^C_a Q_a: uniform b gives Wing's Q exactly (the windows are balanced,
  # so Q is constant within a sub-experiment)
  corr <- (nd / sum(nd)) * sum(nc) / nt
  W <- rep(1, length(r))
  bw <- vector("list", K)
  for (k in seq_len(K)) {
    s <- which(sub == k & D == 0L)
    W[s] <- b_all[[k]]$b[match(uc[s], b_all[[k]]$co)] * corr[k]
    u <- c(b_all[[k]]$tr, b_all[[k]]$co)
    bw[[k]] <- data.frame(cohort = kc[k], unit = ids[u], treated = seq_along(u) <= length(b_all[[k]]$tr),
                          b = c(rep(1, length(b_all[[k]]$tr)), b_all[[k]]$b),
                          weight = c(rep(1, length(b_all[[k]]$tr)), b_all[[k]]$b * corr[k]))
  }
  list(W = W, weights = do.call(rbind, bw), diagnostics = do.call(rbind, diag_rows))
}
