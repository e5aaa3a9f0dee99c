# Variance choices, small-sample corrections and the wild cluster bootstrap.
# Conventions are fixest's (version 0.14), stated on ?dd_vcov_types.

dd_vcov_choices <- c("iid", "hetero", "HC1", "HC0", "HC2", "HC3", "cluster", "CR2", "conley")

#' Variance estimators and small-sample corrections
#'
#' Every regression estimator (`did_2x2()`, `did_twfe()`, `did_event()`) takes
#' `vcov` and `cluster`. With `e` the residuals, `w` the weights, `X` the
#' regressors after absorbing the fixed effects, `B = (X'WX)^-1`, `n` the
#' observations used and `K` the number of estimated parameters:
#' \describe{
#'   \item{`"iid"`}{`B * sum(w e^2) / (n - K)`, K counting all fixed-effect
#'     coefficients. Equals fixest's `vcov = "iid"` (its default).}
#'   \item{`"hetero"` (alias `"HC1"`)}{`B (sum_i w_i^2 e_i^2 x_i x_i') B * n / (n - K)`.
#'     Equals fixest's `vcov = "hetero"`.}
#'   \item{`"HC0"`}{the same without the `n / (n - K)` factor (fixest's
#'     `"hetero"` with `ssc(K.adj = FALSE)`).}
#'   \item{`"HC2"`, `"HC3"`}{`B (sum_i w_i^2 e_i^2 x_i x_i' / (1 - h_i)^a) B`
#'     with `a = 1` (HC2) or `2` (HC3) and `h_i` the leverage of observation
#'     i in the model with its fixed effects as dummies (`w_i x_i'(X'WX)^-1
#'     x_i` plus the fixed effects' part); no further factor. Equals
#'     sandwich's `vcovHC(type = "HC2")` / `"HC3"` on `lm()` with the fixed
#'     effects as factors (and on a converged `glm()` for did_etwfe's
#'     Poisson and logit fits, through the working weights). Observations of leverage 1 are an error; the
#'     fixed effects other than the one with the most levels are limited to
#'     3,000 levels in all.}
#'   \item{`"cluster"`}{CR1: `B (sum_g s_g s_g') B * G/(G-1) * (n-1)/(n-K)` with
#'     `s_g` the score sum in cluster `g`. Two-way clustering adds the two
#'     one-way meats and subtracts the meat of their intersection, and uses
#'     `G = min(G1, G2)` in every term; a result that is not positive
#'     semi-definite is repaired by setting eigenvalues below 1e-16 to 1e-16
#'     (with a warning). `K` does not count fixed effects nested in a cluster
#'     variable: `K = rank + 1` when all are nested, otherwise all fixed-effect
#'     coefficients less `L_q - 1` for each nested dimension. This equals
#'     fixest's `vcov = ~cl` (or `~cl1 + cl2`) with its default `ssc()`
#'     (`K.adj = TRUE, K.fixef = "nonnested", G.adj = TRUE, G.df = "min",
#'     t.df = "min"`).}
#'   \item{`"CR2"`}{Bell and McCaffrey's bias-reduced cluster-robust
#'     variance as Pustejovsky and Tipton (2018) define it and clubSandwich
#'     (0.7.0) computes it for the model with its fixed effects as dummies
#'     (working model: independent errors of equal variance): each cluster's
#'     residuals are multiplied by `A_j = G_j^(-1/2)`, with `G_j` the
#'     cluster's block of `(I - H)(I - H)'` (`H` the hat matrix including the
#'     fixed effects; unweighted, `I - H_jj`; eigenvalues below 1e-12 count
#'     as zero), and `V = B (sum_j X_j' W_j A_j e_j e_j' A_j W_j X_j) B` with
#'     no further factor. Each coefficient, and each aggregate of them, is
#'     tested with its own Satterthwaite degrees of freedom (clubSandwich's
#'     `coef_test(test = "Satterthwaite")`). One-way clustering (by default
#'     the unit); fixed effects not nested in the clusters are limited to
#'     3,000 levels in all. Recommended with few clusters (say 8 to 40).}
#'   \item{`"conley"`}{Conley's spatial HAC, `n/(n-K) B M B` with `M` the
#'     scores' cross-products over the pairs within a distance cutoff (K
#'     counting all fixed-effect coefficients), as fixest's `conley()`;
#'     with `cluster`, pairs in a cluster get weight 1 too. See
#'     [dd_conley()] (distances, kernels, the panel form).}
#' }
#' Tests and intervals use the t distribution with `n - K` degrees of freedom,
#' or `G - 1` (smallest G) when clustered, as fixest does (CR2: Satterthwaite).
#' @references Pustejovsky, J. E. and Tipton, E. (2018). Small-sample
#'   methods for cluster-robust variance estimation and hypothesis testing in
#'   fixed effects models. Journal of Business and Economic Statistics 36(4).
#' @name dd_vcov_types
NULL

