# Argument and data checks shared by every estimator. Each error names the
# argument and the offending value; the caller's data are never modified (all
# work happens on a copy of the columns used).

dd_show <- function(x, max = 3L) {
  if (is.null(x)) return("NULL")
  if (is.function(x)) return("a function")
  if (inherits(x, "formula")) return(paste(deparse(x), collapse = " "))
  if (is.data.frame(x)) return(sprintf("a data frame with %d columns", ncol(x)))
  if (inherits(x, "dd_conley")) return(sprintf("dd_conley(cutoff = %s)", format(x$cutoff)))
  if (is.list(x)) return(sprintf("a list of length %d", length(x)))
  if (length(x) == 0L) return(sprintf("%s(0)", class(x)[1]))
  v <- if (is.character(x) || is.factor(x)) paste0('"', as.character(x[seq_len(min(length(x), max))]), '"')
       else format(x[seq_len(min(length(x), max))])
  s <- paste(v, collapse = ", ")
  if (length(x) > max) s <- paste0(s, ", ... (length ", length(x), ")")
  if (length(x) > 1L) s <- paste0("c(", s, ")")
  s
}

# An error for the caller. `.code`: the did_check() finding the error is
# (e.g. "UNBALANCED"): the condition then has class
# c("diffdiff_<code>", "diffdiff_error", "error", "condition") and a `code`
# field, and its message ends with the code, so the same problem has one name
# in did_check()'s report and in every estimator's error.
dd_stop <- function(fmt, ..., .code = NULL) {
  msg <- sprintf(fmt, ...)
  if (is.null(.code)) stop(msg, call. = FALSE)
  stop(structure(class = c(paste0("diffdiff_", tolower(.code)), "diffdiff_error", "error", "condition"),
                 list(message = sprintf("%s [did_check: %s]", msg, .code), call = NULL, code = .code)))
}

dd_check_data <- function(data) {
  if (dd_is_db(data)) dd_db_in_memory(data, dd_caller_name())
  if (!is.data.frame(data))
    dd_stop("`data` must be a data.frame, data.table or tibble; got %s.",
            if (is.null(data)) "NULL" else paste0("an object of class ", class(data)[1]))
  if (nrow(data) == 0L) dd_stop("`data` has no rows.")
  invisible(TRUE)
}

dd_check_string <- function(x, arg, null_ok = FALSE) {
  if (is.null(x) && null_ok) return(invisible(NULL))
  if (inherits(x, "formula") && length(all.vars(x)) == 1L)
    dd_stop("`%s` must be a column name (a string), not a formula; write %s = \"%s\" instead of %s = %s.",
            arg, arg, all.vars(x), arg, paste(deparse(x), collapse = " "))
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
    dd_stop("`%s` = %s is not a column of `data`%s", arg, dd_show(miss),
            if (nzchar(h <- dd_did_you_mean(miss[1], names(data)))) h else ".")
  invisible(cols)
}

# "; did you mean 'first.treat'?" for a misspelt column name (closest names
# by edit distance, ignoring case and punctuation), or ""
dd_did_you_mean <- function(x, names) {
  if (!length(names)) return("")
  key <- function(s) gsub("[^a-z0-9]", "", tolower(s))
  hit <- names[key(names) == key(x)]
  if (!length(hit)) {
    d <- utils::adist(x, names, ignore.case = TRUE)[1, ]
    ok <- d <= max(1, floor(nchar(x) / 3))
    hit <- names[ok][order(d[ok])]
  }
  if (!length(hit)) return("")
  sprintf("; did you mean %s?", paste0("'", utils::head(hit, 3), "'", collapse = " or "))
}

