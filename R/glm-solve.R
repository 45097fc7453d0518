# Layer 6 (engines): the penalized likelihood fit of rff_glm(): the problem
# (rows, family, features streamed or cached), the preconditioner, a
# preconditioned L-BFGS over a lambda path with warm starts, and
# cross-validation of the path. Each evaluation of the objective is one pass
# over the rows in C (src/glm.c): featurize a chunk, eta = z B, loss and
# residuals, G += z'R.

# Rows of the sample the preconditioner (and the effective degrees of
# freedom) are estimated on.
precond_rows <- function(n, D) min(n, max(2000L, D))

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
# passes are then products with X in R (glm_pass()).
glm_problem <- function(x, y, family, K, offset, weights, map, chunk_size, threads,
                        cache_mb, intercept = TRUE, reduce = FALSE) {
  n <- nrow(x)
  # the cache is an economy: none when it would not fit in memory
  Z <- if (8 * as.double(n) * map$D <= cache_mb * 2^20 && fits_in_memory(n, map$D))
    .Call(C_rff_features, x, map, threads)
  cached <- !is.null(Z)
  basis <- NULL
  if (reduce && cached && n < map$D) {
    b <- row_basis(Z, threads)
    Z <- b$X
    basis <- b$V
  }
  w <- if (is.null(weights)) rep(1, n) else weights
  list(x = x, Z = Z, y = y, family = family, K = K, offset = offset, weights = weights,
       w = w, W = sum(w), map = map, n = n, D = if (is.null(basis)) map$D else ncol(Z),
       chunk_size = chunk_size, threads = threads, intercept = intercept, cached = cached,
       basis = basis)
}

# Coefficients ((r + 1) x K x L, first row the intercepts) of a problem
# solved in the span of its rows, as coefficients of the features.
lift_coef <- function(coef, basis) {
  if (is.null(basis)) return(coef)
  d <- dim(coef)
  out <- array(0, c(nrow(basis) + 1L, d[2L], d[3L]))
  out[1L, , ] <- coef[1L, , ]
  out[-1L, , ] <- basis %*% matrix(coef[-1L, , ], d[1L] - 1L)
  out
}

# One pass at coefficients theta ((D + 1) x K, first row the intercepts),
# with row weights w (the problem's, or those of a fold): the loss
# sum w_i l_i, its gradient and eta (n x K).
glm_pass <- function(prob, theta, w = prob$weights) {
  B <- theta[-1L, , drop = FALSE]
  if (!is.null(prob$basis)) {
    # the features in the span of the rows (glm_problem())
    eta <- prob$Z %*% B + rep(theta[1L, ], each = prob$n)
    if (!is.null(prob$offset)) eta <- eta + prob$offset
    if (is.null(w)) w <- prob$w
    l <- glm_row_loss(prob$family, prob$y, eta)
    # rows of weight 0 add nothing, even where their loss is not finite (as in C)
    pos <- w > 0
    R <- l$grad * w
    R[!pos, ] <- 0
    return(list(loss = sum(w[pos] * l$loss[pos]), grad = crossprod(prob$Z, R),
                grad0 = colSums(R), eta = eta))
  }
  .Call(C_rff_glm_pass, if (is.null(prob$Z)) prob$x, prob$Z, prob$map, prob$y,
        prob$family, prob$offset, w, B, theta[1L, ], prob$chunk_size, prob$threads, TRUE)
}

# The intercepts of the model with no features (exact, with the offset):
# the start of every fit, and the null model of the deviance.
glm_start <- function(prob, w) {
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
glm_precond <- function(prob, theta0, nlambda = 2L) {
  n <- prob$n
  m <- precond_rows(n, prob$D)
  rows <- if (m < n) sort(sample.int(n, m)) else seq_len(n)
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
    C <- crossprod((Zs - rep(zbar, each = length(rows))) * sqrt(h / H))
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
            trace = if (is.null(C)) sum(thin$values) else sum(diag(C)))
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
    e <- .Call(C_rff_ridge_eigen, C)
    P$values <- pmax(e$values, 0)
    P$vectors <- e$vectors
  }
  P
}

# theta' = (a + zbar'B, B) <-> theta = (a, B): the coordinates in which the
# preconditioner is block diagonal, and the gradient's transformation.
to_inner <- function(theta, zbar) {
  theta[1L, ] <- theta[1L, ] + drop(crossprod(zbar, theta[-1L, , drop = FALSE]))
  theta
}

from_inner <- function(theta, zbar) {
  theta[1L, ] <- theta[1L, ] - drop(crossprod(zbar, theta[-1L, , drop = FALSE]))
  theta
}

