# Helpers for the Callaway-Sant'Anna parity tests against did::att_gt/aggte.

# A simulated staggered panel whose treatment timing depends on covariates,
# so that "reg", "ipw" and "dr" give different answers.
sim_cs_panel <- function(n = 600, T = 8, seed = 11) {
  set.seed(seed)
  x1 <- rnorm(n); x2 <- rbinom(n, 1, 0.4)
  lp <- 0.8 * x1 - 0.5 * x2
  u <- runif(n)
  g <- ifelse(u < plogis(lp - 1), 4, ifelse(u < plogis(lp - 0.2), 6, 0))
  d <- expand.grid(id = seq_len(n), t = seq_len(T))
  d$x1 <- x1[d$id]; d$x2 <- x2[d$id]; d$g <- g[d$id]
  te <- ifelse(d$g > 0 & d$t >= d$g, 1 + 0.3 * (d$t - d$g) + 0.5 * d$x1, 0)
  d$y <- 0.5 * d$x1 + 0.3 * d$x1 * d$t / T + 0.2 * d$t + rnorm(n)[d$id] + te + rnorm(nrow(d))
  d$w <- runif(n, 0.5, 2)[d$id]
  d[order(d$id, d$t), ]
}

# did's att_gt with analytic inference, and ours, on the same call
cs_pair <- function(data, y, t, id, g, xformla = NULL, ...) {
  args <- list(...)
  m <- suppressWarnings(suppressMessages(did::att_gt(yname = y, tname = t, idname = id, gname = g,
                                                     xformla = xformla, data = data, bstrap = FALSE,
                                                     cband = FALSE, ...)))
  if (!is.null(args$clustervars)) { args$cluster <- args$clustervars; args$clustervars <- NULL }
  f <- suppressWarnings(suppressMessages(do.call(did_cs, c(list(data, y, id, t, g, xformla = xformla,
                                                               nboot = 0), args))))
  list(m = m, f = f)
}

# max relative difference, NA positions required to agree
rel_na <- function(a, b) {
  stopifnot(identical(is.na(a), is.na(b)))
  ok <- !is.na(b)
  if (!any(ok)) return(0)
  max(abs(a[ok] - b[ok]) / pmax(abs(b[ok]), 1e-300))
}

# compare every aggregation type (analytic SEs)
cs_check_aggte <- function(p, tol_est = 1e-8, tol_se = 1e-6) {
  for (ty in c("simple", "group", "dynamic", "calendar")) {
    a <- did::aggte(p$m, type = ty, bstrap = FALSE, cband = FALSE)
    b <- aggregate(p$f, type = ty, nboot = 0, cband = FALSE)
    k <- nrow(b$coeftable)
    est_ref <- c(if (ty != "simple") a$att.egt, a$overall.att)
    se_ref <- c(if (ty != "simple") a$se.egt, a$overall.se)
    testthat::expect_lt(rel_na(b$coeftable$estimate, est_ref), tol_est)
    testthat::expect_lt(rel_na(b$coeftable$std.error, se_ref), tol_se)
  }
}
