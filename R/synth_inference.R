# Inference for did_synth fits beyond the in-space placebos (issue 39, in
# progress): conformal inference (Chernozhukov, Wuethrich and Zhu 2021).

# Conformal inference for one treated unit of a did_synth fit. Under the
# sharp null theta_t = theta0_t in the post-treatment periods, the treated
# unit's untreated outcomes are known (y_t - theta0_t); synthetic control
# weights are fitted to them over all periods (outcomes only, simplex
# weights without intercept: the paper's constrained estimator), and the
# residuals' post-period statistic S_q = (T1^(-1/2) sum |u_t|^q)^(1/q) is
# compared with its values under permutations of time: the T cyclic shifts
# ("moving_block") or n_perm random permutations with the identity
# ("iid"). The p-value is the share of permutations whose statistic is at
# least the observed one. Intervals invert the test over a grid: per
# period (the pre-treatment periods and that one period, T1 = 1), and for a
# constant effect over all post-treatment periods (the average effect when
# the effect is constant).
synth_conformal <- function(fit, theta0 = 0, q = 1, permutations = c("moving_block", "iid"), n_perm = 5000,
                            alpha = NULL, grid = NULL, n_grid = 201, unit = 1) {
  if (!inherits(fit, "dd_synth_wip") && !inherits(fit, "did_synth"))
    dd_stop("`fit` must be a did_synth() fit; got an object of class %s.", dd_show(class(fit)[1]))
  permutations <- dd_match_arg(permutations[1], c("moving_block", "iid"), "permutations")
  if (!is.numeric(q) || length(q) != 1L || is.na(q) || q <= 0)
    dd_stop("`q` must be a number > 0; got %s.", dd_show(q))
  alpha <- if (is.null(alpha)) fit$alpha else dd_check_alpha(alpha)
  n_perm <- dd_check_count(n_perm, "n_perm", min = 1)
  n_grid <- dd_check_count(n_grid, "n_grid", min = 3)
  u <- fit$fits[[unit]]
  T0 <- length(u$pre); post <- u$post; T1 <- length(post)
  y <- u$y; Y0 <- fit$Y0[[unit]]
  if (!is.numeric(theta0) || !(length(theta0) %in% c(1L, T1)) || anyNA(theta0))
    dd_stop("`theta0` must be one number or one per post-treatment period (%d); got %s.", T1, dd_show(theta0))
  perms <- dd_conformal_perms(T0 + T1, permutations, n_perm)
  p_joint <- dd_conformal_p(y, Y0, u$pre, post, matrix(rep_len(theta0, T1)), q, perms)
  # the grid around the estimates: +- 10 pre-treatment RMSPE (or the gap's size)
  span <- 10 * max(u$pre_rmspe, stats::sd(u$gap[post]), 1e-8 * max(1, abs(y)))
  mk_grid <- function(centre) if (is.null(grid)) seq(centre - span, centre + span, length.out = n_grid) else grid
  per <- lapply(seq_along(post), function(h) {
    g <- mk_grid(u$gap[post[h]])
    cols <- c(u$pre, post[h])
    ph <- dd_conformal_perms(T0 + 1L, permutations, n_perm)
    # with T0 + 1 cyclic shifts no p-value is below 1 / (T0 + 1): when that
    # exceeds alpha, no value is rejected and the interval is the real line
    if (1 / nrow(ph) > alpha) return(list(low = -Inf, high = Inf, edge = FALSE))
    p <- dd_conformal_p(y[cols], Y0[cols, , drop = FALSE], seq_len(T0), T0 + 1L, matrix(g, 1L), q, ph)
    dd_conformal_set(g, p, alpha)
  })
  g <- mk_grid(mean(u$gap[post]))
  pa <- dd_conformal_p(y, Y0, u$pre, post, matrix(rep(g, each = T1), T1), q, perms)
  avg <- dd_conformal_set(g, pa, alpha)
  per_tab <- data.frame(time = fit$periods[post], estimate = u$gap[post],
                        conf.low = vapply(per, `[[`, 0, "low"), conf.high = vapply(per, `[[`, 0, "high"),
                        at_edge = vapply(per, `[[`, NA, "edge"))
  structure(list(p.value = p_joint, theta0 = theta0, q = q, permutations = permutations,
                 n_perm = nrow(perms), alpha = alpha, periods = per_tab,
                 average = data.frame(estimate = mean(u$gap[post]), conf.low = avg$low, conf.high = avg$high,
                                      at_edge = avg$edge)),
            class = "dd_synth_conformal")
}

# the permutations of 1..T as rows: cyclic shifts (T of them, the identity
# first) or the identity and n - 1 random permutations (R's RNG)
dd_conformal_perms <- function(T, type, n) {
  if (type == "moving_block") return(t(vapply(0:(T - 1L), function(j) ((seq_len(T) - 1L + j) %% T) + 1L, integer(T))))
  rbind(seq_len(T), t(replicate(n - 1L, sample.int(T))))
}

