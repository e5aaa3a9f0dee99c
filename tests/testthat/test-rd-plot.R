# rd_plot() against rdrobust's rdplot() (rdrobust 4.1.1, live): on
# rdrobust_RDsenate (vote on margin) and three simulated designs (mass
# points and ties; a cutoff of 5; 15 observations on the left), for every
# binselect: the numbers of bins J, J_IMSE and J_MV and the bin counts
# exactly, the bin means, edges, midpoints and interval bounds to 1e-8
# (absolute; measured at most 1.5e-14), the polynomial's coefficients to 1e-8
# relative (measured at most 1.2e-9: rdplot solves the normal equations on
# raw powers, rd_plot in scaled coordinates; the gap is rdplot's rounding)
# and the plotted polynomial to 1e-8 (measured 8e-10).

rp_senate <- function() {
  e <- new.env()
  utils::data("rdrobust_RDsenate", package = "rdrobust", envir = e)
  e$rdrobust_RDsenate
}

rp_designs <- function() {
  set.seed(11); n <- 3000
  ties <- data.frame(x = round(runif(n, -1, 1), 2))          # 201 values: mass points on both sides
  ties$y <- 1 + ties$x + 0.3 * (ties$x >= 0) + rnorm(n, sd = 0.4)
  set.seed(12)
  cut5 <- data.frame(x = runif(n, 0, 10))
  cut5$y <- sin(cut5$x) + 0.5 * (cut5$x >= 5) + rnorm(n, sd = 0.5)
  cut5$w <- runif(n)
  set.seed(13)
  few <- data.frame(x = c(runif(15, -1, 0), runif(600, 0, 2)))
  few$y <- few$x^2 + rnorm(615, sd = 0.2)
  list(ties = list(d = ties, c = 0), cut5 = list(d = cut5, c = 5), few = list(d = few, c = 0))
}

# rd_plot(d, y, x, ...) and rdplot(...) with the same options (`peer`:
# rdplot's spellings where they differ); compares everything listed above
rp_parity <- function(d, y, x, ..., peer = list(...)) {
  a <- suppressMessages(suppressWarnings(rd_plot(d, y, x, plot = FALSE, ...)))
  b <- suppressMessages(suppressWarnings(do.call(rdrobust::rdplot,
                                                 c(list(y = d[[y]], x = d[[x]], hide = TRUE), peer))))
  vb <- b$vars_bins
  expect_equal(unname(a$J), b$J, tolerance = 0)
  expect_equal(unname(a$J_IMSE), b$J_IMSE, tolerance = 0)
  expect_equal(unname(a$J_MV), b$J_MV, tolerance = 0)
  expect_equal(a$bins$n, vb$rdplot_N, tolerance = 0)
  expect_lt(max(abs(a$bins$y_mean - vb$rdplot_mean_y)), 1e-8)
  expect_lt(max(abs(a$bins$x_mean - vb$rdplot_mean_x)), 1e-8)
  # NA edges where seq(by =) ends short of the side's end (bin J + 1), as rdplot
  expect_identical(is.na(a$bins$x_mid), is.na(vb$rdplot_mean_bin))
  expect_identical(is.na(a$bins$x_left), is.na(vb$rdplot_min_bin))
  expect_identical(is.na(a$bins$x_right), is.na(vb$rdplot_max_bin))
  ok <- !is.na(vb$rdplot_mean_bin)
  expect_lt(max(abs(a$bins$x_mid - vb$rdplot_mean_bin)[ok]), 1e-8)
  expect_lt(max(abs(a$bins$x_left - vb$rdplot_min_bin)[ok]), 1e-8)
  expect_lt(max(abs(a$bins$x_right - vb$rdplot_max_bin)[ok]), 1e-8)
  expect_lt(max(abs(a$bins$se - vb$rdplot_se_y)), 1e-8)
  expect_lt(max(abs(a$bins$ci_low - vb$rdplot_ci_l)), 1e-8)
  expect_lt(max(abs(a$bins$ci_high - vb$rdplot_ci_r)), 1e-8)
  expect_lt(max(abs(unname(a$coef) - unname(b$coef)) / abs(b$coef)), 1e-8)
  expect_lt(max(abs(a$poly$fit - b$vars_poly$rdplot_y)), 1e-8)
  expect_equal(a$poly$x, b$vars_poly$rdplot_x, tolerance = 1e-12)
  expect_equal(unname(a$N), b$N)
  expect_equal(unname(a$N_h), b$N_h)
  expect_equal(unname(a$h), b$h, tolerance = 1e-12)
  invisible(list(a = a, b = b))
}

