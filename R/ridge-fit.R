# Layer 6 (engines): a fit from statistics (solves, GCV or LOO), from rows of
# prepared data, and the lengthscale search of "auto".

# An "rff_ridge" fit from statistics: the path solved at the lambda values
# of `path` (from check_path()), the best by GCV, or, when `loo` gives rows
# (x, y, weights, chunk_size, threads) and the path has several values, by
# leave-one-out cross-validation on those rows. The normal equations are
# kept, so that predict() can solve at any other lambda exactly. With
# `partial`, a path keeps only A's eigenpairs above 1e-12 of the largest (a
# candidate only scored); A's eigendecomposition runs on `threads` cores.
ridge_from_stats <- function(stats, path, loo = NULL, partial = FALSE, threads = 1L,
                             coefficients = TRUE) {
  ridge_path_fit(normal_equations(stats), stats, path, loo, NULL, partial, threads,
                 coefficients)
}

# The fit of ridge_from_stats() from the normal equations `sys` (of
# normal_equations() or dual_system()), and `stats` for the map, the number
# of rows, the intercept and the response names. `eig`, when given, is the
# path's thin eigenproblem already solved (thin_eigen(), with the scores of
# thin_scores() or the weighted centred features of the rows for the
# coefficients, ridge_rows_fit()). Without `coefficients`, a candidate only
# scored and then discarded: the criteria, no coefficients nor intercepts.
ridge_path_fit <- function(sys, stats, path, loo = NULL, eig = NULL, partial = FALSE,
                           threads = 1L, coefficients = TRUE) {
  lambda <- lambda_values(path, sys$A, sys$w, sys$trace)
  if (length(lambda) < 2L) {
    eig <- NULL
  } else if (is.null(eig) && isTRUE(partial)) {
    # a candidate only scored: A's eigenpairs above 1e-12 of its largest
    g <- gram_eigen(sys$A, threads)
    eig <- list(values = g$values, vectors = g$left)
  }
  p <- solve_path(sys, lambda, eig, threads, coefficients)
  n <- stats$n
  use_loo <- !is.null(loo) && length(p$lambda) > 1L
  loo_of <- function(p) {
    loo_path(sys, p, stats$map, loo$x, loo$y, loo$weights, loo$chunk_size, loo$threads,
             row_errors = isTRUE(loo$row_errors))
  }
  loo_mse <- if (use_loo) loo_of(p)
  best_of <- function() {
    b <- if (use_loo) which.min(rowSums(loo_mse)) else gcv_select(p$rss, p$df, n, sys$w)$best
    if (length(b) == 0L) 1L else b
  }
  best <- best_of()
  # a data-driven path whose best value is its last goes on at its spacing,
  # a block of a quarter of its values at a time (path_extension()), on the
  # same eigenproblem
  more <- path_extension(p$lambda, path)
  while (length(more) && best == length(p$lambda) && !is.null(p$solver)) {
    take <- seq_len(min(length(more), max(2L, ceiling(length(lambda) / 4))))
    p2 <- solve_path(sys, more[take], p$solver, threads, coefficients)
    more <- more[-take]
    if (use_loo) loo_mse <- bind_loo(loo_mse, loo_of(p2))
    p <- bind_paths(p, p2)
    best <- best_of()
  }
  sel <- gcv_select(p$rss, p$df, n, sys$w)
  gcv <- sel$gcv
  criterion <- "GCV"
  if (use_loo) {
    criterion <- "LOO"
    row_err <- attr(loo_mse, "rows")
    attr(loo_mse, "rows") <- NULL
  }
  q <- dim(p$beta)[2L]
  resp <- stats$response
  fit <- list(coefficients = p$beta, intercept = p$intercept, lambda = p$lambda,
              df = p$df, rss = p$rss, gcv = gcv, lambda_best = p$lambda[best],
              best = best, tss = sys$yy, map = stats$map, n = n,
              has_intercept = stats$intercept, method = p$method,
              lambda_given = !is.null(path$lambda), criterion = criterion,
              loo = loo_mse, loo_rows = if (is.null(loo_mse)) NULL else nrow(loo$x),
              response = resp, fitted.values = NULL, residuals = NULL,
              normal = sys)
  if (q == 1L) {
    fit$coefficients <- matrix(p$beta, nrow = dim(p$beta)[1L])
    fit$intercept <- drop(p$intercept)
    fit$rss <- drop(p$rss)
    fit$gcv <- drop(gcv)
    if (!is.null(loo_mse)) fit$loo <- drop(loo_mse)
  } else {
    if (!is.null(loo_mse)) dimnames(fit$loo) <- list(NULL, resp)
    dimnames(fit$coefficients) <- list(NULL, resp, NULL)
    dimnames(fit$intercept) <- list(resp, NULL)
    dimnames(fit$rss) <- dimnames(fit$gcv) <- list(NULL, resp)
    names(fit$tss) <- resp
  }
  if (scored_system(sys)) {
    # scored from the features alone: the criteria, no coefficients
    fit$eigen <- eig
    fit$coefficients <- fit$intercept <- NULL
  }
  if (!coefficients) fit$coefficients <- fit$intercept <- NULL
  if (!is.null(loo_mse) && isTRUE(loo$row_errors)) {
    # a scored candidate's rows' LOO errors at its best lambda (ard_keep())
    fit$loo_row_errors <- row_err[, best]
  }
  class(fit) <- c("rff_ridge", "rff_fit")
  keep_fit_fields(fit)
}

