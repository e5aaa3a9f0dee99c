# The panel object and panel indexing for C.
#
# dd_panel() is the one route from a data frame to the estimators: every
# front end that takes unit and period columns (did_twfe, did_event, did_sa,
# did_bjs, did_gardner, did_stacked, did_cs, did_sdid, bacon_decomp) builds
# one, and nothing else reads the caller's columns. It holds the estimation
# rows (dd_prepare: checks, covariates, dropped rows), the unit and period
# codes, balance, the survey design's weights, and -- when the role `gname`
# is given -- the cohorts under the one never-treated rule (dd_cohort_never;
# documented in ?diffdiff, "Cohort coding"). What each estimator does with
# units treated before the data start is its peer's rule, applied by the
# estimator to `pan$g` and `pan$never`, and listed in that same section.
# dd_panel_wide() reshapes any row vector to units x periods in C.

# The panel object (class "dd_panel"): the fields of dd_prepare() (y, X, w,
# vals, cluster, fe, n_dropped, rows: kept rows among the data's rows) and
#  id, tt        unit identifiers and periods of the kept rows
#  idc, tc       their dd_codes() (0-based, levels in order of appearance)
#  cl            dd_codes() of the first clustering variable (NULL: none)
#  n_units, n_periods, balanced (every unit in every period, one row each)
#  design, survey  the survey design (or NULL) and list(design, rows) for the
#                regression layer; its weights replace `w`
#  g, never      with role gname: first treated period per row, 0 for the
#                never treated (0, Inf, NA, or after the last period plus
#                `anticipation`), and the never-treated indicator
# Arguments: `role` as dd_prepare's roles besides idname/tname (gname, dname,
# treatname); `numeric_t` asks for numeric periods (every estimator but
# did_twfe, whose periods may be labels); `unique_rows = FALSE` for repeated
# cross-sections (unit identifiers are not unit-period keys); `complete` (the
# method's name) makes missing values and an unbalanced panel errors;
# `na_ok` as dd_prepare's; `sorted = TRUE` numbers units and periods in
# sorted order of their values (dd_sorted_codes) instead of order of first
# appearance, for estimators that use the codes as matrix rows and columns
# (did_dcdh: lags are column offsets), so that nothing depends on the row
# order of `data`; `aux` (a named character vector: argument label -> column)
# carries further numeric columns with the kept rows, missing values allowed
# and no role checks (did_synth's predictors, which may repeat the outcome):
# `pan$aux`, a list of columns named as the columns.
dd_panel <- function(data, yname, idname, tname, role = character(), xformla = NULL, weightsname = NULL,
                     cluster = NULL, fe = NULL, design = NULL, x_list = FALSE, numeric_t = TRUE,
                     unique_rows = TRUE, complete = NULL, anticipation = 0, na_ok = character(),
                     sorted = FALSE, aux = character()) {
  key <- list(yname = yname, idname = idname, tname = tname, role = role, xformla = xformla,
              weightsname = weightsname, cluster = cluster, fe = fe, unique_rows = unique_rows,
              anticipation = anticipation, sorted = sorted, x_list = x_list, aux = aux)
  reuse <- dd_reuse$panel
  if (!is.null(reuse) && identical(reuse$key, key)) {
    # a placebo draw (placebo.R): the validated panel with redrawn treatment
    dd_reuse$panel <- NULL
    return(reuse)
  }
  dd_reuse$built <- dd_reuse$built + 1L
  dd_check_string(idname, "idname")
  gname <- if ("gname" %in% names(role)) role[["gname"]] else NULL
  p <- dd_prepare(data, yname, c(c(idname = idname, tname = tname), role), xformla, weightsname, cluster, fe,
                  na_ok = c(na_ok, if (!is.null(gname)) "gname"), x_list = x_list, complete = complete, aux = aux,
                  design = design)
  if (!is.null(design)) p$w <- design$weights[p$rows]
  id <- p$vals$idname
  tt <- if (numeric_t) dd_check_numeric_col(p$vals$tname, "tname", tname, convert = FALSE) else p$vals$tname
  idc <- if (sorted) dd_sorted_codes(id) else dd_codes(id)
  tc <- if (sorted) dd_sorted_codes(tt) else dd_codes(tt)
  if (unique_rows) dd_check_swapped(id, tt, idc, tc, idname, tname, if (!is.null(gname)) p$vals$gname)
  if (unique_rows) dd_check_units(idc, id, idname)
  if (attr(tc, "nlev") < 2L) dd_check_periods(tt, tname)
  if (unique_rows) dd_check_unique_codes(idc, tc, id, tt)
  N <- attr(idc, "nlev"); T <- attr(tc, "nlev")
  balanced <- unique_rows && length(tt) == (as.double(N) * T)
  if (!is.null(complete) && !balanced) {
    u <- which(dd_level_count(idc) < T)[1]
    miss <- setdiff(seq_len(T) - 1L, tc[idc == u - 1L])[1]
    dd_stop("the panel is unbalanced: unit %s has no row for period %s; %s needs a balanced panel (every unit in every period).",
            dd_show(id[dd_first_rows(idc)][u]), dd_show(tt[dd_first_rows(tc)][miss + 1L]), complete, .code = "UNBALANCED")
  }
  cl <- if (!length(p$cluster)) NULL else if (identical(names(p$cluster)[1], idname)) idc
        else dd_codes(p$cluster[[1]])
  pan <- c(p, list(id = id, tt = tt, idc = idc, tc = tc, cl = cl, n_units = N, n_periods = T, balanced = balanced,
                   design = design, survey = if (is.null(design)) NULL else list(design = design, rows = p$rows)))
  if (!is.null(gname)) {
    g <- dd_check_numeric_col(p$vals$gname, "gname", gname)
    # the checks and the cohort rule on one value per unit (gname must be
    # constant within units), or per row in repeated cross-sections
    tlev <- tt[dd_first_rows(tc)]
    gu <- if (unique_rows) g[dd_first_rows(idc)] else g
    dd_check_not_indicator(gu, tlev, gname)
    dd_check_constant_within(g, id, "gname", gname, code = idc)
    if (unique_rows) {
      # the unit flags to rows, and g set to 0 there, in one pass in C
      nr <- .Call(C_never_rows, idc, dd_cohort_never(gu, tlev, gname, tname, anticipation), g)
      never <- nr$never; g <- nr$g
    } else {
      never <- dd_cohort_never(g, tlev, gname, tname, anticipation)
      if (any(never)) g[never] <- 0
    }
    pan$g <- g; pan$never <- never
  }
  pan$key <- key
  pan <- structure(pan, class = "dd_panel")
  if (dd_reuse$capture && is.null(dd_reuse$captured)) dd_reuse$captured <- pan
  pan
}

