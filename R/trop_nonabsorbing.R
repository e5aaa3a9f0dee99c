# did_trop(non_absorbing = TRUE): a treatment that switches on and off
# (Athey, Imbens, Qu and Viviano 2025, Eq. 12 and Algorithm 2; diff-diff's
# TROP(non_absorbing = True)). The estimator is did_trop's local method
# unchanged; this file holds what differs: the relaxed checks of the wide
# panel, the report of the treated cells that the identification guard
# (trop.c, trop_connected) leaves out, and the mean over the identified
# cells. The bootstrap is did_trop's (dd_trop_draws, dd_trop_boot) with the
# guard on.

# The checks that replace "absorbing, a never-treated unit, two periods
# before the first adoption": at least one untreated cell (the panel is
# complete, so every cell is observed) and at least two periods with one.
# D: periods x units 0/1; periods: the sorted period values.
dd_trop_check_general <- function(D, periods, dname) {
  has0 <- rowSums(D == 0L) > 0
  if (!any(has0))
    dd_stop("`dname` = \"%s\" is 1 in every cell: with `non_absorbing` = TRUE, TROP still needs untreated cells to fit the counterfactual.",
            dname)
  if (sum(has0) < 2L)
    dd_stop("`dname` = \"%s\" is 0 only in period %s: with `non_absorbing` = TRUE, TROP needs at least 2 periods with an untreated cell.",
            dname, format(periods[which(has0)]))
  invisible(TRUE)
}

# The treated cells the guard left out (tau NA): none identified is an
# error; some, a warning naming the first. m: dd_trop_matrices(). The guard
# runs in every local fit (diff-diff checks every local fit too): on an
# absorbing panel it only acts when all donor weights of a cell are 0.
dd_trop_guard_check <- function(tau, m, dname) {
  out <- is.na(tau)
  if (!any(out)) return(invisible(0L))
  b <- which(out)[1]
  cell <- sprintf("unit %s in period %s", dd_show(m$units[m$cells[b, 2] + 1L]), dd_show(m$periods[m$cells[b, 1] + 1L]))
  why <- "its unit and period are not connected through untreated cells of positive weight (a unit never untreated, a period in which every unit is treated, or a donor pool cut in two), so its unit and period effects are not identified"
  if (all(out))
    dd_stop("`dname` = \"%s\": none of the %d treated cells is identified (e.g. %s: %s); TROP cannot estimate an effect%s.",
            dname, length(tau), cell, why,
            if (isTRUE(m$non_absorbing)) "" else " (with every donor weight 0, e.g. after an underflow of exp(-lambda * distance), try a smaller `lambda_unit` or `lambda_time`)")
  warning(sprintf("%d of %d treated cells of `dname` = \"%s\" are not identified (e.g. %s: %s); their effects are NA and they are left out of the ATT.",
                  sum(out), length(tau), dname, cell, why), call. = FALSE)
  invisible(sum(out))
}

# a bootstrap replicate's ATT: the mean over its identified cells (NA: none)
dd_trop_guard_mean <- function(tau) {
  tau <- tau[!is.na(tau)]
  if (length(tau)) mean(tau) else NA_real_
}

# printed under the table of a local fit: cells the guard left out, and for
# a non-absorbing fit the assumption it rests on
dd_trop_general_notes <- function(tau, non_absorbing) {
  c(if (any(is.na(tau))) sprintf("%d of %d treated cells not identified (NA in cell_effects) and left out of the ATT.",
                                 sum(is.na(tau)), length(tau)),
    if (non_absorbing) "non_absorbing = TRUE: the treatment switches on and off; no carryover is assumed, triple robustness is proven only under block assignment, and the bootstrap standard error should be read with care.")
}
