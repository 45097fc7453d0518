#' Cross-validated random-feature ridge regression
#'
#' k-fold cross-validation of [rff_ridge()] over a lambda path and over
#' candidate lengthscales, computed from sufficient statistics: the rows of
#' each fold are streamed once per lengthscale into [rff_stats()], the
#' statistics of the training rows of fold j are the total minus fold j,
#' and the held-out squared error of fold j at every lambda follows from
#' fold j's own statistics, so no feature matrix is ever held and each fold
#' costs one eigendecomposition for the whole path.
#'
#' All lengthscales share the same random draws: one map is drawn (or
#' `map` is taken) and its frequencies are rescaled, omega / l, so the
#' curves differ by the lengthscale only, not by Monte Carlo noise. The
#' lambda path (when `lambda = NULL`) is chosen from the data at the first
#' lengthscale, as in [rff_ridge()], and used for all of them.
#'
#' The CV error at (lambda, l) is the held-out mean squared error over all
#' rows (averaged over responses for several), with a standard error from
#' the spread of the per-fold errors. The model is then refitted on all rows
#' at the best pair by the Cholesky path of [rff_ridge()]; [predict()],
#' [coef()], [fitted()], [residuals()] and [nobs()] work on the result
#' directly (they are those of the refit, see [predict.rff_ridge()]), and
#' [plot()] draws the CV curves against lambda, one per lengthscale (with
#' standard-error bars for a single lengthscale) and marks the best pair.
#'
#' With statistics from [rff_stats_apply()] (`keep_chunks = TRUE`) as `x`,
#' the chunks are the folds and no data is read again; see there.
#'
#' Memory: the statistics of all folds of one lengthscale are held at once,
#' O(`folds` * D^2).
#'
#' @inheritParams rff_ridge
#' @param folds Number of folds (at least 2, at most the number of rows).
#' @param lambda `NULL` (a data-driven path of `nlambda` values) or the
#'   lambda values to compare.
#' @param lengthscale Candidate lengthscales: a numeric vector (one scalar
#'   lengthscale each), or a list whose elements are each a scalar or a
#'   vector with one value per column of `x` (ARD).
#' @param foldid Optional fold of each row (integers 1..k); overrides
#'   `folds`. By default rows are assigned at random, with fold sizes
#'   differing by at most one.
#' @param ... Other arguments of [rff_map()] (`D`, `kernel`, `nu`,
#'   `variant`, `sampler`) used to draw the map when `map` is `NULL`.
#' @return An object of class `"rff_cv"`: a list with `lambda`,
#'   `lengthscale` (the candidates, a list), `cvm` and `cvsd` (matrices of
#'   CV error and its standard error, one row per lambda, one column per
#'   lengthscale), `lambda_best`, `lengthscale_best`, `foldid`, `fit` (the
#'   refitted [rff_ridge()] model) and `call`.
#' @seealso [rff_ridge()].
#' @examples
#' set.seed(3)
#' x <- matrix(runif(600), 300, 2)
#' y <- sin(5 * x[, 1]) * x[, 2] + rnorm(300, sd = 0.1)
#' cv <- rff_cv(x, y, folds = 5, lengthscale = c(0.1, 0.3, 1), D = 100,
#'              nlambda = 20)
#' cv
#' plot(cv)
#' predict(cv, x[1:3, ])
#' @export
rff_cv <- function(x, y, folds = 10, lambda = NULL, lengthscale = 1, map = NULL,
                   intercept = TRUE, nlambda = 50, lambda_min_ratio = 1e-6,
                   foldid = NULL, chunk_size = NULL, threads = NULL,
                   progress = interactive(), ...) {
  cl <- fit_call(match.call(), "rff_cv")
  if (!missing(x) && inherits(x, "rff_stats")) {
    return(cv_from_stats(x, lambda, nlambda, lambda_min_ratio, names(cl)[-1L], cl))
  }
  check_required(c("x", "y"))
  a <- check_fit_args(x, y, lambda, intercept, nlambda, lambda_min_ratio,
                      threads, progress)
  x <- a$x
  y <- a$y
  lambda <- a$path$lambda
  n <- nrow(x)
  foldid <- check_foldid(foldid, folds, n)
  k <- max(foldid)

  if (is.null(map)) {
    base <- fit_map(ncol(x), NULL, lengthscale = 1, ..., x = x)
    candidates <- check_candidates(lengthscale, ncol(x))
  } else {
    base <- fit_map(ncol(x), map, ..., x = x)
    candidates <- if (missing(lengthscale)) list(map$lengthscale) else
      check_candidates(lengthscale, ncol(x))
  }
  # the statistics of every fold, plus the solves' copies
  check_stats_memory(base$D, k + 4, !is.null(map))
  chunk_size <- check_chunk_size(chunk_size, base$D)
  rows <- split(seq_len(n), foldid)
  nl <- length(candidates)
  pb <- NULL
  if (a$progress && nl * k > 1L) {
    pb <- utils::txtProgressBar(min = 0, max = nl * k, style = 3)
    on.exit(close(pb))
  }

  cvm <- cvsd <- NULL
  best_total <- NULL
  best_err <- Inf
  for (ci in seq_len(nl)) {
    m <- rescale_map(base, candidates[[ci]])
    fold_stats <- lapply(seq_len(k), function(j) {
      s <- accumulate_stats(x[rows[[j]], , drop = FALSE], y[rows[[j]], , drop = FALSE],
                            m, a$intercept, chunk_size, a$threads, FALSE)
      if (!is.null(pb)) utils::setTxtProgressBar(pb, (ci - 1L) * k + j)
      s
    })
    total <- combine_stats(fold_stats)
    # the path of the first lengthscale serves all of them
    if (is.null(lambda)) lambda <- lambda_values(a$path, normal_equations(total)$A, n)
    if (is.null(cvm)) cvm <- cvsd <- matrix(NA_real_, length(lambda), nl)
    # held-out sum of squared errors, folds x lambda
    sse <- t(vapply(seq_len(k), function(j) {
      train <- combine_stats(list(total, fold_stats[[j]]), sign = c(1, -1))
      p <- solve_path(normal_equations(train), lambda)
      heldout_sse(fold_stats[[j]], p)
    }, numeric(length(lambda))))
    sse <- matrix(sse, k)
    nj <- vapply(rows, length, integer(1))
    mse <- sse / nj
    cvm[, ci] <- colSums(sse) / n
    cvsd[, ci] <- sqrt(colSums(nj * (mse - rep(cvm[, ci], each = k))^2) / n / max(k - 1, 1))
    if (min(cvm[, ci]) < best_err) {
      best_err <- min(cvm[, ci])
      best_total <- total
    }
  }
  ij <- arrayInd(which.min(cvm), dim(cvm))
  lambda_best <- lambda[ij[1L]]
  fit <- ridge_from_stats(best_total, list(lambda = lambda_best))
  fit <- add_fitted(fit, x, y, chunk_size, a$threads)
  fit$call <- cl
  ls_names <- vapply(candidates, function(l) paste(format(l, digits = 4), collapse = ","),
                     character(1))
  dimnames(cvm) <- dimnames(cvsd) <- list(NULL, ls_names)
  structure(list(lambda = lambda, lengthscale = candidates, cvm = cvm, cvsd = cvsd,
                 lambda_best = lambda_best, lengthscale_best = candidates[[ij[2L]]],
                 best = c(lambda = ij[1L], lengthscale = ij[2L]),
                 foldid = foldid, fit = fit, call = cl),
            class = "rff_cv")
}

