# Monte Carlo checks: draws against a reference law, and replicated kernel
# estimates against the moments the theory gives them.

# Fraction of draws below the p-quantiles of the reference law, each within
# k binomial standard errors of p.
expect_law <- function(draws, qfun, p = c(0.1, 0.25, 0.5, 0.75, 0.9), k = 4) {
  n <- length(draws)
  emp <- vapply(qfun(p), function(q) mean(draws <= q), numeric(1))
  expect_true(all(abs(emp - p) < k * sqrt(p * (1 - p) / n)),
              label = paste("empirical", paste(format(emp, digits = 3), collapse = " ")))
}

# z(x)'z(y) over reps independent maps, x and y the two rows of xy.
replicate_estimates <- function(xy, reps, ..., threads = 1) {
  vapply(seq_len(reps), function(r) {
    Z <- rff_features(xy, ..., threads = threads)
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
