# survey_design() and the Taylor-series variance kernel (src/survey.c)
# against the survey package (live, Debian r-cran-survey) on its api data.
# Tolerances from issue #5: totals and means 1e-10, standard errors 1e-8.

svy_cmp <- function(des, dd, y, vars) {
  f <- stats::as.formula(paste("~", paste(vars, collapse = "+")))
  a <- survey::svytotal(f, des); b <- diffdiff:::dd_svy_total(dd, y)
  expect_lt(max(abs(coef(a) - b$estimate) / abs(coef(a))), 1e-10)
  expect_lt(max(abs(survey::SE(a) - b$se) / survey::SE(a)), 1e-8)
  expect_lt(max(abs(unname(vcov(a)) - b$vcov) / max(abs(vcov(a)))), 1e-8)
  a <- survey::svymean(f, des); b <- diffdiff:::dd_svy_mean(dd, y)
  expect_lt(max(abs(coef(a) - b$estimate) / abs(coef(a))), 1e-10)
  expect_lt(max(abs(survey::SE(a) - b$se) / survey::SE(a)), 1e-8)
}

test_that("stratified, one-stage cluster and two-stage designs equal survey", {
  need_peer("survey")
  data("api", package = "survey", envir = environment())
  v <- c("api00", "enroll")
  y <- as.matrix(apistrat[, v])
  svy_cmp(survey::svydesign(id = ~1, strata = ~stype, weights = ~pw, data = apistrat, fpc = ~fpc),
          survey_design(apistrat, weights = ~pw, strata = ~stype, fpc = ~fpc), y, v)
  svy_cmp(survey::svydesign(id = ~1, strata = ~stype, weights = ~pw, data = apistrat),
          survey_design(apistrat, weights = "pw", strata = "stype"), y, v)
  y <- as.matrix(apiclus1[, v])
  svy_cmp(survey::svydesign(id = ~dnum, weights = ~pw, data = apiclus1, fpc = ~fpc),
          survey_design(apiclus1, weights = ~pw, ids = ~dnum, fpc = ~fpc), y, v)
  ac2 <- apiclus2[!is.na(apiclus2$enroll), ]
  y <- as.matrix(ac2[, v])
  svy_cmp(survey::svydesign(id = ~dnum + snum, fpc = ~fpc1 + fpc2, data = ac2),
          survey_design(ac2, ids = ~dnum + snum, fpc = ~fpc1 + fpc2), y, v)
  svy_cmp(survey::svydesign(id = ~dnum + snum, weights = ~pw, data = ac2),
          survey_design(ac2, ids = ~dnum + snum, weights = ~pw), y, v)
  # fpc as sampling fractions
  fr <- apistrat; fr$f <- with(fr, table(stype)[stype] / fpc)
  svy_cmp(survey::svydesign(id = ~1, strata = ~stype, weights = ~pw, data = fr, fpc = ~f),
          survey_design(fr, weights = ~pw, strata = ~stype, fpc = ~f), as.matrix(fr[, v]), v)
})

test_that("each lonely-PSU option equals survey with the same option", {
  need_peer("survey")
  data("api", package = "survey", envir = environment())
  old <- options(survey.lonely.psu = "fail")
  on.exit(options(old))
  y <- as.matrix(apistrat[, "api00", drop = FALSE])
  for (lp in c("remove", "certainty", "adjust", "average")) {
    options(survey.lonely.psu = lp)
    des <- survey::svydesign(id = ~1, strata = ~cname, weights = ~pw, data = apistrat)
    dd <- survey_design(apistrat, weights = ~pw, strata = ~cname, lonely_psu = lp)
    a <- suppressWarnings(survey::svymean(~api00, des)); b <- diffdiff:::dd_svy_mean(dd, y)
    expect_lt(abs(survey::SE(a) - b$se) / survey::SE(a), 1e-8)
    a <- suppressWarnings(survey::svytotal(~api00, des)); b <- diffdiff:::dd_svy_total(dd, y)
    expect_lt(abs(survey::SE(a) - b$se) / survey::SE(a), 1e-8)
  }
  options(survey.lonely.psu = "fail")
  des <- survey::svydesign(id = ~1, strata = ~cname, weights = ~pw, data = apistrat)
  msg <- tryCatch(survey::svymean(~api00, des), error = conditionMessage)
  stratum <- sub("^Stratum \\((.*)\\) has.*$", "\\1", msg)
  dd <- survey_design(apistrat, weights = ~pw, strata = ~cname)
  expect_error(diffdiff:::dd_svy_mean(dd, y), sprintf("Stratum \\(%s\\) has only one PSU at stage 1", stratum))
})

