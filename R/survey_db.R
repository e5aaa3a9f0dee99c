# Survey cell means on a database table (R/dbi.R): survey_design() of a
# database table records the design's columns (one-stage: weights,
# strata, PSUs; with replacement, as survey without fpc), and
# aggregate_survey() computes in the engine each cell's weight total and
# weighted sums, then each PSU's (or, without PSUs, each stratum's) sums of
# the cell's linearised values w_i (y_i - m_d) / W_d, centred at the cell
# means by a join; the design-based variance of a domain mean is
# sum_h n_h / (n_h - 1) (sum_j z_hj^2 - (sum_j z_hj)^2 / n_h), n_h the
# stratum's PSUs, as survey::svyby(svymean) computes it.

dd_db_survey_design <- function(data, weights, strata, ids, fpc, nest, lonely_psu, repweights, type) {
  lonely_psu <- dd_match_arg(lonely_psu[1], c("fail", "remove", "certainty", "adjust", "average"), "lonely_psu")
  nest <- dd_check_flag(nest, "nest")
  if (!is.null(repweights) || !is.null(type)) dd_db_in_memory(data, "survey_design() with replicate weights")
  if (!is.null(fpc)) dd_db_in_memory(data, "survey_design(fpc = )")
  if (lonely_psu != "fail") dd_db_in_memory(data, sprintf("survey_design(lonely_psu = \"%s\")", lonely_psu))
  nm <- function(v, arg) {
    if (is.null(v)) return(NULL)
    v <- if (inherits(v, "formula")) all.vars(v) else v
    if (!is.character(v) || anyNA(v)) dd_stop("`%s` must be a one-sided formula or a column name; got %s.", arg, dd_show(v))
    if (length(v) > 1L)
      dd_db_in_memory(data, sprintf("survey_design(%s = %s) (more than one variable: a multistage design)", arg, dd_show(v)))
    v
  }
  ids <- nm(ids, "ids")
  if (identical(ids, character())) ids <- NULL
  w <- nm(weights, "weights")
  if (is.null(w)) dd_db_in_memory(data, "survey_design() without `weights`")
  des <- list(weights = w, strata = nm(strata, "strata"), ids = ids, nest = nest, lonely_psu = lonely_psu)
  cols <- Filter(Negate(is.null), des[c("weights", "strata", "ids")])
  dd_db_open(data, cols, "survey_design")                 # the columns exist
  structure(des, class = "dd_db_survey_design")
}

#' @export
print.dd_db_survey_design <- function(x, ...) {
  dd_check_dots(list(...), "print()")
  cat(sprintf("Survey design on a database table: weights %s%s%s (one stage, with replacement)\n", x$weights,
              if (is.null(x$strata)) "" else sprintf(", strata %s", x$strata),
              if (is.null(x$ids)) ", individual sampling" else sprintf(", PSUs %s%s", x$ids, if (x$nest) " (nested)" else "")))
  invisible(x)
}

