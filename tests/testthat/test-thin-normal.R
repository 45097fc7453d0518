# The thin eigenproblem of fewer rows than features: the n x n Gram
# matrix's eigenpairs by rff_gram_eigen() (src/eigen.c: only the kept
# eigenvectors formed, their back transformation in panels of 64 columns;
# or the low-rank route of a pivoted Cholesky factor), and the fits that
# keep their normal equations as A = M'U U'M (normal_matrix()) instead of
# the D x D statistics, against eigen(), rff_stats() and base R.

# Entries of `a` within `tol` of the largest of `b` from those of `b`.
expect_close <- function(a, b, tol) {
  expect_equal(dim(a), dim(b))
  expect_lte(max(abs(a - b)), tol * max(abs(b)))
}

# U diag(s) U' and the eigenvectors up to sign against eigen()'s kept ones.
expect_eigen_of <- function(got, K, tol = 1e-9) {
  ref <- eigen(K, symmetric = TRUE)
  keep <- ref$values > max(ref$values, 0) * 1e-12
  k <- sum(keep)
  expect_length(got$values, k)
  expect_identical(dim(got$left), c(nrow(K), k))
  if (k == 0L) return(invisible())
  top <- max(ref$values)
  expect_close(got$values, ref$values[keep], tol)
  expect_true(all(diff(got$values) <= 0))
  expect_equal(crossprod(got$left), diag(k), tolerance = 1e-10, ignore_attr = TRUE)
  expect_close(got$left %*% (got$values * t(got$left)),
               ref$vectors[, keep, drop = FALSE] %*% (ref$values[keep] * t(ref$vectors[, keep, drop = FALSE])),
               tol)
  # each vector up to its sign, where its eigenvalue stands apart from the others
  gap <- c(Inf, -diff(ref$values[keep]))
  apart <- pmin(gap, c(gap[-1L], Inf)) > 1e-3 * top
  dots <- abs(colSums(got$left * ref$vectors[, keep, drop = FALSE]))
  expect_equal(dots[apart], rep(1, sum(apart)), tolerance = 1e-8)
}

test_that("the Gram matrix's eigenpairs equal eigen()'s kept ones, on any number of threads", {
  set.seed(71)
  # n around the panels of 64 back-transformed columns, full rank and a
  # smooth kernel's Gram matrix with most eigenvalues below 1e-12 of the top
  for (n in c(1L, 2L, 5L, 64L, 65L, 128L, 129L, 300L)) {
    full <- tcrossprod(matrix(rnorm(n * (n + 3)), n))
    x <- matrix(rnorm(n * 2), n)
    smooth <- tcrossprod(cos(x %*% matrix(rnorm(2 * 300, sd = 0.2), 2) + runif(300, 0, 2 * pi)))
    for (K in list(full, smooth)) {
      one <- rff:::gram_eigen(K, 1L)
      expect_eigen_of(one, K)
      two <- rff:::gram_eigen(K, 2L)
      expect_identical(two, one)
    }
  }
  # the smooth kernel's matrix keeps few: only those vectors are formed
  expect_lt(length(rff:::gram_eigen(smooth)$values), 100)
  # nothing positive: nothing kept; an indefinite matrix keeps its positive part
  z <- rff:::gram_eigen(matrix(0, 3, 3))
  expect_length(z$values, 0)
  expect_identical(dim(z$left), c(3L, 0L))
  Q <- qr.Q(qr(matrix(rnorm(16), 4)))
  ind <- Q %*% diag(c(3, 1, -2, 1e-14)) %*% t(Q)
  ind <- (ind + t(ind)) / 2
  e <- rff:::gram_eigen(ind)
  expect_equal(e$values, c(3, 1), tolerance = 1e-12)
  expect_equal(abs(colSums(e$left * Q[, 1:2])), c(1, 1), tolerance = 1e-10)
  # the whole problem by eigen() (the fallback) is the same
  expect_equal(rff:::gram_eigen_full(full)$values, rff:::gram_eigen(full)$values,
               tolerance = 1e-10)
})