test_that("design errors name the argument and the value", {
  d <- data.frame(y = 1:8, w = c(1, 2, 1, 2, 1, 2, 1, 2), s = rep(1:2, each = 4), p = c(1, 1, 2, 2, 1, 1, 2, 2))
  expect_error(survey_design(transform(d, w = -w), weights = ~w), "`weights` must be non-negative and not missing; row 1 has -1")
  expect_error(survey_design(transform(d, w = replace(w, 3, NA)), weights = ~w), "row 3 has NA")
  expect_error(survey_design(transform(d, s = replace(s, 2, NA)), weights = ~w, strata = ~s),
               "`strata` has missing values \\(first in row 2\\)")
  expect_error(survey_design(transform(d, p = replace(p, 5, NA)), weights = ~w, ids = ~p),
               "`ids` \\(stage 1\\) has missing values \\(first in row 5\\)")
  expect_error(survey_design(d, weights = ~w, strata = ~s, ids = ~p),
               "Clusters not nested in strata at top level; you may want nest=TRUE")
  expect_silent(survey_design(d, weights = ~w, strata = ~s, ids = ~p, nest = TRUE))
  expect_error(survey_design(transform(d, N = ifelse(s == 1, 1, 5)), weights = ~w, strata = ~s, ids = ~p, nest = TRUE, fpc = ~N),
               "`fpc` at stage 1 is smaller than the number of sampled units in stratum 1: 1 < 2")
  expect_error(survey_design(d, weights = ~w, lonely_psu = "drop"), "`lonely_psu` must be one of .*\"drop\"")
  expect_error(survey_design(d, weights = ~zz), "`weights` uses \"zz\"")
  d0 <- d
  des <- survey_design(d, weights = ~w, strata = ~s, ids = ~p, nest = TRUE)
  expect_identical(d, d0)
  expect_output(print(des), "2 strata, 4 PSUs")
})

test_that("replicate designs from as.svrepdesign() and svrepdesign() equal survey", {
  need_peer("survey")
  data("api", package = "survey", envir = environment())
  v <- c("api00", "enroll")
  rep_cmp <- function(rd, y, dd = rd) {
    for (f in c("total", "mean")) {
      a <- if (f == "total") survey::svytotal(~api00 + enroll, rd) else survey::svymean(~api00 + enroll, rd)
      b <- if (f == "total") diffdiff:::dd_svy_total(dd, y) else diffdiff:::dd_svy_mean(dd, y)
      expect_lt(max(abs(coef(a) - b$estimate) / abs(coef(a))), 1e-10)
      expect_lt(max(abs(survey::SE(a) - b$se) / survey::SE(a)), 1e-8)
    }
  }
  dclus1 <- survey::svydesign(id = ~dnum, weights = ~pw, data = apiclus1, fpc = ~fpc)
  y1 <- as.matrix(apiclus1[, v])
  rep_cmp(survey::as.svrepdesign(dclus1, type = "JK1"), y1)
  set.seed(1)
  rep_cmp(survey::as.svrepdesign(dclus1, type = "bootstrap", replicates = 50), y1)
  dstrat <- survey::svydesign(id = ~1, strata = ~stype, weights = ~pw, data = apistrat, fpc = ~fpc)
  rep_cmp(survey::as.svrepdesign(dstrat, type = "JKn"), as.matrix(apistrat[, v]))
  set.seed(2)
  d2 <- data.frame(s = rep(1:10, each = 20), p = rep(1:20, each = 10), api00 = rnorm(200), enroll = runif(200),
                   w = runif(200, 1, 3))
  des2 <- survey::svydesign(id = ~p, strata = ~s, weights = ~w, data = d2)
  y2 <- as.matrix(d2[, v])
  rep_cmp(survey::as.svrepdesign(des2, type = "BRR"), y2)
  rep_cmp(survey::as.svrepdesign(des2, type = "Fay", fay.rho = 0.3), y2)
  # explicit replicate columns, mse and custom scales, and the same design from survey_design()
  jk <- survey::as.svrepdesign(dclus1, type = "JK1", compress = FALSE)
  R <- matrix(as.numeric(as.matrix(stats::weights(jk, "analysis"))), nrow(apiclus1))
  dd <- cbind(apiclus1, setNames(as.data.frame(R), paste0("rw", seq_len(ncol(R)))))
  cols <- paste0("rw", seq_len(ncol(R)))
  for (mse in c(FALSE, TRUE)) {
    sv <- survey::svrepdesign(data = dd, repweights = "rw[0-9]+", weights = ~pw, type = "JK1",
                              scale = 0.9, rscales = seq(0.5, 1.5, length.out = ncol(R)), mse = mse)
    mine <- survey_design(dd, weights = ~pw, repweights = "rw[0-9]+", type = "jk1", scale = 0.9,
                          rscales = seq(0.5, 1.5, length.out = ncol(R)), mse = mse)
    rep_cmp(sv, y1, mine)
    rep_cmp(sv, y1, survey_design(dd, weights = "pw", repweights = cols, type = "JK1", scale = 0.9,
                                  rscales = seq(0.5, 1.5, length.out = ncol(R)), mse = mse))
  }
  # a Taylor design converted from survey::svydesign()
  rep_cmp(dstrat, as.matrix(apistrat[, v]))
})

