# Samplers "orthogonal" and "qmc" (R/samplers.R; drawn in src/orthogonal.c
# and src/qmc.c through rff_map()).

# Base-R van der Corput radical inverse of i in base b.
radical_inverse <- function(i, b) {
  x <- 0; f <- 1 / b
  while (i > 0) { x <- x + (i %% b) * f; i <- i %/% b; f <- f / b }
  x
}

test_that("sampler \"iid\" draws the maps it always drew", {
  # frequencies are the normals of R's stream, column by column, over l
  set.seed(21)
  m <- rff_map(3, D = 8, lengthscale = 2, sampler = "iid")
  set.seed(21)
  expect_identical(m$omega, matrix(rnorm(12), 3, 4) / 2)
  set.seed(22)
  p <- rff_map(2, D = 3, variant = "phase")
  set.seed(22)
  w <- matrix(rnorm(6), 2, 3)
  expect_identical(p$omega, w)
  expect_identical(p$phase, 2 * pi * runif(3))
})

test_that("plain Halton points are van der Corput radical inverses in prime bases", {
  h <- rff:::halton(40, 5, randomize = FALSE)
  ref <- sapply(c(2, 3, 5, 7, 11), function(b) vapply(0:39, radical_inverse, numeric(1), b = b))
  expect_equal(h, ref, tolerance = 1e-15)
})

test_that("randomized Halton points keep one point per stratum", {
  set.seed(23)
  # b^k points in base b: one in each interval of length b^-k, after
  # scrambling and shifting modulo 1 (up to the wrap-around)
  h <- rff:::halton(125, 3, randomize = TRUE)
  for (k in 1:3) {
    b <- c(2, 3, 5)[k]
    n <- b^floor(log(125, b) + 1e-9)
    u <- sort(h[seq_len(n), k])
    gaps <- diff(c(u, u[1] + 1))
    expect_equal(gaps, rep(1 / n, n), tolerance = 1e-9)
  }
  expect_true(all(h >= 0 & h < 1))
  # the random shift makes each point uniform: point 0 over many draws
  first <- vapply(1:4000, function(i) rff:::halton(1, 4)[1, ], numeric(4))
  for (k in 1:4) expect_law(first[k, ], qunif)
})

test_that("orthogonal frequencies: orthogonal blocks, chi_d norms, last block truncated", {
  set.seed(24)
  d <- 4
  m <- rff_map(d, D = 2 * 10, sampler = "orthogonal", lengthscale = 1.5)
  expect_equal(dim(m$omega), c(4, 10))
  w <- m$omega * 1.5
  G <- crossprod(w)
  for (b in list(1:4, 5:8, 9:10)) {
    off <- G[b, b]
    diag(off) <- 0
    expect_lt(max(abs(off)), 1e-12)
  }
  expect_gt(max(abs(G[1:4, 5:8])), 1e-3)   # different blocks are independent
  big <- rff_map(d, D = 40000, sampler = "orthogonal", variant = "phase")
  expect_law(sqrt(colSums(big$omega^2)), function(p) sqrt(qchisq(p, d)))
  expect_law(big$omega[2, ], qnorm)         # marginally N(0, 1)
  expect_true(all(big$phase >= 0 & big$phase < 2 * pi))
  # Matern: |w|^2 / d ~ F(d, 2 nu), as for i.i.d. multivariate t frequencies
  mt <- rff_map(d, D = 40000, kernel = "matern", nu = 1.5, sampler = "orthogonal",
                variant = "phase")
  expect_law(colSums(mt$omega^2) / d, function(p) qf(p, d, 3))
  # d = 1: a random sign times a chi_1 norm, i.e. N(0, 1)
  one <- rff_map(1, D = 20000, sampler = "orthogonal")
  expect_law(one$omega[1, ], qnorm)
})

test_that("QMC frequencies have the spectral law marginally", {
  set.seed(25)
  # the first frequency of many independent QMC maps is one draw of mu each
  first <- function(kernel, nu = 1.5) {
    vapply(1:3000, function(i) rff_map(3, D = 4, kernel = kernel, nu = nu,
                                       sampler = "qmc")$omega[, 1], numeric(3))
  }
  g <- first("gaussian")
  expect_law(g[3, ], qnorm)
  expect_law(colSums(g^2), function(p) qchisq(p, 3))
  expect_law(first("laplace")[2, ], qcauchy)
  mt <- first("matern", nu = 0.5)
  expect_law(colSums(mt^2) / 3, function(p) qf(p, 3, 1))
  expect_law(mt[1, ], function(p) qt(p, 1))
})

test_that("QMC frequencies of one map are spread more evenly than i.i.d. ones", {
  set.seed(26)
  # first coordinate of 1024 frequencies: a base-2 Halton coordinate through
  # qnorm puts exactly 1/8 of the points in each normal octile
  m <- rff_map(2, D = 2048, sampler = "qmc")
  counts <- table(cut(m$omega[1, ], qnorm(seq(0, 1, by = 1 / 8))))
  expect_equal(as.vector(counts), rep(128L, 8))
})

