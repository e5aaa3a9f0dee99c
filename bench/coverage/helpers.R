# Shared by the Monte Carlo coverage scripts in bench/coverage/: settings,
# data-generating processes (DGPs), the simulation loop and the summaries.
# Each script sources this file, defines one function per draw that returns
# the intervals it saw (cov_rows()), and calls cov_study().
#
# Settings (environment variables):
#   COVERAGE_NSIM         draws per interval for the standard designs (default
#                         2000); expensive intervals use a stated fraction
#   COVERAGE_MAX_MINUTES  wall-clock cap per script (default 40): a script
#                         stops early when it is reached and reports the
#                         draws it completed
#   COVERAGE_OUT          directory for the per-script results (default
#                         bench/coverage/results)
#   R_LIBS                the library holding the diffdiff to test
#
# Every draw r of a design sets the seed cov_seed(design, r) before the data
# are generated, so two scripts that use the same design see the same data
# set in draw r (report.R compares their standard errors draw by draw).

suppressPackageStartupMessages(library(diffdiff))
invisible(dd_threads(1))   # one thread: the machine is shared; results do not depend on it

cov_nsim <- function(frac = 1) {
  n <- suppressWarnings(as.numeric(Sys.getenv("COVERAGE_NSIM", "2000")))
  if (!is.finite(n) || n < 1) stop("COVERAGE_NSIM must be a positive number")
  max(10L, as.integer(round(n * frac)))
}

cov_out_dir <- function() {
  d <- Sys.getenv("COVERAGE_OUT", file.path("bench", "coverage", "results"))
  dir.create(d, showWarnings = FALSE, recursive = TRUE)
  d
}

# fixed seeds: one per design and draw, independent of the script
cov_seed <- function(design, r) {
  h <- sum(utf8ToInt(design) * seq_along(utf8ToInt(design))) %% 9973L
  as.integer(h * 100000L + r)
}

# ---------------------------------------------------------------------------
# Data-generating processes
# ---------------------------------------------------------------------------

# AR(1) errors, n units x T periods, stationary start
ar1 <- function(n, T, rho, sigma = 1) {
  e <- matrix(0, n, T)
  e[, 1] <- stats::rnorm(n, 0, sigma / sqrt(1 - rho^2))
  for (t in seq_len(T)[-1]) e[, t] <- rho * e[, t - 1] + stats::rnorm(n, 0, sigma)
  e
}

# Staggered adoption. Units draw their cohort independently with population
# probabilities `probs` (names: the cohorts' first treated periods, "0" for
# never treated), so realised cohort shares vary from draw to draw. Outcome
#   y_it = a_i + lambda_t + tau(g_i, t - g_i) 1{t >= g_i} + e_it,
# e_it AR(1) within unit (rho, innovation sd sigma), a_i ~ N(0.3 k_g, 1)
# (cohort-dependent levels; parallel trends hold), lambda_t the calendar
# effects (alevel = 0: no cohort-dependent levels). tau is a matrix: rows cohorts (names), columns event times 0..T-1.
# Returns the long panel with the potential-outcome columns (`tau`, the
# effect in the cell; `y0sig`, the untreated outcome without noise) and the
# design as attributes.
dgp_stagger <- function(N, T, probs, tau, lambda, rho = 0.5, sigma = 1, alevel = 0.3) {
  lev <- as.numeric(names(probs))
  g <- lev[sample.int(length(probs), N, replace = TRUE, prob = probs)]
  kg <- match(g, lev) - 1
  a <- stats::rnorm(N, alevel * kg, 1)
  e <- ar1(N, T, rho, sigma)
  id <- rep(seq_len(N), each = T); t <- rep(seq_len(T), N)
  gi <- rep(g, each = T)
  ev <- t - gi
  treated <- gi > 0 & ev >= 0
  eff <- numeric(length(t))
  eff[treated] <- tau[cbind(match(gi[treated], as.numeric(rownames(tau))), ev[treated] + 1L)]
  y0sig <- rep(a, each = T) + lambda[t]
  y <- y0sig + eff + as.vector(t(e))
  d <- data.frame(id = id, t = t, g = gi, d = as.integer(treated), y = y, tau = eff, y0sig = y0sig)
  attr(d, "probs") <- probs
  attr(d, "tau") <- tau
  d
}

# Heterogeneous dynamic effects: tau(g, e) = base_g + slope_g * e
tau_linear <- function(cohorts, base, slope, T) {
  m <- outer(base, rep(1, T)) + outer(slope, 0:(T - 1))
  dimnames(m) <- list(cohorts, 0:(T - 1))
  m
}

