# Layer 7 (families): rff_cv() for the GLM families.

# rff_cv() for a GLM family: every candidate lengthscale (sharing the draws
# of one map; for "auto", those of the downhill walk of lengthscale_walk())
# is fitted over the lambda path on all rows and on each fold
# (the held-out rows weighted 0), the measure is taken on the held-out rows,
# and the best pair and lambda_1se are chosen as for ridge regression (for
# AUC, larger is better).
glm_cv <- function(cl, x, y, family, type.measure, folds, lambda, lengthscale, map,
                   intercept, standardize, weights, offset, nlambda, lambda_min_ratio,
                   foldid, cache_mb, control, chunk_size, threads, progress, args,
                   lengthscale_given) {
  la <- cv_lengthscale_args(lengthscale, map, args)
  auto <- la$auto
  args <- la$args
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
  sgn <- if (measure == "auc") -1 else 1
  walk <- auto && is.null(map)
  fit_one <- function(ls, ci) {
    r <- glm_fit_candidate(g, rescale_map(g$map, ls), foldid, measure)
    # the path of the first lengthscale scored serves all of them
    if (is.null(g$path$lambda)) g$path$lambda <<- r$lambda
    list(score = min(sgn * r$cv$cvm, na.rm = TRUE), cvm = r$cv$cvm, cvsd = r$cv$cvsd, r = r)
  }
  L <- if (is.null(g$path$lambda)) g$path$nlambda else length(g$path$lambda)
  # after the candidates: the best's lambda solved on to the tolerance
  # (glm_result())
  fit_cost <- glm_cost(n, g$map$D, g$K, max(foldid), L)
  cv <- cv_lengthscales(candidates, if (walk) g$median, fit_one,
                        cost = glm_setup_cost(n, g$map$D, g$K, fit_cost) + fit_cost,
                        after = glm_refine_cost(n, g$map$D, g$K))
  candidates <- cv$candidates
  ard <- NULL
  if (walk && g$ard) {
    # "ard": one more candidate, the Gaussian evidence's lengthscales of the
    # coded response started from the walk's best, cross-validated like the
    # others
    bi <- which.min(vapply(cv$cols, `[[`, 0, "score"))
    ard_st <- ard_stage(n, g$map$D)
    on.exit(ard_st$close(), add = TRUE)
    ard <- ard_optimize(glm_coded(g, g), candidates[[bi]], NULL, TRUE, g$chunk_size, g$threads)
    cv$cols <- c(cv$cols, list(fit_one(unname(ard$lengthscale), length(cv$cols) + 1L)))
    candidates <- c(candidates, list(unname(ard$lengthscale)))
    cv$multiple <- c(cv$multiple, NA_real_)
    ard$score <- sgn * cv$cols[[length(cv$cols)]]$score
    ard$score_isotropic <- sgn * cv$cols[[bi]]$score
    ard_st$close()
  }
  best_r <- cv$cols[[which.min(vapply(cv$cols, `[[`, 0, "score"))]]$r
  lam <- best_r$lambda
  L <- length(lam)
  cvm <- vapply(cv$cols, function(c) c$cvm[seq_len(L)], numeric(L))
  cvsd <- vapply(cv$cols, function(c) c$cvsd[seq_len(L)], numeric(L))
  dim(cvm) <- dim(cvsd) <- c(L, length(candidates))
  sel <- cv_select(cvm, cvsd, lam, sgn)
  g$search <- cv_search(candidates, cvm, lam, sel, sgn, cv$multiple, g$median, n)
  if (!is.null(ard)) {
    ard$kept <- sel$best[["lengthscale"]] == length(candidates)
    g$search$ard <- ard
  }
  fit <- glm_result(g, best_r, measure, best = sel$best[["lambda"]])
  progress_finish()
  fit$call <- cl
  new_cv(lam, candidates, cvm, cvsd, sel, fit, cl, foldid = foldid, auto = auto,
         family = g$family, type.measure = measure)
}
