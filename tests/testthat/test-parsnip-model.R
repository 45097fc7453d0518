# The parsnip model rff_model() with engine "rff" (R/parsnip-model.R).

# loading recipes (through parsnip's and workflows' dependencies) can warn
# that the time zone cannot be read on machines without systemd
suppressWarnings(requireNamespace("parsnip", quietly = TRUE))
suppressWarnings(requireNamespace("recipes", quietly = TRUE))
skip_if_not_installed("parsnip")

test_that("regression: parsnip's fit and .pred equal the direct rff_ridge()", {
  spec <- rff_model(mode = "regression", D = 40, penalty = 0.01)
  expect_s3_class(spec, c("rff_model", "model_spec"))
  train <- MASS::Boston[1:150, c("medv", "lstat", "rm", "crim")]
  test <- MASS::Boston[151:170, ]
  set.seed(41)
  pf <- parsnip::fit(spec, medv ~ lstat + rm + crim, data = train)
  expect_s3_class(pf$fit, "rff_ridge")
  p <- predict(pf, new_data = test)
  expect_s3_class(p, "tbl_df")
  expect_named(p, ".pred")
  expect_type(p$.pred, "double")
  set.seed(41)
  direct <- rff_ridge(as.matrix(train[c("lstat", "rm", "crim")]), train$medv, D = 40,
                      lambda = 0.01, progress = FALSE)
  expect_equal(p$.pred, unname(predict(direct, as.matrix(test[c("lstat", "rm", "crim")]))))
  # NULL arguments keep rff's defaults: lambda by leave-one-out
  set.seed(42)
  auto <- parsnip::fit(rff_model(mode = "regression", D = 20, lengthscale = 2), mpg ~ ., mtcars)
  expect_identical(auto$fit$criterion, "LOO")
  expect_equal(auto$fit$map$lengthscale, 2)
})

test_that("classification: .pred_class and .pred_<level> equal the direct rff_glm()", {
  d <- droplevels(iris[51:150, ])
  idx <- c(1:40, 51:90)
  spec <- rff_model(mode = "classification", D = 30, penalty = 1e-3, lengthscale = 1.5)
  set.seed(43)
  pf <- parsnip::fit(spec, Species ~ ., data = d[idx, ])
  expect_identical(pf$fit$family, "binomial")
  pc <- predict(pf, d[-idx, ], type = "class")
  pp <- predict(pf, d[-idx, ], type = "prob")
  expect_named(pc, ".pred_class")
  expect_s3_class(pc$.pred_class, "factor")
  expect_identical(levels(pc$.pred_class), levels(d$Species))
  expect_named(pp, c(".pred_versicolor", ".pred_virginica"))
  set.seed(43)
  direct <- rff_glm(as.matrix(d[idx, 1:4]), d$Species[idx], D = 30, lambda = 1e-3,
                    lengthscale = 1.5, progress = FALSE)
  pr <- predict(direct, as.matrix(d[-idx, 1:4]), type = "response")
  expect_equal(pp$.pred_virginica, unname(pr))
  expect_equal(pp$.pred_versicolor + pp$.pred_virginica, rep(1, 20))
  expect_identical(pc$.pred_class,
                   unname(predict(direct, as.matrix(d[-idx, 1:4]), type = "class")))
  set.seed(44)
  m <- parsnip::fit(rff_model(mode = "classification", D = 30, penalty = 1e-3), Species ~ .,
                    data = iris)
  expect_identical(m$fit$family, "multinomial")
  pm <- predict(m, iris[c(1, 51, 101), ], type = "prob")
  expect_named(pm, paste0(".pred_", levels(iris$Species)))
  expect_equal(rowSums(as.matrix(pm)), rep(1, 3))
})

test_that("inside a workflow with a recipe: fit and predict on new data", {
  skip_if_not_installed("workflows")
  skip_if_not_installed("recipes")
  train <- MASS::Boston[1:150, c("medv", "lstat", "rm", "crim")]
  test <- MASS::Boston[151:170, c("medv", "lstat", "rm", "crim")]
  rec <- recipes::step_normalize(recipes::recipe(medv ~ ., data = train),
                                 recipes::all_numeric_predictors())
  wf <- workflows::add_model(workflows::add_recipe(workflows::workflow(), rec),
                             rff_model(mode = "regression", D = 40, penalty = 0.01,
                                       lengthscale = 2))
  set.seed(45)
  wfit <- parsnip::fit(wf, data = train)
  p <- predict(wfit, new_data = test)
  expect_named(p, ".pred")
  expect_identical(nrow(p), 20L)
  # the same by hand: the recipe's standardization, then rff_ridge()
  X <- as.matrix(train[-1])
  Xs <- scale(X)
  set.seed(45)
  direct <- rff_ridge(Xs, train$medv, D = 40, lambda = 0.01, lengthscale = 2, progress = FALSE)
  Xt <- scale(as.matrix(test[-1]), attr(Xs, "scaled:center"), attr(Xs, "scaled:scale"))
  expect_equal(p$.pred, unname(predict(direct, Xt)), tolerance = 1e-10)
})

test_that("tune() placeholders, update() and the tunable arguments", {
  skip_if_not_installed("hardhat")
  spec <- rff_model(mode = "regression", penalty = hardhat::tune(),
                    lengthscale = hardhat::tune(), D = 30)
  tn <- generics::tunable(spec)
  expect_setequal(tn$name, c("penalty", "lengthscale", "D"))
  up <- update(spec, penalty = 0.1, lengthscale = 3)
  expect_equal(rlang::eval_tidy(up$args$penalty), 0.1)
  expect_equal(rlang::eval_tidy(up$args$lengthscale), 3)
  fin <- update(spec, parameters = data.frame(penalty = 0.05, lengthscale = 1.2))
  set.seed(46)
  f <- parsnip::fit(fin, mpg ~ wt + hp, data = mtcars)
  expect_equal(f$fit$lambda, 0.05)
  expect_equal(f$fit$map$lengthscale, 1.2)
})

test_that("bad arguments are rff_errors naming the argument", {
  expect_rff_error(rff_model(mode = "clustering"), "mode")
  expect_rff_error(rff_model(engine = "kernlab"), "engine")
  expect_rff_error(rff_model(penalty = -1), "penalty")
  expect_rff_error(rff_model(lengthscale = 0), "lengthscale")
  expect_rff_error(rff_model(D = 0), "D")
})
