# The arc-cosine kernel (R/arccos.R; features in src/features.c, exact
# kernel in src/kernels.c). ref_arccos(): helper-kernels.R

# base-R features of a map: step(p) p^n for w and for -w
ref_arccos_features <- function(x, map) {
  P <- x %*% map$omega
  f <- function(p) ifelse(p > 0, p^map$order, 0)
  sqrt(2 / map$D) * cbind(f(P), f(-P))
}

test_that("the exact kernel equals Cho and Saul's closed forms", {
  set.seed(31)
  x <- matrix(rnorm(15), 5, 3)
  y <- matrix(rnorm(12), 4, 3)
  for (o in 0:1) {
    expect_equal(rff_kernel(x, y, kernel = "arccos", order = o),
                 ref_arccos(x, y, o), tolerance = 1e-12, ignore_attr = TRUE)
    expect_equal(rff_kernel(x, y, kernel = "arccos", order = o, lengthscale = c(1, 2, 0.5)),
                 ref_arccos(x, y, o, c(1, 2, 0.5)), tolerance = 1e-12, ignore_attr = TRUE)
  }
  # special angles: same direction, orthogonal, opposite
  e <- rbind(c(2, 0), c(0, 3), c(-1, 0))
  expect_equal(rff_kernel(e, kernel = "arccos", order = 0)[1, ], c(1, 0.5, 0),
               ignore_attr = TRUE)
  expect_equal(rff_kernel(e, kernel = "arccos", order = 1)[1, ], c(4, 6 / pi, 0),
               tolerance = 1e-14, ignore_attr = TRUE)
  # k1(x, x) = |x|^2, accurately even at tiny angles
  expect_equal(rff_kernel(x, kernel = "arccos", order = 1)[cbind(1:5, 1:5)], rowSums(x^2),
               tolerance = 1e-14)
  expect_equal(rff_kernel(rbind(c(1, 0)), rbind(c(1, 1e-9)), kernel = "arccos", order = 0)[1],
               1 - 1e-9 / pi, tolerance = 1e-15)
  # a scalar lengthscale leaves order 0 alone and divides order 1 by l^2
  expect_equal(rff_kernel(x, kernel = "arccos", order = 1, lengthscale = 2),
               rff_kernel(x, kernel = "arccos", order = 1) / 4, tolerance = 1e-14)
  # the features vanish at 0, and so does the kernel
  expect_equal(rff_kernel(rbind(c(0, 0), c(1, 1)), kernel = "arccos", order = 0)[1, ], c(0, 0))
})

test_that("features equal the base-R formula, with antithetic pairs", {
  set.seed(32)
  x <- matrix(rnorm(600 * 3), 600, 3)        # several row blocks
  for (o in 0:1) for (s in c("iid", "orthogonal", "qmc")) {
    Z <- rff_features(x, D = 24, kernel = "arccos", order = o, sampler = s,
                      lengthscale = c(1, 2, 0.5))
    map <- attr(Z, "rff_map")
    expect_equal(map[c("kernel", "order", "variant", "sampler")],
                 list(kernel = "arccos", order = o, variant = "pair", sampler = s))
    expect_equal(unclass(Z)[, ], ref_arccos_features(x, map), tolerance = 1e-13,
                 ignore_attr = TRUE)
  }
  # order 0: z(x)'z(x) = 1 exactly (each direction or its opposite sees x)
  expect_equal(rowSums(rff_features(x, D = 10, kernel = "arccos", order = 0)^2),
               rep(1, 600), tolerance = 1e-14)
  expect_output(print(attr(Z, "rff_map")), "Arc-cosine \\(order 1\\)")
})

test_that("mean and variance of the estimate are k_n and 2 (k_2n - k_n^2) / D", {
  set.seed(33)
  xy <- rbind(c(0.8, -0.3, 0.5), c(0.2, 0.9, 0.4))
  reps <- 3000
  for (o in 0:1) for (s in c("iid", "orthogonal", "qmc")) {
    D <- 20
    est <- replicate_estimates(xy, reps, D = D, kernel = "arccos", order = o, sampler = s)
    k <- ref_arccos(xy[1, , drop = FALSE], xy[2, , drop = FALSE], o)[1]
    expect_lt(abs(mean(est) - k), 4 * sd(est) / sqrt(reps))
    if (s == "iid") {
      k2 <- ref_arccos(xy[1, , drop = FALSE], xy[2, , drop = FALSE], 2 * o)[1]
      expect_moments(est, mean = k, var = 2 * (k2 - k^2) / D)
    }
  }
})

