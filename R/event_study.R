# The typed event-study component. Every event-study fit (did_event, did_sa,
# did_bjs and did_gardner with horizons, did_stacked, aggregate(did_cs(),
# type = "dynamic")) carries `fit$event_study`, a "dd_event_study": the
# estimated event times in increasing order, their coefficient-table terms,
# estimates, standard errors and covariance block, the reference period(s)
# normalised to zero and not estimated (stated, never inferred from a zero
# estimate), what the pre-period estimates are relative to (`base_period`),
# and the uniform band's critical value. honest_did(), pretrends_power(),
# plot() and plot_event_studies() read it; nothing parses term names.

dd_es_base_periods <- c("reference", "varying", "imputation", "transformation")

# An estimator's statement of its event study: the reference period(s) and
# the meaning of the pre-period estimates ("reference": every estimate is
# relative to the reference period(s); "varying": pre-period estimates are
# changes between consecutive periods (did_cs base_period = "varying");
# "imputation": pre-period estimates test the untreated model, post-period
# ones are imputation effects; "transformation": every estimate is relative
# to each unit's pre-treatment mean or linear trend, did_lwdid's rolling
# transformations, and no period is a reference). `vcov`: the covariance of the event rows when
# the fit stores none; `estimate`: the table column holding the estimates
# the covariance belongs to (did_had: the bias-corrected ones).
dd_es_spec <- function(reference = numeric(), base_period = "reference", vcov = NULL, estimate = "estimate")
  list(reference = as.double(reference), base_period = base_period, vcov = vcov, estimate = estimate)

# The component from the coefficient table (rows with a non-NA `event`), the
# fit's covariance (or spec$vcov) and the spec. NULL when no row has an event
# time (e.g. a static did_bjs).
dd_new_event_study <- function(tab, V, spec, crit = NA_real_) {
  if (!is.list(spec) || !all(c("reference", "base_period") %in% names(spec)))
    stop("internal error: malformed event-study spec; please report", call. = FALSE)
  if (!spec$base_period %in% dd_es_base_periods)
    stop("internal error: unknown event-study base period; please report", call. = FALSE)
  if (is.null(tab$event)) return(NULL)
  ref <- spec$reference
  rows <- which(!is.na(tab$event) & !(tab$event %in% ref))
  if (!length(rows)) return(NULL)
  ev <- as.double(tab$event[rows])
  o <- order(ev)
  rows <- rows[o]; ev <- ev[o]
  if (anyDuplicated(ev)) stop("internal error: duplicated event times in an event study; please report", call. = FALSE)
  term <- as.character(tab$term[rows])
  Vf <- if (!is.null(spec$vcov)) spec$vcov else V
  if (is.null(Vf)) stop("internal error: an event study without a covariance; please report", call. = FALSE)
  idx <- match(term, rownames(Vf))
  if (anyNA(idx)) stop("internal error: event-study terms missing from the covariance; please report", call. = FALSE)
  S <- Vf[idx, idx, drop = FALSE]
  dimnames(S) <- list(term, term)
  structure(list(event = ev, term = term, estimate = as.double(tab[[spec$estimate %||% "estimate"]][rows]),
                 std.error = as.double(tab$std.error[rows]), vcov = S, reference = sort(ref),
                 base_period = spec$base_period, crit = as.double(crit)),
            class = "dd_event_study")
}

#' @export
print.dd_event_study <- function(x, ...) {
  dd_check_dots(list(...), "print()")
  cat(sprintf("Event study: %d event times (%s to %s); reference %s; pre-period estimates: %s%s\n",
              length(x$event), format(min(x$event)), format(max(x$event)),
              if (length(x$reference)) paste(format(x$reference), collapse = ", ") else "none",
              switch(x$base_period, reference = "relative to the reference period",
                     varying = "changes between consecutive periods (varying base period)",
                     imputation = "tests of the untreated model (imputation)",
                     transformation = "relative to each unit's pre-treatment mean or trend (rolling transformation)"),
              if (is.finite(x$crit)) sprintf("; uniform band critical value %.3f", x$crit) else ""))
  print(data.frame(event = x$event, term = x$term, estimate = x$estimate, std.error = x$std.error), row.names = FALSE)
  invisible(x)
}

