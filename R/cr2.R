# CR2: the Bell-McCaffrey bias-reduced cluster-robust variance with
# Satterthwaite degrees of freedom (Pustejovsky and Tipton 2018), as
# clubSandwich computes it for a linear model with its fixed effects as
# dummies (working model: independent, equal variances), from the fitted
# regression with the fixed effects absorbed.
#
# Notation: X~ the regressors demeaned on the fixed effects, M = (X~'WX~)^-1
# (the bread), r the residuals, w the weights. The hat matrix of the whole
# model (fixed effects included) is split exactly as H = H1 + R C R' W:
# H1 projects on the indicators of one fixed effect f1 that is nested in the
# clusters (closed form: within-level weighted means), R = [F~, X~] with F~
# the other fixed effects' indicators demeaned within f1 (without a nested
# fixed effect: all indicators, not demeaned) and C = blockdiag((F~'WF~)^+,
# M). Per cluster j, G_j = the j-th diagonal block of (I - H)(I - H)'
# (unweighted: I - H_jj), A_j = G_j^(-1/2) (eigenvalues <= 1e-12 set to zero,
# clubSandwich's pseudo-inverse), and V = sum_j M X~_j' W_j A_j r_j r_j' A_j
# W_j X~_j M (no other factor). For a contrast c, gamma_j = c' M X~_j' W_j
# A_j and the degrees of freedom are (tr P)^2 / ||P||_F^2 with P[j, l] =
# gamma_j' [(I - H)(I - H)']_jl gamma_l; because f1 is nested in the
# clusters, P is a diagonal plus a form of rank 2 q (q = columns of R), so
# no J x J or n x n matrix is formed.

