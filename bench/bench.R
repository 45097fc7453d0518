# Benchmark: rff against the tools users would pick instead, side by side on
# the same data in one run. Run with `make bench` (installs the package and
# the peers first) or, with both in place, `Rscript bench/bench.R`.
#
# The parent process runs one child per (BLAS, threads) configuration: the
# machine's default BLAS and, when installed, Debian's OpenBLAS (pthread),
# each with 1 thread and with all cores. The OpenBLAS children get it through
# the library search path of that process only (R_LD_LIBRARY_PATH and
# LD_LIBRARY_PATH, see the README); the machine's default is not changed.
# Every child times rff, the plain-R idiom, bases::b_rff and (through
# bench/peers.py, same data files) scikit-learn, and reports the BLAS in use.
# The parent prints one table and writes bench/RESULTS.md; `Rscript
# bench/bench.R --report` rewrites it from the last run (after editing
# bench/notes.md, say).
#
# Environment: BENCH_REPS (timed repetitions per row, default 5; rows whose
# first call takes over 2 s use 3, cheap rows (median under 0.5 s) 11), BENCH_ONLY (comma-separated workload
# prefixes, e.g. "F1,F2"), BENCH_CONFIGS (e.g. "default-1,openblas-2"),
# BENCH_MERGE_WITH (an earlier .build/bench/table.rds whose rows for the
# workloads not measured now are kept, e.g. the long R1 rows).

lib <- file.path(getwd(), ".build", "lib")
openblas_dir <- "/usr/lib/x86_64-linux-gnu/openblas-pthread"
python <- "/usr/bin/python3"
out_dir <- file.path(getwd(), ".build", "bench")

args <- commandArgs(TRUE)

# ---------------------------------------------------------------- helpers ----

blas_in_use <- function() {
  si <- sessionInfo()
  b <- si$BLAS
  if (grepl("openblas", b, ignore.case = TRUE) || grepl("openblas", si$LAPACK, ignore.case = TRUE))
    paste0("OpenBLAS (", b, ")")
  else if (grepl("/blas/libblas", b)) paste0("reference BLAS (", b, ")")
  else b
}

# Median wall time of `reps` calls after one warm-up call, which also
# measures the peak of R's heap during a call (gc "max used" above the
# baseline), in MB.
time_call <- function(expr, reps, env = parent.frame()) {
  expr <- substitute(expr)
  invisible(gc(reset = TRUE))
  base <- sum(gc()[, 2])
  t0 <- proc.time()[["elapsed"]]
  res <- eval(expr, env)
  first <- proc.time()[["elapsed"]] - t0
  peak <- sum(gc()[, 6]) - base
  rm(res)
  if (first > 2) reps <- min(reps, 3L)
  one <- function() {
    invisible(gc())
    t0 <- proc.time()[["elapsed"]]
    res <- eval(expr, env)
    proc.time()[["elapsed"]] - t0
  }
  times <- vapply(seq_len(reps), function(r) one(), 0)
  # cheap calls: more of them, for a steadier median
  if (median(times) < 0.5 && reps < 11L) {
    times <- c(times, vapply(seq_len(11L - reps), function(r) one(), 0))
    reps <- 11L
  }
  list(median = median(times), peak = peak, reps = reps, first = first)
}

row <- function(workload, tool, threads, t, blas, note = "") {
  data.frame(workload = workload, tool = tool, threads = threads,
             median_s = if (is.null(t)) NA_real_ else t$median,
             peak_mb = if (is.null(t)) NA_real_ else t$peak,
             reps = if (is.null(t)) NA_integer_ else as.integer(t$reps),
             first_s = if (is.null(t) || is.null(t$first)) NA_real_ else t$first,
             blas = blas, note = note, stringsAsFactors = FALSE)
}

skipped <- function(workload, tool, threads, blas, why)
  row(workload, tool, threads, NULL, blas, note = paste("skipped:", why))

wanted <- function(workload) {
  only <- Sys.getenv("BENCH_ONLY")
  if (!nzchar(only)) return(TRUE)
  any(startsWith(workload, strsplit(only, ",")[[1]]))
}

# ------------------------------------------------------------------ child ----

