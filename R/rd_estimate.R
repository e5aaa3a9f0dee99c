# rd_robust()'s estimation at given bandwidths (rdrobust 4.1's, after the
# selection) and its result. Each side is fitted by C_rd_lp (src/rd.c);
# the standard errors come from the observations' influence on the
# estimates through the influence-function layer (dd_if_result).

dd_rd_estimate <- function(x, y, T, Z, fw, cl, c, h, b, st) {
  l <- x < c
  D <- cbind(y, T, Z)
  mk <- function(i) dd_rd_side(x[i], c, D[i, , drop = FALSE], fw[i], cl[i])
  sides <- list(left = mk(l), right = mk(!l))
  p <- st$p; q <- st$q; nu <- st$deriv; dT <- st$dT; m <- ncol(D)
  fits <- list()
  for (k in 1:2) {
    # with one column (sharp, no covariates) the variance terms come with the fit
    f <- dd_rd_lp(sides[[k]], h[k], b[k], p, q, nu, if (m == 1L) 1, st)
    if (f$counts[1] == 0L)
      dd_stop("no observation within the bandwidth h = %s on the %s of the cutoff; increase `h`.", format(h[k]),
              names(sides)[k])
    if (!f$ok)
      dd_stop("too few distinct values of the running variable with positive weight on the %s of the cutoff (%d within h = %s, %d within b = %s) to fit polynomials of orders p = %d and q = %d; increase `h` and `b`.",
              names(sides)[k], f$counts[3], format(h[k]), f$counts[4], format(b[k]), p, q)
    fits[[k]] <- f
  }
  fac <- factorial(nu)
  jump <- function(what) fits[[2]][[what]][nu + 1, ] - fits[[1]][[what]][nu + 1, ]
  jp <- jump("beta_p"); jb <- jump("beta_bc")
  gam <- NULL
  z <- if (st$dZ) (2 + dT):m else integer()
  if (st$dZ) {
    A <- Reduce(`+`, lapply(fits, function(f) f$DWD - crossprod(f$U, f$beta_p)))
    gam <- dd_rd_gamma(A[z, z, drop = FALSE], A[z, seq_len(1 + dT), drop = FALSE])
    dimnames(gam) <- list(colnames(Z), c("y", if (dT) "fuzzy"))
  }
  # the combination of the columns (y[, T], Z) that is the outcome's jump
  # (sY), the treatment's (sT) and their ratio's linearisation (s)
  sY <- numeric(m); sY[1] <- 1; if (st$dZ) sY[z] <- -gam[, 1]
  sT <- NULL
  if (dT) { sT <- numeric(m); sT[2] <- 1; if (st$dZ) sT[z] <- -gam[, 2] }
  side_tau <- function(s, what) fac * vapply(fits, function(f) sum(s * f[[what]][nu + 1, ]), 0)
  tY <- c(cl = fac * sum(sY * jp), bc = fac * sum(sY * jb))
  s <- sY
  if (dT) {
    tT <- c(cl = fac * sum(sT * jp), bc = fac * sum(sT * jb))
    tau_cl <- tY[["cl"]] / tT[["cl"]]
    sl <- c(1 / tT[["cl"]], -tY[["cl"]] / tT[["cl"]]^2)
    tau_bc <- tau_cl - sum(sl * c(tY[["cl"]] - tY[["bc"]], tT[["cl"]] - tT[["bc"]]))
    s <- sl[1] * sY + sl[2] * sT
    bias <- sl[1] * (side_tau(sY, "beta_p") - side_tau(sY, "beta_bc")) +
            sl[2] * (side_tau(sT, "beta_p") - side_tau(sT, "beta_bc"))
  } else {
    tau_cl <- tY[["cl"]]; tau_bc <- tY[["bc"]]
    bias <- side_tau(sY, "beta_p") - side_tau(sY, "beta_bc")
  }
  infl <- function(s) dd_rd_influence(sides, fits, s, h, b, st, fac, length(x), l)
  # the fitted local polynomial of the (covariate-adjusted) outcome on
  # each side, and 20 equal-width bins of it within h on each side (plots)
  curve <- lapply(fits, function(f) drop(f$beta_p %*% sY))
  bins <- do.call(rbind, lapply(1:2, function(k) {
    sd <- sides[[k]]
    lim <- if (k == 1L) c(-h[1], 0) else c(0, h[2])
    inw <- sd$d >= lim[1] & sd$d <= lim[2]
    yy <- drop(sd$D[inw, , drop = FALSE] %*% sY)
    br <- seq(lim[1], lim[2], length.out = 21L)
    j <- findInterval(sd$d[inw], br, rightmost.closed = TRUE, all.inside = TRUE)
    n <- tabulate(j, 20L)
    u <- sort(unique(j))
    data.frame(side = names(sides)[k], x = c + (br[u] + br[u + 1L]) / 2, y = rowsum(yy, j)[, 1] / n[u], n = n[u])
  }))
  out <- list(tau = c(tau_cl, tau_bc), U = infl(s), gamma = gam, fits = fits, sides = sides, curve = curve,
              bins = bins,
              side_cl = side_tau(sY, "beta_p"), side_bc = side_tau(sY, "beta_bc"), bias = bias)
  if (dT) {
    out$first <- list(tau = tT, U = infl(sT))
    out$reduced <- list(tau = tY, U = infl(sY))
  }
  out
}

