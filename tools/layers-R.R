# The R files form layers: no file may use, directly or through others, a
# function or object defined in a file that uses one of its own. Reads the
# top-level definitions of R/*.R and the symbols each file uses (calls, and
# names passed as values, such as a checker handed to another function)
# with R's parser, and fails when the graph "file A uses a name defined in
# file B" has a cycle. S3 dispatch (predict(fit) reaching predict.rff_glm)
# is not an edge: methods sit above the classes they serve.
# Prints the edges, and "R layers: no cycles" or the files of each cycle.
# Also fails when a file of R/ or src/ is longer than 500 lines, or an R
# file does not open with a comment saying what it holds.
files <- sort(Sys.glob(file.path("R", "*.R")))
defs <- list()
uses <- list()
for (f in files) {
  ex <- parse(f, keep.source = FALSE)
  nm <- character()
  for (e in ex) {
    if (is.call(e) && as.character(e[[1L]]) %in% c("<-", "=") && is.name(e[[2L]])) {
      nm <- c(nm, as.character(e[[2L]]))
    }
  }
  pd <- utils::getParseData(parse(f, keep.source = TRUE))
  defs[[basename(f)]] <- nm
  uses[[basename(f)]] <- unique(pd$text[pd$token %in% c("SYMBOL_FUNCTION_CALL", "SYMBOL")])
}
owner <- unlist(lapply(names(defs), function(f) stats::setNames(rep(f, length(defs[[f]])), defs[[f]])))
dup <- unique(names(owner)[duplicated(names(owner))])
if (length(dup)) {
  cat("R layers: defined in more than one file:", paste(dup, collapse = ", "), "\n")
  quit(status = 1)
}
adj <- lapply(names(uses), function(f) {
  to <- unname(owner[intersect(uses[[f]], names(owner))])
  sort(unique(to[to != f]))
})
names(adj) <- names(uses)
cat("R layers: file -> files whose definitions it uses\n")
for (f in names(adj)) if (length(adj[[f]])) cat("  ", f, ": ", paste(adj[[f]], collapse = " "), "\n", sep = "")
reach <- function(s) {
  seen <- character()
  todo <- adj[[s]]
  while (length(todo)) {
    v <- todo[1L]
    todo <- todo[-1L]
    if (!v %in% seen) {
      seen <- c(seen, v)
      todo <- c(todo, adj[[v]])
    }
  }
  seen
}
R <- lapply(names(adj), reach)
names(R) <- names(adj)
cycles <- list()
done <- character()
for (v in names(adj)) {
  if (v %in% done || !v %in% R[[v]]) next
  comp <- names(adj)[vapply(names(adj), function(w) w %in% R[[v]] && v %in% R[[w]], TRUE)]
  done <- c(done, comp)
  cycles[[length(cycles) + 1L]] <- comp
}
long <- Filter(function(f) length(readLines(f)) > 500L,
               c(files, Sys.glob(file.path("src", "*.[ch]"))))
bare <- Filter(function(f) !grepl("^# ", readLines(f, n = 1L)), files)
if (length(long)) cat("R layers: files over 500 lines:", paste(long, collapse = ", "), "\n")
if (length(bare)) cat("R layers: files that do not open with a comment:", paste(bare, collapse = ", "), "\n")
if (length(long) || length(bare)) quit(status = 1)
if (!length(cycles)) {
  cat("R layers: no cycles\n")
} else {
  cat("R layers: files in a cycle:\n")
  for (comp in cycles) cat("  ", paste(comp, collapse = " "), "\n", sep = "")
  quit(status = 1)
}
