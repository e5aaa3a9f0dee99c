# Peer rules: where an estimator can reproduce a peer's release exactly,
# including what diffdiff deliberately does differently, the choice is the
# argument `rules` ("default": diffdiff's own rules). One table names every
# rule; each rule is a function returning the flags the estimator's engine
# reads; dd_rules() checks the argument and returns them. The fit records
# the rule (`fit$rules`), and print() / summary() show it when it is not
# "default". (Before issue 35 these were the options diffdiff.contdid_compat,
# diffdiff.dcdh_controls and diffdiff.staggered_compat.)

#' Peer rules: reproduce a peer's release number for number
#'
#' Where diffdiff deliberately differs from a peer (a fault it corrects, a
#' newer release's rule, its own random draws), the estimator's argument
#' `rules` can switch to the peer's rules, so that its numbers equal the
#' peer's to rounding. `rules = "default"` (the default) is diffdiff's own
#' rules, documented on each estimator's help page. The fit records the rule
#' in `fit$rules`; `print()` and `summary()` show a line "Peer rules: ..."
#' when it is not `"default"`.
#'
#' @section The rules:
#' \tabular{lll}{
#'   **estimator** \tab **rules** \tab **what the rule changes** \cr
#'   [did_dose()] \tab `"contdid-0.1.1"` \tab contdid 0.1.1's conventions:
#'     the curves evaluated in a basis whose boundary knots are the range of
#'     `dvals`, ACRT^o's influence function scaled by the cell size, the
#'     comparison units' sign in ATT(d)'s influence function, the cohort
#'     shares only in ATT^o's influence function; knots and grid from the
#'     first period's positive doses; with `dose_est_method = "cck"`, the
#'     curves at the observed doses, no comparison-mean variance, a 95%
#'     Lepski quantile and contdid's sd(IF) / sqrt(n1) for ACRT^o \cr
#'   [did_dcdh()] \tab `"DIDmultiplegtDYN-2.2.0"` \tab with `controls`:
#'     DIDmultiplegtDYN 2.2.0's variance of the controls' coefficients (their
#'     influence normalised by every baseline treatment's control cells, the
#'     not-yet-switched outcome changes fitted without the weights) instead
#'     of 2.4.0's; estimates unchanged \cr
#'   [did_rs()] \tab `"staggered-1.2.2"` \tab with `nperm > 0`: staggered
#'     1.2.2's Fisher permutations (permutation s drawn after `set.seed(s)`
#'     from the cohort labels in the caller's row order; the caller's
#'     random-number state is restored) instead of draws from the caller's
#'     stream; estimates and standard errors unchanged
#' }
#'
#' The options `diffdiff.contdid_compat`, `diffdiff.dcdh_controls` and
#' `diffdiff.staggered_compat`, which did this before, are gone: if one is
#' set, the estimator it belonged to warns once per session and ignores it.
#'
#' @examples
#' d <- read.csv(system.file("extdata", "reversible_panel.csv", package = "diffdiff"))
#' f <- did_dcdh(d, "y", "id", "t", "D_rev", effects = 2, controls = "x",
#'               rules = "DIDmultiplegtDYN-2.2.0")
#' f$rules
#' f
#' @name dd_rules
NULL

# The rules, one row each: the estimator, the rule's name (the value of
# `rules`), the one-line description print() shows, and the name of the rule
# function returning the flags (every estimator's "default" among them).
dd_rules_table <- function()
  data.frame(
    estimator = c("did_dose", "did_dose", "did_dcdh", "did_dcdh", "did_rs", "did_rs"),
    rule = c("default", "contdid-0.1.1", "default", "DIDmultiplegtDYN-2.2.0", "default", "staggered-1.2.2"),
    description = c("diffdiff's corrections of contdid 0.1.1",
                    "contdid 0.1.1's basis, grid and influence functions, faults included",
                    "DIDmultiplegtDYN 2.4.0's variance with controls",
                    "DIDmultiplegtDYN 2.2.0's variance with controls",
                    "Fisher permutations from the caller's random-number stream",
                    "staggered 1.2.2's Fisher permutations, permutation s after set.seed(s)"),
    fun = c("dd_rule_dose_default", "dd_rule_contdid_0.1.1", "dd_rule_dcdh_default", "dd_rule_dcdh_2.2.0",
            "dd_rule_rs_default", "dd_rule_staggered_1.2.2"),
    stringsAsFactors = FALSE)

# The rule functions: the flags each estimator's engine reads
dd_rule_dose_default <- function() list(contdid_0.1.1 = FALSE)
dd_rule_contdid_0.1.1 <- function() list(contdid_0.1.1 = TRUE)
dd_rule_dcdh_default <- function() list(dcdh_controls_2.2.0 = FALSE)
dd_rule_dcdh_2.2.0 <- function() list(dcdh_controls_2.2.0 = TRUE)
dd_rule_rs_default <- function() list(staggered_seeds = FALSE)
dd_rule_staggered_1.2.2 <- function() list(staggered_seeds = TRUE)

# The options that chose these rules before issue 35, by estimator, and the
# rule each selected
dd_rules_legacy <- list(
  did_dose = list(option = "diffdiff.contdid_compat", rule = "contdid-0.1.1"),
  did_dcdh = list(option = "diffdiff.dcdh_controls", rule = "DIDmultiplegtDYN-2.2.0"),
  did_rs = list(option = "diffdiff.staggered_compat", rule = "staggered-1.2.2"))
dd_rules_warned <- new.env(parent = emptyenv())

# The resolver: `rules` checked against the estimator's rules (an error
# names the argument, the value and the allowed values), and the rule's
# flags with its name (`rule`). An old option still set warns once per
# session that it is gone and is ignored.
dd_rules <- function(rules, estimator) {
  tab <- dd_rules_table()
  tab <- tab[tab$estimator == estimator, , drop = FALSE]
  if (!nrow(tab)) stop(sprintf("internal error: no peer rules for %s; please report", estimator), call. = FALSE)
  old <- dd_rules_legacy[[estimator]]
  if (!is.null(old) && !is.null(getOption(old$option)) && is.null(dd_rules_warned[[old$option]])) {
    assign(old$option, TRUE, envir = dd_rules_warned)
    warning(sprintf("the option `%s` is gone and is ignored; pass %s(rules = \"%s\") instead (see ?dd_rules).",
                    old$option, estimator, old$rule), call. = FALSE)
  }
  rules <- dd_match_arg(rules, tab$rule, "rules")
  c(list(rule = rules), get(tab$fun[tab$rule == rules], mode = "function", envir = environment(dd_rules))())
}

# The line print() and summary() show for a fit with rules other than
# "default" (nothing otherwise)
dd_rules_line <- function(x) {
  if (is.null(x$rules) || identical(x$rules, "default")) return(invisible(NULL))
  tab <- dd_rules_table()
  desc <- tab$description[tab$estimator == x$estimator & tab$rule == x$rules]
  cat(sprintf("Peer rules: %s%s\n", x$rules, if (length(desc)) sprintf(" (%s)", desc) else ""))
}
