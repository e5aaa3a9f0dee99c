# The fixest-style formula interface: `y ~ x1 + x2 | id + t` for the
# regression estimators whose fixest call it mirrors (did_twfe, did_event,
# did_sa, did_bjs, did_gardner), translated into the column-name call and
# evaluated as that call (so that the fit's call, update() and the
# reproducibility stamp are the column-name ones). Every other estimator
# detects a formula where `data` or `yname` belongs and says how to write the
# call. The formula's parts:
#   left-hand side   the outcome (one column)
#   right-hand side  covariates (xformla); `sunab(g, t)` names the cohort
#                    column (gname), as fixest's Sun-Abraham term; for
#                    did_twfe without `dname`, the first variable is the
#                    treatment (feols(y ~ treat | id + t)), the rest covariates
#   after `|`        the unit and the period columns, in that order

dd_formula_estimators <- c("did_twfe", "did_event", "did_sa", "did_bjs", "did_gardner")

# which of `data` and `yname` holds a formula in the estimator's frame `env`
dd_formula_arg <- function(env) {
  for (a in c("data", "yname")) {
    if (!exists(a, envir = env, inherits = FALSE) || eval(call("missing", as.name(a)), env)) next
    v <- tryCatch(get(a, envir = env), error = function(e) NULL)
    # (two-sided: a one-sided ~y for `yname` has its own message, "write
    # yname = \"y\"")
    if (inherits(v, "formula") && length(v) == 3L) return(a)
  }
  NULL
}

# the terms of a sum: a + b + c -> list(a, b, c)
dd_sum_terms <- function(e) {
  if (is.call(e) && identical(e[[1]], as.name("+")) && length(e) == 3L) c(dd_sum_terms(e[[2]]), dd_sum_terms(e[[3]]))
  else list(e)
}

# The formula's columns: list(yname, idname, tname, gname, covs (character
# terms), rhs_vars); an error naming what does not map.
dd_formula_parse <- function(f, fun) {
  eg <- "y ~ x1 + x2 | id + t"
  if (length(f) != 3L)
    dd_stop("the formula needs the outcome on its left-hand side (%s); got %s.", eg, deparse1(f))
  lhs <- f[[2]]
  if (!is.name(lhs)) dd_stop("the formula's left-hand side must be one outcome column; got %s.", deparse1(lhs))
  rhs <- f[[3]]
  if (!(is.call(rhs) && identical(rhs[[1]], as.name("|"))))
    dd_stop("the formula needs the unit and period columns after `|` (%s, as fixest writes the fixed effects); got %s.",
            eg, deparse1(f))
  fe <- dd_sum_terms(rhs[[3]])
  if (length(fe) != 2L || !all(vapply(fe, is.name, NA)))
    dd_stop("after `|` the formula takes the unit and the period columns, in that order (`| id + t`); got `| %s`.",
            deparse1(rhs[[3]]))
  idname <- as.character(fe[[1]]); tname <- as.character(fe[[2]])
  gname <- NULL; covs <- character()
  for (e in dd_sum_terms(rhs[[2]])) {
    if (is.numeric(e) && e %in% c(0, 1)) next
    if (is.call(e) && identical(e[[1]], as.name("sunab"))) {
      if (length(e) < 3L || !is.name(e[[2]]))
        dd_stop("`sunab()` in the formula takes the cohort column and the period column: sunab(g, %s); got %s.", tname,
                deparse1(e))
      if (!identical(as.character(e[[3]]), tname))
        dd_stop("`%s` in the formula: its period column must be the one after `|` (`%s`).", deparse1(e), tname)
      gname <- as.character(e[[2]])
      next
    }
    if (is.call(e) && identical(e[[1]], as.name("i")))
      dd_stop("`%s`: fixest's i() interaction is not translated; name the cohort column instead, e.g. %s(data, yname = \"%s\", idname = \"%s\", tname = \"%s\", gname = \"<first treated period>\"), with `window` for the event times.",
              deparse1(e), fun, as.character(lhs), idname, tname)
    covs <- c(covs, deparse1(e))
  }
  list(yname = as.character(lhs), idname = idname, tname = tname, gname = gname, covs = covs)
}

