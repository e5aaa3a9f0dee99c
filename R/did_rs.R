#' Efficient estimation under random treatment timing (Roth and Sant'Anna)
#'
#' The estimator of Roth and Sant'Anna (2023) for staggered rollouts whose
#' timing is as good as random, as the staggered package computes it: a
#' target parameter (`estimand`) that is a linear combination of the cohorts'
#' mean outcomes, `theta0 = sum_k A_theta_k Ybar_k`, adjusted by its
#' pre-treatment counterpart `Xhat = sum_k A_0_k Ybar_k` (each cohort's
#' period before adoption, the difference-in-differences contrast):
#' `estimate = theta0 - beta Xhat`. The efficient `beta` (default, `beta =
#' NULL`) minimises the variance under random timing; `beta = 1` gives the
#' Callaway-Sant'Anna estimator with not-yet-treated comparisons
#' (`staggered_cs()`), and with `comparison = "last"` (only the last-treated
#' cohort compares) the Sun-Abraham estimator (`staggered_sa()`).
#'
#' Standard errors are design-based: `std.error` is the refined Neyman
#' standard error (conservative, less the part of the heterogeneity the
#' pre-treatment periods reveal), `se_neyman` the conservative one. With
#' `nperm > 0` a Fisher randomisation test permutes the cohorts across
#' units (`nperm` permutations drawn from R's random-number stream, so
#' reproducible under `set.seed()`), re-estimates `beta` per permutation and
#' reports the share of permutations whose |t| exceeds the observed one, with
#' either standard error (`p.value.fisher`, `p.value.fisher_neyman`).
#'
#' @section Estimands:
#' `"simple"`: the average of ATE(t, g) over cohorts and their treated periods
#' before the last cohort's adoption, weighted by cohort size; `"cohort"`:
#' cohort averages over their treated periods, weighted by cohort size;
#' `"calendar"`: period averages of the treated cohorts (cohort-size
#' weights), averaged over periods; `"eventstudy"`: the average ATE(g + e, g)
#' over the cohorts observed e periods after adoption, one row per
#' `event_time` (negative: placebos; `-1` is zero by construction, its
#' period being the contrast's). The never treated (or, without them, the
#' last-treated cohort) and the not-yet-treated cohorts compare. Units whose
#' `gname` is 0, NA, Inf or after the last period form the never-treated
#' cohort; cohorts treated in the first period are kept (as staggered()
#' does; its `staggered_cs()` and `staggered_sa()` drop them).
#'
#' @section Correspondence with staggered:
#' `did_rs(d, y, i, t, g, estimand, event_time, beta, comparison)` is
#' staggered 1.2.2's `staggered(df, i, t, g, y, estimand, eventTime, beta,
#' use_last_treated_only)` with `use_DiD_A0 = TRUE` (its default): the
#' tests find estimates, `se` and `se_neyman` equal to about 1e-15, the
#' event-study covariance (`return_full_vcv`) included. staggered's
#' spellings `eventTime`, `use_last_treated_only`, `compute_fisher` and
#' `num_fisher_permutations` are accepted. Differences: staggered's Fisher
#' test draws permutation s after `set.seed(s)` whatever the caller's seed
#' (did_rs draws from the caller's stream, so the p-values agree in
#' distribution; `rules = "staggered-1.2.2"` draws as staggered does, and
#' the p-values are then identical); with several event times staggered's permutations of the
#' second and later ones start from the previous one's last permutation
#' (did_rs's event times are tested independently); `beta = 0` and
#' cohorts without a period before adoption error in staggered (here: no
#' adjustment); periods need not be consecutive integers (each cohort's
#' contrast period is the last period before its adoption; staggered uses
#' the period `g - 1` and drops what is not a period). An event time that
#' some cohorts cannot reach within the periods (e.g. `e = -3` for a cohort
#' adopting in the second period) averages over the cohorts that reach it;
#' staggered keeps the others in the weights' denominator (so its weights
#' sum to less than one) and in the contrast.
#'
#' @param data A balanced panel (units missing periods or outcomes are
#'   dropped with a warning, as staggered does).
#' @param yname,idname,tname,gname Outcome, unit, period and first treated
#'   period columns.
#' @param estimand `"simple"` (default), `"cohort"`, `"calendar"` or
#'   `"eventstudy"`.
#' @param event_time Event time(s) for `estimand = "eventstudy"` (a vector
#'   gives one row each and their covariance).
#' @param beta `NULL` (default): the efficient plug-in; a number: fixed (1:
#'   Callaway-Sant'Anna or Sun-Abraham; 0: no adjustment, the simple
#'   difference in means).
#' @param comparison `"notyettreated"` (default): every cohort not yet
#'   treated compares; `"last"`: only the last-treated cohort.
#' @param nperm Permutations of the Fisher randomisation test (0: none).
#' @param alpha Significance level of the (normal) intervals.
#' @section Covariates, weights and clusters:
#' `did_rs()` has no `xformla`, `weightsname` or `cluster` (passing one is
#' an error saying why). The estimator of Roth and Sant'Anna, as the
#' staggered package, has no covariate adjustment: its efficiency comes from
#' the pre-treatment outcomes under random timing of adoption. Its
#' design-based variance treats each unit's adoption date as randomly
#' assigned and weights units equally; when dates were assigned to groups of
#' units (states), aggregate the data to those groups and estimate on them.
#' @param rules Peer rules ([dd_rules]): `"default"` (the Fisher test's
#'   permutations drawn from the caller's random-number stream) or
#'   `"staggered-1.2.2"` (permutation s drawn after `set.seed(s)` from the
#'   cohort labels in the caller's row order, as staggered 1.2.2, the
#'   caller's random-number state restored). Only the Fisher p-values
#'   (`nperm > 0`) differ.
#' @param ... staggered's spellings (`eventTime`, `use_last_treated_only`,
#'   `compute_fisher` (500 permutations), `num_fisher_permutations`,
#'   `use_DiD_A0 = TRUE`).
#' @return A fit of class `c("did_rs", "dd_fit")`: one row `ATT` (one
#'   `event::e` row per event time for the event study) with `se_neyman`
#'   and, with `nperm > 0`, the Fisher p-values and `nperm` (successful
#'   permutations); `fit$beta` the `beta` used per row; `vcov()` the refined
#'   covariance (staggered's `return_full_vcv`), `fit$vcov_neyman` the
#'   conservative one.
#' @references Roth, J. and Sant'Anna, P. H. C. (2023). Efficient estimation
#'   for staggered rollout designs. Journal of Political Economy
#'   Microeconomics 1(4).
#' @examples
#' set.seed(3)
#' n <- 600
#' g <- sample(c(3, 4, 5, 6, Inf), n, replace = TRUE)
#' d <- expand.grid(t = 1:6, id = 1:n)
#' d$g <- g[d$id]
#' d$y <- rnorm(n)[d$id] + 0.2 * d$t + ifelse(d$t >= d$g, 1 + 0.1 * (d$t - d$g), 0) + rnorm(nrow(d))
#' did_rs(d, "y", "id", "t", "g")
#' es <- did_rs(d, "y", "id", "t", "g", estimand = "eventstudy", event_time = -3:2)
#' es
#' plot(es)
#' did_rs(d, "y", "id", "t", "g", nperm = 199)
#' @export
did_rs <- function(data, yname, idname, tname, gname, estimand = c("simple", "cohort", "calendar", "eventstudy"),
                   event_time = 0, beta = NULL, comparison = c("notyettreated", "last"), nperm = 0, alpha = 0.05,
                   rules = "default", ...) {
  call <- match.call()
  dd_required(c("data", "yname", "idname", "tname", "gname"))
  dots <- dd_unsupported_args(list(...), "did_rs", dd_rs_unsupported)
  a <- dd_did_aliases(dots, c("eventTime", "use_last_treated_only", "compute_fisher", "num_fisher_permutations",
                                   "use_DiD_A0"), "did_rs")
  if (!is.null(a$eventTime)) event_time <- a$eventTime
  if (!is.null(a$use_last_treated_only) && dd_check_flag(a$use_last_treated_only, "use_last_treated_only"))
    comparison <- "last"
  if (!is.null(a$num_fisher_permutations)) nperm <- a$num_fisher_permutations
  if (!is.null(a$compute_fisher) && dd_check_flag(a$compute_fisher, "compute_fisher") && is.null(a$num_fisher_permutations) &&
      identical(nperm, 0)) nperm <- 500
  if (!is.null(a$use_DiD_A0) && !dd_check_flag(a$use_DiD_A0, "use_DiD_A0"))
    dd_stop("`use_DiD_A0` = FALSE (the full vector of pre-period contrasts) is not supported; did_rs() uses each cohort's period before adoption.")
  dd_check_data(data)
  estimand <- dd_match_arg(if (identical(estimand, eval(formals()$estimand))) "simple" else tolower(estimand[1]),
                           c("simple", "cohort", "calendar", "eventstudy"), "estimand")
  comparison <- dd_match_vocab(comparison[1], c("notyettreated", "last"), "comparison")
  alpha <- dd_check_alpha(alpha)
  nperm <- dd_check_count(nperm, "nperm")
  rl <- dd_rules(rules, "did_rs")
  if (!is.numeric(event_time) || !length(event_time) || anyNA(event_time) || any(event_time != round(event_time)))
    dd_stop("`event_time` = %s must be whole numbers.", dd_show(event_time))
  if (anyDuplicated(event_time)) dd_stop("`event_time` = %s has duplicates.", dd_show(event_time))
  if (length(event_time) > 1L && estimand != "eventstudy")
    dd_stop("`event_time` = %s has several values, which needs estimand = \"eventstudy\" (got \"%s\").",
            dd_show(event_time), estimand)
  if (!is.null(beta) && (!is.numeric(beta) || length(beta) != 1L || !is.finite(beta)))
    dd_stop("`beta` = %s must be NULL (the efficient plug-in) or one finite number.", dd_show(beta))
  p <- dd_panel(data, yname, idname, tname, c(gname = gname))
  pr <- dd_rs_prepare(p, idname, gname)
  rm(p)
  tl <- pr$tlist; gl <- pr$glist; N <- pr$N
  evs <- if (estimand == "eventstudy") as.double(event_time) else NA_real_
  A <- lapply(evs, function(e) dd_rs_A(estimand, e, gl, tl, N, comparison, tname))
  gmin <- vapply(A, function(a) dd_rs_gmin(a$theta, gl), numeric(1))
  m <- vapply(gmin, function(g) sum(tl < g), integer(1))
  # cohort means and covariances; every statistic is a quadratic form in them
  sm <- dd_rs_summ(pr$Y, pr$k, N)
  st <- lapply(seq_along(A), function(j) dd_rs_est(sm, N, A[[j]], gl, gmin[j], m[j], beta))
  est <- vapply(st, `[[`, numeric(1), "estimate")
  se <- vapply(st, `[[`, numeric(1), "se")
  sen <- vapply(st, `[[`, numeric(1), "se_neyman")
  bet <- vapply(st, `[[`, numeric(1), "beta")
  # covariance across event times (staggered's return_full_vcv)
  V <- if (length(A) == 1L) list(vcv = matrix(se^2, 1, 1), vcv_neyman = matrix(sen^2, 1, 1))
       else dd_rs_vcov(sm, N, A, bet, gl, gmin, m)
  terms <- if (estimand == "eventstudy") paste0("event::", format(evs, trim = TRUE)) else "ATT"
  extra <- data.frame(se_neyman = sen)
  if (estimand == "eventstudy") extra$event <- evs
  if (nperm > 0L) {
    # projections on every cohort's rows: a unit's contribution under any
    # assignment of cohorts
    pj <- lapply(A, function(a) list(th = pr$Y %*% t(a$theta), a0 = pr$Y %*% t(a$a0)))
    fp <- dd_rs_fisher(pr, pj, N, gl, gmin, m, beta, est, se, sen, nperm, rl$staggered_seeds)
    extra$p.value.fisher <- fp$p; extra$p.value.fisher_neyman <- fp$p_neyman; extra$nperm <- fp$ok
  }
  tab <- dd_if_table(terms, est, ifelse(se > 0, se, NA_real_), alpha, NA_real_, extra)
  dimnames(V$vcv) <- dimnames(V$vcv_neyman) <- list(terms, terms)
  title <- sprintf("Efficient estimator under random timing (did_rs), %s%s", estimand,
                   if (!is.null(beta)) sprintf(", beta = %s", format(beta)) else "")
  info <- dd_info("did_rs", title, yname, sum(N) * length(tl), "design", "Neyman, refined (design-based)", Inf, alpha,
                  terms, n_units = sum(N), n_periods = length(tl), notes = pr$notes, more = list(rules = rl$rule))
  new_dd_fit("did_rs", tab, stats::setNames(est, terms), V$vcv, info, call,
             list(vcov_neyman = V$vcv_neyman, beta = bet, estimand = estimand, comparison = comparison,
                  cohorts = data.frame(cohort = gl, n = tabulate(pr$k, length(gl))), tname = tname,
                  nperm = nperm,
                  event_study = if (estimand == "eventstudy")
                    dd_es_spec(reference = -1, base_period = "reference")))
}

