#' Weights of the two-way fixed-effects regression on each cell's effect
#'
#' Decomposes the treatment coefficient of a two-way fixed-effects (or
#' first-difference) regression into a weighted sum of the cells' treatment
#' effects (de Chaisemartin and D'Haultfoeuille, 2020, AER), as
#' TwoWayFEWeights' `twowayfeweights()`: the weight of every treated
#' group-period cell, how many are negative and their sum, and the two
#' robustness measures of Corollary 1. Negative weights mean the coefficient
#' can have the opposite sign of every cell's effect when effects are
#' heterogeneous.
#'
#' @param data A data frame.
#' @param yname Name of the outcome column (in levels).
#' @param idname Name of the group column: the unit of a panel (one row per
#'   unit and period), or, with `panel = FALSE`, a group (a state, say)
#'   holding several observations per period (type `"feTR"`; the other types
#'   need one row per group and period).
#' @param tname Name of the period column (numeric).
#' @param dname Name of the treatment column (in levels; binary or not). A
#'   treatment that varies within a group-period cell is replaced by its
#'   cell mean, with a message (as the peer).
#' @param type `"feTR"` (default): the fixed-effects regression under common
#'   trends; `"feS"`: the same regression, also assuming each group's effect
#'   is constant over time (weights on the switching cells); `"fdTR"` and
#'   `"fdS"`: the first-difference regression of the change in the outcome on
#'   the change in the treatment with period fixed effects, under the same two
#'   assumptions. The first differences are formed here from the level columns
#'   (between consecutive periods of the data); TwoWayFEWeights takes them
#'   ready-made (its `Y` and `D`), with the level treatment as `D0`.
#' @param xformla One-sided formula of controls (`~ x1 + x2`), averaged
#'   within cells; first-differenced with the outcome under `"fdS"`; not
#'   available with `"fdTR"`.
#' @param weightsname Name of a column of observation weights.
#' @param panel `TRUE` (default): `idname` and `tname` identify the rows, as
#'   in every estimator, and a unit with two rows in one period is an error
#'   (`DUPLICATE_ROWS`; a duplicated row would otherwise count twice and
#'   move beta). `FALSE`: group-level data, several observations per group
#'   and period (individuals within states, say), which type `"feTR"`
#'   aggregates to cells as TwoWayFEWeights does (TwoWayFEWeights takes such
#'   data without an argument, and so also counts a duplicated row twice).
#' @param fe_tol,fe_maxit Convergence tolerance and iteration limit of the
#'   fixed-effect absorption.
#' @return An object of class `twfe_weights`: `weights` (a data frame with
#'   one row per cell: the group, the period, `weight`, and `W` and
#'   `nat_weight`, the paper's weight ratio and natural weight), `beta` (the
#'   regression's coefficient, beta_fe or beta_fd), `sigma_fe` (the smallest
#'   standard deviation of the cells' effects compatible with beta and an
#'   average effect of zero), `sigma_fe_sign` (the smallest compatible with
#'   every cell's effect having the opposite sign of beta; `NA` without
#'   negative weights), `n_pos`, `n_neg`, `sum_pos`, `sum_neg`, `n_cells`
#'   and `type`. `print()`, `tidy()` (the cell weights), `glance()` (the
#'   summary) and `as.data.frame()` work on it.
#' @references de Chaisemartin, C. and D'Haultfoeuille, X. (2020). Two-way
#'   fixed effects estimators with heterogeneous treatment effects. American
#'   Economic Review, 110(9), 2964-2996.
#' @seealso [did_twfe()] for the regression itself; [twfe_decomp()] for
#'   Callaway's decomposition of the same coefficient into ATT(g,t) weights,
#'   pre-treatment cells included; [bacon_decomp()] for its 2x2 comparisons.
#' @examples
#' d <- read.csv(system.file("extdata", "sim_panel.csv", package = "diffdiff"))
#' w <- twfe_weights(d, "y", "id", "year", "treat")
#' w
#' head(tidy(w))
#' @export
twfe_weights <- function(data, yname, idname, tname, dname, type = c("feTR", "feS", "fdTR", "fdS"),
                         xformla = NULL, weightsname = NULL, panel = TRUE, fe_tol = 1e-10, fe_maxit = 10000) {
  call <- match.call()
  dd_required(c("data", "yname", "idname", "tname", "dname"))
  type <- dd_match_arg(if (identical(type, eval(formals()$type))) type[1] else type, c("feTR", "feS", "fdTR", "fdS"), "type")
  opts <- dd_fe_opts(fe_tol = fe_tol, fe_maxit = fe_maxit)
  dd_check_flag(panel, "panel")
  fd <- type %in% c("fdTR", "fdS")
  if (type == "fdTR" && !is.null(xformla))
    dd_stop("`xformla` is not available with type = \"fdTR\" (use \"feTR\", \"feS\" or \"fdS\").")
  # the rows through the shared panel layer: with panel = TRUE its check of
  # one row per unit and period (the other estimators' DUPLICATE_ROWS error,
  # with a pointer to panel = FALSE for group-level data)
  p <- tryCatch(dd_panel(data, yname, idname, tname, c(dname = dname), xformla, weightsname, unique_rows = panel),
                diffdiff_duplicate_rows = function(e)
                  dd_stop("%s If `idname` = \"%s\" names groups with several observations per period (group-level data), pass `panel = FALSE`.",
                          sub(" \\[did_check: DUPLICATE_ROWS\\]$", "", conditionMessage(e)), idname,
                          .code = "DUPLICATE_ROWS"))
  cell <- dd_codes(p$idc * as.double(attr(p$tc, "nlev")) + p$tc)   # 0-based cell codes
  if (type != "feTR" && attr(cell, "nlev") < length(cell))
    dd_stop("type = \"%s\" needs one row per group and period (`idname` = \"%s\", `tname` = \"%s\"); average the observations within cells first, or use type = \"feTR\".",
            type, idname, tname)
  d <- dd_check_numeric_col(p$vals$dname, "dname", dname)
  w <- if (is.null(p$w)) rep(1, length(p$y)) else p$w
  # treatment and controls constant within cells: their unweighted cell means
  d <- dd_tw_cellmean(d, cell, "dname", dname)
  X <- p$X
  if (!is.null(X) && ncol(X))
    for (k in seq_len(ncol(X))) X[, k] <- dd_tw_cellmean(X[, k], cell, "xformla", colnames(X)[k])
  if (!any(d != 0)) dd_stop("`dname` = \"%s\" is 0 in every row: no cell is treated.", dname)
  nm <- c(idname, tname, dname)
  if (fd) return(dd_tw_fd(p, d, X, w, type, opts, call, nm))
  fe <- list(p$idc, p$tc)
  eps <- dd_tw_resid(d, X, fe, w, opts)
  if (max(abs(eps)) <= 1e-10 * max(1, abs(d)))
    dd_stop("`dname` = \"%s\" is collinear with the group and period fixed effects%s: the regression has no treatment coefficient to decompose.",
            nm[3], if (is.null(X) || !ncol(X)) "" else " and the controls")
  beta <- dd_tw_beta(p$y, d, X, fe, w, opts)
  P <- w / sum(w)
  if (type == "feTR") {
    mean_d <- sum(P * d)
    denom <- sum(P * eps * d)
    if (attr(cell, "nlev") == length(cell)) {  # one row per cell
      rows <- seq_along(cell); Pc <- P
    } else {                                    # the cells' first rows and their totals of P
      rows <- dd_first_rows(cell)
      Pc <- rowsum(P, cell, reorder = TRUE)[, 1]
    }
    W <- eps[rows] * mean_d / denom
    nat <- Pc * d[rows] / mean_d
  } else {                                      # feS: one row per cell
    o <- order(p$idc, p$tc)
    g <- p$idc[o]; tcode <- p$tc[o]
    ew <- (eps * w)[o]; wo <- w[o]
    # means of eps over the group's periods at or after t (weighted)
    last <- c(g[-1] != g[-length(g)], TRUE)    # the group's last row (rows sorted by group, period)
    rcs <- function(v) {                        # sums over the group's rows at or after each row
      cs <- cumsum(v)
      tot <- cs[last][cumsum(c(TRUE, last[-length(last)]))]
      tot - cs + v
    }
    e_ge <- rcs(ew) / rcs(wo)
    prev <- c(FALSE, g[-1] == g[-length(g)] & tcode[-1] == tcode[-length(tcode)] + 1L)
    keep <- which(prev)
    dD <- d[o][keep] - d[o][keep - 1L]
    Pk <- P[o][keep]
    nat <- Pk * abs(dD)
    nat <- nat / sum(nat)
    if (!any(nat > 0)) dd_stop("`dname` = \"%s\" never changes between consecutive periods: there is no switching cell.", dname)
    om <- sign(dD) * e_ge[keep] / Pk
    W <- om / (sum(nat * om) / sum(nat))
    rows <- o[keep]
  }
  dd_tw_result(p, rows, W, nat, beta, type, call, nm)
}

