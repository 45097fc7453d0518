# Layer 7 (families): rff_glm(), kernel logistic, multinomial and Poisson
# regression: its documentation and entry points (the machinery: glm-fit.R).

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
#' through their proportions only (the fit divides them by the largest
#' first, so extreme weights fit as any multiple of them). The deviance
#' (of the weights given) is 2 sum w_i (l_i -
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
#' from the previous one (from the third value on, from the line through the
#' two fits before it, in log lambda, when the objective is lower there: on
#' mlbench::Vehicle the path's passes over the rows fell from 361 to 190).
#' The preconditioner is estimated on max(2000, D) evenly spaced rows (all
#' rows when there are fewer), not on random ones: with `map` and `lambda`
#' given, a fit draws no random numbers and is the same whatever the state
#' of R's random number generator.
#'
#' When the features are cached and there are fewer rows than features,
#' the fit is solved in the span of the rows, with the same objective:
#' every gradient Z'r / W + lambda B lies in that span, so every iterate
#' does, and on an orthonormal basis V of it (from the n x n
#' matrix ZZ', turned to the eigenvectors of the preconditioner, which
#' becomes diagonal) the features are the r <= n columns of ZV and
#' B = V theta with |B| = |theta|; a pass then costs O(n r K) instead of
#' O(n D K). With cached features and at least as many rows as features,
#' the solver works on the preconditioner's eigenvectors V, where it is
#' diagonal, and runs in C (on 2,000 rows, D = 1000, the cross-validated
#' path took a third of the CPU time it took before): either the features
#' are turned once to V (2 n D^2 flops, in place), or they stay where they
#' lie and each pass turns its coefficients (V B and V'Z'R, 4 D^2 K flops),
#' whichever the passes planned make cheaper. The features stay unturned
#' when there are more than 2 K rows per pass planned (K classes, one for
#' the binomial and Poisson families): on 32,000 rows of a binary
#' response (D = 1,856) the turn took 5.4 s of a 22-24 s fit, now 16 s
#' in all. This was chosen by measurement over Newton's
#' method (IRLS), whose D x D weighted cross-product per iteration costs
#' n D^2 flops (tens of seconds at n = 100,000, D = 1000 with R's reference
#' BLAS) where a pass costs n D; see bench/RESULTS.md.
#'
#' **Convergence.** At each lambda the iterations stop when the decrease
#' predicted by the preconditioner, g'P g / 2, and the last change of the
#' objective are both at most `epsilon` (|F - F0| + 0.1) (`control`), F0
#' the loss of the saturated model (0 for the binomial and multinomial
#' families; for Poisson counts, sum w_i (y_i - y_i log y_i) / W, so that
#' F - F0 is the fit's deviance / (2 W) plus the penalty), or after
#' `maxit` iterations, with a warning of class `"rff_convergence"` naming
#' the lambdas that did not converge. With the default `epsilon = 1e-6`
#' the objective ends at most about a millionth of its value above its
#' minimum (up to tens of times that at the smallest lambdas, where the
#' preconditioner overestimates the curvature), far below the sampling
#' error of a deviance; on mlbench::LetterRecognition the path took a
#' third of the passes of 1e-8 (the folds two thirds), for the same lambda
#' and test accuracy. Give a smaller `epsilon` for coefficients to more
#' digits. A path with a cross-validation (or a held-out set) is solved to
#' 10 times `epsilon`, as warm starts for the next lambda and the folds
#' need no more, and `lambda_best` is then solved on to `epsilon` from
#' there: the coefficients at the other lambdas (`coef(fit, lambda =)`)
#' are those of the looser tolerance. On mlbench::LetterRecognition the
#' path, its held-out fold and this last solve took 139 passes over the
#' rows instead of 173, for the same lambda and test accuracy.
#'
#' **Lambda.** With `lambda = NULL` the path has `nlambda` log-spaced values
#' from lambda_max, the curvature at the start times the total variance of
#' the features (about one degree of freedom), down to
#' `lambda_min_ratio * lambda_max`. When the path has several values,
#' `lambda_best` minimizes the `folds`-fold cross-validated deviance: at
#' each lambda, each fold is fitted with its held-out rows weighted zero,
#' to 1000 times `epsilon` (at most 1e-4), started from its own fit at the
#' lambda before moved by the change of the fit on all rows between the two
#' lambdas (at the first lambda, and for the Poisson family, whose loss
#' such a start could make overflow, from the fit on all rows), with its
#' own curvature pairs (on mlbench::Vehicle the folds' passes fell from 958
#' to 342). With cached features its linear predictor is moved the same way
#' (it is linear in the coefficients; the folds keep theirs while they take
#' at most 256 MB), so evaluating a fold's start costs the product Z'R
#' only, not Z B as well (on mlbench::LetterRecognition the folds took
#' 21.8 s instead of 27.4 s).
#' A path chosen from the data stops once three consecutive lambdas have
#' not improved on the smallest CV deviance (smaller lambdas cost the most
#' iterations and only overfit more), so `lambda` may be shorter than
#' `nlambda`. When `lambda_min_ratio` is not given and the last value is
#' the best, the path goes on at the same spacing, one value at a time
#' while the newest is the best (to `lambda_min_ratio^2 * lambda_max` at
#' most), and drops a value whose fits did not converge; so `lambda` may
#' also be longer than `nlambda` (on LetterRecognition: accuracy 95.35% to
#' 96.08%, bench/RESULTS-frontier.md). On more than 2,000 rows (unless
#' `foldid` is given, or
#' `holdout = FALSE`) lambda_best is chosen on one held-out set instead, the
#' rows of the first of the `folds` folds, fitted as a fold is: each fold's
#' passes run over all n rows, so the k folds cost about k times the path
#' (`cvsd` is then the standard error of the held-out rows' mean; on 4,000
#' rows of mlbench::LetterRecognition 6.7 s instead of 10.6 s, on 16,000 27
#' s instead of 49 s, with the same lambda_best and test accuracy;
#' bench/RESULTS-midsize.md). [rff_cv()] with a
#' `family` gives the full cross-validation (more folds, other measures,
#' the one-standard-error rule, several lengthscales).
#'
#' **Defaults from the data** are those of [rff_ridge()]: `standardize =
#' TRUE`, D from the number of rows, and `lengthscale = "auto"`, which here
#' walks over the median heuristic times 2^(j / 2) as [rff_ridge()] does
#' (from j = 0 downhill, between 1/8 and 16 times the heuristic), comparing
#' the candidates by the leave-one-out error of ridge regression of the
#' class indicators (binomial, multinomial) or the counts (Poisson) on the
#' features over the range of lambda the path covers (down to
#' `lambda_min_ratio`; with `lambda` given, down to 1e-6), on a
#' subsample of at most 5,000 evenly spaced rows (on 401 to 2,000 rows, on the
#' map's first 400 features, as in [rff_ridge()]; on more than 5,000 rows,
#' on 5,000 random ones and the map's first 1,000 features, as
#' [rff_ridge()] scores on more than 10,000, the GLM then fitted with all
#' of them); the candidates rescale the same draws. With the default D, when the winner's first 200 features
#' score within 1% of its 400 by that criterion, the GLM is fitted on those
#' 400 features (as in [rff_ridge()]; on mlbench::PimaIndiansDiabetes, 576
#' rows, 1.2 s instead of 2.2 s, test accuracy 75.5% against 75.0%; on
#' mlbench::Vehicle, BreastCancer and mlbench's spirals, twonorm and
#' waveform it fitted all of them: bench/RESULTS-features.md). `"median"`
#' uses the median heuristic and a number is used as given.
#' [rff_cv()] with a `family` compares lengthscales by cross-validation of
#' the deviance instead.
#'
#' **Time against D.** A pass costs about 4 n D K flops (K classes; 1 for
#' the binomial and Poisson families). On mlbench::LetterRecognition
#' (16,000 rows, 26 classes; bench/RESULTS-frontier.md) the default D =
#' 1,224 took 0.78 times `kernlab::ksvm()`'s time for 95.35% test accuracy
#' (ksvm 93.05%), `D = 600` 0.38 times for 94.62%, `D = 400` 0.26 for 93.62%.
#'
#' `lengthscale = "ard"` (one lengthscale per input column): after that
#' search, the lengthscales maximizing the Gaussian log evidence of the
#' same coded responses (several responses for the multinomial family,
#' sharing lambda; see `lengthscale = "ard"` in [rff_ridge()]), started
#' from the isotropic choice, are kept when the same ridge leave-one-out
#' error is at least 3 standard errors (of the rows' paired differences)
#' below the isotropic one, as in [rff_ridge()]. This criterion is used, rather
#' than a Laplace approximation of the GLM's own evidence, because it is the
#' one the GLM's "auto" search already trusts, is exact and cheap, and its
#' gradient is that of ridge regression; the GLM is then fitted by its own
#' likelihood at the lengthscales chosen. In [rff_cv()] with a `family`, the
#' ARD lengthscales are one more candidate, cross-validated by the family's
#' measure like the others. [rff_relevance()] gives 1 / lengthscale.
#'
#' The formula method handles `data`, `subset`, `weights`, `na.action` and
#' `offset` as [stats::glm()] does; factors among the predictors are
#' expanded by [stats::model.matrix()], and ordered factors enter as the
#' ranks of their levels, as in [rff_ridge()].
#'
#' @param x A numeric matrix, numeric data frame or vector.
#' @param y The response (see Details).
#' @param family `"binomial"`, `"multinomial"` or `"poisson"`; by default
#'   from the response (see Details).
#' @param lambda `NULL` (a path of `nlambda` values) or non-negative
#'   values.
#' @param folds Folds of the cross-validation that chooses `lambda_best`
#'   on a path (at least 2); with `holdout`, the rows of the first fold
#'   (a `folds`-th of them) are held out.
#' @param foldid Optional fold of each row (integers 1..k); overrides
#'   `folds`.
#' @param holdout Whether `lambda_best` is chosen on the rows of fold 1
#'   held out (a validation set) rather than by cross-validation over all
#'   folds. `NULL` (the default): on more than 2,000 rows when `foldid` is
#'   not given and fold 1 has at least two rows of positive weight. See
#'   Details (Lambda).
#' @param cache_mb Memory, in megabytes, the n x D feature matrix may take
#'   to be cached for the passes; default `getOption("rff.cache_mb", 1024)`.
#'   `0` streams every pass (memory O(`chunk_size` D + D^2) whatever n).
#' @param control A list with `epsilon` (default 1e-6) and `maxit`
#'   (default 500), see Details.
#' @param nlambda,lambda_min_ratio Length and range of the data-driven
#'   lambda path; when `lambda_min_ratio` is not given, a path whose best
#'   value is its last goes on below it (see Details).
#' @param estimator `"likelihood"` (the default): the penalized likelihood
#'   above, over its lambda path, lambda_best by cross-validation or a
#'   held-out fifth. `"ls"` (binomial and multinomial families): regularized
#'   least squares of the class indicators (the 0/1 response for the
#'   binomial family) on the features, with ridge regression's lambda path
#'   (50 values from trace(Z'Z)/n down to 1e-6 of it, going on past its end
#'   while the best is the last) and lambda_best by its exact leave-one-out
#'   squared error (on at most 5,000 evenly spaced rows), all from one pass
#'   over the rows and one eigendecomposition of the D x D statistics, as
#'   [rff_ridge()] does; the probabilities are a softmax (logistic for the
#'   binomial family) of the least-squares scores times a temperature, plus
#'   an offset per class, fitted by likelihood on the leave-one-out scores
#'   of at most 2,000 of those rows. The coefficients are those of that
#'   linear predictor, so `predict()` works as for any fit; `lambda` is then
#'   on ridge regression's scale (`lambda` given: those values, the best by
#'   leave-one-out when several), `folds`, `foldid`, `holdout` and
#'   `control` are not used, and offsets are refused. The fit keeps the
#'   path's LOO curve and the calibration in `ls`. It costs n D^2 flops for
#'   the statistics plus one D x D eigendecomposition, where the default
#'   costs tens of passes of 4 n D K flops over every lambda and its
#'   held-out fit (bench/RESULTS-ls.md).
#' @inheritParams rff_ridge
#' @param ... For the default and formula methods: arguments of [rff_map()]
#'   that draw the map when `map` is `NULL` (`D`, `kernel`, `lengthscale`,
#'   `nu`, `order`, `variant`, `sampler`); the formula method passes the
#'   other arguments of the default method too.
#' @return An object of class `c("rff_glm", "rff_fit")`: a list with `coefficients` (D x
#'   L, or D x K x L for the multinomial family), `intercept` (L, or K x L),
#'   `lambda`, `deviance` (training deviance at each lambda),
#'   `null.deviance`, `iterations`, `converged`, `cvm`/`cvsd`
#'   (cross-validated deviance per row and its standard error; with
#'   `holdout`, the held-out rows' mean deviance and its standard error; or
#'   `NULL`),
#'   `folds`, `holdout` (the number of held-out rows that chose
#'   `lambda_best`, or `NULL` after a cross-validation),
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
#' n <- 300
#' x <- matrix(runif(2 * n, -1, 1), n, 2)
#' y <- factor(ifelse(rowSums(x^2) < 0.5, "inside", "outside"))
#' fit <- rff_glm(x, y, D = 100, lengthscale = 0.5, nlambda = 10)
#' fit
#' mean(predict(fit, x, type = "class") == y)
#' head(predict(fit, x, type = "response"))   # P(outside)
#' # three classes, formula interface
#' d <- data.frame(u = x[, 1], v = x[, 2],
#'                 g = cut(atan2(x[, 2], x[, 1]), 3, labels = c("a", "b", "c")))
#' fit3 <- rff_glm(g ~ u + v, data = d, D = 100, lengthscale = 0.5, lambda = 1e-3)
#' table(predict(fit3, d, type = "class"), d$g)
#' # counts
#' cnt <- rpois(n, exp(1 + sin(3 * x[, 1])))
#' fitp <- rff_glm(x, cnt, family = "poisson", D = 100, lengthscale = 0.5, lambda = 1e-3)
#' summary(fitp)
#' @export
rff_glm <- function(x, ...) UseMethod("rff_glm")

