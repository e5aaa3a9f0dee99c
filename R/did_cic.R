#' Changes-in-changes and quantile difference-in-differences
#'
#' Athey and Imbens (2006) changes-in-changes (CiC) and quantile DiD
#' (QDiD), for every cohort and post-treatment period of a staggered design:
#' the average effect on the treated, ATT(g,t), the quantile treatment
#' effects on the treated, QTT(g,t; p), and the counterfactual distribution
#' of the treated. On one cohort and two periods the estimates are those of
#' qte's `CiC()` and `QDiD()` (qte 2.0.0).
#'
#' **Cells.** For cohort \eqn{g} (first treated period) and each period
#' \eqn{t \ge g}, the cell compares cohort \eqn{g} with the control group
#' between the base period \eqn{b}, the last period before \eqn{g}, and
#' \eqn{t}: the never-treated units (`control_group = "nevertreated"`) or
#' the never-treated and those first treated after \eqn{t}
#' (`"notyettreated"`). With `panel = TRUE` a cell uses the units of both
#' groups observed in both \eqn{b} and \eqn{t} (qte forces the two-period
#' panel to balance the same way); with `panel = FALSE` (repeated cross
#' sections) the rows of each group in each period. Write \eqn{Y_{00},
#' Y_{01}} for the control group's outcomes in \eqn{b} and \eqn{t} and
#' \eqn{Y_{10}, Y_{11}} for the cohort's; \eqn{F} an empirical distribution
#' function (\eqn{F(y)} the share of values \eqn{\le y}) and \eqn{Q^{(k)}}
#' R's empirical quantile of `type = k` ([stats::quantile()]).
#'
#' **CiC** (`method = "cic"`): each treated base-period value \eqn{y}
#' has the counterfactual \eqn{Q^{(1)}_{01}(F_{00}(y))} (its rank among the
#' controls in \eqn{b}, carried to the controls' distribution in \eqn{t});
#' ATT(g,t) is the mean of \eqn{Y_{11}} minus the mean of the
#' counterfactuals, QTT(g,t; p) is \eqn{Q^{(1)}_{11}(p)} minus the type-1
#' quantile of the counterfactuals. CiC is invariant to a strictly
#' increasing transformation of the outcome (the counterfactual values
#' transform with it, and so do the quantiles). It needs the controls'
#' base-period outcome to vary: a cell where it takes a single value is an
#' error. With a discrete outcome the estimate is qte's (Athey and Imbens'
#' point-identified formula applied as if the outcome were continuous; their
#' bounds for discrete outcomes are not computed).
#'
#' **QDiD** (`method = "qdid"`): QTT(g,t; p) \eqn{= Q^{(7)}_{11}(p) -
#' [Q^{(7)}_{10}(p) + Q^{(7)}_{01}(p) - Q^{(7)}_{00}(p)]}; ATT(g,t) is, as in
#' qte, the mean of \eqn{Y_{11}} minus the mean over the treated
#' base-period values \eqn{y} of \eqn{y + Q^{(7)}_{01}(r) - Q^{(7)}_{00}(r)},
#' \eqn{r = F_{10}(y)}; those values are the stored counterfactual
#' distribution (qte stores type-1 quantiles there but uses type 7 for the
#' ATT; here both use type 7, so the stored values average to the ATT).
#'
#' **Overall effect.** The row `ATT` averages the ATT(g,t) of all cells,
#' each weighted by the size of its cohort (units with `panel = TRUE`, rows
#' with `panel = FALSE`), as did's "simple" aggregate; it is a linear
#' combination of the cells (`dd_lincom()` of the shared aggregation layer),
#' so its bootstrap variance comes from the cells' joint draws.
#'
#' **Inference** (`nboot > 0`): the nonparametric bootstrap, as qte:
#' standard errors are the standard deviations of the estimates over the
#' draws, their covariance the draws' covariance, and the intervals
#' normal (estimate \eqn{\pm z_{1-\alpha/2}} SE). Each draw resamples, with
#' replacement, the units (`panel = TRUE`) within their cohort (never-treated
#' units being one stratum), or the rows (`panel = FALSE`) within their
#' cohort and period, keeping every cell's group sizes; with `cluster`, the
#' clusters (all their units or rows at once, without strata). qte
#' resamples all units (or all rows) jointly, so that its group sizes vary
#' across draws; both resamplings estimate the same variance. A draw in
#' which a cell has an empty group (possible only with `cluster`) is left
#' out, with a note. The draws come from a seed taken from R's generator,
#' one counter-based stream per draw: the numbers are the same under
#' `set.seed()` whatever the number of threads.
#'
#' **Covariates** (`xformla`): qte's quantile-regression versions. In each
#' cell, linear quantile regressions of the outcome on the covariates (with
#' an intercept) are fitted at \eqn{\tau = 0.01, 0.02, \dots, 0.99}
#' (`fit$taus`) to the control group in \eqn{b} and in \eqn{t} and, for
#' QDiD, to the cohort in \eqn{b}; each sample with its own period's
#' covariate values (in a panel, the cohort's counterfactual uses its
#' covariates in the base period), as qte does. The regressions are solved
#' in C (src/rq.c) at an exact vertex (\eqn{p} observations fitted
#' exactly), the solution quantreg's `rq(method = "br")` returns when it is
#' unique (it is, with continuous outcomes and covariates); where the
#' minimiser is not unique (quantreg warns "Solution may be nonunique"),
#' another optimal vertex may be returned. At the covariates \eqn{x} of a
#' cohort member with base-period outcome \eqn{y}, the fitted quantiles
#' \eqn{q_k = x'\hat\beta(\tau_k)} give the step functions of quantreg's
#' `predict(..., stepfun = TRUE)` that qte evaluates (no rearrangement):
#' \eqn{\hat Q(r) = q_k}, \eqn{k} the last \eqn{\tau_k \le r} (\eqn{q_1} if
#' none), and \eqn{\hat F(y) = \tau_{k-1}} (\eqn{\tau_1} if \eqn{k = 1} or no
#' \eqn{q_k \le y}), \eqn{k} the index of the largest \eqn{q_k \le y} (the
#' last among equal ones; the shift by one grid point is quantreg's). CiC's
#' counterfactual is \eqn{\hat Q_{01}(\hat F_{00}(y))}, QDiD's \eqn{y + \hat
#' Q_{01}(r) - \hat Q_{00}(r)} with \eqn{r = \hat F_{10}(y)}; ATT(g,t) is the
#' mean of \eqn{Y_{11}} minus the counterfactuals' mean, QTT(g,t; p) the
#' quantile of \eqn{Y_{11}} (type 1 for CiC, type 7 for QDiD) minus the
#' counterfactuals' type-1 quantile, as qte. One deliberate difference: in
#' \eqn{\hat F}, fitted quantiles within \eqn{10^{-10}(1 + |y|)} of one
#' another or of \eqn{y} are taken as equal. They are equal in exact
#' arithmetic (QDiD's fit to the cohort passes through \eqn{p} of its own
#' observations at every \eqn{\tau}; with discrete covariates the fits of
#' different \eqn{\tau} coincide at some covariate values), and qte leaves
#' the comparison to quantreg's rounding, about \eqn{10^{-12}}. CiC equals
#' qte (1e-8 on the Lalonde panel and simulated panels); QDiD equals qte's
#' algorithm with these ties made exact, and differs from qte's own numbers
#' (on qte's Lalonde example, ATT 1834.42 against qte's 2033.09). A sample
#' a cell fits must have at least as many observations as coefficients and
#' covariates of full rank (an error names the cell); a bootstrap draw in
#' which a fitted sample is rank deficient is left out, with a note. Each
#' draw refits every regression (in C, serially, each fit starting from the
#' previous level's solution).
#'
#' **Not supported.** Sampling weights.
#'
#' @param data A data frame (long: one row per unit and period, or per
#'   observation with `panel = FALSE`).
#' @param yname,idname,tname Outcome, unit and period columns.
#' @param gname The first treated period of each unit (0, `Inf` or `NA`:
#'   never treated; see "Cohort coding" in [diffdiff]: cohorts without a
#'   period before their first treated period are skipped, with a note).
#' @param xformla A one-sided formula of covariates (`~ x1 + x2`; factors,
#'   `I()` terms as in [stats::model.matrix()]) for qte's
#'   quantile-regression versions (see "Covariates"), or `NULL`.
#' @param probs The quantile levels of the QTTs: increasing, strictly
#'   between 0 and 1 (default `seq(0.05, 0.95, 0.05)`, as qte).
#' @param method `"cic"` (default) or `"qdid"`.
#' @param control_group `"nevertreated"` (default) or `"notyettreated"`.
#' @param panel `TRUE` (default): a panel; `FALSE`: repeated cross-sections.
#' @param cluster A column whose clusters the bootstrap resamples (constant
#'   within units when `panel = TRUE`), or `NULL`.
#' @param alpha Level of the intervals is `1 - alpha`.
#' @param nboot Bootstrap draws (default 100, as qte's `iters`); 0: no
#'   inference (standard errors `NA`).
#' @param ... qte's and did's spellings `alp` (for `alpha`) and `biters`
#'   (for `nboot`); anything else is an error.
#' @return A `did_cic` fit (a `dd_fit`) with rows `ATT` (the overall
#'   effect), `ATT(g,t)` per cell and `QTT::g,t,p` per cell and quantile
#'   level (columns `group`, `time`, `event` = \eqn{t - g}, `quantile`), the
#'   bootstrap covariance of all rows in `vcov`, and `cells` (one row per
#'   cell: cohort, base period, period, treated and control observations),
#'   `distributions` (per cell: the sorted outcomes of the treated in
#'   \eqn{t}, `treated`, and their sorted counterfactual values,
#'   `counterfactual`; the empirical distribution of each is [stats::ecdf()]
#'   of it), `method`, `probs`, `control_group`, `panel`, `cluster`,
#'   `nboot`, and with covariates `xformla`, `covariates` (the columns of
#'   the regressions besides the intercept) and `taus`.
#' @references Athey, S. and Imbens, G. W. (2006). Identification and
#'   inference in nonlinear difference-in-differences models.
#'   Econometrica 74(2), 431-497.
#'
#'   Callaway, B. (2024). qte: Quantile Treatment Effects. R package
#'   version 2.0.0.
#' @examples
#' d <- read.csv(system.file("extdata", "sim_panel.csv", package = "diffdiff"))
#' set.seed(1)
#' fit <- did_cic(d, "y", "id", "year", "first_treat", probs = c(0.25, 0.5, 0.75), nboot = 50)
#' fit
#' # the treated's outcome and counterfactual distributions of the first cell
#' cell <- fit$distributions[[1]]
#' plot(stats::ecdf(cell$treated), main = sprintf("cohort %s, period %s", cell$group, cell$time))
#' lines(stats::ecdf(cell$counterfactual), col = "red")
#' # quantile DiD
#' did_cic(d, "y", "id", "year", "first_treat", method = "qdid", probs = 0.5, nboot = 0)
#' # with a covariate: quantile regressions in every cell
#' d$x <- sin(d$id)
#' did_cic(d, "y", "id", "year", "first_treat", xformla = ~ x, probs = 0.5, nboot = 0)
#' @export
did_cic <- function(data, yname, idname, tname, gname, xformla = NULL, probs = seq(0.05, 0.95, 0.05),
                    method = c("cic", "qdid"), control_group = c("nevertreated", "notyettreated"),
                    panel = TRUE, cluster = NULL, alpha = 0.05, nboot = 100, ...) {
  call <- match.call()
  dd_required(c("data", "yname", "idname", "tname", "gname"))
  dd_check_data(data)
  sp <- dd_spec(alpha, nboot, dots = list(...), aliases = c("alp", "biters"), fun = "did_cic")
  method <- dd_match_arg(method[1], c("cic", "qdid"), "method")
  control_group <- dd_match_vocab(control_group[1], c("nevertreated", "notyettreated"), "control_group")
  panel <- dd_check_flag(panel, "panel")
  probs <- dd_cic_check_probs(probs)
  xformla <- dd_check_xformla(xformla, data)
  if (!is.null(cluster)) dd_check_string(cluster, "cluster")
  pan <- dd_panel(data, yname, idname, tname, c(gname = gname), xformla = xformla, cluster = cluster,
                  unique_rows = panel, na_ok = "yname", sorted = TRUE)
  miss <- which(is.na(pan$y))
  if (length(miss))
    dd_stop("`yname` = \"%s\" has %d missing value(s) (first in row %d); did_cic() does not drop them silently: remove those rows (a unit then drops out of the cells whose periods it misses).",
            yname, length(miss), pan$rows[miss[1]], .code = "MISSING_OUTCOME")
  X <- if (is.null(xformla) || is.null(pan$X) || !ncol(pan$X)) NULL else cbind(`(Intercept)` = 1, as.matrix(pan$X))
  if (!is.null(xformla) && is.null(X))
    dd_stop("`xformla` = %s has no covariate terms; drop `xformla` (or use ~ x1 + x2).", dd_show(xformla))
  L <- dd_cic_layout(pan, panel, gname, tname, control_group, cluster, method, X)
  pk <- dd_cic_pack(L$cells)
  opts <- c(if (method == "cic") 1L else 2L, L$nunits)
  if (is.null(X)) {
    pt <- .Call(C_cic, pk$y, pk$u, pk$off, probs, opts, L$smem, L$soff, 0L, NULL, 0L)
    kern <- function(B, seed, first) .Call(C_cic, pk$y, pk$u, pk$off, probs, opts, L$smem, L$soff, B, seed, first)
  } else {
    pt <- .Call(C_cic_rq, pk$y, pk$u, pk$X, pk$off, probs, dd_cic_taus, opts, L$smem, L$soff, 0L, NULL, 0L)
    bad <- which(pt$status != 0L)
    if (length(bad))
      dd_stop("cell (cohort %s, period %s): a quantile regression failed (status %d); please report.",
              format(L$cells[[bad[1]]]$g), format(L$cells[[bad[1]]]$t), pt$status[bad[1]], .code = "INTERNAL")
    kern <- function(B, seed, first)
      .Call(C_cic_rq, pk$y, pk$u, pk$X, pk$off, probs, dd_cic_taus, opts, L$smem, L$soff, B, seed, first)
  }
  draws <- NULL
  if (sp$nboot > 0L) draws <- dd_boot_batches(sp$nboot, "changes-in-changes bootstrap", kern)
  dd_cic_result(L, pk, pt, draws, probs, method, control_group, panel, cluster, sp, call, yname, tname, xformla,
                if (is.null(X)) NULL else colnames(X)[-1L])
}

