#' Sensitivity of a DML DiD estimate to an omitted confounder
#'
#' Bounds on ATT(g,t) (or an aggregate of them) when a confounder left out
#' of the covariates moves both the comparison units' trend and the
#' selection into treatment, after Chernozhukov, Cinelli, Newey, Sharma and
#' Syrgkanis (2022, "Long story short") applied to the doubly robust DiD
#' score as in Wang, Sant'Anna, Chernozhukov and Cinelli.
#'
#' The bias of an estimate from the short model is at most
#' `rho * sqrt(cf_y * cf_d / (1 - cf_d)) * S`, where `cf_y` is the share of
#' the comparison units' residual trend variation the confounder explains
#' (a partial R^2), `cf_d` the share of the variation of the comparison
#' term's weights (the Riesz representer) it explains, `rho` the correlation
#' of the two gaps (1: the worst case), and `S^2 = mean((1 - D) e^2) *
#' mean(a^2)` with e the residual trends and a the comparison weights of
#' the score. The interval widens each bound by its own standard error
#' (the influence function of the estimate plus or minus that of the bias).
#' The robustness value `rv` is the common strength `cf_y = cf_d` (at the given `rho`) at which
#' the bound reaches zero; `rv_alpha` the one at which the interval does.
#' An aggregate's bias is bounded by the sum of its cells' biases with the
#' absolute values of its weights (conservative).
#'
#' @param fit A [did_dml()] fit, or a [did_cs()] doubly robust panel fit
#'   (its call is re-run as `did_dml(..., folds = 1)`, which gives the same
#'   estimates and keeps the nuisance fits; the data must still be there
#'   unchanged: checked).
#' @param cf_y,cf_d The confounder's strengths, numbers in \[0, 1) (defaults
#'   0.03 each, DoubleML's).
#' @param rho The correlation of the confounding in the outcome and in the
#'   weights, in \[0, 1] (default 1).
#' @param type `NULL` (each ATT(g,t)) or an [aggregate()] type (`"simple"`,
#'   `"group"`, `"dynamic"`, `"calendar"`).
#' @param alpha The intervals' level is `1 - alpha` (default the fit's).
#' @return An object of class `dd_ovb`: `table` (term, estimate, bias, the
#'   bounds `lower`, `upper`, the interval `conf.low`, `conf.high`, `rv`,
#'   `rv_alpha`), the settings, and what the contour plot needs. Methods
#'   print, tidy, glance, plot (contours of the lower bound over `cf_y` and
#'   `cf_d` for one term) and autoplot.
#' @references Chernozhukov, V., Cinelli, C., Newey, W., Sharma, A. and
#'   Syrgkanis, V. (2022). Long story short: omitted variable bias in causal
#'   machine learning. NBER Working Paper 30302.
#' @examples
#' set.seed(3)
#' d <- dd_sim_staggered(n_units = 300, n_periods = 3)
#' d$x1 <- rnorm(300)[d$id]
#' fit <- did_dml(d, "y", "id", "time", "first_treat", ~ x1, nboot = 0, seed = 1)
#' s <- ovb_sensitivity(fit, cf_y = 0.05, cf_d = 0.05)
#' s
#' plot(s)
#' @export
ovb_sensitivity <- function(fit, cf_y = 0.03, cf_d = 0.03, rho = 1, type = NULL, alpha = NULL) {
  if (inherits(fit, "did_cs")) fit <- dd_ovb_refit(fit, parent.frame())
  if (!inherits(fit, "did_dml")) dd_stop("`fit` must be a did_dml() fit; got %s.", dd_show(class(fit)[1]))
  if (all(vapply(fit$ovb, is.null, NA)))
    dd_stop("`fit` has no cell with the comparison units' residual trends (repeated cross-sections, `panel` = FALSE, are not covered yet).")
  if (nzchar(fit$survey_label %||% ""))
    dd_stop("`fit` has a survey design; the bounds' intervals are not design-based yet: refit without `survey` (with its weights as `weightsname`).")
  if (!is.null(fit$splits))
    dd_stop("`fit` combines %d cross-fitting splits (`repeats`); the bounds need one split's nuisances: refit with repeats = 1.",
            length(fit$splits))
  chk <- function(v, arg, hi, open) {
    if (!is.numeric(v) || length(v) != 1L || !is.finite(v) || v < 0 || (if (open) v >= hi else v > hi))
      dd_stop("`%s` must be one number in [0, %s%s; got %s.", arg, hi, if (open) ")" else "]", dd_show(v))
    as.double(v)
  }
  cf_y <- chk(cf_y, "cf_y", 1, FALSE); cf_d <- chk(cf_d, "cf_d", 1, TRUE); rho <- chk(rho, "rho", 1, FALSE)
  alpha <- if (is.null(alpha)) fit$alpha else dd_check_alpha(alpha)
  n <- fit$n
  K <- nrow(fit$coeftable)
  # each cell's S and the influence function of S (did's scale: n / n_cell)
  Sc <- numeric(K); IS <- matrix(0, n, K)
  for (c in seq_len(K)) {
    o <- fit$ovb[[c]]
    if (is.null(o)) next
    s2 <- mean(o$e0^2); v2 <- mean(o$alpha^2)
    Sc[c] <- sqrt(s2 * v2)
    if (Sc[c] > 0) IS[o$units, c] <- ((v2 * (o$e0^2 - s2) + s2 * (o$alpha^2 - v2)) / (2 * Sc[c])) * n / length(o$units)
  }
  psi <- as.matrix(fit$inf)[, seq_len(K), drop = FALSE]
  if (is.null(type)) {
    terms <- fit$coeftable$term; est <- fit$coeftable$estimate
    W <- diag(K)
    comb <- rbind(W, matrix(0, ncol(as.matrix(fit$inf)) - K, K))
  } else {
    ag <- aggregate(fit, type)
    terms <- ag$coeftable$term; est <- ag$coeftable$estimate
    comb <- ag$comb
    W <- abs(comb[seq_len(K), , drop = FALSE])
  }
  cl <- fit$unit_cluster
  Psi <- as.matrix(fit$inf) %*% comb
  S <- drop(crossprod(W, Sc))
  ISa <- IS %*% W
  z <- stats::qnorm(1 - alpha / 2)
  se_of <- function(M) sqrt(.Call(C_ifs_colss, dd_if_rows(dd_ifs_dense(M), cl))) / n
  bound <- function(cy, cd) {
    m <- dd_ovb_bias(1, cy, cd, rho)
    b <- m * S
    lo <- est - b; hi <- est + b
    list(bias = b, lower = lo, upper = hi,
         conf.low = lo - z * se_of(Psi - m * ISa), conf.high = hi + z * se_of(Psi + m * ISa))
  }
  r <- bound(cf_y, cf_d)
  rv <- ifelse(S > 0 & rho > 0, dd_ovb_rv(est, rho * S), NA_real_)
  # rv_alpha: the common strength at which the interval reaches zero (bisection)
  rva <- vapply(seq_along(est), function(j) {
    crosses <- function(x) { b <- bound(x, x); b$conf.low[j] <= 0 && b$conf.high[j] >= 0 }
    if (!is.finite(est[j]) || S[j] == 0) return(NA_real_)
    if (crosses(0)) return(0)
    lo <- 0; hi <- 1 - 1e-12
    for (i in 1:80) { mid <- (lo + hi) / 2; if (crosses(mid)) hi <- mid else lo <- mid }
    hi
  }, 0)
  tab <- data.frame(term = terms, estimate = est, bias = r$bias, lower = r$lower, upper = r$upper,
                    conf.low = r$conf.low, conf.high = r$conf.high, rv = rv, rv_alpha = rva, S = S,
                    stringsAsFactors = FALSE)
  structure(list(table = tab, cf_y = cf_y, cf_d = cf_d, rho = rho, alpha = alpha, type = type,
                 yname = fit$yname, grid_fun = function(cy, cd) bound(cy, cd)$lower),
            class = "dd_ovb")
}

