# did_bc() against the live badcontrols 1.0.1 (didbc(), on ptetools' cells),
# on the package's own simulated data (simulate_bad_controls) and its NLSY
# job-displacement example.
# * Imputation: every ATT(g,t) and its analytic standard error (ptetools'
#   V_analytical: the cell influence functions) to 1e-8 (testthat's
#   relative), for each covariate role, both strategies, a 0/1 bad control,
#   no bad control, both comparison groups, and the universal base period
#   with never-treated comparisons. A 0/1 bad control (a logit imputation
#   model): glm's default stopping rule leaves badcontrols' standard errors
#   up to 5e-7 from diffdiff's (1e-6 here); with glm run to convergence the
#   two agree to 1e-10.
# * Aggregations: the estimates equal ptetools'. Deliberate difference in
#   the standard errors: ptetools' weight-estimation term uses the cohort
#   shares normalised to sum to one where did (and diffdiff) use the shares
#   themselves (the term's mean must be zero); both are reproduced here by
#   hand from ptetools' own cell influence functions (on the simulated data
#   the overall SE is 0.05736 here, 0.05675 by ptetools' formula).
# * Universal base period with not-yet-treated comparisons: ptetools takes
#   cohorts first treated after t as the comparison group of a pre-period
#   cell even when they are treated by the base period; diffdiff uses did's
#   rule (after the later of t and the base period). Post-treatment cells
#   agree; the test checks that only the pre-treatment cells differ.
# * Doubly robust: badcontrols draws new folds in every cell, diffdiff one
#   set of folds for all cells, so the check is cell by cell: badcontrols'
#   folds are captured (trace() on dr_ml_attgt) and diffdiff's cell score
#   run on them: with badcontrols' own nuisance fits (lm, glm) the estimates
#   and influence functions agree to 1e-10; with diffdiff's learners they
#   equal those of a fully converged glm (1e-8) -- glm's default stopping
#   rule leaves badcontrols up to 3.6e-8 (relative) from it. The cells that
#   fall back to imputation are the same and equal.

bc_sim <- function() {
  set.seed(20260101)
  badcontrols::simulate_bad_controls(n = 500, T_max = 4)$data
}

bc_peer <- function(d, y, g, t, id, bc, args) {
  suppressWarnings(do.call(badcontrols::didbc, c(list(yname = y, gname = g, tname = t, idname = id, data = d,
                                                      bad_control_formula = bc, bstrap = FALSE, cband = FALSE), args)))
}

bc_cells <- function(r, f) {
  a <- r$att_gt
  m <- match(paste(a$group, a$t), paste(f$coeftable$group, f$coeftable$time))
  n <- nrow(a$inf_func)
  list(att = a$att, se = sqrt(diag(as.matrix(a$V_analytical)) / n), est = f$coeftable$estimate[m],
       std = f$coeftable$std.error[m], g = a$group, t = a$t)
}

