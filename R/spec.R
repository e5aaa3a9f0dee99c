# One checking layer: the settings every front end shares (inference,
# numerical options, peer spellings), checked once and carried as one
# object, the spec, to the pipeline (dd_estimate(), the influence-function
# engine). A front end passes only the settings it has; the others keep
# their defaults and are not checked. Errors name the argument and the
# value (validate.R's helpers).
#
#   alpha          significance level
#   nboot          bootstrap draws (0: none); nboot_min for estimators whose
#                  variance method needs draws
#   boot_weights   "rademacher", "mammen", "webb"
#   cband, cband_method   uniform band and its critical value
#   fe_tol, fe_maxit      fixed-effect absorption (-> opts)
#   drop_singletons       fixed-effect singletons
#   vcov_type, design   the regression variance and the survey design (set
#                  by dd_spec_variance() from `vcov`, `cluster` and `survey`)
#   effects, placebo    event-study horizons (did_dcdh, did_had): whole
#                  numbers, effects >= 1
#   dots, aliases, fun    a peer's spellings in `...` (did's `alp`,
#                  `bstrap`, `biters`, `clustervars`), mapped onto the names
#                  above; `cluster` is returned when `clustervars` is used.
dd_spec <- function(alpha = 0.05, nboot = 0L, boot_weights = "rademacher", cband = FALSE,
                    cband_method = "sup-t", fe_tol = 1e-8, fe_maxit = 10000, drop_singletons = TRUE,
                    cluster = NULL, nboot_min = 0L, effects = NULL, placebo = NULL, dots = list(),
                    aliases = character(), fun = NULL) {
  a <- dd_did_aliases(dots, aliases, fun)
  if (!is.null(a$alp)) alpha <- a$alp
  if (!is.null(a$biters)) nboot <- a$biters
  if (!is.null(a$bstrap) && !dd_check_flag(a$bstrap, "bstrap")) nboot <- 0
  if (!is.null(a$clustervars)) cluster <- a$clustervars
  structure(list(alpha = dd_check_alpha(alpha),
                 nboot = dd_check_count(nboot, "nboot", min = nboot_min),
                 boot_weights = dd_match_arg(boot_weights[1], c("rademacher", "mammen", "webb"), "boot_weights"),
                 cband = dd_check_flag(cband, "cband"),
                 cband_method = dd_match_arg(cband_method[1], c("sup-t", "bootstrap-t"), "cband_method"),
                 opts = dd_fe_opts(fe_tol, fe_maxit),
                 drop_singletons = dd_check_flag(drop_singletons, "drop_singletons"),
                 cluster = cluster, vcov_type = NULL, design = NULL,
                 effects = if (!is.null(effects)) dd_check_count(effects, "effects", min = 1),
                 placebo = if (!is.null(placebo)) dd_check_count(placebo, "placebo")),
            class = "dd_spec")
}

# The variance of the panel regressions (did_twfe, did_event, did_sa,
# did_bjs, did_gardner, did_stacked), set on the spec: the survey design if
# `survey` is given (converted and checked against the data); otherwise
# clustering by unit unless `cluster` or `vcov` says otherwise. Adds
# `vcov_type`, `cluster` (columns to cluster on, or NULL) and `design`.
# `wild`: the estimator's `nboot` is a wild bootstrap (did_twfe, did_event),
# which a survey design rules out; `one_way`: one clustering variable at most.
# Conley's variance (`vcov` = "conley" with `coords` and `cutoff`, or a
# dd_conley()) adds `conley`, clustered too only when `cluster` is given;
# `conley`: the estimator passes the coordinates on (else an error).
dd_spec_variance <- function(spec, data, idname, weightsname, cluster, vcov, survey, wild = FALSE,
                             one_way = FALSE, coords = NULL, cutoff = NULL, conley = FALSE) {
  dd_check_data(data)
  dd_check_string(idname, "idname")
  cluster <- dd_cluster_names(cluster, data)
  if (one_way && length(cluster) > 1L)
    dd_stop("`cluster` = %s: this estimator supports one-way clustering only.", dd_show(cluster))
  cz <- dd_conley_arg(vcov, coords, cutoff, data)
  if (!is.null(cz)) {
    if (!conley)
      dd_stop("`vcov` = Conley is not available for this estimator; did_2x2(), did_twfe(), did_event(), did_sa(), did_stacked(), did_etwfe(), did_lpdid() and did_spillover() take it.")
    if (!is.null(survey)) dd_stop("`vcov` = Conley cannot be combined with `survey` (the variance is design-based).")
    if (spec$nboot > 0L)
      dd_stop("`nboot` = %d (bootstrap by clusters) cannot be combined with Conley's variance; use nboot = 0.",
              spec$nboot)
    if (length(cluster) > 1L) dd_stop("`vcov` = Conley combines with one-way clustering only; `cluster` = %s.",
                                      dd_show(cluster))
    spec$vcov_type <- "conley"; spec$cluster <- cluster; spec$design <- NULL; spec$conley <- cz
    return(spec)
  }
  design <- dd_svy_arg(survey, data, weightsname, cluster, vcov, if (wild) spec$nboot else 0L)
  if (is.null(design) && is.null(cluster) && (is.null(vcov) || identical(vcov, "cluster") || identical(vcov, "CR2")))
    cluster <- idname
  vtype <- dd_resolve_vcov(vcov, cluster, "cluster")
  if (!vtype %in% c("cluster", "CR2")) cluster <- NULL
  spec$vcov_type <- vtype
  spec$cluster <- cluster
  spec$design <- design
  spec
}

# the spec with the regression variance set directly (did_2x2, whose rows are
# not a panel; did_stacked, clustered by construction)
dd_spec_vcov <- function(spec, vcov_type) {
  spec$vcov_type <- vcov_type
  spec
}
