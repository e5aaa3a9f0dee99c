#' Decomposition of the TWFE coefficient into ATT(g,t) weights
#'
#' Writes the coefficient of the two-way fixed-effects regression
#' `y ~ D (+ x) | unit + period` of a staggered, absorbing treatment as a
#' weighted sum of group-time cell effects, over every cell of every treated
#' cohort (pre-treatment cells included), with the never-treated units as
#' the comparison, as Callaway's twfeweights package does (`twfe_weights()`
#' and, with covariates, `implicit_twfe_weights()`). The weights on the
#' post-treatment cells (`t >= g`) sum to 1 and those of each cohort sum to
#' 0 over its periods, so the pre-treatment cells, whose effects are
#' pre-trends, carry weights summing to -1: their weighted sum (`pre`) is
#' the "contamination" of the coefficient by pre-trends (twfeweights'
#' `pt_violations_bias`), and `post` is what is left. Late periods of early
#' cohorts can get negative post-treatment weights.
#'
#' Without covariates, the weight of cell (g,t) is the cohort's share of
#' the units times the two-way demeaned treatment of the cell, normalised
#' (the sums below are over all units and periods, with the sampling weights
#' when given): `w(g,t) = sum over cohort g at t of r / sum(r D)`, where `r`
#' is the treatment residualised on the unit and period fixed effects; the
#' cell effect is [did_cs()]'s universal-base ATT(g,t) against the never
#' treated (`control_group = "nevertreated"`, `base_period = "universal"`),
#' so that `sum(w * ATT) = beta`. The fit also reports the aggregations of
#' the same ATT(g,t) that a heterogeneity-robust analysis would report
#' instead: did's ATT^O (`aggregate(cs, "group")`, the cohort-share
#' weighted mean of each cohort's average post-treatment effect) and the
#' simple average (`aggregate(cs, "simple")`), with their weights on each
#' cell, so that the plot and table show how TWFE reweights the same cells.
#'
#' With covariates (`xformla`, time-varying: a time-invariant covariate is
#' absorbed by the unit effects), `r` is also residualised on the demeaned
#' covariates (Frisch-Waugh-Lovell), the weight keeps the same form, and
#' the cell effect becomes the implicit regression contrast
#' `E(omega1 dY | G = g, t) - E(omega0 dY | G = 0, t)`, with the implicit
#' unit weights `omega = r / mean(r)` within cohort g and within the never
#' treated at period t (mean 1 in each), and `dY` the change in the outcome
#' from the base period. With `base_period = "universal"` (the period
#' before g) a remainder term is left over (`remainder`), which is 0 with
#' `"first_period"` and without covariates. The effective sample size of
#' each cell's comparison, `(sum omega0)^2 / sum(omega0^2)` over the never
#' treated (twfeweights' `ess`, which leaves the sampling weights out; the
#' number of never-treated units without covariates), measures how unevenly
#' the regression weights them. Each cell's remainder term is reported
#' before weighting; with `"first_period"` their weighted sum is 0 although
#' the cells' terms are not (twfeweights stores 0 for each cell there).
#' Balance tables of extra covariates and the AIPW weights of twfeweights
#' are not computed.
#'
#' Sampling weights (`weightsname`) enter the regression, the cell means
#' and the cohort shares, and the identity holds with them (the tests
#' compare with weighted `lm()`); twfeweights' `twfe_weights()` and
#' `attO_weights()` ignore the sampling weights of the `att_gt()` fit they
#' take (their test of it is skipped upstream as a known issue), so the two
#' differ on weighted data without covariates.
#'
#' Periods are used by their position (1..T), whatever their spacing.
#' twfeweights' `twfe_weights()` and `attO_weights()` use the raw period
#' values in `T - g + 1`, so their weights do not reproduce the coefficient
#' when periods are not 1 apart (periods 2, 4, 6, 8); here the weights come
#' from the regression's own residualised treatment, and periods 2000,
#' 2002, ... give the same numbers as 1, 2, ... (the tests check this).
#'
#' Related decompositions: [bacon_decomp()] splits the same coefficient
#' into 2x2 comparisons of timing groups (Goodman-Bacon), and
#' [twfe_weights()] gives the de Chaisemartin-D'Haultfoeuille weights on the
#' treated cells' effects, whose post-treatment weights equal `weight` here
#' (they use untreated-outcome levels, not differences against the never
#' treated, so they have no pre-treatment cells).
#'
#' @param data A data frame: a balanced panel.
#' @param yname Outcome column.
#' @param idname Unit column.
#' @param tname Period column (numeric; any spacing).
#' @param gname First treated period of each unit: 0, `Inf` or `NA` mean
#'   never treated; see section "Cohort coding". Give `gname` or `dname`.
#'   Units treated in the first period (always treated) are an error: the
#'   decomposition compares every cohort with the never treated, and such
#'   units have no pre-treatment period (drop them, as [did_cs()] does).
#' @param xformla One-sided formula of time-varying covariates of the
#'   regression (`~ x1 + x2`), or `NULL` (default).
#' @param weightsname Sampling-weight column, constant within units
#'   (weighted regression, weighted cell means and cohort shares).
#' @param base_period The base period of the cell contrasts: `"universal"`
#'   (default; the period before the cohort's first treated period, as
#'   did's `base_period = "universal"`; twfeweights' `"gmin1"`, also
#'   accepted and recorded as `"universal"`) or `"first_period"` (the first
#'   period of the panel, twfeweights' default in `implicit_twfe_weights()`).
#'   The weights and the total do not depend on it; the cell effects and the
#'   pre/post split do.
#' @param dname Binary absorbing treatment column, the alternative to `gname`.
#' @return An object of class `twfe_decomp`: `cells` (one row per cell of a
#'   treated cohort: `group`, `time`, `event` (t - g counted in periods of
#'   the panel) and `position` (the period's position 1..T), `post` (t >= g), `weight`, `att` (the cell effect),
#'   `contribution` (`weight * att`), `weight_O` and `weight_simple` (the
#'   weights of ATT^O and of the simple average, 0 on pre cells), and with
#'   covariates `remainder` (the cell's remainder term, before weighting) and
#'   `ess`, else `ess` alone); `beta` (the regression coefficient),
#'   `decomposition` (the sum of the contributions), `post`, `pre`,
#'   `remainder` (`beta = post + pre + remainder`), `att_O`, `att_simple`
#'   (the [did_cs()] aggregations, with `std.error`s in `comparisons`;
#'   `NA` with covariates, where twfeweights has no such comparison),
#'   `cs` (the [did_cs()] fit, `NULL` with covariates), the settings and
#'   the call. `print()`, `summary()`, `tidy()`, `glance()`,
#'   `as.data.frame()`, `plot()` and `autoplot()` work on it.
#' @references Callaway, B. and Sant'Anna, P. H. C. (2021). Difference-in-
#'   differences with multiple time periods. Journal of Econometrics 225(2).
#'   Callaway, B., twfeweights R package (GitHub bcallaway11/twfeweights,
#'   version 0.9.0).
#' @seealso [bacon_decomp()], [twfe_weights()], [did_twfe()], [did_cs()].
#' @examples
#' d <- read.csv(system.file("extdata", "castle.csv", package = "diffdiff"))
#' dec <- twfe_decomp(d, "l_homicide", "sid", "year", "effyear")
#' dec
#' head(tidy(dec))
#' plot(dec)
#' @inheritSection diffdiff-package Cohort coding
#' @export
twfe_decomp <- function(data, yname, idname, tname, gname = NULL, xformla = NULL, weightsname = NULL,
                        base_period = c("universal", "first_period"), dname = NULL) {
  call <- match.call()
  dd_required(c("data", "yname", "idname", "tname"))
  dd_check_data(data)
  base_period <- dd_match_arg(sub("^gmin1$", "universal", base_period[1]), c("universal", "first_period"),
                              "base_period")
  if (is.null(dname) == is.null(gname))
    dd_stop("give exactly one of `gname` (first treated period) and `dname` (a 0/1 treatment column); got %s.",
            if (is.null(gname)) "neither" else "both")
  role <- if (!is.null(dname)) c(dname = dname) else c(gname = gname)
  p <- dd_panel(data, yname, idname, tname, role, xformla, weightsname, complete = "twfe_decomp()", sorted = TRUE)
  N <- p$n_units; T <- p$n_periods
  first <- dd_first_rows(p$idc)
  tlist <- sort(unique(as.double(p$tt)))
  tt <- as.double(p$tt)
  if (!is.null(dname)) {
    d <- dd_check_numeric_col(p$vals$dname, "dname", dname)
    dd_check_binary(d, "dname", dname)
    ft <- dd_first_treated(d, p$idc, tt, N)
    dd_check_absorbing(ft, dname, p$id, tt, p$idc,
                       "twfe_decomp() needs an absorbing treatment (once 1, always 1 for the unit).")
    gu <- ft$first
    gu[is.infinite(gu)] <- 0
  } else gu <- p$g[first]
  g <- gu[p$idc + 1L]
  arg <- names(role); col <- role[[1]]
  early <- which(gu != 0 & gu <= tlist[1])
  if (length(early))
    dd_stop("`%s` = \"%s\": unit %s is treated from the first period (%s) on (%d always-treated unit(s)); the decomposition compares each cohort with the never treated from a pre-treatment period, so drop the always-treated units (did_cs() drops them too).",
            arg, col, dd_show(p$id[first][early[1]]), format(tlist[1]), length(early))
  if (!any(gu == 0))
    dd_stop("`%s` = \"%s\" has no never-treated unit (0, Inf or NA, or first treated after the last period %s); the decomposition needs them as the comparison group.",
            arg, col, format(tlist[T]))
  if (all(gu == 0)) dd_stop("`%s` = \"%s\": no unit is treated in the panel; there is nothing to decompose.", arg, col)
  w <- p$w
  if (!is.null(w)) dd_check_constant_within(w, p$id, "weightsname", weightsname, code = p$idc)
  D <- as.double(g != 0 & tt >= g)
  X <- if (is.null(p$X) || !ncol(p$X)) NULL else p$X
  opts <- dd_fe_opts()
  fe <- list(p$idc, p$tc)
  wr <- if (is.null(w)) rep(1, length(D)) else w
  r <- tryCatch(dd_tw_resid(D, X, fe, wr, opts), error = function(e) {
    if (!grepl("collinear", conditionMessage(e))) stop(e)
    dd_stop("`xformla` = %s: %s Time-invariant covariates are absorbed by the unit effects; interact them with the period to use them.",
            dd_show(xformla), conditionMessage(e))
  })
  if (max(abs(r)) <= 1e-10)
    dd_stop("the treatment from `%s` = \"%s\" is collinear with the unit and period fixed effects%s: the regression has no coefficient to decompose.",
            arg, col, if (is.null(X)) "" else " and the covariates")
  beta <- dd_tw_beta(p$y, D, X, fe, wr, opts)
  pos <- p$tc + 1L                                # period positions 1..T (sorted codes)
  cells <- dd_twd_cells(p$y, r, wr, p$idc, pos, gu, tlist, base_period)
  cs <- NULL; att_O <- att_simple <- NA_real_; comp_se <- c(NA_real_, NA_real_)
  if (is.null(X)) {
    # the cell effects are did_cs's universal-base ATT(g,t) (never-treated
    # comparison), on the rows of the panel
    cd <- data.frame(y = p$y, id = p$idc, t = tt, g = g)
    if (!is.null(w)) cd$w <- w
    cs <- did_cs(cd, "y", "id", "t", "g", control_group = "nevertreated", base_period = "universal",
                 weightsname = if (is.null(w)) NULL else "w", nboot = 0, cband = FALSE)
    ct <- cs$coeftable
    att <- ct$estimate[match(paste(cells$group, cells$time), paste(ct$group, ct$time))]
    if (base_period == "first_period")         # Y_t - Y_1 contrasts: ATT(g,t) - ATT(g,t_1)
      att <- att - stats::ave(ifelse(cells$position == 1L, att, 0), cells$group, FUN = sum)
    cells$att <- att
    agO <- aggregate(cs, "group"); ags <- aggregate(cs, "simple")
    att_O <- agO$coefficients[["ATT"]]; att_simple <- ags$coefficients[["ATT"]]
    comp_se <- c(agO$coeftable$std.error[agO$coeftable$term == "ATT"],
                 ags$coeftable$std.error[ags$coeftable$term == "ATT"])
    cells$remainder <- NULL
    cells$contribution <- cells$weight * cells$att
  }
  # the comparison aggregations' weights: cohort shares among the treated
  # (sampling-weighted), over the cohort's post periods (ATT^O) or over all
  # post cells (simple)
  wu <- if (is.null(w)) rep(1, N) else w[first]
  tg <- sort(unique(gu[gu != 0]))
  pig <- vapply(tg, function(v) sum(wu[gu == v]), 0) / sum(wu[gu != 0])
  k <- match(cells$group, tg)
  npost <- T - match(cells$group, tlist) + 1L
  cells$weight_O <- ifelse(cells$post, pig[k] / npost, 0)
  cells$weight_simple <- ifelse(cells$post, pig[k], 0)
  cells$weight_simple <- cells$weight_simple / sum(cells$weight_simple)
  post <- sum(cells$contribution[cells$post]); pre <- sum(cells$contribution[!cells$post])
  remainder <- if (is.null(cells$remainder)) 0 else sum(cells$weight * cells$remainder)
  comparisons <- data.frame(estimand = c("TWFE coefficient", "ATT^O (did group aggregation)", "ATT (simple)"),
                            estimate = c(beta, att_O, att_simple), std.error = c(NA_real_, comp_se),
                            stringsAsFactors = FALSE)
  structure(list(cells = cells, beta = beta, decomposition = post + pre, post = post, pre = pre,
                 remainder = remainder, att_O = att_O, att_simple = att_simple, comparisons = comparisons,
                 cs = cs, base_period = base_period, covariates = !is.null(X), xformla = xformla,
                 weightsname = weightsname, yname = yname, names = c(idname, tname, col), periods = tlist,
                 n_units = N, n_periods = T, n_never = sum(gu == 0), call = call),
            class = "twfe_decomp")
}