run_child <- function(threads, outfile) {
  .libPaths(c(lib, .libPaths()))
  suppressPackageStartupMessages(library(rff))
  reps <- as.integer(Sys.getenv("BENCH_REPS", "5"))
  blas <- blas_in_use()
  ns <- asNamespace("rff")
  have_bases <- requireNamespace("bases", quietly = TRUE)
  py_ok <- file.exists(python) &&
    system2(python, c("-c", shQuote("import sklearn, threadpoolctl")),
            stdout = FALSE, stderr = FALSE) == 0
  rows <- list()
  add <- function(r) rows[[length(rows) + 1]] <<- r
  py_work <- list()
  dir.create(out_dir, showWarnings = FALSE, recursive = TRUE)

  featurize <- function(id, n, d, D) {
    set.seed(1)
    x <- matrix(rnorm(n * d), n, d)
    l <- sqrt(d)
    for (v in c("phase", "pair")) {
      wl <- paste(id, v)
      if (!wanted(wl)) next
      m <- rff_map(d, D = D, variant = v, lengthscale = l)
      W <- m$omega
      b <- m$phase
      t_rff <- time_call(rff_features(x, map = m, threads = threads), reps)
      add(row(wl, "rff::rff_features", threads, t_rff, blas))
      plain <- if (v == "phase") {
        quote(sqrt(2 / D) * cos(x %*% W + rep(b, each = n)))
      } else {
        quote({ P <- x %*% W; sqrt(2 / D) * cbind(cos(P), sin(P)) })
      }
      # the fast paths must agree with the plain formula
      diff <- max(abs(rff_features(x, map = m, threads = threads) - eval(plain)))
      if (diff > 1e-10) warning(sprintf("%s: rff differs from plain R by %g", wl, diff))
      add(row(wl, "plain R: cos(x %*% W + b)", threads, time_call(eval(plain), reps), blas,
              note = sprintf("max |rff - plain R| = %.1e", diff)))
      if (v == "phase") {
        if (have_bases) {
          t_b <- time_call(bases::b_rff(x, p = D, stdize = "none", freqs = W, phases = b), reps)
          add(row(wl, "bases::b_rff", threads, t_b, blas, note = "given freqs/phases"))
        } else add(skipped(wl, "bases::b_rff", threads, blas, "package bases not installed"))
        if (py_ok) {
          f <- file.path(out_dir, sprintf("x_%s.bin", id))
          writeBin(as.vector(x), f)
          py_work[[length(py_work) + 1]] <<- list(workload = wl, kind = "featurize", x = f,
                                                 n = n, d = d, D = D, lengthscale = l,
                                                 reps = reps)
        } else add(skipped(wl, "sklearn RBFSampler.transform", threads, blas,
                           "python3-sklearn not importable by /usr/bin/python3"))
      } else {
        add(skipped(wl, "bases::b_rff / sklearn", threads, blas,
                    "no cos/sin-pair featurization in these tools"))
      }
    }
  }

  # the BLAS itself: crossprod (dsyrk) of a 50,000 x 1000 matrix
  if (wanted("B0")) {
    set.seed(3)
    Z <- matrix(rnorm(50000 * 1000), 50000, 1000)
    add(row("B0 crossprod 50000x1000", "BLAS dsyrk via crossprod()", threads,
            time_call(crossprod(Z), min(reps, 3L)), blas))
    rm(Z)
  }

  if (wanted("F1")) featurize("F1", 50000L, 10L, 1000L)
  if (wanted("F2")) featurize("F2", 20000L, 100L, 2000L)

  # R1: ridge on features, n = 200,000, d = 10, D = 1000. One thread only:
  # its targets are one-thread ratios, and under the reference BLAS one
  # configuration takes about a quarter of an hour.
  if (wanted("R1") && threads == 1L) {
    wl1 <- "R1 one lambda"
    wl50 <- "R1 path of 50"
    if (!exists("rff_ridge", ns)) {
      for (wl in c(wl1, wl50)) add(skipped(wl, "rff::rff_ridge", threads, blas, "not available"))
    } else {
      n <- 200000L; d <- 10L; D <- 1000L; lambda <- 1e-4
      set.seed(2)
      x <- matrix(rnorm(n * d), n, d)
      y <- sin(rowSums(x)) + rnorm(n, sd = 0.1)
      m <- rff_map(d, D = D, variant = "phase", lengthscale = sqrt(d))
      W <- m$omega
      b <- m$phase
      r1reps <- min(reps, 3L)
      fit1 <- function() rff_ridge(x, y, map = m, lambda = lambda, threads = threads,
                                   progress = FALSE)
      fit50 <- function() rff_ridge(x, y, map = m, threads = threads, progress = FALSE)
      t1 <- tryCatch(time_call(fit1(), r1reps), error = function(e) conditionMessage(e))
      if (is.character(t1)) add(skipped(wl1, "rff::rff_ridge", threads, blas, paste("error:", t1)))
      else add(row(wl1, "rff::rff_ridge", threads, t1, blas))
      t50 <- tryCatch(time_call(fit50(), r1reps), error = function(e) conditionMessage(e))
      if (is.character(t50)) add(skipped(wl50, "rff::rff_ridge", threads, blas, paste("error:", t50)))
      else add(row(wl50, "rff::rff_ridge", threads, t50, blas, note = "LOO over 50 lambdas"))
      # the default lengthscale "auto": 7 candidates on common random numbers
      wlauto <- "R1 auto lengthscale"
      fitauto <- function() rff_ridge(x, y, D = D, variant = "phase", threads = threads,
                                      progress = FALSE)
      ta <- tryCatch(time_call(fitauto(), r1reps), error = function(e) conditionMessage(e))
      if (is.character(ta)) add(skipped(wlauto, "rff::rff_ridge", threads, blas, paste("error:", ta)))
      else add(row(wlauto, "rff::rff_ridge", threads, ta, blas,
                   note = "lengthscale \"auto\", path of 50"))
      # the floor: featurization, one dsyrk of the n x D size, one Cholesky
      chunk <- 10000L
      floor_parts <- function() {
        tf <- ts <- 0
        A <- matrix(0, D, D)
        for (i0 in seq(1L, n, by = chunk)) {
          xi <- x[i0:min(n, i0 + chunk - 1L), , drop = FALSE]
          t0 <- proc.time()[["elapsed"]]
          Z <- rff_features(xi, map = m, threads = threads)
          t1 <- proc.time()[["elapsed"]]
          A <- A + crossprod(Z)           # dsyrk
          ts <- ts + proc.time()[["elapsed"]] - t1
          tf <- tf + t1 - t0
        }
        t0 <- proc.time()[["elapsed"]]
        diag(A) <- diag(A) + n * lambda
        R <- chol(A)
        c(featurize = tf, dsyrk = ts, chol = proc.time()[["elapsed"]] - t0)
      }
      parts <- replicate(r1reps, floor_parts())
      fl <- list(median = median(colSums(parts)), peak = NA_real_, reps = r1reps)
      add(row(wl1, "floor: featurize + dsyrk + Cholesky", threads, fl, blas,
              note = sprintf("featurize %.2f s, dsyrk %.2f s, Cholesky %.3f s",
                             median(parts[1, ]), median(parts[2, ]), median(parts[3, ]))))
      plain_fit <- function() {
        Z <- sqrt(2 / D) * cos(x %*% W + rep(b, each = n))
        Z <- sweep(Z, 2, colMeans(Z))
        A <- crossprod(Z)
        diag(A) <- diag(A) + n * lambda
        solve(A, crossprod(Z, y - mean(y)))
      }
      add(row(wl1, "plain R: Z, crossprod, solve", threads, time_call(plain_fit(), r1reps), blas))
      if (py_ok) {
        fx <- file.path(out_dir, "x_R1.bin"); fy <- file.path(out_dir, "y_R1.bin")
        writeBin(as.vector(x), fx); writeBin(y, fy)
        py_work[[length(py_work) + 1]] <- list(workload = wl1, kind = "ridge", x = fx, y = fy,
                                               n = n, d = d, D = D, lengthscale = sqrt(d),
                                               lambda = lambda, reps = r1reps)
      } else add(skipped(wl1, "sklearn RBFSampler + Ridge(cholesky)", threads, blas,
                         "python3-sklearn not importable by /usr/bin/python3"))
    }
  }

  # N1: Nystrom features of 20,000 x 10 on D = 500 landmarks drawn from x
  # (Gaussian kernel); the peers use the same landmarks
  if (wanted("N1")) {
    wl <- "N1 nystrom"
    n <- 20000L; d <- 10L; D <- 500L; l <- sqrt(d)
    set.seed(5)
    x <- matrix(rnorm(n * d), n, d)
    L <- x[sample.int(n, D), ]
    m <- rff_map(d, landmarks = L, lengthscale = l)
    W <- m$weights
    add(row(wl, "rff::rff_features", threads,
            time_call(rff_features(x, map = m, threads = threads), reps), blas,
            note = sprintf("rank of K(L, L) %d", m$rank)))
    plain <- quote(rff_kernel(x, L, lengthscale = l) %*% W)
    diff <- max(abs(rff_features(x, map = m, threads = threads) - eval(plain)))
    add(row(wl, "plain R: rff_kernel(x, L) %*% W", threads, time_call(eval(plain), reps), blas,
            note = sprintf("max |rff - plain R| = %.1e", diff)))
    if (py_ok) {
      fx <- file.path(out_dir, "x_N1.bin"); fl <- file.path(out_dir, "L_N1.bin")
      fz <- file.path(out_dir, "z_N1.bin")
      writeBin(as.vector(x), fx); writeBin(as.vector(L), fl)
      writeBin(as.vector(rff_features(x[1:100, ], map = m)), fz)
      py_work[[length(py_work) + 1]] <- list(workload = wl, kind = "nystrom", x = fx,
                                             landmarks = fl, z = fz, n = n, d = d, D = D,
                                             lengthscale = l, reps = reps)
    } else add(skipped(wl, "sklearn Nystroem.transform", threads, blas,
                       "python3-sklearn not importable by /usr/bin/python3"))
  }

  # P1: TensorSketch features of the polynomial kernel (x'y / l^2 + 1)^2,
  # 50,000 x 10, D = 1000; scikit-learn is given the same buckets and signs
  if (wanted("P1")) {
    wl <- "P1 polynomial"
    n <- 50000L; d <- 10L; D <- 1000L; l <- sqrt(d); p <- 2L; off <- 1
    set.seed(6)
    x <- matrix(rnorm(n * d), n, d)
    m <- rff_map(d, D = D, kernel = "polynomial", degree = p, offset = off, lengthscale = l)
    h <- m$hash
    s <- m$sign
    add(row(wl, "rff::rff_features", threads,
            time_call(rff_features(x, map = m, threads = threads), reps), blas))
    # plain R: the p count sketches, multiplied in the Fourier domain
    plain <- quote({
      u <- cbind(x / l, sqrt(off))
      P <- NULL
      for (i in seq_len(p)) {
        C <- matrix(0, n, D)
        for (k in seq_len(ncol(u))) C[, h[k, i] + 1L] <- C[, h[k, i] + 1L] + s[k, i] * u[, k]
        F <- stats::mvfft(t(C))
        P <- if (is.null(P)) F else P * F
      }
      t(Re(stats::mvfft(P, inverse = TRUE))) / D
    })
    diff <- max(abs(rff_features(x, map = m, threads = threads) - eval(plain)))
    add(row(wl, "plain R: count sketches and mvfft()", threads, time_call(eval(plain), reps),
            blas, note = sprintf("max |rff - plain R| = %.1e", diff)))
    if (py_ok) {
      fx <- file.path(out_dir, "x_P1.bin"); fz <- file.path(out_dir, "z_P1.bin")
      fh <- file.path(out_dir, "hash_P1.bin"); fs <- file.path(out_dir, "sign_P1.bin")
      writeBin(as.vector(x), fx)
      writeBin(as.double(h), fh); writeBin(as.vector(s), fs)
      writeBin(as.vector(rff_features(x[1:100, ], map = m)), fz)
      py_work[[length(py_work) + 1]] <- list(workload = wl, kind = "polynomial", x = fx,
                                             hash = fh, sign = fs, z = fz, n = n, d = d,
                                             D = D, lengthscale = l, degree = p, offset = off,
                                             reps = reps)
    } else add(skipped(wl, "sklearn PolynomialCountSketch.transform", threads, blas,
                       "python3-sklearn not importable by /usr/bin/python3"))
  }

  # E1: convergence study, 400 replications at D = 5000 on an 801-point grid
  if (wanted("E1")) {
    wl <- "E1 kernel error"
    if (!exists("rff_kernel_error", ns)) {
      add(skipped(wl, "rff::rff_kernel_error", threads, blas, "not available"))
    } else {
      grid <- matrix(seq(-4, 4, length.out = 801), ncol = 1)
      t <- tryCatch(time_call(rff_kernel_error(grid, 0, D = 5000, reps = 400), min(reps, 3L)),
                    error = function(e) conditionMessage(e))
      if (is.character(t)) add(skipped(wl, "rff::rff_kernel_error", threads, blas, paste("error:", t)))
      else add(row(wl, "rff::rff_kernel_error", threads, t, blas, note = "400 reps, D = 5000"))
    }
  }

  if (length(py_work)) {
    spec <- file.path(out_dir, sprintf("spec_%d.json", Sys.getpid()))
    json_val <- function(v) if (is.character(v)) sprintf("\"%s\"", v) else format(v, digits = 17)
    items <- vapply(py_work, function(w)
      paste0("{", paste(sprintf("\"%s\": %s", names(w), vapply(w, json_val, "")), collapse = ", "), "}"), "")
    writeLines(sprintf("{\"threads\": %d, \"workloads\": [%s]}", threads,
                       paste(items, collapse = ", ")), spec)
    # R prepends the system library directory to LD_LIBRARY_PATH; give
    # Python the search path this configuration asked for
    py_env <- Sys.getenv("BENCH_PY_LD_LIBRARY_PATH")
    env <- if (nzchar(py_env)) paste0("LD_LIBRARY_PATH=", py_env) else character()
    out <- suppressWarnings(system2(python, c("bench/peers.py", spec), stdout = TRUE,
                                    stderr = TRUE, env = env))
    ok <- grepl("^(F|R|E|N|P)[0-9]", out)
    if (!all(ok)) message(paste(out[!ok], collapse = "\n"))
    for (line in out[ok]) {
      f <- strsplit(line, ",", fixed = TRUE)[[1]]
      add(row(f[1], f[2], as.integer(f[3]),
              list(median = as.numeric(f[4]), peak = as.numeric(f[5]), reps = as.integer(f[6]),
                   first = as.numeric(f[8])),
              paste0(f[7], " [numpy]"), note = if (length(f) >= 9) f[9] else ""))
    }
  }
  saveRDS(do.call(rbind, rows), outfile)
}

