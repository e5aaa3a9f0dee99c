#' Equivalence test for pre-trends (two one-sided tests)
#'
#' Tests whether every pre-period event-study coefficient lies within
#' `(-margin, margin)`: for each coefficient the two one-sided tests of
#' `beta <= -margin` and `beta >= margin` (TOST), combined by
#' intersection-union (equivalence is concluded when every coefficient's
#' TOST rejects; the joint p-value is the largest of theirs), so that the
#' test has level `alpha` for the hypothesis `max |beta_k| >= margin`. The
#' equivalence bound is the smallest margin for which the test concludes
#' equivalence at `alpha`: `max_k (|beta_k| + q_(1 - alpha) se_k)`, the
#' outer end of the coefficients' `1 - 2 alpha` intervals. A rejection says
#' the pre-trends are small relative to `margin`; failing to reject says the
#' data cannot rule out pre-trends of that size (as opposed to a
#' conventional pre-test, whose non-rejection is often mistaken for
#' evidence of parallel trends).
#'
#' Quantiles are normal, or t with the fit's degrees of freedom for
#' regression estimators with clustered or CR2 standard errors. The
#' coefficients come from the fit's typed event study (or `betahat` and
#' `sigma`, as in [honest_did()]).
#'
#' @section Compared with diff-diff:
#' diff-diff's `equivalence_test_trends()` (3.3.2) runs a Welch TOST on the
#' first differences of the raw outcomes of treated and control units in
#' the pre-periods (a margin of half their standard deviation by default),
#' not on an estimator's pre-period coefficients; equivalence_test() tests
#' the estimates that the event study reports, with their covariance. Dette
#' and Schumann (2024) test `max |beta_k|` with a bootstrap; the
#' intersection-union test here is simpler and conservative for it.
#'
#' @param fit An event-study fit ([did_event()], [did_sa()], [did_bjs()],
#'   `aggregate(did_cs(...), type = "dynamic")`, ...), or `NULL` with
#'   `betahat`, `sigma` and `num_pre`.
#' @param margin The equivalence margin (> 0, in the outcome's units), or
#'   `NULL` to report only the equivalence bound.
#' @param alpha Level of each one-sided test (default 0.05).
#' @param betahat,sigma,num_pre Event-study coefficients (pre-periods first),
#'   their covariance, and the number of pre-period coefficients.
#' @return An object of class `dd_equivalence`: `table` (one row per
#'   pre-period coefficient: estimate, standard error, the two one-sided
#'   statistics and p-values, its TOST p-value), `p.value` (joint),
#'   `equivalent`, `bound`, `margin`, `alpha`.
#' @references Hartman, E. and Hidalgo, F. D. (2018). An equivalence approach
#'   to balance and placebo tests. American Journal of Political Science
#'   62(4). Dette, H. and Schumann, M. (2024). Testing for equivalence of
#'   pre-trends in difference-in-differences estimation. Journal of Business
#'   and Economic Statistics.
#' @examples
#' d <- read.csv(system.file("extdata", "sim_panel.csv", package = "diffdiff"))
#' es <- did_event(d, "y", "id", "year", "first_treat")
#' equivalence_test(es, margin = 0.5)
#' equivalence_test(es)$bound
#' @export
equivalence_test <- function(fit = NULL, margin = NULL, alpha = 0.05, betahat = NULL, sigma = NULL,
                             num_pre = NULL) {
  if (!is.numeric(alpha) || length(alpha) != 1L || is.na(alpha) || alpha <= 0 || alpha >= 0.5)
    dd_stop("`alpha` must be one number in (0, 0.5); got %s.", dd_show(alpha))
  if (!is.null(margin) && (!is.numeric(margin) || length(margin) != 1L || is.na(margin) || margin <= 0 ||
                           !is.finite(margin)))
    dd_stop("`margin` = %s must be one positive number (the largest pre-trend deemed negligible, in the outcome's units).",
            dd_show(margin))
  es <- dd_event_study(fit, betahat, sigma, num_pre, fun = "equivalence_test")
  pre <- seq_len(es$K)
  b <- unname(es$betahat[pre])
  se <- sqrt(diag(es$sigma))[pre]
  if (any(!is.finite(se) | se <= 0))
    dd_stop("the pre-period coefficients' standard errors must be positive (event times %s).",
            dd_show(es$event[pre][!is.finite(se) | se <= 0]))
  df <- Inf
  if (!is.null(fit) && is.finite(min(fit$df))) {
    df <- dd_term_df(fit, fit$event_study$term[match(es$event[pre], fit$event_study$event)])
    df[is.na(df)] <- Inf
  }
  q <- stats::qt(1 - alpha, df)
  bound <- max(abs(b) + q * se)
  tab <- data.frame(event = es$event[pre], estimate = b, std.error = se, df = df)
  if (!is.null(margin)) {
    tab$t.lower <- (b + margin) / se
    tab$t.upper <- (b - margin) / se
    tab$p.lower <- stats::pt(tab$t.lower, df, lower.tail = FALSE)
    tab$p.upper <- stats::pt(tab$t.upper, df)
    tab$p.value <- pmax(tab$p.lower, tab$p.upper)
  }
  p <- if (is.null(margin)) NA_real_ else max(tab$p.value)
  structure(list(table = tab, p.value = p, equivalent = if (is.null(margin)) NA else p < alpha, bound = bound,
                 margin = margin, alpha = alpha),
            class = "dd_equivalence")
}

#' @export
print.dd_equivalence <- function(x, digits = 4, ...) {
  dd_check_dots(list(...), "print()")
  cat(sprintf("Equivalence test of %d pre-period coefficients (two one-sided tests, intersection-union, alpha = %s)\n",
              nrow(x$table), format(x$alpha)))
  if (!is.null(x$margin))
    cat(sprintf("Margin %s: p-value %s -> %s\n", format(x$margin, digits = digits),
                format.pval(x$p.value, digits = digits),
                if (x$equivalent) "equivalent (every pre-period coefficient is within the margin)"
                else "equivalence not shown (pre-trends of this size cannot be ruled out)"))
  cat(sprintf("Equivalence bound (smallest margin shown at this alpha): %s\n", format(x$bound, digits = digits)))
  print(x$table, digits = digits, row.names = FALSE)
  invisible(x)
}
