# The kernels of the later estimators at and across their size thresholds,
# for tools/valgrind.sh (VALGRIND_KERNELS=1, the default): did_dcdh's horizon
# kernel (src/dcdh.c), the local-polynomial fits of did_had (src/locpoly.c),
# did_trop (src/trop.c), did_etwfe's sparse normal equations (src/glm.c),
# did_rs's permutation moments (src/rs.c), did_dose, did_edid, the pre-test
# integrals (src/pretrends.c), did_had's Stute bootstrap (src/stute.c) across
# its draw blocks, and did_cs's cell kernel (src/cs.c) on both
# sides of its serial/parallel throttle, each also through its entry-point
# checks. Small inputs: valgrind runs them 20-50 times slower.
# Prints "N passed, M failed" (what valgrind.sh looks for).
# Usage: R -d valgrind --vanilla -e 'source("tools/valgrind-kernels.R")'   (from the repository root)
.libPaths(c(Sys.getenv("R_LIBS"), .libPaths()))
suppressMessages(library(diffdiff))
ns <- asNamespace("diffdiff")
passed <- 0L; failed <- 0L
check <- function(label, expr) {
  ok <- tryCatch(isTRUE(expr), error = function(e) { cat(label, ": ", conditionMessage(e), "\n", sep = ""); FALSE })
  if (ok) passed <<- passed + 1L else { failed <<- failed + 1L; cat("FAILED:", label, "\n") }
}
# an entry point's check must stop a broken contract with an internal error
refused <- function(expr) grepl("^internal error in ", tryCatch({ expr; "" }, error = conditionMessage))
fin <- function(x) all(is.finite(x))
q <- function(expr) suppressWarnings(suppressMessages(expr))
dd_threads(2)
set.seed(7)

## did_dcdh (dcdh.c): one to a few groups, unclustered and clustered, the
## cohort-means path (less_conservative_se), placebos
for (n in c(8, 30)) {
  rv <- dd_sim_reversible(n_units = n, n_periods = 5)
  rv$cl <- rv$id %% 4
  for (cl in list(NULL, "cl")) for (lc in c(FALSE, TRUE)) {
    f <- q(tryCatch(did_dcdh(rv, "y", "id", "time", "D", effects = 2, placebo = 1, cluster = cl,
                             less_conservative_se = lc), error = function(e) e))
    check(sprintf("did_dcdh n=%d cluster=%s lcse=%s", n, !is.null(cl), lc),
          inherits(f, "dd_fit") || grepl("no switcher", conditionMessage(f)))
  }
}
H <- function(nG, nK, ncl) {
  bi <- rep_len(1:2, nG); coh <- rep_len(1:3, nG); clg <- rep_len(seq_len(max(ncl, 1)), nG)
  M <- function(v) matrix(as.double(v), nG, nK)
  list(M(rnorm(nG * nK)), M(rbinom(nG * nK, 1, 0.4)), M(rbinom(nG * nK, 1, 0.5)), M(1), as.double(seq_len(nK)),
       as.double(rep_len(2:4, nG)), rep(3, nG), bi, coh, if (ncl) clg else integer(),
       if (ncl) c(order(bi), order(coh)) - 1L else integer(), 1L, as.double(nG), as.integer(min(2, nG)),
       as.integer(min(3, nG)), as.integer(ncl), double(), double())
}
for (sz in list(c(1, 1, 0), c(1, 3, 1), c(2, 1, 2), c(3, 4, 0), c(3, 4, 3), c(7, 5, 2))) {
  a <- H(sz[1], sz[2], sz[3])
  r <- do.call(.Call, c(list(ns$C_dcdh_horizon), a))
  check(sprintf("C_dcdh_horizon nG=%d nK=%d ncl=%d", sz[1], sz[2], sz[3]), is.list(r) && length(r$U) == sz[1])
}
a <- H(3, 4, 3); a[[8]][1] <- .Machine$integer.max
check("C_dcdh_horizon refuses a code INT_MAX", refused(do.call(.Call, c(list(ns$C_dcdh_horizon), a))))
a <- H(3, 4, 3); a[[11]][2] <- 3L
check("C_dcdh_horizon refuses an order past the groups", refused(do.call(.Call, c(list(ns$C_dcdh_horizon), a))))

