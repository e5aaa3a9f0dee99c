#' Extended two-way fixed effects (Wooldridge)
#'
#' Wooldridge's extended TWFE regression, as the etwfe package fits it: the
#' outcome on one indicator per treated cohort x period cell (and, with
#' covariates, the cell indicators times the covariates demeaned within
#' cohort, the covariates, and their cohort- and period-specific slopes),
#' with cohort and period fixed effects (`fe = "cohort"`), unit and period
#' fixed effects (`fe = "unit"`) or explicit cohort and period indicators
#' (`fe = "none"`). With `control_group = "notyettreated"` the cells are the
#' treated periods of each cohort (everything else, the not-yet-treated
#' periods included, identifies the untreated outcome); with
#' `"nevertreated"` every period but the one before adoption gets a cell, so
#' that only the never treated identify the untreated outcome. Poisson
#' (`family = "poisson"`) and logit models are fitted by iteratively
#' reweighted least squares on the same least-squares engine.
#'
#' `aggregate()` averages the cells' effects over the treated observations
#' (`"simple"`), by cohort (`"group"`), by period (`"calendar"`) or by event
#' time (`"dynamic"`, also `"event"`), as `etwfe::emfx()`: each observation's
#' effect is its cell coefficient plus the interactions at its demeaned
#' covariates (nonlinear models: the difference of the fitted means with the
#' cell switched on and off), and the standard errors are from the delta
#' method with the model's covariance (exact derivatives).
#'
#' @section Correspondence with etwfe:
#' `did_etwfe(d, y, id, t, g, xformla, control_group, fe, family)` is
#' `etwfe(y ~ x, tvar = t, gvar = g, data = d, cgroup = "notyet"/"never",
#' fe = "feo"` (its default) `/ ivar = id / fe = "none", family)`; the tests
#' find coefficients and `emfx()` aggregates equal to about 1e-10 and the
#' standard errors to 1e-5 relative (emfx's numerical derivatives carry
#' noise of that size). Differences: the default variance is clustered by
#' unit (etwfe inherits fixest's iid; `vcov = "iid"` gives it); covariates
#' are demeaned, and the aggregates averaged, over the estimation sample
#' (etwfe uses every row of the data, also rows whose outcome is missing);
#' sampling weights weight the aggregates too (emfx gives every row the same
#' weight); cohorts treated in the first period are dropped with a warning;
#' with `"nevertreated"` the reference period is the last one before
#' adoption (etwfe takes the period `g - 1`, which does not exist when
#' periods are not consecutive integers). Nonlinear models need `fe =
#' "none"` (as etwfe, whose `emfx()` gives no standard errors otherwise).
#' Without never-treated units, the last cohort is the comparison group and
#' the periods from its adoption on are dropped (with a message), as etwfe.
#' Survey designs and the multiplier bootstrap (not in etwfe) come from the
#' package's shared variance code.
#'
#' @param data A panel (data.frame, data.table or tibble).
#' @param yname,idname,tname,gname Outcome, unit, period and first treated
#'   period columns (0, Inf or NA: never treated).
#' @param xformla One-sided covariate formula (time-invariant covariates,
#'   as etwfe's controls).
#' @param control_group `"notyettreated"` (default) or `"nevertreated"`.
#' @param fe `"cohort"` (cohort and period fixed effects; default for linear
#'   models), `"unit"` (unit and period), `"none"` (explicit indicators;
#'   default and only choice for Poisson and logit).
#' @param family `"gaussian"` (default), `"poisson"` or `"logit"`.
#' @param weightsname Sampling weights.
#' @param cluster,vcov The variance: clustered by unit by default
#'   (`vcov = "iid"`, `"hetero"`, or `cluster =` another column); Conley's
#'   spatial variance (`vcov = "conley"` or a [dd_conley()]) with `family =
#'   "gaussian"`.
#' @param coords,cutoff With `vcov = "conley"`: the latitude and longitude
#'   columns and the cutoff in kilometres (see [dd_conley()]).
#' @param survey A complex survey design of `data` ([survey_design()] or a
#'   survey package design): design weights and the design-based variance of
#'   the coefficients, as `survey::svyglm()` of the same regression (Taylor
#'   linearisation of the model's scores; replicate weights: refits, linear
#'   models only); the averages' standard errors by the delta method.
#' @param nboot,boot_weights,cband Multiplier bootstrap of the coefficients'
#'   influence functions (`nboot` draws of `"rademacher"`, `"mammen"` or
#'   `"webb"` weights, one per cluster, per PSU with a survey design, or per
#'   observation with `vcov = "hetero"`); `aggregate()` bootstraps the
#'   averages from the same draws and, with `cband = TRUE`, gives the event
#'   study a uniform band. 0 (default): analytic.
#' @param alpha Significance level.
#' @param fe_tol,fe_maxit Fixed-effect absorption settings.
#' @param glm_tol,glm_maxit Convergence of the Poisson and logit fits
#'   (relative change of the deviance).
#' @param ... etwfe's spellings: `cgroup` (`"notyet"`, `"never"`), `ivar`
#'   (unit fixed effects).
#' @return A fit of class `c("did_etwfe", "dd_fit")` whose table has the
#'   cell coefficients `ATT(g,t)` (and their covariate interactions).
#' @references Wooldridge, J. M. (2021). Two-way fixed effects, the two-way
#'   Mundlak regression, and difference-in-differences estimators.
#'   Wooldridge, J. M. (2023). Simple approaches to nonlinear
#'   difference-in-differences with panel data. Econometrics Journal 26(3).
#' @examples
#' d <- read.csv(system.file("extdata", "sim_panel.csv", package = "diffdiff"))
#' fit <- did_etwfe(d, "y", "id", "year", "first_treat")
#' aggregate(fit, type = "simple")
#' es <- aggregate(fit, type = "dynamic")
#' es
#' plot(es)
#' # multiplier bootstrap with a uniform band for the event study
#' set.seed(1)
#' fb <- did_etwfe(d, "y", "id", "year", "first_treat", nboot = 499, cband = TRUE)
#' plot(aggregate(fb, type = "dynamic"))
#' @export
did_etwfe <- function(data, yname, idname, tname, gname, xformla = NULL,
                      control_group = c("notyettreated", "nevertreated"), fe = NULL,
                      family = c("gaussian", "poisson", "logit"), weightsname = NULL, cluster = NULL, vcov = NULL,
                      survey = NULL, nboot = 0, boot_weights = c("rademacher", "mammen", "webb"), cband = FALSE,
                      alpha = 0.05, fe_tol = 1e-8, fe_maxit = 10000, glm_tol = 1e-10, glm_maxit = 100, coords = NULL,
                      cutoff = NULL, ...) {
  call <- match.call()
  dd_required(c("data", "yname", "idname", "tname", "gname"))
  a <- dd_did_aliases(list(...), c("cgroup", "ivar"), "did_etwfe")
  if (!is.null(a$cgroup)) control_group <- switch(paste0("", a$cgroup[1]), notyet = "notyettreated",
                                                  never = "nevertreated", a$cgroup[1])
  if (!is.null(a$ivar)) fe <- "unit"
  dd_check_data(data)
  control_group <- dd_match_vocab(control_group[1], c("notyettreated", "nevertreated"), "control_group")
  family <- dd_match_arg(family[1], c("gaussian", "poisson", "logit"), "family")
  fe <- dd_match_arg(if (is.null(fe)) (if (family == "gaussian") "cohort" else "none") else fe[1],
                     c("cohort", "unit", "none"), "fe")
  if (family != "gaussian" && fe != "none")
    dd_stop("`fe` = \"%s\" with `family` = \"%s\": nonlinear models keep the cohort and period effects as coefficients (fe = \"none\"), so that the averaged effects have standard errors (etwfe's emfx gives none otherwise).",
            fe, family)
  sp <- dd_spec(alpha = alpha, nboot = nboot, boot_weights = boot_weights, cband = cband, fe_tol = fe_tol,
                fe_maxit = fe_maxit)
  if (sp$cband && sp$nboot == 0L) dd_stop("`cband` = TRUE needs bootstrap draws: set nboot = 999, say.")
  sp <- dd_spec_variance(sp, data, idname, weightsname, cluster, vcov, survey, coords = coords, cutoff = cutoff,
                         conley = TRUE)
  glm_tol <- dd_check_positive(glm_tol, "glm_tol")
  glm_maxit <- dd_check_count(glm_maxit, "glm_maxit", min = 1)
  p <- dd_panel(data, yname, idname, tname, c(gname = gname), xformla, weightsname, sp$cluster, NULL, sp$design)
  if (!is.null(p$survey) && p$survey$design$replicate && family != "gaussian")
    dd_stop("`survey`: a replicate-weight design with `family` = \"%s\" is not supported (its replicates would need nonlinear refits); use a design with PSUs and strata (Taylor linearisation).",
            family)
  s <- dd_etwfe_sample(p, control_group, family, yname, gname)
  y <- s$y; tt <- s$tt; G <- s$G; p <- s$p; gref <- s$gref; notes <- s$notes; tl <- s$tl
  n <- length(y)
  d <- dd_etwfe_design(p, y, tt, G, gref, tl, s$glist, control_group, fe, family, gname, idname, tname)
  X <- d$X; cterm <- d$cterm; cidx <- d$cidx; xnm <- d$xnm; Xdm <- d$Xdm; gcols <- d$gcols; tcols <- d$tcols
  fel <- d$fel; fe_sizes <- d$fe_sizes; dummies <- d$dummies
  ifs <- NULL
  if (family == "gaussian" && !dummies) {
    est <- dd_estimate(y, X, fel, p$w, p$cluster, sp, cterm, survey = p$survey, boot_key = list(p$id, tt),
                       wild_available = FALSE, conley = dd_conley_panel_rows(sp, data, p))
    reg <- est$reg; V <- est$vc$V; tab <- est$tab; vc <- est$vc; ifs <- est$ifs
    if (length(est$rows) != n) dd_stop("internal error: rows dropped in did_etwfe; please report")
  } else {
    if (!is.null(sp$conley) && family != "gaussian")
      dd_stop("`vcov` = Conley is available for did_etwfe() with `family` = \"gaussian\"; got \"%s\".", family)
    g <- dd_glm(y, X, fel, p$w, family, sp$opts, glm_tol, glm_maxit)
    reg <- g$reg
    clusters <- lapply(p$cluster, dd_codes)
    # survey designs: the model's scores (x (y - mu) for both links) by
    # Taylor linearisation, or (linear) the replicates' refits
    vc <- if (is.null(p$survey)) dd_glm_vcov(g, sp$vcov_type, clusters, dd_conley_panel_rows(sp, data, p))
          else dd_svy_reg_vcov(reg, p$survey$design, p$survey$rows, y, X, NULL, sp$opts)
    if (sp$nboot > 0L)
      ifs <- dd_reg_ifs(reg, vc, p$cluster, dd_row_ranks(list(p$id, tt)) - 1L,
                        if (is.null(p$survey)) NULL else p$survey)
    V <- vc$V
    b <- reg$coef[reg$keep]
    if (family == "gaussian" && fe == "cohort") {
      # the cohort and period indicators are the fixed effects: not reported
      # (the cell averages do not involve them)
      fx <- grepl("^cohort::[^:]*$|^period::[^:]*$", names(b)) | names(b) == "(Intercept)"
      b <- b[!fx]; V <- V[!fx, !fx, drop = FALSE]
      # CR2's Satterthwaite degrees of freedom are per coefficient: keep the
      # reported ones (the table, the intervals and the fit read them by name)
      if (length(vc$df) > 1L) vc$df <- vc$df[names(b)]
      reg$coef <- reg$coef[names(reg$coef) %in% names(b) | !reg$keep]
      reg$keep <- names(reg$coef) %in% names(b)
      reg$dropped <- setdiff(reg$dropped, c(sprintf("cohort::%s", format(gcols, trim = TRUE)),
                                            sprintf("period::%s", format(tcols, trim = TRUE))))
    }
    tab <- dd_coef_table(b, sqrt(diag(V)), vc$df, alpha)
  }
  b <- reg$coef[reg$keep]
  # the multiplier bootstrap of the coefficients' influence functions (the
  # aggregations bootstrap their combinations of the same draws' rows)
  boot <- NULL
  if (sp$nboot > 0L) {
    ifs <- ifs[, names(b), drop = FALSE]
    band <- which(names(b) %in% cterm)
    bt <- dd_boot_table(b, V, vc$df, sp, band, function(V) dd_ifs_boot(ifs, V, sp, band, structure(vc$label,
                        psu = identical(vc$type, "survey"))))
    boot <- list(nboot = sp$nboot, boot_weights = sp$boot_weights, cband = sp$cband, alpha = alpha,
                 label = vc$label, psu = identical(vc$type, "survey"))
    tab <- bt$tab; V <- bt$V; vc$label <- bt$label
  } else ifs <- NULL
  # the evaluation rows of the aggregations: the treated observations
  # (never treated comparisons: every period of the treated cohorts for the
  # event study) and each one's design with its cell switched on and off
  post <- G != gref & tt >= G
  evr <- if (control_group == "nevertreated") which(G != gref) else which(post)
  ev <- list(group = G[evr], time = tt[evr], post = post[evr], w = if (is.null(p$w)) NULL else p$w[evr],
             cell = cidx[evr], xdm = if (length(xnm)) Xdm[evr, , drop = FALSE] else NULL, cterm = cterm, xnm = xnm)
  if (family != "gaussian") {
    # nonlinear models: each evaluation row's design with its cell on and off
    Xe <- X[evr, names(b), drop = FALSE]
    ev$X1 <- Xe
    ev$cells_cols <- intersect(names(b), c(cterm, if (length(xnm)) outer(cterm, xnm, function(a, z) paste0(a, ":", z))))
    ev$offset <- g$eta[evr] - drop(Xe %*% b)
  }
  rm(X)
  info <- dd_info("did_etwfe", sprintf("Extended TWFE (did_etwfe)%s", if (family != "gaussian") paste0(", ", family) else ""),
                  yname, n, vc$type, vc$label, vc$df, alpha, intersect(cterm, names(b)),
                  n_units = attr(p$idc, "nlev"), n_periods = length(tl),
                  n_clusters = if (vc$type %in% c("cluster", "CR2")) vc$G[1] else NULL,
                  fe_names = names(fe_sizes), dropped = reg$dropped, notes = notes,
                  more = list(fe_sizes = if (fe == "none") NULL else unname(fe_sizes)))
  new_dd_fit("did_etwfe", tab, b, V, info, call,
             list(family = family, control_group = control_group, fe = fe, tname = tname, etwfe = ev, ifs = ifs,
                  boot = boot))
}

