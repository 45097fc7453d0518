# A damaged fit never predicts: every field predict() reads is required
# under its exact name, the class must match the fields, and a GLM's family,
# levels and coefficient shape must agree (check_fit()).

fits <- local({
  set.seed(11)
  x <- as.matrix(iris[, 1:4])
  list(
    x = x,
    ridge = rff_ridge(x[, 2:4], iris$Sepal.Length, D = 40, lengthscale = 1, progress = FALSE),
    formula = rff_ridge(Sepal.Length ~ ., iris, D = 40, lengthscale = 1, progress = FALSE),
    multi = rff_glm(Species ~ ., iris, D = 40, lengthscale = 1, progress = FALSE),
    binom = rff_glm(x, factor(iris$Species == "setosa"), D = 40, lengthscale = 1,
                    progress = FALSE),
    pois = rff_glm(x, rpois(150, 3), family = "poisson", D = 40, lengthscale = 1,
                   progress = FALSE)
  )
})

test_that("the undamaged fits predict z(x)'B + a0 on standardized rows", {
  f <- fits$ridge
  x <- fits$x[1:5, 2:4]
  xs <- scale(x, f$standardize$center, f$standardize$scale)
  Z <- rff_features(xs, map = f$map)
  expect_equal(unname(predict(f, x)),
               unname(drop(Z %*% f$coefficients[, f$best] + f$intercept[f$best])))
  g <- fits$binom
  xs <- scale(fits$x[1:5, ], g$standardize$center, g$standardize$scale)
  Z <- rff_features(xs, map = g$map)
  expect_equal(unname(predict(g, fits$x[1:5, ], type = "link")),
               unname(drop(Z %*% g$coefficients[, g$best] + g$intercept[g$best])))
})

test_that("a fit without its standardization (or any field predict() reads) is refused", {
  cases <- list(
    list(fits$ridge, fits$x[1:3, 2:4], c("standardize", "map", "lambda", "best",
                                         "coefficients", "intercept", "has_offset", "xnames")),
    list(fits$formula, iris[1:3, ], c("standardize", "terms", "xlevels", "contrasts",
                                      "ordered", "offset_arg")),
    list(fits$multi, iris[1:3, ], c("standardize", "family", "levels", "lambda",
                                    "has_intercept", "terms")),
    list(fits$binom, fits$x[1:3, ], c("standardize", "levels", "family")),
    list(fits$pois, fits$x[1:3, ], c("standardize", "family", "has_offset"))
  )
  for (cs in cases) {
    for (f in cs[[3]]) {
      t <- cs[[1]]
      expect_true(f %in% names(t), label = f)
      t[f] <- NULL
      expect_rff_error(predict(t, cs[[2]]), "object", f)
    }
  }
  # the example of the report: ridge without standardize was off by 0.058
  t <- fits$ridge
  t$standardize <- NULL
  expect_rff_error(predict(t, fits$x[1:3, 2:4]), "object", "standardize")
})

test_that("a fit without standardization keeps the field, NULL, and predicts", {
  f <- rff_ridge(fits$x[, 2:4], iris$Sepal.Length, D = 40, lengthscale = 1,
                 standardize = FALSE, progress = FALSE)
  expect_true("standardize" %in% names(f))
  expect_null(f$standardize)
  Z <- rff_features(fits$x[1:4, 2:4], map = f$map)
  expect_equal(unname(predict(f, fits$x[1:4, 2:4])),
               unname(drop(Z %*% f$coefficients[, f$best] + f$intercept[f$best])))
  # fields are read by their exact names: a look-alike does not stand in
  t <- f
  t$standardize <- NULL
  t$standardize_old <- list(center = 1, scale = 1)
  expect_rff_error(predict(t, fits$x[1:4, 2:4]), "object", "standardize")
})

test_that("GLM family, levels and coefficient shape are checked at predict()", {
  t <- fits$multi
  t$family <- "gamma"
  expect_rff_error(predict(t, iris[1:3, ]), "object", "family")
  t <- fits$binom
  t$levels <- c("a", "b", "c")
  expect_rff_error(predict(t, fits$x[1:3, ]), "object", "levels")
  t <- fits$binom
  t$family <- "multinomial"
  expect_rff_error(predict(t, fits$x[1:3, ]), "object", "multinomial")
  t <- fits$multi
  t$family <- "binomial"
  expect_rff_error(predict(t, iris[1:3, ]), "object", "binomial")
  t <- fits$pois
  t$levels <- c("a", "b")
  expect_rff_error(predict(t, fits$x[1:3, ]), "object", "Poisson")
  t <- fits$multi
  t$levels <- t$levels[c(1, 1, 2)]
  expect_rff_error(predict(t, iris[1:3, ]), "object", "levels")
  t <- fits$multi
  t$levels <- NULL
  expect_rff_error(predict(t, iris[1:3, ], type = "class"), "object", "levels")
  t <- fits$multi
  t$lambda <- NULL
  expect_rff_error(predict(t, iris[1:3, ]), "object", "lambda")
  expect_rff_error(summary(t), "object", "lambda")
})

test_that("a fit classed as another family is refused with an rff_error", {
  t <- fits$multi
  class(t) <- c("rff_ridge", "rff_fit")
  expect_rff_error(predict(t, iris[1:3, ]), "object", "family")
  t <- fits$ridge
  class(t) <- c("rff_glm", "rff_fit")
  expect_rff_error(predict(t, fits$x[1:3, 2:4]), "object", "family")
  t <- structure(unclass(fits$ridge)[1:3], class = c("rff_ridge", "rff_fit"))
  expect_rff_error(predict(t, fits$x[1:3, 2:4]), "object", "lacks the fields")
})

test_that("tidy() of damaged coefficients and bake() without the step's map are rff_errors", {
  skip_if_not_installed("generics")
  t <- fits$ridge
  t$coefficients <- t$coefficients[1:10, , drop = FALSE]
  expect_rff_error(generics::tidy(t), "x", "coefficients")
  t <- fits$multi
  t$levels <- NULL
  expect_rff_error(generics::tidy(t), "x", "levels")
  skip_if_not_installed("recipes")
  rec <- recipes::prep(step_rff(recipes::recipe(Sepal.Length ~ ., iris[, 1:4]),
                                         recipes::all_numeric_predictors(), D = 20))
  i <- which(vapply(rec$steps, inherits, NA, "step_rff"))
  rec$steps[[i]]$map <- NULL
  expect_rff_error(recipes::bake(rec, iris[1:3, 1:4]), "object", "step_rff")
})