test_that("replicate design errors", {
  d <- data.frame(y = 1:6, w = 1, r1 = 1, r2 = 2)
  expect_error(survey_design(d, weights = ~w, repweights = ~r1 + r2, type = "JK3"),
               "`type` must be one of \"BRR\", \"Fay\", \"JK1\", \"JKn\", \"SDR\", \"bootstrap\" \\(any case\\); got \"JK3\"")
  expect_error(survey_design(d, weights = ~w, repweights = matrix(1, 5, 2), type = "JK1"),
               "`repweights` has 5 rows but `data` has 6")
  expect_error(survey_design(d, weights = ~w, repweights = ~r1 + r2, type = "Fay"), "`rho` is required")
  expect_error(survey_design(d, weights = ~w, repweights = ~r1 + r2, type = "JKn"), "`rscales`.*required")
  expect_error(survey_design(d, weights = ~w, repweights = "zz", type = "BRR"), "`repweights` = \"zz\" does not name columns")
  expect_silent(des <- survey_design(d, weights = ~w, repweights = ~r1 + r2, type = "bootSTRAP"))
  expect_equal(des$type, "bootstrap")
  expect_error(diffdiff:::dd_as_survey_design(list()), "`survey` must be a survey_design\\(\\)")
})

test_that("aggregate_survey() equals svyby(svymean) on the full design", {
  need_peer("survey")
  data("api", package = "survey", envir = environment())
  cmp <- function(des, dd, d, by) {
    a <- survey::svyby(stats::as.formula(paste("~", paste(by, collapse = "+"))), formula = ~api00 + api99,
                       design = des, FUN = survey::svymean)
    b <- aggregate_survey(d, c("api00", "api99"), by, dd)
    # svyby sorts with the last `by` column slowest, aggregate_survey with
    # the first: b is sorted (checked below), a is put in b's order
    key <- function(x) do.call(paste, c(lapply(x[by], as.character), sep = "\r"))
    expect_identical(do.call(order, unname(as.list(b[by]))), seq_len(nrow(b)))
    a <- a[match(key(b), key(a)), ]
    se <- survey::SE(a)
    expect_equal(nrow(a), nrow(b))
    expect_lt(max(abs(c(a$api00, a$api99) - c(b$api00, b$api99)) / abs(c(a$api00, a$api99))), 1e-10)
    expect_lt(max(abs(unlist(se) - c(b$api00_se, b$api99_se)) / unlist(se)), 1e-8)
    expect_equal(b$n, as.vector(table(do.call(paste, c(d[by], sep = "\r")))[unique(do.call(paste, c(d[by], sep = "\r"))[do.call(order, unname(d[by]))])]))
  }
  cmp(survey::svydesign(id = ~1, strata = ~stype, weights = ~pw, data = apistrat, fpc = ~fpc),
      survey_design(apistrat, weights = ~pw, strata = ~stype, fpc = ~fpc), apistrat, c("sch.wide", "awards"))
  cmp(survey::svydesign(id = ~dnum, weights = ~pw, data = apiclus1, fpc = ~fpc),
      survey_design(apiclus1, weights = ~pw, ids = ~dnum, fpc = ~fpc), apiclus1, "stype")
  cmp(survey::svydesign(id = ~dnum + snum, fpc = ~fpc1 + fpc2, data = apiclus2),
      survey_design(apiclus2, ids = ~dnum + snum, fpc = ~fpc1 + fpc2), apiclus2, "stype")
  # numeric and character cell columns (cells sorted by their values)
  st <- apistrat; st$cty <- as.character(st$cname); st$yr <- as.numeric(st$stype == "E") * 3 + (st$awards == "Yes")
  cmp(survey::svydesign(id = ~1, strata = ~stype, weights = ~pw, data = st, fpc = ~fpc),
      survey_design(st, weights = ~pw, strata = ~stype, fpc = ~fpc), st, c("yr", "sch.wide"))
  ct <- st[st$cty %in% names(which(table(st$cty) >= 4)), ]
  cmp(survey::svydesign(id = ~1, weights = ~pw, data = ct), survey_design(ct, weights = ~pw), ct, "cty")
  jk <- survey::as.svrepdesign(survey::svydesign(id = ~dnum, weights = ~pw, data = apiclus1, fpc = ~fpc), type = "JK1")
  cmp(jk, jk, apiclus1, "stype")
  # a converted svydesign() object gives the same cells as survey_design()
  des <- survey::svydesign(id = ~dnum, weights = ~pw, data = apiclus1, fpc = ~fpc)
  expect_equal(aggregate_survey(apiclus1, "api00", "stype", des),
               aggregate_survey(apiclus1, "api00", "stype", survey_design(apiclus1, weights = ~pw, ids = ~dnum, fpc = ~fpc)))
})