rp_methods <- c("esmv", "es", "espr", "esmvpr", "qs", "qspr", "qsmv", "qsmvpr")

test_that("rd_plot equals rdplot on rdrobust_RDsenate for every binselect", {
  need_peer("rdrobust")
  s <- rp_senate()
  for (bs in rp_methods) rp_parity(s, "vote", "margin", binselect = bs)
  # the spec's hand check (tools/notes/rdrobust-spec.md, section 8): esmv gives J = (15, 35)
  r <- suppressMessages(rd_plot(s, "vote", "margin", plot = FALSE))
  expect_equal(unname(r$J), c(15, 35))
  expect_identical(r$binselect, "esmv")
})

test_that("rd_plot equals rdplot on simulated designs for every binselect", {
  need_peer("rdrobust")
  for (des in rp_designs()) {
    for (bs in rp_methods) {
      rp_parity(des$d, "y", "x", c = des$c, binselect = bs)
      rp_parity(des$d, "y", "x", c = des$c, binselect = bs, masspoints = "off")
    }
  }
})

test_that("mass points switch the spacings methods to polynomial regression, as rdplot", {
  need_peer("rdrobust")
  d <- rp_designs()$ties$d
  expect_warning(r <- rd_plot(d, "y", "x", plot = FALSE), "mass points")
  expect_identical(r$binselect, "esmvpr")
  expect_identical(r$binselect_requested, "esmv")
  expect_warning(r2 <- rd_plot(d, "y", "x", binselect = "qs", masspoints = "check", plot = FALSE), "mass points")
  expect_identical(r2$binselect, "qs")
  r3 <- rd_plot(d, "y", "x", binselect = "qs", masspoints = "off", plot = FALSE)
  expect_identical(r3$binselect, "qs")
  b <- suppressWarnings(rdrobust::rdplot(d$y, d$x, hide = TRUE))
  expect_match(b$binselect, "polynomial regression")
  rp_parity(d, "y", "x", masspoints = "check", binselect = "es")
})

test_that("p, nbins, scale, kernel, h, weights, support and ci equal rdplot's", {
  need_peer("rdrobust")
  s <- rp_senate()
  for (p in 0:4) rp_parity(s, "vote", "margin", p = p)
  des <- rp_designs()
  d <- des$cut5$d
  rp_parity(d, "y", "x", c = 5, nbins = 10)
  rp_parity(d, "y", "x", c = 5, nbins = c(7, 12), binselect = "qs")
  rp_parity(d, "y", "x", c = 5, scale = 2)
  rp_parity(d, "y", "x", c = 5, scale = 3, binselect = "qsmv")
  rp_parity(d, "y", "x", c = 5, kernel = "triangular", p = 2, peer = list(c = 5, kernel = "tri", p = 2))
  rp_parity(d, "y", "x", c = 5, kernel = "epa", h = c(2, 3), peer = list(c = 5, kernel = "epa", h = c(2, 3)))
  rp_parity(d, "y", "x", c = 5, h = 4, p = 1)
  rp_parity(d, "y", "x", c = 5, weightsname = "w", peer = list(c = 5, weights = d$w))
  rp_parity(d, "y", "x", c = 5, weightsname = "w", kernel = "tri", p = 3,
            peer = list(c = 5, weights = d$w, kernel = "tri", p = 3))
  rp_parity(d, "y", "x", c = 5, support = c(-1, 12))
  rp_parity(d, "y", "x", c = 5, support = c(-1, 12), binselect = "es")
  rp_parity(d, "y", "x", c = 5, ci = 90)
  rp_parity(des$few$d, "y", "x", p = 2, nbins = 3)
})