# The bias bound rho sqrt(cf_y cf_d / (1 - cf_d)) S (sensemakr's bias() for
# a regression coefficient, with S = its standard error times sqrt(df))
dd_ovb_bias <- function(S, cf_y, cf_d, rho = 1) rho * sqrt(cf_y * cf_d / (1 - cf_d)) * S

# The robustness value: the common strength x = cf_y = cf_d whose bias
# bound is |theta| (x^2 / (1 - x) = f^2 with f = |theta| / S; sensemakr's
# robustness_value(q = 1))
dd_ovb_rv <- function(theta, S) {
  f <- abs(theta) / S
  (sqrt(f^4 + 4 * f^2) - f^2) / 2
}

#' @export
print.dd_ovb <- function(x, digits = max(3L, getOption("digits") - 3L), ...) {
  cat(sprintf("Omitted-variable-bias bounds (cf_y = %g, cf_d = %g, rho = %g; %g%% intervals)\n", x$cf_y, x$cf_d,
              x$rho, 100 * (1 - x$alpha)))
  t <- x$table
  m <- as.matrix(t[, c("estimate", "bias", "lower", "upper", "conf.low", "conf.high", "rv", "rv_alpha")])
  rownames(m) <- t$term
  print(signif(m, digits))
  cat("rv: the strength (cf_y = cf_d) at which the bound reaches 0; rv_alpha: at which the interval does.\n")
  invisible(x)
}

