# dd_compare(): why two sets of numbers for the same estimand differ.

#' Cross-check two sets of estimates and explain their differences
#'
#' Aligns the terms of `a` and `b` (two fits, or a fit and numbers from
#' elsewhere: diff-diff in Python, Stata, an older run), reports the
#' differences of estimates and standard errors term by term, and ranks the
#' explanations the numbers support, each with its evidence:
#' \describe{
#'   \item{`agree`}{estimates and standard errors equal to `tol` (relative).}
#'   \item{`numerical_tolerance`}{estimates differ by less than 1e-5
#'     relative, without a pattern: different convergence tolerances or
#'     iteration paths.}
#'   \item{`different_sample`}{the numbers of observations (or units)
#'     differ.}
#'   \item{`se_small_sample_factor`}{estimates agree and the standard errors
#'     differ by one constant ratio equal to a known small-sample factor:
#'     \eqn{\sqrt{G/(G-1)}} (cluster), \eqn{\sqrt{(n-1)/(n-K)}} (regression),
#'     their product, or \eqn{\sqrt{n/(n-1)}}.}
#'   \item{`se_constant_ratio`}{estimates agree and the standard errors
#'     differ by one constant ratio that is not a known factor (another
#'     variance estimator or scaling).}
#'   \item{`bootstrap_noise`}{estimates agree and the standard errors differ
#'     within the Monte Carlo error of `nboot` bootstrap draws (3 Monte Carlo
#'     SDs of the log SE ratio; one bootstrap SE varies by about
#'     \eqn{1.17/\sqrt{B}} relative when it is did's IQR-based one, more
#'     than the \eqn{1/\sqrt{2B}} of a standard deviation).}
#'   \item{`reference_period`}{event-study estimates differ by the estimate
#'     of one event time: the two normalise to different reference periods.}
#'   \item{`se_method_differs`}{estimates agree and the standard errors
#'     differ term by term without any of the patterns above: the variance
#'     estimators differ.}
#'   \item{`different_data`, `different_software`}{(two fits) their
#'     reproducibility stamps (`fit$stamp`) show different data (rows used,
#'     an order-invariant checksum of the outcome) or software (diffdiff, R,
#'     BLAS, LAPACK, threads, random-number generator).}
#'   \item{`se_welch_cells`}{(one side a `did_cs()` fit; estimates agree)
#'     the other side's ATT(g,t) standard errors equal the two-sample Welch
#'     formula on the fit's cells (each arm's variance with divisor
#'     \eqn{n - 1}; the HC2 standard error of the 2x2 regression) and its
#'     other terms agree: `did_cs()` (as did and Callaway and Sant'Anna, 2021)
#'     takes a cell's variance from its influence function (divisor \eqn{n});
#'     diff-diff 3.3.2 reports the Welch form for cells without covariates,
#'     while its aggregated SEs use the influence function.}
#'   \item{`different_settings`, `different_estimator`}{(two fits) their
#'     calls differ in these arguments (control group, base period, weights,
#'     ...), or they come from different estimators.}
#'   \item{`different_control_group`, `different_base_period`,
#'     `different_est_method`, `different_anticipation`,
#'     `different_weights`, `different_covariates`}{(`refit = TRUE`, one side
#'     a fit, estimates not explained by the numbers alone) refitting that
#'     fit with this one setting changed (the estimator's other choices;
#'     anticipation 0 or 1; without its weights; without its covariates)
#'     reproduces the other side's estimates to 1e-6 relative. Each refit
#'     tried is listed with how close it came.}
#'   \item{`different_cluster`}{(`refit = TRUE`, estimates agree, SEs do
#'     not) refitting without the fit's `cluster` reproduces the other
#'     side's standard errors.}
#'   \item{`estimates_differ`}{none of the above: the estimand or the
#'     specification differs in a way not tried (several settings at once,
#'     another estimator, other data); refit with the other
#'     implementation's settings.}
#' }
#'
#' The refits re-evaluate the fit's call (its data is looked up in `envir`
#' unless `data` is given) with cheap inference (no bootstrap) when only
#' estimates are compared.
#'
#' @param a A fit (`dd_fit`) or a data frame with `term` and `estimate`
#'   (optional `std.error`).
#' @param b Another fit or such a data frame, optionally with columns or
#'   attributes `n` (observations), `n_units`, `nboot` (bootstrap draws of its
#'   SEs) and `source`, and the attribute `stamp` (another fit's stamp).
#'   Every diffdiff fit carries a reproducibility stamp (`fit$stamp`: package,
#'   R, BLAS and LAPACK versions, threads, generator kind and a checksum of
#'   its state when the data were read, diffdiff's options, time, and the
#'   data's rows, columns, rows used and an order-invariant checksum of the
#'   outcome).
#' @param tol Relative tolerance for agreement.
#' @param terms Terms to compare (default: those in both).
#' @param refit If `TRUE` (default) and the two sides do not agree, the side
#'   that is a fit is refitted with one setting changed at a time to find the
#'   setting that explains the difference (see above).
#' @param data The data the fit was estimated on, for the refits (default:
#'   the fit's call's `data`, evaluated in `envir`).
#' @param envir Environment in which the fit's call is evaluated.
#' @param x A `dd_compare` object.
#' @param digits Significant digits in the printed table.
#' @param n Terms printed (those that differ most when there are more).
#' @param ... Not used: an error if given.
#' @return An object of class `dd_compare`: `table` (term, estimates, SEs,
#'   differences, SE ratio), `hypotheses` (ranked: `hypothesis`, `supported`,
#'   `evidence`) and `summary`. `print()` shows both.
#' @examples
#' set.seed(1)
#' d <- dd_sim_staggered(n_units = 200, n_periods = 6, effect = 1)
#' a <- did_event(d, "y", "id", "time", "first_treat")
#' # numbers from elsewhere with SEs without the small-sample factor
#' G <- a$n_clusters
#' b <- data.frame(term = a$coeftable$term, estimate = a$coeftable$estimate,
#'                 std.error = a$coeftable$std.error / sqrt(G / (G - 1)))
#' dd_compare(a, b)
#' # numbers from an implementation that used the not-yet-treated as controls
#' cs <- did_cs(d, "y", "id", "time", "first_treat")
#' nyt <- did_cs(d, "y", "id", "time", "first_treat", control_group = "notyettreated")
#' dd_compare(cs, as.data.frame(nyt)[c("term", "estimate", "std.error")])
#' @export
dd_compare <- function(a, b, tol = 1e-8, terms = NULL, refit = TRUE, data = NULL, envir = parent.frame()) {
  A <- dd_compare_side(a, "a"); B <- dd_compare_side(b, "b")
  if (!is.numeric(tol) || length(tol) != 1L || !is.finite(tol) || tol <= 0)
    dd_stop("`tol` must be one positive number; got %s.", dd_show(tol))
  dd_check_flag(refit, "refit")
  if (!is.null(data)) dd_check_data(data)
  # a term written as tidy() labels it ("ATT (TWFE)") is the fit's term ("ATT")
  A$tab$term <- dd_compare_canon(A$tab$term, B); B$tab$term <- dd_compare_canon(B$tab$term, A)
  common <- intersect(A$tab$term, B$tab$term)
  if (!is.null(terms)) {
    miss <- setdiff(terms, common)
    if (length(miss)) dd_stop("`terms` = %s are not in both `a` and `b`.", dd_show(miss))
    common <- terms
  }
  if (!length(common))
    dd_stop("`a` and `b` share no term (a: %s; b: %s): rename b's terms to a's (e.g. \"ATT\", \"event::-1\").",
            dd_show(A$tab$term, max = 4L), dd_show(B$tab$term, max = 4L))
  ia <- match(common, A$tab$term); ib <- match(common, B$tab$term)
  tab <- data.frame(term = common, estimate_a = A$tab$estimate[ia], estimate_b = B$tab$estimate[ib],
                    stringsAsFactors = FALSE)
  tab$diff <- tab$estimate_a - tab$estimate_b
  scale <- pmax(abs(tab$estimate_a), abs(tab$estimate_b), 1e-300)
  tab$rel_diff <- abs(tab$diff) / scale
  tab$se_a <- A$tab$std.error[ia]; tab$se_b <- B$tab$std.error[ib]
  tab$se_ratio <- tab$se_a / tab$se_b
  hyp <- dd_compare_hypotheses(tab, A, B, tol)
  set <- dd_compare_settings(A, B, envir)
  if (!is.null(set)) hyp <- dd_compare_add(hyp, set)
  wel <- dd_compare_welch(A, B, tab, tol)
  if (!is.null(wel)) hyp <- dd_compare_add(hyp, wel)
  if (refit && !hyp$supported[hyp$hypothesis == "agree"]) {
    rf <- dd_compare_refits(A, B, tab, tol, data, envir)
    if (!is.null(rf)) hyp <- dd_compare_add(hyp, rf)
  }
  structure(list(table = tab, hypotheses = hyp, a = A[c("label", "n", "n_units", "nboot")],
                 b = B[c("label", "n", "n_units", "nboot")], only_a = setdiff(A$tab$term, B$tab$term),
                 only_b = setdiff(B$tab$term, A$tab$term), tol = tol), class = "dd_compare")
}

