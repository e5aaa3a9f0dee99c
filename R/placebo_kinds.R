# placebo_test()'s kinds of placebo: fake adoption times (timing), fake
# treated groups (group), permutations of the treatment (exact enumeration
# or random draws) and leave-one-out; the dispatcher and the shared redraw
# and refit steps are in placebo.R.

dd_placebo_timing <- function(cl, env, pan, u, term, shift, cutoff) {
  shift <- dd_check_count(shift, "shift", min = 1)
  tlev <- u$tlev; G <- u$G
  treated <- G > 0
  if (!any(treated)) dd_stop("the fit has no treated unit; there is nothing to move.")
  if (is.null(cutoff)) cutoff <- max(G[treated])
  if (!is.numeric(cutoff) || length(cutoff) != 1L || !cutoff %in% tlev)
    dd_stop("`cutoff` must be one period of the data (the first period left out); got %s.", dd_show(cutoff))
  win <- tlev[tlev < cutoff]
  if (length(win) < 2L)
    dd_stop("`cutoff` = %s leaves %d period before it; the timing placebo needs at least two periods before `cutoff` (a fake pre-period and a fake post-period).",
            format(cutoff), length(win))
  pos <- match(G, tlev)
  fake <- ifelse(treated & G >= cutoff, pos - shift, NA)
  if (!any(!is.na(fake) & fake >= 1 & tlev[pmax(fake, 1)] < cutoff))
    dd_stop("`shift` = %d moves no cohort adopting at or after `cutoff` = %s into the periods before it.",
            shift, format(cutoff))
  nopre <- !is.na(fake) & fake <= 1
  if (any(nopre))
    dd_stop("`shift` = %d moves the adoption of the cohort first treated in %s to %s, the first period: the placebo dates leave no pre-period. Use a smaller `shift`.",
            shift, format(G[nopre][1]), if (fake[nopre][1] < 1) "before the data start" else format(tlev[1]))
  Gn <- ifelse(is.na(fake), 0, tlev[pmax(fake, 1)])
  Gn[!is.na(fake) & Gn >= cutoff] <- 0             # untreated in the window: comparisons
  drop_unit <- treated & G < cutoff                # treated within the window
  # the fake-treated units and their clusters (the fit's cluster variable,
  # if any): a placebo with one of them tests nothing that a clustered (or
  # unit-level) standard error can measure
  fk <- Gn > 0 & !drop_unit
  ucl <- dd_placebo_unit_clusters(pan)
  n_fake <- sum(fk)
  n_fake_cl <- if (is.null(ucl)) n_fake else length(unique(ucl[fk]))
  if (n_fake_cl < 2L) {
    best <- dd_placebo_best_cutoff(G, tlev, shift, ucl)
    dd_stop("the timing placebo with `cutoff` = %s and `shift` = %d has %d fake-treated %s%s: its standard error and p-value would rest on %s. %s",
            format(cutoff), shift, n_fake_cl, if (is.null(ucl)) "unit" else "cluster",
            if (n_fake_cl == 1L) "" else "s", if (n_fake_cl == 1L) "a single treated unit" else "none",
            if (!is.null(best)) sprintf("`cutoff` = %s gives %d (the cohorts adopting from %s on, moved %d period(s) earlier).",
                                        format(best$cutoff), best$n, format(best$cutoff), shift)
            else "No cutoff gives two; this panel has too few treated units for a timing placebo.",
            .code = "PLACEBO_TOO_FEW")
  }
  keep <- pan$tt < cutoff & !drop_unit[pan$idc + 1L]
  p2 <- dd_placebo_redraw(pan, Gn, keep)
  dd_reuse$panel <- p2
  on.exit(dd_reuse$panel <- NULL)
  f <- suppressMessages(eval(cl, env))
  s <- dd_placebo_stat(f, term)
  list(estimate = s$est, std.error = s$se, p.value = s$p, fit = f, shift = shift, cutoff = cutoff,
       fake_dates = sort(unique(Gn[Gn > 0 & !drop_unit])), n_dropped_units = sum(drop_unit),
       n_fake_treated = n_fake, n_fake_clusters = if (is.null(ucl)) NULL else n_fake_cl,
       n_comparison = sum(!drop_unit & !fk),
       draws = data.frame(draw = 1L, estimate = s$est, std.error = s$se, p.value = s$p), failed = 0L)
}

