# One case of tools/interrupt-check.sh: builds a large input, prints
# "START <time>", runs a long kernel under tryCatch(interrupt = ), prints
# "STOPPED <time>" when Ctrl-C (SIGINT) reaches it (or "COMPLETED <seconds>"
# if it ran to the end), then shows that the session still works ("ALIVE").
# Usage: Rscript tools/interrupt-check.R CASE [LIB]
args <- commandArgs(TRUE)
case <- args[1]
if (length(args) > 1 && nzchar(args[2])) .libPaths(c(args[2], .libPaths()))
suppressMessages(library(diffdiff))
dd_threads(2)
set.seed(1)

panel <- function(N, T, cohorts, x = FALSE) {
  g <- sample(c(0, cohorts), N, replace = TRUE)
  d <- data.frame(id = rep(seq_len(N), each = T), t = rep(seq_len(T), N), g = rep(g, each = T))
  d$y <- rnorm(N)[d$id] + 0.1 * d$t + ifelse(d$g > 0 & d$t >= d$g, 1, 0) + rnorm(nrow(d))
  d$cl <- (d$id - 1L) %/% 20L
  d$d <- as.numeric(d$g > 0 & d$t >= d$g)
  if (x) d$x <- rnorm(N)[d$id]
  d
}

run <- switch(case,
  sdid_placebo = {
    N0 <- 1500; N1 <- 100; T <- 60
    d <- data.frame(id = rep(seq_len(N0 + N1), each = T), t = rep(seq_len(T), N0 + N1))
    d$y <- rnorm(nrow(d)) + rnorm(N0 + N1)[d$id]
    d$d <- as.numeric(d$id > N0 & d$t > 20)
    function() did_sdid(d, "y", "id", "t", "d", se = "placebo", nboot = 5000)
  },
  cs_bootstrap = {
    d <- panel(100000, 8, 4:7)
    function() did_cs(d, "y", "id", "t", "g", nboot = 2e5, cband = TRUE)
  },
  cs_cells = {
    # few cells on many units: the time is in the cell kernel (many cells
    # would put it in the pre-test's solve() of their covariance instead)
    d <- panel(400000, 8, 3:7, x = TRUE)
    for (j in 2:6) d[[paste0("x", j)]] <- rnorm(400000)[d$id]
    function() for (i in 1:20) did_cs(d, "y", "id", "t", "g", xformla = ~ x + x2 + x3 + x4 + x5 + x6,
                                      est_method = "dr", nboot = 0)
  },
  wild_bootstrap = {
    d <- panel(20000, 10, 4:8)
    function() did_twfe(d, "y", "id", "t", "d", cluster = "cl", nboot = 1e6)
  },
  demean_pcg = {
    n <- 3e6
    fe <- list(sample.int(50000L, n, TRUE) - 1L, sample.int(40000L, n, TRUE) - 1L,
               sample.int(300L, n, TRUE) - 1L)
    X <- matrix(rnorm(n * 2), n, 2)
    # tol 0: the PCG never meets its criterion and runs to maxit
    function() .Call(diffdiff:::C_demean, rnorm(n), X, fe, c(50000L, 40000L, 300L), NULL, 0, 1000000L)
  },
  survey_domains = {
    n <- 3e5
    dat <- data.frame(y = rnorm(n), dom = sample.int(3e4, n, TRUE),
                      psu = sample.int(4e3, n, TRUE), st = sample.int(200, n, TRUE), w = runif(n, 1, 3))
    dat$psu <- dat$psu + 1e5 * dat$st
    des <- survey_design(dat, weights = "w", strata = "st", ids = "psu", nest = TRUE)
    function() for (i in 1:1000) aggregate_survey(dat, "y", "dom", des)
  },
  survey_replicates = {
    # replicate-weight variance of a regression: the replicate totals kernel
    d <- panel(5000, 10, 4:8, x = TRUE)
    d$w <- 1
    R <- matrix(rexp(nrow(d) * 500), nrow(d), 500)
    d <- cbind(d, as.data.frame(R))
    des <- survey_design(d, weights = "w", repweights = paste0("V", 1:500), type = "bootstrap")
    function() for (i in 1:50) did_twfe(d, "y", "id", "t", "d", xformla = ~ x, survey = des)
  },
  honest_grid = {
    K <- 6
    b <- c(rnorm(K, sd = 0.05), 0.5, 0.6, 0.7, 0.8, 0.9)
    S <- diag(0.01, length(b))
    function() honest_did(betahat = b, sigma = S, num_pre = K, type = "RM", Mbar = c(0.5, 1, 1.5),
                          grid_points = 200000, breakdown = FALSE)
  },
  had_stute = {
    # did_had's Stute tests: the wild bootstrap's uniforms are drawn and used
    # a block of draws at a time (5 horizons x 3000 groups x 2e5 draws)
    G <- 3000
    dose <- rexp(G, 2)
    d <- expand.grid(t = 1:6, g = seq_len(G))
    d$D <- ifelse(d$t >= 4, dose[d$g], 0)
    d$y <- rnorm(G)[d$g] + 0.3 * d$t + d$D * (1 + 0.5 * dose[d$g]) + rnorm(nrow(d))
    function() did_had(d, "y", "g", "t", "D", effects = 3, placebo = 2, stute = TRUE, stute_nboot = 2e5)
  },
  conley = {
    # Conley's meat (conley.c): 400,000 places, a 600 km cutoff (thousands of neighbours each)
    d <- data.frame(id = rep(seq_len(400000), each = 2), t = rep(1:2, 400000))
    d$lat <- runif(400000, 25, 49)[d$id]; d$lon <- runif(400000, -124, -67)[d$id]
    d$d <- as.numeric(d$id %% 3 == 0 & d$t == 2); d$y <- rnorm(nrow(d))
    function() did_twfe(d, "y", "id", "t", "d", vcov = dd_conley(600))
  },
  spillover = {
    # did_spillover's nearest treated units (conley.c, C_spill_nearest):
    # 400,000 units, a third treated, rings to 600 km (thousands of treated
    # neighbours each)
    u <- 400000
    d <- data.frame(id = rep(seq_len(u), each = 2), t = rep(1:2, u))
    d$lat <- runif(u, 25, 49)[d$id]; d$lon <- runif(u, -124, -67)[d$id]
    d$g <- ifelse(d$id %% 3 == 0, 2, 0); d$y <- rnorm(nrow(d))
    function() did_spillover(d, "y", "id", "t", "g", rings = c(0, 300, 600))
  },
  rd = {
    # rd_robust's one-sided local polynomials (rd.c, C_rd_lp): 3e7 observations
    # a side, bandwidths covering them all, an order-8 fit with HC3 leverages
    x <- sort(runif(3e7))
    D <- matrix(x + rnorm(3e7), ncol = 1)
    st <- list(kern = 1L, vce_code = 4L, nnmatch = 3L)
    function() for (i in 1:20) diffdiff:::dd_rd_lp(list(d = x, D = D, fw = NULL), 2, 2, 8L, 9L, 0L, 1, st)
  },
  stop("unknown case ", case))

