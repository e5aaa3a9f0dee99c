# did_check(): each planted problem gives its code (and no false alarm on a
# clean panel).

chk_codes <- function(x) x$findings$code

test_that("did_check on a clean staggered panel: info only, estimators listed", {
  set.seed(1)
  d <- dd_sim_staggered(n_units = 200, n_periods = 8)
  d0 <- d
  x <- did_check(d, "y", "id", "time", gname = "first_treat")
  expect_identical(d, d0)
  expect_true(all(x$findings$severity == "info"))
  expect_true(all(c("BALANCED", "NEVER_TREATED", "COHORTS", "ESTIMATORS") %in% chk_codes(x)))
  expect_true(all(c("did_cs", "did_edid", "did_sdid(staggered = TRUE)", "did_trop") %in% x$estimators))
  expect_output(print(x), "Panel check: 200 units x 8 periods")
  expect_identical(as.data.frame(x), x$findings)
  # the same from the 0/1 indicator
  y <- did_check(d, "y", "id", "time", dname = "D")
  expect_identical(y$findings[y$findings$code == "COHORTS", "finding"], x$findings[x$findings$code == "COHORTS", "finding"])
})

test_that("did_check finds planted problems", {
  set.seed(2)
  d <- dd_sim_staggered(n_units = 100, n_periods = 6)
  # duplicates and an unbalanced panel with a gap
  x <- did_check(rbind(d, d[1, ]), "y", "id", "time", gname = "first_treat")
  expect_identical(x$findings$code[1], "DUPLICATE_ROWS")
  expect_identical(x$findings$severity[1], "error")
  u <- d[!(d$id == d$id[1] & d$time == 3), ]
  x <- did_check(u, "y", "id", "time", gname = "first_treat")
  expect_true(all(c("UNBALANCED", "GAPS") %in% chk_codes(x)))
  expect_false("did_sdid" %in% x$estimators)
  # missing outcomes
  m <- d; m$y[m$time == 4][1:5] <- NA
  x <- did_check(m, "y", "id", "time", gname = "first_treat")
  expect_match(x$findings$finding[x$findings$code == "MISSING_OUTCOME"], "5 missing outcomes .*most in period 4 \\(5\\)")
  # reversal, continuous dose
  r <- d; i <- r$id[r$D == 1][1]; r$D[r$id == i & r$time == max(r$time)] <- 0
  x <- did_check(r, "y", "id", "time", dname = "D")
  expect_true("TREATMENT_REVERSIBLE" %in% chk_codes(x))
  expect_identical(x$estimators, "did_dcdh")
  c2 <- d; c2$dose <- c2$D * runif(nrow(c2), 1, 3)
  x <- did_check(c2, "y", "id", "time", dname = "dose")
  expect_true("DOSE_CONTINUOUS" %in% chk_codes(x))
  expect_identical(x$estimators, c("did_dose", "did_had"))
  # no never treated; thin cohorts; always treated; periods without untreated units
  nn <- d[d$first_treat > 0, ]
  x <- did_check(nn, "y", "id", "time", gname = "first_treat")
  expect_true(all(c("NO_NEVER_TREATED", "NO_UNTREATED_PERIOD") %in% chk_codes(x)))
  expect_false(any(c("did_sdid", "did_trop", "did_edid") %in% x$estimators))
  th <- d; th$first_treat[th$id %in% unique(th$id[th$first_treat > 0])[1:2]] <- 6
  x <- did_check(th, "y", "id", "time", gname = "first_treat", thin = 5)
  expect_match(x$findings$finding[x$findings$code == "THIN_COHORT"], "6 \\(2\\)")
  at <- d; at$first_treat[at$id == at$id[at$first_treat > 0][1]] <- 1
  x <- did_check(at, "y", "id", "time", gname = "first_treat")
  expect_true("ALWAYS_TREATED" %in% chk_codes(x))
  # outcome shapes
  b <- d; b$y <- as.numeric(b$y > 0)
  expect_true("OUTCOME_BINARY" %in% chk_codes(did_check(b, "y", "id", "time", gname = "first_treat")))
  k <- d; k$y <- rpois(nrow(k), 3)
  expect_true("OUTCOME_COUNT" %in% chk_codes(did_check(k, "y", "id", "time", gname = "first_treat")))
  h <- d; h$y <- rt(nrow(h), df = 2) * 10
  expect_true("OUTCOME_HEAVY_TAILS" %in% chk_codes(did_check(h, "y", "id", "time", gname = "first_treat")))
  z <- d; z$y <- 1
  expect_true("OUTCOME_CONSTANT" %in% chk_codes(did_check(z, "y", "id", "time", gname = "first_treat")))
  # nobody treated
  n0 <- d; n0$first_treat <- 0
  expect_true("NO_TREATED" %in% chk_codes(did_check(n0, "y", "id", "time", gname = "first_treat")))
})