grad_inner <- function(g, zbar) {
  g[-1L, ] <- g[-1L, , drop = FALSE] - outer(zbar, g[1L, ])
  g
}

# The preconditioned direction P g at penalty lambda (see glm_precond()).
precond_apply <- function(P, g, lambda) {
  tiny <- 1e-12 * max(P$mu, 1e-300)
  gr <- g %*% P$U
  out <- gr
  inv_mu <- ifelse(P$mu > tiny, 1 / P$mu, 0)
  out[1L, ] <- gr[1L, ] * inv_mu
  if (!is.null(P$chol)) {
    if (!identical(P$chol$lambda, lambda)) {
      M <- P$mu * P$C
      diag(M) <- diag(M) + max(lambda, 1e-12 * P$mu * max(diag(P$C), 1e-300))
      P$chol$R <- chol(M)
      P$chol$lambda <- lambda
    }
    R <- P$chol$R
    out[-1L, ] <- backsolve(R, backsolve(R, gr[-1L, , drop = FALSE], transpose = TRUE))
    return(out)
  }
  gB <- gr[-1L, , drop = FALSE]
  # no vectors: the features' basis is the eigenvectors themselves
  u <- if (is.null(P$vectors)) gB else crossprod(P$vectors, gB)
  den <- outer(P$values, P$mu) + lambda
  v <- ifelse(den > 0, u / den, 0)
  if (isTRUE(P$thin)) {
    # the complement of the sample's span has curvature 0: the penalty's
    l0 <- max(lambda, 1e-12 * max(P$values, 1e-300))
    out[-1L, ] <- P$vectors %*% (v - u / l0) + gB / l0
  } else {
    out[-1L, ] <- if (is.null(P$vectors)) v else P$vectors %*% v
  }
  out %*% t(P$U)
}

# The objective F = loss / W + lambda / 2 |B|^2 and its gradient in inner
# coordinates, from one pass at inner coordinates `th`.
glm_eval <- function(prob, th, lambda, P, w, W) {
  theta <- from_inner(th, P$zbar)
  r <- glm_pass(prob, theta, w)
  B <- theta[-1L, , drop = FALSE]
  f <- r$loss / W + lambda / 2 * sum(B^2)
  g <- rbind(r$grad0, r$grad) / W
  g[-1L, ] <- g[-1L, , drop = FALSE] + lambda * B
  if (!prob$intercept) g[1L, ] <- 0
  list(f = f, g = grad_inner(g, P$zbar), eta = r$eta, loss = r$loss)
}

