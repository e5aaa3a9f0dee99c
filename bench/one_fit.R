# bench/one_fit.R: one fit per process, for whole-process timings of two
# builds (e.g. before and after a refactor, each in its own library):
#   R_LIBS=/path/to/lib Rscript bench/one_fit.R CASE
# CASE: twfe | event | sa | bjs | gardner | stacked | cs | survey | sdid | honest | bacon
# Regression and staggered cases: a 20,000-unit x 12-period panel (240,000
# rows, one covariate, unit-constant weights for did_sa/did_bjs); survey:
# did_sa with a stratified cluster design on that panel; sdid: a block
# design of 800 controls + 200 treated units x 30 periods with 200 placebo
# replications; honest: the HonestDiD LW event study, relative magnitudes
# (C-LF) over 4 values of Mbar; bacon: bacon_decomp on the panel.
# The peers' times do not change with a refactor of diffdiff, so the ratio
# of two builds' times carries the benchmark ratios of bench/*.R over.
# (Arguments are named so that builds before and after the change of
# did_cs()'s and bacon_decomp()'s positional order run the same call.)
# Results: bench/results/one_fit.md.
args <- commandArgs(TRUE); which <- args[1]
suppressPackageStartupMessages(library(diffdiff)); dd_threads(2)
panel <- function() {
  set.seed(1); n <- 20000; T <- 12
  g <- sample(c(0, 4:11), n, TRUE)
  d <- data.frame(id = rep(1:n, each = T), t = rep(1:T, n)); d$g <- g[d$id]
  d$x1 <- rnorm(nrow(d)); d$w <- runif(n, 0.5, 2)[d$id]
  d$y <- rnorm(n)[d$id] + 0.1 * d$t + 0.2 * d$x1 + ifelse(d$g > 0 & d$t >= d$g, 1, 0) + rnorm(nrow(d))
  d$d <- as.integer(d$g > 0 & d$t >= d$g)
  d$stratum <- d$id %% 20
  d
}
block <- function() {
  set.seed(2); N0 <- 800; N1 <- 200; T0 <- 20; T1 <- 10; N <- N0 + N1; T <- T0 + T1
  d <- data.frame(id = rep(1:N, each = T), t = rep(1:T, N))
  d$y <- rnorm(N)[d$id] + rnorm(T)[d$t] + rnorm(nrow(d))
  d$d <- as.integer(d$id > N0 & d$t > T0)
  d$y <- d$y + d$d
  d
}
read_es <- function(path) {
  l <- readLines(path)
  num <- function(key) as.numeric(strsplit(trimws(sub(paste0("^", key), "", grep(paste0("^", key), l, value = TRUE)[1])), " +")[[1]])
  b <- num("betahat"); i <- grep("^sigma", l)
  S <- do.call(rbind, lapply(l[i + seq_along(b)], function(s) as.numeric(strsplit(trimws(s), " +")[[1]])))
  list(b = b, S = S, K = length(num("pre_indices")))
}
f <- switch(which,
  twfe = did_twfe(panel(), "y", "id", "t", "d", xformla = ~ x1),
  event = did_event(panel(), "y", "id", "t", "g", xformla = ~ x1),
  sa = did_sa(panel(), "y", "id", "t", "g", xformla = ~ x1, weightsname = "w"),
  bjs = did_bjs(panel(), "y", "id", "t", "g", xformla = ~ x1, weightsname = "w"),
  gardner = did_gardner(panel(), "y", "id", "t", "g", xformla = ~ x1),
  stacked = did_stacked(panel(), "y", "id", "t", "g", kappa_pre = 2, kappa_post = 2),
  cs = did_cs(panel(), yname = "y", idname = "id", tname = "t", gname = "g", nboot = 999),
  survey = { d <- panel()
             did_sa(d, "y", "id", "t", "g", survey = survey_design(d, weights = ~ w, strata = ~ stratum, ids = ~ id,
                                                                   nest = TRUE)) },
  sdid = { set.seed(3); did_sdid(block(), "y", "id", "t", "d", se = "placebo", nboot = 200) },
  honest = { lw <- read_es(system.file("extdata", "honestdid_lw_event_study.txt", package = "diffdiff"))
             r <- honest_did(betahat = lw$b, sigma = lw$S, num_pre = lw$K, type = "RM", Mbar = c(0.5, 1, 1.5, 2),
                             breakdown = FALSE)$results
             list(coeftable = data.frame(estimate = c(r$lb, r$ub))) },
  bacon = { b <- bacon_decomp(panel(), yname = "y", idname = "id", tname = "t", gname = "g")
            list(coeftable = data.frame(estimate = b$beta_twfe)) })
cat(which, format(sum(f$coeftable$estimate), digits = 15), "\n")