# Required arguments of the calling front end that were not given: an error
# naming the first and what it holds (instead of R's "argument is missing,
# with no default" at its first use).
dd_required <- function(args, env = parent.frame(), labels = character()) {
  what <- c(data = "the data frame", yname = "the outcome column", idname = "the unit identifier column",
            tname = "the period column",
            gname = "the column with each unit's first treated period, e.g. 2004; 0 or NA for never treated",
            dname = "the 0/1 treatment column", dose = "the dose column", treatname = "the 0/1 treated-group column",
            postname = "the 0/1 post-period column")
  what[names(labels)] <- labels
  # a formula where `data` or `yname` belongs (fixest's habit): say how to
  # write the call (the estimators with the formula interface translate it
  # before they get here)
  fun <- tryCatch(as.character(sys.call(-1)[[1]]), error = function(e) "this function")
  dd_formula_refuse(env, fun[length(fun)])
  for (a in args)
    if (eval(call("missing", as.name(a)), env)) dd_stop("`%s` (%s) is missing.", a, what[[a]])
  invisible(TRUE)
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

# A count (iterations, replicates, periods): a whole number that fits an R
# integer. The upper bound matters: as.integer() turns 1e10 (or Inf) into NA,
# which then failed far from the argument ("missing value where TRUE/FALSE
# needed") or reached C as an "internal error".
dd_check_count <- function(x, arg, min = 0) {
  if (!is.numeric(x) || length(x) != 1L || is.na(x) || x < min || x > .Machine$integer.max ||
      x != round(x))
    dd_stop("`%s` must be a whole number between %s and %d; got %s.", arg, format(min),
            .Machine$integer.max, dd_show(x))
  as.integer(x)
}

# one finite number in [lo, hi]; `what` says what is accepted
dd_check_number <- function(x, arg, lo = -Inf, hi = Inf, what = "one finite number") {
  if (!is.numeric(x) || length(x) != 1L || !is.finite(x) || x < lo || x > hi)
    dd_stop("`%s` must be %s; got %s.", arg, what, dd_show(x))
  as.double(x)
}

dd_check_positive <- function(x, arg) {
  if (!is.numeric(x) || length(x) != 1L || is.na(x) || x <= 0)
    dd_stop("`%s` must be a positive number; got %s.", arg, dd_show(x))
  as.double(x)
}

# The one vocabulary of control groups: the spellings of each idea across
# the estimators and their peers (did's "nevertreated", the stacked recipe's
# "never_treated", fixest/Sun-Abraham's "never", ...), documented in one table
# on ?diffdiff ("Vocabulary"). dd_match_vocab() maps any of them onto the
# spelling an estimator uses (its `values`); other values must match exactly.
dd_vocab <- list(never = c("nevertreated", "never_treated", "never"),
                 notyet = c("notyettreated", "not_yet_treated", "notyet"),
                 last = c("last", "lasttreated", "last_treated", "lastcohort", "last_cohort"))

dd_match_vocab <- function(x, values, arg) {
  if (is.character(x) && length(x) == 1L && !is.na(x) && !(x %in% values)) {
    key <- function(s) gsub("[^a-z]", "", tolower(s))
    for (v in values) {
      set <- Filter(function(s) key(v) %in% key(s), dd_vocab)
      if (length(set) && key(x) %in% key(set[[1]])) return(v)
    }
  }
  dd_match_arg(x, values, arg)
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
    X <- .Call(C_col_matrix, lapply(labs, function(v) df[[v]]))
    colnames(X) <- labs
    return(X)
  }
  # model.frame on a plain data frame of the formula's columns only: the
  # columns themselves, not copies (as.data.frame() would deep-copy every
  # column of a data.table); the caller's object is not touched
  vars <- all.vars(xformla)
  sub <- structure(lapply(stats::setNames(vars, vars), function(v) df[[v]]), class = "data.frame",
                   row.names = .row_names_info(df, 0L))
  mf <- stats::model.frame(tt, data = sub, na.action = stats::na.pass)
  X <- stats::model.matrix(tt, mf)
  X <- X[, colnames(X) != "(Intercept)", drop = FALSE]
  dd_double(X)
}

