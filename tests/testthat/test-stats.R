test_that("statistics equal their base-R definitions", {
  set.seed(5)
  x <- matrix(rnorm(300), 100, 3)
  y <- cbind(rnorm(100, mean = 1e4), rnorm(100))
  m <- rff_map(3, D = 16, variant = "phase")
  s <- rff_stats(x, y, m, chunk_size = 30)
  Z <- unclass(rff_features(x, map = m))[, ]
  yc <- sweep(y, 2, s$yshift)
  expect_equal(s$n, 100)
  expect_equal(s$ZtZ, crossprod(Z), tolerance = 1e-13)
  expect_equal(s$Zty, crossprod(Z, yc), tolerance = 1e-12)
  expect_equal(s$zsum, colSums(Z), tolerance = 1e-13)
  expect_equal(s$yshift, colMeans(y), tolerance = 1e-15)
  expect_equal(s$ysum, colSums(yc), tolerance = 1e-8)
  expect_equal(s$yty, colSums(yc^2), tolerance = 1e-12)
  expect_output(print(s), "100 rows, 16 features, 2 responses")
  expect_equal(nobs(s), 100)
})

test_that("statistics equal base R for D > 128 and chunks with a partial last one", {
  # D x D in column blocks of 128 (dsyrk on the diagonal, dgemm above it),
  # rows in chunks of 64 (the last of 300 rows has 44), for every variant,
  # sampler and kernel family
  set.seed(9)
  n <- 300
  x <- matrix(rnorm(n * 3), n, 3)
  y <- cbind(rnorm(n, mean = 50), x[, 1]^2)
  maps <- list(rff_map(3, D = 300), rff_map(3, D = 261, variant = "phase"),
               rff_map(3, D = 300, sampler = "orthogonal", kernel = "matern", nu = 2.5),
               rff_map(3, D = 258, sampler = "qmc", kernel = "laplace", variant = "phase"))
  for (m in maps) {
    s <- rff_stats(x, y, m, chunk_size = 64)
    Z <- ref_features(x, m)
    yc <- sweep(y, 2, colMeans(y))
    expect_identical(s$yshift, colMeans(y))
    # two sums of n products, each within n eps sum |a_i b_i| (the features
    # themselves agree to a few units in the last place)
    bound <- function(a, b) 2 * n * .Machine$double.eps * crossprod(abs(a), abs(b))
    expect_true(all(abs(s$ZtZ - crossprod(Z)) <= bound(Z, Z)), label = m$sampler)
    # y less its column means, as the C code shifts it
    expect_true(all(abs(s$Zty - crossprod(Z, yc)) <= bound(Z, yc)), label = m$sampler)
    expect_true(all(abs(s$zsum - colSums(Z)) <= drop(bound(Z, rep(1, n)))), label = m$sampler)
    expect_equal(s$ysum, colSums(yc), tolerance = 1e-8)
    expect_equal(s$yty, colSums(yc^2), tolerance = 1e-12)
  }
  # arc-cosine features, the same path through the dgemm projection
  m <- rff_map(3, D = 300, kernel = "arccos", order = 1)
  s <- rff_stats(x, y[, 1], m, chunk_size = 64)
  P <- x %*% m$omega
  Z <- sqrt(2 / 300) * cbind(pmax(P, 0), pmax(-P, 0))
  expect_true(all(abs(s$ZtZ - crossprod(Z)) <= 2 * n * .Machine$double.eps * crossprod(abs(Z))))
})

test_that("statistics of disjoint blocks combine to the fit on all rows", {
  set.seed(6)
  n <- 240
  x <- matrix(runif(n * 2), n, 2)
  y <- 50 + sin(6 * x[, 1]) + x[, 2] + rnorm(n, sd = 0.1)
  m <- rff_map(2, D = 40, lengthscale = 0.4)
  blocks <- split(seq_len(n), rep(1:3, c(17, 100, 123)))
  parts <- lapply(blocks, function(i) rff_stats(x[i, ], y[i], m))
  all_rows <- rff_stats(x, y, m)
  for (combined in list(do.call(c, unname(parts)), parts[[1]] + parts[[2]] + parts[[3]])) {
    expect_equal(combined$n, n)
    for (f in c("ZtZ", "Zty", "zsum", "ysum", "yty", "yshift")) {
      expect_equal(combined[[f]], all_rows[[f]], tolerance = 1e-10, label = f)
    }
    for (lam in c(1e-5, 1e-2)) {
      direct <- rff_ridge(x, y, lambda = lam, map = m, progress = FALSE, standardize = FALSE)
      fit <- rff_ridge(combined, lambda = lam)
      expect_equal(fit$coefficients, direct$coefficients, tolerance = 1e-10)
      expect_equal(fit$intercept, direct$intercept, tolerance = 1e-10)
      expect_equal(fit$gcv, direct$gcv, tolerance = 1e-10)
    }
    path <- rff_ridge(combined, nlambda = 10)
    expect_equal(path$lambda, rff_ridge(x, y, map = m, nlambda = 10, progress = FALSE, standardize = FALSE)$lambda,
                 tolerance = 1e-10)
  }
  # order does not matter; intercept = FALSE statistics stay uncentered
  expect_equal(c(parts[[3]], parts[[1]], parts[[2]])$ZtZ, all_rows$ZtZ, tolerance = 1e-12)
  s0 <- c(rff_stats(x[1:100, ], y[1:100], m, intercept = FALSE),
          rff_stats(x[-(1:100), ], y[-(1:100)], m, intercept = FALSE))
  expect_equal(rff_ridge(s0, lambda = 1e-3)$coefficients,
               rff_ridge(x, y, lambda = 1e-3, map = m, intercept = FALSE,
                         progress = FALSE, standardize = FALSE)$coefficients, tolerance = 1e-10)
})

