#' Heterogeneous adoption designs: effects identified near zero dose
#'
#' The estimators of de Chaisemartin, D'Haultfoeuille, Pasquier, Sow and
#' Vazquez-Bare for designs in which every group is untreated up to a common
#' date `F` and then receives a dose that varies across groups, with no (or
#' few) groups staying untreated: the effect `l` periods after adoption is
#' the average slope `(mean(dY) - E[dY | D = 0]) / mean(D)`, where
#' `dY = Y[F - 1 + l] - Y[F - 1]`, `D` is the dose at `F - 1 + l`, and the
#' outcome change of (quasi-)untreated groups, `E[dY | D = 0]`, is the
#' intercept of a local-linear regression of `dY` on `D` at the boundary
#' `D = 0`, as DIDHAD's `did_had()`: nprobust's `lprobust()` with an
#' MSE-optimal bandwidth and robust bias-corrected inference (Calonico,
#' Cattaneo and Farrell), in the package's own C code.
#'
#' Effect `l` (`event::<l - 1>`) compares period `F - 1 + l` with `F - 1`;
#' placebo `l` (`event::<-l - 1>`) compares `F - 1 - l` with `F - 1` (with the
#' same doses as effect `l`), so the reference period is `F - 1` (event time
#' -1). The standard error is the robust bias-corrected one of the intercept
#' divided by `mean(D)` (the sampling noise of the two means converges faster
#' than the local-linear intercept's and is ignored, as in the paper). The
#' confidence interval, the z statistic and the p-value are centred on the
#' bias-corrected estimate (`estimate_bc` in the table), so the conventional
#' `estimate` may lie outside its interval; `confint()`, `tidy()` and the
#' plots use the same intervals, and `honest_did()`/`pretrends_power()` read
#' the bias-corrected estimates.
#'
#' With `trends_lin = TRUE` each group's change between `F - 2` and `F - 1`
#' is its linear trend, removed from the effects (times `l`) and from the
#' placebos, which then compare `F - 2 - l` with `F - 2`. With
#' `dynamic = TRUE` effect `l` is divided by the mean cumulative dose over
#' the first `l` periods of treatment instead of the mean current dose.
#'
#' Pre-tests: for each effect, the quasi-untreated-group (QUG) test of the
#' null that the doses' support reaches 0, `T = d(1) / (d(2) - d(1))` with
#' the two smallest positive doses and `P(T > t) = 1 / (1 + t)` (a small
#' p-value says no group is close to untreated and the intercept is an
#' extrapolation; did_had warns when it rejects at level `alpha`); with
#' `yatchew = TRUE`, Yatchew's heteroskedasticity-robust test that
#' `E[dY | D]` is linear in `D` for the effects (the effects are then the
#' same for every dose) and constant for the placebos (parallel pre-trends
#' at every dose), as YatchewTest; with `stute = TRUE`, Stute's test of the
#' same hypotheses (a Cramer-von Mises statistic on the cumulated residuals
#' with a wild bootstrap, as StuteTest), per horizon and jointly over the
#' effects and over the placebos (the sum of the statistics, each group
#' keeping its bootstrap multiplier across horizons). The tests are in
#' `fit$tests` (`fit$stute_joint`) and printed under the table.
#'
#' @section Correspondence with DIDHAD:
#' `yname`, `idname`, `tname`, `dname` are its `outcome`, `group`, `time`,
#' `treatment`; `effects`, `placebo`, `kernel`, `trends_lin`, `dynamic`,
#' `yatchew` have its names and meaning; `bwselect` is `bw_method`; `alpha`
#' is `level`. Estimates, standard errors, intervals, bandwidths (`bw`),
#' `n_bw` (groups with dose at most the bandwidth), the QUG test and the
#' Yatchew tests equal DIDHAD 2.0.0 (with nprobust 1.0.0 and YatchewTest
#' 1.1.1) to about 1e-12 in the tests. DIDHAD has no Stute test; the
#' statistics equal StuteTest 1.0.2's (`stute_test()` on each horizon's
#' changes and doses) and so do the p-values given the same uniforms (the
#' draws come from R's RNG, one row per group; StuteTest's panel mode
#' assigns multipliers by rank in each period's sorted doses rather than by
#' group, which ignores the dependence of one group's changes across
#' horizons in its joint test). Differences: `n` is the number of
#' groups in the horizon's sample (DIDHAD reports the largest group number
#' present); DIDHAD offers no covariance between horizons, the multiplier
#' bootstrap, uniform bands, nor p-values, which come here from each
#' horizon's influence function on the groups (the terms of the robust
#' variance, summed across horizons for each group). `bw_method = "ce-dpi"`
#' is not available (`"ce-rot"` is). Periods are taken in order: like
#' DIDHAD, gaps in calendar time are ignored, and rows with a missing
#' outcome or dose are dropped before the periods are counted. did_had
#' stops where DIDHAD would return numbers on data outside its design:
#' groups that adopt at different dates, a nonzero dose before adoption,
#' negative doses, a dose that falls back to 0 after being positive (DIDHAD
#' counts the group as untreated at those horizons; the error has
#' [did_check()]'s code `TREATMENT_REVERSIBLE`).
#'
#' @param data A data.frame (or data.table, tibble) in long format.
#' @param yname,idname,tname,dname Outcome, group, period and dose columns.
#'   The dose is 0 for every group up to the common adoption period.
#' @param effects Number of effects (periods from adoption on); reduced with
#'   a note to what the data allow.
#' @param placebo Number of placebo estimates (pre-adoption periods); reduced
#'   with a note to what the data allow (at most `effects`).
#' @param kernel `"epa"` (Epanechnikov, default), `"tri"`, `"uni"` or `"gau"`.
#' @param bwselect Bandwidth rule: `"mse-dpi"` (default), `"imse-dpi"`,
#'   `"ce-rot"`, `"mse-rot"`, `"imse-rot"` (nprobust's).
#' @param trends_lin Group-specific linear trends (needs `F >= 3`).
#' @param dynamic Divide effect `l` by the mean cumulative dose.
#' @param yatchew Add Yatchew's linearity tests.
#' @param stute Add Stute's linearity tests (wild bootstrap from R's RNG:
#'   reproducible under `set.seed()`).
#' @param stute_nboot Bootstrap draws of the Stute tests. They are made and
#'   used a block at a time in C (memory grows with the number of groups plus
#'   the number of draws, not with their product; Ctrl-C stops the loop).
#' @param alpha Significance level of the intervals and the QUG warning.
#' @param nboot,boot_weights,cband Multiplier bootstrap of the influence
#'   functions (0: analytic) and a uniform band over the event times
#'   (`cband = TRUE` needs `nboot > 0`; an error otherwise).
#' @param ... `dose`, [did_dose()]'s name for the dose column (= `dname`);
#'   DIDHAD's spellings: `df`, `outcome`, `group`, `time`, `treatment`,
#'   `level`, `bw_method` (and `graph_off`, which only silences DIDHAD's
#'   graph and changes no number), so that a call written for DIDHAD runs
#'   unchanged.
#' @return A fit of class `c("did_had", "dd_fit")`, the class of DIDHAD's
#'   own results: with both packages loaded, in either order, `print()` and
#'   `summary()` show this fit as diffdiff's and a DIDHAD result as DIDHAD's.
#'   The table has
#'   `event`, `n`, `bw`, `n_bw` and `estimate_bc`; `fit$tests` holds the
#'   QUG and Yatchew tests, `fit$adoption` the adoption period and
#'   `fit$n_stayers` the number of groups never treated.
#' @references de Chaisemartin, C., D'Haultfoeuille, X., Pasquier, F., Sow,
#'   D. and Vazquez-Bare, G. (2024). Difference-in-differences for
#'   continuous treatments and instruments with stayers.
#' @examples
#' # 300 groups, 6 periods, adoption in period 4 with doses from 0 up
#' set.seed(1)
#' G <- 300
#' dose <- rexp(G, 2)
#' d <- expand.grid(t = 1:6, g = 1:G)
#' d$dose <- ifelse(d$t >= 4, dose[d$g], 0)
#' d$y <- rnorm(G)[d$g] + 0.2 * d$t + d$dose * (1 + 0.5 * dose[d$g]) + rnorm(nrow(d))
#' fit <- did_had(d, yname = "y", idname = "g", tname = "t", dname = "dose",
#'                effects = 3, placebo = 2, yatchew = TRUE, stute = TRUE)
#' fit
#' plot(fit)
#' @export
did_had <- function(data, yname, idname, tname, dname, effects = 1, placebo = 0,
                    kernel = c("epa", "tri", "uni", "gau"),
                    bwselect = c("mse-dpi", "imse-dpi", "ce-rot", "mse-rot", "imse-rot"),
                    trends_lin = FALSE, dynamic = FALSE, yatchew = FALSE, stute = FALSE, stute_nboot = 500,
                    alpha = 0.05, nboot = 0, boot_weights = c("rademacher", "mammen", "webb"), cband = FALSE,
                    ...) {
  call <- match.call()
  # DIDHAD's spellings: a did_had() call written for DIDHAD runs unchanged
  a <- dd_did_aliases(list(...), c("df", "outcome", "group", "time", "treatment", "level", "bw_method", "graph_off",
                                   "dose"), "did_had")
  # did_dose()'s name for the dose column
  if (!is.null(a$dose)) {
    if (!missing(dname)) dd_stop("`dose` and `dname` name the same column (the dose); give one.")
    dname <- a$dose
  }
  if (!is.null(a$df)) data <- a$df
  if (!is.null(a$outcome)) yname <- a$outcome
  if (!is.null(a$group)) idname <- a$group
  if (!is.null(a$time)) tname <- a$time
  if (!is.null(a$treatment)) dname <- a$treatment
  if (!is.null(a$level)) alpha <- a$level
  if (!is.null(a$bw_method)) bwselect <- a$bw_method
  dd_required(c("data", "yname", "idname", "tname", "dname"), labels = c(dname = "the dose column"))
  dd_check_data(data)
  sp <- dd_spec(alpha = alpha, nboot = nboot, boot_weights = boot_weights, cband = cband, effects = effects,
                placebo = placebo)
  effects <- sp$effects; placebo <- sp$placebo
  kernel <- dd_match_arg(if (identical(kernel, eval(formals()$kernel))) "epa" else tolower(kernel),
                         c("epa", "tri", "uni", "gau"), "kernel")
  if (identical(bwselect, "ce-dpi"))
    dd_stop("`bwselect` = \"ce-dpi\" is not available; use \"ce-rot\" (coverage-error rule of thumb) or \"mse-dpi\".")
  bwselect <- dd_match_arg(if (identical(bwselect, eval(formals()$bwselect))) "mse-dpi" else tolower(bwselect),
                           c("mse-dpi", "imse-dpi", "ce-rot", "mse-rot", "imse-rot"), "bwselect")
  dd_check_flag(trends_lin, "trends_lin"); dd_check_flag(dynamic, "dynamic"); dd_check_flag(yatchew, "yatchew")
  dd_check_flag(stute, "stute")
  stute_nboot <- dd_check_count(stute_nboot, "stute_nboot", min = 1)
  p <- dd_panel(data, yname, idname, tname, c(dname = dname))
  d <- dd_check_numeric_col(p$vals$dname, "dname", dname)
  if (any(d < 0))
    dd_stop("`dname` = \"%s\" has negative doses (%s); the heterogeneous-adoption design needs doses >= 0.",
            dname, dd_show(unique(d[d < 0])))
  # groups x periods (periods in order: ranks of the observed periods)
  tl <- sort(unique(p$tt))
  nG <- attr(p$idc, "nlev"); nT <- length(tl)
  gid <- p$id[dd_first_rows(p$idc)]
  idx <- cbind(p$idc + 1L, match(p$tt, tl))
  mat <- function(v) { m <- matrix(NA_real_, nG, nT); m[idx] <- v; m }
  Y <- mat(p$y); D <- mat(d)
  a <- dd_had_adoption(D, gid, tl, dname, idname, tname)
  F <- a$F
  dd_had_check_stays(D, gid, tl, dname, idname, tname)
  notes <- character()
  if (a$n_stayers) notes <- c(notes, sprintf("%d group(s) untreated throughout (stayers) are included.", a$n_stayers))
  if (trends_lin && F < 3L)
    dd_stop("`trends_lin` = TRUE needs two periods before adoption; treatment starts in the second period (%s = %s).",
            tname, format(tl[F]))
  l_max <- nT - F + 1L
  pl_max <- F - 2L - trends_lin
  if (effects > l_max) {
    notes <- c(notes, sprintf("%d effect(s) requested; the data allow %d.", effects, l_max))
    effects <- l_max
  }
  if (placebo > min(pl_max, effects)) {
    notes <- c(notes, sprintf("%d placebo(s) requested; the data and `effects` allow %d.", placebo,
                              min(pl_max, effects)))
    placebo <- min(pl_max, effects)
  }
  trend <- if (trends_lin) Y[, F - 1L] - Y[, F - 2L] else 0
  hz <- c(seq_len(effects), -seq_len(placebo))
  Ui <- matrix(0, nG, length(hz))
  rows <- vector("list", length(hz))
  tests <- list()
  # Stute tests: the bootstrap's uniforms are nG x stute_nboot, one row per
  # group (rows in the order of the group identifiers), so that a group keeps
  # its multipliers across horizons; drawn after the loop, in blocks, by the
  # kernel (nothing in the loop draws random numbers)
  if (stute) {
    urow <- match(seq_len(nG), order(gid, method = "radix"))
    sfits <- srows <- vector("list", length(hz))
  }
  qug_warn <- numeric()                              # QUG p-values of effects without zero doses
  for (k in seq_along(hz)) {
    l <- abs(hz[k]); pl <- hz[k] < 0
    dy <- if (!pl) Y[, F - 1L + l] - Y[, F - 1L] - l * trend
          else if (trends_lin) Y[, F - 2L - l] - Y[, F - 2L] + l * trend
          else Y[, F - 1L - l] - Y[, F - 1L]
    x <- D[, F - 1L + l]
    den <- if (dynamic) rowSums(D[, F:(F - 1L + l), drop = FALSE]) else x
    s <- which(!is.na(dy) & !is.na(x))
    what <- sprintf("%s %d (%s = %s vs %s)", if (pl) "placebo" else "effect", l, tname,
                    format(tl[if (pl) F - 1L - l - trends_lin else F - 1L + l]),
                    format(tl[F - 1L - (pl && trends_lin)]))
    r <- dd_had_horizon(dy[s], x[s], den[s], kernel, bwselect, what, dname)
    Ui[s, k] <- r$psi
    rows[[k]] <- r$row
    qug <- if (pl) c(statistic = NA_real_, p.value = NA_real_) else dd_qug(x[s])
    if (!pl && !any(x[s] == 0)) qug_warn <- c(qug_warn, stats::setNames(qug[[2]], l))
    tests[[k]] <- data.frame(term = NA_character_, qug_statistic = qug[[1]], qug_p.value = qug[[2]])
    if (yatchew) {
      yt <- dd_yatchew(dy[s], x[s], if (pl) 0L else 1L, TRUE)
      tests[[k]] <- cbind(tests[[k]], yatchew_sigma2_lin = yt[[1]], yatchew_sigma2_diff = yt[[2]],
                          yatchew_statistic = yt[[3]], yatchew_p.value = yt[[4]], yatchew_n = yt[[5]])
    }
    if (stute) {
      sfits[[k]] <- dd_stute_fit(dy[s], x[s], if (pl) 0L else 1L)
      srows[[k]] <- urow[s]
      tests[[k]] <- cbind(tests[[k]], stute_statistic = sfits[[k]]$statistic, stute_p.value = NA_real_)
    }
  }
  ev <- hz - 1                                       # effect l: l - 1; placebo l: -l - 1
  terms <- paste0("event::", ev)
  R <- do.call(rbind, rows)
  tests <- do.call(rbind, tests); tests$term <- terms
  # the QUG test where no group has dose 0 (with stayers its null holds)
  rej <- qug_warn[!is.na(qug_warn) & qug_warn < sp$alpha]
  if (length(rej))
    warning(sprintf("did_had(): the quasi-untreated-group test rejects that the doses reach 0 (p = %s at effect(s) %s): no group is close to untreated, and the effects extrapolate the local-linear fit to dose 0.",
                    paste(format(signif(rej, 3)), collapse = ", "), paste(names(rej), collapse = ", ")),
            call. = FALSE)
  stute_joint <- NULL
  if (stute) {
    boot <- dd_stute_boot(sfits, srows, nG, stute_nboot)
    sboot <- list(effects = 0, placebos = 0); sstat <- c(effects = 0, placebos = 0)
    for (k in seq_along(hz)) {
      tests$stute_p.value[k] <- mean(boot[, k] > sfits[[k]]$statistic)
      w <- if (hz[k] < 0) "placebos" else "effects"
      sstat[[w]] <- sstat[[w]] + sfits[[k]]$statistic; sboot[[w]] <- sboot[[w]] + boot[, k]
    }
    w <- c("effects", if (placebo) "placebos")
    stute_joint <- data.frame(horizons = w, statistic = unname(sstat[w]),
                              p.value = vapply(w, function(v) mean(sboot[[v]] > sstat[[v]]), 0), row.names = NULL)
  }
  est <- stats::setNames(R[, "estimate"], terms)
  colnames(Ui) <- terms
  band <- seq_along(terms)
  bt <- dd_if_result(est, Ui, 1, sp, band,
                     sprintf("local-linear robust bias-corrected (%s kernel, %s bandwidth)", kernel, bwselect), NULL)
  tab <- dd_had_centre(bt$tab, R[, "estimate_bc"], bt$crit, sp$alpha)
  tab$event <- ev
  tab$n <- R[, "n"]; tab$bw <- R[, "bw"]; tab$n_bw <- R[, "n_bw"]; tab$estimate_bc <- R[, "estimate_bc"]
  info <- dd_info("did_had", "Heterogeneous adoption design (did_had)", yname, length(p$y),
                  if (sp$nboot > 0L) "bootstrap" else "analytic", bt$label, Inf,
                  sp$alpha, terms, n_units = nG, n_periods = nT, notes = notes)
  new_dd_fit("did_had", tab, est, bt$V, info, call,
             list(event_study = dd_es_spec(reference = -1, estimate = "estimate_bc"), crit = bt$crit,
                  nboot = sp$nboot, boot_weights = sp$boot_weights, cband = sp$cband, tname = tname,
                  inf = Ui, adoption = tl[F], n_stayers = a$n_stayers, kernel = kernel, bwselect = bwselect,
                  tests = tests, stute_joint = stute_joint, stute_nboot = if (stute) stute_nboot,
                  settings = list(trends_lin = trends_lin, dynamic = dynamic)))
}

