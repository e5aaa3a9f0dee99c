# Subpopulations (issue 44): subset() of a diffdiff survey design keeps the
# whole design (rows outside get weight zero, as survey's subset()); the
# estimators leave those rows out and the variance keeps every stratum and
# PSU. Against survey::svyglm() on survey's subset design (did_twfe,
# did_2x2: coefficient and SE 1e-10, degrees of freedom survey's) and, for did_cs, the design-based
# variance of its influence-function totals over the whole unit-level
# design with zeros outside the subpopulation (survey::svytotal, 1e-8).

sub_data <- function(seed = 2) {
  set.seed(seed)
  n <- 200
  u <- data.frame(id = seq_len(n), str = rep(1:5, 40), w = runif(n, 5, 30))
  u$psu <- u$str * 100 + sample(1:8, n, TRUE)
  u$g <- sample(c(0, 3), n, TRUE)
  u$female <- rbinom(n, 1, 0.5)
  d <- merge(expand.grid(t = 1:4, id = u$id)[, c("id", "t")], u, by = "id")
  d <- d[order(d$id, d$t), ]
  d$D <- as.integer(d$g > 0 & d$t >= d$g)
  d$tr <- as.integer(d$g > 0); d$post <- as.integer(d$t >= 3)
  d$y <- rnorm(n)[d$id] + 0.3 * d$t + d$D * (1 + d$female) + rnorm(nrow(d))
  list(d = d, u = u)
}

test_that("did_twfe and did_2x2 on subset(design) equal svyglm on survey's subset design", {
  need_peer("survey")
  x <- sub_data()
  d <- x$d
  sdes <- subset(survey::svydesign(ids = ~psu, strata = ~str, weights = ~w, data = d), female == 1)
  ddes <- subset(survey_design(d, weights = "w", strata = "str", ids = "psu"), d$female == 1)
  m <- survey::svyglm(y ~ D + factor(id) + factor(t), design = sdes)
  f <- suppressMessages(did_twfe(d, "y", "id", "t", "D", survey = ddes))
  expect_equal(f$coeftable$estimate[1], unname(coef(m)["D"]), tolerance = 1e-10)
  expect_equal(f$coeftable$std.error[1], unname(survey::SE(m)["D"]), tolerance = 1e-10)
  # survey's degrees of freedom (PSUs minus strata with rows in the subpopulation)
  expect_equal(f$df, survey::degf(sdes))
  expect_match(f$vcov_label, "subpopulation d\\$female == 1 \\(408 rows\\)")
  m2 <- survey::svyglm(y ~ tr * post, design = sdes)
  f2 <- suppressMessages(did_2x2(d, "y", "tr", "post", survey = ddes))
  expect_equal(f2$coeftable$estimate, unname(coef(m2)), tolerance = 1e-10)
  expect_equal(f2$coeftable$std.error, unname(survey::SE(m2)), tolerance = 1e-10)
  expect_equal(f2$df, m2$df.residual)
  # not the same as a design built on the subset of the data
  sub <- d[d$female == 1, ]
  f3 <- did_twfe(sub, "y", "id", "t", "D", survey = survey_design(sub, weights = "w", strata = "str", ids = "psu"))
  expect_equal(f3$coeftable$estimate[1], f$coeftable$estimate[1], tolerance = 1e-10)
  expect_false(isTRUE(all.equal(f3$coeftable$std.error[1], f$coeftable$std.error[1], tolerance = 1e-6)))
  # survey's own subset design has the rows dropped: refused, not a smaller design
  expect_error(did_twfe(sub, "y", "id", "t", "D", survey = sdes), "rows dropped")
})

test_that("did_cs on subset(design): the variance of its influence-function totals over the whole design", {
  need_peer("survey")
  x <- sub_data(3)
  d <- x$d; u <- x$u
  ddes <- subset(survey_design(d, weights = "w", strata = "str", ids = "psu"), d$female == 1)
  f <- suppressMessages(did_cs(d, "y", "id", "t", "g", nboot = 0, survey = ddes))
  sub <- d[d$female == 1, ]
  f0 <- did_cs(sub, "y", "id", "t", "g", nboot = 0, weightsname = "w")
  expect_equal(f$coeftable$estimate, f0$coeftable$estimate, tolerance = 1e-12)
  K <- nrow(f$coeftable)
  U <- matrix(0, nrow(u), K)
  U[match(f$units, u$id), ] <- as.matrix(f$inf)[, seq_len(K)] / (f$n * u$w[match(f$units, u$id)])
  colnames(U) <- paste0("v", seq_len(K))
  du <- cbind(u, U)
  udes <- survey::svydesign(ids = ~psu, strata = ~str, weights = ~w, data = du)
  s <- survey::SE(survey::svytotal(stats::as.formula(paste("~", paste(colnames(U), collapse = "+"))), udes))
  expect_equal(f$coeftable$std.error, unname(s), tolerance = 1e-8)
  expect_equal(dd_deff(f)$std.error, f$coeftable$std.error, tolerance = 1e-12)
})

test_that("subset(design): bad input; trimming leaves the rows outside at zero", {
  x <- sub_data(4)
  d <- x$d
  des <- survey_design(d, weights = "w", strata = "str", ids = "psu")
  expect_error(subset(des, d$female[1:10] == 1), "one value per row of the design \\(800\\)")
  expect_error(subset(des, rep(FALSE, nrow(d))), "leaves no row of positive weight")
  s <- subset(des, d$female == 1)
  expect_output(print(s), "subpopulation: d\\$female == 1")
  tr <- trim_weights(s, upper = 20)
  expect_true(all(tr$weights[d$female == 0] == 0))
  expect_equal(sum(tr$weights), sum(d$w[d$female == 1]), tolerance = 1e-12)
  expect_message(did_cs(d, "y", "id", "t", "g", nboot = 0, survey = s), "outside the subpopulation")
})
