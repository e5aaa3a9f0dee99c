# didimputation's df_het (1,000 units x 31 years) with a covariate, an
# outcome that depends on it and unit-level weights: the data of the BJS and
# Gardner parity tests (tools/did2s-reference.R builds the same columns).
het_data <- function() {
  data("df_het", package = "didimputation", envir = environment())
  d <- as.data.frame(df_het)
  set.seed(7)
  d$x <- rnorm(nrow(d)) + d$year / 100
  d$y2 <- d$dep_var + 0.5 * d$x
  d$w <- 1 + d$unit %% 3
  d
}