# The structure the variance and every contrast's degrees of freedom need.
# reg: a dense dd_regress() / dd_glm() fit; cl: dd_codes() of the clusters;
# name: the column they come from (the user's `cluster`, or `idname` when
# clustering by unit is the default), named by the error for one cluster.
dd_cr2_prep <- function(reg, cl, name) {
  if (!is.null(reg$cells)) stop("internal error: CR2 needs dense regressors; please report", call. = FALSE)
  n <- reg$n
  J <- attr(cl, "nlev")
  dd_check_nclusters(J, name)
  w <- if (is.null(reg$w)) rep(1, n) else reg$w
  weighted <- !is.null(reg$w)
  Xd <- reg$Xd
  M <- reg$bread
  fe <- reg$fe_codes
  # f1: the largest fixed effect nested in the clusters
  nested <- vapply(fe, function(f) dd_nested(f, cl), logical(1))
  fp <- dd_fe_split(fe, w, nested, "`vcov` = \"CR2\": the fixed effects not nested in the clusters",
                    "cluster on a variable that nests the largest fixed effect (e.g. the unit)")
  f1 <- fp$f1; g1 <- fp$g1; Wg <- fp$Wg; Sg <- fp$Sg; F2 <- fp$F2; C2 <- fp$C2
  R <- cbind(F2, Xd)
  q <- ncol(R)
  C <- matrix(0, q, q)
  if (!is.null(C2)) C[seq_len(nrow(C2)), seq_len(nrow(C2))] <- C2
  ip <- (q - ncol(Xd)) + seq_len(ncol(Xd))
  C[ip, ip] <- M
  K <- crossprod(R, w^2 * R)
  Q <- if (!is.null(f1) && weighted) rowsum(w^2 * R, g1, reorder = TRUE) else NULL
  # per cluster: A_j and M X~_j' W_j A_j (stored by rows of the data)
  o <- order(cl)
  st <- c(0L, cumsum(tabulate(cl + 1L, J)))
  Gam <- matrix(0, ncol(Xd), n)
  V <- matrix(0, ncol(Xd), ncol(Xd))
  exact <- 0L
  # unweighted, with f1 nested (or no fixed effects): a large cluster's
  # I - H_jj is the identity but on span(f1's indicators in the cluster)
  # (eigenvalue 0, orthogonal to X~) and span(R_j) (eigenvalues 1 - s^2, s
  # the singular values of R_j L, C = L L'), so A_j X~_j comes from a thin
  # SVD in O(n_j q^2) instead of an n_j x n_j eigen-decomposition
  dense_max <- getOption("diffdiff.cr2_dense_max", 200L)
  ec <- eigen((C + t(C)) / 2, symmetric = TRUE)
  L <- ec$vectors[, ec$values > 0, drop = FALSE] %*% diag(sqrt(ec$values[ec$values > 0]), sum(ec$values > 0))
  npath <- c(dense = 0L, lowrank = 0L)
  for (j in seq_len(J)) {
    i <- o[(st[j] + 1L):st[j + 1L]]
    nj <- length(i)
    Rj <- R[i, , drop = FALSE]; wj <- w[i]
    if (!weighted && nj > dense_max) {
      sv <- svd(Rj %*% L, nv = 0L)
      lam <- 1 - sv$d^2
      ph <- ifelse(lam > 1e-12, 1 / sqrt(pmax(lam, 1e-12)), 0)
      Xj <- Xd[i, , drop = FALSE]
      AX <- Xj + sv$u %*% ((ph - 1) * crossprod(sv$u, Xj))      # A_j X~_j
      gj <- M %*% t(AX)
      Gam[, i] <- gj
      V <- V + tcrossprod(gj %*% reg$resid[i])
      npath[["lowrank"]] <- npath[["lowrank"]] + 1L
      next
    }
    npath[["dense"]] <- npath[["dense"]] + 1L
    Bj <- Rj %*% C
    H <- Bj %*% t(Rj * wj)
    same <- if (!is.null(f1)) outer(g1[i], g1[i], "==") else NULL
    if (!is.null(f1)) H <- H + same * rep(wj / Wg[g1[i]], each = nj)
    G <- if (!weighted) diag(nj) - H
         else {
           Kjj <- Bj %*% K %*% t(Bj)
           if (!is.null(f1)) {
             Tj <- Q[g1[i], , drop = FALSE] / Wg[g1[i]]
             Kjj <- Kjj + same * (Sg[g1[i]] / Wg[g1[i]]^2) + Tj %*% t(Bj) + Bj %*% t(Tj)
           }
           diag(nj) - H - t(H) + Kjj
         }
    ev <- eigen((G + t(G)) / 2, symmetric = TRUE)
    ph <- ifelse(ev$values > 1e-12, 1 / sqrt(pmax(ev$values, 1e-12)), 0)
    if (all(ph == 0)) exact <- exact + 1L
    Aj <- ev$vectors %*% (ph * t(ev$vectors))
    gj <- M %*% t(Xd[i, , drop = FALSE] * wj) %*% Aj
    Gam[, i] <- gj
    cj <- gj %*% reg$resid[i]
    V <- V + tcrossprod(cj)
  }
  if (exact > 0L)
    warning(sprintf("`vcov` = \"CR2\": %d cluster%s residuals that the model fits exactly (e.g. one observation with its own fixed effect): %s nothing to the variance (as clubSandwich).",
                    exact, if (exact > 1L) "s have" else " has", if (exact > 1L) "they add" else "it adds"),
            call. = FALSE)
  dimnames(V) <- dimnames(M)
  list(V = V, path = npath, Gam = Gam, R = R, C = C, K = K, Q = Q, cl = cl, J = J, g1 = if (is.null(f1)) NULL else g1,
       Wg = Wg, Sg = Sg, w = w, weighted = weighted, unit_cluster = if (is.null(f1)) NULL
       else { u <- dd_first_rows(f1); cl[u][order(f1[u])] })
}

# Satterthwaite degrees of freedom of the contrasts in the rows of S (each
# a vector over the coefficients of the fit).
dd_cr2_df <- function(pr, S) {
  S <- matrix(S, ncol = nrow(pr$Gam))
  cl1 <- pr$cl + 1L
  vapply(seq_len(nrow(S)), function(k) {
    ga <- drop(S[k, ] %*% pr$Gam)                        # gamma, by row of the data
    e <- as.vector(rowsum(ga^2, cl1, reorder = TRUE))
    Tm <- 0
    if (!is.null(pr$g1)) {
      a <- as.vector(rowsum(ga, pr$g1, reorder = TRUE))   # per level of f1 (one cluster each)
      b <- as.vector(rowsum(pr$w * ga, pr$g1, reorder = TRUE))
      at <- a / pr$Wg
      uc <- pr$unit_cluster + 1L
      e <- e + as.vector(rowsum(-2 * b * at + at^2 * pr$Sg, uc, reorder = TRUE))[seq_len(pr$J)]
      if (pr$weighted) Tm <- t(rowsum(at * pr$Q, uc, reorder = TRUE))
    }
    Rho <- t(rowsum(pr$R * ga, cl1, reorder = TRUE))       # q x J
    Sig <- if (pr$weighted) t(rowsum(pr$R * (pr$w * ga), cl1, reorder = TRUE)) else Rho
    Lam <- pr$C %*% Rho
    Del <- Sig - Tm
    h <- colSums(Lam * (pr$K %*% Lam)) - 2 * colSums(Del * Lam)
    q <- nrow(Lam)
    Psi <- rbind(Lam, Del)
    Gm <- tcrossprod(Psi)
    N <- rbind(cbind(pr$K, -diag(q)), cbind(-diag(q), matrix(0, q, q)))
    NG <- N %*% Gm
    trP <- sum(e) + sum(h)
    fro <- sum(e^2) + 2 * sum(e * h) + sum(NG * t(NG))
    trP^2 / fro
  }, numeric(1))
}

