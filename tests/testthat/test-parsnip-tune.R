# Tuning rff_model() end to end with tune (R/parsnip-model.R): tune_grid()
# over vfold_cv() folds, collect_metrics(), select_best(),
# finalize_workflow(), last_fit(); the dials ranges; odd D.

suppressWarnings(requireNamespace("parsnip", quietly = TRUE))
suppressWarnings(requireNamespace("recipes", quietly = TRUE))
skip_if_not_installed("parsnip")
skip_if_not_installed("workflows")
skip_if_not_installed("tune")
skip_if_not_installed("rsample")
skip_if_not_installed("yardstick")
skip_if_not_installed("dials")

# Each fold's fit refitted by hand: rff_ridge() or rff_glm() on the fold's
# analysis rows through the map the tuned fit drew, at its lambda; its
# predictions on the assessment rows.
refit_fold <- function(fit, split, outcome, inputs) {
  tr <- rsample::analysis(split)
  te <- rsample::assessment(split)
  x <- as.matrix(tr[inputs])
  if (inherits(fit, "rff_glm")) {
    direct <- rff_glm(x, tr[[outcome]], map = fit$map, lambda = fit$lambda, progress = FALSE)
    p <- predict(direct, as.matrix(te[inputs]), type = "response")
  } else {
    direct <- rff_ridge(x, tr[[outcome]], map = fit$map, lambda = fit$lambda, progress = FALSE)
    p <- predict(direct, as.matrix(te[inputs]))
  }
  list(pred = unname(p), truth = te[[outcome]], row = as.integer(rsample::complement(split)))
}

test_that("the dials parameters: penalty 1e-6 to 1, D 20 to 1000, lengthscale 0.1 to 10", {
  spec <- rff_model(mode = "regression", penalty = hardhat::tune(), D = hardhat::tune(),
                    lengthscale = hardhat::tune())
  ps <- hardhat::extract_parameter_set_dials(spec)
  rng <- lapply(ps$object, function(o) unname(unlist(o$range)))
  names(rng) <- ps$name
  expect_equal(rng$penalty, c(-6, 0))
  expect_equal(rng$D, c(20, 1000))
  expect_equal(rng$lengthscale, c(-1, 1))
  # the median heuristic on standardized inputs (p = 4 and 13) lies
  # inside the lengthscale range
  for (p in list(iris[1:4], MASS::Boston[-14])) {
    med <- rff_median_lengthscale(scale(as.matrix(p)))
    expect_true(med > 10^rng$lengthscale[1L] && med < 10^rng$lengthscale[2L])
  }
  # a regular grid of 3 levels: the ends of the ranges, and their midpoints
  g <- dials::grid_regular(ps, levels = 3)
  expect_setequal(unique(g$penalty), 10^c(-6, -3, 0))
  expect_setequal(unique(g$D), c(20, 510, 1000))
  expect_setequal(unique(g$lengthscale), c(0.1, 1, 10))
})

test_that("an odd D is rounded up to an even one for the pair variant", {
  set.seed(71)
  f <- parsnip::fit(rff_model(mode = "regression", D = 21, penalty = 0.01, lengthscale = 2),
                    mpg ~ wt + hp, data = mtcars)
  expect_identical(f$fit$map$D, 22L)
  set.seed(71)
  direct <- rff_ridge(as.matrix(mtcars[c("wt", "hp")]), mtcars$mpg, D = 22, lambda = 0.01,
                      lengthscale = 2, progress = FALSE)
  expect_equal(predict(f, mtcars)$.pred, unname(predict(direct, as.matrix(mtcars[c("wt", "hp")]))))
  # the phase variant takes it as it is
  ph <- parsnip::set_engine(rff_model(mode = "regression", D = 21, penalty = 0.01), "rff",
                            variant = "phase")
  expect_identical(parsnip::fit(ph, mpg ~ wt + hp, data = mtcars)$fit$map$D, 21L)
  expect_rff_error(rff_parsnip_fit(as.matrix(mtcars[2:3]), mtcars$mpg, D = 2.5), "D")
})

