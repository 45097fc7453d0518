# rff_glm(estimator = "ls") (R/glm-ls.R): each step against the direct
# computation it replaces: the least-squares fit and its lambda against
# rff_ridge() of the indicators, the leave-one-out scores against refits
# without the row, the calibration against stats::glm() (binomial) and the
# stationarity of its likelihood (multinomial), the probabilities against
# the softmax of the ridge fit's scores computed by hand.

ls_data <- function(n = 400, seed = 1) {
  set.seed(seed)
  x <- matrix(runif(2 * n, -1, 1), n, 2)
  ang <- atan2(x[, 2], x[, 1])
  list(x = x, yb = factor(ifelse(rowSums(x^2) + rnorm(n, sd = 0.1) < 0.5, "in", "out")),
       yk = cut(ang + rnorm(n, sd = 0.2), c(-Inf, -1.5, 0, 1.5, Inf), labels = c("a", "b", "c", "d")))
}

test_that("the least-squares fit and its lambda are rff_ridge()'s on the indicators", {
  d <- ls_data()
  m <- rff_map(2, D = 80, lengthscale = 0.5)
  f <- rff_glm(d$x, d$yk, map = m, estimator = "ls", standardize = FALSE, progress = FALSE)
  Y <- outer(as.integer(d$yk), 1:4, `==`) + 0
  r <- rff_ridge(d$x, Y, map = m, standardize = FALSE, progress = FALSE)
  expect_equal(f$lambda_best, r$lambda_best, tolerance = 1e-12)
  expect_equal(f$ls$lambda, r$lambda, tolerance = 1e-12)
  t <- f$ls$temperature
  B <- matrix(r$coefficients[, , r$best], 80, 4)
  expect_equal(unname(f$coefficients[, , 1L]), t * unname(B), tolerance = 1e-10)
  a <- r$intercept[, r$best]
  expect_equal(unname(f$intercept[, 1L]), unname(t * a + f$ls$offset), tolerance = 1e-10)
  # probabilities: the softmax of t (a + z B) + c, by hand
  Z <- rff_features(d$x[1:7, ], map = m)
  eta <- t * (Z %*% B + rep(a, each = 7)) + rep(f$ls$offset, each = 7)
  P <- exp(eta) / rowSums(exp(eta))
  expect_equal(unname(predict(f, d$x[1:7, ], type = "response")), unname(P),
               tolerance = 1e-10, ignore_attr = TRUE)
  expect_identical(as.character(predict(f, d$x[1:7, ], type = "class")),
                   levels(d$yk)[max.col(P)])
  expect_output(print(f), "estimator \"ls\"")
})

test_that("the leave-one-out scores equal refits without the row", {
  d <- ls_data(n = 150, seed = 2)
  m <- rff_map(2, D = 40, lengthscale = 0.7)
  Y <- outer(as.integer(d$yk), 1:4, `==`) + 0
  w <- runif(150, 0.5, 2)
  lam <- 1e-3
  for (wt in list(NULL, w)) {
    st <- rff:::accumulate_stats(d$x, Y, m, TRUE, 64L, 1L, FALSE, wt, 1)
    sys <- rff:::normal_equations(st)
    e <- .Call(rff:::C_rff_ridge_eigen, sys$A, 1L)
    rows <- c(3, 50, 149)
    got <- rff:::ls_loo_scores(sys, e, lam, m, d$x[rows, ], Y[rows, ],
                               if (is.null(wt)) NULL else wt[rows], 1L)
    for (j in seq_along(rows)) {
      i <- rows[j]
      # without row i, the penalty n lambda of the full fit kept: lambda scaled
      W <- if (is.null(wt)) 150 else sum(wt)
      Wi <- if (is.null(wt)) 149 else sum(wt[-i])
      ref <- rff_ridge(d$x[-i, ], Y[-i, ], map = m, lambda = lam * W / Wi, standardize = FALSE,
                       weights = if (is.null(wt)) NULL else wt[-i], progress = FALSE)
      expect_equal(unname(got[j, ]), unname(predict(ref, d$x[i, , drop = FALSE])[1, ]),
                   tolerance = 1e-8)
    }
  }
})

