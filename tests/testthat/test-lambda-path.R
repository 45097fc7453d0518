# The data-driven lambda path that goes on past lambda_min_ratio while its
# best value is its last (path_extension()), for rff_ridge() and rff_glm().

test_that("path_extension() continues a path at its own spacing, down to ratio^2", {
  path <- list(lambda = NULL, nlambda = 5L, ratio = 1e-4, extend = TRUE)
  lam <- 2 * 10^(-(0:4))
  expect_equal(rff:::path_extension(lam, path), 2 * 10^(-(5:8)))
  expect_length(rff:::path_extension(lam, modifyList(path, list(extend = FALSE))), 0L)
  expect_length(rff:::path_extension(2, path), 0L)
  # given lambdas never extend
  expect_false(rff:::check_path(c(1, 0.1), 20, 1e-4, extend = TRUE)$extend)
  expect_true(rff:::check_path(NULL, 20, 1e-4, extend = TRUE)$extend)
})

ridge_extension_data <- function(n = 400, sd = 0.03) {
  set.seed(3)
  x <- matrix(runif(2 * n), n, 2)
  list(x = x, y = sin(3 * x[, 1]) + cos(2 * x[, 2]) + rnorm(n, sd = sd))
}

test_that("rff_ridge(): a path whose best is its last goes on until its best is inside", {
  d <- ridge_extension_data()
  m <- rff_map(2, D = 60, lengthscale = 1)
  for (criterion in c("loo", "gcv")) {
    f <- rff_ridge(d$x, d$y, map = m, standardize = FALSE, criterion = criterion,
                   progress = FALSE)
    L <- length(f$lambda)
    # the default 50 values reach 1e-6 of the first; the rest follow at the
    # same spacing, in blocks of 13 (a quarter of 50)
    expect_gt(L, 50L)
    expect_lte(L, 99L)
    expect_equal(diff(log(f$lambda)), rep(log(1e-6) / 49, L - 1L))
    expect_identical((L - 50L) %% 13L == 0L || L == 99L, TRUE)
    # the extension stopped in the block where the best stopped being last
    expect_gt(f$best, L - 13L)
    expect_lt(f$best, L)
    # the criterion over the whole path is that of the same path given
    g <- rff_ridge(d$x, d$y, map = m, standardize = FALSE, criterion = criterion,
                   lambda = f$lambda, progress = FALSE)
    expect_equal(f$best, g$best)
    crit <- if (criterion == "loo") "loo" else "gcv"
    expect_equal(f[[crit]], g[[crit]], tolerance = 1e-8)
    expect_equal(f$df, g$df, tolerance = 1e-8)
    # and the coefficients at lambda_best are base R's
    Z <- rff_features(d$x, map = m)
    r <- ref_ridge(Z, d$y, f$lambda_best, TRUE)
    expect_equal(unname(f$coefficients[, f$best]), unname(r$beta),
                 tolerance = 1e3 * ridge_tol(Z, f$lambda_best))
    expect_equal(unname(f$intercept[f$best]), unname(r$a0),
                 tolerance = 1e3 * ridge_tol(Z, f$lambda_best))
    # the df and GCV of the extension values are the hat matrix's
    ref <- ref_gcv(Z, d$y, f$lambda[c(51, f$best)])
    expect_equal(unname(f$df[c(51, f$best)]), unname(ref["df", ]), tolerance = 1e-6)
    expect_equal(unname(f$gcv[c(51, f$best)]), unname(ref["gcv", ]), tolerance = 1e-6)
  }
  # with lambda_min_ratio given, the path is the one asked for
  f <- rff_ridge(d$x, d$y, map = m, standardize = FALSE, lambda_min_ratio = 1e-6,
                 progress = FALSE)
  expect_length(f$lambda, 50L)
  expect_identical(f$best, 50L)
})

test_that("rff_ridge(): a path whose best stays last ends at ratio^2, as many decades again", {
  d <- ridge_extension_data(sd = 1e-5)
  m <- rff_map(2, D = 60, lengthscale = 2)
  f <- rff_ridge(d$x, d$y, map = m, standardize = FALSE, criterion = "gcv", nlambda = 20,
                 progress = FALSE)
  expect_length(f$lambda, 39L)
  expect_equal(f$lambda[39L] / f$lambda[1L], 1e-12)
})

