#' Synthetic difference-in-differences
#'
#' The synthetic DiD estimator of Arkhangelsky, Athey, Hirshberg, Imbens and
#' Wager (2021), equal to synthdid 0.0.9 (`synthdid_estimate()`,
#' `sc_estimate()`, `did_estimate()` and `vcov()`) to rounding, with its
#' options under diffdiff's names. Unit weights (omega) and time weights
#' (lambda) are solved by synthdid's Frank-Wolfe algorithm in C, with its
#' regularisation (`zeta_omega = (N1 T1)^(1/4) sigma`, `zeta_lambda = 1e-6
#' sigma`, sigma the standard deviation of the controls' first differences
#' before treatment), its stopping rule (`min_decrease = 1e-5 sigma`,
#' `max_iter = 10000`) and its sparsification (a first round of at most 100
#' iterations, weights below a quarter of the largest set to zero, then
#' re-solved). `method = "sc"` is synthetic control (no time weights, no
#' intercept, `zeta_omega = 1e-6 sigma`); `method = "did"` is the plain DiD
#' with uniform weights. Time-varying covariates (`xformla`) enter as
#' synthdid's `X`: their coefficients are fitted jointly with the weights.
#'
#' Standard errors follow synthdid's `vcov()`: `"placebo"` (controls
#' permuted, the last N1 of them placebo-treated, weights re-solved from the
#' fitted ones; needs more controls than treated units), `"bootstrap"` (units
#' resampled, redrawing samples without a treated or control unit) and
#' `"jackknife"` (fixed weights; needs two or more treated units and two
#' controls with weight); each reports `sqrt((B - 1) / B) sd` of the
#' replicates. The permutations and resamples are drawn from R's RNG exactly
#' as synthdid draws them, so under the same `set.seed()` the standard errors
#' equal synthdid's; the replications run in C in parallel and do not depend
#' on the thread count. Intervals are normal (`df = Inf`). Units are ordered
#' as synthdid's `panel.matrices()` orders them (controls, then treated, each
#' by identifier as text), which the placebo permutations index. Deliberate
#' difference: replications use the fit's `sparsify` settings (synthdid's
#' `vcov()` always uses its defaults; the two agree at the defaults).
#'
#' Staggered adoption (`staggered = TRUE`; synthdid has no such path): each
#' adoption cohort is estimated by SDiD against the never-treated units over
#' all periods, and the overall effect averages the cohorts with weights
#' proportional to their treated cells (units x post-periods), as in Clarke,
#' Pailanir, Athey and Imbens (2023). Bootstrap replications resample units
#' jointly for all cohorts; placebo replications permute the controls and
#' give the last ones the treated cohorts' sizes and adoption periods; the
#' jackknife leaves out one unit at a time with fixed weights.
#'
#' @section Standard errors and their estimand:
#' All three variance estimators target the ATT of the treated units over
#' the post-treatment periods. Placebo standard errors are computed from the
#' controls alone and assume the treated units' errors behave like theirs;
#' the jackknife and the bootstrap resample units with the weights (jackknife)
#' or the fit (bootstrap) of the sample. When the treated units sit at the
#' edge of the controls' factor loadings (or beyond), no weighting of the
#' controls reproduces their untreated path, the estimate carries factor
#' noise that the controls do not show, and all three intervals undercover,
#' as synthdid's do (Monte Carlo evidence in
#' `vignette("coverage", package = "diffdiff")`).
#'
#' @param data A long balanced panel (data.frame, data.table or tibble);
#'   never modified.
#' @param yname,idname,tname Outcome, unit and period columns; periods must be numeric
#'   (ordered by value, as in every estimator).
#' @param dname A 0/1 treatment indicator (1 from the adoption period on).
#' @param method `"sdid"` (default), `"sc"` or `"did"`.
#' @param se `"placebo"` (default), `"bootstrap"`, `"jackknife"` or `"none"`.
#'   The replications (and, with covariates, the jackknife's refits) run on
#'   the workers of the caller's [future::plan()] when one other than
#'   sequential is set, with the same numbers: the resamples are drawn in
#'   this session before they are shipped.
#' @param nboot Replications for placebo and bootstrap (default 200, as
#'   synthdid).
#' @param xformla Optional one-sided formula of time-varying covariates.
#' @param staggered Allow different adoption periods (cohort-by-cohort SDiD).
#' @param zeta_omega,zeta_lambda Regularisation; `NULL` for synthdid's
#'   defaults.
#' @param omega_intercept,lambda_intercept Intercepts in the weight problems.
#' @param min_decrease,max_iter Stopping rule (`NULL`: `1e-5` sigma).
#' @param sparsify Sparsify the weights after a first round.
#' @param max_iter_pre_sparsify Iterations of the first round (100).
#' @param noise_level sigma; `NULL` for synthdid's default.
#' @param alpha Significance level for intervals.
#' @param ... Not used; `cluster` and `weightsname` (arguments of the other
#'   estimators) are errors saying why (see the section on weights and
#'   clusters).
#' @section Weights and clusters:
#' `did_sdid()` has no `cluster` and no `weightsname`. Its placebo,
#' bootstrap and jackknife variances resample units, as synthdid's do;
#' clustered resampling is not implemented, so treatment assigned by
#' clusters is not reflected in its standard error. Its unit and time
#' weights are solved for by the estimator, and sampling weights have no
#' defined role in them. Covariates enter through `xformla` (synthdid's
#' residualisation).
#' @return An object of class `c("did_sdid", "dd_fit")`: the coefficient table
#'   (`"ATT"`; with `staggered = TRUE` also one row per cohort), the weights
#'   (`omega`, `lambda`, see [sdid_weights()]), the replicate estimates and
#'   the outcome matrix for plots.
#' @references Arkhangelsky, D., Athey, S., Hirshberg, D. A., Imbens, G. W.
#'   and Wager, S. (2021). Synthetic difference-in-differences. American
#'   Economic Review 111(12). Clarke, D., Pailanir, D., Athey, S. and Imbens,
#'   G. (2023). Synthetic difference-in-differences estimation. IZA DP 15907.
#' @examples
#' d <- read.csv(system.file("extdata", "california_prop99.csv", package = "diffdiff"), sep = ";")
#' set.seed(12345)
#' fit <- did_sdid(d, "PacksPerCapita", "State", "Year", "treated", nboot = 50)
#' fit
#' head(sdid_weights(fit)$omega)
#' plot(fit)
#' @export
did_sdid <- function(data, yname, idname, tname, dname, method = c("sdid", "sc", "did"),
                     se = c("placebo", "bootstrap", "jackknife", "none"), nboot = 200,
                     xformla = NULL, staggered = FALSE, zeta_omega = NULL, zeta_lambda = NULL,
                     omega_intercept = TRUE, lambda_intercept = TRUE, min_decrease = NULL,
                     max_iter = 10000, sparsify = TRUE, max_iter_pre_sparsify = 100,
                     noise_level = NULL, alpha = 0.05, ...) {
  call <- match.call()
  dd_check_dots(dd_unsupported_args(list(...), "did_sdid", dd_sdid_unsupported), "did_sdid()")
  dd_required(c("data", "yname", "idname", "tname", "dname"))
  dd_check_data(data)
  method <- dd_match_arg(method[1], c("sdid", "sc", "did"), "method")
  se <- dd_match_arg(se[1], c("placebo", "bootstrap", "jackknife", "none"), "se")
  sp <- dd_spec(alpha = alpha, nboot = nboot, nboot_min = if (se %in% c("placebo", "bootstrap")) 2 else 0)
  nboot <- sp$nboot
  staggered <- dd_check_flag(staggered, "staggered")
  omega_intercept <- dd_check_flag(omega_intercept, "omega_intercept")
  lambda_intercept <- dd_check_flag(lambda_intercept, "lambda_intercept")
  sparsify <- dd_check_flag(sparsify, "sparsify")
  max_iter <- dd_check_count(max_iter, "max_iter", min = 1)
  max_iter_pre_sparsify <- dd_check_count(max_iter_pre_sparsify, "max_iter_pre_sparsify", min = 1)
  alpha <- sp$alpha
  for (a in c("zeta_omega", "zeta_lambda", "min_decrease", "noise_level")) {
    v <- get(a)
    if (!is.null(v) && (!is.numeric(v) || length(v) != 1L || is.na(v) || v < 0))
      dd_stop("`%s` must be NULL or a number >= 0; got %s.", a, dd_show(v))
  }
  pan <- dd_sdid_matrices(dd_panel(data, yname, idname, tname, c(dname = dname), xformla,
                                   complete = "synthetic DiD"), dname, staggered)
  settings <- list(method = method, zeta_omega = zeta_omega, zeta_lambda = zeta_lambda,
                   omega_intercept = omega_intercept, lambda_intercept = lambda_intercept,
                   min_decrease = min_decrease, max_iter = max_iter, sparsify = sparsify,
                   max_iter_pre = max_iter_pre_sparsify, noise_level = noise_level)
  if (length(pan$cohorts) == 1L) {
    fit <- dd_sdid_block(pan$Y, pan$N0, pan$T0, pan$X, settings)
    rep <- dd_sdid_se(fit, se, nboot)
    terms <- "ATT"; est <- fit$estimate; ses <- rep$se
    V <- matrix(ses^2, 1, 1)
    extra_tab <- NULL
    weights <- list(omega = stats::setNames(fit$omega, rownames(pan$Y)[seq_len(pan$N0)]),
                    lambda = stats::setNames(fit$lambda, colnames(pan$Y)[seq_len(pan$T0)]))
    parts <- list(fit)
  } else {
    st <- dd_sdid_staggered(pan, settings, se, nboot)
    terms <- c(paste0("cohort::", pan$cohorts), "ATT")
    est <- st$estimate; ses <- st$se; V <- st$vcov
    extra_tab <- data.frame(group = c(pan$cohorts, NA))
    weights <- lapply(st$fits, function(f) list(omega = f$omega, lambda = f$lambda))
    names(weights) <- pan$cohorts
    parts <- st$fits
    rep <- st$rep
  }
  tab <- dd_if_table(terms, est, ses, alpha, NA_real_, extra_tab)
  dimnames(V) <- list(terms, terms)
  info <- dd_info("did_sdid", sprintf("Synthetic DiD (did_sdid, method = \"%s\")", method), yname, length(pan$Y),
                  se, switch(se, none = "none",
                             placebo = sprintf("placebo (%d replications)", nboot),
                             bootstrap = sprintf("bootstrap (%d replications)", nboot),
                             jackknife = "jackknife (fixed weights)"),
                  Inf, alpha, terms, n_units = nrow(pan$Y), n_periods = ncol(pan$Y), notes = pan$notes)
  extra <- list(method = method, se_method = se, nboot = nboot, tname = tname, Y = pan$Y, X = pan$X, N0 = pan$N0,
                T0 = pan$T0, cohorts = pan$cohorts, cohort_of = pan$cohort_of, weights = weights,
                fits = parts, replicates = rep$estimates, settings = settings,
                omega = if (length(pan$cohorts) == 1L) weights$omega else NULL,
                lambda = if (length(pan$cohorts) == 1L) weights$lambda else NULL)
  new_dd_fit("did_sdid", tab, stats::setNames(est, terms), V, info, call, extra)
}

