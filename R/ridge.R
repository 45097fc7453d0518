#' Kernel ridge regression on random Fourier features
#'
#' Fits f(x) = z(x)'beta (+ intercept) with
#' beta = (Z'Z + n lambda I)^-1 Z'y, the random-feature approximation of
#' kernel ridge regression, by streaming the rows through the feature map:
#' Z'Z (BLAS `dsyrk`) and Z'y are accumulated over blocks of `chunk_size`
#' rows by [rff_stats()], so the n x D feature matrix is never held and
#' memory beyond the inputs is O(D^2 + `chunk_size` * D) whatever n is.
#'
#' **Intercept.** With `intercept = TRUE` the columns of Z and y are centered
#' (algebraically, from the statistics) and the intercept is not penalized:
#' beta = (Zc'Zc + n lambda I)^-1 Zc'yc and intercept = mean(y) -
#' mean(z)'beta.
#'
#' **Lambda.** A single `lambda` is solved by a Cholesky factorization
#' (LAPACK `dpotrf`/`dpotrs`). Several values, or `lambda = NULL`, use one
#' symmetric eigendecomposition Z'Z = V diag(s) V' (LAPACK `dsyevr`), after
#' which each lambda costs O(D^2): beta = V diag(1 / (s + n lambda)) V'Z'y.
#' With `lambda = NULL` the path has `nlambda` log-spaced values from
#' lambda_max = trace(Zc'Zc) / n, at which fewer than one degree of freedom
#' is used, down to `lambda_min_ratio * lambda_max`, in decreasing order.
#'
#' **Degrees of freedom and GCV.** `df` is the trace of the hat matrix,
#' sum(s / (s + n lambda)), plus 1 for the intercept;
#' GCV = n RSS / (n - df)^2 (infinite when df >= n), where the residual sum
#' of squares RSS is computed from the statistics. `lambda_best` minimizes
#' GCV (for several responses, the GCV summed over responses: one lambda is
#' chosen for all).
#'
#' **Fitted values.** When the fit is made from data, a second streaming
#' pass computes the fitted values at `lambda_best` (O(n D) time, no n x D
#' matrix), for [fitted()], [residuals()] and [summary()]; they are kept in
#' the result (O(n) memory, like [stats::lm()]). Fits from [rff_stats()]
#' objects have none.
#'
#' The formula method handles `data`, `subset` and `na.action` as
#' [stats::lm()] does; factors are expanded by [stats::model.matrix()]
#' (dummy columns enter the kernel like numeric inputs) and the intercept is
#' taken from the formula (`y ~ . - 1` has none).
#'
#' @param x A numeric matrix, numeric data frame or vector; for
#'   `rff_ridge.rff_stats()`, statistics from [rff_stats()].
#' @param y The response: a numeric vector with one value per row of `x`, or
#'   a matrix with one column per response.
#' @param formula A model formula, as for [stats::lm()]; `cbind(y1, y2) ~ .`
#'   fits several responses.
#' @param data,subset,na.action As for [stats::lm()].
#' @param lambda `NULL` (a data-driven path of `nlambda` values, best by
#'   GCV), one non-negative number (Cholesky solve), or several (one
#'   eigendecomposition for all).
#' @param map An `"rff_map"` from [rff_map()]; when `NULL`, a map is drawn
#'   from the arguments of [rff_map()] given in `...`.
#' @param intercept Fit an unpenalized intercept.
#' @param nlambda Length of the data-driven lambda path.
#' @param lambda_min_ratio Smallest lambda of the path, relative to the
#'   largest.
#' @param chunk_size Rows per streamed block; default about 16 MB of
#'   features (`2^21 / D` rows, at least 256). Results agree for every
#'   block size up to rounding.
#' @param threads Number of threads; default `getOption("rff.threads")`,
#'   else all cores (at most 2 when `_R_CHECK_LIMIT_CORES_` is set). Results
#'   do not depend on it.
#' @param progress Show a text progress bar when more than one block is
#'   streamed.
#' @param ... For the default and formula methods: arguments of [rff_map()]
#'   that draw the map when `map` is `NULL` (`D = 500`, `kernel`,
#'   `lengthscale`, `nu`, `variant`, `sampler`); the formula method passes
#'   the other arguments of the default method too.
#' @return An object of class `"rff_ridge"`, a list with
#'   \item{coefficients}{D x L matrix, one column per lambda (for q > 1
#'     responses, a D x q x L array).}
#'   \item{intercept}{Length-L vector (q x L matrix), zero without intercept.}
#'   \item{lambda, df, rss, gcv}{The lambda values and, for each, the
#'     degrees of freedom, the residual sum of squares and GCV (L x q
#'     matrices for `rss` and `gcv` when q > 1).}
#'   \item{lambda_best, best}{The lambda with the smallest GCV, and its index.}
#'   \item{tss}{Total sum of squares of y (about its mean with intercept).}
#'   \item{fitted.values, residuals}{At `lambda_best`; `NULL` for fits from
#'     statistics.}
#'   \item{map, n, has_intercept, method, call}{The feature map, the number of
#'     rows, whether there is an intercept, `"cholesky"` or `"eigen"`, and the
#'     call.}
#' @references Rahimi, A. and Recht, B. (2007). Random features for
#'   large-scale kernel machines. *Advances in Neural Information Processing
#'   Systems 20*.
#'
#'   Rudi, A. and Rosasco, L. (2017). Generalization properties of learning
#'   with random features. *Advances in Neural Information Processing
#'   Systems 30*.
#' @seealso [rff_cv()] for cross-validation over lambda and the lengthscale,
#'   [rff_stats()] to fit from statistics combined over row blocks,
#'   [predict.rff_ridge()].
#' @examples
#' set.seed(1)
#' x <- matrix(runif(1000), 500, 2)
#' y <- sin(4 * x[, 1]) + cos(3 * x[, 2]) + rnorm(500, sd = 0.1)
#' fit <- rff_ridge(x, y, D = 200, lengthscale = 0.5)
#' fit
#' plot(fit)
#' predict(fit, x[1:3, ])
#' # one lambda, Cholesky solve
#' fit1 <- rff_ridge(x, y, lambda = fit$lambda_best, map = fit$map)
#' all.equal(coef(fit1), coef(fit))
#' # formula interface
#' d <- data.frame(y = y, u = x[, 1], v = x[, 2])
#' summary(rff_ridge(y ~ u + v, data = d, D = 200, lengthscale = 0.5))
#' @importFrom stats coef fitted nobs predict residuals
#' @importFrom graphics plot
#' @export
rff_ridge <- function(x, ...) UseMethod("rff_ridge")

