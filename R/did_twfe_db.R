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
  off <- list(xformla = xformla, weightsname = weightsname, fe = fe, survey = survey,
              nboot = if (!identical(as.numeric(nboot), 0)) nboot,
              vcov = if (!is.null(vcov) && !vcov %in% c("iid", "hetero", "HC1", "HC0", "cluster")) vcov)
  off <- off[!vapply(off, is.null, logical(1))]
  if (length(off))
    dd_db_in_memory(data, sprintf("did_twfe(%s = %s)", names(off)[1],
                                  if (inherits(off[[1]], "survey.design")) "<a survey design>" else dd_show(off[[1]])))
  alpha <- dd_check_alpha(alpha)
  dd_check_string(idname, "idname")
  if (inherits(cluster, "formula")) cluster <- all.vars(cluster)
  if (!is.null(cluster) && (!is.character(cluster) || anyNA(cluster)))
    dd_stop("`cluster` must be a column name (or a one-sided formula such as ~id); got %s.", dd_show(cluster))
  if (length(cluster) > 1L)
    dd_db_in_memory(data, sprintf("did_twfe(cluster = %s) (two-way clustering)", dd_show(cluster)))
  if (is.null(cluster) && (is.null(vcov) || identical(vcov, "cluster"))) cluster <- idname
  vtype <- dd_resolve_vcov(vcov, cluster, "cluster")
  if (vtype != "cluster") cluster <- NULL
  ccol <- if (identical(cluster, idname)) NULL else cluster
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
  n <- mom$n; N <- dd_db_count(sum(n)); nobs <- dd_db_count(as.double(N) * T); T <- as.integer(T)
  if (all(D == 1)) dd_stop("`dname` = \"%s\" is 1 in every row: there is no untreated observation.", dname, .code = "ALWAYS_TREATED")
  if (all(D == 0)) dd_stop("`dname` = \"%s\" is 0 in every row: no unit is ever treated.", dname, .code = "NO_TREATED")
  r <- dd_twfe_moments_fit(D, n, mom$mean, mom$Q)
  if (!is.finite(r$A) || r$A <= 1e-12 * max(1, sum(n * rowSums(D^2))))
    dd_stop("`dname` = \"%s\" is collinear with the unit and time fixed effects (it varies only between units or only over time); the treatment effect is not identified.",
            dname)
  B <- 1 / r$A
  # the variance, as dd_vcov(): K counts the fixed effects, less the unit
  # effects when they are nested in the clusters
  nparams <- dd_db_count(as.double(N) + T)                # 1 + N + T - 1
  treated_paths <- rowSums(D) > 0; control_paths <- !treated_paths
  if (vtype == "iid") {
    K <- nparams; V <- B * r$ssr / (nobs - K); df <- nobs - K; G <- NULL; label <- "IID"
  } else if (vtype %in% c("hetero", "HC0")) {
    K <- nparams
    V <- B * r$meat_hc * B * (if (vtype == "hetero") nobs / (nobs - K) else 1)
    df <- nobs - K; G <- NULL
    label <- if (vtype == "hetero") "Heteroskedasticity-robust (HC1)" else "Heteroskedasticity-robust (HC0)"
  } else {
    if (is.null(ccol)) {
      G <- as.integer(N); meat <- r$meat_unit
      G1 <- sum(n[treated_paths]); G0 <- sum(n[control_paths])
    } else {
      cs <- mom$clusters
      cc <- dd_sorted_codes(cs$c); G <- attr(cc, "nlev")
      p <- match(cs$g, mom$g)
      s <- numeric(G)
      for (i in seq_along(p)) s[cc[i] + 1L] <- s[cc[i] + 1L] + cs$n[i] * r$c[p[i]] + sum(cs$s[i, ] * r$Xt[p[i], ])
      meat <- sum(s^2)
      G1 <- length(unique(cc[treated_paths[p]])); G0 <- length(unique(cc[control_paths[p]]))
    }
    dd_check_nclusters(G, cluster)
    K <- 1L + T                                           # the unit effects nested in the clusters
    V <- B * meat * B * (G / (G - 1)) * ((nobs - 1) / (nobs - K))
    df <- G - 1
    G <- stats::setNames(G, cluster)
    label <- sprintf("Clustered (%s)", cluster)
    dd_warn_few_clusters_counts(G1, G0, sprintf("`cluster` = \"%s\"", cluster), boot = TRUE)
  }
  V <- matrix(V, 1, 1, dimnames = list("ATT", "ATT"))
  tab <- dd_coef_table(stats::setNames(r$beta, "ATT"), sqrt(V[1, 1]), df, alpha)
  info <- dd_info("did_twfe", "Two-way fixed-effects DiD (did_twfe)", yname, nobs, vtype, label, df, alpha, "ATT",
                  n_units = N, n_periods = T, n_clusters = G, fe_names = c(idname, tname), dropped = character(),
                  notes = character(),
                  more = list(fe_sizes = c(N, T), r2 = 1 - r$ssr / r$tss, r2_within = 1 - r$ssr / r$tss_within,
                              wild_boot = NULL, n_singletons = 0L, fe_iter = 0L, cr2_path = NULL,
                              residuals = NULL, fitted.values = NULL,
                              db = list(class = class(data)[1], rows = chk$n_rows)))
  new_dd_fit("did_twfe", tab, stats::setNames(r$beta, "ATT"), V, info, call)
}

# The regression from the paths' moments (one regressor: the treatment
# paths D, paths x T): the demeaned regressor X~ (paths x T), b, A =
# sum n X~'X~, the unit-score constants c (X~_p' e_i = X~_p'(y_i - ybar_p)
# + c_p), the meats (clustered by unit, heteroskedasticity-robust), the
# residual and total sums of squares.
dd_twfe_moments_fit <- function(D, n, ybar, Q) {
  N <- sum(n); T <- ncol(D); np <- nrow(D)
  Dt <- colSums(n * D) / N                                 # period means over units
  Xt <- D - rowMeans(D) - rep(Dt, each = np) + mean(Dt)
  yt <- colSums(n * ybar) / N                              # the mean outcome path
  dev <- ybar - rep(yt, each = np)                         # ybar_p - ybar_.
  A <- sum(n * rowSums(Xt^2))
  beta <- sum(n * rowSums(Xt * dev)) / A
  J <- diag(T) - 1 / T
  c <- numeric(np); ssr <- 0; tss_w <- 0; tss <- 0; meat_unit <- 0; meat_hc <- 0
  yall <- sum(n * rowMeans(ybar)) / N
  for (p in seq_len(np)) {
    x <- Xt[p, ]
    c[p] <- sum(x * dev[p, ]) - beta * sum(x^2)
    JQJ <- J %*% Q[, , p] %*% J
    jd <- drop(J %*% dev[p, ])
    rp <- jd - beta * x                                    # the path's mean residual
    ssr <- ssr + sum(diag(JQJ)) + n[p] * sum(rp^2)
    tss_w <- tss_w + sum(diag(JQJ)) + n[p] * sum(jd^2)
    tss <- tss + sum(diag(Q[, , p])) + n[p] * sum((ybar[p, ] - yall)^2)
    meat_unit <- meat_unit + n[p] * c[p]^2 + drop(x %*% Q[, , p] %*% x)
    meat_hc <- meat_hc + sum((diag(JQJ) + n[p] * rp^2) * x^2)
  }
  list(beta = beta, A = A, Xt = Xt, c = c, ssr = ssr, tss = tss, tss_within = tss_w, meat_unit = meat_unit,
       meat_hc = meat_hc)
}
