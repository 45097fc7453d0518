# Layer 8 (methods): the methods of "rff_glm" fits.

#' Predictions, coefficients and summaries of a random-feature GLM
#'
#' `predict()` gives, for the rows of `newdata`, the linear predictor
#' (`type = "link"`), the fitted probabilities or means (`"response"`: the
#' probability of the second level for binomial, an n x K matrix of class
#' probabilities with the level names for multinomial, the mean for
#' Poisson) or the predicted class (`"class"`, a factor with the training
#' levels), at `lambda` (default `lambda_best`; values must be on the fitted
#' path, since a GLM has no closed-form solution at other values).
#' Without `newdata`, the training rows at `lambda_best`.
#'
#' `summary()` reports the deviance, the null deviance, the deviance
#' explained, the effective degrees of freedom (trace of the penalized
#' influence matrix, estimated on the preconditioner's sample of rows; per
#' class block for the multinomial family) and, for classifiers, the
#' training accuracy and confusion table. `logLik()` has that `df`.
#' `plot()` draws the cross-validated measure that chose lambda (deviance,
#' misclassification rate or AUC, with standard-error bars) against lambda
#' when the fit has one, else the training deviance.
#'
#' @param object,x An `"rff_glm"` fit.
#' @param newdata New rows: a data frame for fits made with a formula,
#'   else a numeric matrix with the training columns.
#' @param type `"link"`, `"response"` or `"class"`.
#' @param lambda `NULL` (`lambda_best`) or values of the fitted path.
#' @param na.action What to do with rows of `newdata` with missing values:
#'   [stats::na.pass] (default; their predictions are `NA`),
#'   [stats::na.omit] or [stats::na.exclude].
#' @param newoffset The offset of the new rows, for a fit with an `offset`
#'   argument (formula fits take it from `newdata`).
#' @param new_levels As for [predict.rff_ridge()]: `"none"`, `"na"` or
#'   `"error"`, for factor levels of `newdata` that no training row had.
#' @param chunk_size,threads As for [rff_glm()].
#' @param y Unused.
#' @param digits Significant digits to print.
#' @param ... Nothing: any other argument is an error (`newx` is `newdata`
#'   and `s` is `lambda`).
#' @return `predict()`: a vector, matrix or factor (see Description); for
#'   several lambdas one column per lambda (an array for multinomial
#'   probabilities, a character matrix for classes). `coef()`: the
#'   intercept and the D coefficients, a vector (a (D + 1) x K matrix for
#'   multinomial). `fitted()`: `predict(object, type = "response")`.
#' @examples
#' set.seed(2)
#' x <- matrix(rnorm(600), 300, 2)
#' y <- factor(x[, 1] * x[, 2] > 0, labels = c("no", "yes"))
#' fit <- rff_glm(x, y, D = 100, lengthscale = 1, nlambda = 8, folds = 3)
#' predict(fit, x[1:4, ], type = "response")
#' predict(fit, x[1:4, ], type = "class")
#' summary(fit)
#' plot(fit)
#' @name predict.rff_glm
#' @export
predict.rff_glm <- function(object, newdata, type = c("link", "response", "class"),
                            lambda = NULL, na.action = stats::na.pass, newoffset = NULL,
                            new_levels = getOption("rff.new_levels", "none"),
                            chunk_size = NULL, threads = NULL, ...) {
  check_predict_call(sys.call(), "rff_glm", names(formals(sys.function())))
  check_fit(object)
  type <- check_glm_type(type, object$family)
  idx <- lambda_index(object, lambda, refit_hint = TRUE)
  if (missing(newdata) || is.null(newdata)) {
    no_training_rows(object)
    if (!identical(idx, object$best)) {
      rff_abort("newdata", "`newdata` is needed for predictions at a `lambda` other than `lambda_best`")
    }
    eta <- array(object$linear.predictors, c(nrow(object$linear.predictors), ncol(object$linear.predictors), 1L))
    rows <- rownames(object$linear.predictors)
    return(glm_shape(object, eta, type, rows, object$lambda[idx]))
  }
  nd <- predict_newdata(object, newdata, newoffset, na.action, chunk_size, threads,
                        new_levels = new_levels)
  eta <- predict_linear(object, nd, coef_array(object)[, , idx, drop = FALSE],
                        intercept_matrix(object)[, idx, drop = FALSE])
  glm_shape(object, eta, type, nd$rows, object$lambda[idx])
}

