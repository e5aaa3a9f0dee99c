# A standing reliability suite: every estimator against every kind of bad
# input, as a table (estimator x bad input) -> expected outcome: "error"
# (with a regular expression that names the argument), "warning" (with its
# regular expression), "ok" (no error, no warning; messages allowed) or
# "same" (the result equals the one on the clean data: for inputs that must
# not matter, such as the order of the rows). After every call the caller's
# data must be unchanged (half the estimators get a data.table, which an
# estimator could modify by reference). New bad inputs go into `bad`; a new
# estimator into `est` (and, where it differs from the default, into the
# `expect` of each bad input).

# ---- one small staggered panel: 60 units x 6 periods, cohorts 3 and 5, 20 never treated ----
mx_panel <- function(n = 60, T = 6, seed = 13) {
  set.seed(seed)
  d <- expand.grid(id = seq_len(n), t = seq_len(T))
  d <- d[order(d$id, d$t), ]
  gu <- rep(c(0, 3, 5), length.out = n)
  d$g <- gu[d$id]
  d$d <- as.integer(d$g > 0 & d$t >= d$g)
  d$treated <- as.integer(d$g > 0)
  d$post <- as.integer(d$t >= 3)
  d$x <- rnorm(nrow(d))
  d$w <- runif(n, 0.5, 2)[d$id]
  d$cl <- (d$id %/% 3) %% 12                          # 12 clusters, treated and untreated units in each
  d$y <- 0.3 * d$x + 0.2 * d$t + rnorm(n)[d$id] + (1 + 0.2 * pmax(d$t - d$g, 0)) * d$d + rnorm(nrow(d))
  rownames(d) <- NULL
  d
}
P <- mx_panel()

# ---- the estimators: a = argument names (defaults below, overridden by a bad input) ----
mx_defaults <- list(y = "y", id = "id", t = "t", g = "g", dn = "d", tr = "treated", post = "post",
                    w = NULL, cl = NULL, extra = list())
est <- list(
  did_2x2 = function(d, a) do.call(did_2x2, c(list(d, a$y, a$tr, a$post, weightsname = a$w, cluster = a$cl), a$extra)),
  did_twfe = function(d, a) do.call(did_twfe, c(list(d, a$y, a$id, a$t, a$dn, weightsname = a$w, cluster = a$cl), a$extra)),
  did_event = function(d, a) do.call(did_event, c(list(d, a$y, a$id, a$t, a$g, weightsname = a$w, cluster = a$cl), a$extra)),
  did_cs = function(d, a) do.call(did_cs, c(list(d, a$y, a$id, a$t, a$g, weightsname = a$w, cluster = a$cl),
                                            utils::modifyList(list(nboot = 0), a$extra))),
  did_sdid = function(d, a) do.call(did_sdid, c(list(d, a$y, a$id, a$t, a$dn, staggered = TRUE, se = "none"), a$extra)),
  did_sa = function(d, a) do.call(did_sa, c(list(d, a$y, a$id, a$t, a$g, weightsname = a$w, cluster = a$cl), a$extra)),
  did_bjs = function(d, a) do.call(did_bjs, c(list(d, a$y, a$id, a$t, a$g, weightsname = a$w, cluster = a$cl), a$extra)),
  did_gardner = function(d, a) do.call(did_gardner, c(list(d, a$y, a$id, a$t, a$g, weightsname = a$w, cluster = a$cl),
                                                      a$extra)),
  did_stacked = function(d, a) do.call(did_stacked, c(list(d, a$y, a$id, a$t, a$g, kappa_pre = 1, kappa_post = 1,
                                                           weightsname = a$w, cluster = a$cl), a$extra)),
  bacon_decomp = function(d, a) do.call(bacon_decomp, c(list(d, a$y, a$id, a$t, gname = a$g), a$extra))
)
has_w <- setdiff(names(est), c("did_sdid", "bacon_decomp"))       # take weightsname and cluster
has_g <- c("did_event", "did_cs", "did_sa", "did_bjs", "did_gardner", "did_stacked", "bacon_decomp")
num_t <- setdiff(names(est), c("did_2x2", "did_twfe"))            # need numeric, ordered periods
na_for <- function(ests, value = "skip") stats::setNames(rep(value, length(ests)), ests)