# The common adoption period: for each group the first period whose dose
# differs from the previous one (both observed); groups that never change are
# stayers. Errors: nothing changes; adoption dates differ; a nonzero dose
# before adoption.
dd_had_adoption <- function(D, gid, tl, dname, idname, tname) {
  nT <- ncol(D)
  chg <- D[, -1, drop = FALSE] != D[, -nT, drop = FALSE]
  chg[is.na(chg)] <- FALSE
  any_chg <- rowSums(chg) > 0
  if (!any(any_chg))
    dd_stop("`dname` = \"%s\" never changes within a group: no group adopts the treatment.", dname)
  Fg <- max.col(chg, ties.method = "first") + 1L
  Fg[!any_chg] <- NA
  Fs <- sort(unique(Fg[any_chg]))
  if (length(Fs) > 1L) {
    ex <- vapply(Fs[1:2], function(f) sprintf("%s %s at %s = %s", idname, dd_show(gid[which(Fg == f)[1]]), tname,
                                              format(tl[f])), "")
    dd_stop("`dname` = \"%s\": the groups do not all start treatment in the same period (%s); did_had() needs one common adoption date. For staggered adoption of a continuous dose use did_dose(); for treatments that change at different dates, did_dcdh().",
            dname, paste(ex, collapse = ", "))
  }
  F <- Fs
  pre <- D[, seq_len(F - 1L), drop = FALSE]
  bad <- which(rowSums(!is.na(pre) & pre != 0) > 0)
  if (length(bad))
    dd_stop("`dname` = \"%s\" is not 0 before adoption (%s = %s) for %d group(s) (e.g. %s %s, dose %s); did_had() needs every group untreated up to the common adoption date.",
            dname, tname, format(tl[F]), length(bad), idname, dd_show(gid[bad[1]]),
            format(pre[bad[1], which(!is.na(pre[bad[1], ]) & pre[bad[1], ] != 0)[1]]))
  # stayers: every observed dose 0 (DIDHAD also counts a group whose dose is
  # missing at adoption and constant afterwards)
  list(F = F, n_stayers = sum(rowSums(!is.na(D) & D != 0) == 0))
}

