# Layer 8 (methods): the methods of "rff_ridge" fits: predictions,
# coefficients, fitted values, printing, summaries and the plot of the
# criterion that chose lambda.

#' Predictions, coefficients and fitted values of a random-feature ridge fit
#'
#' `predict()` featurizes `newdata` through the fit's map in blocks (never
#' the whole feature matrix) and returns z(x)'beta + intercept (+ offset),
#' after the fit's standardization of the inputs. `plot()` draws the
#' criterion that chose `lambda_best` (the leave-one-out error, or GCV for
#' fits with `criterion = "gcv"` and fits from statistics) against lambda,
#' with `lambda_best` marked.
#'
#' **lambda.** Any values >= 0. Values of the fitted path use the stored
#' coefficients; any other value is solved exactly from the normal
#' equations the fit keeps (one Cholesky factorization per call for one
#' value, one eigendecomposition for several), so
#' `predict(fit, x, lambda = l)` equals `predict(rff_ridge(..., lambda = l), x)`
#' with the same map. `NULL` means `lambda_best`.
#'
#' **Standard errors and intervals** come from the Gaussian-process view of
#' ridge regression on random features: with the prior
#' beta ~ N(0, sigma^2 / (n lambda) I) (the intercept flat) and noise
#' variance sigma^2, the posterior of beta is
#' N(beta_hat, sigma^2 M^-1) with M = Zc'Zc + n lambda I (Zc: the centred
#' features; with weights, Zc'WZc and the total weight in place of n), so
#' the posterior variance of f(x) = a + z(x)'beta is
#'
#' sigma^2 ((z(x) - zbar)' M^-1 (z(x) - zbar) + 1/n)
#'
#' (without intercept: sigma^2 z(x)' M^-1 z(x)). As D grows, z(x)'z(y) tends
#' to the kernel k(x, y), and this tends to the exact Gaussian-process
#' posterior variance (sigma^2 / (n lambda)) (k(x, x) - k_x'(K + n lambda I)^-1 k_x)
#' of the kernel (centred, with an intercept). sigma^2 is estimated
#' by RSS / (n - df), df the effective degrees of freedom at that lambda.
#' `se.fit` is the square root of that variance; `interval = "confidence"`
#' is fit -/+ t * se.fit and `"prediction"` is fit -/+ t * sqrt(se.fit^2 +
#' sigma^2) (a new observation of unit weight), t the `(1 + level) / 2`
#' quantile of the t distribution with n - df degrees of freedom, as
#' [stats::predict.lm()] does. They are given for one response at one
#' lambda.
#'
#' **Missing values in newdata.** Rows with missing values get `NA`
#' predictions (`na.action = na.pass`, the default, or `na.exclude`);
#' `na.omit` drops them; `na.fail` makes them an error.
#'
#' **Fits read from files.** `predict()` checks the map, path and
#' standardization a fit keeps (a damaged fit is an [rff_error] naming
#' `object`). A fit made with a formula keeps its terms, and `predict()`
#' evaluates them in `newdata`, `offset()` expressions included, as
#' [stats::predict.lm()] evaluates an `lm` fit's terms: like those, a fit
#' from an `.rds` file of an untrusted source can run any code when used, so
#' such files should not be loaded.
#'
#' **Arguments of other packages.** Any argument the method does not take is
#' an `rff_error`, whose message names the right one for those of glmnet
#' and lm: `newx` is `newdata`, `s` is `lambda`.
#'
#' @param object,x A fit from [rff_ridge()].
#' @param newdata New inputs: for a fit made with a formula, a data frame
#'   with the variables of the formula; otherwise a matrix, data frame or
#'   vector with the columns of `x` (matched by name when both have column
#'   names). Missing, predictions at `lambda_best` for the training rows
#'   (the fitted values).
#' @param lambda Values >= 0; `NULL` for `lambda_best`.
#' @param type `"response"` (the default) or `"link"`, which are the same
#'   for ridge regression; `"class"` is an error (a classifier's type).
#' @param se.fit Return standard errors too, as a list with `fit`,
#'   `se.fit`, `df` (residual degrees of freedom) and `residual.scale`.
#' @param interval `"none"`, `"confidence"` or `"prediction"`: a matrix
#'   with columns `fit`, `lwr` and `upr`.
#' @param level Coverage of the intervals.
#' @param na.action What to do with rows of `newdata` that have missing
#'   values: a function such as [stats::na.pass] (default: `NA` predictions),
#'   [stats::na.exclude], [stats::na.omit] or [stats::na.fail].
#' @param newoffset The offset of the new rows, for a fit of the default
#'   method made with `offset` (a formula fit takes its offset from
#'   `newdata`).
#' @param new_levels What a prediction does with a row whose factor has a
#'   level that no training row had (a rare category that fell in the test
#'   part, a level with no rows in training): `"none"` (the default, or
#'   `getOption("rff.new_levels")`) codes it as none of the known levels,
#'   `"na"` predicts `NA` for the row, both with one warning of class
#'   `"rff_new_levels"` naming each factor, its new levels and the number of
#'   rows; `"error"` refuses the whole of `newdata` with an `rff_error`, as
#'   [stats::predict.lm()] does. "None of the known levels" is the point at
#'   equal distance from the coding of every training level: with the
#'   default treatment contrasts 1/2 on each dummy of that factor (all zeros
#'   would be the first level), where a term codes the factor by indicators
#'   of all its levels all of them zero, and for an ordered factor ranked by
#'   the fit the middle rank. The kernel then sees the row as far from each
#'   known level as any two of them are from each other at most, and no
#'   nearer to one than to another; ranger sends such a row down one side of
#'   each split instead.
#' @param chunk_size,threads As for [rff_ridge()].
#' @param digits Significant digits to print.
#' @param ... Nothing: any argument here is an error.
#' @return `predict()`: for one response, a vector (one lambda) or a matrix
#'   with one column per lambda; for q responses, an n x q matrix (one
#'   lambda) or an n x q x k array; with `interval`, a matrix with columns
#'   `fit`, `lwr`, `upr`; with `se.fit = TRUE`, a list. `coef()`: the
#'   intercept (named `"(Intercept)"`, only when fitted) and the D
#'   coefficients (of the standardized inputs' features), as a vector, or a
#'   matrix with one column per lambda (per response for q > 1).
#'   `fitted()`, `residuals()`: at `lambda_best`, padded by the fit's
#'   `na.action` as for [stats::lm()]; an error for fits from statistics.
#' @examples
#' set.seed(2)
#' x <- matrix(rnorm(600), 300, 2)
#' y <- x[, 1]^2 + rnorm(300, sd = 0.2)
#' fit <- rff_ridge(x, y, D = 100)
#' head(predict(fit, x[1:5, ]))
#' predict(fit, x[1:2, ], lambda = c(fit$lambda[1], 1e-3))
#' predict(fit, x[1:3, ], interval = "prediction")
#' head(coef(fit))
#' head(residuals(fit))
#' nobs(fit)
#' @name predict.rff_ridge
#' @export
predict.rff_ridge <- function(object, newdata, lambda = NULL, type = c("response", "link"),
                              se.fit = FALSE, interval = c("none", "confidence", "prediction"),
                              level = 0.95, na.action = stats::na.pass, newoffset = NULL,
                              new_levels = getOption("rff.new_levels", "none"),
                              chunk_size = NULL, threads = NULL, ...) {
  check_predict_call(sys.call(), "rff_ridge", names(formals(sys.function())))
  type <- check_predict_type(type)
  se.fit <- check_flag(se.fit, "se.fit")
  interval <- check_interval(interval)
  level <- check_level(level)
  if (missing(newdata) || is.null(newdata)) {
    if (!se.fit && interval == "none" &&
        (is.null(lambda) || identical(path_index(object$lambda, check_lambda(lambda)), object$best))) {
      return(stats::fitted(object))
    }
    rff_abort("newdata", "`newdata` is needed for predictions at a `lambda` other than `lambda_best` and for standard errors and intervals")
  }
  predict_model(object, newdata, lambda, se.fit, interval, level, na.action, newoffset,
                chunk_size, threads, new_levels = new_levels)
}