## local polynomials (locpoly.c): samples around bwcheck = 21 and at the
## smallest windows, ties, every kernel and selector, the psi path; lp_poly
## up to order 10 (11 x 11 Gram matrix in the 256-double work area)
lp <- ns$dd_lprobust
for (N in c(6, 20, 21, 22, 60)) for (k in c("epa", "tri", "uni", "gau")) {
  x <- if (N == 60) round(runif(N), 1) else runif(N)      # N = 60: heavy ties
  y <- 1 + x + rnorm(N, sd = 0.3)
  r <- q(tryCatch(lp(y, x, eval = 0.2, kernel = k), error = function(e) e))
  check(sprintf("dd_lprobust N=%d %s", N, k), is.numeric(r) && length(r) == 7)
}
x <- round(runif(80), 2); y <- x + rnorm(80, sd = 0.2)            # ties
for (bw in c("mse-dpi", "imse-dpi", "ce-rot", "mse-rot", "imse-rot"))
  check(paste("dd_lprobust", bw), { r <- q(lp(y, x, eval = 0.5, bwselect = bw)); is.numeric(r) && fin(r[["h"]]) })
check("dd_lprobust psi", { r <- q(lp(y, x, eval = 0.5, psi = TRUE)); length(r$psi) == 80 && fin(r$psi) })
for (o in 0:10)
  check(sprintf("C_lp_poly order %d", o), length(.Call(ns$C_lp_poly, sort(x), y[order(x)], 0.5, 0L, 2, as.integer(o))) == o + 1)
check("C_lp_fit refuses a tie run of 0", {
  xs <- sort(x); rl <- rle(xs); du <- rep(rl$lengths, rl$lengths); di <- sequence(rl$lengths); du[1] <- 0L
  refused(.Call(ns$C_lp_fit, xs, y, as.integer(du), as.integer(di), 0.5, 0L, 3L, -1, 0.3, 0.05, 0.5, 1, 0L))
})
G <- 60; dose <- ifelse(runif(G) < 0.1, 0, rexp(G, 2))
hd <- expand.grid(t = 1:4, g = 1:G)[, c("g", "t")]
hd$D <- ifelse(hd$t >= 3, dose[hd$g], 0)
hd$y <- rnorm(G)[hd$g] + 0.3 * hd$t + hd$D + rnorm(nrow(hd))
check("did_had", inherits(q(did_had(hd, "y", "g", "t", "D", effects = 2, placebo = 1, yatchew = TRUE)), "dd_fit"))

## did_trop (trop.c): the smallest panels, T < N, T > N, local and global,
## the cross-validation (loo) path
for (sz in list(c(2, 2), c(3, 5), c(6, 3), c(4, 4))) {
  T <- sz[1]; N <- sz[2]
  Y <- matrix(rnorm(T * N), T, N); D <- matrix(0L, T, N); D[T, N] <- 1L
  for (m in 0:1) for (loo in 0:1) {
    cells <- if (loo) cbind(0L, 0L) else cbind(as.integer(T) - 1L, as.integer(N) - 1L)
    r <- .Call(ns$C_trop_fit, Y, D, m, c(0.5, 0.5, 0.1), c(20, 1e-6), cells, as.integer(loo), 1L, 0L)
    check(sprintf("C_trop_fit T=%d N=%d method=%d loo=%d", T, N, m, loo), length(r$tau) == 1)
  }
  # the non-absorbing guard: a connected target, then a target whose unit is never untreated (NA)
  r <- .Call(ns$C_trop_fit, Y, D, 0L, c(0.5, 0.5, 0.1), c(20, 1e-6), cbind(as.integer(T) - 1L, as.integer(N) - 1L),
             0L, 0L, 1L)
  check(sprintf("C_trop_fit guard T=%d N=%d", T, N), length(r$tau) == 1)
  Dg <- D; Dg[, N] <- 1L
  r <- .Call(ns$C_trop_fit, Y, Dg, 0L, c(0.5, 0.5, 0.1), c(20, 1e-6), cbind(as.integer(T) - 1L, as.integer(N) - 1L),
             0L, 0L, 1L)
  check(sprintf("C_trop_fit guard (unit never untreated) T=%d N=%d", T, N), is.na(r$tau))
}
check("C_trop_fit refuses max_iter NaN",
      refused(.Call(ns$C_trop_fit, matrix(rnorm(9), 3), matrix(0L, 3, 3), 0L, c(0.5, 0.5, 0.1), c(NaN, 1e-6),
                    cbind(2L, 2L), 0L, 1L, 0L)))
