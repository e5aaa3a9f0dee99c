#' Duration difference in differences (Deaner and Ku) for an absorbing binary outcome
#'
#' The duration DiD of Deaner and Ku (2026, arXiv:2405.05220v2) for panels
#' whose outcome records that an individual has reached an absorbing state
#' (left unemployment, passed an exam): `Y_it = 1` from the period the state
#' is reached on. Parallel trends in mean outcomes generally fails for such
#' outcomes (means converge as the groups run out of individuals at risk);
#' the paper restricts the untreated hazards instead. One treated group,
#' treated from one common period (`gname`), is compared with the never
#' treated (`gname` 0, Inf or NA).
#'
#' With `S_kt` the share of group k (1 treated, 0 never treated) not yet
#' absorbed at period t and `R_kt = -log S_kt` (the integrated hazard, the
#' paper's Eq. 3.1), `D_kt = R_kt - R_k1` and `e_t` the time elapsed since
#' the first period (in the units of `tname`):
#'
#' * `method = "common_dynamics"` (Eqs. 2.3, 2.13, 3.2, 3.3): the untreated
#'   hazards differ by a constant `c`, estimated by
#'   `c = sum_t a_t (D_1t - D_0t) / e_t` over the fitting periods; the
#'   counterfactual `R0_1t = R_11 + D_0t + e_t c`.
#' * `method = "proportional_hazards"` (Eqs. 2.4, 2.15, 2.16): the untreated
#'   hazards have a constant ratio `c > 0`, estimated by the weighted mean of
#'   the per-period solutions of Eq. 2.15, `c = sum_t a_t D_1t / D_0t`
#'   (Eq. 3.5 as printed in the paper divides by the treated group's squared
#'   increments and converges to `1 / c`; the mean of ratios is the analogue
#'   of Eq. 3.2 and what the authors' own code computes); `R0_1t = R_11 + c
#'   D_0t`.
#'
#' The effect at each period after treatment is `ATT(t) = exp(-R0_1t) -
#' S_1t` (Eq. 3.4): the counterfactual minus the observed survival of the
#' treated, that is the mean of `Y_t - Y0_t` among the treated (positive: faster
#' absorption).
#' `ATT` is the mean over the post-treatment periods.
#'
#' Default fitting periods are every period after the first up to the last
#' one before treatment, with equal weights `a_t` (the paper's choice in its
#' simulations). `fit$pretest` holds the paper's specification contrasts
#' (Section 3.2, Appendix B Algorithm 2) at the interior pre-treatment
#' periods, anchored at the last one, with their standard errors and a joint
#' Wald test (needs three or more periods before treatment).
#'
#' Inference: every estimate is a smooth function of the group-period
#' survival shares, so its influence function is the delta method's, formed
#' per unit and passed to the shared influence-function layer (analytic
#' standard errors `sqrt(sum(psi^2)) / n`, clusters, the multiplier
#' bootstrap and uniform bands). The paper uses a nonparametric bootstrap of
#' individuals (its Algorithm 1): it estimates the same asymptotic variance;
#' its studentised quantile bands are not reproduced.
#'
#' @section Checked against:
#' No R package implements the estimator. The tests compute the estimates by
#' hand from the paper's equations on a small data set (1e-10), compare the
#' influence functions with numerical derivatives of the estimator with
#' respect to unit weights, compare the analytic standard errors with a
#' bootstrap of individuals, and recover the known effects of
#' [dd_sim_duration()]. The worked example of diff-diff's DurationDiD
#' specification (10 + 10 individuals, 5 periods) is reproduced.
#'
#' @section Differences from diff-diff's DurationDiD:
#' The point estimates are the same (the proportional-hazards ratio as the
#' mean of ratios, as diff-diff). Deliberate differences: standard errors,
#' bands and the pretest come from the influence functions (analytic, or
#' their multiplier bootstrap) instead of a bootstrap of individuals with
#' studentised quantiles, and the pretest is a Wald test of the contrasts
#' rather than a sup-t band test; elapsed time is measured in the units of
#' `tname`, so periods need not be equally spaced (the common-dynamics `c`
#' is per unit of time; the effects do not depend on the scale); a
#' counterfactual curve with a negative implied hazard gives a note, not
#' missing effects; survival 0 where the estimator takes its log, or a
#' proportional-hazards ratio that is not positive, is an error.
#'
#' @param data A balanced panel, one row per unit and period.
#' @param yname The outcome: 0/1, absorbing (once 1, 1 in every later period
#'   of the unit).
#' @param idname,tname Unit and period (numeric; elapsed time `e_t` is measured
#'   in its units, so unequal spacing is allowed, the paper's Remark 3).
#' @param gname First treated period: one common period for every treated
#'   unit; 0, Inf or NA for the never treated (the comparison group).
#' @param method `"common_dynamics"` (default) or `"proportional_hazards"`.
#' @param fit_periods The periods whose identifying equations estimate `c`
#'   (periods after the first and before treatment); `NULL`: all of them.
#' @param fit_weights Non-negative weights of `fit_periods` (same length,
#'   positive sum; divided by their sum); `NULL`: equal weights.
#' @param weightsname Unit weights (constant within unit).
#' @param cluster A column to cluster on (units nested in clusters).
#' @param nboot,boot_weights,cband,alpha Multiplier bootstrap draws (0:
#'   analytic), weights, uniform band over the `ATT(t)`, significance level.
#' @param ... Not used (an error if given).
#' @return A fit of class `c("did_duration", "dd_fit")`: rows `ATT` and
#'   `ATT(t)` for each post-treatment period (`time`, `event`); `fit$survival`
#'   (per period: the survival shares of both groups, the counterfactual
#'   survival of the treated and their integrated hazards), `fit$c_hat`
#'   (estimate and standard error), `fit$pretest`, `fit$inf` (the influence
#'   functions, one row per unit in `fit$units`).
#' @inheritSection diffdiff-package Cohort coding
#' @references Deaner, B. and Ku, H. (2026). Causal duration analysis with
#'   diff-in-diff. arXiv:2405.05220v2.
#' @examples
#' set.seed(1)
#' d <- dd_sim_duration(n_units = 400, n_periods = 6, first_treat = 4, effect = 0.5)
#' fit <- did_duration(d, "y", "id", "time", "first_treat")
#' fit
#' attr(d, "true_att")
#' fit$pretest
#' did_duration(d, "y", "id", "time", "first_treat", method = "proportional_hazards")
#' @export
did_duration <- function(data, yname, idname, tname, gname, method = c("common_dynamics", "proportional_hazards"),
                         fit_periods = NULL, fit_weights = NULL, weightsname = NULL, cluster = NULL, nboot = 0,
                         boot_weights = c("rademacher", "mammen", "webb"), cband = FALSE, alpha = 0.05, ...) {
  call <- match.call()
  dd_required(c("data", "yname", "idname", "tname", "gname"))
  dots <- dd_unsupported_args(list(...), "did_duration", c(
    xformla = "covariate adjustment (the paper's balancing weights, Section 2.2) is not implemented.",
    survey = "survey designs are not implemented; use `weightsname` and `cluster`."))
  dd_did_aliases(dots, character(), "did_duration")
  sp <- dd_spec(alpha = alpha, nboot = nboot, boot_weights = boot_weights, cband = cband, cluster = cluster)
  dd_check_data(data)
  method <- dd_match_arg(method[1], c("common_dynamics", "proportional_hazards"), "method")
  dd_check_string(cluster, "cluster", null_ok = TRUE)
  if (!is.null(cluster) && identical(cluster, idname)) cluster <- NULL
  up <- dd_unit_panel(data, yname, idname, tname, gname, NULL, weightsname, cluster, NULL, sp$nboot,
                      layout = "id", complete = "did_duration()", need_never = "did_duration()")
  p <- up$panel; prep <- up$prep; cl <- up$cl
  rm(up)
  dd_duration_check_outcome(p, prep$Y, yname, idname)
  tl <- prep$tlist; G <- prep$unit_group
  if (length(prep$glist) != 1L)
    dd_stop("`gname` = \"%s\" has %d treated cohorts (%s); did_duration() compares one group treated from one common period with the never treated. Keep one cohort (and the never treated).",
            gname, length(prep$glist), paste(format(prep$glist), collapse = ", "))
  g <- prep$glist
  js <- max(which(tl < g))
  if (js < 2L)
    dd_stop("`gname` = \"%s\": the treated group is first treated in %s, leaving %d period(s) before treatment; did_duration() needs at least two (the paper's Theorem 1).",
            gname, format(g), js)
  fw <- dd_duration_fit_set(fit_periods, fit_weights, tl, js)
  trt <- G == g
  w <- prep$unit_weight / mean(prep$unit_weight)
  S <- dd_duration_survival(prep$Y, trt, w)
  eng <- dd_duration_engine(S, tl, js, fw$idx, fw$a, method, yname)
  # influence functions of the survival shares (units x 2T: treated, then
  # never treated), then of every estimate through the engine's gradients
  PsiS <- dd_duration_psi(prep$Y, trt, w, S)
  n <- nrow(prep$Y)
  post <- (js + 1L):length(tl)
  terms_t <- sprintf("ATT(%s)", format(tl[post], trim = TRUE))
  Ut <- PsiS %*% t(eng$J_att)
  lc <- dd_lincom(eng$att, NULL, matrix(1 / length(post), 1, length(post)), "ATT", ifs = Ut)
  est <- c(lc$estimate, stats::setNames(eng$att, terms_t))
  U <- cbind(lc$ifs, Ut)
  colnames(U) <- names(est)
  band <- seq_along(post) + 1L
  res <- dd_if_result(est, U, n, sp, band, "influence functions (delta method)", NULL, cluster = cl)
  tab <- res$tab
  tab$time <- c(NA, tl[post]); tab$event <- c(NA, tl[post] - g)
  V <- res$V; dimnames(V) <- list(names(est), names(est))
  uc <- drop(PsiS %*% eng$J_c)
  c_se <- sqrt(sum((if (is.null(cl)) uc else rowsum(uc, cl))^2)) / n
  pre <- dd_duration_pretest(eng, PsiS, n, cl, tl)
  notes <- c(prep$notes, eng$notes)
  title <- sprintf("Duration DiD (did_duration, %s)", sub("_", " ", method))
  info <- dd_info("did_duration", title, yname, nrow(prep$Y) * length(tl),
                  if (sp$nboot > 0L) "bootstrap" else "influence function", res$label, Inf, sp$alpha,
                  c("ATT", terms_t), n_units = n, n_periods = length(tl),
                  n_clusters = if (is.null(cl)) NULL else res$n_clusters, notes = notes,
                  more = list(crit = if (is.finite(res$crit)) res$crit else NULL,
                              nboot = sp$nboot, boot_weights = sp$boot_weights, cband = sp$cband))
  new_dd_fit("did_duration", tab, stats::setNames(tab$estimate, tab$term), V, info, call,
             list(inf = U, n = n, units = prep$units, unit_group = G, unit_weight = w, unit_cluster = cl,
                  periods = tl, tname = tname, cluster = cluster, method = method, first_treat = g,
                  last_pre = tl[js], fit_periods = tl[fw$idx], fit_weights = fw$a,
                  c_hat = c(estimate = eng$c_hat, std.error = c_se), survival = eng$survival,
                  pretest = pre, control_group = "nevertreated"))
}