# The path `p` of solve_path() followed by the values of `p2` (solved on
# the same eigenproblem), and the LOO errors of two such paths (L x q, with
# the rows' errors as attribute "rows" when kept).
bind_paths <- function(p, p2) {
  d <- dim(p$beta)
  p$beta <- array(c(p$beta, p2$beta), c(d[1L], d[2L], d[3L] + dim(p2$beta)[3L]))
  p$intercept <- cbind(p$intercept, p2$intercept)
  p$lambda <- c(p$lambda, p2$lambda)
  p$df <- c(p$df, p2$df)
  p$rss <- rbind(p$rss, p2$rss)
  p
}
bind_loo <- function(a, b) {
  out <- rbind(a, b)
  if (!is.null(attr(a, "rows"))) attr(out, "rows") <- cbind(attr(a, "rows"), attr(b, "rows"))
  out
}

# The ridge fit of rows `rows` of the prepared data `m` (x, y, weights) at
# `map` over the lambda path `path`, lambda_best by `criterion` (LOO: on
# at most 5,000 of the rows). With fewer rows than features and a path of
# several values, the path's eigenproblem is solved on n x n; then with
# `score_only` the fit is made from the features alone (dual_system(): no
# D x D statistics, no coefficients, only the criteria; it cannot predict),
# and its `eigen` can be handed back as `eig` to the full fit of the same
# rows and map, which then solves no eigenproblem. With `row_errors`, a fit
# by LOO keeps its rows' LOO errors at its best lambda (`loo_row_errors`),
# which "ard" pairs with the isotropic choice's (ard_keep()). With
# `partial` and `score_only`, a path with more rows than features keeps only
# the eigenpairs of A above 1e-12 of the largest (gram_eigen()): for
# candidates that are scored and never refitted (on a subsample or on
# fewer features than the final fit); with `score_only` and not
# `coefficients` (a candidate that is never the fit), the path's
# coefficients are not computed. Fewer rows than features and several
# lambdas: the fit keeps its normal equations by their thin eigenproblem
# (`normal$thin`, normal_matrix()), without D x D statistics.
ridge_rows_fit <- function(m, map, rows, path, intercept, chunk_size, threads, criterion,
                           progress = FALSE, score_only = FALSE, eig = NULL,
                           row_errors = FALSE, partial = FALSE, coefficients = TRUE) {
  x <- m$x[rows, , drop = FALSE]
  y <- m$y[rows, , drop = FALSE]
  w <- if (is.null(m$weights)) NULL else m$weights[rows]
  several <- length(path$lambda) > 1L || (is.null(path$lambda) && path$nlambda > 1L)
  thin <- nrow(x) <= map$D && several
  loo <- NULL
  if (criterion == "loo") {
    i <- loo_rows(length(rows))
    loo <- list(x = x[i, , drop = FALSE], y = y[i, , drop = FALSE],
                weights = if (is.null(w)) NULL else w[i],
                chunk_size = chunk_size, threads = threads,
                rows_are_features = thin && length(i) == nrow(x),
                row_errors = row_errors)
  }
  if (thin && score_only) {
    Z <- .Call(C_rff_features, x, map, threads)
    sys <- dual_system(Z, y, w, intercept)
    check_products_finite(sys$b, sys$trace)
    # no coefficients are needed to score: no D x r eigenvectors either,
    # unless leave-one-out streams a subsample of the rows through them
    rows <- isTRUE(loo$rows_are_features)
    e <- thin_eigen(Z, sys$zbar, w, rows = rows, threads = threads,
                    vectors = !is.null(loo) && !rows)
    return(ridge_path_fit(sys, rows_stats(map, x, y, w, intercept), path, loo,
                          thin_scores(e, y, sys$ybar, w)))
  }
  if (thin) {
    # the normal equations by their thin eigenproblem A = M'U U'M, with M =
    # W^1/2 Zc the weighted centred features (normal_matrix()): no D x D
    # statistics, and the path's coefficients M'(U S^-1/2 diag(u / (s + W
    # lambda))) from the features (solve_path()), without the D x r vectors
    started <- proc.time()[["elapsed"]]
    on.exit(blas_hint(proc.time()[["elapsed"]] - started), add = TRUE)
    pb <- progress_stage("eigenproblem", 2, progress && nrow(x) > chunk_size)
    on.exit(pb$close(), add = TRUE)
    Z <- .Call(C_rff_features, x, map, threads)
    sys <- dual_system(Z, y, w, intercept)
    check_products_finite(sys$b, sys$trace)
    e <- eig
    if (is.null(e)) {
      e <- thin_eigen(Z, sys$zbar, w, rows = isTRUE(loo$rows_are_features),
                      threads = threads, vectors = !is.null(loo) && !isTRUE(loo$rows_are_features))
    }
    pb$set(1)
    e$features <- weighted_centred(Z, sys$zbar, w)
    rm(Z)
    e$threads <- threads
    e$u <- NULL
    sys$thin <- list(values = e$values, left = e$left, features = e$features)
    return(ridge_path_fit(sys, rows_stats(map, x, y, w, intercept), path, loo, e))
  }
  # the statistics' share of the fit's work (the rest: the solve)
  share <- as.double(nrow(x)) * map$D^2 / ridge_cost(nrow(x), map$D)
  stats <- accumulate_stats(x, y, map, intercept, chunk_size, threads, progress, w, share)
  ridge_from_stats(stats, path, loo, partial = partial && score_only, threads = threads,
                   coefficients = coefficients || !score_only)
}

