# rff_uniform_bound() and rff_uniform_D() against the formula minimized by
# brute force, the second spectral moment by simulation, and the simulated
# frequency of sup errors.

# The documented bound with the minimum over r taken on a fine grid (an
# upper bound of the true minimum, within a fraction of a percent of it).
grid_bound <- function(D, eps, d, diameter, sigma2, variant) {
  net <- function(log_a, b, R) {
    r <- exp(seq(log(R) - 300, log(R), length.out = 200001))
    min(exp(log_a) + b * R^2, exp(log_a + d * log1p(2 * R / r)) + b * r^2)
  }
  if (variant == "pair") return(net(log(2) - D * eps^2 / 16, 16 * sigma2 / eps^2, diameter))
  net(log(2) - D * eps^2 / 32, 64 * sigma2 / eps^2, diameter) +
    net(log(2) - D * eps^2 / 32, 16 * sigma2 / eps^2, 2 * diameter)
}

test_that("the bound is the documented formula, minimized over the net radius", {
  cases <- expand.grid(D = c(500, 5000, 50000), eps = c(0.05, 0.2, 0.5), d = c(1, 3, 10),
                       diameter = c(0.5, 4), variant = c("pair", "phase"),
                       stringsAsFactors = FALSE)
  for (i in seq_len(nrow(cases))) {
    cs <- cases[i, ]
    got <- rff_uniform_bound(cs$D, cs$eps, cs$d, cs$diameter, lengthscale = 2,
                             variant = cs$variant)
    ref <- grid_bound(cs$D, cs$eps, cs$d, cs$diameter, cs$d / 4, cs$variant)
    # the exact minimum is at most the grid's, and not much below it
    expect_lte(got, ref * (1 + 1e-9))
    expect_gte(got, ref * (1 - 1e-3))
  }
})

test_that("sigma^2 is the second moment of the spectral measure", {
  # Matern nu: sigma^2 = nu / (nu - 1) sum 1 / l^2, so the bound equals the
  # Gaussian one at lengthscale l sqrt((nu - 1) / nu)
  l <- c(0.5, 2, 1)
  for (nu in c(1.2, 2.5, 40)) {
    expect_equal(rff_uniform_bound(3000, 0.3, 3, 2, kernel = "matern", nu = nu,
                                   lengthscale = l),
                 rff_uniform_bound(3000, 0.3, 3, 2, lengthscale = l * sqrt((nu - 1) / nu)))
  }
  # and that second moment is what the maps draw: mean |omega|^2 within 4 se
  set.seed(5)
  for (k in c("gaussian", "matern")) {
    w2 <- colSums(rff_map(3, D = 40000, kernel = k, nu = 2.5, lengthscale = l,
                          variant = "phase")$omega^2)
    sigma2 <- sum(1 / l^2) * if (k == "matern") 2.5 / 1.5 else 1
    expect_lt(abs(mean(w2) - sigma2), 4 * sd(w2) / sqrt(length(w2)))
    # a scaled sigma^2 changes the bound
    expect_equal(rff_uniform_bound(2000, 0.4, 3, 1, kernel = k, nu = 2.5, lengthscale = l),
                 grid_bound(2000, 0.4, 3, 1, sigma2, "phase"), tolerance = 1e-3)
  }
})

test_that("the bound holds against the simulated frequency of sup errors", {
  # x, y in M = [0, 4] (diameter 4): the sup over the grid of |z(x)'z(0) -
  # k(x, 0)| per replicate is at most the sup over M x M
  grid <- seq(0, 4, by = 0.02)
  set.seed(17)
  reps <- 300
  for (v in c("pair", "phase")) for (D in c(1000, 4000)) {
    err <- rff_kernel_error(grid, y = 0, D = D, reps = reps, variant = v)
    for (eps in c(0.05, 0.1, 0.2, 0.3, 0.5)) {
      bound <- rff_uniform_bound(D, eps, d = 1, diameter = 4, variant = v)
      p <- min(bound, 1)
      freq <- mean(err$max_abs >= eps)
      expect_lte(freq, p + 4 * sqrt(p * (1 - p) / reps) + 1e-12)
    }
  }
  # in 2 dimensions, Matern 5/2, anisotropic lengthscales, pairs of points
  set.seed(18)
  x <- matrix(runif(60), 30, 2)          # in the unit square: diameter sqrt(2)
  err <- rff_kernel_error(x, D = 3000, kernel = "matern", nu = 2.5,
                          lengthscale = c(0.3, 0.6), reps = 200)
  for (eps in c(0.1, 0.2, 0.3)) {
    p <- min(1, rff_uniform_bound(3000, eps, 2, sqrt(2), kernel = "matern", nu = 2.5,
                                  lengthscale = c(0.3, 0.6), variant = "pair"))
    expect_lte(mean(err$max_abs >= eps), p + 4 * sqrt(p * (1 - p) / 200) + 1e-12)
  }
})

