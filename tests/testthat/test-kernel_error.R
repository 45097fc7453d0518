# rff_kernel_error() against direct base-R computations from rff_features()
# and rff_kernel() with the same seed.

# Per-replicate summaries computed in R: the k-th map drawn after set.seed(seed)
# by successive rff_features() calls, for each D in turn.
ref_errors <- function(x, y, seed, D, reps, kernel, lengthscale, nu, variant) {
  set.seed(seed)
  K <- rff_kernel(x, y, kernel = kernel, lengthscale = lengthscale, nu = nu)
  rows <- list()
  for (D1 in D) {
    for (r in seq_len(reps)) {
      Zx <- rff_features(x, D = D1, kernel = kernel, lengthscale = lengthscale,
                         nu = nu, variant = variant)
      Zy <- if (is.null(y)) Zx else rff_features(y, map = attr(Zx, "rff_map"))
      est <- Zx %*% t(Zy)
      E <- est - K
      row <- c(max_abs = max(abs(E)), mean_abs = mean(abs(E)),
               rmse = sqrt(mean(E^2)), rel_fro = sqrt(sum(E^2)) / sqrt(sum(K^2)))
      if (is.null(y)) row <- c(row, rel_spec = norm(E, "2") / norm(K, "2"))
      rows[[length(rows) + 1L]] <- list(errors = row, estimate = unname(est))
    }
  }
  list(errors = do.call(rbind, lapply(rows, `[[`, "errors")),
       estimate = lapply(rows, `[[`, "estimate"), K = K)
}

test_that("per-replicate errors equal base R for every kernel and variant", {
  set.seed(100)
  x1 <- matrix(seq(-2, 2, length.out = 9), ncol = 1)
  y1 <- matrix(c(0, 0.5), ncol = 1)
  x3 <- matrix(rnorm(21), 7, 3)
  y3 <- matrix(rnorm(12), 4, 3)
  cases <- list(
    list(x = x1, y = y1, kernel = "gaussian", lengthscale = 0.7),
    list(x = x3, y = y3, kernel = "laplace", lengthscale = c(0.5, 1, 2)),
    list(x = x3, y = y3, kernel = "matern", lengthscale = 1.3, nu = 2.5),
    list(x = x3, y = NULL, kernel = "matern", lengthscale = 2, nu = 0.8),
    list(x = x1, y = NULL, kernel = "laplace", lengthscale = 1),
    # more rows of x than one block of the featurization (256), and more
    # rows of y than the fused products take (8): one dgemm then
    list(x = matrix(rnorm(900), 300, 3), y = y3, kernel = "gaussian", lengthscale = 1.1),
    list(x = x3, y = matrix(rnorm(30), 10, 3), kernel = "gaussian", lengthscale = 0.9),
    # more rows of y than one column block of the split product (128)
    list(x = x3, y = matrix(rnorm(420), 140, 3), kernel = "gaussian", lengthscale = 0.9)
  )
  for (cs in cases) for (v in c("pair", "phase")) {
    args <- list(kernel = cs$kernel, lengthscale = cs$lengthscale,
                 nu = if (is.null(cs$nu)) 1.5 else cs$nu, variant = v)
    ref <- do.call(ref_errors, c(list(cs$x, cs$y, seed = 7, D = c(6, 10), reps = 3), args))
    set.seed(7)
    got <- do.call(rff_kernel_error, c(list(cs$x, cs$y, D = c(6, 10), reps = 3, keep = TRUE),
                                      args))
    expect_s3_class(got, "rff_kernel_error")
    expect_equal(got$D, rep(c(6L, 10L), each = 3))
    expect_equal(got$rep, rep(1:3, 2))
    expect_equal(got$variant, rep(v, 6))
    expect_equal(as.matrix(got[colnames(ref$errors)]), ref$errors,
                 tolerance = 1e-12, ignore_attr = TRUE)
    expect_identical(is.null(cs$y), "rel_spec" %in% names(got))
    est <- attr(got, "estimate")
    expect_equal(dim(est), c(nrow(cs$x), nrow(if (is.null(cs$y)) cs$x else cs$y), 6))
    for (r in 1:6) expect_equal(est[, , r], ref$estimate[[r]], tolerance = 1e-12,
                                ignore_attr = TRUE)
    expect_equal(attr(got, "exact"), ref$K)
  }
})

