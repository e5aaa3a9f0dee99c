#' Goodman-Bacon decomposition of the two-way fixed-effects DiD estimate
#'
#' Splits the TWFE coefficient of a staggered binary treatment (unit and
#' period fixed effects, balanced panel) into the 2x2 DiD estimates between
#' every pair of treatment-timing groups and their weights (Goodman-Bacon
#' 2021, Theorem 1): earlier vs later treated (the later group before it is
#' treated as control), later vs earlier treated (the earlier group, already
#' treated, as control), treated vs never treated, and treated vs always
#' treated. The weighted sum of the 2x2 estimates is the TWFE coefficient.
#' Weights follow the paper's (and bacondecomp's) formulas: squared sample
#' size of the pair times the variance of the treatment in the pair's
#' subsample, normalised to sum to one.
#'
#' @param data A data frame: a balanced panel (the decomposition needs one).
#' @param yname Outcome column.
#' @param idname Unit column.
#' @param tname Period column (numeric).
#' @param gname First treated period of each unit: 0, `Inf` or `NA` mean never
#'   treated; see section "Cohort coding" for the one rule every estimator applies.
#'   Give `gname` or `dname`.
#' @param dname Binary treatment column (0/1, absorbing: once treated a
#'   unit stays treated); the alternative to `gname`. `treatname`, its former
#'   name, is accepted.
#' @param treatname Former name of `dname` (accepted as an alias).
#' @param xformla One-sided formula of time-varying covariates (`~ x1 + x2`):
#'   the controlled decomposition of Goodman-Bacon (2021, Section 5) as
#'   bacondecomp computes it. The TWFE coefficient then splits into a
#'   within-timing-group part (`beta_hat_w`, share `Omega`) and a
#'   between-group part, the weighted sum of one 2x2 comparison per unordered
#'   pair of timing groups (types "Both Treated", "Treated vs Untreated",
#'   "Later vs Always Treated").
#' @return An object of class `bacon_decomp`: `two_by_twos` (data frame with
#'   `treated`, `untreated` (timing groups; `Inf` = never treated),
#'   `estimate`, `weight`, `type`), `beta_twfe` (the weighted sum, equal to
#'   the TWFE coefficient). `summary()` gives the weight and weighted average
#'   estimate by type; `plot()` the estimates against their weights.
#' @references Goodman-Bacon, A. (2021). Difference-in-differences with
#'   variation in treatment timing. Journal of Econometrics 225(2).
#' @seealso [twfe_decomp()] (the same coefficient as a weighted sum of
#'   ATT(g,t), pre-treatment cells included) and [twfe_weights()] (the de
#'   Chaisemartin-D'Haultfoeuille weights).
#' @examples
#' d <- read.csv(system.file("extdata", "sim_panel.csv", package = "diffdiff"))
#' b <- bacon_decomp(d, yname = "y", tname = "year", idname = "id", gname = "first_treat")
#' b
#' summary(b)
#' plot(b)
#' @inheritSection diffdiff-package Cohort coding
#' @export
bacon_decomp <- function(data, yname, idname, tname, gname = NULL, xformla = NULL, dname = NULL, treatname = NULL) {
  call <- match.call()
  dd_required(c("data", "yname", "idname", "tname"))
  dd_check_data(data)
  if (!is.null(treatname)) {
    if (!is.null(dname)) dd_stop("`dname` and `treatname` (its former name) are both given; give `dname` only.")
    dname <- treatname
  }
  if (is.null(dname) == is.null(gname))
    dd_stop("give exactly one of `dname` (a 0/1 treatment column) and `gname` (first treated period).")
  role <- if (!is.null(dname)) c(dname = dname) else c(gname = gname)
  p <- dd_panel(data, yname, idname, tname, role, xformla, complete = "the Bacon decomposition")
  tt <- as.double(p$tt); idc <- p$idc; tc <- p$tc
  N <- p$n_units; T <- p$n_periods
  first <- dd_first_rows(idc)
  if (!is.null(dname)) {
    d <- dd_check_numeric_col(p$vals$dname, "dname", dname)
    dd_check_binary(d, "dname", dname)
    # first treated period per unit; treatment must be absorbing
    ft <- dd_first_treated(d, idc, tt, N)
    dd_check_absorbing(ft, dname, p$id, tt, idc,
                       "the Bacon decomposition needs an absorbing treatment (once 1, always 1 for the unit).")
    gt <- ft$first
  } else {
    gt <- p$g[first]
    gt[p$never[first]] <- Inf                   # the cohort rule: never treated (in the panel)
    gt[gt < min(tt)] <- min(tt)                 # treated before the panel: always treated
    d <- as.double(tt >= gt[idc + 1L])
  }
  groups <- sort(unique(gt))
  t0 <- min(tt)
  if (all(is.infinite(groups)) || all(groups == t0 | is.infinite(groups)))
    dd_stop("`%s` = \"%s\": no unit changes treatment status within the panel; there is nothing to decompose (the TWFE coefficient is not identified).",
            names(role), role)
  if (length(groups) < 2L)
    dd_stop("`%s` = \"%s\" gives every unit the same treatment timing (first treated in %s); there is no 2x2 comparison, so the TWFE coefficient is not identified and cannot be decomposed.",
            names(role), role, format(groups))
  if (!is.null(p$X))
    return(dd_bacon_controlled(p$y, d, p$X, idc, tc, gt[idc + 1L], t0, groups, yname, call, N, T))
  # cell means of y and treatment shares by timing group x period (balanced)
  grp <- match(gt, groups)[idc + 1L]
  periods <- sort(unique(tt))
  # columns in time order (period codes follow the order of appearance)
  cell <- grp + (match(tt, periods) - 1L) * length(groups)
  ncell <- length(groups) * T
  ybar <- matrix(vapply(split(p$y, factor(cell, levels = seq_len(ncell))), function(v) sum(v) / length(v), 0),
                 length(groups))
  ng <- tabulate(match(gt, groups), length(groups))           # units per group
  pairs <- expand.grid(k = seq_along(groups), l = seq_along(groups))
  pairs <- pairs[pairs$k != pairs$l & is.finite(groups[pairs$k]) & groups[pairs$k] != t0, ]
  est_w <- vapply(seq_len(nrow(pairs)), function(i) {
    k <- pairs$k[i]; l <- pairs$l[i]; gk <- groups[k]; gl <- groups[l]
    win <- if (is.infinite(gl)) rep(TRUE, T) else if (gk < gl) periods < gl else periods >= gl
    post <- periods >= gk
    a <- win & post; b <- win & !post
    mn <- function(v) sum(v) / length(v)
    est <- (mn(ybar[k, a]) - mn(ybar[k, b])) - (mn(ybar[l, a]) - mn(ybar[l, b]))
    # weights as the paper / bacondecomp: rows of the pair's subsample
    Tw <- sum(win)
    nk <- ng[k] * Tw; nl <- ng[l] * Tw
    Dk <- mn(periods[win] >= gk); Dl <- mn(periods[win] >= gl)
    nkl <- nk / (nk + nl)
    w <- if (is.infinite(gl)) (nk + nl)^2 * nkl * (1 - nkl) * Dk * (1 - Dk)
         else if (gk < gl) ((nk + nl) * (1 - Dl))^2 * nkl * (1 - nkl) * (Dk - Dl) / (1 - Dl) * (1 - Dk) / (1 - Dl)
         else {
           # the earlier group (l) is the control; bacondecomp's D_k, D_l refer to (l, k)
           n1 <- nl; n2 <- nk; s <- n1 / (n1 + n2); D1 <- Dl; D2 <- Dk
           ((n1 + n2) * D1)^2 * s * (1 - s) * (D2 / D1) * (D1 - D2) / D1
         }
    c(est, w)
  }, numeric(2))
  tb <- data.frame(treated = groups[pairs$k], untreated = groups[pairs$l], estimate = est_w[1, ],
                   weight = est_w[2, ])
  dd_bacon_identified(tb$weight, groups)
  tb$weight <- tb$weight / sum(tb$weight)
  tb$type <- ifelse(is.infinite(tb$untreated), "Treated vs Untreated",
                    ifelse(tb$untreated == t0, "Later vs Always Treated",
                           ifelse(tb$treated > tb$untreated, "Later vs Earlier Treated", "Earlier vs Later Treated")))
  rownames(tb) <- NULL
  structure(list(two_by_twos = tb, beta_twfe = sum(tb$estimate * tb$weight), yname = yname, call = call,
                 n_units = N, n_periods = T),
            class = "bacon_decomp")
}

