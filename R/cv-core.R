# Layer 5 (the model pipeline): the cross-validation core every family shares:
# folds, the weighted CV curve and its standard errors, lambda_min and
# lambda_1se, the table of a lengthscale search and the "rff_cv" object; and
# the held-out error of ridge solutions.

# The cross-validation curve of one candidate from `err` (k x L: the
# (weighted) mean error of each fold's held-out rows at each lambda, NA
# where a fold gives none) and the folds' total weights `wj`: cvm, the mean
# over the folds weighted by wj, and cvsd, its standard error
# sqrt(sum wj (err - cvm)^2 / W / (k - 1)), W = sum(wj), as glmnet has it.
cv_curve <- function(err, wj) {
  k <- nrow(err)
  W <- sum(wj)
  ok <- !is.na(err)
  cvm <- colSums(ifelse(ok, err * wj, 0)) / colSums(ok * wj)
  dev <- ifelse(ok, wj * (err - rep(cvm, each = k))^2, 0)
  cvsd <- sqrt(colSums(dev) / W / max(k - 1, 1))
  list(cvm = cvm, cvsd = cvsd)
}

# lambda_min and lambda_1se from the CV curves `cvm`, `cvsd` (L x nl: lambda
# by candidate lengthscale): the pair of smallest cvm (of largest for
# measures where larger is better, `sgn` = -1), and glmnet's rule: the
# largest lambda whose cvm at that lengthscale is within one standard error
# of the best.
cv_select <- function(cvm, cvsd, lambda, sgn = 1) {
  ij <- arrayInd(which.min(sgn * cvm), dim(cvm))
  i <- ij[1L]
  j <- ij[2L]
  within <- sgn * cvm[, j] <= sgn * cvm[i, j] + cvsd[i, j]
  within[is.na(within)] <- FALSE
  list(best = c(lambda = i, lengthscale = j), lambda_min = lambda[i],
       lambda_1se = max(lambda[within]))
}

# The table of a lengthscale search: each candidate (its first value), its
# multiple of the median heuristic, its best lambda and score (column `name`).
search_table <- function(candidates, multiple, lambda, score, name) {
  table <- data.frame(lengthscale = vapply(candidates, `[`, 0, 1L), multiple = multiple,
                      lambda = lambda, score = score)
  names(table)[4L] <- name
  table
}

# The lengthscale search a cross-validation over several candidates keeps
# in its fit (NULL for one candidate): the CV table and the chosen one;
# `multiple`: the candidates' multiples of the median heuristic `median`
# (NULL when the candidates were given).
cv_search <- function(candidates, cvm, lambda, sel, sgn, multiple, median, rows) {
  nl <- length(candidates)
  if (nl < 2L) return(NULL)
  s <- list(best = sel$best[["lengthscale"]], rows = rows, median = median, criterion = "CV",
            table = search_table(candidates, if (is.null(multiple)) NA_real_ else multiple,
                                 lambda[apply(sgn * cvm, 2L, which.min)],
                                 sgn * apply(sgn * cvm, 2L, min), "cv"))
  if (is.null(multiple)) s$median <- NULL
  s
}

