#' diffdiff: Difference-in-Differences Estimation with a C Backend
#'
#' Difference-in-differences estimators for two-period, static, event-study
#' and staggered-adoption designs, with their inference, diagnostics and
#' survey support; the numerics run in C with R's LAPACK/BLAS and OpenMP, and
#' each estimator is checked against the R package that implements it, to
#' the tolerances stated in its tests.
#'
#' \describe{
#'   \item{Regression estimators}{[did_2x2()] (canonical 2x2), [did_twfe()]
#'     (static two-way fixed effects) and [did_event()] (dynamic event study),
#'     as fixest's `feols()`, with iid, heteroskedasticity-robust and one- or
#'     two-way clustered variances ([dd_vcov_types]) and the wild cluster
#'     bootstrap.}
#'   \item{Staggered adoption}{[did_cs()] (Callaway and Sant'Anna, as did's
#'     `att_gt()`; aggregations by its [aggregate()][aggregate.did_cs()]
#'     method, as `aggte()`), [did_sa()] (Sun and Abraham, as fixest's
#'     `sunab()`), [did_bjs()] (Borusyak, Jaravel and Spiess imputation, as
#'     didimputation), [did_gardner()] (two-stage DiD, as did2s),
#'     [did_stacked()] (stacked DiD with corrective weights), [did_etwfe()]
#'     (Wooldridge's extended two-way fixed effects, as etwfe), [did_edid()]
#'     (the efficient estimator of Chen, Sant'Anna and Xie), [did_rs()] (Roth
#'     and Sant'Anna's efficient estimator under random timing, as staggered),
#'     [did_ddd()] (staggered triple differences, as triplediff),
#'     [did_lpdid()] (local-projections DiD of Dube, Girardi, Jorda and
#'     Taylor, as the authors' fixest recipe and Stata `lpdid`; also for
#'     treatments that switch off), [did_lwdid()] (Lee and Wooldridge's
#'     rolling demeaning or detrending, as the authors' Stata `lwdid`),
#'     [did_spillover()] (Butts's DiD with spatial spillovers: the direct
#'     effect and the effects on untreated units by distance ring, Gardner's
#'     two stages on the far-away controls, as did2s) and
#'     [did_dml()] (double/debiased machine-learning DiD: did_cs's cells with
#'     cross-fitted nuisances; omitted-variable-bias bounds by
#'     [ovb_sensitivity()]), [did_bc()] (DiD with a bad control, a covariate
#'     that reacts to the treatment: imputation and doubly robust estimators,
#'     as badcontrols' `didbc()`),
#'     [did_cic()] (Athey and Imbens' changes-in-changes and quantile DiD:
#'     average and quantile effects per cohort and period, covariates by
#'     quantile regressions, as qte's `CiC()`
#'     and `QDiD()`).}
#'   \item{Absorbing outcomes}{[did_duration()] (Deaner and Ku's duration
#'     DiD: restrictions on the untreated hazards, common dynamics or
#'     proportional hazards, for an outcome that records reaching an
#'     absorbing state; one treated group against the never treated;
#'     simulator [dd_sim_duration()]).}
#'   \item{Synthetic and factor-model estimators}{[did_sdid()] (synthetic
#'     DiD, as synthdid; weights and diagnostics by [sdid_weights()] and
#'     [sdid_diagnostics()]), [did_synth()] (the synthetic control of Abadie,
#'     Diamond and Hainmueller, as Synth, with placebo and conformal
#'     inference) and [did_trop()] (triply robust panel estimator, as
#'     diff-diff's TROP).}
#'   \item{Continuous and reversible treatments}{[did_dose()] (continuous
#'     doses, as contdid), [did_had()] (heterogeneous adoption with
#'     local-linear boundary regressions, as DIDHAD) and [did_dcdh()] (de
#'     Chaisemartin and D'Haultfoeuille's event study for treatments that
#'     switch on and off or change in intensity, as DIDmultiplegtDYN).}
#'   \item{Regression discontinuity}{[rd_robust()] (sharp and fuzzy RD
#'     with robust bias-corrected inference, data-driven bandwidths and
#'     covariates, as rdrobust), [rd_plot()] (binned scatter plots with
#'     data-driven bins, as rdplot) and [rd_density()] (the manipulation test
#'     of Cattaneo, Jansson and Ma, as rddensity).}
#'   \item{Before estimation}{[did_check()] (what the panel supports, with
#'     a treatment-status plot), [dd_balance()], [dd_gname()],
#'     [dd_event_time()] and [dd_wide_to_long()] (data preparation).}
#'   \item{Diagnostics and robustness}{[bacon_decomp()] (Goodman-Bacon
#'     decomposition, as bacondecomp), [twfe_weights()] (de Chaisemartin and
#'     D'Haultfoeuille's weights of the TWFE coefficient, as TwoWayFEWeights),
#'     [honest_did()] (Rambachan and Roth sensitivity, as HonestDiD),
#'     [pretrends_power()] (Roth's pre-test power), [equivalence_test()]
#'     (equivalence tests of pre-trends), [placebo_test()] (placebo timing,
#'     fake groups, randomisation inference, leave-one-out) and
#'     [dd_compare()] (why two sets of numbers differ).}
#'   \item{Planning}{[dd_power()] (analytic power and minimum detectable
#'     effects), [dd_simulate_power()] and [dd_simulate_sample_size()]
#'     (simulated power), and the simulators `dd_sim_basic()`,
#'     [dd_sim_staggered()], `dd_sim_reversible()`, `dd_sim_continuous()`,
#'     `dd_sim_ddd()`, `dd_sim_factor()`, `dd_sim_survey()`, [dd_sim_synth()]
#'     (synthetic control) and [dd_sim_county()] (a county panel with the
#'     layout of did's mpdta).}
#'   \item{Survey data}{[survey_design()] describes a complex design (or pass
#'     a survey package design) to the estimators' `survey` argument;
#'     [aggregate_survey()] forms design-based cell means.}
#' }
#' Every estimator returns a `dd_fit` (see [dd_fit-methods] and
#' [dd_fit-residuals]); [dd_estimators()] lists them with their peers;
#' [plot_event_studies()] overlays event studies. The number of threads is
#' set by [dd_threads()].
#'
#' @section Cohort coding:
#' Every estimator that takes `gname`, the first treated period of each unit
#' ([did_event()], [did_cs()], [did_sa()], [did_bjs()], [did_gardner()],
#' [did_stacked()], [bacon_decomp()], [twfe_decomp()]), reads it by one rule:
#' \itemize{
#'   \item `0`, `Inf` and `NA` mean never treated -- also when 0 is a period
#'     of the data (number periods from 1, or code the never treated `Inf`);
#'   \item a value after the last period (with [did_cs()], after the last
#'     period plus `anticipation`) means not treated within the data: such
#'     units are never treated, with a message giving their number;
#'   \item a value before the first period means treated before the data
#'     start (always treated): [did_cs()] drops such units (warning, as did),
#'     [did_sa()] drops their cohort (no pre-treatment period), [did_bjs()],
#'     [did_gardner()] and [did_spillover()] drop their rows (nothing to
#'     impute from), [did_stacked()]
#'     trims their cohort, [did_event()] keeps them (event times >= 0),
#'     [did_lwdid()] skips their cohort (as any cohort without the
#'     pre-treatment periods its transformation needs: one for demean, two
#'     for detrend; a note names them), [did_cic()] skips their cohort (no
#'     base period; a note names it), [did_duration()] drops such units
#'     (warning, as [did_cs()]), [bacon_decomp()] compares them
#'     as always treated, and [twfe_decomp()] stops with an error naming the
#'     first such unit (each cohort needs a pre-treatment period; drop them);
#'   \item any other value must be a period of `tname`: a value between two
#'     periods (2006.5, or 2004 in data observed every other year) is an error
#'     naming it;
#'   \item negative values are an error (code never-treated units 0, `Inf`
#'     or `NA`).
#' }
#' `gname` must be constant within each unit.
#'
#' @section Vocabulary:
#' Every function takes its columns in one positional order, `(data, yname,
#' idname, tname, gname | dname, xformla, ...)` (did's `att_gt()` takes
#' `tname` before `idname`: name the arguments when moving a positional did
#' call; unit and period columns that look swapped are an error naming
#' them). One idea has one name, and the peers' spellings are accepted:
#' \tabular{lll}{
#'   \strong{idea} \tab \strong{diffdiff} \tab \strong{also accepted} \cr
#'   first treated period \tab `gname` \tab -- \cr
#'   0/1 treatment column \tab `dname` \tab `treatname` ([bacon_decomp()]) \cr
#'   never-treated controls \tab `control_group = "nevertreated"` ([did_cs()]), `"never_treated"` ([did_stacked()]), `"never"` ([did_sa()]) \tab any of the three spellings, in every estimator \cr
#'   not-yet-treated controls \tab `"notyettreated"` ([did_cs()]), `"not_yet_treated"` ([did_stacked()]) \tab either spelling, and `"notyet"` \cr
#'   last-treated cohort as control \tab `control_group = "last"` ([did_sa()]) \tab `"lasttreated"`, `"last_treated"`, `"lastcohort"`; `control =` (former name) \cr
#'   event window \tab `window = c(lo, hi)` ([did_event()], binned ends), `horizon` ([did_bjs()], [did_gardner()]), `kappa_pre`, `kappa_post` ([did_stacked()]) \tab -- \cr
#'   bootstrap draws \tab `nboot` (0: analytic; default 0, except [did_cs()] 1000 as did, [did_sdid()] 200 as synthdid, [did_cic()] 100 as qte) \tab `biters`, `bstrap` ([did_cs()], as did) \cr
#'   significance level \tab `alpha` \tab `alp` ([did_cs()]) \cr
#'   cluster variable \tab `cluster` \tab `clustervars` ([did_cs()]) \cr
#' }
#'
#' @section Formula interface:
#' The regression estimators whose fixest call they mirror ([did_twfe()],
#' [did_event()], [did_sa()], [did_bjs()], [did_gardner()]) also take a
#' fixest-style formula in place of `data` and `yname`, e.g.
#' `did_sa(l_homicide ~ sunab(effyear, year) | sid + year, data = castle)`:
#' the outcome on the left; after `|` the unit and the period columns, in that
#' order; on the right, covariates (`xformla`) and `sunab(g, t)`, which names
#' the cohort column `gname` (or name `gname` as an argument). For
#' [did_twfe()] without `dname`, the first right-hand-side variable is the
#' 0/1 treatment, as in `feols(y ~ treat | id + t)`. The call is translated to
#' the column-name call, which the fit records (so `update()` works on it),
#' and gives the same numbers. fixest's `i()` is not translated. The other
#' estimators stop on a formula, showing the column-name call to write.
#'
#' @section Progress:
#' Loops that can run long report progress through the progressr package
#' (in Suggests): the synthetic DiD placebo, bootstrap and jackknife
#' replications, the multiplier bootstrap (and the bootstrap-t of uniform
#' bands), the wild cluster bootstrap, replicate-weight refits and
#' [honest_did()]'s grid of `M` values. Nothing is shown unless asked for,
#' with `progressr::with_progress(...)` or `progressr::handlers(global =
#' TRUE)`. A loop reports only when its first twentieth suggests it will
#' take at least `getOption("diffdiff.progress_after", 1)` seconds, and
#' `options(diffdiff.progress = FALSE)` turns reporting off. The numbers are
#' the same bit for bit either way: the replications run in batches whose
#' random draws are fixed beforehand.
#'
#' @keywords internal
#' @useDynLib diffdiff, .registration = TRUE, .fixes = "C_"
#' @importFrom stats coef vcov confint nobs pt qt pnorm qnorm model.matrix terms aggregate residuals fitted predict
#'   setNames quantile median sd
#' @importFrom generics tidy glance
#' @import data.table
"_PACKAGE"

# ggplot2's data pronoun in the autoplot() methods (aes(.data$x))
utils::globalVariables(".data")

.onLoad <- function(libname, pkgname) {
  dd_threads(dd_default_threads())
  # DIDHAD registers print/summary methods for class did_had when it loads:
  # ours again after it (see print.did_had)
  setHook(packageEvent("DIDHAD", "onLoad"), dd_register_did_had)
  invisible(NULL)
}

#' @importFrom generics tidy
#' @export
generics::tidy

#' @importFrom generics glance
#' @export
generics::glance
