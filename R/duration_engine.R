# The engine of did_duration(): Deaner and Ku's (2026) estimator as a
# function of the group-period survival shares S (2 x T: treated, never
# treated), with its gradient, so that the influence function of every
# estimate is the survival shares' influence functions times the gradient
# (the delta method). Equation numbers: arXiv:2405.05220v2.
#
# R_kt = -log S_kt (Eq. 3.1), D_kt = R_kt - R_k1, e_t = tl_t - tl_1. The
# per-period moment m_t identifies c at each pre-treatment period t:
#   common dynamics      m_t = (D_1t - D_0t) / e_t       (Eq. 2.13)
#   proportional hazards m_t = D_1t / D_0t               (Eq. 2.15)
# c = sum_t a_t m_t over the fitting periods (Eq. 3.2; the PH analogue, see
# ?did_duration); the counterfactual R0_1t = R_11 + D_0t + e_t c (Eqs. 2.14,
# 3.3) or R_11 + c D_0t (Eq. 2.16); ATT(t) = exp(-R0_1t) - S_1t (Eqs. 2.17,
# 3.4). Gradients are taken with respect to r = (R_1., R_0.) and turned
# into gradients with respect to S by dR/dS = -1/S.
#
# Returns att (post periods), J_att (post x 2T, d att / d S), c_hat, J_c,
# delta and J_delta (the pretest contrasts m_t - m_t* at the interior
# pre-treatment periods, Appendix B Algorithm 2), the survival table and notes.
dd_duration_engine <- function(S, tl, js, idx, a, method, yname) {
  T <- length(tl)
  grp <- c("treated", "never-treated")
  z1 <- which(S[1, seq_len(js)] <= 0)
  z0 <- which(S[2, ] <= 0)
  if (length(z1) || length(z0)) {
    k <- if (length(z1)) 1L else 2L
    t0 <- if (length(z1)) z1[1] else z0[1]
    dd_stop("`yname` = \"%s\": every %s unit is absorbed by period %s, so the %s group's integrated hazard -log(survival) is infinite there; did_duration() needs survivors in the %s group %s.",
            yname, grp[k], format(tl[t0]), grp[k], grp[k],
            if (k == 1L) "in every period before treatment" else "in every period")
  }
  e <- tl - tl[1]
  R <- -log(S)
  D <- R - R[, 1]
  cd <- method == "common_dynamics"
  if (!cd) {
    zd <- idx[D[2, idx] <= 0]
    if (length(zd))
      dd_stop("`method` = \"proportional_hazards\": no never-treated unit is absorbed between periods %s and %s, so the hazard ratio of period %s (Eq. 2.15) divides by 0; choose `fit_periods` without it.",
              format(tl[1]), format(tl[zd[1]]), format(tl[zd[1]]))
  }
  mom <- function(t) if (cd) (D[1, t] - D[2, t]) / e[t] else D[1, t] / D[2, t]
  gmom <- function(t) {
    g <- numeric(2L * T)
    if (cd) v <- c(1, -1, -1, 1) / e[t]
    else { r <- D[1, t] / D[2, t]; v <- c(1, -1, -r, r) / D[2, t] }
    g[c(t, 1L, T + t, T + 1L)] <- g[c(t, 1L, T + t, T + 1L)] + v
    g
  }
  c_hat <- sum(a * vapply(idx, mom, numeric(1)))
  gc <- drop(vapply(idx, gmom, numeric(2L * T)) %*% a)
  if (!cd && !(c_hat > 0))
    dd_stop("`method` = \"proportional_hazards\": the estimated hazard ratio c is %s; the specification needs c > 0 (no treated unit is absorbed over the fitting periods). Use method = \"common_dynamics\".",
            format(c_hat))
  Svec <- c(S[1, ], S[2, ])
  to_S <- function(gr) { out <- numeric(length(gr)); nz <- gr != 0; out[nz] <- -gr[nz] / Svec[nz]; out }
  R0 <- numeric(T); J0 <- matrix(0, T, 2L * T)
  for (t in seq_len(T)) {
    g <- numeric(2L * T); g[1] <- 1
    if (cd) {
      R0[t] <- R[1, 1] + D[2, t] + e[t] * c_hat
      g[T + t] <- g[T + t] + 1; g[T + 1L] <- g[T + 1L] - 1
      g <- g + e[t] * gc
    } else {
      R0[t] <- R[1, 1] + c_hat * D[2, t]
      g[T + t] <- g[T + t] + c_hat; g[T + 1L] <- g[T + 1L] - c_hat
      g <- g + D[2, t] * gc
    }
    J0[t, ] <- to_S(g)
  }
  S0 <- exp(-R0)
  post <- (js + 1L):T
  att <- S0[post] - S[1, post]
  J_att <- -S0[post] * J0[post, , drop = FALSE]
  J_att[cbind(seq_along(post), post)] <- J_att[cbind(seq_along(post), post)] - 1
  # the pretest: interior pre-treatment periods, anchored at the last one
  pt <- if (js >= 3L) 2:(js - 1L) else integer()
  if (!cd && length(pt)) pt <- pt[D[2, pt] > 0]
  delta <- vapply(pt, function(t) mom(t) - mom(js), numeric(1))
  J_delta <- if (length(pt)) t(vapply(pt, function(t) to_S(gmom(t) - gmom(js)), numeric(2L * T)))
             else matrix(0, 0, 2L * T)
  notes <- character()
  if (any(diff(R0) < -1e-12 * pmax(1, abs(R0[-1]))))
    notes <- c(notes, "the counterfactual integrated hazard of the treated decreases somewhere: the fitted untreated hazard is negative (the paper's p. 20 warning for common dynamics); consider method = \"proportional_hazards\".")
  if (!cd && js >= 3L && length(pt) < js - 2L)
    notes <- c(notes, "pretest: periods without never-treated exits since the first period are left out (their hazard ratio divides by 0).")
  surv <- data.frame(time = tl, treated = S[1, ], control = S[2, ], counterfactual = S0,
                     R_treated = R[1, ], R_control = R[2, ], R_counterfactual = R0, post = seq_len(T) > js)
  list(att = att, J_att = J_att, c_hat = c_hat, J_c = to_S(gc), delta = delta, J_delta = J_delta,
       pretest_times = tl[pt], survival = surv, notes = notes)
}

# The pretest table: the contrasts, their standard errors (influence
# functions, summed within clusters) and a joint Wald test that all are 0
dd_duration_pretest <- function(eng, PsiS, n, cl, tl) {
  k <- length(eng$delta)
  if (!k) return(list(table = data.frame(time = numeric(), estimate = numeric(), std.error = numeric(),
                                         statistic = numeric(), p.value = numeric()),
                      statistic = NA_real_, df = 0L, p.value = NA_real_))
  Ud <- PsiS %*% t(eng$J_delta)
  if (!is.null(cl)) Ud <- rowsum(Ud, cl)
  Vd <- crossprod(Ud) / n^2
  se <- sqrt(diag(Vd))
  z <- eng$delta / se
  W <- tryCatch(drop(crossprod(eng$delta, solve(Vd, eng$delta))), error = function(err) NA_real_)
  list(table = data.frame(time = eng$pretest_times, estimate = eng$delta, std.error = se, statistic = z,
                          p.value = 2 * stats::pnorm(-abs(z))),
       statistic = W, df = k, p.value = if (k == 1L) 2 * stats::pnorm(-abs(z)) else dd_if_wald(eng$delta, Vd, k))
}
