# Benchmark: rff's threads beside the BLAS's own. For the machine's default
# BLAS and Debian's OpenBLAS (loaded in a child process through its library
# path; the machine's default is not changed), with the BLAS left at its own
# default thread count (all cores, as a user gets it), times
#   T1: rff_ridge() on 50,000 x 10, D = 1000, one lambda, and
#   T2: rff_cv() on 20,000 x 10, D = 600, 5 folds, a path of 50 lambdas,
# each with the default `threads`, threads = 1 and threads = all cores, and
# the BLAS floor of T1 in the same process: rff_features() + crossprod() +
# chol(). Writes bench/RESULTS-threads.md (appended to bench/RESULTS.md by
# bench/bench.R). Run with `make bench` or `Rscript bench/threads.R` after
# `make install`.

lib <- file.path(getwd(), ".build", "lib")
openblas_dir <- "/usr/lib/x86_64-linux-gnu/openblas-pthread"
out_dir <- file.path(getwd(), ".build", "bench")
args <- commandArgs(TRUE)

median_time <- function(f, reps) {
  f()   # warm-up
  median(vapply(seq_len(reps), function(i) {
    invisible(gc())
    system.time(f())[["elapsed"]]
  }, 0))
}

child <- function(outfile) {
  .libPaths(c(lib, .libPaths()))
  suppressPackageStartupMessages(library(rff))
  reps <- as.integer(Sys.getenv("BENCH_REPS", "3"))
  info <- rff_blas_info()
  ncores <- parallel::detectCores()
  set.seed(2)
  n <- 50000L; d <- 10L; D <- 1000L; lambda <- 1e-4
  x <- matrix(rnorm(n * d), n, d)
  y <- sin(rowSums(x)) + rnorm(n, sd = 0.1)
  m <- rff_map(d, D = D, variant = "phase", lengthscale = sqrt(d))
  rows <- list()
  add <- function(workload, how, t) rows[[length(rows) + 1L]] <<-
    data.frame(blas = info$blas, blas_threads = info$blas_threads, workload = workload,
               how = how, seconds = t, stringsAsFactors = FALSE)
  fit <- function(th) function() rff_ridge(x, y, map = m, lambda = lambda, threads = th,
                                           progress = FALSE)
  add("T1 ridge", "threads default", median_time(fit(NULL), reps))
  add("T1 ridge", "threads = 1", median_time(fit(1L), reps))
  add("T1 ridge", sprintf("threads = %d", ncores), median_time(fit(ncores), reps))
  add("T1 ridge", "floor: rff_features + crossprod + chol", median_time(function() {
    Z <- rff_features(x, map = m)
    A <- crossprod(Z)
    diag(A) <- diag(A) + n * lambda
    chol(A)
  }, reps))
  xs <- x[1:20000, ]; ys <- y[1:20000]
  m6 <- rff_map(d, D = 600, variant = "phase", lengthscale = sqrt(d))
  cv <- function(th) function() rff_cv(xs, ys, map = m6, folds = 5, threads = th,
                                       progress = FALSE)
  add("T2 cv", "threads default", median_time(cv(NULL), reps))
  add("T2 cv", "threads = 1", median_time(cv(1L), reps))
  add("T2 cv", sprintf("threads = %d", ncores), median_time(cv(ncores), reps))
  saveRDS(do.call(rbind, rows), outfile)
}

parent <- function() {
  dir.create(out_dir, showWarnings = FALSE, recursive = TRUE)
  configs <- list(default = character())
  if (file.exists(file.path(openblas_dir, "libblas.so.3"))) {
    configs$openblas <- c(sprintf("R_LD_LIBRARY_PATH=%s:%s", openblas_dir, R.home("lib")),
                          sprintf("LD_LIBRARY_PATH=%s", openblas_dir))
  } else message("threads bench: OpenBLAS not installed, its rows skipped")
  tabs <- list()
  for (nm in names(configs)) {
    outfile <- file.path(out_dir, sprintf("threads_%s.rds", nm))
    unlink(outfile)
    message("threads bench: ", nm, " BLAS ...")
    # the BLAS at its own default: OPENBLAS_NUM_THREADS and OMP_NUM_THREADS
    # unset
    status <- system2("env", c("-u", "OPENBLAS_NUM_THREADS", "-u", "OMP_NUM_THREADS", configs[[nm]],
                               file.path(R.home("bin"), "Rscript"), "bench/threads.R", "--child",
                               outfile))
    if (status == 0 && file.exists(outfile)) tabs[[nm]] <- readRDS(outfile)
  }
  tab <- do.call(rbind, tabs)
  saveRDS(tab, file.path(out_dir, "threads.rds"))
  report(tab)
}

report <- function(tab) {
  when <- format(Sys.time(), "%Y-%m-%d %H:%M", tz = "UTC")
  lines <- c("## Threads beside the BLAS (bench/threads.R)", "",
             sprintf("Measured %s UTC, medians of %s calls after a warm-up; the BLAS at its own default threads.",
                     when, Sys.getenv("BENCH_REPS", "3")), "",
             "| BLAS | workload | call | seconds | ratio to best of 1 and all |", "|---|---|---|---|---|")
  targets <- c("", "| BLAS | target | measured | goal | |", "|---|---|---|---|---|")
  for (b in unique(tab$blas)) for (w in unique(tab$workload)) {
    t <- tab[tab$blas == b & tab$workload == w, ]
    if (!nrow(t)) next
    best <- min(t$seconds[grepl("^threads = ", t$how)])
    for (i in seq_len(nrow(t))) {
      lines <- c(lines, sprintf("| %s (%d threads) | %s | %s | %.2f | %.2f |", b, t$blas_threads[i],
                                w, t$how[i], t$seconds[i], t$seconds[i] / best))
    }
    def <- t$seconds[t$how == "threads default"]
    r <- def / best
    targets <- c(targets, sprintf("| %s | %s: default threads / best of 1 and all | %.2f | <= 1.10 | %s |",
                                  b, w, r, if (r <= 1.1) "met" else "MISSED"))
    fl <- t$seconds[startsWith(t$how, "floor")]
    if (length(fl)) {
      r <- def / fl
      targets <- c(targets, sprintf("| %s | %s: default threads / BLAS floor | %.2f | <= 1.30 | %s |",
                                    b, w, r, if (r <= 1.3) "met" else "MISSED"))
    }
  }
  writeLines(c(lines, targets), "bench/RESULTS-threads.md")
  cat(c(lines, targets), sep = "\n")
}

if (length(args) >= 1 && args[1] == "--child") child(args[2]) else parent()
