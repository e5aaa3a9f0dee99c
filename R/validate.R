# Argument and data checks shared by every estimator. Each error names the
# argument and the offending value; the caller's data are never modified (all
# work happens on a copy of the columns used).

dd_show <- function(x, max = 3L) {
  if (is.null(x)) return("NULL")
  if (is.function(x)) return("a function")
  if (inherits(x, "formula")) return(paste(deparse(x), collapse = " "))
  if (is.data.frame(x)) return(sprintf("a data frame with %d columns", ncol(x)))
  if (is.list(x)) return(sprintf("a list of length %d", length(x)))
  if (length(x) == 0L) return(sprintf("%s(0)", class(x)[1]))
  v <- if (is.character(x) || is.factor(x)) paste0('"', as.character(x[seq_len(min(length(x), max))]), '"')
       else format(x[seq_len(min(length(x), max))])
  s <- paste(v, collapse = ", ")
  if (length(x) > max) s <- paste0(s, ", ... (length ", length(x), ")")
  if (length(x) > 1L) s <- paste0("c(", s, ")")
  s
}

dd_stop <- function(fmt, ...) stop(sprintf(fmt, ...), call. = FALSE)

dd_check_data <- function(data) {
  if (!is.data.frame(data))
    dd_stop("`data` must be a data.frame, data.table or tibble; got %s.",
            if (is.null(data)) "NULL" else paste0("an object of class ", class(data)[1]))
  if (nrow(data) == 0L) dd_stop("`data` has no rows.")
  invisible(TRUE)
}

dd_check_string <- function(x, arg, null_ok = FALSE) {
  if (is.null(x) && null_ok) return(invisible(NULL))
  if (!is.character(x) || length(x) != 1L || is.na(x) || !nzchar(x))
    dd_stop("`%s` must be a single column name (a string); got %s.", arg, dd_show(x))
  invisible(x)
}

dd_check_cols <- function(data, cols, arg) {
  if (is.null(cols)) return(invisible(NULL))
  if (!is.character(cols) || anyNA(cols) || !length(cols))
    dd_stop("`%s` must be column names (strings); got %s.", arg, dd_show(cols))
  miss <- setdiff(cols, names(data))
  if (length(miss))
    dd_stop("`%s` = %s is not a column of `data`.", arg, dd_show(miss))
  invisible(cols)
}

# formula or character -> character vector of column names
dd_cluster_names <- function(cluster, data) {
  if (is.null(cluster)) return(NULL)
  if (inherits(cluster, "formula")) cluster <- all.vars(cluster)
  if (!is.character(cluster) || !length(cluster) || length(cluster) > 2L || anyNA(cluster))
    dd_stop("`cluster` must be one or two column names (or a one-sided formula such as ~id); got %s.",
            dd_show(cluster))
  dd_check_cols(data, cluster, "cluster")
  cluster
}

dd_check_alpha <- function(alpha) {
  if (!is.numeric(alpha) || length(alpha) != 1L || is.na(alpha) || alpha <= 0 || alpha >= 1)
    dd_stop("`alpha` must be a number strictly between 0 and 1; got %s.", dd_show(alpha))
  as.double(alpha)
}

dd_check_count <- function(x, arg, min = 0) {
  if (!is.numeric(x) || length(x) != 1L || is.na(x) || x < min || x != round(x))
    dd_stop("`%s` must be a whole number >= %s; got %s.", arg, min, dd_show(x))
  as.integer(x)
}

dd_check_positive <- function(x, arg) {
  if (!is.numeric(x) || length(x) != 1L || is.na(x) || x <= 0)
    dd_stop("`%s` must be a positive number; got %s.", arg, dd_show(x))
  as.double(x)
}

dd_match_arg <- function(x, choices, arg) {
  if (!is.character(x) || length(x) != 1L || is.na(x) || !(x %in% choices))
    dd_stop("`%s` must be one of %s; got %s.", arg,
            paste0('"', choices, '"', collapse = ", "), dd_show(x))
  x
}

dd_check_flag <- function(x, arg) {
  if (!is.logical(x) || length(x) != 1L || is.na(x))
    dd_stop("`%s` must be TRUE or FALSE; got %s.", arg, dd_show(x))
  x
}

dd_check_xformla <- function(xformla, data) {
  if (is.null(xformla)) return(NULL)
  if (!inherits(xformla, "formula") || length(xformla) != 2L)
    dd_stop("`xformla` must be a one-sided formula such as ~ x1 + x2; got %s.", dd_show(xformla))
  vars <- all.vars(xformla)
  miss <- setdiff(vars, names(data))
  if (length(miss)) dd_stop("`xformla` uses %s, which is not a column of `data`.", dd_show(miss))
  xformla
}

