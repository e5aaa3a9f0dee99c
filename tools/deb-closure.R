# Prints the Debian packages (r-cran-*) that can stand in for the CRAN packages
# that the given packages need and that are not installed: every package of
# the recursive Depends/Imports/LinkingTo closure that Debian packages in a
# version meeting every requirement the closure states for it. The rest is
# left to install.packages(), which compiles it. Used by tools/install-deps.sh.
# Usage: Rscript tools/deb-closure.R "pkg pkg ..."
pkgs <- strsplit(commandArgs(TRUE)[1], " +")[[1]]
pkgs <- pkgs[nzchar(pkgs)]
a <- utils::available.packages(repos = getOption("repos"))
fields <- c("Depends", "Imports", "LinkingTo")
cl <- unique(c(pkgs, unlist(tools::package_dependencies(pkgs, db = a, which = fields, recursive = TRUE))))
cl <- setdiff(cl, rownames(utils::installed.packages(priority = "base")))
cl <- cl[!vapply(cl, function(p) nzchar(system.file(package = p)), logical(1))]
cl <- intersect(cl, rownames(a))
if (!length(cl)) quit(status = 0)
# the version each closure member asks of each dependency
req <- list()
for (p in intersect(unique(c(pkgs, unlist(tools::package_dependencies(pkgs, db = a, which = fields, recursive = TRUE)))), rownames(a))) {
  for (f in fields) {
    s <- a[p, f]
    if (is.na(s)) next
    for (e in trimws(strsplit(gsub("\n", " ", s), ",")[[1]])) {
      m <- regmatches(e, regexec("^([A-Za-z0-9.]+)\\s*\\(\\s*>=?\\s*([^)]+)\\)", e))[[1]]
      if (length(m) == 3) req[[m[2]]] <- c(req[[m[2]]], trimws(m[3]))
    }
  }
}
deb <- paste0("r-cran-", tolower(cl))
out <- suppressWarnings(system2("apt-cache", c("policy", deb), stdout = TRUE, stderr = FALSE))
cand <- setNames(rep(NA_character_, length(deb)), deb)
cur <- NULL
for (l in out) {
  if (grepl("^\\S.*:$", l)) cur <- sub(":$", "", l)
  else if (!is.null(cur) && grepl("^\\s+Candidate:", l)) cand[cur] <- trimws(sub("^\\s+Candidate:", "", l))
}
ok <- character()
for (i in seq_along(cl)) {
  v <- cand[deb[i]]
  if (is.na(v) || v == "(none)") next
  v <- sub("^[0-9]+:", "", v)            # epoch
  v <- sub("-[^-]*$", "", v)             # Debian revision
  v <- sub("[+~].*$", "", v)             # +dfsg and the like
  need <- req[[cl[i]]]
  good <- tryCatch(all(vapply(need, function(r) package_version(v) >= package_version(r), logical(1))),
                   error = function(e) FALSE)
  if (good) ok <- c(ok, deb[i])
}
cat(ok, sep = "\n")
