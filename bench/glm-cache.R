# When does a GLM's feature cache pay? rff_glm() in one process (1 thread,
# rows in memory, standardize = FALSE) on n = 200,000 rows, D = 500,
# Gaussian kernel (lengthscale 3), one lambda (1e-4), the features cached
# (cache_mb = 1024: the 800 MB matrix fits) or streamed (cache_mb = 0), for
# d = 5, 10, 20, 50 inputs and both variants. A cached feature is read back
# on every pass; a streamed one costs the inner product of its frequency
# with the input (d terms for "phase", d / 2 for "pair") and a cosine; the
# cache also costs one featurization and the first touch of its memory.
# Reports wall and CPU time of each fit and the work per feature,
# (d + 10) m / D multiply-adds (m frequencies: D / 2 for "pair", D for
# "phase"; a cosine, or a cosine and a sine, counted as 10), the quantity
# the cache rule of rff_glm_apply()'s workers looks at (features_cache_pays(),
# R/glm-problem.R: cached from 20).
#
# Run from the package root after an install into .build/lib (or with
# R_LIBS naming the library):
#   Rscript bench/glm-cache.R            # about 2 minutes
#   Rscript bench/glm-cache.R --n=50000  # a quick try
args <- commandArgs(trailingOnly = TRUE)
.libPaths(c(".build/lib", .libPaths()))
suppressPackageStartupMessages(library(rff))
a <- grep("^--n=", args, value = TRUE)
n <- if (length(a)) as.numeric(sub("^--n=", "", a[1L])) else 2e5
load_avg <- function() paste(strsplit(readLines("/proc/loadavg", warn = FALSE), " ")[[1]][1:3],
                             collapse = " ")
cat(sprintf("n = %s rows, D = 500, 1 thread; load average %s before\n\n",
            format(n, big.mark = ","), load_avg()))
cat("| variant | d | work per feature | cached s (CPU) | streamed s (CPU) | cached / streamed | iterations |\n")
cat("|---|---|---|---|---|---|---|\n")
for (variant in c("pair", "phase")) for (d in c(5, 10, 20, 50)) {
  set.seed(28)
  x <- matrix(rnorm(n * d), n, d)
  y <- factor(runif(n) < stats::plogis(2 * (sin(x[, 1]) + x[, 2] * x[, 3])))
  m <- rff_map(d, D = 500, lengthscale = 3, variant = variant)
  tm <- lapply(c(1024, 0), function(mb) {
    set.seed(1)
    t <- system.time(fit <- rff_glm(x, y, map = m, lambda = 1e-4, standardize = FALSE,
                                    threads = 1, cache_mb = mb, progress = FALSE))
    stopifnot(fit$cached == (mb > 0))
    list(wall = t[["elapsed"]], cpu = t[["user.self"]] + t[["sys.self"]], iter = fit$iterations)
  })
  cat(sprintf("| %s | %d | %g | %.2f (%.2f) | %.2f (%.2f) | %.2f | %d |\n", variant, d,
              (d + 10) * (if (variant == "pair") 0.5 else 1), tm[[1]]$wall, tm[[1]]$cpu, tm[[2]]$wall,
              tm[[2]]$cpu, tm[[1]]$wall / tm[[2]]$wall, tm[[1]]$iter))
}
cat(sprintf("\nload average %s after\n", load_avg()))