# Covariate matrix from a one-sided formula (factors expanded, no intercept).
dd_covariates <- function(xformla, df, as_list = FALSE) {
  if (is.null(xformla)) return(NULL)
  for (v in all.vars(xformla)) {
    x <- df[[v]]
    if (!(is.numeric(x) || is.logical(x) || is.factor(x) || is.character(x)))
      dd_stop("`xformla` variable \"%s\" must be numeric, logical, factor or character; it is %s.",
              v, class(x)[1])
  }
  tt <- stats::terms(xformla)
  labs <- attr(tt, "term.labels")
  if (length(labs) == 0L) return(NULL)
  # fast path: plain numeric columns, one allocation
  if (all(labs %in% names(df)) && all(vapply(labs, function(v) is.numeric(df[[v]]) || is.logical(df[[v]]),
                                             logical(1)))) {
    # as_list: the columns themselves (no copy), for callers that read them in C
    if (as_list) return(stats::setNames(lapply(labs, function(v) df[[v]]), labs))
    X <- matrix(0, nrow(df), length(labs), dimnames = list(NULL, labs))
    for (j in seq_along(labs)) X[, j] <- df[[labs[j]]]
    return(X)
  }
  mf <- stats::model.frame(tt, data = as.data.frame(df), na.action = stats::na.pass)
  X <- stats::model.matrix(tt, mf)
  X <- X[, colnames(X) != "(Intercept)", drop = FALSE]
  storage.mode(X) <- "double"
  X
}

dd_check_numeric_col <- function(x, arg, col, convert = TRUE) {
  if (is.logical(x)) x <- as.double(x)
  if (!is.numeric(x))
    dd_stop("`%s` = \"%s\" must be a numeric column; it is %s.", arg, col, class(x)[1])
  # convert = FALSE keeps integer columns as they are (no copy)
  if (convert || !(is.integer(x) || is.double(x))) as.double(x) else x
}

# Rows to drop for NA/NaN/Inf; reports counts by argument in one message.
dd_drop_rows <- function(bad_list, n) {
  drop <- logical(n)
  parts <- character(0)
  for (nm in names(bad_list)) {
    b <- bad_list[[nm]]
    if (is.null(b)) next
    k <- sum(b & !drop)
    if (k > 0L) parts <- c(parts, sprintf("%d in %s", k, nm))
    drop <- drop | b
  }
  if (any(drop)) {
    if (all(drop)) dd_stop("every row of `data` has a missing or non-finite value (%s).",
                           paste(parts, collapse = ", "))
    message(sprintf("diffdiff: %d observation%s removed because of NA/NaN/Inf values (%s).",
                    sum(drop), if (sum(drop) > 1) "s" else "", paste(parts, collapse = ", ")))
  }
  drop
}

dd_check_weights <- function(w, col) {
  w <- dd_check_numeric_col(w, "weightsname", col)
  neg <- which(!is.na(w) & w < 0)
  if (length(neg))
    dd_stop("`weightsname` = \"%s\" has negative values (row %d has %s); weights must be >= 0.",
            col, neg[1], format(w[neg[1]]))
  w
}

dd_check_binary <- function(d, arg, col) {
  bad <- .Call(C_first_not01, as.double(d))
  if (bad > 0)
    dd_stop("`%s` = \"%s\" must be a 0/1 indicator; row %d has %s.", arg, col, bad[1], format(d[bad[1]]))
  invisible(TRUE)
}


dd_check_constant_within <- function(g, id, arg, col, what = "unit", code = dd_codes(id)) {
  x <- if (is.double(g) || is.integer(g)) g else if (is.numeric(g)) as.double(g) else dd_codes(g)
  bad <- .Call(C_first_varying, code, attr(code, "nlev"), x)
  if (bad > 0) {
    u <- id[bad]
    vals <- sort(unique(g[id == u]), na.last = TRUE)
    dd_stop("`%s` = \"%s\" must be constant within each %s; %s %s has values %s.",
            arg, col, what, what, dd_show(u), paste(format(vals), collapse = " and "))
  }
  invisible(TRUE)
}

dd_check_periods <- function(t, tname) {
  if (data.table::uniqueN(t) < 2L)
    dd_stop("`tname` = \"%s\" must have at least two periods; the data have only %s.",
            tname, dd_show(unique(t)))
  invisible(TRUE)
}