# one side: its table and what is known about it
dd_compare_side <- function(x, arg) {
  if (inherits(x, "dd_fit")) {
    tab <- x$coeftable
    return(list(tab = data.frame(term = tab$term, estimate = tab$estimate, std.error = tab$std.error,
                                 stringsAsFactors = FALSE),
                alias = stats::setNames(as.character(tab$term), ifelse(tab$term == "ATT", dd_estimand_label(x), tab$term)),
                label = x$estimator, n = x$nobs, n_units = x$n_units %||% NA_real_,
                nboot = if (isTRUE(x$nboot > 0)) x$nboot else NA_real_,
                n_clusters = if (is.null(x$n_clusters)) NA_real_ else min(x$n_clusters),
                K = sum(!is.na(tab$estimate)), df = min(x$df), fit = x, stamp = x$stamp))
  }
  if (!is.data.frame(x) || !all(c("term", "estimate") %in% names(x)))
    dd_stop("`%s` must be a diffdiff fit or a data frame with columns `term` and `estimate` (and `std.error`); got %s.",
            arg, dd_show(class(x)))
  if (anyDuplicated(x$term)) dd_stop("`%s` has the term %s twice.", arg, dd_show(x$term[anyDuplicated(x$term)]))
  if (!is.numeric(x$estimate)) dd_stop("`%s$estimate` must be numeric.", arg)
  meta <- function(k) {
    v <- if (!is.null(x[[k, exact = TRUE]])) x[[k, exact = TRUE]][1] else attr(x, k, exact = TRUE)
    if (is.null(v) || !length(v)) NA_real_ else v
  }
  list(tab = data.frame(term = as.character(x$term), estimate = x$estimate,
                        std.error = if (is.null(x$std.error)) NA_real_ else as.numeric(x$std.error),
                        stringsAsFactors = FALSE),
       label = as.character(meta("source") %|NA|% "numbers"), n = as.numeric(meta("n")),
       n_units = as.numeric(meta("n_units")), nboot = dd_compare_nboot(meta("nboot")), n_clusters = NA_real_,
       K = NA_real_, df = NA_real_, fit = NULL, stamp = attr(x, "stamp", exact = TRUE))
}

