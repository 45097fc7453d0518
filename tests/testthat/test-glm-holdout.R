# rff_glm()'s choice of lambda on one held-out set (`holdout`), the default
# on more than 2,000 rows.

# The held-out deviance of each row of `rows` under a fit made without them.
row_deviance <- function(fit, x, y, rows) {
  eta <- predict(fit, x[rows, , drop = FALSE], type = "link")
  if (is.factor(y)) {
    -2 * (eta - log(rowSums(exp(eta))))[cbind(seq_along(rows), as.integer(y[rows]))]
  } else {
    -2 * (y[rows] * eta - log1p(exp(eta)))
  }
}

test_that("holdout = TRUE: lambda is chosen on fold 1's rows, measured by fits without them", {
  d <- glm_data(240, seed = 41)
  m <- rff_map(2, D = 30, lengthscale = 1)
  foldid <- rep_len(1:4, 240)
  lam <- 0.1 * 0.3^(0:4)
  h <- which(foldid == 1L)
  for (y in list(d$yb, d$cls)) {
    f <- rff_glm(d$x, y, map = m, lambda = lam, foldid = foldid, holdout = TRUE,
                 standardize = FALSE, control = tight)
    expect_identical(f$holdout, length(h))
    # the fits on the other rows, from scratch, at each lambda
    dev <- vapply(lam, function(l) {
      fj <- rff_glm(d$x[-h, ], y[-h], map = m, lambda = l, standardize = FALSE,
                    control = tight)
      row_deviance(fj, d$x, y, h)
    }, numeric(length(h)))
    expect_equal(f$cvm, unname(colMeans(dev)), tolerance = 1e-6)
    # the standard error of the held-out mean
    expect_equal(f$cvsd, unname(apply(dev, 2, sd)) / sqrt(length(h)), tolerance = 1e-6)
    expect_identical(f$best, which.min(colMeans(dev)))
    expect_identical(f$lambda_best, lam[f$best])
    # the fit itself is the fit on all rows
    all <- rff_glm(d$x, y, map = m, lambda = lam[f$best], standardize = FALSE,
                   control = tight)
    at <- if (is.matrix(f$coefficients)) f$coefficients[, f$best] else
      f$coefficients[, , f$best]
    expect_equal(unname(at), unname(drop(all$coefficients)), tolerance = 1e-6)
  }
})

test_that("holdout: weights act through their proportions, rows of weight zero are not counted", {
  d <- glm_data(200, seed = 42)
  m <- rff_map(2, D = 20, lengthscale = 1)
  foldid <- rep_len(1:3, 200)
  lam <- c(0.05, 0.01)
  h <- which(foldid == 1L)
  f1 <- rff_glm(d$x, d$yb, map = m, lambda = lam, foldid = foldid, holdout = TRUE,
                control = tight)
  f3 <- rff_glm(d$x, d$yb, map = m, lambda = lam, foldid = foldid, holdout = TRUE,
                weights = rep(3, 200), control = tight)
  expect_equal(f3$cvm, f1$cvm, tolerance = 1e-8)
  expect_equal(f3$cvsd, f1$cvsd, tolerance = 1e-8)
  # unequal weights: the weighted mean of the held-out rows' deviances, and
  # its standard error as the sd of its influence values n w (d - mean) /
  # sum(w) over sqrt(n)
  fw <- rff_glm(d$x, d$yb, map = m, lambda = lam, foldid = foldid, holdout = TRUE,
                weights = d$w, standardize = FALSE, control = tight)
  wh <- d$w[h]
  dev <- vapply(lam, function(l) {
    fj <- rff_glm(d$x[-h, ], d$yb[-h], map = m, lambda = l, weights = d$w[-h],
                  standardize = FALSE, control = tight)
    row_deviance(fj, d$x, d$yb, h)
  }, numeric(length(h)))
  mw <- colSums(wh * dev) / sum(wh)
  expect_equal(fw$cvm, unname(mw), tolerance = 1e-6)
  infl <- length(h) * wh * sweep(dev, 2, mw) / sum(wh)
  expect_equal(fw$cvsd, unname(apply(infl, 2, sd)) / sqrt(length(h)), tolerance = 1e-6)
  expect_gt(min(abs(fw$cvsd / f1$cvsd - 1)), 1e-3)
  # held-out rows of weight zero: the mean and its standard error over the others
  w <- rep(1, 200)
  w[h[1:10]] <- 0
  fz <- rff_glm(d$x, d$yb, map = m, lambda = lam, foldid = foldid, holdout = TRUE,
                weights = w, standardize = FALSE, control = tight)
  expect_identical(fz$holdout, length(h) - 10L)
  keep <- h[-(1:10)]
  dev <- vapply(lam, function(l) {
    fj <- rff_glm(d$x[-h, ], d$yb[-h], map = m, lambda = l, standardize = FALSE,
                  control = tight)
    row_deviance(fj, d$x, d$yb, keep)
  }, numeric(length(keep)))
  expect_equal(fz$cvm, unname(colMeans(dev)), tolerance = 1e-6)
  expect_equal(fz$cvsd, unname(apply(dev, 2, sd)) / sqrt(length(keep)), tolerance = 1e-6)
})

