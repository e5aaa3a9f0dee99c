# The estimator registry, dd_estimators() (R/estimators.R): one row per
# estimator, the list that new_dd_fit()'s fields, placebo_test(), did_check()
# and the conformance suite read. These tests hold the registry to the
# package: every estimator has a row, and each row's class, aggregate class,
# placebo support, did_check rule, peer and parity test are what the code and
# the tests actually do. The default fits are the conformance suite's
# (cf_estimators, helper-conformance.R) on its panel.

reg_quiet <- function(expr) suppressWarnings(suppressMessages(expr))

# the default fit of every registry row, computed once
reg_fits <- local({
  fits <- NULL
  function() {
    if (is.null(fits)) {
      P <- cf_panel()
      reg <- dd_estimators()
      fits <<- stats::setNames(lapply(reg$name, function(e) {
        set.seed(7)
        tryCatch(reg_quiet(cf_estimators[[e]]$fit(P, list())), error = function(err) err)
      }), reg$name)
    }
    fits
  }
})

test_that("dd_estimators() has the documented columns, one row per estimator", {
  reg <- dd_estimators()
  expect_s3_class(reg, "data.frame")
  expect_identical(names(reg)[1], "name")
  expect_true(all(c("name", "class", "treatment", "fields", "placebo", "placebo_statistic", "check_rule", "peer",
                    "parity_test", "estimand", "assumption") %in% names(reg)))
  # the plain-language texts (summary(style = "plain")): every row says what
  # its headline number is; the assumption is NA only for parallel trends
  expect_false(anyNA(reg$estimand))
  expect_true(all(nchar(reg$estimand) > 20))
  expect_false(anyDuplicated(reg$name) > 0)
  expect_type(reg$fields, "list")
  expect_type(reg$placebo, "logical")
  expect_true(all(reg$treatment %in% c("gname", "dname", "dose", "treatname", "running")))
  # the role names an argument of the function (did_had's dose is its
  # `dname`, rd_robust's running variable its `xname`)
  for (i in seq_len(nrow(reg))) {
    arg <- switch(reg$treatment[i], dose = c("dose", "dname"), running = "xname", reg$treatment[i])
    expect_true(any(arg %in% names(formals(getExportedValue("diffdiff", reg$name[i])))),
                label = sprintf("%s takes its treatment as `%s`", reg$name[i], reg$treatment[i]))
  }
})

test_that("every exported estimator has a registry row", {
  reg <- dd_estimators()
  ex <- getNamespaceExports("diffdiff")
  # the naming rule: did_* (did_check is a report, not an estimator)
  est <- setdiff(grep("^did_", ex, value = TRUE), "did_check")
  expect_length(setdiff(est, reg$name), 0)
  expect_length(setdiff(reg$name, ex), 0)
  # and any other export that builds a dd_fit: the exports that call
  # new_dd_fit(), directly or through internal (unexported) functions
  ns <- asNamespace("diffdiff")
  fn <- Filter(function(n) is.function(get(n, envir = ns)), ls(ns, all.names = TRUE))
  uses <- lapply(stats::setNames(fn, fn), function(n) intersect(all.names(body(get(n, envir = ns))), fn))
  builds <- "new_dd_fit"
  repeat {
    more <- union(builds, setdiff(fn[vapply(uses, function(u) any(u %in% builds), logical(1))], ex))
    if (length(more) == length(builds)) break
    builds <- more
  }
  exf <- intersect(ex, fn)
  builders <- exf[vapply(uses[exf], function(u) any(u %in% builds), logical(1))]
  expect_true(length(builders) >= nrow(reg))   # the scan finds the estimators themselves
  expect_length(setdiff(builders, reg$name), 0)
})

