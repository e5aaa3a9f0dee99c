#' Canonical 2x2 difference-in-differences
#'
#' Regresses the outcome on a treated-group indicator, a post-period indicator
#' and their product (plus optional covariates), without fixed effects:
#' `y ~ treat + post + treat:post + x`, the regression fixest writes as
#' `feols(y ~ treat * post + x)`. The coefficient on the product is the
#' difference-in-differences estimate, reported as the term `"ATT"`. Works with
#' repeated cross-sections as well as panels (no unit identifier needed).
#'
#' @inheritParams did_twfe
#' @param treatname Name of the 0/1 column marking the treated group.
#' @param postname Name of the 0/1 column marking the post-treatment period.
#' @param cluster Optional column(s) to cluster by (one or two names, or a
#'   one-sided formula).
#' @param vcov `NULL` (clustered when `cluster` is given, otherwise `"hetero"`)
#'   or one of `"iid"`, `"hetero"` (`"HC1"`), `"HC0"`, `"HC2"`, `"HC3"`
#'   (leverage-corrected, as sandwich's `vcovHC()`), `"cluster"`, `"CR2"`
#'   (bias-reduced with Satterthwaite degrees of freedom; needs `cluster`),
#'   `"conley"` (with `coords` and `cutoff`) or a [dd_conley()]; see
#'   [dd_vcov_types].
#' @param survey Optional complex survey design of `data`: a [survey_design()]
#'   or a `survey::svydesign()` / `svrepdesign()` object. Its weights are the
#'   regression weights, and the variance is design-based, as
#'   `survey::svyglm()` computes it (Taylor linearisation of the
#'   coefficients' influence functions over strata and PSUs, or refits with
#'   each replicate weight); t tests and intervals use svyglm's residual
#'   degrees of freedom (design degrees of freedom + 1 - coefficients).
#'   Cannot be combined with `weightsname`, `cluster`, `vcov` or `nboot`.
#' @return An object of class `c("did_2x2", "dd_fit")`; see [dd_fit-methods].
#' @references Card, D. and Krueger, A. B. (1994). Minimum wages and
#'   employment: a case study of the fast-food industry in New Jersey and
#'   Pennsylvania. *American Economic Review* 84(4), 772-793.
#'
#'   Bertrand, M., Duflo, E. and Mullainathan, S. (2004). How much should we
#'   trust differences-in-differences estimates? *Quarterly Journal of
#'   Economics* 119(1), 249-275.
#'
#'   Angrist, J. D. and Pischke, J.-S. (2009). *Mostly Harmless
#'   Econometrics*. Princeton University Press, chapter 5.
#' @examples
#' d <- read.csv(system.file("extdata", "sim_panel.csv", package = "diffdiff"))
#' d <- d[d$year %in% c(2004, 2007) & d$first_treat %in% c(0, 2006), ]
#' d$treated <- as.integer(d$first_treat == 2006)
#' d$post <- as.integer(d$year == 2007)
#' did_2x2(d, yname = "y", treatname = "treated", postname = "post",
#'         xformla = ~ x1, cluster = "id")
#' @section Data in a database:
#' `data` may also be a database table (a dbplyr table): the regression is
#' saturated in the four cells, so the cells' counts, means and centred
#' sums of squares (and, clustered, each cluster's centred sums per cell),
#' computed in the engine, give the coefficients, their iid, HC0/HC1 or
#' one-way clustered covariance and the R-squared exactly (equal to the
#' in-memory fit to about 1e-13; tested to 1e-10). Covariates, weights,
#' `survey`, the wild bootstrap, CR2 and two-way clustering need the data
#' in memory (an error says so).
#' @export
did_2x2 <- function(data, yname, treatname, postname, xformla = NULL, weightsname = NULL,
                    cluster = NULL, vcov = NULL, alpha = 0.05, nboot = 0,
                    boot_weights = c("rademacher", "mammen", "webb"), survey = NULL, coords = NULL, cutoff = NULL) {
  call <- match.call()
  dd_required(c("data", "yname", "treatname", "postname"))
  dd_conley_in_memory(data, vcov, coords)
  # a database table: the four cells' moments computed in the engine (R/did_2x2_db.R)
  if (dd_is_db(data))
    return(dd_2x2_db(data, yname, treatname, postname, xformla, weightsname, cluster, vcov, alpha, nboot, survey, call))
  dd_check_data(data)
  sp <- dd_spec(alpha = alpha, nboot = nboot, boot_weights = boot_weights)
  alpha <- sp$alpha; nboot <- sp$nboot
  cluster <- dd_cluster_names(cluster, data)
  cz <- dd_conley_arg(vcov, coords, cutoff, data)
  if (!is.null(cz) && (!is.null(survey) || nboot > 0L))
    dd_stop("Conley's variance (`vcov`) cannot be combined with %s.", if (!is.null(survey)) "`survey`" else "`nboot` > 0")
  design <- dd_svy_arg(survey, data, weightsname, cluster, vcov, nboot)
  vtype <- dd_resolve_vcov(vcov, cluster, "hetero")
  p <- dd_prepare(data, yname, c(treatname = treatname, postname = postname), xformla,
                  weightsname, cluster, design = design)
  if (!is.null(design)) p$w <- design$weights[p$rows]
  tr <- dd_check_numeric_col(p$vals$treatname, "treatname", treatname)
  po <- dd_check_numeric_col(p$vals$postname, "postname", postname)
  dd_check_binary(tr, "treatname", treatname)
  dd_check_binary(po, "postname", postname)
  if (all(tr == 1)) dd_stop("`treatname` = \"%s\" is 1 in every row: there is no control group.", treatname)
  if (all(tr == 0)) dd_stop("`treatname` = \"%s\" is 0 in every row: there is no treated group.", treatname)
  if (all(po == 1) || all(po == 0))
    dd_stop("`postname` = \"%s\" takes only the value %s: a 2x2 design needs pre and post periods.",
            postname, format(po[1]))
  cells <- matrix(tabulate(tr + 2 * po + 1, 4), 2, 2)     # rows treat 0/1, columns post 0/1
  if (any(cells == 0)) {
    k <- which(cells == 0, arr.ind = TRUE)[1, ]
    dd_stop("the (%s = %d, %s = %d) cell has no observations; a 2x2 design needs all four.",
            treatname, k[1] - 1L, postname, k[2] - 1L)
  }
  X <- cbind(tr, po, tr * po, p$X)
  colnames(X)[1:3] <- c(treatname, postname, "ATT")
  est <- dd_estimate(p$y, X, NULL, p$w, p$cluster, dd_spec_vcov(sp, vtype), "ATT", survey = if (is.null(design)) NULL else list(design = design, rows = p$rows),
                     treated = tr * po == 1, control = tr == 0,
                     conley = if (!is.null(cz)) dd_conley_rows(cz, data, p$rows))
  info <- dd_reg_info(est, "did_2x2", "2x2 difference-in-differences (did_2x2)", yname, alpha,
                      "ATT", p$cluster, NULL)
  new_dd_fit("did_2x2", est$tab, est$reg$coef, est$vc$V, info, call)
}