# the quantile levels of the quantile regressions with covariates, as qte's
dd_cic_taus <- seq(0.01, 0.99, 0.01)

# probs: numeric, no NA, strictly inside (0, 1), strictly increasing
dd_cic_check_probs <- function(probs) {
  if (!is.numeric(probs) || !length(probs) || anyNA(probs))
    dd_stop("`probs` must be a non-empty numeric vector without missing values; got %s.", dd_show(probs))
  bad <- which(!(probs > 0 & probs < 1))
  if (length(bad))
    dd_stop("`probs` must lie strictly between 0 and 1; got %s (element %d).", format(probs[bad[1]]), bad[1])
  if (length(probs) > 1L && any(diff(probs) <= 0))
    dd_stop("`probs` must be strictly increasing; got %s.", dd_show(probs, max = 6L))
  as.double(probs)
}

# The cells and the resampling layout. Panel: units (sorted identifiers) x
# sorted periods; each cell takes the units of its two groups observed in
# both of its periods; the resampling units are the units (strata: their
# cohorts) or the clusters. Repeated cross-sections: the rows, in an order
# that does not depend on the data's (cohort, period, identifier, outcome);
# strata: cohort x period; or the clusters.
dd_cic_layout <- function(pan, panel, gname, tname, control_group, cluster, method, X = NULL) {
  tlev <- sort(unique(pan$tt))
  notes <- pan$notes
  if (panel) {
    first <- dd_first_rows(pan$idc)
    first <- first[order(pan$idc[first])]
    Y <- dd_panel_wide(pan, pan$y)
    # covariates: each unit's values in each period (units x periods, per column)
    XW <- if (is.null(X)) NULL else lapply(seq_len(ncol(X)), function(k) dd_panel_wide(pan, X[, k]))
    G <- as.double(pan$g[first])
    ids <- pan$id[first]
    rs <- seq_along(first) - 1L                      # resampling unit of each unit
  } else {
    o <- order(pan$g, pan$tt, pan$id, pan$y, method = "radix")
    G <- as.double(pan$g[o]); tt <- pan$tt[o]; yy <- pan$y[o]
    XR <- if (is.null(X)) NULL else X[o, , drop = FALSE]
    rs <- seq_along(o) - 1L
  }
  cl <- NULL
  if (!is.null(cluster)) {
    cv <- pan$cluster[[1]]
    if (panel) {
      dd_check_constant_within(cv, pan$id, "cluster", cluster, code = pan$idc)
      cv <- cv[first]
    } else cv <- cv[o]
    cl <- dd_sorted_codes(cv)
    dd_check_nclusters(attr(cl, "nlev"), cluster)
    rs <- as.integer(cl)
  }
  # cohorts: those with a period before their first treated period
  glist <- sort(unique(G[G > 0]))
  early <- glist[glist <= tlev[1]]
  if (length(early))
    notes <- c(notes, sprintf("cohort(s) %s skipped: no period of `tname` before the first treated period (no base period).",
                              paste(early, collapse = ", ")))
  glist <- setdiff(glist, early)
  if (!length(glist))
    dd_stop("no cohort of `gname` = \"%s\" has a period before its first treated period; changes-in-changes compares each cohort's base period (the last period before treatment) with later periods.",
            gname, .code = "NO_TREATED")
  cells <- list()
  for (g in glist) {
    b <- max(tlev[tlev < g])
    for (t in tlev[tlev >= g]) {
      tr <- G == g
      ctrl <- if (control_group == "nevertreated") G == 0 else G == 0 | G > t
      if (panel) {
        jb <- match(b, tlev); jt <- match(t, tlev)
        ob <- !is.na(Y[, jb]) & !is.na(Y[, jt])
        i0 <- which(ctrl & ob); i1 <- which(tr & ob)
        smp <- list(s00 = list(y = Y[i0, jb], u = rs[i0]), s01 = list(y = Y[i0, jt], u = rs[i0]),
                    s10 = list(y = Y[i1, jb], u = rs[i1]), s11 = list(y = Y[i1, jt], u = rs[i1]))
        if (!is.null(X)) {
          xw <- function(i, j) matrix(vapply(XW, function(m) m[i, j], numeric(length(i))), length(i))
          smp$s00$x <- xw(i0, jb); smp$s01$x <- xw(i0, jt); smp$s10$x <- xw(i1, jb); smp$s11$x <- xw(i1, jt)
        }
        what <- "units observed in both periods"
      } else {
        r00 <- which(ctrl & tt == b); r01 <- which(ctrl & tt == t)
        r10 <- which(tr & tt == b); r11 <- which(tr & tt == t)
        smp <- list(s00 = list(y = yy[r00], u = rs[r00]), s01 = list(y = yy[r01], u = rs[r01]),
                    s10 = list(y = yy[r10], u = rs[r10]), s11 = list(y = yy[r11], u = rs[r11]))
        if (!is.null(X)) {
          smp$s00$x <- XR[r00, , drop = FALSE]; smp$s01$x <- XR[r01, , drop = FALSE]
          smp$s10$x <- XR[r10, , drop = FALSE]; smp$s11$x <- XR[r11, , drop = FALSE]
        }
        what <- "rows"
      }
      n <- vapply(smp, function(s) length(s$y), 0L)
      grp <- c(s00 = "control group", s01 = "control group", s10 = "cohort", s11 = "cohort")
      per <- c(s00 = b, s01 = t, s10 = b, s11 = t)
      if (any(n == 0L)) {
        k <- names(n)[n == 0L][1]
        dd_stop("cell (cohort %s, period %s): the %s (%s) has no %s in period %s of `tname` = \"%s\"%s.",
                format(g), format(t), grp[[k]],
                if (grp[[k]] == "cohort") sprintf("`gname` = %s", format(g))
                else if (control_group == "nevertreated") "never treated" else "never or not yet treated",
                what, format(per[[k]]), tname,
                if (panel) sprintf(" and %s", format(if (per[[k]] == b) t else b)) else "",
                .code = "EMPTY_CELL")
      }
      if (!is.null(X)) dd_cic_check_rank(smp, method, g, t, b, colnames(X))
      if (method == "cic" && is.null(X)) {
        r <- range(smp$s00$y)
        if (r[1] == r[2])
          dd_stop("cell (cohort %s, period %s): the control group's outcome in the base period %s is constant (%s for all %d); changes-in-changes maps the treated's ranks through that distribution, which is then uninformative. Use method = \"qdid\" or another comparison.",
                  format(g), format(t), format(b), format(r[1]), n[["s00"]], .code = "OUTCOME_CONSTANT")
      }
      # each sample sorted (ties by resampling unit: the order does not depend on the data's)
      smp <- lapply(smp, function(s) {
        o <- order(s$y, s$u, method = "radix")
        list(y = s$y[o], u = s$u[o], x = if (!is.null(s$x)) s$x[o, , drop = FALSE])
      })
      cells[[length(cells) + 1L]] <- list(g = g, b = b, t = t, s = smp, n = n)
    }
  }
  # strata of the resampling (members: resampling units)
  if (!is.null(cl)) {
    nunits <- attr(cl, "nlev")
    smem <- seq_len(nunits) - 1L
    soff <- c(0L, nunits)
  } else {
    key <- if (panel) G else paste(G, tt)
    o2 <- order(if (panel) G else match(key, unique(key)), rs, method = "radix")
    kk <- key[o2]
    smem <- rs[o2]
    brk <- which(c(TRUE, kk[-1] != kk[-length(kk)]))
    soff <- c(brk - 1L, length(kk))
    nunits <- length(rs)
  }
  size <- vapply(glist, function(g) sum(G == g), 0)
  list(cells = cells, glist = glist, size = size, tlev = tlev, notes = notes, nunits = as.integer(nunits),
       smem = as.integer(smem), soff = as.integer(soff), n_units = if (panel) length(first) else NULL,
       n_clusters = if (is.null(cl)) NULL else attr(cl, "nlev"), nobs = length(pan$y))
}

