# ref_features(), ref_kappa(), ref_variance(): helper-kernels.R; expect_moments(): helper-laws.R

test_that("features equal the base-R formula for both variants", {
  set.seed(1)
  x <- matrix(rnorm(700 * 3), 700, 3)     # several row blocks
  for (v in c("pair", "phase")) for (k in c("gaussian", "laplace", "matern")) {
    Z <- rff_features(x, D = 30, kernel = k, variant = v, lengthscale = c(1, 2, 0.5))
    expect_equal(dim(Z), c(700, 30))
    expect_equal(unclass(Z)[, ], ref_features(x, attr(Z, "rff_map")),
                 tolerance = 1e-13, ignore_attr = TRUE)
  }
})

test_that("features of every sampler, and row counts around the blocks, equal base R", {
  set.seed(11)
  x <- matrix(rnorm(300 * 3), 300, 3)
  cases <- list(list(kernel = "gaussian", sampler = "orthogonal"),
                list(kernel = "matern", sampler = "orthogonal"),
                list(kernel = "gaussian", sampler = "qmc"),
                list(kernel = "laplace", sampler = "qmc"),
                list(kernel = "matern", sampler = "qmc"))
  for (cs in cases) for (v in c("pair", "phase")) {
    Z <- rff_features(x, D = 22, kernel = cs$kernel, sampler = cs$sampler, variant = v,
                      lengthscale = c(1, 2, 0.5))
    expect_equal(attr(Z, "rff_map")$sampler, cs$sampler)
    expect_lt(max(abs(unclass(Z)[, ] - ref_features(x, attr(Z, "rff_map")))), 1e-13)
  }
  # rows are featurized in blocks of 256: one row, a block less or more one
  # row, two blocks and one row (a last block of a single row)
  for (n in c(1, 255, 256, 257, 513)) for (v in c("pair", "phase")) {
    xn <- matrix(rnorm(n * 2), n, 2)
    m <- rff_map(2, D = 14, variant = v)
    expect_lt(max(abs(rff_features(xn, map = m) - ref_features(xn, m))), 1e-13,
              label = sprintf("n = %d, %s", n, v))
  }
})

test_that("arguments near the end of the fast trigonometric range and beyond are exact", {
  # d = 1 with chosen frequencies, so that the arguments w x (+ b) are the
  # same doubles in the reference. Rows come in chunks of 256, and each
  # frequency of a chunk takes the fast path unchecked only when
  # |w| max|x| + |b| is below 5e5; cos/sin are exact on the fast path below
  # |argument| 1e6, and libm's beyond.
  set.seed(12)
  x <- c(runif(256, -4.9e5, 4.9e5),                      # never checked
         c(4.9e5, 5e5 - 1e-10, 5e5, 5e5 + 1e-10, 9.9e5, 1e6 - 1e-10, 1e6, 1e6 + 1e-10,
           -1e6, 2e6, 3.9e6), runif(245, -3.9e6, 3.9e6), # near 5e5 and in (1e6, 4e6)
         runif(100, 5e5, 1e6), 1e7, -1e9, 2^52, 1e300)   # far beyond
  x <- matrix(x, ncol = 1)
  for (v in c("pair", "phase")) {
    m <- rff_map(1, D = 8, variant = v)
    m$omega[] <- c(1, -1, 0.25, 3, if (v == "phase") c(0.5, -2, 1, 0.125))
    expect_lt(max(abs(rff_features(x, map = m) - ref_features(x, m))), 1e-12, label = v)
  }
})

test_that("features do not depend on the thread count", {
  set.seed(2)
  x <- matrix(rnorm(3000 * 5), 3000, 5)
  m <- rff_map(5, D = 64, variant = "phase")
  expect_identical(rff_features(x, map = m, threads = 1),
                   rff_features(x, map = m, threads = 2))
})

test_that("inputs: vectors, data frames, row names, map reuse", {
  m <- rff_map(1, D = 6)
  v <- c(a = 0.5, b = -1)
  Zv <- rff_features(v, map = m)
  expect_equal(rownames(Zv), c("a", "b"))
  expect_identical(attr(Zv, "rff_map"), m)
  expect_equal(unclass(Zv)[, ], ref_features(matrix(v), m), ignore_attr = TRUE)

  df <- data.frame(u = c(1, 2, 3), w = c(0L, 1L, 5L), row.names = c("r1", "r2", "r3"))
  m2 <- rff_map(2, D = 4)
  Zd <- rff_features(df, map = m2)
  expect_equal(rownames(Zd), c("r1", "r2", "r3"))
  expect_equal(unclass(Zd)[, ], ref_features(as.matrix(df), m2), ignore_attr = TRUE)
  # default integer row names are not turned into character names
  expect_null(rownames(rff_features(data.frame(u = 1:2), map = m)))

  # the training map featurizes new data consistently
  set.seed(3)
  Z <- rff_features(matrix(rnorm(8), 4, 2), D = 10)
  xnew <- matrix(rnorm(4), 2, 2)
  expect_equal(unclass(rff_features(xnew, map = attr(Z, "rff_map")))[, ],
               ref_features(xnew, attr(Z, "rff_map")), ignore_attr = TRUE)
})

