# The child of bench/bench.R: one (BLAS, threads) configuration, timing
# every workload's tools and saving its rows (run_child()). Sourced by
# bench/bench.R, whose helpers (time_call(), row(), skipped(), wanted())
# it uses; run from the package root.

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
