# The did_synth() result and its methods: the coefficient table (each
# treated unit's average post-treatment gap, with its placebo p-value and
# Firpo-Possebom interval; with several treated units, their average first),
# the tables behind it (weights, predictor weights, balance, gaps) and
# print, summary, tidy, confint, plot and autoplot.

# the post/pre RMSPE ratio; a perfect pre-treatment fit (pre <= tol) has an
# infinite ratio (0 / 0 counts as infinite too: such a unit is not informative)
dd_synth_ratio <- function(post, pre, tol) if (pre <= tol) Inf else post / pre

dd_synth_check_fit <- function(fit) {
  if (!inherits(fit, "did_synth"))
    dd_stop("`fit` must be a did_synth() fit; got an object of class %s.", dd_show(class(fit)[1]))
  invisible(fit)
}

# the treated unit `unit` (an identifier, or NULL: the first) as an index of fit$fits
dd_synth_pick <- function(fit, unit) {
  if (is.null(unit)) return(1L)
  k <- match(as.character(unit), names(fit$fits))
  if (length(unit) != 1L || is.na(k))
    dd_stop("`unit` must be one of the treated units (%s); got %s.", dd_show(names(fit$fits)), dd_show(unit))
  k
}

dd_synth_result <- function(prep, fits, pl, settings, call, yname, tname, alpha, cut) {
  tr <- names(fits)
  rows <- lapply(fits, function(f) {
    fp <- if (is.null(pl)) list(conf.low = NA_real_, conf.high = NA_real_, n_placebos = NA_integer_)
          else dd_synth_fp_core(f, pl$table, prep$tlev, cut, "constant", alpha)
    list(estimate = f$att, pre = f$pre_rmspe, post = f$post_rmspe, ratio = f$ratio,
         lo = fp$conf.low, hi = fp$conf.high, n = fp$n_placebos)
  })
  col <- function(k) vapply(rows, function(r) as.double(r[[k]]), numeric(1))
  # a unit whose pre-treatment fit is perfect has no p-value (its ratio is infinite)
  p <- if (is.null(pl)) rep(NA_real_, length(fits)) else ifelse(is.finite(col("ratio")), unname(pl$p.value), NA_real_)
  terms <- if (length(fits) == 1L) "ATT" else paste0("unit::", tr)
  tab <- data.frame(term = terms, estimate = col("estimate"), std.error = NA_real_, statistic = NA_real_,
                    p.value = p, conf.low = col("lo"), conf.high = col("hi"), pre.rmspe = col("pre"),
                    post.rmspe = col("post"), rmspe.ratio = col("ratio"), n.placebos = col("n"),
                    stringsAsFactors = FALSE)
  notes <- prep$notes
  if (length(fits) > 1L) {
    avg <- dd_synth_avg_p(fits, pl, prep$tlev, cut)
    tab <- rbind(data.frame(term = "ATT", estimate = mean(tab$estimate), std.error = NA_real_, statistic = NA_real_,
                            p.value = avg$p, conf.low = NA_real_, conf.high = NA_real_, pre.rmspe = NA_real_,
                            post.rmspe = NA_real_, rmspe.ratio = mean(tab$rmspe.ratio), n.placebos = avg$n,
                            stringsAsFactors = FALSE), tab)
    notes <- c(notes, avg$note)
  }
  rownames(tab) <- NULL
  perfect <- tr[!is.finite(col("ratio"))]
  if (length(perfect))
    notes <- c(notes, sprintf("the synthetic control of treated unit %s reproduces its pre-treatment outcomes exactly: its weights are not unique and its RMSPE ratio is infinite, so no placebo p-value or interval is reported for it (use fewer donors, predictors that the donors do not match exactly, or more pre-treatment periods).",
                              paste(perfect, collapse = ", ")))
  inside <- tr[vapply(fits, function(f) f$loss_w <= 1e-12 * max(1, sum(f$X1^2)), logical(1)) & is.finite(col("ratio"))]
  if (length(inside))
    notes <- c(notes, sprintf("the donors reproduce the predictors of treated unit %s exactly (predictor loss 0): the weights are then not unique; did_synth reports the sparsest solution its active set finds, Synth's interior-point solver an interior one, with the same predictor fit.",
                              paste(inside, collapse = ", ")))
  V <- matrix(NA_real_, nrow(tab), nrow(tab), dimnames = list(tab$term, tab$term))
  n_pl <- if (is.null(pl)) 0L else nrow(pl$table)
  vlab <- if (!length(settings$spec$predictors) && !length(settings$spec$special))
    "equal, on the outcome in each pre-treatment period" else switch(settings$v_method,
      nested = "nested (pre-treatment MSPE)", cv = "cross-validated", inverse_variance = "inverse variance",
      custom = "custom")
  info <- dd_info("did_synth", sprintf("Synthetic control (did_synth, V: %s)", vlab), yname,
                  length(c(prep$treated, prep$donors)) * length(prep$tlev), "placebo",
                  if (is.null(pl)) "none (placebo = FALSE)"
                  else sprintf("none; p-values from %d in-space placebos (RMSPE ratio), intervals by inverting them", n_pl),
                  Inf, alpha, tab$term[1], n_units = length(prep$treated) + length(prep$donors),
                  n_periods = length(prep$tlev), notes = notes)
  Y0 <- t(prep$Y[prep$donors, , drop = FALSE]); dimnames(Y0) <- list(prep$tlev, prep$ids[prep$donors])
  extra <- c(dd_synth_tables(fits, prep),
             list(tname = tname, fits = fits, placebos = pl, periods = prep$tlev, Y0 = Y0, settings = settings,
                  placebo_mspe_cut = cut, synth_data = prep[c("Y", "aux", "ids", "tlev", "adopt", "treated", "donors",
                                                               "tol")]))
  new_dd_fit("did_synth", tab, stats::setNames(tab$estimate, tab$term), V, info, call, extra)
}

