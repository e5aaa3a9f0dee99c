# dd_timing() (the staircase) and the ATT(g,t) heatmap (issue 44): the
# cohorts and the status matrix against the data, gname and dname giving
# the same timing, a reversible treatment counted, the plots drawn (base
# and ggplot2), bad input.

timing_panel <- function() {
  d <- read.csv(system.file("extdata", "sim_panel.csv", package = "diffdiff"))
  d$D <- as.integer(d$first_treat > 0 & d$year >= d$first_treat)
  d
}

test_that("dd_timing: cohorts, units and the status matrix; gname and dname agree", {
  d <- timing_panel()
  tm <- dd_timing(d, "id", "year", gname = "first_treat")
  g <- d$first_treat[!duplicated(d$id)]
  expect_equal(tm$cohorts$units, as.vector(table(factor(ifelse(g == 0, Inf, g), levels = c(2004, 2006, 2008, Inf)))))
  expect_equal(sum(tm$cohorts$share), 1)
  expect_equal(tm$periods, 2001:2010)
  # status: treated from the first treated period on; units sorted by cohort
  fu <- tm$units$first_treated
  expect_false(is.unsorted(fu))
  expect_identical(tm$status, outer(fu, tm$periods, function(f, t) t >= f))
  tm2 <- dd_timing(d, "id", "year", dname = "D")
  expect_identical(tm2$cohorts, tm$cohorts)
  expect_identical(tm2$status, tm$status)
  expect_identical(tm2$reversible, 0L)
  expect_output(print(tm), "never treated")
  # a treatment that switches off again, and a unit not observed in a period
  d2 <- d
  d2$D[d2$id == d2$id[d2$D == 1][1] & d2$year == 2010] <- 0L
  d2 <- d2[!(d2$id == 1 & d2$year == 2005), ]
  tm3 <- dd_timing(d2, "id", "year", dname = "D")
  expect_identical(tm3$reversible, 1L)
  expect_output(print(tm3), "untreated again")
  expect_true(is.na(tm3$status[match(1, tm3$units$id), 5]))
  expect_error(dd_timing(d, "id", "year"), "exactly one of `gname`")
  expect_error(dd_timing(d, "id", "year", gname = "first_treat", dname = "D"), "exactly one")
  d$D2 <- d$D * 2
  expect_error(dd_timing(d, "id", "year", dname = "D2"), "must be 0/1")
  d$gv <- d$first_treat; d$gv[2] <- 1999
  expect_error(dd_timing(d, "id", "year", gname = "gv"), "gname")
  expect_error(dd_timing(d, "nope", "year", gname = "first_treat"), "idname")
})

test_that("the staircase and the heatmap draw (base graphics and ggplot2)", {
  d <- timing_panel()
  tm <- dd_timing(d, "id", "year", gname = "first_treat")
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off())
  expect_invisible(plot(tm))
  expect_invisible(plot(tm, units = TRUE))
  r <- diffdiff:::dd_timing_rects(tm, FALSE)
  expect_equal(max(r$rects$ymax), nrow(tm$units))
  expect_identical(sort(unique(r$rects$status)), c("treated", "untreated"))
  f <- did_cs(d, "y", "id", "year", "first_treat", nboot = 0)
  expect_invisible(plot(f, type = "heatmap"))
  expect_error(plot(f, type = "tiles"), "`type`")
  h <- diffdiff:::dd_heatmap_data(f, 0.95)
  expect_identical(h$sig, f$coeftable$conf.low > 0 | f$coeftable$conf.high < 0)
  expect_identical(grepl("\\*$", h$label), h$sig)
  # the fits on did_cs's cells draw the same way
  d$x <- rnorm(length(unique(d$id)))[match(d$id, unique(d$id))]
  fm <- did_dml(d, "y", "id", "year", "first_treat", ~ x, nboot = 0, seed = 1, folds = 2)
  expect_invisible(plot(fm, type = "heatmap"))
  expect_invisible(plot(fm))
  skip_if_not_installed("ggplot2")
  expect_s3_class(ggplot2::autoplot(tm), "ggplot")
  expect_s3_class(ggplot2::autoplot(tm, units = TRUE), "ggplot")
  expect_s3_class(ggplot2::autoplot(f, type = "heatmap"), "ggplot")
  expect_s3_class(ggplot2::autoplot(fm, type = "heatmap"), "ggplot")
})
