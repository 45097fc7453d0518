# Reference computations in base R, from the feature matrix of rff_features().
ref_ridge <- function(Z, y, lambda, intercept) {
  n <- nrow(Z)
  if (intercept) {
    zbar <- colMeans(Z)
    Zc <- sweep(Z, 2, zbar)
    yc <- y - mean(y)
    beta <- solve(crossprod(Zc) + n * lambda * diag(ncol(Z)), crossprod(Zc, yc))
    list(beta = drop(beta), a0 = mean(y) - sum(zbar * beta))
  } else {
    list(beta = drop(solve(crossprod(Z) + n * lambda * diag(ncol(Z)), crossprod(Z, y))),
         a0 = 0)
  }
}

# GCV by brute force: the hat matrix of (1, Z) with the intercept unpenalized.
ref_gcv <- function(Z, y, lambda) {
  n <- nrow(Z)
  Zc <- sweep(Z, 2, colMeans(Z))
  vapply(lambda, function(l) {
    H <- matrix(1 / n, n, n) +
      Zc %*% solve(crossprod(Zc) + n * l * diag(ncol(Z)), t(Zc))
    df <- sum(diag(H))
    rss <- sum((y - H %*% y)^2)
    c(df = df, gcv = n * rss / (n - df)^2)
  }, numeric(2))
}

make_data <- function(n = 200, d = 3, seed = 1) {
  set.seed(seed)
  x <- matrix(rnorm(n * d), n, d)
  y <- sin(x[, 1]) + x[, 2]^2 / 2 + rnorm(n, sd = 0.2)
  list(x = x, y = y)
}

test_that("coefficients equal the base-R ridge solution, with and without intercept", {
  dat <- make_data()
  n <- nrow(dat$x)
  for (v in c("pair", "phase")) {
    m <- rff_map(3, D = 30, lengthscale = 1.5, variant = v)
    Z <- unclass(rff_features(dat$x, map = m))[, ]
    for (icpt in c(FALSE, TRUE)) for (lam in c(1e-4, 0.05)) {
      ref <- ref_ridge(Z, dat$y, lam, icpt)
      fit <- rff_ridge(dat$x, dat$y, lambda = lam, map = m, intercept = icpt,
                       progress = FALSE, standardize = FALSE)
      expect_equal(drop(fit$coefficients), ref$beta, tolerance = 1e-10)
      expect_equal(fit$intercept, ref$a0, tolerance = 1e-10)
      expect_equal(unname(fitted(fit)), drop(Z %*% ref$beta) + ref$a0, tolerance = 1e-10)
    }
  }
})

test_that("a lambda path equals single-lambda fits and brute-force GCV", {
  dat <- make_data(n = 150)
  n <- 150
  m <- rff_map(3, D = 40, lengthscale = 2)
  Z <- unclass(rff_features(dat$x, map = m))[, ]
  path <- rff_ridge(dat$x, dat$y, map = m, nlambda = 12, progress = FALSE, standardize = FALSE,
                    criterion = "gcv")
  expect_equal(path$method, "eigen")
  expect_length(path$lambda, 12)
  expect_true(all(diff(path$lambda) < 0))
  # lambda_max: trace of the centered Z'Z over n, where df < 1 (+ intercept)
  Zc <- sweep(Z, 2, colMeans(Z))
  expect_equal(path$lambda[1], sum(Zc^2) / n, tolerance = 1e-12)
  expect_lt(path$df[1], 2)
  for (i in c(1, 6, 12)) {
    one <- rff_ridge(dat$x, dat$y, lambda = path$lambda[i], map = m, progress = FALSE, standardize = FALSE)
    expect_equal(one$method, "cholesky")
    expect_equal(drop(one$coefficients), path$coefficients[, i], tolerance = 1e-8)
    expect_equal(one$intercept, path$intercept[i], tolerance = 1e-8)
    expect_equal(one$df, path$df[i], tolerance = 1e-8)
    expect_equal(one$gcv, path$gcv[i], tolerance = 1e-8)
    expect_equal(drop(path$coefficients[, i]),
                 ref_ridge(Z, dat$y, path$lambda[i], TRUE)$beta, tolerance = 1e-8)
  }
  bf <- ref_gcv(Z, dat$y, path$lambda)
  expect_equal(path$df, bf["df", ], tolerance = 1e-8)
  expect_equal(path$gcv, bf["gcv", ], tolerance = 1e-8)
  expect_equal(path$best, which.min(bf["gcv", ]))
  expect_equal(path$lambda_best, path$lambda[which.min(bf["gcv", ])])
  # a user-given vector keeps its order
  lam <- c(0.01, 1e-4, 0.1)
  fl <- rff_ridge(dat$x, dat$y, lambda = lam, map = m, progress = FALSE, standardize = FALSE)
  expect_equal(fl$lambda, lam)
  expect_equal(fl$gcv, ref_gcv(Z, dat$y, lam)["gcv", ], tolerance = 1e-8)
})