# the terms of one side in the other side's names: a term that the other
# side (a fit) labels that way in tidy() ("ATT (TWFE)") becomes its
# coefficient-table term ("ATT")
dd_compare_canon <- function(terms, other) {
  al <- other$alias
  if (is.null(al)) return(terms)
  hit <- !(terms %in% al) & terms %in% names(al)
  terms[hit] <- unname(al[terms[hit]])
  terms
}

# bootstrap draws stated by numbers from elsewhere: 0 (analytic SEs) is none
dd_compare_nboot <- function(v) { v <- suppressWarnings(as.numeric(v)); if (isTRUE(v > 0)) v else NA_real_ }

`%|NA|%` <- function(a, b) if (length(a) != 1L || is.na(a)) b else a

# the ranked explanations
dd_compare_hypotheses <- function(tab, A, B, tol) {
  H <- list()
  add <- function(h, ok, ev) H[[length(H) + 1L]] <<- data.frame(hypothesis = h, supported = ok, evidence = ev,
                                                               stringsAsFactors = FALSE)
  est_max <- max(tab$rel_diff)
  se_ok <- is.finite(tab$se_ratio)
  r <- tab$se_ratio[se_ok]
  se_max <- if (length(r)) max(abs(r - 1)) else NA_real_
  est_agree <- est_max <= tol
  # agreement
  add("agree", est_agree && (!length(r) || se_max <= tol),
      sprintf("largest relative difference: estimates %.1e, SEs %s (tolerance %.0e)", est_max,
              if (length(r)) sprintf("%.1e", se_max) else "not compared", tol))
  # sample
  dn <- is.finite(A$n) && is.finite(B$n) && A$n != B$n
  du <- is.finite(A$n_units) && is.finite(B$n_units) && A$n_units != B$n_units
  add("different_sample", dn || du,
      if (dn || du) sprintf("observations %s vs %s, units %s vs %s", format(A$n), format(B$n), format(A$n_units),
                            format(B$n_units))
      else if (is.finite(A$n) && is.finite(B$n)) sprintf("the same number of observations (%s)", format(A$n))
      else "b states no sample size (`n`)")
  # the reproducibility stamps: the data and the software
  sa <- A$stamp; sb <- B$stamp
  if (!is.null(sa$data) && !is.null(sb$data)) {
    same <- identical(sa$data$used, sb$data$used) && identical(sa$data$outcome, sb$data$outcome)
    add("different_data", !same,
        sprintf("data fingerprints (rows used : outcome checksum): a %s : %s, b %s : %s", format(sa$data$used),
                sa$data$outcome, format(sb$data$used), sb$data$outcome))
  }
  if (!is.null(sa) && !is.null(sb)) {
    keys <- c("diffdiff", "R", "blas", "lapack", "threads", "rng")
    diff_k <- keys[!vapply(keys, function(k) identical(sa[[k]], sb[[k]]), logical(1))]
    add("different_software", length(diff_k) > 0L,
        if (length(diff_k)) paste(sprintf("%s: %s vs %s", diff_k, vapply(diff_k, function(k) format(sa[[k]])[1], ""),
                                          vapply(diff_k, function(k) format(sb[[k]])[1], "")), collapse = "; ")
        else "the same diffdiff, R, BLAS, LAPACK, threads and generator")
  }
  # numerical tolerance
  add("numerical_tolerance", !est_agree && est_max < 1e-5,
      if (est_agree) sprintf("estimates agree to the tolerance (%.1e relative)", est_max)
      else sprintf("estimates differ by at most %.1e relative (%s 1e-5)", est_max, if (est_max < 1e-5) "<" else ">="))
  # standard errors: constant ratio, known factors, bootstrap noise
  est_close <- est_max < 1e-5
  if (length(r) >= 1L && !(se_max <= tol)) {
    rbar <- stats::median(r)
    const <- max(abs(r / rbar - 1)) < 1e-6
    # the sizes from whichever side states them (a fit), so that a factor
    # planted on either side is recognised, in either direction of the ratio
    G <- A$n_clusters %|NA|% B$n_clusters; n <- A$n %|NA|% B$n; K <- A$K %|NA|% B$K
    facs <- c(cluster = if (is.finite(G) && G > 1) sqrt(G / (G - 1)) else NA,
              regression = if (is.finite(n) && is.finite(K) && n > K) sqrt((n - 1) / (n - K)) else NA,
              both = if (is.finite(G) && G > 1 && is.finite(n) && is.finite(K) && n > K)
                sqrt(G / (G - 1) * (n - 1) / (n - K)) else NA,
              n_over_n1 = if (is.finite(n) && n > 1) sqrt(n / (n - 1)) else NA)
    facs <- facs[is.finite(facs)]
    hit <- if (length(facs)) names(facs)[abs(rbar / facs - 1) < 1e-6 | abs(rbar * facs - 1) < 1e-6] else character()
    add("se_small_sample_factor", est_close && const && length(hit) > 0L,
        if (length(hit)) sprintf("SE ratio a/b = %.8f = %s%s", rbar, if (rbar > 1) "" else "1 / ",
                                 paste(sprintf("%s factor %.8f", hit, facs[hit]), collapse = " or "))
        else sprintf("SE ratio a/b %s (median %.6f); known factors: %s", if (const) "constant" else "not constant", rbar,
                     if (length(facs)) paste(sprintf("%s %.6f", names(facs), facs), collapse = ", ") else "none computable"))
    add("se_constant_ratio", est_close && const && !length(hit),
        sprintf("SE ratio a/b %s across %d terms (median %.6f)", if (const) "constant" else "varies", length(r), rbar))
    B_ <- c(A$nboot, B$nboot); B_ <- B_[is.finite(B_)]
    if (length(B_)) {
      # relative Monte Carlo SD of a bootstrap SE from B draws: 1/sqrt(2B)
      # for the standard deviation of the draws, 1.166/sqrt(B) for did's
      # IQR-based SE (normal draws); the larger is used
      mc <- 1.166 / sqrt(min(B_)) * if (length(B_) == 2L) sqrt(2) else 1
      add("bootstrap_noise", est_close && max(abs(log(r))) < 3 * mc,
          sprintf("SE ratios from %.3f to %.3f; Monte Carlo SD of a ratio with %d draws about %.3f", min(r), max(r),
                  as.integer(min(B_)), mc))
    } else add("bootstrap_noise", FALSE, "neither side states bootstrap draws (`nboot`)")
  }
  # reference period: b = a - a[ref'] on the event-time terms
  ev <- grepl("^event::-?[0-9]+$", tab$term)
  if (!est_agree && sum(ev) >= 2L) {
    d <- tab$diff[ev]                     # a - b
    cand <- which(abs(d - stats::median(d)) <= 1e-8 * max(1, abs(tab$estimate_a[ev])))
    shift <- stats::median(d)
    fitted <- length(cand) == length(d)
    # the shift is the estimate of the other normalisation's reference
    # period in a (its coefficient there is then 0 in b)
    zero_b <- tab$term[ev][abs(tab$estimate_b[ev]) <= 1e-10 * max(1, abs(shift))]
    add("reference_period", fitted && abs(shift) > tol,
        if (fitted) sprintf("event-time estimates differ by one constant (%.6g)%s", shift,
                            if (length(zero_b)) sprintf("; b is zero at %s: b normalises to that period", zero_b[1]) else "")
        else "the event-time differences are not one constant")
  }
  sp <- vapply(H, function(h) h$supported, logical(1))
  if (est_close && length(r) && !(se_max <= tol))
    add("se_method_differs", !any(sp),
        if (!any(sp)) sprintf("estimates agree but the SE ratio a/b varies from %.3f to %.3f with no bootstrap noise stated: a different variance estimator (which estimation steps it accounts for, the cluster level, a finite-sample adjustment per term)", min(r), max(r))
        else "explained above")
  sp <- vapply(H, function(h) h$supported, logical(1))
  add("estimates_differ", !any(sp) && !est_agree,
      if (!any(sp) && !est_agree) sprintf("no explanation above fits (largest relative difference %.2e): compare the settings (control group, covariates, weights, base period) and refit", est_max)
      else "explained above")
  out <- do.call(rbind, H)
  out <- out[order(!out$supported), , drop = FALSE]
  rownames(out) <- NULL
  out
}