# the long tables of a fit: donor weights, predictor weights (V), balance
# (treated, synthetic and donor average of each predictor) and gaps
dd_synth_tables <- function(fits, prep) {
  per_unit <- function(f, u) {
    w <- data.frame(unit = u, donor = names(f$w), weight = unname(f$w), stringsAsFactors = FALSE)
    v <- data.frame(unit = u, predictor = names(f$v), weight = unname(f$v), stringsAsFactors = FALSE)
    b <- data.frame(unit = u, predictor = names(f$X1), treated = unname(f$X1),
                    synthetic = unname(drop(f$X0 %*% f$w)), donor_mean = unname(rowMeans(f$X0)),
                    stringsAsFactors = FALSE)
    T <- length(prep$tlev)
    g <- data.frame(unit = u, time = prep$tlev, event = seq_len(T) - f$post[1], treated = unname(f$y),
                    synthetic = unname(f$synthetic), gap = unname(f$gap), post = seq_len(T) %in% f$post,
                    stringsAsFactors = FALSE)
    list(w = w, v = v, b = b, g = g)
  }
  parts <- Map(per_unit, fits, names(fits))
  bind <- function(k) { x <- do.call(rbind, lapply(parts, `[[`, k)); rownames(x) <- NULL; x }
  g <- bind("g")
  # the average gap by event time over the treated units observed then
  avg <- stats::aggregate(g["gap"], g["event"], mean)
  avg$n_units <- as.vector(table(g$event)[as.character(avg$event)])
  # the interface's fields: W named by donor (a donors x treated units
  # matrix with several), the predictor loss (Synth's loss.w) and V as a
  # diagonal matrix (a list of them, by treated unit, with several)
  W <- vapply(fits, `[[`, numeric(length(prep$donors)), "w")
  dimnames(W) <- list(prep$ids[prep$donors], names(fits))
  vmat <- lapply(fits, function(f) diag(f$v, length(f$v), length(f$v), names = FALSE))
  vmat <- Map(function(m, f) { dimnames(m) <- list(names(f$v), names(f$v)); m }, vmat, fits)
  one <- length(fits) == 1L
  list(weights = if (one) W[, 1] else W, loss_w = vapply(fits, `[[`, 0, "loss_w"),
       vmat = if (one) vmat[[1]] else vmat, weight_table = bind("w"), predictor_weights = bind("v"),
       balance = bind("b"), gaps = g, average_gaps = avg)
}

