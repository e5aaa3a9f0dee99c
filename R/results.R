# The dd_fit base class: the validating constructor (the shared methods are in methods.R).

# The fields of a dd_fit: every fit has the required ones (in `info`); the
# others are the optional common ones or belong to one estimator (the
# registry's `fields`, R/estimators.R, and its aggregates'). An unknown
# field is an internal error, so a misspelt or duplicated name cannot slip
# into a result (one name per meaning: `wild_boot` is the regression's wild
# bootstrap settings, `boot_draws` did_cs's stored multiplier draws).
dd_fit_required <- c("estimator", "title", "yname", "nobs", "n_units", "n_periods", "n_clusters", "vcov_type",
                     "vcov_label", "df", "alpha", "main_terms", "fe_names", "dropped", "notes")
dd_fit_fields <- c(
  list(common = c("stamp", "fe_sizes", "fe_iter", "n_singletons", "r2", "r2_within", "wild_boot", "event_study",
                  "path", "cr2_path", "rules", "residuals", "fitted.values", "db"),
       mboot = c("crit", "nboot", "boot_weights", "cband")),  # multiplier bootstrap of regression IFs
  dd_registry_fields())

# The information every fit holds (the required fields above), with the
# defaults of a fit without fixed effects, clusters or notes; `more` (a
# list) adds optional fields (a list, not `...`, so that a field such as `n`
# can never be matched partially to an argument). Every front end builds its
# `info` here.
dd_info <- function(estimator, title, yname, nobs, vcov_type, vcov_label, df, alpha, main_terms,
                    n_units = NULL, n_periods = NULL, n_clusters = NULL, fe_names = NULL,
                    dropped = character(), notes = character(), more = list())
  c(list(estimator = estimator, title = title, yname = yname, nobs = nobs, n_units = n_units,
         n_periods = n_periods, n_clusters = n_clusters, vcov_type = vcov_type, vcov_label = vcov_label,
         df = df, alpha = alpha, main_terms = main_terms, fe_names = fe_names, dropped = dropped,
         notes = notes),
    more)

new_dd_fit <- function(subclass, coeftable, coefficients, vcov, info, call, extra = list()) {
  miss <- setdiff(dd_fit_required, names(info))
  if (length(miss))
    stop(sprintf("internal error: a %s fit lacks %s; please report", subclass[1], paste(miss, collapse = ", ")),
         call. = FALSE)
  fields <- c(names(info), names(extra))
  unknown <- setdiff(fields, c(dd_fit_required, dd_fit_fields$common, dd_fit_fields$mboot, dd_fit_fields[[subclass[1]]]))
  dup <- fields[duplicated(fields)]
  if (length(unknown) || length(dup))
    stop(sprintf("internal error: a %s fit has unknown or duplicated fields %s; please report", subclass[1],
                 paste(c(unknown, dup), collapse = ", ")), call. = FALSE)
  dd_check_finite_result(coeftable, info$yname)
  # an event study states its reference period(s) and base period
  # (dd_es_spec); the typed component is built here from the table
  if (!is.null(extra$event_study))
    extra$event_study <- dd_new_event_study(coeftable, vcov, extra$event_study,
                                            crit = if (is.null(info$crit)) extra$crit %||% NA_real_ else info$crit)
  extra$stamp <- dd_stamp(subclass[1])
  obj <- c(list(coeftable = coeftable, coefficients = coefficients, vcov = vcov, call = call),
           info, extra)
  class(obj) <- c(subclass, "dd_fit")
  obj
}

# The reproducibility stamp every fit carries: software (diffdiff, R, BLAS,
# LAPACK), threads, the random-number generator (kind and a checksum of its
# state when the data were read), diffdiff's options, and the data: rows and
# columns of `data`, rows used, an order-invariant checksum of the outcome
# (dd_checksum). Aggregates (subclasses *_agg) carry no data part: their
# fit's stamp has it. dd_compare() reads stamps.
dd_stamp <- function(subclass) {
  fp <- dd_reuse$fp
  dd_reuse$fp <- NULL
  opts <- options()
  opts <- opts[startsWith(names(opts), "diffdiff.")]
  if (is.null(dd_cache$version)) {
    # fixed for the session: the package, BLAS and LAPACK are loaded once
    dd_cache$version <- as.character(utils::packageVersion("diffdiff"))
    dd_cache$blas <- unname(extSoftVersion()["BLAS"]); dd_cache$lapack <- La_version()
  }
  list(diffdiff = dd_cache$version, R = R.version.string,
       blas = dd_cache$blas, lapack = dd_cache$lapack, threads = dd_threads(),
       rng = paste(RNGkind(), collapse = "/"), seed = if (is.null(fp)) NA_character_ else fp$seed,
       options = opts, time = format(Sys.time(), "%Y-%m-%d %H:%M:%S %Z"),
       data = if (is.null(fp) || grepl("_agg$", subclass)) NULL
              else list(rows = fp$rows, columns = fp$columns, used = fp$used, outcome = fp$outcome))
}
