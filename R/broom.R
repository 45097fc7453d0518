# Layer 9 (integrations): broom's tidy(), glance() and augment() (generics
# of the generics package, registered when it is loaded) for ridge, GLM and
# cross-validated fits.

#' Tidy, glance at and augment random-feature fits (broom)
#'
#' Methods for the generics [generics::tidy()], [generics::glance()] and
#' [generics::augment()] (those broom re-exports), registered when the
#' generics package is loaded; rff does not depend on it. Results are
#' tibbles (data frames when tibble is not installed).
#'
#' `tidy()` of a ridge or GLM fit is its coefficients at `lambda_best`
#' (`term`, `estimate`; a `response` or `class` column for several
#' responses or the multinomial family; `std.error` for ridge fits of one
#' response: the square roots of the diagonal of [vcov()][logLik.rff_ridge]).
#' The terms are the intercept and the D random features, `z1`, ..., `zD`.
#' `tidy()` of an [rff_cv()] result is its cross-validation path, as broom
#' gives it for `cv.glmnet`: one row per lambda (and lengthscale) with
#' `lambda`, `lengthscale`, `estimate` (the CV measure), `std.error`,
#' `conf.low` and `conf.high` (estimate -/+ std.error).
#'
#' `glance()` is one row: `nobs`, `df` (effective degrees of freedom),
#' `lambda`, `lengthscale` (a number, or the values joined by commas for one
#' lengthscale per input), `criterion` (what chose lambda), `D`, `kernel`
#' and, for ridge fits, `sigma`, `r.squared`, `deviance`, `df.residual`,
#' `logLik`, `AIC`, `BIC` (`NA` for several responses); for GLMs `family`,
#' `deviance`, `null.deviance`, `logLik`, `AIC`, `BIC` and, for classifiers,
#' `accuracy` (on the training rows); for cross-validations `lambda.min`,
#' `lambda.1se`, `lengthscale`, `estimate` and `std.error` at lambda_min,
#' `measure`, `folds`, `nobs`.
#'
#' `augment()` adds columns to `data` (the training rows, in their order,
#' with rows the fit dropped for missing values kept as `NA`) or to
#' `newdata`: `.fitted` and `.resid` (the residual needs the response
#' in `newdata`: for formula fits, its variable), and `.se.fit` when
#' `se_fit = TRUE` (ridge fits). A cross-validation's result augments as
#' its refit, at `lambda_min`. For GLMs `.fitted` is on the scale of
#' `type.predict` (`"link"` by default, as broom's `augment.glm()`), `.resid`
#' is the deviance residual (`type.residuals = "response"`: y - mu), and
#' classifiers also get `.pred_class` and one `.pred_<level>` column of
#' probabilities per class (the multinomial family has no `.fitted` or
#' `.resid`).
#'
#' @param x A fit from [rff_ridge()], [rff_glm()] or [rff_cv()].
#' @param data The data the model was fitted on (for a formula fit, the
#'   data frame; else a matrix or data frame of the inputs).
#' @param newdata New rows, as for [predict()]; used instead of `data`.
#' @param se_fit Add `.se.fit` (ridge fits).
#' @param type.predict `"link"` or `"response"`, the scale of a GLM's
#'   `.fitted`.
#' @param type.residuals `"deviance"` or `"response"`, a GLM's `.resid`.
#' @param ... Nothing: any argument here is an error.
#' @return A tibble (or data frame).
#' @examples
#' if (requireNamespace("generics", quietly = TRUE)) {
#'   fit <- rff_ridge(mpg ~ wt + hp, data = mtcars, D = 40)
#'   generics::glance(fit)
#'   head(generics::tidy(fit))
#'   head(generics::augment(fit, data = mtcars))
#'   cv <- rff_cv(mpg ~ wt + hp, data = mtcars, folds = 4, D = 40, nlambda = 10)
#'   head(generics::tidy(cv))
#' }
#' @name tidy.rff_ridge
NULL