#' @rdname dd_compare
#' @export
print.dd_compare <- function(x, digits = 6, n = 10, ...) {
  dd_check_dots(list(...), "print()")
  cat(sprintf("Comparing %s (a) with %s (b): %d common terms", x$a$label, x$b$label, nrow(x$table)))
  if (length(x$only_a) || length(x$only_b))
    cat(sprintf("; only in a: %d, only in b: %d", length(x$only_a), length(x$only_b)))
  cat("\n\n")
  tab <- x$table[, setdiff(names(x$table), "diff")]
  # the terms that differ most first when not all are shown
  if (nrow(tab) > n) tab <- tab[utils::head(order(-pmax(tab$rel_diff, abs(log(tab$se_ratio)), na.rm = TRUE)), n), ]
  print(tab, digits = digits, row.names = FALSE)
  if (nrow(x$table) > n)
    cat(sprintf("(the %d terms that differ most of %d; all in $table)\n", n, nrow(x$table)))
  cat("\nExplanations (supported first):\n")
  h <- x$hypotheses
  for (i in seq_len(nrow(h)))
    cat(sprintf("  %s %s: %s\n", if (h$supported[i]) "[yes]" else "[no] ", h$hypothesis[i], h$evidence[i]))
  invisible(x)
}

# add explanations; a supported one takes over from the catch-alls
dd_compare_add <- function(hyp, new) {
  if (any(new$supported)) {
    catch <- hyp$hypothesis %in% c("estimates_differ", "se_method_differs") & hyp$supported
    hyp$supported[catch] <- FALSE
    hyp$evidence[catch] <- "explained by a more specific explanation (supported above)"
  }
  out <- rbind(hyp, new)
  out <- out[order(!out$supported), , drop = FALSE]
  rownames(out) <- NULL
  out
}