# the cells' samples for C_cic: values, resampling units, offsets
dd_cic_pack <- function(cells) {
  s <- unlist(lapply(cells, `[[`, "s"), recursive = FALSE)
  n <- vapply(s, function(x) length(x$y), 0L)
  list(y = as.double(unlist(lapply(s, `[[`, "y"), use.names = FALSE)),
       u = as.integer(unlist(lapply(s, `[[`, "u"), use.names = FALSE)),
       X = if (!is.null(s[[1]]$x)) dd_double(do.call(rbind, lapply(s, `[[`, "x"))),
       off = as.integer(c(0L, cumsum(n))))
}

# the samples a cell's quantile regressions are fitted to (00 and 01; 10
# too for QDiD) must have at least as many observations as coefficients and
# covariates of full column rank
dd_cic_check_rank <- function(smp, method, g, t, b, xnames) {
  fit <- if (method == "cic") c("s00", "s01") else c("s00", "s01", "s10")
  what <- c(s00 = "control group in the base period", s01 = "control group in period",
            s10 = "cohort in the base period")
  for (k in fit) {
    x <- smp[[k]]$x
    per <- if (k == "s01") t else b
    lab <- sprintf("the %s %s", what[[k]], format(per))
    if (nrow(x) < ncol(x))
      dd_stop("cell (cohort %s, period %s): %s has %d observation(s), fewer than the %d coefficients of the quantile regressions on `xformla` (intercept and %s).",
              format(g), format(t), lab, nrow(x), ncol(x), paste(xnames[-1L], collapse = ", "), .code = "CELL_TOO_SMALL")
    q <- qr(x, tol = 1e-9)
    if (q$rank < ncol(x)) {
      al <- xnames[q$pivot[(q$rank + 1L):ncol(x)]]
      dd_stop("cell (cohort %s, period %s): the covariates of `xformla` are collinear in %s (%s: rank %d of %d); the quantile regressions need full rank: drop %s.",
              format(g), format(t), lab, paste(al, collapse = ", "), q$rank, ncol(x), dd_show(al), .code = "COLLINEAR")
    }
  }
}

