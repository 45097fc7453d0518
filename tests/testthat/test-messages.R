# Refusals name what the user gave: the data's rows rather than a `folds`
# never passed, the object that would not fit in memory, the length of a
# response one value short, and a Poisson count beyond what the fit takes.

test_that("too few rows for the default folds names the data, not `folds`", {
  d <- iris[c(1, 51, 101, 2), ]
  expect_rff_error(rff_glm(Species ~ ., d, lengthscale = "ard", progress = FALSE), "x", "4 rows")
  expect_rff_error(rff_glm(Species ~ ., d, folds = 5, progress = FALSE), "folds")
})

test_that("memory refusals name the object and its shape", {
  old <- options(rff.max_gb = 1)
  on.exit(options(old))
  x <- matrix(0, 30000, 2)
  m <- rff_map(2, D = 120000, lengthscale = 1)
  expect_rff_error(rff_features(x, map = m), "D", "the features (30000 x 120000)")
  expect_rff_error(rff_kernel(matrix(0, 20000, 2), kernel = "gaussian", lengthscale = 1),
                   "x", "the kernel matrix (20000 x 20000)")
})

test_that("a Poisson count beyond 1e150 is refused before the solver runs", {
  expect_rff_error(rff_glm(matrix(1:3, 3, 1), c(1e300, 1, 2), family = "poisson", D = 10,
                           lengthscale = 1, progress = FALSE), "y", "1e+300")
  f <- rff_glm(matrix(1:3, 3, 1), c(1e100, 1, 2), family = "poisson", D = 10,
               lengthscale = 1, lambda = 1, progress = FALSE)
  expect_s3_class(f, "rff_glm")
})
