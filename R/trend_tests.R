#' Parallel-trends tests on the raw pre-treatment data
#'
#' Three checks of the pre-treatment outcomes of a treated and a comparison
#' group, as the Python library diff-diff offers them
#' (`check_parallel_trends`, `check_parallel_trends_robust`,
#' `equivalence_test_trends`):
#'
#' * **slope**: a least-squares time trend in each group over all
#'   pre-period rows, with its classical standard error (n - 2 degrees of
#'   freedom); the difference of the two slopes, its standard error as of
#'   independent groups, and a normal p-value.
#' * **wasserstein**: the Wasserstein-1 distance between the two groups'
#'   distributions of outcome changes (each unit's change from one observed
#'   pre-period to the next, labelled by the group of the later row; without
#'   `idname`, the changes of the group means), with a permutation p-value
#'   (the share of `nperm` random relabellings whose distance is at least the
#'   observed one), the distance over the pooled standard deviation of the
#'   changes, and the two-sample Kolmogorov-Smirnov statistic with its exact
#'   p-value for continuous data (scipy's, which ignores ties). Trends are
#'   called plausible when the permutation p-value exceeds 0.05 and the
#'   normalised distance is below `threshold`.
#' * **equivalence**: two one-sided Welch t tests (TOST) that the mean
#'   change differs by less than `margin` (default half the pooled standard
#'   deviation of the changes) at the 5% level.
#'
#' Deliberate differences from diff-diff: the permutations use R's
#' generator (under `seed`), so the permutation p-value agrees only in
#' distribution; a permuted distance within 1e-9 (relative) of the observed
#' one counts as at least as large (ties in exact arithmetic, which
#' floating-point sums may split either way); rows with a missing outcome are
#' dropped with a message (diff-diff's slope test returns NaN); a treatment
#' indicator other than 0/1 is an error (diff-diff ignores such rows). With
#' more than 10,000 changes in a group the Kolmogorov-Smirnov p-value is the
#' limiting (Kolmogorov) one.
#'
#' @param data A data frame in long format.
#' @param yname The outcome column.
#' @param tname The period column (numeric).
#' @param treatname A 0/1 column: the treated group (1) against the
#'   comparison group (0).
#' @param idname The unit column (`NULL`: the changes of the group means are
#'   compared).
#' @param pre_periods The pre-treatment periods (default, as diff-diff: the
#'   first half of the sorted periods, rounded down -- stated in the print).
#' @param nperm Permutations for the Wasserstein test (default 1000).
#' @param seed `NULL` or a number: the permutations are drawn under
#'   `set.seed(seed)` and the session's stream is left as it was.
#' @param threshold The normalised distance below which trends count as
#'   plausible (default 0.2).
#' @param margin The equivalence margin (`NULL`: half the pooled standard
#'   deviation of the changes).
#' @return An object of class `dd_trend_tests`: `table` (one row per test:
#'   test, estimate, std.error, statistic, p.value, plausible), `slope`,
#'   `wasserstein` and `equivalence` (each test's numbers), the changes and
#'   the settings. Methods print, tidy and glance.
#' @examples
#' d <- read.csv(system.file("extdata", "sim_panel.csv", package = "diffdiff"))
#' d$treated <- as.integer(d$first_treat == 2006 | d$first_treat == 2008)
#' d <- d[d$first_treat %in% c(0, 2006, 2008), ]
#' trend_tests(d, "y", "year", "treated", idname = "id", pre_periods = 2001:2005, seed = 1)
#' @export
trend_tests <- function(data, yname, tname, treatname, idname = NULL, pre_periods = NULL, nperm = 1000,
                        seed = NULL, threshold = 0.2, margin = NULL) {
  dd_required(c("data", "yname", "tname", "treatname"))
  dd_check_data(data)
  for (a in c("yname", "tname", "treatname")) { dd_check_string(get(a), a); dd_check_cols(data, get(a), a) }
  if (!is.null(idname)) { dd_check_string(idname, "idname"); dd_check_cols(data, idname, "idname") }
  nperm <- dd_check_count(nperm, "nperm")
  if (!is.null(seed) && (!is.numeric(seed) || length(seed) != 1L || !is.finite(seed)))
    dd_stop("`seed` must be NULL or one number; got %s.", dd_show(seed))
  if (!is.numeric(threshold) || length(threshold) != 1L || !is.finite(threshold) || threshold <= 0)
    dd_stop("`threshold` must be one positive number; got %s.", dd_show(threshold))
  if (!is.null(margin) && (!is.numeric(margin) || length(margin) != 1L || !is.finite(margin) || margin <= 0))
    dd_stop("`margin` must be NULL or one positive number; got %s.", dd_show(margin))
  y <- dd_check_numeric_col(data[[yname]], "yname", yname)
  tt <- dd_check_numeric_col(data[[tname]], "tname", tname, convert = FALSE)
  D <- dd_check_numeric_col(data[[treatname]], "treatname", treatname)
  dd_check_binary(D[!is.na(D)], "treatname", treatname)
  id <- if (is.null(idname)) NULL else data[[idname]]
  bad <- is.na(y) | is.na(tt) | is.na(D) | (if (is.null(id)) FALSE else is.na(id))
  if (any(bad)) message(sprintf("diffdiff: %d row(s) with a missing outcome, period, group or unit dropped.", sum(bad)))
  per <- sort(unique(tt[!bad]))
  if (is.null(pre_periods)) {
    pre_periods <- per[seq_len(floor(length(per) / 2))]
    default_pre <- TRUE
  } else {
    if (!is.numeric(pre_periods) || !length(pre_periods) || anyNA(pre_periods))
      dd_stop("`pre_periods` must be numeric periods; got %s.", dd_show(pre_periods))
    miss <- setdiff(pre_periods, per)
    if (length(miss)) dd_stop("`pre_periods` has %s, not a period of `tname` = \"%s\".", dd_show(miss), tname)
    default_pre <- FALSE
  }
  keep <- !bad & tt %in% pre_periods
  if (length(unique(tt[keep])) < 2L)
    dd_stop("`pre_periods` (%s) gives fewer than 2 pre-treatment periods; the tests compare trends.", dd_show(pre_periods))
  y <- y[keep]; tt <- tt[keep]; D <- D[keep]; if (!is.null(id)) id <- id[keep]
  if (!any(D == 1) || !any(D == 0)) dd_stop("`treatname` = \"%s\" has only one group in the pre-periods.", treatname)
  slope <- dd_tt_slope(y, tt, D)
  ch <- dd_tt_changes(y, tt, D, id)
  if (length(ch$u) < 2L || length(ch$v) < 2L)
    dd_stop("fewer than 2 outcome changes in a group (treated %d, comparison %d); give `idname` or more pre-periods.",
            length(ch$u), length(ch$v))
  ws <- dd_with_seed(seed, dd_tt_wasserstein(ch$u, ch$v, nperm, threshold))
  eq <- dd_tt_tost(ch$u, ch$v, margin)
  table <- data.frame(test = c("slope", "wasserstein", "equivalence"),
                      estimate = c(slope$difference, ws$distance, eq$difference),
                      std.error = c(slope$se, NA, eq$se),
                      statistic = c(slope$z, ws$normalized, eq$tost_t),
                      p.value = c(slope$p.value, ws$p.value, eq$p.value),
                      plausible = c(slope$p.value > 0.05, ws$plausible, eq$equivalent), stringsAsFactors = FALSE)
  structure(list(table = table, slope = slope, wasserstein = ws, equivalence = eq, changes = ch,
                 pre_periods = pre_periods, default_pre = default_pre, nperm = nperm, seed = seed,
                 threshold = threshold, yname = yname, by_unit = !is.null(idname)), class = "dd_trend_tests")
}

