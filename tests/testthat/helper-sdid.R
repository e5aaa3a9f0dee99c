# Simulated block-design panels for the synthetic DiD tests; the reference
# numbers in test-parity-sdid.R were produced from these exact panels by
# synthdid 0.0.9 (tools/sdid-reference.R prints them).
sim_sdid_panel <- function(N0 = 30, N1 = 5, T0 = 12, T1 = 6, seed = 101, covariates = FALSE) {
  set.seed(seed)
  N <- N0 + N1; T <- T0 + T1
  L <- matrix(rnorm(N * 2), N, 2); F <- matrix(rnorm(T * 2), T, 2)
  alpha <- rnorm(N, sd = 2); beta <- cumsum(rnorm(T, sd = 0.5))
  treated <- rep(c(0, 1), c(N0, N1))
  L[treated == 1, 1] <- L[treated == 1, 1] + 0.7          # treated units load differently
  y <- outer(alpha, rep(1, T)) + outer(rep(1, N), beta) + L %*% t(F) + matrix(rnorm(N * T, sd = 0.5), N, T)
  D <- outer(treated, c(rep(0, T0), rep(1, T1)))
  y <- y + 2 * D
  d <- data.frame(unit = rep(sprintf("u%02d", seq_len(N)), times = T), time = rep(2000 + seq_len(T), each = N),
                  y = as.vector(y), treat = as.vector(D))
  if (covariates) {
    x1 <- matrix(rnorm(N * T), N, T) + 0.3 * outer(treated, seq_len(T) / T)
    x2 <- matrix(runif(N * T), N, T)
    d$x1 <- as.vector(x1); d$x2 <- as.vector(x2)
    d$y <- d$y + 1.5 * d$x1 - 0.8 * d$x2
  }
  d
}
