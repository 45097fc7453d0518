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
#' default `lengthscale = "auto"` compares the median heuristic of the
#' (standardized) inputs times 0.5, 0.71, 1, 1.41, 2, 2.83 and 4, as
#' [rff_ridge()] does, here by cross-validation; `"median"` is the median
#' heuristic alone. The defaults `standardize = TRUE` and `D` from the
#' number of rows are those of [rff_ridge()]; the standardization is
#' computed once from all rows (it does not look at the response). The
#' lambda path (when `lambda = NULL`) is chosen from the data at the first
#' lengthscale, as in [rff_ridge()], and used for all of them.
#'
#' The CV error at (lambda, l) is the held-out (weighted) mean squared
#' error over all rows (averaged over responses for several), with a
#' standard error from the spread of the per-fold errors. `lambda_min` is
#' the lambda of the smallest CV error (at the best lengthscale) and
#' `lambda_1se` the largest lambda whose CV error at that lengthscale is
#' within one standard error of it, glmnet's one-standard-error rule. The
#' model is then refitted on all rows at the best lengthscale and
#' `lambda_min` by the Cholesky path of [rff_ridge()], keeping its normal
#' equations: [predict()] and [coef()] take `lambda = "min"`, `"1se"` or any
#' number, solved exactly (see [predict.rff_cv()]); [fitted()],
#' [residuals()] and [nobs()] are those of the refit; [summary()] gives the
#' CV error per lengthscale; [plot()] draws the CV curves against lambda,
#' one per lengthscale (with standard-error bars for a single lengthscale),
#' marks the best pair and draws `lambda_min` and `lambda_1se`.
#'
#' The formula method handles `data`, `subset`, `weights`, `na.action` and
#' `offset` as [stats::lm()] does, with factors expanded by
#' [stats::model.matrix()].
#'
#' With statistics from [rff_stats_apply()] (`keep_chunks = TRUE`) as `x`,
#' the chunks are the folds and no data is read again; see there.
#'
#' Memory: the statistics of all folds of one lengthscale are held at once,
#' O(`folds` * D^2).
#'
#' **GLM families.** With `family = "binomial"`, `"multinomial"` or
#' `"poisson"`, the model is [rff_glm()] and the held-out measure is
#' `type.measure`: `"deviance"` (default; per row), `"class"`
#' (misclassification rate), `"auc"` (binomial; per fold, larger is better)
#' or `"mse"` (Poisson), as in `glmnet::cv.glmnet()`. Each fold's path is
#' fitted with its held-out rows weighted zero, started at each lambda from
#' the fit on all rows; the lambda path defaults to 20 values down to 1e-4
#' of the largest. `fit` is then the [rff_glm()] fit on all rows at the best
#' lengthscale, whose path holds `lambda_min` and `lambda_1se`; [predict()]
#' takes the types of [predict.rff_glm()] (default `"link"`).
#'
#' @inheritParams rff_ridge
#' @inheritParams rff_glm
#' @param family `"gaussian"` (ridge regression, default), `"binomial"`,
#'   `"multinomial"` or `"poisson"` (see GLM families).
#' @param type.measure For GLM families, the held-out measure: `"deviance"`,
#'   `"class"`, `"auc"` (binomial) or `"mse"` (Poisson).
#' @param folds Number of folds (at least 2, at most the number of rows).
#' @param lambda `NULL` (a data-driven path of `nlambda` values) or the
#'   lambda values to compare.
#' @param lengthscale `"auto"` (default: multiples of the median
#'   heuristic), `"median"`, or candidate lengthscales: a numeric vector
#'   (one scalar lengthscale each), or a list whose elements are each a
#'   scalar or a vector with one value per column of `x` (ARD).
#' @param foldid Optional fold of each row (integers 1..k); overrides
#'   `folds`. By default rows are assigned at random, with fold sizes
#'   differing by at most one.
#' @param ... Other arguments of [rff_map()] (`D`, `kernel`, `nu`,
#'   `variant`, `sampler`) used to draw the map when `map` is `NULL`; for
#'   the formula method, also the other arguments of the default method.
#' @return An object of class `"rff_cv"`: a list with `lambda`,
#'   `lengthscale` (the candidates, a list), `cvm` and `cvsd` (matrices of
#'   CV error and its standard error, one row per lambda, one column per
#'   lengthscale), `lambda_min`, `lambda_1se`, `lambda_best` (the same as
#'   `lambda_min`), `lengthscale_best`, `best` (the indices of the best
#'   pair), `foldid`, `fit` (the refitted [rff_ridge()] model) and `call`.
#' @seealso [rff_ridge()], [predict.rff_cv()].
#' @examples
#' set.seed(3)
#' x <- matrix(runif(600), 300, 2)
#' y <- sin(5 * x[, 1]) * x[, 2] + rnorm(300, sd = 0.1)
#' cv <- rff_cv(x, y, folds = 5, lengthscale = c(0.1, 0.3, 1), D = 100,
#'              nlambda = 20)
#' cv
#' plot(cv)
#' predict(cv, x[1:3, ], lambda = "1se")
#' # formula interface with a factor, defaults for D and the lengthscale
#' d <- data.frame(y = y, u = x[, 1], v = x[, 2], g = factor(x[, 2] > 0.5))
#' cv2 <- rff_cv(y ~ u + v + g, data = d, folds = 5, D = 100, nlambda = 20)
#' summary(cv2)
#' @export
rff_cv <- function(x, ...) UseMethod("rff_cv")