test_that("by default, more than 2,000 rows choose lambda on a held-out fifth", {
  set.seed(43)
  n <- 2001
  x <- matrix(rnorm(2 * n), n, 2)
  y <- rbinom(n, 1, plogis(2 * sin(2 * x[, 1]) + x[, 2]))
  m <- rff_map(2, D = 10, lengthscale = 1)
  lam <- c(0.1, 0.01, 0.001)
  set.seed(1)
  f <- rff_glm(x, y, map = m, lambda = lam)
  set.seed(1)
  ft <- rff_glm(x, y, map = m, lambda = lam, holdout = TRUE)
  # fold 1 of the 5 folds drawn as for a cross-validation: 401 rows
  expect_identical(f$holdout, 401L)
  expect_identical(f$cvm, ft$cvm)
  expect_identical(f$cvsd, ft$cvsd)
  # a fold's deviance, with one fold held out, is not an average over folds
  set.seed(1)
  fid <- sample(rep_len(1:5, n))
  fc <- rff_glm(x, y, map = m, lambda = lam, foldid = fid)
  expect_null(fc$holdout)
  expect_identical(fc$folds, 5L)
  expect_false(isTRUE(all.equal(fc$cvm, f$cvm)))
  # holdout = FALSE, and 2,000 rows: the 5-fold cross-validation
  set.seed(1)
  ff <- rff_glm(x, y, map = m, lambda = lam, holdout = FALSE)
  expect_null(ff$holdout)
  expect_equal(ff$cvm, fc$cvm, tolerance = 1e-12)
  set.seed(1)
  f0 <- rff_glm(x[-1, ], y[-1], map = m, lambda = lam)
  expect_null(f0$holdout)
  expect_identical(f0$folds, 5L)
  # fold 1 without rows of positive weight: the default cross-validates,
  # and holdout = TRUE is an error
  w <- ifelse(fid == 1L, 0, 1)
  set.seed(1)
  fw <- rff_glm(x, y, map = m, lambda = lam, weights = w)
  expect_null(fw$holdout)
  expect_identical(fw$folds, 5L)
  expect_true(all(is.finite(fw$cvm)))
  set.seed(1)
  expect_rff_error(rff_glm(x, y, map = m, lambda = lam, weights = w, holdout = TRUE),
                   "holdout", "at least 2 rows of positive weight in fold 1")
  w[which(fid == 1L)[1]] <- 1
  set.seed(1)
  expect_rff_error(rff_glm(x, y, map = m, lambda = lam, weights = w, holdout = TRUE),
                   "holdout", "has 1")
})

test_that("a held-out set is reported as such", {
  d <- glm_data(200, seed = 44)
  m <- rff_map(2, D = 20, lengthscale = 1)
  f <- rff_glm(d$x, d$cls, map = m, lambda = c(0.05, 0.01), foldid = rep_len(1:4, 200),
               holdout = TRUE)
  expect_output(print(f), "deviance per row on 50 held-out rows")
  expect_output(print(summary(f)), "deviance per row on 50 held-out rows")
  fc <- rff_glm(d$x, d$cls, map = m, lambda = c(0.05, 0.01), foldid = rep_len(1:4, 200))
  expect_output(print(fc), "4-fold CV deviance per row")
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off(), add = TRUE)
  expect_silent(plot(f))
  expect_identical(graphics::par("usr")[3] <= min(f$cvm - f$cvsd), TRUE)
  skip_if_not_installed("generics")
  expect_match(generics::glance(f)$criterion, "^held-out deviance")
  expect_match(generics::glance(fc)$criterion, "^CV deviance")
})

test_that("holdout must be TRUE, FALSE or NULL", {
  d <- glm_data(60, seed = 45)
  m <- rff_map(2, D = 10, lengthscale = 1)
  for (bad in list("yes", NA, c(TRUE, FALSE), 1)) {
    expect_rff_error(rff_glm(d$x, d$yb, map = m, holdout = bad), "holdout")
  }
})
