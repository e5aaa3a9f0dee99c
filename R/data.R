#' Data sets shipped with diffdiff
#'
#' Files in `system.file("extdata", package = "diffdiff")`:
#' \describe{
#'   \item{`sim_panel.csv`}{A simulated panel of 300 units over 2001-2010
#'     with staggered adoption (`id`, `year`, `state`, `first_treat`,
#'     `treat`, `y`, covariates `x1`, `x2`, weight `w`), made by
#'     `tools/make-data.R` in the source repository.}
#'   \item{`sim_county.csv`}{**Simulated** data with the layout of the
#'     did package's `mpdta` (county teen employment and minimum wages):
#'     500 counties (`countyreal`) over 2003-2007 (`year`), log teen
#'     employment `lemp`, log population `lpop` (constant within county),
#'     first treated year `first.treat` (2004, 2006 or 2007 for 20, 40 and
#'     131 counties, as in `mpdta`; 0 for the 309 never treated), `treat` (1
#'     if ever treated) and the effect planted in each row, `effect_true`
#'     (-0.02 in the first treated year, 0.03 lower each year after).
#'     Written by [dd_sim_county()] with its defaults under `set.seed(20030507)`
#'     (`tools/make-county-data.R` in the source repository; values rounded to
#'     six decimals). These are not the did package's data (GPL-2), nor any
#'     county's records: they only share `mpdta`'s layout and column names, so
#'     that did's tutorials run on them with [did_cs()]. Parallel trends hold
#'     given `lpop`, not without it (see [dd_sim_county()]).}
#'   \item{`california_prop99.csv`}{California's Proposition 99: annual
#'     cigarette sales (`PacksPerCapita`, packs per capita) for 39 US states,
#'     1970-2000, with `treated` = 1 for California from 1989 on
#'     (`;`-separated; columns `State`, `Year`, `PacksPerCapita`, `treated`).
#'     Source: Abadie, Diamond and Hainmueller (2010), as distributed with the
#'     synthdid R package (file `data/california_prop99.csv`, synthdid 0.0.9,
#'     https://github.com/synth-inference/synthdid), unchanged.}
#'   \item{`hrs_edid.csv`}{Out-of-pocket medical spending (`outcome`, 2005
#'     dollars) of 656 individuals in Health and Retirement Study waves 7-10
#'     (`unit`, `time`), by the wave of their first hospitalisation
#'     (`first_treat` 8, 9, 10; `inf`: not hospitalised in the sample): the
#'     sample of Chen, Sant'Anna and Xie (2025, Table 6), built from the
#'     Dobkin, Finkelstein, Kluender and Notowidigdo (2018) replication kit as
#'     in Sun and Abraham (2021) (ever hospitalised at ages 50-59, first
#'     hospitalisation from wave 8 on, wave-11 hospitalisations as never
#'     treated). As distributed with the tests of the Python library diff-diff
#'     3.3.2 (MIT licence), unchanged; the paper's sample had 652
#'     individuals.}
#'   \item{`castle.csv`}{Castle-doctrine (stand-your-ground) laws and
#'     homicides: 50 US states (`state`, `sid`), 2000-2010 (`year`), the
#'     year the law took effect (`effyear`; 0: never in the period), `post`
#'     (1 from then on), `cdl` (share of the year the law was in effect),
#'     homicides per 100,000 (`homicide`, log `l_homicide`), log population,
#'     police and income (`l_pop`, `l_police`, `l_income`), `unemployrt`,
#'     `poverty` and the population weight `popwt`. Source: Cheng and
#'     Hoekstra (2013), as distributed with the bacondecomp R package (data
#'     set `castle`, bacondecomp 0.1.1, MIT licence), a subset of its
#'     columns, never-treated `effyear` coded 0.}
#'   \item{`divorce.csv`}{Unilateral divorce laws and suicide: 51 US
#'     states (`st`, `state`), 1964-1996 (`year`), for women and men
#'     (`sex`): suicides (`suicides`), the population of that sex
#'     (`population`), suicides per million (`suicide_rate`), the year the
#'     state adopted unilateral divorce (`divlaw_year`; 2000: not by 1996;
#'     before 1964: already in force) and `post` (1 from then on). The panel
#'     of Stevenson and Wolfers (2006) behind Goodman-Bacon's (2021)
#'     decomposition example, as distributed with the bacondecomp R package
#'     (data set `divorce`, bacondecomp 0.1.1, MIT licence): a subset of its
#'     columns, `sex` labelled (its 2: women), the rate scaled to per million
#'     (its `suiciderate_jag` is per person), and `divlaw_year` (its
#'     `lfdivlaw`, constant within a state) filled in for 1991-1996, where
#'     that copy leaves it missing.}
#'   \item{`diffdiff_cs_castle.csv`}{Numbers from the Python library
#'     diff-diff 3.3.2 (commit 33afb6a, pure-Python backend): its
#'     `CallawaySantAnna` on `castle.csv` (outcome `l_homicide`, unit `sid`,
#'     period `year`, first treated `effyear`; doubly robust, varying base
#'     period, no covariates) with `control_group` `never_treated` and
#'     `not_yet_treated`, analytic SEs (`nboot` 0) and 999 multiplier-bootstrap
#'     draws (seed 42): group-time effects (`term` "ATT(g,t)"), event-study
#'     effects ("event::e") and the overall ATT ("ATT"), with `estimate`,
#'     `std.error` and `source`. Written by `tools/diffdiff-py-cs-castle.py`
#'     in the source repository; used by the vignette "Cross-checking Python
#'     results".}
#'   \item{`nhanes_aca.csv`}{Survey microdata: 2,946 respondents aged 19-25
#'     (`treated` = 1: eligible for a parent's health insurance under the
#'     Affordable Care Act's dependent-coverage provision of September 2010)
#'     or 27-34 (`treated` = 0) in the National Health and Nutrition
#'     Examination Survey cycles 2007-2008 (`post` = 0) and 2015-2016
#'     (`post` = 1; `cycle`, `period`; `first_treat` 2 for the treated
#'     ages, 0 otherwise; `unit_id` a respondent number, each respondent
#'     observed once). `outcome`: covered by health insurance (0/1). Design:
#'     masked variance strata `SDMVSTRA` (31 over the two cycles), PSUs
#'     `SDMVPSU` (2 per stratum, nested), exam weights `WTMEC2YR`.
#'     Covariates: age `RIDAGEYR`, sex `RIAGENDR` (1 male, 2 female), family
#'     income to poverty ratio `INDFMPIR` (missing for some). Source: CDC /
#'     National Center for Health Statistics, NHANES (public domain), as
#'     extracted in the Python library diff-diff 3.3.2
#'     (`benchmarks/data/real/nhanes_aca_subset.csv`, MIT licence),
#'     unchanged. Analyse with `survey_design(d, weights = ~WTMEC2YR, strata
#'     = ~SDMVSTRA, ids = ~SDMVPSU, nest = TRUE)` and `did_2x2(d, "outcome",
#'     "treated", "post", survey = des)`.}
#' }
#' @references Abadie, A., Diamond, A. and Hainmueller, J. (2010). Synthetic
#'   control methods for comparative case studies: estimating the effect of
#'   California's tobacco control program. Journal of the American
#'   Statistical Association 105(490).
#'
#'   Dobkin, C., Finkelstein, A., Kluender, R. and Notowidigdo, M. J. (2018).
#'   The economic consequences of hospital admissions. American Economic
#'   Review 108(2).
#'
#'   Cheng, C. and Hoekstra, M. (2013). Does strengthening self-defense law
#'   deter crime or escalate violence? Evidence from expansions to castle
#'   doctrine. Journal of Human Resources 48(3).
#'
#'   Chen, X., Sant'Anna, P. H. C. and Xie, H. (2025). Efficient
#'   difference-in-differences and event study estimators.
#'
#'   Sommers, B. D. (2012). Number of young adults gaining insurance due to
#'   the Affordable Care Act. JAMA 307(9), 913-914.
#'
#'   Stevenson, B. and Wolfers, J. (2006). Bargaining in the shadow of the
#'   law: divorce laws and family distress. Quarterly Journal of Economics
#'   121(1), 267-288.
#'
#'   Goodman-Bacon, A. (2021). Difference-in-differences with variation in
#'   treatment timing. Journal of Econometrics 225(2), 254-277.
#' @examples
#' cty <- read.csv(system.file("extdata", "sim_county.csv", package = "diffdiff"))
#' cs <- did_cs(cty, "lemp", "countyreal", "year", "first.treat", xformla = ~lpop, nboot = 0)
#' aggregate(cs, "dynamic")
#' d <- read.csv(system.file("extdata", "california_prop99.csv", package = "diffdiff"), sep = ";")
#' str(d)
#' castle <- read.csv(system.file("extdata", "castle.csv", package = "diffdiff"))
#' did_check(castle, "l_homicide", "sid", "year", gname = "effyear")
#' nh <- read.csv(system.file("extdata", "nhanes_aca.csv", package = "diffdiff"))
#' des <- survey_design(nh, weights = ~WTMEC2YR, strata = ~SDMVSTRA, ids = ~SDMVPSU, nest = TRUE)
#' did_2x2(nh, "outcome", "treated", "post", survey = des)
#' dv <- read.csv(system.file("extdata", "divorce.csv", package = "diffdiff"))
#' women <- dv[dv$sex == "female", ]
#' bacon_decomp(women, "suicide_rate", "st", "year", dname = "post")
#' @name diffdiff_data
NULL