#' @rdname rff_cv
#' @export
rff_cv.default <- function(x, y, folds = 10, lambda = NULL, lengthscale = "auto",
                           map = NULL, intercept = TRUE, standardize = TRUE,
                           weights = NULL, offset = NULL, nlambda = 50,
                           lambda_min_ratio = 1e-6, foldid = NULL, chunk_size = NULL,
                           threads = NULL, progress = interactive(),
                           family = "gaussian", type.measure = NULL,
                           cache_mb = getOption("rff.cache_mb", 1024), control = list(),
                           ...) {
  cl <- fit_call(match.call(), "rff_cv")
  if (!missing(x) && inherits(x, "rff_stats")) {
    return(cv_from_stats(x, lambda, nlambda, lambda_min_ratio, names(cl)[-1L], cl))
  }
  check_required(c("x", "y"))
  family <- check_string(family, "family", c("gaussian", "binomial", "multinomial", "poisson"))
  if (family != "gaussian") {
    return(glm_cv(cl, x, y, family, type.measure, folds, lambda, lengthscale, map,
                  intercept, standardize, weights, offset,
                  if (missing(nlambda)) 20 else nlambda,
                  if (missing(lambda_min_ratio)) 1e-4 else lambda_min_ratio,
                  foldid, cache_mb, control, chunk_size, threads, progress, list(...),
                  !missing(lengthscale)))
  }
  if (!is.null(type.measure) && !identical(type.measure, "mse")) {
    rff_abort("type.measure", sprintf(
      "`type.measure` of family \"gaussian\" is \"mse\", got %s", show_value(type.measure)))
  }
  a <- check_fit_args(x, y, lambda, intercept, nlambda, lambda_min_ratio,
                      threads, progress)
  lambda <- a$path$lambda
  n <- nrow(a$x)
  d <- ncol(a$x)
  foldid <- check_foldid(foldid, folds, n)
  k <- max(foldid)
  args <- list(...)
  auto <- identical(lengthscale, "auto")
  if (!is.null(map)) {
    m <- model_setup(a, standardize, weights, offset, map, args, "rff_cv")
    candidates <- if (missing(lengthscale)) list(map$lengthscale) else
      check_candidates(lengthscale, d, m$x)
  } else {
    if (!auto) args$lengthscale <- 1
    m <- model_setup(a, standardize, weights, offset, NULL, args, "rff_cv")
    candidates <- if (auto) m$candidates else check_candidates(lengthscale, d, m$x)
  }
  if (is.null(candidates)) candidates <- list(m$map$lengthscale)
  base <- m$map
  x <- m$x
  y <- m$y
  w <- m$weights
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
    mp <- rescale_map(base, candidates[[ci]])
    fold_stats <- lapply(seq_len(k), function(j) {
      r <- rows[[j]]
      s <- accumulate_stats(x[r, , drop = FALSE], y[r, , drop = FALSE], mp, a$intercept,
                            chunk_size, a$threads, FALSE, if (is.null(w)) NULL else w[r])
      if (!is.null(pb)) utils::setTxtProgressBar(pb, (ci - 1L) * k + j)
      s
    })
    total <- combine_stats(fold_stats)
    # fewer rows than features: each fold's eigenproblem on n x n
    Zall <- if (n <= base$D) .Call(C_rff_features, x, mp, a$threads)
    # the path of the first lengthscale serves all of them
    if (is.null(lambda)) {
      sys <- normal_equations(total)
      lambda <- lambda_values(a$path, sys$A, sys$w)
    }
    if (is.null(cvm)) cvm <- cvsd <- matrix(NA_real_, length(lambda), nl)
    # held-out (weighted) sum of squared errors, folds x lambda
    sse <- t(vapply(seq_len(k), function(j) {
      train <- combine_stats(list(total, fold_stats[[j]]), sign = c(1, -1))
      sys <- normal_equations(train)
      eig <- if (!is.null(Zall) && length(lambda) > 1L) {
        tr <- -rows[[j]]
        thin_eigen(Zall[tr, , drop = FALSE], sys$zbar, if (is.null(w)) NULL else w[tr],
                   threads = a$threads)
      }
      p <- solve_path(sys, lambda, eig)
      if (is.null(Zall)) return(heldout_sse(fold_stats[[j]], p))
      r <- rows[[j]]
      heldout_sse_rows(Zall[r, , drop = FALSE], y[r, , drop = FALSE],
                       if (is.null(w)) NULL else w[r], p)
    }, numeric(length(lambda))))
    sse <- matrix(sse, k)
    wj <- vapply(fold_stats, stats_wsum, numeric(1))
    W <- sum(wj)
    mse <- sse / pmax(wj, .Machine$double.xmin)
    cvm[, ci] <- colSums(sse) / W
    cvsd[, ci] <- sqrt(colSums(wj * (mse - rep(cvm[, ci], each = k))^2) / W / max(k - 1, 1))
    if (min(cvm[, ci]) < best_err) {
      best_err <- min(cvm[, ci])
      best_total <- total
    }
  }
  ij <- arrayInd(which.min(cvm), dim(cvm))
  lambda_min <- lambda[ij[1L]]
  # glmnet's rule: the largest lambda within one standard error of the minimum
  within <- cvm[, ij[2L]] <= cvm[ij[1L], ij[2L]] + cvsd[ij[1L], ij[2L]]
  lambda_1se <- max(lambda[within])
  fit <- ridge_from_stats(best_total, list(lambda = lambda_min))
  fit <- add_fitted(fit, x, y, chunk_size, a$threads, m$offset)
  ls_names <- vapply(candidates, function(l) paste(format(l, digits = 4), collapse = ","),
                     character(1))
  dimnames(cvm) <- dimnames(cvsd) <- list(NULL, ls_names)
  search <- NULL
  if (nl > 1L) {
    search <- list(best = ij[2L], rows = n, median = m$median, criterion = "CV",
                   table = data.frame(lengthscale = vapply(candidates, `[`, 0, 1L),
                                      multiple = if (auto) auto_multipliers[seq_len(nl)] else NA_real_,
                                      lambda = lambda[apply(cvm, 2L, which.min)],
                                      cv = apply(cvm, 2L, min)))
    if (!auto) search$median <- NULL
  }
  fit <- add_model_info(fit, m, search)
  fit$call <- cl
  structure(list(lambda = lambda, lengthscale = candidates, cvm = cvm, cvsd = cvsd,
                 lambda_min = lambda_min, lambda_1se = lambda_1se,
                 lambda_best = lambda_min, lengthscale_best = candidates[[ij[2L]]],
                 best = c(lambda = ij[1L], lengthscale = ij[2L]),
                 foldid = foldid, auto = auto, fit = fit, call = cl),
            class = "rff_cv")
}