test_that("did_check: bad input", {
  set.seed(3)
  d <- dd_sim_staggered(n_units = 30, n_periods = 5)
  expect_error(did_check(d, "y", "id", "time"), "exactly one of `gname`")
  expect_error(did_check(d, "y", "id", "time", gname = "first_treat", dname = "D"), "exactly one of `gname`")
  expect_error(did_check(d, "yy", "id", "time", gname = "first_treat"), "`yname` = \"yy\" is not a column")
  x <- d; x$first_treat[1] <- 99
  expect_error(did_check(x, "y", "id", "time", gname = "first_treat"), "gname")
  expect_error(did_check(d, "y", "id", "time", gname = "first_treat", thin = 0), "thin")
})

test_that("estimators' errors carry did_check's codes for the same problems", {
  set.seed(7)
  d <- dd_sim_staggered(n_units = 60, n_periods = 6, cohorts = c(3, 5), effect = 1)
  code_of <- function(expr) tryCatch({ expr; NA_character_ }, diffdiff_error = function(e) e$code)
  found <- function(data, ...) did_check(data, "y", "id", "time", ...)$findings$code
  # duplicated rows
  dup <- rbind(d, d[5, ])
  expect_identical(code_of(did_twfe(dup, "y", "id", "time", "D")), "DUPLICATE_ROWS")
  expect_identical(code_of(did_cs(dup, "y", "id", "time", "first_treat")), "DUPLICATE_ROWS")
  expect_true("DUPLICATE_ROWS" %in% found(dup, gname = "first_treat"))
  # unbalanced, for an estimator that needs balance
  ub <- d[-7, ]
  expect_identical(code_of(did_sdid(ub, "y", "id", "time", "D")), "UNBALANCED")
  expect_true("UNBALANCED" %in% found(ub, gname = "first_treat"))
  e <- tryCatch(did_sdid(ub, "y", "id", "time", "D"), error = function(e) e)
  expect_s3_class(e, c("diffdiff_unbalanced", "diffdiff_error"))
  expect_match(conditionMessage(e), "the panel is unbalanced.*\\[did_check: UNBALANCED\\]$")
  # a missing outcome, for an estimator that needs a complete panel
  mo <- d; mo$y[9] <- NA
  expect_identical(code_of(did_trop(mo, "y", "id", "time", "D", lambda_time = 0, lambda_unit = 0, lambda_nn = Inf,
                                    nboot = 0)), "MISSING_OUTCOME")
  expect_true("MISSING_OUTCOME" %in% found(mo, gname = "first_treat"))
  # a constant outcome
  co <- d; co$y <- 1
  expect_identical(code_of(did_twfe(co, "y", "id", "time", "D")), "OUTCOME_CONSTANT")
  expect_true("OUTCOME_CONSTANT" %in% found(co, gname = "first_treat"))
  # no treated unit
  nt <- d; nt$first_treat <- 0; nt$D <- 0
  expect_identical(code_of(did_twfe(nt, "y", "id", "time", "D")), "NO_TREATED")
  expect_identical(code_of(did_event(nt, "y", "id", "time", "first_treat")), "NO_TREATED")
  expect_true("NO_TREATED" %in% found(nt, gname = "first_treat"))
  # every unit treated from the first period
  at <- d; at$first_treat <- 1; at$D <- 1
  expect_identical(code_of(did_twfe(at, "y", "id", "time", "D")), "ALWAYS_TREATED")
  expect_true("ALWAYS_TREATED" %in% found(at, gname = "first_treat"))
  # no never-treated unit
  nn <- d[d$first_treat > 0, ]
  for (f in list(function(x) did_sdid(x, "y", "id", "time", "D"),
                 function(x) did_sa(x, "y", "id", "time", "first_treat", control_group = "never"),
                 function(x) did_edid(x, "y", "id", "time", "first_treat"),
                 function(x) did_etwfe(x, "y", "id", "time", "first_treat", control_group = "nevertreated"),
                 function(x) did_trop(x, "y", "id", "time", "D", lambda_time = 0, lambda_unit = 0, lambda_nn = Inf,
                                      nboot = 0)))
    expect_identical(code_of(f(nn)), "NO_NEVER_TREATED")
  expect_true("NO_NEVER_TREATED" %in% found(nn, gname = "first_treat"))
  # a reversal
  rv <- d; rv$D[rv$id == rv$id[rv$first_treat == 3][1] & rv$time == 6] <- 0
  expect_identical(code_of(did_sdid(rv, "y", "id", "time", "D")), "TREATMENT_REVERSIBLE")
  expect_identical(code_of(did_trop(rv, "y", "id", "time", "D", lambda_time = 0, lambda_unit = 0, lambda_nn = Inf,
                                    nboot = 0)), "TREATMENT_REVERSIBLE")
  expect_true("TREATMENT_REVERSIBLE" %in% found(rv, dname = "D"))
  # one period before the first adoption
  fp <- dd_sim_staggered(n_units = 60, n_periods = 6, cohorts = 2, effect = 1)
  expect_identical(code_of(did_sdid(fp, "y", "id", "time", "D")), "FEW_PRE_PERIODS")
  expect_true("FEW_PRE_PERIODS" %in% found(fp, gname = "first_treat"))
  # errors without a did_check finding carry no code
  e <- tryCatch(did_twfe(d, "y", "id", "time", "nope"), error = function(e) e)
  expect_false(inherits(e, "diffdiff_error"))
})

