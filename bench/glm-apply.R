# Kernel logistic regression from files on two PSOCK workers
# (rff_glm_apply()) against rff_glm() in one process with the rows in
# memory: a binary problem of n = 2,000,000 rows (--small: 200,000), d = 10
# inputs, in 20 RDS files, D = 500 ("pair", Gaussian kernel, lengthscale
# 3), one lambda (1e-4). Each route runs once, in a child R process of its
# own, in this order:
#   one process, rows in memory, 1 thread:  rff_glm(x, y, map = m, lambda, threads = 1)
#   one process, rows in memory, 2 threads: rff_glm(..., threads = 2)
#   2 PSOCK workers reading the files, 1 thread each: rff_glm_apply(files, readRDS, m, cluster = cl)
# then the first and the third again under a virtual memory limit
# (`ulimit -v`) of an idle R process plus 128 MB plus 3/4 of the rows'
# bytes, with the features streamed (cache_mb = 0): the one process needs
# all rows (twice, while the files are bound into one matrix), each worker
# half of them. Reports wall time, solver passes, the peak resident memory
# (VmHWM) of each process and the coefficients' difference to the first
# route, as a markdown table (bench/RESULTS-glm-apply.md).
#
# Run from the package root after `make install` (or an install into
# .build/lib):
#   Rscript bench/glm-apply.R --small
#   Rscript bench/glm-apply.R            # the full size
args <- commandArgs(trailingOnly = TRUE)
.libPaths(c(".build/lib", .libPaths()))
suppressPackageStartupMessages(library(rff))
opt <- function(name, default = NULL) {
  a <- grep(paste0("^--", name, "="), args, value = TRUE)
  if (length(a)) sub(paste0("^--", name, "="), "", a[1L]) else default
}
vm_kb <- function(field) {
  s <- grep(paste0("^", field, ":"), readLines("/proc/self/status"), value = TRUE)
  as.numeric(strsplit(trimws(sub(paste0(field, ":"), "", s)), " +")[[1L]][1L])
}
lambda <- 1e-4
# CPU time (user + system) of this process
cpu_now <- function() sum(proc.time()[c("user.self", "sys.self")])

# ---- a child: one route, its result saved to --out ----
route <- opt("route")
if (!is.null(route)) {
  dir <- opt("dir")
  cache <- as.numeric(opt("cache_mb", "1024"))
  files <- readRDS(file.path(dir, "files.rds"))
  m <- readRDS(file.path(dir, "map.rds"))
  set.seed(1)   # the same rows for the preconditioner in every route
  res <- tryCatch({
    if (route %in% c("one1", "one2")) {
      t_read <- system.time({
        parts <- lapply(files, readRDS)
        x <- do.call(rbind, lapply(parts, `[[`, "x"))
        y <- factor(unlist(lapply(parts, function(p) as.character(p$y))), levels = c("no", "yes"))
        rm(parts)
      })[["elapsed"]]
      c0 <- cpu_now()
      t <- system.time(fit <- rff_glm(x, y, map = m, lambda = lambda, standardize = FALSE,
                                      threads = if (route == "one1") 1 else 2, cache_mb = cache,
                                      progress = FALSE))[["elapsed"]]
      list(ok = TRUE, time = t, read = t_read, passes = NA, iter = fit$iterations,
           cpu = cpu_now() - c0,
           coef = fit$coefficients, hwm = vm_kb("VmHWM"), cached = fit$cached)
    } else {
      cl <- parallel::makeCluster(2)
      invisible(parallel::clusterCall(cl, function(p) .libPaths(p), .libPaths()))
      invisible(parallel::clusterEvalQ(cl, library(rff)))
      w0 <- unlist(parallel::clusterCall(cl, cpu_now))
      c0 <- cpu_now()
      t <- system.time(fit <- rff_glm_apply(files, readRDS, m, lambda = lambda, cluster = cl,
                                            cache_mb = cache))[["elapsed"]]
      cpu <- c(cpu_now() - c0, unlist(parallel::clusterCall(cl, cpu_now)) - w0)
      hw <- unlist(parallel::clusterCall(cl, vm_kb, "VmHWM"))
      parallel::stopCluster(cl)
      list(ok = TRUE, time = t, read = NA, passes = fit$passes, rounds = fit$rounds, cpu = cpu,
           iter = fit$iterations, coef = fit$coefficients, hwm = c(vm_kb("VmHWM"), hw),
           cached = fit$cached)
    }
  }, error = function(e) list(ok = FALSE, error = conditionMessage(e), hwm = vm_kb("VmHWM")))
  saveRDS(res, opt("out"))
  quit(save = "no")
}