#' @rdname predict.rff_ridge
#' @export
coef.rff_ridge <- function(object, lambda = NULL, ...) {
  sol <- coef_at(object, lambda)
  coef_table(sol$beta, sol$intercept, sol$lambda, object$response, object$has_intercept)
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
nobs.rff_fit <- function(object, ...) object$n

# Fits saved by versions before the parent class "rff_fit" have the class
# of their family alone.
#' @rdname predict.rff_ridge
#' @export
nobs.rff_ridge <- function(object, ...) nobs.rff_fit(object, ...)
#' @rdname predict.rff_glm
#' @export
nobs.rff_glm <- function(object, ...) nobs.rff_fit(object, ...)

#' @rdname predict.rff_ridge
#' @export
print.rff_ridge <- function(x, digits = max(3L, getOption("digits") - 3L), ...) {
  cat_fit_header("Random-feature ridge regression", x$call, x$map)
  cat_model_lines(x, digits)
  cat(sprintf("  n = %s%s%s\n", format(x$n, big.mark = ","),
              if (isTRUE(x$weighted)) " (weighted)" else "",
              if (x$has_intercept) ", intercept" else ", no intercept"))
  i <- x$best
  g <- if (is.matrix(x$gcv)) sum(x$gcv[i, ]) else x$gcv[i]
  loo <- if (is.null(x$loo)) NULL else if (is.matrix(x$loo)) sum(x$loo[i, ]) else x$loo[i]
  cat(sprintf("  %s, df = %s, %sGCV = %s\n", lambda_line(x, digits),
              fmt(x$df[i], digits),
              if (is.null(loo)) "" else sprintf("LOO MSE = %s, ", fmt(loo, digits)),
              fmt(g, digits)))
  invisible(x)
}

#' @rdname predict.rff_ridge
#' @export
summary.rff_ridge <- function(object, ...) {
  i <- object$best
  rss <- if (is.matrix(object$rss)) object$rss[i, ] else object$rss[i]
  # in the weights given (the fit divided them by their largest)
  rss <- rss * fit_weight_scale(object)
  out <- list(call = object$call, map = object$map, n = object$n,
              lambda = object$lambda, lambda_best = object$lambda_best,
              lambda_given = object$lambda_given, criterion = object$criterion,
              df = object$df[i], rss = rss,
              gcv = if (is.matrix(object$gcv)) object$gcv[i, ] else object$gcv[i],
              sigma = sqrt(rss / max(object$n - object$df[i], 1)),
              r.squared = 1 - rss / (object$tss * fit_weight_scale(object)),
              residuals = object$residuals, has_intercept = object$has_intercept,
              standardize = object$standardize, weighted = object$weighted,
              has_offset = object$has_offset,
              lengthscale_search = object$lengthscale_search,
              relevance = rff_relevance(object),
              path = data.frame(lambda = object$lambda, df = object$df,
                                gcv = if (is.matrix(object$gcv)) rowSums(object$gcv) else object$gcv))
  class(out) <- "summary.rff_ridge"
  out
}

#' @export
print.summary.rff_ridge <- function(x, digits = max(3L, getOption("digits") - 3L), ...) {
  cat_fit_header("Random-feature ridge regression", x$call, x$map)
  cat_model_lines(x, digits)
  if (!is.null(x$residuals)) {
    cat("\nResiduals:\n")
    r <- as.matrix(x$residuals)
    qs <- t(apply(r, 2L, stats::quantile, names = FALSE))
    dimnames(qs) <- list(if (ncol(r) > 1L) colnames(r) else rep("", nrow(qs)),
                         c("Min", "1Q", "Median", "3Q", "Max"))
    print(signif(qs, digits), digits = digits)
  }
  if (!is.null(x$lengthscale_search)) {
    s <- x$lengthscale_search
    cat(sprintf("\nLengthscale (auto: %s over multiples of the median heuristic %s%s):\n",
                s$criterion, fmt(s$median, digits),
                if (s$rows < x$n) sprintf(", scored on %s rows", format(s$rows, big.mark = ","))
                else ""))
    tab <- s$table
    tab$chosen <- ifelse(seq_len(nrow(tab)) == s$best, "*", "")
    tab[] <- lapply(tab, function(v) if (is.numeric(v)) fmt(v, digits) else v)
    print(tab, row.names = FALSE, right = TRUE)
  }
  cat_relevance(x$relevance, digits)
  cat(sprintf("\nn = %s%s; %s; effective df = %s%s\n",
              format(x$n, big.mark = ","), if (isTRUE(x$weighted)) " (weighted)" else "",
              lambda_line(x, digits), fmt(x$df, digits),
              if (x$has_intercept) " (with intercept)" else ""))
  resp <- if (length(x$rss) > 1L) names(x$rss) else NULL
  for (k in seq_along(x$rss)) {
    cat(sprintf("%sResidual standard error: %s, R-squared: %s, GCV: %s\n",
                if (is.null(resp)) "" else paste0(resp[k], ": "),
                fmt(x$sigma[k], digits), fmt(x$r.squared[k], digits), fmt(x$gcv[k], digits)))
  }
  invisible(x)
}

#' @rdname predict.rff_ridge
#' @param y Unused.
#' @param type For `plot()`: `"criterion"` (default: the criterion that
#'   chose lambda along the path) or `"relevance"` (a dot chart of
#'   [rff_relevance()], most relevant input at the top).
#' @export
plot.rff_ridge <- function(x, y, type = c("criterion", "relevance"), ...) {
  type <- if (identical(type, c("criterion", "relevance"))) "criterion" else
    check_string(type, "type", c("criterion", "relevance"))
  if (type == "relevance") return(plot_relevance(x, ...))
  cc <- ridge_criterion_curve(x)
  o <- order(x$lambda)
  ok <- is.finite(cc$value[o])
  graphics::plot(x$lambda[o][ok], cc$value[o][ok], log = "x", type = "b", pch = 20,
                 xlab = expression(lambda), ylab = cc$label, main = cc$main, ...)
  graphics::abline(v = x$lambda_best, lty = 2)
  invisible(x)
}

# The criterion that chose lambda_best along the path (summed over
# responses): the exact leave-one-out error when the fit chose by it, else GCV.
ridge_criterion_curve <- function(x) {
  total <- function(v) if (is.matrix(v)) rowSums(v) else v
  if (identical(x$criterion, "LOO") && !is.null(x$loo)) {
    return(list(value = total(x$loo), label = "leave-one-out MSE",
                main = "Leave-one-out cross-validation"))
  }
  list(value = total(x$gcv), label = "GCV", main = "Generalized cross-validation")
}