# the settings that change an estimand or its standard error, per estimator:
# choice arguments (the alternatives are the other choices), and arguments
# whose alternative is their absence
dd_compare_choice_args <- c(control_group = "different_control_group", base_period = "different_base_period",
                            est_method = "different_est_method")
dd_compare_null_args <- c(weightsname = "different_weights", xformla = "different_covariates", cluster = "different_cluster")

# the value of argument k in a fit's call (NULL when left at its default),
# and the estimator's default
dd_compare_arg <- function(fit, k, env) {
  cl <- fit$call
  fm <- formals(get(fit$estimator, envir = asNamespace("diffdiff")))
  if (!k %in% names(fm)) return(list(has = FALSE))
  def <- tryCatch(eval(fm[[k]], baseenv()), error = function(e) NULL)
  val <- if (!is.null(cl[[k]])) tryCatch(eval(cl[[k]], env), error = function(e) cl[[k]]) else NULL
  list(has = TRUE, value = if (is.null(val) && is.character(def)) def[1] else val, default = def,
       given = !is.null(cl[[k]]))
}

dd_compare_show <- function(v) if (is.null(v)) "NULL" else paste(deparse(v, width.cutoff = 200L), collapse = "")

# two fits: which of their settings differ (read from their calls)
dd_compare_settings <- function(A, B, envir) {
  fa <- A$fit; fb <- B$fit
  if (is.null(fa) || is.null(fb) || is.null(fa$call) || is.null(fb$call)) return(NULL)
  ns <- asNamespace("diffdiff")
  if (!exists(fa$estimator, envir = ns, inherits = FALSE) || !exists(fb$estimator, envir = ns, inherits = FALSE))
    return(NULL)                          # aggregates: their calls are aggregate()'s
  if (fa$estimator != fb$estimator)
    return(data.frame(hypothesis = "different_estimator", supported = TRUE,
                      evidence = sprintf("a is %s(), b is %s()", fa$estimator, fb$estimator), stringsAsFactors = FALSE))
  keys <- setdiff(union(names(as.list(fa$call))[-1L], names(as.list(fb$call))[-1L]), "data")
  keys <- union(keys, intersect(c(names(dd_compare_choice_args), "anticipation"),
                                names(formals(get(fa$estimator, envir = asNamespace("diffdiff"))))))
  d <- character()
  for (k in keys) {
    va <- dd_compare_arg(fa, k, envir); vb <- dd_compare_arg(fb, k, envir)
    if (!va$has) next
    if (!identical(dd_compare_show(va$value), dd_compare_show(vb$value)))
      d <- c(d, sprintf("%s = %s vs %s", k, dd_compare_show(va$value), dd_compare_show(vb$value)))
  }
  data.frame(hypothesis = "different_settings", supported = length(d) > 0L,
             evidence = if (length(d)) paste0("the calls differ: ", paste(d, collapse = "; "))
                        else "the two calls use the same settings", stringsAsFactors = FALSE)
}

