# Brute-force k-fold CV in base R: refit on the training rows of each fold
# and predict the held-out rows, for each lengthscale and lambda.
ref_cv <- function(x, y, foldid, omega_unit, lengthscales, lambda) {
  D <- 2 * ncol(omega_unit)
  feats <- function(x, l) {
    P <- x %*% (omega_unit / l)
    sqrt(2 / D) * cbind(cos(P), sin(P))
  }
  sapply(lengthscales, function(l) {
    Z <- feats(x, l)
    sse <- sapply(lambda, function(lam) {
      sum(vapply(unique(foldid), function(j) {
        tr <- foldid != j
        zbar <- colMeans(Z[tr, ])
        Zc <- sweep(Z[tr, ], 2, zbar)
        yc <- y[tr] - mean(y[tr])
        b <- solve(crossprod(Zc) + sum(tr) * lam * diag(D), crossprod(Zc, yc))
        pred <- Z[!tr, ] %*% b + mean(y[tr]) - sum(zbar * b)
        sum((y[!tr] - pred)^2)
      }, numeric(1)))
    })
    sse / length(y)
  })
}

test_that("the CV curve equals brute-force cross-validation in base R", {
  set.seed(11)
  n <- 120
  x <- matrix(runif(n * 2), n, 2)
  y <- sin(5 * x[, 1]) + x[, 2] + rnorm(n, sd = 0.1)
  foldid <- rep_len(1:4, n)
  set.seed(12)
  cv <- rff_cv(x, y, foldid = foldid, lengthscale = c(0.2, 0.5, 1.5), D = 20,
               nlambda = 6, progress = FALSE, standardize = FALSE)
  set.seed(12)
  unit <- rff_map(2, D = 20, lengthscale = 1)   # the base draws
  ref <- ref_cv(x, y, foldid, unit$omega, c(0.2, 0.5, 1.5), cv$lambda)
  expect_equal(unname(cv$cvm), ref, tolerance = 1e-8)
  best <- arrayInd(which.min(ref), dim(ref))
  expect_equal(cv$lambda_best, cv$lambda[best[1]])
  expect_equal(cv$lengthscale_best, c(0.2, 0.5, 1.5)[best[2]])
  # the refit is the Cholesky fit on all rows at the best pair
  m <- unit
  m$omega <- unit$omega / cv$lengthscale_best
  m$lengthscale <- cv$lengthscale_best
  refit <- rff_ridge(x, y, lambda = cv$lambda_best, map = m, progress = FALSE, standardize = FALSE)
  expect_equal(cv$fit$coefficients, refit$coefficients, tolerance = 1e-10)
  expect_equal(predict(cv, x[1:4, ]), predict(refit, x[1:4, ]), tolerance = 1e-10)
  expect_equal(fitted(cv), fitted(refit), tolerance = 1e-10)
  expect_equal(coef(cv), coef(refit), tolerance = 1e-10)
  expect_equal(nobs(cv), n)
  # with folds of equal size, cvsd is the standard error of the mean of the
  # k fold MSEs
  for (ci in 1:3) {
    ml <- unit
    ml$omega <- unit$omega / c(0.2, 0.5, 1.5)[ci]
    Z <- ref_features(x, ml)
    sse <- ref_cv_sse(Z, y, foldid, cv$lambda)
    mse <- sse / (n / 4)
    tol <- cv_tol(Z, y, cv$lambda, sse) * max(colMeans(mse) / apply(mse, 2, sd))
    expect_equal(unname(cv$cvsd[, ci]), apply(mse, 2, sd) / sqrt(4), tolerance = tol)
  }
})