#' @rdname rff_ridge
#' @export
rff_ridge.default <- function(x, y, lambda = NULL, map = NULL, intercept = TRUE,
                              nlambda = 50, lambda_min_ratio = 1e-6,
                              chunk_size = NULL, threads = NULL,
                              progress = interactive(), ...) {
  cl <- match.call()
  cl[[1L]] <- as.name("rff_ridge")
  check_required(c("x", "y"))
  x <- check_x(x)
  y <- check_y(y, nrow(x))
  lambda <- check_lambda(lambda)
  intercept <- check_flag(intercept, "intercept")
  nlambda <- check_count(nlambda, "nlambda", lo = 1, hi = 10000)
  lambda_min_ratio <- check_ratio(lambda_min_ratio)
  threads <- check_threads(threads)
  progress <- check_flag(progress, "progress")
  map_given <- !is.null(map)
  map <- ridge_map(ncol(x), map, ...)
  # Z'Z, its factor or eigenvectors, and the solve's workspace
  check_stats_memory(map$D, 4, map_given)
  chunk_size <- check_chunk_size(chunk_size, map$D)
  stats <- accumulate_stats(x, y, map, intercept, chunk_size, threads, progress)
  fit <- ridge_from_stats(stats, lambda, nlambda, lambda_min_ratio)
  fit <- add_fitted(fit, x, y, chunk_size, threads)
  fit$call <- cl
  fit
}

#' @rdname rff_ridge
#' @export
rff_ridge.formula <- function(formula, data, subset, na.action, ...) {
  cl <- match.call()
  cl[[1L]] <- as.name("rff_ridge")
  if ("intercept" %in% names(list(...))) {
    rff_abort("intercept", "with a formula the intercept is set by the formula (`y ~ x - 1` has none); do not give `intercept`")
  }
  mf <- match.call(expand.dots = FALSE)
  m <- match(c("formula", "data", "subset", "na.action"), names(mf), 0L)
  mf <- mf[c(1L, m)]
  mf$drop.unused.levels <- TRUE
  mf[[1L]] <- quote(stats::model.frame)
  mf <- eval(mf, parent.frame())
  mt <- attr(mf, "terms")
  y <- stats::model.response(mf, "numeric")
  if (is.null(y)) rff_abort("formula", "`formula` must have a response")
  x <- stats::model.matrix(mt, mf)
  contrasts <- attr(x, "contrasts")
  x <- x[, colnames(x) != "(Intercept)", drop = FALSE]
  if (ncol(x) == 0L) rff_abort("formula", "`formula` must have at least one predictor")
  fit <- rff_ridge.default(x, y, intercept = attr(mt, "intercept") == 1L, ...)
  fit$call <- cl
  fit$terms <- mt
  fit$xlevels <- stats::.getXlevels(mt, mf)
  fit$contrasts <- contrasts
  fit$na.action <- attr(mf, "na.action")
  fit
}

