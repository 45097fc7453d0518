# Nystrom maps (R/nystrom.R; features in src/nystrom.c) against base R.

# Exact kernels in base R (ref_kappa and ref_arccos are in helper-kernels.R).
ref_kernel <- function(x, y, kernel, lengthscale = 1, nu = 1.5, order = 1, degree = 2,
                       offset = 1) {
  x <- as.matrix(x); y <- as.matrix(y)
  l <- rep_len(lengthscale, ncol(x))
  if (kernel == "polynomial") return((x %*% diag(1 / l^2, ncol(x)) %*% t(y) + offset)^degree)
  if (kernel == "arccos") return(ref_arccos(x, y, order, l))
  idx <- expand.grid(i = seq_len(nrow(x)), j = seq_len(nrow(y)))
  matrix(ref_kappa(x[idx$i, , drop = FALSE] - y[idx$j, , drop = FALSE], kernel, l, nu),
         nrow(x), nrow(y))
}

# K(L, L)^+ with the eigenvalues at or below sqrt(eps) times the largest
# dropped, as documented
ref_pinv <- function(K) {
  e <- eigen(K, symmetric = TRUE)
  keep <- e$values > sqrt(.Machine$double.eps) * max(e$values[1], 0)
  U <- e$vectors[, keep, drop = FALSE]
  U %*% (t(U) / e$values[keep])
}

kernels <- list(list(kernel = "gaussian"), list(kernel = "laplace"),
                list(kernel = "matern", nu = 2.5), list(kernel = "matern", nu = 0.7),
                list(kernel = "arccos", order = 0), list(kernel = "arccos", order = 1),
                list(kernel = "polynomial", degree = 3, offset = 0.5))

test_that("Z Z' is K(x, L) K(L, L)^+ K(L, y) for every kernel", {
  set.seed(1)
  x <- matrix(rnorm(90), 30, 3)
  y <- matrix(rnorm(15), 5, 3)
  L <- matrix(rnorm(24), 8, 3)
  l <- c(0.8, 1.5, 2)
  for (k in kernels) {
    args <- c(k, list(lengthscale = l))
    m <- do.call(rff_map, c(list(d = 3, landmarks = L), args))
    Zx <- rff_features(x, map = m)
    Zy <- rff_features(y, map = m)
    Kxl <- do.call(ref_kernel, c(list(x, L), args))
    Kyl <- do.call(ref_kernel, c(list(y, L), args))
    P <- ref_pinv(do.call(ref_kernel, c(list(L, L), args)))
    label <- paste(unlist(k), collapse = " ")
    expect_equal(tcrossprod(Zx), Kxl %*% P %*% t(Kxl), tolerance = 1e-8, label = label)
    expect_equal(tcrossprod(Zx, Zy), Kxl %*% P %*% t(Kyl), tolerance = 1e-8, label = label)
    # and the features themselves: K(x, L) U diag(lambda^-1/2) U'
    e <- eigen(do.call(ref_kernel, c(list(L, L), args)), symmetric = TRUE)
    keep <- e$values > sqrt(.Machine$double.eps) * e$values[1]
    W <- e$vectors[, keep] %*% (t(e$vectors[, keep]) / sqrt(e$values[keep]))
    expect_equal(Zx, Kxl %*% W, tolerance = 1e-8, ignore_attr = TRUE, label = label)
    expect_equal(m$rank, sum(keep), label = label)
  }
  # a user-defined kernel: kappa called in R
  gauss <- rff_spectral(function(m, d) matrix(rnorm(m * d), d, m),
                        function(delta) exp(-sum(delta^2) / 2))
  m <- rff_map(3, landmarks = L, kernel = gauss, lengthscale = l)
  Kxl <- ref_kernel(x, L, "gaussian", l)
  expect_equal(tcrossprod(rff_features(x, map = m)),
               Kxl %*% ref_pinv(ref_kernel(L, L, "gaussian", l)) %*% t(Kxl), tolerance = 1e-8)
})