# x (a vector or matrix, attributes kept) as double; no copy when it already
# is (`storage.mode<-` duplicates even then: 24 MB for a 1M x 3 matrix)
dd_double <- function(x) {
  if (!is.double(x)) storage.mode(x) <- "double"
  x
}

dd_check_numeric_col <- function(x, arg, col, convert = TRUE) {
  if (is.logical(x)) x <- as.double(x)
  if (!is.numeric(x))
    dd_stop("`%s` = \"%s\" must be a numeric column; it is %s.", arg, col, class(x)[1])
  # convert = FALSE keeps integer columns as they are (no copy)
  if (convert || !(is.integer(x) || is.double(x))) as.double(x) else x
}

dd_check_weights <- function(w, col, arg = "weightsname") {
  w <- dd_check_numeric_col(w, arg, col)
  neg <- which(!is.na(w) & w < 0)
  if (length(neg))
    dd_stop("`%s` = \"%s\" has negative values (row %d has %s); weights must be >= 0.",
            arg, col, neg[1], format(w[neg[1]]))
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
    dd_stop("`%s` = \"%s\" must be constant within each %s; %s %s has values %s.%s",
            arg, col, what, what, dd_show(u), paste(format(vals), collapse = " and "),
            if (arg == "gname" && is.numeric(g) && all(vals %in% c(0, 1))) paste0(" ", dd_indicator_msg(col)) else "")
  }
  invisible(TRUE)
}

dd_check_periods <- function(t, tname) {
  if (data.table::uniqueN(t) < 2L)
    dd_stop("`tname` = \"%s\" must have at least two periods; the data have only %s.",
            tname, dd_show(unique(t)), .code = "SINGLE_PERIOD")
  invisible(TRUE)
}

# At least two units in the estimation sample (idc: dd_codes() of the unit
# identifiers id): with one, no comparison identifies an effect.
dd_check_units <- function(idc, id, idname) {
  if (attr(idc, "nlev") < 2L)
    dd_stop("`idname` = \"%s\" has a single unit (%s) in the estimation sample; a difference-in-differences comparison needs at least two, so the effect is not identified.",
            idname, dd_show(id[1]), .code = "SINGLE_UNIT")
  invisible(TRUE)
}

# One column, one role. `roles`: a named list argument -> column name(s)
# (NULL entries skipped). Two arguments naming the same column is an error,
# except `cluster` with `idname`, `tname` or `gname` (clustering by the unit,
# the period or the cohort is legitimate). `used`: further columns read (a
# named list argument -> columns, e.g. the covariates of `xformla`). A column
# name that `data` has more than once is an error when it is used: `data[[nm]]`
# would silently take the first.
dd_role_ok <- list(cluster = c("idname", "tname", "gname"))
dd_check_roles <- function(data, roles, used = list()) {
  roles <- roles[!vapply(roles, is.null, logical(1))]
  arg <- rep(names(roles), lengths(roles)); col <- unlist(roles, use.names = FALSE)
  for (i in seq_along(col)) for (j in seq_len(i - 1L)) {
    if (col[i] != col[j] || arg[i] == arg[j]) next
    a <- c(arg[j], arg[i])
    if (a[1] %in% dd_role_ok[[a[2]]] || a[2] %in% dd_role_ok[[a[1]]]) next
    dd_stop("`%s` and `%s` both name the column \"%s\"; each role needs its own column.", a[1], a[2], col[i],
            .code = "ROLE_CONFLICT")
  }
  nms <- names(data)
  dup <- unique(nms[duplicated(nms)])
  if (length(dup)) {
    used <- c(roles, used)
    ua <- rep(names(used), lengths(used)); uc <- unlist(used, use.names = FALSE)
    hit <- which(uc %in% dup)
    if (length(hit))
      dd_stop("`data` has %d columns named \"%s\" (used as `%s`); rename them so that each column name is unique.",
              sum(nms == uc[hit[1]]), uc[hit[1]], ua[hit[1]], .code = "DUPLICATE_COLUMNS")
  }
  invisible(TRUE)
}