#' @rdname rff_glm
#' @export
rff_glm.default <- function(x, y, family = c("binomial", "multinomial", "poisson"),
                            lambda = NULL, map = NULL, intercept = TRUE,
                            standardize = TRUE, weights = NULL, offset = NULL,
                            nlambda = 20, lambda_min_ratio = 1e-4, folds = 5,
                            foldid = NULL, holdout = NULL,
                            cache_mb = getOption("rff.cache_mb", 1024),
                            control = list(), chunk_size = NULL, threads = NULL,
                            progress = interactive(), estimator = c("likelihood", "ls"), ...) {
  cl <- fit_call(match.call(), "rff_glm")
  check_required(c("x", "y"))
  estimator <- if (identical(estimator, c("likelihood", "ls"))) "likelihood" else
    check_string(estimator, "estimator", c("likelihood", "ls"))
  if (!is.null(holdout)) holdout <- check_flag(holdout, "holdout")
  close_progress <- progress_call(progress, "rff_glm")
  on.exit(close_progress(), add = TRUE)
  g <- glm_setup(x, y, family, lambda, map, intercept, standardize, weights, offset,
                 nlambda, lambda_min_ratio, cache_mb, control, chunk_size, threads,
                 progress, list(...), "rff_glm", extend = missing(lambda_min_ratio))
  if (estimator == "ls") {
    fit <- glm_ls_fit(g, check_path(lambda, 50, 1e-6, extend = is.null(lambda)))
    progress_finish()
    fit$call <- cl
    return(fit)
  }
  L_given <- length(g$path$lambda)
  cv <- is.null(g$path$lambda) || L_given > 1L
  holdout_given <- !is.null(holdout)
  if (is.null(holdout)) holdout <- is.null(foldid) && nrow(g$x) > glm_holdout_rows
  foldid <- if (cv) check_foldid(foldid, folds, nrow(g$x), !missing(folds)) else NULL
  if (cv && holdout) holdout <- glm_holdout_usable(g, foldid, holdout_given)
  st <- progress_stage("fit")
  r <- glm_fit_candidate(g, g$map, foldid, "deviance", stop_early = TRUE,
                         holdout = holdout, refine = cv)
  fit <- glm_result(g, r, "deviance")
  st$close()
  progress_finish()
  fit$call <- cl
  fit
}

#' @rdname rff_glm
#' @export
rff_glm.formula <- function(formula, data, subset, weights, na.action, offset, ...) {
  cl <- fit_call(match.call(), "rff_glm")
  fit_formula(rff_glm.default, cl, ..., .response = "any")
}
