# vcov = "CR2": the bias-reduced cluster-robust variance with Satterthwaite
# degrees of freedom. Reference: clubSandwich 0.7.0 (live, CRAN; installed by
# tools/install-deps.sh): vcovCR(type = "CR2") and coef_test(test =
# "Satterthwaite") on lm() with the fixed effects as factors (the LSDV model,
# clubSandwich's reference case), linear_contrast() for aggregates.
# Tolerances: standard errors 1e-8 (relative), degrees of freedom 1e-6; the
# fixed effects are absorbed to fe_tol = 1e-12 so that the demeaning does not
# limit the agreement.

cr2_data <- function(n = 2500, seed = 2) {
  d <- read.csv(system.file("extdata", "sim_panel.csv", package = "diffdiff"))
  set.seed(seed)
  d <- d[sort(sample(nrow(d), n)), ]                       # unbalanced
  d$D <- as.numeric(d$first_treat > 0 & d$year >= d$first_treat)
  d$st <- d$id %% 12
  d
}
cs_ref <- function(m, cl, coefs) {
  ct <- clubSandwich::coef_test(m, vcov = clubSandwich::vcovCR(m, cluster = cl, type = "CR2"), coefs = coefs,
                                test = "Satterthwaite")
  ct <- ct[match(coefs, ct$Coef), ]              # (coef_test keeps the model's order)
  list(se = ct$SE, df = ct$df_Satt, beta = ct$beta)
}

test_that("did_twfe(vcov = \"CR2\") equals clubSandwich (unbalanced; weights; nested and crossing clusters)", {
  need_peer("clubSandwich")
  d <- cr2_data()
  d0 <- d
  for (cl in c("id", "st", "year")) for (wt in c(FALSE, TRUE)) {
    f <- did_twfe(d, "y", "id", "year", "D", xformla = ~ x1, cluster = cl, vcov = "CR2",
                  weightsname = if (wt) "w", fe_tol = 1e-12)
    m <- stats::lm(y ~ D + x1 + factor(id) + factor(year), data = d, weights = if (wt) d$w else NULL)
    r <- cs_ref(m, d[[cl]], c("D", "x1"))
    lab <- paste("cluster", cl, "weights", wt)
    expect_equal(f$coeftable$estimate, unname(r$beta), tolerance = 1e-10, label = lab)
    expect_equal(f$coeftable$std.error, unname(r$se), tolerance = 1e-8, label = lab)
    expect_equal(unname(f$df), unname(r$df), tolerance = 1e-6, label = lab)
    expect_equal(f$coeftable$p.value, 2 * stats::pt(-abs(f$coeftable$statistic), r$df), tolerance = 1e-10)
  }
  expect_identical(d, d0)
  expect_identical(f$vcov_type, "CR2")
  expect_output(print(summary(f)), "Satterthwaite degrees of freedom per coefficient")
  ci <- confint(f)
  expect_equal(unname(ci[, 2] - ci[, 1]), 2 * stats::qt(0.975, unname(f$df)) * f$coeftable$std.error,
               tolerance = 1e-12)
})