# unweighted cell means of a cell-level variable that varies within cells
# (with a message), as TwoWayFEWeights
dd_tw_cellmean <- function(v, cell, arg, col) {
  nc <- attr(cell, "nlev")
  if (nc == length(v)) return(v)               # one observation per cell
  m <- (rowsum(v, cell, reorder = TRUE)[, 1] / tabulate(cell + 1L, nc))[cell + 1L]
  if (any(abs(v - m) > 1e-12 * pmax(1, abs(m)))) {
    message(sprintf("diffdiff: `%s` = \"%s\" varies within some group-period cells; it is replaced by its cell mean (the decomposition applies to cell-level variables).",
                    arg, col))
    return(m)
  }
  v
}

# residual of v on the controls and the fixed effects (weighted)
dd_tw_resid <- function(v, X, fe, w, opts) {
  if (is.null(X) || !ncol(X)) {
    femat <- dd_fe_matrix(fe)
    dm <- .Call(C_demean, as.double(v), matrix(0, length(v), 0), femat$codes, femat$nlev, w,
                opts$fe_tol, as.integer(opts$fe_maxit))
    return(dm$y)
  }
  dd_regress(v, X, fe, w, opts)$resid
}

# the treatment's coefficient in the regression of y on it, the controls and
# the fixed effects
dd_tw_beta <- function(y, d, X, fe, w, opts) {
  XX <- cbind(D = d, X)
  r <- dd_regress(y, XX, fe, w, opts)
  b <- r$coef[["D"]]
  if (is.na(b)) dd_stop("the treatment is collinear with the fixed effects and controls: the regression has no coefficient to decompose.")
  b
}