test_that("two responses, with and without intercept, in chunks, equal brute-force refits", {
  set.seed(14)
  n <- 90
  x <- matrix(rnorm(n * 2), n, 2)
  # responses with different means, so that mixed-up intercepts show
  Y <- cbind(u = sin(x[, 1]) + rnorm(n, sd = 0.1), v = 20 + x[, 2]^2 + rnorm(n, sd = 0.1))
  foldid <- rep_len(1:3, n)
  m <- rff_map(2, D = 16, lengthscale = 1)
  lam <- c(0.1, 0.01, 1e-3)
  ls <- c(1, 2)
  for (icpt in c(TRUE, FALSE)) {
    # chunks of 7 rows: every fold's statistics end with a partial chunk
    cv <- rff_cv(x, Y, foldid = foldid, lambda = lam, map = m, lengthscale = ls,
                 intercept = icpt, chunk_size = 7, progress = FALSE, standardize = FALSE)
    ref_cvm <- matrix(0, 3, 2)
    for (ci in 1:2) {
      ml <- m
      ml$omega <- m$omega / ls[ci]
      Z <- ref_features(x, ml)
      sse <- ref_cv_sse(Z, Y, foldid, lam, icpt)
      mse <- sse / (n / 3)
      ref_cvm[, ci] <- colSums(sse) / n
      tol <- cv_tol(Z, Y, lam, sse, icpt)
      expect_equal(unname(cv$cvm[, ci]), ref_cvm[, ci], tolerance = tol)
      expect_equal(unname(cv$cvsd[, ci]), apply(mse, 2, sd) / sqrt(3),
                   tolerance = tol * max(colMeans(mse) / apply(mse, 2, sd)))
    }
    best <- arrayInd(which.min(ref_cvm), dim(ref_cvm))
    expect_equal(cv$lambda_best, lam[best[1]])
    expect_equal(cv$lengthscale_best, ls[best[2]])
    # the refit on all rows, both responses
    ml <- m
    ml$omega <- m$omega / cv$lengthscale_best
    Z <- ref_features(x, ml)
    for (r in 1:2) {
      ref <- ref_ridge(Z, Y[, r], cv$lambda_best, icpt)
      tol <- ridge_tol(Z, cv$lambda_best, icpt)
      expect_equal(unname(coef(cv)[, r]), c(if (icpt) ref$a0, ref$beta), tolerance = tol)
      expect_equal(unname(fitted(cv)[, r]), drop(Z %*% ref$beta) + ref$a0, tolerance = tol)
    }
  }
})

test_that("a given map and lambda vector are used as they are", {
  set.seed(13)
  n <- 60
  x <- matrix(rnorm(n), n, 1)
  y <- x[, 1]^2 + rnorm(n, sd = 0.1)
  m <- rff_map(1, D = 10, lengthscale = 0.7)
  foldid <- rep_len(1:3, n)
  cv <- rff_cv(x, y, foldid = foldid, lambda = c(1e-2, 1e-4), map = m, progress = FALSE, standardize = FALSE)
  ref <- ref_cv(x, y, foldid, m$omega * 0.7, 0.7, c(1e-2, 1e-4))
  expect_equal(unname(cv$cvm), ref, tolerance = 1e-8)
  expect_identical(cv$fit$map, m)
  expect_output(print(cv), "3-fold")
  pdf(NULL)
  on.exit(dev.off())
  expect_invisible(plot(cv))
  cv2 <- rff_cv(x, y, folds = 3, lengthscale = c(0.5, 1), D = 10, nlambda = 4,
                progress = FALSE)
  expect_equal(dim(cv2$cvm), c(4, 2))
  expect_equal(sort(unique(cv2$foldid)), 1:3)
  expect_equal(as.vector(table(cv2$foldid)), c(20, 20, 20))
  expect_invisible(plot(cv2))
})

test_that("bad input to rff_cv gets an rff_error", {
  x <- matrix(rnorm(20), 10, 2)
  y <- rnorm(10)
  expect_error(rff_cv(x, y, folds = 11, D = 4), "`folds`", class = "rff_error")
  expect_error(rff_cv(x, y, folds = 1, D = 4), "`folds`", class = "rff_error")
  expect_error(rff_cv(x, y, foldid = rep(1, 10), D = 4), "`foldid`", class = "rff_error")
  expect_error(rff_cv(x, y, foldid = 1:3, D = 4), "`foldid`", class = "rff_error")
  expect_error(rff_cv(x, y, lengthscale = c(1, -1), D = 4), "`lengthscale`", class = "rff_error")
  expect_error(rff_cv(x, y[-1], D = 4), "`y`", class = "rff_error")
  expect_error(rff_cv(x, y, lambda = -1, D = 4), "`lambda`", class = "rff_error")
  expect_error(rff_cv(x, y, map = rff_map(2, D = 4), D = 4, standardize = FALSE), "`map`", class = "rff_error")
})

