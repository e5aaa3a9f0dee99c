#' Regression discontinuity with robust bias-corrected inference
#'
#' Sharp and fuzzy regression-discontinuity estimates at a cutoff by local
#' polynomials on each side, with the conventional, bias-corrected and
#' robust bias-corrected confidence intervals of Calonico, Cattaneo and
#' Titiunik (2014), the data-driven MSE- and CER-optimal bandwidths of
#' Calonico, Cattaneo and Farrell (2020), and covariate adjustment as in
#' Calonico, Cattaneo, Farrell and Titiunik (2019). The numbers equal
#' rdrobust 4.1's `rdrobust()` (checked for every selector, kernel and
#' variance type in the package's tests).
#'
#' On each side of the cutoff `c` an order-`p` local polynomial in `x - c`
#' with kernel weights at bandwidth `h` estimates the limit of the outcome
#' (its `deriv`-th derivative for a kink design); the estimate is the
#' difference, right minus left. Observations exactly at the cutoff belong
#' to the right (treated) side. The bias-corrected estimate subtracts the
#' leading bias estimated by an order-`q` fit at bandwidth `b`; the robust
#' standard error accounts for the variability of that correction. A fuzzy
#' design divides the outcome's jump by the treatment's (`fuzzy`), and the
#' fit reports both (`first_stage`, `reduced_form`). When the treatment is
#' constant on one side of the cutoff (one-sided non-compliance), the
#' bandwidths are selected as for a sharp design, as rdrobust does.
#'
#' @section Variance: `vce = "nn"` (the default, as rdrobust) uses
#'   nearest-neighbour residuals (`nnmatch` neighbours, ties included);
#'   `"hc0"` to `"hc3"` the fitted residuals with the HC corrections; with
#'   `cluster`, CR1 cluster-robust sums within each side (the sides are
#'   independent samples; a cluster with observations on both sides counts
#'   once on each), as rdrobust with `vce` "nn", "hc0" or "hc1". rdrobust's
#'   CR2 and CR3 are not offered.
#' @section Differences from rdrobust: the arguments take diffdiff's names
#'   (`data` with column names, `alpha` instead of `level`, `weightsname`
#'   instead of `weights`), and a covariate formula may expand factors. The
#'   bandwidth selectors and estimates are rdrobust's, including its
#'   standardisation of `x` and `y` before selection (`stdvars`) and its
#'   handling of mass points (`masspoints`). rdrobust's `scalepar`,
#'   `subset` and `sharpbw` are not offered.
#'
#' @param data A data frame (data.table and tibble work too); not modified.
#' @param yname The outcome column.
#' @param xname The running-variable column.
#' @param c The cutoff (default 0).
#' @param fuzzy `NULL` (sharp design) or the treatment column of a fuzzy
#'   design.
#' @param covs `NULL`, a one-sided formula (`~ z1 + z2`) or column names:
#'   covariates entering linearly with a common coefficient on both sides.
#'   Collinear covariates are dropped with a message.
#' @param p The order of the local polynomial (default 1: local linear;
#'   `deriv + 1` when only `deriv` is given, as rdrobust).
#' @param q The order of the bias-correction polynomial (default `p + 1`).
#' @param deriv The derivative estimated (default 0: the jump; 1: a kink).
#' @param kernel `"triangular"` (default), `"epanechnikov"` or `"uniform"`
#'   (rdrobust's "tri", "epa", "uni" work too).
#' @param bwselect The bandwidth selector when `h` is not given: `"mserd"`
#'   (default: one MSE-optimal bandwidth), `"msetwo"` (one per side),
#'   `"msesum"` (for the sum of the two limits), `"msecomb1"` (the smaller
#'   of mserd and msesum), `"msecomb2"` (per side, the median of mserd,
#'   msesum and msetwo), and the CER-optimal versions `"cerrd"`, `"certwo"`,
#'   `"cersum"`, `"cercomb1"`, `"cercomb2"` (the MSE bandwidth `h` times
#'   `N^(-p / ((3 + p)(3 + 2p)))`).
#' @param vce `"nn"` (default), `"hc0"`, `"hc1"`, `"hc2"` or `"hc3"`.
#' @param cluster `NULL` or a cluster column (CR1 standard errors).
#' @param weightsname `NULL` or a column of non-negative weights multiplying
#'   the kernel weights.
#' @param h The main bandwidth: one number, or two (left, right); `NULL`
#'   (default) selects it with `bwselect`.
#' @param b The bias bandwidth: one number or two; by default `h / rho`
#'   when `h` is given (so `b = h` unless `rho` is), else selected.
#' @param rho `NULL` or a positive number: `b = h / rho`.
#' @param alpha The level of the confidence intervals is `1 - alpha`
#'   (default 0.05, rdrobust's `level = 95`).
#' @param nnmatch The number of neighbours of `vce = "nn"` (default 3).
#' @param masspoints `"adjust"` (default), `"check"` or `"off"`, as
#'   rdrobust: with `"adjust"` the pilot bandwidth counts distinct values of
#'   `x`, and when more than 20% of the observations on a side repeat a
#'   value, the bandwidths are kept above the distance to the 10th distinct
#'   value (unless `bwcheck` says otherwise); `"check"` only warns.
#' @param bwcheck `NULL` or a positive whole number: the selected
#'   bandwidths cover at least this many distinct values of `x` on each side.
#' @param bwrestrict `TRUE` (default): the selected bandwidths do not exceed
#'   the range of `x`.
#' @param stdvars `TRUE` (default): `x` and `y` are standardised before the
#'   bandwidth selection (the bandwidths are rescaled after; the estimates
#'   do not depend on it).
#' @param scaleregul The scale of the selector's regularisation term
#'   (default 1; 0 removes it).
#' @return An object of class `c("rd_robust", "dd_fit")`: `tidy()` has the
#'   rows `conventional`, `bias-corrected` (the bias-corrected estimate with
#'   the conventional standard error) and `robust` (the bias-corrected
#'   estimate with the robust standard error), as rdrobust reports them;
#'   `bandwidths` (h and b, left and right, and the pilot bandwidth),
#'   `counts` (observations and those within h and b on each side),
#'   `sides` (the estimates on each side and their bias), `coef_covs`
#'   (the covariates' coefficients), and for a fuzzy design `first_stage`
#'   and `reduced_form` (tables with the same three rows). `vcov()` is the
#'   covariance of the three rows from the observations' influence on them
#'   (`inf`).
#' @references Calonico, S., Cattaneo, M. D. and Titiunik, R. (2014).
#'   Robust nonparametric confidence intervals for regression-discontinuity
#'   designs. Econometrica 82(6), 2295-2326.
#'
#'   Calonico, S., Cattaneo, M. D., Farrell, M. H. and Titiunik, R. (2019).
#'   Regression discontinuity designs using covariates. Review of Economics
#'   and Statistics 101(3), 442-451.
#'
#'   Calonico, S., Cattaneo, M. D. and Farrell, M. H. (2020). Optimal
#'   bandwidth choice for robust bias-corrected inference in regression
#'   discontinuity designs. Econometrics Journal 23(2), 192-210.
#' @examples
#' set.seed(1)
#' d <- data.frame(x = runif(2000, -1, 1))
#' d$y <- 0.5 + 0.8 * d$x - 0.3 * d$x^2 + 0.4 * (d$x >= 0) + rnorm(2000, sd = 0.3)
#' fit <- rd_robust(d, "y", "x")
#' fit
#' tidy(fit)
#' fit$bandwidths
#' # a fuzzy design: the treatment jumps by 0.6 at the cutoff
#' d$t <- as.numeric(runif(2000) < 0.2 + 0.6 * (d$x >= 0))
#' d$y2 <- 0.5 + d$x + 0.7 * d$t + rnorm(2000, sd = 0.3)
#' rd_robust(d, "y2", "x", fuzzy = "t", bwselect = "msetwo")
#' @export
rd_robust <- function(data, yname, xname, c = 0, fuzzy = NULL, covs = NULL, p = 1L, q = p + 1L, deriv = 0L,
                      kernel = "triangular", bwselect = "mserd", vce = "nn", cluster = NULL, weightsname = NULL,
                      h = NULL, b = NULL, rho = NULL, alpha = 0.05, nnmatch = 3L, masspoints = "adjust",
                      bwcheck = NULL, bwrestrict = TRUE, stdvars = TRUE, scaleregul = 1) {
  call <- match.call()
  # as rdrobust: a derivative without an order gets the next order up
  if (missing(p) && is.numeric(deriv) && length(deriv) == 1L && !is.na(deriv) && deriv > 0) p <- deriv + 1L
  st <- dd_rd_settings(p, q, deriv, kernel, bwselect, vce, alpha, nnmatch, masspoints, bwcheck, bwrestrict,
                       stdvars, scaleregul, cluster)
  c <- dd_rd_cutoff(c)
  dat <- dd_rd_data(data, list(yname = yname, xname = xname, fuzzy = fuzzy, cluster = cluster,
                               weightsname = weightsname), covs = covs, c = c)
  x <- dat$xname; y <- dat$yname
  dd_check_outcome(y, yname)
  # sort by the running variable (stable: ties keep their order)
  o <- order(x, method = "radix")
  x <- x[o]; y <- y[o]
  cnt <- dd_rd_sides(x, c, xname, need = 1L, sorted = TRUE)
  Z <- dd_rd_drop_collinear(dat$Z)
  T <- if (is.null(dat$fuzzy)) NULL else dat$fuzzy[o]
  onesided <- FALSE
  if (!is.null(T)) {
    l <- x < c
    var0 <- function(v) if (length(v) < 2L) 0 else stats::var(v)
    vT <- c(var0(T[l]), var0(T[!l]))
    if (all(vT == 0) && abs(mean(T[l]) - mean(T[!l])) < sqrt(.Machine$double.eps))
      dd_stop("`fuzzy` = \"%s\" does not vary and does not jump at the cutoff: the fuzzy design is not identified.", fuzzy)
    # compliance perfect on one side: the bandwidths are selected as for a
    # sharp design (rdrobust's rule)
    onesided <- any(vT == 0)
  }
  bw <- dd_rd_check_bw(h, b, rho)
  if (!is.null(Z)) Z <- Z[o, , drop = FALSE]
  fw <- if (is.null(dat$weightsname)) NULL else dat$weightsname[o]
  cl <- if (is.null(dat$cluster)) NULL else dat$cluster[o]
  st$dT <- as.integer(!is.null(T)); st$dZ <- if (is.null(Z)) 0L else ncol(Z)
  N <- length(x)
  l <- x < c
  if (!is.null(cl)) {
    st$n_clusters_sides <- c(length(unique(cl[l])), length(unique(cl[!l])))
    if (min(st$n_clusters_sides) < 2L)
      dd_stop("`cluster` = \"%s\" has a single cluster on the %s of the cutoff; clustered standard errors need at least two on each side (the sides are separate samples).",
              cluster, c("left", "right")[which.min(st$n_clusters_sides)], .code = "ONE_CLUSTER")
  }
  mass <- 1 - cnt[c("M_l", "M_r")] / cnt[c("N_l", "N_r")]
  if (st$masspoints != "off" && any(mass >= 0.2)) {
    warning(sprintf("Mass points in `xname` = \"%s\": %.0f%% and %.0f%% of the observations left and right of the cutoff repeat a value.%s",
                    xname, 100 * mass[1], 100 * mass[2],
                    if (st$masspoints == "check") " Consider masspoints = \"adjust\"." else ""), call. = FALSE)
    if (is.null(st$bwcheck) && st$masspoints == "adjust") st$bwcheck <- 10L
  }
  c_bw <- NA_real_
  sel <- "manual"
  if (is.null(bw$h) && N < 20L) {
    warning(sprintf("Only %d observations: too few to select a bandwidth; h is the largest distance to the cutoff.", N),
            call. = FALSE)
    bw$h <- rep(max(c - x[1], x[N] - c), 2)
    bw$b <- if (is.null(rho)) bw$h else bw$h / rho
  } else if (is.null(bw$h)) {
    std <- st$stdvars
    x_sd <- if (std) dd_rd_sd(x) else 1
    y_sd <- if (std) dd_rd_sd(y) else 1
    xs <- x / x_sd; cs <- c / x_sd
    Ts <- if (onesided) NULL else T
    side <- function(i) {
      D <- cbind(y[i] / y_sd, Ts[i], Z[i, , drop = FALSE])
      dd_rd_side(xs[i], cs, D, fw[i], cl[i], uniq = TRUE)
    }
    sts <- st
    if (onesided) sts$dT <- 0L
    s <- dd_rd_bwselect(side(l), side(!l), sts, st$bwselect, x_sd)
    bw$h <- s$bw[1:2]
    bw$b <- if (is.null(rho)) s$bw[3:4] else bw$h / rho
    c_bw <- s$c_bw
    sel <- st$bwselect
  }
  fit <- dd_rd_estimate(x, y, T, Z, fw, cl, c, bw$h, bw$b, st)
  dd_rd_result(fit, st, call, yname, xname, fuzzy, c, bw, c_bw, sel, cnt, dat, Z, o)
}