# What ridge_path_fit() reads of the statistics, for a fit made from the
# features of its rows (dual_system()) without them.
rows_stats <- function(map, x, y, w, intercept) {
  list(map = map, n = if (is.null(w)) nrow(x) else sum(w > 0), intercept = intercept,
       response = colnames(y))
}

# lengthscale = "auto" in rff_ridge() (and the ridge search of rff_glm()):
# the candidates are the median heuristic times 2^(j / 2), visited by the
# downhill walk of lengthscale_walk(). Every candidate rescales the same
# base draws (common random numbers) and is fitted over the lambda path by
# `fit_rows(map, rows, score_only = TRUE)`; the one whose path reaches the
# smallest criterion (LOO or GCV) wins. On more than 10,000 rows the
# candidates are scored on the map's first 1,000 features when it has more,
# on the rows auto_rows() affords (all of them for the default D), and the
# winner is refitted on all rows with all features; on 401 to 2,000 rows
# they are scored on the
# map's first features (auto_score_map(); `features`: how many) and the
# winner is refitted with all of them; otherwise its fit is returned as
# `fit`, or, when it was scored from its features alone (fewer rows than
# features), its eigenproblem as `eig` for the refit. `subset`: the rows
# scored. `loo_cols`: the responses times the lambdas of the candidates'
# leave-one-out fitted values (q L of them, for the progress plan's
# rows x features x q L of their products).
select_lengthscale <- function(m, fit_rows, after = NULL, loo_cols = 0) {
  n <- nrow(m$x)
  D <- m$map$D
  # more than 10,000 rows: scored on fewer features, and on as many rows as
  # 7 candidates (a walk that ends 4 steps from the start) afford; rows
  # that are already a subsample (`m$subsampled`: a GLM's 5,000 of more)
  # on fewer features too
  large <- n > 10000L || isTRUE(m$subsampled)
  score_map <- auto_score_map(m$map, n, subsampled = large)
  nsub <- auto_rows(n, 7L, D, score_map$D)
  sub <- if (nsub < n) sort(sample.int(n, nsub)) else seq_len(n)
  if (!is.null(m$weights) && !any(m$weights[sub] > 0)) sub <- seq_len(n)
  reduced <- score_map$D < D
  # candidates that are never the fit (nor its features check below) need
  # no coefficients: on a subsample, or on fewer features of many rows
  discarded <- length(sub) < n || (reduced && large)
  # the progress plan after the search: the refit on all rows (after a
  # subsample or on fewer features), the eigenvectors of a scored dual
  # problem, or the fitted values
  if (is.null(after)) {
    after <- if (length(sub) < n || reduced) ridge_cost(n, D) else if (n <= D) as.double(n)^2 * D else
      as.double(n) * D
  }
  lambda_best <- numeric()
  best_fit <- NULL
  best_errors <- NULL
  best_score <- Inf
  crit <- NULL
  score <- function(f) {
    g <- if (f$criterion == "LOO") f$loo else f$gcv
    g <- if (is.matrix(g)) rowSums(g) else g
    g[f$best]
  }
  walk <- lengthscale_walk(function(j) {
    # the rows' LOO errors only for "ard", which pairs them (ard_keep())
    f <- fit_rows(rescale_map(score_map, m$median * 2^(j / 2)), sub, score_only = TRUE,
                  row_errors = isTRUE(m$ard), partial = reduced || length(sub) < n,
                  coefficients = !discarded)
    crit <<- f$criterion
    lambda_best <<- c(lambda_best, f$lambda_best)
    g <- score(f)
    if (g < best_score) {
      best_errors <<- f$loo_row_errors
      f$loo_row_errors <- NULL
      if (length(sub) == n) best_fit <<- f
      best_score <<- g
    }
    g
  }, ridge_cost(length(sub), score_map$D) + as.double(length(sub)) * score_map$D * loo_cols,
  after)
  table <- search_table(as.list(m$median * 2^(walk$steps / 2)), 2^(walk$steps / 2),
                        lambda_best[walk$order], walk$score, tolower(crit))
  # a fit scored from the features alone is refitted with its statistics,
  # without solving its eigenproblem again
  scored <- !is.null(best_fit) && scored_system(best_fit$normal)
  check <- NULL
  if (reduced && !large && isTRUE(m$default_D) && !isTRUE(m$ard) &&
      !is.null(best_fit)) {
    # with the default D, the winner on the first features is the fit when
    # half of them score within auto_features_gain of it: the error no
    # longer falls with more features (features_converged())
    half <- fit_rows(rescale_map(ard_submap(score_map, score_map$D %/% 2L),
                                 m$median * 2^(walk$steps[walk$best] / 2)),
                     sub, score_only = TRUE, partial = TRUE)
    check <- c(score(half), best_score)
    names(check) <- c(score_map$D %/% 2L, score_map$D)
    if (!features_converged(check[[1L]], check[[2L]])) best_fit <- NULL
  } else if (reduced) {
    best_fit <- NULL
  }
  list(best = walk$best, rows = length(sub), features = score_map$D, median = m$median,
       criterion = crit, table = table, features_check = check,
       D = if (!is.null(check) && !is.null(best_fit)) score_map$D else D,
       fit = if (length(sub) == n && !scored) best_fit else NULL,
       eig = if (scored) best_fit$eigen else NULL, subset = sub, errors = best_errors)
}