# The design's treatment stays on: a group whose dose has been positive is
# not at 0 again later (missing doses skipped). DIDHAD takes such a group as
# untreated (a quasi-stayer) at the horizons where its dose is 0 and returns
# numbers; here it is an error naming the group and the two periods, with
# did_check()'s code for a treatment that switches off.
dd_had_check_stays <- function(D, gid, tl, dname, idname, tname) {
  on <- !is.na(D) & D > 0
  was <- on
  if (ncol(D) > 1L) for (j in 2:ncol(D)) was[, j] <- was[, j - 1L] | on[, j]
  off <- !is.na(D) & D == 0 & cbind(FALSE, was[, -ncol(D), drop = FALSE])
  bad <- which(rowSums(off) > 0)
  if (!length(bad)) return(invisible(TRUE))
  g <- bad[1]
  j0 <- which(off[g, ])[1]                           # the first period back at 0
  j1 <- max(which(on[g, seq_len(j0 - 1L)]))         # the last positive dose before it
  dd_stop("`dname` = \"%s\" falls back to 0 after being positive for %d group(s) (e.g. %s %s: dose %s at %s = %s, 0 at %s = %s); the heterogeneous-adoption design needs every group that has received a dose to keep a positive one. For treatments that switch off use did_dcdh().",
          dname, length(bad), idname, dd_show(gid[g]), format(D[g, j1], digits = 4), tname, format(tl[j1]), tname,
          format(tl[j0]), .code = "TREATMENT_REVERSIBLE")
}