test_that("lambda_1se, predictions at \"min\", \"1se\" and any lambda, coef, summary", {
  set.seed(14)
  n <- 100
  x <- matrix(runif(n * 2), n, 2)
  y <- sin(4 * x[, 1]) + x[, 2] + rnorm(n, sd = 0.2)
  cv <- rff_cv(x, y, folds = 5, lengthscale = c(0.3, 1), D = 20, nlambda = 12,
               progress = FALSE)
  j <- cv$best[["lengthscale"]]
  i <- cv$best[["lambda"]]
  expect_identical(cv$lambda_min, cv$lambda[i])
  within <- cv$cvm[, j] <= cv$cvm[i, j] + cv$cvsd[i, j]
  expect_identical(cv$lambda_1se, max(cv$lambda[within]))
  expect_gte(cv$lambda_1se, cv$lambda_min)
  for (l in list("1se", cv$lambda[10], 0.0123)) {
    value <- if (identical(l, "1se")) cv$lambda_1se else l
    refit <- rff_ridge(x, y, lambda = value, map = cv$fit$map, progress = FALSE)
    expect_equal(predict(cv, x[1:4, ], lambda = l), predict(refit, x[1:4, ]), tolerance = 1e-8)
    expect_equal(coef(cv, lambda = l), coef(refit), tolerance = 1e-8)
  }
  expect_equal(predict(cv, x[1:4, ]), predict(cv, x[1:4, ], lambda = "min"))
  expect_error(predict(cv, x[1:4, ], s = "lambda.1se"), "use `lambda`", class = "rff_error")
  expect_error(predict(cv, newx = x), "use `newdata`", class = "rff_error")
  expect_error(predict(cv, x, lambda = "max"), "`lambda`", class = "rff_error")
  s <- summary(cv)
  expect_equal(s$table$cvm, unname(apply(cv$cvm, 2, min)))
  expect_output(print(s), "lambda_1se")
  expect_output(print(cv), "lambda_1se")
  expect_error(rff_cv(x, y, Dd = 3, progress = FALSE), "rff_cv\\(\\)", class = "rff_error")
})

test_that("the formula method with factors equals the default method on the model matrix", {
  set.seed(15)
  d <- data.frame(u = rnorm(90), g = factor(sample(c("a", "b", "c"), 90, TRUE)))
  d$y <- d$u^2 + (d$g == "b") + rnorm(90, sd = 0.2)
  d$u[4] <- NA
  set.seed(16)
  cvf <- rff_cv(y ~ u + g, data = d, folds = 3, D = 20, nlambda = 8, progress = FALSE)
  X <- model.matrix(~ u + g, d)[, -1]
  # what the formula's standardization gives: u centred and scaled, the
  # dummies gb and gc centred only
  X <- sweep(X, 2L, colMeans(X))
  X[, 1] <- X[, 1] / sd(X[, 1])
  set.seed(16)
  cvd <- rff_cv(X, d$y[-4], folds = 3, D = 20, nlambda = 8, progress = FALSE,
                standardize = FALSE)
  expect_equal(cvf$cvm, cvd$cvm, tolerance = 1e-10)
  # the two inputs agree to rounding, and so do the lambdas
  expect_equal(cvf$lambda_1se, cvd$lambda_1se, tolerance = 1e-12)
  expect_true(cvf$auto)
  nd <- d[1:5, ]
  p <- predict(cvf, nd, lambda = "1se")
  expect_true(is.na(p[4]))
  # model.matrix() dropped row 4 (missing u): rows 1, 2, 3, 5 of d are rows 1:4 of X
  expect_equal(unname(p[-4]), unname(predict(cvd, X[1:4, ], lambda = "1se")), tolerance = 1e-8)
  expect_length(residuals(cvf), 89)   # na.omit, as lm()
  pdf(NULL)
  on.exit(dev.off())
  expect_invisible(plot(cvf))
})

test_that("weighted cross-validation equals repeated rows", {
  set.seed(17)
  n <- 60
  x <- matrix(rnorm(n * 2), n, 2)
  y <- cos(x[, 1]) + rnorm(n, sd = 0.1)
  w <- rep(1:2, length.out = n)
  foldid <- rep_len(1:3, n)
  m <- rff_map(2, D = 12, lengthscale = 1)
  cw <- rff_cv(x, y, foldid = foldid, lambda = c(0.1, 0.01, 0.001), map = m, weights = w,
               standardize = FALSE, progress = FALSE)
  r <- rep(seq_len(n), w)
  cr <- rff_cv(x[r, ], y[r], foldid = foldid[r], lambda = c(0.1, 0.01, 0.001), map = m,
               standardize = FALSE, progress = FALSE)
  expect_equal(cw$cvm, cr$cvm, tolerance = 1e-10)
  expect_equal(cw$cvsd, cr$cvsd, tolerance = 1e-10)
  expect_equal(cw$fit$coefficients, cr$fit$coefficients, tolerance = 1e-10)
  # "median" is accepted
  cm <- rff_cv(x, y, folds = 3, lengthscale = "median", D = 10, nlambda = 4, progress = FALSE)
  expect_equal(cm$lengthscale_best, median(dist(scale(x))))
})

