# did_twfe() on a database table (R/dbi.R): on a balanced panel the
# two-way fixed-effects regression y_it = a_i + l_t + b D_it + e_it has
# sufficient statistics by treatment path (the units with the same 0/1
# path D_i1..D_iT): the path's units n_p, its mean outcome path ybar_p and
# the centred cross-moments Q_p of its units' outcome paths (the approach
# of cohort-compressed regressions, exact for a saturated path x period
# design). With X~_p the two-way demeaned regressor of path p (T x 1:
# D_pt - Dbar_p. - Dbar_.t + Dbar, the period means weighted by the paths'
# units) and ybar_. the mean path of all units,
#   b = sum_p n_p X~_p'(ybar_p - ybar_.) / sum_p n_p X~_p'X~_p,
# and a unit's score X~_p' e_i = X~_p'(y_i - ybar_p) + c_p is affine in its
# outcome path, so the clustered meat (by unit: sum_p n_p c_p c_p' +
# X~_p' Q_p X~_p; by a coarser cluster: from the engine's per cluster and
# path centred sums), the heteroskedasticity-robust meat and the residual
# sum of squares (tr(J Q_p J) + n_p |r_p|^2, J the within-unit demeaning)
# follow from the moments, with the in-memory fit's conventions
# (dd_vcov(): K, G, degrees of freedom).

dd_twfe_db <- function(data, yname, idname, tname, dname, xformla, weightsname, fe, cluster, vcov, alpha, nboot,
                       survey, call) {
  dd_db_reg_unsupported(data, "did_twfe", xformla, weightsname, fe, survey, nboot, vcov)
  alpha <- dd_check_alpha(alpha)
  dd_check_string(idname, "idname")
  vs <- dd_db_vcov_spec(data, "did_twfe", idname, cluster, vcov)
  ccol <- vs$column
  roles <- list(yname = yname, idname = idname, tname = tname, dname = dname, cluster = ccol)
  src <- dd_db_open(data, roles, "did_twfe")
  chk <- dd_db_check_panel(src, roles, kind = "path")
  if (any(chk$n_complete < chk$n))
    dd_db_in_memory(data, sprintf("did_twfe() on an unbalanced panel (%s unit(s) miss a period or its outcome)",
                                  format(sum(chk$n - chk$n_complete))))
  per <- chk$periods; T <- length(per)
  mom <- dd_db_moments(src, dd_db_units_sql(src, per, kind = "path"), T, cluster = !is.null(ccol))
  # the paths' treatment (decoded from their keys)
  D <- t(vapply(mom$g, function(k) { b <- numeric(T); for (j in seq_len(T)) { b[j] <- k %% 2; k <- k %/% 2 }; b },
                numeric(T)))
  D <- matrix(D, length(mom$g), T)
  n <- mom$n; N <- sum(n); T <- as.integer(T)
  if (all(D == 1)) dd_stop("`dname` = \"%s\" is 1 in every row: there is no untreated observation.", dname, .code = "ALWAYS_TREATED")
  if (all(D == 0)) dd_stop("`dname` = \"%s\" is 0 in every row: no unit is ever treated.", dname, .code = "NO_TREATED")
  r <- dd_fe2_moments_fit(lapply(seq_len(nrow(D)), function(p) matrix(D[p, ], T, 1L)), n, mom$mean, mom$Q)
  if (!r$ok)
    dd_stop("`dname` = \"%s\" is collinear with the unit and time fixed effects (it varies only between units or only over time); the treatment effect is not identified.",
            dname)
  cs <- mom$clusters
  vc <- dd_fe2_db_vcov(r, vs$type, N, T, vs$cluster, cs, if (!is.null(cs)) match(cs$g, mom$g),
                       rowSums(D) > 0, rowSums(D) == 0, n)
  V <- matrix(vc$V, 1, 1, dimnames = list("ATT", "ATT"))
  tab <- dd_coef_table(stats::setNames(r$beta, "ATT"), sqrt(V[1, 1]), vc$df, alpha)
  info <- dd_db_reg_info("did_twfe", "Two-way fixed-effects DiD (did_twfe)", yname, vc, vs$type, alpha, "ATT", N, T,
                         idname, tname, r, data, chk$n_rows)
  new_dd_fit("did_twfe", tab, stats::setNames(r$beta, "ATT"), V, info, call)
}

