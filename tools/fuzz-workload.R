# The fuzzer's workload (tools/fuzz.R), in a file of its own so that
# tests/testthat/test-fuzz-coverage.R can run the same workload and check
# that it reaches every registered .Call routine.
#
# fuzz_record(root, seed, keep) sources the package's R code from
# root/R into an environment whose `.Call` records the arguments of each
# call (up to `keep` small calls per routine, and one more for each call of
# a new shape, up to 2 keep), runs a workload of estimator,
# diagnostic and survey calls through it on small simulated data, and
# returns the recorded argument lists as a named list (names: the routines
# without their C_ prefix; every call of a routine is counted in
# attr(, "calls") whether kept or not).
#
# A routine that the workload does not reach is fuzzed with random argument
# lists only; the coverage test fails when a newly registered routine is not
# reached here. Add a workload call for it (the estimator or diagnostic that
# calls it; a routine that only the tests call, such as C_boot_weights, is
# called directly).
fuzz_record <- function(root = ".", seed = 1L, keep = 2L) {
  ns <- asNamespace("diffdiff")
  rec <- new.env()
  ncall <- new.env()
  E <- new.env(parent = ns)
  sigs <- new.env()
  E$.Call <- function(.NAME, ...) {
    nm <- sub("^C_", "", if (is.character(.NAME)) .NAME else .NAME$name)
    ncall[[nm]] <- (if (is.null(ncall[[nm]])) 0L else ncall[[nm]]) + 1L
    have <- rec[[nm]]
    if (length(have) < 2L * keep) {
      a <- list(...)
      # the call's shape: which arguments are NULL or empty (optional paths,
      # such as did_dcdh's cluster codes). Up to `keep` calls, and then one
      # more per new shape (up to 2 keep in all)
      sig <- paste(vapply(a, function(x) if (is.null(x)) "N" else if (length(x)) typeof(x) else "0", ""),
                   collapse = ",")
      new_sig <- !(sig %in% sigs[[nm]])
      # small calls (a forked child copies nothing, but every try holds a
      # mutated copy of one argument); a routine's first call up to 1e8 bytes
      sz <- sum(vapply(a, function(x) as.numeric(utils::object.size(x)), 0))
      if ((length(have) < keep || new_sig) && (sz < 2e6 || (!length(have) && sz < 1e8))) {
        rec[[nm]] <- c(have, list(a))
        sigs[[nm]] <- c(sigs[[nm]], sig)
      }
    }
    base::.Call(.NAME, ...)
  }
  for (f in list.files(file.path(root, "R"), pattern = "[.]R$", full.names = TRUE))
    sys.source(f, envir = E, keep.source = FALSE)
  # the test helpers' simulated panels
  H <- new.env(parent = globalenv())
  for (f in list.files(file.path(root, "tests", "testthat"), pattern = "^helper-.*[.]R$", full.names = TRUE))
    sys.source(f, envir = H, keep.source = FALSE)
  W <- new.env(parent = E)
  for (nm in c("sim_cs_panel", "sim_unbalanced", "sim_sdid_panel")) W[[nm]] <- H[[nm]]
  # FUZZ_DEBUG=true: report the workload calls that fail
  debug <- identical(Sys.getenv("FUZZ_DEBUG"), "true")
  W$quiet <- function(expr) tryCatch(suppressWarnings(suppressMessages(expr)), error = function(e) {
    if (debug) message("fuzz workload: ", deparse(sys.call(-4L)[[2L]])[1], ": ", conditionMessage(e))
    NULL
  })
  old <- if (exists(".Random.seed", globalenv())) get(".Random.seed", globalenv()) else NULL
  on.exit(if (is.null(old)) rm(".Random.seed", envir = globalenv()) else assign(".Random.seed", old, globalenv()),
          add = TRUE)
  thr <- dd_threads()
  on.exit(dd_threads(thr), add = TRUE)
  set.seed(seed)
  W$seed <- seed
  eval(fuzz_workload, W)
  out <- mget(ls(rec), envir = rec)
  attr(out, "calls") <- unlist(mget(ls(ncall), envir = ncall))
  out
}