# The downhill walk of lengthscale = "auto" over the multiples 2^(j / 2) of
# the median heuristic, on `score_of(j)` (smaller is better): j = 0 and -1,
# then, while the best scored is the smallest (largest) scored, the next
# smaller (larger), within auto_steps: j = 1 only when -1 scored no better
# than 0. It stops at a candidate whose two neighbours score worse, at a
# bound, or after a step past j = +-1 that improved the score by less than
# the fraction auto_flat of it. Where the score is unimodal along the
# multiples this finds their minimum, for 2 + |j| candidates when j < 0
# (-1 better than 0 puts the minimum below 0: j = 1 would score worse than
# 0) and 3 + j otherwise (one fewer at a bound). Returns the steps in
# increasing order, their scores,
# `order` (what was scored i-th is at position i of a list made while
# scoring: list[order] puts it in the steps' order), and the best's index.
lengthscale_walk <- function(score_of, cost = 1, after = 0) {
  steps <- integer()
  score <- numeric()
  add <- function(j) {
    st <- walk_stage(length(steps) + 1L, 2^(j / 2), cost, after)
    steps <<- c(steps, j)
    score <<- c(score, score_of(j))
    st$close()
  }
  for (j in c(0L, -1L)) add(j)
  # the step above only when the step below did not win (a score that is
  # NA or NaN wins nothing)
  if (!isTRUE(score[2L] < score[1L])) add(1L)
  repeat {
    i <- which.min(score)
    # at most every step of the range, once
    if (!length(i) || length(steps) > diff(auto_steps)) break
    b <- steps[i]
    # a step past the start's neighbours that gained less than auto_flat:
    # the score is flat there
    if (abs(b) >= 2L && i == length(steps) &&
        score[i] > (1 - auto_flat) * min(score[-i])) break
    if (b == min(steps) && b > auto_steps[1L]) {
      add(b - 1L)
    } else if (b == max(steps) && b < auto_steps[2L]) {
      add(b + 1L)
    } else break
  }
  progress_expect(after)
  o <- order(steps)
  list(steps = steps[o], score = score[o], order = o,
       best = if (length(i)) match(steps[i], steps[o]) else 1L)
}

# The progress stage of the k-th candidate of a lengthscale search (at
# `multiple` of the median heuristic; NULL for given candidates), of
# `cost` work units; the plan counts walk_plan candidates (or k from there
# on), then `after` units. `given`: the number of given candidates.
walk_stage <- function(k, multiple, cost, after, given = NULL) {
  more <- if (!is.null(given)) given - k + 1L else max(walk_plan - k + 1, 1)
  progress_expect(more * cost + after)
  progress_stage(if (is.null(multiple)) sprintf("lengthscale %d of %d", k, given) else
    sprintf("lengthscale search, candidate %d (%s x median)", k, format(multiple, digits = 3)),
    cost)
}

# The progress stage of the "ard" optimization of a fit on n rows and D
# features, added to the call's plan: about 30 evaluations of the evidence
# and its gradient on at most 2,000 rows and 500 features.
ard_stage <- function(n, D) {
  units <- 30 * ridge_cost(min(n, 2000L), min(D, 500L))
  progress_add(units)
  progress_stage("one lengthscale per input (ARD)", units)
}

# Candidates a lengthscale walk is planned for: three and, half the time,
# one step more (a walk scores the start, the step below it and then the
# next step below when that one won, else the step above; it ends at the
# third unless the third is best of the three, and a longer walk adds one
# candidate to the plan at each step). With 4, rff_cv(family =
# "multinomial") on mlbench::Vehicle, which scored 3, stated up to 3.4
# times the time left.
walk_plan <- 3.5

# Work units of the progress plan: a ridge fit of `rows` rows on D
# features with q responses (the statistics or the Gram matrix of the rows,
# then an eigenproblem), and a GLM path of L lambda values with its
# cross-validation over `folds` folds (L-BFGS passes over the rows, each
# two products with the features per class, and the fixed costs of a pass,
# glm_pass_overhead: R's calls for each lambda and fold, the threads'
# start; about 3 ms, as much as 4e7 multiply-adds of the products). With
# the path solved to glm_path_loose times the tolerance, mlbench::
# LetterRecognition's first 2,000, 6,000 and 16,000 rows took 87-92 passes
# of the path of 20 lambdas (about 4.5 a lambda), 279-299 of 5 folds
# (about 2.9 a lambda and fold) and 47 of one held-out fold (2.35; the
# plan takes 2.8 for both), and 23.5-25.5 to solve lambda_best on to the
# tolerance (`refine`: glm_refine(), after the path); with more `folds`
# each fold is nearer the fit on all rows and the folds together take
# about as many passes as 5 (mlbench::Vehicle, 10 folds: 236 passes per
# lambda path, 12 per lambda, measured with the path at the tolerance).
# `fits`: the folds fitted (1 for a held-out set, one fold of `folds`).
# bench/progress.R, bench/RESULTS-progress.md; with 30 passes per fit the
# time left was 6 times too long on LetterRecognition's 16,000 rows.
ridge_cost <- function(rows, D) {
  r <- min(rows, D)
  as.double(rows) * D * r + 7 * as.double(r)^3
}