# Event-study coefficients and their covariance, from a fit or from a raw
# vector, in the form the diagnostics (honest_did, pretrends_power) need:
# pre-period coefficients first (event times < 0; the reference period is not
# a coefficient), then the post periods (event times >= 0), and the
# covariance in the same order.
dd_event_study <- function(fit = NULL, betahat = NULL, sigma = NULL, num_pre = NULL,
                           fun = "honest_did") {
  if (!is.null(fit)) {
    if (!is.null(betahat) || !is.null(sigma))
      dd_stop("`%s()` takes either a fit or `betahat` and `sigma`, not both.", fun)
    if (!inherits(fit, "dd_fit"))
      dd_stop("`fit` must be an event-study fit from did_event(), did_sa(), did_bjs() or aggregate(did_cs(...), type = \"dynamic\"); got an object of class %s.",
              class(fit)[1])
    if (inherits(fit, "did_cs_agg") && !identical(fit$type, "dynamic"))
      dd_stop("`fit` is a did_cs aggregation of type \"%s\"; an event study needs type = \"dynamic\".", fit$type)
    es <- fit$event_study
    if (is.null(es) && inherits(fit, "did_cs"))
      dd_stop("`fit` holds did_cs's group-time effects ATT(g,t), not an event study; pass its event-study aggregation: %s(aggregate(fit, type = \"dynamic\")) (best with did_cs(base_period = \"universal\")).",
              fun)
    if (is.null(es))
      dd_stop("`fit` (class %s) is not an event study (it has no event-time estimates).", class(fit)[1])
    if (identical(es$base_period, "transformation"))
      warning(sprintf("%s(): `fit` comes from did_lwdid(), whose estimates are relative to each unit's pre-treatment mean or trend, not to one reference period normalised to zero (the omitted pre-periods are not zero); the bounds assume such a reference, so read them with care.", fun),
              call. = FALSE)
    if (identical(es$base_period, "varying"))
      warning(sprintf("%s(): `fit` comes from did_cs(base_period = \"varying\"), whose pre-period estimates are changes between consecutive periods, not effects relative to one reference period; refit with base_period = \"universal\".", fun),
              call. = FALSE)
    ev <- es$event; b <- es$estimate; S <- es$vcov
    if (anyNA(b) || anyNA(S))
      dd_stop("`fit` has missing event-study estimates or covariances (event times %s).",
              dd_show(ev[is.na(b) | is.na(diag(S))]))
    K <- sum(ev < 0); P <- sum(ev >= 0)
    if (K == 0L)
      dd_stop("`fit` has no pre-period coefficients (event times < 0); %s() needs at least one. For did_bjs(), use pretrends = TRUE.", fun)
    if (P == 0L)
      dd_stop("`fit` has no post-period coefficients (event times >= 0).")
    names(b) <- ev
    dimnames(S) <- list(ev, ev)
    return(list(betahat = b, sigma = S, K = K, P = P, event = ev))
  }
  if (is.null(betahat) || is.null(sigma))
    dd_stop("`%s()` needs a fit, or both `betahat` and `sigma`.", fun)
  if (!is.numeric(betahat) || !length(betahat) || anyNA(betahat) || any(!is.finite(betahat)))
    dd_stop("`betahat` must be a finite numeric vector; got %s.", dd_show(betahat))
  n <- length(betahat)
  if (is.null(num_pre) || !is.numeric(num_pre) || length(num_pre) != 1L || is.na(num_pre) ||
      num_pre != round(num_pre) || num_pre < 1 || num_pre >= n)
    dd_stop("`num_pre` (the number of pre-period coefficients at the start of `betahat`) must be a whole number between 1 and %d; got %s.",
            n - 1L, dd_show(num_pre))
  sigma <- dd_check_sigma(sigma, n)
  K <- as.integer(num_pre); P <- n - K
  ev <- c(seq(-K - 1, -2), seq_len(P) - 1)   # reference period -1 omitted (the did_event convention)
  b <- as.numeric(betahat)
  names(b) <- ev
  dimnames(sigma) <- list(ev, ev)
  list(betahat = b, sigma = sigma, K = K, P = P, event = ev)
}

dd_check_sigma <- function(sigma, n) {
  if (!is.matrix(sigma) || !is.numeric(sigma))
    dd_stop("`sigma` must be a numeric matrix; got %s.",
            if (is.matrix(sigma)) paste("a", typeof(sigma), "matrix") else dd_show(sigma))
  if (nrow(sigma) != n || ncol(sigma) != n)
    dd_stop("`sigma` must be %d x %d (the length of `betahat`); got %d x %d.", n, n, nrow(sigma), ncol(sigma))
  if (anyNA(sigma) || any(!is.finite(sigma)))
    dd_stop("`sigma` has missing or infinite entries.")
  sc <- max(abs(sigma))
  asym <- max(abs(sigma - t(sigma)))
  if (asym > 1e-10 * max(sc, 1e-300))
    dd_stop("`sigma` must be symmetric; the largest |sigma - t(sigma)| is %s.", format(asym, digits = 3))
  sigma <- (sigma + t(sigma)) / 2
  ev <- eigen(sigma, symmetric = TRUE, only.values = TRUE)$values
  if (min(ev) < -1e-10 * max(abs(ev), 1e-300))
    dd_stop("`sigma` must be positive semi-definite; its smallest eigenvalue is %s.", format(min(ev), digits = 3))
  unname(sigma)
}

# weights of the post-period effects in a target parameter
dd_check_lvec <- function(l_vec, P, nonzero = TRUE) {
  if (!is.numeric(l_vec) || length(l_vec) != P || anyNA(l_vec) || any(!is.finite(l_vec)) ||
      (nonzero && all(l_vec == 0)))
    dd_stop("`l_vec` must be a finite numeric vector of length %d (one weight per post period)%s; got %s.",
            P, if (nonzero) ", not all zero" else "", dd_show(l_vec))
  as.double(l_vec)
}
