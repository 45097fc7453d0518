# The shared model machinery of R/model.R, against base-R computations on
# the feature matrix of rff_features().

model_data <- function(n = 120, d = 2, seed = 11) {
  set.seed(seed)
  x <- matrix(rnorm(n * d), n, d)
  y <- cbind(a = cos(x[, 1]) + rnorm(n, sd = 0.1), b = x[, 2]^2 + 5)
  list(x = x, y = y)
}

test_that("normal equations and path solves equal base-R ridge at every lambda", {
  dat <- model_data()
  n <- nrow(dat$x)
  m <- rff_map(2, D = 24, lengthscale = 1.2)
  Z <- unclass(rff_features(dat$x, map = m))[, ]
  for (icpt in c(TRUE, FALSE)) {
    s <- rff_stats(dat$x, dat$y, m, intercept = icpt)
    sys <- rff:::normal_equations(s)
    Zc <- if (icpt) sweep(Z, 2, colMeans(Z)) else Z
    yc <- if (icpt) sweep(dat$y, 2, colMeans(dat$y)) else dat$y
    expect_equal(sys$A, crossprod(Zc), tolerance = 1e-10)
    expect_equal(unname(sys$b), unname(crossprod(Zc, yc)), tolerance = 1e-10)
    expect_equal(sys$yy, unname(colSums(yc^2)), tolerance = 1e-10)
    lambda <- c(0.1, 1e-3)
    p <- rff:::solve_path(sys, lambda)
    expect_equal(p$method, "eigen")
    for (i in seq_along(lambda)) {
      G <- crossprod(Zc) + n * lambda[i] * diag(24)
      beta <- solve(G, crossprod(Zc, yc))
      H <- Zc %*% solve(G, t(Zc)) + if (icpt) 1 / n else 0
      a0 <- if (icpt) colMeans(dat$y) - drop(crossprod(beta, colMeans(Z))) else c(0, 0)
      expect_equal(p$beta[, , i], unname(beta), tolerance = 1e-8)
      expect_equal(p$intercept[, i], unname(a0), tolerance = 1e-8)
      expect_equal(p$df[i], sum(diag(H)), tolerance = 1e-8)
      res <- dat$y - Z %*% beta - rep(a0, each = n)
      expect_equal(p$rss[i, ], unname(colSums(res^2)), tolerance = 1e-8)
      one <- rff:::solve_path(sys, lambda[i])
      expect_equal(one$method, "cholesky")
      expect_equal(one$beta[, , 1L], p$beta[, , i], tolerance = 1e-8)
      expect_equal(one$df, p$df[i], tolerance = 1e-8)
    }
  }
})

test_that("the data-driven lambda path starts at trace(A) / n", {
  A <- crossprod(matrix(rnorm(60), 20, 3))
  path <- rff:::check_path(NULL, 5, 1e-4)
  lam <- rff:::lambda_values(path, A, 20)
  expect_length(lam, 5)
  expect_equal(lam[1L], sum(diag(A)) / 20)
  expect_equal(lam[5L], 1e-4 * sum(diag(A)) / 20)
  expect_equal(diff(log(lam)), rep(log(1e-4) / 4, 4))
  expect_identical(rff:::lambda_values(rff:::check_path(c(3, 1L), 5, 1e-4), A, 20), c(3, 1))
  expect_equal(rff:::lambda_values(path, matrix(0, 2, 2), 20)[1L], 1)
})

test_that("GCV is n RSS / (n - df)^2, infinite from df = n, best summed over responses", {
  rss <- cbind(c(4, 1, 0.5), c(1, 1, 0.1))
  df <- c(2, 5, 10)
  g <- rff:::gcv_select(rss, df, 10)
  expect_equal(g$gcv[1:2, ], 10 * rss[1:2, ] / (10 - df[1:2])^2)
  expect_equal(g$gcv[3L, ], c(Inf, Inf))
  expect_identical(g$best, which.min(rowSums(10 * rss[1:2, ] / (10 - df[1:2])^2)))
  expect_identical(rff:::gcv_select(matrix(1, 1, 1), 3, 2)$best, 1L)
})