# ----------------------------------------------------------------- parent ----

machine <- function() {
  cpu <- tryCatch(sub(".*:\\s*", "", grep("^Model name", system("lscpu", intern = TRUE), value = TRUE)[1]),
                  error = function(e) NA)
  mem <- tryCatch(round(as.numeric(sub("\\D+(\\d+).*", "\\1", readLines("/proc/meminfo", 1))) / 2^20, 1),
                  error = function(e) NA)
  sprintf("%s, %d cores, %s GB RAM, %s, %s", cpu, parallel::detectCores(), mem,
          R.version.string, utils::sessionInfo()$running)
}

ratio_table <- function(tab) {
  tab$ratio_to_rff <- NA_real_
  key <- paste(tab$workload, tab$threads, tab$config)
  for (k in unique(key)) {
    i <- which(key == k)
    r <- i[startsWith(tab$tool[i], "rff::")][1]
    if (!is.na(r) && !is.na(tab$median_s[r])) tab$ratio_to_rff[i] <- tab$median_s[i] / tab$median_s[r]
  }
  tab
}

targets <- function(tab) {
  get <- function(wl, tool, th, cfg, col = "median_s") {
    v <- tab[[col]][tab$workload == wl & startsWith(tab$tool, tool) & tab$threads == th & tab$config == cfg]
    if (length(v)) v[1] else NA_real_
  }
  out <- character()
  ncores <- parallel::detectCores()
  for (cfg in unique(tab$config)) {
    line <- function(what, value, goal, ok) {
      out <<- c(out, sprintf("| %s | %s | %s | %s | %s |", cfg, what, value, goal,
                             if (is.na(ok)) "not measured" else if (ok) "met" else "MISSED"))
    }
    r <- get("F1 phase", "rff::", 1, cfg) / get("F1 phase", "sklearn", 1, cfg)
    line("F1 phase, 1 thread: rff / RBFSampler", sprintf("%.2f", r), "<= 0.5", r <= 0.5)
    for (v in c("phase", "pair")) {
      r <- get(paste("F1", v), "plain R", 1, cfg) / get(paste("F1", v), "rff::", 1, cfg)
      line(sprintf("F1 %s, 1 thread: plain R / rff", v), sprintf("%.1fx", r), ">= 20x", r >= 20)
      r <- get(paste("F1", v), "rff::", 1, cfg) / get(paste("F1", v), "rff::", ncores, cfg)
      line(sprintf("F1 %s: rff 1 thread / %d threads", v, ncores), sprintf("%.2fx", r), ">= 1.7x", r >= 1.7)
    }
    for (th in unique(c(1, ncores))) {
      r <- get("F2 phase", "rff::", th, cfg) / get("F2 phase", "sklearn", th, cfg)
      line(sprintf("F2 phase, %d thread(s): rff / RBFSampler", th), sprintf("%.2f", r), "<= 0.7", r <= 0.7)
    }
    r <- get("R1 one lambda", "rff::", 1, cfg) / get("R1 one lambda", "floor", 1, cfg)
    line("R1, 1 thread: rff_ridge / (featurize + dsyrk + Cholesky)", sprintf("%.2f", r), "<= 1.15", r <= 1.15)
    r <- get("R1 path of 50", "rff::", 1, cfg) / get("R1 one lambda", "rff::", 1, cfg)
    line("R1, 1 thread: 50-lambda path / one lambda", sprintf("%.2f", r), "<= 1.2", r <= 1.2)
    r <- get("R1 auto lengthscale", "rff::", 1, cfg) / get("R1 path of 50", "rff::", 1, cfg)
    line("R1, 1 thread: lengthscale \"auto\" / one given lengthscale", sprintf("%.2f", r), "<= 3", r <= 3)
    r <- get("R1 one lambda", "rff::", 1, cfg, "peak_mb") / get("R1 one lambda", "plain R", 1, cfg, "peak_mb")
    line("R1: rff_ridge peak memory / plain R's", sprintf("%.1f%%", 100 * r), "<= 5%", r <= 0.05)
    t <- get("E1 kernel error", "rff::", ncores, cfg)
    line(sprintf("E1, %d threads", ncores), sprintf("%.2f s", t), "< 2 s", t < 2)
  }
  out
}

