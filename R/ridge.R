# Layer 7 (families): rff_ridge(), kernel ridge regression on random features.

#' Kernel ridge regression on random Fourier features
#'
#' Fits f(x) = z(x)'beta (+ intercept) with
#' beta = (Z'Z + n lambda I)^-1 Z'y, the random-feature approximation of
#' kernel ridge regression, by streaming the rows through the feature map:
#' Z'Z (BLAS `dsyrk`) and Z'y are accumulated over blocks of `chunk_size`
#' rows by [rff_stats()], so the n x D feature matrix is never held and
#' memory beyond the inputs is O(D^2 + `chunk_size` * D) whatever n is.
#'
#' **Intercept.** With `intercept = TRUE` the columns of Z and y are centered
#' (algebraically, from the statistics) and the intercept is not penalized:
#' beta = (Zc'Zc + n lambda I)^-1 Zc'yc and intercept = mean(y) -
#' mean(z)'beta.
#'
#' **Defaults chosen from the data** (the map arguments in `...` and
#' `standardize`), so that a first fit needs no tuning:
#' \describe{
#'   \item{`standardize = TRUE`}{The kernel sees centred columns of unit
#'     variance (weighted, with `weights`; a formula's factor dummies are
#'     centred only, see below): x is replaced by
#'     (x - center) / scale, stored in the fit as `standardize` and applied
#'     by [predict()]. A constant column is centred to zero (scale 1), with a
#'     message. A given `map` then acts on the standardized columns.}
#'   \item{`lengthscale = "auto"`}{The median heuristic l0
#'     ([rff_median_lengthscale()] of the standardized inputs) times
#'     2^(j / 2) are compared, each fitted over the whole lambda path, by a
#'     downhill walk: j = 0 and -1 first (l0 x 1, 0.71), then, while the
#'     best so far is the smallest (largest) compared, the next smaller
#'     (larger) one, down to l0 / 8 and up to 16 l0: j = 1 (1.41 l0) is
#'     compared only when j = -1 was no better than j = 0. The walk stops
#'     at a candidate whose two neighbours are worse, at those bounds, or
#'     after a step beyond j = -1 or 1 that improved the criterion by less
#'     than 0.1% (where it is flat, as towards the nearly linear fits of
#'     large lengthscales). Where the criterion is unimodal along the
#'     multiples this finds the best of them, at 2 + |j| candidates for a
#'     best j below 0 and 3 + j otherwise (one fewer at a bound). All candidates
#'     rescale the same random draws
#'     (common random numbers), so they differ by the lengthscale only. The
#'     candidate whose path reaches the smallest criterion (below) wins;
#'     the candidates compared and their scores are kept in
#'     `lengthscale_search` and printed. On more than 10,000 rows the
#'     candidates are scored on the map's first 1,000 features when it has
#'     more, and on as many rows as keep the statistics of 7 candidates
#'     within twice the cost of the final fit's (all rows when D is twice
#'     the scored features; else a random subsample of at least 10,000),
#'     and the winner is then fitted on all rows with all features. The
#'     best lengthscale shrinks as rows are added: on `ggplot2::diamonds`
#'     (40,455 rows) candidates scored on 10,000 of them chose the
#'     lengthscale 5.1 (test RMSE 0.117 at D = 2000), on all rows 2.5 (test
#'     RMSE 0.104) (bench/RESULTS-defaults.md). On 401 to 2,000 rows, with more than 400
#'     features, the candidates are scored on the map's first 400 features
#'     (the same draws: the same kernel, estimated less finely), a 400 x 400
#'     eigenproblem each instead of one of min(n, D) x min(n, D), and the
#'     winner is then fitted with all D features, choosing its own lambda
#'     (`lengthscale_search$features` says how many features scored). With
#'     the default `D = NULL`, the winner is first scored on its first 200
#'     features too: when those score within 1% of the 400
#'     (`lengthscale_search$features_check`), the error no longer falls with
#'     more features, and the winner's fit on the 400 features is the
#'     result (D = 400, printed), with no refit; otherwise it is refitted
#'     with the default D. On quakes and mlbench.friedman2 the 400 features
#'     were kept, at a test RMSE of 0.1827 and 124.5 against 0.1828 and
#'     124.3 with D = 1000, in 1.0 and 1.1 s against 1.5 s; on the ten other
#'     regression and classification data sets of bench/features.R, where
#'     the first 200 features scored 2.1% to 39% worse, the winner was
#'     refitted, with the same result as with D given
#'     (bench/RESULTS-features.md). On
#'     the data sets of bench/defaults.R and bench/ard.R with that many
#'     rows (quakes, mlbench::Vehicle, mlbench.friedman1) the test error
#'     was the same or lower, and the default fit 3.1 times faster on
#'     quakes, 2.3 on friedman1 (bench/RESULTS-defaults.md). Fewer rows
#'     are scored on all features:
#'     there, scoring on fewer features than rows changed the choice
#'     (MASS::Boston, 379 rows: 256 or 320 features chose 1 x l0, whose
#'     test RMSE was 3.63, against 0.71 x l0 and 3.28 with all of them).
#'     With fewer rows than features each candidate
#'     is scored from its n x n eigenproblem alone (no D x D statistics,
#'     no coefficients), and only the winner is fitted in full, reusing its
#'     eigendecomposition: the same choice and fit, for one n^3
#'     eigendecomposition per candidate. A candidate that is only scored
#'     (on a subsample or on the first 400 features) keeps, with more rows
#'     than features too, only the eigenpairs of Z'Z above 1e-12 of the
#'     largest. `"median"` uses l0 itself; a number
#'     or one number per column is used as given (in standardized units
#'     when `standardize = TRUE`).}
#'   \item{`lengthscale = "ard"`}{One lengthscale per input column
#'     (automatic relevance determination), learned from the data: first
#'     the isotropic search of `"auto"`, then, started from its lengthscale
#'     l0 and lambda, L-BFGS-B ([stats::optim()]) on the log-lengthscales
#'     and log alpha (alpha = lambda sum(w)) minimizing the negative log
#'     evidence of the Bayesian linear model on the features (the
#'     sparse-spectrum Gaussian process of Lazaro-Gredilla et al., 2010):
#'     y = z(x)'beta + intercept + e, beta ~ N(0, s2 / alpha I), e_i ~
#'     N(0, s2 / w_i), a flat intercept and the noise variance s2 profiled
#'     out, so that the criterion is
#'     n' / 2 log Q + (log |A + alpha I| - D log alpha) / 2, with A =
#'     Zc'WZc, Q = yc'Wyc - b'(A + alpha I)^-1 b, b = Zc'Wyc and n' the rows
#'     of positive weight less one with an intercept (summed over responses,
#'     alpha shared), plus a log-normal prior on each lengthscale about
#'     l0, sum_p (log l_p - log l0)^2 / (2 * 2^2) (without it the evidence
#'     overfit its d hyperparameters on small data sets:
#'     bench/RESULTS-ard.md). The columns of one term of a formula (the
#'     dummies of a factor, the columns of `poly()`) share one lengthscale:
#'     a factor's weight in the kernel is learned as one number, not one per
#'     level. It is a smooth function of the lengthscales because
#'     every lengthscale rescales the same draws, omega = omega0 / l (common
#'     random numbers: `set.seed()` makes it reproducible). Its gradient is
#'     computed in C in one streamed pass (src/ard.c: the derivative of the
#'     criterion with respect to each block of Z, contracted with dZ / dlog
#'     l while the block is featurized; memory O(D^2 + `chunk_size` D),
#'     the same for every thread count). The evidence is optimized on at
#'     most 2,000 random rows and the first 500 features (the same kernel,
#'     estimated less finely), at most 50 iterations, lengthscales within
#'     l0 / 20 and 1e4 l0 (an ignored input drifts to the upper end). The
#'     optimum is accepted only when its criterion is at most the start's.
#'     The ARD lengthscales are then scored by the same criterion and rows
#'     as the isotropic candidates, and kept only when their mean LOO error
#'     is at least 3 standard errors below the isotropic choice's, the
#'     standard error being that of the rows' paired differences (z <= -3;
#'     with `criterion = "gcv"`, which has no per-row errors, when their GCV
#'     is no worse); otherwise the isotropic fit is returned. The margin is
#'     wide because the ARD hyperparameters were tuned on those same rows,
#'     which makes their LOO error optimistic: on the panel of
#'     bench/RESULTS-ard.md it was below the isotropic one on every split,
#'     also where ARD's test error was higher. Either way the
#'     search is in `lengthscale_search$ard` (lengthscales, the evidence's
#'     lambda and noise variance, the log evidence at the start and at the
#'     end, the scores, the paired statistic `z` and `kept`);
#'     [rff_relevance()] gives 1 / lengthscale
#'     per column. ARD needs a map of random frequencies (gaussian, laplace,
#'     matern or an [rff_spectral()] kernel; samplers "iid", "orthogonal",
#'     "qmc"); the arc-cosine and polynomial kernels and Nystrom maps are an
#'     `rff_error` (give one lengthscale per column instead: they apply to
#'     those maps, Nystrom landmarks staying fixed, but are not learned).
#'     **When to use it.** On a panel of seven data sets (bench/RESULTS-ard.md,
#'     3 random splits each) ARD lowered the mean test RMSE on
#'     mlbench.friedman1 (1.02 against 1.32 for the default; 5 of its 10
#'     inputs are noise) and mlbench::Ozone (4.04 against 4.21), and was
#'     not kept (so equal to the default) on MASS::Cars93, MASS::Boston,
#'     mtcars, airquality and ggplot2::mpg, at 1.3 to 3.6 times the
#'     default's time. Without the 3-standard-error margin it was kept on
#'     every split and raised the test RMSE on Cars93 (6.30 against 5.58)
#'     and Boston (3.39 against 3.22). It is therefore
#'     not the default: use it when the inputs are likely to matter unequally
#'     (or some not at all) and there are a few hundred rows or more, and
#'     when in doubt compare with [rff_cv()]`(lengthscale = "ard")`, which
#'     keeps the ARD lengthscales only when their cross-validated error is
#'     the smallest (there the lengthscales, tuned on all rows, have seen
#'     the held-out rows too, so a narrow win is optimistic).}
#'   \item{`D = NULL`}{sqrt(n) log(n) features (Rudi and Rosasco, 2017),
#'     at least 1000, at most 3000 and at most sqrt(2e12 / n) (so that the
#'     n D^2 work of Z'Z stays below 2e12 flops: half a minute on two cores
#'     with rff's own product kernel, see [rff_blas_info()]), rounded to an
#'     even number; with `lengthscale = "auto"` on 401
#'     to 2,000 rows, 400 when the search finds that its first 200 features
#'     score within 1% of 400 (above).}
#' }
#'
#' **Lambda.** A single `lambda` is solved by a Cholesky factorization
#' (LAPACK `dpotrf`/`dpotrs`). Several values, or `lambda = NULL`, use one
#' symmetric eigendecomposition Z'Z = V diag(s) V' (LAPACK's `dsytrd`,
#' `dstemr` and `dormtr`, the steps of `dsyevr`, which solves it should one
#' of them fail), after which each lambda costs O(D^2): beta = V diag(1 /
#' (s + n lambda)) V'Z'y.
#' With `lambda = NULL` the path has `nlambda` log-spaced values from
#' lambda_max = trace(Zc'Zc) / n, at which fewer than one degree of freedom
#' is used, down to `lambda_min_ratio * lambda_max`, in decreasing order.
#' When `lambda_min_ratio` is not given and the best value by `criterion`
#' is the path's last, the path goes on below it at the same spacing, a
#' quarter of `nlambda` values at a time, while its best value is its last,
#' down to `lambda_min_ratio^2 * lambda_max` at most (as many decades
#' again); each further value costs O(D^2) on the same eigendecomposition,
#' and a leave-one-out pass over its rows per block. So `lambda` can have
#' more than `nlambda` values (on 40,455 rows of ggplot2::diamonds the
#' default path's best had been its last). Give `lambda_min_ratio` for a
#' path of exactly `nlambda` values.
#' The fit keeps the normal equations (D x D), so [predict()] can solve at
#' any other lambda exactly (with fewer rows than features, exactly up to
#' the dropped eigenvalues below). With fewer rows than features the path is
#' solved from the n x n Gram matrix of the centred features instead:
#' only the eigenvalues above 1e-12 of the largest are kept, and only
#' their eigenvectors are formed (a smooth kernel's Gram matrix has few:
#' 114 of 750 on `quakes`), so the eigendecomposition costs the
#' tridiagonalization (4/3 n^3) and 2 n^2 k for k kept eigenvalues instead
#' of dsyevr's 4/3 n^3 + 2 n^3. When the Gram matrix's numerical rank r is
#' at most n / 3 (pivoted Cholesky columns added while a residual diagonal
#' exceeds 1e-14 of the largest diagonal), the eigenpairs come from that
#' factor B instead (its QR factorization and the r x r eigenproblem,
#' O(n r^2)); the dropped residual's trace must be below 1e-12 of the
#' largest eigenvalue, else the tridiagonal route is taken. The fit then
#' keeps its normal equations as A = M'U U'M, by the weighted centred
#' features M (n x D) and the kept left eigenvectors U (n x k, `normal$thin`),
#' rather than the D x D matrix, which it never forms unless [vcov()] or
#' standard errors ask for it; the path's coefficients are M'(U S^-1/2
#' diag(u / (s + n lambda))), without the D x k eigenvectors. A dropped
#' eigenvalue changes a fitted value by less than 1e-12 of the largest
#' eigenvalue over n lambda, and a coefficient by about 1e-6 of its size
#' at the largest lambda (more at the smallest).
#'
#' **Choosing lambda: LOO or GCV.** `df` is the trace of the hat matrix,
#' sum(s / (s + n lambda)), plus 1 for the intercept;
#' GCV = n RSS / (n - df)^2 (infinite when df >= n), where the residual sum
#' of squares RSS is computed from the statistics. With
#' `criterion = "loo"` (the default for fits from data) `lambda_best`
#' minimizes the exact leave-one-out error mean((r_i / (1 - h_ii))^2) of
#' ridge on the features, computed for the whole path in one more streamed
#' pass (h_ii from the eigendecomposition; on 5,000 evenly spaced rows when
#' n is larger, the same rows for every candidate of a search). GCV replaces every leverage h_ii by their mean,
#' and on data with outlying inputs it picks far too small a lambda: on
#' `MASS::Boston` its choice had twice the test error of the LOO choice.
#' `criterion = "gcv"` (and every fit from [rff_stats()], which has no rows
#' to leave out) minimizes GCV. For several responses the criterion is
#' summed over responses: one lambda is chosen for all.
#'
#' **Weights and offsets.** With `weights` w_i (non-negative) the fit
#' minimizes sum w_i (y_i - f(x_i))^2 + W lambda |beta|^2, W = sum w_i, so
#' weights act through their proportions only, as in glmnet; the weighted
#' statistics are accumulated in C. The weights are divided by the largest
#' first (so weights near the ends of the double range fit as any other
#' multiple of them): the fit's `rss` and `tss` are those of the weights so
#' rescaled (`summary()` and `predict()` give RSS, sigma and intervals for
#' the weights given), and the criteria are weighted (GCV = n^2 RSS / (W (n
#' - df)^2), the same for every multiple of the weights). An `offset` is subtracted from the
#' response before fitting and added to fitted values and predictions
#' (`newoffset` in [predict()]; a formula's `offset()` terms and `offset`
#' argument are evaluated in `newdata`).
#'
#' **Fitted values.** When the fit is made from data, a second streaming
#' pass computes the fitted values at `lambda_best` (O(n D) time, no n x D
#' matrix), for [fitted()], [residuals()] and [summary()]; they are kept in
#' the result (O(n) memory, like [stats::lm()]). Fits from [rff_stats()]
#' objects have none.
#'
#' **Response.** A factor, logical or character response is an `rff_error`:
#' ridge regression is not a classifier; use the classification function
#' [rff_glm()] (kernel logistic or multinomial regression), or give a numeric
#' coding explicitly to fit it by least squares.
#'
#' **Speed.** Z'Z is computed by the BLAS. When it takes more than 10
#' seconds on R's reference BLAS, a message (once per session) points to
#' the README's section on OpenBLAS; `options(rff.blas_hint = FALSE)`
#' silences it.
#'
#' The formula method handles `data`, `subset`, `weights`, `na.action` and
#' `offset` as [stats::lm()] does; factors are expanded by
#' [stats::model.matrix()] and the intercept is taken from the formula
#' (`y ~ . - 1` has none). With `standardize = TRUE` the dummy columns of
#' terms made of factors only are centred but keep their 0/1 scale, as in
#' kernlab's formula interface: two rows that differ in one factor are then
#' at squared distance 1 or 2 along it, about what one standardized numeric
#' input adds, whereas a dummy scaled to unit variance puts a row of a rare
#' level (frequency p) at 1 / (p (1 - p)) and lets rare levels dominate
#' the distances. Measured on MASS::Cars93 and mlbench::Ozone (10 random
#' 75/25 splits, bench/factors.R) this lowered the mean test RMSE from
#' 5.56 to 5.33 and from 5.45 to 4.73 (in 8 and 9 of the 10 splits).
#' Interactions with numeric inputs are standardized.
#'
#' Ordered factors among the predictors enter as the ranks of their levels
#' present in the training rows (1, 2, ...), one numeric column each,
#' standardized like a numeric input: [stats::model.matrix()]'s polynomial
#' contrasts put every two levels at the same distance, so the kernel
#' would not see their order. On ggplot2::diamonds, whose cut, color and
#' clarity are ordered, the ranks gave the default fit a mean test RMSE of
#' 0.1035 against 0.1048 over four draws of the features
#' (bench/RESULTS-ordered.md). Contrasts you choose win: a factor with its
#' own (`contrasts(x) <- `, or `C(x, contr.poly)` in the formula for the
#' polynomial coding) and all ordered factors when
#' `options("contrasts")` does not give `"contr.poly"` for them keep
#' [stats::model.matrix()]'s coding. [predict()] ranks new values among
#' the training levels (a factor with other levels, or strings); a value
#' that is not one of them, such as a level absent from the training rows,
#' gets the middle rank, with a warning (see `new_levels` in
#' [predict.rff_ridge()]). The ranked factors' levels are in the fit's `ordered`.
#'
#' **Columns of every kind.** Character columns are factors of the values
#' seen (their levels remembered, as [stats::lm()] does); logical columns
#' enter as 0/1 (left unscaled, as a dummy); `Date` and `POSIXct` columns as
#' numbers (days and seconds since 1970-01-01), with a message of class
#' `"rff_time_columns"`; integers as numbers. A factor or character column
#' with fewer than two levels among the rows fitted (constant in this
#' sample, as happens when a rare category falls in the test part) cannot
#' vary: the terms it enters are dropped, with a message of class
#' `"rff_dropped_terms"` naming it, and the fit goes on (where
#' [stats::lm()] stops with "contrasts can be applied only to factors with
#' 2 or more levels"); `predict()` then ignores the column. A constant
#' numeric column is centred and takes no part in the kernel (see
#' `standardize`). Levels without rows are dropped from the coding and
#' remembered in `xlevels`. A level of new data that no training row had
#' is coded by `predict()` as none of the known levels (see `new_levels`
#' in [predict.rff_ridge()]). List, complex and character-matrix columns
#' are refused with an `rff_error` naming the column. The GLM and
#' cross-validation fits ([rff_glm()], [rff_cv()]) read columns the same way.
#' parsnip's and caret's interfaces build the model matrix themselves,
#' with the contrasts; `recipes::step_ordinalscore()` gives them the ranks.
#'
#' @param x A numeric matrix, numeric data frame or vector; for
#'   `rff_ridge.rff_stats()`, statistics from [rff_stats()].
#' @param y The response: a numeric vector with one value per row of `x`, or
#'   a matrix with one column per response.
#' @param formula A model formula, as for [stats::lm()]; `cbind(y1, y2) ~ .`
#'   fits several responses; `offset()` terms are used.
#' @param data,subset,na.action As for [stats::lm()].
#' @param weights Optional non-negative observation weights, one per row
#'   (for the formula method, evaluated in `data` as by [stats::lm()]).
#' @param offset Optional offset, one number per row (or an n x q matrix),
#'   subtracted from the response before fitting.
#' @param standardize Centre and scale the input columns before the kernel
#'   sees them (see Details).
#' @param criterion How `lambda_best` is chosen from several values:
#'   `"loo"` (exact leave-one-out cross-validation, default) or `"gcv"`.
#' @param lambda `NULL` (a data-driven path of `nlambda` values, best by
#'   `criterion`), one non-negative number (Cholesky solve), or several (one
#'   eigendecomposition for all).
#' @param map An `"rff_map"` from [rff_map()]; when `NULL`, a map is drawn
#'   from the arguments of [rff_map()] given in `...`.
#' @param intercept Fit an unpenalized intercept.
#' @param nlambda Length of the data-driven lambda path.
#' @param lambda_min_ratio Smallest lambda of the path, relative to the
#'   largest. When not given, a path whose best value is its last goes on
#'   below it (see Details).
#' @param chunk_size Rows per streamed block; default about 16 MB of
#'   features (`2^21 / D` rows, at least 256). Results agree for every
#'   block size up to rounding.
#' @param threads Number of threads; default `getOption("rff.threads")`,
#'   else all cores (at most 2 when `_R_CHECK_LIMIT_CORES_` is set) less
#'   those other processes are running on when the call starts (Linux:
#'   the run queue of `/proc/loadavg`), at least one: OpenMP's threads wait
#'   for each other by spinning, and a thread on a busy core made a call
#'   slower than one thread (`quakes`' default fit beside a CPU hog on one
#'   of 2 cores: 1.33 times one thread's time). In a
#'   forked child process (`parallel::mclapply()`, `future::plan(multicore)`)
#'   every routine runs on one thread, since OpenMP's threads do not survive
#'   `fork()`. Results
#'   do not depend on it.
#' @param progress Show progress when more than one block is streamed: a
#'   text bar, or through progressr's handlers (see [rff_progress]).
#'   `FALSE` silences both.
#' @param ... For the default and formula methods: arguments of [rff_map()]
#'   that draw the map when `map` is `NULL`: `D` (default from the data,
#'   see Details), `kernel`, `lengthscale` (default `"auto"`; also
#'   `"ard"`, `"median"`, a number or one per column), `nu`, `order`, `variant`,
#'   `sampler`; the formula method passes the other arguments of the
#'   default method too.
#' @return An object of class `c("rff_ridge", "rff_fit")` (`"rff_fit"`: the parent
#'   class of every fit on features, whose `nobs()` method both share), a list with
#'   \item{coefficients}{D x L matrix, one column per lambda (for q > 1
#'     responses, a D x q x L array).}
#'   \item{intercept}{Length-L vector (q x L matrix), zero without intercept.}
#'   \item{lambda, df, rss, gcv, loo}{The lambda values and, for each, the
#'     degrees of freedom, the residual sum of squares, GCV and the LOO mean
#'     squared error (L x q matrices for `rss`, `gcv` and `loo` when q > 1;
#'     `loo` is `NULL` when not computed).}
#'   \item{lambda_best, best, criterion}{The lambda with the smallest
#'     criterion, its index, and the criterion (`"LOO"` or `"GCV"`).}
#'   \item{standardize}{`NULL`, or the `center` and `scale` of the columns.}
#'   \item{lengthscale_search}{For `lengthscale = "auto"`: the candidates
#'     (`table`: lengthscale, multiple of the median heuristic, best lambda
#'     and criterion), the index of the chosen one (`best`), the median
#'     heuristic, the number of rows scored and the number of features
#'     they were scored on (`features`).}
#'   \item{normal}{The normal equations (A, b, ...), for exact predictions
#'     at any lambda.}
#'   \item{tss}{Total sum of squares of y (about its mean with intercept).}
#'   \item{fitted.values, residuals}{At `lambda_best`; `NULL` for fits from
#'     statistics.}
#'   \item{map, n, has_intercept, method, call}{The feature map, the number of
#'     rows, whether there is an intercept, `"cholesky"` or `"eigen"`, and the
#'     call.}
#' @references Rahimi, A. and Recht, B. (2007). Random features for
#'   large-scale kernel machines. *Advances in Neural Information Processing
#'   Systems 20*.
#'
#'   Lazaro-Gredilla, M., Quinonero-Candela, J., Rasmussen, C. E. and
#'   Figueiras-Vidal, A. R. (2010). Sparse spectrum Gaussian process
#'   regression. *Journal of Machine Learning Research* 11, 1865-1881.
#'
#'   Rudi, A. and Rosasco, L. (2017). Generalization properties of learning
#'   with random features. *Advances in Neural Information Processing
#'   Systems 30*.
#' @seealso [rff_cv()] for cross-validation over lambda and the lengthscale,
#'   [rff_stats()] to fit from statistics combined over row blocks,
#'   [predict.rff_ridge()].
#' @examples
#' set.seed(1)
#' x <- matrix(runif(1000), 500, 2)
#' y <- sin(4 * x[, 1]) + cos(3 * x[, 2]) + rnorm(500, sd = 0.1)
#' fit <- rff_ridge(x, y, D = 200)    # standardized, lengthscale "auto"
#' fit
#' plot(fit)
#' predict(fit, x[1:3, ], interval = "prediction")
#' # one lambda, Cholesky solve, on the same map
#' fit1 <- rff_ridge(x, y, lambda = fit$lambda_best, map = fit$map)
#' all.equal(coef(fit1), coef(fit))
#' # formula interface, with a factor
#' d <- data.frame(y = y, u = x[, 1], v = x[, 2], g = factor(x[, 1] > 0.5))
#' summary(rff_ridge(y ~ u + v + g, data = d, D = 200))
#' @importFrom stats coef fitted logLik nobs predict residuals
#' @importFrom graphics plot
#' @export
rff_ridge <- function(x, ...) UseMethod("rff_ridge")

