#' Sensitivity of event-study conclusions to violations of parallel trends
#'
#' Rambachan and Roth (2023) robust confidence sets for a post-period effect
#' (or a linear combination `l_vec` of post-period effects) when parallel
#' trends may fail, with the failure bounded relative to what the pre-periods
#' show. Three families of restrictions on the trend difference `delta`:
#'
#' * `type = "SD"` (smoothness, Delta^SD(M)): the slope of `delta` changes by
#'   at most `M` between consecutive periods (`M = 0` allows exactly linear
#'   trends). Default method: the optimal fixed-length confidence interval
#'   (`"FLCI"`). With `sign` (the bias is `"positive"` or `"negative"` after
#'   treatment) or `monotonicity` (`"increasing"`/`"decreasing"` trend) the
#'   default is the conditional test with the FLCI hybrid (`"C-F"`).
#' * `type = "RM"` (relative magnitudes, Delta^RM(Mbar)): each post-period
#'   change in `delta` is at most `Mbar` times the largest pre-period change.
#'   Default method: the conditional-least-favourable hybrid (`"C-LF"`).
#' * `type = "SDRM"` (Delta^SDRM(Mbar)): post-period changes in slope are at
#'   most `Mbar` times the largest pre-period change in slope ("deviation
#'   from a linear trend"). Default `"C-LF"`.
#'
#' The conditional (`"Conditional"`) and hybrid tests are those of Andrews,
#' Roth and Pakes (ARP), inverted over a grid of candidate values; the
#' interval reported is the smallest and largest accepted grid point. All
#' linear programs (the ARP statistic, its conditioning event, the
#' least-favourable critical value) and the quadratic program behind the FLCI
#' are solved in C. Results follow the conventions of the HonestDiD package:
#' the FLCI's folded-normal critical value and the least-favourable
#' simulations use the same 10^6 standard normal draws (`set.seed(0)`), drawn
#' without touching the caller's random-number state; default grids are
#' HonestDiD's (see Details).
#'
#' Default grids: `"C-F"` uses 1000 points across the (alpha/10)-level FLCI
#' (the first stage rejects every point outside it);
#' `"Conditional"` and `"C-LF"` under `"SD"` span the identified set at
#' `betahat = 0` widened by 20 standard errors of the estimand; under `"RM"`
#' and `"SDRM"` the grid is +/- 20 standard errors around 0. When the
#' estimate lies outside such a grid or the grid accepts no point (an
#' estimate more than about 20 standard errors from 0; HonestDiD then
#' reports an empty set), the grid is moved by the estimate. When the accepted
#' set reaches an end of the grid (default or given), the grid is extended on
#' that side at the same step, `grid_points` points at a time, until a point
#' beyond the set is rejected, so that an interval is never cut at the grid's
#' end (HonestDiD returns the cut interval with a warning); if it has not
#' closed after 20 extensions, an error says so. `grids` in the result gives
#' each grid's start and end.
#'
#' The breakdown value is the smallest `M` (or `Mbar`) at which the robust
#' interval includes 0, found by bisection between the values of `M` given
#' (to `breakdown_tol` times the largest). `NA` when the interval excludes 0
#' at every `M` given; 0 when it includes 0 already at the smallest.
#'
#' Differences from HonestDiD (0.2.x), measured on its BC and LW event
#' studies: (1) HonestDiD solves the FLCI's bias problem with a conic solver
#' (ECOS), accurate to about 1e-6 in the standard deviation of the estimator;
#' diffdiff solves it exactly (dual box QP, finished on its active set). The
#' FLCI half-lengths agree to 1e-7 relative; the centres differ by up to 5e-5
#' (LW, `M` = 0.01 and 0.04) and, at `M = 0`, where the feasible set is the
#' single minimum-variance estimator, by 2e-3 (LW: exact centre 6.142057,
#' HonestDiD 6.140084). The `"C-F"` grid is that FLCI, so `"C-F"` intervals
#' at `M = 0` move by the same amount. (2) At the two end points of the
#' `"C-F"` grid the first-stage test sits exactly on its boundary and
#' HonestDiD's decision is decided by rounding (in the cases checked: the
#' lower end always rejected, the upper end rejected in 4 of 7); diffdiff
#' always rejects both (a convention; the points have measure zero). On BC
#' with `sign = "negative"`, `M = 0.3`, HonestDiD reports the grid's end
#' 0.6468 as the upper bound; diffdiff 0.6181, the largest interior point
#' accepted; in two other cases checked the upper bound is one grid step
#' (1e-4 to 3e-4) inside HonestDiD's. (3) With one
#' post period diffdiff follows HonestDiD's test without nuisance parameters
#' (its critical value max(0, q) on the scale of the moment including its
#' bound, and no cap at the least-favourable critical value). (4) The
#' conditioning interval of the ARP
#' test is computed exactly (parametric LP), not to HonestDiD's 1e-6
#' bisection tolerance. (5) With `sign = "negative"` and the `"Conditional"`
#' or `"C-LF"` method, HonestDiD's default grid is the mirror image of the
#' identified set at `betahat = 0` and can cut the interval at the grid's end
#' (HonestDiD then warns that the interval is open); diffdiff's grid is the
#' identified set itself widened by 20 standard errors. On the same grid the
#' two agree (BC, `M` = 0.02 and 0.1). (6) Where HonestDiD's interval ends at
#' the end of its grid (it warns that the interval is open: on BC, for
#' example, `"Conditional"` under `"RM"` with the average of the post periods
#' as target, and under `"SDRM"` at `Mbar = 1`), diffdiff extends the grid
#' (see above) and reports the wider, closed interval; the other end agrees.
#'
#' @param fit An event-study fit: [did_event()], [did_sa()], [did_bjs()] (with
#'   `pretrends = TRUE`, so that it has pre-period coefficients) or
#'   `aggregate(did_cs(...), type = "dynamic")` (best with
#'   `base_period = "universal"`). Or give `betahat`, `sigma` and `num_pre`.
#' @param type `"SD"`, `"RM"` or `"SDRM"` (see Description).
#' @param M Values of the smoothness bound for `type = "SD"` (non-negative).
#'   Default: 10 values from 0 to the upper bound implied by the pre-periods
#'   (the largest pre-period second difference plus 1.645 standard errors,
#'   as HonestDiD's `DeltaSD_upperBound_Mpre`).
#' @param Mbar Values of the relative bound for `"RM"`/`"SDRM"` (non-negative).
#'   Default `seq(0, 2, length.out = 10)`.
#' @param method `"FLCI"`, `"C-F"`, `"C-LF"` or `"Conditional"`; the default
#'   depends on `type` (see Description). `"FLCI"` and `"C-F"` exist only for
#'   `"SD"`.
#' @param l_vec Weights of the post-period effects in the target parameter
#'   (length = number of post periods). Default: the first post period.
#' @param sign `NULL`, `"positive"` or `"negative"`: the sign of the bias in
#'   the post periods.
#' @param monotonicity `NULL`, `"increasing"` or `"decreasing"`: a monotone
#'   trend difference.
#' @param alpha Size of the test (confidence level `1 - alpha`).
#' @param grid_points,grid_lb,grid_ub Grid for test inversion (not used by
#'   `"FLCI"`).
#' @param breakdown Compute the breakdown value (`TRUE`, default).
#' @param breakdown_tol Precision of the breakdown value, relative to the
#'   largest `M`/`Mbar`.
#' @param betahat,sigma,num_pre A raw event study instead of `fit`: the
#'   coefficients (pre periods first, in time order, the reference period
#'   left out), their covariance matrix, and the number of pre-period
#'   coefficients.
#' @return An object of class `honest_did`: `results` (data frame with `M` (or
#'   `Mbar`), `lb`, `ub`, `method`, `delta`), `original` (the usual confidence
#'   interval for the same target), `breakdown`, `grids` (for the test
#'   inversions: each grid's first range `start_lb`, `start_ub` and, after any
#'   extension, its final range `lb`, `ub`; `NA` for the FLCI), and the
#'   settings. Methods
#'   `print()`, `plot()` (the sensitivity plot) and `as.data.frame()`.
#' @references Rambachan, A. and Roth, J. (2023). A more credible approach to
#'   parallel trends. Review of Economic Studies 90(5).
#'   Andrews, I., Roth, J. and Pakes, A. (2023). Inference for linear
#'   conditional moment inequalities. Review of Economic Studies 90(6).
#' @examples
#' d <- read.csv(system.file("extdata", "sim_panel.csv", package = "diffdiff"))
#' es <- did_event(d, yname = "y", tname = "year", idname = "id", gname = "first_treat")
#' h <- honest_did(es, type = "SD", M = c(0, 0.05, 0.1))
#' h
#' plot(h)
#' rm <- honest_did(es, type = "RM", Mbar = c(0, 0.5, 1), grid_points = 200)
#' rm
#' @export
honest_did <- function(fit = NULL, type = c("SD", "RM", "SDRM"), M = NULL, Mbar = NULL,
                       method = NULL, l_vec = NULL, sign = NULL, monotonicity = NULL,
                       alpha = 0.05, grid_points = 1000, grid_lb = NULL, grid_ub = NULL,
                       breakdown = TRUE, breakdown_tol = 0.01,
                       betahat = NULL, sigma = NULL, num_pre = NULL) {
  call <- match.call()
  es <- dd_event_study(fit, betahat, sigma, num_pre, fun = "honest_did")
  type <- dd_match_arg(type[1], c("SD", "RM", "SDRM"), "type")
  alpha <- dd_check_alpha(alpha)
  K <- es$K; P <- es$P
  b <- unname(es$betahat); S <- unname(es$sigma)
  if (is.null(l_vec)) l_vec <- c(1, rep(0, P - 1))
  l_vec <- dd_check_lvec(l_vec, P)
  if (!is.null(sign)) sign <- dd_match_arg(sign, c("positive", "negative"), "sign")
  if (!is.null(monotonicity))
    monotonicity <- dd_match_arg(monotonicity, c("increasing", "decreasing"), "monotonicity")
  if (!is.null(sign) && !is.null(monotonicity))
    dd_stop("Give at most one of `sign` (%s) and `monotonicity` (%s).", dd_show(sign), dd_show(monotonicity))
  methods_ok <- if (type == "SD") c("FLCI", "C-F", "C-LF", "Conditional") else c("C-LF", "Conditional")
  if (is.null(method)) {
    method <- if (type != "SD") "C-LF" else if (is.null(sign) && is.null(monotonicity)) "FLCI" else "C-F"
  }
  method <- dd_match_arg(method, methods_ok, "method")
  if (method == "FLCI" && (!is.null(sign) || !is.null(monotonicity)))
    dd_stop("`method` = \"FLCI\" cannot use `sign` or `monotonicity` (the FLCI is for Delta^SD alone); use method = \"C-F\".")
  if (type == "SDRM" && K < 2)
    dd_stop("`type` = \"SDRM\" needs at least 2 pre-period coefficients; the event study has %d.", K)
  grid_points <- dd_check_count(grid_points, "grid_points", min = 2)
  for (nm in c("grid_lb", "grid_ub")) {
    v <- get(nm)
    if (!is.null(v) && (!is.numeric(v) || length(v) != 1L || !is.finite(v)))
      dd_stop("`%s` must be a finite number; got %s.", nm, dd_show(v))
  }
  if (!is.null(grid_lb) && !is.null(grid_ub) && grid_lb >= grid_ub)
    dd_stop("`grid_lb` (%s) must be below `grid_ub` (%s).", format(grid_lb), format(grid_ub))
  breakdown <- dd_check_flag(breakdown, "breakdown")
  breakdown_tol <- dd_check_positive(breakdown_tol, "breakdown_tol")

  # the bound values
  if (type == "SD") {
    if (!is.null(Mbar)) dd_stop("`Mbar` is for type = \"RM\" or \"SDRM\"; for type = \"SD\" give `M`.")
    if (is.null(M)) {
      ub <- if (K == 1L) sqrt(S[1, 1]) else dd_sd_upper_mpre(b, S, K)
      M <- seq(0, ub, length.out = 10)
    }
    Mv <- dd_check_bounds(M, "M")
  } else {
    if (!is.null(M)) dd_stop("`M` is for type = \"SD\"; for type = \"%s\" give `Mbar`.", type)
    if (is.null(Mbar)) Mbar <- seq(0, 2, length.out = 10)
    Mv <- dd_check_bounds(Mbar, "Mbar")
  }

  sd_theta <- sqrt(drop(crossprod(l_vec, S[K + seq_len(P), K + seq_len(P), drop = FALSE] %*% l_vec)))
  theta_hat <- sum(l_vec * b[K + seq_len(P)])
  zq <- stats::qnorm(1 - alpha / 2)
  original <- c(lb = theta_hat - zq * sd_theta, ub = theta_hat + zq * sd_theta)
  ctx <- list(b = b, S = S, K = K, P = P, l = l_vec, type = type, method = method, sign = sign,
              mono = monotonicity, alpha = alpha, n = as.integer(grid_points), glb = grid_lb,
              gub = grid_ub, sd_theta = sd_theta)
  ci <- dd_progress_lapply(Mv, function(m) dd_honest_ci(ctx, m, warn = TRUE),
                           sprintf("honest_did: %s intervals", type))
  gr <- t(vapply(ci, function(x) { g <- attr(x, "grid"); if (is.null(g)) rep(NA_real_, 4) else g }, numeric(4)))
  grids <- data.frame(M = Mv, start_lb = gr[, 1], start_ub = gr[, 2], lb = gr[, 3], ub = gr[, 4])
  if (type != "SD") names(grids)[1] <- "Mbar"
  res <- data.frame(M = Mv, lb = vapply(ci, `[`, 0, 1), ub = vapply(ci, `[`, 0, 2),
                    method = method, delta = dd_delta_label(type, sign, monotonicity),
                    stringsAsFactors = FALSE)
  if (type != "SD") names(res)[1] <- "Mbar"
  bd <- if (breakdown) dd_breakdown(ctx, Mv, res$lb, res$ub, breakdown_tol) else NULL
  structure(list(results = res, original = original, breakdown = bd, grids = grids, type = type, method = method,
                 l_vec = l_vec, alpha = alpha, estimate = theta_hat, se = sd_theta,
                 betahat = es$betahat, sigma = es$sigma, num_pre = K, num_post = P,
                 sign = sign, monotonicity = monotonicity, call = call),
            class = "honest_did")
}