run_parent <- function() {
  ncores <- parallel::detectCores()
  configs <- list(
    list(name = "default", threads = 1L), list(name = "default", threads = ncores),
    list(name = "openblas", threads = 1L), list(name = "openblas", threads = ncores))
  pick <- Sys.getenv("BENCH_CONFIGS")
  if (nzchar(pick)) {
    keep <- strsplit(pick, ",")[[1]]
    configs <- Filter(function(cf) paste0(cf$name, "-", cf$threads) %in% keep, configs)
  }
  have_openblas <- file.exists(file.path(openblas_dir, "libblas.so.3"))
  if (!have_openblas) message("OpenBLAS configurations skipped: ", openblas_dir,
                              " not found (Debian package libopenblas0-pthread)")
  dir.create(out_dir, showWarnings = FALSE, recursive = TRUE)
  tabs <- list()
  for (cf in configs) {
    if (cf$name == "openblas" && !have_openblas) next
    env <- c(sprintf("OPENBLAS_NUM_THREADS=%d", cf$threads), sprintf("OMP_NUM_THREADS=%d", cf$threads))
    if (cf$name == "openblas") {
      env <- c(env, sprintf("R_LD_LIBRARY_PATH=%s:%s", openblas_dir, R.home("lib")),
               sprintf("LD_LIBRARY_PATH=%s", openblas_dir),
               sprintf("BENCH_PY_LD_LIBRARY_PATH=%s", openblas_dir))
    }
    outfile <- file.path(out_dir, sprintf("rows_%s_%d.rds", cf$name, cf$threads))
    unlink(outfile)
    message(sprintf("bench: %s BLAS, %d thread(s) ...", cf$name, cf$threads))
    status <- system2(file.path(R.home("bin"), "Rscript"), c("bench/bench.R", "--child", cf$threads, outfile),
                      env = env)
    if (status != 0 || !file.exists(outfile)) {
      message("bench: configuration failed: ", cf$name, " ", cf$threads)
      next
    }
    tab <- readRDS(outfile)
    tab$config <- cf$name
    tabs[[length(tabs) + 1]] <- tab
  }
  tab <- do.call(rbind, tabs)
  tab$run <- format(Sys.time(), tz = "UTC", usetz = FALSE)
  # BENCH_MERGE_WITH: an earlier table.rds whose rows for workloads this run
  # did not measure (first word, e.g. "R1", per BLAS) are kept, with their
  # run's date; ratios stay within one run
  old_file <- Sys.getenv("BENCH_MERGE_WITH")
  if (nzchar(old_file)) {
    old <- readRDS(old_file)
    if (is.null(old$run)) old$run <- format(attr(old, "when"), tz = "UTC", usetz = FALSE)
    old$ratio_to_rff <- NULL
    kind <- function(t) paste(t$config, sub(" .*", "", t$workload))
    old <- old[!kind(old) %in% kind(tab), names(tab)]
    tab <- rbind(tab, old)
  }
  tab <- ratio_table(tab)
  tab <- tab[order(tab$config, substr(tab$workload, 1, 2), tab$threads, tab$workload), ]
  attr(tab, "when") <- sort(unique(tab$run))
  attr(tab, "machine") <- machine()
  saveRDS(tab, file.path(out_dir, "table.rds"))
  write_report(tab)
}

