# Event-study coefficients and their covariance, from a fit or from a raw vector,
# in the form the diagnostics (honest_did, pretrends_power) need: pre-period
# coefficients first (event times < 0, the reference period left out), then the
# post periods (event times >= 0), and the covariance in the same order.

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
    if (inherits(fit, "did_cs_agg") && identical(fit$base_period, "varying"))
      warning(sprintf("%s(): `fit` comes from did_cs(base_period = \"varying\"), whose pre-period estimates are changes between consecutive periods, not effects relative to one reference period; refit with base_period = \"universal\".", fun),
              call. = FALSE)
    tab <- fit$coeftable
    terms <- as.character(tab$term)
    is_ev <- grepl("^event::-?[0-9]+$", terms)
    if (!any(is_ev))
      dd_stop("`fit` (class %s) has no event-study coefficients (terms \"event::e\").", class(fit)[1])
    V <- stats::vcov(fit)
    if (is.null(V))
      dd_stop("`fit` (class %s) has no covariance matrix of its coefficients.", class(fit)[1])
    ev <- as.numeric(sub("^event::", "", terms[is_ev]))
    b <- tab$estimate[is_ev]
    idx <- match(terms[is_ev], rownames(V))
    if (anyNA(idx)) idx <- which(is_ev)
    S <- V[idx, idx, drop = FALSE]
    # a normalised reference period (estimate 0 with no variance) is not a coefficient
    keep <- !(is.na(diag(S)) | (diag(S) == 0 & b == 0))
    if (anyNA(b[keep]) || anyNA(S[keep, keep]))
      dd_stop("`fit` has missing event-study estimates or covariances (event times %s).",
              dd_show(ev[keep][is.na(b[keep])]))
    ev <- ev[keep]; b <- b[keep]; S <- S[keep, keep, drop = FALSE]
    o <- order(ev)
    ev <- ev[o]; b <- b[o]; S <- S[o, o, drop = FALSE]
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

# Reads an event study stored as text (the format of inst/extdata/honestdid_*_event_study.txt:
# lines "betahat ...", "pre_indices ...", "post_indices ...", then "sigma" and its rows).
dd_read_event_study <- function(path) {
  L <- readLines(path)
  field <- function(key) {
    line <- L[startsWith(L, paste0(key, " "))][1]
    as.numeric(strsplit(trimws(sub(paste0("^", key, " +"), "", line)), " +")[[1]])
  }
  j <- which(startsWith(L, "sigma"))
  rows <- L[(j + 1):length(L)]
  rows <- rows[nzchar(trimws(rows))]
  list(b = field("betahat"), S = do.call(rbind, lapply(strsplit(trimws(rows), " +"), as.numeric)),
       K = length(field("pre_indices")), P = length(field("post_indices")))
}

# weights of the post-period effects in a target parameter
dd_check_lvec <- function(l_vec, P, nonzero = TRUE) {
  if (!is.numeric(l_vec) || length(l_vec) != P || anyNA(l_vec) || any(!is.finite(l_vec)) ||
      (nonzero && all(l_vec == 0)))
    dd_stop("`l_vec` must be a finite numeric vector of length %d (one weight per post period)%s; got %s.",
            P, if (nonzero) ", not all zero" else "", dd_show(l_vec))
  as.double(l_vec)
}