check("C_trop_fit refuses the guard with the global method or loo, and guard = 2",
      refused(.Call(ns$C_trop_fit, matrix(rnorm(9), 3), matrix(0L, 3, 3), 1L, c(0.5, 0.5, 0.1), c(20, 1e-6),
                    cbind(2L, 2L), 0L, 1L, 1L)) &&
        refused(.Call(ns$C_trop_fit, matrix(rnorm(9), 3), matrix(0L, 3, 3), 0L, c(0.5, 0.5, 0.1), c(20, 1e-6),
                      cbind(2L, 2L), 1L, 1L, 1L)) &&
        refused(.Call(ns$C_trop_fit, matrix(rnorm(9), 3), matrix(0L, 3, 3), 0L, c(0.5, 0.5, 0.1), c(20, 1e-6),
                      cbind(2L, 2L), 0L, 1L, 2L)))
fa <- dd_sim_factor(n_units = 8, n_periods = 6, n_treated = 2)
check("did_trop", inherits(q(did_trop(fa, "y", "id", "time", "D", lambda_time = 0.5, lambda_unit = 0.5,
                                      lambda_nn = 0.1, nboot = 3)), "dd_fit"))

## did_etwfe's sparse normal equations (glm.c): across the Ctrl-C check
## every 65536 rows; poisson and logit fits
for (n in c(65535, 65536, 65537)) {
  X <- cbind(1, as.double(seq_len(n) %% 3 == 0), as.double(seq_len(n) %% 7 == 0))
  cs <- .Call(ns$C_csr, X)
  r <- .Call(ns$C_xtwx, cs, rep(1, n), rep(2, n))
  check(sprintf("C_xtwx n=%d", n), isTRUE(all.equal(r$A, crossprod(X))))
}
sg <- dd_sim_staggered(n_units = 40, n_periods = 5)
sg$yc <- rpois(nrow(sg), 2); sg$yb <- as.numeric(sg$y > 0)
check("did_etwfe poisson", inherits(q(did_etwfe(sg, "yc", "id", "time", "first_treat", family = "poisson")), "dd_fit"))
check("did_etwfe logit", inherits(q(did_etwfe(sg, "yb", "id", "time", "first_treat", family = "logit")), "dd_fit"))

## did_rs (rs.c), did_edid, did_dose
check("did_rs nperm", inherits(q(did_rs(sg, "y", "id", "time", "first_treat", nperm = 5)), "dd_fit"))
th <- matrix(rnorm(30), 10, 3)
for (m in c(0, 1, 4))
  check(sprintf("C_rs_perm m=%d", m), is.list(.Call(ns$C_rs_perm, th, th, rep(0:2, length.out = 10), matrix(rnorm(40), 10, 4), m)))
check("did_edid", inherits(q(did_edid(sg, "y", "id", "time", "first_treat", nboot = 9)), "dd_fit"))
co <- dd_sim_continuous(n_units = 60, n_periods = 3)
check("did_dose", inherits(q(did_dose(co, "y", "id", "time", "first_treat", "dose", degree = 2, nboot = 9)), "dd_fit"))