test_that("Z Z' approximates the kernel within Proposition 2's error", {
  set.seed(4)
  x <- matrix(rnorm(8 * 3), 8, 3)
  D <- 4000
  for (k in c("gaussian", "laplace", "matern")) for (v in c("pair", "phase")) {
    Z <- rff_features(x, D = D, kernel = k, variant = v, lengthscale = 1.3)
    K <- rff_kernel(x, kernel = k, lengthscale = 1.3)
    idx <- which(upper.tri(K), arr.ind = TRUE)
    delta <- x[idx[, 1], , drop = FALSE] - x[idx[, 2], , drop = FALSE]
    sd <- sqrt(ref_variance(delta, D, v, kernel = k, lengthscale = 1.3))
    err <- (tcrossprod(Z) - K)[idx]
    # 28 pairs, each within 5 sd (a 1-in-10^5 event each)
    expect_true(all(abs(err) < 5 * sd), label = paste(k, v))
    # the diagonal is exactly 1 for pairs (cos^2 + sin^2)
    if (v == "pair") expect_equal(unname(diag(tcrossprod(Z))), rep(1, 8), tolerance = 1e-12)
  }
})

test_that("mean and sd of the estimate at an offset match Proposition 2", {
  set.seed(5)
  reps <- 3000
  D <- 20
  cases <- list(
    list(kernel = "gaussian", delta = 1),
    list(kernel = "laplace", delta = c(0.4, -0.3)),
    list(kernel = "matern", delta = c(0.5, 0.4, -0.3), nu = 1.5),
    list(kernel = "matern", delta = c(0.6, 0, 0.2, 0.3), nu = 0.7)
  )
  for (cs in cases) for (v in c("pair", "phase")) {
    nu <- if (is.null(cs$nu)) 1.5 else cs$nu
    # z(delta)'z(0), with rff's default threads
    est <- replicate_estimates(rbind(cs$delta, 0 * cs$delta), reps, D = D, kernel = cs$kernel,
                               nu = nu, variant = v, threads = NULL)
    expect_moments(est,
                   mean = ref_kappa(t(cs$delta), cs$kernel, nu = nu),
                   var = ref_variance(t(cs$delta), D, v, kernel = cs$kernel, nu = nu))
  }
})

test_that("the kernels' vectorized cos and sin agree with libm to 1e-12", {
  set.seed(6)
  x <- c(seq(-10, 10, length.out = 20001), (-400:400) * pi / 4,
         rnorm(2e4, sd = 1e3), rcauchy(2e4), rcauchy(2e4, scale = 1e5),
         # around the end of the fast range (1e6), where libm takes over
         1e6 + c(-1, -1e-6, 0, 1e-6, 1), -1e6 + c(-1, 0, 1),
         1e9, -3e12, 2^52, 1e300, -1e300, 0, -0, 5e-324, 1e-300)
  got <- trig_kernels(x)
  expect_lt(max(abs(got[, 1] - cos(x))), 1e-12)
  expect_lt(max(abs(got[, 2] - cos(x))), 1e-12)
  expect_lt(max(abs(got[, 3] - sin(x))), 1e-12)
  # relative accuracy near zeros of sin, where absolute error would hide it
  t <- seq(-1e-3, 1e-3, length.out = 1001)
  expect_lt(max(abs(trig_kernels(t)[, 3] - sin(t)) / pmax(abs(sin(t)), 1e-300)), 1e-14)
  # non-finite arguments give NaN as libm does
  expect_true(all(is.nan(trig_kernels(c(Inf, -Inf, NaN)))))
})