# The balanced wide panel: units sorted by identifier (C-locale order), the
# cohort of each (never treated: Inf, the largest), the cohort list and
# sizes; units missing periods or outcomes are dropped with a warning and
# cohorts of a single unit are dropped (as staggered). `first_row`: each
# unit's first-period row in the caller's data (staggered's order of the
# cohort labels in its permutations).
dd_rs_prepare <- function(p, idname, gname) {
  tlev <- as.double(p$tt[dd_first_rows(p$tc)])
  tl <- sort(tlev)
  ef <- dd_first_rows(p$idc)
  ids <- p$id[ef]
  o <- order(ids, method = "radix")
  umap <- integer(length(ef)); umap[o] <- seq_along(o) - 1L
  wide <- .Call(C_panel_wide, p$idc, p$tc, umap, match(tlev, tl) - 1L, length(ef), length(tl), as.double(p$y),
                NULL, NULL)
  Y <- wide$Y
  G <- ifelse(p$never[ef], Inf, as.double(p$g[ef]))[o]
  frow <- rep(NA_integer_, length(ef))
  r1 <- which(p$tt == tl[1])
  frow[umap[p$idc[r1] + 1L] + 1L] <- p$rows[r1]
  miss <- rowSums(is.na(Y)) > 0
  notes <- character()
  if (any(miss)) {
    warning(sprintf("%d units are missing some periods or outcomes; they are dropped (as staggered does).", sum(miss)),
            call. = FALSE)
    Y <- Y[!miss, , drop = FALSE]; G <- G[!miss]; frow <- frow[!miss]; ids <- ids[o][!miss]
  } else ids <- ids[o]
  gl <- sort(unique(G))
  cnt <- tabulate(match(G, gl), length(gl))
  if (any(cnt == 1L)) {
    warning(sprintf("cohort(s) %s of `gname` = \"%s\" have a single unit and are dropped (as staggered does).",
                    paste(gl[cnt == 1L], collapse = ", "), gname), call. = FALSE)
    keep <- G %in% gl[cnt > 1L]
    Y <- Y[keep, , drop = FALSE]; G <- G[keep]; frow <- frow[keep]; ids <- ids[keep]
    gl <- gl[cnt > 1L]
  }
  if (length(gl) < 2L)
    dd_stop("`gname` = \"%s\" has %s after the checks; did_rs() compares cohorts treated at different times and needs at least two.",
            gname, if (length(gl)) sprintf("one cohort (%s)", format(gl)) else "no cohort")
  if (gl[1] > max(tl) || !any(gl <= max(tl)))
    dd_stop("no unit of `gname` = \"%s\" is treated within the periods.", gname)
  if (gl[length(gl)] <= max(tl) && !is.finite(gl[length(gl)])) stop("internal error; please report", call. = FALSE)
  if (is.finite(gl[length(gl)]))
    notes <- c(notes, sprintf("no never-treated units: cohort %s (the last treated) compares, periods from %s on are not used.",
                              format(gl[length(gl)]), format(gl[length(gl)])))
  list(Y = Y, k = match(G, gl), glist = gl, tlist = tl, N = tabulate(match(G, gl), length(gl)), units = ids,
       first_row = frow, notes = notes)
}