# the cluster of each unit of the panel (first clustering variable), or NULL
# when the fit is not clustered beyond its units
dd_placebo_unit_clusters <- function(pan) {
  if (is.null(pan$cl) || identical(pan$cl, pan$idc)) return(NULL)
  cu <- pan$cl[dd_first_rows(pan$idc)]
  if (length(unique(cu)) == length(cu)) NULL else cu
}

# the cutoff (a period) whose timing placebo has the most fake-treated units
# (clusters), at least two; NULL if none has two
dd_placebo_best_cutoff <- function(G, tlev, shift, ucl) {
  best <- NULL
  for (cut in tlev[-(1:2)]) {
    pos <- match(G, tlev)
    fake <- ifelse(G > 0 & G >= cut, pos - shift, NA)
    if (any(!is.na(fake) & fake <= 1)) next          # (a cohort moved to the first period: an error)
    ok <- !is.na(fake) & tlev[pmax(fake, 1)] < cut
    n <- if (is.null(ucl)) sum(ok) else length(unique(ucl[ok]))
    if (n >= 2L && (is.null(best) || n > best$n)) best <- list(cutoff = cut, n = n)
  }
  best
}

dd_placebo_group <- function(cl, env, pan, u, term, ndraws, n_treated, alpha) {
  ndraws <- dd_check_count(ndraws, "ndraws", min = 1)
  G <- u$G
  ctrl <- which(G == 0)
  if (length(ctrl) < 2L)
    dd_stop("the group placebo draws fake treated units among the never-treated units; the fit has %d.", length(ctrl))
  gt <- G[G > 0]
  if (is.null(n_treated)) n_treated <- max(1L, min(length(ctrl) - 1L, round(length(ctrl) * length(gt) / length(G))))
  n_treated <- dd_check_count(n_treated, "n_treated", min = 1)
  if (n_treated >= length(ctrl))
    dd_stop("`n_treated` = %d leaves no never-treated comparison unit among the %d never-treated units.",
            n_treated, length(ctrl))
  keep <- (G == 0)[pan$idc + 1L]
  draws <- lapply(seq_len(ndraws), function(b) {
    Gn <- numeric(length(G))
    fake <- ctrl[sample.int(length(ctrl), n_treated)]
    Gn[fake] <- gt[sample.int(length(gt), n_treated, replace = n_treated > length(gt))]
    list(G = Gn, keep = keep)
  })
  r <- dd_placebo_run(cl, env, pan, term, draws, "group placebo draws")
  # a draw without a p-value (no standard error) is left out of the rate,
  # counted and warned about
  r$n_no_statistic <- sum(!is.finite(r$draws$p.value))
  r$rejection_rate <- if (r$n_no_statistic < nrow(r$draws))
    mean(r$draws$p.value[is.finite(r$draws$p.value)] < alpha) else NA_real_
  r$n_treated <- n_treated
  r
}

# number of distinct assignments of the multiset G to units (log scale)
dd_placebo_lcount <- function(G) lfactorial(length(G)) - sum(lfactorial(table(G)))

# every distinct arrangement of the multiset G (small counts only)
dd_placebo_enumerate <- function(G) {
  lv <- sort(unique(G)); cnt <- as.vector(table(factor(G, levels = lv)))
  out <- list(); cur <- numeric(length(G))
  rec <- function(pos) {
    if (pos > length(G)) { out[[length(out) + 1L]] <<- cur; return(invisible()) }
    for (j in seq_along(lv)) if (cnt[j] > 0L) {
      cnt[j] <<- cnt[j] - 1L; cur[pos] <<- lv[j]
      rec(pos + 1L)
      cnt[j] <<- cnt[j] + 1L
    }
  }
  rec(1L)
  out
}

# the signed permutation statistic of estimates and standard errors: t =
# est / se or the estimate; NA where there is none (missing or infinite
# estimate; for "t" also a missing, infinite or non-positive se)
dd_placebo_perm_stat <- function(est, se, statistic) {
  if (statistic == "estimate") return(ifelse(is.finite(est), est, NA_real_))
  ifelse(is.finite(est) & is.finite(se) & se > 0, est / se, NA_real_)
}