test_that("the bound falls with D and eps and grows with the set and the dimension", {
  b <- rff_uniform_bound(c(1e3, 1e4, 1e5, 1e6), 0.2, 2, 3)
  expect_true(all(diff(b) < 0))
  expect_true(all(diff(rff_uniform_bound(1e4, c(0.1, 0.2, 0.4), 2, 3)) < 0))
  expect_lt(rff_uniform_bound(1e4, 0.2, 2, 1), rff_uniform_bound(1e4, 0.2, 2, 3))
  expect_lt(rff_uniform_bound(1e4, 0.2, 2, 1), rff_uniform_bound(1e4, 0.2, 5, 1))
  # pairs have the better bound at the same D
  expect_lt(rff_uniform_bound(1e4, 0.2, 2, 1, variant = "pair"),
            rff_uniform_bound(1e4, 0.2, 2, 1, variant = "phase"))
  # recycling
  expect_length(rff_uniform_bound(c(100, 200), c(0.1, 0.2, 0.3, 0.4), 1, 1), 4L)
  # void bounds are returned as they are
  expect_gt(rff_uniform_bound(10, 0.01, 1, 1), 1)
})

test_that("rff_uniform_D() is the smallest D whose bound reaches prob", {
  for (v in c("pair", "phase")) for (eps in c(0.05, 0.3)) for (prob in c(0.5, 1e-3)) {
    D <- rff_uniform_D(eps, prob, d = 3, diameter = 2, lengthscale = 0.7, variant = v)
    step <- if (v == "pair") 2 else 1
    if (v == "pair") expect_equal(D %% 2, 0)
    expect_lte(rff_uniform_bound(D, eps, 3, 2, lengthscale = 0.7, variant = v), prob)
    expect_gt(rff_uniform_bound(D - step, eps, 3, 2, lengthscale = 0.7, variant = v), prob)
  }
  # the familiar order d eps^-2 log(1 / eps): quartering eps multiplies D by about 16
  r <- rff_uniform_D(0.025, 0.01, 1, 1) / rff_uniform_D(0.1, 0.01, 1, 1)
  expect_gt(r, 16)
  expect_lt(r, 25)
  expect_equal(rff_uniform_D(c(0.1, 0.2), 0.01, 1, 1),
               c(rff_uniform_D(0.1, 0.01, 1, 1), rff_uniform_D(0.2, 0.01, 1, 1)))
})

test_that("kernels without a second spectral moment are rff_errors that say why", {
  e <- expect_error(rff_uniform_bound(100, 0.1, 1, 1, kernel = "laplace"), class = "rff_error")
  expect_identical(e$arg, "kernel")
  expect_match(conditionMessage(e), "second moment")
  e <- expect_error(rff_uniform_bound(100, 0.1, 1, 1, kernel = "matern", nu = 1),
                    class = "rff_error")
  expect_identical(e$arg, "nu")
  expect_match(conditionMessage(e), "infinite")
  expect_error(rff_uniform_D(0.1, 0.1, 1, 1, kernel = "matern", nu = 0.5), class = "rff_error")
  expect_error(rff_uniform_bound(100, 0.1, 1, 1, kernel = "arccos"), class = "rff_error")
  gauss <- rff_spectral(function(m, d) matrix(rnorm(m * d), d, m),
                        function(delta) exp(-sum(delta^2) / 2))
  e <- expect_error(rff_uniform_bound(100, 0.1, 1, 1, kernel = gauss), class = "rff_error")
  expect_identical(e$arg, "kernel")
  bad <- list(list(D = 0), list(D = 3, variant = "pair"), list(eps = -1), list(eps = NA),
              list(d = 0), list(diameter = 0), list(diameter = Inf), list(lengthscale = c(1, 2)),
              list(variant = "both"), list(nu = -1, kernel = "matern"))
  for (b in bad) {
    args <- utils::modifyList(list(D = 100, eps = 0.1, d = 1, diameter = 1), b)
    expect_error(do.call(rff_uniform_bound, args), class = "rff_error")
  }
  expect_error(rff_uniform_D(0.1, 1, 1, 1), class = "rff_error")
  expect_error(rff_uniform_D(0.1, 0, 1, 1), class = "rff_error")
  expect_error(rff_uniform_D(1e-9, 1e-9, 1, 1), class = "rff_error")
  expect_error(rff_uniform_bound(eps = 0.1, d = 1, diameter = 1), class = "rff_error")
  expect_error(rff_uniform_bound(c(10, 20, 30), c(0.1, 0.2), 1, 1), class = "rff_error")
})