glm_cost <- function(rows, D, K, fits, L, folds = fits, refine = FALSE) {
  glm_pass_cost(rows, D, K) *
    (L * (glm_path_passes + glm_fold_passes * min(1, 5 / folds) * fits) +
       if (refine) glm_refine_passes else 0)
}
glm_pass_cost <- function(rows, D, K) 2 * as.double(rows) * min(rows, D) * K + glm_pass_overhead

# Whether a GLM fit on `rows` rows of D cached features (more rows than
# features) turns them to its preconditioner's eigenvectors, at 2 rows D^2
# flops once, rather than turning its coefficients on every pass, at
# 4 D^2 K flops a pass: when the fit's passes (those of glm_cost()'s plan
# `fit_cost`) are more than rows / (2 K). On mlbench::LetterRecognition
# (16,000 rows, D = 1,224, 26 classes, about 170 passes planned) the
# turn took 1.6 s of the fit; on 32,000 rows of a binary response (D =
# 1,856) 5.4 s of 22 s. With 5 folds of 26 classes (about 390 passes)
# the features are turned up to 20,000 rows.
glm_turns_features <- function(rows, D, K, fit_cost) {
  passes <- fit_cost / glm_pass_cost(rows, D, K)
  rows < 2 * K * passes
}
glm_refine_cost <- function(rows, D, K) glm_pass_cost(rows, D, K) * glm_refine_passes
glm_path_passes <- 4.5
glm_fold_passes <- 2.8
glm_refine_passes <- 24
glm_pass_overhead <- 5e7

# The work units of a GLM fit's setup (glm_problem(), glm_precond()) on
# `rows` rows and D features. More rows than features: the statistics and
# the preconditioner's eigenproblem (ridge_cost()), then the features
# turned to its eigenvectors (rows D^2), unless glm_turns_features() leaves
# them for a fit of K classes whose passes plan `fit_cost` (glm_cost()).
# Fewer: the span of the rows
# (row_basis(): the Gram matrix, its eigenproblem, V = Z'U, V'V and V R^-1,
# the rows' coordinates Z V, each n^2 D or 7 n^3) and the preconditioner
# of the n coordinates (n^3 and 7 n^3 again): 5 n^2 D + 16 n^3, where
# ridge_cost() counted n^2 D + 7 n^3 and the display, when half of the
# first candidate's time of rff_cv(family = "multinomial") on
# mlbench::Vehicle (846 rows, D = 1000) had gone, stood at 12% of it.
glm_setup_cost <- function(rows, D, K, fit_cost) {
  n <- as.double(rows)
  if (rows < D) return(5 * n^2 * D + 16 * n^3)
  ridge_cost(rows, D) + if (glm_turns_features(rows, D, K, fit_cost)) n * as.double(D)^2 else 0
}

# The lengthscale argument of rff_cv(): "ard" (one lengthscale per input,
# learned after the walk; it draws its own map), "auto" (the walk), or
# given values; `args` gets the "ard" the map's setup reads.
cv_lengthscale_args <- function(lengthscale, map, args) {
  ard <- identical(lengthscale, "ard")
  if (ard) {
    if (!is.null(map)) {
      rff_abort("lengthscale", "`lengthscale` \"ard\" draws its own map: give `map` or \"ard\", not both")
    }
    args$lengthscale <- "ard"
  }
  list(ard = ard, auto = identical(lengthscale, "auto") || ard, args = args)
}

