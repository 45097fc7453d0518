#' Kernel logistic, multinomial and Poisson regression on random features
#'
#' Fits a generalized linear model on the random features z(x) of a kernel:
#' kernel logistic regression (`family = "binomial"`), kernel multinomial
#' (softmax) regression (`"multinomial"`) or kernel Poisson regression
#' (`"poisson"`, log link), with a ridge penalty, by streaming the rows
#' through the feature map.
#'
#' **Objective.** With eta_ik = a_k + z(x_i)'beta_k (+ offset_ik), the fit
#' minimizes
#' \deqn{\frac{1}{W}\sum_i w_i \ell_i(\eta_i) + \frac{\lambda}{2}\sum_k \|\beta_k\|^2,}{(1/W) sum_i w_i l_i(eta_i) + (lambda / 2) sum_k |beta_k|^2,}
#' W = sum w_i, where l_i is the negative log-likelihood of row i:
#' log(1 + exp(eta)) - y eta (binomial, y in \{0, 1\}), exp(eta) - y eta
#' (Poisson) and log(sum_k exp(eta_k)) - eta_y (multinomial, one
#' coefficient vector and intercept per class). The intercepts a_k are not
#' penalized. This is glmnet's objective with `alpha = 0`, so the same
#' `lambda` on the same features gives the same coefficients; weights act
#' through their proportions only. The deviance is 2 sum w_i (l_i -
#' l_i(saturated)), computed from eta without forming probabilities, so
#' fitted probabilities of 0 or 1 cannot make it infinite; complete
#' separation of the classes is handled by the penalty (`lambda > 0`).
#'
#' **Response.** `"binomial"`: a two-level factor (the second level is the
#' event, as in [stats::glm()]), a logical, or numbers 0/1.
#' `"multinomial"`: a factor (or character vector) with any number of
#' classes; levels without observations are dropped. `"poisson"`:
#' non-negative integer counts. When `family` is not given, a response with
#' two classes is fitted as binomial and one with more as multinomial;
#' counts need `family = "poisson"`. Offsets (`offset`, formula `offset()`
#' terms) are taken by the binomial and Poisson families.
#'
#' **Solver.** Each evaluation of the objective and its gradient is one
#' pass over the rows in C: a chunk of rows is featurized, eta = z B is
#' computed (BLAS `dgemm`), then the loss and the residuals r = w (mu - y),
#' and the gradient is accumulated as z'r. The features are cached in
#' memory when the n x D matrix fits in `cache_mb` megabytes (then a pass
#' costs two matrix products), otherwise every pass featurizes the rows
#' again and memory beyond the inputs is O(`chunk_size` D + D^2 + D K). The
#' minimizer is L-BFGS (10 curvature pairs) with a backtracking line search,
#' preconditioned by the Hessian at the start estimated on
#' max(2000, D) rows (one eigendecomposition for the whole path), in
#' coordinates where the intercept is decoupled from the centred features.
#' The lambda path is solved from the largest value down, each fit started
#' from the previous one. This was chosen by measurement over Newton's
#' method (IRLS), whose D x D weighted cross-product per iteration costs
#' n D^2 flops (tens of seconds at n = 100,000, D = 1000 with R's reference
#' BLAS) where a pass costs n D; see bench/RESULTS.md.
#'
#' **Convergence.** At each lambda the iterations stop when the decrease
#' predicted by the preconditioner, g'P g / 2, and the last change of the
#' objective are both at most `epsilon` (|F| + 0.1) (`control`), or after
#' `maxit` iterations, with a warning of class `"rff_convergence"` naming
#' the lambdas that did not converge.
#'
#' **Lambda.** With `lambda = NULL` the path has `nlambda` log-spaced values
#' from lambda_max, the curvature at the start times the total variance of
#' the features (about one degree of freedom), down to
#' `lambda_min_ratio * lambda_max`. When the path has several values,
#' `lambda_best` minimizes the `folds`-fold cross-validated deviance: at
#' each lambda, each fold is fitted with its held-out rows weighted zero,
#' started from the fit on all rows, to 100 times `epsilon` (at most 1e-4).
#' A path chosen from the data stops once three consecutive lambdas have
#' not improved on the smallest CV deviance (smaller lambdas cost the most
#' iterations and only overfit more), so `lambda` may be shorter than
#' `nlambda`. [rff_cv()] with a
#' `family` gives the full cross-validation (more folds, other measures,
#' the one-standard-error rule, several lengthscales).
#'
#' **Defaults from the data** are those of [rff_ridge()]: `standardize =
#' TRUE`, D from the number of rows, and `lengthscale = "auto"`, which here
#' compares the median heuristic times 0.5, 0.71, 1, 1.41, 2, 2.83 and 4 by
#' the leave-one-out error of ridge regression of the class indicators
#' (binomial, multinomial) or the counts (Poisson) on the features, on a
#' random subsample of at most 5,000 rows; the candidates rescale the same
#' draws. `"median"` uses the median heuristic and a number is used as given.
#' [rff_cv()] with a `family` compares lengthscales by cross-validation of
#' the deviance instead.
#'
#' The formula method handles `data`, `subset`, `weights`, `na.action` and
#' `offset` as [stats::glm()] does; factors among the predictors are
#' expanded by [stats::model.matrix()].
#'
#' @param x A numeric matrix, numeric data frame or vector.
#' @param y The response (see Details).
#' @param family `"binomial"`, `"multinomial"` or `"poisson"`; by default
#'   from the response (see Details).
#' @param lambda `NULL` (a path of `nlambda` values) or non-negative
#'   values.
#' @param folds Folds of the cross-validation that chooses `lambda_best`
#'   on a path (at least 2).
#' @param foldid Optional fold of each row (integers 1..k); overrides
#'   `folds`.
#' @param cache_mb Memory, in megabytes, the n x D feature matrix may take
#'   to be cached for the passes; default `getOption("rff.cache_mb", 1024)`.
#'   `0` streams every pass (memory O(`chunk_size` D + D^2) whatever n).
#' @param control A list with `epsilon` (default 1e-8) and `maxit`
#'   (default 500), see Details.
#' @param nlambda,lambda_min_ratio Length and range of the data-driven
#'   lambda path.
#' @inheritParams rff_ridge
#' @param ... For the default and formula methods: arguments of [rff_map()]
#'   that draw the map when `map` is `NULL` (`D`, `kernel`, `lengthscale`,
#'   `nu`, `order`, `variant`, `sampler`); the formula method passes the
#'   other arguments of the default method too.
#' @return An object of class `"rff_glm"`: a list with `coefficients` (D x
#'   L, or D x K x L for the multinomial family), `intercept` (L, or K x L),
#'   `lambda`, `deviance` (training deviance at each lambda),
#'   `null.deviance`, `iterations`, `converged`, `cvm`/`cvsd`
#'   (cross-validated deviance per row and its standard error, or `NULL`),
#'   `lambda_best`, `best`, `family`, `levels` (the classes; the second is
#'   the event for binomial), `linear.predictors` (at `lambda_best`), `y`,
#'   `standardize`, `lengthscale_search`, `map`, `n`, `cached` (whether the
#'   features were cached) and `call`.
#' @references Rahimi, A. and Recht, B. (2007). Random features for
#'   large-scale kernel machines. *Advances in Neural Information Processing
#'   Systems 20*.
#'
#'   Friedman, J., Hastie, T. and Tibshirani, R. (2010). Regularization paths
#'   for generalized linear models via coordinate descent. *Journal of
#'   Statistical Software* 33(1).
#' @seealso [predict.rff_glm()], [rff_cv()] (with `family`), [rff_ridge()].
#' @examples
#' set.seed(1)
#' n <- 400
#' x <- matrix(runif(2 * n, -1, 1), n, 2)
#' y <- factor(ifelse(rowSums(x^2) < 0.5, "inside", "outside"))
#' fit <- rff_glm(x, y, D = 200, nlambda = 10)
#' fit
#' mean(predict(fit, x, type = "class") == y)
#' head(predict(fit, x, type = "response"))   # P(outside)
#' # three classes, formula interface
#' d <- data.frame(u = x[, 1], v = x[, 2],
#'                 g = cut(atan2(x[, 2], x[, 1]), 3, labels = c("a", "b", "c")))
#' fit3 <- rff_glm(g ~ u + v, data = d, D = 200, lengthscale = 0.5, lambda = 1e-3)
#' table(predict(fit3, d, type = "class"), d$g)
#' # counts
#' cnt <- rpois(n, exp(1 + sin(3 * x[, 1])))
#' fitp <- rff_glm(x, cnt, family = "poisson", D = 200, lengthscale = 0.5, lambda = 1e-3)
#' summary(fitp)
#' @export
rff_glm <- function(x, ...) UseMethod("rff_glm")