# ATE(t, g_k) as weights on the cohorts (staggered's w(t, k)): +1 on cohort
# k, minus the size shares of the comparison cohorts (treated after both
# g_k and t, or only the last cohort with comparison = "last").
dd_rs_w <- function(t, k, gl, N, comparison) {
  G <- length(gl)
  if (t >= gl[G]) dd_stop("ATE(%s, %s) is not identified: period %s is not before the last cohort's adoption (%s).",
                          format(t), format(gl[k]), format(t), format(gl[G]))
  C <- if (comparison == "last") gl > t & seq_len(G) == G else gl > max(gl[k], t)
  w <- -N * C / sum(N[C])
  w[k] <- w[k] + 1
  w
}

# The G x T matrices A_theta (the estimand) and A_0 (each cohort's contrast
# with its period before adoption) of staggered's create_A*_list().
dd_rs_A <- function(estimand, e, gl, tl, N, comparison, tname) {
  G <- length(gl); T <- length(tl)
  th <- matrix(0, G, T); a0 <- matrix(0, G, T)
  prev <- vapply(gl, function(g) { j <- which(tl < g); if (length(j)) max(j) else NA_integer_ }, integer(1))
  add0 <- function(k, v) if (!is.na(prev[k])) a0[, prev[k]] <<- a0[, prev[k]] + v
  if (estimand == "simple") {
    P <- which(outer(gl, tl, "<=") & outer(rep(1, G), tl < gl[G]), arr.ind = TRUE)
    if (!nrow(P)) dd_stop("no cohort is treated before the last cohort's adoption: the estimand is empty.")
    om <- N[P[, 1]] / sum(N[P[, 1]])
    for (r in seq_len(nrow(P))) {
      v <- om[r] * dd_rs_w(tl[P[r, 2]], P[r, 1], gl, N, comparison)
      th[, P[r, 2]] <- th[, P[r, 2]] + v
      add0(P[r, 1], v)
    }
  } else if (estimand == "cohort") {
    E <- which(gl < gl[G] & gl <= tl[T])
    if (!length(E)) dd_stop("no cohort is treated before the last cohort's adoption: the estimand is empty.")
    NE <- sum(N[E])
    for (k in E) {
      Tk <- which(tl >= gl[k] & tl < gl[G])
      s <- numeric(G)
      for (c0 in Tk) {
        v <- (N[k] / NE) * dd_rs_w(tl[c0], k, gl, N, comparison) / length(Tk)
        th[, c0] <- th[, c0] + v
        s <- s + v
      }
      add0(k, s)
    }
  } else if (estimand == "calendar") {
    Et <- which(tl >= gl[1] & tl < gl[G])
    if (!length(Et)) dd_stop("no period lies between the first cohort's adoption and the last cohort's: the estimand is empty.")
    for (c0 in Et) {
      R <- which(gl <= tl[c0])
      for (k in R) {
        v <- (1 / length(Et)) * (N[k] / sum(N[R])) * dd_rs_w(tl[c0], k, gl, N, comparison)
        th[, c0] <- th[, c0] + v
        add0(k, v)
      }
    }
  } else {
    # cohorts observed e periods from adoption, before the last cohort's
    # adoption (staggered also counts cohorts for which g + e is not a
    # period, e.g. before the first one, in the weights' denominator and in
    # the contrast)
    E <- which(pmax(gl + e, gl) < gl[G] & (gl + e) %in% tl)
    if (!length(E)) dd_stop("`event_time` = %s: no cohort is observed %s period(s) from adoption before the last cohort's adoption.",
                            format(e), format(e))
    NE <- sum(N[E])
    for (k in E) {
      c0 <- match(gl[k] + e, tl)
      v <- (N[k] / NE) * dd_rs_w(gl[k] + e, k, gl, N, comparison)
      th[, c0] <- th[, c0] + v
      add0(k, v)
    }
  }
  list(theta = th, a0 = a0)
}

