# A fit from files that together are larger than the memory the fit may
# use: 40 RDS files of 500,000 rows x 10 columns (1.8 GB in all) are read
# and featurized by two PSOCK workers through rff_stats_apply(), with this
# process and each worker limited to 256 MB of R vector memory
# (mem.maxVSize), 768 MB together. The statistics must equal those of two
# halves computed separately (the first in this process, the second on the
# cluster) and combined with c(), and the fit must recover the noise level.
# Needs about 2 GB of disk in BIGFILES_DIR (default: the session's tempdir).
# Usage: Rscript tools/bigfiles.R   (make bigfiles)
library(rff)
set.seed(41)
n_files <- 40L
rows <- 500000L
d <- 10L
D <- 64L
limit_mb <- 256
dir <- Sys.getenv("BIGFILES_DIR", tempfile("rff-bigfiles-"))
dir.create(dir, showWarnings = FALSE, recursive = TRUE)
files <- file.path(dir, sprintf("part-%02d.rds", seq_len(n_files)))
on.exit(unlink(files))
invisible(mem.maxVSize(limit_mb))

t_write <- system.time(for (f in files) {
  x <- matrix(runif(rows * d), rows, d)
  y <- sin(6 * x[, 1]) + x[, 2] * x[, 3] + rnorm(rows, sd = 0.1)
  saveRDS(list(x = x, y = y), f, compress = FALSE)
  rm(x, y)
})[["elapsed"]]
total_mb <- sum(file.size(files)) / 2^20
cat(sprintf("bigfiles: %d files, %s rows x %d columns, %.0f MB on disk (written in %.0f s)\n",
            n_files, format(n_files * rows, big.mark = ","), d, total_mb, t_write))

cl <- parallel::makeCluster(2)
invisible(parallel::clusterCall(cl, function(p) .libPaths(p), .libPaths()))
invisible(parallel::clusterCall(cl, function(mb) mem.maxVSize(mb), limit_mb))
cat(sprintf("bigfiles: this process and 2 workers, each limited to %.0f MB of vector memory (%.0f MB together)\n",
            limit_mb, 3 * limit_mb))
stopifnot(total_mb > 3 * limit_mb)

# the response depends on three columns; long lengthscales for the others
map <- rff_map(d, D = D, lengthscale = c(0.3, 0.6, 0.6, rep(50, d - 3L)))
# R's vector memory at its peak ("max used" of the vector cells, in MB)
peak_vector_mb <- function() {
  g <- gc()
  g["Vcells", ncol(g)]
}
invisible(parallel::clusterEvalQ(cl, gc(reset = TRUE)))
t_all <- system.time(
  s_all <- rff_stats_apply(files, readRDS, map, cluster = cl, progress = FALSE)
)[["elapsed"]]
peak_workers <- unlist(parallel::clusterCall(cl, peak_vector_mb))
h <- n_files %/% 2L
invisible(gc(reset = TRUE))
t_half <- system.time({
  s_first <- rff_stats_apply(files[1:h], readRDS, map, progress = FALSE)
  s_second <- rff_stats_apply(files[-(1:h)], readRDS, map, cluster = cl, progress = FALSE)
  s_half <- c(s_first, s_second)
})[["elapsed"]]
peak_main <- peak_vector_mb()
parallel::stopCluster(cl)

rel <- function(a, b) max(abs(a - b)) / max(abs(b))
d_ztz <- rel(s_half$ZtZ, s_all$ZtZ)
fit_all <- rff_ridge(s_all, lambda = 1e-6)
fit_half <- rff_ridge(s_half, lambda = 1e-6)
d_coef <- rel(coef(fit_half), coef(fit_all))
rmse <- sqrt(fit_all$rss[1] / s_all$n)
cat(sprintf("bigfiles: peak R memory %.0f MB in this process, %s MB in the workers\n",
            peak_main, paste(sprintf("%.0f", peak_workers), collapse = " and ")))
cat(sprintf("bigfiles: Z'Z rel. diff %.2e, coefficients rel. diff %.2e, RMSE %.4f (noise sd 0.1)\n",
            d_ztz, d_coef, rmse))
cat(sprintf("bigfiles: %.0f s for all files on 2 workers, %.0f s for the two halves\n",
            t_all, t_half))
ok <- s_all$n == n_files * rows && d_ztz < 1e-10 && d_coef < 1e-8 &&
  abs(rmse - 0.1) < 0.01 && all(c(peak_main, peak_workers) <= limit_mb)
cat(if (ok) "bigfiles: ok\n" else "bigfiles: FAILED\n")
quit(status = if (ok) 0L else 1L)