dd_aggregate_survey_db <- function(data, ynames, by, design) {
  if (!inherits(design, "dd_db_survey_design"))
    dd_stop("`data` is a database table, so `design` must be survey_design() of that table (survey_design(data, weights = ~ w, strata = , ids = )); got %s.",
            dd_show(class(design)))
  if (!is.character(ynames) || !length(ynames)) dd_stop("`ynames` must be column names; got %s.", dd_show(ynames))
  byv <- if (inherits(by, "formula")) all.vars(by) else by
  if (!is.character(byv) || !length(byv)) dd_stop("`by` must be column names or a formula; got %s.", dd_show(by))
  roles <- c(stats::setNames(as.list(ynames), rep("ynames", length(ynames))), stats::setNames(as.list(byv), rep("by", length(byv))),
             Filter(Negate(is.null), design[c("weights", "strata", "ids")]))
  src <- dd_db_open(data, list(), "aggregate_survey")
  have <- colnames(data)
  for (i in seq_along(roles)) if (!roles[[i]] %in% have)
    dd_stop("`%s` = \"%s\" is not a column of the database table `data` (its columns: %s).", names(roles)[i],
            roles[[i]], dd_show(have, max = 8L))
  q <- src$q
  nul <- dd_db_get(src, sprintf("SELECT %s FROM %s", paste(sprintf("%s AS dd_na%d", dd_db_count_if(paste(vapply(roles, q, ""), "IS NULL")),
                                                              seq_along(roles)), collapse = ", "), src$from))
  k <- which(unlist(nul) > 0)
  if (length(k))
    dd_stop("`%s` column \"%s\" has missing (NULL) values in %s row(s) of the database table.", names(roles)[k[1]],
            roles[[k[1]]], format(unlist(nul)[k[1]]))
  w <- src$num(q(design$weights))
  ys <- vapply(ynames, function(v) src$num(q(v)), "")
  bys <- vapply(byv, q, "")
  bsel <- paste(sprintf("%s AS dd_b%d", bys, seq_along(bys)), collapse = ", ")
  bgrp <- paste(bys, collapse = ", ")
  cells <- dd_db_get(src, sprintf("SELECT %s, COUNT(*) AS dd_n, SUM(%s) AS dd_w, SUM(%s * %s) AS dd_w2, %s, %s AS dd_neg FROM %s GROUP BY %s",
                                  bsel, w, w, w, paste(sprintf("SUM(%s * %s) AS dd_s%d", w, ys, seq_along(ys)), collapse = ", "),
                                  dd_db_count_if(paste(w, "< 0")), src$from, bgrp))
  if (sum(cells$dd_neg) > 0) dd_stop("`weights` = \"%s\" has negative values in the database table.", design$weights)
  for (j in seq_along(ynames)) if (!is.numeric(cells[[paste0("dd_s", j)]]))
    dd_stop("`ynames` column \"%s\" must be numeric.", ynames[j])
  # the cells in sorted order of the by columns (as in memory)
  codes <- lapply(seq_along(byv), function(j) dd_sorted_codes(cells[[paste0("dd_b", j)]]))
  o <- do.call(order, codes)
  cells <- cells[o, , drop = FALSE]
  if (any(cells$dd_w == 0)) {
    k <- which(cells$dd_w == 0)
    dd_stop("`by` cell %s has zero total weight in `design` (%d such cell%s); its design-based mean is undefined. Drop its rows or give them positive weights.",
            paste(sprintf("%s = %s", byv, vapply(seq_along(byv), function(j) format(cells[[paste0("dd_b", j)]][k[1]]), "")), collapse = ", "),
            length(k), if (length(k) > 1L) "s" else "")
  }
  nd <- nrow(cells)
  m <- vapply(seq_along(ynames), function(j) cells[[paste0("dd_s", j)]] / cells$dd_w, numeric(nd))
  m <- matrix(m, nd, length(ynames))
  # the cells' means as a table the engine joins with
  mt <- data.frame(cells[paste0("dd_b", seq_along(byv))], stats::setNames(as.data.frame(m), paste0("dd_m", seq_along(ynames))))
  tmp <- paste0("dd_cells_", paste(sample(c(letters, 0:9), 12, TRUE), collapse = ""))
  DBI::dbWriteTable(src$con, tmp, mt, temporary = TRUE)
  on.exit(DBI::dbRemoveTable(src$con, tmp), add = TRUE)
  on <- paste(sprintf("%s = dd_m.dd_b%d", paste0("dd_q.", bys), seq_along(bys)), collapse = " AND ")
  h <- if (is.null(design$strata)) "1" else paste0("dd_q.", q(design$strata))
  cen <- sprintf("%s * (%s - dd_m.dd_m%d)", w, ys, seq_along(ys))
  if (!is.null(design$ids)) {
    j <- paste0("dd_q.", q(design$ids))
    z <- dd_db_get(src, sprintf("SELECT %s, %s AS dd_h, %s AS dd_j, %s FROM %s JOIN %s dd_m ON %s GROUP BY %s, %s, %s",
                                paste0("dd_m.dd_b", seq_along(bys), collapse = ", "), h, j,
                                paste(sprintf("SUM(%s) AS dd_z%d", cen, seq_along(ys)), collapse = ", "),
                                src$from, q(tmp), on, paste0("dd_m.dd_b", seq_along(bys), collapse = ", "), h, j))
    if (!design$nest) {
      multi <- dd_db_get(src, sprintf("SELECT COUNT(*) AS k FROM (SELECT %s FROM %s GROUP BY %s HAVING COUNT(DISTINCT %s) > 1) dd_x",
                                      j, src$from, j, h))$k
      if (multi > 0)
        dd_stop("`ids` = \"%s\": %s PSU label(s) appear in more than one stratum; use nest = TRUE in survey_design() if PSU labels restart within strata.",
                design$ids, format(multi))
    }
    nh <- dd_db_get(src, sprintf("SELECT %s AS dd_h, COUNT(DISTINCT %s) AS dd_nh FROM %s GROUP BY %s", h, j, src$from, h))
  } else {
    z <- dd_db_get(src, sprintf("SELECT %s, %s AS dd_h, %s, %s FROM %s JOIN %s dd_m ON %s GROUP BY %s, %s",
                                paste0("dd_m.dd_b", seq_along(bys), collapse = ", "), h,
                                paste(sprintf("SUM(%s) AS dd_z%d", cen, seq_along(ys)), collapse = ", "),
                                paste(sprintf("SUM((%s) * (%s)) AS dd_zz%d", cen, cen, seq_along(ys)), collapse = ", "),
                                src$from, q(tmp), on, paste0("dd_m.dd_b", seq_along(bys), collapse = ", "), h))
    nh <- dd_db_get(src, sprintf("SELECT %s AS dd_h, COUNT(*) AS dd_nh FROM %s GROUP BY %s", h, src$from, h))
  }
  if (any(nh$dd_nh < 2))
    dd_stop("Stratum (%s) has only one PSU at stage 1; set `lonely_psu` in survey_design() (\"remove\", \"certainty\", \"adjust\" or \"average\").",
            format(nh$dd_h[nh$dd_nh < 2][1]))
  # each row of z: its cell (position among the sorted cells) and stratum
  key <- function(df) do.call(paste, c(lapply(seq_along(byv), function(j) format(df[[paste0("dd_b", j)]], digits = 17)),
                                       sep = "\r"))
  zc <- match(key(z), key(cells))
  zh <- match(z$dd_h, nh$dd_h)
  f <- nh$dd_nh / (nh$dd_nh - 1)
  out <- data.frame(lapply(stats::setNames(seq_along(byv), byv), function(j) cells[[paste0("dd_b", j)]]), stringsAsFactors = FALSE)
  for (k in seq_along(ynames)) {
    zk <- z[[paste0("dd_z", k)]] / cells$dd_w[zc]
    ss <- if (is.null(design$ids)) z[[paste0("dd_zz", k)]] / cells$dd_w[zc]^2 else zk^2
    s1 <- tapply(zk, list(zc, zh), sum)                     # per cell and stratum
    s2 <- tapply(ss, list(zc, zh), sum)
    s1[is.na(s1)] <- 0; s2[is.na(s2)] <- 0
    hh <- as.integer(colnames(s1))
    V <- drop((s2 - s1^2 / rep(nh$dd_nh[hh], each = nrow(s1))) %*% f[hh])
    V <- V[match(seq_len(nd), as.integer(rownames(s1)))]
    out[[ynames[k]]] <- m[, k]
    out[[paste0(ynames[k], "_se")]] <- sqrt(pmax(V, 0))
  }
  out$n <- as.integer(cells$dd_n)
  out$n_eff <- cells$dd_w^2 / cells$dd_w2
  out$weight_sum <- cells$dd_w
  rownames(out) <- NULL
  attr(out, "weights_column") <- "weight_sum"
  out
}