check_glm_type <- function(type, family) {
  if (identical(type, c("link", "response", "class"))) return("link")
  type <- check_string(type, "type", c("link", "response", "class"))
  if (type == "class" && family == "poisson") {
    rff_abort("type", "`type` \"class\" is for the binomial and multinomial families; this fit is Poisson")
  }
  type
}

# eta (m x K x k) as the user asks for it.
glm_shape <- function(object, eta, type, rows, lambda) {
  m <- dim(eta)[1L]
  K <- dim(eta)[2L]
  k <- dim(eta)[3L]
  lam <- format(lambda, digits = 4)
  multi <- object$family == "multinomial"
  if (type == "class") {
    cls <- vapply(seq_len(k), function(j) {
      e <- matrix(eta[, , j], m, K)
      out <- rep(NA_character_, m)
      ok <- stats::complete.cases(e)
      out[ok] <- object$levels[glm_class(object$family, e[ok, , drop = FALSE])]
      out
    }, character(m))
    cls <- matrix(cls, m, k)
    if (k == 1L) return(stats::setNames(factor(cls[, 1L], levels = object$levels), rows))
    dimnames(cls) <- list(rows, lam)
    return(cls)
  }
  if (type == "response") {
    if (multi) {
      for (j in seq_len(k)) {
        e <- matrix(eta[, , j], m, K)
        mx <- apply(e, 1L, max)
        p <- exp(e - mx)
        eta[, , j] <- p / rowSums(p)
      }
    } else {
      # (in place: an array of zero rows keeps its dimensions)
      eta[] <- if (object$family == "binomial") stats::plogis(eta) else exp(eta)
    }
  }
  if (!multi) {
    if (k == 1L) return(stats::setNames(eta[, 1L, 1L], rows))
    return(matrix(eta, m, k, dimnames = list(rows, lam)))
  }
  if (k == 1L) return(matrix(eta, m, K, dimnames = list(rows, object$levels)))
  dimnames(eta) <- list(rows, object$levels, lam)
  eta
}

#' @rdname predict.rff_glm
#' @export
coef.rff_glm <- function(object, lambda = NULL, ...) {
  idx <- lambda_index(object, lambda, refit_hint = TRUE)
  coef_table(coef_array(object)[, , idx, drop = FALSE],
             intercept_matrix(object)[, idx, drop = FALSE], object$lambda[idx],
             object$levels)
}

#' @rdname predict.rff_glm
#' @export
fitted.rff_glm <- function(object, ...) {
  no_training_rows(object)
  stats::napredict(object$na.action, predict.rff_glm(object, type = "response"))
}

#' @rdname predict.rff_glm
#' @export
logLik.rff_glm <- function(object, ...) {
  if (is.null(object$linear.predictors) && !is.null(object$training)) {
    # a fit whose rows stayed on the workers (rff_glm_apply())
    ll <- -object$deviance[object$best] / 2 - object$training$sat_ll
    return(structure(ll, df = glm_effective_df(object), nobs = object$n, class = "logLik"))
  }
  eta <- object$linear.predictors
  w <- if (is.null(object$prior.weights)) rep(1, nrow(eta)) else object$prior.weights
  dev <- sum(w * glm_row_deviance(object$family, object$y, eta))
  ll <- -dev / 2 - saturated_loss_ll(object$family, object$y, w)
  structure(ll, df = glm_effective_df(object), nobs = object$n, class = "logLik")
}

# The effective degrees of freedom at lambda_best (see glm_df()).
glm_effective_df <- function(object) {
  s <- object$df_sample
  K <- dim(coef_array(object))[2L]
  prob <- glm_problem(s$x, s$y, object$family, K, s$offset, s$w, object$map,
                      default_chunk_size(object$map$D), default_threads(), Inf,
                      object$has_intercept)
  prob$W <- s$W
  theta <- rbind(intercept_matrix(object)[, object$best],
                 matrix(coef_array(object)[, , object$best], object$map$D))
  glm_df(prob, theta, object$lambda_best, seq_len(prob$n))
}

