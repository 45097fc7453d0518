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

test_that("\"auto\" scores its candidates on the map's first features between 400 and 2,000 rows", {
  m <- rff_map(3, D = 1000)
  sub <- rff:::auto_score_map(m, 401)
  expect_identical(sub$D, 400L)
  expect_identical(sub$omega, m$omega[, 1:200])
  expect_identical(rff:::auto_score_map(m, 400), m)
  expect_identical(rff:::auto_score_map(m, 2001), m)
  m4 <- rff_map(3, D = 400)
  expect_identical(rff:::auto_score_map(m4, 1000), m4)
  ph <- rff_map(3, D = 1000, variant = "phase")
  expect_identical(rff:::auto_score_map(ph, 500)$phase, ph$phase[1:400])
  ny <- rff_map(3, D = 500, sampler = "nystrom", landmarks = matrix(rnorm(1500), 500))
  expect_identical(rff:::auto_score_map(ny, 1000), ny)
  # a subsample of more rows: the first 1000 features of larger maps
  big <- rff_map(3, D = 2000)
  expect_identical(rff:::auto_score_map(big, 12000, subsampled = TRUE)$omega, big$omega[, 1:500])
  expect_identical(rff:::auto_score_map(big, 12000), big)
  expect_identical(rff:::auto_score_map(m, 12000, subsampled = TRUE), m)
  nyb <- rff_map(3, D = 1500, sampler = "nystrom", landmarks = matrix(rnorm(4500), 1500))
  expect_identical(rff:::auto_score_map(nyb, 12000, subsampled = TRUE), nyb)
})

test_that("\"auto\" on more than 10,000 rows: the rows 7 candidates afford, the same LOO rows for each", {
  ar <- rff:::auto_rows
  expect_identical(ar(10000L, 7L), 10000L)
  # 2 n D^2 / (7 scored^2) rows, at least 10,000, at most n
  expect_identical(ar(40455, 7L, 2134, 1000), 40455L)
  expect_identical(ar(40455, 7L, 1000, 1000), 11558L)
  expect_identical(ar(20000, 7L, 500, 500), 10000L)
  expect_identical(ar(1e6, 7L, 1414, 1000), as.integer(floor(2e6 * 1414^2 / 7e6)))
  # leave-one-out rows: all up to 5,000, else 5,000 evenly spaced, without
  # drawing random numbers (every candidate is scored on the same rows)
  lr <- rff:::loo_rows
  expect_identical(lr(4000), 1:4000)
  set.seed(1)
  seed <- .Random.seed
  r <- lr(12345)
  expect_identical(.Random.seed, seed)
  expect_identical(r, lr(12345))
  expect_length(r, 5000L)
  expect_identical(range(r), c(1, 12345))
  expect_lte(max(diff(r)), 3)
})

test_that("\"auto\" on 401 to 2,000 rows: candidates scored on 400 features, the winner fitted on all", {
  set.seed(62)
  n <- 450
  x <- matrix(rnorm(n * 2), n, 2)
  y <- sin(2 * x[, 1]) + x[, 2] + rnorm(n, sd = 0.3)
  set.seed(63)
  # D given: the winner is refitted on all of them, whatever it scores
  fit <- rff_ridge(x, y, D = 1000, progress = FALSE)
  s <- fit$lengthscale_search
  expect_null(s$features_check)
  expect_identical(fit$map$D, 1000L)
  expect_identical(s$features, 400L)
  chosen <- s$table$lengthscale[s$best]
  expect_identical(fit$map$lengthscale, chosen)
  # the base draws of the search: the map at lengthscale 1 from the same seed
  set.seed(63)
  base <- rff_map(2, D = 1000, lengthscale = 1)
  expect_identical(rff:::rescale_map(base, chosen)$omega, fit$map$omega)
  # each candidate's score: the smallest LOO error of the path on the first
  # 400 features of the same draws (from the eigenpairs of Z'Z above 1e-12
  # of the largest: equal to 1e-8)
  for (k in seq_len(nrow(s$table))) {
    l <- s$table$lengthscale[k]
    f <- rff_ridge(x, y, map = rff:::rescale_map(rff:::ard_submap(base, 400L), l),
                   progress = FALSE)
    expect_equal(s$table$loo[k], min(f$loo), tolerance = 1e-8)
    expect_equal(s$table$lambda[k], f$lambda_best)
  }
  # the fit: the whole map at the chosen lengthscale, its own lambda by LOO
  ref <- rff_ridge(x, y, map = rff:::rescale_map(base, chosen), progress = FALSE)
  expect_identical(fit$coefficients, ref$coefficients)
  expect_identical(fit$loo, ref$loo)
  expect_identical(fit$lambda_best, ref$lambda_best)
  expect_output(print(fit), "candidates scored on the first 400 of the 1000 features", fixed = TRUE)
  # the same search and fit on one thread
  set.seed(63)
  one <- rff_ridge(x, y, D = 1000, threads = 1L, progress = FALSE)
  expect_identical(one$lengthscale_search$table, s$table)
  expect_identical(one$coefficients, fit$coefficients)
  # below 401 rows: the whole map, as before
  set.seed(63)
  small <- rff_ridge(x[1:200, ], y[1:200], progress = FALSE)
  expect_identical(small$lengthscale_search$features, 1000L)
  expect_false(any(grepl("candidates scored", capture.output(print(small)))))
})

