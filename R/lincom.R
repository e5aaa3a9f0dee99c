# Every aggregation of estimates is a linear combination: for estimates b
# with covariance V and a combination matrix S (one row per aggregate),
# the aggregates are S b with covariance S V S' (the delta method of a
# linear map) and, when the estimates come with influence-function rows psi
# (rows x length(b)), influence functions psi S'. did_cs's block-sparse
# influence functions carry the combination instead (never formed; see
# influence.R and aggregate.did_cs()).
dd_lincom <- function(b, V, S, terms = rownames(S), ifs = NULL) {
  if (!is.matrix(S) || ncol(S) != length(b) || (!is.null(V) && !all(dim(V) == length(b))) ||
      (!is.null(ifs) && ncol(ifs) != length(b)))
    stop("internal error: dd_lincom() got non-conformable arguments; please report", call. = FALSE)
  est <- drop(S %*% b)
  names(est) <- terms
  Vc <- if (is.null(V)) NULL else S %*% V %*% t(S)
  if (!is.null(Vc)) dimnames(Vc) <- list(terms, terms)
  list(estimate = est, vcov = Vc, ifs = if (is.null(ifs)) NULL else ifs %*% t(S))
}
