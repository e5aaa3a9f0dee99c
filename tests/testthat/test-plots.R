# Base plots: legend control on plot.dd_fit and plot.honest_did, the legend
# placed in the emptiest corner by default, errors naming the argument.

test_that("legend = FALSE / legend_pos; the automatic corner avoids the data", {
  d <- sim_panel()
  e <- did_event(d, "y", "id", "year", "first_treat")
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off())
  expect_invisible(plot(e, legend = FALSE))
  expect_invisible(plot(e, legend_pos = "bottomright"))
  expect_error(plot(e, legend_pos = "somewhere"), "`legend_pos` must be \"auto\"")
  expect_error(plot(e, legend = "yes"), "`legend` must be TRUE or FALSE")
  h <- honest_did(e, type = "SD", M = c(0, 0.05, 0.1))
  expect_invisible(plot(h, legend = FALSE))
  expect_invisible(plot(h, legend_pos = "bottomleft"))
  # rising estimates leave the top left empty; falling ones fill it (pre-periods at 0)
  up <- diffdiff:::dd_legend_pos("auto", x = -3:5, y = c(0, 0, 0, 0, 1, 2, 3, 4, 5), xlim = c(-3, 5), ylim = c(0, 5))
  down <- diffdiff:::dd_legend_pos("auto", x = -3:5, y = -c(0, 0, 0, 0, 1, 2, 3, 4, 5), xlim = c(-3, 5), ylim = c(-5, 0))
  expect_identical(up, "topleft"); expect_identical(down, "topright")    # the first empty corner in reading order
  expect_identical(diffdiff:::dd_legend_pos("topright", 1, 1, c(0, 1), c(0, 1)), "topright")
})

test_that("did_sdid plots: legend control; staggered fits plot any cohort", {
  d <- sim_panel()
  d$d <- as.integer(d$first_treat > 0 & d$year >= d$first_treat)
  f <- suppressWarnings(did_sdid(d, "y", "id", "year", "d", staggered = TRUE, se = "none"))
  expect_identical(f$tname, "year")
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off())
  tr <- plot(f, cohort = 2006, legend = FALSE)
  expect_named(tr, c("period", "treated", "synthetic"))
  expect_equal(tr$period, 2001:2010)
  expect_s3_class(plot(f, type = "weights", cohort = 2008), "data.frame")
  expect_error(plot(f, legend_pos = 3), "`legend_pos`")
})

test_that("bacon_decomp, plot_event_studies and pretrends plots take legend and legend_pos", {
  d <- sim_panel()
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off())
  b <- bacon_decomp(d, "y", "id", "year", gname = "first_treat")
  expect_invisible(plot(b, legend = FALSE)); expect_invisible(plot(b, legend_pos = "topleft"))
  fits <- list(SA = did_sa(d, "y", "id", "year", "first_treat"), BJS = did_bjs(d, "y", "id", "year", "first_treat"))
  expect_s3_class(plot_event_studies(fits, legend = FALSE), "data.frame")
  expect_error(plot_event_studies(fits, legend_pos = "nowhere"), "`legend_pos`")
  p <- pretrends_power(did_event(d, "y", "id", "year", "first_treat"), power = 0.5)
  expect_invisible(plot(p, legend_pos = "bottomright"))
  expect_error(plot(p, legend = NA), "`legend` must be TRUE or FALSE")
})

test_that("plot() and autoplot() of twfe_weights draw every treated cell's weight, negative ones apart", {
  set.seed(1)
  d <- dd_sim_staggered(200, 10)
  w <- twfe_weights(d, "y", "id", "time", "D")
  expect_gt(w$n_neg, 0)
  grDevices::pdf(NULL); on.exit(grDevices::dev.off())
  expect_identical(plot(w), w)
  skip_if_not_installed("ggplot2")
  p <- ggplot2::autoplot(w)
  b <- ggplot2::ggplot_build(p)$data[[2]]                 # the points layer
  expect_equal(nrow(b), w$n_pos + w$n_neg)
  expect_equal(sum(b$colour == "#C0392B"), w$n_neg)
  expect_equal(sort(b$y), sort(w$weights$weight[w$weights$weight != 0]), tolerance = 1e-12)
})
