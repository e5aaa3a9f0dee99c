# One interface: the positional order (data, yname, idname, tname, gname |
# dname, ...) in every estimator, and messages that name the common mistakes
# (swapped unit and period columns, a 0/1 indicator as gname, a formula for a
# column name, a misspelt column, a missing gname).

# the warnings an expression gives (messages silenced)
warns <- function(expr) {
  w <- character()
  withCallingHandlers(suppressMessages(expr),
                      warning = function(c) { w <<- c(w, conditionMessage(c)); invokeRestart("muffleWarning") })
  w
}

test_that("did_cs and bacon_decomp take (data, yname, idname, tname, gname) like the others", {
  d <- sim_panel()
  a <- did_cs(d, "y", "id", "year", "first_treat", nboot = 0)
  b <- did_cs(d, yname = "y", tname = "year", idname = "id", gname = "first_treat", nboot = 0)
  expect_identical(a$coeftable, b$coeftable)
  expect_identical(names(formals(did_cs))[1:6], c("data", "yname", "idname", "tname", "gname", "xformla"))
  expect_identical(names(formals(bacon_decomp))[1:6], c("data", "yname", "idname", "tname", "gname", "xformla"))
  for (f in list(did_twfe, did_sdid)) expect_identical(names(formals(f))[1:5], c("data", "yname", "idname", "tname", "dname"))
  for (f in list(did_event, did_sa, did_bjs, did_gardner, did_stacked))
    expect_identical(names(formals(f))[1:6], c("data", "yname", "idname", "tname", "gname", "xformla"))
  # bacon_decomp: dname, with its former name treatname as an alias
  expect_equal(bacon_decomp(d, "y", "id", "year", dname = "treat")$two_by_twos,
               bacon_decomp(d, "y", "id", "year", treatname = "treat")$two_by_twos)
})

test_that("swapped unit and period columns are named as such", {
  d <- sim_panel()
  # did's positional order (tname before idname): an error with gname ...
  for (f in list(did_cs, did_event, did_sa, did_bjs))
    expect_error(f(d, "y", "year", "id", "first_treat"), '`idname` = "year" and `tname` = "id" look swapped')
  expect_error(did_cs(d, "y", "year", "id", "first_treat"), "name the arguments")
  # ... a warning without it (a 0/1 treatment column says nothing about periods)
  expect_true(any(grepl("look swapped", warns(did_twfe(d, "y", "year", "id", "treat")))))
  # fewer units than periods with identifiers that do not look like periods: no message
  s <- d[d$id <= 8, ]
  expect_false(any(grepl("swapped", warns(did_twfe(s, "y", "id", "year", "treat")))))
  expect_true(length(unique(s$id)) < length(unique(s$year)))   # the case the rule must not flag
})

test_that("common mistakes get messages that name the mistake", {
  d <- sim_panel()
  expect_error(did_cs(d, "y", "id", "year", "treat"), "looks like a 0/1 treatment indicator.*pass.*`dname`|looks like a 0/1 treatment indicator")
  expect_error(did_event(d, "y", "id", "year", "treat"), "`gname` = \"treat\" has only the values 0 and 1")
  expect_error(did_bjs(d, "y", "id", "year", "treat"), "0/1 treatment indicator")
  expect_error(bacon_decomp(d, "y", "id", "year", "treat"), "as `dname`")
  expect_error(did_cs(d, ~ y, "id", "year", "first_treat"), 'write yname = "y" instead of yname = ~y')
  expect_error(did_twfe(d, "y", ~ id, "year", "treat"), 'idname = "id"')
  names(d)[names(d) == "first_treat"] <- "first.treat"
  expect_error(did_cs(d, "y", "id", "year", "first_treat"), "did you mean 'first.treat'\\?")
  expect_error(did_cs(d, "Y", "id", "year", "first.treat"), "did you mean 'y'\\?")
  expect_error(did_cs(d, "y", "id", "year", "nothing_like_it"), "is not a column of `data`\\.$")
  expect_error(did_cs(d, "y", "id", "year"), "`gname` \\(the column with each unit's first treated period")
  expect_error(did_sa(d, "y", "id"), "`tname` \\(the period column\\) is missing")
  expect_error(did_twfe(d, "y", "id", "year"), "`dname` \\(the 0/1 treatment column\\) is missing")
  expect_error(did_cs(yname = "y"), "`data` \\(the data frame\\) is missing")
  # a 0/1 gname is fine when 1 is a period and it is constant within units
  p <- data.frame(id = rep(1:40, each = 4), t = rep(1:4, 40))
  p$g <- ifelse(p$id <= 10, 0, ifelse(p$id <= 20, 3, 0)); p$y <- rnorm(nrow(p)) + (p$g > 0 & p$t >= p$g)
  expect_s3_class(suppressWarnings(did_event(p, "y", "id", "t", "g")), "did_event")
})