dd_resolve_vcov <- function(vcov, cluster, default) {
  if (is.null(vcov)) return(if (!is.null(cluster)) "cluster" else default)
  if (inherits(vcov, "dd_conley")) vcov <- "conley"
  v <- dd_match_arg(vcov, dd_vcov_choices, "vcov")
  if (v == "HC1") v <- "hetero"
  if (v %in% c("cluster", "CR2") && is.null(cluster))
    dd_stop("`vcov` = \"%s\" needs `cluster`, the column(s) to cluster by.", v)
  if (v == "CR2" && length(cluster) > 1L)
    dd_stop("`vcov` = \"CR2\" supports one-way clustering; `cluster` = %s names %d columns.", dd_show(cluster),
            length(cluster))
  if (!v %in% c("cluster", "CR2", "conley") && !is.null(cluster))
    dd_stop("`vcov` = \"%s\" does not use `cluster` = %s; drop one of them.", v, dd_show(cluster))
  v
}

dd_meat <- function(reg, cl = NULL, G = NULL) {
  cs <- reg$cells   # cell-structured regressors (dd_regress(cells = )): after the dense ones
  .Call(C_cluster_meat, reg$Xd, reg$resid, reg$w, cl, if (is.null(G)) 0L else as.integer(G),
        if (is.null(cs)) NULL else cs$idx, if (is.null(cs)) NULL else cs$M)
}