# One horizon: the local-linear fit at dose 0 and the estimate
# (mean(dy) - tau.us) / mean(den), its bias-corrected version and robust SE,
# and each group's influence-function term -psi / mean(den).
dd_had_horizon <- function(dy, x, den, kernel, bwselect, what, dname) {
  n <- length(dy)
  nd <- length(unique(x))
  if (n < 3L || nd < 3L)
    dd_stop("%s: %d group(s) with %d distinct dose(s) of `dname` = \"%s\"; the local-linear fit needs at least 3 distinct doses.",
            what, n, nd, dname)
  lp <- dd_lprobust(dy, x, 0, kernel, bwselect = bwselect, psi = TRUE)
  e <- lp$est
  if (!all(is.finite(e[c("h", "tau.us", "tau.bc", "se.rb")])) || !(e[["se.rb"]] > 0))
    dd_stop("%s: the local-linear fit at dose 0 is singular: too few distinct doses of `dname` = \"%s\" near 0, or all far from it (the smallest is %s).",
            what, dname, format(min(x)))
  Dbar <- mean(den, na.rm = TRUE)
  if (!(Dbar > 0))
    dd_stop("%s: the mean dose of `dname` = \"%s\" is 0.", what, dname)
  Ybar <- mean(dy)
  list(row = c(estimate = (Ybar - e[["tau.us"]]) / Dbar, estimate_bc = (Ybar - e[["tau.bc"]]) / Dbar,
               n = n, bw = e[["h"]], n_bw = sum(x <= e[["h"]])),
       psi = -lp$psi / Dbar)
}