# one side is a fit and the other is not reproduced: refit the fit with one
# setting changed at a time and see which change reproduces the other side
dd_compare_refits <- function(A, B, tab, tol, data, envir) {
  side <- if (!is.null(A$fit) && !is.null(A$fit$call)) "a" else if (!is.null(B$fit) && !is.null(B$fit$call)) "b" else return(NULL)
  F <- if (side == "a") A else B
  other <- if (side == "a") B$tab else A$tab
  fit <- F$fit; est <- fit$estimator
  if (!exists(est, envir = asNamespace("diffdiff"), inherits = FALSE) || grepl("_agg$", class(fit)[1])) return(NULL)
  cl <- fit$call
  cl[[1L]] <- as.name(est)
  env <- new.env(parent = envir)
  assign(est, get(est, envir = asNamespace("diffdiff")), envir = env)
  if (!is.null(data)) {
    assign(".dd_compare_data", data, envir = env)
    cl$data <- as.name(".dd_compare_data")
  }
  fm <- names(formals(get(est, envir = asNamespace("diffdiff"))))
  est_close <- max(tab$rel_diff) < 1e-5
  cand <- list()
  if (!est_close) {
    for (k in intersect(names(dd_compare_choice_args), fm)) {
      v <- dd_compare_arg(fit, k, env)
      if (!is.character(v$default)) next
      for (alt in setdiff(v$default, v$value))
        cand[[length(cand) + 1L]] <- list(hyp = dd_compare_choice_args[[k]], arg = k, value = alt)
    }
    if ("anticipation" %in% fm) {
      v <- dd_compare_arg(fit, "anticipation", env)
      cand[[length(cand) + 1L]] <- list(hyp = "different_anticipation", arg = "anticipation",
                                        value = if (isTRUE(v$value > 0)) 0 else 1)
    }
    for (k in intersect(c("weightsname", "xformla"), fm))
      if (!is.null(cl[[k]])) cand[[length(cand) + 1L]] <- list(hyp = dd_compare_null_args[[k]], arg = k, value = NULL)
  } else if (!is.null(cl$cluster) && "cluster" %in% fm) {
    cand[[1L]] <- list(hyp = "different_cluster", arg = "cluster", value = NULL)
  }
  if (!length(cand)) return(NULL)
  # the point estimates need no costly inference; the cluster refit keeps it
  cheap <- if (est_close) cl else dd_placebo_cheap(cl, est, point_only = TRUE)
  # the refits need the fit's data (not its own refit: one estimation less)
  first <- tryCatch({ if (!is.data.frame(eval(cl$data, env))) stop("its `data` is not a data frame"); NULL },
                    error = function(e) conditionMessage(e))
  if (!is.null(first))
    return(data.frame(hypothesis = "refit", supported = FALSE,
                      evidence = sprintf("could not refit %s: its data are not found (%s); pass the data as `data`", side,
                                         sub("\n.*", "", first)), stringsAsFactors = FALSE))
  rows <- lapply(cand, function(cd) {
    c2 <- cheap
    c2[cd$arg] <- list(cd$value)
    setting <- sprintf("%s = %s", cd$arg, dd_compare_show(cd$value))
    f <- tryCatch(suppressWarnings(suppressMessages(eval(c2, env))), error = function(e) conditionMessage(e))
    if (is.character(f))
      return(data.frame(hypothesis = cd$hyp, supported = FALSE,
                        evidence = sprintf("refitting %s with %s stops: %s", side, setting, sub("\n.*", "", f)),
                        stringsAsFactors = FALSE))
    ct <- f$coeftable
    m <- match(tab$term, ct$term); o <- match(tab$term, other$term)
    ok <- !is.na(m) & !is.na(o)
    if (!any(ok))
      return(data.frame(hypothesis = cd$hyp, supported = FALSE,
                        evidence = sprintf("refitting %s with %s gives none of the compared terms", side, setting),
                        stringsAsFactors = FALSE))
    if (est_close) {
      r <- ct$std.error[m[ok]] / other$std.error[o[ok]]
      dmax <- max(abs(r - 1))
      return(data.frame(hypothesis = cd$hyp, supported = is.finite(dmax) && dmax <= max(tol, 1e-6),
                        evidence = sprintf("refitting %s with %s: SEs differ from the other side's by at most %.1e relative (were %.1e)",
                                           side, setting, dmax, max(abs(tab$se_ratio[ok] - 1))),
                        stringsAsFactors = FALSE))
    }
    e1 <- ct$estimate[m[ok]]; e2 <- other$estimate[o[ok]]
    dmax <- max(abs(e1 - e2) / pmax(abs(e1), abs(e2), 1e-300))
    data.frame(hypothesis = cd$hyp, supported = is.finite(dmax) && dmax <= max(tol, 1e-6) && all(ok),
               evidence = sprintf("refitting %s with %s: estimates differ from the other side's by at most %.1e relative (were %.1e)%s",
                                  side, setting, dmax, max(tab$rel_diff[ok]),
                                  if (all(ok)) "" else sprintf("; %d terms missing", sum(!ok))),
               stringsAsFactors = FALSE)
  })
  do.call(rbind, rows)
}