# A tidy table: a tibble when tibble is installed.
tidy_table <- function(df) {
  rownames(df) <- NULL
  if (has_package("tibble")) tibble::as_tibble(df) else df
}

# The lengthscale as one cell: a number, or the values joined by commas.
lengthscale_cell <- function(l) {
  if (length(l) == 1L) l else paste(signif(l, 4), collapse = ",")
}

# The coefficients of a fit at lambda_best in long form.
coef_long <- function(B, a0, group, group_name, intercept) {
  D <- nrow(B)
  terms <- c(if (intercept) "(Intercept)", paste0("z", seq_len(D)))
  est <- if (intercept) rbind(a0, B) else B
  q <- ncol(est)
  out <- data.frame(term = rep(terms, q), estimate = as.vector(est), stringsAsFactors = FALSE)
  if (q > 1L) {
    out[[group_name]] <- rep(if (is.null(group)) seq_len(q) else group, each = length(terms))
    out <- out[c(group_name, "term", "estimate")]
  }
  out
}

#' @rdname tidy.rff_ridge
#' @usage \method{tidy}{rff_ridge}(x, ...)
#' @exportS3Method generics::tidy
tidy.rff_ridge <- function(x, ...) {
  check_no_dots(list(...))
  check_fit(x, "x")
  sol <- coef_at(x, NULL)
  B <- matrix(sol$beta[, , 1L], nrow = dim(sol$beta)[1L])
  out <- coef_long(B, sol$intercept[, 1L], x$response, "response", x$has_intercept)
  if (ncol(B) == 1L && !is.null(x$normal) && x$n > x$df[x$best]) {
    out$std.error <- sqrt(diag(vcov.rff_ridge(x)))
  }
  tidy_table(out)
}

#' @rdname tidy.rff_ridge
#' @usage \method{tidy}{rff_glm}(x, ...)
#' @exportS3Method generics::tidy
tidy.rff_glm <- function(x, ...) {
  check_no_dots(list(...))
  check_fit(x, "x")
  B <- matrix(coef_array(x)[, , x$best], nrow = x$map$D)
  a0 <- intercept_matrix(x)[, x$best]
  tidy_table(coef_long(B, a0, x$levels, "class", x$has_intercept))
}

#' @rdname tidy.rff_ridge
#' @usage \method{tidy}{rff_cv}(x, ...)
#' @exportS3Method generics::tidy
tidy.rff_cv <- function(x, ...) {
  check_no_dots(list(...))
  L <- length(x$lambda)
  ls <- lapply(x$lengthscale, lengthscale_cell)
  ls <- if (all(lengths(x$lengthscale) == 1L)) unlist(ls) else vapply(ls, as.character, "")
  est <- as.vector(x$cvm)
  se <- as.vector(x$cvsd)
  tidy_table(data.frame(lambda = rep(x$lambda, ncol(x$cvm)),
                        lengthscale = rep(ls, each = L), estimate = est, std.error = se,
                        conf.low = est - se, conf.high = est + se,
                        stringsAsFactors = FALSE))
}

# The columns every glance() of a fit has.
glance_common <- function(x, criterion) {
  data.frame(nobs = x$n, df = x$df_best, lambda = x$lambda_best,
             lengthscale = lengthscale_cell(x$map$lengthscale), criterion = criterion,
             D = x$map$D, kernel = x$map$kernel, stringsAsFactors = FALSE)
}

# logLik, AIC and BIC as glance() columns (NA where logLik() is an error).
glance_likelihood <- function(x) {
  ll <- tryCatch(stats::logLik(x), rff_error = function(e) NULL)
  if (is.null(ll)) return(data.frame(logLik = NA_real_, AIC = NA_real_, BIC = NA_real_))
  data.frame(logLik = as.numeric(ll), AIC = stats::AIC(ll), BIC = stats::BIC(ll))
}

