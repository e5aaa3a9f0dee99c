# did_edid(): the efficient DiD of Chen, Sant'Anna and Xie (2025). No R
# package implements it. References:
#  * the paper's Table 6 (HRS hospitalisation sample, inst/extdata/hrs_edid.csv
#    with 656 individuals where the paper had 652): published point estimates
#    are integers (dollars) and SEs integers; did_edid must round to the
#    published estimates (|difference| < 0.5) and its SEs lie within 0.2% of
#    the published ones (the SE convention of the paper is not stated; see
#    ?did_edid);
#  * ref-edid-synth.csv: an independent base-R implementation written from
#    the paper's formulas (not from diffdiff, and reproducing diff-diff 3.3.2
#    to 1e-12 when switched to diff-diff's covariance), run on the synthetic
#    panel that edid_synth() below generates, anticipation 0 and 1 (exact
#    covariance of the moments, within-group divisor n_c, unclustered SEs);
#  * by construction: parallel trends after treatment only, or one comparison
#    per cell, give did_cs()'s never-treated estimates and SEs;
#  * covariates: edid_x_ref() below, a direct unit-by-unit transcription of the
#    paper's doubly robust generated outcomes (its Eq. 4.4) with lm() outcome
#    regressions and the linear-sieve propensity ratios solved from their
#    normal equations (written for this test, not from did_edid's vectorised
#    engine); `~ 1` must give the estimator without covariates, and with
#    parallel trends after treatment only, did_cs(est_method = "reg") with the
#    same covariates (linear outcome regression and a linear sieve make the
#    doubly robust moment the regression-adjusted one).

edid_synth <- function() {
  set.seed(42)
  n <- 800; TT <- 6
  G <- sample(c(3, 4, 5, Inf), n, replace = TRUE, prob = c(0.25, 0.25, 0.2, 0.3))
  a <- rnorm(n)
  e <- matrix(0, n, TT); e[, 1] <- rnorm(n)
  for (t in 2:TT) e[, t] <- 0.6 * e[, t - 1] + rnorm(n)
  Y <- a + outer(rep(1, n), 0.3 * seq_len(TT)) + e
  for (t in seq_len(TT)) Y[, t] <- Y[, t] + ifelse(is.finite(G) & t >= G, 1 + 0.3 * (t - G), 0)
  data.frame(id = rep(seq_len(n), each = TT), t = rep(seq_len(TT), n), g = rep(ifelse(is.finite(G), G, 0), each = TT),
             y = as.vector(t(Y)), cl = rep((seq_len(n) - 1) %% 40, each = TT))
}
hrs <- function() read.csv(system.file("extdata", "hrs_edid.csv", package = "diffdiff"))

# conditional parallel trends: cohort membership and trends both depend on x
edid_synth_x <- function(n = 1200, seed = 7) {
  set.seed(seed)
  TT <- 6
  x1 <- rnorm(n); x2 <- rbinom(n, 1, 0.4)
  lp <- cbind(0, 0.8 * x1, -0.5 * x1 + 0.5 * x2, 0.3 * x2)
  pr <- exp(lp) / rowSums(exp(lp))
  G <- apply(pr, 1, function(p) sample(c(Inf, 3, 4, 5), 1, prob = p))
  a <- rnorm(n) + x1
  Y <- a + outer(x1, 0.5 * seq_len(TT)) + outer(x2, 0.2 * seq_len(TT)) + matrix(rnorm(n * TT), n)
  for (t in seq_len(TT)) Y[, t] <- Y[, t] + ifelse(is.finite(G) & t >= G, 1 + 0.3 * (t - G), 0)
  data.frame(id = rep(seq_len(n), each = TT), t = rep(seq_len(TT), n), g = rep(ifelse(is.finite(G), G, 0), each = TT),
             y = as.vector(t(Y)), x1 = rep(x1, each = TT), x2 = rep(x2, each = TT),
             w = rep(runif(n, 0.5, 2), each = TT))
}