test_that("path arrays are shaped as vectors, matrices or arrays", {
  a <- array(seq_len(24), c(4, 3, 2))
  shape <- rff:::shape_by_lambda
  rows <- letters[1:4]
  expect_identical(shape(a[, 1, 1, drop = FALSE], rows, "y", "l1"),
                   stats::setNames(1:4, rows))
  expect_identical(shape(a[, 1, , drop = FALSE], rows, "y", c("l1", "l2")),
                   matrix(c(1:4, 13:16), 4, dimnames = list(rows, c("l1", "l2"))))
  expect_identical(shape(a[, , 2, drop = FALSE], rows, c("u", "v", "w"), "l2"),
                   matrix(13:24, 4, dimnames = list(rows, c("u", "v", "w"))))
  full <- shape(a, NULL, c("u", "v", "w"), c("l1", "l2"))
  expect_identical(dimnames(full), list(NULL, c("u", "v", "w"), c("l1", "l2")))
  expect_identical(unname(full), a)
})

test_that("predictions are Z beta + intercept at the chosen lambdas", {
  dat <- model_data(n = 60)
  m <- rff_map(2, D = 16, lengthscale = 0.8, variant = "phase")
  fit <- rff_ridge(dat$x, dat$y, map = m, nlambda = 4, progress = FALSE, standardize = FALSE)
  Z <- unclass(rff_features(dat$x, map = m))[, ]
  P <- rff:::predict_rows(fit, dat$x, c(2L, 4L), chunk_size = 7L, threads = 1L)
  for (k in 1:2) {
    i <- c(2L, 4L)[k]
    ref <- Z %*% fit$coefficients[, , i] + rep(fit$intercept[, i], each = 60)
    expect_equal(P[, , k], unname(ref), tolerance = 1e-10)
  }
})

test_that("a rescaled map equals the map drawn at that lengthscale", {
  for (l in list(2, c(0.5, 3))) {
    set.seed(5)
    base <- rff_map(2, D = 20, lengthscale = 1)
    set.seed(5)
    direct <- rff_map(2, D = 20, lengthscale = l)
    expect_equal(unclass(rff:::rescale_map(base, l)), unclass(direct))
  }
})

test_that("maps given for fitting: checked against the inputs, or refused", {
  m <- rff_map(3, D = 10)
  expect_identical(rff:::fit_map(3, m), m)
  expect_error(rff:::fit_map(2, m), "drawn for 3 input columns", class = "rff_error")
  expect_error(rff:::fit_map(3, m, D = 4), "do not also give `D`", class = "rff_error")
})

test_that("formula frames hold lm()'s model matrix and response", {
  d <- data.frame(y = 1:8 + 0.5, u = c(2, 4, 1, 3, 5, 7, 6, 8),
                  f = factor(rep(c("p", "q"), 4)))
  d$u[2] <- NA
  call <- quote(fit(formula = y ~ u + f, data = d, foo = 1))
  fr <- rff:::formula_frame(call, environment())
  ref <- lm(y ~ u + f, data = d)
  expect_equal(fr$x, model.matrix(ref)[, -1L, drop = FALSE], ignore_attr = TRUE)
  expect_equal(unname(fr$y), unname(model.response(model.frame(ref))))
  expect_true(fr$intercept)
  expect_identical(fr$model$xlevels, ref$xlevels)
  expect_identical(names(fr$model$na.action), "2")
  fr0 <- rff:::formula_frame(quote(fit(formula = y ~ u - 1, data = d)), environment())
  expect_false(fr0$intercept)
  expect_identical(colnames(fr0$x), "u")
})

test_that("a fit's call is shown as a call of the generic", {
  cl <- rff:::fit_call(quote(rff_ridge.default(x, y, lambda = 1)), "rff_ridge")
  expect_identical(cl, quote(rff_ridge(x, y, lambda = 1)))
})

test_that("standardization: (weighted) means and standard deviations, constant columns", {
  set.seed(21)
  x <- cbind(a = rnorm(30, 5, 2), b = runif(30), k = 3)
  expect_message(s <- rff:::standardization(x), "\"k\" is constant")
  expect_equal(unname(s$center), unname(colMeans(x)))
  expect_equal(unname(s$scale), c(sd(x[, 1]), sd(x[, 2]), 1))
  w <- c(rep(2, 10), rep(0.5, 10), rep(0, 10))
  sw <- suppressMessages(rff:::standardization(x, w))
  xp <- x[w > 0, ]
  wp <- w[w > 0]
  cw <- colSums(xp * wp) / sum(wp)
  expect_equal(unname(sw$center), unname(cw))
  # the weighted sd equals sd() for equal weights
  ref_sd <- sqrt(colSums(wp * (xp - rep(cw, each = 20))^2) / sum(wp) * 20 / 19)
  expect_equal(unname(sw$scale[1:2]), unname(ref_sd[1:2]))
  z <- rff:::standardize_rows(x, s)
  expect_equal(unname(z[, 1:2]), unname(scale(x[, 1:2])), ignore_attr = TRUE)
  expect_equal(z[, 3], rep(0, 30))
})

