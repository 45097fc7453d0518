# rff_glm() with cached features and more rows than features solves its
# path on the features turned to the preconditioner's eigenvectors
# (glm_fit_candidate() in R/glm-fit.R), where the preconditioner is diagonal.
# Checked against the unrotated solve of the same problem (features
# streamed, cache_mb = 0, dense preconditioner) and against the optimality
# conditions of the penalized likelihood computed in base R.

# The gradient of loss / W + lambda / 2 |B|^2 at a fit's lambda_best, from
# the features in base R: Z'(w (mu - y)) / W + lambda B for the features,
# sum(w (mu - y)) / W for the intercept (binomial and Poisson, one column).
kkt_gradient <- function(fit, x, y, w, offset = 0) {
  Z <- rff_features(x, map = fit$map)
  b <- coef(fit)
  eta <- drop(b[1] + Z %*% b[-1]) + offset
  mu <- if (fit$family == "binomial") plogis(eta) else exp(eta)
  r <- w * (mu - y) / sum(w)
  c(sum(r), drop(crossprod(Z, r)) + fit$lambda_best * b[-1])
}

test_that("the rotated cached solve equals the streamed one and is optimal", {
  set.seed(51)
  n <- 600  # more than the 512 rows a block of the rotation turns
  x <- matrix(rnorm(3 * n), n, 3)
  m <- rff_map(3, D = 40, lengthscale = 1.5)
  w <- runif(n, 0.5, 2)
  off <- rnorm(n, sd = 0.2)
  ctl <- list(epsilon = 1e-13, maxit = 2000)
  yb <- as.double(runif(n) < plogis(sin(2 * x[, 1]) + off))
  yp <- rpois(n, exp(0.5 * cos(x[, 2]) + off))
  cases <- list(binomial = yb, poisson = yp)
  for (fam in names(cases)) {
    y <- cases[[fam]]
    args <- list(x, y, family = fam, map = m, weights = w, offset = off, nlambda = 6,
                 foldid = rep_len(1:3, n), control = ctl, threads = 1, standardize = FALSE,
                 progress = FALSE)
    f1 <- do.call(rff_glm, args)
    f0 <- do.call(rff_glm, c(args, cache_mb = 0))
    expect_true(f1$cached)
    expect_false(f0$cached)
    expect_equal(f1$lambda, f0$lambda, tolerance = 1e-12, info = fam)
    expect_equal(f1$cvm, f0$cvm, tolerance = 1e-6, info = fam)
    expect_equal(f1$deviance, f0$deviance, tolerance = 1e-8, info = fam)
    expect_equal(coef(f1), coef(f0), tolerance = 1e-5, info = fam)
    # the rotated solution is a stationary point of the penalized likelihood
    g <- kkt_gradient(f1, x, y, w / max(w), off)
    expect_lt(max(abs(g)), 1e-6, label = paste(fam, "optimality"))
  }
  # multinomial: K = 3 classes, the preconditioner's class rotation as well
  yk <- factor(max.col(cbind(x[, 1], x[, 2], -x[, 1] - x[, 2]) + matrix(rnorm(3 * n), n)))
  args <- list(x, yk, family = "multinomial", map = m, weights = w, nlambda = 5,
               foldid = rep_len(1:3, n), control = ctl, threads = 1, progress = FALSE)
  f1 <- do.call(rff_glm, args)
  f0 <- do.call(rff_glm, c(args, cache_mb = 0))
  expect_true(f1$cached)
  expect_equal(f1$cvm, f0$cvm, tolerance = 1e-6)
  expect_equal(f1$deviance, f0$deviance, tolerance = 1e-8)
  expect_equal(predict(f1, x, type = "response"), predict(f0, x, type = "response"),
               tolerance = 1e-6)
})

