# Event-time horizons to report: `horizon` (NULL: every horizon >= 0 with
# treated observations) checked against those present; absent ones dropped
# with a message.
dd_horizons <- function(horizon, present, arg = "horizon") {
  present <- sort(unique(present))
  if (is.null(horizon) || isTRUE(horizon)) return(present)
  if (!is.numeric(horizon) || !length(horizon) || anyNA(horizon) || any(horizon != round(horizon)) ||
      any(horizon < 0))
    dd_stop("`%s` must be NULL, TRUE or whole numbers >= 0 (periods since treatment); got %s.",
            arg, dd_show(horizon))
  horizon <- sort(unique(horizon))
  miss <- setdiff(horizon, present)
  if (length(miss)) {
    if (length(miss) == length(horizon))
      dd_stop("`%s` = %s: no treated observation at any of these horizons; observed horizons are %s.",
              arg, dd_show(horizon), dd_show(present))
    message(sprintf("diffdiff: `%s` %s dropped: no treated observations at %s.", arg,
                    dd_show(miss), if (length(miss) > 1) "these horizons" else "this horizon"))
  }
  intersect(horizon, present)
}

# Variance of linear estimators (did_bjs, did_gardner) from per-observation
# contributions given in blocks (rows, an m-column matrix M of those rows'
# contributions, and the estimates' columns it feeds; blocks may share rows):
# sums over clusters (st$cl) or the survey design's PSU / replicate rows,
# then their cross-products. Clustered: the cluster sums of each block are
# added, without forming the n x K matrix; otherwise the influence-function
# rows of did_cs (dd_if_rows) on the assembled matrix. K names the
# estimates; n the rows.
dd_lin_vcov_blocks <- function(blocks, names, n, st) {
  K <- length(names)
  if (is.null(st$design) && !is.null(st$cl)) {
    used <- unique(unlist(lapply(blocks, `[[`, "rows")))
    dd_check_nclusters(length(unique(st$cl[used])), names(st$cluster)[1])
  }
  ifs <- NULL
  if (!is.null(st$design) || is.null(st$cl)) {
    psi <- matrix(0, n, K)
    for (b in blocks) psi[b$rows, b$cols] <- psi[b$rows, b$cols] + b$M
    used <- sort(unique(unlist(lapply(blocks, `[[`, "rows"))))
    # observations in (unit, period) order, so that the multiplier bootstrap's
    # rows (observations, or a survey design's PSUs in the order of their
    # first unit) do not depend on the order of the rows of the data
    used <- used[order(dd_row_ranks(list(st$id[used], st$tt[used])))]
    psi <- dd_ifs_dense(psi[used, , drop = FALSE])
    R <- as.matrix(dd_if_rows(psi, if (!is.null(st$design)) dd_svy_if_rows(st$design, st$rows[used])))
    V <- crossprod(R)
    if (is.null(st$design) || !st$design$replicate) ifs <- R
  } else {
    S <- matrix(0, attr(st$cl, "nlev"), K)
    for (b in blocks) {
      s <- rowsum(b$M, st$cl[b$rows], reorder = TRUE)
      i <- as.integer(rownames(s)) + 1L
      S[i, b$cols] <- S[i, b$cols] + s
    }
    V <- crossprod(S)
    # rows for the multiplier bootstrap: clusters in sorted order of their values
    cv <- st$cluster[[1]][dd_first_rows(st$cl)]
    ifs <- S[order(cv), , drop = FALSE]
  }
  dimnames(V) <- list(names, names)
  structure(V, ifs = ifs)
}