# Robust bias-corrected inference: the z statistic, p-value, interval and
# uniform band centred on the bias-corrected estimate
dd_had_centre <- function(tab, bc, crit, alpha) {
  z <- stats::qnorm(1 - alpha / 2)
  tab$statistic <- bc / tab$std.error
  tab$p.value <- 2 * stats::pnorm(-abs(tab$statistic))
  tab$conf.low <- bc - z * tab$std.error
  tab$conf.high <- bc + z * tab$std.error
  if (is.finite(crit)) {
    tab$cband.low <- bc - crit * tab$std.error
    tab$cband.high <- bc + crit * tab$std.error
  }
  tab
}

#' @export
confint.did_had <- function(object, parm, level = 0.95, ...) {
  dd_check_dots(list(...), "confint()")
  out <- NextMethod()
  tab <- object$coeftable[match(rownames(out), object$coeftable$term), , drop = FALSE]
  shift <- tab$estimate_bc - tab$estimate
  out + cbind(shift, shift)
}

dd_footer.did_had <- function(x) {
  dd_footer.default(x)
  cat(sprintf("Adoption at %s = %s; %s kernel, %s bandwidth; intervals and p-values robust bias-corrected%s.\n",
              x$tname, format(x$adoption), x$kernel, x$bwselect,
              if (x$n_stayers) sprintf("; %d stayer(s)", x$n_stayers) else ""))
  t <- x$tests
  m <- cbind(`QUG T` = t$qug_statistic, `QUG p` = t$qug_p.value)
  if (!is.null(t$yatchew_statistic)) m <- cbind(m, `Yatchew T` = t$yatchew_statistic, `Yatchew p` = t$yatchew_p.value)
  if (!is.null(t$stute_statistic)) m <- cbind(m, `Stute S` = t$stute_statistic, `Stute p` = t$stute_p.value)
  rownames(m) <- t$term
  cat("Pre-tests: quasi-untreated group (QUG; H0: the doses reach 0)",
      if (ncol(m) > 2L) sprintf("and %s (H0: linear in the dose; placebos: constant)",
                                paste(c(if (!is.null(t$yatchew_statistic)) "Yatchew",
                                        if (!is.null(t$stute_statistic)) "Stute"), collapse = ", ")), "\n")
  print(signif(m, 4), na.print = "")
  if (!is.null(x$stute_joint))
    cat(sprintf("Joint Stute tests (sum over horizons): %s\n",
                paste(sprintf("%s S = %.4g, p %s", x$stute_joint$horizons, x$stute_joint$statistic,
                              ifelse(x$stute_joint$p.value > 0, sprintf("= %.3g", x$stute_joint$p.value),
                                     sprintf("< %.3g", 1 / x$stute_nboot))), collapse = "; ")))
  invisible(x)
}