test_that("regression: tune_grid() over penalty, D and lengthscale, to last_fit()", {
  d <- MASS::Boston[1:150, c("medv", "lstat", "rm", "crim")]
  inputs <- c("lstat", "rm", "crim")
  spec <- rff_model(mode = "regression", penalty = hardhat::tune(), D = hardhat::tune(),
                    lengthscale = hardhat::tune())
  wf <- workflows::add_model(workflows::add_formula(workflows::workflow(),
                                                     medv ~ lstat + rm + crim), spec)
  grid <- expand.grid(penalty = c(1e-3, 0.3), D = c(20L, 40L), lengthscale = c(1, 3))
  set.seed(72)
  folds <- rsample::vfold_cv(d, v = 3)
  ctrl <- tune::control_grid(save_pred = TRUE, extract = parsnip::extract_fit_engine)
  res <- tune::tune_grid(wf, folds, grid = grid, metrics = yardstick::metric_set(yardstick::rmse),
                         control = ctrl)
  expect_identical(nrow(tune::collect_notes(res)), 0L)
  met <- tune::collect_metrics(res)
  expect_identical(nrow(met), nrow(grid))
  # every fold's fit has its candidate's parameters, and predicts its
  # assessment rows as rff_ridge() fitted on its analysis rows does
  ex <- tune::collect_extracts(res)
  expect_identical(nrow(ex), 3L * nrow(grid))
  by_hand <- do.call(rbind, lapply(seq_len(nrow(ex)), function(i) {
    fit <- ex$.extracts[[i]]
    expect_equal(fit$lambda, ex$penalty[i])
    expect_identical(fit$map$D, ex$D[i])
    expect_equal(fit$map$lengthscale, ex$lengthscale[i])
    split <- folds$splits[[match(ex$id[i], folds$id)]]
    r <- refit_fold(fit, split, "medv", inputs)
    saved <- tune::collect_predictions(res, summarize = FALSE)
    saved <- saved[saved$id == ex$id[i] & saved$.config == ex$.config[i], ]
    expect_equal(saved$.pred[order(saved$.row)], r$pred[order(r$row)], tolerance = 1e-10)
    data.frame(.config = ex$.config[i], id = ex$id[i], rmse = sqrt(mean((r$pred - r$truth)^2)))
  }))
  # collect_metrics(): the mean over the folds of each fold's RMSE, and its
  # standard error
  agg <- aggregate(rmse ~ .config, by_hand, function(v) c(mean(v), sd(v) / sqrt(length(v))))
  agg <- agg[match(met$.config, agg$.config), ]
  expect_equal(met$mean, agg$rmse[, 1L], tolerance = 1e-10)
  expect_equal(met$std_err, agg$rmse[, 2L], tolerance = 1e-10)
  # select_best(): the candidate of the smallest mean RMSE
  best <- tune::select_best(res, metric = "rmse")
  expect_identical(best$.config, met$.config[which.min(met$mean)])
  # the finalized workflow fits as rff_ridge() does with those parameters
  final <- tune::finalize_workflow(wf, best)
  set.seed(73)
  ff <- parsnip::fit(final, d)
  set.seed(73)
  direct <- rff_ridge(as.matrix(d[inputs]), d$medv, lambda = best$penalty, D = best$D,
                      lengthscale = best$lengthscale, progress = FALSE)
  expect_equal(predict(ff, d)$.pred, unname(predict(direct, as.matrix(d[inputs]))))
  # last_fit(): fitted on the training rows, its metric on the test rows
  set.seed(74)
  split <- rsample::initial_split(d, prop = 0.8)
  lf <- tune::last_fit(final, split, metrics = yardstick::metric_set(yardstick::rmse))
  fit <- workflows::extract_fit_engine(lf$.workflow[[1L]])
  expect_equal(fit$lambda, best$penalty)
  r <- refit_fold(fit, split, "medv", inputs)
  lp <- tune::collect_predictions(lf)
  expect_equal(lp$.pred[order(lp$.row)], r$pred[order(r$row)], tolerance = 1e-10)
  expect_equal(tune::collect_metrics(lf)$.estimate, sqrt(mean((r$pred - r$truth)^2)),
               tolerance = 1e-10)
})