# the paper's generated outcomes unit by unit (units' rows of Y in the order
# of ids; G with Inf for never treated; X the covariate matrix; w weights)
edid_x_ref <- function(Y, G, X, w = rep(1, nrow(Y))) {
  n <- nrow(Y); TT <- ncol(Y); w <- w / mean(w)
  coh <- sort(unique(G[is.finite(G)]))
  P <- cbind(1, X)
  pi <- function(c) sum(w[G == c]) / n
  mfit <- function(c, a, b) {          # E[Y_a - Y_b | X, G = c] at every unit
    if (a == b) return(numeric(n))
    s <- G == c
    fit <- stats::lm.wfit(P[s, , drop = FALSE], Y[s, a] - Y[s, b], w[s])
    drop(P %*% fit$coefficients)
  }
  ratio <- function(g, c) {            # linear sieve of p_g(X) / p_c(X)
    s <- G == c
    beta <- solve(crossprod(P[s, , drop = FALSE] * w[s], P[s, , drop = FALSE]), colSums(w[G == g] * P[G == g, , drop = FALSE]))
    drop(P %*% beta)
  }
  out <- NULL
  for (g in coh) for (t in 2:TT) {
    pairs <- list(c(Inf, 1))
    for (gp in coh) for (tp in 2:TT) if (tp < gp && !(gp == g && tp == t)) pairs[[length(pairs) + 1]] <- c(gp, tp)
    Yh <- sapply(pairs, function(pr) {
      gp <- pr[1]; tp <- pr[2]
      mi <- mfit(Inf, t, tp); mg <- if (is.finite(gp)) mfit(gp, tp, 1) else numeric(n)
      v <- (G == g) * (Y[, t] - Y[, 1] - mi - mg) - (G == Inf) * ratio(g, Inf) * (Y[, t] - Y[, tp] - mi)
      if (is.finite(gp)) v <- v - (G == gp) * (if (gp == g) 1 else ratio(g, gp)) * (Y[, tp] - Y[, 1] - mg)
      v / pi(g)
    })
    Yh <- matrix(Yh, n)
    m <- colSums(w * Yh) / n
    E <- w * (Yh - outer(G == g, m / pi(g)))
    Om <- crossprod(E) / n
    wt <- solve(Om, rep(1, ncol(Om))); wt <- wt / sum(wt)
    out <- rbind(out, data.frame(g = g, t = t, H = length(pairs), att = sum(wt * m),
                                 se = sqrt(sum(drop(E %*% wt)^2)) / n))
  }
  out
}

test_that("did_edid reproduces Table 6 of Chen, Sant'Anna and Xie (2025) on the HRS sample", {
  d <- hrs()
  d0 <- d
  f <- did_edid(d, "outcome", "unit", "time", "first_treat")
  expect_identical(d, d0)
  tab <- f$coeftable
  pub <- data.frame(g = c(8, 8, 8, 9, 9, 10), t = c(8, 9, 10, 9, 10, 10),
                    est = c(3072, 1112, 1038, 3063, 90, 2908), se = c(806, 637, 817, 690, 641, 894))
  k <- match(paste(pub$g, pub$t), paste(tab$group, tab$time))
  expect_false(anyNA(k))
  expect_true(all(abs(tab$estimate[k] - pub$est) < 0.5), label = paste(round(tab$estimate[k], 2), collapse = " "))
  expect_true(all(abs(tab$std.error[k] / pub$se - 1) < 0.002), label = paste(round(tab$std.error[k], 1), collapse = " "))
  expect_identical(tab$comparisons[k], rep(4L, 6))
  es <- aggregate(f, type = "dynamic")
  et <- es$coeftable
  pes <- data.frame(term = c("event::0", "event::1", "event::2", "ATT"), est = c(3024, 692, 1038, 1585),
                    se = c(486, 471, 816, 521))
  j <- match(pes$term, et$term)
  expect_true(all(abs(et$estimate[j] - pes$est) < 0.5), label = paste(round(et$estimate[j], 2), collapse = " "))
  expect_true(all(abs(et$std.error[j] / pes$se - 1) < 0.002), label = paste(round(et$std.error[j], 1), collapse = " "))
  expect_s3_class(es$event_study, "dd_event_study")
  expect_identical(es$event_study$base_period, "imputation")
  # the efficient weights of ATT(8,8) sum to one over its four moments
  w <- f$weights[f$weights$group == 8 & f$weights$time == 8, ]
  expect_equal(sum(w$weight), 1, tolerance = 1e-12)
  expect_equal(sum(w$weight * w$moment), f$coefficients[["ATT(8,8)"]], tolerance = 1e-10)
  # parallel trends after treatment only: the paper's Callaway-Sant'Anna column
  fp <- did_edid(d, "outcome", "unit", "time", "first_treat", pt_assumption = "post")
  cs <- did_cs(d, "outcome", "unit", "time", "first_treat", control_group = "nevertreated",
               base_period = "universal", est_method = "reg", nboot = 0)
  expect_equal(fp$coeftable$estimate, cs$coeftable$estimate, tolerance = 1e-10)
  expect_equal(fp$coeftable$std.error, cs$coeftable$std.error, tolerance = 1e-10)
  kp <- match(paste(pub$g, pub$t), paste(fp$coeftable$group, fp$coeftable$time))
  expect_true(all(abs(fp$coeftable$estimate[kp] - c(2826, 825, 800, 3031, 107, 3092)) < 0.5))
  ep <- aggregate(fp, type = "dynamic"); ec <- aggregate(cs, type = "dynamic")
  expect_equal(ep$coeftable$estimate, ec$coeftable$estimate, tolerance = 1e-10)
  expect_equal(ep$coeftable$std.error, ec$coeftable$std.error, tolerance = 1e-10)
})

