# Layer 7 (families): the machinery under rff_glm(): its setup from the
# arguments, the lengthscale choice, the fit at one map (the lambda path
# with its cross-validation) and the "rff_glm" object it returns.

# Checks the arguments of rff_glm() / rff_cv(family =) and prepares the
# fit through the model pipeline (check_fit_args(), model_setup()) with the
# response coded for its family and the offset on the linear predictor,
# plus the solver's memory and control: the fit's problem `g` (lengthscale
# "auto": chosen by glm_auto_lengthscale(), unless `keep_candidates`, when
# the base map and the candidates are returned for a cross-validation to
# compare).
glm_setup <- function(x, y, family, lambda, map, intercept, standardize, weights, offset,
                      nlambda, lambda_min_ratio, cache_mb, control, chunk_size, threads,
                      progress, args, caller, keep_candidates = FALSE, extend = FALSE) {
  a <- check_fit_args(x, y, lambda, intercept, nlambda, lambda_min_ratio, threads, progress,
                      response = function(y, n) glm_response(y, family, n), extend = extend)
  resp <- a$y
  cache_mb <- check_cache_mb(cache_mb)
  control <- check_glm_control(control)
  m <- model_setup(a, standardize, weights, offset, map, args, caller, family = resp$family)
  check_stats_memory(m$map$D, 3, !is.null(map))
  chunk_size <- check_chunk_size(chunk_size, m$map$D)
  g <- list(x = m$x, xnames = colnames(a$x), resp = resp, family = resp$family,
            K = resp$K, y = resp$y, weights = m$weights, weights_given = m$weights_given,
            weight_scale = m$weight_scale, offset = m$offset, path = a$path,
            intercept = a$intercept, std = m$std, cache_mb = cache_mb, control = control,
            chunk_size = chunk_size, threads = a$threads, progress = a$progress,
            map = m$map, candidates = m$candidates, median = m$median, search = NULL,
            ard = isTRUE(m$ard), groups = m$groups)
  if (!is.null(m$candidates) && !keep_candidates) {
    g$search <- glm_auto_lengthscale(g, m)
    g$map <- rescale_map(m$map, search_lengthscale(g$search))
    # the default D settled on the features the candidates were scored on
    if (isTRUE(g$search$D < g$map$D)) g$map <- ard_submap(g$map, g$search$D)
    g$candidates <- NULL
  }
  g
}

# The warnings of class "rff_convergence" for the lambdas (and the CV fits)
# of the candidate fit `r` that did not converge in `maxit` iterations.
glm_convergence_warnings <- function(r, maxit, caller = "rff_glm") {
  if (!all(r$full$converged)) {
    warning(structure(class = c("rff_convergence", "warning", "condition"), list(
      message = sprintf(
        "%s: the fit did not converge in %d iterations at lambda = %s; increase `control$maxit` or `lambda`",
        caller, maxit, paste(format(r$lambda[!r$full$converged], digits = 4), collapse = ", ")),
      call = NULL)))
  }
  if (!is.null(r$cv) && !r$cv$converged) {
    # (a held-out set: one fit without its rows)
    what <- if (is.null(r$holdout)) "some cross-validation fits" else
      "the fit without the held-out rows"
    warning(structure(class = c("rff_convergence", "warning", "condition"), list(
      message = sprintf("%s: %s did not converge; increase `control$maxit`", caller, what),
      call = NULL)))
  }
}