# ---- the bad inputs: data (a mutation of the panel), args (per estimator), expected outcomes ----
# expect: "default" for every estimator, then per-estimator exceptions; "skip" where the input does
# not apply (the estimator has no such argument)
bad <- list(
  # -- inputs handled before issue 13 --
  list(name = "NULL data", data = function(d) NULL,
       expect = c(default = "error:`data` must be a data.frame")),
  list(name = "missing outcome column", args = list(y = "nope"),
       expect = c(default = "error:`yname` = \"nope\" is not a column")),
  list(name = "missing cluster column", args = list(cl = "nope"),
       expect = c(default = "error:`cluster` = \"nope\"", na_for(c("did_sdid", "bacon_decomp")))),
  list(name = "character outcome", data = function(d) { d$y <- as.character(d$y); d },
       expect = c(default = "error:`yname` = \"y\" must be a numeric column")),
  list(name = "NA in the outcome", data = function(d) { d$y[c(3, 40)] <- NA; d },
       expect = c(default = "ok", did_sdid = "error:`yname` = \"y\" has 2 missing or non-finite value",
                  bacon_decomp = "error:balanced panel without missing values",
                  did_cs = "warning:2 units are missing in some periods")),
  list(name = "gname varying within a unit", data = function(d) { d$g[d$id == 2][2] <- 5; d },
       expect = c(default = "error:`gname` = \"g\" must be constant within each unit",
                  na_for(setdiff(names(est), has_g)))),
  list(name = "dname not 0/1", data = function(d) { d$d[4] <- 2; d$treated[4] <- 2; d },
       expect = c(default = "skip", did_twfe = "error:`dname` = \"d\" must be a 0/1 indicator",
                  did_sdid = "error:`dname` = \"d\" must be 0/1",
                  did_2x2 = "error:`treatname` = \"treated\" must be a 0/1 indicator")),
  list(name = "duplicated unit-period row", data = function(d) rbind(d, d[7, ]),
       expect = c(default = "error:more than one row in period|identify rows uniquely", did_2x2 = "ok",
                  bacon_decomp = "error:identify rows uniquely|balanced panel")),
  list(name = "negative weights", data = function(d) { d$w[9] <- -1; d }, args = list(w = "w"),
       expect = c(default = "error:`weightsname` = \"w\" has negative values", na_for(c("did_sdid", "bacon_decomp")))),
  list(name = "a single period", data = function(d) d[d$t == 4, ],
       expect = c(default = "error:`tname` = \"t\" must have at least two periods",
                  did_2x2 = "error:`postname` = \"post\" takes only the value 1",
                  did_sa = "error:`tname` = \"t\" must have at least two periods")),
  list(name = "an unbalanced panel", data = function(d) d[-c(5, 17), ],
       expect = c(default = "ok", did_sdid = "error:the panel is unbalanced", bacon_decomp = "error:balanced panel",
                  did_cs = "warning:units are missing in some periods")),
  list(name = "bad alpha", args = list(extra = list(alpha = 2)),
       expect = c(default = "error:`alpha` must be a number strictly between 0 and 1; got 2", bacon_decomp = "skip")),
  # -- issue 13 --
  list(name = "constant outcome (1)", data = function(d) { d$y <- 3; d },
       expect = c(default = "error:`yname` = \"y\" is constant")),
  list(name = "single cluster (2)", data = function(d) { d$one <- 1; d }, args = list(cl = "one"),
       expect = c(default = "error:`cluster` = \"one\" has a single cluster", na_for(c("did_sdid", "bacon_decomp")))),
  list(name = "outcome in two roles (3)", args = function(e) if (e == "did_2x2") list(y = "treated") else list(y = "id"),
       expect = c(default = "error:`yname` and `idname` both name the column \"id\"",
                  did_2x2 = "error:`yname` and `treatname` both name the column \"treated\"")),
  list(name = "cluster = outcome (3)", args = list(cl = "y"),
       expect = c(default = "error:`yname` and `cluster` both name the column \"y\"", na_for(c("did_sdid", "bacon_decomp")))),
  list(name = "duplicated column name (3)", data = function(d) cbind(d, y = 1),
       expect = c(default = "error:`data` has 2 columns named \"y\" \\(used as `yname`\\)")),
  list(name = "outcome overflows squares (4)", data = function(d) { d$y <- d$y * 1e300; d },
       expect = c(default = "error:`yname` = \"y\" has values as large as .*Rescale")),
  list(name = "cohort between periods (5)", data = function(d) { d$g[d$g == 3] <- 3.5; d$d <- as.integer(d$g > 0 & d$t >= d$g); d },
       expect = c(default = "error:`gname` = \"g\" has value 3.5, which is not a period of `tname` = \"t\"",
                  na_for(setdiff(names(est), has_g)))),
  list(name = "never treated coded -1 (5)", data = function(d) { d$g[d$g == 0] <- -1; d },
       expect = c(default = "error:`gname` = \"g\" has the negative value -1", na_for(setdiff(names(est), has_g)))),
  list(name = "never treated coded after the last period (5)", data = function(d) { d$g[d$g == 0] <- 99; d },
       expect = c(default = "same", na_for(setdiff(names(est), has_g)))),
  list(name = "never treated coded Inf or NA (5)", data = function(d) { d$g[d$g == 0] <- ifelse(d$id[d$g == 0] %% 2, Inf, NA); d },
       expect = c(default = "same", na_for(setdiff(names(est), has_g)))),
  list(name = "a missing period (6)", data = function(d) d[d$t != 4, ],
       expect = c(default = "ok", did_sa = "warning:cohort 5 has no observation at relative period -1 \\(`ref`; no t = 4\\)")),
  list(name = "a single unit (7)", data = function(d) d[d$id == 2, ],
       expect = c(default = "error:`idname` = \"id\" has a single unit \\(2\\) in the estimation sample.*not identified",
                  did_2x2 = "error:`treatname` = \"treated\" is 1 in every row")),
  list(name = "character periods (10)", data = function(d) { d$t <- as.character(d$t); d },
       expect = c(default = "error:`tname` = \"t\" must be a numeric column", did_twfe = "same", did_2x2 = "same")),
  list(name = "row order, bootstraps included (12)", data = function(d) d[sample(nrow(d)), ],
       args = function(e) switch(e, did_2x2 = , did_twfe = , did_event = list(cl = "cl", extra = list(nboot = 19)),
                                 did_cs = list(extra = list(nboot = 49)), list()),
       expect = c(default = "same")),
  list(name = "no leads (13)", args = list(extra = list(pretrends = FALSE)),
       expect = c(default = "skip", did_bjs = "ok", did_gardner = "ok")),
  list(name = "2 of 12 clusters treated (14)", data = function(d) { d$cl2 <- ifelse(d$g > 0, d$id %% 2, d$cl); d },
       args = list(cl = "cl2"),
       expect = c(default = "warning:`cluster` = \"cl2\": 2 clusters with treated observations and 12 with untreated",
                  na_for(c("did_sdid", "bacon_decomp"))))
)

