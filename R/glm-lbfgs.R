# Layer 6 (engines): the minimization of rff_glm()'s penalized objective at
# one lambda: the inner coordinates, the preconditioner's direction, and a
# preconditioned L-BFGS with a backtracking line search.

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

# The scales of the preconditioner at penalty lambda: 1 / mu (0 where mu
# is 0) for the intercepts and 1 / (s mu + lambda) (0 where that is not
# positive) for the features; kept in P$memo for the last lambda, since
# every iteration at one lambda needs them twice.
precond_scales <- function(P, lambda) {
  m <- P$memo
  if (!is.null(m) && identical(m$lambda, lambda)) return(m)
  tiny <- 1e-12 * max(P$mu, 1e-300)
  inv_mu <- 1 / P$mu
  inv_mu[!(P$mu > tiny)] <- 0
  out <- list(lambda = lambda, inv_mu = inv_mu)
  if (is.null(P$chol)) {
    den <- outer(P$values, P$mu) + lambda
    inv <- 1 / den
    inv[!(den > 0)] <- 0
    out$inv_den <- inv
    out$l0 <- max(lambda, 1e-12 * max(P$values, 1e-300))
  }
  if (!is.null(m)) list2env(out, m)
  out
}

# The preconditioned direction P g at penalty lambda (see glm_precond()).
precond_apply <- function(P, g, lambda) {
  sc <- precond_scales(P, lambda)
  one <- length(P$mu) == 1L
  gr <- if (one) g * P$U[1L] else g %*% P$U
  out <- gr
  out[1L, ] <- gr[1L, ] * sc$inv_mu
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
  v <- u * sc$inv_den
  if (isTRUE(P$thin)) {
    # the complement of the sample's span has curvature 0: the penalty's
    out[-1L, ] <- P$vectors %*% (v - u / sc$l0) + gB / sc$l0
  } else {
    out[-1L, ] <- if (is.null(P$vectors)) v else P$vectors %*% v
  }
  if (one) out * P$U[1L] else out %*% t(P$U)
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

# The objective F = loss / W + lambda / 2 |B|^2 at inner coordinates `th`
# whose linear predictor is `eta`, without a pass (rows of weight 0 add
# nothing, even where their loss is not finite, as in C).
glm_objective_eta <- function(prob, th, eta, lambda, w, W) {
  if (is.null(w)) w <- prob$w
  pos <- w > 0
  l <- glm_row_loss(prob$family, prob$y[pos], eta[pos, , drop = FALSE])$loss
  sum(w[pos] * l) / W + lambda / 2 * sum(th[-1L, , drop = FALSE]^2)
}

# Whether lbfgs_lambda() solves the problem in C (lbfgs_span()): in the
# span of the rows, or on the features turned to the preconditioner's
# eigenvectors, where it is diagonal.
lbfgs_in_c <- function(prob, P) {
  !is.null(prob$basis) && is.null(P$vectors) && is.null(P$chol) && !isTRUE(P$thin)
}

# Minimizes the objective at one lambda by L-BFGS with the preconditioner
# as the initial inverse Hessian (scaled by the last curvature pair), from
# inner coordinates `th`, with a backtracking (Armijo) line search. Stops
# when the predicted decrease g'Pg / 2 is at most `epsilon` (|F - F0| + 0.1)
# (F - F* for a quadratic whose Hessian the preconditioner is; F0 the
# saturated model's loss, glm_floor(), so that |F - F0| is the deviance /
# (2 W)) and the last step changed F by no more than that; at most `maxit`
# iterations.
# `mem` carries curvature pairs from the previous lambda, corrected for the
# change of penalty. `cur`: the objective, gradient and eta at `th`, or
# its eta alone (`cur$g` NULL; in C the start then costs half a pass, in R
# a pass).
lbfgs_lambda <- function(prob, th, lambda, P, w, W, control, mem = NULL, cur = NULL,
                         in_c = TRUE) {
  control$floor <- glm_floor(prob, w, W)
  if (in_c && lbfgs_in_c(prob, P)) {
    return(lbfgs_span(prob, th, lambda, P, w, W, control, mem, cur))
  }
  m <- 10L
  if (is.null(cur$g)) cur <- glm_eval(prob, th, lambda, P, w, W)
  S <- Y <- PY <- list()
  rho <- numeric()
  if (!is.null(mem)) {
    for (i in seq_along(mem$S)) {
      y <- mem$Y[[i]]
      y[-1L, ] <- y[-1L, ] + (lambda - mem$lambda) * (mem$S[[i]][-1L, , drop = FALSE])
      if (sum(mem$S[[i]] * y) > 1e-12 * sqrt(sum(mem$S[[i]]^2) * sum(y^2))) {
        S[[length(S) + 1L]] <- mem$S[[i]]
        Y[[length(Y) + 1L]] <- y
        PY[[length(PY) + 1L]] <- precond_apply(P, y, lambda)
        rho[length(S)] <- 1 / sum(mem$S[[i]] * y)
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
    tol <- control$epsilon * (abs(cur$f - control$floor) + 0.1)
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
      rho <- numeric()
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
      rho[length(S)] <- 1 / sum(s * y)
      if (length(S) > m) {
        S <- S[-1L]
        Y <- Y[-1L]
        PY <- PY[-1L]
        rho <- rho[-1L]
      }
    }
    th <- th + s
    fold <- cur$f
    cur <- new
  }
  list(th = th, cur = cur, converged = converged, iter = iter, passes = passes,
       mem = list(S = S, Y = Y, lambda = lambda))
}

# lbfgs_lambda() for a problem in the span of the rows whose basis is the
# preconditioner's eigenvectors (a diagonal preconditioner), its features
# turned to them or its coefficients turned on every pass (`prob$vmap`,
# glm_fit_candidate()): the same iterations in C (src/lbfgs.c), with the
# curvature pairs as matrices (one column a pair) on the way in and lists
# on the way out.
lbfgs_span <- function(prob, th, lambda, P, w, W, control, mem, cur) {
  sc <- precond_scales(P, lambda)
  pairs <- function(l) matrix(unlist(l), ncol = length(l))
  cm <- if (length(mem$S)) list(S = pairs(mem$S), Y = pairs(mem$Y), lambda = mem$lambda)
  # an eta alone comes with g NULL, and C then evaluates the start from it
  cc <- if (!is.null(cur)) list(f = cur$f, g = cur$g, eta = cur$eta, loss = cur$loss)
  r <- .Call(C_rff_glm_lbfgs, prob$Z, prob$y, prob$family, prob$offset,
             if (is.null(w)) prob$weights else w, W, th, lambda, sc$inv_mu,
             sc$inv_den, P$U, P$zbar, prob$intercept, control, cm, cc, prob$threads,
             prob$vmap)
  as_list <- function(M) lapply(seq_len(ncol(M)), function(i) matrix(M[, i], nrow(th)))
  list(th = r$th, cur = list(f = r$f, g = r$g, eta = r$eta, loss = r$loss),
       converged = r$converged, iter = r$iter, passes = r$passes,
       mem = list(S = as_list(r$S), Y = as_list(r$Y), lambda = lambda))
}
