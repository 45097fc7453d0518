# The median heuristic (R/lengthscale.R) and the lengthscale walk of "auto"
# (R/cv-core.R, R/ridge-fit.R).

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

test_that("the lengthscale walk on designed criteria: down, up, flat, and to the bounds", {
  # the criterion as a function of j, the multiple 2^(j / 2) of l0 = 2
  walk_on <- function(crit) {
    m <- list(x = matrix(0, 20, 1), weights = NULL, median = 2,
              map = rff_map(1, D = 4, lengthscale = 1))
    seen <- numeric()
    fit_rows <- function(map, rows, score_only, ...) {
      j <- round(2 * log2(map$lengthscale / 2))
      seen <<- c(seen, j)
      list(criterion = "LOO", loo = crit(j), best = 1L, lambda_best = 10 + j,
           normal = list(A = 1))
    }
    s <- rff:::select_lengthscale(m, fit_rows)
    list(s = s, seen = seen, j = round(2 * log2(s$table$lengthscale / 2)))
  }
  # a minimum at j = -3: down from 0 until the next is worse; -1 better
  # than 0 puts the minimum below 0, and j = 1 is never scored
  w <- walk_on(function(j) (j + 3)^2 + 1)
  expect_identical(w$seen, c(0, -1, -2, -3, -4))
  expect_identical(w$j, c(-4, -3, -2, -1, 0))
  expect_identical(w$s$best, 2L)
  expect_equal(w$s$table$multiple, 2^(w$j / 2))
  expect_equal(w$s$table$lambda, 10 + w$j)
  expect_equal(w$s$table$loo, (w$j + 3)^2 + 1)
  # a minimum at j = 0: -1 and then 1 score worse, the walk ends
  w <- walk_on(function(j) j^2 + 1)
  expect_identical(w$seen, c(0, -1, 1))
  expect_identical(w$s$best, 2L)
  # a minimum at j = -1: its two neighbours, three candidates
  w <- walk_on(function(j) (j + 1)^2 + 1)
  expect_identical(w$seen, c(0, -1, -2))
  expect_identical(w$j[w$s$best], -1)
  # the step below the start gains less than 0.1%: the flat rule is for
  # steps past the start's neighbours, and the walk goes on down
  w <- walk_on(function(j) c(9.5, 9, 9.996, 10, 11)[j + 4])
  expect_identical(w$seen, c(0, -1, -2, -3))
  expect_identical(w$j[w$s$best], -2)
  # a start that scores NA or NaN: the step below wins nothing over it,
  # and the walk looks above as well (then on down from the best, -1)
  s <- c("-2" = 5, "-1" = 2, "1" = 4)
  for (bad in c(NA, NaN)) {
    w <- rff:::lengthscale_walk(function(j) if (j == 0) bad else s[[as.character(j)]])
    expect_identical(w$steps, -2:1)
    expect_identical(w$steps[w$best], -1L)
  }
  # -1 ties with 0: no better, so the walk looks above
  w <- walk_on(function(j) if (j >= 0) 5 - j else 5)
  expect_identical(w$seen[1:3], c(0, -1, 1))
  # a criterion that is not unimodal: below 0 it falls to j = -2, and the
  # lower minimum at j = 2 is not seen (the step above is scored only when
  # the step below did not win)
  w <- walk_on(function(j) c(3, 1.5, 2, 2.5, 4, 0.5, 5)[j + 4])
  expect_identical(w$seen, c(0, -1, -2, -3))
  expect_identical(w$j[w$s$best], -2)
  # decreasing to the upper bound, each step gaining more than 0.1%
  w <- walk_on(function(j) 10 - j)
  expect_identical(w$seen, c(0, -1, 1, 2:8))
  expect_identical(w$s$best, 10L)
  # and to the lower bound
  w <- walk_on(function(j) 10 + j)
  expect_identical(w$seen, c(0, -1, -2:-6))
  expect_identical(w$s$best, 1L)
  # flat: the step from 3 to 4 gains 0.05%; the walk stops there, at 4
  w <- walk_on(function(j) if (j <= 3) 10 - j else 7 * (1 - 5e-4 * (j - 3)))
  expect_identical(w$seen, c(0, -1, 1, 2, 3, 4))
  expect_identical(w$j[w$s$best], 4)
})

test_that("lengthscale \"auto\": a downhill walk from the median heuristic on the same draws", {
  for (case in list(list(seed = 1, n = 150, y = NULL), list(seed = 2, n = 120, y = "linear"))) {
    dat <- make_data(n = case$n, seed = case$seed)
    if (identical(case$y, "linear")) {
      # a linear response: the walk goes to large lengthscales
      set.seed(case$seed)
      x <- matrix(rnorm(3 * case$n), case$n)
      dat <- list(x = x, y = drop(x %*% c(1, -1, 0.5)) + rnorm(case$n, sd = 0.3))
    }
    set.seed(31)
    # (the path as asked for: lambda_min_ratio given, no extension)
    fit <- rff_ridge(dat$x, dat$y, D = 40, nlambda = 10, lambda_min_ratio = 1e-6,
                     progress = FALSE)
    xs <- unclass(scale(dat$x))[, ]
    l0 <- median(dist(xs))
    set.seed(31)
    base <- rff_map(3, D = 40, lengthscale = 1)
    fit_at <- function(j) {
      rff_ridge(xs, dat$y, map = map_at(base, 2^(j / 2) * l0), nlambda = 10,
                lambda_min_ratio = 1e-6, standardize = FALSE, progress = FALSE)
    }
    walk <- expected_walk(function(j) min(fit_at(j)$loo))
    s <- fit$lengthscale_search
    expect_equal(s$median, l0)
    expect_equal(s$table$multiple, 2^(walk$steps / 2))
    expect_equal(s$table$lengthscale, 2^(walk$steps / 2) * l0)
    expect_equal(s$table$loo, walk$score, tolerance = 1e-10)
    expect_identical(s$best, walk$best)
    jb <- walk$steps[walk$best]
    expect_equal(fit$map$lengthscale, 2^(jb / 2) * l0)
    expect_equal(fit$coefficients, fit_at(jb)$coefficients, tolerance = 1e-10)
    if (identical(case$y, "linear")) {
      # it walked up and stopped where a step gained less than 0.1%
      expect_gt(jb, 1L)
      k <- length(walk$score)
      expect_gt(walk$score[k], (1 - 1e-3) * walk$score[k - 1L])
    } else {
      # stopped between two worse neighbours: here the minimum of the whole grid
      expect_true(all(walk$score[-walk$best] > walk$score[walk$best]))
      all_loo <- vapply(-6:8, function(j) min(fit_at(j)$loo), 0)
      expect_equal(walk$score[walk$best], min(all_loo), tolerance = 1e-10)
    }
  }
  expect_output(print(fit), "chosen by LOO")
  expect_output(print(summary(fit)), "Lengthscale \\(auto")
  # "median" is accepted, and is the median heuristic of the standardized inputs
  fm <- rff_ridge(dat$x, dat$y, D = 20, lengthscale = "median", lambda = 0.01, progress = FALSE)
  expect_equal(fm$map$lengthscale, l0)
  expect_null(fm$lengthscale_search)
  # the default D from n
  expect_identical(fit$map$D, 40L)
  expect_identical(rff_ridge(dat$x, dat$y, lambda = 0.1, lengthscale = 1,
                             progress = FALSE)$map$D, 1000L)
})