# The panel object (dd_panel: complete and balanced) -> the matrices
# synthdid uses: Y (N x T), controls first then treated (each by identifier
# as text, as panel.matrices()), periods sorted; X (N x T x C) for
# covariates; adoption cohorts.
dd_sdid_matrices <- function(pan, dname, staggered) {
  d <- dd_check_numeric_col(pan$vals$dname, "dname", dname)
  nb <- .Call(C_first_not01, d)
  if (nb > 0) dd_stop("`dname` = \"%s\" must be 0/1; row %d has %s.", dname, nb, format(d[nb]))
  N <- pan$n_units; T <- pan$n_periods
  ulev <- pan$id[dd_first_rows(pan$idc)]
  tlev <- sort(pan$tt[dd_first_rows(pan$tc)])
  # adoption: 0 ... 0 1 ... 1 within each unit
  ft <- dd_first_treated(d, pan$idc, pan$tt, N)
  dd_check_absorbing(ft, dname, pan$id, pan$tt, pan$idc, "synthetic DiD needs treatment to stay on once adopted.")
  first1 <- match(ft$first, tlev, nomatch = 0L)      # column of the first treated period (0: never)
  treated <- first1 > 0
  if (!any(treated)) dd_stop("`dname` = \"%s\" is never 1: there are no treated units.", dname, .code = "NO_TREATED")
  N0 <- sum(!treated)
  if (N0 == 0L) dd_stop("there are no control units (every unit is treated at some point); synthetic DiD needs never-treated controls.", .code = "NO_NEVER_TREATED")
  if (N0 == 1L) dd_stop("there is a single control unit (%s); synthetic DiD needs at least two controls.",
                        dd_show(ulev[!treated]))
  adopt <- sort(unique(first1[treated]))
  if (length(adopt) > 1L && !staggered)
    dd_stop("treatment is not a block design: units adopt in periods %s; use staggered = TRUE for cohort-by-cohort synthetic DiD.",
            paste(format(tlev[adopt]), collapse = ", "))
  if (adopt[1] == 1L)
    dd_stop("units are treated from the first period (%s): there are no pre-treatment periods.",
            format(tlev[1]))
  # synthdid's unit order: controls, then treated, each by identifier as text
  uo <- order(treated, as.character(ulev))
  umap <- integer(N); umap[uo] <- seq_len(N) - 1L
  Y <- dd_panel_wide(pan, pan$y, umap)
  dimnames(Y) <- list(as.character(ulev[uo]), as.character(tlev))
  Xa <- NULL
  if (!is.null(pan$X)) {
    Xa <- array(NA_real_, c(N, T, ncol(pan$X)), dimnames = list(NULL, NULL, colnames(pan$X)))
    for (k in seq_len(ncol(pan$X))) Xa[, , k] <- dd_panel_wide(pan, pan$X[, k], umap)
  }
  coh <- first1[uo]
  list(Y = Y, X = Xa, N0 = N0, T0 = adopt[1] - 1L, cohorts = tlev[adopt],
       cohort_T0 = adopt - 1L, cohort_of = ifelse(coh > 0, tlev[pmax(coh, 1L)], NA), notes = character())
}

