# Layer 7 (families): rff_glm(estimator = "ls"): regularized least squares
# on the class indicators, lambda by exact leave-one-out from one
# eigendecomposition of the features' statistics, and probabilities from a
# softmax (or logistic) calibration of the least-squares scores fitted on
# their leave-one-out values. One pass over the rows for the statistics,
# none for lambda; the coefficients are those of a linear predictor, so the
# fit predicts as any "rff_glm".

# The LS estimator's fit of the problem `g` (glm_setup()) over the ridge
# lambda path `path` (check_path()): an "rff_glm".
glm_ls_fit <- function(g, path) {
  if (g$family == "poisson") {
    rff_abort("estimator", "`estimator` \"ls\" is for the binomial and multinomial families; use \"likelihood\" for counts")
  }
  if (!is.null(g$offset)) {
    rff_abort("estimator", "`estimator` \"ls\" takes no offset; use \"likelihood\" for a fit with an offset")
  }
  n <- nrow(g$x)
  K <- g$K
  Y <- ls_indicators(g)
  w <- g$weights
  st <- progress_stage("statistics", 1)
  stats <- accumulate_stats(g$x, Y, g$map, g$intercept, g$chunk_size, g$threads, g$progress, w,
                            1)
  st$close()
  sys <- normal_equations(stats)
  e <- .Call(C_rff_ridge_eigen, sys$A, g$threads)
  check_psd(e$values)
  e$values <- pmax(e$values, 0)
  i <- loo_rows(n)
  several <- length(path$lambda) != 1L
  loo <- if (several) {
    list(x = g$x[i, , drop = FALSE], y = Y[i, , drop = FALSE],
         weights = if (is.null(w)) NULL else w[i], chunk_size = g$chunk_size,
         threads = g$threads)
  }
  fit <- ridge_path_fit(sys, stats, path, loo, if (several) e, threads = g$threads)
  best <- fit$best
  lam <- fit$lambda[best]
  beta <- matrix(coef_array(fit)[, , best], g$map$D, ncol(Y))
  a <- if (is.null(fit$intercept)) rep(0, ncol(Y)) else
    matrix(fit$intercept, ncol = length(fit$lambda))[, best]
  # the calibration: on at most 2,000 of the LOO rows, their LOO scores
  cal <- i[round(seq(1, length(i), length.out = min(length(i), 2000L)))]
  f <- ls_loo_scores(sys, e, lam, g$map, g$x[cal, , drop = FALSE], Y[cal, , drop = FALSE],
                     if (is.null(w)) NULL else w[cal], g$threads)
  cf <- ls_calibration(f, g$y[cal], if (is.null(w)) rep(1, length(cal)) else w[cal], g$family)
  B <- cf$t * beta
  a0 <- cf$t * a + cf$offset
  glm_ls_result(g, B, a0, lam, fit, cf)
}

# The responses regressed: the class indicators (n x K) for the
# multinomial family, the 0/1 response for the binomial.
ls_indicators <- function(g) {
  if (g$family == "multinomial") outer(g$y, seq_len(g$K), `==`) + 0 else
    matrix(as.double(g$y), ncol = 1L)
}

# The leave-one-out scores of rows `x` (responses Y, weights w) of the
# least-squares fit at `lambda`, from the eigenpairs `e` of its normal
# equations `sys`: with h_i the leverage, y_i - (y_i - f_i) / (1 - h_i).
ls_loo_scores <- function(sys, e, lambda, map, x, Y, w, threads) {
  G <- 1 / (e$values + sys$w * lambda)
  u <- crossprod(e$vectors, sys$b)
  Z <- .Call(C_rff_features, x, map, threads)
  if (!is.null(sys$zbar)) Z <- Z - rep(sys$zbar, each = nrow(Z))
  P <- .Call(C_rff_ridge_project, Z, e$vectors, threads)
  f <- P %*% (u * G)
  if (!is.null(sys$ybar)) f <- f + rep(sys$ybar, each = nrow(f))
  wr <- if (is.null(w)) rep(1, nrow(Z)) else w
  h <- wr * (drop(P^2 %*% G) + if (is.null(sys$zbar)) 0 else 1 / sys$w)
  h <- pmin(h, 1 - 1e-8)
  Y - (Y - f) / (1 - h)
}