## pre-test integrals (pretrends.c): K = 1 (closed form), 2 and 3, with and
## without moments
for (K in 1:3) for (mom in 0:1) {
  S <- diag(K) * 0.01 + 0.002
  A <- if (mom) matrix(0.001, 1, K) else matrix(0, 0, K)
  r <- .Call(ns$C_pretrends_mvn, rep(0.05, K), S, rep(-0.2, K), rep(0.2, K), A, if (mom) 0.1 else double(),
             c(1e-4, 1, 0, 3, mom))
  check(sprintf("C_pretrends_mvn K=%d moments=%d", K, mom), r$prob > 0 && r$prob < 1)
}

## did_cs's cell kernel (cs.c) on both sides of the throttle (65536 work
## units per thread: N x cells x (k + 4)): one and two threads, same bits
## (8 periods, cohorts 3 to 6: 28 cells, k = 1; the throttle at N = 937)
for (n in c(900, 1000)) {
  d <- dd_sim_staggered(n_units = n, n_periods = 8, cohorts = 3:6, never_share = 0.3)
  dd_threads(1); a1 <- q(did_cs(d, "y", "id", "time", "first_treat", nboot = 0))
  dd_threads(2); a2 <- q(did_cs(d, "y", "id", "time", "first_treat", nboot = 0))
  check(sprintf("did_cs n=%d (%d cells) threads 1 vs 2", n, length(coef(a1))),
        length(coef(a1)) == 28 && identical(coef(a1), coef(a2)) && fin(coef(a1)))
}
## did_had's Stute bootstrap (stute.c): uniforms drawn a block of
## 2^20 / nG columns at a time; nG = 2^18 gives blocks of 4 columns, so
## B = 3, 4, 5 lie below, at and across a block boundary; nG = 2^20 gives
## one column per block. Drawn in C = handed in from R's matrix(runif()).
set.seed(2)
y <- rnorm(40); dd <- runif(40)
f <- ns$dd_stute_fit(y, dd, 1L)
for (nG in c(2^18, 2^20)) for (B in if (nG == 2^18) 3:5 else 2L) {
  rows <- list(sample.int(nG, 40))
  set.seed(9); U <- matrix(runif(nG * B), nG, B)
  a <- ns$dd_stute_boot(list(f), rows, nG, B, U)
  set.seed(9); b <- ns$dd_stute_boot(list(f), rows, nG, B)
  check(sprintf("C_stute_boot nG=%d B=%d (block %d columns): drawn = handed in", nG, B, max(1, 2^20 / nG)),
        identical(a, b) && fin(a))
}
## did_lpdid (lpdid.c): passes over the grid per horizon; a panel with
## interior gaps, horizons reaching past both ends of the grid, reweighting
## (periods without a control dropped), pmd = "max", one and two units per
## cohort; covariates (one aliased), regression adjustment and weights; the
## non-absorbing states (C_lpdid_state) on an on-off panel; and the entry
## points' checks
for (n in c(6, 40)) {
  d <- dd_sim_staggered(n_units = n, n_periods = 7)
  d$x <- sin(seq_len(nrow(d))); d$k <- d$time; d$w <- 1 + (d$id %% 3)
  d <- d[-seq(3, nrow(d), by = 7), ]
  for (rw in c(FALSE, TRUE)) {
    f <- q(tryCatch(did_lpdid(d, "y", "id", "time", gname = "first_treat", pre_window = 6, post_window = 6,
                              reweight = rw, pmd = "max"), error = function(e) e))
    check(sprintf("did_lpdid n=%d reweight=%s", n, rw), inherits(f, "error") || fin(coef(f)))
    f <- q(tryCatch(did_lpdid(d, "y", "id", "time", gname = "first_treat", xformla = ~ x + k, pre_window = 3,
                              post_window = 3, reweight = rw, ylags = 1, weightsname = "w"), error = function(e) e))
    check(sprintf("did_lpdid covariates n=%d reweight=%s", n, rw), inherits(f, "error") || fin(coef(f)))
  }
  b <- dd_sim_staggered(n_units = n, n_periods = 9)
  b$d <- as.integer((b$time + b$id) %% 4 < 2)
  for (m in c("first_entry", "effect_stabilization")) {
    f <- q(tryCatch(did_lpdid(b, "y", "id", "time", dname = "d", pre_window = 3, post_window = 3, non_absorbing = m,
                              stabilization_window = if (m != "first_entry") 1), error = function(e) e))
    check(sprintf("did_lpdid n=%d %s", n, m), inherits(f, "error") || fin(coef(f)))
  }
}
check("C_lpdid_horizon refuses a bad window", refused(.Call(ns$C_lpdid_horizon, matrix(0, 2, 2), matrix(0, 2, 2),
      matrix(1L, 2, 2), c(2, Inf), NULL, NULL, NULL, integer(), c(0L, 0L, 0L, 1L, 0L, 0L, 0L))))