# The observations' influence on the conventional and robust estimates of
# the combination s (N x 2, sorted order): the nu-th coefficient's terms of
# each side's sandwich, times nu!, with CR1's factor folded in when clustered
# (the robust part from the order-q fit itself when h = b on both sides, as
# rdrobust)
dd_rd_influence <- function(sides, fits, s, h, b, st, fac, N, l) {
  U <- matrix(0, N, 2, dimnames = list(NULL, c("conventional", "robust")))
  hb <- all(h == b)
  pos <- list(which(l), which(!l))
  for (k in 1:2) {
    sd <- sides[[k]]
    g <- if (!is.null(fits[[k]]$psi_cl) && identical(s, 1)) fits[[k]]
         else dd_rd_lp(sd, h[k], b[k], st$p, st$q, st$deriv, s, st)
    pc <- g$psi_cl; pr <- g$psi_rb; kr <- st$q + 1; idr <- g$idx
    if (st$cluster && hb) {
      g2 <- dd_rd_lp(sd, h[k], h[k], st$q, -1L, st$deriv, s, st)
      pr <- g2$psi_cl; idr <- g2$idx
    }
    if (st$cluster) {
      cw <- sd$cl[g$idx]
      G <- length(unique(cw)); n <- length(cw)
      if (G < 2L)
        dd_stop("`cluster` = \"%s\" has a single cluster within the bandwidth on the %s of the cutoff; clustered standard errors need at least two on each side.",
                st$cluster_name, names(sides)[k], .code = "ONE_CLUSTER")
      pc <- pc * sqrt((n - 1) / (n - st$p - 1) * G / (G - 1))
      pr <- pr * sqrt((n - 1) / (n - kr) * G / (G - 1))
    }
    U[pos[[k]][g$idx], 1] <- fac * pc
    U[pos[[k]][idr], 2] <- fac * pr
  }
  U
}

# The fit: the three rows (conventional, bias-corrected, robust) through
# the influence-function layer, with clusters counted per side
# scale: the outcome's standard deviation (over the first stage's jump for
# a fuzzy ratio): a standard error below 1e-10 of it is rounding error (an
# outcome that is an exact polynomial of the running variable near the
# cutoff), reported as NA rather than as a confident interval
dd_rd_table <- function(tau, U, cid, st, scale) {
  # the conventional and the robust influence functions; the bias-corrected
  # row has the conventional one (rdrobust's rows)
  r <- dd_if_result(stats::setNames(tau, colnames(U)), U, 1, dd_spec(alpha = st$alpha), integer(),
                    "local-polynomial influence functions", NULL, cluster = cid)
  terms <- c("conventional", "bias-corrected", "robust")
  k <- c(1L, 1L, 2L)
  V <- r$V[k, k]
  dimnames(V) <- list(terms, terms)
  se <- sqrt(diag(V))
  zero <- !is.finite(se) | se <= 1e-10 * scale
  se[zero] <- NA_real_
  list(tab = dd_if_table(terms, c(tau[1], tau[2], tau[2]), se, st$alpha), V = V, zero = any(zero))
}

