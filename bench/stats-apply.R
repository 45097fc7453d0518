# A ridge fit from files on two PSOCK workers (rff_stats_apply()) against
# the one-process fit on the same data: n = 2,000,000 rows, d = 10, D = 500
# ("pair", Gaussian kernel), one lambda, in 8 RDS files of 250,000 rows.
# Each route is timed once (wall clock), in this order:
#   one process, rows in memory, 1 thread:   rff_ridge(rff_stats(x, y, m, threads = 1), lambda)
#   one process, reading the files, 1 thread: rff_stats_apply(files, readRDS, m, threads = 1)
#   2 PSOCK workers reading the files, 1 thread each: rff_stats_apply(..., cluster = cl)
#   one process, rows in memory, 2 threads:  rff_stats(..., threads = 2)
# and the ratios are to the first; the CPU time of each process is given
# too (on a machine shared with other jobs). Prints a markdown table; its numbers
# are in bench/RESULTS-stats-apply.md.
#
# Run from the package root after `make install`:
#   Rscript bench/stats-apply.R
.libPaths(c(".build/lib", .libPaths()))
library(rff)

load_avg <- function() strsplit(readLines("/proc/loadavg", warn = FALSE), " ")[[1]][1:3]
load_before <- load_avg()
set.seed(16)
n <- 2e6
d <- 10
D <- 500
n_files <- 8
lambda <- 1e-4
x <- matrix(rnorm(n * d), n, d)
y <- sin(x[, 1]) + x[, 2] * x[, 3] + rnorm(n, sd = 0.3)
map <- rff_map(d, D = D, lengthscale = 3)
dir <- tempfile("rff-bench-files-")
dir.create(dir)
files <- file.path(dir, sprintf("part-%d.rds", seq_len(n_files)))
rows <- split(seq_len(n), rep(seq_len(n_files), each = n / n_files))
for (i in seq_len(n_files)) {
  saveRDS(list(x = x[rows[[i]], ], y = y[rows[[i]]]), files[i], compress = FALSE)
}
on.exit(unlink(dir, recursive = TRUE))

# Wall time of one call, and the CPU time (user + system) it took in this
# process and, with a cluster, in each worker: on a machine shared with
# other jobs the wall time grows with the load, the CPU time much less.
cpu_now <- function() sum(proc.time()[c("user.self", "sys.self")])
wall <- function(expr, cl = NULL) {
  invisible(gc())
  w0 <- if (!is.null(cl)) unlist(parallel::clusterCall(cl, cpu_now))
  c0 <- cpu_now()
  t <- system.time(value <- force(expr))[["elapsed"]]
  cpu <- cpu_now() - c0
  if (!is.null(cl)) cpu <- c(cpu, unlist(parallel::clusterCall(cl, cpu_now)) - w0)
  list(time = t, cpu = cpu, fit = value)
}
fit_of <- function(stats) rff_ridge(stats, lambda = lambda)

r_mem1 <- wall(fit_of(rff_stats(x, y, map, threads = 1)))
r_file1 <- wall(fit_of(rff_stats_apply(files, readRDS, map, threads = 1, progress = FALSE)))
t_start <- system.time({
  cl <- parallel::makeCluster(2)
  invisible(parallel::clusterCall(cl, function(p) .libPaths(p), .libPaths()))
  invisible(parallel::clusterEvalQ(cl, library(rff)))
})[["elapsed"]]
r_cl <- wall(fit_of(rff_stats_apply(files, readRDS, map, cluster = cl, progress = FALSE)), cl)
parallel::stopCluster(cl)
r_mem2 <- wall(fit_of(rff_stats(x, y, map, threads = 2)))

rel <- function(a) max(abs(coef(a$fit) - coef(r_mem1$fit))) / max(abs(coef(r_mem1$fit)))
routes <- list(
  "one process, rows in memory, 1 thread" = r_mem1,
  "one process, reading the 8 files, 1 thread" = r_file1,
  "2 PSOCK workers reading the 8 files, 1 thread each" = r_cl,
  "one process, rows in memory, 2 threads" = r_mem2)
si <- sessionInfo()
cat(sprintf("R %s, BLAS %s, %d cores; load average (1, 5, 15 min) %s before, %s after\n",
            getRversion(), si$BLAS, parallel::detectCores(),
            paste(load_before, collapse = " "), paste(load_avg(), collapse = " ")))
cat(sprintf("cluster start-up (not included): %.1f s\n\n", t_start))
cat("| route | wall s | ratio to one process (1 thread, in memory) | CPU s (this process; workers) | coefficients rel. diff |\n")
cat("|---|---|---|---|---|\n")
for (nm in names(routes)) {
  r <- routes[[nm]]
  cpu <- sprintf("%.1f", r$cpu)
  cpu <- if (length(cpu) > 1L) paste0(cpu[1L], "; ", paste(cpu[-1L], collapse = ", ")) else cpu
  cat(sprintf("| %s | %.1f | %.2f | %s | %.1e |\n", nm, r$time, r$time / r_mem1$time, cpu, rel(r)))
}