# The cells of the decomposition from the residualised treatment r: for
# each treated cohort g and every period position t, the weight
# lambda(g,t) = sum_{i in g} w r_it / sum(w r D), and the implicit
# regression contrast of the cell against the never treated,
# E(omega1 dY | g, t) - E(omega0 dY | 0, t), omega = r / (its weighted mean
# in the cohort at t), dY = Y_t - Y_base (base: position 1, or the position
# before g), with the remainder -E(omega0 Y_base | 0, t) and the comparison's
# effective sample size (sum omega0)^2 / sum(omega0^2). Without covariates r
# is constant within cells, omega = 1 and the contrast is the cell's
# universal-base ATT(g,t) (the tests compare it with did_cs()). Rows in any
# order; gu: each unit's cohort (0: never treated), by unit code.
dd_twd_cells <- function(y, r, w, idc, pos, gu, tlist, base_period) {
  N <- length(gu); T <- length(tlist)
  wide <- function(v) { m <- matrix(NA_real_, N, T); m[cbind(idc + 1L, pos)] <- v; m }
  Y <- wide(y); R <- wide(r); wu <- wide(w)[, 1]
  n0 <- gu == 0
  tg <- sort(unique(gu[!n0]))
  K <- length(tg)
  gp <- match(tg, tlist)                            # the cohorts' first treated positions
  bk <- if (base_period == "universal") gp - 1L else rep(1L, K)
  # never treated: per period t, sums of w r, w r Y_t and (matrix B[t, b]) w r_t Y_b
  WR0 <- wu[n0] * R[n0, , drop = FALSE]
  S0 <- colSums(WR0); A0 <- colSums(WR0 * Y[n0, , drop = FALSE]); B <- crossprod(WR0, Y[n0, , drop = FALSE])
  ess <- colSums(R[n0, , drop = FALSE])^2 / colSums(R[n0, , drop = FALSE]^2)
  # treated cohorts: per cohort and period, sums of w r, w r Y_t and w r Y_base
  kc <- match(gu[!n0], tg)
  WR1 <- wu[!n0] * R[!n0, , drop = FALSE]
  Yb <- Y[!n0, , drop = FALSE][cbind(seq_along(kc), bk[kc])]
  S1 <- rowsum(WR1, kc, reorder = TRUE); A1 <- rowsum(WR1 * Y[!n0, , drop = FALSE], kc, reorder = TRUE)
  C1 <- rowsum(WR1 * Yb, kc, reorder = TRUE)
  post <- outer(gp, seq_len(T), "<=")
  den <- sum(S1[post])
  B0 <- t(B[, bk, drop = FALSE])                    # K x T: B[t, b_k]
  e0 <- (matrix(A0, K, T, byrow = TRUE) - B0) / matrix(S0, K, T, byrow = TRUE)
  e1 <- (A1 - C1) / S1
  e1[abs(S1) <= 1e-14 * max(abs(S1))] <- NA_real_   # no implicit weights in the cell
  tr <- function(m) as.vector(t(m))                 # cohort-major, then period
  data.frame(group = rep(tg, each = T), time = rep(tlist, K), event = tr(outer(-gp, seq_len(T), "+")),
             position = rep(seq_len(T), K), post = tr(post), weight = tr(S1 / den), att = tr(e1 - e0),
             contribution = tr((A1 - C1 - S1 * e0) / den),
             remainder = tr(-B0 / matrix(S0, K, T, byrow = TRUE)), ess = rep(ess, K))
}