# the estimation sample: units treated in the first period dropped, and
# without never-treated units the last cohort as the comparison (its
# periods from adoption on dropped); the outcome, periods and cohorts
# (Inf: never treated) on the kept rows, and the panel restricted to them
dd_etwfe_sample <- function(p, control_group, family, yname, gname) {
  y <- p$y; tt <- as.double(p$tt)
  G <- ifelse(p$never, Inf, as.double(p$g))
  if (family == "poisson" && any(y < 0))
    dd_stop("`yname` = \"%s\" has negative values (smallest %s): a Poisson model needs outcomes >= 0.", yname,
            format(min(y)))
  if (family == "logit" && any(y != 0 & y != 1))
    dd_stop("`yname` = \"%s\" has values other than 0 and 1 (e.g. %s): a logit model needs a binary outcome.", yname,
            format(y[y != 0 & y != 1][1]))
  tl <- sort(unique(tt)); tref <- tl[1]
  rows <- rep(TRUE, length(y))
  notes <- character()
  first <- is.finite(G) & G <= tref
  if (any(first)) {
    warning(sprintf("Dropped %d observations of units already treated in the first period (cohort(s) %s).", sum(first),
                    paste(unique(G[first]), collapse = ", ")), call. = FALSE)
    rows <- rows & !first
  }
  if (any(!is.finite(G[rows]))) {
    gref <- Inf
  } else if (control_group == "notyettreated") {
    gref <- max(G[rows])
    notes <- c(notes, sprintf("no never-treated units: cohort %s (the last treated) is the comparison; periods from %s on are dropped.",
                              format(gref), format(gref)))
    late <- rows & tt >= gref
    if (any(late))
      message(sprintf("diffdiff: no never-treated units: cohort %s (the last treated) is the comparison group; %d observations of periods from %s on (no not-yet-treated observations there) are dropped.",
                      format(gref), sum(late), format(gref)))
    rows <- rows & tt < gref
  } else {
    dd_stop("there are no never-treated units (`gname` = \"%s\" 0, Inf or NA), so `control_group` = \"nevertreated\" has no comparison group; use control_group = \"notyettreated\".",
            gname, .code = "NO_NEVER_TREATED")
  }
  keep <- which(rows)
  if (!all(rows)) {
    y <- y[keep]; tt <- tt[keep]; G <- G[keep]
    p$X <- if (is.null(p$X)) NULL else p$X[keep, , drop = FALSE]
    p$w <- if (is.null(p$w)) NULL else p$w[keep]
    p$cluster <- lapply(p$cluster, `[`, keep)
    p$idc <- dd_recode(p$idc, keep); p$tc <- dd_recode(p$tc, keep)
    p$id <- p$id[keep]
    if (!is.null(p$survey)) p$survey$rows <- p$survey$rows[keep]
  }
  tl <- sort(unique(tt))
  glist <- sort(unique(G[is.finite(G) & G != gref]))
  if (!length(glist)) {
    if (is.finite(gref))
      dd_stop("`gname` = \"%s\": there are no never-treated units and one cohort (%s), which is then the comparison (not yet treated until %s): no cohort is left to estimate and no period has not-yet-treated observations after its adoption.",
              gname, format(gref), format(gref))
    dd_stop("`gname` = \"%s\": no treated cohort is left to estimate.", gname)
  }
  list(y = y, tt = tt, G = G, p = p, gref = gref, notes = notes, tl = tl, glist = glist)
}

