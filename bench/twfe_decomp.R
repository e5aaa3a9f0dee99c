# bench/twfe_decomp.R: twfe_decomp() against twfeweights (GitHub
# bcallaway11/twfeweights, not on CRAN; install the snapshot into a private
# library and point TWFEW_LIB at it) on the same data in one R process.
# Without covariates the peer's route is did::att_gt() (never treated,
# universal base) + twfe_weights() + attO_weights() + att_simple_weights();
# with covariates implicit_twfe_weights() (base_period "gmin1"). The peer's
# BMisc::drop_collinear needs caret; when caret is missing it is replaced by
# the identity (exact for the non-collinear covariates used here, as
# caret::findLinearCombos would remove none). Without TWFEW_LIB the peer is
# the by-hand route: lm() with unit and period dummies for the coefficient
# and the spec's formula for the weights (no covariates only). Checks: the
# largest difference of the cell weights, the cell effects and the
# coefficient. Time: median of 3 calls; memory: R heap peak above the
# baseline (MB). Writes bench/results/twfe_decomp.{json,md}.
# Usage: TWFEW_LIB=/tmp/lib-twfew Rscript bench/twfe_decomp.R
suppressPackageStartupMessages(library(diffdiff))
out_dir <- file.path("bench", "results")
dir.create(out_dir, showWarnings = FALSE, recursive = TRUE)
source(file.path("bench", "measure.R"))
lib <- Sys.getenv("TWFEW_LIB")
have_peer <- nzchar(lib) && requireNamespace("twfeweights", lib.loc = lib, quietly = TRUE)
if (have_peer) {
  suppressPackageStartupMessages(library(twfeweights, lib.loc = lib))
  if (!requireNamespace("caret", quietly = TRUE))
    utils::assignInNamespace("drop_collinear", function(matrix) matrix, ns = "BMisc")
}
castle <- read.csv(system.file("extdata", "castle.csv", package = "diffdiff"))
set.seed(20260101)
sim <- dd_sim_staggered(n_units = 3000, n_periods = 10, cohorts = c(3, 5, 7, 9), effect = 1, dynamic = 0.3)
names(sim)[names(sim) == "time"] <- "period"   # (twfeweights fails with a column named "time")
sim$x <- rnorm(nrow(sim)) + 0.1 * sim$period * (sim$first_treat == 3)
sims <- sim[sim$id %% 10 == 0, ]                # 300 units (ids are in cohort blocks)

peer_nocov <- function(d, y, id, t, g) {
  if (have_peer) {
    att <- suppressWarnings(did::att_gt(y, t, id, g, data = d, control_group = "nevertreated",
                                        base_period = "universal", bstrap = FALSE, cband = FALSE))
    w <- twfe_weights(att)$weights_df
    list(w = w[order(w$group, w$time.period), ], O = attO_weights(att), s = att_simple_weights(att))
  } else {
    # the by-hand route: lm() and formula A on period positions
    d$.D <- as.numeric(d[[g]] != 0 & d[[t]] >= d[[g]])
    b <- coef(lm(stats::reformulate(c(".D", sprintf("factor(%s)", c(id, t))), y), d))[[".D"]]
    tl <- sort(unique(d[[t]])); TT <- length(tl); gu <- d[[g]][!duplicated(d[[id]])]
    gs <- sort(unique(gu[gu != 0])); p <- vapply(gs, function(v) mean(gu == v), 0)
    Dt <- vapply(tl, function(v) mean(gu != 0 & gu <= v), 0)
    cl <- expand.grid(t = seq_len(TT), k = seq_along(gs))
    gp <- match(gs, tl)[cl$k]
    h <- (cl$t >= gp) - (TT - gp + 1) / TT - Dt[cl$t] + mean(Dt)
    wt <- p[cl$k] * h; wt <- wt / sum(wt[cl$t >= gp])
    list(w = data.frame(group = gs[cl$k], time.period = tl[cl$t], weight = wt), beta = b)
  }
}
peer_cov <- function(d, y, id, t, g, x)
  suppressWarnings(implicit_twfe_weights(yname = y, tname = t, idname = id, gname = g, xformula = x,
                                         data = d[order(d[[id]], d[[t]]), ], base_period = "gmin1"))