test_that("chunked and threaded streaming equals one block", {
  dat <- make_data(n = 90)
  m <- rff_map(3, D = 20, variant = "phase")
  whole <- rff_ridge(dat$x, dat$y, lambda = 1e-3, map = m, chunk_size = 1000,
                     progress = FALSE, standardize = FALSE)
  for (cs in c(1, 7, 64, 90)) {
    fit <- rff_ridge(dat$x, dat$y, lambda = 1e-3, map = m, chunk_size = cs,
                     progress = FALSE, standardize = FALSE)
    expect_equal(fit$coefficients, whole$coefficients, tolerance = 1e-12)
    expect_equal(fit$fitted.values, whole$fitted.values, tolerance = 1e-12)
  }
  big <- make_data(n = 1200)
  m2 <- rff_map(3, D = 300)
  expect_identical(rff_ridge(big$x, big$y, lambda = 0.01, map = m2, threads = 1,
                             chunk_size = 500, progress = FALSE, standardize = FALSE)$coefficients,
                   rff_ridge(big$x, big$y, lambda = 0.01, map = m2, threads = 2,
                             chunk_size = 500, progress = FALSE, standardize = FALSE)$coefficients)
  # the progress bar streams the same blocks
  expect_output(pb <- rff_ridge(dat$x, dat$y, lambda = 1e-3, map = m, chunk_size = 7,
                                progress = TRUE, standardize = FALSE), "100%")
  expect_equal(pb$coefficients, whole$coefficients, tolerance = 1e-12)
  expect_silent(rff_ridge(dat$x, dat$y, lambda = 1e-3, map = m, progress = FALSE, standardize = FALSE))
})

test_that("several responses equal separate fits", {
  dat <- make_data(n = 120)
  m <- rff_map(3, D = 24)
  Y <- cbind(a = dat$y, b = dat$x[, 3] * 10 + 100)
  fit <- rff_ridge(dat$x, Y, map = m, nlambda = 5, progress = FALSE, standardize = FALSE,
                   criterion = "gcv")
  expect_equal(dim(fit$coefficients), c(24, 2, 5))
  for (j in 1:2) {
    one <- rff_ridge(dat$x, Y[, j], lambda = fit$lambda, map = m, progress = FALSE, standardize = FALSE)
    expect_equal(fit$coefficients[, j, ], one$coefficients, tolerance = 1e-10)
    expect_equal(fit$intercept[j, ], one$intercept, tolerance = 1e-10)
    expect_equal(fit$gcv[, j], one$gcv, tolerance = 1e-10)
  }
  # one lambda for all responses: the summed GCV
  expect_equal(fit$best, which.min(rowSums(fit$gcv)))
  p <- predict(fit, dat$x[1:4, ])
  expect_equal(dim(p), c(4, 2))
  expect_equal(colnames(p), c("a", "b"))
  expect_equal(unname(p), unname(fitted(fit)[1:4, ]), tolerance = 1e-12)
  expect_equal(dim(predict(fit, dat$x[1:4, ], lambda = fit$lambda[1:3])), c(4, 2, 3))
})

