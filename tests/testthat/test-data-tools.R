# dd_gname(), dd_event_time(), dd_balance(): checked against direct
# computations on small panels.

test_that("dd_gname: first treated period per unit, 0 for never treated; reversals warned", {
  d <- data.frame(id = rep(c("a", "b", "c"), each = 4), t = rep(2001:2004, 3),
                  D = c(0, 0, 1, 1, 0, 0, 0, 0, 0, 1, 1, 1))
  d0 <- d
  expect_identical(dd_gname(d, "id", "t", "D"), rep(c(2003, 0, 2002), each = 4))
  expect_identical(d, d0)
  # any row order, logical indicator, missing indicators ignored
  set.seed(1); s <- d[sample(nrow(d)), ]
  expect_identical(dd_gname(s, "id", "t", "D"), c(a = 2003, b = 0, c = 2002)[s$id], ignore_attr = TRUE)
  s$D <- as.logical(s$D); s$D[1] <- NA
  g <- dd_gname(s, "id", "t", "D")
  ref <- vapply(s$id, function(i) { tt <- s$t[s$id == i & s$D %in% TRUE]; if (length(tt)) min(tt) else 0 }, numeric(1))
  expect_identical(g, unname(ref))
  # the result works as gname
  set.seed(2)
  p <- dd_sim_staggered(n_units = 60, n_periods = 6)
  expect_identical(dd_gname(p, "id", "time", "D"), as.numeric(p$first_treat))
  # reversal
  r <- d; r$D[4] <- 0
  expect_warning(g <- dd_gname(r, "id", "t", "D"), "switches off again for unit \"a\" \\(treated from period 2003, untreated in period 2004; 1 unit\\(s\\) in all\\)")
  expect_identical(g[1], 2003)
  # bad input
  expect_error(dd_gname(d, "id", "t", "nope"), "`dname` = \"nope\" is not a column")
  x <- d; x$D[2] <- 2
  expect_error(dd_gname(x, "id", "t", "D"), "`dname` = \"D\" must be a 0/1 indicator; row 2 has 2")
  x <- d; x$t <- as.character(x$t)
  expect_error(dd_gname(x, "id", "t", "D"), "tname")
  x <- d; x$id[3] <- NA
  expect_error(dd_gname(x, "id", "t", "D"), "`idname` = \"id\" has missing values \\(first in row 3\\)")
})

test_that("dd_event_time: t - g, NA for the never treated", {
  d <- data.frame(t = c(2001, 2002, 2003, 2001, 2002, 2003), g = c(2002, 2002, 2002, 0, Inf, NA))
  expect_identical(dd_event_time(d, "t", "g"), c(-1, 0, 1, NA, NA, NA))
  expect_error(dd_event_time(d, "t", "x"), "`gname` = \"x\" is not a column")
  d$g <- as.character(d$g)
  expect_error(dd_event_time(d, "t", "g"), "must be numeric")
})

test_that("dd_balance: units observed in every period (and without missing values)", {
  d <- data.frame(id = c(1, 1, 1, 2, 2, 3, 3, 3), t = c(1, 2, 3, 1, 3, 1, 2, 3), y = c(1:7, NA))
  expect_message(b <- dd_balance(d, "id", "t"), "dropped 1 of 3 units \\(2 rows\\)")
  expect_identical(b$id, c(1, 1, 1, 3, 3, 3))
  expect_message(b2 <- dd_balance(d, "id", "t", na_cols = "y"), "dropped 2 of 3 units \\(5 rows\\)")
  expect_identical(b2$y, 1:3)
  full <- d[d$id != 2, ]
  expect_silent(b3 <- dd_balance(full, "id", "t"))
  expect_identical(nrow(b3), 6L)
  # the estimators see a balanced panel afterwards
  set.seed(3)
  p <- dd_sim_staggered(n_units = 40, n_periods = 5)
  q <- p[-c(3, 50), ]
  expect_message(qb <- dd_balance(q, "id", "time"), "dropped 2 of 40 units")
  expect_identical(nrow(qb), 38L * 5L)
  expect_error(dd_balance(rbind(d, d[1, ]), "id", "t"), "more than one row")
  expect_error(dd_balance(d[c(1, 4, 6), ][c(1, 2), ], "id", "t", na_cols = "zz"), "`na_cols` = \"zz\" is not a column")
  expect_error(dd_balance(data.frame(id = 1:2, t = 1:2), "id", "t"), "no unit is observed in all 2 periods")
})