#' @rdname rff_ridge
#' @export
rff_ridge.rff_stats <- function(x, lambda = NULL, nlambda = 50,
                                lambda_min_ratio = 1e-6, ...) {
  cl <- match.call()
  cl[[1L]] <- as.name("rff_ridge")
  if (length(list(...))) {
    rff_abort("...", sprintf("`...` must be empty: a fit from statistics takes only `lambda`, `nlambda` and `lambda_min_ratio`; got `%s`",
                             names(list(...))[1L]))
  }
  check_stats(x, "x")
  lambda <- check_lambda(lambda)
  nlambda <- check_count(nlambda, "nlambda", lo = 1, hi = 10000)
  lambda_min_ratio <- check_ratio(lambda_min_ratio)
  fit <- ridge_from_stats(x, lambda, nlambda, lambda_min_ratio)
  fit$call <- cl
  fit
}

# The one place maps are made for fitting: the given map, or rff_map(d, ...)
# with whatever sampling arguments rff_map() accepts.
ridge_map <- function(d, map = NULL, ...) {
  args <- list(...)
  if (!is.null(map)) {
    check_no_sampling_args(names(args))
    check_map(map)
    if (map$d != d) {
      rff_abort("map", sprintf("`map` was drawn for %d input columns but `x` has %d",
                               map$d, d))
    }
    return(map)
  }
  check_map_args(args)
  do.call(rff_map, c(list(d = d), args))
}

# Centered (intercept) or raw normal equations from statistics: A = Z'Z,
# b = Z'y, yy = y'y, with the means used for the intercept.
ridge_system <- function(s) {
  n <- s$n
  if (s$intercept) {
    zbar <- s$zsum / n
    ybar_shifted <- s$ysum / n
    list(A = s$ZtZ - n * tcrossprod(zbar),
         b = s$Zty - n * outer(zbar, ybar_shifted),
         yy = pmax(s$yty - n * ybar_shifted^2, 0),
         zbar = zbar, ybar = s$yshift + ybar_shifted, n = n)
  } else {
    list(A = s$ZtZ, b = s$Zty + outer(s$zsum, s$yshift),
         yy = s$yty + 2 * s$yshift * s$ysum + n * s$yshift^2,
         zbar = NULL, ybar = NULL, n = n)
  }
}

# Log-spaced decreasing path from trace(A) / n.
lambda_path <- function(A, n, nlambda, ratio) {
  lmax <- sum(diag(A)) / n
  if (!(lmax > 0)) lmax <- 1
  lmax * exp(seq(0, log(ratio), length.out = nlambda))
}

# Coefficients (D x q x L), intercepts (q x L), df (L), rss (L x q) for
# every lambda, from the normal equations.
ridge_path <- function(sys, lambda, nlambda, ratio) {
  A <- sys$A
  n <- sys$n
  D <- nrow(A)
  q <- ncol(sys$b)
  if (is.null(lambda)) lambda <- lambda_path(A, n, nlambda, ratio)
  L <- length(lambda)
  beta <- array(0, c(D, q, L))
  rss <- matrix(0, L, q)
  df <- numeric(L)
  if (L == 1L) {
    method <- "cholesky"
    r <- .Call(C_rff_ridge_chol, A, sys$b, n * lambda)
    if (r$info != 0L) singular_abort(lambda)
    beta[, , 1L] <- r$coefficients
    df[1L] <- D - n * lambda * r$trace_inv
    Ab <- A %*% r$coefficients
    rss[1L, ] <- sys$yy - 2 * colSums(r$coefficients * sys$b) +
      colSums(r$coefficients * Ab)
  } else {
    method <- "eigen"
    e <- .Call(C_rff_ridge_eigen, A)
    s <- pmax(e$values, 0)
    V <- e$vectors
    u <- crossprod(V, sys$b)
    for (i in seq_len(L)) {
      den <- s + n * lambda[i]
      if (any(den <= 0)) singular_abort(lambda[i])
      w <- 1 / den
      beta[, , i] <- V %*% (u * w)
      df[i] <- sum(s * w)
      rss[i, ] <- sys$yy - colSums(u^2 * (w^2 * (s + 2 * n * lambda[i])))
    }
  }
  rss <- pmax(rss, 0)
  intercept <- matrix(0, q, L)
  if (!is.null(sys$zbar)) {
    for (i in seq_len(L)) {
      intercept[, i] <- sys$ybar - drop(crossprod(beta[, , i, drop = FALSE][, , 1L], sys$zbar))
    }
    df <- df + 1
  }
  list(beta = beta, intercept = intercept, lambda = lambda, df = df, rss = rss,
       method = method)
}

