# Scenario 2: a brand-awareness survey (diff-diff's "brand_awareness_survey"):
# a 2x2 DiD without and with the stratified, clustered design (Taylor
# linearisation with finite-population corrections), with JK1 replicate
# weights (one replicate per PSU), three outcomes, a pre-trend check, a
# placebo 2x2 on the pre-periods, and an event study under the design with
# a HonestDiD relative-magnitudes grid. 12 periods, adoption in period 7;
# 200 / 500 / 1,000 units in 10 / 15 / 20 strata of 4 / 6 / 8 PSUs.
source(file.path(Sys.getenv("SCENARIO_DIR", dirname(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE)[1]))), "harness.R"), local = TRUE)

brand_awareness_survey_scales <- list(small = list(n_units = 200, n_strata = 10, psu = 4),
                                      medium = list(n_units = 500, n_strata = 15, psu = 6),
                                      large = list(n_units = 1000, n_strata = 20, psu = 8))

# diff-diff's design (its generate_survey_did_data with these arguments):
# units in contiguous blocks of strata, PSUs round-robin within stratum,
# weights 1 to 4 rising with the stratum, 200 PSUs per stratum in the
# population; the last half of the units adopt in period 7 with an effect
# of 2 growing 20% per period; PSU and PSU x period effects; JK1 replicate
# weights dropping one PSU each
brand_awareness_survey_data <- function(scale, seed = 42) {
  cfg <- brand_awareness_survey_scales[[scale]]
  set.seed(seed)
  N <- cfg$n_units; S <- cfg$n_strata; P <- cfg$psu; T <- 12
  sizes <- N %/% S + (seq_len(S) <= N %% S)            # the first N %% S strata one unit larger
  unit <- seq_len(N) - 1L
  stratum <- rep(seq_len(S) - 1L, sizes)
  psu <- stratum * P + (sequence(sizes) - 1L) %% P
  w <- 1 + 3 * stratum / (S - 1)
  ft <- ifelse(unit < N %/% 2, 0, 7)
  psu_re <- stats::rnorm(S * P, 0, 1.5)
  psu_t <- matrix(stats::rnorm(S * P * T, 0, 0.75), S * P, T)
  ufe <- stats::rnorm(N)
  d <- data.frame(unit = rep(unit, T), period = rep(seq_len(T), each = N), stratum = rep(stratum, T),
                  psu = rep(psu, T), fpc = 200, weight = rep(w, T), first_treat = rep(ft, T))
  te <- ifelse(d$first_treat == 7 & d$period >= 7, 2 * (1 + 0.2 * (d$period - 7)), 0)
  d$outcome <- ufe[d$unit + 1] + psu_re[d$psu + 1] + psu_t[cbind(d$psu + 1, d$period)] + 0.5 * d$period + te +
    stats::rnorm(nrow(d), 0, 0.5)
  K <- S * P
  R <- outer(d$psu, seq_len(K) - 1L, "!=") * d$weight * K / (K - 1)
  colnames(R) <- paste0("rep_", seq_len(K) - 1L)
  d <- cbind(d, R)
  d$consideration <- d$outcome + stats::rnorm(nrow(d), 0, 0.4)
  d$purchase_intent <- d$outcome * 0.6 + stats::rnorm(nrow(d), 0, 0.3)
  d$post <- as.integer(d$period >= 7)
  d$treat_unit <- as.integer(d$first_treat > 0)
  d
}

brand_awareness_survey_phases <- function() list(
  naive_fit_no_survey_design = function(res)
    res$naive <- did_2x2(res$data, "outcome", "treat_unit", "post", vcov = "HC1"),
  tsl_strata_psu_fpc = function(res) {
    res$des <- survey_design(res$data, weights = ~weight, strata = ~stratum, ids = ~psu, fpc = ~fpc, nest = TRUE)
    res$tsl <- did_2x2(res$data, "outcome", "treat_unit", "post", survey = res$des)
  },
  replicate_weights_jk1 = function(res) {
    rw <- grep("^rep_", names(res$data), value = TRUE)
    res$rep <- did_2x2(res$data, "outcome", "treat_unit", "post",
                       survey = survey_design(res$data, weights = ~weight, repweights = rw, type = "JK1"))
  },
  multi_outcome_loop_3_metrics = function(res)
    res$multi <- lapply(c("outcome", "consideration", "purchase_intent"), function(y)
      did_2x2(res$data, y, "treat_unit", "post", survey = res$des)),
  check_parallel_trends = function(res) {
    # the event study's pre-period coefficients (no design) and their joint
    # Wald test
    es <- did_event(res$data, "outcome", "unit", "period", "first_treat")
    ct <- es$coeftable[grepl("^event::-", es$coeftable$term) & !is.na(es$coeftable$std.error), ]
    V <- es$vcov[ct$term, ct$term]
    W <- drop(crossprod(ct$estimate, solve(V, ct$estimate)))
    res$pretrend <- c(wald = W, df = nrow(ct), p = stats::pchisq(W, nrow(ct), lower.tail = FALSE))
  },
  placebo_refit_pre_period = function(res) {
    pre <- res$data[res$data$period < 7, ]
    pre$placebo_post <- as.integer(pre$period >= 4)
    res$placebo <- did_2x2(pre, "outcome", "treat_unit", "placebo_post",
                           survey = survey_design(pre, weights = ~weight, strata = ~stratum, ids = ~psu, fpc = ~fpc,
                                                  nest = TRUE))
  },
  event_study_plus_honest_did = function(res) {
    res$es <- did_event(res$data, "outcome", "unit", "period", "first_treat", survey = res$des)
    res$honest <- honest_did(res$es, type = "RM", Mbar = c(0.5, 1, 1.5), breakdown = FALSE)
    res$headline <- list(naive_att = coef(res$naive)[["ATT"]], tsl_att = coef(res$tsl)[["ATT"]],
                         tsl_se = res$tsl$coeftable$std.error[res$tsl$coeftable$term == "ATT"],
                         jk1_se = res$rep$coeftable$std.error[res$rep$coeftable$term == "ATT"])
  })

scenario_main("brand_awareness_survey")
