# The machinery every model fitted on random features shares: the map of a
# fit, streaming rows into statistics, the centered normal equations, the
# lambda path and its solves, GCV, and predictions with intercepts. A model
# family (ridge.R, cv.R) adds only what is its own: its arguments, its
# criterion and its result class.

# A fit's call as the user would write it: a method's call shown as a call
# of the generic `name`.
fit_call <- function(call, name) {
  call[[1L]] <- as.name(name)
  call
}

# ---- modelling defaults: standardization, lengthscale, D ----

# Centre and scale of each column of x (weighted means and standard
# deviations with weights; the plain sd() without). A constant column gets
# scale 1, so that it is centred to zero and plays no part in the kernel,
# and a message says so.
standardization <- function(x, weights = NULL) {
  n <- nrow(x)
  w <- if (is.null(weights)) rep(1, n) else weights
  W <- sum(w)
  center <- colSums(x * w) / W
  dev <- x - rep(center, each = n)
  npos <- sum(w > 0)
  scale <- sqrt(colSums(w * dev^2) / W * npos / max(npos - 1, 1))
  constant <- !is.finite(scale) | scale <= 1e-10 * pmax(abs(center), 1e-300)
  if (any(constant)) {
    nm <- colnames(x)
    if (is.null(nm)) nm <- paste0("column ", seq_len(ncol(x)))
    message(sprintf(
      "standardize: %s %s constant; %s centred to zero and take%s no part in the kernel",
      paste0("\"", nm[constant], "\"", collapse = ", "),
      if (sum(constant) > 1L) "are" else "is", if (sum(constant) > 1L) "they are" else "it is",
      if (sum(constant) > 1L) "" else "s"))
    scale[constant] <- 1
  }
  names(center) <- names(scale) <- colnames(x)
  list(center = center, scale = scale)
}

# x in the units the kernel sees: (x - center) / scale, or x itself.
standardize_rows <- function(x, std) {
  if (is.null(std)) return(x)
  out <- (x - rep(std$center, each = nrow(x))) / rep(std$scale, each = nrow(x))
  dimnames(out) <- dimnames(x)
  out
}

# The default number of features for n rows: sqrt(n) log(n) (Rudi and
# Rosasco, 2017), at least 1000 and at most 2000, and no more than keeps
# the n D^2 flops of Z'Z below 2e12; even, for "pair" maps.
default_D <- function(n) {
  D <- sqrt(n) * log(max(n, 2))
  D <- min(max(D, 1000), 2000, sqrt(2e12 / n))
  as.integer(max(2, 2 * round(D / 2)))
}

# Multiples of the median heuristic that lengthscale = "auto" compares.
auto_multipliers <- 2^seq(-1, 2, by = 0.5)

# Rows on which lengthscale = "auto" scores its candidates in rff_ridge():
# all of them up to 10,000, else a random subsample large enough to
# choose from and small enough that the candidates' statistics cost about
# half the final fit's (each candidate also pays one eigendecomposition and
# a leave-one-out pass, whatever the rows).
auto_rows <- function(n, k) {
  if (n <= 10000L) return(n)
  as.integer(max(10000, floor(n / (2 * k))))
}

# What every model fit from data prepares, from the checked arguments `a`
# of check_fit_args(): weights, offset and standardization checked and
# applied (x in the kernel's units, y less the offset), and the map (for
# lengthscale "auto": the base map and the candidate lengthscales).
model_setup <- function(a, standardize, weights, offset, map, args, caller) {
  n <- nrow(a$x)
  standardize <- check_flag(standardize, "standardize")
  weights <- check_weights(weights, n)
  offset <- check_offset(offset, n, ncol(a$y))
  y <- if (is.null(offset)) a$y else a$y - offset
  std <- if (standardize) standardization(a$x, weights) else NULL
  x <- standardize_rows(a$x, std)
  c(list(x = x, y = y, weights = weights, offset = offset, std = std),
    model_map(x, map, args, caller))
}

# ---- the map of a fit ----

# The one place maps are made for fitting: the given map, or rff_map(d, ...)
# with whatever sampling arguments rff_map() accepts (Nystrom landmarks are
# drawn from the data by model_map()).
fit_map <- function(d, map = NULL, ..., caller = "rff_ridge") {
  args <- list(...)
  if (!is.null(map)) {
    check_no_sampling_args(names(args))
    check_map(map)
    if (map$d != d) {
      rff_abort("map", sprintf("`map` was drawn for %d input columns but `x` has %d",
                               map$d, d))
    }
    return(map)
  }
  check_map_args(args, caller)
  do.call(rff_map, c(list(d = d), args))
}