# The staggered designs shared by the event-study scripts.
#  "stag": 300 units, 8 periods, cohorts 3/4/6 (20% each) and 40% never
#          treated, effects differing by cohort and event time, nonlinear
#          calendar effects, AR(1) errors (rho 0.5)
#  "stag-homog": the same with one effect path for all cohorts, no calendar
#          effects and no cohort-dependent levels: sub-experiments of the
#          stacked estimator do not differ (its contrast)
#  "stag-calendar": "stag-homog" with the calendar effects and cohort levels
#          of "stag" (sub-experiments differ in trends and levels only)
#  "stag-effects": "stag-homog" with the cohort-specific effects of "stag"
design_stagger <- function(name) {
  het <- tau_linear(c(3, 4, 6), base = c(1.0, 0.0, 2.0), slope = c(0.4, 0.2, -0.2), 8)
  hom <- tau_linear(c(3, 4, 6), base = c(1, 1, 1), slope = c(0.2, 0.2, 0.2), 8)
  cal <- c(0, 0.5, 0.2, 1.0, 0.8, 1.5, 1.2, 2.0)
  pr <- c(`3` = 0.2, `4` = 0.2, `6` = 0.2, `0` = 0.4)
  switch(name,
    stag = list(N = 300, T = 8, probs = pr, tau = het, lambda = cal, rho = 0.5, alevel = 0.3),
    `stag-homog` = list(N = 300, T = 8, probs = pr, tau = hom, lambda = rep(0, 8), rho = 0.5, alevel = 0),
    `stag-calendar` = list(N = 300, T = 8, probs = pr, tau = hom, lambda = cal, rho = 0.5, alevel = 0.3),
    `stag-effects` = list(N = 300, T = 8, probs = pr, tau = het, lambda = rep(0, 8), rho = 0.5, alevel = 0),
    stop("unknown staggered design ", name))
}

draw_stagger <- function(name, r) {
  p <- design_stagger(name)
  set.seed(cov_seed(name, r))
  dgp_stagger(p$N, p$T, p$probs, p$tau, p$lambda, p$rho, alevel = p$alevel)
}

# Clustered designs for the 2x2 and static TWFE regressions: G clusters of m
# units, `Gt` of them treated (the first Gt: treatment is assigned by
# cluster), T periods with adoption at period T0 + 1 for the treated
# clusters. Errors: unit effect, a cluster x period shock (AR(1), sd
# sigma_c) and an idiosyncratic AR(1) term. Effect: tau_e for event time e
# (the same in every treated cluster).
dgp_cluster <- function(G, m, Gt, T, T0, tau_e, rho = 0.5, sigma_c = 0.5, sigma = 1) {
  N <- G * m
  cl <- rep(seq_len(G), each = m)
  a <- stats::rnorm(N)
  ec <- ar1(G, T, rho, sigma_c)
  e <- ar1(N, T, rho, sigma)
  id <- rep(seq_len(N), each = T); t <- rep(seq_len(T), N)
  cli <- rep(cl, each = T)
  tr <- as.integer(cli <= Gt)
  post <- as.integer(t > T0)
  eff <- ifelse(tr == 1 & post == 1, tau_e[pmax(t - T0, 1)], 0)
  y <- rep(a, each = T) + 0.2 * t + ec[cbind(cli, t)] + as.vector(t(e)) + eff
  data.frame(id = id, t = t, cluster = cli, treated = tr, post = post, d = tr * post, y = y, tau = eff)
}

design_cluster <- function(name) {
  switch(name,
    # 2 of 10 clusters treated, 30 units each
    `few-treated 2/10` = list(G = 10, m = 30, Gt = 2),
    # 5 of 10 clusters treated
    `balanced 5/10` = list(G = 10, m = 30, Gt = 5),
    stop("unknown cluster design ", name))
}

