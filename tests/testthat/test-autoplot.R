# autoplot() methods: each returns a ggplot with the layers that carry the
# information of the base plot (intervals, uniform band, reference period,
# TWFE line, breakdown line), and it renders.

layer_geoms <- function(p) vapply(p$layers, function(l) class(l$geom)[1], "")

test_that("event studies: pointwise intervals, the uniform band and the reference period", {
  skip_if_not_installed("ggplot2")
  d <- sim_panel()
  set.seed(1)
  es <- did_sa(d, "y", "id", "year", "first_treat", nboot = 99, cband = TRUE)
  p <- ggplot2::autoplot(es)
  expect_s3_class(p, "ggplot")
  g <- layer_geoms(p)
  expect_identical(sum(g == "GeomLinerange"), 2L)          # band + pointwise intervals
  expect_identical(sum(g == "GeomPoint"), 2L)              # estimates + the reference period
  expect_equal(p$layers[[which(g == "GeomPoint")[2]]]$data$event, -1)
  expect_true(all(c("cband.low", "cband.high") %in% names(p$data)))
  # without a band: one interval layer
  g2 <- layer_geoms(ggplot2::autoplot(did_event(d, "y", "id", "year", "first_treat")))
  expect_identical(sum(g2 == "GeomLinerange"), 1L)
  # a static fit: the coefficients with intervals
  g3 <- layer_geoms(ggplot2::autoplot(did_twfe(d, "y", "id", "year", "treat")))
  expect_true(all(c("GeomErrorbar", "GeomPoint") %in% g3))
  f <- tempfile(fileext = ".png")
  ggplot2::ggsave(f, ggplot2::autoplot(es), width = 6, height = 4, dpi = 72)
  expect_gt(file.size(f), 1000)
})

test_that("bacon_decomp and honest_did autoplots", {
  skip_if_not_installed("ggplot2")
  d <- sim_panel()
  b <- bacon_decomp(d, "y", "id", "year", gname = "first_treat")
  p <- ggplot2::autoplot(b)
  expect_s3_class(p, "ggplot")
  expect_equal(ggplot2::layer_data(p, 1)$yintercept[1], b$beta_twfe)       # the TWFE line
  h <- honest_did(did_event(d, "y", "id", "year", "first_treat"), type = "SD", M = c(0, 0.05, 0.1, 0.5, 1))
  ph <- ggplot2::autoplot(h)
  expect_s3_class(ph, "ggplot")
  g <- layer_geoms(ph)
  expect_true("GeomErrorbar" %in% g)
  if (is.finite(h$breakdown)) expect_true(all(c("GeomVline", "GeomText") %in% g))
  expect_identical(nrow(ggplot2::layer_data(ph, which(g == "GeomErrorbar"))), nrow(h$results) + 1L)
})

test_that("did_cs, did_sdid and pretrends_power autoplots", {
  skip_if_not_installed("ggplot2")
  d <- sim_panel()
  cs <- did_cs(d, "y", "id", "year", "first_treat", nboot = 99)
  p <- ggplot2::autoplot(cs)
  expect_s3_class(p, "ggplot")
  expect_identical(sum(layer_geoms(p) == "GeomLinerange"), 2L)                  # band + intervals
  expect_identical(nrow(p$data), nrow(cs$coeftable))                            # every ATT(g,t)
  expect_setequal(levels(p$data$cohort), paste("Cohort", c(2004, 2006, 2008)))
  d$d <- as.integer(d$first_treat > 0 & d$year >= d$first_treat)
  s <- suppressWarnings(did_sdid(d, "y", "id", "year", "d", staggered = TRUE, se = "none"))
  ps <- ggplot2::autoplot(s, cohort = 2006)
  expect_s3_class(ps, "ggplot")
  expect_match(ps$labels$title, "cohort 2006")
  expect_true(all(c("GeomRect", "GeomLine") %in% layer_geoms(ps)))
  pt <- ggplot2::autoplot(pretrends_power(did_event(d, "y", "id", "year", "first_treat"), power = 0.5))
  expect_s3_class(pt, "ggplot")
  expect_true(all(c("GeomLinerange", "GeomLine") %in% layer_geoms(pt)))
  f <- tempfile(fileext = ".png")
  ggplot2::ggsave(f, ps, width = 6, height = 4, dpi = 72)
  expect_gt(file.size(f), 1000)
})

test_that("did_cs autoplot: reference cells as open circles, whole-number period breaks, no warnings", {
  skip_if_not_installed("ggplot2")
  castle <- read.csv(system.file("extdata", "castle.csv", package = "diffdiff"))
  csu <- suppressWarnings(did_cs(castle, "l_homicide", "sid", "year", "effyear", nboot = 0,
                                 base_period = "universal"))
  ref <- csu$coeftable$time == csu$coeftable$group - 1
  expect_true(all(csu$coeftable$estimate[ref] == 0) && all(is.na(csu$coeftable$std.error[ref])))
  p <- ggplot2::autoplot(csu)
  # (drawn without ggplot2's "Removed rows" warnings)
  expect_silent(print(p))
  g <- layer_geoms(p)
  pts <- which(g == "GeomPoint")
  expect_length(pts, 2L)                          # estimates, then the reference cells
  rd <- ggplot2::layer_data(p, pts[2])
  expect_identical(nrow(rd), sum(ref))
  expect_true(all(rd$y == 0) && all(rd$shape == 1))
  expect_identical(nrow(p$data), sum(!ref))
  br <- ggplot2::layer_scales(p)$x$get_breaks()
  br <- br[!is.na(br)]
  expect_true(length(br) >= 2 && all(br == round(br)))
  expect_match(p$labels$caption, "reference cells")
  # the dynamic aggregate without a reference period (varying base) draws,
  # and its caption says what its pre-period estimates are
  a <- aggregate(suppressWarnings(did_cs(castle, "l_homicide", "sid", "year", "effyear", nboot = 0)), type = "dynamic")
  expect_length(a$event_study$reference, 0L)
  pa <- ggplot2::autoplot(a)
  expect_silent(print(pa))
  expect_match(pa$labels$caption, "No reference period")
  expect_false(any(ggplot2::layer_data(pa, max(which(layer_geoms(pa) == "GeomPoint")))$shape == 1))
})

test_that("plot_na_note and whole-number breaks", {
  expect_identical(diffdiff:::dd_plot_na_note(character(), "cell"), "")
  expect_match(diffdiff:::dd_plot_na_note(c("ATT(2005,2001)", "ATT(2005,2002)"), "cell"), "cells ATT\\(2005,2001\\), ATT")
  b <- diffdiff:::dd_whole_breaks(2000:2010)(c(1999.6, 2010.4))
  expect_true(all(b == round(b)))
  expect_true(any(diffdiff:::dd_whole_breaks(c(0.5, 1.5))(c(0, 2)) != round(diffdiff:::dd_whole_breaks(c(0.5, 1.5))(c(0, 2)))))
})