# The map of a model fit from the (standardized) inputs x: the given map;
# or one drawn with the arguments of rff_map() in `args`, with the data's
# defaults: D = default_D(n) and lengthscale "auto". A numeric or "median"
# lengthscale gives the map; "auto" gives `map` drawn at lengthscale 1 (the
# common random numbers) and the `candidates` to rescale it to: the median
# heuristic times auto_multipliers. The arc-cosine kernel, which a
# lengthscale only rescales (lambda absorbs that), takes "auto" as 1.
model_map <- function(x, map, args, caller) {
  if (!is.null(map)) {
    return(list(map = do.call(fit_map, c(list(ncol(x), map), args, caller = caller)),
                candidates = NULL))
  }
  check_map_args(args, caller)
  if (is.null(args$D)) {
    # given landmarks fix D: one feature per landmark
    args$D <- if (is.null(args$landmarks)) default_D(nrow(x)) else NROW(args$landmarks)
  }
  ls <- if ("lengthscale" %in% names(args)) args$lengthscale else "auto"
  if (identical(ls, "auto")) {
    args$lengthscale <- 1
    if (identical(args$kernel, "arccos")) {
      return(list(map = data_map(x, args), candidates = NULL))
    }
    l0 <- median_lengthscale(x)
    base <- data_map(x, args)
    return(list(map = base, candidates = as.list(l0 * auto_multipliers), median = l0))
  }
  args$lengthscale <- resolve_lengthscale(ls, x)
  list(map = data_map(x, args), candidates = NULL)
}

# The same draws at another lengthscale: omega has one row per input
# column, each divided by its lengthscale.
rescale_map <- function(map, lengthscale) {
  if (is_nystrom(map$sampler)) return(rescale_nystrom(map, lengthscale))
  if (is_polynomial(map$kernel)) {
    map$lengthscale <- lengthscale
    return(map)
  }
  d <- map$d
  map$omega <- map$omega * (rep_len(map$lengthscale, d) / rep_len(lengthscale, d))
  map$lengthscale <- lengthscale
  map
}

# ---- streaming rows into statistics ----

# Streams validated x (n x d) and y (n x q), with optional row weights,
# through `map` into an "rff_stats". With a progress bar, the rows go to C
# in up to 50 steps of whole chunks, so the blocks are the same as without
# it. The statistics count as rows those of positive weight.
accumulate_stats <- function(x, y, map, intercept, chunk_size, threads, progress,
                             weights = NULL) {
  n <- nrow(x)
  # rows of total weight zero add nothing, around any finite shift
  yshift <- if (is.null(weights) || !any(weights > 0)) colMeans(y) else
    colSums(y * weights) / sum(weights)
  names(yshift) <- NULL
  nchunks <- ceiling(n / chunk_size)
  started <- proc.time()[["elapsed"]]
  on.exit(blas_hint(proc.time()[["elapsed"]] - started), add = TRUE)
  run <- function(from, to) {
    .Call(C_rff_ridge_stats, x, y, yshift, weights, map, c(from, to), chunk_size,
          threads)
  }
  if (!progress || nchunks < 2) {
    s <- run(0, n)
  } else {
    steps <- min(nchunks, 50)
    bounds <- pmin(round(seq(0, nchunks, length.out = steps + 1L)) * chunk_size, n)
    pb <- utils::txtProgressBar(min = 0, max = n, style = 3)
    on.exit(close(pb))
    s <- NULL
    for (i in seq_len(steps)) {
      part <- run(bounds[i], bounds[i + 1L])
      s <- if (is.null(s)) part else Map(`+`, s, part)
      utils::setTxtProgressBar(pb, bounds[i + 1L])
    }
  }
  nrows <- if (is.null(weights)) n else sum(weights > 0)
  new_stats(s$ZtZ, s$Zty, s$zsum, s$ysum, s$yty, yshift, nrows, map, intercept,
            colnames(y), wsum = s$wsum)
}

# One message per session when streaming into Z'Z took more than
# `getOption("rff.blas_hint_seconds", 10)` seconds on R's reference BLAS,
# pointing to the README's section on OpenBLAS; options(rff.blas_hint =
# FALSE) silences it. `blas` is the BLAS library's path (sessionInfo()).
blas_hint <- function(elapsed, blas = NULL) {
  if (!(elapsed > getOption("rff.blas_hint_seconds", 10))) return(invisible(FALSE))
  if (isFALSE(getOption("rff.blas_hint", TRUE)) || isTRUE(blas_state$hinted)) {
    return(invisible(FALSE))
  }
  if (is.null(blas)) blas <- tryCatch(utils::sessionInfo()$BLAS, error = function(e) "")
  if (!is_reference_blas(blas)) return(invisible(FALSE))
  blas_state$hinted <- TRUE
  message(sprintf(paste0(
    "rff: Z'Z took %.0f s on R's reference BLAS (%s). An optimized BLAS such as ",
    "OpenBLAS is typically 4 to 8 times faster here: see \"Getting the faster BLAS\" ",
    "in rff's README. (Shown once per session; options(rff.blas_hint = FALSE) ",
    "silences it.)"), elapsed, blas))
  invisible(TRUE)
}
blas_state <- new.env(parent = emptyenv())

# R's own BLAS (libRblas) or the reference libblas, not an optimized one.
is_reference_blas <- function(path) {
  if (!is.character(path) || length(path) != 1L || !nzchar(path)) return(FALSE)
  base <- basename(path)
  !grepl("openblas|mkl|blis|atlas|accelerate|veclib|armpl|flexiblas", path, ignore.case = TRUE) &&
    grepl("^libR?blas", base)
}