# the cells and the design of did_etwfe's regression: cell indicators, their
# interactions with the covariates (demeaned within cohort), covariates
# with cohort- and period-specific slopes, and with fe = "none" (or a
# linear model with cohort effects) the cohort and period indicators; the
# fixed effects to absorb
dd_etwfe_design <- function(p, y, tt, G, gref, tl, glist, control_group, fe, family, gname, idname, tname) {
  # the cells: treated periods (not yet treated comparisons) or every period
  # but the one before adoption (never treated)
  prev <- vapply(glist, function(g) { j <- which(tl < g); if (length(j)) max(tl[j]) else NA_real_ }, numeric(1))
  inc <- G != gref & (if (control_group == "notyettreated") tt >= G else tt != prev[match(G, glist)])
  inc[is.na(inc)] <- FALSE
  tcode <- match(tt, tl)
  ckey <- ifelse(inc, match(G, glist) * (length(tl) + 1) + tcode, NA_real_)
  uk <- sort(unique(ckey[inc]))
  cells <- data.frame(g = glist[uk %/% (length(tl) + 1)], t = tl[uk %% (length(tl) + 1)])
  cidx <- match(ckey, uk)
  cidx[!inc] <- NA_integer_
  K <- nrow(cells)
  cterm <- sprintf("ATT(%s,%s)", format(cells$g, trim = TRUE), format(cells$t, trim = TRUE))
  n <- length(y)
  # the design, allocated once and filled by column: the cell indicators,
  # with covariates (demeaned within cohort over the estimation sample) the
  # cell interactions, the covariates and their cohort- and period-specific
  # slopes; with fe = "none" the cohort and period indicators
  xnm <- character()
  Xdm <- NULL
  gcols <- sort(unique(G[G != gref])); tcols <- tl[-1]
  if (!is.null(p$X) && ncol(p$X)) {
    xnm <- colnames(p$X)
    gcode <- match(G, sort(unique(G)))
    Xdm <- p$X - apply(p$X, 2, function(x) (rowsum(x, gcode, reorder = TRUE)[, 1] / tabulate(gcode))[gcode])
    flat <- apply(abs(Xdm[G != gref, , drop = FALSE]), 2, max) <= 1e-12 * pmax(1, apply(abs(p$X), 2, max))
    if (any(flat))
      dd_stop("`xformla`: %s %s constant within every treated cohort, so %s cell interactions are zero; drop %s (the cohort effects absorb %s).",
              paste0("'", xnm[flat], "'", collapse = ", "), if (sum(flat) > 1) "are" else "is",
              if (sum(flat) > 1) "their" else "its", if (sum(flat) > 1) "them" else "it",
              if (sum(flat) > 1) "them" else "it")
  }
  # linear models with cohort (or no) fixed effects are solved like the
  # nonlinear ones: explicit cohort and period indicators in a sparse design
  # and the normal equations (dd_glm's sparse path); unit fixed effects are
  # absorbed (dd_estimate)
  dummies <- fe == "none" || (family == "gaussian" && fe == "cohort")
  cn <- c(if (dummies) "(Intercept)", cterm, if (length(xnm)) as.vector(outer(cterm, xnm, function(a, z) paste0(a, ":", z))),
          unlist(lapply(xnm, function(z) c(z, sprintf("cohort::%s:%s", format(gcols, trim = TRUE), z),
                                            sprintf("period::%s:%s", format(tcols, trim = TRUE), z)))),
          if (dummies) c(sprintf("cohort::%s", format(gcols, trim = TRUE)),
                         sprintf("period::%s", format(tcols, trim = TRUE))))
  X <- matrix(0, n, length(cn), dimnames = list(NULL, cn))
  off <- if (cn[1] == "(Intercept)") 1L else 0L
  if (off) X[, 1] <- 1
  ir <- which(inc)
  X[cbind(ir, off + cidx[ir])] <- 1
  for (j in seq_along(xnm)) {
    X[cbind(ir, off + K * j + cidx[ir])] <- Xdm[ir, j]
    x <- p$X[, j]
    X[, xnm[j]] <- x
    for (g in gcols) { r <- which(G == g); X[r, sprintf("cohort::%s:%s", format(g, trim = TRUE), xnm[j])] <- x[r] }
    for (s0 in tcols) { r <- which(tt == s0); X[r, sprintf("period::%s:%s", format(s0, trim = TRUE), xnm[j])] <- x[r] }
  }
  if (dummies) {
    for (g in gcols) X[G == g, sprintf("cohort::%s", format(g, trim = TRUE))] <- 1
    for (s0 in tcols) X[tt == s0, sprintf("period::%s", format(s0, trim = TRUE))] <- 1
  }
  fel <- switch(fe, cohort = stats::setNames(list(dd_codes(G), p$tc), c(gname, tname)),
                unit = stats::setNames(list(p$idc, p$tc), c(idname, tname)), none = NULL)
  fe_sizes <- if (is.null(fel)) NULL else vapply(fel, function(f) attr(f, "nlev"), integer(1))
  if (dummies) fel <- NULL
  list(X = X, cterm = cterm, cidx = cidx, xnm = xnm, Xdm = Xdm, gcols = gcols, tcols = tcols, fel = fel,
       fe_sizes = fe_sizes, dummies = dummies)
}