test_that("the calibration is the likelihood's: glm() for two classes, a stationary point for more", {
  set.seed(4)
  f <- matrix(rnorm(300), ncol = 1)
  y <- as.numeric(runif(300) < plogis(3 * f[, 1] - 0.5))
  w <- runif(300, 0.5, 1.5)
  cf <- rff:::ls_calibration(f, y, w, "binomial")
  ref <- suppressWarnings(glm(y ~ f[, 1], family = binomial, weights = w))
  expect_equal(c(cf$offset, cf$t), unname(coef(ref)), tolerance = 1e-5)
  # multinomial: the gradient of the mean log-loss in (log t, c_2..c_K) is 0
  K <- 3
  f3 <- matrix(runif(900), 300, K)
  y3 <- max.col(f3 * 4 + matrix(rnorm(900), 300))
  cf3 <- rff:::ls_calibration(f3, y3, w, "multinomial")
  loss <- function(p) {
    eta <- exp(p[1]) * f3 + rep(c(0, p[-1]), each = 300)
    lse <- log(rowSums(exp(eta)))
    sum(w * (lse - eta[cbind(1:300, y3)])) / sum(w)
  }
  p <- c(log(cf3$t), cf3$offset[-1])
  g <- vapply(seq_along(p), function(j) {
    h <- replace(numeric(length(p)), j, 1e-5)
    (loss(p + h) - loss(p - h)) / 2e-5
  }, numeric(1))
  expect_lt(max(abs(g)), 1e-5)
  expect_equal(cf3$logloss, loss(p), tolerance = 1e-10)
})

test_that("the binomial LS fit, weights, threads and refusals", {
  d <- ls_data(seed = 5)
  m <- rff_map(2, D = 60, lengthscale = 0.5)
  w <- rep(c(1, 2), 200)
  f <- rff_glm(d$x, d$yb, map = m, estimator = "ls", weights = w, standardize = FALSE,
               progress = FALSE, threads = 1)
  r <- rff_ridge(d$x, as.numeric(d$yb == "out"), map = m, weights = w, standardize = FALSE,
                 progress = FALSE)
  expect_equal(f$lambda_best, r$lambda_best, tolerance = 1e-12)
  eta <- predict(f, d$x[1:5, ])
  ref <- f$ls$temperature * predict(r, d$x[1:5, ]) + f$ls$offset
  expect_equal(unname(eta), unname(ref), tolerance = 1e-10)
  f2 <- rff_glm(d$x, d$yb, map = m, estimator = "ls", weights = w, standardize = FALSE,
                progress = FALSE, threads = 2)
  expect_identical(coef(f2), coef(f))
  # the deviance of the calibrated probabilities, by hand
  p <- predict(f, d$x, type = "response")
  yy <- as.numeric(d$yb == "out")
  expect_equal(f$deviance, -2 * sum(w * (yy * log(p) + (1 - yy) * log(1 - p))), tolerance = 1e-8)
  # one lambda given: the ridge solve at that lambda
  f1 <- rff_glm(d$x, d$yb, map = m, estimator = "ls", lambda = 1e-3, standardize = FALSE,
                progress = FALSE)
  r1 <- rff_ridge(d$x, yy, map = m, lambda = 1e-3, standardize = FALSE, progress = FALSE)
  expect_equal(unname(coef(f1)[-1] / f1$ls$temperature), unname(coef(r1)[-1]), tolerance = 1e-10)
  expect_rff_error(rff_glm(d$x, rpois(400, 2), family = "poisson", D = 10, estimator = "ls",
                           progress = FALSE), "estimator")
  expect_rff_error(rff_glm(d$x, d$yb, D = 10, offset = rep(0.1, 400), estimator = "ls",
                           progress = FALSE), "estimator")
  expect_rff_error(rff_glm(d$x, d$yb, D = 10, estimator = "lsq", progress = FALSE), "estimator")
  # the formula method passes it on
  df <- data.frame(u = d$x[, 1], v = d$x[, 2], cls = d$yk)
  ff <- rff_glm(cls ~ u + v, data = df, D = 40, estimator = "ls", progress = FALSE)
  expect_identical(ff$estimator, "ls")
  expect_equal(dim(predict(ff, df[1:3, ], type = "response")), c(3L, 4L))
})
