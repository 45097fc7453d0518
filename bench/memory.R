# What a default fit holds in memory beyond its data: R's peak heap (gc
# "max used", which counts the C code's R_alloc workspaces too) during
# rff_ridge(), rff_glm() and rff_cv() with default arguments (D = 1000),
# less the heap holding the data alone, stated in D x D matrices of doubles
# after taking off the features a fit keeps by design (the n x D features
# of a GLM fit within `cache_mb`, those of a ridge fit with fewer rows than
# features). The bound of the interactive-speed target: the data, the
# features where they fit the cache limit, and O(D^2).
#
# Usage (from the package root, with rff installed in LIB):
#   Rscript bench/memory.R LIB [--small] > bench/RESULTS-memory.md
#
# Each fit runs in a fresh child R process, one after another.
args <- commandArgs(trailingOnly = TRUE)
small <- "--small" %in% args
args <- setdiff(args, "--small")
lib <- if (length(args)) normalizePath(args[1L]) else .libPaths()[1L]
scale <- if (small) 0.1 else 1

cases <- list(
  list(name = "rff_ridge, n = 30,000 (n > D: streamed)", n = 30000, d = 5, kept = 0,
       fit = "rff_ridge(x, y, progress = FALSE)"),
  list(name = "rff_ridge, n = 800 (n < D: the n x D features)", n = 800, d = 5, kept = 1,
       fit = "rff_ridge(x, y, progress = FALSE)"),
  list(name = "rff_cv, n = 20,000 (10 folds' statistics)", n = 20000, d = 5, kept = 0,
       fit = "rff_cv(x, y, progress = FALSE)"),
  list(name = "rff_glm binomial, n = 20,000 (features cached)", n = 20000, d = 5, kept = 1,
       fit = "rff_glm(x, y > 0, progress = FALSE)"),
  list(name = "rff_glm binomial, n = 20,000, cache_mb = 0 (streamed)", n = 20000, d = 5,
       kept = 0, fit = "rff_glm(x, y > 0, cache_mb = 0, progress = FALSE)")
)

child <- function(case, n, fit) {
  sprintf('
    library(rff, lib.loc = "%s")
    set.seed(1)
    n <- %d; d <- %d
    x <- matrix(rnorm(n * d), n, d)
    y <- sin(x[, 1]) + x[, 2] * x[, 3] + rnorm(n, sd = 0.3)
    invisible(gc(reset = TRUE))
    base <- sum(gc()[, 6L])
    invisible(gc(reset = TRUE))
    t <- system.time(f <- %s)[["elapsed"]]
    peak <- sum(gc()[, 6L])
    D <- if (inherits(f, "rff_cv")) f$fit$map$D else f$map$D
    cat(sprintf("RESULT %%.2f %%.1f %%.1f %%d\\n", t, base, peak, D))
  ', lib, n, case$d, fit)
}

run <- function(code) {
  f <- tempfile(fileext = ".R")
  writeLines(code, f)
  out <- system2(file.path(R.home("bin"), "Rscript"), c("--vanilla", f), stdout = TRUE,
                 stderr = TRUE)
  r <- grep("^RESULT ", out, value = TRUE)
  if (!length(r)) stop(paste(out, collapse = "\n"))
  as.numeric(strsplit(r, " ")[[1L]][-1L])
}

cat("# Memory of default fits beyond their data\n\n")
cat(sprintf("`Rscript bench/memory.R%s`, %s, R %s, BLAS %s.\n\n", if (small) " --small" else "",
            format(Sys.time(), "%Y-%m-%d"), getRversion(),
            basename(extSoftVersion()[["BLAS"]])))
cat("| fit | s | heap of the data, MB | peak heap during the fit, MB | beyond the data, MB | kept features, MB | the rest, in D x D matrices |\n")
cat("|---|---|---|---|---|---|---|\n")
for (case in cases) {
  n <- as.integer(case$n * scale)
  r <- run(child(case, n, case$fit))
  D <- r[4L]
  beyond <- r[3L] - r[2L]
  kept <- case$kept * n * D * 8 / 2^20
  dd <- D^2 * 8 / 2^20
  cat(sprintf("| %s | %.1f | %.0f | %.0f | %.0f | %.0f | %.1f |\n",
              sub("[0-9][0-9,]*", format(n, big.mark = ","), case$name), r[1L], r[2L], r[3L],
              beyond, kept, (beyond - kept) / dd))
}
