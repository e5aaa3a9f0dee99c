# bacon_decomp() against bacondecomp::bacon() (live, CRAN 0.1.1) on its castle
# and divorce data: every 2x2 estimate and weight to 1e-8, and the weighted
# sum equal to the TWFE coefficient (lm with unit and year dummies).
bacon_check <- function(ref, f) {
  ref$untreated[ref$untreated == 99999] <- Inf      # bacondecomp codes never treated as 99999
  m <- merge(ref, f$two_by_twos, by = c("treated", "untreated"), suffixes = c(".ref", ".dd"))
  expect_equal(nrow(m), nrow(ref))
  expect_equal(nrow(f$two_by_twos), nrow(ref))
  expect_lt(max(abs(m$estimate.ref - m$estimate.dd)), 1e-8)
  expect_lt(max(abs(m$weight.ref - m$weight.dd)), 1e-8)
  expect_identical(m$type.ref, m$type.dd)
}

test_that("castle: 2x2 estimates, weights and types equal bacondecomp's; sum = TWFE", {
  need_peer("bacondecomp")
  data("castle", package = "bacondecomp", envir = environment())
  c0 <- castle
  f <- bacon_decomp(castle, "l_homicide", "state", "year", treatname = "post")
  expect_identical(castle, c0)
  bacon_check(bacondecomp::bacon(l_homicide ~ post, data = castle, id_var = "state", time_var = "year",
                                 quietly = TRUE), f)
  tw <- unname(coef(lm(l_homicide ~ post + factor(state) + factor(year), castle))["post"])
  expect_equal(f$beta_twfe, tw, tolerance = 1e-10)
  # the row order of the data does not matter
  set.seed(4)
  g <- bacon_decomp(castle[sample(nrow(castle)), ], "l_homicide", "state", "year", dname = "post")
  expect_equal(g$two_by_twos, f$two_by_twos, tolerance = 1e-12)
  s <- summary(f)
  expect_equal(sum(s$weight), 1, tolerance = 1e-12)
  expect_equal(sum(s$weight * s$avg_estimate), tw, tolerance = 1e-10)
})

test_that("divorce (with always-treated states): equal to bacondecomp; gname gives the same", {
  need_peer("bacondecomp")
  data("divorce", package = "bacondecomp", envir = environment())
  dv <- divorce[divorce$sex == 2, c("st", "year", "suiciderate_elast_jag", "unilateral")]
  f <- bacon_decomp(dv, "suiciderate_elast_jag", "st", "year", dname = "unilateral")
  bacon_check(bacondecomp::bacon(suiciderate_elast_jag ~ unilateral, data = dv, id_var = "st", time_var = "year",
                                 quietly = TRUE), f)
  expect_true("Later vs Always Treated" %in% f$two_by_twos$type)
  tw <- unname(coef(lm(suiciderate_elast_jag ~ unilateral + factor(st) + factor(year), dv))["unilateral"])
  expect_equal(f$beta_twfe, tw, tolerance = 1e-10)
  first <- tapply(ifelse(dv$unilateral == 1, dv$year, Inf), dv$st, min)
  dv$g <- first[dv$st]
  g <- bacon_decomp(dv, "suiciderate_elast_jag", "st", "year", gname = "g")
  expect_equal(g$two_by_twos, f$two_by_twos)
})

test_that("with covariates: the controlled decomposition equals bacondecomp's (castle, sim_panel)", {
  need_peer("bacondecomp")
  data("castle", package = "bacondecomp", envir = environment())
  ref <- bacondecomp::bacon(l_homicide ~ post + l_pop + l_income, data = castle, id_var = "state",
                            time_var = "year", quietly = TRUE)
  f <- bacon_decomp(castle, "l_homicide", "state", "year", dname = "post", xformla = ~ l_pop + l_income)
  bacon_check(ref$two_by_twos, f)
  expect_equal(f$Omega, ref$Omega, tolerance = 1e-10)
  expect_equal(f$beta_hat_w, ref$beta_hat_w, tolerance = 1e-10)
  tw <- unname(coef(lm(l_homicide ~ post + l_pop + l_income + factor(state) + factor(year), castle))["post"])
  expect_equal(f$beta_twfe, tw, tolerance = 1e-10)
  d <- sim_panel()
  ref <- bacondecomp::bacon(y ~ treat + x1, data = d, id_var = "id", time_var = "year", quietly = TRUE)
  f <- bacon_decomp(d, "y", "id", "year", dname = "treat", xformla = ~ x1)
  bacon_check(ref$two_by_twos, f)
  expect_equal(f$Omega, ref$Omega, tolerance = 1e-10)
  tw <- unname(coef(lm(y ~ treat + x1 + factor(id) + factor(year), d))["treat"])
  expect_equal(f$beta_twfe, tw, tolerance = 1e-10)
})

test_that("bacon_decomp bad input", {
  d <- sim_panel()
  expect_error(bacon_decomp(d[-5, ], "y", "id", "year", gname = "first_treat"), "balanced panel")
  expect_error(bacon_decomp(d, "y", "id", "year"), "exactly one of `dname`")
  expect_error(bacon_decomp(d, "y", "id", "year", dname = "treat", gname = "first_treat"), "exactly one")
  expect_error(bacon_decomp(d, "y", "id", "year", dname = "treat", treatname = "treat"), "former name")
  d2 <- d; d2$treat[d2$id == d2$id[d2$treat == 1][1] & d2$year == 2010] <- 0
  expect_error(bacon_decomp(d2, "y", "id", "year", dname = "treat"),
               "`dname` = \"treat\" switches off again for unit .*the Bacon decomposition needs an absorbing treatment",
               class = "diffdiff_treatment_reversible")
  d3 <- d; d3$first_treat <- 0
  expect_error(bacon_decomp(d3, "y", "id", "year", gname = "first_treat"), "nothing to decompose")
  d4 <- d; d4$y[3] <- NA
  expect_error(suppressMessages(bacon_decomp(d4, "y", "id", "year", gname = "first_treat")), "balanced panel without missing")
  expect_s3_class(plot(bacon_decomp(d, "y", "id", "year", gname = "first_treat")), "bacon_decomp")
})
