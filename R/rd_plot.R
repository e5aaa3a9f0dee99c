# rd_plot(): regression-discontinuity plots with data-driven bins (Calonico,
# Cattaneo and Titiunik 2015), number for number as rdrobust's rdplot()
# (4.1.1). The data are sorted once by the running variable (stable: ties
# keep their row order, as rdplot's sort of each side); three passes in C
# (src/rd_plot.c) give the moments of the global fits, the spacings and the
# bins. Methods (print, plot, autoplot, tidy, glance): R/rd_plot_methods.R.

rp_binselects <- c("esmv", "es", "espr", "esmvpr", "qs", "qspr", "qsmv", "qsmvpr")

rp_describe <- c(es = "IMSE-optimal evenly spaced bins, spacings estimators",
                 espr = "IMSE-optimal evenly spaced bins, polynomial-regression estimators",
                 esmv = "mimicking-variance evenly spaced bins, spacings estimators",
                 esmvpr = "mimicking-variance evenly spaced bins, polynomial-regression estimators",
                 qs = "IMSE-optimal quantile-spaced bins, spacings estimators",
                 qspr = "IMSE-optimal quantile-spaced bins, polynomial-regression estimators",
                 qsmv = "mimicking-variance quantile-spaced bins, spacings estimators",
                 qsmvpr = "mimicking-variance quantile-spaced bins, polynomial-regression estimators")

