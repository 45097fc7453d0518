# Layer 7 (families): rff_cv() on statistics, with the kept chunks as folds.

# rff_cv() on statistics with kept chunks: fold j is chunk j, its model
# fitted from the total minus chunk j's statistics, scored on chunk j's
# statistics; the refit uses all chunks.
cv_from_stats <- function(stats, lambda, nlambda, lambda_min_ratio, supplied, call) {
  allowed <- c("x", "lambda", "nlambda", "lambda_min_ratio", "progress")
  supplied[!nzchar(supplied)] <- "..."
  bad <- setdiff(supplied, allowed)
  if (length(bad)) {
    rff_abort(bad[1L], sprintf(paste0(
      "`%s` cannot be given with statistics: the folds are the chunks kept by ",
      "rff_stats_apply(keep_chunks = TRUE) and the map is fixed; give only `lambda`, ",
      "`nlambda` or `lambda_min_ratio`"), bad[1L]))
  }
  check_stats(stats, "x")
  folds <- stats$chunks
  if (length(folds) < 2L) {
    rff_abort("x", paste0(
      "`x` keeps no per-chunk statistics (at least 2 are needed); make it with ",
      "rff_stats_apply(..., keep_chunks = TRUE) to cross-validate with the chunks as folds"))
  }
  path <- check_path(lambda, nlambda, lambda_min_ratio)
  total <- stats
  total$chunks <- NULL
  k <- length(folds)
  sys <- normal_equations(total)
  lambda <- lambda_values(path, sys$A, sys$w)
  sse <- t(vapply(seq_len(k), function(j) {
    train <- combine_stats(list(total, folds[[j]]), "x", sign = c(1, -1))
    p <- solve_path(normal_equations(train), lambda)
    heldout_sse(folds[[j]], p)
  }, numeric(length(lambda))))
  # weighted as rff_cv() on data: a fold counts by its total weight
  nj <- vapply(folds, function(s) s$n, numeric(1))
  wj <- vapply(folds, stats_wsum, numeric(1))
  curve <- cv_curve(matrix(sse, k) / pmax(wj, .Machine$double.xmin), wj)
  cvm <- matrix(curve$cvm, ncol = 1L)
  cvsd <- matrix(curve$cvsd, ncol = 1L)
  sel <- cv_select(cvm, cvsd, lambda)
  fit <- ridge_from_stats(total, list(lambda = sel$lambda_min))
  fit$call <- call
  new_cv(lambda, list(total$map$lengthscale), cvm, cvsd, sel, fit, call, foldid = NULL,
         nfolds = k, fold_n = stats::setNames(nj, names(folds)),
         class = c("rff_cv_chunks", "rff_cv"))
}