#' @rdname rff_glm
#' @export
rff_glm.default <- function(x, y, family = c("binomial", "multinomial", "poisson"),
                            lambda = NULL, map = NULL, intercept = TRUE,
                            standardize = TRUE, weights = NULL, offset = NULL,
                            nlambda = 20, lambda_min_ratio = 1e-4, folds = 5,
                            foldid = NULL, cache_mb = getOption("rff.cache_mb", 1024),
                            control = list(), chunk_size = NULL, threads = NULL,
                            progress = interactive(), ...) {
  cl <- fit_call(match.call(), "rff_glm")
  check_required(c("x", "y"))
  g <- glm_setup(x, y, family, lambda, map, intercept, standardize, weights, offset,
                 nlambda, lambda_min_ratio, cache_mb, control, chunk_size, threads,
                 progress, list(...), "rff_glm")
  L_given <- length(g$path$lambda)
  cv <- is.null(g$path$lambda) || L_given > 1L
  foldid <- if (cv) check_foldid(foldid, folds, nrow(g$x)) else NULL
  r <- glm_fit_candidate(g, g$map, foldid, "deviance", stop_early = TRUE)
  fit <- glm_result(g, r, "deviance")
  fit$call <- cl
  fit
}

#' @rdname rff_glm
#' @export
rff_glm.formula <- function(formula, data, subset, weights, na.action, offset, ...) {
  cl <- fit_call(match.call(), "rff_glm")
  r <- fit_formula(rff_glm.default, ..., .response = "any")
  fit <- r$fit
  fit$call <- cl
  for (f in names(r$model)) fit[[f]] <- r$model[[f]]
  fit
}