# the first-difference types: differences between consecutive periods of a
# group, period fixed effects
dd_tw_fd <- function(p, d, X, w, type, opts, call, nm) {
  dname <- nm[3]
  o <- order(p$idc, p$tc)
  g <- p$idc[o]; tcode <- p$tc[o]
  prev <- c(FALSE, g[-1] == g[-length(g)] & tcode[-1] == tcode[-length(tcode)] + 1L)
  lagdiff <- function(v) { v <- v[o]; r <- rep(NA_real_, length(v)); r[prev] <- v[prev] - v[which(prev) - 1L]; r }
  dy <- lagdiff(p$y); dD <- lagdiff(d)
  if (!any(dD != 0, na.rm = TRUE))
    dd_stop("`dname` = \"%s\" never changes between consecutive periods: the first-difference regression has no treatment coefficient.", dname)
  dX <- if (is.null(X) || !ncol(X)) NULL else apply(X, 2, lagdiff)
  if (!is.null(dX)) dX <- matrix(dX, ncol = ncol(X), dimnames = list(NULL, colnames(X)))
  wo <- w[o]
  if (type == "fdS") {
    k <- which(prev & wo != 0)
    if (!length(k)) dd_stop("no group is observed in two consecutive periods: there is no first difference.")
    P <- wo[k] / sum(wo[k])
    fe <- list(dd_codes(tcode[k]))
    Xk <- if (is.null(dX)) NULL else dX[k, , drop = FALSE]
    eps <- dd_tw_resid(dD[k], Xk, fe, wo[k], opts)
    beta <- dd_tw_beta(dy[k], dD[k], Xk, fe, wo[k], opts)
    nat <- P * abs(dD[k])
    nat <- nat / sum(nat)
    W <- sign(dD[k]) * eps
    W <- W / (sum(nat * W) / sum(nat))
    return(dd_tw_result(p, o[k], W, nat, beta, type, call, nm))
  }
  # fdTR: every row; the level treatment's natural weights, the differenced
  # regression on the rows with a difference
  P <- wo / sum(wo)
  d0 <- d[o]
  mean_d <- sum(P * d0)
  k <- which(prev)
  if (!length(k)) dd_stop("no group is observed in two consecutive periods: there is no first difference.")
  fe <- list(dd_codes(tcode[k]))
  eps <- numeric(length(o))
  eps[k] <- dd_tw_resid(dD[k], NULL, fe, wo[k], opts)
  beta <- dd_tw_beta(dy[k], dD[k], NULL, fe, wo[k], opts)
  nxt <- c(prev[-1], FALSE)                   # the group's next row is the next period
  wt <- eps
  j <- which(nxt & P != 0)
  wt[j] <- eps[j] - eps[j + 1L] * P[j + 1L] / P[j]
  denom <- sum(P * wt * d0) / sum(P)
  W <- wt * mean_d / denom
  nat <- P * d0 / mean_d
  dd_tw_result(p, o, W, nat, beta, type, call, nm)
}

