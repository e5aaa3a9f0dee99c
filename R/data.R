#' Data sets shipped with diffdiff
#'
#' Files in `system.file("extdata", package = "diffdiff")`:
#' \describe{
#'   \item{`sim_panel.csv`}{A simulated panel of 300 units over 2001-2010
#'     with staggered adoption (`id`, `year`, `state`, `first_treat`,
#'     `treat`, `y`, covariates `x1`, `x2`, weight `w`), made by
#'     `tools/make-data.R` in the source repository.}
#'   \item{`california_prop99.csv`}{California's Proposition 99: annual
#'     cigarette sales (`PacksPerCapita`, packs per capita) for 39 US states,
#'     1970-2000, with `treated` = 1 for California from 1989 on
#'     (`;`-separated; columns `State`, `Year`, `PacksPerCapita`, `treated`).
#'     Source: Abadie, Diamond and Hainmueller (2010), as distributed with the
#'     synthdid R package (file `data/california_prop99.csv`, synthdid 0.0.9,
#'     https://github.com/synth-inference/synthdid), unchanged.}
#' }
#' @references Abadie, A., Diamond, A. and Hainmueller, J. (2010). Synthetic
#'   control methods for comparative case studies: estimating the effect of
#'   California's tobacco control program. Journal of the American
#'   Statistical Association 105(490).
#' @examples
#' d <- read.csv(system.file("extdata", "california_prop99.csv", package = "diffdiff"), sep = ";")
#' str(d)
#' @name diffdiff_data
NULL
