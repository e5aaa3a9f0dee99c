# Coverage of did_cs(): ATT(g,t) pointwise (analytic and multiplier-bootstrap
# standard errors) and the uniform band over all ATT(g,t); aggregate()
# simple / group / dynamic / calendar with analytic and bootstrap standard
# errors and the uniform bands of the group, dynamic and calendar types
# (with bootstrap and with analytic standard errors).
#
# Design "stag" (helpers.R). Estimands: ATT(g,t) = tau(g, t - g) (0 before
# treatment, varying base period). The aggregations weight cohorts by their
# estimated shares and their influence functions include the share
# estimation, so their standard errors target the POPULATION-share
# aggregate (the DGP's cohort probabilities); coverage of the realised-share
# aggregate is reported alongside. As a diagnostic, the analytic standard
# errors recomputed without the share-estimation term (rows "SE without the
# share term", against realised shares) and the ratio of the two.
#
# Run: R_LIBS=/tmp/lib-coverage Rscript bench/coverage/cs.R

source("bench/coverage/helpers.R")

design <- "stag"
nsim <- cov_nsim()
NBOOT <- 1000   # did's default biters

# truths of one aggregation type, for cohort weights w (named by cohort)
agg_truth <- function(type, terms, tab, w, tau) {
  post <- tab[tab$event >= 0, c("group", "event", "time")]
  names(post)[1:2] <- c("g", "e")
  cells <- data.frame(g = tab$group, e = tab$event, t = tab$time)
  cellv <- function(S) wavg_cells(data.frame(g = S$g, e = pmax(S$e, 0)), w, tau) * any(S$e >= 0)
  if (type == "simple") return(wavg_cells(post, w, tau))
  if (type == "group") {
    th <- vapply(sort(unique(post$g)), function(g) mean(tau[as.character(g), post$e[post$g == g] + 1L]), numeric(1))
    names(th) <- sort(unique(post$g))
    return(c(th[sub("group::", "", terms[-length(terms)])], sum(w[names(th)] * th) / sum(w[names(th)])))
  }
  if (type == "dynamic") {
    E <- as.numeric(sub("event::", "", terms[-length(terms)]))
    th <- vapply(E, function(e) if (e < 0) 0 else wavg_cells(cells[cells$e == e, ], w, tau), numeric(1))
    return(c(th, mean(th[E >= 0])))
  }
  if (type == "calendar") {
    Tt <- as.numeric(sub("time::", "", terms[-length(terms)]))
    th <- vapply(Tt, function(s) wavg_cells(post[post$time == s, ], w, tau), numeric(1))
    return(c(th, mean(th)))
  }
}

one_draw <- function(r) {
  d <- draw_stagger(design, r)
  sh <- cohort_shares(d); tau <- attr(d, "tau")
  fit <- did_cs(d, "y", "id", "t", "g", nboot = NBOOT, cband = TRUE)
  tab <- fit$coeftable
  K <- nrow(tab)
  truth <- ifelse(tab$event >= 0, tau[cbind(match(tab$group, sh$cohorts), pmax(tab$event, 0) + 1L)], 0)
  se_a <- sqrt(colSums(as.matrix(fit$inf)[, seq_len(K), drop = FALSE]^2)) / fit$n   # did_cs(nboot = 0)'s
  z <- stats::qnorm(0.975)
  out <- list(
    cov_rows("did_cs", "ATT(g,t), pointwise, analytic SE", design, "ATT(g,t)", tab$term, truth,
             tab$estimate, tab$estimate - z * se_a, tab$estimate + z * se_a, se_a),
    cov_rows("did_cs", "ATT(g,t), pointwise, bootstrap SE", design, "ATT(g,t)", tab$term, truth,
             tab$estimate, tab$conf.low, tab$conf.high, tab$std.error),
    cov_rows("did_cs", sprintf("ATT(g,t), uniform band over %d cells (bootstrap SE)", K), design, "ATT(g,t)",
             tab$term, truth, tab$estimate, tab$cband.low, tab$cband.high, tab$std.error, band = TRUE))
  for (type in c("simple", "group", "dynamic", "calendar")) {
    for (se_type in c("bootstrap", "analytic")) {
      ag <- if (se_type == "bootstrap") aggregate(fit, type = type) else aggregate(fit, type = type, nboot = 0)
      at <- ag$coeftable
      for (est in c("population", "realised")) {
        w <- if (est == "population") sh$pop else sh$real
        th <- agg_truth(type, at$term, tab, w, tau)
        lab <- sprintf("%s shares", est)
        el <- at$term != "ATT"
        if (any(el)) {
          out[[length(out) + 1]] <- cov_rows("did_cs", sprintf("aggregate %s: elements, pointwise, %s SE", type, se_type),
                                             design, lab, at$term[el], th[el], at$estimate[el], at$conf.low[el],
                                             at$conf.high[el], at$std.error[el])
          if (!is.null(at$cband.low))
            out[[length(out) + 1]] <- cov_rows("did_cs", sprintf("aggregate %s: uniform band over %d elements (%s SE)",
                                                                 type, sum(el), se_type),
                                               design, lab, at$term[el], th[el], at$estimate[el], at$cband.low[el],
                                               at$cband.high[el], at$std.error[el], band = TRUE)
        }
        if (se_type == "analytic" && est == "realised") {
          # the same influence functions without the share-estimation term
          # (not an interval the package prints): the part of the standard
          # error that is due to targeting population shares
          A <- ag$comb[seq_len(K), , drop = FALSE]
          se_nw <- sqrt(colSums((as.matrix(fit$inf)[, seq_len(K), drop = FALSE] %*% A)^2)) / fit$n
          out[[length(out) + 1]] <- cov_rows("did_cs", sprintf("aggregate %s: SE without the share term (diagnostic, not printed)", type),
                                             design, lab, at$term, th, at$estimate, at$estimate - z * se_nw,
                                             at$estimate + z * se_nw, se_nw)
          out[[length(out) + 1]] <- cov_rows("did_cs", sprintf("aggregate %s: SE ratio", type), design, "diagnostic",
                                             at$term, NA, at$std.error / se_nw, NA, NA)
        }
        o <- at$term == "ATT"
        out[[length(out) + 1]] <- cov_rows("did_cs", sprintf("aggregate %s: overall ATT, %s SE", type, se_type),
                                           design, lab, "ATT", th[o], at$estimate[o], at$conf.low[o],
                                           at$conf.high[o], at$std.error[o])
      }
    }
  }
  do.call(rbind, out)
}

st <- cov_study("cs", nsim, one_draw, note = sprintf("nboot = %d (Rademacher)", NBOOT))
cov_write(st)