test_that("did_edid equals an independent implementation on a synthetic panel (anticipation 0 and 1)", {
  d <- edid_synth()
  ref <- utils::read.csv(test_path("ref-edid-synth.csv"))
  for (ant in 0:1) {
    r <- ref[ref$anticipation == ant, ]
    f <- did_edid(d, "y", "id", "t", "g", anticipation = ant)
    rc <- r[r$type == "cell", ]
    k <- match(paste(rc$g, rc$t), paste(f$coeftable$group, f$coeftable$time))
    expect_false(anyNA(k))
    expect_identical(nrow(f$coeftable), nrow(rc))
    expect_equal(f$coeftable$estimate[k], rc$estimate, tolerance = 1e-8, label = paste("cells", ant))
    expect_equal(f$coeftable$std.error[k], rc$se, tolerance = 1e-6, label = paste("cell SEs", ant))
    expect_identical(f$coeftable$comparisons[k], as.integer(rc$H))
    re <- r[r$type == "event", ]
    es <- aggregate(f, type = "dynamic")$coeftable
    j <- match(paste0("event::", re$t), es$term)
    expect_equal(es$estimate[j], re$estimate, tolerance = 1e-8, label = paste("events", ant))
    expect_equal(es$std.error[j], re$se, tolerance = 1e-6, label = paste("event SEs", ant))
  }
  # clustered: sums of the influence functions by cluster (they sum to zero,
  # so the paper's centred CR1 is this times sqrt(G / (G - 1)))
  f0 <- did_edid(d, "y", "id", "t", "g")
  fc <- did_edid(d, "y", "id", "t", "g", cluster = "cl")
  psi <- as.matrix(f0$inf)[, seq_len(nrow(f0$coeftable))]
  cl <- d$cl[match(f0$units, d$id)]
  expect_equal(fc$coeftable$std.error, sqrt(colSums(rowsum(psi, cl)^2)) / f0$n, tolerance = 1e-12)
  expect_equal(unname(colSums(psi)), rep(0, ncol(psi)), tolerance = 1e-8)
})

test_that("did_edid with one comparison per cell is did_cs (two periods; weights)", {
  d <- edid_synth()
  d2 <- d[d$t %in% 2:3 & d$g %in% c(0, 3), ]
  set.seed(5); wu <- runif(800, 0.5, 2); d2$w <- wu[d2$id]
  f <- did_edid(d2, "y", "id", "t", "g", weightsname = "w")
  cs <- did_cs(d2, "y", "id", "t", "g", weightsname = "w", control_group = "nevertreated", est_method = "reg",
               nboot = 0)
  expect_identical(f$coeftable$comparisons, 1L)
  expect_equal(f$coeftable$estimate, cs$coeftable$estimate, tolerance = 1e-10)
  expect_equal(f$coeftable$std.error, cs$coeftable$std.error, tolerance = 1e-10)
  # weights under parallel trends after treatment: did_cs with the same weights
  set.seed(6); wu <- runif(800, 0.5, 2); d$w <- wu[d$id]
  fp <- did_edid(d, "y", "id", "t", "g", weightsname = "w", pt_assumption = "post")
  cp <- did_cs(d, "y", "id", "t", "g", weightsname = "w", control_group = "nevertreated", base_period = "universal",
               est_method = "reg", nboot = 0)
  expect_equal(fp$coeftable$estimate, cp$coeftable$estimate, tolerance = 1e-10)
  expect_equal(fp$coeftable$std.error, cp$coeftable$std.error, tolerance = 1e-10)
  # scaling the weights changes nothing
  d$w10 <- 10 * d$w
  f1 <- did_edid(d, "y", "id", "t", "g", weightsname = "w"); f10 <- did_edid(d, "y", "id", "t", "g", weightsname = "w10")
  expect_equal(f10$coeftable$estimate, f1$coeftable$estimate, tolerance = 1e-12)
  expect_equal(aggregate(f10)$coeftable$std.error, aggregate(f1)$coeftable$std.error, tolerance = 1e-12)
})