#' @rdname rff_ridge
#' @export
rff_ridge.default <- function(x, y, lambda = NULL, map = NULL, intercept = TRUE,
                              standardize = TRUE, weights = NULL, offset = NULL,
                              nlambda = 50, lambda_min_ratio = 1e-6,
                              criterion = c("loo", "gcv"),
                              chunk_size = NULL, threads = NULL,
                              progress = interactive(), ...) {
  cl <- fit_call(match.call(), "rff_ridge")
  check_required(c("x", "y"))
  a <- check_fit_args(x, y, lambda, intercept, nlambda, lambda_min_ratio,
                      threads, progress, extend = missing(lambda_min_ratio))
  criterion <- if (identical(criterion, c("loo", "gcv"))) "loo" else
    check_string(criterion, "criterion", c("loo", "gcv"))
  m <- model_setup(a, standardize, weights, offset, map, list(...), "rff_ridge")
  # Z'Z, its factor or eigenvectors, and the solve's workspace
  check_stats_memory(m$map$D, 4, !is.null(map))
  chunk_size <- check_chunk_size(chunk_size, m$map$D)
  close_progress <- progress_call(a$progress, "rff_ridge")
  on.exit(close_progress(), add = TRUE)
  search <- NULL
  fit_rows <- function(map, rows, ...) {
    ridge_rows_fit(m, map, rows, a$path, a$intercept, chunk_size, a$threads, criterion,
                   a$progress, ...)
  }
  n <- nrow(m$x)
  if (is.null(m$candidates)) {
    st <- progress_stage("fit")
    fit <- fit_rows(m$map, seq_len(n))
  } else {
    search <- select_lengthscale(m, fit_rows)
    if (isTRUE(m$ard)) {
      ard_st <- ard_stage(n, m$map$D)
      search <- ard_select(m, search, fit_rows, a$intercept, chunk_size, a$threads)
      ard_st$close()
    }
    fit <- search$fit
    st <- progress_stage("final fit")
    if (is.null(fit)) {
      fit <- fit_rows(rescale_map(m$map, search_lengthscale(search)), seq_len(n),
                      eig = search$eig)
    }
    search$fit <- search$eig <- search$subset <- search$errors <- NULL
  }
  fit <- add_fitted(fit, m$x, m$y, chunk_size, a$threads, m$offset)
  st$close()
  progress_finish()
  fit <- add_model_info(fit, m, search)
  fit$prior.weights <- m$weights
  fit$call <- cl
  fit
}

