# Runs R code in a child R process with the library paths of this one, so a
# crash (segfault, abort) shows up as a failed exit status rather than
# taking the test session down. Returns list(status, output).
run_child <- function(code, timeout = 120) {
  script <- tempfile(fileext = ".R")
  on.exit(unlink(script))
  libs <- deparse(.libPaths())
  writeLines(c(sprintf(".libPaths(%s)", paste(libs, collapse = "")),
               "suppressPackageStartupMessages(library(rff))", code), script)
  rscript <- file.path(R.home("bin"), "Rscript")
  out <- suppressWarnings(system2(rscript, c("--vanilla", shQuote(script)),
                                  stdout = TRUE, stderr = TRUE, timeout = timeout))
  status <- attr(out, "status")
  list(status = if (is.null(status)) 0L else status, output = out)
}