# Held-out SSE at every lambda (summed over responses) of a path fitted
# without the rows of `s`, from the statistics of those rows: with
# c = shift - intercept, sum (y - a - Z b)^2 =
# yty + 2 c ysum + n c^2 - 2 b'(Zty + zsum c) + b'Z'Z b.
heldout_sse <- function(s, p) {
  L <- length(p$lambda)
  q <- dim(p$beta)[2L]
  out <- numeric(L)
  for (r in seq_len(q)) {
    B <- matrix(p$beta[, r, ], ncol = L)
    cc <- s$yshift[r] - p$intercept[r, ]
    quad <- colSums(B * (s$ZtZ %*% B))
    lin <- colSums(B * s$Zty[, r]) + cc * colSums(B * s$zsum)
    out <- out + s$yty[r] + 2 * cc * s$ysum[r] + s$n * cc^2 - 2 * lin + quad
  }
  pmax(out, 0) / q
}

#' @export
print.rff_cv <- function(x, digits = max(3L, getOption("digits") - 3L), ...) {
  cat(sprintf("Random-feature ridge regression, %d-fold cross-validation\n", max(x$foldid)))
  cat(sprintf("  %s\n", map_line(x$fit$map)))
  cat(sprintf("  %d lambda values x %d lengthscale%s\n", length(x$lambda),
              length(x$lengthscale), if (length(x$lengthscale) == 1L) "" else "s"))
  i <- x$best
  cat(sprintf("  best: lambda = %s, lengthscale = %s, CV MSE = %s (se %s)\n",
              format(x$lambda_best, digits = digits),
              paste(format(x$lengthscale_best, digits = digits), collapse = ", "),
              format(x$cvm[i[1L], i[2L]], digits = digits),
              format(x$cvsd[i[1L], i[2L]], digits = digits)))
  invisible(x)
}

# predictions, coefficients and fitted values are those of the refit
#' @export
predict.rff_cv <- function(object, newdata, ...) {
  if (missing(newdata)) return(stats::predict(object$fit, ...))
  stats::predict(object$fit, newdata, ...)
}

#' @export
coef.rff_cv <- function(object, ...) stats::coef(object$fit, ...)
#' @export
fitted.rff_cv <- function(object, ...) stats::fitted(object$fit, ...)
#' @export
residuals.rff_cv <- function(object, ...) stats::residuals(object$fit, ...)
#' @export
nobs.rff_cv <- function(object, ...) object$fit$n

#' @export
plot.rff_cv <- function(x, y, ...) {
  cvm <- x$cvm
  o <- order(x$lambda)
  lam <- x$lambda[o]
  if (ncol(cvm) == 1L) {
    lo <- cvm[o, 1L] - x$cvsd[o, 1L]
    hi <- cvm[o, 1L] + x$cvsd[o, 1L]
    graphics::plot(lam, cvm[o, 1L], log = "x", type = "b", pch = 20,
                   ylim = range(lo, hi, finite = TRUE), xlab = expression(lambda),
                   ylab = "CV mean squared error", main = "Cross-validation", ...)
    graphics::segments(lam, lo, lam, hi, col = "grey50")
  } else {
    cols <- seq_len(ncol(cvm))
    graphics::matplot(lam, cvm[o, , drop = FALSE], log = "x", type = "l", lty = 1,
                      col = cols, xlab = expression(lambda),
                      ylab = "CV mean squared error", main = "Cross-validation", ...)
    graphics::legend("topleft", legend = colnames(cvm), col = cols, lty = 1,
                     title = "lengthscale", bty = "n")
  }
  graphics::points(x$lambda_best, x$cvm[x$best[1L], x$best[2L]], pch = 4, cex = 2)
  invisible(x)
}