#' Regression-discontinuity plots with data-driven bins
#'
#' Bins the running variable on each side of the cutoff, plots the mean
#' outcome of each bin and a global polynomial fitted on each side, with the
#' number of bins chosen from the data as in Calonico, Cattaneo and Titiunik
#' (2015). The numbers equal those of rdrobust's `rdplot()` (version 4.1.1):
#' the bins, their means, counts and intervals, the number of bins (`J`,
#' `J_IMSE`, `J_MV`) and the polynomial's coefficients.
#'
#' The number of bins on each side: `"es"` and `"qs"` (evenly spaced and
#' quantile spaced bins) minimise the integrated mean squared error of the
#' binned means (`J_IMSE`); `"esmv"` (the default) and `"qsmv"` choose the
#' bins whose means have about the variability of the data (mimicking
#' variance, `J_MV`). Both need the variance of the outcome near each point:
#' from spacings (differences of the outcome between neighbouring values of
#' the running variable) or, with the suffix `"pr"`, from global degree-4
#' polynomial regressions of the outcome and its square. With
#' `masspoints = "adjust"` (the default), when 20% or more of the
#' observations on a side repeat a value of the running variable
#' (mass points), the spacings method is replaced by its `"pr"` version
#' (`"es"` by `"espr"`, `"esmv"` by `"esmvpr"`, ...), as rdplot does;
#' `binselect` in the result is the method used.
#'
#' Observations at the cutoff belong to the right side. The plotted
#' polynomial of order `p` is fitted on each side by weighted least squares
#' with the kernel weights of `kernel` over `h` (by default the whole side),
#' times `weightsname`'s weights; the weights enter this fit only, as in
#' rdplot (the bins are unweighted).
#'
#' Differences from `rdplot()`, deliberate:
#' * The bin-selection polynomials are fitted in centred and scaled
#'   coordinates (the same fit as rdplot's on raw powers of `x`, but without
#'   its loss of precision). When rdplot's Gram matrix on raw powers is
#'   numerically singular (a running variable far from zero relative to its
#'   spread, such as calendar years), rdplot falls back to a pseudo-inverse
#'   and its numbers of bins follow rounding error; rd_plot's do not, and
#'   can differ there.
#' * `scale` times the selected number of bins is rounded up to a whole
#'   number (rdplot uses the fraction, which gives bins that do not cover
#'   the side); a whole product is used as it is.
#' * Not available: rdplot's `covs`, `covs_eval`, `subset` and a
#'   two-sided `scale` (rdplot itself fails on a two-sided `scale`).
#'
#' Kept from rdplot: with evenly spaced bins R's `seq(by =)` can end a
#' rounding error short of the side's end; rdplot then puts the largest
#' observation alone in a bin `J + 1` with `NA` edges and midpoint, and so
#' does rd_plot (its plots draw such a bin at its mean of `x`). Tied values
#' of the running variable keep their row order when sorted, so the
#' spacings estimators (`"es"`, `"esmv"`, `"qs"`, `"qsmv"` with
#' `masspoints = "off"` or `"check"`) can depend on the order of tied rows,
#' in rdplot and rd_plot alike.
#' @param data A data.frame, data.table or tibble.
#' @param yname Name of the outcome column.
#' @param xname Name of the running-variable column.
#' @param c The cutoff (default 0). Observations with `x >= c` are treated.
#' @param p Order of the global polynomial drawn on each side, a whole
#'   number from 0 to 20 (default 4).
#' @param nbins Number of bins: one whole number for both sides or two
#'   (left, right). It replaces the selected number; `binselect` still
#'   chooses evenly spaced (`"es..."`) or quantile-spaced (`"qs..."`) bins.
#' @param binselect The bin selection method: `"esmv"` (default), `"es"`,
#'   `"espr"`, `"esmvpr"`, `"qs"`, `"qspr"`, `"qsmv"`, `"qsmvpr"` (see
#'   Details).
#' @param scale A positive number multiplying the selected number of bins
#'   on both sides (the product rounded up to a whole number).
#' @param kernel Kernel of the polynomial fit: `"uniform"` (default),
#'   `"triangular"` or `"epanechnikov"` (or `"uni"`, `"tri"`, `"epa"`).
#' @param h Bandwidth of the polynomial fit: one positive number or two
#'   (left, right); default the distance from the cutoff to the smallest
#'   and largest values of the running variable.
#' @param weightsname Name of a column of non-negative weights for the
#'   polynomial fit, or `NULL`.
#' @param support Two numbers (lower, upper) that widen the range of the
#'   running variable used for evenly spaced bins and the default `h`
#'   (never narrow it), or `NULL`.
#' @param masspoints `"adjust"` (default), `"check"` (warn about mass points
#'   but keep `binselect`) or `"off"` (no check).
#' @param ci Confidence level in percent of the bin intervals drawn (for
#'   example 95), or `NULL` (default) to draw none. The bins table always has
#'   intervals, at `ci` percent, or 95 when `ci` is `NULL` (as rdplot). The
#'   intervals are t intervals of each bin's mean with `n - 1` degrees of
#'   freedom (at least 1).
#' @param shade `TRUE` to draw the intervals as shaded bands rather than bars
#'   (needs `ci`).
#' @param plot `FALSE` to compute without drawing.
#' @param ... Passed to [plot.rd_plot()] (titles, colours, graphical
#'   parameters).
#' @return An object of class `"rd_plot"`, invisibly: a list with `bins` (a
#'   data frame: `side`, `bin` (numbered `-J_left..-1` and `1..J_right`, empty
#'   bins left out), `x_mean`, `y_mean`, `x_mid` (the bin's midpoint),
#'   `x_left`, `x_right` (its edges), `n`, `se` (standard error of `y_mean`),
#'   `ci_low`, `ci_high`), `poly` (the fitted polynomials at 500 points per
#'   side: `x`, `fit`, `side`), `coef` (their coefficients on powers of
#'   `x - c`, one column per side), `J`, `J_IMSE`, `J_MV`, `scale` (the
#'   `scale` argument, 1 by default), `rscale` (`J / J_IMSE`), each
#'   `c(left, right)`, `binselect` (the method
#'   used), `binselect_requested`, `N`, `N_h` (observations with positive
#'   kernel weight), `k` (degree of the bin-selection polynomials, 4 unless
#'   singular), `c`, `p`, `kernel`, `h`, `ci` (the argument), `ci_level`
#'   (the level of the table's intervals), `shade`, `yname`, `xname`,
#'   `n_dropped` and `call`.
#' @references Calonico, S., Cattaneo, M. D. and Titiunik, R. (2015).
#'   Optimal data-driven regression discontinuity plots. *Journal of the
#'   American Statistical Association* 110(512), 1753-1769.
#' @seealso [plot.rd_plot()] and the other methods.
#' @examples
#' set.seed(1)
#' d <- data.frame(x = runif(2000, -1, 1))
#' d$y <- 1 + d$x - 0.5 * d$x^2 + 0.4 * (d$x >= 0) + rnorm(2000, sd = 0.3)
#' rp <- rd_plot(d, "y", "x")
#' rp
#' head(tidy(rp))
#' glance(rp)
#' rd_plot(d, "y", "x", binselect = "qs", p = 2, ci = 95)
#' @export
rd_plot <- function(data, yname, xname, c = 0, p = 4, nbins = NULL,
                    binselect = c("esmv", "es", "espr", "esmvpr", "qs", "qspr", "qsmv", "qsmvpr"),
                    scale = NULL, kernel = "uniform", h = NULL, weightsname = NULL, support = NULL,
                    masspoints = c("adjust", "check", "off"), ci = NULL, shade = FALSE, plot = TRUE, ...) {
  cl <- match.call()
  c <- dd_rd_cutoff(c)
  p <- dd_check_count(p, "p")
  if (p > 20L) dd_stop("`p` must be a whole number between 0 and 20; got %s.", dd_show(p))
  binselect <- dd_match_arg(if (identical(binselect, rp_binselects)) "esmv" else binselect, rp_binselects,
                            "binselect")
  masspoints <- dd_match_arg(if (identical(masspoints, c("adjust", "check", "off"))) "adjust" else masspoints,
                             c("adjust", "check", "off"), "masspoints")
  kernel <- dd_rd_kernel(kernel)
  nbins <- dd_rd_pair(nbins, "nbins", whole = TRUE)
  h <- dd_rd_pair(h, "h")
  if (!is.null(scale)) scale <- dd_check_positive(scale, "scale")
  if (!is.null(support) && (!is.numeric(support) || length(support) != 2L || any(!is.finite(support)) ||
                            support[1] >= support[2]))
    dd_stop("`support` must be two finite numbers, lower < upper; got %s.", dd_show(support))
  if (!is.null(ci) && (!is.numeric(ci) || length(ci) != 1L || is.na(ci) || ci <= 0 || ci >= 100))
    dd_stop("`ci` must be a confidence level in percent, strictly between 0 and 100 (such as 95); got %s.",
            dd_show(ci))
  dd_check_flag(shade, "shade")
  dd_check_flag(plot, "plot")
  if (shade && is.null(ci)) dd_stop("`shade = TRUE` draws the bins' intervals: give their level with `ci` (such as 95).")

  d <- dd_rd_data(data, list(yname = yname, xname = xname, weightsname = weightsname), c = c)
  x <- d$xname; y <- d$yname
  dd_check_scale(y, sprintf("`yname` = \"%s\"", yname))
  o <- order(x, method = "radix")              # stable: ties keep their row order
  sides <- dd_rd_sides(x[o], c, xname, need = max(5L, p + 1L), sorted = TRUE)
  if (length(x) < 20L)
    dd_stop("rd_plot() needs at least 20 observations to choose the bins (as rdplot); `data` has %d usable rows.",
            length(x))
  out <- rp_compute(x, y, d$weightsname, c, p, nbins, binselect, scale, kernel, h, support, masspoints, ci,
                    sides, xname, o)
  out <- c(out, list(c = c, p = p, kernel = kernel, ci = ci, shade = shade, yname = yname, xname = xname,
                     n_dropped = d$n_dropped, call = cl))
  class(out) <- "rd_plot"
  if (plot) plot.rd_plot(out, ...)
  invisible(out)
}