# The cross-validation of several lengthscales: `fit_one(ls, i)` scores
# lengthscale ls (the i-th scored) and returns a list with its `score`
# (smaller is better); with `median`, the lengthscales are those of the
# downhill walk from the median heuristic (lengthscale_walk()), otherwise
# the `candidates`. Returns the candidates in increasing order of multiple
# (or as given), their multiples (NULL when given) and fit_one()'s results
# in the same order.
cv_lengthscales <- function(candidates, median, fit_one, cost = 1, after = 0) {
  cols <- list()
  one <- function(ls) {
    r <- fit_one(ls, length(cols) + 1L)
    cols[[length(cols) + 1L]] <<- r
    r$score
  }
  if (is.null(median)) {
    for (i in seq_along(candidates)) {
      st <- walk_stage(i, NULL, cost, after, given = length(candidates))
      one(candidates[[i]])
      st$close()
    }
    progress_expect(after)
    return(list(candidates = candidates, multiple = NULL, cols = cols))
  }
  w <- lengthscale_walk(function(j) one(median * 2^(j / 2)), cost, after)
  list(candidates = as.list(median * 2^(w$steps / 2)), multiple = 2^(w$steps / 2),
       cols = cols[w$order])
}

# An "rff_cv" result: the path, the candidates, the curves (one column per
# candidate), the selection of cv_select(), the refit `fit` and the call;
# `...` holds what the family adds (folds, family, measure).
new_cv <- function(lambda, candidates, cvm, cvsd, sel, fit, call, ..., class = "rff_cv") {
  ls_names <- vapply(candidates, function(l) paste(format(l, digits = 4), collapse = ","),
                     character(1))
  cvm <- matrix(cvm, ncol = length(candidates))
  cvsd <- matrix(cvsd, ncol = length(candidates))
  dimnames(cvm) <- dimnames(cvsd) <- list(NULL, ls_names)
  structure(c(list(lambda = lambda, lengthscale = candidates, cvm = cvm, cvsd = cvsd,
                   lambda_min = sel$lambda_min, lambda_1se = sel$lambda_1se,
                   lambda_best = sel$lambda_min,
                   lengthscale_best = candidates[[sel$best[["lengthscale"]]]],
                   best = sel$best),
              list(...), list(fit = fit, call = call)),
            class = class)
}

# Fold of each row: given, or drawn at random with sizes differing by at most one.
# `folds_given`: whether the user gave `folds` (else too few rows are the
# data's fault, named as such).
check_foldid <- function(foldid, folds, n, folds_given = TRUE) {
  if (is.null(foldid)) {
    k <- check_count(folds, "folds", lo = 2)
    if (n < k && !folds_given) {
      rff_abort("x", sprintf(paste0(
        "the data have %d rows, fewer than the %d folds of the cross-validation that ",
        "chooses lambda: give more rows, fewer `folds`, or one `lambda`"), n, k))
    }
    if (n < k) {
      rff_abort("folds", sprintf("`folds` = %d needs at least as many rows, but `x` has %d",
                                 k, n))
    }
    return(sample(rep_len(seq_len(k), n)))
  }
  if (!is_number(foldid) || length(foldid) != n || anyNA(foldid) ||
      any(foldid != round(foldid)) || any(foldid < 1)) {
    rff_abort("foldid", sprintf("`foldid` must give a fold number (1, 2, ...) for each of the %d rows", n))
  }
  foldid <- as.integer(foldid)
  k <- max(foldid)
  if (k < 2L || length(unique(foldid)) != k) {
    rff_abort("foldid", sprintf("`foldid` must use every fold 1..k with k >= 2; it has %d distinct values up to %d",
                                length(unique(foldid)), k))
  }
  foldid
}

# Held-out SSE at every lambda (averaged over responses) of a path fitted
# without the rows of `s`, from the statistics of those rows: with
# c = shift - intercept, sum w (y - a - Z b)^2 =
# yty + 2 c ysum + w c^2 - 2 b'(Zty + zsum c) + b'Z'WZ b (weighted sums).
heldout_sse <- function(s, p) {
  L <- length(p$lambda)
  q <- dim(p$beta)[2L]
  out <- numeric(L)
  for (r in seq_len(q)) {
    B <- matrix(p$beta[, r, ], ncol = L)
    cc <- s$yshift[r] - p$intercept[r, ]
    quad <- colSums(B * (s$ZtZ %*% B))
    lin <- colSums(B * s$Zty[, r]) + cc * colSums(B * s$zsum)
    out <- out + s$yty[r] + 2 * cc * s$ysum[r] + stats_wsum(s) * cc^2 - 2 * lin + quad
  }
  pmax(out, 0) / q
}