test_that("a fit spread over a PSOCK cluster equals the fit on all rows", {
  set.seed(7)
  n <- 400
  x <- matrix(rnorm(n * 3), n, 3)
  y <- x[, 1] * x[, 2] + rnorm(n, sd = 0.1)
  m <- rff_map(3, D = 50, lengthscale = 1.5)
  cl <- parallel::makeCluster(2)
  on.exit(parallel::stopCluster(cl))
  # workers load rff from the library this session loaded it from; a wrapper,
  # since a serialized .libPaths closure would change only its own copy
  libs <- c(normalizePath(dirname(find.package("rff"))), .libPaths())
  parallel::clusterCall(cl, function(p) invisible(.libPaths(p)), libs)
  parallel::clusterEvalQ(cl, library(rff))
  blocks <- split(seq_len(n), rep(1:4, each = n / 4))
  parts <- parallel::parLapply(cl, blocks, function(i, xs, ys, m) {
    rff_stats(xs[i, , drop = FALSE], ys[i], m, threads = 1)
  }, xs = x, ys = y, m = m)
  fit <- rff_ridge(do.call(c, unname(parts)), lambda = 1e-3)
  direct <- rff_ridge(x, y, lambda = 1e-3, map = m, progress = FALSE, standardize = FALSE)
  expect_equal(fit$coefficients, direct$coefficients, tolerance = 1e-10)
  expect_equal(fit$intercept, direct$intercept, tolerance = 1e-10)
  expect_equal(predict(fit, x[1:5, ]), predict(direct, x[1:5, ]), tolerance = 1e-10)
})

test_that("combining mismatched statistics is an rff_error", {
  set.seed(8)
  x <- matrix(rnorm(40), 20, 2)
  y <- rnorm(20)
  m1 <- rff_map(2, D = 6)
  m2 <- rff_map(2, D = 6)
  s1 <- rff_stats(x, y, m1)
  expect_error(c(s1, rff_stats(x, y, m2)), "different maps", class = "rff_error")
  expect_error(s1 + rff_stats(x, y, m2), "different maps", class = "rff_error")
  expect_error(c(s1, rff_stats(x, cbind(y, y), m1)), "responses", class = "rff_error")
  expect_error(c(s1, rff_stats(x, y, m1, intercept = FALSE)), "intercept", class = "rff_error")
  expect_error(c(s1, list(1)), class = "rff_error")
  expect_error(rff_stats(x, y), "map", class = "rff_error")
  expect_error(rff_stats(x, y[-1], m1), "`y`", class = "rff_error")
  expect_error(rff_stats(x, y, m1, chunk_size = 0.5), "`chunk_size`", class = "rff_error")
  expect_error(rff_stats(x[, 1], y, m1), "`x`", class = "rff_error")
  expect_error(rff_ridge.rff_stats(list()), "`x`", class = "rff_error")
})

test_that("weighted statistics are Z'WZ, Z'Wy and weighted sums, and combine", {
  set.seed(41)
  x <- matrix(rnorm(80), 40, 2)
  y <- x[, 1] + rnorm(40)
  w <- runif(40, 0, 3)
  w[5] <- 0
  m <- rff_map(2, D = 8, variant = "phase")
  Z <- unclass(rff_features(x, map = m))[, ]
  s <- rff_stats(x, y, m, weights = w)
  yc <- y - s$yshift
  expect_equal(s$ZtZ, crossprod(Z * w, Z), tolerance = 1e-12)
  expect_equal(drop(s$Zty), drop(crossprod(Z, w * yc)), tolerance = 1e-12)
  expect_equal(s$zsum, colSums(w * Z), tolerance = 1e-12)
  expect_equal(s$ysum, sum(w * yc), tolerance = 1e-10)
  expect_equal(s$yty, sum(w * yc^2), tolerance = 1e-12)
  expect_equal(s$wsum, sum(w))
  expect_identical(s$n, 39L)
  halves <- c(rff_stats(x[1:15, ], y[1:15], m, weights = w[1:15]),
              rff_stats(x[-(1:15), ], y[-(1:15)], m, weights = w[-(1:15)]))
  expect_equal(coef(rff_ridge(halves, lambda = 1e-3)), coef(rff_ridge(s, lambda = 1e-3)),
               tolerance = 1e-10)
  expect_equal(coef(rff_ridge(s, lambda = 1e-3)),
               coef(rff_ridge(x, y, lambda = 1e-3, map = m, weights = w, standardize = FALSE,
                              progress = FALSE)), tolerance = 1e-10)
  expect_error(rff_stats(x, y, m, weights = c(-1, w[-1])), "`weights`", class = "rff_error")
})