# ---- the setup every glm fit from data shares ----

# Checks the arguments of rff_glm() / rff_cv(family =) and prepares the
# fit: the response coded for its family, x in the kernel's units, weights,
# offset, the path, the solver's control, and the map (lengthscale "auto":
# chosen by glm_auto_lengthscale(), unless `keep_candidates`, when the base
# map and the candidates are returned for a cross-validation to compare).
glm_setup <- function(x, y, family, lambda, map, intercept, standardize, weights, offset,
                      nlambda, lambda_min_ratio, cache_mb, control, chunk_size, threads,
                      progress, args, caller, keep_candidates = FALSE) {
  x <- check_x(x)
  n <- nrow(x)
  resp <- glm_response(y, family, n)
  path <- check_path(lambda, nlambda, lambda_min_ratio)
  intercept <- check_flag(intercept, "intercept")
  standardize <- check_flag(standardize, "standardize")
  weights <- check_weights(weights, n)
  offset <- glm_offset(offset, n, resp$family)
  cache_mb <- check_cache_mb(cache_mb)
  control <- check_glm_control(control)
  threads <- check_threads(threads)
  progress <- check_flag(progress, "progress")
  std <- if (standardize) standardization(x, weights) else NULL
  xs <- standardize_rows(x, std)
  mm <- model_map(xs, map, args, caller)
  check_stats_memory(mm$map$D, 3, !is.null(map))
  chunk_size <- check_chunk_size(chunk_size, mm$map$D)
  g <- list(x = xs, xnames = colnames(x), resp = resp, family = resp$family,
            K = resp$K, y = resp$y, weights = weights, offset = offset, path = path,
            intercept = intercept, std = std, cache_mb = cache_mb, control = control,
            chunk_size = chunk_size, threads = threads, progress = progress,
            map = mm$map, candidates = mm$candidates, median = mm$median, search = NULL)
  if (!is.null(mm$candidates) && !keep_candidates) {
    g$search <- glm_auto_lengthscale(g, mm)
    g$map <- rescale_map(mm$map, mm$candidates[[g$search$best]])
    g$candidates <- NULL
  }
  g
}