check("C_lpdid_horizon refuses a mode without states", refused(.Call(ns$C_lpdid_horizon, matrix(0, 2, 2),
      matrix(0, 2, 2), matrix(1L, 2, 2), c(2, Inf), NULL, NULL, NULL, 0L, c(0L, 0L, 0L, 1L, 2L, 1L, 0L))))
check("C_lpdid_state refuses a non-matrix", refused(.Call(ns$C_lpdid_state, c(0, 1))))
## Conley's meat (conley.c): the grid at cutoffs from 0 to all pairs, the
## date line and a pole's neighbourhood, the panel form's serial part,
## clusters, on both sides of the parallel throttle (2,048 points); and the
## entry point's checks
for (n in c(40, 2049)) {
  set.seed(n)
  S <- cbind(1, rnorm(n)) * rnorm(n)
  la <- c(runif(n - 4, 60, 89.9), 89.99, -89.99, 0, 0); lo <- c(runif(n - 4, 170, 190) - 360 * (runif(n - 4) > 0.5), 0, 180, -180, 180)
  lo[lo > 180] <- lo[lo > 180] - 360
  for (cut in c(0, 50, 5000, 30000)) for (dist in 1:3) {
    M <- .Call(ns$C_conley_meat, S, la, lo, c(cut, dist, 1, -1, 1), NULL, NULL, NULL, NULL)
    check(sprintf("C_conley_meat n=%d cutoff=%g dist=%d", n, cut, dist), fin(M))
  }
  M <- .Call(ns$C_conley_meat, S, la, lo, c(100, 1, 0, 2, 1), as.integer(seq_len(n) %% 3), as.integer(seq_len(n) %% 5),
             as.integer(seq_len(n) %% 11), as.double(seq_len(n) %% 3))
  check(sprintf("C_conley_meat n=%d panel form with clusters", n), fin(M))
}
check("C_conley_meat refuses a missing coordinate", refused(.Call(ns$C_conley_meat, matrix(1, 2, 1), c(1, NA), c(1, 2),
      c(10, 1, 0, -1, 1), NULL, NULL, NULL, NULL)))
check("C_conley_meat refuses a serial lag without periods", refused(.Call(ns$C_conley_meat, matrix(1, 2, 1), c(1, 2),
      c(1, 2), c(10, 1, 0, 1, 1), NULL, NULL, NULL, NULL)))
## did_spillover's nearest treated units (conley.c, C_spill_nearest): the
## same grid and points, cutoffs up to all pairs, labels with and without
## members, both sides of the throttle; then a fit with Conley's variance
for (n in c(40, 2049)) {
  set.seed(n)
  la <- c(runif(n - 4, 60, 89.9), 89.99, -89.99, 0, 0); lo <- c(runif(n - 4, 170, 190) - 360 * (runif(n - 4) > 0.5), 0, 180, -180, 180)
  lo[lo > 180] <- lo[lo > 180] - 360
  lab <- as.integer(seq_len(n) %% 4) - 1L
  for (cut in c(1e-9, 50, 5000, 30000)) for (dist in 1:3) {
    M <- .Call(ns$C_spill_nearest, la, lo, lab, c(cut, dist, 4))
    check(sprintf("C_spill_nearest n=%d cutoff=%g dist=%d", n, cut, dist), is.matrix(M) && !anyNA(M))
  }
}
sp <- dd_sim_spillover(n_units = 150, n_periods = 5, region_km = 400)
f <- q(tryCatch(did_spillover(sp, "y", "id", "time", "first_treat", rings = c(0, 30, 60), vcov = "conley", cutoff = 60,
                              event_study = TRUE), error = function(e) e))
