# Independent base-R versions of the kernels and of Proposition 2, used as
# the reference the package is tested against.

# kappa at offsets given as rows of `delta` (or a vector, for d = 1)
ref_kappa <- function(delta, kernel = "gaussian", lengthscale = 1, nu = 1.5) {
  delta <- as.matrix(delta)
  u <- sweep(delta, 2L, rep_len(lengthscale, ncol(delta)), "/")
  switch(kernel,
    gaussian = exp(-rowSums(u^2) / 2),
    laplace = exp(-rowSums(abs(u))),
    matern = {
      t <- sqrt(2 * nu) * sqrt(rowSums(u^2))
      out <- 2^(1 - nu) / gamma(nu) * t^nu * besselK(t, nu)
      out[t == 0] <- 1
      out
    }
  )
}

# Cho and Saul's closed forms in base R: k_n(x, y) = |x|^n |y|^n J_n(theta) / pi.
ref_arccos <- function(x, y, order, lengthscale = 1) {
  x <- sweep(as.matrix(x), 2, rep_len(lengthscale, ncol(x)), "/")
  y <- sweep(as.matrix(y), 2, rep_len(lengthscale, ncol(y)), "/")
  nx <- sqrt(rowSums(x^2)); ny <- sqrt(rowSums(y^2))
  cos_t <- pmin(pmax(tcrossprod(x, y) / outer(nx, ny), -1), 1)
  th <- acos(cos_t)
  J <- switch(as.character(order),
    "0" = pi - th,
    "1" = sin(th) + (pi - th) * cos_t,
    "2" = 3 * sin(th) * cos_t + (pi - th) * (1 + 2 * cos_t^2))
  outer(nx, ny)^order * J / pi
}

# Var of z(x)'z(x + delta) for one map with D features (Sutherland &
# Schneider 2015, Proposition 2)
ref_variance <- function(delta, D, variant, ...) {
  k1 <- ref_kappa(delta, ...)
  k2 <- ref_kappa(2 * as.matrix(delta), ...)
  if (variant == "phase") (1 + k2 / 2 - k1^2) / D else (1 + k2 - 2 * k1^2) / D
}

# Straightforward base-R featurization from a (Fourier) map, the reference.
ref_features <- function(x, map) {
  P <- x %*% map$omega
  s <- sqrt(2 / map$D)
  if (map$variant == "pair") cbind(s * cos(P), s * sin(P))
  else s * cos(sweep(P, 2, map$phase, "+"))
}
