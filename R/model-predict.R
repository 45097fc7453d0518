# Layer 5 (the model pipeline): predictions of every fit on features (class
# "rff_fit"): the solution at a lambda, z(x)'B + a0 for new rows, the one
# coefficient table, fitted values, and the Gaussian-process standard errors
# of ridge.

# beta as a D x q x L array and intercepts as q x L, whatever q is.
coef_array <- function(object) {
  b <- object$coefficients
  if (length(dim(b)) == 2L) array(b, c(nrow(b), 1L, ncol(b))) else b
}

intercept_matrix <- function(object) {
  matrix(object$intercept, ncol = length(object$lambda))
}

# Indices of `lambda` in the fitted path (matched to a relative 1e-8), NA
# for values that are not on it.
path_index <- function(path, lambda) {
  vapply(lambda, function(l) {
    i <- which(abs(path - l) <= 1e-8 * pmax(abs(l), abs(path)))
    if (length(i)) i[1L] else NA_integer_
  }, integer(1))
}

# Indices of the requested lambdas in the fitted path (NULL: the best);
# values off the path are an error (for callers that need path values).
lambda_index <- function(object, lambda, refit_hint = FALSE) {
  if (is.null(lambda)) return(object$best)
  lambda <- check_lambda(lambda)
  idx <- path_index(object$lambda, lambda)
  if (anyNA(idx)) {
    bad <- format(lambda[is.na(idx)][1L])
    rff_abort("lambda", sprintf(
      "`lambda` = %s is not in the fitted path%s", bad,
      if (!refit_hint) "" else sprintf(
        " (from %s to %s); refit with `lambda = %s`, or use one of `object$lambda`",
        format(max(object$lambda), digits = 4), format(min(object$lambda), digits = 4), bad)))
  }
  idx
}

# The solution of `object` at `lambda` (NULL: lambda_best): coefficients
# (D x q x k), intercepts (q x k), df (k) and rss (k x q), taken from the
# fitted path where a value is on it and solved exactly from the normal
# equations kept in the fit (`normal`) where it is not.
coef_at <- function(object, lambda) {
  if (is.null(lambda)) {
    idx <- object$best
    lambda <- object$lambda[idx]
  } else {
    lambda <- check_lambda(lambda)
    idx <- path_index(object$lambda, lambda)
  }
  Bpath <- coef_array(object)
  D <- dim(Bpath)[1L]
  q <- dim(Bpath)[2L]
  k <- length(lambda)
  B <- array(0, c(D, q, k))
  a0 <- matrix(0, q, k)
  df <- numeric(k)
  rss <- matrix(0, k, q)
  on <- !is.na(idx)
  if (any(on)) {
    B[, , on] <- Bpath[, , idx[on]]
    a0[, on] <- intercept_matrix(object)[, idx[on]]
    df[on] <- object$df[idx[on]]
    rss[on, ] <- matrix(object$rss, ncol = q)[idx[on], ]
  }
  if (any(!on)) {
    if (is.null(object$normal)) {
      rff_abort("lambda", sprintf(
        "`lambda` = %s is not in the fitted path, and this fit (made by an older version of rff) keeps no normal equations to solve at it; refit with `lambda = %s`",
        format(lambda[!on][1L]), format(lambda[!on][1L])))
    }
    p <- solve_path(object$normal, lambda[!on])
    B[, , !on] <- p$beta
    a0[, !on] <- p$intercept
    df[!on] <- p$df
    rss[!on, ] <- p$rss
  }
  list(beta = B, intercept = a0, lambda = lambda, df = df, rss = rss, index = idx)
}

# What the fit divided the weights by (1 without weights, and for fits
# saved before weights were rescaled).
fit_weight_scale <- function(object) {
  if (is.null(object$weight_scale)) 1 else object$weight_scale
}

# z(x)'B + a0 (m x q x k array) for a validated double matrix x in the
# kernel's units, streamed through the map in blocks.
predict_coef <- function(map, x, B, a0, chunk_size = NULL, threads = NULL) {
  D <- dim(B)[1L]
  q <- dim(B)[2L]
  k <- dim(B)[3L]
  if (is.null(chunk_size)) chunk_size <- default_chunk_size(D)
  if (is.null(threads)) threads <- default_threads()
  if (nrow(x) == 0L) return(array(0, c(0L, q, k)))
  P <- .Call(C_rff_ridge_predict, x, map, matrix(B, D, q * k), chunk_size, threads)
  P <- P + rep(as.vector(a0), each = nrow(x))
  array(P, c(nrow(x), q, k))
}