#' @rdname twfe_decomp
#' @param x,object A `twfe_decomp` object.
#' @param ... `plot()`: passed to [graphics::plot.default()]; the other
#'   methods: not used (an error if given; `tidy()` and `glance()` follow
#'   broom's contract).
#' @export
print.twfe_decomp <- function(x, ...) {
  dd_check_dots(list(...), "print()")
  cat(sprintf("Decomposition of the TWFE coefficient into ATT(g,t) weights (%s; %s)\n", x$yname,
              if (x$covariates) sprintf("covariates %s", dd_show(x$xformla)) else "no covariates"))
  cat(sprintf("%d units x %d periods; %d treated cohorts, %d never-treated units; base period: %s\n",
              x$n_units, x$n_periods, length(unique(x$cells$group)), x$n_never,
              if (x$base_period == "universal") "universal (g - 1)" else "first period"))
  cat(sprintf("TWFE coefficient %.6g = post-treatment cells %.6g + pre-treatment cells %.6g%s\n\n", x$beta,
              x$post, x$pre, if (x$covariates) sprintf(" + remainder %.6g", x$remainder) else ""))
  print(summary(x)$split, row.names = FALSE, digits = 4)
  if (!x$covariates) {
    cat("\nThe same ATT(g,t) aggregated without the TWFE weights:\n")
    print(x$comparisons, row.names = FALSE, digits = 4)
  }
  invisible(x)
}

