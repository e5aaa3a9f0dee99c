# Aggregations of ATT(g,t) (did's aggte): the element builders and
# aggregate.did_cs(). The influence-function inference they share with
# did_cs() (analytic and bootstrap standard errors, bands) is in influence.R.

# n x |glist| matrix of w * 1{G = g}: the cohort-share columns of the
# aggregations' weight-estimation terms (and of their bootstrap draws)
dd_cohort_mat <- function(w, G, glist) {
  matrix(vapply(glist, function(g) w * (G == g), numeric(length(w))), nrow = length(w))
}

# the cohorts' shares sum(w 1{G = g}) / n of a did_cs-shaped fit: from its
# units, or from its cohort counts (a database fit, R/did_cs_db.R, keeps no
# units; unweighted)
dd_cs_shares <- function(x, glist) {
  if (!is.null(x$cohort_n)) return(x$cohort_n$n[match(glist, x$cohort_n$g)] / x$n)
  G <- x$unit_group; w <- x$unit_weight
  vapply(glist, function(g) sum(w * (G == g)) / x$n, numeric(1))
}

# Aggregates are linear in the cell influence functions and in the cohort
# indicators: psi = Psi a + C c, with C[, g] = w * 1{G = g} (the weight-
# estimation term of did's wif(); its constant part cancels). This element
# builder returns the estimate and (a, c) for cells S with group-share weights.
dd_agg_elem <- function(S, pk, att, gk, glist, K, with_wif = TRUE) {
  a <- numeric(K); cc <- numeric(length(glist))
  if (!length(S)) return(list(est = NA_real_, a = a, c = cc))
  P <- sum(pk[S])
  a[S] <- pk[S] / P
  if (with_wif) {
    cnt <- tabulate(match(gk[S], glist), length(glist))
    for (k in S) {
      e <- numeric(length(glist)); e[match(gk[k], glist)] <- 1
      cc <- cc + att[k] * (e / P - (pk[k] / P^2) * cnt)
    }
  }
  list(est = sum(a[S] * att[S]), a = a, c = cc)
}

# did's "group" aggregation as a linear map of the cell estimates: over the
# cells `post` (logical), each cohort's mean, averaged with the cohort shares
# pg (unnormalised, over glist): the overall is sum(a * att) and the
# weight-estimation coefficients of the cohort columns are M %*% att, so one
# map serves a whole curve of cell estimates (did_dose's ATT(d)).
dd_agg_group_map <- function(gk, post, pg, glist) {
  K <- length(gk); J <- length(glist)
  j <- match(gk, glist)
  nj <- tabulate(j[post], J)
  okg <- nj > 0
  P <- sum(pg[okg])
  a <- numeric(K)
  a[post] <- pg[j[post]] / P / nj[j[post]]
  M <- matrix(0, J, K)
  for (k in which(post)) M[, k] <- (replace(numeric(J), j[k], 1) / P - pg[j[k]] / P^2 * okg) / nj[j[k]]
  list(a = a, M = M)
}

# Cell estimates of another estimator (did_dose's ATT^o(g,t), did_ddd's
# ATT(g,t)) as the did_cs fit that aggregate.did_cs() reads: the table
# (group, time, estimate), the influence functions (the K cells, then the
# cohort-share columns), the units' cohorts, weights and clusters, and the
# inference settings of the fit x.
# aggregate() of a cell estimator whose fit carries did_cs's unit-level
# fields (inf with the cohort-share columns, unit_group, unit_weight,
# unit_cluster, periods, cluster, survey_label, anticipation): through
# aggregate.did_cs() (did_ddd, did_edid).
dd_agg_via_cs <- function(x, type, base_period, title, call, ...) {
  choices <- c("dynamic", "group", "simple", "calendar")
  if (identical(type, "event")) type <- "dynamic"            # (did_etwfe's and etwfe's name)
  type <- dd_match_arg(if (identical(type, choices)) "dynamic" else type, choices, "type")
  tab <- x$coeftable
  out <- aggregate.did_cs(dd_cells_as_cs(x, tab$group, tab$time, tab$estimate, x$inf, x$unit_group, x$unit_weight,
                                         x$unit_cluster, x$periods, x$cluster, x$survey_label, base_period,
                                         x$anticipation), type = type, ...)
  out$title <- sprintf("%s: aggregation (type = \"%s\") of ATT(g,t) (%s)", title, type, class(x)[1])
  out$call <- call
  out
}