# Predictions (n x q x k array) at lambda indices `idx` of the fitted path
# for a validated double matrix x in the kernel's units.
predict_rows <- function(object, x, idx, chunk_size = NULL, threads = NULL) {
  predict_coef(object$map, x, coef_array(object)[, , idx, drop = FALSE],
               intercept_matrix(object)[, idx, drop = FALSE], chunk_size, threads)
}

# An m x q x k array (rows, responses, lambdas) as the user expects it: a
# named vector for one response at one lambda, a matrix when q or k is one.
shape_by_lambda <- function(a, rows, response, lambda) {
  m <- dim(a)[1L]
  q <- dim(a)[2L]
  k <- dim(a)[3L]
  if (q == 1L && k == 1L) return(stats::setNames(a[, 1L, 1L], rows))
  if (q == 1L) return(matrix(a, m, k, dimnames = list(rows, lambda)))
  if (k == 1L) return(matrix(a, m, q, dimnames = list(rows, response)))
  dimnames(a) <- list(rows, response, lambda)
  a
}

# The fitted values and residuals at lambda_best, kept in the fit: x in the
# kernel's units, y the response less the offset (if any).
add_fitted <- function(fit, x, y, chunk_size, threads, offset = NULL) {
  f <- predict_rows(fit, x, fit$best, chunk_size, threads)[, , 1L]
  f <- matrix(f, nrow(x), dimnames = list(rownames(x), colnames(y)))
  r <- y - f
  if (!is.null(offset)) f <- f + offset
  rownames(r) <- rownames(x)
  if (ncol(f) == 1L) {
    f <- stats::setNames(f[, 1L], rownames(x))
    r <- stats::setNames(r[, 1L], rownames(x))
  }
  fit$fitted.values <- f
  fit$residuals <- r
  fit["xnames"] <- list(colnames(x))
  fit
}

no_data_abort <- function() {
  rff_abort("object", "`object` was fitted from statistics and keeps no fitted values; use predict(object, newdata)")
}

# The rows of `newdata` a prediction is made for (newdata_rows(): `keep`),
# those without missing values in the kernel's units (`x`), their offset,
# the names of the rows, and the checked chunk size and threads: what
# predict() does with new data for every fit on features.
predict_newdata <- function(object, newdata, newoffset, na.action, chunk_size, threads,
                            new_levels = "none") {
  check_fit(object)
  new_levels <- check_new_levels(new_levels)
  nd <- newdata_matrix(object, newdata, newoffset, new_levels)
  keep <- newdata_rows(nd$x, nd$offset, na.action)
  x <- standardize_rows(nd$x[keep$rows[keep$ok], , drop = FALSE], object$standardize)
  if (!is.null(chunk_size)) chunk_size <- check_count(chunk_size, "chunk_size", lo = 1)
  threads <- check_threads(threads)
  rows <- rownames(nd$x)[keep$rows]
  if (is.null(rows) && !identical(keep$rows, seq_len(nrow(nd$x)))) rows <- as.character(keep$rows)
  list(x = x, keep = keep, offset = nd$offset, rows = rows, chunk_size = chunk_size,
       threads = threads)
}

# z(x)'B + a0 (+ offset) at the rows of predict_newdata() `nd` (m x q x k,
# NA for the rows with missing values).
predict_linear <- function(object, nd, B, a0) {
  P <- array(NA_real_, c(length(nd$keep$rows), dim(B)[2L], dim(B)[3L]))
  P[nd$keep$ok, , ] <- predict_coef(object$map, nd$x, B, a0, nd$chunk_size, nd$threads)
  if (!is.null(nd$offset)) P <- P + nd$offset[nd$keep$rows]
  P
}

# The coefficient table of a fit: the intercepts a0 (q x k) above the D
# coefficients B (D x q x k), rows "(Intercept)", "z1", ..., shaped by
# shape_by_lambda() with the names of the responses (or classes);
# `intercept = FALSE` leaves the intercept's row out.
coef_table <- function(B, a0, lambda, response, intercept = TRUE) {
  D <- dim(B)[1L]
  out <- array(0, c(D + 1L, dim(B)[2L], dim(B)[3L]))
  out[1L, , ] <- a0
  out[-1L, , ] <- B
  rn <- c("(Intercept)", paste0("z", seq_len(D)))
  keep <- if (intercept) seq_len(D + 1L) else seq_len(D) + 1L
  shape_by_lambda(out[keep, , , drop = FALSE], rn[keep], response, format(lambda, digits = 4))
}