test_that("the features are exact at the landmarks", {
  set.seed(2)
  x <- matrix(rnorm(100), 50, 2)
  for (k in kernels[c(1, 2, 3, 5)]) {
    m <- do.call(rff_map, c(list(d = 2, landmarks = x[1:12, ]), k))
    Z <- rff_features(x[1:12, ], map = m)
    K <- do.call(rff_kernel, c(list(x[1:12, ]), k))
    expect_equal(tcrossprod(Z), K, tolerance = 1e-9, ignore_attr = TRUE,
                 label = k$kernel)
    # and between a landmark and any point
    Zx <- rff_features(x, map = m)
    expect_equal(tcrossprod(Z, Zx), do.call(rff_kernel, c(list(x[1:12, ], x), k)),
                 tolerance = 1e-9, ignore_attr = TRUE, label = k$kernel)
  }
  # the polynomial kernel of degree 2 in 2 dimensions has rank 6: seven
  # landmarks in general position make it exact everywhere
  m <- rff_map(2, landmarks = x[1:7, ], kernel = "polynomial", degree = 2)
  expect_equal(m$rank, 6L)
  expect_equal(tcrossprod(rff_features(x, map = m)),
               rff_kernel(x, kernel = "polynomial", degree = 2), tolerance = 1e-8,
               ignore_attr = TRUE)
})

test_that("tiny eigenvalues are dropped: repeated landmarks give the pseudo-inverse", {
  set.seed(3)
  x <- matrix(rnorm(40), 20, 2)
  L <- x[c(1, 2, 3, 1, 2), ]                 # rank 3
  m <- rff_map(2, landmarks = L, lengthscale = 1.5)
  expect_equal(m$rank, 3L)
  expect_equal(dim(rff_features(x, map = m)), c(20L, 5L))
  Kxl <- ref_kernel(x, L, "gaussian", 1.5)
  # the Moore-Penrose inverse from the eigendecomposition (base R, as
  # MASS::ginv() computes it from the SVD), without its null space
  e <- eigen(ref_kernel(L, L, "gaussian", 1.5), symmetric = TRUE)
  pos <- e$values > 1e-10 * e$values[1]
  Kinv <- e$vectors[, pos] %*% (t(e$vectors[, pos]) / e$values[pos])
  expect_equal(tcrossprod(rff_features(x, map = m)), Kxl %*% Kinv %*% t(Kxl),
               tolerance = 1e-8)
  # the same kernel as with the three distinct landmarks
  m3 <- rff_map(2, landmarks = L[1:3, ], lengthscale = 1.5)
  expect_equal(tcrossprod(rff_features(x, map = m)), tcrossprod(rff_features(x, map = m3)),
               tolerance = 1e-8)
  # landmarks where the kernel vanishes: rank 0, zero features
  z <- rff_map(2, landmarks = matrix(0, 2, 2), kernel = "arccos", order = 1)
  expect_equal(z$rank, 0L)
  expect_true(all(rff_features(x, map = z) == 0))
})

test_that("landmarks are drawn from the rows of the data with R's RNG", {
  set.seed(4)
  x <- matrix(rnorm(60), 30, 2)
  set.seed(5)
  Z <- rff_features(x, D = 7, sampler = "nystrom", kernel = "matern", nu = 1.5)
  set.seed(5)
  L <- x[sample.int(30, 7), ]
  m <- attr(Z, "rff_map")
  expect_identical(m$landmarks, L)
  expect_identical(m[c("D", "d", "kernel", "variant", "sampler")],
                   list(D = 7L, d = 2L, kernel = "matern", variant = "nystrom",
                        sampler = "nystrom"))
  expect_equal(Z, rff_features(x, map = rff_map(2, landmarks = L, kernel = "matern")))
  expect_output(print(m), "7 Nystrom features of 2 input columns")
  expect_output(print(m), "landmarks: +7, rank of K\\(L, L\\) 7")
  # lengthscale "median" is resolved before the landmarks are drawn
  set.seed(6)
  Zm <- rff_features(x, D = 5, sampler = "nystrom", lengthscale = "median")
  expect_equal(attr(Zm, "rff_map")$lengthscale, median(dist(x)))
  # one thread or two, rows in any chunks: the same features
  xb <- matrix(rnorm(3000), 1000, 3)
  for (k in list(list(kernel = "gaussian"), list(kernel = "matern", nu = 0.7))) {
    m <- do.call(rff_map, c(list(d = 3, landmarks = xb[1:50, ]), k))
    Z1 <- rff_features(xb, map = m, threads = 1)
    expect_identical(rff_features(xb, map = m, threads = 2), Z1)
    expect_equal(rff_stats(xb, xb[, 1], m, chunk_size = 300)$ZtZ, crossprod(Z1),
                 tolerance = 1e-9)
  }
})

