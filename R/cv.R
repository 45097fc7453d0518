# Layer 7 (families): rff_cv(), cross-validation over lambda and the
# lengthscale.

#' Cross-validated random-feature ridge regression
#'
#' k-fold cross-validation of [rff_ridge()] over a lambda path and over
#' candidate lengthscales, computed from sufficient statistics: the rows of
#' each fold are streamed once per lengthscale into [rff_stats()], the
#' statistics of the training rows of fold j are the total minus fold j,
#' and the held-out squared error of fold j at every lambda follows from
#' fold j's own statistics, so no feature matrix is ever held and each fold
#' costs one eigendecomposition for the whole path. With fewer rows than
#' features, the folds are scored from the n x n Gram matrix of all rows'
#' features and its one eigendecomposition per lengthscale: the fit without
#' fold j predicts its rows with residuals (I - H_jj)^-1 e_j, where e are
#' the residuals and H the hat matrix of the fit on all rows at fold j's
#' penalty (the same held-out errors as a refit without the fold, up to
#' rounding; a fold where I - H_jj is ill-conditioned, as at `lambda = 0`,
#' or whose own eigendecomposition costs less, with few folds and many
#' lambdas, is scored from its own eigendecomposition); on `quakes` (750
#' rows, 4 lengthscales) the default call took 2.8 s instead of 6.7 s
#' (reference BLAS).
#'
#' All lengthscales share the same random draws: one map is drawn (or
#' `map` is taken) and its frequencies are rescaled, omega / l, so the
#' curves differ by the lengthscale only, not by Monte Carlo noise. The
#' default `lengthscale = "auto"` walks over the median heuristic of the
#' (standardized) inputs times 2^(j / 2) as [rff_ridge()] does (from j = 0
#' downhill, between 1/8 and 16 times the heuristic), here by the
#' cross-validated error at its best lambda; `cvm` and `cvsd` have a column
#' for each lengthscale compared; `"median"` is the median
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
#' [stats::model.matrix()] and ordered factors as the ranks of their levels,
#' as in [rff_ridge()].
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
#' takes the types of [predict.rff_glm()] (default `"link"`). As in
#' [rff_glm()], the path is solved to 10 times `control$epsilon` and
#' `lambda_min` then to `epsilon`: the coefficients at `lambda_1se` are
#' those of the looser tolerance.
#'
#' @inheritParams rff_ridge
#' @inheritParams rff_glm
#' @param family `"gaussian"` (ridge regression, default), `"binomial"`,
#'   `"multinomial"` or `"poisson"` (see GLM families).
#' @param type.measure For GLM families, the held-out measure: `"deviance"`,
#'   `"class"`, `"auc"` (binomial) or `"mse"` (Poisson).
#' @param folds Number of folds (at least 2, at most the number of rows).
#' @param lambda `NULL` (a data-driven path of exactly `nlambda` values:
#'   unlike [rff_ridge()] and [rff_glm()], the path does not go on past
#'   `lambda_min_ratio`, since every candidate lengthscale shares it) or
#'   the lambda values to compare.
#' @param lengthscale `"auto"` (default: multiples of the median
#'   heuristic), `"ard"` (the multiples of `"auto"` and one more candidate,
#'   a lengthscale per input column learned by the log evidence as in
#'   [rff_ridge()], started from the best multiple and cross-validated like
#'   the others: it is chosen only when its CV error is the smallest),
#'   `"median"`, or candidate lengthscales: a numeric vector
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
  close_progress <- progress_call(progress, "rff_cv")
  on.exit(close_progress(), add = TRUE)
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
  foldid <- check_foldid(foldid, folds, nrow(a$x))
  args <- list(...)
  la <- cv_lengthscale_args(lengthscale, map, args)
  ard <- la$ard
  auto <- la$auto
  args <- la$args
  if (!is.null(map)) {
    m <- model_setup(a, standardize, weights, offset, map, args, "rff_cv")
    candidates <- if (missing(lengthscale)) list(map$lengthscale) else
      check_candidates(lengthscale, ncol(a$x), m$x)
  } else {
    if (!auto) args$lengthscale <- 1
    m <- model_setup(a, standardize, weights, offset, NULL, args, "rff_cv")
    candidates <- if (auto) m$candidates else check_candidates(lengthscale, ncol(a$x), m$x)
  }
  if (is.null(candidates)) candidates <- list(m$map$lengthscale)
  # the statistics of every fold, plus the solves' copies
  check_stats_memory(m$map$D, max(foldid) + 4, !is.null(map))
  chunk_size <- check_chunk_size(chunk_size, m$map$D)
  ridge_cv(a, m, candidates, foldid, auto, chunk_size, cl)
}

