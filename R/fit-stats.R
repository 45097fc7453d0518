# Layer 8 (methods): the likelihood generics of stats on fits: deviance(),
# logLik() (and so AIC() and BIC()), vcov() of ridge coefficients, and
# anova(), which has no test to offer for penalized random-feature fits.

#' Deviance, log-likelihood, AIC, BIC and coefficient covariance of fits
#'
#' **Ridge fits.** `deviance()` is the (weighted) residual sum of squares at
#' `lambda_best`, as for [stats::lm()] (one value per response). `logLik()`
#' is the Gaussian log-likelihood at the maximum-likelihood noise variance
#' RSS / n, computed as [stats::logLik.lm()] does (with weights, rows of
#' weight zero left out and sum(log(w)) / 2 added), and its `df` is the
#' effective degrees of freedom at `lambda_best` (which counts the
#' intercept) plus one for the noise variance. So [stats::AIC()] and
#' [stats::BIC()] compare ridge fits, and a ridge fit with
#' [stats::lm()] on the same response, on one scale. Fits of several
#' responses have no joint likelihood here (`logLik()` is an error, as for
#' multiple-response `lm()`); weighted fits from [rff_stats()] neither
#' (their weights are not kept).
#'
#' `vcov()` is the posterior covariance of the intercept and the
#' coefficients that the standard errors of [predict.rff_ridge()] come from:
#' sigma^2 M^-1 for the coefficients, M = Zc'WZc + W lambda I, with
#' sigma^2 = RSS / (n - df), and the intercept's rows from its flat prior,
#' so that for a new row with features z, `c(1, z) %*% vcov(fit) %*% c(1, z)`
#' is `predict(fit, x, se.fit = TRUE)$se.fit^2`. Its names are those of
#' [coef()]. One response, at `lambda_best`.
#'
#' **GLM fits.** `deviance()` is the deviance at `lambda_best` (the path is
#' in `fit$deviance`); `logLik()` is documented with [predict.rff_glm()].
#' **Cross-validated fits** answer for their refit on all rows.
#'
#' **anova()** is an `rff_error`: fits on random features are penalized,
#' and two of them are nested only when they share one map, so the
#' F and chi-squared tests of [stats::anova()] do not apply. Compare fits by
#' [stats::AIC()] or [stats::BIC()], or by held-out error with [rff_cv()].
#'
#' @param object A fit from [rff_ridge()], [rff_glm()] or [rff_cv()].
#' @param ... Nothing for `deviance()`, `logLik()` and `vcov()`; other fits
#'   for `anova()`.
#' @return `deviance()`: a number (a named vector for several responses).
#'   `logLik()`: an object of class `"logLik"` with attributes `df` and
#'   `nobs`. `vcov()`: a (D + 1) x (D + 1) matrix ((D x D) without
#'   intercept).
#' @examples
#' fit <- rff_ridge(mpg ~ wt + hp, data = mtcars, D = 40)
#' deviance(fit)
#' logLik(fit)
#' c(AIC(fit), BIC(fit), AIC(lm(mpg ~ wt + hp, data = mtcars)))
#' dim(vcov(fit))
#' @name logLik.rff_ridge
#' @importFrom stats deviance vcov anova
#' @export
logLik.rff_ridge <- function(object, ...) {
  check_no_dots(list(...))
  q <- if (is.matrix(object$rss)) ncol(object$rss) else 1L
  if (q > 1L) {
    rff_abort("object", sprintf("`object` is a fit of %d responses: logLik() is defined for one response", q))
  }
  i <- object$best
  df <- object$df[i] + 1
  w <- object$prior.weights
  if (!is.null(w)) {
    r <- object$residuals[w > 0]
    w <- w[w > 0]
    N <- length(r)
    ll <- 0.5 * (sum(log(w)) - N * (log(2 * pi) + 1 - log(N) + log(sum(w * r^2))))
  } else {
    if (isTRUE(object$weighted) || (is.null(object$weighted) && !is.null(object$normal) &&
                                    abs(object$normal$w - object$n) > 1e-8 * object$n)) {
      rff_abort("object", "`object` is a weighted fit that keeps no weights (from statistics, or from an older version of rff): its log-likelihood needs them")
    }
    N <- object$n
    ll <- -N / 2 * (log(2 * pi) + 1 - log(N) + log(object$rss[i]))
  }
  structure(ll, df = df, nobs = N, class = "logLik")
}

#' @rdname logLik.rff_ridge
#' @export
deviance.rff_ridge <- function(object, ...) {
  check_no_dots(list(...))
  if (is.matrix(object$rss)) object$rss[object$best, ] else object$rss[object$best]
}

#' @rdname logLik.rff_ridge
#' @export
deviance.rff_glm <- function(object, ...) {
  check_no_dots(list(...))
  object$deviance[object$best]
}

#' @rdname logLik.rff_ridge
#' @export
deviance.rff_cv <- function(object, ...) deviance(object$fit, ...)

#' @rdname logLik.rff_ridge
#' @export
logLik.rff_cv <- function(object, ...) stats::logLik(object$fit, ...)

#' @rdname logLik.rff_ridge
#' @export
vcov.rff_ridge <- function(object, ...) {
  check_no_dots(list(...))
  if (is.matrix(object$rss) && ncol(object$rss) > 1L) {
    rff_abort("object", "`object` is a fit of several responses: vcov() is given for one response")
  }
  sys <- object$normal
  if (is.null(sys)) {
    rff_abort("object", "`object` (made by an older version of rff) keeps no normal equations; refit it for vcov()")
  }
  i <- object$best
  rdf <- object$n - object$df[i]
  if (!(rdf > 0)) {
    rff_abort("object", sprintf("`object` has no residual degrees of freedom (n = %d, df = %s): no noise variance to estimate",
                                object$n, format(object$df[i], digits = 4)))
  }
  sigma2 <- object$rss[i] / rdf
  M <- normal_matrix(sys)
  diag(M) <- diag(M) + sys$w * object$lambda[i]
  V <- sigma2 * chol2inv(tryCatch(chol(M), error = function(e) singular_abort(object$lambda[i])))
  nm <- names(stats::coef(object))
  if (!is.null(sys$zbar)) {
    vz <- drop(V %*% sys$zbar)
    V <- rbind(c(sigma2 / sys$w + sum(sys$zbar * vz), -vz), cbind(-vz, V))
  }
  dimnames(V) <- list(nm, nm)
  V
}

#' @rdname logLik.rff_ridge
#' @export
vcov.rff_cv <- function(object, ...) stats::vcov(object$fit, ...)

#' @rdname logLik.rff_ridge
#' @export
anova.rff_fit <- function(object, ...) {
  rff_abort("object", "anova() has no test for `object`: random-feature fits are penalized, and two are nested only when they share one map; compare fits with AIC(), BIC() or the held-out error of rff_cv()")
}

#' @rdname logLik.rff_ridge
#' @export
anova.rff_cv <- function(object, ...) anova.rff_fit(object, ...)