# ---- the harness ----
mx_run <- function(f, d, a) {
  warn <- character()
  res <- tryCatch(withCallingHandlers(list(value = f(d, a)),
                                      warning = function(w) { warn <<- c(warn, conditionMessage(w)); invokeRestart("muffleWarning") },
                                      message = function(m) invokeRestart("muffleMessage")),
                  error = function(e) list(error = conditionMessage(e)))
  res$warnings <- warn
  res
}
# the numbers of a result, for "same"
mx_numbers <- function(x) {
  if (inherits(x, "bacon_decomp")) return(x$two_by_twos[order(x$two_by_twos$treated, x$two_by_twos$untreated), ])
  tab <- x$coeftable
  tab[, vapply(tab, is.numeric, logical(1)), drop = FALSE]
}

test_that("every estimator x every bad input gives the expected class of outcome; data never modified", {
  set.seed(2)
  for (b in bad) {
    dat <- if (is.null(b$data)) P else b$data(P)
    for (k in seq_along(est)) {
      e <- names(est)[k]
      exp <- if (e %in% names(b$expect)) b$expect[[e]] else b$expect[["default"]]
      if (exp == "skip") next
      args <- if (is.function(b$args)) b$args(e) else if (is.null(b$args)) list() else b$args
      a <- utils::modifyList(mx_defaults, args)
      d <- if (!is.null(dat) && k %% 2 == 0) data.table::as.data.table(dat) else dat
      before <- if (is.null(d)) NULL else data.table::copy(d)
      set.seed(1)
      r <- mx_run(est[[e]], d, a)
      label <- sprintf("%s x %s", e, b$name)
      expect_identical(d, before, label = paste(label, "(data unchanged)"))
      kind <- sub(":.*$", "", exp); rx <- sub("^[^:]*:?", "", exp)
      if (kind == "error") {
        expect_true(!is.null(r$error), label = paste(label, "is an error"))
        if (!is.null(r$error) && nzchar(rx)) expect_match(r$error, rx, label = label)
        if (!is.null(r$error)) expect_match(r$error, "`[a-z_]+`|single unit|balanced|unbalanced", label = paste(label, "names an argument"))
      } else {
        expect_null(r$error, label = paste(label, "runs:", r$error))
        if (kind == "warning") {
          expect_true(any(grepl(rx, r$warnings)), label = paste(label, "warns:", paste(r$warnings, collapse = " | ")))
        } else {
          expect_identical(r$warnings, character(), label = paste(label, "has no warning"))
        }
        if (kind == "same" && is.null(r$error)) {
          set.seed(1)
          r0 <- mx_run(est[[e]], P, a)
          expect_equal(mx_numbers(r$value), mx_numbers(r0$value), tolerance = 1e-10, label = paste(label, "equals the clean fit"))
        }
      }
    }
  }
})