# ---- normal equations, lambda path, solves ----

# Centered (intercept) or raw normal equations from statistics: A = Z'WZ,
# b = Z'Wy, yy = y'Wy, with the (weighted) means used for the intercept; n
# rows of total weight w (w = n without weights). The penalty is
# w * lambda * I, so that weights act only through their proportions.
normal_equations <- function(s) {
  n <- s$n
  w <- stats_wsum(s)
  if (s$intercept) {
    zbar <- s$zsum / w
    ybar_shifted <- s$ysum / w
    list(A = s$ZtZ - w * tcrossprod(zbar),
         b = s$Zty - w * outer(zbar, ybar_shifted),
         yy = pmax(s$yty - w * ybar_shifted^2, 0),
         zbar = zbar, ybar = s$yshift + ybar_shifted, n = n, w = w)
  } else {
    list(A = s$ZtZ, b = s$Zty + outer(s$zsum, s$yshift),
         yy = s$yty + 2 * s$yshift * s$ysum + w * s$yshift^2,
         zbar = NULL, ybar = NULL, n = n, w = w)
  }
}

# The total weight of statistics (statistics made before weights existed
# have none: their rows weigh 1).
stats_wsum <- function(s) if (is.null(s$wsum)) s$n else s$wsum

# The lambda values of a path from check_path(): those given, or `nlambda`
# log-spaced decreasing values from trace(A) / w down to `ratio` times that
# (w: the total weight, n without weights).
lambda_values <- function(path, A, w) {
  if (!is.null(path$lambda)) return(path$lambda)
  lmax <- sum(diag(A)) / w
  if (!(lmax > 0)) lmax <- 1
  lmax * exp(seq(0, log(path$ratio), length.out = path$nlambda))
}

# Coefficients (D x q x L), intercepts (q x L), df (L), rss (L x q) at each
# of the L values of `lambda`, from the normal equations: one Cholesky solve
# for one value, one eigendecomposition for several (`eig`, when given: the
# nonzero part from thin_eigen()).
solve_path <- function(sys, lambda, eig = NULL) {
  A <- sys$A
  n <- if (is.null(sys$w)) sys$n else sys$w
  D <- nrow(A)
  q <- ncol(sys$b)
  L <- length(lambda)
  beta <- array(0, c(D, q, L))
  rss <- matrix(0, L, q)
  df <- numeric(L)
  if (L == 1L) {
    method <- "cholesky"
    r <- .Call(C_rff_ridge_chol, A, sys$b, n * lambda)
    if (r$info != 0L) singular_abort(lambda)
    beta[, , 1L] <- r$coefficients
    df[1L] <- D - n * lambda * r$trace_inv
    Ab <- A %*% r$coefficients
    rss[1L, ] <- sys$yy - 2 * colSums(r$coefficients * sys$b) +
      colSums(r$coefficients * Ab)
  } else {
    method <- "eigen"
    e <- if (is.null(eig)) .Call(C_rff_ridge_eigen, A) else eig
    s <- pmax(e$values, 0)
    V <- e$vectors
    u <- crossprod(V, sys$b)
    for (i in seq_len(L)) {
      den <- s + n * lambda[i]
      if (any(den <= 0)) singular_abort(lambda[i])
      w <- 1 / den
      beta[, , i] <- V %*% (u * w)
      df[i] <- sum(s * w)
      rss[i, ] <- sys$yy - colSums(u^2 * (w^2 * (s + 2 * n * lambda[i])))
    }
  }
  rss <- pmax(rss, 0)
  eig <- if (L > 1L) list(values = s, vectors = V, u = u, rows = e$rows) else NULL
  intercept <- matrix(0, q, L)
  if (!is.null(sys$zbar)) {
    for (i in seq_len(L)) {
      intercept[, i] <- sys$ybar - drop(crossprod(matrix(beta[, , i], D, q), sys$zbar))
    }
    df <- df + 1
  }
  list(beta = beta, intercept = intercept, lambda = lambda, df = df, rss = rss,
       method = method, eigen = eig)
}

# The nonzero eigenvalues and their eigenvectors of A = Zc'WZc from the
# n x n matrix (W^1/2 Zc)(W^1/2 Zc)' when there are fewer rows than
# features: O(n^2 D + n^3) instead of the O(D^3) of the D x D problem. Z is
# the n x D feature matrix, zbar the (weighted) column means (NULL without
# intercept), w the row weights or NULL. Eigenvalues below 1e-12 of the
# largest are dropped: they change no coefficient, and df by less than
# 1e-6 each over the lambda path. The products run on `threads` cores. With
# `rows = TRUE` the result also holds
# `rows`, the projections (z_i - zbar)'V of the rows themselves, in closed
# form: with (W^1/2 Zc)(W^1/2 Zc)' = U S U' and V = (W^1/2 Zc)' U S^-1/2,
# they are the rows of U S^1/2 / sqrt(w_i) (NA for rows of weight 0, whose
# projections it does not determine).
thin_eigen <- function(Z, zbar, w, rows = FALSE, threads = 1L) {
  Zc <- if (is.null(zbar)) Z else Z - rep(zbar, each = nrow(Z))
  if (!is.null(w)) Zc <- Zc * sqrt(w)
  e <- eigen(.Call(C_rff_ridge_thin_products, Zc, NULL, threads), symmetric = TRUE)
  keep <- e$values > max(e$values, 0) * 1e-12
  s <- e$values[keep]
  U <- e$vectors[, keep, drop = FALSE]
  V <- .Call(C_rff_ridge_thin_products, Zc, U, threads)
  V <- V / rep(sqrt(s), each = nrow(V))
  out <- list(values = s, vectors = V)
  if (rows) {
    P <- U * rep(sqrt(s), each = nrow(U))
    if (!is.null(w)) P <- P / sqrt(w)
    P[!is.finite(P)] <- NA
    out$rows <- P
  }
  out
}

