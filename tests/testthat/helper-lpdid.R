# Generators of diff-diff's LP-DiD test panels (benchmarks/R/generate_lpdid_golden.R and
# generate_lpdid_survey_golden.R in igerber/diff-diff, R's RNG, the same draws in the same
# order), regenerated here so that its published numbers can be checked on the same data.
# lp_panel60: seed 20260629, 60 units x 12 periods (cohorts 4 and 8), covariate x, one
# interior gap; lp_panel_na: seed 424242, 60 units x 14 periods with a non-absorbing
# treatment (18 absorbing, 12 on-off-on, 10 always, 20 never treated); lp_panel_svy: seed
# 20260630, 140 units x 12 periods in 4 strata of 3-4 PSUs with weights and fpc.
lp_panel60 <- function() {
  set.seed(20260629L)
  cohort <- c(rep(4L, 12), rep(8L, 10), rep(0L, 38))
  ufe <- stats::rnorm(60, 0, 2); tfe <- stats::rnorm(12, 0, 1)
  rows <- list()
  for (u in 1:60) {
    g <- cohort[u]; ep <- 0
    for (t in 1:12) {
      eps <- 0.4 * ep + stats::rnorm(1); ep <- eps
      tr <- as.integer(g > 0 && t >= g)
      eff <- if (tr == 1) (if (g == 4) 2 else 3.5) + (if (g == 4) 0.5 else 0.2) * (t - g) else 0
      x <- stats::rnorm(1)
      rows[[length(rows) + 1L]] <- c(u, t, tr, ufe[u] + tfe[t] + eff + 0.7 * x + eps, g, x)
    }
  }
  d <- as.data.frame(do.call(rbind, rows)); names(d) <- c("unit", "time", "treat", "y", "g", "x")
  d[!(d$unit == 60 & d$time == 7), ]
}
lp_panel_na <- function() {
  set.seed(424242L)
  TT <- 14L; out <- list(); uid <- 0L
  add <- function(n, gen) for (i in seq_len(n)) {
    uid <<- uid + 1L
    ufe <- stats::rnorm(1, 0, 1.5); dp <- gen(); e <- stats::rnorm(TT, 0, 0.3)
    out[[uid]] <<- data.frame(unit = uid, time = 1:TT, treat = as.integer(dp), y = ufe + 0.4 * (1:TT) + 2 * dp + e)
  }
  add(18, function() as.integer((1:TT) >= sample(4:8, 1)))
  add(12, function() { g <- sample(3:6, 1); ex <- g + sample(2:3, 1); re <- ex + sample(2:4, 1)
    d <- as.integer((1:TT) >= g); d[(1:TT) >= ex] <- 0L; if (re <= TT) d[(1:TT) >= re] <- 1L; d })
  add(10, function() rep(1L, TT))
  add(20, function() rep(0L, TT))
  do.call(rbind, out)
}
lp_panel_svy <- function() {
  set.seed(20260630L)
  Tt <- 12L; sizes <- c(30L, 30L, 40L, 40L); nps <- c(3L, 3L, 4L, 4L)
  wh <- c(5, 10, 7.5, 15); fh <- c(6L, 6L, 8L, 8L)
  tfe <- stats::rnorm(Tt, 0, 1)
  rows <- list(); unit <- 0L; gp <- 0L
  for (h in 1:4) {
    for (i in 0:(sizes[h] - 1L)) {
      unit <- unit + 1L; psu <- gp + (i %% nps[h]) + 1L; fr <- i / sizes[h]
      g <- if (fr < 0.25) 5L else if (fr < 0.5) 8L else 0L
      ufe <- stats::rnorm(1, 0, 2); ep <- 0
      for (t in 1:Tt) {
        eps <- 0.4 * ep + stats::rnorm(1); ep <- eps; tr <- as.integer(g > 0 && t >= g)
        eff <- if (tr == 1) (if (g == 5L) 2 else 3.5) + (if (g == 5L) 0.5 else 0.2) * (t - g) else 0
        x <- stats::rnorm(1)
        rows[[length(rows) + 1L]] <- c(unit, t, tr, ufe + tfe[t] + eff + 0.7 * x + eps, x, h, psu, fh[h], wh[h], g)
      }
    }
    gp <- gp + nps[h]
  }
  d <- as.data.frame(do.call(rbind, rows))
  names(d) <- c("unit", "time", "treat", "y", "x", "stratum", "psu", "fpc", "weight", "g")
  d
}
