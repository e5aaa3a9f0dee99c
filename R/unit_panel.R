# The unit panel of the influence-function estimators (did_cs, did_ddd,
# did_edid, did_dose): one prologue from the data to the units whose rows the
# engines' influence functions fill, with the same checks, in the same order,
# for all four.
#
#   survey design (dd_if_design) -> panel (dd_panel) -> the estimator's
#   rules (never-treated units required; the extra unit-level roles and
#   their checks) -> constant within units (panels): the extra roles, the
#   weights (unless the estimator lets them vary over time: did_cs, as did)
#   and the cluster (repeated cross-sections: the cluster only) -> every unit within one PSU of a linearisation design
#   -> the units laid out for the engines (dd_cs_prepare(): by cohort; or by
#   identifier, did_dose) -> the influence functions' rows per unit (the
#   cluster of each unit, or the survey design's PSU rows) -> at least two
#   clusters -> the few-treated-clusters warning.
#
# Arguments besides dd_panel()'s: survey, nboot (dd_if_design); roles, the
# extra unit-level columns (named, e.g. c(pname = "q")); role_checks, a
# function(v, arg, col) per role run on its numeric values (e.g.
# dd_check_binary); partition, the role that orders units within a cohort
# (did_ddd's eligibility); anticipation, control_group, panel (FALSE:
# repeated cross-sections), allow_unbalanced as in did_cs; layout "cohort"
# (dd_cs_prepare: units by cohort, then identifier) or "id" (units by
# identifier, a balanced wide panel: did_dose); weights_vary (did_cs: panel
# weights may vary over time, each cell uses its base period's); need_never,
# the estimator's name when it needs never-treated units (did_edid);
# complete (dd_panel's: missing values and unbalanced panels are errors);
# panel_anticipation, the anticipation of dd_panel()'s never-treated rule
# (did_dose: 0).
#
# Returns a list:
#   design  the survey design (or NULL)
#   prep    the units laid out for the engine: dd_cs_prepare()'s fields (layout
#           "id": Y (units x periods), tlist, glist, n, unit_group (0: never
#           treated), never, unit_weight, unit_cluster, units, unit_prow,
#           notes); prep$unit_cluster is `cl`
#   cl      the rows of the influence functions per unit: NULL (one per
#           unit), the cluster of each unit, or dd_svy_if_rows() of the design
#   prow    each unit's first row among the data's rows
#   unit    the extra roles per unit (unit$pname, unit$dose, ...)
#   rows    the extra roles per row of the panel (numeric, checked)
#   panel   the dd_panel() object
dd_unit_panel <- function(data, yname, idname, tname, gname, xformla = NULL, weightsname = NULL, cluster = NULL,
                          survey = NULL, nboot = 0L, roles = character(), role_checks = list(), partition = NULL,
                          anticipation = 0, control_group = "nevertreated", panel = TRUE, allow_unbalanced = FALSE,
                          layout = c("cohort", "id"), weights_vary = FALSE, need_never = NULL, complete = NULL,
                          panel_anticipation = anticipation) {
  layout <- match.arg(layout)
  design <- dd_if_design(survey, data, weightsname, cluster, nboot)
  # repeated cross-sections: identifiers are not unit-period keys
  p <- dd_panel(data, yname, idname, tname, c(gname = gname, roles), xformla, weightsname, cluster, NULL, design,
                x_list = TRUE, unique_rows = panel, complete = complete, anticipation = panel_anticipation)
  if (!is.null(need_never) && !any(p$never))
    dd_stop("there are no never-treated units (`gname` = \"%s\" 0, Inf or NA, or after the last period): %s needs them as the comparison group.",
            gname, need_never, .code = "NO_NEVER_TREATED")
  rows <- list()
  for (r in names(roles)) {
    v <- dd_check_numeric_col(p$vals[[r]], r, roles[[r]])
    if (!is.null(role_checks[[r]])) role_checks[[r]](v, r, roles[[r]])
    rows[[r]] <- v
  }
  # repeated cross-sections (did_cs, panel = FALSE): the cluster must still
  # be constant within each identifier, as before the shared prologue
  if (panel) dd_unit_constant(p, rows, roles, weightsname, cluster, design, weights_vary, idname)
  else if (!is.null(cluster)) dd_check_constant_within(p$cluster[[1]], p$id, "cluster", cluster, code = p$idc)
  prep <- if (layout == "cohort") {
    nterm <- if (is.null(xformla)) 0L else length(attr(stats::terms(xformla), "term.labels"))
    dd_cs_prepare(y = p$y, tt = p$tt, g = p$g, never = p$never, id = p$id, w = p$w, X = p$X, idc = p$idc,
                  tc = p$tc, cl = if (length(p$cluster)) p$cluster[[1]] else NULL, nterm = nterm,
                  gname = gname, tname = tname, anticipation = anticipation, control_group = control_group,
                  panel = panel, allow_unbalanced = allow_unbalanced,
                  part = if (is.null(partition)) NULL else rows[[partition]])
  } else dd_unit_wide(p, anticipation, control_group, !is.null(cluster))
  prow <- p$rows[prep$unit_prow]
  cl <- if (!is.null(design)) dd_svy_if_rows(design, prow) else prep$unit_cluster
  prep$unit_cluster <- cl
  if (!is.null(cluster)) dd_check_nclusters(length(unique(cl)), cluster)
  if (is.null(design))
    dd_warn_few_clusters(prep$unit_group %in% prep$glist, prep$unit_group == 0,
                         if (is.null(cluster)) seq_len(prep$n) else cl, cluster,
                         what = if (!is.null(cluster)) sprintf("`cluster` = \"%s\"", cluster)
                                else sprintf("The units (`idname` = \"%s\", the clusters of the variance)", idname))
  list(design = design, prep = prep, cl = cl, prow = prow, unit = lapply(rows, function(v) v[prep$unit_prow]),
       rows = rows, panel = p)
}