# The response coded for the family: y (0/1 doubles, counts, or integer
# class codes 1..K), K (coefficient columns), the levels and the family.
glm_response <- function(y, family, n) {
  given <- !identical(family, c("binomial", "multinomial", "poisson"))
  if (given) family <- check_string(family, "family", c("binomial", "multinomial", "poisson"))
  if (is.data.frame(y) || (is.matrix(y) && ncol(y) != 1L)) {
    rff_abort("y", sprintf("`y` must be one response (a vector or factor), got %s",
                           if (is.data.frame(y)) "a data frame" else
                             sprintf("a matrix with %d columns", ncol(y))))
  }
  if (is.matrix(y)) y <- y[, 1L]
  if (length(y) != n) {
    rff_abort("y", sprintf("`y` must have one value per row of `x` (%d), got %d", n, length(y)))
  }
  if (anyNA(y)) rff_abort("y", sprintf("`y` must not contain missing values (%d found)", sum(is.na(y))))
  if (is.character(y)) y <- factor(y)
  if (is.logical(y)) y <- factor(y, levels = c(FALSE, TRUE))
  if (is.numeric(y) && !(given && family == "poisson")) {
    if (!all(is.finite(y))) rff_abort("y", "`y` must be finite")
    if (all(y %in% c(0, 1))) {
      y <- factor(y, levels = c(0, 1))
    } else if (!given && all(y >= 0) && all(y == round(y))) {
      rff_abort("y", "`y` holds counts: give `family = \"poisson\"` (or a factor for classes)")
    } else {
      rff_abort("y", sprintf(paste0(
        "`y` must be a factor, logical, 0/1 or (for family \"poisson\") counts, got %s; ",
        "for a numeric response use rff_ridge()"), show_value(y)))
    }
  }
  if (is.factor(y)) {
    if (given && family == "poisson") {
      rff_abort("y", "family \"poisson\" needs non-negative integer counts, got a factor")
    }
    y <- droplevels(y)
    lev <- levels(y)
    if (length(lev) < 2L) {
      rff_abort("y", sprintf("`y` has one class (\"%s\"): a classifier needs at least two",
                             lev[1L]))
    }
    if (!given) family <- if (length(lev) == 2L) "binomial" else "multinomial"
    if (family == "binomial") {
      if (length(lev) > 2L) {
        rff_abort("family", sprintf(
          "family \"binomial\" needs two classes, `y` has %d; use family \"multinomial\"",
          length(lev)))
      }
      return(list(y = as.double(as.integer(y) - 1L), K = 1L, levels = lev,
                  family = family))
    }
    return(list(y = as.integer(y), K = length(lev), levels = lev, family = family))
  }
  if (!is.numeric(y)) {
    rff_abort("y", sprintf("`y` must be a factor, logical or numeric, got %s", show_value(y)))
  }
  if (!all(is.finite(y)) || any(y < 0) || any(y != round(y))) {
    rff_abort("y", "family \"poisson\" needs non-negative integer counts in `y`")
  }
  if (!any(y > 0)) rff_abort("y", "`y` has no positive count: the Poisson fit has no maximum")
  list(y = as.double(y), K = 1L, levels = NULL, family = "poisson")
}

# An offset on the linear predictor: one number per row (binomial,
# Poisson), as an n x 1 matrix.
glm_offset <- function(offset, n, family) {
  if (is.null(offset)) return(NULL)
  if (family == "multinomial") {
    rff_abort("offset", "offsets are taken by the binomial and Poisson families, not by \"multinomial\"")
  }
  if (!is_number(offset) || length(offset) != n) {
    rff_abort("offset", sprintf("`offset` must be NULL or %d numbers (one per row), got %s",
                                n, show_value(offset)))
  }
  if (anyNA(offset) || any(!is.finite(offset))) {
    rff_abort("offset", "`offset` must not contain missing or infinite values")
  }
  matrix(as.double(offset), n, 1L)
}