test_that("rff_ridge(): a fit from statistics extends its GCV path the same way", {
  d <- ridge_extension_data()
  m <- rff_map(2, D = 60, lengthscale = 1)
  s <- rff_stats(d$x, d$y, map = m)
  f <- rff_ridge(s)
  g <- rff_ridge(d$x, d$y, map = m, standardize = FALSE, criterion = "gcv", progress = FALSE)
  expect_equal(f$lambda, g$lambda)
  expect_equal(f$best, g$best)
  expect_gt(length(f$lambda), 50L)
  expect_length(rff_ridge(s, lambda_min_ratio = 1e-6)$lambda, 50L)
})

test_that("rff_glm(): the held-out path goes on while its last value is its best", {
  set.seed(4)
  n <- 1200
  x <- matrix(rnorm(2 * n), n, 2)
  # a boundary with little noise: the best lambda lies below 1e-4 of the first
  cls <- factor(ifelse(x[, 1]^2 + x[, 2]^2 + rnorm(n, sd = 0.1) > 1.4, "out", "in"))
  y <- as.integer(cls == "out")
  m <- rff_map(2, D = 40, lengthscale = 1)
  foldid <- rep_len(1:5, n)
  h <- which(foldid == 1L)
  ctl <- tight
  f <- rff_glm(x, cls, map = m, foldid = foldid, holdout = TRUE, standardize = FALSE,
               control = ctl, progress = FALSE)
  L <- length(f$lambda)
  expect_gt(L, 20L)
  expect_equal(diff(log(f$lambda)), rep(log(1e-4) / 19, L - 1L))
  # it stopped at the first value that did not improve on the one before
  # (or at ratio^2)
  expect_true(f$best == L - 1L || L == 39L)
  if (L < 39L) expect_gt(f$cvm[L], f$cvm[L - 1L])
  expect_identical(f$best, which.min(f$cvm))
  # the held-out deviance past the nominal end is that of fits from scratch
  # on the other rows (to 1e-5: at these small lambdas the objective's
  # tolerance leaves more in the coefficients than on the default path)
  for (i in c(20L, L - 1L, L)) {
    fj <- rff_glm(x[-h, ], cls[-h], map = m, lambda = f$lambda[i], standardize = FALSE,
                  control = tight)
    eta <- predict(fj, x[h, , drop = FALSE], type = "link")
    dev <- -2 * (y[h] * eta - log1p(exp(eta)))
    expect_equal(f$cvm[i], mean(dev), tolerance = 1e-5)
  }
  # and the fit is the one on all rows at lambda_best (to 1e-5, as above:
  # the coefficients of -O1 and -O2 builds differ by 2e-6 at this lambda;
  # the path's neighbouring values, 38% apart, move them by over 1e-2)
  all <- rff_glm(x, cls, map = m, lambda = f$lambda_best, standardize = FALSE,
                 control = tight)
  expect_equal(unname(f$coefficients[, f$best]), unname(drop(all$coefficients)),
               tolerance = 1e-5)
  nb <- rff_glm(x, cls, map = m, lambda = f$lambda[f$best - 1L], standardize = FALSE,
                control = tight)
  expect_gt(max(abs(nb$coefficients - all$coefficients)) / max(abs(all$coefficients)), 1e-3)
  # with lambda_min_ratio given the path is the one asked for
  f4 <- rff_glm(x, cls, map = m, foldid = foldid, holdout = TRUE, standardize = FALSE,
                lambda_min_ratio = 1e-4, control = ctl, progress = FALSE)
  expect_length(f4$lambda, 20L)
  expect_equal(f4$cvm, f$cvm[1:20], tolerance = 1e-6)
})

test_that("rff_glm(): a value past the nominal path that does not converge ends it, dropped", {
  set.seed(4)
  n <- 1200
  x <- matrix(rnorm(2 * n), n, 2)
  cls <- factor(ifelse(x[, 1]^2 + x[, 2]^2 + rnorm(n, sd = 0.05) > 1.4, "out", "in"))
  m <- rff_map(2, D = 40, lengthscale = 1)
  foldid <- rep_len(1:5, n)
  # few iterations: the nominal values warm-start from each other and
  # converge; the extension's smaller lambdas need more
  ctl <- list(epsilon = 1e-12, maxit = 12)
  f <- suppressWarnings(rff_glm(x, cls, map = m, foldid = foldid, holdout = TRUE,
                                standardize = FALSE, control = ctl, progress = FALSE))
  full <- suppressWarnings(rff_glm(x, cls, map = m, foldid = foldid, holdout = TRUE,
                                   standardize = FALSE, control = list(epsilon = 1e-12),
                                   progress = FALSE))
  expect_lt(length(f$lambda), length(full$lambda))
  expect_equal(f$lambda, full$lambda[seq_along(f$lambda)])
})