# least-squares slope per group over the pooled rows, classical SE (the
# regression engine and its iid variance)
dd_tt_slope <- function(y, tt, D) {
  one <- function(s) {
    t <- tt[s]
    if (sum(s) < 3L || length(unique(t)) < 2L) return(c(NA_real_, NA_real_))
    reg <- dd_regress(y[s], cbind(time = as.double(t)))
    c(reg$coef[["time"]], sqrt(dd_vcov(reg, "iid")$V["time", "time"]))
  }
  a <- one(D == 1); c0 <- one(D == 0)
  dif <- a[1] - c0[1]; se <- sqrt(a[2]^2 + c0[2]^2)
  z <- if (is.finite(se) && se > 0) dif / se else NA_real_
  list(treated = a[1], treated_se = a[2], control = c0[1], control_se = c0[2], difference = dif, se = se, z = z,
       p.value = 2 * stats::pnorm(-abs(z)))
}

# outcome changes between consecutive observed pre-periods: per unit
# (labelled by the later row's group) or of the group means
dd_tt_changes <- function(y, tt, D, id) {
  if (is.null(id)) {
    f <- function(s) { m <- tapply(y[s], tt[s], mean); diff(as.vector(m[order(as.numeric(names(m)))])) }
    return(list(u = f(D == 1), v = f(D == 0)))
  }
  o <- order(dd_sorted_codes(id), tt)
  ido <- id[o]; yo <- y[o]; Do <- D[o]
  same <- c(FALSE, ido[-1] == ido[-length(ido)])
  dy <- c(NA, diff(yo))
  list(u = dy[same & Do == 1], v = dy[same & Do == 0])
}