# The earliest cohort the estimand involves (staggered's gMin): the first
# cohort with a nonzero row of A_theta.
dd_rs_gmin <- function(th, gl) {
  k <- which(apply(th != 0, 1, any))
  if (length(k)) gl[min(k)] else gl[1]
}


# Cohort means (G x T) and covariances (T x T each, divisor N_k - 1).
dd_rs_summ <- function(Y, k, N) {
  Ybar <- .Call(C_cell_sums, Y, NULL, k - 1L, length(N)) / N
  S <- lapply(seq_along(N), function(j) {
    Ys <- Y[k == j, , drop = FALSE]
    (crossprod(Ys) - N[j] * tcrossprod(Ybar[j, ])) / (N[j] - 1)
  })
  list(Ybar = Ybar, S = S)
}

# Estimate, beta and both standard errors from the cohort summaries.
dd_rs_est <- function(sm, N, A, gl, gmin, m, beta) {
  th <- A$theta; a0 <- A$a0
  q <- function(a, b) sum(vapply(seq_along(N), function(k) sum(a[k, ] * (sm$S[[k]] %*% b[k, ])) / N[k], numeric(1)))
  Xvar <- q(a0, a0); Xth <- q(a0, th); Vth <- q(th, th)
  b <- if (is.null(beta)) { if (Xvar^2 > .Machine$double.xmin) Xvar * Xth / Xvar^2 else 0 } else beta
  est <- sum(th * sm$Ybar) - b * sum(a0 * sm$Ybar)
  sen <- sqrt(max(Vth + b^2 * Xvar - 2 * b * Xth, 0))
  adj <- dd_rs_refine(sm, N, list(th), gl, gmin, m)
  list(estimate = est, se = if (is.null(adj)) sen else sqrt(max(sen^2 - adj[1, 1], 0)), se_neyman = sen, beta = b)
}

