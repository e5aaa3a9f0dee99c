# Data tools: the columns estimators need, built from what the data have.

#' First treated period from a 0/1 treatment indicator
#'
#' For each unit, the first period in which `dname` is 1 (0 for units never
#' treated), returned for every row: the `gname` column that [did_cs()],
#' [did_sa()], [did_event()] and the other staggered-adoption estimators
#' take. Rows with a missing indicator are ignored. A unit whose indicator
#' switches off again (a reversible treatment) gets a warning naming it: its
#' first treated period is still returned, but the estimators that take
#' `gname` assume that treatment stays on (see [did_dcdh()] for reversible
#' treatments).
#'
#' @param data A data frame (long panel; not modified).
#' @param idname,tname Unit and (numeric) period columns.
#' @param dname The 0/1 treatment indicator column.
#' @return A numeric vector with one value per row of `data`: the unit's
#'   first treated period, or 0.
#' @examples
#' d <- data.frame(id = rep(1:3, each = 4), t = rep(2001:2004, 3),
#'                 D = c(0, 0, 1, 1,  0, 0, 0, 0,  0, 1, 1, 1))
#' d$first_treat <- dd_gname(d, "id", "t", "D")
#' d
#' @export
dd_gname <- function(data, idname, tname, dname) {
  dd_check_data(data)
  for (a in c("idname", "tname", "dname")) {
    dd_check_string(get(a), a)
    dd_check_cols(data, get(a), a)
  }
  tt <- dd_check_numeric_col(data[[tname]], "tname", tname, convert = FALSE)
  d <- data[[dname]]
  if (is.logical(d)) d <- as.numeric(d)
  if (!is.numeric(d) || any(!is.na(d) & !d %in% c(0, 1))) {
    b <- which(!is.na(d) & !d %in% c(0, 1))[1]
    dd_stop("`dname` = \"%s\" must be a 0/1 indicator; row %d has %s.", dname, if (is.na(b)) 1L else b,
            dd_show(if (is.na(b)) d[1] else d[b]))
  }
  id <- data[[idname]]
  if (anyNA(id)) dd_stop("`idname` = \"%s\" has missing values (first in row %d).", idname, which(is.na(id))[1])
  if (anyNA(tt)) dd_stop("`tname` = \"%s\" has missing values (first in row %d).", tname, which(is.na(tt))[1])
  idc <- dd_codes(id)
  n <- attr(idc, "nlev")
  ft <- dd_first_treated(d, idc, tt, n)
  dd_check_absorbing(ft, dname, id, tt, idc, action = "warning",
                     "the first treated period assumes treatment stays on; for reversible treatments see did_dcdh().")
  dd_first_as_gname(ft, dname, id, idc)[idc + 1L]
}

#' Event time: periods since first treatment
#'
#' `tname - gname` for treated units (negative before treatment), `NA` for
#' never-treated units (`gname` 0, `Inf` or `NA`).
#'
#' @param data A data frame (not modified).
#' @param tname Period column (numeric).
#' @param gname First treated period column (0, `Inf` or `NA`: never
#'   treated).
#' @return A numeric vector with one value per row.
#' @examples
#' d <- data.frame(t = c(2001, 2002, 2003, 2001), g = c(2002, 2002, 2002, 0))
#' dd_event_time(d, "t", "g")
#' @export
dd_event_time <- function(data, tname, gname) {
  dd_check_data(data)
  for (a in c("tname", "gname")) {
    dd_check_string(get(a), a)
    dd_check_cols(data, get(a), a)
  }
  tt <- dd_check_numeric_col(data[[tname]], "tname", tname, convert = FALSE)
  g <- data[[gname]]
  if (!is.numeric(g)) dd_stop("`gname` = \"%s\" must be numeric (first treated periods); got %s.", gname, class(g)[1])
  never <- is.na(g) | g == 0 | is.infinite(g)
  ifelse(never, NA_real_, tt - g)
}

