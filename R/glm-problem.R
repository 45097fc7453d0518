# Layer 6 (engines): the problem of an rff_glm() fit (rows, family,
# features streamed or cached, or the span of the rows), one pass of the
# objective over it (in C, src/glm.c: featurize a chunk, eta = z B, loss
# and residuals, G += z'R; or products with the features in the span of
# the rows), the start and the preconditioner.

# Rows of the sample the preconditioner (and the effective degrees of
# freedom) are estimated on.
precond_rows <- function(n, D) min(n, max(2000L, D))

# The indices of that sample: m of the n rows, evenly spaced (no random
# numbers: a fit with its map and lambda given is the same whatever the
# state of the RNG, and rff_glm_apply() takes the same rows of its chunks).
precond_sample <- function(n, m) {
  if (m >= n) seq_len(n) else unique(round(seq(1, n, length.out = m)))
}

# Whether keeping a map's features in memory for the passes of a GLM fit
# beats computing them again on every pass. A cached row costs reading D
# doubles back; featurizing it again costs, for each of the m frequencies,
# an inner product of d terms and a cosine (with its sine, for "pair"),
# which costs about as much as `feature_trig_terms` more terms: (d + 10) m
# / D multiply-adds a feature. Measured (bench/glm-cache.R,
# bench/RESULTS-glm-apply.md): at 15 or less the read costs about as
# much as the featurization, and filling the cache (one featurization and
# the first touch of its memory, about two passes) more than the passes
# save; from `feature_cache_min_work` the cache pays: "pair" maps are cached
# from d = 30 inputs, "phase" maps from d = 10. Arc-cosine, Nystrom and TensorSketch features,
# computed by slower routines, are always worth caching.
features_cache_pays <- function(map) {
  fourier <- is.matrix(map$omega) && isTRUE(map$variant %in% c("pair", "phase")) &&
    !identical(map$kernel, "arccos")
  if (!fourier) return(TRUE)
  (nrow(map$omega) + feature_trig_terms) * ncol(map$omega) / map$D >= feature_cache_min_work
}

# The cost of a cosine (or a cosine and a sine) in terms of an inner
# product, and the work per feature from which a cache pays (see
# features_cache_pays()).
feature_trig_terms <- 10
feature_cache_min_work <- 20

# The problem of a fit: x in the kernel's units (n x d), the response y
# (0/1, counts or class codes 1..K), offset (NULL or n x K), weights (NULL
# or n), the map, and the features cached in memory when n * D doubles fit
# in `cache_mb` megabytes (NULL otherwise: every pass featurizes again).
# With `reduce` and cached features of fewer rows than features, the
# problem is solved in the span of the rows: every gradient of the
# objective, Z'R / W + lambda B, lies in it, so from B = 0 every iterate of
# the solver does too, and with an orthonormal basis V of it (row_basis())
# the features become X = Z V (n x r, r <= n) and B = V theta, with the
# same loss and penalty (|B| = |theta|). `basis` is V (NULL otherwise); the
# passes are then products with X in R (glm_pass()). `sat`: each row's
# loss at the saturated model (Poisson; glm_floor()).
glm_problem <- function(x, y, family, K, offset, weights, map, chunk_size, threads,
                        cache_mb, intercept = TRUE, reduce = FALSE) {
  n <- nrow(x)
  # the cache is an economy: none when it would not fit in memory
  Z <- if (8 * as.double(n) * map$D <= cache_mb * 2^20 && fits_in_memory(n, map$D))
    .Call(C_rff_features, x, map, threads)
  cached <- !is.null(Z)
  basis <- NULL
  if (reduce && cached && n < map$D) {
    b <- row_basis(Z, first_equal_rows(x), threads)
    Z <- b$X
    basis <- b$V
  }
  w <- if (is.null(weights)) rep(1, n) else weights
  list(x = x, Z = Z, y = y, family = family, K = K, offset = offset, weights = weights,
       w = w, W = sum(w), sat = if (family == "poisson") poisson_saturated(y), map = map, n = n, D = if (is.null(basis)) map$D else ncol(Z),
       chunk_size = chunk_size, threads = threads, intercept = intercept, cached = cached,
       basis = basis)
}

# The objective's floor at row weights `w` (NULL: the problem's): the loss
# of the saturated model per unit weight, sum w_i l_i(saturated) / W, which
# the objective F exceeds by the deviance / (2 W) of its fit (0 for 0/1 and
# class responses). The solver's tolerance is relative to F minus it: F
# itself carries the constant -y log y of the counts, which for counts of
# 1e9 made a tolerance relative to |F| hundreds of times looser than the
# deviance (lbfgs_lambda()).
glm_floor <- function(prob, w, W) {
  if (prob$family != "poisson") return(0)
  s <- if (is.function(prob$saturated)) prob$saturated(w) else
    sum((if (is.null(w)) prob$w else w) * prob$sat)
  s / W
}