# DIDHAD's did_had() returns class "did_had" too, and registers print() and
# summary() methods for it. diffdiff registers these two methods as well:
# for a diffdiff fit they go on to the dd_fit methods, for a DIDHAD result to
# DIDHAD's. They are registered again whenever DIDHAD loads after diffdiff
# (.onLoad), so that the load order does not matter.
#' @export
print.did_had <- function(x, ...) {
  if (inherits(x, "dd_fit")) return(NextMethod())
  dd_didhad_method("print", x)(x, ...)
}

#' @export
summary.did_had <- function(object, ...) {
  if (inherits(object, "dd_fit")) return(NextMethod())
  dd_didhad_method("summary", object)(object, ...)
}

# DIDHAD's method for a DIDHAD result (the default method without DIDHAD)
dd_didhad_method <- function(generic, x) {
  ns <- if (isNamespaceLoaded("DIDHAD") || requireNamespace("DIDHAD", quietly = TRUE)) asNamespace("DIDHAD")
  m <- if (!is.null(ns)) get0(paste0(generic, ".did_had"), envir = ns, inherits = FALSE)
  if (is.function(m)) m else get(paste0(generic, ".default"), envir = baseenv())
}

dd_register_did_had <- function(...) {
  ns <- asNamespace("diffdiff")
  registerS3method("print", "did_had", get("print.did_had", envir = ns), envir = ns)
  registerS3method("summary", "did_had", get("summary.did_had", envir = ns), envir = ns)
}