test_that("did_edid with covariates equals the paper's generated outcomes computed unit by unit", {
  d <- edid_synth_x()
  d0 <- d
  o <- order(d$id, d$t)
  Y <- matrix(d$y[o], ncol = 6, byrow = TRUE)
  u <- d[o, ][d$t[o] == 1, ]
  G <- ifelse(u$g == 0, Inf, u$g)
  for (wt in c(FALSE, TRUE)) {
    ref <- edid_x_ref(Y, G, cbind(u$x1, u$x2), if (wt) u$w else rep(1, nrow(u)))
    f <- did_edid(d, "y", "id", "t", "g", xformla = ~ x1 + x2, weightsname = if (wt) "w")
    expect_identical(f$engine, "generated_outcomes")
    k <- match(paste(ref$g, ref$t), paste(f$coeftable$group, f$coeftable$time))
    expect_false(anyNA(k))
    expect_identical(nrow(f$coeftable), nrow(ref))
    expect_identical(f$coeftable$comparisons[k], as.integer(ref$H))
    expect_equal(f$coeftable$estimate[k], ref$att, tolerance = 1e-9, label = paste("att, weights", wt))
    expect_equal(f$coeftable$std.error[k], ref$se, tolerance = 1e-9, label = paste("se, weights", wt))
  }
  expect_identical(d, d0)
  # conditional parallel trends: with x1 and x2 the post cells are centred on
  # the truth (1 + 0.3 e); without, cohort 3's are biased (x1 drives both)
  f <- did_edid(d, "y", "id", "t", "g", xformla = ~ x1 + x2)
  f0 <- did_edid(d, "y", "id", "t", "g")
  post <- f$coeftable$time >= f$coeftable$group
  truth <- 1 + 0.3 * (f$coeftable$time - f$coeftable$group)[post]
  zx <- (f$coeftable$estimate[post] - truth) / f$coeftable$std.error[post]
  z0 <- (f0$coeftable$estimate[post] - truth) / f0$coeftable$std.error[post]
  expect_true(max(abs(zx)) < 3.5, label = paste(round(zx, 2), collapse = " "))
  expect_true(max(abs(z0)) > 5, label = paste(round(z0, 2), collapse = " "))
  expect_output(print(f), "Covariates: ~x1 \\+ x2")
})

test_that("did_edid with covariates: ~ 1 is the estimator without; after treatment only it is did_cs(reg)", {
  d <- edid_synth()
  set.seed(3); d$w <- runif(800, 0.5, 2)[d$id]
  for (pt in c("all", "post")) {
    a <- did_edid(d, "y", "id", "t", "g", weightsname = "w", cluster = "cl", pt_assumption = pt)
    b <- did_edid(d, "y", "id", "t", "g", xformla = ~ 1, weightsname = "w", cluster = "cl", pt_assumption = pt)
    expect_identical(c(a$engine, b$engine), c("means", "generated_outcomes"))
    expect_equal(b$coeftable$estimate, a$coeftable$estimate, tolerance = 1e-10)
    expect_equal(b$coeftable$std.error, a$coeftable$std.error, tolerance = 1e-10)
    expect_equal(aggregate(b)$coeftable$std.error, aggregate(a)$coeftable$std.error, tolerance = 1e-10)
  }
  dx <- edid_synth_x()
  fp <- did_edid(dx, "y", "id", "t", "g", xformla = ~ x1 + x2, weightsname = "w", pt_assumption = "post")
  cs <- did_cs(dx, "y", "id", "t", "g", xformla = ~ x1 + x2, weightsname = "w", control_group = "nevertreated",
               base_period = "universal", est_method = "reg", nboot = 0)
  expect_identical(fp$coeftable$term, cs$coeftable$term)
  expect_equal(fp$coeftable$estimate, cs$coeftable$estimate, tolerance = 1e-10)
  expect_equal(fp$coeftable$std.error, cs$coeftable$std.error, tolerance = 1e-10)
  ep <- aggregate(fp, type = "dynamic"); ec <- aggregate(cs, type = "dynamic")
  expect_equal(ep$coeftable$std.error, ec$coeftable$std.error, tolerance = 1e-10)
})