# Minimizes the objective at one lambda by L-BFGS with the preconditioner
# as the initial inverse Hessian (scaled by the last curvature pair), from
# inner coordinates `th`, with a backtracking (Armijo) line search. Stops
# when the predicted decrease g'Pg / 2 is at most `epsilon` (|F| + 0.1)
# (F - F* for a quadratic whose Hessian the preconditioner is) and the
# last step changed F by no more than that; at most `maxit` iterations.
# `mem` carries curvature pairs from the previous lambda, corrected for the
# change of penalty.
lbfgs_lambda <- function(prob, th, lambda, P, w, W, control, mem = NULL, cur = NULL) {
  m <- 10L
  if (is.null(cur)) cur <- glm_eval(prob, th, lambda, P, w, W)
  S <- Y <- PY <- list()
  if (!is.null(mem)) {
    for (i in seq_along(mem$S)) {
      y <- mem$Y[[i]]
      y[-1L, ] <- y[-1L, ] + (lambda - mem$lambda) * (mem$S[[i]][-1L, , drop = FALSE])
      if (sum(mem$S[[i]] * y) > 1e-12 * sqrt(sum(mem$S[[i]]^2) * sum(y^2))) {
        S[[length(S) + 1L]] <- mem$S[[i]]
        Y[[length(Y) + 1L]] <- y
        PY[[length(PY) + 1L]] <- precond_apply(P, y, lambda)
      }
    }
  }
  converged <- FALSE
  iter <- 0L
  passes <- 0L
  fold <- Inf
  while (iter < control$maxit) {
    g <- cur$g
    Pg <- precond_apply(P, g, lambda)
    dec <- sum(g * Pg) / 2
    tol <- control$epsilon * (abs(cur$f) + 0.1)
    if (dec <= tol && abs(fold - cur$f) <= tol) {
      converged <- TRUE
      break
    }
    if (dec <= 1e-3 * tol) {  # at the optimum to rounding: no step can help
      converged <- TRUE
      break
    }
    # two-loop recursion; P q = P g - sum alpha_i P y_i, from the stored P y_i
    q <- g
    r <- Pg
    k <- length(S)
    alpha <- numeric(k)
    rho <- vapply(seq_len(k), function(i) 1 / sum(S[[i]] * Y[[i]]), 0)
    for (i in rev(seq_len(k))) {
      alpha[i] <- rho[i] * sum(S[[i]] * q)
      q <- q - alpha[i] * Y[[i]]
      r <- r - alpha[i] * PY[[i]]
    }
    if (k > 0L) r <- r * (sum(S[[k]] * Y[[k]]) / sum(Y[[k]] * PY[[k]]))
    for (i in seq_len(k)) {
      beta <- rho[i] * sum(Y[[i]] * r)
      r <- r + S[[i]] * (alpha[i] - beta)
    }
    d <- -r
    gd <- sum(g * d)
    if (!(gd < 0)) {  # not a descent direction: restart from the preconditioner
      S <- Y <- PY <- list()
      d <- -Pg
      gd <- sum(g * d)
    }
    t <- 1
    accepted <- FALSE
    for (ls in 1:40) {
      new <- glm_eval(prob, th + t * d, lambda, P, w, W)
      passes <- passes + 1L
      if (is.finite(new$f) && new$f <= cur$f + 1e-4 * t * gd) {
        accepted <- TRUE
        break
      }
      t <- t / 2
    }
    iter <- iter + 1L
    if (!accepted) break
    s <- t * d
    y <- new$g - g
    if (sum(s * y) > 1e-12 * sqrt(sum(s^2) * sum(y^2))) {
      S[[length(S) + 1L]] <- s
      Y[[length(Y) + 1L]] <- y
      PY[[length(PY) + 1L]] <- precond_apply(P, y, lambda)
      if (length(S) > m) {
        S <- S[-1L]
        Y <- Y[-1L]
        PY <- PY[-1L]
      }
    }
    th <- th + s
    fold <- cur$f
    cur <- new
  }
  list(th = th, cur = cur, converged = converged, iter = iter, passes = passes,
       mem = list(S = S, Y = Y, lambda = lambda))
}

# The path: lambda values in decreasing order, each started from the
# solution of the one before. `w` NULL: the problem's weights (a fold
# passes its training weights). Returns coefficients ((D + 1) x K x L, in
# the original coordinates), the loss, eta at the last lambda, iterations
# and convergence.
glm_path <- function(prob, lambda, P, control, w = NULL, start = NULL, after = NULL) {
  wv <- if (is.null(w)) prob$w else w
  W <- sum(wv)
  wp <- if (is.null(w)) prob$weights else w
  L <- length(lambda)
  K <- prob$K
  theta0 <- matrix(0, prob$D + 1L, K)
  if (prob$intercept) theta0[1L, ] <- glm_start(prob, wv)
  th <- to_inner(theta0, P$zbar)
  coef <- array(0, c(prob$D + 1L, K, L))
  loss <- numeric(L)
  iter <- integer(L)
  conv <- logical(L)
  mem <- NULL
  cur <- NULL
  for (i in seq_len(L)) {
    if (!is.null(start)) {
      th <- to_inner(matrix(start[, , i], prob$D + 1L, K), P$zbar)
      cur <- NULL
      mem <- NULL
    } else if (!is.null(cur)) {
      # the same point under the new penalty
      B <- th[-1L, , drop = FALSE]
      dl <- lambda[i] - lambda[i - 1L]
      cur$f <- cur$f + dl / 2 * sum(B^2)
      cur$g[-1L, ] <- cur$g[-1L, , drop = FALSE] + dl * B
    }
    r <- lbfgs_lambda(prob, th, lambda[i], P, wp, W, control, mem, cur = cur)
    th <- r$th
    mem <- r$mem
    cur <- r$cur
    theta <- from_inner(th, P$zbar)
    if (K > 1L) theta[1L, ] <- theta[1L, ] - mean(theta[1L, ])
    coef[, , i] <- theta
    loss[i] <- r$cur$loss
    iter[i] <- r$iter
    conv[i] <- r$converged
    eta <- r$cur$eta
    if (!is.null(after) && isTRUE(after(i, theta))) {
      keep <- seq_len(i)
      coef <- coef[, , keep, drop = FALSE]
      loss <- loss[keep]
      iter <- iter[keep]
      conv <- conv[keep]
      lambda <- lambda[keep]
      break
    }
  }
  list(coef = coef, loss = loss, iter = iter, converged = conv, eta = eta, lambda = lambda)
}