# clusters: NULL or a named list of 1 or 2 dd_codes() vectors; conley: the
# rows' coordinates (dd_conley_rows()) for type "conley"
dd_vcov <- function(reg, type, clusters = NULL, conley = NULL) {
  if (type == "conley") return(dd_vcov_conley(reg, conley, clusters))
  n <- reg$n; B <- reg$bread; e <- reg$resid
  nparams <- reg$nparams
  if (type == "iid") {
    K <- nparams
    s2 <- sum((if (is.null(reg$w)) 1 else reg$w) * e^2) / (n - K)
    return(list(V = s2 * B, df = n - K, K = K, G = NULL, type = "iid", label = "IID"))
  }
  if (type %in% c("hetero", "HC0")) {
    K <- nparams
    V <- B %*% dd_meat(reg) %*% B
    if (type == "hetero") V <- V * n / (n - K)
    dimnames(V) <- dimnames(B)
    return(list(V = V, df = n - K, K = K, G = NULL, type = type,
                label = if (type == "hetero") "Heteroskedasticity-robust (HC1)" else "Heteroskedasticity-robust (HC0)"))
  }
  if (type %in% c("HC2", "HC3")) {
    # each squared residual divided by (1 - h) (HC2) or (1 - h)^2 (HC3), h
    # the leverage with the fixed effects as dummies (sandwich's vcovHC)
    h <- dd_hat_diag(reg)
    if (any(h > 1 - 1e-10))
      dd_stop("`vcov` = \"%s\": %d observation(s) have leverage 1 (they alone determine a coefficient or a fixed effect, e.g. fixed-effect singletons); their residuals say nothing about the variance. Use vcov = \"hetero\" (HC1), or drop them.",
              type, sum(h > 1 - 1e-10))
    r2 <- reg
    r2$resid <- reg$resid / (1 - h)^(if (type == "HC2") 0.5 else 1)
    V <- B %*% dd_meat(r2) %*% B
    dimnames(V) <- dimnames(B)
    return(list(V = V, df = n - nparams, K = nparams, G = NULL, type = type,
                label = sprintf("Heteroskedasticity-robust (%s)", type)))
  }
  if (type == "CR2") {
    # bias-reduced (CR2) with Satterthwaite degrees of freedom per
    # coefficient (cr2.R); `cr2` gives any contrast's degrees of freedom
    pr <- dd_cr2_prep(reg, clusters[[1]], names(clusters)[1])
    df <- dd_cr2_df(pr, diag(ncol(pr$V)))
    names(df) <- colnames(pr$V)
    return(list(V = pr$V, df = df, K = nparams, G = pr$J, type = "CR2", cr2 = pr,
                label = sprintf("CR2 bias-reduced, clustered (%s); Satterthwaite df", names(clusters)[1])))
  }
  # clustered
  codes <- clusters
  Gs <- vapply(codes, function(z) attr(z, "nlev"), integer(1))
  for (j in seq_along(Gs)) dd_check_nclusters(Gs[j], names(clusters)[j])
  M <- dd_meat(reg, codes[[1]], Gs[1])
  if (length(codes) == 2L) {
    inter <- dd_codes(as.double(codes[[1]]) * Gs[2] + codes[[2]])
    M <- M + dd_meat(reg, codes[[2]], Gs[2]) - dd_meat(reg, inter, attr(inter, "nlev"))
  }
  Gmin <- min(Gs)
  K <- nparams
  if (!is.null(reg$fe)) {
    nested <- vapply(reg$fe_codes, function(f)
      any(vapply(codes, function(cl) dd_nested(f, cl), logical(1))), logical(1))
    if (all(nested)) K <- reg$rank + 1L
    else if (any(nested)) K <- nparams - sum(reg$fe$nlev[nested] - 1L)
  }
  K <- max(K, reg$rank - reg$intercept + 1L)
  V <- B %*% M %*% B * (Gmin / (Gmin - 1)) * ((n - 1) / (n - K))
  V <- (V + t(V)) / 2
  dimnames(V) <- dimnames(B)
  if (length(codes) == 2L) {
    ev <- eigen(V, symmetric = TRUE)
    if (any(ev$values < 1e-16)) {
      V2 <- ev$vectors %*% diag(pmax(ev$values, 1e-16), nrow(V)) %*% t(ev$vectors)
      dimnames(V2) <- dimnames(V)
      if (max(abs(V2 - V)) > 1e-8)
        warning("the two-way clustered variance matrix was not positive semi-definite; negative eigenvalues were set to 1e-16.",
                call. = FALSE)
      V <- V2
    }
  }
  list(V = V, df = Gmin - 1, K = K, G = Gs, type = "cluster",
       label = sprintf("Clustered (%s)", paste(names(clusters), collapse = " & ")))
}

# coefficient table from estimates, their variance and t degrees of freedom
dd_coef_table <- function(est, se, df, alpha) {
  stat <- est / se
  crit <- stats::qt(1 - alpha / 2, df)
  p <- 2 * stats::pt(-abs(stat), df)
  if (is.null(names(est)) || length(se) != length(est) || length(p) != length(est))
    # data.frame()'s rules for a missing term column and recycling
    return(data.frame(term = names(est), estimate = unname(est), std.error = unname(se),
                      statistic = unname(stat), p.value = unname(p),
                      conf.low = unname(est - crit * se), conf.high = unname(est + crit * se),
                      stringsAsFactors = FALSE))
  dd_df(list(term = names(est), estimate = unname(est), std.error = unname(se),
             statistic = unname(stat), p.value = unname(p),
             conf.low = unname(est - crit * se), conf.high = unname(est + crit * se)))
}