test_that("an evenly spaced side whose last edge falls short of its end keeps rdplot's bin J + 1", {
  need_peer("rdrobust")
  # seq(0, b, by = b / 45) ends 8.9e-16 below b = 7.459836 (found by search with set.seed(44))
  set.seed(44); b <- runif(1, 0.1, 10)
  set.seed(7); x <- c(runif(300, -1, 0), runif(299, 0, b), b)
  d <- data.frame(x = x, y = x + rnorm(600))
  r <- rp_parity(d, "y", "x", nbins = 45)$a
  last <- r$bins[nrow(r$bins), ]
  expect_identical(last$bin, 46L)
  expect_identical(last$n, 1L)
  expect_true(is.na(last$x_mid))
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off())
  expect_identical(plot(r), r)
})

test_that("the bins do not depend on the row order, except through tied values as in rdplot", {
  need_peer("rdrobust")
  d <- rp_designs()$cut5$d
  set.seed(5); perm <- sample(nrow(d))
  a <- rd_plot(d, "y", "x", c = 5, plot = FALSE, binselect = "es")
  b <- rd_plot(d[perm, ], "y", "x", c = 5, plot = FALSE, binselect = "es")
  expect_identical(a$bins, b$bins)
  expect_identical(a$J, b$J)
  expect_equal(a$coef, b$coef, tolerance = 1e-10)
  # tied x: the spacings estimator takes the outcome's differences in the
  # stable order of x, so J_IMSE of "es" can depend on the order of the tied
  # rows; rdplot's does the same, and rd_plot keeps equal to it
  t <- rp_designs()$ties$d
  for (k in 1:3) {
    set.seed(k); tp <- t[sample(nrow(t)), ]
    rp_parity(tp, "y", "x", binselect = "es", masspoints = "off")
  }
})

test_that("the caller's data are not modified", {
  d <- rp_designs()$cut5$d
  d$y[3] <- NA
  keep <- d
  expect_message(rd_plot(d, "y", "x", c = 5, plot = FALSE, weightsname = "w"), "Dropped 1 row")
  expect_identical(d, keep)
})

test_that("bad input gets an error naming the argument and the value", {
  d <- rp_designs()$cut5$d
  expect_error(rd_plot(d, "y", "nope", c = 5, plot = FALSE), "`xname` = \"nope\" is not a column")
  expect_error(rd_plot(d, "yy", "x", c = 5, plot = FALSE), "`yname` = \"yy\"")
  d$s <- as.character(d$y)
  expect_error(rd_plot(d, "s", "x", c = 5, plot = FALSE), "`yname` = \"s\" must be a numeric column")
  d$k <- 3
  expect_error(rd_plot(d, "y", "k", c = 3, plot = FALSE), "`xname` = \"k\" is constant")
  expect_error(rd_plot(d, "y", "x", c = 11, plot = FALSE), "the cutoff `c` = 11 is not inside the range")
  expect_error(rd_plot(d, "y", "x", c = min(d$x), plot = FALSE), "0 observations below it")
  expect_error(rd_plot(d, "y", "x", c = NA, plot = FALSE), "`c`")
  expect_error(rd_plot(d, "y", "x", c = 5, nbins = 0, plot = FALSE), "`nbins` must be .* got 0")
  expect_error(rd_plot(d, "y", "x", c = 5, nbins = 2.5, plot = FALSE), "`nbins` must be .* got 2.5")
  expect_error(rd_plot(d, "y", "x", c = 5, nbins = c(1, 2, 3), plot = FALSE), "`nbins`")
  expect_error(rd_plot(d, "y", "x", c = 5, binselect = "ESMV", plot = FALSE), "`binselect` must be one of .*\"ESMV\"")
  expect_error(rd_plot(d, "y", "x", c = 5, p = -1, plot = FALSE), "`p` must be a whole number")
  expect_error(rd_plot(d, "y", "x", c = 5, p = 1.5, plot = FALSE), "`p` must be a whole number .* 1.5")
  expect_error(rd_plot(d, "y", "x", c = 5, p = 21, plot = FALSE), "`p` must be a whole number between 0 and 20; got 21")
  expect_error(rd_plot(d, "y", "x", c = 5, scale = -1, plot = FALSE), "`scale` must be a positive number; got -1")
  expect_error(rd_plot(d, "y", "x", c = 5, kernel = "gauss", plot = FALSE), "`kernel`.*\"gauss\"")
  expect_error(rd_plot(d, "y", "x", c = 5, h = -2, plot = FALSE), "`h` must be .* got -2")
  expect_error(rd_plot(d, "y", "x", c = 5, ci = 0.95, plot = FALSE), NA)
  expect_error(rd_plot(d, "y", "x", c = 5, ci = 100, plot = FALSE), "`ci` must be .* got 100")
  expect_error(rd_plot(d, "y", "x", c = 5, support = c(3, 1), plot = FALSE), "`support`")
  expect_error(rd_plot(d, "y", "x", c = 5, masspoints = "yes", plot = FALSE), "`masspoints`.*\"yes\"")
  expect_error(rd_plot(d, "y", "x", c = 5, shade = TRUE, plot = FALSE), "`ci`")
  expect_error(rd_plot(d, "y", "x", c = 5, weightsname = "s", plot = FALSE), "`weightsname` = \"s\"")
  expect_error(rd_plot(d[1:15, ], "y", "x", c = 5, plot = FALSE), "at least|distinct")
  expect_error(rd_plot(d, "y", "x", c = 5, h = 0.001, plot = FALSE), "cannot be fitted .* `h`")
  dn <- d; dn$x[1:4] <- NA
  expect_message(r <- rd_plot(dn, "y", "x", c = 5, plot = FALSE), "Dropped 4 rows with missing values in y, x")
  expect_equal(sum(r$N), nrow(d) - 4)
  expect_error(rd_plot(as.matrix(d), "y", "x", plot = FALSE), "`data` must be a data.frame")
})