singular_abort <- function(lambda) {
  rff_abort("lambda", sprintf(
    "Z'Z + n * lambda * I is singular at `lambda` = %s; use a positive `lambda`",
    format(lambda)))
}

# GCV = n RSS / (n - df)^2 (L x q; infinite when df >= n) and the index of
# the lambda with the smallest GCV summed over responses. With weights of
# total w, RSS is weighted and GCV = n^2 RSS / (w (n - df)^2): the weighted
# mean squared residual over (1 - df / n)^2.
gcv_select <- function(rss, df, n, w = n) {
  gcv <- n^2 * rss / (w * pmax(n - df, 0)^2)
  gcv[!is.finite(gcv)] <- Inf
  best <- which.min(rowSums(gcv))
  if (length(best) == 0L) best <- 1L
  list(gcv = gcv, best = best)
}

# Leave-one-out cross-validation of a lambda path, exact for ridge on the
# features: with H the hat matrix (a linear smoother), the LOO residual of
# row i is r_i / (1 - h_ii). From the eigendecomposition of the path
# (`p$eigen`) and the features of the rows (streamed once more, in blocks),
# h_ii(lambda) = w_i (p_i' diag(1 / (s + w lambda)) p_i + 1/w) with p_i =
# V'(z_i - zbar), at O(D^2) per row plus O(D) per row and lambda. When the
# rows are those of a thin eigenproblem (`p$eigen$rows`, see thin_eigen()),
# the p_i are known and nothing is streamed; rows of weight 0 add nothing
# to the criterion and are left out. Rows `x`, `y`, `weights` are in the
# kernel's units; the result is the (weighted) mean squared LOO residual,
# L x q. Unlike GCV, which replaces every h_ii by their mean, it stays right
# when leverages are uneven (heavy-tailed inputs).
loo_path <- function(sys, p, map, x, y, weights, chunk_size, threads) {
  e <- p$eigen
  L <- length(p$lambda)
  q <- ncol(y)
  G <- 1 / outer(e$values, sys$w * p$lambda, `+`)
  out <- matrix(0, L, q)
  add_rows <- function(rows, P) {
    w <- if (is.null(weights)) rep(1, length(rows)) else weights[rows]
    h <- w * ((P^2) %*% G + if (is.null(sys$zbar)) 0 else 1 / sys$w)
    for (r in seq_len(q)) {
      f <- P %*% (e$u[, r] * G)
      if (!is.null(sys$ybar)) f <- f + sys$ybar[r]
      res <- (y[rows, r] - f) / (1 - h)
      res[h >= 1 - 1e-12] <- Inf
      out[, r] <<- out[, r] + colSums(w * res^2)
    }
  }
  if (!is.null(e$rows)) {
    rows <- if (is.null(weights)) seq_len(nrow(x)) else which(weights > 0)
    add_rows(rows, e$rows[rows, , drop = FALSE])
  } else {
    for (from in seq(1L, nrow(x), by = chunk_size)) {
      rows <- from:min(nrow(x), from + chunk_size - 1L)
      Z <- .Call(C_rff_features, x[rows, , drop = FALSE], map, threads)
      if (!is.null(sys$zbar)) Z <- Z - rep(sys$zbar, each = length(rows))
      add_rows(rows, Z %*% e$vectors)
    }
  }
  out / if (is.null(weights)) nrow(x) else sum(weights)
}

# Rows on which the LOO criterion is estimated: all up to 5,000, else a
# random subsample of 5,000 (the criterion is a mean over rows).
loo_rows <- function(n) if (n <= 5000L) seq_len(n) else sort(sample.int(n, 5000L))

# ---- predictions ----

# beta as a D x q x L array and intercepts as q x L, whatever q is.
coef_array <- function(object) {
  b <- object$coefficients
  if (length(dim(b)) == 2L) array(b, c(nrow(b), 1L, ncol(b))) else b
}
intercept_matrix <- function(object) {
  matrix(object$intercept, ncol = length(object$lambda))
}

# Indices of `lambda` in the fitted path (matched to a relative 1e-8), NA
# for values that are not on it.
path_index <- function(path, lambda) {
  vapply(lambda, function(l) {
    i <- which(abs(path - l) <= 1e-8 * pmax(abs(l), abs(path)))
    if (length(i)) i[1L] else NA_integer_
  }, integer(1))
}

