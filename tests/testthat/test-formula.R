# The fixest-style formula interface (issue 37, item 4): y ~ x | id + t with
# sunab(g, t) or a named gname/dname, for did_twfe, did_event, did_sa,
# did_bjs and did_gardner: the same fit as the column-name call (whose call
# it records); every other estimator says how to write the call.

castle_data <- function() read.csv(system.file("extdata", "castle.csv", package = "diffdiff"))

test_that("a formula call equals the column-name call and records it", {
  castle <- castle_data()
  fits <- list(
    list(did_sa(l_homicide ~ sunab(effyear, year) | sid + year, data = castle),
         did_sa(castle, "l_homicide", "sid", "year", "effyear")),
    list(did_bjs(l_homicide ~ 1 | sid + year, castle, gname = "effyear"),
         did_bjs(castle, "l_homicide", "sid", "year", "effyear")),
    list(did_gardner(l_homicide ~ sunab(effyear, year) | sid + year, data = castle),
         did_gardner(castle, "l_homicide", "sid", "year", "effyear")),
    list(did_twfe(l_homicide ~ post + l_police | sid + year, data = castle),
         did_twfe(castle, "l_homicide", "sid", "year", "post", xformla = ~ l_police)),
    list(did_twfe(l_homicide ~ l_police | sid + year, data = castle, dname = "post", cluster = ~ state),
         did_twfe(castle, "l_homicide", "sid", "year", "post", xformla = ~ l_police, cluster = ~ state)))
  for (p in fits) {
    expect_identical(p[[1]]$coeftable, p[[2]]$coeftable)
    expect_identical(p[[1]]$call$yname, "l_homicide")
    expect_identical(p[[1]]$call$idname, "sid")
  }
  # the issue's call: did_event with sunab() runs, and says what it estimates
  expect_message(e <- did_event(l_homicide ~ sunab(effyear, year) | sid + year, data = castle), "use did_sa\\(\\)")
  expect_identical(e$coeftable, did_event(castle, "l_homicide", "sid", "year", "effyear")$coeftable)
  # update() on a formula fit works on its column-name call
  tw <- fits[[4]][[1]]
  expect_identical(update(tw, cluster = ~ state)$coeftable, fits[[5]][[2]]$coeftable)
})

test_that("formula errors name what does not map", {
  castle <- castle_data()
  expect_error(did_sa(l_homicide ~ sunab(effyear, year) | sid, data = castle), "unit and the period columns, in that order")
  expect_error(did_sa(l_homicide ~ sunab(effyear, year), data = castle), "after `\\|`")
  expect_error(did_bjs(l_homicide ~ 1 | sid + year, data = castle), "name the cohort column")
  expect_error(did_event(l_homicide ~ i(year, post) | sid + year, data = castle, gname = "effyear"), "i\\(\\) interaction")
  expect_error(did_twfe(l_homicide ~ 1 | sid + year, data = castle), "name the treatment")
  expect_error(did_twfe(l_homicide ~ sunab(effyear, year) | sid + year, data = castle, dname = "post"), "use did_sa")
  expect_error(did_sa(l_homicide ~ sunab(effyear, year) | sid + year, data = castle, gname = "effyear"), "given twice")
  expect_error(did_sa(l_homicide ~ sunab(effyear, year) | sid + year, data = castle, idname = "sid"), "given twice")
  expect_error(did_sa(log(homicide) ~ sunab(effyear, year) | sid + year, data = castle), "one outcome column")
  expect_error(did_sa(l_homicide ~ sunab(effyear, sid) | sid + year, data = castle), "period column must be")
  expect_error(did_sa(l_homicide ~ sunab(effyear, year) | sid + year), "needs its data")
})

test_that("estimators without the formula interface say how to write the call", {
  castle <- castle_data()
  f <- l_homicide ~ sunab(effyear, year) | sid + year
  expect_error(did_cs(f, data = castle),
               'did_cs\\(\\) takes column names.*did_cs\\(data, yname = "l_homicide", idname = "sid", tname = "year", gname = "effyear"',
               class = "diffdiff_formula_call")
  expect_error(did_cs(castle, f), "takes column names")
  expect_error(did_etwfe(l_homicide ~ l_police | sid + year, data = castle), 'xformla = ~ l_police')
  expect_error(did_sdid(l_homicide ~ 1 | sid + year, data = castle), "did_sdid\\(\\) takes column names")
  expect_error(bacon_decomp(l_homicide ~ post | sid + year, data = castle), "takes column names")
})