# The fixed effects' part of the hat matrix, split as in dd_cr2_prep(): f1
# the fixed effect with the most levels among `eligible` (closed form:
# within-level weighted means; its level sums of w and w^2, Wg and Sg), F2
# the other fixed effects' indicators demeaned within f1 (all of them, not
# demeaned, without f1) and C2 the pseudo-inverse of F2'WF2 (eigenvalues
# below 1e-10 of the largest dropped). `what`/`fix`: the error when F2 would
# have more than 3,000 columns.
dd_fe_split <- function(fe, w, eligible, what, fix) {
  n <- length(w)
  nlev <- vapply(fe, function(f) attr(f, "nlev"), integer(1))
  k1 <- if (any(eligible)) which(eligible)[which.max(nlev[eligible])] else integer()
  f1 <- if (length(k1)) fe[[k1]] else NULL
  others <- setdiff(seq_along(fe), k1)
  q2 <- sum(nlev[others])
  if (q2 > 3000L) dd_stop("%s have %d levels (more than 3,000); %s.", what, q2, fix)
  g1 <- Wg <- Sg <- NULL
  if (!is.null(f1)) {
    g1 <- f1 + 1L
    Wg <- as.vector(rowsum(w, g1, reorder = TRUE))
    Sg <- as.vector(rowsum(w^2, g1, reorder = TRUE))
  }
  F2 <- NULL
  if (length(others)) {
    F2 <- do.call(cbind, lapply(others, function(k) {
      D <- matrix(0, n, nlev[k]); D[cbind(seq_len(n), fe[[k]] + 1L)] <- 1; D
    }))
    if (!is.null(f1)) F2 <- F2 - (rowsum(w * F2, g1, reorder = TRUE) / Wg)[g1, , drop = FALSE]
  }
  C2 <- NULL
  if (!is.null(F2)) {
    A2 <- crossprod(F2, w * F2)
    e2 <- eigen((A2 + t(A2)) / 2, symmetric = TRUE)
    pos <- e2$values > max(e2$values) * 1e-10
    C2 <- e2$vectors[, pos, drop = FALSE] %*% (t(e2$vectors[, pos, drop = FALSE]) / e2$values[pos])
  }
  list(f1 = f1, g1 = g1, Wg = Wg, Sg = Sg, F2 = F2, C2 = C2)
}

# The diagonal of the hat matrix H = X (X'WX)^-1 X' W of a dense fit, its
# fixed effects included (as dummies): h_i = w_i (1 / Wg[f1_i] + F2_i' C2
# F2_i + x~_i' M x~_i), the three projections being orthogonal (f1: the
# fixed effect with the most levels). For HC2 and HC3.
dd_hat_diag <- function(reg) {
  if (!is.null(reg$cells)) stop("internal error: leverages need dense regressors; please report", call. = FALSE)
  w <- if (is.null(reg$w)) rep(1, reg$n) else reg$w
  h <- rowSums((reg$Xd %*% reg$bread) * reg$Xd)
  fe <- reg$fe_codes
  if (length(fe)) {
    fp <- dd_fe_split(fe, w, rep(TRUE, length(fe)), "`vcov` = \"HC2\" or \"HC3\": the fixed effects other than the largest",
                      "use vcov = \"hetero\" (HC1) or cluster")
    h <- h + 1 / fp$Wg[fp$g1]
    if (!is.null(fp$F2)) h <- h + rowSums((fp$F2 %*% fp$C2) * fp$F2)
  }
  w * h
}