# The regression from the keys' moments (cohorts or treatment paths):
# X, a list of T x k regressor matrices, one per key (the regressors
# depend only on the key and the period); n, ybar (keys x T), Q (T x T x
# keys). Returns the demeaned regressors X~ (list), b, A = sum n X~'X~,
# the unit-score constants c (keys x k: X~_p' e_i = X~_p'(y_i - ybar_p) +
# c_p), the meats (clustered by unit, heteroskedasticity-robust; k x k),
# the residual and total sums of squares.
dd_fe2_moments_fit <- function(X, n, ybar, Q) {
  N <- sum(n); T <- ncol(ybar); np <- length(n); k <- ncol(X[[1]])
  Xbar <- Reduce(`+`, Map(function(x, m) m * x, X, n)) / N                # period means over units (T x k)
  Xt <- lapply(X, function(x) x - rep(colMeans(x), each = T) - Xbar + rep(colMeans(Xbar), each = T))
  yt <- colSums(n * ybar) / N
  dev <- ybar - rep(yt, each = np)                                          # ybar_p - ybar_.
  A <- Reduce(`+`, Map(function(x, m) m * crossprod(x), Xt, n))
  bv <- Reduce(`+`, Map(function(x, m, p) m * drop(crossprod(x, dev[p, ])), Xt, n, seq_len(np)))
  ok <- k > 0 && rcond(A) > 1e-12
  beta <- if (ok) solve(A, bv) else rep(NA_real_, k)
  J <- diag(T) - 1 / T
  cc <- matrix(0, np, k); ssr <- 0; tss_w <- 0; tss <- 0
  meat_unit <- matrix(0, k, k); meat_hc <- matrix(0, k, k)
  yall <- sum(n * rowMeans(ybar)) / N
  for (p in seq_len(np)) {
    x <- Xt[[p]]
    JQJ <- J %*% Q[, , p] %*% J
    jd <- drop(J %*% dev[p, ])
    if (ok) {
      cc[p, ] <- drop(crossprod(x, dev[p, ])) - drop(crossprod(x) %*% beta)
      rp <- jd - drop(x %*% beta)                                           # the key's mean residual
      ssr <- ssr + sum(diag(JQJ)) + n[p] * sum(rp^2)
      meat_unit <- meat_unit + n[p] * tcrossprod(cc[p, ]) + crossprod(x, Q[, , p] %*% x)
      meat_hc <- meat_hc + crossprod(x, (diag(JQJ) + n[p] * rp^2) * x)
    }
    tss_w <- tss_w + sum(diag(JQJ)) + n[p] * sum(jd^2)
    tss <- tss + sum(diag(Q[, , p])) + n[p] * sum((ybar[p, ] - yall)^2)
  }
  list(beta = beta, A = A, ok = ok, Xt = Xt, c = cc, ssr = ssr, tss = tss, tss_within = tss_w,
       meat_unit = meat_unit, meat_hc = meat_hc)
}

