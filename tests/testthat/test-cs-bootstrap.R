# Multiplier bootstrap of did_cs: tolerances from issue #3 (bootstrap SEs with
# 20,000 draws within 3% of did's analytic SEs; uniform-band critical values
# within 3% of did's at equal draws).
# did reports bootstrap SEs as IQR / 1.349 of the draws. On mpdta, did's own
# bootstrap SEs (20,000 draws) differ from its analytic SEs by up to 7.8%
# (measured: the IQR of a sum dominated by few units is not 1.349 sd), so the
# literal "within 3% of did's analytic SEs" cannot hold for any estimator that
# reports did's statistic. We test both halves of it instead: the spread of
# our draws equals the analytic SE (sd of the draws, within 3%), and our
# reported (IQR) SEs equal did's bootstrap SEs at equal draws (within 3%).
test_that("bootstrap draws have the analytic variance; reported SEs match did's bootstrap SEs", {
  need_peer("did")
  data("mpdta", package = "did", envir = environment())
  m <- did::att_gt("lemp", "year", "countyreal", "first.treat", xformla = ~lpop, data = mpdta,
                   bstrap = FALSE, cband = FALSE)
  set.seed(41)
  mb <- did::att_gt("lemp", "year", "countyreal", "first.treat", xformla = ~lpop, data = mpdta,
                    biters = 20000)
  set.seed(42)
  f <- did_cs(mpdta, "lemp", "countyreal", "year", "first.treat", xformla = ~lpop, nboot = 20000)
  K <- nrow(f$coeftable)
  draws <- .Call(diffdiff:::C_ifs_boot, f$inf, seq_len(K) - 1L, 20000L, 1L, NULL, NULL, NULL, 0L, NULL)
  sd_boot <- apply(draws, 2, stats::sd) / sqrt(f$n)
  expect_lt(max(abs(sd_boot / m$se - 1)), 0.03)
  expect_lt(max(abs(f$coeftable$std.error / mb$se - 1)), 0.03)
  for (ty in c("simple", "group", "dynamic", "calendar")) {
    set.seed(43)
    a <- did::aggte(mb, type = ty, biters = 20000, cband = FALSE)
    b <- aggregate(f, type = ty, nboot = 20000, cband = FALSE)
    expect_lt(max(abs(b$coeftable$std.error / c(if (ty != "simple") a$se.egt, a$overall.se) - 1)), 0.03)
  }
})

test_that("uniform-band critical values are within 3% of did's at equal draws", {
  need_peer("did")
  data("mpdta", package = "did", envir = environment())
  set.seed(7)
  m <- did::att_gt("lemp", "year", "countyreal", "first.treat", data = mpdta, biters = 20000)
  set.seed(8)
  f <- did_cs(mpdta, "lemp", "countyreal", "year", "first.treat", nboot = 20000)
  expect_lt(abs(f$crit / m$c - 1), 0.03)
  set.seed(9)
  a <- did::aggte(m, type = "dynamic", biters = 20000)
  b <- aggregate(f, type = "dynamic")
  expect_lt(abs(b$crit / a$crit.val.egt - 1), 0.03)
  expect_true(all(b$coeftable$cband.low[-nrow(b$coeftable)] < b$coeftable$conf.low[-nrow(b$coeftable)]))
})

test_that("bootstrap is reproducible under set.seed and identical for 1 and 2 threads", {
  d <- sim_cs_panel(n = 300)
  run <- function() { set.seed(3); f <- did_cs(d, "y", "id", "t", "g", xformla = ~ x1, nboot = 499)
                      list(f$coeftable, aggregate(f, type = "dynamic")$coeftable) }
  old <- dd_threads()
  on.exit(dd_threads(old, throttle = 65536))
  dd_threads(1); a <- run(); b <- run()
  expect_identical(a, b)
  need_threads(2)
  dd_threads(2, throttle = 1); c2 <- run()
  expect_identical(a, c2)
})

test_that("each bootstrap weight type has draws with the analytic variance", {
  d <- sim_cs_panel(n = 400)
  f0 <- did_cs(d, "y", "id", "t", "g", nboot = 0)
  for (type in 1:3) {
    set.seed(1)
    draws <- .Call(diffdiff:::C_ifs_boot, f0$inf, seq_len(nrow(f0$coeftable)) - 1L, 10000L, type, NULL, NULL, NULL, 0L, NULL)
    expect_lt(max(abs(apply(draws, 2, stats::sd) / sqrt(f0$n) / f0$coeftable$std.error - 1)), 0.04)
  }
})
