#' diffdiff: Difference-in-Differences Estimation with a C Backend
#'
#' Difference-in-differences estimators -- 2x2, two-way fixed effects, event
#' studies and, in later releases, the heterogeneity-robust staggered-adoption
#' family -- with clustered and heteroskedasticity-robust inference and the wild
#' cluster bootstrap. Numbers equal those of fixest (to the stated tolerances);
#' the numerics run in C with R's LAPACK/BLAS and OpenMP.
#'
#' Start with [did_2x2()], [did_twfe()] and [did_event()]; every estimator
#' returns a `dd_fit` (see [dd_fit-methods]). The number of threads is set by
#' [dd_threads()].
#'
#' @keywords internal
#' @useDynLib diffdiff, .registration = TRUE, .fixes = "C_"
#' @importFrom stats coef vcov confint nobs pt qt pnorm qnorm model.matrix terms aggregate
#'   setNames quantile median sd
#' @importFrom generics tidy glance
#' @import data.table
"_PACKAGE"

.onLoad <- function(libname, pkgname) {
  dd_threads(dd_default_threads())
  invisible(NULL)
}

#' @importFrom generics tidy
#' @export
generics::tidy

#' @importFrom generics glance
#' @export
generics::glance