# What predict() computes for a linear model on features: z(x)'beta +
# intercept (+ offset) for the rows of `newdata` kept by `na.action` (NA
# for rows with missing values), at `lambda` (any values >= 0; NULL:
# lambda_best); with `se.fit` or an `interval`, also the Gaussian-process
# standard errors and intervals of predict.lm()'s shapes.
predict_model <- function(object, newdata, lambda, se.fit, interval, level, na.action,
                          newoffset, chunk_size, threads, new_levels = "none") {
  nd <- predict_newdata(object, newdata, newoffset, na.action, chunk_size, threads,
                        new_levels = new_levels)
  sol <- coef_at(object, lambda)
  q <- dim(sol$beta)[2L]
  k <- length(sol$lambda)
  P <- predict_linear(object, nd, sol$beta, sol$intercept)
  rows <- nd$rows
  if (!se.fit && interval == "none") {
    return(shape_by_lambda(P, rows, object$response, format(sol$lambda, digits = 4)))
  }
  if (q > 1L || k > 1L) {
    rff_abort(if (se.fit) "se.fit" else "interval", sprintf(
      "standard errors and intervals are given for one response at one lambda at a time (here %d response%s, %d lambda%s)",
      q, if (q > 1L) "s" else "", k, if (k > 1L) "s" else ""))
  }
  if (is.null(object$normal)) {
    rff_abort(if (se.fit) "se.fit" else "interval",
              "this fit (made by an older version of rff) keeps no normal equations; refit it for standard errors")
  }
  rdf <- object$n - sol$df
  if (!(rdf > 0)) {
    rff_abort(if (se.fit) "se.fit" else "interval", sprintf(
      "the fit has no residual degrees of freedom (n = %d, df = %s): no noise variance to estimate",
      object$n, format(sol$df, digits = 4)))
  }
  # sigma^2 of the fit's rescaled weights, paired with its normal equations;
  # a new observation of unit weight has noise variance `noise`
  sigma2 <- sol$rss[1L, 1L] / rdf
  noise <- sigma2 * fit_weight_scale(object)
  fit <- P[, 1L, 1L]
  names(fit) <- rows
  se <- rep(NA_real_, length(nd$keep$rows))
  se[nd$keep$ok] <- sqrt(sigma2 * gp_variance_factor(object, nd$x, sol$lambda, nd$chunk_size,
                                                     nd$threads))
  names(se) <- rows
  if (interval != "none") {
    tq <- stats::qt((1 + level) / 2, rdf)
    half <- tq * if (interval == "confidence") se else sqrt(se^2 + noise)
    fit <- cbind(fit = fit, lwr = fit - half, upr = fit + half)
    rownames(fit) <- rows
  }
  if (!se.fit) return(fit)
  list(fit = fit, se.fit = se, df = rdf, residual.scale = sqrt(noise))
}

# The Gaussian-process variance factor of predictions at the rows of x (in
# the kernel's units) at one lambda: with M = Zc'WZc + w lambda I,
# (z(x) - zbar)' M^-1 (z(x) - zbar) + 1 / w with an intercept, and
# z(x)' M^-1 z(x) without; times sigma^2 it is the posterior variance of
# f(x) under the prior beta ~ N(0, sigma^2 / (w lambda) I) (and a flat prior
# on the intercept).
gp_variance_factor <- function(object, x, lambda, chunk_size = NULL, threads = NULL) {
  sys <- object$normal
  M <- normal_matrix(sys)
  D <- nrow(M)
  diag(M) <- diag(M) + sys$w * lambda
  R <- tryCatch(chol(M), error = function(e) singular_abort(lambda))
  if (is.null(chunk_size)) chunk_size <- default_chunk_size(D)
  if (is.null(threads)) threads <- default_threads()
  out <- numeric(nrow(x))
  # (no rows: no blocks)
  for (from in seq(1L, by = chunk_size, length.out = ceiling(nrow(x) / chunk_size))) {
    rows <- from:min(nrow(x), from + chunk_size - 1L)
    Z <- .Call(C_rff_features, x[rows, , drop = FALSE], object$map, threads)
    if (!is.null(sys$zbar)) Z <- Z - rep(sys$zbar, each = length(rows))
    V <- backsolve(R, t(Z), transpose = TRUE)
    out[rows] <- colSums(V^2) + if (is.null(sys$zbar)) 0 else 1 / sys$w
  }
  out
}