test_that("the low-rank route of a Gram matrix (pivoted Cholesky) gives eigen()'s kept eigenpairs", {
  set.seed(74)
  for (n in c(6L, 60L, 300L, 700L)) {
    x <- matrix(rnorm(n * 2), n)
    for (sd in c(0.1, 0.3)) {
      Z <- cos(x %*% matrix(rnorm(2 * 400, sd = sd), 2) + runif(400, 0, 2 * pi))
      K <- tcrossprod(Z - rep(colMeans(Z), each = n))
      one <- rff:::gram_eigen(K, 1L, low_rank = TRUE)
      expect_eigen_of(one, K)
      expect_identical(rff:::gram_eigen(K, 2L, low_rank = TRUE), one)
    }
  }
  # the rank of these smooth kernels is far below n / 3: the route is taken
  # (its vectors differ from the tridiagonal route's by rounding)
  expect_lt(length(one$values), 700 / 3)
  expect_false(identical(one, rff:::gram_eigen(K, 1L)))
  # full rank: the tridiagonal route, exactly
  full <- tcrossprod(matrix(rnorm(60 * 70), 60))
  expect_identical(rff:::gram_eigen(full, 2L, low_rank = TRUE), rff:::gram_eigen(full, 2L))
  # a residual whose diagonal is below the pivots' tolerance but whose
  # eigenvalue is not below 1e-12 of the largest (the dropped trace is too
  # large): the tridiagonal route, which keeps it
  n <- 600
  K <- matrix(0, n, n)
  K[1, 1] <- 1
  K[-1, -1] <- 0.9e-14
  e <- rff:::gram_eigen(K, 1L, low_rank = TRUE)
  expect_eigen_of(e, K, tol = 1e-12)
  expect_length(e$values, 2L)
  expect_identical(e, rff:::gram_eigen(K, 1L))
  # not positive semidefinite (a residual diagonal turns negative): the
  # tridiagonal route, which keeps the positive part
  Q <- qr.Q(qr(matrix(rnorm(30 * 30), 30)))
  ind <- Q %*% diag(c(5, 2, -4, rep(0, 27))) %*% t(Q)
  ind <- (ind + t(ind)) / 2
  expect_identical(rff:::gram_eigen(ind, 1L, low_rank = TRUE), rff:::gram_eigen(ind, 1L))
  expect_equal(rff:::gram_eigen(ind, 1L, low_rank = TRUE)$values, c(5, 2), tolerance = 1e-12)
  # nothing positive on the diagonal
  expect_length(rff:::gram_eigen(matrix(0, 9, 9), low_rank = TRUE)$values, 0L)
})