test_that("one vocabulary: the control-group spellings of every estimator and peer are accepted", {
  d <- sim_panel()
  a <- did_cs(d, "y", "id", "year", "first_treat", control_group = "notyettreated", nboot = 0)
  b <- did_cs(d, "y", "id", "year", "first_treat", control_group = "not_yet_treated", nboot = 0)
  expect_identical(a$coeftable, b$coeftable)
  expect_identical(b$control_group, "notyettreated")
  a <- did_stacked(d, "y", "id", "year", "first_treat", kappa_pre = 2, kappa_post = 1, control_group = "never_treated")
  b <- did_stacked(d, "y", "id", "year", "first_treat", kappa_pre = 2, kappa_post = 1, control_group = "nevertreated")
  expect_identical(a$coeftable, b$coeftable)
  a <- did_sa(d, "y", "id", "year", "first_treat", control_group = "never")
  b <- did_sa(d, "y", "id", "year", "first_treat", control_group = "never_treated")
  expect_identical(a$coeftable, b$coeftable)
  a <- did_sa(d, "y", "id", "year", "first_treat", control_group = "last")
  b <- did_sa(d, "y", "id", "year", "first_treat", control = "last")       # the former argument name
  expect_identical(a$coeftable, b$coeftable)
  expect_error(did_sa(d, "y", "id", "year", "first_treat", control_group = "last", control = "last"), "former name")
  expect_error(did_cs(d, "y", "id", "year", "first_treat", control_group = "last", nboot = 0),
               '`control_group` must be one of "nevertreated", "notyettreated"; got "last"')
  expect_error(did_stacked(d, "y", "id", "year", "first_treat", kappa_pre = 2, kappa_post = 1, control_group = "auto"),
               "`control_group` must be one of")
})

test_that("did's remaining att_gt() arguments are accepted, so a did call runs after renaming", {
  d <- sim_panel()
  a <- did_cs(d, "y", "id", "year", "first_treat", nboot = 0)
  b <- did_cs(yname = "y", tname = "year", idname = "id", gname = "first_treat", data = d, bstrap = FALSE,
              print_details = FALSE, pl = FALSE, cores = 1, alp = 0.05)
  expect_identical(a$coeftable, b$coeftable)
  expect_error(did_cs(d, "y", "id", "year", "first_treat", nboot = 0, faster_mode = TRUE), "has no argument `faster_mode`")
})

test_that("honest_did / pretrends_power on did_cs group-time effects point to the dynamic aggregation", {
  d <- sim_panel()
  cs <- did_cs(d, "y", "id", "year", "first_treat", nboot = 0, base_period = "universal")
  expect_error(honest_did(cs), 'honest_did\\(aggregate\\(fit, type = "dynamic"\\)\\)')
  expect_error(pretrends_power(cs), 'aggregate\\(fit, type = "dynamic"\\)')
  expect_s3_class(honest_did(aggregate(cs, type = "dynamic"), type = "SD", M = 0.01), "honest_did")
})

test_that("periods are numeric in every estimator: character, factor and Date periods are errors naming tname", {
  d <- sim_panel()
  d$yc <- as.character(d$year); d$yf <- factor(d$year); d$yd <- as.Date(paste0(d$year, "-01-01"))
  for (tn in c("yc", "yf", "yd")) {
    expect_error(did_sdid(d, "y", "id", tn, "treat"), sprintf('`tname` = "%s" must be a numeric column', tn))
    expect_error(did_cs(d, "y", "id", tn, "first_treat", nboot = 0), sprintf('`tname` = "%s" must be a numeric column', tn))
    expect_error(did_event(d, "y", "id", tn, "first_treat"), sprintf('`tname` = "%s" must be a numeric column', tn))
  }
  # did_twfe's periods are labels (fixed-effect levels): any type works
  a <- did_twfe(d, "y", "id", "year", "treat"); b <- did_twfe(d, "y", "id", "yd", "treat")
  expect_equal(coef(a), coef(b), tolerance = 1e-12)
})
