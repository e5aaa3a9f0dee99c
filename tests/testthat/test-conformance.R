# The conformance suite (issue 34): every estimator and diagnostic passes the
# same checks on the same small panel --
#   order     the same numbers (1e-10) after shuffling the rows and after
#             reversing them (bootstraps included: seeds are set before each call)
#   constant  a constant outcome is an error (code OUTCOME_CONSTANT)
#   cluster   one cluster is an error (code ONE_CLUSTER), where a cluster is taken
#   roles     the same column in two roles (yname = idname) is an error
#   dups      duplicated unit-period rows are an error (code DUPLICATE_ROWS)
#   data      the caller's data (data.frame, tibble, keyed data.table) is unchanged
#             and gives the same numbers whatever its class
#   methods   print, summary, tidy, glance, plot and autoplot work on the default fit
# and, in test-conformance-interrupt.R, Ctrl-C stops the longest loop within 1 s.
# Every row of the estimator registry (dd_estimators()) must have one entry in
# `cf_estimators` (helper-conformance.R): how to call it on the panel and which
# checks do not apply (with the reason).

cf_quiet <- function(expr) suppressWarnings(suppressMessages(expr))

# run a call; the error's message and did_check code, or the value
cf_try <- function(f, d, a = list()) {
  tryCatch(list(value = cf_quiet(f(d, a))),
           error = function(e) list(error = conditionMessage(e), code = e$code))
}

# with DIFFDIFF_CONFORMANCE_LOG set, each (estimator, check) outcome is appended
# to that file (tools/conformance-table.R prints the table)
cf_log <- function(e, check, ok) {
  f <- Sys.getenv("DIFFDIFF_CONFORMANCE_LOG")
  if (nzchar(f)) cat(sprintf("%s\t%s\t%s\n", e, check, if (isTRUE(ok)) "pass" else "FAIL"), file = f, append = TRUE)
}
cf_equal <- function(x, y) isTRUE(all.equal(cf_numbers(x), cf_numbers(y), tolerance = 1e-10))

test_that("conformance: row order (shuffled, reversed) does not change any number", {
  P <- cf_panel()
  for (e in cf_entries()) {
    E <- cf_estimators[[e]]
    if ("order" %in% names(E$skip)) next
    set.seed(7); r0 <- cf_try(E$fit, P)
    expect_null(r0$error, label = sprintf("%s runs on the panel: %s", e, r0$error))
    if (!is.null(r0$error)) next
    set.seed(1); o <- sample(nrow(P))
    ok <- TRUE
    for (ord in list(shuffled = o, reversed = rev(seq_len(nrow(P))))) {
      set.seed(7); r <- cf_try(E$fit, P[ord, ])
      expect_null(r$error, label = paste(e, "runs on reordered rows:", r$error))
      if (is.null(r$error))
        expect_equal(cf_numbers(r$value), cf_numbers(r0$value), tolerance = 1e-10,
                     label = sprintf("%s on reordered rows", e))
      ok <- ok && is.null(r$error) && cf_equal(r$value, r0$value)
    }
    cf_log(e, "order", ok)
  }
})

test_that("conformance: constant outcome, one cluster, one column in two roles, duplicated rows are errors", {
  P <- cf_panel()
  Pc <- P; Pc$y <- 2.5
  Pd <- rbind(P, P[c(7, 200), ])
  P1 <- P; P1$one <- 1
  for (e in cf_entries()) {
    E <- cf_estimators[[e]]
    chk <- function(what, r, rx, code) {
      if (what %in% names(E$skip)) return(invisible())
      if (!is.null(E$expect[[what]])) { rx <- E$expect[[what]]$rx; code <- E$expect[[what]]$code }
      expect_false(is.null(r$error), label = sprintf("%s x %s is an error", e, what))
      if (!is.null(r$error)) {
        expect_match(r$error, rx, label = sprintf("%s x %s: message", e, what))
        if (!is.null(code)) expect_identical(r$code, code, label = sprintf("%s x %s: code", e, what))
      }
      cf_log(e, what, !is.null(r$error) && grepl(rx, r$error) && (is.null(code) || identical(r$code, code)))
    }
    chk("constant", cf_try(E$fit, Pc), '`yname` = "y" is constant', "OUTCOME_CONSTANT")
    if (!"cluster" %in% names(E$skip))
      chk("cluster", cf_try(E$fit, P1, list(cluster = "one")), '`cluster` = "one" has a single cluster', "ONE_CLUSTER")
    if (!"roles" %in% names(E$skip))
      chk("roles", cf_try(E$fit, P, if (is.null(E$roles)) list(yname = "id") else E$roles),
          '`yname` and `idname` both name the column "id"', "ROLE_CONFLICT")
    chk("dups", cf_try(E$fit, Pd), "more than one row|identify rows uniquely|duplicated", "DUPLICATE_ROWS")
  }
  # did_check reports them instead, with the estimators' codes
  codes <- function(d) did_check(d, "y", "id", "t", gname = "g")$findings$code
  expect_true("OUTCOME_CONSTANT" %in% codes(Pc))
  expect_true("DUPLICATE_ROWS" %in% codes(Pd))
  expect_true("ROLE_CONFLICT" %in% did_check(P, "id", "id", "t", gname = "g")$findings$code)
})