# The same for one assignment of cohorts to units in the permutation test
# (k: cohort index per unit; N: cohort sizes, fixed under permutation),
# from the units' outcomes projected on every cohort's rows of A_theta and
# A_0 (pj$th, pj$a0: units x cohorts): the cohort moments in C (rs.c), one
# pass over the units per permutation.
dd_rs_stats <- function(Y, k, pj, N, gl, gmin, m, beta, k0 = k - 1L) {
  r <- .Call(C_rs_perm, pj$th, pj$a0, k0, Y, as.integer(m))
  Xvar <- sum(r$v00 / N); Xth <- sum(r$v0t / N); Vth <- sum(r$vtt / N)
  b <- if (is.null(beta)) { if (Xvar^2 > .Machine$double.xmin) Xvar * Xth / Xvar^2 else 0 } else beta
  est <- sum(r$mt) - b * sum(r$m0)
  sen <- sqrt(max(Vth + b^2 * Xvar - 2 * b * Xth, 0))
  se <- sen
  if (m > 0L) {
    # the refinement from the permuted cohorts' first m periods
    K <- which(gl >= gmin)
    Bv <- numeric(m); Sbar <- matrix(0, m, m)
    for (kk in K) {
      Smm <- matrix(r$S[, , kk], m, m)
      Sbar <- Sbar + Smm / length(K)
      Bv <- Bv + dd_pinv(Smm) %*% r$c[, kk]
    }
    se <- sqrt(max(sen^2 - sum(Bv * (Sbar %*% Bv)) / length(k0), 0))
  }
  list(estimate = est, se = se, se_neyman = sen, beta = b)
}

