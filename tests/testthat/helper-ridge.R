# Base-R references for the ridge fits (test-ridge.R, test-stats.R,
# test-cv.R, test-shapes.R), computed from a feature matrix Z held in memory.

# beta = (Zc'Zc + n lambda I)^-1 Zc'yc and the intercept a0, or the same
# uncentered without intercept (a0 = 0), and the fitted values Z beta + a0.
# y is one response (a vector: beta a vector, a0 a number) or a matrix with
# a column per response (beta D x q, a0 of length q, named as y's columns).
ref_ridge <- function(Z, y, lambda, intercept) {
  n <- nrow(Z)
  Y <- as.matrix(y)
  if (intercept) {
    zbar <- colMeans(Z); ybar <- colMeans(Y)
    Zc <- sweep(Z, 2, zbar); Yc <- sweep(Y, 2, ybar)
  } else {
    Zc <- Z; Yc <- Y
  }
  beta <- solve(crossprod(Zc) + n * lambda * diag(ncol(Z)), crossprod(Zc, Yc))
  a0 <- if (intercept) ybar - drop(crossprod(beta, zbar)) else rep(0, ncol(Y))
  fit <- Z %*% beta + rep(a0, each = n)
  if (is.matrix(y)) list(beta = beta, a0 = a0, fit = fit)
  else list(beta = drop(beta), a0 = a0, fit = drop(fit))
}

# df and GCV by brute force from the hat matrix H (n x n): of (1, Z) with the
# intercept unpenalized, or of Z alone.
ref_gcv <- function(Z, y, lambda, intercept = TRUE) {
  n <- nrow(Z)
  Zc <- if (intercept) sweep(Z, 2, colMeans(Z)) else Z
  vapply(lambda, function(l) {
    H <- Zc %*% solve(crossprod(Zc) + n * l * diag(ncol(Z)), t(Zc))
    if (intercept) H <- H + matrix(1 / n, n, n)
    df <- sum(diag(H))
    rss <- sum((y - H %*% y)^2)
    c(df = df, rss = rss, gcv = n * rss / (n - df)^2)
  }, numeric(3))
}

# Relative tolerance for coefficients solved from statistics accumulated
# over n rows: the rounding of Z'Z (n eps relative, worst case) and of the
# D x D solve (D eps), amplified by the condition number of the system.
ridge_tol <- function(Z, lambda, intercept = TRUE) {
  Zc <- if (intercept) sweep(Z, 2, colMeans(Z)) else Z
  A <- crossprod(Zc) + nrow(Z) * min(lambda) * diag(ncol(Z))
  kappa(A, exact = TRUE) * (nrow(Z) + ncol(Z)) * .Machine$double.eps
}

# Held-out sums of squares of k-fold CV by refitting on the training rows
# of each fold: a folds x lambda matrix (averaged over the columns of Y).
ref_cv_sse <- function(Z, Y, foldid, lambda, intercept = TRUE) {
  Y <- as.matrix(Y)
  t(vapply(sort(unique(foldid)), function(j) {
    tr <- foldid != j
    vapply(lambda, function(lam) {
      sum(vapply(seq_len(ncol(Y)), function(r) {
        f <- ref_ridge(Z[tr, , drop = FALSE], Y[tr, r], lam, intercept)
        sum((Y[!tr, r] - Z[!tr, , drop = FALSE] %*% f$beta - f$a0)^2)
      }, numeric(1))) / ncol(Y)
    }, numeric(1))
  }, numeric(length(lambda))))
}

# Relative tolerance of held-out sums of squares computed from statistics
# (y'y - 2 b'Z'y + b'Z'Z b): that of the solve, times the cancellation
# y'y / SSE.
cv_tol <- function(Z, Y, lambda, sse, intercept = TRUE) {
  ridge_tol(Z, lambda, intercept) * sum(as.matrix(Y)^2) / min(sse)
}

# The downhill walk of lengthscale = "auto" over the multiples 2^(j / 2) of
# the median heuristic l0, on the criteria of every multiple computed
# independently: j = 0 and -1; then downward while the lowest is best, and
# j = 1 only when -1 was no better than 0, then upward while the highest is
# best; within [-6, 8], stopping after a step past -1 or 1 that gains less
# than 0.1%.
expected_walk <- function(score_of) {
  steps <- c(0L, -1L)
  score <- vapply(steps, score_of, 0)
  repeat {
    i <- which.min(score)
    if (abs(steps[i]) >= 2L && i == length(steps) &&
        score[i] > (1 - 1e-3) * min(score[-i])) break
    b <- steps[i]
    nxt <- if (b == min(steps) && b > -6L) b - 1L else if (b == max(steps) && b < 8L) b + 1L else NA
    if (is.na(nxt)) break
    steps <- c(steps, nxt)
    score <- c(score, score_of(nxt))
  }
  o <- order(steps)
  list(steps = steps[o], score = score[o], best = which.min(score[o]))
}

# The map drawn at lengthscale 1 (`base`) at lengthscale l: its frequencies
# divided by l, computed here apart from the package's rescale_map().
map_at <- function(base, l) {
  base$omega <- base$omega / l
  base$lengthscale <- l
  base
}

# A regression problem of n rows and d inputs (test-ridge*.R).
make_data <- function(n = 200, d = 3, seed = 1) {
  set.seed(seed)
  x <- matrix(rnorm(n * d), n, d)
  y <- sin(x[, 1]) + x[, 2]^2 / 2 + rnorm(n, sd = 0.2)
  list(x = x, y = y)
}

# The held-out SSE at each lambda of the ridge fit on the rows `tr` of x, y
# (weights w or NULL) scored on the rows `ho`, from the statistics of the
# two sets of rows (the primal route of rff_cv()'s folds): the reference
# for the dual routes (test-cv.R).
fold_sse_stats <- function(x, y, m, tr, ho, w, lambda, intercept) {
  train <- rff_stats(x[tr, ], y[tr, ], m, intercept = intercept, weights = if (!is.null(w)) w[tr])
  held <- rff_stats(x[ho, ], y[ho, ], m, intercept = intercept, weights = if (!is.null(w)) w[ho])
  rff:::heldout_sse(held, rff:::solve_path(rff:::normal_equations(train), lambda))
}
