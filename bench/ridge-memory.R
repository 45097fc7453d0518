# Peak memory and time of rff_ridge() against the plain-R route
#   Z <- rff_features(x, map); solve(crossprod(Z) + n * lambda * I, crossprod(Z, y))
# at n = 200,000, d = 10, D = 1000, one lambda, same map and data.
#
# Usage (from the package root, with rff installed in LIB):
#   Rscript bench/ridge-memory.R LIB > bench/ridge-memory.out
#
# Each route runs in a fresh child R process, one after another, so the
# numbers come from one run of this script: peak resident memory of the child
# (VmHWM from /proc/self/status, Linux), R's own peak heap (gc "max used"),
# and the elapsed time of the fit alone (data generation excluded). The
# "data only" row is the baseline: R plus the inputs.
args <- commandArgs(trailingOnly = TRUE)
lib <- if (length(args)) normalizePath(args[1L]) else .libPaths()[1L]
n <- if (length(args) > 1L) as.integer(args[2L]) else 200000L  # 2nd argument: smoke test
d <- 10L; D <- 1000L; lambda <- 1e-4

child <- function(route, out) {
  sprintf('
    library(rff, lib.loc = "%s")
    set.seed(1)
    n <- %d; d <- %d; D <- %d; lambda <- %g
    x <- matrix(rnorm(n * d), n, d)
    y <- sin(x[, 1]) + x[, 2] * x[, 3] + rnorm(n, sd = 0.1)
    m <- rff_map(d, D = D, lengthscale = 3)
    invisible(gc(reset = TRUE))
    st <- system.time(beta <- { %s })
    t <- st[["elapsed"]]
    cpu <- sum(st[c("user.self", "sys.self")])
    heap <- sum(gc()[, 6L])  # max used, Mb (Ncells + Vcells)
    hwm <- grep("^VmHWM", readLines("/proc/self/status"), value = TRUE)
    hwm <- as.numeric(gsub("[^0-9]", "", hwm)) / 1024
    saveRDS(beta, "%s")
    cat(sprintf("RESULT %%.2f %%.1f %%.1f %%.2f\\n", t, hwm, heap, cpu))
  ', lib, n, d, D, lambda, route, out)
}

routes <- c(
  "data only" = "NULL",
  "rff_ridge(), one lambda" =
    "drop(rff_ridge(x, y, lambda = lambda, map = m, intercept = FALSE, progress = FALSE)$coefficients)",
  "rff_ridge(), path of 50 lambdas" =
    "rff_ridge(x, y, map = m, intercept = FALSE, progress = FALSE)$lambda_best",
  "plain R (rff_features + crossprod + solve)" =
    "Z <- rff_features(x, map = m); drop(solve(crossprod(Z) + n * lambda * diag(D), crossprod(Z, y)))"
)

res <- data.frame(route = names(routes), seconds = NA_real_, cpu_seconds = NA_real_,
                  peak_rss_mb = NA_real_, r_heap_mb = NA_real_)
betas <- list()
for (i in seq_along(routes)) {
  f <- tempfile(fileext = ".R")
  rds <- tempfile(fileext = ".rds")
  writeLines(child(routes[[i]], rds), f)
  out <- system2(file.path(R.home("bin"), "Rscript"), c("--vanilla", f), stdout = TRUE)
  line <- strsplit(grep("^RESULT", out, value = TRUE), " ")[[1L]]
  res$seconds[i] <- as.numeric(line[2L])
  res$peak_rss_mb[i] <- as.numeric(line[3L])
  res$r_heap_mb[i] <- as.numeric(line[4L])
  res$cpu_seconds[i] <- as.numeric(line[5L])
  betas[[i]] <- readRDS(rds)
  message(sprintf("%-45s %8.1f s %8.0f MB", res$route[i], res$seconds[i], res$peak_rss_mb[i]))
}
base <- res$peak_rss_mb[1L]
res$extra_rss_mb <- res$peak_rss_mb - base
plain <- nrow(res)
res$time_ratio <- res$seconds / res$seconds[plain]
res$extra_mem_ratio <- res$extra_rss_mb / res$extra_rss_mb[plain]
res$time_ratio[1L] <- res$extra_mem_ratio[1L] <- NA

cat(sprintf("n = %d, d = %d, D = %d, lambda = %g, intercept = FALSE\n", n, d, D, lambda))
cat(sprintf("max relative difference of coefficients, rff_ridge() vs plain R: %.2e\n",
            max(abs(betas[[2L]] - betas[[plain]])) / max(abs(betas[[plain]]))))
cat(sprintf("date: %s UTC; nproc: %s; threads: %s\n",
            format(Sys.time(), tz = "UTC"), parallel::detectCores(),
            "default (all cores)"))
si <- sessionInfo()
cat(sprintf("%s; BLAS: %s; LAPACK: %s\n", si$R.version$version.string, si$BLAS, si$LAPACK))
cat("\n| route | fit time (s) | time / plain R | CPU time (s) | peak RSS (MB) | peak RSS above data only (MB) | ratio to plain R | R heap max used (MB) |\n")
cat("|---|---:|---:|---:|---:|---:|---:|---:|\n")
for (i in seq_len(nrow(res))) {
  cat(sprintf("| %s | %.1f | %s | %.1f | %.0f | %.0f | %s | %.0f |\n", res$route[i], res$seconds[i],
              if (is.na(res$time_ratio[i])) "" else sprintf("%.2f", res$time_ratio[i]),
              res$cpu_seconds[i],
              res$peak_rss_mb[i], res$extra_rss_mb[i],
              if (is.na(res$extra_mem_ratio[i])) "" else sprintf("%.3f", res$extra_mem_ratio[i]),
              res$r_heap_mb[i]))
}