test_that("aggregate_survey(): the tabled and the sorted cell paths give the same cells", {
  set.seed(11)
  n <- 300
  d <- data.frame(a = sample(15, n, TRUE), b = sample(c(3, 1, 2) * 10, n, TRUE), c = sample(15, n, TRUE),
                  str = rep(1:3, each = 100), psu = rep(1:30, each = 10), w = runif(n, 1, 3), y = rnorm(n))
  des <- survey_design(d, weights = ~w, strata = ~str, ids = ~psu)
  # three columns: 15 x 3 x 15 = 675 possible cells, tabled
  r1 <- aggregate_survey(d, "y", c("a", "b", "c"), des)
  expect_identical(diffdiff:::dd_reuse$cells_path, "table")
  # the same cells as one numeric key (the first column most significant)
  d$k <- d$a * 1e4 + d$b * 1e2 + d$c
  r2 <- aggregate_survey(d, "y", "k", des)
  expect_identical(diffdiff:::dd_reuse$cells_path, "table")
  # a first column of about 300 levels: 300 x 3 x 15 possible cells, more
  # than 4 n + 1024, so the present ones are found by sorting
  d$big <- d$a + 100 * sample(60, n, TRUE)
  r3 <- aggregate_survey(d, "y", c("big", "b", "c"), des)
  expect_identical(diffdiff:::dd_reuse$cells_path, "sort")
  d$kb <- d$big * 1e4 + d$b * 1e2 + d$c
  r4 <- aggregate_survey(d, "y", "kb", des)
  expect_identical(diffdiff:::dd_reuse$cells_path, "table")
  num <- c("y", "y_se", "n", "n_eff", "weight_sum")
  expect_identical(r1[num], r2[num])
  expect_identical(r3[num], r4[num])
  expect_identical(r1$a, d$a[match(r2$k, d$k)])
  expect_identical(do.call(order, unname(as.list(r3[c("big", "b", "c")]))), seq_len(nrow(r3)))
  # at the threshold: 32 x 64 = 2048 possible cells, tabled with 256 rows
  # (4 n + 1024 = 2048), sorted with 255 (2044); the same cells either way
  for (n in c(256, 255)) {
    e <- data.frame(a = rep_len(1:32, n), b = rep_len(1:64, n), w = runif(n, 1, 2), y = rnorm(n),
                    str = rep_len(1:2, n), psu = seq_len(n))
    e$a[1:32] <- 1:32; e$b[1:64] <- 1:64
    dz <- survey_design(e, weights = ~w, strata = ~str, ids = ~psu)
    ra <- aggregate_survey(e, "y", c("a", "b"), dz)
    expect_identical(diffdiff:::dd_reuse$cells_path, if (n == 256) "table" else "sort")
    e$k <- e$a * 100 + e$b
    rk <- aggregate_survey(e, "y", "k", dz)
    expect_identical(ra[num], rk[num])
  }
})