test_that("did_check flags what the estimators reject, with the estimators' codes and messages", {
  # an independent probe found did_check silent on each of these (every
  # estimator stops, or drops rows, on them)
  set.seed(11)
  d <- dd_sim_staggered(n_units = 60, n_periods = 6, cohorts = c(3, 5), effect = 1)
  code_of <- function(expr) tryCatch({ suppressMessages(expr); NA_character_ }, diffdiff_error = function(e) e$code)
  finding <- function(x, code) x$findings[x$findings$code == code, , drop = FALSE]
  # the same code in did_check (severity "error") and in the estimators' errors
  same <- function(data, code, y = "y", id = "id", fits = list(function(dd) did_cs(dd, y, id, "time", "first_treat", nboot = 0),
                                                               function(dd) did_twfe(dd, y, id, "time", "D"))) {
    x <- did_check(data, y, id, "time", gname = "first_treat")
    f <- finding(x, code)
    expect_identical(nrow(f), 1L, label = code)
    expect_identical(f$severity, "error", label = code)
    expect_identical(x$findings$code[1], code, label = paste(code, "listed first"))
    for (fit in fits) expect_identical(code_of(fit(data)), code, label = code)
    f$finding
  }
  # one column in two roles (yname = idname)
  expect_match(same(d, "ROLE_CONFLICT", y = "id"), '`yname` and `idname` both name the column "id"')
  # two columns with the same name
  expect_match(same(cbind(d, y = 0), "DUPLICATE_COLUMNS"), '`data` has 2 columns named "y" \\(used as `yname`\\)')
  # a single period
  expect_match(same(d[d$time == 4, ], "SINGLE_PERIOD"), '`tname` = "time" must have at least two periods')
  # an outcome near overflow (squares overflow beyond 1e150, dd_huge)
  big <- d; big$y <- big$y * 1e300
  expect_match(same(big, "OUTCOME_SCALE"), '`yname` = "y" has values as large as .*Rescale it')
  tiny <- d; tiny$y <- tiny$y * 1e-200
  expect_match(same(tiny, "OUTCOME_SCALE"), "underflow")
  ok <- d; ok$y <- ok$y * 1e140                      # below the threshold: no finding
  expect_false("OUTCOME_SCALE" %in% did_check(ok, "y", "id", "time", gname = "first_treat")$findings$code)
  # a cohort that is not a period, and never treated coded -1
  off <- d; off$first_treat[off$first_treat == 3] <- 3.5
  expect_match(same(off, "COHORT_NOT_PERIOD", fits = list(function(dd) did_cs(dd, "y", "id", "time", "first_treat", nboot = 0),
                                                         function(dd) did_event(dd, "y", "id", "time", "first_treat"))),
               '`gname` = "first_treat" has value 3.5, which is not a period of `tname` = "time"')
  neg <- d; neg$first_treat[neg$first_treat == 0] <- -1
  expect_match(same(neg, "COHORT_NEGATIVE", fits = list(function(dd) did_cs(dd, "y", "id", "time", "first_treat", nboot = 0),
                                                       function(dd) did_sa(dd, "y", "id", "time", "first_treat"))),
               "has the negative value -1")
  # never-treated codes outside the periods are not findings
  late <- d; late$first_treat[late$first_treat == 0] <- ifelse(late$id[late$first_treat == 0] %% 2, Inf, 99)
  expect_false(any(did_check(late, "y", "id", "time", gname = "first_treat")$findings$severity == "error"))
  # a single unit
  expect_identical(finding(did_check(d[d$id == 1, ], "y", "id", "time", gname = "first_treat"), "SINGLE_UNIT")$severity,
                   "error")
  expect_identical(code_of(did_cs(d[d$id == 1, ], "y", "id", "time", "first_treat", nboot = 0)), "SINGLE_UNIT")
  # an infinite outcome: reported with the missing ones (the estimators drop
  # both, and those that need a complete panel stop with MISSING_OUTCOME)
  inf <- d; inf$y[c(4, 100)] <- c(Inf, -Inf)
  x <- did_check(inf, "y", "id", "time", gname = "first_treat")
  expect_match(finding(x, "MISSING_OUTCOME")$finding, "^2 missing or infinite outcomes .*2 of them infinite \\(e.g. row 4: Inf\\)")
  expect_false(any(c("OUTCOME_HEAVY_TAILS", "OUTCOME_SCALE") %in% x$findings$code))
  expect_identical(code_of(did_sdid(inf, "y", "id", "time", "D", staggered = TRUE, se = "none")), "MISSING_OUTCOME")
  expect_message(suppressWarnings(did_cs(inf, "y", "id", "time", "first_treat", nboot = 0)),
                 "2 observations removed because of NA/NaN/Inf")
  # the clean panel has none of these
  expect_true(all(did_check(d, "y", "id", "time", gname = "first_treat")$findings$severity == "info"))
})

test_that("did_check runs the estimators' own checks: the same code and message as did_cs's error", {
  d <- cf_panel()
  strip <- function(m) sub(" \\[did_check: [A-Z_]+\\]$", "", m)
  cases <- list(constant = function(x) { x$y <- 2; x }, dups = function(x) rbind(x, x[7, ]))
  for (k in names(cases)) {
    x <- cases[[k]](d)
    e <- tryCatch(did_cs(x, "y", "id", "t", "g"), diffdiff_error = function(e) e)
    expect_s3_class(e, "diffdiff_error")
    f <- did_check(x, "y", "id", "t", gname = "g")$findings
    expect_true(e$code %in% f$code, info = k)
    expect_identical(f$finding[f$code == e$code][1], strip(conditionMessage(e)), info = k)
  }
  # a reversal: did_check warns (a reversible design is valid for did_dcdh), with the unit count of the shared helper
  r <- d; r$d[r$id == 2 & r$t == 6] <- 0
  f <- did_check(r, "y", "id", "t", dname = "d")$findings
  expect_match(f$finding[f$code == "TREATMENT_REVERSIBLE"], "switches off again for 1 units")
})