# Ridge regression's cross-validation: for each candidate lengthscale (the
# same draws rescaled; for "auto", those of the downhill walk of
# lengthscale_walk()), the statistics of every fold, each fold's path fitted
# from the total less the fold and scored on the fold's rows (from its
# statistics, or from its features when rows are fewer than features); the
# curves, the choice and the object from the cross-validation core; the
# refit on all rows at lambda_min.
ridge_cv <- function(a, m, candidates, foldid, auto, chunk_size, cl) {
  lambda <- a$path$lambda
  x <- m$x
  y <- m$y
  w <- m$weights
  n <- nrow(x)
  k <- max(foldid)
  rows <- split(seq_len(n), foldid)
  walk <- auto && !is.null(m$candidates)
  # each candidate's folds are a stage of its own in the call's display:
  # the folds' statistics (or the Gram matrix of the rows), then a solve
  # of the path per fold
  D <- m$map$D
  stat_w <- as.double(n) * D * min(n, D)
  # (fewer rows than features: one eigenproblem of the n rows, then a
  # Cholesky factorization of each fold's block per lambda)
  L <- if (is.null(lambda)) a$path$nlambda else length(lambda)
  solve_w <- if (n <= D) (7 * as.double(n)^3 + L * as.double(n)^3 / k) / k else
    7 * as.double(D)^3
  st <- NULL
  tick <- function(j, solved) st$set(if (solved) stat_w + j * solve_w else stat_w * j / k)
  fit_one <- function(ls, ci) {
    st <<- progress_stage(sprintf("%d folds", k), stat_w + k * solve_w)
    on.exit(st$close(), add = TRUE)
    mp <- rescale_map(m$map, ls)
    # fewer rows than features: the folds scored from the Gram matrix of
    # the rows' features (heldout_sse_folds()); otherwise from the folds'
    # statistics
    Zall <- if (n <= mp$D) .Call(C_rff_features, x, mp, a$threads)
    G <- if (!is.null(Zall)) .Call(C_rff_ridge_thin_products, Zall, NULL, a$threads)
    if (is.null(Zall)) {
      fold_stats <- lapply(seq_len(k), function(j) {
        r <- rows[[j]]
        s <- accumulate_stats(x[r, , drop = FALSE], y[r, , drop = FALSE], mp, a$intercept,
                              chunk_size, a$threads, FALSE, if (is.null(w)) NULL else w[r])
        tick(j, FALSE)
        s
      })
      total <- combine_stats(fold_stats)
      wj <- vapply(fold_stats, stats_wsum, numeric(1))
    } else {
      total <- NULL
      wj <- vapply(rows, function(r) if (is.null(w)) length(r) else sum(w[r]), numeric(1))
    }
    # the path of the first lengthscale scored serves all of them
    if (is.null(lambda)) {
      sys <- if (is.null(Zall)) normal_equations(total) else
        dual_system(Zall, y, w, a$intercept)
      lambda <<- lambda_values(a$path, sys$A, sys$w, sys$trace)
    }
    # held-out (weighted) sum of squared errors, folds x lambda
    sse <- if (!is.null(Zall)) {
      e <- heldout_sse_folds(G, rows, y, w, lambda, a$intercept)
      tick(k, TRUE)
      e
    } else t(vapply(seq_len(k), function(j) {
      train <- combine_stats(list(total, fold_stats[[j]]), sign = c(1, -1))
      e <- heldout_sse(fold_stats[[j]], solve_path(normal_equations(train), lambda))
      tick(j, TRUE)
      e
    }, numeric(length(lambda))))
    curve <- cv_curve(matrix(sse, k) / pmax(wj, .Machine$double.xmin), wj)
    list(score = min(curve$cvm), cvm = curve$cvm, cvsd = curve$cvsd, map = mp, total = total)
  }
  cost <- stat_w + k * solve_w
  cv <- cv_lengthscales(candidates, if (walk) m$median, fit_one, cost,
                        after = if (n <= D) ridge_cost(n, D) else as.double(n) * D)
  candidates <- cv$candidates
  ard <- NULL
  if (walk && isTRUE(m$ard)) {
    # "ard": one more candidate, the evidence's lengthscales started from
    # the walk's best, cross-validated like the others
    bi <- which.min(vapply(cv$cols, `[[`, 0, "score"))
    ard_st <- ard_stage(n, D)
    on.exit(ard_st$close(), add = TRUE)
    ard <- ard_optimize(m, candidates[[bi]], lambda[which.min(cv$cols[[bi]]$cvm)],
                        a$intercept, chunk_size, a$threads)
    cv$cols <- c(cv$cols, list(fit_one(unname(ard$lengthscale), length(cv$cols) + 1L)))
    candidates <- c(candidates, list(unname(ard$lengthscale)))
    cv$multiple <- c(cv$multiple, NA_real_)
    ard$score <- cv$cols[[length(cv$cols)]]$score
    ard$score_isotropic <- cv$cols[[bi]]$score
    ard_st$close()
  }
  cvm <- vapply(cv$cols, `[[`, numeric(length(lambda)), "cvm")
  cvsd <- vapply(cv$cols, `[[`, numeric(length(lambda)), "cvsd")
  dim(cvm) <- dim(cvsd) <- c(length(lambda), length(candidates))
  best <- cv$cols[[which.min(vapply(cv$cols, `[[`, 0, "score"))]]
  best_total <- best$total
  refit <- progress_stage("refit on all rows")
  if (is.null(best_total)) {
    best_total <- accumulate_stats(x, y, best$map, a$intercept, chunk_size, a$threads, FALSE, w)
  }
  sel <- cv_select(cvm, cvsd, lambda)
  fit <- ridge_from_stats(best_total, list(lambda = sel$lambda_min))
  fit <- add_fitted(fit, x, y, chunk_size, a$threads, m$offset)
  refit$close()
  progress_finish()
  search <- cv_search(candidates, cvm, lambda, sel, 1, cv$multiple, m$median, n)
  if (!is.null(ard)) {
    ard$kept <- sel$best[["lengthscale"]] == length(candidates)
    search$ard <- ard
  }
  fit <- add_model_info(fit, m, search)
  fit$call <- cl
  new_cv(lambda, candidates, cvm, cvsd, sel, fit, cl, foldid = foldid, auto = auto)
}

#' @rdname rff_cv
#' @export
rff_cv.formula <- function(formula, data, subset, weights, na.action, offset, ...) {
  cl <- fit_call(match.call(), "rff_cv")
  fam <- list(...)$family
  fit_formula(rff_cv.default, cl, ...,
              .response = if (is.null(fam) || identical(fam, "gaussian")) "numeric" else "any")
}
