# User-defined spectral measures (R/spectral.R).

sinc_kappa <- function(delta) prod(ifelse(delta == 0, 1, sin(delta) / delta))
# product of sinc kernels: spectral measure uniform on [-1, 1]^d
sinc <- rff_spectral(
  sample = function(m, d) matrix(runif(m * d, -1, 1), d, m),
  kappa = sinc_kappa, name = "sinc")
hand_gauss <- rff_spectral(
  sample = function(m, d) matrix(rnorm(m * d), d, m),
  kappa = function(delta) exp(-sum(delta^2) / 2))

test_that("rff_spectral() builds a kernel object and validates its arguments", {
  expect_s3_class(sinc, "rff_spectral")
  expect_identical(sinc$name, "sinc")
  expect_output(print(sinc), "user-defined shift-invariant kernel \"sinc\"")
  expect_rff_error(rff_spectral(1, sinc_kappa), "sample")
  expect_rff_error(rff_spectral(function(m, d) 1, "exp"), "kappa")
  expect_rff_error(rff_spectral(function(m, d) 1, sinc_kappa, name = 1), "name")
  expect_rff_error(rff_map(2, kernel = list(sample = 1)), "kernel")
  broken <- sinc; broken$kappa <- NULL
  expect_rff_error(rff_map(2, kernel = broken), "kernel")
})

test_that("maps draw sample(m, d) from R's stream, divided by the lengthscale", {
  set.seed(41)
  m <- rff_map(3, D = 10, kernel = sinc, lengthscale = c(1, 2, 4), variant = "phase")
  set.seed(41)
  w <- matrix(runif(30, -1, 1), 3, 10)
  expect_identical(m$omega, w / c(1, 2, 4))
  expect_identical(m$phase, 2 * pi * runif(10))
  expect_identical(m$kernel, sinc)
  expect_output(print(m), "sinc \\(rff_spectral\\)")
  # the same draws as the built-in Gaussian kernel when sample() is rnorm()
  set.seed(42); a <- rff_map(4, D = 12, kernel = hand_gauss, lengthscale = 3)
  set.seed(42); b <- rff_map(4, D = 12, lengthscale = 3)
  expect_identical(a$omega, b$omega)
  # d = 1: a plain vector of length m is accepted
  v <- rff_spectral(function(m, d) rnorm(m), function(delta) exp(-delta^2 / 2))
  expect_equal(dim(rff_map(1, D = 6, kernel = v)$omega), c(1, 3))
})

test_that("the exact kernel evaluates kappa at the scaled offsets", {
  set.seed(43)
  x <- matrix(rnorm(12), 4, 3)
  y <- matrix(rnorm(6), 2, 3)
  l <- c(0.5, 1, 2)
  ref <- outer(1:4, 1:2, Vectorize(function(i, j) sinc_kappa((x[i, ] - y[j, ]) / l)))
  expect_equal(rff_kernel(x, y, kernel = sinc, lengthscale = l), ref, ignore_attr = TRUE)
  m <- rff_map(3, D = 10, kernel = sinc, lengthscale = l)
  expect_equal(rff_kernel(x, y, map = m), ref, ignore_attr = TRUE)
  # kernel_kappa(): one entry point for every kernel
  delta <- x - y[c(1, 2, 1, 2), ]
  expect_equal(rff:::kernel_kappa(delta, m), diag(ref[, c(1, 2, 1, 2)]))
  expect_equal(rff:::kernel_kappa(delta, list(kernel = "gaussian", lengthscale = l, nu = 1.5)),
               ref_kappa(delta, "gaussian", lengthscale = l))
  expect_equal(rff:::kernel_kappa(c(0.5, 2), list(kernel = "matern", lengthscale = 2, nu = 0.5)),
               exp(-c(0.5, 2) / 2))
})

test_that("features of a user-defined measure are unbiased with Proposition 2's variance", {
  set.seed(44)
  delta <- c(1.2, -0.7, 2)
  xy <- rbind(delta, 0)
  l <- 1.5
  k1 <- sinc_kappa(delta / l)
  k2 <- sinc_kappa(2 * delta / l)
  D <- 16
  for (v in c("pair", "phase")) {
    est <- replicate_estimates(xy, 3000, D = D, kernel = sinc, lengthscale = l, variant = v)
    var <- if (v == "phase") (1 + k2 / 2 - k1^2) / D else (1 + k2 - 2 * k1^2) / D
    expect_moments(est, mean = k1, var = var)
  }
  # and reused on new data through the map: the same frequencies
  Z <- rff_features(matrix(rnorm(6), 2, 3), D = 8, kernel = sinc, lengthscale = l)
  map <- attr(Z, "rff_map")
  xnew <- rbind(c(1, 2, 3), c(-0.5, 0, 4))
  p <- xnew %*% map$omega
  expect_equal(unclass(rff_features(xnew, map = map))[, ], sqrt(2 / 8) * cbind(cos(p), sin(p)),
               tolerance = 1e-14, ignore_attr = TRUE)
})

test_that("what the user's functions return is validated", {
  wrong_shape <- rff_spectral(function(m, d) matrix(0, m, d + 1), sinc_kappa)
  expect_rff_error(rff_map(3, D = 10, kernel = wrong_shape), "kernel")
  expect_match(tryCatch(rff_map(3, D = 10, kernel = wrong_shape), error = conditionMessage),
               "must return a 3 x 5 matrix", fixed = TRUE)
  not_finite <- rff_spectral(function(m, d) matrix(Inf, d, m), sinc_kappa)
  expect_rff_error(rff_features(matrix(1, 2, 2), D = 4, kernel = not_finite), "kernel")
  with_na <- rff_spectral(function(m, d) matrix(NA_real_, d, m), sinc_kappa)
  expect_rff_error(rff_map(2, D = 4, kernel = with_na), "kernel")
  text <- rff_spectral(function(m, d) matrix("a", d, m), sinc_kappa)
  expect_rff_error(rff_map(2, D = 4, kernel = text), "kernel")
  fails <- rff_spectral(function(m, d) stop("no draws today"), sinc_kappa)
  expect_match(tryCatch(rff_map(2, D = 4, kernel = fails), rff_error = conditionMessage),
               "no draws today", fixed = TRUE)
  x <- matrix(1:4, 2, 2)
  two <- rff_spectral(sinc$sample, function(delta) c(1, 1))
  expect_rff_error(rff_kernel(x, kernel = two), "kernel")
  nan <- rff_spectral(sinc$sample, function(delta) NaN)
  expect_rff_error(rff_kernel(x, kernel = nan), "kernel")
  chr <- rff_spectral(sinc$sample, function(delta) "1")
  expect_rff_error(rff_kernel(x, kernel = chr), "kernel")
  expect_rff_error(rff_map(2, kernel = sinc, sampler = "orthogonal"), "sampler")
  expect_rff_error(rff_map(2, kernel = sinc, sampler = "qmc"), "sampler")
  # the C routines refuse what they cannot do with a user-defined kernel
  expect_error(.Call(rff:::C_rff_kernel_exact, x, x, list(kernel = sinc, lengthscale = 1)))
  spec <- list(D = 4L, d = 2L, kernel = sinc, lengthscale = 1, nu = 1.5,
               variant = "pair", sampler = "qmc")
  expect_error(.Call(rff:::C_rff_draw_map, spec))
})