# the permutation p-value of the observed statistic s0 against the
# permutations' statistics s (NA: left out); exact: all assignments
# enumerated (the observed one among them)
dd_placebo_perm_p <- function(s0, s, exact) {
  s <- s[!is.na(s)]
  if (!length(s)) return(NA_real_)
  tol <- 1e-10 * max(1, abs(s0))
  hit <- sum(abs(s) >= abs(s0) - tol)
  if (exact) hit / length(s) else (1 + hit) / (1 + length(s))
}

dd_placebo_perm <- function(cl, env, pan, u, term, nperm, obs, statistic) {
  s0 <- dd_placebo_perm_stat(obs$est, obs$se, statistic)
  if (is.na(s0))
    dd_stop(if (statistic == "t")
              "`statistic` = \"t\" needs the standard error of the observed assignment, and the fit's estimator gives none with the draws' settings (estimate %s, standard error %s; the draws use analytic standard errors: nboot = 0, did_sdid's jackknife, did_trop's bootstrap with the fit's nboot). Use statistic = \"estimate\" (valid with equal error distributions across units) or refit so that a standard error exists."
            else "the fit's estimate is %s (standard error %s): there is no statistic to permute.",
            format(obs$est), format(obs$se))
  nperm <- dd_check_count(nperm, "nperm", min = 1)
  G <- u$G
  if (length(unique(G)) < 2L) dd_stop("every unit has the same treatment; there is nothing to permute.")
  lc <- dd_placebo_lcount(G)
  count <- exp(lc)
  if (nperm > count + 0.5)
    dd_stop("`nperm` = %d exceeds the %s distinct assignments of the treatment to the %d units; use nperm = %s to enumerate them all (an exact test) or fewer random draws.",
            nperm, format(round(count)), length(G), format(round(count)))
  exact <- abs(nperm - count) < 0.5
  if (exact && count > 1e5)
    dd_stop("`nperm` = %d: enumerating all %d assignments is not supported; use fewer draws.", nperm, round(count))
  assigns <- if (exact) dd_placebo_enumerate(G) else lapply(seq_len(nperm), function(b) G[sample.int(length(G))])
  r <- dd_placebo_run(cl, env, pan, term, lapply(assigns, function(g) list(G = g)), "permutation draws")
  r$draws$statistic <- dd_placebo_perm_stat(r$draws$estimate, r$draws$std.error, statistic)
  r$n_no_statistic <- sum(is.na(r$draws$statistic))
  if (r$n_no_statistic == nrow(r$draws))
    dd_stop("none of the %d permutations that ran gave a %s (%d stopped with an error); there is no permutation distribution.%s",
            nrow(r$draws), if (statistic == "t") "t statistic (a finite estimate and a positive standard error)"
            else "finite estimate", r$failed,
            if (statistic == "t") " Use statistic = \"estimate\" if the draws have estimates but no standard errors." else "")
  r$p.value <- dd_placebo_perm_p(s0, r$draws$statistic, exact)
  r$observed_statistic <- s0
  r$nperm <- nperm; r$exact <- exact; r$n_assignments <- count
  r$ok <- NULL
  r
}

dd_placebo_loo <- function(cl, env, pan, u, term, by) {
  by <- dd_match_arg(by[1], c("unit", "cohort"), "by")
  G <- u$G
  if (by == "unit") {
    tr <- which(G > 0)
    if (length(tr) < 2L) dd_stop("leave-one-out by unit needs at least two treated units; the fit has %d.", length(tr))
    draws <- lapply(tr, function(j) list(G = G, keep = pan$idc != j - 1L))
    left <- u$id[tr]
  } else {
    gl <- sort(unique(G[G > 0]))
    if (length(gl) < 2L) dd_stop("leave-one-out by cohort needs at least two treated cohorts; the fit has %d.", length(gl))
    draws <- lapply(gl, function(g) list(G = G, keep = (G != g)[pan$idc + 1L]))
    left <- gl
  }
  r <- dd_placebo_run(cl, env, pan, term, draws, "leave-one-out fits")
  r$draws$left_out <- left[r$ok]
  r$by <- by; r$ok <- NULL
  r
}
