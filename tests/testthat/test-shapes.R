# Every exported function on the smallest shapes, where R drops dimensions:
# D in {1, 2}, n in {1, 2, 3}, d in {1, 2}, q in {1, 2} responses,
# intercept on and off. Each result is checked against base R on the
# feature matrix (ref_ridge(): helper-ridge.R); a refusal must be an rff_error.

test_that("fits, statistics and predictions keep their shapes at D, n, d, q of 1 and 2", {
  set.seed(5)
  for (D in 1:2) for (variant in if (D == 1) "phase" else c("pair", "phase"))
  for (n in 1:3) for (d in 1:2) for (q in 1:2) for (intercept in c(TRUE, FALSE)) {
    label <- sprintf("D=%d %s n=%d d=%d q=%d intercept=%s", D, variant, n, d, q, intercept)
    x <- matrix(rnorm(n * d), n, d)
    y <- matrix(rnorm(n * q), n, q, dimnames = list(NULL, if (q > 1) c("a", "b")))
    yy <- if (q == 1) y[, 1] else y
    m <- rff_map(d, D = D, variant = variant)
    Z <- rff_features(x, map = m)
    expect_identical(dim(Z), c(n, D), label = label)
    expect_identical(dim(rff_kernel(x)), c(n, n), label = label)
    s <- rff_stats(x, yy, map = m, intercept = intercept)
    expect_equal(s$ZtZ, crossprod(Z), tolerance = 1e-12, label = label, ignore_attr = TRUE)
    fit <- tryCatch(rff_ridge(x, yy, map = m, lambda = 0.1, intercept = intercept,
                              progress = FALSE, standardize = FALSE), error = function(e) e)
    if (inherits(fit, "error")) {
      # one row with an intercept leaves nothing to fit
      expect_s3_class(fit, "rff_error")
      expect_true(n == 1 && intercept, label = label)
      next
    }
    ref <- ref_ridge(Z, y, 0.1, intercept)
    expect_equal(unname(matrix(fit$coefficients, D)), unname(ref$beta), tolerance = 1e-10,
                 label = label)
    expect_equal(unname(matrix(fit$intercept, 1)), unname(matrix(ref$a0, 1)), tolerance = 1e-10,
                 label = label)
    p <- predict(fit, x)
    if (q == 1) {
      expect_null(dim(p), label = label)
      expect_equal(unname(p), ref$fit[, 1], tolerance = 1e-10, label = label)
    } else {
      expect_identical(dim(p), c(n, q), label = label)
      expect_equal(unname(p), unname(ref$fit), tolerance = 1e-10, label = label)
    }
    # two lambdas: coefficients of every response at every lambda
    fit2 <- rff_ridge(x, yy, map = m, lambda = c(0.1, 1), intercept = intercept,
                      progress = FALSE, standardize = FALSE)
    p2 <- predict(fit2, x, lambda = 1)
    ref2 <- ref_ridge(Z, y, 1, intercept)
    expect_equal(unname(matrix(p2, n)), unname(ref2$fit), tolerance = 1e-10, label = label)
    if (n >= 2) {
      cv <- tryCatch(rff_cv(x, yy, folds = n, lambda = c(0.1, 1), map = m,
                            intercept = intercept, progress = FALSE, standardize = FALSE),
                     error = function(e) e)
      if (inherits(cv, "error")) expect_s3_class(cv, "rff_error") else
        expect_equal(NROW(cv$cvm), 2L, label = label)
    }
    ke <- rff_kernel_error(x, map = m)
    expect_equal(ke$max_abs, max(abs(tcrossprod(Z) - rff_kernel(x))), tolerance = 1e-12,
                 label = label)
  }
})

test_that("the theory helpers and the median heuristic on the smallest inputs", {
  # 2 cos(w'x + b) cos(w'y + b) = cos(w'delta) + cos(w'(x + y) + 2b): second
  # moment (1 + k(2 delta)) / 2 + 1 / 2, k(delta) = exp(-delta^2 / 2)
  expect_equal(rff_variance(0.5, D = 1, variant = "phase"),
               1 + exp(-1^2 / 2) / 2 - exp(-0.5^2 / 2)^2, tolerance = 1e-12)
  expect_length(rff_variance(matrix(c(0.5, 1), 1, 2), D = 2), 1L)
  expect_equal(rff_median_lengthscale(matrix(c(0, 3), 2, 1)), 3)
  expect_error(rff_median_lengthscale(matrix(1, 1, 2)), class = "rff_error")
  expect_equal(rff_tail_bound(1, 0.5, variant = "phase"), 2 * exp(-0.5^2 / 8))
})

