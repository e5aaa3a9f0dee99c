# Real survey microdata: inst/extdata/nhanes_aca.csv (NHANES 2007-2008 and
# 2015-2016 young adults; the ACA dependent-coverage provision), did_2x2()
# with the NHANES design (31 strata, 2 PSUs each, exam weights) against the
# survey package's svyglm() run here (Debian r-cran-survey). Tolerances from
# issue #5: coefficients 1e-10 relative, standard errors 1e-8.

nhanes <- function() read.csv(system.file("extdata", "nhanes_aca.csv", package = "diffdiff"))

nh_cmp <- function(f, g, terms_g, terms_f) {
  expect_lt(max(abs(coef(g)[terms_g] - coef(f)[terms_f]) / abs(coef(g)[terms_g])), 1e-10)
  se_f <- f$coeftable$std.error[match(terms_f, f$coeftable$term)]
  expect_lt(max(abs(survey::SE(g)[terms_g] - se_f) / survey::SE(g)[terms_g]), 1e-8)
}

test_that("the NHANES ACA microdata ship with their design columns", {
  nh <- nhanes()
  expect_identical(dim(nh), c(2946L, 13L))
  expect_true(all(c("outcome", "treated", "post", "SDMVSTRA", "SDMVPSU", "WTMEC2YR") %in% names(nh)))
  expect_identical(sort(unique(nh$cycle)), c("2007-2008", "2015-2016"))
  expect_true(all(tapply(nh$SDMVPSU, nh$SDMVSTRA, function(p) length(unique(p))) == 2L))
  x <- did_check(transform(nh, period = post), "outcome", "unit_id", "period", gname = "first_treat")
  expect_true("OUTCOME_BINARY" %in% x$findings$code)
})

test_that("did_2x2 on NHANES with its design equals svyglm (strata, PSUs, weights; covariates; weights only; JK1)", {
  need_peer("survey")
  nh <- nhanes(); nh0 <- nh
  # strata + PSUs + weights
  sd <- survey::svydesign(ids = ~SDMVPSU, strata = ~SDMVSTRA, weights = ~WTMEC2YR, nest = TRUE, data = nh)
  g <- survey::svyglm(outcome ~ treated * post, design = sd)
  des <- survey_design(nh, weights = ~WTMEC2YR, strata = ~SDMVSTRA, ids = ~SDMVPSU, nest = TRUE)
  f <- did_2x2(nh, "outcome", "treated", "post", survey = des)
  nh_cmp(f, g, "treated:post", "ATT")
  expect_equal(survey::degf(sd), 31)                        # 62 PSUs - 31 strata
  expect_equal(f$df, g$df.residual)                          # as svyglm: 31 - 4 coefficients + 1
  expect_equal(f$df, 28)
  # the same from the survey package's design object
  nh_cmp(did_2x2(nh, "outcome", "treated", "post", survey = sd), g, "treated:post", "ATT")
  # covariates (complete cases: the family income ratio has missing values)
  cc <- nh[complete.cases(nh[, c("RIAGENDR", "INDFMPIR")]), ]
  sdc <- survey::svydesign(ids = ~SDMVPSU, strata = ~SDMVSTRA, weights = ~WTMEC2YR, nest = TRUE, data = cc)
  gc <- survey::svyglm(outcome ~ treated * post + RIAGENDR + INDFMPIR, design = sdc)
  fc <- did_2x2(cc, "outcome", "treated", "post", xformla = ~ RIAGENDR + INDFMPIR,
                survey = survey_design(cc, weights = ~WTMEC2YR, strata = ~SDMVSTRA, ids = ~SDMVPSU, nest = TRUE))
  nh_cmp(fc, gc, c("treated:post", "RIAGENDR", "INDFMPIR"), c("ATT", "RIAGENDR", "INDFMPIR"))
  # weights only
  sw <- survey::svydesign(ids = ~1, weights = ~WTMEC2YR, data = nh)
  gw <- survey::svyglm(outcome ~ treated * post, design = sw)
  fw <- did_2x2(nh, "outcome", "treated", "post", survey = survey_design(nh, weights = ~WTMEC2YR))
  nh_cmp(fw, gw, "treated:post", "ATT")
  # design-based SEs are wider than weights-only ones here (PSU clustering)
  expect_gt(f$coeftable$std.error[f$coeftable$term == "ATT"], fw$coeftable$std.error[fw$coeftable$term == "ATT"])
  # JK1 replicate weights built from the design
  rj <- survey::as.svrepdesign(sd, type = "JKn")
  gj <- survey::svyglm(outcome ~ treated * post, design = rj)
  nh_cmp(did_2x2(nh, "outcome", "treated", "post", survey = rj), gj, "treated:post", "ATT")
  expect_identical(nh, nh0)
})