# options vector for C (sdid.c: opts_get)
dd_sdid_opts <- function(s, noise, N1, T1, upd_l, upd_o) {
  eta_o <- if (s$method == "sc") 1e-6 else (N1 * T1)^(1 / 4)
  zo <- if (is.null(s$zeta_omega)) eta_o * noise else s$zeta_omega
  zl <- if (is.null(s$zeta_lambda)) 1e-6 * noise else s$zeta_lambda
  md <- if (is.null(s$min_decrease)) 1e-5 * noise else s$min_decrease
  o_int <- if (s$method == "sc") FALSE else s$omega_intercept
  c(zl, zo, md, s$max_iter, s$max_iter_pre, s$lambda_intercept, o_int, s$sparsify, upd_l, upd_o)
}

# One block-design fit: Y (controls first), N0, T0, X or NULL.
dd_sdid_block <- function(Y, N0, T0, X, s) {
  N1 <- nrow(Y) - N0; T1 <- ncol(Y) - T0
  noise <- if (is.null(s$noise_level)) .Call(C_sdid_noise, Y, as.integer(N0), as.integer(T0)) else s$noise_level
  if (s$method != "did" && !is.finite(noise))
    dd_stop("the noise level (sd of the controls' first differences before treatment) is undefined: %d pre-period(s); give `noise_level` or use at least two pre-periods.", T0, .code = "FEW_PRE_PERIODS")
  if (!is.finite(noise)) noise <- 0
  lambda0 <- switch(s$method, sdid = NULL, sc = rep(0, T0), did = rep(1 / T0, T0))
  omega0 <- if (s$method == "did") rep(1 / N0, N0) else NULL
  opts <- dd_sdid_opts(s, noise, N1, T1, upd_l = s$method == "sdid", upd_o = s$method != "did")
  r <- .Call(C_sdid_fit, Y, as.integer(N0), as.integer(T0), X, as.double(opts), lambda0, omega0)
  r$noise_level <- noise; r$opts <- opts; r$N0 <- N0; r$T0 <- T0
  r$zeta_omega <- opts[2]; r$zeta_lambda <- opts[1]
  r$Y <- Y; r$X <- X
  r
}

