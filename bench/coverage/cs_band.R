# Why does did_cs()'s uniform band over many ATT(g,t) undercover with ~30
# units per cohort, and what fixes it?
#
# Designs: staggered panels with equal cohort probabilities, never-treated
# controls, AR(1) errors (rho 0.5), heterogeneous dynamic effects, no
# covariates (so each ATT(g,t) is a difference in means and is exactly
# normal given the cohort sizes; its true variance and the true correlation
# of all cells are known in closed form, which gives the oracle bands):
#   "cs-30x36"  150 units, 10 periods, cohorts 4/6/8/10 (~30 units each and
#               ~30 never treated): 36 cells
#   "cs-30x12"  120 units, 5 periods, cohorts 3/4/5 (~30 each): 12 cells
#   "cs-120x36" 600 units, 10 periods, cohorts 4/6/8/10 (~120 each): 36 cells
#
# Bands (all over every ATT(g,t), nominal 95%):
#   default          did_cs(nboot = 1000, cband = TRUE) as it is (did's
#                    method: Rademacher multiplier bootstrap, IQR standard
#                    errors, sup-t critical value)
#   nboot = 10000    the same with 10 times the draws
#   analytic SE      sup-t critical value of the bootstrap draws studentised
#                    by the analytic SE, band with the analytic SE
#   df-corrected     analytic SE with the small-sample factor
#                    n_h / (n_h - 1) for each unit of group h (cohort or
#                    never treated), and the sup-t critical value c turned
#                    into a t critical value with the same tail,
#                    qt(pnorm(c), n_g + n_c - 2), per cell
#   bootstrap-t      wild bootstrap-t: each draw re-studentised with the
#                    standard error the draw itself would report (the
#                    multiplied influence functions recentred within the
#                    cohort and control groups), band with the corrected SE
#                    (and, separately, without the n_h / (n_h - 1) factor)
#   did_cs(cband_method = "bootstrap-t")
#                    the package's implementation of the wild bootstrap-t
#                    without the n_h / (n_h - 1) factor (C, its own draws)
#   Sidak-t          no bootstrap: t critical value at 1 - (0.95)^(1/K) per
#                    cell, corrected SE
#   oracle ...       true SE and/or true critical value (from the true
#                    correlation), to separate the two sources of error
#
# Run: R_LIBS=/tmp/lib-coverage Rscript bench/coverage/cs_band.R

source("bench/coverage/helpers.R")
RHO <- 0.5
B <- 1000

design_band <- function(name) {
  switch(name,
    `cs-30x36` = list(N = 150, T = 10, coh = c(4, 6, 8, 10), frac = 1),
    `cs-30x12` = list(N = 120, T = 5, coh = c(3, 4, 5), frac = 0.5),
    `cs-120x36` = list(N = 600, T = 10, coh = c(4, 6, 8, 10), frac = 0.5))
}

band_data <- function(name, r) {
  p <- design_band(name)
  k <- length(p$coh)
  probs <- stats::setNames(rep(1 / (k + 1), k + 1), c(p$coh, 0))
  tau <- tau_linear(p$coh, base = seq(0.5, 2, length.out = k), slope = seq(0.3, -0.1, length.out = k), p$T)
  set.seed(cov_seed(name, r))
  dgp_stagger(p$N, p$T, probs, tau, lambda = sin(seq_len(p$T)), rho = RHO)
}

# true covariance of the ATT(g,t) (varying base period, never-treated
# controls): cov(e_t - e_b, e_s - e_c) (1{same cohort} / n_g + 1 / n_c)
true_cov <- function(tab, ng) {
  s2 <- 1 / (1 - RHO^2)
  b <- ifelse(tab$time >= tab$group, tab$group - 1, tab$time - 1)
  tk <- tab$time; K <- nrow(tab)
  ac <- function(x, y) RHO^abs(x - y)
  C <- outer(seq_len(K), seq_len(K), function(k, l)
    s2 * (ac(tk[k], tk[l]) - ac(tk[k], b[l]) - ac(b[k], tk[l]) + ac(b[k], b[l])) *
      ((tab$group[k] == tab$group[l]) / as.numeric(ng[as.character(tab$group[k])]) + 1 / as.numeric(ng["0"])))
  C
}

# 95% quantile of the row maxima of |M| (type 1, as did)
supq <- function(M) {
  m <- abs(M[, 1])
  for (k in seq_len(ncol(M))[-1]) m <- pmax(m, abs(M[, k]))
  stats::quantile(m, 0.95, type = 1, names = FALSE)
}

