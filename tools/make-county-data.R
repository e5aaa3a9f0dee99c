# Regenerates inst/extdata/sim_county.csv: a simulated county panel with the
# layout of the did package's mpdta (500 counties, 2003-2007, cohorts 2004,
# 2006 and 2007, never-treated counties, log population), made by
# dd_sim_county() with its defaults. Simulated numbers only: nothing of mpdta
# (GPL-2) is used. Run from the repository root with the package installed:
#   Rscript tools/make-county-data.R
# tests/testthat/test-simulate-county.R checks that the file is this output.
set.seed(20030507)
d <- diffdiff::dd_sim_county()
for (v in c("lpop", "lemp", "effect_true")) d[[v]] <- round(d[[v]], 6)
write.csv(d, "inst/extdata/sim_county.csv", row.names = FALSE)
