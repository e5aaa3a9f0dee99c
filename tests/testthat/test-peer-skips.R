# Parity cannot be skipped silently: every test that needs a peer goes through
# need_peer() / has_peer() (helper-parity.R), which fail instead of skipping
# under DIFFDIFF_REQUIRE_PARITY=true; skip_if_not_installed() and
# requireNamespace() are left for the tool packages of dd_tool_packages.

# every call to one of `fns` in the test and helper files, from the parse
# data: file, function and its first argument (the package; "<expr>" when
# it is not a string literal)
peer_calls <- function(fns) {
  files <- list.files(testthat::test_path(), "^(test|helper)-.*[.]R$", full.names = TRUE)
  out <- list()
  for (f in files) {
    pd <- utils::getParseData(parse(f, keep.source = TRUE))
    tk <- pd[pd$terminal, ]
    tk <- tk[order(tk$line1, tk$col1), ]
    for (i in which(tk$token == "SYMBOL_FUNCTION_CALL" & tk$text %in% fns)) {
      j <- i + 2L                                    # past the name and "("
      if (j <= nrow(tk) && tk$token[j] == "SYMBOL_SUB") j <- j + 2L   # pkg = "..."
      lit <- j < nrow(tk) && tk$token[j] == "STR_CONST" && tk$text[j + 1L] %in% c(",", ")")
      pkg <- if (lit) eval(parse(text = tk$text[j])) else "<expr>"
      out[[length(out) + 1L]] <- c(file = basename(f), fn = tk$text[i], pkg = pkg)
    }
  }
  if (!length(out)) return(data.frame(file = character(), fn = character(), pkg = character()))
  as.data.frame(do.call(rbind, out), stringsAsFactors = FALSE)
}

test_that("skip_if_not_installed() is called on tool packages only, and peers go through need_peer()", {
  skips <- peer_calls("skip_if_not_installed")
  expect_gt(nrow(skips), 5)                          # the scan sees the tool skips there are
  bad <- skips[!skips$pkg %in% dd_tool_packages, ]
  expect_identical(sprintf("%s: skip_if_not_installed(%s)", bad$file, bad$pkg), character())
  # requireNamespace() in tests: tools only (a peer's block uses has_peer());
  # helper-parity.R's own call is need_peer()'s implementation
  req <- peer_calls("requireNamespace")
  req <- req[req$file != "helper-parity.R", ]
  bad <- req[!req$pkg %in% dd_tool_packages, ]
  expect_identical(sprintf("%s: requireNamespace(%s)", bad$file, bad$pkg), character())
  # every peer named in need_peer() / has_peer() is in dd_peer_packages (the
  # list tools/sanitize.sh and tools/valgrind.sh check before requiring parity)
  peers <- peer_calls(c("need_peer", "has_peer"))
  peers <- peers[!peers$file %in% c("helper-parity.R", "test-peer-skips.R"), ]   # (this file: a fake peer below)
  expect_gt(nrow(peers), 50)
  bad <- peers[!peers$pkg %in% dd_peer_packages, ]
  expect_identical(sprintf("%s: %s(%s)", bad$file, bad$fn, bad$pkg), character())
  expect_identical(intersect(dd_peer_packages, dd_tool_packages), character())
})

test_that("need_peer() skips without the peer, and fails under DIFFDIFF_REQUIRE_PARITY=true", {
  old <- Sys.getenv("DIFFDIFF_REQUIRE_PARITY", unset = NA)
  on.exit(if (is.na(old)) Sys.unsetenv("DIFFDIFF_REQUIRE_PARITY") else Sys.setenv(DIFFDIFF_REQUIRE_PARITY = old))
  nope <- "diffdiffNoSuchPeer"
  Sys.unsetenv("DIFFDIFF_REQUIRE_PARITY")
  caught <- function(expr) tryCatch({ expr; "ran" }, skip = function(e) paste("skip:", conditionMessage(e)),
                                    error = function(e) paste("error:", conditionMessage(e)))
  # (testthat prefixes a skip's message with "Reason: ")
  expect_match(caught(need_peer(nope)), "^skip: (Reason: )?parity: peer package 'diffdiffNoSuchPeer' is not installed$")
  expect_false(has_peer(nope))
  # an installed package below the version asked for counts as missing
  expect_match(caught(need_peer("testthat", min_version = "999.0")),
               "^skip: (Reason: )?parity: peer package 'testthat' is .*, older than 999.0$")
  expect_identical(caught(need_peer("testthat", min_version = "1.0")), "ran")
  expect_true(has_peer("testthat"))
  Sys.setenv(DIFFDIFF_REQUIRE_PARITY = "true")
  expect_identical(caught(need_peer(nope)),
                   "error: peer package 'diffdiffNoSuchPeer' is not installed: it is required for parity tests (DIFFDIFF_REQUIRE_PARITY=true)")
  expect_match(caught(has_peer(nope)), "^error: peer package 'diffdiffNoSuchPeer' is not installed")
  expect_match(caught(need_peer("testthat", min_version = "999.0")), "^error: peer package 'testthat' is .*, older than 999.0")
  expect_identical(caught(need_peer("testthat")), "ran")
})
