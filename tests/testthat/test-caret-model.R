# The caret custom model rff_caret() (R/caret-model.R).

suppressWarnings(requireNamespace("caret", quietly = TRUE))
skip_if_not_installed("caret")

test_that("the list has what caret needs", {
  m <- rff_caret()
  expect_true(all(c("library", "type", "parameters", "grid", "fit", "predict", "prob",
                    "sort", "levels", "varImp") %in% names(m)))
  expect_identical(m$type, c("Regression", "Classification"))
  expect_identical(rff_caret("regression")$type, "Regression")
  expect_identical(m$parameters$parameter, c("lengthscale", "lambda"))
  x <- scale(as.matrix(mtcars[c("wt", "hp")]))
  g <- m$grid(x, mtcars$mpg, len = 3)
  expect_identical(nrow(g), 9L)
  expect_equal(sort(unique(g$lengthscale)),
               rff_median_lengthscale(x) * c(0.5, 1, 2))
  set.seed(51)
  r <- m$grid(x, mtcars$mpg, len = 4, search = "random")
  expect_identical(nrow(r), 4L)
  expect_true(all(r$lambda >= 1e-4 & r$lambda <= 0.1))
})

test_that("caret::train with 3-fold CV tunes a ridge fit; predictions are the direct call's", {
  x <- MASS::Boston[1:150, c("lstat", "rm", "crim")]
  y <- MASS::Boston$medv[1:150]
  set.seed(52)
  tr <- caret::train(x, y, method = rff_caret(D = 30), tuneLength = 2,
                     trControl = caret::trainControl(method = "cv", number = 3))
  expect_identical(nrow(tr$results), 4L)
  expect_true(all(c("lengthscale", "lambda", "RMSE") %in% names(tr$results)))
  fm <- tr$finalModel
  expect_s3_class(fm, "rff_ridge")
  expect_equal(fm$lambda, tr$bestTune$lambda)
  nd <- MASS::Boston[151:170, c("lstat", "rm", "crim")]
  direct <- rff_ridge(as.matrix(x), y, lambda = tr$bestTune$lambda, map = fm$map,
                      progress = FALSE)
  expect_equal(unname(predict(tr, nd)), unname(predict(direct, as.matrix(nd))))
  set.seed(53)
  vi <- caret::varImp(tr, scale = FALSE)$importance
  expect_identical(rownames(vi), c("lstat", "rm", "crim"))
  # lstat and rm carry most of the signal in the Boston data; crim less
  expect_gt(vi["lstat", "Overall"], vi["crim", "Overall"])
})

test_that("caret::train classifies with class probabilities", {
  d <- droplevels(iris[51:150, ])
  set.seed(54)
  tr <- caret::train(d[1:4], d$Species, method = rff_caret(D = 20),
                     tuneGrid = expand.grid(lengthscale = c(1, 2), lambda = 1e-3),
                     trControl = caret::trainControl(method = "cv", number = 3,
                                                     classProbs = TRUE))
  expect_s3_class(tr$finalModel, "rff_glm")
  p <- predict(tr, d[1:10, 1:4], type = "prob")
  expect_named(p, levels(d$Species))
  direct <- rff_glm(as.matrix(d[1:4]), d$Species, lambda = 1e-3, map = tr$finalModel$map,
                    progress = FALSE)
  expect_equal(p$virginica, unname(predict(direct, as.matrix(d[1:10, 1:4]), type = "response")))
  cls <- predict(tr, d[1:10, 1:4])
  expect_s3_class(cls, "factor")
  expect_identical(as.character(cls),
                   as.character(predict(direct, as.matrix(d[1:10, 1:4]), type = "class")))
})

test_that("bad arguments are rff_errors naming the argument", {
  expect_rff_error(rff_caret("cluster"), "type")
  expect_rff_error(rff_caret(D = -2), "D")
  expect_rff_error(rff_caret(lambda = 1), "...", "`lambda`")
  expect_rff_error(rff_caret(2), "type")
  fit <- rff_ridge(as.matrix(mtcars[c("wt", "hp")]), mtcars$mpg, D = 10, lambda = 0.1)
  expect_rff_error(rff_caret()$varImp(fit), "object")
})

test_that("caret's predict() of zero and one rows gives that many predictions", {
  set.seed(58)
  tr <- caret::train(mtcars[, 2:4], mtcars$mpg, method = rff_caret(D = 20),
                     tuneGrid = data.frame(lengthscale = 2, lambda = 1e-3),
                     trControl = caret::trainControl(method = "none"))
  tc <- caret::train(iris[, 1:4], iris$Species, method = rff_caret(D = 20),
                     tuneGrid = data.frame(lengthscale = 2, lambda = 1e-3),
                     trControl = caret::trainControl(method = "none", classProbs = TRUE))
  for (k in 0:1) {
    rows <- seq_len(k)
    p <- predict(tr, mtcars[rows, 2:4])
    expect_type(p, "double")
    expect_equal(unname(p), unname(predict(tr$finalModel, as.matrix(mtcars[rows, 2:4]))))
    pc <- predict(tc, iris[rows, 1:4])
    expect_s3_class(pc, "factor")
    expect_length(pc, k)
    expect_identical(levels(pc), levels(iris$Species))
    pp <- predict(tc, iris[rows, 1:4], type = "prob")
    expect_identical(dim(pp), c(k, 3L))
    expect_named(pp, levels(iris$Species))
  }
})