test_that("aggregate_survey() bad input", {
  d <- data.frame(y = c(1, 2, 3, NA), g = c(1, 1, 2, 2), w = 1, p = 1:4)
  des <- suppressWarnings(survey_design(d, weights = ~w, ids = ~p))
  expect_error(aggregate_survey(d, "y", "g", des), "`ynames` column \"y\" has missing values \\(first in row 4\\)")
  expect_error(aggregate_survey(d[1:3, ], "y", "g", des), "describes 4 observations but `data` has 3 rows")
  expect_error(aggregate_survey(d, "zz", "g", des), "`ynames`.*zz")
  expect_error(aggregate_survey(transform(d, g = c(1, NA, 2, 2)), "p", "g", des), "`by` column \"g\" has missing values")
})

test_that("did_2x2(survey = ) equals svyglm: coefficients, SEs and residual df", {
  need_peer("survey")
  data("api", package = "survey", envir = environment())
  prep <- function(d) { d$treat <- as.integer(d$stype == "E"); d$post <- as.integer(d$awards == "Yes"); d }
  cmp <- function(d, des, dd = des) {
    g <- survey::svyglm(api00 ~ treat * post + meals, design = des)
    f <- did_2x2(d, "api00", "treat", "post", xformla = ~ meals, survey = dd)
    ord <- c("(Intercept)", "treat", "post", "meals", "ATT")
    expect_lt(max(abs(coef(g) - coef(f)[ord]) / abs(coef(g))), 1e-8)
    expect_lt(max(abs(survey::SE(g) - f$coeftable$std.error[match(ord, f$coeftable$term)]) / survey::SE(g)), 1e-6)
    expect_equal(f$df, g$df.residual)
  }
  s <- prep(apistrat); c1 <- prep(apiclus1); c2 <- prep(apiclus2)
  d1 <- survey::svydesign(id = ~1, strata = ~stype, weights = ~pw, data = s, fpc = ~fpc)
  cmp(s, d1)
  cmp(s, d1, survey_design(s, weights = ~pw, strata = ~stype, fpc = ~fpc))
  d2 <- survey::svydesign(id = ~dnum, weights = ~pw, data = c1, fpc = ~fpc)
  cmp(c1, d2)
  cmp(c2, survey::svydesign(id = ~dnum + snum, fpc = ~fpc1 + fpc2, data = c2))
  cmp(c1, survey::as.svrepdesign(d2, type = "JK1"))
  d <- prep(apistrat)
  expect_error(did_2x2(d, "api00", "treat", "post", weightsname = "pw", survey = d1),
               "`weightsname` = \"pw\" and `survey` both give weights")
  expect_error(did_2x2(d, "api00", "treat", "post", cluster = "dnum", survey = d1), "`cluster` = \"dnum\" and `survey`")
  expect_error(did_2x2(d[-1, ], "api00", "treat", "post", survey = d1), "describes 200 observations but `data` has 199 rows")
  expect_error(did_2x2(d, "api00", "treat", "post", survey = list()), "`survey` must be a survey_design\\(\\)")
})

test_that("did_twfe and did_event (survey = ) equal svyglm with factor fixed effects", {
  need_peer("survey")
  d <- read.csv(system.file("extdata", "sim_panel.csv", package = "diffdiff"))
  d <- d[d$id <= 120, ]
  d$s3 <- d$state %% 3
  des <- survey::svydesign(ids = ~id, strata = ~s3, weights = ~w, data = d)
  g <- survey::svyglm(y ~ treat + x1 + factor(id) + factor(year), design = des)
  f <- did_twfe(d, "y", "id", "year", "treat", xformla = ~ x1, survey = des)
  expect_lt(abs(coef(g)[["treat"]] - coef(f)[["ATT"]]) / abs(coef(g)[["treat"]]), 1e-8)
  expect_lt(abs(survey::SE(g)[["treat"]] - f$coeftable$std.error[1]) / survey::SE(g)[["treat"]], 1e-6)
  expect_lt(abs(survey::SE(g)[["x1"]] - f$coeftable$std.error[2]) / survey::SE(g)[["x1"]], 1e-6)
  rel <- ifelse(d$first_treat == 0, -1, d$year - d$first_treat)
  d$relf <- stats::relevel(factor(rel), ref = "-1")
  ge <- survey::svyglm(y ~ relf + factor(id) + factor(year), design = stats::update(des, relf = d$relf))
  e <- did_event(d, "y", "id", "year", "first_treat", survey = des)
  k <- grep("^relf", names(coef(ge)))
  terms <- paste0("event::", sub("relf", "", names(coef(ge))[k]))
  expect_lt(max(abs(coef(ge)[k] - coef(e)[terms]) / abs(coef(ge)[k])), 1e-8)
  expect_lt(max(abs(survey::SE(ge)[k] - e$coeftable$std.error[match(terms, e$coeftable$term)]) / survey::SE(ge)[k]), 1e-6)
  # replicate designs refit per replicate (svyglm cannot: the unit dummies of a dropped PSU are NA)
  j <- survey::as.svrepdesign(survey::svydesign(ids = ~id, weights = ~w, data = d), type = "JK1")
  fj <- did_twfe(d, "y", "id", "year", "treat", xformla = ~ x1, survey = j)
  W <- as.matrix(stats::weights(j, "analysis"))
  th <- vapply(seq_len(ncol(W)), function(r) coef(suppressMessages(did_twfe(transform(d, wr = W[, r]), "y", "id", "year", "treat",
                                                             xformla = ~ x1, weightsname = "wr")))[["ATT"]], numeric(1))
  expect_equal(fj$coeftable$std.error[1], sqrt(j$scale * sum(j$rscales * (th - mean(th))^2)), tolerance = 1e-10)
  expect_error(did_twfe(d, "y", "id", "year", "treat", cluster = "state", survey = des), "`cluster` = \"state\" and `survey`")
})

