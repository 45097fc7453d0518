# rff_ridge()'s interface: formulas, methods, bad input, standardization,
# predict, intervals, missing values, weights, offsets and summaries
# (helpers: helper-ridge.R).

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
  # new data with only some factor levels: the dummy columns (u, v, gb, gc)
  ref_c <- ref_features(rbind(c(0, 0.5, 0, 1)), m) %*% fit$coefficients + fit$intercept
  expect_equal(unname(predict(fit, data.frame(u = 0, v = 0.5, g = "c"))), drop(ref_c),
               tolerance = 1e-12)
  # no intercept from the formula: the uncentered fit on (u, v)
  m2 <- rff_map(2, D = 10)
  f0 <- rff_ridge(standardize = FALSE, y ~ u + v - 1, data = d, lambda = 0.01, map = m2, progress = FALSE)
  ok <- !is.na(d$y)
  ref0 <- ref_ridge(ref_features(cbind(d$u, d$v)[ok, ], m2), d$y[ok], 0.01, FALSE)
  expect_equal(unname(coef(f0)), ref0$beta, tolerance = 1e-10)
  expect_identical(names(coef(f0)), paste0("z", 1:10))
  expect_error(rff_ridge(y ~ u, data = d, intercept = FALSE), class = "rff_error")
  expect_error(predict(fit, data.frame(u = 1)), class = "rff_error")
  # subset: the fit on those rows only
  m1 <- rff_map(1, D = 10)
  sub <- rff_ridge(standardize = FALSE, y ~ u, data = d, subset = g == "a", lambda = 0.1, map = m1, progress = FALSE)
  rows <- d$g == "a" & ok
  refs <- ref_ridge(ref_features(cbind(d$u[rows]), m1), d$y[rows], 0.1, TRUE)
  expect_equal(unname(coef(sub)), c(refs$a0, refs$beta), tolerance = 1e-10)
  expect_equal(nobs(sub), sum(rows))
})

test_that("methods: coef, predict, fitted, residuals, summary, print, plot, saveRDS", {
  dat <- make_data(n = 100)
  fit <- rff_ridge(dat$x, dat$y, D = 20, nlambda = 8, progress = FALSE, standardize = FALSE)
  cf <- coef(fit)
  expect_equal(names(cf)[1:2], c("(Intercept)", "z1"))
  expect_equal(unname(cf), c(fit$intercept[fit$best], fit$coefficients[, fit$best]))
  expect_equal(dim(coef(fit, lambda = fit$lambda[2:3])), c(21, 2))
  # fitted values (predict() without newdata) at lambda_best, from base R
  Z <- ref_features(dat$x, fit$map)
  ref <- ref_ridge(Z, dat$y, fit$lambda_best, TRUE)
  expect_equal(unname(predict(fit)), drop(Z %*% ref$beta) + ref$a0,
               tolerance = ridge_tol(Z, fit$lambda_best))
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
  expect_rff_error(rff_ridge(dat$x, dat$y[-1], map = m, standardize = FALSE), "y")
  y <- dat$y; y[3] <- NA
  expect_rff_error(rff_ridge(dat$x, y, map = m, standardize = FALSE), "y")
  expect_rff_error(rff_ridge(dat$x, as.character(dat$y), map = m, standardize = FALSE), "y")
  expect_rff_error(rff_ridge(dat$x, dat$y, lambda = -1, map = m, standardize = FALSE), "lambda")
  expect_rff_error(rff_ridge(dat$x, dat$y, lambda = Inf, map = m, standardize = FALSE), "lambda")
  expect_rff_error(rff_ridge(dat$x, dat$y, lambda = c(0.1, NA), map = m, standardize = FALSE),
                   "lambda")
  expect_rff_error(rff_ridge(dat$x, dat$y, map = m, chunk_size = 0, standardize = FALSE),
                   "chunk_size")
  expect_rff_error(rff_ridge(dat$x, dat$y, map = m, nlambda = 0, standardize = FALSE), "nlambda")
  expect_rff_error(rff_ridge(dat$x, dat$y, map = m, lambda_min_ratio = 2, standardize = FALSE),
                   "lambda_min_ratio")
  expect_rff_error(rff_ridge(dat$x, dat$y, map = m, D = 20, standardize = FALSE), "map")
  expect_rff_error(rff_ridge(dat$x, dat$y, Dd = 20), "Dd")
  expect_rff_error(rff_ridge(dat$x, dat$y, map = rff_map(2, D = 10), standardize = FALSE), "map")
  expect_rff_error(rff_ridge(dat$x, dat$y, lengthscale = -1), "lengthscale")
  # lambda = 0 with more features than rows: singular
  expect_rff_error(rff_ridge(dat$x[1:5, ], dat$y[1:5], lambda = 0, map = m, standardize = FALSE),
                   "lambda")
  fit <- rff_ridge(dat$x, dat$y, map = m, nlambda = 4, progress = FALSE, standardize = FALSE)
  expect_rff_error(predict(fit, dat$x[, 1:2]), "newdata")
  expect_rff_error(predict(fit, "a"), "newdata")
  expect_rff_error(predict(fit, lambda = fit$lambda[1]), "newdata")
  sfit <- rff_ridge(rff_stats(dat$x, dat$y, m), lambda = 0.1)
  expect_rff_error(fitted(sfit), "object")
  expect_rff_error(rff_ridge(rff_stats(dat$x, dat$y, m), lambda = 0.1, D = 4), "...")
})