# Prints the table and writes bench/RESULTS.md (with bench/notes.md,
# bench/RESULTS-ridge.md and bench/RESULTS-stats-apply.md appended) from a
# measured table; `Rscript
# bench/bench.R --report` does it again from the last run's table, e.g.
# after editing the notes.
write_report <- function(tab) {
  show <- data.frame(
    workload = tab$workload, tool = tab$tool, threads = tab$threads,
    `median s` = ifelse(is.na(tab$median_s), "", sprintf("%.3f", tab$median_s)),
    `ratio to rff` = ifelse(is.na(tab$ratio_to_rff), "", sprintf("%.2f", tab$ratio_to_rff)),
    `peak MB` = ifelse(is.na(tab$peak_mb), "", sprintf("%.0f", tab$peak_mb)),
    reps = ifelse(is.na(tab$reps), "", tab$reps),
    `first s` = ifelse(is.na(tab$first_s), "", sprintf("%.3f", tab$first_s)),
    run = tab$run,
    blas = tab$blas, note = tab$note, check.names = FALSE)
  print(show, right = FALSE, row.names = FALSE)
  tg <- targets(tab)
  cat("\nTargets\n", paste(tg, collapse = "\n"), "\n", sep = "")
  md <- c("# Benchmark results", "",
          sprintf("Produced by `make bench` (bench/bench.R) on %s UTC%s.",
                  paste(attr(tab, "when"), collapse = " and "),
                  if (length(attr(tab, "when")) > 1) " (column `run` tells which row is from which)" else ""),
          "", sprintf("Machine: %s.", attr(tab, "machine")), "",
          paste("Times are medians of repeated calls (count in `reps`) after one warm-up call,",
                "wall clock, including the allocation of the result; `first s` is that warm-up",
                "call, the first of its kind in the process. Ratios are taken within one",
                "run and one BLAS. Peak memory is the growth of the R heap (gc's max used) or of",
                "Python's traced allocations (tracemalloc, which sees numpy's buffers) during one call;",
                "memory outside those heaps (BLAS workspace) is not counted."), "",
          "| workload | tool | threads | median s | ratio to rff | peak MB | reps | first s | run | BLAS | note |",
          "|---|---|---|---|---|---|---|---|---|---|---|",
          sprintf("| %s | %s | %d | %s | %s | %s | %s | %s | %s | %s | %s |", show$workload, show$tool,
                  show$threads, show$`median s`, show$`ratio to rff`, show$`peak MB`, show$reps,
                  show$`first s`, show$run, show$blas, show$note),
          "", "## Targets", "", "| BLAS | target | measured | goal | |", "|---|---|---|---|---|", tg)
  # the analysis, threads beside the BLAS (bench/threads.R), the cost of
  # lengthscale "auto" (bench/auto.R), the ridge memory benchmark
  # (bench/ridge-memory.R), the fit from files (bench/stats-apply.R) and
  # kernel logistic / multinomial regression (bench/glm.R)
  for (notes in c("bench/notes.md", "bench/RESULTS-threads.md", "bench/RESULTS-auto.md",
                  "bench/RESULTS-ridge.md", "bench/RESULTS-stats-apply.md",
                  "bench/RESULTS-glm.md")) {
    if (file.exists(notes)) md <- c(md, "", readLines(notes))
  }
  writeLines(md, "bench/RESULTS.md")
  cat("\nwrote bench/RESULTS.md\n")
}

if (length(args) >= 1 && args[1] == "--child") {
  run_child(as.integer(args[2]), args[3])
} else if (length(args) >= 1 && args[1] == "--report") {
  write_report(readRDS(file.path(out_dir, "table.rds")))
} else {
  run_parent()
}