singular_abort <- function(lambda) {
  rff_abort("lambda", sprintf(
    "Z'Z + n * lambda * I is singular at `lambda` = %s; use a positive `lambda`",
    format(lambda)))
}

ridge_from_stats <- function(stats, lambda, nlambda, ratio) {
  sys <- ridge_system(stats)
  p <- ridge_path(sys, lambda, nlambda, ratio)
  n <- stats$n
  gcv <- n * p$rss / pmax(n - p$df, 0)^2
  gcv[!is.finite(gcv)] <- Inf
  best <- which.min(rowSums(gcv))
  if (length(best) == 0L) best <- 1L
  q <- dim(p$beta)[2L]
  resp <- stats$response
  fit <- list(coefficients = p$beta, intercept = p$intercept, lambda = p$lambda,
              df = p$df, rss = p$rss, gcv = gcv, lambda_best = p$lambda[best],
              best = best, tss = sys$yy, map = stats$map, n = n,
              has_intercept = stats$intercept, method = p$method,
              response = resp, fitted.values = NULL, residuals = NULL)
  if (q == 1L) {
    fit$coefficients <- matrix(p$beta, nrow = dim(p$beta)[1L])
    fit$intercept <- drop(p$intercept)
    fit$rss <- drop(p$rss)
    fit$gcv <- drop(gcv)
  } else {
    dimnames(fit$coefficients) <- list(NULL, resp, NULL)
    dimnames(fit$intercept) <- list(resp, NULL)
    dimnames(fit$rss) <- dimnames(fit$gcv) <- list(NULL, resp)
    names(fit$tss) <- resp
  }
  class(fit) <- "rff_ridge"
  fit
}

# beta as a D x q x L array and intercepts as q x L, whatever q is.
coef_array <- function(object) {
  b <- object$coefficients
  if (length(dim(b)) == 2L) array(b, c(nrow(b), 1L, ncol(b))) else b
}
intercept_matrix <- function(object) {
  matrix(object$intercept, ncol = length(object$lambda))
}

# Predictions (n x q x k array) at lambda indices `idx` for a validated
# double matrix x, streamed through the map.
predict_rows <- function(object, x, idx, chunk_size = NULL, threads = NULL) {
  B <- coef_array(object)[, , idx, drop = FALSE]
  D <- dim(B)[1L]
  q <- dim(B)[2L]
  k <- dim(B)[3L]
  if (is.null(chunk_size)) chunk_size <- default_chunk_size(D)
  if (is.null(threads)) threads <- default_threads()
  P <- .Call(C_rff_ridge_predict, x, object$map, matrix(B, D, q * k),
             chunk_size, threads)
  a0 <- intercept_matrix(object)[, idx, drop = FALSE]
  P <- P + rep(as.vector(a0), each = nrow(x))
  array(P, c(nrow(x), q, k))
}

add_fitted <- function(fit, x, y, chunk_size, threads) {
  f <- predict_rows(fit, x, fit$best, chunk_size, threads)[, , 1L]
  f <- matrix(f, nrow(x), dimnames = list(rownames(x), colnames(y)))
  r <- y - f
  rownames(r) <- rownames(x)
  if (ncol(f) == 1L) {
    f <- stats::setNames(f[, 1L], rownames(x))
    r <- stats::setNames(r[, 1L], rownames(x))
  }
  fit$fitted.values <- f
  fit$residuals <- r
  fit$xnames <- colnames(x)
  fit
}