#' @rdname twfe_decomp
#' @export
summary.twfe_decomp <- function(object, ...) {
  dd_check_dots(list(...), "summary()")
  cl <- object$cells
  part <- function(s) c(sum(s), sum(cl$weight[s]), sum(s & cl$weight < 0), sum(cl$contribution[s]))
  sp <- rbind(part(cl$post), part(!cl$post))
  split <- data.frame(cells = c("post (t >= g)", "pre (t < g)"), n = sp[, 1], sum_weights = sp[, 2],
                      n_negative = sp[, 3], contribution = sp[, 4], stringsAsFactors = FALSE)
  if (object$covariates)
    split <- rbind(split, data.frame(cells = "remainder", n = NA, sum_weights = NA, n_negative = NA,
                                     contribution = object$remainder))
  split <- rbind(split, data.frame(cells = "total (TWFE)", n = nrow(cl), sum_weights = sum(cl$weight),
                                   n_negative = sum(cl$weight < 0), contribution = object$beta))
  g <- unique(cl$group)
  by <- function(f) vapply(g, function(v) f(cl[cl$group == v, , drop = FALSE]), 0)
  cohorts <- data.frame(group = g, weight_post = by(function(s) sum(s$weight[s$post])),
                        contribution_post = by(function(s) sum(s$contribution[s$post])),
                        contribution_pre = by(function(s) sum(s$contribution[!s$post])),
                        weight_O = by(function(s) sum(s$weight_O)),
                        mean_post_att = by(function(s) mean(s$att[s$post])),
                        ess_post = by(function(s) sum(s$weight[s$post] * s$ess[s$post]) / sum(s$weight[s$post])))
  structure(list(split = split, cohorts = cohorts, comparisons = object$comparisons),
            class = "summary.twfe_decomp")
}