test_that("every class new_dd_fit() is called with is a registry class or an aggregate class", {
  ns <- asNamespace("diffdiff")
  found <- character()
  walk <- function(x) {
    if (is.call(x)) {
      if (identical(x[[1]], as.name("new_dd_fit")) && length(x) > 1L) {
        a <- x[[2]]
        if (is.call(a) && identical(a[[1]], as.name("c"))) a <- a[[2]]
        if (is.character(a)) found <<- c(found, a)
      }
      for (j in seq_along(x)[-1]) { k <- x[[j]]; if (!missing(k)) walk(k) }   # (x[, 1] has an empty argument)
    }
  }
  for (n in ls(ns, all.names = TRUE)) {
    f <- get(n, envir = ns)
    if (is.function(f) && !is.primitive(f)) walk(body(f))
  }
  expect_true(length(found) >= 10)             # the literal classes are found
  reg <- dd_estimators()
  agg <- names(diffdiff:::dd_aggregate_fields)
  expect_length(setdiff(found, c(reg$class, agg)), 0)
  expect_true(all(agg %in% found))
  expect_true(all(stats::na.omit(reg$aggregate) %in% agg))
})

test_that("each row's class is the class its estimator returns on the conformance panel", {
  reg <- dd_estimators()
  expect_setequal(intersect(reg$name, names(cf_estimators)), reg$name)
  fits <- reg_fits()
  for (i in seq_len(nrow(reg))) {
    f <- fits[[reg$name[i]]]
    expect_false(inherits(f, "error"), label = sprintf("%s runs: %s", reg$name[i],
                                                       if (inherits(f, "error")) conditionMessage(f) else ""))
    if (inherits(f, "error")) next
    expect_identical(class(f), c(reg$class[i], "dd_fit"), label = paste(reg$name[i], "class"))
    expect_identical(f$estimator, reg$name[i])
  }
})

test_that("each row's aggregate class is what aggregate() returns, and rows without one have no method", {
  reg <- dd_estimators()
  fits <- reg_fits()
  for (i in seq_len(nrow(reg))) {
    m <- utils::getS3method("aggregate", reg$class[i], optional = TRUE, envir = asNamespace("diffdiff"))
    expect_identical(is.null(m), is.na(reg$aggregate[i]), label = paste(reg$name[i], "has an aggregate() method"))
    f <- fits[[reg$name[i]]]
    if (is.na(reg$aggregate[i]) || inherits(f, "error")) next
    a <- reg_quiet(aggregate(f, type = "simple"))
    expect_s3_class(a, reg$aggregate[i])
  }
})

test_that("placebo_test() supports exactly the rows with placebo = TRUE and tests their placebo_statistic", {
  reg <- dd_estimators()
  fits <- reg_fits()
  P <- cf_panel()
  for (i in seq_len(nrow(reg))) {
    f <- fits[[reg$name[i]]]
    if (inherits(f, "error")) next
    if (reg$placebo[i]) {
      # past the support check, the (invalid) type stops it before any refit
      err <- tryCatch(placebo_test(f, type = "no_such_type", data = P), error = conditionMessage)
      expect_no_match(err, "does not support", label = reg$name[i])
      expect_match(err, "`type`", label = reg$name[i])
      expect_identical(diffdiff:::dd_placebo_stat(f)$label, reg$placebo_statistic[i], label = reg$name[i])
    } else {
      expect_error(placebo_test(f, data = P), sprintf("%s\\(\\), which placebo_test\\(\\) does not support",
                                                      reg$name[i]), label = reg$name[i])
      expect_true(is.na(reg$placebo_statistic[i]))
    }
  }
  expect_true(all(stats::na.omit(reg$placebo_statistic) %in%
                    c("ATT", "ATT (simple aggregate)", "mean of event-time effects, e >= 0")))
})