# Re-estimation on a validated panel (placebo_test()): `panel`, when set, is
# returned by the next dd_panel() call with the same arguments instead of
# building one from the data; `capture` keeps the first panel built;
# `built` counts the panels built from data (the tests read it to assert
# that placebo draws do not re-validate).
dd_reuse <- new.env(parent = emptyenv())
dd_reuse$fp <- NULL
dd_reuse$panel <- NULL
dd_reuse$capture <- FALSE
dd_reuse$captured <- NULL
dd_reuse$built <- 0L

# Unit and period columns given the wrong way round (did's att_gt() takes
# tname before idname): the "unit" column has fewer distinct values than the
# "period" column, they look like periods (dates, or whole numbers between
# 1800 and 2200) and the period column's do not. With first treated periods
# (g), which must be values of the true period column, the swap is certain
# when they are all values of the "unit" column: an error; without them, a
# warning.
dd_check_swapped <- function(id, tt, idc, tc, idname, tname, g = NULL) {
  nu <- attr(idc, "nlev"); nt <- attr(tc, "nlev")
  if (nu >= nt) return(invisible(FALSE))
  yearlike <- function(v) inherits(v, "Date") ||
    (is.numeric(v) && all(is.finite(v)) && all(v == round(v)) && all(v >= 1800 & v <= 2200))
  ul <- id[dd_first_rows(idc)]
  if (!yearlike(ul) || yearlike(tt[dd_first_rows(tc)])) return(invisible(FALSE))
  msg <- sprintf(paste0("`idname` = \"%s\" and `tname` = \"%s\" look swapped: \"%s\" has %d distinct values that look ",
                        "like periods (%s) and \"%s\" has %d. Every diffdiff function takes (data, yname, idname, ",
                        "tname, ...); did's att_gt() takes tname before idname, so name the arguments (idname = , ",
                        "tname = ) when moving a positional did call."),
                 idname, tname, idname, nu, paste(format(utils::head(sort(ul), 3)), collapse = ", "), tname, nt)
  if (!is.null(g) && is.numeric(g)) {
    gv <- unique(g[is.finite(g) & g != 0])
    if (length(gv) && all(gv %in% ul)) dd_stop("%s", msg)
    return(invisible(FALSE))
  }
  warning(msg, call. = FALSE)
  invisible(TRUE)
}

