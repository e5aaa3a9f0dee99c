# did_2x2() on a database table (R/dbi.R): the regression y ~ treat + post
# + treat:post is saturated in the four (treat, post) cells, so its
# coefficients are functions of the cell means and its variances of the
# cells' counts and centred sums of squares (and, clustered, each cluster's
# centred sums per cell): the engine returns those (a first pass for the
# cell means, a second for the sums centred at them), with the in-memory
# conventions of dd_vcov() (K = 4 parameters; G - 1 degrees of freedom
# when clustered).

dd_2x2_db <- function(data, yname, treatname, postname, xformla, weightsname, cluster, vcov, alpha, nboot, survey,
                      call) {
  dd_db_reg_unsupported(data, "did_2x2", xformla, weightsname, NULL, survey, nboot, vcov)
  alpha <- dd_check_alpha(alpha)
  if (inherits(cluster, "formula")) cluster <- all.vars(cluster)
  if (length(cluster) > 1L) dd_db_in_memory(data, sprintf("did_2x2(cluster = %s) (two-way clustering)", dd_show(cluster)))
  vtype <- dd_resolve_vcov(vcov, cluster, "hetero")
  if (vtype != "cluster") cluster <- NULL
  roles <- list(yname = yname, treatname = treatname, postname = postname, cluster = cluster)
  src <- dd_db_open(data, roles, "did_2x2")
  c <- src$col
  chk <- names(c)
  s <- dd_db_get(src, sprintf("SELECT COUNT(*) AS n_rows, %s, %s AS bad_tr, %s AS bad_po FROM %s",
                              paste(sprintf("%s AS na_%s", dd_db_count_if(paste(unlist(c), "IS NULL")), chk), collapse = ", "),
                              dd_db_count_if(sprintf("%s NOT IN (0, 1)", c$treatname)),
                              dd_db_count_if(sprintf("%s NOT IN (0, 1)", c$postname)), src$from))
  if (s$n_rows == 0) dd_stop("`data` (a database table) has no rows.")
  for (r in chk) if (s[[paste0("na_", r)]] > 0)
    dd_stop("`%s` = \"%s\" is missing (NULL) in %s row(s) of the database table; filter them out first (dplyr::filter(!is.na(%s))).",
            r, roles[[r]], format(s[[paste0("na_", r)]]), roles[[r]])
  if (s$bad_tr > 0) dd_stop("`treatname` = \"%s\" must be 0/1; %s row(s) of the database table have other values.", treatname, format(s$bad_tr))
  if (s$bad_po > 0) dd_stop("`postname` = \"%s\" must be 0/1; %s row(s) of the database table have other values.", postname, format(s$bad_po))
  y <- src$num(c$yname)
  cell <- sprintf("(%s + 2 * %s)", src$num(c$treatname), src$num(c$postname))  # 0..3: (treat, post) = (0,0), (1,0), (0,1), (1,1)
  m1 <- dd_db_get(src, sprintf("SELECT %s AS dd_k, COUNT(*) AS dd_n, SUM(%s) AS dd_s FROM %s GROUP BY %s", cell, y, src$from, cell))
  nk <- numeric(4); sk <- numeric(4)
  nk[m1$dd_k + 1] <- m1$dd_n; sk[m1$dd_k + 1] <- m1$dd_s
  tr_all <- sum(nk[c(2, 4)]) == sum(nk); tr_none <- sum(nk[c(2, 4)]) == 0
  if (tr_all) dd_stop("`treatname` = \"%s\" is 1 in every row: there is no control group.", treatname)
  if (tr_none) dd_stop("`treatname` = \"%s\" is 0 in every row: there is no treated group.", treatname)
  if (sum(nk[3:4]) == 0 || sum(nk[3:4]) == sum(nk))
    dd_stop("`postname` = \"%s\" takes only the value %d: a 2x2 design needs pre and post periods.", postname,
            as.integer(sum(nk[3:4]) > 0))
  if (any(nk == 0)) {
    k <- which(nk == 0)[1] - 1L
    dd_stop("the (%s = %d, %s = %d) cell has no observations; a 2x2 design needs all four.", treatname, k %% 2L,
            postname, k %/% 2L)
  }
  mk <- sk / nk
  dev <- sprintf("(%s - CASE %s END)", y, paste(sprintf("WHEN %s = %d THEN %s", cell, 0:3, dd_db_lit(mk)), collapse = " "))
  m2 <- dd_db_get(src, sprintf("SELECT %s AS dd_k, SUM(%s * %s) AS dd_ss FROM %s GROUP BY %s", cell, dev, dev, src$from, cell))
  ssk <- numeric(4); ssk[m2$dd_k + 1] <- m2$dd_ss
  n <- dd_db_count(sum(nk))
  # the cells' regressors (intercept, treat, post, ATT) and the coefficients
  Xk <- cbind(1, c(0, 1, 0, 1), c(0, 0, 1, 1), c(0, 0, 0, 1))
  nm <- c("(Intercept)", treatname, postname, "ATT")
  B <- solve(crossprod(Xk, nk * Xk))
  beta <- drop(B %*% crossprod(Xk, sk))
  ssr <- sum(ssk)
  K <- 4L
  G <- NULL
  if (vtype == "iid") {
    V <- B * ssr / (n - K); df <- n - K; label <- "IID"
  } else if (vtype %in% c("hetero", "HC0")) {
    V <- B %*% crossprod(Xk, ssk * Xk) %*% B * (if (vtype == "hetero") n / (n - K) else 1)
    df <- n - K
    label <- if (vtype == "hetero") "Heteroskedasticity-robust (HC1)" else "Heteroskedasticity-robust (HC0)"
  } else {
    cs <- dd_db_get(src, sprintf("SELECT %s AS dd_c, %s AS dd_k, SUM(%s) AS dd_e FROM %s GROUP BY %s, %s", c$cluster, cell,
                                 dev, src$from, c$cluster, cell))
    cc <- dd_sorted_codes(cs$dd_c); G <- attr(cc, "nlev")
    dd_check_nclusters(G, cluster)
    S <- matrix(0, G, 4)
    for (i in seq_len(nrow(cs))) S[cc[i] + 1L, ] <- S[cc[i] + 1L, ] + cs$dd_e[i] * Xk[cs$dd_k[i] + 1L, ]
    V <- B %*% crossprod(S) %*% B * (G / (G - 1)) * ((n - 1) / (n - K))
    V <- (V + t(V)) / 2
    df <- G - 1
    dd_warn_few_clusters_counts(length(unique(cc[cs$dd_k == 3])), length(unique(cc[cs$dd_k %in% c(0, 2)])),
                                sprintf("`cluster` = \"%s\"", cluster), boot = TRUE)
    G <- stats::setNames(G, cluster)
    label <- sprintf("Clustered (%s)", cluster)
  }
  dimnames(V) <- list(nm, nm)
  b <- stats::setNames(beta, nm)
  tab <- dd_coef_table(b, sqrt(diag(V)), df, alpha)
  tss <- sum(ssk) + sum(nk * (mk - sum(sk) / n)^2)
  info <- dd_info("did_2x2", "2x2 difference-in-differences (did_2x2)", yname, dd_db_count(n), vtype, label, df, alpha,
                  "ATT", n_clusters = G, fe_names = NULL, dropped = character(), notes = character(),
                  more = list(fe_sizes = NULL, r2 = 1 - ssr / tss, r2_within = NULL, wild_boot = NULL, n_singletons = 0L,
                              fe_iter = NULL, cr2_path = NULL, residuals = NULL, fitted.values = NULL,
                              db = list(class = class(data)[1], rows = s$n_rows)))
  new_dd_fit("did_2x2", tab, b, V, info, call)
}