# Factor model for synthetic DiD: N0 controls and N1 treated units, T0 pre
# and T1 post periods, y_it = a_i + b_t + sum_k l_ik f_tk + e_it (AR(1)),
# effect tau_t in the post periods. Controls' loadings are N(0, 1); the
# treated units' loadings are `edge` (a quantile of the controls' loading
# distribution, e.g. 0.95: at the edge of the controls) or, with edge = NA,
# drawn like the controls'.
dgp_factor <- function(N0, N1, T0, T1, k = 2, edge = NA, tau = 1, rho = 0.5, sigma = 1, fsd = 1) {
  N <- N0 + N1; T <- T0 + T1
  L <- matrix(stats::rnorm(N * k), N, k)
  if (!is.na(edge)) L[N0 + seq_len(N1), ] <- matrix(stats::qnorm(edge), N1, k) +
    matrix(stats::rnorm(N1 * k, 0, 0.1), N1, k)
  F <- ar1(k, T, 0.7, fsd)            # persistent factors
  b <- cumsum(stats::rnorm(T, 0.1, 0.3))
  a <- stats::rnorm(N)
  Y0 <- outer(a, rep(1, T)) + outer(rep(1, N), b) + L %*% F + ar1(N, T, rho, sigma)
  tau_t <- rep_len(tau, T1)
  Y <- Y0
  Y[N0 + seq_len(N1), T0 + seq_len(T1)] <- Y[N0 + seq_len(N1), T0 + seq_len(T1)] +
    matrix(tau_t, N1, T1, byrow = TRUE)
  d <- data.frame(id = rep(seq_len(N), each = T), t = rep(seq_len(T), N), y = as.vector(t(Y)),
                  d = as.integer(rep(seq_len(N) > N0, each = T) & rep(seq_len(T) > T0, N)))
  attr(d, "att") <- mean(tau_t)
  d
}

# ---------------------------------------------------------------------------
# Truths computed from the potential outcomes
# ---------------------------------------------------------------------------

# Cohort shares: population (the DGP's probabilities among treated cohorts)
# and realised (the draw's unit counts)
cohort_shares <- function(d) {
  probs <- attr(d, "probs")
  coh <- as.numeric(rownames(attr(d, "tau")))
  pop <- probs[as.character(coh)]; names(pop) <- coh
  gu <- d$g[d$t == 1]
  real <- vapply(coh, function(g) sum(gu == g), numeric(1)); names(real) <- coh
  list(pop = pop, real = real, cohorts = coh)
}

# Share-weighted average of tau(g, e) over the (g, e) cells in `cells` (a
# data frame with columns g, e), weights w[g] (cells of one cohort count
# once each)
wavg_cells <- function(cells, w, tau) {
  if (!nrow(cells)) return(NA_real_)
  ww <- w[as.character(cells$g)]
  v <- tau[cbind(match(cells$g, as.numeric(rownames(tau))), cells$e + 1L)]
  sum(ww * v) / sum(ww)
}

# ---------------------------------------------------------------------------
# Collecting intervals and summarising
# ---------------------------------------------------------------------------

# One data frame of intervals seen in a draw. `band` = TRUE marks the terms
# of one simultaneous band (covered only if all its terms are covered);
# otherwise coverage is averaged over the terms of the row group.
cov_rows <- function(estimator, interval, design, estimand, term, truth, estimate, lo, hi,
                     se = NA_real_, band = FALSE, nominal = 0.95) {
  n <- length(term)
  if (!n) return(NULL)
  data.frame(estimator = estimator, interval = interval, design = design, estimand = estimand,
             term = as.character(term), truth = as.numeric(truth), estimate = as.numeric(estimate),
             lo = as.numeric(lo), hi = as.numeric(hi), se = rep_len(as.numeric(se), n),
             band = band, nominal = nominal, stringsAsFactors = FALSE)
}

# Runs draw_fun(r) for r = 1..nsim (each returning cov_rows() data frames
# bound together), with a wall-clock cap. Errors in a draw are counted and
# the draw is skipped (reported in the summary as failures).
cov_study <- function(name, nsim, draw_fun, note = "") {
  cap <- as.numeric(Sys.getenv("COVERAGE_MAX_MINUTES", "40")) * 60
  t0 <- proc.time()[["elapsed"]]
  out <- vector("list", nsim)
  fails <- character()
  done <- 0L
  for (r in seq_len(nsim)) {
    res <- tryCatch(suppressMessages(suppressWarnings(draw_fun(r))),
                    error = function(e) structure(conditionMessage(e), class = "cov_fail"))
    if (inherits(res, "cov_fail")) fails <- c(fails, res) else out[[r]] <- cbind(draw = r, res)
    done <- r
    el <- proc.time()[["elapsed"]] - t0
    if (r %% 100 == 0 || r == nsim)
      message(sprintf("[%s] %d/%d draws, %.1f min", name, r, nsim, el / 60))
    if (el > cap && r < nsim) {
      message(sprintf("[%s] time cap (%.0f min) reached after %d of %d draws", name, cap / 60, r, nsim))
      break
    }
  }
  raw <- do.call(rbind, out[seq_len(done)])
  secs <- proc.time()[["elapsed"]] - t0
  if (length(fails)) message(sprintf("[%s] %d draw(s) failed; first error: %s", name, length(fails), fails[1]))
  list(name = name, raw = raw, planned = nsim, done = done, failed = length(fails),
       fail_msg = unique(fails), seconds = secs, note = note)
}

