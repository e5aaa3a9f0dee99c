# Panel indexing for C: 0-based integer codes for fixed effects and clusters,
# singleton removal, and nesting of fixed effects in clusters.

# 0-based codes, levels in order of first appearance, with attribute nlev.
# Whole numbers in a compact range: direct addressing in C; otherwise hashing.
dd_codes <- function(x) {
  if (is.factor(x)) x <- as.integer(x)
  code <- if (is.numeric(x)) .Call(C_group_codes, x) else NULL
  if (is.null(code)) {
    u <- unique(x)
    code <- match(x, u) - 1L
    attr(code, "nlev") <- length(u)
  }
  code
}

# The fixed effects as C takes them: a list of 0-based integer code vectors
# (from dd_codes()) and the number of levels of each
dd_fe_matrix <- function(codes) {
  if (!length(codes)) return(NULL)
  nlev <- vapply(codes, function(z) attr(z, "nlev"), integer(1))
  list(codes = unname(codes), nlev = as.integer(nlev), names = names(codes))
}

# Logical vector (or NULL when there is none): observations that are
# fixed-effect singletons, removed recursively (a level with one observation is
# perfectly fitted and carries no information on the slopes), as fixest's
# default does. `codes`: a list of dd_codes() vectors.
dd_singletons <- function(codes) {
  .Call(C_singletons, unname(codes), vapply(codes, attr, integer(1), "nlev"))
}

# Is each level of fixed effect `f` inside one cluster? Both dd_codes().
dd_nested <- function(f, cl) {
  identical(f, cl) || .Call(C_nested, f, attr(f, "nlev"), cl)
}

# row of the first occurrence of each level of a dd_codes() vector
dd_first_rows <- function(code) .Call(C_first_rows, code, attr(code, "nlev"))

# 0-based codes numbered in sorted order of the values (not of first
# appearance), with attribute nlev: the same for any order of the rows
dd_sorted_codes <- function(x) {
  if (is.factor(x)) x <- as.integer(x)
  u <- sort(unique(x))
  code <- match(x, u) - 1L
  attr(code, "nlev") <- length(u)
  code
}

# 1-based rank of each row in the order of the vectors in `key` (ties in
# order of appearance)
dd_row_ranks <- function(key) {
  o <- do.call(order, unname(key))
  r <- integer(length(o))
  r[o] <- seq_along(o)
  r
}

# re-code after subsetting (levels may have vanished)
dd_recode <- function(code, rows) dd_codes(code[rows])

dd_check_unique_codes <- function(idc, tc, id, t) {
  dup <- .Call(C_first_dup, idc, attr(idc, "nlev"), tc, attr(tc, "nlev"))
  if (is.na(dup)) dup <- anyDuplicated(as.double(idc) * attr(tc, "nlev") + tc)
  if (dup)
    dd_stop("`idname` and `tname` must identify rows uniquely; unit %s has more than one row in period %s.",
            dd_show(id[dup]), dd_show(t[dup]))
  invisible(TRUE)
}

`%||%` <- function(a, b) if (is.null(a)) b else a