dd_check_bounds <- function(x, arg) {
  if (!is.numeric(x) || !length(x) || anyNA(x) || any(!is.finite(x)) || any(x < 0))
    dd_stop("`%s` must be non-negative finite numbers; got %s.", arg, dd_show(x))
  as.numeric(x)
}

dd_delta_label <- function(type, sign, mono) {
  suffix <- if (!is.null(sign)) c(positive = "PB", negative = "NB")[[sign]]
            else if (!is.null(mono)) c(increasing = "I", decreasing = "D")[[mono]] else ""
  paste0("Delta", type, suffix)
}

# ---- restriction matrices (columns: event times -K..-1, 1..P; delta_0 = 0 dropped) ----

dd_sd_rows <- function(K, P) {
  Tn <- K + P
  At <- matrix(0, Tn - 1, Tn + 1)
  for (r in seq_len(Tn - 1)) At[r, r:(r + 2)] <- c(1, -2, 1)
  At
}

dd_A_SD <- function(K, P) {
  At <- dd_sd_rows(K, P)[, -(K + 1), drop = FALSE]
  rbind(At, -At)
}

dd_A_B <- function(K, P, sign) {
  A <- -diag(K + P)[K + seq_len(P), , drop = FALSE]
  if (sign == "negative") -A else A
}