# W1 between the empirical distributions of u and v (scipy's formula)
dd_w1 <- function(u, v) {
  a <- sort(c(u, v))
  x <- a[-length(a)]
  sum(abs(findInterval(x, sort(u)) / length(u) - findInterval(x, sort(v)) / length(v)) * diff(a))
}

dd_tt_wasserstein <- function(u, v, nperm, threshold) {
  m <- length(u); n <- length(v)
  W <- dd_w1(u, v)
  z <- c(u, v)
  p <- NA_real_
  if (nperm > 0L) {
    Ws <- vapply(seq_len(nperm), function(b) { k <- sample.int(m + n); dd_w1(z[k[seq_len(m)]], z[k[-seq_len(m)]]) }, 0)
    p <- mean(Ws >= W - 1e-9 * max(W, 1e-300))
  }
  sdp <- stats::sd(z)
  wn <- if (sdp > 0) W / sdp else NA_real_
  D <- max(abs(stats::ecdf(u)(z) - stats::ecdf(v)(z)))
  list(distance = W, normalized = wn, p.value = p, ks_statistic = D, ks_p.value = dd_ks_exact(D, m, n),
       mean_difference = mean(u) - mean(v), variance_ratio = if (stats::var(v) > 0) stats::var(u) / stats::var(v) else NA_real_,
       plausible = !is.na(p) && p > 0.05 && (is.na(wn) || wn < threshold), n_treated = m, n_control = n)
}

# P(D >= d) for the two-sample Kolmogorov-Smirnov statistic of continuous
# data (no ties): one minus the share of the lattice paths from (0, 0) to
# (m, n) that stay strictly inside |i/m - j/n| < d (d snapped to h / lcm(m,
# n), as scipy), counted row by row (each row a cumulative sum of the row
# below, over its band), rescaled to avoid overflow. Beyond 10,000 per
# group: the limiting distribution.
dd_ks_exact <- function(d, m, n) {
  if (max(m, n) > 10000L) return(1 - dd_kolmogorov(sqrt(m * n / (m + n)) * d))
  gcd <- function(a, b) if (b == 0) a else gcd(b, a %% b)
  g <- gcd(m, n)
  h <- round(d * (m / g) * n)
  if (h == 0) return(1)
  j <- 0:n
  inside <- function(i) abs(i * (n / g) - j * (m / g)) < h   # one contiguous run of j per row
  u <- as.double(cumprod(inside(0)))
  logs <- 0
  for (i in seq_len(m)) {
    ok <- inside(i)
    u <- ifelse(ok, cumsum(ifelse(ok, u, 0)), 0)
    s <- max(u)
    if (s > 0) { u <- u / s; logs <- logs + log(s) }
  }
  if (u[n + 1L] <= 0) return(1)
  max(0, min(1, 1 - exp(log(u[n + 1L]) + logs - lchoose(m + n, m))))
}