test_that("CR2: did_2x2 (no fixed effects), did_event and did_sa's aggregates equal clubSandwich", {
  need_peer("clubSandwich")
  d <- cr2_data()
  # did_2x2 on two periods
  d2 <- d[d$year %in% c(2003, 2005) & d$first_treat %in% c(0, 2004), ]
  d2$tr <- as.numeric(d2$first_treat == 2004); d2$post <- as.numeric(d2$year == 2005)
  f <- did_2x2(d2, "y", "tr", "post", xformla = ~ x1, cluster = "st", vcov = "CR2")
  m <- stats::lm(y ~ tr * post + x1, data = d2)
  r <- cs_ref(m, d2$st, c("tr:post", "x1", "(Intercept)"))
  k <- match(c("ATT", "x1", "(Intercept)"), f$coeftable$term)
  expect_equal(f$coeftable$estimate[k], unname(r$beta), tolerance = 1e-10)
  expect_equal(f$coeftable$std.error[k], unname(r$se), tolerance = 1e-8)
  expect_equal(unname(f$df[c("ATT", "x1", "(Intercept)")]), unname(r$df), tolerance = 1e-6)
  # did_event: every event-time coefficient
  e <- did_event(d, "y", "id", "year", "first_treat", vcov = "CR2", fe_tol = 1e-12)
  rel <- ifelse(d$first_treat > 0, d$year - d$first_treat, NA)
  ev <- as.numeric(sub("event::", "", e$coeftable$term))
  for (k in ev) d[[paste0("e", k + 100)]] <- as.numeric(!is.na(rel) & rel == k)
  m <- stats::lm(stats::as.formula(paste("y ~", paste0("e", ev + 100, collapse = " + "), "+ factor(id) + factor(year)")), d)
  r <- cs_ref(m, d$id, paste0("e", ev + 100))
  expect_equal(e$coeftable$std.error, unname(r$se), tolerance = 1e-8)
  expect_equal(unname(e$df), unname(r$df), tolerance = 1e-6)
  # did_sa: the interaction-weighted event times and ATT are contrasts of the
  # cohort x event-time coefficients, each with its own Satterthwaite df
  s <- did_sa(d, "y", "id", "year", "first_treat", vcov = "CR2", fe_tol = 1e-12)
  cc <- s$cohort_coefs$term
  parts <- regmatches(cc, regexec("^year::(-?[0-9]+):cohort::([0-9]+)$", cc))
  eo <- as.numeric(vapply(parts, `[`, "", 2)); go <- as.numeric(vapply(parts, `[`, "", 3))
  nm <- paste0("c", seq_along(cc))
  for (k in seq_along(cc)) d[[nm[k]]] <- as.numeric(d$first_treat == go[k] & d$year - d$first_treat == eo[k])
  m <- stats::lm(stats::as.formula(paste("y ~", paste(nm, collapse = " + "), "+ factor(id) + factor(year)")), d)
  bm <- stats::coef(m)[nm]
  expect_equal(unname(bm), s$cohort_coefs$estimate, tolerance = 1e-9)
  sh <- s$shares
  evs <- sort(unique(eo))
  S <- rbind(t(vapply(evs, function(h) ifelse(eo == h, sh, 0) / sum(sh[eo == h]), numeric(length(cc)))),
             ifelse(eo >= 0, sh, 0) / sum(sh[eo >= 0]))
  Sm <- matrix(0, nrow(S), length(stats::coef(m)), dimnames = list(NULL, names(stats::coef(m))))
  Sm[, nm] <- S
  lc <- clubSandwich::linear_contrast(m, vcov = clubSandwich::vcovCR(m, cluster = d$id, type = "CR2"),
                                      contrasts = Sm, test = "Satterthwaite")
  expect_equal(s$coeftable$estimate, unname(lc$Est), tolerance = 1e-9)
  expect_equal(s$coeftable$std.error, unname(lc$SE), tolerance = 1e-8)
  expect_equal(unname(s$df), unname(lc$df), tolerance = 1e-6)
})

test_that("CR2: large clusters take the thin-SVD path, equal to the eigen-decomposition and clubSandwich", {
  need_peer("clubSandwich")
  d <- cr2_data()
  fit <- function(mx) {
    old <- options(diffdiff.cr2_dense_max = mx); on.exit(options(old))
    did_twfe(d, "y", "id", "year", "D", xformla = ~ x1, vcov = "CR2", cluster = "st", fe_tol = 1e-12)
  }
  a <- fit(100000L); b <- fit(0L)
  expect_identical(a$cr2_path, c(dense = 12L, lowrank = 0L))
  expect_identical(b$cr2_path, c(dense = 0L, lowrank = 12L))
  expect_equal(b$coeftable$std.error, a$coeftable$std.error, tolerance = 1e-10)
  expect_equal(b$df, a$df, tolerance = 1e-9)
  m <- stats::lm(y ~ D + x1 + factor(id) + factor(year), data = d)
  r <- cs_ref(m, d$st, c("D", "x1"))
  expect_equal(b$coeftable$std.error, unname(r$se), tolerance = 1e-8)
  expect_equal(unname(b$df), unname(r$df), tolerance = 1e-6)
  # weights always take the eigen-decomposition
  dw <- did_twfe(d, "y", "id", "year", "D", vcov = "CR2", cluster = "st", weightsname = "w")
  expect_identical(dw$cr2_path[["lowrank"]], 0L)
})