# Coverage by (estimator, interval, design, estimand): per draw, the share
# of the group's terms covered (or, for a band, whether all are covered);
# coverage is the mean over draws, its MC SE the sd over draws / sqrt(draws)
# (binomial for a single term or a band), width the mean interval width,
# `wide` the share of intervals more than 100 times wider than the median
# one (unbounded in practice).
cov_summary <- function(raw) {
  key <- c("estimator", "interval", "design", "estimand")
  raw <- raw[raw$estimand != "diagnostic", , drop = FALSE]   # e.g. critical values (see the -terms file)
  raw$covered <- raw$lo <= raw$truth & raw$truth <= raw$hi
  raw$width <- raw$hi - raw$lo
  grp <- interaction(raw[key], drop = TRUE, lex.order = TRUE)
  res <- lapply(split(raw, grp), function(x) {
    # a missing interval counts as not covering; an unbounded one ((-Inf, Inf),
    # the wild bootstrap's test inversion when no null value is rejected)
    # covers (stated in the report)
    ok <- !is.na(x$lo) & !is.na(x$hi) & is.finite(x$truth)
    x$covered[!ok] <- FALSE
    inf_w <- sum(!is.finite(x$width))
    per_draw <- if (x$band[1]) tapply(x$covered, x$draw, all) else tapply(x$covered, x$draw, mean)
    nd <- length(per_draw)
    pterm <- tapply(x$covered, x$term, mean)
    data.frame(x[1, key], nominal = x$nominal[1], band = x$band[1], terms = length(unique(x$term)),
               coverage = mean(per_draw), mc_se = stats::sd(per_draw) / sqrt(nd),
               width = mean(x$width[is.finite(x$width)]), median_width = stats::median(x$width), draws = nd,
               min_term = min(pterm), max_term = max(pterm),
               wide = mean(!is.finite(x$width) | x$width > 100 * stats::median(x$width)),
               nonfinite = sum(!ok), stringsAsFactors = FALSE)
  })
  out <- do.call(rbind, res)
  rownames(out) <- NULL
  # a single term (or a band) is a Bernoulli draw: binomial MC SE
  b <- out$terms == 1 | out$band
  out$mc_se[b] <- sqrt(out$coverage[b] * (1 - out$coverage[b]) / out$draws[b])
  out
}

# Per-term coverage and means (for the detail files); for diagnostic rows
# `estimate` is the mean of the recorded value
cov_terms <- function(raw) {
  key <- c("estimator", "interval", "design", "estimand", "term")
  raw$covered <- is.finite(raw$lo) & is.finite(raw$hi) & raw$lo <= raw$truth & raw$truth <= raw$hi
  raw$width <- raw$hi - raw$lo
  res <- lapply(split(raw, interaction(raw[key], drop = TRUE, lex.order = TRUE)), function(x)
    data.frame(x[1, key], coverage = mean(x$covered), draws = nrow(x), truth = mean(x$truth),
               estimate = mean(x$estimate), sd_estimate = stats::sd(x$estimate), se = mean(x$se),
               width = mean(x$width), stringsAsFactors = FALSE))
  out <- do.call(rbind, res)
  rownames(out) <- NULL
  out
}

# Writes <out>/<name>.csv (summary), <name>-terms.csv (per term) and
# <name>.rds (raw draws, not committed), and prints the summary
cov_write <- function(st) {
  d <- cov_out_dir()
  s <- cov_summary(st$raw)
  s$seconds <- round(st$seconds)
  s$failed <- st$failed
  s$note <- st$note
  utils::write.csv(s, file.path(d, paste0(st$name, ".csv")), row.names = FALSE)
  utils::write.csv(cov_terms(st$raw), file.path(d, paste0(st$name, "-terms.csv")), row.names = FALSE)
  saveRDS(st$raw, file.path(d, paste0(st$name, ".rds")))
  print(s[, c("estimator", "interval", "design", "estimand", "terms", "coverage", "mc_se", "width", "draws")],
        digits = 3, row.names = FALSE)
  message(sprintf("[%s] %d draws in %.1f min (%d failed)", st$name, st$done, st$seconds / 60, st$failed))
  invisible(s)
}

