# `make fuzz` (tools/fuzz.R) mutates the argument lists that its workload
# (tools/fuzz-workload.R) passes to each registered .Call routine; a routine
# the workload does not reach gets random argument lists only, which rarely
# get past its first check (at f853403, 14 of 56 routines were never reached,
# among them C_dcdh_horizon and C_lp_fit, which crashed on hostile codes).
# Runs the workload through the recording .Call and compares the routines it
# reached with the registered ones: a routine registered in src/init.c
# without a workload call that reaches it fails here. Needs the source tree
# (tools/ and R/ are not in the built package): DIFFDIFF_SRC_DIR or ../..
test_that("the fuzz workload records real argument lists for every registered .Call routine", {
  root <- source_root(file.path("tools", "fuzz-workload.R"))
  e <- new.env()
  sys.source(file.path(root, "tools", "fuzz-workload.R"), envir = e, keep.source = FALSE)
  rec <- e$fuzz_record(root)
  registered <- vapply(getDLLRegisteredRoutines("diffdiff")$.Call, function(r) r$name, "")
  expect_gt(length(registered), 50L)
  # routines registered but not recorded (none may be left to random arguments)
  expect_identical(sort(setdiff(registered, names(rec))), character())
  expect_identical(sort(setdiff(names(rec), registered)), character())
  # each recorded list has the routine's registered arity
  arity <- vapply(getDLLRegisteredRoutines("diffdiff")$.Call, function(r) r$numParameters, 0L)
  names(arity) <- registered
  bad <- names(rec)[vapply(names(rec), function(nm) !all(lengths(rec[[nm]]) == arity[[nm]]), NA)]
  expect_identical(bad, character())
})
