# src/diffdiff.h lists every function with external linkage under a comment
# naming the file that defines it ("/* ifs.c ... */"), and nothing else: the
# contributor's map of the C code. Reads the sources (src_dir(), helper-src.R).

# names of functions defined at file scope without `static` (a definition:
# a line starting with a return type whose parameter list is followed by `{`)
c_definitions <- function(file) {
  src <- paste(readLines(file, warn = FALSE), collapse = "\n")
  src <- gsub("/\\*.*?\\*/", " ", src, perl = TRUE)      # comments
  src <- gsub("(?m)^#.*$", " ", src, perl = TRUE)          # preprocessor lines
  re <- "(?m)^([A-Za-z_][A-Za-z0-9_ \\*]*?)\\b([A-Za-z_][A-Za-z0-9_]*)\\s*\\(([^;{}()]|\\([^;{}()]*\\))*\\)\\s*\\{"
  m <- regmatches(src, gregexpr(re, src, perl = TRUE))[[1]]
  hd <- sub("\\(.*", "", m)
  nm <- sub(".*\\b([A-Za-z_][A-Za-z0-9_]*)\\s*$", "\\1", hd)
  keep <- !grepl("^\\s*static\\b", hd) & !nm %in% c("if", "for", "while", "switch")
  unique(nm[keep])
}

# header: the names a line pattern `pick` finds (NULL: none), by the file
# comment ("/* ifs.c ... */") they sit under
header_names <- function(file, pick) {
  cur <- NA_character_
  out <- list()
  for (ln in readLines(file, warn = FALSE)) {
    f <- regmatches(ln, regexec("^/\\* ([a-z_]+\\.c)\\b", ln))[[1]]
    if (length(f)) { cur <- f[2]; next }
    nm <- pick(ln)
    if (!is.null(nm)) out[[length(out) + 1L]] <- c(name = nm, file = cur)
  }
  if (!length(out)) return(data.frame(name = character(), file = character()))
  as.data.frame(do.call(rbind, out), stringsAsFactors = FALSE)
}

# header: prototype names
header_prototypes <- function(file) header_names(file, function(ln) {
  p <- regmatches(ln, regexec("^[A-Za-z_][A-Za-z0-9_ \\*]*?\\b([A-Za-z_][A-Za-z0-9_]*)\\(", ln))[[1]]
  if (length(p) && !grepl("^(static|typedef|#)", ln)) p[2]
})

# definitions (name, file) against the header's declarations (name, file):
# every definition declared, under its own file, and no declaration without
# a definition (stale)
expect_declared_under <- function(defs, hdr) {
  m <- match(defs$name, hdr$name)
  expect_identical(defs$name[is.na(m)], character())
  wrong <- !is.na(m) & hdr$file[m] != defs$file
  expect_identical(sprintf("%s in %s declared under %s", defs$name[wrong], defs$file[wrong], hdr$file[m][wrong]),
                   character())
  expect_identical(setdiff(hdr$name, defs$name), character())
}

test_that("every exported C function is declared in diffdiff.h under the file that defines it", {
  dir <- src_dir()
  hp <- header_prototypes(file.path(dir, "diffdiff.h"))
  files <- setdiff(list.files(dir, "\\.c$"), "init.c")
  defs <- do.call(rbind, lapply(files, function(f)
    data.frame(name = c_definitions(file.path(dir, f)), file = rep(f, length(c_definitions(file.path(dir, f)))),
               stringsAsFactors = FALSE)))
  expect_gt(nrow(defs), 50)
  expect_declared_under(defs, hp)
  expect_identical(hp$name[duplicated(hp$name)], character())   # declared once
})

# data with external linkage (a file-scope definition with an initializer and
# without `static`, such as rng.c's dd_webb_values) is declared `extern` in
# diffdiff.h under the file that defines it, like the functions above
c_data_definitions <- function(file) {
  src <- paste(readLines(file, warn = FALSE), collapse = "\n")
  src <- gsub("/\\*.*?\\*/", " ", src, perl = TRUE)
  src <- gsub("(?m)^#.*$", " ", src, perl = TRUE)
  re <- "(?m)^(?:const\\s+)?[A-Za-z_][A-Za-z0-9_]*\\s+\\**([A-Za-z_][A-Za-z0-9_]*)\\s*(?:\\[[^]\\n]*\\])*\\s*="
  m <- regmatches(src, gregexpr(re, src, perl = TRUE))[[1]]
  m <- m[!grepl("^(static|typedef|return)\\b", m)]
  unique(sub("^.*?([A-Za-z_][A-Za-z0-9_]*)\\s*(?:\\[[^]]*\\])*\\s*=$", "\\1", m, perl = TRUE))
}

header_externs <- function(file) header_names(file, function(ln) {
  p <- regmatches(ln, regexec("^extern\\b.*?\\b([A-Za-z_][A-Za-z0-9_]*)\\s*(\\[[^]]*\\])*\\s*;", ln, perl = TRUE))[[1]]
  if (length(p)) p[2]
})

test_that("every external data definition is declared extern in diffdiff.h under its file", {
  dir <- src_dir()
  he <- header_externs(file.path(dir, "diffdiff.h"))
  files <- setdiff(list.files(dir, "\\.c$"), "init.c")
  defs <- do.call(rbind, lapply(files, function(f) {
    nm <- c_data_definitions(file.path(dir, f))
    data.frame(name = nm, file = rep(f, length(nm)), stringsAsFactors = FALSE)
  }))
  expect_true("dd_webb_values" %in% defs$name)   # the scan finds the one table there is
  expect_declared_under(defs, he)
})
