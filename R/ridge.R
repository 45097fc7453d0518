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
#'   else all cores (at most 2 when `_R_CHECK_LIMIT_CORES_` is set). In a
#'   forked child process (`parallel::mclapply()`, `future::plan(multicore)`)
#'   every routine runs on one thread, since OpenMP's threads do not survive
#'   `fork()`. Results
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
  cl <- fit_call(match.call(), "rff_ridge")
  check_required(c("x", "y"))
  a <- check_fit_args(x, y, lambda, intercept, nlambda, lambda_min_ratio,
                      threads, progress)
  map_given <- !is.null(map)
  map <- fit_map(ncol(a$x), map, ..., x = a$x)
  # Z'Z, its factor or eigenvectors, and the solve's workspace
  check_stats_memory(map$D, 4, map_given)
  chunk_size <- check_chunk_size(chunk_size, map$D)
  stats <- accumulate_stats(a$x, a$y, map, a$intercept, chunk_size, a$threads,
                            a$progress)
  fit <- ridge_from_stats(stats, a$path)
  fit <- add_fitted(fit, a$x, a$y, chunk_size, a$threads)
  fit$call <- cl
  fit
}

#' @rdname rff_ridge
#' @export
rff_ridge.formula <- function(formula, data, subset, na.action, ...) {
  cl <- fit_call(match.call(), "rff_ridge")
  if ("intercept" %in% names(list(...))) {
    rff_abort("intercept", "with a formula the intercept is set by the formula (`y ~ x - 1` has none); do not give `intercept`")
  }
  frame <- formula_frame(match.call(expand.dots = FALSE), parent.frame())
  fit <- rff_ridge.default(frame$x, frame$y, intercept = frame$intercept, ...)
  fit$call <- cl
  for (f in names(frame$model)) fit[[f]] <- frame$model[[f]]
  fit
}

#' @rdname rff_ridge
#' @export
rff_ridge.rff_stats <- function(x, lambda = NULL, nlambda = 50,
                                lambda_min_ratio = 1e-6, ...) {
  cl <- fit_call(match.call(), "rff_ridge")
  if (length(list(...))) {
    rff_abort("...", sprintf("`...` must be empty: a fit from statistics takes only `lambda`, `nlambda` and `lambda_min_ratio`; got `%s`",
                             names(list(...))[1L]))
  }
  check_stats(x, "x")
  path <- check_path(lambda, nlambda, lambda_min_ratio)
  fit <- ridge_from_stats(x, path)
  fit$call <- cl
  fit
}

# An "rff_ridge" fit from statistics: the path solved at the lambda values
# of `path` (from check_path()), the best by GCV.
ridge_from_stats <- function(stats, path) {
  sys <- normal_equations(stats)
  p <- solve_path(sys, lambda_values(path, sys$A, sys$n))
  n <- stats$n
  sel <- gcv_select(p$rss, p$df, n)
  gcv <- sel$gcv
  best <- sel$best
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
