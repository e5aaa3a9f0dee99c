# Memory-safety rules of the C sources (rchk-style hazards) that no result
# can show, checked where they can be.

# setAttrib(x, install(...), ScalarInteger(k)): the scalar is unprotected
# while install() and setAttrib() may allocate, so a garbage collection there
# can free it (rchk reports this). Guards the fix in bootstrap.c, panel.c and
# survey.c: the value is PROTECTed first. A static check of the sources
# (src_dir(), helper-src.R: the source tree or R CMD check's unpacked tarball).
test_that("no setAttrib() call allocates its value in its own argument list", {
  src <- src_dir()
  hits <- character()
  for (f in list.files(src, "[.]c$", full.names = TRUE)) {
    code <- paste(readLines(f, warn = FALSE), collapse = "\n")
    calls <- regmatches(code, gregexpr("setAttrib\\([^;]*;", code))[[1]]
    bad <- grepl("(Scalar[A-Za-z]+|allocVector|allocMatrix|mkString|mkChar|duplicate|ScalarString)\\s*\\(", calls)
    hits <- c(hits, sprintf("%s: %s", basename(f), calls[bad]))
  }
  expect_identical(hits, character())
})

# The kernels keep the order of the fixed-effect dimensions in an
# int[DD_FE_MAX] (32) array; the R front ends refuse more than 32 dimensions,
# and C refuses them too, with an internal error, not an overflow.
test_that("C_demean refuses more than 32 fixed-effect dimensions with an internal error", {
  n <- 40L
  fe <- rep(list(rep(0:1, n / 2)), 33)
  expect_error(.Call(diffdiff:::C_demean, as.double(1:n), matrix(as.double(n:1), n), fe, rep(2L, 33), NULL,
                     1e-8, 100L),
               "internal error in C_demean: `fe` must have 1 to 32 dimensions; please report")
  expect_silent(.Call(diffdiff:::C_demean, as.double(1:n), matrix(as.double(n:1), n), fe[1:32], rep(2L, 32), NULL,
                      1e-8, 100L))
})