test_that("fast paths equal the straightforward formula to 1e-12", {
  set.seed(7)
  # d = 1: the projection is one product, the same in both computations, so
  # any difference is the trigonometric kernels'. Laplace frequencies with a
  # tiny lengthscale put most arguments beyond the fast range (libm there).
  x1 <- matrix(rnorm(600), 600, 1)
  for (v in c("pair", "phase")) for (l in c(1, 1e-7)) {
    m <- rff_map(1, D = 40, kernel = "laplace", lengthscale = l, variant = v)
    expect_lt(max(abs(rff_features(x1, map = m) - ref_features(x1, m))), 1e-12)
  }
  # the fused kernel (narrow input) and the dgemm route (d > 512), with
  # row counts that are not multiples of the block size
  for (d in c(3, 11, 90, 600)) for (v in c("pair", "phase")) {
    x <- matrix(rnorm(530 * d), 530, d)
    m <- rff_map(d, D = 26, variant = v, lengthscale = sqrt(d))
    expect_lt(max(abs(rff_features(x, map = m) - ref_features(x, m))), 1e-12)
  }
})

test_that("huge inputs in some rows leave the other rows of their chunk exact", {
  # one row far beyond the fast range sends every column of its chunk of
  # rows through the checked path; the rows around it stay on the fast one.
  # d = 1 so that the projections equal those of the reference exactly.
  set.seed(8)
  x <- matrix(rnorm(700), 700, 1)
  x[c(5, 300), ] <- c(1e9, -3e8)
  for (v in c("pair", "phase")) {
    m <- rff_map(1, D = 30, variant = v)
    expect_lt(max(abs(rff_features(x, map = m) - ref_features(x, m))), 1e-12)
  }
})

test_that("in a model formula the map drawn at fit time is used for predictions", {
  set.seed(51)
  d <- data.frame(a = rnorm(50), b = rnorm(50))
  d$y <- sin(d$a) + d$b^2 + rnorm(50, sd = 0.1)
  tr <- d[1:40, ]
  te <- d[41:50, ]
  fit <- lm(y ~ rff_features(cbind(a, b), D = 20, lengthscale = 1.5), data = tr)
  p1 <- predict(fit, te)
  p2 <- predict(fit, te)
  expect_identical(p1, p2)
  map <- attr(model.frame(fit)[[2]], "rff_map")
  Z <- unclass(rff_features(cbind(te$a, te$b), map = map))[, ]
  expect_equal(unname(p1), unname(drop(cbind(1, Z) %*% coef(fit))), tolerance = 1e-10)
  # glm too, and a call without names
  g <- glm(y ~ rff_features(cbind(a, b), 20), data = tr)
  expect_identical(predict(g, te), predict(g, te))
  expect_s3_class(rff_features(d[, 1:2], D = 4), "rff_features")
  expect_output(print(rff_features(d[1:2, 1:2], D = 4)), "rff_features")
})

test_that("Fourier and arc-cosine features of inputs whose projections overflow are an rff_error", {
  e <- expect_error(rff_features(matrix(1e308), D = 4, lengthscale = 0.01), class = "rff_error")
  expect_identical(e$arg, "x")
  set.seed(1)
  x <- matrix(rnorm(400), 200)
  y <- sin(x[, 1]) + rnorm(200, sd = .1)
  x2 <- x
  x2[5, ] <- 1e308
  e <- expect_error(rff_ridge(x2, y, D = 20, lengthscale = 0.1, standardize = FALSE,
                              progress = FALSE), class = "rff_error")
  expect_match(conditionMessage(e), "row 5")
  fit <- rff_ridge(x, y, D = 20, lengthscale = 0.1, standardize = FALSE, progress = FALSE)
  expect_error(predict(fit, x2[1:6, ]), class = "rff_error")
  expect_error(rff_kernel_error(x2[1:6, ], D = 4, lengthscale = 0.1), class = "rff_error")
  # the bound on both sides: sum_k |x_k| |omega_k| at 0.9e308 passes, with
  # the features of libm's cos and sin; at 1.1e308 it is refused
  for (v in c("pair", "phase")) {
    m <- rff_map(1, D = 4, variant = v)
    m$omega[] <- c(2, -0.5, 1, 0.25)[seq_along(m$omega)]
    xb <- matrix(0.9e308 / 2)
    expect_lt(max(abs(rff_features(xb, map = m) - ref_features(xb, m))), 1e-12)
    expect_error(rff_features(matrix(1.1e308 / 2), map = m), class = "rff_error")
  }
  # arc-cosine features of order 1: sqrt(2 / D) (max(p, 0), max(-p, 0)), p = x'omega
  ma <- rff_map(2, D = 4, kernel = "arccos", order = 1)
  ma$omega[] <- c(1, 2, -0.5, 0.5)
  xa <- matrix(c(0.9e308, 0.9e308) / 3, 1)
  P <- xa %*% ma$omega
  expect_equal(unclass(rff_features(xa, map = ma))[, ], sqrt(2 / 4) * c(pmax(P, 0), pmax(-P, 0)),
               tolerance = 1e-12)
  expect_error(rff_features(xa * 1.2, map = ma), class = "rff_error")
})
