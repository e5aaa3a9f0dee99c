# Parity tests compare with live peers. A user without the peer skips them;
# with DIFFDIFF_REQUIRE_PARITY=true (set by `make test` and CI) a missing peer
# is a failure, so parity can never be skipped silently in CI.
need_peer <- function(pkg) {
  if (identical(Sys.getenv("DIFFDIFF_REQUIRE_PARITY"), "true")) {
    if (!requireNamespace(pkg, quietly = TRUE))
      stop(sprintf("peer package '%s' is required for parity tests (DIFFDIFF_REQUIRE_PARITY=true)", pkg))
  } else {
    testthat::skip_if_not_installed(pkg)
  }
  fixest_threads_1(pkg)
  if (pkg %in% c("etwfe", "marginaleffects")) peer_backports()
  invisible(TRUE)
}

# marginaleffects 1.0.0 (under etwfe::emfx()) calls `%||%`, which base R has
# only from 4.4 on, without importing it; on older R the lookup from its
# namespace falls through to the global environment, where this supplies it
# (a bug of the peer on R < 4.4, not of diffdiff).
peer_backports <- function() {
  if (!exists("%||%", envir = baseenv(), inherits = FALSE) && !exists("%||%", envir = globalenv(), inherits = FALSE))
    assign("%||%", function(x, y) if (is.null(x)) y else x, envir = globalenv())
}

fixest_threads_1 <- function(pkg) {
  if (pkg == "fixest") fixest::setFixest_nthreads(1)
}

# elementwise relative difference
rel_diff <- function(a, b) {
  a <- unname(as.vector(a)); b <- unname(as.vector(b))
  stopifnot(length(a) == length(b))
  max(abs(a - b) / abs(b))
}

sim_panel <- function() {
  read.csv(system.file("extdata", "sim_panel.csv", package = "diffdiff"))
}

# A simulated unbalanced panel with three fixed-effect dimensions and weights.
sim_unbalanced <- function(n_units = 150, n_t = 12, seed = 42) {
  set.seed(seed)
  d <- expand.grid(id = seq_len(n_units), t = seq_len(n_t))
  d <- d[sample(nrow(d), round(0.85 * nrow(d))), ]           # unbalanced
  d$firm <- (d$id * 7 + d$t %/% 4) %% 40                     # third FE, crosses units
  d$state <- d$id %% 17
  g <- sample(c(0, 4, 7, 10), n_units, replace = TRUE)
  d$g <- g[d$id]
  d$d <- as.integer(d$g > 0 & d$t >= d$g)
  d$x1 <- rnorm(nrow(d)); d$x2 <- rnorm(nrow(d))
  d$w <- runif(nrow(d), 0.2, 3)
  d$y <- 0.1 * d$id %% 5 + 0.2 * d$t + 0.3 * (d$firm %% 3) + 1.5 * d$d + 0.5 * d$x1 -
    0.2 * d$x2 + rnorm(nrow(d))
  d
}

# The 2x2 slice of the shipped panel: the 2006 cohort against never-treated
# units, in 2004 and 2007.
sim_2x2 <- function() {
  d <- sim_panel()
  d <- d[d$year %in% c(2004, 2007) & d$first_treat %in% c(0, 2006), ]
  d$treated <- as.integer(d$first_treat == 2006)
  d$post <- as.integer(d$year == 2007)
  d
}