test_that("did_cs(survey = ): weighted ATT(g,t); SEs of cells and aggregates = svytotal of the IF totals", {
  need_peer("survey"); need_peer("did")
  data("mpdta", package = "did", envir = environment())
  set.seed(3)
  u <- unique(mpdta$countyreal)
  ud <- data.frame(countyreal = u, str = sample(1:8, length(u), TRUE), w = runif(length(u), 1, 3))
  ud$psu <- ud$str * 1000 + sample(1:12, length(u), TRUE)
  d <- merge(mpdta, ud, by = "countyreal")
  des <- survey::svydesign(ids = ~psu, strata = ~str, weights = ~w, data = d)
  f <- did_cs(d, "lemp", "countyreal", "year", "first.treat", nboot = 0, survey = des)
  f0 <- did_cs(d, "lemp", "countyreal", "year", "first.treat", nboot = 0, weightsname = "w")
  expect_equal(coef(f), coef(f0), tolerance = 1e-12)
  K <- nrow(f$coeftable); n <- f$n
  uu <- ud[match(f$units, ud$countyreal), ]
  tot_se <- function(x, des_fun) {
    colnames(x) <- paste0("v", seq_len(ncol(x)))
    du <- cbind(uu, x)
    survey::SE(survey::svytotal(stats::as.formula(paste("~", paste(colnames(x), collapse = "+"))), des_fun(du)))
  }
  tsl <- function(du) survey::svydesign(ids = ~psu, strata = ~str, weights = ~w, data = du)
  s <- tot_se(as.matrix(f$inf)[, 1:K] / (n * uu$w), tsl)
  expect_lt(max(abs(s - f$coeftable$std.error) / s), 1e-8)
  for (ty in c("simple", "group", "dynamic", "calendar")) {
    a <- aggregate(f, type = ty)
    s <- tot_se((as.matrix(f$inf) %*% a$comb) / (n * uu$w), tsl)
    expect_lt(max(abs(s - a$coeftable$std.error) / s), 1e-8)
  }
  # with a finite population correction (PSU counts per stratum)
  d$Npsu <- 30
  desf <- survey::svydesign(ids = ~psu, strata = ~str, weights = ~w, fpc = ~Npsu, data = d)
  ff <- did_cs(d, "lemp", "countyreal", "year", "first.treat", nboot = 0, survey = desf)
  uu$Npsu <- 30
  s <- tot_se(as.matrix(f$inf)[, 1:K] / (n * uu$w),
              function(du) survey::svydesign(ids = ~psu, strata = ~str, weights = ~w, fpc = ~Npsu, data = du))
  expect_lt(max(abs(s - ff$coeftable$std.error) / s), 1e-8)
  expect_true(all(ff$coeftable$std.error < f$coeftable$std.error, na.rm = TRUE))
  # replicate weights (JKn from the same design)
  fr <- did_cs(d, "lemp", "countyreal", "year", "first.treat", nboot = 0,
               survey = survey::as.svrepdesign(des, type = "JKn"))
  s <- tot_se(as.matrix(f$inf)[, 1:K] / (n * uu$w), function(du) survey::as.svrepdesign(tsl(du), type = "JKn"))
  expect_lt(max(abs(s - fr$coeftable$std.error) / s), 1e-8)
  # the PSU-level multiplier bootstrap has the Taylor variance
  set.seed(1)
  fb <- did_cs(d, "lemp", "countyreal", "year", "first.treat", nboot = 20000, survey = des)
  draws <- .Call(diffdiff:::C_ifs_boot, diffdiff:::dd_if_rows(f$inf, f$unit_cluster), seq_len(K) - 1L, 20000L, 1L, NULL, NULL, NULL, 0L, NULL)
  expect_lt(max(abs(apply(draws, 2, stats::sd) * sqrt(f$unit_cluster$G) / n / f$coeftable$std.error - 1)), 0.03)
  # reported (IQR) bootstrap SEs near the analytic ones (IQR of a sum over ~90 PSUs)
  expect_lt(max(abs(fb$coeftable$std.error / f$coeftable$std.error - 1), na.rm = TRUE), 0.1)
  expect_error(did_cs(d, "lemp", "countyreal", "year", "first.treat", weightsname = "w", survey = des),
               "`weightsname` = \"w\" and `survey` both give weights")
  expect_error(did_cs(d, "lemp", "countyreal", "year", "first.treat", nboot = 99,
                      survey = survey::as.svrepdesign(des, type = "JKn")), "`nboot` = 99: with a replicate-weight")
  dd <- d; dd$psu[dd$year == 2007] <- dd$psu[dd$year == 2007] + 1
  expect_error(did_cs(dd, "lemp", "countyreal", "year", "first.treat", nboot = 0,
                      survey = survey_design(dd, weights = ~w, strata = ~str, ids = ~psu)),
               "units \\(`idname` = \"countyreal\"\\) must lie within one PSU")
})