test_that("did_edid: bootstrap, bands, survey designs and the shared methods", {
  d <- edid_synth()
  f0 <- did_edid(d, "y", "id", "t", "g")
  set.seed(1)
  fb <- did_edid(d, "y", "id", "t", "g", nboot = 999, cband = TRUE)
  expect_identical(fb$coefficients, f0$coefficients)
  r <- fb$coeftable$std.error / f0$coeftable$std.error
  expect_true(all(abs(r - 1) < 0.2) && abs(mean(r) - 1) < 0.03, label = paste(format(r, digits = 3), collapse = " "))
  expect_true(fb$crit > stats::qnorm(0.975))
  fs <- did_edid(d, "y", "id", "t", "g", survey = suppressWarnings(survey_design(d, ids = "cl")))
  G <- length(unique(d$cl))
  fc <- did_edid(d, "y", "id", "t", "g", cluster = "cl")
  expect_equal(fs$coeftable$std.error, fc$coeftable$std.error * sqrt(G / (G - 1)), tolerance = 1e-10)
  expect_equal(sqrt(diag(vcov(f0))), stats::setNames(f0$coeftable$std.error, f0$coeftable$term), tolerance = 1e-12)
  expect_output(print(f0), "Parallel trends: all periods")
  expect_true(all(c("term", "estimate", "std.error") %in% names(tidy(f0))))
})

test_that("did_edid: bad input gets errors naming the argument and value", {
  d <- edid_synth()
  d$cx <- d$g                      # constant within every cohort
  expect_error(did_edid(d, "y", "id", "t", "g", xformla = ~ cx), "`xformla` = ~cx: .*constant within cohort 3 \\(")
  expect_error(did_edid(d, "y", "id", "t", "g", xformla = "cl"), "`xformla` must be a one-sided formula")
  expect_error(did_edid(d, "y", "id", "t", "g", pt_assumption = "some"), "`pt_assumption`")
  expect_error(did_edid(d, "y", "id", "t", "g", control_group = "notyettreated"), "`did_edid\\(\\)` has no argument `control_group`\\.$")
  expect_error(did_edid(d[d$g != 0, ], "y", "id", "t", "g"), "no never-treated units .*did_edid\\(\\) needs them")
  dc <- d; dc$y[dc$g == 0] <- 1; dc$y[dc$g != 0] <- dc$t[dc$g != 0]
  expect_error(did_edid(dc, "y", "id", "t", "g"), "covariance of the comparison moments is zero")
  expect_warning(fu <- did_edid(d[-1, ], "y", "id", "t", "g"), "1 units are missing")
  expect_identical(fu$n, 799L)
})

test_that("did_edid rejects never treated coded -1 exactly as did_cs, did_sa and did_event (code COHORT_NEGATIVE)", {
  # the probe's report: did_edid took -1 as never treated while the others
  # rejected it. did_edid builds its cohorts through dd_panel()'s one cohort
  # rule (dd_cohort_never), so the condition must be the same on every path.
  d <- edid_synth()
  d$x <- rnorm(800)[d$id]
  d$g[d$g == 0] <- -1
  err <- function(expr) tryCatch({ expr; NULL }, error = function(e) e)
  ref <- err(did_cs(d, "y", "id", "t", "g", nboot = 0))
  expect_s3_class(ref, "diffdiff_cohort_negative")
  expect_identical(ref$code, "COHORT_NEGATIVE")
  others <- list(sa = err(did_sa(d, "y", "id", "t", "g")), event = err(did_event(d, "y", "id", "t", "g")),
                 edid = err(did_edid(d, "y", "id", "t", "g")),
                 edid_x = err(did_edid(d, "y", "id", "t", "g", xformla = ~ x)),
                 edid_post = err(did_edid(d, "y", "id", "t", "g", pt_assumption = "post")),
                 edid_antic = err(did_edid(d, "y", "id", "t", "g", anticipation = 1)),
                 edid_boot = err(did_edid(d, "y", "id", "t", "g", nboot = 9, cluster = "cl")))
  for (nm in names(others)) {
    expect_identical(conditionMessage(others[[nm]]), conditionMessage(ref), label = nm)
    expect_identical(others[[nm]]$code, "COHORT_NEGATIVE", label = nm)
  }
  expect_match(conditionMessage(ref), '`gname` = "g" has the negative value -1; .*coded 0, Inf or NA')
  # and a first treated period between periods, the other half of the rule
  d2 <- edid_synth(); d2$g[d2$g == 4] <- 4.5
  e2 <- err(did_edid(d2, "y", "id", "t", "g"))
  expect_identical(e2$code, "COHORT_NOT_PERIOD")
  expect_identical(conditionMessage(e2), conditionMessage(err(did_cs(d2, "y", "id", "t", "g", nboot = 0))))
})
