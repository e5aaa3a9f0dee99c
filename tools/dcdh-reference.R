# Reference numbers for tests/testthat/test-parity-dcdh.R: DIDmultiplegtDYN
# 2.2.0 (the newest release that runs without the polars package; see
# tools/install-dcdh.sh) on the panel inst/extdata/reversible_panel.csv, which
# this script also writes (set.seed(20261201)). Writes
# tests/testthat/ref-dcdh.csv: one row per case and reported quantity
# (Effect_l, Placebo_l, Av_tot_eff) with the estimate, standard error, N and
# number of switchers, and the joint tests' p-values as rows p_jointeffects,
# p_jointplacebo and (case rev) p_equality_effects. With `by` or `by_path`,
# one case per level or path, named "case|level".
# Usage: Rscript tools/dcdh-reference.R [LIB]   (LIB: where install-dcdh.sh put it; default /tmp/lib-dcdh)
args <- commandArgs(TRUE)
lib <- if (length(args)) args[1] else "/tmp/lib-dcdh"
.libPaths(c(lib, .libPaths()))
options(rgl.useNULL = TRUE)
suppressPackageStartupMessages(library(DIDmultiplegtDYN))
stopifnot(packageVersion("DIDmultiplegtDYN") == "2.2.0")
# DIDmultiplegt's mode "old" (DID_M) needs dplyr attached (it calls dplyr
# helpers unqualified), and tools/install-dcdh.sh's one-line fix
suppressPackageStartupMessages({library(DIDmultiplegt); library(dplyr)})
stopifnot(packageVersion("DIDmultiplegt") == "2.1.0")

# the panel: 120 groups x 10 periods
set.seed(20261201)
G <- 120; TT <- 10
d <- expand.grid(t = seq_len(TT), id = seq_len(G))[, c("id", "t")]
type <- rep(c("never", "on", "always", "off"), c(20, 60, 15, 25))
first <- rep(Inf, G)
first[type == "on"] <- sample(3:9, 60, TRUE)
first[type == "off"] <- sample(3:8, 25, TRUE)
back <- rep(Inf, G)                                   # some switchers switch back
k <- sample(which(type %in% c("on", "off")), 25)
back[k] <- first[k] + sample(2:3, 25, TRUE)
base <- as.integer(type %in% c("always", "off"))
sw <- d$t >= first[d$id] & d$t < back[d$id]
# absorbing staggered adoption (the "on" and "never" groups, no return)
d$D_abs <- as.integer(type[d$id] == "on" & d$t >= first[d$id])
# reversible binary: switchers in and out, some switch back
d$D_rev <- ifelse(base[d$id] == 1, as.integer(!sw), as.integer(sw))
# three levels: the reversible path scaled by 1 or 2, some steps of one level
lev <- sample(1:2, G, TRUE)
d$D_multi <- d$D_rev * lev[d$id] + as.integer(type[d$id] == "on" & d$t >= first[d$id] + 2 & lev[d$id] == 1 &
                                                d$id %% 3 == 0)
d$x <- round(rnorm(nrow(d)) + 0.1 * d$t, 4)
d$region <- (d$id - 1) %% 3 + 1
d$cl <- (d$id - 1) %/% 10 + 1                          # 12 clusters of 10 groups
d$w <- round(runif(G, 0.5, 2)[d$id], 4)
alpha <- rnorm(G); lambda <- seq(0, 2, length.out = TT)
eff <- 1 + 0.3 * pmax(0, d$t - first[d$id])
eff[!is.finite(eff)] <- 1
d$y <- round(alpha[d$id] + lambda[d$t] + 0.2 * d$region * d$t / TT + 0.5 * d$x + d$D_rev * eff +
               0.4 * d$D_multi + rnorm(nrow(d), sd = 0.5), 4)
d$keep_unbal <- as.integer(runif(nrow(d)) > 0.05)     # the unbalanced case drops 5% of rows
d$x2 <- round(0.5 * d$x + rnorm(nrow(d)) + 0.02 * d$t^2, 4)   # a second control (not in y)
# missing values: the reversible treatment missing in ~6% of rows (some
# inside spells, some at switches), the outcome in ~5% of other rows
d$D_na <- ifelse(runif(nrow(d)) < 0.06, NA, d$D_rev)
d$y_na <- ifelse(runif(nrow(d)) < 0.05, NA, d$y)
d$xg <- round(rnorm(G), 3)[d$id]                      # a group-level covariate (predict_het)
d$D_cont <- d$D_multi + round(runif(nrow(d), -0.04, 0.04), 3)   # near-continuous (threshold_stable_treatment)
out_dir <- file.path("tests", "testthat")
write.csv(d, file.path("inst", "extdata", "reversible_panel.csv"), row.names = FALSE)