dd_rd_result <- function(fit, st, call, yname, xname, fuzzy, c, bw, c_bw, sel, cnt, dat, Z, o) {
  l <- dat$xname[o] < c
  cid <- NULL
  if (st$cluster) {
    cs <- dat$cluster[o]
    u <- match(cs, unique(cs))
    cid <- ifelse(l, u, u + length(unique(cs)))
  }
  sdy <- dd_rd_sd(dat$yname)
  main <- dd_rd_table(fit$tau, fit$U, cid, st,
                      if (is.null(fit$first)) sdy else sdy / max(abs(fit$first$tau[["cl"]]), 1e-300))
  terms <- c("conventional", "bias-corrected", "robust")
  tab <- main$tab
  sub_tab <- function(z, scale) dd_rd_table(z$tau, z$U, cid, st, scale)$tab
  # the influence functions in the data's row order (rows used)
  inf <- fit$U[order(o), c(1L, 1L, 2L)]
  dimnames(inf) <- list(NULL, terms)
  counts <- data.frame(side = c("left", "right"), n = unname(cnt[c("N_l", "N_r")]),
                       n_h = vapply(fit$fits, function(f) f$counts[1], 0L),
                       n_b = vapply(fit$fits, function(f) f$counts[2], 0L),
                       distinct = unname(cnt[c("M_l", "M_r")]))
  bands <- data.frame(side = c("left", "right"), h = bw$h, b = bw$b)
  sides <- data.frame(side = c("left", "right"), conventional = fit$side_cl, bias_corrected = fit$side_bc,
                      bias = as.vector(fit$bias))
  design <- if (is.null(fuzzy)) "sharp" else "fuzzy"
  title <- sprintf("Regression discontinuity (%s%s): local polynomial of order %d, robust bias-corrected inference",
                   design, if (st$deriv > 0) sprintf(", derivative %d", st$deriv) else "", st$p)
  vlab <- if (st$cluster) "CR1 clustered by side" else switch(st$vce, nn = sprintf("nearest neighbours (%d)", st$nnmatch),
                                                               toupper(st$vce))
  info <- dd_info("rd_robust", title, yname, length(o), if (st$cluster) "CR1" else st$vce, vlab, Inf, st$alpha,
                  terms, n_clusters = if (st$cluster) st$n_clusters_sides,
                  notes = as.character(c(if (dat$n_dropped) sprintf("%s rows with missing values were dropped.",
                                                       dd_fmt_int(dat$n_dropped)),
                            if (main$zero) "Standard errors are zero up to rounding (the outcome is an exact polynomial of the running variable near the cutoff): reported as NA.")))
  extra <- list(inf = inf, curve = fit$curve, bins = fit$bins, xname = xname, cutoff = c, fuzzy = fuzzy, bandwidths = bands, c_bw = c_bw,
                bwselect = sel, counts = counts, sides = sides, coef_covs = fit$gamma,
                covariates = if (is.null(Z)) NULL else colnames(Z),
                settings = st[c("p", "q", "deriv", "kernel", "vce", "nnmatch", "masspoints", "bwcheck", "bwrestrict",
                                "stdvars", "scaleregul")])
  if (!is.null(fit$first)) {
    extra$first_stage <- sub_tab(fit$first, dd_rd_sd(dat$fuzzy))
    extra$reduced_form <- sub_tab(fit$reduced, sdy)
  }
  new_dd_fit("rd_robust", tab, stats::setNames(tab$estimate, terms), main$V, info, call, extra)
}

# After the table: the bandwidths, the observations on each side and in
# the windows, the fuzzy design's first stage
dd_footer.rd_robust <- function(x) {
  st <- x$settings
  bw <- x$bandwidths
  two <- function(v) if (v[1] == v[2]) format(v[1], digits = 4) else
    sprintf("%s (left), %s (right)", format(v[1], digits = 4), format(v[2], digits = 4))
  cat(sprintf("Cutoff: %s = %s; kernel %s; p = %d, q = %d; bandwidth %s\n", x$xname, format(x$cutoff), st$kernel,
              st$p, st$q, if (x$bwselect == "manual") "given" else sprintf("selected by %s", x$bwselect)))
  cat(sprintf("h = %s; b = %s\n", two(bw$h), two(bw$b)))
  n <- x$counts
  cat(sprintf("Observations left / right: %s / %s; within h: %s / %s\n", dd_fmt_int(n$n[1]), dd_fmt_int(n$n[2]),
              dd_fmt_int(n$n_h[1]), dd_fmt_int(n$n_h[2])))
  if (!is.null(x$first_stage)) {
    fs <- x$first_stage
    cat(sprintf("First stage (jump in %s): %s (robust SE %s); reduced form: %s (robust SE %s)\n", x$fuzzy,
                format(fs$estimate[1], digits = 4), format(fs$std.error[3], digits = 3),
                format(x$reduced_form$estimate[1], digits = 4), format(x$reduced_form$std.error[3], digits = 3)))
  }
  if (length(x$covariates))
    cat(sprintf("Covariates: %s\n", paste(x$covariates, collapse = ", ")))
  invisible(x)
}

# the local polynomials over their windows, for the plots: x and the fit on each side
dd_rd_curve <- function(x, n = 200L) {
  out <- lapply(1:2, function(k) {
    h <- x$bandwidths$h[k]
    d <- if (k == 1L) seq(-h, 0, length.out = n) else seq(0, h, length.out = n)
    b <- x$curve[[k]]
    data.frame(side = c("left", "right")[k], x = x$cutoff + d, fit = drop(outer(d, seq_along(b) - 1L, `^`) %*% b))
  })
  do.call(rbind, out)
}

