# The acceptance rule of lengthscale = "ard" (ard_keep(), ard_paired_z() in
# R/ard.R) and the per-row leave-one-out errors it pairs (loo_path() with
# row_errors, R/model-solve.R), against base R: t.test() and refits
# without each row.

# Each row's weighted squared LOO residual w_i (y_i - yhat_(-i))^2 by
# refitting weighted ridge without it: the penalty sum(w) * lambda on the
# feature coefficients (the full data's, as the closed form of the linear
# smoother keeps it), an unpenalized intercept, solved by base R.
brute_loo_rows <- function(Z, y, lambda, w = rep(1, nrow(Z))) {
  n <- nrow(Z)
  X <- cbind(1, Z)
  P <- diag(c(0, rep(sum(w) * lambda, ncol(Z))))
  vapply(seq_len(n), function(i) {
    b <- solve(crossprod(X[-i, ], w[-i] * X[-i, ]) + P, crossprod(X[-i, ], w[-i] * y[-i]))
    w[i] * (y[i] - drop(X[i, ] %*% b))^2
  }, 0)
}

test_that("a scored fit's per-row LOO errors equal refits without each row", {
  set.seed(11)
  n <- 40
  x <- matrix(rnorm(2 * n), n)
  y <- sin(2 * x[, 1]) + x[, 2]^2 / 2 + rnorm(n, sd = 0.2)
  path <- rff:::check_path(NULL, 12, 1e-5)
  # D = 60 > n: the thin eigenproblem, rows known in closed form;
  # D = 20 < n: the D x D path, rows streamed through its eigenvectors
  for (w in list(NULL, runif(n, 0.2, 2))) {
    m <- list(x = x, y = matrix(y, dimnames = list(NULL, "y")), weights = w)
    for (D in c(60, 20)) {
      map <- rff_map(2, D = D, lengthscale = 1.3)
      f <- rff:::ridge_rows_fit(m, map, seq_len(n), path, TRUE, 256L, 1L, "loo",
                                score_only = TRUE, row_errors = TRUE)
      ww <- if (is.null(w)) rep(1, n) else w
      want <- brute_loo_rows(rff_features(x, map = map), y, f$lambda_best, ww)
      info <- paste("D =", D, if (is.null(w)) "unweighted" else "weighted")
      expect_equal(f$loo_row_errors, want, tolerance = 1e-7, info = info)
      # their weighted mean is the criterion the search compares
      expect_equal(sum(f$loo_row_errors) / sum(ww), f$loo[f$best], tolerance = 1e-12,
                   info = info)
    }
  }
  # a fit made for the user carries none
  fit <- rff_ridge(x, y, D = 20, lengthscale = 1.3, standardize = FALSE)
  expect_null(fit$loo_row_errors)
})

test_that("several responses: every response's LOO error at every lambda equals refits", {
  # the coded responses of rff_glm()'s search (one a class) are scored in
  # groups of responses, each response's fits at all lambdas side by side
  set.seed(13)
  n <- 30
  x <- matrix(rnorm(2 * n), n)
  Y <- cbind(a = sin(2 * x[, 1]), b = x[, 2]^2 + 3, c = x[, 1] * x[, 2] - 2) +
    matrix(rnorm(3 * n, sd = 0.2), n)
  path <- rff:::check_path(NULL, 4, 1e-4)
  # with the right-hand sides made once, and for each block of rows
  ns <- asNamespace("rff")
  mb <- get("loo_groups_mb", envir = ns)
  unlockBinding("loo_groups_mb", ns)
  on.exit({
    assign("loo_groups_mb", mb, envir = ns)
    lockBinding("loo_groups_mb", ns)
  })
  for (limit in c(mb, 0)) for (w in list(NULL, runif(n, 0.2, 2))) {
    assign("loo_groups_mb", limit, envir = ns)
    m <- list(x = x, y = Y, weights = w)
    ww <- if (is.null(w)) rep(1, n) else w
    for (D in c(50, 16)) {
      map <- rff_map(2, D = D, lengthscale = 1.1)
      Z <- rff_features(x, map = map)
      f <- rff:::ridge_rows_fit(m, map, seq_len(n), path, TRUE, 256L, 2L, "loo",
                                score_only = TRUE, row_errors = TRUE)
      info <- paste("D =", D, if (is.null(w)) "unweighted" else "weighted", "limit", limit)
      expect_identical(dim(f$loo), c(4L, 3L), info = info)
      want <- sapply(1:3, function(r) vapply(f$lambda, function(l) {
        sum(brute_loo_rows(Z, Y[, r], l, ww)) / sum(ww)
      }, 0))
      expect_equal(unname(f$loo), want, tolerance = 1e-7, info = info)
      rows <- Reduce(`+`, lapply(1:3, function(r) brute_loo_rows(Z, Y[, r], f$lambda_best, ww)))
      expect_equal(f$loo_row_errors, rows, tolerance = 1e-7, info = info)
    }
  }
})

