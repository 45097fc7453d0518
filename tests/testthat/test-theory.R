# rff_variance() and rff_tail_bound() against closed forms and simulation.

test_that("rff_variance() is Proposition 2 for every kernel, in any dimension", {
  # THEORY.md's worked example: Gaussian, l = 1, delta = 1
  expect_equal(100 * rff_variance(1, 100, variant = "phase"), 0.69979, tolerance = 1e-5)
  expect_equal(100 * rff_variance(1, 100, variant = "pair"), 0.39958, tolerance = 1e-5)
  # the same by hand: kappa(1) = exp(-1/2), kappa(2) = exp(-2)
  expect_equal(rff_variance(1, 10, variant = "phase"), (1 + exp(-2) / 2 - exp(-1)) / 10)
  expect_equal(rff_variance(1, 10), (1 + exp(-2) - 2 * exp(-1)) / 10)
  # Laplace in 1-d: kappa(delta) = exp(-|delta| / l)
  expect_equal(rff_variance(c(-0.5, 2), 20, kernel = "laplace", lengthscale = 2),
               (1 + exp(-c(0.5, 2)) - 2 * exp(-c(0.25, 1))^2) / 20)
  # Matern 3/2 in closed form, r = |delta| / l
  r <- 0.7 / 1.5
  k <- function(r) (1 + sqrt(3) * r) * exp(-sqrt(3) * r)
  expect_equal(rff_variance(0.7, 30, kernel = "matern", nu = 1.5, lengthscale = 1.5,
                            variant = "phase"),
               (1 + k(2 * r) / 2 - k(r)^2) / 30)
  # matrices of offsets, ARD lengthscales, any nu, against the helper's base R
  set.seed(1)
  delta <- matrix(rnorm(12), 4, 3)
  for (kern in c("gaussian", "laplace", "matern")) for (v in c("pair", "phase")) {
    expect_equal(rff_variance(delta, 50, kernel = kern, lengthscale = c(0.5, 1, 2),
                              nu = 0.8, variant = v),
                 ref_variance(delta, 50, v, kernel = kern, lengthscale = c(0.5, 1, 2),
                              nu = 0.8))
  }
  # data frames are offsets by row; D per offset, or many D for one offset
  expect_equal(rff_variance(as.data.frame(delta), c(10, 20, 30, 40)),
               ref_variance(delta, c(10, 20, 30, 40), "pair"))
  expect_equal(rff_variance(1, c(10, 100, 1000)), 0.39958 / c(10, 100, 1000),
               tolerance = 1e-5)
  # delta = 0: pairs are exact, random phases are not
  expect_equal(rff_variance(0, 10), 0)
  expect_equal(rff_variance(0, 10, variant = "phase"), 0.05)
  # for the Gaussian kernel pairs are never worse
  d <- seq(-3, 3, by = 0.25)
  expect_true(all(rff_variance(d, 10) <= rff_variance(d, 10, variant = "phase") + 1e-15))
})

test_that("the simulated variance of the estimate matches rff_variance()", {
  # Var of a sample variance: (m4 - s^4) / n; expect_moments() allows 4 se
  reps <- 4000
  cases <- list(
    list(delta = 1, kernel = "gaussian", lengthscale = 1, nu = 1.5),
    list(delta = 0.6, kernel = "laplace", lengthscale = 1, nu = 1.5),
    list(delta = matrix(c(0.8, -0.4), 1), kernel = "matern", lengthscale = c(1, 2), nu = 1.5)
  )
  set.seed(42)
  for (cs in cases) for (v in c("pair", "phase")) {
    d <- NCOL(cs$delta)
    sim <- rff_kernel_error(x = cs$delta, y = matrix(0, 1, d), D = 100, reps = reps,
                            kernel = cs$kernel, lengthscale = cs$lengthscale,
                            nu = cs$nu, variant = v, keep = TRUE)
    est <- attr(sim, "estimate")[1, 1, ]
    theory <- rff_variance(cs$delta, 100, kernel = cs$kernel,
                           lengthscale = cs$lengthscale, nu = cs$nu, variant = v)
    kappa <- ref_kappa(cs$delta, cs$kernel, cs$lengthscale, cs$nu)
    expect_moments(est, mean = kappa, var = theory)
  }
})