# The same for fewer rows than features, from the Gram matrix G = ZZ' of
# all rows' features (n x n), the training rows `tr` and held-out rows `ho`,
# responses y and weights w (NULL: all 1): the path is fitted in the dual.
# The training rows' centred Gram matrix (Z_t - zbar)(Z_t - zbar)' and the
# held-out rows' (Z_h - zbar)(Z_t - zbar)' are G less rank-one terms (with
# a = Z_t zbar = G_tt w_t / W: G - a1' - 1a' + zbar'zbar), so a fold costs
# one eigendecomposition W^1/2 Kc W^1/2 = U S U' and no product with the D
# features. The coefficients V diag(1 / (s + W lambda)) u, V =
# (W^1/2 Zc)' U S^-1/2, u = S^1/2 U' W^1/2 yc (thin_scores()), predict the
# held-out rows through (Z_h - zbar) V = Kc_ht W^1/2 U S^-1/2.
heldout_sse_gram <- function(G, tr, ho, y, w, lambda, intercept) {
  wh <- if (is.null(w)) rep(1, length(ho)) else w[ho]
  eig <- gram_rows_eigen(G[tr, tr, drop = FALSE], y[tr, , drop = FALSE],
                         if (is.null(w)) NULL else w[tr], intercept)
  sw <- eig$sw
  Kh <- G[ho, tr, drop = FALSE]
  if (intercept) {
    Kh <- Kh - drop(Kh %*% sw^2) / eig$W - rep(eig$a, each = length(ho)) + eig$zz
  }
  Ph <- ((Kh * rep(sw, each = length(ho))) %*% eig$left) /
    rep(sqrt(eig$values), each = length(ho))
  Gl <- 1 / outer(eig$values, eig$W * lambda, `+`)
  out <- numeric(length(lambda))
  for (r in seq_len(ncol(y))) {
    pred <- Ph %*% (eig$u[, r] * Gl)
    if (!is.null(eig$ybar)) pred <- pred + eig$ybar[r]
    out <- out + colSums(wh * (y[ho, r] - pred)^2)
  }
  out / ncol(y)
}

# The eigenproblem W^1/2 Kc W^1/2 = U S U' (kept pairs `values`, `left`)
# of rows with Gram matrix K, weights w (NULL: all 1) and responses y, Kc
# centred by the rows' weighted mean features when `intercept` (K - a1' -
# 1a' + zz, a = K w / W, zz = w'a / W), with the scores u of thin_scores(),
# the total weight W, sqrt(w) `sw`, `a`, `zz` and the responses' mean ybar.
gram_rows_eigen <- function(K, y, w, intercept) {
  n <- nrow(K)
  wv <- if (is.null(w)) rep(1, n) else w
  W <- sum(wv)
  a <- ybar <- NULL
  zz <- 0
  if (intercept) {
    a <- drop(K %*% wv) / W
    zz <- sum(wv * a) / W
    K <- K - a - rep(a, each = n) + zz
    ybar <- colSums(y * wv) / W
  }
  sw <- sqrt(wv)
  eig <- thin_scores(gram_eigen(K * sw * rep(sw, each = n), low_rank = TRUE), y, ybar, w)
  c(eig, list(W = W, sw = sw, a = a, zz = zz, ybar = ybar))
}