test_that("the paired z statistic is t.test()'s paired t", {
  set.seed(12)
  a <- rexp(30)
  b <- a + rnorm(30, mean = 0.3)
  want <- unname(t.test(a, b, paired = TRUE)$statistic)
  expect_equal(rff:::ard_paired_z(a, b), want, tolerance = 1e-12)
  expect_equal(rff:::ard_paired_z(b, a), -want, tolerance = 1e-12)
  # nothing to pair: NA
  expect_identical(rff:::ard_paired_z(NULL, b), NA_real_)
  expect_identical(rff:::ard_paired_z(a, b[-1]), NA_real_)
  expect_identical(rff:::ard_paired_z(replace(a, 3, Inf), b), NA_real_)
  # equal differences: the sign alone
  expect_identical(rff:::ard_paired_z(a - 1, a), -Inf)
  expect_identical(rff:::ard_paired_z(a, a), Inf)
})

test_that("ARD is kept only when 3 standard errors better", {
  keep <- rff:::ard_keep
  expect_identical(rff:::ard_margin_se, 3)
  expect_true(keep(0.8, 1, -3))
  expect_true(keep(0.8, 1, -3.5))
  expect_false(keep(0.8, 1, -2.99))
  expect_false(keep(0.8, 1, 0.5))
  # a worse or non-finite score is never kept, whatever z says
  expect_false(keep(1.1, 1, -10))
  expect_false(keep(NaN, 1, -10))
  # without per-row errors (GCV): no worse is enough
  expect_true(keep(1, 1))
  expect_true(keep(0.9, 1, NA))
  expect_false(keep(1.1, 1, NA))
})

test_that("rff_ridge(lengthscale = 'ard') applies the rule to its paired LOO errors", {
  # one relevant input of three: ARD clearly better; one smooth function
  # of all three alike: it is not
  set.seed(13)
  n <- 300
  x <- matrix(runif(3 * n, -2, 2), n)
  y1 <- sin(2 * x[, 1]) + rnorm(n, sd = 0.1)
  y2 <- sin(x[, 1] + x[, 2] + x[, 3]) + rnorm(n, sd = 0.3)
  for (y in list(y1, y2)) {
    set.seed(14)
    fit <- rff_ridge(x, y, D = 200, lengthscale = "ard", progress = FALSE)
    a <- fit$lengthscale_search$ard
    expect_true(is.finite(a$z))
    expect_identical(a$kept, a$score <= a$score_isotropic && a$z <= -3)
    # the fit returned is the one the rule chose
    ls <- fit$map$lengthscale
    if (a$kept) {
      expect_equal(ls, unname(a$lengthscale))
    } else {
      expect_length(unique(ls), 1L)
    }
  }
  set.seed(14)
  f1 <- rff_ridge(x, y1, D = 200, lengthscale = "ard", progress = FALSE)
  expect_true(f1$lengthscale_search$ard$kept)
  set.seed(14)
  f2 <- rff_ridge(x, y2, D = 200, lengthscale = "ard", progress = FALSE)
  a2 <- f2$lengthscale_search$ard
  # a lower LOO error, but by less than 3 standard errors: not kept
  expect_lt(a2$score, a2$score_isotropic)
  expect_false(a2$kept)
  expect_match(capture.output(print(f2)), "not kept, not 3 standard errors", all = FALSE)
  out <- capture.output(print(f1))
  expect_match(out, "ARD .*: kept .*paired z", all = FALSE)
})
