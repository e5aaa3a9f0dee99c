# The data layer of the regression-discontinuity functions (rd_robust(),
# rd_plot(), rd_density()): one place that checks the arguments naming
# columns, reads them, drops incomplete rows and checks the running
# variable against the cutoff. As rdrobust, an observation exactly at the
# cutoff belongs to the right (treated) side. The caller's data are never
# modified.

# The kernels of the RD functions, with their codes in src/locpoly.c (lp_K)
dd_rd_kernels <- c(triangular = 1L, epanechnikov = 0L, uniform = 2L)

# kernel: a full name or rdrobust's abbreviation ("tri", "epa", "uni")
dd_rd_kernel <- function(kernel) {
  if (!is.character(kernel) || length(kernel) != 1L || is.na(kernel))
    dd_stop("`kernel` must be one of \"triangular\", \"epanechnikov\", \"uniform\"; got %s.", dd_show(kernel))
  k <- tolower(kernel)
  full <- names(dd_rd_kernels)
  hit <- full[startsWith(full, k) & nchar(k) >= 3L]
  if (length(hit) != 1L)
    dd_stop("`kernel` must be one of \"triangular\", \"epanechnikov\", \"uniform\" (or \"tri\", \"epa\", \"uni\"); got %s.",
            dd_show(kernel))
  hit
}

# An order or count argument: a whole number in lo..hi
dd_rd_whole <- function(x, arg, lo, hi) {
  if (!is.numeric(x) || length(x) != 1L || is.na(x) || x != round(x) || x < lo || x > hi)
    dd_stop("`%s` must be a whole number from %s to %s; got %s.", arg, format(lo), format(hi), dd_show(x))
  as.integer(x)
}

# A per-side argument (bandwidths, numbers of bins): NULL, or one positive
# number for both sides or two (left, right), returned as c(left, right);
# whole: whole numbers (counts)
dd_rd_pair <- function(v, arg, whole = FALSE) {
  if (is.null(v)) return(NULL)
  if (!is.numeric(v) || !(length(v) %in% 1:2) || any(!is.finite(v)) || any(v <= 0) ||
      (whole && any(v != round(v) | v > .Machine$integer.max)))
    dd_stop("`%s` must be one %s or two (left, right); got %s.", arg,
            if (whole) "whole number >= 1" else "positive number", dd_show(v))
  rep_len(as.double(v), 2L)
}

# The cutoff: one finite number
dd_rd_cutoff <- function(c) {
  if (!is.numeric(c) || length(c) != 1L || !is.finite(c))
    dd_stop("`c` (the cutoff) must be one finite number; got %s.", dd_show(c))
  as.double(c)
}