# synthdid's bootstrap resamples, drawn as its vcov() draws them: units with
# replacement, redrawn (not counted) when all are controls or all treated;
# each sorted
dd_sdid_boot_draws <- function(N, N0, nboot) {
  draws <- vector("list", nboot)
  b <- 0L
  while (b < nboot) {
    ind <- sample.int(N, N, replace = TRUE)
    if (all(ind <= N0) || all(ind > N0)) next
    b <- b + 1L
    draws[[b]] <- sort(ind)
  }
  draws
}

# synthdid's vcov(): replicate estimates and sqrt((B - 1) / B) sd
dd_sdid_se <- function(fit, se, nboot) {
  Y <- fit$Y; N <- nrow(Y); N0 <- fit$N0; N1 <- N - N0
  if (se == "none") return(list(se = NA_real_, estimates = NULL))
  if (se == "placebo") {
    if (N0 <= N1)
      dd_stop("se = \"placebo\" needs more control units than treated units (%d controls, %d treated); use se = \"bootstrap\" or \"jackknife\".",
              N0, N1)
    idx <- vapply(seq_len(nboot), function(b) sample.int(N0), integer(N0))
    idx <- matrix(idx, N0, nboot)
    est <- dd_progress_batches(nboot, function(b) .Call(C_sdid_reps, Y, as.integer(N0), as.integer(fit$T0), fit$X,
                                                        fit$opts, fit$lambda, fit$omega, 1L, idx[, b, drop = FALSE],
                                                        NULL, NULL),
                               "synthetic DiD placebo replications", distribute = TRUE)
  } else if (se == "bootstrap") {
    if (N1 < 2L)
      dd_stop("se = \"bootstrap\" needs at least two treated units (there is %d); use se = \"placebo\".", N1)
    idx <- matrix(unlist(dd_sdid_boot_draws(N, N0, nboot)), N, nboot)
    est <- dd_progress_batches(nboot, function(b) .Call(C_sdid_reps, Y, as.integer(N0), as.integer(fit$T0), fit$X,
                                                        fit$opts, fit$lambda, fit$omega, 2L, idx[, b, drop = FALSE],
                                                        NULL, NULL),
                               "synthetic DiD bootstrap replications", distribute = TRUE)
  } else {
    if (N1 < 2L || sum(fit$omega != 0) == 1L) {
      warning(sprintf("the jackknife standard error is undefined with %s; it is NA (use se = \"placebo\").",
                      if (N1 < 2L) "one treated unit" else "a single control with positive weight"), call. = FALSE)
      return(list(se = NA_real_, estimates = NULL))
    }
    est <- dd_sdid_jackknife(fit, N0)
    n <- length(est)
    return(list(se = sqrt(((n - 1) / n) * (n - 1) * stats::var(est)), estimates = est))
  }
  B <- length(est)
  list(se = sqrt((B - 1) / B) * stats::sd(est), estimates = est)
}