# Whether a search's winner on its features scores (`full`, smaller is
# better) within the fraction auto_features_gain of its score on half of
# them (`half`): doubling the features gained less than that, so the D
# features of the default would gain less still (about 0.6 of it for
# D = 1000 and 400 features scored, if the excess error falls as 1 / D).
features_converged <- function(half, full) {
  is.finite(half) && is.finite(full) && half <= (1 + auto_features_gain) * full
}

# In bench/features.R (bench/RESULTS-features.md) the 400 features were
# kept on quakes and mlbench.friedman2 (test RMSE 0.1827 and 124.5 against
# 0.1828 and 124.3 with D = 1000) and, for rff_glm(), on
# mlbench::PimaIndiansDiabetes (test accuracy 75.5% against 75.0%), at half
# to two thirds of the time; on its ten other data sets the first 200
# features scored 2.1% to 39% worse than the 400 and the winner was refitted.
auto_features_gain <- 0.01

# The map on which lengthscale = "auto" scores its candidates from n rows:
# for more than `features` rows and at most `max_rows`, the map's first
# `features` features (ard_submap(): the same draws, so the same kernel,
# estimated less finely), whose eigenproblem is features x features
# instead of min(n, D) x min(n, D); for a search on more than 10,000 rows
# (`subsampled`), the first `subsample_features`; otherwise, and for maps
# not made of random frequencies, the map itself. Only the candidates'
# scores change: the winner is fitted with all D features.
auto_score_map <- function(map, n, subsampled = FALSE, features = auto_features,
                           max_rows = auto_features_rows,
                           subsample_features = auto_features_subsample) {
  if (!ard_map_ok(map$kernel, map$sampler)) return(map)
  if (subsampled) {
    return(if (map$D > subsample_features) ard_submap(map, subsample_features) else map)
  }
  if (map$D <= features || n <= features || n > max_rows) return(map)
  ard_submap(map, features)
}

# Features on which "auto" scores its candidates (auto_score_map()), and the
# most rows for which it does: measured on the data sets of
# bench/defaults.R and bench/ard.R (bench/RESULTS-defaults.md); beyond
# them the choice is left to the full map, but for a search on more than
# 10,000 rows, which scores on 1,000 features (on ggplot2::diamonds, 40,455
# rows, D = 2000, on all rows: the lengthscale that scoring on all 2000
# features chose, 0.707 times the median heuristic, the whole fit in 13.7 s
# against 31.0 s).
auto_features <- 400L
auto_features_rows <- 2000L
auto_features_subsample <- 1000L