test_that("exact kernel ridge regression on Boston is matched with D = 2000", {
  skip_if_not_installed("MASS")
  B <- MASS::Boston
  x <- scale(as.matrix(B[, names(B) != "medv"]))
  y <- B$medv
  set.seed(10)
  test <- sample(nrow(x), 100)
  xtr <- x[-test, ]; ytr <- y[-test]; n <- nrow(xtr)
  ls <- 4; lam <- 1e-3
  # exact KRR with an unpenalized intercept: [K + n lambda I, 1; 1', 0]
  K <- rff_kernel(xtr, lengthscale = ls)
  sol <- solve(rbind(cbind(K + n * lam * diag(n), 1), c(rep(1, n), 0)), c(ytr, 0))
  pred_exact <- drop(rff_kernel(x[test, ], xtr, lengthscale = ls) %*% sol[1:n]) + sol[n + 1]
  rmse_exact <- sqrt(mean((y[test] - pred_exact)^2))
  fit <- rff_ridge(xtr, ytr, lambda = lam, D = 2000, lengthscale = ls, progress = FALSE)
  rmse_rff <- sqrt(mean((y[test] - predict(fit, x[test, ]))^2))
  expect_lt(abs(rmse_rff / rmse_exact - 1), 0.05)
  expect_lt(rmse_exact, 5)   # a sensible fit: sd(medv) is 9.2
})

test_that("formula interface: model frame, factors, na.action, predict", {
  set.seed(4)
  d <- data.frame(u = rnorm(80), v = runif(80), g = factor(sample(c("a", "b", "c"), 80, TRUE)))
  d$y <- d$u^2 + (d$g == "b") + rnorm(80, sd = 0.1)
  d$y[5] <- NA
  m <- rff_map(4, D = 30)
  fit <- rff_ridge(y ~ u + v + g, data = d, lambda = 0.01, map = m,
                   na.action = na.exclude, progress = FALSE, standardize = FALSE)
  X <- model.matrix(~ u + v + g, d[-5, ])[, -1]
  ref <- rff_ridge(X, d$y[-5], lambda = 0.01, map = m, progress = FALSE, standardize = FALSE)
  expect_equal(fit$coefficients, ref$coefficients, tolerance = 1e-12)
  expect_equal(nobs(fit), 79)
  expect_length(residuals(fit), 80)
  expect_true(is.na(residuals(fit)[5]))
  expect_equal(unname(predict(fit, d[1:3, ])), unname(predict(ref, X[1:3, ])), tolerance = 1e-12)
  # new data with only some factor levels
  expect_length(predict(fit, data.frame(u = 0, v = 0.5, g = "c")), 1)
  # no intercept from the formula
  f0 <- rff_ridge(y ~ u + v - 1, data = d, lambda = 0.01, D = 10, progress = FALSE)
  expect_false(f0$has_intercept)
  expect_false("(Intercept)" %in% names(coef(f0)))
  expect_error(rff_ridge(y ~ u, data = d, intercept = FALSE), class = "rff_error")
  expect_error(predict(fit, data.frame(u = 1)), class = "rff_error")
  sub <- rff_ridge(y ~ u, data = d, subset = g == "a", lambda = 0.1, D = 10, progress = FALSE)
  expect_equal(nobs(sub), sum(d$g == "a" & !is.na(d$y)))
})