check_cache_mb <- function(cache_mb) {
  if (!is_number(cache_mb) || length(cache_mb) != 1L || is.na(cache_mb) || cache_mb < 0) {
    rff_abort("cache_mb", sprintf("`cache_mb` must be a number of megabytes >= 0, got %s",
                                  show_value(cache_mb)))
  }
  as.double(cache_mb)
}

check_glm_control <- function(control) {
  if (!is.list(control)) {
    rff_abort("control", sprintf("`control` must be a list, got %s", show_value(control)))
  }
  bad <- setdiff(names(control), c("epsilon", "maxit"))
  if (length(bad) || (length(control) && is.null(names(control)))) {
    rff_abort("control", sprintf("`control` takes `epsilon` and `maxit`, got %s",
                                 if (length(bad)) paste0("`", bad[1L], "`") else "an unnamed element"))
  }
  eps <- if (is.null(control$epsilon)) 1e-8 else control$epsilon
  if (!is_number(eps) || length(eps) != 1L || !is.finite(eps) || eps <= 0) {
    rff_abort("control", sprintf("`control$epsilon` must be a positive number, got %s",
                                 show_value(eps)))
  }
  maxit <- if (is.null(control$maxit)) 500L else check_count(control$maxit, "control")
  list(epsilon = as.double(eps), maxit = as.integer(maxit))
}

# lengthscale = "auto" for rff_glm(): the candidates compared by the exact
# leave-one-out error of ridge regression of the class indicators (or the
# counts) on the features, on at most 5,000 random rows, with the machinery
# of rff_ridge(); all candidates rescale the same draws.
glm_auto_lengthscale <- function(g, mm) {
  n <- nrow(g$x)
  rows <- if (n > 5000L) sort(sample.int(n, 5000L)) else seq_len(n)
  Y <- if (g$family == "multinomial") {
    outer(g$y[rows], seq_len(g$K), `==`) + 0
  } else matrix(g$y[rows], ncol = 1L)
  w <- if (is.null(g$weights)) NULL else g$weights[rows]
  m <- list(x = g$x[rows, , drop = FALSE], y = Y, weights = w, map = mm$map,
            candidates = mm$candidates, median = mm$median)
  path <- list(lambda = NULL, nlambda = 50L, ratio = 1e-6)
  fit_rows <- function(map, r) {
    ridge_rows_fit(m, map, r, path, TRUE, g$chunk_size, g$threads, "loo")
  }
  s <- select_lengthscale(m, fit_rows)
  s$fit <- NULL
  s$criterion <- "ridge LOO"
  s
}

# One fit of the problem at a map: the path on all rows and, with
# `foldid`, its cross-validation by `measure`. Returns the problem, the
# path, the preconditioner and the CV.
glm_fit_candidate <- function(g, map, foldid, measure, stop_early = FALSE) {
  prob <- glm_problem(g$x, g$y, g$family, g$K, g$offset, g$weights, map, g$chunk_size,
                      g$threads, g$cache_mb, g$intercept)
  theta0 <- matrix(0, prob$D + 1L, g$K)
  if (g$intercept) theta0[1L, ] <- glm_start(prob, prob$w)
  P <- glm_precond(prob, theta0, if (is.null(g$path$lambda)) 2L else length(g$path$lambda))
  lambda <- glm_lambda_values(g$path, P)
  if (is.null(foldid)) {
    full <- glm_path(prob, lambda, P, g$control)
    cv <- NULL
  } else {
    cv <- glm_cv_path(prob, lambda, P, g$control, foldid, measure, g$progress,
                      stop_early = stop_early && is.null(g$path$lambda))
    full <- cv$full
    lambda <- full$lambda
  }
  list(prob = prob, P = P, lambda = lambda, full = full, cv = cv, foldid = foldid)
}