test_that("arc-cosine features converge at the D^(-1/2) rate", {
  set.seed(34)
  x <- matrix(rnorm(10 * 4), 10, 4)
  # the mean squared error over the Gram matrix estimates, without bias, the
  # mean of the entries' variances 2 (k_2n - k_n^2) / D, which fixes both
  # the rate and its constant. The first D/2 directions of a map are a map
  # with D features, so one featurization per replicate serves every D.
  reps <- 300
  Ds <- c(16, 64, 256, 1024)
  for (o in 0:1) {
    K <- rff_kernel(x, kernel = "arccos", order = o)
    k2 <- ref_arccos(x, x, 2 * o)
    err <- t(vapply(seq_len(reps), function(r) {
      Z <- rff_features(x, D = 1024, kernel = "arccos", order = o, threads = 1)
      vapply(Ds, function(D) {
        Zd <- Z[, c(seq_len(D / 2), 512 + seq_len(D / 2))] * sqrt(1024 / D)
        mean((tcrossprod(Zd) - K)^2)
      }, numeric(1))
    }, numeric(length(Ds))))
    theory <- mean(2 * (k2 - K^2)) / Ds
    # order 1's squared errors are heavy-tailed (products of normal
    # projections), so its sample standard error is less reliable: 5 of them
    k <- if (o == 0) 4 else 5
    expect_true(all(abs(colMeans(err) - theory) < k * apply(err, 2, sd) / sqrt(reps)),
                label = paste("order", o))
  }
})

test_that("order is validated and the kernel has no phases and no kappa", {
  expect_rff_error(rff_map(3, kernel = "arccos", order = 2), "order")
  expect_rff_error(rff_map(3, kernel = "arccos", order = NA), "order")
  expect_rff_error(rff_map(3, kernel = "arccos", order = "1"), "order")
  expect_rff_error(rff_features(matrix(1, 2, 3), kernel = "arccos", order = -1), "order")
  expect_rff_error(rff_kernel(matrix(1, 2, 3), kernel = "arccos", order = 0.5), "order")
  expect_rff_error(rff_map(3, kernel = "arccos", variant = "phase"), "variant")
  m <- rff_map(3, D = 10, kernel = "arccos", order = 0)
  expect_rff_error(rff_features(matrix(1, 2, 3), map = m, order = 1), "map")
  expect_rff_error(rff_kernel(matrix(1, 2, 3), map = m, order = 1), "map")
  expect_equal(rff_kernel(diag(3), map = m), ref_arccos(diag(3), diag(3), 0),
               ignore_attr = TRUE)
  bad <- m; bad$order <- 3
  expect_rff_error(rff_features(matrix(1, 2, 3), map = bad), "map$order")
  e <- tryCatch(rff:::kernel_kappa(1, m), rff_error = function(e) e)
  expect_s3_class(e, "rff_error")
  expect_match(conditionMessage(e), "not shift-invariant.*Proposition 2 .*does not apply")
  expect_false(rff:::is_shift_invariant("arccos"))
  expect_true(rff:::is_shift_invariant("gaussian"))
  # the C side: no phase map, order read from the list
  spec <- list(D = 4L, d = 2L, kernel = "arccos", lengthscale = 1, nu = 1.5,
               variant = "phase", sampler = "iid", order = 1L)
  expect_error(.Call(rff:::C_rff_draw_map, spec), "phases")
  spec$variant <- "pair"; spec$order <- 2
  expect_error(.Call(rff:::C_rff_draw_map, spec), "order")
})

test_that("print methods name the arc-cosine order", {
  set.seed(41)
  x <- matrix(rnorm(40), 20, 2)
  y <- rnorm(20)
  fit <- rff_ridge(x, y, D = 10, kernel = "arccos", order = 0, progress = FALSE)
  expect_output(print(fit), "Arc-cosine \\(order 0\\)")
  expect_output(print(rff_stats(x, y, map = fit$map)), "Arc-cosine \\(order 0\\)")
  expect_output(print(rff_kernel_error(x, D = 10, kernel = "arccos", order = 1)),
                "Arc-cosine \\(order 1\\)")
})