#' @rdname tidy.rff_ridge
#' @usage \method{glance}{rff_ridge}(x, ...)
#' @exportS3Method generics::glance
glance.rff_ridge <- function(x, ...) {
  check_no_dots(list(...))
  s <- summary.rff_ridge(x)
  one <- length(s$rss) == 1L
  x$df_best <- s$df
  crit <- if (length(x$lambda) == 1L) "given" else if (is.null(x$criterion)) "GCV" else x$criterion
  out <- cbind(glance_common(x, crit),
               data.frame(sigma = if (one) s$sigma else NA_real_,
                          r.squared = if (one) s$r.squared else NA_real_,
                          deviance = sum(s$rss), df.residual = x$n - s$df),
               glance_likelihood(x))
  tidy_table(out)
}

#' @rdname tidy.rff_ridge
#' @usage \method{glance}{rff_glm}(x, ...)
#' @exportS3Method generics::glance
glance.rff_glm <- function(x, ...) {
  check_no_dots(list(...))
  ll <- stats::logLik(x)
  x$df_best <- attr(ll, "df")
  crit <- if (is.null(x$cvm)) "given" else glm_criterion_label(x)
  out <- cbind(glance_common(x, crit),
               data.frame(family = x$family, deviance = x$deviance[x$best],
                          null.deviance = x$null.deviance, logLik = as.numeric(ll),
                          AIC = stats::AIC(ll), BIC = stats::BIC(ll), stringsAsFactors = FALSE))
  if (!is.null(x$levels)) out$accuracy <- glm_accuracy(x)
  tidy_table(out)
}

#' @rdname tidy.rff_ridge
#' @usage \method{glance}{rff_cv}(x, ...)
#' @exportS3Method generics::glance
glance.rff_cv <- function(x, ...) {
  check_no_dots(list(...))
  i <- x$best
  tidy_table(data.frame(lambda.min = x$lambda_min, lambda.1se = x$lambda_1se,
                        lengthscale = lengthscale_cell(x$lengthscale_best),
                        estimate = x$cvm[i[1L], i[2L]], std.error = x$cvsd[i[1L], i[2L]],
                        measure = cv_measure_label(x), folds = max(x$foldid),
                        nobs = x$fit$n, stringsAsFactors = FALSE))
}

# The data augment() adds to, and the response of newdata (NULL if absent).
augment_rows <- function(x, data, newdata) {
  if (!is.null(newdata)) {
    y <- NULL
    tt <- x$terms
    if (!is.null(tt) && attr(tt, "response") == 1L && is.data.frame(newdata)) {
      y <- tryCatch(eval(attr(tt, "variables")[[2L]], newdata, environment(tt)),
                    error = function(e) NULL)
    }
    return(list(data = as.data.frame(newdata), new = TRUE, y = y))
  }
  if (is.null(data)) {
    rff_abort("data", "`data` (the rows the model was fitted on) or `newdata` is required: fits do not keep their data")
  }
  list(data = as.data.frame(data), new = FALSE, y = NULL)
}

# Values of the rows fitted, padded with NA at the rows the fit's na.action
# dropped (whatever that was, as na.exclude does), checked against data.
augment_training <- function(x, v, data) {
  na <- x$na.action
  if (!is.null(na)) {
    class(na) <- "exclude"
    v <- stats::napredict(na, v)
  }
  if (NROW(v) != nrow(data)) {
    rff_abort("data", sprintf("`data` has %d rows; the fit was made on %d (with the rows its na.action dropped): give the training data or use `newdata`",
                              nrow(data), NROW(v)))
  }
  v
}