test_that("standardize: a fit on (x - center) / scale, applied by predict; constant columns", {
  dat <- make_data(n = 80)
  x <- dat$x * rep(c(1, 100, 0.01), each = 80) + rep(c(0, 5, -3), each = 80)
  m <- rff_map(3, D = 30, lengthscale = 1.5)
  fit <- rff_ridge(x, dat$y, lambda = 1e-3, map = m, progress = FALSE)
  xs <- scale(x)
  ref <- rff_ridge(unclass(xs)[, ], dat$y, lambda = 1e-3, map = m, standardize = FALSE,
                   progress = FALSE)
  expect_equal(fit$coefficients, ref$coefficients, tolerance = 1e-10)
  expect_equal(unname(fit$standardize$center), unname(colMeans(x)))
  expect_equal(unname(fit$standardize$scale), unname(apply(x, 2, sd)))
  xnew <- x[1:4, ] + 0.5
  expect_equal(predict(fit, xnew), predict(ref, scale(xnew, colMeans(x), apply(x, 2, sd))),
               tolerance = 1e-10, ignore_attr = TRUE)
  # a constant column: a message, and the fit of the other columns
  xc <- cbind(x[, 1:2], 7)
  expect_message(fc <- rff_ridge(xc, dat$y, lambda = 1e-3, map = m, progress = FALSE),
                 "constant")
  m2 <- m
  m2$omega <- m$omega[1:2, , drop = FALSE]
  m2$d <- 2L
  f2 <- rff_ridge(x[, 1:2], dat$y, lambda = 1e-3, map = m2, progress = FALSE)
  expect_equal(fc$coefficients, f2$coefficients, tolerance = 1e-10)
  expect_true(all(is.finite(predict(fc, xc[1:3, ]))))
})

test_that("predict never guesses: arguments of glmnet and lm are rff_errors naming ours", {
  dat <- make_data(n = 60)
  fit <- rff_ridge(dat$x, dat$y, D = 20, nlambda = 5, lengthscale = 1, progress = FALSE)
  expect_rff_error(predict(fit, newx = dat$x), "newx", "use `newdata`")
  expect_rff_error(predict(fit, dat$x, s = 0.1), "s", "use `lambda`")
  expect_rff_error(predict(fit, dat$x, se = TRUE), "se", "use `se.fit`")
  expect_rff_error(predict(fit, dat$x, foo = 1), "foo", "`newdata`")
  expect_rff_error(predict(fit, dat$x, type = "class"), "type", "rff_glm()")
  expect_rff_error(predict(fit, dat$x, interval = "tolerance"), "interval", "confidence")
  expect_rff_error(predict(fit, dat$x, level = 2), "level", "(0, 1)")
  expect_rff_error(predict(fit, dat$x, lambda = -1), "lambda", "non-negative")
  expect_rff_error(predict(fit, dat$x, newoffset = 1), "newoffset", "without an offset")
  expect_identical(predict(fit, dat$x, type = "link"), predict(fit, dat$x))
})

test_that("predict at any lambda equals the fit at that lambda", {
  dat <- make_data(n = 90)
  m <- rff_map(3, D = 30, lengthscale = 1.2)
  fit <- rff_ridge(dat$x, dat$y, map = m, nlambda = 6, progress = FALSE)
  for (l in c(0.0123, 3e-5)) {
    one <- rff_ridge(dat$x, dat$y, lambda = l, map = m, progress = FALSE)
    expect_equal(predict(fit, dat$x[1:5, ], lambda = l), predict(one, dat$x[1:5, ]),
                 tolerance = 1e-8)
    expect_equal(coef(fit, lambda = l), coef(one), tolerance = 1e-8)
  }
  both <- predict(fit, dat$x[1:3, ], lambda = c(fit$lambda[2], 0.0123))
  expect_equal(both[, 1], predict(fit, dat$x[1:3, ], lambda = fit$lambda[2]), ignore_attr = TRUE)
  # a fit at one given lambda prints it as given
  expect_output(print(rff_ridge(dat$x, dat$y, lambda = 0.1, map = m, progress = FALSE)),
                "lambda = 0.1 \\(given\\)")
})