#' @rdname ovb_sensitivity
#' @param x A `dd_ovb` object.
#' @param ... Not used.
#' @export
tidy.dd_ovb <- function(x, ...) x$table

#' @rdname ovb_sensitivity
#' @export
glance.dd_ovb <- function(x, ...)
  data.frame(cf_y = x$cf_y, cf_d = x$cf_d, rho = x$rho, alpha = x$alpha, terms = nrow(x$table),
             min_rv = min(x$table$rv, na.rm = TRUE))

# the lower bound of one term over a grid of strengths
dd_ovb_grid <- function(x, term, lim = 0.3, n = 41L) {
  j <- if (is.null(term)) 1L else match(term, x$table$term)
  if (is.na(j)) dd_stop("`term` = %s is not a term of the bounds; they are %s.", dd_show(term), dd_show(x$table$term))
  g <- seq(0, lim, length.out = n)
  z <- outer(g, g, Vectorize(function(a, b) x$grid_fun(a, b)[j]))
  list(cf_y = g, cf_d = g, lower = z, j = j)
}

#' @rdname ovb_sensitivity
#' @param term For the plots: the term (default the first).
#' @param lim For the plots: the largest strength on both axes (default 0.3).
#' @export
plot.dd_ovb <- function(x, term = NULL, lim = 0.3, ...) {
  g <- dd_ovb_grid(x, term, lim)
  graphics::contour(g$cf_d, g$cf_y, t(g$lower), xlab = "cf_d (confounding of the weights)",
                    ylab = "cf_y (confounding of the trend)", main = sprintf("Lower bound of %s", x$table$term[g$j]),
                    ...)
  graphics::contour(g$cf_d, g$cf_y, t(g$lower), levels = 0, add = TRUE, col = "#C0392B", lwd = 2, drawlabels = TRUE)
  graphics::points(x$cf_d, x$cf_y, pch = 17, col = "#1B6CA8")
  invisible(x)
}

#' @rdname ovb_sensitivity
#' @param object A `dd_ovb` object.
#' @exportS3Method ggplot2::autoplot
autoplot.dd_ovb <- function(object, term = NULL, lim = 0.3, ...) {
  dd_need_ggplot()
  gg <- asNamespace("ggplot2")
  g <- dd_ovb_grid(object, term, lim)
  df <- expand.grid(cf_y = g$cf_y, cf_d = g$cf_d)
  df$lower <- as.vector(g$lower)
  gg$ggplot(df, gg$aes(x = .data$cf_d, y = .data$cf_y, z = .data$lower)) +
    gg$geom_contour(colour = "grey40", bins = 10) +
    gg$geom_contour(breaks = 0, colour = "#C0392B", linewidth = 1) +
    gg$annotate("point", x = object$cf_d, y = object$cf_y, shape = 17, colour = "#1B6CA8", size = 3) +
    gg$labs(x = "cf_d (confounding of the weights)", y = "cf_y (confounding of the trend)",
            title = sprintf("Lower bound of %s", object$table$term[g$j]),
            subtitle = "red: the bound is zero")
}

# A did_cs doubly robust panel fit keeps no nuisance fits: its call re-run
# (in the caller's frame) as did_dml(..., folds = 1), the same estimates
# (checked), which keeps them
dd_ovb_refit <- function(fit, env) {
  if (!identical(fit$est_method, "dr"))
    dd_stop("`fit` is a did_cs fit with est_method = \"%s\"; the bounds are for the doubly robust score (est_method = \"dr\").",
            fit$est_method)
  args <- as.list(fit$call)[-1L]
  extra <- setdiff(names(args), c(names(formals(did_dml)), "est_method"))
  if (length(extra) || !is.null(fit$db))
    dd_stop("`fit` is a did_cs fit with %s, which did_dml() does not take; the bounds need did_dml's nuisance fits.",
            if (!is.null(fit$db)) "a database table" else paste0("`", extra, "`", collapse = ", "))
  if (isFALSE(eval(args$panel, env)))
    dd_stop("`fit` is a did_cs fit on repeated cross-sections (`panel` = FALSE); the bounds cover panels only.")
  args$est_method <- NULL
  args$folds <- 1L
  out <- tryCatch(suppressWarnings(eval(as.call(c(quote(diffdiff::did_dml), args)), env)), error = function(e)
    dd_stop("`fit` is a did_cs fit; re-running its call as did_dml(..., folds = 1) for the nuisance fits failed: %s",
            conditionMessage(e)))
  a <- fit$coeftable$estimate; b <- out$coeftable$estimate
  if (length(a) != length(b) || !isTRUE(all.equal(a, b, tolerance = 1e-8)))
    dd_stop("`fit` is a did_cs fit; re-running its call as did_dml(..., folds = 1) gives other estimates (has its data changed since?).")
  out
}