#' @rdname bacon_decomp
#' @param x,object A `bacon_decomp` object.
#' @param legend,legend_pos For `plot`: draw the legend (default `TRUE`), and
#'   where: `"auto"` (default: the emptiest corner) or a keyword of
#'   [graphics::legend()].
#' @param main For `plot`: the title (default: "Goodman-Bacon decomposition:"
#'   and the outcome).
#' @param ... `plot`: passed to [graphics::plot.default()]; the other methods: not used (an error if given).
#' @export
print.bacon_decomp <- function(x, ...) {
  dd_check_dots(list(...), "print()")
  cat("Goodman-Bacon decomposition of the TWFE estimate (", x$yname, ")\n", sep = "")
  cat(sprintf("%d units x %d periods; %d 2x2 comparisons; TWFE coefficient %.6g\n\n", x$n_units, x$n_periods,
              nrow(x$two_by_twos), x$beta_twfe))
  if (!is.null(x$Omega))
    cat(sprintf("Within timing groups: Omega = %.6g, beta_hat_w = %.6g; between: %.6g\n\n", x$Omega, x$beta_hat_w,
                sum(x$two_by_twos$weight * x$two_by_twos$estimate)))
  print(summary(x), row.names = FALSE)
  invisible(x)
}

#' @rdname bacon_decomp
#' @export
summary.bacon_decomp <- function(object, ...) {
  dd_check_dots(list(...), "summary()")
  tb <- object$two_by_twos
  types <- unique(tb$type)
  data.frame(type = types,
             weight = vapply(types, function(t) sum(tb$weight[tb$type == t]), numeric(1)),
             avg_estimate = vapply(types, function(t) {
               s <- tb$type == t; sum(tb$weight[s] * tb$estimate[s]) / sum(tb$weight[s]) }, numeric(1)),
             n = vapply(types, function(t) sum(tb$type == t), integer(1)),
             row.names = NULL, stringsAsFactors = FALSE)
}

