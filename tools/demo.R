# `make demo`: a worked example on the data the package ships.
suppressPackageStartupMessages(library(diffdiff))
path <- system.file("extdata", "sim_panel.csv", package = "diffdiff")
d <- read.csv(path)
cat("Data:", path, "\n", nrow(d), "rows,", length(unique(d$id)), "units,",
    length(unique(d$year)), "years; cohorts", paste(sort(unique(d$first_treat)), collapse = ", "), "\n\n")

cat("== Static TWFE, clustered by unit ==\n")
fit <- did_twfe(d, yname = "y", idname = "id", tname = "year", dname = "treat", xformla = ~ x1)
print(fit)
cat("\n== summary() ==\n")
print(summary(fit))

cat("\n== Event study ==\n")
es <- did_event(d, yname = "y", idname = "id", tname = "year", gname = "first_treat",
                xformla = ~ x1)
print(es)

out <- file.path(getwd(), "demo-output")
dir.create(out, showWarnings = FALSE)
png_file <- file.path(out, "event_study.png")
grDevices::png(png_file, width = 900, height = 560, res = 110)
plot(es)
invisible(grDevices::dev.off())
cat("\nEvent-study plot written to:", normalizePath(png_file), "\n")
