# The cost of lengthscale = "auto" in rff_ridge(): n = 200,000, d = 10,
# D = 1000 ("phase", Gaussian kernel), the default path of 50 lambdas by
# LOO, with one given lengthscale against "auto" (7 candidates on common
# random numbers, scored on a subsample of max(10,000, n / 7) rows, the
# winner refitted on all rows). Target: auto <= 3x the given lengthscale.
# Each fit is timed once (wall clock), the given lengthscale first, in one
# process, with the default threads, under the BLAS of the process: run it
# once as it is and once with OpenBLAS on the library path
# (R_LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu/openblas-pthread). Appends a
# row to bench/RESULTS-auto.md.
#
# Run from the package root after `make install`:
#   Rscript bench/auto.R
.libPaths(c(".build/lib", .libPaths()))
library(rff)
load_avg <- function() paste(strsplit(readLines("/proc/loadavg", warn = FALSE), " ")[[1]][1:3],
                             collapse = " ")
before <- load_avg()
info <- rff_blas_info()
set.seed(2)
n <- 200000L; d <- 10L; D <- 1000L
x <- matrix(rnorm(n * d), n, d)
y <- sin(rowSums(x)) + rnorm(n, sd = 0.1)
given <- system.time(f1 <- rff_ridge(x, y, D = D, variant = "phase", lengthscale = sqrt(d),
                                     standardize = FALSE, progress = FALSE))[["elapsed"]]
auto <- system.time(f2 <- rff_ridge(x, y, D = D, variant = "phase", standardize = FALSE,
                                    progress = FALSE))[["elapsed"]]
after <- load_avg()
row <- sprintf("| %s | %s (%d threads) | %d | %.1f | %.1f | %.2f | %s | %s | %s -> %s |",
               format(Sys.time(), "%Y-%m-%d %H:%M", tz = "UTC"), info$blas, info$blas_threads,
               info$threads, given, auto, auto / given,
               if (auto / given <= 3) "yes" else "no",
               format(f2$lengthscale_search$table$lengthscale[f2$lengthscale_search$best], digits = 4),
               before, after)
out <- "bench/RESULTS-auto.md"
if (!file.exists(out)) {
  writeLines(c("## The cost of lengthscale = \"auto\" (bench/auto.R)", "",
               "n = 200,000, d = 10, D = 1000, path of 50 lambdas by LOO; one fit each, wall clock.",
               "",
               "| date (UTC) | BLAS | rff threads | given lengthscale s | \"auto\" s | ratio | <= 3x | chosen | load average before -> after |",
               "|---|---|---|---|---|---|---|---|---|"), out)
}
cat(row, "\n", sep = "", file = out, append = TRUE)
cat(row, "\n")