test_that("the cross-validation core: weighted curve, standard error and the 1-SE rule", {
  set.seed(7)
  k <- 4
  err <- matrix(runif(k * 3), k, 3)
  err[2, 3] <- NA
  wj <- c(3, 1, 2, 5)
  cur <- rff:::cv_curve(err, wj)
  for (l in 1:3) {
    ok <- !is.na(err[, l])
    m <- weighted.mean(err[ok, l], wj[ok])
    expect_equal(cur$cvm[l], m, tolerance = 1e-14)
    # glmnet's standard error: the weighted variance over all folds' weight, / (k - 1)
    expect_equal(cur$cvsd[l], sqrt(sum(wj[ok] * (err[ok, l] - m)^2) / sum(wj) / (k - 1)),
                 tolerance = 1e-14)
  }
  lambda <- c(10, 3, 1, 0.3)
  cvm <- cbind(c(5, 4.2, 4, 4.5), c(6, 5, 4.1, 3.9))
  cvsd <- cbind(rep(0.3, 4), c(1, 1, 0.2, 0.25))
  s <- rff:::cv_select(cvm, cvsd, lambda)
  expect_identical(s$best, c(lambda = 4L, lengthscale = 2L))
  expect_identical(s$lambda_min, 0.3)
  # within 3.9 + 0.25 at the best lengthscale: lambda 1 (4.1) and 0.3
  expect_identical(s$lambda_1se, 1)
  # larger is better (AUC): the largest cvm, and the largest lambda above it less one SE
  a <- rff:::cv_select(-cvm, cvsd, lambda, sgn = -1)
  expect_identical(a$best, c(lambda = 4L, lengthscale = 2L))
  expect_identical(a$lambda_1se, 1)
})

test_that("held-out errors from the Gram matrix equal those from the folds' statistics", {
  # one fold from its own eigenproblem (heldout_sse_gram()), and every fold
  # from one eigenproblem of all rows (heldout_sse_folds(): (I - H_hh)^-1 e_h
  # with H the hat matrix on all rows at the fold's penalty), against the
  # primal fit without the fold
  set.seed(35)
  n <- 36
  x <- matrix(rnorm(2 * n), n, 2)
  y <- cbind(sin(2 * x[, 1]) + rnorm(n, sd = 0.1), x[, 2] + rnorm(n))
  m <- rff_map(2, D = 60, lengthscale = 1)
  Z <- unclass(rff_features(x, map = m))
  G <- tcrossprod(Z)
  rows <- split(seq_len(n), rep_len(1:4, n))
  lambda <- c(1, 0.1, 1e-3, 1e-5)
  w0 <- runif(n)
  w0[c(2, 9)] <- 0
  for (w in list(NULL, runif(n), w0)) {
    for (icpt in c(TRUE, FALSE)) {
      ref <- t(vapply(rows, function(h) {
        fold_sse_stats(x, y, m, setdiff(seq_len(n), h), h, w, lambda, icpt)
      }, numeric(4)))
      ho <- rows[[3]]
      got <- rff:::heldout_sse_gram(G, setdiff(seq_len(n), ho), ho, y, w, lambda, icpt)
      expect_equal(got, ref[3, ], tolerance = 1e-8)
      got <- rff:::heldout_sse_folds(G, rows, y, w, lambda, icpt)
      expect_identical(attr(got, "own"), integer(0))
      expect_equal(c(got), c(ref), tolerance = 1e-8, info = paste(is.null(w), icpt))
    }
  }
  own_folds <- function(lam, rows) {
    t(vapply(rows, function(h) {
      rff:::heldout_sse_gram(G, setdiff(seq_len(n), h), h, y, NULL, lam, TRUE)
    }, numeric(length(lam))))
  }
  # at lambda = 0 the fit on all rows interpolates them (I - H_hh = 0): each
  # fold is scored from its own eigenproblem instead
  got <- rff:::heldout_sse_folds(G, rows, y, NULL, c(0.1, 0), TRUE)
  expect_identical(attr(got, "own"), 1:4)
  expect_equal(c(got), c(own_folds(c(0.1, 0), rows)), tolerance = 1e-10)
  # two folds: a fold's own eigenproblem costs less than a block per lambda
  halves <- split(seq_len(n), rep_len(1:2, n))
  got <- rff:::heldout_sse_folds(G, halves, y, NULL, lambda, TRUE)
  expect_identical(attr(got, "own"), 1:2)
  expect_equal(c(got), c(own_folds(lambda, halves)), tolerance = 1e-10)
  # held-out rows of weight 0 add nothing: a fold of them scores 0, exactly
  wz <- runif(n)
  wz[rows[[2]]] <- 0
  got <- rff:::heldout_sse_folds(G, rows, y, wz, lambda, TRUE)
  expect_identical(c(got[2, ]), numeric(4))
  ref <- fold_sse_stats(x, y, m, setdiff(seq_len(n), rows[[1]]), rows[[1]], wz, lambda, TRUE)
  expect_equal(c(got[1, ]), ref, tolerance = 1e-8)
  # leave-one-out folds, one of them a row of weight 0: finite curves
  w1 <- rep(1, 14)
  w1[3] <- 0
  cv <- rff_cv(x[1:14, ], y[1:14, 1], weights = w1, foldid = 1:14, D = 26, lengthscale = 1,
               nlambda = 5, progress = FALSE)
  expect_true(all(is.finite(cv$cvm)) && all(is.finite(cv$cvsd)))
})

