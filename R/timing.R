# Treatment timing from a 0/1 treatment: each unit's first treated period and
# the absorbing check, in one place for every estimator, placebo_test(),
# bacon_decomp(), dd_gname() and did_check().

# d: treatment per row (0/1; NA rows are skipped), idc: 0-based unit codes,
# tt: period per row, n: number of units. Returns
#   first  each unit's first treated period (Inf: never treated)
#   off    rows at 0 after their unit's first treated period
#   n_off  the number of units with such rows
# Values other than 0 count as treated (did_check() reads a dose this way).
dd_first_treated <- function(d, idc, tt, n) {
  on <- !is.na(d) & d != 0
  first <- rep(Inf, n)
  if (any(on)) {
    m <- tapply(tt[on], idc[on], min)
    first[as.integer(names(m)) + 1L] <- m
  }
  off <- !is.na(d) & d == 0 & tt > first[idc + 1L]
  list(first = first, off = off, n_off = if (any(off)) length(unique(idc[off])) else 0L)
}

# The absorbing check on dd_first_treated()'s result: an error (code
# TREATMENT_REVERSIBLE) or a warning naming the unit, the period it is first
# treated and the later period it is untreated again. `needs` says who needs
# the absorbing treatment ("TROP", "placebo_test()"); id: the unit per row.
dd_check_absorbing <- function(ft, dname, id, tt, idc, needs, action = c("error", "warning")) {
  action <- match.arg(action)
  if (!ft$n_off) return(invisible(TRUE))
  r <- which(ft$off)[1]
  msg <- sprintf("`dname` = \"%s\" switches off again for unit %s (treated from period %s, untreated in period %s; %d unit(s) in all); %s",
                 dname, dd_show(id[r]), dd_show(ft$first[idc[r] + 1L]), dd_show(tt[r]), ft$n_off, needs)
  if (action == "error") dd_stop("%s", msg, .code = "TREATMENT_REVERSIBLE")
  warning(msg, call. = FALSE)
  invisible(FALSE)
}

# dd_first_treated()'s first periods in the cohort coding of `gname` (0:
# never treated): an error when a unit is first treated in a period <= 0,
# which that coding cannot tell from never treated. id: the unit per row.
dd_first_as_gname <- function(ft, dname, id, idc) {
  g <- ft$first
  bad <- which(is.finite(g) & g <= 0)
  if (length(bad)) {
    r <- match(bad[1] - 1L, idc)
    dd_stop("`dname` = \"%s\" is first 1 in period %s for unit %s; a first treated period must be positive, because 0 codes never treated. Renumber the periods (e.g. tname - min(tname) + 1).",
            dname, dd_show(g[bad[1]]), dd_show(id[r]), .code = "PERIOD_NOT_POSITIVE")
  }
  g[!is.finite(g)] <- 0
  g
}

# Each unit's first treated period from `dname` (0/1, absorbing: `needs`
# says why, in the error) or `gname` (0 or Inf: never), and its column
# among the sorted periods `tlev` (the first period at or after it; Inf for
# never treated). did_synth, did_lpdid.
dd_unit_first_col <- function(pan, dname, gname, tlev, needs) {
  if (!is.null(dname)) {
    d <- dd_check_numeric_col(pan$vals$dname, "dname", dname)
    nb <- .Call(C_first_not01, d)
    if (nb > 0) dd_stop("`dname` = \"%s\" must be 0/1; row %d has %s.", dname, nb, format(d[nb]))
    ft <- dd_first_treated(d, pan$idc, pan$tt, pan$n_units)
    dd_check_absorbing(ft, dname, pan$id, pan$tt, pan$idc, needs)
    first <- ft$first
  } else {
    g <- pan$g[dd_first_rows(pan$idc)]
    first <- ifelse(g == 0, Inf, g)
  }
  list(first = first,
       col = ifelse(is.finite(first), findInterval(first - 1e-9 * pmax(1, abs(first)), tlev) + 1, Inf))
}