#' @rdname rff_ridge
#' @export
rff_ridge.formula <- function(formula, data, subset, weights, na.action, offset, ...) {
  cl <- fit_call(match.call(), "rff_ridge")
  fit_formula(rff_ridge.default, cl, ...)
}

#' @rdname rff_ridge
#' @export
rff_ridge.rff_stats <- function(x, lambda = NULL, nlambda = 50,
                                lambda_min_ratio = 1e-6, ...) {
  cl <- fit_call(match.call(), "rff_ridge")
  if (length(list(...))) {
    rff_abort("...", sprintf("`...` must be empty: a fit from statistics takes only `lambda`, `nlambda` and `lambda_min_ratio`; got `%s`",
                             names(list(...))[1L]))
  }
  check_stats(x, "x")
  if (x$n < 1 || !(stats_wsum(x) > 0)) {
    rff_abort("x", sprintf("`x` holds the statistics of no rows of positive weight (n = %s)",
                           format(x$n)))
  }
  path <- check_path(lambda, nlambda, lambda_min_ratio, missing(lambda_min_ratio))
  # a path is solved through the eigenvalues, which solve_path() checks; one
  # lambda by a Cholesky factor, which an indefinite ZtZ can pass
  if (length(path$lambda) == 1L) check_gram_chol(x$ZtZ, "x")
  fit <- ridge_from_stats(x, path)
  fit$call <- cl
  fit
}
