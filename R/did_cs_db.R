# did_cs() on a database table (R/dbi.R): without covariates and weights,
# every ATT(g,t) is a difference of cohort means of outcome changes, and
# the influence function of a unit is affine in its outcome path with
# coefficients that depend only on its cohort. For cell k = (g, t, base b)
# with comparison cohorts C (never treated, or not yet treated by the
# cell's threshold) and N units,
#   psi_ik = N [1{i in g} (dY_i - m_g) / n_g - 1{i in C} (dY_i - m_C) / n_C],
# dY_i = Y_it - Y_ib, m the means (the did formula of all three est_methods
# when the only covariate is the intercept: the propensity score and
# outcome-regression terms vanish). Within cohort h, psi_i = c_h + M_h'
# (Y_i - ybar_h), so the cross-products of the influence functions over the
# units of h are n_h c_h c_h' + M_h' Q_h M_h with Q_h the centred
# cross-moments of the outcome paths: the engine returns (n_h, ybar_h, Q_h)
# and the fit stores, per cohort, 1 + rank(Q_h) rows whose cross-products
# are those (c_h and the rows sqrt(lambda) v' M_h of Q_h's eigenvectors),
# an influence-function object (dd_ifs) that every analytic step (standard
# errors, the aggregations' covariances, the pre-test, vcov()) uses as it
# is. Clustered by a coarser cluster, the rows are the clusters' sums of
# psi, exact, from the engine's per cluster and cohort centred sums; the
# multiplier bootstrap of unclustered fits streams the units back in the
# in-memory fit's order (by cohort, the never treated last, then by
# identifier) and gives each the same multipliers (dd_db_if_boot).

