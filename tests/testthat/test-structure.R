# The code base's size rules (issue 35): no R file over 600 lines, no
# top-level function over 150 lines (counted from its parsed source).

test_that("no R file is over 600 lines and no function over 150", {
  root <- source_root("R/timing.R")
  files <- list.files(file.path(root, "R"), "\\.R$", full.names = TRUE)
  n <- vapply(files, function(f) length(readLines(f)), 1L)
  expect_identical(basename(files[n > 600]), character())
  long <- unlist(lapply(files, function(f) {
    ex <- parse(f, keep.source = TRUE)
    sr <- attr(ex, "srcref")
    out <- character()
    for (i in seq_along(ex)) {
      e <- ex[[i]]
      if (is.call(e) && is.name(e[[1]]) && as.character(e[[1]]) %in% c("<-", "=") && is.call(e[[3]]) &&
          identical(e[[3]][[1]], as.name("function"))) {
        len <- sr[[i]][3] - sr[[i]][1] + 1L
        if (len > 150L) out <- c(out, sprintf("%s: %s (%d lines)", basename(f), deparse(e[[2]])[1], len))
      }
    }
    out
  }))
  expect_identical(long, character())
})

test_that("every help page names R files that exist (man/ regenerated after a split)", {
  root <- source_root("R/timing.R")
  rd <- list.files(file.path(root, "man"), "\\.Rd$", full.names = TRUE)
  stale <- unlist(lapply(rd, function(f) {
    h <- grep("^% Please edit documentation in", readLines(f, n = 3L, warn = FALSE), value = TRUE)
    src <- trimws(strsplit(sub("^% Please edit documentation in ", "", h), ",")[[1]])
    src <- src[nzchar(src)]
    miss <- src[!file.exists(file.path(root, src))]
    if (length(miss)) return(sprintf("%s: %s", basename(f), paste(miss, collapse = ", ")))
    # the page's topic is defined or documented in one of those files
    nm <- sub("^\\\\name\\{(.*)\\}$", "\\1", grep("^\\\\name\\{", readLines(f, warn = FALSE), value = TRUE)[1])
    txt <- unlist(lapply(file.path(root, src), readLines, warn = FALSE))
    pat <- c(sprintf("^`?%s`?\\s*(<-|=)", nm), sprintf("@(rdname|name|aliases)\\s+.*\\b%s\\b", nm),
             sprintf("^\"%s\"$", nm), "\"_PACKAGE\"")
    if (!any(vapply(pat, function(p) any(grepl(p, txt, perl = TRUE)), logical(1))))
      sprintf("%s: %s not found in %s", basename(f), nm, paste(src, collapse = ", "))
  }))
  expect_identical(stale, NULL)
})