#' @rdname predict.rff_glm
#' @export
print.rff_glm <- function(x, digits = max(3L, getOption("digits") - 3L), ...) {
  cat_fit_header(sprintf("Random-feature %s regression", glm_family_label(x$family)),
                 x$call, x$map)
  cat_model_lines(x, digits)
  if (!is.null(x$levels)) {
    cat(sprintf("  classes: %s%s\n", paste0("\"", x$levels, "\"", collapse = ", "),
                if (x$family == "binomial") " (the second is the event)" else ""))
  }
  cat(sprintf("  %d lambda value%s; features %s\n", length(x$lambda),
              if (length(x$lambda) == 1L) "" else "s",
              if (isTRUE(x$cached)) "cached in memory" else "streamed"))
  i <- x$best
  crit <- if (is.null(x$cvm)) "" else
    glm_criterion_text(x$holdout, x$folds, glm_measure_label(x), x$cvm[i], x$cvsd[i], digits)
  if (identical(x$estimator, "ls")) {
    ls <- x$ls
    how <- if (is.null(ls$loo)) "given" else
      sprintf("by leave-one-out among %d values (LOO mean squared error %s)", length(ls$lambda),
              fmt(sum(as.matrix(ls$loo)[ls$best, ]), digits))
    cat(sprintf(paste0("  estimator \"ls\": least squares of the %s, lambda = %s (ridge scale) %s; ",
                       "probabilities calibrated with temperature %s\n"),
                if (x$family == "binomial") "0/1 response" else "class indicators",
                fmt(x$lambda_best, digits), how, fmt(ls$temperature, digits)))
  } else {
    cat(sprintf("  lambda = %s%s\n", fmt(x$lambda_best, digits), crit))
  }
  cat(sprintf("  deviance %s, null deviance %s (%s%% explained)\n",
              fmt(x$deviance[i], digits), fmt(x$null.deviance, digits),
              fmt(100 * (1 - x$deviance[i] / x$null.deviance), digits)))
  if (!is.null(x$levels)) {
    cat(sprintf("  training accuracy %s\n", fmt(glm_accuracy(x), digits)))
  }
  invisible(x)
}

# How lambda_best was chosen, for print() and summary(): " (5-fold CV
# deviance per row 0.39, se 0.01)", or the measure on the `holdout` rows.
glm_criterion_text <- function(holdout, folds, measure, cvm, cvsd, digits) {
  where <- if (is.null(holdout)) sprintf("%d-fold CV %s", folds, measure) else
    sprintf("%s on %s held-out rows", measure, format(holdout, big.mark = ","))
  sprintf(" (%s %s, se %s)", where, fmt(cvm, digits), fmt(cvsd, digits))
}

# The criterion that chose lambda_best: "CV deviance per row", or
# "held-out ..." after a held-out fold (plot() and glance()).
glm_criterion_label <- function(x) {
  paste(if (is.null(x$holdout)) "CV" else "held-out", glm_measure_label(x))
}

# The label of the measure that chose lambda_best ("deviance per row" for
# fits saved before the measure was kept).
glm_measure_label <- function(object) {
  measure_label(if (is.null(object$measure)) "deviance" else object$measure)
}

# The (weighted) share of training rows whose predicted class is theirs.
glm_accuracy <- function(object) {
  if (is.null(object$linear.predictors) && !is.null(object$training)) {
    return(object$training$accuracy)
  }
  cls <- glm_class(object$family, object$linear.predictors)
  truth <- if (object$family == "binomial") object$y + 1L else object$y
  w <- if (is.null(object$prior.weights)) rep(1, length(truth)) else object$prior.weights
  sum(w * (cls == truth)) / sum(w)
}

