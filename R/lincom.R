# Every aggregation of estimates is a linear combination: for estimates b
# with covariance V and a combination matrix S (one row per aggregate),
# the aggregates are S b with covariance S V S' (the delta method of a
# linear map). Influence-function estimators carry the combination instead
# (psi S' is never formed; see influence.R and aggregate.did_cs()).
dd_lincom <- function(b, V, S, terms = rownames(S)) {
  if (!is.matrix(S) || ncol(S) != length(b) || (!is.null(V) && !all(dim(V) == length(b))))
    stop("internal error: dd_lincom() got non-conformable arguments; please report", call. = FALSE)
  est <- drop(S %*% b)
  names(est) <- terms
  Vc <- if (is.null(V)) NULL else S %*% V %*% t(S)
  if (!is.null(Vc)) dimnames(Vc) <- list(terms, terms)
  list(estimate = est, vcov = Vc)
}