dd_A_M <- function(K, P, mono) {
  Tn <- K + P
  A <- matrix(0, Tn, Tn)
  if (K > 1) for (r in seq_len(K - 1)) A[r, r:(r + 1)] <- c(1, -1)
  A[K, K] <- 1
  A[K + 1, K + 1] <- -1
  if (P > 1) for (r in (K + 2):Tn) A[r, (r - 1):r] <- c(1, -1)
  if (mono == "decreasing") -A else A
}

# relative magnitudes: s indexes the pre-period change that carries the max
dd_A_rel <- function(K, P, Mbar, s, maxpos, second) {
  Tn <- K + P
  if (second) {
    At <- dd_sd_rows(K, P)
    v <- numeric(Tn + 1); v[(K + s - 1):(K + s + 1)] <- c(1, -2, 1)
    npre <- K - 1L
  } else {
    At <- matrix(0, Tn, Tn + 1)
    for (r in seq_len(Tn)) At[r, r:(r + 1)] <- c(-1, 1)
    v <- numeric(Tn + 1); v[(K + s):(K + 1 + s)] <- c(-1, 1)
    npre <- K
  }
  if (!maxpos) v <- -v
  AUB <- rbind(matrix(v, npre, Tn + 1, byrow = TRUE), Mbar * matrix(v, nrow(At) - npre, Tn + 1, byrow = TRUE))
  A <- rbind(At - AUB, -At - AUB)
  A <- A[rowSums(A^2) > 1e-10, , drop = FALSE]
  A[, -(K + 1), drop = FALSE]
}

