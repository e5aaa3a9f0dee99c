# Local-linear regression at a point with robust bias-corrected inference,
# as nprobust's lprobust(y, x, eval, p = 1, kernel, bwselect = "mse-dpi",
# vce = "nn"): the building block of did_had(). The fit and the bandwidth
# selector are in src/locpoly.c. Returns h, b (= h), N (the window),
# tau.us, tau.bc, se.us, se.rb.
dd_lprobust <- function(y, x, eval = 0, kernel = c("epa", "tri", "uni", "gau"), h = NULL) {
  kernel <- match.arg(kernel)
  ok <- !is.na(x) & !is.na(y)
  x <- as.double(x[ok]); y <- as.double(y[ok])
  N <- length(x)
  o <- order(x)
  x <- x[o]; y <- y[o]
  r <- rle(x)
  dups <- rep(r$lengths, r$lengths)
  dupsid <- sequence(r$lengths)
  bwcheck <- min(21L, N)
  bw_min <- sort(abs(x - eval))[bwcheck]
  bw_max <- max(abs(eval - min(x)), abs(eval - max(x)))
  Cc <- c(epa = 2.34, uni = 1.843, tri = 2.576, gau = 1.06)[[kernel]]
  iqr <- stats::quantile(x, 0.75) - stats::quantile(x, 0.25)
  cbw <- max(min(Cc * min(stats::sd(x), iqr / 1.349) * N^(-1 / 5), bw_max), bw_min)
  k <- match(kernel, c("epa", "tri", "uni", "gau")) - 1
  out <- .Call(C_lp_fit, x, y, as.integer(dups), as.integer(dupsid),
               as.double(c(eval, k, 3, if (is.null(h)) -1 else h, cbw, bw_min, bw_max, max(x) - min(x))))
  stats::setNames(out, c("h", "b", "N", "tau.us", "tau.bc", "se.us", "se.rb"))
}