#' @rdname twfe_decomp
#' @export
print.summary.twfe_decomp <- function(x, ...) {
  dd_check_dots(list(...), "print()")
  cat("Cells by treatment status:\n")
  print(x$split, row.names = FALSE, digits = 4)
  cat("\nBy cohort (weight_O: the cohort's weight in ATT^O; ess_post: the comparison's effective sample size, post-weight mean):\n")
  print(x$cohorts, row.names = FALSE, digits = 4)
  cat("\n")
  print(x$comparisons, row.names = FALSE, digits = 4)
  invisible(x)
}

#' @rdname twfe_decomp
#' @method tidy twfe_decomp
#' @export
tidy.twfe_decomp <- function(x, ...) {
  dd_check_broom_dots(list(...), "tidy()", sys.function())
  cl <- x$cells
  cbind(data.frame(term = sprintf("ATT(%s,%s)", format(cl$group, trim = TRUE), format(cl$time, trim = TRUE)),
                   stringsAsFactors = FALSE),
        cl[, c("group", "time", "event", "post", "weight")], estimate = cl$att,
        cl[, setdiff(names(cl), c("group", "time", "event", "post", "weight", "att", "position"))])
}

#' @rdname twfe_decomp
#' @method glance twfe_decomp
#' @export
glance.twfe_decomp <- function(x, ...) {
  dd_check_broom_dots(list(...), "glance()", sys.function())
  cl <- x$cells
  data.frame(beta_twfe = x$beta, post = x$post, pre = x$pre, remainder = x$remainder, att_O = x$att_O,
             att_simple = x$att_simple, n.cells = nrow(cl), n.negative.post = sum(cl$post & cl$weight < 0),
             ess_post = sum(cl$weight[cl$post] * cl$ess[cl$post]), base_period = x$base_period,
             n.units = x$n_units, n.periods = x$n_periods, stringsAsFactors = FALSE)
}