# the result: cell weights (|w| < 1e-10 set to 0, as the peer), their
# counts and sums, and Corollary 1's two measures
dd_tw_result <- function(p, rows, W, nat, beta, type, call, nm) {
  wt <- W * nat
  wt[!is.na(wt) & abs(wt) < 1e-10] <- 0
  ok <- !is.na(wt)
  pos <- wt[ok & wt > 0]; neg <- wt[ok & wt < 0]
  M <- sum(nat != 0, na.rm = TRUE)
  Wm <- sum(nat * W, na.rm = TRUE) / sum(nat[!is.na(W)], na.rm = TRUE)
  Wsd <- sqrt(sum(nat * (W - Wm)^2, na.rm = TRUE)) * sqrt(M / (M - 1))
  sigma <- abs(beta) / Wsd
  sigma2 <- NA_real_
  if (sum(neg) < 0) {
    # Corollary 1 (ii): cells by decreasing W; the measure at the first cell
    # from which the remaining weights can all take the opposite sign
    s <- which(wt != 0)
    grp <- p$idc[rows][s]; per <- p$tc[rows][s]
    o <- order(W[s], -grp, -per)
    Ws <- W[s][o]; ns <- nat[s][o]; ws <- wt[s][o]
    Pk <- cumsum(ns); Sk <- cumsum(ws); Tk <- cumsum(ns * Ws^2)
    o2 <- order(-Ws, grp[o], per[o])
    Ws <- Ws[o2]; Pk <- Pk[o2]; Sk <- Sk[o2]; Tk <- Tk[o2]
    n <- length(Ws)
    v <- Tk + Sk^2 / (1 - Pk)                  # the last cell: Pk = 1 (up to rounding)
    meas <- abs(beta) / sqrt(pmax(v, 0))
    meas[!(v >= 0)] <- NaN
    ind <- as.numeric(Ws < -Sk / (1 - Pk))
    ind[1] <- 0
    ind <- pmax(ind, c(-1, ind[-n]))
    sigma2 <- meas[n - sum(ind) + 1L]
  }
  cells <- data.frame(unname(p$id[rows]), unname(p$tt[rows]), weight = unname(wt), W = unname(W),
                      nat_weight = unname(nat))
  names(cells)[1:2] <- nm[1:2]
  structure(list(weights = cells, beta = beta, sigma_fe = sigma, sigma_fe_sign = sigma2,
                 n_pos = length(pos), n_neg = length(neg), sum_pos = sum(pos), sum_neg = sum(neg),
                 n_cells = M, type = type, names = nm, call = call),
            class = "twfe_weights")
}