# The outcome: 0/1 and absorbing. The units' rows of the wide panel Y
# (periods sorted) must not decrease; if one does, dd_first_treated() on the
# panel's rows finds the first period at 1 and the later 0 for the error,
# which names the unit and the periods.
dd_duration_check_outcome <- function(p, Y, yname, idname) {
  dd_check_binary(p$y, "yname", yname)
  if (ncol(Y) > 1L && !any(Y[, -1L, drop = FALSE] < Y[, -ncol(Y), drop = FALSE])) return(invisible(TRUE))
  ft <- dd_first_treated(p$y, p$idc, p$tt, attr(p$idc, "nlev"))
  if (ft$n_off) {
    r <- which(ft$off)[1]
    dd_stop("`yname` = \"%s\" must be absorbing (once 1, 1 in every later period): %s %s is 1 in period %s and 0 in period %s (%d unit(s) in all).",
            yname, idname, dd_show(p$id[r]), dd_show(ft$first[p$idc[r] + 1L]), dd_show(p$tt[r]), ft$n_off,
            .code = "OUTCOME_NOT_ABSORBING")
  }
  invisible(TRUE)
}

# The fitting periods (indices into tl, among 2..js) and their weights a
# (summing to 1)
dd_duration_fit_set <- function(fit_periods, fit_weights, tl, js) {
  elig <- tl[2:js]
  if (is.null(fit_periods)) idx <- 2:js
  else {
    if (!is.numeric(fit_periods) || !length(fit_periods) || anyNA(fit_periods) || anyDuplicated(fit_periods))
      dd_stop("`fit_periods` must be distinct periods; got %s.", dd_show(fit_periods))
    bad <- fit_periods[!fit_periods %in% elig]
    if (length(bad))
      dd_stop("`fit_periods` = %s: period %s is not a period after the first and before treatment (%s).",
              dd_show(fit_periods), format(bad[1]), paste(format(elig), collapse = ", "))
    idx <- sort(match(fit_periods, tl))
  }
  if (is.null(fit_weights)) a <- rep(1, length(idx))
  else {
    if (!is.numeric(fit_weights) || length(fit_weights) != length(idx) || anyNA(fit_weights) ||
        any(!is.finite(fit_weights)) || any(fit_weights < 0) || sum(fit_weights) <= 0)
      dd_stop("`fit_weights` must be %d non-negative finite numbers (one per fitting period) with a positive sum; got %s.",
              length(idx), dd_show(fit_weights))
    a <- if (is.null(fit_periods)) fit_weights else fit_weights[order(match(fit_periods, tl))]
  }
  list(idx = idx, a = a / sum(a))
}

# Survival shares (2 x T: treated, never treated): weighted means of 1 - Y
dd_duration_survival <- function(Y, trt, w) {
  rbind(treated = colSums(w[trt] * (1 - Y[trt, , drop = FALSE])) / sum(w[trt]),
        control = colSums(w[!trt] * (1 - Y[!trt, , drop = FALSE])) / sum(w[!trt]))
}

# Influence functions of the survival shares: unit i of group k, w_i (s_it -
# S_kt) / pi_k (pi_k: the group's weight share), 0 in the other group's
# columns; units x 2T (treated periods, then never-treated periods)
dd_duration_psi <- function(Y, trt, w, S) {
  n <- nrow(Y); T <- ncol(Y)
  P <- matrix(0, n, 2L * T)
  for (k in 1:2) {
    s <- if (k == 1L) trt else !trt
    pik <- sum(w[s]) / n
    P[s, (k - 1L) * T + seq_len(T)] <- w[s] * sweep(1 - Y[s, , drop = FALSE], 2, S[k, ]) / pik
  }
  P
}