dd_cs_db <- function(data, yname, idname, tname, gname, xformla, weightsname, panel, survey, call, s) {
  off <- list(xformla = xformla, weightsname = weightsname, survey = survey,
              panel = if (!isTRUE(panel)) panel, allow_unbalanced_panel = if (isTRUE(s$allow_unbalanced_panel)) TRUE,
              cband_method = if (s$cband && s$cband_method == "bootstrap-t") "bootstrap-t")
  off <- off[!vapply(off, is.null, logical(1))]
  if (length(off))
    dd_db_in_memory(data, sprintf("did_cs(%s = %s)", names(off)[1],
                                  if (inherits(off[[1]], "survey.design")) "<a survey design>" else dd_show(off[[1]])))
  cl <- s$cluster
  if (!is.null(cl)) {
    if (inherits(cl, "formula")) cl <- all.vars(cl)
    if (!is.character(cl) || anyNA(cl)) dd_stop("`cluster` must be a column name; got %s.", dd_show(cl))
    cl <- setdiff(cl, idname)
    if (length(cl) > 1L)
      dd_stop("`cluster` can name one variable besides `idname` (as did's `clustervars`); got %s.", dd_show(cl))
    if (!length(cl)) cl <- NULL
  }
  s$cluster <- cl
  roles <- list(yname = yname, idname = idname, tname = tname, gname = gname, cluster = cl)
  src <- dd_db_open(data, roles, "did_cs")
  chk <- dd_db_check_panel(src, roles)
  ant <- s$anticipation
  periods <- chk$periods
  # the cohort rules on the cohorts' values, weighted by their units
  dd_check_not_indicator(chk$g, periods, gname)
  never <- dd_cohort_never(chk$g, periods, gname, tname, ant, count = chk$n)
  g0 <- ifelse(never, 0, chk$g)
  co <- dd_cs_cohorts(g0, never, periods, ant, s$control_group, "units", count = chk$n)
  tl <- periods[co$tkeep]
  T <- length(tl)
  never_sql <- sprintf("(dd_G IS NULL OR dd_G = 0 OR dd_G > %s)", dd_db_lit(max(periods) + ant))
  drop_sql <- sprintf("(dd_G IS NOT NULL AND dd_G <> 0 AND dd_G <= %s)", dd_db_lit(periods[1] + ant))
  units_sql <- dd_db_units_sql(src, tl, never_sql, drop_sql)
  mom <- dd_db_moments(src, units_sql, T, cluster = !is.null(cl))
  n_miss <- sum(chk$n[co$keep]) - sum(mom$n)
  if (n_miss > 0)
    warning(sprintf("%s units are missing in some periods; converting to a balanced panel by dropping them (as did does).",
                    format(n_miss)), call. = FALSE)
  # blocks by cohort, the never treated last (the in-memory order)
  bval <- ifelse(mom$g == 0, Inf, mom$g)
  o <- order(bval)
  bval <- bval[o]; nb_units <- mom$n[o]; ybar <- mom$mean[o, , drop = FALSE]; Q <- mom$Q[, , o, drop = FALSE]
  dd_cs_small(ifelse(is.finite(bval), bval, 0), 0, s$control_group, count = nb_units)
  N <- sum(nb_units)
  if (N <= .Machine$integer.max) N <- as.integer(N)        # (as the in-memory fit's unit count)
  cells <- dd_cs_cells(tl, co$glist, ant, s$base_period, s$control_group)
  lin <- dd_cs_db_cells(cells, bval, nb_units, ybar, N, s$est_method)
  clusters <- NULL
  if (is.null(cl)) {
    inf <- dd_cs_db_rows(lin, Q, nb_units)
    attr(inf, "db_stream") <- list(src = src, units_sql = units_sql, T = T, bval = bval, ybar = ybar,
                                   C = lin$C, M = lin$M, N = N, chunk = 65536L)
  } else {
    cs <- mom$clusters
    cc <- dd_sorted_codes(cs$c)
    G <- attr(cc, "nlev")
    if (G < 2L)
      dd_stop("`cluster` has a single cluster in the estimation sample; clustered standard errors need at least two.",
              .code = "ONE_CLUSTER")
    b <- match(ifelse(cs$g == 0, Inf, cs$g), bval)
    P <- matrix(0, G, ncol(lin$C))
    for (r in seq_along(b))
      P[cc[r] + 1L, ] <- P[cc[r] + 1L, ] + cs$n[r] * lin$C[b[r], ] + drop(cs$s[r, ] %*% matrix(lin$M[, , b[r]], T, ncol(lin$C)))
    inf <- dd_ifs_dense(P)
    clusters <- G
  }
  attr(inf, "db") <- TRUE
  glist <- sort(unique(cells$g))
  prep <- list(n = N, nobs = if (as.double(N) * T <= .Machine$integer.max) as.integer(N * T) else as.double(N) * T, tlist = tl, unit_cluster = NULL, unit_group = NULL, unit_weight = NULL,
               units = NULL, notes = co$notes, panel = TRUE, n_clusters = clusters,
               cohort_n = list(g = ifelse(is.finite(bval), bval, 0), n = nb_units),
               db = list(class = class(data)[1], rows = chk$n_rows))
  dd_cs_finish(lin$r, inf, cells, prep, NULL, yname, call, s)
}

# The cells' estimates and the affine maps of their influence functions:
# per block (cohort) b, C[b, ] (the value at the block's mean path) and
# M[, , b] (T x columns: the coefficients on the centred outcome path), over
# the K cells and then the cohort-share columns (1 for the units of the
# cohort, as the in-memory engine stores its unit weights there).
dd_cs_db_cells <- function(cells, bval, n, ybar, N, est_method) {
  K <- length(cells$g); glist <- sort(unique(cells$g)); J <- length(glist)
  nb <- length(bval); T <- ncol(ybar)
  C <- matrix(0, nb, K + J); M <- array(0, c(T, K + J, nb))
  att <- numeric(K); status <- integer(K); n_cell <- integer(K)
  for (k in seq_len(K)) {
    ti <- cells$idx[k, 2] + 1L; bi <- cells$idx[k, 3] + 1L
    if (ti == bi) next                               # a universal base period's reference cell: 0
    tr <- which(bval == cells$g[k])
    ctl <- which((!is.finite(bval) | bval > cells$thr[k]) & bval != cells$g[k])
    nt <- if (length(tr)) n[tr] else 0; nc <- sum(n[ctl])
    n_cell[k] <- as.integer(nt + nc)
    if (nt == 0 || nc == 0) { att[k] <- NA_real_; status[k] <- 4L; next }
    if (est_method != "reg" && nt / (nt + nc) >= 0.995)
      dd_stop("in cell ATT(%s,%s) the treated units are %.1f%% of the sample, so the propensity score reaches did's trimming bound (0.995); with a database table did_cs() handles this only with est_method = \"reg\". collect() the table, or use est_method = \"reg\".",
              format(cells$g[k]), format(cells$t[k]), 100 * nt / (nt + nc))
    dm <- ybar[, ti] - ybar[, bi]
    mc <- sum(n[ctl] * dm[ctl]) / nc
    att[k] <- dm[tr] - mc
    M[ti, k, tr] <- N / nt; M[bi, k, tr] <- -N / nt
    M[ti, k, ctl] <- -N / nc; M[bi, k, ctl] <- N / nc
    C[ctl, k] <- -N * (dm[ctl] - mc) / nc
  }
  for (j in seq_len(J)) C[bval == glist[j], K + j] <- 1
  list(r = list(att = att, status = status, n_cell = n_cell, n_trim = integer(K)), C = C, M = M)
}