one_design <- function(name) function(r) {
  d <- band_data(name, r)
  tau <- attr(d, "tau")
  coh <- as.numeric(rownames(tau))
  fit <- did_cs(d, "y", "id", "t", "g", nboot = B, cband = TRUE)
  tab <- fit$coeftable
  K <- nrow(tab)
  truth <- ifelse(tab$event >= 0, tau[cbind(match(tab$group, coh), pmax(tab$event, 0) + 1L)], 0)
  est <- tab$estimate
  fit10 <- did_cs(d, "y", "id", "t", "g", nboot = 10 * B, cband = TRUE)
  fit_bt <- did_cs(d, "y", "id", "t", "g", nboot = B, cband = TRUE, cband_method = "bootstrap-t")
  psi <- as.matrix(fit$inf)[, seq_len(K), drop = FALSE]
  n <- fit$n
  gu <- d$g[d$t == 1][match(fit$units, d$id[d$t == 1])]
  ng <- table(gu)
  grp <- match(gu, as.numeric(names(ng)))
  # influence-function rows are units in the order of fit$units: a cell's
  # column is zero outside its cohort and the never-treated units
  stopifnot(all(psi[!(gu %in% c(0, tab$group[1])), 1] == 0), any(psi[gu == tab$group[1], 1] != 0))
  se_a <- sqrt(colSums(psi^2)) / n
  hc <- sqrt(as.numeric(ng[grp] / (ng[grp] - 1)))
  psic <- psi * hc
  se_c <- sqrt(colSums(psic^2)) / n
  df <- as.numeric(ng[as.character(tab$group)] + ng["0"] - 2)
  Xi <- matrix(sample(c(-1, 1), B * n, replace = TRUE), B, n)
  S <- Xi %*% psi / n
  c_a <- supq(sweep(S, 2, se_a, "/"))
  # bootstrap-t: the draw's own standard error from recentred multiplied
  # influence functions (sum_i (xi_i psi_i - mean_h)^2 = sum psi^2 - n_h mean_h^2)
  Sc <- Xi %*% psic / n
  ss <- matrix(colSums(psic^2), B, K, byrow = TRUE)
  for (h in seq_along(ng)) {
    inh <- grp == h
    Sh <- Xi[, inh, drop = FALSE] %*% psic[inh, , drop = FALSE]
    ss <- ss - Sh^2 / sum(inh)
  }
  c_bt <- supq(Sc / (sqrt(pmax(ss, 0)) / n))
  ss0 <- matrix(colSums(psi^2), B, K, byrow = TRUE)                 # the same without n_h / (n_h - 1)
  for (h in seq_along(ng)) {
    inh <- grp == h
    ss0 <- ss0 - (Xi[, inh, drop = FALSE] %*% psi[inh, , drop = FALSE])^2 / sum(inh)
  }
  c_bt0 <- supq(S / (sqrt(pmax(ss0, 0)) / n))
  c_sidak <- stats::qt(1 - (1 - 0.95^(1 / K)) / 2, df)
  C <- true_cov(tab, ng)
  se_o <- sqrt(diag(C))
  Z <- matrix(stats::rnorm(10000 * K), 10000, K) %*% chol(stats::cov2cor(C))
  c_o <- supq(Z)
  band <- function(label, half)
    cov_rows("did_cs", label, name, "ATT(g,t)", tab$term, truth, est, est - half, est + half, band = TRUE)
  rbind(
    band("default (did's method, nboot = 1000)", (tab$cband.high - tab$cband.low) / 2),
    band("nboot = 10000", (fit10$coeftable$cband.high - fit10$coeftable$cband.low) / 2),
    band("analytic SE studentisation", c_a * se_a),
    band("df-corrected: n_h/(n_h-1) SE and t critical value", stats::qt(stats::pnorm(c_a), df) * se_c),
    band("did_cs(cband_method = \"bootstrap-t\") (the package's remedy)",
         (fit_bt$coeftable$cband.high - fit_bt$coeftable$cband.low) / 2),
    band("wild bootstrap-t, n_h/(n_h-1) SE", c_bt * se_c),
    band("wild bootstrap-t, analytic SE (no n_h/(n_h-1))", c_bt0 * se_a),
    band("Sidak-t (no bootstrap), n_h/(n_h-1) SE", c_sidak * se_c),
    band("oracle: true SE, true critical value", c_o * se_o),
    band("oracle: true SE, bootstrap critical value", c_a * se_o),
    band("oracle: analytic SE, true critical value", c_o * se_a),
    cov_rows("did_cs", "pointwise, bootstrap SE (reference)", name, "ATT(g,t)", tab$term, truth, est,
             tab$conf.low, tab$conf.high),
    # critical values (diagnostic rows: estimate = the critical value)
    cov_rows("did_cs", "critical value", name, "diagnostic",
             c("default", "nboot = 10000", "analytic SE", "bootstrap-t", "bootstrap-t (no n_h/(n_h-1))", "true",
               "Sidak (normal)", "did_cs bootstrap-t"), NA,
             c(fit$crit, fit10$crit, c_a, c_bt, c_bt0, c_o, stats::qnorm(1 - (1 - 0.95^(1 / K)) / 2), fit_bt$crit),
             NA, NA))
}

res <- lapply(c("cs-30x36", "cs-30x12", "cs-120x36"), function(name) cov_study(paste0("cs_band-", name), cov_nsim(design_band(name)$frac), one_design(name)))
st <- list(name = "cs_band", raw = do.call(rbind, lapply(res, `[[`, "raw")),
           done = sum(vapply(res, `[[`, numeric(1), "done")), failed = sum(vapply(res, `[[`, numeric(1), "failed")),
           seconds = sum(vapply(res, `[[`, numeric(1), "seconds")),
           note = sprintf("nboot = %d; %s", B, paste(sprintf("%s: %d draws", vapply(res, `[[`, "", "name"),
                                                             vapply(res, `[[`, numeric(1), "done")), collapse = "; ")))
cov_write(st)
