# The polynomial kernel and its TensorSketch features (R/polynomial.R;
# drawing in src/polynomial.c, features in src/tensorsketch.c).

# u = (x / l, sqrt(offset)), the vector whose tensor power is sketched
sketch_input <- function(x, lengthscale, offset) {
  x <- as.matrix(x)
  cbind(sweep(x, 2, rep_len(lengthscale, ncol(x)), "/"), sqrt(offset))
}

# The TensorSketch of u (a vector) in base R, by brute force over every
# tuple (k_1, ..., k_p): bucket sum_i h[k_i, i] mod D, sign prod_i s[k_i, i].
ref_sketch <- function(u, hash, sign, D) {
  p <- ncol(hash)
  tuples <- as.matrix(expand.grid(rep(list(seq_along(u)), p)))
  z <- numeric(D)
  for (r in seq_len(nrow(tuples))) {
    k <- tuples[r, ]
    j <- sum(hash[cbind(k, seq_len(p))]) %% D
    z[j + 1] <- z[j + 1] + prod(sign[cbind(k, seq_len(p))]) * prod(u[k])
  }
  z
}

# Exact variance of z(x)'z(y) for a TensorSketch of degree p with D buckets
# (independent uniform buckets and signs): with a = (u'v)^2, c = sum
# u_k^2 v_k^2, b = |u|^2 |v|^2 - c, e = a - c and n = 1 + (D even),
# E[(z(x)'z(y))^2] = (n (a + b + e)^p + (D - n) ((a + b)^p + (a + e)^p) +
# (D^2 - 2 D + n) a^p) / D^2 (written with the discrete Fourier transform of
# the bucket indicator; for p = 1 the count-sketch variance).
ref_sketch_var <- function(u, v, p, D) {
  a <- sum(u * v)^2
  c0 <- sum(u^2 * v^2)
  b <- sum(u^2) * sum(v^2) - c0
  e <- a - c0
  n <- 1 + (D %% 2 == 0)
  m2 <- (n * (a + b + e)^p + (D - n) * ((a + b)^p + (a + e)^p) +
           (D^2 - 2 * D + n) * a^p) / D^2
  m2 - a^p
}

test_that("the exact kernel is (x'y / l^2 + offset)^degree", {
  set.seed(1)
  x <- matrix(rnorm(15), 5, 3)
  y <- matrix(rnorm(12), 4, 3)
  l <- c(0.5, 1, 2)
  for (p in c(1, 2, 5)) for (off in c(0, 1.5)) {
    ref <- (x %*% diag(1 / l^2) %*% t(y) + off)^p
    expect_equal(rff_kernel(x, y, kernel = "polynomial", degree = p, offset = off,
                            lengthscale = l), ref, tolerance = 1e-13, ignore_attr = TRUE)
  }
  expect_equal(rff_kernel(x, kernel = "polynomial"), (tcrossprod(x) + 1)^2,
               tolerance = 1e-13, ignore_attr = TRUE)
  m <- rff_map(3, D = 10, kernel = "polynomial", degree = 3, offset = 0.5, lengthscale = 2)
  expect_equal(rff_kernel(x, y, map = m), (tcrossprod(x, y) / 4 + 0.5)^3, tolerance = 1e-13,
               ignore_attr = TRUE)
})

test_that("hashes and signs are drawn as documented, from R's RNG", {
  set.seed(3)
  m <- rff_map(2, D = 7, kernel = "polynomial", degree = 3)
  set.seed(3)
  h <- matrix(sample.int(7, 9, replace = TRUE) - 1L, 3, 3)
  s <- matrix(ifelse(runif(9) < 0.5, -1, 1), 3, 3)
  expect_identical(m$hash, h)
  expect_identical(m$sign, s)
  expect_identical(m[c("D", "d", "kernel", "degree", "offset", "variant", "sampler")],
                   list(D = 7L, d = 2L, kernel = "polynomial", degree = 3L, offset = 1,
                        variant = "sketch", sampler = "iid"))
  expect_null(m$omega)
  expect_output(print(m), "7 TensorSketch features of 2 input columns")
  expect_output(print(m), "Polynomial \\(degree 3, offset 1\\)")
})