# Constant within each unit: the extra roles, the weights (the design's with
# a survey design) unless they may vary, the cluster; then every unit within
# one PSU of a linearisation design.
dd_unit_constant <- function(p, rows, roles, weightsname, cluster, design, weights_vary, idname) {
  for (r in names(rows)) dd_check_constant_within(rows[[r]], p$id, r, roles[[r]], code = p$idc)
  if (!weights_vary && !is.null(p$w))
    dd_check_constant_within(p$w, p$id, if (is.null(design)) "weightsname" else "survey",
                             if (is.null(design)) weightsname else "weights", code = p$idc)
  if (!is.null(cluster)) dd_check_constant_within(p$cluster[[1]], p$id, "cluster", cluster, code = p$idc)
  dd_svy_check_units(design, p, idname)
}

# did_dose's layout: a balanced panel's units in the order of their
# identifiers (the bootstrap draws its multipliers in this order, whatever
# the order of the rows), periods sorted, did's cohort rules (dd_cs_cohorts);
# the cluster of a unit as its dd_codes() code. Fields as dd_cs_prepare()'s,
# plus `never`.
dd_unit_wide <- function(p, anticipation, control_group, clustered) {
  first <- dd_first_rows(p$idc)
  ou <- order(p$id[first], method = "radix")
  first <- first[ou]
  G <- p$g[first]; never <- p$never[first]
  wu <- if (is.null(p$w)) rep(1, length(first)) else p$w[first]
  tl <- sort(unique(p$tt))
  Y <- dd_panel_wide(p, p$y, umap = match(seq_along(first), ou) - 1L)
  co <- dd_cs_cohorts(G, never, tl, anticipation, control_group, "units")
  keep <- co$keep
  list(Y = Y[keep, co$tkeep, drop = FALSE], tlist = tl[co$tkeep], glist = co$glist, n = sum(keep),
       unit_group = G[keep], never = never[keep], unit_weight = wu[keep],
       unit_cluster = if (clustered) p$cl[first][keep] else NULL, units = p$id[first][keep],
       unit_prow = first[keep], notes = co$notes)
}