dd_cells_as_cs <- function(x, group, time, estimate, inf, G, w, cluster, periods, cluster_name, survey_label,
                           base_period, anticipation) {
  structure(list(coeftable = data.frame(term = sprintf("ATT(%s,%s)", group, time), group = group, time = time,
                                        estimate = estimate), units = x$units, call = x$call,
                 control_group = x$control_group,
                 n = length(G), unit_group = G, unit_weight = w, unit_cluster = cluster, periods = periods, inf = inf,
                 boot_draws = NULL, alpha = x$alpha, nboot = x$nboot, boot_weights = x$boot_weights, cband = x$cband,
                 cband_method = "sup-t", yname = x$yname, nobs = x$nobs, n_units = x$n_units,
                 n_periods = x$n_periods, n_clusters = x$n_clusters, cluster = cluster_name,
                 survey_label = survey_label, base_period = base_period, anticipation = anticipation),
            class = c("did_cs", "dd_fit"))
}

#' Aggregate group-time average treatment effects
#'
#' Combines the ATT(g,t) of a [did_cs()] fit into the summaries of Callaway and
#' Sant'Anna (2021), exactly as `did::aggte()` does: `"simple"` (the average of
#' all post-treatment ATT(g,t), weighted by group size), `"group"` (by cohort,
#' then averaged over cohorts by size), `"dynamic"` (by event time e = t - g,
#' an event study; the overall effect averages e >= 0) and `"calendar"` (by
#' period). Standard errors come from the influence functions, including the
#' term for the estimated group shares; with the bootstrap (`nboot > 0`) they
#' are multiplier-bootstrap standard errors and the uniform (sup-t) band
#' covers all elements of the aggregation.
#'
#' @param x A `did_cs` fit.
#' @param type `"group"` (default, as did), `"simple"`, `"dynamic"` (also
#'   `"event"`, as [aggregate.did_etwfe()] and etwfe call it) or `"calendar"`.
#' @param balance_e For `"dynamic"`: keep only cohorts observed at least
#'   `balance_e` periods after treatment, and event times up to `balance_e`.
#' @param min_e,max_e Event-time limits (`"dynamic"`; `max_e` also limits the
#'   post-treatment cells in `"simple"` and `"group"`, as in did).
#' @param na.rm Drop ATT(g,t) that are `NA` (otherwise an error).
#' @param nboot,boot_weights,cband,cband_method,alpha Inference settings; default to the
#'   fit's. `nboot = 0` gives analytic standard errors.
#' @param ... did's spellings `bstrap`, `biters`, `alp` are accepted.
#' @return A `dd_fit` of class `c("did_cs_agg", "dd_fit")`: the table has one
#'   row per element (with `event`, `group` or `time`) and a last row `"ATT"`
#'   for the overall summary (for `"simple"`, only that row). The influence
#'   function of each row is `as.matrix(x$inf) %*% comb` (`comb` is stored in
#'   the result; it is never formed in memory otherwise).
#' @examples
#' d <- read.csv(system.file("extdata", "sim_panel.csv", package = "diffdiff"))
#' cs <- did_cs(d, yname = "y", tname = "year", idname = "id", gname = "first_treat",
#'              nboot = 0)
#' aggregate(cs, type = "simple")
#' es <- aggregate(cs, type = "dynamic")
#' plot(es)
#' @export
aggregate.did_cs <- function(x, type = c("group", "simple", "dynamic", "calendar"),
                             balance_e = NULL, min_e = -Inf, max_e = Inf, na.rm = FALSE,
                             nboot = NULL, boot_weights = NULL, cband = NULL, cband_method = NULL, alpha = NULL,
                             ...) {
  call <- match.call()
  a <- dd_did_aliases(list(...), c("bstrap", "biters", "alp"), "aggregate")
  if (!is.null(a$alp)) alpha <- a$alp
  if (!is.null(a$bstrap) || !is.null(a$biters)) {
    bs <- if (is.null(a$bstrap)) x$nboot > 0 else dd_check_flag(a$bstrap, "bstrap")
    nboot <- if (!bs) 0L else if (!is.null(a$biters)) a$biters else max(x$nboot, 1000L)
  }
  type <- dd_match_arg(sub("^event$", "dynamic", type[1]), c("group", "simple", "dynamic", "calendar"), "type")
  # the shared settings, defaulting to the fit's
  sp <- dd_spec(alpha = alpha %||% x$alpha, nboot = nboot %||% x$nboot, boot_weights = boot_weights %||% x$boot_weights,
                cband = cband %||% x$cband, cband_method = cband_method %||% x$cband_method %||% "sup-t")
  nboot <- sp$nboot; boot_weights <- sp$boot_weights; cband <- sp$cband; cband_method <- sp$cband_method
  bootstrap_t <- cband && cband_method == "bootstrap-t"
  if (bootstrap_t && nboot == 0L)
    dd_stop("`cband_method` = \"bootstrap-t\" needs bootstrap draws: `nboot` is 0; set nboot = 1000, say.")
  alpha <- sp$alpha
  dd_check_event_window(type, balance_e, min_e, max_e)

  tab <- x$coeftable
  gk <- tab$group; tk <- tab$time; att <- tab$estimate
  K <- length(att)
  keep_cells <- !is.na(att)
  if (!all(keep_cells) && !na.rm)
    dd_stop("some ATT(g,t) are NA (%s); use `na.rm = TRUE` to drop them.",
            paste(tab$term[!keep_cells], collapse = ", "))
  n <- x$n; G <- x$unit_group; w <- x$unit_weight; cl <- x$unit_cluster
  glist <- sort(unique(gk))
  pg <- dd_cs_shares(x, glist)
  pk <- pg[match(gk, glist)]
  # did re-indexes time for max_e in simple/group: positions in sorted periods and groups
  L <- sort(unique(c(x$periods, glist)))
  tg <- match(gk, L); tt <- match(tk, L)
  el <- function(S, with_wif = TRUE) dd_agg_elem(which(S & keep_cells), pk, att, gk, glist, K, with_wif)
  combine <- function(parts, wts) list(est = sum(wts * vapply(parts, `[[`, numeric(1), "est")),
                                      a = Reduce(`+`, Map(function(p, v) v * p$a, parts, wts)),
                                      c = Reduce(`+`, Map(function(p, v) v * p$c, parts, wts)))
  elems <- list(); lab <- character(); extra <- NULL
  if (type == "simple") {
    overall <- el(tg <= tt & tt <= tg + max_e)
  } else if (type == "group") {
    for (g in glist) {
      S <- which(gk == g & tg <= tt & tt <= tg + max_e & keep_cells)
      e <- list(est = NA_real_, a = numeric(K), c = numeric(length(glist)))
      if (length(S)) { e$est <- mean(att[S]); e$a[S] <- 1 / length(S) }
      elems[[length(elems) + 1]] <- e
    }
    lab <- paste0("group::", glist); extra <- data.frame(group = glist)
    # the overall: cohort means averaged by cohort share, with the
    # weight-estimation term over cohorts
    post <- tg <= tt & tt <= tg + max_e & keep_cells
    gm <- dd_agg_group_map(gk, post, pg, glist)
    att0 <- ifelse(post, att, 0)
    overall <- list(est = sum(gm$a * att0), a = gm$a, c = drop(gm$M %*% att0))
  } else if (type == "dynamic") {
    ek <- tk - gk
    incl <- rep(TRUE, K)
    E <- sort(unique(ek))
    if (!is.null(balance_e)) {
      incl <- (max(tk) - gk) >= balance_e
      E <- sort(unique(ek[incl]))
      E <- E[E >= balance_e - max(tk) + min(L) & E <= balance_e]
    }
    E <- E[E >= min_e & E <= max_e]
    if (!length(E)) dd_stop("no event time is left with `min_e` = %s, `max_e` = %s.", format(min_e), format(max_e))
    elems <- lapply(E, function(e) el(ek == e & incl))
    lab <- paste0("event::", E); extra <- data.frame(event = E)
    post <- E >= 0
    if (!any(post)) dd_stop("no post-treatment event time (e >= 0) is left to summarise.")
    overall <- combine(elems[post], rep(1 / sum(post), sum(post)))
  } else {
    Ct <- unique(tt[tt >= min(tg)])
    Ct <- Ct[vapply(Ct, function(s) any(tt == s & tg <= tt), logical(1))]
    elems <- lapply(Ct, function(s) el(tt == s & tg <= tt))
    lab <- paste0("time::", L[Ct]); extra <- data.frame(time = L[Ct])
    overall <- combine(elems, rep(1 / length(elems), length(elems)))
  }
  all_el <- c(elems, list(overall))
  A <- vapply(all_el, `[[`, numeric(K), "a"); A <- matrix(A, nrow = K)
  Cc <- vapply(all_el, `[[`, numeric(length(glist)), "c"); Cc <- matrix(Cc, nrow = length(glist))
  est_all <- vapply(all_el, `[[`, numeric(1), "est")
  # psi = Psi a + C c: the cohort-share columns follow the K cells in x$inf
  # (NA cells have a = 0 and are skipped)
  comb <- rbind(A, Cc)
  # the event study keeps its covariance: formed once, its diagonal gives
  # the standard errors
  cross <- if (type == "dynamic") dd_if_cross(x$inf, cl, comb)
  se <- dd_if_se(x$inf, n, cl, comb = comb, cross = cross)
  m <- length(elems)
  crit <- NA_real_
  if (bootstrap_t) {
    # analytic standard errors; the band's critical value from the wild
    # bootstrap-t over the m elements
    if (m > 0L) {
      crit <- dd_if_boot_t(x$inf, n, cl, x$unit_group, nboot, boot_weights, alpha,
                           comb = comb[, seq_len(m), drop = FALSE])$crit
      dd_cs_crit_warn(crit)
      if (!is.finite(crit) || crit < stats::qnorm(1 - alpha / 2)) crit <- NA_real_
    }
  } else if (nboot > 0L || (cband && m > 0L)) {
    B <- if (nboot > 0L) nboot else if (!is.null(x$boot_draws)) nrow(x$boot_draws$draws) else 1000L
    dr <- x$boot_draws
    if (!is.null(dr) && nrow(dr$draws) == B && identical(dr$boot_weights, boot_weights)) {
      # reuse the fit's draws: bootstrap of psi = draws(Psi) A + draws(C) c
      DA <- matrix(0, nrow(dr$draws), K); DA[, dr$cells] <- dr$draws[, seq_along(dr$cells)]
      DC <- dr$draws[, length(dr$cells) + seq_along(glist), drop = FALSE]
      draws <- DA %*% A + DC %*% Cc
      bt <- dd_draws_summary(draws, dr$N, n, alpha, band = seq_len(m))
    } else {
      bt <- dd_if_boot(x$inf, n, cl, B, boot_weights, alpha, band = seq_len(m), comb = comb)
    }
    if (nboot > 0L) se <- ifelse(is.na(se), NA_real_, bt$se)
    if (cband && m > 0L) {
      crit <- bt$crit
      if (!is.finite(crit) || crit < stats::qnorm(1 - alpha / 2)) crit <- NA_real_
    }
  }
  # the overall row: NA in the label columns (rbind() with a row of NA)
  if (length(extra)) extra <- dd_df(lapply(extra, function(v) c(v, NA)))
  ctab <- dd_if_table(c(lab, "ATT"), est_all, se, alpha, crit, extra)
  if (!is.null(ctab$cband.low)) ctab$cband.low[nrow(ctab)] <- ctab$cband.high[nrow(ctab)] <- NA_real_
  info <- dd_info("did_cs_agg", sprintf("Callaway-Sant'Anna aggregation (type = \"%s\")", type), x$yname, x$nobs,
                  if (nboot > 0 && !bootstrap_t) "bootstrap" else "analytic",
                  paste0(dd_cs_vcov_label(nboot, boot_weights, x$cluster, bootstrap_t),
                         if (is.null(x$survey_label)) "" else x$survey_label), Inf, alpha, c(lab, "ATT"),
                  n_units = x$n_units, n_periods = x$n_periods, n_clusters = x$n_clusters,
                  more = list(type = type, crit = crit, nboot = nboot, boot_weights = boot_weights, cband = cband,
                              cband_method = cband_method, inf = x$inf, comb = comb, n = n, unit_cluster = cl,
                              base_period = x$base_period, units = x$units, source_call = x$source_call %||% x$call,
                              cluster = x$cluster, survey_label = x$survey_label, control_group = x$control_group))
  coefs <- stats::setNames(est_all, ctab$term)
  extra <- list()
  if (type == "dynamic") {
    # the typed event study: the universal base period's reference event
    # time is -1 - anticipation (its cells are normalised to zero)
    V <- dd_if_vcov(list(inf = x$inf, unit_cluster = cl, comb = comb, n = n, coeftable = ctab,
                         vcov_type = info$vcov_type), cross = cross)
    ant <- if (is.null(x$anticipation)) 0 else x$anticipation
    # (did_edid under parallel trends in all periods: pre-period cells test
    # the assumption, no reference period)
    extra$event_study <- dd_es_spec(reference = if (identical(x$base_period, "universal")) -1 - ant else numeric(),
                                    base_period = switch(paste0("", x$base_period), universal = "reference",
                                                         pt_all = "imputation", "varying"),
                                    vcov = V)
  }
  new_dd_fit(c("did_cs_agg"), ctab, coefs, NULL, info, call, extra)
}