# the workload: evaluated in an environment whose parent holds the package's
# functions with the recording .Call
fuzz_workload <- quote({
  dd_threads(2)
  d <- sim_cs_panel(n = 200, T = 6)
  d$d <- as.numeric(d$g > 0 & d$t >= d$g)
  d$cl <- d$id %% 15
  d$psu <- d$id %% 40; d$st <- d$id %% 4
  d$x3 <- rnorm(nrow(d)); d$tr <- as.numeric(d$g > 0); d$post <- as.numeric(d$t == 4)
  u <- sim_unbalanced(n_units = 80, n_t = 8)
  s <- sim_sdid_panel(N0 = 20, N1 = 4, T0 = 8, T1 = 3, covariates = TRUE)
  s2 <- s; s2$treat[s2$unit %in% c("u21", "u22") & s2$time >= 2007] <- 1   # staggered

  ## regressions, did_cs and its diagnostics
  quiet(did_2x2(d[d$t %in% 3:4, ], "y", "tr", "post", cluster = "cl", nboot = 49))
  quiet(did_twfe(d, "y", "id", "t", "d", xformla = ~ x1, cluster = "cl", nboot = 49, weightsname = "w"))
  quiet(did_twfe(u, "y", "id", "t", "d", fe = "firm", cluster = c("state", "t")))
  quiet(did_event(d, "y", "id", "t", "g", cluster = "id"))
  f <- quiet(did_cs(d, "y", "id", "t", "g", xformla = ~ x1, nboot = 49))
  quiet(did_cs(d, "y", "id", "t", "g", est_method = "ipw", xformla = ~ x1, nboot = 0))
  quiet(did_cs(d, "y", "id", "t", "g", panel = FALSE, xformla = ~ x1, nboot = 49))
  quiet(did_cs(d[-(1:7), ], "y", "id", "t", "g", allow_unbalanced_panel = TRUE, nboot = 0))
  if (!is.null(f)) {
    a <- quiet(aggregate.did_cs(f, "dynamic"))
    quiet(aggregate.did_cs(f, "group")); quiet(aggregate.did_cs(f, "simple"))
    if (!is.null(a)) {
      quiet(honest_did(a, type = "SD", M = c(0, 0.01)))
      quiet(honest_did(a, type = "RM", Mbar = c(0, 0.5), grid_points = 50))
      quiet(honest_did(a, type = "SD", M = 0.01, sign = "positive"))
      quiet(honest_did(a, type = "SD", M = 0.01, method = "Conditional"))
      quiet(pretrends_power(a, power = 0.5))
    }
    quiet(as.matrix.dd_ifs(f$inf))
  }
  quiet(did_sa(d, "y", "id", "t", "g", cluster = "id"))
  quiet(did_bjs(d, "y", "id", "t", "g", pretrends = TRUE))
  quiet(did_gardner(d, "y", "id", "t", "g"))
  quiet(did_stacked(d, "y", "id", "t", "g", kappa_pre = 1, kappa_post = 1))
  quiet(bacon_decomp(d, "y", "id", "t", dname = "d"))
  quiet(bacon_decomp(d, "y", "id", "t", dname = "d", xformla = ~ x3))

  ## synthetic DiD and its tools
  for (se in c("placebo", "bootstrap", "jackknife"))
    quiet(did_sdid(s, "y", "unit", "time", "treat", se = se, nboot = 5, xformla = if (se == "jackknife") ~ x1))
  sj <- quiet(did_sdid(s, "y", "unit", "time", "treat", se = "jackknife"))
  quiet(did_sdid(s2, "y", "unit", "time", "treat", se = "bootstrap", nboot = 5, staggered = TRUE))
  if (!is.null(sj)) {
    quiet(sdid_weights(sj))
    quiet(sdid_diagnostics(sj, zeta_grid = c(0.5, 2)))
    quiet(sdid_diagnostics(sj, zeta_grid = 1, loo = "jackknife"))
  }
  ## synthetic control: the nested V search (C_synth_nm), the weights and
  ## conformal inference's batched weights (C_synth_w)
  sc <- quiet(did_synth(s, "y", "unit", "time", "treat", predictors = c("x1", "x2"), placebo = FALSE))
  if (!is.null(sc)) quiet(synth_conformal(sc, n_grid = 5))

  ## survey designs: Taylor linearisation and replicate weights
  sd1 <- quiet(survey_design(d, weights = "w", strata = "st", ids = "psu", nest = TRUE))
  if (!is.null(sd1)) {
    quiet(aggregate_survey(d, "y", "t", sd1))
    quiet(did_cs(d, "y", "id", "t", "g", nboot = 0, survey = sd1))
    quiet(did_twfe(d, "y", "id", "t", "d", survey = sd1))
  }
  rw <- matrix(runif(nrow(d) * 8, 0.5, 1.5), nrow(d), 8)
  rw[d$t > 3, ] <- rw[d$t <= 3, ][match(d$id[d$t > 3], d$id[d$t <= 3]), ]   # repeated rows: the rank from distinct rows
  dd <- cbind(d, as.data.frame(rw))
  sd2 <- quiet(survey_design(dd, weights = "w", repweights = paste0("V", 1:8), type = "bootstrap"))
  if (!is.null(sd2)) {
    quiet(aggregate_survey(dd, "y", "t", sd2))
    quiet(did_twfe(dd, "y", "id", "t", "d", survey = sd2))
    quiet(did_twfe(dd, "y", "id", "t", "d", xformla = ~ x1, survey = sd2))
  }

  ## the estimators of the later rounds, each on a small simulated panel
  sg <- dd_sim_staggered(n_units = 60, n_periods = 6)
  sg$cl <- sg$id %% 12; sg$w <- 0.5 + (sg$id %% 5) / 4
  quiet(did_ddd(dd_sim_ddd(n_units = 120, n_periods = 5), "y", "id", "time", "first_treat", "eligible", nboot = 19))
  quiet(did_etwfe(sg, "y", "id", "time", "first_treat"))
  quiet(did_lpdid(sg, "y", "id", "time", "first_treat", pre_window = 2, post_window = 2, reweight = TRUE, pmd = "max"))
  sg$xz <- cos(seq_len(nrow(sg)))
  quiet(did_lpdid(sg, "y", "id", "time", "first_treat", xformla = ~ xz, pre_window = 2, post_window = 2, reweight = TRUE))
  sg$lat <- 30 + (sg$id %% 7) / 2; sg$lon <- -100 + (sg$id %/% 7) / 2
  quiet(did_twfe(sg, "y", "id", "time", "D", vcov = dd_conley(80, kernel = "bartlett", lag = 1)))
  quiet(did_twfe(sg, "y", "id", "time", "D", cluster = "cl", vcov = dd_conley(80)))
  quiet(did_spillover(sg, "y", "id", "time", "first_treat", rings = c(0, 60, 120), event_study = TRUE))
  sg$don <- as.integer((sg$time + sg$id) %% 4 < 2)
  quiet(did_lpdid(sg, "y", "id", "time", dname = "don", pre_window = 2, post_window = 2, weightsname = "w",
                  non_absorbing = "effect_stabilization", stabilization_window = 1))
  sg$yc <- rpois(nrow(sg), exp(0.2 + 0.1 * sg$D)); sg$yb <- as.numeric(sg$y > 0)
  quiet(did_etwfe(sg, "yc", "id", "time", "first_treat", family = "poisson"))
  quiet(did_etwfe(sg, "yb", "id", "time", "first_treat", family = "logit", cluster = "cl"))
  quiet(did_edid(sg, "y", "id", "time", "first_treat", cluster = "cl", nboot = 19))
  quiet(did_cic(sg, "y", "id", "time", "first_treat", probs = c(0.25, 0.5), nboot = 19))
  quiet(did_cic(sg, "y", "id", "time", "first_treat", method = "qdid", cluster = "cl", nboot = 9))
  sg$xc <- sin(sg$id) + (sg$first_treat > 0) / 3
  quiet(did_cic(sg, "y", "id", "time", "first_treat", xformla = ~ xc, probs = c(0.25, 0.5), nboot = 5))
  quiet(did_cic(sg, "y", "id", "time", "first_treat", xformla = ~ xc, method = "qdid", panel = FALSE, nboot = 3))
  rg <- matrix(runif(60 * 6, 0.5, 1.5), 60, 6)[sg$id, ]
  sgr <- cbind(sg, as.data.frame(rg))
  sdr <- quiet(survey_design(sgr, weights = "w", repweights = paste0("V", 1:6), type = "JK1", scale = 5 / 6))
  if (!is.null(sdr)) quiet(did_etwfe(sgr, "y", "id", "time", "first_treat", survey = sdr))
  quiet(did_edid(sg, "y", "id", "time", "first_treat", pt_assumption = "post", weightsname = "w"))
  quiet(did_rs(sg, "y", "id", "time", "first_treat", nperm = 19))
  quiet(did_rs(sg, "y", "id", "time", "first_treat", estimand = "eventstudy", event_time = 0:1, nperm = 9))
  co <- dd_sim_continuous(n_units = 150, n_periods = 4)
  quiet(did_dose(co, "y", "id", "time", "first_treat", "dose", degree = 2, nboot = 19))
  co2 <- dd_sim_continuous(n_units = 150, n_periods = 2, cohorts = 2)
  quiet(did_dose(co2, "y", "id", "time", "first_treat", "dose", dose_est_method = "cck", nboot = 0))
  rv <- dd_sim_reversible(n_units = 60, n_periods = 6)
  rv$cl <- rv$id %% 10
  quiet(did_dcdh(rv, "y", "id", "time", "D", effects = 2, placebo = 1))
  quiet(did_dcdh(rv, "y", "id", "time", "D", effects = 2, cluster = "cl", less_conservative_se = TRUE))
  quiet(twfe_weights(rv, "y", "id", "time", "D"))
  quiet(twfe_weights(rv, "y", "id", "time", "D", type = "fdTR"))
  G <- 150; dose <- ifelse(runif(G) < 0.05, 0, rexp(G, 2))
  hd <- expand.grid(t = 1:4, g = 1:G)[, c("g", "t")]
  hd$D <- ifelse(hd$t >= 3, dose[hd$g], 0)
  hd$y <- rnorm(G)[hd$g] + 0.3 * hd$t + hd$D * (1 + 0.5 * dose[hd$g]) + rnorm(nrow(hd))
  quiet(did_had(hd, "y", "g", "t", "D", effects = 2, placebo = 1, yatchew = TRUE))
  quiet(did_had(hd, "y", "g", "t", "D", bwselect = "mse-rot"))
  quiet(did_had(hd, "y", "g", "t", "D", bwselect = "imse-dpi", kernel = "tri"))
  quiet(did_had(hd, "y", "g", "t", "D", effects = 2, placebo = 1, stute = TRUE, stute_nboot = 49))
  fa <- dd_sim_factor(n_units = 20, n_periods = 10, n_treated = 3)
  quiet(did_trop(fa, "y", "id", "time", "D", lambda_time = 0.5, lambda_unit = 0.5, lambda_nn = 0.1, nboot = 5))
  quiet(did_trop(fa, "y", "id", "time", "D", method = "global", lambda_time = 0.5, lambda_unit = 0.5,
                 lambda_nn = Inf, nboot = 5))
  quiet(dd_power(effect = 0.2, n = 200))
  es <- quiet(aggregate(did_cs(sg, "y", "id", "time", "first_treat", nboot = 0), "dynamic"))
  if (!is.null(es)) {
    quiet(honest_did(es, type = "SD", M = 0.02, method = "C-F"))
    quiet(equivalence_test(es, margin = 0.5))
  }
  rdd <- data.frame(x = runif(300, -1, 1), w = runif(300))
  rdd$y <- rdd$x + 0.5 * (rdd$x >= 0) + rnorm(300)
  quiet(rd_plot(rdd, "y", "x", weightsname = "w", kernel = "tri", plot = FALSE))
  quiet(rd_plot(rdd, "y", "x", binselect = "qs", p = 2, plot = FALSE))
  rdd$t <- as.numeric(runif(300) < 0.3 + 0.4 * (rdd$x >= 0)); rdd$g <- sample(1:20, 300, replace = TRUE)
  quiet(rd_robust(rdd, "y", "x"))
  quiet(rd_robust(rdd, "y", "x", fuzzy = "t", covs = ~ w, cluster = "g", vce = "hc1", bwselect = "msecomb2"))
  quiet(rd_robust(rdd, "y", "x", vce = "hc3", weightsname = "w", p = 2, h = 0.6, b = 0.9))
  quiet(did_dml(sg, "y", "id", "time", "first_treat", nboot = 0, seed = 1))
  quiet(rd_density(rdd, "x"))
  quiet(rd_density(rdd, "x", fitselect = "restricted", vce = "plugin", p = 1))
  # the routines that only the tests call
  quiet(.Call(C_boot_weights, 25L, 9L, 1L))
  quiet(.Call(C_tn_quantile, c(0.1, 0.5, 0.9), c(-1, -Inf, 0), c(1, 2, Inf)))
  quiet(.Call(C_rq, cbind(1, c(0.3, 1.2, 2.5, 0.1, 4, 3.3, 2.2)), c(1, 3, 2, 0, 5, 4, 2.5), c(1, 2, 0, 1, 1, 3, 1),
              c(0.1, 0.5, 0.9)))
  quiet(.Call(C_synth_vloss, matrix(c(1, 2, 3, 0.5, 1, 2), 2), c(4, 1), matrix(c(1, 2, 2, 3, 4, 1), 2), c(3, 2),
              c(0.6, 0.4), 0:1))
  NULL
})