# A data frame from a named list of columns of equal length, as data.frame()
# builds it (automatic row names, names kept as given), without its checks
# and deparsing (about 0.1 ms a call, in every fit and aggregation).
dd_df <- function(cols) {
  n <- if (length(cols)) length(cols[[1]]) else 0L
  structure(cols, class = "data.frame", row.names = .set_row_names(n))
}

dd_boot_types <- c(rademacher = 1L, mammen = 2L, webb = 3L)

# Wild cluster bootstrap, null imposed (WCR), for the kept coefficient `term`.
# cl: dd_codes() of the cluster (one-way) or NULL (each observation its own cluster).
# Returns the symmetric bootstrap p-value of H0: beta = h0 and the confidence
# interval by test inversion.
# obs_codes: without clusters, the multiplier index of each row (default:
# the row order).
# With few clusters a sizeable share of wild-bootstrap draws gives every
# cluster the same weight; such a draw reproduces the sample t statistic, so
# the bootstrap p-value cannot fall below that share (and the interval may be
# unbounded). Warn when the share reaches alpha / 2.
dd_warn_same_weight <- function(G, boot_weights, alpha) {
  pm <- (sqrt(5) + 1) / (2 * sqrt(5))
  p <- switch(boot_weights, rademacher = 2^(1 - G), mammen = pm^G + (1 - pm)^G, webb = 6^(1 - G))
  if (is.finite(p) && p >= alpha / 2)
    warning(sprintf(paste0("wild bootstrap with %d clusters and %s weights: %.1f%% of the draws give every cluster the same ",
                           "weight and reproduce the sample t statistic, so bootstrap p-values cannot fall below about that ",
                           "and the interval may be unbounded.%s"),
                    G, boot_weights, 100 * p,
                    if (boot_weights == "webb") "" else " Webb weights (boot_weights = \"webb\") have far fewer such draws."),
            call. = FALSE)
  invisible(p)
}