test_that("did_bc(est_method = 'imputation') equals badcontrols::didbc cell by cell", {
  need_peer("badcontrols")
  d <- bc_sim()
  d$Zt <- d$Z + rnorm(nrow(d)); d$Wt <- d$W + rnorm(nrow(d))
  cases <- list(
    default = list(list(xformula = ~ Z), list(xformla = ~ Z)),
    aux = list(list(xformula = ~ Z, bad_control_cov_formula = ~ W), list(xformla = ~ Z, bc_xformla = ~ W)),
    changes = list(list(xformula = ~ Z, d_covs_formula = ~ Zt, bad_control_cov_formula = ~ W,
                        bad_control_d_cov_formula = ~ Wt),
                   list(xformla = ~ Z, dxformla = ~ Zt, bc_xformla = ~ W, bc_dxformla = ~ Wt)),
    did = list(list(xformula = ~ Z, bad_control_cov_formula = ~ W, bad_control_identification_strategy = "did"),
               list(xformla = ~ Z, bc_xformla = ~ W, bc_strategy = "did")),
    outcome_aux = list(list(xformula = ~ Z, bad_control_cov_formula = ~ Y), list(xformla = ~ Z, bc_xformla = ~ Y)),
    never = list(list(xformula = ~ Z, control_group = "nevertreated"), list(xformla = ~ Z, control_group = "nevertreated")),
    universal = list(list(xformula = ~ Z, control_group = "nevertreated", base_period = "universal"),
                     list(xformla = ~ Z, control_group = "nevertreated", base_period = "universal")))
  for (k in names(cases)) {
    r <- bc_peer(d, "Y", "G", "period", "id", ~ X, cases[[k]][[1]])
    f <- do.call(did_bc, c(list(d, "Y", "id", "period", "G", bad_control = "X", nboot = 0), cases[[k]][[2]]))
    cc <- bc_cells(r, f)
    ok <- !is.na(cc$se)          # (the universal base period's reference cells: 0, no SE)
    expect_gt(sum(ok), 8L)
    expect_equal(cc$est, cc$att, tolerance = 1e-8, label = paste(k, "ATT(g,t)"))
    expect_equal(cc$std[ok], cc$se[ok], tolerance = 1e-8, label = paste(k, "SE"))
  }
  # no bad control
  r <- bc_peer(d, "Y", "G", "period", "id", NULL, list(xformula = ~ Z))
  f <- did_bc(d, "Y", "id", "period", "G", bad_control = NULL, xformla = ~ Z, nboot = 0)
  cc <- bc_cells(r, f)
  expect_equal(cc$est, cc$att, tolerance = 1e-8)
  expect_equal(cc$std, cc$se, tolerance = 1e-8)
  # a 0/1 bad control (a logit imputation model)
  set.seed(5)
  db <- badcontrols::simulate_bad_controls(n = 800, T_max = 4, binary_bad_control = TRUE)$data
  r <- bc_peer(db, "Y", "G", "period", "id", ~ X, list(xformula = ~ Z, bad_control_cov_formula = ~ W))
  f <- did_bc(db, "Y", "id", "period", "G", bad_control = "X", xformla = ~ Z, bc_xformla = ~ W, nboot = 0)
  expect_true(f$bc_binary)
  cc <- bc_cells(r, f)
  expect_equal(cc$est, cc$att, tolerance = 1e-8)
  # badcontrols' logit is glm's, stopped at its default tolerance (a
  # relative deviance change below 1e-8), its information matrix taken at
  # the working weights of the start of the last step; diffdiff's is at
  # the solution: the standard errors differ by up to 5e-7 (relative) ...
  expect_equal(cc$std, cc$se, tolerance = 1e-6)
  # ... and agree to 1e-10 once glm is run to convergence (glm.control's
  # epsilon set to 1e-14 for the peer's call)
  suppressMessages(trace("glm.control", tracer = quote(epsilon <- 1e-14), where = asNamespace("stats"), print = FALSE))
  r14 <- tryCatch(bc_peer(db, "Y", "G", "period", "id", ~ X, list(xformula = ~ Z, bad_control_cov_formula = ~ W)),
                  finally = suppressMessages(untrace("glm.control", where = asNamespace("stats"))))
  c14 <- bc_cells(r14, f)
  expect_equal(c14$est, c14$att, tolerance = 1e-10)
  expect_equal(c14$std, c14$se, tolerance = 1e-10)
})

test_that("did_bc equals didbc on badcontrols' NLSY example (biennial periods, factors of covariates)", {
  need_peer("badcontrols")
  e <- new.env()
  utils::data("nlsy_job_displacement", package = "badcontrols", envir = e)
  d <- e$nlsy_job_displacement
  r <- bc_peer(d, "log_earnings", "group", "year", "id", ~ occ_score, list(xformula = ~ race + female + educ_max_grade))
  f <- did_bc(d, "log_earnings", "id", "year", "group", bad_control = ~ occ_score,
              xformla = ~ race + female + educ_max_grade, nboot = 0)
  cc <- bc_cells(r, f)
  expect_length(cc$att, 25L)
  expect_equal(cc$est, cc$att, tolerance = 1e-8)
  expect_equal(cc$std, cc$se, tolerance = 1e-8)
  ag <- aggregate(f, "group")
  expect_equal(ag$coeftable$estimate[ag$coeftable$term == "ATT"], r$overall_att$overall.att, tolerance = 1e-8)
  es <- aggregate(f, "dynamic")
  k <- es$coeftable$term != "ATT"
  expect_equal(es$coeftable$estimate[k], r$event_study$att.egt, tolerance = 1e-8)
})