test_that("CR2: singletons, clusters fitted exactly, did_stacked, bad input", {
  need_peer("clubSandwich")
  d <- cr2_data()
  # a unit observed once, kept: its cluster's residual is fitted exactly
  first <- d$id == d$id[1]
  d1 <- d[!first | seq_len(nrow(d)) == which(first)[1], ]
  expect_warning(f <- did_twfe(d1, "y", "id", "year", "D", vcov = "CR2", fe_tol = 1e-12, drop_singletons = FALSE),
                 "1 cluster has residuals that the model fits exactly")
  m <- stats::lm(y ~ D + factor(id) + factor(year), data = d1)
  r <- cs_ref(m, d1$id, "D")
  expect_equal(f$coeftable$std.error, unname(r$se), tolerance = 1e-8)
  expect_equal(unname(f$df), unname(r$df), tolerance = 1e-6)
  # dropped as a singleton (default): the same answer, no warning
  f2 <- suppressMessages(did_twfe(d1, "y", "id", "year", "D", vcov = "CR2", fe_tol = 1e-12))
  expect_equal(f2$coeftable$std.error, f$coeftable$std.error, tolerance = 1e-8)
  # did_stacked: CR2 runs, aggregates get their own degrees of freedom, and
  # CR2's variance exceeds CR1's without the G/(G-1) factor here
  s1 <- did_stacked(d, "y", "id", "year", "first_treat", kappa_pre = 2, kappa_post = 2)
  s2 <- did_stacked(d, "y", "id", "year", "first_treat", kappa_pre = 2, kappa_post = 2, vcov = "CR2")
  # (CR2 needs the cell indicators as dense columns: another solver path)
  expect_equal(s2$coeftable$estimate, s1$coeftable$estimate, tolerance = 1e-12)
  expect_identical(names(s2$df), s2$coeftable$term)
  expect_true(all(is.finite(s2$df) & s2$df > 1 & s2$df < s1$df))
  expect_true(all(abs(s2$coeftable$std.error / s1$coeftable$std.error - 1) < 0.1))
  # bad input
  expect_error(did_2x2(d[d$year %in% c(2003, 2005), ], "y", "D", "year", vcov = "CR2"),
               "`vcov` = \"CR2\" needs `cluster`")
  expect_error(did_twfe(d, "y", "id", "year", "D", vcov = "CR2", cluster = c("id", "st")),
               "`vcov` = \"CR2\" supports one-way clustering")
  expect_error(did_stacked(d, "y", "id", "year", "first_treat", kappa_pre = 2, kappa_post = 2, vcov = "hetero"),
               "`vcov` = \"hetero\": did_stacked\\(\\) clusters")
  expect_error(did_twfe(d, "y", "id", "year", "D", vcov = "CR3"), "`vcov`")
  expect_error(did_sa(d, "y", "id", "year", "first_treat", vcov = "CR2", nboot = 99),
               "does not combine with `vcov` = \"CR2\"")
})

# did_etwfe's regression as lm() with explicit cell indicators (named as its
# terms) and the fixed effects as factors: cells are the treated periods
# ("notyettreated") or every period but the one before adoption
# ("nevertreated"); with a covariate x, the cell interactions with x demeaned
# within cohort, x and its cohort- and period-specific slopes.
etwfe_lsdv <- function(d, cg, fe, x = NULL, w = NULL) {
  g <- d$first_treat; tt <- d$year; tl <- sort(unique(tt))
  prev <- vapply(g, function(a) if (a > 0) max(tl[tl < a]) else NA_real_, 0)
  inc <- g > 0 & (if (cg == "notyettreated") tt >= g else tt != prev)
  key <- unique(d[inc, c("first_treat", "year")]); key <- key[order(key$first_treat, key$year), ]
  terms <- sprintf("ATT(%d,%d)", key$first_treat, key$year)
  nm <- paste0("c", seq_along(terms))
  for (k in seq_along(nm)) d[[nm[k]]] <- as.numeric(inc & g == key$first_treat[k] & tt == key$year[k])
  rhs <- c(nm, if (fe == "unit") "factor(id)" else "factor(first_treat)", "factor(year)")
  if (!is.null(x)) {
    d$xdm <- d[[x]] - ave(d[[x]], g)
    nmx <- paste0(nm, "x")
    for (k in seq_along(nm)) d[[nmx[k]]] <- d[[nm[k]]] * d$xdm
    rhs <- c(rhs, nmx, x, sprintf("factor(first_treat):%s", x), sprintf("factor(year):%s", x))
  }
  lsdv_wts <- if (is.null(w)) NULL else d[[w]]   # (lm() looks up `weights` in the data first)
  m <- stats::lm(stats::as.formula(paste("y ~", paste(rhs, collapse = " + "))), data = d, weights = lsdv_wts)
  list(m = m, coefs = nm, terms = terms)
}

