# The cut points of the C code, each tested just below and just above
# against base R: the input dimensions of the fused featurization, the rows
# of a chunk of the GLM pass, the feature cache of rff_glm(), the Debye
# branch of the Matern kernel and the column panels of the threaded BLAS.

test_that("the fused featurization is exact on both sides of its input-dimension cuts", {
  # RFF_FUSED_X_BYTES / (8 d) rows per chunk: 256 up to d = 256, 248 at
  # d = 257; RFF_FUSED_MAX_D = 512 inputs, beyond which the projection is
  # one dgemm
  set.seed(41)
  for (d in c(256, 257, 512, 513)) for (v in c("pair", "phase")) {
    m <- rff_map(d, D = 10, lengthscale = sqrt(d), variant = v)
    x <- matrix(rnorm(300 * d), 300, d)
    expect_equal(unclass(rff_features(x, map = m, threads = 1))[, ], ref_features(x, m),
                 tolerance = 1e-12, ignore_attr = TRUE, label = paste(d, "inputs,", v))
    expect_identical(unclass(rff_features(x, map = m, threads = 2)),
                     unclass(rff_features(x, map = m, threads = 1)))
  }
})

# the binomial loss and gradient of a pass in base R
ref_glm_pass <- function(Z, y, w, B, a) {
  eta <- drop(Z %*% B) + a
  p <- plogis(eta)
  list(loss = sum(w * (log1p(exp(-abs(eta))) + pmax(eta, 0) - y * eta)),
       grad = drop(crossprod(Z, w * (p - y))), grad0 = sum(w * (p - y)))
}

test_that("the streamed GLM pass is exact on both sides of a chunk of 64 blocks", {
  # GLM_FUSED_BLOCKS * RFF_BLOCK_ROWS = 64 * 256 = 16384 rows per chunk of
  # partial sums: 16384 rows are one chunk, 16385 two
  set.seed(42)
  m <- rff_map(2, D = 6, lengthscale = 0.7)
  B <- matrix(rnorm(6), 6)
  for (n in c(16384, 16385)) {
    x <- matrix(rnorm(2 * n), n, 2)
    y <- as.double(runif(n) < plogis(x[, 1]))
    w <- runif(n)
    ref <- ref_glm_pass(ref_features(x, m), y, w, B, 0.3)
    for (th in c(1, 2)) {
      prob <- rff:::glm_problem(x, y, "binomial", 1L, NULL, w, m,
                                 rff:::check_chunk_size(NULL, 6), th, cache_mb = 0)
      expect_false(prob$cached)
      r <- rff:::glm_pass(prob, rbind(0.3, B))
      lab <- paste(n, "rows,", th, "threads")
      expect_equal(r$loss, ref$loss, tolerance = 1e-12, label = lab)
      expect_equal(drop(r$grad), ref$grad, tolerance = 1e-11, label = lab)
      expect_equal(r$grad0, ref$grad0, tolerance = 1e-11, label = lab)
    }
  }
})

test_that("rff_glm() caches the features exactly up to cache_mb megabytes", {
  # 1024 rows x 128 features are 1 MiB of doubles: cached at cache_mb = 1,
  # streamed just below; the passes agree with base R on both sides
  set.seed(43)
  m <- rff_map(3, D = 128)
  x <- matrix(rnorm(1024 * 3), 1024, 3)
  y <- as.double(runif(1024) < plogis(x[, 2]))
  B <- matrix(rnorm(128, sd = 0.1), 128)
  ref <- ref_glm_pass(ref_features(x, m), y, rep(1, 1024), B, -0.2)
  for (mb in c(1, 1 - 1e-9)) {
    prob <- rff:::glm_problem(x, y, "binomial", 1L, NULL, NULL, m,
                               rff:::check_chunk_size(NULL, 128), 1L, cache_mb = mb)
    expect_identical(prob$cached, mb == 1)
    r <- rff:::glm_pass(prob, rbind(-0.2, B))
    expect_equal(r$loss, ref$loss, tolerance = 1e-12, label = paste("cache_mb", mb))
    expect_equal(drop(r$grad), ref$grad, tolerance = 1e-11, label = paste("cache_mb", mb))
  }
  f1 <- rff_glm(x, y, map = m, lambda = 0.01, cache_mb = 1)
  f0 <- rff_glm(x, y, map = m, lambda = 0.01, cache_mb = 1 - 1e-9)
  expect_equal(coef(f1), coef(f0), tolerance = 1e-6)
})

test_that("the Matern kernel is exact on both sides of its Debye branch at nu = 50", {
  # MATERN_DEBYE_NU = 50: besselK below, the uniform asymptotic expansion from
  # there on; base R's besselK (scaled, on the log scale) is the reference
  x <- matrix(c(0, 0.05, 0.3, 1.1, 2, 4))
  ref <- function(nu) {
    t <- sqrt(2 * nu) * abs(x[-1, 1])
    c(1, exp((1 - nu) * log(2) - lgamma(nu) + nu * log(t) +
               log(besselK(t, nu, expon.scaled = TRUE)) - t))
  }
  for (nu in c(50 * (1 - 1e-12), 50, 50 * (1 + 1e-12), 49, 51)) {
    K <- rff_kernel(x, kernel = "matern", nu = nu)
    expect_equal(K[1, ], ref(nu), tolerance = 1e-11, ignore_attr = TRUE, label = paste("nu", nu))
  }
})

test_that("threaded Gram products are exact on both sides of a 128-column panel", {
  # RFF_SPLIT_COLS = 128: the threaded dsyrk and dgemm split their output in
  # panels of 128 columns (one panel at D = 128, two at 129)
  set.seed(44)
  x <- matrix(rnorm(400 * 3), 400, 3)
  y <- rnorm(400)
  for (D in c(128, 129, 256, 257)) {
    m <- rff_map(3, D = D, variant = "phase")
    Z <- ref_features(x, m)
    s2 <- rff_stats(x, y, map = m, intercept = FALSE, threads = 2)
    s1 <- rff_stats(x, y, map = m, intercept = FALSE, threads = 1)
    expect_equal(s2$ZtZ, crossprod(Z), tolerance = 1e-12, ignore_attr = TRUE,
                 label = paste("D =", D))
    expect_equal(s2$ZtZ, s1$ZtZ, tolerance = 1e-14, ignore_attr = TRUE)
    expect_equal(drop(s2$Zty), drop(crossprod(Z, y - mean(y))), tolerance = 1e-12, ignore_attr = TRUE)
  }
})