#' @rdname aggregate.did_cs
#' @param object A `did_cs_agg` fit.
#' @method vcov did_cs_agg
#' @export
vcov.did_cs_agg <- function(object, ...) {
  dd_check_dots(list(...), "vcov()")
  dd_if_vcov(object)
}

# aggregate.did_cs()'s event-time window: balance_e, min_e, max_e (ignored,
# with a warning, for the calendar aggregation, as in did)
dd_check_event_window <- function(type, balance_e, min_e, max_e) {
  if (!is.numeric(min_e) || length(min_e) != 1L || is.na(min_e))
    dd_stop("`min_e` must be a number; got %s.", dd_show(min_e))
  if (!is.numeric(max_e) || length(max_e) != 1L || is.na(max_e))
    dd_stop("`max_e` must be a number; got %s.", dd_show(max_e))
  if (!is.null(balance_e) && (!is.numeric(balance_e) || length(balance_e) != 1L || is.na(balance_e) || balance_e < 0))
    dd_stop("`balance_e` must be NULL or a number >= 0; got %s.", dd_show(balance_e))
  if (type %in% c("calendar") && (!is.null(balance_e) || is.finite(min_e) || is.finite(max_e)))
    warning("`balance_e`, `min_e` and `max_e` are ignored for type = \"calendar\" (as in did).", call. = FALSE)
  invisible(TRUE)
}