test_that("replicate r uses the map of the r-th successive rff_map() call", {
  x <- matrix(c(-1, 0, 2), ncol = 1)
  set.seed(5)
  got <- rff_kernel_error(x, y = 0.5, D = 8, reps = 4, variant = "phase", keep = TRUE)
  after <- rff_map(1, D = 8)
  set.seed(5)
  maps <- lapply(1:4, function(r) rff_map(1, D = 8, variant = "phase"))
  # the stream continues where the last replicate left it
  expect_identical(after, rff_map(1, D = 8))
  for (r in 1:4) {
    z <- rff_features(rbind(x, 0.5), map = maps[[r]])
    expect_equal(got$max_abs[r], max(abs(z[1:3, ] %*% z[4, ] - exp(-(x - 0.5)^2 / 2))),
                 tolerance = 1e-12)
  }
})

test_that("maps drawn in R (the seam for non-C samplers) give the same study", {
  set.seed(81)
  x <- matrix(rnorm(10), 5, 2)
  y <- matrix(rnorm(6), 3, 2)
  spec <- rff:::map_spec(2, D = 12, kernel = "matern", nu = 2.2, variant = "phase")
  K <- rff_kernel(x, y, kernel = "matern", nu = 2.2)
  set.seed(8)
  in_c <- rff:::error_replicates(x, y, K, spec, 5L, TRUE, FALSE, 1L, in_c = TRUE)
  set.seed(8)
  in_r <- rff:::error_replicates(x, y, K, spec, 5L, TRUE, FALSE, 1L, in_c = FALSE)
  expect_identical(in_c$errors, in_r$errors)
  expect_identical(as.vector(in_c$estimate), in_r$estimate)
})

test_that("a fixed map is used as is and draws nothing", {
  set.seed(12)
  x <- matrix(rnorm(12), 6, 2)
  map <- rff_map(2, D = 30, kernel = "laplace")
  Z <- rff_features(x, map = map)
  E <- tcrossprod(Z) - rff_kernel(x, kernel = "laplace")
  seed <- .Random.seed
  got <- rff_kernel_error(x, map = map)
  expect_identical(.Random.seed, seed)
  expect_equal(nrow(got), 1L)
  expect_equal(got$D, 30L)
  expect_equal(got$max_abs, max(abs(E)), tolerance = 1e-12)
  expect_equal(got$rel_spec, norm(E, "2") / norm(rff_kernel(x, kernel = "laplace"), "2"),
               tolerance = 1e-10)
  # pairs reproduce the diagonal exactly: z(x)'z(x) = 1
  expect_equal(diag(E), rep(0, 6), tolerance = 1e-14)
})

test_that("the spectral-norm error is NA above the documented size limit", {
  set.seed(82)
  x <- matrix(rnorm(40), 20, 2)
  old <- options(rff.spectral_max_n = 10)
  on.exit(options(old))
  got <- rff_kernel_error(x, D = 10, reps = 2)
  expect_true(all(is.na(got$rel_spec)))
  expect_true(all(is.finite(got$rel_fro)))
  options(rff.spectral_max_n = 20)
  expect_true(all(is.finite(rff_kernel_error(x, D = 10, reps = 2)$rel_spec)))
  options(rff.spectral_max_n = -1)
  expect_error(rff_kernel_error(x, D = 10), class = "rff_error")
})

test_that("results do not depend on the thread count", {
  set.seed(83)
  x <- matrix(rnorm(1200), 600, 2)
  set.seed(3); a <- rff_kernel_error(x, y = x[1:5, ], D = 40, reps = 3, threads = 1)
  set.seed(3); b <- rff_kernel_error(x, y = x[1:5, ], D = 40, reps = 3, threads = 2)
  expect_identical(a, b)
})

