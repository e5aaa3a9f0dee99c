# did_event() on a database table (R/dbi.R): the event-time indicators
# depend only on the unit's cohort and the period, so on a balanced panel
# the two-way fixed-effects event study has the cohorts' moments as
# sufficient statistics (the regression of R/did_twfe_db.R with one
# regressor per event time; dd_fe2_moments_fit, dd_fe2_db_vcov).

dd_event_db <- function(data, yname, idname, tname, gname, xformla, ref, window, weightsname, fe, cluster, vcov,
                        alpha, nboot, cband, survey, call) {
  dd_db_reg_unsupported(data, "did_event", xformla, weightsname, fe, survey, nboot, vcov)
  if (isTRUE(cband)) dd_db_in_memory(data, "did_event(cband = TRUE)")
  alpha <- dd_check_alpha(alpha)
  dd_check_string(idname, "idname")
  vs <- dd_db_vcov_spec(data, "did_event", idname, cluster, vcov)
  roles <- list(yname = yname, idname = idname, tname = tname, gname = gname, cluster = vs$column)
  src <- dd_db_open(data, roles, "did_event")
  chk <- dd_db_check_panel(src, roles)
  if (any(chk$n_complete < chk$n))
    dd_db_in_memory(data, sprintf("did_event() on an unbalanced panel (%s unit(s) miss a period or its outcome)",
                                  format(sum(chk$n - chk$n_complete))))
  per <- chk$periods; T <- length(per)
  dd_check_not_indicator(chk$g, per, gname)
  never <- dd_cohort_never(chk$g, per, gname, tname, 0, count = chk$n)
  if (all(never)) dd_stop("`gname` = \"%s\" marks every unit as never treated (0, Inf, NA or after the last period).", gname, .code = "NO_TREATED")
  never_sql <- sprintf("(dd_G IS NULL OR dd_G = 0 OR dd_G > %s)", dd_db_lit(max(per)))
  mom <- dd_db_moments(src, dd_db_units_sql(src, per, never_sql), T, cluster = !is.null(vs$column))
  gk <- mom$g; nv <- gk == 0
  # the relative periods of the treated cohorts, clipped to the window
  rel <- outer(gk, per, function(g, t) t - g)
  rel[nv, ] <- NA
  bad <- which(!is.na(rel) & rel != round(rel))
  if (length(bad))
    dd_stop("`tname` - `gname` must be whole numbers; cohort %s has %s.", format(gk[row(rel)[bad[1]]]), format(rel[bad[1]]))
  obs <- sort(unique(rel[!is.na(rel)]))
  if (!is.null(window)) {
    if (window[2] < min(obs) || window[1] > max(obs))
      dd_stop("`window` = %s lies outside the relative periods in the data (%s to %s).",
              dd_show(window), format(min(obs)), format(max(obs)))
    rel <- pmin(pmax(rel, window[1]), window[2])
    obs <- sort(unique(rel[!is.na(rel)]))
  }
  if (!any(ref %in% obs))
    dd_stop("`ref` = %s is not a relative period in the data (they run from %s to %s).",
            dd_show(ref), format(min(obs)), format(max(obs)))
  ev <- setdiff(obs, ref)
  if (!length(ev)) dd_stop("no relative period is left once `ref` = %s is omitted.", dd_show(ref))
  terms <- paste0("event::", ev)
  X <- lapply(seq_along(gk), function(p) {
    x <- matrix(0, T, length(ev))
    if (!nv[p]) { j <- match(rel[p, ], ev); x[cbind(which(!is.na(j)), j[!is.na(j)])] <- 1 }
    x
  })
  n <- mom$n; N <- sum(n)
  r <- dd_fe2_moments_fit(X, n, mom$mean, mom$Q)
  if (!r$ok)
    dd_db_in_memory(data, "did_event() with event-time indicators collinear with the fixed effects (the in-memory fit drops some)")
  cs <- mom$clusters
  treated <- vapply(seq_along(gk), function(p) !nv[p] && any(per >= gk[p]), logical(1))
  vc <- dd_fe2_db_vcov(r, vs$type, N, T, vs$cluster, cs, if (!is.null(cs)) match(cs$g, gk), treated, nv, n)
  b <- stats::setNames(drop(r$beta), terms)
  V <- matrix(vc$V, length(ev), length(ev), dimnames = list(terms, terms))
  tab <- dd_coef_table(b, sqrt(diag(V)), vc$df, alpha)
  tab$event <- ev
  notes <- if (!any(nv)) "no never-treated units: the control group is the not-yet-treated." else character()
  info <- dd_db_reg_info("did_event", "TWFE event study (did_event)", yname, vc, vs$type, alpha, terms, N, T,
                         idname, tname, r, data, chk$n_rows, notes)
  new_dd_fit("did_event", tab, b, V, info, call,
             extra = list(window = window, event_study = dd_es_spec(reference = ref[ref %in% obs]), crit = NA_real_,
                          cband = FALSE, path = "db"))
}