test_that("the features are the count sketch of the tensor power", {
  set.seed(4)
  x <- matrix(rnorm(20), 10, 2)
  for (p in 1:4) for (D in c(1, 5, 64)) {
    m <- rff_map(2, D = D, kernel = "polynomial", degree = p, offset = 0.7,
                 lengthscale = c(1, 3))
    Z <- rff_features(x, map = m)
    u <- sketch_input(x, c(1, 3), 0.7)
    ref <- t(apply(u, 1, ref_sketch, hash = m$hash, sign = m$sign, D = D))
    expect_equal(Z, if (D == 1) t(ref) else ref, tolerance = 1e-12, ignore_attr = TRUE,
                 label = sprintf("p = %d, D = %d", p, D))
  }
  # many rows (several blocks and chunks), one or two threads, any chunk size
  x <- matrix(rnorm(3000), 1000, 3)
  m <- rff_map(3, D = 50, kernel = "polynomial", degree = 3)
  Z1 <- rff_features(x, map = m, threads = 1)
  expect_identical(rff_features(x, map = m, threads = 2), Z1)
  u <- sketch_input(x[c(1, 500, 1000), ], 1, 1)
  expect_equal(Z1[c(1, 500, 1000), ],
               t(apply(u, 1, ref_sketch, hash = m$hash, sign = m$sign, D = 50)),
               tolerance = 1e-12, ignore_attr = TRUE)
  s <- rff_stats(x, x[, 1], m, chunk_size = 77)
  expect_equal(s$ZtZ, crossprod(Z1), tolerance = 1e-10)
})

test_that("the variance formula is the exact distribution's (brute force)", {
  # d = 1, degree 2, D = 3: 3^4 bucket and 2^4 sign draws, equally likely
  x <- 0.8; y <- -1.3; off <- 0.6
  u <- c(x, sqrt(off)); v <- c(y, sqrt(off))
  outcomes <- as.matrix(expand.grid(rep(list(0:2), 4)))
  signs <- as.matrix(expand.grid(rep(list(c(-1, 1)), 4)))
  est <- numeric(0)
  for (i in seq_len(nrow(outcomes))) for (j in seq_len(nrow(signs))) {
    h <- matrix(outcomes[i, ], 2, 2)
    s <- matrix(signs[j, ], 2, 2)
    est <- c(est, sum(ref_sketch(u, h, s, 3) * ref_sketch(v, h, s, 3)))
  }
  expect_equal(mean(est), (x * y + off)^2, tolerance = 1e-12)
  expect_equal(mean(est^2) - mean(est)^2, ref_sketch_var(u, v, 2, 3), tolerance = 1e-12)
})

test_that("the estimate is unbiased with the variance of the formula (Monte Carlo)", {
  set.seed(10)
  cases <- list(list(d = 1, D = 3, p = 2, off = 0.6, l = 1),
                list(d = 3, D = 8, p = 3, off = 1, l = 1.5),
                list(d = 2, D = 64, p = 2, off = 0, l = c(0.7, 2)),
                list(d = 4, D = 16, p = 1, off = 2, l = 1))
  for (cs in cases) {
    x <- matrix(rnorm(2 * cs$d), 2, cs$d)
    est <- vapply(seq_len(3000), function(r) {
      Z <- rff_features(x, D = cs$D, kernel = "polynomial", degree = cs$p, offset = cs$off,
                        lengthscale = cs$l)
      sum(Z[1, ] * Z[2, ])
    }, numeric(1))
    u <- sketch_input(x, cs$l, cs$off)
    k <- rff_kernel(x[1, , drop = FALSE], x[2, , drop = FALSE], kernel = "polynomial",
                    degree = cs$p, offset = cs$off, lengthscale = cs$l)[1, 1]
    # mean within 4 standard errors (from the formula's variance) of the
    # exact kernel, sample variance within 4 of its standard errors
    expect_moments(est, k, ref_sketch_var(u[1, ], u[2, ], cs$p, cs$D))
  }
  # the error study draws the same maps, replicate by replicate
  x <- matrix(rnorm(6), 2, 3)
  set.seed(11)
  e <- rff_kernel_error(x[1, , drop = FALSE], x[2, , drop = FALSE], D = 8, kernel = "polynomial",
                        degree = 3, reps = 4, keep = TRUE)
  set.seed(11)
  ref <- vapply(1:4, function(r) {
    Z <- rff_features(x, D = 8, kernel = "polynomial", degree = 3)
    sum(Z[1, ] * Z[2, ])
  }, numeric(1))
  expect_equal(as.vector(attr(e, "estimate")), ref, tolerance = 1e-12)
  expect_equal(e$variant, rep("sketch", 4))
})