# the Kolmogorov distribution P(K <= x), its series
dd_kolmogorov <- function(x) {
  if (x <= 0) return(0)
  k <- 1:100
  1 - 2 * sum((-1)^(k - 1) * exp(-2 * k^2 * x^2))
}

dd_tt_tost <- function(u, v, margin) {
  m <- length(u); n <- length(v)
  su <- stats::var(u); sv <- stats::var(v)
  d <- mean(u) - mean(v)
  se <- sqrt(su / m + sv / n)
  delta <- margin %||% (0.5 * stats::sd(c(u, v)))
  if (!(se > 0)) return(list(difference = d, se = se, margin = delta, df = NA_real_, tost_t = NA_real_,
                             p.value = NA_real_, equivalent = NA))
  A <- if (su > 0) (su / m)^2 / (m - 1) else 0
  B <- if (sv > 0) (sv / n)^2 / (n - 1) else 0
  nu <- if (A + B > 0) (su / m + sv / n)^2 / (A + B) else min(m - 1, n - 1)
  tl <- (d + delta) / se; tu <- (d - delta) / se
  pl <- stats::pt(tl, nu, lower.tail = FALSE); pu <- stats::pt(tu, nu)
  list(difference = d, se = se, margin = delta, df = nu, lower_t = tl, upper_t = tu, lower_p = pl, upper_p = pu,
       tost_t = if (pl >= pu) tl else tu, p.value = max(pl, pu), equivalent = max(pl, pu) < 0.05)
}

#' @export
print.dd_trend_tests <- function(x, digits = 4, ...) {
  dd_check_dots(list(...), "print()")
  cat(sprintf("Parallel-trends tests on the pre-treatment outcomes (%s)\n", x$yname))
  cat(sprintf("Pre-periods: %s%s; changes %s\n", paste(format(x$pre_periods), collapse = ", "),
              if (x$default_pre) " (default: the first half of the periods)" else "",
              if (x$by_unit) "per unit" else "of the group means"))
  s <- x$slope; w <- x$wasserstein; e <- x$equivalence
  cat(sprintf("Slopes: treated %s, comparison %s; difference %s (SE %s), z = %s, p = %s\n",
              format(s$treated, digits = digits), format(s$control, digits = digits), format(s$difference, digits = digits),
              format(s$se, digits = digits), format(s$z, digits = digits), format.pval(s$p.value, digits = digits)))
  cat(sprintf("Wasserstein distance of the changes %s (%s SD), permutation p = %s (%d permutations); KS D = %s, p = %s\n",
              format(w$distance, digits = digits), format(w$normalized, digits = digits),
              format.pval(w$p.value, digits = digits), x$nperm, format(w$ks_statistic, digits = digits),
              format.pval(w$ks_p.value, digits = digits)))
  cat(sprintf("Equivalence (TOST, margin %s): mean change difference %s, p = %s -> %s\n",
              format(e$margin, digits = digits), format(e$difference, digits = digits),
              format.pval(e$p.value, digits = digits),
              if (isTRUE(e$equivalent)) "equivalent at 5%" else "not shown equivalent"))
  cat(sprintf("Plausible by the Wasserstein rule (p > 0.05 and distance < %s SD): %s\n", format(x$threshold),
              if (w$plausible) "yes" else "no"))
  invisible(x)
}

#' @export
tidy.dd_trend_tests <- function(x, ...) {
  dd_check_dots(list(...), "tidy()")
  x$table
}

#' @export
glance.dd_trend_tests <- function(x, ...) {
  dd_check_dots(list(...), "glance()")
  data.frame(n_treated_changes = x$wasserstein$n_treated, n_control_changes = x$wasserstein$n_control,
             n_pre_periods = length(x$pre_periods), nperm = x$nperm, plausible = x$wasserstein$plausible)
}