# The refinement b' Sbar b / N of the Neyman variance (a matrix over the
# estimands' A_theta in `ths`), from the first m periods, before the
# earliest involved cohort's adoption; NULL when there is no such period.
dd_rs_refine <- function(sm, N, ths, gl, gmin, m) {
  if (m == 0L) return(NULL)                          # gMin is the first period or earlier
  K <- which(gl >= gmin)
  B <- matrix(0, m, length(ths)); Sbar <- matrix(0, m, m)
  im <- seq_len(m)
  for (k in K) {
    Sk <- sm$S[[k]]
    Smm <- Sk[im, im, drop = FALSE]
    Sbar <- Sbar + Smm / length(K)
    B <- B + dd_pinv(Smm) %*% (Sk[im, , drop = FALSE] %*% vapply(ths, function(a) a[k, ], numeric(ncol(Sk))))
  }
  crossprod(B, Sbar %*% B) / sum(N)
}

# The covariance of the estimates (one per event time): conservative,
# sum_k a_e,k S_k a_e',k' / N_k with a_e = A_theta(e) - beta_e A_0(e), and
# refined with the earliest gMin over the event times (staggered's
# return_full_vcv; negative variances: their block set to zero).
dd_rs_vcov <- function(sm, N, A, bet, gl, gmin, m) {
  E <- length(A); G <- length(N)
  Vn <- matrix(0, E, E)
  for (k in seq_len(G)) {
    Ak <- vapply(seq_len(E), function(j) A[[j]]$theta[k, ] - bet[j] * A[[j]]$a0[k, ], numeric(ncol(A[[1]]$theta)))
    Ak <- matrix(Ak, ncol = E)
    Vn <- Vn + crossprod(Ak, sm$S[[k]] %*% Ak) / N[k]
  }
  j0 <- which.min(gmin)
  adj <- dd_rs_refine(sm, N, lapply(A, `[[`, "theta"), gl, gmin[j0], m[j0])
  V <- if (is.null(adj)) Vn else Vn - adj
  neg <- which(diag(V) < 0)
  if (length(neg)) V[neg, neg] <- 0
  list(vcv = V, vcv_neyman = Vn)
}