test_that("classification: tune_grid() with accuracy and log-loss, to last_fit()", {
  d <- droplevels(iris[51:150, ])
  inputs <- names(d)[1:4]
  spec <- rff_model(mode = "classification", penalty = hardhat::tune(), D = hardhat::tune(),
                    lengthscale = hardhat::tune())
  wf <- workflows::add_model(workflows::add_formula(workflows::workflow(), Species ~ .), spec)
  grid <- expand.grid(penalty = c(1e-3, 0.1), D = c(20L, 30L), lengthscale = c(1, 3))
  set.seed(75)
  folds <- rsample::vfold_cv(d, v = 3, strata = Species)
  ms <- yardstick::metric_set(yardstick::accuracy, yardstick::mn_log_loss)
  ctrl <- tune::control_grid(save_pred = TRUE, extract = parsnip::extract_fit_engine)
  res <- tune::tune_grid(wf, folds, grid = grid, metrics = ms, control = ctrl)
  expect_identical(nrow(tune::collect_notes(res)), 0L)
  met <- tune::collect_metrics(res)
  saved <- tune::collect_predictions(res, summarize = FALSE)
  ex <- tune::collect_extracts(res)
  by_hand <- do.call(rbind, lapply(seq_len(nrow(ex)), function(i) {
    fit <- ex$.extracts[[i]]
    expect_identical(fit$family, "binomial")
    expect_equal(fit$lambda, ex$penalty[i])
    expect_identical(fit$map$D, ex$D[i])
    split <- folds$splits[[match(ex$id[i], folds$id)]]
    r <- refit_fold(fit, split, "Species", inputs)
    s <- saved[saved$id == ex$id[i] & saved$.config == ex$.config[i], ]
    s <- s[order(s$.row), ]
    # (a GLM refit converges to the tolerance, not to the last digit)
    expect_equal(s$.pred_virginica, r$pred[order(r$row)], tolerance = 1e-4)
    # the metrics of the saved predictions, by hand: the share of right
    # classes (the threshold 0.5) and the
    # mean negative log-likelihood
    truth <- s$Species == "virginica"
    p <- s$.pred_virginica
    expect_identical(as.character(s$.pred_class), ifelse(p > 0.5, "virginica", "versicolor"))
    data.frame(.config = ex$.config[i], acc = mean((p > 0.5) == truth),
               ll = -mean(ifelse(truth, log(p), log(1 - p))))
  }))
  agg <- aggregate(cbind(acc, ll) ~ .config, by_hand, mean)
  acc <- met[met$.metric == "accuracy", ]
  ll <- met[met$.metric == "mn_log_loss", ]
  expect_equal(acc$mean, agg$acc[match(acc$.config, agg$.config)], tolerance = 1e-10)
  expect_equal(ll$mean, agg$ll[match(ll$.config, agg$.config)], tolerance = 1e-10)
  best <- tune::select_best(res, metric = "mn_log_loss")
  expect_identical(best$.config, ll$.config[which.min(ll$mean)])
  final <- tune::finalize_workflow(wf, best)
  set.seed(76)
  ff <- parsnip::fit(final, d)
  set.seed(76)
  direct <- rff_glm(as.matrix(d[inputs]), d$Species, lambda = best$penalty, D = best$D,
                    lengthscale = best$lengthscale, progress = FALSE)
  expect_equal(predict(ff, d, type = "prob")$.pred_virginica,
               unname(predict(direct, as.matrix(d[inputs]), type = "response")))
  set.seed(77)
  split <- rsample::initial_split(d, prop = 0.8, strata = Species)
  lf <- tune::last_fit(final, split, metrics = ms)
  fit <- workflows::extract_fit_engine(lf$.workflow[[1L]])
  r <- refit_fold(fit, split, "Species", inputs)
  lp <- tune::collect_predictions(lf)
  lp <- lp[order(lp$.row), ]
  expect_equal(lp$.pred_virginica, r$pred[order(r$row)], tolerance = 1e-4)
  lm <- tune::collect_metrics(lf)
  truth <- lp$Species == "virginica"
  expect_equal(lm$.estimate[lm$.metric == "accuracy"], mean((lp$.pred_virginica > 0.5) == truth),
               tolerance = 1e-10)
})

test_that("step_rff()'s D and lengthscale tune in a workflow", {
  d <- MASS::Boston[1:150, c("medv", "lstat", "rm", "crim")]
  rec <- recipes::step_normalize(recipes::recipe(medv ~ ., data = d),
                                 recipes::all_numeric_predictors())
  rec <- step_rff(rec, recipes::all_numeric_predictors(), D = hardhat::tune(),
                  lengthscale = hardhat::tune())
  wf <- workflows::add_model(workflows::add_recipe(workflows::workflow(), rec),
                             parsnip::linear_reg())
  ps <- hardhat::extract_parameter_set_dials(wf)
  expect_setequal(ps$name, c("D", "lengthscale"))
  grid <- data.frame(D = c(10L, 21L), lengthscale = c(1, 3))
  set.seed(78)
  folds <- rsample::vfold_cv(d, v = 3)
  ctrl <- tune::control_grid(save_pred = TRUE,
                             extract = function(w) workflows::extract_recipe(w)$steps[[2L]]$map)
  res <- tune::tune_grid(wf, folds, grid = grid, metrics = yardstick::metric_set(yardstick::rmse),
                         control = ctrl)
  expect_identical(nrow(tune::collect_notes(res)), 0L)
  ex <- tune::collect_extracts(res)
  # the odd D rounded up to an even one; the lengthscale as given
  maps <- ex$.extracts
  expect_identical(vapply(maps, `[[`, 0L, "D"), ifelse(ex$D == 21L, 22L, ex$D))
  expect_equal(vapply(maps, `[[`, 0, "lengthscale"), ex$lengthscale)
  # each fold's RMSE by hand from lm() on the fold's features
  met <- tune::collect_metrics(res)
  by_hand <- vapply(seq_len(nrow(ex)), function(i) {
    split <- folds$splits[[match(ex$id[i], folds$id)]]
    tr <- rsample::analysis(split)
    te <- rsample::assessment(split)
    xs <- scale(as.matrix(tr[-1]))
    xt <- scale(as.matrix(te[-1]), attr(xs, "scaled:center"), attr(xs, "scaled:scale"))
    Z <- rff_features(xs, map = maps[[i]])
    b <- stats::lm.fit(cbind(1, Z), tr$medv)$coefficients
    b[is.na(b)] <- 0
    p <- cbind(1, rff_features(xt, map = maps[[i]])) %*% b
    sqrt(mean((te$medv - p)^2))
  }, 0)
  agg <- tapply(by_hand, ex$.config, mean)
  expect_equal(met$mean, as.vector(agg[met$.config]), tolerance = 1e-8)
})