test_that("rff_tail_bound() is Hoeffding's bound, and holds where it is not void", {
  expect_equal(rff_tail_bound(100, 0.5), 2 * exp(-100 * 0.25 / 4))
  expect_equal(rff_tail_bound(100, 0.5, variant = "phase"), 2 * exp(-100 * 0.25 / 8))
  expect_equal(rff_tail_bound(c(10, 1000), c(0.1, 0.3, 0.2, 0.4)),
               2 * exp(-c(10, 1000, 10, 1000) * c(0.1, 0.3, 0.2, 0.4)^2 / 4))
  expect_equal(rff_tail_bound(1000, c(0.1, 0.2), variant = "phase"),
               2 * exp(-1000 * c(0.01, 0.04) / 8))
  # D = 4 features, Laplace kernel at delta = 2: bounds 0.97, 0.81, 0.66 at
  # error levels the estimates reach (1 to 8% of them); the bound is a
  # theorem, so one-sided, with 4 binomial standard errors
  set.seed(9)
  reps <- 3000
  sim <- rff_kernel_error(x = 2, y = 0, D = 4, reps = reps, kernel = "laplace")
  eps <- c(0.85, 0.95, 1.05)
  bound <- rff_tail_bound(4, eps)
  freq <- vapply(eps, function(e) mean(sim$max_abs >= e), numeric(1))
  expect_true(all(freq <= bound + 4 * sqrt(bound * (1 - bound) / reps)))
})

test_that("the error's tails equal those of a base-R simulation of the estimator", {
  # P(|error| >= eps) at 1 and 2 standard deviations (Proposition 2), from
  # the package and from the estimator written out in base R with its own
  # draws: equal within 4 standard errors of the difference of two
  # binomial proportions, so a wrong variance shows
  set.seed(10)
  reps <- 3000
  D <- 40
  delta <- 0.5
  for (v in c("pair", "phase")) for (kern in c("gaussian", "laplace")) {
    sim <- rff_kernel_error(x = delta, y = 0, D = D, reps = reps, kernel = kern, variant = v)
    m <- if (v == "pair") D / 2 else D
    w <- matrix(if (kern == "gaussian") rnorm(reps * m) else rcauchy(reps * m), reps, m)
    est <- if (v == "pair") rowMeans(cos(w * delta)) else {
      b <- matrix(runif(reps * m, 0, 2 * pi), reps, m)
      rowSums(cos(w * delta + b) * cos(b)) * 2 / D
    }
    ref <- abs(est - ref_kappa(delta, kern))
    eps <- c(1, 2) * sqrt(ref_variance(delta, D, v, kernel = kern))
    p1 <- vapply(eps, function(e) mean(sim$max_abs >= e), numeric(1))
    p2 <- vapply(eps, function(e) mean(ref >= e), numeric(1))
    p <- (p1 + p2) / 2
    expect_true(all(abs(p1 - p2) < 4 * sqrt(p * (1 - p) * 2 / reps)),
                label = sprintf("%s, %s: %s vs %s", kern, v, paste(p1, collapse = " "),
                                paste(p2, collapse = " ")))
  }
})

test_that("bad input is an rff_error naming the argument", {
  expect_identical(rff_error_arg(rff_variance("a", 10)), "delta")
  expect_identical(rff_error_arg(rff_variance(c(1, NA), 10)), "delta")
  expect_identical(rff_error_arg(rff_variance(1, 0)), "D")
  expect_identical(rff_error_arg(rff_variance(1, 11)), "D")
  expect_identical(rff_error_arg(rff_variance(1, 2.5, variant = "phase")), "D")
  expect_identical(rff_error_arg(rff_variance(c(1, 2, 3), c(10, 20))), "D")
  expect_identical(rff_error_arg(rff_variance(1)), "D")
  expect_identical(rff_error_arg(rff_variance(1, 10, kernel = "cosine")), "kernel")
  expect_identical(rff_error_arg(rff_variance(1, 10, lengthscale = c(1, 2))), "lengthscale")
  expect_identical(rff_error_arg(rff_variance(1, 10, nu = -1)), "nu")
  expect_identical(rff_error_arg(rff_variance(1, 10, variant = "odd")), "variant")
  expect_identical(rff_error_arg(rff_tail_bound(10)), "eps")
  expect_identical(rff_error_arg(rff_tail_bound(0, 0.1)), "D")
  expect_identical(rff_error_arg(rff_tail_bound(11, 0.1)), "D")
  expect_identical(rff_error_arg(rff_tail_bound(10, 0)), "eps")
  expect_identical(rff_error_arg(rff_tail_bound(10, NA_real_)), "eps")
  expect_identical(rff_error_arg(rff_tail_bound(c(10, 20), c(0.1, 0.2, 0.3))), "eps")
  expect_identical(rff_error_arg(rff_tail_bound(10, 0.1, variant = "both")), "variant")
  e <- tryCatch(rff_variance(1, 11), rff_error = function(e) e)
  expect_match(conditionMessage(e), "`D` must be even for variant \"pair\", got 11")
})