test_that("ridge on Nystrom features is base-R ridge on the same matrix", {
  set.seed(7)
  x <- matrix(runif(300), 150, 2)
  y <- sin(4 * x[, 1]) + x[, 2]^2 + rnorm(150, sd = 0.1)
  set.seed(8)
  fit <- rff_ridge(standardize = FALSE, x, y, D = 25, sampler = "nystrom", lengthscale = 0.4, lambda = 1e-4,
                   progress = FALSE)
  set.seed(8)
  L <- x[sample.int(150, 25), ]
  expect_identical(fit$map$landmarks, L)
  Z <- rff_features(x, map = fit$map)
  zbar <- colMeans(Z)
  Zc <- sweep(Z, 2, zbar)
  beta <- solve(crossprod(Zc) + 150 * 1e-4 * diag(25), crossprod(Zc, y - mean(y)))
  expect_equal(drop(fit$coefficients), drop(beta), tolerance = 1e-8)
  xnew <- matrix(runif(10), 5, 2)
  expect_equal(unname(predict(fit, xnew)),
               drop(rff_features(xnew, map = fit$map) %*% beta) + mean(y) - sum(zbar * beta),
               tolerance = 1e-8)
  # statistics of two halves combine; the fit from them is the same
  s <- c(rff_stats(x[1:70, ], y[1:70], fit$map), rff_stats(x[-(1:70), ], y[-(1:70)], fit$map))
  expect_equal(coef(rff_ridge(s, lambda = 1e-4)), coef(fit), tolerance = 1e-8)
  # given landmarks through `...`; a data frame is fine
  fit2 <- rff_ridge(standardize = FALSE, x, y, landmarks = as.data.frame(L), lengthscale = 0.4, lambda = 1e-4,
                    progress = FALSE)
  expect_equal(coef(fit2), coef(fit), tolerance = 1e-10)
  # rff_cv: the landmarks are kept and W recomputed at every lengthscale
  set.seed(9)
  cv <- rff_cv(standardize = FALSE, x, y, D = 25, sampler = "nystrom", lengthscale = c(0.2, 0.4, 1),
               foldid = rep_len(1:3, 150), lambda = c(1e-5, 1e-3), progress = FALSE)
  set.seed(9)
  L9 <- x[sample.int(150, 25), ]
  expect_identical(cv$fit$map$landmarks, L9)
  best <- rff_map(2, landmarks = L9, lengthscale = cv$lengthscale_best)
  expect_equal(cv$fit$map$weights, best$weights, tolerance = 1e-12)
  expect_equal(unname(predict(cv, xnew)),
               unname(predict(rff_ridge(standardize = FALSE, x, y, map = best, lambda = cv$lambda_best,
                                        progress = FALSE), xnew)), tolerance = 1e-8)
})

