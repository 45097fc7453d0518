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

# Var of z(x)'z(x + delta) for one map with D features (Sutherland &
# Schneider 2015, Proposition 2)
ref_variance <- function(delta, D, variant, ...) {
  k1 <- ref_kappa(delta, ...)
  k2 <- ref_kappa(2 * as.matrix(delta), ...)
  if (variant == "phase") (1 + k2 / 2 - k1^2) / D else (1 + k2 - 2 * k1^2) / D
}

# Replicated estimates z(delta)'z(0), one new map per replicate
simulate_estimates <- function(delta, reps, D, ...) {
  x <- rbind(delta, 0 * delta)
  vapply(seq_len(reps), function(r) {
    Z <- rff_features(x, D = D, ...)
    sum(Z[1, ] * Z[2, ])
  }, numeric(1))
}

# Checks mean and variance of simulated estimates against the theory, with
# tolerances of `k` standard errors of the sample mean and sample variance.
expect_moments <- function(est, mean, var, k = 4) {
  n <- length(est)
  se_mean <- sqrt(var / n)
  expect_lt(abs(base::mean(est) - mean), k * se_mean)
  s2 <- stats::var(est)
  m4 <- base::mean((est - base::mean(est))^4)
  se_var <- sqrt((m4 - s2^2) / n)
  expect_lt(abs(s2 - var), k * se_var)
}

# Straightforward base-R featurization from a (Fourier) map, the reference.
ref_features <- function(x, map) {
  P <- x %*% map$omega
  s <- sqrt(2 / map$D)
  if (map$variant == "pair") cbind(s * cos(P), s * sin(P))
  else s * cos(sweep(P, 2, map$phase, "+"))
}
