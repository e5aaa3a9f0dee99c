# DID_M: the instantaneous effect of de Chaisemartin and D'Haultfoeuille
# (2020, AER), did_dcdh(estimand = "DID_M"), as DIDmultiplegt's
# did_multiplegt(mode = "old"). For each pair of consecutive periods (t - 1,
# t) and each treatment value d at t - 1, the groups whose treatment rises
# (falls) between t - 1 and t are compared with those whose treatment stays
# within `threshold_stable_treatment`; the switchers-weighted sum of those
# DIDs of the outcome, over the same sum for the treatment (a Wald ratio; the
# number of switchers with a binary treatment), is DID_M. Placebo k does the
# same with the outcome change k periods earlier, among groups whose
# treatment was stable over those k periods.
#
# Inference: DID_M = sum_r a_r dY_r / sum_r a_r dD_r over the rows r (group,
# period) of the comparisons, with a_r = 1 for a rising switcher, -1 for a
# falling one and (n_- - n_+) / n_0 for a stable group of the cell. Given
# the treatments, its influence function per group is sum_r a_r e_r / (sum_r
# a_r dD_r), e_r the outcome change recentred on its (cell, type) mean with
# the factor sqrt(n / (n - 1)) (a singleton: on the cell's mean, all types;
# alone in its cell: not recentred), as the dynamic estimator's analytic
# variance; summed within clusters. DIDmultiplegt reports bootstrap
# standard errors only.

# rows of the panel in (group, period) order: y, D, the group and the period
# code, the cluster code; returns the estimates, counts and the group (or
# cluster) influence functions
dd_dcdh_m_engine <- function(y, D, g, t, cl, placebo, thr) {
  n <- length(y)
  first <- c(TRUE, g[-1] != g[-n])
  lag1 <- function(v) { out <- c(NA, v[-n]); out[first] <- NA; out }
  lagk <- function(v, k) { for (j in seq_len(k)) v <- lag1(v); v }
  dY <- y - lag1(y); dD <- D - lag1(D); Dl <- lag1(D)
  nrow_g <- tabulate(g)[g]
  G <- max(g)
  one <- function(k) {
    use <- !is.na(dD) & !is.na(Dl) & t >= k + 2
    dy <- if (k == 0) dY else lagk(dY, k)
    if (k > 0) {
      for (j in seq_len(k)) { ld <- lagk(dD, j); use <- use & !is.na(ld) & abs(ld) <= thr }
      use <- use & nrow_g > k
    }
    use <- use & !is.na(dy)
    type <- ifelse(dD > thr, 1L, ifelse(dD < -thr, 3L, 2L))     # rise, stable, fall
    r <- which(use)
    cell <- dd_combo_codes(t[r], Dl[r])
    nc <- max(c(cell, 0L))
    cnt <- matrix(tabulate(cell + nc * (type[r] - 1L), 3L * nc), nc, 3)
    up <- cnt[, 1] > 0 & cnt[, 2] > 0; dn <- cnt[, 3] > 0 & cnt[, 2] > 0
    a <- numeric(length(r))
    ty <- type[r]
    a[ty == 1L] <- up[cell[ty == 1L]]
    a[ty == 3L] <- -dn[cell[ty == 3L]]
    st <- ty == 2L
    a[st] <- (dn[cell[st]] * cnt[cell[st], 3] - up[cell[st]] * cnt[cell[st], 1]) / cnt[cell[st], 2]
    num <- sum(a * dy[r]); den <- sum(a * dD[r])
    total <- sum(up * (cnt[, 1] + cnt[, 2]) + dn * (cnt[, 3] + cnt[, 2]) - (up & dn) * cnt[, 2])
    sw <- sum(up * cnt[, 1] + dn * cnt[, 3])
    # recentred outcome changes
    ct <- cell + nc * (ty - 1L)
    m_ct <- as.vector(rowsum(dy[r], ct, reorder = TRUE))[match(ct, sort(unique(ct)))]
    n_ct <- tabulate(ct, 3L * nc)[ct]
    m_c <- as.vector(rowsum(dy[r], cell, reorder = TRUE))[match(cell, sort(unique(cell)))]
    n_c <- tabulate(cell, nc)[cell]
    e <- ifelse(n_ct >= 2, (dy[r] - m_ct / n_ct) * sqrt(n_ct / pmax(n_ct - 1, 1)),
                ifelse(n_c >= 2, (dy[r] - m_c / n_c) * sqrt(n_c / pmax(n_c - 1, 1)), dy[r]))
    U <- numeric(G)
    if (length(r)) { s <- rowsum(a * e, g[r], reorder = TRUE); U[as.integer(rownames(s))] <- s }
    list(est = if (den != 0) num / den else NA_real_, U = G * U / den, N = total, switchers = sw)
  }
  res <- lapply(0:placebo, one)
  U <- vapply(res, `[[`, numeric(G), "U")
  U <- matrix(U, G)
  if (!is.null(cl)) U <- rowsum(U, cl[first], reorder = TRUE)
  list(est = vapply(res, `[[`, numeric(1), "est"), N = vapply(res, `[[`, numeric(1), "N"),
       switchers = vapply(res, `[[`, numeric(1), "switchers"), U = unname(U), G = G)
}

# the DID_M fit: terms DID_M, placebo_1, ...
dd_dcdh_m_fit <- function(p, d, placebo, thr, cl, sp, call, yname, idname, tname, cluster) {
  o <- order(p$idc, p$tc)
  g <- p$idc[o] + 1L; t <- p$tc[o] + 1L
  r <- dd_dcdh_m_engine(p$y[o], d[o], g, t, if (is.null(cl)) NULL else cl[o], placebo, thr)
  if (is.na(r$est[1]) || r$switchers[1] == 0)
    dd_stop("no group's treatment changes between two consecutive periods next to a group with the same treatment that stays stable: DID_M cannot be estimated.")
  terms <- c("DID_M", if (placebo) paste0("placebo_", seq_len(placebo)))
  est <- stats::setNames(r$est, terms)
  ok <- !is.na(est)
  U <- r$U; colnames(U) <- terms
  res <- dd_if_result(est, U, r$G, sp, which(ok), "DID_M influence functions",
                      sprintf("clustered (%s)", if (is.null(cluster)) idname else cluster), ok = ok)
  tab <- res$tab
  tab$n <- r$N; tab$switchers <- r$switchers
  notes <- if (any(!ok)) sprintf("%s: no comparison available.", paste(terms[!ok], collapse = ", ")) else character()
  info <- dd_info("did_dcdh", "de Chaisemartin-D'Haultfoeuille DID_M (did_dcdh)", yname,
                  length(p$y), if (sp$nboot > 0L) "bootstrap" else "cluster", res$label,
                  Inf, sp$alpha, terms, n_units = attr(p$idc, "nlev"), n_periods = attr(p$tc, "nlev"),
                  n_clusters = res$n_clusters, notes = notes, more = list(rules = "default"))
  new_dd_fit("did_dcdh", tab, est, res$V, info, call,
             list(crit = res$crit, nboot = sp$nboot, boot_weights = sp$boot_weights, cband = sp$cband, tname = tname,
                  estimand = "DID_M", inf = U))
}