# p-values of the nulls in the columns of Theta (T1 x m: the post-period
# effects under each null): the weights fitted under each null (one batched
# solve), residuals, statistic under each permutation
dd_conformal_p <- function(y, Y0, pre, post, Theta, q, perms) {
  m <- ncol(Theta)
  B <- matrix(y, length(y), m)
  B[post, ] <- B[post, , drop = FALSE] - Theta
  W <- .Call(C_synth_w, Y0, B)$w
  U <- B - Y0 %*% W
  T1 <- length(post); Tn <- length(y)
  stat <- function(Uc) (colSums(abs(Uc)^q) / sqrt(T1))^(1 / q)
  s0 <- stat(U[post, , drop = FALSE])
  # the post-period block of each permutation: its last T1 positions
  cnt <- numeric(m)
  for (r in seq_len(nrow(perms))) {
    idx <- perms[r, (Tn - T1 + 1L):Tn]
    cnt <- cnt + (stat(U[idx, , drop = FALSE]) >= s0 - 1e-12 * pmax(1, abs(s0)))
  }
  cnt / nrow(perms)
}

# the confidence set {theta: p(theta) > alpha} on a grid, reported as its
# hull (low, high); edge = TRUE when it reaches the grid's end (widen it)
dd_conformal_set <- function(g, p, alpha) {
  ok <- p > alpha
  if (!any(ok)) return(list(low = NA_real_, high = NA_real_, edge = FALSE))
  list(low = min(g[ok]), high = max(g[ok]), edge = ok[1] || ok[length(ok)])
}

# Firpo and Possebom (2018) confidence sets by inverting the in-space
# placebo test over sharp nulls alpha_t = c h_t in the post-treatment
# periods: h_t = 1 ("constant") or the number of periods since treatment
# ("linear"). The treated unit's weights are fitted on pre-treatment data
# and the placebo pools exclude it (as in Abadie, Diamond and Hainmueller
# 2010), so only the treated unit's post/pre RMSPE ratio depends on c:
# R(c)^2 = mean((gap_t - c h_t)^2) / pre_rmspe^2, and the set {c: p(c) >
# alpha} is the interval where R(c) stays at most the m-th largest placebo
# ratio, m the fewest placebo ratios at least R(c) that keep p above alpha:
# the roots of a quadratic, exact. Placebos dropped by the fit's
# placebo_mspe_cut stay dropped.
synth_fp <- function(fit, type = c("constant", "linear"), alpha = NULL, unit = 1) {
  if (!inherits(fit, "dd_synth_wip") && !inherits(fit, "did_synth"))
    dd_stop("`fit` must be a did_synth() fit; got an object of class %s.", dd_show(class(fit)[1]))
  if (is.null(fit$placebos))
    dd_stop("`fit` has no placebos (it was fitted with placebo = FALSE); refit with placebo = TRUE.")
  type <- dd_match_arg(type[1], c("constant", "linear"), "type")
  alpha <- if (is.null(alpha)) fit$alpha else dd_check_alpha(alpha)
  u <- fit$fits[[unit]]
  tab <- fit$placebos$table
  s <- tab$adopt == fit$periods[u$post[1]] & tab$pre_rmspe^2 <= fit$placebo_mspe_cut * u$pre_rmspe^2
  r <- sort(tab$ratio[s], decreasing = TRUE)
  J <- length(r)
  m <- which((1 + 0:J) / (1 + J) > alpha)[1] - 1L      # the fewest placebo ratios >= R(c) needed
  g <- u$gap[u$post]
  h <- if (type == "constant") rep(1, length(g)) else seq_along(g)
  out <- list(type = type, alpha = alpha, n_placebos = J, estimate = sum(g * h) / sum(h^2))
  if (is.na(m)) {
    out[c("conf.low", "conf.high")] <- list(NA_real_, NA_real_)   # p never exceeds alpha: empty
  } else if (m == 0L) {
    out[c("conf.low", "conf.high")] <- list(-Inf, Inf)            # p always exceeds alpha
  } else {
    # mean(h^2) c^2 - 2 mean(g h) c + mean(g^2) - r_m^2 pre^2 <= 0
    a <- mean(h^2); b <- mean(g * h); e <- mean(g^2) - r[m]^2 * u$pre_rmspe^2
    disc <- b^2 - a * e
    out[c("conf.low", "conf.high")] <- if (disc < 0) list(NA_real_, NA_real_)
                                       else list((b - sqrt(disc)) / a, (b + sqrt(disc)) / a)
  }
  structure(out, class = "dd_synth_fp")
}