# did_cs cells: the two-sample Welch standard error (each arm's variance
# with divisor n - 1) from the fit's influence function. psi (scaled by n)
# is nonzero for the cell's units: the cohort's (treated arm) and its
# comparison units; the plug-in SE is sqrt(sum psi^2) / n, the Welch SE
# weights each arm's sum by n_arm / (n_arm - 1).
dd_compare_welch <- function(A, B, tab, tol) {
  side <- if (identical(A$fit$estimator, "did_cs")) "a" else if (identical(B$fit$estimator, "did_cs")) "b" else return(NULL)
  fit <- if (side == "a") A$fit else B$fit
  if (max(tab$rel_diff) >= 1e-5 || is.null(fit$inf) || is.null(fit$unit_group)) return(NULL)
  other_se <- if (side == "a") tab$se_b else tab$se_a
  own_se <- if (side == "a") tab$se_a else tab$se_b
  ok <- is.finite(other_se) & is.finite(own_se)
  if (!any(ok) || max(abs(own_se[ok] / other_se[ok] - 1)) <= tol) return(NULL)
  cell <- regmatches(tab$term, regexec("^ATT\\(([^,]+),([^)]+)\\)$", tab$term))
  is_cell <- lengths(cell) == 3L & ok
  if (!any(is_cell)) return(NULL)
  psi <- as.matrix(fit$inf)
  j <- match(tab$term[is_cell], fit$coeftable$term)
  g <- as.numeric(vapply(cell[is_cell], `[`, "", 2L))
  welch <- vapply(seq_along(j), function(k) {
    p <- psi[, j[k]]
    tr <- fit$unit_group == g[k]
    co <- !tr & p != 0
    nt <- sum(tr); nc <- sum(co)
    sqrt((if (nt > 1) nt / (nt - 1) else 0) * sum(p[tr]^2) + (if (nc > 1) nc / (nc - 1) else 0) * sum(p[co]^2)) / fit$n
  }, 0)
  dcell <- max(abs(welch / other_se[is_cell] - 1))
  rest <- ok & !is_cell
  drest <- if (any(rest)) max(abs(own_se[rest] / other_se[rest] - 1)) else 0
  good <- is.finite(dcell) && dcell <= max(tol, 1e-6) && drest <= max(tol, 1e-6)
  data.frame(hypothesis = "se_welch_cells", supported = good,
             evidence = sprintf("the Welch SEs (n - 1 in each arm) of %s's %d ATT(g,t) cells differ from %s's by at most %.1e relative%s",
                                side, sum(is_cell), if (side == "a") "b" else "a", dcell,
                                if (any(rest)) sprintf("; the %d other terms' SEs by %.1e", sum(rest), drest) else ""),
             stringsAsFactors = FALSE)
}