test_that("the rotated solve gives the same fit for 1 and 2 threads", {
  set.seed(52)
  n <- 400
  x <- matrix(rnorm(2 * n), n, 2)
  y <- as.double(runif(n) < plogis(x[, 1] * x[, 2]))
  m <- rff_map(2, D = 60)
  set.seed(53)
  f1 <- rff_glm(x, y, map = m, nlambda = 5, threads = 1, progress = FALSE)
  set.seed(53)
  f2 <- rff_glm(x, y, map = m, nlambda = 5, threads = 2, progress = FALSE)
  expect_identical(coef(f1), coef(f2))
  expect_identical(f1$cvm, f2$cvm)
})

test_that("many rows: the C solver on threads gives one thread's fit, stationary by base R", {
  # products of a pass large enough to be shared among threads (n K r =
  # 1.3e6 multiply-adds), in fixed blocks of rows
  set.seed(54)
  n <- 8400
  x <- matrix(rnorm(2 * n), n, 2)
  y <- factor(c("a", "b", "c", "d")[1 + (x[, 1] + rnorm(n, sd = 0.5) > 0) +
                                      2 * (x[, 2] + rnorm(n, sd = 0.5) > 0)])
  m <- rff_map(2, D = 40, lengthscale = 1)
  lam <- 1e-3
  # the preconditioner's rows are a random sample: the same for both
  fit <- function(threads, lambda = lam, ...) {
    set.seed(55)
    rff_glm(x, y, map = m, lambda = lambda, standardize = FALSE, threads = threads,
            progress = FALSE, ...)
  }
  f1 <- fit(1, control = list(epsilon = 1e-13, maxit = 2000))
  f2 <- fit(2, control = list(epsilon = 1e-13, maxit = 2000))
  expect_true(f1$cached)
  expect_identical(coef(f1), coef(f2))
  expect_identical(f1$deviance, f2$deviance)
  # the deviance and the gradient at the fit, from the features in base R
  Z <- rff_features(x, map = m)
  B <- f1$coefficients[, , 1L]
  eta <- Z %*% B + rep(f1$intercept[, 1L], each = n)
  p <- exp(eta - apply(eta, 1L, max))
  p <- p / rowSums(p)
  Y <- outer(as.integer(y), 1:4, `==`) + 0
  expect_equal(f1$deviance, -2 * sum(log(p[Y == 1])), tolerance = 1e-10)
  expect_lt(max(abs(crossprod(Z, p - Y) / n + lam * B)), 1e-7)
  expect_lt(max(abs(colSums(p - Y) / n)), 1e-7)
  # and cross-validated on threads
  c1 <- fit(1, lambda = c(1e-2, lam), foldid = rep_len(1:3, n))
  c2 <- fit(2, lambda = c(1e-2, lam), foldid = rep_len(1:3, n))
  expect_identical(c1$cvm, c2$cvm)
})

