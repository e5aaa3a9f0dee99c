# summary(fit, cluster = , vcov = ): another variance for a fitted model, as
# fixest's summary() gives one, or a clear error.
#
# What can be recomputed from what a fit stores: the influence-function
# estimators (did_cs, did_edid, did_ddd and their aggregations) keep one
# influence-function row per unit, so the variance clustered by any variable
# constant within units is the variance of the cluster sums of those rows
# (dd_if_se, the layer their own standard errors come from). The regression
# estimators keep no scores, and the resampling ones (did_sdid, did_trop,
# did_rs, ...) no draws to recluster: for them summary() names the update()
# call that refits with the new variance, and says when the estimator has no
# such argument at all. Nothing is ever ignored.

# Arguments given in `...` that a method does not use: an error naming them.
# `dots`: list(...) of the method; `fun`: how the user called it.
dd_check_dots <- function(dots, fun, hint = NULL) {
  if (!length(dots)) return(invisible(TRUE))
  nm <- names(dots)
  if (is.null(nm)) nm <- rep("", length(dots))
  shown <- unique(ifelse(nzchar(nm), sprintf("`%s`", nm), "an unnamed argument"))
  dd_stop("%s does not use %s%s%s", fun, paste(shown, collapse = ", "),
          if (is.null(hint)) "" else paste0("; ", hint), if (is.null(hint)) "." else "")
}

# the arguments as they would be written in a call: cluster = ~state
dd_args_text <- function(args)
  paste(vapply(names(args), function(k) paste(k, "=", deparse1(args[[k]])), character(1)), collapse = ", ")

# Can the fit's variance be reclustered from its influence functions? One row
# per unit (panel units, in the order of `units`), no survey design.
dd_if_reclusterable <- function(object) {
  inherits(object$inf, "dd_ifs") && !is.null(object$units) && !is.null(object$n) &&
    length(object$units) == object$n && !inherits(object$unit_cluster, "dd_svy_rows") &&
    !nzchar(object$survey_label %||% "") && !is.null(object$source_call %||% object$call)
}

# The fit with its variance recomputed for `cluster` / `vcov` (summary()'s
# arguments), or an error. `data`: the data the fit was estimated on (NULL:
# the fit's call's `data`, evaluated in `env`, the caller's frame, as
# update() does).
dd_revcov <- function(object, cluster = NULL, vcov = NULL, data = NULL, env = parent.frame()) {
  args <- Filter(Negate(is.null), list(cluster = cluster, vcov = vcov))
  if (!length(args)) return(object)
  est <- object$estimator %||% class(object)[1]
  agg <- grepl("_agg$", est)
  parent <- if (agg) sub("_agg$", "", est) else est
  fn <- tryCatch(get(parent, envir = asNamespace("diffdiff"), mode = "function"), error = function(e) NULL)
  if (!is.null(fn) && length(miss <- setdiff(names(args), names(formals(fn)))))
    dd_stop("summary(): `%s` = %s does not apply to a %s fit: %s() has no `%s` argument (see ?%s for the variance it reports).",
            miss[1], dd_show(args[[miss[1]]]), est, parent, miss[1], parent, .code = "NO_SUCH_VARIANCE")
  if (!is.null(object$survey_label) && nzchar(object$survey_label))
    dd_stop("summary(): the variance of this %s fit comes from its survey design; change the design and refit: update(fit, survey = <design>).",
            est, .code = "SURVEY_VARIANCE")
  refit <- if (agg) sprintf("aggregate(update(fit, %s), type = \"%s\")", dd_args_text(args), object$type %||% "group")
           else sprintf("update(fit, %s)", dd_args_text(args))
  if (!dd_if_reclusterable(object))
    dd_stop("summary() cannot recompute the variance of a %s fit from what the fit stores (%s); refit with the new variance: %s.",
            est, if (inherits(object$inf, "dd_ifs")) "its influence functions are not one row per unit"
                 else "it keeps no scores or influence functions", refit, .code = "REFIT_NEEDED")
  if (!is.null(vcov))
    dd_stop("summary(): `vcov` = %s does not apply to %s: its variance is the influence-function variance over units (or over clusters: use `cluster` = ). Refit for anything else: %s.",
            dd_show(vcov), est, refit, .code = "REFIT_NEEDED")
  # the cluster of each unit, from the data
  call <- object$source_call %||% object$call
  if (is.null(data)) {
    if (is.null(call$data))
      dd_stop("summary(): pass `data` = (the data of the fit): the fit's call has no `data` to read `cluster` from.")
    data <- tryCatch(eval(call$data, env), error = function(e)
      dd_stop("summary() needs the data to read `cluster` = %s from, and `%s` cannot be found here: pass `data` = (the data of the fit).",
              dd_show(cluster), deparse1(call$data)))
  }
  dd_check_data(data)
  cname <- dd_cluster_names(cluster, data)
  if (length(cname) > 1L)
    dd_stop("summary(): `cluster` can name one variable for %s (one influence-function row per unit); got %s.", est,
            dd_show(cname))
  idname <- call$idname
  if (!is.character(idname) || length(idname) != 1L || !idname %in% names(data))
    dd_stop("summary(): the fit's `idname` is not a column of `data`; pass the data the fit was estimated on.")
  id <- data[[idname]]
  rows <- which(id %in% object$units)
  if (!all(object$units %in% id[rows]))
    dd_stop("summary(): some units of the fit are not in `data` (e.g. %s = %s); pass the data the fit was estimated on.",
            idname, dd_show(object$units[!object$units %in% id][1]))
  if (cname == idname) {
    ucl <- NULL
  } else {
    v <- data[[cname]][rows]
    if (anyNA(v)) dd_stop("`cluster` = \"%s\" has missing values for units of the fit.", cname)
    dd_check_constant_within(v, id[rows], "cluster", cname)
    ucl <- v[match(object$units, id[rows])]
    dd_check_nclusters(length(unique(ucl)), cname)
  }
  dd_recluster(object, ucl, if (is.null(ucl)) NULL else cname, agg)
}