# The index of the best lambda by a CV measure (AUC: the largest).
best_by_measure <- function(cvm, measure) {
  v <- if (measure == "auc") -cvm else cvm
  i <- which.min(v)
  if (length(i) == 0L) 1L else i
}

# The "rff_glm" object of a candidate fit, at lambda_best (the CV's best,
# or `best` when given).
glm_result <- function(g, r, measure, best = NULL) {
  full <- r$full
  L <- length(r$lambda)
  if (is.null(best)) best <- if (is.null(r$cv)) L else best_by_measure(r$cv$cvm, measure)
  if (!all(full$converged)) {
    warning(structure(class = c("rff_convergence", "warning", "condition"), list(
      message = sprintf(
        "rff_glm: the fit did not converge in %d iterations at lambda = %s; increase `control$maxit` or `lambda`",
        g$control$maxit, paste(format(r$lambda[!full$converged], digits = 4), collapse = ", ")),
      call = NULL)))
  }
  if (!is.null(r$cv) && !r$cv$converged) {
    warning(structure(class = c("rff_convergence", "warning", "condition"), list(
      message = "rff_glm: some cross-validation fits did not converge; increase `control$maxit`",
      call = NULL)))
  }
  prob <- r$prob
  theta <- matrix(full$coef[, , best], prob$D + 1L, g$K)
  eta <- glm_pass(prob, theta)$eta
  dev <- 2 * (full$loss - saturated_loss(g$family, g$y, prob$w))
  null_dev <- glm_null_deviance(prob)
  coef <- full$coef[-1L, , , drop = FALSE]
  a0 <- matrix(full$coef[1L, , ], g$K, L)
  if (g$K == 1L) {
    coef <- matrix(coef, prob$D, L)
    a0 <- drop(a0)
  } else {
    dimnames(coef) <- list(NULL, g$resp$levels, NULL)
    dimnames(a0) <- list(g$resp$levels, NULL)
  }
  rows <- r$P$rows
  fit <- list(coefficients = coef, intercept = a0, lambda = r$lambda, deviance = dev,
              null.deviance = null_dev, iterations = full$iter, converged = full$converged,
              cvm = if (is.null(r$cv)) NULL else r$cv$cvm,
              cvsd = if (is.null(r$cv)) NULL else r$cv$cvsd,
              measure = measure, folds = if (is.null(r$foldid)) NULL else max(r$foldid),
              lambda_best = r$lambda[best], best = best, family = g$family,
              levels = g$resp$levels, linear.predictors = eta, y = g$y,
              prior.weights = g$weights, standardize = g$std,
              lengthscale_search = g$search, has_offset = !is.null(g$offset),
              weighted = !is.null(g$weights), has_intercept = g$intercept,
              map = r$prob$map, n = sum(prob$w > 0), xnames = g$xnames,
              cached = prob$cached,
              df_sample = list(x = g$x[rows, , drop = FALSE], y = g$y[rows],
                               offset = if (is.null(g$offset)) NULL else g$offset[rows, , drop = FALSE],
                               w = prob$w[rows], W = prob$W))
  class(fit) <- "rff_glm"
  fit
}

# sum w_i l_i at the saturated model (0 for 0/1 and class responses).
saturated_loss <- function(family, y, w) {
  if (family != "poisson") return(0)
  sum(w * poisson_saturated(y))
}

# The deviance of the model with the intercept (and offset) only.
glm_null_deviance <- function(prob) {
  w <- prob$w
  a <- if (prob$intercept) glm_start(prob, w) else rep(0, prob$K)
  eta <- matrix(rep(a, each = prob$n), prob$n, prob$K)
  if (!is.null(prob$offset)) eta <- eta + prob$offset
  sum(w * glm_row_deviance(prob$family, prob$y, eta))
}

# ---- cross-validation: rff_cv(family = ) ----

# The measures of cross-validation each family takes; the first is the
# default.
glm_measures <- list(binomial = c("deviance", "class", "auc"),
                     multinomial = c("deviance", "class"),
                     poisson = c("deviance", "mse"))