# Coefficients ((r + 1) x K x L, first row the intercepts) of a problem
# solved in the span of its rows, as coefficients of the features.
lift_coef <- function(coef, basis, threads = 1L) {
  if (is.null(basis)) return(coef)
  d <- dim(coef)
  out <- array(0, c(nrow(basis) + 1L, d[2L], d[3L]))
  out[1L, , ] <- coef[1L, , ]
  out[-1L, , ] <- .Call(C_rff_rows_product, basis, matrix(coef[-1L, , ], d[1L] - 1L), FALSE,
                        threads)
  out
}

# One pass at coefficients theta ((D + 1) x K, first row the intercepts),
# with row weights w (the problem's, or those of a fold): the loss
# sum w_i l_i, its gradient and eta (n x K). A problem whose rows live on
# other processes (rff_glm_apply()) brings its own pass, `prob$pass`: the
# same sums over its chunks, without eta; its `w` is then NULL or the chunk
# left out (glm_row_folds()).
glm_pass <- function(prob, theta, w = prob$weights) {
  if (is.function(prob$pass)) return(prob$pass(theta, w))
  B <- theta[-1L, , drop = FALSE]
  if (!is.null(prob$basis)) {
    # the features in the span of the rows (glm_problem()), or left where
    # they lie with coefficients V B (`vmap`, glm_fit_candidate())
    # the products on `threads` cores (and rff's own kernel, rff_blas_info())
    V <- prob$vmap
    if (!is.null(V)) B <- .Call(C_rff_rows_product, V, B, FALSE, prob$threads)
    eta <- .Call(C_rff_rows_product, prob$Z, B, FALSE, prob$threads) +
      rep(theta[1L, ], each = prob$n)
    if (!is.null(prob$offset)) eta <- eta + prob$offset
    if (is.null(w)) w <- prob$w
    l <- glm_row_loss(prob$family, prob$y, eta)
    # rows of weight 0 add nothing, even where their loss is not finite (as in C)
    pos <- w > 0
    R <- l$grad * w
    R[!pos, ] <- 0
    G <- .Call(C_rff_rows_product, prob$Z, R, TRUE, prob$threads)
    if (!is.null(V)) G <- .Call(C_rff_rows_product, V, G, TRUE, prob$threads)
    return(list(loss = sum(w[pos] * l$loss[pos]), grad = G, grad0 = colSums(R), eta = eta))
  }
  .Call(C_rff_glm_pass, if (is.null(prob$Z)) prob$x, prob$Z, prob$map, prob$y,
        prob$family, prob$offset, w, B, theta[1L, ], prob$chunk_size, prob$threads, TRUE)
}

# The intercepts of the model with no features (exact, with the offset):
# the start of every fit, and the null model of the deviance. A problem
# with its own `start` (rff_glm_apply()) computes it from its chunks.
glm_start <- function(prob, w) {
  if (is.function(prob$start)) return(prob$start(w))
  K <- prob$K
  W <- sum(w)
  off <- if (is.null(prob$offset)) 0 else prob$offset
  if (prob$family == "multinomial") {
    p <- vapply(seq_len(K), function(k) sum(w[prob$y == k]), 0) / W
    a <- log(pmax(p, 1e-10))
    return(a - mean(a))
  }
  ybar <- sum(w * prob$y) / W
  if (prob$family == "poisson") {
    if (is.null(prob$offset)) return(log(max(ybar, 1e-10)))
    return(log(max(sum(w * prob$y), 1e-300) / sum(w * exp(off))))
  }
  a <- stats::qlogis(min(max(ybar, 1e-10), 1 - 1e-10))
  if (!is.null(prob$offset)) {
    off <- off[, 1L]
    for (i in 1:50) {  # Newton's method for the intercept beside the offset
      p <- stats::plogis(a + off)
      h <- sum(w * p * (1 - p))
      if (!(h > 0)) break
      step <- sum(w * (p - prob$y)) / h
      a <- a - step
      if (abs(step) < 1e-12) break
    }
  }
  a
}