# Largest magnitude a numeric input may have: beyond it squares and
# cross-products overflow (and below dd_tiny they underflow) in double
# precision, so variances would be Inf, NaN or 0. (sqrt(.Machine$double.xmax)
# is 1.3e154: dd_huge leaves a factor of 1e4 for sums of squares over many
# rows and for the products of an estimator's intermediate steps.) `code`:
# the did_check() code of the error (OUTCOME_SCALE for the outcome).
dd_huge <- 1e150
dd_tiny <- 1e-150

dd_check_scale <- function(x, what, code = NULL) {
  if (!length(x)) return(invisible(TRUE))
  big <- max(abs(x))
  if (big > dd_huge)
    dd_stop("%s has values as large as %s in absolute value; their squares overflow double precision, so estimates and standard errors would be Inf or NaN. Rescale it (divide by a power of ten) before estimating.",
            what, format(big, digits = 3), .code = code)
  invisible(TRUE)
}

# The outcome after the unusable rows are dropped: it must vary (a constant
# outcome identifies nothing; regressions return 0 with a zero or rounding-
# error standard error), and its scale must not overflow squares.
# `st`: dd_vec_stats(y) when the caller has it (one pass in C).
dd_check_outcome <- function(y, yname, st = dd_vec_stats(y)) {
  # missing outcomes are kept (did_dcdh): the range is over the others
  if (st[1] == length(y)) return(invisible(TRUE))
  r <- st[2:3]
  if (r[1] == r[2])
    dd_stop("`yname` = \"%s\" is constant (%s in every usable row); there is no variation to estimate an effect from.",
            yname, format(r[1]), .code = "OUTCOME_CONSTANT")
  what <- sprintf("`yname` = \"%s\"", yname)
  dd_check_scale(r, what, code = "OUTCOME_SCALE")     # the range has the largest |y|
  if (max(abs(r)) < dd_tiny)
    dd_stop("%s has values no larger than %s in absolute value; their squares underflow double precision, so standard errors would be 0. Rescale it (multiply by a power of ten) before estimating.",
            what, format(max(abs(r)), digits = 3), .code = "OUTCOME_SCALE")
  invisible(TRUE)
}

# Results that are not finite although the data are (the data passed
# dd_prepare's checks): overflow or a breakdown of the arithmetic; an error
# rather than a table of Inf/NaN. NA (not estimable, stated elsewhere) passes.
dd_check_finite_result <- function(tab, yname) {
  bad <- function(v) !is.null(v) && any(is.infinite(v) | is.nan(v))
  if (bad(tab$estimate) || bad(tab$std.error)) {
    i <- which(is.infinite(tab$estimate) | is.nan(tab$estimate) | is.infinite(tab$std.error) | is.nan(tab$std.error))[1]
    dd_stop("the result for %s is not finite (estimate %s, standard error %s) although the data are; the scale of `yname` = \"%s\" or of the covariates probably overflows in squares and cross-products. Rescale them (divide by a power of ten) and re-estimate.",
            tab$term[i], format(tab$estimate[i]), format(tab$std.error[i]), yname)
  }
  invisible(TRUE)
}

# Clustered (or design-based) standard errors need at least two clusters
# (PSUs) in the estimation sample; with one, every score sum is zero up to
# rounding and the standard errors are 0 or 1e-16.
dd_check_nclusters <- function(G, name, arg = "cluster") {
  if (G < 2L) {
    if (arg == "survey")
      dd_stop("`survey` has a single primary sampling unit in the estimation sample; design-based standard errors need at least two.",
              .code = "ONE_CLUSTER")
    dd_stop("`cluster` = \"%s\" has a single cluster in the estimation sample; clustered standard errors need at least two.",
            name, .code = "ONE_CLUSTER")
  }
  invisible(TRUE)
}