test_that("\"ard\" on 401 to 2,000 rows is scored on the isotropic candidates' features", {
  set.seed(64)
  n <- 420
  x <- matrix(rnorm(n * 4), n, 4)
  y <- sin(2 * x[, 1]) + rnorm(n, sd = 0.2)
  set.seed(65)
  fit <- rff_ridge(x, y, lengthscale = "ard", progress = FALSE)
  s <- fit$lengthscale_search
  expect_identical(s$features, 400L)
  set.seed(65)
  base <- rff_map(4, D = 1000, lengthscale = 1)
  ard <- rff_ridge(x, y, map = rff:::rescale_map(rff:::ard_submap(base, 400L),
                                                 unname(s$ard$lengthscale)),
                   progress = FALSE)
  expect_equal(s$ard$score, min(ard$loo), tolerance = 1e-10)
  # the inputs 2 to 4 are noise: the ARD lengthscales are kept (paired z
  # about -5.6 against the rule's -3), and the fit uses them with all the
  # features
  expect_true(s$ard$kept)
  expect_identical(fit$map$D, 1000L)
  ref <- rff_ridge(x, y, map = rff:::rescale_map(base, unname(s$ard$lengthscale)),
                   progress = FALSE)
  expect_identical(fit$coefficients, ref$coefficients)
})

test_that("with the default D, the winner on 400 features is the fit when its first 200 score within 1%", {
  expect_true(rff:::features_converged(1.0099, 1))
  expect_false(rff:::features_converged(1.0101, 1))
  expect_true(rff:::features_converged(0.9, 1))
  expect_false(rff:::features_converged(NA, 1))
  expect_false(rff:::features_converged(Inf, 1))
  expect_false(rff:::features_converged(1, NaN))
  set.seed(64)
  n <- 500
  x <- matrix(rnorm(n * 2), n, 2)
  xn <- matrix(rnorm(20), 10, 2)
  # a smooth function: 200 features do as well as 400
  y <- x[, 1] + 0.5 * x[, 2] + rnorm(n, sd = 0.5)
  set.seed(65)
  fit <- rff_ridge(x, y, progress = FALSE)
  s <- fit$lengthscale_search
  expect_identical(fit$map$D, 400L)
  expect_identical(names(s$features_check), c("200", "400"))
  expect_identical(s$features_check[[2L]], min(s$table$loo))
  set.seed(65)
  base <- rff_map(2, D = 1000, lengthscale = 1)
  chosen <- s$table$lengthscale[s$best]
  half <- rff_ridge(x, y, map = rff:::rescale_map(rff:::ard_submap(base, 200L), chosen),
                    progress = FALSE)
  expect_equal(s$features_check[[1L]], min(half$loo), tolerance = 1e-8)
  expect_lte(s$features_check[[1L]], 1.01 * s$features_check[[2L]])
  # the fit: the first 400 features at the chosen lengthscale (its
  # eigenpairs above 1e-12 of the largest), as fitted directly
  ref <- rff_ridge(x, y, map = rff:::rescale_map(rff:::ard_submap(base, 400L), chosen),
                   progress = FALSE)
  expect_identical(fit$map$omega, ref$map$omega)
  expect_identical(fit$lambda_best, ref$lambda_best)
  expect_equal(fit$loo, ref$loo, tolerance = 1e-8)
  expect_equal(predict(fit, xn), predict(ref, xn), tolerance = 1e-7)
  expect_equal(fitted(fit), fitted(ref), tolerance = 1e-7)
  expect_output(print(fit), "kept the 400 features (LOO", fixed = TRUE)
  # a wiggly function: 400 features score clearly better than 200, and the
  # winner is refitted with the default D
  y2 <- sin(3 * x[, 1]) * cos(3 * x[, 2]) + rnorm(n, sd = 0.05)
  set.seed(66)
  fit2 <- rff_ridge(x, y2, progress = FALSE)
  s2 <- fit2$lengthscale_search
  expect_gt(s2$features_check[[1L]], 1.01 * s2$features_check[[2L]])
  expect_identical(fit2$map$D, 1000L)
  expect_output(print(fit2), "refitted with all features", fixed = TRUE)
  # "ard" keeps to the whole map
  set.seed(67)
  expect_null(rff_ridge(x, y, lengthscale = "ard", progress = FALSE)$lengthscale_search$features_check)
})