# rff_cv() for a GLM family: every candidate lengthscale (sharing the draws
# of one map) is fitted over the lambda path on all rows and on each fold
# (the held-out rows weighted 0), the measure is taken on the held-out rows,
# and the best pair and lambda_1se are chosen as for ridge regression (for
# AUC, larger is better).
glm_cv <- function(cl, x, y, family, type.measure, folds, lambda, lengthscale, map,
                   intercept, standardize, weights, offset, nlambda, lambda_min_ratio,
                   foldid, cache_mb, control, chunk_size, threads, progress, args,
                   lengthscale_given) {
  auto <- identical(lengthscale, "auto")
  if (is.null(map) && !auto) args$lengthscale <- 1
  g <- glm_setup(x, y, family, lambda, map, intercept, standardize, weights, offset,
                 nlambda, lambda_min_ratio, cache_mb, control, chunk_size, threads,
                 progress, args, "rff_cv", keep_candidates = TRUE)
  measures <- glm_measures[[g$family]]
  measure <- if (is.null(type.measure)) measures[1L] else
    check_string(type.measure, "type.measure", measures)
  n <- nrow(g$x)
  d <- ncol(g$x)
  candidates <- if (auto && is.null(map)) g$candidates else if (!is.null(map) && !lengthscale_given)
    list(g$map$lengthscale) else check_candidates(lengthscale, d, g$x)
  if (is.null(candidates)) candidates <- list(g$map$lengthscale)
  foldid <- check_foldid(foldid, folds, n)
  nl <- length(candidates)
  cvm <- cvsd <- NULL
  best_r <- NULL
  best_val <- Inf
  sgn <- if (measure == "auc") -1 else 1
  for (ci in seq_len(nl)) {
    r <- glm_fit_candidate(g, rescale_map(g$map, candidates[[ci]]), foldid, measure)
    if (is.null(g$path$lambda)) g$path$lambda <- r$lambda
    if (is.null(cvm)) cvm <- cvsd <- matrix(NA_real_, length(r$lambda), nl)
    cvm[, ci] <- r$cv$cvm
    cvsd[, ci] <- r$cv$cvsd
    v <- min(sgn * r$cv$cvm, na.rm = TRUE)
    if (v < best_val) {
      best_val <- v
      best_r <- r
    }
    r <- NULL
  }
  lam <- best_r$lambda
  ij <- arrayInd(which.min(sgn * cvm), dim(cvm))
  i_min <- ij[1L]
  within <- sgn * cvm[, ij[2L]] <= sgn * cvm[i_min, ij[2L]] + cvsd[i_min, ij[2L]]
  within[is.na(within)] <- FALSE
  lambda_1se <- max(lam[within])
  if (nl > 1L) {
    g$search <- list(best = ij[2L], rows = n, median = if (auto) g$median, criterion = "CV",
                     table = data.frame(lengthscale = vapply(candidates, `[`, 0, 1L),
                                        multiple = if (auto) auto_multipliers[seq_len(nl)] else NA_real_,
                                        lambda = lam[apply(sgn * cvm, 2L, which.min)],
                                        cv = sgn * apply(sgn * cvm, 2L, min)))
  }
  fit <- glm_result(g, best_r, measure, best = i_min)
  fit$call <- cl
  ls_names <- vapply(candidates, function(l) paste(format(l, digits = 4), collapse = ","),
                     character(1))
  dimnames(cvm) <- dimnames(cvsd) <- list(NULL, ls_names)
  structure(list(lambda = lam, lengthscale = candidates, cvm = cvm, cvsd = cvsd,
                 lambda_min = lam[i_min], lambda_1se = lambda_1se, lambda_best = lam[i_min],
                 lengthscale_best = candidates[[ij[2L]]],
                 best = c(lambda = i_min, lengthscale = ij[2L]), foldid = foldid,
                 auto = auto, family = g$family, type.measure = measure, fit = fit,
                 call = cl),
            class = "rff_cv")
}

# The label of a cross-validation measure.
measure_label <- function(measure) {
  switch(measure, mse = "mean squared error", deviance = "deviance per row",
         class = "misclassification rate", auc = "AUC")
}