# The deviance of the model with the intercept (and offset) only.
glm_null_deviance <- function(prob) {
  w <- prob$w
  a <- if (prob$intercept) glm_start(prob, w) else rep(0, prob$K)
  eta <- matrix(rep(a, each = prob$n), prob$n, prob$K)
  if (!is.null(prob$offset)) eta <- eta + prob$offset
  sum(w * glm_row_deviance(prob$family, prob$y, eta))
}

# The preconditioner: the Hessian of the loss at the start, estimated on a
# sample of rows, in coordinates where the intercept is decoupled from the
# features. With h_i the curvature of row i at the start (p(1 - p),
# binomial; mu, Poisson; 1, multinomial, whose class curvature is the K x K
# matrix diag(pi) - pi pi') and zbar the h-weighted mean of the features,
# the Hessian is about mu_k (1 (+) C) in rotated class k, C the h-weighted
# covariance of the features. One eigendecomposition C = V S V' serves all
# lambdas and classes: the step for gradient g is V (V'g / (mu_k s +
# lambda)) for the features and g / mu_k for the intercept.
# `rows`: the sample, when the caller drew it (rff_glm_apply() draws the
# same rows of its chunks and gives them as a problem of their own).
glm_precond <- function(prob, theta0, nlambda = 2L, rows = NULL) {
  n <- prob$n
  m <- precond_rows(n, prob$D)
  if (is.null(rows)) rows <- precond_sample(n, m)
  w <- prob$w[rows]
  off <- if (is.null(prob$offset)) 0 else prob$offset[rows, , drop = FALSE]
  eta <- rep(theta0[1L, ], each = length(rows)) + off
  if (prob$family == "binomial") {
    p <- stats::plogis(eta)
    h <- w * p * (1 - p)
  } else if (prob$family == "poisson") {
    h <- w * exp(eta)
  } else {
    h <- w
  }
  h <- as.vector(h)
  if (!any(h > 0)) h <- w + 1e-12
  # the h-weighted second moments of the sample's features, streamed and
  # threaded as for ridge regression
  xs <- if (is.null(prob$Z)) prob$x[rows, , drop = FALSE] else NULL
  thin <- NULL
  if (length(rows) < prob$D) {
    # fewer rows than features: the nonzero eigenpairs from the m x m Gram
    # matrix, at O(m^2 D) instead of O(D^3)
    Zs <- if (is.null(xs)) prob$Z[rows, , drop = FALSE] else .Call(C_rff_features, xs, prob$map,
                                                                   prob$threads)
    H <- sum(h)
    zbar <- colSums(Zs * h) / H
    thin <- thin_eigen(Zs, zbar, h / H, threads = prob$threads)
    C <- NULL
  } else if (is.null(xs)) {
    Zs <- prob$Z[rows, , drop = FALSE]
    H <- sum(h)
    zbar <- colSums(Zs * h) / H
    Zs <- (Zs - rep(zbar, each = length(rows))) * sqrt(h / H)
    # Zs'Zs as the symmetric product of t(Zs), on `threads` cores (and rff's
    # own kernel), both triangles
    C <- .Call(C_rff_ridge_thin_products, t(Zs), NULL, prob$threads)
  } else {
    s <- .Call(C_rff_ridge_stats, xs, matrix(0, length(rows), 1L), 0, h, prob$map,
               c(0, length(rows)), prob$chunk_size, prob$threads)
    H <- s$wsum
    zbar <- s$zsum / H
    C <- s$ZtZ / H - tcrossprod(zbar)
  }
  if (prob$family == "multinomial") {
    pk <- exp(theta0[1L, ])
    pk <- pk / sum(pk)
    ce <- eigen(diag(pk, length(pk)) - tcrossprod(pk), symmetric = TRUE)
    mu <- pmax(ce$values, 0)
    U <- ce$vectors
  } else {
    mu <- H / sum(w)
    U <- matrix(1)
  }
  if (!prob$intercept) zbar[] <- 0
  P <- list(zbar = zbar, mu = mu, U = U, rows = rows,
            trace = if (is.null(C)) sum(thin$values) else sum(diag(C)),
            memo = new.env(parent = emptyenv()))
  if (!is.null(thin)) {
    P$values <- thin$values
    P$vectors <- thin$vectors
    P$thin <- TRUE
  } else if (length(mu) == 1L && nlambda == 1L && is.null(prob$basis)) {
    # one lambda, one class: a Cholesky factor (a third of the
    # eigendecomposition's flops), made at the first use
    P$C <- C
    P$chol <- new.env(parent = emptyenv())
  } else {
    e <- .Call(C_rff_ridge_eigen, C, prob$threads)
    P$values <- pmax(e$values, 0)
    P$vectors <- e$vectors
  }
  P
}