#' @rdname twfe_decomp
#' @param row.names,optional Ignored (for the generic).
#' @export
as.data.frame.twfe_decomp <- function(x, row.names = NULL, optional = FALSE, ...)
  dd_as_df(x$cells, row.names, list(...))

#' @rdname twfe_decomp
#' @param legend,legend_pos For `plot()`: draw the legend (default `TRUE`),
#'   and where: `"auto"` (default: the emptiest corner) or a keyword of
#'   [graphics::legend()].
#' @param main,xlab,ylab For `plot()`: title and axis labels.
#' @export
plot.twfe_decomp <- function(x, legend = TRUE, legend_pos = "auto", main = NULL,
                             xlab = "Weight in the TWFE coefficient", ylab = NULL, ...) {
  legend <- dd_check_flag(legend, "legend")
  cl <- x$cells[!is.na(x$cells$att), , drop = FALSE]
  col <- ifelse(cl$post, "#C0392B", "#1B6CA8"); pch <- ifelse(cl$post, 16, 1)
  if (is.null(main))
    main <- sprintf("TWFE %.4g = post %.4g + pre %.4g%s", x$beta, x$post, x$pre,
                    if (x$covariates) sprintf(" + remainder %.2g", x$remainder) else "")
  if (is.null(ylab)) ylab <- if (x$covariates) "Cell contrast (implicit regression weights)"
                             else sprintf("ATT(g,t), %s base period", x$base_period)
  op <- graphics::par(mar = c(4.2, 4.2, 3, 1), las = 1)
  on.exit(graphics::par(op))
  graphics::plot.default(cl$weight, cl$att, col = col, pch = pch, cex = 1.3, xlab = xlab, ylab = ylab, main = main, ...)
  graphics::abline(h = 0, v = 0, col = "grey50")
  if (legend)
    graphics::legend(dd_legend_pos(legend_pos, cl$weight, cl$att, graphics::par("usr")[1:2], graphics::par("usr")[3:4]),
                     legend = c("post-treatment cell (t >= g)", "pre-treatment cell (t < g)"),
                     col = c("#C0392B", "#1B6CA8"), pch = c(16, 1), bty = "n", cex = 0.85)
  invisible(x)
}