dd_rd_plot_text <- function(x) {
  r <- x$coeftable[3, ]
  list(main = sprintf("Regression discontinuity in %s at %s = %s", x$yname, x$xname, format(x$cutoff)),
       sub = sprintf("Jump %s (bias-corrected %s; robust %g%% CI %s to %s); h = %s", format(x$coeftable$estimate[1], digits = 3),
                     format(r$estimate, digits = 3), 100 * (1 - x$alpha), format(r$conf.low, digits = 3),
                     format(r$conf.high, digits = 3), paste(format(unique(x$bandwidths$h), digits = 3), collapse = "/")),
       ylab = if (length(x$covariates)) paste(x$yname, "(adjusted for covariates)") else x$yname)
}

#' Plot a regression-discontinuity fit
#'
#' `type = "fit"` (default) draws the outcome's means in 20 equal-width bins
#' within the bandwidth on each side of the cutoff, the local polynomial
#' fitted on each side, and the cutoff; the jump and its robust interval
#' are in the subtitle (with covariates, the outcome net of their common
#' coefficients). `type = "coef"` draws the three estimates with their
#' intervals, as for other fits. For binned scatter plots of the whole
#' sample, see [rd_plot()].
#' @param x,object An [rd_robust()] fit.
#' @param type `"fit"` or `"coef"`.
#' @param main,xlab,ylab Titles (defaults describe the fit).
#' @param col Colours of the left and right sides.
#' @param ... Passed to the base plot (`plot()`); not used by `autoplot()`.
#' @return `plot()`: `x`, invisibly; `autoplot()`: a ggplot.
#' @examples
#' set.seed(1)
#' d <- data.frame(x = runif(1000, -1, 1))
#' d$y <- d$x + 0.5 * (d$x >= 0) + rnorm(1000, sd = 0.3)
#' fit <- rd_robust(d, "y", "x")
#' plot(fit)
#' plot(fit, type = "coef")
#' @export
plot.rd_robust <- function(x, type = c("fit", "coef"), main = NULL, xlab = NULL, ylab = NULL,
                           col = c("#1B6CA8", "#C0392B"), ...) {
  type <- dd_match_arg(type[1], c("fit", "coef"), "type")
  if (type == "coef") return(plot.dd_fit(x, main = main, xlab = xlab, ylab = ylab, col = col, ...))
  tx <- dd_rd_plot_text(x)
  cv <- dd_rd_curve(x)
  bn <- x$bins
  op <- graphics::par(mar = c(4.2, 4.2, 4, 1), las = 1)
  on.exit(graphics::par(op))
  graphics::plot.default(range(c(bn$x, cv$x)), range(c(bn$y, cv$fit)), type = "n", main = main %||% tx$main,
                         xlab = xlab %||% x$xname, ylab = ylab %||% tx$ylab, ...)
  graphics::mtext(tx$sub, side = 3, line = 0.4, cex = 0.85)
  graphics::abline(v = x$cutoff, lty = 2, col = "grey50")
  for (k in 1:2) {
    sd <- c("left", "right")[k]
    graphics::points(bn$x[bn$side == sd], bn$y[bn$side == sd], pch = 19, col = grDevices::adjustcolor(col[k], 0.7))
    graphics::lines(cv$x[cv$side == sd], cv$fit[cv$side == sd], col = col[k], lwd = 2)
  }
  invisible(x)
}

#' @rdname plot.rd_robust
#' @exportS3Method ggplot2::autoplot
autoplot.rd_robust <- function(object, type = c("fit", "coef"), ...) {
  type <- dd_match_arg(type[1], c("fit", "coef"), "type")
  if (type == "coef") return(autoplot.dd_fit(object, ...))
  dd_check_dots(list(...), "autoplot()")
  dd_need_ggplot()
  gg <- asNamespace("ggplot2")
  tx <- dd_rd_plot_text(object)
  col <- c(left = "#1B6CA8", right = "#C0392B")
  gg$ggplot(object$bins, gg$aes(x = .data$x, y = .data$y, colour = .data$side)) +
    gg$geom_vline(xintercept = object$cutoff, linetype = 2, colour = "grey50") +
    gg$geom_point(alpha = 0.7) +
    gg$geom_line(data = dd_rd_curve(object), gg$aes(y = .data$fit), linewidth = 1) +
    gg$scale_colour_manual(values = col, guide = "none") +
    gg$labs(x = object$xname, y = tx$ylab, title = tx$main, subtitle = tx$sub)
}
