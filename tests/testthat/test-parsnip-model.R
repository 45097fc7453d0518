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

test_that("case weights reach rff_ridge() and rff_glm() as their weights", {
  skip_if_not_installed("hardhat")
  d <- MASS::Boston[1:120, c("medv", "lstat", "rm", "crim")]
  x <- as.matrix(d[-1])
  w <- rep(c(1, 2.5, 0.5), 40)
  d$w <- hardhat::importance_weights(w)
  spec <- rff_model(mode = "regression", D = 30, penalty = 0.01, lengthscale = 2)
  set.seed(47)
  pf <- parsnip::fit(spec, medv ~ lstat + rm + crim, data = d, case_weights = d$w)
  set.seed(47)
  direct <- rff_ridge(x, d$medv, D = 30, lambda = 0.01, lengthscale = 2, weights = w,
                      progress = FALSE)
  set.seed(47)
  plain <- rff_ridge(x, d$medv, D = 30, lambda = 0.01, lengthscale = 2, progress = FALSE)
  p <- predict(pf, d)$.pred
  expect_equal(p, unname(predict(direct, x)))
  expect_gt(max(abs(p - predict(plain, x))), 1e-3)
  # lambda by leave-one-out, weighted as well
  set.seed(48)
  pa <- parsnip::fit(rff_model(mode = "regression", D = 30, lengthscale = 2),
                     medv ~ lstat + rm + crim, data = d, case_weights = d$w)
  set.seed(48)
  da <- rff_ridge(x, d$medv, D = 30, lengthscale = 2, weights = w, progress = FALSE)
  expect_equal(pa$fit$lambda_best, da$lambda_best)
  # frequency weights in a workflow, for a classifier: as the direct
  # weighted rff_glm()
  skip_if_not_installed("workflows")
  b <- droplevels(iris[51:150, ])
  fw <- rep(1:4, 25)
  b$fw <- hardhat::frequency_weights(fw)
  wf <- workflows::add_case_weights(workflows::workflow(), fw)
  wf <- workflows::add_formula(wf, Species ~ Sepal.Length + Sepal.Width + Petal.Length + Petal.Width)
  wf <- workflows::add_model(wf, rff_model(mode = "classification", D = 30, penalty = 1e-3,
                                           lengthscale = 1.5))
  set.seed(49)
  wfit <- parsnip::fit(wf, b)
  set.seed(49)
  dg <- rff_glm(as.matrix(b[1:4]), b$Species, D = 30, lambda = 1e-3, lengthscale = 1.5,
                weights = fw, progress = FALSE)
  expect_equal(predict(wfit, b, type = "prob")$.pred_virginica,
               unname(predict(dg, as.matrix(b[1:4]), type = "response")), tolerance = 1e-6)
})

test_that("zero and one rows of new data give that many predictions", {
  set.seed(50)
  reg <- parsnip::fit(rff_model(mode = "regression", D = 20, penalty = 0.01, lengthscale = 2),
                      mpg ~ ., data = mtcars)
  cls <- parsnip::fit(rff_model(mode = "classification", D = 20, penalty = 0.01,
                                lengthscale = 2), Species ~ ., data = iris)
  bin <- parsnip::fit(rff_model(mode = "classification", D = 20, penalty = 0.01,
                                lengthscale = 2), Species ~ ., data = droplevels(iris[51:150, ]))
  for (k in 0:1) {
    p <- predict(reg, mtcars[seq_len(k), ])
    expect_identical(dim(p), c(k, 1L))
    expect_type(p$.pred, "double")
    expect_equal(p$.pred, unname(predict(reg$fit, as.matrix(mtcars[seq_len(k), -1]))))
    pc <- predict(cls, iris[seq_len(k), ], type = "class")
    expect_identical(nrow(pc), k)
    expect_identical(levels(pc$.pred_class), levels(iris$Species))
    pp <- predict(cls, iris[seq_len(k), ], type = "prob")
    expect_identical(dim(pp), c(k, 3L))
    expect_named(pp, paste0(".pred_", levels(iris$Species)))
    pb <- predict(bin, iris[50 + seq_len(k), ], type = "prob")
    expect_named(pb, c(".pred_versicolor", ".pred_virginica"))
    expect_identical(nrow(pb), k)
    expect_type(pb$.pred_virginica, "double")
    expect_identical(nrow(predict(bin, iris[50 + seq_len(k), ], type = "class")), k)
  }
  expect_equal(rowSums(as.matrix(predict(cls, iris[1, ], type = "prob"))), 1)
})
