# Panel indexing for C: 0-based integer codes for fixed effects and clusters,
# singleton removal, and nesting of fixed effects in clusters.

# 0-based codes, levels in order of first appearance (hash-based, O(n))
dd_codes <- function(x) {
  u <- unique(x)
  code <- match(x, u) - 1L
  attr(code, "nlev") <- length(u)
  code
}

# Integer matrix n x Q of 0-based codes plus the number of levels
dd_fe_matrix <- function(fe_list) {
  if (!length(fe_list)) return(NULL)
  codes <- lapply(fe_list, dd_codes)
  nlev <- vapply(codes, function(z) attr(z, "nlev"), integer(1))
  M <- matrix(unlist(lapply(codes, as.integer), use.names = FALSE), ncol = length(codes))
  colnames(M) <- names(fe_list)
  list(codes = M, nlev = as.integer(nlev), names = names(fe_list))
}

# Logical vector: observations that are fixed-effect singletons, removed
# recursively (a level with one observation is perfectly fitted and carries no
# information on the slopes), as fixest's default does.
dd_singletons <- function(fe_list) {
  n <- length(fe_list[[1]])
  keep <- rep(TRUE, n)
  if (length(fe_list) == 0L) return(!keep)
  codes <- lapply(fe_list, function(f) match(f, unique(f)))
  repeat {
    changed <- FALSE
    for (cq in codes) {
      cnt <- tabulate(cq[keep], nbins = max(cq))
      s <- keep & cnt[cq] == 1L
      if (any(s)) { keep[s] <- FALSE; changed <- TRUE }
    }
    if (!changed || !any(keep)) break
  }
  !keep
}

# Is each level of fixed effect `f` (codes) inside one cluster (codes)?
dd_nested <- function(f, cl) {
  key <- as.double(f) * (max(cl) + 1) + cl
  length(unique(key)) == attr(f, "nlev") %||% length(unique(f))
}

`%||%` <- function(a, b) if (is.null(a)) b else a