test_that("survey designs: zero weights and zero-weight domains are errors, data unchanged", {
  d <- P; before <- data.table::copy(d)
  d0 <- d; d0$w <- 0
  expect_error(survey_design(d0, weights = ~ w, ids = ~ id), "`weights` is zero for every observation")
  expect_error(survey_design(d0, weights = ~ w, repweights = matrix(1, nrow(d0), 3), type = "JK1"),
               "`weights` is zero for every observation")
  d1 <- d; d1$w[d1$cl == 3] <- 0
  des <- survey_design(d1, weights = ~ w, ids = ~ id)
  expect_error(aggregate_survey(d1, "y", by = c("cl", "t"), design = des), "`by` cell cl = 3, t = 1 has zero total weight")
  expect_error(survey_design(d, weights = ~ nope), "`weights` uses \"nope\"")
  expect_error(survey_design(cbind(d, w = 1), weights = ~ w, ids = ~ id), "2 columns named \"w\" \\(used as `weights`\\)")
  expect_error(aggregate_survey(d, "y", by = c("y", "t"), design = survey_design(d, weights = ~ w)),
               "`ynames` and `by` both name the column \"y\"")
  # a single PSU in the estimation sample
  d2 <- d; d2$psu <- ifelse(d2$id <= 30, 1, 2)
  des2 <- survey_design(d2, weights = ~ w, ids = ~ psu)
  d2$y[d2$psu == 2] <- NA
  for (f in list(function() did_twfe(d2, "y", "id", "t", "d", survey = des2),
                 function() did_cs(d2, "y", "id", "t", "g", survey = des2, nboot = 0),
                 function() did_bjs(d2, "y", "id", "t", "g", survey = des2)))
    expect_error(suppressMessages(f()), "`survey` has a single primary sampling unit")
  expect_identical(d, before)
})

test_that("honest_did and pretrends_power: bad inputs and the closed robust interval", {
  es <- suppressMessages(did_event(P, "y", "id", "t", "g"))
  expect_silent(h <- honest_did(es, type = "RM", Mbar = c(0.5, 2), grid_points = 200, breakdown = FALSE))
  expect_equal(nrow(h$grids), 2L)
  expect_true(all(h$grids$ub > h$results$ub & h$grids$lb < h$results$lb))    # closed on both sides
  expect_error(honest_did(es, type = "RM", M = 1), "`M` is for type = \"SD\"")
  expect_error(honest_did(es, l_vec = c(1, 2)), "`l_vec` must")
  expect_error(pretrends_power(es, power = 2), "`power` must be a number")
  expect_error(pretrends_power(es), "exactly one of `power`, `slope` and `delta`")
  b <- suppressMessages(did_bjs(P, "y", "id", "t", "g", pretrends = FALSE))
  expect_error(honest_did(b), "no pre-period coefficients")
})
