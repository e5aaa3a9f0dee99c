# did_event against feols(y ~ i(rel_time, ref = -1) | id + t), never-treated
# units given rel_time -1000 (also a reference), as fixest's documentation does.
# Tolerances: coefficients 1e-8 relative, standard errors 1e-6 relative (issue #2).
test_that("did_event equals feols on base_stagg for each vcov", {
  need_peer("fixest")
  data("base_stagg", package = "fixest", envir = environment())
  b <- base_stagg
  b$g <- ifelse(b$year_treated == 10000, 0, b$year_treated)   # 0 = never treated
  for (v in list("iid", "hetero", ~id, ~id + year)) {
    est <- function() did_event(b, "y", "id", "year", "g", xformla = ~ x1,
                                vcov = if (is.character(v)) v else NULL,
                                cluster = if (is.character(v)) NULL else v)
    peer <- function() fixest::feols(y ~ i(time_to_treatment, ref = c(-1, -1000)) + x1 | id + year,
                                     b, vcov = v)
    if (identical(v, ~id + year)) {
      # the two-way matrix is not PSD here: both repair it and warn
      expect_warning(fit <- est(), "not positive semi-definite")
      expect_warning(m <- peer(), "not positive definite")
    } else {
      fit <- est(); m <- peer()
    }
    ct <- fixest::coeftable(m)
    expect_equal(sub("event::", "", fit$coeftable$term[-nrow(ct)]),
                 sub("time_to_treatment::", "", rownames(ct)[-nrow(ct)]))
    expect_lt(rel_diff(fit$coeftable$estimate, ct[, 1]), 1e-8)
    expect_lt(rel_diff(fit$coeftable$std.error, ct[, 2]), 1e-6)
  }
})

test_that("did_event with a binned window equals feols on the binned relative time", {
  need_peer("fixest")
  d <- sim_panel()
  fit <- did_event(d, "y", "id", "year", "first_treat", window = c(-3, 3), weightsname = "w")
  d$rel <- ifelse(d$first_treat == 0, -1000, pmin(pmax(d$year - d$first_treat, -3), 3))
  m <- fixest::feols(y ~ i(rel, ref = c(-1, -1000)) | id + year, d, weights = ~w, vcov = ~id)
  expect_equal(fit$coeftable$event, c(-3, -2, 0, 1, 2, 3))
  expect_lt(rel_diff(coef(fit), coef(m)), 1e-8)
  expect_lt(rel_diff(fit$coeftable$std.error, fixest::se(m)), 1e-6)
})

test_that("without never-treated units one more period is dropped, as in fixest", {
  need_peer("fixest")
  d <- sim_panel()
  d <- d[d$first_treat > 0, ]
  expect_message(fit <- did_event(d, "y", "id", "year", "first_treat"), "collinearity")
  d$rel <- d$year - d$first_treat
  m <- fixest::feols(y ~ i(rel, ref = -1) | id + year, d, vcov = ~id, notes = FALSE)
  keep <- !is.na(coef(fit))
  # the two latest relative periods come from the earliest cohort alone and are
  # collinear with the time effects; fixest drops the same ones
  expect_equal(sub("event::", "", names(coef(fit))[!keep]), sub("rel::", "", m$collin.var))
  expect_lt(rel_diff(coef(fit)[keep], coef(m)), 1e-8)
  expect_lt(rel_diff(fit$coeftable$std.error, fixest::se(m)), 1e-6)
})
