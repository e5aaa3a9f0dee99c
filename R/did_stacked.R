#' Stacked difference-in-differences with corrective weights
#'
#' Wing, Freedman and Hollingsworth (2024): one sub-experiment per adoption
#' cohort \eqn{a}, made of the cohort's units and its clean controls, each
#' observed over the event window \eqn{[a - \kappa_{pre}, a + \kappa_{post}]};
#' the sub-experiments are stacked and the event study
#' \deqn{Y = \alpha_0 + \alpha_1 D + \sum_{e \ne -1} [\lambda_e 1(e) + \delta_e D 1(e)] + u}
#' is fitted by weighted least squares with the corrective weights \eqn{Q}:
#' 1 for treated rows and \eqn{(N^D_{a,e}/N^D_e) / (N^C_{a,e}/N^C_e)} for the
#' control rows of sub-experiment \eqn{a} at event time \eqn{e} (counts of
#' stacked rows, as the authors' code; on balanced windows these are the
#' paper's unit counts). \eqn{\delta_e} estimates the trimmed aggregate
#' ATT at event time \eqn{e}; the overall ATT is the average of the
#' post-period \eqn{\delta_e} (\eqn{e \ge 0}), as the authors' example.
#'
#' Cohorts whose window does not fit in the observed periods, or that have
#' no clean control, are trimmed with a message. Clean controls
#' (`control_group`): `"not_yet_treated"` (default; first treated after
#' \eqn{a + \kappa_{post}}, or never), `"never_treated"`, or `"strict"`
#' (first treated after \eqn{a + \kappa_{post} + \kappa_{pre}}, or never).
#' Standard errors are clustered by unit (all copies of a unit in one
#' cluster) with fixest's small-sample adjustment, t tests with G - 1
#' degrees of freedom. Covariates (`xformla`) enter the regression linearly
#' (an extension: the paper has none); `weightsname` multiplies \eqn{Q}.
#'
#' @section Standard errors and their estimand:
#' \eqn{\delta_e} weights the sub-experiments by their REALISED treated
#' counts. The paper's specification pools all sub-experiments in one set of
#' event-time effects without sub-experiment effects, so treatment effects
#' that differ across cohorts, and calendar trends and levels that differ
#' across sub-experiments, stay in the residuals and enlarge the clustered
#' standard errors. The intervals are then conservative for the
#' realised-share effects, mainly when the effects differ (in effect they
#' target the population-share effects, like [did_gardner()]'s), and
#' nominal when the sub-experiments do not differ. In the Monte Carlo study
#' of the source repository the overall ATT covered the realised-share truth
#' in 96.8% of 2000 draws when both differed, 97.1% when only the effects
#' differed, 95.8% when only trends and levels differed and 95.1% when
#' neither did; see `vignette("coverage", package = "diffdiff")`.
#'
#' @section Entropy balancing:
#' With `balance = "entropy"` (covariate-balanced weighted stacked DiD,
#' Ustyuzhanin 2026, as diff-diff's `StackedDiD(balance = "entropy")`), the
#' clean controls of each sub-experiment \eqn{a} are reweighted so that their
#' means of `balance_covariates`, read at period \eqn{a - 1}, equal the
#' treated cohort's means. The weights \eqn{b} are entropy-balancing weights
#' (Hainmueller 2012): positive, summing to 1 within the sub-experiment, and
#' as close to uniform as balance allows (damped Newton on the convex dual
#' with standardised covariates, until the largest raw-scale difference of
#' means is below `balance_tol`; L-BFGS-B if Newton has not reached it after
#' `balance_maxit` steps). Where no halving of a Newton step decreases the
#' dual enough (after an overshoot that leaves a vanishing Hessian), the
#' step is a steepest-descent one: diff-diff's iteration moves by 2^-40 of
#' the Newton step there and can diverge on a feasible target. They replace \eqn{Q}: treated rows get weight 1
#' and the control rows of sub-experiment \eqn{a}, at every event time,
#' \eqn{(b / \tilde N_a) N^C_a Q_a = b (N^D_a / N^D) N^C / \tilde N_a}, with
#' \eqn{N^D_a} and \eqn{N^C_a} its treated and clean-control units and
#' \eqn{\tilde N_a = \sum b} (1 up to rounding), so that uniform \eqn{b}
#' gives \eqn{Q} and the estimates of `balance = "none"`, with or without
#' `xformla`. diff-diff's control weights are these divided by \eqn{N^C / K}
#' (\eqn{K} sub-experiments): without `xformla` the estimates are the same
#' (the regression is saturated in treatment and event time); with it,
#' that constant ratio of control to treated weight would move the pooled
#' covariate coefficients, so diffdiff keeps \eqn{Q}'s scale.
#' The weights are treated as fixed in the clustered variance (no term for
#' their estimation), as diff-diff does. Every treated and clean-control unit
#' must have one row at each period of its window (an error otherwise), and
#' finite covariates at \eqn{a - 1}. A target outside the controls' convex
#' hull cannot be balanced: an error names the cohort and the covariate
#' (cohorts are not dropped); a warning says when the weights concentrate on
#' few controls (effective sample size below 2 or 5% of the controls).
#' Not with `weightsname` or `survey`. The fit records `balance`,
#' `balance_covariates`, `balance_tol`, `balance_maxit`, the weights
#' (`balance_weights`: per cohort and unit, the design weight `b` and the
#' regression weight `weight`) and `balance_diagnostics` (per cohort: units,
#' effective control mass, effective sample size, the largest difference of
#' means before and after, Newton iterations and the solver). p-values and
#' intervals use G - 1 degrees of freedom (diff-diff's default: positive-weight
#' rows minus coefficients); the standard errors agree.
#'
#' @inheritParams did_bjs
#' @param kappa_pre,kappa_post Periods before (at least 1) and after (at
#'   least 0) adoption in each sub-experiment's window.
#' @param control_group Clean controls: `"not_yet_treated"`,
#'   `"never_treated"` or `"strict"`.
#' @param cluster Column to cluster by (default `idname`).
#' @param vcov `NULL` or `"cluster"` (CR1, default) or `"CR2"` (bias-reduced,
#'   with Satterthwaite degrees of freedom for each event time and the
#'   average; see [dd_vcov_types]), or Conley's spatial variance (`"conley"`
#'   with `coords` and `cutoff`, or a [dd_conley()]; the copies of a unit
#'   in several stacks are at one place, so correlated).
#' @param coords,cutoff With `vcov = "conley"`: the latitude and longitude
#'   columns and the cutoff in kilometres (see [dd_conley()]).
#' @param nboot Multiplier-bootstrap draws (0, the default: analytic
#'   standard errors). With `nboot > 0` the standard errors of the event-time
#'   estimates and of the ATT come from a multiplier bootstrap of the
#'   coefficients' influence functions (one multiplier per cluster; per
#'   observation without clusters), scaled so that the bootstrap variance
#'   converges to the analytic (CR1 / HC1) one; did's interquartile-range
#'   rule. With a `survey` design (Taylor linearisation), one multiplier per
#'   PSU on the PSU totals centred within strata (a unit's copies in several
#'   sub-experiments add up in its PSU's total; not with replicate weights).
#' @param boot_weights `"rademacher"` (default), `"mammen"` or `"webb"`.
#' @param cband With `nboot > 0`, a uniform (sup-t) band over the event-time
#'   estimates: columns `cband.low`, `cband.high`; its critical value is
#'   `fit$crit` and `fit$event_study$crit`.
#' @param balance `"none"` (default: the corrective weights \eqn{Q}) or
#'   `"entropy"` (entropy-balanced control weights; see "Entropy balancing").
#' @param balance_covariates With `balance = "entropy"`: the numeric columns
#'   whose treated means the controls are balanced to (a character vector or
#'   a one-sided formula of column names, such as `~ x1 + x2`); read at the
#'   period before each cohort's adoption. They do not enter the regression
#'   (that is `xformla`).
#' @param balance_tol,balance_maxit Entropy balancing stops when the largest
#'   absolute difference between the controls' weighted means and the
#'   treated means is below `balance_tol` (default `1e-8`, diff-diff's), or
#'   after `balance_maxit` Newton steps (default 200).
#' @return An object of class `c("did_stacked", "dd_fit")` with rows
#'   `event::e` (\eqn{e \ne -1}) and `ATT`; `cohorts` (kept and trimmed, with
#'   treated and control unit counts), `stacked_nobs` and `balance`; with
#'   `balance = "entropy"` also the balancing fields above.
#' @references Wing, C., Freedman, S. M. and Hollingsworth, A. (2024).
#'   Stacked difference-in-differences. NBER Working Paper 32054.
#'
#'   Hainmueller, J. (2012). Entropy balancing for causal effects: a
#'   multivariate reweighting method to produce balanced samples in
#'   observational studies. Political Analysis 20(1), 25-46.
#'
#'   Ustyuzhanin (2026): covariate-balanced weighted stacked DiD
#'   (CBWSDID), as cited and implemented by diff-diff's
#'   `StackedDiD(balance = "entropy")`.
#' @examples
#' d <- read.csv(system.file("extdata", "sim_panel.csv", package = "diffdiff"))
#' st <- did_stacked(d, yname = "y", idname = "id", tname = "year", gname = "first_treat",
#'                   kappa_pre = 3, kappa_post = 2)
#' st
#' st$cohorts
#' plot(st)
#' # controls balanced on the covariate x2 (constant within units) per cohort
#' eb <- did_stacked(d, yname = "y", idname = "id", tname = "year", gname = "first_treat",
#'                   kappa_pre = 3, kappa_post = 2, balance = "entropy", balance_covariates = "x2")
#' eb$balance_diagnostics
#' @inheritSection diffdiff-package Cohort coding
#' @export
did_stacked <- function(data, yname, idname, tname, gname, xformla = NULL, kappa_pre, kappa_post,
                        weightsname = NULL, control_group = c("not_yet_treated", "never_treated", "strict"),
                        cluster = NULL, vcov = NULL, alpha = 0.05, nboot = 0, boot_weights = c("rademacher", "mammen", "webb"),
                        cband = FALSE, fe_tol = 1e-8, fe_maxit = 10000, survey = NULL, coords = NULL, cutoff = NULL,
                        balance = c("none", "entropy"), balance_covariates = NULL, balance_tol = 1e-8,
                        balance_maxit = 200) {
  call <- match.call()
  dd_required(c("data", "yname", "idname", "tname", "gname"))
  sp <- dd_spec(alpha = alpha, nboot = nboot, boot_weights = boot_weights, cband = cband, fe_tol = fe_tol,
                fe_maxit = fe_maxit, drop_singletons = FALSE)
  alpha <- sp$alpha
  if (missing(kappa_pre)) dd_stop("`kappa_pre` (periods before adoption in each window) must be given.")
  if (missing(kappa_post)) dd_stop("`kappa_post` (periods after adoption in each window) must be given.")
  kpre <- dd_check_count(kappa_pre, "kappa_pre", min = 1)
  kpost <- dd_check_count(kappa_post, "kappa_post", min = 0)
  control_group <- dd_match_vocab(control_group[1], c("not_yet_treated", "never_treated", "strict"), "control_group")
  if (!is.null(vcov) && !identical(vcov, "cluster") && !identical(vcov, "CR2") && !identical(vcov, "conley") &&
      !inherits(vcov, "dd_conley"))
    dd_stop("`vcov` = %s: did_stacked() clusters its standard errors (\"cluster\", CR1, default), uses \"CR2\" or Conley's (\"conley\", dd_conley()).",
            dd_show(vcov))
  bal <- dd_stacked_balance_args(balance, balance_covariates, balance_tol, balance_maxit, weightsname, survey)
  sp <- dd_spec_variance(sp, data, idname, weightsname, cluster, vcov, survey, one_way = TRUE, coords = coords,
                         cutoff = cutoff, conley = TRUE)
  aux <- if (bal$balance == "entropy") stats::setNames(bal$covariates, rep("balance_covariates", length(bal$covariates)))
         else character()
  st <- dd_panel_timing(dd_panel(data, yname, idname, tname, c(gname = gname), xformla, weightsname, sp$cluster,
                                 NULL, sp$design, aux = aux), gname)
  p <- st; g <- st$g; tt <- st$tt
  fu <- dd_first_rows(st$idc)                     # one row per unit
  gu <- g[fu]; nu <- st$never[fu]
  tv <- as.double(tt[dd_first_rows(st$tc)])        # the period of each period code
  rng <- range(tv)
  cohorts <- sort(unique(gu[!nu]))
  # clean controls of cohort a: units first treated after the bound (or never)
  bound <- function(a) switch(control_group, not_yet_treated = a + kpost, strict = a + kpost + kpre, never_treated = Inf)
  fits <- cohorts - kpre >= rng[1] & cohorts + kpost <= rng[2]
  gs <- sort(gu[!nu])
  n_tr <- tabulate(match(gs, cohorts), length(cohorts))
  n_co <- sum(nu) + vapply(cohorts, function(a) length(gs) - findInterval(bound(a), gs), integer(1))
  keep <- fits & n_co > 0
  info_c <- data.frame(cohort = cohorts, treated_units = n_tr, control_units = n_co, kept = keep,
                       reason = ifelse(!fits, "window outside the data", ifelse(n_co == 0, "no clean control", "")))
  if (!any(keep))
    dd_stop(paste0("no cohort has its event window [a - %d, a + %d] inside the observed periods %s-%s with a clean ",
                   "control; cohorts are %s. Reduce `kappa_pre` = %d or `kappa_post` = %d."),
            kpre, kpost, format(rng[1]), format(rng[2]), dd_show(cohorts), kpre, kpost)
  if (any(!keep))
    message(sprintf("diffdiff: cohort(s) %s trimmed (%s).", paste(cohorts[!keep], collapse = ", "),
                    paste(unique(info_c$reason[!keep]), collapse = "; ")))
  # the stack (never materialised beyond row indices): rows of the prepared
  # data, sub-experiment, event time (as 0..nE-1), treated, weights (C)
  kc <- cohorts[keep]
  nE <- as.integer(kpre + kpost + 1)
  umask <- vapply(kc, function(a) nu | gu == a | gu > bound(a), logical(length(gu)))   # (gu of never-treated units is ignored)
  pmask <- vapply(kc, function(a) tv >= a - kpre & tv <= a + kpost, logical(length(tv)))
  sr <- .Call(C_stack_rows, st$idc, st$tc, matrix(umask, length(gu)), matrix(pmask, length(tv)), tv, as.double(kc),
              as.double(gu), nu, as.integer(kpre), nE)
  r <- sr$row; e0 <- sr$e0; D <- sr$D; Q <- sr$Q; cnt <- sr$cnt
  if (bal$balance == "entropy") {
    # entropy-balanced design weights replace Q (treated rows keep 1)
    sub <- rep.int(seq_along(kc), colSums(matrix(cnt, 2L * nE)))
    eb <- dd_stacked_balance(bal, st, r, sub, e0, D, matrix(umask, length(gu)), kc, kpre, nE, tv, gu, nu, idname)
    Q <- eb$W
  }
  rm(sr)
  # controls of a sub-experiment at an event time without its treated rows get Q = 0: dropped
  if (any(cnt[1L, ] > 0 & cnt[2L, ] == 0)) { pos <- Q > 0; r <- r[pos]; e0 <- e0[pos]; D <- D[pos]; Q <- Q[pos] }
  # rows per event time x sub-experiment; controls count where Q > 0 (treated rows present)
  nC <- matrix(cnt[1L, ], nE); nT <- matrix(cnt[2L, ], nE)
  present <- c(rowSums(nC > 0 & nT > 0) > 0, rowSums(nT > 0) > 0)
  for (grp in 0:1) if (!present[grp * nE + kpre])
    dd_stop("no %s observation at event time -1 (the reference) in any sub-experiment; the event study cannot be normalised.",
            if (grp == 1) "treated" else "control")
  evs <- setdiff(which(present[nE + seq_len(nE)] | present[seq_len(nE)]) - 1L, kpre - 1L) - kpre
  Xc <- if (is.null(p$X)) matrix(0, length(r), 0) else p$X[r, , drop = FALSE]
  w <- Q * (if (is.null(p$w)) 1 else p$w[r])
  # fixed-effect codes: D is 0/1 with both present; event times 0..nE-1 when all present
  attr(D, "nlev") <- 2L
  if (all(tabulate(e0 + 1L, nE) > 0)) {
    attr(e0, "nlev") <- nE                       # (values unchanged: e0 is its own code)
    fe <- list(treated = D, event = e0)
  } else fe <- list(treated = D, event = dd_codes(e0))
  # the treated x event-time indicators are constant within the treated x
  # event-time cells, each inside one level of both fixed effects
  cellf <- function(rows) {
    all <- length(rows) == length(D)
    Dr <- if (all) D else D[rows]; er <- if (all) e0 else e0[rows]
    idx <- dd_codes(Dr * nE + er)
    fr <- dd_first_rows(idx)
    M <- vapply(evs, function(h) as.double(Dr[fr] == 1L & er[fr] == h + kpre), numeric(length(fr)))
    M <- matrix(M, length(fr), dimnames = list(NULL, paste0("event::", evs)))
    list(idx = as.integer(idx), D = M, grp = Dr[fr], per = er[fr])
  }
  clusters <- if (length(p$cluster)) stats::setNames(list(st$cl[r]), names(p$cluster)) else list()
  vt <- if (sp$vcov_type %in% c("CR2", "conley")) sp$vcov_type else "cluster"
  est <- dd_estimate(p$y[r], Xc, fe, w, clusters, dd_spec_vcov(sp, vt), character(), conley = dd_conley_panel_rows(sp, data, p, r),
                     survey = if (is.null(st$design)) NULL else list(design = st$design, rows = p$rows[r], mult = Q),
                     cells = cellf, treated = D == 1L, control = st$never[r], wild_available = FALSE,
                     boot_key = list(st$id[r], st$tt[r]))
  est_ev <- evs[paste0("event::", evs) %in% est$tab$term]
  terms <- paste0("event::", est_ev)
  b <- est$reg$coef[est$reg$keep]
  postv <- terms[est_ev >= 0]
  if (!length(postv)) dd_stop("no post-treatment event time could be estimated.")
  S <- rbind(diag(length(b))[match(terms, names(b)), , drop = FALSE],
             ATT = as.double(names(b) %in% postv) / length(postv))
  out_terms <- c(terms, "ATT")
  lc <- dd_lincom(b, est$vc$V, S, out_terms)
  ag <- dd_reg_agg_table(est, lc, S, sp, band = seq_along(terms))
  tab <- ag$tab; V <- ag$V
  tab$event <- c(est_ev, NA)
  info <- dd_reg_info(est, "did_stacked", if (bal$balance == "entropy") "Stacked DiD with entropy-balanced corrective weights (did_stacked)"
                      else "Stacked DiD with corrective weights (did_stacked)", yname, alpha,
                      out_terms, p$cluster, c("treated", "event time"),
                      n_units = sum(rowSums(umask) > 0), n_periods = sum(rowSums(pmask) > 0))
  if (sp$nboot > 0L) { info$vcov_type <- "bootstrap"; info$vcov_label <- ag$label }
  if (identical(est$vc$type, "CR2")) info$df <- stats::setNames(dd_vc_df(est$vc, S), out_terms)
  new_dd_fit("did_stacked", tab, stats::setNames(tab$estimate, out_terms), V, info, call,
             c(list(event_study = dd_es_spec(reference = -1), cohorts = info_c, control_group = control_group, stacked_nobs = length(r), kappa = c(pre = kpre, post = kpost),
                  coef_full = dd_coef_table(b, sqrt(diag(est$vc$V)), est$vc$df, alpha), crit = ag$crit,
                  nboot = sp$nboot, boot_weights = sp$boot_weights, cband = sp$cband, balance = bal$balance),
               if (bal$balance == "entropy")
               list(balance_covariates = bal$covariates, balance_tol = bal$tol, balance_maxit = bal$maxit,
                    balance_weights = eb$weights, balance_diagnostics = eb$diagnostics)))
}
