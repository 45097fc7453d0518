# rff_ridge(): coefficients, paths and criteria against base R and brute force;
# ref_ridge(), ref_gcv(), ridge_tol(), make_data(): helper-ridge.R

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
  path <- rff_ridge(dat$x, dat$y, map = m, nlambda = 12, lambda_min_ratio = 1e-6,
                    progress = FALSE, standardize = FALSE, criterion = "gcv")
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
  # the progress display streams the same blocks
  old <- options(rff.progress = "txt", rff.progress_delay = 0)
  on.exit(options(old), add = TRUE)
  expect_output(pb <- rff_ridge(dat$x, dat$y, lambda = 1e-3, map = m, chunk_size = 7,
                                progress = TRUE, standardize = FALSE), "100%")
  expect_equal(pb$coefficients, whole$coefficients, tolerance = 1e-12)
  expect_silent(rff_ridge(dat$x, dat$y, lambda = 1e-3, map = m, progress = FALSE, standardize = FALSE))
})

test_that("D > 128 (blocked Z'Z) with a partial last chunk equals base R", {
  # three column blocks of the Z'Z update (128, 128 and the rest); 350 rows
  # in chunks of 100, the last one partial
  dat <- make_data(n = 350)
  set.seed(21)
  for (v in c("pair", "phase")) {
    m <- rff_map(3, D = if (v == "pair") 300 else 261, lengthscale = 1.5, variant = v)
    Z <- ref_features(dat$x, m)
    for (icpt in c(TRUE, FALSE)) {
      fit <- rff_ridge(standardize = FALSE, dat$x, dat$y, lambda = 0.01, map = m, intercept = icpt,
                       chunk_size = 100, progress = FALSE)
      ref <- ref_ridge(Z, dat$y, 0.01, icpt)
      tol <- ridge_tol(Z, 0.01, icpt)
      expect_equal(drop(fit$coefficients), ref$beta, tolerance = tol)
      expect_equal(fit$intercept, ref$a0, tolerance = tol)
      expect_equal(unname(fitted(fit)), drop(Z %*% ref$beta) + ref$a0, tolerance = tol)
    }
  }
})

test_that("several responses x several lambdas equal base R, streamed in chunks", {
  dat <- make_data(n = 260)
  set.seed(22)
  xnew <- matrix(rnorm(130 * 3), 130, 3)
  # responses on different scales, so that a mixed-up intercept shows
  Y <- cbind(a = dat$y, b = 100 + 10 * dat$x[, 3], c = -50 + dat$x[, 1] * dat$x[, 2])
  lam <- c(0.05, 0.01, 0.002, 0.02)
  m <- rff_map(3, D = 200, lengthscale = 1.5)
  Z <- ref_features(dat$x, m)
  Znew <- ref_features(xnew, m)
  for (icpt in c(TRUE, FALSE)) {
    fit <- rff_ridge(standardize = FALSE, dat$x, Y, lambda = lam, map = m, intercept = icpt, chunk_size = 64,
                     progress = FALSE)
    expect_equal(dim(fit$coefficients), c(200, 3, 4))
    # lambdas out of order, new rows in chunks of 50 (the last one partial)
    sel <- c(4, 1, 3)
    P <- predict(fit, xnew, lambda = lam[sel], chunk_size = 50)
    expect_equal(dim(P), c(130, 3, 3))
    C2 <- coef(fit, lambda = lam[2])
    tol <- ridge_tol(Z, lam, icpt)
    for (r in 1:3) for (l in 1:4) {
      ref <- ref_ridge(Z, Y[, r], lam[l], icpt)
      expect_equal(fit$coefficients[, r, l], ref$beta, tolerance = tol)
      expect_equal(fit$intercept[[r, l]], ref$a0, tolerance = tol)
      k <- match(l, sel)
      if (!is.na(k)) {
        expect_equal(unname(P[, r, k]), drop(Znew %*% ref$beta) + ref$a0, tolerance = tol)
      }
      if (l == 2) {
        expect_equal(unname(C2[, r]), c(if (icpt) ref$a0, ref$beta), tolerance = tol)
      }
      if (l == fit$best) {
        expect_equal(unname(fitted(fit)[, r]), drop(Z %*% ref$beta) + ref$a0, tolerance = tol)
      }
    }
    # one lambda (the Cholesky solve) for all responses
    one <- rff_ridge(standardize = FALSE, dat$x, Y, lambda = lam[3], map = m, intercept = icpt, chunk_size = 64,
                     progress = FALSE)
    p1 <- predict(one, xnew, chunk_size = 50)
    for (r in 1:3) {
      ref <- ref_ridge(Z, Y[, r], lam[3], icpt)
      expect_equal(unname(p1[, r]), drop(Znew %*% ref$beta) + ref$a0, tolerance = tol)
    }
  }
})

