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
#   vcov_type      the regression variance (set by the panel layer from
#                  `vcov`, `cluster` and `survey`)
#   dots, aliases, fun    a peer's spellings in `...` (did's `alp`,
#                  `bstrap`, `biters`, `clustervars`), mapped onto the names
#                  above; `cluster` is returned when `clustervars` is used.
dd_spec <- function(alpha = 0.05, nboot = 0L, boot_weights = "rademacher", cband = FALSE,
                    cband_method = "sup-t", fe_tol = 1e-8, fe_maxit = 10000, drop_singletons = TRUE,
                    cluster = NULL, nboot_min = 0L, dots = list(), aliases = character(), fun = NULL) {
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
                 cluster = cluster, vcov_type = NULL),
            class = "dd_spec")
}

# the spec with the regression variance set (dd_panel_setup's `vtype`)
dd_spec_vcov <- function(spec, vcov_type) {
  spec$vcov_type <- vcov_type
  spec
}