test_that("a fit on fewer rows than features keeps A = M'U U'M, the D x D statistics' matrix", {
  set.seed(72)
  n <- 60
  D <- 150
  x <- matrix(rnorm(n * 2), n, 2)
  y <- sin(2 * x[, 1]) + x[, 2] + rnorm(n, sd = 0.2)
  # a lengthscale at which no eigenvalue of the centred Gram matrix but the
  # one of its constant direction (0) is below 1e-12 of the largest: the
  # thin eigenproblem holds all of A
  m <- rff_map(2, D = D, lengthscale = 0.5)
  Z <- unclass(rff_features(x, map = m))[, ]
  # weights of largest 1, which the fit keeps as they are (it divides by the largest)
  for (w in list(NULL, runif(n, 0.2, 3) / 3)) {
    if (!is.null(w)) w <- w / max(w)
    fit <- rff_ridge(x, y, map = m, weights = w, standardize = FALSE, progress = FALSE)
    expect_null(fit$normal$A)
    expect_length(fit$normal$thin$values, n - 1L)
    # the weighted centred features and the left vectors, no D x r vectors
    expect_null(fit$normal$thin$vectors)
    expect_equal(dim(fit$normal$thin$left), c(n, length(fit$normal$thin$values)))
    ww <- if (is.null(w)) rep(1, n) else w
    expect_close(fit$normal$thin$features,
                 (Z - rep(colSums(Z * ww) / sum(ww), each = n)) * sqrt(ww), 1e-12)
    ref <- rff:::normal_equations(rff_stats(x, y, map = m, weights = w))
    A <- rff:::normal_matrix(fit$normal)
    expect_close(A, ref$A, 1e-10)
    # the path from the statistics: the same coefficients, criteria and
    # intercepts (the coefficients of the smallest lambdas are
    # ill-conditioned: the first half of the path)
    p <- rff:::solve_path(ref, fit$lambda)
    half <- seq_len(25)
    expect_equal(fit$coefficients[, half], p$beta[, 1, half], tolerance = 1e-7)
    expect_equal(fit$intercept[half], p$intercept[1, half], tolerance = 1e-7)
    expect_equal(fit$df, p$df, tolerance = 1e-8)
    expect_equal(fit$rss, drop(p$rss), tolerance = 1e-8)
    # off the path (one value and several): the ridge solution in base R
    ww <- if (is.null(w)) rep(1, n) else w
    W <- sum(ww)
    Zc <- Z - rep(colSums(Z * ww) / W, each = n)
    yc <- y - sum(y * ww) / W
    for (lam in list(0.0123, c(0.05, 0.002))) {
      b <- sapply(lam, function(l) solve(crossprod(Zc * ww, Zc) + W * l * diag(D), crossprod(Zc * ww, yc)))
      got <- coef(fit, lambda = lam)
      expect_equal(unname(drop(as.matrix(got)[-1, ])), unname(drop(b)), tolerance = 1e-7)
    }
    # vcov() and the prediction standard errors from sigma^2 (A + W lambda I)^-1
    i <- fit$best
    s2 <- fit$rss[i] / (fit$n - fit$df[i])
    Minv <- solve(crossprod(Zc * ww, Zc) + W * fit$lambda[i] * diag(D))
    V <- vcov(fit)
    expect_close(unname(V[-1, -1]), s2 * Minv, 1e-7)
    xn <- matrix(rnorm(10), 5, 2)
    zn <- unclass(rff_features(xn, map = m))[, ] - rep(colSums(Z * ww) / W, each = 5)
    se <- predict(fit, xn, se.fit = TRUE)$se.fit
    expect_equal(unname(se), sqrt(s2 * (rowSums((zn %*% Minv) * zn) + 1 / W)), tolerance = 1e-7)
  }
})

test_that("a damaged thin eigenproblem in a fit is an error naming `object`", {
  set.seed(73)
  x <- matrix(rnorm(80), 40)
  y <- x[, 1] + rnorm(40, sd = 0.1)
  fit <- rff_ridge(x, y, D = 100, lengthscale = 1, progress = FALSE)
  expect_false(is.null(fit$normal$thin))
  bad <- fit
  bad$normal$thin$features[1, 1] <- NaN
  e <- expect_error(predict(bad, x[1:3, ], lambda = 0.0123), class = "rff_error")
  expect_identical(e$arg, "object")
  bad <- fit
  bad$normal$thin$left <- bad$normal$thin$left[-1, ]
  e <- expect_error(predict(bad, x[1:3, ], lambda = 0.0123), class = "rff_error")
  expect_identical(e$arg, "object")
  bad <- fit
  bad$normal$thin$features <- bad$normal$thin$features[, -1]
  expect_error(predict(bad, x[1:3, ]), class = "rff_error")
  bad <- fit
  bad$normal$thin$values <- bad$normal$thin$values[-1]
  expect_error(predict(bad, x[1:3, ]), class = "rff_error")
  # neither the matrix nor its eigenproblem
  bad <- fit
  bad$normal$thin <- NULL
  e <- expect_error(predict(bad, x[1:3, ], lambda = 0.0123), class = "rff_error")
  expect_identical(e$arg, "object")
  e <- expect_error(vcov(bad), class = "rff_error")
  expect_match(conditionMessage(e), "`object` is damaged")
  # lambda = 0: Z'Z has rank below D, singular as from the statistics
  e <- expect_error(predict(fit, x[1:3, ], lambda = 0), class = "rff_error")
  expect_identical(e$arg, "lambda")
  expect_match(conditionMessage(e), "singular")
  e2 <- expect_error(predict(rff_ridge(rff_stats(x, y, map = fit$map)), x[1:3, ], lambda = 0),
                     class = "rff_error")
  expect_identical(e2$arg, "lambda")
  # also where the features of the rows have full rank n (no intercept, a
  # short lengthscale): rank n < D
  raw <- rff_ridge(x, y, D = 100, lengthscale = 0.3, intercept = FALSE, standardize = FALSE,
                   progress = FALSE)
  expect_length(raw$normal$thin$values, 40L)
  e3 <- expect_error(predict(raw, x[1:3, ], lambda = 0), class = "rff_error")
  expect_identical(e3$arg, "lambda")
})

