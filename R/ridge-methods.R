# The methods of "rff_ridge" fits: predictions, coefficients, fitted values,
# printing, summaries and the GCV plot.

#' Predictions, coefficients and fitted values of a random-feature ridge fit
#'
#' `predict()` featurizes `newdata` through the fit's map in blocks (never
#' the whole feature matrix) and returns z(x)'beta + intercept.
#'
#' `lambda` selects values of the fitted path (matched to a relative
#' 1e-8); `NULL` means `lambda_best`. The coefficients at other lambdas are
#' not kept, so other values are an error: refit with that `lambda`.
#'
#' @param object,x A fit from [rff_ridge()].
#' @param newdata New inputs: for a fit made with a formula, a data frame
#'   with the variables of the formula; otherwise a matrix, data frame or
#'   vector with the columns of `x` (matched by name when both have column
#'   names). Missing, predictions at `lambda_best` for the training rows
#'   (the fitted values).
#' @param lambda Values of `object$lambda`; `NULL` for `lambda_best`.
#' @param chunk_size,threads As for [rff_ridge()].
#' @param digits Significant digits to print.
#' @param ... Unused.
#' @return `predict()`: for one response, a vector (one lambda) or a matrix
#'   with one column per lambda; for q responses, an n x q matrix (one
#'   lambda) or an n x q x k array. `coef()`: the intercept (named
#'   `"(Intercept)"`, only when fitted) and the D coefficients, as a vector,
#'   or a matrix with one column per lambda (per response for q > 1).
#'   `fitted()`, `residuals()`: at `lambda_best`, padded by the fit's
#'   `na.action` as for [stats::lm()]; an error for fits from statistics.
#' @examples
#' set.seed(2)
#' x <- matrix(rnorm(600), 300, 2)
#' y <- x[, 1]^2 + rnorm(300, sd = 0.2)
#' fit <- rff_ridge(x, y, D = 100, lengthscale = 1.5)
#' head(predict(fit, x[1:5, ]))
#' predict(fit, x[1:2, ], lambda = fit$lambda[c(1, 25)])
#' head(coef(fit))
#' head(residuals(fit))
#' nobs(fit)
#' @name predict.rff_ridge
#' @export
predict.rff_ridge <- function(object, newdata, lambda = NULL, chunk_size = NULL,
                              threads = NULL, ...) {
  if (missing(newdata) || is.null(newdata)) {
    if (is.null(lambda) || identical(lambda_index(object, lambda), object$best)) {
      return(stats::fitted(object))
    }
    rff_abort("newdata", "`newdata` is needed for predictions at a `lambda` other than `lambda_best`")
  }
  predict_linear(object, newdata, lambda, chunk_size, threads)
}

#' @rdname predict.rff_ridge
#' @export
coef.rff_ridge <- function(object, lambda = NULL, ...) {
  idx <- lambda_index(object, lambda)
  B <- coef_array(object)[, , idx, drop = FALSE]
  a0 <- intercept_matrix(object)[, idx, drop = FALSE]
  D <- dim(B)[1L]
  q <- dim(B)[2L]
  k <- length(idx)
  out <- array(0, c(D + 1L, q, k))
  out[1L, , ] <- a0
  out[-1L, , ] <- B
  rn <- c("(Intercept)", paste0("z", seq_len(D)))
  keep <- if (object$has_intercept) seq_len(D + 1L) else seq_len(D) + 1L
  shape_by_lambda(out[keep, , , drop = FALSE], rn[keep], object$response,
                  format(object$lambda[idx], digits = 4))
}

#' @rdname predict.rff_ridge
#' @export
fitted.rff_ridge <- function(object, ...) {
  if (is.null(object$fitted.values)) no_data_abort()
  stats::napredict(object$na.action, object$fitted.values)
}

#' @rdname predict.rff_ridge
#' @export
residuals.rff_ridge <- function(object, ...) {
  if (is.null(object$residuals)) no_data_abort()
  stats::naresid(object$na.action, object$residuals)
}

#' @rdname predict.rff_ridge
#' @export
nobs.rff_ridge <- function(object, ...) object$n

#' @rdname predict.rff_ridge
#' @export
print.rff_ridge <- function(x, digits = max(3L, getOption("digits") - 3L), ...) {
  cat_fit_header("Random-feature ridge regression", x$call, x$map)
  cat(sprintf("  n = %s, %s%s\n", format(x$n, big.mark = ","),
              if (length(x$lambda) > 1L) sprintf("%d lambda values (%s)", length(x$lambda), x$method)
              else "one lambda (cholesky)",
              if (x$has_intercept) ", intercept" else ", no intercept"))
  i <- x$best
  g <- if (is.matrix(x$gcv)) sum(x$gcv[i, ]) else x$gcv[i]
  cat(sprintf("  lambda_best = %s (GCV), df = %s, GCV = %s\n",
              format(x$lambda_best, digits = digits), format(x$df[i], digits = digits),
              format(g, digits = digits)))
  invisible(x)
}

#' @rdname predict.rff_ridge
#' @export
summary.rff_ridge <- function(object, ...) {
  i <- object$best
  rss <- if (is.matrix(object$rss)) object$rss[i, ] else object$rss[i]
  out <- list(call = object$call, map = object$map, n = object$n,
              lambda_best = object$lambda_best, df = object$df[i], rss = rss,
              gcv = if (is.matrix(object$gcv)) object$gcv[i, ] else object$gcv[i],
              sigma = sqrt(rss / max(object$n - object$df[i], 1)),
              r.squared = 1 - rss / object$tss,
              residuals = object$residuals, has_intercept = object$has_intercept,
              path = data.frame(lambda = object$lambda, df = object$df,
                                gcv = if (is.matrix(object$gcv)) rowSums(object$gcv) else object$gcv))
  class(out) <- "summary.rff_ridge"
  out
}

#' @export
print.summary.rff_ridge <- function(x, digits = max(3L, getOption("digits") - 3L), ...) {
  cat_fit_header("Random-feature ridge regression", x$call, x$map)
  if (!is.null(x$residuals)) {
    cat("\nResiduals:\n")
    r <- as.matrix(x$residuals)
    qs <- t(apply(r, 2L, stats::quantile, names = FALSE))
    dimnames(qs) <- list(if (ncol(r) > 1L) colnames(r) else "", c("Min", "1Q", "Median", "3Q", "Max"))
    print(qs, digits = digits)
  }
  cat(sprintf("\nn = %s, lambda_best = %s (by GCV, %d values), effective df = %s%s\n",
              format(x$n, big.mark = ","), format(x$lambda_best, digits = digits),
              nrow(x$path), format(x$df, digits = digits),
              if (x$has_intercept) " (with intercept)" else ""))
  tab <- rbind(`Residual SE` = x$sigma, `R-squared` = x$r.squared, GCV = x$gcv)
  colnames(tab) <- if (length(x$rss) > 1L) names(x$rss) else ""
  print(tab, digits = digits)
  invisible(x)
}

#' @rdname predict.rff_ridge
#' @param y Unused.
#' @export
plot.rff_ridge <- function(x, y, ...) {
  g <- if (is.matrix(x$gcv)) rowSums(x$gcv) else x$gcv
  o <- order(x$lambda)
  ok <- is.finite(g[o])
  graphics::plot(x$lambda[o][ok], g[o][ok], log = "x", type = "b", pch = 20,
                 xlab = expression(lambda), ylab = "GCV",
                 main = "Generalized cross-validation", ...)
  graphics::abline(v = x$lambda_best, lty = 2)
  invisible(x)
}