test_that("dd_wide_to_long: one row per unit and period; an estimator runs on it", {
  w <- data.frame(id = c("u1", "u2", "u3"), region = c("N", "S", "N"), y_2001 = c(1, 2, 3), y_2002 = c(2, 3, 5),
                  d_2001 = 0, d_2002 = c(0, 1, 1))
  w0 <- w
  l <- dd_wide_to_long(w, "id")
  expect_identical(w, w0)
  expect_identical(names(l), c("id", "time", "region", "y", "d"))
  expect_identical(l$id, rep(c("u1", "u2", "u3"), each = 2))
  expect_identical(l$time, rep(c(2001, 2002), 3))
  expect_identical(l$y, c(1, 2, 2, 3, 3, 5))
  expect_identical(l$d, c(0, 0, 0, 1, 0, 1))
  expect_identical(l$region, rep(c("N", "S", "N"), each = 2))
  # the same panel as base R's reshape()
  r <- reshape(w, direction = "long", idvar = "id", varying = list(c("y_2001", "y_2002"), c("d_2001", "d_2002")),
               v.names = c("y", "d"), timevar = "time", times = c(2001, 2002))
  r <- r[order(match(r$id, w$id), r$time), ]
  expect_equal(l$y, r$y); expect_equal(l$d, r$d)
  # a variable missing in a period; non-numeric period labels
  w2 <- data.frame(id = 1:2, y_a = 1:2, y_b = 3:4, x_b = 5:6)
  l2 <- dd_wide_to_long(w2, "id", tname = "wave")
  expect_identical(l2$wave, c("a", "b", "a", "b"))
  expect_identical(l2$x, c(NA, 5L, NA, 6L))
  # long data from a wide simulated panel runs through an estimator
  set.seed(1)
  p <- dd_sim_basic(n_units = 30, n_pre = 2, n_post = 2)
  wide <- reshape(p[, c("id", "time", "y", "D")], direction = "wide", idvar = "id", timevar = "time", sep = "_")
  back <- dd_wide_to_long(wide, "id")
  f1 <- did_twfe(p, "y", "id", "time", "D"); f2 <- did_twfe(back, "y", "id", "time", "D")
  expect_equal(coef(f1), coef(f2), tolerance = 1e-12)
  # bad input
  expect_error(dd_wide_to_long(rbind(w, w[1, ]), "id"), "unit \"u1\" has more than one row")
  expect_error(dd_wide_to_long(w, "id", sep = "."), "no column name contains `sep` = \".\"")
  expect_error(dd_wide_to_long(w, "id", cols = c("y_2001", "region")), "`cols` = \"region\": names must be")
  expect_error(dd_wide_to_long(w, "id", cols = "zz"), "`cols` = \"zz\" is not a column")
})

test_that("shipped castle.csv equals bacondecomp's castle (the columns kept)", {
  x <- read.csv(system.file("extdata", "castle.csv", package = "diffdiff"))
  expect_identical(dim(x), c(550L, 14L))
  need_peer("bacondecomp")
  e <- new.env(); data("castle", package = "bacondecomp", envir = e)
  c0 <- e$castle[order(e$castle$sid, e$castle$year), ]
  for (v in setdiff(names(x), "effyear")) expect_equal(x[[v]], c0[[v]], tolerance = 1e-14, label = v)
  expect_equal(x$effyear, ifelse(is.na(c0$effyear), 0, c0$effyear))
  # the TWFE coefficient of the shipped file, decomposed, is bacondecomp's
  b <- bacon_decomp(x, "l_homicide", "sid", "year", dname = "post")
  ref <- suppressMessages(bacondecomp::bacon(l_homicide ~ post, data = c0, id_var = "state", time_var = "year", quietly = TRUE))
  expect_equal(b$beta_twfe, sum(ref$estimate * ref$weight), tolerance = 1e-10)
})