# ---- the driver ----
small <- "--small" %in% args
n <- as.numeric(opt("n", if (small) 2e5 else 2e6))   # --n= for a quick try
d <- 10
D <- 500
n_files <- 20
load_avg <- function() strsplit(readLines("/proc/loadavg", warn = FALSE), " ")[[1]][1:3]
load_before <- load_avg()
set.seed(28)
dir <- tempfile("rff-bench-glm-apply-")
dir.create(dir)
files <- file.path(dir, sprintf("part-%02d.rds", seq_len(n_files)))
for (i in seq_len(n_files)) {
  k <- n / n_files
  x <- matrix(rnorm(k * d), k, d)
  f <- 2 * (sin(x[, 1]) + x[, 2] * x[, 3])
  y <- factor(runif(k) < stats::plogis(f), levels = c(FALSE, TRUE), labels = c("no", "yes"))
  saveRDS(list(x = x, y = y), files[i], compress = FALSE)
}
saveRDS(files, file.path(dir, "files.rds"))
saveRDS(rff_map(d, D = D, lengthscale = 3), file.path(dir, "map.rds"))
data_bytes <- n * (d + 1) * 8

me <- "bench/glm-apply.R"
run_route <- function(route, limit_kb = NULL, cache_mb = 1024) {
  out <- tempfile(fileext = ".rds")
  cmd <- sprintf("%sexec Rscript %s --route=%s --dir=%s --out=%s --cache_mb=%g",
                 if (is.null(limit_kb)) "" else sprintf("ulimit -v %d; ", as.integer(limit_kb)),
                 me, route, dir, out, cache_mb)
  wall <- system.time(status <- system2("bash", c("-c", shQuote(cmd)), stdout = FALSE,
                                        stderr = FALSE))[["elapsed"]]
  if (!file.exists(out)) return(list(ok = FALSE, error = sprintf("exit status %d", status)))
  readRDS(out)
}
base_kb <- {
  out <- tempfile()
  system2("Rscript", c("-e", shQuote(sprintf(
    ".libPaths(c('.build/lib', .libPaths())); suppressPackageStartupMessages(library(rff)); writeLines(grep('^VmPeak', readLines('/proc/self/status'), value = TRUE), '%s')",
    out))))
  as.numeric(strsplit(trimws(sub("VmPeak:", "", readLines(out))), " +")[[1L]][1L])
}
limit_kb <- base_kb + 128 * 1024 + 0.75 * data_bytes / 1024

routes <- list(
  "one process, rows in memory, 1 thread" = run_route("one1"),
  "one process, rows in memory, 2 threads" = run_route("one2"),
  "2 PSOCK workers reading the 20 files, 1 thread each" = run_route("apply"),
  "under `ulimit -v`: one process, rows in memory, 1 thread, features streamed" =
    run_route("one1", limit_kb, 0),
  "under `ulimit -v`: 2 PSOCK workers, features streamed" = run_route("apply", limit_kb, 0))
unlink(dir, recursive = TRUE)

ref <- routes[[1L]]
si <- sessionInfo()
cat(sprintf("n = %s rows, d = %d, D = %d, %d files; R %s, BLAS %s, %d cores\n",
            format(n, big.mark = ","), d, D, n_files, getRversion(), si$BLAS,
            parallel::detectCores()))
cat(sprintf("load average (1, 5, 15 min) %s before, %s after\n",
            paste(load_before, collapse = " "), paste(load_avg(), collapse = " ")))
cat(sprintf("memory limit of the last two routes: ulimit -v %d kB (idle R %d kB + 128 MB + 3/4 of %.0f MB of rows)\n\n",
            as.integer(limit_kb), as.integer(base_kb), data_bytes / 2^20))
cat("| route | finished | wall s (fit; one process: + reading the files) | ratio to one process, 1 thread | CPU s of the fit (this process; workers) | passes (iterations) | peak RSS MB (this process; workers) | coefficients rel. diff |\n")
cat("|---|---|---|---|---|---|---|---|\n")
for (nm in names(routes)) {
  r <- routes[[nm]]
  mb <- paste(sprintf("%.0f", r$hwm / 1024), collapse = "; ")
  if (!isTRUE(r$ok)) {
    cat(sprintf("| %s | no: %s | | | | | %s | |\n", nm, gsub("[|\n]", " ", substr(r$error, 1, 120)), mb))
    next
  }
  rel <- if (isTRUE(ref$ok)) max(abs(r$coef - ref$coef)) / max(abs(ref$coef)) else NA
  cpu <- sprintf("%.1f", r$cpu)
  cpu <- if (length(cpu) > 1L) paste0(cpu[1L], "; ", paste(cpu[-1L], collapse = ", ")) else cpu
  cat(sprintf("| %s | yes | %.1f%s | %.2f | %s | %s (%s) | %s | %.1e |\n", nm, r$time,
              if (is.na(r$read)) "" else sprintf(" + %.1f", r$read),
              if (isTRUE(ref$ok)) r$time / ref$time else NA, cpu,
              if (is.na(r$passes)) "-" else r$passes, paste(r$iter, collapse = ","), mb, rel))
}