#' @rdname rff_cv
#' @export
rff_cv.formula <- function(formula, data, subset, weights, na.action, offset, ...) {
  cl <- fit_call(match.call(), "rff_cv")
  fam <- list(...)$family
  r <- fit_formula(rff_cv.default, ...,
                   .response = if (is.null(fam) || identical(fam, "gaussian")) "numeric" else "any")
  cv <- r$fit
  cv$call <- cv$fit$call <- cl
  for (f in names(r$model)) cv$fit[[f]] <- r$model[[f]]
  cv
}

# Held-out SSE at every lambda (averaged over responses) of a path fitted
# without the rows of `s`, from the statistics of those rows: with
# c = shift - intercept, sum w (y - a - Z b)^2 =
# yty + 2 c ysum + w c^2 - 2 b'(Zty + zsum c) + b'Z'WZ b (weighted sums).
heldout_sse <- function(s, p) {
  L <- length(p$lambda)
  q <- dim(p$beta)[2L]
  out <- numeric(L)
  for (r in seq_len(q)) {
    B <- matrix(p$beta[, r, ], ncol = L)
    cc <- s$yshift[r] - p$intercept[r, ]
    quad <- colSums(B * (s$ZtZ %*% B))
    lin <- colSums(B * s$Zty[, r]) + cc * colSums(B * s$zsum)
    out <- out + s$yty[r] + 2 * cc * s$ysum[r] + stats_wsum(s) * cc^2 - 2 * lin + quad
  }
  pmax(out, 0) / q
}