test_that("inputs: plain numbers and vectors are one column, data frames work", {
  set.seed(4)
  a <- rff_kernel_error(x = 1, y = 0, D = 50, reps = 3, keep = TRUE)
  set.seed(4)
  b <- rff_kernel_error(x = matrix(1), y = data.frame(v = 0), D = 50, reps = 3, keep = TRUE)
  expect_identical(unclass(a), unclass(b))
  expect_equal(dim(attr(a, "estimate")), c(1, 1, 3))
  expect_equal(a$max_abs, abs(attr(a, "estimate")[1, 1, ] - exp(-1 / 2)))
  x <- matrix(1:6, 3, dimnames = list(c("a", "b", "c"), NULL))
  k <- rff_kernel_error(x, D = 4, keep = TRUE)
  expect_equal(dimnames(attr(k, "estimate"))[1:2], list(c("a", "b", "c"), c("a", "b", "c")))
})

test_that("the mean sup error over |delta| <= 4 falls like D^(-1/2)", {
  set.seed(2024)
  grid <- seq(-4, 4, length.out = 161)
  reps <- 300
  err <- rff_kernel_error(x = grid, y = 0, D = c(100, 1600), reps = reps, keep = TRUE)
  a <- err$max_abs[err$D == 100]
  b <- err$max_abs[err$D == 1600]
  # the sup is over the grid: check it against the estimates themselves
  est <- attr(err, "estimate")[, 1, ]
  expect_equal(err$max_abs, apply(abs(est - exp(-grid^2 / 2)), 2, max), tolerance = 1e-14)
  ratio <- mean(a) / mean(b)
  # delta-method standard error of a ratio of independent means
  se <- ratio * sqrt(var(a) / (reps * mean(a)^2) + var(b) / (reps * mean(b)^2))
  expect_lt(abs(ratio - 4), 4 * se + 0.1)
  expect_lt(se, 0.3)
  s <- summary(err)
  expect_equal(unname(s$slope["max_abs"]), log(mean(b) / mean(a)) / log(16), tolerance = 1e-12)
})

test_that("summary() gives means, sds and standard errors per D", {
  set.seed(6)
  err <- rff_kernel_error(seq(0, 2, by = 0.25), y = 0, D = c(10, 40, 160), reps = 7,
                          kernel = "laplace", variant = "phase")
  s <- summary(err)
  expect_s3_class(s, "summary.rff_kernel_error")
  expect_equal(s$mean$D, c(10, 40, 160))
  expect_equal(s$mean$reps, rep(7L, 3))
  for (k in c("max_abs", "mean_abs", "rmse", "rel_fro")) {
    expect_equal(s$mean[[k]], as.vector(tapply(err[[k]], err$D, mean)))
    expect_equal(s$sd[[k]], as.vector(tapply(err[[k]], err$D, sd)))
    expect_equal(s$se[[k]], s$sd[[k]] / sqrt(7))
    fit <- lm(log(tapply(err[[k]], err$D, mean)) ~ log(c(10, 40, 160)))
    expect_equal(unname(s$slope[k]), unname(coef(fit)[2]))
  }
  expect_null(summary(rff_kernel_error(1, 0, D = 10, reps = 3))$slope)
  expect_output(print(s), "Slope of log\\(mean error\\)")
  expect_output(print(err), "21 replicates at D = 10, 40, 160 \\(phase\\)")
  expect_output(print(err), "Laplace kernel, 9 x 1 points in 1 dimension")
  expect_output(print(rff_kernel_error(1, 0, D = 10)), "max_abs")
})

test_that("plot() draws a log-log study and a histogram for one D", {
  set.seed(7)
  err <- rff_kernel_error(seq(-1, 1, by = 0.1), y = 0, D = c(10, 40), reps = 5)
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off())
  expect_identical(plot(err), err)
  expect_identical(plot(err, which = "rmse", reference = FALSE), err)
  one <- rff_kernel_error(matrix(rnorm(8), 4), D = 10, reps = 6)
  expect_identical(plot(one, which = "rel_spec"), one)
  expect_error(plot(err, which = "rel_spec"), class = "rff_error")
  expect_error(plot(err, which = "bogus"), class = "rff_error")
  expect_error(plot(err, reference = NA), class = "rff_error")
})