test_that("standard errors and intervals equal predict.lm() at lambda = 0", {
  set.seed(33)
  n <- 80
  x <- matrix(rnorm(n * 2), n, 2)
  y <- x[, 1] - x[, 2]^2 + rnorm(n, sd = 0.3)
  m <- rff_map(2, D = 10, lengthscale = 2)
  fit <- rff_ridge(x, y, lambda = c(0.1, 0), map = m, standardize = FALSE, progress = FALSE)
  xnew <- matrix(rnorm(8), 4, 2)
  Z <- unclass(rff_features(x, map = m))[, ]
  Znew <- unclass(rff_features(xnew, map = m))[, ]
  ols <- lm(y ~ Z)
  nd <- list(Z = Znew)
  for (iv in c("confidence", "prediction")) {
    p <- predict(fit, xnew, lambda = 0, interval = iv, level = 0.9)
    expect_equal(unname(p), unname(predict(ols, nd, interval = iv, level = 0.9)),
                 tolerance = 1e-6)
  }
  se <- predict(fit, xnew, lambda = 0, se.fit = TRUE)
  ref <- predict(ols, nd, se.fit = TRUE)
  expect_equal(unname(se$se.fit), unname(ref$se.fit), tolerance = 1e-6)
  expect_equal(se$df, ref$df, tolerance = 1e-8)
  expect_equal(se$residual.scale, ref$residual.scale, tolerance = 1e-8)
  # at lambda > 0: sigma^2 ((z - zbar)' M^-1 (z - zbar) + 1/n) with M = Zc'Zc + n lambda I
  Zc <- sweep(Z, 2, colMeans(Z))
  M <- crossprod(Zc) + n * 0.1 * diag(10)
  b <- solve(M, crossprod(Zc, y - mean(y)))
  H <- Zc %*% solve(M, t(Zc)) + 1 / n
  sigma2 <- sum((y - mean(y) - Zc %*% b)^2) / (n - sum(diag(H)))
  Dn <- sweep(Znew, 2, colMeans(Z))
  se_ref <- sqrt(sigma2 * (rowSums(Dn %*% solve(M) * Dn) + 1 / n))
  expect_equal(unname(predict(fit, xnew, lambda = 0.1, se.fit = TRUE)$se.fit), se_ref,
               tolerance = 1e-8)
  # summary()'s residual standard error: summary.lm()'s sigma at lambda = 0, and
  # sqrt(RSS / (n - tr H)) with the hat matrix's trace at lambda > 0
  fit0 <- rff_ridge(x, y, lambda = 0, map = m, standardize = FALSE, progress = FALSE)
  expect_equal(summary(fit0)$sigma, summary(ols)$sigma, tolerance = 1e-8)
  fit1 <- rff_ridge(x, y, lambda = 0.1, map = m, standardize = FALSE, progress = FALSE)
  expect_equal(summary(fit1)$sigma, sqrt(sigma2), tolerance = 1e-8)
  expect_error(predict(fit, xnew, lambda = c(0, 0.1), se.fit = TRUE), class = "rff_error")
})

test_that("newdata with missing values: NA rows, na.omit, na.fail", {
  set.seed(34)
  d <- data.frame(u = rnorm(60), v = rnorm(60))
  d$y <- d$u^2 + rnorm(60, sd = 0.1)
  fit <- rff_ridge(y ~ u + v, data = d, D = 20, lengthscale = 1, lambda = 0.01, progress = FALSE)
  nd <- d[1:5, ]
  nd$v[2] <- NA
  p <- predict(fit, nd)
  expect_length(p, 5)
  expect_true(is.na(p[2]))
  expect_equal(p[-2], predict(fit, nd[-2, ]))
  expect_equal(unname(predict(fit, nd, na.action = na.omit)), unname(p[-2]))
  expect_error(predict(fit, nd, na.action = na.fail), "missing", class = "rff_error")
  pi <- predict(fit, nd, interval = "confidence")
  expect_true(all(is.na(pi[2, ])))
  # a matrix fit too
  f2 <- rff_ridge(as.matrix(d[, 1:2]), d$y, D = 20, lengthscale = 1, lambda = 0.01,
                  progress = FALSE)
  xm <- as.matrix(nd[, 1:2])
  expect_true(is.na(predict(f2, xm)[2]))
})