dd_add_shape <- function(A, d, K, P, sign, mono) {
  if (!is.null(sign)) { A <- rbind(A, dd_A_B(K, P, sign)); d <- c(d, numeric(P)) }
  if (!is.null(mono)) { A <- rbind(A, dd_A_M(K, P, mono)); d <- c(d, numeric(K + P)) }
  list(A = A, d = d)
}

dd_post_rows <- function(A, K, P) which(rowSums(A[, K + seq_len(P), drop = FALSE] != 0) > 0)

# HonestDiD's DeltaSD_upperBound_Mpre: largest pre-period second difference + 1.645 se
dd_sd_upper_mpre <- function(b, S, K) {
  A <- dd_A_SD(K, 0)
  Sp <- S[seq_len(K), seq_len(K), drop = FALSE]
  max(drop(A %*% b[seq_len(K)]) + stats::qnorm(0.95) * sqrt(pmax(diag(A %*% Sp %*% t(A)), 0)))
}

# ---- one robust interval ----

dd_honest_ci <- function(ctx, m, warn = FALSE) {
  K <- ctx$K; P <- ctx$P
  if (ctx$method == "FLCI") {
    fl <- dd_flci(ctx$b, ctx$S, K, P, ctx$l, m, ctx$alpha)
    return(c(fl$center - fl$half, fl$center + fl$half))
  }
  hybrid <- switch(ctx$method, Conditional = 0, "C-LF" = 1, "C-F" = 2)
  problems <- if (ctx$type == "SD") {
    A <- dd_A_SD(K, P)
    sh <- dd_add_shape(A, rep(m, nrow(A)), K, P, ctx$sign, ctx$mono)
    rows <- if (P == 1L) seq_len(nrow(sh$A)) else dd_post_rows(sh$A, K, P)
    list(c(sh, list(rows = rows)))
  } else {
    second <- ctx$type == "SDRM"
    ss <- if (second) seq(-(K - 2), 0) else seq(-(K - 1), 0)
    out <- list()
    for (maxpos in c(TRUE, FALSE)) for (s in ss) {
      A <- dd_A_rel(K, P, m, s, maxpos, second)
      sh <- dd_add_shape(A, numeric(nrow(A)), K, P, ctx$sign, ctx$mono)
      out[[length(out) + 1L]] <- c(sh, list(rows = dd_post_rows(sh$A, K, P)))
    }
    out
  }
  flci <- if (hybrid == 2) dd_flci(ctx$b, ctx$S, K, P, ctx$l, m, ctx$alpha / 10) else NULL
  grid <- dd_honest_grid(ctx, problems, flci)
  # HonestDiD's default grids (other than C-F's) are centred on 0 (the
  # identified set at betahat = 0, widened by 20 standard errors): an
  # estimate outside such a grid, or one on which every point is rejected,
  # gets the grid moved by the estimate (same width and points).
  moveable <- is.null(ctx$glb) && is.null(ctx$gub) && !isTRUE(attr(grid, "flci"))
  th <- sum(ctx$l * ctx$b[K + seq_len(P)])
  moved <- moveable && (th < grid[1] || th > grid[length(grid)])
  if (moved) grid <- grid + th
  setups <- vector("list", length(problems))
  accept <- function(grid) {
    acc <- integer(length(grid))
    for (i in seq_along(problems)) {
      if (all(acc == 1L)) break   # every point in the union already
      if (is.null(setups[[i]])) setups[[i]] <<- dd_arp_setup(ctx, problems[[i]], hybrid, flci)
      a <- dd_arp_accept(setups[[i]], grid, acc)
      acc <- pmax(acc, a, na.rm = TRUE)
    }
    acc
  }
  acc <- accept(grid)
  if (!any(acc == 1L, na.rm = TRUE) && moveable && !moved) {
    grid <- grid + th
    acc <- accept(grid)
  }
  g0 <- range(grid)
  lab <- if (ctx$type == "SD") "M" else "Mbar"
  ok <- which(acc == 1L)
  if (!length(ok)) {
    if (warn) warning(sprintf("honest_did: no grid point accepted at %s = %s; the interval is empty on this grid.",
                              lab, format(m)), call. = FALSE)
    return(structure(c(NA_real_, NA_real_), grid = c(g0, g0)))
  }
  # The default C-F grid is the alpha/10 FLCI, outside which every point is
  # rejected: its ends bound the set. Any other grid whose accepted set
  # reaches an end is extended on that side, at the same step, until a point
  # beyond the set is rejected: the interval returned is never cut at the
  # grid's end (an error when it does not close within dd_honest_max_extend
  # extensions).
  if (!isTRUE(attr(grid, "flci")) && !isFALSE(ctx$extend)) {
    n0 <- length(grid); step <- (g0[2] - g0[1]) / (n0 - 1); k <- 0L
    repeat {
      lo_open <- acc[1] == 1L; hi_open <- acc[length(acc)] == 1L
      if (!lo_open && !hi_open) break
      if (k == dd_honest_max_extend)
        dd_stop("honest_did: at %s = %s the robust confidence set still reaches the end of the grid after extending it %d times, to [%s, %s] (a width of %s standard errors of the estimate); it is unbounded or wider than that, and honest_did() does not return a truncated interval. Use a smaller `%s` or a wider grid (`grid_lb`, `grid_ub`).",
                lab, format(m), k, format(grid[1]), format(grid[length(grid)]),
                format(signif((grid[length(grid)] - grid[1]) / ctx$sd_theta, 3)), lab)
      k <- k + 1L
      if (hi_open) {
        new <- grid[length(grid)] + step * seq_len(n0)
        grid <- c(grid, new); acc <- c(acc, accept(new))
      }
      if (lo_open) {
        new <- grid[1] - step * rev(seq_len(n0))
        grid <- c(new, grid); acc <- c(accept(new), acc)
      }
    }
    ok <- which(acc == 1L)
  }
  structure(c(grid[ok[1]], grid[ok[length(ok)]]), grid = c(g0, range(grid)))
}

