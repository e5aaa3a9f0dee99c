# Simulated panels for the did_synth tests (test-parity-synth.R, test-synth.R).

# a factor-model panel: 1 treated unit (id 1) treated from period 13, J
# donors, covariates x1 (constant within unit) and x2 (time-varying); the
# treated unit's x1 and factor loadings above every donor's
synth_sim <- function(seed, J = 20, T = 20, T0 = 12) {
  set.seed(seed)
  n <- J + 1
  lam <- matrix(stats::rnorm(n * 2), n); f <- matrix(stats::rnorm(T * 2), T)
  x1 <- stats::rnorm(n)
  # the treated unit outside the donors' hull (as in applications where SC
  # is used: otherwise a perfect predictor fit leaves W undetermined)
  x1[1] <- max(x1[-1]) + 0.3
  lam[1, ] <- apply(lam[-1, ], 2, stats::quantile, 0.9)
  d <- expand.grid(t = seq_len(T), id = seq_len(n))[, c("id", "t")]
  d$x1 <- x1[d$id]
  d$x2 <- stats::rnorm(nrow(d)) + 0.5 * d$x1
  d$y <- 5 + 0.3 * d$t + rowSums(lam[d$id, ] * f[d$t, ]) + d$x1 + 0.5 * d$x2 + stats::rnorm(nrow(d), sd = 0.3)
  d$d <- as.integer(d$id == 1 & d$t > T0)
  d$y <- d$y + 2 * d$d
  d$name <- paste0("u", d$id)
  d
}
