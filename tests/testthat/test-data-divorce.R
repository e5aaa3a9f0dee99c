# inst/extdata/divorce.csv (issue 44): the columns taken from bacondecomp's
# `divorce` (MIT licence) unchanged but for the documented relabelling
# (sex 2 = women, the rate per million), and Goodman-Bacon's decomposition on
# it equal to bacondecomp::bacon()'s.

test_that("divorce.csv is bacondecomp's divorce panel, relabelled as documented", {
  need_peer("bacondecomp")
  e <- new.env()
  utils::data("divorce", package = "bacondecomp", envir = e)
  src <- e$divorce
  dv <- utils::read.csv(system.file("extdata", "divorce.csv", package = "diffdiff"))
  expect_identical(nrow(dv), nrow(src))
  key <- function(st, year, sex) paste(st, year, sex)
  m <- match(key(dv$st, dv$year, ifelse(dv$sex == "female", 2, 1)), key(src$st, src$year, src$sex))
  expect_false(anyNA(m))
  expect_equal(dv$suicides, src$suicide[m])
  expect_equal(dv$suicide_rate, src$suiciderate_jag[m] * 1e6, tolerance = 1e-9)
  ok <- !is.na(src$lfdivlaw[m])                     # (missing there for 1991-1996: filled in, a state constant)
  expect_equal(dv$divlaw_year[ok], src$lfdivlaw[m][ok])
  expect_true(all(src$year[m][!ok] >= 1991))
  expect_equal(dv$divlaw_year, ave(dv$divlaw_year, dv$st, FUN = function(v) v[1]))
  expect_identical(dv$post, as.integer(dv$year >= dv$divlaw_year))
  # women have the lower suicide rates (the labelling)
  expect_lt(mean(dv$suicide_rate[dv$sex == "female"]), mean(dv$suicide_rate[dv$sex == "male"]))
  w <- dv[dv$sex == "female", ]
  b <- bacon_decomp(w, "suicide_rate", "st", "year", dname = "post")
  ref <- suppressMessages(bacondecomp::bacon(suicide_rate ~ post, data = w, id_var = "st", time_var = "year", quietly = TRUE))
  expect_equal(sum(b$two_by_twos$weight * b$two_by_twos$estimate), sum(ref$weight * ref$estimate), tolerance = 1e-8)
})