#' @rdname predict.rff_glm
#' @export
summary.rff_glm <- function(object, ...) {
  check_fit(object)
  i <- object$best
  out <- list(call = object$call, family = object$family, map = object$map,
              n = object$n, lambda = object$lambda_best, deviance = object$deviance[i],
              null.deviance = object$null.deviance, df = glm_effective_df(object),
              iterations = object$iterations[i], converged = object$converged[i],
              cvm = if (is.null(object$cvm)) NULL else object$cvm[i],
              cvsd = if (is.null(object$cvsd)) NULL else object$cvsd[i],
              folds = object$folds, holdout = object$holdout,
              measure = glm_measure_label(object),
              accuracy = NULL, confusion = NULL, relevance = rff_relevance(object),
              lengthscale_search = object$lengthscale_search)
  if (!is.null(object$levels) && is.null(object$linear.predictors) && !is.null(object$training)) {
    out$confusion <- object$training$confusion
    out$accuracy <- object$training$accuracy
  } else if (!is.null(object$levels)) {
    cls <- glm_class(object$family, object$linear.predictors)
    truth <- if (object$family == "binomial") object$y + 1L else object$y
    lev <- object$levels
    out$confusion <- table(predicted = factor(lev[cls], levels = lev),
                           observed = factor(lev[truth], levels = lev))
    out$accuracy <- glm_accuracy(object)
  }
  out$aic <- out$deviance + 2 * out$df + 2 * (if (!is.null(object$training)) {
    object$training$sat_ll
  } else saturated_loss_ll(
    object$family, object$y,
    if (is.null(object$prior.weights)) rep(1, length(object$y)) else object$prior.weights))
  class(out) <- "summary.rff_glm"
  out
}

#' @export
print.summary.rff_glm <- function(x, digits = max(3L, getOption("digits") - 3L), ...) {
  cat_fit_header(sprintf("Random-feature %s regression on %s rows",
                         glm_family_label(x$family), format(x$n, big.mark = ",")),
                 x$call, x$map)
  cat(sprintf("  lambda = %s%s\n", fmt(x$lambda, digits),
              if (is.null(x$cvm)) "" else
                glm_criterion_text(x$holdout, x$folds, x$measure, x$cvm, x$cvsd, digits)))
  cat(sprintf("\nDeviance: %s on %s effective degrees of freedom\n", fmt(x$deviance, digits),
              fmt(x$df, digits)))
  cat(sprintf("Null deviance: %s (%s%% explained); AIC: %s\n", fmt(x$null.deviance, digits),
              fmt(100 * (1 - x$deviance / x$null.deviance), digits), fmt(x$aic, digits)))
  cat(sprintf("Solver: %d L-BFGS iterations at this lambda%s\n", x$iterations,
              if (isTRUE(x$converged)) "" else " (not converged)"))
  cat_relevance(x$relevance, digits)
  if (!is.null(x$confusion)) {
    cat(sprintf("\nTraining accuracy: %s\n", fmt(x$accuracy, digits)))
    print(x$confusion)
  }
  invisible(x)
}

#' @rdname predict.rff_glm
#' @export
plot.rff_glm <- function(x, y, type = c("criterion", "relevance"), ...) {
  type <- if (identical(type, c("criterion", "relevance"))) "criterion" else
    check_string(type, "type", c("criterion", "relevance"))
  if (type == "relevance") return(plot_relevance(x, ...))
  lam <- x$lambda
  o <- order(lam)
  if (!is.null(x$cvm)) {
    lo <- x$cvm - x$cvsd
    hi <- x$cvm + x$cvsd
    graphics::plot(lam[o], x$cvm[o], log = "x", type = "b", pch = 20,
                   ylim = range(x$cvm, lo, hi, finite = TRUE), xlab = expression(lambda),
                   ylab = glm_criterion_label(x),
                   main = if (is.null(x$holdout)) sprintf("%d-fold cross-validation", x$folds)
                          else sprintf("Validation on %s held-out rows",
                                       format(x$holdout, big.mark = ",")), ...)
    graphics::segments(lam[o], lo[o], lam[o], hi[o], col = "grey50")
    graphics::points(x$lambda_best, x$cvm[x$best], pch = 4, cex = 2)
  } else {
    graphics::plot(lam[o], x$deviance[o] / x$n, log = if (length(lam) > 1L) "x" else "",
                   type = "b", pch = 20, xlab = expression(lambda),
                   ylab = "training deviance per row", main = "Deviance path", ...)
  }
  graphics::abline(v = x$lambda_best, lty = 2)
  invisible(x)
}

# Fits of rff_glm_apply() keep no training rows: what needs them is an error.
no_training_rows <- function(object) {
  if (is.null(object$linear.predictors) && !is.null(object$training)) {
    rff_abort("newdata", paste0(
      "this fit from rff_glm_apply() keeps no training rows (they stayed on the workers); ",
      "give `newdata`"))
  }
}