# The same from the held-out rows' features Z (and responses y, weights w):
# cheaper than the statistics when the rows are fewer than the features.
heldout_sse_rows <- function(Z, y, w, p) {
  L <- length(p$lambda)
  q <- dim(p$beta)[2L]
  if (is.null(w)) w <- rep(1, nrow(Z))
  out <- numeric(L)
  for (r in seq_len(q)) {
    pred <- Z %*% matrix(p$beta[, r, ], ncol = L) + rep(p$intercept[r, ], each = nrow(Z))
    out <- out + colSums(w * (y[, r] - pred)^2)
  }
  out / q
}

#' @export
print.rff_cv <- function(x, digits = max(3L, getOption("digits") - 3L), ...) {
  glm <- inherits(x$fit, "rff_glm")
  cat(sprintf("Random-feature %s, %d-fold cross-validation\n",
              if (glm) paste(glm_family_label(x$family), "regression") else "ridge regression",
              max(x$foldid)))
  if (!is.null(x$call)) cat("Call: ", paste(deparse(x$call), collapse = "\n"), "\n", sep = "")
  cat(sprintf("  %s\n", map_line(x$fit$map)))
  cat_model_lines(x$fit, digits)
  cat(sprintf("  %d lambda values x %d lengthscale%s\n", length(x$lambda),
              length(x$lengthscale), if (length(x$lengthscale) == 1L) "" else "s"))
  i <- x$best
  cat(sprintf("  lambda_min = %s (CV %s %s, se %s), lambda_1se = %s; lengthscale = %s\n",
              fmt(x$lambda_min, digits), cv_measure_label(x, short = TRUE),
              fmt(x$cvm[i[1L], i[2L]], digits),
              fmt(x$cvsd[i[1L], i[2L]], digits), fmt(x$lambda_1se, digits),
              paste(fmt(x$lengthscale_best, digits), collapse = ", ")))
  invisible(x)
}

