# Mutation testing: `make mutants` (Rscript tools/mutants.R [--check] [name ...]).
#
# Applies each mutation of tools/mutants.txt (one plausible bug, found by an
# exact snippet of R/*.R, src/*.c or src/*.h) to a temporary copy of the
# package, installs the copy into a temporary library and runs the testthat
# suite of tests/testthat on it, file by file, fastest first as the baseline
# timed them,
# stopping at the first file with a failure. A mutant is "killed" when a test fails, errors or the test
# process dies, and "survived" when the whole suite passes. The unmutated
# copy is built and tested first and must pass.
#
# --check only validates the list (every snippet occurs exactly once).
# Names given select mutants. Exit status: 0 when every selected mutant is
# killed; 1 when one survived, is stale (its snippet is not found exactly
# once) or does not build; 2 when the unmutated package fails its tests.
options(warn = 1)
args <- commandArgs(trailingOnly = TRUE)
check_only <- "--check" %in% args
selected <- setdiff(args, "--check")

root <- normalizePath(".")
if (!file.exists(file.path(root, "DESCRIPTION")) || !dir.exists(file.path(root, "src"))) {
  stop("run from the package root (make mutants)")
}
list_file <- file.path(root, "tools", "mutants.txt")
test_dir <- file.path(root, "tests", "testthat")
# test files left out (none: every test is deterministic, whatever the load)
timing_files <- character(0)
install_timeout <- 600
test_timeout <- 1800

# ---- the mutation list ----

parse_mutants <- function(path) {
  lines <- readLines(path, warn = FALSE)
  out <- list()
  cur <- NULL
  flush <- function() {
    if (is.null(cur)) return()
    if (is.null(cur$from) || is.null(cur$to)) {
      stop(sprintf("tools/mutants.txt: mutant \"%s\" needs a from: and a to: line", cur$name))
    }
    out[[length(out) + 1L]] <<- cur
  }
  for (i in seq_along(lines)) {
    ln <- lines[[i]]
    if (!nzchar(trimws(ln)) || startsWith(ln, "#")) next
    key <- sub(":.*$", "", ln)
    val <- sub("^[a-z]+: ?", "", ln)
    if (key == "name") {
      flush()
      if (!grepl("^[A-Za-z0-9-]+$", val)) stop(sprintf("tools/mutants.txt:%d: bad name \"%s\"", i, val))
      cur <- list(name = val, why = character(0), from = NULL, to = NULL)
    } else if (key %in% c("why", "from", "to")) {
      if (is.null(cur)) stop(sprintf("tools/mutants.txt:%d: \"%s:\" before any name:", i, key))
      if (key == "why") cur$why <- c(cur$why, val) else cur[[key]] <- val
    } else {
      stop(sprintf("tools/mutants.txt:%d: expected name:, why:, from: or to:, got \"%s\"", i, ln))
    }
  }
  flush()
  nm <- vapply(out, `[[`, "", "name")
  if (anyDuplicated(nm)) stop(sprintf("tools/mutants.txt: duplicate name \"%s\"", nm[anyDuplicated(nm)]))
  out
}

source_files <- function(dir) {
  c(Sys.glob(file.path(dir, "R", "*.R")), Sys.glob(file.path(dir, "src", "*.c")),
    Sys.glob(file.path(dir, "src", "*.h")))
}

count_fixed <- function(text, snippet) {
  m <- gregexpr(snippet, text, fixed = TRUE)[[1L]]
  if (m[1L] == -1L) 0L else length(m)
}

# The file (relative path) holding each mutant's snippet, or the reason it
# is stale.
locate <- function(mutants, dir) {
  files <- source_files(dir)
  texts <- vapply(files, function(f) paste(readLines(f, warn = FALSE), collapse = "\n"), "")
  rel <- substring(files, nchar(dir) + 2L)
  lapply(mutants, function(m) {
    if (identical(m$from, m$to)) return(list(file = NA, problem = "from: and to: are the same"))
    n <- vapply(texts, count_fixed, 0L, snippet = m$from)
    total <- sum(n)
    if (total == 0L) return(list(file = NA, problem = "snippet not found"))
    if (total > 1L) {
      return(list(file = NA, problem = sprintf("snippet occurs %d times (%s)", total,
                                               paste(unique(rel[n > 0L]), collapse = ", "))))
    }
    list(file = rel[n > 0L], problem = NULL)
  })
}