# The variance of a two-way fixed-effects regression from its moments fit
# `r` with the in-memory conventions (dd_vcov(): K, G, degrees of freedom):
# vtype "iid", "hetero", "HC0" or "cluster" (by unit: ccl NULL; by a
# coarser cluster: the engine's per cluster and key counts and centred
# sums, `cs`, and the key of each of its rows, `p`); N units, T periods;
# treated / control: per key, whether it has treated observations /
# whether it is a never-treated (control) key, for the few-cluster warning.
dd_fe2_db_vcov <- function(r, vtype, N, T, cluster, cs, p, treated, control, n) {
  k <- length(r$beta)
  nobs <- dd_db_count(as.double(N) * T)
  nparams <- dd_db_count(as.double(N) + T + k - 1)
  B <- solve(r$A)
  G <- NULL
  if (vtype == "iid") {
    V <- B * r$ssr / (nobs - nparams); df <- nobs - nparams; label <- "IID"
  } else if (vtype %in% c("hetero", "HC0")) {
    V <- B %*% r$meat_hc %*% B * (if (vtype == "hetero") nobs / (nobs - nparams) else 1)
    df <- nobs - nparams
    label <- if (vtype == "hetero") "Heteroskedasticity-robust (HC1)" else "Heteroskedasticity-robust (HC0)"
  } else {
    if (is.null(cs)) {
      G <- as.integer(N); meat <- r$meat_unit
      G1 <- sum(n[treated]); G0 <- sum(n[control])
    } else {
      cc <- dd_sorted_codes(cs$c); G <- attr(cc, "nlev")
      S <- matrix(0, G, k)
      for (i in seq_along(p))
        S[cc[i] + 1L, ] <- S[cc[i] + 1L, ] + cs$n[i] * r$c[p[i], ] + drop(cs$s[i, ] %*% r$Xt[[p[i]]])
      meat <- crossprod(S)
      G1 <- length(unique(cc[treated[p]])); G0 <- length(unique(cc[control[p]]))
    }
    dd_check_nclusters(G, cluster)
    K <- max(k + T, k + 1L)                               # the unit effects nested in the clusters
    V <- B %*% meat %*% B * (G / (G - 1)) * ((nobs - 1) / (nobs - K))
    V <- (V + t(V)) / 2
    df <- G - 1
    G <- stats::setNames(G, cluster)
    label <- sprintf("Clustered (%s)", cluster)
    dd_warn_few_clusters_counts(G1, G0, sprintf("`cluster` = \"%s\"", cluster), boot = TRUE)
  }
  list(V = V, df = df, G = G, label = label, nobs = nobs)
}

# The variance settings of a database regression (as dd_spec_variance()):
# the type, the cluster name, and the cluster column read from the engine
# (NULL when the cluster is the unit).
dd_db_vcov_spec <- function(data, fun, idname, cluster, vcov) {
  if (inherits(cluster, "formula")) cluster <- all.vars(cluster)
  if (!is.null(cluster) && (!is.character(cluster) || anyNA(cluster)))
    dd_stop("`cluster` must be a column name (or a one-sided formula such as ~id); got %s.", dd_show(cluster))
  if (length(cluster) > 1L)
    dd_db_in_memory(data, sprintf("%s(cluster = %s) (two-way clustering)", fun, dd_show(cluster)))
  if (is.null(cluster) && (is.null(vcov) || identical(vcov, "cluster"))) cluster <- idname
  vtype <- dd_resolve_vcov(vcov, cluster, "cluster")
  if (vtype != "cluster") cluster <- NULL
  list(type = vtype, cluster = cluster, column = if (identical(cluster, idname)) NULL else cluster)
}

# the options of a database regression that need the data in memory
dd_db_reg_unsupported <- function(data, fun, xformla, weightsname, fe, survey, nboot, vcov) {
  off <- list(xformla = xformla, weightsname = weightsname, fe = fe, survey = survey,
              nboot = if (!identical(as.numeric(nboot), 0)) nboot,
              vcov = if (!is.null(vcov) && !vcov %in% c("iid", "hetero", "HC1", "HC0", "cluster")) vcov)
  off <- off[!vapply(off, is.null, logical(1))]
  if (length(off))
    dd_db_in_memory(data, sprintf("%s(%s = %s)", fun, names(off)[1],
                                  if (inherits(off[[1]], "survey.design")) "<a survey design>" else dd_show(off[[1]])))
  invisible(TRUE)
}

# the info of a database regression fit
dd_db_reg_info <- function(estimator, title, yname, vc, vtype, alpha, terms, N, T, idname, tname, r, data, rows,
                           notes = character()) {
  dd_info(estimator, title, yname, vc$nobs, vtype, vc$label, vc$df, alpha, terms,
          n_units = dd_db_count(N), n_periods = as.integer(T), n_clusters = vc$G, fe_names = c(idname, tname),
          dropped = character(), notes = notes,
          more = list(fe_sizes = c(dd_db_count(N), as.integer(T)), r2 = 1 - r$ssr / r$tss,
                      r2_within = 1 - r$ssr / r$tss_within, wild_boot = NULL, n_singletons = 0L, fe_iter = 0L,
                      cr2_path = NULL, residuals = NULL, fitted.values = NULL,
                      db = list(class = class(data)[1], rows = rows)))
}