test_that("the default D is sqrt(n) log(n), between 1000 and 3000, within the flop budget", {
  D <- rff:::default_D
  expect_identical(D(100), 1000L)
  for (n in c(2e4, 40455)) {
    expect_identical(D(n), as.integer(2 * round(sqrt(n) * log(n) / 2)))
  }
  expect_identical(D(40455), 2134L)
  expect_identical(D(2e5), 3000L)
  # the budget of 2e12 flops for Z'Z
  expect_identical(D(5e5), 2000L)
  expect_identical(D(1e7), as.integer(2 * round(sqrt(2e12 / 1e7) / 2)))
  expect_true(all(vapply(c(2, 10, 1e3, 1e6, 1e8), D, 1L) %% 2L == 0L))
})

test_that("the leave-one-out path equals refits without each row, with and without weights", {
  # D = 12 < n: the features are streamed again; D = 60 > n: the rows'
  # projections come from the thin n x n eigenproblem (a row of weight 0
  # adds nothing either way)
  set.seed(22)
  n <- 40
  x <- matrix(rnorm(n * 2), n, 2)
  y <- sin(2 * x[, 1]) + rnorm(n, sd = 0.3)
  lambda <- c(0.1, 1e-2, 1e-3)
  w0 <- runif(n, 0.2, 3)
  w0[7] <- 0
  for (D in c(12, 60)) for (w in list(NULL, runif(n, 0.2, 3), w0)) {
    m <- rff_map(2, D = D, lengthscale = 1.3)
    Z <- unclass(rff_features(x, map = m))[, ]
    fit <- rff_ridge(x, y, lambda = lambda, map = m, standardize = FALSE, weights = w,
                     progress = FALSE)
    expect_identical(fit$criterion, "LOO")
    ww <- if (is.null(w)) rep(1, n) else w
    W <- sum(ww)
    X <- cbind(1, Z)
    ref <- vapply(lambda, function(l) {
      P <- diag(c(0, rep(W * l, D)))   # the penalty of the whole fit, intercept free
      e <- vapply(seq_len(n), function(i) {
        b <- solve(crossprod(X[-i, ] * ww[-i], X[-i, ]) + P, crossprod(X[-i, ], ww[-i] * y[-i]))
        y[i] - sum(X[i, ] * b)
      }, 0)
      sum(ww * e^2) / W
    }, 0)
    expect_equal(fit$loo, ref, tolerance = 1e-8, label = sprintf("D = %d", D))
    expect_identical(fit$best, which.min(ref))
  }
})

test_that("the thin eigenproblem's products equal base R on any number of threads", {
  # a a' by the split dsyrk and a'b by the split dgemm, past one column
  # block (128) each, and empty shapes
  set.seed(23)
  a <- matrix(rnorm(150 * 40), 150, 40)
  b <- matrix(rnorm(150 * 3), 150, 3)
  tp <- function(a, b, th) .Call(rff:::C_rff_ridge_thin_products, a, b, th)
  expect_equal(tp(a, NULL, 2L), tcrossprod(a), tolerance = 1e-13)
  expect_identical(tp(a, NULL, 1L), tp(a, NULL, 2L))
  expect_true(isSymmetric(tp(a, NULL, 2L), tol = 0))
  wide <- t(a)   # 40 x 150: a'b has 150 rows, b 40 rows
  bb <- matrix(rnorm(40 * 130), 40, 130)
  expect_equal(tp(wide, bb, 2L), crossprod(wide, bb), tolerance = 1e-13)
  expect_identical(tp(wide, bb, 1L), tp(wide, bb, 2L))
  expect_identical(tp(matrix(0, 0, 3), NULL, 1L), matrix(0, 0, 0))
  expect_identical(tp(matrix(0, 4, 0), NULL, 1L), matrix(0, 4, 4))
  expect_identical(tp(matrix(0, 0, 3), matrix(0, 0, 2), 1L), matrix(0, 3, 2))
  expect_error(tp(a, b[-1, ], 1L), "`b` must have 150 rows")
})

