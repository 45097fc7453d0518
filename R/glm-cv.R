# Layer 7 (families): rff_cv() for the GLM families.

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
  sel <- cv_select(cvm, cvsd, lam, sgn)
  g$search <- cv_search(candidates, cvm, lam, sel, sgn, auto, g$median, n)
  fit <- glm_result(g, best_r, measure, best = sel$best[["lambda"]])
  fit$call <- cl
  new_cv(lam, candidates, cvm, cvsd, sel, fit, cl, foldid = foldid, auto = auto,
         family = g$family, type.measure = measure)
}