test_that("weights: a weighted solve; whole-number weights equal repeated rows", {
  dat <- make_data(n = 70)
  m <- rff_map(3, D = 16, lengthscale = 1.5)
  w <- rep(1:3, length.out = 70)
  fit <- rff_ridge(dat$x, dat$y, lambda = 0.01, map = m, weights = w, standardize = FALSE,
                   progress = FALSE)
  Z <- unclass(rff_features(dat$x, map = m))[, ]
  W <- sum(w)
  zbar <- colSums(Z * w) / W
  ybar <- sum(w * dat$y) / W
  Zc <- sweep(Z, 2, zbar)
  beta <- solve(crossprod(Zc * w, Zc) + W * 0.01 * diag(16), crossprod(Zc, w * (dat$y - ybar)))
  expect_equal(drop(fit$coefficients), drop(beta), tolerance = 1e-10)
  expect_equal(fit$intercept, ybar - sum(zbar * beta), tolerance = 1e-10)
  rep_rows <- rep(seq_len(70), w)
  rep_fit <- rff_ridge(dat$x[rep_rows, ], dat$y[rep_rows], lambda = 0.01, map = m,
                       standardize = FALSE, progress = FALSE)
  expect_equal(fit$coefficients, rep_fit$coefficients, tolerance = 1e-10)
  # weighted standardization too: repeated rows again
  fs <- rff_ridge(dat$x, dat$y, lambda = 0.01, map = m, weights = w, progress = FALSE)
  expect_equal(fs$standardize$center, colMeans(dat$x[rep_rows, ]), ignore_attr = TRUE)
  # formula weights are evaluated in data; zero weights drop rows from n
  d <- data.frame(y = dat$y, a = dat$x[, 1], b = dat$x[, 2], c = dat$x[, 3], w = w - 1)
  ff <- rff_ridge(y ~ a + b + c, data = d, weights = w, lambda = 0.01, map = m,
                  standardize = FALSE, progress = FALSE)
  expect_identical(nobs(ff), sum(w > 1))
  expect_error(rff_ridge(dat$x, dat$y, weights = -w, progress = FALSE), "`weights`",
               class = "rff_error")
  expect_error(rff_ridge(dat$x, dat$y, weights = w[-1], progress = FALSE), "`weights`",
               class = "rff_error")
})

test_that("offsets are used, in the default method and in formulas, never dropped", {
  dat <- make_data(n = 60)
  m <- rff_map(3, D = 16, lengthscale = 1.5)
  o <- dat$x[, 3] * 2
  fit <- rff_ridge(dat$x, dat$y, lambda = 0.01, map = m, offset = o, progress = FALSE)
  ref <- rff_ridge(dat$x, dat$y - o, lambda = 0.01, map = m, progress = FALSE)
  expect_equal(fit$coefficients, ref$coefficients, tolerance = 1e-12)
  expect_equal(fitted(fit), fitted(ref) + o, tolerance = 1e-12)
  expect_error(predict(fit, dat$x[1:2, ]), "newoffset", class = "rff_error")
  expect_equal(predict(fit, dat$x[1:2, ], newoffset = c(1, 2)),
               predict(ref, dat$x[1:2, ]) + c(1, 2), tolerance = 1e-12)
  d <- data.frame(y = dat$y, a = dat$x[, 1], b = dat$x[, 2], k = o)
  ft <- rff_ridge(y ~ a + b + offset(k), data = d, lambda = 0.01, D = 16, lengthscale = 1,
                  progress = FALSE)
  fa <- rff_ridge(y ~ a + b, data = d, offset = k, lambda = 0.01, map = ft$map,
                  progress = FALSE)
  f0 <- rff_ridge(y ~ a + b, data = d, lambda = 0.01, map = ft$map, progress = FALSE)
  expect_equal(ft$coefficients, fa$coefficients, tolerance = 1e-12)
  expect_false(isTRUE(all.equal(ft$coefficients, f0$coefficients)))
  nd <- d[1:3, ]
  nd$k <- c(10, 20, 30)
  expect_equal(predict(ft, nd) - c(10, 20, 30), predict(ft, transform(nd, k = 0)),
               tolerance = 1e-12)
  expect_equal(predict(fa, nd), predict(ft, nd), tolerance = 1e-12)
})

