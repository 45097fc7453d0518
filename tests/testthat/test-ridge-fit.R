# The shortcuts of the ridge fits from rows (R/ridge-fit.R) and of their
# thin path (solve_path() in R/model-solve.R), against the slow computations
# they replace.

test_that("a thin path's coefficients from its features equal the D x D eigen solve and base R", {
  # fewer rows than features: the path is solved from the n x n problem and
  # its coefficients are M'(U S^-1/2 diag(1 / (s + W lambda)) u), without
  # the D x r eigenvectors; the reference solves the D x D problem
  set.seed(61)
  n <- 30
  D <- 80
  x <- matrix(rnorm(n * 2), n, 2)
  y <- cbind(a = sin(2 * x[, 1]) + rnorm(n, sd = 0.2), b = x[, 2]^2)
  lambda <- c(1e-1, 1e-3, 1e-5)
  m <- rff_map(2, D = D, lengthscale = 1.1)
  Z <- unclass(rff_features(x, map = m))[, ]
  for (w in list(NULL, runif(n, 0.2, 3))) {
    st <- rff_stats(x, y, map = m, weights = w)
    sys <- rff:::normal_equations(st)
    ref <- rff:::solve_path(sys, lambda)
    e <- rff:::thin_eigen(Z, sys$zbar, w, vectors = FALSE)
    e$features <- rff:::weighted_centred(Z, sys$zbar, w)
    e$threads <- 1L
    p <- rff:::solve_path(sys, lambda, e)
    expect_equal(p$beta, ref$beta, tolerance = 1e-7)
    expect_equal(p$intercept, ref$intercept, tolerance = 1e-7)
    expect_equal(p$df, ref$df, tolerance = 1e-8)
    expect_equal(p$rss, ref$rss, tolerance = 1e-8)
    e$threads <- 2L
    expect_identical(rff:::solve_path(sys, lambda, e)$beta, p$beta)
    # base R: (Zc'WZc + W lambda I)^-1 Zc'W yc at the middle lambda
    ww <- if (is.null(w)) rep(1, n) else w
    W <- sum(ww)
    Zc <- Z - rep(colSums(Z * ww) / W, each = n)
    yc <- y - rep(colSums(y * ww) / W, each = n)
    b <- solve(crossprod(Zc * ww, Zc) + W * lambda[2] * diag(D), crossprod(Zc * ww, yc))
    expect_equal(p$beta[, , 2], b, tolerance = 1e-7, ignore_attr = TRUE)
  }
  # and a default fit on fewer rows than features agrees with its D x D solve
  fit <- rff_ridge(x, y[, 1], lambda = lambda, map = m, standardize = FALSE, progress = FALSE)
  ref <- rff:::solve_path(rff:::normal_equations(rff_stats(x, y[, 1], map = m)), lambda)
  expect_equal(unname(fit$coefficients), matrix(ref$beta, D), tolerance = 1e-7)
})