#' @rdname twfe_weights
#' @param x A `twfe_weights` object.
#' @param ... Not used: an error if given (no argument is ignored silently).
#' @export
print.twfe_weights <- function(x, ...) {
  dd_check_dots(list(...), "print()")
  lab <- c(feTR = "fixed-effects regression, common trends",
           feS = "fixed-effects regression, common trends and effects constant over time",
           fdTR = "first-difference regression, common trends",
           fdS = "first-difference regression, common trends and effects constant over time")[[x$type]]
  b <- if (x$type %in% c("feTR", "feS")) "beta_fe" else "beta_fd"
  cat(sprintf("Weights of the TWFE coefficient on the cells' effects (twfe_weights, type = \"%s\": %s)\n",
              x$type, lab))
  cat(sprintf("Treatment: %s   Groups: %s   Periods: %s\n", x$names[3], x$names[1], x$names[2]))
  cat(sprintf("%s = %.6g is a weighted sum of %d cells' effects:\n\n", b, x$beta, x$n_pos + x$n_neg))
  tab <- data.frame(cells = c(x$n_pos, x$n_neg, x$n_pos + x$n_neg),
                    sum.weights = c(x$sum_pos, x$sum_neg, x$sum_pos + x$sum_neg),
                    row.names = c("positive weights", "negative weights", "total"))
  print(format(tab, digits = 4))
  cat(sprintf("\nSmallest sd of the cells' effects compatible with %s and an average effect of 0: %.4g\n",
              b, x$sigma_fe))
  if (!is.na(x$sigma_fe_sign))
    cat(sprintf("Smallest sd compatible with %s and every cell's effect of the opposite sign: %.4g\n",
                b, x$sigma_fe_sign))
  cat("(de Chaisemartin and D'Haultfoeuille, 2020, Corollary 1)\n")
  invisible(x)
}

#' @rdname twfe_weights
#' @method tidy twfe_weights
#' @export
tidy.twfe_weights <- function(x, ...) {
  dd_check_broom_dots(list(...), "tidy()", sys.function())
  w <- x$weights
  data.frame(term = paste0(w[[1]], ":", w[[2]]), group = w[[1]], period = w[[2]], weight = w$weight,
             stringsAsFactors = FALSE)
}

#' @rdname twfe_weights
#' @method glance twfe_weights
#' @export
glance.twfe_weights <- function(x, ...) {
  dd_check_broom_dots(list(...), "glance()", sys.function())
  data.frame(type = x$type, beta = x$beta, n.cells = x$n_pos + x$n_neg, n.positive = x$n_pos,
             n.negative = x$n_neg, sum.positive = x$sum_pos, sum.negative = x$sum_neg,
             share.negative = x$n_neg / (x$n_pos + x$n_neg), sigma_fe = x$sigma_fe,
             sigma_fe_sign = x$sigma_fe_sign, stringsAsFactors = FALSE)
}

#' @rdname twfe_weights
#' @param row.names,optional Ignored (for the generic).
#' @export
as.data.frame.twfe_weights <- function(x, row.names = NULL, optional = FALSE, ...)
  dd_as_df(x$weights, row.names, list(...))