# Read and check the columns of an RD call. cols: a named list argument ->
# column name (NULL: not given), with the running variable as `xname`;
# covs: NULL, a one-sided formula or column names (expanded as xformla is:
# factors to indicators). Rows with a missing value in any column used are
# dropped with a message; negative weights and non-numeric columns are
# errors. Returns the columns (numeric; `cluster` as given), `Z` (the
# covariate matrix or NULL), `rows` (the data rows kept) and `n_dropped`.
dd_rd_data <- function(data, cols, covs = NULL, c = 0) {
  dd_check_data(data)
  for (a in names(cols)) dd_check_string(cols[[a]], a, null_ok = a != "xname")
  cvars <- NULL
  if (!is.null(covs)) {
    if (is.character(covs)) {
      dd_check_cols(data, covs, "covs")
      covs <- stats::reformulate(sprintf("`%s`", covs))
    }
    if (!inherits(covs, "formula") || length(covs) != 2L)
      dd_stop("`covs` must be a one-sided formula such as ~ z1 + z2 or column names; got %s.", dd_show(covs))
    cvars <- all.vars(covs)
    miss <- setdiff(cvars, names(data))
    if (length(miss)) dd_stop("`covs` uses %s, which is not a column of `data`.", dd_show(miss))
  }
  for (a in names(cols)) if (!is.null(cols[[a]])) dd_check_cols(data, cols[[a]], a)
  dd_check_roles(data, cols, list(covs = cvars))
  out <- list()
  for (a in names(cols)) {
    if (is.null(cols[[a]])) next
    v <- data[[cols[[a]]]]
    out[[a]] <- if (a == "cluster") v else if (a == "weightsname") dd_check_weights(v, cols[[a]])
                else dd_check_numeric_col(v, a, cols[[a]])
  }
  Z <- if (is.null(covs)) NULL else dd_covariates(covs, data)
  if (!is.null(covs) && (is.null(Z) || !ncol(Z)))
    dd_stop("`covs` = %s has no covariate terms.", dd_show(covs))
  ok <- rep(TRUE, nrow(data))
  for (a in names(out)) ok <- ok & !is.na(out[[a]])
  if (!is.null(Z)) ok <- ok & !rowSums(is.na(Z))
  for (a in setdiff(names(out), "cluster")) {
    bad <- which(ok & !is.finite(out[[a]]))
    if (length(bad))
      dd_stop("`%s` = \"%s\" has a non-finite value (%s in row %d).", a, cols[[a]], format(out[[a]][bad[1]]), bad[1])
  }
  if (!is.null(Z) && any(!is.finite(Z[ok, ])))
    dd_stop("`covs` has non-finite values (Inf or NaN).")
  nd <- sum(!ok)
  if (nd == length(ok))
    dd_stop("no row of `data` has all of %s observed.", paste(unlist(cols), collapse = ", "))
  if (nd) {
    message(sprintf("Dropped %s row%s with missing values in %s.", dd_fmt_int(nd), if (nd == 1L) "" else "s",
                    paste(c(unlist(cols), cvars), collapse = ", ")))
    out <- lapply(out, function(v) v[ok])
    if (!is.null(Z)) Z <- Z[ok, , drop = FALSE]
  }
  dd_check_scale(out$xname, sprintf("`xname` = \"%s\"", cols$xname))
  c(out, list(Z = Z, rows = which(ok), n_dropped = nd))
}

# The running variable against the cutoff: a constant running variable, a
# cutoff outside its range and a side with too few distinct values (need:
# distinct values each side must have) are errors naming the numbers. Values
# equal to the cutoff count on the right. sorted: x is in increasing order
# (the counts then come from its runs).
dd_rd_sides <- function(x, c, xname, need = 1L, sorted = FALSE) {
  r <- if (sorted) x[c(1L, length(x))] else range(x)
  if (r[1] == r[2])
    dd_stop("`xname` = \"%s\" is constant (%s in every usable row); a regression discontinuity needs a running variable on both sides of the cutoff.",
            xname, format(r[1]))
  nl <- if (sorted) findInterval(c, x, left.open = TRUE) else sum(x < c)
  nr <- length(x) - nl
  if (nl == 0L || nr == 0L || c <= r[1])
    dd_stop("the cutoff `c` = %s is not inside the range of `xname` = \"%s\" ([%s, %s]): %s observations below it and %s at or above it.",
            format(c), xname, format(r[1]), format(r[2]), dd_fmt_int(nl), dd_fmt_int(nr))
  if (sorted) {
    new <- c(TRUE, x[-1L] != x[-length(x)])
    ul <- sum(new[seq_len(nl)]); ur <- sum(new[-seq_len(nl)])   # x[nl] < c <= x[nl + 1]: a new run
  } else {
    ul <- length(unique(x[x < c])); ur <- length(unique(x[x >= c]))
  }
  if (min(ul, ur) < need)
    dd_stop("`xname` = \"%s\" has %d distinct value%s below the cutoff and %d at or above it; each side needs at least %d.",
            xname, ul, if (ul == 1L) "" else "s", ur, need)
  c(N_l = nl, N_r = nr, M_l = ul, M_r = ur)
}