# Solves the normal equations of a polynomial fit from its moments: G the
# sums of powers (0..2k), g the sums of powers times the outcome (0..k).
# NULL if the Gram matrix is not positive definite.
rp_solve <- function(G, g, k) {
  A <- matrix(G[outer(0:k, 0:k, "+") + 1L], k + 1L)
  R <- tryCatch(chol(A), error = function(e) NULL)
  if (is.null(R)) return(NULL)
  as.vector(backsolve(R, forwardsolve(t(R), g[seq_len(k + 1L)])))
}

# the polynomial sum_j b[j + 1] t^j at t
rp_horner <- function(b, t) {
  f <- rep(b[length(b)], length(t))
  for (j in rev(seq_along(b))[-1L]) f <- f * t + b[j]
  f
}

# o: the order of x (stable)
rp_compute <- function(x, y, w, c, p, nbins, binselect, scale, kernel, h, support, masspoints, ci, sides,
                       xname, o) {
  xs <- x[o]; ys <- y[o]
  ws <- if (is.null(w)) NULL else w[o]
  n <- length(xs); nl <- sides[["N_l"]]; nr <- sides[["N_r"]]
  il <- seq_len(nl); ir <- nl + seq_len(nr)
  x_min <- xs[1L]; x_max <- xs[n]
  if (!is.null(support)) { x_min <- min(x_min, support[1]); x_max <- max(x_max, support[2]) }
  range <- c(c - x_min, x_max - c)
  hh <- if (is.null(h)) range else h

  # mass points: the share of repeated values of x on each side
  mass <- 1 - sides[c("M_l", "M_r")] / sides[c("N_l", "N_r")]
  binselect_requested <- binselect
  if (masspoints != "off" && any(mass >= 0.2)) {
    if (masspoints == "adjust" && !grepl("pr$", binselect)) binselect <- paste0(binselect, "pr")
    warning(sprintf("`xname` = \"%s\" has mass points: %.0f%% of the observations below the cutoff and %.0f%% above it repeat a value%s.",
                    xname, 100 * mass[1], 100 * mass[2],
                    if (masspoints == "adjust" && binselect != binselect_requested)
                      sprintf("; binselect \"%s\" is replaced by \"%s\" (masspoints = \"adjust\")",
                              binselect_requested, binselect)
                    else ""), call. = FALSE)
  }

  # one pass: the moments of both fits and the spacings, per side
  ctr <- c((xs[1L] + xs[nl]) / 2, (xs[nl + 1L] + xs[n]) / 2)
  hw <- c((xs[nl] - xs[1L]) / 2, (xs[n] - xs[nl + 1L]) / 2)
  S <- .Call(C_rd_plot_sums, xs, ys, ws, as.double(nl), c(c, hh, ctr[1], hw[1], ctr[2], hw[2]),
             dd_rd_kernels[[kernel]], p)
  vary <- c(stats::var(ys[il]), stats::var(ys[ir]))
  fits <- vector("list", 2L); coef <- matrix(NA_real_, p + 1L, 2L); N_h <- integer(2)
  ng <- 19L + 2L * p + 1L
  k_used <- integer(2)
  for (s in 1:2) {
    m <- S[, s]
    for (k in 4:2) {                            # degree 4, or lower if its Gram matrix is singular
      g1 <- rp_solve(m[1:9], m[10:14], k)
      g2 <- rp_solve(m[1:9], m[15:19], k)
      if (!is.null(g1) && !is.null(g2)) break
    }
    if (is.null(g1) || is.null(g2))
      dd_stop("the global polynomial of the bin selection cannot be fitted %s the cutoff.",
              if (s == 1L) "below" else "above")
    k_used[s] <- k
    fits[[s]] <- list(ctr[s], hw[s], g1, g2, vary[s])
    N_h[s] <- as.integer(m[ng + p + 2L])
    b <- rp_solve(m[20:ng], m[ng + seq_len(p + 1L)], p)
    if (is.null(b))
      dd_stop("the order-%d polynomial cannot be fitted %s the cutoff: %d observations have positive kernel weight within `h` = %s; widen `h` or lower `p`.",
              p, if (s == 1L) "below" else "above", N_h[s], format(hh[s]))
    coef[, s] <- b / hh[s]^(0:p)
  }
  dimnames(coef) <- list(paste0("(x-c)^", 0:p), c("left", "right"))
  sp <- .Call(C_rd_plot_spread, xs, as.double(nl), fits)

  # the IMSE and mimicking-variance numbers of bins
  Ns <- c(nl, nr)
  B_es <- range^2 / (12 * n) * sp[1, ]
  V_es <- 0.5 / range * S[ng + p + 3L, ]
  V_es_pr <- 1 / range * sp[2, ]
  B_qs <- Ns^2 / (24 * n) * sp[3, ]
  V_qs <- 1 / (2 * Ns) * S[ng + p + 4L, ]
  V_qs_pr <- 1 / Ns * sp[4, ]
  J_imse <- function(B, V) ceiling((((2 * B) / V) * n)^(1 / 3))
  J_mv <- function(V) ceiling((vary / V) * (n / log(n)^2))
  qs <- startsWith(binselect, "qs")
  V <- if (grepl("pr$", binselect)) (if (qs) V_qs_pr else V_es_pr) else (if (qs) V_qs else V_es)
  J_IMSE <- J_imse(if (qs) B_qs else B_es, V)
  J_MV <- J_mv(V)
  J <- if (grepl("mv", binselect)) J_MV else J_IMSE
  if (!is.null(scale)) {
    J <- scale * J
    J <- ifelse(abs(J - round(J)) < 1e-9, round(J), ceiling(J))
  }
  if (!is.null(nbins)) J <- nbins
  for (s in which(vary == 0)) {
    J[s] <- 1
    warning(sprintf("the outcome is constant %s the cutoff: one bin there.", if (s == 1L) "below" else "above"),
            call. = FALSE)
  }
  bad <- which(!is.finite(J) | J < 1)
  if (length(bad))
    dd_stop("binselect = \"%s\" gives %s bins %s the cutoff (the fitted polynomial or the outcome's variation is degenerate there); give `nbins`.",
            binselect, format(J[bad[1]]), if (bad[1] == 1L) "below" else "above")
  names(J) <- names(J_IMSE) <- names(J_MV) <- c("left", "right")

  # the bins
  if (qs) {
    edges <- list(stats::quantile(xs[il], probs = seq(0, 1, 1 / J[1]), names = FALSE),
                  stats::quantile(xs[ir], probs = seq(0, 1, 1 / J[2]), names = FALSE))
  } else {
    edges <- list(seq(x_min, c, range[1] / J[1]), seq(c, x_max, range[2] / J[2]))
  }
  code <- c(findInterval(xs[il], edges[[1]], rightmost.closed = TRUE) - J[1] - 1,
            findInterval(xs[ir], edges[[2]], rightmost.closed = TRUE))
  B <- .Call(C_rd_plot_bins, xs, ys, as.integer(code))
  left <- B$bin < 1L
  pos <- ifelse(left, B$bin + J[1] + 1, B$bin)
  # edges as rdplot: NA for a bin past the last edge (R's seq(by =) can end
  # a rounding error short of the side's end, leaving the extreme
  # observation in bin J + 1) or when seq() left out the last edge
  edge <- function(i, s) {
    e <- edges[[s]]
    ifelse(i >= 1 & i <= J[s], e[pmax(1, pmin(i, length(e)))], NA_real_)
  }
  edge_hi <- function(i, s) {
    e <- edges[[s]]
    ifelse(i >= 1 & i <= J[s] & i + 1 <= length(e), e[pmax(1, pmin(i + 1, length(e)))], NA_real_)
  }
  lo <- ifelse(left, edge(pos, 1L), edge(pos, 2L))
  hi <- ifelse(left, edge_hi(pos, 1L), edge_hi(pos, 2L))
  se <- B$sd_y / sqrt(B$n)
  level <- if (is.null(ci)) 95 else ci
  q <- -stats::qt((1 - level / 100) / 2, pmax(B$n - 1, 1))
  bins <- data.frame(side = ifelse(left, "left", "right"), bin = B$bin, x_mean = B$mean_x, y_mean = B$mean_y,
                     x_mid = (lo + hi) / 2, x_left = lo, x_right = hi, n = B$n, se = se,
                     ci_low = B$mean_y - q * se, ci_high = B$mean_y + q * se, stringsAsFactors = FALSE)

  # the polynomial at 500 points per side
  xp <- list(seq(c - hh[1], c, length.out = 500L), seq(c, c + hh[2], length.out = 500L))
  poly <- data.frame(x = c(xp[[1]], xp[[2]]),
                     fit = c(rp_horner(coef[, 1], xp[[1]] - c), rp_horner(coef[, 2], xp[[2]] - c)),
                     side = rep(c("left", "right"), each = 500L), stringsAsFactors = FALSE)
  names(hh) <- names(Ns) <- names(N_h) <- c("left", "right")
  list(bins = bins, poly = poly, coef = coef, J = J, J_IMSE = J_IMSE, J_MV = J_MV,
       scale = stats::setNames(rep(if (is.null(scale)) 1 else scale, 2L), c("left", "right")),
       rscale = stats::setNames(J / J_IMSE, c("left", "right")), binselect = binselect,
       binselect_requested = binselect_requested, method = rp_describe[[binselect]], N = Ns, N_h = N_h,
       h = hh, k = stats::setNames(k_used, c("left", "right")), ci_level = level)
}