mutants <- parse_mutants(list_file)
if (length(selected)) {
  unknown <- setdiff(selected, vapply(mutants, `[[`, "", "name"))
  if (length(unknown)) stop("unknown mutant(s): ", paste(unknown, collapse = ", "))
  mutants <- Filter(function(m) m$name %in% selected, mutants)
}
where <- locate(mutants, root)
stale <- vapply(where, function(w) !is.null(w$problem), NA)
for (i in which(stale)) {
  cat(sprintf("STALE    %s: %s\n", mutants[[i]]$name, where[[i]]$problem))
}
files_with_code <- function(dir) {
  f <- source_files(dir)
  # R files that are only documentation (roxygen and NULL) have nothing to mutate
  has_code <- vapply(f, function(p) {
    l <- trimws(readLines(p, warn = FALSE))
    l <- l[nzchar(l) & !startsWith(l, "#")]
    if (grepl("\\.R$", p)) length(setdiff(l, c("NULL", "\"_PACKAGE\""))) > 0L else length(l) > 0L
  }, NA)
  substring(f[has_code], nchar(dir) + 2L)
}
if (!length(selected)) {
  uncovered <- setdiff(files_with_code(root),
                       unlist(lapply(where[!stale], `[[`, "file")))
  if (length(uncovered)) cat("note: no mutant in", paste(uncovered, collapse = ", "), "\n")
}
if (check_only) {
  cat(sprintf("%d mutants, %d stale\n", length(mutants), sum(stale)))
  quit(status = if (any(stale)) 1L else 0L)
}

# ---- building and testing copies ----

work <- tempfile("rff-mutants-")
dir.create(work)
lib <- file.path(work, "lib")
dir.create(lib)
r_bin <- file.path(R.home("bin"), "R")
rscript <- file.path(R.home("bin"), "Rscript")

# The package sources, once, with their objects compiled by the baseline
# install; each mutant starts from a copy, so only the mutated C file (all
# of them for a header) is recompiled.
base <- file.path(work, "base")
dir.create(base)
for (p in c("DESCRIPTION", "NAMESPACE", "R", "src", "inst")) {
  if (file.exists(file.path(root, p))) file.copy(file.path(root, p), base, recursive = TRUE)
}
unlink(Sys.glob(file.path(base, "src", c("*.o", "*.so", "*.dll"))))

install <- function(dir) {
  log <- file.path(work, "install.log")
  # byte-compiled as `make install` does: byte code calls registered
  # routines without R's check of the argument count
  status <- suppressWarnings(system2(r_bin, c("CMD", "INSTALL", "--no-test-load", "--no-docs",
                                              "--no-multiarch",
                                              paste0("--library=", shQuote(lib)), shQuote(dir)),
                                     stdout = log, stderr = log, timeout = install_timeout))
  list(ok = identical(as.integer(status), 0L), log = readLines(log, warn = FALSE))
}

runner <- file.path(work, "run-tests.R")
writeLines(c(
  "args <- commandArgs(trailingOnly = TRUE)",
  ".libPaths(c(args[1], .libPaths()))",
  "suppressPackageStartupMessages(library(rff, lib.loc = args[1]))",
  "for (f in args[-1]) {",
  "  t0 <- proc.time()[['elapsed']]",
  "  res <- tryCatch(testthat::test_file(f, package = 'rff', load_package = 'installed',",
  "                                      reporter = 'silent', stop_on_failure = FALSE),",
  "                  error = function(e) e)",
  "  cat('TIME', basename(f), proc.time()[['elapsed']] - t0, '\\n')",
  "  if (inherits(res, 'error')) {",
  "    cat('FAILED', basename(f), '(error outside a test):', conditionMessage(res), '\\n')",
  "    quit(status = 3)",
  "  }",
  "  df <- as.data.frame(res)",
  "  bad <- df$failed > 0 | df$error",
  "  if (any(bad)) {",
  "    cat('FAILED ', basename(f), ': \"', df$test[bad][1], '\"\\n', sep = '')",
  "    quit(status = 3)",
  "  }",
  "}",
  "cat('PASSED\\n')"), runner)

# Test files, fastest first once the baseline has timed them: most mutants
# fail a quick value test, and the slow reliability tests then rarely run.
test_files <- function(times = NULL) {
  f <- setdiff(sort(list.files(test_dir, pattern = "^test.*\\.R$")), timing_files)
  if (!is.null(times)) f <- f[order(times[f], na.last = FALSE)]
  file.path(test_dir, f)
}