check("did_spillover with Conley's variance", inherits(f, "error") || fin(coef(f)))
check("C_spill_nearest refuses a missing coordinate", refused(.Call(ns$C_spill_nearest, c(1, NA), c(1, 2), c(0L, -1L),
      c(10, 1, 1))))
check("C_spill_nearest refuses a label out of range", refused(.Call(ns$C_spill_nearest, c(1, 2), c(1, 2), c(0L, 3L),
      c(10, 1, 1))))
## did_synth's V search in C (synth.c, nmmin and vmmin): k = 2 and 6 predictors
set.seed(3)
for (k in c(2L, 6L)) {
  X0 <- matrix(rnorm(k * 7), k); X1 <- apply(X0, 1, max) + 0.2
  Z0 <- matrix(rnorm(5 * 7), 5); Z1 <- rnorm(5)
  for (bfgs in c(FALSE, TRUE)) {
    r <- .Call(ns$C_synth_nm, X0, X1, Z0, Z1, rep(1 / k, k), NULL, 50L, bfgs)
    check(sprintf("C_synth_nm k=%d bfgs=%s", k, bfgs), is.finite(r$value) && fin(r$par))
  }
}
## did_cic's cells and bootstrap (cic.c): CiC and QDiD, panel and repeated
## cross-sections, with ties, clusters, on both sides of the parallel throttle
for (n in c(60, 2100)) {
  set.seed(n)
  cc <- dd_sim_staggered(n_units = n, n_periods = 4, cohorts = 3)
  cc$y <- round(cc$y, 1)
  cc$cl <- cc$id %% 13
  for (m in c("cic", "qdid")) for (pn in c(TRUE, FALSE)) {
    f <- q(tryCatch(did_cic(cc, "y", "id", "time", "first_treat", method = m, panel = pn, nboot = 25,
                            cluster = if (pn) "cl"), error = function(e) e))
    check(sprintf("did_cic n=%d %s panel=%s", n, m, pn), !inherits(f, "error") && fin(coef(f)))
  }
}
## did_cic's quantile regressions (rq.c) and covariate cells (cic.c,
## C_cic_rq): the smallest designs (n = p), zero weights, an outcome with
## many ties (degenerate vertices), intercept only; did_cic with covariates,
## panel and repeated cross-sections, with draws in which a binary
## covariate's rare value is missing (rank-deficient draws left out)
set.seed(11)
for (n in c(2L, 5L, 40L)) for (p in 1:2) {
  if (n < p) next
  X <- cbind(1, rnorm(n))[, seq_len(p), drop = FALSE]
  for (y in list(rnorm(n), round(rnorm(n)), rep(0, n))) for (w in list(rep(1, n), c(0, rep(2, n - 1L)))) {
    r <- tryCatch(.Call(ns$C_rq, X, as.double(y), as.double(w), c(0.01, 0.3, 0.5, 0.99)), error = function(e) e)
    check(sprintf("C_rq n=%d p=%d", n, p), (is.matrix(r) && fin(r)) || grepl("rank below", conditionMessage(r)))
  }
}
check("C_rq refuses a negative weight", refused(.Call(ns$C_rq, matrix(1, 3, 1), c(1, 2, 3), c(1, -1, 1), 0.5)))
check("C_rq refuses taus out of (0, 1)", refused(.Call(ns$C_rq, matrix(1, 3, 1), c(1, 2, 3), c(1, 1, 1), c(0.5, 1))))
check("C_rq refuses NaN in X", refused(.Call(ns$C_rq, matrix(c(1, NaN, 1), 3, 1), c(1, 2, 3), c(1, 1, 1), 0.5)))
cp <- dd_sim_staggered(n_units = 60, n_periods = 4)
cp$xc <- sin(cp$id); cp$rare <- as.numeric(cp$id %% 17 == 0)
for (m in c("cic", "qdid")) for (pn in c(TRUE, FALSE)) {
  dx <- cp; if (!pn) dx$id <- seq_len(nrow(dx))
  f <- q(tryCatch(did_cic(dx, "y", "id", "time", "first_treat", xformla = ~ xc + rare, method = m, panel = pn,
                          probs = c(0.2, 0.8), nboot = 4), error = function(e) e))
  check(sprintf("did_cic xformla method=%s panel=%s", m, pn), inherits(f, "error") || fin(coef(f)))
}
check("C_cic_rq refuses a matrix of the wrong height",
      refused(.Call(ns$C_cic_rq, c(1, 2, 3, 4), 0:3, matrix(1, 3, 1), 0:4, 0.5, 0.5, c(1L, 4L), 0:3, c(0L, 4L), 0L,
                    NULL, 0L)))