# The solution of `object` at `lambda` (NULL: lambda_best): coefficients
# (D x q x k), intercepts (q x k), df (k) and rss (k x q), taken from the
# fitted path where a value is on it and solved exactly from the normal
# equations kept in the fit (`normal`) where it is not.
coef_at <- function(object, lambda) {
  if (is.null(lambda)) {
    idx <- object$best
    lambda <- object$lambda[idx]
  } else {
    lambda <- check_lambda(lambda)
    idx <- path_index(object$lambda, lambda)
  }
  Bpath <- coef_array(object)
  D <- dim(Bpath)[1L]
  q <- dim(Bpath)[2L]
  k <- length(lambda)
  B <- array(0, c(D, q, k))
  a0 <- matrix(0, q, k)
  df <- numeric(k)
  rss <- matrix(0, k, q)
  on <- !is.na(idx)
  if (any(on)) {
    B[, , on] <- Bpath[, , idx[on]]
    a0[, on] <- intercept_matrix(object)[, idx[on]]
    df[on] <- object$df[idx[on]]
    rss[on, ] <- matrix(object$rss, ncol = q)[idx[on], ]
  }
  if (any(!on)) {
    if (is.null(object$normal)) {
      rff_abort("lambda", sprintf(
        "`lambda` = %s is not in the fitted path, and this fit (made by an older version of rff) keeps no normal equations to solve at it; refit with `lambda = %s`",
        format(lambda[!on][1L]), format(lambda[!on][1L])))
    }
    p <- solve_path(object$normal, lambda[!on])
    B[, , !on] <- p$beta
    a0[, !on] <- p$intercept
    df[!on] <- p$df
    rss[!on, ] <- p$rss
  }
  list(beta = B, intercept = a0, lambda = lambda, df = df, rss = rss, index = idx)
}

# z(x)'B + a0 (m x q x k array) for a validated double matrix x in the
# kernel's units, streamed through the map in blocks.
predict_coef <- function(map, x, B, a0, chunk_size = NULL, threads = NULL) {
  D <- dim(B)[1L]
  q <- dim(B)[2L]
  k <- dim(B)[3L]
  if (is.null(chunk_size)) chunk_size <- default_chunk_size(D)
  if (is.null(threads)) threads <- default_threads()
  if (nrow(x) == 0L) return(array(0, c(0L, q, k)))
  P <- .Call(C_rff_ridge_predict, x, map, matrix(B, D, q * k), chunk_size, threads)
  P <- P + rep(as.vector(a0), each = nrow(x))
  array(P, c(nrow(x), q, k))
}

# Predictions (n x q x k array) at lambda indices `idx` of the fitted path
# for a validated double matrix x in the kernel's units.
predict_rows <- function(object, x, idx, chunk_size = NULL, threads = NULL) {
  predict_coef(object$map, x, coef_array(object)[, , idx, drop = FALSE],
               intercept_matrix(object)[, idx, drop = FALSE], chunk_size, threads)
}

# The Gaussian-process variance factor of predictions at the rows of x (in
# the kernel's units) at one lambda: with M = Zc'WZc + w lambda I,
# (z(x) - zbar)' M^-1 (z(x) - zbar) + 1 / w with an intercept, and
# z(x)' M^-1 z(x) without; times sigma^2 it is the posterior variance of
# f(x) under the prior beta ~ N(0, sigma^2 / (w lambda) I) (and a flat prior
# on the intercept).
gp_variance_factor <- function(object, x, lambda, chunk_size = NULL, threads = NULL) {
  sys <- object$normal
  D <- nrow(sys$A)
  M <- sys$A
  diag(M) <- diag(M) + sys$w * lambda
  R <- tryCatch(chol(M), error = function(e) singular_abort(lambda))
  if (is.null(chunk_size)) chunk_size <- default_chunk_size(D)
  if (is.null(threads)) threads <- default_threads()
  out <- numeric(nrow(x))
  for (from in seq(1L, nrow(x), by = chunk_size)) {
    rows <- from:min(nrow(x), from + chunk_size - 1L)
    Z <- .Call(C_rff_features, x[rows, , drop = FALSE], object$map, threads)
    if (!is.null(sys$zbar)) Z <- Z - rep(sys$zbar, each = length(rows))
    V <- backsolve(R, t(Z), transpose = TRUE)
    out[rows] <- colSums(V^2) + if (is.null(sys$zbar)) 0 else 1 / sys$w
  }
  out
}

# An m x q x k array (rows, responses, lambdas) as the user expects it: a
# named vector for one response at one lambda, a matrix when q or k is one.
shape_by_lambda <- function(a, rows, response, lambda) {
  m <- dim(a)[1L]
  q <- dim(a)[2L]
  k <- dim(a)[3L]
  if (q == 1L && k == 1L) return(stats::setNames(a[, 1L, 1L], rows))
  if (q == 1L) return(matrix(a, m, k, dimnames = list(rows, lambda)))
  if (k == 1L) return(matrix(a, m, q, dimnames = list(rows, response)))
  dimnames(a) <- list(rows, response, lambda)
  a
}