# The fit with analytic influence-function standard errors clustered by ucl
# (one value per unit; NULL: by unit), its table, uniform band (dropped: it
# is a bootstrap band), pre-test and event-study covariance redone.
dd_recluster <- function(object, ucl, cname, agg) {
  tab <- object$coeftable
  K <- nrow(tab)
  se <- if (agg) dd_if_se(object$inf, object$n, ucl, comb = object$comb)
        else dd_if_se(object$inf, object$n, ucl, seq_len(K))
  se[is.na(tab$estimate)] <- NA_real_
  std <- c("term", "estimate", "std.error", "statistic", "p.value", "conf.low", "conf.high", "cband.low", "cband.high")
  extra <- tab[setdiff(names(tab), std)]
  new <- dd_if_table(tab$term, tab$estimate, se, object$alpha, NA_real_, if (length(extra)) extra)
  object$coeftable <- new
  object$unit_cluster <- ucl
  object$cluster <- cname
  object$n_clusters <- if (is.null(ucl)) NULL else length(unique(ucl))
  object$crit <- NA_real_
  object$vcov_type <- "analytic"
  was <- object$vcov_label
  object$vcov_label <- paste0("Influence function (analytic)", if (!is.null(cname)) paste0(", clustered by ", cname),
                              "; recomputed by summary() (the fit: ", was, ")")
  if (!is.null(object$pretest) && !agg && !is.null(tab$group))
    object$pretest <- dd_cs_pretest(tab$estimate, object$inf, object$n, ucl,
                                    list(g = tab$group, t = tab$time), se)
  if (!is.null(object$event_study)) {
    V <- dd_if_vcov(list(inf = object$inf, unit_cluster = ucl, comb = object$comb, n = object$n, coeftable = new,
                         vcov_type = "analytic"))
    es <- object$event_study
    object$event_study <- dd_new_event_study(new, NULL, dd_es_spec(es$reference, es$base_period, V))
  }
  if (!is.null(object$boot_draws)) object$boot_draws <- NULL
  object
}

# tidy() and glance() follow broom's contract: their consumers pass their own
# arguments through `...` (modelsummary passes vcov = NULL, gof_map, ...), so
# other arguments are not an error. What would be a silently wrong table is:
# a variance asked for (`vcov`, `cluster` not NULL: summary() or update()
# gives it) and a misspelt argument of the method itself (conf.levl).
dd_check_broom_dots <- function(dots, fun, method) {
  if (!length(dots)) return(invisible(TRUE))
  nm <- names(dots)
  if (is.null(nm)) return(invisible(TRUE))
  for (k in intersect(nm, c("vcov", "cluster")))
    if (!is.null(dots[[k]]))
      dd_stop("%s does not recompute the variance (`%s` = %s); use tidy(summary(fit, %s = ...)$fit) or refit with update(fit, %s = ...).",
              fun, k, dd_show(dots[[k]]), k, k)
  own <- setdiff(names(formals(method)), c("x", "..."))
  for (k in nm[nzchar(nm)]) {
    near <- own[utils::adist(k, own, ignore.case = TRUE) <= 2 & own != k]
    if (length(near)) dd_stop("%s does not use `%s`; did you mean `%s`?", fun, k, near[1])
  }
  invisible(TRUE)
}