## regression discontinuity (rd.c, C_rd_lp; rd_density.c; rd_plot.c): the
## smallest windows (p + 1 distinct values), ties, zero weights, every vce,
## orders up to 10, several outcome columns with and without s, and the
## full front ends (selectors, clusters, covariates, fuzzy)
set.seed(13)

for (n in c(2L, 3L, 7L, 60L)) for (vce in 0:4) for (ord in list(c(1L, 2L, 0L), c(0L, -1L, 0L), c(3L, 5L, 2L), c(9L, 10L, 1L))) {
  x <- sort(round(runif(n), 1)); D <- cbind(rnorm(n), rnorm(n))
  for (fw in list(NULL, c(0, rep(1, n - 1L)))) for (s in list(NULL, c(1, -0.5))) {
    r <- .Call(ns$C_rd_lp, x, D, fw, 0.7, 1.1, ord, 1L, s, vce, 3L)
    check(sprintf("C_rd_lp n=%d vce=%d ord=%s", n, vce, paste(ord, collapse = "/")),
          is.list(r) && (!r$ok || fin(r$beta_p)))
  }
}
check("C_rd_lp refuses unsorted d", refused(.Call(ns$C_rd_lp, c(2, 1), matrix(1, 2, 1), NULL, 1, 1, c(0L, 1L, 0L), 1L,
                                                  NULL, 0L, 3L)))
check("C_rd_lp refuses q <= p", refused(.Call(ns$C_rd_lp, c(1, 2), matrix(1, 2, 1), NULL, 1, 1, c(2L, 2L, 0L), 1L,
                                              NULL, 0L, 3L)))
rdd <- data.frame(x = round(runif(300, -1, 1), 2), z = rnorm(300), g = sample(1:12, 300, TRUE), w = runif(300))
rdd$t <- as.numeric(runif(300) < 0.3 + 0.4 * (rdd$x >= 0)); rdd$y <- rdd$x + 0.5 * (rdd$x >= 0) + rnorm(300)
for (a in list(list(), list(vce = "hc3", p = 2), list(fuzzy = "t", covs = ~ z, cluster = "g"),
               list(bwselect = "msecomb2", weightsname = "w"), list(h = 0.3, b = 0.5, vce = "hc1", kernel = "uni"))) {
  f <- q(tryCatch(do.call(rd_robust, c(list(rdd, "y", "x"), a)), error = function(e) e))
  check(sprintf("rd_robust %s", paste(names(a), collapse = ",")), inherits(f, "error") || fin(coef(f)))
}
f <- q(tryCatch(rd_density(rdd, "x"), error = function(e) e))
check("rd_density", inherits(f, "error") || is.list(f))
f <- q(tryCatch(rd_plot(rdd, "y", "x", plot = FALSE), error = function(e) e))
check("rd_plot", inherits(f, "error") || is.list(f))
cat(sprintf("%d passed, %d failed\n", passed, failed))