test_that("features left unturned, coefficients turned on every pass: the turned solve's fit", {
  # glm_fit_candidate() turns the features to the preconditioner's
  # eigenvectors V when that costs less than turning the coefficients on
  # every pass (V B, V'(Z'R)); both solve the same problem
  set.seed(56)
  n <- 700
  x <- matrix(rnorm(3 * n), n, 3)
  m <- rff_map(3, D = 50, lengthscale = 1.3)
  w <- runif(n, 0.5, 2)
  cases <- list(binomial = factor(x[, 1] * x[, 2] + rnorm(n, sd = 0.5) > 0),
                poisson = rpois(n, exp(0.5 * cos(x[, 2]))),
                multinomial = factor(1 + (x[, 1] > 0) + (x[, 2] + x[, 3] > 0.5)))
  for (fam in names(cases)) {
    # (at 1e-12 the last lambda of 3 classes stopped short of the tolerance,
    # its line search out of digits, at rounding-dependent points)
    g <- rff:::glm_setup(x, cases[[fam]], fam, NULL, m, TRUE, FALSE, w, NULL, 6, 1e-4, Inf,
                         list(epsilon = 1e-10, maxit = 3000L), NULL, 1L, FALSE, list(),
                         "rff_glm")
    foldid <- rep_len(1:3, n)
    fit <- function(turn) {
      set.seed(57)
      rff:::glm_fit_candidate(g, g$map, foldid, "deviance", refine = TRUE, turn = turn)
    }
    a <- fit(TRUE)
    b <- fit(FALSE)
    expect_null(a$prob$vmap)
    expect_identical(b$prob$vmap, b$prob$basis)
    # the features where they lie: those of the map, not turned
    expect_identical(b$prob$Z, rff_features(g$x, map = g$map, threads = 1L),
                     ignore_attr = TRUE)
    expect_true(rff:::lbfgs_in_c(b$prob, b$P))
    expect_equal(b$lambda, a$lambda, tolerance = 1e-12, info = fam)
    expect_true(all(a$full$converged) && all(b$full$converged), label = fam)
    # both solved to the tolerance: at the smallest lambda of 3 classes the
    # coefficients agreed to 2e-6 and the loss to 2e-7 (optimized and
    # sanitizer builds); the folds, solved to 1e-4 whatever `epsilon`, to
    # 4e-5 in their deviance
    expect_equal(b$cv$cvm, a$cv$cvm, tolerance = 1e-3, info = fam)
    ca <- rff:::lift_coef(a$full$coef, a$prob$basis)
    cb <- rff:::lift_coef(b$full$coef, b$prob$basis)
    expect_equal(c(cb), c(ca), tolerance = 1e-4, info = fam)
    expect_equal(b$full$loss, a$full$loss, tolerance = 1e-6, info = fam)
    # a pass in R on the unturned problem is the turned problem's pass
    th <- matrix(rnorm((g$map$D + 1) * g$K, sd = 0.2), g$map$D + 1)
    pa <- rff:::glm_pass(a$prob, th)
    pb <- rff:::glm_pass(b$prob, th)
    expect_equal(pb$eta, pa$eta, tolerance = 1e-12, info = fam)
    expect_equal(pb$grad, pa$grad, tolerance = 1e-12, info = fam)
    # and the C solver takes the R solver's iterations on it, step for step
    th0 <- rff:::to_inner(matrix(b$full$coef[, , 2L], g$map$D + 1), b$P$zbar)
    ctl <- list(epsilon = 1e-10, maxit = 200L)
    rc <- rff:::lbfgs_lambda(b$prob, th0, b$lambda[4L], b$P, NULL, sum(b$prob$w), ctl)
    rr <- rff:::lbfgs_lambda(b$prob, th0, b$lambda[4L], b$P, NULL, sum(b$prob$w), ctl,
                             in_c = FALSE)
    expect_identical(rc$iter, rr$iter, info = fam)
    expect_gt(rc$iter, 3L)
    expect_equal(rc$th, rr$th, tolerance = 1e-9, info = fam)
    expect_equal(unname(rc$cur$g), unname(rr$cur$g), tolerance = 1e-6, info = fam)
  }
})

test_that("the features are turned when the passes planned cost more than the turn", {
  pass <- function(n, D, K, passes) passes * rff:::glm_pass_cost(n, D, K)
  # mlbench::LetterRecognition's default: one held-out fold, 20 lambdas
  expect_false(rff:::glm_turns_features(16000, 1224, 26, pass(16000, 1224, 26, 170)))
  # a binary response: a pass turns D x 1 coefficients each way
  expect_false(rff:::glm_turns_features(1500, 1000, 1, pass(1500, 1000, 1, 394)))
  # 5 folds of 26 classes on 2,000 rows: 394 passes of 2 D^2 K each way
  expect_true(rff:::glm_turns_features(2000, 1000, 26, pass(2000, 1000, 26, 394)))
  # the boundary: turned below rows = 2 K passes (999)
  expect_true(rff:::glm_turns_features(998, 500, 3, pass(998, 500, 3, 166.5)))
  expect_false(rff:::glm_turns_features(999, 500, 3, pass(999, 500, 3, 166.5)))
})
