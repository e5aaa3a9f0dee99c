# Treatment timing in one place (R/timing.R): each unit's first treated period
# from a 0/1 treatment and the absorbing check that names the unit and the two
# periods, shared by dd_gname(), bacon_decomp(), did_sdid(), did_trop(),
# placebo_test() and did_check().

test_that("dd_first_treated gives each unit's first treated period and the rows that switch off", {
  # hand-built: unit 0 treated from 3, unit 1 never, unit 2 from 1 with a
  # 0 in period 4, unit 3 from 2 with an NA (skipped) in period 3; rows shuffled
  d <- data.frame(u = rep(0:3, each = 4), t = rep(1:4, 4),
                  D = c(0, 0, 1, 1,  0, 0, 0, 0,  1, 1, 1, 0,  0, 1, NA, 1))
  set.seed(3)
  d <- d[sample(nrow(d)), ]
  ft <- diffdiff:::dd_first_treated(d$D, d$u, d$t, 4L)
  expect_identical(ft$first, c(3, Inf, 1, 2))
  expect_identical(which(ft$off), which(d$u == 2 & d$t == 4))
  expect_identical(ft$n_off, 1L)
  # the reference by a loop over units
  ref <- vapply(0:3, function(i) { s <- d$t[d$u == i & d$D %in% 1]; if (length(s)) min(s) else Inf }, numeric(1))
  expect_identical(ft$first, ref)
  e <- tryCatch(diffdiff:::dd_check_absorbing(ft, "D", paste0("u", d$u), d$t, d$u, "X needs it."),
                error = function(e) e)
  expect_s3_class(e, "diffdiff_treatment_reversible")
  expect_match(conditionMessage(e),
               "`dname` = \"D\" switches off again for unit \"u2\" \\(treated from period 1, untreated in period 4; 1 unit\\(s\\) in all\\); X needs it.",
               fixed = FALSE)
  ok <- diffdiff:::dd_first_treated(ifelse(d$u == 2 & d$t == 4, 1, d$D), d$u, d$t, 4L)
  expect_identical(ok$n_off, 0L)
  expect_true(diffdiff:::dd_check_absorbing(ok, "D", d$u, d$t, d$u, "X needs it."))
})

test_that("every consumer of a 0/1 treatment reports a reversal with the shared code and names the unit", {
  set.seed(5)
  p <- dd_sim_staggered(n_units = 40, n_periods = 8)
  u <- p$id[p$first_treat > 0 & p$first_treat < 7][1]
  r <- p
  r$D[r$id == u & r$time == 8] <- 0
  rx <- sprintf("switches off again for unit %s \\(treated from period", if (is.character(u)) sprintf("\"%s\"", u) else u)
  cls <- "diffdiff_treatment_reversible"
  expect_error(bacon_decomp(r, "y", "id", "time", dname = "D"), rx, class = cls)
  expect_error(did_sdid(r, "y", "id", "time", "D", staggered = TRUE), rx, class = cls)
  expect_error(did_trop(r, "y", "id", "time", "D", nboot = 0), rx, class = cls)
  expect_warning(dd_gname(r, "id", "time", "D"), rx)
  expect_true("TREATMENT_REVERSIBLE" %in% did_check(r, "y", "id", "time", dname = "D")$findings$code)
})

test_that("no R file outside R/timing.R computes first treated periods from a 0/1 treatment itself", {
  root <- source_root("R/timing.R")
  files <- setdiff(list.files(file.path(root, "R"), "\\.R$", full.names = TRUE), file.path(root, "R", "timing.R"))
  pat <- "tapply\\([^)]*\\[on\\][^)]*min\\)|max\\.col\\(D == 1|!duplicated\\(idc\\[o\\]\\)"
  hits <- unlist(lapply(files, function(f) {
    i <- grep(pat, readLines(f))
    if (length(i)) paste0(basename(f), ":", i) else character()
  }))
  expect_identical(hits, character())
})