test_that("the BLAS hint: once per session, reference BLAS only, silenced by an option", {
  st <- rff:::blas_state
  on.exit(rm(list = ls(st), envir = st))
  rm(list = ls(st), envir = st)
  ref <- "/usr/lib/x86_64-linux-gnu/blas/libblas.so.3.11.0"
  hint <- function(elapsed, blas) rff:::blas_hint(elapsed, blas, own = FALSE)
  expect_false(hint(3, ref))
  expect_false(hint(30, "/usr/lib/x86_64-linux-gnu/openblas-pthread/libblas.so.3"))
  # not when the products ran on rff's own kernel
  expect_silent(expect_false(rff:::blas_hint(30, ref, own = TRUE)))
  old <- options(rff.blas_hint = FALSE)
  expect_silent(expect_false(hint(30, ref)))
  options(old)
  expect_message(hint(30, ref), "Getting the faster BLAS")
  expect_silent(expect_false(hint(30, ref)))
  expect_true(rff:::is_reference_blas("/usr/lib/R/lib/libRblas.so"))
  expect_false(rff:::is_reference_blas("/opt/intel/mkl/lib/libmkl_rt.so"))
})

test_that("GP standard errors tend to the exact Gaussian-process posterior as D grows", {
  set.seed(23)
  n <- 60
  x <- matrix(runif(n, -2, 2))
  y <- sin(2 * x[, 1]) + rnorm(n, sd = 0.2)
  xnew <- matrix(seq(-2.5, 2.5, length.out = 7))
  lam <- 1e-3
  ell <- 0.7
  # exact: (1 / (n lambda)) (kc(x, x) - kc_x'(Kc + n lambda I)^-1 kc_x) + 1/n, kc centred
  K <- rff_kernel(x, lengthscale = ell)
  Kx <- rff_kernel(xnew, x, lengthscale = ell)
  kxx <- rep(1, nrow(xnew))
  Kc <- K - rowMeans(K) - rep(colMeans(K), each = n) + mean(K)
  Kxc <- Kx - rowMeans(Kx) - rep(colMeans(K), each = nrow(xnew)) + mean(K)
  kxxc <- kxx - 2 * rowMeans(Kx) + mean(K)
  exact <- (kxxc - rowSums(Kxc %*% solve(Kc + n * lam * diag(n)) * Kxc)) / (n * lam) + 1 / n
  rel_err <- function(D, reps) {
    vapply(seq_len(reps), function(r) {
      fit <- rff_ridge(x, y, lambda = lam, D = D, lengthscale = ell, standardize = FALSE,
                       progress = FALSE)
      v <- rff:::gp_variance_factor(fit, xnew, lam)
      mean(abs(v / exact - 1))
    }, 0)
  }
  small <- rel_err(100, 6)
  large <- rel_err(1600, 6)
  # pointwise errors shrink like D^(-1/2): a factor of about sqrt(16) = 4
  expect_lt(mean(large) + 4 * sd(large) / sqrt(6), mean(small) / 2)
  expect_lt(mean(large), 0.1)
})

test_that("the BLAS hint is shown with a progress bar too", {
  blas <- tryCatch(utils::sessionInfo()$BLAS, error = function(e) "")
  skip_if_not(rff:::is_reference_blas(blas), "the session's BLAS is not the reference BLAS")
  st <- rff:::blas_state
  on.exit(rm(list = ls(st), envir = st))
  rm(list = ls(st), envir = st)
  # the hint is for products on the BLAS
  old <- options(rff.blas_hint_seconds = -1, rff.products = "blas")
  on.exit(options(old), add = TRUE)
  set.seed(5)
  x <- matrix(rnorm(200), 100)
  m <- rff_map(2, D = 10)
  # the bar's on.exit must not replace the hint's
  expect_message(utils::capture.output(rff_stats(x, x[, 1], m, progress = TRUE, chunk_size = 10)),
                 "Getting the faster BLAS")
})

test_that("fits share the parent class rff_fit and its nobs()", {
  set.seed(6)
  x <- matrix(rnorm(120), 60)
  y <- x[, 1] + rnorm(60, sd = 0.1)
  w <- c(rep(0, 10), rep(1, 50))
  f <- rff_ridge(x, y, D = 20, lengthscale = 1, lambda = 0.1, weights = w)
  g <- rff_glm(x, factor(y > 0), D = 20, lengthscale = 1, lambda = 0.1, weights = w)
  expect_identical(class(f), c("rff_ridge", "rff_fit"))
  expect_identical(class(g), c("rff_glm", "rff_fit"))
  # rows of weight zero do not count
  expect_equal(nobs(f), 50)
  expect_equal(nobs(g), 50)
  expect_equal(nobs(rff_cv(x, y, D = 20, lengthscale = 1, folds = 3, nlambda = 4)), 60)
  # fits saved before the parent class have the family's class alone
  class(f) <- "rff_ridge"
  class(g) <- "rff_glm"
  expect_equal(nobs(f), 50)
  expect_equal(nobs(g), 50)
})