# A 0/1 treatment indicator passed as `gname`: only the values 0 and 1 (and
# NA) when 1 is not a period of the data. g: one value per unit (an
# indicator that varies within units fails dd_check_constant_within, whose
# message then says the same); periods: the distinct periods.
dd_check_not_indicator <- function(g, periods, gname) {
  if (1 %in% periods || !any(g == 1, na.rm = TRUE) || !all(g[!is.na(g)] %in% c(0, 1))) return(invisible(FALSE))
  dd_stop(dd_indicator_msg(gname))
}

dd_indicator_msg <- function(gname) {
  sprintf(paste0("`gname` = \"%s\" has only the values 0 and 1: it looks like a 0/1 treatment indicator. `gname` must ",
                 "be each unit's first treated period (e.g. 2004; 0 or NA for never treated). Pass a 0/1 indicator ",
                 "as `dname` (did_twfe(), did_sdid(), bacon_decomp()), or build the first treated period from it: ",
                 "for each unit, the first period in which the indicator is 1."), gname)
}

# Treatment and event time of each row from the cohorts (staggered
# adoption): D = 1 when t >= g (never treated: 0), event time t - g (NA for
# the never treated); errors when no row, or every row, is treated.
dd_panel_timing <- function(pan, gname) {
  tm <- .Call(C_stagger, pan$g, pan$tt)
  if (!any(tm$D)) dd_stop("`gname` = \"%s\" marks no treated observation (t >= first treated period).", gname, .code = "NO_TREATED")
  if (all(tm$D)) dd_stop("`gname` = \"%s\" marks every observation as treated; there is no untreated observation to fit the counterfactual.", gname, .code = "ALWAYS_TREATED")
  pan$D <- tm$D; pan$ev <- tm$ev
  pan
}

# Units x periods matrix of the row values `v` (NA where a unit has no row).
# `umap`: the row of each unit code (-1: left out), `tmap`: the column of each
# period code (-1: left out); default: units in order of appearance, periods
# in increasing order. The reshape is C_panel_wide, which also gives did_cs
# its weights and covariates by unit.
dd_panel_wide <- function(pan, v, umap = seq_len(pan$n_units) - 1L, tmap = dd_period_cols(pan)) {
  .Call(C_panel_wide, pan$idc, pan$tc, umap, tmap, sum(umap >= 0L), sum(tmap >= 0L), as.double(v), NULL, NULL)$Y
}

# the column of each period code when periods are sorted by value
dd_period_cols <- function(pan) {
  tlev <- pan$tt[dd_first_rows(pan$tc)]
  match(seq_along(tlev), order(tlev)) - 1L
}


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

