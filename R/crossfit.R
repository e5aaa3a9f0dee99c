# The cross-fitting layer (issue 43): folds by sampling unit, stratified and
# reproducible; the nuisance learners (linear and logit on the package's
# least-squares and IRLS engines, lasso through glmnet, random forests
# through ranger, or the user's functions); out-of-fold predictions; and
# the median rule over repeated splits (Chernozhukov et al. 2018, sec. 3.4).
# did_dml() is built on it.

# Folds for units with strata `strata` (one value per unit): within each
# stratum (in sorted order of the values) the members in a random order are
# dealt to folds 1..K, the dealing carrying on from one stratum to the next,
# so that fold sizes differ by at most one overall and within each stratum.
# K = 1: every unit in fold 1 (no cross-fitting). Draws from R's generator.
dd_cf_folds <- function(strata, K) {
  n <- length(strata)
  if (K == 1L) return(rep(1L, n))
  f <- integer(n)
  cursor <- 0L
  for (s in sort(unique(strata))) {
    m <- which(strata == s)
    m <- m[sample.int(length(m))]
    f[m] <- (cursor + seq_along(m) - 1L) %% K + 1L
    cursor <- (cursor + length(m)) %% K
  }
  f
}

# Run expr with R's generator set by `seed` (NULL: the session's stream, as
# it is), restoring the caller's stream afterwards
dd_with_seed <- function(seed, expr) {
  if (is.null(seed)) return(expr)
  had <- exists(".Random.seed", envir = globalenv(), inherits = FALSE)
  old <- if (had) get(".Random.seed", envir = globalenv(), inherits = FALSE)
  on.exit(if (had) assign(".Random.seed", old, envir = globalenv()) else
            rm(".Random.seed", envir = globalenv()), add = TRUE)
  set.seed(seed)
  expr
}

dd_cf_learner_names <- c("linear", "lasso", "forest")

# A learner: list(name, fit) where fit(x, y, w, x_new, type) returns the
# predictions at x_new; type "regression" (the outcome model) or
# "classification" (the propensity: probabilities of y = 1). `spec`: one of
# "linear" (least squares / logit), "lasso", "forest", or a function(x, y, w,
# x_new, type) (x: a numeric matrix without intercept; w: weights).
dd_cf_learner <- function(spec, arg = "learner") {
  if (is.function(spec)) {
    f <- function(x, y, w, x_new, type) {
      p <- spec(x, y, w, x_new, type)
      if (!is.numeric(p) || length(p) != nrow(x_new) || any(!is.finite(p)))
        dd_stop("the `%s` function returned %s; it must return %d finite predictions (one per row of x_new).",
                arg, dd_show(p), nrow(x_new))
      if (type == "classification" && any(p < 0 | p > 1))
        dd_stop("the `%s` function returned propensities outside [0, 1] (%s).", arg, format(range(p)))
      as.double(p)
    }
    return(list(name = "user", fit = f))
  }
  name <- dd_match_arg(spec, dd_cf_learner_names, arg)
  if (name == "lasso" && !requireNamespace("glmnet", quietly = TRUE))
    dd_stop("`%s` = \"lasso\" needs the glmnet package; install it (Debian: r-cran-glmnet).", arg)
  if (name == "forest" && !requireNamespace("ranger", quietly = TRUE))
    dd_stop("`%s` = \"forest\" needs the ranger package; install it (Debian: r-cran-ranger).", arg)
  list(name = name, fit = switch(name, linear = dd_cf_linear, lasso = dd_cf_lasso, forest = dd_cf_forest))
}

# The two nuisances' learners from `learner`: one spec for both, or a list
# with elements `outcome` and `propensity`
dd_cf_learners <- function(learner) {
  if (is.list(learner) && !is.function(learner)) {
    if (!setequal(names(learner), c("outcome", "propensity")))
      dd_stop("`learner` as a list needs exactly the elements `outcome` and `propensity`; got %s.",
              dd_show(names(learner)))
    return(list(outcome = dd_cf_learner(learner$outcome, "learner$outcome"),
                propensity = dd_cf_learner(learner$propensity, "learner$propensity")))
  }
  list(outcome = dd_cf_learner(learner), propensity = dd_cf_learner(learner))
}