test_that("did_bc's aggregations: ptetools' estimates; the standard errors differ only by the shares in the weight term", {
  need_peer("badcontrols")
  d <- bc_sim()
  r <- bc_peer(d, "Y", "G", "period", "id", ~ X, list(xformula = ~ Z))
  f <- did_bc(d, "Y", "id", "period", "G", bad_control = "X", xformla = ~ Z, nboot = 0)
  ag <- aggregate(f, "group")
  ov <- ag$coeftable$term == "ATT"
  expect_equal(ag$coeftable$estimate[ov], r$overall_att$overall.att, tolerance = 1e-8)
  expect_equal(ag$coeftable$estimate[!ov], r$overall_att$att.egt, tolerance = 1e-8)
  es <- aggregate(f, "dynamic")
  expect_equal(es$coeftable$estimate[es$coeftable$term != "ATT"], r$event_study$att.egt, tolerance = 1e-8)
  # by hand from ptetools' cell influence functions: the overall ATT's
  # influence function with the shares' estimation term, shares raw (did's)
  # or normalised (ptetools')
  IF <- as.matrix(r$att_gt$inf_func); grp <- r$att_gt$group; tt <- r$att_gt$t; att <- r$att_gt$att
  G <- d$G[d$period == 1]
  gl <- sort(unique(grp))
  overall_se <- function(p) {
    ig <- sapply(gl, function(g) rowMeans(IF[, grp == g & tt >= g, drop = FALSE]))
    ag_g <- sapply(gl, function(g) mean(att[grp == g & tt >= g]))
    ind <- sapply(gl, function(g) as.numeric(G == g))
    if1 <- sweep(ind, 2, p) / sum(p)
    if2 <- rowSums(sweep(ind, 2, p)) %*% t(p / sum(p)^2)
    inf <- ig %*% (p / sum(p)) + (if1 - if2) %*% ag_g
    sqrt(sum(inf^2)) / length(inf)
  }
  raw <- sapply(gl, function(g) mean(G == g))
  expect_equal(ag$coeftable$std.error[ov], overall_se(raw), tolerance = 1e-8)
  inf_pte <- r$overall_att$inf.function$selective.inf.func
  expect_equal(sqrt(mean(inf_pte^2) / length(inf_pte)), overall_se(raw / sum(raw)), tolerance = 1e-8)
  expect_gt(abs(overall_se(raw) - overall_se(raw / sum(raw))), 1e-4)
})

test_that("universal base period, not-yet-treated: ptetools' pre-period comparison groups differ, the rest agrees", {
  need_peer("badcontrols")
  d <- bc_sim()
  r <- bc_peer(d, "Y", "G", "period", "id", ~ X, list(xformula = ~ Z, base_period = "universal"))
  f <- did_bc(d, "Y", "id", "period", "G", bad_control = "X", xformla = ~ Z, base_period = "universal", nboot = 0)
  cc <- bc_cells(r, f)
  post <- cc$t >= cc$g
  expect_equal(cc$est[post], cc$att[post], tolerance = 1e-8)
  # pre-period cells whose ptetools comparison group holds cohorts treated
  # by the base period (g - 1): (3,1) and (4,1), (4,2)
  contaminated <- !post & sapply(seq_along(cc$g), function(i) any(unique(d$G) > cc$t[i] & unique(d$G) <= cc$g[i] - 1))
  expect_equal(sum(contaminated), 3L)
  expect_true(all(abs(cc$est[contaminated] - cc$att[contaminated]) > 0.1))
  expect_equal(cc$est[!contaminated], cc$att[!contaminated], tolerance = 1e-8)
})