# table rows of a fit for the terms `terms`
tab_rows <- function(fit, terms) {
  tab <- fit$coeftable
  tab[match(terms, tab$term), , drop = FALSE]
}

# Event-study truths with cohort weights w (named by cohort): the (g, e)
# cells of the panel at event time e (cohorts observed e periods after
# adoption), restricted to `cohorts`
obs_cells <- function(d, e, cohorts = as.numeric(rownames(attr(d, "tau")))) {
  T <- max(d$t)
  g <- cohorts[cohorts + e >= 1 & cohorts + e <= T]
  data.frame(g = g, e = rep(e, length(g)))
}

# Truth for terms "event::e" (0 before treatment) and "ATT" (all treated
# cells, or the mean over post event times when att = "mean_e")
event_truths <- function(d, terms, w, cohorts = as.numeric(rownames(attr(d, "tau"))),
                         att = c("cells", "mean_e"), emax = Inf) {
  att <- match.arg(att)
  tau <- attr(d, "tau")
  T <- max(d$t)
  E <- 0:min(T - 1, emax)
  th_e <- vapply(E, function(e) wavg_cells(obs_cells(d, e, cohorts), w, tau), numeric(1))
  vapply(terms, function(tm) {
    if (tm == "ATT") {
      if (att == "mean_e") return(mean(th_e[is.finite(th_e)]))
      return(wavg_cells(do.call(rbind, lapply(E, function(e) obs_cells(d, e, cohorts))), w, tau))
    }
    e <- as.numeric(sub("event::", "", tm))
    if (e < 0) 0 else th_e[match(e, E)]
  }, numeric(1))
}

# The noise-free outcome (unit and period effects plus the treatment
# effects): an estimator linear in y that absorbs unit and period effects,
# applied to it, returns its own estimand for the realised design
noise_free <- function(d) { d$y <- d$y0sig + d$tau; d }

# rows of an event-study fit, split into leads and the rest
split_terms <- function(tab) {
  ev <- suppressWarnings(as.numeric(sub("event::", "", tab$term)))
  list(lead = tab$term[!is.na(ev) & ev < 0], post = tab$term[!is.na(ev) & ev >= 0], att = intersect("ATT", tab$term))
}

# Rows for the leads, the post-period event times and the ATT of an
# event-study fit, for each estimand in `truths` (a named list of named
# truth vectors over tab$term)
event_rows <- function(estimator, interval, design, tab, truths, lo = tab$conf.low, hi = tab$conf.high) {
  s <- split_terms(tab)
  out <- list()
  for (nm in names(truths)) {
    th <- truths[[nm]][tab$term]
    for (part in c("lead", "post", "att")) {
      k <- match(s[[part]], tab$term)
      if (!length(k)) next
      if (part == "lead" && nm != names(truths)[1]) next      # leads: one truth (0 unless own weights)
      lab <- switch(part, lead = "leads (event < 0), pointwise", post = "event times >= 0, pointwise",
                    att = "overall ATT")
      est_lab <- if (part == "lead" && all(th[k] == 0)) "0 (parallel trends)" else nm
      out[[length(out) + 1]] <- cov_rows(estimator, paste0(lab, ", ", interval), design, est_lab,
                                         tab$term[k], th[k], tab$estimate[k], lo[k], hi[k], tab$std.error[k])
    }
  }
  do.call(rbind, out)
}

draw_cluster <- function(name, r, T, T0, tau_e) {
  p <- design_cluster(name)
  set.seed(cov_seed(paste(name, T), r))
  dgp_cluster(p$G, p$m, p$Gt, T, T0, tau_e)
}

design_factor <- function(name) {
  switch(name,
    # 40 controls, 5 treated, 20 pre and 5 post periods, two factors; the
    # treated units' loadings at the controls' 95% quantile in both factors
    `factor-edge` = list(N0 = 40, N1 = 5, T0 = 20, T1 = 5, edge = 0.95),
    # the same with treated loadings drawn like the controls'
    `factor-interior` = list(N0 = 40, N1 = 5, T0 = 20, T1 = 5, edge = NA),
    stop("unknown factor design ", name))
}

draw_factor <- function(name, r) {
  p <- design_factor(name)
  set.seed(cov_seed(name, r))
  dgp_factor(p$N0, p$N1, p$T0, p$T1, edge = p$edge, tau = 1)
}