test_that("with more responses than features the statistics are still Z'WZ, Z'Wy and the sums", {
  # q <= D: the responses join the rank-k update of the features; q > D:
  # Z'Wy is a product of its own. Both against base R, in uneven chunks.
  set.seed(43)
  n <- 90
  x <- matrix(rnorm(n * 2), n, 2)
  w <- runif(n, 0, 2)
  m <- rff_map(2, D = 5, variant = "phase")
  Z <- unclass(rff_features(x, map = m))[, ]
  for (q in c(5, 9)) {
    y <- matrix(rnorm(n * q, mean = 3), n, q)
    s <- rff_stats(x, y, m, weights = w, chunk_size = 40)
    yc <- sweep(y, 2, s$yshift)
    expect_equal(s$ZtZ, crossprod(Z * w, Z), tolerance = 1e-12)
    expect_equal(s$Zty, crossprod(Z, w * yc), tolerance = 1e-12)
    expect_equal(s$zsum, colSums(w * Z), tolerance = 1e-12)
    expect_equal(s$ysum, colSums(w * yc), tolerance = 1e-10)
    expect_equal(s$yty, colSums(w * yc^2), tolerance = 1e-12)
    expect_equal(s$wsum, sum(w))
    # one response alone gives the same column
    s1 <- rff_stats(x, y[, q], m, weights = w, chunk_size = 40)
    expect_equal(s1$Zty[, 1], s$Zty[, q], tolerance = 1e-12)
    expect_equal(s1$ZtZ, s$ZtZ, tolerance = 1e-13)
  }
})

test_that("damaged statistics are an rff_error naming them, in rff_ridge() and c()", {
  set.seed(1)
  x <- matrix(rnorm(400), 200)
  y <- sin(x[, 1]) + rnorm(200, sd = .1)
  m <- rff_map(2, D = 20)
  s <- rff_stats(x, y, map = m)
  damage <- list(
    n0 = function(s) { s$n <- 0L; s },
    nneg = function(s) { s$n <- -10; s },
    nNA = function(s) { s$n <- NA; s },
    Zty = function(s) { s$Zty[] <- NA; s },
    ZtZnan = function(s) { s$ZtZ[3, 3] <- NaN; s },
    ZtZall = function(s) { s$ZtZ[] <- NaN; s },
    asym = function(s) { s$ZtZ[1, 2] <- s$ZtZ[1, 2] + 1; s },
    indef = function(s) { s$ZtZ[1, 2] <- s$ZtZ[2, 1] <- 2 * sqrt(s$ZtZ[1, 1] * s$ZtZ[2, 2]); s },
    negdiag = function(s) { s$ZtZ[4, 4] <- -1; s },
    size = function(s) { s$ZtZ <- s$ZtZ[-1, -1]; s },
    zsum = function(s) { s$zsum <- s$zsum[-1]; s },
    yty = function(s) { s$yty <- Inf; s },
    map = function(s) { s$map$omega[1] <- NA; s })
  for (nm in names(damage)) {
    bad <- damage[[nm]](s)
    e <- expect_error(rff_ridge(bad, lambda = c(0.1, 1)), class = "rff_error", label = nm)
    expect_identical(e$arg, "x")
    expect_match(conditionMessage(e), "`x`", label = nm)
    if (nm == "n0") next  # statistics of no rows combine with others
    e <- expect_error(c(s, bad), class = "rff_error", label = nm)
    expect_match(conditionMessage(e), "element 2 of `...` is damaged", label = nm)
  }
  # the checks pass whole statistics, and c() of halves equals the fit on all
  half <- c(rff_stats(x[1:100, ], y[1:100], map = m), rff_stats(x[101:200, ], y[101:200], map = m))
  Z <- rff_features(x, map = m)
  Zc <- scale(Z, scale = FALSE)
  beta <- solve(crossprod(Zc) + 200 * 0.1 * diag(20), crossprod(Zc, y - mean(y)))
  expect_equal(unname(coef(rff_ridge(half, lambda = 0.1))[-1]), drop(beta), tolerance = 1e-8)
})