test_that("bad input is an rff_error naming the argument", {
  x <- matrix(rnorm(6), 3, 2)
  map <- rff_map(2, D = 10)
  expect_identical(rff_error_arg(rff_kernel_error(x, reps = 0)), "reps")
  expect_identical(rff_error_arg(rff_kernel_error(x, reps = 1.5)), "reps")
  expect_identical(rff_error_arg(rff_kernel_error(x, map = map, reps = 2)), "reps")
  expect_identical(rff_error_arg(rff_kernel_error(x, map = map, D = 10)), "map")
  expect_identical(rff_error_arg(rff_kernel_error(x, map = "a")), "map")
  expect_identical(rff_error_arg(rff_kernel_error(x[, 1], map = map)), "x")
  expect_identical(rff_error_arg(rff_kernel_error(x, y = 1:3)), "y")
  expect_identical(rff_error_arg(rff_kernel_error(x, y = matrix(NA_real_, 1, 2))), "y")
  expect_identical(rff_error_arg(rff_kernel_error(c(1, Inf))), "x")
  expect_identical(rff_error_arg(rff_kernel_error(x, D = 7)), "D")
  expect_identical(rff_error_arg(rff_kernel_error(x, D = c(10, -2))), "D")
  expect_identical(rff_error_arg(rff_kernel_error(x, D = numeric(0))), "D")
  expect_identical(rff_error_arg(rff_kernel_error(x, D = "10")), "D")
  expect_identical(rff_error_arg(rff_kernel_error(x, kernel = "cosine")), "kernel")
  expect_identical(rff_error_arg(rff_kernel_error(x, lengthscale = c(1, 2, 3))), "lengthscale")
  expect_identical(rff_error_arg(rff_kernel_error(x, nu = 0)), "nu")
  expect_identical(rff_error_arg(rff_kernel_error(x, variant = "both")), "variant")
  expect_identical(rff_error_arg(rff_kernel_error(x, sampler = "sobol")), "sampler")
  expect_identical(rff_error_arg(rff_kernel_error(x, keep = NA)), "keep")
  expect_identical(rff_error_arg(rff_kernel_error(x, threads = 0)), "threads")
  e <- tryCatch(rff_kernel_error(x, map = map, reps = 2), rff_error = function(e) e)
  expect_match(conditionMessage(e), "`reps` must be 1 when `map` is given")
  e <- tryCatch(rff_kernel_error(x, y = 1:3), rff_error = function(e) e)
  expect_match(conditionMessage(e), "`y` has 1 column but `x` has 2")
})

test_that("the arc-cosine kernel and rff_spectral() kernels work in the study", {
  set.seed(31)
  x <- matrix(rnorm(12), 4, 3)
  for (ord in 0:1) {
    set.seed(32)
    e <- rff_kernel_error(x, D = 20, kernel = "arccos", order = ord, reps = 3, keep = TRUE)
    set.seed(32)
    for (r in 1:3) {
      Z <- rff_features(x, D = 20, kernel = "arccos", order = ord)
      E <- tcrossprod(Z) - rff_kernel(x, kernel = "arccos", order = ord)
      expect_equal(e$max_abs[r], max(abs(E)), tolerance = 1e-12)
      expect_equal(e$rel_fro[r], norm(E, "F") / norm(rff_kernel(x, kernel = "arccos", order = ord), "F"),
                   tolerance = 1e-12)
    }
  }
  gauss <- rff_spectral(function(m, d) matrix(rnorm(m * d), d, m),
                        function(delta) exp(-sum(delta^2) / 2))
  set.seed(33)
  e1 <- rff_kernel_error(x, D = 10, kernel = gauss, reps = 2)
  set.seed(33)
  e2 <- rff_kernel_error(x, D = 10, kernel = "gaussian", reps = 2)
  # the same law drawn from the same normals: identical errors
  expect_equal(e1$rmse, e2$rmse, tolerance = 1e-12)
  expect_equal(rff_variance(c(0.5, 1), D = 10, kernel = gauss),
               rff_variance(c(0.5, 1), D = 10, kernel = "gaussian"), tolerance = 1e-14)
  expect_error(rff_variance(1, D = 10, kernel = "arccos"), class = "rff_error")
})

test_that("a result table larger than memory is an rff_error naming reps", {
  err <- expect_error(rff_kernel_error(matrix(1:4, 2), D = 4, reps = 1e12), class = "rff_error")
  expect_identical(err$arg, "reps")
})