# The fitted values and residuals at lambda_best, kept in the fit: x in the
# kernel's units, y the response less the offset (if any).
add_fitted <- function(fit, x, y, chunk_size, threads, offset = NULL) {
  f <- predict_rows(fit, x, fit$best, chunk_size, threads)[, , 1L]
  f <- matrix(f, nrow(x), dimnames = list(rownames(x), colnames(y)))
  r <- y - f
  if (!is.null(offset)) f <- f + offset
  rownames(r) <- rownames(x)
  if (ncol(f) == 1L) {
    f <- stats::setNames(f[, 1L], rownames(x))
    r <- stats::setNames(r[, 1L], rownames(x))
  }
  fit$fitted.values <- f
  fit$residuals <- r
  fit$xnames <- colnames(x)
  fit
}

no_data_abort <- function() {
  rff_abort("object", "`object` was fitted from statistics and keeps no fitted values; use predict(object, newdata)")
}

# Indices of the requested lambdas in the fitted path (NULL: the best);
# values off the path are an error (for callers that need path values).
lambda_index <- function(object, lambda, refit_hint = FALSE) {
  if (is.null(lambda)) return(object$best)
  lambda <- check_lambda(lambda)
  idx <- path_index(object$lambda, lambda)
  if (anyNA(idx)) {
    bad <- format(lambda[is.na(idx)][1L])
    rff_abort("lambda", sprintf(
      "`lambda` = %s is not in the fitted path%s", bad,
      if (!refit_hint) "" else sprintf(
        " (from %s to %s); refit with `lambda = %s`, or use one of `object$lambda`",
        format(max(object$lambda), digits = 4), format(min(object$lambda), digits = 4), bad)))
  }
  idx
}

# What predict() computes for a linear model on features: z(x)'beta +
# intercept (+ offset) for the rows of `newdata` kept by `na.action` (NA
# for rows with missing values), at `lambda` (any values >= 0; NULL:
# lambda_best); with `se.fit` or an `interval`, also the Gaussian-process
# standard errors and intervals of predict.lm()'s shapes.
predict_model <- function(object, newdata, lambda, se.fit, interval, level, na.action,
                          newoffset, chunk_size, threads) {
  nd <- newdata_matrix(object, newdata, newoffset)
  keep <- newdata_rows(nd$x, nd$offset, na.action)
  x <- standardize_rows(nd$x[keep$rows[keep$ok], , drop = FALSE], object$standardize)
  if (!is.null(chunk_size)) chunk_size <- check_count(chunk_size, "chunk_size", lo = 1)
  threads <- check_threads(threads)
  sol <- coef_at(object, lambda)
  q <- dim(sol$beta)[2L]
  k <- length(sol$lambda)
  m <- length(keep$rows)
  P <- array(NA_real_, c(m, q, k))
  P[keep$ok, , ] <- predict_coef(object$map, x, sol$beta, sol$intercept, chunk_size, threads)
  if (!is.null(nd$offset)) P <- P + nd$offset[keep$rows]
  rows <- rownames(nd$x)[keep$rows]
  if (is.null(rows) && !identical(keep$rows, seq_len(nrow(nd$x)))) rows <- as.character(keep$rows)
  if (!se.fit && interval == "none") {
    return(shape_by_lambda(P, rows, object$response, format(sol$lambda, digits = 4)))
  }
  if (q > 1L || k > 1L) {
    rff_abort(if (se.fit) "se.fit" else "interval", sprintf(
      "standard errors and intervals are given for one response at one lambda at a time (here %d response%s, %d lambda%s)",
      q, if (q > 1L) "s" else "", k, if (k > 1L) "s" else ""))
  }
  if (is.null(object$normal)) {
    rff_abort(if (se.fit) "se.fit" else "interval",
              "this fit (made by an older version of rff) keeps no normal equations; refit it for standard errors")
  }
  rdf <- object$n - sol$df
  if (!(rdf > 0)) {
    rff_abort(if (se.fit) "se.fit" else "interval", sprintf(
      "the fit has no residual degrees of freedom (n = %d, df = %s): no noise variance to estimate",
      object$n, format(sol$df, digits = 4)))
  }
  sigma2 <- sol$rss[1L, 1L] / rdf
  fit <- P[, 1L, 1L]
  names(fit) <- rows
  se <- rep(NA_real_, m)
  se[keep$ok] <- sqrt(sigma2 * gp_variance_factor(object, x, sol$lambda, chunk_size, threads))
  names(se) <- rows
  if (interval != "none") {
    tq <- stats::qt((1 + level) / 2, rdf)
    half <- tq * if (interval == "confidence") se else sqrt(se^2 + sigma2)
    fit <- cbind(fit = fit, lwr = fit - half, upr = fit + half)
    rownames(fit) <- rows
  }
  if (!se.fit) return(fit)
  list(fit = fit, se.fit = se, df = rdf, residual.scale = sqrt(sigma2))
}