#' Aggregate a did_etwfe fit
#'
#' The averages of `etwfe::emfx()`: each treated observation's effect (its
#' cell coefficient plus the covariate interactions at its demeaned
#' covariates; Poisson and logit: the fitted mean with the cell on minus
#' off) averaged over all treated observations (`"simple"`), by cohort
#' (`"group"`), by period (`"calendar"`) or by event time (`"dynamic"`, or
#' etwfe's `"event"`), with delta-method standard errors from the model's
#' covariance. With never-treated comparisons the event study includes the
#' pre-periods (the period before adoption is the reference, zero).
#'
#' @param x A `did_etwfe` fit.
#' @param type `"simple"` (default), `"group"`, `"calendar"` or `"dynamic"`.
#' @param post_only With not-yet-treated comparisons, `FALSE` adds the
#'   pre-adoption event times (zero by construction, as emfx).
#' @param window Event times kept: a number `w` (`-w..w`) or two (`c(before,
#'   after)`).
#' @param predict `"response"` (default) or `"link"` (nonlinear models: the
#'   effect on the linear predictor).
#' @param ... Not used: an error if given (no argument is ignored silently).
#' @return A `did_etwfe_agg` fit.
#' @examples
#' d <- read.csv(system.file("extdata", "sim_panel.csv", package = "diffdiff"))
#' aggregate(did_etwfe(d, "y", "id", "year", "first_treat"), type = "group")
#' @export
aggregate.did_etwfe <- function(x, type = c("simple", "group", "calendar", "dynamic"), post_only = TRUE,
                                window = NULL, predict = c("response", "link"), ...) {
  dd_check_dots(list(...), "aggregate()")
  type <- if (identical(type, eval(formals()$type))) "simple" else type[1]
  if (identical(type, "event")) type <- "dynamic"
  type <- dd_match_arg(type, c("simple", "group", "calendar", "dynamic"), "type")
  predict <- dd_match_arg(predict[1], c("response", "link"), "predict")
  post_only <- dd_check_flag(post_only, "post_only")
  e <- x$etwfe
  ev <- e$time - e$group
  sel <- if (type == "dynamic" && (x$control_group == "nevertreated" || !post_only)) rep(TRUE, length(ev)) else e$post
  if (type == "dynamic" && x$control_group == "notyettreated" && !post_only)
    dd_stop("`post_only` = FALSE: the pre-adoption event times of a not-yet-treated fit are zero by construction and not estimated; use control_group = \"nevertreated\" for an event study with leads.")
  if (!is.null(window)) {
    if (!is.numeric(window) || !length(window) %in% 1:2 || anyNA(window) || any(window < 0))
      dd_stop("`window` = %s must be one or two non-negative numbers.", dd_show(window))
    w2 <- rep(window, length.out = 2)
    sel <- sel & ev >= -w2[1] & ev <= w2[2]
  }
  key <- switch(type, simple = rep(0, length(ev)), group = e$group, calendar = e$time, dynamic = ev)
  lev <- sort(unique(key[sel]))
  if (!length(lev)) dd_stop("no treated observation is left to average (check `window`).")
  b <- x$coefficients
  wt <- if (is.null(e$w)) rep(1, length(ev)) else e$w
  gi <- match(key, lev); gi[!sel] <- NA_integer_
  ok <- !is.na(gi)
  gsum <- function(v) .Call(C_cell_sums, as.double(v[ok]), NULL, gi[ok] - 1L, length(lev))
  den <- gsum(wt)[, 1]
  if (x$family == "gaussian" || predict == "link") {
    # linear in the coefficients: an observation's effect is its cell's
    # coefficient plus the interactions at its demeaned covariates, so the
    # derivative of an average is the weighted share of its cells (and their
    # mean covariates)
    nm <- c(e$cterm, if (length(e$xnm)) as.vector(outer(e$cterm, e$xnm, function(a, z) paste0(a, ":", z))))
    K <- length(e$cterm)
    J <- matrix(0, length(lev), length(b), dimnames = list(NULL, names(b)))
    r <- which(ok & !is.na(e$cell))
    L <- length(lev)
    for (j in c(0L, seq_along(e$xnm))) {
      v <- wt[r] * (if (j == 0L) 1 else e$xdm[r, j])
      S <- matrix(.Call(C_cell_sums, as.double(v), NULL, (gi[r] - 1L) + L * (e$cell[r] - 1L), L * K), L, K)
      cols <- nm[j * K + seq_len(K)]
      have <- cols %in% names(b)
      J[, cols[have]] <- S[, have, drop = FALSE]
    }
    J <- J / den
    est <- NULL                                          # J b (dd_lincom below)
  } else {
    # the design with the cell off is the design with the cell columns
    # zeroed: eta0 from the coefficients with those zeroed, and the
    # derivative's sums weighted in C without copies of the design
    b0 <- b; b0[e$cells_cols] <- 0
    eta1 <- drop(e$X1 %*% b) + e$offset; eta0 <- drop(e$X1 %*% b0) + e$offset
    F <- if (x$family == "poisson") exp else stats::plogis
    f <- if (x$family == "poisson") exp else stats::dlogis
    idx <- ifelse(ok, gi - 1L, length(lev))              # rows not averaged: an extra, dropped cell
    J <- .Call(C_cell_sums, e$X1, as.double(wt * (f(eta1) - f(eta0))), as.integer(idx), length(lev) + 1L)
    J1 <- .Call(C_cell_sums, e$X1, as.double(wt * f(eta1)), as.integer(idx), length(lev) + 1L)
    cc <- match(e$cells_cols, names(b))
    J[, cc] <- J1[, cc]
    J <- J[seq_along(lev), , drop = FALSE] / den
    est <- gsum(wt * (F(eta1) - F(eta0)))[, 1] / den
  }
  # the averages' covariance (the delta method's linearisation J: the
  # averages of a linear fit are J b) and their influence functions
  lc <- dd_lincom(b, x$vcov, J)
  if (is.null(est)) est <- lc$estimate
  V <- lc$vcov
  se <- sqrt(pmax(diag(V), 0))
  crit <- NA_real_
  if (!is.null(x$ifs)) {
    # the multiplier bootstrap's draws of the averages: J times the
    # coefficients'
    cn <- colnames(x$ifs)
    bt <- dd_ifs_boot(dd_lincom(b[cn], NULL, J[, cn, drop = FALSE], ifs = x$ifs)$ifs, V, x$boot,
                      if (type == "dynamic" && x$boot$cband) seq_along(lev) else integer(),
                      structure(x$boot$label, psu = x$boot$psu))
    se <- bt$se; V <- bt$V; crit <- bt$crit
  }
  se[se == 0] <- NA_real_
  terms <- switch(type, simple = "ATT", group = paste0("group::", lev), calendar = paste0("time::", lev),
                  dynamic = paste0("event::", lev))
  extra <- switch(type, simple = NULL, group = data.frame(group = lev), calendar = data.frame(time = lev),
                  dynamic = data.frame(event = lev))
  tab <- dd_if_table(terms, est, se, x$alpha, crit, extra)
  dimnames(V) <- list(terms, terms)
  info <- dd_info("did_etwfe_agg", sprintf("Extended TWFE: average effects (type = \"%s\") (did_etwfe)", type),
                  x$yname, x$nobs, x$vcov_type, x$vcov_label, Inf, x$alpha, terms, n_units = x$n_units,
                  n_periods = x$n_periods, n_clusters = x$n_clusters)
  new_dd_fit("did_etwfe_agg", tab, stats::setNames(est, terms), V, info, match.call(),
             list(type = type, jacobian = J, control_group = x$control_group,
                  event_study = if (type == "dynamic")
                    dd_es_spec(reference = if (x$control_group == "nevertreated") -1 else numeric(),
                               base_period = if (x$control_group == "nevertreated") "reference" else "imputation")))
}

# print() and summary(): after the table, the design
dd_footer.did_etwfe <- function(x) {
  NextMethod()
  cat(sprintf("Comparisons: %s; %s; model: %s. Average effects: aggregate(fit, type = \"simple\" | \"group\" | \"calendar\" | \"dynamic\").\n",
              if (x$control_group == "notyettreated") "not-yet-treated and never-treated observations"
              else "never-treated units (every period but the one before adoption has a cell)",
              switch(x$fe, cohort = "cohort and period fixed effects", unit = "unit and period fixed effects",
                     none = "cohort and period indicators"),
              x$family))
  invisible(x)
}