# The measure a cross-validation reports, for labels.
cv_measure_label <- function(x, short = FALSE) {
  m <- if (is.null(x$type.measure)) "mse" else x$type.measure
  if (short && m == "mse") return("MSE")
  measure_label(m)
}

# "min", "1se" or numbers >= 0 as lambda values of a cross-validation.
cv_lambda <- function(object, lambda) {
  if (is.character(lambda)) {
    lambda <- check_string(lambda, "lambda", c("min", "1se"))
    return(if (lambda == "min") object$lambda_min else object$lambda_1se)
  }
  if (is.null(lambda)) return(object$lambda_min)
  check_lambda(lambda)
}

#' Predictions, coefficients and summaries of a cross-validated fit
#'
#' The model of [rff_cv()] is refitted on all rows at the best lengthscale;
#' predictions and coefficients are those of that refit at `lambda`:
#' `"min"` (the lambda of smallest CV error, the default), `"1se"` (the
#' largest lambda whose CV error is within one standard error of the
#' smallest, glmnet's rule) or any numbers >= 0 (solved exactly from the
#' refit's normal equations). See [predict.rff_ridge()] for the other
#' arguments, the standard errors and the intervals. Note that
#' `glmnet::predict.cv.glmnet()` defaults to its `"lambda.1se"`.
#'
#' @param object,x A result of [rff_cv()].
#' @param newdata,type,se.fit,interval,level,na.action,newoffset,chunk_size,threads
#'   As for [predict.rff_ridge()].
#' @param lambda `"min"`, `"1se"` or numbers >= 0.
#' @param y Unused.
#' @param ... Nothing: any argument here is an error (for `predict()`,
#'   `newx` is `newdata` and `s` is `lambda`).
#' @return `predict()` and `coef()` as for [predict.rff_ridge()];
#'   `summary()` an object printed as the CV table per lengthscale.
#' @examples
#' set.seed(3)
#' x <- matrix(runif(600), 300, 2)
#' y <- sin(5 * x[, 1]) * x[, 2] + rnorm(300, sd = 0.1)
#' cv <- rff_cv(x, y, folds = 5, D = 100, nlambda = 20)
#' predict(cv, x[1:3, ], lambda = "1se")
#' predict(cv, x[1:3, ], lambda = 0.01)
#' summary(cv)
#' @name predict.rff_cv
#' @export
predict.rff_cv <- function(object, newdata, lambda = "min", type = c("response", "link"),
                           se.fit = FALSE, interval = c("none", "confidence", "prediction"),
                           level = 0.95, na.action = stats::na.pass, newoffset = NULL,
                           chunk_size = NULL, threads = NULL, ...) {
  check_predict_call(sys.call(), "rff_cv", names(formals(sys.function())))
  lambda <- cv_lambda(object, lambda)
  if (missing(newdata)) newdata <- NULL
  if (inherits(object$fit, "rff_glm")) {
    if (!isFALSE(se.fit) || !identical(interval, c("none", "confidence", "prediction"))) {
      rff_abort(if (isFALSE(se.fit)) "interval" else "se.fit",
                "standard errors and intervals are given for ridge regression fits, not for GLM families")
    }
    if (identical(type, c("response", "link"))) type <- "link"
    return(predict.rff_glm(object$fit, newdata, type = type, lambda = lambda,
                           na.action = na.action, newoffset = newoffset,
                           chunk_size = chunk_size, threads = threads))
  }
  stats::predict(object$fit, newdata, lambda = lambda, type = type, se.fit = se.fit,
                 interval = interval, level = level, na.action = na.action,
                 newoffset = newoffset, chunk_size = chunk_size, threads = threads)
}

