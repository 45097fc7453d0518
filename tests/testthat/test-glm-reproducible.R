# rff_glm() with its map and lambda given draws no random numbers: the
# preconditioner's sample is of evenly spaced rows.

test_that("the preconditioner's sample is evenly spaced rows", {
  expect_identical(rff:::precond_sample(10L, 4L), c(1, 4, 7, 10))
  expect_identical(rff:::precond_sample(5L, 8L), 1:5)
  s <- rff:::precond_sample(30000L, 2000L)
  expect_length(s, 2000L)
  expect_false(anyDuplicated(s) > 0)
  expect_equal(range(diff(s)), c(15, 16))
})

test_that("a GLM with map and lambda given is the same whatever the RNG's state", {
  set.seed(3)
  n <- 2600
  x <- matrix(rnorm(2 * n), n, 2)
  y <- factor(ifelse(x[, 1] + sin(2 * x[, 2]) + rnorm(n, sd = 0.3) > 0, "b", "a"))
  m <- rff_map(2, D = 60, lengthscale = 1)
  set.seed(1)
  before <- .Random.seed
  f1 <- rff_glm(x, y, map = m, lambda = 1e-3, progress = FALSE)
  expect_identical(.Random.seed, before)
  set.seed(2)
  f2 <- rff_glm(x, y, map = m, lambda = 1e-3, progress = FALSE)
  expect_identical(f1$coefficients, f2$coefficients)
  expect_identical(f1$intercept, f2$intercept)
  # and it is the penalized optimum: the gradient of glmnet's objective
  # (mean deviance / 2 + lambda |B|^2 / 2) vanishes, computed in R
  xs <- scale(x, f1$standardize$center, f1$standardize$scale)
  Z <- rff_features(xs, map = m)
  eta <- drop(Z %*% f1$coefficients + f1$intercept)
  r <- stats::plogis(eta) - (y == "b")
  g <- drop(crossprod(Z, r)) / n + 1e-3 * drop(f1$coefficients)
  expect_lt(max(abs(g)), 1e-4)
  expect_lt(abs(mean(r)), 1e-4)
})