# lengthscale = "auto" for rff_glm(): the candidates compared by the exact
# leave-one-out error of ridge regression of the class indicators (or the
# counts) on the features, on at most 5,000 random rows, with the machinery
# of rff_ridge(); all candidates rescale the same draws. "ard": then the
# lengthscales of the Gaussian evidence of those responses (ard_select()),
# kept when that LOO error is clearly lower (ard_keep()).
glm_auto_lengthscale <- function(g, mm) {
  m <- glm_coded(g, mm)
  path <- glm_search_path(g$path)
  fit_rows <- function(map, r, ...) {
    ridge_rows_fit(m, map, r, path, TRUE, g$chunk_size, g$threads, "loo", ...)
  }
  # the progress plan after the search: the GLM's setup, path and folds (as
  # many as rff_glm()'s default)
  L <- if (is.null(g$path$lambda)) g$path$nlambda else length(g$path$lambda)
  # (one held-out fold on more than glm_holdout_rows rows, by default)
  nf <- if (nrow(g$x) > glm_holdout_rows) 1L else 5L
  fit_cost <- glm_cost(nrow(g$x), mm$map$D, g$K, nf, L, 5L, refine = TRUE)
  after <- glm_setup_cost(nrow(g$x), mm$map$D, g$K, fit_cost) + fit_cost
  s <- select_lengthscale(m, fit_rows, after = after, loo_cols = ncol(m$y) * path$nlambda)
  if (isTRUE(mm$ard)) {
    ard_st <- ard_stage(nrow(m$x), mm$map$D)
    s <- ard_select(m, s, fit_rows, TRUE, g$chunk_size, g$threads)
    ard_st$close()
  }
  s$fit <- s$eig <- s$subset <- s$errors <- NULL
  s$criterion <- "ridge LOO"
  s
}

# The data of the ridge regressions that choose a GLM's lengthscale: at most
# 5,000 random rows, the class indicators (or the 0/1 response, or the
# counts) as responses, the base map of `mm` and its candidates.
glm_coded <- function(g, mm) {
  n <- nrow(g$x)
  rows <- if (n > 5000L) sort(sample.int(n, 5000L)) else seq_len(n)
  Y <- if (g$family == "multinomial") {
    outer(g$y[rows], seq_len(g$K), `==`) + 0
  } else matrix(g$y[rows], ncol = 1L)
  w <- if (is.null(g$weights)) NULL else g$weights[rows]
  list(x = g$x[rows, , drop = FALSE], y = Y, weights = w, map = mm$map,
       candidates = mm$candidates, median = mm$median, ard = isTRUE(mm$ard),
       groups = mm$groups, default_D = isTRUE(mm$default_D), subsampled = length(rows) < n)
}

# One fit of the problem at a map: the path on all rows and, with
# `foldid`, its cross-validation by `measure`. Returns the problem, the
# path, the preconditioner and the CV.
glm_fit_candidate <- function(g, map, foldid, measure, stop_early = FALSE,
                              holdout = FALSE, refine = FALSE, turn = NULL) {
  # the progress of the features and the preconditioner (glm_setup_cost()):
  # their share of the candidate's plan
  n <- nrow(g$x)
  L <- if (is.null(g$path$lambda)) g$path$nlambda else length(g$path$lambda)
  nf <- if (is.null(foldid)) 0L else if (holdout) 1L else max(foldid)
  fit_cost <- glm_cost(n, map$D, g$K, nf, L, if (is.null(foldid)) 0L else max(foldid),
                       refine = refine)
  setup <- glm_setup_cost(n, map$D, g$K, fit_cost)
  # the path's share of the fit, the rest glm_result()'s refinement
  path_share <- 1 - refine * glm_refine_cost(n, map$D, g$K) / fit_cost
  st <- progress_stage("features and preconditioner", 1, share = setup / (setup + fit_cost))
  on.exit(st$close(), add = TRUE)
  prob <- glm_problem(g$x, g$y, g$family, g$K, g$offset, g$weights, map, g$chunk_size,
                      g$threads, g$cache_mb, g$intercept, reduce = TRUE)
  theta0 <- matrix(0, prob$D + 1L, g$K)
  if (g$intercept) theta0[1L, ] <- glm_start(prob, prob$w)
  P <- glm_precond(prob, theta0, if (is.null(g$path$lambda)) 2L else length(g$path$lambda))
  if (!is.null(prob$basis) || (prob$cached && !is.null(P$vectors))) {
    # cached features (or their span of the rows) on the preconditioner's
    # eigenvectors V, where it becomes diagonal, with the same loss and
    # penalty (|V theta| = |theta|): the features turned to V (2 n D^2
    # flops once), or left where they lie and the coefficients turned on
    # every pass (`vmap`: 2 D^2 K flops each way), whichever costs less
    # (glm_turns_features(); `turn` chooses)
    if (is.null(turn)) {
      turn <- !is.null(prob$basis) || glm_turns_features(n, map$D, g$K, fit_cost)
    }
    if (turn) {
      # 512 rows at a time and in place (this function holds the only
      # reference to Z), so that no second copy of the features is made
      Z <- prob$Z
      prob$Z <- NULL
      for (from in seq(1L, nrow(Z), by = 512L)) {
        r <- from:min(nrow(Z), from + 511L)
        Z[r, ] <- .Call(C_rff_ridge_project, Z[r, , drop = FALSE], P$vectors, g$threads)
      }
      prob$Z <- Z
      rm(Z)
      prob$basis <- if (is.null(prob$basis)) P$vectors else
        .Call(C_rff_ridge_project, prob$basis, P$vectors, g$threads)
    } else {
      prob$vmap <- prob$basis <- P$vectors
    }
    P$zbar <- drop(crossprod(P$vectors, P$zbar))
    P$vectors <- NULL
  }
  lambda <- glm_lambda_values(g$path, P)
  st$close()
  if (is.null(foldid)) {
    full <- glm_path(prob, lambda, P, g$control)
    cv <- NULL
  } else {
    early <- stop_early && is.null(g$path$lambda)
    cv <- glm_cv_path(prob, c(lambda, if (early) path_extension(lambda, g$path)), P,
                      g$control, glm_row_folds(prob, foldid, holdout), measure, g$progress,
                      stop_early = early, loose = TRUE, share = path_share,
                      nominal = length(lambda))
    full <- cv$full
    lambda <- full$lambda
  }
  list(prob = prob, P = P, lambda = lambda, full = full, cv = cv, foldid = foldid,
       holdout = if (!is.null(cv) && holdout) sum(foldid == 1L & prob$w > 0))
}