#' @rdname bacon_decomp
#' @export
plot.bacon_decomp <- function(x, legend = TRUE, legend_pos = "auto", main = NULL, ...) {
  legend <- dd_check_flag(legend, "legend")
  if (is.null(main)) main <- paste("Goodman-Bacon decomposition:", x$yname)
  tb <- x$two_by_twos
  types <- c("Earlier vs Later Treated", "Later vs Earlier Treated", "Treated vs Untreated", "Later vs Always Treated")
  col <- c("#1B6CA8", "#C0392B", "#2E8B57", "#8E44AD")[match(tb$type, types)]
  pch <- c(16, 17, 15, 18)[match(tb$type, types)]
  op <- graphics::par(mar = c(4.2, 4.2, 3, 1), las = 1)
  on.exit(graphics::par(op))
  graphics::plot.default(tb$weight, tb$estimate, col = col, pch = pch, xlab = "Weight", ylab = "2x2 DiD estimate",
                         main = main, ...)
  graphics::abline(h = x$beta_twfe, lty = 2, col = "grey40")
  present <- types %in% tb$type
  if (legend)
    graphics::legend(dd_legend_pos(legend_pos, c(tb$weight, graphics::par("usr")[1:2]),
                                   c(tb$estimate, rep(x$beta_twfe, 2)), graphics::par("usr")[1:2],
                                   graphics::par("usr")[3:4]),
                     legend = c(types[present], "TWFE estimate"), bty = "n", cex = 0.85,
                     col = c(c("#1B6CA8", "#C0392B", "#2E8B57", "#8E44AD")[present], "grey40"),
                     pch = c(c(16, 17, 15, 18)[present], NA), lty = c(rep(NA, sum(present)), 2))
  invisible(x)
}