test_that("methods: coef, predict, fitted, residuals, summary, print, plot, saveRDS", {
  dat <- make_data(n = 100)
  fit <- rff_ridge(dat$x, dat$y, D = 20, nlambda = 8, progress = FALSE, standardize = FALSE)
  cf <- coef(fit)
  expect_equal(names(cf)[1:2], c("(Intercept)", "z1"))
  expect_equal(unname(cf), c(fit$intercept[fit$best], fit$coefficients[, fit$best]))
  expect_equal(dim(coef(fit, lambda = fit$lambda[2:3])), c(21, 2))
  expect_equal(predict(fit), fitted(fit))
  expect_equal(unname(predict(fit, dat$x)), unname(fitted(fit)), tolerance = 1e-12)
  expect_equal(residuals(fit), dat$y - fitted(fit))
  P <- predict(fit, dat$x[1:5, ], lambda = fit$lambda[c(2, 8)])
  Z <- unclass(rff_features(dat$x[1:5, ], map = fit$map))[, ]
  expect_equal(unname(P[, 2]), drop(Z %*% fit$coefficients[, 8]) + fit$intercept[8],
               tolerance = 1e-12)
  # data frames are matched by column name
  df <- data.frame(a = dat$x[, 1], b = dat$x[, 2], c = dat$x[, 3])
  fdf <- rff_ridge(df, dat$y, lambda = 0.01, map = fit$map, progress = FALSE, standardize = FALSE)
  expect_equal(predict(fdf, df[1:3, c("c", "a", "b")]), predict(fdf, df[1:3, ]))
  s <- summary(fit)
  rss <- sum(residuals(fit)^2)
  expect_equal(s$r.squared, 1 - rss / sum((dat$y - mean(dat$y))^2), tolerance = 1e-8)
  expect_equal(s$rss, rss, tolerance = 1e-8)
  expect_output(print(s), "R-squared")
  expect_output(print(fit), "lambda_best")
  expect_equal(nobs(fit), 100)
  pdf(NULL)
  on.exit(dev.off())
  expect_invisible(plot(fit))
  f <- tempfile(fileext = ".rds")
  saveRDS(fit, f)
  expect_identical(predict(readRDS(f), dat$x[1:3, ]), predict(fit, dat$x[1:3, ]))
})

test_that("bad input gets an rff_error naming the argument", {
  dat <- make_data(n = 50)
  m <- rff_map(3, D = 10)
  err <- function(expr, arg) {
    e <- tryCatch(expr, rff_error = function(e) e)
    expect_s3_class(e, "rff_error")
    expect_identical(e$arg, arg)
    expect_match(conditionMessage(e), paste0("`", arg, "`"), fixed = TRUE)
  }
  err(rff_ridge(dat$x, dat$y[-1], map = m, standardize = FALSE), "y")
  y <- dat$y; y[3] <- NA
  err(rff_ridge(dat$x, y, map = m, standardize = FALSE), "y")
  err(rff_ridge(dat$x, as.character(dat$y), map = m, standardize = FALSE), "y")
  err(rff_ridge(dat$x, dat$y, lambda = -1, map = m, standardize = FALSE), "lambda")
  err(rff_ridge(dat$x, dat$y, lambda = Inf, map = m, standardize = FALSE), "lambda")
  err(rff_ridge(dat$x, dat$y, lambda = c(0.1, NA), map = m, standardize = FALSE), "lambda")
  err(rff_ridge(dat$x, dat$y, map = m, chunk_size = 0, standardize = FALSE), "chunk_size")
  err(rff_ridge(dat$x, dat$y, map = m, nlambda = 0, standardize = FALSE), "nlambda")
  err(rff_ridge(dat$x, dat$y, map = m, lambda_min_ratio = 2, standardize = FALSE), "lambda_min_ratio")
  err(rff_ridge(dat$x, dat$y, map = m, D = 20, standardize = FALSE), "map")
  err(rff_ridge(dat$x, dat$y, Dd = 20), "Dd")
  err(rff_ridge(dat$x, dat$y, map = rff_map(2, D = 10), standardize = FALSE), "map")
  err(rff_ridge(dat$x, dat$y, lengthscale = -1), "lengthscale")
  # lambda = 0 with more features than rows: singular
  err(rff_ridge(dat$x[1:5, ], dat$y[1:5], lambda = 0, map = m, standardize = FALSE), "lambda")
  fit <- rff_ridge(dat$x, dat$y, map = m, nlambda = 4, progress = FALSE, standardize = FALSE)
  err(predict(fit, dat$x[, 1:2]), "newdata")
  err(predict(fit, "a"), "newdata")
  err(predict(fit, lambda = fit$lambda[1]), "newdata")
  sfit <- rff_ridge(rff_stats(dat$x, dat$y, m), lambda = 0.1)
  err(fitted(sfit), "object")
  err(rff_ridge(rff_stats(dat$x, dat$y, m), lambda = 0.1, D = 4), "...")
})