dd_cic_result <- function(L, pk, pt, draws, probs, method, control_group, panel, cluster, sp, call, yname, tname,
                          xformla = NULL, covariates = NULL) {
  cells <- L$cells
  nc <- length(cells); np <- length(probs); K <- 1L + np
  gg <- vapply(cells, `[[`, 0, "g"); tt <- vapply(cells, `[[`, 0, "t")
  cterm <- sprintf("ATT(%s,%s)", gg, tt)
  pfmt <- format(probs, trim = TRUE, drop0trailing = TRUE)
  terms_c <- as.vector(rbind(cterm, matrix(sprintf("QTT::%s,%s,%s", rep(gg, each = np), rep(tt, each = np),
                                                   rep(pfmt, nc)), np)))
  b <- pt$est
  names(b) <- terms_c
  # the overall ATT: cells weighted by their cohort's size
  w <- L$size[match(gg, L$glist)]
  S <- rbind(0, diag(length(b)))
  S[1, (seq_len(nc) - 1L) * K + 1L] <- w / sum(w)
  terms <- c("ATT", terms_c)
  V <- NULL; notes <- L$notes; ndrop <- 0L
  if (!is.null(draws)) {
    ok <- stats::complete.cases(draws)
    ndrop <- sum(!ok)
    if (ndrop) notes <- c(notes, sprintf("%d of %d bootstrap draws left out: a cell had an empty group%s in them.",
                                         ndrop, nrow(draws),
                                         if (is.null(covariates)) "" else " or collinear covariates"))
    if (sum(ok) >= 2L) V <- stats::cov(draws[ok, , drop = FALSE])
    else notes <- c(notes, "fewer than two complete bootstrap draws: no standard errors.")
  }
  lc <- dd_lincom(b, V, S, terms)
  est <- lc$estimate
  Vt <- lc$vcov
  if (is.null(Vt)) Vt <- matrix(NA_real_, length(terms), length(terms), dimnames = list(terms, terms))
  se <- sqrt(pmax(diag(Vt), 0))
  se[is.na(diag(Vt))] <- NA_real_
  tab <- dd_coef_table(est, se, Inf, sp$alpha)
  tab$group <- c(NA, rep(gg, each = K)); tab$time <- c(NA, rep(tt, each = K))
  tab$event <- tab$time - tab$group
  tab$quantile <- c(NA, rep(c(NA, probs), nc))
  # the counterfactual distributions (sorted), per cell
  n10 <- vapply(cells, function(x) x$n[["s10"]], 0L)
  cend <- cumsum(n10)
  dist <- lapply(seq_len(nc), function(k) list(group = gg[k], time = tt[k], base = cells[[k]]$b,
                                               treated = cells[[k]]$s$s11$y,
                                               counterfactual = sort(pt$cf[(cend[k] - n10[k]) + seq_len(n10[k])])))
  ctab <- data.frame(group = gg, base = vapply(cells, `[[`, 0, "b"), time = tt, event = tt - gg,
                     n_treated = vapply(cells, function(x) x$n[["s11"]], 0L),
                     n_control = vapply(cells, function(x) x$n[["s01"]], 0L),
                     n_treated_base = n10, n_control_base = vapply(cells, function(x) x$n[["s00"]], 0L))
  how <- if (is.null(cluster)) sprintf("resampling %s within %s", if (panel) "units" else "rows",
                                       if (panel) "cohorts" else "cohort x period")
         else sprintf("resampling clusters of %s", cluster)
  label <- if (sp$nboot > 0L) sprintf("nonparametric bootstrap (%d draws, %s)", sp$nboot, how) else "none (nboot = 0)"
  title <- sprintf("%s (did_cic, %s controls)", if (method == "cic") "Changes-in-changes" else "Quantile DiD",
                   if (control_group == "nevertreated") "never-treated" else "not-yet-treated")
  info <- dd_info("did_cic", title, yname, L$nobs, if (sp$nboot > 0L) "bootstrap" else "none", label, Inf, sp$alpha,
                  c("ATT", cterm), n_units = L$n_units, n_periods = length(L$tlev), n_clusters = L$n_clusters,
                  notes = notes)
  new_dd_fit("did_cic", tab, stats::setNames(tab$estimate, tab$term), Vt, info, call,
             list(method = method, probs = probs, control_group = control_group, panel = panel, cells = ctab,
                  distributions = dist, cluster = cluster, nboot = sp$nboot, tname = tname, xformla = xformla,
                  covariates = covariates, taus = if (!is.null(covariates)) dd_cic_taus))
}