test_that("did_bc's doubly robust cell score equals badcontrols::dr_ml_attgt on the same folds; fallbacks agree", {
  need_peer("badcontrols")
  d <- bc_sim()
  cap <- new.env()
  cap$cells <- list()
  suppressMessages(trace("dr_ml_attgt", where = asNamespace("badcontrols"), print = FALSE, exit = bquote({
    if (exists("fold_ids", inherits = FALSE))
      assign("cells", c(get("cells", envir = .(cap)), list(list(id = wide_data$id, fold = fold_ids, g = this_g,
                                                                t = this_tp, ret = returnValue()))),
             envir = .(cap))
  })))
  on.exit(suppressMessages(untrace("dr_ml_attgt", where = asNamespace("badcontrols"))), add = TRUE)
  set.seed(1)
  r <- bc_peer(d, "Y", "G", "period", "id", ~ X, list(xformula = ~ Z, bad_control_cov_formula = ~ W,
                                                     est_method = "dr_ml", nuisance_method = "parametric"))
  lin <- diffdiff:::dd_cf_learner("linear")
  # badcontrols' parametric nuisances: lm() and glm(binomial) (its
  # fit_reg_nuisance / fit_prop_nuisance), as a linear learner (in-sample
  # pseudo-outcomes); eps: glm's convergence tolerance
  glm_lrn <- function(eps) list(name = "linear", fit = function(x, y, w, x_new, type) {
    df <- data.frame(x); df$.y <- y
    if (type == "regression") return(unname(stats::predict(stats::lm(.y ~ ., data = df), newdata = data.frame(x_new))))
    fit <- stats::glm(.y ~ ., data = df, family = stats::binomial(), control = stats::glm.control(epsilon = eps))
    unname(stats::predict(fit, newdata = data.frame(x_new), type = "response"))
  })
  expect_gte(length(cap$cells), 6L)
  for (cl in cap$cells) {
    base <- if (cl$t < cl$g) cl$t - 1 else cl$g - 1
    pre <- d[d$period == base, ]; pre <- pre[match(cl$id, pre$id), ]
    post <- d[d$period == cl$t, ]; post <- post[match(cl$id, post$id), ]
    v <- list(dY = post$Y - pre$Y, D = as.numeric(pre$G == cl$g), bpre = cbind(X = pre$X), bpost = cbind(X = post$X),
              Z = cbind(Z = pre$Z), W = cbind(W = pre$W))
    lab <- sprintf("(%s,%s)", cl$g, cl$t)
    # the score with badcontrols' own nuisance fits (lm, and glm at its
    # default tolerance) is badcontrols' number
    b <- diffdiff:::dd_bc_dr(v, cl$fold, list(outcome = glm_lrn(1e-8), propensity = glm_lrn(1e-8)), FALSE, 0.99, 5)
    expect_identical(b$fallback, "", label = lab)
    expect_equal(b$att, cl$ret$attgt, tolerance = 1e-10, label = lab)
    expect_equal(b$phi, cl$ret$inf_func, tolerance = 1e-10, label = lab)
    # with diffdiff's learners it is the converged logit's (glm stops once
    # the deviance changes by less than 1e-8, 3e-8 away from the maximum in
    # cell (4,2))
    o <- diffdiff:::dd_bc_dr(v, cl$fold, list(outcome = lin, propensity = lin), FALSE, 0.99, 5)
    c14 <- diffdiff:::dd_bc_dr(v, cl$fold, list(outcome = glm_lrn(1e-14), propensity = glm_lrn(1e-14)), FALSE, 0.99, 5)
    expect_equal(o$att, c14$att, tolerance = 1e-8, label = lab)
    expect_equal(o$phi, c14$phi, tolerance = 1e-8, label = lab)
    expect_equal(o$att, cl$ret$attgt, tolerance = 1e-6, label = lab)
  }
  # the cells badcontrols ran without folds fell back to imputation; so do
  # diffdiff's, with the same numbers
  f <- suppressWarnings(did_bc(d, "Y", "id", "period", "G", bad_control = "X", xformla = ~ Z, bc_xformla = ~ W,
                               est_method = "dr", nboot = 0, seed = 1))
  key <- paste(f$coeftable$group, f$coeftable$time)
  fell <- !key %in% vapply(cap$cells, function(cl) paste(cl$g, cl$t), "")
  expect_true(any(fell))
  expect_true(all(nzchar(f$fallbacks[fell])) && !any(nzchar(f$fallbacks[!fell])))
  m <- match(key[fell], paste(r$att_gt$group, r$att_gt$t))
  expect_equal(f$coeftable$estimate[fell], r$att_gt$att[m], tolerance = 1e-8)
})