# "passed", or what killed it; attr "times": seconds per test file run
run_suite <- function(files = test_files()) {
  log <- file.path(work, "test.log")
  old <- Sys.getenv("R_LIBS")
  # child R processes started by the tests find the same build
  Sys.setenv(R_LIBS = paste(c(lib, if (nzchar(old)) old), collapse = .Platform$path.sep))
  on.exit(Sys.setenv(R_LIBS = old))
  owd <- setwd(test_dir)
  on.exit(setwd(owd), add = TRUE)
  status <- suppressWarnings(system2(rscript, c("--vanilla", shQuote(runner), shQuote(lib),
                                                shQuote(files)),
                                     stdout = log, stderr = log, timeout = test_timeout))
  out <- readLines(log, warn = FALSE)
  status <- as.integer(status)
  timed <- strsplit(grep("^TIME ", out, value = TRUE), " ")
  times <- setNames(as.numeric(vapply(timed, `[`, "", 3L)), vapply(timed, `[`, "", 2L))
  if (identical(status, 0L) && any(out == "PASSED")) return(structure("passed", times = times))
  if (identical(status, 124L)) return(sprintf("timeout after %d s", test_timeout))
  hit <- grep("^FAILED ", out, value = TRUE)
  if (length(hit)) return(sub("^FAILED ", "", hit[1L]))
  sprintf("test process exited with status %s: %s", status,
          paste(utils::tail(out, 2L), collapse = " | "))
}

run_mutants <- function() {
  t_start <- Sys.time()
  elapsed <- function(t0) as.numeric(difftime(Sys.time(), t0, units = "secs"))

  cat("baseline: installing and testing the unmutated package ... ")
  t0 <- Sys.time()
  b <- install(base)
  if (!b$ok) {
    cat("does not build\n")
    writeLines(utils::tail(b$log, 30L))
    return(2L)
  }
  res <- run_suite()
  if (res != "passed") {
    cat(sprintf("FAILS: %s\nthe unmutated package must pass its tests first\n", res))
    return(2L)
  }
  cat(sprintf("passed (%.0f s)\n", elapsed(t0)))
  files <- test_files(attr(res, "times"))

  todo <- which(!stale)
  status <- setNames(rep("stale", length(mutants)), vapply(mutants, `[[`, "", "name"))
  for (k in seq_along(todo)) {
    i <- todo[k]
    m <- mutants[[i]]
    file <- where[[i]]$file
    t0 <- Sys.time()
    cat(sprintf("[%2d/%d] %-36s %-22s ", k, length(todo), m$name, file))
    copy <- file.path(work, "mutant")
    unlink(copy, recursive = TRUE)
    dir.create(copy)
    file.copy(list.files(base, full.names = TRUE), copy, recursive = TRUE, copy.date = TRUE)
    path <- file.path(copy, file)
    text <- readLines(path, warn = FALSE)
    joined <- paste(text, collapse = "\n")
    pos <- regexpr(m$from, joined, fixed = TRUE)
    mutated <- paste0(substr(joined, 1L, pos - 1L), m$to,
                      substr(joined, pos + nchar(m$from), nchar(joined)))
    writeLines(mutated, path)
    # make does not know what includes a header
    if (grepl("\\.h$", file)) unlink(Sys.glob(file.path(copy, "src", "*.o")))
    inst <- install(copy)
    if (!inst$ok) {
      status[i] <- "broken"
      cat(sprintf("DOES NOT BUILD (%.0f s)\n", elapsed(t0)))
      writeLines(paste("    ", utils::tail(grep("error", inst$log, value = TRUE), 3L)))
      next
    }
    res <- run_suite(files)
    if (res == "passed") {
      status[i] <- "survived"
      cat(sprintf("SURVIVED (%.0f s)\n", elapsed(t0)))
      cat(sprintf("    %s\n", m$why), sep = "")
    } else {
      status[i] <- "killed"
      cat(sprintf("killed (%.0f s) by %s\n", elapsed(t0), res))
    }
  }

  tab <- table(factor(status, c("killed", "survived", "stale", "broken")))
  cat(sprintf("\n%d mutants: %d killed, %d survived, %d stale, %d do not build (%.1f min)\n",
              length(status), tab[["killed"]], tab[["survived"]], tab[["stale"]],
              tab[["broken"]], elapsed(t_start) / 60))
  if (tab[["survived"]] > 0L) {
    cat("survived:", paste(names(status)[status == "survived"], collapse = ", "), "\n")
  }
  if (all(status == "killed")) 0L else 1L
}

code <- run_mutants()
unlink(work, recursive = TRUE)
quit(status = code)