test_that("conformance: the caller's data is never modified (data.frame, tibble, keyed data.table)", {
  skip_if_not_installed("tibble")
  P <- cf_panel()
  for (e in cf_entries()) {
    E <- cf_estimators[[e]]
    set.seed(7); r0 <- cf_try(E$fit, P)
    if (!is.null(r0$error)) next
    DT <- data.table::as.data.table(P); data.table::setkeyv(DT, c("t", "id"))
    ok <- TRUE
    for (d in list(df = P, tbl = tibble::as_tibble(P), dt = DT)) {
      before <- data.table::copy(d)
      set.seed(7); r <- cf_try(E$fit, d)
      expect_identical(d, before, label = sprintf("%s leaves its %s unchanged", e, class(d)[1]))
      if (inherits(d, "data.table")) expect_identical(data.table::key(d), c("t", "id"), label = paste(e, "keeps the key"))
      expect_null(r$error, label = sprintf("%s runs on a %s: %s", e, class(d)[1], r$error))
      if (is.null(r$error) && !"order" %in% names(E$skip))
        expect_equal(cf_numbers(r$value), cf_numbers(r0$value), tolerance = 1e-10,
                     label = sprintf("%s on a %s", e, class(d)[1]))
      ok <- ok && identical(d, before) && is.null(r$error) && cf_equal(r$value, r0$value)
    }
    cf_log(e, "data", ok)
  }
})

test_that("conformance: print, summary, tidy, glance, plot and autoplot work on the default fit", {
  P <- cf_panel()
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off(), add = TRUE)
  for (e in cf_entries()) {
    E <- cf_estimators[[e]]
    set.seed(7); r <- cf_try(E$fit, P)
    if (!is.null(r$error)) next
    fit <- r$value
    m <- setdiff(c("print", "summary", "tidy", "glance", "plot", "autoplot"), names(E$skip))
    for (k in m) {
      res <- cf_method(k, fit)
      expect_null(res, label = sprintf("%s(%s): %s", k, e, res))
      cf_log(e, k, is.null(res))
    }
  }
})

test_that("conformance: every method works on the default fit's event study (aggregate(type = \"dynamic\"))", {
  # the estimators whose fits aggregate(): the event study of the default
  # fit, with or without a reference period, prints, tidies and plots
  # (autoplot used to fail on event studies without a reference period)
  P <- cf_panel()
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off(), add = TRUE)
  reg <- dd_estimators()
  agg <- reg$name[!is.na(reg$aggregate)]
  expect_true(all(c("did_cs", "did_etwfe", "did_edid", "did_ddd", "did_dose") %in% agg))
  for (e in agg) {
    E <- cf_estimators[[e]]
    set.seed(7); r <- cf_try(E$fit, P)
    expect_null(r$error, label = sprintf("%s's default fit: %s", e, r$error))
    if (!is.null(r$error)) next
    a <- suppressWarnings(aggregate(r$value, type = "dynamic"))
    expect_false(is.null(a$event_study), label = sprintf("%s's dynamic aggregate has an event study", e))
    for (k in c("print", "summary", "tidy", "glance", "plot", "autoplot")) {
      res <- cf_method(k, a)
      expect_null(res, label = sprintf("%s(aggregate(%s, \"dynamic\")): %s", k, e, res))
    }
  }
  # with and without a reference period (did_cs's two base periods)
  cs <- did_cs(P, "y", "id", "t", "g", nboot = 0)
  for (bp in c("varying", "universal")) {
    a <- aggregate(did_cs(P, "y", "id", "t", "g", nboot = 0, base_period = bp), type = "dynamic")
    expect_length(a$event_study$reference, if (bp == "universal") 1L else 0L)
    expect_null(tryCatch({ cf_autoplot(a); NULL }, error = conditionMessage), label = bp)
  }
})

test_that("conformance: the suite has one entry per registry row and diagnostic, and lists every exported estimator", {
  reg <- dd_estimators()
  # every registry row, every diagnostic, nothing else
  expect_setequal(names(cf_estimators), c(reg$name, cf_diagnostics))
  expect_length(intersect(reg$name, cf_diagnostics), 0)
  ns <- getNamespaceExports("diffdiff")
  est <- sort(grep("^did_", ns, value = TRUE))
  est <- setdiff(est, c("did_check"))
  expect_setequal(intersect(names(cf_estimators), est), est)
  for (x in cf_diagnostics) expect_true(x %in% ns, label = x)
})