test_that("did_etwfe(vcov = \"CR2\") equals clubSandwich (cohort, unit, no fixed effects; both control groups)", {
  # before the fix, fe = "cohort" failed with "arguments imply differing
  # number of rows" (the degrees of freedom of the dropped fixed-effect
  # indicators were kept)
  need_peer("clubSandwich")
  d <- cr2_data()
  d0 <- d
  cases <- expand.grid(fe = c("cohort", "unit", "none"), cg = c("notyettreated", "nevertreated"),
                       x = NA, cl = NA, w = NA, stringsAsFactors = FALSE)
  cases <- rbind(cases, data.frame(fe = "cohort", cg = c("notyettreated", "nevertreated"), x = "x1", cl = "state",
                                   w = c("w", NA)),
                 make.row.names = FALSE, stringsAsFactors = FALSE)
  for (i in seq_len(nrow(cases))) {
    cs <- cases[i, ]
    x <- if (is.na(cs$x)) NULL else cs$x
    cl <- if (is.na(cs$cl)) NULL else cs$cl
    w <- if (is.na(cs$w)) NULL else cs$w
    lab <- paste(cs$fe, cs$cg, if (!is.null(x)) x, if (!is.null(cl)) cl, if (!is.null(w)) "weights")
    f <- did_etwfe(d, "y", "id", "year", "first_treat", xformla = if (!is.null(x)) stats::as.formula(paste("~", x)),
                   fe = cs$fe, control_group = cs$cg, cluster = cl, weightsname = w, vcov = "CR2", fe_tol = 1e-12)
    ref <- etwfe_lsdv(d, cs$cg, cs$fe, x, w)
    r <- cs_ref(ref$m, d[[if (is.null(cl)) "id" else cl]], ref$coefs)
    k <- match(ref$terms, f$coeftable$term)
    expect_false(anyNA(k), label = lab)
    expect_equal(f$coeftable$estimate[k], unname(r$beta), tolerance = 1e-10, label = lab)
    expect_equal(f$coeftable$std.error[k], unname(r$se), tolerance = 1e-8, label = lab)
    expect_equal(unname(f$df[ref$terms]), unname(r$df), tolerance = 1e-6, label = lab)
    expect_identical(names(f$df), f$coeftable$term)
    expect_equal(f$coeftable$p.value, 2 * stats::pt(-abs(f$coeftable$statistic), unname(f$df)), tolerance = 1e-12)
    expect_identical(f$vcov_type, "CR2")
    expect_identical(f$n_clusters, length(unique(d[[if (is.null(cl)) "id" else cl]])))
  }
  # no never-treated units: the last cohort (2008) is the comparison and its
  # periods from 2008 on are dropped
  dn <- d[d$first_treat > 0, ]
  f <- suppressMessages(did_etwfe(dn, "y", "id", "year", "first_treat", vcov = "CR2", fe_tol = 1e-12))
  ref <- etwfe_lsdv(dn[dn$year < 2008, ], "notyettreated", "cohort")
  r <- cs_ref(ref$m, dn$id[dn$year < 2008], ref$coefs)
  expect_identical(f$coeftable$term, ref$terms)
  expect_equal(f$coeftable$std.error, unname(r$se), tolerance = 1e-8)
  expect_equal(unname(f$df), unname(r$df), tolerance = 1e-6)
  expect_identical(d, d0)
  expect_output(print(f), "Satterthwaite")
  expect_match(did_etwfe(d, "y", "id", "year", "first_treat", vcov = "CR2", cluster = "state")$vcov_label,
               "clustered \\(state\\)")
  expect_match(did_etwfe(d, "y", "id", "year", "first_treat", vcov = "CR2")$vcov_label, "clustered \\(id\\)")
})

test_that("CR2 with a single cluster: the error names the user's cluster column, in every estimator", {
  # before the fix every CR2 caller said `cluster` = "cluster"
  d <- cr2_data()
  d$one <- 1
  d2 <- d[d$year %in% c(2003, 2005) & d$first_treat %in% c(0, 2004), ]
  d2$tr <- as.numeric(d2$first_treat == 2004); d2$post <- as.numeric(d2$year == 2005)
  msg <- "`cluster` = \"one\" has a single cluster"
  expect_error(did_etwfe(d, "y", "id", "year", "first_treat", cluster = "one", vcov = "CR2"), msg)
  expect_error(did_etwfe(d, "y", "id", "year", "first_treat", fe = "unit", cluster = "one", vcov = "CR2"), msg)
  expect_error(did_twfe(d, "y", "id", "year", "D", cluster = "one", vcov = "CR2"), msg)
  expect_error(did_event(d, "y", "id", "year", "first_treat", cluster = "one", vcov = "CR2"), msg)
  expect_error(did_sa(d, "y", "id", "year", "first_treat", cluster = "one", vcov = "CR2"), msg)
  expect_error(did_stacked(d, "y", "id", "year", "first_treat", kappa_pre = 2, kappa_post = 2, cluster = "one",
                           vcov = "CR2"), msg)
  expect_error(did_2x2(d2, "y", "tr", "post", cluster = "one", vcov = "CR2"), msg)
  # the same message as CR1's
  expect_error(did_twfe(d, "y", "id", "year", "D", cluster = "one"), msg)
})