test_that("each did_check rule exists and did_check() lists the rows of the rules that apply", {
  reg <- dd_estimators()
  rules <- diffdiff:::dd_check_rules
  expect_true(all(stats::na.omit(reg$check_rule) %in% names(rules)))
  expect_true(all(names(rules) %in% reg$check_rule))
  P <- cf_panel()   # balanced, 30 never-treated units, cohorts 3 and 5 (two periods before 3)
  rows <- function(r) reg$name[reg$check_rule %in% r]
  x <- did_check(P, "y", "id", "t", gname = "g")
  expect_identical(sub("\\(staggered = TRUE\\)$", "", x$estimators),
                   rows(c("absorbing", "absorbing_never", "balanced_never_staggered", "balanced_never_pre2",
                          "balanced_never2")))
  # the list (and order) did_check() gave for such a panel from its own
  # hand-kept rules, before the registry: still listed, in that order (a new
  # row may add an estimator anywhere without editing this test)
  before <- c("did_twfe", "did_event", "did_cs", "did_sa", "did_bjs", "did_gardner", "did_stacked", "did_etwfe",
              "did_rs", "did_edid", "did_sdid(staggered = TRUE)", "did_trop")
  expect_identical(x$estimators[x$estimators %in% before], before)
  expect_identical(did_check(P, "y", "id", "t", dname = "drev")$estimators, rows("reversible"))
  expect_identical(did_check(P, "y", "id", "t", dname = "hd")$estimators, rows("dose"))
})

test_that("each parity_test file exists and names the row's peer in its opening comment", {
  reg <- dd_estimators()
  for (i in which(!is.na(reg$parity_test))) {
    p <- test_path(reg$parity_test[i])
    expect_true(file.exists(p), label = paste(reg$name[i], reg$parity_test[i]))
    if (is.na(reg$peer[i]) || !file.exists(p)) next
    x <- readLines(p, warn = FALSE)
    head <- x[seq_len(match(FALSE, grepl("^#", x), nomatch = length(x) + 1L) - 1L)]
    expect_true(any(grepl(paste0("\\b", reg$peer[i], "\\b"), head)),
                label = sprintf("%s names the peer %s", reg$parity_test[i], reg$peer[i]))
  }
  # a peer needs a parity test
  expect_false(any(!is.na(reg$peer) & is.na(reg$parity_test)))
})

test_that("new_dd_fit() accepts exactly the registry's fields for each class", {
  reg <- dd_estimators()
  ff <- diffdiff:::dd_fit_fields
  for (i in seq_len(nrow(reg))) expect_identical(ff[[reg$class[i]]], reg$fields[[i]], label = reg$name[i])
  fits <- reg_fits()
  for (i in seq_len(nrow(reg))) {
    f <- fits[[reg$name[i]]]
    if (inherits(f, "error")) next
    own <- setdiff(names(unclass(f)), c("coeftable", "coefficients", "vcov", "call", diffdiff:::dd_fit_required,
                                        ff$common, ff$mboot))
    expect_length(setdiff(own, reg$fields[[i]]), 0)
  }
  # a field outside the registry's list is an internal error
  f <- fits[["did_twfe"]]
  info <- unclass(f)[diffdiff:::dd_fit_required]
  expect_error(diffdiff:::new_dd_fit("did_twfe", f$coeftable, f$coefficients, f$vcov, info, f$call,
                                     list(window = 1)), "unknown or duplicated fields window")
  expect_silent(diffdiff:::new_dd_fit("did_event", f$coeftable, f$coefficients, f$vcov, info, f$call,
                                      list(window = 1)))
})

test_that("?placebo_test names exactly the registry's estimators with placebo support", {
  root <- source_root("man/placebo_test.Rd")
  rd <- paste(readLines(file.path(root, "man", "placebo_test.Rd"), warn = FALSE), collapse = " ")
  item <- regmatches(rd, regexpr("\\\\item\\{fit\\}\\{[^}]*\\}", rd))
  named <- regmatches(item, gregexpr("\\bdid_[a-z0-9_]+", item))[[1]]
  reg <- dd_estimators()
  expect_setequal(named, reg$name[reg$placebo])
})
