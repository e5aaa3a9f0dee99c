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
#' @param tname Period column (numeric).
#' @param idname Unit column.
#' @param treatname Binary treatment column (0/1, absorbing: once treated a
#'   unit stays treated); or give `gname`.
#' @param gname First treated period of each unit (0, `Inf` or `NA`: never);
#'   alternative to `treatname`.
#' @return An object of class `bacon_decomp`: `two_by_twos` (data frame with
#'   `treated`, `untreated` (timing groups; `Inf` = never treated),
#'   `estimate`, `weight`, `type`), `beta_twfe` (the weighted sum, equal to
#'   the TWFE coefficient). `summary()` gives the weight and weighted average
#'   estimate by type; `plot()` the estimates against their weights.
#' @references Goodman-Bacon, A. (2021). Difference-in-differences with
#'   variation in treatment timing. Journal of Econometrics 225(2).
#' @examples
#' d <- read.csv(system.file("extdata", "sim_panel.csv", package = "diffdiff"))
#' b <- bacon_decomp(d, yname = "y", tname = "year", idname = "id", gname = "first_treat")
#' b
#' summary(b)
#' plot(b)
#' @export
bacon_decomp <- function(data, yname, tname, idname, treatname = NULL, gname = NULL) {
  call <- match.call()
  dd_check_data(data)
  if (is.null(treatname) == is.null(gname))
    dd_stop("give exactly one of `treatname` (a 0/1 treatment column) and `gname` (first treated period).")
  role <- if (!is.null(treatname)) c(treatname = treatname) else c(gname = gname)
  p <- dd_prepare(data, yname, c(c(idname = idname, tname = tname), role),
                  na_ok = if (is.null(gname)) character() else "gname")
  if (p$n_dropped) dd_stop("the decomposition needs a balanced panel without missing values; %d row(s) have NA in the variables used.", p$n_dropped)
  tt <- dd_check_numeric_col(p$vals$tname, "tname", tname)
  idc <- dd_codes(p$vals$idname); tc <- dd_codes(tt)
  dd_check_unique_codes(idc, tc, p$vals$idname, tt)
  N <- attr(idc, "nlev"); T <- attr(tc, "nlev")
  if (T < 2L) dd_check_periods(tt, tname)
  if (length(tt) != N * T)
    dd_stop("the Bacon decomposition needs a balanced panel (every unit in every period); the data have %d units, %d periods and %d rows.",
            N, T, length(tt))
  first <- dd_first_rows(idc)
  if (!is.null(treatname)) {
    d <- dd_check_numeric_col(p$vals$treatname, "treatname", treatname)
    dd_check_binary(d, "treatname", treatname)
    # first treated period per unit; treatment must be absorbing
    gt <- rep(Inf, N)
    on <- which(d == 1)
    if (length(on)) {
      m <- tapply(tt[on], idc[on], min)
      gt[as.integer(names(m)) + 1L] <- m
    }
    if (any(d == 0 & tt >= gt[idc + 1L]))
      dd_stop("`treatname` = \"%s\" must be absorbing (once 1, always 1 for the unit); it switches back to 0.", treatname)
  } else {
    g <- dd_check_numeric_col(p$vals$gname, "gname", gname)
    dd_check_constant_within(g, p$vals$idname, "gname", gname, code = idc)
    gt <- g[first]
    gt[is.na(gt) | gt == 0 | !is.finite(gt)] <- Inf
    gt[gt > max(tt)] <- Inf                     # treated after the panel: never treated in it
    gt[gt < min(tt)] <- min(tt)                 # treated before the panel: always treated
    d <- as.double(tt >= gt[idc + 1L])
  }
  groups <- sort(unique(gt))
  t0 <- min(tt)
  if (all(is.infinite(groups)) || all(groups == t0 | is.infinite(groups)))
    dd_stop("no unit changes treatment status within the panel; there is nothing to decompose.")
  # cell means of y and treatment shares by timing group x period (balanced)
  grp <- match(gt, groups)[idc + 1L]
  ybar <- matrix(tapply(p$y, list(grp, tc), mean), length(groups))
  ng <- tabulate(match(gt, groups), length(groups))           # units per group
  periods <- sort(unique(tt))
  pairs <- expand.grid(k = seq_along(groups), l = seq_along(groups))
  pairs <- pairs[pairs$k != pairs$l & is.finite(groups[pairs$k]) & groups[pairs$k] != t0, ]
  out <- lapply(seq_len(nrow(pairs)), function(i) {
    k <- pairs$k[i]; l <- pairs$l[i]; gk <- groups[k]; gl <- groups[l]
    win <- if (is.infinite(gl)) rep(TRUE, T) else if (gk < gl) periods < gl else periods >= gl
    post <- periods >= gk
    a <- win & post; b <- win & !post
    est <- (mean(ybar[k, a]) - mean(ybar[k, b])) - (mean(ybar[l, a]) - mean(ybar[l, b]))
    # weights as the paper / bacondecomp: rows of the pair's subsample
    Tw <- sum(win)
    nk <- ng[k] * Tw; nl <- ng[l] * Tw
    Dk <- mean(periods[win] >= gk); Dl <- mean(periods[win] >= gl)
    nkl <- nk / (nk + nl)
    w <- if (is.infinite(gl)) (nk + nl)^2 * nkl * (1 - nkl) * Dk * (1 - Dk)
         else if (gk < gl) ((nk + nl) * (1 - Dl))^2 * nkl * (1 - nkl) * (Dk - Dl) / (1 - Dl) * (1 - Dk) / (1 - Dl)
         else {
           # the earlier group (l) is the control; bacondecomp's D_k, D_l refer to (l, k)
           n1 <- nl; n2 <- nk; s <- n1 / (n1 + n2); D1 <- Dl; D2 <- Dk
           ((n1 + n2) * D1)^2 * s * (1 - s) * (D2 / D1) * (D1 - D2) / D1
         }
    data.frame(treated = gk, untreated = gl, estimate = est, weight = w)
  })
  tb <- do.call(rbind, out)
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
#' @param ... Ignored (`plot`: passed to [graphics::plot.default()]).
#' @export
print.bacon_decomp <- function(x, ...) {
  cat("Goodman-Bacon decomposition of the TWFE estimate (", x$yname, ")\n", sep = "")
  cat(sprintf("%d units x %d periods; %d 2x2 comparisons; TWFE coefficient %.6g\n\n", x$n_units, x$n_periods,
              nrow(x$two_by_twos), x$beta_twfe))
  print(summary(x), row.names = FALSE)
  invisible(x)
}

#' @rdname bacon_decomp
#' @export
summary.bacon_decomp <- function(object, ...) {
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
plot.bacon_decomp <- function(x, ...) {
  tb <- x$two_by_twos
  types <- c("Earlier vs Later Treated", "Later vs Earlier Treated", "Treated vs Untreated", "Later vs Always Treated")
  col <- c("#1B6CA8", "#C0392B", "#2E8B57", "#8E44AD")[match(tb$type, types)]
  pch <- c(16, 17, 15, 18)[match(tb$type, types)]
  op <- graphics::par(mar = c(4.2, 4.2, 3, 1), las = 1)
  on.exit(graphics::par(op))
  graphics::plot.default(tb$weight, tb$estimate, col = col, pch = pch, xlab = "Weight", ylab = "2x2 DiD estimate",
                         main = paste("Goodman-Bacon decomposition:", x$yname), ...)
  graphics::abline(h = x$beta_twfe, lty = 2, col = "grey40")
  present <- types %in% tb$type
  graphics::legend("topright", legend = c(types[present], "TWFE estimate"), bty = "n", cex = 0.85,
                   col = c(c("#1B6CA8", "#C0392B", "#2E8B57", "#8E44AD")[present], "grey40"),
                   pch = c(c(16, 17, 15, 18)[present], NA), lty = c(rep(NA, sum(present)), 2))
  invisible(x)
}