# The path on all rows with its k-fold cross-validation: at each lambda,
# after the fit on all rows, each fold is fitted as the whole problem with
# its held-out rows weighted 0 (nothing is copied and the passes are the
# same), started from the fit on all rows, to 100 times the tolerance of
# `control` (the held-out measure needs a few digits), and the measure is
# taken on its held-out rows. With `stop_early`, the path stops once three
# consecutive lambdas have not improved on the best CV measure. Returns the
# path (`full`) and cvm, cvsd per lambda.
glm_cv_path <- function(prob, lambda, P, control, foldid, measure, progress = FALSE,
                        stop_early = FALSE) {
  k <- max(foldid)
  L <- length(lambda)
  vals <- matrix(NA_real_, k, L)
  held <- lapply(seq_len(k), function(j) which(foldid == j))
  wj <- vapply(held, function(h) sum(prob$w[h]), 0)
  cv_control <- control
  cv_control$epsilon <- min(100 * control$epsilon, 1e-4)
  sgn <- if (measure == "auc") -1 else 1
  conv <- TRUE
  cvm <- cvsd <- rep(NA_real_, L)
  pb <- progress_bar(progress && L > 1L, L)
  on.exit(pb$close(), add = TRUE)
  after <- function(i, theta) {
    start <- array(theta, c(dim(theta), 1L))
    for (j in seq_len(k)) {
      w <- prob$w
      w[held[[j]]] <- 0
      fit <- glm_path(prob, lambda[i], P, cv_control, w = w, start = start)
      conv <<- conv && all(fit$converged)
      vals[j, i] <<- glm_measure(prob, fit$eta, held[[j]], measure)
    }
    curve <- cv_curve(vals[, i, drop = FALSE], wj)
    cvm[i] <<- curve$cvm
    cvsd[i] <<- curve$cvsd
    pb$set(i)
    if (!stop_early || i < 5L) return(FALSE)
    i - which.min(sgn * cvm[seq_len(i)]) >= 3L
  }
  full <- glm_path(prob, lambda, P, control, after = after)
  keep <- seq_along(full$lambda)
  list(full = full, cvm = cvm[keep], cvsd = cvsd[keep], folds = vals[, keep, drop = FALSE],
       converged = conv)
}

# The lambda path of rff_glm(): the given values (sorted decreasing), or
# `nlambda` log-spaced values from lambda_max = max(mu) trace(C), the
# start's curvature times the total variance of the features (at which the
# fit uses about one degree of freedom), down to `ratio` times that.
glm_lambda_values <- function(path, P) {
  if (!is.null(path$lambda)) return(sort(path$lambda, decreasing = TRUE))
  lmax <- max(P$mu) * P$trace
  if (!(lmax > 0)) lmax <- 1
  lmax * exp(seq(0, log(path$ratio), length.out = path$nlambda))
}

# The effective degrees of freedom at one solution, trace((H + W lambda
# J)^-1 H) with H the Hessian of the weighted loss (J: identity on the
# features, 0 on the intercept), estimated on the preconditioner's sample
# of rows (exact when it holds all rows); for the multinomial family, the
# sum over classes of that trace for each class's diagonal block.
glm_df <- function(prob, theta, lambda, rows) {
  Zs <- if (is.null(prob$Z)) .Call(C_rff_features, prob$x[rows, , drop = FALSE], prob$map,
                                   prob$threads) else prob$Z[rows, , drop = FALSE]
  Zs <- cbind(1, Zs)
  w <- prob$w[rows]
  scale <- prob$W / sum(w)
  eta <- Zs %*% theta
  if (!is.null(prob$offset)) eta <- eta + prob$offset[rows, , drop = FALSE]
  hk <- switch(prob$family,
               binomial = { p <- stats::plogis(eta); p * (1 - p) },
               poisson = exp(eta),
               multinomial = { p <- exp(eta - apply(eta, 1L, max)); p <- p / rowSums(p); p * (1 - p) })
  Wl <- prob$W * lambda
  df <- 0
  for (k in seq_len(ncol(hk))) {
    H <- crossprod(Zs * sqrt(w * hk[, k])) * scale
    M <- H
    diag(M)[-1L] <- diag(M)[-1L] + Wl
    R <- tryCatch(chol(M), error = function(e) NULL)
    if (is.null(R)) return(NA_real_)
    df <- df + sum(diag(backsolve(R, backsolve(R, H, transpose = TRUE))))
  }
  df
}