# The "rff_glm" object of a candidate fit, at lambda_best (the CV's best,
# or `best` when given).
glm_result <- function(g, r, measure, best = NULL) {
  full <- r$full
  L <- length(r$lambda)
  if (is.null(best)) best <- if (is.null(r$cv)) L else best_by_measure(r$cv$cvm, measure)
  # a cross-validated path was solved to glm_path_loose times the tolerance
  if (isTRUE(full$loose)) {
    st <- progress_stage("lambda_best to the tolerance",
                         glm_refine_cost(r$prob$n, r$prob$D, g$K))
    full <- r$full <- glm_refine(r$prob, r$P, full, r$lambda, best, g$control)
    st$close()
  }
  glm_convergence_warnings(r, g$control$maxit)
  prob <- r$prob
  theta <- matrix(full$coef[, , best], prob$D + 1L, g$K)
  eta <- glm_pass(prob, theta)$eta
  # the deviances of the weights given (the fit used them divided by the largest)
  ws <- if (is.null(g$weight_scale)) 1 else g$weight_scale
  dev <- 2 * (full$loss - saturated_loss(g$family, g$y, prob$w)) * ws
  null_dev <- glm_null_deviance(prob) * ws
  full$coef <- lift_coef(full$coef, prob$basis, g$threads)
  coef <- full$coef[-1L, , , drop = FALSE]
  a0 <- matrix(full$coef[1L, , ], g$K, L)
  if (g$K == 1L) {
    coef <- matrix(coef, prob$map$D, L)
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
              holdout = r$holdout,
              lambda_best = r$lambda[best], best = best, family = g$family,
              levels = g$resp$levels, linear.predictors = eta, y = g$y,
              prior.weights = g$weights_given, standardize = g$std,
              lengthscale_search = g$search, has_offset = !is.null(g$offset),
              weighted = !is.null(g$weights), has_intercept = g$intercept,
              map = r$prob$map, n = sum(prob$w > 0), xnames = g$xnames,
              cached = prob$cached,
              df_sample = list(x = g$x[rows, , drop = FALSE], y = g$y[rows],
                               offset = if (is.null(g$offset)) NULL else g$offset[rows, , drop = FALSE],
                               w = prob$w[rows], W = prob$W))
  class(fit) <- c("rff_glm", "rff_fit")
  keep_fit_fields(fit)
}