dd_wild <- function(reg, term, cl, nboot, boot_weights, alpha, h0 = 0, obs_codes = NULL) {
  j <- match(term, colnames(reg$Xd))
  Xd <- reg$Xd; w <- reg$w
  Xo <- Xd[, -j, drop = FALSE]
  if (ncol(Xo)) {
    rn <- sqrt(colSums((if (is.null(w)) 1 else w) * Xo^2))
    z <- .Call(C_ols, Xo, Xd[, j], w, rn, 0)$resid
    a <- .Call(C_ols, Xo, reg$yd, w, rn, 0)$resid
  } else {
    z <- Xd[, j]; a <- reg$yd
  }
  codes <- if (!is.null(cl)) cl else if (!is.null(obs_codes)) obs_codes else seq_len(reg$n) - 1L
  G <- if (is.null(cl)) reg$n else attr(codes, "nlev")
  fe <- reg$fe
  fe_codes <- NULL
  if (!is.null(fe)) {
    nested <- !is.null(cl) && all(vapply(reg$fe_codes, dd_nested, logical(1), cl = codes))
    if (!nested) fe_codes <- fe$codes
  }
  z <- as.double(z); a <- as.double(a); codes <- as.integer(codes)
  out <- dd_boot_batches(nboot, sprintf("wild bootstrap: %s", term), function(B, seed, first)
    .Call(C_wild_boot, z, a, Xd, reg$bread, w, codes, as.integer(G), fe_codes, if (is.null(fe)) NULL else fe$nlev,
          c(reg$opts$fe_tol, reg$opts$fe_maxit), B, dd_boot_types[[boot_weights]], seed, first))
  if (attr(out, "not_converged") > 0L)
    warning(sprintf("fixed-effect absorption did not converge in %d bootstrap replicate(s).",
                    attr(out, "not_converged")), call. = FALSE)
  wt <- if (is.null(w)) 1 else w
  zWz <- sum(wt * z^2)
  beta <- sum(wt * z * reg$yd) / zWz
  sg <- rowsum(wt * z * reg$resid, codes, reorder = FALSE)
  se0 <- sqrt(sum(sg^2)) / zWz          # cluster-robust se without ssc (it cancels)
  na <- out[, 1]; nz <- out[, 2]; Saa <- out[, 3]; Saz <- out[, 4]; Szz <- out[, 5]
  # Draws whose bootstrap residuals have no z-part (Szz = 0: every cluster
  # drawn the same weight, or z inside one cluster's span) reproduce the
  # sample t statistic at every null value r in exact arithmetic; rounding
  # leaves Szz ~ 1e-26 instead of 0, which made their t statistic erratic at
  # large |r|. Szz <= vmax^2 (z'Wz)^2 bounds it; below 1e-12 of that bound a
  # draw's Szz and Saz (|Saz| <= sqrt(Saa Szz)) are set to zero.
  vmax2 <- c(rademacher = 1, mammen = ((sqrt(5) + 1) / 2)^2, webb = 1.5)[[boot_weights]]
  deg <- Szz <= 1e-12 * vmax2 * zWz^2
  Szz[deg] <- 0; Saz[deg] <- 0
  pval <- function(r) {
    t0 <- abs(beta - r) / se0
    den <- sqrt(pmax(Saa - 2 * r * Saz + r^2 * Szz, 0))
    tb <- abs(na - r * nz) / den
    tb[den == 0] <- 0
    mean(tb >= t0 * (1 - 1e-12))
  }
  # the p-value as |r| -> Inf: a draw with Szz > 0 has a bounded t statistic
  # and stops exceeding; one with Szz = 0 exceeds when its slope
  # |nz| / sqrt(Saa) reaches the sample's 1 / se0. At or above alpha the
  # confidence set is unbounded (the test inverts to the whole line).
  p_inf <- mean(deg & Saa > 0 & abs(nz) * se0 >= sqrt(pmax(Saa, 0)) * (1 - 1e-9))
  unbounded <- p_inf >= alpha
  bound <- function(dir) {
    if (unbounded) return(dir * Inf)
    step <- se0 * max(1, stats::qnorm(1 - alpha / 2))
    inner <- beta; outer <- beta + dir * step
    k <- 0L
    while (pval(outer) >= alpha) {
      inner <- outer; step <- step * 2; outer <- beta + dir * step; k <- k + 1L
      if (k > 60L) return(dir * Inf)
    }
    for (i in 1:100) {
      mid <- (inner + outer) / 2
      if (pval(mid) >= alpha) inner <- mid else outer <- mid
      if (abs(outer - inner) <= 1e-9 * se0) break
    }
    (inner + outer) / 2
  }
  if (unbounded)
    warning(sprintf(paste0("`%s`: the wild bootstrap confidence interval is unbounded: %.1f%% of the %d draws (>= alpha = %g) ",
                           "reproduce the sample t statistic at every null value (typically every one of the %d clusters drawn ",
                           "the same %s weight), so no null value is rejected. Too few clusters for this interval; ",
                           "Webb weights (boot_weights = \"webb\") have fewer such draws."),
                    term, 100 * p_inf, length(na), alpha, G, boot_weights), call. = FALSE)
  list(term = term, p.value = pval(h0), conf.low = bound(-1), conf.high = bound(1),
       nboot = nboot, boot_weights = boot_weights, h0 = h0, G = G,
       t_star = (na - h0 * nz) / sqrt(pmax(Saa - 2 * h0 * Saz + h0^2 * Szz, 0)),
       t_stat = (beta - h0) / se0)
}

# Joint Wald test that the coefficients b (covariance V) are all zero:
# F = b' V^- b / q with (q, df) degrees of freedom (chi-squared when df = Inf).
dd_wald <- function(b, V, df = Inf) {
  q <- length(b)
  e <- eigen((V + t(V)) / 2, symmetric = TRUE)
  pos <- e$values > max(e$values) * 1e-12
  stat <- sum((crossprod(e$vectors[, pos, drop = FALSE], b))^2 / e$values[pos]) / sum(pos)
  q <- sum(pos)
  p <- if (is.finite(df)) stats::pf(stat, q, df, lower.tail = FALSE) else stats::pchisq(stat * q, q, lower.tail = FALSE)
  data.frame(statistic = stat, df1 = q, df2 = df, p.value = p)
}
