# Test helper (also sourced by bench/honest.R and tools/honestdid-reference.R):
# reads an event study stored as text (the format of
# inst/extdata/honestdid_*_event_study.txt: lines "betahat ...",
# "pre_indices ...", "post_indices ...", then "sigma" and its rows).
read_event_study <- function(path) {
  L <- readLines(path)
  field <- function(key) {
    line <- L[startsWith(L, paste0(key, " "))][1]
    as.numeric(strsplit(trimws(sub(paste0("^", key, " +"), "", line)), " +")[[1]])
  }
  j <- which(startsWith(L, "sigma"))
  rows <- L[(j + 1):length(L)]
  rows <- rows[nzchar(trimws(rows))]
  list(b = field("betahat"), S = do.call(rbind, lapply(strsplit(trimws(rows), " +"), as.numeric)),
       K = length(field("pre_indices")), P = length(field("post_indices")))
}