# The jackknife's leave-one-unit-out estimates (fixed weights). Without
# covariates they have closed forms (one call); with covariates each
# re-solves beta, in batches with progress.
dd_sdid_jackknife <- function(f, N0, what = "") {
  one <- function(units) .Call(C_sdid_reps, f$Y, as.integer(N0), as.integer(f$T0), f$X, f$opts,
                               unname(f$lambda), unname(f$omega), 3L, units, NULL, NULL)
  if (is.null(f$X)) return(one(NULL))
  dd_progress_batches(nrow(f$Y), function(b) one(as.integer(b)), paste0("synthetic DiD jackknife", what), distribute = TRUE)
}

# Staggered adoption: one SDiD per cohort against the never-treated units,
# averaged with weights N1_g T1_g; replications shared across cohorts.
dd_sdid_staggered <- function(pan, s, se, nboot) {
  Y <- pan$Y; N <- nrow(Y); T <- ncol(Y); N0 <- pan$N0
  G <- length(pan$cohorts)
  coh <- match(pan$cohort_of, pan$cohorts)            # NA for controls
  members <- lapply(seq_len(G), function(g) which(coh == g))
  n1 <- lengths(members); T1 <- T - pan$cohort_T0
  fits <- lapply(seq_len(G), function(g) {
    rows <- c(seq_len(N0), members[[g]])
    if (s$method != "did" && pan$cohort_T0[g] < 2L)
      dd_stop("cohort %s has %d pre-period(s); synthetic DiD needs at least two (or method = \"did\").",
              format(pan$cohorts[g]), pan$cohort_T0[g], .code = "FEW_PRE_PERIODS")
    f <- dd_sdid_block(Y[rows, , drop = FALSE], N0, pan$cohort_T0[g],
                       if (is.null(pan$X)) NULL else pan$X[rows, , , drop = FALSE], s)
    f$omega <- stats::setNames(f$omega, rownames(Y)[seq_len(N0)])
    f$lambda <- stats::setNames(f$lambda, colnames(Y)[seq_len(pan$cohort_T0[g])])
    f
  })
  tau <- vapply(fits, `[[`, numeric(1), "estimate")
  agg <- function(tau, n1) { w <- n1 * T1; ok <- !is.na(tau) & w > 0; sum(w[ok] * tau[ok]) / sum(w[ok]) }
  est <- c(tau, agg(tau, n1))
  # one cohort's replicate estimates from row lists (type 4 of C_sdid_reps)
  run <- function(g, rowlists, n0s) {
    B <- length(rowlists)
    lens <- lengths(rowlists)
    idx <- matrix(1L, max(lens), B)
    for (b in seq_len(B)) idx[seq_len(lens[b]), b] <- rowlists[[b]]
    f <- fits[[g]]
    dd_progress_batches(B, function(b) .Call(C_sdid_reps, f$Y, as.integer(N0), as.integer(f$T0), f$X, f$opts,
                                             unname(f$lambda), unname(f$omega), 4L, idx[, b, drop = FALSE],
                                             as.integer(lens[b]), as.integer(n0s[b])),
                        sprintf("synthetic DiD replications, cohort %s", format(pan$cohorts[g])), distribute = TRUE)
  }
  # position of a unit of cohort g in that cohort's sub-panel
  subpos <- function(g, units) N0 + match(units, members[[g]])
  if (se == "none") return(list(fits = fits, estimate = est, se = rep(NA_real_, G + 1L),
                                vcov = matrix(NA_real_, G + 1L, G + 1L), rep = list(estimates = NULL)))
  if (se == "placebo") {
    N1 <- sum(n1)
    if (N0 <= N1)
      dd_stop("se = \"placebo\" needs more control units than treated units (%d controls, %d treated); use se = \"bootstrap\" or \"jackknife\".",
              N0, N1)
    perms <- lapply(seq_len(nboot), function(b) sample.int(N0))
    keep <- N0 - N1
    start <- keep + c(0L, cumsum(n1))
    R <- vapply(seq_len(G), function(g) {
      rl <- lapply(perms, function(p) c(p[seq_len(keep)], p[start[g] + seq_len(n1[g])]))
      run(g, rl, rep(keep, nboot))
    }, numeric(nboot))
    R <- matrix(R, nboot, G)
    R <- cbind(R, apply(R, 1, agg, n1 = n1))
  } else if (se == "bootstrap") {
    draws <- dd_sdid_boot_draws(N, N0, nboot)
    R <- matrix(NA_real_, nboot, G)
    N1b <- matrix(0L, nboot, G)
    for (g in seq_len(G)) {
      rl <- lapply(draws, function(ind) c(ind[ind <= N0], subpos(g, ind[!is.na(coh[ind]) & coh[ind] == g])))
      n0s <- vapply(draws, function(ind) sum(ind <= N0), integer(1))
      N1b[, g] <- lengths(rl) - n0s
      ok <- N1b[, g] > 0L
      if (any(ok)) R[ok, g] <- run(g, rl[ok], n0s[ok])
    }
    R <- cbind(R, vapply(seq_len(nboot), function(b) agg(R[b, ], N1b[b, ]), numeric(1)))
  } else {
    # jackknife: unit i out, fixed weights; cohorts keep their estimate unless
    # i is in their sub-panel
    J <- lapply(seq_len(G), function(g) {
      f <- fits[[g]]
      if (sum(f$omega != 0) == 1L) dd_stop("the jackknife is undefined for cohort %s: a single control has positive weight; use se = \"placebo\".",
                                           format(pan$cohorts[g]))
      suppressWarnings(dd_sdid_jackknife(f, N0, sprintf(", cohort %s", format(pan$cohorts[g]))))
    })
    R <- matrix(NA_real_, N, G)
    for (i in seq_len(N)) for (g in seq_len(G)) {
      R[i, g] <- if (i <= N0) J[[g]][i] else if (identical(coh[i], g)) {
        if (n1[g] > 1L) J[[g]][subpos(g, i)] else NA_real_
      } else tau[g]
    }
    n1i <- t(vapply(seq_len(N), function(i) n1 - (seq_len(G) == coh[i] & !is.na(coh[i])), numeric(G)))
    n1i <- matrix(n1i, N, G)
    R <- cbind(R, vapply(seq_len(N), function(i) agg(R[i, ], n1i[i, ]), numeric(1)))
    n <- N
    V <- ((n - 1)^2 / n) * stats::cov(R, use = "pairwise.complete.obs")
    return(list(fits = fits, estimate = est, se = sqrt(diag(V)), vcov = V, rep = list(estimates = R)))
  }
  B <- nrow(R)
  V <- ((B - 1) / B) * stats::cov(R, use = "pairwise.complete.obs")
  list(fits = fits, estimate = est, se = sqrt(diag(V)), vcov = V, rep = list(estimates = R))
}

# why did_sdid() takes no weights or clusters (its help page says the same)
dd_sdid_unsupported <- c(
  cluster = "its placebo, bootstrap and jackknife variances resample units, as synthdid's do; clustered resampling is not implemented, so treatment assigned by clusters is not reflected in its standard error.",
  weightsname = "its unit and time weights are solved for by the estimator (as synthdid); sampling weights have no defined role in the synthetic-control weights.")