test_that("every method works on the default result", {
  set.seed(21)
  d <- data.frame(x = runif(800, -1, 1))
  d$y <- d$x + 0.5 * (d$x >= 0) + rnorm(800, sd = 0.2)
  r <- rd_plot(d, "y", "x", plot = FALSE)
  expect_s3_class(r, "rd_plot")
  expect_output(print(r), "RD plot of y on x, cutoff 0")
  expect_output(print(r), "esmv")
  expect_output(print(r), "J_IMSE")
  expect_error(print(r, foo = 1), "foo")
  tb <- tidy(r)
  expect_identical(tb, r$bins)
  expect_named(tb, c("side", "bin", "x_mean", "y_mean", "x_mid", "x_left", "x_right", "n", "se", "ci_low",
                     "ci_high"))
  expect_equal(sum(tb$n), 800)
  expect_true(all(tb$bin[tb$side == "left"] < 0) && all(tb$bin[tb$side == "right"] > 0))
  g <- glance(r)
  expect_identical(nrow(g), 1L)
  expect_named(g, c("J_left", "J_right", "binselect", "p", "N_left", "N_right"))
  expect_equal(c(g$J_left, g$J_right), unname(r$J))
  expect_equal(g$N_left + g$N_right, 800)
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off())
  expect_identical(plot(r), r)
  expect_identical(plot(r, ci = TRUE), r)
  expect_identical(plot(r, shade = TRUE), r)
  # drawn by default
  expect_s3_class(rd_plot(d, "y", "x", ci = 95, shade = TRUE), "rd_plot")
  expect_s3_class(rd_plot(d, "y", "x", main = "title via ..."), "rd_plot")
  skip_if_not_installed("ggplot2")
  p <- ggplot2::autoplot(r)
  expect_s3_class(p, "ggplot")
  expect_silent(ggplot2::ggplot_build(p))
  expect_s3_class(ggplot2::ggplot_build(ggplot2::autoplot(r, ci = TRUE)), "ggplot_built")
  expect_s3_class(ggplot2::ggplot_build(ggplot2::autoplot(r, shade = TRUE)), "ggplot_built")
  expect_error(ggplot2::autoplot(r, foo = 1), "foo")
})

test_that("a constant outcome on one side gives one bin there, with a warning", {
  set.seed(3)
  d <- data.frame(x = runif(200, -1, 1))
  d$y <- ifelse(d$x < 0, 1, d$x + rnorm(200))
  expect_warning(r <- rd_plot(d, "y", "x", plot = FALSE), "constant below the cutoff")
  expect_equal(r$J[["left"]], 1)
})