test_that("zero and one rows of new data: that many predictions, shaped as predict.lm's", {
  set.seed(6)
  x <- matrix(rnorm(300), 100, 3)
  y <- x[, 1] + rnorm(100)
  ref <- stats::lm(y ~ x)
  ridge <- rff_ridge(x, y, D = 20, progress = FALSE)
  multi <- rff_ridge(x, cbind(a = y, b = -y), D = 20, progress = FALSE)
  path <- rff_ridge(x, y, D = 20, lambda = c(0.1, 0.01), progress = FALSE)
  form <- rff_ridge(mpg ~ ., mtcars, D = 20, progress = FALSE)
  bin <- rff_glm(x, y > 0, D = 20, progress = FALSE)
  mult <- rff_glm(Species ~ ., iris, D = 20, progress = FALSE)
  pois <- rff_glm(x, rpois(100, exp(x[, 1] / 2)), family = "poisson", D = 20, progress = FALSE)
  cv <- rff_cv(x, y, D = 20, folds = 3, progress = FALSE)
  for (k in 0:1) {
    rows <- seq_len(k)
    nd <- x[rows, , drop = FALSE]
    # one row predicts as it does among others
    expect_equal(unname(predict(ridge, nd)), unname(predict(ridge, x)[rows]))
    expect_type(predict(ridge, nd), "double")
    iv <- predict(ridge, nd, interval = "prediction")
    lmiv <- predict(ref, data.frame(x = I(nd)), interval = "prediction")
    expect_identical(dim(iv), dim(lmiv))
    expect_identical(colnames(iv), colnames(lmiv))
    expect_equal(unname(iv), unname(predict(ridge, x, interval = "prediction")[rows, , drop = FALSE]))
    se <- predict(ridge, nd, se.fit = TRUE)
    expect_named(se, names(predict(ref, data.frame(x = I(nd)), se.fit = TRUE)))
    expect_length(se$se.fit, k)
    expect_identical(dim(predict(multi, nd)), c(k, 2L))
    expect_identical(dim(predict(path, nd, lambda = c(0.1, 0.01))), c(k, 2L))
    pg <- predict(bin, nd, lambda = bin$lambda[1:2], type = "class")
    expect_identical(dim(pg), c(k, 2L))
    expect_length(predict(form, mtcars[rows, ]), k)
    expect_equal(unname(predict(form, mtcars[rows, ])), unname(predict(form, mtcars)[rows]))
    for (type in c("link", "response")) {
      expect_equal(unname(predict(bin, nd, type = type)), unname(predict(bin, x, type = type)[rows]))
      expect_equal(unname(predict(pois, nd, type = type)),
                   unname(predict(pois, x, type = type)[rows]))
      pm <- predict(mult, iris[rows, ], type = type)
      expect_identical(dim(pm), c(k, 3L))
      expect_identical(colnames(pm), levels(iris$Species))
    }
    pc <- predict(bin, nd, type = "class")
    expect_s3_class(pc, "factor")
    expect_length(pc, k)
    expect_identical(levels(predict(mult, iris[rows, ], type = "class")), levels(iris$Species))
    expect_length(predict(cv, nd), k)
    expect_equal(unname(predict(cv, nd, lambda = "1se")), unname(predict(cv, x, lambda = "1se")[rows]))
  }
  # features through a map, for every kind of map: zero rows, D columns
  maps <- list(rff_map(3, D = 10), rff_map(3, D = 10, variant = "phase"),
               rff_map(3, D = 10, sampler = "orthogonal"),
               rff_map(3, D = 10, kernel = "polynomial"), rff_map(3, D = 10, kernel = "arccos"),
               attr(rff_features(x, D = 10, sampler = "nystrom"), "rff_map"))
  for (m in maps) {
    Z <- rff_features(x[0, ], map = m)
    expect_identical(dim(Z), c(0L, m$D))
    expect_type(unclass(Z), "double")
  }
  # drawing a map from zero rows is still refused
  expect_rff_error(rff_features(x[0, ], D = 10), "x", "at least one row")
  expect_rff_error(rff_ridge(x[0, ], y[0], D = 10), "x", "at least one row")
})