test_that("ridge regression on TensorSketch features is ridge on the feature matrix", {
  set.seed(12)
  x <- matrix(runif(200), 100, 2)
  y <- x[, 1] * x[, 2] + rnorm(100, sd = 0.05)
  m <- rff_map(2, D = 30, kernel = "polynomial", degree = 2, offset = 1)
  Z <- rff_features(x, map = m)
  fit <- rff_ridge(standardize = FALSE, x, y, map = m, lambda = 1e-3, progress = FALSE)
  Zc <- sweep(Z, 2, colMeans(Z))
  beta <- solve(crossprod(Zc) + 100 * 1e-3 * diag(30), crossprod(Zc, y - mean(y)))
  expect_equal(drop(fit$coefficients), drop(beta), tolerance = 1e-8)
  expect_equal(unname(predict(fit, x[1:5, ])),
               drop(Z[1:5, ] %*% beta) + mean(y) - sum(colMeans(Z) * beta), tolerance = 1e-8)
  # rff_cv over lengthscales: the same sketch, the inputs rescaled
  cv <- rff_cv(standardize = FALSE, x, y, map = m, lengthscale = c(0.5, 2), lambda = 1e-3, folds = 2,
               progress = FALSE)
  expect_identical(cv$fit$map$hash, m$hash)
  expect_equal(cv$fit$map$lengthscale, cv$lengthscale_best)
})

test_that("bad degrees, offsets, variants, samplers and overflow are rff_errors", {
  x <- matrix(1:6, 3, 2)
  for (deg in list(0, 31, 1.5, NA, "2", c(1, 2))) {
    e <- expect_error(rff_map(2, D = 5, kernel = "polynomial", degree = deg), class = "rff_error")
    expect_identical(e$arg, "degree")
  }
  for (off in list(-1, NA, Inf, "1", c(1, 2))) {
    e <- expect_error(rff_kernel(x, kernel = "polynomial", offset = off), class = "rff_error")
    expect_identical(e$arg, "offset")
  }
  # any negative offset, however small, is refused where it is given, by the
  # map as by the kernel, with the value in the message
  for (off in c(-1e-8, -0.5, -1, -3)) {
    e <- expect_error(rff_map(2, D = 5, kernel = "polynomial", offset = off), class = "rff_error")
    expect_identical(e$arg, "offset")
    expect_match(conditionMessage(e), paste("got", format(off)), fixed = TRUE)
    e <- expect_error(rff_kernel(x, kernel = "polynomial", offset = off), class = "rff_error")
    expect_match(conditionMessage(e), "non-negative", fixed = TRUE)
  }
  e <- expect_error(rff_map(2, D = 5, kernel = "polynomial", variant = "phase"),
                    class = "rff_error")
  expect_identical(e$arg, "variant")
  for (s in c("orthogonal", "qmc")) {
    e <- expect_error(rff_features(x, D = 4, kernel = "polynomial", sampler = s),
                      class = "rff_error")
    expect_identical(e$arg, "sampler")
  }
  e <- expect_error(rff_variance(1, 10, kernel = "polynomial"), class = "rff_error")
  expect_match(conditionMessage(e), "\"polynomial\" is not")
  # values beyond the doubles' range
  big <- matrix(1e200, 2, 2)
  expect_error(rff_kernel(big, kernel = "polynomial"), class = "rff_error")
  e <- expect_error(rff_features(big, D = 4, kernel = "polynomial"), class = "rff_error")
  expect_identical(e$arg, "lengthscale")
  expect_error(rff_ridge(big, 1:2, D = 4, kernel = "polynomial", lambda = 1, progress = FALSE,
                         standardize = FALSE), class = "rff_error")
  # damaged maps: every element removed, or broken, is an rff_error
  m <- rff_map(2, D = 5, kernel = "polynomial", degree = 2)
  ref <- rff_features(x, map = m)
  for (field in names(m)) {
    broken <- m
    broken[[field]] <- NULL
    got <- tryCatch(rff_features(x, map = broken), error = function(e) e)
    if (inherits(got, "error")) expect_s3_class(got, "rff_error") else
      expect_true(field %in% c("nu", "order"), label = field)
  }
  bad <- list(hash = m$hash + 5L, hash = m$hash * 1.0, sign = m$sign * 2, degree = 3L,
              offset = -1, D = 0L)
  for (i in seq_along(bad)) {
    broken <- m
    broken[[names(bad)[i]]] <- bad[[i]]
    expect_error(rff_features(x, map = broken), class = "rff_error")
    # and the C code checks what it relies on
    expect_error(.Call(rff:::C_rff_features, x * 1.0, unclass(broken), 1L))
  }
})