# Held-out SSE of every fold (k x L) of a path on fewer rows than features,
# from one eigendecomposition of the Gram matrix G = ZZ' of all rows
# instead of one per fold: for penalized least squares the fit without the
# rows h predicts them with residuals (I - H_hh)^-1 e_h, where e = y - H y
# are the residuals and H = X (X'WX + P)^-1 X'W the hat matrix of the fit
# on all rows at the same penalty P (X = [1, Z], the intercept unpenalized).
# A fold's fit penalizes W_t lambda, W_t its training weight, so H is taken
# at c = W_t lambda. With W^1/2 Kc W^1/2 = U S U' (gram_rows_eigen() of all
# rows), H = 1w'/W + W^-1/2 U diag(g) U' W^1/2, g = s / (s + c), and with
# B = U_h, Th = B diag(g) B' + w_h^1/2 w_h^1/2' / W (symmetric), the
# fold's weighted SSE is |(I - Th)^-1 w_h^1/2 e_h|^2, w_h^1/2 e_h =
# w_h^1/2 yc_h - B (g u), u = U' W^1/2 yc: a Cholesky factorization of a
# block of the fold's size per lambda, h^2 r + h^3 / 3 flops for h
# held-out rows and r kept eigenvalues (held-out rows of weight 0 add
# nothing and are left out). A fold is scored by heldout_sse_gram() from
# its own eigendecomposition (about 1.5 (n - h)^3 flops, as measured)
# where that costs less (few folds, many lambdas, few rows), or where
# I - Th is ill-conditioned (reciprocal condition number of its Cholesky
# factor below 1e-4, of I - Th about 1e-8: a held-out row the fit on all
# rows interpolates, as at lambda = 0). The result's attribute "own" lists
# those folds.
heldout_sse_folds <- function(G, rows, y, w, lambda, intercept) {
  n <- nrow(G)
  L <- length(lambda)
  sizes <- lengths(rows)
  # in flops, with R's overhead of a call as flops (measured at 10 folds of
  # 24 to 379 rows: a block about 4e4, a fold's own eigenproblem 2e5), and
  # the blocks' eigenproblem of all rows shared by the folds; at r = n (the
  # blocks cost no more with fewer eigenvalues kept)
  own_cost <- 1.5 * as.double(n - sizes)^3 + 2e5
  block_cost <- L * (as.double(sizes)^2 * n + as.double(sizes)^3 / 3 + 4e4) +
    1.5 * as.double(n)^3 / length(rows)
  own <- which(!(block_cost < own_cost))
  if (length(own) < length(rows)) {
    eig <- gram_rows_eigen(G, y, w, intercept)
    yc <- if (intercept) y - rep(eig$ybar, each = n) else y
    u <- eig$u / sqrt(eig$values)
  }
  # fold h's SSE by blocks, or NULL where a block is ill-conditioned
  by_blocks <- function(h) {
    sw <- eig$sw
    Wt <- eig$W - sum(sw[h]^2)
    h <- h[sw[h] > 0]
    out <- numeric(L)
    if (!length(h)) return(out)
    B <- eig$left[h, , drop = FALSE]
    eh <- yc[h, , drop = FALSE] * sw[h]
    for (l in seq_len(L)) {
      g <- eig$values / (eig$values + Wt * lambda[l])
      Th <- tcrossprod(B * rep(sqrt(g), each = length(h)))
      if (intercept) Th <- Th + tcrossprod(sw[h]) / eig$W
      R <- tryCatch(chol(diag(length(h)) - Th), error = function(e) NULL)
      if (is.null(R) || !(rcond(t(R), triangular = TRUE) >= 1e-4)) return(NULL)
      r <- eh - B %*% (g * u)
      out[l] <- sum(backsolve(R, backsolve(R, r, transpose = TRUE))^2) / ncol(y)
    }
    out
  }
  sse <- matrix(0, length(rows), L)
  for (j in seq_along(rows)) {
    e <- if (!(j %in% own)) by_blocks(rows[[j]])
    if (is.null(e)) {
      own <- c(own, j)
      h <- rows[[j]]
      e <- heldout_sse_gram(G, seq_len(n)[-h], h, y, w, lambda, intercept)
    }
    sse[j, ] <- e
  }
  structure(sse, own = sort(unique(own)))
}