test_that("did_cs(panel = FALSE, survey = ): repeated cross-sections with a design", {
  need_peer("survey"); need_peer("did")
  data("mpdta", package = "did", envir = environment())
  set.seed(3)
  d <- mpdta
  d$str <- sample(1:8, nrow(d), TRUE); d$w <- runif(nrow(d), 1, 3)
  d$psu <- d$str * 1000 + sample(1:12, nrow(d), TRUE)
  des <- survey::svydesign(ids = ~psu, strata = ~str, weights = ~w, data = d)
  f <- did_cs(d, "lemp", "countyreal", "year", "first.treat", nboot = 0, panel = FALSE, survey = des)
  f0 <- did_cs(d, "lemp", "countyreal", "year", "first.treat", nboot = 0, panel = FALSE, weightsname = "w")
  expect_equal(coef(f), coef(f0), tolerance = 1e-12)
  K <- nrow(f$coeftable)
  x <- as.matrix(f$inf)[, 1:K] / (f$n * d$w)        # rows are the observations, in data order here
  colnames(x) <- paste0("v", 1:K)
  s <- survey::SE(survey::svytotal(stats::as.formula(paste("~", paste(colnames(x), collapse = "+"))),
                                   survey::svydesign(ids = ~psu, strata = ~str, weights = ~w, data = cbind(d, x))))
  expect_lt(max(abs(s - f$coeftable$std.error) / s), 1e-8)
})

test_that("did_cs(survey = ) with lonely PSUs: each lonely_psu rule equals svytotal of the IF totals", {
  need_peer("survey"); need_peer("did")
  # the stratum rules of the influence-function rows come from the C kernel
  # (C_svy_onestage(rows = TRUE)); strata 7 and 8 get one PSU each
  data("mpdta", package = "did", envir = environment())
  set.seed(4)
  u <- unique(mpdta$countyreal)
  ud <- data.frame(countyreal = u, str = sample(1:8, length(u), TRUE), w = runif(length(u), 1, 3))
  ud$psu <- ud$str * 1000 + sample(1:12, length(u), TRUE)
  ud$psu[ud$str == 7] <- 7001; ud$psu[ud$str == 8] <- 8001
  d <- merge(mpdta, ud, by = "countyreal")
  old <- options(survey.lonely.psu = "fail"); on.exit(options(old))
  for (lp in c("remove", "certainty", "adjust", "average")) {
    f <- did_cs(d, "lemp", "countyreal", "year", "first.treat", nboot = 0,
                survey = survey_design(d, weights = ~w, strata = ~str, ids = ~psu, lonely_psu = lp))
    K <- nrow(f$coeftable); n <- f$n
    uu <- ud[match(f$units, ud$countyreal), ]
    x <- as.matrix(f$inf)[, 1:K] / (n * uu$w)
    colnames(x) <- paste0("v", seq_len(K))
    options(survey.lonely.psu = lp)
    s <- survey::SE(survey::svytotal(stats::as.formula(paste("~", paste(colnames(x), collapse = "+"))),
                                     survey::svydesign(ids = ~psu, strata = ~str, weights = ~w, data = cbind(uu, x))))
    options(survey.lonely.psu = "fail")
    expect_lt(max(abs(s - f$coeftable$std.error) / s), 1e-8)
  }
  expect_error(did_cs(d, "lemp", "countyreal", "year", "first.treat", nboot = 0,
                      survey = survey_design(d, weights = ~w, strata = ~str, ids = ~psu, lonely_psu = "fail")),
               "Stratum \\(7\\) has only one PSU at stage 1")
})

