# Regenerates inst/extdata/sim_panel.csv, the simulated staggered-adoption panel
# the package ships for examples, the demo and the vignette.
# Run from the repository root: Rscript tools/make-data.R
set.seed(20261129)
n_units <- 300L; years <- 2001:2010
cohorts <- c(0, 2004, 2006, 2008)
unit <- data.frame(id = seq_len(n_units),
                   state = sample(1:30, n_units, replace = TRUE),
                   first_treat = sample(cohorts, n_units, replace = TRUE, prob = c(0.4, 0.2, 0.2, 0.2)),
                   alpha_i = rnorm(n_units, 0, 2),
                   x2 = round(rnorm(n_units), 4),
                   w = round(runif(n_units, 0.5, 2), 3))
d <- merge(unit, data.frame(year = years), by = NULL)
d <- d[order(d$id, d$year), ]
gamma_t <- setNames(0.3 * (years - 2001) + rnorm(length(years), 0, 0.5), years)
d$x1 <- round(0.5 * d$x2 + rnorm(nrow(d)), 4)
treated <- d$first_treat > 0 & d$year >= d$first_treat
e <- ifelse(d$first_treat > 0, d$year - d$first_treat, NA)
effect <- ifelse(treated, 1 + 0.5 * e, 0)
d$treat <- as.integer(treated)
d$y <- round(d$alpha_i + gamma_t[as.character(d$year)] + 0.8 * d$x1 + effect +
               rnorm(nrow(d), 0, 1), 4)
d <- d[, c("id", "year", "state", "first_treat", "treat", "y", "x1", "x2", "w")]
write.csv(d, "inst/extdata/sim_panel.csv", row.names = FALSE)