# Rows per level of a dd_codes() vector (integer, one per level), among the
# rows where `mask` is TRUE (NULL: all rows; NA counts as FALSE). One pass in
# C, where tabulate(code[mask] + 1L) makes three vectors over the rows.
dd_level_count <- function(code, mask = NULL) {
  .Call(C_level_count, code, attr(code, "nlev"), if (is.null(mask)) NULL else as.logical(mask))
}

# A set of rows given by one flag per unit: the rows whose unit (code, a
# dd_codes() vector over the rows) has mask TRUE. It stands for the logical
# vector mask[code + 1L] without building it (O(units) instead of O(rows)).
dd_unit_rows <- function(mask, code) {
  s <- list(mask = mask, code = code)
  class(s) <- "dd_unit_rows"
  s
}

# The subset `rows` (indices) of a row set: a logical vector or a dd_unit_rows.
dd_set_rows <- function(set, rows) {
  if (inherits(set, "dd_unit_rows")) dd_unit_rows(set$mask, set$code[rows]) else set[rows]
}

# Number of distinct levels of `code` (a dd_codes() vector) among the rows of
# `set` (a logical vector over the rows or a dd_unit_rows), counting stopped
# at `stop` (0: exact count).
dd_levels_hit <- function(code, set, stop = 0L) {
  units <- inherits(set, "dd_unit_rows")
  .Call(C_levels_hit, code, attr(code, "nlev"), as.logical(if (units) set$mask else set),
        if (units) set$code else NULL, as.integer(stop))
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
# (recorded by dd_codes() as it codes whole numbers: attribute "first")
dd_first_rows <- function(code) attr(code, "first") %||% .Call(C_first_rows, code, attr(code, "nlev"))

# 0-based codes numbered in sorted order of the values (not of first
# appearance), with attribute nlev: the same for any order of the rows
dd_sorted_codes <- function(x) {
  if (is.factor(x)) x <- as.integer(x)
  # whole numbers in a compact range: ranked over a table of the range in C
  code <- if (is.numeric(x)) .Call(C_sorted_codes, x) else NULL
  if (!is.null(code)) return(code)
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

# codes 1, 2, ... (first-appearance order) of the combinations of a few
# vectors of equal length
dd_combo_codes <- function(...) {
  k <- 0
  for (v in list(...)) { u <- match(v, unique(v)); k <- k * (max(u) + 1) + u }
  match(k, unique(k))
}

# re-code after subsetting (levels may have vanished)
dd_recode <- function(code, rows) dd_codes(code[rows])

dd_check_unique_codes <- function(idc, tc, id, t) {
  dup <- .Call(C_first_dup, idc, attr(idc, "nlev"), tc, attr(tc, "nlev"))
  if (is.na(dup)) dup <- anyDuplicated(as.double(idc) * attr(tc, "nlev") + tc)
  if (dup)
    dd_stop("`idname` and `tname` must identify rows uniquely; unit %s has more than one row in period %s.",
            dd_show(id[dup]), dd_show(t[dup]), .code = "DUPLICATE_ROWS")
  invisible(TRUE)
}

`%||%` <- function(a, b) if (is.null(a)) b else a

# The one cohort rule of every estimator that takes `gname` (documented once,
# in ?diffdiff, section "Cohort coding"): 0, Inf and NA mean never treated; a
# value after the last period (plus `anticipation`) means not treated within
# the data, so never treated too (with a message); a value before the first
# period means treated before the data start (always treated); any other
# value must be a period of `tname`; negative values are an error.
# g: first treated period per row (or entity); periods: the periods of the
# data (one value per unit, so the message counts units). Returns the logical
# vector `never`. The two errors carry did_check()'s codes COHORT_NEGATIVE
# and COHORT_NOT_PERIOD (did_check() runs this same rule).
dd_cohort_never <- function(g, periods, gname, tname, anticipation = 0, count = NULL) {
  # a long vector with few distinct values (the cohorts of many units): the
  # rule on the distinct values (in order of first appearance, so the first
  # offending value is the same), weighted by how often each occurs
  fl <- if (is.null(count) && length(g) > 64L && is.numeric(g)) dd_few_levels(g)
  if (!is.null(fl))
    return(dd_cohort_never(fl$values, periods, gname, tname, anticipation, count = fl$counts)[match(g, fl$values)])
  never <- is.na(g) | g == 0 | g == Inf
  neg <- which(!never & g < 0)
  if (length(neg))
    dd_stop("`gname` = \"%s\" has the negative value %s; first treated periods are periods of `tname` = \"%s\", and never-treated units are coded 0, Inf or NA.",
            gname, format(g[neg[1]]), tname, .code = "COHORT_NEGATIVE")
  periods <- sort(unique(periods))
  late <- !never & g > periods[length(periods)] + anticipation
  off <- which(!never & !late & g >= periods[1] & !(g %in% periods))
  if (length(off))
    dd_stop("`gname` = \"%s\" has value %s, which is not a period of `tname` = \"%s\" (periods: %s); only 0, Inf or NA (never treated), a value after the last period (not treated in the data) or before the first (treated throughout) may lie outside.",
            gname, format(g[off[1]]), tname,
            paste0(paste(format(utils::head(periods, 12), trim = TRUE), collapse = ", "),
                   if (length(periods) > 12L) sprintf(", ... (%d periods)", length(periods)) else ""),
            .code = "COHORT_NOT_PERIOD")
  if (any(late)) {
    message(sprintf("diffdiff: %d unit(s) first treated after the last period are treated as never treated.",
                    as.integer(if (is.null(count)) sum(late) else sum(count[late]))))
    never <- never | late
  }
  never
}

# The row layer under dd_panel() (and the whole preparation of the
# cross-sectional did_2x2): checks the columns, builds the covariate matrix,
# drops rows with NA/NaN/Inf (one message with the counts) and zero weights,
# and returns plain vectors. `roles` is a named character vector argument ->
# column (e.g. c(idname = "id")); `na_ok` names roles whose NA values are
# meaningful (gname: never treated; "yname" too: did_dcdh reads treatments
# where the outcome is missing) and kept. `complete` (NULL, or the name
# of a method that needs complete data, e.g. "synthetic DiD"): a missing or
# non-finite value is then an error naming the argument and the first row,
# instead of a dropped row.
dd_prepare <- function(data, yname, roles = character(), xformla = NULL, weightsname = NULL,
                       cluster = NULL, fe = NULL, na_ok = character(), x_list = FALSE, complete = NULL,
                       aux = character(), design = NULL) {
  dd_check_data(data)
  # the data part of the fit's reproducibility stamp (finished by
  # dd_prepared(), read by new_dd_fit())
  dd_reuse$fp <- list(rows = nrow(data), columns = ncol(data),
                      seed = if (exists(".Random.seed", envir = globalenv(), inherits = FALSE))
                        dd_checksum(get(".Random.seed", envir = globalenv())) else NA_character_)
  dd_check_string(yname, "yname")
  dd_check_cols(data, yname, "yname")
  for (r in names(roles)) { dd_check_string(roles[[r]], r); dd_check_cols(data, roles[[r]], r) }
  dd_check_string(weightsname, "weightsname", null_ok = TRUE)
  dd_check_cols(data, weightsname, "weightsname")
  dd_check_cols(data, fe, "fe")
  xformla <- dd_check_xformla(xformla, data)
  dd_check_roles(data, c(list(yname = yname), as.list(roles), list(weightsname = weightsname, cluster = cluster)),
                 list(xformla = if (!is.null(xformla)) all.vars(xformla), fe = fe))
  n <- nrow(data)
  y <- dd_check_numeric_col(data[[yname]], "yname", yname)
  X <- dd_covariates(xformla, data, as_list = x_list)   # a matrix, or (x_list) possibly a list of columns
  w <- if (is.null(weightsname)) NULL else dd_check_weights(data[[weightsname]], weightsname)
  vals <- lapply(roles, function(col) data[[col]])
  auxv <- dd_aux_cols(data, aux)
  cl <- lapply(stats::setNames(cluster, cluster), function(col) data[[col]])
  fel <- lapply(stats::setNames(fe, fe), function(col) data[[col]])
  # cheap count first: masks are built only when something is missing
  counts <- .Call(C_count_bad, c(list(y), if (is.list(X)) X else list(X), list(w),
                                 vals[setdiff(names(vals), na_ok)], cl, fel))
  # a survey design's rows of zero weight (outside a subpopulation, as
  # survey's subset()) are left out of the estimation; the design keeps them
  outside <- if (!is.null(design) && any(design$weights == 0)) design$weights == 0 else NULL
  if (all(counts == 0L) && (is.null(w) || all(w != 0)) && is.null(outside)) {
    return(dd_prepared(list(y = y, X = X, w = w, vals = vals, cluster = cl, fe = fel, n_dropped = 0L,
                            rows = seq_len(n), aux = auxv), yname, weightsname))
  }
  bad <- list()
  bad[[sprintf("`yname` (\"%s\")", yname)]] <- if ("yname" %in% na_ok) is.infinite(y) else !is.finite(y)
  if (!is.null(X)) bad[["`xformla`"]] <- if (is.list(X)) Reduce(`|`, lapply(X, function(v) !is.finite(v)))
                                         else rowSums(!is.finite(X)) > 0
  if (!is.null(w)) bad[[sprintf("`weightsname` (\"%s\")", weightsname)]] <- !is.finite(w)
  for (r in setdiff(names(roles), na_ok)) {
    v <- vals[[r]]
    bad[[sprintf("`%s` (\"%s\")", r, roles[[r]])]] <- if (is.numeric(v)) is.na(v) | is.infinite(v) else is.na(v)
  }
  for (nm in names(cl)) bad[[sprintf("`cluster` (\"%s\")", nm)]] <- is.na(cl[[nm]])
  for (nm in names(fel)) bad[[sprintf("`fe` (\"%s\")", nm)]] <- is.na(fel[[nm]])
  if (!is.null(complete)) dd_stop_incomplete(bad, complete)
  drop <- dd_drop_rows(bad, n)
  if (!is.null(outside)) {
    if (all(outside | drop)) dd_stop("the survey design's weights are zero for every usable row (outside its subpopulation).")
    message(sprintf("diffdiff: %d observation%s of zero survey weight (outside the subpopulation) left out; the design's PSUs and strata are kept.",
                    sum(outside & !drop), if (sum(outside & !drop) > 1) "s" else ""))
    drop <- drop | outside
  }
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
    return(dd_prepared(list(y = y, X = X, w = w, vals = vals, cluster = cl, fe = fel, n_dropped = 0L,
                            rows = seq_len(n), aux = auxv), yname, weightsname))
  }
  keep <- which(!drop)
  sub <- function(v) if (is.null(v)) NULL else if (is.matrix(v)) v[keep, , drop = FALSE] else v[keep]
  dd_prepared(list(y = y[keep], X = if (is.list(X)) lapply(X, sub) else sub(X), w = sub(w), vals = lapply(vals, sub),
                   cluster = lapply(cl, sub), fe = lapply(fel, sub), n_dropped = sum(drop), rows = keep,
                   aux = lapply(auxv, sub)),
              yname, weightsname)
}

# dd_prepare()'s auxiliary columns: numeric, NA allowed (the label names the
# argument in errors)
dd_aux_cols <- function(data, aux) {
  if (!length(aux)) return(NULL)
  out <- list()
  for (i in seq_along(aux)) {
    col <- aux[[i]]
    dd_check_cols(data, col, names(aux)[i])
    if (!is.null(out[[col]])) next
    v <- data[[col]]
    if (!is.numeric(v) && !is.logical(v))
      dd_stop("`%s` names column \"%s\", which is %s, not numeric.", names(aux)[i], col, class(v)[1])
    out[[col]] <- as.double(v)
  }
  out
}

# The checks on the estimation rows that every preparation route ends with:
# the outcome varies and no numeric input overflows.
dd_prepared <- function(p, yname, weightsname = NULL) {
  st <- dd_vec_stats(p$y)
  dd_check_outcome(p$y, yname, st)
  if (!is.null(dd_reuse$fp)) {
    dd_reuse$fp$used <- length(p$y)
    dd_reuse$fp$outcome <- dd_checksum(p$y, if (is.double(p$y)) st)
  }
  if (length(p$X)) {
    # the largest |value| per column in C (no copy of X); a list of columns
    # names the first that overflows, a matrix its largest column
    is_cols <- is.list(p$X) && !is.matrix(p$X)
    big <- .Call(C_col_maxabs, if (is_cols) unname(p$X) else p$X)
    j <- if (is_cols) c(which(big > dd_huge), 1L)[1] else which.max(big)
    if (length(j)) dd_check_scale(big[j], sprintf("`xformla` variable \"%s\"", if (is_cols) names(p$X)[j] else colnames(p$X)[j]))
  }
  if (!is.null(p$w)) dd_check_scale(p$w, sprintf("`weightsname` = \"%s\"", weightsname))
  p
}

# For methods that need complete data (`what`, e.g. "synthetic DiD"): the
# first argument of `bad_list` (as dd_drop_rows takes it) with a missing or
# non-finite value, as an error giving the count and the first row.
dd_stop_incomplete <- function(bad_list, what) {
  for (nm in names(bad_list)) {
    b <- which(bad_list[[nm]])
    if (!length(b)) next
    lab <- sub("^(`[^`]+`) \\((.*)\\)$", "\\1 = \\2", nm)
    dd_stop("%s has %d missing or non-finite value(s) (first in row %d); %s needs a complete balanced panel without missing values.",
            lab, length(b), b[1], what, .code = if (startsWith(nm, "`yname`")) "MISSING_OUTCOME")
  }
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

# The distinct values of a numeric vector with at most `max` of them, in
# order of first appearance (as unique()), and their counts (doubles); NULL
# when there are more (one pass in C instead of hashing every element).
dd_few_levels <- function(x, max = 64L) .Call(C_few_levels, x, as.integer(max))

# sort(unique(x)), and with counts = TRUE also tabulate(match(x, that)) as
# integers: from dd_few_levels() when x has few distinct values
dd_sorted_levels <- function(x, counts = FALSE) {
  fl <- if (is.numeric(x) && length(x) > 64L) dd_few_levels(x)
  if (is.null(fl)) {
    v <- sort(unique(x))
    return(if (counts) list(values = v, counts = tabulate(match(x, v), length(v))) else v)
  }
  o <- order(fl$values, na.last = NA)
  if (!counts) return(fl$values[o])
  list(values = fl$values[o], counts = as.integer(fl$counts[o]))
}

# One pass in C over a numeric vector: c(number of NA/NaN, min and max of
# the others, sum, sum of squares); min and max are Inf and -Inf when every
# value is missing.
dd_vec_stats <- function(x) .Call(C_vec_stats, if (is.double(x)) x else as.double(x))

# An order-invariant checksum of a numeric vector (not cryptographic): the
# count, the sum and the sum of squares, as one string
dd_checksum <- function(v, st = NULL) {
  if (!is.double(v)) v <- as.double(v)
  if (!is.null(st) && st[1] == 0) return(sprintf("%d:%.10g:%.10g", length(v), st[4], st[5]))
  # 10 significant digits: summation order (row order) changes only the last bits
  sprintf("%d:%.10g:%.10g", length(v), sum(v), drop(crossprod(v)))
}
