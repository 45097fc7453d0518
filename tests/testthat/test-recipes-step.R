# The recipes step step_rff() (R/recipes-step.R).

# loading recipes can warn that the time zone cannot be read (machines
# without systemd); that is no concern of these tests
suppressWarnings(requireNamespace("recipes", quietly = TRUE))
skip_if_not_installed("recipes")

boston <- function() {
  d <- MASS::Boston[c(1:60, 300:359), c("medv", "lstat", "rm", "crim", "chas")]
  d$chas <- factor(d$chas)
  d
}

test_that("prep draws the map from the training rows; bake applies that map", {
  d <- boston()
  train <- d[1:90, ]
  test <- d[91:120, ]
  rec <- recipes::recipe(medv ~ ., data = train)
  rec <- step_rff(rec, lstat, rm, crim, D = 16, kernel = "matern", nu = 2.5)
  set.seed(31)
  p <- recipes::prep(rec, training = train)
  st <- p$steps[[1L]]
  expect_true(st$trained)
  expect_s3_class(st$map, "rff_map")
  # "median" resolved on the training rows and kept in the map
  expect_equal(st$map$lengthscale,
               rff_median_lengthscale(as.matrix(train[c("lstat", "rm", "crim")])))
  # the same draws as rff_features() after the same seed
  set.seed(31)
  Z <- rff_features(as.matrix(train[c("lstat", "rm", "crim")]), D = 16, kernel = "matern",
                    nu = 2.5, lengthscale = "median")
  expect_equal(st$map$omega, attr(Z, "rff_map")$omega)
  b <- recipes::bake(p, new_data = test)
  expect_s3_class(b, "tbl_df")
  expect_identical(names(b), c("chas", "medv", sprintf("rff_%02d", 1:16)))
  expect_true(all(vapply(b[sprintf("rff_%02d", 1:16)], is.double, TRUE)))
  Zt <- rff_features(as.matrix(test[c("lstat", "rm", "crim")]), map = st$map)
  expect_equal(unname(as.matrix(b[sprintf("rff_%02d", 1:16)])), unname(unclass(Zt)[, ]),
               ignore_attr = TRUE)
  # baking again uses the same map: identical features
  expect_identical(recipes::bake(p, new_data = test), b)
  tr <- recipes::bake(p, new_data = NULL)
  expect_identical(nrow(tr), 90L)
  kept <- recipes::prep(step_rff(recipes::recipe(medv ~ ., data = train), lstat, D = 4,
                                 lengthscale = 2, keep_original_cols = TRUE), train)
  kb <- recipes::bake(kept, test)
  expect_true(all(c("lstat", "rff_1", "rff_4") %in% names(kb)))
  expect_equal(kept$steps[[1L]]$map$lengthscale, 2)
})

test_that("a recipe with step_rff and a ridge fit predicts as the direct call", {
  d <- boston()
  train <- d[1:90, ]
  test <- d[91:120, ]
  rec <- recipes::recipe(medv ~ lstat + rm + crim, data = train)
  rec <- recipes::step_normalize(rec, recipes::all_numeric_predictors())
  rec <- step_rff(rec, recipes::all_numeric_predictors(), D = 40, lengthscale = 1.5)
  set.seed(32)
  p <- recipes::prep(rec, training = train)
  rff_cols <- function(b) as.matrix(b[startsWith(names(b), "rff_")])
  Ztr <- rff_cols(recipes::bake(p, new_data = NULL))
  Zte <- rff_cols(recipes::bake(p, new_data = test))
  # the same pipeline by hand: standardize with the training moments,
  # featurize through the step's map, least squares, predict
  X <- as.matrix(train[c("lstat", "rm", "crim")])
  mu <- colMeans(X)
  sdv <- apply(X, 2, sd)
  map <- p$steps[[2L]]$map
  Zd <- unclass(rff_features(scale(X, mu, sdv), map = map))[, ]
  Zdt <- unclass(rff_features(scale(as.matrix(test[c("lstat", "rm", "crim")]), mu, sdv),
                              map = map))[, ]
  expect_equal(unname(Zte), unname(Zdt), ignore_attr = TRUE, tolerance = 1e-12)
  b_rec <- lm.fit(cbind(1, Ztr), train$medv)$coefficients
  b_dir <- lm.fit(cbind(1, Zd), train$medv)$coefficients
  expect_equal(unname(drop(cbind(1, Zte) %*% b_rec)), unname(drop(cbind(1, Zdt) %*% b_dir)),
               tolerance = 1e-8)
})