# The side data for C_rd_lp: d = x - c (sorted), D = (y[, T], Z), weights,
# clusters, sizes, the range and the distinct distances to the cutoff in
# increasing order
dd_rd_side <- function(x, c, D, fw, cl, uniq = FALSE) {
  d <- x - c
  # d is sorted: its distinct values' distances to the cutoff, nearest first
  # (decreasing d on the left, increasing on the right)
  u <- if (!uniq) NULL else if (d[length(d)] < 0) rev(-d[c(TRUE, d[-1L] != d[-length(d)])])
       else d[c(TRUE, d[-1L] != d[-length(d)])]
  list(d = d, D = dd_double(as.matrix(D)), fw = if (is.null(fw)) NULL else as.double(fw), cl = cl, N = length(d),
       M = length(u), range = max(abs(d[c(1L, length(d))])), uniq = u)
}

dd_rd_settings <- function(p, q, deriv, kernel, bwselect, vce, alpha, nnmatch, masspoints, bwcheck, bwrestrict,
                           stdvars, scaleregul, cluster) {
  p <- dd_rd_whole(p, "p", 0, 8)
  q <- dd_rd_whole(q, "q", 1, 9)
  deriv <- dd_rd_whole(deriv, "deriv", 0, 8)
  if (q <= p) dd_stop("`q` = %d must be larger than `p` = %d.", q, p)
  if (deriv > p) dd_stop("`deriv` = %d must not exceed `p` = %d.", deriv, p)
  sels <- c("mserd", "msetwo", "msesum", "msecomb1", "msecomb2", "cerrd", "certwo", "cersum", "cercomb1", "cercomb2")
  bwselect <- dd_match_arg(bwselect, sels, "bwselect")
  vce <- dd_match_arg(vce, c("nn", "hc0", "hc1", "hc2", "hc3"), "vce")
  if (!is.null(cluster) && vce %in% c("hc2", "hc3"))
    dd_stop("`vce` = \"%s\" with `cluster`: clustered standard errors are CR1 (vce \"nn\", \"hc0\" or \"hc1\"); rdrobust's CR2 and CR3 are not offered.", vce)
  kernel <- dd_rd_kernel(kernel)
  if (!is.null(bwcheck)) bwcheck <- dd_rd_whole(bwcheck, "bwcheck", 1, .Machine$integer.max)
  scaleregul <- dd_check_positive_or_zero(scaleregul, "scaleregul")
  list(p = p, q = q, deriv = deriv, kernel = kernel, kern = dd_rd_kernels[[kernel]], bwselect = bwselect,
       vce = vce, vce_code = if (!is.null(cluster)) 1L else match(vce, c("nn", "hc0", "hc1", "hc2", "hc3")) - 1L,
       alpha = dd_check_alpha(alpha), nnmatch = dd_rd_whole(nnmatch, "nnmatch", 1, 1e6),
       masspoints = dd_match_arg(masspoints, c("adjust", "check", "off"), "masspoints"), bwcheck = bwcheck,
       bwrestrict = dd_check_flag(bwrestrict, "bwrestrict"), stdvars = dd_check_flag(stdvars, "stdvars"),
       scaleregul = scaleregul, cluster = !is.null(cluster), cluster_name = cluster)
}