# The placebo p-value of the average over several treated units (Cavallo,
# Galiani, Noy and Pantano 2013): the mean of the treated units' RMSPE
# ratios against the means over every combination of one placebo per
# treated unit (each from the placebos at its adoption period that pass its
# pre-fit cut), the observed combination counted: (1 + #{placebo means >=
# observed}) / (1 + #combinations). Enumerated up to 10^6 combinations;
# beyond, not computed (NA with a note).
dd_synth_avg_p <- function(fits, pl, tlev, cut) {
  if (is.null(pl)) return(list(p = NA_real_, n = NA_real_, note = character()))
  tab <- pl$table
  sets <- lapply(fits, function(f) {
    s <- tab$adopt == tlev[f$post[1]] & tab$pre_rmspe^2 <= cut * f$pre_rmspe^2
    tab$ratio[s]
  })
  n <- prod(vapply(sets, length, numeric(1)))
  obs <- mean(vapply(fits, `[[`, 0, "ratio"))
  if (!is.finite(obs) || n == 0 || n > 1e6)
    return(list(p = NA_real_, n = n, note = sprintf("the placebo p-value of the average effect is not computed (%s); see the units' rows.",
                                                     if (!is.finite(obs)) "a treated unit's pre-treatment fit is perfect"
                                                     else if (n == 0) "a treated unit has no placebo"
                                                     else sprintf("%.3g combinations of placebos exceed 10^6", n))))
  s <- 0
  for (r in sets) s <- as.vector(outer(s, r, `+`))
  m <- s / length(sets)
  list(p = (1 + sum(m >= obs - 1e-12 * max(1, abs(obs)))) / (1 + n), n = n, note = character())
}

#' @rdname did_synth
#' @param x,object A `did_synth` fit.
#' @param digits Significant digits printed.
#' @export
print.did_synth <- function(x, digits = max(3L, getOption("digits") - 3L), ...) {
  dd_check_dots(list(...), "print()")
  dd_print_header(x)
  s <- x$settings
  J <- length(x$synth_data$donors)
  cat(sprintf("Treated units: %d   Donors: %d   Predictors: %d   Pre-treatment periods: %s\n", length(x$fits), J,
              length(x$fits[[1]]$X1), paste(unique(vapply(x$fits, function(f) length(f$pre), 1L)), collapse = ", ")))
  cat("\n")
  tab <- x$coeftable
  m <- cbind(Estimate = tab$estimate, `pre RMSPE` = tab$pre.rmspe, `post RMSPE` = tab$post.rmspe,
             `RMSPE ratio` = tab$rmspe.ratio, tab$conf.low, tab$conf.high, `placebo p` = tab$p.value)
  colnames(m)[5:6] <- sprintf("%s %%", format(100 * c(x$alpha / 2, 1 - x$alpha / 2), trim = TRUE))
  rownames(m) <- tab$term
  print(signif(m, digits), na.print = "")
  cat(dd_synth_footer(x), sep = "\n")
  if (length(x$notes)) cat(paste0("Note: ", x$notes, "\n"), sep = "")
  invisible(x)
}

dd_synth_footer <- function(x) {
  many <- length(x$fits) > 1L
  c(if (many) "ATT: the average over the treated units of each unit's mean post-treatment gap (equal weights).",
    if (!is.null(x$placebos))
      sprintf("Placebo p: the share of units (the treated one included) whose post/pre RMSPE ratio is at least the treated unit's%s%s; interval: Firpo-Possebom set for a constant effect.",
              if (is.finite(x$placebo_mspe_cut)) sprintf(", among placebos with pre-treatment MSPE at most %g times its own", x$placebo_mspe_cut)
              else "", if (many) "; ATT row: Cavallo et al. (2013), one placebo per treated unit" else ""))
}

#' @rdname did_synth
#' @method summary did_synth
#' @export
summary.did_synth <- function(object, ...) {
  dots <- list(...)
  # the plain-language summary is the shared one
  if (identical(dots$style, "plain")) return(NextMethod())
  if (identical(dots$style, "table")) dots$style <- NULL
  if (any(names(dots) %in% c("cluster", "vcov"))) dd_revcov(object, dots$cluster, dots$vcov)
  dd_check_dots(dots, "summary()")
  structure(list(fit = object), class = "summary.did_synth")
}

