# `make demo`: a worked example on the data the package ships: staggered
# adoption (Callaway-Sant'Anna -> event study -> plot -> sensitivity), then
# the regression estimators.
suppressPackageStartupMessages(library(diffdiff))
path <- system.file("extdata", "sim_panel.csv", package = "diffdiff")
d <- read.csv(path)
cat("Data:", path, "\n", nrow(d), "rows,", length(unique(d$id)), "units,",
    length(unique(d$year)), "years; cohorts", paste(sort(unique(d$first_treat)), collapse = ", "), "\n\n")

cat("== Callaway-Sant'Anna group-time effects, aggregated to an event study ==\n")
cs <- did_cs(d, yname = "y", idname = "id", tname = "year", gname = "first_treat", base_period = "universal")
es <- aggregate(cs, type = "dynamic")
print(es)
cat("\n== One overall ATT ==\n")
print(aggregate(cs, type = "simple"))
cat("\n== Sensitivity to violations of parallel trends (Rambachan-Roth) ==\n")
print(honest_did(es, type = "SD", M = c(0, 0.01, 0.02)))

cat("\n== Static TWFE, clustered by unit ==\n")
print(summary(did_twfe(d, yname = "y", idname = "id", tname = "year", dname = "treat", xformla = ~ x1)))

out <- file.path(getwd(), "demo-output")
dir.create(out, showWarnings = FALSE)
png_file <- file.path(out, "event_study.png")
grDevices::png(png_file, width = 900, height = 560, res = 110)
plot(es)
invisible(grDevices::dev.off())
cat("\nEvent-study plot written to:", normalizePath(png_file), "\n")