# least squares (the regression engine: collinear columns dropped as lm)
# or logit (IRLS on it), with an intercept
dd_cf_linear <- function(x, y, w, x_new, type) {
  if (!ncol(x)) {
    # intercept only: the weighted mean (the logit MLE is the weighted share)
    m <- sum(w * y) / sum(w)
    return(rep(m, nrow(x_new)))
  }
  if (is.null(colnames(x))) colnames(x) <- paste0("x", seq_len(ncol(x)))
  b <- if (type == "regression") suppressMessages(dd_regress(y, x, w = w))$coef
       else suppressMessages(dd_glm(y, cbind("(Intercept)" = 1, x), w = w, family = "logit"))$reg$coef
  eta <- drop(cbind(1, x_new) %*% dd_coef_full(b, c("(Intercept)", colnames(x))))
  if (type == "regression") eta else stats::plogis(eta)
}

# coefficients by name on the columns `cols`, 0 for a column dropped as
# collinear (NA) or left out of the fit (dd_glm() may return only the kept
# columns)
dd_coef_full <- function(b, cols) {
  out <- stats::setNames(numeric(length(cols)), cols)
  b <- b[!is.na(b)]
  out[names(b)] <- b
  out
}

dd_cf_lasso <- function(x, y, w, x_new, type) {
  fam <- if (type == "regression") "gaussian" else "binomial"
  nf <- min(10L, length(y))
  fit <- glmnet::cv.glmnet(x, y, weights = w, family = fam, foldid = sample(rep_len(seq_len(nf), length(y))))
  as.vector(stats::predict(fit, newx = x_new, s = "lambda.min", type = "response"))
}

dd_cf_forest <- function(x, y, w, x_new, type) {
  colnames(x) <- colnames(x_new) <- paste0("x", seq_len(ncol(x)))
  seed <- sample.int(.Machine$integer.max, 1L)
  if (type == "regression") {
    fit <- ranger::ranger(x = x, y = y, case.weights = w, num.trees = 500, seed = seed, num.threads = 1)
    return(stats::predict(fit, data = x_new, num.threads = 1)$predictions)
  }
  fit <- ranger::ranger(x = x, y = factor(y, levels = c(0, 1)), case.weights = w, num.trees = 500,
                        probability = TRUE, seed = seed, num.threads = 1)
  stats::predict(fit, data = x_new, num.threads = 1)$predictions[, "1"]
}

# Out-of-fold predictions: for each fold k, the learner fitted on the
# training rows (`train`) outside fold k predicts the rows of fold k; with
# one fold, fitted on all training rows and predicting every row. x: n x p
# matrix; y, w: n; folds: n fold numbers
dd_cf_predict <- function(learner, x, y, w, train, folds, type) {
  out <- numeric(length(y))
  K <- max(folds)
  for (k in seq_len(K)) {
    tr <- train & (if (K == 1L) TRUE else folds != k)
    at <- if (K == 1L) rep(TRUE, length(y)) else folds == k
    if (!any(at)) next
    out[at] <- learner$fit(x[tr, , drop = FALSE], y[tr], w[tr], x[at, , drop = FALSE], type)
  }
  out
}

# The median rule over S repeated splits (rows of est and v: estimates and
# their variances, one column per estimate): the median estimate, and the
# median of each split's variance plus its squared distance from that
# median (Chernozhukov et al. 2018, eq. 3.7)
dd_cf_median <- function(est, v) {
  est <- as.matrix(est); v <- as.matrix(v)
  med <- apply(est, 2, stats::median)
  list(est = med, var = vapply(seq_len(ncol(est)), function(j) stats::median(v[, j] + (est[, j] - med[j])^2), 0))
}