#' @export
print.summary.did_synth <- function(x, digits = max(3L, getOption("digits") - 3L), ...) {
  dd_check_dots(list(...), "print()")
  f <- x$fit
  print(f, digits = digits)
  for (u in names(f$fits)) {
    cat(sprintf("\nUnit %s: predictor balance (V: predictor weights)\n", u))
    b <- f$balance[f$balance$unit == u, -1]
    b$V <- f$predictor_weights$weight[f$predictor_weights$unit == u]
    print(b, row.names = FALSE, digits = digits)
    w <- f$weight_table[f$weight_table$unit == u & f$weight_table$weight > 0, c("donor", "weight")]
    w <- w[order(-w$weight), ]
    cat(sprintf("Donor weights (%d of %d positive):\n", nrow(w), length(f$synth_data$donors)))
    print(utils::head(w, 15L), row.names = FALSE, digits = digits)
  }
  invisible(x)
}

#' @rdname did_synth
#' @param what The table `tidy()` returns: `"effects"` (the coefficient
#'   table, default), `"weights"` (donor weights), `"predictors"` (predictor
#'   weights V), `"balance"` (each predictor for the treated unit, its
#'   synthetic control and the donors' mean), `"gaps"` (treated, synthetic
#'   and gap by period) or `"placebos"` (one row per in-space placebo).
#' @param conf.int,conf.level Whether `tidy(what = "effects")` keeps the
#'   interval, and its level (intervals at another level than the fit's are
#'   recomputed by inverting the placebo test at that level).
#' @method tidy did_synth
#' @export
tidy.did_synth <- function(x, what = c("effects", "weights", "predictors", "balance", "gaps", "placebos"),
                           conf.int = TRUE, conf.level = 1 - x$alpha, ...) {
  dd_check_broom_dots(list(...), "tidy()", sys.function())
  what <- dd_match_arg(what[1], c("effects", "weights", "predictors", "balance", "gaps", "placebos"), "what")
  if (what != "effects")
    return(switch(what, weights = x$weight_table, predictors = x$predictor_weights, balance = x$balance, gaps = x$gaps,
                  placebos = if (is.null(x$placebos)) dd_stop("the fit has no placebos (placebo = FALSE).")
                             else x$placebos$table))
  tab <- x$coeftable
  if (!isTRUE(all.equal(conf.level, 1 - x$alpha))) {
    ci <- confint(x, level = conf.level)
    tab$conf.low <- ci[, 1]; tab$conf.high <- ci[, 2]
  }
  if (!dd_check_flag(conf.int, "conf.int")) tab$conf.low <- tab$conf.high <- NULL
  tab$term[tab$term == "ATT"] <- "ATT (SC)"
  tab
}

#' @rdname did_synth
#' @param parm Terms (names or indices; default all).
#' @param level The confidence level.
#' @method confint did_synth
#' @export
confint.did_synth <- function(object, parm, level = 1 - object$alpha, ...) {
  dd_check_dots(list(...), "confint()")
  if (!is.numeric(level) || length(level) != 1L || is.na(level) || level <= 0 || level >= 1)
    dd_stop("`level` must be a number strictly between 0 and 1; got %s.", dd_show(level))
  tab <- object$coeftable[dd_parm(object, if (missing(parm)) NULL else parm), , drop = FALSE]
  ci <- t(vapply(tab$term, function(term) {
    if (term == "ATT" && length(object$fits) > 1L || is.null(object$placebos)) return(c(NA_real_, NA_real_))
    u <- if (term == "ATT") 1L else match(sub("^unit::", "", term), names(object$fits))
    r <- dd_synth_fp_core(object$fits[[u]], object$placebos$table, object$periods, object$placebo_mspe_cut,
                          "constant", 1 - level)
    c(r$conf.low, r$conf.high)
  }, numeric(2)))
  a <- (1 - level) / 2
  dimnames(ci) <- list(tab$term, sprintf("%s %%", format(100 * c(a, 1 - a), trim = TRUE, digits = 3)))
  ci
}