# Names a predict() call gave that the method does not take: an rff_error
# naming them, and the right argument for the names glmnet and lm users
# type (`newx`, `s`, `x`). `call` is the call as typed (sys.call()), so that
# `s` is caught before R matches it to a longer argument by its prefix.
check_predict_call <- function(call, method, known) {
  nm <- names(as.list(call))[-1L]
  nm <- nm[!is.na(nm) & nzchar(nm)]
  aliases <- c(newx = "newdata", s = "lambda", x = "newdata", se = "se.fit",
               newoffset = "newoffset")
  for (a in nm) {
    if (a %in% known) next
    if (a %in% names(aliases) && aliases[[a]] %in% known) {
      rff_abort(a, sprintf("`%s` is not an argument of predict() for %s objects; use `%s`",
                           a, method, aliases[[a]]))
    }
    rff_abort(a, sprintf("`%s` is not an argument of predict() for %s objects (its arguments: %s)",
                         a, method, paste0("`", setdiff(known, "..."), "`", collapse = ", ")))
  }
  invisible(TRUE)
}

check_predict_type <- function(type, class_pointer = TRUE) {
  if (identical(type, c("response", "link"))) return("response")
  if (identical(type, "class")) {
    rff_abort("type", paste0(
      "`type` \"class\" is for classifiers; rff_ridge() fits a regression. ",
      "Use rff_glm() (kernel logistic or multinomial regression) for class predictions"))
  }
  check_string(type, "type", c("response", "link"))
}

check_interval <- function(interval) {
  if (identical(interval, c("none", "confidence", "prediction"))) return("none")
  check_string(interval, "interval", c("none", "confidence", "prediction"))
}

check_level <- function(level) {
  if (!is_number(level) || length(level) != 1L || is.na(level) || level <= 0 || level >= 1) {
    rff_abort("level", sprintf("`level` must be a number in (0, 1), got %s", show_value(level)))
  }
  as.double(level)
}

# ---- inputs: formulas and new data ----

# A formula method's work, called from the method itself: the model frame
# of the method's call, evaluated where the method was called, then the
# default method on it; the fit and the frame's terms, levels and
# contrasts, which predict() needs.
fit_formula <- function(fit_default, ..., .response = "numeric") {
  mc <- match.call(sys.function(-1L), sys.call(-1L), expand.dots = FALSE)
  env <- parent.frame(2L)
  if ("intercept" %in% names(list(...))) {
    rff_abort("intercept", "with a formula the intercept is set by the formula (`y ~ x - 1` has none); do not give `intercept`")
  }
  frame <- formula_frame(mc, env, .response)
  fit <- fit_default(frame$x, frame$y, intercept = frame$intercept,
                     weights = frame$weights, offset = frame$offset, ...)
  list(fit = fit, model = frame$model)
}

# The model frame of a formula fit, as stats::lm() builds it: `call` is the
# method's match.call(expand.dots = FALSE), evaluated in `env`. Gives x (the
# model matrix without its intercept column), y, whether the formula has an
# intercept, the weights and the offset (offset() terms and the `offset`
# argument), and in `model` what predict() needs to rebuild x.
formula_frame <- function(call, env, response = "numeric") {
  m <- match(c("formula", "data", "subset", "weights", "na.action", "offset"),
             names(call), 0L)
  mf <- call[c(1L, m)]
  mf$drop.unused.levels <- TRUE
  mf[[1L]] <- quote(stats::model.frame)
  mf <- eval(mf, env)
  mt <- attr(mf, "terms")
  y <- stats::model.response(mf)
  if (is.null(y)) rff_abort("formula", "`formula` must have a response")
  if (response == "numeric") {
    check_response_kind(y, "formula")
    y <- stats::model.response(mf, "numeric")
  }
  x <- stats::model.matrix(mt, mf)
  contrasts <- attr(x, "contrasts")
  x <- x[, colnames(x) != "(Intercept)", drop = FALSE]
  if (ncol(x) == 0L) rff_abort("formula", "`formula` must have at least one predictor")
  list(x = x, y = y, intercept = attr(mt, "intercept") == 1L,
       weights = stats::model.weights(mf), offset = stats::model.offset(mf),
       model = list(terms = mt, xlevels = stats::.getXlevels(mt, mf),
                    contrasts = contrasts, na.action = attr(mf, "na.action"),
                    offset_arg = call$offset))
}