test_that("df, RSS and GCV equal their closed forms, with and without intercept", {
  dat <- make_data(n = 150)
  y <- dat$y + 5   # far from 0: without intercept the fit must carry the mean
  m <- rff_map(3, D = 40, lengthscale = 2, variant = "phase")
  Z <- ref_features(dat$x, m)
  lam <- 10^seq(-1, -4, length.out = 5)
  for (icpt in c(TRUE, FALSE)) {
    path <- rff_ridge(standardize = FALSE, dat$x, y, lambda = lam, map = m, intercept = icpt, progress = FALSE)
    expect_equal(path$method, "eigen")
    bf <- ref_gcv(Z, y, lam, icpt)
    tol <- ridge_tol(Z, lam, icpt)
    # the RSS comes from the statistics: y'y - 2 b'Z'y + b'Z'Z b cancels
    # about y'y / RSS of its relative accuracy
    tol_rss <- tol * max(sum(y^2) / bf["rss", ])
    expect_equal(path$df, bf["df", ], tolerance = tol)
    expect_equal(path$rss, bf["rss", ], tolerance = tol_rss)
    expect_equal(path$gcv, bf["gcv", ], tolerance = tol_rss)
    expect_equal(path$best, which.min(bf["gcv", ]))
    for (i in c(1, 4)) {
      one <- rff_ridge(standardize = FALSE, dat$x, y, lambda = lam[i], map = m, intercept = icpt, progress = FALSE)
      expect_equal(one$method, "cholesky")
      expect_equal(one$df, bf[["df", i]], tolerance = tol)
      expect_equal(one$rss, bf[["rss", i]], tolerance = tol_rss)
      expect_equal(one$gcv, bf[["gcv", i]], tolerance = tol_rss)
    }
  }
})

test_that("lambda = 0 is least squares on the features", {
  dat <- make_data(n = 200)
  m <- rff_map(3, D = 10, lengthscale = 2)
  Z <- ref_features(dat$x, m)
  for (icpt in c(TRUE, FALSE)) {
    X <- if (icpt) cbind(1, Z) else Z
    ols <- qr.coef(qr(X), dat$y)
    fit <- rff_ridge(standardize = FALSE, dat$x, dat$y, lambda = 0, map = m, intercept = icpt, progress = FALSE)
    # normal equations: the condition number of X'X
    tol <- kappa(crossprod(X), exact = TRUE) * (nrow(X) + ncol(X)) * .Machine$double.eps
    expect_equal(unname(coef(fit)), unname(ols), tolerance = tol)
    expect_equal(fit$df, ncol(X), tolerance = tol)
    expect_equal(fit$rss, sum(qr.resid(qr(X), dat$y)^2), tolerance = tol)
  }
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

test_that("on Boston, predictions approach exact kernel ridge regression at the right lengthscale", {
  skip_if_not_installed("MASS")
  B <- MASS::Boston
  x <- scale(as.matrix(B[, names(B) != "medv"]))
  y <- B$medv
  set.seed(10)
  test <- sample(nrow(x), 100)
  xtr <- x[-test, ]; ytr <- y[-test]; n <- nrow(xtr)
  ls <- 4; lam <- 1e-3
  rms <- function(a) sqrt(mean(a^2))
  # exact KRR with an unpenalized intercept: [K + n lambda I, 1; 1', 0]
  krr <- function(l) {
    K <- rff_kernel(xtr, lengthscale = l)
    sol <- solve(rbind(cbind(K + n * lam * diag(n), 1), c(rep(1, n), 0)), c(ytr, 0))
    drop(rff_kernel(x[test, ], xtr, lengthscale = l) %*% sol[1:n]) + sol[n + 1]
  }
  exact <- krr(ls)
  expect_lt(rms(y[test] - exact), 5)   # a sensible fit: sd(medv) is 9.2
  # how far a lengthscale wrong by a factor 1.5 moves the exact predictions
  wrong <- min(rms(krr(1.5 * ls) - exact), rms(krr(ls / 1.5) - exact))
  # distance of the random-feature predictions from the exact ones, over
  # independent maps: 4 standard errors below that
  dist <- vapply(1:6, function(r) {
    fit <- rff_ridge(xtr, ytr, lambda = lam, D = 800, lengthscale = ls, progress = FALSE)
    rms(predict(fit, x[test, ]) - exact)
  }, numeric(1))
  expect_lt(mean(dist) + 4 * sd(dist) / sqrt(6), wrong)
})

test_that("GCV picks too small a lambda where leverages are uneven; LOO does not", {
  skip_if_not_installed("MASS")
  B <- MASS::Boston
  set.seed(101)
  test <- sample(nrow(B), 101)
  set.seed(1)
  m <- rff_map(13, D = 500, lengthscale = 3.3)
  rmse <- function(f) sqrt(mean((B$medv[test] - predict(f, B[test, ]))^2))
  loo <- rff_ridge(medv ~ ., data = B[-test, ], map = m, progress = FALSE)
  gcv <- rff_ridge(medv ~ ., data = B[-test, ], map = m, criterion = "gcv", progress = FALSE)
  expect_gt(gcv$df[gcv$best], loo$df[loo$best])
  expect_lt(rmse(loo), rmse(gcv))
})