test_that("replicate-weight products read the design's weights in place: equal to the R products on copies", {
  set.seed(5)
  n <- 300; R <- 37; q <- 6
  W <- matrix(runif(n * R), n, R); W[sample(length(W), 500)] <- 0
  M <- matrix(rnorm(n * q), n, q)
  cp <- function(...) .Call(diffdiff:::C_svy_rep_crossprod, ...)
  # all rows, every column, then a batch of columns out of order
  expect_equal(cp(W, M, seq_len(R), NULL, NULL), crossprod(W, M), tolerance = 1e-13)
  b <- c(5L, 2L, 37L)
  expect_equal(cp(W, M, b, NULL, NULL), crossprod(W[, b], M), tolerance = 1e-13)
  # a subset of rows (repeated, as stacked data) with a multiplier: W[rows, ] * mult
  rows <- c(sample.int(n, 150), 7L, 7L)
  mult <- runif(length(rows), 0.5, 2)
  Mr <- M[rows, ]
  expect_equal(cp(W, Mr, seq_len(R), rows, mult), crossprod(W[rows, ] * mult, Mr), tolerance = 1e-13)
  # bit for bit the same as the old path on the copied matrix (the same sums in the same order)
  expect_identical(cp(W, Mr, seq_len(R), rows, mult), cp(W[rows, ] * mult, Mr, seq_len(R), NULL, NULL))
  expect_error(cp(W, M, 38L, NULL, NULL), "column 38 out of range")
  expect_error(cp(W, Mr, 1L, c(rows[-1], 301L), NULL), "row 301 out of range")
  # the row check behind the rank from distinct rows
  eq <- function(...) .Call(diffdiff:::C_rows_equal, ...)
  V <- rbind(c(1, 2), c(1, 2), c(3, 4))
  expect_true(eq(V, c(1L, 1L, 3L)))
  expect_false(eq(V, c(1L, 1L, 1L)))
  V[2, 2] <- NA
  expect_false(eq(V, c(1L, 1L, 3L)))
})

test_that("replicate designs: the degrees of freedom (rank of the replicate weights) from the distinct rows equal qr(W)'s", {
  set.seed(21)
  # a panel: each unit's replicate-weight row repeats in every period
  N <- 120; T <- 8; K <- 24
  psu <- rep(seq_len(N) %% K, T)
  w <- rep(runif(N, 1, 3), T)
  W <- outer(psu, seq_len(K) - 1L, "!=") * w * K / (K - 1)
  d <- data.frame(id = rep(seq_len(N), T), w = w)
  des <- survey_design(d, weights = ~w, repweights = W, type = "JK1")
  expect_identical(diffdiff:::dd_reuse$rank_path, "distinct")
  expect_identical(des$degf, qr(W, tol = 1e-5)$rank - 1L)
  # rank-deficient: a replicate repeated, another a combination of two
  W2 <- cbind(W, W[, 3], W[, 1] + W[, 2])
  des2 <- survey_design(d, weights = ~w, repweights = W2, type = "JK1")
  expect_identical(diffdiff:::dd_reuse$rank_path, "distinct")
  expect_identical(des2$degf, qr(W2, tol = 1e-5)$rank - 1L)
  expect_equal(des2$degf, K - 1)
  # distinct rows throughout: W itself
  W3 <- W * runif(nrow(W), 0.9, 1.1)
  des3 <- survey_design(d, weights = ~w, repweights = W3, type = "JK1")
  expect_identical(diffdiff:::dd_reuse$rank_path, "full")
  expect_identical(des3$degf, qr(W3, tol = 1e-5)$rank - 1L)
  # and as survey computes it
  need_peer("survey")
  sv <- survey::svrepdesign(data = d, repweights = W, weights = ~w, type = "JK1", combined.weights = TRUE,
                            scale = (K - 1) / K)
  expect_identical(des$degf, as.integer(survey::degf(sv)))
})