test_that("lengthscale \"auto\" walks over the multiples of the median heuristic by CV", {
  set.seed(41)
  n <- 80
  x <- matrix(rnorm(2 * n), n, 2)
  y <- sin(2 * x[, 1]) + rnorm(n, sd = 0.2)
  foldid <- rep_len(1:4, n)
  set.seed(42)
  cv <- rff_cv(x, y, foldid = foldid, D = 30, nlambda = 6, progress = FALSE)
  xs <- unclass(scale(x))[, ]
  l0 <- median(dist(xs))
  set.seed(42)
  base <- rff_map(2, D = 30, lengthscale = 1)
  # each multiple cross-validated on its own, on the path rff_cv() used
  cv_at <- function(j) {
    rff_cv(xs, y, foldid = foldid, map = map_at(base, 2^(j / 2) * l0), lambda = cv$lambda,
           standardize = FALSE, progress = FALSE)$cvm[, 1]
  }
  walk <- expected_walk(function(j) min(cv_at(j)))
  expect_equal(unlist(cv$lengthscale), 2^(walk$steps / 2) * l0)
  expect_identical(ncol(cv$cvm), length(walk$steps))
  for (i in seq_along(walk$steps)) {
    expect_equal(unname(cv$cvm[, i]), cv_at(walk$steps[i]), tolerance = 1e-10)
  }
  expect_identical(cv$best[["lengthscale"]], walk$best)
  st <- cv$fit$lengthscale_search$table
  expect_equal(st$multiple, 2^(walk$steps / 2))
  expect_equal(st$cv, unname(apply(cv$cvm, 2, min)))
  expect_equal(summary(cv)$table$cvm, unname(apply(cv$cvm, 2, min)))
  # the GLM families walk too
  set.seed(43)
  yb <- factor(x[, 1]^2 + rnorm(n, sd = 0.3) > 1)
  cg <- rff_cv(x, yb, family = "binomial", foldid = foldid, D = 30, nlambda = 5,
               progress = FALSE)
  expect_true(length(cg$lengthscale) >= 3L)
  m <- round(2 * log2(unlist(cg$lengthscale) / l0))
  expect_equal(m, seq(min(m), max(m)))
  best <- apply(cg$cvm, 2, min)
  # the start and the step below it; the step above only when that one did
  # not win
  expect_true(all(c(-1, 0) %in% m))
  expect_identical(1 %in% m, !unname(best[m == -1] < best[m == 0]))
  expect_identical(cg$best[["lengthscale"]], unname(which.min(best)))
})