# Shared data preparation for the front ends: checks the columns, builds the
# covariate matrix, drops rows with NA/NaN/Inf (one message with the counts)
# and zero weights, and returns plain vectors. `roles` is a named character
# vector argument -> column (e.g. c(idname = "id")); `na_ok` names roles whose
# NA values are meaningful (gname: never treated) and kept.
dd_prepare <- function(data, yname, roles = character(), xformla = NULL, weightsname = NULL,
                       cluster = NULL, fe = NULL, na_ok = character(), x_list = FALSE) {
  dd_check_data(data)
  dd_check_string(yname, "yname")
  dd_check_cols(data, yname, "yname")
  for (r in names(roles)) { dd_check_string(roles[[r]], r); dd_check_cols(data, roles[[r]], r) }
  dd_check_string(weightsname, "weightsname", null_ok = TRUE)
  dd_check_cols(data, weightsname, "weightsname")
  dd_check_cols(data, fe, "fe")
  xformla <- dd_check_xformla(xformla, data)
  n <- nrow(data)
  y <- dd_check_numeric_col(data[[yname]], "yname", yname)
  X <- dd_covariates(xformla, data, as_list = x_list)   # a matrix, or (x_list) possibly a list of columns
  w <- if (is.null(weightsname)) NULL else dd_check_weights(data[[weightsname]], weightsname)
  vals <- lapply(roles, function(col) data[[col]])
  cl <- lapply(stats::setNames(cluster, cluster), function(col) data[[col]])
  fel <- lapply(stats::setNames(fe, fe), function(col) data[[col]])
  # cheap count first: masks are built only when something is missing
  counts <- .Call(C_count_bad, c(list(y), if (is.list(X)) X else list(X), list(w),
                                 vals[setdiff(names(vals), na_ok)], cl, fel))
  if (all(counts == 0L) && (is.null(w) || all(w != 0))) {
    return(list(y = y, X = X, w = w, vals = vals, cluster = cl, fe = fel, n_dropped = 0L,
                rows = seq_len(n)))
  }
  bad <- list()
  bad[[sprintf("`yname` (\"%s\")", yname)]] <- !is.finite(y)
  if (!is.null(X)) bad[["`xformla`"]] <- if (is.list(X)) Reduce(`|`, lapply(X, function(v) !is.finite(v)))
                                         else rowSums(!is.finite(X)) > 0
  if (!is.null(w)) bad[[sprintf("`weightsname` (\"%s\")", weightsname)]] <- !is.finite(w)
  for (r in setdiff(names(roles), na_ok)) {
    v <- vals[[r]]
    bad[[sprintf("`%s` (\"%s\")", r, roles[[r]])]] <- if (is.numeric(v)) is.na(v) | is.infinite(v) else is.na(v)
  }
  for (nm in names(cl)) bad[[sprintf("`cluster` (\"%s\")", nm)]] <- is.na(cl[[nm]])
  for (nm in names(fel)) bad[[sprintf("`fe` (\"%s\")", nm)]] <- is.na(fel[[nm]])
  drop <- dd_drop_rows(bad, n)
  if (!is.null(w)) {
    zero <- !drop & w == 0
    if (any(zero)) {
      if (all(zero | drop)) dd_stop("`weightsname` = \"%s\" is zero for every usable row.", weightsname)
      message(sprintf("diffdiff: %d observation%s removed because of zero weight.", sum(zero),
                      if (sum(zero) > 1) "s" else ""))
      drop <- drop | zero
    }
  }
  if (!any(drop)) {
    return(list(y = y, X = X, w = w, vals = vals, cluster = cl, fe = fel, n_dropped = 0L,
                rows = seq_len(n)))
  }
  keep <- which(!drop)
  sub <- function(v) if (is.null(v)) NULL else if (is.matrix(v)) v[keep, , drop = FALSE] else v[keep]
  list(y = y[keep], X = if (is.list(X)) lapply(X, sub) else sub(X), w = sub(w), vals = lapply(vals, sub), cluster = lapply(cl, sub),
       fe = lapply(fel, sub), n_dropped = sum(drop), rows = keep)
}

# did's spellings of the inference arguments, so that a working did call runs
# after changing only the function name. Returns the recognised ones; anything
# else in `dots` is an error naming it.
dd_did_aliases <- function(dots, allowed, fun) {
  if (!length(dots)) return(list())
  nms <- names(dots)
  if (is.null(nms) || any(!nzchar(nms)))
    dd_stop("`%s()` got an unnamed extra argument; did's options must be named.", fun)
  bad <- setdiff(nms, allowed)
  if (length(bad))
    dd_stop("`%s()` has no argument %s; did-style aliases accepted here: %s.", fun,
            paste0("`", bad, "`", collapse = ", "), paste0("`", allowed, "`", collapse = ", "))
  dots
}
