# expect_law(): helper-laws.R

test_that("set.seed() makes maps reproducible and draws advance the stream", {
  for (k in c("gaussian", "laplace", "matern")) {
    set.seed(11); a <- rff_map(3, 20, kernel = k, variant = "phase")
    set.seed(11); b <- rff_map(3, 20, kernel = k, variant = "phase")
    expect_identical(a, b)
    c2 <- rff_map(3, 20, kernel = k, variant = "phase")
    expect_false(identical(a$omega, c2$omega))
  }
})

test_that("maps have the documented structure", {
  m <- rff_map(4, D = 10)
  expect_s3_class(m, "rff_map")
  expect_equal(dim(m$omega), c(4, 5))
  expect_null(m$phase)
  expect_equal(m[c("D", "d", "kernel", "variant", "sampler")],
               list(D = 10L, d = 4L, kernel = "gaussian", variant = "pair", sampler = "iid"))
  p <- rff_map(2, D = 7, variant = "phase")
  expect_equal(dim(p$omega), c(2, 7))
  expect_length(p$phase, 7)
  expect_true(all(p$phase >= 0 & p$phase < 2 * pi))
  expect_output(print(p), "7 random Fourier features of 2 input columns")
  expect_output(print(rff_map(2, 4, kernel = "matern", nu = 2.5, lengthscale = c(1, 3))),
                "Matern \\(nu = 2.5\\).*\n.*2 values in \\[1, 3\\] \\(ARD\\)")
})

test_that("Gaussian frequencies are N(0, 1/l^2) per column", {
  set.seed(3)
  l <- c(0.5, 2, 4)
  m <- rff_map(3, D = 40000, lengthscale = l, variant = "phase")
  w <- m$omega * l                         # back to unit lengthscale
  expect_law(colSums(w^2), function(p) qchisq(p, 3))
  expect_law(w[2, ], qnorm)
  expect_lt(abs(cor(w[1, ], w[3, ])), 4 / sqrt(40000))
})

test_that("Laplace frequencies are independent Cauchy(0, 1/l) coordinates", {
  set.seed(4)
  m <- rff_map(2, D = 40000, kernel = "laplace", lengthscale = c(0.25, 3), variant = "phase")
  expect_law(m$omega[1, ] * 0.25, qcauchy)
  expect_law(m$omega[2, ] * 3, qcauchy)
  # independence: the quadrant frequency of the signs is 1/4
  q <- mean(m$omega[1, ] > 0 & m$omega[2, ] > 0)
  expect_lt(abs(q - 0.25), 4 * sqrt(0.25 * 0.75 / 40000))
})

test_that("Matern frequencies are multivariate t (one chi-square per frequency)", {
  set.seed(5)
  d <- 4
  for (nu in c(0.5, 1.5, 3)) {
    m <- rff_map(d, D = 40000, kernel = "matern", nu = nu, lengthscale = 2, variant = "phase")
    w <- m$omega * 2
    # |w|^2 / d ~ F(d, 2 nu) for a multivariate t; per-coordinate t's differ
    expect_law(colSums(w^2) / d, function(p) qf(p, d, 2 * nu))
    expect_law(w[1, ], function(p) qt(p, 2 * nu))
  }
})

test_that("pair maps use D/2 frequencies drawn like the phase map's first D/2", {
  set.seed(9); a <- rff_map(2, D = 8, variant = "pair")
  set.seed(9); b <- rff_map(2, D = 4, variant = "phase")
  expect_identical(a$omega, b$omega)
})