test_that("overflowing responses, damaged maps and indefinite statistics are clear rff_errors", {
  set.seed(1)
  x <- matrix(rnorm(400), 200)
  y <- sin(x[, 1]) + rnorm(200, sd = .1)
  e <- expect_error(rff_cv(x, y * 1e300, D = 20, folds = 3), class = "rff_error")
  expect_identical(e$arg, "y")
  expect_match(conditionMessage(e), "overflow")
  expect_error(rff_ridge(x, y * 1e300, D = 20, progress = FALSE), class = "rff_error")
  # y up to 1e140 is fitted, as y itself rescaled
  m <- rff_map(2, D = 20)
  f1 <- rff_ridge(x, y / max(abs(y)) * 1e140, map = m, lambda = 0.01, progress = FALSE)
  f2 <- rff_ridge(x, y / max(abs(y)), map = m, lambda = 0.01, progress = FALSE)
  expect_equal(coef(f1) / 1e140, coef(f2), tolerance = 1e-10)
  for (ls in list(NaN, -1)) {
    bad <- m
    bad$lengthscale <- ls
    e <- expect_error(rff_cv(x, y, map = bad, folds = 3), class = "rff_error")
    expect_identical(e$arg, "map")
    e <- expect_error(rff_cv(x, y, map = bad, lengthscale = c(1, 2), folds = 3),
                      class = "rff_error")
    expect_identical(e$arg, "map")
  }
  # arc-cosine features of order 1 grow with |x|: their cross-products overflow
  e <- expect_error(rff_ridge(x * 1e300, y, D = 20, kernel = "arccos", standardize = FALSE,
                              progress = FALSE), class = "rff_error")
  expect_identical(e$arg, "x")
  expect_error(rff_kernel_error(x[1:20, ] * 1e300, D = 20, kernel = "arccos"), class = "rff_error")
  # statistics passing the checks but indefinite: not "use a positive lambda"
  s <- rff_stats(x, y, map = rff_map(2, D = 3, variant = "phase"), intercept = FALSE)
  s$ZtZ <- matrix(c(1, 1, 0, 1, 1, 1, 0, 1, 1), 3)  # eigenvalues 1, 1 +- sqrt(2)
  e <- expect_error(rff_ridge(s, lambda = 1e-4), class = "rff_error")
  expect_match(conditionMessage(e), "not positive semidefinite")
  expect_no_match(conditionMessage(e), "use a positive")
  # a lambda large enough for a Cholesky factor of ZtZ + n lambda I, and a
  # path solved through the eigenvalues: the same error, naming `x`
  for (lam in list(1, c(1, 2), NULL)) {
    e <- expect_error(rff_ridge(s, lambda = lam), class = "rff_error")
    expect_identical(e$arg, "x")
    expect_match(conditionMessage(e), "not positive semidefinite")
  }
  # a Gram matrix whose smallest eigenvalue is a rounding error below 0 passes
  Z <- matrix(rnorm(6), 2, 3)
  s$ZtZ <- crossprod(Z)
  expect_lt(min(eigen(s$ZtZ, symmetric = TRUE, only.values = TRUE)$values), 1e-12)
  expect_s3_class(rff_ridge(s, lambda = c(1, 2)), "rff_ridge")
  expect_s3_class(rff_ridge(s, lambda = 1), "rff_ridge")
})

test_that("a cross-validated result with altered fields is an rff_error naming it", {
  set.seed(2)
  x <- matrix(rnorm(200), 100)
  y <- x[, 1] + rnorm(100, sd = 0.1)
  cv <- rff_cv(x, y, D = 10, lengthscale = 1, folds = 3, progress = FALSE)
  damage <- list(lmin_na = function(o) { o$lambda_min <- NA; o },
                 lmin_neg = function(o) { o$lambda_min <- -1; o },
                 l1se_chr = function(o) { o$lambda_1se <- "a"; o },
                 l1se_two = function(o) { o$lambda_1se <- c(1, 2); o },
                 fit = function(o) { o$fit <- list(); o })
  for (nm in names(damage)) {
    bad <- damage[[nm]](cv)
    lam <- if (nm == "l1se_chr" || nm == "l1se_two") "1se" else "min"
    e <- expect_error(predict(bad, x[1:3, ], lambda = lam), class = "rff_error", label = nm)
    expect_identical(e$arg, "object")
    expect_match(conditionMessage(e), "damaged", label = nm)
    expect_error(coef(bad, lambda = lam), class = "rff_error", label = nm)
  }
  # intact, the stored lambda is the one used
  expect_equal(predict(cv, x[1:3, ]), predict(cv$fit, x[1:3, ], lambda = cv$lambda_min))
})
