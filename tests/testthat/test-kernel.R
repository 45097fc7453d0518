test_that("Gaussian and Laplace kernels equal their closed forms", {
  set.seed(1)
  x <- matrix(rnorm(12), 4, 3)
  y <- matrix(rnorm(15), 5, 3)
  D2 <- as.matrix(dist(rbind(x, y)))[1:4, 5:9]
  expect_equal(rff_kernel(x, y, lengthscale = 2), exp(-D2^2 / 8),
               tolerance = 1e-14, ignore_attr = TRUE)
  L1 <- as.matrix(dist(rbind(x, y), method = "manhattan"))[1:4, 5:9]
  expect_equal(rff_kernel(x, y, kernel = "laplace", lengthscale = 0.5),
               exp(-L1 / 0.5), tolerance = 1e-14, ignore_attr = TRUE)
})

test_that("ARD lengthscales scale each column", {
  set.seed(2)
  x <- matrix(rnorm(10), 5, 2)
  l <- c(0.5, 3)
  xs <- sweep(x, 2, l, "/")
  for (k in c("gaussian", "laplace", "matern")) {
    expect_equal(rff_kernel(x, kernel = k, lengthscale = l, nu = 0.8),
                 rff_kernel(xs, kernel = k, lengthscale = 1, nu = 0.8),
                 tolerance = 1e-14)
  }
})

test_that("Matern equals the Bessel formula and its closed forms", {
  r <- c(0, 1e-6, 0.1, 0.5, 1, 2, 5, 30)
  x <- matrix(r, ncol = 1)
  zero <- matrix(0, 1, 1)
  for (nu in c(0.3, 0.5, 1, 1.5, 2.5, 3.7, 12)) {
    expect_equal(as.vector(rff_kernel(x, zero, kernel = "matern", nu = nu)),
                 ref_kappa(r, "matern", nu = nu), tolerance = 1e-10)
  }
  t3 <- sqrt(3) * r
  expect_equal(as.vector(rff_kernel(x, zero, kernel = "matern", nu = 1.5)),
               (1 + t3) * exp(-t3), tolerance = 1e-14)
  t5 <- sqrt(5) * r
  expect_equal(as.vector(rff_kernel(x, zero, kernel = "matern", nu = 2.5)),
               (1 + t5 + t5^2 / 3) * exp(-t5), tolerance = 1e-14)
  expect_equal(as.vector(rff_kernel(x, zero, kernel = "matern", nu = 0.5)),
               exp(-r), tolerance = 1e-14)
  # the general path agrees with the closed form next to it
  expect_equal(as.vector(rff_kernel(x, zero, kernel = "matern", nu = 1.5 + 1e-9)),
               (1 + t3) * exp(-t3), tolerance = 1e-7)
})

test_that("Matern is radial in d = 3 and tends to 1 at 0 for large nu", {
  x <- rbind(c(1, 2, 2), c(3, 0, 0))      # both at distance 3 from 0
  k <- rff_kernel(x, matrix(0, 1, 3), kernel = "matern", nu = 0.9, lengthscale = 1.5)
  expect_equal(k[1], k[2], tolerance = 1e-14)
  expect_equal(k[1], ref_kappa(2, "matern", nu = 0.9), tolerance = 1e-10)
  expect_equal(rff_kernel(matrix(1e-12), matrix(0), kernel = "matern", nu = 60)[1], 1)
})

test_that("y = NULL means y = x; dimnames come from the row names", {
  x <- matrix(1:6, 3, 2, dimnames = list(c("a", "b", "c"), NULL))
  K <- rff_kernel(x)
  expect_equal(dimnames(K), list(c("a", "b", "c"), c("a", "b", "c")))
  expect_equal(unname(diag(K)), rep(1, 3))
  expect_true(isSymmetric(K))
})

test_that("a map supplies the kernel parameters", {
  m <- rff_map(2, D = 10, kernel = "laplace", lengthscale = c(1, 2))
  x <- matrix(c(0, 1, 1, 3), 2, 2)
  expect_equal(rff_kernel(x, map = m),
               rff_kernel(x, kernel = "laplace", lengthscale = c(1, 2)))
  expect_error(rff_kernel(x, map = m, kernel = "gaussian"), class = "rff_error")
  expect_error(rff_kernel(matrix(1, 1, 3), map = m), class = "rff_error")
})