test_that("a factor, logical or character response points to classification", {
  dat <- make_data(n = 30)
  g <- factor(dat$y > 0)
  e <- tryCatch(rff_ridge(dat$x, g, D = 10, progress = FALSE), rff_error = function(e) e)
  expect_s3_class(e, "rff_error")
  expect_match(conditionMessage(e), "rff_glm()", fixed = TRUE)
  expect_match(conditionMessage(e), "as.numeric", fixed = TRUE)
  expect_error(rff_ridge(dat$x, dat$y > 0, D = 10, progress = FALSE), "rff_glm",
               class = "rff_error")
  d <- data.frame(g = g, a = dat$x[, 1])
  expect_error(rff_ridge(g ~ a, data = d, D = 10, progress = FALSE), "rff_glm",
               class = "rff_error")
  expect_error(rff_cv(g ~ a, data = d, D = 10, progress = FALSE), "rff_glm",
               class = "rff_error")
})

test_that("summary prints one number style and no blank header line", {
  dat <- make_data(n = 60)
  fit <- rff_ridge(dat$x, dat$y, D = 20, nlambda = 5, lengthscale = 1, progress = FALSE)
  out <- capture.output(print(summary(fit)))
  expect_false(any(grepl("^ +$", out)))
  expect_true(any(grepl("Residual standard error: .*, R-squared: .*, GCV: ", out)))
})

test_that("extreme weights act through their proportions, as any multiple of them", {
  dat <- make_data(n = 70)
  m <- rff_map(3, D = 16, lengthscale = 1.5)
  Z <- unclass(rff_features(dat$x, map = m))[, ]
  by_hand <- function(w, lambda) {
    w <- w / max(w)
    W <- sum(w)
    zbar <- colSums(Z * w) / W
    Zc <- sweep(Z, 2, zbar)
    solve(crossprod(Zc * w, Zc) + W * lambda * diag(16),
          crossprod(Zc, w * (dat$y - sum(w * dat$y) / W)))
  }
  one <- rff_ridge(dat$x, dat$y, map = m, progress = FALSE)
  for (w in list(rep(1e-310, 70), rep(1e-320, 70), rep(1e300, 70))) {
    f <- rff_ridge(dat$x, dat$y, map = m, weights = w, progress = FALSE)
    expect_equal(f$lambda_best, one$lambda_best, tolerance = 1e-10)
    expect_true(all(is.finite(f$coefficients)))
    expect_equal(f$coefficients, one$coefficients, tolerance = 1e-8)
    expect_equal(predict(f, dat$x[1:5, ]), predict(one, dat$x[1:5, ]), tolerance = 1e-8)
  }
  w <- c(1e308, 1e308, rep(1, 68))
  f <- rff_ridge(dat$x, dat$y, map = m, weights = w, lambda = 0.01, standardize = FALSE,
                 progress = FALSE)
  expect_equal(drop(f$coefficients), drop(by_hand(w, 0.01)), tolerance = 1e-8)
  f <- rff_ridge(dat$x, dat$y, map = m, weights = w, lambda = c(0.1, 0.01), progress = FALSE)
  expect_true(all(is.finite(f$coefficients)))
})

test_that("weighted intervals and summaries are those of predict.lm() and lm() with the weights given", {
  set.seed(34)
  n <- 80
  x <- matrix(rnorm(n * 2), n, 2)
  y <- x[, 1] - x[, 2]^2 + rnorm(n, sd = 0.3)
  m <- rff_map(2, D = 10, lengthscale = 2)
  Z <- unclass(rff_features(x, map = m))[, ]
  xnew <- matrix(rnorm(8), 4, 2)
  nd <- list(Z = unclass(rff_features(xnew, map = m))[, ])
  for (k in c(1, 50, 1e-3)) {
    w <- k * runif(n, 0.5, 2)
    fit <- rff_ridge(x, y, lambda = c(0.1, 0), map = m, weights = w, standardize = FALSE,
                     progress = FALSE)
    wls <- lm(y ~ Z, weights = w)
    for (iv in c("confidence", "prediction")) {
      p <- predict(fit, xnew, lambda = 0, interval = iv)
      expect_equal(unname(p), unname(predict(wls, nd, interval = iv, weights = 1)), tolerance = 1e-6,
                   label = paste(iv, k))
    }
    se <- predict(fit, xnew, lambda = 0, se.fit = TRUE)
    expect_equal(se$residual.scale, summary(wls)$sigma, tolerance = 1e-6)
    s <- summary(rff_ridge(x, y, lambda = 0, map = m, weights = w, standardize = FALSE,
                           progress = FALSE))
    expect_equal(unname(s$sigma), summary(wls)$sigma, tolerance = 1e-6)
    expect_equal(unname(s$rss), sum(w * residuals(wls)^2), tolerance = 1e-6)
    expect_equal(unname(s$r.squared), summary(wls)$r.squared, tolerance = 1e-6)
  }
})