test_that("every new sampler is unbiased in d >= 3", {
  set.seed(27)
  reps <- 1500
  xy <- rbind(c(0.3, -0.6, 0.9, 0.2), c(-0.4, 0.1, 0.5, 1.0))
  cases <- list(
    list(sampler = "orthogonal", kernel = "gaussian", variant = "pair"),
    list(sampler = "orthogonal", kernel = "gaussian", variant = "phase"),
    list(sampler = "orthogonal", kernel = "matern", variant = "pair", nu = 0.5),
    list(sampler = "orthogonal", kernel = "matern", variant = "phase", nu = 2.5),
    list(sampler = "qmc", kernel = "gaussian", variant = "pair"),
    list(sampler = "qmc", kernel = "gaussian", variant = "phase"),
    list(sampler = "qmc", kernel = "laplace", variant = "pair"),
    list(sampler = "qmc", kernel = "laplace", variant = "phase"),
    list(sampler = "qmc", kernel = "matern", variant = "pair", nu = 1.5),
    list(sampler = "qmc", kernel = "matern", variant = "phase", nu = 0.7)
  )
  l <- c(0.8, 1.2, 1, 1.5)
  for (cs in cases) {
    nu <- if (is.null(cs$nu)) 1.5 else cs$nu
    # D = 10: with pairs, one full block of 4 and a truncated one
    est <- replicate_estimates(xy, reps, D = 10, kernel = cs$kernel, nu = nu,
                               variant = cs$variant, sampler = cs$sampler,
                               lengthscale = l)
    exact <- ref_kappa(t(xy[1, ] - xy[2, ]), cs$kernel, lengthscale = l, nu = nu)
    expect_lt(abs(mean(est) - exact), 4 * sd(est) / sqrt(reps))
  }
})

test_that("orthogonal and QMC features lower the Gram-matrix error (Gaussian, d = 8)", {
  set.seed(28)
  d <- 8
  x <- matrix(rnorm(30 * d), 30, d)
  K <- rff_kernel(x, lengthscale = 4)
  gram_mse <- function(D, sampler, reps = 200) {
    vapply(seq_len(reps), function(r) {
      Z <- rff_features(x, D = D, lengthscale = 4, sampler = sampler, threads = 1)
      mean((tcrossprod(Z) - K)^2)
    }, numeric(1))
  }
  # i.i.d. pairs: the mean squared error has a closed form (Proposition 2)
  delta2 <- as.matrix(dist(x))^2
  for (D in c(2, 8, 32) * d) {
    iid <- gram_mse(D, "iid")
    theory <- mean((1 + exp(-4 * delta2 / 32) - 2 * K^2) / D)
    expect_lt(abs(mean(iid) - theory), 4 * sd(iid) / sqrt(length(iid)))
    samplers <- c(if (D <= 8 * d) "orthogonal", if (D >= 8 * d) "qmc")
    for (s in samplers) {
      new <- gram_mse(D, s)
      se <- sqrt(var(iid) / length(iid) + var(new) / length(new))
      expect_lt(mean(new) + 4 * se, mean(iid), label = sprintf("%s at D = %d", s, D))
      expect_lt(mean(new) / mean(iid), 0.8, label = sprintf("%s ratio at D = %d", s, D))
    }
  }
})

test_that("samplers reject kernels they cannot serve", {
  expect_rff_error(rff_map(3, kernel = "laplace", sampler = "orthogonal"), "sampler")
  expect_rff_error(rff_features(matrix(1, 2, 3), kernel = "laplace", sampler = "orthogonal"),
                   "sampler")
  expect_rff_error(rff_map(3, sampler = "halton"), "sampler")
  expect_rff_error(rff_map(3, sampler = NA_character_), "sampler")
  m <- rff_map(3, D = 8, sampler = "qmc")
  expect_rff_error(rff_features(matrix(1, 2, 3), map = m, sampler = "iid"), "map")
})

test_that("the C routines check the sampler, and read old parameter lists", {
  spec <- list(D = 8L, d = 3L, kernel = "laplace", lengthscale = 1, nu = 1.5,
               variant = "pair", sampler = "orthogonal")
  expect_error(.Call(rff:::C_rff_draw_map, spec), "radial")
  spec$sampler <- "sobol"
  expect_error(.Call(rff:::C_rff_draw_map, spec), "sampler")
  # a list without `sampler` and `order` draws i.i.d., as before
  spec$sampler <- NULL
  spec$kernel <- "gaussian"
  set.seed(29)
  a <- .Call(rff:::C_rff_draw_map, spec)
  set.seed(29)
  expect_identical(a$omega, matrix(rnorm(12), 3, 4))
  expect_error(.Call(rff:::C_rff_halton, 3L, 0L, TRUE))
  expect_error(.Call(rff:::C_rff_halton, 3L, 2L, NA))
})
