# ref_ridge(), ref_gcv(), ridge_tol(): helper-ridge.R

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

test_that("the lengthscale walk on designed criteria: down, up, flat, and to the bounds", {
  # the criterion as a function of j, the multiple 2^(j / 2) of l0 = 2
  walk_on <- function(crit) {
    m <- list(x = matrix(0, 20, 1), weights = NULL, median = 2,
              map = rff_map(1, D = 4, lengthscale = 1))
    seen <- numeric()
    fit_rows <- function(map, rows, score_only) {
      j <- round(2 * log2(map$lengthscale / 2))
      seen <<- c(seen, j)
      list(criterion = "LOO", loo = crit(j), best = 1L, lambda_best = 10 + j,
           normal = list(A = 1))
    }
    s <- rff:::select_lengthscale(m, fit_rows)
    list(s = s, seen = seen, j = round(2 * log2(s$table$lengthscale / 2)))
  }
  # a minimum at j = -3: down from 0 until the next is worse
  w <- walk_on(function(j) (j + 3)^2 + 1)
  expect_identical(w$seen, c(0, -1, 1, -2, -3, -4))
  expect_identical(w$j, c(-4, -3, -2, -1, 0, 1))
  expect_identical(w$s$best, 2L)
  expect_equal(w$s$table$multiple, 2^(w$j / 2))
  expect_equal(w$s$table$lambda, 10 + w$j)
  expect_equal(w$s$table$loo, (w$j + 3)^2 + 1)
  # a minimum at j = 0: the three first candidates only
  w <- walk_on(function(j) j^2 + 1)
  expect_identical(w$seen, c(0, -1, 1))
  expect_identical(w$s$best, 2L)
  # decreasing to the upper bound, each step gaining more than 0.1%
  w <- walk_on(function(j) 10 - j)
  expect_identical(w$seen, c(0, -1, 1, 2:8))
  expect_identical(w$s$best, 10L)
  # and to the lower bound
  w <- walk_on(function(j) 10 + j)
  expect_identical(w$seen, c(0, -1, 1, -2:-6))
  expect_identical(w$s$best, 1L)
  # flat: the step from 3 to 4 gains 0.05%; the walk stops there, at 4
  w <- walk_on(function(j) if (j <= 3) 10 - j else 7 * (1 - 5e-4 * (j - 3)))
  expect_identical(w$seen, c(0, -1, 1, 2, 3, 4))
  expect_identical(w$j[w$s$best], 4)
})

test_that("lengthscale \"auto\": a downhill walk from the median heuristic on the same draws", {
  for (case in list(list(seed = 1, n = 150, y = NULL), list(seed = 2, n = 120, y = "linear"))) {
    dat <- make_data(n = case$n, seed = case$seed)
    if (identical(case$y, "linear")) {
      # a linear response: the walk goes to large lengthscales
      set.seed(case$seed)
      x <- matrix(rnorm(3 * case$n), case$n)
      dat <- list(x = x, y = drop(x %*% c(1, -1, 0.5)) + rnorm(case$n, sd = 0.3))
    }
    set.seed(31)
    fit <- rff_ridge(dat$x, dat$y, D = 40, nlambda = 10, progress = FALSE)
    xs <- unclass(scale(dat$x))[, ]
    l0 <- median(dist(xs))
    set.seed(31)
    base <- rff_map(3, D = 40, lengthscale = 1)
    fit_at <- function(j) {
      rff_ridge(xs, dat$y, map = map_at(base, 2^(j / 2) * l0), nlambda = 10,
                standardize = FALSE, progress = FALSE)
    }
    walk <- expected_walk(function(j) min(fit_at(j)$loo))
    s <- fit$lengthscale_search
    expect_equal(s$median, l0)
    expect_equal(s$table$multiple, 2^(walk$steps / 2))
    expect_equal(s$table$lengthscale, 2^(walk$steps / 2) * l0)
    expect_equal(s$table$loo, walk$score, tolerance = 1e-10)
    expect_identical(s$best, walk$best)
    jb <- walk$steps[walk$best]
    expect_equal(fit$map$lengthscale, 2^(jb / 2) * l0)
    expect_equal(fit$coefficients, fit_at(jb)$coefficients, tolerance = 1e-10)
    if (identical(case$y, "linear")) {
      # it walked up and stopped where a step gained less than 0.1%
      expect_gt(jb, 1L)
      k <- length(walk$score)
      expect_gt(walk$score[k], (1 - 1e-3) * walk$score[k - 1L])
    } else {
      # stopped between two worse neighbours: here the minimum of the whole grid
      expect_true(all(walk$score[-walk$best] > walk$score[walk$best]))
      all_loo <- vapply(-6:8, function(j) min(fit_at(j)$loo), 0)
      expect_equal(walk$score[walk$best], min(all_loo), tolerance = 1e-10)
    }
  }
  expect_output(print(fit), "chosen by LOO")
  expect_output(print(summary(fit)), "Lengthscale \\(auto")
  # "median" is accepted, and is the median heuristic of the standardized inputs
  fm <- rff_ridge(dat$x, dat$y, D = 20, lengthscale = "median", lambda = 0.01, progress = FALSE)
  expect_equal(fm$map$lengthscale, l0)
  expect_null(fm$lengthscale_search)
  # the default D from n
  expect_identical(fit$map$D, 40L)
  expect_identical(rff_ridge(dat$x, dat$y, lambda = 0.1, lengthscale = 1,
                             progress = FALSE)$map$D, 1000L)
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