test_that("tidy, tunable, print and required_pkgs of the step", {
  d <- boston()
  rec <- step_rff(recipes::recipe(medv ~ ., data = d), lstat, rm, D = 10, id = "rff_a")
  t0 <- recipes::tidy(rec, number = 1)
  expect_named(t0, c("terms", "D", "kernel", "lengthscale", "variant", "id"))
  expect_identical(t0$terms, c("lstat", "rm"))
  expect_identical(t0$id, c("rff_a", "rff_a"))
  set.seed(33)
  p <- recipes::prep(rec, d)
  t1 <- recipes::tidy(p, number = 1)
  expect_identical(t1$terms, c("lstat", "rm"))
  expect_identical(t1$D, c(10L, 10L))
  expect_equal(t1$lengthscale, rep(p$steps[[1]]$map$lengthscale, 2))
  tu <- generics::tunable(rec$steps[[1L]])
  expect_identical(tu$name, c("D", "lengthscale"))
  expect_identical(tu$component, c("step_rff", "step_rff"))
  expect_identical(tu$component_id, c("rff_a", "rff_a"))
  expect_identical(generics::required_pkgs(rec$steps[[1L]]), "rff")
  out <- capture.output(print(p$steps[[1L]]), type = "message")
  expect_length(out, 1L)
  expect_match(out, "Random Fourier features (D = 10) from: lstat and rm | Trained", fixed = TRUE)
  # tune() placeholders are kept until a tuning grid replaces them
  skip_if_not_installed("hardhat")
  rt <- step_rff(recipes::recipe(medv ~ ., data = d), lstat, D = hardhat::tune(),
                 lengthscale = hardhat::tune())
  expect_identical(rt$steps[[1L]]$D, quote(tune()))
  # an odd D for the pair variant is rounded up (tuning grids)
  p5 <- recipes::prep(step_rff(recipes::recipe(medv ~ ., data = d), lstat, D = 5), d)
  expect_identical(p5$steps[[1]]$map$D, 6L)
})

# recipes wraps the errors of a step's prep() and bake(): the rff_error is
# the condition's parent.
expect_step_rff_error <- function(expr, arg, pattern = paste0("`", arg, "`")) {
  e <- tryCatch(expr, error = function(e) e)
  while (!inherits(e, "rff_error") && !is.null(e$parent)) e <- e$parent
  expect_rff_error(stop(e), arg, pattern)
}

test_that("rff_lengthscale_param() is a dials parameter on the log10 scale", {
  skip_if_not_installed("dials")
  p <- rff_lengthscale_param()
  expect_s3_class(p, "quant_param")
  expect_equal(dials::value_seq(p, 3), c(0.1, 1, 10))
  expect_equal(dials::value_seq(rff_lengthscale_param(c(0, 2)), 2), c(1, 100))
  expect_rff_error(rff_lengthscale_param(c(1, 0)), "range")
  expect_rff_error(rff_lengthscale_param("a"), "range")
})

test_that("bad arguments are rff_errors naming the argument", {
  d <- boston()
  rec <- recipes::recipe(medv ~ ., data = d)
  expect_rff_error(step_rff(d, lstat), "recipe")
  expect_rff_error(step_rff(rec, lstat, D = 0), "D")
  expect_rff_error(step_rff(rec, lstat, lengthscale = -1), "lengthscale")
  expect_rff_error(step_rff(rec, lstat, lengthscale = "auto"), "lengthscale")
  expect_rff_error(step_rff(rec, lstat, kernel = "rbf"), "kernel")
  expect_rff_error(step_rff(rec, lstat, variant = "both"), "variant")
  expect_rff_error(step_rff(rec, lstat, sampler = "sobol"), "sampler")
  expect_rff_error(step_rff(rec, lstat, prefix = ""), "prefix")
  expect_rff_error(step_rff(rec, lstat, keep_original_cols = NA), "keep_original_cols")
  expect_step_rff_error(recipes::prep(step_rff(rec, chas), d), "...", "`chas`")
  p <- recipes::prep(step_rff(rec, lstat, rm, D = 4), d)
  bad <- d
  bad$lstat[3] <- NA
  expect_step_rff_error(recipes::bake(p, bad), "new_data")
})

test_that("bake() of zero and one rows gives that many rows of the same columns", {
  d <- boston()
  rec <- step_rff(recipes::recipe(medv ~ ., data = d), lstat, rm, crim, D = 6,
                  lengthscale = 2)
  set.seed(36)
  prepped <- recipes::prep(rec, training = d)
  full <- recipes::bake(prepped, new_data = d)
  for (k in 0:1) {
    b <- recipes::bake(prepped, new_data = d[seq_len(k), ])
    expect_identical(nrow(b), k)
    expect_identical(names(b), names(full))
    expect_identical(vapply(b, function(v) class(v)[1L], ""), vapply(full, function(v) class(v)[1L], ""))
    # the row's features as among all rows: sqrt(2 / D) cos and sin of omega'x
    # (as.matrix() of a tibble of zero rows is logical: unlist() instead)
    Z <- matrix(unlist(b[paste0("rff_", 1:6)]), k, 6)
    m <- prepped$steps[[1L]]$map
    xw <- as.matrix(d[seq_len(k), c("lstat", "rm", "crim")]) %*% m$omega
    expect_type(Z, "double")
    expect_equal(Z, unname(sqrt(2 / 6) * cbind(cos(xw), sin(xw))), tolerance = 1e-12)
  }
})