# The calibration of least-squares scores f (rows x K, or x 1 for the
# binomial family) to probabilities: eta_k = t f_k + c_k (c_1 = 0 for the
# multinomial family), softmax (or logistic) of eta, t > 0 and c fitted by
# the weighted likelihood of the classes y (codes 1..K, or 0/1). Gives the
# temperature `t`, the offsets `offset` (K, or 1) and the mean log-loss.
ls_calibration <- function(f, y, w, family) {
  K <- ncol(f)
  W <- sum(w)
  multi <- family == "multinomial"
  Y <- if (multi) outer(y, seq_len(K), `==`) + 0 else NULL
  unpack <- function(p) list(t = exp(p[1L]), c = if (multi) c(0, p[-1L]) else p[2L])
  obj <- function(p) {
    q <- unpack(p)
    if (multi) {
      eta <- q$t * f + rep(q$c, each = nrow(f))
      m <- apply(eta, 1L, max)
      lse <- m + log(rowSums(exp(eta - m)))
      P <- exp(eta - lse)
      val <- sum(w * (lse - rowSums(eta * Y))) / W
      R <- w * (P - Y) / W
      grad <- c(sum(R * f) * q$t, colSums(R)[-1L])
    } else {
      eta <- q$t * f[, 1L] + q$c
      val <- sum(w * (pmax(eta, 0) + log1p(exp(-abs(eta))) - y * eta)) / W
      r <- w * (stats::plogis(eta) - y) / W
      grad <- c(sum(r * f[, 1L]) * q$t, sum(r))
    }
    attr(val, "grad") <- grad
    val
  }
  start <- c(log(4), rep(0, if (multi) K - 1L else 1L))
  o <- stats::optim(start, function(p) as.double(obj(p)), function(p) attr(obj(p), "grad"),
                    method = "BFGS", control = list(maxit = 200L, reltol = 1e-10))
  q <- unpack(o$par)
  list(t = q$t, offset = q$c, logloss = o$value)
}

# The "rff_glm" object of the LS estimator: coefficients B (D x K, or D),
# intercepts a0, at the least-squares lambda `lambda` of the ridge path
# `fit` (its LOO curve kept in `ls`), with the training deviance of the
# calibrated probabilities.
glm_ls_result <- function(g, B, a0, lambda, fit, cf) {
  K <- g$K
  n <- nrow(g$x)
  D <- g$map$D
  eta <- matrix(predict_coef(g$map, g$x, array(B, c(D, K, 1L)), matrix(a0, K, 1L),
                             g$chunk_size, g$threads), n, K)
  w <- if (is.null(g$weights)) rep(1, n) else g$weights
  ws <- if (is.null(g$weight_scale)) 1 else g$weight_scale
  dev <- sum(w * glm_row_deviance(g$family, g$y, eta)) * ws
  # the null model: the weighted class frequencies
  freq <- if (g$family == "multinomial") {
    tabulate_weighted(g$y, w, K)
  } else sum(w * g$y) / sum(w)
  null_eta <- if (g$family == "multinomial") log(pmax(freq, 1e-300)) else stats::qlogis(freq)
  null_dev <- sum(w * glm_row_deviance(g$family, g$y, matrix(null_eta, n, K, byrow = TRUE))) * ws
  coef <- if (K == 1L) matrix(B, D, 1L) else array(B, c(D, K, 1L),
                                                 dimnames = list(NULL, g$resp$levels, NULL))
  a0m <- if (K == 1L) a0 else matrix(a0, K, 1L, dimnames = list(g$resp$levels, NULL))
  # (the rows of the likelihood's preconditioner sample, for glm_effective_df())
  rows <- round(seq(1, n, length.out = precond_rows(n, D)))
  out <- list(coefficients = coef, intercept = a0m, lambda = lambda, deviance = dev,
              null.deviance = null_dev, iterations = 0L, converged = TRUE,
              cvm = NULL, cvsd = NULL, measure = "deviance", folds = NULL, holdout = NULL,
              lambda_best = lambda, best = 1L, family = g$family,
              levels = g$resp$levels, linear.predictors = eta, y = g$y,
              prior.weights = g$weights_given, standardize = g$std,
              lengthscale_search = g$search, has_offset = FALSE,
              weighted = !is.null(g$weights), has_intercept = g$intercept,
              map = g$map, n = sum(w > 0), xnames = g$xnames, cached = FALSE,
              estimator = "ls",
              ls = list(lambda = fit$lambda, loo = fit$loo, best = fit$best,
                        temperature = cf$t, offset = cf$offset, calibration_logloss = cf$logloss),
              df_sample = list(x = g$x[rows, , drop = FALSE], y = g$y[rows], offset = NULL,
                               w = w[rows], W = sum(w)))
  class(out) <- c("rff_glm", "rff_fit")
  keep_fit_fields(out)
}

tabulate_weighted <- function(y, w, K) {
  s <- vapply(seq_len(K), function(k) sum(w[y == k]), numeric(1))
  s / sum(s)
}