# MacKinnon and Webb (2017): with few treated (or few untreated) clusters the
# CR1 interval under-covers and the wild cluster bootstrap over-covers; neither
# is exact. treated: logical per row (a treated observation); control:
# logical per row (an observation of a never-treated unit or of the control
# group), or either as a dd_unit_rows() (one flag per unit); cl: the cluster
# of each row, or its dd_codes() (reused, not recomputed). A cluster is treated when it has a
# treated observation and untreated when it has a control observation (a
# cluster mixing both counts as both, so treatment varying within clusters
# raises no alarm). Without control observations (staggered designs where
# every unit is treated at some point) only the treated count is checked.
# boot: whether the estimator has the wild cluster bootstrap (`nboot`).
dd_few_clusters_min <- 5L
dd_warn_few_clusters <- function(treated, control, cl, name, boot = FALSE,
                                 what = sprintf("`cluster` = \"%s\"", name)) {
  if (is.null(cl) || !length(cl)) return(invisible(FALSE))
  code <- if (is.null(attr(cl, "nlev"))) dd_codes(cl) else cl
  if (attr(code, "nlev") < 2L) return(invisible(FALSE))    # a single cluster is an error elsewhere
  # counted up to m (C stops there), exactly only when the warning fires
  m <- dd_few_clusters_min
  G1 <- dd_levels_hit(code, treated, m)
  G0 <- dd_levels_hit(code, control, m)
  if (G1 >= m && (G0 == 0L || G0 >= m)) return(invisible(FALSE))
  if (G1 >= m) G1 <- dd_levels_hit(code, treated)
  if (G0 >= m) G0 <- dd_levels_hit(code, control)
  dd_warn_few_clusters_counts(G1, G0, what, boot)
}

# the warning from the counts of clusters with treated observations (G1)
# and with control units (G0); also for fits whose rows are not in memory
dd_warn_few_clusters_counts <- function(G1, G0, what, boot = FALSE) {
  m <- dd_few_clusters_min
  if (G1 >= m && (G0 == 0L || G0 >= m)) return(invisible(FALSE))
  warning(sprintf(paste0("%s: %d cluster%s with treated observations and %d with untreated (control) units; ",
                         "with fewer than %d treated or untreated clusters, neither the CR1 interval nor the wild ",
                         "cluster bootstrap is exact (MacKinnon and Webb 2017): CR1 intervals can under-cover badly ",
                         "and the bootstrap can over-cover. %s"),
                  what, as.integer(G1), if (G1 == 1L) "" else "s", as.integer(G0), m,
                  if (boot) "Compare with the wild cluster bootstrap (`nboot` > 0), and read both with caution."
                  else "The wild cluster bootstrap of did_2x2(), did_twfe() and did_event() (`nboot` > 0) is the safer of the two; read either with caution."),
          call. = FALSE)
  invisible(TRUE)
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
  if (length(bad) && !length(allowed))
    dd_stop("`%s()` has no argument %s.", fun, paste0("`", bad, "`", collapse = ", "))
  if (length(bad))
    dd_stop("`%s()` has no argument %s; did-style aliases accepted here: %s.", fun,
            paste0("`", bad, "`", collapse = ", "), paste0("`", allowed, "`", collapse = ", "))
  dots
}

# Arguments of the other estimators that an estimator does not have
# (`xformla`, `cluster`, `weightsname`): an error saying why, instead of R's
# "unused argument". `why`: named reasons (the help page's section says the
# same); `dots`: list(...) of the estimator. Returns the other dots.
dd_unsupported_args <- function(dots, fun, why) {
  nm <- names(dots) %||% rep("", length(dots))
  hit <- intersect(nm, names(why))
  if (length(hit))
    dd_stop("%s() has no `%s` argument: %s", fun, hit[1], why[[hit[1]]], .code = "UNSUPPORTED_ARGUMENT")
  dots
}
