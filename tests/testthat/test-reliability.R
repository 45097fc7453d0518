# Hangs, crashes and wrong refusals reachable with ordinary calls, each run
# in a child R process with a time limit, so a hang or a crash is a failure
# and not the end of the test run.

child_ok <- function(code, timeout = 90) {
  out <- run_child(code, timeout = timeout)
  list(ok = out$status == 0L && any(out$output == "DONE"),
       output = paste(out$output, collapse = "\n"))
}

# the parent featurizes on two threads before it forks
parent_threaded <- 'set.seed(1)
x <- matrix(rnorm(60000), ncol = 3)
m <- rff_map(3, D = 200)
Z <- rff_features(x, map = m, threads = 2)
'

test_that("a child forked by mclapply after a threaded call runs single-threaded and finishes", {
  skip_on_os("windows")
  res <- child_ok(paste0(parent_threaded, '
y <- x[, 1]
fit <- rff_ridge(x, y, map = m, lambda = 1e-3, threads = 2, progress = FALSE, standardize = FALSE)
out <- parallel::mclapply(1:2, function(i) {
  list(Z = rff_features(x, map = m, threads = 2),
       beta = coef(rff_ridge(x, y, map = m, lambda = 1e-3, threads = 2, progress = FALSE, standardize = FALSE)),
       info = .Call(rff:::C_rff_runtime_info, 0, 2L))
}, mc.cores = 2)
stopifnot(identical(out[[1]]$Z, Z), identical(out[[2]]$Z, Z))
stopifnot(isTRUE(all.equal(out[[1]]$beta, coef(fit), tolerance = 1e-12)))
stopifnot(out[[1]]$info$threads == 1L, out[[1]]$info$forked)
info <- .Call(rff:::C_rff_runtime_info, 0, 2L)
stopifnot(info$threads == 2L, !info$forked)
cat("DONE\\n")
'), timeout = 60)
  expect_true(res$ok, label = res$output)
})

test_that("future's multicore plan runs rff in forked workers after a threaded call", {
  skip_on_os("windows")
  skip_if_not_installed("future")
  res <- child_ok(paste0(parent_threaded, '
future::plan(future::multicore, workers = 2)
f <- lapply(1:2, function(i) future::future(rff_features(x, map = m, threads = 2)))
v <- lapply(f, future::value)
stopifnot(identical(v[[1]], Z), identical(v[[2]], Z))
cat("DONE\\n")
'), timeout = 60)
  expect_true(res$ok, label = res$output)
})

test_that("the Matern nu has a range: no hang below it, no crash above it", {
  res <- child_ok('
bad <- function(expr) tryCatch({ expr; "no error" }, rff_error = function(e) conditionMessage(e))
stopifnot(grepl("between 0.05 and 1e\\\\+06", bad(rff_map(1, D = 2, kernel = "matern", nu = 1e-20))))
stopifnot(grepl("`nu`", bad(rff_map(1, D = 2, kernel = "matern", nu = 1e-8))))
stopifnot(grepl("`nu`", bad(rff_kernel(matrix(c(0, 1, 2)), kernel = "matern", nu = 3e9))))
stopifnot(grepl("`nu`", bad(rff_variance(1, D = 100, kernel = "matern", nu = 3e9))))
stopifnot(grepl("`nu`", bad(rff_kernel_error(matrix(1:3), D = 4, kernel = "matern", nu = 1e-3))))
# the other kernels ignore nu, as before
stopifnot(identical(bad(rff_map(1, D = 2, nu = 1e-20)), "no error"))
# at the ends of the range
set.seed(2)
m <- rff_map(2, D = 2000, kernel = "matern", nu = 0.05)
stopifnot(all(is.finite(m$omega)))
K <- rff_kernel(matrix(c(0, 1, 2)), kernel = "matern", nu = 1e6)
stopifnot(abs(K[1, 2] - exp(-1 / 2)) < 1e-6, abs(K[1, 3] - exp(-2)) < 1e-6)
cat("DONE\\n")
', timeout = 60)
  expect_true(res$ok, label = res$output)
})

test_that("a large-nu Matern kernel agrees with the Bessel form and allocates nothing per entry", {
  # independent: R's besselK on the log scale, where it does not overflow
  matern_ref <- function(r, nu) {
    t <- sqrt(2 * nu) * r
    exp((1 - nu) * log(2) - lgamma(nu) + nu * log(t) +
          log(besselK(t, nu, expon.scaled = TRUE)) - t)
  }
  r <- seq(0.05, 5, length.out = 60)
  for (nu in c(3.7, 49.9, 50, 64.5, 130.2)) {
    K <- rff_kernel(matrix(r), matrix(0), kernel = "matern", nu = nu)[, 1]
    ref <- matern_ref(r, nu)
    ok <- is.finite(ref) & ref > 1e-300
    expect_equal(K[ok], ref[ok], tolerance = 1e-11, label = paste("nu =", nu))
  }
  # tends to the Gaussian kernel: the difference shrinks like 1/nu
  g <- exp(-r^2 / 2)
  d1 <- max(abs(rff_kernel(matrix(r), matrix(0), kernel = "matern", nu = 1e3)[, 1] - g))
  d2 <- max(abs(rff_kernel(matrix(r), matrix(0), kernel = "matern", nu = 1e4)[, 1] - g))
  expect_lt(d1, 0.25 / 1e3)
  expect_equal(d1 / d2, 10, tolerance = 0.05)
  # 600 x 600 entries at nu = 500.5 used 1.4 GB of R_alloc'd workspace before
  x <- matrix(seq(0, 3, length.out = 600))
  # the peak above what the session already holds (loaded packages differ)
  before <- sum(gc(reset = TRUE)[, 2])
  K <- rff_kernel(x, kernel = "matern", nu = 500.5)
  expect_lt(sum(gc()[, 6]) - before, 100)   # max used, MB: the result is 2.9 MB
})

test_that("Matern frequencies for nu < 1 follow the t law with 2 nu degrees of freedom", {
  # d = 1: omega = z sqrt(2 nu / u) is Student t with 2 nu degrees of
  # freedom; its CDF at a few points against pt(), within 4.5 standard errors
  for (nu in c(0.06, 0.3, 0.8)) {
    set.seed(11)
    w <- rff_map(1, D = 40000, kernel = "matern", nu = nu, variant = "phase")$omega[1, ]
    q <- c(-10, -1, 0.5, 3, 100)
    p <- pt(q, df = 2 * nu)
    se <- sqrt(p * (1 - p) / length(w))
    expect_true(all(abs(ecdf(w)(q) - p) < 4.5 * se), label = paste("nu =", nu))
  }
})

test_that("statistics with a user-defined kernel combine after serialization and on a PSOCK cluster", {
  make_kernel <- function(s) {
    rff_spectral(function(m, d) matrix(rnorm(m * d, sd = s), d, m),
                 function(delta) exp(-s^2 * sum(delta^2) / 2), name = "scaled gaussian")
  }
  set.seed(3)
  x <- matrix(rnorm(200), 100, 2)
  y <- x[, 1] - x[, 2]
  m <- rff_map(2, D = 20, kernel = make_kernel(2))
  a <- rff_stats(x[1:50, ], y[1:50], map = m)
  b <- unserialize(serialize(rff_stats(x[51:100, ], y[51:100], map = m), NULL))
  whole <- rff_stats(x, y, map = m)
  both <- c(a, b)
  expect_equal(both$ZtZ, whole$ZtZ, tolerance = 1e-12)
  expect_equal((a + b)$Zty, whole$Zty, tolerance = 1e-12)
  # a different draw of the same kernel is still refused
  m2 <- rff_map(2, D = 20, kernel = make_kernel(2))
  expect_error(c(a, rff_stats(x[51:100, ], y[51:100], map = m2)), class = "rff_error")

  cl <- parallel::makePSOCKcluster(2)
  on.exit(parallel::stopCluster(cl))
  parallel::clusterCall(cl, function(p) { .libPaths(p); library(rff); NULL }, .libPaths())
  parts <- parallel::clusterApply(cl, list(1:50, 51:100), function(i, xx, yy, mm)
    rff_stats(xx[i, , drop = FALSE], yy[i], map = mm), xx = x, yy = y, mm = m)
  expect_equal(do.call(c, parts)$ZtZ, whole$ZtZ, tolerance = 1e-12)
  expect_equal(coef(rff_ridge(do.call(c, parts), lambda = 0.1)),
               coef(rff_ridge(whole, lambda = 0.1)), tolerance = 1e-10)
})

test_that("a tiny lengthscale is an rff_error, not NaN features", {
  e <- expect_error(rff_features(1, D = 4, lengthscale = 1e-310), class = "rff_error")
  expect_identical(e$arg, "lengthscale")
  expect_error(rff_map(1, D = 4, kernel = "laplace", lengthscale = 1e-309), class = "rff_error")
  expect_error(rff_kernel_error(matrix(1:3), D = 4, lengthscale = 1e-310), class = "rff_error")
})

test_that("a map with an element removed gives an rff_error or the same features", {
  set.seed(4)
  x <- matrix(rnorm(6), 3, 2)
  maps <- list(rff_map(2, D = 4), rff_map(2, D = 4, variant = "phase"),
               rff_map(2, D = 4, kernel = "arccos", order = 0))
  for (m in maps) {
    ref <- rff_features(x, map = m)
    for (field in names(m)) {
      broken <- m
      broken[[field]] <- NULL
      got <- tryCatch(rff_features(x, map = broken), error = function(e) e)
      if (inherits(got, "error")) {
        expect_s3_class(got, "rff_error")
      } else {
        # only what carries no information may go: a "pair" map's NULL
        # phase, the order of a kernel other than the arc-cosine
        expect_true((field == "phase" && m$variant == "pair") ||
                      (field == "order" && m$kernel != "arccos"),
                    label = paste(m$kernel, m$variant, field))
        expect_equal(as.vector(got), as.vector(ref))
      }
    }
  }
})

test_that("LAPACK is never handed a missing value: an error, not a hang or garbage", {
  # dsyevr loops for ever on NaN (ignoring Ctrl-C) or returns uninitialized
  # eigenvalues: both end in the time limit or a failed check here
  res <- child_ok('
msg <- function(expr) tryCatch({ expr; "no error" }, error = function(e) conditionMessage(e))
set.seed(1)
A <- crossprod(matrix(rnorm(200), 20))
bad <- A; bad[3, 3] <- NaN
stopifnot(grepl("missing or infinite", msg(.Call(rff:::C_rff_ridge_eigen, bad, 1L))))
stopifnot(grepl("missing or infinite", msg(.Call(rff:::C_rff_ridge_eigen, matrix(NaN, 10, 10), 1L))))
bad[3, 3] <- Inf
stopifnot(grepl("missing or infinite", msg(.Call(rff:::C_rff_ridge_eigen, bad, 1L))))
stopifnot(grepl("missing or infinite", msg(.Call(rff:::C_rff_ridge_chol, bad, A[, 1:2], 0.1))))
B <- A[, 1:2]; B[1] <- NA
stopifnot(grepl("missing or infinite", msg(.Call(rff:::C_rff_ridge_chol, A, B, 0.1))))
# finite input: the eigenvalues and the solve of base R
e <- .Call(rff:::C_rff_ridge_eigen, A, 2L)
stopifnot(isTRUE(all.equal(e$values, rev(eigen(A, symmetric = TRUE)$values), tolerance = 1e-10)))
r <- .Call(rff:::C_rff_ridge_chol, A, A[, 1:2], 0.1)
stopifnot(isTRUE(all.equal(r$coefficients, solve(A + diag(0.1, 10), A[, 1:2]), tolerance = 1e-10)))
# the spectral-norm error of rff_kernel_error() goes through dsyevr too
K <- rff_kernel(matrix(1:3))
K[2, 2] <- NaN
stopifnot(grepl("missing or infinite", msg(.Call(rff:::C_rff_kernel_error, matrix(1:3 + 0), NULL, K,
  rff_map(1, D = 4), 1L, FALSE, TRUE, 1L))))
cat("DONE\\n")
', timeout = 60)
  expect_true(res$ok, label = res$output)
})

test_that("threshold constants of the C code hold on both sides of their cut", {
  # Matern nu in [RFF_NU_MIN, RFF_NU_MAX] = [0.05, 1e6]: the kernel of base
  # R's besselK() at the ends, and an rff_error just beyond them
  x <- matrix(c(0, 0.3, 1.1, 2))
  for (nu in c(0.05, 0.05 + 1e-12)) {
    K <- rff_kernel(x, kernel = "matern", nu = nu)
    expect_equal(K[1, ], ref_kappa(x, "matern", nu = nu), tolerance = 1e-8, ignore_attr = TRUE)
  }
  expect_error(rff_kernel(x, kernel = "matern", nu = 0.05 - 1e-12), class = "rff_error")
  # at nu = 1e6 the Matern kernel is the Gaussian one to O(1 / nu)
  K <- rff_kernel(x, kernel = "matern", nu = 1e6)
  expect_equal(K[1, ], exp(-x[, 1]^2 / 2), tolerance = 1e-5, ignore_attr = TRUE)
  expect_error(rff_kernel(x, kernel = "matern", nu = 1e6 * (1 + 1e-12)), class = "rff_error")
  # polynomial degree up to RFF_DEGREE_MAX = 30: (x'y / l^2 + c)^p of base R
  y <- matrix(c(0.2, -0.4, 0.9), 3, 1)
  K <- rff_kernel(y, kernel = "polynomial", degree = 30, offset = 1)
  expect_equal(unclass(K)[, ], (tcrossprod(y) + 1)^30, tolerance = 1e-12, ignore_attr = TRUE)
  expect_error(rff_kernel(y, kernel = "polynomial", degree = 31), class = "rff_error")
  # rff_kernel_error(): up to ERR_SMALL_M = 8 rows of y the estimate is made
  # block by block (fused), from 9 by one dgemm; Gram products in panels of
  # ERR_PANEL_COLS = 256 columns: both sides against tcrossprod()
  set.seed(13)
  m <- rff_map(2, D = 30)
  xx <- matrix(runif(300 * 2), 300, 2)
  Zx <- unclass(rff_features(xx, map = m))[, ]
  for (my in c(8, 9)) {
    yy <- matrix(runif(my * 2), my, 2)
    e <- rff_kernel_error(xx, yy, map = m, keep = TRUE)
    expect_equal(attr(e, "estimate")[, , 1], Zx %*% t(unclass(rff_features(yy, map = m))[, ]),
                 tolerance = 1e-12, ignore_attr = TRUE, label = paste(my, "rows of y"))
  }
  for (n in c(256, 257)) {
    e <- rff_kernel_error(xx[seq_len(n), ], map = m, keep = TRUE)
    expect_equal(attr(e, "estimate")[, , 1], tcrossprod(Zx[seq_len(n), ]), tolerance = 1e-12,
                 ignore_attr = TRUE, label = paste(n, "rows"))
  }
})