test_that("log1pexp() is log(1 + exp(t)) over the whole line", {
  t <- c(-800, -100, -37.5, -37, -5, 0, 1e-10, 3, 18, 18.5, 33, 34, 40, 800)
  # log(1 + e^t) = max(t, 0) + log1p(exp(-|t|)), which never overflows
  ref <- pmax(t, 0) + log1p(exp(-abs(t)))
  expect_equal(rff:::log1pexp(t), ref, tolerance = 1e-15)
  expect_identical(rff:::log1pexp(-800), 0)
})

test_that("the normal equations from the rows' features equal those from the statistics", {
  set.seed(33)
  n <- 30
  x <- matrix(rnorm(2 * n), n, 2)
  y <- cbind(a = x[, 1] + rnorm(n), b = rnorm(n, 5))
  m <- rff_map(2, D = 50, lengthscale = 1)
  Z <- rff_features(x, map = m)
  for (w in list(NULL, c(rep(0, 5), runif(n - 5)))) {
    for (icpt in c(TRUE, FALSE)) {
      s <- rff::rff_stats(x, y, m, intercept = icpt, weights = w)
      ref <- rff:::normal_equations(s)
      got <- rff:::dual_system(unclass(Z)[, , drop = FALSE], y, w, icpt)
      expect_null(got$A)
      expect_equal(got$trace, sum(diag(ref$A)), tolerance = 1e-12)
      for (f in c("b", "yy", "zbar", "ybar", "w")) {
        expect_equal(unname(got[[f]]), unname(ref[[f]]), tolerance = 1e-11, info = f)
      }
      expect_identical(got$n, ref$n)
    }
  }
})

test_that("ridge fits scored from their features equal full fits, and hand their eigenproblem on", {
  set.seed(34)
  n <- 80
  x <- matrix(rnorm(2 * n), n, 2)
  y <- sin(2 * x[, 1]) + rnorm(n, sd = 0.1)
  w <- runif(n)
  md <- list(x = x, y = matrix(y), weights = w)
  m <- rff_map(2, D = 150, lengthscale = 1.3)
  path <- rff:::check_path(NULL, 20, 1e-6)
  fit <- function(...) rff:::ridge_rows_fit(md, m, seq_len(n), path, TRUE, 256L, 1L, "loo", ...)
  full <- fit()
  scored <- fit(score_only = TRUE)
  # scored without statistics or coefficients: the criteria alone
  expect_null(scored$normal$A)
  expect_null(scored$coefficients)
  expect_null(scored$eigen$vectors)
  for (f in c("lambda", "loo", "gcv", "df", "rss", "lambda_best")) {
    expect_equal(scored[[f]], full[[f]], tolerance = 1e-9, info = f)
  }
  # the coefficients of the smallest lambdas are ill-conditioned (their
  # rounding errors grow as 1 / lambda): compare the first half of the path
  half <- 1:10
  # the full fit from the scored fit's eigenproblem: no featurization, the same fit
  again <- fit(eig = scored$eigen)
  expect_equal(again$loo, full$loo, tolerance = 1e-9)
  expect_equal(again$normal, full$normal, tolerance = 1e-12)
  expect_equal(again$coefficients[, half], full$coefficients[, half], tolerance = 1e-8)
  expect_equal(again$intercept[half], full$intercept[half], tolerance = 1e-8)
})

