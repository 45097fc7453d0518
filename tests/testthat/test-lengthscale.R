# The median heuristic (R/lengthscale.R).

test_that("the median heuristic is the median pairwise distance", {
  set.seed(51)
  x <- matrix(rnorm(200 * 3), 200, 3)
  expect_equal(rff_median_lengthscale(x), median(dist(x)))
  df <- data.frame(a = x[, 1], b = x[, 2], c = x[, 3])
  expect_equal(rff_median_lengthscale(df), median(dist(x)))
  # brute force on a small case: distances 1, 2, 3 between 0, 1, 3 -> 2
  expect_equal(rff_median_lengthscale(c(0, 1, 3)), 2)
})

test_that("large data use a subsample of max_rows rows from R's stream", {
  set.seed(52)
  x <- matrix(rnorm(500 * 2), 500, 2)
  set.seed(53)
  l <- rff_median_lengthscale(x, max_rows = 100)
  set.seed(53)
  keep <- sort(sample.int(500, 100))
  expect_equal(l, median(dist(x[keep, ])))
  # close to the full-data value
  expect_lt(abs(l / median(dist(x)) - 1), 0.1)
})

test_that("lengthscale = \"median\" is resolved from x and stored in the map", {
  set.seed(54)
  x <- matrix(rnorm(60), 20, 3)
  Z <- rff_features(x, D = 10, lengthscale = "median", sampler = "orthogonal")
  map <- attr(Z, "rff_map")
  expect_identical(map$lengthscale, median(dist(x)))
  # new data reuse the stored number
  xnew <- 10 * matrix(rnorm(9), 3, 3)
  expect_equal(unclass(rff_features(xnew, map = map))[, ],
               cbind(cos(xnew %*% map$omega), sin(xnew %*% map$omega)) * sqrt(2 / 10),
               ignore_attr = TRUE)
  # with n below the subsample size no random numbers are used for it
  set.seed(55); a <- rff_features(x, D = 10, lengthscale = "median")
  set.seed(55); b <- rff_features(x, D = 10, lengthscale = median(dist(x)))
  expect_identical(a, b)
  expect_equal(rff_kernel(x, lengthscale = "median"), rff_kernel(x, lengthscale = median(dist(x))))
  expect_equal(attr(rff_features(x, D = 8, kernel = "arccos", lengthscale = "median"),
                    "rff_map")$lengthscale, median(dist(x)))
})

test_that("bad uses of the median heuristic are rff_errors naming the argument", {
  expect_rff_error(rff_map(3, lengthscale = "median"), "lengthscale")
  expect_match(tryCatch(rff_map(3, lengthscale = "median"), error = conditionMessage),
               "rff_features()", fixed = TRUE)
  expect_rff_error(rff_features(matrix(1, 2, 2), lengthscale = "mean"), "lengthscale")
  expect_rff_error(rff_features(matrix(1, 4, 2), lengthscale = "median"), "lengthscale")
  expect_rff_error(rff_features(matrix(1, 1, 2), lengthscale = "median"), "lengthscale")
  expect_rff_error(rff_kernel(matrix(1, 1, 2), lengthscale = "median"), "lengthscale")
  expect_rff_error(rff_median_lengthscale(matrix(1:4, 2), max_rows = 1), "max_rows")
  expect_rff_error(rff_median_lengthscale("a"), "x")
})