cases <- list(
  list(case = "castle 50 x 11, no covariates", d = castle, y = "l_homicide", id = "sid", t = "year", g = "effyear", x = NULL),
  list(case = "simulated 3,000 x 10, no covariates", d = sim, y = "y", id = "id", t = "period", g = "first_treat", x = NULL),
  list(case = "castle 50 x 11, ~ l_income + unemployrt", d = castle, y = "l_homicide", id = "sid", t = "year",
       g = "effyear", x = ~ l_income + unemployrt),
  list(case = "simulated 300 x 10, ~ x", d = sims, y = "y", id = "id", t = "period", g = "first_treat", x = ~ x))
if (!have_peer) {                                 # lm() with 3,000 unit dummies takes minutes: 300 units
  cases <- Filter(function(k) is.null(k$x), cases)
  cases[[2]]$d <- sims; cases[[2]]$case <- "simulated 300 x 10, no covariates"
}
rows <- lapply(cases, function(k) {
  k$d$G <- k$d[[k$g]]
  p <- bench_in_process_median(function()
    if (is.null(k$x)) peer_nocov(k$d, k$y, k$id, k$t, k$g) else peer_cov(k$d, k$y, k$id, k$t, "G", k$x))
  o <- bench_in_process_median(function()
    suppressWarnings(twfe_decomp(k$d, k$y, k$id, k$t, k$g, xformla = k$x)))
  f <- o$value
  if (is.null(k$x)) {
    w <- p$value$w
    dm <- max(abs(w$weight - f$cells$weight))
    if (have_peer) dm <- max(dm, abs(w$attgt - f$cells$att),
                             abs(sum(p$value$O$weights_df$weight * p$value$O$weights_df$attgt) - f$att_O))
    else dm <- max(dm, abs(p$value$beta - f$beta))
  } else {
    tl <- sort(unique(k$d[[k$t]]))
    cc <- do.call(rbind, lapply(p$value$twfe_gt, function(z)
      data.frame(group = tl[z$g], time = tl[z$tp], lambda = z$alpha_weight, delta = z$weighted_outcome_diff)))
    m <- merge(f$cells, cc, by = c("group", "time"))
    stopifnot(nrow(m) == nrow(f$cells))
    dm <- max(abs(m$weight - m$lambda), abs(m$att - m$delta), abs(p$value$est - f$beta))
  }
  stopifnot(dm < 1e-8)
  data.frame(case = k$case, peer = if (have_peer) "twfeweights 0.9.0" else "lm() + formula by hand",
             peer_s = p$seconds, diffdiff_s = o$seconds, speedup = p$seconds / o$seconds, peer_peak_mb = p$mb,
             diffdiff_peak_mb = o$mb, mem_ratio = o$mb / p$mb, diff = sprintf("%.1e", dm))
})
res <- do.call(rbind, rows)
if (requireNamespace("jsonlite", quietly = TRUE))
  writeLines(jsonlite::toJSON(res, pretty = TRUE, digits = 6), file.path(out_dir, "twfe_decomp.json"))
md <- c(if (have_peer) "# twfe_decomp vs twfeweights" else "# twfe_decomp vs lm() and the weights by hand (twfeweights not installed)", "",
        paste("Same R process; time: median of 3 calls; memory: R heap peak above the baseline (MB); diff: largest",
              "difference of the cell weights, the cell effects (ATT(g,t), or the implicit-weight contrasts with",
              "covariates) and the coefficient (ATT^O too without covariates). The peer's time includes did::att_gt(),",
              "which its twfe_weights() takes as input. With covariates, BMisc::drop_collinear (needs caret, not",
              "installed) was replaced by the identity, exact for these non-collinear covariates."),
        "", bench_table_md(res))
writeLines(md, file.path(out_dir, "twfe_decomp.md"))
cat(md, sep = "\n")