test_that("the error study draws landmarks afresh per replicate", {
  set.seed(10)
  x <- matrix(rnorm(80), 40, 2)
  set.seed(11)
  e <- rff_kernel_error(x, D = 10, sampler = "nystrom", kernel = "laplace", reps = 3,
                        keep = TRUE)
  set.seed(11)
  K <- rff_kernel(x, kernel = "laplace")
  for (r in 1:3) {
    Z <- rff_features(x, map = rff_map(2, landmarks = x[sample.int(40, 10), ],
                                       kernel = "laplace"))
    est <- tcrossprod(Z)
    expect_equal(attr(e, "estimate")[, , r], est, tolerance = 1e-12, ignore_attr = TRUE)
    expect_equal(e$max_abs[r], max(abs(est - K)), tolerance = 1e-12)
  }
  expect_equal(e$variant, rep("nystrom", 3))
  # with y, several D, and given landmarks (the same map each time)
  e2 <- rff_kernel_error(x, y = x[1:3, ], D = c(5, 20), sampler = "nystrom", reps = 2)
  expect_equal(e2$D, c(5L, 5L, 20L, 20L))
  e3 <- rff_kernel_error(x, landmarks = x[1:6, ], reps = 2)
  expect_equal(e3$max_abs[1], e3$max_abs[2])
  m <- rff_map(2, landmarks = x[1:6, ])
  expect_equal(rff_kernel_error(x, map = m)$max_abs, e3$max_abs[1])
  # Nystrom beats random Fourier features at equal D on these data
  set.seed(12)
  ef <- rff_kernel_error(x, D = 20, reps = 20)
  en <- rff_kernel_error(x, D = 20, sampler = "nystrom", reps = 20)
  expect_lt(mean(en$rel_fro), mean(ef$rel_fro))
})

test_that("bad landmarks and Nystrom arguments are rff_errors", {
  x <- matrix(rnorm(20), 10, 2)
  e <- expect_error(rff_map(2, sampler = "nystrom"), class = "rff_error")
  expect_identical(e$arg, "landmarks")
  e <- expect_error(rff_map(2, landmarks = matrix(1, 3, 3)), class = "rff_error")
  expect_identical(e$arg, "landmarks")
  e <- expect_error(rff_map(2, D = 4, landmarks = x[1:3, ]), class = "rff_error")
  expect_identical(e$arg, "D")
  e <- expect_error(rff_map(2, landmarks = x[1:3, ], sampler = "qmc"), class = "rff_error")
  expect_identical(e$arg, "landmarks")
  e <- expect_error(rff_map(2, landmarks = x[1:3, ], variant = "phase"), class = "rff_error")
  expect_identical(e$arg, "variant")
  for (bad in list(matrix(NA, 2, 2), "a", matrix(numeric(0), 0, 2), matrix(Inf, 2, 2))) {
    expect_error(rff_map(2, landmarks = bad), class = "rff_error")
  }
  e <- expect_error(rff_features(x, D = 11, sampler = "nystrom"), class = "rff_error")
  expect_identical(e$arg, "D")
  expect_error(rff_kernel_error(x, D = 11, sampler = "nystrom"), class = "rff_error")
  expect_error(rff_ridge(x, x[, 1], sampler = "nystrom", progress = FALSE), class = "rff_error")
  m <- rff_map(2, landmarks = x[1:4, ])
  expect_error(rff_features(x, map = m, landmarks = x[1:4, ]), class = "rff_error")
  expect_error(rff_features(x[, 1], map = m), class = "rff_error")
  expect_error(rff_map(2, landmarks = matrix(1e300, 2, 2), kernel = "polynomial"),
               class = "rff_error")
  # damaged maps: every element removed, or broken, is an rff_error
  ref <- rff_features(x, map = m)
  for (field in names(m)) {
    broken <- m
    broken[[field]] <- NULL
    got <- tryCatch(rff_features(x, map = broken), error = function(e) e)
    if (inherits(got, "error")) expect_s3_class(got, "rff_error") else {
      expect_true(field %in% c("nu", "order", "rank"), label = field)
      expect_equal(got, ref, ignore_attr = TRUE)
    }
  }
  bad <- list(weights = m$weights[, 1:3], weights = m$weights * NA, landmarks = m$landmarks[1:3, ],
              D = 5L, variant = "pair", kernel = "nope")
  for (i in seq_along(bad)) {
    broken <- m
    broken[[names(bad)[i]]] <- bad[[i]]
    expect_error(rff_features(x, map = broken), class = "rff_error")
    # the C code checks what it relies on (not the variant)
    if (names(bad)[i] != "variant") {
      expect_error(.Call(rff:::C_rff_features, x, unclass(broken), 1L))
    }
  }
})