#' @rdname tidy.rff_ridge
#' @usage \method{augment}{rff_ridge}(x, data = NULL, newdata = NULL, se_fit = FALSE, ...)
#' @exportS3Method generics::augment
augment.rff_ridge <- function(x, data = NULL, newdata = NULL, se_fit = FALSE, ...) {
  check_no_dots(list(...))
  se_fit <- check_flag(se_fit, "se_fit")
  if (!is.null(x$response) || is.matrix(x$rss)) {
    rff_abort("x", "`x` is a fit of several responses: augment() adds one `.fitted` column")
  }
  a <- augment_rows(x, data, newdata)
  out <- a$data
  if (a$new) {
    p <- predict.rff_ridge(x, newdata, se.fit = se_fit)
    out$.fitted <- unname(if (se_fit) p$fit else p)
    if (!is.null(a$y)) out$.resid <- a$y - out$.fitted
    if (se_fit) out$.se.fit <- unname(p$se.fit)
    return(tidy_table(out))
  }
  if (is.null(x$fitted.values)) no_data_abort()
  out$.fitted <- unname(augment_training(x, x$fitted.values, out))
  out$.resid <- unname(augment_training(x, x$residuals, out))
  if (se_fit) out$.se.fit <- unname(predict.rff_ridge(x, data, se.fit = TRUE)$se.fit)
  tidy_table(out)
}

#' @rdname tidy.rff_ridge
#' @usage \method{augment}{rff_glm}(x, data = NULL, newdata = NULL,
#'   type.predict = c("link", "response"),
#'   type.residuals = c("deviance", "response"), ...)
#' @exportS3Method generics::augment
augment.rff_glm <- function(x, data = NULL, newdata = NULL,
                            type.predict = c("link", "response"),
                            type.residuals = c("deviance", "response"), ...) {
  check_no_dots(list(...))
  type.predict <- if (identical(type.predict, c("link", "response"))) "link" else
    check_string(type.predict, "type.predict", c("link", "response"))
  type.residuals <- if (identical(type.residuals, c("deviance", "response"))) "deviance" else
    check_string(type.residuals, "type.residuals", c("deviance", "response"))
  a <- augment_rows(x, data, newdata)
  out <- a$data
  pad <- function(v) if (a$new) v else augment_training(x, v, out)
  nd <- if (a$new) newdata else NULL
  eta <- pad(predict.rff_glm(x, nd, type = "link"))
  if (x$family != "multinomial") {
    mu <- if (x$family == "binomial") stats::plogis(eta) else exp(eta)
    out$.fitted <- unname(if (type.predict == "link") eta else mu)
    y <- if (a$new) glm_new_response(x, a$y) else pad(x$y)
    if (!is.null(y)) {
      r <- y - mu
      if (type.residuals == "deviance") {
        ok <- !is.na(y) & !is.na(eta)
        d <- rep(NA_real_, length(y))
        d[ok] <- glm_row_deviance(x$family, y[ok], matrix(eta[ok], ncol = 1L))
        r <- sign(r) * sqrt(pmax(d, 0))
      }
      out$.resid <- unname(r)
    }
  }
  if (!is.null(x$levels)) {
    out$.pred_class <- unname(pad(predict.rff_glm(x, nd, type = "class")))
    prob <- pad(predict.rff_glm(x, nd, type = "response"))
    if (x$family == "binomial") prob <- cbind(1 - prob, prob)
    for (k in seq_along(x$levels)) out[[paste0(".pred_", x$levels[k])]] <- unname(prob[, k])
  }
  tidy_table(out)
}

# The response of newdata coded as the fit codes it (0/1 for binomial).
glm_new_response <- function(x, y) {
  if (is.null(y)) return(NULL)
  if (x$family == "binomial") return(as.numeric(as.character(y) == x$levels[2L]))
  as.numeric(y)
}

#' @rdname tidy.rff_ridge
#' @usage \method{augment}{rff_cv}(x, data = NULL, newdata = NULL, ...)
#' @exportS3Method generics::augment
augment.rff_cv <- function(x, data = NULL, newdata = NULL, ...) {
  if (inherits(x$fit, "rff_glm")) return(augment.rff_glm(x$fit, data, newdata, ...))
  augment.rff_ridge(x$fit, data, newdata, ...)
}
