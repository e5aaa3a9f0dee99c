# R-level parallel loops go through dd_lapply() (R/threads.R): forked on
# unix when cores > 1, in this process otherwise, the same results either way.

test_that("dd_lapply gives lapply's results on one core and on forked processes", {
  f <- function(i) list(i = i, sq = i^2, pid = Sys.getpid())
  seq1 <- diffdiff:::dd_lapply(1:7, f, 1L)
  expect_identical(lapply(seq1, `[`, c("i", "sq")), lapply(lapply(1:7, f), `[`, c("i", "sq")))
  expect_true(all(vapply(seq1, `[[`, 0, "pid") == Sys.getpid()))
  n0 <- diffdiff:::dd_forks$n
  expect_identical(diffdiff:::dd_lapply(1, f, 2L)[[1]]$pid, Sys.getpid())   # one element: no fork
  expect_identical(diffdiff:::dd_forks$n, n0)
  skip_on_os("windows")
  par <- diffdiff:::dd_lapply(1:7, f, 2L)
  expect_identical(diffdiff:::dd_forks$n, n0 + 1L)
  expect_identical(lapply(par, `[`, c("i", "sq")), lapply(seq1, `[`, c("i", "sq")))
  expect_false(any(vapply(par, `[[`, 0, "pid") == Sys.getpid()))   # the forked path ran
  # an error in a child is raised again, with its message
  g <- function(i) if (i == 5) stop("element five failed") else i
  expect_error(diffdiff:::dd_lapply(1:6, g, 2L), "element five failed")
  expect_error(diffdiff:::dd_lapply(1:6, g, 1L), "element five failed")
})

test_that("no R file but R/threads.R forks or starts workers itself", {
  rdir <- file.path(source_root("R/threads.R"), "R")
  fns <- c("mclapply", "mcparallel", "mcMap", "mcmapply", "pvec", "parLapply", "parSapply", "parApply",
           "clusterApply", "clusterMap", "makeCluster", "makeForkCluster", "makePSOCKcluster", "future_lapply")
  hits <- character()
  for (f in list.files(rdir, "[.]R$", full.names = TRUE)) {
    pd <- utils::getParseData(parse(f, keep.source = TRUE))
    h <- pd$text[pd$token == "SYMBOL_FUNCTION_CALL" & pd$text %in% fns]
    if (length(h)) hits <- c(hits, paste(basename(f), h))
  }
  # (the forked loop, and the loop on the caller's future plan)
  expect_identical(hits, c("threads.R mclapply", "threads.R future_lapply"))
})