# extensions of a grid whose accepted set reaches its end (each adds the
# grid's number of points on the open side)
dd_honest_max_extend <- 20L

dd_honest_grid <- function(ctx, problems, flci) {
  lb <- ctx$glb; ub <- ctx$gub
  if (is.null(lb) || is.null(ub)) {
    if (!is.null(flci)) {
      dl <- flci$center - flci$half; du <- flci$center + flci$half
    } else if (ctx$type == "SD") {
      pr <- problems[[1]]
      G <- pr$A[, ctx$K + seq_len(ctx$P), drop = FALSE]
      idu <- -.Call(C_lp_max, G, -ctx$l, -pr$d)  # -min l'delta_post
      idl <- .Call(C_lp_max, G, ctx$l, -pr$d)    # -max l'delta_post
      if (!is.finite(idu) || !is.finite(idl)) idu <- idl <- 0
      dl <- idl - 20 * ctx$sd_theta; du <- idu + 20 * ctx$sd_theta
    } else {
      dl <- -20 * ctx$sd_theta; du <- 20 * ctx$sd_theta
    }
    flci_ends <- !is.null(flci) && is.null(lb) && is.null(ub)
    if (is.null(lb)) lb <- dl
    if (is.null(ub)) ub <- du
    if (flci_ends) return(structure(seq(lb, ub, length.out = ctx$n), flci = TRUE))
  }
  seq(lb, ub, length.out = ctx$n)
}

