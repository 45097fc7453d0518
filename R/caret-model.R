# Layer 9 (integrations): rff_caret(), the custom-model list that lets
# caret::train() tune the lengthscale and lambda of rff_ridge() and
# rff_glm(), with a permutation importance for caret::varImp().

#' Random-feature kernel models for caret
#'
#' `rff_caret()` returns a caret custom model (a list with `library`,
#' `type`, `parameters`, `grid`, `fit`, `predict`, `prob`, `sort`,
#' `levels` and `varImp`) so that `caret::train(x, y, method = rff_caret())`
#' tunes the `lengthscale` and `lambda` of [rff_ridge()] (regression) or
#' [rff_glm()] (classification: binomial for two classes, multinomial for
#' more). Inputs are standardized by the fits themselves (their default).
#' caret's formula interface builds the model matrix itself, so ordered
#' factors reach the kernel as [stats::model.matrix()]'s polynomial
#' contrasts, not as the ranks of their levels that rff's formula methods
#' give them (see [rff_ridge()]); convert them with `as.integer()` first
#' for the ranks.
#'
#' The default grid takes `len` lengthscales, multiples 2^(-1), ..., 2^1 of
#' the median heuristic of the standardized inputs
#' ([rff_median_lengthscale()]), crossed with `len` values of lambda from
#' 10^-4 to 10^-1; `search = "random"` draws both log-uniformly in those
#' ranges. `caret::varImp()` of the result is a permutation importance on
#' the training rows: for each input, the increase of the mean squared
#' error (regression) or of the mean log-loss (classification) when that
#' column is shuffled (R's random numbers: `set.seed()` first).
#'
#' @param type `"auto"` (regression for a numeric outcome, classification
#'   for a factor), `"regression"` or `"classification"`.
#' @param D The number of random features (`NULL`: the fits' default from n).
#' @param ... Further arguments of [rff_ridge()] or [rff_glm()] (`kernel`,
#'   `nu`, `variant`, ...), used in every fit.
#' @return A list, caret's custom-model format.
#' @examples
#' \donttest{
#' # (loading caret alone takes seconds)
#' if (requireNamespace("caret", quietly = TRUE)) {
#'   set.seed(1)
#'   tr <- caret::train(mtcars[, c("wt", "hp", "disp")], mtcars$mpg,
#'                      method = rff_caret(D = 20),
#'                      tuneGrid = data.frame(lengthscale = c(1, 2), lambda = 1e-3),
#'                      trControl = caret::trainControl(method = "cv", number = 3))
#'   tr$bestTune
#' }
#' }
#' @export
rff_caret <- function(type = c("auto", "regression", "classification"), D = NULL, ...) {
  type <- if (identical(type, c("auto", "regression", "classification"))) "auto" else
    check_string(type, "type", c("auto", "regression", "classification"))
  if (!is.null(D)) D <- check_count(D, "D", hi = 2^30)
  extra <- list(...)
  if (length(extra) && (is.null(names(extra)) || any(!nzchar(names(extra))))) {
    rff_abort("...", "`...` must be named arguments of rff_ridge() or rff_glm()")
  }
  taken <- intersect(names(extra), c("x", "y", "lambda", "lengthscale", "weights", "progress"))
  if (length(taken)) {
    rff_abort("...", sprintf("`%s` is set by caret::train(), not through rff_caret()",
                             taken[1L]))
  }
  list(
    label = "Random Fourier feature kernel ridge or logistic regression",
    library = "rff",
    type = switch(type, auto = c("Regression", "Classification"),
                  regression = "Regression", classification = "Classification"),
    parameters = data.frame(parameter = c("lengthscale", "lambda"),
                            class = c("numeric", "numeric"),
                            label = c("Lengthscale", "Penalty (lambda)")),
    grid = caret_grid,
    fit = function(x, y, wts, param, lev, last, classProbs, ...) {
      args <- c(list(x = as.matrix(x), y = y, lambda = param$lambda,
                     lengthscale = param$lengthscale, weights = wts, progress = FALSE),
                if (is.null(D)) NULL else list(D = D), extra)
      fit <- do.call(if (is.factor(y)) rff_glm else rff_ridge, args)
      fit$caret_data <- list(x = as.matrix(x), y = y)
      fit
    },
    predict = function(modelFit, newdata, preProc = NULL, submodels = NULL) {
      newdata <- as.matrix(newdata)
      if (inherits(modelFit, "rff_glm")) {
        return(as.character(predict.rff_glm(modelFit, newdata, type = "class")))
      }
      unname(predict.rff_ridge(modelFit, newdata))
    },
    prob = function(modelFit, newdata, preProc = NULL, submodels = NULL) {
      caret_prob(modelFit, as.matrix(newdata))
    },
    sort = function(x) x[order(-x$lambda, -x$lengthscale), , drop = FALSE],
    levels = function(x) x$levels,
    varImp = function(object, ...) caret_importance(object)
  )
}

# Class probabilities, one column per level.
caret_prob <- function(fit, x) {
  p <- predict.rff_glm(fit, x, type = "response")
  if (!is.matrix(p)) p <- cbind(1 - p, p)
  colnames(p) <- fit$levels
  as.data.frame(p, check.names = FALSE)
}

# The default and random grids of lengthscale x lambda.
caret_grid <- function(x, y, len = NULL, search = "grid") {
  if (is.null(len)) len <- 3L
  med <- rff_median_lengthscale(scale(as.matrix(x)))
  if (search == "grid") {
    mult <- if (len == 1L) 1 else 2^seq(-1, 1, length.out = len)
    lam <- if (len == 1L) 1e-3 else 10^seq(-4, -1, length.out = len)
    return(expand.grid(lengthscale = med * mult, lambda = lam))
  }
  data.frame(lengthscale = med * 2^stats::runif(len, -1, 1),
             lambda = 10^stats::runif(len, -4, -1))
}

# Permutation importance on the training rows the fit keeps.
caret_importance <- function(fit) {
  d <- fit$caret_data
  if (is.null(d)) {
    rff_abort("object", "`object` keeps no training rows: permutation importance needs a fit made through rff_caret()")
  }
  loss <- function(x) {
    if (inherits(fit, "rff_glm")) {
      p <- as.matrix(caret_prob(fit, x))
      -mean(log(pmax(p[cbind(seq_len(nrow(p)), as.integer(d$y))], 1e-15)))
    } else {
      mean((d$y - predict.rff_ridge(fit, x))^2)
    }
  }
  base <- loss(d$x)
  imp <- vapply(seq_len(ncol(d$x)), function(j) {
    xp <- d$x
    xp[, j] <- xp[sample.int(nrow(xp)), j]
    loss(xp) - base
  }, numeric(1))
  nm <- colnames(d$x)
  if (is.null(nm)) nm <- paste0("x", seq_len(ncol(d$x)))
  data.frame(Overall = imp, row.names = nm)
}