# Fisher randomisation test: permutations of the cohort labels across
# units (drawn from R's stream), beta re-estimated per permutation (when
# efficient), the share of permutations with a larger |t| (strict, as
# staggered) for each standard error. Permutations that fail are left out.
# `compat` (rules = "staggered-1.2.2") draws permutation s after
# set.seed(s) from the labels in the caller's row order, as staggered 1.2.2
# does (the caller's random-number state is restored).
dd_rs_fisher <- function(pr, pj, N, gl, gmin, m, beta, est, se, sen, nperm, compat = FALSE) {
  n <- length(pr$k)
  base0 <- (if (compat) pr$k[order(pr$first_row)] else pr$k) - 1L
  if (compat) {
    had <- exists(".Random.seed", envir = globalenv(), inherits = FALSE)
    old <- if (had) get(".Random.seed", envir = globalenv(), inherits = FALSE)
    on.exit(if (had) assign(".Random.seed", old, envir = globalenv()) else rm(".Random.seed", envir = globalenv()))
  }
  E <- length(pj)
  # the permuted cohorts and C_rs_shuffle's scratch: buffers filled in place
  # by every permutation (so that the permutations allocate nothing large)
  k0 <- integer(n); work <- integer(n)
  # the permutations run in order (the draws do not depend on the batches)
  tt <- dd_progress_batches(nperm, function(b) {
    out <- matrix(NA_real_, length(b), 2L * E)
    for (i in seq_along(b)) {
      if (compat) set.seed(b[i])
      # the cohorts permuted in C with R's generator (as sample.int(n)),
      # 0-based, into k0
      .Call(C_rs_shuffle, base0, k0, work)
      for (j in seq_len(E)) {
        r <- tryCatch(dd_rs_stats(pr$Y, NULL, pj[[j]], N, gl, gmin[j], m[j], beta, k0 = k0),
                      error = function(e) NULL)
        if (!is.null(r)) out[i, c(j, E + j)] <- c(r$estimate / r$se, r$estimate / r$se_neyman)
      }
    }
    out
  }, "Fisher randomisation test", combine = dd_rbind_batches)
  tb <- tt[, seq_len(E), drop = FALSE]; tn <- tt[, E + seq_len(E), drop = FALSE]
  ok <- colSums(!is.na(tb))
  pv <- function(t0, tt) { p <- mean(abs(t0) < abs(tt), na.rm = TRUE); if (is.finite(p)) p else NA_real_ }
  list(p = vapply(seq_len(E), function(j) pv(est[j] / se[j], tb[, j]), numeric(1)),
       p_neyman = vapply(seq_len(E), function(j) pv(est[j] / sen[j], tn[, j]), numeric(1)),
       ok = as.integer(ok))
}

#' @export
vcov.did_rs <- function(object, ...) {
  dd_check_dots(list(...), "vcov()")
  object$vcov
}

# print() and summary(): after the table, the design and the comparisons
dd_footer.did_rs <- function(x) {
  NextMethod()
  cat(sprintf("beta: %s; comparisons: %s; cohorts: %d (%s units each)\n",
              if (length(unique(x$beta)) == 1L) format(signif(x$beta[1], 5)) else paste(format(signif(x$beta, 4)), collapse = ", "),
              if (x$comparison == "last") "the last-treated cohort" else "not-yet-treated cohorts",
              nrow(x$cohorts), paste(range(x$cohorts$n), collapse = "-")))
  tab <- x$coeftable
  if (x$nperm > 0L) {
    cat(sprintf("Fisher randomisation test (%d permutations; p: share with a larger |t|):\n", x$nperm))
    ft <- data.frame(`p (refined SE)` = tab$p.value.fisher, `p (Neyman SE)` = tab$p.value.fisher_neyman,
                     permutations = tab$nperm, check.names = FALSE, row.names = tab$term)
    print(ft, digits = 4)
  }
  invisible(x)
}

# why did_rs() takes no covariates, weights or clusters (its help page says
# the same)
dd_rs_unsupported <- c(
  xformla = "the efficient estimator of Roth and Sant'Anna (as the staggered package) has no covariate adjustment; its efficiency comes from the pre-treatment outcomes under random timing of adoption.",
  cluster = "its design-based variance treats each unit's adoption date as randomly assigned; when dates were assigned to groups of units (states), aggregate the data to those groups and estimate on them.",
  weightsname = "the estimator weights units equally, as the staggered package does: the random-timing design assigns dates to units, and sampling weights have no place in its design-based variance.")