#' @export
print.honest_did <- function(x, digits = 4, ...) {
  dd_check_dots(list(...), "print()")
  lab <- if (x$type == "SD") "M" else "Mbar"
  cat(sprintf("Sensitivity analysis (Rambachan-Roth), %s, method %s, %d%% intervals\n",
              x$results$delta[1], x$method, round(100 * (1 - x$alpha))))
  l <- x$l_vec
  # (equal weights read better as "the average of the k post periods")
  lt <- if (length(l) > 1L && all(abs(l - 1 / length(l)) < 1e-12)) sprintf("the average of the %d post periods", length(l))
        else sprintf("l'beta_post with l = %s", dd_show(l, 6))
  cat(sprintf("Target: %s; estimate %s (se %s); %d pre and %d post periods\n", lt,
              format(x$estimate, digits = digits), format(x$se, digits = digits), x$num_pre, x$num_post))
  cat(sprintf("Original interval: [%s, %s]\n", format(x$original[1], digits = digits),
              format(x$original[2], digits = digits)))
  r <- x$results[, c(lab, "lb", "ub")]
  print(format(r, digits = digits), row.names = FALSE)
  if (!is.null(x$breakdown))
    cat(sprintf("Breakdown value (smallest %s whose interval includes 0): %s\n", lab,
                if (is.na(x$breakdown)) sprintf("none up to %s", format(max(x$results[[lab]]), digits = digits))
                else format(x$breakdown, digits = digits)))
  invisible(x)
}