# The controlled decomposition (Goodman-Bacon 2021, Section 5; bacondecomp's
# formulas): the treatment residualised on covariates and both fixed effects
# (d), its within-timing-group part (share Omega, coefficient beta_hat_w),
# and for each unordered pair of timing groups a 2x2 estimate combining the
# covariate-adjusted DiD and the between-group covariate term, with weight
# N^2 ((1 - R^2) V_D + V_dp). Fixed effects absorbed by the shared demeaning.
dd_bacon_controlled <- function(y, d, X, idc, tc, gr, t0, groups, yname, call, N, T) {
  opts <- dd_fe_opts()
  fe <- list(id = idc, time = tc)
  pvar <- function(v) mean((v - mean(v))^2)
  fw <- dd_regress(d, X, fe, NULL, opts)                     # treatment on covariates + FE
  dres <- fw$resid                                             # d_it (orthogonal to the FE)
  pfit <- d - dres                                             # predicted treatment p
  gcode <- dd_codes(gr)
  gt_code <- dd_codes(as.double(gcode) * T + tc)
  cellmean <- function(v, code) (rowsum(v, code, reorder = TRUE) / tabulate(code + 1L, attr(code, "nlev")))[code + 1L, ]
  d_kt <- cellmean(dres, gt_code); d_k <- cellmean(dres, gcode)
  d_i <- cellmean(dres, idc); d_t <- cellmean(dres, tc)
  d_til <- dres - d_i - d_t + mean(dres)
  d_w <- dres - d_i - (d_kt - d_k)
  Omega <- pvar(d_w) / pvar(d_til)
  beta_w <- mean((y - mean(y)) * (d_w - mean(d_w))) / pvar(d_w)
  # covariates and p averaged by timing group x period
  gX <- rowsum(X, gt_code, reorder = TRUE) / tabulate(gt_code + 1L, attr(gt_code, "nlev"))
  gX <- gX[gt_code + 1L, , drop = FALSE]
  colnames(gX) <- paste0("g_", colnames(X))
  gp <- cellmean(pfit, gt_code)
  fins <- groups[is.finite(groups)]
  pairs <- do.call(rbind, lapply(fins, function(i) {
    j <- groups[groups > i]
    if (length(j)) data.frame(treated = i, untreated = j) }))
  if (is.null(pairs)) dd_bacon_identified(numeric(), groups)
  res <- lapply(seq_len(nrow(pairs)), function(r) {
    rows <- which(gr %in% c(pairs$treated[r], pairs$untreated[r]))
    fr <- list(id = dd_recode(idc, rows), time = dd_recode(tc, rows))
    demean <- function(v) .Call(C_demean, NULL, as.matrix(v), dd_fe_matrix(fr)$codes, dd_fe_matrix(fr)$nlev, NULL,
                                opts$fe_tol, as.integer(opts$fe_maxit))$X
    Dt <- drop(demean(d[rows]))
    VD <- pvar(Dt)
    pg <- demean(gX[rows, , drop = FALSE])
    colnames(pg) <- colnames(gX)
    pr <- suppressMessages(dd_regress(Dt, pg, NULL, NULL, opts))
    pgj <- Dt - pr$resid
    Rsq <- 1 - sum(pr$resid^2) / sum((Dt - mean(Dt))^2)
    ptil <- drop(demean(gp[rows]))
    dp <- pgj - ptil
    Vdp <- pvar(dp)
    BD <- suppressMessages(dd_regress(y[rows], cbind(treated = d[rows], gX[rows, , drop = FALSE]), fr, NULL, opts))$coef[["treated"]]
    Bb <- dd_regress(y[rows], cbind(dp = dp), fr, NULL, opts)$coef[["dp"]]
    n <- length(rows)
    c(weight = n^2 * ((1 - Rsq) * VD + Vdp), estimate = ((1 - Rsq) * VD * BD + Vdp * Bb) / ((1 - Rsq) * VD + Vdp))
  })
  res <- do.call(rbind, res)
  dd_bacon_identified(res[, "weight"], groups)
  tb <- data.frame(treated = pairs$treated, untreated = pairs$untreated, estimate = res[, "estimate"],
                   weight = res[, "weight"] / sum(res[, "weight"]))
  tb$type <- ifelse(is.infinite(tb$untreated), "Treated vs Untreated",
                    ifelse(tb$treated == t0 | tb$untreated == t0, "Later vs Always Treated", "Both Treated"))
  rownames(tb) <- NULL
  structure(list(two_by_twos = tb, beta_hat_w = beta_w, Omega = Omega,
                 beta_twfe = Omega * beta_w + (1 - Omega) * sum(tb$estimate * tb$weight), yname = yname,
                 call = call, n_units = N, n_periods = T),
            class = "bacon_decomp")
}

# The decomposition exists when some 2x2 comparison has positive weight
# (treatment varies within a pair of timing groups); otherwise the TWFE
# coefficient is not identified: an error, not "TWFE coefficient 0".
dd_bacon_identified <- function(w, groups) {
  if (!length(w) || !any(is.finite(w) & w > 0) || !is.finite(sum(w)))
    dd_stop("no 2x2 comparison has positive weight (timing groups: %s; Inf = never treated); the TWFE coefficient is not identified and cannot be decomposed.",
            paste(format(groups), collapse = ", "))
  invisible(TRUE)
}
