# Layer 8 (methods): the methods of "rff_cv" results.

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

#' @export
print.rff_cv_chunks <- function(x, digits = max(3L, getOption("digits") - 3L), ...) {
  cat(sprintf("Random-feature ridge regression, cross-validated over %d chunks as folds\n",
              x$nfolds))
  cat(sprintf("  %s\n", map_line(x$fit$map)))
  cat(sprintf("  %d lambda values, %s rows\n", length(x$lambda),
              format(sum(x$fold_n), big.mark = ",")))
  i <- x$best[[1L]]
  cat(sprintf("  best: lambda = %s, CV MSE = %s (se %s)\n",
              format(x$lambda_best, digits = digits),
              format(x$cvm[i, 1L], digits = digits),
              format(x$cvsd[i, 1L], digits = digits)))
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
  # a result read from a file may have been altered
  if (!inherits(object$fit, c("rff_ridge", "rff_glm"))) {
    rff_abort("object", sprintf("`object` is damaged: its `fit` must be an rff_ridge or rff_glm fit, got %s",
                                show_value(object$fit)))
  }
  stored <- function(name) {
    v <- object[[name]]
    if (!is_number(v) || length(v) != 1L || !is.finite(v) || v < 0) {
      rff_abort("object", sprintf("`object` is damaged: `%s` must be one non-negative finite number, got %s",
                                  name, show_value(v)))
    }
    v
  }
  if (is.character(lambda)) {
    lambda <- check_string(lambda, "lambda", c("min", "1se"))
    return(stored(if (lambda == "min") "lambda_min" else "lambda_1se"))
  }
  if (is.null(lambda)) return(stored("lambda_min"))
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
#' @param newdata,type,se.fit,interval,level,na.action,newoffset,new_levels,chunk_size,threads
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
                           new_levels = getOption("rff.new_levels", "none"),
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
                           new_levels = new_levels, chunk_size = chunk_size,
                           threads = threads))
  }
  stats::predict(object$fit, newdata, lambda = lambda, type = type, se.fit = se.fit,
                 interval = interval, level = level, na.action = na.action,
                 newoffset = newoffset, new_levels = new_levels, chunk_size = chunk_size,
                 threads = threads)
}

#' @rdname predict.rff_cv
#' @export
coef.rff_cv <- function(object, lambda = "min", ...) {
  lambda <- cv_lambda(object, lambda)
  stats::coef(object$fit, lambda = lambda)
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
