# Local-linear regression at a point with robust bias-corrected inference,
# as nprobust's lprobust(y, x, eval, p = 1, kernel, bwselect, vce = "nn"):
# the building block of did_had(). The fit and the MSE-optimal (direct
# plug-in) bandwidth are in src/locpoly.c; "imse-dpi" averages that
# selector's variance and bias constants over 30 points from min(x) to
# max(x), "ce-rot" rescales the MSE-optimal h by N^(-1/20); "mse-rot" is the
# rule of thumb from a global quartic's residual variance, a kernel density
# at c and the second derivative of a local quartic (with the kernels'
# exact one-sided moment constants), "imse-rot" averages it over 37
# quantiles of x (nprobust's rules for p = 1). Returns h, b (= h), N (the
# window), tau.us, tau.bc, se.us, se.rb; with `psi = TRUE` a list of those
# and `psi`, each observation's term (e1' invG.p Q_i) res_i of the robust
# variance (se.rb^2 = sum(psi^2); 0 outside the window; in the order of the
# complete pairs of the input): the influence function of tau.bc given x.
dd_lprobust <- function(y, x, eval = 0, kernel = c("epa", "tri", "uni", "gau"), h = NULL,
                        bwselect = c("mse-dpi", "imse-dpi", "ce-rot", "mse-rot", "imse-rot"), psi = FALSE) {
  kernel <- match.arg(kernel)
  bwselect <- match.arg(bwselect)
  ok <- !is.na(x) & !is.na(y)
  x <- as.double(x[ok]); y <- as.double(y[ok])
  N <- length(x)
  o <- order(x)
  x <- x[o]; y <- y[o]
  r <- rle(x)
  dups <- as.integer(rep(r$lengths, r$lengths))
  dupsid <- as.integer(sequence(r$lengths))
  bwcheck <- min(21L, N)
  k <- match(kernel, c("epa", "tri", "uni", "gau")) - 1
  Cc <- c(epa = 2.34, uni = 1.843, tri = 2.576, gau = 1.06)[[kernel]]
  iqr <- stats::quantile(x, 0.75) - stats::quantile(x, 0.25)
  spread <- min(stats::sd(x), iqr / 1.349) * N^(-1 / 5)
  # the selector's bounds at evaluation point c
  at <- function(c) {
    bw_min <- sort(abs(x - c))[bwcheck]
    bw_max <- max(abs(c - min(x)), abs(c - max(x)))
    c(c = c, cbw = max(min(Cc * spread, bw_max), bw_min), bw_min = bw_min, bw_max = bw_max)
  }
  call <- function(a, h, stop) .Call(C_lp_fit, x, y, dups, dupsid, as.double(a[["c"]]), as.integer(k), 3L,
                                      as.double(h), as.double(a[["cbw"]]), as.double(a[["bw_min"]]),
                                      as.double(a[["bw_max"]]), as.double(max(x) - min(x)), as.integer(stop))
  a0 <- at(eval)
  if (is.null(h) && bwselect == "imse-dpi") {
    VB <- vapply(seq(min(x), max(x), length.out = 30), function(e) call(at(e), -1, 1)[8:9], numeric(2))
    h <- (mean(VB[1, ]) / (N * mean(VB[2, ])))^(1 / 5)
  } else if (is.null(h) && bwselect == "ce-rot") {
    h <- call(a0, -1, 1)[[1]] * N^(-1 / 20)
  } else if (is.null(h) && bwselect %in% c("mse-rot", "imse-rot")) {
    # rule of thumb: V = C2 s^2 / f(c), B = C1 m2(c) / 2 (p = 1)
    C1 <- c(epa = -11 / 95, tri = -1 / 10, uni = -1 / 6, gau = -0.751938393884108)[[kernel]]
    C2 <- c(epa = 4.49798179659676, tri = 4.8, uni = 4, gau = 1.78596144619223)[[kernel]]
    cbw <- (if (kernel == "gau") 2.34 else Cc) * spread
    s2 <- sum(dd_regress(y, matrix(outer(x, 1:4, `^`), N, dimnames = list(NULL, paste0("x", 1:4))))$resid^2) / (N - 5)
    VB <- function(c) {
      f <- sum(abs(x - c) <= cbw) / (2 * N * cbw)
      hc <- max(max(x) - min(x), sort(abs(x - c))[bwcheck])
      m2 <- 2 * .Call(C_lp_poly, x, y, as.double(c), as.integer(k), as.double(hc), 4L)[3]
      c(C2 * s2 / f, C1 * m2 / 2)
    }
    v <- if (bwselect == "mse-rot") VB(eval)
         else rowMeans(vapply(stats::quantile(x, seq(0.05, 0.95, 0.025)), function(e) {
           z <- VB(e); c(z[1], 4 * z[2]^2) }, numeric(2)))
    h <- if (bwselect == "mse-rot") (v[1] / (4 * v[2]^2 * N))^(1 / 5) else (v[1] / (N * v[2]))^(1 / 5)
  }
  out <- call(a0, if (is.null(h)) -1 else h, if (psi) 2 else 0)
  est <- stats::setNames(out[1:7], c("h", "b", "N", "tau.us", "tau.bc", "se.us", "se.rb"))
  if (!psi) return(est)
  ps <- numeric(N)
  ps[o] <- out[-(1:9)]
  list(est = est, psi = ps)
}