test_that("predict() and summary() check the map and path a fit keeps", {
  set.seed(1)
  x <- matrix(rnorm(400), 200)
  y <- sin(x[, 1]) + rnorm(200, sd = .1)
  fits <- list(ridge = rff_ridge(x, y, D = 10, lengthscale = 1, progress = FALSE),
               glm = rff_glm(x, y > 0, D = 10, lengthscale = 1, lambda = c(0.1, 0.01)),
               cv = rff_cv(x, y, D = 10, lengthscale = 1, folds = 3))
  tamper <- list(
    function(f) { f$map$omega[1, 1] <- NA; f },
    function(f) { f$map$omega[1, 1] <- Inf; f },
    function(f) { f$map$omega <- f$map$omega[, -1]; f },
    function(f) { f$map$lengthscale <- -1; f },
    function(f) { f$map$lengthscale <- NaN; f },
    function(f) { f$map$D <- 12L; f },
    function(f) { f$coefficients[1] <- NaN; f },
    function(f) { f$coefficients <- f$coefficients[-1, ]; f },
    function(f) { f$intercept[] <- NA; f },
    function(f) { f$lambda[1] <- -1; f },
    function(f) { f$best <- 0L; f },
    function(f) { f$standardize$scale[1] <- 0; f },
    function(f) { f$standardize$center <- NA; f })
  for (name in names(fits)) {
    for (i in seq_along(tamper)) {
      f <- fits[[name]]
      if (name == "cv") f$fit <- tamper[[i]](f$fit) else f <- tamper[[i]](f)
      e <- expect_error(predict(f, x[1:5, ]), class = "rff_error",
                        label = paste(name, "tampering", i))
      expect_identical(e$arg, "object")
      expect_match(conditionMessage(e), "`object` is damaged")
      if (name == "glm") expect_error(summary(f), class = "rff_error")
    }
    # untouched fits predict their fitted values (the fitted map and path)
    f <- if (name == "cv") fits[[name]]$fit else fits[[name]]
    expect_equal(unname(drop(predict(fits[[name]], x))),
                 unname(drop(if (name == "glm") f$linear.predictors else fitted(f))), tolerance = 1e-8)
  }
  f <- fits$ridge
  f$normal$A[1, 1] <- NaN
  expect_error(predict(f, x[1:5, ], lambda = 0.123), class = "rff_error")
})

test_that("standardization scales of columns spread over 1e154 and more do not overflow", {
  set.seed(1)
  x <- matrix(rnorm(400), 200)
  y <- sin(x[, 1]) + rnorm(200, sd = .1)
  b <- rnorm(200)
  for (k in c(1e-200, 1e160, 1e300)) {
    expect_silent(s <- rff:::standardization(cbind(x, big = b * k)))
    # sd() of the column before it was multiplied, times the factor
    expect_equal(unname(s$scale[3]), sd(b) * k, tolerance = 1e-12)
    expect_equal(unname(s$center[3]), mean(b) * k, tolerance = 1e-10)
  }
  sw <- rff:::standardization(cbind(b * 1e300), weights = rep(c(1, 3), 100))
  w <- rep(c(1, 3), 100)
  mw <- sum(w * b) / sum(w)
  expect_equal(sw$center, mw * 1e300, tolerance = 1e-10)
  expect_equal(sw$scale, sqrt(sum(w * (b - mw)^2) / sum(w) * 200 / 199) * 1e300, tolerance = 1e-10)
  # so a fit is the same whatever units the column is in
  set.seed(5)
  f1 <- rff_ridge(cbind(x, big = b * 1e160), y, D = 50, lengthscale = 1, progress = FALSE)
  set.seed(5)
  f2 <- rff_ridge(cbind(x, big = b), y, D = 50, lengthscale = 1, progress = FALSE)
  expect_equal(fitted(f1), fitted(f2), tolerance = 1e-8)
  r2 <- 1 - sum(residuals(f1)^2) / sum((y - mean(y))^2)
  expect_gt(r2, 0.5)
})

test_that("the message on a constant column names an unnamed column by its number", {
  set.seed(2)
  x <- cbind(a = rnorm(20), 5)
  expect_message(rff:::standardization(x), "\"column 2\" is constant")
})

test_that("a formula's factor dummies are centred but keep their 0/1 scale", {
  set.seed(31)
  d <- data.frame(y = rnorm(60), u = rnorm(60, sd = 3), ok = runif(60) > 0.3,
                  g = factor(sample(c("a", "b", "c"), 60, TRUE)))
  fit <- rff_ridge(y ~ u + g + ok + u:g, data = d, D = 40, progress = FALSE)
  X <- model.matrix(~ u + g + ok + u:g, d)[, -1]
  s <- fit$standardize
  expect_equal(unname(s$center), unname(colMeans(X)))
  dummy <- c("gb", "gc", "okTRUE")
  expect_equal(unname(s$scale[dummy]), c(1, 1, 1))
  # numeric inputs and interactions with them are scaled to unit variance
  other <- setdiff(colnames(X), dummy)
  expect_equal(unname(s$scale[other]), unname(apply(X[, other], 2L, sd)))
  # the matrix method standardizes every column, as before
  fm <- rff_ridge(X, d$y, D = 40, progress = FALSE)
  expect_equal(unname(fm$standardize$scale), unname(apply(X, 2L, sd)))
})