test_that("features that overflow in a fit on fewer rows than features are an error naming `x`", {
  set.seed(74)
  x <- matrix(rnorm(20), 10)
  y <- rnorm(10)
  # arc-cosine features of order 1 grow with |x|; 10 rows, 40 features
  for (ls in list(1, "auto")) {
    e <- expect_error(rff_ridge(x * 1e300, y, D = 40, kernel = "arccos", lengthscale = ls,
                                standardize = FALSE, progress = FALSE), class = "rff_error")
    expect_identical(e$arg, "x")
    expect_match(conditionMessage(e), "overflow")
  }
})

test_that("a candidate only scored keeps A's eigenpairs above 1e-12 of the largest: the same criteria", {
  set.seed(75)
  n <- 300
  D <- 120
  x <- matrix(rnorm(n * 2), n, 2)
  y <- cbind(sin(2 * x[, 1]) + rnorm(n, sd = 0.2), x[, 2])
  md <- list(x = x, y = y, weights = runif(n))
  # a long lengthscale: most of A's eigenvalues are below 1e-12 of the top
  m <- rff_map(2, D = D, lengthscale = 3)
  path <- rff:::check_path(NULL, 30, 1e-6)
  fit <- function(...) rff:::ridge_rows_fit(md, m, seq_len(n), path, TRUE, 64L, 1L, "loo",
                                            score_only = TRUE, ...)
  full <- fit()
  part <- fit(partial = TRUE)
  A <- rff:::normal_equations(rff_stats(x, y, map = m, weights = md$weights))$A
  ev <- eigen(A, symmetric = TRUE, only.values = TRUE)$values
  expect_lt(sum(ev > 1e-12 * ev[1]), D / 2)
  for (f in c("lambda", "df", "rss", "gcv", "loo", "lambda_best", "best")) {
    expect_equal(part[[f]], full[[f]], tolerance = 1e-8, info = f)
  }
  # a single lambda, or a fit that is not only scored: the whole problem
  one <- rff:::check_path(0.01, 1, 1e-6)
  expect_identical(rff:::ridge_rows_fit(md, m, seq_len(n), one, TRUE, 64L, 1L, "loo",
                                        score_only = TRUE, partial = TRUE)$coefficients,
                   rff:::ridge_rows_fit(md, m, seq_len(n), one, TRUE, 64L, 1L, "loo",
                                        score_only = TRUE)$coefficients)
  expect_identical(rff:::ridge_rows_fit(md, m, seq_len(n), path, TRUE, 64L, 1L, "loo",
                                        partial = TRUE)$coefficients,
                   rff:::ridge_rows_fit(md, m, seq_len(n), path, TRUE, 64L, 1L, "loo")$coefficients)
})

test_that("the search asks for kept eigenpairs only of candidates it does not refit", {
  seen <- function(n, D) {
    m <- list(x = matrix(rnorm(n), n, 1), weights = NULL, median = 2,
              map = rff_map(1, D = D, lengthscale = 1))
    got <- logical()
    fit_rows <- function(map, rows, score_only, partial = FALSE, ...) {
      got <<- c(got, partial)
      list(criterion = "LOO", loo = abs(log(map$lengthscale / 2)), best = 1L,
           lambda_best = 1, normal = list(A = 1))
    }
    rff:::select_lengthscale(m, fit_rows)
    unique(got)
  }
  set.seed(76)
  expect_identical(seen(300, 1000), FALSE)   # every feature, every row: the winner is the fit
  expect_identical(seen(500, 1000), TRUE)    # the first 400 features
  expect_identical(seen(3000, 1000), FALSE)
  expect_identical(seen(12000, 100), TRUE)   # a subsample of the rows
})