# Rows whose cross-products are the units' (see the top of the file): per
# block, sqrt(n_b) C[b, ] and sqrt(lambda) v' M_b for the eigenpairs of
# Q_b (those above rounding).
dd_cs_db_rows <- function(lin, Q, n) {
  nb <- length(n); J <- ncol(lin$C)
  start <- 0L; cols <- list(); vals <- list()
  for (b in seq_len(nb)) {
    e <- eigen(Q[, , b], symmetric = TRUE)
    keep <- e$values > max(e$values, 0) * 1e-13 & e$values > 0
    R <- t(e$vectors[, keep, drop = FALSE]) * sqrt(e$values[keep])
    P <- rbind(sqrt(n[b]) * lin$C[b, ], R %*% matrix(lin$M[, , b], nrow(Q), J))
    used <- which(colSums(P != 0) > 0)
    cols[[b]] <- as.integer(used - 1L)
    vals[[b]] <- P[, used, drop = FALSE]
    start <- c(start, start[length(start)] + nrow(P))
  }
  dd_ifs(start[length(start)], J, start, cols, vals)
}

# The multiplier bootstrap draws (nboot x columns `cols`) of a database
# fit's influence functions (dd_if_boot() summarises them): the units streamed in the in-memory order, each chunk's influence-function
# rows formed from its outcome paths and bootstrapped with the multipliers
# of their rows among all N (C_ifs_boot's rowinfo), the chunks' draws
# summed. The same seed draw as dd_boot_batches, so the draws equal the
# in-memory fit's up to rounding.
dd_db_if_boot <- function(st, nboot, boot_weights, cols) {
  seed <- dd_boot_seed()
  type <- dd_boot_types[[boot_weights]]
  draws <- matrix(0, nboot, length(cols))
  seen <- 0
  ycols <- paste0("dd_y", seq_len(st$T))
  dd_db_stream(st$src, st$units_sql, st$T, function(ch) {
    b <- match(ifelse(ch$dd_g == 0, Inf, ch$dd_g), st$bval)
    if (anyNA(b)) dd_stop("internal error: the database returned a unit of an unknown cohort; please report.")
    Y <- matrix(as.double(unlist(ch[ycols], use.names = FALSE)), nrow(ch))
    P <- matrix(0, nrow(ch), length(cols))
    for (h in unique(b)) {
      i <- which(b == h)
      Yc <- Y[i, , drop = FALSE] - rep(st$ybar[h, ], each = length(i))
      P[i, ] <- Yc %*% matrix(st$M[, cols, h], st$T, length(cols)) + rep(st$C[h, cols], each = length(i))
    }
    draws <<- draws + .Call(C_ifs_boot, dd_ifs_dense(P), seq_along(cols) - 1L, as.integer(nboot), type, NULL, NULL,
                            seed, 0L, c(seen, st$N))
    seen <<- seen + nrow(ch)
  }, chunk = st$chunk)
  if (seen != st$N)
    dd_stop("internal error: the database returned %s units for the bootstrap, %s expected; please report.",
            format(seen), format(st$N))
  draws
}