#' @rdname predict.rff_cv
#' @export
coef.rff_cv <- function(object, lambda = "min", ...) {
  stats::coef(object$fit, lambda = cv_lambda(object, lambda))
}
#' @export
fitted.rff_cv <- function(object, ...) stats::fitted(object$fit, ...)
#' @export
residuals.rff_cv <- function(object, ...) stats::residuals(object$fit, ...)
#' @export
nobs.rff_cv <- function(object, ...) object$fit$n

#' @rdname predict.rff_cv
#' @export
summary.rff_cv <- function(object, ...) {
  sgn <- if (identical(object$type.measure, "auc")) -1 else 1
  at <- apply(sgn * object$cvm, 2L, which.min)
  per_ls <- data.frame(
    lengthscale = vapply(object$lengthscale, function(l) paste(signif(l, 4), collapse = ","),
                         character(1)),
    lambda_min = object$lambda[at],
    cvm = unname(object$cvm[cbind(at, seq_len(ncol(object$cvm)))]),
    cvsd = object$cvsd[cbind(at, seq_len(ncol(object$cvm)))],
    stringsAsFactors = FALSE)
  out <- list(call = object$call, folds = max(object$foldid), n = object$fit$n,
              map = object$fit$map, table = per_ls, best = object$best[["lengthscale"]],
              lambda_min = object$lambda_min, lambda_1se = object$lambda_1se,
              auto = object$auto, fit = summary(object$fit),
              measure = cv_measure_label(object))
  class(out) <- "summary.rff_cv"
  out
}

#' @export
print.summary.rff_cv <- function(x, digits = max(3L, getOption("digits") - 3L), ...) {
  glm <- inherits(x$fit, "summary.rff_glm")
  cat(sprintf("Random-feature %s, %d-fold cross-validation on %s rows\n",
              if (glm) paste(glm_family_label(x$fit$family), "regression") else "ridge regression",
              x$folds, format(x$n, big.mark = ",")))
  if (!is.null(x$call)) cat("Call: ", paste(deparse(x$call), collapse = "\n"), "\n", sep = "")
  cat(sprintf("  %s\n", map_line(x$map)))
  cat(sprintf("\nCross-validation %s at each lengthscale's best lambda:\n",
              if (is.null(x$measure)) "error (mean squared error)" else x$measure))
  tab <- x$table
  tab$chosen <- ifelse(seq_len(nrow(tab)) == x$best, "*", "")
  tab[] <- lapply(tab, function(v) if (is.numeric(v)) fmt(v, digits) else v)
  print(tab, row.names = FALSE, right = TRUE)
  cat(sprintf("\nlambda_min = %s, lambda_1se = %s\n", fmt(x$lambda_min, digits),
              fmt(x$lambda_1se, digits)))
  f <- x$fit
  if (glm) {
    cat("\n")
    print(f, digits = digits)
    return(invisible(x))
  }
  cat(sprintf("Refit on all rows at lambda_min: effective df = %s, residual standard error: %s, R-squared: %s\n",
              fmt(f$df, digits), fmt(f$sigma[1L], digits), fmt(f$r.squared[1L], digits)))
  invisible(x)
}

#' @rdname predict.rff_cv
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
                   ylab = paste("CV", cv_measure_label(x)), main = "Cross-validation", ...)
    graphics::segments(lam, lo, lam, hi, col = "grey50")
  } else {
    cols <- seq_len(ncol(cvm))
    graphics::matplot(lam, cvm[o, , drop = FALSE], log = "x", type = "l", lty = 1,
                      col = cols, xlab = expression(lambda),
                      ylab = paste("CV", cv_measure_label(x)), main = "Cross-validation", ...)
    graphics::legend(if (identical(x$type.measure, "auc")) "bottomleft" else "topleft",
                     legend = colnames(cvm), col = cols, lty = 1,
                     title = "lengthscale", bty = "n")
  }
  graphics::points(x$lambda_min, x$cvm[x$best[1L], x$best[2L]], pch = 4, cex = 2)
  graphics::abline(v = c(x$lambda_min, x$lambda_1se), lty = c(2, 3))
  invisible(x)
}
