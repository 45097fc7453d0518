# Layer 5 (the model pipeline): the controls of the GLM solver and their
# defaults, shared by rff_glm(), rff_cv(family =) and rff_glm_apply(): the
# memory the features may be cached in, the tolerance and iteration limit,
# when lambda is chosen on one held-out fold, and the lambdas over which
# the lengthscale search scores its candidates.

check_cache_mb <- function(cache_mb) {
  if (!is_number(cache_mb) || length(cache_mb) != 1L || is.na(cache_mb) || cache_mb < 0) {
    rff_abort("cache_mb", sprintf("`cache_mb` must be a number of megabytes >= 0, got %s",
                                  show_value(cache_mb)))
  }
  as.double(cache_mb)
}

# The default of `control$epsilon`. On mlbench::LetterRecognition (16,000
# rows, 26 classes, the default fit) 1e-6 took 136 passes over the rows on
# the path where 1e-8 took 390 (and the folds, at their cap of 1e-4, 191
# where at 1e-5 they took 296), with the same lambda_best and test
# accuracy (95.13%);
# bench/RESULTS-defaults.md. glmnet's default `thresh` is 1e-7.
glm_epsilon <- 1e-6

# A cross-validated path (rff_glm(), rff_cv() with a `family`) is solved
# to this many times `control$epsilon` on all rows, and its lambda_best is
# then solved on to `epsilon` (glm_refine()): the path's solutions serve as
# warm starts and as the folds' moved starts, which a looser tolerance
# serves as well. On mlbench::LetterRecognition (16,000 rows, the default
# fit) the path, its held-out fold and the refinement took 139 passes over
# the rows instead of 173 (30 times: 135), with the same lambda_best and
# test accuracy; bench/RESULTS-defaults.md.
glm_path_loose <- 10

# rff_glm() chooses lambda_best on one held-out fold, not by
# cross-validation over all of them, on more rows than this (`holdout =
# NULL`). A fold's fit costs passes over all n rows, so k folds cost about
# k times the path; on mlbench::LetterRecognition (16,000 rows) the fit took
# 27 s instead of 49 s, with the same lambda_best and test accuracy, and the
# held-out fifth (3,200 rows) measured the deviance at lambda_best to a
# standard error of 5% of itself. Above 2,000 rows (a held-out fifth of at
# least 400 rows) the same held on the data sets of bench/midsize.R: 4,000
# and 8,000 rows of LetterRecognition took 6.7 and 8.3 s instead of 10.6
# and 14.3 s, mlbench::Satellite, kernlab::spam, mlbench's waveform and
# ringnorm 13-43% less, all with the same lambda_best; on twonorm it was
# one step smaller (test accuracy 98.1% against 98.3%)
# (bench/RESULTS-midsize.md). At most 2,000 rows, the small data sets of
# bench/defaults.R, keep the full cross-validation.
glm_holdout_rows <- 2000

# Whether fold 1 of `foldid` can measure the fits as a held-out set: at
# least two rows of positive weight. Otherwise `holdout = TRUE` (`given`) is
# an error and the default cross-validates over all folds.
glm_holdout_usable <- function(g, foldid, given) {
  held <- if (is.null(g$weights)) sum(foldid == 1L) else sum(g$weights[foldid == 1L] > 0)
  if (held >= 2L) return(TRUE)
  if (given) {
    rff_abort("holdout", sprintf(
      "`holdout = TRUE` needs at least 2 rows of positive weight in fold 1 to hold out, but it has %d",
      held))
  }
  FALSE
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
  eps <- if (is.null(control$epsilon)) glm_epsilon else control$epsilon
  if (!is_number(eps) || length(eps) != 1L || !is.finite(eps) || eps <= 0) {
    rff_abort("control", sprintf("`control$epsilon` must be a positive number, got %s",
                                 show_value(eps)))
  }
  maxit <- if (is.null(control$maxit)) 500L else check_count(control$maxit, "control")
  list(epsilon = as.double(eps), maxit = as.integer(maxit))
}

# The lambdas over which lengthscale = "auto" scores a GLM's candidates by
# ridge leave-one-out (glm_auto_lengthscale()): for a path chosen from the
# data, the range that path covers, from the same one-degree-of-freedom
# lambda_max down to `lambda_min_ratio` times it, at the spacing of
# rff_ridge()'s default path (50 values over 1e-6; 34 values for the
# default 1e-4), and at most 100 values (wider beyond 1e-12), since each
# costs a leave-one-out pass over the rows; for given lambdas, rff_ridge()'s
# default path. Scored beyond the GLM's range, a long lengthscale won with
# a lambda the GLM never reaches: on mlbench::LetterRecognition (16,000
# rows) the search chose 0.5 times the median heuristic (95.00% test
# accuracy); over the path's range it chooses 0.354 (95.35%; 95.53% and
# 96.03% from two other seeds), with fewer leave-one-out sums. On the
# smaller sets of bench/defaults.R and bench/midsize.R the test accuracy
# was the same, but on 8,000 rows of LetterRecognition (0.354 for 0.5:
# 93.12% for 93.03%).
glm_search_path <- function(path) {
  ridge <- list(lambda = NULL, nlambda = 50L, ratio = 1e-6)
  if (!is.null(path$lambda)) return(ridge)
  # steps of rff_ridge()'s spacing from lambda_max down to the ratio (a
  # hair less, so that an exact count is not rounded up)
  steps <- ceiling((ridge$nlambda - 1L) * log(path$ratio) / log(ridge$ratio) - 1e-9)
  list(lambda = NULL, ratio = path$ratio, nlambda = as.integer(min(100, max(1, steps) + 1)),
       extend = isTRUE(path$extend))
}