cases <- list(
  abs          = list(D = "D_abs", effects = 4, placebo = 3),
  rev          = list(D = "D_rev", effects = 4, placebo = 3, effects_equal = TRUE),
  multi        = list(D = "D_multi", effects = 4, placebo = 3),
  multi_norm   = list(D = "D_multi", effects = 4, placebo = 3, normalized = TRUE),
  rev_in       = list(D = "D_rev", effects = 3, placebo = 2, switchers = "in"),
  rev_out      = list(D = "D_rev", effects = 3, placebo = 2, switchers = "out"),
  controls     = list(D = "D_rev", effects = 3, placebo = 2, controls = "x"),
  trends_lin   = list(D = "D_rev", effects = 3, placebo = 2, trends_lin = TRUE),
  trends_np    = list(D = "D_rev", effects = 3, placebo = 2, trends_nonparam = "region"),
  unbal        = list(D = "D_rev", effects = 4, placebo = 3, subset = TRUE),
  weight_cl    = list(D = "D_rev", effects = 4, placebo = 3, weight = "w", cluster = "cl"),
  never_only   = list(D = "D_rev", effects = 3, placebo = 2, only_never_switchers = TRUE),
  same_sw      = list(D = "D_rev", effects = 4, placebo = 3, same_switchers = TRUE),
  same_sw_pl   = list(D = "D_rev", effects = 3, placebo = 2, same_switchers = TRUE, same_switchers_pl = TRUE),
  less_cons    = list(D = "D_rev", effects = 3, placebo = 2, less_conservative_se = TRUE),
  controls_abs = list(D = "D_abs", effects = 3, placebo = 2, controls = "x"),
  controls2    = list(D = "D_multi", effects = 3, placebo = 2, controls = c("x", "x2"), weight = "w",
                      cluster = "cl"),
  controls_tl  = list(D = "D_rev", effects = 3, placebo = 2, controls = c("x", "x2"), trends_lin = TRUE),
  controls_unb = list(D = "D_rev", effects = 3, placebo = 2, controls = "x", subset = TRUE),
  by_region    = list(D = "D_rev", effects = 3, placebo = 1, by = "region"),
  by_path      = list(D = "D_multi", effects = 2, placebo = 1, by_path = -1),
  by_path2     = list(D = "D_rev", effects = 2, placebo = 1, by_path = 2, cluster = "cl"),
  d_missing    = list(D = "D_na", effects = 3, placebo = 2),
  y_missing    = list(D = "D_na", Y = "y_na", effects = 3, placebo = 2, cluster = "cl")
)
# one result ($results of the peer) as rows of the reference table
one <- function(r, nm) {
  tab <- function(m, prefix) {
    if (is.null(m)) return(NULL)
    m <- as.matrix(m)
    data.frame(case = nm, term = if (prefix == "Av_tot_eff") prefix else paste0(prefix, "_", seq_len(nrow(m))),
               estimate = m[, "Estimate"], se = m[, "SE"], n = m[, "N"], switchers = m[, "Switchers"],
               row.names = NULL)
  }
  p <- function(v, term) if (is.null(v)) NULL else
    data.frame(case = nm, term = term, estimate = as.numeric(v), se = NA, n = NA, switchers = NA)
  rbind(tab(r$Effects, "Effect"), tab(r$Placebos, "Placebo"), tab(r$ATE, "Av_tot_eff"),
        p(r$p_jointeffects, "p_jointeffects"), p(r$p_jointplacebo, "p_jointplacebo"),
        p(r$p_equality_effects, "p_equality_effects"))
}
rows <- list()
for (nm in names(cases)) {
  a <- cases[[nm]]
  dat <- if (isTRUE(a$subset)) d[d$keep_unbal == 1, ] else d
  a$subset <- NULL
  D <- a$D; a$D <- NULL
  Y <- if (is.null(a$Y)) "y" else a$Y; a$Y <- NULL
  res <- suppressMessages(suppressWarnings(do.call(did_multiplegt_dyn, c(list(df = dat, outcome = Y, group = "id",
                                                                            time = "t", treatment = D,
                                                                            graph_off = TRUE), a))))
  # by / by_path: one case per level, named "case|level"
  rows[[nm]] <- if (is.null(res$by_levels)) one(res$results, nm)
    else do.call(rbind, lapply(seq_along(res$by_levels), function(b)
      one(res[[paste0("by_level_", b)]]$results, paste0(nm, "|", res$by_levels[b]))))
  cat(nm, ":", nrow(rows[[nm]]), "rows\n")
}
ref <- do.call(rbind, rows)
write.csv(ref, file.path(out_dir, "ref-dcdh.csv"), row.names = FALSE)   # 15 significant digits
cat("wrote", file.path(out_dir, "ref-dcdh.csv"), "\n")

