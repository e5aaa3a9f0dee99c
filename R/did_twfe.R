#' Static two-way fixed-effects difference-in-differences
#'
#' Regresses the outcome on a 0/1 treatment indicator with unit and time fixed
#' effects (and any extra fixed effects and covariates):
#' `y ~ d + x | id + t (+ fe)`, the regression fixest writes as
#' `feols(y ~ d + x | id + t)`. With staggered adoption and heterogeneous
#' effects this coefficient is a weighted average that can mislead; see the
#' Callaway--Sant'Anna and related estimators for those designs.
#'
#' Fixed effects are absorbed column by column, in parallel over columns. One
#' dimension: group means. Two or more: a forward sweep of alternating
#' projections, which is exact when the dimensions are orthogonal (balanced
#' panels); otherwise preconditioned conjugate gradients on the fixed-effect
#' normal equations (diagonal preconditioner) finish the job. Absorption stops
#' when the preconditioned residual norm falls below `fe_tol` times its
#' starting value; a warning says when `fe_maxit` iterations were not enough.
#' fixest uses alternating projections with Irons--Tuck acceleration and stops
#' on the change in the fixed-effect coefficients (`fixef.tol = 1e-6`). On
#' badly connected fixed-effect graphs fixest's default answer can be off in
#' the 6th digit (seen here: 4.5e-6 relative on a 1-million-row three-way
#' panel), while diffdiff's default `fe_tol = 1e-8` agreed with fixest at
#' `fixef.tol = 1e-11` to 4e-11; compare the two at tight tolerances.
#'
#' Singletons: with `drop_singletons = TRUE` (the default, as fixest's
#' `fixef.rm = "perfect_fit"`) observations alone in a fixed-effect level are
#' removed recursively before estimation, with a message; they are perfectly
#' fitted and carry no information on the slopes, but they would count in `n`
#' and `K`. Covariates collinear with the fixed effects or with each other are
#' dropped with a message and reported `NA` (the later of a collinear set, as
#' `lm` does).
#'
#' Rows with `NA`, `NaN` or `Inf` in the outcome, covariates or weights, or `NA`
#' in the unit, time, cluster or fixed-effect columns, are dropped with a
#' message giving the count by argument. Zero weights are dropped too.
#'
#' @section Data in a database:
#' `data` may also be a database table (a dbplyr table, e.g. a DuckDB view over
#' Parquet files). On a balanced panel the regression's sufficient
#' statistics are computed in the engine by treatment path (the units with
#' the same 0/1 path of `dname`): their count, mean outcome path and the
#' centred cross-moments of their outcome paths (and, clustered by a
#' column coarser than the unit, the centred sums of each cluster and
#' path). They give the coefficient, its iid, HC0/HC1 or one-way clustered
#' variance with the in-memory conventions (see [dd_vcov_types]) and the
#' R-squared exactly: equal to the in-memory fit to about 1e-13 (tested to
#' 1e-10). Periods must be numeric, at most 52. Covariates, weights, extra
#' fixed effects, `survey`, the wild bootstrap, CR2, two-way clustering and
#' unbalanced panels need the data in memory (an error says so); the fit
#' keeps no residuals or fitted values.
#'
#' @param data A data.frame, data.table or tibble in long format. It is never
#'   modified.
#' @param yname Name of the outcome column (numeric).
#' @param idname Name of the unit identifier column.
#' @param tname Name of the time period column.
#' @param dname Name of the 0/1 treatment indicator column (1 when the unit is
#'   treated in that period).
#' @param xformla Optional one-sided formula of covariates, e.g. `~ x1 + x2`;
#'   factors are expanded to dummies.
#' @param weightsname Optional name of a column of non-negative weights
#'   (analytic/sampling weights, as fixest's `weights`).
#' @param fe Optional names of further fixed-effect columns, absorbed with the
#'   unit and time effects.
#' @param cluster Column(s) to cluster by: one or two names, or a one-sided
#'   formula (`~ state`). Defaults to `idname` when `vcov` is `NULL`,
#'   `"cluster"` or `"CR2"`.
#' @param vcov `NULL` (clustered by `cluster`) or one of `"iid"`, `"hetero"`
#'   (`"HC1"`), `"HC0"`, `"HC2"`, `"HC3"` (leverage-corrected, as sandwich's
#'   `vcovHC()`), `"cluster"`, `"CR2"` (bias-reduced with Satterthwaite
#'   degrees of freedom, as clubSandwich; for few clusters),
#'   `"conley"` (spatial, with `coords` and `cutoff`) or a [dd_conley()]
#'   (spatial with its options); see [dd_vcov_types] for the formulas and
#'   the fixest or clubSandwich setting each equals.
#' @param coords,cutoff With `vcov = "conley"`: the latitude and longitude
#'   columns (degrees; default `c("lat", "lon")`) and the distance in
#'   kilometres within which scores are correlated ([dd_conley()]'s
#'   defaults otherwise: uniform kernel, fixest's spherical distance).
#' @param alpha Significance level for confidence intervals (default 0.05).
#' @param survey Optional complex survey design of `data` ([survey_design()] or a
#'   survey package design): design weights and design-based variance, as
#'   `survey::svyglm()` with the fixed effects as factors (Taylor
#'   linearisation, or refits per replicate weight); t tests use the design's
#'   degrees of freedom. Not combined with `weightsname`, `cluster`, `vcov`
#'   or `nboot`.
#' @param nboot Number of wild cluster bootstrap replications (null imposed,
#'   WCR) for the treatment coefficient; 0 (default) for analytic inference
#'   only. Replications are drawn from R's RNG through a seed, one
#'   multiplier per cluster in sorted order of the cluster values (per row in
#'   the order of unit and period without clusters), so `set.seed()`
#'   reproduces them for any thread count and any order of the rows. With
#'   fewer than 5 treated or untreated clusters a warning says that neither
#'   the clustered interval nor this bootstrap is exact (MacKinnon and Webb
#'   2017); the bootstrap is the safer of the two. The bootstrap p-value
#'   is symmetric (`mean(|t*| >= |t|)`) and the interval is obtained by test
#'   inversion (the set of null values not rejected at `alpha`).
#' @param boot_weights Bootstrap weight distribution: `"rademacher"`
#'   (default), `"mammen"` or `"webb"`.
#' @param fe_tol,fe_maxit Convergence tolerance and sweep cap of the
#'   fixed-effect absorption.
#' @param drop_singletons Remove fixed-effect singletons (default `TRUE`).
#' @return An object of class `c("did_twfe", "dd_fit")`; see [dd_fit-methods].
#'   The coefficient of interest is the term `"ATT"`.
#' @seealso [did_2x2()], [did_event()], [dd_vcov_types].
#' @references Bertrand, M., Duflo, E. and Mullainathan, S. (2004). How much
#'   should we trust differences-in-differences estimates? *Quarterly
#'   Journal of Economics* 119(1), 249-275.
#'
#'   Goodman-Bacon, A. (2021). Difference-in-differences with variation in
#'   treatment timing. *Journal of Econometrics* 225(2), 254-277.
#'
#'   de Chaisemartin, C. and D'Haultfoeuille, X. (2020). Two-way fixed
#'   effects estimators with heterogeneous treatment effects. *American
#'   Economic Review* 110(9), 2964-2996.
#'
#'   Gaure, S. (2013). OLS with multiple high dimensional category
#'   variables. *Computational Statistics & Data Analysis* 66, 8-18.
#' @examples
#' d <- read.csv(system.file("extdata", "sim_panel.csv", package = "diffdiff"))
#' fit <- did_twfe(d, yname = "y", idname = "id", tname = "year", dname = "treat",
#'                 xformla = ~ x1)
#' fit
#' did_twfe(d, yname = "y", idname = "id", tname = "year", dname = "treat",
#'          vcov = "hetero")
#' # few clusters: bias-reduced CR2 with Satterthwaite degrees of freedom
#' d$region <- d$id %% 10
#' summary(did_twfe(d, yname = "y", idname = "id", tname = "year", dname = "treat",
#'                  cluster = "region", vcov = "CR2"))
#' @inheritSection diffdiff-package Formula interface
#' @export
did_twfe <- function(data, yname, idname, tname, dname, xformla = NULL, weightsname = NULL,
                     fe = NULL, cluster = NULL, vcov = NULL, alpha = 0.05, nboot = 0,
                     boot_weights = c("rademacher", "mammen", "webb"),
                     fe_tol = 1e-8, fe_maxit = 10000, drop_singletons = TRUE, survey = NULL, coords = NULL,
                     cutoff = NULL) {
  call <- match.call()
  # the fixest-style formula (y ~ x | id + t, sunab(g, t)): the column-name call (R/formula.R)
  fcl <- dd_formula_call(match.call(), environment(), "did_twfe")
  if (!is.null(fcl)) return(eval(fcl, parent.frame()))
  dd_required(c("data", "yname", "idname", "tname", "dname"))
  dd_conley_in_memory(data, vcov, coords)
  # a database table: the treatment paths' moments computed in the engine (R/did_twfe_db.R)
  if (dd_is_db(data))
    return(dd_twfe_db(data, yname, idname, tname, dname, xformla, weightsname, fe, cluster, vcov, alpha, nboot,
                      survey, call))
  dd_check_data(data)
  sp <- dd_spec(alpha = alpha, nboot = nboot, boot_weights = boot_weights, fe_tol = fe_tol, fe_maxit = fe_maxit,
                drop_singletons = drop_singletons)
  alpha <- sp$alpha; nboot <- sp$nboot
  sp <- dd_spec_variance(sp, data, idname, weightsname, cluster, vcov, survey, wild = TRUE, coords = coords,
                         cutoff = cutoff, conley = TRUE)
  p <- dd_panel(data, yname, idname, tname, c(dname = dname), xformla, weightsname, sp$cluster, fe,
                sp$design, numeric_t = FALSE, x_list = TRUE)
  idc <- p$idc; tc <- p$tc
  d <- dd_check_numeric_col(p$vals$dname, "dname", dname)
  dd_check_binary(d, "dname", dname)
  treated <- d == 1
  if (all(treated)) dd_stop("`dname` = \"%s\" is 1 in every row: there is no untreated observation.", dname, .code = "ALWAYS_TREATED")
  if (!any(treated)) dd_stop("`dname` = \"%s\" is 0 in every row: no unit is ever treated.", dname, .code = "NO_TREATED")
  # the regressors in one allocation: plain numeric covariates come as their
  # columns (x_list), factors expanded as a matrix
  if (is.list(p$X) && !is.matrix(p$X)) {
    X <- .Call(C_col_matrix, c(list(d), unname(p$X)))
    dimnames(X) <- list(NULL, c("ATT", names(p$X)))      # in place (structure() would copy)
  } else X <- cbind(ATT = d, p$X)
  fel <- c(stats::setNames(list(idc, tc), c(idname, tname)), lapply(p$fe, dd_codes))
  est <- dd_estimate(p$y, X, fel, p$w, p$cluster, sp, "ATT",
                     survey = p$survey, boot_key = list(p$id, p$tt), treated = treated,
                     control = dd_unit_rows(dd_level_count(idc, treated) == 0L, idc),
                     conley = dd_conley_panel_rows(sp, data, p))
  r <- est$rows
  info <- dd_reg_info(est, "did_twfe", "Two-way fixed-effects DiD (did_twfe)", yname, alpha,
                      "ATT", p$cluster, names(fel),
                      n_units = attr(est$reg$fe_codes[[1]], "nlev"),
                      n_periods = attr(est$reg$fe_codes[[2]], "nlev"))
  new_dd_fit("did_twfe", est$tab, est$reg$coef, est$vc$V, info, call)
}
