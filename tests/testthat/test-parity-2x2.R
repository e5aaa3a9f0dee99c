# did_2x2 against fixest::feols(y ~ treated * post + x1) with the matching vcov.
# Tolerances: coefficients 1e-8 relative, standard errors 1e-6 relative (issue #2).
test_that("did_2x2 equals feols for iid, hetero, one- and two-way clusters, with weights", {
  need_peer("fixest")
  d <- sim_2x2()
  specs <- list(list(vcov = "iid", fx = "iid"), list(vcov = "hetero", fx = "hetero"),
                list(cluster = "state", fx = ~state), list(cluster = c("state", "id"), fx = ~state + id))
  for (wt in list(NULL, "w")) for (s in specs) {
    fit <- did_2x2(d, "y", "treated", "post", xformla = ~ x1 + x2, weightsname = wt,
                   cluster = s$cluster, vcov = s$vcov)
    m <- fixest::feols(y ~ treated * post + x1 + x2, d, vcov = s$fx,
                       weights = if (is.null(wt)) NULL else ~w)
    ct <- fixest::coeftable(m)
    i <- c(1, 2, 3, 6, 4, 5)   # fixest order: (Intercept) treated post x1 x2 treated:post
    expect_lt(rel_diff(coef(fit), coef(m)[i]), 1e-8)
    expect_lt(rel_diff(fit$coeftable$std.error, ct[i, 2]), 1e-6)
    expect_lt(rel_diff(fit$coeftable$p.value, ct[i, 4]), 1e-6)
    ci <- confint(m)[i, ]
    expect_lt(rel_diff(confint(fit), as.matrix(ci)), 1e-6)
  }
})

test_that("HC0 equals fixest's hetero without the small-sample factor", {
  need_peer("fixest")
  d <- sim_2x2()
  fit <- did_2x2(d, "y", "treated", "post", xformla = ~ x1, vcov = "HC0")
  m <- fixest::feols(y ~ treated * post + x1, d, vcov = "hetero", ssc = fixest::ssc(K.adj = FALSE))
  expect_lt(rel_diff(fit$coeftable$std.error, fixest::se(m)[c(1, 2, 3, 5, 4)]), 1e-6)
})