test_that("rff_glm() with the default D fits on the 400 features its search kept", {
  set.seed(68)
  n <- 450
  x <- matrix(rnorm(n * 2), n, 2)
  y <- rbinom(n, 1, plogis(x[, 1] - x[, 2]))
  foldid <- rep_len(1:5, n)
  set.seed(69)
  fit <- rff_glm(x, y, foldid = foldid, progress = FALSE)
  s <- fit$lengthscale_search
  fc <- s$features_check
  expect_identical(names(fc), c("200", "400"))
  expect_lte(fc[[1L]], 1.01 * fc[[2L]])
  expect_identical(fit$map$D, 400L)
  # the same GLM as on those features given as the map
  set.seed(69)
  base <- rff_map(2, D = 1000, lengthscale = 1)
  map <- rff:::rescale_map(rff:::ard_submap(base, 400L), s$table$lengthscale[s$best])
  expect_identical(fit$map$omega, map$omega)
  ref <- rff_glm(x, y, map = map, foldid = foldid, progress = FALSE)
  expect_identical(fit$coefficients, ref$coefficients)
  expect_identical(fit$lambda_best, ref$lambda_best)
  expect_output(print(fit), "kept the 400 features (ridge LOO", fixed = TRUE)
  # D given: all of them
  set.seed(69)
  all <- rff_glm(x, y, D = 1000, foldid = foldid, progress = FALSE)
  expect_identical(all$map$D, 1000L)
  expect_null(all$lengthscale_search$features_check)
})

test_that("the leave-one-out projections of a block of rows equal base R's product on any threads", {
  set.seed(70)
  Z <- matrix(rnorm(300 * 40), 300, 40)
  V <- matrix(rnorm(40 * 260), 40, 260)
  P <- .Call(rff:::C_rff_ridge_project, Z, V, 2L)
  expect_equal(P, Z %*% V, tolerance = 1e-13)
  expect_identical(.Call(rff:::C_rff_ridge_project, Z, V, 1L), P)
  expect_identical(dim(.Call(rff:::C_rff_ridge_project, Z[, 0], V[0, ], 1L)), c(300L, 260L))
  expect_error(.Call(rff:::C_rff_ridge_project, Z, t(V), 1L), "rows")
})

test_that("the leave-one-out sums of a block of rows are those of base R", {
  # rows 2..5 of y, responses 3 and 1, 3 lambdas; leverages times the
  # weights, one of them at 1 (an infinite error), a row of weight 0
  set.seed(71)
  b <- 4; L <- 3
  y <- matrix(rnorm(8 * 3), 8, 3)
  rows <- 2:5
  cols <- c(3L, 1L)
  f <- matrix(rnorm(b * L * 2), b, L * 2)
  w <- c(1, 2.5, 0, 0.5)
  h <- w * matrix(runif(b * L, 0, 0.4), b, L)
  h[2, 3] <- 1
  ybar <- c(0.3, -1, 2)
  acc <- matrix(rnorm(b * L), b, L)
  got <- .Call(rff:::C_rff_loo_block, f, y, rows, cols, w, h, ybar, acc)
  sse <- numeric(L * 2)
  per_row <- acc
  for (j in 1:2) for (l in 1:L) {
    res <- (y[rows, cols[j]] - ybar[cols[j]] - f[, (j - 1) * L + l]) / (1 - h[, l])
    res[h[, l] >= 1 - 1e-12] <- Inf
    sse[(j - 1) * L + l] <- sum(w * res^2)
    per_row[, l] <- per_row[, l] + w * res^2
  }
  expect_equal(got[[1L]], sse, tolerance = 1e-14)
  expect_equal(got[[2L]], per_row, tolerance = 1e-14)
  expect_identical(got[[1L]][6], Inf)
  # without means or per-row sums
  got0 <- .Call(rff:::C_rff_loo_block, f, y, rows, cols, w, h, NULL, NULL)
  expect_null(got0[[2L]])
  expect_equal(got0[[1L]][1], sum(w * ((y[rows, 3] - f[, 1]) / (1 - h[, 1]))^2),
               tolerance = 1e-14)
  expect_error(.Call(rff:::C_rff_loo_block, f, y, c(2L, 3L, 4L, 9L), cols, w, h, NULL, NULL),
               "rows")
  expect_error(.Call(rff:::C_rff_loo_block, f, y, rows, c(1L, 4L), w, h, NULL, NULL), "cols")
  expect_error(.Call(rff:::C_rff_loo_block, f[, 1:5], y, rows, cols, w, h, NULL, NULL),
               "dimensions")
})