# The column-name call of a formula call of `fun` (cl: its match.call(); env:
# its frame), or NULL when neither `data` nor `yname` is a formula.
dd_formula_call <- function(cl, env, fun) {
  a <- dd_formula_arg(env)
  if (is.null(a)) return(NULL)
  f <- get(a, envir = env)
  other <- if (a == "data") "yname" else "data"
  data_expr <- cl[[other]]
  if (is.null(data_expr)) dd_stop("the formula needs its data: %s(%s, data = <data frame>).", fun, deparse1(f))
  p <- dd_formula_parse(f, fun)
  args <- as.list(cl)[-1]
  args[c("data", "yname")] <- NULL
  new <- list(data = data_expr, yname = p$yname, idname = p$idname, tname = p$tname)
  covs <- p$covs
  if (fun == "did_twfe") {
    if (is.null(args$dname)) {
      if (!length(covs)) dd_stop("did_twfe(): name the treatment: `dname` = (a 0/1 column), or put it first on the right-hand side (y ~ treat | id + t).")
      new$dname <- covs[1]; covs <- covs[-1]
    }
    if (!is.null(p$gname)) dd_stop("did_twfe() takes a 0/1 treatment (`dname`), not sunab(); for a Sun-Abraham event study use did_sa().")
  } else {
    if (!is.null(p$gname)) {
      if (!is.null(args$gname)) dd_stop("`gname` is given twice: by sunab() in the formula and as an argument.")
      new$gname <- p$gname
      if (fun %in% c("did_event", "did_stacked"))
        message(sprintf("sunab(%s, %s) names the cohort column; %s() estimates %s, not fixest's Sun-Abraham interaction: for that, use did_sa().",
                        p$gname, p$tname, fun, "the two-way fixed-effects event study"))
    } else if (is.null(args$gname))
      dd_stop("%s(): name the cohort column: `gname` = (each unit's first treated period), or sunab(g, %s) in the formula.",
              fun, p$tname)
  }
  if (length(covs)) {
    if (!is.null(args$xformla)) dd_stop("covariates are given twice: in the formula (%s) and as `xformla`.", paste(covs, collapse = " + "))
    new$xformla <- stats::as.formula(paste("~", paste(covs, collapse = " + ")), env = environment(f))
  }
  twice <- intersect(names(new), names(args))
  if (length(twice))
    dd_stop("`%s` is given twice: by the formula and as an argument.", twice[1])
  as.call(c(as.name(fun), new, args))
}

# A formula where an estimator without the formula interface takes `data`
# or `yname`: an error showing the column-name call.
dd_formula_refuse <- function(env, fun) {
  a <- dd_formula_arg(env)
  if (is.null(a)) return(invisible(FALSE))
  f <- get(a, envir = env)
  p <- tryCatch(dd_formula_parse(f, fun), error = function(e) NULL)
  how <- if (is.null(p)) sprintf("%s(data, yname = \"y\", idname = \"id\", tname = \"t\", ...)", fun)
         else sprintf("%s(data, yname = \"%s\", idname = \"%s\", tname = \"%s\"%s%s, ...)", fun, p$yname, p$idname, p$tname,
                      if (is.null(p$gname)) "" else sprintf(", gname = \"%s\"", p$gname),
                      if (length(p$covs)) sprintf(", xformla = ~ %s", paste(p$covs, collapse = " + ")) else "")
  dd_stop("%s() takes column names, not a formula (got %s as `%s`): write %s. The formula interface (y ~ x | id + t) is for %s.",
          fun, deparse1(f), a, how, paste0(dd_formula_estimators, "()", collapse = ", "), .code = "FORMULA_CALL")
}