#' Balance a panel
#'
#' Keeps the units observed (one row each) in every period of the data, as
#' did's balancing of unbalanced panels does; a message gives the number of
#' units and rows dropped. `na_cols` also drops the units with a missing
#' value in those columns (e.g. the outcome) in any period.
#'
#' @param data A data frame (long panel; not modified).
#' @param idname,tname Unit and period columns.
#' @param na_cols Columns whose missing values make a unit incomplete.
#' @return The balanced data frame (rows in their original order).
#' @examples
#' d <- data.frame(id = c(1, 1, 1, 2, 2, 3, 3, 3), t = c(1, 2, 3, 1, 3, 1, 2, 3), y = c(1:7, NA))
#' dd_balance(d, "id", "t")
#' dd_balance(d, "id", "t", na_cols = "y")
#' @export
dd_balance <- function(data, idname, tname, na_cols = NULL) {
  dd_check_data(data)
  for (a in c("idname", "tname")) {
    dd_check_string(get(a), a)
    dd_check_cols(data, get(a), a)
  }
  dd_check_cols(data, na_cols, "na_cols")
  id <- data[[idname]]; tt <- data[[tname]]
  if (anyNA(id)) dd_stop("`idname` = \"%s\" has missing values (first in row %d).", idname, which(is.na(id))[1])
  if (anyNA(tt)) dd_stop("`tname` = \"%s\" has missing values (first in row %d).", tname, which(is.na(tt))[1])
  idc <- dd_codes(id); tc <- dd_codes(tt)
  dd_check_unique_codes(idc, tc, id, tt)
  N <- attr(idc, "nlev"); T <- attr(tc, "nlev")
  ok <- rep(TRUE, length(idc))
  for (v in na_cols) ok <- ok & !is.na(data[[v]])
  cnt <- dd_level_count(idc, ok)
  keep_unit <- cnt == T
  keep <- keep_unit[idc + 1L]
  if (!any(keep)) dd_stop("no unit is observed in all %d periods%s; nothing is left after balancing.", T,
                          if (length(na_cols)) " without missing values" else "")
  if (!all(keep))
    message(sprintf("diffdiff: balancing dropped %d of %d units (%d rows) not observed in all %d periods%s.",
                    sum(!keep_unit), N, sum(!keep), T, if (length(na_cols)) " without missing values" else ""))
  out <- data[keep, , drop = FALSE]
  if (identical(class(out), "data.frame")) rownames(out) <- NULL
  out
}

#' Reshape a wide panel to long
#'
#' Turns one row per unit with one column per variable and period (e.g.
#' `y_2001`, `y_2002`, `x_2001`, `x_2002`) into one row per unit and period
#' (`id`, `time`, `y`, `x`), the layout every estimator takes. Column names
#' are split at the last `sep`: the part before is the variable, the part
#' after the period (numeric when every period label is a number). Columns
#' not in `cols` are kept and repeated in every period (time-invariant
#' variables). A variable missing for a period gets `NA` there.
#'
#' @param data A data frame with one row per unit (not modified).
#' @param idname The unit column (unique values).
#' @param cols The wide columns to stack (default: every column whose name
#'   contains `sep`, except `idname`).
#' @param sep The separator between variable and period in `cols`.
#' @param tname Name of the period column created.
#' @return A data frame sorted by unit (in the order of `data`) and period.
#' @examples
#' w <- data.frame(id = 1:3, region = c("N", "S", "N"), y_2001 = c(1, 2, 3), y_2002 = c(2, 3, 5),
#'                 d_2001 = 0, d_2002 = c(0, 1, 1))
#' dd_wide_to_long(w, "id")
#' @export
dd_wide_to_long <- function(data, idname, cols = NULL, sep = "_", tname = "time") {
  dd_check_data(data)
  dd_check_string(idname, "idname")
  dd_check_cols(data, idname, "idname")
  dd_check_string(sep, "sep")
  dd_check_string(tname, "tname")
  if (is.null(cols)) cols <- setdiff(grep(sep, names(data), fixed = TRUE, value = TRUE), idname)
  if (!length(cols)) dd_stop("no column name contains `sep` = \"%s\"; name the wide columns in `cols`.", sep)
  dd_check_cols(data, cols, "cols")
  id <- data[[idname]]
  if (anyNA(id) || anyDuplicated(id))
    dd_stop("`idname` = \"%s\" must identify the rows of a wide panel (one row per unit): %s.", idname,
            if (anyNA(id)) "it has missing values" else sprintf("unit %s has more than one row", dd_show(id[anyDuplicated(id)])))
  pos <- regexpr(paste0(".*\\Q", sep, "\\E"), cols, perl = TRUE)
  bad <- cols[pos < 0 | attr(pos, "match.length") >= nchar(cols) | attr(pos, "match.length") <= nchar(sep)]
  if (length(bad))
    dd_stop("`cols` = %s: names must be <variable>%s<period>.", dd_show(bad), sep)
  var <- substr(cols, 1L, attr(pos, "match.length") - nchar(sep))
  per <- substring(cols, attr(pos, "match.length") + 1L)
  if (tname %in% c(var, idname) || any(var == idname))
    dd_stop("`tname` = \"%s\" or `idname` is also a variable name in `cols`; choose another `tname`.", tname)
  if (anyDuplicated(paste(var, per)))
    dd_stop("`cols` has the variable-period pair %s twice.", dd_show(paste(var, per)[anyDuplicated(paste(var, per))]))
  num <- suppressWarnings(as.numeric(per))
  periods <- if (all(!is.na(num))) sort(unique(num)) else sort(unique(per))
  key <- if (all(!is.na(num))) num else per
  keep <- setdiff(names(data), c(cols, idname))
  n <- nrow(data); T <- length(periods)
  idx <- rep(seq_len(n), each = T)
  out <- data.frame(id[idx], rep(periods, n), stringsAsFactors = FALSE)
  names(out) <- c(idname, tname)
  for (k in keep) out[[k]] <- data[[k]][idx]
  for (v in unique(var)) {
    col <- rep(NA, n * T)
    for (j in which(var == v)) {
      r <- match(key[j], periods)
      col[(seq_len(n) - 1L) * T + r] <- data[[cols[j]]]
    }
    out[[v]] <- col
  }
  out
}