cat("START", format(as.numeric(Sys.time()), nsmall = 3), "\n")
t0 <- Sys.time()
# where the signal landed: the innermost call when the interrupt is signalled
where <- NULL
res <- tryCatch(withCallingHandlers({ run(); "done" }, interrupt = function(e) {
  calls <- sys.calls()
  # the innermost R function (the one whose .Call was running, if any)
  where <<- paste(deparse(calls[[length(calls) - 1L]][[1]]), collapse = "")
  if (nzchar(Sys.getenv("DEBUG_WHERE")))
    for (cl in calls) cat("CALL", substr(paste(deparse(cl), collapse = ""), 1, 70), "\n")
}), interrupt = function(e) {
  cat("STOPPED", format(as.numeric(Sys.time()), nsmall = 3), "\n")
  "interrupted"
})
if (!is.null(where)) cat("WHERE", where, "\n")
if (identical(res, "done")) cat("COMPLETED", format(as.numeric(difftime(Sys.time(), t0, units = "secs"))), "\n")
# the session works afterwards: a small fit runs and is right
d <- panel(200, 6, 3:5)
f <- did_twfe(d, "y", "id", "t", "d", cluster = "id")
ok <- is.finite(coef(f)[[1]]) && abs(coef(f)[[1]] - 1) < 1
cat(if (ok) "ALIVE" else "BROKEN", "\n")