dd_check_positive_or_zero <- function(x, arg) {
  if (!is.numeric(x) || length(x) != 1L || !is.finite(x) || x < 0)
    dd_stop("`%s` must be one finite number >= 0; got %s.", arg, dd_show(x))
  as.double(x)
}

# h, b: NULL, one positive number or two (left, right); rho: NULL or positive
dd_rd_check_bw <- function(h, b, rho) {
  if (!is.null(b) && is.null(h))
    dd_stop("`b` = %s is given without `h`: give both, or neither (rdrobust ignores `b` then).", dd_show(b))
  h <- dd_rd_pair(h, "h"); b <- dd_rd_pair(b, "b")
  if (!is.null(rho) && (!is.numeric(rho) || length(rho) != 1L || !is.finite(rho) || rho <= 0))
    dd_stop("`rho` must be one positive number; got %s.", dd_show(rho))
  if (!is.null(h) && is.null(b)) b <- if (is.null(rho)) h else h / rho
  if (!is.null(h) && !is.null(rho) && !is.null(b)) b <- h / rho
  list(h = h, b = b)
}

# Collinear covariates: dropped (with a message) as rdrobust's covs_drop:
# columns in order of the length of their names, pivoted QR (tolerance 1e-7)
dd_rd_drop_collinear <- function(Z) {
  if (is.null(Z)) return(NULL)
  ord <- order(nchar(colnames(Z)))
  r <- qr(Z[, ord, drop = FALSE], tol = 1e-7)
  if (r$rank == ncol(Z)) return(Z)
  keep <- sort(ord[r$pivot[seq_len(r$rank)]])
  message(sprintf("Dropped collinear covariate%s %s.", if (ncol(Z) - r$rank > 1L) "s" else "",
                  paste(colnames(Z)[-keep], collapse = ", ")))
  Z[, keep, drop = FALSE]
}

# sd() of a complete vector, without var()'s machinery (two passes, as var)
dd_rd_sd <- function(x) sqrt(sum((x - mean(x))^2) / (length(x) - 1L))

# quantile(x, prob, type = 2) of a sorted complete vector
dd_rd_q2 <- function(x, prob) {
  n <- length(x); j <- floor(n * prob); g <- n * prob - j
  if (g > 0) x[j + 1] else (x[max(j, 1)] + x[min(j + 1, n)]) / 2
}