# predict_het: the regressions of the groups' effects on group-level
# covariates, to tests/testthat/ref-dcdh-het.csv (one row per case, effect
# (negative: placebo) and covariate)
het_cases <- list(
  het1 = list(D = "D_rev", effects = 3, placebo = 2, predict_het = list(c("xg", "w"), c(1, 2))),
  het2 = list(D = "D_multi", effects = 2, placebo = 1, predict_het = list("xg", -1), weight = "w"),
  het3 = list(D = "D_rev", effects = 2, placebo = 0, predict_het = list(c("xg", "w"), -1),
              trends_nonparam = "region")
)
het <- do.call(rbind, lapply(names(het_cases), function(nm) {
  a <- het_cases[[nm]]; D <- a$D; a$D <- NULL
  r <- suppressMessages(suppressWarnings(do.call(did_multiplegt_dyn, c(list(df = d, outcome = "y", group = "id",
                                                                          time = "t", treatment = D,
                                                                          graph_off = TRUE), a))))$results
  h <- r$predict_het
  data.frame(case = nm, effect = h$effect, covariate = h$covariate, estimate = h$Estimate, se = h$SE, t = h$t,
             lb = h$LB, ub = h$UB, n = h$N, pF = h$pF, row.names = NULL)
}))
write.csv(het, file.path(out_dir, "ref-dcdh-het.csv"), row.names = FALSE)
cat("wrote", file.path(out_dir, "ref-dcdh-het.csv"), "\n")

# DID_M (DIDmultiplegt 2.1.0, mode "old"): estimates, N and switchers, and
# for the first two cases its bootstrap standard errors (brep = 250 draws of
# groups, or of clusters; seed 20261202; its bootstrap takes about a second
# a draw) to tests/testthat/ref-dcdh-m.csv
m_cases <- list(
  m_rev = list(D = "D_rev", placebo = 2, brep = 250),
  m_multi = list(D = "D_multi", placebo = 2, cluster = "cl", brep = 250),
  m_na = list(D = "D_na", placebo = 1),
  m_unbal = list(D = "D_rev", placebo = 2, subset = TRUE),
  m_cont = list(D = "D_cont", placebo = 1, threshold_stable_treatment = 0.1)
)
grDevices::pdf(NULL)                                  # its bootstrap draws a plot
mref <- do.call(rbind, lapply(names(m_cases), function(nm) {
  a <- m_cases[[nm]]
  dat <- if (isTRUE(a$subset)) d[d$keep_unbal == 1, ] else d
  a$subset <- NULL
  D <- a$D; a$D <- NULL
  set.seed(20261202)
  r <- do.call(did_multiplegt, c(list(mode = "old", df = dat, Y = "y", G = "id", T = "t", D = D), a))
  k <- c("effect", if (a$placebo > 0) paste0("placebo_", seq_len(a$placebo)))
  data.frame(case = nm, term = k, estimate = as.numeric(unlist(r[k])),
             boot_se = if (is.null(a$brep)) NA else as.numeric(unlist(r[paste0("se_", k)])),
             n = unlist(r[paste0("N_", k)]),
             switchers = c(r[["N_switchers_effect"]], rep(NA, length(k) - 1)), row.names = NULL)
}))
invisible(grDevices::dev.off())
write.csv(mref, file.path(out_dir, "ref-dcdh-m.csv"), row.names = FALSE)
cat("wrote", file.path(out_dir, "ref-dcdh-m.csv"), "\n")