# newdata as a double matrix with the training columns (missing values
# allowed), and the offset of its rows: from the formula's offset() terms
# and `offset` argument for a formula fit, from `newoffset` otherwise.
newdata_matrix <- function(object, newdata, newoffset = NULL) {
  offset <- NULL
  if (!is.null(object$terms)) {
    if (!is.data.frame(newdata) && !is.list(newdata)) {
      rff_abort("newdata", sprintf(
        "`newdata` must be a data frame for a fit made with a formula, got %s",
        show_value(newdata)))
    }
    if (!is.null(newoffset)) {
      rff_abort("newoffset", "a fit made with a formula takes its offset from `newdata` (its offset() terms and `offset` argument); do not give `newoffset`")
    }
    tt <- stats::delete.response(object$terms)
    x <- tryCatch({
      mf <- stats::model.frame(tt, newdata, na.action = stats::na.pass,
                               xlev = object$xlevels)
      offset <- stats::model.offset(mf)
      if (!is.null(object$offset_arg)) {
        extra <- eval(object$offset_arg, newdata, environment(object$terms))
        offset <- if (is.null(offset)) extra else offset + extra
      }
      stats::model.matrix(tt, mf, contrasts.arg = object$contrasts)
    }, error = function(e) {
      rff_abort("newdata", paste0("`newdata` does not fit the model: ", conditionMessage(e)))
    })
    x <- x[, colnames(x) != "(Intercept)", drop = FALSE]
    x <- check_x(x, "newdata", na_ok = TRUE)
  } else {
    x <- check_x(newdata, "newdata", na_ok = TRUE)
    xn <- object$xnames
    if (!is.null(xn) && !is.null(colnames(x))) {
      miss <- setdiff(xn, colnames(x))
      if (length(miss)) {
        rff_abort("newdata", sprintf("`newdata` lacks the column%s %s used in the fit",
                                     if (length(miss) > 1L) "s" else "",
                                     paste0("\"", miss, "\"", collapse = ", ")))
      }
      x <- x[, xn, drop = FALSE]
    }
    if (ncol(x) != object$map$d) {
      rff_abort("newdata", sprintf("`newdata` has %d column%s but the model was fitted on %d",
                                   ncol(x), if (ncol(x) == 1L) "" else "s", object$map$d))
    }
    if (isTRUE(object$has_offset)) {
      if (is.null(newoffset)) {
        rff_abort("newoffset", "the model was fitted with an `offset`: give the offset of the new rows as `newoffset`")
      }
      offset <- newoffset
    } else if (!is.null(newoffset)) {
      rff_abort("newoffset", "the model was fitted without an offset; do not give `newoffset`")
    }
  }
  if (!is.null(offset)) {
    if (!is_number(offset) || length(offset) != nrow(x)) {
      rff_abort(if (is.null(object$terms)) "newoffset" else "newdata", sprintf(
        "the offset of the new rows must be %d numbers, got %s", nrow(x), show_value(offset)))
    }
    offset <- as.double(offset)
  }
  list(x = x, offset = offset)
}

# The rows of newdata a prediction is made for, after `na.action`: `rows`
# (indices into newdata) and `ok` (those among them without missing
# values, which get predictions; the others get NA).
newdata_rows <- function(x, offset, na.action) {
  m <- nrow(x)
  ok <- stats::complete.cases(x)
  if (!is.null(offset)) ok <- ok & !is.na(offset)
  if (all(ok)) return(list(rows = seq_len(m), ok = ok))
  fun <- if (is.character(na.action)) get(na.action, mode = "function") else na.action
  if (!is.function(fun)) {
    rff_abort("na.action", sprintf("`na.action` must be a function such as na.pass or na.omit, got %s",
                                   show_value(na.action)))
  }
  probe <- data.frame(missing = ifelse(ok, 0, NA))
  kept <- tryCatch(fun(probe), error = function(e) {
    rff_abort("newdata", sprintf("`newdata` has missing values (row%s %s) and `na.action` refused them: %s",
                                 if (sum(!ok) > 1L) "s" else "",
                                 paste(utils::head(which(!ok), 5L), collapse = ", "),
                                 conditionMessage(e)))
  })
  omitted <- attr(kept, "na.action")
  rows <- if (is.null(omitted) || inherits(omitted, "exclude")) seq_len(m) else
    setdiff(seq_len(m), as.integer(omitted))
  list(rows = rows, ok = ok[rows])
}

# ---- printing ----

map_line <- function(map) {
  sprintf("%d %s (%s, %s kernel, lengthscale %s)",
          map$D, map_kind(map), map$variant, kernel_label(map),
          paste(format(map$lengthscale, digits = 4), collapse = ", "))
}

# The lines about the modelling settings a fit prints: standardization,
# the lengthscale search, offset.
cat_model_lines <- function(x, digits) {
  if (!is.null(x$standardize)) {
    cat(sprintf("  inputs standardized (%d column%s centred and scaled to unit variance)\n",
                length(x$standardize$scale), if (length(x$standardize$scale) == 1L) "" else "s"))
  }
  s <- x$lengthscale_search
  if (!is.null(s)) {
    cat(sprintf("  lengthscale %s chosen by %s among %s%s\n",
                fmt(s$table$lengthscale[s$best], digits), s$criterion,
                paste(trimws(fmt(s$table$lengthscale, digits)), collapse = ", "),
                if (is.null(s$median)) "" else sprintf(
                  " (median heuristic %s x %s)", fmt(s$median, digits),
                  paste(format(round(s$table$multiple, 2)), collapse = ", "))))
  }
  if (isTRUE(x$has_offset)) cat("  with an offset\n")
}

# The first lines a fit prints: what it is, the call, the map.
cat_fit_header <- function(title, call, map) {
  cat(title, "\n", sep = "")
  if (!is.null(call)) cat("Call: ", paste(deparse(call), collapse = "\n"), "\n", sep = "")
  cat(sprintf("  %s\n", map_line(map)))
}