#' @export
as.data.frame.honest_did <- function(x, row.names = NULL, optional = FALSE, ...) {
  lab <- if (x$type == "SD") "M" else "Mbar"
  orig <- data.frame(x = NA_real_, lb = x$original[[1]], ub = x$original[[2]], method = "Original",
                     delta = NA_character_, stringsAsFactors = FALSE)
  names(orig)[1] <- lab
  dd_as_df(rbind(orig, x$results), row.names, list(...))
}

#' @rdname honest_did
#' @param x An `honest_did` result (`plot`: the robust intervals against `M`
#'   or `Mbar`, the original interval at the left, the breakdown value as a
#'   labelled dotted line).
#' @param main,xlab,ylab Plot titles.
#' @param legend Draw the legend (default `TRUE`).
#' @param legend_pos Where: `"auto"` (the emptiest corner) or a keyword of [graphics::legend()] (default
#'   `"topleft"`).
#' @param ... Passed to [graphics::plot()].
#' @export
plot.honest_did <- function(x, main = NULL, xlab = NULL, ylab = "Robust confidence interval", legend = TRUE,
                            legend_pos = "topleft", ...) {
  legend <- dd_check_flag(legend, "legend")
  lab <- if (x$type == "SD") "M" else "Mbar"
  r <- x$results
  Mv <- r[[lab]]
  # the original interval to the left of the grid, labelled on the axis
  # (no tick at a made-up value of M)
  rng <- diff(range(Mv)); if (!is.finite(rng) || rng <= 0) rng <- max(abs(Mv), 1)
  xo <- min(Mv) - 0.1 * rng
  yl <- range(c(r$lb, r$ub, x$original, 0), na.rm = TRUE)
  if (is.null(main)) main <- sprintf("Sensitivity: %s (%s)", r$delta[1], x$method)
  if (is.null(xlab)) xlab <- lab
  op <- graphics::par(las = 1, mar = c(4.2, 4.6, 3, 1)); on.exit(graphics::par(op))
  graphics::plot(c(xo, max(Mv)) + c(-0.04, 0.04) * rng, yl, type = "n", main = main, xlab = xlab,
                 ylab = "", xaxt = "n", ...)
  graphics::title(ylab = ylab, line = 3.4)
  at <- pretty(Mv); at <- at[at >= min(Mv) - 1e-12 & at <= max(Mv) + 1e-12]
  graphics::axis(1, at = at)
  graphics::axis(1, at = xo, labels = "original", tick = FALSE)
  graphics::abline(h = 0, lty = 2, col = "grey50")
  graphics::segments(xo, x$original[1], xo, x$original[2], lwd = 2, col = "firebrick")
  graphics::points(xo, mean(x$original), pch = 16, col = "firebrick")
  ok <- !is.na(r$lb)
  graphics::segments(Mv[ok], r$lb[ok], Mv[ok], r$ub[ok], lwd = 2, col = "steelblue")
  graphics::points(Mv[ok], (r$lb[ok] + r$ub[ok]) / 2, pch = 16, col = "steelblue")
  if (!is.null(x$breakdown) && !is.na(x$breakdown)) {
    graphics::abline(v = x$breakdown, lty = 3)
    graphics::text(x$breakdown, yl[2], sprintf(" breakdown %s = %.3g", lab, x$breakdown), adj = c(0, 1), cex = 0.8)
  }
  if (legend)
    # (points along each interval, for the automatic corner)
    graphics::legend(dd_legend_pos(legend_pos, rep(c(xo, Mv[ok]), each = 5),
                                   unlist(Map(seq, c(x$original[1], r$lb[ok]), c(x$original[2], r$ub[ok]),
                                              length.out = 5)), c(xo, max(Mv)), yl),
                     legend = c("Original", "Robust"), col = c("firebrick", "steelblue"),
                     lwd = 2, bty = "n", cex = 0.85)
  invisible(x)
}
