# Coverage of design-based (Taylor linearisation) standard errors with a
# survey_design(): did_2x2 and did_twfe, t intervals with the design's
# degrees of freedom (svyglm's).
#
# Design "strat-cluster": 5 strata x 8 PSUs x 15 units; sampling weights 1..5
# by stratum; treatment assigned to 4 of the 8 PSUs in each stratum; PSU x
# period shocks (AR(1)) and unit AR(1) errors; effects differ by stratum
# (0.75 to 1.75). Estimand: the weighted ATT over treated post-period
# observations (weights = sampling weights), as the weighted regression
# targets it. 2x2: periods 1-2 (adoption at 2); TWFE: 6 periods (adoption
# at 4).
#
# Run: R_LIBS=/tmp/lib-coverage Rscript bench/coverage/survey.R

source("bench/coverage/helpers.R")
design <- "strat-cluster"

dgp_survey <- function(T, T0, H = 5, P = 8, m = 15, rho = 0.5) {
  npsu <- H * P; N <- npsu * m
  psu <- rep(seq_len(npsu), each = m)
  h <- (psu - 1) %/% P + 1
  trp <- ((psu - 1) %% P) < P / 2                # the first half of the PSUs of each stratum
  ec <- ar1(npsu, T, rho, 0.5)
  e <- ar1(N, T, rho, 1)
  a <- stats::rnorm(N, 0.2 * h)
  id <- rep(seq_len(N), each = T); t <- rep(seq_len(T), N)
  hi <- rep(h, each = T); pi <- rep(psu, each = T)
  d <- as.integer(rep(trp, each = T) & t > T0)
  tau_h <- 0.5 + 0.25 * hi
  y <- rep(a, each = T) + 0.1 * t + ec[cbind(pi, t)] + as.vector(t(e)) + d * tau_h
  data.frame(id = id, t = t, stratum = hi, psu = pi, w = hi, treated = as.integer(rep(trp, each = T)),
             post = as.integer(t > T0), d = d, y = y, tau = d * tau_h)
}

one_draw <- function(r) {
  set.seed(cov_seed(paste(design, 2), r))
  d <- dgp_survey(T = 2, T0 = 1)
  truth <- sum(d$w * d$tau * d$d) / sum(d$w * d$d)
  des <- survey_design(d, weights = ~ w, strata = ~ stratum, ids = ~ psu)
  tb <- tab_rows(did_2x2(d, "y", "treated", "post", survey = des), "ATT")
  out <- list(cov_rows("did_2x2", "survey design (Taylor linearisation)", design, "weighted ATT", "ATT", truth,
                       tb$estimate, tb$conf.low, tb$conf.high, tb$std.error))
  set.seed(cov_seed(paste(design, 6), r))
  d <- dgp_survey(T = 6, T0 = 3)
  truth <- sum(d$w * d$tau * d$d) / sum(d$w * d$d)
  des <- survey_design(d, weights = ~ w, strata = ~ stratum, ids = ~ psu)
  tb <- tab_rows(did_twfe(d, "y", "id", "t", "d", survey = des), "ATT")
  c(out, list(cov_rows("did_twfe", "survey design (Taylor linearisation)", design, "weighted ATT", "ATT", truth,
                       tb$estimate, tb$conf.low, tb$conf.high, tb$std.error))) |> do.call(what = rbind)
}

st <- cov_study("survey", cov_nsim(), one_draw)
cov_write(st)