# Indices of the requested lambdas in the fitted path (NULL: the best).
lambda_index <- function(object, lambda) {
  if (is.null(lambda)) return(object$best)
  lambda <- check_lambda(lambda)
  idx <- vapply(lambda, function(l) {
    i <- which(abs(object$lambda - l) <= 1e-8 * pmax(abs(l), abs(object$lambda)))
    if (length(i)) i[1L] else NA_integer_
  }, integer(1))
  if (anyNA(idx)) {
    rff_abort("lambda", sprintf(
      "`lambda` = %s is not in the fitted path; refit with `lambda = %s` (the fit keeps only the coefficients of its own lambda values)",
      format(lambda[is.na(idx)][1L]), format(lambda[is.na(idx)][1L])))
  }
  idx
}

# newdata as a double matrix with the training columns.
newdata_matrix <- function(object, newdata) {
  if (!is.null(object$terms)) {
    if (!is.data.frame(newdata) && !is.list(newdata)) {
      rff_abort("newdata", sprintf(
        "`newdata` must be a data frame for a fit made with a formula, got %s",
        show_value(newdata)))
    }
    tt <- stats::delete.response(object$terms)
    x <- tryCatch({
      mf <- stats::model.frame(tt, newdata, na.action = stats::na.pass,
                               xlev = object$xlevels)
      stats::model.matrix(tt, mf, contrasts.arg = object$contrasts)
    }, error = function(e) {
      rff_abort("newdata", paste0("`newdata` does not fit the model: ", conditionMessage(e)))
    })
    x <- x[, colnames(x) != "(Intercept)", drop = FALSE]
    return(check_x(x, "newdata"))
  }
  x <- check_x(newdata, "newdata")
  xn <- object$xnames
  if (!is.null(xn) && !is.null(colnames(x))) {
    miss <- setdiff(xn, colnames(x))
    if (length(miss)) {
      rff_abort("newdata", sprintf("`newdata` lacks the column%s %s used in the fit",
                                   if (length(miss) > 1L) "s" else "",
                                   paste0("\"", miss, "\"", collapse = ", ")))
    }
    x <- x[, xn, drop = FALSE]
  }
  if (ncol(x) != object$map$d) {
    rff_abort("newdata", sprintf("`newdata` has %d column%s but the model was fitted on %d",
                                 ncol(x), if (ncol(x) == 1L) "" else "s", object$map$d))
  }
  x
}

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
  idx <- lambda_index(object, lambda)
  x <- newdata_matrix(object, newdata)
  if (!is.null(chunk_size)) chunk_size <- check_count(chunk_size, "chunk_size", lo = 1)
  threads <- check_threads(threads)
  P <- predict_rows(object, x, idx, chunk_size, threads)
  q <- dim(P)[2L]
  k <- dim(P)[3L]
  rn <- rownames(x)
  lam <- format(object$lambda[idx], digits = 4)
  if (q == 1L && k == 1L) return(stats::setNames(P[, 1L, 1L], rn))
  if (q == 1L) return(matrix(P, nrow(x), k, dimnames = list(rn, lam)))
  dimnames(P) <- list(rn, object$response, lam)
  if (k == 1L) return(matrix(P, nrow(x), q, dimnames = list(rn, object$response)))
  P
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
  out <- out[keep, , , drop = FALSE]
  dimnames(out) <- list(rn[keep], object$response, format(object$lambda[idx], digits = 4))
  if (q == 1L && k == 1L) return(stats::setNames(out[, 1L, 1L], rn[keep]))
  if (q == 1L) return(matrix(out, length(keep), k, dimnames = dimnames(out)[c(1L, 3L)]))
  if (k == 1L) return(matrix(out, length(keep), q, dimnames = dimnames(out)[1:2]))
  out
}

no_data_abort <- function() {
  rff_abort("object", "`object` was fitted from statistics and keeps no fitted values; use predict(object, newdata)")
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

ridge_map_line <- function(map) {
  sprintf("%d random Fourier features (%s, %s kernel, lengthscale %s)",
          map$D, map$variant, kernel_label(map),
          paste(format(map$lengthscale, digits = 4), collapse = ", "))
}

#' @rdname predict.rff_ridge
#' @export
print.rff_ridge <- function(x, digits = max(3L, getOption("digits") - 3L), ...) {
  cat("Random-feature ridge regression\n")
  if (!is.null(x$call)) cat("Call: ", paste(deparse(x$call), collapse = "\n"), "\n", sep = "")
  cat(sprintf("  %s\n", ridge_map_line(x$map)))
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
  cat("Random-feature ridge regression\n")
  if (!is.null(x$call)) cat("Call: ", paste(deparse(x$call), collapse = "\n"), "\n", sep = "")
  cat(sprintf("  %s\n", ridge_map_line(x$map)))
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
